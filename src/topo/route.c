/*
 * route.c — routers: equal-cost path sets between devices, their count, the
 * k-th path and hash-picked paths, as lists of directed channels.
 *
 * Three methods, chosen by the topology's shape (strata/topo.h, "Which
 * paths"):
 *  - grids: dimension-order routing computed from coordinates, O(hops);
 *  - tiered networks: a path is split into segments — inside the source
 *    server to its NIC, up/down through the switch tiers, inside the
 *    destination server from its NIC. Up/down climbs one tier per hop from
 *    both ends, level by level, until the two ancestor sets meet at the
 *    lowest common tier; path counts are carried per ancestor, so counting
 *    costs O(ancestors visited) — about 2·(k/2 + 1) nodes between pods of
 *    a k-ary fat-tree below the core, ~(k/2)² at the core;
 *  - P2P off (strata_topo_set_p2p): accelerators of one server meet in the
 *    host memory the sender stages through — shortest paths to it, then
 *    from it to the receiver (two BFS segments);
 *  - otherwise (and as the fallback when the structure does not apply):
 *    breadth-first search with shortest-path counting; the k-th path is read
 *    back from the destination by choosing predecessors by cumulative count.
 *
 * A router owns O(devices) scratch reused across queries with stamps (no
 * clearing), so it is not thread-safe; one per thread. Workload: millions of
 * queries from the simulator on 100k-GPU clusters.
 */
#define _POSIX_C_SOURCE 200809L
#include "topo.h"

#include <math.h>
#include <string.h>

typedef enum { SEG_BFS, SEG_UPDOWN, SEG_GRID } seg_kind_t;

/* One segment of a route from..to; group >= 0 confines BFS to a server,
 * -1 means the whole graph; scaleup confines it further to accelerators
 * and scale-up switches (NVLink before PCIe, as NCCL chooses). */
typedef struct seg {
    seg_kind_t kind;
    int32_t from, to, group;
    bool scaleup;
    double count;
    int32_t hops;
} seg_t;

typedef struct plan {
    int nseg;
    seg_t seg[3];
} plan_t;

struct strata_topo_router {
    const strata_topo_t *t;
    uint32_t cur;          /* stamp of the current up/down search */
    uint32_t cur_c;        /* stamp of the current BFS search */
    uint32_t *st_a, *st_b; /* stamps: visited from side a / side b */
    double *cnt_a, *cnt_b; /* path counts */
    uint32_t *st_c;        /* stamps of BFS segments (own scratch, so the
                            * up/down state survives them) */
    double *cnt_c;
    int32_t *dist, *queue;          /* BFS distance (valid where st_c == cur) */
    int32_t *lay_a, *lay_b, *lay_n; /* BFS queue / up-down layers */
    int32_t *path;                  /* assembled path */
    int32_t na;                     /* size of lay_a after ud_count (top layer of A) */
    bool probe;                     /* ud_count met across A's last hop (probe_up) */
    /* The last pair's plan: callers ask about one pair several times in a
     * row (its hop count, path count, then each path: the simulator's
     * routes), and a plan costs an up/down search. Valid while no other
     * up/down search ran (memo_cur == cur: its stamps, layers and counts,
     * which extraction reads, are still those of this plan). */
    int32_t memo_src, memo_dst;
    uint32_t memo_cur;
    bool memo_p2p_off;
    plan_t memo;
};

int32_t topo_bfs(const strata_topo_t *t, int32_t src, int32_t *dist, int32_t *queue)
{
    for (int32_t v = 0; v < t->ndev; v++)
        dist[v] = -1;
    int32_t head = 0, tail = 0;
    dist[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        int32_t u = queue[head++];
        for (int32_t i = t->adj_off[u]; i < t->adj_off[u + 1]; i++) {
            int32_t w = t->adj_nbr[i];
            if (dist[w] < 0) dist[w] = dist[u] + 1, queue[tail++] = w;
        }
    }
    return tail;
}

/* ==== Router lifecycle ==== */

strata_status_t strata_topo_router_create(const strata_topo_t *t, strata_topo_router_t **router_p,
                                          strata_error_t *err)
{
    if (!t->finished)
        return strata_error_set(err, STRATA_ERR_INVALID, "topology '%s' is not finished", t->name);
    strata_topo_router_t *r = util_calloc(1, sizeof(*r));
    size_t n = (size_t)t->ndev + 1;
    if (r) {
        r->t = t;
        r->st_a = util_calloc(n, sizeof(uint32_t));
        r->st_b = util_calloc(n, sizeof(uint32_t));
        r->cnt_a = util_malloc(n * sizeof(double));
        r->cnt_b = util_malloc(n * sizeof(double));
        r->dist = util_malloc(n * sizeof(int32_t));
        r->queue = util_malloc(n * sizeof(int32_t));
        r->st_c = util_calloc(n, sizeof(uint32_t));
        r->cnt_c = util_malloc(n * sizeof(double));
        r->lay_a = util_malloc(n * sizeof(int32_t));
        r->lay_b = util_malloc(n * sizeof(int32_t));
        r->lay_n = util_malloc(n * sizeof(int32_t));
        r->path = util_malloc(n * sizeof(int32_t));
    }
    if (!r || !r->st_a || !r->st_b || !r->cnt_a || !r->cnt_b || !r->dist || !r->queue || !r->st_c ||
        !r->cnt_c || !r->lay_a || !r->lay_b || !r->lay_n || !r->path) {
        strata_topo_router_destroy(r);
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory for a router");
    }
    *router_p = r;
    return STRATA_OK;
}

void strata_topo_router_destroy(strata_topo_router_t *r)
{
    if (!r) return;
    util_free(r->st_a);
    util_free(r->st_b);
    util_free(r->cnt_a);
    util_free(r->cnt_b);
    util_free(r->dist);
    util_free(r->queue);
    util_free(r->st_c);
    util_free(r->cnt_c);
    util_free(r->lay_a);
    util_free(r->lay_b);
    util_free(r->lay_n);
    util_free(r->path);
    util_free(r);
}

static void next_stamp(strata_topo_router_t *r)
{
    if (++r->cur == 0) { /* wrapped: clear once every 2^32 searches */
        memset(r->st_a, 0, (size_t)r->t->ndev * sizeof(uint32_t));
        memset(r->st_b, 0, (size_t)r->t->ndev * sizeof(uint32_t));
        r->cur = 1;
    }
}

static void next_stamp_c(strata_topo_router_t *r)
{
    if (++r->cur_c == 0) {
        memset(r->st_c, 0, (size_t)r->t->ndev * sizeof(uint32_t));
        r->cur_c = 1;
    }
}

/* Channel u→v (u, v adjacent). */
static int32_t chan_of(const strata_topo_t *t, int32_t u, int32_t v)
{
    return t->adj_chan[topo_row_find(t, u, v)];
}

/* ==== BFS segments ==== */

/* Shortest-path DAG from `from`, confined to `group` when >= 0, stopping
 * once the layer of `to` is complete. Returns the hop count or -1. */
static int32_t bfs_count(strata_topo_router_t *r, int32_t from, int32_t to, int32_t group,
                         bool scaleup, double *count_p)
{
    const strata_topo_t *t = r->t;
    next_stamp_c(r);
    int32_t head = 0, tail = 0, found = -1;
    r->st_c[from] = r->cur_c, r->dist[from] = 0, r->cnt_c[from] = 1;
    r->queue[tail++] = from;
    while (head < tail) {
        int32_t u = r->queue[head++];
        if (found >= 0 && r->dist[u] >= found) break;
        for (int32_t i = t->adj_off[u]; i < t->adj_off[u + 1]; i++) {
            int32_t w = t->adj_nbr[i];
            if (group >= 0 && t->group[w] != group) continue;
            if (scaleup && t->kind[w] != STRATA_DEV_ACCEL &&
                t->kind[w] != STRATA_DEV_SCALEUP_SWITCH)
                continue;
            if (r->st_c[w] != r->cur_c) {
                r->st_c[w] = r->cur_c, r->dist[w] = r->dist[u] + 1, r->cnt_c[w] = 0;
                r->queue[tail++] = w;
                if (w == to) found = r->dist[w];
            }
            if (r->dist[w] == r->dist[u] + 1) r->cnt_c[w] += r->cnt_c[u];
        }
    }
    if (from == to) found = 0;
    *count_p = found >= 0 ? r->cnt_c[to] : 0;
    return found;
}

/* After bfs_count: the idx-th path (0 <= idx < count) into out[0..hops-1]. */
static void bfs_extract(strata_topo_router_t *r, int32_t from, int32_t to, double idx, int32_t *out)
{
    const strata_topo_t *t = r->t;
    int32_t v = to;
    while (v != from) {
        int32_t d = r->dist[v], pick = -1, chan = -1;
        for (int32_t i = t->adj_off[v]; i < t->adj_off[v + 1]; i++) {
            int32_t p = t->adj_nbr[i];
            if (r->st_c[p] != r->cur_c || r->dist[p] != d - 1) continue;
            pick = p, chan = t->adj_chan[i] ^ 1; /* p→v */
            if (idx < r->cnt_c[p]) break;
            idx -= r->cnt_c[p];
        }
        out[d - 1] = chan;
        v = pick;
    }
}

/* ==== Up/down segments ==== */

/* Climb one tier from layer lay[0..*n) into r->lay_n, carrying counts. */
static int32_t climb(strata_topo_router_t *r, const int32_t *lay, int32_t n, uint32_t *st,
                     double *cnt)
{
    const strata_topo_t *t = r->t;
    int32_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t u = lay[i];
        for (int32_t j = t->adj_up[u]; j < t->adj_off[u + 1]; j++) {
            int32_t w = t->adj_nbr[j];
            if (t->tier[w] != t->tier[u] + 1) break; /* row sorted by tier */
            if (st[w] != r->cur) st[w] = r->cur, cnt[w] = 0, r->lay_n[m++] = w;
            cnt[w] += cnt[u];
        }
    }
    return m;
}

/* Paths from layer lay_a (tier T-1) one hop up into B's layer (tier T,
 * stamped): Σ over x in lay_a, c above x in B of cnt_a[x]·cnt_b[c]. This
 * "probe" meets the two sides without materialising A's top layer — at
 * the core of a k-ary fat-tree it halves the work. */
static double probe_up(const strata_topo_router_t *r, int32_t na)
{
    const strata_topo_t *t = r->t;
    double c = 0;
    for (int32_t i = 0; i < na; i++) {
        int32_t x = r->lay_a[i];
        double sub = 0;
        for (int32_t j = t->adj_up[x]; j < t->adj_off[x + 1]; j++) {
            int32_t w = t->adj_nbr[j];
            if (t->tier[w] != t->tier[x] + 1) break;
            if (r->st_b[w] == r->cur) sub += r->cnt_b[w];
        }
        c += r->cnt_a[x] * sub;
    }
    return c;
}

/* Paths meeting in the current (equal-tier) layers. */
static double meet_here(const strata_topo_router_t *r, int32_t na)
{
    double c = 0;
    for (int32_t i = 0; i < na; i++)
        if (r->st_b[r->lay_a[i]] == r->cur) c += r->cnt_a[r->lay_a[i]] * r->cnt_b[r->lay_a[i]];
    return c;
}

static int32_t climb_side(strata_topo_router_t *r, int32_t *lay, int32_t n, uint32_t *st,
                          double *cnt)
{
    int32_t m = climb(r, lay, n, st, cnt);
    memcpy(lay, r->lay_n, (size_t)m * sizeof(int32_t));
    return m;
}

/* Count minimal up/down paths a→b; -1 when the tiers never meet. Leaves
 * both closures stamped for ud_extract (r->probe says whether they met
 * in a common layer or across the last hop of A). */
static int32_t ud_count(strata_topo_router_t *r, int32_t a, int32_t b, double *count_p)
{
    const strata_topo_t *t = r->t;
    next_stamp(r);
    int32_t na = 1, nb = 1, ta = t->tier[a], tb = t->tier[b], hops = 0;
    r->lay_a[0] = a, r->st_a[a] = r->cur, r->cnt_a[a] = 1;
    r->lay_b[0] = b, r->st_b[b] = r->cur, r->cnt_b[b] = 1;
    r->na = na;
    for (;;) {
        double c = ta == tb ? meet_here(r, na) : 0;
        if (c > 0) {
            r->na = na, r->probe = false, *count_p = c;
            return hops;
        }
        if (ta == tb && ta + 1 < STRATA_TOPO_TIERS_MAX) {
            nb = climb_side(r, r->lay_b, nb, r->st_b, r->cnt_b);
            tb++, hops++;
            if (nb > 0 && (c = probe_up(r, na)) > 0) {
                r->na = na, r->probe = true, *count_p = c;
                return hops + 1;
            }
        }
        if (ta <= tb)
            na = climb_side(r, r->lay_a, na, r->st_a, r->cnt_a), ta++, hops++;
        else
            nb = climb_side(r, r->lay_b, nb, r->st_b, r->cnt_b), tb++, hops++;
        if (na == 0 || nb == 0 || ta >= STRATA_TOPO_TIERS_MAX || tb >= STRATA_TOPO_TIERS_MAX)
            return -1;
    }
}

/* Walk from top node c down to `end` inside the closure (st, cnt),
 * choosing children by cumulative count; writes channels top-down (c→…)
 * into out and returns how many. */
static int32_t descend(strata_topo_router_t *r, int32_t c, int32_t end, const uint32_t *st,
                       const double *cnt, double idx, int32_t *out)
{
    const strata_topo_t *t = r->t;
    int32_t v = c, n = 0;
    while (v != end) {
        int32_t pick = -1, chan = -1;
        for (int32_t i = t->adj_off[v]; i < t->adj_same[v]; i++) {
            int32_t p = t->adj_nbr[i];
            if (st[p] != r->cur || t->tier[p] != t->tier[v] - 1) continue;
            pick = p, chan = t->adj_chan[i];
            if (idx < cnt[p]) break;
            idx -= cnt[p];
        }
        out[n++] = chan;
        v = pick;
    }
    return n;
}

/* Reverse a descent c→…→a written by descend into the ascent a→…→c. */
static void reverse_chans(int32_t *out, int32_t n)
{
    for (int32_t i = 0; i < n / 2; i++) {
        int32_t x = out[i];
        out[i] = out[n - 1 - i];
        out[n - 1 - i] = x;
    }
    for (int32_t i = 0; i < n; i++)
        out[i] ^= 1;
}

/* After ud_count: the idx-th up/down path a→b into out; returns hops. The
 * index splits as (meeting point, up path, down path), in the order
 * ud_count summed them. */
static int32_t ud_extract(strata_topo_router_t *r, int32_t a, int32_t b, double idx, int32_t *out)
{
    const strata_topo_t *t = r->t;
    int32_t x = -1, c = -1, xc = -1;
    double wb = 1;
    for (int32_t i = 0; i < r->na && c < 0; i++) {
        int32_t y = r->lay_a[i];
        if (!r->probe) {
            if (r->st_b[y] != r->cur) continue;
            double w = r->cnt_a[y] * r->cnt_b[y];
            x = c = y, wb = r->cnt_b[y];
            if (idx < w) break;
            idx -= w;
            c = -1;
            continue;
        }
        for (int32_t j = t->adj_up[y]; j < t->adj_off[y + 1]; j++) {
            int32_t w = t->adj_nbr[j];
            if (t->tier[w] != t->tier[y] + 1) break;
            if (r->st_b[w] != r->cur) continue;
            double k = r->cnt_a[y] * r->cnt_b[w];
            x = y, c = w, xc = t->adj_chan[j], wb = r->cnt_b[w];
            if (idx < k) break;
            idx -= k;
            c = -1;
        }
    }
    if (c < 0) c = x; /* rounding at the end of the range: keep the last */
    double up = fmod(idx, r->cnt_a[x]), down = floor(idx / r->cnt_a[x]);
    if (down >= wb) down = wb - 1;
    int32_t nu = descend(r, x, a, r->st_a, r->cnt_a, up, out);
    reverse_chans(out, nu);
    if (r->probe) out[nu++] = xc;
    return nu + descend(r, c, b, r->st_b, r->cnt_b, down, out + nu);
}

/* ==== Grid segments (dimension order) ==== */

static void grid_coord(const topo_shape_t *s, int32_t v, int32_t *x)
{
    for (int d = 0; d < s->ndims; d++)
        x[d] = v % s->dims[d], v /= s->dims[d];
}

/* Per dimension: signed step count; *ties = dimensions with two equal
 * directions. Returns total hops. */
static int32_t grid_plan(const topo_shape_t *s, int32_t a, int32_t b, int32_t *step, int *ties)
{
    int32_t xa[3], xb[3], hops = 0;
    grid_coord(s, a, xa);
    grid_coord(s, b, xb);
    *ties = 0;
    for (int d = 0; d < s->ndims; d++) {
        int32_t k = s->dims[d], delta = xb[d] - xa[d];
        if (s->wrap[d]) {
            int32_t f = ((delta % k) + k) % k, bk = k - f;
            step[d] = f == 0 ? 0 : f < bk ? f : -bk;
            if (f != 0 && f == bk) (*ties)++;
        } else {
            step[d] = delta;
        }
        hops += step[d] < 0 ? -step[d] : step[d];
    }
    return hops;
}

static int32_t grid_extract(const strata_topo_t *t, int32_t a, int32_t b, double idx, int32_t *out)
{
    const topo_shape_t *s = &t->shape;
    int32_t step[3], n = 0, v = a, stride = 1;
    int ties;
    grid_plan(s, a, b, step, &ties);
    uint64_t bits = (uint64_t)idx;
    for (int d = 0; d < s->ndims; d++) {
        int32_t k = s->dims[d], x = (v / stride) % k, st = step[d];
        if (s->wrap[d] && st != 0 && 2 * (st < 0 ? -st : st) == k) {
            if (bits & 1) st = -st; /* the tied direction chosen by this bit */
            bits >>= 1;
        }
        for (int32_t i = 0; i < (st < 0 ? -st : st); i++) {
            int32_t nx = ((x + (st > 0 ? 1 : -1)) % k + k) % k;
            int32_t w = v + (nx - x) * stride;
            out[n++] = chan_of(t, v, w);
            v = w, x = nx;
        }
        stride *= k;
    }
    return n;
}

/* ==== Planning a route ==== */

static bool seg_bfs(strata_topo_router_t *r, plan_t *p, int32_t from, int32_t to, int32_t group,
                    bool scaleup)
{
    seg_t *s = &p->seg[p->nseg];
    s->kind = SEG_BFS, s->from = from, s->to = to, s->group = group, s->scaleup = scaleup;
    s->hops = bfs_count(r, from, to, group, scaleup, &s->count);
    if (s->hops < 0) return false;
    p->nseg++;
    return true;
}

/* Tiered networks: in-server, or server → NIC → up/down → NIC → server. */
static bool plan_tiered(strata_topo_router_t *r, plan_t *p, int32_t src, int32_t dst)
{
    const strata_topo_t *t = r->t;
    int32_t g = t->group[src];
    bool accels = t->kind[src] == STRATA_DEV_ACCEL && t->kind[dst] == STRATA_DEV_ACCEL;
    /* P2P off: the sender's DMA writes into host memory, the receiver's
     * reads from there (strata_topo_set_p2p) — two in-server segments */
    if (accels && t->p2p_off && g >= 0 && g == t->group[dst]) {
        int32_t m = t->stage[src];
        return seg_bfs(r, p, src, m, g, false) && seg_bfs(r, p, m, dst, g, false);
    }
    if (g >= 0 && g == t->group[dst] &&
        ((accels && seg_bfs(r, p, src, dst, g, true)) || seg_bfs(r, p, src, dst, g, false)))
        return true;
    int32_t sa = t->kind[src] == STRATA_DEV_ACCEL && t->nic[src] >= 0 ? t->nic[src] : src;
    int32_t da = t->kind[dst] == STRATA_DEV_ACCEL && t->nic[dst] >= 0 ? t->nic[dst] : dst;
    seg_t ud = {SEG_UPDOWN, sa, da, -1, false, 0, 0};
    if (sa == da || (ud.hops = ud_count(r, sa, da, &ud.count)) < 0) return false;
    p->nseg = 0;
    if (sa != src && !seg_bfs(r, p, src, sa, t->group[src], false)) return false;
    p->seg[p->nseg++] = ud;
    if (da != dst && !seg_bfs(r, p, da, dst, t->group[dst], false)) return false;
    return true;
}

static bool plan_new(strata_topo_router_t *r, int32_t src, int32_t dst, plan_t *p);

static bool make_plan(strata_topo_router_t *r, int32_t src, int32_t dst, plan_t *p)
{
    if (r->memo_cur && r->memo_cur == r->cur && r->memo_src == src && r->memo_dst == dst &&
        r->memo_p2p_off == r->t->p2p_off) {
        *p = r->memo;
        return true;
    }
    if (!plan_new(r, src, dst, p)) return false;
    r->memo = *p;
    r->memo_src = src;
    r->memo_dst = dst;
    r->memo_p2p_off = r->t->p2p_off;
    r->memo_cur = r->cur; /* 0 (no search yet) never matches */
    return true;
}

static bool plan_new(strata_topo_router_t *r, int32_t src, int32_t dst, plan_t *p)
{
    const strata_topo_t *t = r->t;
    p->nseg = 0;
    if (src < 0 || src >= t->ndev || dst < 0 || dst >= t->ndev) return false;
    if (src == dst) return true;
    if (t->shape.kind == TOPO_SHAPE_GRID) {
        int32_t step[3];
        int ties;
        seg_t *s = &p->seg[p->nseg++];
        s->kind = SEG_GRID, s->from = src, s->to = dst, s->group = -1, s->scaleup = false;
        s->hops = grid_plan(&t->shape, src, dst, step, &ties);
        s->count = ldexp(1.0, ties);
        return true;
    }
    if (t->shape.kind != TOPO_SHAPE_FULL && plan_tiered(r, p, src, dst)) return true;
    p->nseg = 0;
    return seg_bfs(r, p, src, dst, -1, false);
}

static double plan_count(const plan_t *p)
{
    double c = 1;
    for (int i = 0; i < p->nseg; i++)
        c *= p->seg[i].count;
    return c;
}

static int32_t plan_hops(const plan_t *p)
{
    int32_t h = 0;
    for (int i = 0; i < p->nseg; i++)
        h += p->seg[i].hops;
    return h;
}

/* Fill r->path with the idx-th path of the plan (mixed radix over the
 * segments' counts, first segment fastest). BFS segments share scratch, so
 * each is searched again (they are small, inside a server); the one
 * up/down segment keeps its state from make_plan. */
static int32_t plan_extract(strata_topo_router_t *r, const plan_t *p, double idx)
{
    int32_t n = 0;
    for (int i = 0; i < p->nseg; i++) {
        const seg_t *s = &p->seg[i];
        double k = fmod(idx, s->count);
        idx = floor(idx / s->count);
        double c;
        switch (s->kind) {
        case SEG_GRID:
            n += grid_extract(r->t, s->from, s->to, k, r->path + n);
            break;
        case SEG_BFS:
            bfs_count(r, s->from, s->to, s->group, s->scaleup, &c);
            bfs_extract(r, s->from, s->to, k, r->path + n);
            n += s->hops;
            break;
        case SEG_UPDOWN: /* state of make_plan's ud_count is still current */
            n += ud_extract(r, s->from, s->to, k, r->path + n);
            break;
        }
    }
    return n;
}

/* ==== Even split over the up/down paths ====
 * How many of the minimal up/down paths a→b (the closures ud_count left)
 * cross each channel, without listing the paths: an up edge p→v of A's
 * closure carries cnt_a[p] (ways up from a to p) times fin[v] (ways on
 * from v to b), fin summed top-down from the meeting points; B's down
 * edges likewise. O(closure edges) instead of O(paths × hops). */

typedef struct split_out {
    int32_t *chans;
    double *paths;
    int32_t n, max;
    const topo_link_rec_t *ref; /* every channel must match its figures */
    bool uneven;
} split_out_t;

static bool same_figures(const topo_link_rec_t *x, const topo_link_rec_t *y)
{
    return x->bw_dir == y->bw_dir && x->latency == y->latency && x->sw_lat == y->sw_lat &&
           x->endpoint == y->endpoint;
}

static void split_emit(const strata_topo_t *t, split_out_t *o, int32_t chan, double paths)
{
    const topo_link_rec_t *l = &t->links[chan >> 1];
    if (!o->ref) o->ref = l;
    if (!same_figures(l, o->ref)) o->uneven = true;
    if (o->n < o->max) o->chans[o->n] = chan, o->paths[o->n] = paths;
    o->n++;
}

/* One side's closure (st, cnt) below its meeting layer lay[0..n), whose
 * fin values are in cnt_c (stamped st_c == cur_c); emits each edge with
 * its path count, upward channels when up (A's side), else downward. */
static void split_side(strata_topo_router_t *r, const uint32_t *st, const double *cnt, int32_t *lay,
                       int32_t n, bool up, int32_t end, split_out_t *o)
{
    const strata_topo_t *t = r->t;
    int32_t *next = lay == r->lay_n ? r->queue : r->lay_n;
    while (n > 0) {
        int32_t m = 0;
        for (int32_t i = 0; i < n; i++) {
            int32_t v = lay[i];
            double fin = r->cnt_c[v];
            for (int32_t j = t->adj_off[v]; j < t->adj_same[v]; j++) {
                int32_t q = t->adj_nbr[j];
                if (st[q] != r->cur || t->tier[q] != t->tier[v] - 1) continue;
                /* the device entered is a switch (its traversal is added
                 * at the same position of every path) or the end */
                int32_t in = up ? v : q;
                if (t->kind[in] != STRATA_DEV_NET_SWITCH && in != end) o->uneven = true;
                split_emit(t, o, up ? t->adj_chan[j] ^ 1 : t->adj_chan[j], cnt[q] * fin);
                if (r->st_c[q] != r->cur_c) r->st_c[q] = r->cur_c, r->cnt_c[q] = 0, next[m++] = q;
                r->cnt_c[q] += fin;
            }
        }
        int32_t *tmp = lay;
        lay = next, next = tmp, n = m;
    }
}

/* Edge path counts of the up/down segment a→b after ud_count. */
static void split_updown(strata_topo_router_t *r, int32_t b, split_out_t *o)
{
    const strata_topo_t *t = r->t;
    for (int side = 0; side < 2; side++) {
        next_stamp_c(r);
        int32_t n = 0;
        for (int32_t i = 0; i < r->na; i++) {
            int32_t x = r->lay_a[i];
            if (!r->probe) {
                if (r->st_b[x] != r->cur) continue;
                r->st_c[x] = r->cur_c;
                r->cnt_c[x] = side == 0 ? r->cnt_b[x] : r->cnt_a[x];
                r->lay_n[n++] = x;
                continue;
            }
            for (int32_t j = t->adj_up[x]; j < t->adj_off[x + 1]; j++) {
                int32_t w = t->adj_nbr[j];
                if (t->tier[w] != t->tier[x] + 1) break;
                if (r->st_b[w] != r->cur) continue;
                if (side == 0) split_emit(t, o, t->adj_chan[j], r->cnt_a[x] * r->cnt_b[w]);
                if (side == 0 && t->kind[w] != STRATA_DEV_NET_SWITCH && w != b) o->uneven = true;
                int32_t v = side == 0 ? x : w;
                if (r->st_c[v] != r->cur_c)
                    r->st_c[v] = r->cur_c, r->cnt_c[v] = 0, r->lay_n[n++] = v;
                r->cnt_c[v] += side == 0 ? r->cnt_b[w] : r->cnt_a[x];
            }
        }
        if (side == 0)
            split_side(r, r->st_a, r->cnt_a, r->lay_n, n, true, -1, o);
        else
            split_side(r, r->st_b, r->cnt_b, r->lay_n, n, false, b, o);
    }
}

int32_t strata_topo_path_split(strata_topo_router_t *r, int32_t src, int32_t dst, int32_t *chans,
                               double *frac, int32_t max, double *bw_p, double *latency_p)
{
    plan_t p;
    if (!make_plan(r, src, dst, &p)) return -1;
    int ud = -1;
    for (int i = 0; i < p.nseg; i++) {
        if (p.seg[i].kind == SEG_UPDOWN && ud < 0)
            ud = i;
        else if (p.seg[i].kind != SEG_BFS || p.seg[i].count != 1)
            return -1;
    }
    if (ud < 0) return -1;
    /* path 0 gives the single-path segments and the figures every path
     * shares when the closure's links all have the same figures */
    int32_t n0 = plan_extract(r, &p, 0);
    strata_topo_path_figures(r->t, r->path, n0, bw_p, latency_p);
    split_out_t o = {chans, frac, 0, max, NULL, false};
    int32_t at = 0;
    for (int i = 0; i < p.nseg; i++) {
        if (i == ud) {
            o.ref = &r->t->links[r->path[at] >> 1];
            split_updown(r, p.seg[i].to, &o);
        } else {
            for (int32_t h = 0; h < p.seg[i].hops; h++) {
                if (o.n < max) chans[o.n] = r->path[at + h], frac[o.n] = p.seg[ud].count;
                o.n++;
            }
        }
        at += p.seg[i].hops;
    }
    if (o.uneven) return -1;
    for (int32_t i = 0; i < o.n && i < max; i++)
        frac[i] /= p.seg[ud].count;
    return o.n;
}

/* ==== Public queries ==== */

double strata_topo_path_count(strata_topo_router_t *r, int32_t src, int32_t dst)
{
    plan_t p;
    return make_plan(r, src, dst, &p) ? plan_count(&p) : 0;
}

int32_t strata_topo_hops(strata_topo_router_t *r, int32_t src, int32_t dst)
{
    plan_t p;
    return make_plan(r, src, dst, &p) ? plan_hops(&p) : -1;
}

static strata_status_t path_at(strata_topo_router_t *r, int32_t src, int32_t dst, double idx,
                               bool hashed, int32_t *chans, int32_t max, int32_t *n_p)
{
    plan_t p;
    if (!make_plan(r, src, dst, &p)) return STRATA_ERR_INVALID;
    double count = plan_count(&p);
    idx = hashed ? floor(ldexp(idx, -64) * count) : fmod(idx, count);
    if (idx >= count) idx = count - 1;
    int32_t hops = plan_hops(&p);
    *n_p = hops;
    if (hops > max) return STRATA_ERR_RANGE;
    int32_t n = plan_extract(r, &p, idx);
    memcpy(chans, r->path, (size_t)n * sizeof(int32_t));
    return STRATA_OK;
}

strata_status_t strata_topo_path(strata_topo_router_t *r, int32_t src, int32_t dst, uint64_t index,
                                 int32_t *chans, int32_t max, int32_t *n_p)
{
    return path_at(r, src, dst, (double)index, false, chans, max, n_p);
}

strata_status_t strata_topo_path_hash(strata_topo_router_t *r, int32_t src, int32_t dst,
                                      uint64_t seed, int32_t *chans, int32_t max, int32_t *n_p)
{
    uint64_t h =
        util_hash_u64(((uint64_t)(uint32_t)src << 32 | (uint32_t)dst) ^ util_hash_u64(seed));
    return path_at(r, src, dst, (double)h, true, chans, max, n_p);
}
