/*
 * verdict.c — which layer of the stack bounds a large allreduce on a
 * cluster, and why (strata/verdict.h); with a workload, the planner's best
 * plan beside it.
 *
 * Design: every figure comes from the layer that owns it — tiers from the
 * topology's links (tiers.c), costs and the choice of algorithm from
 * sched's α-β-γ model, the congested ring from the simulator, the plan
 * from the planner — and this file only joins them: it names the layer
 * the best algorithm's bound belongs to (by matching the model's link
 * kinds to the tiers), the shares of its time, and the gap to the ring as
 * simulated. The sections of `strata report` (links.c, topology.c, the
 * routings of sim.c) are filled here too, each when asked for, so a C
 * user gets the whole analysis `strata report` prints and the command
 * only renders it.
 */
#include "verdict.h"
#include "util.h"

#include <string.h>

/* Defaults of `strata report`'s strategy section: 16 sequences per GPU per
 * step, and beyond 4,096 GPUs a fixed plan (TP = the server's GPUs, at
 * most 8) instead of the search, to keep the analysis quick. */
#define VERDICT_SEQ_PER_GPU 16
#define VERDICT_SEARCH_GPUS 4096
#define VERDICT_TOP_LINKS   10

/* ==== Sections ==== */

static const char *const section_names[STRATA_VERDICT_SECTION_COUNT] = {
    "links", "topology", "coll", "sim", "strategy", "bottleneck"};

const char *strata_verdict_section_name(strata_verdict_section_t s)
{
    return s >= 0 && s < STRATA_VERDICT_SECTION_COUNT ? section_names[s] : "unknown";
}

int strata_verdict_section_find(const char *name)
{
    for (int i = 0; name && i < STRATA_VERDICT_SECTION_COUNT; i++)
        if (strcmp(name, section_names[i]) == 0) return i;
    return -1;
}

static bool wants(const strata_verdict_t *v, strata_verdict_section_t s)
{
    return (v->sections >> s) & 1u;
}

/* ==== Layers ==== */

const char *strata_verdict_class_layer(const strata_verdict_t *v, const strata_sim_class_t *c)
{
    if (!c) return "latency";
    if (c->tier >= 1) return "scale-out network";
    const char *kind = strchr(c->name, '/');
    const char *up = v->tiers.kind[STRATA_TIER_UP];
    if (kind && up[0] && strcmp(kind + 1, up) == 0) return "scale-up";
    return "host/PCIe";
}

/* The layer a link kind belongs to, by the tiers; fallback when the kind
 * is none of theirs (then no bandwidth). */
static const char *kind_layer(const strata_verdict_tiers_t *t, const char *kind,
                              const char *fallback, double *bw_p)
{
    static const char *const names[] = {"scale-up", "scale-out network", "host/PCIe"};
    static const strata_tier_t order[] = {STRATA_TIER_UP, STRATA_TIER_NET, STRATA_TIER_HOST};
    for (int i = 0; i < 3; i++)
        if (t->kind[order[i]][0] && strcmp(kind, t->kind[order[i]]) == 0) {
            *bw_p = t->bw[order[i]];
            return names[i];
        }
    *bw_p = 0;
    return fallback;
}

/* The layer the model's bound names, and its per-GPU bandwidth. */
static const char *bound_layer(const strata_verdict_t *v, const char *bound, double *bw_p)
{
    *bw_p = 0;
    if (strcmp(bound, "network bandwidth") == 0)
        return kind_layer(&v->tiers, v->machine.inter_kind, "scale-out network", bw_p);
    if (strcmp(bound, "scale-up bandwidth") == 0) {
        const char *layer = kind_layer(&v->tiers, v->machine.intra_kind, "scale-up", bw_p);
        /* PCIe peers move the data with SM stores (cost.c's pcie_store_share):
         * the figure the model priced, not the link's copy-engine rate */
        double f = v->machine.store_share;
        if (f > 0 && f < 1) *bw_p *= f;
        return layer;
    }
    if (strcmp(bound, "reduction") == 0) {
        *bw_p = v->machine.reduce_bw;
        return "memory (reduction)";
    }
    return "latency";
}

/* ==== The pieces ==== */

static void curves(strata_verdict_t *v)
{
    const strata_coll_machine_t *m = &v->machine;
    for (int i = 0; i < STRATA_VERDICT_SIZES; i++) {
        double s = v->sizes[i] = 1024.0 * (double)(1ull << i);
        strata_coll_cost_t c;
        for (int a = 0; a < STRATA_ALGO_COUNT; a++)
            v->busbw[a][i] = strata_coll_cost(m, STRATA_COLL_ALLREDUCE, (strata_algo_t)a, s, &c,
                                              NULL) == STRATA_OK
                                 ? c.busbw
                                 : 0;
        v->chosen[i] = strata_coll_select(m, STRATA_COLL_ALLREDUCE, s, &c, NULL) == STRATA_OK
                           ? (int)c.algo
                           : -1;
    }
    v->ncross = strata_coll_crossovers(m, STRATA_COLL_ALLREDUCE, v->sizes[0],
                                       v->sizes[STRATA_VERDICT_SIZES - 1], v->cross_sizes,
                                       v->cross_algos, STRATA_VERDICT_CROSS);
}

/* The table `strata report`'s collective section prints, and where the
 * selection changes between 8 B and 8 GiB. */
static void table(strata_verdict_t *v)
{
    static const strata_coll_t ops[STRATA_VERDICT_TABLE_OPS] = {
        STRATA_COLL_ALLREDUCE, STRATA_COLL_ALLGATHER, STRATA_COLL_ALLTOALL};
    const strata_coll_machine_t *m = &v->machine;
    const double lo = 8, hi = 8.0 * (1 << 30);
    for (int i = 0; i < STRATA_VERDICT_TABLE_OPS; i++) {
        v->table_ops[i] = ops[i];
        for (int k = 0; k < STRATA_VERDICT_TABLE_SIZES; k++) {
            double s = v->table_sizes[k] = 1024.0 * (double)(1ull << (3 * k));
            v->table_ok[i][k] = strata_coll_select(m, ops[i], s, &v->table[i][k], NULL) == 0;
        }
        strata_verdict_choice_t *c = &v->choices[i];
        c->ok = strata_coll_select(m, ops[i], lo, &c->lo, NULL) == STRATA_OK &&
                strata_coll_select(m, ops[i], hi, &c->hi, NULL) == STRATA_OK;
        if (c->ok)
            c->ncross =
                strata_coll_crossovers(m, ops[i], lo, hi, c->sizes, c->algos, STRATA_VERDICT_CROSS);
    }
}

static void conclude(strata_verdict_t *v)
{
    const strata_coll_cost_t *b = &v->best;
    v->layer = bound_layer(v, b->bound, &v->layer_bw);
    double bw_term = b->beta > b->gamma ? b->beta : b->gamma;
    v->bw_share = (strcmp(v->layer, "latency") ? bw_term : b->alpha) / b->time;
    v->lat_share = b->alpha / b->time;
    if (!v->have_sim) return;
    const strata_sim_class_t *k = v->sim_top >= 0 ? &v->sim.classes[v->sim_top] : NULL;
    v->sim_layer = strata_verdict_class_layer(v, k);
    v->sim_share = k ? k->bound_share : v->sim.latency_share;
    v->best_over_sim = v->sim.busbw > 0 ? b->busbw / v->sim.busbw : 0;
}

/* The planner's best plan, as `strata report`'s strategy section plans it. */
static strata_status_t plan_best(const strata_plan_ctx_t *ctx, int seq_per_gpu,
                                 strata_plan_result_t *r, strata_error_t *err)
{
    strata_plan_config_t c;
    strata_plan_config_default(&c);
    int gpus = strata_plan_ctx_gpus(ctx), n = 0;
    c.gbs = seq_per_gpu * gpus;
    if (gpus <= VERDICT_SEARCH_GPUS) return strata_plan_search(ctx, &c, c.gbs, r, 1, &n, NULL, err);
    c.tp = 8;
    while (gpus % c.tp)
        c.tp /= 2;
    c.dp = gpus / c.tp;
    return strata_plan_eval(ctx, &c, r, err);
}

static strata_status_t plan(strata_verdict_t *v, const strata_link_catalog_t *cat,
                            const strata_verdict_opts_t *o, strata_error_t *err)
{
    strata_status_t st = strata_workload_load(o->workload, &v->workload, err);
    if (st) return st;
    const char *mem = strata_topo_device(v->topo, strata_topo_endpoint(v->topo, 0)).memory;
    strata_accel_t a;
    if (!mem || strata_accel_for_memory(NULL, mem, &a, NULL)) {
        snprintf(v->plan_skip, sizeof(v->plan_skip), "no accelerator memory recorded");
        v->plan_no_memory = true;
        return STRATA_OK;
    }
    strata_plan_ctx_t *pc = NULL;
    strata_error_t e;
    strata_error_clear(&e);
    st = strata_plan_ctx_create(&v->workload, &a, v->topo, cat, &pc, &e);
    if (!st)
        st = plan_best(pc, o->seq_per_gpu > 0 ? o->seq_per_gpu : VERDICT_SEQ_PER_GPU, &v->plan, &e);
    strata_plan_ctx_destroy(pc);
    v->have_plan = st == STRATA_OK;
    if (st == STRATA_ERR_RANGE || st == STRATA_ERR_INVALID) {
        /* too small a cluster for the model: said, not a failure */
        snprintf(v->plan_skip, sizeof(v->plan_skip), "%s", e.msg);
        return STRATA_OK;
    }
    if (st && err) *err = e;
    return st;
}

/* ==== Create ==== */

/* The model's figures, always filled: tiers, machine, curves, table, the
 * best algorithm and the flat ring at 1 GiB. */
static strata_status_t model(strata_verdict_t *v, const strata_link_catalog_t *cat,
                             strata_error_t *err)
{
    strata_verdict_tiers(v->topo, &v->tiers);
    strata_status_t st = strata_coll_machine_from_topo(v->topo, cat, &v->machine, err);
    if (st) return st;
    v->tiers.latency[STRATA_TIER_UP] = v->tiers.bw[STRATA_TIER_UP] > 0 ? v->machine.lat_intra : 0;
    v->tiers.latency[STRATA_TIER_NET] = v->tiers.bw[STRATA_TIER_NET] > 0 ? v->machine.lat_inter : 0;
    curves(v);
    table(v);
    v->have_best = strata_coll_select(&v->machine, STRATA_COLL_ALLREDUCE, STRATA_VERDICT_BIG_BYTES,
                                      &v->best, NULL) == STRATA_OK;
    v->have_ring = strata_coll_cost(&v->machine, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING,
                                    STRATA_VERDICT_BIG_BYTES, &v->ring, NULL) == STRATA_OK;
    return STRATA_OK;
}

/* The congested ring (bottleneck, and the sim section's spread routing). */
static strata_status_t ring(strata_verdict_t *v, const strata_verdict_opts_t *o,
                            strata_error_t *err)
{
    bool need = wants(v, STRATA_VERDICT_BOTTLENECK) || wants(v, STRATA_VERDICT_SIM);
    if (v->gpus < 2 || o->no_sim || !need) return STRATA_OK;
    strata_status_t st =
        o->sim ? strata_sim_result_copy(&v->sim, o->sim, err)
               : strata_verdict_sim_ring(v->topo, STRATA_SIM_SPREAD, 1,
                                         o->top_links > 0 ? o->top_links : VERDICT_TOP_LINKS,
                                         &v->sim, err);
    if (st) return st;
    v->have_sim = true;
    v->sim_top = strata_verdict_top_class(&v->sim);
    return STRATA_OK;
}

static strata_status_t sections(strata_verdict_t *v, const strata_link_catalog_t *cat,
                                const strata_verdict_opts_t *o, strata_error_t *err)
{
    strata_status_t st = STRATA_OK;
    if (wants(v, STRATA_VERDICT_LINKS)) strata_verdict_links(v->topo, cat, &v->links);
    if (wants(v, STRATA_VERDICT_TOPOLOGY)) st = verdict_topology(v->topo, &v->topology, err);
    if (!st && wants(v, STRATA_VERDICT_SIM) && v->gpus >= 2) {
        st = verdict_routings(v->topo, o->spec, v->have_sim ? &v->sim : NULL, &v->routings, err);
        v->have_routings = st == STRATA_OK;
        if (!st) st = verdict_scale(v, cat, o->spec, err);
    }
    if (!st && o->workload && wants(v, STRATA_VERDICT_STRATEGY)) {
        snprintf(v->plan_model, sizeof(v->plan_model), "%s", o->workload);
        st = plan(v, cat, o, err);
    }
    return st;
}

static strata_status_t analyse(strata_verdict_t *v, const strata_link_catalog_t *cat,
                               const strata_verdict_opts_t *o, strata_error_t *err)
{
    strata_status_t st = model(v, cat, err);
    v->sim_top = -1;
    if (!st) st = ring(v, o, err);
    if (st) return st;
    if (v->have_best && v->gpus >= 2) conclude(v);
    return sections(v, cat, o, err);
}

strata_status_t strata_verdict_create(const strata_topo_t *topo, const strata_link_catalog_t *cat,
                                      const strata_verdict_opts_t *opts, strata_verdict_t **v_p,
                                      strata_error_t *err)
{
    if (!topo || !v_p) return strata_error_set(err, STRATA_ERR_INVALID, "verdict: no cluster");
    strata_verdict_opts_t o = {0};
    if (opts) o = *opts;
    strata_verdict_t *v = util_calloc(1, sizeof(*v));
    if (!v) return strata_error_set(err, STRATA_ERR_NOMEM, "verdict: out of memory");
    v->topo = topo;
    v->gpus = strata_topo_endpoint_count(topo);
    v->servers = strata_topo_group_count(topo);
    v->layer = v->sim_layer = "latency";
    v->sections = o.sections ? o.sections : (1u << STRATA_VERDICT_SECTION_COUNT) - 1;
    strata_status_t st = analyse(v, cat, &o, err);
    if (st) {
        strata_verdict_destroy(v);
        return st;
    }
    *v_p = v;
    return STRATA_OK;
}

void strata_verdict_destroy(strata_verdict_t *v)
{
    if (!v) return;
    strata_sim_result_free(&v->sim);
    verdict_routings_free(&v->routings);
    verdict_routings_free(&v->scale);
    util_free(v);
}
