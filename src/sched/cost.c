/*
 * cost.c — the α-β-γ cost of every algorithm on a cluster, from first
 * principles: link catalog → topology → algorithm. No per-case constants.
 *
 * Machine. strata_coll_machine_from_topo() routes representative rank
 * pairs through the topology (strata_topo_path): rank 0 → rank 1 (inside a
 * server) and rank 0 → the first rank of the next server. A pair's
 * bandwidth is that of all its equal-cost paths together — per hop
 * position the distinct links are summed and the smallest sum is the
 * bottleneck (a max-flow bound exact for the layered paths of switched
 * fabrics: 4 NVSwitch chips give 5+5+4+4 NVLinks, a NIC stays one NIC) —
 * and its latency is the sum of the link latencies of one path. Every
 * bandwidth is the link layer's derived figure (strata_link_derive), NVLink's
 * packet overhead included: the model applies no efficiency of its own.
 * The one NVLink figure it uses beyond that is the size of a read request
 * (strata_link_store_eta: a switch pulling a 128-byte line costs 32 bytes
 * the other way, NVLS, cost_innet).
 *
 * Costs. Each algorithm's cost is the sum, over its sequential steps, of a
 * latency α (path latency of the tier the step crosses) and a bandwidth
 * term bytes/β, where β is the bandwidth the step gets on the links it
 * crosses given how many ranks of a server cross the network at once (a
 * server's NICs are shared by its ranks). The reduction term γ is bytes
 * reduced / reduction rate, where a GPU reduction streams two operands in
 * and one result out of HBM (rate = HBM bandwidth / 3; the HBM recorded for
 * the accelerator in the cluster, else the one its scale-up link's
 * generation implies — reduce_rate). GPU collectives
 * reduce inside the same kernel that forwards data, so reduction overlaps
 * transfer: time = α + max(β, γ). Pipelined algorithms (tree, chain,
 * two-level, in-network) pick the chunk count that minimises their time.
 * Workload: O(1) per (algorithm, size) except pairwise (O(1) too, summed by
 * tier), so 30 sizes × every algorithm on 16,384 GPUs take microseconds.
 */
#include "sched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Reduction: 2 operands read + 1 result written per output byte. */
#define REDUCE_HBM_PASSES 3.0
/* Smallest pipeline chunk the model considers, bytes (a few 128 B lines;
 * below it per-chunk overheads that the model does not carry dominate). */
#define MIN_CHUNK_BYTES 4096.0

/* ==== Machine from a topology ==== */

#define PAIR_MAX_PATHS 64
#define PAIR_MAX_HOPS  16

/* Bandwidth of all equal-cost paths a→b together, and one path's latency;
 * leg_p (may be NULL): the latency of its first half of hops, a to the
 * switch in the middle, as one message (the endpoints' overhead in it). */
static strata_status_t pair_leg(strata_topo_router_t *rt, const strata_topo_t *t, int32_t a,
                                int32_t b, double *bw_p, double *lat_p, double *leg_p,
                                strata_error_t *err)
{
    int32_t chans[PAIR_MAX_PATHS][PAIR_MAX_HOPS], n = 0;
    double cnt = strata_topo_path_count(rt, a, b);
    int np = cnt > PAIR_MAX_PATHS ? PAIR_MAX_PATHS : (int)cnt;
    for (int i = 0; i < np; i++) {
        if (strata_topo_path(rt, a, b, (uint64_t)i, chans[i], PAIR_MAX_HOPS, &n))
            return strata_error_set(err, STRATA_ERR_RANGE,
                                    "cost: path %d -> %d longer than %d hops", a, b, PAIR_MAX_HOPS);
    }
    double bw = INFINITY, lat;
    strata_topo_path_figures(t, chans[0], n, &(double){0}, &lat);
    if (leg_p) strata_topo_path_figures(t, chans[0], n > 1 ? n / 2 : n, &(double){0}, leg_p);
    for (int h = 0; h < n; h++) {
        double sum = 0;
        for (int i = 0; i < np; i++) {
            bool seen = false;
            for (int j = 0; j < i && !seen; j++)
                seen = strata_topo_chan_link(chans[j][h]) == strata_topo_chan_link(chans[i][h]);
            if (!seen) sum += strata_topo_chan_bw(t, chans[i][h]);
        }
        if (sum < bw) bw = sum;
    }
    *bw_p = bw, *lat_p = lat;
    return STRATA_OK;
}

static strata_status_t pair_figures(strata_topo_router_t *rt, const strata_topo_t *t, int32_t a,
                                    int32_t b, double *bw_p, double *lat_p, strata_error_t *err)
{
    return pair_leg(rt, t, a, b, bw_p, lat_p, NULL, err);
}

/* One leg rank <-> switch (innet, nvlstree): the machine's figure, else
 * half the rank-to-rank path (hand-built machines). */
static double leg_intra(const strata_coll_machine_t *m)
{
    return m->lat_leg_intra > 0 ? m->lat_leg_intra : m->lat_intra / 2;
}

static double leg_rail(const strata_coll_machine_t *m)
{
    if (m->lat_leg_rail > 0) return m->lat_leg_rail;
    return (m->lat_rail > 0 ? m->lat_rail : m->lat_inter) / 2;
}

/* Kind of the first link leaving device d toward a device of kind `to`
 * (or any kind when to < 0); "" if none. */
static const char *link_kind_to(const strata_topo_t *t, int32_t d, int to)
{
    const int32_t *nbr, *chan;
    int32_t deg = strata_topo_adjacency(t, d, &nbr, &chan);
    for (int32_t i = 0; i < deg; i++)
        if (to < 0 || strata_topo_device(t, nbr[i]).kind == (strata_dev_kind_t)to)
            return strata_topo_link(t, strata_topo_chan_link(chan[i])).kind;
    return "";
}

double strata_coll_link_efficiency(const char *kind)
{
    return strata_link_store_eta(kind);
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Payload-rate bytes of the read requests a switch sends a GPU when it
 * pulls n bytes from it (multimem.ld_reduce): one header-only packet per
 * line, (1 - η) n (file comment); 0 on links without a packet overhead in
 * the model. */
static double pull_requests(const strata_coll_machine_t *m, double n)
{
    double eta = m->eta_intra > 0 && m->eta_intra <= 1 ? m->eta_intra : 1; /* unset: none */
    return (1 - eta) * n;
}

/* Which memory reduces: the HBM recorded for rank 0's accelerator in the
 * cluster, else the generation the scale-up link kind implies (the link
 * layer's "memory" of that kind, strata_link_t.memory); m->memory_kind and m->memory_recorded say
 * which. The rate is that memory's bandwidth over the passes a reduction makes. A memory the
 * catalog lacks gives 0: the reduction term is then not modelled rather than guessed. */
static double reduce_rate(const strata_topo_t *t, const strata_link_catalog_t *cat,
                          strata_coll_machine_t *m)
{
    const char *mem = strata_topo_device(t, strata_topo_endpoint(t, 0)).memory;
    m->memory_recorded = mem != NULL;
    if (mem == NULL) {
        const strata_link_t *up = strata_link_find(cat, m->intra_kind);
        mem = up && up->memory[0] ? up->memory : NULL;
    }
    snprintf(m->memory_kind, sizeof(m->memory_kind), "%s", mem ? mem : "");
    const strata_link_t *l = strata_topo_memory_find(cat, mem);
    /* direct's local terms: a read streams the memory once, a copy reads
     * and writes every byte */
    m->bw_read = l ? l->device_bw_dir : 0;
    m->bw_copy = l ? l->device_bw_dir / 2 : 0;
    return l ? l->device_bw_dir / REDUCE_HBM_PASSES : 0;
}

const char *strata_coll_memory_source(const strata_coll_machine_t *m)
{
    if (m->memory_recorded) return "recorded in the cluster";
    return m->memory_kind[0] ? "guessed from the scale-up link" : "not known";
}

/* Server (topology group) of the endpoint rank r runs on; -1: none. */
static int32_t server_of(const strata_topo_t *t, const int32_t *ranks, uint32_t r)
{
    int32_t ep = ranks ? ranks[r] : (int32_t)r;
    if (ep < 0 || ep >= strata_topo_endpoint_count(t)) return -1;
    return strata_topo_device(t, strata_topo_endpoint(t, ep)).group;
}

/* Runs of g consecutive ranks per server, every server's run of one length:
 * rank r shares r+1's server exactly when (r+1) % g != 0. O(n). */
uint32_t strata_coll_ranks_per_server(const strata_topo_t *t, const int32_t *ranks, uint32_t n)
{
    if (!t || n == 0 || server_of(t, ranks, 0) < 0) return 0;
    uint32_t g = 1;
    while (g < n && server_of(t, ranks, g) == server_of(t, ranks, 0))
        g++;
    if (n % g) return 0;
    for (uint32_t r = 0; r + 1 < n; r++) {
        int32_t a = server_of(t, ranks, r), b = server_of(t, ranks, r + 1);
        if (a < 0 || b < 0 || (a == b) != ((r + 1) % g != 0)) return 0;
    }
    return g;
}

static void count_server(const strata_topo_t *t, strata_coll_machine_t *m)
{
    int32_t P = strata_topo_endpoint_count(t),
            g0 = strata_topo_device(t, strata_topo_endpoint(t, 0)).group;
    uint32_t g = strata_coll_ranks_per_server(t, NULL, (uint32_t)P), nics = 0, sw = 0;
    for (int32_t d = 0; d < strata_topo_device_count(t); d++) {
        strata_topo_device_t dv = strata_topo_device(t, d);
        /* NICs cabled to the network (a preset's nics=K leaves the others dark) */
        if (dv.kind == STRATA_DEV_NIC && dv.group == g0 && g0 >= 0 &&
            link_kind_to(t, d, STRATA_DEV_NET_SWITCH)[0])
            nics++;
        if (dv.kind == STRATA_DEV_SCALEUP_SWITCH && (dv.group == g0 || g0 < 0)) sw++;
    }
    m->nranks = (uint32_t)P;
    m->per_server = g == 0 ? (uint32_t)P : g;
    m->servers = m->nranks / m->per_server;
    m->nics = nics;
    m->switch_reduce = sw > 0;
}

static uint32_t torus_rows(const strata_coll_machine_t *m);

/* m->rails (sched.h): NCCL's search lists, for the GPUs of a server, the
 * NICs each reaches best (ncclTopoSelectNets: ncclTopoGetLocalNet's NICs
 * of the best path bandwidth and type first) and starts channel c at NIC
 * nets[c mod count], taking that NIC's bandwidth off for the channel
 * (search.cc ncclTopoSearchRecNet, v2.24.3-1 .. v2.30), so every such NIC
 * carries channels. A server whose GPUs each own a NIC (DGX, HGX) runs
 * min(NICs, ranks) rails; NICs no accelerator owns (a GH200's four ports
 * on its Grace, the GPU's own one of them) are added when some rank of
 * server 0 reaches them in no more hops than its own NIC. 0 when there
 * are none. O(NICs of a server x devices) plus a router when one is. */
uint32_t strata_coll_rails(const strata_topo_t *t, uint32_t g)
{
    int32_t e0 = strata_topo_endpoint(t, 0), g0 = e0 >= 0 ? strata_topo_device(t, e0).group : -1;
    uint32_t nics = 0, extra = 0;
    strata_topo_router_t *rt = NULL;
    if (g0 < 0 || g == 0) return 0;
    for (int32_t d = 0; d < strata_topo_device_count(t); d++) {
        strata_topo_device_t dv = strata_topo_device(t, d);
        if (dv.kind != STRATA_DEV_NIC || dv.group != g0 ||
            !link_kind_to(t, d, STRATA_DEV_NET_SWITCH)[0])
            continue;
        nics++;
        bool owned = false, near = false;
        for (int32_t a = 0; a < strata_topo_device_count(t) && !owned; a++) {
            strata_topo_device_t av = strata_topo_device(t, a);
            owned = av.kind == STRATA_DEV_ACCEL && av.group == g0 && av.nic == d;
        }
        if (owned || (!rt && strata_topo_router_create(t, &rt, NULL) != STRATA_OK)) continue;
        for (uint32_t r = 0; r < g && !near; r++) {
            int32_t e = strata_topo_endpoint(t, (int32_t)r), own = strata_topo_device(t, e).nic;
            near = own >= 0 && strata_topo_hops(rt, e, d) <= strata_topo_hops(rt, e, own);
        }
        extra += near;
    }
    strata_topo_router_destroy(rt);
    return extra ? (nics - extra < g ? nics - extra : g) + extra : 0;
}

/* ==== A ring channel's rail hop (ring.c) ==== */

/* The cabled NIC of server `group` with local index L, or -1. O(devices). */
int32_t sched_server_nic(const strata_topo_t *t, int32_t group, int32_t L)
{
    for (int32_t d = 0; d < strata_topo_device_count(t); d++) {
        strata_topo_device_t dv = strata_topo_device(t, d);
        if (dv.kind == STRATA_DEV_NIC && dv.group == group && dv.local == L &&
            link_kind_to(t, d, STRATA_DEV_NET_SWITCH)[0])
            return d;
    }
    return -1;
}

/* Channel 0's hop from server `from` to server `to`: exit x = local rank 1
 * to entry e = local rank 0 of the next server, leaving by NIC 0 (e's rail),
 * as the simulator routes it (sim/route.c): straight when x's own NIC is
 * that NIC; through the PCIe switch x shares with it; else over the
 * scale-up fabric to the GPU next to it (PXN, *pxn_p); the latency of the
 * legs as one path. O(devices). */
static strata_status_t ring_rail_hop(strata_topo_router_t *rt, const strata_topo_t *t,
                                     const strata_coll_machine_t *m, uint32_t from, uint32_t to,
                                     double *lat_p, bool *pxn_p, strata_error_t *err)
{
    int32_t x = strata_topo_endpoint(t, (int32_t)(from * m->per_server + 1)),
            e = strata_topo_endpoint(t, (int32_t)(to * m->per_server));
    strata_topo_device_t xd = strata_topo_device(t, x), ed = strata_topo_device(t, e);
    int32_t sn =
        ed.nic >= 0 ? sched_server_nic(t, xd.group, strata_topo_device(t, ed.nic).local) : -1;
    int32_t mid = -1;
    *pxn_p = false;
    if (sn >= 0 && sn != xd.nic) {
        mid = sn;
        bool near = xd.nic >= 0 && strata_topo_hops(rt, x, sn) <= strata_topo_hops(rt, x, xd.nic);
        for (int32_t r = 0; !near && r < (int32_t)m->per_server; r++) {
            int32_t g = strata_topo_endpoint(t, (int32_t)(from * m->per_server) + r);
            if (g != x && strata_topo_device(t, g).nic == sn) {
                int32_t ch[PAIR_MAX_HOPS], n = 0;
                bool up =
                    strata_topo_path(rt, x, g, 0, ch, PAIR_MAX_HOPS, &n) == STRATA_OK && n > 0;
                for (int32_t h = 0; up && h < n; h++) {
                    strata_dev_kind_t k =
                        strata_topo_device(t, strata_topo_chan_dst(t, ch[h])).kind;
                    up = k == STRATA_DEV_ACCEL || k == STRATA_DEV_SCALEUP_SWITCH;
                }
                if (up) mid = g, *pxn_p = true;
                break;
            }
        }
    }
    int32_t ch[2 * PAIR_MAX_HOPS], n1 = 0, n2 = 0;
    if (strata_topo_path(rt, x, mid >= 0 ? mid : e, 0, ch, PAIR_MAX_HOPS, &n1) ||
        (mid >= 0 && strata_topo_path(rt, mid, e, 0, ch + n1, PAIR_MAX_HOPS, &n2)))
        return strata_error_set(err, STRATA_ERR_RANGE, "cost: ring hop longer than %d hops",
                                PAIR_MAX_HOPS);
    strata_topo_path_figures(t, ch, n1 + n2, &(double){0}, lat_p);
    return STRATA_OK;
}

/* ==== Direct networks: route whole patterns ==== */

#define PATTERN_MAX_RANKS 8192

typedef struct pattern {
    strata_topo_router_t *rt;
    const strata_topo_t *t;
    double *load; /* per channel */
    size_t nchan;
    int binom; /* 0; 1: binomial reduce step, 2: binomial broadcast step (binomial.c) */
} pattern_t;

/* Route r -> peer(r) for every rank (equal-cost paths share a flow
 * evenly: each path carries 1/paths of it and gets capacity / load of its
 * busiest link per unit, so the flow gets min capacity / load); return the
 * bandwidth the worst flow gets. */
/* Patterns: r -> r XOR d (xor), r -> r + d mod P (add), or with d = 0
 * and add, the ring inside rows of `row` ranks; binomial steps at distance
 * d from root 0: only the ranks that send in that step (binomial.c: reduce
 * v = d mod 2d -> v - d, broadcast v < d -> v + d). P: none. */
static uint32_t peer_of(const pattern_t *p, uint32_t r, uint32_t P, uint32_t d, bool add,
                        uint32_t row)
{
    if (p->binom == 1) return r % (2 * d) == d ? r - d : P;
    if (p->binom == 2) return r < d ? r + d : P;
    if (row) return r / row * row + (r % row + 1) % row;
    return add ? (r + d) % P : r ^ d;
}

static double pattern_bw_row(pattern_t *p, uint32_t P, uint32_t d, bool add, uint32_t row)
{
    int32_t ch[PAIR_MAX_HOPS], n;
    memset(p->load, 0, p->nchan * sizeof(*p->load));
    for (int pass = 0; pass < 2; pass++) {
        double worst = INFINITY;
        for (uint32_t r = 0; r < P; r++) {
            uint32_t q = peer_of(p, r, P, d, add, row);
            if (q >= P || q == r) continue;
            int32_t a = strata_topo_endpoint(p->t, (int32_t)r),
                    b = strata_topo_endpoint(p->t, (int32_t)q);
            double np = strata_topo_path_count(p->rt, a, b);
            int ip = np > 4 ? 4 : (int)np;
            for (int i = 0; i < ip; i++) {
                if (strata_topo_path(p->rt, a, b, (uint64_t)i, ch, PAIR_MAX_HOPS, &n)) continue;
                for (int h = 0; h < n; h++) {
                    double *l = &p->load[ch[h]], bw = strata_topo_chan_bw(p->t, ch[h]);
                    if (pass == 0)
                        *l += 1.0 / ip;
                    else if (bw / *l < worst)
                        worst = bw / *l;
                }
            }
        }
        if (pass == 1) return isfinite(worst) ? worst : 0;
    }
    return 0;
}

static double pattern_bw(pattern_t *p, uint32_t P, uint32_t d, bool add)
{
    return pattern_bw_row(p, P, d, add, 0);
}

/* Do the column pattern (left in p->load) and the row rings share a link? */
static bool rows_share_columns(pattern_t *p, uint32_t P, uint32_t g)
{
    double *col = util_malloc(p->nchan * sizeof(*col));
    if (!col) return true;
    memcpy(col, p->load, p->nchan * sizeof(*col));
    pattern_bw_row(p, P, 0, true, g);
    bool shared = false;
    for (size_t c = 0; c < p->nchan && !shared; c++)
        shared = col[c] > 0 && p->load[c] > 0;
    util_free(col);
    return shared;
}

/* One server whose accelerators reach each other without a scale-up
 * switch (a mesh of direct links, PCIe switches, or endpoints on network
 * switches with no servers, e.g. an oversubscribed fat-tree): its patterns
 * contend on links a rank-pair figure does not show, so they are routed
 * whole, as on a direct network. */
static bool switchless_server(const strata_topo_t *t, const strata_coll_machine_t *m)
{
    if (m->servers != 1 || m->nranks < 2) return false;
    for (int32_t d = 0; d < strata_topo_device_count(t); d++)
        if (strata_topo_device(t, d).kind == STRATA_DEV_SCALEUP_SWITCH) return false;
    return true;
}

/* The flat double binary tree's edges (tree.c, both trees, both ways)
 * routed at once, each its share of paths: the busiest link's load
 * relative to a rank's E edges through its bw_intra (tree_phase_cost's
 * charge on a switch), so a phase costs that factor times the switch's.
 * 1 where edges do not share links, less where they use links of their
 * own (a mesh), more where they share (PCIe uplinks). */
static double tree_edge_factor(pattern_t *p, const strata_coll_machine_t *m)
{
    uint32_t P = m->nranks;
    int32_t ch[PAIR_MAX_HOPS], n;
    memset(p->load, 0, p->nchan * sizeof(*p->load));
    for (int t = 0; t < 2; t++)
        for (uint32_t r = 0; r < P; r++) {
            int32_t up, d0, d1;
            sched_dtree_links(P, t, r, &up, &d0, &d1);
            if (up < 0) continue;
            for (int dir = 0; dir < 2; dir++) {
                int32_t a = strata_topo_endpoint(p->t, dir ? up : (int32_t)r),
                        b = strata_topo_endpoint(p->t, dir ? (int32_t)r : up);
                double np = strata_topo_path_count(p->rt, a, b);
                int ip = np > 4 ? 4 : (int)np;
                for (int i = 0; i < ip; i++) {
                    if (strata_topo_path(p->rt, a, b, (uint64_t)i, ch, PAIR_MAX_HOPS, &n)) continue;
                    for (int h = 0; h < n; h++)
                        p->load[ch[h]] += 1.0 / ip;
                }
            }
        }
    double worst = 0;
    for (size_t c = 0; c < p->nchan; c++) {
        double bw = strata_topo_chan_bw(p->t, (int32_t)c);
        if (p->load[c] > 0 && bw > 0 && p->load[c] / bw > worst) worst = p->load[c] / bw;
    }
    double E = sched_dtree_max_edges(P);
    return E > 0 && worst > 0 ? worst * m->bw_intra / E : 0;
}

static strata_status_t direct_patterns(strata_topo_router_t *rt, const strata_topo_t *t,
                                       strata_coll_machine_t *m, strata_error_t *err)
{
    uint32_t P = m->nranks;
    if (!(m->direct || switchless_server(t, m)) || P > PATTERN_MAX_RANKS) return STRATA_OK;
    pattern_t p = {.rt = rt, .t = t, .nchan = 2 * (size_t)strata_topo_link_count(t)};
    p.load = util_calloc(p.nchan, sizeof(*p.load));
    if (!p.load) return strata_error_set(err, STRATA_ERR_NOMEM, "cost: out of memory");
    int32_t e0 = strata_topo_endpoint(t, 0);
    double bw;
    strata_status_t st = STRATA_OK;
    for (uint32_t k = 0; k < 32 && (1u << k) < P && !st; k++) {
        m->bw_dist[k] = pattern_bw(&p, P, 1u << k, false);
        for (p.binom = 1; p.binom <= 2; p.binom++)
            m->bw_binom[p.binom - 1][k] = pattern_bw(&p, P, 1u << k, false);
        p.binom = 0;
        st = pair_figures(rt, t, e0, strata_topo_endpoint(t, (int32_t)(1u << k)), &bw,
                          &m->lat_dist[k], err);
    }
    m->bw_ring = pattern_bw(&p, P, 1, true);
    if (P <= 1024) m->tree_edge_factor = tree_edge_factor(&p, m);
    uint32_t g = torus_rows(m);
    if (g > 1 && g < P) {
        m->bw_col = pattern_bw(&p, P, g, true);
        m->col_disjoint = !rows_share_columns(&p, P, g);
        st = pair_figures(rt, t, e0, strata_topo_endpoint(t, (int32_t)g), &bw, &m->lat_col, err);
    }
    m->lat_ring = 0;
    for (uint32_t r = 0; r < P && !st; r += P > 64 ? P / 64 : 1) { /* worst ring hop, sampled */
        double lat;
        st = pair_figures(rt, t, strata_topo_endpoint(t, (int32_t)r),
                          strata_topo_endpoint(t, (int32_t)((r + 1) % P)), &bw, &lat, err);
        if (lat > m->lat_ring) m->lat_ring = lat;
    }
    util_free(p.load);
    return st;
}

/* P2P off (strata_topo_set_p2p): every transfer between two ranks of a
 * server is a DMA write into host memory and a DMA read out of it, so the
 * ranks of a server share their PCIe switch uplinks, the memory channels
 * and the socket link even in a ring, where each rank sends to one peer.
 * The intra-server bandwidth is then what the worst flow gets when every
 * rank of the first server sends to the next at once (the ring pattern
 * routed through the staging memory, each channel shared evenly) — the
 * max-min share the simulator finds for the same flows. */
static strata_status_t staged_intra(strata_topo_router_t *rt, const strata_topo_t *t,
                                    strata_coll_machine_t *m, strata_error_t *err)
{
    if (strata_topo_p2p(t) || m->per_server < 2 || m->per_server > PATTERN_MAX_RANKS)
        return STRATA_OK;
    pattern_t p = {.rt = rt, .t = t, .nchan = 2 * (size_t)strata_topo_link_count(t)};
    p.load = util_calloc(p.nchan, sizeof(*p.load));
    if (!p.load) return strata_error_set(err, STRATA_ERR_NOMEM, "cost: out of memory");
    double bw = pattern_bw_row(&p, m->per_server, 0, true, m->per_server);
    if (bw > 0 && bw < m->bw_intra) m->bw_intra = bw;
    util_free(p.load);
    return STRATA_OK;
}

/* GPUs that are PCIe peers move a collective's data with their SMs' stores
 * (NCCL's P2P transport writes into the peer's buffer; P2P read is for
 * NVLink only), one 128 B line per TLP, where the links' catalog rate is
 * that of copy-engine TLPs at the Max Payload Size
 * (strata_link_sm_store_share: 0.9 on PCIe 1.0-5.0). Every figure between
 * the ranks of a server is carried at that share; what the NIC reads out
 * of GPU memory (bw_nic) is DMA at the MPS and stays. */
static void pcie_store_share(const strata_topo_t *t, strata_coll_machine_t *m)
{
    if (m->per_server < 2 || !strata_topo_pcie_peers(t)) return;
    int32_t e0 = strata_topo_endpoint(t, 0);
    const int32_t *nbr, *chan;
    int32_t deg = strata_topo_adjacency(t, e0, &nbr, &chan);
    double f = 1;
    for (int32_t i = 0; i < deg; i++) {
        strata_topo_link_t l = strata_topo_link(t, strata_topo_chan_link(chan[i]));
        if (!strcmp(l.kind, m->intra_kind)) f = l.store_share;
    }
    if (!(f > 0 && f < 1)) return;
    m->store_share = f;
    m->bw_intra *= f, m->bw_ring *= f, m->bw_col *= f, m->bw_mesh_lane *= f;
    for (int k = 0; k < 32; k++)
        m->bw_dist[k] *= f, m->bw_binom[0][k] *= f, m->bw_binom[1][k] *= f;
}

/* Several rings over disjoint links where a server's accelerators form a
 * switchless mesh (meshring.c); one ring (0) otherwise. */
static void mesh_rings(const strata_topo_t *t, strata_coll_machine_t *m)
{
    uint16_t order[STRATA_MESH_RINGS_MAX * STRATA_MESH_MEMBERS_MAX];
    double lane = 0;
    uint32_t g = m->per_server < m->nranks ? m->per_server : 0;
    uint32_t k = strata_coll_mesh_rings(t, NULL, m->nranks, g, order, &lane);
    m->mesh_rings = k > 1 ? k : 0;
    m->bw_mesh_lane = k > 1 ? lane : 0;
}

strata_status_t strata_coll_machine_from_topo(const strata_topo_t *t,
                                              const strata_link_catalog_t *cat,
                                              strata_coll_machine_t *m_p, strata_error_t *err)
{
    strata_coll_machine_t m;
    memset(&m, 0, sizeof(m));
    count_server(t, &m);
    strata_topo_router_t *rt = NULL;
    strata_status_t st = strata_topo_router_create(t, &rt, err);
    if (st) return st;
    int32_t e0 = strata_topo_endpoint(t, 0);
    if (m.nranks > 1) {
        st = pair_leg(rt, t, e0, strata_topo_endpoint(t, 1), &m.bw_intra, &m.lat_intra,
                      &m.lat_leg_intra, err);
        /* the scale-up kind: links to switch chips, else to peers, else any */
        const char *k = link_kind_to(t, e0, STRATA_DEV_SCALEUP_SWITCH);
        if (!k[0]) k = link_kind_to(t, e0, STRATA_DEV_ACCEL);
        if (!k[0]) k = link_kind_to(t, e0, -1);
        snprintf(m.intra_kind, sizeof(m.intra_kind), "%s", k);
    }
    if (!st && m.servers > 1) {
        double lat_far = 0; /* read below even when a figure failed */
        st = pair_figures(rt, t, e0, strata_topo_endpoint(t, (int32_t)m.per_server), &m.bw_nic,
                          &m.lat_inter, err);
        if (!st)
            st = pair_figures(rt, t, e0, strata_topo_endpoint(t, (int32_t)m.nranks - 1),
                              &(double){0}, &lat_far, err);
        /* the same local rank of the first and the last server: the farthest
         * pair of one rail (the tree's server edges join equal local ranks) */
        if (!st)
            st = pair_leg(rt, t, e0,
                          strata_topo_endpoint(t, (int32_t)((m.servers - 1) * m.per_server)),
                          &(double){0}, &m.lat_rail, &m.lat_leg_rail, err);
        if (m.lat_inter > m.lat_rail) m.lat_rail = m.lat_inter, m.lat_leg_rail = 0;
        if (lat_far > m.lat_inter) m.lat_inter = lat_far;
        /* the ring's slowest hop: 0 -> 1 inside a leaf, or the last server
         * back to the first, across the fabric's highest tier it spans */
        double back = 0;
        bool pxn_back = false;
        if (!st && m.per_server > 1)
            st = ring_rail_hop(rt, t, &m, 0, 1, &m.lat_ring_rail, &m.ring_pxn, err);
        if (!st && m.per_server > 1)
            st = ring_rail_hop(rt, t, &m, m.servers - 1, 0, &back, &pxn_back, err);
        if (back > m.lat_ring_rail) m.lat_ring_rail = back;
        int32_t nic = strata_topo_device(t, e0).nic;
        snprintf(m.inter_kind, sizeof(m.inter_kind), "%s",
                 nic >= 0 ? link_kind_to(t, nic, STRATA_DEV_NET_SWITCH) : "");
        if (m.nics == 0) m.nics = 1;
        m.rails = strata_coll_rails(t, m.per_server);
    }
    if (!st) st = staged_intra(rt, t, &m, err);
    if (m.per_server == 1) m.bw_intra = m.bw_nic, m.lat_intra = m.lat_inter, m.lat_leg_intra = 0;
    m.eta_intra = strata_link_store_eta(m.intra_kind);
    m.direct = strata_topo_device(t, e0).group < 0 && m.nranks > 1 &&
               !strcmp(link_kind_to(t, e0, STRATA_DEV_ACCEL), m.intra_kind);
    if (!st) st = direct_patterns(rt, t, &m, err);
    if (!st) mesh_rings(t, &m);
    if (!st) pcie_store_share(t, &m);
    strata_topo_router_destroy(rt);
    if (st) return st;
    if (m.per_server == 1) m.bw_nic = m.bw_intra;
    /* A NIC sends from GPU memory by reading it over the GPU's PCIe link
     * (GPUDirect RDMA): read requests one way, completions the other, at
     * the link's MPS and the spec's default MRRS (strata_link_gdr_read).
     * Where that read path is slower than the NIC, it bounds what the NIC
     * sends. */
    if (cat && m.servers > 1) {
        const char *pk = link_kind_to(t, e0, STRATA_DEV_PCIE_SWITCH);
        if (!pk[0]) pk = link_kind_to(t, e0, STRATA_DEV_NIC);
        const strata_link_t *pl = pk[0] ? strata_link_find(cat, pk) : NULL;
        strata_link_gdr_t gr;
        if (pl && strata_link_gdr_read(pl, 0, 0, 0, 0, &gr, NULL) == STRATA_OK) {
            m.bw_gdr_read = gr.bw_dir;
            if (gr.bw_dir < m.bw_nic) m.bw_nic = gr.bw_dir;
        }
    }
    m.reduce_bw = reduce_rate(t, cat, &m);
    /* NVLink SHARP needs NVSwitch gen3+, i.e. NVLink4+ ports (links.md) */
    m.switch_reduce =
        m.switch_reduce && (!strcmp(m.intra_kind, "nvlink4") || !strcmp(m.intra_kind, "nvlink5"));
    /* InfiniBand SHARP exists in Quantum (HDR) and Quantum-2 (NDR) switches
     * but runs only with an aggregation manager and NCCL's CollNet plugin;
     * a topology does not say it is enabled, so the model assumes it is
     * not (set net_reduce by hand to ask "what if"). */
    m.net_reduce = false;
    *m_p = m;
    return STRATA_OK;
}

/* ==== Cost accumulation ==== */

/* Seconds to reduce `bytes` locally; 0 when the rate is unknown. */
static double red(const strata_coll_machine_t *m, double bytes)
{
    return m->reduce_bw > 0 ? bytes / m->reduce_bw : 0;
}

typedef struct acc {
    double a, bi, be, g, steps, xi, xe;
    double waits; /* synchronisations that wait for a descheduled rank (oversubscribe); 0 = steps */
} acc_t;

/* One step: latency of its tier, bytes over bandwidth bw, repeated `times`. */
static void step(acc_t *z, const strata_coll_machine_t *m, bool inter, double bytes, double bw,
                 double times)
{
    z->steps += times;
    z->a += times * (inter ? m->lat_inter : m->lat_intra);
    double t = bw > 0 ? times * bytes / bw : 0;
    if (inter) {
        z->be += t;
        z->xe += times * bytes;
    } else {
        z->bi += t;
        z->xi += times * bytes;
    }
}

/* A step to the rank 2^k away inside the scale-up domain: on a direct
 * network its routed figures under the whole pattern's load. */
static void step_dist(acc_t *z, const strata_coll_machine_t *m, uint32_t k, double bytes,
                      double times)
{
    bool routed = k < 32 && m->bw_dist[k] > 0;
    double bw = routed ? m->bw_dist[k] : m->bw_intra, lat = routed ? m->lat_dist[k] : m->lat_intra;
    z->steps += times;
    z->a += times * lat;
    z->bi += bw > 0 ? times * bytes / bw : 0;
    z->xi += times * bytes;
}

/* Bandwidth one rank gets when `active` ranks of its server cross the
 * network at once (the server's NICs are shared; one flow uses one NIC). */
static double net_bw(const strata_coll_machine_t *m, double active)
{
    double share = m->nics * m->bw_nic / (active < 1 ? 1 : active);
    double bw = share < m->bw_nic ? share : m->bw_nic;
    return bw < m->bw_intra ? bw : m->bw_intra;
}

/* NICs per server an NVLS or CollNet graph uses: one per head GPU (the
 * search skips a NIC whose local GPU already heads a channel, search.cc
 * ncclTopoSearchRecNet), so at most one per rank. */
static double head_nics(const strata_coll_machine_t *m)
{
    return m->nics < m->per_server ? m->nics : m->per_server;
}

static bool multi(const strata_coll_machine_t *m)
{
    return m->servers > 1;
}

/* Is a partner at rank distance d (XOR or aligned) inside the server? */
static bool inside(const strata_coll_machine_t *m, double d)
{
    return !multi(m) || d < m->per_server;
}

/* Chunk count minimising (C + a)(alpha + b / C): C = sqrt(a b / alpha). */
static double pipe_chunks(double a, double b, double alpha, double bytes)
{
    double cmax = floor(bytes / MIN_CHUNK_BYTES);
    if (cmax < 1) cmax = 1;
    double c = alpha > 0 ? sqrt(a * b / alpha) : cmax;
    c = c < 1 ? 1 : c > cmax ? cmax : round(c);
    return c;
}

/* ==== Algorithms ==== */

/* Ring (ring.c). On one server or a direct network: one ring, each step
 * moving a block of n/P (the routed ring pattern's figures on a direct
 * network). Over N servers of g ranks: g channels, one per local rank,
 * each on n/g of the buffer over its own ring that enters every server at
 * local rank c and leaves it from c^1 through NIC c: one rail (ring.c).
 * Per step a rank sends one block of each channel, n/(gP) each: g-1 of
 * them to a local neighbour over scale-up links, (g-1)/g n/P, and one
 * towards a NIC, n/(gP) — through the PCIe switch it shares with NIC c,
 * or, with PXN (m->ring_pxn), over scale-up links to the GPU next to NIC
 * c first, so that all g blocks, n/P, cross scale-up links — and a server
 * exports n/P per step over min(NICs, g) NICs. Both tiers run at once; the
 * busier sets the step:
 *   step = max(u (n/P) / B_up, (n/P) / (min(NICs, g) B_nic)),
 * u = (g-1)/g, or 1 with PXN; each tier's messages take their own path's
 * latency, so a step costs max(lat_intra + its scale-up term, the rail
 * hop's latency + its NIC term), or with PXN, whose relayed block shares
 * the sender's scale-up port, the rail hop's latency + the larger term
 * (m->lat_ring_rail: one leaf of a
 * rail-optimised fabric, where lat_inter is the farthest pair's, through
 * the spine; with g = 1, lat_rail): on two GB200 NVL72 racks the scale-up
 * blocks set every step and the NIC hop's 1.61 us is hidden behind them,
 * which the simulator showed (-5.2 %) when the model charged it. Allreduce: 2(P-1) steps, a
 * NIC carries 2(P-1)/P n/g in all. Broadcast and reduce run a chain per
 * channel: C + P - 2 steps of n/C. */
static void cost_ring(const strata_coll_machine_t *m, strata_coll_t c, double n, acc_t *z,
                      double *chunks)
{
    double P = m->nranks, g = m->per_server, K = sched_rails(m);
    bool net = multi(m), mesh = m->mesh_rings > 1 && m->bw_mesh_lane > 0;
    bool chain = c == STRATA_COLL_BROADCAST || c == STRATA_COLL_REDUCE;
    double steps = c == STRATA_COLL_ALLREDUCE ? 2 * (P - 1) : P - 1, blk = n / P;
    /* g = 1: one rank per server, the same local rank in each: one rail;
     * a rail channel's exit relayed over scale-up (PXN) sends all g blocks
     * there, a mesh ring leaves by its own rank */
    double u = g > 1 && m->ring_pxn && !mesh ? 1 : (g - 1) / g;
    double lr = g > 1 ? m->lat_ring_rail : m->lat_rail;
    if (!(lr > 0)) lr = m->lat_inter;
    /* mesh rings: R rings at once, each hop one lane of its own */
    double bw_up = mesh ? m->mesh_rings * m->bw_mesh_lane : m->bw_intra;
    if (chain) {
        double up = net ? fmax(u * n / bw_up, n / (K * m->bw_nic)) : n / bw_up;
        double C = pipe_chunks(P - 2, up, net ? lr : m->lat_intra, n);
        *chunks = C;
        steps = C + P - 2, blk = n / C;
    }
    if (!net && mesh) { /* every hop of every ring is one link */
        step(z, m, false, blk, bw_up, steps);
    } else if (!net && m->bw_ring > 0 && !chain) { /* direct network: the routed ring pattern */
        z->steps = steps, z->a = steps * m->lat_ring, z->bi = steps * blk / m->bw_ring;
        z->xi = steps * blk;
    } else if (!net) {
        step(z, m, false, blk, m->bw_intra, steps);
    } else {
        /* the tiers run at once, each message with its own path's
         * latency: a step ends with the slower of the scale-up blocks
         * (lat_intra + ti) and the NIC's (the rail hop's latency + te);
         * a block relayed by PXN shares the sender's scale-up port with
         * them first, so it ends after both (lr + max(ti, te)) */
        double ti = u * blk / bw_up, te = blk / (K * m->bw_nic);
        bool relay = u == 1 && g > 1;
        z->steps = steps;
        if (relay)
            z->a = steps * lr, *(te > ti ? &z->be : &z->bi) = steps * fmax(te, ti);
        else if (lr + te > m->lat_intra + ti)
            z->a = steps * lr, z->be = steps * te;
        else
            z->a = steps * m->lat_intra, z->bi = steps * ti;
        z->xi = steps * u * blk, z->xe = steps * blk / g;
    }
    if (c == STRATA_COLL_REDUCE)
        z->g += red(m, steps * blk);
    else if (!chain && c != STRATA_COLL_ALLGATHER)
        z->g += red(m, (P - 1) / P * n);
}

/* Edges of NCCL's double binary tree at the busiest of N nodes (both
 * trees). Exact up to DTREE_EXACT nodes; beyond, 4 (a node inner in one
 * tree, 3 edges, and a leaf in the other, 1 edge; cost_test checks the
 * generator gives 4 for every N from 5 to 4096), so a cost stays O(1). */
#define DTREE_EXACT 64
static double dtree_edges(uint32_t N)
{
    return N <= DTREE_EXACT ? sched_dtree_max_edges(N) : 4;
}

/* A pipeline of `fill` + C - 1 phases (C = *chunks when it is set, >= 1,
 * else the count that minimises the time) whose every phase moves 1/C of
 * the per-phase loads below (bytes of the whole buffer per tier, C = 1):
 * scale-up bytes per rank over bw_intra, network bytes per server over its
 * NICs. The tiers run at once; the busier sets the pace. Latency: `li`
 * fill phases at the scale-up latency, the rest at the network's. */
static void pipeline(const strata_coll_machine_t *m, double n, double fill, double li, double up1,
                     double net1, double K, acc_t *z, double *chunks)
{
    bool net = multi(m);
    double ti = up1 / m->bw_intra, te = net ? net1 / (K * m->bw_nic) : 0;
    double a = net ? m->lat_inter : m->lat_intra, b = fmax(ti, te);
    double C = *chunks >= 1 ? *chunks : pipe_chunks(fill - 1, b, a, n);
    double phases = C - 1 + fill;
    *chunks = C;
    z->steps = phases;
    z->a = li * m->lat_intra + (phases - li) * a;
    if (te > ti)
        z->be = phases * te / C;
    else
        z->bi = phases * ti / C;
    z->xi = up1, z->xe = net ? net1 / m->per_server : 0;
}

/* Double binary tree (tree.c). Flat over P ranks on one server or a direct
 * network: E edges at the busiest rank, each carrying its tree's half of
 * every chunk each way, so E n/2 per rank per direction; height
 * T = ceil(log2 P); C - 1 + 2T phases.
 *
 * Over N servers of g ranks (NCCL), a chain inside each server, the
 * channels' heads spread over the g ranks. Per rank and direction over
 * scale-up links: every (tree, channel) moves its n/(2g) piece g-1 hops up
 * and g-1 down its chain, 2g of them shared by g ranks: 2(g-1)/g n. Per
 * server through its NICs: its E tree edges (2 for N = 2, up to 4) carry
 * n/2 each way: E n/2 over min(NICs, g) ports. Height g - 1 + ceil(log2 N):
 * C - 1 + 2(g - 1 + T) phases. Large messages:
 *   t -> n max(2(g-1)/g / B_up, E/2 / (min(NICs, g) B_nic))
 * e.g. 2 x 8 H100 (E = 2, 8 NICs at 49.7 GB/s, 400 GB/s NVLink): chain
 * 1.75 n / 400 GB/s = n / 229 GB/s > NICs n / 398 GB/s: chain-bound.
 *
 * The chunk is NCCL's (512 KiB of a channel's slice per step with Simple:
 * cost_tree) over servers, the count that suits the steady state
 * (pipe_chunks) flat; the time is summed phase by phase (tree_walk): the
 * fill and drain phases are not full — while chunks only climb, a server's
 * NICs carry its up edges but none of its down edges — so charging every
 * phase the steady-state load overstates the time (by 15 % on 4 DGX H100
 * at 1 GiB). NCCL's balanced tree hands child server 0 to the chain's
 * second rank (tree.c), one phase later down and one hop deeper. A server
 * edge joins the head or second rank of one channel in both servers, one
 * rail, so it takes one rail's latency (lat_rail: on a rail-optimised
 * fabric one leaf, where lat_inter is the farthest pair's, through the
 * spine). Where the second rank shares no PCIe switch with the head's NIC
 * (m->ring_pxn), a child-0 edge is relayed over scale-up links by the GPU
 * on the receiver's rail, as the simulator routes it: one more scale-up
 * stream at the sending server and the ring hop's latency (lat_ring_rail,
 * the same relayed path). */

/* What a node's load depends on, per tree: depth, height, whether it has
 * a parent, its children's heights (-1: none). Nodes with equal shapes
 * load their links alike, so a phase is costed once per distinct shape
 * (O(log^2 N) of them) rather than per node. */
typedef struct node_shape {
    int32_t d[2], h[2], h1[2], parent[2], hc[2][2];
    int32_t c0[2]; /* its parent edge enters the parent at its second rank */
} node_shape_t;

typedef struct tree_walk {
    node_shape_t *shape; /* distinct shapes */
    size_t nshape;
    int64_t C, T[2];
    uint32_t g;
    bool nvls;  /* nvlstree: the node's switch gathers and multicasts */
    double req; /* nvlstree: read requests per pulled byte (pull_requests) */
    int64_t o;  /* phases before a chunk meets the node tree: 0, nvlstree 2 */
    bool pxn;   /* tree: the second rank reaches the head's NIC over scale-up
                   links through the head (m->ring_pxn), so every child-0
                   edge crosses one more scale-up hop */
    bool c0;    /* ... and there are child-0 edges (more than 2 nodes) */
} tree_walk_t;

/* Of the streams starting at phases a..b, each running C phases (one per
 * chunk), how many are active in phase p. */
static double active(int64_t a, int64_t b, int64_t p, int64_t C)
{
    int64_t lo = a > p - C + 1 ? a : p - C + 1, hi = b < p ? b : p;
    return hi >= lo ? (double)(hi - lo + 1) : 0;
}

/* Chunks in flight in phase p at a node of shape x: *chain out of one rank
 * over scale-up links (the rank holds every chain position once per tree,
 * so every rank of a node carries the same; in = out by the same count),
 * and *ext the node's tree edges per channel, out or in, whichever is
 * larger (tree.c: a rank of height h sends chunk c up at phase c + h; a
 * rank at depth d sends it down at phase c + T + d; chain positions 2..g-1
 * have heights g-3..0, position 1 its own, h1, as it takes child node 0,
 * which it serves one phase after the head serves child node 1). */
static void tree_node_load(const tree_walk_t *w, const node_shape_t *x, int64_t p, double *chain,
                           double *ext)
{
    int64_t C = w->C, g = w->g;
    double ch = 0, out = 0, in = 0, sw_in = 0;
    for (int t = 0; t < 2; t++) {
        int64_t down = w->o + w->T[t] + x->d[t]; /* the head sends down at c + down */
        if (w->nvls) { /* nvlstree.c: up every channel's chunk, as head the total */
            ch += (double)g * active(0, 0, p, C) + active(down, down, p, C);
            sw_in += active(1, 1, p, C) + (double)g * active(down + 1, down + 1, p, C) +
                     w->req * (double)g * active(0, 0, p, C);
        } else if (g > 1) {
            ch += (g > 2 ? active(0, g - 3, p, C) : 0) + active(x->h1[t], x->h1[t], p, C) +
                  active(down, down + g - 2, p, C);
            /* PXN: the relay of a child-0 edge, in the sending server (down
             * from the second rank through the head, up from the child's
             * head through the GPU of the receiver's rail, sim/route.c) */
            if (w->pxn && x->hc[t][0] >= 0 && x->h1[t] >= 0) ch += active(down + 1, down + 1, p, C);
            if (w->pxn && x->c0[t]) ch += active(x->h[t], x->h[t], p, C);
        }
        if (x->parent[t]) {
            out += active(w->o + x->h[t], w->o + x->h[t], p, C);
            in += active(down - 1, down - 1, p, C);
        }
        for (int i = 0; i < 2; i++)
            if (x->hc[t][i] >= 0) {
                int64_t at = down + (i == 0 && x->h1[t] >= 0); /* child 0 from position 1 */
                out += active(at, at, p, C);
                in += active(w->o + x->hc[t][i], w->o + x->hc[t][i], p, C);
            }
    }
    *chain = fmax(ch, sw_in), *ext = fmax(out, in);
}

/* One phase: each tier's latency plus its busiest link's chunks over its
 * bandwidth, the slower tier setting the phase (tiers run at once). */
static void tree_phase_cost(const strata_coll_machine_t *m, const tree_walk_t *w, double n,
                            int64_t p, double times, acc_t *z)
{
    bool net = multi(m);
    double chain = 0, ext = 0, q = n / (2.0 * w->g * (double)w->C);
    double K = sched_rails(m);
    for (size_t k = 0; k < w->nshape; k++) {
        double c, e;
        tree_node_load(w, &w->shape[k], p, &c, &e);
        chain = fmax(chain, c), ext = fmax(ext, e);
    }
    /* flat: the node edges are rank edges over scale-up links; on a
     * switchless server or direct network, routed (tree_edge_factor) */
    double f = !net && m->tree_edge_factor > 0 ? m->tree_edge_factor : 1;
    double bu = net ? chain * q / m->bw_intra : f * ext * q / m->bw_intra;
    double be = net ? ext * (w->g / K) * q / m->bw_nic : 0;
    double le = m->lat_rail > 0 ? m->lat_rail : m->lat_inter;
    /* a relayed child-0 edge takes the relay's hop too: a ring channel's
     * exit-to-entry hop, which is the same path (lat_ring_rail) */
    if (w->pxn && w->c0 && m->lat_ring_rail > le) le = m->lat_ring_rail;
    /* nvlstree's scale-up messages go between a rank and its switch: one
     * leg of a rank-to-rank path */
    double li = w->nvls ? leg_intra(m) : m->lat_intra;
    double tu = bu > 0 ? li + bu : 0, te = be > 0 ? le + be : 0;
    z->steps += times;
    if (te > tu)
        z->a += times * le, z->be += times * be;
    else
        z->a += times * li, z->bi += times * bu;
}

static int shape_cmp(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(node_shape_t));
}

/* The distinct node shapes of the generator's trees (sched_dtree_init). */
static int tree_shapes(const strata_coll_machine_t *m, uint32_t g, tree_walk_t *w)
{
    strata_sched_t s;
    memset(&s, 0, sizeof(s));
    s.p.nranks = m->nranks, s.p.algo = w->nvls ? STRATA_ALGO_NVLSTREE : STRATA_ALGO_TREE;
    if (sched_dtree_init(&s, g, !w->nvls, NULL) != STRATA_OK) return -1;
    size_t N = (size_t)s.aux[SCHED_DT_N];
    w->T[0] = s.aux[SCHED_DT_T0], w->T[1] = s.aux[SCHED_DT_T1];
    w->shape = util_calloc(N, sizeof(*w->shape));
    for (size_t n = 0; n < N && w->shape; n++) {
        node_shape_t *x = &w->shape[n];
        for (int t = 0; t < 2; t++) {
            x->d[t] = sched_dt(&s, t, (int64_t)n, DT_DEPTH);
            x->h[t] = sched_dt(&s, t, (int64_t)n, DT_HEIGHT);
            x->h1[t] = sched_dt(&s, t, (int64_t)n, DT_H1);
            int32_t up = sched_dt(&s, t, (int64_t)n, DT_PARENT);
            x->c0[t] = up >= 0 && sched_dt(&s, t, up, DT_C0) == (int32_t)n &&
                       sched_dt(&s, t, up, DT_H1) >= 0;
            w->c0 = w->c0 || x->c0[t];
            x->parent[t] = sched_dt(&s, t, (int64_t)n, DT_PARENT) >= 0;
            for (int i = 0; i < 2; i++) {
                int32_t c = sched_dt(&s, t, (int64_t)n, DT_C0 + i);
                x->hc[t][i] = c < 0 ? -1 : sched_dt(&s, t, c, DT_HEIGHT);
            }
        }
    }
    util_free(s.tab);
    if (!w->shape) return -1;
    qsort(w->shape, N, sizeof(*w->shape), shape_cmp);
    w->nshape = 0;
    for (size_t n = 0; n < N; n++)
        if (w->nshape == 0 || shape_cmp(&w->shape[w->nshape - 1], &w->shape[n]))
            w->shape[w->nshape++] = w->shape[n];
    return 0;
}

/* Sum the phases; those from the last stream start to the first stream end
 * (every stream active) share one load. O(N log N) for the shapes, then
 * O(shapes (g + log N)). NOMEM: -1, the caller keeps the steady-state sum. */
static int tree_walk(const strata_coll_machine_t *m, double n, double C, bool nvls, acc_t *z)
{
    tree_walk_t w = {.C = (int64_t)C, .g = multi(m) ? m->per_server : 1, .nvls = nvls};
    w.o = nvls ? 2 : 0;
    w.req = nvls ? pull_requests(m, 1) : 0;
    w.pxn = !nvls && w.g > 1 && m->ring_pxn;
    if (tree_shapes(m, w.g, &w)) return -1;
    int64_t Tm = w.T[0] > w.T[1] ? w.T[0] : w.T[1], phases = w.C - 1 + 2 * Tm + 2 * w.o;
    int64_t last_start = 2 * Tm - 1 + 2 * w.o; /* no stream starts later */
    acc_t a = {0};
    for (int64_t p = 0; p < phases; p++) {
        if (p > last_start && p < w.C - 1) { /* steady: every stream active */
            tree_phase_cost(m, &w, n, p, (double)(w.C - 1 - p), &a);
            p = w.C - 2;
            continue;
        }
        tree_phase_cost(m, &w, n, p, 1, &a);
    }
    util_free(w.shape);
    z->a = a.a, z->bi = a.bi, z->be = a.be, z->steps = a.steps;
    return 0;
}

/* Over servers the chunk is NCCL's (chunk bytes of one channel's slice per
 * step; sched_nccl_tree_chunk), so C = ceil(n / (2g) / chunk): the library
 * does not pick C to suit the message, and a message of a few chunks per
 * channel pays the 2T fill phases nearly whole. Flat, C minimises the time
 * (pipe_chunks). */
static void cost_tree(const strata_coll_machine_t *m, double n, double chunk, acc_t *z,
                      double *chunks)
{
    double g = multi(m) ? m->per_server : 1, N = m->nranks / g, E = dtree_edges((uint32_t)N);
    double T = sched_log2_ceil((uint64_t)N);
    if (multi(m)) {
        /* a channel per tree and head rank, or per rail where a server has
         * more NICs than ranks (tree.c, params rails) */
        double W = m->rails > g && fmod(m->rails, g) == 0 ? m->rails : g, per = n / (2 * W);
        if (!(chunk > 0)) chunk = sched_nccl_tree_chunk(SCHED_NCCL_SIMPLE, n, m);
        *chunks = per > chunk ? ceil(per / chunk) : 1;
        pipeline(m, n, 2 * (g - 1 + T), 2 * (g - 1), 2 * (g - 1) / g * n, E * n / 2, sched_rails(m),
                 z, chunks);
    } else
        pipeline(m, n, 2 * T, 0, E * n / 2, 0, sched_rails(m), z, chunks);
    tree_walk(m, n, *chunks, false, z);
    /* a rank reduces what reaches it on the way up: its chain share and
     * (as a head) up to two child servers' halves, or two children flat */
    z->g += red(m, (z->steps / *chunks) * ((g - 1) / g * n + fmin(E, 2) * n / (2 * g)));
}

/* NVLS tree (nvlstree.c): each chunk goes up to the switch (all n of a
 * rank's input), the switch hands 1/g of it to each rank as head, heads
 * run the tree across servers and send the total back up (n/g), and the
 * switch multicasts it. Per rank per direction over scale-up links:
 * n (1 + 1/g) + the switch's read requests, the NVLS traffic (cost_innet);
 * per server through the NICs
 * E n/2 as for the tree. C + 3 + 2T phases (T = ceil(log2 N)), four of
 * them at scale-up latency. Large messages:
 *   t -> n max((1+1/g) / B_up, E/2 / (min(NICs, g) B_nic)). */
static void cost_nvlstree(const strata_coll_machine_t *m, double n, acc_t *z, double *chunks)
{
    double g = m->per_server, N = m->servers, E = dtree_edges((uint32_t)N);
    double T = sched_log2_ceil((uint64_t)N);
    pipeline(m, n, 4 + 2 * T, 4, (1 + 1 / g) * n + pull_requests(m, n), E * n / 2, head_nics(m), z,
             chunks);
    tree_walk(m, n, *chunks, true, z);
    z->g += red(m, (z->steps / *chunks) * fmin(E, 2) * n / (2 * g));
}

/* Binomial tree: log2 P steps of the whole buffer; step k spans 2^k ranks. */
static void cost_binomial(const strata_coll_machine_t *m, strata_coll_t c, double n, acc_t *z)
{
    uint32_t L = sched_log2_ceil(m->nranks);
    int rounds = (c == STRATA_COLL_ALLREDUCE || c == STRATA_COLL_BARRIER) ? 2 : 1;
    for (uint32_t k = 0; k < L; k++) {
        if (inside(m, (double)(1u << k)) && k < 32 && m->bw_binom[0][k] > 0) {
            /* routed: only this step's senders load the links */
            strata_coll_machine_t mk = *m;
            bool up = c != STRATA_COLL_BROADCAST, down = c != STRATA_COLL_REDUCE;
            if (up) mk.bw_dist[k] = m->bw_binom[0][k], step_dist(z, &mk, k, n, 1);
            if (down) mk.bw_dist[k] = m->bw_binom[1][k], step_dist(z, &mk, k, n, 1);
        } else if (inside(m, (double)(1u << k)))
            step_dist(z, m, k, n, rounds);
        else
            step(z, m, true, n, net_bw(m, m->per_server), rounds);
        if (c == STRATA_COLL_REDUCE || c == STRATA_COLL_ALLREDUCE) z->g += red(m, n);
    }
}

static void fold_steps(const strata_coll_machine_t *m, double first, double last, acc_t *z)
{
    if (m->nranks == (1u << sched_log2_floor(m->nranks))) return;
    if (inside(m, 1)) {
        step_dist(z, m, 0, first, 1);
        step_dist(z, m, 0, last, 1);
        return;
    }
    step(z, m, true, first, net_bw(m, m->per_server), 1);
    step(z, m, true, last, net_bw(m, m->per_server), 1);
}

/* Recursive doubling's and Rabenseifner's allreduce work in OUTPUT: when
 * P is a power of two every rank first copies its n input bytes there
 * (recdbl.c and rabenseifner.c fold_in: phase 0, no message), at one
 * rank's copy rate; the ring reduces straight from INPUT and copies
 * nothing. With folding (P not a power of two) phase 0 is the fold's
 * message of n, which the others' copy runs beside: not charged. */
static void first_copy(const strata_coll_machine_t *m, strata_coll_t c, double n, acc_t *z)
{
    if (c == STRATA_COLL_ALLREDUCE && m->bw_copy > 0 &&
        m->nranks == (1u << sched_log2_floor(m->nranks)))
        z->bi += n / m->bw_copy;
}

static void cost_recdbl(const strata_coll_machine_t *m, strata_coll_t c, double n, acc_t *z)
{
    uint32_t L = sched_log2_floor(m->nranks);
    double P = m->nranks;
    for (uint32_t k = 0; k < L; k++) {
        double bytes = c == STRATA_COLL_ALLGATHER ? n / P * (1u << k) * P / (1u << L) : n;
        if (inside(m, (double)(1u << k)))
            step_dist(z, m, k, bytes, 1);
        else
            step(z, m, true, bytes, net_bw(m, m->per_server), 1);
        if (c == STRATA_COLL_ALLREDUCE) z->g += red(m, n);
    }
    fold_steps(m, c == STRATA_COLL_ALLGATHER ? n / P : n, n, z);
    first_copy(m, c, n, z);
}

/* Halving step s exchanges half its range with the core rank d = 2^(L-1-s)
 * away. Folding P = 2^L + rem leaves core ranks c < rem two real blocks
 * each (rabenseifner.c, sched_fold_lo), so the halves are unequal and the
 * lowest group's lower half [0, d) is the heaviest: d + min(d, rem) blocks
 * of n/P, the step's time (n / 2^(s+1) when P is a power of two). On a
 * single GB200 NVL72 rack (P = 72, rem = 8) that is 94/72 n per halving
 * pass where equal halves give 63/64 n: the simulator measured the schedule
 * 16.1 % above the equal-halves price. */
static void cost_rabenseifner(const strata_coll_machine_t *m, strata_coll_t c, double n, acc_t *z)
{
    uint32_t L = sched_log2_floor(m->nranks);
    double rem = m->nranks - (double)(1u << L);
    int rounds = c == STRATA_COLL_ALLREDUCE ? 2 : 1;
    for (uint32_t s = 0; s < L; s++) {
        double d = (double)(1u << (L - 1 - s)), bytes = (d + fmin(d, rem)) * n / m->nranks;
        if (inside(m, d))
            step_dist(z, m, L - 1 - s, bytes, rounds);
        else
            step(z, m, true, bytes, net_bw(m, m->per_server), rounds);
        z->g += red(m, bytes);
    }
    fold_steps(m, n, c == STRATA_COLL_ALLREDUCE ? n : n / m->nranks, z);
    first_copy(m, c, n, z);
}

/* Bruck: step k sends to r - 2^k (allgather) or r + 2^k (alltoall); when
 * 2^k < g only 2^k ranks per server cross the network. */
static void cost_bruck(const strata_coll_machine_t *m, strata_coll_t c, double n, acc_t *z)
{
    uint32_t P = m->nranks, L = sched_log2_ceil(P);
    double blk = n / P;
    for (uint32_t k = 0; k < L; k++) {
        uint32_t d = 1u << k;
        double cross = d < m->per_server ? d : m->per_server;
        double bw = net_bw(m, cross), blocks = 0;
        if (c == STRATA_COLL_ALLGATHER)
            blocks = d < P - d ? d : P - d;
        else if (c == STRATA_COLL_ALLTOALL)
            blocks = (double)(P / (2 * d) * d + (P % (2 * d) > d ? P % (2 * d) - d : 0));
        if (multi(m))
            step(z, m, true, blocks * blk, bw, 1);
        else
            step_dist(z, m, k, blocks * blk, 1);
    }
}

/* Pairwise: step k talks to r + k; for k < g, k ranks per server cross.
 * With P a power of two step i talks to r XOR i (pairwise.c): for i < g
 * (g a power of two, ranks server-major) every partner is in the server,
 * for i >= g every rank of every server crosses. */
static void cost_pairwise(const strata_coll_machine_t *m, strata_coll_t c, double n, acc_t *z)
{
    double P = m->nranks, g = m->per_server;
    if (c == STRATA_COLL_SENDRECV) {
        step(z, m, multi(m), n, multi(m) ? net_bw(m, 1) : m->bw_intra, 1);
        return;
    }
    double blk = n / P;
    if (!multi(m)) {
        step(z, m, false, blk, m->bw_intra, P - 1);
        return;
    }
    uint64_t Pi = (uint64_t)P, gi = (uint64_t)g;
    if ((Pi & (Pi - 1)) == 0 && gi >= 1 && (gi & (gi - 1)) == 0 && (double)gi == g) {
        step(z, m, false, blk, m->bw_intra, g - 1);
        step(z, m, true, blk, net_bw(m, g), P - g);
        return;
    }
    /* k = 1 .. g-1: the slowest rank crosses with k others; k >= g: all cross */
    for (double k = 1; k < g; k++)
        step(z, m, true, blk, net_bw(m, k), 1);
    step(z, m, true, blk, net_bw(m, g), P - g);
}

/* Two-level, pipelined (hier.c): chunk c runs stage j in phase c + j, the
 * S = 2(g-1) + 2(N-1) stages being the inner reduce-scatter (g-1), the
 * outer allreduce (2(N-1)) and the inner allgather (g-1); C + S - 1
 * phases. Rows = servers for hier; for torus2d on a direct network rows
 * and columns are the two dimensions. The chunk count balances the
 * busier tier against one chunk of the other (pipe_chunks); the time is
 * summed phase by phase: a phase runs stages max(0, p-C+1) .. min(S-1, p)
 * and takes, per tier with a stage in it, its latency plus its stages'
 * share of that tier's bytes, the slower tier setting it when the tiers
 * use different links (they run at once), their sum when they share them.
 * While the pipeline fills and drains a phase holds few inner stages and
 * the outer ring sets it, so the inner tier's bytes are not all hidden
 * behind it (+6 % on 4 DGX H100 at 1 GiB over max(Ti, Te) + min / C). */
static double stages_in(int64_t lo, int64_t hi, int64_t a, int64_t b)
{
    int64_t l = lo > a ? lo : a, h = hi < b ? hi : b;
    return h >= l ? (double)(h - l + 1) : 0;
}

static void twolevel_walk(const strata_coll_machine_t *m, int64_t g, int64_t N, int64_t C, double x,
                          double y, double ae, bool overlap, acc_t *z)
{
    int64_t S = 2 * (g - 1) + 2 * (N - 1), o0 = g - 1, o1 = g - 2 + 2 * (N - 1);
    for (int64_t p = 0; p < C + S - 1; p++) {
        int64_t lo = p - C + 1 > 0 ? p - C + 1 : 0, hi = p < S - 1 ? p : S - 1;
        double I = stages_in(lo, hi, 0, o0 - 1) + stages_in(lo, hi, o1 + 1, S - 1);
        double E = stages_in(lo, hi, o0, o1);
        double ti = I > 0 ? m->lat_intra + I * x : 0, te = E > 0 ? ae + E * y : 0;
        z->steps += 1;
        if (!overlap) {
            z->a += (I > 0 ? m->lat_intra : 0) + (E > 0 ? ae : 0);
            z->bi += I * x, z->be += E * y;
        } else if (te > ti) {
            z->a += ae, z->be += E * y;
        } else {
            z->a += m->lat_intra, z->bi += I * x;
        }
    }
}

static void cost_twolevel(const strata_coll_machine_t *m, uint32_t g, double n, acc_t *z,
                          double *chunks)
{
    double P = m->nranks, N = P / g;
    bool net = multi(m);
    double bw_out = net ? net_bw(m, g) : m->bw_intra;
    double Ti = 2 * (g - 1) / (double)g * n / m->bw_intra;
    bool col = !net && m->bw_col > 0; /* direct network: routed column pattern */
    if (col) bw_out = m->bw_col;
    double Te = 2 * (N - 1) / N * (n / g) / bw_out;
    bool overlap = net || (m->direct && m->col_disjoint);
    /* the outer ring joins equal local ranks: one rail (lat_rail) */
    double le = m->lat_rail > 0 ? m->lat_rail : m->lat_inter;
    double ae = net ? le : col ? m->lat_col : m->lat_intra, lo = fmin(Ti, Te);
    double C = overlap ? pipe_chunks(1, lo, ae, n / g) : 1;
    *chunks = C;
    /* per stage and chunk: a tier's bytes over its stages and the chunks */
    double x = g > 1 ? Ti / (C * 2 * (g - 1)) : 0, y = N > 1 ? Te / (C * 2 * (N - 1)) : 0;
    twolevel_walk(m, g, (int64_t)N, (int64_t)C, x, y, ae, overlap, z);
    if (!net) z->bi += z->be, z->be = 0;
    z->xi = Ti * m->bw_intra, z->xe = net ? Te * bw_out : 0;
    z->g = red(m, (g - 1) / (double)g * n + (N - 1) / N * n / g);
}

/* Two-level, the other collectives (hier.c). Reduce-scatter, allgather
 * and alltoall: g-1 steps inside a server, each moving the N blocks of one
 * local index (N·n/P), and N-1 steps across, where all g ranks of a server
 * cross at once (reduce-scatter, allgather: one block n/P each; alltoall:
 * the g blocks gathered for the peer, g·n/P), so they share its NICs
 * (net_bw(m, g)). Barrier: reduce-scatter's steps with no data. Broadcast
 * and reduce: a tree of two chains (across servers from the root's, then
 * inside each) of depth T = (N-1) + (g-1), pipelined over C chunks of n/C:
 * C + T - 1 phases; phase p carries a hop across while p < C + N - 2 and
 * one inside while a chunk still moves inside (from the first phase when
 * g > 1); the tiers' links differ, so a phase with both takes the slower. */
static void cost_hier_other(const strata_coll_machine_t *m, strata_coll_t c, double n, acc_t *z,
                            double *chunks)
{
    double P = m->nranks, g = m->per_server, N = P / g, blk = n / P;
    double le = m->lat_rail > 0 ? m->lat_rail : m->lat_inter;
    if (c == STRATA_COLL_BROADCAST || c == STRATA_COLL_REDUCE) {
        double T = (N - 1) + (g - 1), bw_out = net_bw(m, 1);
        double C = pipe_chunks(T - 1, n / fmin(bw_out, m->bw_intra), le, n);
        *chunks = C;
        double x = n / C / m->bw_intra, y = n / C / bw_out;
        for (double p = 0; p < C + T - 1; p++) {
            bool out = N > 1 && p<C + N - 2, in = g> 1;
            double ti = in ? m->lat_intra + x : 0, te = out ? le + y : 0;
            z->steps += 1;
            if (te > ti)
                z->a += le, z->be += y, z->xe += y * bw_out;
            else
                z->a += m->lat_intra, z->bi += x, z->xi += n / C;
        }
        if (c == STRATA_COLL_REDUCE) z->g = red(m, n);
        return;
    }
    double outer = c == STRATA_COLL_ALLTOALL ? g * blk : blk;
    if (g > 1) step(z, m, false, N * blk, m->bw_intra, g - 1);
    if (N > 1) {
        double a0 = z->a;
        step(z, m, true, outer, net_bw(m, g), N - 1);
        z->a = a0 + (N - 1) * le; /* across: ranks of one local index, one rail */
    }
    if (c == STRATA_COLL_REDUCE_SCATTER) z->g = red(m, (g - 1) * N * blk + (N - 1) * blk);
}

/* In-network (innet.c): NVLS inside a server, a SHARP tree across servers.
 * C + 3 phases in one server, C + 5 with the tree. Switches reduce at line
 * rate (they are built to), so there is no γ term.
 *
 * Traffic on a GPU's links, per direction, as the NVLS kernel makes it:
 * up, the switch's reads of its whole input (multimem.ld_reduce, n) and
 * the store of the shard it owns (multimem.st, n/g); down, its reduced
 * shard (n/g), the multicast of every shard (n) and the switch's read
 * requests for the n it pulls (pull_requests, 0.2 n on NVLink; the owner's
 * own request for its shard, 0.025 n up, is left out as up is not the
 * bottleneck). Down is the larger: n (1 + 1/g) + 0.2 n, so on NVLink busbw
 * -> B 2(g-1)/g / (1.2 + 1/g) (8 GPUs: 1.321 B; 475 GB/s on H100's 360).
 * With a SHARP tree across servers each owner also sends its n/g through a
 * NIC and receives n/g: n per server each way.
 *
 * The time is summed phase by phase (innet_walk): in the fill and drain
 * phases only some of a chunk's streams run. Each stream s occupies phases
 * [s0, s0 + C); the phase's load is that of its active streams. A phase
 * goes between ranks and a switch, one leg of a rank-to-rank path: half
 * its latency (a scale-up path's, or a rail's through a NIC); the tier
 * whose latency plus load is larger sets the phase (tiers run at once). */
typedef struct innet_stream {
    int s0;   /* first phase (chunk 0) */
    int tier; /* 0 scale-up out, 1 scale-up in, 2 NIC out, 3 NIC in */
    double x; /* bytes per chunk, in units of n / C */
} innet_stream_t;

static void innet_walk(const strata_coll_machine_t *m, double n, double C, acc_t *z)
{
    bool net = multi(m);
    double g = net ? m->per_server : m->nranks, r = pull_requests(m, 1);
    /* one leg of a path, rank <-> switch: half a scale-up path; through a
     * NIC half a rail's path (an owner's root is its rail's switch) */
    double ai = leg_intra(m), ae = leg_rail(m);
    int st = net ? 4 : 2; /* the phase of the owner's store */
    innet_stream_t s[] = {
        {0, 0, 1},
        {st, 0, 1 / g},
        {0, 1, r},
        {1, 1, 1 / g},
        {st + 1, 1, 1},
        {2, 2, net ? 1 / g : 0},
        {3, 3, net ? 1 / g : 0},
    };
    size_t ns = sizeof(s) / sizeof(s[0]);
    double K = head_nics(m);
    double bnic = net ? K / g * m->bw_nic : 1; /* an owner's share of its server's NICs */
    double bw[4] = {m->bw_intra, m->bw_intra, bnic, bnic};
    /* phase boundaries: every stream's start and end */
    double cut[2 * sizeof(s) / sizeof(s[0]) + 1];
    size_t nc = 0;
    for (size_t i = 0; i < ns; i++)
        cut[nc++] = s[i].s0, cut[nc++] = s[i].s0 + C;
    cut[nc++] = 0;
    qsort(cut, nc, sizeof(double), dbl_cmp);
    double end = C + st + 1;
    memset(z, 0, sizeof(*z));
    for (size_t i = 0; i + 1 < nc; i++) {
        double p = cut[i], times = cut[i + 1] - cut[i];
        if (times <= 0 || p >= end) continue;
        double t[4] = {0, 0, 0, 0};
        for (size_t j = 0; j < ns; j++)
            if (p >= s[j].s0 && p < s[j].s0 + C) t[s[j].tier] += s[j].x * n / C / bw[s[j].tier];
        double ti = fmax(t[0], t[1]), te = fmax(t[2], t[3]);
        double tu = ti > 0 ? ai + ti : 0, tn = te > 0 ? ae + te : 0;
        z->steps += times;
        if (tn > tu)
            z->a += times * ae, z->be += times * te;
        else
            z->a += times * ai, z->bi += times * ti;
    }
}

static void cost_innet(const strata_coll_machine_t *m, double n, acc_t *z, double *chunks)
{
    bool net = multi(m);
    double g = net ? m->per_server : m->nranks, down = (1 + 1 / g) * n + pull_requests(m, n);
    double ti = down / m->bw_intra, te = net ? n / (m->nics * m->bw_nic) : 0;
    double extra = net ? 5 : 3, a = net ? leg_rail(m) : leg_intra(m);
    double C = pipe_chunks(extra, fmax(ti, te), a, n);
    *chunks = C;
    innet_walk(m, n, C, z);
    z->xi = down, z->xe = net ? n / m->per_server : 0;
}

/* Direct (direct.c): strata's shared-memory engine. One rank's core does
 * all of its work in sequence (loads, reductions and copies are one
 * instruction stream), so the terms add. Per rank, S the buffer, f =
 * (P-1)/P, hand = bw_load (a byte stored by its owner and loaded by a
 * peer), red = the reduction rate, cp/rd the local copy/read rates:
 *   allreduce, reduce  S/rd (its own input, staged and reduced)
 *                      + f S / min(hand, red) (P-1 peers' copies of its
 *                      slice loaded and reduced; at bw_reduce_load when
 *                      the machine has it: the loads overlap the stores of
 *                      the sum) + S/P / cp (its slice copied out) + f S /
 *                      hand (the other slices loaded);
 *                      flat (<= 2 KiB): S/rd + (P-1) S / min(hand, red);
 *   reduce-scatter     S/rd + f S / min(hand, red)
 *   allgather          S/P / rd + S/P / cp + f S / hand
 *   alltoall           S/rd + S/P / cp + f S / hand
 *   broadcast          S / hand (the root's staging of chunk c + 1 runs
 *                      while the others load chunk c);
 *   allreduce on registered buffers (m->registered, above 2 KiB): S/P / rd
 *                      (its own slice) + c0 / rd (chunk 0 staged by the
 *                      first handshake, never read: c0 = f min(S, the
 *                      engine's chunk)) + f S / min(hand, red) (its slice
 *                      loaded from every peer's input and reduced) + S/P /
 *                      cp (into its output) + f S / hand (into the peers'
 *                      outputs); 2 synchronisations, 1 chunk;
 * plus, for the bytes loaded into the output (allreduce f S, allgather and
 * alltoall f S, broadcast S), their stores where the output lives beyond
 * what the hand-over rate holds (bw_store, 0 = none).
 * Synchronisations: the call's first costs a message (lat_intra); the
 * others one flag each (lat_sync): allreduce 2 per chunk, flat 1, the
 * others 1 per chunk (sched_direct_chunks, the engine's layout: when the
 * ranks outnumber the cores, allreduce in at least 4 chunks too). Ranks
 * beyond the cores pay lat_oversub per rank at the call's waits (below),
 * not at every chunk's. */
static bool direct_shared(const strata_coll_machine_t *m)
{
    return m->cores > 0 && m->nranks > m->cores;
}

static void cost_direct(const strata_coll_machine_t *m, strata_coll_t c, double n, acc_t *z)
{
    double P = m->nranks, f = (P - 1) / P, red_rate = m->reduce_bw;
    double hand = m->bw_load > 0 ? m->bw_load : m->bw_intra;
    double pull = red_rate > 0 && red_rate < hand ? red_rate : hand;
    double rd = m->bw_read > 0 ? 1 / m->bw_read : 0, cp = m->bw_copy > 0 ? 1 / m->bw_copy : 0;
    double C = sched_direct_chunks(c, m->nranks, n, direct_shared(m)), syncs = C, t, out = f * n;
    bool flat =
        (c == STRATA_COLL_ALLREDUCE || c == STRATA_COLL_REDUCE) && n <= STRATA_DIRECT_FLAT_MAX;
    bool reg = m->registered && c == STRATA_COLL_ALLREDUCE && !flat;
    double chunk0 = sched_direct_chunk0(m->nranks, n, direct_shared(m));
    switch (reg ? STRATA_COLL_COUNT : c) {
    case STRATA_COLL_COUNT: /* registered allreduce */
        syncs = 2;
        t = (n / P + f * chunk0) * rd + f * n / pull + n / P * cp + f * n / hand;
        z->g = red(m, f * n);
        break;
    case STRATA_COLL_ALLREDUCE:
    case STRATA_COLL_REDUCE:
        syncs = flat ? 1 : 2 * C;
        if (!flat && m->bw_reduce_load > 0) pull = m->bw_reduce_load;
        t = flat ? n * rd + (P - 1) * n / pull : n * rd + f * n / pull + n / P * cp + f * n / hand;
        z->g = red(m, flat ? (P - 1) * n : f * n);
        break;
    case STRATA_COLL_REDUCE_SCATTER:
        t = n * rd + f * n / pull, out = 0;
        z->g = red(m, f * n);
        break;
    case STRATA_COLL_ALLGATHER:
        t = n / P * (rd + cp) + f * n / hand;
        break;
    case STRATA_COLL_ALLTOALL:
        t = n * rd + n / P * cp + f * n / hand;
        break;
    default:
        t = n / hand, out = n;
        break;
    }
    if (m->bw_store > 0) t += out / m->bw_store;
    double ls = m->lat_sync > 0 ? m->lat_sync : m->lat_intra;
    z->steps = syncs;
    /* ranks beyond the cores: inside the pipeline the ranks sharing a core
     * take turns with work to do (the data terms' ceil(P / cores)); a rank
     * waits idle for a descheduled one where no work is left to overlap:
     * the call's stage-to-reduce and reduce-to-gather hand-offs (flat and
     * the one-phase collectives: one) */
    z->waits = c == STRATA_COLL_ALLREDUCE || c == STRATA_COLL_REDUCE ? (flat ? 1 : 2) : 1;
    z->a = m->lat_intra + (syncs - 1) * ls;
    z->bi = t;
    z->xi = c == STRATA_COLL_BROADCAST ? n : f * n;
}

/* Default row length of torus2d (as torus2d.c): the longer side of the
 * squarest grid, or the server when there are servers. */
static uint32_t torus_rows(const strata_coll_machine_t *m)
{
    if (multi(m)) return m->per_server;
    uint32_t P = m->nranks, s = 1;
    for (uint32_t d = 1; (uint64_t)d * d <= P; d++)
        if (P % d == 0) s = d;
    return P / s;
}

static strata_status_t applies(const strata_coll_machine_t *m, strata_coll_t c, strata_algo_t a,
                               strata_error_t *err)
{
    if (!sched_algo_supports(c, a))
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED, "algorithm %s does not implement %s",
                                strata_algo_name(a), strata_coll_name(c));
    if (a == STRATA_ALGO_HIER && (!multi(m) || m->per_server < 2))
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                "hier needs several servers of several ranks");
    if (a == STRATA_ALGO_TORUS2D && (torus_rows(m) < 2 || torus_rows(m) == m->nranks))
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED, "torus2d needs a 2D grid of ranks");
    if (a == STRATA_ALGO_INNET && m->switch_reduce && multi(m) && !m->net_reduce)
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                "innet across servers needs network switches that reduce "
                                "(InfiniBand SHARP, assumed off)");
    if (a == STRATA_ALGO_INNET && !(m->switch_reduce && (!multi(m) || m->net_reduce)))
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                "innet needs switches that reduce (NVLink SHARP, IB SHARP)");
    if (a == STRATA_ALGO_DIRECT && multi(m))
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                "direct needs ranks that share memory (one server)");
    if (a == STRATA_ALGO_NVLSTREE && !(m->switch_reduce && multi(m)))
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                "nvlstree needs several servers whose switches reduce "
                                "(NVLink SHARP)");
    return STRATA_OK;
}

double strata_coll_busbw_factor(strata_coll_t coll, uint32_t P)
{
    double p = P;
    switch (coll) {
    case STRATA_COLL_ALLREDUCE:
        return 2 * (p - 1) / p;
    case STRATA_COLL_ALLGATHER:
    case STRATA_COLL_REDUCE_SCATTER:
    case STRATA_COLL_ALLTOALL:
        return (p - 1) / p;
    case STRATA_COLL_BARRIER:
        return 0;
    default:
        return 1;
    }
}

static const char *bound_of(const acc_t *z)
{
    double b = fmax(z->bi, z->be);
    if (z->a >= fmax(b, z->g)) return "latency";
    if (z->g > b) return "reduction";
    return z->be > z->bi ? "network bandwidth" : "scale-up bandwidth";
}

static void dispatch(const strata_coll_machine_t *m, strata_coll_t c, strata_algo_t a, double n,
                     double chunk, acc_t *z, double *chunks)
{
    switch (a) {
    case STRATA_ALGO_RING:
        cost_ring(m, c, n, z, chunks);
        break;
    case STRATA_ALGO_TREE:
        cost_tree(m, n, chunk, z, chunks);
        break;
    case STRATA_ALGO_BINOMIAL:
        cost_binomial(m, c, n, z);
        break;
    case STRATA_ALGO_RECDBL:
        cost_recdbl(m, c, n, z);
        break;
    case STRATA_ALGO_RABENSEIFNER:
        cost_rabenseifner(m, c, n, z);
        break;
    case STRATA_ALGO_BRUCK:
        cost_bruck(m, c, n, z);
        break;
    case STRATA_ALGO_PAIRWISE:
        cost_pairwise(m, c, n, z);
        break;
    case STRATA_ALGO_HIER:
        if (c == STRATA_COLL_ALLREDUCE)
            cost_twolevel(m, m->per_server, n, z, chunks);
        else
            cost_hier_other(m, c, n, z, chunks);
        break;
    case STRATA_ALGO_TORUS2D:
        cost_twolevel(m, torus_rows(m), n, z, chunks);
        break;
    case STRATA_ALGO_INNET:
        cost_innet(m, n, z, chunks);
        break;
    case STRATA_ALGO_NVLSTREE:
        cost_nvlstree(m, n, z, chunks);
        break;
    case STRATA_ALGO_DIRECT:
        cost_direct(m, c, n, z);
        *chunks = m->registered && c == STRATA_COLL_ALLREDUCE && n > STRATA_DIRECT_FLAT_MAX
                      ? 1
                      : fmin(sched_direct_chunks(c, m->nranks, n, direct_shared(m)),
                             4294967295.0); /* uint32 */
        break;
    default:
        break;
    }
}

/* Ranks beyond the cores (m->cores > 0): the ranks sharing a core run in
 * turn, so its data work takes ceil(P / cores) times as long, and every
 * synchronisation that waits idle (z->waits, else every step) waits for the
 * scheduler to run each rank beyond the cores (lat_oversub each). */
static void oversubscribe(const strata_coll_machine_t *m, acc_t *z)
{
    if (m->cores == 0 || m->nranks <= m->cores) return;
    double k = ceil((double)m->nranks / m->cores);
    z->bi *= k, z->be *= k, z->g *= k;
    z->a += (z->waits > 0 ? z->waits : z->steps) * (m->nranks - m->cores) * m->lat_oversub;
}

strata_status_t strata_coll_cost(const strata_coll_machine_t *m, strata_coll_t coll,
                                 strata_algo_t algo, double bytes, strata_coll_cost_t *c_p,
                                 strata_error_t *err)
{
    return sched_coll_cost_chunk(m, coll, algo, bytes, 0, c_p, err);
}

strata_status_t sched_coll_cost_chunk(const strata_coll_machine_t *m, strata_coll_t coll,
                                      strata_algo_t algo, double bytes, double chunk,
                                      strata_coll_cost_t *c_p, strata_error_t *err)
{
    if (!m || m->nranks < 1 || !(bytes >= 0) || !isfinite(bytes))
        return strata_error_set(err, STRATA_ERR_INVALID, "cost: bad machine or size");
    strata_status_t st = applies(m, coll, algo, err);
    if (st) return st;
    acc_t z = {0};
    double chunks = 0; /* 0: the algorithm chooses */
    if (m->nranks > 1)
        dispatch(m, coll, algo, coll == STRATA_COLL_BARRIER ? 0 : bytes, chunk, &z, &chunks);
    else if (m->bw_copy > 0 && coll != STRATA_COLL_BARRIER) /* one COPY (core.c) */
        z.bi = bytes / m->bw_copy;
    if (chunks < 1) chunks = 1;
    oversubscribe(m, &z);
    strata_coll_cost_t c = {.coll = coll,
                            .algo = algo,
                            .bytes = bytes,
                            .alpha = z.a,
                            .beta = z.bi + z.be,
                            .gamma = z.g,
                            .steps = z.steps,
                            .chunks = (uint32_t)chunks,
                            .bytes_intra = z.xi,
                            .bytes_inter = z.xe};
    c.time = c.alpha + fmax(c.beta, c.gamma);
    c.algbw = c.time > 0 ? bytes / c.time : 0;
    c.busbw = c.algbw * strata_coll_busbw_factor(coll, m->nranks);
    c.bound = bound_of(&z);
    *c_p = c;
    return STRATA_OK;
}

/* The distance algorithms (recdbl, rabenseifner, binomial) price a step
 * to the rank 2^k away as inside a server whenever 2^k < g; that holds for
 * every rank only when g is a power of two (and the ranks do not fold:
 * P a power of two). Otherwise some partners sit on another server
 * (gb200-nvl72:2, g = 72: r XOR 64 leaves the rack for r = 8..63), and
 * their whole-buffer steps cross the network, a NIC per rank, where the
 * model charged scale-up links. */
const char *strata_coll_model_caveat(const strata_coll_machine_t *m, strata_algo_t algo)
{
    uint32_t g = m->per_server;
    bool pow2 = g > 0 && (g & (g - 1)) == 0 && (m->nranks & (m->nranks - 1)) == 0;
    bool dist = algo == STRATA_ALGO_RECDBL || algo == STRATA_ALGO_RABENSEIFNER ||
                algo == STRATA_ALGO_BINOMIAL;
    if (dist && multi(m) && !pow2)
        return "partners 2^k apart are priced inside a server while 2^k < its ranks; with "
               "ranks per server (or all ranks) not a power of two some are on another "
               "server, and those steps cross the network (a NIC per rank) where the model "
               "charged scale-up links";
    return NULL;
}

const char *strata_coll_algo_form(const strata_coll_machine_t *m, strata_algo_t algo, char *buf,
                                  size_t len)
{
    uint32_t P = m->nranks, g = m->per_server, N = m->servers;
    uint32_t K = (uint32_t)sched_rails(m);
    switch (multi(m) ? (int)algo : -1 - (int)algo) {
    case STRATA_ALGO_TREE:
        if (m->rails > g && m->rails % g == 0) /* tree.c, params rails */
            snprintf(buf, len,
                     "double binary tree over %u servers (NCCL's balanced tree), a chain of %u "
                     "ranks in each, %u channels (2 trees x a NIC each), NCCL's 512 KiB chunks",
                     N, g, 2 * m->rails);
        else
            snprintf(buf, len,
                     "double binary tree over %u servers (NCCL's balanced tree), a chain of %u "
                     "ranks in each, %u channels (2 trees x a head per rank), NCCL's 512 KiB "
                     "chunks",
                     N, g, 2 * g);
        break;
    case -1 - STRATA_ALGO_TREE:
        snprintf(buf, len, "double binary tree flat over %u ranks", P);
        break;
    case STRATA_ALGO_NVLSTREE:
        snprintf(buf, len,
                 "NVLS reduce/multicast in each of %u servers, double binary tree across, "
                 "%u channels",
                 N, g);
        break;
    case STRATA_ALGO_INNET:
        snprintf(buf, len, "NVLS in each of %u servers, SHARP tree across", N);
        break;
    case -1 - STRATA_ALGO_INNET:
        snprintf(buf, len,
                 "NVLS: the switch reads and reduces, owners store, it multicasts; "
                 "n(1+1/%u) per link and direction, plus read requests",
                 P);
        break;
    case STRATA_ALGO_HIER:
        snprintf(buf, len,
                 "ring reduce-scatter in %u-rank servers, ring allreduce across %u, "
                 "ring allgather",
                 g, N);
        break;
    case -1 - STRATA_ALGO_DIRECT:
        snprintf(buf, len,
                 "loads and stores in shared memory: stage, each of %u ranks reduces a slice, "
                 "gather; chunks of %u KiB",
                 P, STRATA_DIRECT_CHUNK / 1024);
        break;
    case STRATA_ALGO_TORUS2D:
    case -1 - STRATA_ALGO_TORUS2D:
        snprintf(buf, len, "rows of %u ranks x columns of %u", torus_rows(m), P / torus_rows(m));
        break;
    case STRATA_ALGO_RING:
        if (m->mesh_rings > 1)
            snprintf(buf, len,
                     "%u channels: %u mesh rings over disjoint links in each server x %u "
                     "rotations, each leaving every server by its own rank (%u NICs)",
                     m->mesh_rings * g, m->mesh_rings, g, K);
        else if (K > g) /* more NICs than ranks: the channels rotate over them (rails.c) */
            snprintf(buf, len,
                     "%u channels of %u ranks, channel c on rail c (%u NICs a server, %u "
                     "channels a rank): in and out at rank c mod %u",
                     K, P, K, K / g, g);
        else if (K >= g)
            snprintf(buf, len,
                     "%u channels of %u ranks, channel c on rail c (%u NICs): in at rank c, "
                     "out from c^1 %s",
                     g, P, K, m->ring_pxn ? "relayed by rank c (PXN)" : "via their PCIe switch");
        else /* fewer NICs than channels: rank c's NIC is shared (rails.c says whose) */
            snprintf(buf, len,
                     "%u channels of %u ranks on %u NICs, channel c on the rail of rank c's NIC "
                     "(%u channels a NIC): in at rank c, out from c^1",
                     g, P, K, (g + K - 1) / K);
        break;
    case -1 - STRATA_ALGO_RING:
        if (m->mesh_rings > 1)
            snprintf(buf, len, "%u rings over disjoint links (both directions), each over %u ranks",
                     m->mesh_rings, P);
        else
            snprintf(buf, len, "flat ring over %u ranks", P);
        break;
    default:
        snprintf(buf, len, "%s over %u ranks", strata_algo_name(algo), P);
        break;
    }
    return buf;
}
