/*
 * linehome.c — what a copy costs depending on which core last held the
 * lines: the effect the engine's placement of a reduced slice rests on
 * (allreduce_shm.c, reduced_at; docs/runtime.md "Whose cache a line is in").
 *
 * Two threads pinned to CPUs 0 and 1 (threads share memory as the ranks'
 * segment does), each with its own SIZE-byte buffers, in lock-step rounds
 * separated by a spinning barrier. Each round, per thread:
 *   local      memcpy from its own buffer to another of its own (both in its
 *              L2): the floor;
 *   read peer  memcpy from the buffer the other thread has just written;
 *   store, peer read last   memcpy into a buffer of its own that the other
 *              thread read in the previous round (the engine's old staging);
 *   store, self read last   memcpy into the peer's buffer it has itself
 *              just read (the engine's reduced slice, now).
 * Both threads run every step at once, as the two ranks of an allreduce
 * do. Prints thread 0's median of ROUNDS per step, in µs and GB/s.
 *
 * Usage: linehome [SIZE [ROUNDS]] (default 131072 bytes, 301 rounds).
 */
#define _GNU_SOURCE
#include "bench_util.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LOCAL, READ_PEER, STORE_PEER_READ, STORE_SELF_READ, NSTEP };
static const char *step_name[NSTEP] = {"local copy (own L2)", "read lines the peer wrote",
                                       "store into lines the peer read last",
                                       "store into lines this core read last"};

static size_t g_size;
static int g_rounds;
static unsigned char *g_own[2], *g_tmp[2], *g_staged[2], *g_shared[2];
static double *g_t[2][NSTEP];
static _Atomic int g_count, g_gen;

static void barrier(void)
{
    int gen = atomic_load(&g_gen);
    if (atomic_fetch_add(&g_count, 1) == 1) {
        atomic_store(&g_count, 0);
        atomic_fetch_add(&g_gen, 1);
    } else {
        while (atomic_load(&g_gen) == gen) {
        }
    }
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

/* Time one memcpy of g_size bytes. */
static double timed_copy(void *dst, const void *src)
{
    double t0 = now();
    memcpy(dst, src, g_size);
    return now() - t0;
}

static void *thread_main(void *arg)
{
    int me = (int)(intptr_t)arg, peer = 1 - me;
    pin(me);
    for (int i = 0; i < g_rounds; i++) {
        barrier();
        g_t[me][LOCAL][i] = timed_copy(g_tmp[me], g_own[me]);
        /* staged[me] was read by the peer last round */
        barrier();
        g_t[me][STORE_PEER_READ][i] = timed_copy(g_staged[me], g_own[me]);
        barrier();
        g_t[me][READ_PEER][i] = timed_copy(g_tmp[me], g_staged[peer]);
        /* shared[me] is written by me, then read and written by the peer */
        barrier();
        memcpy(g_shared[me], g_own[me], g_size);
        barrier();
        memcpy(g_tmp[me], g_shared[peer], g_size);
        g_t[me][STORE_SELF_READ][i] = timed_copy(g_shared[peer], g_own[me]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    g_size = argc > 1 ? strtoull(argv[1], NULL, 10) : 131072;
    g_rounds = argc > 2 ? atoi(argv[2]) : 301;
    if (g_size < 64 || g_size > (1u << 30) || g_rounds < 1 || g_rounds > 100000) {
        fprintf(stderr, "linehome: usage: linehome [SIZE 64..1G [ROUNDS 1..100000]]\n");
        return 2;
    }
    for (int t = 0; t < 2; t++) {
        unsigned char **bufs[] = {&g_own[t], &g_tmp[t], &g_staged[t], &g_shared[t]};
        for (size_t b = 0; b < sizeof(bufs) / sizeof(bufs[0]); b++) {
            *bufs[b] = aligned_alloc(4096, (g_size + 4095) / 4096 * 4096);
            if (!*bufs[b]) return fprintf(stderr, "linehome: out of memory\n"), 1;
            memset(*bufs[b], 1 + (int)b, g_size);
        }
        for (int s = 0; s < NSTEP; s++)
            if (!(g_t[t][s] = calloc((size_t)g_rounds, sizeof(double))))
                return fprintf(stderr, "linehome: out of memory\n"), 1;
    }
    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    printf("# linehome: %zu bytes, %d rounds, both threads at once (CPUs 0 and 1), thread 0's "
           "median\n",
           g_size, g_rounds);
    for (int s = 0; s < NSTEP; s++) {
        double m = median(g_t[0][s], g_rounds);
        printf("%-38s %9.2f us %7.1f GB/s\n", step_name[s], m * 1e6, (double)g_size / m / 1e9);
    }
    return 0;
}
