/*
 * wall.c — the communication wall: one model on clusters of a family
 * doubling in size, every point priced by the planner (strata_plan_eval
 * for a fixed strategy, strata_plan_search for the best plan) — no cost
 * model of its own. Per point: compute, communication per dimension
 * (total and exposed), bubble, step, scaling efficiency against the first
 * point, and the fabric the scale-out network needs (fabric.c). The wall
 * is the first point whose exposed communication exceeds a share of the
 * step; the traffic with the most exposed time there names the tier.
 */
#include "plan.h"
#include "strata/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"best", "dp", "dp+tp", "3d"};

const char *strata_wall_strategy_name(strata_wall_strategy_t s)
{
    return (unsigned)s < 4 ? names[s] : "?";
}

/* The fixed strategy's sizes for G GPUs, g per server. */
static void fixed_sizes(const strata_workload_t *w, strata_wall_strategy_t s, int G, int g,
                        strata_plan_config_t *c)
{
    c->tp = c->pp = c->cp = c->ep = c->vpp = 1;
    if (s != STRATA_WALL_DP) {
        c->tp = g;
        while (c->tp > 1 && (w->heads % c->tp || G % c->tp))
            c->tp /= 2;
    }
    if (s == STRATA_WALL_3D)
        for (c->pp = 8; c->pp > 1; c->pp /= 2)
            if (w->layers % c->pp == 0 && G % (c->tp * c->pp) == 0) break;
    c->dp = G / (c->tp * c->pp);
}

/* A fixed strategy: micro-batch 1, the fastest ZeRO stage and the least
 * recomputation that fit (the search's rule, on fixed sizes). */
static strata_status_t eval_fixed(const strata_plan_ctx_t *ctx, const strata_wall_opts_t *o, int g,
                                  int gbs, strata_wall_point_t *p, strata_error_t *err)
{
    static const strata_recompute_t rc[] = {STRATA_RECOMP_NONE, STRATA_RECOMP_SELECTIVE,
                                            STRATA_RECOMP_FULL};
    strata_plan_config_t c = o->base;
    fixed_sizes(&ctx->w, o->strategy, ctx->gpus, g, &c);
    c.gbs = gbs, c.mbs = 1;
    bool any = false;
    double miss = INFINITY;
    for (c.zero = c.dp > 1 ? 1 : 0; c.zero <= (c.dp > 1 ? 3 : 0); c.zero++)
        for (int k = 0; k < 3; k++) {
            strata_plan_result_t r;
            c.recompute = rc[k];
            strata_status_t st = strata_plan_eval(ctx, &c, &r, err);
            if (st) {
                snprintf(p->why, sizeof(p->why), "%.150s", err->msg);
                return STRATA_OK;
            }
            if (!r.fits) {
                miss = fmin(miss, plan_memory_miss(&r));
                continue;
            }
            if (!any || r.step < p->r.step) p->r = r;
            any = true;
            break;
        }
    p->ok = any;
    if (!any)
        snprintf(p->why, sizeof(p->why),
                 "TP %d PP %d DP %d does not fit memory (misses by %.1f GB)", c.tp, c.pp, c.dp,
                 miss / 1e9);
    return STRATA_OK;
}

static void summarise(strata_wall_point_t *p)
{
    static const char *const dims[] = {"TP", "PP", "DP", "EP", "CP"};
    const strata_plan_result_t *r = &p->r;
    double most = -1;
    for (int i = 0; i < r->ntraffic; i++) {
        const strata_plan_traffic_t *t = &r->traffic[i];
        for (int d = 0; d < 5; d++)
            if (!strcmp(t->dim, dims[d]) || (d == 2 && !strcmp(t->dim, "EDP")) ||
                (d == 0 && !strcmp(t->dim, "SP")))
                p->comm_total[d] += t->time;
        if (t->exposed > most) {
            most = t->exposed;
            snprintf(p->tier, sizeof(p->tier), "%s", t->tier);
            snprintf(p->tier_dim, sizeof(p->tier_dim), "%s", t->dim);
        }
    }
    for (int d = 0; d < 5; d++)
        p->exposed_comm += r->exposed[d];
    p->exposed_share = r->step > 0 ? p->exposed_comm / r->step : 0;
}

static void fabric_columns(const strata_plan_ctx_t *ctx, const strata_fabric_catalog_t *fab,
                           strata_wall_point_t *p)
{
    const strata_coll_machine_t *m = &ctx->m;
    if (!fab || m->servers <= 1) return;
    const char *sw = strata_fabric_switch_for(fab, m->bw_nic * 8 / 1e9 / ctx->comm.nic_scale);
    strata_fabric_t f;
    if (!sw || strata_fabric_size(fab, sw, (long)m->nics * m->servers, &f, NULL)) return;
    p->fabric_tiers = f.tiers;
    p->fabric_w_per_gpu = f.total_w / ctx->gpus;
    p->fabric_cpo_w_per_gpu = f.cpo_w_per_endpoint * f.endpoints / ctx->gpus;
    p->fabric_latency_ns = f.latency_ns;
}

static strata_status_t one_point(const strata_workload_t *w, const strata_link_catalog_t *cat,
                                 const strata_fabric_catalog_t *fab, const strata_wall_opts_t *o,
                                 const strata_accel_t *a, int g, strata_wall_point_t *p,
                                 strata_error_t *err)
{
    strata_wall_opts_t oo;
    if (o->comm.flat && p->ecmp_eff > 0) {
        oo = *o, oo.comm.flat_ecmp = p->ecmp_eff;
        o = &oo;
    }
    char spec[160];
    strata_topo_t *t = NULL;
    strata_plan_ctx_t *ctx = NULL;
    snprintf(spec, sizeof(spec), "%s:%d", o->family, p->gpus / g);
    strata_status_t st = strata_topo_load_spec(spec, cat, &t, err);
    if (!st) st = strata_plan_ctx_create(w, a, t, cat, &ctx, err);
    if (!st) st = strata_plan_ctx_set_comm(ctx, &o->comm, err);
    if (!st && o->strategy == STRATA_WALL_BEST) {
        int n = 0;
        strata_error_t e2;
        strata_error_clear(&e2);
        if (strata_plan_search(ctx, &o->base, p->gbs, &p->r, 1, &n, NULL, &e2) == STRATA_OK && n)
            p->ok = true;
        else
            snprintf(p->why, sizeof(p->why), "%.150s", e2.msg);
    } else if (!st) {
        st = eval_fixed(ctx, o, g, p->gbs, p, err);
    }
    if (!st && p->ok) summarise(p);
    if (!st) fabric_columns(ctx, fab, p);
    strata_plan_ctx_destroy(ctx);
    strata_topo_destroy(t);
    return st;
}

static strata_status_t check_opts(strata_wall_opts_t *o, int g, strata_error_t *err)
{
    if (!o->gpus_min) o->gpus_min = g;
    if (!o->gpus_max) o->gpus_max = 100000 / g * g;
    if (o->gpus_min < 1 || o->gpus_max < o->gpus_min)
        return strata_error_set(err, STRATA_ERR_INVALID, "wall: GPU range %d:%d is empty",
                                o->gpus_min, o->gpus_max);
    if (o->gpus_min % g || o->gpus_max % g)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "wall: GPU range %d:%d does not fit "
                                "family '%s' (%d GPUs per server must divide both ends)",
                                o->gpus_min, o->gpus_max, o->family, g);
    if (!(o->share > 0 && o->share < 1))
        return strata_error_set(err, STRATA_ERR_INVALID, "wall: share must be in (0, 1), got %g",
                                o->share);
    if (o->strong ? o->gbs < 1 : o->batch_per_gpu < 1)
        return strata_error_set(err, STRATA_ERR_INVALID, "wall: batch must be positive");
    if ((unsigned)o->strategy > STRATA_WALL_3D)
        return strata_error_set(err, STRATA_ERR_INVALID, "wall: unknown strategy %d", o->strategy);
    return STRATA_OK;
}

/* Largest count the flat ring's ECMP efficiency is simulated at (a 512-rank
 * ring allreduce simulates in well under a second: every phase is one
 * pattern class, timed once); larger counts reuse the last one simulated. */
#define ECMP_SIM_GPUS 512

/* comm.flat's ECMP efficiency on FAMILY:n/g, simulated: a ring allreduce
 * (16 MiB blocks, so bandwidth dominates) in a rank order shuffled with a
 * fixed seed (blind to servers and rails), timed with ECMP routing (one
 * hashed path per rank pair, seed 1) and with ideal spreading over every
 * equal-cost path; their ratio is the bandwidth ECMP collisions leave. */
static strata_status_t flat_ecmp(const strata_link_catalog_t *cat, const strata_wall_opts_t *o,
                                 int n, int g, double *eff_p, strata_error_t *err)
{
    char spec[160];
    snprintf(spec, sizeof(spec), "%s:%d", o->family, n / g);
    strata_topo_t *t = NULL;
    strata_sched_t *s = NULL;
    int32_t *ranks = util_malloc((size_t)n * sizeof(int32_t));
    if (!ranks) return strata_error_set(err, STRATA_ERR_NOMEM, "wall: out of memory");
    uint64_t x = 0x9e3779b97f4a7c15u; /* xorshift64, fixed seed: a reproducible shuffle */
    for (int i = 0; i < n; i++)
        ranks[i] = i;
    for (int i = n - 1; i > 0; i--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int j = (int)(x % (uint64_t)(i + 1)), tmp = ranks[i];
        ranks[i] = ranks[j], ranks[j] = tmp;
    }
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_RING,
                               .nranks = (uint32_t)n,
                               .count = (uint64_t)n << 22,
                               .elem_size = 4,
                               .chunks = 1,
                               .group = 1};
    double time[2] = {0, 0};
    strata_status_t st = strata_topo_load_spec(spec, cat, &t, err);
    if (!st) st = strata_sched_create(&p, &s, err);
    for (int r = 0; r < 2 && !st; r++) {
        strata_sim_opts_t so = strata_sim_opts_default();
        so.routing = r ? STRATA_SIM_ECMP : STRATA_SIM_SPREAD;
        strata_sim_t *sim = NULL;
        strata_sim_result_t res;
        st = strata_sim_create(t, &so, &sim, err);
        if (!st) st = strata_sim_add(sim, s, ranks, err);
        if (!st) st = strata_sim_run(sim, &res, err);
        if (!st) time[r] = res.time, strata_sim_result_free(&res);
        strata_sim_destroy(sim);
    }
    strata_sched_destroy(s);
    strata_topo_destroy(t);
    util_free(ranks);
    if (st) return st;
    *eff_p = time[1] > 0 ? fmin(1, time[0] / time[1]) : 1;
    return STRATA_OK;
}

strata_status_t strata_wall_run(const strata_workload_t *w, const strata_link_catalog_t *cat,
                                const strata_fabric_catalog_t *fab, const strata_wall_opts_t *o,
                                strata_wall_t *out, strata_error_t *err)
{
    strata_topo_t *t = NULL;
    strata_accel_t a;
    memset(out, 0, sizeof(*out));
    out->wall_index = -1;
    strata_status_t st = strata_topo_load_spec(o->family, cat, &t, err);
    if (st) return st;
    int g = (int)strata_topo_endpoint_count(t);
    const char *mem = strata_topo_device(t, strata_topo_endpoint(t, 0)).memory;
    if (o->accel)
        st = strata_accel_load(NULL, o->accel, &a, err);
    else if (mem)
        st = strata_accel_for_memory(NULL, mem, &a, err);
    else
        st = strata_error_set(err, STRATA_ERR_INVALID,
                              "wall: family '%s' records no "
                              "accelerator memory: give an accelerator",
                              o->family);
    strata_topo_destroy(t);
    strata_wall_opts_t oo = *o;
    if (st || (st = check_opts(&oo, g, err))) return st;
    o = &oo;
    out->per_server = g;
    double eff = 1; /* comm.flat: the last simulated ECMP efficiency */
    for (long n = o->gpus_min; n <= o->gpus_max && out->npoints < STRATA_WALL_MAX_POINTS; n *= 2) {
        strata_wall_point_t *p = &out->points[out->npoints++];
        p->gpus = (int)n;
        p->gbs = o->strong ? o->gbs : (int)(n * o->batch_per_gpu);
        if (o->comm.flat && o->comm.flat_ecmp > 0) {
            p->ecmp_eff = o->comm.flat_ecmp;
        } else if (o->comm.flat && n >= 2 * g && n <= ECMP_SIM_GPUS) {
            if ((st = flat_ecmp(cat, o, (int)n, g, &eff, err))) return st;
            p->ecmp_eff = eff, p->ecmp_simulated = true;
        } else if (o->comm.flat) {
            p->ecmp_eff = eff; /* one server: unused; beyond: the last simulated */
        }
        if ((st = one_point(w, cat, fab, o, &a, g, p, err))) return st;
    }
    const strata_wall_point_t *first = NULL;
    for (int i = 0; i < out->npoints; i++) {
        strata_wall_point_t *p = &out->points[i];
        if (!p->ok) continue;
        if (!first) first = p;
        p->efficiency = (p->r.tokens_per_s / p->gpus) / (first->r.tokens_per_s / first->gpus);
        if (out->wall_index < 0 && p->exposed_share > o->share) out->wall_index = i;
    }
    return STRATA_OK;
}
