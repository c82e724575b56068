/*
 * ring.c — ring algorithms, pipelined in chunks: allreduce (reduce-scatter
 * then allgather around the ring, 2(P-1) steps per chunk), reduce-scatter
 * and allgather (P-1 steps per chunk), and broadcast / reduce as a
 * pipelined chain (NCCL's ring broadcast): C + P - 2 phases for C chunks.
 *
 * Chunks: with chunks = C the buffer is cut into C parts that go round the
 * ring one after the other; more chunks cost more latency terms for
 * allreduce but let a chain pipeline. Every phase of a ring moves one block
 * per rank to its successor, so when blocks are equal all reduce-scatter
 * phases share one pattern class and all allgather phases another: the
 * simulator times each once.
 *
 * Channels (group = g > 1: ranks in servers of g consecutive ranks, g
 * dividing P). One ring over all ranks leaves every server through one
 * rank, so through one NIC: a server's network traffic would crowd one of
 * its g NICs. NCCL runs several rings (channels) instead, each on its share
 * of the buffer, and builds each so that it enters and leaves every server
 * through the same NIC, NIC c of one server feeding NIC c of the next: one
 * rail (src/graph/search.cc: a ring is "NET n -> GPU a -> .. -> GPU x ->
 * NET n", started at NIC n's local GPU; ncclTopoCompute relaxes the path
 * type allowed back to NIC n from PIX upwards, through PXN, before it
 * allows another NIC, crossNic). Here: g channels; channel c carries slice
 * c of g of the buffer (the first count % g slices one element larger) and
 * runs the whole ring algorithm on it over its own ring, which visits the
 * servers in order 0, 1, ..., N-1 and inside each enters at local rank c
 * and leaves from local rank c^1 (c's neighbour, for even g): odd channels
 * go up, c, c+1, ..., c-1, even channels down, c, c-1, ..., c+1. Servers
 * put GPUs in pairs behind a PCIe switch with their NICs (DGX H100, DGX
 * A100, HGX H200: 2 GPUs and 2 NICs per switch), so the leaving GPU c^1
 * reaches NIC c through the switch it shares with it: the PIX path NCCL's
 * search takes first. Where it does not share one, NCCL relays the send
 * over NVLink through the GPU next to NIC c (PXN, paths.cc); either way the
 * hop from a server to the next runs from NIC c to NIC c: one rail, one
 * leaf of a rail-optimised fabric, and no spine when the servers share a
 * leaf. The NIC a channel uses is rank c's (sched_chan_*, the simulator
 * routes every send to another server through the NIC on the receiver's
 * rail: sim/route.c). Over the g channels every rank sends one channel's
 * inter-server hop and (g-1) channels' hops to a local neighbour over
 * scale-up links: per phase a rank sends (g-1)/g of a block over NVLink and
 * 1/g towards a NIC, and all g NICs of a server carry equal shares.
 * All channels run their steps in the same bulk-synchronous phases (phase
 * k of every channel is phase k of the schedule), so the phase pattern
 * still repeats and the pattern classes stay as for one ring. g = 1 (the
 * default) is the single ring 0, 1, ..., P-1 the runtime (comm) runs.
 *
 * More NICs than ranks (params rails = R > g, a multiple of g; g = 1 for
 * a GH200 node's one GPU and four NICs). NCCL's search lists the NICs its
 * GPUs reach best and starts channel c at NIC nets[c mod R], taking that
 * NIC's bandwidth off for the channel (search.cc ncclTopoSearchRecNet,
 * v2.24.3-1), so all R carry channels. Here R channels: channel c runs
 * rotation c mod g (as above) on slice c of R and is on rail c (NIC c of
 * every server, strata_sched_channel_t.rail); the simulator sends a
 * rail's hop through the NICs of the rails (sim/route.c).
 *
 * Mesh rings (params rings = K, ring_order). Where a server's accelerators
 * link to each other with no switch (MI300X's xGMI full mesh, DGX-1's
 * hybrid cube-mesh, Ascend's HCCS mesh), one ring uses one link of each
 * GPU's several; the libraries run several rings at once over disjoint
 * links (NCCL's ring search keeps finding rings while link bandwidth is
 * left, src/graph/search.cc). strata_coll_mesh_rings (meshring.c) finds
 * K arc-disjoint directed Hamiltonian rings of the server's links; here
 * ring q visits a server's local ranks in order q (a permutation), rotated
 * per channel as the identity order is above (always upwards: a mesh
 * ring's reverse may use another ring's arcs), so the channels are
 * K x g (K on one server): channel c = q g + h runs ring q rotated by h on
 * slice c of K g of the buffer. On one server every hop of ring q is a
 * link of its own, so a step moves a block of n/(K P) over each of K
 * disjoint links at once; over servers the local hops of ring q's g
 * rotations share ring q's links, (g-1)/g of a block each, and every rank
 * still sends 1/g of a block through its NIC.
 *
 * The reduce-scatter / allgather steps over an arbitrary sub-ring
 * (sched_ring_rs_step, sched_ring_ag_step) are reused by hier.c and torus2d.c.
 */
#include "sched.h"

#include <string.h>

/* ==== Generic sub-ring steps ==== */

/* t mod m, without a division when t < 2m (the ring's arguments: a
 * position plus one step, or plus a rotation below m): the simulator
 * generates every rank's steps of every phase, and the divisions were most
 * of a ring step's cost (bench/README.md, issue 14's second pass). */
static inline uint32_t mod_small(uint32_t t, uint32_t m)
{
    return t < m ? t : t - m < m ? t - m : t % m;
}

/* (a - b) mod m for a, b < m. */
static inline uint32_t sub_mod(uint32_t a, uint32_t b, uint32_t m)
{
    return a >= b ? a - b : a + (m - b);
}

static uint32_t ring_rank(const sched_ring_t *g, uint32_t j)
{
    j = mod_small(j, g->m);
    if (g->group > 1) {
        uint32_t q = j % g->group;
        uint32_t l =
            g->rev ? mod_small(g->rot + g->group - q, g->group) : mod_small(q + g->rot, g->group);
        j = j - j % g->group + (g->order ? (uint32_t)g->order[l] : l);
    } else if (g->order) {
        j = (uint32_t)g->order[j];
    }
    return g->base + j * g->stride;
}

/* Blocks (i - k) mod m and (i - k - 1) mod m of a ring step. */
static void step_blocks(const sched_ring_t *g, uint32_t k, uint32_t *b0_p, uint32_t *b1_p)
{
    if (g->i < g->m && k < g->m) {
        uint32_t b = sub_mod(g->i, k, g->m);
        *b0_p = b;
        *b1_p = b ? b - 1 : g->m - 1;
        return;
    }
    *b0_p = sched_mod((int64_t)g->i - k, g->m);
    *b1_p = sched_mod((int64_t)g->i - k - 1, g->m);
}

void sched_ring_rs_step(const sched_ring_t *g, uint32_t k, int sbuf, int dbuf, sched_sink_t *out)
{
    uint32_t sb, rb;
    step_blocks(g, k, &sb, &rb);
    uint64_t so = g->off + sched_blk_off(g->len, g->m, sb), sl = sched_blk_len(g->len, g->m, sb);
    uint64_t ro = g->off + sched_blk_off(g->len, g->m, rb), rl = sched_blk_len(g->len, g->m, rb);
    sched_send(out, 0, (int32_t)ring_rank(g, g->i + 1), k == 0 ? sbuf : dbuf, so, sl);
    sched_recv_reduce(out, 0, (int32_t)ring_rank(g, g->i + g->m - 1), sbuf, ro, dbuf, ro, rl);
}

void sched_ring_ag_step(const sched_ring_t *g, uint32_t k, int buf, sched_sink_t *out)
{
    uint32_t sb, rb;
    if (k >= 1) {
        step_blocks(g, k - 1, &sb, &rb); /* (i + 1 - k), (i - k) */
    } else {
        sb = sched_mod((int64_t)g->i + 1, g->m);
        rb = sched_mod((int64_t)g->i, g->m);
    }
    uint64_t so = g->off + sched_blk_off(g->len, g->m, sb), sl = sched_blk_len(g->len, g->m, sb);
    uint64_t ro = g->off + sched_blk_off(g->len, g->m, rb), rl = sched_blk_len(g->len, g->m, rb);
    sched_send(out, 0, (int32_t)ring_rank(g, g->i + 1), buf, so, sl);
    sched_recv(out, 0, (int32_t)ring_rank(g, g->i + g->m - 1), buf, ro, rl);
}

/* ==== Channels ==== */

/* Rings (1 without mesh orders), channels per ring (group, or rails when
 * the server has more NICs than ranks: ring_init checks it is a multiple
 * of group) and channels (rings x that). */
static uint32_t nrings(const strata_sched_t *s)
{
    return s->order ? s->p.rings : 1;
}
static uint32_t per_ring(const strata_sched_t *s)
{
    return s->p.rails > s->p.group ? s->p.rails : s->p.group;
}
static uint32_t nchan(const strata_sched_t *s)
{
    return nrings(s) * per_ring(s);
}

/* Local members of one ring order: the server's ranks, or all of them. */
static uint32_t order_len(const strata_sched_t *s)
{
    return s->p.group > 1 ? s->p.group : s->p.nranks;
}

/* Channel c of a schedule: its ring over all P ranks with rank r's
 * position in it, and (off, len) its slice of n elements. s->tab holds
 * the orders (K x L) and then their inverses (K x L). */
static void chan_of(const strata_sched_t *s, uint32_t c, uint32_t r, uint64_t n, sched_ring_t *ch)
{
    uint32_t G = s->p.group, q = c / per_ring(s), h = c % per_ring(s) % G, L = order_len(s),
             NC = nchan(s);
    const int32_t *ord = s->order ? s->tab + (size_t)q * L : NULL;
    const int32_t *inv = s->order ? s->tab + ((size_t)nrings(s) + q) * L : NULL;
    /* rail channels: even ones run down (file comment); a mesh ring keeps
     * its own direction (its reverse may be another ring's arcs) */
    bool rev = G > 1 && !ord && h % 2 == 0;
    uint32_t i;
    if (G > 1) {
        uint32_t loc = inv ? (uint32_t)inv[r % G] : r % G; /* r's place in the order */
        i = r - r % G + (rev ? mod_small(h + G - loc, G) : mod_small(loc + G - h, G));
    } else
        i = inv ? (uint32_t)inv[r] : r;
    *ch = (sched_ring_t){.m = s->p.nranks,
                         .i = i,
                         .base = 0,
                         .stride = 1,
                         .off = sched_blk_off(n, NC, c),
                         .len = sched_blk_len(n, NC, c),
                         .group = G,
                         .rot = h,
                         .rev = rev,
                         .order = ord};
}

/* Rank d places after rank r's position on channel ch's ring (d may be < 0). */
static int32_t chan_peer(const sched_ring_t *ch, int64_t d)
{
    return (int32_t)ring_rank(ch, sched_mod((int64_t)ch->i + d, ch->m));
}

/* The public view of channel c (sched.h): where it enters and leaves every
 * server and the local rank at each position of its order. */
uint32_t strata_sched_channels(const strata_sched_t *s)
{
    if (s && s->algo == &sched_tree) return sched_tree_channels(s);
    if (!s || s->algo != &sched_ring) return 0;
    return nchan(s);
}

/* Channel c's ring seen from its first place (server 0's entry). */
static void chan_start(const strata_sched_t *s, uint32_t c, sched_ring_t *ch)
{
    chan_of(s, c, 0, s->p.count, ch);
    ch->i = 0;
}

strata_status_t strata_sched_channel(const strata_sched_t *s, uint32_t c,
                                     strata_sched_channel_t *ch_p, strata_error_t *err)
{
    uint32_t NC = strata_sched_channels(s);
    if (NC == 0)
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                "channels: only ring schedules and trees over servers are built "
                                "of channels");
    if (c >= NC) return strata_error_set(err, STRATA_ERR_RANGE, "channel %u of %u", c, NC);
    if (s->algo == &sched_tree) {
        sched_tree_channel(s, c, ch_p);
        return STRATA_OK;
    }
    uint32_t G = s->p.group;
    sched_ring_t ch;
    chan_start(s, c, &ch);
    strata_sched_channel_t out = {.entry = (uint32_t)chan_peer(&ch, 0) % G,
                                  .exit = (uint32_t)chan_peer(&ch, (int64_t)G - 1) % G,
                                  .up = !ch.rev,
                                  .servers = s->p.nranks / G,
                                  .off = ch.off,
                                  .count = ch.len,
                                  .tree = -1,
                                  .rail = s->p.rails > G ? (int32_t)(c % per_ring(s)) : -1};
    *ch_p = out;
    return STRATA_OK;
}

uint32_t strata_sched_channel_local(const strata_sched_t *s, uint32_t c, uint32_t pos)
{
    uint32_t NC = strata_sched_channels(s), G = s->p.group;
    if (NC == 0 || c >= NC) return UINT32_MAX;
    if (s->algo == &sched_tree) return sched_tree_channel_local(s, c, pos);
    sched_ring_t ch;
    chan_start(s, c, &ch);
    return (uint32_t)chan_peer(&ch, (int64_t)(pos % G)) % G;
}

/* ==== Allreduce ==== */

static void allreduce(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, per = 2 * (P - 1), C = s->p.chunks;
    uint32_t cu = k->phase / per, st = k->phase % per;
    for (uint32_t c = 0; c < nchan(s); c++) {
        sched_ring_t ch;
        chan_of(s, c, r, s->p.count, &ch);
        if (ch.len == 0) continue; /* fewer elements than channels */
        sched_ring_t g = ch;
        g.off = ch.off + sched_blk_off(ch.len, C, cu);
        g.len = sched_blk_len(ch.len, C, cu);
        if (st < P - 1)
            sched_ring_rs_step(&g, st, STRATA_BUF_INPUT, STRATA_BUF_OUTPUT, k);
        else
            sched_ring_ag_step(&g, st - (P - 1), STRATA_BUF_OUTPUT, k);
    }
}

/* ==== Reduce-scatter: rank r ends with block r; partial sums travel in two
 * scratch slots per channel (received in step k, forwarded in step k+1). ==== */

static uint64_t rs_slot(const strata_sched_t *s)
{
    uint64_t G = nchan(s), C = s->p.chunks, per_chan = (s->p.count + G - 1) / G;
    return (per_chan + C - 1) / C;
}

static void reduce_scatter(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, C = s->p.chunks;
    uint32_t cu = k->phase / (P - 1), st = k->phase % (P - 1);
    uint64_t n = s->p.count, slot = rs_slot(s);
    int last = st == P - 2;
    for (uint32_t c = 0; c < nchan(s); c++) {
        sched_ring_t ch;
        chan_of(s, c, r, n, &ch);
        if (ch.len == 0) continue;
        uint64_t sub = ch.off + sched_blk_off(ch.len, C, cu);
        uint64_t len = sched_blk_len(ch.len, C, cu), scr = 2 * (uint64_t)c * slot;
        uint32_t sb = (uint32_t)chan_peer(&ch, -(int64_t)st - 1);
        uint32_t rb = (uint32_t)chan_peer(&ch, -(int64_t)st - 2);
        if (st == 0)
            sched_send(k, 0, chan_peer(&ch, 1), STRATA_BUF_INPUT, sb * n + sub, len);
        else
            sched_send(k, 0, chan_peer(&ch, 1), STRATA_BUF_SCRATCH, scr + ((st - 1) % 2) * slot,
                       len);
        sched_recv_reduce(k, 0, chan_peer(&ch, -1), STRATA_BUF_INPUT, rb * n + sub,
                          last ? STRATA_BUF_OUTPUT : STRATA_BUF_SCRATCH,
                          last ? sub : scr + (st % 2) * slot, len);
    }
}

/* ==== Allgather ==== */

static void allgather(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, C = s->p.chunks;
    uint32_t cu = k->phase / (P - 1), st = k->phase % (P - 1);
    uint64_t n = s->p.count;
    if (k->phase == 0) sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, r * n, n);
    for (uint32_t c = 0; c < nchan(s); c++) {
        sched_ring_t ch;
        chan_of(s, c, r, n, &ch);
        if (ch.len == 0) continue;
        uint64_t sub = ch.off + sched_blk_off(ch.len, C, cu);
        uint64_t len = sched_blk_len(ch.len, C, cu);
        uint32_t sb = (uint32_t)chan_peer(&ch, -(int64_t)st);
        uint32_t rb = (uint32_t)chan_peer(&ch, -(int64_t)st - 1);
        if (st == 0)
            sched_send(k, 0, chan_peer(&ch, 1), STRATA_BUF_INPUT, sub, len);
        else
            sched_send(k, 0, chan_peer(&ch, 1), STRATA_BUF_OUTPUT, sb * n + sub, len);
        sched_recv(k, 0, chan_peer(&ch, -1), STRATA_BUF_OUTPUT, rb * n + sub, len);
    }
}

/* ==== Broadcast and reduce: a pipelined chain from / to the root, one per
 * channel; d = distance from the root along the channel's ring. ==== */

static uint32_t chan_dist(const strata_sched_t *s, const sched_ring_t *ch, uint32_t c)
{
    sched_ring_t root;
    chan_of(s, c, s->p.root, s->p.count, &root);
    return sched_mod((int64_t)ch->i - root.i, s->p.nranks);
}

static void broadcast(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, C = s->p.chunks;
    uint64_t n = s->p.count;
    if (r == s->p.root && k->phase == 0)
        sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, 0, n);
    for (uint32_t c = 0; c < nchan(s); c++) {
        sched_ring_t ch;
        chan_of(s, c, r, n, &ch);
        uint64_t o = ch.off, l = ch.len;
        uint32_t d = chan_dist(s, &ch, c);
        int64_t cs = (int64_t)k->phase - d, cr = (int64_t)k->phase - (d - 1);
        int sbuf = d == 0 ? STRATA_BUF_INPUT : STRATA_BUF_OUTPUT;
        if (l == 0) continue;
        if (d < P - 1 && cs >= 0 && cs < C)
            sched_send(k, 0, chan_peer(&ch, 1), sbuf, o + sched_blk_off(l, C, (uint64_t)cs),
                       sched_blk_len(l, C, (uint64_t)cs));
        if (d > 0 && cr >= 0 && cr < C)
            sched_recv(k, 0, chan_peer(&ch, -1), STRATA_BUF_OUTPUT,
                       o + sched_blk_off(l, C, (uint64_t)cr), sched_blk_len(l, C, (uint64_t)cr));
    }
}

static void reduce(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, C = s->p.chunks;
    uint64_t n = s->p.count;
    int acc = r == s->p.root ? STRATA_BUF_OUTPUT : STRATA_BUF_SCRATCH;
    for (uint32_t c = 0; c < nchan(s); c++) {
        sched_ring_t ch;
        chan_of(s, c, r, n, &ch);
        uint64_t o = ch.off, l = ch.len;
        uint32_t d = chan_dist(s, &ch, c);
        int64_t cs = (int64_t)k->phase - (P - 1 - d), cr = (int64_t)k->phase - ((int64_t)P - 2 - d);
        if (l == 0) continue;
        if (d > 0 && cs >= 0 && cs < C)
            sched_send(k, 0, chan_peer(&ch, -1), d == P - 1 ? STRATA_BUF_INPUT : acc,
                       o + sched_blk_off(l, C, (uint64_t)cs), sched_blk_len(l, C, (uint64_t)cs));
        if (d < P - 1 && cr >= 0 && cr < C) {
            uint64_t b = o + sched_blk_off(l, C, (uint64_t)cr);
            sched_recv_reduce(k, 0, chan_peer(&ch, 1), STRATA_BUF_INPUT, b, acc, b,
                              sched_blk_len(l, C, (uint64_t)cr));
        }
    }
}

/* ==== Table ==== */

/* Copy and check the mesh ring orders (params): each a permutation of the
 * L local ranks. Fills s->order (the params' copy) and s->tab (orders and
 * inverses as int32). No orders: nothing. O(K L). */
static strata_status_t copy_orders(strata_sched_t *s, strata_error_t *err)
{
    uint32_t K = s->p.rings, L = order_len(s);
    if (K == 0 || !s->p.ring_order) return STRATA_OK;
    if (K > STRATA_MESH_RINGS_MAX)
        return strata_error_set(err, STRATA_ERR_INVALID, "ring: %u mesh rings, at most %d", K,
                                STRATA_MESH_RINGS_MAX);
    s->order = util_malloc((size_t)K * L * sizeof(*s->order));
    s->tab = util_malloc(2 * (size_t)K * L * sizeof(*s->tab));
    if (!s->order || !s->tab) return strata_error_set(err, STRATA_ERR_NOMEM, "ring: out of memory");
    memcpy(s->order, s->p.ring_order, (size_t)K * L * sizeof(*s->order));
    for (size_t x = 0; x < (size_t)K * L; x++)
        s->tab[(size_t)K * L + x] = -1;
    for (uint32_t q = 0; q < K; q++)
        for (uint32_t l = 0; l < L; l++) {
            uint32_t v = s->order[(size_t)q * L + l];
            int32_t *inv = s->tab + ((size_t)K + q) * L;
            if (v >= L || inv[v] >= 0)
                return strata_error_set(err, STRATA_ERR_INVALID,
                                        "ring: mesh ring %u is not an order of %u local ranks "
                                        "(place %u: %u)",
                                        q, L, l, v);
            inv[v] = (int32_t)l;
            s->tab[(size_t)q * L + l] = (int32_t)v;
        }
    return STRATA_OK;
}

static strata_status_t ring_init(strata_sched_t *s, strata_error_t *err)
{
    uint32_t P = s->p.nranks, C = s->p.chunks;
    uint64_t n = s->p.count;
    if (s->p.group == 0) s->p.group = 1;
    if (s->p.group > P || P % s->p.group)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "ring: %u ranks per server does not divide the %u ranks",
                                s->p.group, P);
    if (s->p.rails > s->p.group && (s->p.rails % s->p.group || s->p.group == P))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "ring: %u rails is not a multiple of %u ranks per server over "
                                "several servers",
                                s->p.rails, s->p.group);
    if (s->p.rails <= s->p.group) s->p.rails = 0;
    strata_status_t st = copy_orders(s, err);
    if (st) return st;
    switch (s->p.coll) {
    case STRATA_COLL_ALLREDUCE:
        s->nphases = C * 2 * (P - 1);
        break;
    case STRATA_COLL_REDUCE_SCATTER:
        s->nphases = C * (P - 1);
        s->buf[STRATA_BUF_SCRATCH] = 2 * (uint64_t)nchan(s) * rs_slot(s);
        break;
    case STRATA_COLL_ALLGATHER:
        s->nphases = C * (P - 1);
        break;
    case STRATA_COLL_BROADCAST:
        s->nphases = C + P - 2;
        break;
    case STRATA_COLL_REDUCE:
        s->nphases = C + P - 2;
        s->buf[STRATA_BUF_SCRATCH] = n;
        break;
    default:
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED, "ring: unsupported collective");
    }
    return STRATA_OK;
}

static void ring_phase(const strata_sched_t *s, uint32_t agent, sched_sink_t *k)
{
    switch (s->p.coll) {
    case STRATA_COLL_ALLREDUCE:
        allreduce(s, agent, k);
        break;
    case STRATA_COLL_REDUCE_SCATTER:
        reduce_scatter(s, agent, k);
        break;
    case STRATA_COLL_ALLGATHER:
        allgather(s, agent, k);
        break;
    case STRATA_COLL_BROADCAST:
        broadcast(s, agent, k);
        break;
    case STRATA_COLL_REDUCE:
        reduce(s, agent, k);
        break;
    default:
        break;
    }
}

/* Equal blocks (every channel's slice, chunk and block of one size) make
 * every reduce-scatter phase alike (class 0) and every allgather phase
 * alike (class 1); otherwise each phase is its own class. */
static uint32_t ring_class(const strata_sched_t *s, uint32_t phase)
{
    uint32_t P = s->p.nranks;
    uint64_t n = s->p.count, GC = (uint64_t)nchan(s) * s->p.chunks;
    switch (s->p.coll) {
    case STRATA_COLL_ALLREDUCE:
        if (n % (GC * P) == 0) return (phase % (2 * (P - 1))) < P - 1 ? 0 : 1;
        break;
    case STRATA_COLL_REDUCE_SCATTER:
    case STRATA_COLL_ALLGATHER:
        if (n % GC == 0) return 0;
        break;
    default:
        break;
    }
    return phase + 2;
}

const sched_algo_t sched_ring = {
    .id = STRATA_ALGO_RING,
    .colls = SCHED_COLL(ALLREDUCE) | SCHED_COLL(REDUCE_SCATTER) | SCHED_COLL(ALLGATHER) |
             SCHED_COLL(BROADCAST) | SCHED_COLL(REDUCE),
    .init = ring_init,
    .phase = ring_phase,
    .phase_class = ring_class,
};
