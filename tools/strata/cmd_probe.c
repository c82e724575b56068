/*
 * cmd_probe.c — `strata probe [--quick] [--save FILE] [--json] [--peer
 * HOST:PORT] | --serve PORT`: measure this host and optionally write the
 * calibrated cluster file every other command accepts (docs/probe.md).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: strata probe [--quick] [--save FILE] [--json] [--peer HOST:PORT]\n"
            "       strata probe --serve PORT [--timeout S]\n\n"
            "Measure this host: memory read/write/copy bandwidth per NUMA node (temporal and\n"
            "non-temporal stores, one core and all cores), the core-to-core cache-line\n"
            "latency matrix, strata's shared-memory transport (alpha, beta, cost per rank\n"
            "when ranks outnumber cores), TCP latency and bandwidth, and system costs\n"
            "(process switch by sched_yield and by futex, futex wake, page fault). Medians\n"
            "and spread over repeats. A progress bar is drawn on stderr when it is a\n"
            "terminal (STRATA_PROGRESS=0: none).\n\n"
            "  --quick        under 10 s on an idle host (default: under a minute); a\n"
            "                 loaded host takes fewer samples a figure (one at the least),\n"
            "                 and a figure whose attempt stalls twice is not measured\n"
            "  --save FILE    write a cluster file of this host whose links carry the\n"
            "                 measured alpha/beta: strata coll FILE, strata bench --model FILE\n"
            "                 (nothing written when a figure it needs was not measured)\n"
            "  --json         the figures as JSON instead of the table\n"
            "  -o FILE        write the output to FILE (also --output FILE)\n"
            "  --peer H:P     TCP to a peer running 'strata probe --serve P' (default: loopback)\n"
            "  --serve P      answer one peer's TCP probe on port P, then exit\n"
            "  --timeout S    --serve: give up after S seconds without a peer (default 60)\n");
}

typedef struct probe_args {
    strata_probe_opts_t opts;
    const char *save;
    int json;
    long serve;
    double timeout;
} probe_args_t;

static int check_peer(const char *peer);

static int parse(int argc, char **argv, probe_args_t *a)
{
    *a = (probe_args_t){.timeout = 60};
    bool have_timeout = false;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--quick") == 0) {
            a->opts.quick = true;
            continue;
        }
        if (strcmp(o, "--json") == 0) {
            a->json = 1;
            continue;
        }
        if (strcmp(o, "--save") && strcmp(o, "--peer") && strcmp(o, "--serve") &&
            strcmp(o, "--timeout"))
            return cli_unknown_option("probe", o);
        if (!v) return cli_usage_error("probe", "option '%s' needs a value", o);
        i++;
        if (strcmp(o, "--save") == 0)
            a->save = v;
        else if (strcmp(o, "--peer") == 0)
            a->opts.peer = v;
        else if (strcmp(o, "--serve") == 0 && cli_parse_int("probe", o, v, 1, 65535, &a->serve))
            return CLI_USAGE;
        else if (strcmp(o, "--timeout") == 0 &&
                 (have_timeout = true, cli_parse_double("probe", o, v, 0.001, 3600, &a->timeout)))
            return CLI_USAGE;
    }
    if (a->opts.peer && check_peer(a->opts.peer) != CLI_OK) return CLI_USAGE;
    /* --serve answers another probe and measures nothing itself */
    if (a->serve && (a->opts.quick || a->json || a->save || a->opts.peer))
        return cli_usage_error("probe", "--serve takes only --timeout (the peer measures; "
                                        "--quick, --json, --save and --peer are its options)");
    if (!a->serve && have_timeout)
        return cli_usage_error("probe", "--timeout applies to --serve only");
    return CLI_OK;
}

/* --peer HOST:PORT: a host before the last ':' and a port 1..65535 after. */
static int check_peer(const char *peer)
{
    const char *colon = strrchr(peer, ':');
    long port;
    if (!colon || colon == peer)
        return cli_usage_error("probe", "--peer '%s': expected HOST:PORT", peer);
    return cli_parse_int("probe", "--peer PORT", colon + 1, 1, 65535, &port) ? CLI_USAGE : CLI_OK;
}

/* The --save file can be written: checked before the probe's minute, not
 * after it. A file that was not there is removed again. */
static int check_save(const char *path)
{
    bool existed = access(path, F_OK) == 0;
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "strata probe: cannot write '%s': %s\n", path, strerror(errno));
        return CLI_FAIL;
    }
    fclose(f);
    if (!existed) unlink(path);
    return CLI_OK;
}

int cmd_probe(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    probe_args_t a;
    int rc = parse(argc, argv, &a);
    if (rc != CLI_OK) return rc;
    strata_error_t err = {0};
    if (a.serve) {
        if (strata_probe_serve((int)a.serve, a.timeout, &err) != STRATA_OK) return cli_fail(&err);
        return CLI_OK;
    }
    if (a.save && (rc = check_save(a.save)) != CLI_OK) return rc;
    a.opts.progress = true; /* drawn only when stderr is a terminal */
    strata_probe_result_t *res = NULL;
    if (strata_probe_run(&a.opts, &res, &err) != STRATA_OK) return cli_fail(&err);
    if (a.json)
        rc = strata_probe_write_json(res, stdout, &err) == STRATA_OK ? CLI_OK : cli_fail(&err);
    else
        strata_probe_print(res, stdout);
    /* a figure of one value (a switch) has no neighbours to be read
     * between, as a curve's size has (strata_probe_calib_from) */
    const strata_probe_gap_t *scalar = NULL;
    for (int i = 0; i < res->gap_n && i < STRATA_PROBE_GAPS_MAX && !scalar; i++)
        if (res->gaps[i].calib && !(res->gaps[i].bytes > 0)) scalar = &res->gaps[i];
    if (!a.json && rc == CLI_OK && res->c2c_note[0])
        printf("\nbottleneck: not named: the coherence matrix was not measured (its line latency "
               "prices every synchronisation)\n");
    else if (!a.json && rc == CLI_OK && scalar)
        printf("\nbottleneck: not named: the %s was not measured (the calibration prices with "
               "it)\n",
               scalar->figure);
    else if (!a.json && rc == CLI_OK) {
        strata_probe_calib_t c;
        char buf[512];
        strata_probe_calib_from(res, &c);
        printf("\nbottleneck: %s\n", strata_probe_bottleneck(&c, res->cores, buf, sizeof(buf)));
        if (res->cores > 0)
            printf("            %s\n",
                   strata_probe_bottleneck(&c, 2 * res->cores, buf, sizeof(buf)));
    }
    if (rc == CLI_OK && a.save) {
        if (strata_probe_save(res, a.save, &err) != STRATA_OK)
            rc = cli_fail(&err);
        else if (!a.json)
            printf("\nsaved %s: strata coll %s, strata bench allreduce --model %s\n", a.save,
                   a.save, a.save);
    }
    strata_probe_destroy(res);
    return rc;
}
