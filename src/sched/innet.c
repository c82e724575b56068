/*
 * innet.c — allreduce with the reduction done in the network: NVLink SHARP
 * (NVLS, NVSwitch gen3+) inside a server, InfiniBand SHARP across servers.
 *
 * Switches are agents of their own (sched.h): leaf switch i (agent P + i)
 * serves ranks [i*g, (i+1)*g); with more than one leaf a root switch (agent
 * P + N) joins them. For chunk c, ranks send their input up at phase c, the
 * leaf reduces; with one leaf it multicasts the result down at phase c+1;
 * otherwise leaves forward up at c+1, the root reduces and sends down at
 * c+2, and leaves multicast to their ranks at c+3. Every byte crosses each
 * rank's link once up and once down — half the ring's traffic — and
 * reductions happen at switch speed, not on the GPU.
 */
#include "sched.h"

static strata_status_t innet_init(strata_sched_t *s, strata_error_t *err)
{
    uint32_t P = s->p.nranks;
    if (s->p.group == 0) s->p.group = P;
    if (P % s->p.group)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "innet: %u ranks per switch does not divide %u ranks", s->p.group,
                                P);
    uint32_t N = P / s->p.group;
    s->nagents = P + N + (N > 1);
    s->nphases = s->p.chunks + (N > 1 ? 3 : 1);
    s->switch_scratch = s->p.count;
    return STRATA_OK;
}

static bool chunk(const strata_sched_t *s, int64_t c, uint64_t *off, uint64_t *len)
{
    if (c < 0 || c >= s->p.chunks) return false;
    *off = sched_blk_off(s->p.count, s->p.chunks, (uint64_t)c);
    *len = sched_blk_len(s->p.count, s->p.chunks, (uint64_t)c);
    return true;
}

/* Receive chunk c from members first..first+m-1 (stride 1) and reduce:
 * the first receive initialises, the others accumulate after it. */
static void gather_reduce(const strata_sched_t *s, int64_t c, uint32_t first, uint32_t m,
                          sched_sink_t *k)
{
    uint64_t off, len;
    if (!chunk(s, c, &off, &len)) return;
    int S = STRATA_BUF_SCRATCH;
    sched_recv(k, 0, (int32_t)first, S, off, len);
    for (uint32_t j = 1; j < m; j++)
        sched_recv_reduce(k, 1, (int32_t)(first + j), S, off, S, off, len);
}

static void multicast(const strata_sched_t *s, int64_t c, uint32_t first, uint32_t m,
                      sched_sink_t *k)
{
    uint64_t off, len;
    if (!chunk(s, c, &off, &len)) return;
    for (uint32_t j = 0; j < m; j++)
        sched_send(k, 0, (int32_t)(first + j), STRATA_BUF_SCRATCH, off, len);
}

static void innet_phase(const strata_sched_t *s, uint32_t a, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, g = s->p.group, N = P / g;
    int64_t ph = k->phase, down = N > 1 ? 3 : 1;
    uint64_t off, len;
    if (a < P) {
        int32_t leaf = (int32_t)(P + a / g);
        if (chunk(s, ph, &off, &len)) sched_send(k, 0, leaf, STRATA_BUF_INPUT, off, len);
        if (chunk(s, ph - down, &off, &len)) sched_recv(k, 0, leaf, STRATA_BUF_OUTPUT, off, len);
    } else if (a < P + N) {
        uint32_t i = a - P;
        gather_reduce(s, ph, i * g, g, k);
        if (N == 1) {
            multicast(s, ph - 1, 0, g, k);
            return;
        }
        if (chunk(s, ph - 1, &off, &len))
            sched_send(k, 0, (int32_t)(P + N), STRATA_BUF_SCRATCH, off, len);
        if (chunk(s, ph - 2, &off, &len))
            sched_recv(k, 0, (int32_t)(P + N), STRATA_BUF_SCRATCH, off, len);
        multicast(s, ph - 3, i * g, g, k);
    } else {
        gather_reduce(s, ph - 1, P, N, k);
        multicast(s, ph - 2, P, N, k);
    }
}

const sched_algo_t sched_innet = {
    .id = STRATA_ALGO_INNET,
    .colls = SCHED_COLL(ALLREDUCE),
    .init = innet_init,
    .phase = innet_phase,
};
