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

/* 1 GiB: nccl-tests' usual large message, where bandwidth dominates. */
#define REPORT_SIM_BYTES 1073741824.0

static strata_status_t load_cluster(const report_ctx_t *ctx, int nodes, strata_topo_t **topo_p,
                                    char *used, size_t len, strata_error_t *err)
{
    const report_cluster_t *c = ctx->cluster;
    snprintf(used, len, "%s:%d", c->name, nodes);
    strata_error_t ignored;
    if (strata_topo_load_spec(used, ctx->links, topo_p, &ignored) == STRATA_OK) return STRATA_OK;
    snprintf(used, len, "railft:servers=%d,gpus=%d,link=%s", nodes, c->gpus_per_node, c->nic);
    return strata_topo_load_spec(used, ctx->links, topo_p, err);
}

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
    p.count = (uint64_t)(REPORT_SIM_BYTES / 4);
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

/* The class that bounded the time longest, or NULL when latency did. */
static const strata_sim_class_t *top_class(const strata_sim_result_t *r)
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
    const strata_sim_class_t *c = top_class(r);
    double dev = r->time_ab > 0 ? (r->time / r->time_ab - 1) * 100 : 0;
    fprintf(out, "  %-8s %10s %9s %+9.1f%%   %s %.0f%%\n", name, report_time(r->time, t, sizeof(t)),
            report_gbs(r->busbw, b, sizeof(b)), dev, c ? c->name : "latency",
            (c ? c->bound_share : r->latency_share) * 100);
}

static void findings(FILE *out, const char *spec, const strata_sim_result_t *spread,
                     const strata_sim_result_t *ecmp, const strata_sim_result_t *qps)
{
    const strata_sim_class_t *c = top_class(spread);
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

/* Simulate the collective on the cluster with `nodes` servers. */
static strata_status_t block(const report_ctx_t *ctx, int nodes, strata_error_t *err)
{
    strata_topo_t *topo = NULL;
    char spec[160];
    strata_status_t rc = load_cluster(ctx, nodes, &topo, spec, sizeof(spec), err);
    if (rc != STRATA_OK) return rc;
    strata_sim_result_t spread = {0}, ecmp = {0}, qps = {0};
    rc = simulate(topo, STRATA_SIM_SPREAD, 1, &spread, err);
    if (rc == STRATA_OK) rc = simulate(topo, STRATA_SIM_ECMP, 1, &ecmp, err);
    if (rc == STRATA_OK) rc = simulate(topo, STRATA_SIM_ECMP, REPORT_SIM_QPS, &qps, err);
    if (rc == STRATA_OK) {
        FILE *out = ctx->out;
        char t[32];
        fprintf(out, "  allreduce, ring, 1 GiB over %d GPUs (%s)\n",
                strata_topo_endpoint_count(topo), spec);
        fprintf(out, "  %-8s %10s %9s %10s   %s\n", "routing", "time", "busbw", "vs a-b",
                "bottleneck (share of time)");
        print_row(out, "spread", &spread);
        print_row(out, "ecmp", &ecmp);
        print_row(out, "ecmp x8", &qps);
        fprintf(out, "  %-8s %10s   (alpha-beta: every step has its links to itself)\n", "a-b",
                report_time(spread.time_ab, t, sizeof(t)));
        findings(out, spec, &spread, &ecmp, &qps);
    }
    strata_sim_result_free(&spread);
    strata_sim_result_free(&ecmp);
    strata_sim_result_free(&qps);
    strata_topo_destroy(topo);
    return rc;
}

/* The report's cluster, then the same servers at 1,024 GPUs, where a
 * fat-tree has equal-cost paths for ECMP to choose between. */
static strata_status_t run(const report_ctx_t *ctx, strata_error_t *err)
{
    fprintf(ctx->out, "  links shared max-min fairly between the flows that cross them\n\n");
    strata_status_t rc = block(ctx, ctx->cluster->nodes, err);
    int big = 1024 / (ctx->cluster->gpus_per_node > 0 ? ctx->cluster->gpus_per_node : 8);
    if (rc == STRATA_OK && big > ctx->cluster->nodes) {
        fprintf(ctx->out, "\n  at scale:\n");
        rc = block(ctx, big, err);
    }
    return rc;
}

const report_section_t report_sim_section = {"sim", "Simulated collectives (congestion-aware)",
                                             run};
