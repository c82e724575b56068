/*
 * report_link.c — the physical and data-link section of `strata report`:
 * every link tier of the cluster's GPU (memory, scale-up, host, scale-out,
 * host memory) per GPU and per direction, and what the tiers imply: the
 * scale-up/scale-out cliff, switch blocking, the PCIe path of the NIC, the
 * credits a scale-out cable needs, and the latency/bandwidth crossover.
 * Every figure comes from the catalog's derivation; nothing typed in here.
 */
#include "cli_report.h"

#include <string.h>

typedef struct tier {
    const char *what;
    const strata_link_t *l;
    double per_gpu; /* links of this kind per GPU */
} tier_t;

static strata_status_t need(const report_ctx_t *ctx, const char *id, const strata_link_t **l_p,
                            strata_error_t *err)
{
    *l_p = strata_link_find(ctx->links, id);
    if (*l_p == NULL)
        return strata_error_set(err, STRATA_ERR_NOT_FOUND,
                                "cluster %s uses link '%s', which the catalog lacks",
                                ctx->cluster->name, id);
    return STRATA_OK;
}

static void print_tier(FILE *out, const tier_t *t, double ref)
{
    char a[32], b[32], c[32], d[32];
    double per = t->per_gpu * t->l->bw_dir;
    fprintf(out, "  %-16s %-11s %9s %9.3g %11s %10s %9s %8.3gx\n", t->what, t->l->id,
            report_gbs(t->l->bw_dir, a, sizeof(a)), t->per_gpu, report_gbs(per, b, sizeof(b)),
            t->l->full_duplex ? report_gbs(2 * per, c, sizeof(c)) : "shared",
            report_time(t->l->latency, d, sizeof(d)), per / ref);
}

static void print_findings(const report_ctx_t *ctx, const tier_t *t)
{
    const report_cluster_t *cl = ctx->cluster;
    FILE *out = ctx->out;
    char a[32], b[32], c[32];
    const strata_link_t *up = t[1].l, *host = t[2].l, *nic = t[3].l;
    double up_gpu = t[1].per_gpu * up->bw_dir, nic_gpu = t[3].per_gpu * nic->bw_dir;
    fprintf(out, "\n  findings\n");
    fprintf(out,
            "  - scale-up/scale-out cliff: %s / %s GB/s = %.1fx per GPU; keep tensor and expert\n"
            "    parallel traffic on %s inside a server, data parallel across servers.\n",
            report_gbs(up_gpu, a, 32), report_gbs(nic_gpu, b, 32), up_gpu / nic_gpu, up->id);
    const strata_link_t *sw = strata_link_find(ctx->links, cl->scale_up_switch);
    if (sw) {
        double cap = cl->switches_per_node * sw->device_bw_dir, dem = cl->gpus_per_node * up_gpu;
        fprintf(out, "  - %d x %s = %s GB/s switching vs %d GPUs x %s = %s GB/s: %s.\n",
                cl->switches_per_node, sw->id, report_gbs(cap, a, 32), cl->gpus_per_node,
                report_gbs(up_gpu, b, 32), report_gbs(dem, c, 32),
                cap >= dem ? "non-blocking inside the server" : "oversubscribed");
    }
    fprintf(out, "  - each NIC sits behind %s x%d (%s GB/s goodput) %s one %s port (%s GB/s).\n",
            host->id, host->lanes, report_gbs(host->bw_dir, a, 32),
            host->bw_dir >= nic->bw_dir ? ">=" : "< (PCIe-bound!)", nic->id,
            report_gbs(nic->bw_dir, b, 32));
    double rtt = strata_link_rtt(nic->line_dir, cl->cable_m, nic->wire);
    fprintf(out,
            "  - credits: %s over %g m has a %s link round trip; running at line rate needs\n"
            "    %.0f B of receive buffer per virtual lane (rate x RTT).\n",
            nic->id, cl->cable_m, report_time(rtt, a, 32),
            strata_credit_buffer(nic->line_dir, rtt));
    fprintf(out,
            "  - alpha-beta crossover (latency x bandwidth): %s %.0f KB, %s %.0f KB; smaller\n"
            "    messages are latency-bound.\n",
            up->id, up->latency * up_gpu / 1e3, nic->id, nic->latency * nic_gpu / 1e3);
}

static strata_status_t run(const report_ctx_t *ctx, strata_error_t *err)
{
    const report_cluster_t *cl = ctx->cluster;
    const char *ids[5] = {cl->hbm, cl->scale_up, cl->host_link, cl->nic, cl->host_memory};
    const strata_link_t *l[5];
    for (int i = 0; i < 5; i++)
        if (need(ctx, ids[i], &l[i], err) != STRATA_OK)
            return err ? err->status : STRATA_ERR_NOT_FOUND;
    tier_t t[5] = {
        {"GPU memory", l[0], 1},
        {"scale-up", l[1], l[1]->links},
        {"host (GPU-CPU)", l[2], 1},
        {"scale-out", l[3], (double)cl->nics_per_node / cl->gpus_per_node},
        {"host memory", l[4], (double)cl->host_memory_channels / cl->gpus_per_node},
    };
    FILE *out = ctx->out;
    fprintf(out, "  per %s, per direction (GB/s); 'vs scale-up' = per-GPU figure / %s's\n\n",
            cl->gpu, l[1]->id);
    fprintf(out, "  %-16s %-11s %9s %9s %11s %10s %9s %9s\n", "tier", "link", "per link",
            "links/GPU", "GPU total", "bidi", "latency", "vs s-up");
    double ref = t[1].per_gpu * l[1]->bw_dir;
    for (int i = 0; i < 5; i++)
        print_tier(out, &t[i], ref);
    print_findings(ctx, t);
    return STRATA_OK;
}

const report_section_t report_link_section = {
    .name = "links",
    .title = "Physical and data-link layers",
    .run = run,
};
