/*
 * verdict_sections.c — the verdict's sections as text, as `strata report`
 * prints them under their headings: the links (a row per kind of link and
 * tier, and the findings the rows imply), the topology (metrics and two
 * routed paths), the simulated ring under three routings (on the cluster
 * and at scale) and the planned training step. Formatting only: every
 * figure and every comparison's operands come from the verdict
 * (src/verdict); the bottleneck and collective sections are in
 * verdict_text.c.
 */
#include "report.h"

#include <string.h>

/* ==== Links ==== */

static void link_rows(FILE *out, const strata_verdict_t *v)
{
    char a[32], b[32], c[32], d[32];
    double ref = v->tiers.bw[STRATA_TIER_UP];
    fprintf(out, "  %-10s %-11s %-16s %9s %9s %9s %9s %9s %8s\n", "tier", "link", "between",
            "per link", "links/GPU", "per GPU", "bidi", "latency", "vs s-up");
    for (int i = 0; i < v->links.nrows; i++) {
        const strata_verdict_link_row_t *r = &v->links.rows[i];
        fprintf(out, "  %-10s %-11s %-16s %9s %9.3g %9s %9s %9s", strata_tier_name(r->tier),
                r->kind, r->between, strata_fmt_gbs(r->per_link, a, 32), r->links_per_gpu,
                strata_fmt_gbs(r->per_gpu, b, 32), strata_fmt_gbs(2 * r->per_gpu, c, 32),
                strata_fmt_time(r->latency, d, 32));
        if (ref > 0)
            fprintf(out, " %7.3gx\n", r->per_gpu / ref);
        else
            fprintf(out, " %8s\n", "-");
    }
}

static void finding_cliff(FILE *out, const strata_verdict_tiers_t *t, int32_t gpus)
{
    char a[32], b[32];
    double up = t->bw[STRATA_TIER_UP], host = t->bw[STRATA_TIER_HOST], net = t->bw[STRATA_TIER_NET];
    if (up > 0 && net > 0)
        fprintf(out,
                "  - scale-up/scale-out cliff: %s / %s GB/s = %.3gx per GPU; keep tensor and\n"
                "    expert parallel traffic on %s inside a server, data parallel across.\n",
                strata_fmt_gbs(up, a, 32), strata_fmt_gbs(net, b, 32), up / net,
                t->kind[STRATA_TIER_UP]);
    else if (up > 0)
        fprintf(out,
                "  - no scale-out network: all %d accelerators share one %s fabric\n"
                "    (%s GB/s per GPU); the cliff is the fabric's own bisection (topology).\n",
                (int)gpus, t->kind[STRATA_TIER_UP], strata_fmt_gbs(up, a, 32));
    else if (host > 0 && net > 0)
        fprintf(out,
                "  - no scale-up fabric: GPUs meet over %s (%s GB/s per GPU), %.3gx the\n"
                "    network's %s GB/s per GPU; every collective pays PCIe.\n",
                t->kind[STRATA_TIER_HOST], strata_fmt_gbs(host, a, 32), host / net,
                strata_fmt_gbs(net, b, 32));
    else
        fprintf(out, "  - no scale-up fabric and %s network: the host links carry everything.\n",
                net > 0 ? "a" : "no");
}

static void finding_nic(FILE *out, const strata_verdict_links_t *l)
{
    if (l->nic_host < 0 || l->nic_port < 0) return;
    const strata_verdict_link_row_t *host = &l->rows[l->nic_host], *port = &l->rows[l->nic_port];
    char a[32], b[32];
    fprintf(out, "  - each NIC sits behind %s (%s GB/s per link) %s one %s port (%s GB/s).\n",
            host->kind, strata_fmt_gbs(host->per_link, a, 32),
            host->per_link >= port->per_link ? ">=" : "< (PCIe-bound!)", port->kind,
            strata_fmt_gbs(port->per_link, b, 32));
}

static void finding_credits(FILE *out, const strata_verdict_links_t *l)
{
    char a[32];
    if (!l->net_link[0]) return;
    if (l->ethernet) {
        fprintf(out,
                "  - lossless Ethernet: %s over %g m needs %.0f B of PFC headroom per priority\n"
                "    (rate x (cable + response) + 2 frames); without PFC, loss means go-back-N.\n",
                l->net_link, STRATA_VERDICT_CABLE_M, l->pfc_headroom);
        return;
    }
    fprintf(out,
            "  - credits: %s over %g m has a %s link round trip; running at line rate needs\n"
            "    %.0f B of receive buffer per virtual lane (rate x RTT).\n",
            l->net_link, STRATA_VERDICT_CABLE_M, strata_fmt_time(l->rtt, a, 32), l->credit_buffer);
}

static void finding_alpha_beta(FILE *out, const strata_verdict_t *v)
{
    double up = v->links.crossover[STRATA_TIER_UP], net = v->links.crossover[STRATA_TIER_NET];
    if (up <= 0 && net <= 0) return;
    fprintf(out, "  - alpha-beta crossover (latency x bandwidth):");
    if (up > 0)
        fprintf(out, " %s %.0f KB%s", v->tiers.kind[STRATA_TIER_UP], up / 1e3, net > 0 ? "," : "");
    if (net > 0) fprintf(out, " %s %.0f KB", v->tiers.kind[STRATA_TIER_NET], net / 1e3);
    fprintf(out, ";\n    smaller messages are latency-bound.\n");
}

static void finding_memory(FILE *out, const strata_verdict_t *v)
{
    const strata_coll_machine_t *m = &v->machine;
    char a[32];
    if (m->reduce_bw <= 0) {
        fprintf(
            out,
            "  - memory: no ceiling shown: the cluster records no accelerator memory and its\n  "
            "  in-server link maps to no HBM entry of the catalog (as in 'strata coll').\n");
        return;
    }
    fprintf(out,
            "  - memory ceiling: a GPU sums incoming data at %s GB/s (%s, %s;\n"
            "    bandwidth / 3 passes, as 'strata coll' models it)",
            strata_fmt_gbs(m->reduce_bw, a, 32), m->memory_kind, strata_coll_memory_source(m));
    if (v->tiers.bw[STRATA_TIER_UP] > 0)
        fprintf(out, ", %.3gx its scale-up", m->reduce_bw / v->tiers.bw[STRATA_TIER_UP]);
    fprintf(out, ".\n");
}

static void links_text(const strata_verdict_t *v, FILE *out)
{
    fprintf(out, "  every link kind in the topology, per GPU and per direction (GB/s);\n"
                 "  'vs s-up' = per-GPU figure / the scale-up tier's\n\n");
    link_rows(out, v);
    fprintf(out, "\n  findings\n");
    finding_cliff(out, &v->tiers, v->gpus);
    finding_nic(out, &v->links);
    finding_credits(out, &v->links);
    finding_alpha_beta(out, v);
    finding_memory(out, v);
}

/* ==== Topology ==== */

static void show_path(FILE *out, const strata_topo_t *t, const strata_verdict_path_t *p,
                      const char *what)
{
    char g[32], l[32];
    fprintf(out, "  %-16s %s", what, strata_topo_device(t, strata_topo_endpoint(t, p->from)).name);
    for (int32_t i = 0; i < p->nhops; i++)
        fprintf(out, " > %s", strata_topo_device(t, strata_topo_chan_dst(t, p->chans[i])).name);
    fprintf(out, "\n  %-16s %d hop%s, %.0f equal-cost path%s, bottleneck %s GB/s, latency %s\n", "",
            (int)p->nhops, p->nhops == 1 ? "" : "s", p->paths, p->paths == 1 ? "" : "s",
            strata_fmt_gbs(p->bw, g, sizeof(g)), strata_fmt_time(p->latency, l, sizeof(l)));
}

static void show_metrics(FILE *out, const strata_topo_metrics_t *m)
{
    char a[32], b[32];
    fprintf(out, "  %-16s %d GPUs, %d devices:", "graph", (int)m->endpoints, (int)m->devices);
    for (int k = 0; k < STRATA_DEV_KIND_COUNT; k++)
        if (m->count[k]) fprintf(out, " %d %s", (int)m->count[k], strata_dev_kind_str(k));
    fprintf(out, "; %d links\n", (int)m->links);
    fprintf(out, "  %-16s diameter %d, average %.4g (%s)\n", "hops", (int)m->diameter, m->avg_hops,
            m->hops_how);
    for (int i = 0; i < m->tiers && i < STRATA_TOPO_TIERS_MAX; i++) {
        fprintf(out, "  tier %d %-9s  %s GB/s per GPU", i, i == 0 ? "scale-up" : "network",
                strata_fmt_gbs(m->injection[i], a, sizeof(a)));
        if (m->oversub[i] > 0) fprintf(out, ", oversubscription %.3g:1", m->oversub[i]);
        fputc('\n', out);
    }
    fprintf(
        out, "  %-16s %s GB/s%s = %s GB/s per GPU of a half\n", "bisection",
        strata_fmt_gbs(m->bisection.bw, a, sizeof(a)), m->bisection.exact ? "" : " (upper bound)",
        strata_fmt_gbs(m->endpoints > 1 ? m->bisection.bw / (m->endpoints / 2) : 0, b, sizeof(b)));
    fprintf(out, "  %-16s %s\n", "", m->bisection.how);
}

static void topology_text(const strata_verdict_t *v, const char *spec, FILE *out)
{
    const strata_verdict_topo_t *t = &v->topology;
    fprintf(out, "  %s as loaded from '%s' ('strata topo show/metrics %s' for detail)\n\n",
            strata_topo_name(v->topo), spec, spec);
    show_metrics(out, &t->metrics);
    fputc('\n', out);
    if (t->near.ok) show_path(out, v->topo, &t->near, "neighbours");
    if (t->far.ok) show_path(out, v->topo, &t->far, t->far_across ? "across servers" : "farthest");
}

/* ==== Simulated rings ==== */

static const strata_sim_class_t *top_class(const strata_sim_result_t *r)
{
    int k = strata_verdict_top_class(r);
    return k >= 0 ? &r->classes[k] : NULL;
}

static void sim_row(FILE *out, const char *name, const strata_sim_result_t *r)
{
    char t[32], b[32];
    const strata_sim_class_t *c = top_class(r);
    double dev = r->time_ab > 0 ? (r->time / r->time_ab - 1) * 100 : 0;
    fprintf(out, "  %-8s %10s %9s %+9.1f%%   %s %.0f%%\n", name,
            strata_fmt_time(r->time, t, sizeof(t)), strata_fmt_gbs(r->busbw, b, sizeof(b)), dev,
            c ? c->name : "latency", (c ? c->bound_share : r->latency_share) * 100);
}

static void sim_findings(FILE *out, const strata_verdict_routings_t *b)
{
    const strata_sim_result_t *spread = &b->spread, *ecmp = &b->ecmp, *qps = &b->qps;
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
                STRATA_VERDICT_QPS, (ecmp->time - qps->time) / (ecmp->time - spread->time) * 100,
                STRATA_VERDICT_QPS);
    fprintf(out, "  - timeline: strata sim %s --routing ecmp --trace t.json\n", b->spec);
}

static void sim_block(FILE *out, const strata_verdict_routings_t *b)
{
    char t[32];
    fprintf(out, "  allreduce, ring, 1 GiB over %d GPUs (%s)\n", (int)b->gpus, b->spec);
    fprintf(out, "  %-8s %10s %9s %10s   %s\n", "routing", "time", "busbw", "vs a-b",
            "bottleneck (share of time)");
    sim_row(out, "spread", &b->spread);
    sim_row(out, "ecmp", &b->ecmp);
    sim_row(out, "ecmp x8", &b->qps);
    fprintf(out, "  %-8s %10s   (alpha-beta: every step has its links to itself)\n", "a-b",
            strata_fmt_time(b->spread.time_ab, t, sizeof(t)));
    sim_findings(out, b);
}

static void sim_text(const strata_verdict_t *v, FILE *out)
{
    if (!v->have_routings) {
        fprintf(out, "  one GPU: no collective to simulate\n");
        return;
    }
    fprintf(out, "  links shared max-min fairly between the flows that cross them\n\n");
    sim_block(out, &v->routings);
    if (v->scale_skip[0])
        fprintf(out, "\n  at scale: not simulated ('%s' does not load)\n", v->scale_skip);
    if (v->have_scale) {
        fprintf(out, "\n  at scale:\n");
        sim_block(out, &v->scale);
    }
}

/* ==== Strategy ==== */

static void plan_text(const strata_verdict_t *v, const char *spec, FILE *out)
{
    const strata_plan_result_t *r = &v->plan;
    const strata_plan_config_t *c = &r->cfg;
    const strata_workload_t *w = &v->workload;
    fprintf(out, "  %s, batch %d x %d tokens: best plan TP %d x PP %d", w->name, c->gbs, w->seq,
            c->tp, c->pp);
    if (c->vpp > 1) fprintf(out, " (v %d)", c->vpp);
    fprintf(out, " x DP %d", c->dp);
    if (c->cp > 1) fprintf(out, " x CP %d", c->cp);
    fprintf(out, ", micro-batch %d, ZeRO-%d\n", c->mbs, c->zero);
    double exposed = 0;
    for (int i = 0; i < 5; i++)
        exposed += r->exposed[i];
    fprintf(out,
            "  step %.3f s: compute %.0f %%, exposed communication %.0f %%, bubble %.0f %%; "
            "MFU %.1f %%; memory %.1f of %.0f GB\n",
            r->step, 100 * r->compute / r->step, 100 * exposed / r->step, 100 * r->bubble / r->step,
            100 * r->mfu, r->mem_total / 1e9, r->mem_capacity / 1e9);
    for (int i = 0; i < r->ntraffic; i++)
        fprintf(out, "  %-4s %-14s on %-22s %9.4f s, %9.4f s exposed\n", r->traffic[i].dim,
                r->traffic[i].op, r->traffic[i].tier, r->traffic[i].time, r->traffic[i].exposed);
    fprintf(out, "  bound by %s; best single change: %s\n", r->bottleneck, r->advice);
    fprintf(out, "  ('strata plan %s %s --batch %d --search' for detail)\n", v->plan_model, spec,
            c->gbs);
}

static void strategy_text(const strata_verdict_t *v, const char *spec, FILE *out)
{
    if (!v->plan_model[0]) return;
    if (v->have_plan)
        plan_text(v, spec, out);
    else if (v->plan_no_memory)
        fprintf(out, "  the cluster records no accelerator (memory) to plan on; "
                     "'strata plan MODEL CLUSTER --accel ID' names one\n");
    else
        fprintf(out, "  %s: %s\n", v->plan_model, v->plan_skip);
}

/* ==== Dispatch ==== */

void strata_verdict_print_section(const strata_verdict_t *v, strata_verdict_section_t section,
                                  const char *spec, FILE *out)
{
    if (!v || !((v->sections >> section) & 1u)) return;
    spec = spec ? spec : strata_topo_name(v->topo);
    switch (section) {
    case STRATA_VERDICT_LINKS:
        links_text(v, out);
        break;
    case STRATA_VERDICT_TOPOLOGY:
        topology_text(v, spec, out);
        break;
    case STRATA_VERDICT_COLL:
        strata_verdict_print_coll_text(v, spec, out);
        break;
    case STRATA_VERDICT_SIM:
        sim_text(v, out);
        break;
    case STRATA_VERDICT_STRATEGY:
        strategy_text(v, spec, out);
        break;
    case STRATA_VERDICT_BOTTLENECK:
        strata_verdict_print_text(v, spec, out);
        break;
    default:
        break;
    }
}
