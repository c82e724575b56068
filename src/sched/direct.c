/*
 * direct.c — strata's shared-memory engine (src/comm/allreduce_shm.c) as a
 * schedule: ranks load and store each other's data directly in memory they
 * share, so every byte that passes between two ranks is one load by the
 * rank that needs it from the memory of the rank that has it. In message
 * terms such a load is a SEND by the owner matched with a RECV (or
 * RECV_REDUCE) by the loader in the same phase: the owner does no work for
 * it, the loader moves the bytes (cost.c prices it so, cost_direct).
 *
 * Every rank has a SCRATCH buffer shaped like the data it stages (the
 * engine's region in the shared segment: three rotating slots of a chunk;
 * the schedule addresses it by element instead, which the engine's "done"
 * flags make equivalent). Allreduce of a large vector is a pipeline of
 * chunks, each split into P slices, slice q reduced by rank q:
 *   phase 0       stage chunk 0: rank r copies the slices others reduce
 *                 from INPUT into its SCRATCH;
 *   phase 2c + 1  reduce chunk c: rank r loads slice r of chunk c from
 *                 every peer's SCRATCH and reduces it with its own input
 *                 into its SCRATCH, then copies the result to OUTPUT while
 *                 hot; and stages chunk c + 1 (the engine's "post the next
 *                 chunk before waiting");
 *   phase 2c + 2  gather chunk c: rank r loads the P - 1 reduced slices
 *                 from the peers' SCRATCH into its OUTPUT.
 * Allreduce and reduce of at most STRATA_DIRECT_FLAT_MAX bytes run flat:
 * stage the whole vector (phase 0), then every rank loads and reduces all
 * P copies itself (phase 1): one synchronisation instead of two per chunk
 * (at most STRATA_DIRECT_LINE_MAX bytes the copies are cache lines beside a
 * sequence number, the same pattern). Reduce is allreduce whose gather
 * (and copy-out) only the root does; reduce-scatter reduces straight into
 * OUTPUT (no gather); allgather and alltoall stage, then gather; broadcast
 * has only the root stage. The chunk layout is the engine's (sched.h,
 * STRATA_DIRECT_*), or, with params.chunks > 1, that many equal chunks.
 * When the ranks outnumber the CPUs the engine splits allreduce into at
 * least 4 chunks, as the other collectives: the cost model prices that
 * from the machine's cores (sched_direct_chunks' `shared`); a schedule
 * gets it through params.chunks. Where the engine keeps a reduced slice
 * (over a staged copy in rank 0's or 1's slot, for the caches' sake) is
 * below this schedule's level: SCRATCH is addressed by element.
 * Registered buffers (params.registered, allreduce above FLAT_MAX): every
 * rank maps every other's INPUT and OUTPUT, so there is no staging to
 * read from: phase 0 is the first handshake, which stages chunk 0 as
 * above (a rank learns only there that every rank registered; the copy is
 * never read), and in phase 1 rank r loads slice r of the whole vector
 * from every peer's INPUT, reduces it with its own into its OUTPUT, then
 * stores it into every peer's OUTPUT (a SEND matched by the peer's RECV;
 * in the engine the store is r's, in message terms the peer receives).
 * Phases: O(chunks); a phase's steps: O(P).
 */
#include "sched.h"

#include <math.h>

enum {
    D_FLAT,
    D_PER,
    D_CHUNKS,
    D_E,
    D_REG
}; /* aux: flat?, elements per slice, chunks,
      per chunk, registered? */

static bool is_ar(const strata_sched_t *s)
{
    return s->p.coll == STRATA_COLL_ALLREDUCE || s->p.coll == STRATA_COLL_REDUCE;
}

/* Bytes of one slice of a pipeline chunk as the engine lays it out
 * (allreduce_shm.c slice_cap): the chunk's share per rank rounded down to
 * a line, at least SLICE_MIN, split further into at least `nmin` chunks
 * of the rank's bytes (1 for allreduce, 4 otherwise), never above the
 * chunk's share. The chunk is CHUNK, or CHUNK_SHARED for an allreduce
 * whose ranks outnumber the CPUs. */
static uint64_t engine_slice(uint64_t per_rank_bytes, uint32_t P, uint64_t nmin, uint64_t chunk)
{
    uint64_t cap = chunk / P / 64 * 64, want = per_rank_bytes / nmin / 64 * 64;
    if (cap < 64) cap = 64;
    if (want < STRATA_DIRECT_SLICE_MIN) want = STRATA_DIRECT_SLICE_MIN;
    return want < cap ? want : cap;
}

/* The allreduce chunk when ranks outnumber CPUs (allreduce_shm.c
 * slice_cap): the vector over SHARED_CHUNKS, between CHUNK and
 * CHUNK_SHARED. */
static uint64_t shared_chunk(uint64_t per_rank_bytes, uint32_t P)
{
    uint64_t chunk = per_rank_bytes * P / STRATA_DIRECT_SHARED_CHUNKS;
    return chunk < STRATA_DIRECT_CHUNK          ? STRATA_DIRECT_CHUNK
           : chunk > STRATA_DIRECT_CHUNK_SHARED ? STRATA_DIRECT_CHUNK_SHARED
                                                : chunk;
}

double sched_direct_chunks(strata_coll_t coll, uint32_t P, double bytes, bool shared)
{
    bool ar = coll == STRATA_COLL_ALLREDUCE || coll == STRATA_COLL_REDUCE;
    bool sliced = ar || coll == STRATA_COLL_BROADCAST;
    if (P < 2 || bytes <= 0 || (ar && bytes <= STRATA_DIRECT_FLAT_MAX)) return 1;
    double per_rank = sliced ? bytes / P : bytes / P; /* AG/RS/A2A: bytes = P blocks */
    double slice = (double)engine_slice((uint64_t)per_rank, P, ar && !shared ? 1 : 4,
                                        ar && shared ? shared_chunk((uint64_t)per_rank, P)
                                                     : STRATA_DIRECT_CHUNK);
    double c = ceil(per_rank / slice);
    return c < 1 ? 1 : c;
}

double sched_direct_chunk0(uint32_t P, double bytes, bool shared)
{
    if (P < 2 || bytes <= 0) return bytes > 0 ? bytes : 0;
    double chunk = (double)P * (double)engine_slice((uint64_t)(bytes / P), P, shared ? 4 : 1,
                                                    shared ? shared_chunk((uint64_t)(bytes / P), P)
                                                           : STRATA_DIRECT_CHUNK);
    return chunk < bytes ? chunk : bytes;
}

void strata_direct_layout(strata_coll_t coll, uint32_t P, double bytes, bool shared,
                          strata_direct_layout_t *l)
{
    bool ar = coll == STRATA_COLL_ALLREDUCE || coll == STRATA_COLL_REDUCE;
    double p = P > 1 ? P : 1, b = bytes > 0 ? bytes : 0;
    l->flat = ar && b <= STRATA_DIRECT_FLAT_MAX;
    l->chunks = sched_direct_chunks(coll, P, b, shared);
    l->chunk = l->flat ? b : sched_direct_chunk0(P, b, shared);
    l->slice = l->flat ? b : l->chunk / p;
    l->block = ar ? STRATA_DIRECT_BLOCK : l->slice;
}

static strata_status_t direct_init(strata_sched_t *s, strata_error_t *err)
{
    uint64_t P = s->p.nranks, n = s->p.count, es = s->p.elem_size, bytes = n * es;
    strata_coll_t c = s->p.coll;
    bool sliced = is_ar(s) || c == STRATA_COLL_BROADCAST; /* chunks split over the P ranks */
    s->aux[D_FLAT] = is_ar(s) && bytes <= STRATA_DIRECT_FLAT_MAX && s->p.chunks <= 1;
    uint64_t per, E;
    if (s->p.chunks > 1) { /* that many equal chunks */
        E = (n + s->p.chunks - 1) / s->p.chunks;
        per = sliced ? (E + P - 1) / P : E;
        E = sliced ? per * P : per;
    } else {
        uint64_t pr = sliced ? bytes / P : bytes;
        per = engine_slice(pr, (uint32_t)P, is_ar(s) ? 1 : 4, STRATA_DIRECT_CHUNK) / es;
        if (per < 1) per = 1;
        E = sliced ? per * P : per;
    }
    if (s->aux[D_FLAT]) E = n;
    s->aux[D_PER] = (int64_t)per, s->aux[D_E] = (int64_t)E;
    s->aux[D_CHUNKS] = (int64_t)((n + E - 1) / E);
    uint64_t C = (uint64_t)s->aux[D_CHUNKS];
    if (C > (UINT32_MAX - 1) / 2)
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "direct: %llu chunks of the engine's layout are too many phases",
                                (unsigned long long)C);
    s->aux[D_REG] = s->p.registered && !s->aux[D_FLAT];
    s->nphases = (uint32_t)(s->aux[D_FLAT] || s->aux[D_REG] ? 2 : is_ar(s) ? 1 + 2 * C : 1 + C);
    s->buf[STRATA_BUF_SCRATCH] =
        c == STRATA_COLL_REDUCE_SCATTER || c == STRATA_COLL_ALLTOALL ? P * n : n;
    return STRATA_OK;
}

/* Elements [*off, *off + *len) of slice q of chunk ch: for allreduce,
 * reduce and broadcast a P-th of the chunk of the vector; for the others
 * the chunk of a block (q ignored: the block's offset is the caller's). */
static void slice(const strata_sched_t *s, uint64_t ch, uint32_t q, uint64_t *off, uint64_t *len)
{
    uint64_t n = s->p.count, E = (uint64_t)s->aux[D_E], lo = ch * E;
    uint64_t l = n - lo < E ? n - lo : E;
    if (is_ar(s) || s->p.coll == STRATA_COLL_BROADCAST) {
        uint64_t P = s->p.nranks;
        *off = lo + l * q / P, *len = l * (q + 1) / P - l * q / P;
    } else {
        *off = lo, *len = l;
    }
}

/* Stage chunk ch: copy what the others will load from INPUT to SCRATCH. */
static void stage(const strata_sched_t *s, uint32_t r, uint64_t ch, sched_sink_t *k)
{
    uint32_t P = s->p.nranks;
    uint64_t n = s->p.count, off, len;
    switch (s->p.coll) {
    case STRATA_COLL_ALLREDUCE:
    case STRATA_COLL_REDUCE:
        for (uint32_t q = 0; q < P; q++)
            if (q != r)
                slice(s, ch, q, &off, &len),
                    sched_copy(k, 0, STRATA_BUF_INPUT, off, STRATA_BUF_SCRATCH, off, len);
        break;
    case STRATA_COLL_REDUCE_SCATTER:
    case STRATA_COLL_ALLTOALL:
        slice(s, ch, 0, &off, &len);
        for (uint32_t q = 0; q < P; q++)
            if (q != r)
                sched_copy(k, 0, STRATA_BUF_INPUT, q * n + off, STRATA_BUF_SCRATCH, q * n + off,
                           len);
        break;
    case STRATA_COLL_ALLGATHER:
        slice(s, ch, 0, &off, &len);
        sched_copy(k, 0, STRATA_BUF_INPUT, off, STRATA_BUF_SCRATCH, off, len);
        break;
    default: /* broadcast: the root stages every slice */
        if (r != s->p.root) break;
        off = ch * (uint64_t)s->aux[D_E]; /* the whole chunk */
        len = n - off < (uint64_t)s->aux[D_E] ? n - off : (uint64_t)s->aux[D_E];
        sched_copy(k, 0, STRATA_BUF_INPUT, off, STRATA_BUF_SCRATCH, off, len);
        break;
    }
}

/* Flat allreduce/reduce, phase 1: load every peer's staged vector and
 * reduce it with our own (only the root for reduce); peers load ours. */
static void flat(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, root = s->p.root;
    uint64_t n = s->p.count;
    bool all = s->p.coll == STRATA_COLL_ALLREDUCE, me = all || r == root;
    if (me) sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, 0, n);
    for (uint32_t q = 0; q < P; q++)
        if (q != r && (all || q == root)) sched_send(k, 0, (int32_t)q, STRATA_BUF_SCRATCH, 0, n);
    for (uint32_t q = 0; me && q < P; q++)
        if (q != r)
            sched_recv_reduce(k, 1, (int32_t)q, STRATA_BUF_OUTPUT, 0, STRATA_BUF_OUTPUT, 0, n);
}

/* Allreduce/reduce chunk ch: rank r reduces slice r from every rank's copy
 * into its SCRATCH and copies it to OUTPUT (the root only, for reduce). */
static void reduce_slice(const strata_sched_t *s, uint32_t r, uint64_t ch, sched_sink_t *k)
{
    uint32_t P = s->p.nranks;
    uint64_t off, len;
    slice(s, ch, r, &off, &len);
    sched_copy(k, 0, STRATA_BUF_INPUT, off, STRATA_BUF_SCRATCH, off, len);
    for (uint32_t q = 0; q < P; q++)
        if (q != r) {
            uint64_t qo, ql;
            slice(s, ch, q, &qo, &ql);
            sched_send(k, 0, (int32_t)q, STRATA_BUF_SCRATCH, qo, ql);
        }
    for (uint32_t q = 0; q < P; q++)
        if (q != r)
            sched_recv_reduce(k, 1, (int32_t)q, STRATA_BUF_SCRATCH, off, STRATA_BUF_SCRATCH, off,
                              len);
    if (s->p.coll == STRATA_COLL_ALLREDUCE || r == s->p.root)
        sched_copy(k, 1 + 2 * (P - 1), STRATA_BUF_SCRATCH, off, STRATA_BUF_OUTPUT, off, len);
}

/* Reduce-scatter chunk ch: reduce block r's chunk straight into OUTPUT. */
static void reduce_block(const strata_sched_t *s, uint32_t r, uint64_t ch, sched_sink_t *k)
{
    uint32_t P = s->p.nranks;
    uint64_t n = s->p.count, off, len;
    slice(s, ch, 0, &off, &len);
    sched_copy(k, 0, STRATA_BUF_INPUT, r * n + off, STRATA_BUF_OUTPUT, off, len);
    for (uint32_t q = 0; q < P; q++)
        if (q != r) sched_send(k, 0, (int32_t)q, STRATA_BUF_SCRATCH, q * n + off, len);
    for (uint32_t q = 0; q < P; q++)
        if (q != r)
            sched_recv_reduce(k, 1, (int32_t)q, STRATA_BUF_OUTPUT, off, STRATA_BUF_OUTPUT, off,
                              len);
}

/* Gather chunk ch: load what the peers hold for us into OUTPUT. */
static void gather(const strata_sched_t *s, uint32_t r, uint64_t ch, sched_sink_t *k)
{
    uint32_t P = s->p.nranks, root = s->p.root;
    uint64_t n = s->p.count, off, len;
    switch (s->p.coll) {
    case STRATA_COLL_ALLREDUCE:
    case STRATA_COLL_REDUCE: {
        bool all = s->p.coll == STRATA_COLL_ALLREDUCE;
        slice(s, ch, r, &off, &len);
        for (uint32_t q = 0; q < P; q++)
            if (q != r && (all || q == root))
                sched_send(k, 0, (int32_t)q, STRATA_BUF_SCRATCH, off, len);
        for (uint32_t q = 0; q < P && (all || r == root); q++)
            if (q != r) {
                uint64_t qo, ql;
                slice(s, ch, q, &qo, &ql);
                sched_recv(k, 0, (int32_t)q, STRATA_BUF_OUTPUT, qo, ql);
            }
        break;
    }
    case STRATA_COLL_ALLGATHER:
    case STRATA_COLL_ALLTOALL: {
        bool ag = s->p.coll == STRATA_COLL_ALLGATHER;
        slice(s, ch, 0, &off, &len);
        sched_copy(k, 0, STRATA_BUF_INPUT, (ag ? 0 : r * n) + off, STRATA_BUF_OUTPUT, r * n + off,
                   len);
        for (uint32_t q = 0; q < P; q++)
            if (q != r)
                sched_send(k, 0, (int32_t)q, STRATA_BUF_SCRATCH, (ag ? 0 : q * n) + off, len);
        for (uint32_t q = 0; q < P; q++)
            if (q != r) sched_recv(k, 0, (int32_t)q, STRATA_BUF_OUTPUT, q * n + off, len);
        break;
    }
    default: { /* broadcast */
        uint64_t E = (uint64_t)s->aux[D_E];
        off = ch * E, len = n - off < E ? n - off : E;
        if (r != root) {
            sched_recv(k, 0, (int32_t)root, STRATA_BUF_OUTPUT, off, len);
            break;
        }
        sched_copy(k, 0, STRATA_BUF_INPUT, off, STRATA_BUF_OUTPUT, off, len);
        for (uint32_t q = 0; q < P; q++)
            if (q != r) sched_send(k, 0, (int32_t)q, STRATA_BUF_SCRATCH, off, len);
        break;
    }
    }
}

/* Registered allreduce, phase 1: rank r's slice of the whole vector (the
 * engine's cache-line boundaries are the same split up to rounding) from
 * every INPUT into every OUTPUT. Per peer q, in matching order: q's INPUT
 * slice r comes to r (reduced), then r's result goes to q's OUTPUT. */
static void registered(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t P = s->p.nranks;
    uint64_t n = s->p.count, off = n * r / P, len = n * (r + 1) / P - off;
    sched_copy(k, 0, STRATA_BUF_INPUT, off, STRATA_BUF_OUTPUT, off, len);
    for (uint32_t q = 0; q < P; q++)
        if (q != r) {
            uint64_t qo = n * q / P, ql = n * (q + 1) / P - qo;
            sched_send(k, 0, (int32_t)q, STRATA_BUF_INPUT, qo, ql);
        }
    for (uint32_t q = 0; q < P; q++)
        if (q != r)
            sched_recv_reduce(k, 1, (int32_t)q, STRATA_BUF_OUTPUT, off, STRATA_BUF_OUTPUT, off,
                              len);
    for (uint32_t q = 0; q < P; q++)
        if (q != r) sched_send(k, 1 + 2 * (P - 1), (int32_t)q, STRATA_BUF_OUTPUT, off, len);
    for (uint32_t q = 0; q < P; q++)
        if (q != r) {
            uint64_t qo = n * q / P, ql = n * (q + 1) / P - qo;
            sched_recv(k, 0, (int32_t)q, STRATA_BUF_OUTPUT, qo, ql);
        }
}

static void direct_phase(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint64_t p = k->phase, C = (uint64_t)s->aux[D_CHUNKS];
    if (p == 0) {
        if (s->aux[D_FLAT])
            sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_SCRATCH, 0, s->p.count);
        else
            stage(s, r, 0, k);
        return;
    }
    if (s->aux[D_FLAT]) {
        flat(s, r, k);
        return;
    }
    if (s->aux[D_REG]) {
        registered(s, r, k);
        return;
    }
    if (is_ar(s)) { /* 2c + 1: reduce c, stage c + 1; 2c + 2: gather c */
        uint64_t ch = (p - 1) / 2;
        if (p % 2) {
            reduce_slice(s, r, ch, k);
            if (ch + 1 < C) stage(s, r, ch + 1, k);
        } else {
            gather(s, r, ch, k);
        }
        return;
    }
    uint64_t ch = p - 1; /* c + 1: reduce or gather c, stage c + 1 */
    if (s->p.coll == STRATA_COLL_REDUCE_SCATTER)
        reduce_block(s, r, ch, k);
    else
        gather(s, r, ch, k);
    if (ch + 1 < C) stage(s, r, ch + 1, k);
}

const sched_algo_t sched_direct = {
    .id = STRATA_ALGO_DIRECT,
    .colls = SCHED_COLL(ALLREDUCE) | SCHED_COLL(REDUCE) | SCHED_COLL(REDUCE_SCATTER) |
             SCHED_COLL(ALLGATHER) | SCHED_COLL(ALLTOALL) | SCHED_COLL(BROADCAST),
    .init = direct_init,
    .phase = direct_phase,
};
