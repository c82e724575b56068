/*
 * cpuwall.c — where a large allreduce's time goes: on-CPU work or waiting.
 *
 * P ranks (strata_launch_fn), rank r pinned to CPU r mod (CPUs online), each
 * alternating, for ROUNDS rounds, ITERS back-to-back allreduces of SIZE bytes
 * (float sum, buffers written before timing, 3 warm-up calls) and ITERS
 * copies of the same SIZE with non-temporal stores (the compulsory traffic
 * of an allreduce, as bench/vs-mpi's `bound`). Per call it prints, for rank
 * 0: the wall time, the CPU time (user + system, getrusage) and the
 * voluntary and involuntary context switches, for both. CPU time counts the
 * copies and reductions (and any spinning); wall minus CPU is time spent
 * off the CPU — asleep waiting for a peer or preempted by other processes.
 * On a loaded host the wall times move 2-10x between rounds while the CPU
 * times stay within ~20 %, so the CPU column is the figure to compare
 * engine variants by, and wall / CPU against the copy's says how much
 * more the allreduce loses to waiting than a loop that never waits.
 * Each round also times ITERS allreduces on registered buffers
 * (strata_comm_mem_alloc: the engine's zero-staging path, docs/runtime.md),
 * printed as "registered".
 *
 * Usage: cpuwall SIZE ITERS ROUNDS P (e.g. cpuwall 67108864 4 3 2).
 */
#define _GNU_SOURCE
#include "bench_util.h"
#include "strata/comm.h"
#include "nt_copy.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static size_t g_n;
static int g_iters, g_rounds;

typedef struct usage {
    double wall, cpu;
    long vcsw, ivcsw;
} usage_t;

static usage_t usage_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (usage_t){now(),
                     (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6,
                     ru.ru_nvcsw, ru.ru_nivcsw};
}

static void print_per_call(const char *what, usage_t a, usage_t b, int iters)
{
    printf(" | %s %.1f us (cpu %.1f us, vcsw %.1f ivcsw %.1f)", what,
           (b.wall - a.wall) / iters * 1e6, (b.cpu - a.cpu) / iters * 1e6,
           (double)(b.vcsw - a.vcsw) / iters, (double)(b.ivcsw - a.ivcsw) / iters);
}

static int rank_main(void *arg)
{
    (void)arg;
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    if (strata_comm_init_env(&c, &err) != STRATA_OK) {
        fprintf(stderr, "cpuwall: %s\n", err.msg);
        return 1;
    }
    int r = strata_comm_rank(c);
    cpu_set_t m;
    CPU_ZERO(&m);
    CPU_SET(r % (int)sysconf(_SC_NPROCESSORS_ONLN), &m);
    sched_setaffinity(0, sizeof m, &m);
    float *x = malloc(g_n * sizeof(float)), *y = malloc(g_n * sizeof(float));
    int rc = x && y ? 0 : 1;
    if (rc == 0) memset(x, 1, g_n * sizeof(float)), memset(y, 0, g_n * sizeof(float));
    float *rx = NULL, *ry = NULL;
    if (rc == 0)
        rc = strata_comm_mem_alloc(c, g_n * sizeof(float), (void **)&rx) != STRATA_OK ||
             strata_comm_mem_alloc(c, g_n * sizeof(float), (void **)&ry) != STRATA_OK;
    if (rc == 0) memset(rx, 1, g_n * sizeof(float)), memset(ry, 0, g_n * sizeof(float));
    for (int k = 0; k < 3 && rc == 0; k++)
        rc = strata_comm_allreduce(c, x, y, g_n, STRATA_FP32, STRATA_SUM, NULL) != STRATA_OK ||
             strata_comm_allreduce(c, rx, ry, g_n, STRATA_FP32, STRATA_SUM, NULL) != STRATA_OK;
    for (int round = 0; round < g_rounds && rc == 0; round++) {
        strata_comm_barrier(c, NULL);
        usage_t a = usage_now();
        for (int k = 0; k < g_iters && rc == 0; k++)
            rc = strata_comm_allreduce(c, x, y, g_n, STRATA_FP32, STRATA_SUM, NULL) != STRATA_OK;
        usage_t b = usage_now();
        strata_comm_barrier(c, NULL);
        usage_t d = usage_now();
        for (int k = 0; k < g_iters; k++)
            nt_copy(y, x, g_n * sizeof(float));
        usage_t e = usage_now();
        strata_comm_barrier(c, NULL);
        usage_t f = usage_now();
        for (int k = 0; k < g_iters && rc == 0; k++)
            rc = strata_comm_allreduce(c, rx, ry, g_n, STRATA_FP32, STRATA_SUM, NULL) != STRATA_OK;
        usage_t g = usage_now();
        if (r == 0) {
            printf("round %d", round);
            print_per_call("allreduce", a, b, g_iters);
            print_per_call("registered", f, g, g_iters);
            print_per_call("nt-copy", d, e, g_iters);
            printf(" | wall/cpu %.1f vs %.1f\n", (b.wall - a.wall) / (b.cpu - a.cpu),
                   (e.wall - d.wall) / (e.cpu - d.cpu));
            fflush(stdout);
        }
    }
    if (rc) fprintf(stderr, "cpuwall: rank %d: %s\n", r, strata_comm_errmsg(c));
    free(x), free(y);
    strata_comm_mem_free(c, rx), strata_comm_mem_free(c, ry);
    strata_comm_destroy(c);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: cpuwall SIZE ITERS ROUNDS P\n");
        return 2;
    }
    long long size = atoll(argv[1]);
    g_iters = atoi(argv[2]), g_rounds = atoi(argv[3]);
    int P = atoi(argv[4]);
    if (size < 4 || g_iters < 1 || g_rounds < 1 || P < 2 || P > 64) {
        fprintf(stderr, "cpuwall: SIZE >= 4, ITERS >= 1, ROUNDS >= 1, 2 <= P <= 64\n");
        return 2;
    }
    g_n = (size_t)size / sizeof(float);
    printf("# cpuwall: %d ranks, %lld B float sum allreduce vs non-temporal copy, %d calls a "
           "round; rank 0's figures per call\n",
           P, size, g_iters);
    int code = -1;
    strata_error_t err = {0};
    if (strata_launch_fn(P, rank_main, NULL, 2.0, &code, &err) != STRATA_OK) {
        fprintf(stderr, "cpuwall: %s\n", err.msg);
        return 1;
    }
    return code;
}
