/*
 * shm.c — strata's own shared-memory transport, measured through the
 * public comm API: ranks started by strata_launch_fn, as a user's program
 * would be.
 *
 *   oneway    ranks 0 and 1 ping-pong strata_comm_send/recv messages of
 *             8 B … 4 MiB (1 MiB with --quick); a sample is the median
 *             round trip of a batch / 2; alpha is the 8-byte figure.
 *   bw        at the largest size: bytes / (one-way time − alpha), each
 *             sample with the alpha of the same round.
 *   per_rank  barriers at `cores` ranks and at 2 × cores ranks (ranks
 *             outnumbering cores, the scheduler in the loop): the extra
 *             time per barrier per added rank (median barrier of a batch,
 *             as strata bench takes the median call).
 *   line_work, clock_read  on this process's one thread (no second rank):
 *             what an 8-byte allreduce on the line path does beyond the
 *             barrier's exchange, through the library's own functions
 *             (strata_comm_algo_for, the 8 B copied beside a sequence word,
 *             comm_reduce_n over ranks_fit inputs, the result copied out)
 *             and the public call's entry beyond the barrier's, timed on a
 *             one-rank communicator (8 B allreduce less barrier: the type
 *             and buffer checks), and one read of the library's clock (util_now), which every
 *             engine call makes for its learned choices; a sample is a
 *             batch of WORK_ITERS timed as a whole / WORK_ITERS (the
 *             batch's own clock read adds 1/WORK_ITERS of a read a pass).
 *   flat_work on the same one-rank communicator: a 64 B allreduce through
 *             the public call and the engine's flat path (comm_alone_
 *             allreduce, where the public call would return a copy) less
 *             the barrier's path there (comm_alone_barrier) less a clock
 *             read: what a flat call does on its own core beyond the
 *             barrier's work.
 * Each launch takes samples while the next fits its share of the section
 * (another(): rank 0 decides, every rank learns it behind a barrier), at
 * most the counts it took before it held a plan (15, 5 with --quick): at
 * load 6 those fixed counts took 6.5-9.8 s of the default's 6 s
 * (bench/README.md, "s16-h19q").
 * No collective of several ranks that the model later predicts is timed
 * here: flat_work's one-rank call has no peer, so none of the hand-offs
 * the model prices.
 * The ranks write their samples into an anonymous shared mapping made
 * before the fork.
 */
#define _GNU_SOURCE
#include "probe.h"

#include "comm.h" /* the engine's reduction kernel, as c2c.c */

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NSIZES 6
static const size_t sizes[NSIZES] = {8, 256, 4096, 65536, 1 << 20, 4 << 20};
static const long trips_of[NSIZES] = {1000, 500, 300, 60, 6, 3};

typedef struct shm_job {
    int samples, nsizes; /* samples: at most */
    double t0, share;    /* the launch's start and its share (util_now: one clock for all) */
    int taken, more;     /* samples taken (rank 0), and whether another follows */
    long barriers;
    bool barrier_only, quick;
    double oneway[NSIZES][PROBE_MAX_REPS], barrier[PROBE_MAX_REPS];
    double rank_barrier[PROBE_MAX_REPS][64]; /* each rank's median barrier, by sample */
    char msg[STRATA_ERROR_MSG_MAX];
} shm_job_t;

#define MAX_LAPS 2000

/* One batch of round trips of `bytes` between ranks 0 and 1, each timed
 * on its own: the median round trip / 2 (s one way). Per-call medians, as
 * strata bench reports, so a preemption by another process inflates
 * neither. */
static double pingpong(strata_comm_t *c, unsigned char *buf, size_t bytes, long trips)
{
    int r = strata_comm_rank(c);
    double lap[MAX_LAPS], prev = util_now();
    if (trips > MAX_LAPS) trips = MAX_LAPS;
    for (long i = 0; i < trips; i++) {
        strata_status_t st = r == 0 ? strata_comm_send(c, buf, bytes, 1, NULL)
                                    : strata_comm_recv(c, buf, bytes, 0, NULL);
        if (st == STRATA_OK)
            st = r == 0 ? strata_comm_recv(c, buf, bytes, 1, NULL)
                        : strata_comm_send(c, buf, bytes, 0, NULL);
        if (st != STRATA_OK) return -1;
        double t = util_now();
        lap[i] = t - prev, prev = t;
    }
    return probe_median(lap, trips) / 2;
}

/* After sample s (begun at ts) of a launch: rank 0 decides whether
 * another follows (probe_more: the next, as long as this one, ends within
 * the launch's share, counted from the launch's start, the processes'
 * start and the bootstrap included; at most j->samples), and every rank
 * learns it behind a barrier, so that all take the same count (a
 * ping-pong or a barrier cannot stop apart). False when the barrier
 * fails. */
static bool another(strata_comm_t *c, shm_job_t *j, int s, double ts, int *more_p)
{
    if (strata_comm_rank(c) == 0) {
        double now = util_now();
        j->taken = s + 1;
        __atomic_store_n(&j->more, probe_more(s + 1, j->samples, now - j->t0, now - ts, j->share),
                         __ATOMIC_SEQ_CST);
    }
    if (strata_comm_barrier(c, NULL) != STRATA_OK) return false;
    *more_p = __atomic_load_n(&j->more, __ATOMIC_SEQ_CST);
    return true;
}

static int shm_rank(void *arg)
{
    shm_job_t *j = arg;
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    if (strata_comm_init_env(&c, &err) != STRATA_OK) {
        snprintf(j->msg, sizeof(j->msg), "%s", err.msg);
        return 1;
    }
    int r = strata_comm_rank(c);
    size_t big = sizes[j->nsizes - 1];
    unsigned char *buf = util_malloc(big);
    int rc = buf ? 0 : 1;
    if (buf) memset(buf, r, big);
    for (int s = 0, more = 1; more && rc == 0 && !j->barrier_only && r < 2; s++) {
        double ts = util_now();
        for (int z = 0; z < j->nsizes && rc == 0; z++) {
            long trips = j->quick ? (trips_of[z] + 4) / 5 : trips_of[z];
            double t = pingpong(c, buf, sizes[z], trips);
            if (t <= 0) rc = 1;
            if (r == 0) j->oneway[z][s] = t;
        }
        if (rc == 0 && !another(c, j, s, ts, &more)) rc = 1;
    }
    if (rc == 0 && strata_comm_barrier(c, NULL) != STRATA_OK) rc = 1;
    for (int s = 0, more = 1; more && rc == 0 && j->barrier_only; s++) {
        double lap[MAX_LAPS], prev = util_now(), ts = prev;
        long n = j->barriers < MAX_LAPS ? j->barriers : MAX_LAPS;
        for (long i = 0; i < n && rc == 0; i++) {
            if (strata_comm_barrier(c, NULL) != STRATA_OK) rc = 1;
            double t = util_now();
            lap[i] = t - prev, prev = t;
        }
        /* every rank's median: the sample is the slowest rank's (as
         * strata bench takes the slowest rank's median call), set by the
         * launcher once all have written theirs */
        if (rc == 0 && r < 64) j->rank_barrier[s][r] = probe_median(lap, n);
        if (rc == 0 && !another(c, j, s, ts, &more)) rc = 1;
    }
    if (rc != 0 && r == 0) snprintf(j->msg, sizeof(j->msg), "%s", strata_comm_errmsg(c));
    util_free(buf);
    strata_comm_destroy(c);
    return rc;
}

/* One launch of `ranks` within `share` s from now; j->taken samples. */
static strata_status_t launch(shm_job_t *j, int ranks, double share, strata_error_t *err)
{
    int code = 1;
    j->t0 = util_now(), j->share = share, j->taken = 0;
    strata_status_t st = strata_launch_fn(ranks, shm_rank, j, 1.0, &code, err);
    if (st != STRATA_OK) return st;
    if (code != 0)
        return strata_error_set(err, STRATA_ERR_SYSTEM, "probe: shm: %d ranks failed: %s", ranks,
                                j->msg[0] ? j->msg : "no message");
    if (j->taken < 1)
        return strata_error_set(err, STRATA_ERR_SYSTEM, "probe: shm: %d ranks took no sample",
                                ranks);
    for (int s = 0; j->barrier_only && s < j->taken; s++)
        j->barrier[s] = strata_probe_slowest(j->rank_barrier[s], ranks < 64 ? ranks : 64);
    return STRATA_OK;
}

/* The barriers at the cores' ranks and at twice them, each launch its
 * share of what is left before `end`; per rank beyond the cores from the
 * samples both took (sample s of each: alike in the host's state as
 * nearly as two launches can be). */
static strata_status_t per_rank(probe_ctx_t *x, shm_job_t *j, double end, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    double fit[PROBE_MAX_REPS], d[PROBE_MAX_REPS];
    res->ranks_fit = res->cores < 2 ? 2 : res->cores;
    res->ranks_over = 2 * res->ranks_fit;
    if (res->ranks_over > 64) return STRATA_OK; /* launcher limit; not measured */
    j->barrier_only = true;
    strata_status_t st = launch(j, res->ranks_fit, probe_share(util_now(), end, 2), err);
    if (st != STRATA_OK) return st;
    memcpy(fit, j->barrier, sizeof(fit));
    int nfit = j->taken;
    if ((st = launch(j, res->ranks_over, probe_share(util_now(), end, 1), err)) != STRATA_OK)
        return st;
    int nover = j->taken, nd = nfit < nover ? nfit : nover;
    double added = res->ranks_over - res->ranks_fit;
    for (int s = 0; s < nd; s++)
        d[s] = (j->barrier[s] - fit[s]) / added;
    if ((st = strata_probe_stat(fit, (size_t)nfit, &res->barrier_fit, err)) ||
        (st = strata_probe_stat(j->barrier, (size_t)nover, &res->barrier_over, err)))
        return st;
    return strata_probe_stat(d, (size_t)nd, &res->per_rank, err);
}

/* ==== The call's own work, one rank ==== */

#define WORK_ITERS 2000
/* The call's own work: each of its figures' budget (s), default and
 * --quick; the shm section keeps WORK_RESERVE of them for it. */
#define WORK_BUDGET       0.01
#define WORK_BUDGET_QUICK 0.002
#define WORK_RESERVE      10

/* The flat call timed alone: the smallest allreduce the engine runs flat
 * (the line slots hold 56 B; 64 B = 16 fp32 is the next size strata bench
 * runs), so its data (copied into the slot, then out: 2 x 64 B, 1-2 ns)
 * is as little as the path allows. */
#define FLAT_WORK_COUNT (PROBE_FLAT_BASE / sizeof(float))

typedef struct work {
    int ranks;          /* inputs reduced: the barrier's rank count */
    strata_comm_t *one; /* a communicator of this thread alone (entry_batch); NULL: none */
    float src[2], out[2];
    float flat_src[FLAT_WORK_COUNT], flat_out[FLAT_WORK_COUNT];
    float tmp[2];
    struct { /* a line slot: the sequence word, then the data beside it */
        uint64_t seq;
        unsigned char data[56];
    } line[COMM_MAX_SIZE] __attribute__((aligned(64)));
} work_t;

/* One pass of the line path's own work (comm.c's dispatch and
 * allreduce_shm.c's comm_small_allreduce, less the exchange that the
 * barrier times): the algorithm for the call, the input copied beside the
 * sequence, every rank's line reduced (its own input for its own part, as
 * the engine reads it), the result copied out. */
static void line_pass(work_t *w)
{
    volatile strata_comm_algo_t a =
        strata_comm_algo_for(NULL, STRATA_COLL_ALLREDUCE, sizeof(w->src), STRATA_COMM_AUTO);
    (void)a;
    memcpy(w->line[0].data, w->src, sizeof(w->src));
    const void *srcs[COMM_MAX_SIZE];
    for (int q = 0; q < w->ranks; q++)
        srcs[q] = q == 0 ? (const void *)w->src : w->line[q].data;
    comm_reduce_n(w->tmp, srcs, w->ranks, 2, STRATA_FP32, STRATA_SUM, w->ranks);
    memcpy(w->out, w->tmp, sizeof(w->out));
    __asm__ volatile("" : : "r"(w) : "memory"); /* the compiler keeps every pass */
}

/* The public call's entry beyond the barrier's, on a communicator of one
 * rank (no peer, no exchange): strata_comm_allreduce of 8 B less
 * strata_comm_barrier, both through the public API, each timed in batches
 * of its own, the difference of their medians (one batch less the other
 * within a sample read below zero under load, 2026-12-03 15:03 UTC). Both
 * enter and sign alike (comm.c begin), and one rank's barrier returns
 * there; the allreduce checks its types and buffers (check_types, in
 * place, the element size) and returns a memmove of its 8 B, which
 * line_pass has priced too (1-2 ns, counted twice). A one-rank allreduce
 * skips the dispatch, the signature's exchange and the reduction, which
 * line_pass times; together they are what the 8 B allreduce does beyond
 * the barrier on this thread. */
static double one_allreduce(void *arg)
{
    work_t *w = arg;
    double t0 = util_now();
    for (int i = 0; i < WORK_ITERS; i++)
        (void)strata_comm_allreduce(w->one, w->src, w->out, 2, STRATA_FP32, STRATA_SUM, NULL);
    return (util_now() - t0) / WORK_ITERS;
}

static double one_barrier(void *arg)
{
    work_t *w = arg;
    double t0 = util_now();
    for (int i = 0; i < WORK_ITERS; i++)
        (void)strata_comm_barrier(w->one, NULL);
    return (util_now() - t0) / WORK_ITERS;
}

/* The flat allreduce's path and the barrier's, through the public call
 * and on into the engine and the line slots, on the one-rank communicator
 * (comm_alone_allreduce, comm_alone_barrier: the public calls return a
 * copy there). Every step a call of two ranks takes on its own core runs,
 * its waits find no peer to wait for: the entry and checks, the algorithm
 * choice, the engine's call set up (eng_init, the layout), the input
 * copied into the slot, the staged word published (signature, count, a
 * fence), the reduction (of one input: a copy), the done word published
 * (a fence), one clock read; the barrier: its entry, one line posted (a
 * fence). */
static double alone_flat(void *arg)
{
    work_t *w = arg;
    double t0 = util_now();
    for (int i = 0; i < WORK_ITERS; i++)
        if (comm_alone_allreduce(w->one, w->flat_src, w->flat_out, FLAT_WORK_COUNT, STRATA_FP32,
                                 STRATA_SUM) != STRATA_OK)
            return -1;
    return (util_now() - t0) / WORK_ITERS;
}

static double alone_barrier(void *arg)
{
    work_t *w = arg;
    double t0 = util_now();
    for (int i = 0; i < WORK_ITERS; i++)
        if (comm_alone_barrier(w->one) != STRATA_OK) return -1;
    return (util_now() - t0) / WORK_ITERS;
}

/* *s less `sub` seconds, its interquartile range kept (as probe_stat_add
 * adds); false, *s untouched, when its median is not above sub. */
static bool stat_less(strata_probe_stat_t *s, double sub)
{
    if (s->n <= 0 || !(s->median > sub)) return false;
    double iqr = s->spread * s->median;
    s->median -= sub, s->min = s->min > sub ? s->min - sub : 0, s->max -= sub;
    s->spread = iqr / s->median;
    return true;
}

/* The flat call's own work (res->flat_work): the one-rank flat call less
 * the one-rank barrier (whose work the two-rank barrier, the model's
 * first synchronisation, already holds) less its clock read (priced on
 * its own), each batch timed on its own and the medians differenced, as
 * the entry's are (call_work). Not measured (a warning) when the flat
 * call does not exceed the other two. */
static strata_status_t flat_work(work_t *w, double budget, strata_probe_result_t *res)
{
    strata_probe_stat_t fl = {0}, bar = {0};
    /* a second pass (the placement moved) keeps nothing of the first's */
    res->flat_work = (strata_probe_stat_t){0}, res->barrier_work = (strata_probe_stat_t){0};
    strata_error_t e1 = {0};
    strata_status_t st = probe_sample(alone_flat, w, budget, &fl, &e1);
    if (st == STRATA_OK) st = probe_sample(alone_barrier, w, budget, &bar, &e1);
    if (st != STRATA_OK) { /* e.g. STRATA_FLAT_MAX under 64 B: not measured, the rest goes on */
        strata_log(STRATA_LOG_WARN, "probe: the flat call's own work not measured (%s)",
                   e1.msg[0] ? e1.msg : strata_status_str(st));
        return STRATA_OK;
    }
    double sub = bar.median + res->clock_read.median;
    if (stat_less(&fl, sub))
        res->flat_work = fl, res->barrier_work = bar;
    else
        strata_log(STRATA_LOG_WARN,
                   "probe: the flat call's own work not measured (one-rank flat call %.1f ns, not "
                   "above its barrier's %.1f ns and a clock read's %.1f ns)",
                   fl.median * 1e9, bar.median * 1e9, res->clock_read.median * 1e9);
    return STRATA_OK;
}

static double line_sample(void *arg)
{
    work_t *w = arg;
    double t0 = util_now();
    for (int i = 0; i < WORK_ITERS; i++)
        line_pass(w);
    return (util_now() - t0) / WORK_ITERS;
}

static double clock_sample(void *arg)
{
    (void)arg;
    volatile double sink = 0;
    double t0 = util_now();
    for (int i = 0; i < WORK_ITERS; i++)
        sink = util_now();
    double t = sink - t0; /* WORK_ITERS reads between the first and the last */
    return t / WORK_ITERS;
}

static strata_status_t call_work(probe_ctx_t *x, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    work_t w = {.ranks = res->ranks_fit > 1 && res->ranks_fit <= COMM_MAX_SIZE ? res->ranks_fit : 2,
                .src = {1, 2}};
    for (int q = 0; q < COMM_MAX_SIZE; q++)
        memcpy(w.line[q].data, w.src, sizeof(w.src));
    double budget = x->opts->quick ? WORK_BUDGET_QUICK : WORK_BUDGET;
    strata_status_t st = probe_sample(clock_sample, NULL, budget, &res->clock_read, err);
    /* the median over STRATA_PROBE_ADD_CHAINS chains of each one's
     * fastest (strata_probe_add_rate: the minimum rejects a preemption,
     * the median one lucky chain); before, the median of single timings,
     * which read 0.27-0.30 ns in some runs and 0.43-0.60 in others */
    if (st == STRATA_OK)
        st = probe_add_chains(STRATA_PROBE_ADD_CHAINS, PROBE_ADD_REPEATS, &res->add_time, err);
    if (st != STRATA_OK) return st;
    /* the public entry on a one-rank communicator ("local": a socket in
     * the runtime directory, named by the token; nothing waits on a peer) */
    char token[64];
    snprintf(token, sizeof token, "probe-entry-%ld", (long)getpid());
    strata_error_t e1 = {0};
    if (strata_comm_init(0, 1, "local", token, 5, &w.one, &e1) != STRATA_OK) {
        strata_log(STRATA_LOG_WARN, "probe: the call's entry not timed (one-rank communicator: %s)",
                   e1.msg);
        w.one = NULL;
    }
    strata_probe_stat_t ar = {0}, bar = {0};
    res->flat_work = (strata_probe_stat_t){0}, res->barrier_work = (strata_probe_stat_t){0};
    if (w.one) {
        st = probe_sample(one_allreduce, &w, budget / 2, &ar, err);
        if (st == STRATA_OK) st = probe_sample(one_barrier, &w, budget / 2, &bar, err);
        if (st == STRATA_OK) st = flat_work(&w, budget / 2, res);
        strata_comm_destroy(w.one);
    }
    if (st == STRATA_OK) st = probe_sample(line_sample, &w, budget, &res->line_work, err);
    if (st == STRATA_OK && ar.n > 0 && bar.n > 0) {
        if (ar.median > bar.median)
            probe_stat_add(&res->line_work, ar.median - bar.median);
        else /* noise between the two batches: the entry is not priced */
            strata_log(STRATA_LOG_WARN,
                       "probe: the call's entry not added (one-rank allreduce %.1f ns, not above "
                       "its barrier's %.1f ns)",
                       ar.median * 1e9, bar.median * 1e9);
    }
    return st;
}

strata_status_t probe_shm(probe_ctx_t *x, double budget, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    shm_job_t *j =
        mmap(NULL, sizeof(*j), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (j == MAP_FAILED) return strata_error_set(err, STRATA_ERR_SYSTEM, "probe: mmap failed");
    bool quick = x->opts->quick;
    /* at most the counts these took before they held a plan (5 / 15) */
    *j = (shm_job_t){.samples = quick ? 5 : 15,
                     .nsizes = quick ? NSIZES - 1 : NSIZES,
                     .quick = quick,
                     .barriers = quick ? 300 : 2000};
    res->shm_bw_bytes = sizes[j->nsizes - 1];
    setenv("STRATA_TIMEOUT", "30", 0);
    /* three launches share what is left of the section before the call's
     * own work, which keeps WORK_RESERVE of its budgets (its samples take
     * about five of them, and a one-rank communicator's start) */
    double end = x->deadline - WORK_RESERVE * (quick ? WORK_BUDGET_QUICK : WORK_BUDGET);
    strata_status_t st = launch(j, 2, probe_share(util_now(), end, 3), err);
    probe_tick(x, budget, 0.4);
    double bw[PROBE_MAX_REPS];
    int n = j->taken;
    res->shm_curve_n = j->nsizes;
    for (int z = 0; z < j->nsizes && st == STRATA_OK; z++) {
        res->shm_curve_bytes[z] = (double)sizes[z];
        st = strata_probe_stat(j->oneway[z], (size_t)n, &res->shm_oneway[z], err);
    }
    if (st == STRATA_OK) {
        int z = j->nsizes - 1;
        res->shm_alpha = res->shm_oneway[0];
        for (int s = 0; s < n; s++) /* α of the same sample: both saw the same load */
            bw[s] = strata_probe_bandwidth((double)sizes[z], j->oneway[z][s] - j->oneway[0][s]);
        st = strata_probe_stat(bw, (size_t)n, &res->shm_bw, err);
    }
    if (st == STRATA_OK) st = per_rank(x, j, end, err);
    if (st == STRATA_OK) st = call_work(x, err);
    probe_tick(x, budget, 1);
    munmap(j, sizeof(*j));
    return st;
}
