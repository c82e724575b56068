/*
 * recdbl.c — recursive doubling: allreduce and allgather in log2 P
 * exchange phases, barrier the same with empty messages.
 *
 * Non-power-of-two P uses the standard fold (MPICH, Rabenseifner 2004;
 * cpu-collectives.md): with P = pow + rem, ranks 2i and 2i+1 (i < rem) pair
 * up before the exchanges — the even one hands its data to the odd one and
 * sits out — and the odd one hands the result back at the end. That costs
 * two extra steps but keeps every exchange between a power-of-two set of
 * core ranks. The fold helpers are shared with rabenseifner.c.
 *
 * Allreduce exchanges the whole buffer in each phase (latency-optimal,
 * bandwidth log2 P times the buffer); allgather doubles the held range.
 */
#include "sched.h"

void sched_fold_init(sched_fold_t *f, uint32_t P)
{
    f->P = P;
    f->L = sched_log2_floor(P);
    f->pow = 1u << f->L;
    f->rem = P - f->pow;
}

int64_t sched_fold_core(const sched_fold_t *f, uint32_t r)
{
    if (r < 2 * f->rem) return (r & 1) ? (int64_t)(r / 2) : -1;
    return (int64_t)(r - f->rem);
}

uint32_t sched_fold_real(const sched_fold_t *f, uint32_t core)
{
    return core < f->rem ? 2 * core + 1 : core + f->rem;
}

uint32_t sched_fold_lo(const sched_fold_t *f, uint32_t core)
{
    return core < f->rem ? 2 * core : core + f->rem;
}

/* Phase 0 for reductions: evens hand their input to odds; others copy. */
static void fold_in(const sched_fold_t *f, uint32_t r, uint64_t n, sched_sink_t *k)
{
    if (r < 2 * f->rem && !(r & 1))
        sched_send(k, 0, (int32_t)(r + 1), STRATA_BUF_INPUT, 0, n);
    else if (r < 2 * f->rem)
        sched_recv_reduce(k, 0, (int32_t)(r - 1), STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, 0, n);
    else
        sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, 0, n);
}

/* Last phase: odds hand the finished OUTPUT back to their evens. */
static void fold_out(const sched_fold_t *f, uint32_t r, uint64_t n, sched_sink_t *k)
{
    if (r >= 2 * f->rem) return;
    if (r & 1)
        sched_send(k, 0, (int32_t)(r - 1), STRATA_BUF_OUTPUT, 0, n);
    else
        sched_recv(k, 0, (int32_t)(r + 1), STRATA_BUF_OUTPUT, 0, n);
}

static void allreduce(const strata_sched_t *s, const sched_fold_t *f, uint32_t r, sched_sink_t *k)
{
    uint64_t n = s->p.count;
    int64_t c = sched_fold_core(f, r);
    if (k->phase == 0) {
        fold_in(f, r, n, k);
    } else if (k->phase <= f->L) {
        if (c < 0) return;
        uint32_t peer = sched_fold_real(f, (uint32_t)c ^ (1u << (k->phase - 1)));
        sched_send(k, 0, (int32_t)peer, STRATA_BUF_OUTPUT, 0, n);
        sched_recv(k, 0, (int32_t)peer, STRATA_BUF_SCRATCH, 0, n);
        sched_reduce(k, 2, STRATA_BUF_SCRATCH, 0, STRATA_BUF_OUTPUT, 0, n);
    } else {
        fold_out(f, r, n, k);
    }
}

static void allgather(const strata_sched_t *s, const sched_fold_t *f, uint32_t r, sched_sink_t *k)
{
    uint64_t n = s->p.count;
    int64_t c = sched_fold_core(f, r);
    if (k->phase == 0) {
        if (r < 2 * f->rem && !(r & 1)) {
            sched_send(k, 0, (int32_t)(r + 1), STRATA_BUF_INPUT, 0, n);
        } else {
            if (r < 2 * f->rem)
                sched_recv(k, 0, (int32_t)(r - 1), STRATA_BUF_OUTPUT, (r - 1) * n, n);
            sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, r * n, n);
        }
    } else if (k->phase <= f->L) {
        if (c < 0) return;
        uint32_t g = 1u << (k->phase - 1), a = (uint32_t)c & ~(g - 1),
                 b = ((uint32_t)c ^ g) & ~(g - 1);
        uint32_t peer = sched_fold_real(f, (uint32_t)c ^ g);
        uint64_t mo = sched_fold_lo(f, a) * n,
                 ml = (sched_fold_lo(f, a + g) - sched_fold_lo(f, a)) * n;
        uint64_t po = sched_fold_lo(f, b) * n,
                 pl = (sched_fold_lo(f, b + g) - sched_fold_lo(f, b)) * n;
        sched_send(k, 0, (int32_t)peer, STRATA_BUF_OUTPUT, mo, ml);
        sched_recv(k, 0, (int32_t)peer, STRATA_BUF_OUTPUT, po, pl);
    } else {
        fold_out(f, r, f->P * n, k);
    }
}

static strata_status_t rd_init(strata_sched_t *s, strata_error_t *err)
{
    (void)err;
    sched_fold_t f;
    sched_fold_init(&f, s->p.nranks);
    s->nphases = 1 + f.L + (f.rem > 0);
    if (s->p.coll != STRATA_COLL_ALLGATHER) s->buf[STRATA_BUF_SCRATCH] = s->p.count;
    return STRATA_OK;
}

static void rd_phase(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    sched_fold_t f;
    sched_fold_init(&f, s->p.nranks);
    if (s->p.coll == STRATA_COLL_ALLGATHER)
        allgather(s, &f, r, k);
    else
        allreduce(s, &f, r, k); /* ALLREDUCE, BARRIER (count 0) */
}

const sched_algo_t sched_recdbl = {
    .id = STRATA_ALGO_RECDBL,
    .colls = SCHED_COLL(ALLREDUCE) | SCHED_COLL(ALLGATHER) | SCHED_COLL(BARRIER),
    .init = rd_init,
    .phase = rd_phase,
};
