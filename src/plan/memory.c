/*
 * memory.c — bytes per GPU on the most loaded pipeline stage (stage 0: it
 * holds the input embedding and the most micro-batches in flight; with an
 * uneven split stage 1 too, which holds one layer more), and how layers
 * are split over the stages.
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

/* Layers may be split evenly over the p v virtual stages, or, with one
 * chunk per stage, as Llama 3 405B was (126 layers on 16 stages: one layer
 * fewer on the first and the last stage, which hold the embedding and the
 * output layer; Dubey et al. 2024, section 3.3.2). */
bool plan_layers_split(const strata_workload_t *w, const strata_plan_config_t *c)
{
    int nv = c->pp * c->vpp;
    return w->layers % nv == 0 || (c->vpp == 1 && c->pp > 2 && (w->layers + 2) % c->pp == 0);
}

void plan_stage_layers(const strata_workload_t *w, const strata_plan_config_t *c, int vs,
                       int *first_p, int *n_p)
{
    int nv = c->pp * c->vpp;
    if (w->layers % nv == 0) {
        *n_p = w->layers / nv, *first_p = vs * *n_p;
        return;
    }
    int per = (w->layers + 2) / c->pp;
    *first_p = vs == 0 ? 0 : per - 1 + (vs - 1) * per;
    *n_p = vs == 0 || vs == nv - 1 ? per - 1 : per;
}

/* Parameters held by one GPU of stage `stage` (TP and EP shards). */
double plan_stage_params(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, int stage)
{
    const strata_workload_t *w = &ctx->w;
    double h = w->hidden, p = 0;
    for (int k = 0; k < c->vpp; k++) {
        int first, n;
        plan_stage_layers(w, c, k * c->pp + stage, &first, &n);
        p += plan_layer_params(ctx, c, first, n);
    }
    double emb = (double)w->vocab * h / c->tp;
    if (stage == 0) p += emb;
    if (stage == c->pp - 1 && (!w->tied || c->pp > 1)) p += emb;
    return p;
}

/* Parameters of layers first .. first + n - 1 on one GPU. */
double plan_layer_params(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, int first,
                         int n)
{
    const strata_workload_t *w = &ctx->w;
    double h = w->hidden, p = 0;
    for (int i = first; i < first + n; i++) {
        p += (plan_attn_params(w) + 2 * h) / c->tp;
        if (strata_workload_is_moe_layer(w, i))
            p += ((double)w->experts / c->ep + w->shared_experts) * plan_ffn_params(w, w->moe_ffn) /
                     c->tp +
                 h * w->experts;
        else
            p += plan_ffn_params(w, w->ffn) / c->tp;
    }
    return p;
}

static double act_per_layer(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c)
{
    const strata_workload_t *w = &ctx->w;
    double s = (double)w->seq / c->cp, b = c->mbs, h = w->hidden, t = c->tp;
    double sbh = s * b * h, base = 18 + 4.0 * w->ffn / h;
    if (c->recompute == STRATA_RECOMP_FULL) return 2 * sbh / (c->sp ? t : 1);
    double a = c->sp ? sbh * base / t : sbh * (10 + (base - 10) / t);
    if (c->recompute == STRATA_RECOMP_NONE && !c->flash) a += 5.0 * w->heads * s * w->seq * b / t;
    return a;
}

static void stage_memory(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, int micro,
                         int stage, strata_plan_result_t *r)
{
    const strata_workload_t *w = &ctx->w;
    double P = plan_stage_params(ctx, c, stage), d = c->dp;
    int first, nl;
    plan_stage_layers(w, c, stage, &first, &nl);
    double master = w->weight_bytes < 4 ? 4 : 0; /* fp32 copy of 16-bit weights */
    r->mem_weights = P * w->weight_bytes / (c->zero >= 3 ? d : 1);
    r->mem_grads = P * w->grad_bytes / (c->zero >= 2 ? d : 1);
    r->mem_optim = P * (master + 2.0 * w->optim_bytes) / (c->zero >= 1 ? d : 1);
    r->mem_offload = 0;
    if (c->offload) /* master and moments live in the offload tier */
        r->mem_offload = r->mem_optim, r->mem_optim = 0;
    double layers = (double)nl * c->vpp, depth = c->pp - stage;
    double inflight = micro < depth ? micro : depth;
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
    if (c->zero >= 3) r->mem_buffers += 2 * P / layers * w->weight_bytes;
    if (w->experts) r->mem_buffers += 2 * 2 * sbh * w->topk;
    r->mem_total = r->mem_weights + r->mem_grads + r->mem_optim + r->mem_act + r->mem_buffers;
}

void plan_memory(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, int micro,
                 strata_plan_result_t *r)
{
    stage_memory(ctx, c, micro, 0, r);
    if (ctx->w.layers % (c->pp * c->vpp) && c->pp > 2) {
        strata_plan_result_t s1 = *r;
        stage_memory(ctx, c, micro, 1, &s1);
        if (s1.mem_total > r->mem_total) *r = s1;
    }
    r->mem_capacity = ctx->a.hbm_bytes;
    r->fits = r->mem_total <= r->mem_capacity;
    r->mem_offload_capacity = 0;
    if (c->offload > 0 && c->offload <= STRATA_PLAN_OFFLOAD_CXL) {
        double share = ctx->tier[c->offload].share;
        r->mem_offload_capacity = share;
        if (share > 0 && r->mem_offload > share) r->fits = false;
    }
}

double plan_memory_miss(const strata_plan_result_t *r)
{
    double miss = r->mem_total - r->mem_capacity;
    if (r->mem_offload_capacity > 0 && r->mem_offload - r->mem_offload_capacity > miss)
        miss = r->mem_offload - r->mem_offload_capacity;
    return miss;
}
