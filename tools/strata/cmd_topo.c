/*
 * cmd_topo.c — `strata topo show|metrics|dot CLUSTER [--json] [-o FILE]`:
 * look at a cluster as a graph.
 *
 * CLUSTER is resolved by strata_topo_load_spec: a builder spec (ring:8,
 * torus:4x4x4, fattree:k=8, railft:servers=2048,gpus=8 …), a preset, a
 * cluster file (.json), an NCCL topology file (.xml) or `local`. `dot`
 * writes Graphviz DOT to stdout, or to FILE with -o, and then also FILE's
 * SVG next to it when Graphviz's `dot` program is installed.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <stdbool.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: strata topo show|metrics|dot|describe CLUSTER [--json] [-o FILE]\n"
                 "                   [--export FILE] [--catalog FILE]\n"
                 "       strata topo CLUSTER      (describe: e.g. strata topo local)\n\n"
                 "A cluster as a graph of devices and links: its summary (show), its metrics\n"
                 "(diameter, hops, injection and oversubscription per tier, bisection) or\n"
                 "its Graphviz drawing (dot); describe adds, for presets, files and local, the\n"
                 "devices with their details, the intra-server links and the sources.\n\n"
                 "CLUSTER:\n"
                 "  ring:N  mesh:AxB[xC]  torus:AxB[xC]  full:N  switch:N\n"
                 "  fattree:k=K[,tiers=T][,n=ENDPOINTS][,oversub=R1:R2]\n"
                 "  railft:servers=S,gpus=G[,k=K][,tiers=T][,oversub=R1:R2]\n"
                 "    any of them with ,link=ID (catalog kind) ,mult=M ,bw=GB/s ,lat=us\n"
                 "  a preset NAME[:SERVERS][,opts] (dgx-h100:16,oversub=4,nics=4), a cluster\n"
                 "  file (.json[,opts]), an NCCL topology (.xml[,opts]), or local (hwloc);\n"
                 "  opts: servers= net=rail-fat-tree|fat-tree|switch|none oversub=R[:R2]\n"
                 "  nics= port=ID tiers= radix=   (docs/formats.md)\n\n"
                 "options:\n"
                 "  --json          JSON instead of text (show, metrics)\n"
                 "  -o FILE         write the output to FILE (also --output FILE); dot: the DOT,\n"
                 "                  and FILE.svg beside it when Graphviz is installed\n"
                 "  --export FILE   also write the cluster as a cluster file (JSON; - = stdout)\n"
                 "  --catalog FILE  link catalog (default: <data dir>/links.json)\n"
                 "  -h, --help      this help\n");
}

typedef struct topo_args {
    const char *action, *cluster, *out, *catalog, *export_to;
    int json;
} topo_args_t;

static int parse_args(int argc, char **argv, topo_args_t *a)
{
    memset(a, 0, sizeof(*a));
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "--json") == 0)
            a->json = 1;
        else if (strcmp(s, "-o") == 0 || strcmp(s, "--catalog") == 0) {
            if (i + 1 >= argc) return cli_usage_error("topo", "%s needs a file name", s);
            if (s[1] == 'o')
                a->out = argv[++i];
            else
                a->catalog = argv[++i];
        } else if (strcmp(s, "--export") == 0) {
            if (i + 1 >= argc) return cli_usage_error("topo", "--export needs a file name");
            a->export_to = argv[++i];
        } else if (s[0] == '-' && s[1])
            return cli_unknown_option("topo", s);
        else if (!a->action)
            a->action = s;
        else if (!a->cluster)
            a->cluster = s;
        else
            return cli_usage_error("topo", "unexpected argument '%s'", s);
    }
    if (!a->action) return cli_usage_error("topo", "missing action: show, metrics or dot");
    bool known = !strcmp(a->action, "show") || !strcmp(a->action, "metrics") ||
                 !strcmp(a->action, "dot") || !strcmp(a->action, "describe");
    if (!known && !a->cluster) { /* `strata topo CLUSTER` = describe CLUSTER */
        a->cluster = a->action;
        a->action = "describe";
    } else if (!known) {
        return cli_usage_error("topo", "unknown action '%s' (show, metrics, dot or describe)",
                               a->action);
    }
    if (!a->cluster) return cli_usage_error("topo", "missing CLUSTER");
    if (a->json && !strcmp(a->action, "dot"))
        return cli_usage_error("topo", "--json applies to show, metrics and describe (dot writes "
                                       "DOT; --export writes the cluster as JSON)");
    return CLI_OK;
}

/* SVG beside a DOT file when Graphviz is installed: FILE.dot → FILE.svg. */
static void write_svg(const char *dot_path)
{
    char svg[4096];
    size_t n = strlen(dot_path);
    if (n > 4 && strcmp(dot_path + n - 4, ".dot") == 0) n -= 4;
    if (n + 5 > sizeof(svg)) return;
    snprintf(svg, sizeof(svg), "%.*s.svg", (int)n, dot_path);
    pid_t pid = fork();
    if (pid == 0) {
        execlp("dot", "dot", "-Tsvg", "-o", svg, dot_path, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        fprintf(stderr, "strata topo: wrote %s and %s\n", dot_path, svg);
    else
        fprintf(stderr, "strata topo: wrote %s (no SVG: Graphviz 'dot' not available)\n", dot_path);
}

/* --export: the cluster file of an I/O spec (builder specs have none). */
static strata_status_t export_cluster(const topo_args_t *a, const strata_link_catalog_t *cat,
                                      strata_error_t *err)
{
    bool to_stdout = strcmp(a->export_to, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(a->export_to, "w");
    if (!f) return strata_error_set(err, STRATA_ERR_IO, "cannot write '%s'", a->export_to);
    strata_status_t st = strata_cluster_export(a->cluster, cat, f, err);
    if (!to_stdout && fclose(f) && !st)
        st = strata_error_set(err, STRATA_ERR_IO, "cannot write '%s'", a->export_to);
    if (st == STRATA_ERR_NOT_FOUND)
        st = strata_error_set(err, st,
                              "--export: '%s' is a builder spec; only presets, cluster "
                              "files, NCCL topologies and local can be exported",
                              a->cluster);
    return st;
}

/* describe: the I/O description when there is one, then the summary. */
static strata_status_t describe(const topo_args_t *a, const strata_topo_t *t,
                                const strata_link_catalog_t *cat, strata_error_t *err)
{
    strata_error_t ignored;
    /* With --json only the summary, so the output stays one JSON object
     * (the description itself is what --export writes as JSON). */
    if (!a->json && strata_cluster_describe(a->cluster, cat, stdout, &ignored) == STRATA_OK)
        printf("\n");
    return strata_topo_print(t, a->json, stdout, err);
}

static strata_status_t run_action(const topo_args_t *a, const strata_topo_t *t,
                                  const strata_link_catalog_t *cat, strata_error_t *err)
{
    if (strcmp(a->action, "describe") == 0) return describe(a, t, cat, err);
    if (strcmp(a->action, "show") == 0) return strata_topo_print(t, a->json, stdout, err);
    if (strcmp(a->action, "metrics") == 0) {
        strata_topo_metrics_t m;
        strata_status_t st = strata_topo_metrics(t, &m, err);
        if (st) return st;
        if (!a->json) printf("topology          %s\n", strata_topo_name(t));
        return strata_topo_metrics_print(&m, a->json, stdout, err);
    }
    if (!a->out) return strata_topo_write_dot(t, stdout, err);
    FILE *f = fopen(a->out, "w");
    if (!f) return strata_error_set(err, STRATA_ERR_IO, "cannot write '%s'", a->out);
    strata_status_t st = strata_topo_write_dot(t, f, err);
    if (fclose(f) && !st) st = strata_error_set(err, STRATA_ERR_IO, "cannot write '%s'", a->out);
    if (!st) write_svg(a->out);
    return st;
}

int cmd_topo(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    topo_args_t a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    strata_error_t err;
    strata_error_clear(&err);
    strata_link_catalog_t *cat = NULL;
    strata_topo_t *t = NULL;
    if (strata_link_catalog_load(a.catalog, &cat, &err)) return cli_fail(&err);
    strata_status_t st = strata_topo_load_spec(a.cluster, cat, &t, &err);
    if (!st && a.export_to) st = export_cluster(&a, cat, &err);
    if (!st && a.out && strcmp(a.action, "dot") && cli_redirect_stdout("topo", a.out)) {
        strata_topo_destroy(t);
        strata_link_catalog_destroy(cat);
        return CLI_FAIL;
    }
    if (!st) st = run_action(&a, t, cat, &err);
    strata_topo_destroy(t);
    strata_link_catalog_destroy(cat);
    return st ? cli_fail(&err) : CLI_OK;
}
