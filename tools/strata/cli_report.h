/*
 * cli_report.h — `strata report`, the main job, and the output helpers shared
 * by the link commands.
 *
 * A report is a list of sections, one per layer of the stack, each printed
 * for the same cluster: cmd_report.c loads it once (strata_topo_load_spec)
 * and hands the finished topology to every section. A layer adds its section by adding ONE file,
 * tools/strata/report_<layer>.c, that defines a report_section_t, and one
 * line in the section table of cmd_report.c (plus its extern line below).
 * Sections use only the public API and print to ctx->out. (Named cli_report.h
 * because tests/layering.sh reserves "report.h" for the report module.)
 */
#ifndef STRATA_CLI_REPORT_H
#define STRATA_CLI_REPORT_H

#include "cli.h"

#include <stdbool.h>

/* The cluster `strata report` runs on when given none: four DGX H100
 * servers (8 H100 SXM on 4 NVSwitch gen3, 8 x 400G InfiniBand NDR each),
 * the preset of data/presets/dgx-h100.json. */
#define REPORT_DEFAULT_CLUSTER "dgx-h100:4"

/* The workload the strategy section plans without --model (Llama 3 8B). */
#define REPORT_PLAN_MODEL "llama3-8b"

/* A tiny JSON writer: one value per line, indented, commas handled. */
typedef struct report_json {
    FILE *out;
    int depth;
    bool first[16]; /* per open level: nothing written yet */
} report_json_t;

/* Open an object ('{') or array ('['); key NULL inside arrays and at the top. */
void rj_open(report_json_t *j, const char *key, char bracket);
void rj_close(report_json_t *j, char bracket);
/* Members; a non-finite number is written as null. */
void rj_num(report_json_t *j, const char *key, double v);
void rj_int(report_json_t *j, const char *key, long v);
void rj_str(report_json_t *j, const char *key, const char *s);
void rj_bool(report_json_t *j, const char *key, bool v);

/* What every section reads: the one cluster, loaded once. */
typedef struct report_ctx {
    FILE *out;
    report_json_t *json; /* non-NULL: write figures into the open object, no text */
    const char *spec;    /* the cluster as given, e.g. "dgx-a100:2" */
    const strata_topo_t *topo;
    const strata_link_catalog_t *links;
    const char *model; /* --model: the workload of the strategy section (NULL: its default) */
} report_ctx_t;

/* The command's arguments (cmd_report.c). */
typedef struct report_args {
    const char *cluster, *only, *catalog, *model, *html;
    bool json;
} report_args_t;

/* Print the header and every section (only: just that one) to ctx->out;
 * CLI_OK or the failing section's exit code (its error printed). */
int report_run_sections(const report_ctx_t *ctx, const char *only);
/* `strata report --html FILE` (report_html.c): the page, written to a->html. */
int report_html(const report_args_t *a, const strata_link_catalog_t *cat,
                const strata_topo_t *topo);

typedef struct report_section {
    const char *name;  /* for `strata report --section NAME` and the JSON key */
    const char *title; /* printed as "== title ==" */
    /* Print the section (text, or JSON members into ctx->json's open
     * object); return a strata status, filling err on failure. */
    strata_status_t (*run)(const report_ctx_t *ctx, strata_error_t *err);
} report_section_t;

/* Sections, one per layer (report_<layer>.c), and the closing summary. */
extern const report_section_t report_link_section;
extern const report_section_t report_topo_section;
extern const report_section_t report_sim_section;
extern const report_section_t report_coll_section;
extern const report_section_t report_plan_section;
extern const report_section_t report_bottleneck_section;
extern const report_section_t report_host_section;
/* Whether the host section has anything to say (a measured cluster file,
 * or `local`); otherwise the report leaves it out unless --section asks. */
bool report_host_applies(const report_ctx_t *ctx);

/* ==== Figures sections share (the bottleneck summary reads them) ==== */

/* Per-accelerator bandwidth by tier of the stack, per direction, B/s,
 * from the topology's links (report_link.c): scale-up = links among
 * accelerators and scale-up switches; host = accelerator to PCIe switch,
 * CPU or NIC; net = NIC (or accelerator) to network switch. 0: absent. */
typedef struct report_tiers {
    double up, host, net;
    char up_kind[32], host_kind[32], net_kind[32]; /* widest kind of each, "" */
} report_tiers_t;
void report_link_tiers(const strata_topo_t *topo, report_tiers_t *t_p);

/* The allreduce message the report studies: 1 GiB, nccl-tests' usual
 * large message, where bandwidth dominates. */
#define REPORT_BIG_BYTES STRATA_VERDICT_BIG_BYTES

/* The library's verdict on the report's cluster (with workload, or NULL),
 * reusing the ring the simulated section ran (report_bottleneck.c). */
strata_status_t report_verdict(const report_ctx_t *ctx, const char *workload,
                               strata_verdict_t **v_p, strata_error_t *err);

/* A ring allreduce of REPORT_BIG_BYTES over every accelerator of topo,
 * simulated with spread routing (report_sim.c); free res with
 * strata_sim_result_free. */
strata_status_t report_sim_ring(const strata_topo_t *topo, strata_sim_result_t *res,
                                strata_error_t *err);
/* The simulated class that bounded r longest, or NULL when latency did. */
const strata_sim_class_t *report_sim_top_class(const strata_sim_result_t *r);

/* ==== Helpers shared by report, links and link ==== */

/* The library's text formats (strata_fmt_gbs, strata_fmt_time). */
#define report_gbs  strata_fmt_gbs
#define report_time strata_fmt_time
/* Load the catalog (path NULL: data dir); on failure print the positioned
 * error and return CLI_FAIL, else CLI_OK. */
int report_load_links(const char *path, strata_link_catalog_t **cat_p);
/* Find a catalog entry or fail with "unknown link" and the close ids. */
const strata_link_t *report_find_link(const char *cmd, const strata_link_catalog_t *cat,
                                      const char *id);
/* Write s as a JSON string literal (quotes and escapes). */
void report_json_str(FILE *out, const char *s);

#endif
