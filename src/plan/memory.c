/*
 * memory.c — bytes per GPU on the most loaded pipeline stage (stage 0: it
 * holds the input embedding and the most micro-batches in flight).
 *
 * Weights, gradients, optimizer states: Megatron's layout (bf16 weights,
 * fp32 main gradients, fp32 master weights + Adam m and v; 18 bytes per
 * parameter, docs/user-guide/features/dist_optimizer.md), sharded over DP
 * by ZeRO stage (Rajbhandari et al. 2020): 1 the optimizer states, 2 also
 * the gradients, 3 also the weights (one layer's gathered weights extra).
 * Activations per layer: Korthikanti et al. (2022) Table 2 in the form of
 * Megatron's estimator (theoretical_memory_usage.py), s b h (18 + 4 ffn/h)
 * per layer with SP and selective recompute (34 s b h when ffn = 4h),
 * (10 + (8 + 4 ffn/h)/t) s b h without SP, plus 5 a s^2 b / t when the
 * score matrix is kept (unfused attention without recompute), 2 s b h (/t
 * with SP) per layer under full recompute plus one layer's working set.
 * In flight: min(m, p) micro-batches of l/p layers under 1F1B, times
 * 1 + (p - 1)/(p v) interleaved (same file). Buffers: the TP all-gather
 * output and two pipeline send/receive buffers.
 */
#include "plan.h"

/* Parameters held by one GPU of stage `stage` (TP and EP shards). */
double plan_stage_params(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, int stage)
{
    const strata_workload_t *w = &ctx->w;
    int per = w->layers / c->pp, first = stage * per;
    double h = w->hidden, p = 0;
    for (int i = first; i < first + per; i++) {
        p += (plan_attn_params(w) + 2 * h) / c->tp;
        if (strata_workload_is_moe_layer(w, i))
            p += ((double)w->experts / c->ep + w->shared_experts) *
                     plan_ffn_params(w, w->moe_ffn) / c->tp +
                 h * w->experts;
        else
            p += plan_ffn_params(w, w->ffn) / c->tp;
    }
    double emb = (double)w->vocab * h / c->tp;
    if (stage == 0) p += emb;
    if (stage == c->pp - 1 && (!w->tied || c->pp > 1)) p += emb;
    return p;
}

static double act_per_layer(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c)
{
    const strata_workload_t *w = &ctx->w;
    double s = (double)w->seq / c->cp, b = c->mbs, h = w->hidden, t = c->tp;
    double sbh = s * b * h, base = 18 + 4.0 * w->ffn / h;
    if (c->recompute == STRATA_RECOMP_FULL) return 2 * sbh / (c->sp ? t : 1);
    double a = c->sp ? sbh * base / t : sbh * (10 + (base - 10) / t);
    if (c->recompute == STRATA_RECOMP_NONE && !c->flash)
        a += 5.0 * w->heads * s * w->seq * b / t;
    return a;
}

void plan_memory(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, int micro,
                 strata_plan_result_t *r)
{
    const strata_workload_t *w = &ctx->w;
    double P = plan_stage_params(ctx, c, 0), d = c->dp;
    double master = w->weight_bytes < 4 ? 4 : 0; /* fp32 copy of 16-bit weights */
    r->mem_weights = P * w->weight_bytes / (c->zero >= 3 ? d : 1);
    r->mem_grads = P * w->grad_bytes / (c->zero >= 2 ? d : 1);
    r->mem_optim = P * (master + 2.0 * w->optim_bytes) / (c->zero >= 1 ? d : 1);
    double layers = (double)w->layers / c->pp, inflight = micro < c->pp ? micro : c->pp;
    if (c->vpp > 1) inflight *= 1 + (c->pp - 1.0) / (c->pp * c->vpp);
    double per = act_per_layer(ctx, c), sbh = (double)w->seq / c->cp * c->mbs * w->hidden;
    r->mem_act = per * layers * inflight;
    if (c->recompute == STRATA_RECOMP_FULL) {
        strata_plan_config_t sel = *c;
        sel.recompute = STRATA_RECOMP_NONE;
        r->mem_act += act_per_layer(ctx, &sel); /* the layer being recomputed */
    }
    if (c->pp == 1) r->mem_act += 4 * sbh * (1 + (double)w->vocab / w->hidden) / c->tp;
    r->mem_buffers = (c->tp > 1 ? 2 * sbh : 0) + (c->pp > 1 ? 2 * 2 * sbh / c->tp : 0);
    if (c->zero >= 3) r->mem_buffers += 2 * P / (w->layers / c->pp) * w->weight_bytes;
    if (w->experts) r->mem_buffers += 2 * 2 * sbh * w->topk;
    r->mem_total = r->mem_weights + r->mem_grads + r->mem_optim + r->mem_act + r->mem_buffers;
    r->mem_capacity = ctx->a.hbm_bytes;
    r->fits = r->mem_total <= r->mem_capacity;
}
