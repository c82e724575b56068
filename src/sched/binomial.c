/*
 * binomial.c — binomial-tree broadcast and reduce (ceil(log2 P) phases
 * each), allreduce as reduce to rank 0 then broadcast, and barrier as the
 * same with empty messages.
 *
 * Ranks are numbered relative to the root, v = (r - root) mod P. Broadcast
 * phase k: every v < 2^k that holds the data sends to v + 2^k. Reduce is the
 * mirror: in phase k, v with bit k set (and lower bits clear) sends its
 * partial sum to v - 2^k. Non-root partial sums live in SCRATCH (REDUCE) or
 * OUTPUT (ALLREDUCE). Latency: log2 P steps, each carrying the whole
 * buffer, so it is the small-message choice (MPICH, Open MPI tuned).
 */
#include "sched.h"

static uint32_t nlevels(const strata_sched_t *s)
{
    return sched_log2_ceil(s->p.nranks);
}

/* Has v received a partial sum in some phase before k? */
static bool got_before(uint32_t v, uint32_t k, uint32_t P)
{
    for (uint32_t j = 0; j < k; j++)
        if ((v & ((2u << j) - 1)) == 0 && v + (1u << j) < P) return true;
    return false;
}

/* Reduce phase k toward `root`; acc is where partial sums accumulate. */
static void reduce_phase(const strata_sched_t *s, uint32_t r, uint32_t k, uint32_t root, int acc,
                         sched_sink_t *out)
{
    uint32_t P = s->p.nranks, v = sched_mod((int64_t)r - root, P), m = 1u << k;
    uint64_t n = s->p.count;
    if ((v & (2 * m - 1)) == m) {
        int src = got_before(v, k, P) ? acc : STRATA_BUF_INPUT;
        sched_send(out, 0, (int32_t)((v - m + root) % P), src, 0, n);
    } else if ((v & (2 * m - 1)) == 0 && v + m < P) {
        int src = got_before(v, k, P) ? acc : STRATA_BUF_INPUT;
        sched_recv_reduce(out, 0, (int32_t)((v + m + root) % P), src, 0, acc, 0, n);
    }
}

/* Broadcast phase k from `root`; src is where the root's data is. */
static void bcast_phase(const strata_sched_t *s, uint32_t r, uint32_t k, uint32_t root, int src,
                        sched_sink_t *out)
{
    uint32_t P = s->p.nranks, v = sched_mod((int64_t)r - root, P), m = 1u << k;
    uint64_t n = s->p.count;
    if (v < m && v + m < P)
        sched_send(out, 0, (int32_t)((v + m + root) % P), v == 0 ? src : STRATA_BUF_OUTPUT, 0, n);
    else if (v >= m && v < 2 * m)
        sched_recv(out, 0, (int32_t)((v - m + root) % P), STRATA_BUF_OUTPUT, 0, n);
}

static strata_status_t bin_init(strata_sched_t *s, strata_error_t *err)
{
    (void)err;
    uint32_t L = nlevels(s);
    bool two = s->p.coll == STRATA_COLL_ALLREDUCE || s->p.coll == STRATA_COLL_BARRIER;
    s->nphases = two ? 2 * L : L;
    if (s->p.coll == STRATA_COLL_REDUCE) s->buf[STRATA_BUF_SCRATCH] = s->p.count;
    return STRATA_OK;
}

static void bin_phase(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t L = nlevels(s), ph = k->phase, root = s->p.root;
    uint64_t n = s->p.count;
    switch (s->p.coll) {
    case STRATA_COLL_BROADCAST:
        if (ph == 0 && r == root) sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, 0, n);
        bcast_phase(s, r, ph, root, STRATA_BUF_INPUT, k);
        break;
    case STRATA_COLL_REDUCE:
        reduce_phase(s, r, ph, root, r == root ? STRATA_BUF_OUTPUT : STRATA_BUF_SCRATCH, k);
        if (ph == L - 1 && r == root && s->p.nranks == 1)
            sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, 0, n);
        break;
    default: /* ALLREDUCE, BARRIER: reduce to 0 in OUTPUT, then broadcast */
        if (ph < L)
            reduce_phase(s, r, ph, 0, STRATA_BUF_OUTPUT, k);
        else
            bcast_phase(s, r, ph - L, 0, STRATA_BUF_OUTPUT, k);
        break;
    }
}

const sched_algo_t sched_binomial = {
    .id = STRATA_ALGO_BINOMIAL,
    .colls =
        SCHED_COLL(BROADCAST) | SCHED_COLL(REDUCE) | SCHED_COLL(ALLREDUCE) | SCHED_COLL(BARRIER),
    .init = bin_init,
    .phase = bin_phase,
};
