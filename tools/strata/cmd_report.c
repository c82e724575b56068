/*
 * cmd_report.c — `strata report [CLUSTER]`: the main job. Loads the
 * cluster once (strata_topo_load_spec: a preset such as dgx-a100:16, a
 * builder spec, a .json cluster file, an NCCL .xml, `local`; by default the
 * dgx-h100:4 preset), asks the library for its verdict (strata_verdict_create,
 * only the sections asked for) and prints each layer's section of it, then
 * the bottleneck summary; or, with --json, one JSON document with a key per
 * section holding that section's figures. `strata` with no arguments runs
 * it on the default.
 *
 * Also home of the output helpers the link commands share (cli_report.h).
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "cli_report.h"

#include <stdlib.h>
#include <string.h>

/* The section table, in stack order: the verdict's sections
 * (strata_verdict_section_t, by the library's names) and the host. */
typedef struct section {
    const char *title; /* printed as "== title ==" */
    int verdict;       /* the verdict's section, or -1: the host */
} section_t;

static const section_t sections[] = {
    {"Physical and data-link layers", STRATA_VERDICT_LINKS},
    {"Topology", STRATA_VERDICT_TOPOLOGY},
    {"Collectives: predicted bus bandwidth and the algorithm chosen", STRATA_VERDICT_COLL},
    {"Simulated collectives (congestion-aware)", STRATA_VERDICT_SIM},
    {"Strategy: a training step planned on this cluster", STRATA_VERDICT_STRATEGY},
    {"Bottleneck: what bounds a large allreduce", STRATA_VERDICT_BOTTLENECK},
    {"This host, measured", -1},
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

/* "links" ... "bottleneck" (the library's names), "host". */
static const char *section_name(const section_t *s)
{
    return s->verdict < 0 ? "host" : strata_verdict_section_name(s->verdict);
}

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
    for (size_t i = 0; i < NSECTIONS; i++)
        fprintf(out, " %s", section_name(&sections[i]));
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
    for (size_t i = 0; i < NSECTIONS; i++)
        if (strcmp(a->only, section_name(&sections[i])) == 0) return CLI_OK;
    return cli_usage_error("report", "unknown section '%s'", a->only);
}

static void header(const report_ctx_t *ctx)
{
    const strata_topo_t *t = ctx->topo;
    int32_t n = strata_topo_endpoint_count(t), g = strata_topo_group_count(t);
    fprintf(ctx->out, "strata report: %s (%s: %d GPU%s", ctx->spec, strata_topo_name(t), (int)n,
            n == 1 ? "" : "s");
    if (g > 0) fprintf(ctx->out, " in %d server%s of %d", (int)g, g == 1 ? "" : "s", (int)(n / g));
    fprintf(ctx->out, ")\nGB/s = 1e9 B/s; figures per direction unless marked bidi.\n");
}

strata_verdict_opts_t report_verdict_opts(const report_ctx_t *ctx, const char *only)
{
    strata_verdict_opts_t o = {.workload = ctx->model ? ctx->model : REPORT_PLAN_MODEL,
                               .spec = ctx->spec};
    if (!only) return o;
    int s = strata_verdict_section_find(only);
    /* the host alone: none of the verdict's sections (its model only) */
    o.sections = s >= 0 ? 1u << s : 1u << STRATA_VERDICT_SECTION_COUNT;
    return o;
}

static int print_sections(const report_ctx_t *ctx, const char *only)
{
    for (size_t i = 0; i < NSECTIONS; i++) {
        const section_t *s = &sections[i];
        if (only && strcmp(only, section_name(s)) != 0) continue;
        if (!only && s->verdict < 0 && !report_host_applies(ctx)) continue;
        if (ctx->json)
            strata_json_open(ctx->json, section_name(s), '{');
        else
            fprintf(ctx->out, "\n== %s ==\n", s->title);
        strata_error_t err;
        strata_error_clear(&err);
        if (s->verdict < 0 && report_host_run(ctx, &err) != STRATA_OK) return cli_fail(&err);
        if (s->verdict >= 0 && ctx->json)
            strata_verdict_json_section(ctx->v, s->verdict, ctx->json);
        else if (s->verdict >= 0)
            strata_verdict_print_section(ctx->v, s->verdict, ctx->spec, ctx->out);
        if (ctx->json) strata_json_close(ctx->json, '{');
    }
    return CLI_OK;
}

int report_run_sections(const report_ctx_t *ctx, const char *only)
{
    report_ctx_t c = *ctx;
    strata_verdict_t *v = NULL;
    if (!c.v) {
        strata_verdict_opts_t o = report_verdict_opts(ctx, only);
        strata_error_t err;
        strata_error_clear(&err);
        if (strata_verdict_create(c.topo, c.links, &o, &v, &err) != STRATA_OK)
            return cli_fail(&err);
        c.v = v;
    }
    if (c.json)
        strata_verdict_json_cluster(c.v, c.spec, c.json);
    else
        header(&c);
    int rc = print_sections(&c, only);
    strata_verdict_destroy(v);
    return rc;
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
    strata_json_t j;
    report_ctx_t ctx = {mem, a->json ? &j : NULL, a->cluster, topo, cat, a->model, NULL};
    if (a->json) strata_json_document(&j, mem);
    int rc = report_run_sections(&ctx, a->only);
    if (a->json && rc == CLI_OK) strata_json_close(&j, '{');
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
