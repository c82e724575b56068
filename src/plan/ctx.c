/*
 * ctx.c — a planning context: the workload, the accelerator, and the
 * cluster's collective machine read once (strata_coll_machine_from_topo),
 * from which every group's machine is narrowed (comm.c).
 */
#include "plan.h"

#include <string.h>

strata_status_t strata_plan_ctx_create(const strata_workload_t *w, const strata_accel_t *a,
                                       const strata_topo_t *topo, const strata_link_catalog_t *cat,
                                       strata_plan_ctx_t **ctx_p, strata_error_t *err)
{
    strata_plan_ctx_t *ctx = util_calloc(1, sizeof(*ctx));
    if (!ctx) return strata_error_set(err, STRATA_ERR_NOMEM, "plan: out of memory");
    ctx->w = *w, ctx->a = *a, ctx->topo = topo;
    ctx->gpus = strata_topo_endpoint_count(topo);
    strata_status_t st = strata_coll_machine_from_topo(topo, cat, &ctx->m, err);
    if (st) {
        util_free(ctx);
        return st;
    }
    ctx->m0 = ctx->m;
    ctx->comm = (strata_plan_comm_opts_t){.nic_scale = 1, .dp_ratio = 1};
    for (int k = STRATA_PLAN_OFFLOAD_HOST; k <= STRATA_PLAN_OFFLOAD_CXL; k++) {
        struct plan_tier *pt = &ctx->tier[k];
        strata_error_t e = {0};
        pt->st = plan_offload_tier(ctx, k, &pt->xfer_bw, &pt->mem_bw, &e);
        if (pt->st) snprintf(pt->why, sizeof(pt->why), "%s", e.msg);
        pt->share = pt->st ? 0 : plan_offload_share(topo, k);
    }
    *ctx_p = ctx;
    return STRATA_OK;
}

void strata_plan_ctx_destroy(strata_plan_ctx_t *ctx)
{
    util_free(ctx);
}

int strata_plan_ctx_gpus(const strata_plan_ctx_t *ctx)
{
    return ctx->gpus;
}

strata_status_t strata_plan_ctx_set_comm(strata_plan_ctx_t *ctx, const strata_plan_comm_opts_t *o,
                                         strata_error_t *err)
{
    if (!(o->nic_scale > 0) || !(o->dp_ratio > 0 && o->dp_ratio <= 4) || !(o->codec_bw >= 0) ||
        !(o->act_ratio >= 0 && o->act_ratio <= 4) || !(o->scaleup_scale >= 0) ||
        !(o->flat_ecmp >= 0 && o->flat_ecmp <= 1) || o->scaleup_size < 0)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "plan: what-if out of range (NIC x%g, "
                                "DP wire ratio %g, codec %g B/s, activation wire ratio %g, "
                                "scale-up x%g, ECMP efficiency %g, scale-up domain %d)",
                                o->nic_scale, o->dp_ratio, o->codec_bw, o->act_ratio,
                                o->scaleup_scale, o->flat_ecmp, o->scaleup_size);
    strata_coll_machine_t m = ctx->m0;
    int g = (int)m.per_server, d = o->scaleup_size ? o->scaleup_size : g;
    if (d % g || (d < ctx->gpus && ctx->gpus % d))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "plan: a scale-up domain of %d GPUs does not fit %d GPUs of "
                                "servers of %d (it must be a multiple of %d dividing the count)",
                                d, ctx->gpus, g, g);
    if (d > ctx->gpus) d = ctx->gpus;
    if (d != g) {
        /* One scale-up domain of d GPUs, the server's scale-up link per rank,
         * the server's NICs per GPU; the whole-cluster pattern figures
         * describe the real servers, not these domains. */
        m.nics = m.nics * (uint32_t)(d / g);
        m.per_server = (uint32_t)d;
        m.servers = (uint32_t)(ctx->gpus / d);
        memset(m.bw_dist, 0, sizeof(m.bw_dist));
        memset(m.lat_dist, 0, sizeof(m.lat_dist));
        m.bw_ring = m.lat_ring = m.bw_col = m.lat_col = 0;
    }
    m.bw_nic *= o->nic_scale;
    m.bw_intra *= o->scaleup_scale > 0 ? o->scaleup_scale : 1;
    ctx->m = m;
    ctx->comm = *o;
    return STRATA_OK;
}

double plan_act_bytes(const strata_plan_ctx_t *ctx)
{
    return 2.0 * (ctx->comm.act_ratio > 0 ? ctx->comm.act_ratio : 1);
}
