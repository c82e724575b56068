/*
 * cmd_sim.c — `strata sim CLUSTER --op OP --size SIZE ...`: time one
 * collective on a modelled cluster with congestion (strata/sim.h) and print
 * time, algbw/busbw, link-class utilisation and bottleneck shares, the most
 * loaded links and the α-β (contention-free) prediction; optionally a
 * Chrome trace.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *const NAME = "sim";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: strata sim CLUSTER --op OP --size SIZE [options]\n\n"
            "Simulate a collective on CLUSTER with links shared max-min fairly between\n"
            "the flows that cross them; report the time, which links were the\n"
            "bottleneck, and the alpha-beta (contention-free) prediction.\n\n"
            "CLUSTER is a topology spec (see `strata topo --help`): a preset such as\n"
            "dgx-h100:128, a cluster file, or a builder like switch:8 or\n"
            "railft:servers=128,gpus=8.\n\n"
            "options:\n"
            "  --op OP            allreduce, reducescatter, allgather, broadcast, reduce,\n"
            "                     alltoall, sendrecv, barrier (default allreduce)\n"
            "  --size SIZE        bytes as nccl-tests counts them, e.g. 1G (default 1G)\n"
            "  --algo NAME        ring, tree, recdbl, rabenseifner, ... (default ring)\n"
            "  --chunks N         pipeline chunks (default 1)\n"
            "  --routing R        spread (even split over equal-cost paths, default) or\n"
            "                     ecmp (one hashed path per pair)\n"
            "  --seed N           ECMP hash seed (default 1)\n"
            "  --mode M           barrier (phases in lockstep, repeated phases reused;\n"
            "                     default) or async (per-rank dependencies only)\n"
            "  --no-reuse         simulate every phase (for checks and benchmarks)\n"
            "  --top N            most loaded links to list (default 10)\n"
            "  --trace FILE       write a Chrome trace (Perfetto, chrome://tracing)\n"
            "  --trace-links N    busiest links given a track in the trace (default 8)\n"
            "  --json             one JSON object instead of text\n");
}

typedef struct sim_args {
    const char *cluster;
    strata_coll_t coll;
    strata_algo_t algo;
    double size;
    long chunks;
    strata_sim_opts_t opts;
    bool json;
} sim_args_t;

static int need_arg(int argc, char **argv, int i)
{
    if (i + 1 < argc) return 0;
    cli_usage_error(NAME, "%s needs a value", argv[i]);
    return -1;
}

static int parse_choice(const char *opt, const char *arg, sim_args_t *a)
{
    if (strcmp(opt, "--op") == 0) {
        if (strata_coll_parse(arg, &a->coll) == 0) return 0;
        return cli_usage_error(NAME, "unknown collective '%s'", arg), -1;
    }
    if (strcmp(opt, "--algo") == 0) {
        if (strata_algo_parse(arg, &a->algo) == 0) return 0;
        return cli_usage_error(NAME, "unknown algorithm '%s'", arg), -1;
    }
    if (strcmp(opt, "--routing") == 0) {
        if (strcmp(arg, "spread") == 0) a->opts.routing = STRATA_SIM_SPREAD;
        else if (strcmp(arg, "ecmp") == 0) a->opts.routing = STRATA_SIM_ECMP;
        else return cli_usage_error(NAME, "--routing expects spread or ecmp, got '%s'", arg), -1;
        return 0;
    }
    if (strcmp(arg, "barrier") == 0) a->opts.mode = STRATA_SIM_BARRIER;
    else if (strcmp(arg, "async") == 0) a->opts.mode = STRATA_SIM_ASYNC;
    else return cli_usage_error(NAME, "--mode expects barrier or async, got '%s'", arg), -1;
    return 0;
}

static int parse_value(const char *opt, const char *arg, sim_args_t *a)
{
    long v;
    if (strcmp(opt, "--size") == 0) return cli_parse_size(NAME, opt, arg, &a->size);
    if (strcmp(opt, "--chunks") == 0) return cli_parse_int(NAME, opt, arg, 1, &a->chunks);
    if (strcmp(opt, "--trace") == 0) {
        a->opts.trace_path = arg;
        return 0;
    }
    if (cli_parse_int(NAME, opt, arg, 0, &v)) return -1;
    if (strcmp(opt, "--seed") == 0) a->opts.seed = (uint64_t)v;
    else if (strcmp(opt, "--top") == 0) a->opts.top_links = (int)(v > 1000 ? 1000 : v);
    else a->opts.trace_links = (int)(v > 1000 ? 1000 : v);
    return 0;
}

static int parse_args(int argc, char **argv, sim_args_t *a)
{
    static const char *const choices[] = {"--op", "--algo", "--routing", "--mode", NULL};
    static const char *const values[] = {"--size",  "--chunks", "--trace", "--seed",
                                         "--top",   "--trace-links", NULL};
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        bool done = false;
        for (int k = 0; choices[k] && !done; k++)
            if (strcmp(o, choices[k]) == 0) {
                if (need_arg(argc, argv, i) || parse_choice(o, argv[++i], a)) return -1;
                done = true;
            }
        for (int k = 0; values[k] && !done; k++)
            if (strcmp(o, values[k]) == 0) {
                if (need_arg(argc, argv, i) || parse_value(o, argv[++i], a)) return -1;
                done = true;
            }
        if (done) continue;
        if (strcmp(o, "--json") == 0) a->json = true;
        else if (strcmp(o, "--no-reuse") == 0) a->opts.no_reuse = true;
        else if (o[0] == '-') return cli_usage_error(NAME, "unknown option '%s'", o), -1;
        else if (!a->cluster) a->cluster = o;
        else return cli_usage_error(NAME, "unexpected argument '%s'", o), -1;
    }
    if (!a->cluster) return cli_usage_error(NAME, "missing CLUSTER"), -1;
    return 0;
}

/* Element count for sched from an nccl-tests size (4-byte elements). */
static uint64_t count_for(strata_coll_t coll, double size, uint32_t P)
{
    if (coll == STRATA_COLL_BARRIER) return 0; /* synchronisation only */
    double n = size / 4;
    if (coll == STRATA_COLL_REDUCE_SCATTER || coll == STRATA_COLL_ALLGATHER ||
        coll == STRATA_COLL_ALLTOALL)
        n /= P;
    return n < 1 ? 1 : (uint64_t)n;
}

static int simulate(const sim_args_t *a, const strata_topo_t *topo, strata_error_t *err)
{
    strata_sched_params_t p = {0};
    p.coll = a->coll;
    p.algo = a->algo;
    p.nranks = (uint32_t)strata_topo_endpoint_count(topo);
    p.count = count_for(a->coll, a->size, p.nranks);
    p.elem_size = 4;
    p.chunks = (uint32_t)a->chunks;
    strata_sched_t *s = NULL;
    strata_sim_t *sim = NULL;
    strata_sim_result_t res = {0};
    int rc = CLI_FAIL;
    if (strata_sched_create(&p, &s, err) != STRATA_OK) goto done;
    if (strata_sim_create(topo, &a->opts, &sim, err) != STRATA_OK) goto done;
    if (strata_sim_add(sim, s, NULL, err) != STRATA_OK) goto done;
    if (strata_sim_run(sim, &res, err) != STRATA_OK) goto done;
    if (strata_sim_result_print(&res, a->json, stdout, err) != STRATA_OK) goto done;
    if (a->opts.trace_path && !a->json) printf("\n  trace written to %s\n", a->opts.trace_path);
    rc = CLI_OK;
done:
    strata_sim_result_free(&res);
    strata_sim_destroy(sim);
    strata_sched_destroy(s);
    return rc;
}

int cmd_sim(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    sim_args_t a = {NULL, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, 1073741824.0, 1,
                    strata_sim_opts_default(), false};
    a.opts.progress = true;
    if (parse_args(argc, argv, &a)) return CLI_USAGE;
    strata_error_t err = {0};
    strata_link_catalog_t *cat = NULL;
    if (strata_link_catalog_load(NULL, &cat, &err) != STRATA_OK) cat = NULL; /* builder specs with bw= still work */
    strata_topo_t *topo = NULL;
    int rc = CLI_FAIL;
    if (strata_topo_load_spec(a.cluster, cat, &topo, &err) == STRATA_OK) rc = simulate(&a, topo, &err);
    if (rc != CLI_OK) cli_fail(&err);
    strata_topo_destroy(topo);
    strata_link_catalog_destroy(cat);
    return rc;
}
