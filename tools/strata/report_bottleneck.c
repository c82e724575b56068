/*
 * report_bottleneck.c — the closing summary of `strata report`: which layer
 * of the stack bounds a large (1 GiB) allreduce on this cluster, and by how
 * much. The analysis is the library's (strata_verdict_create: the tiers,
 * the collective model's best algorithm and flat ring, the simulated ring
 * and the bounding layer); this section hands it the ring the simulated
 * section already ran (report_sim_ring) and prints it: the text with
 * strata_verdict_print_text, the JSON members here.
 */
#include "cli_report.h"

static void print_json(report_json_t *j, const strata_verdict_t *v)
{
    rj_num(j, "bytes", STRATA_VERDICT_BIG_BYTES);
    rj_int(j, "gpus", v->machine.nranks);
    if (v->have_best && v->machine.nranks > 1) {
        const strata_coll_cost_t *b = &v->best;
        rj_str(j, "layer", v->layer);
        rj_num(j, "layer_per_gpu_Bps", v->layer_bw);
        rj_str(j, "algorithm", strata_algo_name(b->algo));
        rj_str(j, "bound", b->bound);
        rj_num(j, "busbw_Bps", b->busbw);
        rj_num(j, "time_s", b->time);
        rj_num(j, "alpha_s", b->alpha);
        rj_num(j, "beta_s", b->beta);
        rj_num(j, "gamma_s", b->gamma);
    }
    if (v->have_ring && v->machine.nranks > 1) rj_num(j, "ring_model_busbw_Bps", v->ring.busbw);
    if (v->have_sim) {
        const strata_sim_class_t *k = v->sim_top >= 0 ? &v->sim.classes[v->sim_top] : NULL;
        rj_num(j, "ring_sim_busbw_Bps", v->sim.busbw);
        rj_str(j, "ring_sim_layer", strata_verdict_class_layer(v, k));
        rj_str(j, "ring_sim_bound", k ? k->name : "latency");
        rj_num(j, "best_over_ring", v->sim.busbw > 0 ? v->best.busbw / v->sim.busbw : 0);
    }
}

strata_status_t report_verdict(const report_ctx_t *ctx, const char *workload,
                               strata_verdict_t **v_p, strata_error_t *err)
{
    strata_sim_result_t ring = {0};
    strata_verdict_opts_t o = {.workload = workload};
    if (strata_topo_endpoint_count(ctx->topo) >= 2) {
        strata_status_t st = report_sim_ring(ctx->topo, &ring, err);
        if (st) return st;
        o.sim = &ring;
    }
    strata_status_t st = strata_verdict_create(ctx->topo, ctx->links, &o, v_p, err);
    strata_sim_result_free(&ring);
    return st;
}

static strata_status_t run(const report_ctx_t *ctx, strata_error_t *err)
{
    strata_verdict_t *v = NULL;
    strata_status_t st = report_verdict(ctx, NULL, &v, err);
    if (st == STRATA_OK) {
        if (ctx->json)
            print_json(ctx->json, v);
        else
            strata_verdict_print_text(v, ctx->spec, ctx->out);
    }
    strata_verdict_destroy(v);
    return st;
}

const report_section_t report_bottleneck_section = {
    .name = "bottleneck",
    .title = "Bottleneck: what bounds a large allreduce",
    .run = run,
};
