/*
 * rabenseifner.c — Rabenseifner's allreduce (reduce-scatter by recursive
 * halving, then allgather by recursive doubling) and the recursive-halving
 * reduce-scatter alone.
 *
 * Each halving phase a core rank keeps the half of its current range that
 * contains its own blocks, sends the other half to its partner and reduces
 * the half it receives: after log2 pow phases it holds its blocks fully
 * reduced, having moved (P-1)/P of the buffer — bandwidth-optimal like the
 * ring, with only 2 log2 P latency terms. Non-power-of-two P folds as in
 * recdbl.c; since core rank c owns the contiguous real blocks
 * [lo(c), lo(c+1)), every halving split falls on block boundaries.
 *
 * Allreduce works in OUTPUT on P blocks of the buffer; reduce-scatter works
 * in SCRATCH on the P input blocks and copies / sends each rank its block.
 */
#include "sched.h"

typedef struct rab {
    sched_fold_t f;
    uint64_t n; /* element count */
    bool rs;    /* reduce-scatter: blocks are n elements each */
    int work;   /* buffer holding partial sums */
} rab_t;

static void rab_make(const strata_sched_t *s, rab_t *z)
{
    sched_fold_init(&z->f, s->p.nranks);
    z->n = s->p.count;
    z->rs = s->p.coll == STRATA_COLL_REDUCE_SCATTER;
    z->work = z->rs ? STRATA_BUF_SCRATCH : STRATA_BUF_OUTPUT;
}

/* Element offset of real block b. */
static uint64_t boff(const rab_t *z, uint32_t b)
{
    return z->rs ? b * z->n : sched_blk_off(z->n, z->f.P, b);
}

/* Element range of core ranks [a, a+g). */
static void core_range(const rab_t *z, uint32_t a, uint32_t g, uint64_t *off, uint64_t *len)
{
    *off = boff(z, sched_fold_lo(&z->f, a));
    *len = boff(z, sched_fold_lo(&z->f, a + g)) - *off;
}

static void fold_in(const rab_t *z, uint32_t r, sched_sink_t *k)
{
    uint64_t all = z->rs ? z->f.P * z->n : z->n;
    if (r < 2 * z->f.rem && !(r & 1))
        sched_send(k, 0, (int32_t)(r + 1), STRATA_BUF_INPUT, 0, all);
    else if (r < 2 * z->f.rem)
        sched_recv_reduce(k, 0, (int32_t)(r - 1), STRATA_BUF_INPUT, 0, z->work, 0, all);
    else
        sched_copy(k, 0, STRATA_BUF_INPUT, 0, z->work, 0, all);
}

static void halving(const rab_t *z, uint32_t c, uint32_t s, sched_sink_t *k)
{
    uint32_t size = 1u << (z->f.L - s), h = size / 2, a = c & ~(size - 1);
    bool low = c < a + h;
    uint64_t ko, kl, so, sl;
    core_range(z, low ? a : a + h, h, &ko, &kl);
    core_range(z, low ? a + h : a, h, &so, &sl);
    uint32_t peer = sched_fold_real(&z->f, c ^ h);
    sched_send(k, 0, (int32_t)peer, z->work, so, sl);
    sched_recv_reduce(k, 0, (int32_t)peer, z->work, ko, z->work, ko, kl);
}

static void doubling(const rab_t *z, uint32_t c, uint32_t s, sched_sink_t *k)
{
    uint32_t g = 1u << s, p = c ^ g;
    uint64_t mo, ml, po, pl;
    core_range(z, c & ~(g - 1), g, &mo, &ml);
    core_range(z, p & ~(g - 1), g, &po, &pl);
    uint32_t peer = sched_fold_real(&z->f, p);
    sched_send(k, 0, (int32_t)peer, z->work, mo, ml);
    sched_recv(k, 0, (int32_t)peer, z->work, po, pl);
}

/* Reduce-scatter's last phase: every rank gets its block into OUTPUT. */
static void rs_deliver(const rab_t *z, uint32_t r, sched_sink_t *k)
{
    uint64_t n = z->n;
    if (r < 2 * z->f.rem && !(r & 1)) {
        sched_recv(k, 0, (int32_t)(r + 1), STRATA_BUF_OUTPUT, 0, n);
        return;
    }
    if (r < 2 * z->f.rem) sched_send(k, 0, (int32_t)(r - 1), STRATA_BUF_SCRATCH, (r - 1) * n, n);
    sched_copy(k, 0, STRATA_BUF_SCRATCH, r * n, STRATA_BUF_OUTPUT, 0, n);
}

static void rab_phase(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    rab_t z;
    rab_make(s, &z);
    uint32_t L = z.f.L, ph = k->phase;
    int64_t c = sched_fold_core(&z.f, r);
    if (ph == 0) {
        fold_in(&z, r, k);
    } else if (ph <= L) {
        if (c >= 0) halving(&z, (uint32_t)c, ph - 1, k);
    } else if (z.rs) {
        rs_deliver(&z, r, k);
    } else if (ph <= 2 * L) {
        if (c >= 0) doubling(&z, (uint32_t)c, ph - L - 1, k);
    } else if (r < 2 * z.f.rem) {
        if (r & 1)
            sched_send(k, 0, (int32_t)(r - 1), STRATA_BUF_OUTPUT, 0, z.n);
        else
            sched_recv(k, 0, (int32_t)(r + 1), STRATA_BUF_OUTPUT, 0, z.n);
    }
}

static strata_status_t rab_init(strata_sched_t *s, strata_error_t *err)
{
    (void)err;
    rab_t z;
    rab_make(s, &z);
    if (z.rs) {
        s->nphases = z.f.L + 2;
        s->buf[STRATA_BUF_SCRATCH] = (uint64_t)z.f.P * z.n;
    } else {
        s->nphases = 1 + 2 * z.f.L + (z.f.rem > 0);
    }
    return STRATA_OK;
}

const sched_algo_t sched_rabenseifner = {
    .id = STRATA_ALGO_RABENSEIFNER,
    .colls = SCHED_COLL(ALLREDUCE) | SCHED_COLL(REDUCE_SCATTER),
    .init = rab_init,
    .phase = rab_phase,
};
