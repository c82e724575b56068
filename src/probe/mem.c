/*
 * mem.c — memory bandwidth: read, write, copy and reduce kernels with
 * temporal and non-temporal stores, on one core and on all cores of each
 * NUMA node, and one core's copy/reduce bandwidth against the buffer size
 * (the curve the calibrated model reads: a collective's working set sits in
 * L1, L2, L3 or DRAM, and each gives its own rate).
 *
 * Each worker is a thread pinned to one cpu of the node, touching its own
 * buffers first (Linux's first-touch policy places the pages on the node of
 * the touching cpu). A sample runs the kernel `inner` times, inner chosen
 * so one sample lasts at least ~2 ms; all-core samples start together at a
 * barrier and count the slowest thread's time (aggregate = bytes of all
 * threads / that time). Non-temporal stores use SSE2 streaming stores
 * (x86-64 baseline); elsewhere they fall back to plain stores.
 */
#define _GNU_SOURCE
#include "probe.h"

#include "comm.h" /* comm_llc_bytes: the cache the engine reads */

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MIN_SAMPLE_S 0.002
/* Smallest buffer whose streaming-store rate is measured (the size curve's
 * 1 MiB point and up): the engine's choice of store mode for an output
 * can go either way from where its footprint leaves L2 (bench/README.md,
 * "s12-h19": 4-8 MiB run 2x faster streamed). */
#define NT_CURVE_MIN 1048576.0

static volatile uint64_t g_sink;

/* ==== Kernels (bytes counted: read for READ, written otherwise) ==== */

static void k_read(unsigned char *dst, const unsigned char *src, size_t n)
{
    const uint64_t *s = (const uint64_t *)src;
    uint64_t a = 0, b = 0, c = 0, d = 0;
    for (size_t i = 0; i + 4 <= n / 8; i += 4)
        a += s[i], b ^= s[i + 1], c += s[i + 2], d ^= s[i + 3];
    g_sink = a + b + c + d;
    (void)dst;
}

/* Plain stores as the engine's output sees them: memcpy of a cache-hot
 * block (the first STRATA_DIRECT_BLOCK bytes of src) over the buffer, block
 * by block — the engine copies out of L1 with memcpy's temporal vector
 * stores. Not memset: on this host glibc's memset of a buffer past the L3
 * stores without reading the lines first (64 MiB at 69 GB/s on one core,
 * above the 27 GB/s streaming stores reach), and with both cores at 16 MiB
 * each it read 41.9 GB/s a core where these stores read 16.9
 * (bench/probe/copyall.c modes 3 and 4, bench/README.md "s13-h19"): the
 * model priced the 8 MiB output's stores 2.5x too cheap. */
static void k_write(unsigned char *dst, const unsigned char *src, size_t n)
{
    for (size_t o = 0; o < n; o += STRATA_DIRECT_BLOCK)
        memcpy(dst + o, src, n - o < STRATA_DIRECT_BLOCK ? n - o : STRATA_DIRECT_BLOCK);
}

static void k_write_nt(unsigned char *dst, const unsigned char *src, size_t n)
{
#if defined(__SSE2__)
    __m128i v = _mm_set1_epi32((int)n);
    for (size_t i = 0; i + 16 <= n; i += 16)
        _mm_stream_si128((__m128i *)(dst + i), v);
    _mm_sfence();
#else
    memset(dst, 1, n);
#endif
    (void)src;
}

static void k_copy(unsigned char *dst, const unsigned char *src, size_t n)
{
    memcpy(dst, src, n);
}

static void k_copy_nt(unsigned char *dst, const unsigned char *src, size_t n)
{
#if defined(__SSE2__)
    for (size_t i = 0; i + 16 <= n; i += 16)
        _mm_stream_si128((__m128i *)(dst + i), _mm_load_si128((const __m128i *)(src + i)));
    _mm_sfence();
#else
    memcpy(dst, src, n);
#endif
}

/* dst = dst + src over floats: two inputs, one output, the engine's shape. */
static void k_reduce(unsigned char *dst, const unsigned char *src, size_t n)
{
    float *d = (float *)dst;
    const float *s = (const float *)src;
    for (size_t i = 0; i < n / 4; i++)
        d[i] += s[i];
}

typedef void (*kernel_fn)(unsigned char *, const unsigned char *, size_t);
static const kernel_fn kernels[STRATA_PROBE_MEM_KINDS] = {k_read, k_write,   k_write_nt,
                                                          k_copy, k_copy_nt, k_reduce};

/* ==== Workers ==== */

/* Start line of a group: the coordinator releases round r once every
 * worker arrived; cancel releases everyone (a thread failed to start). */
typedef struct start {
    atomic_int arrived, round;
    atomic_bool cancel;
} start_t;

typedef struct worker {
    pthread_t th;
    int cpu;
    size_t bytes;
    unsigned char *src, *dst;
    strata_probe_mem_kind_t kind;
    long inner;
    double secs;
    struct start *go;
    int rounds; /* samples to take; each waits at the barrier */
    double *out;
} worker_t;

static double run_inner(worker_t *w)
{
    double t0 = util_now();
    for (long i = 0; i < w->inner; i++)
        kernels[w->kind](w->dst, w->src, w->bytes);
    return util_now() - t0;
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    probe_pin(w->cpu);
    memset(w->src, 1, w->bytes); /* first touch on this cpu's node */
    memset(w->dst, 0, w->bytes);
    kernels[w->kind](w->dst, w->src, w->bytes); /* warm-up */
    for (int r = 0; r < w->rounds; r++) {
        atomic_fetch_add(&w->go->arrived, 1);
        while (atomic_load(&w->go->round) <= r && !atomic_load(&w->go->cancel))
            sched_yield();
        if (atomic_load(&w->go->round) <= r) break; /* cancelled before release */
        w->out[r] = run_inner(w);
    }
    return NULL;
}

/* Bandwidth samples of `kind` on the cpus given, each with `bytes` of its
 * own; aggregate B/s per sample in out[0..*rounds_p-1]: at most `rounds`,
 * fewer once `budget` s passed (never fewer than PROBE_MIN_REPS). 0 ok,
 * -1 failed. */
/* Buffers reused by every measurement (a fresh mapping would pay a page
 * fault per 4 KiB, which on a loaded VM costs more than the kernel timed):
 * one source and one destination of `bytes` per cpu, first touched by the
 * worker pinned to that cpu. */
typedef struct pool {
    int cpu[STRATA_PROBE_CORES_MAX];
    unsigned char *src[STRATA_PROBE_CORES_MAX], *dst[STRATA_PROBE_CORES_MAX];
    int n;
    size_t bytes;
} pool_t;

static pool_t g_pool;

static int pool_get(int cpu, unsigned char **src, unsigned char **dst)
{
    for (int i = 0; i < g_pool.n; i++)
        if (g_pool.cpu[i] == cpu) return *src = g_pool.src[i], *dst = g_pool.dst[i], 0;
    if (g_pool.n == STRATA_PROBE_CORES_MAX) return -1;
    int i = g_pool.n;
    g_pool.src[i] = util_malloc(g_pool.bytes + 64), g_pool.dst[i] = util_malloc(g_pool.bytes + 64);
    if (!g_pool.src[i] || !g_pool.dst[i]) {
        util_free(g_pool.src[i]), util_free(g_pool.dst[i]);
        return -1;
    }
    g_pool.cpu[g_pool.n++] = cpu;
    *src = g_pool.src[i], *dst = g_pool.dst[i];
    return 0;
}

static void pool_free(void)
{
    for (int i = 0; i < g_pool.n; i++)
        util_free(g_pool.src[i]), util_free(g_pool.dst[i]);
    g_pool.n = 0;
}

static int run_group(const int *cpus, int n, size_t bytes, strata_probe_mem_kind_t kind, long inner,
                     int rounds, double budget, int *rounds_p, double *out)
{
    worker_t w[STRATA_PROBE_CORES_MAX];
    double times[STRATA_PROBE_CORES_MAX][PROBE_MAX_REPS];
    start_t go = {0};
    int rc = 0, started = 0;
    for (int i = 0; i < n; i++) {
        w[i] = (worker_t){.cpu = cpus[i],
                          .bytes = bytes,
                          .kind = kind,
                          .inner = inner,
                          .go = &go,
                          .rounds = rounds,
                          .out = times[i]};
        if (bytes > g_pool.bytes || pool_get(cpus[i], &w[i].src, &w[i].dst) != 0) rc = -1;
    }
    for (int i = 0; i < n && rc == 0; i++, started++)
        if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0) rc = -1;
    /* release rounds while the budget lasts (at least PROBE_MIN_REPS) */
    double t0 = util_now();
    int done = 0;
    for (; done < rounds && rc == 0; done++) {
        while (atomic_load(&go.arrived) < n * (done + 1))
            sched_yield();
        if (done >= PROBE_MIN_REPS && util_now() - t0 > budget) break;
        atomic_store(&go.round, done + 1);
    }
    while (rc == 0 && atomic_load(&go.arrived) < n * (done + 1) && done < rounds)
        sched_yield(); /* the last released round finished */
    atomic_store(&go.cancel, true);
    for (int i = 0; i < started; i++)
        pthread_join(w[i].th, NULL);
    *rounds_p = done;
    rounds = done;
    for (int r = 0; r < rounds && rc == 0; r++) {
        double slow = 0;
        for (int i = 0; i < n; i++)
            if (times[i][r] > slow) slow = times[i][r];
        out[r] = strata_probe_bandwidth((double)bytes * (double)inner * n, slow);
        if (out[r] <= 0) rc = -1;
    }
    return rc;
}

/* Kernel runs per sample: enough for MIN_SAMPLE_S at an assumed 20 GB/s
 * (a sample's length only needs to dwarf the clock's resolution). */
static long pick_inner(size_t bytes)
{
    long inner = (long)(MIN_SAMPLE_S * 20e9 / (double)bytes) + 1;
    return inner > 100000 ? 100000 : inner;
}

static strata_status_t measure(const int *cpus, int n, size_t bytes, strata_probe_mem_kind_t kind,
                               double budget, strata_probe_stat_t *s, strata_error_t *err)
{
    double out[PROBE_MAX_REPS];
    int rounds = 15;
    if (run_group(cpus, n, bytes, kind, pick_inner(bytes), rounds, budget, &rounds, out) != 0)
        return strata_error_set(err, STRATA_ERR_NOMEM, "probe: memory: cannot allocate %zu bytes",
                                bytes * 2);
    return strata_probe_stat(out, (size_t)rounds, s, err);
}

/* An aggregate over n cores as the rate of each. */
static void per_core(strata_probe_stat_t *s, int n)
{
    s->median /= n, s->min /= n, s->max /= n; /* spread is relative: unchanged */
}

strata_status_t probe_mem(probe_ctx_t *x, double budget, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    probe_numa_cpus_t nodes[STRATA_PROBE_NUMA_MAX];
    int nn = probe_numa_layout(nodes, STRATA_PROBE_NUMA_MAX, res->cpus, res->cores);
    static const double curve[] = {4096,    16384,   65536,   262144,   1048576,
                                   2097152, 4194304, 8388608, 16777216, 67108864};
    int ncurve = x->opts->quick ? 7 : 10; /* quick stops at 4 MiB */
    res->big_bytes = x->opts->quick ? (size_t)16 << 20 : (size_t)64 << 20;
    res->llc_bytes = comm_llc_bytes();
    g_pool.bytes =
        res->big_bytes > (size_t)curve[ncurve - 1] ? res->big_bytes : (size_t)curve[ncurve - 1];
    int nnt = 0; /* curve points with streaming stores too: two more jobs each */
    for (int c = 0; c < ncurve; c++)
        nnt += curve[c] >= NT_CURVE_MIN;
    int jobs = nn * STRATA_PROBE_MEM_KINDS * 2 + ncurve * 6 + nnt * 2, done = 0;
    double per = budget / jobs;
    strata_status_t st = STRATA_OK;
    res->numa_nodes = nn;
    for (int i = 0; i < nn && st == STRATA_OK; i++) {
        strata_probe_numa_t *nd = &res->numa[i];
        nd->node = nodes[i].node, nd->cores = nodes[i].n;
        for (int k = 0; k < STRATA_PROBE_MEM_KINDS && st == STRATA_OK; k++) {
            size_t each = res->big_bytes / (size_t)nodes[i].n;
            st = measure(nodes[i].cpus, 1, res->big_bytes, k, per, &nd->one[k], err);
            if (st == STRATA_OK)
                st = measure(nodes[i].cpus, nodes[i].n, each & ~(size_t)63, k, per, &nd->all[k],
                             err);
            done += 2;
            probe_tick(x, budget, (double)done / jobs);
        }
    }
    res->curve_n = ncurve;
    for (int c = 0; c < ncurve && st == STRATA_OK; c++) {
        res->curve_bytes[c] = curve[c];
        st = measure(nodes[0].cpus, 1, (size_t)curve[c], STRATA_PROBE_MEM_COPY, per,
                     &res->copy_curve[c], err);
        if (st == STRATA_OK)
            st = measure(nodes[0].cpus, 1, (size_t)curve[c], STRATA_PROBE_MEM_REDUCE, per,
                         &res->reduce_curve[c], err);
        if (st == STRATA_OK)
            st = measure(nodes[0].cpus, 1, (size_t)curve[c], STRATA_PROBE_MEM_READ, per,
                         &res->read_curve[c], err);
        /* the engine's output stores, both kinds: it picks per output
         * size whichever is cheaper (copy.c), so the model prices both;
         * streaming only from NT_CURVE_MIN, below which a buffer stays in
         * the private caches and plain stores win */
        bool nt = curve[c] >= NT_CURVE_MIN;
        if (st == STRATA_OK)
            st = measure(nodes[0].cpus, 1, (size_t)curve[c], STRATA_PROBE_MEM_WRITE, per,
                         &res->write_curve[c], err);
        if (st == STRATA_OK && nt)
            st = measure(nodes[0].cpus, 1, (size_t)curve[c], STRATA_PROBE_MEM_WRITE_NT, per,
                         &res->write_nt_curve[c], err);
        /* read and store with every core of the node at once, each its own
         * buffer of the size: the ranks of a collective that fill the
         * cores stream their inputs and outputs together, sharing the
         * last-level cache and the DRAM channels (per core: aggregate / n) */
        if (st == STRATA_OK && nodes[0].n > 1) {
            st = measure(nodes[0].cpus, nodes[0].n, (size_t)curve[c], STRATA_PROBE_MEM_READ, per,
                         &res->read_all_curve[c], err);
            if (st == STRATA_OK)
                st = measure(nodes[0].cpus, nodes[0].n, (size_t)curve[c], STRATA_PROBE_MEM_WRITE,
                             per, &res->write_all_curve[c], err);
            if (st == STRATA_OK && nt)
                st = measure(nodes[0].cpus, nodes[0].n, (size_t)curve[c], STRATA_PROBE_MEM_WRITE_NT,
                             per, &res->write_nt_all_curve[c], err);
            if (st == STRATA_OK) {
                per_core(&res->read_all_curve[c], nodes[0].n);
                per_core(&res->write_all_curve[c], nodes[0].n);
                if (nt) per_core(&res->write_nt_all_curve[c], nodes[0].n);
            }
        }
        done += nt ? 8 : 6;
        probe_tick(x, budget, (double)done / jobs);
    }
    pool_free();
    return st;
}
