/*
 * hostpath.c — host data paths: how bytes move between the devices of one
 * server (strata_topo_xfer, contract in strata/topo.h): which agent moves
 * them (a GPU's DMA engine, a NIC, an NVMe drive, the CPU), through which
 * memories, over which routed links, and how many copies that makes.
 *
 * Design. A transfer is a list of legs decided from the two device kinds
 * and the mode (plan_legs); each leg is then routed with the topology's
 * router (path 0 of its equal-cost set) and priced as one message over its
 * path (strata_topo_path_figures): time = latency + bytes / bottleneck. A
 * CPU copy is a leg from a host memory to itself: it reads the bytes over
 * the memory's channel toward the socket and writes them back over the
 * other direction, so its rate is the smaller of the two per-direction
 * shares (half the shared DDR bus, strata_topo_linkspec_t), capped at a
 * caller's one-core figure. The bounce buffer of a staged transfer lies in
 * the host memory nearest the device that fills it (the sender's, or with
 * P2P off the memory the router stages through), as NCCL's SHM transport
 * and the CUDA driver place theirs on the local NUMA node.
 *
 * Workload: one call per `strata path`; a router per call.
 */
#include "topo.h"

#include <math.h>
#include <string.h>

typedef enum { LEG_DMA, LEG_CPU } leg_kind_t;

typedef struct leg {
    leg_kind_t kind;
    int32_t from, to;
    int32_t agent; /* the device whose engine moves the bytes (-1: CPU) */
    const char *what;
} leg_t;

typedef struct plan_ctx {
    const strata_topo_t *t;
    strata_xfer_mode_t mode;
    leg_t leg[STRATA_XFER_MAX_STAGES];
    int n;
    strata_error_t *err;
} plan_ctx_t;

static const char *const mode_names[] = {"auto", "direct", "staged", "pinned", "pageable"};

const char *strata_xfer_mode_str(strata_xfer_mode_t mode)
{
    return (int)mode >= 0 && mode <= STRATA_XFER_PAGEABLE ? mode_names[mode] : "?";
}

int strata_xfer_mode_parse(const char *s, strata_xfer_mode_t *mode_p)
{
    for (int i = 0; s && i <= STRATA_XFER_PAGEABLE; i++)
        if (strcmp(s, mode_names[i]) == 0) {
            *mode_p = (strata_xfer_mode_t)i;
            return 0;
        }
    return -1;
}

/* ==== Planning the legs ==== */

static void leg(plan_ctx_t *p, leg_kind_t kind, int32_t from, int32_t to, int32_t agent,
                const char *what)
{
    p->leg[p->n++] = (leg_t){kind, from, to, agent, what};
}

static bool is_io(const strata_topo_t *t, int32_t d)
{
    return t->kind[d] == STRATA_DEV_NIC || t->kind[d] == STRATA_DEV_STORAGE;
}

static int32_t nearest_memory(const strata_topo_t *t, int32_t d)
{
    int32_t *dist = util_malloc((size_t)t->ndev * sizeof(int32_t));
    int32_t *queue = util_malloc((size_t)t->ndev * sizeof(int32_t));
    int32_t m = -1;
    if (dist && queue) {
        for (int32_t v = 0; v < t->ndev; v++)
            dist[v] = -1;
        m = topo_nearest_memory(t, d, dist, queue);
    }
    util_free(dist);
    util_free(queue);
    return m;
}

static strata_status_t no_memory(plan_ctx_t *p, int32_t d)
{
    return strata_error_set(p->err, STRATA_ERR_INVALID,
                            "path: '%s' has no host memory in its server to stage through (a "
                            "device of kind memory)",
                            p->t->dname[d]);
}

static strata_status_t bad_mode(plan_ctx_t *p, int32_t a, int32_t b)
{
    const strata_topo_t *t = p->t;
    return strata_error_set(p->err, STRATA_ERR_INVALID,
                            "path: mode %s does not apply from %s '%s' to %s '%s'",
                            strata_xfer_mode_str(p->mode), strata_dev_kind_str(t->kind[a]),
                            t->dname[a], strata_dev_kind_str(t->kind[b]), t->dname[b]);
}

/* GPU to GPU: one P2P DMA, or two through host memory. */
static strata_status_t plan_accels(plan_ctx_t *p, int32_t a, int32_t b)
{
    const strata_topo_t *t = p->t;
    if (p->mode == STRATA_XFER_AUTO) p->mode = t->p2p_off ? STRATA_XFER_STAGED : STRATA_XFER_DIRECT;
    if (p->mode == STRATA_XFER_DIRECT) {
        if (t->p2p_off)
            return strata_error_set(p->err, STRATA_ERR_UNSUPPORTED,
                                    "path: GPU peer-to-peer is off on this cluster (p2p=off): "
                                    "'%s' -> '%s' can only be staged through host memory",
                                    t->dname[a], t->dname[b]);
        leg(p, LEG_DMA, a, b, a, "P2P write");
        return STRATA_OK;
    }
    if (p->mode != STRATA_XFER_STAGED) return bad_mode(p, a, b);
    int32_t m = t->p2p_off ? t->stage[a] : nearest_memory(t, a);
    if (m < 0) return no_memory(p, a);
    leg(p, LEG_DMA, a, m, a, "D2H into a bounce buffer");
    leg(p, LEG_DMA, m, b, b, "H2D out of the bounce buffer");
    return STRATA_OK;
}

/* Host memory <-> GPU: pinned (one DMA) or pageable (CPU copy + DMA). */
static strata_status_t plan_host(plan_ctx_t *p, int32_t a, int32_t b)
{
    const strata_topo_t *t = p->t;
    bool h2d = t->kind[a] == STRATA_DEV_MEMORY;
    int32_t m = h2d ? a : b, g = h2d ? b : a;
    if (p->mode == STRATA_XFER_AUTO) p->mode = STRATA_XFER_PINNED;
    if (p->mode != STRATA_XFER_PINNED && p->mode != STRATA_XFER_PAGEABLE) return bad_mode(p, a, b);
    bool pageable = p->mode == STRATA_XFER_PAGEABLE;
    if (pageable && h2d) leg(p, LEG_CPU, m, m, -1, "pageable into a pinned bounce buffer");
    leg(p, LEG_DMA, a, b, g, h2d ? "H2D" : "D2H");
    if (pageable && !h2d) leg(p, LEG_CPU, m, m, -1, "pinned bounce buffer to pageable");
    return STRATA_OK;
}

/* Does the path a -> b (one route) pass through two CPU sockets? */
static bool crosses_sockets(const strata_topo_t *t, const int32_t *ch, int32_t n)
{
    int32_t first = -1;
    for (int32_t i = 0; i < n; i++) {
        int32_t v = strata_topo_chan_dst(t, ch[i]);
        if (t->kind[v] != STRATA_DEV_CPU) continue;
        if (first >= 0 && v != first) return true;
        first = v;
    }
    return false;
}

/* NIC or drive <-> GPU: GPUDirect (one DMA by the I/O device) or through
 * host memory (a NIC's bounce buffer; a drive's page cache). */
static strata_status_t plan_io(plan_ctx_t *p, int32_t a, int32_t b)
{
    const strata_topo_t *t = p->t;
    bool in = is_io(t, a); /* io -> GPU */
    int32_t io = in ? a : b, g = in ? b : a;
    bool nvme = t->kind[io] == STRATA_DEV_STORAGE;
    if (p->mode == STRATA_XFER_AUTO) p->mode = STRATA_XFER_DIRECT;
    if (p->mode == STRATA_XFER_DIRECT) {
        leg(p, LEG_DMA, a, b, io, nvme ? "GPUDirect Storage" : "GPUDirect RDMA");
        return STRATA_OK;
    }
    if (p->mode != STRATA_XFER_STAGED) return bad_mode(p, a, b);
    int32_t m = nearest_memory(t, io);
    if (m < 0) return no_memory(p, io);
    if (in) {
        leg(p, LEG_DMA, io, m, io, nvme ? "read into the page cache" : "RDMA into host memory");
        if (nvme) leg(p, LEG_CPU, m, m, -1, "page cache to a pinned user buffer");
        leg(p, LEG_DMA, m, g, g, "H2D");
    } else {
        leg(p, LEG_DMA, g, m, g, "D2H");
        if (nvme) leg(p, LEG_CPU, m, m, -1, "pinned user buffer to the page cache");
        leg(p, LEG_DMA, m, io, io,
            nvme ? "write-back from the page cache" : "RDMA from host memory");
    }
    return STRATA_OK;
}

static strata_status_t plan_legs(plan_ctx_t *p, int32_t a, int32_t b)
{
    const strata_topo_t *t = p->t;
    uint8_t ka = t->kind[a], kb = t->kind[b];
    if (ka == STRATA_DEV_ACCEL && kb == STRATA_DEV_ACCEL) return plan_accels(p, a, b);
    if ((ka == STRATA_DEV_MEMORY && kb == STRATA_DEV_ACCEL) ||
        (ka == STRATA_DEV_ACCEL && kb == STRATA_DEV_MEMORY))
        return plan_host(p, a, b);
    if ((is_io(t, a) && kb == STRATA_DEV_ACCEL) || (ka == STRATA_DEV_ACCEL && is_io(t, b)))
        return plan_io(p, a, b);
    if (is_io(t, a) && kb == STRATA_DEV_MEMORY &&
        (p->mode == STRATA_XFER_AUTO || p->mode == STRATA_XFER_PINNED)) {
        p->mode = STRATA_XFER_PINNED;
        leg(p, LEG_DMA, a, b, a, t->kind[a] == STRATA_DEV_NIC ? "RDMA" : "read");
        return STRATA_OK;
    }
    return strata_error_set(p->err, STRATA_ERR_INVALID,
                            "path: no host data path from %s '%s' to %s '%s' (one end must be an "
                            "accelerator, or a NIC or storage into host memory)",
                            strata_dev_kind_str(ka), t->dname[a], strata_dev_kind_str(kb),
                            t->dname[b]);
}

/* ==== Routing and pricing the legs ==== */

static void mover_name(const strata_topo_t *t, const leg_t *l, char *buf, size_t len)
{
    if (l->kind == LEG_CPU) {
        snprintf(buf, len, "CPU (memcpy)");
        return;
    }
    const char *who = t->kind[l->agent] == STRATA_DEV_NIC       ? "NIC"
                      : t->kind[l->agent] == STRATA_DEV_STORAGE ? "NVMe DMA of"
                                                                : "DMA engine of";
    snprintf(buf, len, "%s %s", who, t->dname[l->agent]);
}

/* The memory's channel toward its socket, read then written back. */
static strata_status_t cpu_hops(const strata_topo_t *t, int32_t m, int32_t *ch, int32_t *n_p,
                                strata_error_t *err)
{
    for (int32_t i = t->adj_off[m]; i < t->adj_off[m + 1]; i++)
        if (t->kind[t->adj_nbr[i]] == STRATA_DEV_CPU) {
            ch[0] = t->adj_chan[i];     /* read: memory -> socket */
            ch[1] = t->adj_chan[i] ^ 1; /* write: socket -> memory */
            *n_p = 2;
            return STRATA_OK;
        }
    return strata_error_set(err, STRATA_ERR_INVALID, "path: host memory '%s' has no CPU socket",
                            t->dname[m]);
}

static strata_status_t route_leg(strata_topo_router_t *rt, const strata_topo_t *t, const leg_t *l,
                                 int32_t *ch, int32_t max, int32_t *n_p, strata_error_t *err)
{
    if (l->kind == LEG_CPU) return cpu_hops(t, l->from, ch, n_p, err);
    strata_status_t st = strata_topo_path(rt, l->from, l->to, 0, ch, max, n_p);
    if (st == STRATA_ERR_RANGE)
        return strata_error_set(err, st, "path: '%s' -> '%s' is longer than %d hops",
                                t->dname[l->from], t->dname[l->to], (int)STRATA_XFER_MAX_HOPS);
    if (st)
        return strata_error_set(err, st, "path: no route '%s' -> '%s'", t->dname[l->from],
                                t->dname[l->to]);
    if (t->kind[l->agent] != STRATA_DEV_ACCEL && crosses_sockets(t, ch, *n_p) &&
        (t->kind[l->from] == STRATA_DEV_ACCEL || t->kind[l->to] == STRATA_DEV_ACCEL))
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                "path: %s between '%s' and '%s' crosses the socket link, but it "
                                "needs both under one root complex (CUDA GPUDirect RDMA, "
                                "Overview); stage through host memory instead",
                                l->what, t->dname[l->from], t->dname[l->to]);
    return STRATA_OK;
}

static strata_status_t price_leg(strata_topo_router_t *rt, const strata_topo_t *t, const leg_t *l,
                                 double cpu_copy, strata_xfer_t *x, strata_error_t *err)
{
    strata_xfer_stage_t *s = &x->stage[x->nstages];
    int32_t ch[STRATA_XFER_MAX_HOPS], n = 0;
    strata_status_t st = route_leg(rt, t, l, ch, STRATA_XFER_MAX_HOPS - x->nhops, &n, err);
    if (st) return st;
    s->from = l->from, s->to = l->to, s->first = x->nhops, s->n = n;
    mover_name(t, l, s->mover, sizeof(s->mover));
    snprintf(s->what, sizeof(s->what), "%s", l->what);
    strata_topo_path_figures(t, ch, n, &s->bw, &s->latency);
    if (l->kind == LEG_CPU && cpu_copy > 0 && cpu_copy < s->bw) s->bw = cpu_copy;
    s->time = s->latency + x->bytes / s->bw;
    for (int32_t i = 0; i < n; i++) {
        const topo_link_rec_t *r = &t->links[ch[i] >> 1];
        x->hop[x->nhops++] = (strata_xfer_hop_t){ch[i], x->nstages, r->bw_dir, r->latency};
    }
    x->nstages++;
    return STRATA_OK;
}

strata_status_t strata_topo_xfer(const strata_topo_t *t, int32_t src, int32_t dst,
                                 strata_xfer_mode_t mode, double bytes, double cpu_copy_Bps,
                                 strata_xfer_t *out, strata_error_t *err)
{
    if (!t->finished || src < 0 || src >= t->ndev || dst < 0 || dst >= t->ndev || src == dst)
        return strata_error_set(err, STRATA_ERR_INVALID, "path: two distinct devices expected");
    if (t->group[src] < 0 || t->group[src] != t->group[dst])
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "path: '%s' and '%s' are not in one server (host data paths are "
                                "inside a server; between servers see strata sim)",
                                t->dname[src], t->dname[dst]);
    if (!(bytes >= 0) || !isfinite(bytes))
        return strata_error_set(err, STRATA_ERR_INVALID, "path: size %g invalid", bytes);
    plan_ctx_t p = {.t = t, .mode = mode, .err = err};
    strata_status_t st = plan_legs(&p, src, dst);
    if (st) return st;
    strata_xfer_t x;
    memset(&x, 0, sizeof(x));
    x.mode = p.mode, x.bytes = bytes;
    strata_topo_router_t *rt;
    if ((st = strata_topo_router_create(t, &rt, err))) return st;
    for (int i = 0; i < p.n && !st; i++)
        st = price_leg(rt, t, &p.leg[i], cpu_copy_Bps, &x, err);
    strata_topo_router_destroy(rt);
    if (st) return st;
    for (int i = 0; i < x.nstages; i++)
        x.time += x.stage[i].time;
    x.copies = x.nstages;
    x.bw = x.time > 0 ? bytes / x.time : 0;
    *out = x;
    return STRATA_OK;
}
