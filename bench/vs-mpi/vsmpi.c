/*
 * vsmpi.c — paired benchmark: MPI_Allreduce against strata's allreduce on
 * the same buffers, in one MPI job, size by size, alternating, for several
 * rounds; prints medians and ratios.
 *
 * Why paired: this VM's core-to-core latency and memory bandwidth drift by
 * 2-5x between periods, so only ratios measured side by side mean anything.
 * Each round times `iters` back-to-back calls of one library, then of the
 * other (the order flips every round), each after a barrier; the time of a
 * round is the slowest rank's mean per call. strata joins from the MPI
 * launcher's environment (strata_comm_init_env: OMPI_COMM_WORLD_* / PMI_*).
 *
 * The roofline row: every rank copies its buffer once with non-temporal
 * stores, all ranks at once — the compulsory traffic of an allreduce
 * (read the input, write the output) — and `bound` is busbw at that time;
 * `eff` = strata busbw / bound.
 *
 * Fairness: both libraries get the same buffers, allocated once and
 * written before timing, and a full warm-up round each per size before the
 * timed rounds. What the MPI library does inside a call (its own temporary
 * buffers, its single-copy mechanism) is set from outside, by the
 * environment run.sh passes: the header prints the condition it ran under
 * (VSMPI_CONDITION), and whether glibc keeps freed memory
 * (GLIBC_TUNABLES) — without that, Open MPI's large temporary buffers are
 * mmap'd and unmapped on every call, and every call first-touches them
 * again.
 *
 * The host: before the table rank 0 prints the one-way cache-line transfer
 * between two cores and the first-touch cost of a page, measured by the
 * probe's own code (strata_probe_run with host_costs_only), and the cost of
 * handing a CPU from one process to another (handoff_cost), while the other
 * ranks sleep — the host figures that set the small-message and the
 * first-touch part of both libraries' times. -n skips it.
 *
 * Registered buffers: the same allreduce on buffers from
 * strata_comm_mem_alloc (every rank maps them, so the engine reduces
 * straight from the peers' inputs into their outputs, no staging: see
 * docs/runtime.md) is timed in the same rounds, on its own buffers written
 * before timing, and printed as a second row per size ("strata
 * (registered buffers)"), its ratio and eff against the same MPI rounds
 * and copy bound; the first row ("strata") is unchanged. -R skips it.
 *
 * Usage: vsmpi [-n] [-R] [-r ROUNDS] [-s SIZES...] (sizes in bytes, default
 * 8 256K 4M 64M). Output: one line per size with MPI and strata medians,
 * then each library's best round and their ratio (under load Open MPI's
 * median is bimodal, so the best rounds are the quiet-minute comparison).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strata/comm.h"
#include "strata/probe.h"

#include "../nt_copy.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef enum { LIB_MPI, LIB_STRATA, LIB_REG, LIB_COPY } lib_t;

static double timed(lib_t lib, strata_comm_t *c, float *a, float *b, size_t n, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (lib == LIB_MPI)
            MPI_Allreduce(a, b, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        else if (lib == LIB_STRATA || lib == LIB_REG) {
            if (strata_comm_allreduce(c, a, b, n, STRATA_FP32, STRATA_SUM, NULL) != STRATA_OK) {
                fprintf(stderr, "strata: %s\n", strata_comm_errmsg(c));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        } else
            nt_copy(b, a, n * sizeof(float));
    }
    double t = (MPI_Wtime() - t0) / iters, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

/* One hand-off between two processes on one CPU, seconds (median of 7
 * batches of HANDOFF_YIELDS sched_yield calls in each of two processes,
 * this one and a child, both pinned to the CPU this one runs on: each of
 * the parent's yields lets the child run until its yield, so a yield of
 * the parent's loop is two switches). It sets the floor of a small
 * collective with more ranks than CPUs: every rank must run within the
 * call, so a CPU that holds two ranks switches at least once per call.
 * -1 when it cannot be measured (fork or pinning fails). */
#define HANDOFF_YIELDS 2000
static double handoff_cost(void)
{
    int cpu = sched_getcpu();
    cpu_set_t one, saved;
    if (cpu < 0 || sched_getaffinity(0, sizeof(saved), &saved) != 0) return -1;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0) return -1;
    double t[7];
    int ok = 1;
    for (int b = 0; b < 7 && ok; b++) {
        fflush(stdout);
        pid_t p = fork();
        if (p < 0) {
            ok = 0;
            break;
        }
        if (p == 0) { /* inherits the one-CPU affinity; ends on its own */
            for (int i = 0; i < HANDOFF_YIELDS + 100; i++)
                sched_yield();
            _exit(0);
        }
        double t0 = MPI_Wtime();
        for (int i = 0; i < HANDOFF_YIELDS; i++)
            sched_yield();
        t[b] = (MPI_Wtime() - t0) / HANDOFF_YIELDS / 2;
        ok = waitpid(p, NULL, 0) == p;
    }
    sched_setaffinity(0, sizeof(saved), &saved);
    return ok ? median(t, 7) : -1;
}

/* Rank 0 measures the host's core-to-core latency and first touch with the
 * probe's code and prints them; the other ranks sleep meanwhile (a rank
 * spinning in MPI_Barrier would take a core from the measurement). Under
 * mpirun rank 0 is bound to one core, so it widens its affinity to every
 * online CPU for the measurement (where a cpuset forbids that, the probe
 * sees one core and prints no coherence figure) and restores it. */
static void host_costs(int rank)
{
    MPI_Request req;
    if (rank != 0) {
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
        int done = 0;
        while (MPI_Test(&req, &done, MPI_STATUS_IGNORE), !done)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        return;
    }
    cpu_set_t saved, all;
    sched_getaffinity(0, sizeof(saved), &saved);
    CPU_ZERO(&all);
    for (long i = 0, n = sysconf(_SC_NPROCESSORS_ONLN); i < n && i < CPU_SETSIZE; i++)
        CPU_SET((int)i, &all);
    sched_setaffinity(0, sizeof(all), &all);
    strata_probe_opts_t o = {.quick = true, .host_costs_only = true};
    strata_probe_result_t *r = NULL;
    strata_error_t err = {0};
    if (strata_probe_run(&o, &r, &err) != STRATA_OK) {
        printf("# host: not measured: %s\n", err.msg);
    } else {
        double page = (double)sysconf(_SC_PAGESIZE);
        if (r->c2c_all.n)
            printf("# host: core-to-core latency (one-way cache-line transfer) %.1f ns median, "
                   "[%.1f .. %.1f], n=%d, %d cores\n",
                   r->c2c_all.median * 1e9, r->c2c_all.min * 1e9, r->c2c_all.max * 1e9,
                   r->c2c_all.n, r->cores);
        else
            printf("# host: core-to-core latency not measured (one usable core)\n");
        printf("# host: first touch %.2f us per %.0f KiB page = %.0f faults/s = %.2f GB/s "
               "(median, [%.2f .. %.2f] us, n=%d)\n",
               r->page_fault.median * 1e6, page / 1024, 1 / r->page_fault.median,
               page / r->page_fault.median / 1e9, r->page_fault.min * 1e6, r->page_fault.max * 1e6,
               r->page_fault.n);
    }
    double h = handoff_cost();
    if (h > 0)
        printf("# host: hand-off between two processes on one CPU (sched_yield) %.2f us median "
               "of 7 x %d\n",
               h * 1e6, HANDOFF_YIELDS);
    else
        printf("# host: hand-off between two processes on one CPU not measured\n");
    fflush(stdout);
    strata_probe_destroy(r);
    sched_setaffinity(0, sizeof(saved), &saved);
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* The conditions the MPI library runs under, as the environment sets them. */
static void print_condition(void)
{
    const char *cond = getenv("VSMPI_CONDITION"), *gt = getenv("GLIBC_TUNABLES");
    const char *sc = getenv("OMPI_MCA_btl_vader_single_copy_mechanism"), *ucx = getenv("UCX_TLS");
    printf("# condition: %s; glibc keeps freed memory: %s%s%s",
           cond && *cond ? cond : "(VSMPI_CONDITION unset)",
           gt && strstr(gt, "mmap_max=0") ? "yes (GLIBC_TUNABLES=" : "no (glibc default)",
           gt && strstr(gt, "mmap_max=0") ? gt : "", gt && strstr(gt, "mmap_max=0") ? ")" : "");
    if (sc) printf("; vader single copy: %s", sc);
    if (ucx) printf("; UCX_TLS=%s", ucx);
    printf("\n");
}

static int check(strata_comm_t *c, float *a, float *b, size_t n, int rank, int P)
{
    for (size_t i = 0; i < n; i++)
        a[i] = (float)((i + (size_t)rank) % 7);
    strata_comm_allreduce(c, a, b, n, STRATA_FP32, STRATA_SUM, NULL);
    long bad = 0;
    for (size_t i = 0; i < n; i++) {
        float want = 0;
        for (int q = 0; q < P; q++)
            want += (float)((i + (size_t)q) % 7);
        bad += b[i] != want;
    }
    long all;
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all == 0;
}

/* One row: MPI's median mm against strata's ms (mc: the copy bound's
 * median, 0 when not measured; lm, ls: the best rounds). */
static void row(size_t bytes_, double bf, double mm, double ms, double mc, int ok, double lm,
                double ls, const char *what)
{
    double bytes = (double)bytes_;
    printf("  %10zu %10.2f %10.2f %8.2f %8.2f %7.2f", bytes_, mm * 1e6, ms * 1e6,
           bytes / mm * bf / 1e9, bytes / ms * bf / 1e9, mm / ms);
    if (mc > 0)
        printf(" %9.2f %6.2f", bytes / mc * bf / 1e9, mc / ms);
    else
        printf(" %9s %6s", "-", "-");
    printf(" %5s %8.2f %8.2f %6.2f  %s\n", ok ? "yes" : "NO", lm * 1e6, ls * 1e6, lm / ls, what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P, rounds = 7;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    size_t sizes[32] = {8, 256 << 10, 4 << 20, 64 << 20};
    int ns = 4, costs = 1, reg = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0)
            costs = 0;
        else if (strcmp(argv[i], "-R") == 0)
            reg = 0;
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "-s") == 0) {
            ns = 0;
            while (i + 1 < argc && argv[i + 1][0] != '-' && ns < 32) {
                char *end;
                double v = strtod(argv[++i], &end);
                if (*end == 'K' || *end == 'k') v *= 1024;
                if (*end == 'M' || *end == 'm') v *= 1048576;
                sizes[ns++] = (size_t)v;
            }
        }
    }
    if (rounds < 1 || rounds > 101) rounds = 7;
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    if (strata_comm_init_env(&c, &err) != STRATA_OK) {
        fprintf(stderr, "rank %d: strata_comm_init_env: %s\n", rank, err.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t maxb = 0;
    for (int s = 0; s < ns; s++)
        maxb = sizes[s] > maxb ? sizes[s] : maxb;
    float *a = malloc(maxb + 64), *b = malloc(maxb + 64);
    memset(a, 1, maxb + 64), memset(b, 0, maxb + 64);
    float *ra = NULL, *rb = NULL;
    if (reg && (strata_comm_mem_alloc(c, maxb + 64, (void **)&ra) != STRATA_OK ||
                strata_comm_mem_alloc(c, maxb + 64, (void **)&rb) != STRATA_OK)) {
        fprintf(stderr, "rank %d: strata_comm_mem_alloc: %s\n", rank, strata_comm_errmsg(c));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (reg) memset(ra, 1, maxb + 64), memset(rb, 0, maxb + 64);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n,")] = 0;
    if (rank == 0) print_condition();
    if (costs) host_costs(rank);
    if (rank == 0)
        printf("# vs-mpi: %d ranks, float sum allreduce, %d rounds, medians; MPI = %s\n"
               "# %10s %10s %10s %8s %8s %7s %9s %6s %5s %8s %8s %6s  %s\n",
               P, rounds, lib, "size(B)", "mpi(us)", "strata(us)", "mpi-bus", "str-bus", "ratio",
               "bound", "eff", "ok", "mpi-min", "str-min", "ratio", "row");
    for (int s = 0; s < ns; s++) {
        size_t n = sizes[s] / sizeof(float);
        if (n == 0) n = 1;
        int iters = sizes[s] >= (16u << 20)  ? 5
                    : sizes[s] >= (1u << 20) ? 20
                    : sizes[s] >= 65536      ? 100
                                             : 2000;
        double tm[101], ts[101], tc[101], tr[101] = {0};
        int ok = check(c, a, b, n, rank, P), rok = reg ? check(c, ra, rb, n, rank, P) : 1;
        timed(LIB_MPI, c, a, b, n, iters); /* warm all: one full round each */
        timed(LIB_STRATA, c, a, b, n, iters);
        if (reg) timed(LIB_REG, c, ra, rb, n, iters);
        for (int r = 0; r < rounds; r++) {
            if (r % 2 == 0) {
                tm[r] = timed(LIB_MPI, c, a, b, n, iters);
                ts[r] = timed(LIB_STRATA, c, a, b, n, iters);
                if (reg) tr[r] = timed(LIB_REG, c, ra, rb, n, iters);
            } else {
                if (reg) tr[r] = timed(LIB_REG, c, ra, rb, n, iters);
                ts[r] = timed(LIB_STRATA, c, a, b, n, iters);
                tm[r] = timed(LIB_MPI, c, a, b, n, iters);
            }
            tc[r] = sizes[s] >= (1u << 20) ? timed(LIB_COPY, c, a, b, n, iters) : 0;
        }
        double mm = median(tm, rounds), ms = median(ts, rounds), mc = median(tc, rounds);
        double mr = reg ? median(tr, rounds) : 0;
        double lm = tm[0], ls = ts[0], lr = tr[0]; /* sorted by median(): the best rounds */
        double bf = 2.0 * (P - 1) / P, bytes = (double)n * sizeof(float);
        if (rank == 0) {
            row(n * sizeof(float), bf, mm, ms, mc, ok, lm, ls, "strata");
            if (reg)
                row(n * sizeof(float), bf, mm, mr, mc, rok, lm, lr, "strata (registered buffers)");
            fflush(stdout);
        }
    }
    if (reg) strata_comm_mem_free(c, ra), strata_comm_mem_free(c, rb);
    strata_comm_destroy(c);
    free(a), free(b);
    MPI_Finalize();
    return 0;
}
