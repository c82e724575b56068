/*
 * report_html.c — `strata report CLUSTER --html FILE [--model NAME]`: the
 * whole report as one self-contained HTML page. The library draws it
 * (strata/report.h): the verdict's charts (strata_verdict_print_html), with
 * --model the communication wall of the cluster's preset family for that
 * model (strata_wall_run, drawn by strata_wall_print_html), and the text
 * report itself beneath the charts. This file only gathers them and writes
 * the page: built in memory first, so a failure leaves no half page, then
 * written to FILE in one go with every write checked.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "cli_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The wall's threshold, as `strata wall` defaults it (--share 0.5). */
#define REPORT_WALL_SHARE 0.5
/* Most loaded links of the simulated ring the page charts. */
#define REPORT_HTML_TOP_LINKS 12

/* The preset family of a spec: "dgx-h100" of "dgx-h100:4,oversub=2". */
static void family_of(const char *spec, char *buf, size_t len)
{
    size_t n = strcspn(spec, ":,");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), spec);
}

/* strata_wall_run from the family's server to 100,000 GPUs; where the
 * family's fabric cannot be built that large (ERR_RANGE: too many NICs for
 * its switches), again to half the largest count, until it runs. first
 * keeps the first such error, for the page to say where the sweep ends. */
static strata_status_t sweep(const strata_workload_t *w, const strata_link_catalog_t *cat,
                             const strata_fabric_catalog_t *fab, strata_wall_opts_t *o,
                             strata_wall_t *wl, strata_error_t *e, strata_error_t *first)
{
    strata_status_t st = strata_wall_run(w, cat, fab, o, wl, e);
    int g = wl->per_server > 0 ? wl->per_server : 1;
    long max = g;
    while (max * 2 <= 100000)
        max *= 2;
    while (st == STRATA_ERR_RANGE && max / 2 >= 2L * g) {
        if (!first->msg[0]) *first = *e;
        max /= 2;
        o->gpus_min = 0, o->gpus_max = (int)max;
        strata_error_clear(e);
        st = strata_wall_run(w, cat, fab, o, wl, e);
    }
    return st;
}

/* The wall of model on the cluster's family: `strata wall MODEL FAMILY
 * --strategy best` (weak scaling, one sequence per GPU, the family's
 * server up to 100,000 GPUs). A spec that is no preset has no family: the
 * page says so. */
static strata_status_t wall_section(const report_args_t *a, const strata_link_catalog_t *cat,
                                    FILE *out, strata_error_t *err)
{
    char family[64], line[STRATA_ERROR_MSG_MAX + 128];
    family_of(a->cluster, family, sizeof(family));
    strata_workload_t w;
    strata_status_t st = strata_workload_load(a->model, &w, err);
    if (st) return st;
    strata_fabric_catalog_t fab;
    bool have_fab = strata_fabric_catalog_load(NULL, &fab, NULL) == STRATA_OK;
    strata_wall_opts_t o = {0};
    strata_plan_config_default(&o.base);
    o.family = family;
    o.share = REPORT_WALL_SHARE, o.gbs = 1536, o.batch_per_gpu = 1;
    o.strategy = STRATA_WALL_BEST;
    o.comm = (strata_plan_comm_opts_t){.nic_scale = 1, .dp_ratio = 1};
    strata_wall_t *wl = malloc(sizeof(*wl));
    if (!wl) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    strata_error_t e, first;
    strata_error_clear(&e);
    strata_error_clear(&first);
    st = sweep(&w, cat, have_fab ? &fab : NULL, &o, wl, &e, &first);
    if (st == STRATA_OK) {
        st = strata_wall_print_html(wl, a->model, family, REPORT_WALL_SHARE, out);
        if (!st && first.msg[0]) {
            snprintf(line, sizeof(line), "The sweep stops at %d GPUs: beyond, %s.",
                     wl->npoints ? wl->points[wl->npoints - 1].gpus : 0, first.msg);
            strata_html_para(out, line);
        }
    } else if (st == STRATA_ERR_INVALID || st == STRATA_ERR_NOT_FOUND || st == STRATA_ERR_RANGE) {
        strata_html_heading(out, "wall", "The communication wall");
        snprintf(line, sizeof(line), "No wall for %s: %s ('strata wall' sweeps a preset family).",
                 a->cluster, e.msg);
        strata_html_para(out, line);
        st = STRATA_OK;
    } else if (err) {
        *err = e;
    }
    free(wl);
    return st;
}

/* The text report, every section, as `strata report CLUSTER` prints it. */
static int text_report(const report_args_t *a, const strata_link_catalog_t *cat,
                       const strata_topo_t *topo, const strata_verdict_t *v, FILE *out)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return CLI_FAIL;
    report_ctx_t ctx = {mem, NULL, a->cluster, topo, cat, a->model, v};
    int rc = report_run_sections(&ctx, NULL);
    fclose(mem);
    if (rc == CLI_OK) {
        strata_html_heading(out, "text", "The report as text");
        strata_html_pre(out, buf);
    }
    free(buf);
    return rc;
}

static void page_head(const report_args_t *a, const strata_topo_t *t, FILE *out)
{
    char title[256], line[512];
    snprintf(title, sizeof(title), "strata report: %s", a->cluster);
    strata_html_begin(out, title);
    int32_t n = strata_topo_endpoint_count(t), g = strata_topo_group_count(t);
    int k = snprintf(line, sizeof(line), "%s: %d GPU%s", strata_topo_name(t), (int)n,
                     n == 1 ? "" : "s");
    if (g > 0 && k > 0 && (size_t)k < sizeof(line))
        snprintf(line + k, sizeof(line) - (size_t)k, " in %d server%s of %d", (int)g,
                 g == 1 ? "" : "s", (int)(n / g));
    strata_html_para(out, line);
    strata_html_para(out, "GB/s = 1e9 B/s; figures per direction unless marked bidi. Every "
                          "chart's numbers are in the table beneath it.");
}

/* Build the page in memory; CLI_OK with *buf_p, *len_p set. */
static int build_page(const report_args_t *a, const strata_link_catalog_t *cat,
                      const strata_topo_t *topo, char **buf_p, size_t *len_p)
{
    FILE *out = open_memstream(buf_p, len_p);
    if (!out) {
        fprintf(stderr, "strata report: out of memory\n");
        return CLI_FAIL;
    }
    strata_error_t err;
    strata_error_clear(&err);
    strata_verdict_t *v = NULL;
    page_head(a, topo, out);
    /* one verdict for the charts and the text, its ring with the most
     * loaded links the charts show */
    report_ctx_t ctx = {out, NULL, a->cluster, topo, cat, a->model, NULL};
    strata_verdict_opts_t vo = report_verdict_opts(&ctx, NULL);
    vo.top_links = REPORT_HTML_TOP_LINKS;
    strata_status_t st = strata_verdict_create(topo, cat, &vo, &v, &err);
    if (!st) st = strata_verdict_print_html(v, a->cluster, out);
    if (!st && a->model) st = wall_section(a, cat, out, &err);
    int rc = st ? cli_fail(&err) : text_report(a, cat, topo, v, out);
    strata_verdict_destroy(v);
    if (rc == CLI_OK) strata_html_end(out);
    fclose(out);
    if (rc != CLI_OK) free(*buf_p), *buf_p = NULL;
    return rc;
}

int report_html(const report_args_t *a, const strata_link_catalog_t *cat, const strata_topo_t *topo)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = build_page(a, cat, topo, &buf, &len);
    if (rc != CLI_OK) return rc;
    FILE *f = fopen(a->html, "w");
    if (!f) {
        fprintf(stderr, "strata report: cannot write '%s': %s\n", a->html, strerror(errno));
        free(buf);
        return CLI_FAIL;
    }
    size_t wrote = fwrite(buf, 1, len, f);
    int bad = wrote != len || ferror(f);
    int saved = errno;
    if (fclose(f) != 0 && !bad) bad = 1, saved = errno;
    free(buf);
    if (bad) {
        fprintf(stderr, "strata report: writing '%s' failed: %s\n", a->html, strerror(saved));
        return CLI_FAIL;
    }
    printf("strata report: wrote %s (%zu KiB)\n", a->html, (len + 1023) / 1024);
    return CLI_OK;
}
