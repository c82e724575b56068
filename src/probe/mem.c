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
 * so one sample lasts at least ~2 ms; an all-core sample is a window from
 * the first worker's start to the last one's end (aggregate = bytes of all
 * threads / that window), concurrent when all ran together for at least
 * PROBE_CONCURRENT_FRAC of it (probe_window_rate). Non-temporal stores use SSE2 streaming stores
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
#include <time.h>
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

/* ==== The team: persistent pinned workers ==== */

#define TEAM_ROUNDS_MAX 32 /* windows a measurement may take */

typedef struct member {
    pthread_t th;
    int cpu;
    bool joinable;
    unsigned char *src, *dst;
    atomic_int state; /* 0 starting, 1 ready (pinned, buffers touched), -1 pin failed */
    atomic_int at;    /* this job: rounds arrived at, and 1 << 20 once finished */
    struct probe_team *t;
} member_t;

struct probe_team {
    member_t m[STRATA_PROBE_CORES_MAX];
    int n;
    size_t cap;  /* bytes of each buffer, member 0's excepted */
    size_t cap0; /* member 0's (at least cap: it runs the one-core figures) */
    double stall_s;
    int stall_idx; /* test hook: this worker never arrives; -1 none */
    /* the job, posted under mu with gen incremented */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int gen;
    bool quit;
    int job_n, job_kind, job_rounds;
    size_t job_bytes;
    long job_inner;
    bool job_warm;
    /* round r's stamps, worker by worker: what window_of reads */
    double start[TEAM_ROUNDS_MAX][STRATA_PROBE_CORES_MAX];
    double end[TEAM_ROUNDS_MAX][STRATA_PROBE_CORES_MAX];
    /* a job's rounds: arrived counts arrivals (n a round), released the
     * rounds let go, finished the workers done with the job; progress
     * moves on every step of any worker (the waits' no-progress bound) */
    atomic_int arrived, released, finished, progress;
    atomic_int settled; /* workers pinned and touched, or failed to pin */
    atomic_bool stop;   /* the job's end: workers leave their round waits */
    bool broken;        /* a job failed: a worker may still be in it, no more jobs */
    int created, touched, jobs;
};

/* Wait (yielding) until *a >= want or stop; false when stopped short. */
static bool wait_at_least(atomic_int *a, int want, atomic_bool *stop)
{
    while (atomic_load(a) < want) {
        if (atomic_load(stop)) return false;
        sched_yield();
    }
    return true;
}

static void *member_main(void *arg)
{
    member_t *w = arg;
    probe_team_t *t = w->t;
    if (probe_pin(w->cpu) != 0) {
        atomic_store(&w->state, -1);
        atomic_fetch_add(&t->settled, 1);
        atomic_fetch_add(&t->progress, 1);
        return NULL;
    }
    /* first touch on this cpu's node, a MiB at a time (each a progress) */
    size_t cap = w == t->m ? t->cap0 : t->cap;
    for (size_t o = 0; o < cap; o += (size_t)1 << 20) {
        size_t k = cap - o < ((size_t)1 << 20) ? cap - o : (size_t)1 << 20;
        memset(w->src + o, 1, k), memset(w->dst + o, 0, k);
        atomic_fetch_add(&t->progress, 1);
    }
    atomic_store(&w->state, 1);
    atomic_fetch_add(&t->settled, 1);
    atomic_fetch_add(&t->progress, 1);
    int seen = 0, me = (int)(w - t->m);
    for (;;) {
        pthread_mutex_lock(&t->mu);
        while (t->gen == seen && !t->quit)
            pthread_cond_wait(&t->cv, &t->mu);
        bool quit = t->quit;
        seen = t->gen;
        int n = t->job_n, kind = t->job_kind, rounds = t->job_rounds;
        size_t bytes = t->job_bytes;
        long inner = t->job_inner;
        bool warm = t->job_warm;
        pthread_mutex_unlock(&t->mu);
        if (quit) break;
        if (me >= n) continue;    /* not in this job */
        if (me == t->stall_idx) { /* test hook: never arrives */
            while (!atomic_load(&t->stop))
                sched_yield();
        } else {
            if (warm) kernels[kind](w->dst, w->src, bytes); /* inside the budget */
            for (int r = 0; r < rounds; r++) {
                atomic_fetch_add(&w->at, 1);
                atomic_fetch_add(&t->arrived, 1);
                atomic_fetch_add(&t->progress, 1);
                if (!wait_at_least(&t->released, r + 1, &t->stop)) break;
                t->start[r][me] = util_now();
                for (long i = 0; i < inner; i++)
                    kernels[kind](w->dst, w->src, bytes);
                t->end[r][me] = util_now();
            }
        }
        atomic_fetch_add(&w->at, 1 << 20);
        atomic_fetch_add(&t->finished, 1);
        atomic_fetch_add(&t->progress, 1);
    }
    return NULL;
}

/* Wait until *a >= want; STRATA_ERR_TIMEOUT-style failure (-1) when
 * t->progress stood still for stall_s. */
static int team_wait(probe_team_t *t, atomic_int *a, int want)
{
    int last = atomic_load(&t->progress);
    double since = util_now();
    while (atomic_load(a) < want) {
        int p = atomic_load(&t->progress);
        if (p != last)
            last = p, since = util_now();
        else if (util_now() - since > t->stall_s)
            return -1;
        sched_yield();
    }
    return 0;
}

strata_status_t probe_team_start(const int *cpus, int n, size_t bytes, size_t bytes0,
                                 double stall_s, probe_team_t **t_p, strata_error_t *err)
{
    strata_status_t st;
    *t_p = NULL;
    if (n < 1 || n > STRATA_PROBE_CORES_MAX) {
        return strata_error_set(err, STRATA_ERR_INVALID, "probe: memory: %d workers (1..%d)", n,
                                STRATA_PROBE_CORES_MAX);
    }
    probe_team_t *t = util_malloc(sizeof(*t));
    if (!t) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    memset(t, 0, sizeof(*t));
    t->n = n, t->cap = bytes < 64 ? 64 : bytes, t->stall_s = stall_s, t->stall_idx = -1;
    t->cap0 = bytes0 > t->cap ? bytes0 : t->cap;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    for (int i = 0; i < n; i++) {
        member_t *w = &t->m[i];
        w->cpu = cpus[i], w->t = t;
        size_t cap = i == 0 ? t->cap0 : t->cap;
        w->src = util_malloc(cap + 64), w->dst = util_malloc(cap + 64);
        if (!w->src || !w->dst) {
            st = strata_error_set(err, STRATA_ERR_NOMEM, "probe: memory: cannot allocate %zu bytes",
                                  cap * 2);
            probe_team_stop(t);
            return st;
        }
    }
    for (int i = 0; i < n; i++) {
        if (pthread_create(&t->m[i].th, NULL, member_main, &t->m[i]) != 0) {
            st = strata_error_set(err, STRATA_ERR_SYSTEM,
                                  "probe: memory: cannot start a worker thread for cpu %d",
                                  t->m[i].cpu);
            probe_team_stop(t);
            return st;
        }
        t->m[i].joinable = true, t->created++;
    }
    /* every worker pinned and its buffers touched, or an error */
    team_wait(t, &t->settled, n); /* a stall leaves a worker at 0, said below */
    for (int i = 0; i < n; i++) {
        int s = atomic_load(&t->m[i].state);
        if (s == 1) {
            t->touched++;
            continue;
        }
        if (s == -1)
            st = strata_error_set(err, STRATA_ERR_SYSTEM,
                                  "probe: memory: cannot pin a worker thread to cpu %d",
                                  t->m[i].cpu);
        else
            st = strata_error_set(err, STRATA_ERR_TIMEOUT,
                                  "probe: memory: cpu %d made no progress for %.0f ms "
                                  "touching its buffers",
                                  t->m[i].cpu, stall_s * 1e3);
        probe_team_stop(t);
        return st;
    }
    *t_p = t;
    return STRATA_OK;
}

void probe_team_counts(const probe_team_t *t, int *created, int *touched, int *jobs)
{
    *created = t->created, *touched = t->touched, *jobs = t->jobs;
}

void probe_team_stall(probe_team_t *t, int i)
{
    t->stall_idx = i;
}

void probe_team_stop(probe_team_t *t)
{
    if (!t) return;
    atomic_store(&t->stop, true);
    pthread_mutex_lock(&t->mu);
    t->quit = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    bool stuck = false;
    struct timespec ts; /* one deadline for all the joins: stall_s in all */
    clock_gettime(CLOCK_REALTIME, &ts);
    double at = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + t->stall_s;
    ts.tv_sec = (time_t)at, ts.tv_nsec = (long)((at - (double)(time_t)at) * 1e9);
    for (int i = 0; i < t->n; i++) {
        if (!t->m[i].joinable) continue;
        if (pthread_timedjoin_np(t->m[i].th, NULL, &ts) != 0) {
            pthread_detach(t->m[i].th); /* it may still touch t: leave t allocated */
            stuck = true;
        }
    }
    if (stuck) return;
    for (int i = 0; i < t->n; i++)
        util_free(t->m[i].src), util_free(t->m[i].dst);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    util_free(t);
}

double probe_window_rate(const double *start, const double *end, int n, double bytes_each,
                         bool *concurrent)
{
    double s0 = start[0], s1 = start[0], e0 = end[0], e1 = end[0];
    for (int i = 1; i < n; i++) {
        if (start[i] < s0) s0 = start[i];
        if (start[i] > s1) s1 = start[i];
        if (end[i] < e0) e0 = end[i];
        if (end[i] > e1) e1 = end[i];
    }
    *concurrent = e1 > s0 && e0 - s1 >= PROBE_CONCURRENT_FRAC * (e1 - s0);
    return strata_probe_bandwidth(bytes_each * n, e1 - s0);
}

int probe_windows_pick(const double *w, const bool *conc, int n, double *out, int *nconc)
{
    int c = 0, k = 0;
    for (int i = 0; i < n; i++)
        c += conc[i];
    for (int i = 0; i < n; i++)
        if (c < PROBE_MIN_REPS || conc[i]) out[k++] = w[i];
    *nconc = c;
    return k;
}

/* Window r's rate over the job's n workers (probe_window_rate). */
static double window_of(const probe_team_t *t, int n, int r, double bytes_each, bool *conc)
{
    return probe_window_rate(t->start[r], t->end[r], n, bytes_each, conc);
}

strata_status_t probe_team_measure(probe_team_t *t, int n, size_t bytes, int kind, long inner,
                                   bool warm, int rounds, double budget_s, double *out, int *nout,
                                   int *nconc, int *nwin, strata_error_t *err)
{
    if (n < 1 || n > t->n || bytes > (n == 1 ? t->cap0 : t->cap) || kind < 0 ||
        kind >= STRATA_PROBE_MEM_KINDS)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "probe: memory: a job of %d workers over %zu bytes (team: %d, %zu)",
                                n, bytes, t->n, t->cap);
    if (t->broken)
        return strata_error_set(err, STRATA_ERR_INVALID, "probe: memory: the team failed before");
    if (rounds > TEAM_ROUNDS_MAX) rounds = TEAM_ROUNDS_MAX;
    if (rounds < 1) rounds = 1;
    double t0 = util_now(); /* before the post: the wake-up and warm-up count */
    atomic_store(&t->arrived, 0), atomic_store(&t->released, 0), atomic_store(&t->finished, 0);
    atomic_store(&t->stop, false);
    for (int i = 0; i < n; i++)
        atomic_store(&t->m[i].at, 0);
    pthread_mutex_lock(&t->mu);
    t->job_n = n, t->job_kind = kind, t->job_rounds = rounds, t->job_bytes = bytes;
    t->job_inner = inner, t->job_warm = warm;
    t->gen++, t->jobs++;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    double bytes_each = (double)bytes * (double)inner, prev = t0;
    int done = 0, rc = 0;
    bool c[TEAM_ROUNDS_MAX] = {false};
    double w[TEAM_ROUNDS_MAX];
    for (; done < rounds; done++) {
        /* all arrived at round `done`: round done-1 is complete */
        if (team_wait(t, &t->arrived, n * (done + 1)) != 0) {
            rc = -1;
            break;
        }
        if (done > 0) w[done - 1] = window_of(t, n, done - 1, bytes_each, &c[done - 1]);
        /* another window while one as long as the last ends within the
         * share: windows are not taken past it, however few */
        double now = util_now();
        if (done > 0 && !probe_more(done, rounds, now - t0, now - prev, budget_s)) break;
        prev = now;
        atomic_store(&t->released, done + 1);
    }
    atomic_store(&t->stop, true); /* the workers at round `done` leave */
    if (rc == 0 && team_wait(t, &t->finished, n) != 0) rc = -1;
    if (rc != 0) {
        t->broken = true;
        int late = 0; /* the worker furthest behind */
        for (int i = 1; i < n; i++)
            if (atomic_load(&t->m[i].at) < atomic_load(&t->m[late].at)) late = i;
        return strata_error_set(err, STRATA_ERR_TIMEOUT,
                                "probe: memory: %s on %d cpus: cpu %d made no progress "
                                "for %.0f ms",
                                strata_probe_mem_kind_name(kind), n, t->m[late].cpu,
                                t->stall_s * 1e3);
    }
    if (done == rounds) /* the last round's window, complete now */
        w[done - 1] = window_of(t, n, done - 1, bytes_each, &c[done - 1]);
    for (int r = 0; r < done; r++)
        if (w[r] <= 0)
            return strata_error_set(err, STRATA_ERR_RANGE,
                                    "probe: memory: %s: a window of no time (the clock)",
                                    strata_probe_mem_kind_name(kind));
    *nout = probe_windows_pick(w, c, done, out, nconc);
    *nwin = done;
    return STRATA_OK;
}

/* Kernel runs per sample: enough for MIN_SAMPLE_S at an assumed 20 GB/s
 * (a sample's length only needs to dwarf the clock's resolution). */
static long pick_inner(size_t bytes)
{
    long inner = (long)(MIN_SAMPLE_S * 20e9 / (double)bytes) + 1;
    return inner > 100000 ? 100000 : inner;
}

/* The stage's figures: its deadline (x->deadline), how many figures it
 * has and has taken, for each figure's share and the bar. */
typedef struct mem_plan {
    probe_ctx_t *x;
    probe_team_t *t;
    double budget; /* the stage's plan, for the bar */
    int jobs, done;
    size_t llc;
} mem_plan_t;

/* One figure: kind on the team's first n workers, each over `bytes`, in
 * its share of what is left of the stage (probe_share); *conc_p / *win_p
 * (when not NULL) the concurrent windows of all taken. No warm-up pass
 * where the figure's buffers together are at least twice the LLC: a
 * cyclic sweep that large finds nothing an earlier pass left in the cache
 * (the all-core table's, and the default run's one-core table). */
static strata_status_t measure(mem_plan_t *p, int n, size_t bytes, strata_probe_mem_kind_t kind,
                               strata_probe_stat_t *s, int *conc_p, int *win_p, strata_error_t *err)
{
    double out[PROBE_MAX_REPS];
    int nout = 0, conc = 0, nwin = 0;
    double share = probe_share(util_now(), p->x->deadline, p->jobs - p->done);
    bool warm = p->llc == 0 || (double)bytes * n < 2.0 * (double)p->llc;
    strata_status_t st = probe_team_measure(p->t, n, bytes, (int)kind, pick_inner(bytes), warm, 15,
                                            share, out, &nout, &conc, &nwin, err);
    p->done++;
    probe_tick(p->x, p->budget, (double)p->done / p->jobs);
    if (st != STRATA_OK) return st;
    if (conc_p) *conc_p = conc;
    if (win_p) *win_p = nwin;
    return strata_probe_stat(out, (size_t)nout, s, err);
}

/* An aggregate over n cores as the rate of each. */
static void per_core(strata_probe_stat_t *s, int n)
{
    s->median /= n, s->min /= n, s->max /= n; /* spread is relative: unchanged */
}

/* The curves: one core of the team (node 0's) by buffer size, and the
 * read and stores with all its cores at once. */
static strata_status_t measure_curves(mem_plan_t *p, int ncores, const double *curve, int ncurve,
                                      strata_error_t *err)
{
    strata_probe_result_t *res = p->x->res;
    strata_status_t st = STRATA_OK;
    res->curve_n = ncurve;
    for (int c = 0; c < ncurve && st == STRATA_OK; c++) {
        size_t b = (size_t)curve[c];
        res->curve_bytes[c] = curve[c];
        st = measure(p, 1, b, STRATA_PROBE_MEM_COPY, &res->copy_curve[c], NULL, NULL, err);
        if (st == STRATA_OK)
            st = measure(p, 1, b, STRATA_PROBE_MEM_REDUCE, &res->reduce_curve[c], NULL, NULL, err);
        if (st == STRATA_OK)
            st = measure(p, 1, b, STRATA_PROBE_MEM_READ, &res->read_curve[c], NULL, NULL, err);
        /* the engine's output stores, both kinds: it picks per output
         * size whichever is cheaper (copy.c), so the model prices both;
         * streaming only from NT_CURVE_MIN, below which a buffer stays in
         * the private caches and plain stores win */
        bool nt = curve[c] >= NT_CURVE_MIN;
        if (st == STRATA_OK)
            st = measure(p, 1, b, STRATA_PROBE_MEM_WRITE, &res->write_curve[c], NULL, NULL, err);
        if (st == STRATA_OK && nt)
            st = measure(p, 1, b, STRATA_PROBE_MEM_WRITE_NT, &res->write_nt_curve[c], NULL, NULL,
                         err);
        /* read and store with every core of the node at once, each its own
         * buffer of the size: the ranks of a collective that fill the
         * cores stream their inputs and outputs together, sharing the
         * last-level cache and the DRAM channels (per core: aggregate / n) */
        if (st == STRATA_OK && ncores > 1) {
            st = measure(p, ncores, b, STRATA_PROBE_MEM_READ, &res->read_all_curve[c], NULL, NULL,
                         err);
            if (st == STRATA_OK)
                st = measure(p, ncores, b, STRATA_PROBE_MEM_WRITE, &res->write_all_curve[c], NULL,
                             NULL, err);
            if (st == STRATA_OK && nt)
                st = measure(p, ncores, b, STRATA_PROBE_MEM_WRITE_NT, &res->write_nt_all_curve[c],
                             NULL, NULL, err);
            if (st == STRATA_OK) {
                per_core(&res->read_all_curve[c], ncores);
                per_core(&res->write_all_curve[c], ncores);
                if (nt) per_core(&res->write_nt_all_curve[c], ncores);
            }
        }
    }
    return st;
}

/* The per-node table's buffers: one core's `big` (at least the last-level
 * cache, so its source and destination pass it twice over), and each
 * core's own with all at once, at least 2 x LLC / cores (together twice
 * the LLC's size in each direction; and a core's whole L3 where the cores
 * sit on two: this VM's far placement). Before 2026-12-03 --quick gave
 * each of 2 cores 8 MiB: 32 MiB in all, this host's L3, and the copy read
 * 15-17 GB/s or 55.7 from run to run (bench/README.md "s15-h19m"). */
static size_t llc_capped(void)
{
    size_t llc = comm_llc_bytes();
    size_t cap = (size_t)256 << 20;
    return llc > cap ? cap : llc;
}

strata_status_t probe_mem(probe_ctx_t *x, double budget, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    probe_numa_cpus_t nodes[STRATA_PROBE_NUMA_MAX];
    int nn = probe_numa_layout(nodes, STRATA_PROBE_NUMA_MAX, res->cpus, res->cores);
    static const double curve[] = {4096,    16384,   65536,   262144,   1048576,
                                   2097152, 4194304, 8388608, 16777216, 67108864};
    int ncurve = x->opts->quick ? 7 : 10; /* quick stops at 4 MiB */
    size_t llc = llc_capped();
    res->llc_bytes = comm_llc_bytes();
    res->big_bytes = x->opts->quick ? (size_t)16 << 20 : (size_t)64 << 20;
    if (res->big_bytes < llc) res->big_bytes = (llc + 63) & ~(size_t)63;
    int nnt = 0; /* curve points with streaming stores too: two more jobs each */
    for (int c = 0; c < ncurve; c++)
        nnt += curve[c] >= NT_CURVE_MIN;
    /* the stage's figures: the table's (each kind, one core and all) and
     * the curves' (copy, reduce, read, write, read and write all cores,
     * and the streaming writes from NT_CURVE_MIN) */
    mem_plan_t p = {.x = x, .budget = budget, .llc = llc};
    bool curves_all = nn > 0 && nodes[0].n > 1; /* node 0's all-core curves */
    p.jobs = nn * STRATA_PROBE_MEM_KINDS * 2 + ncurve * (curves_all ? 6 : 4) +
             nnt * (curves_all ? 2 : 1);
    strata_status_t st = STRATA_OK;
    res->numa_nodes = nn;
    for (int i = 0; i < nn && st == STRATA_OK; i++) {
        strata_probe_numa_t *nd = &res->numa[i];
        int n = nodes[i].n;
        nd->node = nodes[i].node, nd->cores = n;
        size_t each = res->big_bytes / (size_t)n, least = 2 * llc / (size_t)n;
        each = (each > least ? each : least) & ~(size_t)63;
        if (i == 0) res->all_bytes = each; /* node 0's, as the model reads */
        /* each worker's buffers: the all-core figure's, and on node 0 the
         * curves' largest (one core and all cores run them); worker 0's
         * also the one-core figure's */
        size_t cap = each;
        if (i == 0 && cap < (size_t)curve[ncurve - 1]) cap = (size_t)curve[ncurve - 1];
        size_t cap0 = res->big_bytes > cap ? res->big_bytes : cap;
        st = probe_team_start(nodes[i].cpus, n, cap, cap0, PROBE_MEM_STALL_S, &p.t, err);
        if (st != STRATA_OK) return st;
        for (int k = 0; k < STRATA_PROBE_MEM_KINDS && st == STRATA_OK; k++) {
            st = measure(&p, 1, res->big_bytes, k, &nd->one[k], NULL, NULL, err);
            if (st == STRATA_OK)
                st = measure(&p, n, each, k, &nd->all[k], &nd->all_concurrent[k],
                             &nd->all_windows[k], err);
        }
        if (i == 0 && st == STRATA_OK) st = measure_curves(&p, n, curve, ncurve, err);
        probe_team_stop(p.t);
    }
    return st;
}
