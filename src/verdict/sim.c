/*
 * sim.c — the congested ring the verdict compares the model's best
 * algorithm with: a 1 GiB ring allreduce over every accelerator, built as
 * the schedule layer builds it (with the ring's channels over servers, as
 * sched's model prices it) and timed by the flow simulator with links
 * shared max-min fairly.
 */
#include "verdict.h"

strata_status_t strata_verdict_sim_ring(const strata_topo_t *topo, strata_sim_routing_t routing,
                                        uint32_t conns, int top_links, strata_sim_result_t *res,
                                        strata_error_t *err)
{
    strata_sched_params_t p = {0};
    p.coll = STRATA_COLL_ALLREDUCE;
    p.algo = STRATA_ALGO_RING;
    p.nranks = (uint32_t)strata_topo_endpoint_count(topo);
    uint32_t g = strata_coll_ranks_per_server(topo, NULL, p.nranks);
    p.group = g > 1 && g < p.nranks ? g : 0;
    /* a switchless mesh's rings over disjoint links, as the model runs them */
    uint16_t order[STRATA_MESH_RINGS_MAX * STRATA_MESH_MEMBERS_MAX];
    uint32_t k = strata_coll_mesh_rings(topo, NULL, p.nranks, p.group, order, NULL);
    p.rings = k > 1 ? k : 0;
    p.ring_order = p.rings ? order : NULL;
    /* 4-byte elements, rounded down to a multiple of ranks x channels as
     * `strata sim` does: equal blocks make every ring phase alike, so it is
     * timed once, not 2(P-1) times (under 0.01 % off) */
    uint64_t count = (uint64_t)(STRATA_VERDICT_BIG_BYTES / 4);
    uint64_t unit = (uint64_t)p.nranks * (p.group ? p.group : 1) * (p.rings ? p.rings : 1);
    p.count = count >= unit ? count - count % unit : count;
    p.elem_size = 4;
    p.chunks = 1;
    strata_sim_opts_t o = strata_sim_opts_default();
    o.routing = routing;
    o.conns = conns ? conns : 1;
    o.top_links = top_links;
    strata_sched_t *s = NULL;
    strata_sim_t *sim = NULL;
    strata_status_t rc = strata_sched_create(&p, &s, err);
    if (rc == STRATA_OK) rc = strata_sim_create(topo, &o, &sim, err);
    if (rc == STRATA_OK) rc = strata_sim_add(sim, s, NULL, err);
    if (rc == STRATA_OK) rc = strata_sim_run(sim, res, err);
    strata_sim_destroy(sim);
    strata_sched_destroy(s);
    return rc;
}

int strata_verdict_top_class(const strata_sim_result_t *r)
{
    int best = -1;
    for (int c = 0; c < r->nclasses; c++)
        if (best < 0 || r->classes[c].bound_share > r->classes[best].bound_share) best = c;
    if (best >= 0 && r->classes[best].bound_share < r->latency_share) return -1;
    return best;
}
