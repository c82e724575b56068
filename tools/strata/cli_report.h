/*
 * cli_report.h — `strata report`, the main job, and the output helpers shared
 * by the link commands.
 *
 * A report is a list of sections, one per layer of the stack, each printed
 * for the same cluster: cmd_report.c loads it once (strata_topo_load_spec),
 * asks the library for its verdict once (strata_verdict_create: every
 * figure of every section) and renders each section with the library's
 * renderers (strata_verdict_print_section, strata_verdict_json_section).
 * Only the host section (a measured host, strata probe) is the command's
 * own (report_host.c). (Named cli_report.h because tests/layering.sh
 * reserves "report.h" for the report module.)
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

/* What every section reads: the one cluster, loaded once, and the
 * library's verdict on it (strata_verdict_create), made once. */
typedef struct report_ctx {
    FILE *out;
    strata_json_t *json; /* non-NULL: write figures into the open object, no text */
    const char *spec;    /* the cluster as given, e.g. "dgx-a100:2" */
    const strata_topo_t *topo;
    const strata_link_catalog_t *links;
    const char *model; /* --model: the workload of the strategy section (NULL: its default) */
    const strata_verdict_t *v; /* the verdict; NULL: report_run_sections makes one */
} report_ctx_t;

/* The command's arguments (cmd_report.c). */
typedef struct report_args {
    const char *cluster, *only, *catalog, *model, *html;
    bool json;
} report_args_t;

/* Print the header and every section (only: just that one) to ctx->out;
 * CLI_OK or the exit code of the failure (its error printed). */
int report_run_sections(const report_ctx_t *ctx, const char *only);
/* `strata report --html FILE` (report_html.c): the page, written to a->html. */
int report_html(const report_args_t *a, const strata_link_catalog_t *cat,
                const strata_topo_t *topo);
/* The verdict's options for `strata report` on ctx's cluster with only
 * (NULL: every section) printed. */
strata_verdict_opts_t report_verdict_opts(const report_ctx_t *ctx, const char *only);

/* The section the library does not own: this host, as strata probe
 * measured it (report_host.c). Whether it has anything to say (a measured
 * cluster file, or `local`); otherwise the report leaves it out unless
 * --section asks. */
bool report_host_applies(const report_ctx_t *ctx);
strata_status_t report_host_run(const report_ctx_t *ctx, strata_error_t *err);

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

#endif
