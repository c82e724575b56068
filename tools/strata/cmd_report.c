/*
 * cmd_report.c — `strata report [CLUSTER]`: the main job. Loads the
 * cluster once (strata_topo_load_spec: a preset such as dgx-a100:16, a
 * builder spec, a .json cluster file, an NCCL .xml, `local`; by default the
 * dgx-h100:4 preset) and prints each layer's section for it, then the
 * bottleneck summary; or, with --json, one JSON document with a key per
 * section holding that section's figures. `strata` with no arguments runs
 * it on the default.
 *
 * Also home of the output helpers the link commands share (cli_report.h).
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "cli_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The section table: one line per layer, in stack order. */
static const report_section_t *const sections[] = {
    &report_link_section, &report_topo_section,       &report_coll_section, &report_sim_section,
    &report_plan_section, &report_bottleneck_section, &report_host_section, NULL,
};

/* ==== Shared helpers ==== */

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

/* ==== JSON writer ==== */

static void rj_begin(report_json_t *j, const char *key)
{
    if (j->depth > 0) {
        fputs(j->first[j->depth] ? "\n" : ",\n", j->out);
        j->first[j->depth] = false;
    }
    fprintf(j->out, "%*s", 2 * j->depth, "");
    if (key) {
        report_json_str(j->out, key);
        fputs(": ", j->out);
    }
}

void rj_open(report_json_t *j, const char *key, char bracket)
{
    rj_begin(j, key);
    fputc(bracket, j->out);
    if (j->depth + 1 < (int)(sizeof(j->first) / sizeof(j->first[0]))) j->depth++;
    j->first[j->depth] = true;
}

void rj_close(report_json_t *j, char bracket)
{
    bool empty = j->first[j->depth];
    j->depth--;
    if (!empty) fprintf(j->out, "\n%*s", 2 * j->depth, "");
    fputc(bracket == '{' ? '}' : bracket == '[' ? ']' : bracket, j->out);
    if (j->depth == 0) fputc('\n', j->out);
}

void rj_num(report_json_t *j, const char *key, double v)
{
    rj_begin(j, key);
    if (isfinite(v))
        fprintf(j->out, "%.6g", v);
    else
        fputs("null", j->out);
}

void rj_int(report_json_t *j, const char *key, long v)
{
    rj_begin(j, key);
    fprintf(j->out, "%ld", v);
}

void rj_str(report_json_t *j, const char *key, const char *s)
{
    rj_begin(j, key);
    report_json_str(j->out, s ? s : "");
}

void rj_bool(report_json_t *j, const char *key, bool v)
{
    rj_begin(j, key);
    fputs(v ? "true" : "false", j->out);
}

/* ==== The command ==== */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: strata report [CLUSTER] [--section NAME] [--json] [--model NAME]\n"
            "                     [--html FILE] [--catalog FILE]\n\n"
            "The main job: every layer of the communication stack of one cluster, and\n"
            "where its bottleneck is.\n\n"
            "CLUSTER   a preset (dgx-h100, dgx-a100:16, dgx-h100:8,oversub=4 ...), a builder\n"
            "          spec (railft:servers=4,gpus=8, torus:4x4,bw=50 ...), a .json cluster\n"
            "          file, an NCCL .xml topology or 'local' (default: %s)\n\n"
            "options:\n"
            "  --section NAME   print only this section:",
            REPORT_DEFAULT_CLUSTER);
    for (size_t i = 0; sections[i]; i++)
        fprintf(out, " %s", sections[i]->name);
    fprintf(out, "\n  --json           one JSON document, a key per section with its figures\n"
                 "  --model NAME     the workload the strategy section plans (a data/models\n"
                 "                   name such as gpt3-175b, or a .json; default llama3-8b);\n"
                 "                   with --html also the communication wall of the\n"
                 "                   cluster's preset family for it (strata wall NAME FAMILY)\n"
                 "  --html FILE      write the whole report as one self-contained HTML page\n"
                 "                   with charts (inline SVG, no scripts) to FILE\n"
                 "  -o FILE          write the output to FILE (also --output FILE)\n"
                 "  --catalog FILE   link catalog (default: <data dir>/links.json)\n"
                 "  -h, --help       this help\n");
}

static int parse_args(int argc, char **argv, report_args_t *a)
{
    memset(a, 0, sizeof(*a));
    a->cluster = REPORT_DEFAULT_CLUSTER;
    bool have_cluster = false;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--json") == 0) {
            a->json = true;
        } else if (strcmp(o, "--section") == 0 || strcmp(o, "--catalog") == 0 ||
                   strcmp(o, "--model") == 0 || strcmp(o, "--html") == 0) {
            if (i + 1 >= argc || !argv[i + 1][0])
                return cli_usage_error("report", "%s needs a value", o);
            const char **dst = o[2] == 's'   ? &a->only
                               : o[2] == 'c' ? &a->catalog
                               : o[2] == 'm' ? &a->model
                                             : &a->html;
            *dst = argv[++i];
        } else if (o[0] == '-' && o[1] != '\0') {
            return cli_unknown_option("report", o);
        } else if (have_cluster) {
            return cli_usage_error("report", "unexpected argument '%s'", o);
        } else {
            a->cluster = o;
            have_cluster = true;
        }
    }
    if (a->html && (a->json || a->only))
        return cli_usage_error("report", "--html writes the whole report; drop %s",
                               a->json ? "--json" : "--section");
    if (!a->only) return CLI_OK;
    for (size_t i = 0; sections[i]; i++)
        if (strcmp(a->only, sections[i]->name) == 0) return CLI_OK;
    return cli_usage_error("report", "unknown section '%s'", a->only);
}

static void header(const report_ctx_t *ctx)
{
    const strata_topo_t *t = ctx->topo;
    int32_t n = strata_topo_endpoint_count(t), g = strata_topo_group_count(t);
    if (ctx->json) {
        rj_open(ctx->json, "cluster", '{');
        rj_str(ctx->json, "spec", ctx->spec);
        rj_str(ctx->json, "name", strata_topo_name(t));
        rj_int(ctx->json, "gpus", n);
        rj_int(ctx->json, "servers", g);
        rj_int(ctx->json, "devices", strata_topo_device_count(t));
        rj_int(ctx->json, "links", strata_topo_link_count(t));
        rj_close(ctx->json, '}');
        return;
    }
    fprintf(ctx->out, "strata report: %s (%s: %d GPU%s", ctx->spec, strata_topo_name(t), (int)n,
            n == 1 ? "" : "s");
    if (g > 0) fprintf(ctx->out, " in %d server%s of %d", (int)g, g == 1 ? "" : "s", (int)(n / g));
    fprintf(ctx->out, ")\nGB/s = 1e9 B/s; figures per direction unless marked bidi.\n");
}

int report_run_sections(const report_ctx_t *ctx, const char *only)
{
    header(ctx);
    for (size_t i = 0; sections[i]; i++) {
        if (only && strcmp(only, sections[i]->name) != 0) continue;
        if (!only && sections[i] == &report_host_section && !report_host_applies(ctx)) continue;
        strata_error_t err;
        strata_error_clear(&err);
        if (ctx->json)
            rj_open(ctx->json, sections[i]->name, '{');
        else
            fprintf(ctx->out, "\n== %s ==\n", sections[i]->title);
        if (sections[i]->run(ctx, &err) != STRATA_OK) return cli_fail(&err);
        if (ctx->json) rj_close(ctx->json, '{');
    }
    return CLI_OK;
}

/* Print the report to a buffer first so a failing section leaves no half
 * document on stdout (--json readers get all or nothing). */
static int report(const report_args_t *a, const strata_link_catalog_t *cat,
                  const strata_topo_t *topo)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        fprintf(stderr, "strata report: out of memory\n");
        return CLI_FAIL;
    }
    report_json_t j = {.out = mem};
    report_ctx_t ctx = {mem, a->json ? &j : NULL, a->cluster, topo, cat, a->model};
    if (a->json) rj_open(&j, NULL, '{');
    int rc = report_run_sections(&ctx, a->only);
    if (a->json && rc == CLI_OK) rj_close(&j, '{');
    fclose(mem);
    if (rc == CLI_OK) fwrite(buf, 1, len, stdout);
    free(buf);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    report_args_t a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_OK) return rc;
    strata_link_catalog_t *cat = NULL;
    rc = report_load_links(a.catalog, &cat);
    if (rc != CLI_OK) return rc;
    strata_topo_t *topo = NULL;
    strata_error_t err;
    strata_error_clear(&err);
    if (strata_topo_load_spec(a.cluster, cat, &topo, &err) != STRATA_OK)
        rc = cli_fail(&err);
    else if (a.html)
        rc = report_html(&a, cat, topo);
    else
        rc = report(&a, cat, topo);
    strata_topo_destroy(topo);
    strata_link_catalog_destroy(cat);
    return rc;
}
