/*
 * event.c — the engine's event loop and flow bookkeeping.
 *
 * A flow has two events: activation (submit time + path latency), when it
 * joins the lists of the resources it crosses, and completion, predicted
 * from its current rate and rescheduled whenever progressive filling gives
 * it a new rate. All events within a relative 1e-12 of the earliest one
 * form a batch; the batch's touched resources are recomputed once. The
 * completion callback may add flows; those that activate at once join the
 * same batch.
 */
#include "engine_int.h"

#include <math.h>
#include <string.h>

/* Events closer than this (relative) are simultaneous: symmetric flows
 * whose predicted completions differ only by rounding finish together. */
#define SIM_TIME_TOL 1e-12

/* ==== Creation ==== */

sim_net_t *sim_net_create(uint32_t n_res)
{
    _Static_assert(sizeof(sim_rstate_t) == 64, "a resource's record is one cache line");
    _Static_assert(SIM_MAX_TIERS <= 32, "a flow's tmask has a bit per tier");
    sim_net_t *net = util_calloc(1, sizeof(*net));
    if (!net) return NULL;
    net->n_res = n_res;
    size_t n = n_res ? n_res : 1;
    net->gcap = util_calloc(n, sizeof(double));
    net->gtier = util_calloc(n, 1);
    net->gbytes = util_calloc(n, sizeof(double));
    net->lmap = util_malloc(n * sizeof(uint32_t));
    net->load = util_calloc(n, sizeof(double));
    if (!net->gcap || !net->gtier || !net->gbytes || !net->lmap || !net->load) {
        sim_net_destroy(net);
        return NULL;
    }
    memset(net->lmap, 0xff, n * sizeof(uint32_t)); /* UINT32_MAX: none */
    net->run = 1;                                  /* lrun entries start at 0 */
    net->weight = 1;
    return net;
}

/* Room for one more local record: a new 64-byte aligned block, twice as
 * large, the records moved (their flow lists go with them). */
static int grow_local(sim_net_t *net)
{
    uint32_t cap = net->cap_local ? net->cap_local * 2 : 64;
    if (cap > net->n_res) cap = net->n_res;
    void *mem = util_calloc((size_t)cap + 1, sizeof(sim_rstate_t));
    if (!mem) return -1;
    sim_rstate_t *rs = (sim_rstate_t *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
    uint32_t *lrun = util_realloc(net->lrun, (size_t)cap * sizeof(*lrun));
    if (!lrun) {
        util_free(mem);
        return -1;
    }
    net->lrun = lrun;
    if (net->cap_local) memcpy(rs, net->rs, (size_t)net->cap_local * sizeof(*rs));
    util_free(net->rs_mem);
    net->rs_mem = mem;
    net->rs = rs;
    net->cap_local = cap;
    return 0;
}

/* Global resource g's local number, given one on first use (its record
 * reset, keeping the list's memory of the record's last use). UINT32_MAX
 * on OOM. */
static uint32_t local_of(sim_net_t *net, uint32_t g)
{
    uint32_t l = net->lmap[g];
    if (l != UINT32_MAX) {
        if (net->lrun[l] != net->run) { /* numbered by an earlier run */
            net->lrun[l] = net->run;
            net->n_used++;
        }
        return l;
    }
    if (net->n_local == net->cap_local && grow_local(net)) return UINT32_MAX;
    l = net->n_local++;
    net->lrun[l] = net->run;
    net->n_used++;
    sim_rstate_t *rs = &net->rs[l];
    rs->cap = net->gcap[g];
    rs->tier = net->gtier[g];
    rs->gid = g;
    rs->n = rs->nun = 0;
    rs->mark = 0; /* never a live epoch: find_component's epoch is >= 1 */
    net->lmap[g] = l;
    return l;
}

void sim_net_destroy(sim_net_t *net)
{
    if (!net) return;
    for (uint32_t r = 0; net->rs && r < net->cap_local; r++)
        util_free(net->rs[r].v);
    UTIL_VEC_FREE(&net->hpool);
    util_free(net->flows);
    util_free(net->ftb);
    util_free(net->rs_mem);
    util_free(net->lrun);
    util_free(net->gcap);
    util_free(net->gtier);
    util_free(net->gbytes);
    util_free(net->lmap);
    util_free(net->load);
    UTIL_VEC_FREE(&net->free_slots);
    UTIL_VEC_FREE(&net->comp_res);
    UTIL_VEC_FREE(&net->comp_flow);
    UTIL_VEC_FREE(&net->shares);
    UTIL_VEC_FREE(&net->level);
    UTIL_VEC_FREE(&net->lshare);
    UTIL_VEC_FREE(&net->batch);
    sim_heap_free(&net->heap);
    util_free(net);
}

void sim_net_set_res(sim_net_t *net, uint32_t r, double cap, unsigned tier)
{
    if (r >= net->n_res) return;
    net->gcap[r] = cap;
    net->gtier[r] = (uint8_t)(tier < SIM_MAX_TIERS ? tier : SIM_MAX_TIERS - 1);
    if (net->lmap[r] != UINT32_MAX) {
        net->rs[net->lmap[r]].cap = cap;
        net->rs[net->lmap[r]].tier = net->gtier[r];
    }
}

uint32_t sim_net_res_count(const sim_net_t *net)
{
    return net->n_res;
}
double sim_net_now(const sim_net_t *net)
{
    return net->now;
}
const double *sim_net_done_breakdown(const sim_net_t *net)
{
    return net->done_tb;
}
double sim_net_res_bytes(const sim_net_t *net, uint32_t r)
{
    return net->gbytes[r];
}
double sim_net_res_cap(const sim_net_t *net, uint32_t r)
{
    return net->gcap[r];
}
unsigned sim_net_res_tier(const sim_net_t *net, uint32_t r)
{
    return net->gtier[r];
}
void sim_net_get_stats(const sim_net_t *net, sim_net_stats_t *out)
{
    *out = net->stats;
}

void sim_net_set_load_observer(sim_net_t *net, sim_load_fn fn, void *ctx)
{
    net->observer = fn;
    net->observer_ctx = ctx;
}

int sim_net_rewind(sim_net_t *net)
{
    if (net->pending) return -1;
    net->now = 0;
    /* the local numbering starts again unless the run used all of it
     * (engine_int.h); a kept record is as local_of would reset it: no
     * flow pending, so its list was emptied at its last batch */
    if (net->n_used < net->n_local) {
        for (uint32_t l = 0; l < net->n_local; l++)
            net->lmap[net->rs[l].gid] = UINT32_MAX;
        net->n_local = 0;
    }
    net->n_used = 0;
    if (++net->run == 0) { /* wrapped: no record may look used by this run */
        memset(net->lrun, 0, (size_t)net->cap_local * sizeof(*net->lrun));
        net->run = 1;
    }
    net->hpool.n = 0; /* no flow pending: no live hops */
    /* Free slots as a stack popping 0, 1, 2 ...: the order of a fresh net. */
    net->free_slots.n = 0;
    if (UTIL_VEC_RESERVE(&net->free_slots, net->n_slots)) return -1;
    for (uint32_t i = 0; i < net->n_slots; i++)
        net->free_slots.v[i] = net->n_slots - 1 - i;
    net->free_slots.n = net->n_slots;
    return 0;
}

int sim_net_reset(sim_net_t *net)
{
    if (sim_net_rewind(net)) return -1;
    memset(&net->stats, 0, sizeof(net->stats));
    memset(net->gbytes, 0, (size_t)net->n_res * sizeof(double));
    memset(net->load, 0, (size_t)net->n_res * sizeof(double));
    return 0;
}

void sim_net_set_weight(sim_net_t *net, double weight)
{
    net->weight = weight;
}
void sim_net_set_ideal(sim_net_t *net, bool ideal)
{
    net->ideal = ideal;
}

/* ==== Flows ==== */

static int new_slot(sim_net_t *net, uint32_t *id_p)
{
    if (net->free_slots.n) {
        *id_p = net->free_slots.v[--net->free_slots.n];
        return 0;
    }
    if (net->n_slots == net->cap_slots) {
        uint32_t cap = net->cap_slots ? net->cap_slots * 2 : 256;
        sim_flow_t *f = util_realloc(net->flows, (size_t)cap * sizeof(*f));
        if (!f) return -1;
        memset(f + net->cap_slots, 0, (size_t)(cap - net->cap_slots) * sizeof(*f));
        net->flows = f;
        double(*tb)[SIM_MAX_TIERS] = util_realloc(net->ftb, (size_t)cap * sizeof(*tb));
        if (!tb) return -1;
        net->ftb = tb;
        net->cap_slots = cap;
    }
    if (sim_heap_reserve(&net->heap, net->n_slots)) return -1;
    *id_p = net->n_slots++;
    return 0;
}

/* Room for n more hops in the pool. When it is full and at least half of
 * it is hops of completed flows, the pending flows' hops move to a new
 * pool (in slot order) with room for twice what they and the new ones
 * need, and no less than before; otherwise it grows in place to twice its
 * use (realloc: pages not yet written are not touched), and the pending
 * flows' hops pointers follow. Either way the work is paid for by the
 * hops added since the last time. */
static int hop_room(sim_net_t *net, uint32_t n)
{
    if (net->hpool.cap - net->hpool.n >= n) return 0;
    sim_fhop_t *v;
    size_t at = 0;
    if (net->hpool.n - net->live_hops < net->hpool.n / 2) {
        size_t cap = 2 * (net->hpool.n + n);
        v = util_realloc(net->hpool.v, (cap < 256 ? 256 : cap) * sizeof(*v));
        if (!v) return -1;
        net->hpool.cap = cap < 256 ? 256 : cap;
        for (uint32_t i = 0; i < net->n_slots; i++) {
            sim_flow_t *f = &net->flows[i];
            if (f->state != FLOW_FREE && f->n_hops) f->hops = v + f->hoff;
        }
        net->hpool.v = v;
        return 0;
    }
    size_t cap = 2 * (net->live_hops + n);
    if (cap < net->hpool.cap) cap = net->hpool.cap;
    v = util_malloc(cap * sizeof(*v));
    if (!v) return -1;
    for (uint32_t i = 0; i < net->n_slots; i++) {
        sim_flow_t *f = &net->flows[i];
        if (f->state == FLOW_FREE || f->n_hops == 0) continue;
        memcpy(v + at, net->hpool.v + f->hoff, f->n_hops * sizeof(*v));
        f->hoff = (uint32_t)at;
        f->hops = v + at;
        at += f->n_hops;
    }
    util_free(net->hpool.v);
    net->hpool.v = v;
    net->hpool.n = at;
    net->hpool.cap = cap;
    return 0;
}

int sim_flow_add(sim_net_t *net, double t_start, double latency, double bytes,
                 const sim_hop_t *hops, uint32_t n_hops, uint64_t tag)
{
    unsigned min_tier = SIM_MAX_TIERS;
    for (uint32_t h = 0; h < n_hops; h++) {
        if (hops[h].res >= net->n_res || !(hops[h].w > 0) || !(net->gcap[hops[h].res] > 0))
            return -1;
        if (net->gtier[hops[h].res] < min_tier) min_tier = net->gtier[hops[h].res];
    }
    return sim_flow_add_valid(net, t_start, latency, bytes, hops, n_hops, min_tier, tag);
}

int sim_flow_add_valid(sim_net_t *net, double t_start, double latency, double bytes,
                       const sim_hop_t *hops, uint32_t n_hops, unsigned min_tier, uint64_t tag)
{
    if (!(t_start >= net->now) || !(latency >= 0) || !(bytes >= 0) || !isfinite(bytes)) return -1;
    uint32_t id;
    if (new_slot(net, &id)) return -1;
    sim_flow_t *f = &net->flows[id];
    if (hop_room(net, n_hops)) {
        SIM_PUSH(&net->free_slots, id);
        return -1;
    }
    f->hoff = (uint32_t)net->hpool.n;
    f->hops = n_hops ? net->hpool.v + f->hoff : NULL;
    for (uint32_t h = 0; h < n_hops; h++) {
        uint32_t l = local_of(net, hops[h].res);
        if (l == UINT32_MAX) {
            SIM_PUSH(&net->free_slots, id);
            return -1;
        }
        f->hops[h] = (sim_fhop_t){l, 0, hops[h].w};
    }
    f->n_hops = n_hops;
    net->hpool.n += n_hops;
    net->live_hops += n_hops;
    f->min_tier = (uint8_t)min_tier;
    f->bytes = f->remaining = bytes;
    f->rate = 0;
    f->tag = tag;
    f->bott = UINT32_MAX;
    f->state = FLOW_WAITING;
    f->ctier = SIM_TB_NONE;
    f->tmask = 0; /* its ftb row is stale until written (engine_int.h) */
    f->latency = latency;
    net->stats.tier_bound[SIM_MAX_TIERS] += latency * net->weight;
    net->pending++;
    sim_heap_set(&net->heap, id, t_start + latency);
    return 0;
}

/* Each resource enters a batch's touched list (the start of the next
 * component, flow.c) once, its filling scratch reset. */
static inline int touch(sim_net_t *net, uint32_t r)
{
    sim_rstate_t *rs = &net->rs[r];
    if (rs->mark == net->epoch + 1) return 0;
    rs->mark = net->epoch + 1;
    rs->rem = rs->cap;
    rs->wsum = 0;
    rs->nun = 0;
    rs->maxrate = 0;
    return SIM_PUSH(&net->comp_res, r);
}

/* Append flow entry e to resource r's list; its index, or -1 on OOM. */
static int64_t list_push(sim_rstate_t *rs, sim_rentry_t e)
{
    uint32_t room = rs->v ? 1u << rs->lg_cap : 0;
    if (rs->n == room) {
        unsigned lg = rs->v ? rs->lg_cap + 1u : 2u;
        if (lg > 31) return -1;
        sim_rentry_t *nv = util_realloc(rs->v, ((size_t)1 << lg) * sizeof(*nv));
        if (!nv) return -1;
        rs->v = nv;
        rs->lg_cap = (uint8_t)lg;
    }
    rs->v[rs->n] = e;
    return rs->n++;
}

static int activate(sim_net_t *net, uint32_t id)
{
    sim_flow_t *f = &net->flows[id];
    net->stats.events++;
    f->state = FLOW_ACTIVE;
    f->t_last = net->now;
    if (f->n_hops == 0 || f->bytes == 0) {
        sim_heap_set(&net->heap, id, net->now); /* completes in this batch */
        return 0;
    }
    if (net->ideal && !net->observer) {
        /* Contention-free: the rate depends on the flow's own path only
         * (the bottleneck of cap / w, as flow.c's fill_ideal), so it is
         * fixed here, once; the flow joins no list and no component is
         * searched. The completion is the one the recomputation would
         * schedule (the same rate from the same instant), bit for bit. */
        double best = sim_flow_alone_rate(net, f);
        f->rate = best;
        sim_heap_set(&net->heap, id, net->now + f->remaining / best);
        return 0;
    }
    for (uint32_t h = 0; h < f->n_hops; h++) {
        uint32_t r = f->hops[h].res;
        int64_t p = list_push(&net->rs[r], (sim_rentry_t){id, h});
        if (p < 0 || touch(net, r)) return -1;
        f->hops[h].pos = (uint32_t)p;
    }
    /* No rate yet: it gets one (and its completion event) at the batch's
     * recomputation; until then it must not be popped again. */
    return 0;
}

static int deactivate(sim_net_t *net, sim_flow_t *f)
{
    if (net->ideal && !net->observer) { /* it joined no list (activate) */
        for (uint32_t h = 0; h < f->n_hops; h++)
            net->gbytes[net->rs[f->hops[h].res].gid] += f->bytes * f->hops[h].w * net->weight;
        return 0;
    }
    for (uint32_t h = 0; h < f->n_hops; h++) {
        uint32_t r = f->hops[h].res;
        sim_rstate_t *l = &net->rs[r];
        if (touch(net, r)) return -1; /* first: it clears nun */
        l->nun++;                     /* its entry is compacted at the recomputation (flow.c) */
        net->gbytes[l->gid] += f->bytes * f->hops[h].w * net->weight;
    }
    return 0;
}

/* The completing flow's breakdown into done_tb: its written ftb entries,
 * the current tier's from cacc, zero elsewhere — the figures a row
 * cleared at the flow's start and flushed at its end would hold. */
static void done_breakdown(sim_net_t *net, const sim_flow_t *f)
{
    double *tb = net->done_tb;
    memset(tb, 0, SIM_MAX_TIERS * sizeof(double));
    for (uint32_t m = f->tmask; m; m &= m - 1) {
        unsigned t = (unsigned)__builtin_ctz(m);
        tb[t] = net->ftb[f - net->flows][t];
    }
    if (f->ctier != SIM_TB_NONE) tb[f->ctier] = f->cacc;
    tb[SIM_MAX_TIERS] = f->latency;
}

static int complete(sim_net_t *net, uint32_t id, sim_done_fn done, void *ctx)
{
    sim_flow_t *f = &net->flows[id];
    net->stats.events++;
    net->stats.flows++;
    sim_flow_advance(net, f);
    if (f->n_hops && f->bytes > 0 && deactivate(net, f)) return -1;
    uint64_t tag = f->tag;
    done_breakdown(net, f);
    f->state = FLOW_FREE;
    net->live_hops -= f->n_hops;
    net->pending--;
    if (SIM_PUSH(&net->free_slots, id)) return -1;
    if (done) done(ctx, tag, net->now);
    return 0;
}

static int handle(sim_net_t *net, uint32_t id, sim_done_fn done, void *ctx)
{
    return net->flows[id].state == FLOW_WAITING ? activate(net, id) : complete(net, id, done, ctx);
}

/* Pop and handle every event within the tolerance of the earliest one, in
 * (time, id) order. A large batch (symmetric flows that start or finish
 * together) is taken from the heap at once and sorted (sim_heap_take)
 * rather than popped one by one; events added while it is handled (a
 * completion's callback starting flows at once) are merged in by the same
 * order, so the events are handled exactly as popping would. */
static int run_batch(sim_net_t *net, sim_done_fn done, void *ctx)
{
    double t = sim_heap_top_key(&net->heap);
    if (!isfinite(t)) return -1; /* a flow with no rate: cannot happen with cap > 0 */
    if (t > net->now) net->now = t;
    double limit = t + SIM_TIME_TOL * fabs(t);
    if (UTIL_VEC_RESERVE(&net->batch, net->heap.n)) return -1;
    uint32_t m = sim_heap_take(&net->heap, limit, net->batch.v);
    for (uint32_t k = 0; k < m;) {
        sim_hent_t e = net->batch.v[k];
        if (net->heap.n && sim_heap_top_key(&net->heap) <= limit &&
            (net->heap.ent[0].key < e.key ||
             (net->heap.ent[0].key == e.key && net->heap.ent[0].id < e.id))) {
            if (handle(net, sim_heap_pop(&net->heap), done, ctx)) return -1;
            continue;
        }
        k++;
        if (handle(net, e.id, done, ctx)) return -1;
    }
    while (net->heap.n && sim_heap_top_key(&net->heap) <= limit)
        if (handle(net, sim_heap_pop(&net->heap), done, ctx)) return -1;
    net->stats.batches++;
    return sim_flow_recompute(net);
}

int sim_net_run(sim_net_t *net, sim_done_fn done, void *ctx)
{
    while (net->heap.n) {
        if (run_batch(net, done, ctx)) return -1;
    }
    return net->pending ? -1 : 0;
}
