/*
 * sim.c — the public simulator API: create a simulator on a topology, add
 * collectives, run, read and print the result.
 *
 * A run makes one or two passes of the driver over the same engine:
 *  1. the simulation proper (statistics: time, bytes per channel, which
 *     class bounded each flow);
 *  2. with --trace only: the same run again with the busiest channels of
 *     pass 1 observed, recording every step and their loads (the engine is
 *     deterministic, so pass 2 retraces pass 1 exactly);
 * The α-β prediction (every flow alone on its path) is timed alongside
 * pass 1 (driver.c); a third pass with sharing switched off, the engine's
 * ideal mode, is made only for tests that compare the two.
 * Pass 2 costs what pass 1 costs; with phase reuse both are cheap.
 */
#include "sim.h"

#include <math.h>
#include <string.h>

struct strata_sim {
    const strata_topo_t *topo;
    strata_sim_opts_t opts;
    sim_topo_t st;
    sim_routes_t *routes;
    UTIL_VEC(sim_job_t) jobs;
    uint32_t nagents;
    uint32_t phase_limit;
    bool alone_pass;                   /* tests: the contention-free pass even when not needed */
    bool no_recall;                    /* tests: no folded part recalled across phases */
    uint64_t recalled, recalled_flows; /* the last run's (sim_fold_recalled) */
    bool ran;
};

void sim_set_phase_limit(strata_sim_t *sim, uint32_t n)
{
    sim->phase_limit = n;
}

void sim_set_route_limit(strata_sim_t *sim, size_t n)
{
    sim_routes_set_limit(sim->routes, n);
}

void sim_set_alone_pass(strata_sim_t *sim, bool always)
{
    sim->alone_pass = always;
}

void sim_set_fold_recall(strata_sim_t *sim, bool on)
{
    sim->no_recall = !on;
}

void sim_fold_recalled(const strata_sim_t *sim, uint64_t *parts, uint64_t *flows)
{
    *parts = sim->recalled;
    *flows = sim->recalled_flows;
}

uint64_t sim_route_flushes(const strata_sim_t *sim)
{
    return sim_routes_flushes(sim->routes);
}

strata_sim_opts_t strata_sim_opts_default(void)
{
    strata_sim_opts_t o = {.routing = STRATA_SIM_SPREAD,
                           .mode = STRATA_SIM_BARRIER,
                           .seed = 1,
                           .conns = 1,
                           .trace_links = 8,
                           .top_links = 10}; /* the rest false / NULL */
    return o;
}

strata_status_t strata_sim_create(const strata_topo_t *topo, const strata_sim_opts_t *opts,
                                  strata_sim_t **sim_p, strata_error_t *err)
{
    if (!topo || !sim_p) return strata_error_set(err, STRATA_ERR_INVALID, "no topology");
    strata_sim_t *sim = util_calloc(1, sizeof(*sim));
    if (!sim) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    sim->topo = topo;
    sim->opts = opts ? *opts : strata_sim_opts_default();
    if (sim->opts.trace_links < 0) sim->opts.trace_links = 0;
    if (sim->opts.top_links < 0) sim->opts.top_links = 0;
    strata_status_t rc = sim_topo_init(&sim->st, topo, err);
    if (rc == STRATA_OK) {
        sim->routes = sim_routes_create(topo, sim->opts.routing, sim->opts.seed, sim->opts.conns,
                                        sim->opts.cross_rail, err);
        if (!sim->routes)
            rc = err ? err->status : STRATA_ERR_NOMEM;
        else
            sim_routes_set_net(sim->routes, sim->st.net);
    }
    if (rc != STRATA_OK) {
        strata_sim_destroy(sim);
        return rc;
    }
    *sim_p = sim;
    return STRATA_OK;
}

void strata_sim_destroy(strata_sim_t *sim)
{
    if (!sim) return;
    for (size_t j = 0; j < sim->jobs.n; j++)
        util_free(sim->jobs.v[j].dev);
    UTIL_VEC_FREE(&sim->jobs);
    sim_routes_destroy(sim->routes);
    sim_topo_fini(&sim->st);
    util_free(sim);
}

/* ==== Switch agents (in-network reduction) ==== */

/* The device(s) that play a switch agent serving accelerators devs[0..n):
 * when they all sit in one server with scale-up switches, all of that
 * server's scale-up switches (NVLink SHARP reduces in every NVSwitch, each
 * GPU's traffic spread over them); otherwise the highest-tier device on the
 * route from the first to the last (their lowest common switch, where
 * InfiniBand SHARP would aggregate), on equal-cost path `which` (mod
 * their count) of that route: the roots of several shards spread over the
 * spines as SHARP's aggregation manager spreads its trees, rather than all
 * on the first. Returns a device or set id, or -1. */
static int32_t switch_device(strata_sim_t *sim, const int32_t *devs, uint32_t n, uint32_t which,
                             strata_error_t *err)
{
    const strata_topo_t *t = sim->topo;
    int32_t grp = strata_topo_device(t, devs[0]).group;
    bool same = grp >= 0;
    for (uint32_t i = 1; i < n && same; i++)
        same = strata_topo_device(t, devs[i]).group == grp;
    const int32_t *nbr, *chan;
    int32_t deg = strata_topo_adjacency(t, devs[0], &nbr, &chan), sw[64];
    uint32_t nsw = 0;
    for (int32_t i = 0; same && i < deg && nsw < 64; i++)
        if (strata_topo_device(t, nbr[i]).kind == STRATA_DEV_SCALEUP_SWITCH) sw[nsw++] = nbr[i];
    if (nsw == 1) return sw[0];
    if (nsw > 1) return sim_routes_add_set(sim->routes, sw, nsw);
    strata_topo_router_t *rt = NULL;
    int32_t path[64], hops = 0, best = devs[0];
    if (strata_topo_router_create(t, &rt, err) != STRATA_OK) return -1;
    double np = strata_topo_path_count(rt, devs[0], devs[n - 1]);
    uint64_t pick = np >= 1 ? (uint64_t)which % (uint64_t)(np > 1e9 ? 1e9 : np) : 0;
    if (strata_topo_path(rt, devs[0], devs[n - 1], pick, path, 64, &hops) == STRATA_OK)
        for (int32_t h = 0; h < hops; h++) {
            int32_t d = strata_topo_chan_dst(t, path[h]);
            if (strata_topo_device(t, d).tier > strata_topo_device(t, best).tier) best = d;
        }
    strata_topo_router_destroy(rt);
    if (best == devs[0] && n > 1)
        strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                         "no switch joins the ranks of a switch agent");
    return best == devs[0] && n > 1 ? -1 : best;
}

/* nvlstree's switch agents: agent P + n reduces and multicasts for node
 * n, ranks [n·g, min((n+1)·g, P)) (nvlstree.c), on the switch joining them. */
static strata_status_t place_node_switches(strata_sim_t *sim, uint32_t P, uint32_t g, int32_t *dev,
                                           strata_error_t *err)
{
    for (uint32_t n = 0; n * g < P; n++) {
        uint32_t m = P - n * g < g ? P - n * g : g;
        dev[P + n] = switch_device(sim, dev + n * g, m, 0, err);
        if (dev[P + n] < 0) return err && err->status ? err->status : STRATA_ERR_NOMEM;
    }
    return STRATA_OK;
}

/* Place innet's switch agents (innet.c): leaf i serves ranks [i·g, (i+1)·g);
 * with several leaves, root j joins ranks j, g + j, 2g + j ... (the owners
 * of shard j, one rail), played by the lowest switch common to them. */
static strata_status_t place_switches(strata_sim_t *sim, const strata_sched_t *s, int32_t *dev,
                                      strata_error_t *err)
{
    const strata_sched_params_t *p = strata_sched_params(s);
    uint32_t P = p->nranks, na = strata_sched_nagents(s), g = p->group ? p->group : P;
    if (p->algo == STRATA_ALGO_NVLSTREE && g > 0 && na == P + (P + g - 1) / g)
        return place_node_switches(sim, P, g, dev, err);
    uint32_t N = g ? P / g : 0;
    if (p->algo != STRATA_ALGO_INNET || g == 0 || P % g || na != P + N + (N > 1 ? g : 0))
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                "%s: switch agents of this schedule are not simulated",
                                strata_algo_name(p->algo));
    for (uint32_t i = 0; i < N; i++) {
        dev[P + i] = switch_device(sim, dev + i * g, g, 0, err);
        if (dev[P + i] < 0) return err && err->status ? err->status : STRATA_ERR_NOMEM;
    }
    int32_t *rail = N > 1 ? util_calloc(N, sizeof(int32_t)) : NULL;
    if (N > 1 && !rail) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    for (uint32_t j = 0; N > 1 && j < g; j++) {
        for (uint32_t i = 0; i < N; i++)
            rail[i] = dev[i * g + j];
        dev[P + N + j] = switch_device(sim, rail, N, j, err);
        if (dev[P + N + j] < 0) {
            util_free(rail);
            return err && err->status ? err->status : STRATA_ERR_NOMEM;
        }
    }
    util_free(rail);
    return STRATA_OK;
}

strata_status_t strata_sim_add(strata_sim_t *sim, const strata_sched_t *s, const int32_t *ranks,
                               strata_error_t *err)
{
    uint32_t P = strata_sched_params(s)->nranks, na = strata_sched_nagents(s);
    int32_t nep = strata_topo_endpoint_count(sim->topo);
    if (strata_sched_params(s)->chunks > STRATA_SIM_CHUNKS_MAX)
        return strata_error_set(err, STRATA_ERR_RANGE, "%u pipeline chunks: at most %d simulated",
                                strata_sched_params(s)->chunks, STRATA_SIM_CHUNKS_MAX);
    sim_job_t job = {s, na, strata_sched_nphases(s), sim->nagents, NULL};
    job.dev = util_calloc(na ? na : 1, sizeof(int32_t));
    if (!job.dev) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    for (uint32_t r = 0; r < P; r++) {
        int32_t ep = ranks ? ranks[r] : (int32_t)r;
        if (ep < 0 || ep >= nep) {
            util_free(job.dev);
            return strata_error_set(err, STRATA_ERR_RANGE,
                                    "rank %u is placed on endpoint %d but the cluster has %d", r,
                                    (int)ep, (int)nep);
        }
        job.dev[r] = strata_topo_endpoint(sim->topo, ep);
    }
    strata_status_t rc = na > P ? place_switches(sim, s, job.dev, err) : STRATA_OK;
    if (rc == STRATA_OK && UTIL_VEC_PUSH(&sim->jobs, job))
        rc = strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    if (rc != STRATA_OK) {
        util_free(job.dev);
        return rc;
    }
    sim->nagents += na;
    return STRATA_OK;
}

double strata_sim_busbw_factor(strata_coll_t coll, uint32_t P)
{
    /* nccl-tests doc/PERFORMANCE.md: busbw = algbw × factor; the
     * collective layer owns the table */
    if (P == 0) return 1;
    return strata_coll_busbw_factor(coll, P);
}

/* nccl-tests "size": the larger of the send and receive buffers. */
static double coll_bytes(const strata_sched_params_t *p)
{
    double n = (double)p->count * p->elem_size;
    switch (p->coll) {
    case STRATA_COLL_REDUCE_SCATTER:
    case STRATA_COLL_ALLGATHER:
    case STRATA_COLL_ALLTOALL:
        return n * p->nranks;
    default:
        return n;
    }
}

/* ==== Passes ==== */

static strata_status_t drive(strata_sim_t *sim, sim_trace_t *tr, bool ideal, bool show,
                             sim_drive_t *d, double *job_end, strata_error_t *err)
{
    util_progress_t prog;
    memset(d, 0, sizeof(*d));
    d->st = &sim->st;
    d->routes = sim->routes;
    d->jobs = sim->jobs.v;
    d->njobs = (uint32_t)sim->jobs.n;
    d->mode = sim->opts.mode;
    d->reuse = !sim->opts.no_reuse;
    d->fold = !sim->opts.no_fold;
    d->rotate = !sim->opts.no_rotate;
    d->recall = !sim->no_recall;
    d->ideal = ideal;
    d->phase_limit = sim->phase_limit;
    d->job_end = job_end;
    d->trace = tr;
    if (show && sim->opts.progress) { /* counts phases of the first collective */
        util_progress_begin(&prog, "simulating", sim->jobs.v[0].nphases);
        d->progress = &prog;
    }
    if (sim_net_reset(sim->st.net))
        return strata_error_set(err, STRATA_ERR_INTERNAL, "engine not idle");
    sim_net_set_ideal(sim->st.net, ideal);
    sim_net_set_load_observer(sim->st.net, tr ? sim_trace_on_load : NULL, tr);
    strata_status_t rc = sim_drive_run(d, err);
    sim_net_set_ideal(sim->st.net, false);
    sim_net_set_load_observer(sim->st.net, NULL, NULL);
    if (d->progress) util_progress_end(d->progress);
    return rc;
}

/* Bottleneck shares: along each phase's critical flow in BARRIER mode,
 * else by flow-time over all flows (docs/simulator.md). */
/* Bytes channel ch carried: the engine's, plus those of folded phases
 * counted outside it (extra, or NULL). */
static double chan_bytes(const strata_sim_t *sim, const double *extra, uint32_t ch)
{
    return sim_net_res_bytes(sim->st.net, ch) + (extra ? extra[ch] : 0);
}

static void fill_classes(strata_sim_t *sim, const sim_drive_t *d, strata_sim_result_t *res,
                         const double *extra)
{
    sim_net_stats_t stats;
    sim_net_get_stats(sim->st.net, &stats);
    const double *bound = d->have_crit ? d->crit : stats.tier_bound;
    double total = 0;
    for (int c = 0; c <= SIM_MAX_TIERS; c++)
        total += bound[c];
    res->nclasses = sim->st.nclasses;
    for (int c = 0; c < sim->st.nclasses; c++) {
        res->classes[c] = sim->st.classes[c];
        res->classes[c].bytes = 0;
    }
    for (uint32_t ch = 0; ch < sim->st.nchan; ch++)
        res->classes[sim->st.chan_class[ch]].bytes += chan_bytes(sim, extra, ch);
    for (int c = 0; c < res->nclasses; c++) {
        strata_sim_class_t *k = &res->classes[c];
        k->utilisation =
            k->capacity > 0 && res->time > 0 ? k->bytes / (k->capacity * res->time) : 0;
        k->bound_share = total > 0 ? bound[c] / total : 0;
    }
    res->latency_share = total > 0 ? bound[SIM_MAX_TIERS] / total : 0;
    res->events = stats.events;
    res->flows = stats.flows;
    res->batches = stats.batches;
}

static void chan_name(const strata_topo_t *topo, int32_t ch, char *buf, size_t len)
{
    strata_topo_device_t a = strata_topo_device(topo, strata_topo_chan_src(topo, ch));
    strata_topo_device_t b = strata_topo_device(topo, strata_topo_chan_dst(topo, ch));
    snprintf(buf, len, "%s -> %s", a.name ? a.name : "?", b.name ? b.name : "?");
}

/* The k most loaded channels (by utilisation, bytes / capacity), in
 * decreasing order; `bytes` holds the ranking key until the end. */
static strata_status_t fill_links(strata_sim_t *sim, strata_sim_result_t *res, int k,
                                  const double *extra, strata_error_t *err)
{
    res->links = util_calloc(k > 0 ? (size_t)k : 1, sizeof(*res->links));
    if (!res->links) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    int n = 0;
    for (uint32_t ch = 0; ch < sim->st.nchan; ch++) {
        double b = chan_bytes(sim, extra, ch) / sim_net_res_cap(sim->st.net, ch);
        if (!(b > 0)) continue;
        int pos = n < k ? n : k;
        /* loads within a relative 1e-12 keep channel order: sums of the
         * same bytes in another order (folded phases) rank alike */
        while (pos > 0 && res->links[pos - 1].bytes < b * (1 - 1e-12))
            pos--;
        if (pos >= k) continue;
        int last = n < k ? n : k - 1;
        memmove(&res->links[pos + 1], &res->links[pos], (size_t)(last - pos) * sizeof(*res->links));
        res->links[pos].chan = (int32_t)ch;
        res->links[pos].bytes = b;
        if (n < k) n++;
    }
    for (int i = 0; i < n; i++) {
        strata_sim_link_load_t *l = &res->links[i];
        l->link = strata_topo_chan_link(l->chan);
        l->cls = sim->st.chan_class[l->chan];
        double cap = sim_net_res_cap(sim->st.net, (uint32_t)l->chan);
        l->bytes = chan_bytes(sim, extra, (uint32_t)l->chan);
        l->utilisation = res->time > 0 ? l->bytes / (cap * res->time) : 0;
        chan_name(sim->topo, l->chan, l->name, sizeof(l->name));
    }
    res->nlinks = n;
    return STRATA_OK;
}

static strata_status_t trace_pass(strata_sim_t *sim, const strata_sim_result_t *res,
                                  strata_error_t *err)
{
    sim_trace_t tr = {0};
    sim_drive_t d;
    int nt = res->nlinks < sim->opts.trace_links ? res->nlinks : sim->opts.trace_links;
    char(*names)[96] = util_calloc((size_t)nt + 1, sizeof(*names));
    tr.nchan = sim->st.nchan;
    tr.chan_track = util_calloc(tr.nchan + 1, sizeof(int32_t));
    strata_status_t rc = STRATA_ERR_NOMEM;
    if (!names || !tr.chan_track) {
        strata_error_set(err, rc, "out of memory");
        goto done;
    }
    for (uint32_t ch = 0; ch < tr.nchan; ch++)
        tr.chan_track[ch] = -1;
    for (int i = 0; i < nt; i++) {
        tr.chan_track[res->links[i].chan] = i;
        snprintf(names[i], sizeof(names[i]), "%s", res->links[i].name);
    }
    rc = drive(sim, &tr, false, false, &d, NULL, err);
    if (rc == STRATA_OK)
        rc = sim_trace_write(&tr, sim->opts.trace_path, sim->jobs.v, (uint32_t)sim->jobs.n, names,
                             nt, err);
    if (tr.oom)
        strata_log(STRATA_LOG_WARN, "trace truncated: out of memory after %zu items", tr.ev.n);
    else if (tr.truncated)
        strata_log(STRATA_LOG_WARN, "trace truncated to its first %d items", SIM_TRACE_MAX_EVENTS);
done:
    util_free(names);
    util_free(tr.chan_track);
    UTIL_VEC_FREE(&tr.ev);
    return rc;
}

static void describe(strata_sim_t *sim, strata_sim_result_t *res, bool independent)
{
    const strata_sched_params_t *p = strata_sched_params(sim->jobs.v[0].s);
    char sz[32];
    util_fmt_bytes(res->bytes, sz, sizeof(sz));
    snprintf(res->desc, sizeof(res->desc), "%s %s %s on %u ranks%s, %u chunk%s, %s, %s",
             strata_coll_name(p->coll), strata_algo_name(p->algo), sz, p->nranks,
             sim->jobs.n > 1 ? " (+ concurrent)" : "", p->chunks, p->chunks == 1 ? "" : "s",
             sim->opts.routing == STRATA_SIM_ECMP ? "ecmp" : "spread",
             sim->opts.mode == STRATA_SIM_ASYNC || sim->jobs.n > 1 ? "async" : "barrier");
    if (p->algo == STRATA_ALGO_INNET && p->group > 0 && p->group < p->nranks) {
        size_t n = strlen(res->desc);
        snprintf(res->desc + n, sizeof(res->desc) - n, ", network switches reducing (SHARP)");
    }
    if (independent) { /* driver.c, run_groups */
        size_t n = strlen(res->desc);
        snprintf(res->desc + n, sizeof(res->desc) - n, ", proven independent");
    }
}

/* The network part (α + β) of sched's closed-form prediction for the
 * first collective — reductions (γ) are not simulated — or 0 when the
 * model does not cover it (its error is not the simulator's). */
static double model_time(strata_sim_t *sim, const char **caveat_p)
{
    const strata_sched_params_t *p = strata_sched_params(sim->jobs.v[0].s);
    strata_coll_machine_t m;
    strata_coll_cost_t c;
    strata_error_t ignored;
    if (p->nranks != (uint32_t)strata_topo_endpoint_count(sim->topo)) return 0;
    if (strata_coll_machine_from_topo(sim->topo, NULL, &m, &ignored) != STRATA_OK) return 0;
    /* innet over servers: the simulated schedule's root switch reduces
     * (InfiniBand SHARP), which the model assumes off unless asked */
    if (p->algo == STRATA_ALGO_INNET && p->group > 0 && p->group < p->nranks) m.net_reduce = true;
    /* a ring prices the rings its schedule runs: without the mesh's ring
     * orders it is one ring */
    if (p->algo == STRATA_ALGO_RING) m.mesh_rings = p->rings > 1 ? p->rings : 0;
    if (strata_coll_cost(&m, p->coll, p->algo, coll_bytes(p), &c, &ignored) != STRATA_OK) return 0;
    *caveat_p = strata_coll_model_caveat(&m, p->algo);
    return c.alpha + c.beta;
}

strata_status_t strata_sim_run(strata_sim_t *sim, strata_sim_result_t *res, strata_error_t *err)
{
    memset(res, 0, sizeof(*res));
    if (sim->jobs.n == 0) return strata_error_set(err, STRATA_ERR_INVALID, "nothing to simulate");
    if (sim->ran) return strata_error_set(err, STRATA_ERR_INVALID, "simulator already ran");
    sim->ran = true;
    double t0 = util_now();
    sim_drive_t d;
    double *extra = NULL; /* bytes folded phases carried outside the engine */
    res->njobs = (uint32_t)sim->jobs.n;
    res->job_time = util_calloc(sim->jobs.n, sizeof(double));
    if (!res->job_time) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    strata_status_t rc = drive(sim, NULL, false, true, &d, res->job_time, err);
    extra = d.res_extra;
    if (rc != STRATA_OK) goto fail;
    const strata_sched_params_t *p = strata_sched_params(sim->jobs.v[0].s);
    res->time = d.time;
    res->phases = d.phases;
    res->phases_simulated = d.phases_simulated;
    res->phases_certified = d.phases_certified;
    res->phases_generated = d.phases_generated;
    res->phases_folded = d.phases_folded;
    res->fold_flows = d.fold_flows;
    res->fold_timed = d.fold_timed;
    sim->recalled = d.fold_recalled;
    sim->recalled_flows = d.fold_recalled_flows;
    res->phases_rot = d.phases_rot;
    res->phases_quot = d.phases_quot;
    res->phases_map = d.phases_map;
    res->phases_relabeled = d.phases_relabeled;
    res->rot_order = d.phases_rot ? d.rot_order : 1;
    res->bytes = coll_bytes(p);
    res->algbw = d.time > 0 ? res->bytes / d.time : 0;
    res->busbw = res->algbw * strata_sim_busbw_factor(p->coll, p->nranks);
    fill_classes(sim, &d, res, extra);
    int k =
        sim->opts.top_links > sim->opts.trace_links ? sim->opts.top_links : sim->opts.trace_links;
    rc = fill_links(sim, res, k, extra, err);
    util_free(extra);
    extra = NULL;
    if (rc != STRATA_OK) goto fail;
    res->wall = util_now() - t0;
    describe(sim, res, d.groups_independent);
    if (sim->opts.trace_path && (rc = trace_pass(sim, res, err)) != STRATA_OK) goto fail;
    /* the contention-free time comes with pass 1 (driver.c); tests can
     * still run the engine's ideal mode to compare */
    res->time_ab = d.time_alone;
    sim_drive_t ab;
    if (sim->alone_pass) {
        if ((rc = drive(sim, NULL, true, false, &ab, NULL, err)) != STRATA_OK) goto fail;
        res->time_ab = ab.time;
    }
    res->time_model = model_time(sim, &res->model_caveat);
    if (res->nlinks > sim->opts.top_links) res->nlinks = sim->opts.top_links;
    return STRATA_OK;
fail:
    util_free(extra);
    strata_sim_result_free(res);
    return rc;
}

void strata_sim_result_free(strata_sim_result_t *res)
{
    if (!res) return;
    util_free(res->links);
    util_free(res->job_time);
    res->links = NULL;
    res->job_time = NULL;
    res->nlinks = 0;
    res->njobs = 0;
}

strata_status_t strata_sim_result_copy(strata_sim_result_t *dst, const strata_sim_result_t *src,
                                       strata_error_t *err)
{
    *dst = *src;
    dst->links = NULL;
    dst->job_time = NULL;
    if (src->nlinks > 0) {
        dst->links = util_malloc((size_t)src->nlinks * sizeof(*dst->links));
        if (dst->links) memcpy(dst->links, src->links, (size_t)src->nlinks * sizeof(*dst->links));
    }
    if (src->njobs > 0) {
        dst->job_time = util_malloc((size_t)src->njobs * sizeof(double));
        if (dst->job_time)
            memcpy(dst->job_time, src->job_time, (size_t)src->njobs * sizeof(double));
    }
    if ((src->nlinks > 0 && !dst->links) || (src->njobs > 0 && !dst->job_time)) {
        strata_sim_result_free(dst);
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory copying a result");
    }
    return STRATA_OK;
}
