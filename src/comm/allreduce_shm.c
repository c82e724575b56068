/*
 * allreduce_shm.c — the memory-semantic engine: collectives where ranks read
 * each other's data directly in the shared segment.
 *
 * Allreduce of a large vector (the case the targets are about) runs
 * as a pipeline of chunks. A chunk is split into P slices, slice q reduced
 * by rank q. For chunk c with global sequence s (a per-communicator counter
 * that only grows, so flags are never reset):
 *   stage   rank r copies the slices the others reduce (q != r) from its
 *           private input into its staging region slot s%3 and publishes
 *           staged[r] = s+1;
 *   reduce  rank r waits for every staged[q] and reduces its own slice in
 *           rank order 0..P-1, reading its own part straight from its
 *           private input and the rest from the peers' regions, in 16 KiB
 *           blocks, each written over rank 1's (rank 0's for r = 1) staged
 *           copy of the slice (reduced_at: lines r has just read, so its
 *           stores stay on its core) and copied to the output while in L1;
 *           then reduced[r] = s+1;
 *   gather  rank r waits for every reduced[q] and copies the other P-1
 *           reduced slices to its output (non-temporal stores for large
 *           outputs), then done[r] = s+1.
 * A slot is restaged only when every rank's done shows it finished the
 * chunk that used the slot 3 sequences earlier. Rank r stages chunk c+1
 * right after reducing chunk c, before waiting for the others' reductions,
 * so copies overlap the synchronisation (the prototype's "post the next
 * chunk before waiting"). Because every element is reduced by one rank in
 * rank order and then copied, all ranks get bit-identical results, equal to
 * a sequential reduction in rank order.
 *
 * The same three phases, with other slice layouts, give reduce (gather at
 * the root only), reduce-scatter (reduce straight into the output, no
 * gather), allgather and alltoall (stage, then gather) and broadcast (the
 * root stages every slice). Medium allreduces (up to COMM_FLAT_MAX bytes)
 * use the flat variant — every rank stages its whole input and reduces the
 * whole vector itself, one synchronisation instead of two — and tiny ones
 * (<= 56 bytes) the line slots: each rank writes its data beside the
 * sequence number in one cache line and reads every other rank's line.
 * An allreduce whose buffers are registered on every rank (mem.c; decided
 * with chunk 0's staged word) skips the staging after chunk 0: rank r
 * reduces its slice from every rank's input into every rank's output
 * ("Registered buffers" below).
 */
#include "comm.h"

#include <stdlib.h>
#include <string.h>

/* Largest allreduce (bytes) run by the flat variant: below this, one
 * synchronisation and P× reads beat two synchronisations (measured here,
 * bench/README.md). The layout constants live in strata/sched.h, shared
 * with the schedule that prices this engine (sched/direct.c). */
#define COMM_FLAT_MAX STRATA_DIRECT_FLAT_MAX
_Static_assert(COMM_LINE_DATA == STRATA_DIRECT_LINE_MAX, "line slots: sched.h's layout");

typedef enum { ENG_AR, ENG_RS, ENG_AG, ENG_A2A, ENG_BCAST, ENG_FLAT } eng_kind_t;

typedef struct eng {
    comm_call_t *k;
    strata_comm_t *c;
    eng_kind_t kind;
    const unsigned char *src;
    unsigned char *dst;
    size_t es;    /* element size */
    size_t count; /* AR/BCAST/FLAT: elements in all; RS/AG/A2A: per block */
    size_t per;   /* elements per slice per chunk */
    size_t nchunks;
    strata_dtype_t dt;
    strata_op_t op;
    int root;      /* reduce/broadcast root, -1 for all */
    bool stream;   /* stream copies to dst */
    size_t cap;    /* bytes between slice positions in a region */
    uint64_t base; /* sequence of chunk 0 */
    /* allreduce: this rank's send and receive buffers are registered */
    bool reg;
    /* allreduce: its measured choices (mode_pick): stage with streaming
     * stores (P > 2), whether each choice is measured on this call, and
     * where the call falls in each choice's probe window (-1: none) */
    bool nt_stage, stage_measure, out_measure;
    int stage_pos, out_pos;
    comm_mem_ref_t rsrc, rdst;
} eng_t;

/* Elements [*off, *off + *n) of slice q of chunk c, in the vector for
 * AR/BCAST, within block q for RS/AG/A2A. */
static void slice(const eng_t *e, size_t c, int q, size_t *off, size_t *n)
{
    size_t P = (size_t)e->c->size;
    if (e->kind == ENG_AR || e->kind == ENG_BCAST) {
        size_t E = e->per * P, lo = c * E, len = e->count - lo < E ? e->count - lo : E;
        size_t a = len * (size_t)q / P, b = len * ((size_t)q + 1) / P;
        *off = lo + a, *n = b - a;
    } else {
        size_t lo = c * e->per;
        *off = lo, *n = e->count - lo < e->per ? e->count - lo : e->per;
    }
}

static unsigned char *pos(eng_t *e, int rank, size_t c, int q)
{
    return comm_region(e->c, rank, e->base + c) + (size_t)q * e->cap;
}

/* Where allreduce's reduced slice q of chunk c lives: in the staging slot
 * of rank 1 (of rank 0 for q = 1), over that rank's staged copy of slice q,
 * which rank q has just read — at P = 2, the peer's slot, the one rank q
 * reduced from. Cache lines migrate to the core that last read them: a
 * line written by rank a and then read by rank b is b's, and b's next
 * store to it costs no cross-core request, while a's next store must take
 * it back (bench/comm/linehome.c: 128 KiB stored in 2.6 us into lines
 * this core last read, 5.7 us into lines the peer last read).
 * So rank q stores its result into lines it owns after reducing, and at
 * P = 2 the peer gathers them from its own slot and owns them again when
 * it stages the next chunk there: every store of a call lands on lines its
 * core owns, and only the two reads per byte cross cores. Rank 0 or 1, so
 * that the slot is the reduction's first or second input
 * (comm_reduce_n's contract allows out to alias those). */
static unsigned char *reduced_at(eng_t *e, size_t c, int q)
{
    return pos(e, q == 0 ? 1 : 0, c, q);
}

static strata_status_t wait_all(eng_t *e, size_t field, uint64_t target)
{
    strata_comm_t *c = e->c;
    for (int q = 0; q < c->size; q++) {
        if (q == c->rank) continue;
        _Atomic uint64_t *f = (_Atomic uint64_t *)((unsigned char *)&c->lines[q] + field);
        strata_status_t st = comm_wait_ge(e->k, f, target, q);
        if (st != STRATA_OK) return st;
    }
    return STRATA_OK;
}

static void publish(eng_t *e, size_t field, uint64_t v)
{
    _Atomic uint64_t *f = (_Atomic uint64_t *)((unsigned char *)&e->c->lines[e->c->rank] + field);
    atomic_store_explicit(f, v, memory_order_release);
    comm_posted(e->c);
}

/* Publish chunk sequence s as staged, with this call's signature (and its
 * full count beside it, for messages). */
static void publish_staged(eng_t *e, uint64_t s)
{
    comm_staged_t *me = &e->c->lines[e->c->rank].staged;
    atomic_store_explicit(&me->count, e->k->sig.count, memory_order_relaxed);
    if (e->kind == ENG_AR && e->root < 0 && s == e->base) { /* the first handshake */
        atomic_store_explicit(&me->reg, e->reg ? (uint64_t)e->rsrc.serial + 1 : 0,
                              memory_order_relaxed);
        atomic_store_explicit(&me->reg_bytes, e->rsrc.pool_bytes, memory_order_relaxed);
        atomic_store_explicit(&me->reg_src, e->rsrc.off, memory_order_relaxed);
        atomic_store_explicit(&me->reg_dst, e->rdst.off, memory_order_relaxed);
    }
    atomic_store_explicit(&me->v, (uint64_t)e->k->sigword << 32 | (uint32_t)(s + 1),
                          memory_order_release);
    comm_posted(e->c);
}

/* Whether rank q, which has not staged what this engine call waits for
 * (chunk sequence target in l), is in a small call (56 bytes or less) this
 * rank has not made. The chunk is read again once the small word is seen
 * (acquire), as engine_ahead reads the small word again: what q staged
 * before its small call is then visible, and a chunk that has arrived
 * since the caller looked is no mismatch. */
static strata_status_t small_ahead(comm_call_t *k, int q, const comm_staged_t *l, uint32_t target)
{
    strata_comm_t *c = k->c;
    for (int par = 0; par < 2; par++) {
        uint64_t w = atomic_load_explicit(&c->lines[q].small[par].seq, memory_order_acquire);
        if ((int32_t)((uint32_t)w - (uint32_t)c->sseq) > 0) {
            uint64_t v = atomic_load_explicit(&l->v, memory_order_acquire);
            if ((int32_t)((uint32_t)v - target) >= 0) return STRATA_OK;
            comm_sig_t theirs = comm_sig_from_word((uint32_t)(w >> 32), 0);
            return comm_mismatch(k, q, &theirs);
        }
    }
    return STRATA_OK;
}

/* Wait until rank q has staged chunk ch of this call (or later), and check
 * its signature while the word is one of this call's chunks: a peer whose
 * word shows a later sequence has finished the call, so it matched. */
static strata_status_t wait_staged_one(eng_t *e, int q, size_t ch)
{
    strata_comm_t *c = e->c;
    const comm_staged_t *l = &c->lines[q].staged;
    uint32_t target = (uint32_t)(e->base + ch + 1), first = (uint32_t)(e->base + 1);
    comm_wait_t wt = COMM_WAIT_INIT;
    bool blocked = false;
    for (;;) {
        uint64_t w = atomic_load_explicit(&l->v, memory_order_acquire);
        if ((int32_t)((uint32_t)w - target) >= 0) {
            if ((uint32_t)w - first >= e->nchunks || (uint32_t)(w >> 32) == e->k->sigword)
                return STRATA_OK;
            comm_sig_t theirs = comm_sig_from_word(
                (uint32_t)(w >> 32), atomic_load_explicit(&l->count, memory_order_relaxed));
            return comm_mismatch(e->k, q, &theirs);
        }
        if (comm_poll_due(&wt.polls, blocked)) {
            strata_status_t st = small_ahead(e->k, q, l, target); /* first: as in wait_small */
            if (st == STRATA_OK) st = comm_check(e->k, q);
            if (st != STRATA_OK) return st;
        }
        blocked = comm_wait_step(e->k, &wt, c->spin_limit, comm_peer_needs_cpu(c, q, &wt.cpu),
                                 (uint64_t)1 << q);
    }
}

/* wait_staged_one for every other rank. */
static strata_status_t wait_staged(eng_t *e, size_t ch)
{
    for (int q = 0; q < e->c->size; q++) {
        if (q == e->c->rank) continue;
        strata_status_t st = wait_staged_one(e, q, ch);
        if (st != STRATA_OK) return st;
    }
    return STRATA_OK;
}

#define F_STAGED  offsetof(comm_rank_lines_t, staged)
#define F_REDUCED offsetof(comm_rank_lines_t, reduced)
#define F_DONE    offsetof(comm_rank_lines_t, done)

/* ==== Phases ==== */

static strata_status_t stage(eng_t *e, size_t c)
{
    uint64_t s = e->base + c;
    int r = e->c->rank, P = e->c->size;
    if (s >= COMM_DEPTH) { /* slot s%3 last held chunk s-3: all must be done with it */
        strata_status_t st = wait_all(e, F_DONE, s - COMM_DEPTH + 1);
        if (st != STRATA_OK) return st;
    }
    size_t off, n, es = e->es;
    switch (e->kind) {
    case ENG_AR: {
        for (int q = 0; q < P; q++)
            if (q != r)
                slice(e, c, q, &off, &n),
                    comm_copy_nofence(pos(e, r, c, q), e->src + off * es, n * es, e->nt_stage);
        if (e->nt_stage) comm_stream_fence(); /* before publish_staged's release store */
        break;
    }
    case ENG_RS:
    case ENG_A2A:
        for (int q = 0; q < P; q++)
            if (q != r) {
                slice(e, c, q, &off, &n);
                memcpy(pos(e, r, c, q), e->src + ((size_t)q * e->count + off) * es, n * es);
            }
        break;
    case ENG_AG:
        slice(e, c, r, &off, &n);
        memcpy(pos(e, r, c, r), e->src + off * es, n * es);
        break;
    case ENG_BCAST:
        if (r == e->root)
            for (int q = 0; q < P; q++)
                slice(e, c, q, &off, &n), memcpy(pos(e, r, c, q), e->dst + off * es, n * es);
        break;
    case ENG_FLAT: {
        size_t lo = c * e->per, len = e->count - lo < e->per ? e->count - lo : e->per;
        memcpy(pos(e, r, c, 0), e->src + lo * es, len * es);
        break;
    }
    }
    publish_staged(e, s);
    return STRATA_OK;
}

/* Bytes reduced and copied out at a time: a block stays in L1 (48 KiB
 * here) between the reduction and the copy (4 KiB-1 MiB measured: 16 KiB
 * best by ~1 us at 256 KiB; bench/README.md, issue 17 session 7). */
#define REDUCE_BLOCK STRATA_DIRECT_BLOCK

static strata_status_t reduce(eng_t *e, size_t c)
{
    uint64_t s = e->base + c;
    int r = e->c->rank, P = e->c->size;
    strata_status_t st = wait_staged(e, c);
    if (st != STRATA_OK) return st;
    const void *srcs[COMM_MAX_SIZE];
    size_t off, n;
    slice(e, c, r, &off, &n);
    size_t src_off = e->kind == ENG_RS ? (size_t)r * e->count + off : off;
    for (int q = 0; q < P; q++)
        srcs[q] = q == r ? e->src + src_off * e->es : pos(e, q, c, r);
    if (e->kind == ENG_RS) {
        comm_reduce_n(e->dst + off * e->es, srcs, P, n, e->dt, e->op, P);
        return STRATA_OK;
    }
    /* Allreduce: reduce block by block, each copied to the output while it
     * is in L1 (in place, a block of the input is read before it is
     * written, and later blocks are not touched). */
    unsigned char *out = reduced_at(e, c, r);
    bool own = e->root < 0 || e->root == r;
    size_t step = REDUCE_BLOCK / e->es;
    for (size_t i = 0; i < n; i += step) {
        size_t m = n - i < step ? n - i : step, o = i * e->es;
        const void *in[COMM_MAX_SIZE];
        for (int q = 0; q < P; q++)
            in[q] = (const unsigned char *)srcs[q] + o;
        unsigned char *to = e->dst + off * e->es + o;
        if (own && e->stream) /* the streamed output within the reduction's loop */
            comm_reduce_n_stream(out + o, to, in, P, m, e->dt, e->op, P);
        else {
            comm_reduce_n(out + o, in, P, m, e->dt, e->op, P);
            if (own) comm_copy_nofence(to, out + o, m * e->es, false);
        }
    }
    if (own && e->stream) comm_stream_fence(); /* one fence a phase (copy.c) */
    publish(e, F_REDUCED, s + 1);
    return STRATA_OK;
}

static strata_status_t flat(eng_t *e, size_t c)
{
    int r = e->c->rank, P = e->c->size;
    strata_status_t st = wait_staged(e, c);
    if (st != STRATA_OK) return st;
    if (e->root >= 0 && r != e->root) return STRATA_OK;
    size_t lo = c * e->per, len = e->count - lo < e->per ? e->count - lo : e->per;
    const void *srcs[COMM_MAX_SIZE];
    for (int q = 0; q < P; q++)
        srcs[q] = pos(e, q, c, 0);
    /* Our own part from src rather than from our slot, whose lines the
     * peers are reading (they move to the core that reads them: see
     * comm_small_allreduce), unless dst overlaps src in a way the reduction
     * does not allow (it may alias its first or second input exactly). */
    size_t b = e->count * e->es;
    bool apart = e->src + b <= e->dst || e->dst + b <= e->src;
    if (apart || (e->src == e->dst && r < 2)) srcs[r] = e->src + lo * e->es;
    comm_reduce_n(e->dst + lo * e->es, srcs, P, len, e->dt, e->op, P);
    return STRATA_OK;
}

static strata_status_t gather(eng_t *e, size_t c)
{
    uint64_t s = e->base + c;
    int r = e->c->rank, P = e->c->size;
    size_t off, n, es = e->es;
    strata_status_t st = STRATA_OK;
    switch (e->kind) {
    case ENG_AR:
        if (e->root >= 0 && r != e->root) break;
        st = wait_all(e, F_REDUCED, s + 1);
        for (int q = 0; q < P && st == STRATA_OK; q++)
            if (q != r)
                slice(e, c, q, &off, &n),
                    comm_copy_nofence(e->dst + off * es, reduced_at(e, c, q), n * es, e->stream);
        if (e->stream) comm_stream_fence();
        break;
    case ENG_AG:
    case ENG_A2A:
        st = wait_staged(e, c);
        for (int q = 0; q < P && st == STRATA_OK; q++) {
            slice(e, c, q, &off, &n);
            unsigned char *d = e->dst + ((size_t)q * e->count + off) * es;
            const unsigned char *from =
                q != r ? pos(e, q, c, e->kind == ENG_AG ? q : r)
                       : e->src + ((e->kind == ENG_AG ? 0 : (size_t)r * e->count) + off) * es;
            comm_copy(d, from, n * es, e->stream);
        }
        break;
    case ENG_BCAST:
        /* Chunk 0: every rank's word, the root's too, so that ranks naming
         * different roots see each other (a root waits for the others to
         * enter the call, nothing more). */
        if (c == 0) st = wait_staged(e, 0);
        if (r == e->root) break;
        if (c > 0) st = wait_staged_one(e, e->root, c);
        for (int q = 0; q < P && st == STRATA_OK; q++)
            slice(e, c, q, &off, &n),
                comm_copy(e->dst + off * es, pos(e, e->root, c, q), n * es, e->stream);
        break;
    default:
        break;
    }
    return st;
}

/* ==== Registered buffers ==== */

/* Piece of a slice reduced and written out at once: small enough to stay
 * in L2 between the reduction and the copies to every rank's output. */
#define REG_PIECE (64u * 1024u)

/* Whether every rank published registered buffers with this call's chunk 0.
 * Read after wait_staged(e, 0): the words are this call's, as no rank
 * publishes its next allreduce's before this rank publishes reduced. */
static bool all_registered(const eng_t *e)
{
    for (int q = 0; q < e->c->size; q++)
        if (atomic_load_explicit(&e->c->lines[q].staged.reg, memory_order_relaxed) == 0)
            return false;
    return true;
}

/* Rank q's slice of the whole vector: whole cache lines (every element size
 * divides 64), so no two ranks write into one line of an output. */
static void reg_slice(const eng_t *e, int q, size_t *off, size_t *n)
{
    size_t P = (size_t)e->c->size, per_line = COMM_LINE / e->es;
    size_t lines = (e->count + per_line - 1) / per_line;
    size_t a = lines * (size_t)q / P * per_line, b = lines * ((size_t)q + 1) / P * per_line;
    a = a < e->count ? a : e->count, b = b < e->count ? b : e->count;
    *off = a, *n = b - a;
}

/* Every rank's send and receive buffer: peers' from their pools, mapped on
 * first use, at the offsets they published. A failure fails the
 * communicator, so the peers do not wait for this rank's slice. */
static strata_status_t reg_buffers(eng_t *e, const unsigned char **srcs, unsigned char **dsts)
{
    strata_comm_t *c = e->c;
    size_t bytes = e->count * e->es;
    for (int q = 0; q < c->size; q++) {
        if (q == c->rank) {
            srcs[q] = e->src, dsts[q] = e->dst;
            continue;
        }
        const comm_staged_t *l = &c->lines[q].staged;
        uint64_t serial = atomic_load_explicit(&l->reg, memory_order_relaxed) - 1;
        uint64_t pool = atomic_load_explicit(&l->reg_bytes, memory_order_relaxed);
        uint64_t so = atomic_load_explicit(&l->reg_src, memory_order_relaxed);
        uint64_t dso = atomic_load_explicit(&l->reg_dst, memory_order_relaxed);
        unsigned char *base = NULL;
        strata_status_t st =
            bytes > pool || so > pool - bytes || dso > pool - bytes
                ? comm_fail(e->k, STRATA_ERR_PROTOCOL,
                            "%s: rank %d's registered buffers (offsets %llu, %llu) overrun its "
                            "pool of %llu bytes",
                            e->k->what, q, (unsigned long long)so, (unsigned long long)dso,
                            (unsigned long long)pool)
                : comm_mem_peer(e->k, q, (uint32_t)serial, pool, &base);
        if (st != STRATA_OK) {
            comm_mark_failed(c, c->rank, COMM_FAIL_ABORTED);
            return st;
        }
        srcs[q] = base + so, dsts[q] = base + dso;
    }
    return STRATA_OK;
}

/* Allreduce on registered buffers: rank r reduces its slice piece by piece
 * straight from every rank's send buffer (rank order, as the staged engine)
 * and writes each piece into every rank's receive buffer, then one
 * hand-off: reduced = base + 1 says "my slice is everywhere and I no longer
 * read your input". Every rank entered the call (its chunk 0 was waited
 * for), so its buffers are ready; it returns only when every rank's reduced
 * shows nothing touches them any more. In place: each piece of every input
 * is read (only by the rank that owns that slice) before it is written.
 * The result goes through an L2-sized buffer when this rank's output
 * aliases its input or is streamed (non-temporal stores write without
 * reading the lines first). */
static strata_status_t registered(eng_t *e)
{
    strata_comm_t *c = e->c;
    int r = c->rank, P = c->size;
    c->cseq = e->base + 1; /* only chunk 0 (its staging unread) */
    c->reg_calls++;
    /* the fixed crossover: out_mode measures the staged calls only */
    e->stream = e->count * e->es >= comm_stream_min();
    const unsigned char *srcs[COMM_MAX_SIZE];
    unsigned char *dsts[COMM_MAX_SIZE];
    strata_status_t st = reg_buffers(e, srcs, dsts);
    if (st != STRATA_OK) return st;
    size_t off, n, es = e->es, bytes = e->count * es;
    reg_slice(e, r, &off, &n);
    bool alias = e->src < e->dst + bytes && e->dst < e->src + bytes;
    unsigned char *tmp = alias || e->stream ? malloc(REG_PIECE) : NULL;
    if ((alias || e->stream) && !tmp) {
        comm_mark_failed(c, r, COMM_FAIL_ABORTED);
        return comm_fail(e->k, STRATA_ERR_NOMEM, "%s: out of memory", e->k->what);
    }
    size_t step = REG_PIECE / es;
    for (size_t i = 0; i < n; i += step) {
        size_t m = n - i < step ? n - i : step, o = (off + i) * es;
        const void *in[COMM_MAX_SIZE];
        for (int q = 0; q < P; q++)
            in[q] = srcs[q] + o;
        unsigned char *out = tmp ? tmp : dsts[r] + o;
        comm_reduce_n(out, in, P, m, e->dt, e->op, P);
        for (int q = 0; q < P; q++)
            if (q != r || tmp) comm_copy(dsts[q] + o, out, m * es, e->stream);
    }
    free(tmp);
    publish(e, F_REDUCED, e->base + 1);
    st = wait_all(e, F_REDUCED, e->base + 1);
    if (st == STRATA_OK) publish(e, F_DONE, e->base + 1);
    return st;
}

/* ==== Driver ==== */

/* Chunk (all P slices) used by default for large vectors: 256 KiB, the
 * prototype's figure (issue #6) — small enough that a chunk's staged and
 * reduced data stay in L2/L3 between the phases. STRATA_CHUNK overrides. */
#define COMM_CHUNK_DEFAULT STRATA_DIRECT_CHUNK

size_t comm_chunk_bytes(void)
{
    static size_t chunk; /* 0: not read yet */
    if (chunk == 0) {
        const char *env = getenv("STRATA_CHUNK");
        size_t v = env && *env ? (size_t)strtoull(env, NULL, 10) : 0;
        chunk = v == 0 ? COMM_CHUNK_DEFAULT : v > COMM_REGION ? COMM_REGION : v;
    }
    return chunk;
}

/* The largest chunk of an allreduce whose ranks outnumber the host's CPUs:
 * two ranks on a core take turns at least once per chunk (a rank cannot
 * gather chunk c before its core partner has reduced it), so each chunk
 * costs a switch per core (5-8 us here, vsmpi's hand-off line) and the
 * waits around it. A vector runs in as few chunks as slice_cap allows: at
 * least 4 (STRATA_DIRECT_SHARED_CHUNKS, so the partners interleave), each
 * up to this, the whole 1 MiB slot. 1 MiB chunks took a quarter of the
 * switches of 256 KiB ones at 64 MiB (4 ranks on 2 CPUs: 21.8 against
 * 24.5 ms a call; issue 17 session 10), and on the Turin host of session
 * 17 (L2 1 MiB a core, cross-core line 240-990 ns) 4 of them beat 16 at
 * 4 MiB in every paired run (vsmpi, 4 ranks: 792-856 against 929-1267 us;
 * each rank's own work the same, its waits for the partner's turns
 * ~120 us shorter), as 1 MiB chunks did at 2, 8 and 16 MiB (bench/README.md
 * "s17-h17"). Session 10's host had measured 4 of them slower than 16 at
 * 4 MiB (1133 against 1036 us), 16 no better than 64 at 16 MiB.
 * STRATA_CHUNK, when set, is the chunk here too. */
size_t comm_chunk_bytes_shared(void)
{
    const char *env = getenv("STRATA_CHUNK");
    if (env && *env && strtoull(env, NULL, 10) > 0) return comm_chunk_bytes();
    return STRATA_DIRECT_CHUNK_SHARED < COMM_REGION ? STRATA_DIRECT_CHUNK_SHARED : COMM_REGION;
}

static size_t slice_cap(const strata_comm_t *c, eng_kind_t kind, size_t bytes_per_rank)
{
    size_t P = (size_t)c->size;
    size_t chunk = comm_chunk_bytes();
    if (kind == ENG_AR && c->shared_cpus) { /* the vector over 4, up to the whole slot */
        size_t want = bytes_per_rank * P / STRATA_DIRECT_SHARED_CHUNKS,
               max = comm_chunk_bytes_shared();
        chunk = want > max ? max : want > chunk ? want : chunk;
    }
    size_t cap = chunk / P / COMM_LINE * COMM_LINE;
    if (cap < COMM_LINE) cap = COMM_LINE;
    /* Allreduce of one chunk or less runs as one chunk: splitting a 256 KiB
     * allreduce into 4 chunks so staging overlaps synchronisation cost
     * more in per-chunk flag hand-offs than the overlap won (2 ranks,
     * paired with Open MPI: 256 KiB 10.6-12.5 -> 8.2-9.0 us, 128 KiB
     * 6.0 -> 5.0-5.4 us, 64 KiB 2.85 -> 2.9-3.0 us; bench/README.md, run C).
     * The other collectives, not measured that way, keep at least 4 chunks,
     * and so does allreduce when the host's ranks outnumber its CPUs: two
     * ranks taking turns on a core then interleave chunk by chunk (4 ranks
     * on 2 CPUs, 256 KiB: 57-62 us against 70-92 us a call in one chunk;
     * bench/README.md, issue 17 session 7). STRATA_MIN_CHUNKS sets the
     * minimum for all (slices of 4 KiB or more). */
    static long nmin_env = -1;
    if (nmin_env < 0) {
        const char *e = getenv("STRATA_MIN_CHUNKS");
        nmin_env = e && atol(e) > 0 ? atol(e) : 0;
    }
    size_t nmin = nmin_env > 0 ? (size_t)nmin_env : kind == ENG_AR && !c->shared_cpus ? 1 : 4;
    size_t want = bytes_per_rank / nmin / COMM_LINE * COMM_LINE;
    if (want < STRATA_DIRECT_SLICE_MIN) want = STRATA_DIRECT_SLICE_MIN;
    return want < cap ? want : cap;
}

/* ==== Measured choices ==== */

#define MODE_PROBE 16

/* Where call `call` of a size class falls in a probe window of a choice
 * with phase `phase` (-1 outside). Single-call windows (stage_mode's):
 * calls phase and phase + 2 (so that each mode has two calls measured
 * early), then every MODE_PROBE-th call from phase + MODE_PROBE; the
 * window's call is 1: it runs the other mode and is measured, and every
 * other call is measured for the current mode. Paired windows (out_mode's):
 * 3, the call before a window, runs the current mode and is measured as
 * its reference; 0 and 1 run the other mode, only 1 measured; 2, the call
 * back, is not measured; no other call is. They start at phase and
 * phase + 4 (so that each mode has two calls measured early), then at
 * phase + 16, 32, 64 and every MODE_PROBE_MAX calls from phase +
 * MODE_PROBE_MAX. Two calls because only a call after one in the same mode
 * costs what a run of that mode costs when the mode decides where a call's
 * stores leave lines the next call uses again: the output's (plain stores:
 * in the caches, dirty; streaming ones: in memory), so the first call of a
 * mode pays for the other's leftovers (a plain call after streaming ones
 * reads its output lines from memory, a streaming call after plain ones
 * writes the cached copies back first). A reference beside each probe,
 * not every call, because the current mode's calls also catch whatever
 * else disturbs the caches (another program's calls between, a placement
 * change) while the rare probes mostly miss it: measured on every call,
 * the current mode looked dearer than it was and a choice flipped to the
 * other mode for good (2 ranks, 4 MiB, vsmpi: plain calls after Open MPI's
 * calls 0.14-0.16 ns/B against 0.06-0.07 in a run). The gaps grow so that
 * a settled choice costs 3 calls in MODE_PROBE_MAX in the other mode. */
#define MODE_PROBE_MAX 128

static int probe_pos(uint64_t call, unsigned phase, bool pair)
{
    if (!pair) {
        uint64_t d = call - phase;
        return call >= phase && (d == 0 || d == 2 || (d >= MODE_PROBE && d % MODE_PROBE == 0)) ? 1
                                                                                               : -1;
    }
    if (call + 1 < phase) return -1;
    uint64_t d = call + 1 - phase; /* from the reference before the first window */
    if (d < 8) return (int)((d + 3) % 4);
    uint64_t w = d >= MODE_PROBE_MAX ? d - d % MODE_PROBE_MAX : MODE_PROBE;
    while (w * 2 <= d && w * 2 < MODE_PROBE_MAX)
        w *= 2;
    return d >= MODE_PROBE && d - w < 4 ? (int)((d - w + 3) % 4) : -1;
}

/* The mode of this call of a measured choice l (stage_mode, out_mode) for
 * a call of `bytes`: the preferred one, or the other in a probe window
 * (probe_pos, paired windows when `pair`). A call of another size class (power of two) than the
 * last starts the choice over, preferring mode `start`. Calls count per class, from 0, on every
 * rank alike (the same collectives in the same order), so the probes fall on the same calls
 * everywhere. *pos_p: probe_pos. */
static bool mode_pick(comm_learn_t *l, size_t bytes, bool start, unsigned phase, bool pair,
                      int *pos_p)
{
    int bucket = 0;
    while ((bytes >> bucket) > 1)
        bucket++;
    if (bucket != l->bucket) {
        l->bucket = bucket, l->calls = 0, l->mode = start;
        l->cost[0] = l->cost[1] = l->dev[0] = l->dev[1] = 0;
        l->n[0] = l->n[1] = 0;
    }
    *pos_p = probe_pos(l->calls++, phase, pair);
    bool m = *pos_p == 0 || *pos_p == 1 ? !l->mode : l->mode;
    if (m) l->on_calls++;
    return m;
}

/* Fold a finished call's seconds per byte x, run in mode m, into that
 * mode's figure and mean deviation (each the mean of the last value and
 * this call's: a placement change shows within two calls of a mode), then
 * prefer the other mode if it is cheaper beyond both spreads. */
static void mode_learn(comm_learn_t *l, bool m, double x)
{
    double *f = &l->cost[m], *d = &l->dev[m];
    if (l->n[m]++ > 0)
        *d = (*d + (x > *f ? x - *f : *f - x)) / 2, *f = (*f + x) / 2;
    else
        *f = x;
    bool cur = l->mode, alt = !cur;
    if (l->n[alt] >= 2 && l->n[cur] >= 2 && l->cost[alt] + l->dev[alt] < l->cost[cur] - l->dev[cur])
        l->mode = alt;
}

/* How an allreduce at P > 2 stages: cached stores (memcpy) or streaming
 * ones. At P = 2 the lines a rank restages were last touched by itself (the
 * peer gathers from its own slot: reduced_at), but at P > 2 the peers read a
 * rank's staged slices, and the reduced slices written over rank 1's (rank
 * 0's) slot are gathered by every rank, so the next staging into the slot
 * stores into lines other cores read last: each store must first fetch its
 * line back (a read for ownership). What that costs is the placement's.
 * With the two CPUs close (core-to-core line 30-48 ns) it is cheap, and
 * the peers then read the staged slices from this core's cache; with them
 * far apart (155-211 ns) such stores crawl (2.0-2.5 GB/s, bench/comm/
 * linehome.c), and streaming stores, which write whole lines without
 * fetching them, cost less even though the peers then read memory. The
 * host switches between the two while a job runs (bench/README.md, issue
 * 17 sessions 11-12), so each rank measures: the wall time per byte of its
 * calls under either mode (waits included: a mode also changes what the
 * peers' reads and this rank's waits for them cost). The other mode is
 * probed in out_mode's paired windows (probe_pos, phase 2: calls 1 and 5
 * of a class are references, 2-3 and 6-7 probes measured on 3 and 7, 4
 * and 8 the calls back; then 17-20, 33-36, 65-68 and 128k + 1 to 128k +
 * 4), the same calls on every rank (they count the same staged allreduces,
 * so in a probe every rank stages the other way; registered-buffer calls,
 * which stage only chunk 0, are not counted). Call 0 is not measured: it
 * pays for the change of size (2.1-3.0 ns/B against 0.85-0.98 for the
 * next references, vsmpi 4 ranks 4 MiB far), and a figure halves such a
 * call's weight only slowly: measured, it kept a rank in the mode it had
 * left for 117 calls while the other's calls measured cheaper (the single
 * probes before: cached 0.35-0.39 against streaming 0.43-0.50 ns/B;
 * bench/README.md "s14-h17"). Windows of two calls, only the second
 * measured against the call before the window, as out_mode's, whose first
 * call of a mode pays for the other's leftovers (not seen in the staging
 * figures here: single cached probes measured as cached calls in a run
 * do), and a settled choice costs 2 calls in 128 where single probes cost
 * 1 in 16. A rank changes mode only
 * once each mode has two calls measured, and when the other mode's figure
 * is lower by more than both figures' mean deviations (the spread of the
 * calls measured), so noise on a loaded host does not flip it
 * (mode_learn). A call of another size (power of two) starts over, with
 * cached stores. STRATA_STAGE_NT=0 or 1 fixes the mode
 * (comparisons). Only this rank's stores change: the bytes, and the flags
 * that publish them (after a fence), are the same, so the choice needs no
 * agreement between ranks. */
static bool stage_mode(strata_comm_t *c, size_t bytes, bool *measure, int *pos)
{
    static int forced = -2; /* -1: measured */
    if (forced == -2) {
        const char *v = getenv("STRATA_STAGE_NT");
        forced = v && *v ? atoi(v) != 0 : -1;
    }
    *measure = forced < 0;
    if (!*measure) {
        if (forced == 1) c->stage.on_calls++;
        return forced == 1;
    }
    return mode_pick(&c->stage, bytes, false, 2, true, pos);
}

/* How an allreduce stores its output (the reduced slices it copies to the
 * user's buffer): plain stores (memcpy) or streaming ones. Streaming stores
 * write whole lines without reading them first and leave the caches to the
 * slots the peers still read, but the stores go to memory and the caller
 * then finds its result there, not in its caches; plain stores into an
 * output that does not fit the caches cost a read for ownership and an
 * eviction per line. Where the two cross depends on the host and on the
 * placement of the ranks' CPUs, which change while a job runs (2 ranks,
 * 4-8 MiB: 8 MiB 2,087-2,144 us a call with plain, 954-1,228 us with
 * streaming stores; bench/README.md, issue 17 session 12), so the engine
 * measures it as stage_mode does, per size class, starting from the fixed
 * crossover comm_stream_min() (16 MiB): probe_pos's paired windows, phase
 * 8, i.e. calls 7 and 11 of a class measure the current mode, 8-9 and
 * 12-13 probe the other (9 and 13 measured), 10 and 14 come back; then
 * 23-26, 39-42, 71-74, 135-138 and every 128 calls: apart from
 * stage_mode's windows (calls 1-8, 17-20, 33-36, 65-68, 128k + 1 to 128k
 * + 4) but for calls 7-8, which are therefore not measured here (a call in
 * one choice's window is not measured for the other), and
 * a call in out_mode's probe is not measured for stage_mode. Only from
 * outputs of OUT_LEARN_MIN
 * bytes: an output of a core's L2 (1 MiB here) or less likely stays in the
 * caches for the caller, which plain stores leave it in, and its stores are
 * few. Above the last-level cache (comm_llc_bytes, when known) the output
 * cannot stay in the caches, so plain stores only add a read per line:
 * streaming, not measured. STRATA_NT_THRESHOLD fixes the crossover (no
 * measuring). Only this rank's stores to its own output change: no
 * agreement between ranks needed. */
#define OUT_LEARN_MIN (1u << 20)

static bool out_mode(strata_comm_t *c, size_t bytes, bool *measure, int *pos)
{
    bool fixed = bytes >= comm_stream_min();
    size_t llc = comm_llc_bytes();
    bool env = comm_stream_env();
    if (!env && llc > 0 && bytes > llc) fixed = true;
    *measure = !env && bytes >= OUT_LEARN_MIN && (llc == 0 || bytes <= llc);
    if (!*measure) {
        if (fixed) c->out.on_calls++;
        return fixed;
    }
    return mode_pick(&c->out, bytes, fixed, 8, true, pos);
}

static strata_status_t run(eng_t *e)
{
    strata_comm_t *c = e->c;
    if (e->count == 0) return STRATA_OK;
    e->nchunks = (e->count + e->per - 1) / e->per;
    if (e->kind == ENG_AR || e->kind == ENG_BCAST) {
        size_t E = e->per * (size_t)c->size;
        e->nchunks = (e->count + E - 1) / E;
    }
    e->base = c->cseq;
    c->cseq += e->nchunks;
    size_t bytes = e->count * e->es;
    comm_learn_t stage_before = c->stage;
    if (e->kind == ENG_AR && c->size > 2 && e->nchunks > 1)
        e->nt_stage = stage_mode(c, bytes, &e->stage_measure, &e->stage_pos);
    double t0 = e->kind == ENG_AR ? util_now() : 0;
    strata_status_t st = stage(e, 0);
    if (st == STRATA_OK && e->kind == ENG_AR && e->root < 0) {
        st = wait_staged(e, 0); /* reduce(e, 0) would wait for it first anyway */
        if (st == STRATA_OK && all_registered(e)) {
            /* not a call of the staging choice either (every rank alike):
             * only chunk 0 was staged, and a probe window must not fall
             * on calls that stage nothing else */
            c->stage = stage_before;
            return registered(e);
        }
        /* not before: registered calls (the same on every rank) are not
         * this choice's; the output's first stores come after this */
        e->stream = out_mode(c, bytes, &e->out_measure, &e->out_pos);
    }
    for (size_t ch = 0; ch < e->nchunks && st == STRATA_OK; ch++) {
        if (e->kind == ENG_AR || e->kind == ENG_RS) st = reduce(e, ch);
        if (e->kind == ENG_FLAT && st == STRATA_OK) st = flat(e, ch);
        if (st == STRATA_OK && ch + 1 < e->nchunks) st = stage(e, ch + 1);
        if (st == STRATA_OK) st = gather(e, ch);
        if (st == STRATA_OK) publish(e, F_DONE, e->base + ch + 1);
    }
    /* a call in one choice's probe window says nothing of the other's mode */
    double x = st == STRATA_OK ? (util_now() - t0) / (double)bytes : 0;
    bool out_quiet = e->out_pos == -1 || e->out_pos == 3; /* the current mode's stores */
    if (st == STRATA_OK && e->stage_measure && (e->stage_pos == 1 || e->stage_pos == 3) &&
        out_quiet)
        mode_learn(&c->stage, e->nt_stage, x);
    if (st == STRATA_OK && e->out_measure && (e->out_pos == 1 || e->out_pos == 3) &&
        e->stage_pos == -1)
        mode_learn(&c->out, e->stream, x);
    return st;
}

static eng_t eng_init(comm_call_t *k, eng_kind_t kind, const void *src, void *dst, size_t count,
                      size_t es)
{
    eng_t e = {.k = k,
               .c = k->c,
               .kind = kind,
               .src = src,
               .dst = dst,
               .es = es,
               .count = count,
               .root = -1,
               .stage_pos = -1,
               .out_pos = -1,
               .dt = STRATA_UINT8,
               .op = STRATA_SUM};
    size_t per_rank_bytes =
        kind == ENG_AR || kind == ENG_BCAST ? count * es / (size_t)k->c->size : count * es;
    e.cap = slice_cap(k->c, kind, per_rank_bytes);
    e.per = e.cap / es;
    size_t out_bytes = kind == ENG_RS                        ? count * es
                       : kind == ENG_AR || kind == ENG_BCAST ? count * es
                                                             : count * es * (size_t)k->c->size;
    e.stream = out_bytes >= comm_stream_min();
    return e;
}

strata_status_t comm_shm_allreduce(comm_call_t *k, const void *src, void *dst, size_t count,
                                   strata_dtype_t dt, strata_op_t op, int root)
{
    size_t es = strata_dtype_size(dt), bytes = count * es;
    if (bytes <= COMM_LINE_DATA) return comm_small_allreduce(k, src, dst, count, dt, op, root);
    static long flat_max = -1;
    if (flat_max < 0) {
        const char *env = getenv("STRATA_FLAT_MAX");
        flat_max = env && *env ? atol(env) : (long)COMM_FLAT_MAX;
    }
    eng_t e = eng_init(k, bytes <= (size_t)flat_max ? ENG_FLAT : ENG_AR, src, dst, count, es);
    if (e.kind == ENG_FLAT) e.cap = COMM_REGION, e.per = COMM_REGION / es;
    e.dt = dt, e.op = op, e.root = root;
    e.reg = e.kind == ENG_AR && root < 0 && comm_mem_lookup(k->c, src, bytes, &e.rsrc) &&
            comm_mem_lookup(k->c, dst, bytes, &e.rdst);
    return run(&e);
}

strata_status_t comm_shm_reduce_scatter(comm_call_t *k, const void *src, void *dst, size_t count,
                                        strata_dtype_t dt, strata_op_t op)
{
    eng_t e = eng_init(k, ENG_RS, src, dst, count, strata_dtype_size(dt));
    e.dt = dt, e.op = op;
    return run(&e);
}

strata_status_t comm_shm_allgather(comm_call_t *k, const void *src, void *dst, size_t bytes)
{
    eng_t e = eng_init(k, ENG_AG, src, dst, bytes, 1);
    return run(&e);
}

strata_status_t comm_shm_alltoall(comm_call_t *k, const void *src, void *dst, size_t bytes)
{
    eng_t e = eng_init(k, ENG_A2A, src, dst, bytes, 1);
    return run(&e);
}

strata_status_t comm_shm_broadcast(comm_call_t *k, void *buf, size_t bytes, int root)
{
    if (bytes <= COMM_LINE_DATA) {
        bool me = k->c->rank == root;
        const unsigned char *all;
        strata_status_t st = comm_small_exchange(k, me ? buf : NULL, me ? bytes : 0, &all);
        if (st == STRATA_OK && !me)
            memcpy(buf, all + (size_t)root * sizeof(comm_rank_lines_t), bytes);
        return st;
    }
    eng_t e = eng_init(k, ENG_BCAST, buf, buf, bytes, 1);
    e.root = root;
    return run(&e);
}

/* ==== Line slots ==== */

/* Rank q's small-slot word of parity par: (signature << 32) | sequence. */
static uint64_t small_word(strata_comm_t *c, int q, int par)
{
    return atomic_load_explicit(&c->lines[q].small[par].seq, memory_order_acquire);
}

/* Whether rank q's line of parity par holds sequence s. It holds s or s - 2
 * (a rank posts s + 2 there only after reading every line of s + 1), so the
 * low 32 bits tell, and wrapping is harmless. */
static bool posted(strata_comm_t *c, int q, int par, uint64_t s)
{
    return (uint32_t)small_word(c, q, par) == (uint32_t)s;
}

/* Whether rank q, which has not posted this small call (sequence s of
 * parity par), has staged an engine chunk this rank has not: it is in an
 * engine call (more than 56 bytes) where this rank made a small one.
 * Checked when polling slowly. q may have posted s, finished this call and
 * staged its next engine call's first chunk since the caller saw s missing:
 * its post comes before that chunk's, so once the chunk is seen here
 * (acquire) the post is too — read the small word again before calling it
 * a mismatch (an ASan run of the bench hit that window, CI 2026-12-03). */
static strata_status_t engine_ahead(comm_call_t *k, int q, int par, uint64_t s)
{
    strata_comm_t *c = k->c;
    uint64_t w = atomic_load_explicit(&c->lines[q].staged.v, memory_order_acquire);
    if ((int32_t)((uint32_t)w - (uint32_t)(c->cseq + 1)) < 0) return STRATA_OK;
    if (posted(c, q, par, s)) return STRATA_OK;
    uint64_t n = atomic_load_explicit(&c->lines[q].staged.count, memory_order_relaxed);
    comm_sig_t theirs = comm_sig_from_word((uint32_t)(w >> 32), n);
    return comm_mismatch(k, q, &theirs);
}

/* Whether a rank from q on that has not posted s is yielding on this CPU. */
static bool missing_needs_cpu(strata_comm_t *c, int q, int par, uint64_t s, int *cpu)
{
    for (int p = q; p < c->size; p++)
        if (p != c->rank && !posted(c, p, par, s) && comm_peer_needs_cpu(c, p, cpu)) return true;
    return false;
}

/* Wait until every rank's line of parity par holds sequence s. Yields at
 * (yields, later sleeps: shm.c) at once while some rank still missing is
 * inside sched_yield on this CPU (it
 * needs this CPU to post), else spins: a missing rank that is running has
 * every input of the previous call, so it posts within a few hundred ns.
 * The off-CPU words are read when scanning: on the first poll and after
 * every 16 polls of the spin on the first missing rank's word, so 2 ranks
 * on 2 cores poll only that word, as a plain flag wait does. */
static strata_status_t wait_small(comm_call_t *k, int par, uint64_t s)
{
    strata_comm_t *c = k->c;
    comm_wait_t wt = COMM_WAIT_INIT;
    int q = 0;
    bool blocked = false;
    for (;;) {
        for (; q < c->size; q++) { /* ranks before q have posted s, with our signature */
            if (q == c->rank) continue;
            uint64_t w = small_word(c, q, par);
            if ((uint32_t)w != (uint32_t)s) break;
            if ((uint32_t)(w >> 32) != k->sigword) {
                comm_sig_t theirs = comm_sig_from_word((uint32_t)(w >> 32), 0);
                return comm_mismatch(k, q, &theirs);
            }
        }
        if (q == c->size) return STRATA_OK;
        /* Every poll counts, the yielding ones too: a peer killed or
         * stopped inside sched_yield leaves its off-CPU word set for ever,
         * and only this check ends the wait then. */
        bool yield_now = missing_needs_cpu(c, q, par, s, &wt.cpu);
        for (int i = 0; i < 16 && !posted(c, q, par, s); i++) {
            if (comm_poll_due(&wt.polls, blocked)) {
                /* the peer's own words first: they name its call, which a
                 * failure already marked by a rank that saw it would not */
                strata_status_t st = engine_ahead(k, q, par, s);
                if (st == STRATA_OK) st = comm_check(k, q);
                if (st != STRATA_OK) return st;
            }
            /* a sleep waits for q's post (any missing rank's would do, but
             * q is the one this loop polls) */
            if ((blocked = comm_wait_step(k, &wt, c->spin_running, yield_now, (uint64_t)1 << q)))
                break;
        }
    }
}

/* Publish `bytes` of mine beside the next small sequence number and wait for
 * every rank's line of that sequence. *lines_p points at rank 0's data; rank
 * q's is sizeof(comm_rank_lines_t) * q further. Parity double-buffering is
 * safe: a rank writes parity p again only two calls later, after it has
 * seen every rank's line of the call in between, which each wrote only
 * after finishing its reads of this one. */
strata_status_t comm_small_exchange(comm_call_t *k, const void *mine, size_t bytes,
                                    const unsigned char **lines_p)
{
    strata_comm_t *c = k->c;
    uint64_t s = ++c->sseq;
    int par = (int)(s & 1);
    comm_small_t *me = &c->lines[c->rank].small[par];
    if (bytes) memcpy(me->data, mine, bytes);
    atomic_store_explicit(&me->seq, (uint64_t)k->sigword << 32 | (uint32_t)s, memory_order_release);
    comm_posted(c);
    strata_status_t st = wait_small(k, par, s);
    if (st == STRATA_OK) *lines_p = c->lines[0].small[par].data;
    return st;
}

strata_status_t comm_small_allreduce(comm_call_t *k, const void *src, void *dst, size_t count,
                                     strata_dtype_t dt, strata_op_t op, int root)
{
    strata_comm_t *c = k->c;
    size_t bytes = count * strata_dtype_size(dt);
    const unsigned char *all;
    strata_status_t st = comm_small_exchange(k, src, bytes, &all);
    if (st != STRATA_OK || (root >= 0 && c->rank != root)) return st;
    const void *srcs[COMM_MAX_SIZE];
    for (int q = 0; q < c->size; q++)
        srcs[q] = all + (size_t)q * sizeof(comm_rank_lines_t);
    /* Our own part from our private input, not from our line: the peers
     * have just read that line, and a line another core read after this
     * one wrote it has moved to that core, so reading it back is one more
     * cross-core transfer, on the path of every call (bench/comm/ownline.c:
     * an exchange 210 ns, 406 ns with the own line read back; 2 ranks,
     * 8 B: 0.35-0.40 -> 0.26-0.28 us with the CPUs far apart, 0.12-0.15 ->
     * 0.08-0.09 us close; bench/README.md, issue 17 session 11). Same
     * values in the same order: results stay bit-identical. */
    srcs[c->rank] = src;
    unsigned char tmp[COMM_LINE_DATA];
    comm_reduce_n(tmp, srcs, c->size, count, dt, op, c->size);
    memcpy(dst, tmp, bytes);
    return STRATA_OK;
}

strata_status_t comm_shm_barrier(comm_call_t *k)
{
    const unsigned char *all;
    return comm_small_exchange(k, NULL, 0, &all);
}
