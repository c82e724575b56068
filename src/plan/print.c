/*
 * print.c — a plan result as text (step breakdown, the traffic mapped to
 * the layers of the stack, memory, the bottleneck) or JSON.
 */
#include "plan.h"

#include <string.h>

static const char *recomp_name(strata_recompute_t r)
{
    return r == STRATA_RECOMP_FULL ? "full" : r == STRATA_RECOMP_SELECTIVE ? "selective" : "none";
}

static void print_config(const strata_plan_result_t *r, FILE *out)
{
    const strata_plan_config_t *c = &r->cfg;
    fprintf(out, "plan: TP %d%s x PP %d", c->tp, c->sp && c->tp > 1 ? " (SP)" : "", c->pp);
    if (c->vpp > 1) fprintf(out, " (%d chunks, interleaved)", c->vpp);
    fprintf(out, " x DP %d", c->dp);
    if (c->ep > 1) fprintf(out, " (EP %d)", c->ep);
    if (c->cp > 1) fprintf(out, " x CP %d", c->cp);
    fprintf(out,
            " = %d GPUs; batch %d = %d micro-batches of %d x DP; ZeRO-%d; recompute %s;"
            " %s attention%s%s\n",
            r->gpus, c->gbs, r->micro, c->mbs, c->zero, recomp_name(c->recompute),
            c->flash ? "flash" : "unfused", c->fp8 ? "; FP8 GEMMs" : "",
            c->offload == STRATA_PLAN_OFFLOAD_HOST  ? "; optimizer states in host DRAM"
            : c->offload == STRATA_PLAN_OFFLOAD_CXL ? "; optimizer states in CXL memory"
                                                    : "");
    char ord[48];
    fprintf(out, "overlap: DP %s, TP %s, PP %s; rank order %s\n", c->overlap_dp ? "on" : "off",
            c->overlap_tp ? "on" : "off", c->overlap_pp ? "on" : "off",
            strata_plan_order_str(c->order, ord, sizeof(ord)));
}

static void row(FILE *out, const char *what, double t, double step)
{
    if (t > 0) fprintf(out, "  %-34s %10.4f s %6.1f %%\n", what, t, 100 * t / step);
}

static void print_text(const strata_plan_ctx_t *ctx, const strata_plan_result_t *r, FILE *out)
{
    const char *dims[] = {"TP/SP", "PP", "DP", "EP", "CP"};
    fprintf(out, "model %s (%.3g B parameters) on %d x %s\n", ctx->w.name,
            strata_workload_params(&ctx->w) / 1e9, r->gpus, ctx->a.name);
    print_config(r, out);
    fprintf(out, "\nstep %.4f s (busiest pipeline stage)\n", r->step);
    row(out, "compute: GEMMs", r->compute_gemm, r->step);
    row(out, "compute: memory-bound operators", r->compute_mem, r->step);
    for (int i = 0; i < 5; i++) {
        char b[48];
        snprintf(b, sizeof(b), "exposed %s communication", dims[i]);
        row(out, b, r->exposed[i], r->step);
    }
    row(out, "pipeline bubble", r->bubble, r->step);
    row(out, "optimizer step", r->optimizer, r->step);
    if (r->cfg.offload) {
        row(out, "offload transfers (PCIe/CXL)", r->offload, r->step);
        fprintf(out,
                "  offload to %s: %.4g GB/s per GPU on its path, CPU Adam at %.4g GB/s of the "
                "tier's memory per GPU\n",
                r->cfg.offload == STRATA_PLAN_OFFLOAD_CXL ? "CXL memory" : "host DRAM",
                r->offload_xfer_bw / 1e9, r->offload_mem_bw / 1e9);
        char cap[64] = "capacity not recorded: not checked";
        if (r->mem_offload_capacity > 0)
            snprintf(cap, sizeof(cap), "%.4g GB per GPU's share of the tier%s",
                     r->mem_offload_capacity / 1e9,
                     r->mem_offload > r->mem_offload_capacity ? " -- DOES NOT FIT" : "");
        fprintf(out, "  optimizer states in the tier: %.2f GB per GPU of %s\n",
                r->mem_offload / 1e9, cap);
    }
    fprintf(out,
            "throughput: %.1f TFLOP/s per GPU model FLOPs (Megatron count: causal attention, "
            "no recompute), MFU %.1f %%; %.1f TFLOP/s executed (recompute and masked "
            "attention included); %.4g tokens/s\n",
            r->tflops_model, 100 * r->mfu, r->tflops_hw, r->tokens_per_s);
    bool sim = false;
    for (int i = 0; i < r->ntraffic; i++)
        sim = sim || r->traffic[i].sim_time > 0;
    fprintf(out, "\ntraffic per step, per GPU, mapped to the stack:\n");
    fprintf(out, "  %-4s %-14s %6s %12s %10s %-24s %-9s %10s %10s%s\n", "dim", "operation", "group",
            "bytes/call", "calls", "tier", "algorithm", "time s", "exposed s",
            sim ? "      sim s" : "");
    for (int i = 0; i < r->ntraffic; i++) {
        const strata_plan_traffic_t *t = &r->traffic[i];
        fprintf(out, "  %-4s %-14s %6d %12.4g %10.4g %-24s %-9s %10.4g %10.4g", t->dim, t->op,
                t->group, t->bytes, t->calls, t->tier, t->algo, t->time, t->exposed);
        if (sim) fprintf(out, " %10.4g", t->sim_time);
        fputc('\n', out);
    }
    if (sim)
        fprintf(out, "  (time: collective model, one group on its share of the links; sim s: "
                     "simulator, all groups of the dimension at once)\n");
    fprintf(out,
            "\nmemory per GPU (stage 0): weights %.2f GB, gradients %.2f GB, optimizer "
            "%.2f GB, activations %.2f GB, buffers %.2f GB = %.2f GB of %.0f GB%s\n",
            r->mem_weights / 1e9, r->mem_grads / 1e9, r->mem_optim / 1e9, r->mem_act / 1e9,
            r->mem_buffers / 1e9, r->mem_total / 1e9, r->mem_capacity / 1e9,
            r->mem_total > r->mem_capacity ? " -- DOES NOT FIT" : "");
    if (!r->fits)
        fprintf(out, "  misses by %.2f GB%s\n", plan_memory_miss(r) / 1e9,
                r->mem_total > r->mem_capacity ? "" : " (the offload tier)");
    fprintf(out, "\nbottleneck: %s\nbest single change: %s\n", r->bottleneck, r->advice);
}

static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', out);
        if ((unsigned char)*s >= 0x20) fputc(*s, out);
    }
    fputc('"', out);
}

static void print_json(const strata_plan_ctx_t *ctx, const strata_plan_result_t *r, FILE *out)
{
    const strata_plan_config_t *c = &r->cfg;
    char ord[48];
    fprintf(out, "{\n  \"schema_version\": %d,\n  \"model\": ", STRATA_JSON_SCHEMA_VERSION);
    json_str(out, ctx->w.name);
    fprintf(out, ",\n  \"accelerator\": ");
    json_str(out, ctx->a.id);
    fprintf(out,
            ",\n  \"gpus\": %d,\n  \"config\": {\"tp\": %d, \"pp\": %d, \"vpp\": %d, "
            "\"dp\": %d, \"ep\": %d, \"cp\": %d, \"micro_batch\": %d, \"global_batch\": %d, "
            "\"micro_batches\": %d, \"zero\": %d, \"sp\": %s, \"recompute\": \"%s\", "
            "\"flash\": %s, \"fp8\": %s, \"overlap_dp\": %s, \"overlap_tp\": %s, "
            "\"overlap_pp\": %s, \"order\": \"%s\"},\n",
            r->gpus, c->tp, c->pp, c->vpp, c->dp, c->ep, c->cp, c->mbs, c->gbs, r->micro, c->zero,
            c->sp ? "true" : "false", recomp_name(c->recompute), c->flash ? "true" : "false",
            c->fp8 ? "true" : "false", c->overlap_dp ? "true" : "false",
            c->overlap_tp ? "true" : "false", c->overlap_pp ? "true" : "false",
            strata_plan_order_str(c->order, ord, sizeof(ord)));
    fprintf(out,
            "  \"step_s\": %.6g,\n  \"breakdown_s\": {\"compute_gemm\": %.6g, "
            "\"compute_memory\": %.6g, \"exposed_tp\": %.6g, \"exposed_pp\": %.6g, "
            "\"exposed_dp\": %.6g, \"exposed_ep\": %.6g, \"exposed_cp\": %.6g, "
            "\"bubble\": %.6g, \"optimizer\": %.6g},\n",
            r->step, r->compute_gemm, r->compute_mem, r->exposed[0], r->exposed[1], r->exposed[2],
            r->exposed[3], r->exposed[4], r->bubble, r->optimizer);
    fprintf(out,
            "  \"flops_convention\": \"model FLOPs: Megatron count, causal attention halved, "
            "no recompute\",\n  \"model_flop\": %.6g,\n  \"executed_flop\": %.6g,\n"
            "  \"per_gpu_flop_per_s\": %.6g,\n  \"executed_per_gpu_flop_per_s\": %.6g,\n"
            "  \"mfu\": %.6g,\n  \"tokens_per_s\": %.6g,\n",
            r->model_flops, r->hw_flops, r->tflops_model * 1e12, r->tflops_hw * 1e12, r->mfu,
            r->tokens_per_s);
    fprintf(out, "  \"traffic\": [");
    for (int i = 0; i < r->ntraffic; i++) {
        const strata_plan_traffic_t *t = &r->traffic[i];
        fprintf(out,
                "%s\n    {\"dim\": \"%s\", \"op\": \"%s\", \"group\": %d, \"size_B\": %.6g, "
                "\"calls\": %.6g, \"tier\": ",
                i ? "," : "", t->dim, t->op, t->group, t->bytes, t->calls);
        json_str(out, t->tier);
        fprintf(out, ", \"algo\": \"%s\", \"time_s\": %.6g, \"exposed_s\": %.6g", t->algo, t->time,
                t->exposed);
        if (t->sim_time > 0) fprintf(out, ", \"sim_time_s\": %.6g", t->sim_time);
        fputc('}', out);
    }
    fprintf(out,
            "\n  ],\n  \"memory_B\": {\"weights\": %.6g, \"gradients\": %.6g, "
            "\"optimizer\": %.6g, \"activations\": %.6g, \"buffers\": %.6g, \"total\": %.6g, "
            "\"capacity\": %.6g, \"fits\": %s}",
            r->mem_weights, r->mem_grads, r->mem_optim, r->mem_act, r->mem_buffers, r->mem_total,
            r->mem_capacity, r->fits ? "true" : "false");
    if (r->cfg.offload) /* the states in the tier and each GPU's share of it (0: not recorded) */
        fprintf(out, ",\n  \"offload_bytes\": {\"states\": %.6g, \"capacity\": %.6g}",
                r->mem_offload, r->mem_offload_capacity);
    fprintf(out, ",\n  \"bottleneck\": ");
    json_str(out, r->bottleneck);
    fprintf(out, ",\n  \"advice\": ");
    json_str(out, r->advice);
    fprintf(out, "\n}\n");
}

void strata_plan_print(const strata_plan_ctx_t *ctx, const strata_plan_result_t *r, bool json,
                       FILE *out)
{
    if (json)
        print_json(ctx, r, out);
    else
        print_text(ctx, r, out);
}
