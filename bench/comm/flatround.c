/*
 * flatround.c — the flat allreduce's round (allreduce_shm.c, flat(): up to
 * STRATA_DIRECT_FLAT_MAX bytes at 2 ranks) as a standalone two-thread
 * loop, run back to back as `strata bench` calls it and in isolation as
 * the probe timed it before issue 19's session 8 (bench/README.md,
 * "Issue 19, session 8"; docs/probe.md).
 *
 * Two threads pinned to CPUs 0 and 1, each with three staging slots of
 * SIZE bytes (the engine's COMM_DEPTH), a private input and output. The
 * engine's round k, per thread: wait until the peer's done shows round
 * k - 2 (the slot is reused three rounds later); memcpy the input into
 * slot k % 3; publish staged = k + 1 (release store, seq_cst fence: the
 * engine's comm_posted); spin (pause) until the peer's staged >= k + 1;
 * reduce both slots (fp32 sum, comm_reduce_n) into the output; publish
 * done = k + 1 (store, fence). Modes:
 *   engine     rounds back to back: a lap is one round's end to the next's
 *              (what bench's timed loop measures per call);
 *   flags      the same without the copy and the reduction: the
 *              synchronisation alone;
 *   isolated   the probe's old pattern: each part (write, sum) timed and
 *              fenced, a two-way barrier between them;
 *   barrier    the engine's round, each started by a two-way barrier and
 *              timed from it (a round that cannot overlap its neighbours).
 * For engine and flags it also prints the median time from a round's
 * start to its staged flag, to the peer's flag seen, and to its end.
 * Thread 0's median of ROUNDS per mode, in ns.
 *
 * WORK ns of busy work on thread 0 before each round (both threads with
 * BOTH=1 in the environment) stand for what a call does outside the round.
 *
 * Usage: flatround [SIZE [ROUNDS [WORK]]] (default 256 bytes, 20001
 * rounds, no work).
 */
#define _GNU_SOURCE
#include "bench_util.h"
#include "comm.h"

#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ENGINE, FLAGS, ISOLATED, BARRIER, NMODE };
static const char *mode_name[NMODE] = {"engine (back to back)", "flags only (back to back)",
                                       "isolated write+sum (probe before)",
                                       "engine round after a barrier"};
#define SLOTS 3

typedef struct line {
    alignas(64) _Atomic uint64_t staged;
    alignas(64) _Atomic uint64_t done;
} line_t;

static size_t g_size;
static int g_rounds, g_mode;
static double g_work; /* s of work before each round (the call's own, outside the round) */
static bool g_both;   /* the work on both threads (BOTH=1), else on thread 0 */
static line_t g_line[2];
static alignas(64) _Atomic int g_count, g_gen;
static unsigned char *g_slot[2][SLOTS], *g_in[2], *g_out[2];
static double *g_lap[2], *g_tstaged[2], *g_tseen[2];

static void barrier(void)
{
    int gen = atomic_load(&g_gen);
    if (atomic_fetch_add(&g_count, 1) == 1) {
        atomic_store(&g_count, 0);
        atomic_fetch_add(&g_gen, 1);
    } else {
        while (atomic_load(&g_gen) == gen)
            __builtin_ia32_pause();
    }
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

static void spin_ge(_Atomic uint64_t *p, uint64_t v)
{
    while (atomic_load_explicit(p, memory_order_acquire) < v)
        __builtin_ia32_pause();
}

/* One engine round; the times of its staged flag and the peer's flag seen. */
static void round_k(int me, uint64_t k, bool data, double *ts, double *tn)
{
    int peer = 1 - me, z = (int)(k % SLOTS);
    if (k >= SLOTS) spin_ge(&g_line[peer].done, k - SLOTS + 1);
    if (data) memcpy(g_slot[me][z], g_in[me], g_size);
    atomic_store_explicit(&g_line[me].staged, k + 1, memory_order_release);
    comm_fence_seq_cst();
    *ts = now();
    spin_ge(&g_line[peer].staged, k + 1);
    *tn = now();
    if (data) {
        const void *src[2] = {g_slot[0][z], g_slot[1][z]};
        comm_reduce_n(g_out[me], src, 2, g_size / sizeof(float), STRATA_FP32, STRATA_SUM, 2);
    }
    atomic_store_explicit(&g_line[me].done, k + 1, memory_order_release);
    comm_fence_seq_cst();
}

static void *thread_main(void *arg)
{
    int me = (int)(intptr_t)arg;
    pin(me);
    barrier();
    double prev = now();
    for (int i = 0; i < g_rounds; i++) {
        double t0 = prev, ts = 0, tn = 0;
        if (g_mode == ISOLATED) {
            int z = i % SLOTS;
            double a = now();
            memcpy(g_slot[me][z], g_in[me], g_size);
            comm_fence_seq_cst();
            double w = now() - a;
            barrier();
            a = now();
            const void *src[2] = {g_slot[0][z], g_slot[1][z]};
            comm_reduce_n(g_out[me], src, 2, g_size / sizeof(float), STRATA_FP32, STRATA_SUM, 2);
            comm_fence_seq_cst();
            g_lap[me][i] = w + now() - a;
            barrier();
            continue;
        }
        if (g_mode == BARRIER) barrier(), t0 = now();
        for (double w0 = now(); g_work > 0 && (me == 0 || g_both) && now() - w0 < g_work;) {
        }
        round_k(me, (uint64_t)i, g_mode != FLAGS, &ts, &tn);
        double t = now();
        g_lap[me][i] = t - t0, g_tstaged[me][i] = ts - t0, g_tseen[me][i] = tn - t0;
        prev = t;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    g_size = argc > 1 ? strtoull(argv[1], NULL, 10) : 256;
    g_rounds = argc > 2 ? atoi(argv[2]) : 20001;
    g_work = argc > 3 ? atof(argv[3]) * 1e-9 : 0;
    g_both = getenv("BOTH") != NULL;
    if (g_size < 4 || g_size > (1u << 20) || g_size % 4 || g_rounds < 1 || g_rounds > 1000000 ||
        !(g_work >= 0 && g_work <= 1e-3)) {
        fprintf(stderr, "flatround: usage: flatround [SIZE 4..1M, a multiple of 4 [ROUNDS "
                        "1..1000000 [WORK ns 0..1e6]]]\n");
        return 2;
    }
    for (int t = 0; t < 2; t++) {
        for (int s = 0; s < SLOTS; s++)
            g_slot[t][s] = aligned_alloc(4096, (g_size + 4095) / 4096 * 4096);
        g_in[t] = aligned_alloc(4096, (g_size + 4095) / 4096 * 4096);
        g_out[t] = aligned_alloc(4096, (g_size + 4095) / 4096 * 4096);
        g_lap[t] = calloc((size_t)g_rounds, sizeof(double));
        g_tstaged[t] = calloc((size_t)g_rounds, sizeof(double));
        g_tseen[t] = calloc((size_t)g_rounds, sizeof(double));
        if (!g_in[t] || !g_out[t] || !g_lap[t] || !g_tstaged[t] || !g_tseen[t] || !g_slot[t][0] ||
            !g_slot[t][1] || !g_slot[t][2])
            return fprintf(stderr, "flatround: out of memory\n"), 1;
        memset(g_in[t], 1, g_size), memset(g_out[t], 0, g_size);
        for (int s = 0; s < SLOTS; s++)
            memset(g_slot[t][s], 0, g_size);
    }
    printf("# flatround: %zu bytes, %d rounds, CPUs 0 and 1, thread 0's median (ns)\n", g_size,
           g_rounds);
    for (g_mode = 0; g_mode < NMODE; g_mode++) {
        atomic_store(&g_line[0].staged, 0), atomic_store(&g_line[1].staged, 0);
        atomic_store(&g_line[0].done, 0), atomic_store(&g_line[1].done, 0);
        pthread_t th[2];
        for (int t = 0; t < 2; t++)
            pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t);
        for (int t = 0; t < 2; t++)
            pthread_join(th[t], NULL);
        double lap = median(g_lap[0], g_rounds);
        printf("%-36s %7.1f", mode_name[g_mode], lap * 1e9);
        if (g_mode == ENGINE || g_mode == FLAGS || g_mode == BARRIER)
            printf("   staged at %6.1f, peer seen at %6.1f", median(g_tstaged[0], g_rounds) * 1e9,
                   median(g_tseen[0], g_rounds) * 1e9);
        printf("\n");
    }
    return 0;
}
