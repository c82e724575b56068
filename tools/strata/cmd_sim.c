/*
 * cmd_sim.c — `strata sim CLUSTER --op OP --size SIZE ...`: time one
 * collective on a modelled cluster with congestion (strata/sim.h) and print
 * time, algbw/busbw, link-class utilisation and bottleneck shares, the most
 * loaded links and the α-β (contention-free) prediction; optionally a
 * Chrome trace.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *const NAME = "sim";

static void usage(FILE *out)
{
    fprintf(out, "usage: strata sim CLUSTER --op OP --size SIZE [options]\n\n"
                 "Simulate a collective on CLUSTER with links shared max-min fairly between\n"
                 "the flows that cross them; report the time, which links were the\n"
                 "bottleneck, and the alpha-beta (contention-free) prediction.\n\n"
                 "CLUSTER is a topology spec (see `strata topo --help`): a preset such as\n"
                 "dgx-h100:128, a cluster file, or a builder like switch:8 or\n"
                 "railft:servers=128,gpus=8.\n\n"
                 "options:\n"
                 "  --op OP            allreduce, reducescatter, allgather, broadcast, reduce,\n"
                 "                     alltoall, sendrecv, barrier (default allreduce)\n"
                 "  --size SIZE        bytes as nccl-tests counts them, e.g. 1G (default 1G,\n"
                 "                     at most 1024T = 2^50 B); rounded down (by under 1 %%)\n"
                 "                     to equal blocks per rank\n"
                 "  --algo NAME        ring, tree, recdbl, rabenseifner, ... (default ring, or\n"
                 "                     where the ring does not implement OP the algorithm\n"
                 "                     `strata coll` chooses for it)\n"
                 "  --chunks N         pipeline chunks (default: the count the collective\n"
                 "                     layer's cost model chooses for this algorithm, size\n"
                 "                     and cluster, as `strata coll --explain` shows, at most\n"
                 "                     16384; 1 for a collective on a subset of the ranks)\n"
                 "  --group N          run it in every group of N consecutive ranks at once\n"
                 "                     (tensor-parallel style)\n"
                 "  --stride N         run it in every group of ranks r, r+N, r+2N ... at once\n"
                 "                     (data-parallel style)\n"
                 "  --also OP:SIZE[:group=N|:stride=N][:ALGO]\n"
                 "                     another collective at the same time, sharing the links\n"
                 "                     (repeatable; e.g. --also allreduce:256M:group=8)\n"
                 "  --routing R        spread (even split over equal-cost paths, default) or\n"
                 "                     ecmp (one hashed path per pair)\n"
                 "  --seed N           ECMP hash seed (default 1)\n"
                 "  --qps N            ECMP: connections per rank pair, each hashed on its own\n"
                 "                     (like NCCL_IB_QPS_PER_CONNECTION; 1 to 64, default 1)\n"
                 "  --mode M           barrier (phases in lockstep, repeated phases reused;\n"
                 "                     default) or async (per-rank dependencies only)\n"
                 "  --no-reuse         simulate every phase, every flow shared in the engine,\n"
                 "                     and concurrent collectives together event by event\n"
                 "                     (for checks and benchmarks)\n"
                 "  --no-fold          time no phase by parts (each shape once; for checks)\n"
                 "  --top N            most loaded links to list, 0 to 1000 (default 10)\n"
                 "  --trace FILE       write a Chrome trace (Perfetto, chrome://tracing)\n"
                 "  --trace-links N    busiest links given a track in the trace, 0 to 1000\n"
                 "                     (default 8)\n"
                 "  --json             one JSON object instead of text\n"
                 "  -o FILE            write the output to FILE (also --output FILE)\n");
}

/* One collective set: a collective run in one or several rank groups. */
typedef struct coll_set {
    strata_coll_t coll;
    strata_algo_t algo;
    double size;
    long group;      /* N consecutive ranks per group, 0 = all */
    long stride;     /* ranks r, r+N, ... per group, 0 = none */
    bool algo_given; /* --algo / :ALGO named; else the op's default (op_default_algo) */
} coll_set_t;

#define SIM_SETS_MAX  8
#define SIM_RANKS_MAX (1L << 24) /* --group, --stride: the largest cluster a spec builds */

typedef struct sim_args {
    const char *cluster;
    coll_set_t sets[SIM_SETS_MAX]; /* sets[0]: --op/--size/--algo/--group/--stride */
    int nsets;
    long chunks; /* 0: the cost model's choice */
    strata_sim_opts_t opts;
    bool json;
} sim_args_t;

static int need_arg(int argc, char **argv, int i)
{
    if (i + 1 < argc) return 0;
    cli_usage_error(NAME, "%s needs a value", argv[i]);
    return -1;
}

static int parse_coll(const char *arg, strata_coll_t *c)
{
    if (strata_coll_parse(arg, c) == 0) return 0;
    return cli_usage_error(NAME, "unknown collective '%s'", arg), -1;
}

static int parse_algo(const char *arg, strata_algo_t *a)
{
    if (strata_algo_parse(arg, a) == 0) return 0;
    return cli_usage_error(NAME, "unknown algorithm '%s'", arg), -1;
}

static int parse_choice(const char *opt, const char *arg, sim_args_t *a)
{
    if (strcmp(opt, "--op") == 0) return parse_coll(arg, &a->sets[0].coll);
    if (strcmp(opt, "--algo") == 0) {
        a->sets[0].algo_given = true;
        return parse_algo(arg, &a->sets[0].algo);
    }
    if (strcmp(opt, "--routing") == 0) {
        if (strcmp(arg, "spread") == 0)
            a->opts.routing = STRATA_SIM_SPREAD;
        else if (strcmp(arg, "ecmp") == 0)
            a->opts.routing = STRATA_SIM_ECMP;
        else
            return cli_usage_error(NAME, "--routing expects spread or ecmp, got '%s'", arg), -1;
        return 0;
    }
    if (strcmp(arg, "barrier") == 0)
        a->opts.mode = STRATA_SIM_BARRIER;
    else if (strcmp(arg, "async") == 0)
        a->opts.mode = STRATA_SIM_ASYNC;
    else
        return cli_usage_error(NAME, "--mode expects barrier or async, got '%s'", arg), -1;
    return 0;
}

/* --also OP:SIZE[:group=N|:stride=N][:ALGO] */
#define ALSO_FORM "OP:SIZE[:group=N|:stride=N][:ALGO]"
static int parse_also(const char *arg, sim_args_t *a)
{
    if (a->nsets == SIM_SETS_MAX)
        return cli_usage_error(NAME, "at most %d --also collectives", SIM_SETS_MAX - 1), -1;
    coll_set_t *c = &a->sets[a->nsets];
    *c = (coll_set_t){STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, 0, 0, 0, false};
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", arg);
    char *save = NULL, *tok = strtok_r(buf, ":", &save);
    if (!tok || strata_coll_parse(tok, &c->coll))
        return cli_usage_error(NAME,
                               "--also '%s': unknown collective '%s' (the form is " ALSO_FORM
                               ", e.g. allreduce:256M:group=8)",
                               arg, tok ? tok : ""),
               -1;
    tok = strtok_r(NULL, ":", &save);
    if (!tok) return cli_usage_error(NAME, "--also expects " ALSO_FORM ", got '%s'", arg), -1;
    if (cli_parse_size(NAME, "--also", tok, CLI_SIZE_MAX, &c->size)) return -1;
    while ((tok = strtok_r(NULL, ":", &save))) {
        if (strncmp(tok, "group=", 6) == 0) {
            if (cli_parse_int(NAME, "--also group=", tok + 6, 1, SIM_RANKS_MAX, &c->group))
                return -1;
        } else if (strncmp(tok, "stride=", 7) == 0) {
            if (cli_parse_int(NAME, "--also stride=", tok + 7, 1, SIM_RANKS_MAX, &c->stride))
                return -1;
        } else if (strata_algo_parse(tok, &c->algo)) {
            return cli_usage_error(NAME,
                                   "--also '%s': unknown algorithm '%s' (after OP:SIZE come "
                                   "group=N, stride=N or an algorithm)",
                                   arg, tok),
                   -1;
        } else {
            c->algo_given = true;
        }
    }
    a->nsets++;
    return 0;
}

static int parse_value(const char *opt, const char *arg, sim_args_t *a)
{
    long v;
    if (strcmp(opt, "--size") == 0)
        return cli_parse_size(NAME, opt, arg, CLI_SIZE_MAX, &a->sets[0].size);
    if (strcmp(opt, "--chunks") == 0)
        return cli_parse_int(NAME, opt, arg, 1, STRATA_SIM_CHUNKS_MAX, &a->chunks);
    if (strcmp(opt, "--group") == 0)
        return cli_parse_int(NAME, opt, arg, 1, SIM_RANKS_MAX, &a->sets[0].group);
    if (strcmp(opt, "--stride") == 0)
        return cli_parse_int(NAME, opt, arg, 1, SIM_RANKS_MAX, &a->sets[0].stride);
    if (strcmp(opt, "--also") == 0) return parse_also(arg, a);
    if (strcmp(opt, "--trace") == 0) {
        a->opts.trace_path = arg;
        return 0;
    }
    if (strcmp(opt, "--qps") == 0) {
        if (cli_parse_int(NAME, opt, arg, 1, 64, &v)) return -1;
        a->opts.conns = (uint32_t)v;
        return 0;
    }
    bool seed = strcmp(opt, "--seed") == 0;
    if (cli_parse_int(NAME, opt, arg, 0, seed ? LONG_MAX : 1000, &v)) return -1;
    if (seed)
        a->opts.seed = (uint64_t)v;
    else if (strcmp(opt, "--top") == 0)
        a->opts.top_links = (int)v;
    else
        a->opts.trace_links = (int)v;
    return 0;
}

static int parse_args(int argc, char **argv, sim_args_t *a)
{
    static const char *const choices[] = {"--op", "--algo", "--routing", "--mode", NULL};
    static const char *const values[] = {"--size", "--chunks",      "--trace", "--seed",
                                         "--qps",  "--top",         "--group", "--stride",
                                         "--also", "--trace-links", NULL};
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
        if (strcmp(o, "--json") == 0)
            a->json = true;
        else if (strcmp(o, "--no-reuse") == 0)
            a->opts.no_reuse = true;
        else if (strcmp(o, "--no-fold") == 0)
            a->opts.no_fold = true;
        else if (o[0] == '-')
            return cli_unknown_option(NAME, o), -1;
        else if (!a->cluster)
            a->cluster = o;
        else
            return cli_usage_error(NAME, "unexpected argument '%s'", o), -1;
    }
    if (!a->cluster) return cli_usage_error(NAME, "missing CLUSTER"), -1;
    return 0;
}

/* Element count for sched from an nccl-tests size (4-byte elements).
 * Rounded down to a multiple of the blocks the schedule cuts it into
 * (ranks × chunks for an allreduce, chunks for a block-per-rank
 * collective, times the ring's channels) when that changes it by under
 * 1 %: with equal blocks every
 * ring phase has the same pattern and is timed once, so a 16k-rank run
 * takes a second instead of half an hour. */
static uint64_t count_for(strata_coll_t coll, double size, uint32_t P, uint32_t chunks,
                          uint32_t channels)
{
    if (coll == STRATA_COLL_BARRIER) return 0; /* synchronisation only */
    double n = size / 4;
    bool per_rank = coll == STRATA_COLL_REDUCE_SCATTER || coll == STRATA_COLL_ALLGATHER ||
                    coll == STRATA_COLL_ALLTOALL;
    if (per_rank) n /= P;
    uint64_t c = n < 1 ? 1 : (uint64_t)n;
    uint64_t unit = (coll == STRATA_COLL_ALLREDUCE ? (uint64_t)P : 1) * (chunks ? chunks : 1) *
                    (channels ? channels : 1);
    if (c % unit && c - c % unit >= c - c / 100 && c >= unit) c -= c % unit;
    return c;
}

/* Ranks per group of a set on P endpoints, and how many groups; fails
 * with a message when the grouping does not divide P. */
static strata_status_t set_shape(const coll_set_t *c, uint32_t P, uint32_t *size_p,
                                 uint32_t *groups_p, strata_error_t *err)
{
    if (c->group && c->stride)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "a collective takes group= or stride=, not both");
    long n = c->group ? c->group : c->stride ? c->stride : 0;
    if (n && (n > (long)P || P % (uint32_t)n))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "%s %ld does not divide the cluster's %u ranks",
                                c->group ? "group" : "stride", n, P);
    *size_p = c->group ? (uint32_t)c->group : c->stride ? P / (uint32_t)c->stride : P;
    *groups_p = P / *size_p;
    return STRATA_OK;
}

/* Endpoint ranks of group g of a set. */
static void set_ranks(const coll_set_t *c, uint32_t size, uint32_t g, int32_t *ranks)
{
    for (uint32_t i = 0; i < size; i++)
        ranks[i] = c->stride ? (int32_t)(g + i * (uint32_t)c->stride) : (int32_t)(g * size + i);
}

typedef struct run_state {
    strata_sched_t *sched[SIM_SETS_MAX];
    uint16_t order[STRATA_MESH_RINGS_MAX * STRATA_MESH_MEMBERS_MAX]; /* mesh rings, scratch */
    uint32_t size[SIM_SETS_MAX], groups[SIM_SETS_MAX];
} run_state_t;

/* Ranks per server of a set's collective as the collective layer sees
 * them, for the algorithms built over servers (ring channels, tree, hier,
 * nvlstree, innet, and torus2d, whose rows are then the servers):
 * the schedule then is the algorithm sched's model prices. 0: none. */
static uint32_t set_group(const coll_set_t *c, const strata_topo_t *topo, uint32_t size)
{
    if (c->algo != STRATA_ALGO_RING && c->algo != STRATA_ALGO_TREE && c->algo != STRATA_ALGO_HIER &&
        c->algo != STRATA_ALGO_NVLSTREE && c->algo != STRATA_ALGO_INNET &&
        c->algo != STRATA_ALGO_TORUS2D)
        return 0;
    int32_t *ranks = calloc(size, sizeof(int32_t));
    if (!ranks) return 0;
    set_ranks(c, size, 0, ranks);
    uint32_t g = strata_coll_ranks_per_server(topo, ranks, size);
    free(ranks);
    return g > 1 && g < size ? g : 0;
}

/* The rings of a switchless mesh for a ring set (strata_coll_mesh_rings,
 * as sched's model runs them): how many (0: one ring), orders into order. */
static uint32_t set_rings(const coll_set_t *c, const strata_topo_t *topo, uint32_t size,
                          uint32_t group, uint16_t *order)
{
    if (c->algo != STRATA_ALGO_RING) return 0;
    int32_t *ranks = calloc(size, sizeof(int32_t));
    if (!ranks) return 0;
    set_ranks(c, size, 0, ranks);
    uint32_t k = strata_coll_mesh_rings(topo, ranks, size, group, order, NULL);
    free(ranks);
    return k > 1 ? k : 0;
}

/* Pipeline chunks of a set: --chunks, else the count sched's cost model
 * picks for this collective, algorithm and size on the whole cluster (the
 * schedule the model prices), else 1 (a set on a subset of the ranks,
 * which that machine does not describe, or an algorithm the model does
 * not price here). */
static uint32_t set_chunks(const sim_args_t *a, const coll_set_t *c, const strata_topo_t *topo,
                           uint32_t size, uint32_t P)
{
    if (a->chunks > 0) return (uint32_t)a->chunks;
    strata_coll_machine_t m;
    strata_coll_cost_t cost;
    strata_error_t ignored;
    if (size != P || strata_coll_machine_from_topo(topo, NULL, &m, &ignored) != STRATA_OK) return 1;
    if (c->algo == STRATA_ALGO_INNET && m.servers > 1) m.net_reduce = true; /* as simulated */
    if (strata_coll_cost(&m, c->coll, c->algo, c->size, &cost, &ignored) != STRATA_OK) return 1;
    if (cost.chunks > STRATA_SIM_CHUNKS_MAX) return STRATA_SIM_CHUNKS_MAX; /* huge sizes */
    return cost.chunks > 0 ? cost.chunks : 1;
}

/* The algorithm of a set given no --algo: the ring where the ring
 * implements the collective, else the one `strata coll` chooses for it
 * (the cheapest the cost model prices on this cluster, strata_coll_select),
 * else the first whose schedule builds. */
static strata_algo_t op_default_algo(const coll_set_t *c, const strata_topo_t *topo, uint32_t size)
{
    strata_sched_params_t p = {.coll = c->coll, .nranks = size, .count = size, .elem_size = 4};
    strata_error_t ignored;
    p.algo = STRATA_ALGO_RING;
    if (strata_sched_check(&p, &ignored) == STRATA_OK) return STRATA_ALGO_RING;
    strata_coll_machine_t m;
    strata_coll_cost_t best;
    if (strata_coll_machine_from_topo(topo, NULL, &m, &ignored) == STRATA_OK &&
        strata_coll_select(&m, c->coll, c->size, &best, &ignored) == STRATA_OK) {
        p.algo = best.algo;
        if (strata_sched_check(&p, &ignored) == STRATA_OK) return best.algo;
    }
    for (int al = 0; al < STRATA_ALGO_COUNT; al++) {
        p.algo = (strata_algo_t)al;
        if (strata_sched_check(&p, &ignored) == STRATA_OK) return p.algo;
    }
    return STRATA_ALGO_RING; /* sched_create then names what is wrong */
}

static strata_status_t make_scheds(sim_args_t *a, const strata_topo_t *topo, uint32_t P,
                                   run_state_t *st, strata_error_t *err)
{
    for (int k = 0; k < a->nsets; k++) {
        coll_set_t *c = &a->sets[k];
        strata_status_t rc = set_shape(c, P, &st->size[k], &st->groups[k], err);
        if (rc != STRATA_OK) return rc;
        if (!c->algo_given) c->algo = op_default_algo(c, topo, st->size[k]);
        strata_sched_params_t p = {0};
        p.coll = c->coll;
        p.algo = c->algo;
        p.nranks = st->size[k];
        p.group = set_group(c, topo, st->size[k]);
        p.rings = set_rings(c, topo, st->size[k], p.group, st->order);
        p.ring_order = p.rings ? st->order : NULL;
        /* a server with more NICs than ranks: a ring or tree channel a NIC
         * (ring.c, tree.c) */
        if ((c->algo == STRATA_ALGO_RING || c->algo == STRATA_ALGO_TREE) && st->size[k] == P &&
            !p.rings) {
            uint32_t g = p.group ? p.group : 1, r = strata_coll_rails(topo, g);
            p.rails = r > g && r % g == 0 && P / g > 1 ? r : 0;
        }
        p.chunks = set_chunks(a, c, topo, st->size[k], P);
        p.count = count_for(c->coll, c->size, st->size[k], p.chunks,
                            c->algo == STRATA_ALGO_RING ? (p.rails   ? p.rails
                                                           : p.group ? p.group
                                                                     : 1) *
                                                              (p.rings ? p.rings : 1)
                                                        : 1);
        p.elem_size = 4;
        if ((rc = strata_sched_create(&p, &st->sched[k], err)) != STRATA_OK) return rc;
    }
    return STRATA_OK;
}

/* Simulate sets [from, to) together. */
static strata_status_t run_sets(const sim_args_t *a, const strata_topo_t *topo,
                                const run_state_t *st, int from, int to,
                                const strata_sim_opts_t *opts, strata_sim_result_t *res,
                                strata_error_t *err)
{
    strata_sim_t *sim = NULL;
    int32_t *ranks = calloc((size_t)strata_topo_endpoint_count(topo) + 1, sizeof(int32_t));
    strata_status_t rc = ranks ? strata_sim_create(topo, opts, &sim, err)
                               : strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    for (int k = from; k < to && rc == STRATA_OK; k++)
        for (uint32_t g = 0; g < st->groups[k] && rc == STRATA_OK; g++) {
            set_ranks(&a->sets[k], st->size[k], g, ranks);
            rc = strata_sim_add(sim, st->sched[k], ranks, err);
        }
    if (rc == STRATA_OK) rc = strata_sim_run(sim, res, err);
    strata_sim_destroy(sim);
    free(ranks);
    return rc;
}

/* With several collectives: each set's finish time together and alone. */
static strata_status_t print_sets(const sim_args_t *a, const strata_topo_t *topo,
                                  const run_state_t *st, const strata_sim_result_t *res,
                                  strata_error_t *err)
{
    printf("\n  %-40s %12s %12s\n", "collectives at once", "together", "alone");
    uint32_t job = 0;
    for (int k = 0; k < a->nsets; k++) {
        double t = 0;
        for (uint32_t g = 0; g < st->groups[k]; g++, job++)
            if (job < res->njobs && res->job_time[job] > t) t = res->job_time[job];
        strata_sim_opts_t o = a->opts;
        o.trace_path = NULL;
        o.progress = false;
        strata_sim_result_t alone = {0};
        strata_status_t rc = run_sets(a, topo, st, k, k + 1, &o, &alone, err);
        if (rc != STRATA_OK) return rc;
        char what[64], sz[32], t1[32], t2[32];
        const coll_set_t *c = &a->sets[k];
        snprintf(what, sizeof(what), "%s %s, %u x %u ranks%s", strata_coll_name(c->coll),
                 strata_fmt_size(c->size, sz, sizeof(sz)), st->groups[k], st->size[k],
                 c->group    ? " (groups)"
                 : c->stride ? " (strided)"
                             : "");
        printf("  %-40s %12s %12s\n", what, strata_fmt_time(t, t1, sizeof(t1)),
               strata_fmt_time(alone.time, t2, sizeof(t2)));
        strata_sim_result_free(&alone);
    }
    return STRATA_OK;
}

static int simulate(sim_args_t *a, const strata_topo_t *topo, strata_error_t *err)
{
    run_state_t st = {0};
    strata_sim_result_t res = {0};
    uint32_t P = (uint32_t)strata_topo_endpoint_count(topo);
    strata_status_t rc = make_scheds(a, topo, P, &st, err);
    if (rc == STRATA_OK) rc = run_sets(a, topo, &st, 0, a->nsets, &a->opts, &res, err);
    if (rc == STRATA_OK) rc = strata_sim_result_print(&res, a->json, stdout, err);
    if (rc == STRATA_OK && !a->json && res.njobs > 1) rc = print_sets(a, topo, &st, &res, err);
    if (rc == STRATA_OK && a->opts.trace_path && !a->json)
        printf("\n  trace written to %s\n", a->opts.trace_path);
    strata_sim_result_free(&res);
    for (int k = 0; k < a->nsets; k++)
        strata_sched_destroy(st.sched[k]);
    return rc == STRATA_OK ? CLI_OK : CLI_FAIL;
}

int cmd_sim(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    sim_args_t a = {0};
    a.sets[0] = (coll_set_t){STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, 1073741824.0, 0, 0, false};
    a.nsets = 1;
    a.opts = strata_sim_opts_default();
    a.opts.progress = true;
    if (parse_args(argc, argv, &a)) return CLI_USAGE;
    strata_error_t err = {0};
    strata_link_catalog_t *cat = NULL;
    if (strata_link_catalog_load(NULL, &cat, &err) != STRATA_OK)
        cat = NULL; /* builder specs with bw= still work */
    strata_topo_t *topo = NULL;
    int rc = CLI_FAIL;
    if (strata_topo_load_spec(a.cluster, cat, &topo, &err) == STRATA_OK)
        rc = simulate(&a, topo, &err);
    if (rc != CLI_OK) cli_fail(&err);
    strata_topo_destroy(topo);
    strata_link_catalog_destroy(cat);
    return rc;
}
