/*
 * report_plan.c — the strategy section of `strata report`: the top layer.
 * A workload (--model; by default Llama 3 8B, 8,192-token sequences, 16
 * sequences per GPU per step) planned on the report's cluster by the
 * library's verdict (strata_verdict_create), as `strata plan --search` plans:
 * the best plan, where its step goes, its traffic per tier of the stack,
 * its memory, and the layer that bounds it. Clusters of more than 4,096
 * GPUs get the plan TP = GPUs per server (at most 8) instead of a search,
 * to keep the report quick; clusters that record no accelerator memory
 * (builder specs) cannot be planned, and the section says so.
 */
#include "cli_report.h"

#include <string.h>

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

static void text_result(FILE *out, const char *spec, const char *model, const strata_workload_t *w,
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
    fprintf(out, "  ('strata plan %s %s --batch %d --search' for detail)\n", model, spec, c->gbs);
}

static strata_status_t run(const report_ctx_t *ctx, strata_error_t *err)
{
    const char *model = ctx->model ? ctx->model : REPORT_PLAN_MODEL;
    strata_verdict_t *v = NULL;
    strata_status_t st = report_verdict(ctx, model, &v, err);
    if (st) return st;
    if (v->have_plan && ctx->json) json_result(ctx->json, &v->workload, &v->plan);
    if (v->have_plan && !ctx->json) text_result(ctx->out, ctx->spec, model, &v->workload, &v->plan);
    if (!v->have_plan && ctx->json) rj_str(ctx->json, "skipped", v->plan_skip);
    if (!v->have_plan && !ctx->json && v->plan_no_memory)
        fprintf(ctx->out, "  the cluster records no accelerator (memory) to plan on; "
                          "'strata plan MODEL CLUSTER --accel ID' names one\n");
    else if (!v->have_plan && !ctx->json)
        fprintf(ctx->out, "  %s: %s\n", model, v->plan_skip);
    strata_verdict_destroy(v);
    return STRATA_OK;
}

const report_section_t report_plan_section = {
    .name = "strategy",
    .title = "Strategy: a training step planned on this cluster",
    .run = run,
};
