/*
 * engine.h — the flow-level network engine inside the simulator: directed
 * links ("resources") with a capacity, flows that cross a weighted set of
 * resources, max-min fair sharing by progressive filling, and a discrete
 * event loop in simulated time.
 *
 * Model (after SimGrid's CM02/LV08 flow model, shared/reference/simulators.md
 * §4): a flow submitted at t first waits its path latency (the sum of per-hop
 * latencies, given by the caller), then drains its bytes at the max-min fair
 * rate of the moment. A flow crosses each resource r with a weight w_r: a
 * single routed path has weight 1 on each hop; "ideal spreading" over k
 * equal-cost paths is one flow whose weight on a link is the fraction of the
 * k paths that cross it (the fluid limit of an even split); a path that
 * crosses one link twice has weight 2 there. A flow at rate x uses x·w_r of r.
 *
 * Speed: rates are recomputed only for the connected component (resources
 * linked by the flows that cross them) of the resources an event touched,
 * and all events that fall at the same simulated time are handled as one
 * batch before one recomputation. The next event of every flow (activation
 * or completion) lives in an indexed binary heap keyed by time.
 *
 * Workload: up to ~10^5 resources and ~10^5 concurrent flows; a run is
 * single-threaded and deterministic (same inputs → bit-identical times).
 */
#ifndef STRATA_SIM_ENGINE_H
#define STRATA_SIM_ENGINE_H

#include "util.h"

#include <stdint.h>

typedef struct sim_net sim_net_t;

/* One hop of a flow: the resource it crosses and with what weight. */
typedef struct sim_hop {
    uint32_t res;
    double w;
} sim_hop_t;

/* Called when a flow has delivered its last byte, at simulated time t.
 * The callback may add flows (starting at t or later). */
typedef void (*sim_done_fn)(void *ctx, uint64_t tag, double t);

/* Create an engine with n_res resources, all with capacity 0 until set.
 * Returns NULL on OOM. Destroy with sim_net_destroy (NULL is a no-op). */
sim_net_t *sim_net_create(uint32_t n_res);
void sim_net_destroy(sim_net_t *net);

/* Capacity (B/s, > 0) and tier (an index < SIM_MAX_TIERS the caller names)
 * of resource r. */
#define SIM_MAX_TIERS 16
void sim_net_set_res(sim_net_t *net, uint32_t r, double cap, unsigned tier);
uint32_t sim_net_res_count(const sim_net_t *net);

/* Reset time to 0 and all statistics; resource capacities are kept.
 * Fails (returns -1) if flows are still pending. */
int sim_net_reset(sim_net_t *net);

/* Rewind time to 0 keeping statistics and capacities, and make flow slots
 * be handed out in the same order as on a fresh engine, so a phase run
 * after a rewind is bit-identical to the same phase run first. Fails (-1)
 * if flows are pending. */
int sim_net_rewind(sim_net_t *net);

/* Statistics weight: bytes carried and bound/latency flow-seconds are
 * added × weight (a phase timed once and reused n times counts n times).
 * Default 1. */
void sim_net_set_weight(sim_net_t *net, double weight);

/* Ideal (contention-free) mode: every flow gets min over its hops of
 * cap/w, as if it had the links to itself — the α-β assumption. */
void sim_net_set_ideal(sim_net_t *net, bool ideal);

/* Add a flow of `bytes` that becomes active at t_start + latency (t_start
 * must not be before the current time) and crosses hops[0..n_hops). The
 * hops are copied. A flow with no hops or no bytes completes at activation.
 * Returns 0, or -1 on OOM / bad arguments (resource out of range, w <= 0). */
int sim_flow_add(sim_net_t *net, double t_start, double latency, double bytes,
                 const sim_hop_t *hops, uint32_t n_hops, uint64_t tag);

/* sim_flow_add for hops known to pass its checks (each resource in
 * range with a capacity, each weight > 0), whose lowest tier is
 * min_tier: nothing is checked (the driver's routes check their hops
 * once, route.c). */
int sim_flow_add_valid(sim_net_t *net, double t_start, double latency, double bytes,
                       const sim_hop_t *hops, uint32_t n_hops, unsigned min_tier, uint64_t tag);

/* Run until no flow is pending, calling done for each completed flow.
 * Returns 0, or -1 on OOM (the engine is then unusable). */
int sim_net_run(sim_net_t *net, sim_done_fn done, void *ctx);

/* During a completion callback: the completed flow's life by tier — the
 * seconds each tier bounded its rate, and [SIM_MAX_TIERS] its latency.
 * They add up to its completion time minus its submit time. One scratch
 * row, assembled at each completion: read it in the callback. */
const double *sim_net_done_breakdown(const sim_net_t *net);

/* Current simulated time (the time of the last event processed). */
double sim_net_now(const sim_net_t *net);

/* ==== Statistics, accumulated since creation or the last reset ==== */

typedef struct sim_net_stats {
    uint64_t events;     /* flow activations + completions */
    uint64_t batches;    /* distinct event times (= rate recomputations) */
    uint64_t flows;      /* flows completed */
    uint64_t comp_flows; /* Σ flows in recomputed components (work done) */
    /* Flow-seconds each tier bounded a flow's rate (the resource that fixed
     * the flow's rate in progressive filling), and flow-seconds spent in
     * latency before draining (tier index SIM_MAX_TIERS). */
    double tier_bound[SIM_MAX_TIERS + 1];
} sim_net_stats_t;

void sim_net_get_stats(const sim_net_t *net, sim_net_stats_t *out);
/* Bytes carried by resource r so far (Σ bytes × weight of completed flows). */
double sim_net_res_bytes(const sim_net_t *net, uint32_t r);
double sim_net_res_cap(const sim_net_t *net, uint32_t r);
unsigned sim_net_res_tier(const sim_net_t *net, uint32_t r);

/* Optional observer of rate changes on resources: called, during a run,
 * with the total rate crossing resource r from time t on, for every r whose
 * load changed. Used by the trace writer; NULL disables. */
typedef void (*sim_load_fn)(void *ctx, uint32_t r, double t, double rate);
void sim_net_set_load_observer(sim_net_t *net, sim_load_fn fn, void *ctx);

/* ==== Internals shared by engine files ==== */

/* Indexed binary min-heap of ids (flow slots) keyed by time. Keys live
 * beside the ids in heap order, so sifting reads one array. */
typedef struct sim_hent {
    double key;
    uint32_t id;
} sim_hent_t;

typedef struct sim_heap {
    sim_hent_t *ent; /* heap order */
    uint32_t *pos;   /* pos[id] = index in ent, UINT32_MAX if absent */
    sim_hent_t *tmp; /* sim_heap_take's sorting room */
    uint32_t n, cap_pos;
} sim_heap_t;

int sim_heap_reserve(sim_heap_t *h, uint32_t max_id);
void sim_heap_set(sim_heap_t *h, uint32_t id, double key); /* insert or move */
void sim_heap_remove(sim_heap_t *h, uint32_t id);
/* Many keys at once: sim_heap_set_lazy inserts or moves without sifting
 * (the heap is then out of order), sim_heap_fix restores the order in one
 * bottom-up pass (Floyd, O(n)) — cheaper than sifting when a large part
 * of the heap changed. The pop order, (key, id), is the same either way. */
void sim_heap_set_lazy(sim_heap_t *h, uint32_t id, double key);
void sim_heap_fix(sim_heap_t *h);
uint32_t sim_heap_pop(sim_heap_t *h);
/* Remove all entries with key <= limit into out (room for h->n), sorted by
 * (key, id), when they are at least a sixteenth of the heap; else remove
 * nothing. Returns how many were removed. */
uint32_t sim_heap_take(sim_heap_t *h, double limit, sim_hent_t *out);
static inline double sim_heap_top_key(const sim_heap_t *h)
{
    return h->ent[0].key;
}
void sim_heap_free(sim_heap_t *h);

#endif /* STRATA_SIM_ENGINE_H */
