/*
 * report_topo.c — the topology section of `strata report`: the report's
 * cluster built as a graph (servers joined by a rail-optimised fat-tree),
 * its device counts, hop counts, per-GPU injection and oversubscription per
 * tier, bisection bandwidth with its method, and one routed path inside and
 * one across servers with their bottleneck and latency.
 *
 * Modelling choices, stated in the output: the scale-up switch chips of a
 * server are one fabric that each GPU reaches with all its scale-up links
 * (the catalog's links per device); each GPU reaches its own NIC over one
 * host link (PCIe switches are not modelled); the fat-tree uses radix-64
 * switches (NVIDIA Quantum-2: 64 × 400G ports, links.md NDR row).
 */
#include "cli_report.h"

#include <string.h>

#define REPORT_RADIX 64 /* Quantum-2 NDR switch: 64 ports (links.md, InfiniBand NDR) */

static strata_status_t build(const report_ctx_t *ctx, strata_topo_t **t_p, strata_error_t *err)
{
    const report_cluster_t *cl = ctx->cluster;
    const strata_link_t *up = strata_link_find(ctx->links, cl->scale_up);
    if (!up)
        return strata_error_set(err, STRATA_ERR_NOT_FOUND, "catalog lacks link '%s'", cl->scale_up);
    strata_topo_server_t sv = {
        .name = cl->name,
        .accels = cl->gpus_per_node,
        .scaleup_switches = cl->scale_up_switch[0] ? 1 : 0,
        .scaleup = strata_topo_linkspec_kind(cl->scale_up, cl->scale_up_switch[0] ? up->links : 1),
        .nics = cl->nics_per_node,
        .pcie = strata_topo_linkspec_kind(cl->host_link, 1),
        .nic_net = strata_topo_linkspec_kind(cl->nic, 1),
    };
    /* the fewest tiers that hold the NICs: one switch, leaf-spine, or three */
    int32_t h = REPORT_RADIX / 2;
    int64_t nics = (int64_t)cl->nodes * cl->nics_per_node;
    int64_t leaves = (int64_t)(cl->nodes + h - 1) / h * cl->nics_per_node;
    strata_topo_fattree_t net = {.k = REPORT_RADIX};
    net.tiers = cl->nodes == 1 ? 0 : nics <= REPORT_RADIX ? 1 : leaves <= REPORT_RADIX ? 2 : 3;
    return strata_topo_build_cluster(&sv, cl->nodes, &net, true, ctx->links, t_p, err);
}

/* One routed path between endpoint ranks a and b. */
static void show_path(FILE *out, const strata_topo_t *t, strata_topo_router_t *r, int32_t a,
                      int32_t b, const char *what)
{
    int32_t ch[64], n;
    int32_t src = strata_topo_endpoint(t, a), dst = strata_topo_endpoint(t, b);
    if (src < 0 || dst < 0 || strata_topo_path(r, src, dst, 0, ch, 64, &n) != STRATA_OK) return;
    double bw, lat;
    char g[32], l[32];
    strata_topo_path_figures(t, ch, n, &bw, &lat);
    fprintf(out, "  %-16s %s", what, strata_topo_device(t, src).name);
    for (int32_t i = 0; i < n; i++)
        fprintf(out, " > %s", strata_topo_device(t, strata_topo_chan_dst(t, ch[i])).name);
    double paths = strata_topo_path_count(r, src, dst);
    fprintf(out, "\n  %-16s %d hops, %.0f equal-cost path%s, bottleneck %s GB/s, latency %s\n", "",
            (int)n, paths, paths == 1 ? "" : "s", report_gbs(bw, g, sizeof(g)),
            report_time(lat, l, sizeof(l)));
}

static void show_metrics(FILE *out, const strata_topo_metrics_t *m)
{
    char a[32], b[32];
    fprintf(out, "  %-16s %d GPUs, %d devices:", "graph", (int)m->endpoints, (int)m->devices);
    for (int k = 0; k < STRATA_DEV_KIND_COUNT; k++)
        if (m->count[k]) fprintf(out, " %d %s", (int)m->count[k], strata_dev_kind_str(k));
    fprintf(out, "; %d links\n", (int)m->links);
    fprintf(out, "  %-16s diameter %d, average %.3g (%s)\n", "hops", (int)m->diameter, m->avg_hops,
            m->hops_how);
    for (int i = 0; i < m->tiers && i < STRATA_TOPO_TIERS_MAX; i++) {
        fprintf(out, "  tier %d %-9s  %s GB/s per GPU", i, i == 0 ? "scale-up" : "network",
                report_gbs(m->injection[i], a, sizeof(a)));
        if (m->oversub[i] > 0) fprintf(out, ", oversubscription %.3g:1", m->oversub[i]);
        fputc('\n', out);
    }
    fprintf(out, "  %-16s %s GB/s%s = %s GB/s per GPU of a half\n", "bisection",
            report_gbs(m->bisection.bw, a, sizeof(a)), m->bisection.exact ? "" : " (upper bound)",
            report_gbs(m->endpoints > 1 ? m->bisection.bw / (m->endpoints / 2) : 0, b, sizeof(b)));
    fprintf(out, "  %-16s %s\n", "", m->bisection.how);
}

static strata_status_t run(const report_ctx_t *ctx, strata_error_t *err)
{
    strata_topo_t *t = NULL;
    strata_topo_router_t *r = NULL;
    strata_topo_metrics_t m;
    strata_status_t st = build(ctx, &t, err);
    if (!st) st = strata_topo_metrics(t, &m, err);
    if (!st) st = strata_topo_router_create(t, &r, err);
    if (st) {
        strata_topo_destroy(t);
        return st;
    }
    FILE *out = ctx->out;
    const report_cluster_t *cl = ctx->cluster;
    fprintf(out,
            "  %s: %d servers; scale-up switches as one fabric, GPU-NIC over %s,\n"
            "  fat-tree of %d-port switches, rail-optimised when it has leaves\n\n",
            strata_topo_name(t), cl->nodes, cl->host_link, REPORT_RADIX);
    show_metrics(out, &m);
    fputc('\n', out);
    show_path(out, t, r, 0, 1, "in a server");
    if (cl->nodes > 1) show_path(out, t, r, 0, cl->gpus_per_node + 1, "across servers");
    strata_topo_router_destroy(r);
    strata_topo_destroy(t);
    return STRATA_OK;
}

const report_section_t report_topo_section = {
    .name = "topology",
    .title = "Topology",
    .run = run,
};
