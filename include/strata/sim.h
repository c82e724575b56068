/*
 * strata/sim.h — the simulator: time collective schedules (strata/sched.h)
 * on a topology (strata/topo.h) with links shared max-min fairly between
 * the flows that cross them, and say which links bounded the time.
 *
 * Model (docs/simulator.md). Every directed channel of the topology is a
 * resource with the channel's capacity. A SEND step becomes a flow from the
 * sender's device to the receiver's device along routed paths; it waits the
 * path latency (sum of per-hop latencies), then drains at its max-min fair
 * rate, recomputed at every flow arrival and departure for the flows the
 * event affects. Routing: SPREAD splits every flow over all equal-cost
 * paths in proportion to their bottleneck bandwidth (fluid ideal
 * spreading; an even split in a fat-tree); ECMP pins each (src, dst) pair
 * to one path chosen by a hash with a seed, as a switch hashes a
 * connection, so hash collisions show. Local steps (COPY, REDUCE) and
 * reductions take no time: the network is what is simulated.
 *
 * Ordering. BARRIER mode (the default) runs the schedule's bulk-synchronous
 * phases one after another: a phase starts when the previous one has
 * finished on every agent. A phase whose pattern class (strata_sched_
 * phase_class) was timed already is not simulated again: its duration and
 * link loads are reused, and the result is bit-identical to simulating it
 * (reuse = false gives the straightforward event-by-event run). ASYNC mode
 * drops the global barrier: each agent moves on when its own steps are
 * done (sched's ordering rules 1–3 exactly), so skew between ranks shows;
 * nothing is reused. Several collectives added to one simulator run
 * together in ASYNC mode, sharing the links (e.g. TP and DP on one NIC).
 *
 * The α-β comparison is the same run with sharing switched off (every flow
 * gets its path's bottleneck bandwidth to itself): exactly what a
 * contention-free α-β model predicts for this schedule on these paths.
 * The result also carries the network part (α + β; reductions are not
 * simulated) of sched's closed-form prediction (strata_coll_cost on
 * strata_coll_machine_from_topo) for the first collective, an independent
 * estimate from the collective layer.
 *
 * Thread safety: a simulator belongs to one thread; results are immutable.
 */
#ifndef STRATA_SIM_H
#define STRATA_SIM_H

#include "strata/common.h"
#include "strata/sched.h"
#include "strata/topo.h"

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    STRATA_SIM_SPREAD = 0, /* split over all equal-cost paths */
    STRATA_SIM_ECMP = 1,   /* one path per (src, dst) by seeded hash */
} strata_sim_routing_t;

typedef enum {
    STRATA_SIM_BARRIER = 0, /* phases one after another; phase reuse */
    STRATA_SIM_ASYNC = 1,   /* per-agent dependencies only */
} strata_sim_mode_t;

typedef struct strata_sim_opts {
    strata_sim_routing_t routing;
    strata_sim_mode_t mode;
    uint64_t seed;          /* ECMP hash seed */
    uint32_t conns;         /* ECMP: connections (queue pairs) per rank pair, each hashed
                               on its own and carrying an equal share (default 1) */
    bool no_reuse;          /* BARRIER: simulate every phase (for checks, benchmarks) */
    bool progress;          /* progress bar on stderr (when it is a TTY) */
    const char *trace_path; /* Chrome trace-event JSON, or NULL */
    int trace_links;        /* busiest links given a track in the trace (default 8) */
    int top_links;          /* most loaded links listed in the result (default 10) */
    bool cross_rail;        /* every send to another server leaves by its sender's own
                               NIC (PXN off; default: by the NIC on the receiver's
                               rail, as NCCL sends, docs/simulator.md) */
    bool no_fold;           /* BARRIER: time no phase by parts (docs/simulator.md; checks) */
    bool no_rotate;         /* BARRIER: generate every channel of a folded phase, not one
                               per orbit of the schedule's channel rotation (checks) */
} strata_sim_opts_t;

/* Defaults: SPREAD, BARRIER, seed 1, 1 connection, reuse on, no trace, 8 trace links,
 * 10 top links, rails on (cross_rail false). */
STRATA_API strata_sim_opts_t strata_sim_opts_default(void);

typedef struct strata_sim strata_sim_t;

/* Most pipeline chunks a simulated schedule may have (strata_sim_add
 * refuses more with STRATA_ERR_RANGE): simulation time grows with the
 * chunk count (16384 chunks of a tree allreduce on 8 ranks: about 2 s),
 * and the cost model picks far fewer (2630 for 64 GiB on 8 ranks). */
#define STRATA_SIM_CHUNKS_MAX 16384

/* A simulator for one finished topology (which must outlive it). The caller
 * owns *sim_p; strata_sim_destroy(NULL) is a no-op. */
STRATA_API strata_status_t strata_sim_create(const strata_topo_t *topo,
                                             const strata_sim_opts_t *opts, strata_sim_t **sim_p,
                                             strata_error_t *err);
STRATA_API void strata_sim_destroy(strata_sim_t *sim);

/* Add a collective: schedule s (which must outlive the run) with agent r
 * (a rank) on endpoint rank ranks[r] of the topology; ranks NULL means
 * agent r on endpoint r. innet's switch agents go on the scale-up
 * switches of their ranks' server, else on the switch joining their ranks
 * (docs/simulator.md). Errors name the bad rank; a schedule of more
 * than STRATA_SIM_CHUNKS_MAX chunks is STRATA_ERR_RANGE. */
STRATA_API strata_status_t strata_sim_add(strata_sim_t *sim, const strata_sched_t *s,
                                          const int32_t *ranks, strata_error_t *err);

/* ==== Results ==== */

#define STRATA_SIM_CLASSES_MAX 16

/* A class of links: one topology tier and one link kind ("leaf/ib-ndr"). */
typedef struct strata_sim_class {
    char name[48];
    int32_t tier;
    double capacity;    /* Σ channel capacity, B/s */
    double bytes;       /* Σ bytes carried by its channels */
    double utilisation; /* bytes / (capacity × time), 0..1 */
    /* Share of the time this class was the bottleneck, along the critical
     * chain of steps that decided the finish (docs/simulator.md). */
    double bound_share;
} strata_sim_class_t;

typedef struct strata_sim_link_load {
    int32_t link, chan; /* topology ids */
    char name[96];      /* "gpu3 -> nvswitch0" */
    int32_t cls;        /* index into classes */
    double bytes;
    double utilisation; /* bytes / (capacity × time) */
} strata_sim_link_load_t;

typedef struct strata_sim_result {
    double time;       /* simulated seconds */
    double time_ab;    /* α-β (contention-free) prediction, seconds */
    double time_model; /* α + β of sched's closed-form model (strata_coll_cost), 0 if n/a */
    const char *model_caveat; /* contention that model cannot see here
                                 (strata_coll_model_caveat), static; NULL: none */
    double bytes;             /* per-rank data size of the (first) collective */
    double algbw, busbw;      /* B/s, nccl-tests definitions (first collective) */
    double latency_share;     /* the rest of bound_share: path latency and waits */
    int nclasses;
    strata_sim_class_t classes[STRATA_SIM_CLASSES_MAX];
    int nlinks;
    strata_sim_link_load_t *links; /* most loaded, nlinks of them */
    uint32_t njobs;                /* collectives added */
    double *job_time;              /* finish time of each, in the order added */
    /* Work done. */
    uint64_t phases, phases_simulated;
    /* simulated phases the contention-free certificate proved free of
     * sharing, so timed with every flow at its rate alone on its path
     * (docs/simulator.md) */
    uint64_t phases_certified;
    /* phases whose steps were generated at all: simulated, or walked to
     * find which phases repeat; every other phase was reused on the
     * schedule's own class (strata_sched_phase_class) without being
     * generated (docs/simulator.md) */
    uint64_t phases_generated;
    /* simulated phases timed by parts, each shape of part once
     * (docs/simulator.md), the flows of those phases, and of them the
     * flows the engine ran */
    uint64_t phases_folded, fold_flows, fold_timed;
    /* of the folded phases, those generated by their representative
     * channels only, each send standing for its rot_order images under
     * the schedule's channel rotation (strata_sched_rot_order;
     * docs/simulator.md); rot_order 1 when none was used */
    uint64_t phases_rot;
    uint32_t rot_order;
    /* of the rotated phases, those whose fold found the rotation a
     * symmetry of the routed flows and timed one flow per orbit
     * (docs/simulator.md, "The rotation's quotient") */
    uint64_t phases_quot;
    /* of those, the phases handed to the fold as their representative
     * sends only, under the run's checked channel map (driver.c
     * run_global) */
    uint64_t phases_map;
    /* simulated phases relabelled by a proven symmetry of the cluster onto
     * a representative XOR distance, whose routes they share
     * (docs/simulator.md, "Phases relabelled") */
    uint64_t phases_relabeled;
    uint64_t events, flows, batches;
    double wall;    /* seconds of host time for the run */
    char desc[160]; /* "allreduce ring 1 GiB on 1024 ranks, 1 chunk, spread, barrier" */
} strata_sim_result_t;

/* Run everything added; fills *res (free with strata_sim_result_free).
 * Writes the trace file if asked. May be called once per simulator. */
STRATA_API strata_status_t strata_sim_run(strata_sim_t *sim, strata_sim_result_t *res,
                                          strata_error_t *err);
STRATA_API void strata_sim_result_free(strata_sim_result_t *res);
/* A deep copy of src into *dst (free it with strata_sim_result_free). */
STRATA_API strata_status_t strata_sim_result_copy(strata_sim_result_t *dst,
                                                  const strata_sim_result_t *src,
                                                  strata_error_t *err);

/* Print a result as text (a summary and tables) or as one JSON object. */
STRATA_API strata_status_t strata_sim_result_print(const strata_sim_result_t *res, bool json,
                                                   FILE *out, strata_error_t *err);

/* busbw factor of nccl-tests for a collective on P ranks:
 * allreduce 2(P-1)/P, reduce-scatter/allgather/alltoall (P-1)/P, else 1. */
STRATA_API double strata_sim_busbw_factor(strata_coll_t coll, uint32_t nranks);

#ifdef __cplusplus
}
#endif
#endif /* STRATA_SIM_H */
