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
 * The reduce-scatter / allgather steps over an arbitrary sub-ring
 * (sched_ring_rs_step, sched_ring_ag_step) are reused by hier.c and torus2d.c.
 */
#include "sched.h"

/* ==== Generic sub-ring steps ==== */

static uint32_t ring_rank(const sched_ring_t *g, uint32_t j)
{
    return g->base + (j % g->m) * g->stride;
}

void sched_ring_rs_step(const sched_ring_t *g, uint32_t k, int sbuf, int dbuf, sched_sink_t *out)
{
    uint32_t sb = sched_mod((int64_t)g->i - k, g->m), rb = sched_mod((int64_t)g->i - k - 1, g->m);
    uint64_t so = g->off + sched_blk_off(g->len, g->m, sb), sl = sched_blk_len(g->len, g->m, sb);
    uint64_t ro = g->off + sched_blk_off(g->len, g->m, rb), rl = sched_blk_len(g->len, g->m, rb);
    sched_send(out, 0, (int32_t)ring_rank(g, g->i + 1), k == 0 ? sbuf : dbuf, so, sl);
    sched_recv_reduce(out, 0, (int32_t)ring_rank(g, g->i + g->m - 1), sbuf, ro, dbuf, ro, rl);
}

void sched_ring_ag_step(const sched_ring_t *g, uint32_t k, int buf, sched_sink_t *out)
{
    uint32_t sb = sched_mod((int64_t)g->i + 1 - k, g->m), rb = sched_mod((int64_t)g->i - k, g->m);
    uint64_t so = g->off + sched_blk_off(g->len, g->m, sb), sl = sched_blk_len(g->len, g->m, sb);
    uint64_t ro = g->off + sched_blk_off(g->len, g->m, rb), rl = sched_blk_len(g->len, g->m, rb);
    sched_send(out, 0, (int32_t)ring_rank(g, g->i + 1), buf, so, sl);
    sched_recv(out, 0, (int32_t)ring_rank(g, g->i + g->m - 1), buf, ro, rl);
}

/* ==== Allreduce ==== */

static void allreduce(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, per = 2 * (P - 1), C = s->p.chunks;
    uint32_t c = k->phase / per, st = k->phase % per;
    sched_ring_t g = {.m = P,
                      .i = r,
                      .base = 0,
                      .stride = 1,
                      .off = sched_blk_off(s->p.count, C, c),
                      .len = sched_blk_len(s->p.count, C, c)};
    if (st < P - 1)
        sched_ring_rs_step(&g, st, STRATA_BUF_INPUT, STRATA_BUF_OUTPUT, k);
    else
        sched_ring_ag_step(&g, st - (P - 1), STRATA_BUF_OUTPUT, k);
}

/* ==== Reduce-scatter: rank r ends with block r; partial sums travel in two
 * scratch slots (received in step k, forwarded in step k+1). ==== */

static void reduce_scatter(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, C = s->p.chunks;
    uint32_t c = k->phase / (P - 1), st = k->phase % (P - 1);
    uint64_t n = s->p.count, sub = sched_blk_off(n, C, c), len = sched_blk_len(n, C, c);
    uint64_t slot = (n + C - 1) / C;
    uint32_t sb = sched_mod((int64_t)r - st - 1, P), rb = sched_mod((int64_t)r - st - 2, P);
    if (st == 0)
        sched_send(k, 0, (int32_t)((r + 1) % P), STRATA_BUF_INPUT, sb * n + sub, len);
    else
        sched_send(k, 0, (int32_t)((r + 1) % P), STRATA_BUF_SCRATCH, ((st - 1) % 2) * slot, len);
    int last = st == P - 2;
    sched_recv_reduce(k, 0, (int32_t)((r + P - 1) % P), STRATA_BUF_INPUT, rb * n + sub,
                      last ? STRATA_BUF_OUTPUT : STRATA_BUF_SCRATCH, last ? sub : (st % 2) * slot,
                      len);
}

/* ==== Allgather ==== */

static void allgather(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, C = s->p.chunks;
    uint32_t c = k->phase / (P - 1), st = k->phase % (P - 1);
    uint64_t n = s->p.count, sub = sched_blk_off(n, C, c), len = sched_blk_len(n, C, c);
    uint32_t sb = sched_mod((int64_t)r - st, P), rb = sched_mod((int64_t)r - st - 1, P);
    if (k->phase == 0) sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, r * n, n);
    if (st == 0)
        sched_send(k, 0, (int32_t)((r + 1) % P), STRATA_BUF_INPUT, sub, len);
    else
        sched_send(k, 0, (int32_t)((r + 1) % P), STRATA_BUF_OUTPUT, sb * n + sub, len);
    sched_recv(k, 0, (int32_t)((r + P - 1) % P), STRATA_BUF_OUTPUT, rb * n + sub, len);
}

/* ==== Broadcast and reduce: a pipelined chain from / to the root ==== */

static void broadcast(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, C = s->p.chunks, d = sched_mod((int64_t)r - s->p.root, P);
    uint64_t n = s->p.count;
    int64_t cs = (int64_t)k->phase - d, cr = (int64_t)k->phase - (d - 1);
    int sbuf = d == 0 ? STRATA_BUF_INPUT : STRATA_BUF_OUTPUT;
    if (d == 0 && k->phase == 0) sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, 0, n);
    if (d < P - 1 && cs >= 0 && cs < C)
        sched_send(k, 0, (int32_t)((r + 1) % P), sbuf, sched_blk_off(n, C, (uint64_t)cs),
                   sched_blk_len(n, C, (uint64_t)cs));
    if (d > 0 && cr >= 0 && cr < C)
        sched_recv(k, 0, (int32_t)((r + P - 1) % P), STRATA_BUF_OUTPUT,
                   sched_blk_off(n, C, (uint64_t)cr), sched_blk_len(n, C, (uint64_t)cr));
}

static void reduce(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, C = s->p.chunks, d = sched_mod((int64_t)r - s->p.root, P);
    uint64_t n = s->p.count;
    int acc = d == 0 ? STRATA_BUF_OUTPUT : STRATA_BUF_SCRATCH;
    int64_t cs = (int64_t)k->phase - (P - 1 - d), cr = (int64_t)k->phase - ((int64_t)P - 2 - d);
    if (d > 0 && cs >= 0 && cs < C)
        sched_send(k, 0, (int32_t)((r + P - 1) % P), d == P - 1 ? STRATA_BUF_INPUT : acc,
                   sched_blk_off(n, C, (uint64_t)cs), sched_blk_len(n, C, (uint64_t)cs));
    if (d < P - 1 && cr >= 0 && cr < C) {
        uint64_t o = sched_blk_off(n, C, (uint64_t)cr);
        sched_recv_reduce(k, 0, (int32_t)((r + 1) % P), STRATA_BUF_INPUT, o, acc, o,
                          sched_blk_len(n, C, (uint64_t)cr));
    }
}

/* ==== Table ==== */

static strata_status_t ring_init(strata_sched_t *s, strata_error_t *err)
{
    uint32_t P = s->p.nranks, C = s->p.chunks;
    uint64_t n = s->p.count;
    switch (s->p.coll) {
    case STRATA_COLL_ALLREDUCE:
        s->nphases = C * 2 * (P - 1);
        break;
    case STRATA_COLL_REDUCE_SCATTER:
        s->nphases = C * (P - 1);
        s->buf[STRATA_BUF_SCRATCH] = 2 * ((n + C - 1) / C);
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

/* Equal blocks make every reduce-scatter phase alike (class 0) and every
 * allgather phase alike (class 1); otherwise each phase is its own class. */
static uint32_t ring_class(const strata_sched_t *s, uint32_t phase)
{
    uint32_t P = s->p.nranks, C = s->p.chunks;
    uint64_t n = s->p.count;
    switch (s->p.coll) {
    case STRATA_COLL_ALLREDUCE:
        if (n % ((uint64_t)C * P) == 0) return (phase % (2 * (P - 1))) < P - 1 ? 0 : 1;
        break;
    case STRATA_COLL_REDUCE_SCATTER:
    case STRATA_COLL_ALLGATHER:
        if (n % C == 0) return 0;
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
