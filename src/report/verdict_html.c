/*
 * verdict_html.c — the verdict as HTML sections of charts (chart.c,
 * graph.c), each with its table: the tiers of the stack (bandwidth,
 * latency, and the rate one transfer reaches against its size: the
 * communication cliff), AllReduce bus bandwidth of every algorithm against
 * size with the selection and its crossovers, the simulated ring's links
 * and tiers, a drawing of the topology, and the planned step.
 *
 * Formatting only. The one formula here is the α-β (Hockney) time of one
 * transfer, size / (latency + size / bandwidth), to draw the tier figures
 * the verdict holds against message size; it adds no figure of its own.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 900 /* chart width, px */

/* ==== Tiers ==== */

static strata_status_t tier_bars(const strata_verdict_t *v, FILE *out, bool latency)
{
    const char *cats[STRATA_TIER_COUNT + 1];
    double vals[STRATA_TIER_COUNT + 1];
    size_t n = 0;
    for (int k = 0; k < STRATA_TIER_COUNT; k++) {
        double x = latency ? v->tiers.latency[k] : v->tiers.bw[k];
        if (x > 0) cats[n] = strata_tier_name((strata_tier_t)k), vals[n++] = x;
    }
    if (!latency && v->machine.reduce_bw > 0)
        cats[n] = "memory (reduction)", vals[n++] = v->machine.reduce_bw;
    strata_chart_t *c = NULL;
    strata_status_t st = strata_chart_create(
        STRATA_CHART_BARS, latency ? "tier-latency" : "tier-bandwidth",
        latency ? "Latency of one message per tier" : "Bandwidth per GPU per tier (per direction)",
        &c, NULL);
    if (st) return st;
    strata_chart_y(c, STRATA_AXIS_LOG, latency ? "latency" : "bandwidth per GPU",
                   latency ? "s" : "B/s", false);
    strata_chart_x(c, STRATA_AXIS_LINEAR, "tier", "", false);
    if (n) {
        strata_chart_categories(c, n, cats);
        strata_chart_bars(c, latency ? "one message" : "per GPU", vals);
    }
    strata_chart_note(c, latency ? "Scale-up: rank 0 to 1 in a server; scale-out: across the "
                                   "farthest servers; host: its slowest link's hop."
                                 : "Each tier's links summed per accelerator; memory: the rate a "
                                   "GPU sums incoming data (HBM / 3 passes).");
    st = strata_chart_render(c, out, W / 2 - 10, 300);
    strata_chart_destroy(c);
    return st;
}

/* The rate one transfer of s bytes reaches on each tier, α-β: s / (α + s/β);
 * half the tier's bandwidth at s = α β, marked. */
static strata_status_t tier_staircase(const strata_verdict_t *v, FILE *out)
{
    strata_chart_t *c = NULL;
    strata_status_t st = strata_chart_create(STRATA_CHART_LINE, "tier-staircase",
                                             "The communication cliff: the rate one transfer "
                                             "reaches on each tier, against its size",
                                             &c, NULL);
    if (st) return st;
    strata_chart_x(c, STRATA_AXIS_LOG, "message size", "B", true);
    strata_chart_y(c, STRATA_AXIS_LOG, "rate", "B/s", false);
    for (int k = 0; k < STRATA_TIER_COUNT; k++) {
        double bw = v->tiers.bw[k], lat = v->tiers.latency[k];
        if (!(bw > 0) || !(lat > 0)) continue;
        double y[STRATA_VERDICT_SIZES];
        for (int i = 0; i < STRATA_VERDICT_SIZES; i++)
            y[i] = v->sizes[i] / (lat + v->sizes[i] / bw);
        strata_chart_line(c, strata_tier_name((strata_tier_t)k), STRATA_VERDICT_SIZES, v->sizes, y);
        char lab[96], s[32];
        snprintf(lab, sizeof(lab), "%s: half rate at %s", strata_tier_name((strata_tier_t)k),
                 strata_report_value(lat * bw, "B", true, s, sizeof(s)));
        strata_chart_mark(c, lat * bw, bw / 2, lab);
    }
    strata_chart_note(c, "Time of one transfer = latency + size / bandwidth (alpha-beta); below "
                         "latency x bandwidth a transfer is latency-bound.");
    st = strata_chart_render(c, out, W, 360);
    strata_chart_destroy(c);
    return st;
}

/* ==== Collectives ==== */

static strata_status_t busbw_chart(const strata_verdict_t *v, FILE *out)
{
    strata_chart_t *c = NULL;
    strata_status_t st =
        strata_chart_create(STRATA_CHART_LINE, "busbw",
                            "AllReduce bus bandwidth against message size (model)", &c, NULL);
    if (st) return st;
    strata_chart_x(c, STRATA_AXIS_LOG, "message size", "B", true);
    strata_chart_y(c, STRATA_AXIS_LOG, "bus bandwidth", "B/s", false);
    double sel[STRATA_VERDICT_SIZES];
    for (int i = 0; i < STRATA_VERDICT_SIZES; i++)
        sel[i] = v->chosen[i] >= 0 ? v->busbw[v->chosen[i]][i] : NAN;
    strata_chart_emphasise(
        c, strata_chart_line(c, "selected (cheapest)", STRATA_VERDICT_SIZES, v->sizes, sel));
    for (int a = 0; a < STRATA_ALGO_COUNT; a++) {
        double y[STRATA_VERDICT_SIZES];
        bool any = false;
        for (int i = 0; i < STRATA_VERDICT_SIZES; i++) {
            y[i] = v->busbw[a][i] > 0 ? v->busbw[a][i] : NAN;
            any |= v->busbw[a][i] > 0;
        }
        if (any)
            strata_chart_line(c, strata_algo_name((strata_algo_t)a), STRATA_VERDICT_SIZES, v->sizes,
                              y);
    }
    char lab[96], s[32];
    for (size_t i = 0; i < v->ncross; i++) {
        strata_coll_cost_t k;
        if (strata_coll_cost(&v->machine, STRATA_COLL_ALLREDUCE, v->cross_algos[i],
                             v->cross_sizes[i], &k, NULL))
            continue;
        snprintf(lab, sizeof(lab), "%s above %s", strata_algo_name(v->cross_algos[i]),
                 strata_report_value(v->cross_sizes[i], "B", true, s, sizeof(s)));
        strata_chart_mark(c, v->cross_sizes[i], k.busbw, lab);
    }
    if (v->have_best) {
        snprintf(lab, sizeof(lab), "chosen at 1 GiB: %s", strata_algo_name(v->best.algo));
        strata_chart_mark(c, STRATA_VERDICT_BIG_BYTES, v->best.busbw, lab);
    }
    strata_chart_note(c, "busbw as nccl-tests defines it (algbw x 2(P-1)/P); the selected "
                         "curve follows the cheapest algorithm at each size.");
    st = strata_chart_render(c, out, W, 400);
    strata_chart_destroy(c);
    return st;
}

/* ==== Simulation ==== */

static strata_status_t sim_links(const strata_verdict_t *v, FILE *out)
{
    const strata_sim_result_t *r = &v->sim;
    int n = r->nlinks < 16 ? r->nlinks : 16;
    const char *cats[16];
    double u[16];
    for (int i = 0; i < n; i++)
        cats[i] = r->links[i].name, u[i] = r->links[i].utilisation * 100;
    strata_chart_t *c = NULL;
    strata_status_t st = strata_chart_create(STRATA_CHART_BARS, "sim-links",
                                             "Most loaded links of the simulated ring", &c, NULL);
    if (st) return st;
    strata_chart_y(c, STRATA_AXIS_LINEAR, "utilisation", "%", false);
    strata_chart_x(c, STRATA_AXIS_LINEAR, "link", "", false);
    if (n) strata_chart_categories(c, (size_t)n, cats), strata_chart_bars(c, "utilisation", u);
    strata_chart_note(c, "Bytes carried / (capacity x simulated time), per direction.");
    st = strata_chart_render(c, out, W, 340);
    strata_chart_destroy(c);
    return st;
}

static strata_status_t sim_classes(const strata_verdict_t *v, FILE *out, bool time)
{
    const strata_sim_result_t *r = &v->sim;
    const char *cats[STRATA_SIM_CLASSES_MAX + 1];
    double y[STRATA_SIM_CLASSES_MAX + 1];
    strata_chart_t *c = NULL;
    strata_status_t st = strata_chart_create(
        time ? STRATA_CHART_STACKED : STRATA_CHART_BARS, time ? "sim-time" : "sim-tiers",
        time ? "Where the simulated ring's time went" : "Utilisation per tier and link kind", &c,
        NULL);
    if (st) return st;
    if (time) {
        const char *one[] = {"1 GiB ring allreduce"};
        strata_chart_categories(c, 1, one);
        for (int k = 0; k < r->nclasses; k++) {
            double t = r->classes[k].bound_share * r->time;
            strata_chart_bars(c, r->classes[k].name, &t);
        }
        double t = r->latency_share * r->time;
        strata_chart_bars(c, "latency and waits", &t);
        strata_chart_y(c, STRATA_AXIS_LINEAR, "time", "s", false);
        strata_chart_note(c, "The time each class of links bounded the steps that decided the "
                             "finish (the critical chain).");
    } else {
        for (int k = 0; k < r->nclasses; k++)
            cats[k] = r->classes[k].name, y[k] = r->classes[k].utilisation * 100;
        if (r->nclasses) {
            strata_chart_categories(c, (size_t)r->nclasses, cats);
            strata_chart_bars(c, "utilisation", y);
        }
        strata_chart_y(c, STRATA_AXIS_LINEAR, "utilisation", "%", false);
        strata_chart_note(c, "Bytes / (capacity x time) of all links of a class (tier/kind).");
    }
    strata_chart_x(c, STRATA_AXIS_LINEAR, time ? "" : "class", "", false);
    st = strata_chart_render(c, out, W / 2 - 10, 320);
    strata_chart_destroy(c);
    return st;
}

/* ==== Topology ==== */

#define DRAW_ALL_MAX 96

/* Row of a device in the drawing: network switches (highest tier first),
 * NICs, PCIe switches and CPUs, accelerators, scale-up switches. */
static int draw_row(const strata_topo_device_t *d, int top_tier)
{
    switch (d->kind) {
    case STRATA_DEV_NET_SWITCH:
        return top_tier - (d->tier > 0 ? d->tier : 1);
    case STRATA_DEV_NIC:
        return top_tier;
    case STRATA_DEV_PCIE_SWITCH:
    case STRATA_DEV_CPU:
        return top_tier + 1;
    case STRATA_DEV_ACCEL:
        return top_tier + 2;
    default:
        return top_tier + 3;
    }
}

static const char *draw_kind(const strata_topo_device_t *d)
{
    static const char *const sw[] = {"switch", "leaf", "spine", "core"};
    switch (d->kind) {
    case STRATA_DEV_NET_SWITCH:
        return sw[d->tier >= 0 && d->tier < 4 ? d->tier : 0];
    case STRATA_DEV_NIC:
        return "nic";
    case STRATA_DEV_PCIE_SWITCH:
        return "pcie";
    case STRATA_DEV_CPU:
        return "cpu";
    case STRATA_DEV_ACCEL:
        return "gpu";
    default:
        return "upsw";
    }
}

static int top_tier(const strata_topo_t *t)
{
    int top = 0;
    for (int32_t i = 0; i < strata_topo_device_count(t); i++) {
        strata_topo_device_t d = strata_topo_device(t, i);
        if (d.kind == STRATA_DEV_NET_SWITCH && d.tier > top) top = d.tier;
    }
    return top;
}

/* Every device; rows compacted so an absent kind leaves no gap. */
static strata_status_t draw_all(const strata_topo_t *t, strata_graph_t *g, int top)
{
    int32_t n = strata_topo_device_count(t);
    int used[16] = {0}, map[16];
    for (int32_t i = 0; i < n; i++) {
        strata_topo_device_t d = strata_topo_device(t, i);
        used[draw_row(&d, top)] = 1;
    }
    for (int r = 0, k = 0; r < 16; r++)
        map[r] = used[r] ? k++ : 0;
    for (int32_t i = 0; i < n; i++) {
        strata_topo_device_t d = strata_topo_device(t, i);
        if (strata_graph_node(g, map[draw_row(&d, top)], d.name, draw_kind(&d)) != i)
            return STRATA_ERR_NOMEM;
    }
    for (int32_t i = 0; i < strata_topo_link_count(t); i++) {
        strata_topo_link_t l = strata_topo_link(t, i);
        if (strata_graph_edge(g, l.a, l.b, l.kind) < 0) return STRATA_ERR_NOMEM;
    }
    return STRATA_OK;
}

/* One node per (row, kind): "32 x gpu"; an edge per pair of such groups
 * with the link count and kinds. */
static strata_status_t draw_summary(const strata_topo_t *t, strata_graph_t *g, int top)
{
    enum { MAXG = 16 };
    int count[MAXG] = {0}, row[MAXG] = {0}, ng = 0;
    const char *kind[MAXG];
    int32_t n = strata_topo_device_count(t);
    for (int32_t i = 0; i < n; i++) {
        strata_topo_device_t d = strata_topo_device(t, i);
        int j = 0;
        while (j < ng && (row[j] != draw_row(&d, top) || strcmp(kind[j], draw_kind(&d))))
            j++;
        if (j == ng && ng == MAXG) continue;
        if (j == ng) row[ng] = draw_row(&d, top), kind[ng] = draw_kind(&d), ng++;
        count[j]++;
    }
    char lab[64];
    for (int j = 0; j < ng; j++) {
        snprintf(lab, sizeof(lab), "%d x %s", count[j], kind[j]);
        if (strata_graph_node(g, row[j], lab, kind[j]) != j) return STRATA_ERR_NOMEM;
    }
    long links[MAXG][MAXG] = {{0}};
    char lk[MAXG][MAXG][32] = {{{0}}};
    for (int32_t i = 0; i < strata_topo_link_count(t); i++) {
        strata_topo_link_t l = strata_topo_link(t, i);
        strata_topo_device_t a = strata_topo_device(t, l.a), b = strata_topo_device(t, l.b);
        int ja = -1, jb = -1;
        for (int j = 0; j < ng; j++) {
            if (row[j] == draw_row(&a, top) && !strcmp(kind[j], draw_kind(&a))) ja = j;
            if (row[j] == draw_row(&b, top) && !strcmp(kind[j], draw_kind(&b))) jb = j;
        }
        if (ja < 0 || jb < 0) continue;
        if (ja > jb) {
            int x = ja;
            ja = jb, jb = x;
        }
        links[ja][jb] += l.mult > 0 ? l.mult : 1;
        snprintf(lk[ja][jb], sizeof(lk[ja][jb]), "%s", l.kind);
    }
    for (int a = 0; a < ng; a++)
        for (int b = a; b < ng; b++)
            if (links[a][b]) {
                snprintf(lab, sizeof(lab), "%ld x %.31s", links[a][b], lk[a][b]);
                if (strata_graph_edge(g, a, b, lab) < 0) return STRATA_ERR_NOMEM;
            }
    return STRATA_OK;
}

static strata_status_t topo_drawing(const strata_verdict_t *v, FILE *out)
{
    const strata_topo_t *t = v->topo;
    bool all = strata_topo_device_count(t) <= DRAW_ALL_MAX;
    strata_graph_t *g = NULL;
    strata_status_t st = strata_graph_create("topology",
                                             all ? "The cluster's devices and links"
                                                 : "The cluster, one node per kind of device",
                                             &g, NULL);
    if (st) return st;
    int top = top_tier(t);
    st = all ? draw_all(t, g, top) : draw_summary(t, g, top);
    char note[160];
    snprintf(note, sizeof(note),
             all ? "%d devices, %d links: network switches on top, then NICs, PCIe switches "
                   "and CPUs, GPUs, scale-up switches."
                 : "%d devices, %d links, summarised (over 96 devices): each node is every "
                   "device of one kind, each edge every link between two kinds.",
             (int)strata_topo_device_count(t), (int)strata_topo_link_count(t));
    strata_graph_note(g, note);
    if (!st) st = strata_graph_render(g, out, W, all ? 420 : 360);
    strata_graph_destroy(g);
    return st;
}

/* ==== The plan ==== */

static strata_status_t plan_step(const strata_verdict_t *v, FILE *out)
{
    static const char *const dims[] = {"TP", "PP", "DP", "EP", "CP"};
    const strata_plan_result_t *r = &v->plan;
    strata_chart_t *c = NULL;
    strata_status_t st = strata_chart_create(STRATA_CHART_STACKED, "plan-step",
                                             "Where a training step goes", &c, NULL);
    if (st) return st;
    const char *one[] = {"step"};
    strata_chart_categories(c, 1, one);
    strata_chart_bars(c, "compute", &r->compute);
    strata_chart_bars(c, "pipeline bubble", &r->bubble);
    char name[48];
    for (int d = 0; d < 5; d++)
        if (r->exposed[d] > 0) {
            snprintf(name, sizeof(name), "exposed %s communication", dims[d]);
            strata_chart_bars(c, name, &r->exposed[d]);
        }
    strata_chart_bars(c, "optimizer", &r->optimizer);
    strata_chart_y(c, STRATA_AXIS_LINEAR, "time per step", "s", false);
    strata_chart_x(c, STRATA_AXIS_LINEAR, "", "", false);
    char note[256];
    snprintf(note, sizeof(note),
             "Step %.3f s; bound by %s. The planner's parts of the busiest "
             "stage (communication hidden under compute is not shown).",
             r->step, r->bottleneck);
    strata_chart_note(c, note);
    st = strata_chart_render(c, out, W / 2 - 10, 340);
    strata_chart_destroy(c);
    return st;
}

static strata_status_t plan_memory(const strata_verdict_t *v, FILE *out)
{
    const strata_plan_result_t *r = &v->plan;
    const char *cats[] = {"weights", "gradients", "optimizer", "activations",
                          "buffers", "total",     "capacity"};
    double y[] = {r->mem_weights, r->mem_grads, r->mem_optim,   r->mem_act,
                  r->mem_buffers, r->mem_total, r->mem_capacity};
    strata_chart_t *c = NULL;
    strata_status_t st = strata_chart_create(STRATA_CHART_BARS, "plan-memory",
                                             "Memory per GPU (busiest stage)", &c, NULL);
    if (st) return st;
    strata_chart_categories(c, 7, cats);
    strata_chart_bars(c, "bytes", y);
    strata_chart_y(c, STRATA_AXIS_LINEAR, "memory", "B", false);
    strata_chart_x(c, STRATA_AXIS_LINEAR, "", "", false);
    strata_chart_note(c, r->fits ? "The plan fits the accelerator's memory."
                                 : "The plan does NOT fit the accelerator's memory.");
    st = strata_chart_render(c, out, W / 2 - 10, 340);
    strata_chart_destroy(c);
    return st;
}

static strata_status_t plan_html(const strata_verdict_t *v, FILE *out)
{
    strata_html_heading(out, "strategy", "Strategy: a training step planned on this cluster");
    if (!v->have_plan) {
        char s[640];
        snprintf(s, sizeof(s), "%s: %s", v->workload.name, v->plan_skip);
        strata_html_para(out, s);
        return STRATA_OK;
    }
    const strata_plan_config_t *c = &v->plan.cfg;
    char s[512];
    snprintf(s, sizeof(s),
             "%s, batch %d x %d tokens: best plan TP %d x PP %d x DP %d x CP %d, micro-batch "
             "%d, ZeRO-%d; MFU %.1f %%; bound by %s; best single change: %s.",
             v->workload.name, c->gbs, v->workload.seq, c->tp, c->pp, c->dp, c->cp, c->mbs, c->zero,
             100 * v->plan.mfu, v->plan.bottleneck, v->plan.advice);
    strata_html_para(out, s);
    fputs("<div class=\"row\">\n", out);
    strata_status_t st = plan_step(v, out);
    if (!st) st = plan_memory(v, out);
    fputs("</div>\n", out);
    return st;
}

/* ==== The page's sections ==== */

static void verdict_para(const strata_verdict_t *v, const char *spec, FILE *out)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return;
    strata_verdict_print_text(v, spec, mem);
    fclose(mem);
    strata_html_pre(out, buf);
    free(buf);
}

strata_status_t strata_verdict_print_html(const strata_verdict_t *v, const char *spec, FILE *out)
{
    if (!v || !out) return STRATA_ERR_INVALID;
    strata_html_heading(out, "bottleneck", "Bottleneck: what bounds a large allreduce");
    verdict_para(v, spec, out);
    strata_html_heading(out, "tiers", "The tiers of the stack");
    fputs("<div class=\"row\">\n", out);
    strata_status_t st = tier_bars(v, out, false);
    if (!st) st = tier_bars(v, out, true);
    fputs("</div>\n", out);
    if (!st) st = tier_staircase(v, out);
    if (!st && v->gpus >= 2) {
        strata_html_heading(out, "coll", "Collectives (the alpha-beta-gamma model)");
        st = busbw_chart(v, out);
    }
    if (!st && v->have_sim) {
        strata_html_heading(out, "sim", "Simulated ring allreduce, 1 GiB (congestion-aware)");
        st = sim_links(v, out);
        fputs("<div class=\"row\">\n", out);
        if (!st) st = sim_classes(v, out, false);
        if (!st) st = sim_classes(v, out, true);
        fputs("</div>\n", out);
    }
    if (!st) {
        strata_html_heading(out, "topology-section", "Topology");
        st = topo_drawing(v, out);
    }
    if (!st && (v->have_plan || v->plan_skip[0])) st = plan_html(v, out);
    if (!st && ferror(out)) st = STRATA_ERR_IO;
    return st;
}
