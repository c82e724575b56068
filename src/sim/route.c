/*
 * route.c — from a topology to the engine's resources and flow paths.
 *
 * Every directed channel of the topology (2l: a→b, 2l+1: b→a of link l) is
 * one engine resource with the channel's capacity (the link layer's derived
 * figure, NVLink's packet overhead included, the same figure sched's model
 * and the class capacities use); its statistics class is
 * (tier, link kind). A route between two devices is computed once per
 * (src, dst) pair and cached in an open-addressing table:
 *  - SPREAD: the equal-cost paths of topo's router are enumerated (up to
 *    SIM_SPREAD_PATHS of them, evenly sampled by index beyond that) and
 *    the flow is split over them in proportion to each path's bottleneck
 *    bandwidth (an even split when they are equal, as in a fat-tree; 5:4:4:5
 *    over the four NVSwitches of an H100, whose GPU stripes its traffic over
 *    its 18 NVLinks); a channel's weight is the share of the flow crossing
 *    it — the fluid limit of the split;
 *  - ECMP (for routes through network switches; inside a server or a
 *    scale-up domain traffic is striped as with SPREAD): one path chosen by
 *    strata_topo_path_hash(src, dst, seed): every
 *    message of a pair takes the path its connection hashes to, as a
 *    switch hashing a flow's 5-tuple does; with several connections per
 *    pair (NCCL_IB_QPS_PER_CONNECTION) each is hashed with its own seed
 *    and carries an equal share.
 * The route's latency is the mean of its paths' latencies, weighted like
 * the split.
 *
 * Rails. A send from an accelerator to one on another server leaves by the
 * NIC of its own server on the receiver's rail (the NIC with the local
 * index of the receiver's NIC), as NCCL sends: a ring or tree channel
 * enters and leaves every server by one NIC (src/graph/search.cc, ring.c),
 * and point-to-point sends go through the NIC nearest the peer's rail
 * (search.cc ncclTopoGetNetDev, NCCL_P2P_PXN_LEVEL 2, the default). When
 * that NIC is not the sender's own, the route has two legs: the sender to
 * that NIC through the PCIe switch they share (NCCL's PIX path), else over
 * the scale-up fabric to the GPU next to the NIC, which the NIC then reads
 * (PXN, paths.cc: only GPU -> NIC, and only over NVLink), else through the
 * host; then that NIC to the receiver. Each leg is routed as above (the
 * scale-up leg striped, the network leg hashed under ECMP) and the latency
 * is that of the two legs as one path (one message: the endpoints'
 * overhead once). A server with more NICs than accelerators (a GH200
 * node) spreads a rail send over the NICs its GPU reaches best, as NCCL's
 * channels rotate over them (extra_rails). strata_sim_opts_t.cross_rail turns this off: every send
 * leaves by its sender's own NIC, crossing rails in the network.
 */
#include "sim.h"

#include <math.h>
#include <string.h>

/* Paths enumerated per pair for SPREAD; a 3-tier k=64 fat-tree has 1,024
 * between pods, all enumerated. Larger sets are sampled evenly. */
#define SIM_SPREAD_PATHS   1024
#define SIM_PATH_HOPS_INIT 64 /* grown for long paths (rings, tori) */

/* The cache holds at most this many routes per endpoint (plus a floor):
 * enough for every pair a ring, tree or hierarchical schedule uses (a few
 * peers per rank) and for concurrent groups, while an all-to-all, whose
 * P(P-1) pairs are each used once, does not keep O(P^2) routes. When it is
 * full it is emptied and refilled: memory stays linear in the GPU count. */
#define SIM_ROUTES_PER_ENDPOINT 8
#define SIM_ROUTES_MIN          4096
/* ... and at most this many bytes of routes (a spread route between pods
 * of a 3-tier fabric has hundreds of weighted channels). */
#define SIM_ROUTE_BYTES_PER_ENDPOINT 4096
#define SIM_ROUTE_BYTES_MIN          (64u << 20)

static const char *const tier_names[] = {"server", "leaf", "spine", "core"};

/* ==== Classes ==== */

static int class_of(sim_topo_t *st, int32_t tier, const char *kind)
{
    char name[48];
    const char *tn = tier >= 0 && tier < 4 ? tier_names[tier] : "tier?";
    snprintf(name, sizeof(name), "%s/%s", tn, kind ? kind : "custom");
    for (int c = 0; c < st->nclasses; c++)
        if (strcmp(st->classes[c].name, name) == 0) return c;
    if (st->nclasses == SIM_MAX_TIERS) return SIM_MAX_TIERS - 1; /* folded into the last */
    strata_sim_class_t *c = &st->classes[st->nclasses];
    memset(c, 0, sizeof(*c));
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->tier = tier;
    return st->nclasses++;
}

/* Build the engine and classes for topo. */
strata_status_t sim_topo_init(sim_topo_t *st, const strata_topo_t *topo, strata_error_t *err)
{
    memset(st, 0, sizeof(*st));
    st->topo = topo;
    int32_t nl = strata_topo_link_count(topo);
    st->nchan = (uint32_t)nl * 2;
    st->net = sim_net_create(st->nchan);
    st->chan_class = util_calloc(st->nchan ? st->nchan : 1, 1);
    if (!st->net || !st->chan_class)
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    /* Classes are numbered tier by tier, from inside the server outwards
     * (flow.c breaks bottleneck ties towards the lower class). */
    /* GPUs that are PCIe peers write into each other with SM stores, one
     * 128 B line a TLP: their PCIe links carry the collective at that share
     * of the rate (strata_link_sm_store_share; the collective model's
     * store_share); a NIC's link carries its DMA at the full rate. */
    bool peers = strata_topo_pcie_peers(topo);
    for (int32_t tier = 0; tier <= STRATA_TOPO_TIERS_MAX; tier++)
        for (int32_t l = 0; l < nl; l++) {
            strata_topo_link_t lk = strata_topo_link(topo, l);
            int32_t lt = lk.tier < STRATA_TOPO_TIERS_MAX ? lk.tier : STRATA_TOPO_TIERS_MAX;
            if (lt != tier) continue;
            int c = class_of(st, lk.tier, lk.kind);
            bool nic = strata_topo_device(topo, lk.a).kind == STRATA_DEV_NIC ||
                       strata_topo_device(topo, lk.b).kind == STRATA_DEV_NIC;
            double bw = peers && !nic ? lk.bw_dir * lk.store_share : lk.bw_dir;
            for (int d = 0; d < 2; d++) {
                uint32_t ch = (uint32_t)(2 * l + d);
                st->chan_class[ch] = (uint8_t)c;
                sim_net_set_res(st->net, ch, bw, (unsigned)c);
                st->classes[c].capacity += bw;
            }
        }
    return STRATA_OK;
}

void sim_topo_fini(sim_topo_t *st)
{
    sim_net_destroy(st->net);
    util_free(st->chan_class);
    memset(st, 0, sizeof(*st));
}

/* ==== Route cache ==== */

typedef struct sim_set {
    uint32_t off, n;
} sim_set_t;

struct sim_routes {
    const strata_topo_t *topo;
    const sim_net_t *net; /* for alone_bw, min_tier, valid; NULL: not set */
    int32_t ndev;
    int32_t *dev_group;       /* each device's group (server), read per send */
    UTIL_VEC(sim_set_t) sets; /* device sets: ids ndev, ndev+1, ... */
    UTIL_VEC(int32_t) set_devs;
    strata_topo_router_t *router;
    strata_sim_routing_t routing;
    uint64_t seed;
    uint32_t conns; /* ECMP: connections per pair, each hashed separately */
    util_arena_t *arena;
    /* open addressing: keys (src<<32 | dst) + 1 (0 = empty) */
    uint64_t *keys;
    sim_route_t **vals;
    size_t cap, n;
    size_t limit;                  /* routes kept before the cache is emptied */
    size_t held_limit, held_bytes; /* sim_routes_hold: the limits it lifted */
    bool held;
    size_t limit_bytes; /* ... or bytes of routes */
    uint64_t flushes;   /* times it was emptied */
    /* SPREAD scratch: weight per channel and the channels touched; the
     * paths of one pair with their bottleneck bandwidth and latency */
    double *w;
    int32_t *paths, *plen; /* SIM_SPREAD_PATHS paths of maxhops channels */
    int32_t maxhops;
    double *pbw, *plat;
    UTIL_VEC(uint32_t) used;
    /* the even split of strata_topo_path_split: channels and fractions */
    int32_t *schan;
    double *sfrac;
    int32_t scap;
    /* Rails: per (server, NIC local index) the cabled NIC and the first
     * accelerator sending through it (-1: none); NULL when rails are off
     * or the topology has no servers with NICs. */
    int32_t *rail_nic, *rail_gpu;
    int32_t ngroups, maxnic;
    bool rails_now; /* the route being computed follows the rails */
};

/* Is device d a NIC cabled to a network switch? */
static bool cabled_nic(const strata_topo_t *t, int32_t d)
{
    const int32_t *nbr, *chan;
    if (strata_topo_device(t, d).kind != STRATA_DEV_NIC) return false;
    int32_t deg = strata_topo_adjacency(t, d, &nbr, &chan);
    for (int32_t i = 0; i < deg; i++)
        if (strata_topo_device(t, nbr[i]).kind == STRATA_DEV_NET_SWITCH) return true;
    return false;
}

/* The rail tables (struct comment): O(devices). 0, or -1 when out of memory. */
static int rails_init(sim_routes_t *rt)
{
    const strata_topo_t *t = rt->topo;
    for (int32_t d = 0; d < rt->ndev; d++) {
        strata_topo_device_t dv = strata_topo_device(t, d);
        if (!cabled_nic(t, d) || dv.group < 0) continue;
        if (dv.group >= rt->ngroups) rt->ngroups = dv.group + 1;
        if (dv.local >= rt->maxnic) rt->maxnic = dv.local + 1;
    }
    if (rt->ngroups < 2) return 0; /* no network between servers */
    size_t n = (size_t)rt->ngroups * (size_t)rt->maxnic;
    rt->rail_nic = util_malloc(n * sizeof(int32_t));
    rt->rail_gpu = util_malloc(n * sizeof(int32_t));
    if (!rt->rail_nic || !rt->rail_gpu) return -1;
    for (size_t i = 0; i < n; i++)
        rt->rail_nic[i] = rt->rail_gpu[i] = -1;
    for (int32_t d = 0; d < rt->ndev; d++) {
        strata_topo_device_t dv = strata_topo_device(t, d);
        if (dv.group >= 0 && cabled_nic(t, d))
            rt->rail_nic[(size_t)dv.group * (size_t)rt->maxnic + (size_t)dv.local] = d;
    }
    for (int32_t d = 0; d < rt->ndev; d++) {
        strata_topo_device_t dv = strata_topo_device(t, d);
        if (dv.kind != STRATA_DEV_ACCEL || dv.nic < 0 || dv.group < 0 || !cabled_nic(t, dv.nic))
            continue;
        int32_t *g = &rt->rail_gpu[(size_t)dv.group * (size_t)rt->maxnic +
                                   (size_t)strata_topo_device(t, dv.nic).local];
        if (*g < 0 || strata_topo_device(t, *g).local > dv.local) *g = d;
    }
    return 0;
}

sim_routes_t *sim_routes_create(const strata_topo_t *topo, strata_sim_routing_t routing,
                                uint64_t seed, uint32_t conns, bool cross_rail, strata_error_t *err)
{
    sim_routes_t *rt = util_calloc(1, sizeof(*rt));
    if (!rt) goto oom;
    rt->topo = topo;
    rt->ndev = strata_topo_device_count(topo);
    rt->routing = routing;
    rt->seed = seed;
    rt->conns = conns ? conns : 1;
    rt->arena = util_arena_create(1 << 20);
    rt->cap = 1024;
    rt->limit = (size_t)strata_topo_endpoint_count(topo) * SIM_ROUTES_PER_ENDPOINT + SIM_ROUTES_MIN;
    rt->limit_bytes = (size_t)strata_topo_endpoint_count(topo) * SIM_ROUTE_BYTES_PER_ENDPOINT +
                      SIM_ROUTE_BYTES_MIN;
    rt->keys = util_calloc(rt->cap, sizeof(uint64_t));
    rt->vals = util_calloc(rt->cap, sizeof(sim_route_t *));
    rt->w = util_calloc((size_t)strata_topo_link_count(topo) * 2 + 1, sizeof(double));
    rt->maxhops = SIM_PATH_HOPS_INIT;
    rt->paths = util_calloc((size_t)SIM_SPREAD_PATHS * (size_t)rt->maxhops, sizeof(int32_t));
    rt->plen = util_calloc(SIM_SPREAD_PATHS, sizeof(int32_t));
    rt->pbw = util_calloc(SIM_SPREAD_PATHS, sizeof(double));
    rt->plat = util_calloc(SIM_SPREAD_PATHS, sizeof(double));
    rt->dev_group = util_malloc((size_t)(rt->ndev > 0 ? rt->ndev : 1) * sizeof(int32_t));
    for (int32_t d = 0; rt->dev_group && d < rt->ndev; d++)
        rt->dev_group[d] = strata_topo_device(topo, d).group;
    if (!rt->dev_group || !rt->arena || !rt->keys || !rt->vals || !rt->w || !rt->paths ||
        !rt->plen || !rt->pbw || !rt->plat || (!cross_rail && rails_init(rt)))
        goto oom;
    if (strata_topo_router_create(topo, &rt->router, err) != STRATA_OK) {
        sim_routes_destroy(rt);
        return NULL;
    }
    return rt;
oom:
    sim_routes_destroy(rt);
    strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    return NULL;
}

void sim_routes_destroy(sim_routes_t *rt)
{
    if (!rt) return;
    strata_topo_router_destroy(rt->router);
    util_arena_destroy(rt->arena);
    util_free(rt->keys);
    util_free(rt->vals);
    util_free(rt->w);
    util_free(rt->paths);
    util_free(rt->plen);
    util_free(rt->pbw);
    util_free(rt->plat);
    util_free(rt->dev_group);
    util_free(rt->schan);
    util_free(rt->sfrac);
    util_free(rt->rail_nic);
    util_free(rt->rail_gpu);
    UTIL_VEC_FREE(&rt->used);
    UTIL_VEC_FREE(&rt->sets);
    UTIL_VEC_FREE(&rt->set_devs);
    util_free(rt);
}

static int grow(sim_routes_t *rt)
{
    size_t cap = rt->cap * 2;
    uint64_t *keys = util_calloc(cap, sizeof(uint64_t));
    sim_route_t **vals = util_calloc(cap, sizeof(sim_route_t *));
    if (!keys || !vals) {
        util_free(keys);
        util_free(vals);
        return -1;
    }
    for (size_t i = 0; i < rt->cap; i++) {
        if (!rt->keys[i]) continue;
        size_t j = util_hash_u64(rt->keys[i]) & (cap - 1);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = rt->keys[i];
        vals[j] = rt->vals[i];
    }
    util_free(rt->keys);
    util_free(rt->vals);
    rt->keys = keys;
    rt->vals = vals;
    rt->cap = cap;
    return 0;
}

/* Make the path scratch hold paths as long as src → dst's. 0 or -1 (OOM). */
static int grow_paths(sim_routes_t *rt, int32_t src, int32_t dst)
{
    int32_t h = strata_topo_hops(rt->router, src, dst);
    if (h <= rt->maxhops) return 0;
    int32_t *p = util_realloc(rt->paths, (size_t)SIM_SPREAD_PATHS * (size_t)h * sizeof(int32_t));
    if (!p) return -1;
    rt->paths = p;
    rt->maxhops = h;
    return 0;
}

/* Add path chans[0..n) with weight w to the scratch; returns its latency. */
static double accumulate(sim_routes_t *rt, const int32_t *chans, int32_t n, double w)
{
    for (int32_t i = 0; i < n; i++) {
        uint32_t c = (uint32_t)chans[i];
        if (rt->w[c] == 0 && UTIL_VEC_PUSH(&rt->used, c)) return NAN;
        rt->w[c] += w;
    }
    double bw, lat;
    strata_topo_path_figures(rt->topo, chans, n, &bw, &lat);
    return lat;
}

static strata_status_t one_path(sim_routes_t *rt, int32_t src, int32_t dst, uint64_t index,
                                bool hashed, int32_t *chans, int32_t *n_p, strata_error_t *err)
{
    strata_status_t rc =
        hashed ? strata_topo_path_hash(rt->router, src, dst,
                                       index ? util_hash_u64(rt->seed ^ index) : rt->seed, chans,
                                       rt->maxhops, n_p)
               : strata_topo_path(rt->router, src, dst, index, chans, rt->maxhops, n_p);
    if (rc == STRATA_OK) return rc;
    return strata_error_set(err, rc, "no route from device %d to device %d (%s)", (int)src,
                            (int)dst, strata_status_str(rc));
}

/* Does the route src → dst cross a network switch (tier >= 1)? Hashing is
 * what network switches do; inside a server or a scale-up domain (NVLink
 * through NVSwitches, tier 0) a GPU stripes its traffic over all its
 * links, so ECMP routing still spreads there. */
static bool in_network(sim_routes_t *rt, int32_t src, int32_t dst)
{
    int32_t n = 0;
    if (grow_paths(rt, src, dst) ||
        strata_topo_path(rt->router, src, dst, 0, rt->paths, rt->maxhops, &n) != STRATA_OK)
        return true;
    for (int32_t h = 0; h < n; h++)
        if (strata_topo_device(rt->topo, strata_topo_chan_dst(rt->topo, rt->paths[h])).tier >= 1)
            return true;
    return false;
}

/* The even split over every equal-cost path of an up/down route whose
 * paths all have the same figures (strata_topo_path_split: path counts per
 * channel, not the paths one by one; the same weights as listing them,
 * every path's bottleneck being equal, and all of them even beyond
 * SIM_SPREAD_PATHS). Adds it with weight scale; the number of channels,
 * -1 when the route is not of that form, -2 on OOM. */
static int32_t split(sim_routes_t *rt, int32_t src, int32_t dst, double scale, double *lat_p)
{
    double bw, lat;
    int32_t n =
        strata_topo_path_split(rt->router, src, dst, rt->schan, rt->sfrac, rt->scap, &bw, &lat);
    if (n > rt->scap) {
        int32_t cap = n * 2;
        int32_t *c = util_realloc(rt->schan, (size_t)cap * sizeof(int32_t));
        if (c) rt->schan = c;
        double *f = util_realloc(rt->sfrac, (size_t)cap * sizeof(double));
        if (f) rt->sfrac = f;
        if (!c || !f) return -2;
        rt->scap = cap;
        n = strata_topo_path_split(rt->router, src, dst, rt->schan, rt->sfrac, rt->scap, &bw, &lat);
    }
    for (int32_t i = 0; i < n; i++) {
        uint32_t c = (uint32_t)rt->schan[i];
        if (rt->w[c] == 0 && UTIL_VEC_PUSH(&rt->used, c)) return -2;
        rt->w[c] += scale * rt->sfrac[i];
    }
    if (n >= 0) *lat_p += scale * lat;
    return n;
}

/* Add the route src → dst (real devices) to the scratch with weight
 * scale; *lat_p += scale × its latency. One leg: no rails. */
static strata_status_t add_leg(sim_routes_t *rt, int32_t src, int32_t dst, double scale,
                               double *lat_p, strata_error_t *err)
{
    int32_t n = 0;
    if (grow_paths(rt, src, dst)) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    int32_t *chans = rt->paths; /* after any growth */
    if (rt->routing == STRATA_SIM_ECMP && in_network(rt, src, dst)) {
        /* conns connections (queue pairs) per pair, each hashed on its own */
        double w = scale / rt->conns;
        for (uint32_t q = 0; q < rt->conns; q++) {
            strata_status_t rc = one_path(rt, src, dst, q, true, chans, &n, err);
            if (rc != STRATA_OK) return rc;
            *lat_p += w * accumulate(rt, chans, n, w);
        }
        return STRATA_OK;
    }
    int32_t ns = split(rt, src, dst, scale, lat_p);
    if (ns == -2) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    if (ns >= 0) return STRATA_OK;
    double count = strata_topo_path_count(rt->router, src, dst);
    if (!(count >= 1))
        return strata_error_set(err, STRATA_ERR_NOT_FOUND, "no path from device %d to %d", (int)src,
                                (int)dst);
    uint64_t k = count > SIM_SPREAD_PATHS ? SIM_SPREAD_PATHS : (uint64_t)count;
    double total = 0;
    for (uint64_t i = 0; i < k; i++) {
        uint64_t idx = k == count ? i : (uint64_t)floor((double)i * count / (double)k);
        int32_t *pc = rt->paths + i * (uint64_t)rt->maxhops;
        strata_status_t rc = one_path(rt, src, dst, idx, false, pc, &rt->plen[i], err);
        if (rc != STRATA_OK) return rc;
        strata_topo_path_figures(rt->topo, pc, rt->plen[i], &rt->pbw[i], &rt->plat[i]);
        if (rt->plen[i] == 0) rt->pbw[i] = 1; /* src == dst: the empty path */
        total += rt->pbw[i];
    }
    for (uint64_t i = 0; i < k; i++) {
        double share = scale * rt->pbw[i] / total;
        if (isnan(accumulate(rt, rt->paths + i * (uint64_t)rt->maxhops, rt->plen[i], share)))
            return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
        *lat_p += share * rt->plat[i];
    }
    return STRATA_OK;
}

/* Are accelerators a and r joined inside their server by the scale-up
 * fabric (the first routed path crosses only accelerators and scale-up
 * switches)? What PXN needs: NVLink between the sender and the relay. */
static bool scaleup_joined(sim_routes_t *rt, int32_t a, int32_t r)
{
    int32_t n = 0;
    if (grow_paths(rt, a, r) ||
        strata_topo_path(rt->router, a, r, 0, rt->paths, rt->maxhops, &n) != STRATA_OK || n == 0)
        return false;
    for (int32_t h = 0; h < n; h++) {
        strata_dev_kind_t k =
            strata_topo_device(rt->topo, strata_topo_chan_dst(rt->topo, rt->paths[h])).kind;
        if (k != STRATA_DEV_ACCEL && k != STRATA_DEV_SCALEUP_SWITCH) return false;
    }
    return true;
}

/* The device a send src → dst passes on the receiver's rail (file
 * comment): the NIC of src's server with the local index of dst's NIC
 * when src reaches it as near as its own (a shared PCIe switch) or no
 * scale-up relay serves, else the accelerator next to that NIC (PXN).
 * -1: one leg (rails off, same server, src's own NIC is on the rail, or
 * no such NIC). */
static int32_t rail_mid(sim_routes_t *rt, int32_t src, int32_t dst)
{
    if (!rt->rail_nic || !rt->rails_now) return -1;
    const strata_topo_t *t = rt->topo;
    strata_topo_device_t a = strata_topo_device(t, src), b = strata_topo_device(t, dst);
    if (a.kind != STRATA_DEV_ACCEL || b.kind != STRATA_DEV_ACCEL || a.group < 0 || b.group < 0 ||
        a.group == b.group || b.nic < 0 || a.group >= rt->ngroups)
        return -1;
    int32_t L = strata_topo_device(t, b.nic).local;
    if (L < 0 || L >= rt->maxnic) return -1;
    size_t i = (size_t)a.group * (size_t)rt->maxnic + (size_t)L;
    int32_t sn = rt->rail_nic[i], r = rt->rail_gpu[i];
    if (sn < 0 || sn == a.nic) return -1;
    if (a.nic >= 0 &&
        strata_topo_hops(rt->router, src, sn) <= strata_topo_hops(rt->router, src, a.nic))
        return sn;
    if (r >= 0 && r != src && scaleup_joined(rt, src, r)) return r;
    return sn;
}

/* Could the route src → dst take two legs (real devices on two servers)? */
static bool rail_mid_possible(const sim_routes_t *rt, int32_t src, int32_t dst)
{
    if (src >= rt->ndev || dst >= rt->ndev) return false;
    int32_t a = rt->dev_group[src], b = rt->dev_group[dst];
    return a >= 0 && b >= 0 && a != b;
}

/* More NICs than accelerators (a GH200 node: one GPU, four NICs on the
 * Grace): the NICs a rail send from src may leave by: src's own and every
 * cabled NIC of its server that no accelerator owns (rail_gpu -1) and
 * that src reaches in no more hops than its own, each paired with the NIC
 * of the same rail on dst's server. NCCL's channels rotate over them
 * (search.cc ncclTopoSearchRecNet starts channel c at NIC c mod count;
 * ring.c params rails), and the ring's channels between one pair of
 * ranks are equal slices, so the fluid limit of one channel a NIC is the
 * send split evenly over the NICs. Returns how many pairs went into
 * out[] (pairs of NIC ids), 0 when src has no such extra NIC. */
static int32_t extra_rails(sim_routes_t *rt, int32_t src, int32_t dst, int32_t *out, int32_t cap)
{
    if (!rt->rail_nic || !rt->rails_now) return 0;
    const strata_topo_t *t = rt->topo;
    strata_topo_device_t a = strata_topo_device(t, src), b = strata_topo_device(t, dst);
    if (a.kind != STRATA_DEV_ACCEL || b.kind != STRATA_DEV_ACCEL || a.group < 0 || b.group < 0 ||
        a.group == b.group || a.nic < 0 || a.group >= rt->ngroups || b.group >= rt->ngroups)
        return 0;
    int32_t own = strata_topo_hops(rt->router, src, a.nic), n = 0, extra = 0;
    for (int32_t L = 0; L < rt->maxnic && n + 2 <= cap; L++) {
        size_t i = (size_t)a.group * (size_t)rt->maxnic + (size_t)L;
        size_t j = (size_t)b.group * (size_t)rt->maxnic + (size_t)L;
        int32_t sn = rt->rail_nic[i], dn = rt->rail_nic[j];
        if (sn < 0 || dn < 0) continue;
        bool mine = sn == a.nic;
        if (!mine && (rt->rail_gpu[i] >= 0 || strata_topo_hops(rt->router, src, sn) > own))
            continue;
        extra += !mine;
        out[n++] = sn, out[n++] = dn;
    }
    return extra > 0 ? n / 2 : 0;
}

/* The route src → dst: one leg, or two through rail_mid's device, whose
 * latency is that of the two legs' first paths as one path; or split
 * evenly over extra_rails' NICs, three legs each (src to its NIC, NIC to
 * the same rail's NIC, that NIC to dst), with the first such path's
 * latency. */
static strata_status_t add_pair(sim_routes_t *rt, int32_t src, int32_t dst, double scale,
                                double *lat_p, strata_error_t *err)
{
    int32_t via[2 * 64], k = extra_rails(rt, src, dst, via, 2 * 64);
    if (k > 0) {
        double ignored = 0, w = scale / k;
        strata_status_t rc = STRATA_OK;
        for (int32_t q = 0; q < k && rc == STRATA_OK; q++) {
            rc = add_leg(rt, src, via[2 * q], w, &ignored, err);
            if (rc == STRATA_OK) rc = add_leg(rt, via[2 * q], via[2 * q + 1], w, &ignored, err);
            if (rc == STRATA_OK) rc = add_leg(rt, via[2 * q + 1], dst, w, &ignored, err);
        }
        if (rc != STRATA_OK) return rc;
        int32_t n1 = 0, n2 = 0, n3 = 0;
        if (grow_paths(rt, src, via[0]) || grow_paths(rt, via[0], via[1]) ||
            grow_paths(rt, via[1], dst))
            return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
        rc = one_path(rt, src, via[0], 0, false, rt->paths, &n1, err);
        if (rc == STRATA_OK) rc = one_path(rt, via[0], via[1], 0, false, rt->paths + n1, &n2, err);
        if (rc == STRATA_OK)
            rc = one_path(rt, via[1], dst, 0, false, rt->paths + n1 + n2, &n3, err);
        if (rc != STRATA_OK) return rc;
        double bw, lat;
        strata_topo_path_figures(rt->topo, rt->paths, n1 + n2 + n3, &bw, &lat);
        *lat_p += scale * lat;
        return STRATA_OK;
    }
    int32_t mid = rail_mid(rt, src, dst);
    if (mid < 0) return add_leg(rt, src, dst, scale, lat_p, err);
    double ignored = 0;
    strata_status_t rc = add_leg(rt, src, mid, scale, &ignored, err);
    if (rc == STRATA_OK) rc = add_leg(rt, mid, dst, scale, &ignored, err);
    if (rc != STRATA_OK) return rc;
    if (grow_paths(rt, src, mid) || grow_paths(rt, mid, dst))
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    int32_t n1 = 0, n2 = 0; /* the scratch holds SIM_SPREAD_PATHS >= 2 paths of maxhops */
    rc = one_path(rt, src, mid, 0, false, rt->paths, &n1, err);
    if (rc == STRATA_OK) rc = one_path(rt, mid, dst, 0, false, rt->paths + n1, &n2, err);
    if (rc != STRATA_OK) return rc;
    double bw, lat;
    strata_topo_path_figures(rt->topo, rt->paths, n1 + n2, &bw, &lat);
    *lat_p += scale * lat;
    return STRATA_OK;
}

/* The devices behind id: itself, or the members of a device set. */
static const int32_t *members(const sim_routes_t *rt, int32_t id, int32_t *one, uint32_t *n_p)
{
    if (id < rt->ndev) {
        *one = id;
        *n_p = 1;
        return one;
    }
    const sim_set_t *set = &rt->sets.v[id - rt->ndev];
    *n_p = set->n;
    return rt->set_devs.v + set->off;
}

/* Bottleneck bandwidth of the first path between two devices (1 for the
 * empty path, 0 when there is none). */
static double pair_bw(sim_routes_t *rt, int32_t a, int32_t b)
{
    int32_t n = 0;
    double bw, lat;
    if (grow_paths(rt, a, b) ||
        strata_topo_path(rt->router, a, b, 0, rt->paths, rt->maxhops, &n) != STRATA_OK)
        return 0;
    if (n == 0) return 1;
    strata_topo_path_figures(rt->topo, rt->paths, n, &bw, &lat);
    return bw;
}

void sim_routes_set_net(sim_routes_t *rt, const sim_net_t *net)
{
    rt->net = net;
}

/* A route's figures the driver reads per send (sim_route_t), found once
 * here: its rate alone (the engine's sim_flow_alone_rate, the same
 * divisions in the same order), lowest tier, validity. */
static void route_figures(const sim_routes_t *rt, sim_route_t *r)
{
    r->alone_bw = INFINITY;
    r->min_tier = SIM_MAX_TIERS;
    r->valid = rt->net != NULL;
    for (uint32_t h = 0; rt->net && h < r->n; h++) {
        if (r->hops[h].res >= sim_net_res_count(rt->net)) {
            r->valid = false;
            continue;
        }
        double cap = sim_net_res_cap(rt->net, r->hops[h].res);
        double x = cap / r->hops[h].w;
        if (x < r->alone_bw) r->alone_bw = x;
        unsigned tier = sim_net_res_tier(rt->net, r->hops[h].res);
        if (tier < r->min_tier) r->min_tier = (uint8_t)tier;
        if (!(r->hops[h].w > 0) || !(cap > 0)) r->valid = false;
    }
}

/* A route between two ids; a device set shares a message among its members
 * in proportion to the bandwidth to each (a message to an NVLS switch agent
 * goes to all of the server's switches, 5:4:4:5 on an H100). */
static strata_status_t compute(sim_routes_t *rt, int32_t src, int32_t dst, sim_route_t **out,
                               strata_error_t *err)
{
    int32_t s1, d1;
    uint32_t ns, nd;
    const int32_t *sv = members(rt, src, &s1, &ns), *dv = members(rt, dst, &d1, &nd);
    double lat = 0, total = 0;
    rt->used.n = 0;
    for (uint32_t i = 0; i < ns && ns * nd > 1; i++)
        for (uint32_t j = 0; j < nd; j++)
            total += pair_bw(rt, sv[i], dv[j]);
    for (uint32_t i = 0; i < ns; i++)
        for (uint32_t j = 0; j < nd; j++) {
            double scale = ns * nd == 1 ? 1 : pair_bw(rt, sv[i], dv[j]) / total;
            strata_status_t rc = add_pair(rt, sv[i], dv[j], scale, &lat, err);
            if (rc != STRATA_OK) {
                for (size_t u = 0; u < rt->used.n; u++)
                    rt->w[rt->used.v[u]] = 0;
                return rc;
            }
        }
    if (isnan(lat)) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    sim_route_t *r = util_arena_alloc(rt->arena, sizeof(*r) + rt->used.n * sizeof(sim_hop_t));
    if (!r) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    r->n = (uint32_t)rt->used.n;
    r->latency = lat;
    r->hops = (sim_hop_t *)(r + 1);
    for (size_t i = 0; i < rt->used.n; i++) {
        uint32_t c = rt->used.v[i];
        r->hops[i] = (sim_hop_t){c, rt->w[c]};
        rt->w[c] = 0;
    }
    route_figures(rt, r);
    *out = r;
    return STRATA_OK;
}

/* Register a set of devices (copied) and return its id (>= device count). */
int32_t sim_routes_add_set(sim_routes_t *rt, const int32_t *devs, uint32_t n)
{
    sim_set_t set = {(uint32_t)rt->set_devs.n, n};
    for (uint32_t i = 0; i < n; i++)
        if (UTIL_VEC_PUSH(&rt->set_devs, devs[i])) return -1;
    if (UTIL_VEC_PUSH(&rt->sets, set)) return -1;
    return rt->ndev + (int32_t)(rt->sets.n - 1);
}

static void flush(sim_routes_t *rt)
{
    util_arena_reset(rt->arena); /* its chunks refilled: no fresh pages */
    memset(rt->keys, 0, rt->cap * sizeof(uint64_t));
    rt->n = 0;
    rt->flushes++;
}

/* The cached route from device src to dst (computing it on first use).
 * The route stays valid until the next call. */
strata_status_t sim_routes_get(sim_routes_t *rt, int32_t src, int32_t dst, bool rails,
                               const sim_route_t **route_p, strata_error_t *err)
{
    rails = rails && rt->rail_nic && rail_mid_possible(rt, src, dst);
    /* ids are below 2^31: the top bit keeps a pair's rail route apart */
    uint64_t key =
        ((((uint64_t)(uint32_t)src << 32) | (uint32_t)dst) | (rails ? 1ull << 63 : 0)) + 1;
    size_t i = util_hash_u64(key) & (rt->cap - 1);
    while (rt->keys[i]) {
        if (rt->keys[i] == key) {
            *route_p = rt->vals[i];
            return STRATA_OK;
        }
        i = (i + 1) & (rt->cap - 1);
    }
    if (rt->n >= rt->limit || util_arena_used(rt->arena) >= rt->limit_bytes) {
        flush(rt);
        i = util_hash_u64(key) & (rt->cap - 1);
    }
    sim_route_t *r = NULL;
    rt->rails_now = rails;
    strata_status_t rc = compute(rt, src, dst, &r, err);
    rt->rails_now = false;
    if (rc != STRATA_OK) return rc;
    if ((rt->n + 1) * 2 > rt->cap) {
        if (grow(rt)) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
        i = util_hash_u64(key) & (rt->cap - 1);
        while (rt->keys[i])
            i = (i + 1) & (rt->cap - 1);
    }
    rt->keys[i] = key;
    rt->vals[i] = r;
    rt->n++;
    *route_p = r;
    return STRATA_OK;
}

strata_sim_routing_t sim_routes_routing(const sim_routes_t *rt)
{
    return rt->routing;
}

/* Whether the one-leg SPREAD route src -> dst (real devices) is the split
 * over every one of its equal-cost paths: strata_topo_path_split applies,
 * or there are at most SIM_SPREAD_PATHS of them (add_leg lists them all).
 * Only a larger set is sampled by path index, which depends on device
 * numbering rather than on the graph alone. */
int sim_routes_exhaustive(sim_routes_t *rt, int32_t src, int32_t dst)
{
    double bw, lat;
    int32_t n =
        strata_topo_path_split(rt->router, src, dst, rt->schan, rt->sfrac, rt->scap, &bw, &lat);
    if (n >= 0) return 1;
    return strata_topo_path_count(rt->router, src, dst) <= SIM_SPREAD_PATHS;
}

size_t sim_routes_count(const sim_routes_t *rt)
{
    return rt->n;
}

uint64_t sim_routes_flushes(const sim_routes_t *rt)
{
    return rt->flushes;
}

void sim_routes_hold(sim_routes_t *rt, size_t routes)
{
    if (routes && !rt->held) {
        rt->held_limit = rt->limit;
        rt->held_bytes = rt->limit_bytes;
        rt->held = true;
        if (routes + SIM_ROUTES_MIN < rt->limit) rt->limit = routes + SIM_ROUTES_MIN;
        rt->limit_bytes = SIZE_MAX;
    } else if (!routes && rt->held) {
        rt->limit = rt->held_limit;
        rt->limit_bytes = rt->held_bytes;
        rt->held = false;
        flush(rt);
    }
}

void sim_routes_empty(sim_routes_t *rt)
{
    if (rt->n) flush(rt);
}

void sim_routes_set_limit(sim_routes_t *rt, size_t limit)
{
    rt->limit = limit ? limit : 1;
}
