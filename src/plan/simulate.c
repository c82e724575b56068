/*
 * simulate.c — the traffic of a plan timed by the simulator, beside the
 * collective model's figures: the model prices one group alone on its
 * share of the links; the simulator runs every group of the dimension at
 * once on the real topology (flows shared max-min fairly), so contention
 * the share does not capture — an oversubscribed fabric, groups whose
 * NIC traffic collides in the spine — shows as a difference.
 *
 * Each kind of traffic becomes one schedule (sched's generator for the
 * algorithm the model chose, the group's ranks per server as its group
 * parameter; ring when that algorithm cannot be built), added once per
 * group on that group's endpoint ranks, run in ASYNC mode.
 */
#include "plan.h"
#include "strata/sim.h"

#include <string.h>

#define ELEM 4u

/* The schedule parameters of one traffic entry. */
static void sched_params(const strata_plan_traffic_t *t, uint32_t per, strata_sched_params_t *p)
{
    memset(p, 0, sizeof(*p));
    if (!strcmp(t->op, "send/recv"))
        p->coll = STRATA_COLL_SENDRECV;
    else if (strata_coll_parse(t->op, &p->coll))
        p->coll = STRATA_COLL_ALLREDUCE;
    if (strata_algo_parse(t->algo, &p->algo)) p->algo = STRATA_ALGO_RING;
    p->nranks = (uint32_t)t->group, p->elem_size = ELEM;
    double n = t->bytes / ELEM;
    if (p->coll == STRATA_COLL_REDUCE_SCATTER || p->coll == STRATA_COLL_ALLGATHER ||
        p->coll == STRATA_COLL_ALLTOALL)
        n /= t->group;
    p->count = n < 1 ? 1 : (uint64_t)n;
    bool grouped = p->algo == STRATA_ALGO_RING || p->algo == STRATA_ALGO_TREE ||
                   p->algo == STRATA_ALGO_HIER || p->algo == STRATA_ALGO_NVLSTREE ||
                   p->algo == STRATA_ALGO_INNET;
    p->group = grouped && per > 0 && per < p->nranks ? per : 0;
}

static strata_status_t make_sched(const strata_plan_traffic_t *t, uint32_t per,
                                  strata_sched_t **s_p, strata_error_t *err)
{
    strata_sched_params_t p;
    sched_params(t, per, &p);
    if (strata_sched_create(&p, s_p, NULL) == STRATA_OK) return STRATA_OK;
    p.algo = p.coll == STRATA_COLL_ALLTOALL || p.coll == STRATA_COLL_SENDRECV ? STRATA_ALGO_PAIRWISE
                                                                              : STRATA_ALGO_RING;
    p.group = 0;
    return strata_sched_create(&p, s_p, err);
}

/* One call of entry t, every group of its dimension at once. */
static strata_status_t sim_entry(const strata_plan_ctx_t *ctx, const strata_plan_traffic_t *t,
                                 double *time_p, strata_error_t *err)
{
    int G = ctx->gpus, n = t->group, st = t->stride;
    int32_t *ranks = util_malloc((size_t)n * sizeof(int32_t));
    strata_sim_opts_t o = strata_sim_opts_default();
    strata_sim_t *sim = NULL;
    strata_sched_t *s = NULL;
    strata_sim_result_t res;
    memset(&res, 0, sizeof(res));
    o.mode = STRATA_SIM_ASYNC;
    if (!ranks) return strata_error_set(err, STRATA_ERR_NOMEM, "plan: out of memory");
    for (int i = 0; i < n; i++)
        ranks[i] = (int32_t)((long)i * st);
    uint32_t per = strata_coll_ranks_per_server(ctx->topo, ranks, (uint32_t)n);
    strata_status_t rc = make_sched(t, per, &s, err);
    if (!rc) rc = strata_sim_create(ctx->topo, &o, &sim, err);
    /* the groups: every base rank whose coordinate in this dimension is 0
     * (for PP, the pairs across the first stage boundary) */
    for (int b = 0; !rc && b < G; b++) {
        if ((b / st) % n || (long)b + (long)(n - 1) * st >= G) continue;
        for (int i = 0; i < n; i++)
            ranks[i] = (int32_t)(b + (long)i * st);
        rc = strata_sim_add(sim, s, ranks, err);
    }
    if (!rc) rc = strata_sim_run(sim, &res, err);
    if (!rc) *time_p = res.time;
    strata_sim_result_free(&res);
    strata_sim_destroy(sim);
    strata_sched_destroy(s);
    util_free(ranks);
    return rc;
}

strata_status_t strata_plan_simulate(const strata_plan_ctx_t *ctx, strata_plan_result_t *r,
                                     int max_gpus, strata_error_t *err)
{
    if (ctx->gpus > max_gpus)
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "plan: --sim is limited to %d GPUs (the cluster has %d)", max_gpus,
                                ctx->gpus);
    for (int i = 0; i < r->ntraffic; i++) {
        strata_plan_traffic_t *t = &r->traffic[i];
        double one = 0;
        if (t->bytes <= 0) continue;
        strata_status_t rc = sim_entry(ctx, t, &one, err);
        if (rc) return rc;
        t->sim_time = one * t->calls;
    }
    return STRATA_OK;
}
