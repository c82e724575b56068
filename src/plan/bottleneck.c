/*
 * bottleneck.c — which layer of the stack bounds a step, and the one
 * change that would move it most.
 *
 * The step's parts are charged to layers: GEMM time to the tensor cores,
 * memory-bound operators and the optimizer to HBM, each exposed
 * collective to the tier its group crosses (scale-up, scale-out, or
 * host/PCIe when the scale-up link is PCIe), idle pipeline time to the
 * bubble. The largest is the bottleneck. The advice is measured, not a
 * rule: a handful of single changes (overlap switches, flash attention,
 * SP, recomputation, interleaving, moving a factor of 2 between TP, PP and
 * DP, a larger micro-batch) are evaluated and the one with the shortest
 * step that still fits is named with its gain.
 */
#include "plan.h"

#include <math.h>
#include <string.h>

static const char *tier_layer(const char *tier, char *buf, size_t len)
{
    if (strstr(tier, "pcie")) return "host/PCIe";
    snprintf(buf, len, "%s", tier);
    return buf;
}

static void bottleneck(strata_plan_result_t *r)
{
    struct {
        char name[64];
        double t;
    } part[8];
    int n = 0;
    snprintf(part[n].name, 64, "compute (tensor cores)"), part[n++].t = r->compute_gemm;
    snprintf(part[n].name, 64, "HBM (memory-bound operators)");
    part[n++].t = r->compute_mem + r->optimizer;
    snprintf(part[n].name, 64, "pipeline bubble"), part[n++].t = r->bubble;
    for (int i = 0; i < r->ntraffic; i++) {
        char b[64];
        const char *layer = tier_layer(r->traffic[i].tier, b, sizeof(b));
        int j = 3;
        while (j < n && strcmp(part[j].name, layer))
            j++;
        if (j == n && n < 8) snprintf(part[n].name, 64, "%s", layer), part[n++].t = 0;
        if (j < n) part[j].t += r->traffic[i].exposed;
    }
    int best = 0;
    for (int i = 1; i < n; i++)
        if (part[i].t > part[best].t) best = i;
    snprintf(r->bottleneck, sizeof(r->bottleneck), "%s (%.0f%% of the step)", part[best].name,
             100 * part[best].t / r->step);
}

/* One candidate change: apply it to c, say what it is. false: not applicable. */
static bool change(int k, const strata_plan_config_t *base, strata_plan_config_t *c, char *what,
                   size_t len)
{
    *c = *base;
    switch (k) {
    case 0:
        c->overlap_dp = !c->overlap_dp;
        snprintf(what, len, "DP overlap %s", c->overlap_dp ? "on" : "off");
        return c->overlap_dp;
    case 1:
        c->overlap_tp = true;
        snprintf(what, len, "TP overlap on");
        return !base->overlap_tp && c->tp > 1;
    case 2:
        c->flash = true;
        snprintf(what, len, "flash attention");
        return !base->flash;
    case 3:
        c->sp = true;
        snprintf(what, len, "sequence parallelism");
        return !base->sp && c->tp > 1;
    case 4:
        c->recompute = STRATA_RECOMP_SELECTIVE;
        snprintf(what, len, "selective instead of full recompute");
        return base->recompute == STRATA_RECOMP_FULL;
    case 5:
        c->vpp *= 2;
        snprintf(what, len, "interleave %d chunks per stage", c->vpp);
        return c->pp > 1;
    case 6:
        c->tp /= 2, c->dp *= 2;
        snprintf(what, len, "TP %d, DP %d", c->tp, c->dp);
        return base->tp % 2 == 0;
    case 7:
        c->tp *= 2, c->dp /= 2;
        snprintf(what, len, "TP %d, DP %d", c->tp, c->dp);
        return base->dp % 2 == 0;
    case 8:
        c->pp *= 2, c->dp /= 2, c->vpp = 1;
        snprintf(what, len, "PP %d, DP %d", c->pp, c->dp);
        return base->dp % 2 == 0;
    case 9:
        c->pp /= 2, c->dp *= 2, c->vpp = 1;
        snprintf(what, len, "PP %d, DP %d", c->pp, c->dp);
        return base->pp % 2 == 0;
    case 10:
        c->mbs *= 2;
        snprintf(what, len, "micro-batch %d", c->mbs);
        return true;
    case 11:
        c->zero = 1;
        snprintf(what, len, "distributed optimizer (ZeRO-1)");
        return base->zero == 0 && c->dp > 1;
    case 12:
        strata_plan_order_parse("tp-cp-pp-dp", c->order);
        snprintf(what, len, "rank order tp-cp-pp-dp (pipeline stages inside a server)");
        return c->pp > 1 && !base->order[0] && !base->order[1];
    default:
        return false;
    }
}

static void advise(const strata_plan_ctx_t *ctx, strata_plan_result_t *r)
{
    double best = r->step;
    snprintf(r->advice, sizeof(r->advice), "no single change tried makes the step shorter");
    for (int k = 0; k < 13; k++) {
        strata_plan_config_t c;
        strata_plan_result_t x;
        char what[80];
        if (!change(k, &r->cfg, &c, what, sizeof(what))) continue;
        if (plan_eval_core(ctx, &c, &x, NULL) || !x.fits || x.step >= best) continue;
        best = x.step;
        snprintf(r->advice, sizeof(r->advice), "%s: step %.3g s -> %.3g s (%.2fx)", what, r->step,
                 x.step, r->step / x.step);
    }
}

void plan_finish_result(const strata_plan_ctx_t *ctx, strata_plan_result_t *r)
{
    bottleneck(r);
    advise(ctx, r);
}

strata_status_t strata_plan_eval(const strata_plan_ctx_t *ctx, const strata_plan_config_t *cfg,
                                 strata_plan_result_t *r_p, strata_error_t *err)
{
    strata_plan_result_t r;
    strata_status_t st = plan_eval_core(ctx, cfg, &r, err);
    if (st) return st;
    plan_finish_result(ctx, &r);
    *r_p = r;
    return STRATA_OK;
}
