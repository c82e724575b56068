/*
 * reduceround.c — the pipeline's reduce phase at 2 ranks, as the probe
 * times it and as the engine runs it (issue 19: the model priced the
 * reduction from the probe's round at 256 KiB-4 MiB above what the engine
 * takes).
 *
 * Two threads pinned to CPUs 0 and 1 run rounds of the engine's three
 * phases for one chunk (allreduce_shm.c at P = 2), each phase fenced and
 * followed by a spinning barrier: stage (the slice the peer reduces, from
 * the input into this thread's slot k % 3), reduce (its own slice: the
 * peer's staged copy summed with its own input in 16 KiB blocks, written
 * over the peer's copy) and gather (its own slot, where the peer left its
 * sum, copied into the output). Only the reduce phase is timed.
 *   MODE probe   as src/probe/c2c.c's round: one SLICE-byte input, staged
 *                and reduced from the same bytes, rewritten (memset) before
 *                every round, no output of the own slice.
 *   MODE clean   the same without the memset (the input as a program
 *                leaves it between calls: read, not written).
 *   MODE engine  as the engine: an input and an output of TOTAL bytes,
 *                chunk k % (TOTAL / 2 SLICE) of them per round; each
 *                reduced block also copied to the output while in L1.
 * Prints the median over rounds of the slower thread's reduce time (the
 * probe's figure) and of each thread's own.
 *
 * The threads meet at a spinning barrier; WAIT chooses how they poll:
 * 0 bare polls (the default), 1 a sched_yield every 1024 bare polls (the
 * probe's rounds before session 10), 2 a pause between polls and the yield
 * every 1024 (the probe's rounds now, and the engine's waits), 3 a bare
 * system call (getppid) in place of the yield. SKEW offsets every buffer
 * from its page (malloc's buffers sit 16 bytes past one).
 *
 * Usage: reduceround MODE [SLICE [TOTAL [ROUNDS [SKEW [WAIT]]]]]
 * (default 131072, 2 SLICE, 301, 0, 0).
 */
#define _GNU_SOURCE
#include "bench_util.h"

#include "comm.h" /* the engine's reduction kernel and fence */

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLOTS 3           /* comm.h COMM_DEPTH */
#define BLOCK (16u << 10) /* STRATA_DIRECT_BLOCK */

enum { PROBE, CLEAN, ENGINE };

static int g_mode, g_rounds, g_yield;
static size_t g_slice, g_total, g_skew;
static unsigned char *g_in[2], *g_out[2], *g_slot[2][SLOTS];
static double *g_t[2];
static _Atomic int g_count, g_gen;

static void barrier(void)
{
    int gen = atomic_load(&g_gen);
    if (atomic_fetch_add(&g_count, 1) == 1) {
        atomic_store(&g_count, 0);
        atomic_fetch_add(&g_gen, 1);
    } else {
        for (unsigned spins = 1; atomic_load(&g_gen) == gen; spins++) {
#if defined(__x86_64__) || defined(__i386__)
            if (g_yield >= 2) __builtin_ia32_pause();
#endif
            if (g_yield && spins % 1024 == 0) {
                if (g_yield == 3)
                    syscall(SYS_getppid); /* a system call, no switch */
                else
                    sched_yield(); /* as the probe's waits */
            }
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

/* One round: chunk k, this thread me. Returns the reduce phase's time. */
static double round_of(int me, int k)
{
    int peer = 1 - me, z = k % SLOTS;
    size_t chunks = g_mode == ENGINE ? g_total / (2 * g_slice) : 1, c = (size_t)k % chunks;
    /* engine: slice q of chunk c at c * 2 SLICE + q SLICE; probe: one slice */
    size_t mine = g_mode == ENGINE ? c * 2 * g_slice + (size_t)me * g_slice : 0;
    size_t theirs = g_mode == ENGINE ? c * 2 * g_slice + (size_t)peer * g_slice : 0;
    if (g_mode == PROBE) memset(g_in[me], k + 1, g_slice);
    memcpy(g_slot[me][z], g_in[me] + theirs, g_slice);
    comm_fence_seq_cst();
    barrier();
    unsigned char *at = g_slot[peer][z];
    double t0 = now();
    for (size_t o = 0; o < g_slice; o += BLOCK) {
        size_t m = g_slice - o < BLOCK ? g_slice - o : BLOCK;
        comm_reduce2(at + o, g_in[me] + mine + o, at + o, m / sizeof(float), STRATA_FP32,
                     STRATA_SUM);
        if (g_mode == ENGINE) memcpy(g_out[me] + mine + o, at + o, m);
    }
    comm_fence_seq_cst();
    double t = now() - t0;
    barrier();
    memcpy(g_out[me] + theirs, g_slot[me][z], g_slice);
    comm_fence_seq_cst();
    barrier();
    return t;
}

static void *thread_main(void *arg)
{
    int me = (int)(intptr_t)arg;
    pin(me);
    for (int k = 0; k < g_rounds; k++)
        g_t[me][k] = round_of(me, k);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    g_mode = !strcmp(mode, "probe")    ? PROBE
             : !strcmp(mode, "clean")  ? CLEAN
             : !strcmp(mode, "engine") ? ENGINE
                                       : -1;
    g_slice = argc > 2 ? strtoull(argv[2], NULL, 10) : 131072;
    g_total = argc > 3 ? strtoull(argv[3], NULL, 10) : 2 * g_slice;
    g_rounds = argc > 4 ? atoi(argv[4]) : 301;
    g_skew = argc > 5 ? strtoull(argv[5], NULL, 10) : 0;
    g_yield = argc > 6 ? atoi(argv[6]) : 0;
    if (g_mode < 0 || g_slice < 64 || g_slice % 64 || g_slice > (64u << 20) ||
        g_total < 2 * g_slice || g_total > (1u << 30) || g_rounds < 4 || g_rounds > 100000 ||
        g_skew >= 4096) {
        fprintf(stderr, "reduceround: usage: reduceround probe|clean|engine [SLICE 64..64M "
                        "[TOTAL >= 2 SLICE [ROUNDS 4..100000]]]\n");
        return 2;
    }
    size_t io = g_mode == ENGINE ? g_total : g_slice;
    for (int t = 0; t < 2; t++) {
        unsigned char **bufs[2 + SLOTS] = {&g_in[t], &g_out[t]};
        for (int z = 0; z < SLOTS; z++)
            bufs[2 + z] = &g_slot[t][z];
        for (int b = 0; b < 2 + SLOTS; b++) {
            size_t n = b < 2 ? io : g_slice;
            *bufs[b] = aligned_alloc(4096, (n + 4095) / 4096 * 4096 + 4096);
            if (!*bufs[b]) return fprintf(stderr, "reduceround: out of memory\n"), 1;
            *bufs[b] += g_skew; /* malloc's: 16 bytes past a page */
            memset(*bufs[b], 1 + b, n);
        }
        if (!(g_t[t] = calloc((size_t)g_rounds, sizeof(double))))
            return fprintf(stderr, "reduceround: out of memory\n"), 1;
    }
    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    /* the first SLOTS rounds touch their slots first */
    int n = g_rounds - SLOTS;
    double *mx = calloc((size_t)n, sizeof(double));
    if (!mx) return fprintf(stderr, "reduceround: out of memory\n"), 1;
    for (int k = 0; k < n; k++)
        mx[k] = g_t[0][k + SLOTS] > g_t[1][k + SLOTS] ? g_t[0][k + SLOTS] : g_t[1][k + SLOTS];
    double m = median(mx, n), m0 = median(g_t[0] + SLOTS, n), m1 = median(g_t[1] + SLOTS, n);
    printf("%-6s skew %2zu slice %8zu total %9zu: slower %7.2f us %6.1f GB/s; thread 0 %7.2f, 1 "
           "%7.2f us\n",
           mode, g_skew, g_slice, g_total, m * 1e6, (double)g_slice / m / 1e9, m0 * 1e6, m1 * 1e6);
    return 0;
}
