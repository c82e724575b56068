/*
 * report_coll.c — the collective section of `strata report`: AllReduce,
 * AllGather and AlltoAll bus bandwidth versus message size on the report's
 * cluster, with the algorithm strata would choose at each size, the sizes
 * where the choice changes, and what bounds the largest message.
 *
 * The cluster is built from the report's description with the topology
 * builders (servers of GPUs on scale-up switches, one NIC per GPU on a
 * rail-optimised fat-tree); all figures come from the α-β-γ model of
 * strata/sched.h, itself fed by the link catalog and the topology routes.
 */
#include "cli_report.h"

#include <string.h>

/* The report cluster as a topology. The builder gives every GPU the same
 * links to each switch chip, so the GPU's whole scale-up port count (the
 * catalog's links per device) is joined to one chip: same bandwidth. */
static strata_status_t build(const report_ctx_t *ctx, strata_topo_t **t_p, strata_error_t *err)
{
    const report_cluster_t *c = ctx->cluster;
    const strata_link_t *up = strata_link_find(ctx->links, c->scale_up);
    if (!up)
        return strata_error_set(err, STRATA_ERR_NOT_FOUND,
                                "cluster %s uses link '%s', which the "
                                "catalog lacks",
                                c->name, c->scale_up);
    strata_topo_server_t sv = {.name = c->name,
                               .accels = c->gpus_per_node,
                               .scaleup_switches = c->scale_up_switch[0] ? 1 : 0,
                               .scaleup = strata_topo_linkspec_kind(c->scale_up, up->links),
                               .nics = c->nics_per_node,
                               .pcie = strata_topo_linkspec_kind(c->host_link, 1),
                               .nic_net = strata_topo_linkspec_kind(c->nic, 1)};
    /* the fabric of the topology section (report_topo.c): radix-64 switches
     * (Quantum-2, links.md NDR row), the fewest tiers that hold the NICs */
    int64_t nics = (int64_t)c->nodes * c->nics_per_node;
    int64_t leaves = (int64_t)(c->nodes + 31) / 32 * c->nics_per_node;
    strata_topo_fattree_t net = {.k = 64};
    net.tiers = c->nodes == 1 ? 0 : nics <= 64 ? 1 : leaves <= 64 ? 2 : 3;
    return strata_topo_build_cluster(&sv, c->nodes, &net, true, ctx->links, t_p, err);
}

static const strata_coll_t ops[] = {STRATA_COLL_ALLREDUCE, STRATA_COLL_ALLGATHER,
                                    STRATA_COLL_ALLTOALL};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

static void print_rows(FILE *out, const strata_coll_machine_t *m)
{
    fprintf(out, "  %10s", "size");
    for (size_t i = 0; i < NOPS; i++)
        fprintf(out, "  %-24s", strata_coll_name(ops[i]));
    fprintf(out, "\n  %10s", "");
    for (size_t i = 0; i < NOPS; i++)
        fprintf(out, "  %-24s", "busbw GB/s  algorithm");
    fprintf(out, "\n");
    for (double s = 1024; s <= 8.0 * (1 << 30); s *= 8) {
        char b[32];
        double v = s;
        const char *u = "B";
        if (v >= 1 << 30)
            v /= 1 << 30, u = "GiB";
        else if (v >= 1 << 20)
            v /= 1 << 20, u = "MiB";
        else if (v >= 1 << 10)
            v /= 1 << 10, u = "KiB";
        snprintf(b, sizeof(b), "%.0f %s", v, u);
        fprintf(out, "  %10s", b);
        for (size_t i = 0; i < NOPS; i++) {
            strata_coll_cost_t c;
            if (strata_coll_select(m, ops[i], s, &c, NULL) == STRATA_OK)
                fprintf(out, "  %10.4g  %-12s", c.busbw / 1e9, strata_algo_name(c.algo));
            else
                fprintf(out, "  %-24s", "-");
        }
        fprintf(out, "\n");
    }
}

static void print_findings(FILE *out, const strata_coll_machine_t *m)
{
    for (size_t i = 0; i < NOPS; i++) {
        double sizes[8];
        strata_algo_t algos[8];
        strata_coll_cost_t lo, hi;
        if (strata_coll_select(m, ops[i], 8, &lo, NULL) ||
            strata_coll_select(m, ops[i], 8.0 * (1 << 30), &hi, NULL))
            continue;
        size_t n = strata_coll_crossovers(m, ops[i], 8, 8.0 * (1 << 30), sizes, algos, 8);
        fprintf(out, "  %s: %s from 8 B", strata_coll_name(ops[i]), strata_algo_name(lo.algo));
        for (size_t k = 0; k < n; k++)
            fprintf(out, ", %s from %.3g MiB", strata_algo_name(algos[k]), sizes[k] / (1 << 20));
        fprintf(out, "; at 8 GiB %s-bound\n", hi.bound);
    }
}

static strata_status_t run(const report_ctx_t *ctx, strata_error_t *err)
{
    strata_topo_t *t = NULL;
    strata_coll_machine_t m;
    strata_status_t st = build(ctx, &t, err);
    if (!st) st = strata_coll_machine_from_topo(t, ctx->links, &m, err);
    strata_topo_destroy(t);
    if (st) return st;
    FILE *out = ctx->out;
    char a[32], b[32];
    fprintf(out,
            "%u GPUs = %u servers x %u; scale-up %s GB/s per GPU pair, network %s GB/s per "
            "NIC x %u per server (alpha-beta-gamma model, 'strata coll' for detail)\n\n",
            m.nranks, m.servers, m.per_server, report_gbs(m.bw_intra, a, sizeof(a)),
            report_gbs(m.bw_nic, b, sizeof(b)), m.nics);
    print_rows(out, &m);
    fprintf(out, "\nchoices and bottlenecks:\n");
    print_findings(out, &m);
    return STRATA_OK;
}

const report_section_t report_coll_section = {
    .name = "coll",
    .title = "Collectives: predicted bus bandwidth and the algorithm chosen",
    .run = run,
};
