/*
 * build_fattree.c — k-ary fat-trees (folded Clos) of one, two or three
 * switch tiers, and clusters: N copies of a server template joined by such a
 * tree, optionally rail-optimised.
 *
 * A partial tree (fewer endpoints than the radix allows) gets only as many
 * up-links per switch as its fullest switch has down-links, so it stays
 * non-blocking with the fewest switches.
 *
 * Construction follows Al-Fares, Loukissas and Vahdat, "A Scalable,
 * Commodity Data Center Network Architecture", SIGCOMM 2008: switches of k
 * ports, half down and half up; a pod is k/2 leaves and k/2 aggregation
 * switches fully joined; aggregation switch j of every pod reaches cores
 * j·k/2 .. j·k/2 + k/2 - 1. A two-tier tree is one "pod" whose aggregation
 * switches are the spines. Rail-optimised placement (NIC i of every server
 * on a rail-i leaf) follows NVIDIA's DGX SuperPOD reference architecture.
 *
 * Oversubscription r_t at tier t divides the bandwidth of every link above
 * tier t by r_1·…·r_t, so with equal link specs at all tiers a tier-t switch
 * has exactly r_t : 1 down:up capacity while the ECMP structure (the number
 * of up-links) stays that of the full tree.
 *
 * Workload: the 16,384-GPU rail-optimised tree (2,048 servers) builds in a
 * few milliseconds (bench/topo).
 */
#define _POSIX_C_SOURCE 200809L
#include "topo.h"

#include <math.h>
#include <string.h>

/* The network half: switches above n_att attachment devices att[i], each
 * placed on leaf att_leaf[i] (leaves numbered 0..L-1). */
typedef struct net_plan {
    const strata_topo_fattree_t *ft;
    const int32_t *att;
    const int32_t *att_leaf;
    int32_t n_att;
    int32_t leaves;
    int32_t u1, u2;                 /* up-links per leaf / per aggregation switch */
    strata_topo_linkspec_t spec[3]; /* effective specs per tier, oversub applied */
} net_plan_t;

static strata_status_t check_ft(const strata_topo_fattree_t *ft, strata_error_t *err)
{
    if (ft->tiers < 1 || ft->tiers > 3)
        return strata_error_set(err, STRATA_ERR_INVALID, "fat-tree: %d tiers (1 to 3 allowed)",
                                (int)ft->tiers);
    if (ft->k < 2 || ft->k % 2 || ft->k > 1024)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "fat-tree: radix k=%d must be even, 2 to 1024", (int)ft->k);
    for (int t = 0; t < STRATA_TOPO_TIERS_MAX; t++)
        if (ft->oversub[t] < 0 || !isfinite(ft->oversub[t]))
            return strata_error_set(err, STRATA_ERR_INVALID,
                                    "fat-tree: oversubscription %g at tier %d", ft->oversub[t], t);
    /* a ratio applies to the up-links of tiers 1 .. tiers-1; one beyond
     * would be silently dropped (oversub=1:1:7 on 3 tiers) */
    for (int t = ft->tiers; t < STRATA_TOPO_TIERS_MAX; t++)
        if (ft->oversub[t] > 1)
            return strata_error_set(err, STRATA_ERR_INVALID,
                                    "fat-tree: oversubscription %g at tier %d, but a %d-tier tree "
                                    "has up-links at tiers 1..%d only",
                                    ft->oversub[t], t, (int)ft->tiers, (int)ft->tiers - 1);
    return STRATA_OK;
}

double topo_fattree_capacity(int32_t k, int32_t tiers)
{
    double kk = k;
    return tiers <= 1 ? kk : tiers == 2 ? kk * kk / 2 : kk * kk * kk / 4;
}

/* Per-tier effective link specs: spec[t] joins tier t to tier t+1; the
 * cumulative oversubscription of tiers 1..t divides its bandwidth. The
 * catalog figure is resolved here so the division applies to it. */
static strata_status_t plan_specs(const strata_topo_t *t, net_plan_t *p,
                                  const strata_topo_linkspec_t *base, strata_error_t *err)
{
    double div = 1;
    for (int i = 0; i < p->ft->tiers; i++) {
        const strata_topo_linkspec_t *s = i == 0 ? base : p->ft->link[i] ? p->ft->link[i] : base;
        const char *kind;
        int32_t mult;
        double bw, lat;
        strata_status_t st = topo_spec_resolve(t, s, &kind, &mult, &bw, &lat, err);
        if (st) return st;
        if (i > 0) div *= p->ft->oversub[i] > 0 ? p->ft->oversub[i] : 1;
        p->spec[i] = (strata_topo_linkspec_t){s->kind, mult, bw / div, lat};
    }
    return STRATA_OK;
}

static strata_status_t add_switches(strata_topo_t *t, int32_t n, int32_t tier, const char *what,
                                    int32_t *first_p, strata_error_t *err)
{
    *first_p = t->ndev;
    strata_status_t st = topo_reserve_devices(t, t->ndev + n, err);
    for (int32_t i = 0; i < n && !st; i++) {
        char name[32];
        snprintf(name, sizeof(name), "%s%d", what, (int)i);
        st = strata_topo_add_device(t, STRATA_DEV_NET_SWITCH, tier, -1, name, NULL, err);
    }
    return st;
}

/* Switch counts for the tree. A full tree has k/2 up-links per leaf and
 * per aggregation switch; a partial one gets only as many as its fullest
 * switch has down-links (u1 per leaf: spines or aggregation switches per
 * pod; u2 per aggregation switch: leaves per pod), so it stays
 * non-blocking with the fewest switches. Errors when the radix cannot
 * hold the tree. */
static strata_status_t net_sizes(net_plan_t *p, const int32_t *per_leaf, int32_t *aggs_p,
                                 int32_t *cores_p, strata_error_t *err)
{
    int32_t k = p->ft->k, h = k / 2, L = p->leaves, pods;
    *aggs_p = 0, *cores_p = 0;
    p->u1 = 0;
    for (int32_t l = 0; l < L; l++)
        if (per_leaf[l] > p->u1) p->u1 = per_leaf[l];
    p->u2 = L < h ? L : h;
    if (p->ft->tiers == 1) {
        if (p->n_att > k)
            return strata_error_set(err, STRATA_ERR_RANGE,
                                    "fat-tree: %d endpoints exceed one switch of %d ports",
                                    (int)p->n_att, (int)k);
        return STRATA_OK;
    }
    if (p->ft->tiers == 2) {
        if (L > k)
            return strata_error_set(err, STRATA_ERR_RANGE,
                                    "fat-tree: %d leaves exceed %d-port spines (use 3 tiers)",
                                    (int)L, (int)k);
        *aggs_p = p->u1;
        return STRATA_OK;
    }
    pods = (L + h - 1) / h;
    if (pods > k)
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "fat-tree: %d pods exceed %d-port cores (at most k^3/4 endpoints)",
                                (int)pods, (int)k);
    *aggs_p = pods * p->u1;
    *cores_p = p->u1 * p->u2;
    return STRATA_OK;
}

static strata_status_t build_net(strata_topo_t *t, net_plan_t *p, const int32_t *per_leaf,
                                 strata_error_t *err)
{
    int32_t h = p->ft->k / 2, aggs = 0, cores = 0, leaf0 = 0, agg0 = 0, core0 = 0;
    strata_status_t st = net_sizes(p, per_leaf, &aggs, &cores, err);
    int32_t u1 = p->u1, u2 = p->u2;
    if (!st) st = add_switches(t, p->leaves, 1, "leaf", &leaf0, err);
    if (!st && aggs) st = add_switches(t, aggs, 2, p->ft->tiers == 2 ? "spine" : "agg", &agg0, err);
    if (!st && cores) st = add_switches(t, cores, 3, "core", &core0, err);
    size_t nl = (size_t)p->n_att + (size_t)p->leaves * u1 + (size_t)aggs * u2;
    if (!st) st = topo_reserve_links(t, t->nlink + (int32_t)nl, err);
    for (int32_t i = 0; i < p->n_att && !st; i++)
        st = strata_topo_add_link(t, p->att[i], leaf0 + p->att_leaf[i], &p->spec[0], NULL, err);
    for (int32_t l = 0; l < p->leaves && !st && aggs; l++) {
        int32_t pod = p->ft->tiers == 3 ? l / h : 0;
        for (int32_t j = 0; j < u1 && !st; j++)
            st = strata_topo_add_link(t, leaf0 + l, agg0 + pod * u1 + j, &p->spec[1], NULL, err);
    }
    for (int32_t a = 0; a < aggs && cores && !st; a++)
        for (int32_t c = 0; c < u2 && !st; c++)
            st = strata_topo_add_link(t, agg0 + a, core0 + (a % u1) * u2 + c, &p->spec[2], NULL,
                                      err);
    return st;
}

/* A tree is uniform when every leaf holds the same number of endpoints,
 * every pod the same number of leaves, and the top level splits evenly:
 * then the bisection closed form holds. */
static bool net_complete(const net_plan_t *p, const int32_t *per_leaf)
{
    for (int32_t l = 0; l < p->leaves; l++)
        if (per_leaf[l] != per_leaf[0]) return false;
    if (p->ft->tiers == 1) return true;
    if (p->ft->tiers == 2) return p->leaves % 2 == 0;
    return p->leaves % p->u2 == 0 && (p->leaves / p->u2) % 2 == 0;
}

/* Per-attachment capacity through each tier of a complete tree: the cut
 * separating half the pods (or leaves) crosses (n/2)·min over tiers of the
 * per-attachment share. Returns that share (B/s per attachment). */
static double net_share(const net_plan_t *p)
{
    double m = p->spec[0].bw_dir * p->spec[0].mult;
    for (int i = 1; i < p->ft->tiers; i++) {
        double b = p->spec[i].bw_dir * p->spec[i].mult; /* k/2 up per k/2 down */
        if (b < m) m = b;
    }
    return m;
}

static strata_status_t plan_leaf_counts(net_plan_t *p, int32_t **per_leaf_p, strata_error_t *err)
{
    int32_t *c = util_calloc((size_t)p->leaves, sizeof(int32_t));
    if (!c) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory planning leaves");
    for (int32_t i = 0; i < p->n_att; i++)
        c[p->att_leaf[i]]++;
    *per_leaf_p = c;
    return STRATA_OK;
}

/* ==== Plain fat-tree ==== */

strata_status_t strata_topo_build_fattree(const strata_topo_fattree_t *ft,
                                          const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                          strata_error_t *err)
{
    strata_status_t st = check_ft(ft, err);
    if (st) return st;
    int32_t k = ft->k, h = k / 2;
    int64_t full = ft->tiers == 1 ? k : ft->tiers == 2 ? (int64_t)k * h : (int64_t)k * h * h;
    int64_t n = ft->endpoints ? ft->endpoints : full;
    if (n < 1 || n > full)
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "fat-tree: %lld endpoints (1 to %lld for k=%d, %d tiers)",
                                (long long)n, (long long)full, (int)k, (int)ft->tiers);
    if (!ft->link[0]) return strata_error_set(err, STRATA_ERR_INVALID, "fat-tree: no link spec");
    char name[96];
    snprintf(name, sizeof(name), "fattree:k=%d,tiers=%d,n=%lld", (int)k, (int)ft->tiers,
             (long long)n);
    strata_topo_t *t;
    if ((st = strata_topo_create(name, cat, &t, err))) return st;
    int32_t *att = util_malloc((size_t)n * sizeof(int32_t));
    int32_t *leaf = util_malloc((size_t)n * sizeof(int32_t));
    int32_t *per_leaf = NULL;
    net_plan_t p = {.ft = ft, .att = att, .att_leaf = leaf, .n_att = (int32_t)n};
    p.leaves = ft->tiers == 1 ? 1 : (int32_t)((n + h - 1) / h);
    if (!att || !leaf) st = strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    if (!st) st = plan_specs(t, &p, ft->link[0], err);
    if (!st) st = topo_reserve_devices(t, (int32_t)n, err);
    for (int32_t i = 0; i < n && !st; i++) {
        char nm[32];
        snprintf(nm, sizeof(nm), "gpu%d", (int)i);
        att[i] = i;
        leaf[i] = ft->tiers == 1 ? 0 : i / h;
        st = strata_topo_add_device(t, STRATA_DEV_ACCEL, 0, -1, nm, NULL, err);
    }
    if (!st) st = plan_leaf_counts(&p, &per_leaf, err);
    if (!st) st = build_net(t, &p, per_leaf, err);
    t->shape.kind = TOPO_SHAPE_TIERED;
    if (!st && net_complete(&p, per_leaf)) {
        double share = net_share(&p);
        t->shape.sym_classes = 1;
        topo_shape_set_closed(&t->shape, (double)(n / 2) * share,
                              "fat-tree: half the %s, %lld endpoints x %.4g GB/s (min over tiers)",
                              ft->tiers == 3 ? "pods" : "leaves", (long long)(n / 2), share / 1e9);
    }
    util_free(att);
    util_free(leaf);
    util_free(per_leaf);
    if (!st) st = strata_topo_finish(t, err);
    if (st) {
        strata_topo_destroy(t);
        return st;
    }
    *topo_p = t;
    return STRATA_OK;
}

/* ==== Clusters of servers ==== */

static strata_status_t check_server(const strata_topo_server_t *s, int32_t servers,
                                    strata_error_t *err)
{
    const char *n = s->name ? s->name : "server";
    if (s->accels < 1 || s->accels > 4096)
        return strata_error_set(err, STRATA_ERR_INVALID, "%s: %d accelerators per server", n,
                                (int)s->accels);
    if (s->nics < 0 || (s->nics > 0 && s->accels % s->nics && s->nics % s->accels))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "%s: %d NICs do not divide %d accelerators", n, (int)s->nics,
                                (int)s->accels);
    if (s->nics > 0 && s->nics > s->accels)
        return strata_error_set(err, STRATA_ERR_INVALID, "%s: more NICs (%d) than accelerators", n,
                                (int)s->nics);
    if (s->scaleup_switches < 0 || s->pcie_switches < 0 || s->cpus < 0)
        return strata_error_set(err, STRATA_ERR_INVALID, "%s: negative device count", n);
    if (servers < 1 || servers > 1 << 20)
        return strata_error_set(err, STRATA_ERR_INVALID, "%d servers (1 to 2^20)", (int)servers);
    return STRATA_OK;
}

static bool spec_set(const strata_topo_linkspec_t *s)
{
    return s->kind || s->bw_dir > 0;
}

/* Devices of one server, in a fixed order: accelerators, scale-up
 * switches, NICs, PCIe switches, CPUs; the accelerators carry the
 * server's memory when it names one. */
static strata_status_t add_server_devices(strata_topo_t *t, const strata_topo_server_t *s,
                                          int32_t g, strata_error_t *err)
{
    strata_status_t st = STRATA_OK;
    struct {
        strata_dev_kind_t kind;
        int32_t n;
    } parts[] = {
        {STRATA_DEV_ACCEL, s->accels}, {STRATA_DEV_SCALEUP_SWITCH, s->scaleup_switches},
        {STRATA_DEV_NIC, s->nics},     {STRATA_DEV_PCIE_SWITCH, s->pcie_switches},
        {STRATA_DEV_CPU, s->cpus},
    };
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && !st; i++)
        for (int32_t j = 0; j < parts[i].n && !st; j++) {
            int32_t id;
            st = strata_topo_add_device(t, parts[i].kind, 0, g, NULL, &id, err);
            if (!st && s->memory && parts[i].kind == STRATA_DEV_ACCEL)
                st = strata_topo_set_memory(t, id, s->memory, err);
        }
    return st;
}

/* Wiring inside one server whose devices start at id b. */
static strata_status_t wire_server(strata_topo_t *t, const strata_topo_server_t *s, int32_t b,
                                   strata_error_t *err)
{
    int32_t A = s->accels, U = s->scaleup_switches, N = s->nics, P = s->pcie_switches;
    int32_t sw = b + A, nic = sw + U, pci = nic + N, cpu = pci + P;
    strata_status_t st = STRATA_OK;
    for (int32_t a = 0; a < A && !st; a++)
        for (int32_t u = 0; u < U && !st; u++)
            st = strata_topo_add_link(t, b + a, sw + u, &s->scaleup, NULL, err);
    if (U == 0 && spec_set(&s->scaleup))
        for (int32_t a = 0; a < A && !st; a++)
            for (int32_t c = a + 1; c < A && !st; c++)
                st = strata_topo_add_link(t, b + a, b + c, &s->scaleup, NULL, err);
    if (P == 0) {
        for (int32_t a = 0; a < A && N && !st; a++) {
            st = strata_topo_add_link(t, b + a, nic + (int32_t)((int64_t)a * N / A), &s->pcie, NULL,
                                      err);
            if (!st) st = strata_topo_set_nic(t, b + a, nic + (int32_t)((int64_t)a * N / A), err);
        }
        return st;
    }
    for (int32_t a = 0; a < A && !st; a++)
        st = strata_topo_add_link(t, b + a, pci + (int32_t)((int64_t)a * P / A), &s->pcie, NULL,
                                  err);
    for (int32_t i = 0; i < N && !st; i++)
        st = strata_topo_add_link(t, nic + i, pci + (int32_t)((int64_t)i * P / N), &s->pcie, NULL,
                                  err);
    for (int32_t i = 0; i < P && s->cpus && !st; i++)
        st = strata_topo_add_link(t, pci + i, cpu + (int32_t)((int64_t)i * s->cpus / P), &s->pcie,
                                  NULL, err);
    for (int32_t a = 0; a < A && N && !st; a++)
        st = strata_topo_set_nic(t, b + a, nic + (int32_t)((int64_t)a * N / A), err);
    return st;
}

/* Leaf of NIC i of server s. Rail-optimised: leaf (block, rail) with
 * blocks of k/2 servers, leaves numbered block-major. Otherwise NICs fill
 * leaves in server order. */
static int32_t nic_leaf(int32_t s, int32_t i, int32_t nics, int32_t h, bool rail)
{
    if (rail) return (s / h) * nics + i;
    return (int32_t)(((int64_t)s * nics + i) / h);
}

/* Whether the fabric's automorphisms map any server onto any other, NIC i
 * onto NIC i: rails when pods hold whole blocks of k/2 servers (blocks
 * are alike, servers in a block too); a plain tree when no server
 * straddles two leaves (nics divides k/2) or, when a server fills
 * several whole leaves, no server straddles two pods. */
static bool servers_interchangeable(const strata_topo_fattree_t *net, int32_t nics, int32_t u2,
                                    bool rail)
{
    int32_t h = net->k / 2;
    if (net->tiers == 1) return true;
    if (rail) return net->tiers < 3 || u2 % nics == 0;
    if (h % nics == 0) return true;
    return nics % h == 0 && (net->tiers < 3 || u2 % (nics / h) == 0);
}

/* Whether the tree's half-cut (half the leaves, or half the pods) is a
 * cut around half the servers, so it bounds the server-halves partition
 * by (S/2)·nics·share. Plain trees: NICs fill leaves in server order and
 * half the leaves (pods) of a complete tree hold exactly half the NICs.
 * Rails: half the leaves are half the blocks of k/2 servers when the
 * block count is even (2 tiers), and a pod holds whole blocks when nics
 * divides u2 (3 tiers; a complete tree has an even pod count). A single
 * block is not split that way: each rail leaf holds NICs of both halves,
 * and only the NIC links themselves cut it. */
static bool halves_cut(const strata_topo_fattree_t *net, const net_plan_t *p, int32_t nics,
                       bool rail)
{
    if (!rail || net->tiers == 1) return true;
    if (net->tiers == 2) return (p->leaves / nics) % 2 == 0;
    return p->u2 % nics == 0;
}

static strata_status_t cluster_net(strata_topo_t *t, const strata_topo_server_t *sv,
                                   int32_t servers, int32_t per, const strata_topo_fattree_t *net,
                                   bool rail, strata_error_t *err)
{
    int32_t N = sv->nics, h = net->k / 2, n = servers * N;
    int32_t *att = util_malloc((size_t)n * sizeof(int32_t));
    int32_t *leaf = util_malloc((size_t)n * sizeof(int32_t));
    int32_t *per_leaf = NULL;
    net_plan_t p = {.ft = net, .att = att, .att_leaf = leaf, .n_att = n};
    strata_status_t st = STRATA_OK;
    if (!att || !leaf) st = strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    for (int32_t s = 0; s < servers && !st; s++)
        for (int32_t i = 0; i < N; i++) {
            att[s * N + i] = s * per + sv->accels + sv->scaleup_switches + i;
            leaf[s * N + i] = net->tiers == 1 ? 0 : nic_leaf(s, i, N, h, rail);
            if (leaf[s * N + i] + 1 > p.leaves) p.leaves = leaf[s * N + i] + 1;
        }
    if (!st) st = plan_specs(t, &p, &sv->nic_net, err);
    if (!st) st = plan_leaf_counts(&p, &per_leaf, err);
    if (!st) st = build_net(t, &p, per_leaf, err);
    bool uniform = !st && net_complete(&p, per_leaf);
    double share = uniform ? net_share(&p) : 0, nic_bw = p.spec[0].bw_dir * p.spec[0].mult;
    if (uniform && servers % 2 == 0 && (halves_cut(net, &p, N, rail) || share >= nic_bw))
        t->shape.att_share = share; /* per NIC; bisect.c adds the servers */
    t->shape.servers_symmetric = uniform && servers_interchangeable(net, N, p.u2, rail);
    util_free(att);
    util_free(leaf);
    util_free(per_leaf);
    return st;
}

static int32_t server_size(const strata_topo_server_t *s)
{
    return s->accels + s->scaleup_switches + s->nics + s->pcie_switches + s->cpus;
}

strata_status_t strata_topo_build_cluster(const strata_topo_server_t *sv, int32_t servers,
                                          const strata_topo_fattree_t *net, bool rail,
                                          const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                          strata_error_t *err)
{
    strata_status_t st = check_server(sv, servers, err);
    bool has_net = net && net->tiers > 0;
    if (!st && has_net) st = check_ft(net, err);
    if (st) return st;
    if (!has_net && servers > 1)
        return strata_error_set(err, STRATA_ERR_INVALID, "%d servers need a network", (int)servers);
    /* Before allocating: a fabric the radix cannot hold (railft with 2^20
     * servers used to build 3 GB of servers before net_sizes refused). */
    if (has_net && (double)servers * sv->nics > topo_fattree_capacity(net->k, net->tiers))
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "fat-tree: %.0f NICs exceed what %d-port switches join in %d "
                                "tier(s) (%.0f)",
                                (double)servers * sv->nics, (int)net->k, (int)net->tiers,
                                topo_fattree_capacity(net->k, net->tiers));
    if (has_net && (sv->nics == 0 || !spec_set(&sv->nic_net)))
        return strata_error_set(err, STRATA_ERR_INVALID, "%s: a network needs NICs and a NIC link",
                                sv->name ? sv->name : "server");
    char name[128];
    snprintf(name, sizeof(name), "%s:%d%s", sv->name ? sv->name : "server", (int)servers,
             has_net && rail ? ",rail" : "");
    strata_topo_t *t;
    if ((st = strata_topo_create(name, cat, &t, err))) return st;
    int32_t per = server_size(sv);
    if ((int64_t)per * servers > 1 << 26)
        st = strata_error_set(err, STRATA_ERR_RANGE, "cluster too large");
    if (!st) st = topo_reserve_devices(t, per * servers, err);
    for (int32_t s = 0; s < servers && !st; s++)
        st = add_server_devices(t, sv, s, err);
    for (int32_t s = 0; s < servers && !st; s++)
        st = wire_server(t, sv, s * per, err);
    t->shape.kind = TOPO_SHAPE_TIERED;
    if (!st && has_net) st = cluster_net(t, sv, servers, per, net, rail, err);
    if (!st) st = strata_topo_finish(t, err);
    if (!st) st = topo_cluster_shape(t, servers, err);
    if (st) {
        strata_topo_destroy(t);
        return st;
    }
    *topo_p = t;
    return STRATA_OK;
}
