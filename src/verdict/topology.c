/*
 * topology.c — the topology section of the verdict: the cluster's metrics
 * (device counts, hop counts, per-GPU injection and oversubscription per
 * tier, bisection bandwidth with its method; strata_topo_metrics) and two
 * routed paths with their bottleneck and latency: neighbours (ranks 0 and
 * 1), and across servers (rank 0 to the next index of server 1, the path
 * `strata topo show` prints) or, without servers, to the farthest rank.
 *
 * Workload: strata_topo_metrics (exact or sampled hops, bisection by the
 * builder's closed form when known), a router and a few routes.
 */
#include "verdict.h"

/* The other end of the second path, or -1 when there is none. */
static int32_t far_rank(const strata_topo_t *t, strata_topo_router_t *r)
{
    int32_t n = strata_topo_endpoint_count(t), g = strata_topo_group_count(t);
    if (g > 1) return n / g + 1 < n ? n / g + 1 : n - 1;
    if (n < 3) return -1;
    /* no servers: the farthest rank from rank 0 (first of the ties), among
     * the first 4,096 */
    int32_t best = -1, hops = -1, src = strata_topo_endpoint(t, 0);
    for (int32_t i = 1; i < n && i < 4096; i++) {
        int32_t h = strata_topo_hops(r, src, strata_topo_endpoint(t, i));
        if (h > hops) hops = h, best = i;
    }
    return best > 1 ? best : -1;
}

static void route(const strata_topo_t *t, strata_topo_router_t *r, int32_t a, int32_t b,
                  strata_verdict_path_t *p)
{
    p->from = a, p->to = b;
    int32_t src = strata_topo_endpoint(t, a), dst = strata_topo_endpoint(t, b);
    if (src < 0 || dst < 0 ||
        strata_topo_path(r, src, dst, 0, p->chans, STRATA_VERDICT_PATH_HOPS, &p->nhops) !=
            STRATA_OK)
        return;
    strata_topo_path_figures(t, p->chans, p->nhops, &p->bw, &p->latency);
    p->paths = strata_topo_path_count(r, src, dst);
    p->ok = true;
}

strata_status_t verdict_topology(const strata_topo_t *t, strata_verdict_topo_t *v,
                                 strata_error_t *err)
{
    strata_topo_router_t *r = NULL;
    strata_status_t st = strata_topo_metrics(t, &v->metrics, err);
    if (!st) st = strata_topo_router_create(t, &r, err);
    if (!st) {
        int32_t b = far_rank(t, r);
        route(t, r, 0, 1, &v->near);
        if (b > 0) route(t, r, 0, b, &v->far);
        v->far_across = strata_topo_group_count(t) > 1;
    }
    strata_topo_router_destroy(r);
    return st;
}
