/*
 * pairwise.c — pairwise-exchange alltoall and the direct send/recv shift.
 *
 * Alltoall: in phase k (0..P-2) rank r sends its block for rank r+k+1 and
 * receives from rank r-k-1 (mod P), so every phase is a permutation and no
 * link carries two messages of one rank at once (MPICH's pairwise algorithm
 * for long messages, cpu-collectives.md). When P is a power of two, MPICH
 * pairs ranks by exclusive or instead (MPIR_Alltoall_intra_pairwise: "use
 * exclusive-or algorithm", src = dst = rank ^ i): in phase k rank r
 * exchanges with r XOR (k+1), both ways at once, and so does this
 * schedule. The own block is copied locally in phase 0. All phases move
 * equal blocks: one pattern class would be wrong though (the permutation
 * differs), so each phase is its own class; the simulator proves which
 * phases take the same time from the cluster's symmetry (sim/xorsym.c).
 *
 * Sendrecv: one phase, rank r sends its buffer to r+1 and receives from r-1
 * (nccl-tests sendrecv_perf's ring shift).
 */
#include "sched.h"

static strata_status_t pw_init(strata_sched_t *s, strata_error_t *err)
{
    (void)err;
    s->nphases = s->p.coll == STRATA_COLL_ALLTOALL ? s->p.nranks - 1 : 1;
    return STRATA_OK;
}

static void pw_phase(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks;
    uint64_t n = s->p.count;
    if (s->p.coll == STRATA_COLL_SENDRECV) {
        sched_send(k, 0, (int32_t)((r + 1) % P), STRATA_BUF_INPUT, 0, n);
        sched_recv(k, 0, (int32_t)((r + P - 1) % P), STRATA_BUF_OUTPUT, 0, n);
        return;
    }
    uint32_t to = (r + k->phase + 1) % P, from = sched_mod((int64_t)r - k->phase - 1, P);
    if ((P & (P - 1)) == 0) to = from = r ^ (k->phase + 1);
    if (k->phase == 0) sched_copy(k, 0, STRATA_BUF_INPUT, r * n, STRATA_BUF_OUTPUT, r * n, n);
    sched_send(k, 0, (int32_t)to, STRATA_BUF_INPUT, to * n, n);
    sched_recv(k, 0, (int32_t)from, STRATA_BUF_OUTPUT, from * n, n);
}

const sched_algo_t sched_pairwise = {
    .id = STRATA_ALGO_PAIRWISE,
    .colls = SCHED_COLL(ALLTOALL) | SCHED_COLL(SENDRECV),
    .init = pw_init,
    .phase = pw_phase,
};
