/*
 * copyall.c — the store kinds an output sees at each size: NTHREADS (1 or
 * 2) threads pinned to cpus 0 and 1, each on its own buffers of SIZE bytes
 * (a multiple of 16 KiB), all at once; 41 rounds, each thread's median,
 * the slower thread's figure (GB/s a core). bench/README.md, "s12-h19":
 * memset stays in cache to 8 MiB a core where copies fall.
 *   flock /tmp/strata-rt.lock chrt -f 50 build/release/bench/probe/copyall MODE NAME NTHREADS
 * SIZE... MODE 0: memcpy in 16 KiB blocks (the engine's own-slice copy-out); 1: one memcpy; 2:
 * read; 3: memset (the probe's write kernel); 4: 16 KiB memcpy from one hot block into the buffer
 * (stores only). A thread that waits 10 s for the other at a round's start gives up.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS  41
#define BLOCK 16384

static size_t S;
static int mode, nthreads;
static volatile unsigned long sink;
static atomic_int go;
static atomic_bool failed;
static double res[2];

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *worker(void *arg)
{
    int me = (int)(long)arg;
    cpu_set_t c;
    CPU_ZERO(&c);
    CPU_SET(me, &c);
    pthread_setaffinity_np(pthread_self(), sizeof c, &c);
    unsigned char *s = aligned_alloc(4096, S), *d = aligned_alloc(4096, S);
    if (!s || !d) {
        atomic_store(&failed, true);
        return NULL;
    }
    memset(s, 1, S);
    memset(d, 2, S);
    double t[REPS];
    for (int r = 0; r < REPS && !atomic_load(&failed); r++) {
        atomic_fetch_add(&go, 1);
        double since = now();
        while (atomic_load(&go) < nthreads * (r + 1) && !atomic_load(&failed))
            if (now() - since > 10) atomic_store(&failed, true);
        double t0 = now();
        if (mode == 0 || mode == 4)
            for (size_t o = 0; o < S; o += BLOCK)
                memcpy(d + o, mode == 0 ? s + o : s, BLOCK);
        else if (mode == 1)
            memcpy(d, s, S);
        else if (mode == 2) {
            unsigned long x = 0;
            for (size_t o = 0; o < S; o += 8)
                x += *(const unsigned long *)(s + o);
            sink = x; /* the sum is used, so the loads are kept */
        } else
            memset(d, r, S);
        t[r] = now() - t0;
    }
    qsort(t, REPS, sizeof(double), cmp);
    res[me] = (double)S / t[REPS / 2] / 1e9;
    free(s), free(d);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 5 || atoi(argv[1]) < 0 || atoi(argv[1]) > 4 || atoi(argv[3]) < 1 ||
        atoi(argv[3]) > 2) {
        fprintf(stderr, "usage: copyall MODE(0-4) NAME NTHREADS(1-2) SIZE...\n");
        return 2;
    }
    mode = atoi(argv[1]), nthreads = atoi(argv[3]);
    for (int i = 4; i < argc; i++) {
        S = (size_t)atof(argv[i]);
        if (S == 0 || S % BLOCK) {
            fprintf(stderr, "copyall: SIZE must be a positive multiple of %d: %s\n", BLOCK,
                    argv[i]);
            return 2;
        }
        atomic_store(&go, 0);
        pthread_t th[2];
        for (int k = 0; k < nthreads; k++)
            pthread_create(&th[k], NULL, worker, (void *)(long)k);
        for (int k = 0; k < nthreads; k++)
            pthread_join(th[k], NULL);
        if (atomic_load(&failed)) {
            fprintf(stderr, "copyall: a thread made no progress for 10 s (or out of memory)\n");
            return 1;
        }
        double r = nthreads == 2 && res[1] < res[0] ? res[1] : res[0];
        printf("%s S=%.0fMiB per core %.1f GB/s\n", argv[2], (double)S / 1048576, r);
    }
    return 0;
}
