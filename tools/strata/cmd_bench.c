/*
 * cmd_bench.c — `strata bench OP -n N …`: launch N local ranks, time one
 * collective over a range of sizes and print nccl-tests' table (size,
 * count, type, redop, root, time, algbw, busbw, #wrong; out of place and in
 * place; "# Avg bus bandwidth"), plus the model's prediction for this host.
 *
 * Timing follows nccl-tests: per size, `warmup` calls, then `iters` calls
 * timed together on each rank; the row shows the slowest rank's mean.
 * algbw = size / time; busbw = algbw × the collective's bus factor
 * (allreduce 2(P-1)/P; reduce-scatter, allgather, alltoall (P-1)/P;
 * broadcast, reduce 1), as in nccl-tests' PERFORMANCE.md. With -c 1 each
 * size is also checked once against a reference (#wrong = wrong elements,
 * summed over ranks). The model column comes from strata_comm_calibrate()
 * (flag ping-pong α, one-core copy and reduce bandwidth) and
 * strata_comm_predict() (α-β per algorithm; docs/runtime.md).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bench_opts {
    strata_coll_t coll;
    long n, iters, warmup, check, root;
    double minb, maxb, factor;
    strata_dtype_t dt;
    strata_op_t op;
    strata_comm_algo_t algo;
    int json;
    int join;                   /* --join: one rank of a job launched elsewhere */
    const char *model_path;     /* --model FILE: the calibrated model of strata probe */
    strata_probe_calib_t calib; /* loaded from it */
} bench_opts_t;

static void usage(FILE *out)
{
    fprintf(out, "usage: strata bench OP -n N [-b 8] [-e 64M] [-f 2] [-d float] [-o sum]\n"
                 "                    [--algo auto|shm|ring|recdbl] [-c 1] [-w 5] [-i 20] [-r 0] "
                 "[--json]\n                    [--model FILE] [--join]\n\n"
                 "OP: allreduce reduce_scatter allgather broadcast reduce alltoall.\n"
                 "Launches N local ranks and prints nccl-tests' table with the model's\n"
                 "prediction for this host beside the measurement. -b/-e: smallest and largest\n"
                 "size in bytes (K/M/G suffixes), -f: size factor, -d: data type (int8 uint8\n"
                 "int32 uint32 int64 uint64 half bfloat16 float double), -o: sum prod min max\n"
                 "avg, -c 1: check results, -w/-i: warm-up and timed iterations, -r: root.\n"
                 "--model FILE: predict with the calibrated model of a cluster file written by\n"
                 "'strata probe --save FILE' (default: a quick calibration measured now).\n"
                 "--join: instead of launching -n ranks, be one rank of a job started by\n"
                 "mpirun, srun, torchrun or strata run (strata_comm_init_env; rank 0 prints).\n"
                 "err%% compares the model with the slowest rank's median out-of-place call.\n"
                 "Ranges (decimal): -n 1..64, -b/-e 1..4G, -f 1..1024, -i 1..1000000,\n"
                 "-w 0..1000000, -c 0..1, -r 0..N-1.\n");
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ==== Reference data ==== */

/* -b/-e bound: every rank allocates send and receive buffers of -e bytes. */
#define BENCH_SIZE_MAX 4294967296.0 /* 4 GiB */

#define put strata_dtype_set
#define get strata_dtype_get

/* Input of rank r, element i: 1..3 for sum/min/max/avg (a sum over 64
 * ranks is at most 192: exact in every type but int8/uint8 beyond 42
 * ranks), for prod 1 or 2 with at most two factors 2 (ranks 0..7 only), so
 * every result is exact and the check needs no tolerance. */
static double val(const bench_opts_t *o, int r, size_t i)
{
    if (o->op == STRATA_PROD) return (i + (size_t)r) % 4 == 0 && r < 8 ? 2 : 1;
    return (double)((i * 3 + (size_t)r) % 3 + 1);
}

static double expect_reduced(const bench_opts_t *o, int P, size_t i)
{
    double acc = val(o, 0, i);
    for (int q = 1; q < P; q++) {
        double v = val(o, q, i);
        if (o->op == STRATA_PROD)
            acc *= v;
        else if (o->op == STRATA_MIN)
            acc = v < acc ? v : acc;
        else if (o->op == STRATA_MAX)
            acc = v > acc ? v : acc;
        else
            acc += v;
    }
    if (o->op == STRATA_AVG) {
        bool flt = o->dt >= STRATA_FP16;
        acc = flt ? (double)((float)acc / (float)P) : trunc(acc / P); /* fp64: see caller */
    }
    return acc;
}

/* ==== One size ==== */

typedef struct bufs {
    unsigned char *send, *recv;
} bufs_t;

/* Element counts of the send and receive buffers for a size (bytes). */
static void shape(const bench_opts_t *o, int P, size_t size, size_t *count, size_t *nsend,
                  size_t *nrecv)
{
    size_t es = strata_dtype_size(o->dt), n = size / es;
    switch (o->coll) {
    case STRATA_COLL_REDUCE_SCATTER:
        *count = n / (size_t)P, *nsend = *count * (size_t)P, *nrecv = *count;
        break;
    case STRATA_COLL_ALLGATHER:
        *count = n / (size_t)P, *nsend = *count, *nrecv = *count * (size_t)P;
        break;
    case STRATA_COLL_ALLTOALL:
        *count = n / (size_t)P, *nsend = *nrecv = *count * (size_t)P;
        break;
    default:
        *count = *nsend = *nrecv = n;
        break;
    }
}

static strata_status_t call(strata_comm_t *c, const bench_opts_t *o, const void *send, void *recv,
                            size_t count, const strata_call_opts_t *co)
{
    int root = (int)o->root;
    switch (o->coll) {
    case STRATA_COLL_ALLREDUCE:
        return strata_comm_allreduce(c, send, recv, count, o->dt, o->op, co);
    case STRATA_COLL_REDUCE_SCATTER:
        return strata_comm_reduce_scatter(c, send, recv, count, o->dt, o->op, co);
    case STRATA_COLL_ALLGATHER:
        return strata_comm_allgather(c, send, recv, count, o->dt, co);
    case STRATA_COLL_REDUCE:
        return strata_comm_reduce(c, send, recv, count, o->dt, o->op, root, co);
    case STRATA_COLL_ALLTOALL:
        return strata_comm_alltoall(c, send, recv, count, o->dt, co);
    default:
        return strata_comm_broadcast(c, recv, count, o->dt, root, co);
    }
}

static void fill_input(const bench_opts_t *o, int r, int P, void *send, void *recv, size_t count,
                       bool inplace)
{
    size_t es = strata_dtype_size(o->dt);
    switch (o->coll) {
    case STRATA_COLL_ALLGATHER: {
        unsigned char *mine = inplace ? (unsigned char *)recv + (size_t)r * count * es : send;
        for (size_t i = 0; i < count; i++)
            put(o->dt, mine, i, (double)((r * 7 + (int)i) % 50));
        break;
    }
    case STRATA_COLL_ALLTOALL:
        for (size_t i = 0; i < count * (size_t)P; i++)
            put(o->dt, inplace ? recv : send, i,
                (double)((r * 5 + (int)(i / count) * 11 + (int)(i % count)) % 50));
        break;
    case STRATA_COLL_BROADCAST:
        for (size_t i = 0; i < count; i++)
            put(o->dt, recv, i, r == o->root ? (double)(i % 50) : 99);
        break;
    default: {
        size_t n = o->coll == STRATA_COLL_REDUCE_SCATTER ? count * (size_t)P : count;
        for (size_t i = 0; i < n; i++)
            put(o->dt, inplace ? recv : send, i, val(o, r, i));
    }
    }
}

static long count_wrong(const bench_opts_t *o, int r, int P, const void *recv, size_t count)
{
    long bad = 0;
    switch (o->coll) {
    case STRATA_COLL_ALLGATHER:
        for (size_t i = 0; i < count * (size_t)P; i++)
            bad += get(o->dt, recv, i) != (double)(((int)(i / count) * 7 + (int)(i % count)) % 50);
        break;
    case STRATA_COLL_ALLTOALL:
        for (size_t i = 0; i < count * (size_t)P; i++)
            bad += get(o->dt, recv, i) !=
                   (double)(((int)(i / count) * 5 + r * 11 + (int)(i % count)) % 50);
        break;
    case STRATA_COLL_BROADCAST:
        for (size_t i = 0; i < count; i++)
            bad += get(o->dt, recv, i) != (double)(i % 50);
        break;
    case STRATA_COLL_REDUCE:
        if (r != o->root) break;
        /* fall through */
    default: {
        size_t off = o->coll == STRATA_COLL_REDUCE_SCATTER ? (size_t)r * count : 0;
        for (size_t i = 0; i < count; i++) {
            double want = expect_reduced(o, P, off + i);
            if (o->op == STRATA_AVG && o->dt == STRATA_FP64) {
                double s = 0;
                for (int q = 0; q < P; q++)
                    s += val(o, q, off + i);
                want = s / P;
            }
            bad += get(o->dt, recv, i) != want;
        }
    }
    }
    return bad;
}

typedef struct row {
    double t[2];
    double median; /* out of place: the slowest rank's median call */
    long wrong[2];
} row_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Time each call of the timed loop (lap[it]); returns the mean. */
static double timed_loop(strata_comm_t *c, const bench_opts_t *o, const void *send, void *recv,
                         size_t count, const strata_call_opts_t *co, double *lap,
                         strata_status_t *st)
{
    double t0 = now(), prev = t0;
    for (long it = 0; it < o->iters && *st == STRATA_OK; it++) {
        *st = call(c, o, send, recv, count, co);
        double t = now();
        lap[it] = t - prev, prev = t;
    }
    return (prev - t0) / (double)o->iters;
}

static strata_status_t measure(strata_comm_t *c, const bench_opts_t *o, bufs_t *b, size_t count,
                               double *lap, row_t *row)
{
    int r = strata_comm_rank(c), P = strata_comm_size(c);
    strata_call_opts_t co = {.algo = o->algo};
    for (int ip = 0; ip < 2; ip++) {
        const void *send =
            ip ? (o->coll == STRATA_COLL_BROADCAST ? NULL : STRATA_IN_PLACE) : b->send;
        if (ip && o->coll == STRATA_COLL_REDUCE && r != o->root)
            send = b->recv; /* in place is the root's; the others' input is in recv */
        strata_status_t st = STRATA_OK;
        for (long w = 0; w < o->warmup && st == STRATA_OK; w++)
            st = call(c, o, send, b->recv, count, &co);
        if (st == STRATA_OK) st = strata_comm_barrier(c, NULL);
        double t[2] = {timed_loop(c, o, send, b->recv, count, &co, lap, &st), 0};
        qsort(lap, (size_t)o->iters, sizeof(double), cmp_double);
        t[1] = o->iters % 2 ? lap[o->iters / 2] : (lap[o->iters / 2 - 1] + lap[o->iters / 2]) / 2;
        if (st == STRATA_OK) st = strata_comm_allreduce(c, t, t, 2, STRATA_FP64, STRATA_MAX, NULL);
        if (ip == 0) row->median = t[1];
        long wrong[1] = {0};
        if (st == STRATA_OK && o->check) {
            fill_input(o, r, P, b->send, b->recv, count, ip);
            st = call(c, o, send, b->recv, count, &co);
            wrong[0] = count_wrong(o, r, P, b->recv, count);
            if (st == STRATA_OK)
                st = strata_comm_allreduce(c, wrong, wrong, 1, STRATA_INT64, STRATA_SUM, NULL);
        }
        if (st != STRATA_OK) return st;
        row->t[ip] = t[0], row->wrong[ip] = wrong[0];
    }
    return STRATA_OK;
}

/* ==== Output ==== */

/* Relative error of the model against the measured median. */
static double model_err(double model, double measured)
{
    return measured > 0 ? (model - measured) / measured : 0;
}

/* The error summary over every row: median and largest |error|, and how
 * many rows lie within 20 % (bench/README.md's target). */
typedef struct err_sum {
    double abs[64];
    size_t size[64];
    int n;
} err_sum_t;

static void summary(const bench_opts_t *o, err_sum_t *e)
{
    if (e->n == 0) return;
    double sorted[64], worst = 0;
    size_t at = 0;
    int within = 0;
    for (int i = 0; i < e->n; i++) {
        sorted[i] = e->abs[i];
        within += e->abs[i] <= 0.20;
        if (e->abs[i] >= worst) worst = e->abs[i], at = e->size[i];
    }
    qsort(sorted, (size_t)e->n, sizeof(double), cmp_double);
    double med = e->n % 2 ? sorted[e->n / 2] : (sorted[e->n / 2 - 1] + sorted[e->n / 2]) / 2;
    if (o->json)
        printf(",\n  \"model_error\": {\"median_abs_pct\": %.1f, \"max_abs_pct\": %.1f, "
               "\"max_at\": %zu, \"within_20pct\": %d, \"rows\": %d}",
               med * 100, worst * 100, at, within, e->n);
    else
        printf("# Model error (%s) vs median: median |err| %.0f%%, max %.0f%% at %zu B, "
               "%d of %d rows within 20%%\n",
               o->model_path ? "calibrated" : "measured now", med * 100, worst * 100, at, within,
               e->n);
}

static void header(const bench_opts_t *o, int P, const strata_comm_model_t *m, strata_comm_t *c)
{
    if (o->json) return;
    printf("# strata bench %s: %d %s, algo %s, %s %s, warmup %ld iters %ld, "
           "validation %ld\n",
           strata_coll_name(o->coll), P, o->join ? "ranks of a launched job" : "local ranks",
           strata_comm_algo_name(strata_comm_algo_for(c, o->coll, (size_t)o->maxb, o->algo)),
           strata_dtype_name(o->dt), strata_op_name(o->op), o->warmup, o->iters, o->check);
    if (o->model_path)
        printf("# model: calibrated by strata probe on %s (%s): line hand-off %.3f us, shm "
               "alpha %.3f us,\n#   beta %.2f GB/s, copy curve one core, %.2f GB/s all cores, "
               "%.2f us per rank beyond %d cores (docs/probe.md)\n",
               o->calib.date, o->model_path, o->calib.line_latency * 1e6, o->calib.shm_alpha * 1e6,
               o->calib.shm_bw / 1e9, o->calib.mem_copy_all / 1e9, o->calib.per_rank * 1e6,
               o->calib.cores);
    else
        printf("# model: alpha %.3f us (flag ping-pong), copy %.2f GB/s, reduce %.2f GB/s (one "
               "core,\n#   measured now); model(us) = alpha-beta cost of the algorithm "
               "(docs/runtime.md)\n",
               m->alpha_s * 1e6, m->copy_bw / 1e9, m->reduce_bw / 1e9);
    printf("#\n#%61s%37s\n", "out-of-place", "in-place");
    printf("# %10s %12s %8s %6s %6s %9s %7s %7s %6s %9s %7s %7s %6s %9s %9s %6s\n", "size", "count",
           "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
           "#wrong", "median", "model", "err");
    printf("# %10s %12s %8s %6s %6s %9s %7s %7s %6s %9s %7s %7s %6s %9s %9s %6s\n", "(B)",
           "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "",
           "(us)", "(us)", "(%)");
}

static void print_row(const bench_opts_t *o, int P, size_t size, size_t count, const row_t *row,
                      double model, bool first)
{
    double bf = strata_coll_busbw_factor(o->coll, (uint32_t)P), a0 = (double)size / row->t[0] / 1e9,
           a1 = (double)size / row->t[1] / 1e9;
    bool rooted = o->coll == STRATA_COLL_BROADCAST || o->coll == STRATA_COLL_REDUCE;
    bool reducing = o->coll == STRATA_COLL_ALLREDUCE || o->coll == STRATA_COLL_REDUCE ||
                    o->coll == STRATA_COLL_REDUCE_SCATTER;
    if (o->json) {
        printf("%s{\"size\": %zu, \"count\": %zu, \"type\": \"%s\", \"redop\": \"%s\", "
               "\"root\": %ld, \"oop\": {\"time_us\": %.3f, \"algbw\": %.4f, \"busbw\": %.4f, "
               "\"wrong\": %ld}, \"ip\": {\"time_us\": %.3f, \"algbw\": %.4f, \"busbw\": %.4f, "
               "\"wrong\": %ld}, \"median_us\": %.3f, \"model_us\": %.3f, \"err_pct\": %.1f}",
               first ? "" : ",\n    ", size, count, strata_dtype_name(o->dt),
               reducing ? strata_op_name(o->op) : "none", rooted ? o->root : -1, row->t[0] * 1e6,
               a0, a0 * bf, row->wrong[0], row->t[1] * 1e6, a1, a1 * bf, row->wrong[1],
               row->median * 1e6, model * 1e6, model_err(model, row->median) * 100);
        return;
    }
    printf("  %10zu %12zu %8s %6s %6ld %9.2f %7.2f %7.2f %6ld %9.2f %7.2f %7.2f %6ld %9.2f %9.2f "
           "%+6.0f\n",
           size, count, strata_dtype_name(o->dt), reducing ? strata_op_name(o->op) : "none",
           rooted ? o->root : -1L, row->t[0] * 1e6, a0, a0 * bf, o->check ? row->wrong[0] : -1L,
           row->t[1] * 1e6, a1, a1 * bf, o->check ? row->wrong[1] : -1L, row->median * 1e6,
           model * 1e6, model_err(model, row->median) * 100);
}

/* ==== Ranks ==== */

static int bench_rank(void *arg)
{
    const bench_opts_t *o = arg;
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    if (strata_comm_init_env(&c, &err) != STRATA_OK) {
        fprintf(stderr, "strata bench: %s\n", err.msg);
        return 1;
    }
    int r = strata_comm_rank(c), P = strata_comm_size(c);
    size_t es = strata_dtype_size(o->dt), maxn = (size_t)o->maxb / es + (size_t)P;
    bufs_t b = {malloc(maxn * es), malloc(maxn * es)};
    if (b.send && b.recv) { /* own the pages (not the shared zero page) before timing */
        memset(b.send, 1, maxn * es);
        memset(b.recv, 0, maxn * es);
    }
    strata_comm_model_t m = {0};
    strata_status_t st =
        b.send && b.recv ? strata_comm_calibrate(c, (size_t)o->maxb, &m) : STRATA_ERR_NOMEM;
    if (r == 0 && st == STRATA_OK) header(o, P, &m, c);
    if (r == 0 && o->json)
        printf("{\"op\": \"%s\", \"ranks\": %d, \"algo\": \"%s\", \"model\": {\"alpha_us\": %.4f, "
               "\"copy_GBps\": %.3f, \"reduce_GBps\": %.3f},\n  \"rows\": [\n    ",
               strata_coll_name(o->coll), P,
               strata_comm_algo_name(strata_comm_algo_for(c, o->coll, (size_t)o->maxb, o->algo)),
               m.alpha_s * 1e6, m.copy_bw / 1e9, m.reduce_bw / 1e9);
    double busbw_sum = 0, *lap = malloc((size_t)o->iters * sizeof(double));
    err_sum_t errs = {.n = 0};
    int rows = 0;
    if (!lap) st = STRATA_ERR_NOMEM;
    long wrong = 0;
    for (double size = o->minb; size <= o->maxb && st == STRATA_OK; size *= o->factor) {
        size_t count, ns, nr, sz;
        shape(o, P, (size_t)size, &count, &ns, &nr);
        sz = (o->coll == STRATA_COLL_REDUCE_SCATTER ? ns : nr) * es;
        row_t row = {0};
        st = measure(c, o, &b, count, lap, &row);
        if (st != STRATA_OK) break;
        strata_comm_algo_t algo = strata_comm_algo_for(c, o->coll, sz, o->algo);
        double model = o->model_path ? strata_probe_predict(&o->calib, o->coll, algo, P, sz)
                                     : strata_comm_predict(&m, o->coll, algo, P, sz);
        if (errs.n < 64) {
            errs.abs[errs.n] = fabs(model_err(model, row.median));
            errs.size[errs.n++] = sz;
        }
        if (r == 0)
            print_row(o, P, sz, o->coll == STRATA_COLL_ALLGATHER ? nr : count, &row, model,
                      rows == 0);
        busbw_sum += (double)sz / row.t[0] / 1e9 * strata_coll_busbw_factor(o->coll, (uint32_t)P);
        wrong += row.wrong[0] + row.wrong[1];
        rows++;
        if (o->factor <= 1) break;
    }
    if (st != STRATA_OK)
        fprintf(stderr, "strata bench: rank %d: %s\n", r, strata_comm_errmsg(c));
    else if (r == 0 && o->json) {
        printf("\n  ],\n  \"avg_busbw\": %.4f, \"wrong\": %ld", rows ? busbw_sum / rows : 0, wrong);
        summary(o, &errs);
        printf("}\n");
    } else if (r == 0) {
        printf("# Out of bounds values : %ld %s\n# Avg bus bandwidth    : %g \n", wrong,
               wrong ? "FAILED" : "OK", rows ? busbw_sum / rows : 0);
        summary(o, &errs);
        printf("#\n");
    }
    free(b.send), free(b.recv), free(lap);
    strata_comm_destroy(c);
    return st != STRATA_OK ? 1 : wrong ? 1 : 0;
}

/* ==== Options ==== */

static int parse(int argc, char **argv, bench_opts_t *o)
{
    *o = (bench_opts_t){.n = 2,
                        .iters = 20,
                        .warmup = 5,
                        .check = 1,
                        .minb = 8,
                        .maxb = 64.0 * 1048576,
                        .factor = 2,
                        .dt = STRATA_FP32,
                        .op = STRATA_SUM};
    if (argc < 2 || argv[1][0] == '-')
        return cli_usage_error("bench", "name the collective (e.g. allreduce)");
    if (strata_coll_parse(argv[1], &o->coll) != 0 || o->coll >= STRATA_COLL_SENDRECV)
        return cli_usage_error("bench", "unknown collective '%s'", argv[1]);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
            continue;
        }
        if (strcmp(a, "--join") == 0) {
            o->join = 1;
            continue;
        }
        if (!v) return cli_usage_error("bench", "option '%s' needs a value", a);
        i++;
        int bad = 0;
        if (strcmp(a, "-n") == 0)
            bad = cli_parse_int("bench", a, v, 1, 64, &o->n);
        else if (strcmp(a, "-b") == 0)
            bad = cli_parse_size("bench", a, v, BENCH_SIZE_MAX, &o->minb);
        else if (strcmp(a, "-e") == 0)
            bad = cli_parse_size("bench", a, v, BENCH_SIZE_MAX, &o->maxb);
        else if (strcmp(a, "-f") == 0)
            bad = cli_parse_double("bench", a, v, 1, 1024, &o->factor);
        else if (strcmp(a, "-i") == 0)
            bad = cli_parse_int("bench", a, v, 1, 1000000, &o->iters);
        else if (strcmp(a, "-w") == 0)
            bad = cli_parse_int("bench", a, v, 0, 1000000, &o->warmup);
        else if (strcmp(a, "-c") == 0)
            bad = cli_parse_int("bench", a, v, 0, 1, &o->check);
        else if (strcmp(a, "-r") == 0)
            bad = cli_parse_int("bench", a, v, 0, 63, &o->root);
        else if (strcmp(a, "-d") == 0) {
            if (strata_dtype_parse(v, &o->dt))
                return cli_usage_error("bench", "unknown data type '%s'", v);
        } else if (strcmp(a, "-o") == 0) {
            if (strata_op_parse(v, &o->op))
                return cli_usage_error("bench", "unknown operator '%s'", v);
        } else if (strcmp(a, "--model") == 0) {
            strata_error_t err = {0};
            o->model_path = v;
            if (strata_probe_calib_load(v, &o->calib, &err) != STRATA_OK) {
                char msg[STRATA_ERROR_MSG_MAX + STRATA_ERROR_FILE_MAX + 32];
                fprintf(stderr, "strata bench: --model: %s\n",
                        strata_error_str(&err, msg, sizeof(msg)));
                return CLI_USAGE;
            }
        } else if (strcmp(a, "--algo") == 0) {
            if (strata_comm_algo_parse(v, &o->algo))
                return cli_usage_error("bench", "unknown algorithm '%s' (auto, shm, ring, recdbl)",
                                       v);
        } else
            return cli_usage_error("bench", "unknown option '%s'", a);
        if (bad) return CLI_USAGE;
    }
    if (o->n > 64) return cli_usage_error("bench", "-n %ld: at most 64 local ranks", o->n);
    if (o->join) return CLI_OK; /* rank count and root are the job's: checked by each call */
    if (o->root >= o->n)
        return cli_usage_error("bench", "-r %ld: root must be below -n %ld", o->root, o->n);
    if (o->minb < 1 || o->maxb < o->minb)
        return cli_usage_error("bench", "need 1 <= -b <= -e (got %g and %g)", o->minb, o->maxb);
    if ((o->algo == STRATA_COMM_RING || o->algo == STRATA_COMM_RECDBL) && o->n > 1) {
        strata_sched_params_t sp = {.coll = o->coll,
                                    .nranks = (uint32_t)o->n,
                                    .count = 1024,
                                    .elem_size = (uint32_t)strata_dtype_size(o->dt),
                                    .algo = o->algo == STRATA_COMM_RING ? STRATA_ALGO_RING
                                                                        : STRATA_ALGO_RECDBL};
        strata_error_t err = {0};
        if (strata_sched_check(&sp, &err) != STRATA_OK)
            return cli_usage_error("bench", "--algo %s: %s", strata_comm_algo_name(o->algo),
                                   err.msg);
    }
    return CLI_OK;
}

int cmd_bench(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    bench_opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc != CLI_OK) return rc;
    int code = 1;
    strata_error_t err = {0};
    if (o.join) return bench_rank(&o) ? CLI_FAIL : CLI_OK; /* one rank of a launched job */
    if (strata_launch_fn((int)o.n, bench_rank, &o, 2.0, &code, &err) != STRATA_OK)
        return cli_fail(&err);
    return code ? CLI_FAIL : CLI_OK;
}
