/*
 * cert.h — the contention-free certificate (cert.c): a proof, from the
 * flows' routes alone, that max-min sharing gives every flow of a set its
 * rate alone on its path. Used by driver.c's BARRIER run.
 */
#ifndef STRATA_SIM_CERT_H
#define STRATA_SIM_CERT_H

#include "sim.h"

/* Per-channel demand of the flows added since the last sim_cert_reset:
 * Σ over flows of w × (the flow's rate alone, min over its hops cap / w).
 * Owns its arrays; zero-initialise, free with sim_cert_free. */
typedef struct sim_cert {
    double *load;               /* per channel, 0 where untouched */
    UTIL_VEC(uint32_t) touched; /* channels with load > 0 */
    uint32_t nres;
    bool broken; /* some channel's demand exceeds its capacity */
} sim_cert_t;

/* Forget every flow added (O(channels touched)). */
void sim_cert_reset(sim_cert_t *c);
/* Add one flow along r (a flow with no hops or no bytes adds nothing).
 * Returns 0, or -1 on OOM. Sets c->broken, and stops counting, as soon as
 * a channel's demand exceeds its capacity by more than a relative 1e-12
 * (the rounding of w × cap / w; docs/simulator.md states the bound). */
int sim_cert_add(sim_cert_t *c, const sim_net_t *net, const sim_route_t *r, double bytes);
void sim_cert_free(sim_cert_t *c);

/* The certificate that concurrent collectives ("groups": jobs, each with
 * its own agents) never interact: per channel, the demand Σ w × s of every
 * flow added, and which group added it (one group, or several). Owns its
 * arrays; zero-initialise, free with sim_gcert_free. */
typedef struct sim_gcert {
    double *load;
    uint32_t *owner; /* 0: none; g + 1: only group g; UINT32_MAX: several */
    uint32_t nres;
} sim_gcert_t;

/* Add one flow of group `group` along r. Returns 0, or -1 on OOM. */
int sim_gcert_add(sim_gcert_t *c, const sim_net_t *net, const sim_route_t *r, double bytes,
                  uint32_t group);
/* True when every channel that flows of two or more groups cross carries
 * a demand of at most its capacity (× (1 + 1e-12)). */
bool sim_gcert_holds(const sim_gcert_t *c, const sim_net_t *net);
void sim_gcert_free(sim_gcert_t *c);

#endif
