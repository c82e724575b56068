/*
 * torus2d.c — 2D-torus allreduce (Mikami et al. 2018, "ImageNet/ResNet-50
 * training in 224 seconds"; Ying et al. 2018 for TPU pods): ranks form an
 * R x g grid; reduce-scatter along each row ring, allreduce along each
 * column ring on the row's block, allgather along the row ring.
 *
 * The schedule is the two-level one of hier.c with rows as the inner level;
 * what differs is the default shape — the most square grid, g the largest
 * divisor of P not above sqrt(P) — and what the cost model maps it onto
 * (torus rows and columns rather than server and network tiers). Row
 * phases move n/g-sized blocks g-1 times, column phases n/g blocks
 * 2(R-1) times: 2(g-1) + 2(R-1) latency terms instead of the ring's 2(P-1).
 */
#include "sched.h"

static strata_status_t torus_init(strata_sched_t *s, strata_error_t *err)
{
    uint32_t P = s->p.nranks;
    if (s->p.group == 0) {
        uint32_t g = 1;
        for (uint32_t d = 1; (uint64_t)d * d <= P; d++)
            if (P % d == 0) g = d;
        s->p.group = P / g; /* rows are the longer side */
    }
    return sched_twolevel_init(s, "torus2d", err);
}

const sched_algo_t sched_torus2d = {
    .id = STRATA_ALGO_TORUS2D,
    .colls = SCHED_COLL(ALLREDUCE),
    .init = torus_init,
    .phase = sched_twolevel_algo_phase,
    .phase_class = sched_twolevel_class,
    .phase_pattern = sched_twolevel_pattern,
};
