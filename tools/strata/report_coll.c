/*
 * report_coll.c — the collective section of `strata report`: AllReduce,
 * AllGather and AlltoAll bus bandwidth versus message size on the report's
 * cluster, with the algorithm strata would choose at each size, the sizes
 * where the choice changes, and what bounds the largest message.
 *
 * The model reads the report's one loaded topology
 * (strata_coll_machine_from_topo, as `strata coll CLUSTER` does); all
 * figures come from the α-β-γ model of strata/sched.h, itself fed by the
 * link catalog and the topology routes.
 */
#include "cli_report.h"

#include <string.h>

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

static void json_machine(report_json_t *j, const strata_coll_machine_t *m)
{
    rj_open(j, "machine", '{');
    rj_int(j, "gpus", m->nranks);
    rj_int(j, "servers", m->servers);
    rj_int(j, "per_server", m->per_server);
    rj_int(j, "nics_per_server", m->nics);
    rj_num(j, "bw_intra_Bps", m->bw_intra);
    rj_num(j, "bw_nic_Bps", m->bw_nic);
    rj_num(j, "reduce_Bps", m->reduce_bw);
    rj_str(j, "memory", m->memory_kind);
    rj_str(j, "memory_source", strata_coll_memory_source(m));
    rj_close(j, '}');
}

static void json_rows(report_json_t *j, const strata_coll_machine_t *m)
{
    rj_open(j, "sizes", '[');
    for (double s = 1024; s <= 8.0 * (1 << 30); s *= 8) {
        rj_open(j, NULL, '{');
        rj_num(j, "bytes", s);
        for (size_t i = 0; i < NOPS; i++) {
            strata_coll_cost_t c;
            if (strata_coll_select(m, ops[i], s, &c, NULL) != STRATA_OK) continue;
            rj_open(j, strata_coll_name(ops[i]), '{');
            rj_num(j, "busbw_Bps", c.busbw);
            rj_str(j, "algorithm", strata_algo_name(c.algo));
            rj_str(j, "bound", c.bound);
            rj_close(j, '}');
        }
        rj_close(j, '}');
    }
    rj_close(j, ']');
}

static strata_status_t run(const report_ctx_t *ctx, strata_error_t *err)
{
    strata_coll_machine_t m;
    strata_status_t st = strata_coll_machine_from_topo(ctx->topo, ctx->links, &m, err);
    if (st) return st;
    if (ctx->json) {
        json_machine(ctx->json, &m);
        json_rows(ctx->json, &m);
        return STRATA_OK;
    }
    FILE *out = ctx->out;
    char a[32], b[32];
    fprintf(out, "  %u GPUs = %u server%s x %u; scale-up %s GB/s per GPU pair", m.nranks, m.servers,
            m.servers == 1 ? "" : "s", m.per_server, report_gbs(m.bw_intra, a, sizeof(a)));
    if (m.servers > 1)
        fprintf(out, ", network %s GB/s\n  per NIC x %u per server", report_gbs(m.bw_nic, b, 32),
                m.nics);
    fprintf(out, "\n  (alpha-beta-gamma model; 'strata coll %s' for detail)\n\n", ctx->spec);
    print_rows(out, &m);
    fprintf(out, "\n  choices and bottlenecks:\n");
    print_findings(out, &m);
    return STRATA_OK;
}

const report_section_t report_coll_section = {
    .name = "coll",
    .title = "Collectives: predicted bus bandwidth and the algorithm chosen",
    .run = run,
};
