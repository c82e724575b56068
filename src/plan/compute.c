/*
 * compute.c — how long one micro-batch takes through one transformer layer
 * on one GPU, from the accelerator's figures, never from a training run.
 *
 * GEMMs: a roofline with tile and wave quantisation. The output (M x N, per
 * batch entry) is cut into tile_m x tile_n tiles, one per SM at a time;
 * waves = ceil(tiles / SMs), and every wave costs what a full wave of
 * tiles costs at the best measured GEMM rate (peak x gemm_eff, a named
 * microbenchmark in data/accelerators.json). So a shape just over a wave
 * boundary pays for an almost empty wave (NVIDIA, Matrix Multiplication
 * Background user's guide, "Wave quantization"). The time is the larger of
 * that and the bytes of A, B and C over HBM bandwidth.
 *
 * Memory-bound operators (norms, dropout, residual adds, activation
 * functions, softmax of unfused attention, the optimizer step): bytes moved
 * over HBM bandwidth; their bytes are listed where they are counted. The
 * backward of a memory-bound operator reads the incoming gradient and what
 * the forward saved and writes one gradient: twice its forward bytes.
 *
 * Attention FLOPs are counted as executed: unfused attention computes the
 * whole s x s score matrix (causal masking happens after the GEMM); flash
 * attention skips masked blocks (half of it) and its backward recomputes
 * the scores (5 GEMMs against 2 forward: 2.5x, Dao 2023, FlashAttention-2).
 */
#include "plan.h"

#include <math.h>

#define ACT_BYTES 2.0 /* activations in BF16/FP16 */

double plan_peak(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c)
{
    return c->fp8 && ctx->a.fp8 > 0 ? ctx->a.fp8 : ctx->a.bf16;
}

double plan_gemm_time(const strata_accel_t *a, double peak, double batch, double M, double N,
                      double K)
{
    if (batch <= 0 || M <= 0 || N <= 0 || K <= 0) return 0;
    double tiles = batch * ceil(M / a->tile_m) * ceil(N / a->tile_n);
    double waves = ceil(tiles / a->units);
    double t_math = waves * a->units * (2.0 * a->tile_m * a->tile_n * K) / (peak * a->gemm_eff);
    double t_mem = batch * (M * K + K * N + M * N) * ACT_BYTES / (a->hbm_bw * a->hbm_eff);
    return t_math > t_mem ? t_math : t_mem;
}

/* A weight GEMM Y[M x N] = X[M x K] W[K x N] in forward, and its two
 * backward GEMMs (dgrad M x K by N, wgrad K x N by M). */
static void weight_gemm(const strata_plan_ctx_t *ctx, double peak, double batch, double M, double N,
                        double K, plan_layer_time_t *t)
{
    const strata_accel_t *a = &ctx->a;
    t->fwd_gemm += plan_gemm_time(a, peak, batch, M, N, K);
    t->bwd_gemm +=
        plan_gemm_time(a, peak, batch, M, K, N) + plan_gemm_time(a, peak, batch, K, N, M);
    t->fwd_flops += 2 * batch * M * N * K;
    t->bwd_flops += 4 * batch * M * N * K;
}

static double mem_time(const strata_plan_ctx_t *ctx, double bytes)
{
    return bytes / (ctx->a.hbm_bw * ctx->a.hbm_eff);
}

/* The attention core of one micro-batch: scores, softmax, dropout, and
 * the product with V; heads split by TP, queries by CP. */
static void attention(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, double peak,
                      plan_layer_time_t *t)
{
    const strata_workload_t *w = &ctx->w;
    double s = w->seq, sq = s / c->cp, dh = (double)w->hidden / w->heads;
    double batch = (double)c->mbs * w->heads / c->tp;
    double g0 = t->fwd_gemm, m0 = t->fwd_mem;
    double flops = 2 * 2 * batch * sq * s * dh; /* QK^T and PV */
    if (c->flash) {
        /* causal: half the blocks; one fused kernel, no s x s in HBM */
        double tf = plan_gemm_time(&ctx->a, peak, batch, sq, s, dh) +
                    plan_gemm_time(&ctx->a, peak, batch, sq, dh, s);
        t->fwd_gemm += tf / 2;
        t->bwd_gemm += 2.5 * tf / 2;
        t->fwd_flops += flops / 2;
        t->bwd_flops += 2.5 * flops / 2;
    } else {
        t->fwd_gemm += plan_gemm_time(&ctx->a, peak, batch, sq, s, dh) +
                       plan_gemm_time(&ctx->a, peak, batch, sq, dh, s);
        t->bwd_gemm += 2 * (plan_gemm_time(&ctx->a, peak, batch, sq, dh, s) +
                            plan_gemm_time(&ctx->a, peak, batch, sq, s, dh));
        t->fwd_flops += flops;
        t->bwd_flops += 2 * flops;
        /* fused scale-mask-softmax reads scores and writes probabilities;
         * dropout reads them and writes them and a 1-byte mask */
        double el = batch * sq * s;
        double fwd = el * 2 * ACT_BYTES + (w->dropout ? el * (2 * ACT_BYTES + 1) : 0);
        t->fwd_mem += mem_time(ctx, fwd);
    }
    t->attn_gemm = t->fwd_gemm - g0, t->attn_mem = t->fwd_mem - m0;
    t->attn_core = t->attn_gemm + t->attn_mem;
}

/* Norms, dropouts, residual adds and the activation function of one
 * layer, forward. Regions outside the GEMMs are sharded 1/t with SP and
 * replicated on every TP rank without it (Korthikanti et al. 2022). */
static double elementwise_bytes(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                                double ffn_tokens_width)
{
    const strata_workload_t *w = &ctx->w;
    double T = (double)c->mbs * w->seq / c->cp, th = T * w->hidden / (c->sp ? c->tp : 1);
    double drop = w->dropout ? 1 : 0;
    double norms = 2 * (2 * ACT_BYTES) * th;                        /* read x, write y, twice */
    double residual = 2 * (3 * ACT_BYTES + drop) * th;              /* (dropout+) residual, twice */
    double act = (w->gated ? 3 : 2) * ACT_BYTES * ffn_tokens_width; /* GeLU / SwiGLU */
    return norms + residual + act;
}

static void mlp(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, double peak, bool moe,
                plan_layer_time_t *t)
{
    const strata_workload_t *w = &ctx->w;
    double T = (double)c->mbs * w->seq / c->cp, h = w->hidden, up = w->gated ? 2 : 1;
    if (!moe) {
        weight_gemm(ctx, peak, 1, T, up * w->ffn / c->tp, h, t);
        weight_gemm(ctx, peak, 1, T, h, (double)w->ffn / c->tp, t);
        t->fwd_mem += mem_time(ctx, elementwise_bytes(ctx, c, T * w->ffn / c->tp));
        return;
    }
    /* router, then each local expert on its share of the T*k routed
     * tokens (balanced routing), then the shared experts on all T */
    double local = (double)w->experts / c->ep, Te = T * w->topk * c->ep / w->experts;
    weight_gemm(ctx, peak, 1, T, w->experts, h, t);
    weight_gemm(ctx, peak, local, Te, up * w->moe_ffn / c->tp, h, t);
    weight_gemm(ctx, peak, local, Te, h, (double)w->moe_ffn / c->tp, t);
    double width = T * w->topk * (double)w->moe_ffn / c->tp;
    if (w->shared_experts) {
        double f = (double)w->shared_experts * w->moe_ffn / c->tp;
        weight_gemm(ctx, peak, 1, T, up * f, h, t);
        weight_gemm(ctx, peak, 1, T, h, f, t);
        width += T * f;
    }
    t->fwd_mem += mem_time(ctx, elementwise_bytes(ctx, c, width));
}

void plan_layer_time(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, bool moe,
                     plan_layer_time_t *t)
{
    const strata_workload_t *w = &ctx->w;
    double peak = plan_peak(ctx, c), T = (double)c->mbs * w->seq / c->cp, h = w->hidden;
    double kv = h * w->kv_heads / w->heads;
    *t = (plan_layer_time_t){0};
    weight_gemm(ctx, peak, 1, T, (h + 2 * kv) / c->tp, h, t); /* QKV */
    attention(ctx, c, peak, t);
    weight_gemm(ctx, peak, 1, T, h, h / c->tp, t); /* output projection */
    mlp(ctx, c, peak, moe, t);
    t->bwd_mem += 2 * t->fwd_mem;
    /* recomputation re-runs forward work inside the backward pass */
    if (c->recompute == STRATA_RECOMP_FULL) {
        t->bwd_gemm += t->fwd_gemm, t->bwd_mem += t->fwd_mem, t->bwd_flops += t->fwd_flops;
    } else if (c->recompute == STRATA_RECOMP_SELECTIVE && !c->flash) {
        /* the attention core is re-run (its inputs are kept) */
        t->bwd_gemm += t->attn_gemm, t->bwd_mem += t->attn_mem;
    }
}

/* Output layer and loss on the last stage (logits T x V/t), and the
 * embedding lookup on the first. Cross-entropy: BF16 logits read, FP32
 * written in forward; read and the BF16 gradient written in backward. */
void plan_logits_time(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                      plan_layer_time_t *t)
{
    const strata_workload_t *w = &ctx->w;
    double peak = plan_peak(ctx, c), T = (double)c->mbs * w->seq / c->cp;
    *t = (plan_layer_time_t){0};
    weight_gemm(ctx, peak, 1, T, (double)w->vocab / c->tp, w->hidden, t);
    double el = T * w->vocab / c->tp;
    t->fwd_mem += mem_time(ctx, el * (ACT_BYTES + 4));
    t->bwd_mem += mem_time(ctx, el * (4 + ACT_BYTES));
}

/* Megatron's count (training.py num_floating_point_operations): forward,
 * dgrad, wgrad (3 x 2 per multiply-add), causal attention halved, no
 * recompute, logits included. */
double plan_model_flops(const strata_workload_t *w, double sequences)
{
    double h = w->hidden, s = w->seq, kv = h * w->kv_heads / w->heads, up = w->gated ? 3 : 2;
    double dense_ffn = up * h * w->ffn;
    double moe_ffn = up * h * w->moe_ffn * (w->topk + w->shared_experts) + h * w->experts;
    int moe = plan_moe_layers(w);
    double per_token = w->layers * (h * (h + 2 * kv) + h * h + s * h) +
                       (w->layers - moe) * dense_ffn + moe * moe_ffn + h * (double)w->vocab;
    return 6 * per_token * s * sequences;
}
