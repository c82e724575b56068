/*
 * c2c.c — coherence: the one-way latency of handing a cache line from one
 * core to another, for every pair of the cores this process may use.
 *
 * Two threads, pinned to cores i and j, ping-pong a counter in one 64-byte
 * line: i writes an odd value and waits for the next even one, j answers.
 * Each hand-off moves the line (in Modified state) to the other core's
 * cache, so a batch of N round trips takes 2N transfers; a sample is the
 * batch time / 2N. The waits are bounded: a side that sees no progress for
 * 1 s gives up (a pinned peer that never runs: another process holding
 * its cpu under SCHED_FIFO, or load 8-20 with six spinners on this 2-cpu
 * host, 2026-12-03); the pair is tried again while the section's give-up
 * time (its budget + one stall bound from its start) has not passed, and
 * when it still fails the matrix is not measured (res->c2c_note says why)
 * and the probe goes on. A pair takes samples while one more, as long as
 * the last, ends within its share of what is left of the section
 * (probe_more): on a loaded host a round trip waits for both threads to
 * be scheduled (milliseconds, not 100 ns), and the fixed count of samples
 * took 15-53 s instead of the 0.6 s planned at load 18-21; once the share
 * has passed, a sample ends after TRIPS_MIN round trips.
 * The matrix entry is the median over samples; c2c_all summarises every
 * sample of every pair (the figure the model and the bottleneck use).
 */
#define _GNU_SOURCE
#include "probe.h"

#include "comm.h" /* the engine's reduction kernel */

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdalign.h>
#include <string.h>

#define TRIPS     100
#define TRIPS_MIN 10 /* a sample cut short at its share's end: 20 transfers */
#define STALL_S   1.0

/* The test hook (probe_c2c_test_hook): attempts whose side b stalls, and
 * their stall bound (the probe runs one section at a time, on one
 * thread); the other attempts keep STALL_S */
static int g_stalls;
static double g_stall_s = STALL_S;

void probe_c2c_test_hook(int stalls, double stall_s)
{
    g_stalls = stalls > 0 ? stalls : 0;
    g_stall_s = stall_s > 0 ? stall_s : STALL_S;
}

typedef struct pingpong {
    alignas(64) _Atomic uint64_t line;
    alignas(64) int cpu_a, cpu_b;
    int samples, taken; /* at most; recorded by side a */
    double share;       /* the pair's: side a's samples end within it (probe_more) */
    double stall_s;     /* a side's bound without progress */
    bool stall_b;       /* test hook: side b never answers */
    double out[PROBE_MAX_REPS];
    atomic_bool failed, stop;
} pingpong_t;

/* Wait until *p reaches v; false when stall_s passes without it, or (quit
 * not NULL) once *quit is set: the other side gave up. With
 * pause, a pause between polls as the engine's waits spin
 * (comm_wait_step), so that the poller does not keep taking the line the
 * peer is about to store to (the flat round without it: the rounds
 * without data cost as much as those with, now and then more; 2 of 16
 * pairs of blocks came out positive at 256 B). */
static bool wait_until(_Atomic uint64_t *p, uint64_t v, bool pause, double stall_s,
                       _Atomic bool *quit)
{
    for (unsigned spins = 0;; spins++) {
        if (atomic_load_explicit(p, memory_order_acquire) >= v) return true;
#if defined(__x86_64__) || defined(__i386__)
        if (pause) __builtin_ia32_pause();
#endif
        if ((spins & 1023) == 1023) {
            static _Thread_local double since;
            if (quit && atomic_load(quit)) return false;
            if (spins == 1023)
                since = util_now();
            else if (util_now() - since > stall_s)
                return false;
            sched_yield();
        }
    }
}

/* A ping-pong side's wait: it leaves as soon as the other side gave up
 * (failed), so that a failed attempt takes one stall bound, not two. */
static bool wait_for(pingpong_t *pp, uint64_t v)
{
    return wait_until(&pp->line, v, false, pp->stall_s, &pp->failed);
}

static void *side_b(void *arg)
{
    pingpong_t *pp = arg;
    probe_pin(pp->cpu_b);
    if (pp->stall_b) { /* test hook: never answers; leaves when a gives up */
        while (!atomic_load(&pp->failed) && !atomic_load(&pp->stop))
            sched_yield();
        return NULL;
    }
    uint64_t total = (uint64_t)pp->samples * TRIPS;
    for (uint64_t k = 1; k <= total && !atomic_load(&pp->failed); k++) {
        if (!wait_for(pp, 2 * k - 1)) {
            atomic_store(&pp->failed, true);
            break;
        }
        if (atomic_load(&pp->stop)) break; /* side a took its last sample */
        atomic_store_explicit(&pp->line, 2 * k, memory_order_release);
    }
    return NULL;
}

static void *side_a(void *arg)
{
    pingpong_t *pp = arg;
    probe_pin(pp->cpu_a);
    uint64_t k = 0;
    double begin = util_now(), end = begin + pp->share;
    for (int s = 0; s < pp->samples && !atomic_load(&pp->failed); s++) {
        double t0 = util_now();
        int i = 0;
        for (; i < TRIPS; i++) {
            /* past the share: the sample ends with the trips it has */
            if (i >= TRIPS_MIN && (i - TRIPS_MIN) % 8 == 0 && util_now() > end) break;
            k++;
            atomic_store_explicit(&pp->line, 2 * k - 1, memory_order_release);
            if (!wait_for(pp, 2 * k)) {
                atomic_store(&pp->failed, true);
                goto out; /* side b, when it runs, sees the end below */
            }
        }
        double t1 = util_now();
        pp->out[s] = (t1 - t0) / (2.0 * i);
        pp->taken = s + 1;
        if (!probe_more(pp->taken, pp->samples, t1 - begin, t1 - t0, pp->share)) break;
    }
out:
    /* no more trips (or a stall): side b's wait for the next odd value
     * ends, it sees stop */
    atomic_store(&pp->stop, true);
    atomic_store_explicit(&pp->line, UINT64_MAX, memory_order_release);
    return NULL;
}

/* Median one-way latency between cpus a and b within share s; samples
 * appended to all. A stall (STRATA_ERR_TIMEOUT) is tried again, fresh
 * threads, while util_now() < give_up. */
static strata_status_t pair_once(int a, int b, int samples, double share, double *all, int *nall,
                                 double *median, strata_error_t *err)
{
    static pingpong_t g_pp; /* static: aligned to its line (the probe runs on one thread) */
    pingpong_t *pp = &g_pp;
    pthread_t ta, tb;
    *pp = (pingpong_t){.cpu_a = a,
                       .cpu_b = b,
                       .samples = samples,
                       .share = share,
                       .stall_s = g_stalls > 0 ? g_stall_s : STALL_S,
                       .stall_b = g_stalls > 0};
    if (g_stalls > 0) g_stalls--;
    atomic_init(&pp->line, 0);
    strata_status_t st = STRATA_OK;
    if (pthread_create(&tb, NULL, side_b, pp) != 0) {
        return strata_error_set(err, STRATA_ERR_SYSTEM, "probe: cannot start a thread");
    }
    if (pthread_create(&ta, NULL, side_a, pp) != 0) {
        atomic_store(&pp->failed, true);
        st = strata_error_set(err, STRATA_ERR_SYSTEM, "probe: cannot start a thread");
    } else {
        pthread_join(ta, NULL);
    }
    pthread_join(tb, NULL);
    if (st == STRATA_OK && atomic_load(&pp->failed))
        st = strata_error_set(err, STRATA_ERR_TIMEOUT,
                              "probe: coherence: cpu %d or %d made no progress for %.0f ms "
                              "(pinned thread not scheduled)",
                              a, b, pp->stall_s * 1e3);
    strata_probe_stat_t s;
    if (st == STRATA_OK) st = strata_probe_stat(pp->out, (size_t)pp->taken, &s, err);
    if (st == STRATA_OK) {
        *median = s.median;
        for (int i = 0; i < pp->taken && *nall < PROBE_MAX_REPS * 64; i++)
            all[(*nall)++] = pp->out[i];
    }
    return st;
}

static strata_status_t pair(int a, int b, int samples, double share, double give_up, double *all,
                            int *nall, double *median, int *tries, strata_error_t *err)
{
    strata_status_t st;
    do {
        ++*tries;
        st = pair_once(a, b, samples, share, all, nall, median, err);
    } while (st == STRATA_ERR_TIMEOUT && util_now() < give_up);
    return st;
}

/* The matrix's pairs within a socket and across sockets, summarised. */
strata_status_t probe_c2c_by_socket(strata_probe_result_t *res, strata_error_t *err)
{
    int n = res->cores, nw = 0, na = 0;
    double *w = util_malloc(sizeof(double) * (size_t)(n * n)),
           *a = util_malloc(sizeof(double) * (size_t)(n * n));
    strata_status_t st = STRATA_OK;
    if (!w || !a) st = strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && st == STRATA_OK; i++)
        for (int j = i + 1; j < n; j++) {
            if (res->package[i] == res->package[j])
                w[nw++] = res->c2c[i][j];
            else
                a[na++] = res->c2c[i][j];
        }
    if (st == STRATA_OK && nw) st = strata_probe_stat(w, (size_t)nw, &res->c2c_within, err);
    if (st == STRATA_OK && na) st = strata_probe_stat(a, (size_t)na, &res->c2c_across, err);
    util_free(w), util_free(a);
    return st;
}

/* Every pair of res's cpus within budget s: the matrix into m (NULL: not
 * kept) and every sample of every pair summarised in *all_p. x (NULL: no
 * bar) is ticked per pair. Each pair's share is what is left of the
 * budget over the pairs left; a stall is retried until the budget and one
 * stall bound have passed, then STRATA_ERR_TIMEOUT (*tries attempts). */
static strata_status_t all_pairs(probe_ctx_t *x, strata_probe_result_t *res, double budget,
                                 double (*m)[STRATA_PROBE_CORES_MAX], strata_probe_stat_t *all_p,
                                 int *tries, strata_error_t *err)
{
    int n = res->cores, pairs = n * (n - 1) / 2, done = 0, nall = 0;
    *tries = 0;
    if (pairs == 0) return STRATA_OK;
    /* ~0.1 ms per round trip pair of samples on a quiet host; keep within budget */
    int samples = (int)(budget / pairs / (TRIPS * 2 * 200e-9)) / 4;
    if (samples < PROBE_MIN_REPS) samples = PROBE_MIN_REPS;
    if (samples > PROBE_MAX_REPS - 1) samples = PROBE_MAX_REPS - 1;
    double *all = util_malloc(sizeof(double) * PROBE_MAX_REPS * 64);
    if (!all) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    double t0 = util_now(), deadline = t0 + budget, give_up = deadline + STALL_S;
    strata_status_t st = STRATA_OK;
    for (int i = 0; i < n && st == STRATA_OK; i++)
        for (int j = i + 1; j < n && st == STRATA_OK; j++) {
            double med = 0, share = probe_share(util_now(), deadline, pairs - done);
            st = pair(res->cpus[i], res->cpus[j], samples, share, give_up, all, &nall, &med, tries,
                      err);
            if (m) m[i][j] = m[j][i] = med;
            if (x) probe_tick(x, budget, (double)++done / pairs);
        }
    if (st == STRATA_OK) st = strata_probe_stat(all, (size_t)nall, all_p, err);
    util_free(all);
    return st;
}

strata_status_t probe_c2c(probe_ctx_t *x, double budget, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    int tries = 0;
    strata_error_t mine = {0}, *e = err ? err : &mine;
    res->c2c_note[0] = '\0';
    double t0 = util_now();
    strata_status_t st = all_pairs(x, res, budget, res->c2c, &res->c2c_all, &tries, e);
    if (st == STRATA_ERR_TIMEOUT) { /* not measured, said; the probe goes on */
        snprintf(res->c2c_note, sizeof(res->c2c_note), "%.200s, %d tries in %.1f s", e->msg, tries,
                 util_now() - t0);
        strata_log(STRATA_LOG_WARN, "probe: the coherence matrix was not measured: %s",
                   res->c2c_note);
        memset(res->c2c, 0, sizeof(res->c2c));
        memset(&res->c2c_all, 0, sizeof(res->c2c_all));
        /* a first pass's per-socket figures are not this matrix's */
        memset(&res->c2c_within, 0, sizeof(res->c2c_within));
        memset(&res->c2c_across, 0, sizeof(res->c2c_across));
        return STRATA_OK;
    }
    if (st == STRATA_OK && res->packages > 1) st = probe_c2c_by_socket(res, err);
    return st;
}

strata_status_t probe_line_reading(strata_probe_result_t *res, double budget,
                                   strata_probe_stat_t *s_p, strata_error_t *err)
{
    int tries = 0;
    strata_error_t mine = {0}, *e = err ? err : &mine;
    strata_status_t st = all_pairs(NULL, res, budget, NULL, s_p, &tries, e);
    if (st == STRATA_ERR_TIMEOUT) { /* no reading: 0 samples, the placement not judged by it */
        strata_log(STRATA_LOG_WARN, "probe: a placement reading was not taken: %s (%d tries)",
                   e->msg, tries);
        memset(s_p, 0, sizeof(*s_p));
        return STRATA_OK;
    }
    return st;
}

/* ==== Bytes another core wrote ==== */

/* Hand-over bandwidth: bytes one core writes and the other core then
 * copies out — what strata's engine does with every staged and reduced
 * slice, both cores at once (every rank stages and pulls at the same
 * time). HO_COPY and HO_REDUCE run the pipeline's round (pipe_round,
 * below: a pipeline slice is 2 KiB at 4 KiB and 2 ranks, so the curve
 * keeps that pattern at every size); HO_FLAT the flat path's (up to
 * STRATA_DIRECT_FLAT_MAX), back to back with its flags as the engine runs
 * it (flat_side, below). Each timed part ends with a full fence, as each of the
 * engine's phases ends with one (it publishes its flag behind a seq_cst
 * fence, comm_posted): without it the timer stops while a few KiB of
 * stores still wait in the store buffer for their lines, and the cost of
 * taking the lines back falls outside both timed parts (a standalone copy
 * of this loop, 2-8 KiB: the write 0.03-0.17 us unfenced, 0.4-0.75 us
 * fenced; bench/README.md "probe"). The write is a memcpy from a private
 * input, as the engine stages (memset instead: 32 KiB copied out 2.6
 * against 1.75 us). */
/* The engine stages into COMM_DEPTH = 3 slots in turn (comm.h,
 * docs/runtime.md), so a slot is rewritten three calls after the peer read
 * it, not one: by then a slice of 32-64 KiB has left the peer's L1, and
 * the stores take the lines back faster (one reused buffer measured 6.5
 * GB/s at 32-64 KiB, three in turn 10 GB/s; bench/README.md "probe"). */
#define HANDOVER_SLOTS 3

/* What a round times: the pipeline's hand-over (stage + gather), the flat
 * path's (what the write and the sum with the peer's slot add to its
 * round), or the
 * pipeline's reduction alone. */
typedef enum { HO_COPY, HO_FLAT, HO_REDUCE, HO_STREAM } ho_mode_t;

/* A rank's flags in the flat round, each in its own line as the engine's
 * (comm_rank_lines_t): staged = round + 1 once its slot holds the round's
 * input, done = round + 1 once it has read the peer's slot. */
typedef struct flat_flags {
    alignas(64) _Atomic uint64_t staged;
    alignas(64) _Atomic uint64_t done;
} flat_flags_t;

typedef struct remote {
    _Atomic uint64_t arrived; /* both threads add 1 per phase */
    int cpu[2], rounds;
    size_t bytes;
    unsigned char *block; /* HO_COPY, HO_REDUCE: every buffer (probe_ho_layout) */
    unsigned char *shared[2][HANDOVER_SLOTS], *mine[2], *input[2];
    double t[2][PROBE_MAX_REPS];
    double *lap[2]; /* HO_FLAT: every round's lap */
    flat_flags_t flags[2];
    atomic_bool failed;
    ho_mode_t mode;
    double stall_s; /* a side's bound without progress */
    size_t sweep;   /* HO_STREAM: the vectors' length (0: one slice, rewritten each round) */
    double tr[2][PROBE_MAX_REPS]; /* HO_STREAM: the reduction's part */
} remote_t;

typedef struct remote_side {
    remote_t *x;
    int me;
} remote_side_t;

/* Arrive at phase p and wait for the other thread, as the engine waits
 * between its phases: polling with a pause, so that the yield (after 1024
 * polls) comes only when the peer is off its core, never for the few
 * microseconds one thread's phase outlasts the other's. The engine spins
 * 256 pauses (shm.c, default_spin_limit: ~6 us) before it yields; the
 * probe's rounds once yielded after 1024 bare polls (~1 us), and on a
 * loaded host each such yield let another process run on the core, so the
 * next phase found its lines gone: the reduction read 21-23 GB/s at
 * 64-128 KiB where the same round polling with pauses (or without yields)
 * reads 29-31, and a bare system call in place of the yield costs nothing
 * (bench/comm/reduceround.c; bench/README.md, "Issue 19, session 10"). */
static bool phase(remote_t *x, uint64_t p)
{
    atomic_fetch_add(&x->arrived, 1);
    if (wait_until(&x->arrived, 2 * (p + 1), true, x->stall_s, NULL)) return true;
    atomic_store(&x->failed, true);
    return false;
}

/* Above STRATA_DIRECT_FLAT_MAX the engine's round (allreduce_shm.c, at 2
 * ranks) has three phases, and the stores of each land on lines the
 * storing core last read: stage (its own slot, which it read out in the
 * gather three chunks before), reduce (the peer's staged copy it has just
 * read is overwritten with the sum, in STRATA_DIRECT_BLOCK blocks) and
 * gather (its own slot, where the peer left its sum, copied out). Only
 * the loads cross cores (bench/comm/linehome.c: 128 KiB stored in 2.6 us
 * into lines this core last read, 5.7 us into lines the peer read). A
 * round here runs the three, each fenced, and keeps the hand-over (stage
 * + gather, HO_COPY) or the reduction alone (HO_REDUCE). The own slice's
 * copy to the output, which the engine interleaves block by block, is
 * left out: the model prices it from the copy curve at a block. */
static void pipe_round(remote_t *x, int me, int k, const unsigned char *in_stage,
                       const unsigned char *in_red, unsigned char *out)
{
    int other = 1 - me, z = k % HANDOVER_SLOTS;
    double t0 = util_now();
    memcpy(x->shared[me][z], in_stage, x->bytes);
    comm_fence_seq_cst();
    double tw = util_now() - t0;
    if (!phase(x, 3 * (uint64_t)k)) return;
    unsigned char *peer = x->shared[other][z];
    t0 = util_now();
    for (size_t o = 0; o < x->bytes; o += STRATA_DIRECT_BLOCK) {
        size_t m = x->bytes - o < STRATA_DIRECT_BLOCK ? x->bytes - o : STRATA_DIRECT_BLOCK;
        comm_reduce2(peer + o, in_red + o, peer + o, m / sizeof(float), STRATA_FP32, STRATA_SUM);
    }
    comm_fence_seq_cst();
    double tr = util_now() - t0;
    if (!phase(x, 3 * (uint64_t)k + 1)) return;
    t0 = util_now();
    memcpy(out, x->shared[me][z], x->bytes);
    comm_fence_seq_cst();
    x->t[me][k] = x->mode == HO_REDUCE ? tr : tw + util_now() - t0;
    x->tr[me][k] = tr;
    phase(x, 3 * (uint64_t)k + 2);
}

static void *remote_side(void *arg)
{
    remote_side_t *sd = arg;
    remote_t *x = sd->x;
    int me = sd->me;
    probe_pin(x->cpu[me]);
    if (x->sweep) { /* own pages; the input first, so that every chunk of
                     * it has at least the whole output written after it */
        memset(x->input[me], me + 1, x->sweep);
        memset(x->mine[me], 0, x->sweep);
    } else {
        memset(x->mine[me], 0, x->bytes); /* own pages, in own cache */
    }
    for (int k = 0; k < x->rounds && !atomic_load(&x->failed); k++) {
        if (!x->sweep) {
            memset(x->input[me], k + 1, x->bytes); /* untimed: the engine's input is ready */
            pipe_round(x, me, k, x->input[me], x->input[me], x->mine[me]);
            continue;
        }
        /* the engine's chunk k of two slices: it stages the peer's slice,
         * reduces its own, gathers the peer's sum into the output */
        size_t c = (size_t)k * 2 * x->bytes % x->sweep;
        unsigned char *in = x->input[me] + c, *out = x->mine[me] + c;
        pipe_round(x, me, k, in + (size_t)(1 - me) * x->bytes, in + (size_t)me * x->bytes,
                   out + (size_t)(1 - me) * x->bytes);
    }
    return NULL;
}

/* The flat allreduce's round (allreduce_shm.c, flat(), at 2 ranks), run
 * back to back as a program calls it: round k waits until the peer's done
 * shows round k - 2 (its slot is reused three rounds later), copies the
 * input into slot k % 3, publishes staged behind a full fence (the
 * engine's comm_posted), waits for the peer's staged, sums the peer's slot
 * with its own private input into its output and publishes done. Its own
 * part from the input, not from its slot, as the engine reads it (flat():
 * the peer has just read that slot, and a line another core read has
 * moved to that core, so reading it back is one more transfer a line: the
 * round that summed both slots read 1 KiB at 4.2 GB/s where the engine's
 * whole call took 0.27 us; bench/README.md, "s12-h19"). Per round, then,
 * as the engine: two flags handed over (staged, done), the slot's lines
 * taken back by its stores and loaded once by the peer. Rounds alternate in blocks of
 * FLAT_BLOCK without the copy and the sum (the synchronisation alone) and
 * with them. A round's lap is its end to the previous round's end.
 * Back to back, a round's stores to its slot take the lines back from the
 * peer while its staged flag's store does the same for the flag's line,
 * and the fence waits for all at once: the stores cost next to nothing
 * beyond the flag, and the loads of the peer's lines one transfer, in
 * parallel (bench/comm/flatround.c at 256 B: a round 0.17-0.20 us beyond
 * the flags alone, where the write and the sum timed one after the
 * other, each fenced, behind a barrier, took 0.36 us; bench/README.md,
 * "Issue 19, session 8"). */
static void *flat_side(void *arg)
{
    remote_side_t *sd = arg;
    remote_t *x = sd->x;
    int me = sd->me, other = 1 - me;
    probe_pin(x->cpu[me]);
    memset(x->mine[me], 0, x->bytes);
    memset(x->input[me], me + 1, x->bytes);
    double prev = util_now();
    for (int k = 0; k < x->rounds && !atomic_load(&x->failed); k++) {
        bool data = (k / FLAT_BLOCK) % 2 == 1;
        uint64_t r = (uint64_t)k;
        int z = k % HANDOVER_SLOTS;
        if (k >= HANDOVER_SLOTS &&
            !wait_until(&x->flags[other].done, r - HANDOVER_SLOTS + 1, true, x->stall_s, NULL)) {
            atomic_store(&x->failed, true);
            break;
        }
        if (data) memcpy(x->shared[me][z], x->input[me], x->bytes);
        atomic_store_explicit(&x->flags[me].staged, r + 1, memory_order_release);
        comm_fence_seq_cst();
        if (!wait_until(&x->flags[other].staged, r + 1, true, x->stall_s, NULL)) {
            atomic_store(&x->failed, true);
            break;
        }
        if (data) {
            const void *src[2] = {x->shared[0][z], x->shared[1][z]};
            src[me] = x->input[me];
            comm_reduce_n(x->mine[me], src, 2, x->bytes / sizeof(float), STRATA_FP32, STRATA_SUM,
                          2);
        }
        atomic_store_explicit(&x->flags[me].done, r + 1, memory_order_release);
        comm_fence_seq_cst();
        double t = util_now();
        x->lap[me][k] = t - prev, prev = t;
    }
    return NULL;
}

/* The flat round's samples (probe.h), one per FLAT_SEG pairs of blocks: bytes / the
 * cost data adds to a round — the median lap of the segment's rounds with
 * data minus that of its rounds without (as strata bench reports a call's
 * median lap), the mean of the two threads; each block's first two rounds
 * left out (they follow a round of the other kind). Both laps carry one
 * clock read, which cancels. Per-block medians of 30 laps moved the
 * difference by 2x between blocks at 256 B (the two threads fall into
 * one or the other order at the flags for a while), those of 240 laps
 * did not. Returns how many samples were positive; -1 out of memory. */
int probe_flat_samples(double *const lap[2], int rounds, size_t bytes, double *bw)
{
    int segs = rounds / (2 * FLAT_BLOCK * FLAT_SEG), n = 0, per = FLAT_SEG * (FLAT_BLOCK - 2);
    double *sync = util_malloc(sizeof(double) * (size_t)per),
           *data = util_malloc(sizeof(double) * (size_t)per);
    if (!sync || !data) n = -1;
    for (int j = 0; j < segs && n >= 0; j++) {
        double d = 0;
        for (int me = 0; me < 2; me++) {
            int m = 0;
            for (int b = 0; b < FLAT_SEG; b++) {
                int k0 = (j * FLAT_SEG + b) * 2 * FLAT_BLOCK;
                for (int i = 2; i < FLAT_BLOCK; i++, m++) {
                    sync[m] = lap[me][k0 + i];
                    data[m] = lap[me][k0 + FLAT_BLOCK + i];
                }
            }
            d += (probe_median(data, m) - probe_median(sync, m)) / 2;
        }
        if (d > 0) bw[n++] = strata_probe_bandwidth((double)bytes, d);
    }
    util_free(sync), util_free(data);
    return n;
}

int probe_flat_sync(double *const lap[2], int rounds, double *sync)
{
    int segs = rounds / (2 * FLAT_BLOCK * FLAT_SEG), per = FLAT_SEG * (FLAT_BLOCK - 2);
    double *v = util_malloc(sizeof(double) * (size_t)per);
    if (!v) return -1;
    for (int j = 0; j < segs; j++) {
        sync[j] = 0;
        for (int me = 0; me < 2; me++) {
            int m = 0;
            for (int b = 0; b < FLAT_SEG; b++)
                for (int i = 2; i < FLAT_BLOCK; i++)
                    v[m++] = lap[me][(j * FLAT_SEG + b) * 2 * FLAT_BLOCK + i];
            sync[j] += probe_median(v, m) / 2;
        }
    }
    util_free(v);
    return segs;
}

/* The rounds by name: a figure not measured and a stall say which. */
static const char *const round_name[] = {"hand-over", "flat round", "pipeline reduction",
                                         "streamed pipeline round"};

/* The test hook (probe_remote_test_hook): attempts of one round at one
 * size whose second side never starts, and their stall bound. */
static int g_ho_mode = -1, g_ho_stalls;
static double g_ho_bytes, g_ho_stall_s = STALL_S;

void probe_remote_test_hook(int mode, double bytes, int stalls, double stall_s)
{
    g_ho_mode = mode, g_ho_bytes = bytes;
    g_ho_stalls = stalls > 0 ? stalls : 0;
    g_ho_stall_s = stall_s > 0 ? stall_s : STALL_S;
}

int probe_remote_test_left(void)
{
    return g_ho_stalls;
}

/* ==== The pipeline round's buffers ==== */

/* The pipeline round's buffers as the engine has them (probe.h,
 * probe_ho_layout). Their alignment sets the hand-over's rate at the
 * pipeline's slices: malloc'd side by side (16 bytes aligned, heap
 * neighbours) the 16 KiB hand-over read 7.8-8.9 GB/s where page-aligned
 * slots read 10.6-16.0 (bench/README.md, "Session 17, after CI"), while
 * the engine's slots are page-aligned in its segment (shm.c,
 * comm_layout: the regions start on a page, COMM_REGION apart) and its
 * input and output are the caller's. */
#define HO_PAGE     4096u
#define HO_USER_OFF 16u /* glibc: an mmap'd chunk's header */

static size_t ho_pages(size_t bytes)
{
    return (bytes + HO_PAGE - 1) / HO_PAGE * HO_PAGE;
}

void probe_ho_layout(size_t bytes, size_t vec, probe_ho_layout_t *l_p)
{
    probe_ho_layout_t l = {.region = COMM_REGION, .user_off = HO_USER_OFF};
    if (ho_pages(bytes) > l.region) l.region = ho_pages(bytes);
    l.span = ho_pages(vec + HO_USER_OFF);
    l.total = 2 * HANDOVER_SLOTS * l.region + 4 * l.span;
    *l_p = l;
}

size_t probe_ho_slot(const probe_ho_layout_t *l, int r, int z)
{
    return ((size_t)r * HANDOVER_SLOTS + (size_t)z) * l->region;
}

size_t probe_ho_input(const probe_ho_layout_t *l, int r)
{
    return 2 * HANDOVER_SLOTS * l->region + (size_t)(2 * r) * l->span + l->user_off;
}

size_t probe_ho_output(const probe_ho_layout_t *l, int r)
{
    return probe_ho_input(l, r) + l->span;
}

size_t probe_stream_sweep(size_t slice, int rounds, size_t llc)
{
    size_t chunk = 2 * slice, walk = (size_t)rounds * chunk;
    size_t half = (llc / 2 + chunk - 1) / chunk * chunk;
    if (half > PROBE_STREAM_SWEEP_MAX) half = PROBE_STREAM_SWEEP_MAX / chunk * chunk;
    return walk > half ? walk : half;
}

/* Every buffer of x's pipeline round in one block (x->block, NULL when
 * out of memory), laid out by probe_ho_layout from a page boundary. */
static bool ho_place(remote_t *x)
{
    probe_ho_layout_t l;
    probe_ho_layout(x->bytes, x->sweep ? x->sweep : x->bytes, &l);
    x->block = util_malloc(l.total + HO_PAGE);
    if (!x->block) return false;
    uintptr_t b = ((uintptr_t)x->block + HO_PAGE - 1) / HO_PAGE * HO_PAGE;
    unsigned char *base = x->block + (b - (uintptr_t)x->block);
    for (int r = 0; r < 2; r++) {
        for (int z = 0; z < HANDOVER_SLOTS; z++)
            x->shared[r][z] = base + probe_ho_slot(&l, r, z);
        x->input[r] = base + probe_ho_input(&l, r);
        x->mine[r] = base + probe_ho_output(&l, r);
    }
    return true;
}

static strata_status_t remote_size(int a, int b, size_t bytes, int rounds, ho_mode_t mode,
                                   strata_probe_stat_t *s, strata_probe_stat_t *sync_p,
                                   strata_error_t *err)
{
    remote_t *x = util_malloc(sizeof(*x));
    if (!x) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    /* the hook's attempt starts one side only: a pinned thread that never runs */
    bool hooked = g_ho_stalls > 0 && (int)mode == g_ho_mode && (double)bytes == g_ho_bytes;
    if (hooked) g_ho_stalls--;
    *x = (remote_t){.cpu = {a, b},
                    .rounds = rounds,
                    .bytes = bytes,
                    .mode = mode,
                    .stall_s = hooked ? g_ho_stall_s : STALL_S};
    atomic_init(&x->arrived, 0);
    atomic_init(&x->failed, false);
    strata_status_t st = STRATA_OK;
    /* the flat round keeps its buffers malloc'd apiece, as it was
     * measured and its figures read (up to 2 KiB: within a few lines) */
    if (mode == HO_STREAM) x->sweep = probe_stream_sweep(bytes, PROBE_MAX_REPS, comm_llc_bytes());
    if (mode != HO_FLAT && !ho_place(x))
        st = strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    for (int i = 0; i < 2 && mode == HO_FLAT; i++) {
        x->mine[i] = util_malloc(bytes);
        x->input[i] = util_malloc(bytes);
        bool ok = x->mine[i] != NULL && x->input[i] != NULL;
        for (int j = 0; j < HANDOVER_SLOTS; j++)
            ok = (x->shared[i][j] = util_malloc(bytes)) && ok;
        ok = (x->lap[i] = util_malloc(sizeof(double) * (size_t)rounds)) && ok;
        if (!ok) st = strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    }
    remote_side_t sd[2] = {{x, 0}, {x, 1}};
    pthread_t th[2];
    int started = 0;
    for (; started < (hooked ? 1 : 2) && st == STRATA_OK; started++)
        if (pthread_create(&th[started], NULL, mode == HO_FLAT ? flat_side : remote_side,
                           &sd[started]) != 0) {
            atomic_store(&x->failed, true);
            st = strata_error_set(err, STRATA_ERR_SYSTEM, "probe: cannot start a thread");
            break;
        }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    /* named by the round, so that a stall on a loaded host says where */
    if (st == STRATA_OK && atomic_load(&x->failed))
        st = strata_error_set(err, STRATA_ERR_TIMEOUT,
                              "probe: coherence: %s at %zu B: cpu %d or %d made no progress for "
                              "%.0f ms",
                              round_name[mode], bytes, a, b, x->stall_s * 1e3);
    double bw[PROBE_MAX_REPS], clk = probe_clock_cost();
    if (mode == HO_FLAT && st == STRATA_OK) {
        int n = probe_flat_samples(x->lap, rounds, bytes, bw);
        st = n < 0 ? strata_error_set(err, STRATA_ERR_NOMEM, "out of memory")
             : n >= PROBE_MIN_REPS
                 ? strata_probe_stat(bw, (size_t)n, s, err)
                 : strata_error_set(err, STRATA_ERR_TIMEOUT,
                                    "probe: flat hand-over at %zu B: in only %d of %d samples did "
                                    "rounds with data take longer than without (host too busy)",
                                    bytes, n, rounds / (2 * FLAT_BLOCK * FLAT_SEG));
        int ns = st == STRATA_OK && sync_p ? probe_flat_sync(x->lap, rounds, bw) : 0;
        if (ns < 0) st = strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
        if (ns > 0) st = strata_probe_stat(bw, (size_t)ns, sync_p, err);
    }
    /* the first round of each slot pays its first touches; each timed
     * part pays one clock read beyond what it times (the reduction is one
     * part, the others two) */
    for (int k = HANDOVER_SLOTS; mode != HO_FLAT && k < rounds && st == STRATA_OK; k++)
        bw[k - HANDOVER_SLOTS] = strata_probe_bandwidth(
            (double)bytes, probe_less_clock(x->t[0][k] > x->t[1][k] ? x->t[0][k] : x->t[1][k],
                                            mode == HO_REDUCE ? 1 : 2, clk));
    if (st == STRATA_OK && mode != HO_FLAT)
        st = strata_probe_stat(bw, (size_t)(rounds - HANDOVER_SLOTS), s, err);
    /* streamed: the same rounds' reductions too (into sync_p) */
    for (int k = HANDOVER_SLOTS; mode == HO_STREAM && k < rounds && st == STRATA_OK; k++)
        bw[k - HANDOVER_SLOTS] = strata_probe_bandwidth(
            (double)bytes,
            probe_less_clock(x->tr[0][k] > x->tr[1][k] ? x->tr[0][k] : x->tr[1][k], 1, clk));
    if (st == STRATA_OK && mode == HO_STREAM)
        st = strata_probe_stat(bw, (size_t)(rounds - HANDOVER_SLOTS), sync_p, err);
    for (int i = 0; i < 2 && mode == HO_FLAT; i++) {
        util_free(x->lap[i]);
        util_free(x->mine[i]);
        util_free(x->input[i]);
        for (int j = 0; j < HANDOVER_SLOTS; j++)
            util_free(x->shared[i][j]);
    }
    util_free(x->block);
    util_free(x);
    return st;
}

/* One size of one round as a figure: a stall (or, for the flat round,
 * too few positive samples) is tried once more, fresh threads; when that
 * stalls too, the size is not measured (probe_figure) and the rest go on. */
typedef struct ho_try {
    int a, b, rounds;
    size_t bytes;
    ho_mode_t mode;
    strata_probe_stat_t *s, *sync;
} ho_try_t;

static strata_status_t ho_attempt(void *arg, strata_error_t *err)
{
    ho_try_t *t = arg;
    return remote_size(t->a, t->b, t->bytes, t->rounds, t->mode, t->s, t->sync, err);
}

static strata_status_t ho_figure(strata_probe_result_t *res, ho_mode_t mode, double bytes,
                                 int rounds, strata_probe_stat_t *s, strata_probe_stat_t *sync,
                                 strata_error_t *err)
{
    ho_try_t t = {res->cpus[0], res->cpus[1], rounds, (size_t)bytes, mode, s, sync};
    /* the streamed round is optional in a calibration (files before it) */
    strata_status_t st =
        probe_figure(res, round_name[mode], bytes, mode != HO_STREAM, ho_attempt, &t, s, err);
    if (st == STRATA_OK && s->n == 0 && sync) memset(sync, 0, sizeof(*sync));
    return st;
}

/* The section's plan as it goes (probe_remote): the figures not yet
 * taken, and the last one's time, rounds and bytes. A size takes its full
 * rounds while they fit its share of what is left of the section at the
 * last size's time a round, scaled up to this size's bytes (a large size
 * after a small one: 16 MiB after 4 MiB); else as many as fit, at least
 * `least` (probe_rounds). A size not measured (probe_figure) counts with
 * its two attempts' time. */
typedef struct ho_plan {
    probe_ctx_t *x;
    int left, last_rounds;
    double last, last_bytes;
} ho_plan_t;

static strata_status_t ho_planned(ho_plan_t *p, ho_mode_t mode, double bytes, int full, int least,
                                  strata_probe_stat_t *s, strata_probe_stat_t *sync,
                                  strata_error_t *err)
{
    double t0 = util_now();
    int rounds = probe_rounds(full, least, probe_share(t0, p->x->deadline, p->left--),
                              probe_round_time(p->last, p->last_rounds, p->last_bytes, bytes));
    strata_status_t st = ho_figure(p->x->res, mode, bytes, rounds, s, sync, err);
    p->last = util_now() - t0, p->last_rounds = rounds, p->last_bytes = bytes;
    return st;
}

/* The hand-over curve's point i (sizes[i]) at its rounds: a few lines take
 * well under a microsecond a round, and one preempted round moves the
 * median of 16 (the host's other load only adds): the sizes up to the
 * pipeline's largest slices take PROBE_MAX_REPS rounds, still cheap (256
 * KiB: ~2 ms), as those of the reduction do; --quick only up to 4 KiB. At
 * least 3 + 3 when cut. */
static strata_status_t ho_point(ho_plan_t *p, int i, double bytes, strata_error_t *err)
{
    bool quick = p->x->opts->quick;
    int rounds = bytes <= (quick ? 4096 : STRATA_DIRECT_CHUNK)
                     ? PROBE_MAX_REPS
                     : (quick ? 8 : 16) + HANDOVER_SLOTS - 1;
    p->x->res->remote_bytes[i] = bytes;
    return ho_planned(p, HO_COPY, bytes, rounds, HANDOVER_SLOTS + PROBE_MIN_REPS,
                      &p->x->res->remote_copy[i], NULL, err);
}

strata_status_t probe_remote(probe_ctx_t *x, double budget, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    /* from 256 B: the flat allreduce (up to 2 KiB) hands over a few lines,
     * where each line's transfer latency, not a streaming rate, sets the
     * cost; the model reads the curve at the size it hands over */
    /* and every slice the pipeline hands over at 2 ranks (half a chunk of
     * up to 256 KiB), where the rate changes fastest: 32 KiB and 128 KiB
     * (the curve is read in log(bytes) between its points) */
    static const double sizes[] = {256,   1024,   2048,   4096,    16384,   32768,
                                   65536, 131072, 262144, 1048576, 4194304, 16777216};
    _Static_assert(sizeof(sizes) / sizeof(sizes[0]) <= STRATA_PROBE_CURVE_MAX, "curve points");
    int n = x->opts->quick ? 10 : 12, done = 0;
    if (res->cores < 2) return STRATA_OK;
    strata_status_t st = STRATA_OK;
    res->remote_n = n;
    /* the sizes: hand-over, 4 flat, 7 reductions, the streamed round */
    ho_plan_t plan = {.x = x, .left = n + 4 + 7 + (x->opts->quick ? 0 : 1)};
    probe_gaps_drop(res, round_name, 4); /* a second pass's own */
    /* The figures the 2-rank model reads come first, the hand-over's sizes
     * beyond the engine's slices (1-16 MiB: first touches of 6 slots and 4
     * vectors of their size, 0.4 GB/s on this VM) last: taken first they
     * spent the section's share, and the reduction after them was cut to
     * 3 rounds and read about half its rate (16 KiB: 10.8-11.3 GB/s
     * against 21.2-21.8 at its 61; bench/README.md, "Session 17, after
     * CI"). */
    for (; done < n && sizes[done] <= STRATA_DIRECT_CHUNK && st == STRATA_OK; done++) {
        st = ho_point(&plan, done, sizes[done], err);
        probe_tick(x, budget, (double)(done + 1) / (n + 2));
    }
    /* The flat allreduce (up to 2 KiB) reduces the whole vector itself,
     * the peers' staged copies from their slots and its own part from its
     * private input, and waits once a call (for the staged flags): its
     * round, back to back (flat_side), is another access pattern than the
     * pipeline's. The first size's rounds without data also give the
     * flags alone (res->flat_sync). They keep their rounds: fewer
     * segments leave too few positive samples on a loaded host. */
    static const double flat_sizes[] = {256, 512, 1024, STRATA_DIRECT_FLAT_MAX};
    res->flat_n = (int)(sizeof(flat_sizes) / sizeof(flat_sizes[0]));
    for (int i = 0; i < res->flat_n && st == STRATA_OK; i++) {
        res->flat_bytes[i] = flat_sizes[i];
        /* a round is under 2 us: 16 samples (8 with --quick) of 512
         * rounds, 8 ms on a quiet host */
        int rounds = (x->opts->quick ? 8 : 16) * FLAT_SEG * 2 * FLAT_BLOCK;
        st = ho_planned(&plan, HO_FLAT, flat_sizes[i], rounds, rounds, &res->flat_copy[i],
                        i == 0 ? &res->flat_sync : NULL, err);
    }
    /* The pipeline's reduce phase (above 2 KiB) loads the peer's staged
     * slice while it stores its sum into lines the peer copies out next:
     * the loads and the stores' ownership requests overlap, so it costs
     * less than a copy-out plus a write (128 KiB: 9.5 us against 6.6 +
     * 6.1, standalone, bench/README.md "probe"). Measured at the slices
     * the pipeline reduces (a chunk of up to 256 KiB over 2 ranks; 1 KiB
     * for 4 ranks' smallest). */
    static const double red_sizes[] = {1024, 2048, 4096, 16384, 32768, 65536, 131072};
    res->reduce_n = (int)(sizeof(red_sizes) / sizeof(red_sizes[0]));
    for (int i = 0; i < res->reduce_n && st == STRATA_OK; i++) {
        res->reduce_bytes[i] = red_sizes[i];
        /* PROBE_MAX_REPS rounds at every size (128 KiB: ~1.5 ms): with 15
         * (7 with --quick) the median at 64-128 KiB read 10.8-14.1 GB/s in
         * some runs and 18-20 in others of one host state, with 61 18.9-21.3
         * in three runs (bench/README.md, "Issue 19, session 9"). --quick
         * keeps its 7 above 4 KiB (and the hand-over above): 64 rounds a
         * size doubled its time on a loaded host (5.6-5.9 -> 8.9-10.6 s,
         * past the 10 s budget), and each round needs both cores at once.
         * Cut, at least 3 + 15 (--quick: its 7): 3 read about half the
         * rate ("Session 17, after CI"); 15 with --quick and six spinners
         * took the section to 0.7-2.2 s of its 0.4 and --quick past 10 s
         * (bench/README.md, "s18-h19") */
        int rounds =
            !x->opts->quick || red_sizes[i] <= 4096 ? PROBE_MAX_REPS : 8 + HANDOVER_SLOTS - 1;
        int least = x->opts->quick ? 8 + HANDOVER_SLOTS - 1 : HANDOVER_SLOTS + 15;
        st = ho_planned(&plan, HO_REDUCE, red_sizes[i], rounds, least, &res->reduce_load[i], NULL,
                        err);
    }
    /* The pipeline round as the engine runs it past the last-level cache
     * (vectors of 16 MiB and more at 2 ranks here): each round's input
     * read from memory, its output stored there, the slots as before.
     * The round at a slice in the caches plus the read and write curves'
     * memory rates priced 16-64 MiB 16-43 % under the engine: the
     * stage's 128 KiB copied from memory took 6.1-7.7 us where in the
     * caches it took 1.2-1.6, 2.4x the read curve's extra (a scratch copy
     * of this round, bench/README.md "s18-h19"). One size, the 2-rank
     * slice; not with --quick (its first touches: 4 x llc / 2) */
    res->stream_bytes = 0;
    memset(&res->stream_hand, 0, sizeof(res->stream_hand));
    memset(&res->stream_reduce, 0, sizeof(res->stream_reduce));
    if (!x->opts->quick && st == STRATA_OK) {
        res->stream_bytes = STRATA_DIRECT_CHUNK / 2;
        st = ho_planned(&plan, HO_STREAM, res->stream_bytes, PROBE_MAX_REPS, HANDOVER_SLOTS + 15,
                        &res->stream_hand, &res->stream_reduce, err);
    }
    for (; done < n && st == STRATA_OK; done++) {
        st = ho_point(&plan, done, sizes[done], err);
        probe_tick(x, budget, (double)(done + 2) / (n + 2));
    }
    probe_tick(x, budget, 1);
    return st;
}
