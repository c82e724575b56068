/*
 * report_coll.c — the collective section of `strata report`: AllReduce,
 * AllGather and AlltoAll bus bandwidth versus message size on the report's
 * cluster, with the algorithm strata would choose at each size, the sizes
 * where the choice changes, and what bounds the largest message.
 *
 * The table is the library's verdict (strata_verdict_create, without its
 * simulated ring: the model's figures only), printed as text by
 * strata_verdict_print_coll_text; the JSON members are written here. All
 * figures come from the α-β-γ model of strata/sched.h on the report's one
 * loaded topology, as `strata coll CLUSTER` reads it.
 */
#include "cli_report.h"

#include <string.h>

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

static void json_rows(report_json_t *j, const strata_verdict_t *v)
{
    rj_open(j, "sizes", '[');
    for (int k = 0; k < STRATA_VERDICT_TABLE_SIZES; k++) {
        rj_open(j, NULL, '{');
        rj_num(j, "bytes", v->table_sizes[k]);
        for (int i = 0; i < STRATA_VERDICT_TABLE_OPS; i++) {
            const strata_coll_cost_t *c = &v->table[i][k];
            if (!v->table_ok[i][k]) continue;
            rj_open(j, strata_coll_name(v->table_ops[i]), '{');
            rj_num(j, "busbw_Bps", c->busbw);
            rj_str(j, "algorithm", strata_algo_name(c->algo));
            rj_str(j, "bound", c->bound);
            rj_close(j, '}');
        }
        rj_close(j, '}');
    }
    rj_close(j, ']');
}

/* The model's figures only: the verdict without its simulated ring. */
static strata_status_t run(const report_ctx_t *ctx, strata_error_t *err)
{
    strata_verdict_opts_t o = {.no_sim = true};
    strata_verdict_t *v = NULL;
    strata_status_t st = strata_verdict_create(ctx->topo, ctx->links, &o, &v, err);
    if (st) return st;
    if (ctx->json) {
        json_machine(ctx->json, &v->machine);
        json_rows(ctx->json, v);
    } else {
        strata_verdict_print_coll_text(v, ctx->spec, ctx->out);
    }
    strata_verdict_destroy(v);
    return STRATA_OK;
}

const report_section_t report_coll_section = {
    .name = "coll",
    .title = "Collectives: predicted bus bandwidth and the algorithm chosen",
    .run = run,
};
