/*
 * bruck.c — Bruck's algorithms (Bruck et al. 1997): allgather and alltoall
 * in ceil(log2 P) rounds for any P, and the dissemination barrier.
 *
 * Both work in a rotated scratch copy where position j of rank r stands for
 * rank r + j. Allgather round k sends the first min(2^k, P-2^k) blocks to
 * rank r - 2^k and receives as many behind them from r + 2^k; a final local
 * rotation puts blocks in rank order. Alltoall round k sends every block
 * whose position has bit k set to r + 2^k — strided runs described by one
 * step (nblk runs of 2^k blocks every 2^(k+1)), plus one step for a short
 * last run — receives the same positions from r - 2^k into a staging area,
 * then unpacks; the last phase reverses positions into rank order with a
 * negative stride. Latency log2 P, bandwidth (P/2) log2 P blocks: the
 * small-message alltoall (MPICH, cpu-collectives.md).
 */
#include "sched.h"

/* ==== Allgather ==== */

static void ag_phase(const strata_sched_t *s, uint32_t r, uint32_t L, sched_sink_t *k)
{
    uint32_t P = s->p.nranks;
    uint64_t n = s->p.count;
    if (k->phase < L) {
        uint32_t d = 1u << k->phase, m = d < P - d ? d : P - d;
        if (k->phase == 0) sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_SCRATCH, 0, n);
        sched_send(k, 0, (int32_t)sched_mod((int64_t)r - d, P),
                   k->phase == 0 ? STRATA_BUF_INPUT : STRATA_BUF_SCRATCH, 0, m * n);
        sched_recv(k, 0, (int32_t)((r + d) % P), STRATA_BUF_SCRATCH, d * n, m * n);
        return;
    }
    /* position j holds rank (r + j) % P */
    sched_copy(k, 0, STRATA_BUF_SCRATCH, 0, STRATA_BUF_OUTPUT, r * n, (P - r) * n);
    if (r > 0) sched_copy(k, 0, STRATA_BUF_SCRATCH, (P - r) * n, STRATA_BUF_OUTPUT, 0, r * n);
}

/* ==== Alltoall ==== */

static void strided(sched_sink_t *k, int op, uint32_t after, int32_t peer, int sb, uint64_t so,
                    int64_t ss, int db, uint64_t doff, int64_t ds, uint64_t count, uint64_t nblk)
{
    strata_step_t t = {.op = (uint8_t)op,
                       .src_buf = (uint8_t)sb,
                       .dst_buf = (uint8_t)db,
                       .peer = peer,
                       .after = after,
                       .src_off = so,
                       .dst_off = doff,
                       .count = count,
                       .nblk = nblk,
                       .src_stride = ss,
                       .dst_stride = ds};
    sched_emit(k, &t);
}

static void a2a_round(const strata_sched_t *s, uint32_t r, uint32_t rk, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, d = 1u << rk;
    uint64_t n = s->p.count, T = (uint64_t)P * n; /* staging area after the working copy */
    uint64_t nfull = P >= 2 * d ? (P - 2 * d) / (2 * d) + 1 : 0, ps = d + nfull * 2 * d;
    uint64_t plen = ps < P ? P - ps : 0, full = nfull * d * n;
    int32_t to = (int32_t)((r + d) % P), from = (int32_t)sched_mod((int64_t)r - d, P);
    int W = STRATA_BUF_SCRATCH;
    uint32_t nsteps = 0;
    if (nfull)
        strided(k, STRATA_STEP_SEND, 0, to, W, d * n, 2 * d * n, W, 0, 0, d * n, nfull), nsteps++;
    if (plen) sched_send(k, 0, to, W, ps * n, plen * n), nsteps++;
    if (nfull) sched_recv(k, 0, from, W, T, full), nsteps++;
    if (plen) sched_recv(k, 0, from, W, T + full, plen * n), nsteps++;
    if (nfull)
        strided(k, STRATA_STEP_COPY, nsteps, -1, W, T, d * n, W, d * n, 2 * d * n, d * n, nfull);
    if (plen) sched_copy(k, nsteps, W, T + full, W, ps * n, plen * n);
}

static void a2a_phase(const strata_sched_t *s, uint32_t r, uint32_t L, sched_sink_t *k)
{
    uint32_t P = s->p.nranks;
    uint64_t n = s->p.count;
    int W = STRATA_BUF_SCRATCH;
    if (k->phase == 0) { /* W[j] = in[(r + j) % P] */
        sched_copy(k, 0, STRATA_BUF_INPUT, r * n, W, 0, (P - r) * n);
        if (r > 0) sched_copy(k, 0, STRATA_BUF_INPUT, 0, W, (P - r) * n, r * n);
    } else if (k->phase <= L) {
        a2a_round(s, r, k->phase - 1, k);
    } else { /* out[i] = W[(r - i) mod P] */
        strided(k, STRATA_STEP_COPY, 0, -1, W, r * n, -(int64_t)n, STRATA_BUF_OUTPUT, 0, (int64_t)n,
                n, r + 1);
        if (r + 1 < P)
            strided(k, STRATA_STEP_COPY, 0, -1, W, (P - 1) * n, -(int64_t)n, STRATA_BUF_OUTPUT,
                    (r + 1) * n, (int64_t)n, n, P - 1 - r);
    }
}

/* ==== Table ==== */

static strata_status_t bruck_init(strata_sched_t *s, strata_error_t *err)
{
    (void)err;
    uint32_t P = s->p.nranks, L = sched_log2_ceil(P);
    uint64_t n = s->p.count;
    switch (s->p.coll) {
    case STRATA_COLL_ALLGATHER:
        s->nphases = L + 1;
        s->buf[STRATA_BUF_SCRATCH] = (uint64_t)P * n;
        break;
    case STRATA_COLL_ALLTOALL:
        s->nphases = L + 2;
        s->buf[STRATA_BUF_SCRATCH] = 2 * (uint64_t)P * n;
        break;
    default:
        s->nphases = L;
        break; /* barrier */
    }
    return STRATA_OK;
}

static void bruck_phase(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, L = sched_log2_ceil(P);
    switch (s->p.coll) {
    case STRATA_COLL_ALLGATHER:
        ag_phase(s, r, L, k);
        break;
    case STRATA_COLL_ALLTOALL:
        a2a_phase(s, r, L, k);
        break;
    default: /* dissemination barrier */
        sched_send(k, 0, (int32_t)((r + (1u << k->phase)) % P), STRATA_BUF_INPUT, 0, 0);
        sched_recv(k, 0, (int32_t)sched_mod((int64_t)r - (1 << k->phase), P), STRATA_BUF_OUTPUT, 0,
                   0);
        break;
    }
}

const sched_algo_t sched_bruck = {
    .id = STRATA_ALGO_BRUCK,
    .colls = SCHED_COLL(ALLGATHER) | SCHED_COLL(ALLTOALL) | SCHED_COLL(BARRIER),
    .init = bruck_init,
    .phase = bruck_phase,
};
