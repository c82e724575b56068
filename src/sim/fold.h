/*
 * fold.h — a phase's flows split into the parts that can share a link,
 * each part timed once per shape (fold.c). Used by driver.c's BARRIER run
 * for phases whose sends all start at the phase start.
 */
#ifndef STRATA_SIM_FOLD_H
#define STRATA_SIM_FOLD_H

#include "sim.h"

/* One flow of the phase: its hops (in sim_fold_t.hops), bytes, latency. */
typedef struct sim_fflow {
    uint32_t off, n;   /* all hops */
    uint32_t koff, kn; /* kept hops (fold.c), in sim_fold_t.khops */
    double bytes, latency, solo;
} sim_fflow_t;

/* Owns its arrays; zero-initialise, free with sim_fold_free. */
typedef struct sim_fold {
    UTIL_VEC(sim_hop_t) hops, khops;
    UTIL_VEC(sim_fflow_t) fl;
    uint32_t nres;
    /* per channel, kept across phases and cleared through `touched` */
    double *load;
    uint32_t *parent, *cid, *rank;
    double *cap; /* the engine's capacities and tiers, read once */
    uint8_t *tier;
    /* The rotation's quotient (fold.c, "Orbits"): set orbit = k >= 2 when
     * the flows come in consecutive runs of k, the images of one send
     * under a channel rotation; 0 otherwise. Per channel: the map the
     * runs induce on kept channels (nxt) and its inverse (prv), each
     * channel's orbit representative and orbit size. */
    uint32_t orbit;
    uint32_t *nxt, *prv, *canon, *osz;
    UTIL_VEC(sim_hop_t) qhops;
    /* The run's channel map (fold.c, "The run's map"): with global set,
     * every flow added stands for its run of `orbit` images, whose routes
     * sim_fold_sigma checked against the map. Kept across phases (gnxt,
     * gprv, gcanon, gosz); orb[] the bytes per channel of each orbit's
     * channels, spread over the orbit by sim_fold_spread. */
    bool global;
    uint32_t *gnxt, *gprv, *gcanon, *gosz;
    double *orb;
    UTIL_VEC(uint32_t) touched;
    /* global phases: each hop's orbit (its least channel) and orbit size,
     * found once per phase by global_reduce, read by its later passes */
    UTIL_VEC(uint32_t) horb, hosz;
    /* per component: flows and channels (CSR), signature table */
    UTIL_VEC(uint32_t) cflows, cres, foff, roff, fcomp, rep;
    UTIL_VEC(double) sig, tmp;
    UTIL_VEC(uint64_t) sigkey;
    UTIL_VEC(uint32_t) sigrep; /* component whose signature sits at sigoff */
    UTIL_VEC(size_t) sigoff, siglen;
    /* the engine run of the representatives: per component, its latest
     * flow's end and life by tier (cend, cbd), and the recalled entry of
     * each representative (crec; UINT32_MAX: run now) */
    UTIL_VEC(uint64_t) chash;
    UTIL_VEC(uint32_t) crec;
    UTIL_VEC(double) cend, cbd;
    /* Signatures timed in earlier phases of the run (fold.c, "Across
     * phases"): open addressing on the hash (xkey, 0 empty; xent the
     * entry), each entry's signature at xoff/xlen in xsig and its end and
     * life by tier in xres (SIM_MAX_TIERS + 2 words). no_recall: off
     * (tests). */
    UTIL_VEC(uint64_t) xkey;
    UTIL_VEC(uint32_t) xent;
    UTIL_VEC(double) xsig, xres;
    UTIL_VEC(size_t) xoff, xlen;
    bool no_recall;
    const sim_net_t *net;
} sim_fold_t;

/* What one folded phase came to. */
typedef struct sim_fold_out {
    double dur;   /* latest completion of any flow (0 if none) */
    double alone; /* latest latency + bytes / rate alone */
    /* the latest flow's life by tier, [SIM_MAX_TIERS] latency (engine's) */
    double crit[SIM_MAX_TIERS + 1];
    uint64_t comps, reps;    /* components, of them representatives (one per signature) */
    uint64_t recalled;       /* of the representatives, timed in an earlier phase */
    uint64_t recalled_flows; /* their flows (not run in the engine) */
    uint64_t flows, timed;   /* flows of the phase, of them run in the engine */
    bool contended;          /* some channel's demand exceeded its capacity */
    bool quotient;           /* timed on the rotation's quotient (orbit >= 2, checked) */
} sim_fold_out_t;

/* Forget the flows of the last phase. */
void sim_fold_reset(sim_fold_t *f);
/* Add one flow along r, starting at the phase start (copied). 0 or -1 OOM. */
int sim_fold_add(sim_fold_t *f, const sim_net_t *net, const sim_route_t *r, double bytes);
/* Time the flows added on net (idle, rewound: time 0), whose statistics
 * weight is `weight`: one engine run of one component per signature.
 * Bytes the engine does not carry (dropped channels, folded components)
 * are added to res_extra[channel] × weight. 0, or -1 on OOM. */
int sim_fold_run(sim_fold_t *f, sim_net_t *net, double weight, double *res_extra,
                 sim_fold_out_t *out);
/* The run's map: hop j of a (n hops, latency lat) -> hop j of b, for a
 * route a and its image b under the channel rotation; extends the map or
 * checks it. false when a and b differ in what the engine reads (length,
 * latency, weights, capacities, tiers) or the map would stop being a
 * function or injective (the map is then left partly extended: the
 * caller stops using it). */
bool sim_fold_sigma(sim_fold_t *f, const sim_net_t *net, const sim_hop_t *a, uint32_t n, double lat,
                    const sim_route_t *b);
/* Add the bytes that global phases carried on each orbit (orb) to every
 * channel of the orbit, into res_extra; once, at the end of the run. */
void sim_fold_spread(sim_fold_t *f, double *res_extra);
void sim_fold_free(sim_fold_t *f);

#endif
