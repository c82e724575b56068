/*
 * metrics.c — what a topology offers, as numbers: device counts per kind,
 * routed hop counts between endpoints (diameter, average), per-accelerator
 * injection bandwidth and oversubscription per tier, bisection.
 *
 * Hop counts are those of the routes route.c gives (so the metric agrees
 * with what the simulator charges). Computing them pair by pair would cost
 * n² route queries; instead one sweep per source gives hops to every
 * endpoint: a BFS on direct networks (dimension-order paths are shortest),
 * and on tiered networks an up-then-down sweep from the source's NIC that
 * records, for every attachment, the lowest tier at which it is reached.
 * Sources: one per symmetry class when the builder proved the endpoints
 * equivalent (exact), all endpoints up to 1,024 (exact), else 64 evenly
 * spaced sources (an estimate, said so in hops_how).
 */
#define _POSIX_C_SOURCE 200809L
#include "topo.h"

#include <string.h>

#define METRICS_EXACT_MAX 1024
#define METRICS_SAMPLES   64

typedef struct sweep {
    const strata_topo_t *t;
    strata_topo_router_t *router;
    int32_t *dist; /* per device: BFS hops, or up/down hops from the source NIC */
    int32_t *queue;
    int32_t *layer, *next;
    uint32_t *seen;
    uint32_t stamp;
    int32_t *pre; /* per endpoint rank: hops to its NIC inside its server (0 if none) */
} sweep_t;

static bool direct_net(const strata_topo_t *t)
{
    /* No switch tiers: routes are BFS shortest paths, as are grid routes. */
    return t->shape.kind == TOPO_SHAPE_GRID || t->shape.kind == TOPO_SHAPE_FULL || t->max_tier == 0;
}

/* The device an endpoint enters the network through. */
static int32_t attach(const strata_topo_t *t, int32_t v)
{
    return t->kind[v] == STRATA_DEV_ACCEL && t->nic[v] >= 0 ? t->nic[v] : v;
}

/* Mark, from attachment a, the up/down hop count to every device reachable
 * by climbing to tier T and descending: the lowest T wins. */
static void updown_sweep(sweep_t *w, int32_t a)
{
    const strata_topo_t *t = w->t;
    for (int32_t v = 0; v < t->ndev; v++)
        w->dist[v] = -1;
    int32_t nl = 1, t0 = t->tier[a];
    w->layer[0] = a;
    for (int32_t T = t0; T < STRATA_TOPO_TIERS_MAX && nl > 0; T++) {
        w->stamp++;
        int32_t head = 0, tail = 0;
        for (int32_t i = 0; i < nl; i++)
            w->queue[tail++] = w->layer[i], w->seen[w->layer[i]] = w->stamp;
        while (head < tail) { /* descend one tier per hop */
            int32_t u = w->queue[head++];
            if (w->dist[u] < 0) w->dist[u] = (T - t0) + (T - t->tier[u]);
            for (int32_t j = t->adj_off[u]; j < t->adj_same[u]; j++) {
                int32_t x = t->adj_nbr[j];
                if (t->tier[x] == t->tier[u] - 1 && w->seen[x] != w->stamp)
                    w->seen[x] = w->stamp, w->queue[tail++] = x;
            }
        }
        int32_t m = 0; /* climb */
        w->stamp++;
        for (int32_t i = 0; i < nl; i++) {
            int32_t u = w->layer[i];
            for (int32_t j = t->adj_up[u]; j < t->adj_off[u + 1]; j++) {
                int32_t x = t->adj_nbr[j];
                if (t->tier[x] == t->tier[u] + 1 && w->seen[x] != w->stamp)
                    w->seen[x] = w->stamp, w->next[m++] = x;
            }
        }
        memcpy(w->layer, w->next, (size_t)m * sizeof(int32_t));
        nl = m;
    }
}

/* Hops from endpoint rank s to every endpoint; sum and max into *sum, *max. */
static void hops_from(sweep_t *w, int32_t s, double *sum, int32_t *max)
{
    const strata_topo_t *t = w->t;
    int32_t src = t->ep[s];
    if (direct_net(t))
        topo_bfs(t, src, w->dist, w->queue);
    else
        updown_sweep(w, attach(t, src));
    for (int32_t r = 0; r < t->nep; r++) {
        if (r == s) continue;
        int32_t d = t->ep[r], h;
        if (direct_net(t))
            h = w->dist[d];
        else if (t->group[d] >= 0 && t->group[d] == t->group[src])
            h = strata_topo_hops(w->router, src, d);
        else if (w->dist[attach(t, d)] >= 0 && attach(t, d) != attach(t, src))
            h = w->pre[s] + w->dist[attach(t, d)] + w->pre[r];
        else
            h = strata_topo_hops(w->router, src, d);
        *sum += h;
        if (h > *max) *max = h;
    }
}

static void sweep_free(sweep_t *w)
{
    strata_topo_router_destroy(w->router);
    util_free(w->dist);
    util_free(w->queue);
    util_free(w->layer);
    util_free(w->next);
    util_free(w->seen);
    util_free(w->pre);
}

static strata_status_t sweep_init(sweep_t *w, const strata_topo_t *t, strata_error_t *err)
{
    memset(w, 0, sizeof(*w));
    w->t = t;
    size_t n = (size_t)t->ndev;
    strata_status_t st = strata_topo_router_create(t, &w->router, err);
    if (st) return st;
    w->dist = util_malloc(n * sizeof(int32_t));
    w->queue = util_malloc(n * sizeof(int32_t));
    w->layer = util_malloc(n * sizeof(int32_t));
    w->next = util_malloc(n * sizeof(int32_t));
    w->seen = util_calloc(n, sizeof(uint32_t));
    w->pre = util_calloc((size_t)t->nep, sizeof(int32_t));
    if (!w->dist || !w->queue || !w->layer || !w->next || !w->seen || !w->pre) {
        sweep_free(w);
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory for hop metrics");
    }
    for (int32_t r = 0; r < t->nep && !direct_net(t); r++) {
        int32_t v = t->ep[r], a = attach(t, v);
        w->pre[r] = a == v ? 0 : strata_topo_hops(w->router, v, a);
    }
    return STRATA_OK;
}

static strata_status_t hop_metrics(const strata_topo_t *t, strata_topo_metrics_t *m,
                                   strata_error_t *err)
{
    int32_t n = t->nep, nsrc, step = 1;
    if (n < 2) {
        snprintf(m->hops_how, sizeof(m->hops_how), "fewer than 2 endpoints");
        m->hops_exact = true;
        return STRATA_OK;
    }
    if (t->shape.sym_classes > 0 && n % t->shape.sym_classes == 0) {
        nsrc = t->shape.sym_classes;
        m->hops_exact = true;
        snprintf(m->hops_how, sizeof(m->hops_how), "exact: %d source%s by symmetry", (int)nsrc,
                 nsrc > 1 ? "s" : "");
    } else if (n <= METRICS_EXACT_MAX) {
        nsrc = n;
        m->hops_exact = true;
        snprintf(m->hops_how, sizeof(m->hops_how), "exact: all %d sources", (int)n);
    } else {
        nsrc = METRICS_SAMPLES;
        step = n / METRICS_SAMPLES;
        m->hops_exact = false;
        snprintf(m->hops_how, sizeof(m->hops_how), "estimate: %d sampled sources of %d", (int)nsrc,
                 (int)n);
    }
    sweep_t w;
    strata_status_t st = sweep_init(&w, t, err);
    if (st) return st;
    double sum = 0;
    int32_t max = 0;
    for (int32_t i = 0; i < nsrc; i++)
        hops_from(&w, i * step, &sum, &max);
    sweep_free(&w);
    m->diameter = max;
    m->avg_hops = sum / ((double)nsrc * (n - 1));
    return STRATA_OK;
}

/* ==== Bandwidth per tier ==== */

static void tier_metrics(const strata_topo_t *t, strata_topo_metrics_t *m)
{
    double between[STRATA_TOPO_TIERS_MAX] = {0}; /* links joining tier t-1 and t */
    double scaleup = 0;
    for (int32_t l = 0; l < t->nlink; l++) {
        const topo_link_rec_t *k = &t->links[l];
        int32_t ta = t->tier[k->a], tb = t->tier[k->b];
        int32_t lo = ta < tb ? ta : tb, hi = ta < tb ? tb : ta;
        if (hi == lo + 1) between[hi] += k->bw_dir;
        uint8_t ka = t->kind[k->a], kb = t->kind[k->b];
        bool up_a =
            ka == STRATA_DEV_ACCEL && (kb == STRATA_DEV_ACCEL || kb == STRATA_DEV_SCALEUP_SWITCH);
        bool up_b =
            kb == STRATA_DEV_ACCEL && (ka == STRATA_DEV_ACCEL || ka == STRATA_DEV_SCALEUP_SWITCH);
        scaleup += (up_a ? k->bw_dir : 0) + (up_b ? k->bw_dir : 0);
    }
    m->injection[0] = scaleup / t->nep;
    for (int i = 1; i < STRATA_TOPO_TIERS_MAX; i++) {
        m->injection[i] = between[i] / t->nep;
        bool has_up = i + 1 < STRATA_TOPO_TIERS_MAX && between[i + 1] > 0;
        m->oversub[i] = i <= t->max_tier && has_up ? between[i] / between[i + 1] : 0;
    }
}

strata_status_t strata_topo_metrics(const strata_topo_t *t, strata_topo_metrics_t *m,
                                    strata_error_t *err)
{
    memset(m, 0, sizeof(*m));
    if (!t->finished)
        return strata_error_set(err, STRATA_ERR_INVALID, "topology '%s' is not finished", t->name);
    m->devices = t->ndev;
    m->links = t->nlink;
    m->endpoints = t->nep;
    m->groups = t->ngroups;
    m->tiers = t->max_tier + 1;
    topo_kind_counts(t, m->count);
    tier_metrics(t, m);
    strata_status_t st = hop_metrics(t, m, err);
    if (!st) st = strata_topo_bisection(t, STRATA_BISECT_AUTO, &m->bisection, err);
    return st;
}
