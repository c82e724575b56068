/*
 * ownline.c — what a small allreduce's exchange costs when a rank reads its
 * own line back after the peer has read it: why the line slots reduce a
 * rank's own part from its private input (allreduce_shm.c,
 * comm_small_allreduce; docs/runtime.md "Whose cache a line is in").
 *
 * Two threads pinned to CPUs 0 and 1 (threads share memory as the ranks'
 * segment does) run the line slots' protocol back to back: each writes 8
 * bytes and the sequence number into its own line of parity s & 1, then
 * polls the peer's line of that parity until it shows s and reads the
 * peer's 8 bytes. Steps, each ITERS exchanges, alternated for ROUNDS rounds:
 *   peer only   the engine now: the peer's line is the only one read;
 *   own back    the engine before: after the peer's line, each thread also
 *               reads its own line's 8 bytes back (the peer has just read
 *               that line, so it may have moved to the peer's core);
 *   ping-pong   one way after the other (thread 1 posts only after it saw
 *               thread 0's post): a round trip, for scale.
 * Prints the median (and range) over rounds of thread 0's ns per exchange.
 *
 * Usage: ownline [ITERS [ROUNDS]] (default 100000 exchanges, 9 rounds).
 */
#define _GNU_SOURCE
#include "bench_util.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { PEER_ONLY, OWN_BACK, PING_PONG, NSTEP };
static const char *step_name[NSTEP] = {"exchange, peer's line only", "exchange, own line read back",
                                       "ping-pong (round trip)"};

typedef struct line {
    _Alignas(64) _Atomic uint64_t seq;
    uint64_t data;
} line_t;

static line_t g_line[2][2]; /* [thread][parity] */
static pthread_barrier_t g_bar;
static long g_iters;
static int g_rounds;
static double g_ns[NSTEP][101];
static volatile uint64_t g_sink;

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

/* One step of ITERS exchanges from sequence *s on; thread 0's ns each. */
static double exchange(int me, int step, uint64_t *s)
{
    int peer = 1 - me;
    uint64_t acc = 0;
    pthread_barrier_wait(&g_bar);
    double t0 = now();
    for (long i = 0; i < g_iters; i++) {
        uint64_t q = ++*s;
        int par = (int)(q & 1);
        line_t *mine = &g_line[me][par], *theirs = &g_line[peer][par];
        if (step == PING_PONG && me == 1)
            while (atomic_load_explicit(&theirs->seq, memory_order_acquire) != q) {
                __builtin_ia32_pause();
            }
        mine->data = q * 3 + (uint64_t)me;
        atomic_store_explicit(&mine->seq, q, memory_order_release);
        if (step != PING_PONG || me == 0)
            while (atomic_load_explicit(&theirs->seq, memory_order_acquire) != q) {
                __builtin_ia32_pause();
            }
        acc += theirs->data;
        if (step == OWN_BACK) acc += *(volatile uint64_t *)&mine->data;
    }
    double t = (now() - t0) / (double)g_iters * 1e9;
    g_sink = acc;
    return t;
}

static void *thread_main(void *arg)
{
    int me = (int)(intptr_t)arg;
    uint64_t s = 0;
    pin(me);
    for (int r = 0; r < g_rounds; r++)
        for (int k = 0; k < NSTEP; k++) {
            int step = r % 2 ? NSTEP - 1 - k : k; /* order flips every round */
            double t = exchange(me, step, &s);
            if (me == 0) g_ns[step][r] = t;
        }
    return NULL;
}

int main(int argc, char **argv)
{
    g_iters = argc > 1 ? atol(argv[1]) : 100000;
    g_rounds = argc > 2 ? atoi(argv[2]) : 9;
    if (g_iters < 1 || g_rounds < 1 || g_rounds > 101) {
        fprintf(stderr, "usage: ownline [ITERS >= 1 [ROUNDS 1..101]]\n");
        return 2;
    }
    pthread_barrier_init(&g_bar, NULL, 2);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i) != 0) {
            fprintf(stderr, "ownline: cannot start a thread\n");
            return 1;
        }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("# ownline: 2 threads on CPUs 0 and 1, %ld exchanges a step, %d rounds; thread 0, "
           "ns per exchange\n",
           g_iters, g_rounds);
    for (int k = 0; k < NSTEP; k++) {
        double lo, hi, m = median_range(g_ns[k], g_rounds, &lo, &hi);
        printf("%-30s %8.1f  [%.1f .. %.1f]\n", step_name[k], m, lo, hi);
    }
    return 0;
}
