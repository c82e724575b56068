/*
 * fold.c — a phase's flows cut into independent parts by a partial
 * contention-free certificate, and each part timed once per shape.
 *
 * Setting: a BARRIER phase whose every send starts at the phase start
 * (driver.c checks it: a send waits only for local steps, which take no
 * time), so the phase is a set of flows f, each activated at its path
 * latency, sharing channels by max-min; the phase ends when the last flow
 * delivers its last byte (a receive ends at its message's arrival, or
 * later only when it waits for an earlier receive of the same phase,
 * itself a flow's end). Let s_f = min over f's hops of cap / w (its rate
 * alone) and, per channel r, D_r = Σ_f w_fr · s_f.
 *
 * Kept channels. A channel is kept when D_r > cap_r (contended) or when
 * it is the bottleneck alone of some flow f crossing it (cap_r / w_fr =
 * s_f); every flow crosses at least one kept channel. The reduced problem
 * gives each flow only its hops on kept channels.
 *
 * Claim 1: at every instant, with any subset A of the flows active, the
 * max-min allocation x of the reduced problem is that of the full one.
 * Proof: x_f <= s_f, since a hop with cap / w = s_f is kept. x is feasible
 * in the full problem: a dropped channel r has D_r <= cap_r, so
 * Σ_{f∈A} w x_f <= Σ w s_f <= cap_r. Max-min is characterised by each
 * flow having a bottleneck — a saturated channel on which its rate is the
 * highest (Bertsekas & Gallager §6.5.2; the allocation is unique). In the
 * reduced problem each flow has one among its kept channels; a kept
 * channel carries the same flows with the same rates in both problems,
 * so it is saturated there in the full problem too, with the flow's rate
 * the highest on it. Hence x is the full max-min.
 *
 * Claim 2: the reduced problem splits into connected components (flows
 * linked through kept channels), and each component evolves in time
 * exactly as if alone: max-min of a disjoint union is the union of the
 * max-mins, and an event (an activation, a completion) changes only its
 * own component's rates. So the phase's end is the latest end over
 * components, each timed alone.
 *
 * Claim 3 (the fold): two components with equal signatures — the number
 * of flows and channels; per channel, in increasing channel number, its
 * capacity and tier; per flow, in the order the schedule adds them, its
 * bytes, latency and kept hops as (position of the channel in that
 * increasing order, weight) — are the same problem under a renaming of
 * channels that keeps their order and keeps the order of flows, so the
 * engine (deterministic, its choices made by flow slot and channel order)
 * times them bit-identically. Each signature is therefore run once and
 * its result stands for every component that has it. Signatures are
 * hashed, and a hit is confirmed word by word (no reliance on the hash).
 *
 * Floating point: all the representatives run together in one engine
 * run (their channels are disjoint); the event-by-event run of the whole
 * phase differs only in rounding, since there the engine's components are
 * joined by the dropped channels (another order of the same sums) and a
 * dropped channel's demand is checked against cap × (1 + 1e-12), as in
 * cert.c: the times agree within a relative 1e-12 per rate, which
 * sim_test checks against --no-reuse (1e-9 over a whole run).
 *
 * Statistics: the engine carries the representatives' kept hops; every
 * other byte (dropped hops, the folded components' flows) is added to the
 * caller's per-channel array at bytes × w × weight, the engine's formula.
 * The flows and events counted are those the engine ran.
 *
 * Orbits (the rotation's quotient). When the caller sets orbit = k >= 2,
 * the flows come in runs of k, f_0 .. f_{k-1}: the images of one send
 * under a channel rotation rho of order k (driver.c, each routed as
 * itself). Loads and kept channels are computed over every flow as
 * above. Then the map sigma, hop j of f_i's kept hops -> hop j of
 * f_{i+1 mod k}'s, is built over every run and checked to be a function
 * and injective, capacity-, tier- and weight-preserving, with equal bytes
 * and latency along each run (orbit_check; on any failure the phase is
 * folded as above, whole). It is then a permutation of the kept
 * channels (a finite set onto itself) that carries the reduced problem
 * onto itself, flow f_i onto f_{i+1}: max-min's allocation, unique, is
 * invariant, so the flows of a run have equal rates at every instant
 * (activated together, at equal latency, with equal bytes: progressive
 * filling raises them together and the channels of one orbit of sigma
 * saturate together). The run is then one flow x at their common rate,
 * and a channel c, of orbit O (a cycle of sigma, |O| dividing k),
 * carries sum_i sum_{hops h of f_0 with sigma^i(h) = c} w_h x = (k / |O|)
 * sum_{h of f_0 in O} w_h x — the same on every channel of O. So the
 * quotient problem — f_0 of each run, its kept hops moved to their
 * orbit's representative (the least channel) with weight (k / |O|) w,
 * hops that land on one representative summed — has the same rates and
 * completion times in real arithmetic, and only it is cut into
 * components, signed and run (a k-th of the flows). Floating point: the
 * loads, kept channels and bytes carried are those of the whole phase,
 * bit for bit; the engine sums k / |O| w once where the whole problem
 * adds w over k flows, so the times agree within the 1e-12 above
 * (sim_test: rotate_check and fold_check on dgx-h100:4, :16, oversub).
 * Statistics: every flow's bytes on every hop go to res_extra, less the
 * quotient flows' bytes the engine carried on the representatives.
 *
 * The run's map (global). The quotient above still routes, copies, loads
 * and marks every image. When the driver has checked, once per send of
 * the run, that the routes of its images i and i+1 (mod k) agree in
 * length, latency, weights, capacities and tiers, and that hop j of one
 * -> hop j of the next extends a single map on channels that stays a
 * function and injective (sim_fold_sigma, kept across phases), a phase
 * made of such sends is added as its representatives only (global).
 * The map is then a permutation of the channels those routes touch (each
 * send's images close a cycle), carrying every hop of the phase's flows,
 * dropped or kept, onto a hop of the next image: the loads are
 * invariant, so a channel's load is its orbit's — sum over the
 * representatives' hops in O of (k / |O|) w s, kept with its orbit —
 * and the quotient follows as above, with no image touched. Floating
 * point: the loads are summed in another order than the whole phase's,
 * so a channel within rounding of cap (1 + 1e-12) may be kept in one and
 * not the other — dropping such a channel is the tolerance the fold
 * already states. Bytes: (k / |O|) w bytes per hop go to the orbit's
 * account (orb), spread over its channels at the end of the run
 * (sim_fold_spread), less the engine's share on the representative.
 *
 * Across phases (recall). Claim 3 does not depend on the phase: a
 * component's signature lists everything the engine reads of it (the
 * flows' bytes, latencies and kept hops, the channels' capacities and
 * tiers, both orders), and the engine starts every phase from a rewound
 * state, so a component whose signature an earlier phase of the run ran
 * has that run's completion times. Each signature run is kept (its
 * words, its latest flow's end and life by tier; up to XSIG_MAX words in
 * all, then no more are kept) and a later representative with the same
 * signature — hashed, confirmed word by word — is recalled instead of
 * run. A pipelined tree's fill and drain phases differ in which chunks
 * are in flight, so no two are one class, but most of their parts (one
 * server's chain, one rail's edge) recur from phase to phase: at 16,384
 * GPUs 1,082 of 1,266 representatives are recalled and the engine runs
 * 381,750 flows instead of 752,732. The phase's end is the latest end
 * over its representatives (recalled or run), the later of equal ends in
 * component order: the same time; the engine carries no bytes for a
 * recalled part, so its flows' bytes all go to res_extra, as a folded
 * component's do. Floating point: a part run among other co-runners
 * than before can round differently (the engine batches simultaneous
 * events of disjoint components), so within the 1e-12 above; sim_test
 * (test_fold_recall) compares recall on and off and --no-reuse.
 *
 * Cost: O(hops) per flow plus a sort of each component's channels; the
 * per-channel arrays are kept across phases and cleared through the list
 * of channels touched.
 */
#include "fold.h"

#include <math.h>
#include <string.h>

#define FOLD_TOL 1e-12

void sim_fold_reset(sim_fold_t *f)
{
    f->hops.n = f->khops.n = f->fl.n = 0;
}

static int ensure(sim_fold_t *f, const sim_net_t *net)
{
    if (f->load) return 0;
    f->nres = sim_net_res_count(net);
    size_t n = f->nres ? f->nres : 1;
    f->load = util_calloc(n, sizeof(double));
    f->parent = util_malloc(n * sizeof(uint32_t));
    f->cid = util_malloc(n * sizeof(uint32_t));
    f->rank = util_malloc(n * sizeof(uint32_t));
    f->cap = util_malloc(n * sizeof(double));
    f->tier = util_malloc(n);
    if (!f->load || !f->parent || !f->cid || !f->rank || !f->cap || !f->tier) return -1;
    for (uint32_t r = 0; r < f->nres; r++) { /* capacities are fixed for the run */
        f->parent[r] = r;
        f->cid[r] = f->rank[r] = UINT32_MAX;
        f->cap[r] = sim_net_res_cap(net, r);
        f->tier[r] = (uint8_t)sim_net_res_tier(net, r);
    }
    return 0;
}

int sim_fold_add(sim_fold_t *f, const sim_net_t *net, const sim_route_t *r, double bytes)
{
    if (ensure(f, net) || UTIL_VEC_RESERVE(&f->hops, f->hops.n + r->n)) return -1;
    sim_fflow_t x = {(uint32_t)f->hops.n, r->n, 0, 0, bytes, r->latency, INFINITY};
    for (uint32_t h = 0; h < r->n; h++) {
        f->hops.v[f->hops.n++] = r->hops[h];
        double s = f->cap[r->hops[h].res] / r->hops[h].w;
        if (s < x.solo) x.solo = s;
    }
    return UTIL_VEC_PUSH(&f->fl, x);
}

static bool trivial(const sim_fflow_t *x)
{
    return x->n == 0 || !(x->bytes > 0);
}

static uint32_t find(uint32_t *parent, uint32_t r)
{
    while (parent[r] != r) {
        parent[r] = parent[parent[r]];
        r = parent[r];
    }
    return r;
}

/* A channel kept (marked in rank[] by sim_fold_run, for every flow that
 * crosses it). */
static bool kept(const sim_fold_t *f, const sim_hop_t *h)
{
    return f->rank[h->res] != UINT32_MAX;
}

static int cmp_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return a < b ? -1 : a > b;
}

/* ==== Orbits (the rotation's quotient; header comment) ==== */

/* n channels of UINT32_MAX each, allocated on first use (most runs never
 * rotate); 0 or -1 OOM. */
static int ensure_u32(uint32_t **a, uint32_t n)
{
    if (*a) return 0;
    if (!(*a = util_malloc((n ? n : 1) * sizeof(uint32_t)))) return -1;
    memset(*a, 0xff, (n ? n : 1) * sizeof(uint32_t));
    return 0;
}

/* Channel x -> y added to a map on channels (nxt, its inverse prv): true
 * when both hops weigh the same, the channels match in capacity and tier,
 * and the map stays a function and injective. */
static bool map_extend(const sim_fold_t *f, uint32_t *nxt, uint32_t *prv, uint32_t x, double wx,
                       uint32_t y, double wy)
{
    if (wx != wy || f->cap[x] != f->cap[y] || f->tier[x] != f->tier[y]) return false;
    if (nxt[x] == UINT32_MAX && prv[y] == UINT32_MAX) {
        nxt[x] = y;
        prv[y] = x;
        return true;
    }
    return nxt[x] == y && prv[y] == x;
}

/* sigma over every run of k flows: hop j of f_i's kept hops -> hop j of
 * f_{i+1 mod k}'s, in nxt (and its inverse in prv); true when it is a
 * function, injective, and preserves what the engine reads. */
static bool orbit_check(sim_fold_t *f, size_t nf)
{
    uint32_t k = f->orbit;
    if (k < 2 || nf % k) return false;
    if (ensure_u32(&f->nxt, f->nres) || ensure_u32(&f->prv, f->nres) ||
        ensure_u32(&f->canon, f->nres) || ensure_u32(&f->osz, f->nres))
        return false; /* out of memory: fold the phase whole */
    for (size_t b = 0; b < nf; b += k)
        for (uint32_t i = 0; i < k; i++) {
            const sim_fflow_t *x = &f->fl.v[b + i], *y = &f->fl.v[b + (i + 1) % k];
            if (x->bytes != y->bytes || x->latency != y->latency || x->kn != y->kn) return false;
            for (uint32_t h = 0; h < x->kn; h++) {
                const sim_hop_t *hx = &f->khops.v[x->koff + h], *hy = &f->khops.v[y->koff + h];
                if (!map_extend(f, f->nxt, f->prv, hx->res, hx->w, hy->res, hy->w)) return false;
            }
        }
    return true;
}

/* A kept channel's orbit (its cycle under sigma, at most k long): the
 * least channel of it in canon[], its length in osz[]. */
static void orbit_of(sim_fold_t *f, uint32_t c)
{
    if (f->canon[c] != UINT32_MAX) return;
    uint32_t least = c, m = 1;
    for (uint32_t r = f->nxt[c]; r != c && r != UINT32_MAX && m <= f->orbit; r = f->nxt[r], m++)
        if (r < least) least = r;
    for (uint32_t r = c, i = 0; i < m && r != UINT32_MAX; r = f->nxt[r], i++) {
        f->canon[r] = least;
        f->osz[r] = m;
    }
}

/* Adds weight w on channel c to the hops v[q0..*n) of one flow: merged
 * into c's hop if the flow has one, else appended (the caller reserved
 * room for every hop). */
static void hop_merge(sim_hop_t *v, size_t *n, uint32_t q0, uint32_t c, double w)
{
    size_t j = q0;
    while (j < *n && v[j].res != c)
        j++;
    if (j < *n)
        v[j].w += w;
    else
        v[(*n)++] = (sim_hop_t){.res = c, .w = w};
}

/* The quotient (header comment): the first flow of each run keeps its
 * kept hops moved to their orbit's least channel at (k / |O|) w, merged
 * per channel; the other flows keep none; kept channels that represent
 * no orbit are unmarked. Swaps the result into khops. */
static int quotient_build(sim_fold_t *f, size_t nf)
{
    uint32_t k = f->orbit;
    if (UTIL_VEC_RESERVE(&f->qhops, f->khops.n)) return -1;
    f->qhops.n = 0;
    for (size_t i = 0; i < nf; i++) {
        sim_fflow_t *x = &f->fl.v[i];
        uint32_t q0 = (uint32_t)f->qhops.n;
        for (uint32_t h = 0; h < x->kn && i % k == 0; h++) {
            const sim_hop_t *hp = &f->khops.v[x->koff + h];
            orbit_of(f, hp->res);
            uint32_t c = f->canon[hp->res];
            double w = hp->w * (double)(k / f->osz[hp->res]);
            hop_merge(f->qhops.v, &f->qhops.n, q0, c, w);
        }
        x->koff = q0;
        x->kn = (uint32_t)f->qhops.n - q0;
    }
    for (size_t t = 0; t < f->touched.n; t++) {
        uint32_t r = f->touched.v[t];
        if (f->rank[r] == UINT32_MAX) continue;
        orbit_of(f, r);
        if (f->canon[r] != r) f->rank[r] = UINT32_MAX;
    }
    sim_hop_t *v = f->khops.v;
    size_t cap = f->khops.cap;
    f->khops.v = f->qhops.v;
    f->khops.cap = f->qhops.cap;
    f->khops.n = f->qhops.n;
    f->qhops.v = v;
    f->qhops.cap = cap;
    f->qhops.n = 0;
    return 0;
}

/* ==== The run's map (header comment, "The run's map") ==== */

bool sim_fold_sigma(sim_fold_t *f, const sim_net_t *net, const sim_hop_t *a, uint32_t n, double lat,
                    const sim_route_t *b)
{
    if (ensure(f, net) || b->n != n || b->latency != lat) return false;
    if (ensure_u32(&f->gnxt, f->nres) || ensure_u32(&f->gprv, f->nres) ||
        ensure_u32(&f->gcanon, f->nres) || ensure_u32(&f->gosz, f->nres))
        return false; /* out of memory: the map unused */
    if (!f->orb && !(f->orb = util_calloc(f->nres ? f->nres : 1, sizeof(double)))) return false;
    for (uint32_t h = 0; h < n; h++)
        if (!map_extend(f, f->gnxt, f->gprv, a[h].res, a[h].w, b->hops[h].res, b->hops[h].w))
            return false;
    return true;
}

/* A channel's orbit under the run's map: its least channel and size,
 * cached (a cycle of checked images is never changed). */
static uint32_t gorbit_of(sim_fold_t *f, uint32_t c, uint32_t *m_p)
{
    if (f->gcanon[c] == UINT32_MAX) {
        uint32_t least = c, m = 1;
        for (uint32_t r = f->gnxt[c]; r != c && r != UINT32_MAX && m <= f->orbit;
             r = f->gnxt[r], m++)
            if (r < least) least = r;
        for (uint32_t r = c, i = 0; i < m && r != UINT32_MAX; r = f->gnxt[r], i++) {
            f->gcanon[r] = least;
            f->gosz[r] = m;
        }
    }
    *m_p = f->gosz[c];
    return f->gcanon[c];
}

/* A global phase's loads, kept channels and quotient hops: each flow
 * stands for its run of k images, so a channel's load is its orbit's,
 * (k / |O|) w s per hop of the representative in O, summed on the
 * orbit's least channel; a channel is kept with its orbit. */
static int global_reduce(sim_fold_t *f, size_t nf, sim_fold_out_t *out)
{
    uint32_t k = f->orbit, m;
    if (UTIL_VEC_RESERVE(&f->horb, f->hops.n) || UTIL_VEC_RESERVE(&f->hosz, f->hops.n)) return -1;
    for (size_t i = 0; i < nf; i++) {
        const sim_fflow_t *x = &f->fl.v[i];
        double alone = x->latency + (trivial(x) ? 0 : x->bytes / x->solo);
        if (alone > out->alone) out->alone = alone;
        if (trivial(x)) continue;
        for (uint32_t h = 0; h < x->n; h++) {
            const sim_hop_t *hp = &f->hops.v[x->off + h];
            uint32_t c = gorbit_of(f, hp->res, &m);
            f->horb.v[x->off + h] = c;
            f->hosz.v[x->off + h] = m;
            if (f->load[c] == 0 && UTIL_VEC_PUSH(&f->touched, c)) return -1;
            f->load[c] += (double)(k / m) * hp->w * x->solo;
        }
    }
    for (size_t i = 0; i < nf; i++) {
        const sim_fflow_t *x = &f->fl.v[i];
        for (uint32_t h = 0; h < x->n && !trivial(x); h++) {
            const sim_hop_t *hp = &f->hops.v[x->off + h];
            uint32_t c = f->horb.v[x->off + h];
            double cap = f->cap[c];
            bool over = f->load[c] > cap * (1 + FOLD_TOL);
            if (over) out->contended = true;
            if (over || cap / hp->w == x->solo) f->rank[c] = 0;
        }
    }
    if (UTIL_VEC_RESERVE(&f->khops, f->hops.n)) return -1;
    f->khops.n = 0;
    for (size_t i = 0; i < nf; i++) {
        sim_fflow_t *x = &f->fl.v[i];
        uint32_t q0 = (uint32_t)f->khops.n;
        for (uint32_t h = 0; h < x->n && !trivial(x); h++) {
            const sim_hop_t *hp = &f->hops.v[x->off + h];
            uint32_t c = f->horb.v[x->off + h];
            if (f->rank[c] == UINT32_MAX) continue;
            double w = hp->w * (double)(k / f->hosz.v[x->off + h]);
            hop_merge(f->khops.v, &f->khops.n, q0, c, w);
        }
        x->koff = q0;
        x->kn = (uint32_t)f->khops.n - q0;
    }
    out->quotient = true;
    out->flows = nf * k;
    return 0;
}

void sim_fold_spread(sim_fold_t *f, double *res_extra)
{
    for (uint32_t r = 0; r < f->nres && f->orb && f->gcanon && res_extra; r++)
        if (f->gcanon[r] != UINT32_MAX) res_extra[r] += f->orb[f->gcanon[r]];
}

/* tag: the flow's place in cflows; its component keeps its latest flow
 * (the later of equal ends, as the engine reports them) */
static void on_done(void *ctx, uint64_t tag, double t)
{
    sim_fold_t *f = ctx;
    uint32_t c = f->fcomp.v[f->cflows.v[tag]];
    if (t >= f->cend.v[c]) {
        f->cend.v[c] = t;
        memcpy(&f->cbd.v[(size_t)c * (SIM_MAX_TIERS + 1)], sim_net_done_breakdown(f->net),
               (SIM_MAX_TIERS + 1) * sizeof(double));
    }
}

/* ==== Across phases (header comment) ==== */

enum { XRES = SIM_MAX_TIERS + 2 }; /* end, then the life by tier */
#define XSIG_MAX ((size_t)1 << 23) /* words of signatures kept (64 MiB) */

/* The entry whose signature is f->tmp (hash h), or UINT32_MAX. */
static uint32_t recall_find(const sim_fold_t *f, uint64_t h)
{
    size_t cap = f->xkey.n, s = cap ? util_hash_u64(h) & (cap - 1) : 0;
    for (; cap && f->xkey.v[s]; s = (s + 1) & (cap - 1)) {
        uint32_t e = f->xent.v[s];
        if (f->xkey.v[s] == h && f->xlen.v[e] == f->tmp.n &&
            memcmp(&f->xsig.v[f->xoff.v[e]], f->tmp.v, f->tmp.n * sizeof(double)) == 0)
            break;
    }
    return cap && f->xkey.v[s] ? f->xent.v[s] : UINT32_MAX;
}

/* Keep component c's signature (in f->sig) and result for later phases;
 * a full table keeps nothing more (the result is the same either way). */
static int recall_keep(sim_fold_t *f, uint32_t c, uint64_t h)
{
    size_t len = f->siglen.v[c], e = f->xoff.n;
    if (f->xsig.n + len > XSIG_MAX) return 0;
    if ((e + 1) * 2 > f->xkey.n) { /* grow the table, rehash */
        size_t cap = f->xkey.n ? f->xkey.n * 2 : 256;
        uint64_t *nk = util_calloc(cap, sizeof(*nk));
        uint32_t *ne = util_malloc(cap * sizeof(*ne));
        if (!nk || !ne) {
            util_free(nk);
            util_free(ne);
            return -1;
        }
        for (size_t s = 0; s < f->xkey.n; s++) {
            if (!f->xkey.v[s]) continue;
            size_t j = util_hash_u64(f->xkey.v[s]) & (cap - 1);
            while (nk[j])
                j = (j + 1) & (cap - 1);
            nk[j] = f->xkey.v[s];
            ne[j] = f->xent.v[s];
        }
        UTIL_VEC_FREE(&f->xkey);
        UTIL_VEC_FREE(&f->xent);
        f->xkey.v = nk;
        f->xkey.n = f->xkey.cap = cap;
        f->xent.v = ne;
        f->xent.n = f->xent.cap = cap;
    }
    if (UTIL_VEC_RESERVE(&f->xsig, f->xsig.n + len) || UTIL_VEC_PUSH(&f->xoff, f->xsig.n) ||
        UTIL_VEC_PUSH(&f->xlen, len) || UTIL_VEC_RESERVE(&f->xres, (e + 1) * XRES))
        return -1;
    memcpy(&f->xsig.v[f->xsig.n], &f->sig.v[f->sigoff.v[c]], len * sizeof(double));
    f->xsig.n += len;
    double *x = &f->xres.v[e * XRES];
    x[0] = f->cend.v[c];
    memcpy(x + 1, &f->cbd.v[(size_t)c * (SIM_MAX_TIERS + 1)], (SIM_MAX_TIERS + 1) * sizeof(double));
    f->xres.n = (e + 1) * XRES;
    size_t s = util_hash_u64(h) & (f->xkey.n - 1);
    while (f->xkey.v[s])
        s = (s + 1) & (f->xkey.n - 1);
    f->xkey.v[s] = h;
    f->xent.v[s] = (uint32_t)e;
    return 0;
}

/* One word into a running hash (multiply-xorshift; the final value goes
 * through util_hash_u64). A hit is confirmed word by word anyway. */
static uint64_t mix(uint64_t h, double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof(b));
    h = (h ^ b) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* Component c's signature into f->tmp; returns its hash. */
static uint64_t signature(sim_fold_t *f, const sim_net_t *net, uint32_t c)
{
    uint32_t f0 = f->foff.v[c], f1 = f->foff.v[c + 1], r0 = f->roff.v[c], r1 = f->roff.v[c + 1];
    f->tmp.n = 0;
    double *t = f->tmp.v;
    size_t n = 0;
    t[n++] = f1 - f0;
    t[n++] = r1 - r0;
    for (uint32_t k = r0; k < r1; k++) {
        t[n++] = f->cap[f->cres.v[k]];
        t[n++] = f->tier[f->cres.v[k]];
    }
    for (uint32_t k = f0; k < f1; k++) {
        const sim_fflow_t *x = &f->fl.v[f->cflows.v[k]];
        t[n++] = x->bytes;
        t[n++] = x->latency;
        t[n++] = x->kn;
        for (uint32_t h = 0; h < x->kn; h++) {
            const sim_hop_t *hp = &f->khops.v[x->koff + h];
            t[n++] = f->rank[hp->res];
            t[n++] = hp->w;
        }
    }
    f->tmp.n = n;
    uint64_t h = 0x9e3779b97f4a7c15ull, g = 0; /* two chains, run side by side */
    size_t k = 0;
    for (; k + 1 < n; k += 2) {
        h = mix(h, t[k]);
        g = mix(g, t[k + 1]);
    }
    if (k < n) h = mix(h, t[k]);
    return util_hash_u64(h ^ (g * 0xff51afd7ed558ccdull)) | 1; /* 0 marks an empty slot */
}

int sim_fold_run(sim_fold_t *f, sim_net_t *net, double weight, double *res_extra,
                 sim_fold_out_t *out)
{
    memset(out, 0, sizeof(*out));
    size_t nf = f->fl.n;
    out->flows = nf;
    if (nf && ensure(f, net)) return -1;
    int rc = -1;
    if (f->global && f->orbit > 1) {
        if (global_reduce(f, nf, out) || UTIL_VEC_RESERVE(&f->fcomp, nf)) goto done;
        goto components;
    }
    /* demand per channel at each flow's rate alone */
    for (size_t i = 0; i < nf; i++) {
        const sim_fflow_t *x = &f->fl.v[i];
        double alone = x->latency + (trivial(x) ? 0 : x->bytes / x->solo);
        if (alone > out->alone) out->alone = alone;
        if (trivial(x)) continue;
        for (uint32_t h = 0; h < x->n; h++) {
            const sim_hop_t *hp = &f->hops.v[x->off + h];
            if (f->load[hp->res] == 0 && UTIL_VEC_PUSH(&f->touched, hp->res)) goto done;
            f->load[hp->res] += hp->w * x->solo;
        }
    }
    /* kept channels: contended, or some flow's bottleneck alone */
    for (size_t i = 0; i < nf; i++) {
        const sim_fflow_t *x = &f->fl.v[i];
        for (uint32_t h = 0; h < x->n && !trivial(x); h++) {
            const sim_hop_t *hp = &f->hops.v[x->off + h];
            double cap = f->cap[hp->res];
            bool over = f->load[hp->res] > cap * (1 + FOLD_TOL);
            if (over) out->contended = true;
            if (over || cap / hp->w == x->solo) f->rank[hp->res] = 0;
        }
    }
    /* kept hops, and the components they link */
    if (UTIL_VEC_RESERVE(&f->khops, f->hops.n) || UTIL_VEC_RESERVE(&f->fcomp, nf)) goto done;
    f->khops.n = 0;
    for (size_t i = 0; i < nf; i++) {
        sim_fflow_t *x = &f->fl.v[i];
        x->koff = (uint32_t)f->khops.n;
        x->kn = 0;
        if (trivial(x)) continue;
        for (uint32_t h = 0; h < x->n; h++) {
            const sim_hop_t *hp = &f->hops.v[x->off + h];
            if (kept(f, hp)) f->khops.v[f->khops.n++] = *hp;
        }
        x->kn = (uint32_t)f->khops.n - x->koff;
    }
    out->quotient = orbit_check(f, nf);
    if (out->quotient && quotient_build(f, nf)) goto done;
components:
    for (size_t i = 0; i < nf; i++) { /* the components (the root is a set's least channel) */
        const sim_fflow_t *x = &f->fl.v[i];
        for (uint32_t h = 1; h < x->kn; h++) {
            uint32_t a = find(f->parent, f->khops.v[x->koff].res);
            uint32_t b = find(f->parent, f->khops.v[x->koff + h].res);
            if (a != b) f->parent[a > b ? a : b] = a < b ? a : b;
        }
    }
    uint32_t nc = 0;
    for (size_t i = 0; i < nf; i++) {
        const sim_fflow_t *x = &f->fl.v[i];
        f->fcomp.v[i] = UINT32_MAX;
        if (x->kn == 0) continue;
        uint32_t root = find(f->parent, f->khops.v[x->koff].res);
        if (f->cid[root] == UINT32_MAX) f->cid[root] = nc++;
        f->fcomp.v[i] = f->cid[root];
    }
    out->comps = nc;
    /* flows and channels of each component (CSR, flows in their order) */
    if (UTIL_VEC_RESERVE(&f->foff, (size_t)nc + 1) || UTIL_VEC_RESERVE(&f->roff, (size_t)nc + 1) ||
        UTIL_VEC_RESERVE(&f->cflows, nf) || UTIL_VEC_RESERVE(&f->cres, f->touched.n) ||
        UTIL_VEC_RESERVE(&f->rep, nc) || UTIL_VEC_RESERVE(&f->sigoff, nc) ||
        UTIL_VEC_RESERVE(&f->siglen, nc))
        goto done;
    memset(f->foff.v, 0, ((size_t)nc + 1) * sizeof(uint32_t));
    memset(f->roff.v, 0, ((size_t)nc + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < nf; i++)
        if (f->fcomp.v[i] != UINT32_MAX) f->foff.v[f->fcomp.v[i] + 1]++;
    for (size_t k = 0; k < f->touched.n; k++) {
        uint32_t r = f->touched.v[k];
        if (f->rank[r] != UINT32_MAX) f->roff.v[f->cid[find(f->parent, r)] + 1]++;
    }
    for (uint32_t c = 0; c < nc; c++) {
        f->foff.v[c + 1] += f->foff.v[c];
        f->roff.v[c + 1] += f->roff.v[c];
    }
    for (size_t i = 0; i < nf; i++) /* foff[c] runs ahead, then moves back */
        if (f->fcomp.v[i] != UINT32_MAX) f->cflows.v[f->foff.v[f->fcomp.v[i]]++] = (uint32_t)i;
    for (size_t k = 0; k < f->touched.n; k++) {
        uint32_t r = f->touched.v[k];
        if (f->rank[r] != UINT32_MAX) f->cres.v[f->roff.v[f->cid[find(f->parent, r)]]++] = r;
    }
    for (uint32_t c = nc; c > 0; c--) {
        f->foff.v[c] = f->foff.v[c - 1];
        f->roff.v[c] = f->roff.v[c - 1];
    }
    f->foff.v[0] = f->roff.v[0] = 0;
    size_t maxsig = 0;
    for (uint32_t c = 0; c < nc; c++) {
        uint32_t r0 = f->roff.v[c], r1 = f->roff.v[c + 1];
        if (r1 - r0 > 1) qsort(&f->cres.v[r0], r1 - r0, sizeof(uint32_t), cmp_u32);
        for (uint32_t k = r0; k < r1; k++)
            f->rank[f->cres.v[k]] = k - r0;
        size_t len = 2 + 2 * (size_t)(r1 - r0);
        for (uint32_t k = f->foff.v[c]; k < f->foff.v[c + 1]; k++)
            len += 3 + 2 * (size_t)f->fl.v[f->cflows.v[k]].kn;
        if (len > maxsig) maxsig = len;
    }
    if (UTIL_VEC_RESERVE(&f->tmp, maxsig)) goto done;
    /* one representative per signature */
    size_t cap = 16;
    while (cap < (size_t)nc * 2)
        cap *= 2;
    if (UTIL_VEC_RESERVE(&f->sigkey, cap) || UTIL_VEC_RESERVE(&f->sigrep, cap) ||
        UTIL_VEC_RESERVE(&f->chash, nc) || UTIL_VEC_RESERVE(&f->crec, nc) ||
        UTIL_VEC_RESERVE(&f->cend, nc) ||
        UTIL_VEC_RESERVE(&f->cbd, (size_t)nc * (SIM_MAX_TIERS + 1)))
        goto done;
    memset(f->sigkey.v, 0, cap * sizeof(uint64_t));
    memset(f->cend.v, 0, nc * sizeof(double));
    memset(f->cbd.v, 0, (size_t)nc * (SIM_MAX_TIERS + 1) * sizeof(double));
    f->sig.n = 0;
    for (uint32_t c = 0; c < nc; c++) {
        uint64_t h = signature(f, net, c);
        size_t s = util_hash_u64(h) & (cap - 1);
        f->rep.v[c] = c;
        f->chash.v[c] = h;
        f->crec.v[c] = UINT32_MAX;
        for (; f->sigkey.v[s]; s = (s + 1) & (cap - 1)) {
            uint32_t o = f->sigrep.v[s];
            if (f->sigkey.v[s] == h && f->siglen.v[o] == f->tmp.n &&
                memcmp(&f->sig.v[f->sigoff.v[o]], f->tmp.v, f->tmp.n * sizeof(double)) == 0) {
                f->rep.v[c] = o;
                break;
            }
        }
        if (f->rep.v[c] != c) continue;
        if (!f->no_recall) f->crec.v[c] = recall_find(f, h);
        f->sigkey.v[s] = h;
        f->sigrep.v[s] = c;
        f->sigoff.v[c] = f->sig.n;
        f->siglen.v[c] = f->tmp.n;
        if (UTIL_VEC_RESERVE(&f->sig, f->sig.n + f->tmp.n)) goto done;
        memcpy(&f->sig.v[f->sig.n], f->tmp.v, f->tmp.n * sizeof(double));
        f->sig.n += f->tmp.n;
    }
    /* the representatives not timed before, in one engine run */
    double best = 0, best_bd[SIM_MAX_TIERS + 1] = {0};
    for (size_t i = 0; i < nf; i++) { /* no bytes or no hops: done on arrival */
        const sim_fflow_t *x = &f->fl.v[i];
        if (trivial(x) && x->latency > best) {
            best = x->latency;
            memset(best_bd, 0, sizeof(best_bd));
            best_bd[SIM_MAX_TIERS] = x->latency;
        }
    }
    for (uint32_t c = 0; c < nc; c++) {
        if (f->rep.v[c] != c) continue;
        out->reps++;
        if (f->crec.v[c] != UINT32_MAX) {
            out->recalled++;
            out->recalled_flows += f->foff.v[c + 1] - f->foff.v[c];
            continue;
        }
        for (uint32_t k = f->foff.v[c]; k < f->foff.v[c + 1]; k++) {
            const sim_fflow_t *x = &f->fl.v[f->cflows.v[k]];
            const sim_hop_t *hp = &f->khops.v[x->koff];
            unsigned tier = SIM_MAX_TIERS;
            for (uint32_t h = 0; h < x->kn; h++) {
                unsigned t = f->tier[hp[h].res];
                if (t < tier) tier = t;
            }
            if (sim_flow_add_valid(net, 0, x->latency, x->bytes, hp, x->kn, tier, k)) goto done;
            out->timed++;
        }
    }
    f->net = net;
    if (sim_net_run(net, on_done, f)) goto done;
    /* the phase's latest flow: over the representatives in component
     * order, the later of equal ends; those run now kept for later phases */
    for (uint32_t c = 0; c < nc; c++) {
        if (f->rep.v[c] != c) continue;
        double end = f->cend.v[c];
        const double *bd = &f->cbd.v[(size_t)c * (SIM_MAX_TIERS + 1)];
        if (f->crec.v[c] != UINT32_MAX) {
            const double *x = &f->xres.v[(size_t)f->crec.v[c] * XRES];
            end = x[0];
            bd = x + 1;
        } else if (!f->no_recall && recall_keep(f, c, f->chash.v[c])) {
            goto done;
        }
        if (end >= best) {
            best = end;
            memcpy(best_bd, bd, sizeof(best_bd));
        }
    }
    out->dur = best;
    memcpy(out->crit, best_bd, sizeof(out->crit));
    /* the bytes the engine did not carry */
    for (size_t i = 0; i < nf && res_extra; i++) {
        const sim_fflow_t *x = &f->fl.v[i];
        if (trivial(x)) continue;
        uint32_t fc = f->fcomp.v[i]; /* rep: its hops carried by the engine */
        bool rep = fc != UINT32_MAX && f->rep.v[fc] == fc && f->crec.v[fc] == UINT32_MAX;
        for (uint32_t h = 0; h < x->n && f->global; h++) { /* per channel of its orbit */
            const sim_hop_t *hp = &f->hops.v[x->off + h];
            uint32_t m, c;
            if (f->orbit > 1) { /* global_reduce found it */
                m = f->hosz.v[x->off + h];
                c = f->horb.v[x->off + h];
            } else {
                c = gorbit_of(f, hp->res, &m);
            }
            f->orb[c] += x->bytes * (hp->w * (double)(f->orbit / m)) * weight;
        }
        for (uint32_t h = 0; h < x->n && !f->global; h++) {
            const sim_hop_t *hp = &f->hops.v[x->off + h];
            if (out->quotient || !rep || !kept(f, hp))
                res_extra[hp->res] += x->bytes * hp->w * weight;
        }
        for (uint32_t h = 0; h < x->kn && out->quotient && rep; h++) { /* the engine's share */
            const sim_hop_t *hp = &f->khops.v[x->koff + h];
            res_extra[hp->res] -= x->bytes * hp->w * weight;
        }
    }
    rc = 0;
done:
    for (size_t k = 0; k < f->touched.n; k++) {
        uint32_t r = f->touched.v[k];
        f->load[r] = 0;
        f->parent[r] = r;
        f->cid[r] = f->rank[r] = UINT32_MAX;
        if (f->nxt && f->prv && f->canon) f->nxt[r] = f->prv[r] = f->canon[r] = UINT32_MAX;
    }
    f->touched.n = 0;
    return rc;
}

void sim_fold_free(sim_fold_t *f)
{
    util_free(f->load);
    util_free(f->parent);
    util_free(f->cid);
    util_free(f->rank);
    util_free(f->cap);
    util_free(f->tier);
    util_free(f->nxt);
    util_free(f->prv);
    util_free(f->canon);
    util_free(f->osz);
    util_free(f->gnxt);
    util_free(f->gprv);
    util_free(f->gcanon);
    util_free(f->gosz);
    util_free(f->orb);
    UTIL_VEC_FREE(&f->qhops);
    UTIL_VEC_FREE(&f->hops);
    UTIL_VEC_FREE(&f->khops);
    UTIL_VEC_FREE(&f->fl);
    UTIL_VEC_FREE(&f->touched);
    UTIL_VEC_FREE(&f->horb);
    UTIL_VEC_FREE(&f->hosz);
    UTIL_VEC_FREE(&f->cflows);
    UTIL_VEC_FREE(&f->cres);
    UTIL_VEC_FREE(&f->foff);
    UTIL_VEC_FREE(&f->roff);
    UTIL_VEC_FREE(&f->fcomp);
    UTIL_VEC_FREE(&f->rep);
    UTIL_VEC_FREE(&f->sig);
    UTIL_VEC_FREE(&f->tmp);
    UTIL_VEC_FREE(&f->sigkey);
    UTIL_VEC_FREE(&f->sigrep);
    UTIL_VEC_FREE(&f->sigoff);
    UTIL_VEC_FREE(&f->siglen);
    UTIL_VEC_FREE(&f->chash);
    UTIL_VEC_FREE(&f->crec);
    UTIL_VEC_FREE(&f->cend);
    UTIL_VEC_FREE(&f->cbd);
    UTIL_VEC_FREE(&f->xkey);
    UTIL_VEC_FREE(&f->xent);
    UTIL_VEC_FREE(&f->xsig);
    UTIL_VEC_FREE(&f->xres);
    UTIL_VEC_FREE(&f->xoff);
    UTIL_VEC_FREE(&f->xlen);
    memset(f, 0, sizeof(*f));
}
