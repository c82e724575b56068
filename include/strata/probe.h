/*
 * strata/probe.h — measure the machine strata runs on, and calibrate the
 * model of it.
 *
 * strata_probe_run() measures, each figure as the median and spread of
 * repeated timings: memory read/write/copy bandwidth per NUMA node
 * (temporal and non-temporal stores, one core and all cores of the node),
 * the core-to-core cache-line transfer latency matrix, the shared-memory
 * transport's α and β between two ranks (strata's own send/recv, through
 * the public comm API) and its cost per rank when ranks outnumber cores,
 * TCP latency and bandwidth over loopback (or to a peer), and the system
 * costs the runtime pays (a process switch, a futex wake, a first-touch
 * page fault). Every measured figure is checked for physical sense before
 * it is accepted (strata_probe_check_*).
 *
 * Calibration: strata_probe_save() writes a cluster file (docs/formats.md)
 * of this host whose links carry the measured α and bandwidth ("measured":
 * date, spread, method), plus a top-level "measured" object with the
 * figures the runtime model needs; strata_probe_calib_load() reads them
 * back, and strata_probe_predict() is the calibrated prediction of strata's
 * own collectives on this host (docs/probe.md: which measurement sets
 * which parameter; nothing is fitted to a collective's timing).
 *
 * Thread safety: strata_probe_run forks ranks and starts threads of its
 * own; call it from one thread. Everything else is pure.
 */
#ifndef STRATA_PROBE_H
#define STRATA_PROBE_H

#include "strata/comm.h"
#include "strata/common.h"
#include "strata/sched.h"

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Statistics of repeated timings ==== */

/* Median, extremes and spread of n samples. spread is the interquartile
 * range over the median (0.1 = the middle half of the samples lies within
 * ±5 % of the median); 0 for one sample. */
typedef struct strata_probe_stat {
    double median, min, max, spread;
    int n; /* samples; 0 = not measured */
} strata_probe_stat_t;

/* Summarise n samples (not modified). Errors: n == 0, a NaN or infinite
 * sample (STRATA_ERR_INVALID, message in err). */
STRATA_API strata_status_t strata_probe_stat(const double *x, size_t n, strata_probe_stat_t *stat_p,
                                             strata_error_t *err);
/* Bytes per second for `bytes` moved in `seconds`; -1 when seconds <= 0 or
 * bytes < 0 (no bandwidth can be derived). */
STRATA_API double strata_probe_bandwidth(double bytes, double seconds);

/* The calling thread's instruction rate now: the fastest of `bursts`
 * (at least 1) timings of a chain of 100000 dependent integer adds, s per
 * add (one core cycle where an add takes one). On this VM 0.27-0.30 ns
 * in some tenths of a second and 0.43-0.6 ns in others, whatever its own
 * other vCPU does (docs/probe.md, "The host's rate"). */
STRATA_API double strata_probe_add_time(int bursts);

/* The rate the probe reports (add_s) and strata bench reads beside it:
 * `chains` chains (at least 1) of `repeats` timings each (at least 1,
 * strata_probe_add_time's bursts), s per add = the median over the
 * chains of each chain's fastest. The minimum of a chain rejects a
 * preemption inside it; the median across chains rejects one chain that
 * fell into a fast tenth of a second the others did not (the fastest of
 * all chains read 0.27-0.30 ns in some runs and 0.43-0.60 in others). */
#define STRATA_PROBE_ADD_CHAINS 5
STRATA_API double strata_probe_add_rate(int chains, int repeats);

/* The slowest rank's figure: the largest of n per-rank medians (as
 * strata bench reports the slowest rank's median call); 0 when n < 1. */
STRATA_API double strata_probe_slowest(const double *rank_median, int n);

/* Physical sense. A latency must be finite and > 0; a bandwidth finite,
 * > 0 and, when ceiling > 0, not above it (ceiling: the fastest the
 * hardware can move bytes, e.g. the memory bus hwloc reports). On failure
 * write "WHAT: ..." into err and return STRATA_ERR_RANGE. */
STRATA_API strata_status_t strata_probe_check_latency(const char *what, double seconds,
                                                      strata_error_t *err);
STRATA_API strata_status_t strata_probe_check_bandwidth(const char *what, double bytes_per_s,
                                                        double ceiling, strata_error_t *err);

/* ==== Measuring ==== */

#define STRATA_PROBE_NUMA_MAX  8
#define STRATA_PROBE_CORES_MAX 64
#define STRATA_PROBE_CURVE_MAX 12

/* The memory kernels: read (sum of 64-bit words), write (memset-like
 * stores), write with non-temporal stores, copy (memcpy), copy with
 * non-temporal stores, and the fp32 sum of two vectors into a third
 * (bytes counted: the output, as the engine's reduce_bw). */
#define STRATA_PROBE_MEM_MAP(X)                                                                    \
    X(READ, "read")                                                                                \
    X(WRITE, "write")                                                                              \
    X(WRITE_NT, "write-nt")                                                                        \
    X(COPY, "copy")                                                                                \
    X(COPY_NT, "copy-nt")                                                                          \
    X(REDUCE, "reduce")

typedef enum {
#define STRATA_PROBE_MEM_ENUM(name, text) STRATA_PROBE_MEM_##name,
    STRATA_PROBE_MEM_MAP(STRATA_PROBE_MEM_ENUM)
#undef STRATA_PROBE_MEM_ENUM
        STRATA_PROBE_MEM_KINDS
} strata_probe_mem_kind_t;

STRATA_API const char *strata_probe_mem_kind_name(strata_probe_mem_kind_t kind);

/* One NUMA node: bandwidth (B/s) of each kernel on a buffer of
 * strata_probe_result_t.big_bytes, with one core and with all the node's
 * cores together (aggregate). */
typedef struct strata_probe_numa {
    int node;
    int cores;
    strata_probe_stat_t one[STRATA_PROBE_MEM_KINDS];
    strata_probe_stat_t all[STRATA_PROBE_MEM_KINDS];
    /* of all[k]'s windows, how many had every core running together (the
     * figure is their median when at least 3 were; mem.c) */
    int all_concurrent[STRATA_PROBE_MEM_KINDS];
    int all_windows[STRATA_PROBE_MEM_KINDS];
} strata_probe_numa_t;

typedef struct strata_probe_opts {
    bool quick;           /* total under 10 s instead of under a minute */
    bool progress;        /* draw a progress bar on stderr when it is a terminal */
    const char *peer;     /* "host:port" of a `strata probe --serve PORT`, or NULL: loopback */
    bool coherence_only;  /* memory and coherence (cache-line transfer) sections only, as
                             `strata coherence local` needs; the rest stays unmeasured */
    bool host_costs_only; /* coherence and first-touch page fault only (c2c_all, page_fault),
                             as bench/vs-mpi prints; wins over coherence_only */
} strata_probe_opts_t;

/* Two coherence readings further apart than this factor are two
 * placements of the vCPUs (close 30-48 ns, far 155-240 ns here: 3.2x at
 * the nearest; one placement's readings within 2.2x). */
#define STRATA_PROBE_PLACEMENT_RATIO 2.5

/* A figure the probe could not measure on a loaded host: its attempt
 * stalled (a pinned thread or a rank without progress for its bound),
 * and so did the one fresh attempt after it; the probe goes on without
 * it (its figure has 0 samples). */
#define STRATA_PROBE_GAPS_MAX 32
typedef struct strata_probe_gap {
    char figure[40]; /* "hand-over", "flat round", "pipeline reduction", ... */
    double bytes;    /* the size it is of; 0 when it has none */
    bool calib;      /* the calibration needs it: strata_probe_save refuses */
    char why[200];   /* the second attempt's message */
} strata_probe_gap_t;

/* Everything one probe measured. Latencies in seconds, bandwidths in B/s. */
typedef struct strata_probe_result {
    char date[32];                       /* UTC, ISO 8601 */
    char host[64];                       /* hostname */
    char cpu_model[96];                  /* hwloc's CPUModel, "" when unknown */
    int cores;                           /* cores this process may use */
    int cpus[STRATA_PROBE_CORES_MAX];    /* their OS ids (the first `cores`, at most 64) */
    int package[STRATA_PROBE_CORES_MAX]; /* socket (hwloc package) of each, 0 when unknown */
    int packages;                        /* sockets among them (>= 1) */
    bool quick;
    double seconds; /* the probe's own run time */

    /* the hardware ceiling bandwidths are checked against; 0 = none known */
    double bus_ceiling;
    char ceiling_source[96];

    /* memory */
    size_t big_bytes; /* buffer of the per-node table, one core (at least the LLC) */
    size_t all_bytes; /* ... each core's with all at once (at least 2 x LLC / cores) */
    /* the last-level cache the cores share (sysfs, as the engine reads it:
     * comm_llc_bytes); 0 = unknown */
    size_t llc_bytes;
    int numa_nodes;
    strata_probe_numa_t numa[STRATA_PROBE_NUMA_MAX];
    /* one core of node 0: copy, reduce and read bandwidth against the buffer size */
    int curve_n;
    double curve_bytes[STRATA_PROBE_CURVE_MAX];
    strata_probe_stat_t copy_curve[STRATA_PROBE_CURVE_MAX];
    strata_probe_stat_t reduce_curve[STRATA_PROBE_CURVE_MAX];
    strata_probe_stat_t read_curve[STRATA_PROBE_CURVE_MAX];
    /* ... and storing a buffer of that size with plain stores (memset) */
    strata_probe_stat_t write_curve[STRATA_PROBE_CURVE_MAX];
    /* ... and with streaming (non-temporal) stores, from PROBE_NT_CURVE_MIN
     * (1 MiB) up, where the engine's choice of store mode for its output
     * can fall either way; 0 samples below */
    strata_probe_stat_t write_nt_curve[STRATA_PROBE_CURVE_MAX];
    /* ... read and store (as above) by each of node 0's cores at once, each
     * its own buffer of that size: what one core gets while every core
     * streams (they share the last-level cache and the DRAM channels, as
     * ranks that fill the cores do), B/s per core; 0 samples on one core */
    strata_probe_stat_t read_all_curve[STRATA_PROBE_CURVE_MAX];
    strata_probe_stat_t write_all_curve[STRATA_PROBE_CURVE_MAX];
    strata_probe_stat_t write_nt_all_curve[STRATA_PROBE_CURVE_MAX];

    /* coherence: one-way cache-line transfer latency, c2c[i][j] between
     * cpus[i] and cpus[j] (median; 0 on the diagonal), and over all pairs */
    double c2c[STRATA_PROBE_CORES_MAX][STRATA_PROBE_CORES_MAX];
    strata_probe_stat_t c2c_all;
    /* The placement: the coherence latency (every pair, as c2c_all) at the
     * probe's start and at its end, 0 samples where not taken (the
     * coherence-only runs). This host's hypervisor places its vCPUs close
     * or far apart and moves them from run to run; placement_changed when
     * the largest of line_first, line_mem, c2c_all and line_last exceeds
     * STRATA_PROBE_PLACEMENT_RATIO times the smallest (in the first pass);
     * remeasured when line_mem, c2c_all and line_last spanned two, and the
     * memory stage and the line-latency-dependent sections (coherence,
     * hand-over, shm) then ran a second time, on their --quick budgets
     * (docs/probe.md, "The placement"); line_mem, c2c_all and line_last
     * are the second pass's then. */
    strata_probe_stat_t line_first, line_last;
    /* ... and right after the memory stage: in the far placement the two
     * vCPUs sit on two L3s, so the all-core curves at L3 sizes are the
     * placement's too */
    strata_probe_stat_t line_mem;
    /* placement_mixed: line_mem, c2c_all and line_last (after the second
     * pass, if any) still span two placements: the calibration mixes them */
    bool placement_changed, remeasured, placement_mixed;
    /* medians of the matrix within a socket and across sockets (0 samples
     * when the cpus sit on one socket) */
    strata_probe_stat_t c2c_within, c2c_across;
    /* hand-over bandwidth (B/s) by size: cpus[0] and cpus[1] each write
     * bytes into lines the other holds, then copy out the other's, both at
     * once; bytes / (write + copy) of the slower; 0 points when one cpu */
    int remote_n;
    double remote_bytes[STRATA_PROBE_CURVE_MAX];
    strata_probe_stat_t remote_copy[STRATA_PROBE_CURVE_MAX];
    /* the same hand-over read out as the flat allreduce does: each sums
     * both staged copies (its own slot and the other's) into a private
     * buffer; bytes / (write + reduce) of the slower, up to 2 KiB */
    int flat_n;
    double flat_bytes[STRATA_PROBE_CURVE_MAX];
    strata_probe_stat_t flat_copy[STRATA_PROBE_CURVE_MAX];
    /* the flat round's flags alone (staged, done; its rounds without
     * data), seconds a round: what the engine's flat path pays to
     * synchronise, beside the line hand-off it counts in (docs/probe.md) */
    strata_probe_stat_t flat_sync;
    /* the pipeline's reduction as a hand-over: each sums its own private
     * input with the buffer the other just wrote, into lines the other
     * copied out three rounds before (and copies out next), both at once;
     * bytes / the slower's sum (the engine's kernel, fp32), by slice size */
    int reduce_n;
    double reduce_bytes[STRATA_PROBE_CURVE_MAX];
    strata_probe_stat_t reduce_load[STRATA_PROBE_CURVE_MAX];
    /* the pipeline round streamed (c2c.c, HO_STREAM): the hand-over's and
     * the reduction's round at the 2-rank slice stream_bytes, as the
     * engine runs it past the last-level cache: each round's input read
     * from, and its output stored to, the next part of vectors that have
     * left the cache; bytes / the slower's stage + copy-out (stream_hand)
     * and / its sum (stream_reduce). 0 samples: not measured (--quick) */
    double stream_bytes;
    strata_probe_stat_t stream_hand, stream_reduce;

    /* strata's shared-memory transport, ranks 0 and 1 (strata_comm_send/recv):
     * alpha = one-way time of an 8-byte message; bw = bytes / (one-way time
     * − alpha) for shm_bw_bytes; per_rank = the extra time of one barrier
     * per rank beyond the cores (barrier at 2 × cores ranks minus at cores
     * ranks, over the added ranks); 0 samples when cores < 2 */
    strata_probe_stat_t shm_alpha, shm_bw;
    size_t shm_bw_bytes;
    /* one-way send/recv time against the message size (shm_curve_bytes[0]
     * is 8 B: shm_oneway[0] is shm_alpha) */
    int shm_curve_n;
    double shm_curve_bytes[STRATA_PROBE_CURVE_MAX];
    strata_probe_stat_t shm_oneway[STRATA_PROBE_CURVE_MAX];
    strata_probe_stat_t barrier_fit, barrier_over, per_rank;
    int ranks_fit, ranks_over;
    /* The call's own work, timed on one rank through the library's
     * functions (docs/probe.md, "The call's entry"): line_work = what an
     * 8-byte allreduce on the line path does beyond the barrier's exchange
     * (the algorithm choice, its 8 B copied beside the sequence, the
     * reduction of ranks_fit lines by the engine's kernel, the result
     * copied out); clock_read = one read of the library's clock, which
     * every engine call (more than 56 B) makes for its learned choices;
     * 0 samples when not measured */
    strata_probe_stat_t line_work, clock_read;
    /* flat_work = what a flat allreduce (57 B to 2 KiB) does on its own
     * core beyond the barrier's work and its clock read: the public call
     * of 64 B through the engine on a one-rank communicator less the
     * barrier's path there and less clock_read (docs/probe.md, "The flat
     * call's own work"); barrier_work = the barrier's path there (its
     * entry, one line posted, a fence), which the two-rank barrier holds;
     * 0 samples when not measured */
    strata_probe_stat_t flat_work, barrier_work;
    /* The streamed output's overlap (docs/probe.md): on one core, the
     * fraction of streamed stores' own time hidden beside a read+reduce
     * stream, (t_A + t_B - t_C) / t_B (overlap.c); 0 samples when not
     * measured */
    strata_probe_stat_t nt_overlap;

    /* TCP: one-way time of an 8-byte message, and streaming bandwidth */
    strata_probe_stat_t tcp_alpha, tcp_bw;
    char tcp_target[96]; /* "loopback" or the peer */

    /* system costs */
    strata_probe_stat_t proc_switch, futex_wake, page_fault;
    /* two processes on one cpu handing turns by FUTEX_WAIT/FUTEX_WAKE (a
     * switch as the runtime's futex regime makes it) */
    strata_probe_stat_t futex_switch;

    /* accelerators: what the optional CUDA path says (never empty) */
    char accel_note[1024];
    /* Why the coherence matrix (c2c, c2c_all) was not measured, "" when it
     * was (or on one cpu): a pinned thread that made no progress within its
     * bound and its retries (a loaded host); the probe goes on without it,
     * and strata_probe_save refuses to write a calibration that lacks its
     * line latency. Placement readings that failed likewise have 0
     * samples. */
    char c2c_note[256];

    /* The vCPU's instruction rate as the probe saw it (docs/probe.md, "The
     * host's rate"): s per add of a dependent chain on the probe's thread,
     * read in the shm section (strata_probe_add_time); 0 samples when not
     * measured. Not priced: a reading to set beside a bench's own. */
    strata_probe_stat_t add_time;

    /* The figures not measured (above), in the order they were given up;
     * at most STRATA_PROBE_GAPS_MAX (later ones are logged only). */
    int gap_n;
    strata_probe_gap_t gaps[STRATA_PROBE_GAPS_MAX];
} strata_probe_result_t;

/* Run every measurement. progress on a terminal; total under 60 s (10 s
 * with quick) on an idle host. On success *res_p is owned by the caller
 * (free with strata_probe_destroy). A figure that fails its sanity check
 * fails the probe with the check's message (STRATA_ERR_RANGE). */
STRATA_API strata_status_t strata_probe_run(const strata_probe_opts_t *opts,
                                            strata_probe_result_t **res_p, strata_error_t *err);
STRATA_API void strata_probe_destroy(strata_probe_result_t *res);

/* Check every figure of res for physical sense (what strata_probe_run
 * does before returning); the first failure is reported. */
STRATA_API strata_status_t strata_probe_validate(const strata_probe_result_t *res,
                                                 strata_error_t *err);

/* Serve TCP probes on port (0.0.0.0) for a peer's `strata probe --peer`;
 * answers one client, then returns. timeout_s bounds the wait. */
STRATA_API strata_status_t strata_probe_serve(int port, double timeout_s, strata_error_t *err);

/* ==== Output and calibration ==== */

/* Human-readable table; JSON document (the same figures). */
STRATA_API void strata_probe_print(const strata_probe_result_t *res, FILE *out);
STRATA_API strata_status_t strata_probe_write_json(const strata_probe_result_t *res, FILE *out,
                                                   strata_error_t *err);

/* The wait regime of the calibrated model (docs/probe.md, "The wait
 * regime"): what a rank's wait for a peer costs when that peer must first
 * be scheduled on a core it shares (ranks outnumber cores). */
typedef enum strata_probe_wait {
    STRATA_PROBE_WAIT_AUTO = 0, /* the engine's policy: spin when the ranks fit the cores, else
                                   yield (sleep on a futex once a yield is slow) */
    STRATA_PROBE_WAIT_SPIN,     /* no scheduler in a wait (the ranks fit the cores) */
    STRATA_PROBE_WAIT_YIELD,    /* each core switches to its next rank by sched_yield */
    STRATA_PROBE_WAIT_FUTEX,    /* ... by a futex wake of a sleeping rank */
    STRATA_PROBE_WAIT_BARRIER,  /* the per-rank cost the probe's barriers measured */
} strata_probe_wait_t;

/* How the engine stores an allreduce's output, as the model prices it. */
typedef enum strata_probe_store {
    STRATA_PROBE_STORE_AUTO = 0, /* the cheaper of the two at each size, as the engine picks */
    STRATA_PROBE_STORE_PLAIN,    /* plain (temporal) stores */
    STRATA_PROBE_STORE_STREAM,   /* streaming (non-temporal) stores */
} strata_probe_store_t;

/* What the calibrated model of this host uses (docs/probe.md). */
typedef struct strata_probe_calib {
    char date[32];
    int cores;
    double line_latency; /* s, one-way cache-line transfer (c2c median) */
    double shm_alpha;    /* s, strata send/recv 8 B one way */
    double shm_bw;       /* B/s, strata send/recv streaming */
    double per_rank;     /* s per extra rank per synchronisation beyond the cores */
    /* s, strata's barrier at barrier_ranks ranks (= the cores): a call's
     * entry and one line exchange; 0 = not measured (files before it) */
    double barrier;
    int barrier_ranks;
    /* s, the call's own work on one rank (result's line_work, clock_read);
     * 0 = not measured (files before it) */
    double line_work, clock_read;
    /* s, a flat allreduce's own work on one rank beyond the barrier's and
     * its clock read, and the barrier's own path there (result's
     * flat_work, barrier_work); 0 = not measured (files before them: the
     * term is then not priced, and strata bench says so) */
    double flat_work, barrier_work;
    /* s, the flat allreduce's flags alone at 2 ranks, a round (result's
     * flat_sync: c2c.c's flat round without data); 0 = not measured (files
     * before it: the flat path and the engine's flags are then priced on
     * the barrier and line_latency) */
    double flat_flags;
    /* the fraction (0..1) of the streamed output's store time hidden
     * beside the reduction's loads (result's nt_overlap, clamped to the
     * bounds of the model: in series, 0, to hidden, 1); 0 = in series
     * (files before it) */
    double nt_overlap;
    double proc_switch;  /* s, a switch between two processes on one cpu (sched_yield) */
    double futex_switch; /* s, a switch on one cpu by futex sleep and wake; 0 = not measured */
    double mem_copy_all; /* B/s, all cores of node 0 copying together */
    double llc_bytes;    /* B, the shared last-level cache (sysfs); 0 = unknown */
    int curve_n;
    double curve_bytes[STRATA_PROBE_CURVE_MAX];
    double copy_bw[STRATA_PROBE_CURVE_MAX];   /* one core, by buffer size */
    double reduce_bw[STRATA_PROBE_CURVE_MAX]; /* one core, by buffer size */
    double read_bw[STRATA_PROBE_CURVE_MAX];   /* one core, by buffer size */
    double write_bw[STRATA_PROBE_CURVE_MAX];  /* one core, output stores; 0 = not measured */
    /* per core with every core at once (result's *_all_curve); 0 = not measured */
    double read_all_bw[STRATA_PROBE_CURVE_MAX];
    double write_all_bw[STRATA_PROBE_CURVE_MAX];
    /* streaming stores, one core and per core with all at once; 0 where
     * not measured. Where a file has them, write_bw holds plain stores at
     * every size; a file without them (before 2026-12-03) holds the
     * engine's fixed rule then: plain stores, streaming from 16 MiB. */
    double write_nt_bw[STRATA_PROBE_CURVE_MAX];
    double write_nt_all_bw[STRATA_PROBE_CURVE_MAX];
    int remote_n; /* hand-over between cores, by size */
    double remote_bytes[STRATA_PROBE_CURVE_MAX];
    double remote_bw[STRATA_PROBE_CURVE_MAX];
    int flat_n; /* hand-over reduced from both slots (the flat path); 0 = not measured */
    double flat_bytes[STRATA_PROBE_CURVE_MAX];
    double flat_bw[STRATA_PROBE_CURVE_MAX];
    int reduce_n; /* the pipeline's reduction as a hand-over; 0 = not measured */
    double reduce_bytes[STRATA_PROBE_CURVE_MAX];
    double reduce_load_bw[STRATA_PROBE_CURVE_MAX];
    /* the pipeline round streamed past the cache (result's stream_*): at
     * slice stream_bytes, stage + copy-out and the reduction, B/s; 0 = not
     * measured (--quick, files before it) */
    double stream_bytes, stream_hand_bw, stream_reduce_bw;
    double tcp_alpha, tcp_bw;
    /* strata send/recv one-way time by message size (s) */
    int shm_n;
    double shm_bytes[STRATA_PROBE_CURVE_MAX];
    double shm_oneway[STRATA_PROBE_CURVE_MAX];
    /* An input, not a measurement (never saved): how a waiting rank gets
     * a descheduled peer onto its core when ranks outnumber cores. */
    strata_probe_wait_t wait;
    /* Inputs (never saved): how the engine stores its output. store: AUTO
     * prices both plain and streaming stores and takes the cheaper, as
     * the engine picks per output size (docs/probe.md); PLAIN or STREAM
     * price that one. stream_from > 0: the engine was told to stream from
     * that many bytes (STRATA_NT_THRESHOLD) and the model follows it,
     * whatever store says. */
    strata_probe_store_t store;
    double stream_from;
    /* s per add of a dependent chain when the probe ran (result's
     * add_time); 0 = not measured (files before it). Not priced. */
    double add_time;
} strata_probe_calib_t;

/* The calibration a result gives. */
STRATA_API void strata_probe_calib_from(const strata_probe_result_t *res,
                                        strata_probe_calib_t *calib_p);
/* Write res as a cluster file of this host (docs/formats.md, docs/probe.md). */
STRATA_API strata_status_t strata_probe_save(const strata_probe_result_t *res, const char *path,
                                             strata_error_t *err);
/* Read the calibration of a cluster file written by strata_probe_save.
 * A file without "measured" is STRATA_ERR_NOT_FOUND; bad values give
 * file:line:col. */
STRATA_API strata_status_t strata_probe_calib_load(const char *path, strata_probe_calib_t *calib_p,
                                                   strata_error_t *err);

/* Copy and reduce bandwidth of one core for a working set of `bytes`,
 * interpolated in log(bytes) over the measured curve (clamped at its
 * ends). */
STRATA_API double strata_probe_copy_bw(const strata_probe_calib_t *c, double bytes);
STRATA_API double strata_probe_reduce_bw(const strata_probe_calib_t *c, double bytes);
STRATA_API double strata_probe_read_bw(const strata_probe_calib_t *c, double bytes);
/* ... storing an output of `bytes` (0 when the file has no write curve) */
STRATA_API double strata_probe_write_bw(const strata_probe_calib_t *c, double bytes);
/* Read and output-store bandwidth per core for `bytes` while `busy` cores
 * stream at once, each its own buffer: the one-core curve at busy <= 1,
 * the all-core curve at busy >= cores, the time per byte linear in busy
 * between; the one-core curve where the all-core one was not measured. */
STRATA_API double strata_probe_read_bw_at(const strata_probe_calib_t *c, double bytes, int busy);
STRATA_API double strata_probe_write_bw_at(const strata_probe_calib_t *c, double bytes, int busy);
/* ... with streaming stores: interpolated over the points where they were
 * measured (clamped at their ends); 0 when the file has none. */
STRATA_API double strata_probe_write_nt_bw_at(const strata_probe_calib_t *c, double bytes,
                                              int busy);
/* The store mode the model prices for an output of `bytes` (PLAIN or
 * STREAM): c->stream_from when set, else c->store; AUTO prices both and
 * names the cheaper (PLAIN where no streaming curve was measured). */
STRATA_API strata_probe_store_t strata_probe_store_at(const strata_probe_calib_t *c,
                                                      strata_coll_t coll, strata_comm_algo_t algo,
                                                      int size, double bytes);
/* Hand-over bandwidth between cores for `bytes` (one writes, the other
 * copies out), likewise; without that curve (one core) from the
 * send/recv curve. */
STRATA_API double strata_probe_remote_bw(const strata_probe_calib_t *c, double bytes);

/* Time (s) to move `bytes` from one core's cache to another's as strata's
 * send/recv does, less its fixed α: interpolated in log(bytes) over the
 * measured one-way curve, extrapolated at the largest size's rate. */
STRATA_API double strata_probe_shm_move(const strata_probe_calib_t *c, double bytes);

/* This host as sched's cost model sees it for one call of `bytes` on
 * `size` local ranks with algo (strata_coll_machine_t's fields read off
 * the measured curves at the call's working set; docs/probe.md). Its
 * output stores are streaming where c->store is STREAM (and the file has
 * the streaming curve), plain otherwise: strata_probe_predict chooses. */
STRATA_API void strata_probe_machine(const strata_probe_calib_t *c, strata_comm_algo_t algo,
                                     int size, double bytes, strata_coll_machine_t *m_p);

/* A calibration from the quick figures `strata bench` measures when no
 * probe file is given (strata_comm_calibrate): one-way flag latency, one
 * core's copy and reduce rates; messages at half the copy rate (copied
 * into a slot and out), a byte handed over at the copy rate, reading not
 * charged, nothing per rank beyond the cores. */
STRATA_API void strata_probe_calib_quick(double alpha_s, double copy_bw, double reduce_bw,
                                         int cores, strata_probe_calib_t *calib_p);

/* "auto", "spin", "yield", "futex", "barrier"; parse returns false on
 * another name. */
STRATA_API const char *strata_probe_wait_name(strata_probe_wait_t w);
STRATA_API bool strata_probe_wait_parse(const char *name, strata_probe_wait_t *w_p);
/* The regime c->wait names at `size` ranks (AUTO resolved by the engine's
 * policy), and what one wait costs in it (s): the switches each core makes
 * to reach its awaited rank, ceil(size / cores) - 1 (the cores switch at
 * once), times a process switch by sched_yield (yield) or by a futex sleep
 * and wake (futex); 0 when
 * spinning; the barrier's per-rank cost times the ranks beyond the cores. */
STRATA_API strata_probe_wait_t strata_probe_wait_of(const strata_probe_calib_t *c, int size);
STRATA_API double strata_probe_wait_cost(const strata_probe_calib_t *c, int size);

/* Calibrated prediction (s) of one collective of `bytes` (the nccl-tests
 * size) on `size` local ranks: sched's cost model (strata_coll_cost) on
 * strata_probe_machine, with strata's engine as the direct schedule (algo
 * SHM/AUTO) or its message-passing schedules (RING, RECDBL), its output
 * stores in the mode strata_probe_store_at names. 0 when the calibration
 * lacks a curve. */
STRATA_API double strata_probe_predict(const strata_probe_calib_t *c, strata_coll_t coll,
                                       strata_comm_algo_t algo, int size, size_t bytes);

/* One paragraph naming what bounds this host's collectives, from the
 * measurements (memory copy bound, coherence latency, the scheduler when
 * ranks outnumber cores). Writes into buf; returns buf. */
STRATA_API const char *strata_probe_bottleneck(const strata_probe_calib_t *c, int ranks, char *buf,
                                               size_t len);

#ifdef __cplusplus
}
#endif
#endif /* STRATA_PROBE_H */
