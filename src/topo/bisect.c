/*
 * bisect.c — bisection bandwidth: the closed forms recorded by the builders,
 * exhaustive search over balanced partitions for small graphs, and an upper
 * bound from structural candidate cuts for large ones.
 *
 * Definition (per direction): the minimum over partitions of the endpoints
 * into halves A, B (sizes floor(n/2), ceil(n/2)) of the capacity of a
 * minimum cut separating A from B, where switches, NICs and other
 * non-endpoint devices sit on whichever side makes the cut smallest. For
 * one partition that is a minimum s-t cut, found as a maximum flow
 * (Dinic's algorithm) from a super-source joined to A to a super-sink
 * joined to B; each full-duplex link is an undirected edge of capacity
 * bw_dir. When every device is an endpoint the cut is just the sum of
 * crossing links and no flow is needed.
 *
 * Exhaustive search fixes endpoint 0 on side A when n is even (the cut is
 * symmetric), so it runs C(n-1, n/2-1) cuts: 92,378 for n = 20.
 */
#define _POSIX_C_SOURCE 200809L
#include "topo.h"

#include <math.h>
#include <string.h>

/* ==== Maximum flow (Dinic) ==== */

typedef struct flow {
    int32_t n, m, cap_m;
    int32_t *head, *next, *to;
    double *cap, *cap0;
    int32_t *level, *it, *queue;
} flow_t;

static void flow_free(flow_t *f)
{
    util_free(f->head);
    util_free(f->next);
    util_free(f->to);
    util_free(f->cap);
    util_free(f->cap0);
    util_free(f->level);
    util_free(f->it);
    util_free(f->queue);
    memset(f, 0, sizeof(*f));
}

static int flow_init(flow_t *f, int32_t n, int32_t max_edges)
{
    memset(f, 0, sizeof(*f));
    f->n = n;
    f->cap_m = max_edges;
    f->head = util_malloc((size_t)n * sizeof(int32_t));
    f->level = util_malloc((size_t)n * sizeof(int32_t));
    f->it = util_malloc((size_t)n * sizeof(int32_t));
    f->queue = util_malloc((size_t)n * sizeof(int32_t));
    f->next = util_malloc((size_t)max_edges * sizeof(int32_t));
    f->to = util_malloc((size_t)max_edges * sizeof(int32_t));
    f->cap = util_malloc((size_t)max_edges * sizeof(double));
    f->cap0 = util_malloc((size_t)max_edges * sizeof(double));
    if (!f->head || !f->level || !f->it || !f->queue || !f->next || !f->to || !f->cap || !f->cap0) {
        flow_free(f);
        return -1;
    }
    for (int32_t i = 0; i < n; i++)
        f->head[i] = -1;
    return 0;
}

/* Edge u→v of capacity c and its partner v→u of capacity rc (= c for an
 * undirected link, 0 for a directed one). Returns the edge index. */
static int32_t flow_edge(flow_t *f, int32_t u, int32_t v, double c, double rc)
{
    int32_t e = f->m;
    f->to[e] = v, f->cap0[e] = c, f->next[e] = f->head[u], f->head[u] = e;
    f->to[e + 1] = u, f->cap0[e + 1] = rc, f->next[e + 1] = f->head[v], f->head[v] = e + 1;
    f->m += 2;
    return e;
}

static bool flow_levels(flow_t *f, int32_t s, int32_t t)
{
    for (int32_t i = 0; i < f->n; i++)
        f->level[i] = -1;
    int32_t hd = 0, tl = 0;
    f->level[s] = 0;
    f->queue[tl++] = s;
    while (hd < tl) {
        int32_t u = f->queue[hd++];
        for (int32_t e = f->head[u]; e >= 0; e = f->next[e])
            if (f->cap[e] > 1e-9 && f->level[f->to[e]] < 0) {
                f->level[f->to[e]] = f->level[u] + 1;
                f->queue[tl++] = f->to[e];
            }
    }
    return f->level[t] >= 0;
}

/* Blocking-flow DFS, iterative over an explicit path stack (queue reused
 * as the stack of edges) so deep graphs cannot overflow the C stack. */
static double flow_augment(flow_t *f, int32_t s, int32_t t)
{
    double total = 0;
    int32_t *stack = f->queue, depth = 0, u = s;
    for (;;) {
        if (u == t) {
            double push = INFINITY;
            for (int32_t i = 0; i < depth; i++)
                if (f->cap[stack[i]] < push) push = f->cap[stack[i]];
            for (int32_t i = 0; i < depth; i++) {
                f->cap[stack[i]] -= push;
                f->cap[stack[i] ^ 1] += push;
            }
            total += push;
            depth = 0, u = s;
            continue;
        }
        int32_t e = f->it[u];
        while (e >= 0 && !(f->cap[e] > 1e-9 && f->level[f->to[e]] == f->level[u] + 1))
            e = f->next[e];
        f->it[u] = e;
        if (e >= 0) {
            stack[depth++] = e;
            u = f->to[e];
            continue;
        }
        if (u == s) break;
        f->level[u] = -1; /* dead end: prune */
        u = f->to[stack[--depth] ^ 1];
        f->it[u] = f->next[f->it[u]];
    }
    return total;
}

static double flow_max(flow_t *f, int32_t s, int32_t t)
{
    memcpy(f->cap, f->cap0, (size_t)f->m * sizeof(double));
    double total = 0;
    while (flow_levels(f, s, t)) {
        for (int32_t i = 0; i < f->n; i++)
            f->it[i] = f->head[i];
        total += flow_augment(f, s, t);
    }
    return total;
}

/* ==== Cut of one endpoint partition ==== */

/* The flow network of a whole topology: devices 0..ndev-1, source ndev,
 * sink ndev+1, and a source edge and a sink edge per endpoint whose
 * capacities each partition sets. */
typedef struct cutter {
    const strata_topo_t *t;
    bool direct; /* every device an endpoint: sum crossing links */
    flow_t f;
    int32_t src_e0; /* first source edge; endpoint r uses src_e0 + 4r, sink +2 */
    uint8_t *side;  /* per endpoint rank: 0 = A, 1 = B */
} cutter_t;

static int cutter_init(cutter_t *c, const strata_topo_t *t)
{
    memset(c, 0, sizeof(*c));
    c->t = t;
    c->direct = t->nep == t->ndev;
    c->side = util_calloc((size_t)t->nep, 1);
    if (!c->side) return -1;
    if (c->direct) return 0;
    if (flow_init(&c->f, t->ndev + 2, 2 * t->nlink + 4 * t->nep)) return -1;
    for (int32_t l = 0; l < t->nlink; l++)
        flow_edge(&c->f, t->links[l].a, t->links[l].b, t->links[l].bw_dir, t->links[l].bw_dir);
    c->src_e0 = c->f.m;
    for (int32_t r = 0; r < t->nep; r++) {
        flow_edge(&c->f, t->ndev, t->ep[r], 0, 0);
        flow_edge(&c->f, t->ep[r], t->ndev + 1, 0, 0);
    }
    return 0;
}

static void cutter_free(cutter_t *c)
{
    util_free(c->side);
    flow_free(&c->f);
}

/* Minimum cut separating the endpoints with side 0 from those with side 1. */
static double cutter_cut(cutter_t *c)
{
    const strata_topo_t *t = c->t;
    if (c->direct) {
        double sum = 0;
        for (int32_t l = 0; l < t->nlink; l++)
            if (c->side[t->rank[t->links[l].a]] != c->side[t->rank[t->links[l].b]])
                sum += t->links[l].bw_dir;
        return sum;
    }
    for (int32_t r = 0; r < t->nep; r++) {
        c->f.cap0[c->src_e0 + 4 * r] = c->side[r] ? 0 : INFINITY;
        c->f.cap0[c->src_e0 + 4 * r + 2] = c->side[r] ? INFINITY : 0;
    }
    return flow_max(&c->f, t->ndev, t->ndev + 1);
}

/* ==== Exhaustive ==== */

/* Next k-subset of 0..n-1 in lexicographic order; false after the last. */
static bool next_combination(int32_t *idx, int32_t k, int32_t n)
{
    int32_t i = k - 1;
    while (i >= 0 && idx[i] == n - k + i)
        i--;
    if (i < 0) return false;
    idx[i]++;
    for (int32_t j = i + 1; j < k; j++)
        idx[j] = idx[j - 1] + 1;
    return true;
}

static strata_status_t bisect_exhaustive(const strata_topo_t *t, strata_topo_bisection_t *out,
                                         strata_error_t *err)
{
    int32_t n = t->nep, half = n / 2;
    if (n > STRATA_BISECT_EXHAUSTIVE_MAX)
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "exhaustive bisection covers at most %d endpoints, not %d",
                                STRATA_BISECT_EXHAUSTIVE_MAX, (int)n);
    cutter_t c;
    if (cutter_init(&c, t)) {
        cutter_free(&c);
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory for bisection");
    }
    /* Even n: endpoint 0 always in A, choose the other half-1 of A among
     * 1..n-1. Odd n: A of size floor(n/2) among all. */
    bool fix0 = n % 2 == 0 && half > 0;
    int32_t k = fix0 ? half - 1 : half, pool = fix0 ? n - 1 : n, idx[STRATA_BISECT_EXHAUSTIVE_MAX];
    for (int32_t i = 0; i < k; i++)
        idx[i] = i;
    double best = INFINITY;
    long cuts = 0;
    do {
        memset(c.side, 1, (size_t)n);
        if (fix0) c.side[0] = 0;
        for (int32_t i = 0; i < k; i++)
            c.side[idx[i] + (fix0 ? 1 : 0)] = 0;
        double cut = cutter_cut(&c);
        if (cut < best) best = cut;
        cuts++;
    } while (k > 0 && next_combination(idx, k, pool));
    cutter_free(&c);
    out->bw = half == 0 ? 0 : best;
    out->exact = true;
    out->method = STRATA_BISECT_EXHAUSTIVE;
    snprintf(out->how, sizeof(out->how), "exhaustive: min cut over all %ld balanced partitions",
             cuts);
    return STRATA_OK;
}

/* ==== Upper bound for large graphs ==== */

/* Candidate partitions that follow the structure builders and importers
 * give the ranks: the first half of ranks (servers, pods, the slowest grid
 * dimension), even/odd ranks, and a halving of the fastest grid dimension.
 * Each one's exact min cut bounds the bisection from above. */
static strata_status_t bisect_bound(const strata_topo_t *t, strata_topo_bisection_t *out,
                                    strata_error_t *err)
{
    int32_t n = t->nep;
    cutter_t c;
    if (cutter_init(&c, t)) {
        cutter_free(&c);
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory for bisection");
    }
    int32_t d0 = t->shape.kind == TOPO_SHAPE_GRID ? t->shape.dims[0] : 0;
    double best = INFINITY;
    int ncand = 0;
    for (int cand = 0; cand < 3; cand++) {
        if (cand == 2 && !(d0 >= 2 && d0 % 2 == 0)) continue;
        for (int32_t r = 0; r < n; r++) {
            uint8_t s = cand == 0 ? r >= n / 2 : cand == 1 ? (r & 1) : (r % d0) >= d0 / 2;
            c.side[r] = s;
        }
        double cut = cutter_cut(&c);
        if (cut < best) best = cut;
        ncand++;
    }
    cutter_free(&c);
    out->bw = n < 2 ? 0 : best;
    out->exact = false;
    out->method = STRATA_BISECT_BOUND;
    snprintf(out->how, sizeof(out->how),
             "upper bound: best of %d structural cuts (rank halves, even/odd%s), each an exact "
             "min s-t cut (Dinic max-flow)",
             ncand, ncand > 2 ? ", fastest dimension" : "");
    return STRATA_OK;
}

/* ==== Clusters: closed form from the server's own wiring ==== */

/* Max flow from the accelerators of server 0 (each fed at most src_cap)
 * to everything outside it, through its links leaving the group, each
 * capped at out_cap on top of its bandwidth. Server 0's devices come
 * first (the builders and cluster_build.c create servers in order). */
static strata_status_t server_flow(const strata_topo_t *t, double src_cap, double out_cap,
                                   double *flow_p, strata_error_t *err)
{
    flow_t f;
    if (flow_init(&f, t->ndev + 2, 2 * t->nlink + 2 * t->nep)) {
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory for server egress");
    }
    int32_t S = t->ndev, T = t->ndev + 1;
    for (int32_t l = 0; l < t->nlink; l++) {
        int32_t a = t->links[l].a, b = t->links[l].b;
        bool ia = t->group[a] == 0, ib = t->group[b] == 0;
        double bw = t->links[l].bw_dir, out = bw < out_cap ? bw : out_cap;
        if (ia && ib)
            flow_edge(&f, a, b, bw, bw);
        else if (ia)
            flow_edge(&f, a, T, out, 0);
        else if (ib)
            flow_edge(&f, b, T, out, 0);
    }
    for (int32_t v = 0; v < t->ndev && t->group[v] == 0; v++)
        if (t->kind[v] == STRATA_DEV_ACCEL) flow_edge(&f, S, v, src_cap, 0);
    *flow_p = flow_max(&f, S, T);
    flow_free(&f);
    return STRATA_OK;
}

/* Closed form for S identical servers of G accelerators on a complete
 * tree (S even) whose NIC up-links get `a` = shape.att_share each:
 *   bisection = (S/2)·m,  m = min(E, N),
 * E = the server's egress (max-flow from its accelerators out of it), N =
 * nup·a its network share (nup links leave it). Upper bound: the cut
 * around half the servers costs (S/2)·E, the network's cut between the
 * two halves of the servers (S/2)·N. Lower bound, which needs the check:
 * if every accelerator can send m/G at once with at most `a` through
 * each NIC (a max-flow, below), then in any balanced partition the n/2
 * accelerators of one side send m/G each and the other side's receive as
 * much — each server's in and out parts are sub-flows of that pattern,
 * and the complete tree carries any traffic of at most `a` in and out of
 * each NIC — so every cut is at least (n/2)·(m/G) = (S/2)·m. A server that
 * cannot spread its egress evenly (a weak in-server fabric that makes
 * splitting servers the cheaper cut) fails the check and gets no closed
 * form: exhaustive search or the bound answer instead. */
static strata_status_t cluster_closed(strata_topo_t *t, int32_t servers, strata_error_t *err)
{
    double egress = 0, spread = 0, a = t->shape.att_share;
    int32_t nup = 0, G = 0;
    for (int32_t l = 0; l < t->nlink; l++)
        nup += (t->group[t->links[l].a] == 0) != (t->group[t->links[l].b] == 0);
    for (int32_t v = 0; v < t->ndev && t->group[v] == 0; v++)
        G += t->kind[v] == STRATA_DEV_ACCEL;
    strata_status_t st = server_flow(t, INFINITY, INFINITY, &egress, err);
    double net = nup * a, m = egress < net ? egress : net;
    if (!st && G > 0) st = server_flow(t, m / G, a, &spread, err);
    if (st || G == 0 || !(spread >= m * (1 - 1e-9))) return st;
    topo_shape_set_closed(&t->shape, m * (servers / 2),
                          "cluster: half the servers (%d) x min(server egress %.4g, network share "
                          "%.4g) GB/s",
                          (int)(servers / 2), egress / 1e9, net / 1e9);
    return STRATA_OK;
}

strata_status_t topo_cluster_shape(strata_topo_t *t, int32_t servers, strata_error_t *err)
{
    strata_status_t st = STRATA_OK;
    t->shape.has_closed = false;
    if (t->shape.att_share > 0 && servers >= 2 && servers % 2 == 0)
        st = cluster_closed(t, servers, err);
    /* Servers are copies and the fabric maps any server onto any other:
     * endpoints with the same index in their server are equivalent. */
    if (!st && t->shape.servers_symmetric && servers > 0 && t->nep % servers == 0)
        t->shape.sym_classes = t->nep / servers;
    return st;
}

/* ==== Entry point ==== */

strata_status_t strata_topo_bisection(const strata_topo_t *t, strata_bisect_method_t method,
                                      strata_topo_bisection_t *out, strata_error_t *err)
{
    memset(out, 0, sizeof(*out));
    if (!t->finished)
        return strata_error_set(err, STRATA_ERR_INVALID, "topology '%s' is not finished", t->name);
    if (method == STRATA_BISECT_AUTO || method == STRATA_BISECT_CLOSED) {
        if (t->shape.has_closed) {
            out->bw = t->shape.closed_bw;
            out->exact = true;
            out->method = STRATA_BISECT_CLOSED;
            snprintf(out->how, sizeof(out->how), "closed form: %s", t->shape.closed_how);
            return STRATA_OK;
        }
        if (method == STRATA_BISECT_CLOSED)
            return strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                    "no closed-form bisection for '%s'", t->name);
    }
    if (method == STRATA_BISECT_EXHAUSTIVE ||
        (method == STRATA_BISECT_AUTO && t->nep <= STRATA_BISECT_EXHAUSTIVE_MAX))
        return bisect_exhaustive(t, out, err);
    return bisect_bound(t, out, err);
}
