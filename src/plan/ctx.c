/*
 * ctx.c — a planning context: the workload, the accelerator, and the
 * cluster's collective machine read once (strata_coll_machine_from_topo),
 * from which every group's machine is narrowed (comm.c).
 */
#include "plan.h"

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
    ctx->comm = (strata_plan_comm_opts_t){.nic_scale = 1, .dp_ratio = 1};
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
    if (!(o->nic_scale > 0) || !(o->dp_ratio > 0 && o->dp_ratio <= 4) || !(o->codec_bw >= 0))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "plan: what-if out of range (NIC x%g, "
                                "DP wire ratio %g, codec %g B/s)",
                                o->nic_scale, o->dp_ratio, o->codec_bw);
    ctx->m.bw_nic *= o->nic_scale / ctx->comm.nic_scale;
    ctx->comm = *o;
    return STRATA_OK;
}
