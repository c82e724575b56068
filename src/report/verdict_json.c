/*
 * verdict_json.c — the verdict as JSON: one member per filled section,
 * keyed as `strata report --json` documents them (docs/formats.md), every
 * figure in SI base units with the unit as the key's suffix. Formatting
 * only: each number is a field of the verdict, at most divided by a count
 * the verdict holds.
 */
#include "report.h"

#include <string.h>

/* ==== Links ==== */

static void json_rows(strata_json_t *j, const strata_verdict_links_t *l)
{
    strata_json_open(j, "rows", '[');
    for (int i = 0; i < l->nrows; i++) {
        const strata_verdict_link_row_t *r = &l->rows[i];
        strata_json_open(j, NULL, '{');
        strata_json_str(j, "tier", strata_tier_name(r->tier));
        strata_json_str(j, "link", r->kind);
        strata_json_str(j, "between", r->between);
        strata_json_int(j, "count", r->count);
        strata_json_num(j, "per_link_Bps", r->per_link);
        strata_json_num(j, "links_per_gpu", r->links_per_gpu);
        strata_json_num(j, "per_gpu_Bps", r->per_gpu);
        strata_json_num(j, "latency_s", r->latency);
        strata_json_close(j, '{');
    }
    strata_json_close(j, '[');
}

static void json_tiers(strata_json_t *j, const strata_verdict_tiers_t *t)
{
    static const char *const keys[STRATA_TIER_COUNT] = {"scale_up", "host", "scale_out"};
    strata_json_open(j, "tiers", '{');
    for (int k = 0; k < STRATA_TIER_COUNT; k++) {
        strata_json_open(j, keys[k], '{');
        strata_json_num(j, "per_gpu_Bps", t->bw[k]);
        strata_json_str(j, "link", t->kind[k]);
        strata_json_num(j, "latency_s", t->latency[k]);
        strata_json_close(j, '{');
    }
    strata_json_close(j, '{');
}

static void json_links(strata_json_t *j, const strata_verdict_t *v)
{
    const strata_verdict_links_t *l = &v->links;
    const double up = v->tiers.bw[STRATA_TIER_UP], net = v->tiers.bw[STRATA_TIER_NET];
    json_rows(j, l);
    json_tiers(j, &v->tiers);
    strata_json_num(j, "cliff", up > 0 && net > 0 ? up / net : 0);
    strata_json_num(j, "reduce_Bps", v->machine.reduce_bw);
    strata_json_str(j, "memory", v->machine.memory_kind);
    strata_json_str(j, "memory_source", strata_coll_memory_source(&v->machine));
    strata_json_num(j, "crossover_scale_up_B", l->crossover[STRATA_TIER_UP]);
    strata_json_num(j, "crossover_scale_out_B", l->crossover[STRATA_TIER_NET]);
    if (!l->net_link[0]) return;
    strata_json_open(j, l->ethernet ? "pfc" : "credits", '{');
    strata_json_str(j, "link", l->net_link);
    strata_json_num(j, "cable_m", STRATA_VERDICT_CABLE_M);
    if (l->ethernet) {
        strata_json_num(j, "headroom_B", l->pfc_headroom);
    } else {
        strata_json_num(j, "rtt_s", l->rtt);
        strata_json_num(j, "buffer_B", l->credit_buffer);
    }
    strata_json_close(j, '{');
}

/* ==== Topology ==== */

static void json_path(strata_json_t *j, const char *key, const strata_verdict_path_t *p)
{
    if (!p->ok) return;
    strata_json_open(j, key, '{');
    strata_json_int(j, "from_rank", p->from);
    strata_json_int(j, "to_rank", p->to);
    strata_json_int(j, "hops", p->nhops);
    strata_json_num(j, "paths", p->paths);
    strata_json_num(j, "bottleneck_Bps", p->bw);
    strata_json_num(j, "latency_s", p->latency);
    strata_json_close(j, '{');
}

static void json_topology(strata_json_t *j, const strata_verdict_t *v)
{
    const strata_topo_metrics_t *m = &v->topology.metrics;
    strata_json_str(j, "name", strata_topo_name(v->topo));
    strata_json_int(j, "gpus", m->endpoints);
    strata_json_int(j, "servers", m->groups);
    strata_json_int(j, "devices", m->devices);
    strata_json_int(j, "links", m->links);
    strata_json_open(j, "device_counts", '{');
    for (int k = 0; k < STRATA_DEV_KIND_COUNT; k++)
        if (m->count[k]) strata_json_int(j, strata_dev_kind_str(k), m->count[k]);
    strata_json_close(j, '{');
    strata_json_int(j, "diameter", m->diameter);
    strata_json_num(j, "avg_hops", m->avg_hops);
    strata_json_open(j, "tiers", '[');
    for (int i = 0; i < m->tiers && i < STRATA_TOPO_TIERS_MAX; i++) {
        strata_json_open(j, NULL, '{');
        strata_json_num(j, "injection_Bps", m->injection[i]);
        strata_json_num(j, "oversubscription", m->oversub[i]);
        strata_json_close(j, '{');
    }
    strata_json_close(j, '[');
    strata_json_num(j, "bisection_Bps", m->bisection.bw);
    strata_json_bool(j, "bisection_exact", m->bisection.exact);
    strata_json_str(j, "bisection_how", m->bisection.how);
    json_path(j, "path_neighbours", &v->topology.near);
    json_path(j, "path_far", &v->topology.far);
}

/* ==== Collectives ==== */

static void json_machine(strata_json_t *j, const strata_coll_machine_t *m)
{
    strata_json_open(j, "machine", '{');
    strata_json_int(j, "gpus", m->nranks);
    strata_json_int(j, "servers", m->servers);
    strata_json_int(j, "per_server", m->per_server);
    strata_json_int(j, "nics_per_server", m->nics);
    strata_json_num(j, "bw_intra_Bps", m->bw_intra);
    strata_json_num(j, "bw_nic_Bps", m->bw_nic);
    strata_json_num(j, "reduce_Bps", m->reduce_bw);
    strata_json_str(j, "memory", m->memory_kind);
    strata_json_str(j, "memory_source", strata_coll_memory_source(m));
    strata_json_close(j, '{');
}

static void json_choices(strata_json_t *j, const strata_verdict_t *v)
{
    strata_json_open(j, "choices", '{');
    for (int i = 0; i < STRATA_VERDICT_TABLE_OPS; i++) {
        const strata_verdict_choice_t *c = &v->choices[i];
        if (!c->ok) continue;
        strata_json_open(j, strata_coll_name(v->table_ops[i]), '[');
        strata_json_open(j, NULL, '{');
        strata_json_num(j, "from_B", 8);
        strata_json_str(j, "algorithm", strata_algo_name(c->lo.algo));
        strata_json_close(j, '{');
        for (size_t k = 0; k < c->ncross; k++) {
            strata_json_open(j, NULL, '{');
            strata_json_num(j, "from_B", c->sizes[k]);
            strata_json_str(j, "algorithm", strata_algo_name(c->algos[k]));
            strata_json_close(j, '{');
        }
        strata_json_close(j, '[');
    }
    strata_json_close(j, '{');
}

static void json_coll(strata_json_t *j, const strata_verdict_t *v)
{
    json_machine(j, &v->machine);
    strata_json_open(j, "sizes", '[');
    for (int k = 0; k < STRATA_VERDICT_TABLE_SIZES; k++) {
        strata_json_open(j, NULL, '{');
        strata_json_num(j, "size_B", v->table_sizes[k]);
        for (int i = 0; i < STRATA_VERDICT_TABLE_OPS; i++) {
            const strata_coll_cost_t *c = &v->table[i][k];
            if (!v->table_ok[i][k]) continue;
            strata_json_open(j, strata_coll_name(v->table_ops[i]), '{');
            strata_json_num(j, "busbw_Bps", c->busbw);
            strata_json_str(j, "algorithm", strata_algo_name(c->algo));
            strata_json_str(j, "bound", c->bound);
            strata_json_close(j, '{');
        }
        strata_json_close(j, '{');
    }
    strata_json_close(j, '[');
    json_choices(j, v);
}

/* ==== Simulated rings ==== */

static void json_run(strata_json_t *j, const char *key, const strata_sim_result_t *r)
{
    int k = strata_verdict_top_class(r);
    const strata_sim_class_t *c = k >= 0 ? &r->classes[k] : NULL;
    strata_json_open(j, key, '{');
    strata_json_num(j, "time_s", r->time);
    strata_json_num(j, "busbw_Bps", r->busbw);
    strata_json_num(j, "vs_alpha_beta", r->time_ab > 0 ? r->time / r->time_ab : 0);
    strata_json_str(j, "bound", c ? c->name : "latency");
    strata_json_num(j, "bound_share", c ? c->bound_share : r->latency_share);
    if (r->nlinks > 0) strata_json_str(j, "busiest_link", r->links[0].name);
    strata_json_close(j, '{');
}

static void json_block(strata_json_t *j, const char *key, const strata_verdict_routings_t *b)
{
    strata_json_open(j, key, '{');
    strata_json_str(j, "spec", b->spec);
    strata_json_int(j, "gpus", b->gpus);
    strata_json_num(j, "size_B", STRATA_VERDICT_BIG_BYTES);
    strata_json_num(j, "time_alpha_beta_s", b->spread.time_ab);
    json_run(j, "spread", &b->spread);
    json_run(j, "ecmp", &b->ecmp);
    json_run(j, "ecmp_qps8", &b->qps);
    strata_json_close(j, '{');
}

static void json_sim(strata_json_t *j, const strata_verdict_t *v)
{
    if (v->have_routings) json_block(j, "cluster", &v->routings);
    if (v->have_scale) json_block(j, "at_scale", &v->scale);
    if (v->scale_skip[0]) strata_json_str(j, "at_scale_skipped", v->scale_skip);
}

/* ==== Strategy ==== */

static void json_plan(strata_json_t *j, const strata_workload_t *w, const strata_plan_result_t *r)
{
    const strata_plan_config_t *c = &r->cfg;
    strata_json_str(j, "model", w->name);
    strata_json_int(j, "tp", c->tp), strata_json_int(j, "pp", c->pp);
    strata_json_int(j, "vpp", c->vpp), strata_json_int(j, "dp", c->dp);
    strata_json_int(j, "cp", c->cp), strata_json_int(j, "micro_batch", c->mbs);
    strata_json_int(j, "global_batch", c->gbs), strata_json_int(j, "zero", c->zero);
    strata_json_num(j, "step_s", r->step);
    strata_json_num(j, "mfu", r->mfu);
    strata_json_num(j, "tokens_per_s", r->tokens_per_s);
    strata_json_num(j, "memory_B", r->mem_total);
    strata_json_num(j, "capacity_B", r->mem_capacity);
    strata_json_str(j, "bottleneck", r->bottleneck);
    strata_json_str(j, "advice", r->advice);
    strata_json_open(j, "traffic", '[');
    for (int i = 0; i < r->ntraffic; i++) {
        strata_json_open(j, NULL, '{');
        strata_json_str(j, "dim", r->traffic[i].dim);
        strata_json_str(j, "op", r->traffic[i].op);
        strata_json_str(j, "tier", r->traffic[i].tier);
        strata_json_num(j, "time_s", r->traffic[i].time);
        strata_json_num(j, "exposed_s", r->traffic[i].exposed);
        strata_json_close(j, '{');
    }
    strata_json_close(j, '[');
}

static void json_strategy(strata_json_t *j, const strata_verdict_t *v)
{
    if (v->have_plan)
        json_plan(j, &v->workload, &v->plan);
    else if (v->plan_model[0])
        strata_json_str(j, "skipped", v->plan_skip);
}

/* ==== Bottleneck ==== */

static void json_bottleneck(strata_json_t *j, const strata_verdict_t *v)
{
    strata_json_num(j, "size_B", STRATA_VERDICT_BIG_BYTES);
    strata_json_int(j, "gpus", v->machine.nranks);
    if (v->have_best && v->machine.nranks > 1) {
        const strata_coll_cost_t *b = &v->best;
        strata_json_str(j, "layer", v->layer);
        strata_json_num(j, "layer_per_gpu_Bps", v->layer_bw);
        strata_json_num(j, "bw_share", v->bw_share);
        strata_json_num(j, "latency_share", v->lat_share);
        strata_json_str(j, "algorithm", strata_algo_name(b->algo));
        strata_json_str(j, "bound", b->bound);
        strata_json_num(j, "busbw_Bps", b->busbw);
        strata_json_num(j, "time_s", b->time);
        strata_json_num(j, "alpha_s", b->alpha);
        strata_json_num(j, "beta_s", b->beta);
        strata_json_num(j, "gamma_s", b->gamma);
    }
    if (v->have_ring && v->machine.nranks > 1)
        strata_json_num(j, "ring_model_busbw_Bps", v->ring.busbw);
    if (v->have_sim) {
        const strata_sim_class_t *k = v->sim_top >= 0 ? &v->sim.classes[v->sim_top] : NULL;
        strata_json_num(j, "ring_sim_busbw_Bps", v->sim.busbw);
        strata_json_str(j, "ring_sim_layer", v->sim_layer);
        strata_json_str(j, "ring_sim_bound", k ? k->name : "latency");
        strata_json_num(j, "ring_sim_share", v->sim_share);
        strata_json_num(j, "best_over_ring", v->best_over_sim);
    }
}

/* ==== Dispatch ==== */

void strata_verdict_json_section(const strata_verdict_t *v, strata_verdict_section_t section,
                                 strata_json_t *j)
{
    if (!v || !((v->sections >> section) & 1u)) return;
    switch (section) {
    case STRATA_VERDICT_LINKS:
        json_links(j, v);
        break;
    case STRATA_VERDICT_TOPOLOGY:
        json_topology(j, v);
        break;
    case STRATA_VERDICT_COLL:
        json_coll(j, v);
        break;
    case STRATA_VERDICT_SIM:
        json_sim(j, v);
        break;
    case STRATA_VERDICT_STRATEGY:
        json_strategy(j, v);
        break;
    case STRATA_VERDICT_BOTTLENECK:
        json_bottleneck(j, v);
        break;
    default:
        break;
    }
}

void strata_verdict_json_cluster(const strata_verdict_t *v, const char *spec, strata_json_t *j)
{
    const strata_topo_t *t = v->topo;
    strata_json_open(j, "cluster", '{');
    strata_json_str(j, "spec", spec ? spec : strata_topo_name(t));
    strata_json_str(j, "name", strata_topo_name(t));
    strata_json_int(j, "gpus", strata_topo_endpoint_count(t));
    strata_json_int(j, "servers", strata_topo_group_count(t));
    strata_json_int(j, "devices", strata_topo_device_count(t));
    strata_json_int(j, "links", strata_topo_link_count(t));
    strata_json_close(j, '{');
}

void strata_verdict_json_members(const strata_verdict_t *v, const char *spec, strata_json_t *j)
{
    strata_verdict_json_cluster(v, spec, j);
    for (int s = 0; s < STRATA_VERDICT_SECTION_COUNT; s++) {
        if (!((v->sections >> s) & 1u)) continue;
        strata_json_open(j, strata_verdict_section_name((strata_verdict_section_t)s), '{');
        strata_verdict_json_section(v, (strata_verdict_section_t)s, j);
        strata_json_close(j, '{');
    }
}

strata_status_t strata_verdict_print_json(const strata_verdict_t *v, const char *spec, FILE *out)
{
    if (!v || !out) return STRATA_ERR_INVALID;
    strata_json_t j;
    strata_json_document(&j, out);
    strata_verdict_json_members(v, spec, &j);
    strata_json_close(&j, '{');
    return ferror(out) ? STRATA_ERR_IO : STRATA_OK;
}
