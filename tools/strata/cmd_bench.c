/*
 * cmd_bench.c — `strata bench OP [-P RANKS] [nccl-tests flags]`: launch
 * RANKS local ranks, time one collective over a range of sizes and print
 * nccl-tests' table (size, count, type, redop, root, time, algbw, busbw,
 * #wrong; out of place and in place; "# Avg bus bandwidth"), plus the
 * model's prediction for this host.
 *
 * The flags are nccl-tests' with their meanings (nccl-tests README and
 * common.cu's getopt table; shared/reference/nccl.md 1.2): -b/-e smallest
 * and largest size, -i increment (stepbytes), -f factor (stepfactor; a
 * factor > 1 wins over -i, as there), -n timed iterations, -w warm-up
 * iterations, -c check iterations, -d data type or all, -o reduction or
 * all, -r root, -J FILE for JSON, and the same long names (--minbytes …
 * --output_file). nccl-tests counts ranks as MPI processes × -t threads ×
 * -g GPUs; strata forks its ranks itself, so the rank count is its own
 * flag, -P/--ranks.
 *
 * Timing follows nccl-tests: per size, `warmup` calls, then `iters` calls
 * timed together on each rank; the row shows the slowest rank's mean.
 * algbw = size / time; busbw = algbw × the collective's bus factor
 * (allreduce 2(P-1)/P; reduce-scatter, allgather, alltoall (P-1)/P;
 * broadcast, reduce 1), as in nccl-tests' PERFORMANCE.md. With -c N each
 * size is also checked N times against a reference (#wrong = wrong
 * elements, summed over ranks and checks). The model column is sched's
 * cost model (strata_coll_cost: the engine as the direct schedule, ring and
 * recdbl as theirs) on this host's figures: the calibration of `strata probe
 * --save` with --model, else the quick figures strata_comm_calibrate()
 * measures now (flag ping-pong α, one-core copy and reduce bandwidth);
 * strata_probe_predict does both (docs/probe.md, docs/runtime.md). A
 * --model FILE without strata probe's figures is a cluster (a file, a preset,
 * anything strata topo reads): the column is then sched's cost of the
 * algorithm the ranks run on that cluster's machine (strata_coll_machine_from_topo,
 * what `strata coll` prints), e.g. bench/tcp/netns-1g.json for ranks run
 * with --join in bench/tcp/run.sh's namespaces.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <sched.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct bench_opts {
    strata_coll_t coll;
    long ranks, iters, warmup, check, root;
    double minb, maxb, factor, step;
    strata_dtype_t dt; /* the type and operator being run */
    strata_op_t op;
    bool all_dt, all_op; /* -d all, -o all */
    strata_comm_algo_t algo;
    int json;                   /* --json: JSON on stdout instead of the table */
    int join;                   /* --join: one rank of a job launched elsewhere */
    const char *jpath;          /* -J FILE: JSON to FILE, the table on stdout */
    FILE *jf;                   /* rank 0: where JSON goes (NULL: none) */
    long nsizes;                /* sizes per (type, operator) */
    const char *model_path;     /* --model FILE: the calibrated model of strata probe */
    strata_probe_calib_t calib; /* loaded from it */
    strata_probe_wait_t wait;   /* --wait: the model's wait regime (docs/probe.md) */
    bool cluster;               /* --model FILE is a cluster without probe figures: */
    strata_coll_machine_t mach; /* its machine */
} bench_opts_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: strata bench OP [-P RANKS] [-b 8] [-e 64M] [-f 2 | -i BYTES] [-n 20] [-w 5]\n"
            "                       [-c 1] [-d float|all] [-o sum|all] [-r 0] [-J FILE]\n"
            "                       [--algo auto|shm|ring|recdbl|rabenseifner] [--model FILE]\n"
            "                       [--json] [--wait auto|spin|yield|futex|barrier] [--join]\n\n"
            "OP: allreduce reduce_scatter allgather broadcast reduce alltoall.\n"
            "Launches RANKS local ranks and prints nccl-tests' table with the model's\n"
            "prediction for this host beside the measurement. The flags are nccl-tests':\n\n"
            "  -P, --ranks N          local ranks (processes), 1..64 (default 2); more ranks\n"
            "                         than CPUs warns (they share cores). strata's own flag:\n"
            "                         nccl-tests' ranks are MPI processes x -t x -g. Earlier\n"
            "                         strata bench took the ranks as -n; -n is now the\n"
            "                         iteration count, as in nccl-tests\n"
            "  -b, --minbytes SIZE    smallest size in bytes, K/M/G suffixes (default 8)\n"
            "  -e, --maxbytes SIZE    largest size (default 64M, at most 4G)\n"
            "  -f, --stepfactor F     multiply the size by F, 1..1024 (default 2)\n"
            "  -i, --stepbytes SIZE   add SIZE instead (default 1M); used when -f is not\n"
            "                         given or is 1 (a factor > 1 wins, as in nccl-tests)\n"
            "  -n, --iters N          timed iterations per size, 1..1000000 (default 20)\n"
            "  -w, --warmup_iters N   warm-up iterations, 0..1000000 (default 5)\n"
            "  -c, --check N          check the result N times per size, 0..1000 (default 1;\n"
            "                         0: no check, #wrong prints -1)\n"
            "  -d, --datatype T       int8 uint8 int32 uint32 int64 uint64 half bfloat16\n"
            "                         float double, or all (default float)\n"
            "  -o, --op OP            sum prod min max avg, or all (default sum)\n"
            "  -r, --root R           root of broadcast and reduce, 0..RANKS-1 (default 0)\n"
            "  -J, --output_file FILE write the results as JSON to FILE (the table still\n"
            "                         goes to stdout)\n"
            "      --json             JSON on stdout instead of the table\n"
            "      --output FILE      write what stdout would show to FILE (-o is the op)\n"
            "      --algo A           auto, shm (memory semantics), ring, recdbl or\n"
            "                         rabenseifner (the collective layer's schedules as\n"
            "                         message passing)\n"
            "      --model FILE       predict with the calibrated model in FILE, a cluster\n"
            "                         file strata probe saved (docs/probe.md; default: a\n"
            "                         quick calibration measured now); a cluster without\n"
            "                         probe figures (file or preset, as strata coll takes):\n"
            "                         sched's cost on its machine (its ranks: the job's);\n"
            "                         across hosts the runtime's choice of schedule\n"
            "                         then prices on FILE's figures too\n"
            "      --wait W           the model's wait regime when ranks outnumber cores:\n"
            "                         auto (the engine's policy), spin, yield (a process\n"
            "                         switch per wait), futex (a switch by futex per wait) or\n"
            "                         barrier (the probe's barrier cost per rank; default\n"
            "                         auto)\n"
            "      --join             instead of launching -P ranks, be one rank of a job\n"
            "                         started by mpirun, srun, torchrun or strata run\n"
            "                         (strata_comm_init_env, across hosts too; rank 0 prints)\n"
            "  -h, --help             this help\n\n"
            "err%% compares the model with the slowest rank's median out-of-place call.\n"
            "Before the first size and after the last, '# this run' gives the slowest rank's\n"
            "median barrier and time per dependent add (the host's state), beside --model's;\n"
            "with --model at the cores' rank count a second summary line gives the error\n"
            "with each row's barrier, read just before it, as the model's alpha.\n"
            "At most 1024 sizes per type and operator. Exit: 0 ok, 1 a wrong value or a\n"
            "failed rank, 2 bad option.\n");
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
        for (long k = 0; k < o->check && st == STRATA_OK; k++) { /* -c N: N checked calls */
            fill_input(o, r, P, b->send, b->recv, count, ip);
            st = call(c, o, send, b->recv, count, &co);
            wrong[0] += count_wrong(o, r, P, b->recv, count);
        }
        if (st == STRATA_OK && o->check)
            st = strata_comm_allreduce(c, wrong, wrong, 1, STRATA_INT64, STRATA_SUM, NULL);
        if (st != STRATA_OK) return st;
        row->t[ip] = t[0], row->wrong[ip] = wrong[0];
    }
    return STRATA_OK;
}

/* ==== This run's readings ==== */

/* The host's state while this run times (docs/probe.md, "The host's
 * rate"): the slowest rank's median of READ_BARRIERS barriers (the
 * probe's `barrier, 2 ranks`, the placement's reading and the small
 * calls' alpha) and the slowest rank's time per dependent add (the vCPU's
 * instruction rate, strata_probe_add_time), read before the first size
 * and after the last, so that a row's error can be set beside the state
 * it was measured in rather than a neighbouring process's. */
#define READ_BARRIERS 200
#define ROW_BARRIERS  100 /* before each row, for its alpha now (now_summary) */

typedef struct readings {
    double barrier, add; /* s; 0 = not read */
} readings_t;

/* The slowest rank's median of n barriers (lap: room for n). */
static strata_status_t barrier_now(strata_comm_t *c, double *lap, long n, double *out)
{
    strata_status_t st = strata_comm_barrier(c, NULL);
    double prev = now();
    for (long i = 0; i < n && st == STRATA_OK; i++) {
        st = strata_comm_barrier(c, NULL);
        double t = now();
        lap[i] = t - prev, prev = t;
    }
    if (st != STRATA_OK) return st;
    qsort(lap, (size_t)n, sizeof(double), cmp_double);
    double v = n % 2 ? lap[n / 2] : (lap[n / 2 - 1] + lap[n / 2]) / 2;
    st = strata_comm_allreduce(c, &v, &v, 1, STRATA_FP64, STRATA_MAX, NULL);
    if (st == STRATA_OK) *out = v;
    return st;
}

static strata_status_t read_state(strata_comm_t *c, double *lap, long nlap, readings_t *out)
{
    double b = 0, add[1] = {strata_probe_add_rate(STRATA_PROBE_ADD_CHAINS, 3)};
    strata_status_t st = barrier_now(c, lap, nlap < READ_BARRIERS ? nlap : READ_BARRIERS, &b);
    if (st == STRATA_OK) st = strata_comm_allreduce(c, add, add, 1, STRATA_FP64, STRATA_MAX, NULL);
    if (st == STRATA_OK) *out = (readings_t){b, add[0]};
    return st;
}

static void print_state(const bench_opts_t *o, int P, const char *when, const readings_t *r)
{
    if (o->json || !(r->barrier > 0)) return;
    printf("# this run %s: barrier %.3f us, %.3f ns per dependent add (slowest rank)", when,
           r->barrier * 1e6, r->add * 1e9);
    /* the calibration's barrier beside it only at the ranks it was read at */
    if (o->model_path && !o->cluster && o->calib.barrier > 0 && P == o->calib.barrier_ranks)
        printf("; the calibration's: barrier %.3f us", o->calib.barrier * 1e6);
    if (o->model_path && !o->cluster && o->calib.add_time > 0)
        printf(", %.3f ns per add", o->calib.add_time * 1e9);
    printf("\n");
}

/* ==== Output ==== */

/* Relative error of the model against the measured median. */
static double model_err(double model, double measured)
{
    return measured > 0 ? (model - measured) / measured : 0;
}

/* What the rows add up to over every type and operator: the average busbw
 * (the mean over the out-of-place rows; nccl-tests averages both), the wrong
 * elements, and the model's error per row for the summary (median and
 * largest |error|, and how many rows lie within 20 %, bench/README.md's
 * target). */
typedef struct totals {
    double busbw_sum;
    long wrong;
    int rows, cap;
    double *abs;
    size_t *size;
    /* ranks outnumbering cores, calibrated: each row's |error| in every
     * wait regime (rows x N_REGIMES; NULL otherwise), for the summary */
    double *regime_abs;
    /* calibrated at the cores' ranks: each row's |error| with the row's
     * own barrier read just before it as the model's alpha (NULL: not) */
    double *now_abs;
} totals_t;

/* The regimes the summary compares (docs/probe.md, "The wait regime"). */
static const strata_probe_wait_t regimes[] = {STRATA_PROBE_WAIT_YIELD, STRATA_PROBE_WAIT_FUTEX,
                                              STRATA_PROBE_WAIT_BARRIER};
#define N_REGIMES (sizeof(regimes) / sizeof(regimes[0]))

/* Median of the n values at v[0], v[stride], ... */
static double median_of(const double *v, int n, size_t stride)
{
    double *sorted = malloc((size_t)n * sizeof(double));
    if (!sorted || n == 0) return free(sorted), 0;
    for (int i = 0; i < n; i++)
        sorted[i] = v[(size_t)i * stride];
    qsort(sorted, (size_t)n, sizeof(double), cmp_double);
    double med = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    free(sorted);
    return med;
}

/* One line: the model's median |error| in each wait regime. */
static void regime_summary(const bench_opts_t *o, const totals_t *e, int P)
{
    if (!e->regime_abs || o->json || e->rows == 0) return;
    printf("# Model error by wait regime, %d ranks on %d cores (median |err|):", P, o->calib.cores);
    for (size_t w = 0; w < N_REGIMES; w++) {
        if (regimes[w] == STRATA_PROBE_WAIT_FUTEX && !(o->calib.futex_switch > 0)) continue;
        printf(" %s %.0f%%", strata_probe_wait_name(regimes[w]),
               median_of(e->regime_abs + w, e->rows, N_REGIMES) * 100);
    }
    printf("; the column: %s\n", strata_probe_wait_name(strata_probe_wait_of(&o->calib, P)));
}

static void summary(const bench_opts_t *o, const totals_t *e)
{
    if (e->rows == 0) return;
    double worst = 0;
    size_t at = 0;
    int within = 0;
    for (int i = 0; i < e->rows; i++) {
        within += e->abs[i] <= 0.20;
        if (e->abs[i] >= worst) worst = e->abs[i], at = e->size[i];
    }
    int n = e->rows;
    double med = median_of(e->abs, n, 1);
    if (o->jf)
        fprintf(o->jf,
                ",\n  \"model_error\": {\"median_abs\": %.3f, \"max_abs\": %.3f, "
                "\"max_at_B\": %zu, \"within_20_percent\": %d, \"rows\": %d}",
                med, worst, at, within, n);
    if (!o->json)
        printf("# Model error (%s) vs median: median |err| %.0f%%, max %.0f%% at %zu B, "
               "%d of %d rows within 20%%\n",
               o->cluster      ? "cluster"
               : o->model_path ? "calibrated"
                               : "measured now",
               med * 100, worst * 100, at, within, n);
}

static const char *dtype_label(const bench_opts_t *o)
{
    return o->all_dt ? "all types" : strata_dtype_name(o->dt);
}

static const char *op_label(const bench_opts_t *o)
{
    return o->all_op ? "all ops" : strata_op_name(o->op);
}

static void header(const bench_opts_t *o, int P, const strata_comm_model_t *m, strata_comm_t *c)
{
    strata_comm_algo_t algo = strata_comm_algo_for(c, o->coll, (size_t)o->maxb, o->algo);
    if (o->jf)
        fprintf(o->jf,
                "{\"schema_version\": %d, \"op\": \"%s\", \"ranks\": %d, \"algo\": \"%s\", "
                "\"datatype\": \"%s\", \"redop\": \"%s\", \"iters\": %ld, \"warmup_iters\": %ld, "
                "\"check\": %ld,\n"
                "  \"model\": {\"alpha_s\": %.6g, \"copy_Bps\": %.6g, \"reduce_Bps\": %.6g},\n"
                "  \"rows\": [\n    ",
                STRATA_JSON_SCHEMA_VERSION, strata_coll_name(o->coll), P,
                strata_comm_algo_name(algo), o->all_dt ? "all" : strata_dtype_name(o->dt),
                o->all_op ? "all" : strata_op_name(o->op), o->iters, o->warmup, o->check,
                m->alpha_s, m->copy_bw, m->reduce_bw);
    if (o->json) return;
    printf("# strata bench %s: %d %s, algo %s, %s %s, ", strata_coll_name(o->coll), P,
           o->join ? "ranks of a launched job" : "local ranks", strata_comm_algo_name(algo),
           dtype_label(o), op_label(o));
    if (o->factor > 1)
        printf("step: %g(factor), ", o->factor);
    else
        printf("step: %.0f(bytes), ", o->step);
    printf("warmup iters: %ld iters: %ld validation: %ld\n", o->warmup, o->iters, o->check);
    if (o->cluster && o->mach.servers > 1)
        printf("# model: sched's cost model on the cluster %s: %u ranks = %u servers x %u, "
               "network %s\n#   %.4f GB/s per NIC, latency %.1f us; model(us) = strata coll's "
               "time of the algorithm run\n",
               o->model_path, o->mach.nranks, o->mach.servers, o->mach.per_server,
               o->mach.inter_kind, o->mach.bw_nic / 1e9, o->mach.lat_inter * 1e6);
    if (o->cluster && o->mach.servers > 1 && o->mach.per_server > 1)
        printf("# model: the schedule run: flat or two-level as the runtime chooses on this "
               "cluster\n");
    else if (o->cluster)
        printf("# model: sched's cost model on the cluster %s: %u ranks on one server (%s); "
               "model(us) =\n#   strata coll's time of the algorithm run\n",
               o->model_path, o->mach.nranks, o->mach.intra_kind);
    else if (o->model_path)
        printf("# model: calibrated by strata probe on %s (%s): line hand-off %.3f us, shm "
               "alpha %.3f us,\n#   beta %.2f GB/s, copy curve one core, %.2f GB/s all cores; "
               "%d ranks on %d cores wait\n#   in the %s regime, %.2f us a wait "
               "(docs/probe.md)\n",
               o->calib.date, o->model_path, o->calib.line_latency * 1e6, o->calib.shm_alpha * 1e6,
               o->calib.shm_bw / 1e9, o->calib.mem_copy_all / 1e9, P, o->calib.cores,
               strata_probe_wait_name(strata_probe_wait_of(&o->calib, P)),
               strata_probe_wait_cost(&o->calib, P) * 1e6);
    else
        printf("# model: alpha %.3f us (flag ping-pong), copy %.2f GB/s, reduce %.2f GB/s (one "
               "core,\n#   measured now); model(us) = sched's cost of the algorithm "
               "(docs/runtime.md)\n",
               m->alpha_s * 1e6, m->copy_bw / 1e9, m->reduce_bw / 1e9);
    if (o->model_path && !o->cluster && o->calib.stream_from > 0)
        printf("# model: output stores streamed from %.0f B, as STRATA_NT_THRESHOLD tells the "
               "engine\n",
               o->calib.stream_from);
    else if (o->model_path && !o->cluster)
        printf("# model: output stores priced plain and streamed at each size, the cheaper "
               "taken%s\n",
               strata_probe_write_nt_bw_at(&o->calib, 1 << 30, 1) > 0
                   ? ""
                   : " (this file has no streaming curve: its write curve alone)");
    if (o->model_path && !o->cluster) {
        if (o->calib.flat_work > 0)
            printf("# model: the flat call's own work (57 B - 2 KiB) %.0f ns, timed on one rank\n",
                   o->calib.flat_work * 1e9);
        else
            printf("# model: the flat call's own work is not in this file (probed before it, or "
                   "not measured): not priced\n");
    }
    if (o->model_path)
        printf("# choice across hosts priced on: %s\n", strata_comm_hosts_machine(c, NULL));
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
    /* nccl-tests' -J row, in nccl-tests' own keys and units so its readers
     * read ours: size, count, out_of_place/in_place with time (us), alg_bw
     * and bus_bw (GB/s) and the wrong count; then strata's median and
     * model in strata's units (s; err a fraction; docs/formats.md). */
    if (o->jf)
        fprintf(o->jf,
                "%s{\"size\": %zu, \"count\": %zu, \"type\": \"%s\", \"redop\": \"%s\", "
                "\"root\": %ld, \"out_of_place\": {\"time\": %.3f, \"alg_bw\": %.4f, "
                "\"bus_bw\": %.4f, \"wrong\": %ld}, \"in_place\": {\"time\": %.3f, "
                "\"alg_bw\": %.4f, \"bus_bw\": %.4f, \"wrong\": %ld}, \"median_s\": %.6g, "
                "\"model_s\": %.6g, \"err\": %.3f}",
                first ? "" : ",\n    ", size, count, strata_dtype_name(o->dt),
                reducing ? strata_op_name(o->op) : "none", rooted ? o->root : -1, row->t[0] * 1e6,
                a0, a0 * bf, o->check ? row->wrong[0] : -1L, row->t[1] * 1e6, a1, a1 * bf,
                o->check ? row->wrong[1] : -1L, row->median, model, model_err(model, row->median));
    if (o->json) return;
    printf("  %10zu %12zu %8s %6s %6ld %9.2f %7.2f %7.2f %6ld %9.2f %7.2f %7.2f %6ld %9.2f %9.2f "
           "%+6.0f\n",
           size, count, strata_dtype_name(o->dt), reducing ? strata_op_name(o->op) : "none",
           rooted ? o->root : -1L, row->t[0] * 1e6, a0, a0 * bf, o->check ? row->wrong[0] : -1L,
           row->t[1] * 1e6, a1, a1 * bf, o->check ? row->wrong[1] : -1L, row->median * 1e6,
           model * 1e6, model_err(model, row->median) * 100);
}

/* One line: the model's error with each row's own barrier as alpha. */
static void now_summary(const bench_opts_t *o, const totals_t *e)
{
    if (!e->now_abs || o->json || e->rows == 0) return;
    int within = 0;
    for (int i = 0; i < e->rows; i++)
        within += e->now_abs[i] <= 0.20;
    printf("# Model error with each row's alpha read just before it (the slowest rank's median "
           "of %d barriers, not the file's): median |err| %.0f%%, %d of %d rows within 20%%\n",
           ROW_BARRIERS, median_of(e->now_abs, e->rows, 1) * 100, within, e->rows);
}

static void footer(const bench_opts_t *o, const totals_t *t, int P)
{
    double avg = t->rows ? t->busbw_sum / t->rows : 0;
    if (o->jf)
        fprintf(o->jf, "\n  ],\n  \"average_bus_bandwidth\": %.4f, \"wrong\": %ld", avg, t->wrong);
    if (!o->json)
        printf("# Out of bounds values : %ld %s\n# Avg bus bandwidth    : %g \n", t->wrong,
               t->wrong ? "FAILED" : "OK", avg);
    summary(o, t);
    now_summary(o, t);
    regime_summary(o, t, P);
    if (o->jf) fprintf(o->jf, "}\n");
    if (!o->json) printf("#\n");
}

/* ==== Ranks ==== */

static double next_size(const bench_opts_t *o, double size)
{
    return o->factor > 1 ? size * o->factor : size + o->step;
}

/* sched's cost of the schedule the ranks run, on the --model cluster: the
 * engine as the direct schedule, the message-passing ones as theirs, and,
 * where the hosts hold several ranks each, the two-level schedule when the
 * runtime's choice takes it (strata_comm_schedule_for: the runtime prices
 * on this cluster's machine, given to it by hosts_figures). 0 when the
 * model has no price for it. */
static double cluster_predict(const bench_opts_t *o, strata_comm_t *c, size_t bytes)
{
    strata_algo_t a = strata_comm_schedule_for(c, o->coll, bytes, o->algo);
    strata_coll_cost_t k;
    if (strata_coll_cost(&o->mach, o->coll, a, (double)bytes, &k, NULL) != STRATA_OK) return 0;
    return k.time;
}

/* The runtime's choice across hosts prices on the --model figures: the
 * cluster's machine, or one made of strata probe's measured shared-memory
 * and TCP α/β (a message inside a host, between hosts; reductions at the
 * one-core rate of the largest measured size). Collective. Without
 * --model, or a probe file without TCP figures, the runtime keeps its
 * labelled defaults (the header prints which). */
static strata_status_t hosts_figures(const bench_opts_t *o, strata_comm_t *c)
{
    char src[128];
    if (o->cluster) {
        snprintf(src, sizeof src, "the cluster %s", o->model_path);
        return strata_comm_set_hosts_machine(c, &o->mach, src);
    }
    const strata_probe_calib_t *k = &o->calib;
    if (!o->model_path || !(k->tcp_alpha > 0 && k->tcp_bw > 0 && k->shm_alpha > 0 && k->shm_bw > 0))
        return STRATA_OK;
    strata_coll_machine_t m = {.nics = 1,
                               .bw_intra = k->shm_bw,
                               .lat_intra = k->shm_alpha,
                               .bw_nic = k->tcp_bw,
                               .lat_inter = k->tcp_alpha,
                               .eta_intra = 1,
                               .reduce_bw = strata_probe_reduce_bw(k, 1e12)};
    /* the processors the ranks share come from the communicator (its
     * kernels' CPUs, the default machine's `cores`); each wait beyond them
     * costs the probe's regime (strata_probe_wait_cost; a rank waiting on
     * its sockets yields first), spread over the ranks beyond, as
     * strata_probe_machine does */
    strata_coll_machine_t d;
    strata_comm_hosts_machine(c, &d);
    int P = strata_comm_size(c);
    m.cores = d.cores;
    if (k->cores > 0 && P > k->cores) m.lat_oversub = strata_probe_wait_cost(k, P) / (P - k->cores);
    snprintf(src, sizeof src,
             "strata probe's figures in %s (shm %.2f us, %.2f GB/s; TCP %.2f us, %.2f GB/s)",
             o->model_path, k->shm_alpha * 1e6, k->shm_bw / 1e9, k->tcp_alpha * 1e6,
             k->tcp_bw / 1e9);
    return strata_comm_set_hosts_machine(c, &m, src);
}

/* The --model cluster must hold this job: as many ranks, and several hosts
 * only when the ranks are on several (the engine runs inside one). Rank 0
 * says why not; every rank returns the same. */
static strata_status_t check_cluster(const bench_opts_t *o, strata_comm_t *c)
{
    int P = strata_comm_size(c);
    const char *why = NULL;
    char buf[160];
    if (o->mach.nranks != (uint32_t)P) {
        snprintf(buf, sizeof(buf), "the cluster has %u ranks, this job %d", o->mach.nranks, P);
        why = buf;
    } else if (o->mach.servers > 1 &&
               strata_comm_algo_for(c, o->coll, (size_t)o->maxb, o->algo) == STRATA_COMM_SHM)
        why = "the cluster has several servers but this job's ranks share one host (run one "
              "rank per host with --join)";
    if (!why) return STRATA_OK;
    if (strata_comm_rank(c) == 0)
        fprintf(stderr, "strata bench: --model %s: %s\n", o->model_path, why);
    return STRATA_ERR_IO; /* said why */
}

/* STRATA_NT_THRESHOLD as the engine reads it (comm/copy.c): the output
 * size from which it was told to stream its stores, which the model then
 * follows; 0 when unset (the engine's own choice, and the model's). */
static double nt_threshold(void)
{
    const char *env = getenv("STRATA_NT_THRESHOLD");
    unsigned long long v = env && *env ? strtoull(env, NULL, 10) : 0;
    return (double)v;
}

/* Every size of one type and operator, rows appended to t. */
static strata_status_t run_sizes(strata_comm_t *c, const bench_opts_t *o, bufs_t *b,
                                 const strata_comm_model_t *m, double *lap, totals_t *t)
{
    int r = strata_comm_rank(c), P = strata_comm_size(c);
    size_t es = strata_dtype_size(o->dt);
    for (double size = o->minb; size <= o->maxb; size = next_size(o, size)) {
        size_t count, ns, nr, sz;
        shape(o, P, (size_t)size, &count, &ns, &nr);
        sz = (o->coll == STRATA_COLL_REDUCE_SCATTER ? ns : nr) * es;
        row_t row = {0};
        double alpha_now = 0; /* the barrier now, before the row (t->now_abs) */
        strata_status_t st = t->now_abs ? barrier_now(c, lap, ROW_BARRIERS, &alpha_now) : STRATA_OK;
        if (st == STRATA_OK) st = measure(c, o, b, count, lap, &row);
        if (st != STRATA_OK) return st;
        strata_comm_algo_t algo = strata_comm_algo_for(c, o->coll, sz, o->algo);
        double model = o->cluster ? cluster_predict(o, c, sz)
                                  : strata_probe_predict(&o->calib, o->coll, algo, P, sz);
        if (t->rows < t->cap) {
            t->abs[t->rows] = fabs(model_err(model, row.median));
            t->size[t->rows] = sz;
            if (t->now_abs) {
                strata_probe_calib_t k = o->calib;
                k.barrier = alpha_now;
                t->now_abs[t->rows] =
                    fabs(model_err(strata_probe_predict(&k, o->coll, algo, P, sz), row.median));
            }
            for (size_t w = 0; t->regime_abs && w < N_REGIMES; w++) {
                strata_probe_calib_t k = o->calib;
                k.wait = regimes[w];
                t->regime_abs[(size_t)t->rows * N_REGIMES + w] =
                    fabs(model_err(strata_probe_predict(&k, o->coll, algo, P, sz), row.median));
            }
        }
        if (r == 0)
            print_row(o, P, sz, o->coll == STRATA_COLL_ALLGATHER ? nr : count, &row, model,
                      t->rows == 0);
        t->busbw_sum +=
            (double)sz / row.t[0] / 1e9 * strata_coll_busbw_factor(o->coll, (uint32_t)P);
        t->wrong += row.wrong[0] + row.wrong[1];
        t->rows++;
    }
    return STRATA_OK;
}

static bool reducing_coll(strata_coll_t coll)
{
    return coll == STRATA_COLL_ALLREDUCE || coll == STRATA_COLL_REDUCE ||
           coll == STRATA_COLL_REDUCE_SCATTER;
}

/* -d all and -o all: every type, every operator (operators only for the
 * reducing collectives), one table. */
static strata_status_t run_all(strata_comm_t *c, const bench_opts_t *o, bufs_t *b,
                               const strata_comm_model_t *m, double *lap, totals_t *t)
{
    int ndt = o->all_dt ? STRATA_DTYPE_COUNT : 1;
    int nop = o->all_op && reducing_coll(o->coll) ? STRATA_OP_COUNT : 1;
    strata_status_t st = STRATA_OK;
    for (int d = 0; d < ndt && st == STRATA_OK; d++)
        for (int k = 0; k < nop && st == STRATA_OK; k++) {
            bench_opts_t cur = *o;
            if (o->all_dt) cur.dt = (strata_dtype_t)d;
            if (o->all_op) cur.op = (strata_op_t)k;
            st = run_sizes(c, &cur, b, m, lap, t);
        }
    return st;
}

/* CPUs this process may run on (the ranks inherit its affinity). */
static int cpus(void)
{
    cpu_set_t set;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) < n) n = CPU_COUNT(&set);
    return n > 0 ? (int)n : 1;
}

static int bench_rank(void *arg)
{
    bench_opts_t o = *(const bench_opts_t *)arg;
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    if (strata_comm_init_env(&c, &err) != STRATA_OK) {
        fprintf(stderr, "strata bench: %s\n", err.msg);
        return 1;
    }
    int r = strata_comm_rank(c), P = strata_comm_size(c);
    /* Every type: -e bytes plus one element per rank of the widest (8 B). */
    size_t bytes = (size_t)o.maxb + (size_t)P * 8;
    bufs_t b = {malloc(bytes), malloc(bytes)};
    if (b.send && b.recv) { /* own the pages (not the shared zero page) before timing */
        memset(b.send, 1, bytes);
        memset(b.recv, 0, bytes);
    }
    int nruns = (o.all_dt ? STRATA_DTYPE_COUNT : 1) * (o.all_op ? STRATA_OP_COUNT : 1);
    totals_t t = {.cap = (int)o.nsizes * nruns};
    t.abs = malloc((size_t)t.cap * sizeof(double));
    t.size = malloc((size_t)t.cap * sizeof(size_t));
    /* every rank decides alike, so a failed allocation fails every rank's
     * check below rather than leaving one rank without the row barriers */
    /* the regime's and the row barriers' summaries and this run's
     * readings are printed in the text alone: --json (on every rank's
     * command line alike) pays for none of them */
    bool text = !o.json;
    bool want_regime = text && o.model_path && !o.cluster && P > o.calib.cores;
    bool want_now =
        text && o.model_path && !o.cluster && o.calib.barrier > 0 && P == o.calib.barrier_ranks;
    if (want_regime) t.regime_abs = malloc((size_t)t.cap * N_REGIMES * sizeof(double));
    if (want_now) t.now_abs = malloc((size_t)t.cap * sizeof(double));
    long nlap = o.iters > READ_BARRIERS ? o.iters : READ_BARRIERS; /* laps, and read_state's */
    double *lap = malloc((size_t)nlap * sizeof(double));
    strata_comm_model_t m = {0};
    strata_status_t st = b.send && b.recv && lap && t.abs && t.size &&
                                 (!want_regime || t.regime_abs) && (!want_now || t.now_abs)
                             ? strata_comm_calibrate(c, (size_t)o.maxb, &m)
                             : STRATA_ERR_NOMEM;
    o.jf = NULL;
    if (st == STRATA_OK && o.cluster) st = check_cluster(&o, c);
    if (st == STRATA_OK) st = hosts_figures(&o, c);
    if (r == 0 && st == STRATA_OK && (o.json || o.jpath)) {
        o.jf = o.json ? stdout : fopen(o.jpath, "w");
        if (!o.jf) {
            fprintf(stderr, "strata bench: -J: cannot write '%s'\n", o.jpath);
            st = STRATA_ERR_IO;
        }
    }
    /* Say a failure now: the agreement below is a call of its own and
     * would leave the communicator's message empty. */
    if (st != STRATA_OK && st != STRATA_ERR_IO) {
        fprintf(stderr, "strata bench: rank %d: %s\n", r, strata_comm_errmsg(c));
        st = STRATA_ERR_IO; /* said why */
    }
    /* Every rank learns whether rank 0 could open the JSON file, so none
     * waits in a collective rank 0 never joins. */
    long failed[1] = {st != STRATA_OK};
    strata_status_t agree =
        strata_comm_allreduce(c, failed, failed, 1, STRATA_INT64, STRATA_MAX, NULL);
    if (st == STRATA_OK && agree != STRATA_OK) st = agree;
    if (st == STRATA_OK && failed[0]) st = STRATA_ERR_IO; /* another rank's; it said why */
    if (st == STRATA_OK && !o.model_path)
        strata_probe_calib_quick(m.alpha_s, m.copy_bw, m.reduce_bw, cpus(), &o.calib);
    o.calib.wait = o.wait;
    o.calib.stream_from = nt_threshold();
    if (r == 0 && st == STRATA_OK) header(&o, P, &m, c);
    readings_t before = {0}, after = {0};
    if (st == STRATA_OK && P > 1 && text) st = read_state(c, lap, nlap, &before);
    if (r == 0 && st == STRATA_OK) print_state(&o, P, "before the sizes", &before);
    if (st == STRATA_OK) st = run_all(c, &o, &b, &m, lap, &t);
    if (st == STRATA_OK && P > 1 && text) st = read_state(c, lap, nlap, &after);
    if (r == 0 && st == STRATA_OK) print_state(&o, P, "after the sizes", &after);
    if (st != STRATA_OK && st != STRATA_ERR_IO)
        fprintf(stderr, "strata bench: rank %d: %s\n", r, strata_comm_errmsg(c));
    else if (r == 0 && st == STRATA_OK)
        footer(&o, &t, P);
    if (o.jf && o.jf != stdout && fclose(o.jf) != 0) {
        fprintf(stderr, "strata bench: -J: cannot write '%s'\n", o.jpath);
        st = STRATA_ERR_IO;
    }
    free(b.send), free(b.recv), free(lap), free(t.abs), free(t.size), free(t.regime_abs),
        free(t.now_abs);
    strata_comm_destroy(c);
    return st != STRATA_OK ? 1 : t.wrong ? 1 : 0;
}

/* ==== Options ==== */

/* nccl-tests' flags (short and long, common.cu's getopt table), strata's
 * own after them. A value follows as the next word, joined to a short flag
 * (-b8) or after '=' on a long one (--minbytes=8). */
typedef enum {
    BK_RANKS,
    BK_MINB,
    BK_MAXB,
    BK_STEP,
    BK_FACTOR,
    BK_ITERS,
    BK_WARMUP,
    BK_CHECK,
    BK_DTYPE,
    BK_OP,
    BK_ROOT,
    BK_JFILE,
    BK_ALGO,
    BK_MODEL,
    BK_WAIT,
    BK_JSON,
    BK_JOIN
} bench_key_t;

static const struct bench_flag {
    char s;
    const char *l;
    bench_key_t k;
} bench_flags[] = {
    {'P', "ranks", BK_RANKS},
    {'b', "minbytes", BK_MINB},
    {'e', "maxbytes", BK_MAXB},
    {'i', "stepbytes", BK_STEP},
    {'f', "stepfactor", BK_FACTOR},
    {'n', "iters", BK_ITERS},
    {'w', "warmup_iters", BK_WARMUP},
    {'c', "check", BK_CHECK},
    {'d', "datatype", BK_DTYPE},
    {'o', "op", BK_OP},
    {'r', "root", BK_ROOT},
    {'J', "output_file", BK_JFILE},
    {0, "algo", BK_ALGO},
    {0, "model", BK_MODEL},
    {0, "wait", BK_WAIT},
    {0, "json", BK_JSON},
    {0, "join", BK_JOIN},
};
#define BENCH_NFLAGS    (sizeof(bench_flags) / sizeof(bench_flags[0]))
#define BENCH_SIZES_MAX 1024 /* sizes per type and operator */

/* The flag of argv[*i] and its value (NULL for --json, --join); NULL flag after
 * printing a usage error. */
static const struct bench_flag *flag_of(int argc, char **argv, int *i, const char **v)
{
    const char *a = argv[*i], *eq = NULL;
    const struct bench_flag *f = NULL;
    size_t n = 0;
    if (a[0] == '-' && a[1] == '-') {
        eq = strchr(a, '=');
        n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    }
    for (size_t k = 0; k < BENCH_NFLAGS && !f; k++) {
        const struct bench_flag *g = &bench_flags[k];
        if (n ? strlen(g->l) == n && !strncmp(a + 2, g->l, n) : g->s && a[1] == g->s && a[0] == '-')
            f = g;
    }
    if (!f || (!n && a[1] == '-')) {
        cli_unknown_option("bench", a);
        return NULL;
    }
    *v = NULL;
    if (f->k == BK_JSON || f->k == BK_JOIN) {
        if (eq || (!n && a[2])) {
            cli_usage_error("bench", "--%s takes no value", f->l);
            return NULL;
        }
        return f;
    }
    if (n && eq)
        *v = eq + 1;
    else if (!n && a[2])
        *v = a + 2;
    else if (*i + 1 < argc)
        *v = argv[++*i];
    else {
        cli_usage_error("bench", "option '%s' needs a value", a);
        return NULL;
    }
    return f;
}

/* The cluster file or preset v as sched's machine, into *mach_p. */
static strata_status_t model_cluster(const char *v, strata_coll_machine_t *mach_p,
                                     strata_error_t *err)
{
    strata_link_catalog_t *cat = NULL;
    strata_topo_t *t = NULL;
    strata_status_t st = strata_link_catalog_load(NULL, &cat, err);
    if (st == STRATA_OK) st = strata_topo_load_spec(v, cat, &t, err);
    if (st == STRATA_OK) st = strata_coll_machine_from_topo(t, cat, mach_p, err);
    strata_topo_destroy(t);
    strata_link_catalog_destroy(cat);
    return st;
}

static int parse_model(bench_opts_t *o, const char *v)
{
    strata_error_t err = {0};
    o->model_path = v;
    strata_status_t st = strata_probe_calib_load(v, &o->calib, &err);
    /* probe figures: the rest of the file must be a good cluster too, as
     * `strata coll` reads it (a negative link alpha or a bad device count
     * passed here before) */
    strata_coll_machine_t unused;
    if (st == STRATA_OK && (st = model_cluster(v, &unused, &err)) == STRATA_OK) return 0;
    /* no probe figures, or no such file (a preset name): a cluster */
    if (st == STRATA_ERR_NOT_FOUND || st == STRATA_ERR_IO) {
        strata_error_clear(&err);
        o->cluster = (st = model_cluster(v, &o->mach, &err)) == STRATA_OK;
        if (o->cluster) return 0;
    }
    char msg[STRATA_ERROR_MSG_MAX + STRATA_ERROR_FILE_MAX + 32];
    fprintf(stderr, "strata bench: --model: %s\n", strata_error_str(&err, msg, sizeof(msg)));
    return -1;
}

/* One flag's value into o; -1 after printing a usage error. */
static int parse_value(bench_opts_t *o, const struct bench_flag *f, const char *a, const char *v,
                       bool *have_factor, bool *have_step)
{
    switch (f->k) {
    case BK_RANKS:
        return cli_parse_int("bench", a, v, 1, 64, &o->ranks);
    case BK_MINB:
        return cli_parse_size("bench", a, v, BENCH_SIZE_MAX, &o->minb);
    case BK_MAXB:
        return cli_parse_size("bench", a, v, BENCH_SIZE_MAX, &o->maxb);
    case BK_STEP:
        *have_step = true;
        if (cli_parse_size("bench", a, v, BENCH_SIZE_MAX, &o->step)) return -1;
        return o->step >= 1 ? 0 : (cli_usage_error("bench", "%s must be at least 1 byte", a), -1);
    case BK_FACTOR:
        *have_factor = true;
        return cli_parse_double("bench", a, v, 1, 1024, &o->factor);
    case BK_ITERS:
        return cli_parse_int("bench", a, v, 1, 1000000, &o->iters);
    case BK_WARMUP:
        return cli_parse_int("bench", a, v, 0, 1000000, &o->warmup);
    case BK_CHECK:
        return cli_parse_int("bench", a, v, 0, 1000, &o->check);
    case BK_ROOT:
        return cli_parse_int("bench", a, v, 0, 63, &o->root);
    case BK_JFILE:
        o->jpath = v;
        return 0;
    case BK_MODEL:
        return parse_model(o, v);
    case BK_WAIT:
        if (strata_probe_wait_parse(v, &o->wait)) return 0;
        return cli_usage_error(
                   "bench", "%s: unknown wait regime '%s' (auto spin yield futex barrier)", a, v),
               -1;
    case BK_DTYPE:
        if ((o->all_dt = !strcmp(v, "all")) || !strata_dtype_parse(v, &o->dt)) return 0;
        return cli_usage_error("bench",
                               "%s: unknown data type '%s' (int8 uint8 int32 uint32 "
                               "int64 uint64 half bfloat16 float double, or all)",
                               a, v),
               -1;
    case BK_OP:
        if ((o->all_op = !strcmp(v, "all")) || !strata_op_parse(v, &o->op)) return 0;
        return cli_usage_error("bench", "%s: unknown operator '%s' (sum prod min max avg, or all)",
                               a, v),
               -1;
    case BK_ALGO:
        if (!strata_comm_algo_parse(v, &o->algo)) return 0;
        return cli_usage_error("bench", "unknown algorithm '%s' (auto, shm, ring, recdbl)", v), -1;
    case BK_JOIN:
        o->join = 1;
        return 0;
    default:
        o->json = 1;
        return 0;
    }
}

/* How many sizes -b/-e/-f/-i give (nccl-tests' loop), capped just above
 * BENCH_SIZES_MAX so an increment of a few bytes over gigabytes is refused
 * before it runs for days. */
static long count_sizes(const bench_opts_t *o)
{
    long n = 0;
    for (double s = o->minb; s <= o->maxb && n <= BENCH_SIZES_MAX; s = next_size(o, s))
        n++;
    return n;
}

static int check_sched(const bench_opts_t *o)
{
    if ((o->algo != STRATA_COMM_RING && o->algo != STRATA_COMM_RECDBL &&
         o->algo != STRATA_COMM_RABENSEIFNER) ||
        o->ranks < 2 || o->join)
        return 0; /* a joined job's rank count is known only inside it */
    strata_sched_params_t sp = {.coll = o->coll,
                                .nranks = (uint32_t)o->ranks,
                                .count = 1024,
                                .elem_size = (uint32_t)strata_dtype_size(o->dt),
                                .algo = o->algo == STRATA_COMM_RING     ? STRATA_ALGO_RING
                                        : o->algo == STRATA_COMM_RECDBL ? STRATA_ALGO_RECDBL
                                                                        : STRATA_ALGO_RABENSEIFNER};
    strata_error_t err = {0};
    if (strata_sched_check(&sp, &err) == STRATA_OK) return 0;
    return cli_usage_error("bench", "--algo %s: %s", strata_comm_algo_name(o->algo), err.msg), -1;
}

/* Cross-flag checks once every flag is read. */
static int check_opts(bench_opts_t *o, bool have_factor, bool have_step)
{
    if (have_step && !have_factor) o->factor = 1; /* -i alone: increments */
    /* with --join the rank count and root are the job's: each call checks them */
    if (!o->join && o->root >= o->ranks)
        return cli_usage_error("bench", "-r %ld: root must be below -P %ld", o->root, o->ranks);
    if (o->minb < 1 || o->maxb < o->minb)
        return cli_usage_error("bench", "need 1 <= -b <= -e (got %g and %g)", o->minb, o->maxb);
    if (o->json && o->jpath)
        return cli_usage_error("bench", "give --json (stdout) or -J FILE, not both");
    if (o->wait != STRATA_PROBE_WAIT_AUTO && (!o->model_path || o->cluster))
        return cli_usage_error("bench",
                               "--wait %s prices the calibrated model: give --model FILE saved "
                               "by strata probe --save",
                               strata_probe_wait_name(o->wait));
    if (o->wait == STRATA_PROBE_WAIT_FUTEX && !(o->calib.futex_switch > 0))
        return cli_usage_error("bench",
                               "--wait futex: %s has no futex switch (\"futex_switch_s\"; saved by "
                               "an older strata probe)",
                               o->model_path);
    if ((o->nsizes = count_sizes(o)) > BENCH_SIZES_MAX)
        return cli_usage_error("bench",
                               "-b %.0f -e %.0f with %s %g gives more than %d sizes (raise -i or "
                               "use -f)",
                               o->minb, o->maxb, o->factor > 1 ? "-f" : "-i",
                               o->factor > 1 ? o->factor : o->step, BENCH_SIZES_MAX);
    if (o->jpath) { /* fail now, not after the run */
        FILE *f = fopen(o->jpath, "w");
        if (!f) return cli_usage_error("bench", "-J: cannot write '%s'", o->jpath);
        fclose(f);
    }
    return check_sched(o) ? CLI_USAGE : CLI_OK;
}

static int parse(int argc, char **argv, bench_opts_t *o)
{
    *o = (bench_opts_t){.ranks = 2,
                        .iters = 20,
                        .warmup = 5,
                        .check = 1,
                        .minb = 8,
                        .maxb = 64.0 * 1048576,
                        .factor = 2,
                        .step = 1048576,
                        .dt = STRATA_FP32,
                        .op = STRATA_SUM};
    if (argc < 2 || argv[1][0] == '-')
        return cli_usage_error("bench", "name the collective (e.g. allreduce)");
    if (strata_coll_parse(argv[1], &o->coll) != 0 || o->coll >= STRATA_COLL_SENDRECV)
        return cli_usage_error("bench", "unknown collective '%s'", argv[1]);
    bool have_factor = false, have_step = false;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (a[0] != '-' || !a[1]) return cli_usage_error("bench", "unexpected argument '%s'", a);
        const struct bench_flag *f = flag_of(argc, argv, &i, &v);
        if (!f || parse_value(o, f, a, v, &have_factor, &have_step)) return CLI_USAGE;
    }
    return check_opts(o, have_factor, have_step);
}

/* Ranks beyond the CPUs time-share cores: every call then includes the
 * scheduler's hand-overs (docs/runtime.md), so say so before the table. */
static void warn_oversubscribed(const bench_opts_t *o)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0 && o->ranks > cpus)
        fprintf(stderr,
                "strata bench: warning: %ld ranks on %ld CPUs: ranks share cores, so the times "
                "include the scheduler's switches\n",
                o->ranks, cpus);
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
    warn_oversubscribed(&o);
    int code = 1;
    strata_error_t err = {0};
    fflush(stdout); /* the ranks inherit stdout: nothing buffered twice */
    if (o.join) return bench_rank(&o) ? CLI_FAIL : CLI_OK; /* one rank of a launched job */
    if (strata_launch_fn((int)o.ranks, bench_rank, &o, 2.0, &code, &err) != STRATA_OK)
        return cli_fail(&err);
    return code ? CLI_FAIL : CLI_OK;
}
