/*
 * comm.c — where a parallel group lands on the cluster, and what its
 * collectives cost there, priced by sched's collective model only.
 *
 * A group of n ranks spaced `stride` apart (the rank order tp-cp-ep-dp-pp
 * makes every group such a progression) is placed on the cluster's real
 * endpoint ranks; strata_coll_ranks_per_server says how many of its ranks
 * share a server (g). The machine description of the whole cluster is then
 * narrowed to the group, as sched.h allows a machine to be filled by hand:
 * n ranks, g per server, n / g servers, and the NICs a group really has —
 * every group of the same dimension runs at once (all DP groups reduce
 * together), so a server's NICs are split between the per_server / g
 * groups that share it. Scale-up figures stay: a switched server gives each
 * rank its own links. On direct networks the whole-cluster pattern figures
 * do not describe a subgroup and are dropped (the pair figures remain).
 */
#include "plan.h"

#include <math.h>
#include <string.h>

strata_status_t plan_group(const strata_plan_ctx_t *ctx, int n, int stride, plan_group_t *g_p,
                           strata_error_t *err)
{
    plan_group_t g = {.m = ctx->m, .n = n, .stride = stride};
    if (n < 1 || (long)(n - 1) * stride >= ctx->gpus)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "plan: group of %d ranks stride %d "
                                "does not fit %d GPUs",
                                n, stride, ctx->gpus);
    int32_t *ranks = util_malloc((size_t)n * sizeof(int32_t));
    if (!ranks) return strata_error_set(err, STRATA_ERR_NOMEM, "plan: out of memory");
    for (int i = 0; i < n; i++)
        ranks[i] = (int32_t)((long)i * stride);
    uint32_t per = strata_coll_ranks_per_server(ctx->topo, ranks, (uint32_t)n);
    util_free(ranks);
    if (per == 0) per = ctx->m.servers > 1 ? 1 : (uint32_t)n; /* not in runs: assume apart */
    if (ctx->m.per_server != ctx->m0.per_server) {
        /* a larger scale-up domain (what-if): ranks 0, s, 2s, ... in domains of
         * D consecutive GPUs (D a multiple of s when s < D: powers of two) */
        uint32_t D = ctx->m.per_server;
        per = (uint32_t)stride >= D ? 1 : D / (uint32_t)stride;
        if (per > (uint32_t)n) per = (uint32_t)n;
    }
    strata_coll_machine_t *m = &g.m;
    m->nranks = (uint32_t)n;
    m->per_server = per;
    m->servers = (uint32_t)n / per;
    if (m->servers > 1) {
        double share = (double)ctx->m.nics * per / ctx->m.per_server;
        if (share < 1) {
            m->nics = 1, m->bw_nic = ctx->m.bw_nic * share;
        } else {
            m->nics = (uint32_t)floor(share);
        }
        if (per == 1) m->bw_intra = m->bw_nic, m->lat_intra = m->lat_inter;
        g.network = true;
        snprintf(g.tier, sizeof(g.tier), "scale-out %s", m->inter_kind);
        if (ctx->comm.flat) {
            /* Topology-unaware: a flat ring whose every neighbour sits in another
             * domain, so every step crosses the network at the farthest latency;
             * each rank gets its share of its server's NICs (all of them send at
             * once), less what ECMP collisions take. */
            double nic = ctx->m.nics * ctx->m.bw_nic / ctx->m.per_server;
            if (nic > ctx->m.bw_nic) nic = ctx->m.bw_nic;
            nic *= ctx->comm.flat_ecmp > 0 ? ctx->comm.flat_ecmp : 1;
            m->per_server = 1, m->servers = (uint32_t)n, m->nics = 1;
            m->bw_nic = m->bw_intra = nic;
            m->lat_intra = m->lat_rail = m->lat_ring_rail = m->lat_inter;
            m->lat_leg_intra = m->lat_leg_rail = 0;
            m->ring_pxn = false; /* no channels: one rank per "server" */
            m->switch_reduce = m->net_reduce = false;
            g.flat = true;
            snprintf(g.tier, sizeof(g.tier), "scale-out %.24s flat", m->inter_kind);
        }
    } else {
        snprintf(g.tier, sizeof(g.tier), "scale-up %s", m->intra_kind);
        if (ctx->m.servers <= 1 && ctx->m.per_server == 1) g.network = true;
    }
    if ((uint32_t)n != ctx->m.nranks) {
        memset(m->bw_dist, 0, sizeof(m->bw_dist));
        memset(m->lat_dist, 0, sizeof(m->lat_dist));
        m->bw_ring = m->lat_ring = m->bw_col = m->lat_col = 0;
    }
    *g_p = g;
    return STRATA_OK;
}

double plan_coll_time(const plan_group_t *g, strata_coll_t coll, double bytes,
                      strata_algo_t *algo_p)
{
    if (g->n <= 1 || bytes <= 0) return 0;
    strata_coll_cost_t c;
    if (g->flat && coll != STRATA_COLL_SENDRECV && coll != STRATA_COLL_ALLTOALL) {
        if (strata_coll_cost(&g->m, coll, STRATA_ALGO_RING, bytes, &c, NULL)) return INFINITY;
    } else if (strata_coll_select(&g->m, coll, bytes, &c, NULL)) {
        return INFINITY;
    }
    if (algo_p) *algo_p = c.algo;
    return c.time;
}
