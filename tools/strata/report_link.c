/*
 * report_link.c — the physical and data-link section of `strata report`:
 * every kind of link the cluster's topology holds, grouped by tier of the
 * stack (scale-up, host/PCIe, scale-out network), per accelerator and per
 * direction, and what the tiers imply: the scale-up/scale-out cliff, the
 * PCIe path in front of each NIC, the credits a scale-out cable needs, the
 * latency/bandwidth crossover and, where the scale-up generation names the
 * accelerator's memory, the reduction ceiling.
 *
 * Nothing is typed in: the rows are the topology's links, classified by the
 * kinds of device at their two ends; per-link figures are the topology's
 * (catalog-derived, or explicit for custom links); the data-link models
 * (credits) take the catalog entry of the network link's kind. Workload: one
 * pass over the links (8,704 for dgx-h100:128), a handful of rows.
 */
#include "cli_report.h"

#include <string.h>

/* Cable length for the credit figure: the default `strata link` uses for
 * network ports (cmd_link.c, --length: 30 m), so the two agree. */
#define REPORT_CABLE_M 30.0

typedef enum { CLS_UP, CLS_HOST, CLS_NET, CLS_COUNT } cls_t;
static const char *const cls_name[CLS_COUNT] = {"scale-up", "host/PCIe", "scale-out"};

/* One row: the links of one tier, kind and pair of device roles. */
typedef struct row {
    cls_t cls;
    const char *kind;
    char between[48];
    double links;  /* Σ multiplicity, twice for accelerator-accelerator links */
    double bw;     /* Σ bw_dir, B/s, counted as links is */
    double per;    /* bw_dir of one link (the lowest seen) */
    double lat;    /* one hop, s */
    int32_t count; /* topology links */
} row_t;

#define MAX_ROWS 24

static bool is_up_dev(strata_dev_kind_t k)
{
    return k == STRATA_DEV_ACCEL || k == STRATA_DEV_SCALEUP_SWITCH;
}

static cls_t classify(const strata_topo_device_t *a, const strata_topo_device_t *b)
{
    if (a->kind == STRATA_DEV_NET_SWITCH || b->kind == STRATA_DEV_NET_SWITCH) return CLS_NET;
    if (is_up_dev(a->kind) && is_up_dev(b->kind)) return CLS_UP;
    return CLS_HOST;
}

/* Role of a device in a row label (short: gpu, upsw, pcisw, cpu, nic);
 * network switches by tier. */
static const char *role(const strata_topo_device_t *d)
{
    static const char *const sw[] = {"switch", "leaf", "spine", "core"};
    if (d->kind == STRATA_DEV_NET_SWITCH) return sw[d->tier >= 0 && d->tier < 4 ? d->tier : 0];
    if (d->kind == STRATA_DEV_SCALEUP_SWITCH) return "upsw";
    if (d->kind == STRATA_DEV_PCIE_SWITCH) return "pcisw";
    if (d->kind == STRATA_DEV_ACCEL) return "gpu";
    return strata_dev_kind_str(d->kind);
}

static row_t *find_row(row_t *rows, int *n, cls_t c, const char *kind, const char *between)
{
    for (int i = 0; i < *n; i++)
        if (rows[i].cls == c && strcmp(rows[i].kind, kind) == 0 &&
            strcmp(rows[i].between, between) == 0)
            return &rows[i];
    if (*n == MAX_ROWS) return NULL;
    row_t *r = &rows[(*n)++];
    memset(r, 0, sizeof(*r));
    r->cls = c;
    r->kind = kind;
    snprintf(r->between, sizeof(r->between), "%s", between);
    return r;
}

/* Lower device-kind order first, so "accel-nic" never reads "nic-accel". */
static void label(const strata_topo_device_t *a, const strata_topo_device_t *b, char *buf,
                  size_t len)
{
    bool swap = a->kind > b->kind || (a->kind == b->kind && a->tier > b->tier);
    snprintf(buf, len, "%s-%s", role(swap ? b : a), role(swap ? a : b));
}

static int collect(const strata_topo_t *t, row_t *rows)
{
    int n = 0;
    for (int32_t i = 0; i < strata_topo_link_count(t); i++) {
        strata_topo_link_t l = strata_topo_link(t, i);
        strata_topo_device_t a = strata_topo_device(t, l.a), b = strata_topo_device(t, l.b);
        char between[48];
        label(&a, &b, between, sizeof(between));
        row_t *r = find_row(rows, &n, classify(&a, &b), l.kind, between);
        if (!r) continue; /* more than MAX_ROWS kinds: the rest are not listed */
        double per = l.bw_dir / (l.mult > 0 ? l.mult : 1);
        /* a link between two accelerators is a link of each */
        int w = (a.kind == STRATA_DEV_ACCEL) + (b.kind == STRATA_DEV_ACCEL);
        w = w > 0 ? w : 1;
        if (r->count == 0 || per < r->per) r->per = per;
        r->links += (double)w * l.mult;
        r->bw += w * l.bw_dir;
        r->lat = l.latency;
        r->count++;
    }
    return n;
}

/* ==== Per-accelerator tier figures (shared with the bottleneck summary) ==== */

/* The library's tiers (strata_verdict_tiers), in the section's shape. */
void report_link_tiers(const strata_topo_t *t, report_tiers_t *out)
{
    strata_verdict_tiers_t v;
    strata_verdict_tiers(t, &v);
    report_tiers_t r;
    memset(&r, 0, sizeof(r));
    r.up = v.bw[STRATA_TIER_UP], r.host = v.bw[STRATA_TIER_HOST], r.net = v.bw[STRATA_TIER_NET];
    snprintf(r.up_kind, sizeof(r.up_kind), "%s", v.kind[STRATA_TIER_UP]);
    snprintf(r.host_kind, sizeof(r.host_kind), "%s", v.kind[STRATA_TIER_HOST]);
    snprintf(r.net_kind, sizeof(r.net_kind), "%s", v.kind[STRATA_TIER_NET]);
    *out = r;
}

/* ==== Text ==== */

static void print_rows(FILE *out, const row_t *rows, int n, double nep, double ref)
{
    char a[32], b[32], c[32], d[32];
    fprintf(out, "  %-10s %-11s %-16s %9s %9s %9s %9s %9s %8s\n", "tier", "link", "between",
            "per link", "links/GPU", "per GPU", "bidi", "latency", "vs s-up");
    for (int k = 0; k < CLS_COUNT; k++)
        for (int i = 0; i < n; i++) {
            const row_t *r = &rows[i];
            if (r->cls != (cls_t)k) continue;
            fprintf(out, "  %-10s %-11s %-16s %9s %9.3g %9s %9s %9s", cls_name[k], r->kind,
                    r->between, report_gbs(r->per, a, 32), r->links / nep,
                    report_gbs(r->bw / nep, b, 32), report_gbs(2 * r->bw / nep, c, 32),
                    report_time(r->lat, d, 32));
            if (ref > 0)
                fprintf(out, " %7.3gx\n", r->bw / nep / ref);
            else
                fprintf(out, " %8s\n", "-");
        }
}

static void finding_cliff(FILE *out, const report_tiers_t *t, int32_t nep)
{
    char a[32], b[32];
    if (t->up > 0 && t->net > 0)
        fprintf(out,
                "  - scale-up/scale-out cliff: %s / %s GB/s = %.3gx per GPU; keep tensor and\n"
                "    expert parallel traffic on %s inside a server, data parallel across.\n",
                report_gbs(t->up, a, 32), report_gbs(t->net, b, 32), t->up / t->net, t->up_kind);
    else if (t->up > 0)
        fprintf(out,
                "  - no scale-out network: all %d accelerators share one %s fabric\n"
                "    (%s GB/s per GPU); the cliff is the fabric's own bisection (topology).\n",
                (int)nep, t->up_kind, report_gbs(t->up, a, 32));
    else if (t->host > 0 && t->net > 0)
        fprintf(out,
                "  - no scale-up fabric: GPUs meet over %s (%s GB/s per GPU), %.3gx the\n"
                "    network's %s GB/s per GPU; every collective pays PCIe.\n",
                t->host_kind, report_gbs(t->host, a, 32), t->host / t->net,
                report_gbs(t->net, b, 32));
    else
        fprintf(out, "  - no scale-up fabric and %s network: the host links carry everything.\n",
                t->net > 0 ? "a" : "no");
}

/* The host link in front of the NIC vs the NIC's network port, from the
 * rows (host rows touching a NIC; scale-out rows leaving one). */
static void finding_nic(FILE *out, const row_t *rows, int n)
{
    const row_t *host = NULL, *port = NULL;
    for (int i = 0; i < n; i++) {
        bool nic = strstr(rows[i].between, "nic") != NULL;
        if (nic && rows[i].cls == CLS_HOST && !host) host = &rows[i];
        if (nic && rows[i].cls == CLS_NET && !port) port = &rows[i];
    }
    if (!host || !port) return;
    char a[32], b[32];
    fprintf(out, "  - each NIC sits behind %s (%s GB/s per link) %s one %s port (%s GB/s).\n",
            host->kind, report_gbs(host->per, a, 32),
            host->per >= port->per ? ">=" : "< (PCIe-bound!)", port->kind,
            report_gbs(port->per, b, 32));
}

/* Ethernet has no link-level credits: it drops unless PFC pauses
 * (same test as `strata link`, cmd_link.c is_ethernet). */
static bool is_ethernet(const strata_link_t *l)
{
    return !strcmp(l->category, "Ethernet") || !strcmp(l->category, "RoCEv2") ||
           !strcmp(l->category, "Gaudi");
}

/* The catalog entry of the network link, when it has data-link figures. */
static const strata_link_t *net_link(const report_ctx_t *ctx, const char *kind)
{
    const strata_link_t *l = kind[0] ? strata_link_find(ctx->links, kind) : NULL;
    return l && l->line_dir > 0 && l->wire > 0 ? l : NULL;
}

static void finding_credits(FILE *out, const report_ctx_t *ctx, const char *kind)
{
    const strata_link_t *l = net_link(ctx, kind);
    if (!l) return;
    char a[32];
    if (is_ethernet(l)) {
        fprintf(out,
                "  - lossless Ethernet: %s over %g m needs %.0f B of PFC headroom per priority\n"
                "    (rate x (cable + response) + 2 frames); without PFC, loss means go-back-N.\n",
                l->id, REPORT_CABLE_M, strata_pfc_headroom(l->line_dir, REPORT_CABLE_M, l->wire));
        return;
    }
    double rtt = strata_link_rtt(l->line_dir, REPORT_CABLE_M, l->wire);
    fprintf(out,
            "  - credits: %s over %g m has a %s link round trip; running at line rate needs\n"
            "    %.0f B of receive buffer per virtual lane (rate x RTT).\n",
            l->id, REPORT_CABLE_M, report_time(rtt, a, 32), strata_credit_buffer(l->line_dir, rtt));
}

/* Latency x per-GPU bandwidth of the widest row of a tier. */
static double crossover(const row_t *rows, int n, cls_t c, double per_gpu)
{
    double lat = 0, best = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].cls == c && rows[i].bw > best) best = rows[i].bw, lat = rows[i].lat;
    return lat * per_gpu;
}

static void finding_alpha_beta(FILE *out, const row_t *rows, int n, const report_tiers_t *t)
{
    double up = crossover(rows, n, CLS_UP, t->up), net = crossover(rows, n, CLS_NET, t->net);
    if (up <= 0 && net <= 0) return;
    fprintf(out, "  - alpha-beta crossover (latency x bandwidth):");
    if (up > 0) fprintf(out, " %s %.0f KB%s", t->up_kind, up / 1e3, net > 0 ? "," : "");
    if (net > 0) fprintf(out, " %s %.0f KB", t->net_kind, net / 1e3);
    fprintf(out, ";\n    smaller messages are latency-bound.\n");
}

static void finding_memory(FILE *out, const strata_coll_machine_t *m, const report_tiers_t *t)
{
    char a[32];
    if (m->reduce_bw <= 0) {
        fprintf(
            out,
            "  - memory: no ceiling shown: the cluster records no accelerator memory and its\n  "
            "  in-server link maps to no HBM entry of the catalog (as in 'strata coll').\n");
        return;
    }
    fprintf(out,
            "  - memory ceiling: a GPU sums incoming data at %s GB/s (%s, %s;\n"
            "    bandwidth / 3 passes, as 'strata coll' models it)",
            report_gbs(m->reduce_bw, a, 32), m->memory_kind, strata_coll_memory_source(m));
    if (t->up > 0) fprintf(out, ", %.3gx its scale-up", m->reduce_bw / t->up);
    fprintf(out, ".\n");
}

/* ==== JSON ==== */

static void json_rows(report_json_t *j, const row_t *rows, int n, double nep)
{
    rj_open(j, "rows", '[');
    for (int k = 0; k < CLS_COUNT; k++)
        for (int i = 0; i < n; i++) {
            const row_t *r = &rows[i];
            if (r->cls != (cls_t)k) continue;
            rj_open(j, NULL, '{');
            rj_str(j, "tier", cls_name[k]);
            rj_str(j, "link", r->kind);
            rj_str(j, "between", r->between);
            rj_int(j, "count", r->count);
            rj_num(j, "per_link_Bps", r->per);
            rj_num(j, "links_per_gpu", r->links / nep);
            rj_num(j, "per_gpu_Bps", r->bw / nep);
            rj_num(j, "latency_s", r->lat);
            rj_close(j, '}');
        }
    rj_close(j, ']');
}

/* The data-link figure of the network link: PFC headroom or credits. */
static void json_datalink(const report_ctx_t *ctx, const report_tiers_t *t)
{
    report_json_t *j = ctx->json;
    const strata_link_t *l = net_link(ctx, t->net_kind);
    if (l && is_ethernet(l)) {
        rj_open(j, "pfc", '{');
        rj_str(j, "link", l->id);
        rj_num(j, "cable_m", REPORT_CABLE_M);
        rj_num(j, "headroom_B", strata_pfc_headroom(l->line_dir, REPORT_CABLE_M, l->wire));
        rj_close(j, '}');
    } else if (l) {
        double rtt = strata_link_rtt(l->line_dir, REPORT_CABLE_M, l->wire);
        rj_open(j, "credits", '{');
        rj_str(j, "link", l->id);
        rj_num(j, "cable_m", REPORT_CABLE_M);
        rj_num(j, "rtt_s", rtt);
        rj_num(j, "buffer_B", strata_credit_buffer(l->line_dir, rtt));
        rj_close(j, '}');
    }
}

static void json_tiers(const report_ctx_t *ctx, const row_t *rows, int n, const report_tiers_t *t,
                       const strata_coll_machine_t *m)
{
    report_json_t *j = ctx->json;
    rj_open(j, "per_gpu_Bps", '{');
    rj_num(j, "scale_up", t->up);
    rj_num(j, "host", t->host);
    rj_num(j, "scale_out", t->net);
    rj_close(j, '}');
    rj_num(j, "cliff", t->up > 0 && t->net > 0 ? t->up / t->net : 0);
    rj_num(j, "reduce_Bps", m->reduce_bw);
    rj_str(j, "memory", m->memory_kind);
    rj_str(j, "memory_source", strata_coll_memory_source(m));
    rj_num(j, "crossover_scale_up_B", crossover(rows, n, CLS_UP, t->up));
    rj_num(j, "crossover_scale_out_B", crossover(rows, n, CLS_NET, t->net));
    json_datalink(ctx, t);
}

static strata_status_t run(const report_ctx_t *ctx, strata_error_t *err)
{
    row_t rows[MAX_ROWS];
    report_tiers_t t;
    strata_coll_machine_t m;
    int n = collect(ctx->topo, rows);
    report_link_tiers(ctx->topo, &t);
    if (strata_coll_machine_from_topo(ctx->topo, ctx->links, &m, err) != STRATA_OK)
        return err->status;
    double nep = strata_topo_endpoint_count(ctx->topo);
    if (ctx->json) {
        json_rows(ctx->json, rows, n, nep);
        json_tiers(ctx, rows, n, &t, &m);
        return STRATA_OK;
    }
    FILE *out = ctx->out;
    fprintf(out, "  every link kind in the topology, per GPU and per direction (GB/s);\n"
                 "  'vs s-up' = per-GPU figure / the scale-up tier's\n\n");
    print_rows(out, rows, n, nep, t.up);
    fprintf(out, "\n  findings\n");
    finding_cliff(out, &t, (int32_t)nep);
    finding_nic(out, rows, n);
    if (t.net_kind[0]) finding_credits(out, ctx, t.net_kind);
    finding_alpha_beta(out, rows, n, &t);
    finding_memory(out, &m, &t);
    return STRATA_OK;
}

const report_section_t report_link_section = {
    .name = "links",
    .title = "Physical and data-link layers",
    .run = run,
};
