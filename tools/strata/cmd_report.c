/*
 * cmd_report.c — `strata report`: the main job. Prints each layer's
 * section for one cluster (the embedded default: 8-GPU H100 servers with
 * NVSwitch and 400G InfiniBand). `strata` with no arguments runs it.
 *
 * Also home of the output helpers the link commands share (cli_report.h).
 */
#include "cli_report.h"

#include <math.h>
#include <string.h>

/* DGX/HGX H100: 8 GPUs, 4 NVSwitch gen3, one ConnectX-7 400G NDR port per
 * GPU, PCIe 5.0 x16 switches between GPU, NIC and CPU; 2 CPUs with 8 DDR5-4800
 * channels each (NVIDIA DGX H100 user guide; links.md NVSwitch gen3 row). */
const report_cluster_t report_default_cluster = {
    .name = "dgx-h100",
    .summary =
        "4 servers x 8 H100 SXM (NVLink 4 via 4 NVSwitch gen3), 8 x 400G InfiniBand NDR per server",
    .nodes = 4,
    .gpus_per_node = 8,
    .gpu = "H100 SXM",
    .hbm = "hbm-h100",
    .scale_up = "nvlink4",
    .scale_up_switch = "nvswitch3",
    .switches_per_node = 4,
    .host_link = "pcie5",
    .nic = "ib-ndr",
    .nics_per_node = 8,
    .host_memory = "ddr5-4800",
    .host_memory_channels = 16,
    .cable_m = 30,
};

/* The section table: one line per layer, in stack order. */
static const report_section_t *const sections[] = {
    &report_link_section,
    &report_topo_section,
    &report_coll_section,
    &report_sim_section,
    NULL,
};

/* ==== Shared helpers ==== */

const char *report_gbs(double Bps, char *buf, size_t len)
{
    double g = Bps / 1e9;
    snprintf(buf, len, g >= 10 ? "%.1f" : g >= 1 ? "%.2f" : "%.3f", g);
    return buf;
}

const char *report_time(double s, char *buf, size_t len)
{
    if (s <= 0)
        snprintf(buf, len, "-");
    else if (s < 1e-6)
        snprintf(buf, len, "%.0f ns", s * 1e9);
    else if (s < 1e-3)
        snprintf(buf, len, "%.3g us", s * 1e6);
    else
        snprintf(buf, len, "%.3g ms", s * 1e3);
    return buf;
}

int report_load_links(const char *path, strata_link_catalog_t **cat_p)
{
    strata_error_t err;
    strata_error_clear(&err);
    if (strata_link_catalog_load(path, cat_p, &err) != STRATA_OK) return cli_fail(&err);
    return CLI_OK;
}

const strata_link_t *report_find_link(const char *cmd, const strata_link_catalog_t *cat,
                                      const char *id)
{
    const strata_link_t *l = strata_link_find(cat, id);
    if (l) return l;
    char close[512];
    strata_link_suggest(cat, id, close, sizeof(close));
    fprintf(stderr, "strata %s: unknown link '%s'%s%s%s (see 'strata links')\n", cmd, id,
            close[0] ? " (close: " : "", close, close[0] ? ")" : "");
    return NULL;
}

void report_json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

/* ==== The command ==== */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: strata report [--section NAME] [--catalog FILE]\n\n"
            "The main job: every layer of the communication stack of one cluster, and\n"
            "where its bottleneck is. Runs on the embedded default cluster (%s).\n\n"
            "options:\n"
            "  --section NAME   print only this section:",
            report_default_cluster.summary);
    for (size_t i = 0; sections[i]; i++)
        fprintf(out, " %s", sections[i]->name);
    fprintf(out, "\n  --catalog FILE   link catalog (default: <data dir>/links.json)\n"
                 "  -h, --help       this help\n");
}

static int run_sections(const report_ctx_t *ctx, const char *only)
{
    int found = 0;
    for (size_t i = 0; sections[i]; i++) {
        if (only && strcmp(only, sections[i]->name) != 0) continue;
        found = 1;
        strata_error_t err;
        strata_error_clear(&err);
        fprintf(ctx->out, "\n== %s ==\n", sections[i]->title);
        if (sections[i]->run(ctx, &err) != STRATA_OK) return cli_fail(&err);
    }
    if (!found) return cli_usage_error("report", "unknown section '%s'", only);
    return CLI_OK;
}

int cmd_report(int argc, char **argv)
{
    const char *only = NULL, *catalog = NULL;
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--section") != 0 && strcmp(o, "--catalog") != 0)
            return cli_usage_error("report", "unexpected argument '%s'", o);
        if (i + 1 >= argc) return cli_usage_error("report", "%s needs a value", o);
        if (strcmp(o, "--section") == 0)
            only = argv[++i];
        else
            catalog = argv[++i];
    }
    strata_link_catalog_t *cat = NULL;
    int rc = report_load_links(catalog, &cat);
    if (rc != CLI_OK) return rc;
    const report_cluster_t *cl = &report_default_cluster;
    printf("strata report: %s (%s, %d GPUs)\n", cl->name, cl->summary,
           cl->nodes * cl->gpus_per_node);
    printf("GB/s = 1e9 B/s; figures per direction unless marked bidi.\n");
    report_ctx_t ctx = {stdout, cl, cat};
    rc = run_sections(&ctx, only);
    strata_link_catalog_destroy(cat);
    return rc;
}
