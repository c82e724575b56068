/*
 * flow.c — max-min fair rates by progressive filling, recomputed only for
 * the connected component an event touched.
 *
 * Progressive filling (Bertsekas & Gallager, "Data Networks", §6.5.2; the
 * same fixed point SimGrid's lmm solver computes): raise every unfixed
 * flow's rate together; the first resource to saturate fixes the rate of
 * all unfixed flows crossing it at its fair share rem/Σw; remove them,
 * subtract what they use from the other resources they cross; repeat. A
 * resource's share never decreases as flows are fixed, so a min-heap of
 * shares with lazy deletion finds the next bottleneck in O(log R).
 *
 * Incrementality (what makes the engine fast): rates outside the component
 * of the touched resources cannot change, because max-min fairness
 * decomposes over connected components of the flow/resource graph. The
 * component is found by breadth-first search from the touched resources.
 */
#include "engine_int.h"

#include <math.h>

/* ==== Share heap (plain binary heap, lazy deletion) ==== */

static int share_push(sim_net_t *net, double share, uint32_t res)
{
    sim_share_t e = {share, res, net->rs[res].gid};
    if (SIM_PUSH(&net->shares, e)) return -1;
    sim_share_t *v = net->shares.v;
    size_t i = net->shares.n - 1;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (v[p].share < e.share || (v[p].share == e.share && v[p].gid <= e.gid)) break;
        v[i] = v[p];
        i = p;
    }
    v[i] = e;
    return 0;
}

static sim_share_t share_pop(sim_net_t *net)
{
    sim_share_t *v = net->shares.v;
    sim_share_t top = v[0], last = v[--net->shares.n];
    size_t n = net->shares.n, i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && (v[c + 1].share < v[c].share ||
                          (v[c + 1].share == v[c].share && v[c + 1].gid < v[c].gid)))
            c++;
        if (last.share < v[c].share || (last.share == v[c].share && last.gid <= v[c].gid)) break;
        v[i] = v[c];
        i = c;
    }
    if (n) v[i] = last;
    return top;
}

static double share_of(const sim_net_t *net, uint32_t r)
{
    double rem = net->rs[r].rem > 0 ? net->rs[r].rem : 0;
    return rem / net->rs[r].wsum;
}

/* ==== Component search ==== */

/* Entry p of resource r's list is live when its flow is active and its
 * hop points back at it. A completed flow's entries are left as they were
 * (event.c's deactivate only counts them): its slot is free, or taken by
 * a flow added since, which is waiting, or active with its entries in
 * other lists or after this list's old end (appended), never at p of r. */
static inline bool entry_live(const sim_net_t *net, uint32_t r, uint32_t p)
{
    sim_rentry_t e = net->rs[r].v[p];
    const sim_flow_t *f = &net->flows[e.flow];
    return f->state == FLOW_ACTIVE && e.hop < f->n_hops && f->hops[e.hop].res == r &&
           f->hops[e.hop].pos == p;
}

/* Drop the dead entries (event.c's deactivate, counted in nun) from the
 * lists the batch touched: a list with only dead entries is emptied
 * without reading one, else the last live entries fill the holes and
 * their flows learn their new positions. Leaves nun 0, as filling
 * expects. */
static void compact_touched(sim_net_t *net)
{
    for (size_t i = 0; i < net->comp_res.n; i++) {
        uint32_t r = net->comp_res.v[i];
        sim_rstate_t *l = &net->rs[r];
        uint32_t dead = l->nun, n = l->n, p = 0;
        l->nun = 0;
        if (dead == 0) continue;
        if (dead == n) {
            l->n = 0;
            continue;
        }
        while (p < n) {
            if (entry_live(net, r, p)) {
                p++;
                continue;
            }
            while (n > p && !entry_live(net, r, n - 1))
                n--;
            if (n == p) break;
            sim_rentry_t e = l->v[--n]; /* live, after p */
            l->v[p] = e;
            net->flows[e.flow].hops[e.hop].pos = p++;
        }
        l->n = n;
    }
}

/* A resource joins the component once, its filling scratch reset. */
static int add_res(sim_net_t *net, uint32_t r)
{
    sim_rstate_t *rs = &net->rs[r];
    if (rs->mark == net->epoch) return 0;
    rs->mark = net->epoch;
    rs->rem = rs->cap;
    rs->wsum = 0;
    rs->nun = 0;
    rs->maxrate = 0;
    return SIM_PUSH(&net->comp_res, r);
}

/* The component of the touched resources, and progressive filling's
 * starting point in the same walk: each flow, when first reached, is
 * unfixed and adds its weights to its resources (in the order flows
 * join comp_flow, as a separate pass over them would). The touched
 * resources are comp_res already, marked epoch + 1 (event.c's touch). */
static int find_component(sim_net_t *net)
{
    net->epoch++;
    net->comp_flow.n = 0;
    for (size_t i = 0; i < net->comp_res.n; i++) {
        const sim_rstate_t *l = &net->rs[net->comp_res.v[i]];
        for (size_t j = 0; j < l->n; j++) {
            sim_flow_t *f = &net->flows[l->v[j].flow];
            if (f->mark == net->epoch) continue;
            f->mark = net->epoch;
            f->fixed = 0;
            if (SIM_PUSH(&net->comp_flow, l->v[j].flow)) return -1;
            for (uint32_t h = 0; h < f->n_hops; h++) {
                uint32_t r = f->hops[h].res;
                if (add_res(net, r)) return -1;
                net->rs[r].wsum += f->hops[h].w;
                net->rs[r].nun++;
            }
        }
    }
    return 0;
}

/* ==== Progressive filling ==== */

/* Fix flow f at rate x, bottlenecked by resource b; update the shares of
 * the other resources it crosses. Returns 0 or -1 on OOM. */
static int fix_flow(sim_net_t *net, sim_flow_t *f, double x, uint32_t b, bool push)
{
    f->fixed = 1;
    f->next_rate = x;
    f->bott = b;
    for (uint32_t h = 0; h < f->n_hops; h++) {
        uint32_t r = f->hops[h].res;
        net->rs[r].rem -= x * f->hops[h].w;
        net->rs[r].wsum -= f->hops[h].w;
        if (x > net->rs[r].maxrate) net->rs[r].maxrate = x;
        if (--net->rs[r].nun > 0 && push && r != b && share_push(net, share_of(net, r), r))
            return -1;
    }
    return 0;
}

/* Level rounds: collectives are regular, so a component usually has only a
 * few distinct fair-share levels. A round finds the lowest share among
 * resources with unfixed flows by a linear scan and fixes every unfixed
 * flow of every resource at that level (within a relative 1e-12, the
 * engine's time tolerance) — exact progressive filling, since removing
 * flows at rate s from a resource whose share is s leaves its share s.
 * O(R + H) per round; after SIM_LEVEL_ROUNDS rounds the heap takes over,
 * so irregular components stay O(H log H). Returns -1 on OOM. */
#define SIM_LEVEL_ROUNDS 4

static int level_rounds(sim_net_t *net, size_t *left_p)
{
    size_t left = net->comp_flow.n;
    if (UTIL_VEC_RESERVE(&net->lshare, net->comp_res.n)) return -1;
    for (int round = 0; round < SIM_LEVEL_ROUNDS && left; round++) {
        /* each share once (a division, and a resource's record), kept for
         * the second scan */
        double s = INFINITY, *sh = net->lshare.v;
        for (size_t i = 0; i < net->comp_res.n; i++) {
            uint32_t r = net->comp_res.v[i];
            sh[i] = net->rs[r].nun ? share_of(net, r) : INFINITY;
            if (sh[i] < s) s = sh[i];
        }
        double lim = s * (1 + 1e-12);
        net->level.n = 0;
        for (size_t i = 0; i < net->comp_res.n; i++)
            if (sh[i] <= lim && SIM_PUSH(&net->level, net->comp_res.v[i])) return -1;
        for (size_t i = 0; i < net->level.n; i++) {
            const sim_rstate_t *l = &net->rs[net->level.v[i]];
            for (size_t j = 0; j < l->n; j++) {
                sim_flow_t *f = &net->flows[l->v[j].flow];
                if (f->fixed) continue;
                fix_flow(net, f, s, net->level.v[i], false);
                left--;
            }
        }
    }
    *left_p = left;
    return 0;
}

/* Run progressive filling over the component; new rates go to each
 * flow's next_rate and bottlenecks into its bott. */
static int fill(sim_net_t *net)
{
    size_t left;
    if (level_rounds(net, &left)) return -1;
    if (left == 0) return 0;
    net->shares.n = 0;
    for (size_t i = 0; i < net->comp_res.n; i++) {
        uint32_t r = net->comp_res.v[i];
        if (net->rs[r].nun && share_push(net, share_of(net, r), r)) return -1;
    }
    while (net->shares.n) {
        sim_share_t e = share_pop(net);
        uint32_t r = e.res;
        if (net->rs[r].nun == 0 || e.share != share_of(net, r)) continue; /* stale */
        const sim_rstate_t *l = &net->rs[r];
        for (size_t j = 0; j < l->n; j++) {
            sim_flow_t *f = &net->flows[l->v[j].flow];
            if (f->fixed) continue;
            if (fix_flow(net, f, e.share, r, true)) return -1;
        }
    }
    return 0;
}

/* Attribution among ties. A resource is a bottleneck of a flow when it is
 * saturated and no flow crossing it has a higher rate (Bertsekas &
 * Gallager §6.5.2). A flow can have several (a non-blocking tree whose
 * uplinks fill exactly when the NICs do); it is charged to the one of the
 * lowest class — classes are numbered from the inside of a server outwards
 * (route.c) — so a fabric that merely keeps up is not reported as the
 * bottleneck. maxrate[r] is the highest rate fixed on r: flows are fixed
 * in non-decreasing rate order. */
static void attribute_ties(sim_net_t *net)
{
    for (size_t i = 0; i < net->comp_flow.n; i++) {
        sim_flow_t *f = &net->flows[net->comp_flow.v[i]];
        if (net->rs[f->bott].tier <= f->min_tier) continue; /* no hop of a lower class */
        for (uint32_t h = 0; h < f->n_hops; h++) {
            uint32_t r = f->hops[h].res;
            if (net->rs[r].tier < net->rs[f->bott].tier &&
                net->rs[r].rem <= net->rs[r].cap * 1e-9 &&
                f->next_rate >= net->rs[r].maxrate * (1 - 1e-9))
                f->bott = r;
        }
    }
}

double sim_flow_alone_rate(const sim_net_t *net, sim_flow_t *f)
{
    double best = INFINITY;
    for (uint32_t h = 0; h < f->n_hops; h++) {
        double x = net->rs[f->hops[h].res].cap / f->hops[h].w;
        if (x < best) {
            best = x;
            f->bott = f->hops[h].res;
        }
    }
    return best;
}

/* Contention-free rates: each flow alone on its path. */
static void fill_ideal(sim_net_t *net)
{
    for (size_t i = 0; i < net->comp_flow.n; i++) {
        sim_flow_t *f = &net->flows[net->comp_flow.v[i]];
        f->next_rate = sim_flow_alone_rate(net, f);
    }
    /* Loads for the observer: Σ rate × w, as rem = cap - load. */
    for (size_t i = 0; i < net->comp_res.n; i++)
        net->rs[net->comp_res.v[i]].rem = net->rs[net->comp_res.v[i]].cap;
    for (size_t i = 0; i < net->comp_flow.n; i++) {
        sim_flow_t *f = &net->flows[net->comp_flow.v[i]];
        for (uint32_t h = 0; h < f->n_hops; h++)
            net->rs[f->hops[h].res].rem -= f->next_rate * f->hops[h].w;
    }
}

/* ==== Applying new rates ==== */

static void notify_loads(sim_net_t *net)
{
    if (!net->observer) return;
    for (size_t i = 0; i < net->comp_res.n; i++) {
        uint32_t r = net->comp_res.v[i], g = net->rs[r].gid;
        double used = net->rs[r].n ? net->rs[r].cap - (net->rs[r].rem > 0 ? net->rs[r].rem : 0) : 0;
        if (used != net->load[g]) {
            net->load[g] = used;
            net->observer(net->observer_ctx, g, net->now, used);
        }
    }
}

/* New rates and completion times. When the component is a large part of
 * the heap (a collective's flows starting together), the heap is put in
 * order once after all its keys changed rather than sifted per flow. */
static void apply_rates(sim_net_t *net)
{
    bool bulk = net->comp_flow.n * 4 >= net->heap.n;
    for (size_t i = 0; i < net->comp_flow.n; i++) {
        uint32_t id = net->comp_flow.v[i];
        sim_flow_t *f = &net->flows[id];
        double x = f->next_rate;
        sim_flow_advance(net, f);
        if (x == f->rate && net->heap.pos[id] != UINT32_MAX) continue;
        f->rate = x;
        double t = x > 0 ? net->now + f->remaining / x : INFINITY;
        if (bulk)
            sim_heap_set_lazy(&net->heap, id, t);
        else
            sim_heap_set(&net->heap, id, t);
    }
    if (bulk) sim_heap_fix(&net->heap);
}

/* Before the BFS epoch could wrap (epoch + 1 marks touched resources):
 * forget every old mark. */
static void epoch_wrap(sim_net_t *net)
{
    if (net->epoch < UINT32_MAX - 2) return;
    for (uint32_t r = 0; r < net->n_local; r++)
        net->rs[r].mark = 0;
    for (uint32_t i = 0; i < net->n_slots; i++)
        net->flows[i].mark = 0;
    net->epoch = 0;
}

static int recompute(sim_net_t *net)
{
    compact_touched(net);
    if (find_component(net)) return -1;
    if (net->comp_flow.n == 0) {
        notify_loads(net);
        return 0;
    }
    net->stats.comp_flows += net->comp_flow.n;
    /* Bring every flow's account up to date before filling sets its new
     * bottleneck: the time since its last rate change belongs to the tier
     * that bound it then (apply_rates' advance is then a no-op for the
     * bytes, which are the same either way). */
    for (size_t i = 0; i < net->comp_flow.n; i++)
        sim_flow_advance(net, &net->flows[net->comp_flow.v[i]]);
    if (net->ideal)
        fill_ideal(net);
    else if (fill(net))
        return -1;
    else
        attribute_ties(net);
    apply_rates(net);
    notify_loads(net);
    return 0;
}

int sim_flow_recompute(sim_net_t *net)
{
    if (net->comp_res.n == 0) return 0;
    int rc = recompute(net);
    net->comp_res.n = 0; /* the next batch's touched resources start here */
    epoch_wrap(net);
    return rc;
}
