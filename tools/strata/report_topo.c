/*
 * report_topo.c — the topology section of `strata report`: the report's
 * cluster as loaded (the same graph `strata topo show/metrics` print for the
 * spec), its device counts, hop counts, per-GPU injection and
 * oversubscription per tier, bisection bandwidth with its method, and two
 * routed paths with their bottleneck and latency: neighbours (ranks 0 and
 * 1), and across servers (rank 0 to the next index of server 1, the path
 * `strata topo show` prints) or, without servers, to the farthest rank.
 *
 * Workload: strata_topo_metrics (exact or sampled hops, bisection by the
 * builder's closed form when known) and a few routes.
 */
#include "cli_report.h"

#include <string.h>

#define PATH_MAX_HOPS 256

/* The other end of the second path, or -1 when there is none. */
static int32_t far_rank(const strata_topo_t *t, strata_topo_router_t *r)
{
    int32_t n = strata_topo_endpoint_count(t), g = strata_topo_group_count(t);
    if (g > 1) return n / g + 1 < n ? n / g + 1 : n - 1;
    if (n < 3) return -1;
    /* no servers: the farthest rank from rank 0 (first of the ties) */
    int32_t best = -1, hops = -1, src = strata_topo_endpoint(t, 0);
    for (int32_t i = 1; i < n && i < 4096; i++) {
        int32_t h = strata_topo_hops(r, src, strata_topo_endpoint(t, i));
        if (h > hops) hops = h, best = i;
    }
    return best > 1 ? best : -1;
}

typedef struct path {
    int32_t chans[PATH_MAX_HOPS], n;
    double bw, lat, count;
} path_t;

static bool route(const strata_topo_t *t, strata_topo_router_t *r, int32_t a, int32_t b, path_t *p)
{
    int32_t src = strata_topo_endpoint(t, a), dst = strata_topo_endpoint(t, b);
    if (src < 0 || dst < 0 ||
        strata_topo_path(r, src, dst, 0, p->chans, PATH_MAX_HOPS, &p->n) != STRATA_OK)
        return false;
    strata_topo_path_figures(t, p->chans, p->n, &p->bw, &p->lat);
    p->count = strata_topo_path_count(r, src, dst);
    return true;
}

static void show_path(FILE *out, const strata_topo_t *t, const path_t *p, int32_t a,
                      const char *what)
{
    char g[32], l[32];
    fprintf(out, "  %-16s %s", what, strata_topo_device(t, strata_topo_endpoint(t, a)).name);
    for (int32_t i = 0; i < p->n; i++)
        fprintf(out, " > %s", strata_topo_device(t, strata_topo_chan_dst(t, p->chans[i])).name);
    fprintf(out, "\n  %-16s %d hop%s, %.0f equal-cost path%s, bottleneck %s GB/s, latency %s\n", "",
            (int)p->n, p->n == 1 ? "" : "s", p->count, p->count == 1 ? "" : "s",
            report_gbs(p->bw, g, sizeof(g)), report_time(p->lat, l, sizeof(l)));
}

static void show_metrics(FILE *out, const strata_topo_metrics_t *m)
{
    char a[32], b[32];
    fprintf(out, "  %-16s %d GPUs, %d devices:", "graph", (int)m->endpoints, (int)m->devices);
    for (int k = 0; k < STRATA_DEV_KIND_COUNT; k++)
        if (m->count[k]) fprintf(out, " %d %s", (int)m->count[k], strata_dev_kind_str(k));
    fprintf(out, "; %d links\n", (int)m->links);
    fprintf(out, "  %-16s diameter %d, average %.4g (%s)\n", "hops", (int)m->diameter, m->avg_hops,
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

static void json_path(report_json_t *j, const char *key, const path_t *p)
{
    rj_open(j, key, '{');
    rj_int(j, "hops", p->n);
    rj_num(j, "paths", p->count);
    rj_num(j, "bottleneck_Bps", p->bw);
    rj_num(j, "latency_s", p->lat);
    rj_close(j, '}');
}

static void json_metrics(report_json_t *j, const strata_topo_t *t, const strata_topo_metrics_t *m)
{
    rj_str(j, "name", strata_topo_name(t));
    rj_int(j, "gpus", m->endpoints);
    rj_int(j, "servers", m->groups);
    rj_int(j, "devices", m->devices);
    rj_int(j, "links", m->links);
    rj_open(j, "device_counts", '{');
    for (int k = 0; k < STRATA_DEV_KIND_COUNT; k++)
        if (m->count[k]) rj_int(j, strata_dev_kind_str(k), m->count[k]);
    rj_close(j, '}');
    rj_int(j, "diameter", m->diameter);
    rj_num(j, "avg_hops", m->avg_hops);
    rj_open(j, "tiers", '[');
    for (int i = 0; i < m->tiers && i < STRATA_TOPO_TIERS_MAX; i++) {
        rj_open(j, NULL, '{');
        rj_num(j, "injection_Bps", m->injection[i]);
        rj_num(j, "oversubscription", m->oversub[i]);
        rj_close(j, '}');
    }
    rj_close(j, ']');
    rj_num(j, "bisection_Bps", m->bisection.bw);
    rj_bool(j, "bisection_exact", m->bisection.exact);
    rj_str(j, "bisection_how", m->bisection.how);
}

static void report(const report_ctx_t *ctx, const strata_topo_metrics_t *m, strata_topo_router_t *r)
{
    const strata_topo_t *t = ctx->topo;
    path_t near, far;
    int32_t b = far_rank(t, r);
    bool has_near = route(t, r, 0, 1, &near), has_far = b > 0 && route(t, r, 0, b, &far);
    const char *far_what = strata_topo_group_count(t) > 1 ? "across servers" : "farthest";
    if (ctx->json) {
        json_metrics(ctx->json, t, m);
        if (has_near) json_path(ctx->json, "path_neighbours", &near);
        if (has_far) json_path(ctx->json, "path_far", &far);
        return;
    }
    FILE *out = ctx->out;
    fprintf(out, "  %s as loaded from '%s' ('strata topo show/metrics %s' for detail)\n\n",
            strata_topo_name(t), ctx->spec, ctx->spec);
    show_metrics(out, m);
    fputc('\n', out);
    if (has_near) show_path(out, t, &near, 0, "neighbours");
    if (has_far) show_path(out, t, &far, 0, far_what);
}

static strata_status_t run(const report_ctx_t *ctx, strata_error_t *err)
{
    strata_topo_router_t *r = NULL;
    strata_topo_metrics_t m;
    strata_status_t st = strata_topo_metrics(ctx->topo, &m, err);
    if (!st) st = strata_topo_router_create(ctx->topo, &r, err);
    if (!st) report(ctx, &m, r);
    strata_topo_router_destroy(r);
    return st;
}

const report_section_t report_topo_section = {
    .name = "topology",
    .title = "Topology",
    .run = run,
};
