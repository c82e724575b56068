/*
 * innet.c — allreduce with the reduction done in the network: NVLink SHARP
 * (NVLS, NVSwitch gen3+) inside a server, InfiniBand SHARP across servers.
 *
 * The steps are those of NCCL's NVLS kernel, not an idealised "send up,
 * get the sum back": every chunk is split into g shards, shard j owned by
 * local rank j of its server. Switches are agents of their own (sched.h):
 * leaf switch i (agent P + i) serves ranks [i*g, (i+1)*g); with more than
 * one leaf, root switch j (agent P + N + j) joins the N owners of shard j
 * — local rank j of every server, one rail of a rail-optimised fabric,
 * whose SHARP tree reduces that shard. Chunk c:
 *   phase c     every rank offers its input chunk to its leaf, which reduces
 *               it (multimem.ld_reduce: the switch reads the chunk from
 *               every GPU — the sends of the INPUT buffer to a switch);
 *   phase c+1   the leaf hands shard j of the sum to its owner;
 * one leaf:
 *   phase c+2   the owner stores its shard back (multimem.st);
 *   phase c+3   the leaf multicasts the chunk to every rank, owners included.
 * several leaves (SHARP across servers):
 *   phase c+2   owners send their shard up to its root, which reduces the
 *               shard over the N servers;
 *   phase c+3   the root returns the total shard to its N owners;
 *   phase c+4   owners store it to their leaf;
 *   phase c+5   the leaf multicasts the chunk to every rank.
 * So C + 3 phases (C + 5). Per rank and direction over its scale-up links
 * n + n/g up and n/g + n down, the n(1 + 1/g) of NVLS; across servers n/g
 * per rank each way, n per server. Switches reduce at line rate (they are
 * built to); no rank reduces anything.
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
    s->nagents = P + N + (N > 1 ? s->p.group : 0);
    s->nphases = s->p.chunks + (N > 1 ? 5 : 3);
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

/* Shard j of chunk c (false: no such chunk, or the shard is empty — both
 * ends of a message skip it alike). */
static bool shard(const strata_sched_t *s, int64_t c, uint32_t j, uint64_t *off, uint64_t *len)
{
    uint64_t co, cl;
    if (!chunk(s, c, &co, &cl)) return false;
    *off = co + sched_blk_off(cl, s->p.group, j);
    *len = sched_blk_len(cl, s->p.group, j);
    return *len > 0;
}

/* Leaf i, phase ph: reduce chunk ph from its g ranks (the first receive
 * initialises the scratch, the others accumulate after it). */
static void leaf_gather(const strata_sched_t *s, uint32_t i, int64_t ph, sched_sink_t *k)
{
    uint64_t off, len;
    if (!chunk(s, ph, &off, &len)) return;
    uint32_t g = s->p.group, S = STRATA_BUF_SCRATCH;
    sched_recv(k, 0, (int32_t)(i * g), S, off, len);
    for (uint32_t j = 1; j < g; j++)
        sched_recv_reduce(k, 1, (int32_t)(i * g + j), S, off, S, off, len);
}

static void rank_phase(const strata_sched_t *s, uint32_t a, int64_t ph, sched_sink_t *k)
{
    uint32_t g = s->p.group, N = s->p.nranks / g, j = a % g;
    int32_t leaf = (int32_t)(s->p.nranks + a / g), root = (int32_t)(s->p.nranks + N + j);
    int64_t st = N > 1 ? 4 : 2; /* the phase an owner stores to its leaf */
    uint64_t off, len;
    if (chunk(s, ph, &off, &len)) sched_send(k, 0, leaf, STRATA_BUF_INPUT, off, len);
    if (shard(s, ph - 1, j, &off, &len)) sched_recv(k, 0, leaf, STRATA_BUF_OUTPUT, off, len);
    if (N > 1 && shard(s, ph - 2, j, &off, &len))
        sched_send(k, 0, root, STRATA_BUF_OUTPUT, off, len);
    if (N > 1 && shard(s, ph - 3, j, &off, &len))
        sched_recv(k, 0, root, STRATA_BUF_OUTPUT, off, len);
    if (shard(s, ph - st, j, &off, &len)) sched_send(k, 0, leaf, STRATA_BUF_OUTPUT, off, len);
    if (chunk(s, ph - st - 1, &off, &len)) sched_recv(k, 0, leaf, STRATA_BUF_OUTPUT, off, len);
}

static void leaf_phase(const strata_sched_t *s, uint32_t i, int64_t ph, sched_sink_t *k)
{
    uint32_t g = s->p.group, N = s->p.nranks / g, S = STRATA_BUF_SCRATCH;
    int64_t st = N > 1 ? 4 : 2;
    uint64_t off, len;
    leaf_gather(s, i, ph, k); /* first: its receives are steps 0.. of the phase */
    for (uint32_t j = 0; j < g; j++) {
        int32_t owner = (int32_t)(i * g + j);
        if (shard(s, ph - 1, j, &off, &len)) sched_send(k, 0, owner, S, off, len);
        if (shard(s, ph - st, j, &off, &len)) sched_recv(k, 0, owner, S, off, len);
    }
    if (chunk(s, ph - st - 1, &off, &len))
        for (uint32_t j = 0; j < g; j++)
            sched_send(k, 0, (int32_t)(i * g + j), S, off, len);
}

/* Root of shard j, phase ph: reduce shard j of chunk ph-2 over the N
 * owners j (the first receive, from server 0, initialises; the others
 * accumulate after it), and return chunk ph-3's total shard to them. */
static void root_phase(const strata_sched_t *s, uint32_t j, int64_t ph, sched_sink_t *k)
{
    uint32_t g = s->p.group, N = s->p.nranks / g, S = STRATA_BUF_SCRATCH;
    uint64_t off, len;
    if (shard(s, ph - 2, j, &off, &len)) {
        sched_recv(k, 0, (int32_t)j, S, off, len);
        for (uint32_t i = 1; i < N; i++)
            sched_recv_reduce(k, 1, (int32_t)(i * g + j), S, off, S, off, len);
    }
    if (shard(s, ph - 3, j, &off, &len))
        for (uint32_t i = 0; i < N; i++)
            sched_send(k, 0, (int32_t)(i * g + j), S, off, len);
}

static void innet_phase(const strata_sched_t *s, uint32_t a, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, N = P / s->p.group;
    int64_t ph = k->phase;
    if (a < P)
        rank_phase(s, a, ph, k);
    else if (a < P + N)
        leaf_phase(s, a - P, ph, k);
    else
        root_phase(s, a - P - N, ph, k);
}

const sched_algo_t sched_innet = {
    .id = STRATA_ALGO_INNET,
    .colls = SCHED_COLL(ALLREDUCE),
    .init = innet_init,
    .phase = innet_phase,
};
