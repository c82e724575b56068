/*
 * report_plan.c — the strategy section of `strata report`: the top layer.
 * A default workload (Llama 3 8B, 8,192-token sequences, 16 sequences per
 * GPU per step) planned on the report's cluster by `strata plan --search`:
 * the best plan, where its step goes, its traffic per tier of the stack,
 * its memory, and the layer that bounds it. Clusters of more than 4,096
 * GPUs get the plan TP = GPUs per server (at most 8) instead of a search,
 * to keep the report quick; clusters that record no accelerator memory
 * (builder specs) cannot be planned, and the section says so.
 */
#include "cli_report.h"

#include <string.h>

#define REPORT_PLAN_MODEL       "llama3-8b"
#define REPORT_PLAN_SEQ_PER_GPU 16
#define REPORT_PLAN_SEARCH_GPUS 4096

static strata_status_t plan_best(const strata_plan_ctx_t *ctx, strata_plan_result_t *r,
                                 strata_error_t *err)
{
    strata_plan_config_t c;
    strata_plan_config_default(&c);
    int gpus = strata_plan_ctx_gpus(ctx), n = 0;
    c.gbs = REPORT_PLAN_SEQ_PER_GPU * gpus;
    if (gpus <= REPORT_PLAN_SEARCH_GPUS)
        return strata_plan_search(ctx, &c, c.gbs, r, 1, &n, NULL, err);
    c.tp = 8;
    while (gpus % c.tp)
        c.tp /= 2;
    c.dp = gpus / c.tp;
    return strata_plan_eval(ctx, &c, r, err);
}

static void json_result(report_json_t *j, const strata_workload_t *w, const strata_plan_result_t *r)
{
    const strata_plan_config_t *c = &r->cfg;
    rj_str(j, "model", w->name);
    rj_int(j, "tp", c->tp), rj_int(j, "pp", c->pp), rj_int(j, "vpp", c->vpp);
    rj_int(j, "dp", c->dp), rj_int(j, "cp", c->cp), rj_int(j, "micro_batch", c->mbs);
    rj_int(j, "global_batch", c->gbs), rj_int(j, "zero", c->zero);
    rj_num(j, "step_s", r->step);
    rj_num(j, "mfu", r->mfu);
    rj_num(j, "tokens_per_s", r->tokens_per_s);
    rj_num(j, "memory_bytes", r->mem_total);
    rj_str(j, "bottleneck", r->bottleneck);
    rj_str(j, "advice", r->advice);
    rj_open(j, "traffic", '[');
    for (int i = 0; i < r->ntraffic; i++) {
        rj_open(j, NULL, '{');
        rj_str(j, "dim", r->traffic[i].dim);
        rj_str(j, "op", r->traffic[i].op);
        rj_str(j, "tier", r->traffic[i].tier);
        rj_num(j, "time_s", r->traffic[i].time);
        rj_num(j, "exposed_s", r->traffic[i].exposed);
        rj_close(j, '}');
    }
    rj_close(j, ']');
}

static void text_result(FILE *out, const char *spec, const strata_workload_t *w,
                        const strata_plan_result_t *r)
{
    const strata_plan_config_t *c = &r->cfg;
    fprintf(out, "  %s, batch %d x %d tokens: best plan TP %d x PP %d", w->name, c->gbs, w->seq,
            c->tp, c->pp);
    if (c->vpp > 1) fprintf(out, " (v %d)", c->vpp);
    fprintf(out, " x DP %d", c->dp);
    if (c->cp > 1) fprintf(out, " x CP %d", c->cp);
    fprintf(out, ", micro-batch %d, ZeRO-%d\n", c->mbs, c->zero);
    fprintf(out,
            "  step %.3f s: compute %.0f %%, exposed communication %.0f %%, bubble %.0f %%; "
            "MFU %.1f %%; memory %.1f of %.0f GB\n",
            r->step, 100 * r->compute / r->step,
            100 * (r->exposed[0] + r->exposed[1] + r->exposed[2] + r->exposed[3] + r->exposed[4]) /
                r->step,
            100 * r->bubble / r->step, 100 * r->mfu, r->mem_total / 1e9, r->mem_capacity / 1e9);
    for (int i = 0; i < r->ntraffic; i++)
        fprintf(out, "  %-4s %-14s on %-22s %9.4f s, %9.4f s exposed\n", r->traffic[i].dim,
                r->traffic[i].op, r->traffic[i].tier, r->traffic[i].time, r->traffic[i].exposed);
    fprintf(out, "  bound by %s; best single change: %s\n", r->bottleneck, r->advice);
    fprintf(out, "  ('strata plan %s %s --batch %d --search' for detail)\n", REPORT_PLAN_MODEL,
            spec, c->gbs);
}

static strata_status_t run(const report_ctx_t *ctx, strata_error_t *err)
{
    const char *mem = strata_topo_device(ctx->topo, strata_topo_endpoint(ctx->topo, 0)).memory;
    strata_workload_t w;
    strata_accel_t a;
    strata_plan_ctx_t *pc = NULL;
    strata_plan_result_t r;
    if (!mem || strata_accel_for_memory(NULL, mem, &a, NULL)) {
        if (ctx->json)
            rj_str(ctx->json, "skipped", "no accelerator memory recorded");
        else
            fprintf(ctx->out, "  the cluster records no accelerator (memory) to plan on; "
                              "'strata plan MODEL CLUSTER --accel ID' names one\n");
        return STRATA_OK;
    }
    strata_status_t st = strata_workload_load(REPORT_PLAN_MODEL, &w, err);
    if (!st) st = strata_plan_ctx_create(&w, &a, ctx->topo, ctx->links, &pc, err);
    if (!st) st = plan_best(pc, &r, err);
    if (!st && ctx->json) json_result(ctx->json, &w, &r);
    if (!st && !ctx->json) text_result(ctx->out, ctx->spec, &w, &r);
    if (st == STRATA_ERR_RANGE || st == STRATA_ERR_INVALID) {
        /* too small a cluster for the model: say so, not a failure */
        if (ctx->json)
            rj_str(ctx->json, "skipped", err->msg);
        else
            fprintf(ctx->out, "  %s: %s\n", REPORT_PLAN_MODEL, err->msg);
        st = STRATA_OK;
    }
    strata_plan_ctx_destroy(pc);
    return st;
}

const report_section_t report_plan_section = {
    .name = "strategy",
    .title = "Strategy: a training step planned on this cluster",
    .run = run,
};
