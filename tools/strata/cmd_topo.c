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

#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: strata topo show|metrics|dot CLUSTER [--json] [-o FILE] [--catalog FILE]\n\n"
            "A cluster as a graph of devices and links: its summary (show), its metrics\n"
            "(diameter, hops, injection and oversubscription per tier, bisection) or\n"
            "its Graphviz drawing (dot).\n\n"
            "CLUSTER:\n"
            "  ring:N  mesh:AxB[xC]  torus:AxB[xC]  full:N  switch:N\n"
            "  fattree:k=K[,tiers=T][,n=ENDPOINTS][,oversub=R1:R2]\n"
            "  railft:servers=S,gpus=G[,k=K][,tiers=T][,oversub=R1:R2]\n"
            "    any of them with ,link=ID (catalog kind) ,mult=M ,bw=GB/s ,lat=us\n"
            "  a preset (dgx-h100:16), a cluster file (.json), NCCL topology (.xml), local\n\n"
            "options:\n"
            "  --json          JSON instead of text (show, metrics)\n"
            "  -o FILE         dot: write DOT to FILE, and FILE.svg when Graphviz is installed\n"
            "  --catalog FILE  link catalog (default: <data dir>/links.json)\n"
            "  -h, --help      this help\n");
}

typedef struct topo_args {
    const char *action, *cluster, *out, *catalog;
    int json;
} topo_args_t;

static int parse_args(int argc, char **argv, topo_args_t *a)
{
    memset(a, 0, sizeof(*a));
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "--json") == 0) a->json = 1;
        else if (strcmp(s, "-o") == 0 || strcmp(s, "--catalog") == 0) {
            if (i + 1 >= argc) return cli_usage_error("topo", "%s needs a file name", s);
            if (s[1] == 'o') a->out = argv[++i];
            else a->catalog = argv[++i];
        } else if (s[0] == '-' && s[1]) return cli_usage_error("topo", "unknown option '%s'", s);
        else if (!a->action) a->action = s;
        else if (!a->cluster) a->cluster = s;
        else return cli_usage_error("topo", "unexpected argument '%s'", s);
    }
    if (!a->action) return cli_usage_error("topo", "missing action: show, metrics or dot");
    if (strcmp(a->action, "show") && strcmp(a->action, "metrics") && strcmp(a->action, "dot"))
        return cli_usage_error("topo", "unknown action '%s' (show, metrics or dot)", a->action);
    if (!a->cluster) return cli_usage_error("topo", "missing CLUSTER");
    if (a->out && strcmp(a->action, "dot"))
        return cli_usage_error("topo", "-o applies to dot only");
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
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0)
        fprintf(stderr, "strata topo: wrote %s and %s\n", dot_path, svg);
    else
        fprintf(stderr, "strata topo: wrote %s (no SVG: Graphviz 'dot' not available)\n",
                dot_path);
}

static strata_status_t run_action(const topo_args_t *a, const strata_topo_t *t,
                                  strata_error_t *err)
{
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
    if (!st) st = run_action(&a, t, &err);
    strata_topo_destroy(t);
    strata_link_catalog_destroy(cat);
    return st ? cli_fail(&err) : CLI_OK;
}
