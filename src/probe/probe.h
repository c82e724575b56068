/*
 * probe.h — internal header of the probe module: the measurement sections
 * share a time budget, a progress bar, CPU pinning and sample loops.
 *
 * Design. Each section (mem.c, c2c.c, shm.c, net.c, sys.c) fills its part
 * of strata_probe_result_t. A section is given a wall-clock budget and
 * takes repeated samples while the next one, as long as the last, would
 * end within its budget (at least one, at most PROBE_MAX_REPS) — so a
 * loaded host gives fewer samples (down to one, its spread 0 and its n
 * saying so), not a longer run. A stage's figures share what is left of
 * its plan (probe_share: the deadline, not a fixed slice set at the start,
 * so the stage's setup and a slow figure shorten the rest). The
 * statistics are in stats.c.
 */
#ifndef STRATA_PROBE_INT_H
#define STRATA_PROBE_INT_H

#include "strata/probe.h"
#include "util.h"

#define PROBE_MIN_REPS 3
#define PROBE_MAX_REPS 64

typedef struct probe_ctx {
    const strata_probe_opts_t *opts;
    strata_probe_result_t *res;
    util_progress_t bar;
    double t0, total; /* start and planned total (s) */
    double done;      /* planned seconds of the finished sections */
    double deadline;  /* the running section's: its start + its plan (util_now) */
} probe_ctx_t;

/* A figure's share of what is left of its stage: (deadline - now) / left
 * (left: the stage's figures not yet taken, this one included, >= 1); 0
 * once the deadline has passed. */
double probe_share(double now, double deadline, int left);
/* Whether a figure takes another sample: n taken so far, el seconds since
 * it began (its setup included), last the last sample's own time, budget
 * its share. The first always; then another while n < max and el + last
 * < budget (the next, as long as the last, ends within the share; none
 * when the share is 0). */
bool probe_more(int n, int max, double el, double last, double budget);
/* Rounds for a figure of fixed rounds (the hand-over's sizes, two threads
 * in step: they cannot stop apart): full while full rounds of round_s
 * each fit the share; else as many as fit, but at least least (full when
 * that is smaller); full when round_s is 0 (nothing to go by). */
int probe_rounds(int full, int least, double share, double round_s);
/* The time a round of a size of `bytes` is expected to take from the last
 * size's: last_s over last_rounds rounds of last_bytes, scaled up by
 * bytes / last_bytes where this size is larger (a round's bytes cost at
 * most in proportion; a large size after a small one would otherwise be
 * given the small one's time), never down (a smaller size's lines still
 * cost their latency). 0 when there is no last size. */
double probe_round_time(double last_s, int last_rounds, double last_bytes, double bytes);

/* Redraw the bar for `frac` (0..1) of a section planned at `plan` s. */
void probe_tick(probe_ctx_t *x, double plan, double frac);

/* Pin the calling thread to OS cpu `cpu`; 0 ok, -1 failed. */
int probe_pin(int cpu);
/* The OS ids of the CPUs this process may use (at most max); count. */
int probe_cpus(int *cpus, int max);

/* Every sample of s taken `add` seconds later (a constant part measured
 * apart): the median and extremes move by add, the interquartile range does
 * not (the spread, IQR / median, is rescaled). Nothing when add <= 0 or s
 * is empty. */
void probe_stat_add(strata_probe_stat_t *s, double add);
/* A sample loop: fn(arg) returns one sample (> 0) or <= 0 on failure
 * (STRATA_ERR_SYSTEM); the samples summarised into *stat_p. The rule says
 * when to stop: PROBE_UNTIL_BUDGET takes samples until budget_s has
 * passed and PROBE_MIN_REPS were taken (a fixed short budget, the call's
 * own work); PROBE_WITHIN_SHARE while probe_more says so (one at the
 * least, fewer than PROBE_MIN_REPS when the share is short). Both at most
 * PROBE_MAX_REPS. */
typedef enum { PROBE_UNTIL_BUDGET, PROBE_WITHIN_SHARE } probe_rule_t;
strata_status_t probe_sample_by(double (*fn)(void *), void *arg, double budget_s, probe_rule_t rule,
                                strata_probe_stat_t *stat_p, strata_error_t *err);
/* probe_sample_by with PROBE_UNTIL_BUDGET, and with PROBE_WITHIN_SHARE. */
strata_status_t probe_sample(double (*fn)(void *), void *arg, double budget_s,
                             strata_probe_stat_t *stat_p, strata_error_t *err);
strata_status_t probe_sample_in(double (*fn)(void *), void *arg, double budget_s,
                                strata_probe_stat_t *stat_p, strata_error_t *err);

/* The add rate's reduction (strata_probe_add_rate): of t[c * repeats + k],
 * chain c's k-th timing, each chain's fastest into mins[0..chains-1];
 * returns their median (0 when chains < 1). */
double probe_add_reduce(const double *t, int chains, int repeats, double *mins);
/* chains x repeats timings of the add chain, summarised over the chains'
 * fastest (*stat_p: its median the rate, n = chains). */
strata_status_t probe_add_chains(int chains, int repeats, strata_probe_stat_t *stat_p,
                                 strata_error_t *err);
#define PROBE_ADD_REPEATS 3

/* A figure that a loaded host can stall (a pinned thread or a rank without
 * progress for its bound: fn returns STRATA_ERR_TIMEOUT): fn(arg) once,
 * and once more, fresh, when it stalls; when that stalls too the figure
 * is not measured — *stat (NULL: none) zeroed, a gap appended to res
 * (figure, bytes, calib, the message), a warning logged — and
 * STRATA_OK is returned, so that the probe goes on. Any other failure is
 * returned as it is. */
typedef strata_status_t (*probe_attempt_fn)(void *arg, strata_error_t *err);
strata_status_t probe_figure(strata_probe_result_t *res, const char *figure, double bytes,
                             bool calib, probe_attempt_fn fn, void *arg, strata_probe_stat_t *stat,
                             strata_error_t *err);
/* Forget res's gaps of the figures named figures[0..n-1] (a section that
 * runs again, in the probe's second pass, says only its own). */
void probe_gaps_drop(strata_probe_result_t *res, const char *const *figures, int n);
/* The first figure the calibration needs that was not measured; NULL when
 * none. */
const strata_probe_gap_t *probe_gap_for_calib(const strata_probe_result_t *r);

/* Median of v[0..n-1], n >= 1 (sorts v in place). */
double probe_median(double *v, long n);

/* The median cost of one clock read (util_now), s: an interval timed by
 * two reads measures this much beyond what it times. */
double probe_clock_cost(void);
/* t less `reads` clock reads of clk each; t itself when that leaves
 * nothing (the clock took longer than what it timed). */
double probe_less_clock(double t, int reads, double clk);

/* The memory stage's team (mem.c): one worker thread per cpu, created and
 * pinned once per stage, each first-touching its own source and
 * destination buffers once (Linux places the pages on its cpu's node);
 * every measurement then posts a job to the first n workers. Every wait
 * is bounded: a worker that makes no progress for stall_s fails the
 * measurement with "cpu N made no progress". */
/* 5 s, not the coherence section's 1 s: a sample is a whole kernel pass
 * (64 MiB copied), and with another process holding the cpu under
 * SCHED_FIFO the kernel leaves others 5 % of it; at 1 s the stage failed
 * twice in two tries at load 23 (bench/README.md "s15-h19m"). */
#define PROBE_MEM_STALL_S 5.0
typedef struct probe_team probe_team_t;
/* Start workers on cpus[0..n-1] (a cpu may repeat) with buffers of bytes
 * each (the first worker's bytes0, when larger: it alone runs one-core
 * jobs) into *t_p; an error (and *t_p NULL) when a thread cannot be
 * created or pinned, the buffers allocated, or a worker stalls touching
 * them. */
strata_status_t probe_team_start(const int *cpus, int n, size_t bytes, size_t bytes0,
                                 double stall_s, probe_team_t **t_p, strata_error_t *err);
/* Samples of kernel `kind` (a strata_probe_mem_kind_t) on the first n
 * workers at once, each over `bytes` of its buffers `inner` times: one
 * warm-up pass when warm, then windows while probe_more(windows, rounds,
 * time since the job was posted — the wake-up and warm-up count —, the
 * last window's time as the coordinator saw it, budget_s) says so: one at
 * the least, so a share too short for more gives one window (no more
 * windows are sought for concurrency: at load 7-9 seeking them up to 4 x
 * budget_s doubled the --quick stage's time). out[i] the aggregate B/s of
 * window i (probe_window_rate), *nout their count, *nconc how many were
 * concurrent; when at least PROBE_MIN_REPS were, out holds only those;
 * *nwin the windows taken. */
strata_status_t probe_team_measure(probe_team_t *t, int n, size_t bytes, int kind, long inner,
                                   bool warm, int rounds, double budget_s, double *out, int *nout,
                                   int *nconc, int *nwin, strata_error_t *err);
/* Counts for the tests: threads created, first touches, jobs run. */
void probe_team_counts(const probe_team_t *t, int *created, int *touched, int *jobs);
/* Test hook: worker i never arrives at a round (it waits for the job's
 * end instead), as a worker whose cpu never runs it; -1 = none. */
void probe_team_stall(probe_team_t *t, int i);
/* Stop and join the workers (each join bounded by stall_s; a worker that
 * does not end is detached and its buffers left allocated). NULL ok. */
void probe_team_stop(probe_team_t *t);

/* One all-core window: worker i ran its kernel from start[i] to end[i]
 * (s), moving bytes_each. The window is concurrent when the span in which
 * every worker ran (latest start to earliest end) is at least
 * PROBE_CONCURRENT_FRAC of the whole window (earliest start to latest
 * end): a worker that started late or was descheduled part-way makes the
 * window partly serial. Returns n x bytes_each / the whole window (B/s),
 * -1 when a window is empty; *concurrent as above. */
#define PROBE_CONCURRENT_FRAC 0.75
/* The windows a figure is the median of: of w[0..n-1], those with conc[i]
 * when at least PROBE_MIN_REPS are, else all; into out, their count
 * returned; *nconc the concurrent ones. */
int probe_windows_pick(const double *w, const bool *conc, int n, double *out, int *nconc);
double probe_window_rate(const double *start, const double *end, int n, double bytes_each,
                         bool *concurrent);

/* The flat allreduce's round (c2c.c): blocks of FLAT_BLOCK rounds, without
 * data and with it in turn; a sample per FLAT_SEG pairs of blocks. */
#define FLAT_BLOCK 32
#define FLAT_SEG   8
/* Samples of the flat round's hand-over from every round's lap of both
 * threads (lap[t][0..rounds-1], rounds of 2 x FLAT_BLOCK x FLAT_SEG per
 * sample): bytes / the mean over the threads of the median lap with data
 * minus that without, each block's first two rounds left out; only
 * positive differences give a sample. Returns how many are in bw; -1 when
 * out of memory. */
int probe_flat_samples(double *const lap[2], int rounds, size_t bytes, double *bw);
/* Samples of the flat round's flags alone from the same laps: per sample,
 * the mean over the threads of the median lap without data (each block's
 * first two rounds left out), s. Returns how many are in sync (the samples
 * probe_flat_samples takes, positive or not). */
int probe_flat_sync(double *const lap[2], int rounds, double *sync);

/* Where the pipeline round (c2c.c, remote_size) puts its buffers: slots
 * of `bytes`, vectors of `vec` (bytes, or the streamed round's sweep), as the engine and its caller
 * have them. The staging slots (2 ranks x COMM_DEPTH) lie in the engine's segment: each
 * page-aligned, in a region of COMM_REGION bytes (or of the slot's own pages rounded up when
 * larger), rank r's slot z at (r * COMM_DEPTH + z) * region. The input and output are the caller's:
 * a vector a program malloc's at 128 KiB or more (glibc's mmap threshold; strata bench's buffers
 * are such) starts 16 bytes past a page, its own mapping; here each in a span of its pages after
 * the slots. Offsets from a page-aligned base; total is what the base needs. */
typedef struct probe_ho_layout {
    size_t region;   /* slot stride */
    size_t span;     /* an input's or output's pages */
    size_t user_off; /* 16: where a caller's vector starts in its span */
    size_t total;    /* 2 COMM_DEPTH regions + 4 spans */
} probe_ho_layout_t;
void probe_ho_layout(size_t bytes, size_t vec, probe_ho_layout_t *l_p);
/* The share of the 2-rank pipeline's bytes the calibrated model prices
 * at the streamed round (calib.c): where the read rate at the input's
 * level r_in lies between the slice's r_slice (0) and the memory point's
 * r_mem (1), in time per byte, clamped to 0 .. 1; 0 when the round was
 * not measured, at other rank counts or slices, or r_mem >= r_slice. */
double probe_stream_share(const strata_probe_calib_t *c, int size, double slice, double r_in,
                          double r_slice, double r_mem);
/* The streamed round's vectors (HO_STREAM): long enough for `rounds`
 * chunks of two slices (c2c.c asks for PROBE_MAX_REPS, however many it
 * runs: 16 MiB at the 128 KiB slice, so that with the cache's size
 * unknown (0) both threads write 64 MiB), and at least half the
 * last-level cache `llc`
 * (rounded up to chunks, at most PROBE_STREAM_SWEEP_MAX), so that when
 * both threads have written their input and then their output, every
 * chunk of input a round reads has at least 2 x llc / 2 written after it. */
#define PROBE_STREAM_SWEEP_MAX (64u << 20)
size_t probe_stream_sweep(size_t slice, int rounds, size_t llc);
/* Offsets in that block: rank r's slot z, its input, its output. */
size_t probe_ho_slot(const probe_ho_layout_t *l, int r, int z);
size_t probe_ho_input(const probe_ho_layout_t *l, int r);
size_t probe_ho_output(const probe_ho_layout_t *l, int r);

/* Whether the positive values among v[0..n-1] span more than
 * STRATA_PROBE_PLACEMENT_RATIO (largest over smallest): two placements. */
bool probe_placement_differs(const double *v, int n);

/* Whether the shm section's barrier at the cores' ranks (barrier_fit) is
 * under one cache-line hand-off of the coherence section (c2c_all): a
 * barrier waits for the peer's line to come over at least once, so in one
 * placement it never is; the shm section then met a closer placement than
 * the coherence section measured. False when either was not measured. */
bool probe_barrier_closer(const strata_probe_result_t *r);

/* Sections. Each returns STRATA_OK or an error with its message. */
strata_status_t probe_mem(probe_ctx_t *x, double budget_s, strata_error_t *err);
/* The coherence matrix. A pair whose pinned thread makes no progress for
 * its stall bound is tried again while the section's give-up time (its
 * budget plus one stall bound from its start) has not passed; when it
 * still fails, the matrix is not measured (0 samples, res->c2c_note says
 * why, a warning logged) and the section returns STRATA_OK: the rest of
 * the probe goes on. */
strata_status_t probe_c2c(probe_ctx_t *x, double budget_s, strata_error_t *err);
/* The coherence latency now: every pair of res's cpus, as probe_c2c
 * measures them (retried alike), within budget s, summarised in *s_p (0
 * samples on one cpu, or when it could not be read: a warning is logged
 * and STRATA_OK returned); res's matrix is left as it is. */
strata_status_t probe_line_reading(strata_probe_result_t *res, double budget,
                                   strata_probe_stat_t *s_p, strata_error_t *err);
/* Test hook: the next `stalls` pair attempts of the coherence section
 * and readings have side b never answer (a pinned thread that never
 * runs), and their side a gives up after stall_s (> 0; the default 1 s
 * when 0); the other attempts keep 1 s. */
void probe_c2c_test_hook(int stalls, double stall_s);
/* Test hook: the next `stalls` attempts of the round `mode` (0 the
 * hand-over, 1 the flat round, 2 the pipeline reduction) at `bytes` start
 * one side only (a pinned thread that never runs), which gives up after
 * stall_s (> 0; the default 1 s when 0); probe_remote_test_left says how
 * many of them are left. */
void probe_remote_test_hook(int mode, double bytes, int stalls, double stall_s);
int probe_remote_test_left(void);
/* Summarise res->c2c by res->package: pairs within a socket, across. */
strata_status_t probe_c2c_by_socket(strata_probe_result_t *res, strata_error_t *err);
strata_status_t probe_remote(probe_ctx_t *x, double budget_s, strata_error_t *err);
strata_status_t probe_shm(probe_ctx_t *x, double budget_s, strata_error_t *err);
/* The streamed output's overlap with a read+reduce stream (overlap.c). */
strata_status_t probe_overlap(probe_ctx_t *x, double budget_s, strata_error_t *err);
/* The store-overlap section's input and output, each: the LLC's size
 * (llc, 0 unknown) within 32..128 MiB, rounded up to engine blocks. */
size_t probe_overlap_bytes(size_t llc);
strata_status_t probe_net(probe_ctx_t *x, double budget_s, strata_error_t *err);
strata_status_t probe_sys(probe_ctx_t *x, double budget_s, strata_error_t *err);
/* First touch alone (res->page_fault): the third of probe_sys. */
strata_status_t probe_fault(probe_ctx_t *x, double budget_s, strata_error_t *err);
/* Accelerators: fills res->accel_note (cuda.c, or the reason it is absent). */
void probe_accel(probe_ctx_t *x, double budget_s);

/* hwloc facts: NUMA nodes with their cpus, memory ceiling (stats of the
 * host), CPU model. */
typedef struct probe_numa_cpus {
    int node;
    int n;
    int cpus[STRATA_PROBE_CORES_MAX];
} probe_numa_cpus_t;
int probe_numa_layout(probe_numa_cpus_t *nodes, int max, const int *allowed, int nallowed);
void probe_host_facts(strata_probe_result_t *res);

/* calib.c: the curve size that prices a rank's working set of ws bytes
 * when a call sweeps `sweep` bytes through the shared last-level cache. */
double probe_cache_level(const strata_probe_calib_t *c, double ws, double sweep);
/* calib.c: the flat round's cost per byte, s/B: the least-squares slope
 * of its data cost (bytes / rate) over the flat hand-over curve's points;
 * 0 with fewer than two points, a point not above zero, or a slope not
 * above zero. The model charges it beyond PROBE_FLAT_BASE bytes, the size
 * the flat call's own work is timed at (shm.c flat_work). */
double probe_flat_slope(const strata_probe_calib_t *c);
#define PROBE_FLAT_BASE (STRATA_DIRECT_LINE_MAX + 8) /* 64 B: 16 fp32 */

#endif
