/*
 * show.c — a topology and its metrics as text for people and JSON for
 * programs (`strata topo show|metrics [--json]`).
 *
 * Links are summarised by class (kind, multiplicity, bandwidth, tier) so a
 * 16k-GPU cluster prints a handful of lines. A few sample routes follow —
 * path 0 of the router's equal-cost set, hop by hop over the channels it
 * returns, so what is printed is what the simulator charges: inside a
 * server, and to the next server at the same and the next local index
 * (same rail / other rail on a rail-optimised fabric). Bandwidths print as GB/s =
 * 1e9 B/s per direction (DESIGN.md, "Units").
 */
#define _POSIX_C_SOURCE 200809L
#include "topo.h"

#include <string.h>

typedef struct link_class {
    const char *kind;
    int32_t mult, tier;
    double bw;
    int64_t n;
} link_class_t;

#define MAX_CLASSES 64

/* Distinct link classes in order of first appearance (at most
 * MAX_CLASSES; the rest are folded into the last). */
static int classify(const strata_topo_t *t, link_class_t *c)
{
    int n = 0;
    for (int32_t l = 0; l < t->nlink; l++) {
        const topo_link_rec_t *k = &t->links[l];
        int i = 0;
        while (i < n && !(strcmp(c[i].kind, k->kind) == 0 && c[i].mult == k->mult &&
                          c[i].tier == k->tier && c[i].bw == k->bw_dir))
            i++;
        if (i == n && n < MAX_CLASSES)
            c[n++] = (link_class_t){k->kind, k->mult, k->tier, k->bw_dir, 0};
        c[i < n ? i : n - 1].n++;
    }
    return n;
}

/* ==== Sample routes ==== */

/* Endpoint pairs whose routes show the routing policy: inside a server,
 * and from server 0 to server 1 at the same and at the next local index
 * (on a rail-optimised fabric: same rail, other rail); without servers,
 * first to last endpoint. */
typedef struct sample {
    const char *what;
    int32_t a, b; /* ranks */
} sample_t;

static int samples(const strata_topo_t *t, sample_t *s)
{
    int n = 0;
    int32_t G = t->ngroups > 0 && t->nep % t->ngroups == 0 ? t->nep / t->ngroups : 0;
    if (t->nep < 2) return 0;
    if (G == 0 || t->group[t->ep[0]] < 0) {
        s[n++] = (sample_t){"first to last", 0, t->nep - 1};
        return n;
    }
    bool next = t->ngroups >= 2 && t->group[t->ep[G]] == 1;
    if (G >= 2 && t->group[t->ep[1]] == 0) s[n++] = (sample_t){"in server", 0, 1};
    if (next) s[n++] = (sample_t){"across, same index", 0, G};
    if (next && G >= 2 && t->group[t->ep[G + 1]] == 1)
        s[n++] = (sample_t){"across, next index", 0, G + 1};
    return n;
}

typedef struct route {
    int32_t src, dst, hops;
    double paths, bw;
    int32_t *chans; /* path 0 of the equal-cost set */
} route_t;

static int route_get(strata_topo_router_t *r, const strata_topo_t *t, const sample_t *s,
                     route_t *out)
{
    out->src = t->ep[s->a], out->dst = t->ep[s->b];
    out->hops = strata_topo_hops(r, out->src, out->dst);
    out->paths = strata_topo_path_count(r, out->src, out->dst);
    out->chans = util_malloc(((size_t)(out->hops > 0 ? out->hops : 0) + 1) * sizeof(int32_t));
    int32_t n;
    if (out->hops < 0 || !out->chans ||
        strata_topo_path(r, out->src, out->dst, 0, out->chans, out->hops, &n) != STRATA_OK) {
        util_free(out->chans);
        return -1;
    }
    double lat;
    strata_topo_path_figures(t, out->chans, n, &out->bw, &lat);
    return 0;
}

static void route_print(const strata_topo_t *t, const char *what, const route_t *rt, FILE *out)
{
    fprintf(out, "  %-19s %s", what, t->dname[rt->src]);
    for (int32_t i = 0; i < rt->hops; i++) {
        int32_t d = strata_topo_chan_dst(t, rt->chans[i]);
        fprintf(out, " > %s", t->dname[d]);
        if (t->tier[d] > 0) fprintf(out, "[t%d]", (int)t->tier[d]);
    }
    fprintf(out, "\n  %-19s %d hop%s, %.4g equal-cost path%s, bottleneck %.4g GB/s\n", "",
            (int)rt->hops, rt->hops == 1 ? "" : "s", rt->paths, rt->paths == 1 ? "" : "s",
            rt->bw / 1e9);
}

static json_t *route_json(const strata_topo_t *t, const char *what, const route_t *rt)
{
    json_t *o = json_object(), *devs = json_array();
    json_object_set_new(o, "what", json_string(what));
    json_array_append_new(devs, json_string(t->dname[rt->src]));
    for (int32_t i = 0; i < rt->hops; i++)
        json_array_append_new(devs, json_string(t->dname[strata_topo_chan_dst(t, rt->chans[i])]));
    json_object_set_new(o, "devices", devs);
    json_object_set_new(o, "hops", json_integer(rt->hops));
    json_object_set_new(o, "paths", util_json_real(rt->paths));
    json_object_set_new(o, "bw_dir_Bps", util_json_real(rt->bw));
    return o;
}

/* Sample routes as text lines (out) or into a JSON array (arr). */
static strata_status_t routes(const strata_topo_t *t, FILE *out, json_t *arr, strata_error_t *err)
{
    sample_t s[3];
    int n = samples(t, s);
    if (n == 0) return STRATA_OK;
    strata_topo_router_t *r;
    strata_status_t st = strata_topo_router_create(t, &r, err);
    if (st) return st;
    if (out) fprintf(out, "routes     path 0 of each equal-cost set; [tN] = switch tier\n");
    for (int i = 0; i < n; i++) {
        route_t rt;
        if (route_get(r, t, &s[i], &rt)) continue;
        if (out) route_print(t, s[i].what, &rt, out);
        if (arr) json_array_append_new(arr, route_json(t, s[i].what, &rt));
        util_free(rt.chans);
    }
    strata_topo_router_destroy(r);
    return STRATA_OK;
}

static json_t *topo_json(const strata_topo_t *t)
{
    json_t *o = json_object(), *kinds = json_object(), *links = json_array();
    json_object_set_new(o, "schema_version", json_integer(STRATA_JSON_SCHEMA_VERSION));
    json_object_set_new(o, "name", json_string(t->name));
    json_object_set_new(o, "devices", json_integer(t->ndev));
    int32_t cnt[STRATA_DEV_KIND_COUNT];
    topo_kind_counts(t, cnt);
    for (int k = 0; k < STRATA_DEV_KIND_COUNT; k++)
        if (cnt[k]) json_object_set_new(kinds, strata_dev_kind_str(k), json_integer(cnt[k]));
    json_object_set_new(o, "device_kinds", kinds);
    json_object_set_new(o, "endpoints", json_integer(t->nep));
    json_object_set_new(o, "servers", json_integer(t->ngroups));
    json_object_set_new(o, "tiers", json_integer(t->max_tier + 1));
    json_object_set_new(o, "links", json_integer(t->nlink));
    link_class_t c[MAX_CLASSES];
    int nc = classify(t, c);
    for (int i = 0; i < nc; i++) {
        json_t *e = json_object();
        json_object_set_new(e, "kind", json_string(c[i].kind));
        json_object_set_new(e, "mult", json_integer(c[i].mult));
        json_object_set_new(e, "tier", json_integer(c[i].tier));
        json_object_set_new(e, "bw_dir_Bps", util_json_real(c[i].bw));
        json_object_set_new(e, "count", json_integer(c[i].n));
        json_array_append_new(links, e);
    }
    json_object_set_new(o, "link_classes", links);
    json_t *r = json_array();
    json_object_set_new(o, "routes", r);
    routes(t, NULL, r, NULL);
    return o;
}

strata_status_t strata_topo_print(const strata_topo_t *t, bool json, FILE *out, strata_error_t *err)
{
    if (json) {
        json_t *o = topo_json(t);
        int rc = o ? util_json_dump(o, out) : -1;
        json_decref(o);
        return rc ? strata_error_set(err, STRATA_ERR_IO, "cannot write JSON") : STRATA_OK;
    }
    int32_t cnt[STRATA_DEV_KIND_COUNT];
    topo_kind_counts(t, cnt);
    fprintf(out, "topology   %s\n", t->name);
    fprintf(out, "devices    %d:", (int)t->ndev);
    for (int k = 0; k < STRATA_DEV_KIND_COUNT; k++)
        if (cnt[k]) fprintf(out, " %s %d", strata_dev_kind_str(k), (int)cnt[k]);
    fprintf(out, "\nendpoints  %d (ranks in device order)\nservers    %d\ntiers      %d\n",
            (int)t->nep, (int)t->ngroups, (int)t->max_tier + 1);
    fprintf(out, "links      %d\n", (int)t->nlink);
    link_class_t c[MAX_CLASSES];
    int nc = classify(t, c);
    for (int i = 0; i < nc; i++)
        fprintf(out, "  %8lld x %s x%d  %.4g GB/s per direction  tier %d\n", (long long)c[i].n,
                c[i].kind, (int)c[i].mult, c[i].bw / 1e9, (int)c[i].tier);
    strata_status_t st = routes(t, out, NULL, err);
    if (st) return st;
    return ferror(out) ? strata_error_set(err, STRATA_ERR_IO, "write failed") : STRATA_OK;
}

/* ==== Metrics ==== */

static json_t *metrics_json(const strata_topo_metrics_t *m)
{
    json_t *o = json_object(), *kinds = json_object(), *inj = json_array(), *ov = json_array();
    json_object_set_new(o, "schema_version", json_integer(STRATA_JSON_SCHEMA_VERSION));
    json_object_set_new(o, "devices", json_integer(m->devices));
    for (int k = 0; k < STRATA_DEV_KIND_COUNT; k++)
        if (m->count[k])
            json_object_set_new(kinds, strata_dev_kind_str(k), json_integer(m->count[k]));
    json_object_set_new(o, "device_kinds", kinds);
    json_object_set_new(o, "links", json_integer(m->links));
    json_object_set_new(o, "endpoints", json_integer(m->endpoints));
    json_object_set_new(o, "servers", json_integer(m->groups));
    json_object_set_new(o, "tiers", json_integer(m->tiers));
    json_object_set_new(o, "diameter_hops", json_integer(m->diameter));
    json_object_set_new(o, "avg_hops", util_json_real(m->avg_hops));
    json_object_set_new(o, "hops_exact", json_boolean(m->hops_exact));
    json_object_set_new(o, "hops_method", json_string(m->hops_how));
    for (int i = 0; i < m->tiers && i < STRATA_TOPO_TIERS_MAX; i++) {
        json_array_append_new(inj, util_json_real(m->injection[i]));
        json_array_append_new(ov, util_json_real(m->oversub[i]));
    }
    json_object_set_new(o, "injection_per_tier_Bps", inj);
    json_object_set_new(o, "oversubscription_per_tier", ov);
    json_t *b = json_object();
    json_object_set_new(b, "bw_dir_Bps", util_json_real(m->bisection.bw));
    json_object_set_new(b, "exact", json_boolean(m->bisection.exact));
    json_object_set_new(b, "method", json_string(m->bisection.how));
    json_object_set_new(o, "bisection", b);
    return o;
}

strata_status_t strata_topo_metrics_print(const strata_topo_metrics_t *m, bool json, FILE *out,
                                          strata_error_t *err)
{
    if (json) {
        json_t *o = metrics_json(m);
        int rc = o ? util_json_dump(o, out) : -1;
        json_decref(o);
        return rc ? strata_error_set(err, STRATA_ERR_IO, "cannot write JSON") : STRATA_OK;
    }
    fprintf(out, "endpoints         %d\ndevices           %d:", (int)m->endpoints, (int)m->devices);
    for (int k = 0; k < STRATA_DEV_KIND_COUNT; k++)
        if (m->count[k]) fprintf(out, " %s %d", strata_dev_kind_str(k), (int)m->count[k]);
    fprintf(out, "\nlinks             %d\nservers           %d\n", (int)m->links, (int)m->groups);
    fprintf(out, "diameter          %d hops\naverage hops      %.4g (%s)\n", (int)m->diameter,
            m->avg_hops, m->hops_how);
    fprintf(out, "injection/%-7s (GB/s per direction)\n",
            m->count[STRATA_DEV_ACCEL] || !m->count[STRATA_DEV_CPU] ? "accel" : "cpu");
    for (int i = 0; i < m->tiers && i < STRATA_TOPO_TIERS_MAX; i++) {
        fprintf(out, "  tier %d          %.4g", i, m->injection[i] / 1e9);
        if (m->oversub[i] > 0) fprintf(out, "   oversubscription %.4g:1", m->oversub[i]);
        fputc('\n', out);
    }
    fprintf(out, "bisection         %.4g GB/s per direction%s\n  method          %s\n",
            m->bisection.bw / 1e9, m->bisection.exact ? "" : " (upper bound)", m->bisection.how);
    return ferror(out) ? strata_error_set(err, STRATA_ERR_IO, "write failed") : STRATA_OK;
}
