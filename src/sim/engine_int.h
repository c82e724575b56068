/*
 * engine_int.h — the engine's data layout, shared by event.c (the event
 * loop, flow bookkeeping) and flow.c (max-min fair rates). Not used outside
 * the engine.
 *
 * Layout: resources are struct-of-arrays indexed by resource id; flows live
 * in recycled slots; each resource keeps the list of active flows crossing
 * it, and each flow hop remembers its index in that list. Removal is lazy:
 * a completing flow only counts its entries dead (an entry is live while
 * its flow is active and its hop points back at it, flow.c), and the
 * lists its batch touched are compacted (the last live entries fill the
 * holes) before the batch's component search — a list that a batch empties,
 * as a collective's phase does, is cleared without moving any entry, where
 * removing one by one (swap with the last) rewrote the position of a flow
 * that was about to complete too (issue 14's second pass, bench/README.md).
 *
 * Local numbering: a resource gets its record (sim_rstate_t) when the first
 * flow crossing it is added, numbered in that order, and flows' hops hold
 * these local numbers. A rewind (no flow pending) forgets the numbering
 * unless the run that ended used every
 * numbered resource (the next phase of a ring crosses the same ones; its
 * records are then neither renumbered nor reset, which were 16k random
 * writes a phase on 1,024 GPUs).
 * A phase's few thousand resources, scattered over a 16k-GPU fabric's
 * 300k, so sit together, a component's next to each other, in the order
 * its flows were added — the records the max-min recomputation walks
 * again at every event of the component share cache lines and pages
 * (bench/README.md, s12-h14e). Capacities, tiers and bytes carried stay
 * indexed by the caller's (global) number; where the order of resources
 * decides anything (ties in the share heap, flow.c) the global number does,
 * so a run is bit-identical to the one numbered globally.
 */
#ifndef STRATA_SIM_ENGINE_INT_H
#define STRATA_SIM_ENGINE_INT_H

#include "engine.h"

enum { FLOW_FREE = 0, FLOW_WAITING = 1, FLOW_ACTIVE = 2 };

typedef struct sim_fhop {
    uint32_t res; /* local number (engine_int.h) */
    uint32_t pos; /* index of this flow in lists[res] while active */
    double w;
} sim_fhop_t;

typedef struct sim_flow {
    /* what the component search and progressive filling read, first */
    sim_fhop_t *hops; /* hpool.v + hoff */
    uint32_t n_hops, hoff;
    uint32_t mark;    /* BFS epoch */
    uint32_t bott;    /* resource that fixed the rate; UINT32_MAX if none */
    double next_rate; /* staged by progressive filling */
    uint8_t state;
    uint8_t fixed;
    uint8_t min_tier; /* lowest tier among its hops (attribution, flow.c) */
    uint8_t ctier;    /* the tier whose ftb entry cacc holds; SIM_TB_NONE */
    uint32_t tmask;   /* bit t: its ftb row's entry t is written (others are
                         stale: the row is not cleared when the slot is reused) */
    double rate;
    double bytes, remaining;
    /* time `remaining` was last brought up to date, which is also when its
     * current bottleneck-accounting segment started */
    double t_last;
    double cacc; /* ftb[its slot][ctier], kept here while the tier lasts */
    double latency;
    uint64_t tag;
} sim_flow_t;

/* No tier in a flow's cacc. */
#define SIM_TB_NONE 0xff

typedef struct sim_rentry {
    uint32_t flow;
    uint32_t hop;
} sim_rentry_t;

typedef struct sim_share {
    double share;
    uint32_t res; /* local */
    uint32_t gid; /* its global number: ties are broken by it */
} sim_share_t;

/* What the engine reads per resource while flows cross it, in one 64-byte
 * record on a cache line of its own (by local number): a flow's hops are
 * scattered over the resources, and every separate per-resource array
 * (its flow list, its marks) was one more cache miss per hop. The bytes
 * carried are added by global number (gbytes), once per completed hop. */
typedef struct sim_rstate {
    double cap;
    double rem, wsum; /* progressive-filling scratch */
    double maxrate;   /* highest rate fixed on it during filling */
    sim_rentry_t *v;  /* the active flows crossing it */
    uint32_t n;       /* how many */
    uint32_t nun;     /* unfixed flows crossing it during filling; between a
                         batch's events and its recomputation, its dead entries */
    uint32_t mark;    /* BFS epoch; epoch + 1: touched by the current batch */
    uint32_t gid;     /* the caller's number of this resource */
    uint8_t tier;
    uint8_t lg_cap; /* v has room for 1 << lg_cap entries (none while v is NULL) */
} sim_rstate_t;

struct sim_net {
    uint32_t n_res;
    /* by global number */
    double *gcap;
    uint8_t *gtier;
    double *gbytes; /* carried, for statistics */
    uint32_t *lmap; /* its local number, UINT32_MAX if it has none */
    double *load;   /* Σ rate × w of active flows (kept only with an observer) */
    /* by local number: n_local records in use, room for cap_local */
    sim_rstate_t *rs; /* 64-byte aligned, inside rs_mem */
    void *rs_mem;
    uint32_t n_local, cap_local;
    /* by local number: the last run (between rewinds) that used it; a
     * rewind keeps the numbering when the run just ended used every
     * numbered resource (n_used == n_local: the next run, a collective's
     * next phase, usually crosses the same ones), else forgets it */
    uint32_t *lrun;
    uint32_t run, n_used;

    sim_flow_t *flows;
    /* per slot: seconds its flow was bound by each tier but the current
     * one (apart from the flow; only the entries of its tmask are its
     * own). Most flows keep one tier all their life, so the row is written
     * only when a flow's bottleneck changes tier. */
    double (*ftb)[SIM_MAX_TIERS];
    uint32_t n_slots, cap_slots;
    UTIL_VEC(uint32_t) free_slots;
    /* every flow's hops, in the order flows were added (a phase's flows,
     * walked at each of its events, side by side); emptied by a rewind,
     * compacted when it fills (event.c, hop_room). live_hops: those of
     * pending flows. */
    UTIL_VEC(sim_fhop_t) hpool;
    size_t live_hops;
    uint32_t pending;

    sim_heap_t heap;
    double now;
    uint32_t epoch;

    /* component being recomputed; between recomputations, the resources
     * the current batch touched (marked epoch + 1) */
    UTIL_VEC(uint32_t) comp_res;
    UTIL_VEC(uint32_t) comp_flow;
    UTIL_VEC(sim_share_t) shares; /* progressive-filling heap */
    UTIL_VEC(uint32_t) level;     /* resources at the current fill level */
    UTIL_VEC(double) lshare;      /* a level round's share of each comp_res entry */
    UTIL_VEC(sim_hent_t) batch;   /* a batch's events taken from the heap at once */

    sim_net_stats_t stats;
    sim_load_fn observer;
    void *observer_ctx;
    double weight;
    bool ideal;
    /* breakdown of the flow being completed, [SIM_MAX_TIERS] its latency:
     * assembled from its ftb entries, cacc and latency at completion */
    double done_tb[SIM_MAX_TIERS + 1];
};

/* UTIL_VEC_PUSH with the common case (room left) inline: the engine pushes
 * once per flow hop per event, and the out-of-line reserve call was 7 % of
 * an event-by-event run (bench/README.md, profile). */
#define SIM_PUSH(vec, x)                                                                           \
    ((vec)->n < (vec)->cap ? ((vec)->v[(vec)->n++] = (x), 0) : UTIL_VEC_PUSH(vec, x))

/* Recompute max-min fair rates for the component of the touched resources
 * and reschedule its flows' completions. Returns 0 or -1 on OOM. */
int sim_flow_recompute(sim_net_t *net);
/* A flow's rate alone on its path, min over hops of cap / w; its bott
 * becomes the hop that sets it (the first among equals). */
double sim_flow_alone_rate(const sim_net_t *net, sim_flow_t *f);
/* Write a flow's cached breakdown entry back to its ftb row. */
static inline void sim_flow_tb_flush(sim_net_t *net, sim_flow_t *f)
{
    if (f->ctier == SIM_TB_NONE) return;
    net->ftb[f - net->flows][f->ctier] = f->cacc;
    f->tmask |= 1u << f->ctier;
}

/* Bring a flow's remaining bytes and bottleneck accounting up to `now`
 * (inline: once per completion and per rate change). The seconds its
 * bottleneck's tier bound it go to cacc, the running value of that
 * tier's entry in the flow's ftb row (a separate array, a cache miss at
 * every rate change when written there), flushed when the tier changes
 * and at completion: the same additions in the same order, so the same
 * bits. */
static inline void sim_flow_advance(sim_net_t *net, sim_flow_t *f)
{
    double dt = net->now - f->t_last; /* >= 0: time only advances */
    if (dt > 0) {
        f->remaining -= f->rate * dt;
        if (f->remaining < 0) f->remaining = 0;
        f->t_last = net->now;
        if (f->bott != UINT32_MAX) {
            unsigned t = net->rs[f->bott].tier;
            net->stats.tier_bound[t] += dt * net->weight;
            if (t != f->ctier) {
                sim_flow_tb_flush(net, f);
                f->ctier = (uint8_t)t;
                f->cacc = f->tmask >> t & 1 ? net->ftb[f - net->flows][t] : 0;
            }
            f->cacc += dt;
        }
    }
}

#endif
