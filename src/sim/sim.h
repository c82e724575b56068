/*
 * sim.h — internals of the simulator module shared by its files: the
 * topology→engine mapping and route cache (route.c), the schedule driver
 * (driver.c), the trace recorder (trace.c) and results (result.c).
 */
#ifndef STRATA_SIM_INTERNAL_H
#define STRATA_SIM_INTERNAL_H

#include "engine.h"
#include "strata/sched.h"
#include "strata/sim.h"
#include "strata/topo.h"

/* ==== Topology mapping (route.c) ==== */

typedef struct sim_topo {
    const strata_topo_t *topo;
    sim_net_t *net;
    uint32_t nchan;
    uint8_t *chan_class;
    int nclasses;
    strata_sim_class_t classes[SIM_MAX_TIERS];
} sim_topo_t;

strata_status_t sim_topo_init(sim_topo_t *st, const strata_topo_t *topo, strata_error_t *err);
void sim_topo_fini(sim_topo_t *st);

/* A cached route: weighted channels and mean latency. Owned by the cache. */
typedef struct sim_route {
    sim_hop_t *hops;
    uint32_t n;
    double latency;
    /* With the engine named (sim_routes_set_net): the bottleneck min over
     * hops of cap / w (a flow's rate alone on the route), the lowest tier
     * of its hops, and whether every hop is one sim_flow_add accepts
     * (sim_flow_add_valid may then take it unchecked). */
    double alone_bw;
    uint8_t min_tier;
    bool valid;
} sim_route_t;

typedef struct sim_routes sim_routes_t;
sim_routes_t *sim_routes_create(const strata_topo_t *topo, strata_sim_routing_t routing,
                                uint64_t seed, uint32_t conns, bool cross_rail,
                                strata_error_t *err);
void sim_routes_destroy(sim_routes_t *rt);
/* The engine whose resources the routes' channels are: routes computed
 * from now on carry alone_bw, min_tier and valid. */
void sim_routes_set_net(sim_routes_t *rt, const sim_net_t *net);
/* The route is valid until the next call. rails: a send to another server
 * leaves by the NIC on the receiver's rail (route.c; a ring's channels),
 * unless the routes were made with cross_rail. */
strata_status_t sim_routes_get(sim_routes_t *rt, int32_t src, int32_t dst, bool rails,
                               const sim_route_t **route_p, strata_error_t *err);
size_t sim_routes_count(const sim_routes_t *rt);
strata_sim_routing_t sim_routes_routing(const sim_routes_t *rt);
/* 1 when the SPREAD route src -> dst (devices, one leg) splits over all its
 * equal-cost paths rather than a sample of them, 0 when sampled. */
int sim_routes_exhaustive(sim_routes_t *rt, int32_t src, int32_t dst);
/* Times the cache was emptied because it held its limit of routes
 * (8 per endpoint + 4096, or 4 KiB of routes per endpoint + 64 MiB);
 * the count limit can be lowered for tests. */
uint64_t sim_routes_flushes(const sim_routes_t *rt);
void sim_routes_set_limit(sim_routes_t *rt, size_t limit);
/* With routes > 0: keep up to routes (+ 4096) routes whatever their bytes,
 * a phase's worth that the next phases reuse (driver.c, relabelled
 * phases); with 0: the usual limits again (the cache emptied). */
void sim_routes_hold(sim_routes_t *rt, size_t routes);
/* Empty the cache (its memory kept for the next routes). */
void sim_routes_empty(sim_routes_t *rt);
/* A set of devices routed as one (spread evenly over its members); returns
 * its id for sim_routes_get, or -1 on OOM. */
int32_t sim_routes_add_set(sim_routes_t *rt, const int32_t *devs, uint32_t n);

/* ==== Trace recorder (trace.c) ==== */

/* One recorded item: a step of an agent (chan < 0) or a load change on a
 * traced channel (agent < 0). Times are absolute seconds. */
typedef struct sim_tev {
    int32_t agent; /* global agent index, or -1 */
    int32_t peer;  /* global agent index of the peer, or -1 */
    int32_t chan;  /* traced channel, or -1 */
    uint8_t op;    /* strata_step_op_t */
    double bytes;  /* step bytes, or load in B/s */
    double t0, t1;
} sim_tev_t;

/* Recorded items are capped so a trace of a huge run stays openable. */
#define SIM_TRACE_MAX_EVENTS 1000000

typedef struct sim_trace {
    UTIL_VEC(sim_tev_t) ev;
    bool truncated;
    bool oom;            /* truncated because memory ran out */
    double offset;       /* added to engine times (barrier phases) */
    int32_t *chan_track; /* track per channel, -1 if not traced */
    uint32_t nchan;
} sim_trace_t;

void sim_trace_add(sim_trace_t *tr, const sim_tev_t *e);
void sim_trace_on_load(void *ctx, uint32_t r, double t, double rate);
struct sim_job;
strata_status_t sim_trace_write(const sim_trace_t *tr, const char *path, const struct sim_job *jobs,
                                uint32_t njobs, char (*link_names)[96], int ntracks,
                                strata_error_t *err);

/* ==== Driver (driver.c) ==== */

typedef struct sim_job {
    const strata_sched_t *s;
    uint32_t nagents, nphases;
    uint32_t base; /* first global agent index */
    int32_t *dev;  /* device of each agent (owned) */
} sim_job_t;

typedef struct sim_drive {
    /* inputs */
    sim_topo_t *st;
    sim_routes_t *routes;
    sim_job_t *jobs;
    uint32_t njobs;
    strata_sim_mode_t mode;
    bool reuse;
    bool fold;            /* BARRIER: fold phases by parts (fold.c; with reuse) */
    bool rotate;          /* BARRIER: folded phases from their representative channels */
    bool recall;          /* BARRIER: a folded part timed in an earlier phase recalled (fold.c) */
    bool ideal;           /* the engine runs in its ideal mode throughout (tests) */
    uint32_t phase_limit; /* BARRIER: stop after this many phases (0 = all; bench) */
    sim_trace_t *trace;   /* NULL: no trace */
    util_progress_t *progress;
    double *job_end; /* per job finish time (njobs, zeroed), or NULL */
    /* outputs */
    double time;
    uint64_t phases, phases_simulated;
    /* BARRIER: simulated phases the contention-free certificate proved
     * free of sharing, run in the engine's ideal mode (cert.c) */
    uint64_t phases_certified;
    /* phases whose steps were generated at all (simulated, or scanned for
     * repeats); the others were reused on their schedule's class alone */
    uint64_t phases_generated;
    /* BARRIER: simulated phases timed by parts, one part per shape
     * (fold.c), their flows, and of those the ones the engine ran */
    uint64_t phases_folded, fold_flows, fold_timed;
    /* of the parts' representatives, those recalled from an earlier
     * phase (fold.c, "Across phases"), and their flows */
    uint64_t fold_recalled, fold_recalled_flows;
    /* BARRIER: the channel rotation's order (1: none) and the folded
     * phases generated by their representative channels (driver.c) */
    uint32_t rot_order;
    uint64_t phases_rot;
    uint64_t phases_quot; /* of them, timed on the rotation's quotient (fold.c) */
    uint64_t phases_map;  /* of those, from the representatives under the run's map */
    /* BARRIER: simulated phases relabelled onto a representative distance
     * (xorsym.c, sim_xor_relabel) */
    uint64_t phases_relabeled;
    /* per channel, bytes carried that the engine did not count (folded
     * phases), or NULL; the caller frees it */
    double *res_extra;
    /* several collectives proven not to interact, each timed alone
     * (driver.c, run_groups) */
    bool groups_independent;
    /* BARRIER: each phase's duration split along its critical (last
     * completing) flow: seconds per tier bounding it, [SIM_MAX_TIERS]
     * latency and waits. Sums to time. */
    double crit[SIM_MAX_TIERS + 1];
    bool have_crit;
    /* The contention-free time, computed alongside: every step timed
     * with each of its flows alone on its path (latency + bytes /
     * min(cap / w)), under the same ordering rules — what the engine's
     * ideal mode gives, without a second run (sim.c). */
    double time_alone;
} sim_drive_t;

/* Run all jobs once on st->net (whose statistics accumulate). */
strata_status_t sim_drive_run(sim_drive_t *d, strata_error_t *err);

/* ==== Benchmark hooks (sim.c) ==== */

/* BARRIER: simulate only the first n phases (0 = all), to time the
 * event-by-event run of a huge case on a prefix and extrapolate. */
void sim_set_phase_limit(strata_sim_t *sim, uint32_t n);
/* Tests: the route cache's limit (routes kept before it is emptied), and
 * how many times it was emptied. */
void sim_set_route_limit(strata_sim_t *sim, size_t n);
uint64_t sim_route_flushes(const strata_sim_t *sim);
/* Tests: time the contention-free run with the engine's ideal mode (a
 * second run) instead of alongside the first. */
void sim_set_alone_pass(strata_sim_t *sim, bool always);
/* Tests: recall folded parts timed in earlier phases (fold.c; default
 * on), and how many parts the last run recalled, with their flows. */
void sim_set_fold_recall(strata_sim_t *sim, bool on);
void sim_fold_recalled(const strata_sim_t *sim, uint64_t *parts, uint64_t *flows);

#endif
