/*
 * search.c — every valid plan for a GPU count and a global batch, ranked
 * by step time.
 *
 * Enumerated: TP (dividing the heads and the GPUs), PP (dividing the
 * layers), interleaving v (dividing the layers per stage, micro-batches a
 * multiple of PP), CP (long sequences: powers of two up to 16 with 2 CP
 * dividing the sequence), DP = GPUs / (TP PP CP) dividing the batch, EP
 * (dividing DP and the experts), the micro-batch (dividing the per-replica
 * batch, up to 64), ZeRO 0-3, recomputation none/selective/full.
 * Exact pruning, no heuristics: recomputation only adds work and
 * communication, so for each other choice the least recomputation that
 * fits memory is the fastest and the others are skipped; memory is
 * checked before the step is timed, and the ZeRO stages of one plan share
 * its pipeline schedule (ZeRO changes no pass time). The bottleneck and advice are computed
 * for the returned plans only.
 */
#include "plan.h"

#include <math.h>
#include <string.h>

typedef struct best {
    strata_plan_result_t *out;
    int max, n;
    long evaluated, nofit, valid;
    double nearest; /* smallest memory miss, bytes */
    strata_plan_config_t nearest_cfg;
    plan_pipe_cache_t cache; /* the ZeRO stages of one plan share its schedule */
    int tiers[3], ntiers;    /* the offload tiers tried (offload_tiers) */
} best_t;

static void keep(best_t *b, const strata_plan_result_t *r)
{
    int i;
    if (b->n < b->max)
        i = b->n++;
    else if (r->step < b->out[b->max - 1].step)
        i = b->max - 1;
    else
        return;
    b->out[i] = *r;
    for (; i > 0 && b->out[i].step < b->out[i - 1].step; i--) {
        strata_plan_result_t t = b->out[i];
        b->out[i] = b->out[i - 1], b->out[i - 1] = t;
    }
}

/* The least recomputation that fits, timed; false when none fits. */
static void try_config(const strata_plan_ctx_t *ctx, strata_plan_config_t *c, best_t *b)
{
    static const strata_recompute_t order[] = {STRATA_RECOMP_NONE, STRATA_RECOMP_SELECTIVE,
                                               STRATA_RECOMP_FULL};
    for (int k = 0; k < 3; k++) {
        strata_plan_result_t r;
        c->recompute = order[k];
        memset(&r, 0, sizeof(r));
        plan_memory(ctx, c, c->gbs / (c->mbs * c->dp), &r);
        b->valid++;
        if (!r.fits) {
            double miss = plan_memory_miss(&r);
            if (b->nearest < 0 || miss < b->nearest) b->nearest = miss, b->nearest_cfg = *c;
            b->nofit++;
            continue;
        }
        b->evaluated++;
        if (plan_eval_cached(ctx, c, &b->cache, &r, NULL) == STRATA_OK) keep(b, &r);
        return;
    }
}

static bool valid_sizes(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c)
{
    const strata_workload_t *w = &ctx->w;
    if (w->heads % c->tp || (w->kv_heads % c->tp && c->tp % w->kv_heads)) return false;
    if (!plan_layers_split(w, c) || (c->vpp > 1 && c->pp == 1)) return false;
    if (c->gbs % (c->mbs * c->dp)) return false;
    int m = c->gbs / (c->mbs * c->dp);
    return !(c->vpp > 1 && m % c->pp);
}

/* The offload tiers a search tries: the base's when it names one (>= 0),
 * else none plus every tier the cluster has (plan_offload_tier finds its
 * memory devices). */
static int offload_tiers(const strata_plan_ctx_t *ctx, int base, int *tiers)
{
    if (base >= 0) return tiers[0] = base, 1;
    int n = 0;
    tiers[n++] = STRATA_PLAN_OFFLOAD_NONE;
    for (int k = STRATA_PLAN_OFFLOAD_HOST; k <= STRATA_PLAN_OFFLOAD_CXL; k++)
        if (ctx->tier[k].st == STRATA_OK) tiers[n++] = k;
    return n;
}

static void inner(const strata_plan_ctx_t *ctx, strata_plan_config_t *c, best_t *b)
{
    int local = c->gbs / c->dp;
    for (c->mbs = 1; c->mbs <= local && c->mbs <= 64; c->mbs++) {
        if (local % c->mbs) continue;
        for (c->vpp = 1; c->vpp <= ctx->w.layers / c->pp; c->vpp++) {
            if (!valid_sizes(ctx, c)) continue;
            for (c->zero = 0; c->zero <= 3; c->zero++)
                for (int t = 0; t < b->ntiers; t++)
                    if (c->dp > 1 || c->zero == 0) c->offload = b->tiers[t], try_config(ctx, c, b);
        }
    }
}

strata_status_t strata_plan_search(const strata_plan_ctx_t *ctx, const strata_plan_config_t *base,
                                   int gbs, strata_plan_result_t *out, int max, int *n_p,
                                   long *evaluated_p, strata_error_t *err)
{
    const strata_workload_t *w = &ctx->w;
    int G = ctx->gpus;
    best_t b = {.out = out, .max = max, .nearest = -1};
    b.ntiers = offload_tiers(ctx, base->offload, b.tiers);
    strata_plan_config_t c = *base;
    c.gbs = gbs;
    for (c.tp = 1; c.tp <= G && c.tp <= w->heads; c.tp++) {
        if (G % c.tp || w->heads % c.tp) continue;
        for (c.cp = 1; c.cp <= 16 && G % (c.tp * c.cp) == 0; c.cp *= 2) {
            if (c.cp > 1 && (w->seq < 8192 || w->seq % (2 * c.cp))) break;
            for (c.pp = 1; c.pp <= w->layers; c.pp++) {
                c.vpp = 1;
                if (!plan_layers_split(w, &c) || G % (c.tp * c.cp * c.pp)) continue;
                c.dp = G / (c.tp * c.cp * c.pp);
                if (gbs % c.dp) continue;
                for (c.ep = 1; c.ep <= c.dp; c.ep++) {
                    if (c.ep > 1 && (!w->experts || w->experts % c.ep)) break;
                    if (c.dp % c.ep) continue;
                    inner(ctx, &c, &b);
                }
            }
        }
    }
    if (evaluated_p) *evaluated_p = b.valid;
    *n_p = b.n;
    if (b.n == 0) {
        if (b.nearest < 0)
            return strata_error_set(err, STRATA_ERR_RANGE,
                                    "no plan: no factorisation of %d GPUs fits the model's heads "
                                    "(%d), layers (%d) and batch %d",
                                    G, w->heads, w->layers, gbs);
        const strata_plan_config_t *n = &b.nearest_cfg;
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "no plan fits memory: the nearest (TP %d, PP %d, DP %d, "
                                "micro-batch %d, ZeRO-%d, full recompute) misses by %.2f GB",
                                n->tp, n->pp, n->dp, n->mbs, n->zero, b.nearest / 1e9);
    }
    for (int i = 0; i < b.n; i++)
        plan_finish_result(ctx, &out[i]);
    return STRATA_OK;
}
