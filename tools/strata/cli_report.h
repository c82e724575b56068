/*
 * cli_report.h — `strata report`, the main job, and the output helpers shared
 * by the link commands.
 *
 * A report is a list of sections, one per layer of the stack, each printed
 * for the same cluster. A layer adds its section by adding ONE file,
 * tools/strata/report_<layer>.c, that defines a report_section_t, and one
 * line in the section table of cmd_report.c (plus its extern line below).
 * Sections use only the public API and print to ctx->out. (Named cli_report.h
 * because tests/layering.sh reserves "report.h" for the report module.)
 */
#ifndef STRATA_CLI_REPORT_H
#define STRATA_CLI_REPORT_H

#include "cli.h"

/* The embedded default cluster: what `strata` with no arguments reports on.
 * Link kinds are catalog ids (data/links.json). */
typedef struct report_cluster {
    const char *name;    /* preset-style name, e.g. "dgx-h100" */
    const char *summary; /* one line for the report header */
    int nodes;           /* servers */
    int gpus_per_node;
    const char *gpu;             /* "H100 SXM" */
    const char *hbm;             /* GPU memory, e.g. "hbm-h100" */
    const char *scale_up;        /* GPU-GPU link, e.g. "nvlink4" */
    const char *scale_up_switch; /* its switch chip, e.g. "nvswitch3" ("" if none) */
    int switches_per_node;
    const char *host_link; /* GPU/NIC to host, e.g. "pcie5" */
    const char *nic;       /* scale-out port, e.g. "ib-ndr" */
    int nics_per_node;
    const char *host_memory; /* CPU memory channel, e.g. "ddr5-4800" */
    int host_memory_channels;
    double cable_m; /* typical scale-out cable length, metres */
} report_cluster_t;

extern const report_cluster_t report_default_cluster;

typedef struct report_ctx {
    FILE *out;
    const report_cluster_t *cluster;
    const strata_link_catalog_t *links;
} report_ctx_t;

typedef struct report_section {
    const char *name;  /* for `strata report --section NAME` */
    const char *title; /* printed as "== title ==" */
    /* Print the section; return a strata status, filling err on failure. */
    strata_status_t (*run)(const report_ctx_t *ctx, strata_error_t *err);
} report_section_t;

/* Sections, one per layer (report_<layer>.c). */
extern const report_section_t report_link_section;
extern const report_section_t report_topo_section;
extern const report_section_t report_sim_section;
extern const report_section_t report_coll_section;

/* ==== Helpers shared by report, links and link ==== */

/* "56.0" style GB/s (1e9 B/s) with 3-4 significant digits. */
const char *report_gbs(double Bps, char *buf, size_t len);
/* "1 us", "210 ns", "—" for 0. */
const char *report_time(double s, char *buf, size_t len);
/* Load the catalog (path NULL: data dir); on failure print the positioned
 * error and return CLI_FAIL, else CLI_OK. */
int report_load_links(const char *path, strata_link_catalog_t **cat_p);
/* Find a catalog entry or fail with "unknown link" and the close ids. */
const strata_link_t *report_find_link(const char *cmd, const strata_link_catalog_t *cat,
                                      const char *id);
/* Write s as a JSON string literal (quotes and escapes). */
void report_json_str(FILE *out, const char *s);

#endif
