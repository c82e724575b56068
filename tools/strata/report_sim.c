/*
 * report_sim.c — the simulated section of `strata report`: a 1 GiB ring
 * allreduce over every GPU of the report's cluster, timed with congestion
 * (strata/sim.h) under ideal spreading and under ECMP hashing, beside the
 * α-β prediction, with the class of links that bounded it and the most
 * loaded link. The cluster is built as the topology layer's preset of the
 * same name when there is one, else its rail-optimised builder with the
 * report cluster's servers and GPUs.
 */
#include "cli_report.h"

#include <string.h>

/* About this many GPUs for the "at scale" block. */
#define REPORT_SIM_SCALE 1024

/* 8 queue pairs per connection: what NCCL_IB_QPS_PER_CONNECTION=8 does
 * to spread one connection's traffic over ECMP paths. */
#define REPORT_SIM_QPS 8

static strata_status_t simulate(const strata_topo_t *topo, strata_sim_routing_t routing,
                                uint32_t qps, strata_sim_result_t *res, strata_error_t *err)
{
    strata_sched_params_t p = {0};
    p.coll = STRATA_COLL_ALLREDUCE;
    p.algo = STRATA_ALGO_RING;
    p.nranks = (uint32_t)strata_topo_endpoint_count(topo);
    /* the ring's channels over servers, as sched's model prices it */
    uint32_t g = strata_coll_ranks_per_server(topo, NULL, p.nranks);
    p.group = g > 1 && g < p.nranks ? g : 0;
    /* a switchless mesh's rings over disjoint links, as the model runs them */
    uint16_t order[STRATA_MESH_RINGS_MAX * STRATA_MESH_MEMBERS_MAX];
    uint32_t k = strata_coll_mesh_rings(topo, NULL, p.nranks, p.group, order, NULL);
    p.rings = k > 1 ? k : 0;
    p.ring_order = p.rings ? order : NULL;
    /* 4-byte elements, rounded down to a multiple of ranks x channels as
     * `strata sim` does (cmd_sim.c count_for): equal blocks make every ring
     * phase alike, so it is timed once, not 2(P-1) times (under 0.01 % off) */
    uint64_t count = (uint64_t)(REPORT_BIG_BYTES / 4);
    uint64_t unit = (uint64_t)p.nranks * (p.group ? p.group : 1) * (p.rings ? p.rings : 1);
    p.count = count >= unit ? count - count % unit : count;
    p.elem_size = 4;
    p.chunks = 1;
    strata_sim_opts_t o = strata_sim_opts_default();
    o.routing = routing;
    o.conns = qps;
    o.top_links = 1;
    strata_sched_t *s = NULL;
    strata_sim_t *sim = NULL;
    strata_status_t rc = strata_sched_create(&p, &s, err);
    if (rc == STRATA_OK) rc = strata_sim_create(topo, &o, &sim, err);
    if (rc == STRATA_OK) rc = strata_sim_add(sim, s, NULL, err);
    if (rc == STRATA_OK) rc = strata_sim_run(sim, res, err);
    strata_sim_destroy(sim);
    strata_sched_destroy(s);
    return rc;
}

/* The report cluster's spread ring, kept from the simulated section for
 * the bottleneck section (report_sim_ring), which would otherwise simulate
 * the same ring again. Only the report's own topology is kept (it lives
 * for the whole report). */
static struct {
    const strata_topo_t *topo;
    strata_sim_result_t res;
} spread_kept;

strata_status_t report_sim_ring(const strata_topo_t *topo, strata_sim_result_t *res,
                                strata_error_t *err)
{
    if (spread_kept.topo == topo && topo) return strata_sim_result_copy(res, &spread_kept.res, err);
    return simulate(topo, STRATA_SIM_SPREAD, 1, res, err);
}

const strata_sim_class_t *report_sim_top_class(const strata_sim_result_t *r)
{
    const strata_sim_class_t *best = NULL;
    for (int c = 0; c < r->nclasses; c++)
        if (!best || r->classes[c].bound_share > best->bound_share) best = &r->classes[c];
    if (best && best->bound_share < r->latency_share) return NULL;
    return best;
}

static void print_row(FILE *out, const char *name, const strata_sim_result_t *r)
{
    char t[32], b[32];
    const strata_sim_class_t *c = report_sim_top_class(r);
    double dev = r->time_ab > 0 ? (r->time / r->time_ab - 1) * 100 : 0;
    fprintf(out, "  %-8s %10s %9s %+9.1f%%   %s %.0f%%\n", name, report_time(r->time, t, sizeof(t)),
            report_gbs(r->busbw, b, sizeof(b)), dev, c ? c->name : "latency",
            (c ? c->bound_share : r->latency_share) * 100);
}

static void findings(FILE *out, const char *spec, const strata_sim_result_t *spread,
                     const strata_sim_result_t *ecmp, const strata_sim_result_t *qps)
{
    const strata_sim_class_t *c = report_sim_top_class(spread);
    if (spread->time <= spread->time_ab * 1.01)
        fprintf(out,
                "  - spread: no contention, the alpha-beta model holds; %s bounds %.0f%% of the "
                "time.\n",
                c ? c->name : "latency", (c ? c->bound_share : spread->latency_share) * 100);
    else
        fprintf(
            out,
            "  - spread: %.2fx the alpha-beta time: links are shared even with ideal spreading.\n",
            spread->time / spread->time_ab);
    if (ecmp->nlinks > 0 && ecmp->time > spread->time * 1.01)
        fprintf(out,
                "  - ecmp: hash collisions put flows on one link (%s, busy %.0f%% of the\n"
                "    time): %.2fx the time of ideal spreading.\n",
                ecmp->links[0].name, ecmp->links[0].utilisation * 100, ecmp->time / spread->time);
    else
        fprintf(out, "  - ecmp: no collision (no equal-cost choice, or the hash was lucky).\n");
    if (ecmp->time > spread->time * 1.01 && qps->time < ecmp->time * 0.99)
        fprintf(out,
                "  - %d queue pairs per connection, hashed apart, win back %.0f%% of what the\n"
                "    collisions cost (NCCL_IB_QPS_PER_CONNECTION=%d).\n",
                REPORT_SIM_QPS, (ecmp->time - qps->time) / (ecmp->time - spread->time) * 100,
                REPORT_SIM_QPS);
    fprintf(out, "  - timeline: strata sim %s --routing ecmp --trace t.json\n", spec);
}

static void json_row(report_json_t *j, const char *key, const strata_sim_result_t *r)
{
    const strata_sim_class_t *c = report_sim_top_class(r);
    rj_open(j, key, '{');
    rj_num(j, "time_s", r->time);
    rj_num(j, "busbw_Bps", r->busbw);
    rj_num(j, "vs_alpha_beta", r->time_ab > 0 ? r->time / r->time_ab : 0);
    rj_str(j, "bound", c ? c->name : "latency");
    rj_num(j, "bound_share", c ? c->bound_share : r->latency_share);
    if (r->nlinks > 0) rj_str(j, "busiest_link", r->links[0].name);
    rj_close(j, '}');
}

typedef struct block {
    strata_sim_result_t spread, ecmp, qps;
} block_t;

static void print_block(const report_ctx_t *ctx, const char *key, const char *spec, int32_t gpus,
                        const block_t *b)
{
    if (ctx->json) {
        report_json_t *j = ctx->json;
        rj_open(j, key, '{');
        rj_str(j, "spec", spec);
        rj_int(j, "gpus", gpus);
        rj_num(j, "bytes", REPORT_BIG_BYTES);
        rj_num(j, "time_alpha_beta_s", b->spread.time_ab);
        json_row(j, "spread", &b->spread);
        json_row(j, "ecmp", &b->ecmp);
        json_row(j, "ecmp_qps8", &b->qps);
        rj_close(j, '}');
        return;
    }
    FILE *out = ctx->out;
    char t[32];
    fprintf(out, "  allreduce, ring, 1 GiB over %d GPUs (%s)\n", (int)gpus, spec);
    fprintf(out, "  %-8s %10s %9s %10s   %s\n", "routing", "time", "busbw", "vs a-b",
            "bottleneck (share of time)");
    print_row(out, "spread", &b->spread);
    print_row(out, "ecmp", &b->ecmp);
    print_row(out, "ecmp x8", &b->qps);
    fprintf(out, "  %-8s %10s   (alpha-beta: every step has its links to itself)\n", "a-b",
            report_time(b->spread.time_ab, t, sizeof(t)));
    findings(out, spec, &b->spread, &b->ecmp, &b->qps);
}

/* Simulate the ring on topo under the three routings and print it. */
static strata_status_t block(const report_ctx_t *ctx, const char *key, const strata_topo_t *topo,
                             const char *spec, strata_error_t *err)
{
    block_t b;
    memset(&b, 0, sizeof(b));
    strata_status_t rc = simulate(topo, STRATA_SIM_SPREAD, 1, &b.spread, err);
    if (rc == STRATA_OK && topo == ctx->topo && !spread_kept.topo &&
        strata_sim_result_copy(&spread_kept.res, &b.spread, NULL) == STRATA_OK)
        spread_kept.topo = topo;
    if (rc == STRATA_OK) rc = simulate(topo, STRATA_SIM_ECMP, 1, &b.ecmp, err);
    if (rc == STRATA_OK) rc = simulate(topo, STRATA_SIM_ECMP, REPORT_SIM_QPS, &b.qps, err);
    if (rc == STRATA_OK) print_block(ctx, key, spec, strata_topo_endpoint_count(topo), &b);
    strata_sim_result_free(&b.spread);
    strata_sim_result_free(&b.ecmp);
    strata_sim_result_free(&b.qps);
    return rc;
}

static bool has_network(const strata_topo_t *t)
{
    for (int32_t d = 0; d < strata_topo_device_count(t); d++)
        if (strata_topo_device(t, d).kind == STRATA_DEV_NET_SWITCH) return true;
    return false;
}

/* The same servers at about REPORT_SIM_SCALE GPUs: spec + ",servers=N".
 * Builder specs that do not take the key are skipped with a note. */
static strata_status_t at_scale(const report_ctx_t *ctx, strata_error_t *err)
{
    const strata_topo_t *t = ctx->topo;
    int32_t n = strata_topo_endpoint_count(t), g = strata_topo_group_count(t);
    if (g < 1 || !has_network(t) || n >= REPORT_SIM_SCALE) return STRATA_OK;
    int32_t servers = REPORT_SIM_SCALE / (n / g);
    if (servers <= g) return STRATA_OK;
    char spec[256];
    snprintf(spec, sizeof(spec), "%s,servers=%d", ctx->spec, (int)servers);
    strata_topo_t *big = NULL;
    strata_error_t why;
    strata_error_clear(&why);
    if (strata_topo_load_spec(spec, ctx->links, &big, &why) != STRATA_OK) {
        if (!ctx->json)
            fprintf(ctx->out, "\n  at scale: not simulated ('%s' does not load)\n", spec);
        return STRATA_OK;
    }
    if (!ctx->json) fprintf(ctx->out, "\n  at scale:\n");
    strata_status_t rc = block(ctx, "at_scale", big, spec, err);
    strata_topo_destroy(big);
    return rc;
}

static strata_status_t run(const report_ctx_t *ctx, strata_error_t *err)
{
    if (strata_topo_endpoint_count(ctx->topo) < 2) {
        if (!ctx->json) fprintf(ctx->out, "  one GPU: no collective to simulate\n");
        return STRATA_OK;
    }
    if (!ctx->json)
        fprintf(ctx->out, "  links shared max-min fairly between the flows that cross them\n\n");
    strata_status_t rc = block(ctx, "cluster", ctx->topo, ctx->spec, err);
    if (rc == STRATA_OK) rc = at_scale(ctx, err);
    return rc;
}

const report_section_t report_sim_section = {"sim", "Simulated collectives (congestion-aware)",
                                             run};
