/*
 * sim.c — the congested ring the verdict compares the model's best
 * algorithm with: a 1 GiB ring allreduce over every accelerator, built as
 * the schedule layer builds it (with the ring's channels over servers, as
 * sched's model prices it) and timed by the flow simulator with links
 * shared max-min fairly.
 */
#include "verdict.h"

#include <stdio.h>

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

/* ==== The sim section: the ring under three routings ==== */

void verdict_routings_free(strata_verdict_routings_t *b)
{
    strata_sim_result_free(&b->spread);
    strata_sim_result_free(&b->ecmp);
    strata_sim_result_free(&b->qps);
}

/* The ring on topo under spread (copied from spread when given), ECMP and
 * ECMP with STRATA_VERDICT_QPS queue pairs; the busiest link of each kept. */
strata_status_t verdict_routings(const strata_topo_t *topo, const char *spec,
                                 const strata_sim_result_t *spread, strata_verdict_routings_t *b,
                                 strata_error_t *err)
{
    snprintf(b->spec, sizeof(b->spec), "%s", spec ? spec : strata_topo_name(topo));
    b->gpus = strata_topo_endpoint_count(topo);
    strata_status_t rc =
        spread ? strata_sim_result_copy(&b->spread, spread, err)
               : strata_verdict_sim_ring(topo, STRATA_SIM_SPREAD, 1, 1, &b->spread, err);
    if (rc == STRATA_OK) rc = strata_verdict_sim_ring(topo, STRATA_SIM_ECMP, 1, 1, &b->ecmp, err);
    if (rc == STRATA_OK)
        rc = strata_verdict_sim_ring(topo, STRATA_SIM_ECMP, STRATA_VERDICT_QPS, 1, &b->qps, err);
    return rc;
}

static bool has_network(const strata_topo_t *t)
{
    for (int32_t d = 0; d < strata_topo_device_count(t); d++)
        if (strata_topo_device(t, d).kind == STRATA_DEV_NET_SWITCH) return true;
    return false;
}

/* The same servers at about STRATA_VERDICT_SCALE_GPUS GPUs: spec +
 * ",servers=N", when topo has servers, a network and fewer GPUs. A spec
 * that does not take the key (a builder without servers=) is noted in
 * scale_skip, not an error. */
strata_status_t verdict_scale(strata_verdict_t *v, const strata_link_catalog_t *cat,
                              const char *spec, strata_error_t *err)
{
    const strata_topo_t *t = v->topo;
    int32_t n = strata_topo_endpoint_count(t), g = strata_topo_group_count(t);
    if (!spec || g < 1 || !has_network(t) || n >= STRATA_VERDICT_SCALE_GPUS) return STRATA_OK;
    int32_t servers = STRATA_VERDICT_SCALE_GPUS / (n / g);
    if (servers <= g) return STRATA_OK;
    char big_spec[sizeof(v->scale.spec)];
    snprintf(big_spec, sizeof(big_spec), "%s,servers=%d", spec, (int)servers);
    strata_topo_t *big = NULL;
    if (strata_topo_load_spec(big_spec, cat, &big, NULL) != STRATA_OK) {
        snprintf(v->scale_skip, sizeof(v->scale_skip), "%s", big_spec);
        return STRATA_OK;
    }
    strata_status_t rc = verdict_routings(big, big_spec, NULL, &v->scale, err);
    v->have_scale = rc == STRATA_OK;
    strata_topo_destroy(big);
    return rc;
}
