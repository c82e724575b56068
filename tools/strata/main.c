/*
 * main.c — the strata command: dispatch to one subcommand per file.
 *
 * `strata` with no arguments runs the main job, `strata report`, on its
 * embedded default cluster. Exit codes: 0 ok, 1 failure, 2 usage error.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const cli_command_t cli_commands[] = {
    {"report", "the main job: every layer of a cluster and its bottleneck", cmd_report},
    {"links", "the link catalog with derived bandwidth, goodput and latency", cmd_links},
    {"link", "one link's derivation, layer by layer (physical, data link)", cmd_link},
    {"topo", "a cluster as a graph: summary, metrics, bisection, DOT drawing", cmd_topo},
    {"path", "a host data path hop by hop: DMA, CPU copies, GPUDirect, P2P off", cmd_path},
    {"coherence", "CXL.io/.mem/.cache flits, memory tiers, line ping-pong; measured locally",
     cmd_coherence},
    {"coll", "collective algorithms on a cluster: predicted time, busbw, choice", cmd_coll},
    {"sim", "simulate a collective on a cluster with congestion", cmd_sim},
    {"plan", "a training step under a parallel plan: time, traffic per tier, memory; search",
     cmd_plan},
    {"run", "start N local ranks of a program (rendezvous, token, signals)", cmd_run},
    {"bench", "run and time a collective on N local ranks (nccl-tests table + model)", cmd_bench},
    {"wall", "the communication wall: step time, exposed comm, fabric vs GPUs; what-ifs", cmd_wall},
    {"fabric", "a fat-tree for the cluster: tiers, switches, optics, watts per GPU, latency",
     cmd_fabric},
    {"probe", "measure this host (memory, coherence, shm, tcp, system) and calibrate", cmd_probe},
    {NULL, NULL, NULL},
};

void cli_usage_main(FILE *out)
{
    fprintf(out, "usage: strata [COMMAND] [OPTIONS]\n\n"
                 "Model, simulate, run and measure the communication stack of distributed\n"
                 "AI training. With no command, runs `strata report` on the default cluster.\n\n"
                 "commands:\n");
    for (const cli_command_t *c = cli_commands; c->name; c++)
        fprintf(out, "  %-8s %s\n", c->name, c->summary);
    fprintf(out, "\n  strata help COMMAND     options of one command (= strata COMMAND --help)\n"
                 "  strata --version        print the version\n\n"
                 "Every command that prints results takes --json (JSON instead of text) and\n"
                 "-o FILE / --output FILE (write them to FILE instead of stdout); in bench\n"
                 "-o is the reduction operator, as in nccl-tests, so there only --output.\n\n"
                 "environment: STRATA_LOG=error|warn|info|debug, STRATA_DATA_DIR=DIR\n");
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "strata %s: %s (see 'strata %s --help')\n", cmd, msg, cmd);
    return CLI_USAGE;
}

int cli_fail(const strata_error_t *err)
{
    char buf[1024];
    fprintf(stderr, "strata: %s\n", strata_error_str(err, buf, sizeof(buf)));
    return CLI_FAIL;
}

int cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) return 0;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return 1;
    }
    return 0;
}

/* The strict parsers live in util (decimal only, ERANGE reported); this
 * file adds the range and the one-line message naming the flag. */
int cli_parse_size(const char *cmd, const char *opt, const char *arg, double max, double *out)
{
    double v = 0;
    char hi[32];
    int rc = cli_size_value(arg, &v);
    if (rc == 0 && v <= max) {
        *out = v;
        return 0;
    }
    cli_usage_error(cmd, "%s expects a size like 8, 64K, 1M or 8G (decimal, 0 to %s), got '%s'%s",
                    opt, strata_fmt_size(max, hi, sizeof(hi)), arg,
                    rc == -1 ? "" : ": out of range");
    return -1;
}

int cli_parse_int(const char *cmd, const char *opt, const char *arg, long min, long max, long *out)
{
    long v = 0;
    int rc = strata_parse_long(arg, &v);
    if (rc == 0 && v >= min && v <= max) {
        *out = v;
        return 0;
    }
    cli_usage_error(cmd, "%s expects an integer >= %ld and <= %ld (decimal), got '%s'%s", opt, min,
                    max, arg, rc == -1 ? "" : ": out of range");
    return -1;
}

int cli_parse_double(const char *cmd, const char *opt, const char *arg, double min, double max,
                     double *out)
{
    double v = 0;
    int rc = strata_parse_double(arg, &v);
    if (rc == 0 && v >= min && v <= max) {
        *out = v;
        return 0;
    }
    cli_usage_error(cmd, "%s expects a number >= %g and <= %g (decimal), got '%s'%s", opt, min, max,
                    arg, rc == -1 ? "" : ": out of range");
    return -1;
}

int cli_redirect_stdout(const char *cmd, const char *path)
{
    fflush(stdout);
    if (freopen(path, "w", stdout)) return CLI_OK;
    fprintf(stderr, "strata %s: cannot write '%s': %s\n", cmd, path, strerror(errno));
    return CLI_FAIL;
}

/* -o FILE, --output FILE, --output=FILE: taken out of a command's argv
 * before it parses the rest (up to "--"). Not for run, whose arguments
 * are the program's; in bench -o is nccl-tests' operator and in topo -o is
 * topo's own (dot also writes FILE.svg), so there only --output. Returns
 * the file (NULL: none) in *path_p; CLI_USAGE after a message. */
static int take_output(const char *cmd, int *argc, char **argv, const char **path_p)
{
    bool dash_o = strcmp(cmd, "bench") && strcmp(cmd, "topo");
    *path_p = NULL;
    if (!strcmp(cmd, "run")) return CLI_OK;
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "--")) {
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        if (!strncmp(a, "--output=", 9)) {
            v = a + 9;
        } else if (!strcmp(a, "--output") || (dash_o && !strcmp(a, "-o"))) {
            if (i + 1 >= *argc) return cli_usage_error(cmd, "%s needs a file name", a);
            v = argv[++i];
        } else {
            argv[out++] = argv[i];
            continue;
        }
        if (*path_p) return cli_usage_error(cmd, "-o/--output given twice");
        if (!*v) return cli_usage_error(cmd, "%s needs a file name", a);
        *path_p = v;
    }
    argv[out] = NULL;
    *argc = out;
    return CLI_OK;
}

static int run_command(const cli_command_t *c, int argc, char **argv)
{
    const char *path = NULL;
    int rc = take_output(c->name, &argc, argv, &path);
    if (rc != CLI_OK) return rc;
    if (path && !cli_wants_help(argc, argv) && (rc = cli_redirect_stdout(c->name, path))) return rc;
    rc = c->run(argc, argv);
    if (path && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "strata %s: cannot write '%s'\n", c->name, path);
        return CLI_FAIL;
    }
    return rc;
}

int main(int argc, char **argv)
{
    /* No command, or options only: the main job. */
    const char *name = argc < 2 ? "report" : argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        cli_usage_main(stdout);
        return CLI_OK;
    }
    if (strcmp(name, "help") == 0) return cli_help(argc - 1, argv + 1);
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("strata %s\ndata %s\n", strata_version(), strata_data_dir());
        return CLI_OK;
    }
    const cli_command_t *c = cli_find(name);
    if (!c && name[0] == '-' && name[1]) { /* `strata --json`: options of the main job */
        argv[0] = "report";
        return run_command(cli_find("report"), argc, argv);
    }
    if (!c) return cli_unknown_command(name);
    if (argc < 2) {
        char *def[] = {(char *)c->name, NULL};
        return run_command(c, 1, def);
    }
    return run_command(c, argc - 1, argv + 1);
}
