/*
 * report_bottleneck.c — the closing summary of `strata report`: which layer
 * of the stack bounds a large (1 GiB) allreduce on this cluster, and by how
 * much, from the figures of the sections above it:
 *   - the collective model (report_coll.c): the algorithm strata would
 *     choose at 1 GiB, its bus bandwidth and what bounds it, and the flat
 *     ring's;
 *   - the simulator (report_sim.c): the flat ring with congestion, spread
 *     routing, and the class of links that bounded it longest;
 *   - the link tiers (report_link.c): each layer's bandwidth per GPU, the
 *     yardstick the bus bandwidth is measured against.
 * The section recomputes those figures from the same loaded topology (all
 * cheap next to the report), so `--section bottleneck` stands alone.
 */
#include "cli_report.h"

#include <string.h>

typedef struct verdict {
    strata_coll_machine_t m;
    report_tiers_t tiers;
    bool have_best, have_ring, have_sim;
    strata_coll_cost_t best, ring;
    strata_sim_result_t sim;
} verdict_t;

/* The layer a sim class belongs to: network above tier 0; in a server,
 * scale-up when its kind is the scale-up tier's, else host/PCIe. */
static const char *class_layer(const strata_sim_class_t *c, const report_tiers_t *t)
{
    if (!c) return "latency";
    if (c->tier >= 1) return "scale-out network";
    const char *kind = strchr(c->name, '/');
    if (kind && t->up_kind[0] && strcmp(kind + 1, t->up_kind) == 0) return "scale-up";
    return "host/PCIe";
}

/* The layer a link kind belongs to, by the link tiers; fallback when the
 * kind is none of theirs. */
static const char *kind_layer(const char *kind, const report_tiers_t *t, const char *fallback,
                              double *bw_p)
{
    if (t->up_kind[0] && strcmp(kind, t->up_kind) == 0) return *bw_p = t->up, "scale-up";
    if (t->net_kind[0] && strcmp(kind, t->net_kind) == 0)
        return *bw_p = t->net, "scale-out network";
    if (t->host_kind[0] && strcmp(kind, t->host_kind) == 0) return *bw_p = t->host, "host/PCIe";
    *bw_p = 0;
    return fallback;
}

/* The layer a model bound names, and its per-GPU bandwidth (0: none). */
static const char *bound_layer(const char *bound, const verdict_t *v, double *bw_p)
{
    *bw_p = 0;
    if (strcmp(bound, "network bandwidth") == 0)
        return kind_layer(v->m.inter_kind, &v->tiers, "scale-out network", bw_p);
    if (strcmp(bound, "scale-up bandwidth") == 0)
        return kind_layer(v->m.intra_kind, &v->tiers, "scale-up", bw_p);
    if (strcmp(bound, "reduction") == 0) {
        *bw_p = v->m.reduce_bw;
        return "memory (reduction)";
    }
    return "latency";
}

static strata_status_t compute(const report_ctx_t *ctx, verdict_t *v, strata_error_t *err)
{
    memset(v, 0, sizeof(*v));
    report_link_tiers(ctx->topo, &v->tiers);
    strata_status_t st = strata_coll_machine_from_topo(ctx->topo, ctx->links, &v->m, err);
    if (st) return st;
    v->have_best = strata_coll_select(&v->m, STRATA_COLL_ALLREDUCE, REPORT_BIG_BYTES, &v->best,
                                      NULL) == STRATA_OK;
    v->have_ring = strata_coll_cost(&v->m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING,
                                    REPORT_BIG_BYTES, &v->ring, NULL) == STRATA_OK;
    if (strata_topo_endpoint_count(ctx->topo) < 2) return STRATA_OK;
    st = report_sim_ring(ctx->topo, &v->sim, err);
    v->have_sim = st == STRATA_OK;
    return st;
}

static void text_model(FILE *out, const char *what, const strata_coll_cost_t *c)
{
    char a[32];
    fprintf(out, "  %-30s %9s GB/s busbw  %-12s %s-bound\n", what, report_gbs(c->busbw, a, 32),
            strata_algo_name(c->algo), c->bound);
}

static void text_layers(FILE *out, const report_tiers_t *t)
{
    char a[32];
    fprintf(out, "  Per GPU the layers give:");
    const char *sep = " ";
    if (t->up > 0) fprintf(out, "%sscale-up %s", sep, report_gbs(t->up, a, 32)), sep = ", ";
    if (t->host > 0) fprintf(out, "%shost/PCIe %s", sep, report_gbs(t->host, a, 32)), sep = ", ";
    if (t->net > 0) fprintf(out, "%sscale-out %s", sep, report_gbs(t->net, a, 32));
    fprintf(out, " GB/s");
    if (t->up > 0 && t->net > 0) fprintf(out, " (cliff %.3gx)", t->up / t->net);
    fprintf(out, ".\n");
}

static void text_verdict(FILE *out, const verdict_t *v)
{
    char a[32], c[32];
    double cap;
    const char *layer = bound_layer(v->best.bound, v, &cap);
    const strata_coll_cost_t *b = &v->best;
    double bw_term = b->beta > b->gamma ? b->beta : b->gamma;
    fprintf(out, "\n  bound: %s", layer);
    if (cap > 0) fprintf(out, " (%s GB/s per GPU)", report_gbs(cap, a, 32));
    fprintf(out,
            ".\n  The best algorithm, %s, spends %.0f%% of its predicted %s on that\n"
            "  term and %.0f%% on latency.\n",
            strata_algo_name(b->algo),
            (strcmp(layer, "latency") ? bw_term : b->alpha) / b->time * 100,
            report_time(b->time, c, 32), b->alpha / b->time * 100);
    text_layers(out, &v->tiers);
    if (v->have_sim && v->sim.busbw > 0) {
        const strata_sim_class_t *k = report_sim_top_class(&v->sim);
        double x = v->best.busbw / v->sim.busbw;
        fprintf(
            out,
            "  The simulated flat ring is bound by the %s (%s, %.0f%% of the\n  time) at %s GB/s",
            class_layer(k, &v->tiers), k ? k->name : "path latency",
            (k ? k->bound_share : v->sim.latency_share) * 100, report_gbs(v->sim.busbw, c, 32));
        if (x >= 1.05)
            fprintf(out, ", %.3gx below the best algorithm.\n", x);
        else
            fprintf(out, ", within 5%% of the best algorithm.\n");
    }
}

static void print_text(const report_ctx_t *ctx, const verdict_t *v)
{
    FILE *out = ctx->out;
    char a[32];
    if (v->m.nranks < 2) {
        fprintf(out, "  one GPU (%s): no allreduce, nothing to bound.\n", ctx->spec);
        return;
    }
    fprintf(out, "  1 GiB allreduce over %u GPUs (%s)\n\n", v->m.nranks, ctx->spec);
    if (v->have_best) text_model(out, "best algorithm (model)", &v->best);
    if (v->have_ring) text_model(out, "flat ring (model)", &v->ring);
    if (v->have_sim) {
        const strata_sim_class_t *k = report_sim_top_class(&v->sim);
        fprintf(out, "  %-30s %9s GB/s busbw  %-12s %s %.0f%%\n", "flat ring (simulated, spread)",
                report_gbs(v->sim.busbw, a, 32), "ring", k ? k->name : "latency",
                (k ? k->bound_share : v->sim.latency_share) * 100);
    }
    if (v->have_best) text_verdict(out, v);
}

static void print_json(report_json_t *j, const verdict_t *v)
{
    rj_num(j, "bytes", REPORT_BIG_BYTES);
    rj_int(j, "gpus", v->m.nranks);
    if (v->have_best && v->m.nranks > 1) {
        double cap;
        const strata_coll_cost_t *b = &v->best;
        rj_str(j, "layer", bound_layer(b->bound, v, &cap));
        rj_num(j, "layer_per_gpu_Bps", cap);
        rj_str(j, "algorithm", strata_algo_name(b->algo));
        rj_str(j, "bound", b->bound);
        rj_num(j, "busbw_Bps", b->busbw);
        rj_num(j, "time_s", b->time);
        rj_num(j, "alpha_s", b->alpha);
        rj_num(j, "beta_s", b->beta);
        rj_num(j, "gamma_s", b->gamma);
    }
    if (v->have_ring && v->m.nranks > 1) rj_num(j, "ring_model_busbw_Bps", v->ring.busbw);
    if (v->have_sim) {
        const strata_sim_class_t *k = report_sim_top_class(&v->sim);
        rj_num(j, "ring_sim_busbw_Bps", v->sim.busbw);
        rj_str(j, "ring_sim_layer", class_layer(k, &v->tiers));
        rj_str(j, "ring_sim_bound", k ? k->name : "latency");
        rj_num(j, "best_over_ring", v->sim.busbw > 0 ? v->best.busbw / v->sim.busbw : 0);
    }
}

static strata_status_t run(const report_ctx_t *ctx, strata_error_t *err)
{
    verdict_t v;
    strata_status_t st = compute(ctx, &v, err);
    if (st == STRATA_OK) {
        if (ctx->json)
            print_json(ctx->json, &v);
        else
            print_text(ctx, &v);
    }
    strata_sim_result_free(&v.sim);
    return st;
}

const report_section_t report_bottleneck_section = {
    .name = "bottleneck",
    .title = "Bottleneck: what bounds a large allreduce",
    .run = run,
};
