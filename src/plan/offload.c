/*
 * offload.c — memory tiers for the optimizer states: HBM (the default),
 * host DRAM, CXL memory (ZeRO-Offload, Ren et al., "ZeRO-Offload:
 * Democratizing Billion-Scale Model Training", USENIX ATC'21: optimizer
 * states and the Adam step on the CPU side, gradients sent down and
 * updated 16-bit weights sent up every step).
 *
 * Figures come from the cluster's host data paths (docs/topology.md): each
 * GPU of the first server offloads into its nearest memory of the tier
 * (fewest hops; host DRAM = a memory device not on a CXL link, CXL = one on
 * a link whose kind is cxl*). Their pinned DMA paths (strata_topo_xfer) are
 * routed together and each channel shared evenly among the GPUs crossing
 * it; the worst GPU's share is the transfer bandwidth (two GPUs behind one
 * PCIe switch split its uplink; a CXL x8 link is shared by every GPU of
 * the socket). The CPU's Adam streams the states through the tier's memory
 * link in both directions, shared by the GPUs offloading into it: rate =
 * 2 x per-direction bandwidth / users (a DDR bus's halves added back up).
 * Transfers are charged exposed (ZeRO-Offload overlaps part of the gradient
 * copy with the backward pass; not modelled, an upper bound).
 *
 * Capacity: every GPU's offloaded states (fp32 master weights and Adam's
 * two moments of its ZeRO partition) live in its tier memory, so a memory
 * used by u GPUs holds u times a GPU's states; plan_offload_share gives
 * each GPU capacity / u of the fullest memory (the cluster file's
 * capacity_gb), and plan_memory refuses a plan whose states exceed it.
 */
#include "plan.h"

#include <math.h>
#include <string.h>

/* Whether memory device m hangs on a CXL link (its links' kinds). */
static bool on_cxl(const strata_topo_t *t, int32_t m)
{
    const int32_t *nbr, *chan;
    int32_t deg = strata_topo_adjacency(t, m, &nbr, &chan);
    for (int32_t i = 0; i < deg; i++)
        if (strncmp(strata_topo_link(t, strata_topo_chan_link(chan[i])).kind, "cxl", 3) == 0)
            return true;
    return false;
}

/* Nearest memory of the tier from accelerator a inside its server (BFS on
 * the public adjacency; ties to the lower id), or -1. */
static int32_t tier_memory(const strata_topo_t *t, int32_t a, bool cxl, int32_t *dist,
                           int32_t *queue)
{
    int32_t n = strata_topo_device_count(t), head = 0, tail = 0, best = -1;
    int32_t g = strata_topo_device(t, a).group;
    for (int32_t v = 0; v < n; v++)
        dist[v] = -1;
    dist[a] = 0, queue[tail++] = a;
    while (head < tail && best < 0) {
        int32_t u = queue[head++];
        const int32_t *nbr, *chan;
        int32_t deg = strata_topo_adjacency(t, u, &nbr, &chan);
        for (int32_t i = 0; i < deg && best < 0; i++) {
            int32_t w = nbr[i];
            strata_topo_device_t d = strata_topo_device(t, w);
            if (dist[w] >= 0 || d.group != g) continue;
            dist[w] = dist[u] + 1, queue[tail++] = w;
            if (d.kind == STRATA_DEV_MEMORY && on_cxl(t, w) == cxl) best = w;
        }
    }
    return best;
}

typedef struct off_scratch {
    int32_t *dist, *queue, *mem;
    double *load, *users;
    strata_xfer_t *x;
} off_scratch_t;

static void off_free(off_scratch_t *s)
{
    util_free(s->dist), util_free(s->queue), util_free(s->mem), util_free(s->load);
    util_free(s->users), util_free(s->x);
}

/* Route every GPU of server 0 to its tier memory; fill the per-channel
 * and per-memory user counts. Returns the number of GPUs routed. */
static strata_status_t route_all(const strata_topo_t *t, bool cxl, off_scratch_t *s, int *n_p,
                                 strata_error_t *err)
{
    int32_t P = strata_topo_endpoint_count(t),
            g0 = strata_topo_device(t, strata_topo_endpoint(t, 0)).group;
    int n = 0;
    for (int32_t r = 0; r < P; r++) {
        int32_t a = strata_topo_endpoint(t, r);
        if (strata_topo_device(t, a).group != g0) continue;
        int32_t m = tier_memory(t, a, cxl, s->dist, s->queue);
        if (m < 0)
            return strata_error_set(err, STRATA_ERR_INVALID,
                                    "plan: offload=%s: '%s' has no %s in its server (a %s device "
                                    "of the cluster file; pcie-8gpu-2s has both)",
                                    cxl ? "cxl" : "host", strata_topo_device(t, a).name,
                                    cxl ? "CXL memory" : "host memory",
                                    cxl ? "cxl-memory" : "memory");
        strata_status_t st = strata_topo_xfer(t, a, m, STRATA_XFER_PINNED, 0, 0, &s->x[n], err);
        if (st) return st;
        for (int32_t h = 0; h < s->x[n].nhops; h++)
            s->load[s->x[n].hop[h].chan] += 1;
        s->mem[n] = m, s->users[m] += 1;
        n++;
    }
    *n_p = n;
    return STRATA_OK;
}

/* Each GPU's share of the tier's capacity (plan.h). Routing is not needed:
 * the nearest memory of the tier and its user count are enough. */
double plan_offload_share(const strata_topo_t *t, int kind)
{
    int32_t n = strata_topo_device_count(t), P = strata_topo_endpoint_count(t);
    int32_t *dist = util_malloc((size_t)n * sizeof(int32_t) + 1),
            *queue = util_malloc((size_t)n * sizeof(int32_t) + 1);
    double *users = util_calloc((size_t)n + 1, sizeof(double)), share = INFINITY;
    if (!dist || !queue || !users || P == 0) share = 0;
    int32_t g0 = P ? strata_topo_device(t, strata_topo_endpoint(t, 0)).group : -1;
    for (int pass = 0; pass < 2 && share > 0; pass++)
        for (int32_t r = 0; r < P && share > 0; r++) {
            int32_t a = strata_topo_endpoint(t, r);
            if (strata_topo_device(t, a).group != g0) continue;
            int32_t m = tier_memory(t, a, kind == STRATA_PLAN_OFFLOAD_CXL, dist, queue);
            double cap = m < 0 ? 0 : strata_topo_device(t, m).capacity;
            if (cap <= 0)
                share = 0;
            else if (pass == 0)
                users[m] += 1; /* count users, then divide */
            else
                share = fmin(share, cap / users[m]);
        }
    util_free(dist), util_free(queue), util_free(users);
    return isfinite(share) ? share : 0;
}

strata_status_t plan_offload_tier(const strata_plan_ctx_t *ctx, int kind, double *xfer_bw_p,
                                  double *mem_bw_p, strata_error_t *err)
{
    const strata_topo_t *t = ctx->topo;
    int32_t n = strata_topo_device_count(t), P = strata_topo_endpoint_count(t);
    off_scratch_t s = {util_malloc((size_t)n * sizeof(int32_t)),
                       util_malloc((size_t)n * sizeof(int32_t)),
                       util_malloc((size_t)P * sizeof(int32_t)),
                       util_calloc(2 * (size_t)strata_topo_link_count(t), sizeof(double)),
                       util_calloc((size_t)n, sizeof(double)),
                       util_malloc((size_t)P * sizeof(strata_xfer_t))};
    if (!s.dist || !s.queue || !s.mem || !s.load || !s.users || !s.x) {
        off_free(&s);
        return strata_error_set(err, STRATA_ERR_NOMEM, "plan: out of memory");
    }
    int ng = 0;
    strata_status_t st = route_all(t, kind == STRATA_PLAN_OFFLOAD_CXL, &s, &ng, err);
    double xfer = INFINITY, mem = INFINITY;
    for (int i = 0; i < ng && !st; i++) {
        for (int32_t h = 0; h < s.x[i].nhops; h++) {
            const strata_xfer_hop_t *hp = &s.x[i].hop[h];
            xfer = fmin(xfer, hp->bw / s.load[hp->chan]);
        }
        const int32_t *nbr, *chan;
        strata_topo_adjacency(t, s.mem[i], &nbr, &chan);
        mem = fmin(mem, 2 * strata_topo_chan_bw(t, chan[0]) / s.users[s.mem[i]]);
    }
    off_free(&s);
    if (st) return st;
    *xfer_bw_p = xfer, *mem_bw_p = mem;
    return STRATA_OK;
}
