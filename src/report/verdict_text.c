/*
 * verdict_text.c — the verdict as text: the closing summary `strata
 * report` prints (its bottleneck section). Formatting only; every figure
 * and every word of the conclusion comes from the verdict.
 */
#include "report.h"

#include <string.h>

static void text_model(FILE *out, const char *what, const strata_coll_cost_t *c)
{
    char a[32];
    fprintf(out, "  %-30s %9s GB/s busbw  %-12s %s-bound\n", what, strata_fmt_gbs(c->busbw, a, 32),
            strata_algo_name(c->algo), c->bound);
}

static void text_layers(FILE *out, const strata_verdict_tiers_t *t)
{
    static const char *const names[] = {"scale-up", "host/PCIe", "scale-out"};
    char a[32];
    fprintf(out, "  Per GPU the layers give:");
    const char *sep = " ";
    for (int k = 0; k < STRATA_TIER_COUNT; k++)
        if (t->bw[k] > 0) {
            fprintf(out, "%s%s %s", sep, names[k], strata_fmt_gbs(t->bw[k], a, 32));
            sep = ", ";
        }
    fprintf(out, " GB/s");
    if (t->bw[STRATA_TIER_UP] > 0 && t->bw[STRATA_TIER_NET] > 0)
        fprintf(out, " (cliff %.3gx)", t->bw[STRATA_TIER_UP] / t->bw[STRATA_TIER_NET]);
    fprintf(out, ".\n");
}

static const strata_sim_class_t *top(const strata_verdict_t *v)
{
    return v->sim_top >= 0 ? &v->sim.classes[v->sim_top] : NULL;
}

static void text_conclusion(FILE *out, const strata_verdict_t *v)
{
    char a[32], c[32];
    const strata_coll_cost_t *b = &v->best;
    fprintf(out, "\n  bound: %s", v->layer);
    if (v->layer_bw > 0) fprintf(out, " (%s GB/s per GPU)", strata_fmt_gbs(v->layer_bw, a, 32));
    fprintf(out,
            ".\n  The best algorithm, %s, spends %.0f%% of its predicted %s on that\n"
            "  term and %.0f%% on latency.\n",
            strata_algo_name(b->algo), v->bw_share * 100, strata_fmt_time(b->time, c, 32),
            v->lat_share * 100);
    text_layers(out, &v->tiers);
    if (v->have_sim && v->sim.busbw > 0) {
        const strata_sim_class_t *k = top(v);
        fprintf(
            out,
            "  The simulated flat ring is bound by the %s (%s, %.0f%% of the\n  time) at %s GB/s",
            v->sim_layer, k ? k->name : "path latency", v->sim_share * 100,
            strata_fmt_gbs(v->sim.busbw, c, 32));
        if (v->best_over_sim >= 1.05)
            fprintf(out, ", %.3gx below the best algorithm.\n", v->best_over_sim);
        else
            fprintf(out, ", within 5%% of the best algorithm.\n");
    }
}

void strata_verdict_print_text(const strata_verdict_t *v, const char *spec, FILE *out)
{
    char a[32];
    if (v->machine.nranks < 2) {
        fprintf(out, "  one GPU (%s): no allreduce, nothing to bound.\n", spec);
        return;
    }
    fprintf(out, "  1 GiB allreduce over %u GPUs (%s)\n\n", v->machine.nranks, spec);
    if (v->have_best) text_model(out, "best algorithm (model)", &v->best);
    if (v->have_ring) text_model(out, "flat ring (model)", &v->ring);
    if (v->have_sim) {
        const strata_sim_class_t *k = top(v);
        fprintf(out, "  %-30s %9s GB/s busbw  %-12s %s %.0f%%\n", "flat ring (simulated, spread)",
                strata_fmt_gbs(v->sim.busbw, a, 32), "ring", k ? k->name : "latency",
                (k ? k->bound_share : v->sim.latency_share) * 100);
    }
    if (v->have_best) text_conclusion(out, v);
}

/* ==== The collective section ==== */

static void coll_rows(const strata_verdict_t *v, FILE *out)
{
    fprintf(out, "  %10s", "size");
    for (int i = 0; i < STRATA_VERDICT_TABLE_OPS; i++)
        fprintf(out, "  %-24s", strata_coll_name(v->table_ops[i]));
    fprintf(out, "\n  %10s", "");
    for (int i = 0; i < STRATA_VERDICT_TABLE_OPS; i++)
        fprintf(out, "  %-24s", "busbw GB/s  algorithm");
    fprintf(out, "\n");
    for (int k = 0; k < STRATA_VERDICT_TABLE_SIZES; k++) {
        char b[32];
        fprintf(out, "  %10s", strata_fmt_size(v->table_sizes[k], b, sizeof(b)));
        for (int i = 0; i < STRATA_VERDICT_TABLE_OPS; i++) {
            const strata_coll_cost_t *c = &v->table[i][k];
            if (v->table_ok[i][k])
                fprintf(out, "  %10.4g  %-12s", c->busbw / 1e9, strata_algo_name(c->algo));
            else
                fprintf(out, "  %-24s", "-");
        }
        fprintf(out, "\n");
    }
}

static void coll_choices(const strata_verdict_t *v, FILE *out)
{
    char b[32];
    for (int i = 0; i < STRATA_VERDICT_TABLE_OPS; i++) {
        const strata_verdict_choice_t *c = &v->choices[i];
        if (!c->ok) continue;
        fprintf(out, "  %s: %s from 8 B", strata_coll_name(v->table_ops[i]),
                strata_algo_name(c->lo.algo));
        for (size_t k = 0; k < c->ncross; k++)
            fprintf(out, ", %s from %s", strata_algo_name(c->algos[k]),
                    strata_fmt_size(c->sizes[k], b, sizeof(b)));
        fprintf(out, "; at 8 GiB %s-bound\n", c->hi.bound);
    }
}

void strata_verdict_print_coll_text(const strata_verdict_t *v, const char *spec, FILE *out)
{
    const strata_coll_machine_t *m = &v->machine;
    char a[32], b[32];
    fprintf(out, "  %u GPUs = %u server%s x %u; scale-up %s GB/s per GPU pair", m->nranks,
            m->servers, m->servers == 1 ? "" : "s", m->per_server,
            strata_fmt_gbs(m->bw_intra, a, sizeof(a)));
    if (m->servers > 1)
        fprintf(out, ", network %s GB/s\n  per NIC x %u per server",
                strata_fmt_gbs(m->bw_nic, b, 32), m->nics);
    fprintf(out, "\n  (alpha-beta-gamma model; 'strata coll %s' for detail)\n\n", spec);
    coll_rows(v, out);
    fprintf(out, "\n  choices and bottlenecks:\n");
    coll_choices(v, out);
}
