/*
 * hier.c — hierarchical two-level allreduce: intra-server reduce-scatter,
 * inter-server allreduce, intra-server allgather (the structure of NCCL's
 * multi-node ring/tree split and of Horovod's hierarchical allreduce).
 *
 * With g ranks per server and N = P/g servers, rank (node, l) first ring
 * reduce-scatters the buffer with its g local peers (g-1 phases over the
 * fast tier) and ends holding block (l+1) mod g summed over the server; it
 * then ring-allreduces that block with the N ranks of the same local index
 * on other servers (2(N-1) phases; each NIC carries only n/g, which is why
 * busbw can exceed the NIC bandwidth), and finally ring-allgathers within
 * the server. g defaults to 8 (an HGX/DGX server) when it divides P. With
 * C chunks the stages pipeline (chunk c starts one phase after chunk c-1),
 * so scale-up and network links work at once: C + S - 1 phases.
 */
#include "sched.h"

uint32_t sched_twolevel_nphases(uint32_t P, uint32_t g, uint32_t chunks)
{
    return 2 * (g - 1) + 2 * (P / g - 1) + chunks - 1;
}

/* Step j of the unpipelined two-level allreduce, on region [off, off+len). */
static void twolevel_step(const strata_sched_t *s, uint32_t g, uint32_t r, uint32_t j, uint64_t off,
                          uint64_t len, sched_sink_t *k)
{
    uint32_t N = s->p.nranks / g, node = r / g, l = r % g;
    sched_ring_t intra = {.m = g, .i = l, .base = node * g, .stride = 1, .off = off, .len = len};
    if (j < g - 1) {
        sched_ring_rs_step(&intra, j, STRATA_BUF_INPUT, STRATA_BUF_OUTPUT, k);
        return;
    }
    j -= g - 1;
    if (j < 2 * (N - 1)) {
        uint32_t b = (l + 1) % g;
        sched_ring_t inter = {.m = N,
                              .i = node,
                              .base = l,
                              .stride = g,
                              .off = off + sched_blk_off(len, g, b),
                              .len = sched_blk_len(len, g, b)};
        /* with one rank per server the input has not been copied yet */
        int src = g == 1 ? STRATA_BUF_INPUT : STRATA_BUF_OUTPUT;
        if (j < N - 1)
            sched_ring_rs_step(&inter, j, src, STRATA_BUF_OUTPUT, k);
        else
            sched_ring_ag_step(&inter, j - (N - 1), STRATA_BUF_OUTPUT, k);
        return;
    }
    sched_ring_ag_step(&intra, j - 2 * (N - 1), STRATA_BUF_OUTPUT, k);
}

/* Pipelining: chunk c runs the S steps of the two-level schedule in phases
 * c .. c+S-1, so while chunk c crosses the network chunk c+1 is reduced
 * inside the server — the tiers work at the same time. */
void sched_twolevel_phase(const strata_sched_t *s, uint32_t g, uint32_t r, sched_sink_t *k)
{
    uint32_t C = s->p.chunks, S = sched_twolevel_nphases(s->p.nranks, g, 1);
    uint64_t n = s->p.count;
    for (uint32_t c = 0; c < C; c++) {
        if (k->phase < c || k->phase - c >= S) continue;
        twolevel_step(s, g, r, k->phase - c, sched_blk_off(n, C, c), sched_blk_len(n, C, c), k);
    }
}

strata_status_t sched_twolevel_init(strata_sched_t *s, const char *what, strata_error_t *err)
{
    uint32_t P = s->p.nranks;
    if (P % s->p.group)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "%s: group of %u ranks does not divide %u ranks", what, s->p.group,
                                P);
    s->nphases = sched_twolevel_nphases(P, s->p.group, s->p.chunks);
    return STRATA_OK;
}

void sched_twolevel_algo_phase(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    sched_twolevel_phase(s, s->p.group, r, k);
}

/* Unpipelined with equal blocks, the phases of each stage are alike:
 * classes 0 (intra reduce-scatter), 1 and 2 (inter reduce-scatter,
 * allgather), 3 (intra allgather); otherwise every phase is its own. */
uint32_t sched_twolevel_class(const strata_sched_t *s, uint32_t phase)
{
    uint32_t g = s->p.group, N = s->p.nranks / g;
    uint64_t n = s->p.count;
    if (s->p.chunks != 1 || n % g || (n / g) % N) return phase + 4;
    if (phase < g - 1) return 0;
    phase -= g - 1;
    if (phase < 2 * (N - 1)) return phase < N - 1 ? 1 : 2;
    return 3;
}

static strata_status_t hier_init(strata_sched_t *s, strata_error_t *err)
{
    if (s->p.group == 0) s->p.group = s->p.nranks % 8 == 0 ? 8 : s->p.nranks;
    return sched_twolevel_init(s, "hier", err);
}

const sched_algo_t sched_hier = {
    .id = STRATA_ALGO_HIER,
    .colls = SCHED_COLL(ALLREDUCE),
    .init = hier_init,
    .phase = sched_twolevel_algo_phase,
    .phase_class = sched_twolevel_class,
};
