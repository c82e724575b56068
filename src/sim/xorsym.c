/*
 * xorsym.c — phase classes of the pairwise all-to-all, proven from the
 * cluster's symmetry.
 *
 * The schedule (pairwise.c): with P = 2^m ranks, in phase p rank r sends
 * its block to r XOR i and receives one from r XOR i, i = p + 1 (MPICH's
 * exclusive-or order); phase 0 also copies the own block locally (instant,
 * it cannot decide the phase's time). Ranks are placed server-major, g =
 * 2^j per server: r = s·g + l, so r XOR i = (s XOR a)·g + (l XOR b) with
 * a = i >> j (the server part), b = i mod g.
 *
 * The symmetry. Let φ be a permutation of the servers and Φ a bijection of
 * the devices that maps device (server s, kind, local index) to (φ(s),
 * kind, local) and the switches outside servers to switches, such that
 * (verified here, device by device and link by link, never assumed):
 * every device keeps its kind and tier, every accelerator's NIC and
 * staging memory are the images of its own, and every link a–b has a link
 * Φ(a)–Φ(b) with the same kind, multiplicity, bandwidth, latency and
 * store share. Φ is then an automorphism of the topology. The router's
 * set of equal-cost paths between two devices, the even split over them,
 * each channel's capacity and each path's latency are defined by the
 * graph and those attributes only, so the route Φ(x) → Φ(y) is the image
 * of the route x → y — provided the split is over all of the paths, not a
 * sample of them chosen by path index (route.c samples beyond 1,024 paths
 * when the closure is not uniform); that is checked below.
 *
 * If φ(s) = A·s for an invertible GF(2)-linear A on the S = 2^n servers,
 * the agent map π(s·g + l) = (A s)·g + l satisfies π(r XOR i) = π(r) XOR
 * i' with i' = (A a)·g + b: phase i's sends map one to one onto phase i''s,
 * agent by agent, with the same bytes and dependencies, on routes that are
 * images of each other. Max-min fair rates are equivariant under a
 * relabelling of resources and flows, so every event happens at the same
 * time in both phases and their durations are equal.
 *
 * Generators: T(h,c): s -> s XOR (bit h of s)·2^c, for c < h, maps 2^h to
 * 2^h + 2^c and is linear; the product of T(h,c) over the other set bits c
 * of a maps 2^h to a; exchanging bits h and c (linear too) maps 2^h to
 * 2^c. So phase (a, b) is timed as phase (2^h0, b) — h the highest set bit
 * of a, h0 the lowest bit whose exchange with h is proven (servers of one
 * leaf, of one pod ... are interchangeable: h0 is the lowest bit of h's
 * level of the fabric) — once every T(h,c) it needs is a proven
 * automorphism (n(n-1) checks at most, each O(devices + links)). The
 * translations X(c): s -> s XOR 2^c (proven the same way) carry the flow
 * of server 0 with local index l onto the flow of any server with that
 * index in the same phase (XOR commutes), so checking the g flows of
 * server 0 of a representative for an exhaustive split covers every flow
 * of every phase timed as it.
 *
 * The bound: exact in real arithmetic. In floating point the engine sums
 * weights and remaining capacities over flows and hops in creation order,
 * which differs between the two phases, so their times may differ in the
 * last bits (sim_test compares with the event-by-event run: within 1e-12
 * relative). Statistics: a representative is counted once per phase of its
 * class (driver.c weights it), so the per-class bytes and bottleneck
 * shares are those of the full run (Φ keeps link kinds and tiers), while
 * per-channel bytes land on the representative's channels.
 */
#include "xorsym.h"

#include <stdlib.h>
#include <string.h>

typedef struct lkey {
    int32_t dev; /* the neighbour (or its image) */
    int32_t mult;
    double bw, lat, share;
    const char *kind;
} lkey_t;

typedef struct sym {
    const strata_topo_t *topo;
    int32_t ndev, nsrv, per;
    int32_t *srv_dev; /* nsrv × per: server s's devices in (kind, local) order */
    int32_t *pos;     /* index of a device in its server's list, -1 outside servers */
    int32_t *kind, *tier, *nic, *stage;
    /* devices outside servers, by tier then id, with their neighbours of
     * lower tier or inside servers (sorted): their "down" sets */
    int32_t *outer, nouter;
    int32_t *down_off, *down;
    /* twins: outer devices with the same down set, in id order */
    int32_t *twin_head; /* per outer index: index of its bucket's first member */
    int32_t *twin_rank; /* per outer index: rank among its twins */
    int32_t *twin_next; /* per outer index: next twin, -1 */
    int32_t *twin_n;    /* per outer index (bucket head): twins in the bucket */
    uint64_t *hkeys;    /* hash table of buckets: hash | 1, 0 = empty */
    int32_t *hval;      /* bucket head (outer index) */
    size_t hcap;
    /* each device's adjacency row as link keys, sorted */
    int32_t *row_off;
    lkey_t *row;
    /* scratch */
    int32_t *img, *seen, *tmp;
    lkey_t *krow;
    int32_t maxdeg, maxdown, epoch;
} sym_t;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_lkey(const void *pa, const void *pb)
{
    const lkey_t *a = pa, *b = pb;
    if (a->dev != b->dev) return a->dev < b->dev ? -1 : 1;
    if (a->mult != b->mult) return a->mult < b->mult ? -1 : 1;
    if (a->bw != b->bw) return a->bw < b->bw ? -1 : 1;
    if (a->lat != b->lat) return a->lat < b->lat ? -1 : 1;
    if (a->share != b->share) return a->share < b->share ? -1 : 1;
    return strcmp(a->kind ? a->kind : "", b->kind ? b->kind : "");
}

static uint64_t hash_list(const int32_t *v, int32_t n)
{
    uint64_t h = 0x51ed270b27a1e3c5ull ^ (uint64_t)n;
    for (int32_t i = 0; i < n; i++)
        h = util_hash_u64(h ^ (uint64_t)(uint32_t)v[i]);
    return h | 1;
}

static void sym_free(sym_t *y)
{
    void *p[] = {y->srv_dev, y->pos,      y->kind, y->tier,      y->nic,       y->stage,
                 y->outer,   y->down_off, y->down, y->twin_head, y->twin_rank, y->twin_next,
                 y->twin_n,  y->hkeys,    y->hval, y->row_off,   y->row,       y->img,
                 y->seen,    y->tmp,      y->krow};
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
        util_free(p[i]);
    memset(y, 0, sizeof(*y));
}

static bool is_down(const sym_t *y, int32_t x, int32_t nb)
{
    return y->pos[nb] >= 0 || y->tier[nb] < y->tier[x];
}

static int32_t tier_slot(int32_t t)
{
    return t < 0 ? 0 : t > STRATA_TOPO_TIERS_MAX ? STRATA_TOPO_TIERS_MAX : t;
}

/* The devices outside servers by (tier, id): bucketed by tier, ids ascend
 * within each. */
static int sort_outer(sym_t *y)
{
    int32_t cnt[STRATA_TOPO_TIERS_MAX + 1] = {0}, n = 0;
    for (int32_t d = 0; d < y->ndev; d++)
        if (y->pos[d] < 0) cnt[tier_slot(y->tier[d])]++;
    int32_t start[STRATA_TOPO_TIERS_MAX + 1];
    for (int t = 0; t <= STRATA_TOPO_TIERS_MAX; t++) {
        start[t] = n;
        n += cnt[t];
    }
    y->outer = util_malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (!y->outer) return -1;
    for (int32_t d = 0; d < y->ndev; d++)
        if (y->pos[d] < 0) y->outer[start[tier_slot(y->tier[d])]++] = d;
    y->nouter = n;
    return 0;
}

/* 1: ready; 0: the servers are not all alike (no symmetry to use); -1 OOM. */
static int sym_init(sym_t *y, const strata_topo_t *topo)
{
    memset(y, 0, sizeof(*y));
    y->topo = topo;
    y->ndev = strata_topo_device_count(topo);
    y->nsrv = strata_topo_group_count(topo);
    if (y->nsrv < 2 || y->ndev <= 0) return 0;
    size_t nd = (size_t)y->ndev;
    y->pos = util_malloc(nd * sizeof(int32_t));
    y->kind = util_malloc(nd * sizeof(int32_t));
    y->tier = util_malloc(nd * sizeof(int32_t));
    y->nic = util_malloc(nd * sizeof(int32_t));
    y->stage = util_malloc(nd * sizeof(int32_t));
    y->img = util_malloc(nd * sizeof(int32_t));
    y->seen = util_calloc(nd, sizeof(int32_t));
    int32_t *cnt = util_calloc((size_t)y->nsrv, sizeof(int32_t));
    if (!y->pos || !y->kind || !y->tier || !y->nic || !y->stage || !y->img || !y->seen || !cnt)
        goto oom;
    for (int32_t d = 0; d < y->ndev; d++) {
        strata_topo_device_t dv = strata_topo_device(topo, d);
        y->kind[d] = (int32_t)dv.kind;
        y->tier[d] = dv.tier;
        y->nic[d] = dv.nic;
        y->stage[d] = strata_topo_staging_memory(topo, d);
        y->pos[d] = -1;
        if (dv.group >= y->nsrv) goto differ;
        if (dv.group >= 0) cnt[dv.group]++;
    }
    y->per = cnt[0];
    for (int32_t s = 0; s < y->nsrv; s++)
        if (cnt[s] != y->per) goto differ;
    /* each server's devices ordered by (kind, local): a counting pass per
     * server is enough, the kinds are few and locals dense */
    y->srv_dev = util_malloc((size_t)y->nsrv * (size_t)y->per * sizeof(int32_t));
    if (!y->srv_dev) goto oom;
    for (int32_t s = 0; s < y->nsrv; s++)
        cnt[s] = 0;
    for (int32_t d = 0; d < y->ndev; d++) {
        strata_topo_device_t dv = strata_topo_device(topo, d);
        if (dv.group >= 0)
            y->srv_dev[(size_t)dv.group * (size_t)y->per + (size_t)cnt[dv.group]++] = d;
    }
    for (int32_t s = 0; s < y->nsrv; s++) {
        int32_t *v = y->srv_dev + (size_t)s * (size_t)y->per;
        /* sort by (kind, local): small lists, insertion sort */
        for (int32_t i = 1; i < y->per; i++) {
            int32_t d = v[i], k = i;
            strata_topo_device_t a = strata_topo_device(topo, d);
            while (k > 0) {
                strata_topo_device_t b = strata_topo_device(topo, v[k - 1]);
                if (b.kind < a.kind || (b.kind == a.kind && b.local <= a.local)) break;
                v[k] = v[k - 1];
                k--;
            }
            v[k] = d;
        }
        for (int32_t i = 0; i < y->per; i++) {
            strata_topo_device_t a = strata_topo_device(topo, v[i]),
                                 b = strata_topo_device(topo, y->srv_dev[i]);
            if (a.kind != b.kind || a.local != b.local) goto differ;
            y->pos[v[i]] = i;
        }
    }
    util_free(cnt);
    cnt = NULL;
    /* adjacency rows as link keys, sorted by (neighbour, figures) */
    y->row_off = util_malloc((nd + 1) * sizeof(int32_t));
    if (!y->row_off) goto oom;
    size_t tot = 0;
    for (int32_t d = 0; d < y->ndev; d++) {
        const int32_t *nbr, *chan;
        int32_t deg = strata_topo_adjacency(topo, d, &nbr, &chan);
        y->row_off[d] = (int32_t)tot;
        tot += (size_t)(deg > 0 ? deg : 0);
        if (deg > y->maxdeg) y->maxdeg = deg;
    }
    y->row_off[y->ndev] = (int32_t)tot;
    y->row = util_malloc((tot ? tot : 1) * sizeof(lkey_t));
    y->krow = util_malloc((size_t)(y->maxdeg ? y->maxdeg : 1) * sizeof(lkey_t));
    if (!y->row || !y->krow) goto oom;
    for (int32_t d = 0; d < y->ndev; d++) {
        const int32_t *nbr, *chan;
        int32_t deg = strata_topo_adjacency(topo, d, &nbr, &chan);
        lkey_t *r = y->row + y->row_off[d];
        for (int32_t i = 0; i < deg; i++) {
            strata_topo_link_t lk = strata_topo_link(topo, strata_topo_chan_link(chan[i]));
            r[i] = (lkey_t){nbr[i], lk.mult, lk.bw_dir, lk.latency, lk.store_share, lk.kind};
        }
        qsort(r, (size_t)(deg > 0 ? deg : 0), sizeof(lkey_t), cmp_lkey);
    }
    /* outer devices, their down sets and twins */
    if (sort_outer(y)) goto oom;
    size_t no = (size_t)(y->nouter ? y->nouter : 1);
    y->down_off = util_malloc((no + 1) * sizeof(int32_t));
    y->twin_head = util_malloc(no * sizeof(int32_t));
    y->twin_rank = util_malloc(no * sizeof(int32_t));
    y->twin_next = util_malloc(no * sizeof(int32_t));
    y->twin_n = util_calloc(no, sizeof(int32_t));
    if (!y->down_off || !y->twin_head || !y->twin_rank || !y->twin_next || !y->twin_n) goto oom;
    tot = 0;
    for (int32_t o = 0; o < y->nouter; o++) {
        int32_t x = y->outer[o];
        y->down_off[o] = (int32_t)tot;
        int32_t nd_x = 0;
        for (int32_t k = y->row_off[x]; k < y->row_off[x + 1]; k++)
            if (is_down(y, x, y->row[k].dev)) nd_x++;
        tot += (size_t)nd_x;
        if (nd_x > y->maxdown) y->maxdown = nd_x;
    }
    y->down_off[y->nouter] = (int32_t)tot;
    y->down = util_malloc((tot ? tot : 1) * sizeof(int32_t));
    y->tmp = util_malloc((size_t)(y->maxdown ? y->maxdown : 1) * sizeof(int32_t));
    y->hcap = 16;
    while (y->hcap < no * 2)
        y->hcap *= 2;
    y->hkeys = util_calloc(y->hcap, sizeof(uint64_t));
    y->hval = util_malloc(y->hcap * sizeof(int32_t));
    if (!y->down || !y->tmp || !y->hkeys || !y->hval) goto oom;
    for (int32_t o = 0; o < y->nouter; o++) {
        int32_t x = y->outer[o], *dv = y->down + y->down_off[o], n = 0;
        for (int32_t k = y->row_off[x]; k < y->row_off[x + 1]; k++)
            if (is_down(y, x, y->row[k].dev)) dv[n++] = y->row[k].dev;
        qsort(dv, (size_t)n, sizeof(int32_t), cmp_i32);
        uint64_t h = hash_list(dv, n);
        size_t i = util_hash_u64(h) & (y->hcap - 1);
        int32_t head = -1;
        while (y->hkeys[i]) {
            int32_t b = y->hval[i];
            int32_t nb = y->down_off[b + 1] - y->down_off[b];
            if (y->hkeys[i] == h && nb == n && y->tier[y->outer[b]] == y->tier[x] &&
                memcmp(y->down + y->down_off[b], dv, (size_t)n * sizeof(int32_t)) == 0) {
                head = b;
                break;
            }
            i = (i + 1) & (y->hcap - 1);
        }
        y->twin_next[o] = -1;
        if (head < 0) {
            y->hkeys[i] = h;
            y->hval[i] = o;
            head = o;
        } else {
            int32_t t = head;
            while (y->twin_next[t] >= 0)
                t = y->twin_next[t];
            y->twin_next[t] = o;
        }
        y->twin_head[o] = head;
        y->twin_rank[o] = y->twin_n[head]++;
    }
    return 1;
differ:
    util_free(cnt);
    sym_free(y);
    return 0;
oom:
    util_free(cnt);
    sym_free(y);
    return -1;
}

/* Extend the server permutation phi (nsrv entries) to the devices and check
 * that the result is an automorphism (file comment). 1 proven, 0 not. */
static int sym_prove(sym_t *y, const int32_t *phi)
{
    for (int32_t d = 0; d < y->ndev; d++)
        if (y->pos[d] >= 0) {
            strata_topo_device_t dv = strata_topo_device(y->topo, d);
            y->img[d] = y->srv_dev[(size_t)phi[dv.group] * (size_t)y->per + (size_t)y->pos[d]];
        }
    for (int32_t o = 0; o < y->nouter; o++) { /* by tier: the down sets are mapped */
        int32_t x = y->outer[o], n = y->down_off[o + 1] - y->down_off[o];
        const int32_t *dv = y->down + y->down_off[o];
        for (int32_t k = 0; k < n; k++)
            y->tmp[k] = y->img[dv[k]];
        qsort(y->tmp, (size_t)n, sizeof(int32_t), cmp_i32);
        uint64_t h = hash_list(y->tmp, n);
        size_t i = util_hash_u64(h) & (y->hcap - 1);
        int32_t head = -1;
        while (y->hkeys[i]) {
            int32_t b = y->hval[i];
            if (y->hkeys[i] == h && y->down_off[b + 1] - y->down_off[b] == n &&
                y->tier[y->outer[b]] == y->tier[x] &&
                memcmp(y->down + y->down_off[b], y->tmp, (size_t)n * sizeof(int32_t)) == 0) {
                head = b;
                break;
            }
            i = (i + 1) & (y->hcap - 1);
        }
        if (head < 0 || y->twin_n[head] != y->twin_n[y->twin_head[o]]) return 0;
        int32_t t = head;
        for (int32_t r = 0; r < y->twin_rank[o]; r++)
            t = y->twin_next[t];
        y->img[x] = y->outer[t];
    }
    /* a bijection that keeps kinds, tiers, NICs and staging memories */
    int32_t epoch = ++y->epoch;
    for (int32_t d = 0; d < y->ndev; d++) {
        int32_t e = y->img[d];
        if (y->seen[e] == epoch) return 0;
        y->seen[e] = epoch;
        if (y->kind[e] != y->kind[d] || y->tier[e] != y->tier[d]) return 0;
        if ((y->nic[d] < 0 ? -1 : y->img[y->nic[d]]) != y->nic[e]) return 0;
        if ((y->stage[d] < 0 ? -1 : y->img[y->stage[d]]) != y->stage[e]) return 0;
    }
    /* every link onto a link with the same figures */
    for (int32_t d = 0; d < y->ndev; d++) {
        int32_t e = y->img[d], n = y->row_off[d + 1] - y->row_off[d];
        if (y->row_off[e + 1] - y->row_off[e] != n) return 0;
        const lkey_t *r = y->row + y->row_off[d];
        bool moved = false;
        for (int32_t k = 0; k < n; k++) {
            y->krow[k] = r[k];
            y->krow[k].dev = y->img[r[k].dev];
            moved |= y->krow[k].dev != r[k].dev;
        }
        if (!moved && e == d) continue;
        qsort(y->krow, (size_t)n, sizeof(lkey_t), cmp_lkey);
        const lkey_t *q = y->row + y->row_off[e];
        for (int32_t k = 0; k < n; k++)
            if (cmp_lkey(&y->krow[k], &q[k]) != 0) return 0;
    }
    return 1;
}

static bool pof2(uint32_t x)
{
    return x && !(x & (x - 1));
}

static uint32_t log2u(uint32_t x)
{
    uint32_t k = 0;
    while ((1u << k) < x)
        k++;
    return k;
}

/* g = 2^j when the job's P ranks are placed server-major, g on each of
 * servers 0 .. P/g - 1 (rank s·g + l on server s, local index l), else 0. */
static uint32_t server_major(const sim_job_t *job, const strata_topo_t *topo, uint32_t P)
{
    int32_t ndev = strata_topo_device_count(topo);
    uint32_t g = 0;
    for (uint32_t r = 0; r < P; r++) {
        if (job->dev[r] < 0 || job->dev[r] >= ndev) return 0;
        strata_topo_device_t dv = strata_topo_device(topo, job->dev[r]);
        if (dv.kind != STRATA_DEV_ACCEL || dv.group < 0) return 0;
        if (dv.group == 0) g++;
    }
    if (!pof2(g) || g >= P) return 0;
    uint32_t L = log2u(g);
    for (uint32_t r = 0; r < P; r++) {
        strata_topo_device_t dv = strata_topo_device(topo, job->dev[r]);
        if ((uint32_t)dv.group != r >> L || (uint32_t)dv.local != (r & (g - 1))) return 0;
    }
    return g;
}

enum { MAP_XLATE, MAP_SHEAR, MAP_SWAP };

/* Prove a server permutation on the job's S servers (others fixed):
 * MAP_XLATE s -> s XOR 2^c; MAP_SHEAR s -> s XOR (bit h of s)·2^c;
 * MAP_SWAP s with bits h and c exchanged. */
static int prove_map(sym_t *y, int32_t *phi, uint32_t S, int kind, uint32_t h, uint32_t c)
{
    for (int32_t s = 0; s < y->nsrv; s++) {
        uint32_t u = (uint32_t)s, bh = (u >> h) & 1u, bc = (u >> c) & 1u;
        if (u < S && kind == MAP_XLATE) u ^= 1u << c;
        if (u < S && kind == MAP_SHEAR) u ^= bh << c;
        if (u < S && kind == MAP_SWAP && bh != bc) u ^= (1u << h) | (1u << c);
        phi[s] = (int32_t)u;
    }
    return sym_prove(y, phi);
}

strata_status_t sim_xor_classes(const sim_job_t *job, const strata_topo_t *topo,
                                sim_routes_t *routes, uint32_t np, uint32_t *cls, bool *used,
                                strata_error_t *err)
{
    *used = false;
    const strata_sched_params_t *p = strata_sched_params(job->s);
    uint32_t P = p->nranks;
    if (p->coll != STRATA_COLL_ALLTOALL || p->algo != STRATA_ALGO_PAIRWISE || !pof2(P) || P < 4 ||
        job->nagents != P || np > P - 1 || strata_sched_channels(job->s) > 1 ||
        sim_routes_routing(routes) != STRATA_SIM_SPREAD)
        return STRATA_OK;
    uint32_t g = server_major(job, topo, P);
    if (!g) return STRATA_OK;
    uint32_t L = log2u(g), S = P / g, n = log2u(S);
    sym_t y;
    int ok = sym_init(&y, topo);
    if (ok < 0) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    if (ok == 0 || (uint32_t)y.nsrv < S) {
        if (ok) sym_free(&y);
        return STRATA_OK;
    }
    int32_t *phi = util_malloc((size_t)y.nsrv * sizeof(int32_t));
    int8_t *tok = util_malloc((size_t)n * n); /* T(h,c): -1 unknown, 0 no, 1 proven */
    int32_t *low = util_malloc((size_t)n * sizeof(int32_t)); /* lowest bit swappable with h */
    int8_t *rep_ok = util_malloc(np); /* representative's splits: -1 unknown */
    if (!phi || !tok || !low || !rep_ok) goto oom;
    memset(tok, -1, (size_t)n * n);
    memset(rep_ok, -1, np);
    for (uint32_t c = 0; c < n && ok; c++) /* the translations X(c) */
        ok = prove_map(&y, phi, S, MAP_XLATE, 0, c);
    for (uint32_t h = 0; h < n && ok; h++) { /* swapping bits c and h maps 2^h to 2^c */
        low[h] = (int32_t)h;
        for (uint32_t c = 0; c < h && low[h] == (int32_t)h; c++)
            if (prove_map(&y, phi, S, MAP_SWAP, h, c)) low[h] = (int32_t)c;
    }
    if (ok) {
        for (uint32_t q = 0; q < np; q++) {
            uint32_t i = q + 1, a = i >> L, b = i & (g - 1);
            cls[q] = q;
            if (q == 0 || a == 0) continue;
            uint32_t h = 31 - (uint32_t)__builtin_clz(a), h0 = (uint32_t)low[h];
            uint32_t rep = ((1u << h0) << L | b) - 1;
            bool good = true;
            for (uint32_t c = 0; c < h && good; c++) {
                if (!((a >> c) & 1)) continue;
                int8_t *t = &tok[h * n + c];
                if (*t < 0) *t = (int8_t)prove_map(&y, phi, S, MAP_SHEAR, h, c);
                good = *t == 1;
            }
            if (!good) continue;
            if (rep_ok[rep] < 0) { /* every flow of rep split over all its paths */
                rep_ok[rep] = 1;
                for (uint32_t l = 0; l < g && rep_ok[rep]; l++)
                    if (!sim_routes_exhaustive(routes, job->dev[l],
                                               job->dev[((1u << h0) << L) | (l ^ b)]))
                        rep_ok[rep] = 0;
            }
            if (rep_ok[rep] == 1) cls[q] = rep;
        }
        *used = true;
    }
    util_free(phi);
    util_free(tok);
    util_free(low);
    util_free(rep_ok);
    sym_free(&y);
    return STRATA_OK;
oom:
    util_free(phi);
    util_free(tok);
    util_free(low);
    util_free(rep_ok);
    sym_free(&y);
    return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
}

/* Phases relabelled (sim_xor_relabel). Phase p's distance i_p: every rank
 * r sends to and receives from r XOR i_p only (checked here on every
 * rank's steps, all phases generated once). With i_p = (2^h << j) | b, b
 * < g, and the exchange E of server bits h and h0 a proven automorphism
 * (h0 < h the lowest bit whose exchange with h is proven, as above), the
 * agent map π(s·g + l) = E(s)·g + l carries phase p onto the phase in
 * which agent π(r) does what agent r does in p, with peers mapped by π:
 * π(r XOR i_p) = π(r) XOR i' with i' = (2^h0 << j) | b (E is linear). The
 * relabelled phase (driver.c: gen_steps) has every step of p, bytes and
 * `after` unchanged, on routes that are the images of p's, so it times as
 * p (Max-min is equivariant under the relabelling, file comment) — and all
 * its routes are those of distance i', shared by every phase of h's level:
 * recursive doubling and Rabenseifner route 2 + (levels) distances, not
 * one per bit. Routes: the translations X(c) are proven, so server 0's g
 * routes at distance i' splitting over all their paths cover every route
 * of the relabelled phase (file comment). */
/* Each phase's distance (dist[q]; UINT32_MAX: not one distance for every
 * rank's sends and receives), every rank's steps generated. 0 or -1 (OOM). */
static int phase_distances(const sim_job_t *job, uint32_t P, uint32_t np, uint32_t *dist)
{
    uint32_t cap = 16;
    strata_step_t *buf = util_malloc(cap * sizeof(strata_step_t));
    if (!buf) return -1;
    for (uint32_t q = 0; q < np; q++) {
        uint32_t i = 0;
        for (uint32_t r = 0; r < P && i != UINT32_MAX; r++) {
            uint32_t k = strata_sched_phase_steps(job->s, r, q, buf, cap);
            if (k > cap) {
                strata_step_t *nb = util_realloc(buf, (size_t)k * sizeof(strata_step_t));
                if (!nb) {
                    util_free(buf);
                    return -1;
                }
                buf = nb;
                cap = k;
                strata_sched_phase_steps(job->s, r, q, buf, cap);
            }
            for (uint32_t t = 0; t < k; t++) {
                int op = buf[t].op;
                if (op != STRATA_STEP_SEND && op != STRATA_STEP_RECV &&
                    op != STRATA_STEP_RECV_REDUCE)
                    continue;
                uint32_t d = buf[t].peer < 0 ? UINT32_MAX : (uint32_t)buf[t].peer ^ r;
                if (d == 0 || d >= P || (i && d != i)) {
                    i = UINT32_MAX;
                    break;
                }
                i = d;
            }
        }
        dist[q] = i ? i : UINT32_MAX;
    }
    util_free(buf);
    return 0;
}

/* sim_xor_relabel's proofs on the cluster: 0 or -1 (OOM). */
static int relabel_prove(const sim_job_t *job, const strata_topo_t *topo, sim_routes_t *routes,
                         uint32_t np, const uint32_t *dist, uint32_t g, uint32_t S, uint32_t *swp,
                         bool *used)
{
    uint32_t L = log2u(g), n = log2u(S);
    sym_t y;
    int ok = sym_init(&y, topo);
    if (ok <= 0 || (uint32_t)y.nsrv < S) {
        if (ok > 0) sym_free(&y);
        return ok < 0 ? -1 : 0;
    }
    int32_t *phi = util_malloc((size_t)y.nsrv * sizeof(int32_t));
    int32_t *low = util_malloc((size_t)n * sizeof(int32_t)); /* S >= 2: n >= 1 */
    if (!phi || !low) ok = -1;
    for (uint32_t c = 0; c < n && ok > 0; c++) /* the translations X(c) */
        ok = prove_map(&y, phi, S, MAP_XLATE, 0, c);
    for (uint32_t h = 0; h < n && ok > 0; h++) {
        low[h] = (int32_t)h;
        for (uint32_t c = 0; c < h && low[h] == (int32_t)h; c++)
            if (prove_map(&y, phi, S, MAP_SWAP, h, c)) low[h] = (int32_t)c;
    }
    for (uint32_t q = 0; q < np && ok > 0; q++) {
        uint32_t i = dist[q], a = i == UINT32_MAX ? 0 : i >> L;
        if (!a || !pof2(a) || (i & (g - 1)) || low[log2u(a)] == (int32_t)log2u(a)) continue;
        uint32_t h = log2u(a), h0 = (uint32_t)low[h];
        /* every route of the representative distance over all its paths
         * (server 0's; the translations carry them onto the others') */
        for (uint32_t l = 0; l < g && low[h] < (int32_t)h; l++)
            if (!sim_routes_exhaustive(routes, job->dev[l], job->dev[((1u << h0) << L) | l]))
                low[h] = (int32_t)h;
        if (low[h] == (int32_t)h) continue;
        swp[q] = 1 + ((L + h) << 8 | (L + h0));
        *used = true;
    }
    util_free(phi);
    util_free(low);
    sym_free(&y);
    return ok < 0 ? -1 : 0;
}

/* Does relabelled phase p (exchange swp) time as phase q, generated as it
 * is: every agent's steps alike in what a phase's timing reads (op, peer,
 * after, bytes, source buffer)? 1 yes, 0 no, -1 OOM. */
static int relabel_same(const sim_job_t *job, uint32_t P, uint32_t p, uint32_t swp, uint32_t q)
{
    uint32_t cap = 16;
    strata_step_t *a = util_malloc(cap * sizeof(strata_step_t)),
                  *b = util_malloc(cap * sizeof(strata_step_t));
    int same = a && b ? 1 : -1;
    for (uint32_t r = 0; r < P && same == 1; r++) {
        uint32_t na = strata_sched_phase_steps(job->s, sim_xor_swap(swp, r), p, a, cap);
        uint32_t nb = strata_sched_phase_steps(job->s, r, q, b, cap);
        if (na > cap || nb > cap) {
            cap = na > nb ? na : nb;
            strata_step_t *x = util_realloc(a, (size_t)cap * sizeof(strata_step_t));
            if (x) a = x;
            strata_step_t *y = x ? util_realloc(b, (size_t)cap * sizeof(strata_step_t)) : NULL;
            if (y) b = y;
            if (!x || !y) {
                same = -1;
                break;
            }
            strata_sched_phase_steps(job->s, sim_xor_swap(swp, r), p, a, cap);
            strata_sched_phase_steps(job->s, r, q, b, cap);
        }
        if (na != nb) same = 0;
        for (uint32_t t = 0; t < na && same == 1; t++) {
            int32_t peer = a[t].peer;
            int op = a[t].op;
            if ((op == STRATA_STEP_SEND || op == STRATA_STEP_RECV ||
                 op == STRATA_STEP_RECV_REDUCE) &&
                peer >= 0)
                peer = (int32_t)sim_xor_swap(swp, (uint32_t)peer);
            same = a[t].op == b[t].op && peer == b[t].peer && a[t].after == b[t].after &&
                   a[t].src_buf == b[t].src_buf &&
                   a[t].count * (uint64_t)a[t].nblk == b[t].count * (uint64_t)b[t].nblk;
        }
    }
    util_free(a);
    util_free(b);
    return same;
}

/* Classes merged: a relabelled phase whose every step is its representative
 * phase's (the phase of distance 2^h0 · g, generated as it is) times as
 * it, so the two classes are one. 0 or -1 (OOM). */
static int relabel_merge(const sim_job_t *job, uint32_t P, uint32_t g, uint32_t np,
                         const uint32_t *dist, uint32_t *swp, uint32_t *cls)
{
    for (uint32_t p = 0; p < np; p++) {
        if (!swp[p]) continue;
        uint32_t c = (swp[p] - 1) & 0xffu, i = (dist[p] & (g - 1)) | (1u << c);
        for (uint32_t q = 0; q < np; q++) {
            if (swp[q] || dist[q] != i || cls[q] == cls[p]) continue;
            int same = relabel_same(job, P, p, swp[p], q);
            if (same < 0) return -1;
            if (!same) continue;
            uint32_t old = cls[p];
            for (uint32_t k = 0; k < np; k++)
                if (cls[k] == old) cls[k] = cls[q];
            break;
        }
    }
    return 0;
}

strata_status_t sim_xor_relabel(const sim_job_t *job, const strata_topo_t *topo,
                                sim_routes_t *routes, uint32_t np, uint32_t *swp, uint32_t *cls,
                                uint32_t *rdist, bool *used, strata_error_t *err)
{
    *used = false;
    memset(swp, 0, (size_t)np * sizeof(uint32_t));
    const strata_sched_params_t *p = strata_sched_params(job->s);
    uint32_t P = p->nranks;
    if (!pof2(P) || P < 4 || job->nagents != P || strata_sched_channels(job->s) > 1 ||
        sim_routes_routing(routes) != STRATA_SIM_SPREAD || np == 0)
        return STRATA_OK;
    uint32_t g = server_major(job, topo, P);
    if (!g || P / g < 4) return STRATA_OK; /* a server bit above the lowest: 4 servers */
    uint32_t *dist = util_malloc((size_t)np * sizeof(uint32_t));
    int rc = dist ? phase_distances(job, P, np, dist) : -1;
    bool any = false;
    for (uint32_t q = 0; q < np && rc == 0; q++) {
        uint32_t a = dist[q] == UINT32_MAX ? 0 : dist[q] / g;
        any = any || (a > 1 && pof2(a) && !(dist[q] & (g - 1)));
    }
    if (rc == 0 && any) rc = relabel_prove(job, topo, routes, np, dist, g, P / g, swp, used);
    if (rc == 0 && *used && cls) rc = relabel_merge(job, P, g, np, dist, swp, cls);
    for (uint32_t q = 0; rc == 0 && *used && rdist && q < np; q++)
        rdist[q] = swp[q] ? (dist[q] & (g - 1)) | (1u << ((swp[q] - 1) & 0xffu)) : dist[q];
    util_free(dist);
    if (rc < 0) {
        memset(swp, 0, (size_t)np * sizeof(uint32_t));
        *used = false;
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    }
    return STRATA_OK;
}
