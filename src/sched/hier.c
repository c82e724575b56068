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
    uint32_t C = s->p.chunks, S = sched_twolevel_nphases(s->p.nranks, g, 1), p = k->phase;
    uint64_t n = s->p.count;
    /* the chunks c with 0 <= p - c < S, in increasing c */
    uint32_t c_lo = p >= S ? p - S + 1 : 0, c_hi = p < C ? p : C - 1;
    for (uint32_t c = c_lo; c <= c_hi && c < C; c++)
        twolevel_step(s, g, r, p - c, sched_blk_off(n, C, c), sched_blk_len(n, C, c), k);
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

/* Phase classes of the two-level allreduce, pipelined or not.
 *
 * Step types. Let S = 2(g-1) + 2(N-1) and cut the steps j of one chunk
 * into four intervals: K0 = [0, g-1) intra reduce-scatter, K1 =
 * [g-1, g-1+N-1) inter reduce-scatter, K2 = [g-1+N-1, g-1+2(N-1)) inter
 * allgather, K3 = [g-1+2(N-1), S) intra allgather. With equal blocks —
 * the chunks (n/C elements each), their g intra blocks and the N inter
 * blocks of each all of one length — two steps j, j' of one interval, on
 * one rank, emit the same steps but for offsets (and the buffer a ring
 * reduce-scatter's first send reads, which a class does not promise,
 * strata/sched.h): twolevel_step's intra ring sends to the next local
 * rank and receives (K0: reducing) from the previous one, len/g elements;
 * the inter ring sends to the same local index on the next server and
 * receives from the previous one, len/(gN) elements (K1 reducing, K2
 * not); sched_ring_rs_step / ag_step choose only the blocks (offsets)
 * from the step number; every `after` is 0.
 *
 * Windows. Phase p runs chunk c at step p - c for the chunks c in
 * [c_lo, c_hi] = [max(0, p-S+1), min(C-1, p)], in increasing c
 * (sched_twolevel_phase), i.e. the steps of its window [j_lo, j_hi] =
 * [max(0, p-C+1), min(p, S-1)] in decreasing j. So an agent's step list
 * in phase p is the concatenation, j from j_hi down to j_lo, of its
 * lists for one step, and two phases whose windows have the same length
 * L and the same type at each position have equal step lists but for
 * offsets, on every agent: the same messages.
 *  - A window inside one interval Kk has type k throughout: class
 *    (k, L), id k + 4(L - 1) (< 4C). This is the pipeline's steady state
 *    — all C chunks crossing the network in one direction — which holds
 *    2(N-1) - C + 1 phases per direction when 2(N-1) >= C, and the
 *    unpipelined schedule's four classes 0..3 (C = 1).
 *  - Two phases p < q have the same window only when both are at most
 *    C-1 (j_lo = 0) and at least S-1 (j_hi = S-1): with C >= S every chunk
 *    step is active in the phases S-1 .. C-1; class id 4C + S - 1.
 *  - Every other phase (the fill and drain, a window across an
 *    interval's end) is its own class, id 4C + p: at most C - 1 + 3(C-1)
 *    + (C-1) of them (the window's ends cross each of the three inner
 *    interval ends in C - 1 phases, plus the fill and the drain), so the
 *    number of classes does not grow with N.
 * Without equal blocks, or ids that would not fit, every phase is its
 * own (ids p + 4, as before). verify_test's test_twolevel_classes
 * generates every phase of small schedules and checks that phases of
 * one class have equal step lists but for offsets and buffers. */
uint32_t sched_twolevel_class(const strata_sched_t *s, uint32_t phase)
{
    uint32_t g = s->p.group, N = s->p.nranks / g, C = s->p.chunks;
    uint64_t n = s->p.count, S = sched_twolevel_nphases(s->p.nranks, g, 1);
    bool equal = C > 0 && n % C == 0 && (n / C) % g == 0 && (n / C / g) % N == 0;
    if (!equal || S == 0 || (uint64_t)s->nphases + 4ull * C > UINT32_MAX) return phase + 4;
    uint64_t jlo = phase + 1 > C ? phase + 1 - C : 0, jhi = phase < S - 1 ? phase : S - 1;
    uint64_t end[4] = {g - 1, g - 1 + (N - 1), g - 1 + 2 * (uint64_t)(N - 1), S};
    uint32_t klo = 0, khi = 0;
    while (jlo >= end[klo])
        klo++;
    while (jhi >= end[khi])
        khi++;
    if (klo == khi) return klo + 4 * (uint32_t)(jhi - jlo);
    if (jlo == 0 && jhi == S - 1) return 4 * C + (uint32_t)(S - 1);
    return 4 * C + phase;
}

/* Phase patterns of the two-level allreduce (strata_sched_phase_pattern):
 * its classes (above) up to whether a receive reduces.
 *
 * With equal blocks, a step of K0 and one of K3 emit the same steps but
 * for offsets, buffers and the reduction (K0's receive reduces, K3's does
 * not): both are the intra ring's send to the next local rank and receive
 * from the previous one, len/g elements, `after` 0. So are a step of K1
 * and one of K2 (the inter ring's, len/(gN)). A phase's step list is its
 * window's, j from j_hi down to j_lo (above), and the intervals lie in
 * the order K0 K1 K2 K3 along j, so the list is: a steps of K3 (intra),
 * then b of K1 or K2 (inter), then c of K0 (intra) — with a, b, c the
 * window's overlaps with K3, K1 + K2 and K0. Phases with the same
 * (a, b, c) have equal step lists but for offsets, buffers and the
 * reduction; with b = 0 the list is a + c intra steps, named (0, 0, a+c).
 * The id is a + W(b + W c), W = C + 1 (each count is at most the window's
 * length, at most C). This names every pattern the step lists can share:
 * an intra step and an inter step differ in peer when g > 1 and N > 1
 * (the next local rank is on the same server, the next server's rank
 * not), and with g = 1 or N = 1 one kind is empty; verify_test's
 * test_twolevel_patterns compares every pair of phases of small
 * schedules. Unequal blocks, or an id past 32 bits: none named. */
uint32_t sched_twolevel_pattern(const strata_sched_t *s, uint32_t phase)
{
    uint32_t g = s->p.group, N = s->p.nranks / g, C = s->p.chunks;
    uint64_t n = s->p.count, S = sched_twolevel_nphases(s->p.nranks, g, 1);
    bool equal = C > 0 && n % C == 0 && (n / C) % g == 0 && (n / C / g) % N == 0;
    if (!equal || S == 0 || C >= (1u << 21)) return STRATA_SCHED_NO_PATTERN; /* W^3 < 2^64 */
    uint64_t jlo = phase + 1 > C ? phase + 1 - C : 0, jhi = phase < S - 1 ? phase : S - 1;
    uint64_t e0 = g - 1, e2 = g - 1 + 2 * (uint64_t)(N - 1); /* K0 = [0, e0), K3 = [e2, S) */
    uint64_t c = jlo < e0 ? (jhi < e0 ? jhi : e0 - 1) - jlo + 1 : 0;
    uint64_t a = jhi >= e2 ? jhi - (jlo > e2 ? jlo : e2) + 1 : 0;
    uint64_t b = jhi - jlo + 1 - a - c;
    if (b == 0) c += a, a = 0;
    uint64_t W = (uint64_t)C + 1, id = a + W * (b + W * c);
    return id < STRATA_SCHED_NO_PATTERN ? (uint32_t)id : STRATA_SCHED_NO_PATTERN;
}

/* ==== The other collectives, two-level ====
 *
 * Ranks r = node*g + l as above (N = P/g servers). Data move in "columns":
 * column j of a layout is the nblk blocks of `count` elements starting at
 * off + j*col, `stride` apart. Inside a server local rank l works on the
 * blocks of the ranks with local index l on every server (N blocks, g*n
 * apart); across servers it talks only to the ranks of its own local
 * index, as the allreduce does (rail-style: every rank's network link
 * carries 1/g of the server's traffic). */

typedef struct hcol {
    int buf;
    uint64_t off, col;
    int64_t stride;
    uint64_t nblk, count;
} hcol_t;

static void hemit(sched_sink_t *k, int op, uint32_t after, int32_t peer, const hcol_t *a,
                  uint32_t ja, const hcol_t *b, uint32_t jb)
{
    strata_step_t st = {.op = (uint8_t)op,
                        .src_buf = (uint8_t)a->buf,
                        .dst_buf = (uint8_t)b->buf,
                        .peer = peer,
                        .after = after,
                        .src_off = a->off + ja * a->col,
                        .dst_off = b->off + jb * b->col,
                        .count = a->count,
                        .nblk = a->nblk,
                        .src_stride = a->stride,
                        .dst_stride = b->stride};
    sched_emit(k, &st);
}

/* A ring of m members (member j = rank base + j*stride, me = i): step st
 * (0 <= st < m-1) of a reduce-scatter in which member j ends with column j
 * reduced into `fin`. Partial sums of a column travel through the two
 * slots (column-free layouts), received in step st and forwarded in
 * st + 1; the first send reads `in`, every reduction takes `in` as its
 * other operand. */
static void col_rs_step(uint32_t m, uint32_t i, uint32_t base, uint32_t stride, uint32_t st,
                        const hcol_t *in, const hcol_t *slot0, const hcol_t *slot1,
                        const hcol_t *fin, sched_sink_t *k)
{
    const hcol_t *slot[2] = {slot0, slot1};
    uint32_t cs = sched_mod((int64_t)i - st - 1, m), cr = sched_mod((int64_t)i - st - 2, m);
    int32_t next = (int32_t)(base + (i + 1) % m * stride);
    int32_t prev = (int32_t)(base + (i + m - 1) % m * stride);
    if (st == 0)
        hemit(k, STRATA_STEP_SEND, 0, next, in, cs, in, cs);
    else
        hemit(k, STRATA_STEP_SEND, 0, next, slot[(st - 1) % 2], 0, slot[(st - 1) % 2], 0);
    hemit(k, STRATA_STEP_RECV_REDUCE, 0, prev, in, cr, st == m - 2 ? fin : slot[st % 2], 0);
}

/* Step st (0 <= st < m-1) of a ring allgather of columns in `buf`, member
 * j contributing column j; its first send reads `own` (column-free). */
static void col_ag_step(uint32_t m, uint32_t i, uint32_t base, uint32_t stride, uint32_t st,
                        const hcol_t *buf, const hcol_t *own, sched_sink_t *k)
{
    uint32_t cs = sched_mod((int64_t)i - st, m), cr = sched_mod((int64_t)i - st - 1, m);
    int32_t next = (int32_t)(base + (i + 1) % m * stride);
    int32_t prev = (int32_t)(base + (i + m - 1) % m * stride);
    if (st == 0)
        hemit(k, STRATA_STEP_SEND, 0, next, own, 0, own, 0);
    else
        hemit(k, STRATA_STEP_SEND, 0, next, buf, cs, buf, cs);
    hemit(k, STRATA_STEP_RECV, 0, prev, buf, cr, buf, cr);
}

/* Reduce-scatter (and, with no data, barrier): ring reduce-scatter inside
 * the server of each column (the N blocks of one local index), g-1 phases,
 * into R in scratch; then ring reduce-scatter of R across the N ranks of
 * one local index, N-1 phases, ending with block r in the output. Scratch:
 * two partial slots of N blocks, R, two partial slots of one block. */
static void h_reduce_scatter(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t g = s->p.group, N = s->p.nranks / g, node = r / g, l = r % g, ph = k->phase;
    uint64_t n = s->p.count, Nn = (uint64_t)N * n;
    hcol_t in1 = {STRATA_BUF_INPUT, 0, n, (int64_t)(g * n), N, n};
    hcol_t a0 = {STRATA_BUF_SCRATCH, 0, 0, (int64_t)n, N, n}, a1 = a0;
    hcol_t R = a0, out = {STRATA_BUF_OUTPUT, 0, 0, (int64_t)n, 1, n};
    a1.off = Nn, R.off = 2 * Nn;
    if (ph < g - 1) {
        col_rs_step(g, l, node * g, 1, ph, &in1, &a0, &a1, N > 1 ? &R : &out, k);
        return;
    }
    ph -= g - 1;
    /* across: column j = the server sum of block j*g + l (in R, or with one
     * rank per server straight from the input) */
    hcol_t in2 = g > 1 ? (hcol_t){STRATA_BUF_SCRATCH, 2 * Nn, n, (int64_t)n, 1, n}
                       : (hcol_t){STRATA_BUF_INPUT, 0, n, (int64_t)n, 1, n};
    hcol_t b0 = {STRATA_BUF_SCRATCH, 3 * Nn, 0, (int64_t)n, 1, n}, b1 = b0;
    b1.off = 3 * Nn + n;
    col_rs_step(N, node, l, g, ph, &in2, &b0, &b1, &out, k);
}

/* Allgather: ring allgather across the N ranks of one local index (each
 * gathers the blocks j*g + l into the output), N-1 phases; then ring
 * allgather inside the server of those columns, g-1 phases. */
static void h_allgather(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t g = s->p.group, N = s->p.nranks / g, node = r / g, l = r % g, ph = k->phase;
    uint64_t n = s->p.count;
    hcol_t own = {STRATA_BUF_INPUT, 0, 0, (int64_t)n, 1, n};
    if (ph == 0) sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, r * n, n);
    if (ph < N - 1) {
        hcol_t across = {STRATA_BUF_OUTPUT, l * n, g * n, (int64_t)n, 1, n};
        col_ag_step(N, node, l, g, ph, &across, &own, k);
        return;
    }
    ph -= N - 1;
    hcol_t inside = {STRATA_BUF_OUTPUT, 0, n, (int64_t)(g * n), N, n};
    hcol_t mine = inside;
    mine.off = l * n, mine.col = 0;
    col_ag_step(g, l, node * g, 1, ph, &inside, N > 1 ? &mine : &own, k);
}

/* Broadcast and reduce: a tree of two chains — the root's local index
 * across the servers (from the root's server on), and in every server the
 * chain of its ranks from that index on. Rank r sits at depth
 * d = (servers from the root's) + (local ranks from the root's index), at
 * most T = (N-1) + (g-1); chunk c is pipelined down it, crossing depth d
 * to d+1 in phase c + d (broadcast), or up it from depth d to d-1 in
 * phase c + T - d (reduce: a rank has heard from both its children, which
 * share a depth, before it sends): C + T - 1 phases either way. */
typedef struct htree {
    uint32_t depth;
    int32_t up, in, out; /* parent, child inside, child across (-1: none) */
} htree_t;

static htree_t h_tree(const strata_sched_t *s, uint32_t r)
{
    uint32_t g = s->p.group, N = s->p.nranks / g, node = r / g, l = r % g;
    uint32_t rn = s->p.root / g, rl = s->p.root % g;
    uint32_t di = sched_mod((int64_t)node - rn, N), dl = sched_mod((int64_t)l - rl, g);
    htree_t t = {.depth = di + dl, .up = -1, .in = -1, .out = -1};
    if (dl > 0)
        t.up = (int32_t)(node * g + (l + g - 1) % g);
    else if (di > 0)
        t.up = (int32_t)((node + N - 1) % N * g + l);
    if (dl < g - 1) t.in = (int32_t)(node * g + (l + 1) % g);
    if (dl == 0 && di < N - 1) t.out = (int32_t)((node + 1) % N * g + l);
    return t;
}

static uint32_t h_depth(const strata_sched_t *s)
{
    return s->p.nranks / s->p.group - 1 + s->p.group - 1;
}

static void h_broadcast(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t C = s->p.chunks;
    uint64_t n = s->p.count;
    htree_t t = h_tree(s, r);
    int sbuf = t.depth == 0 ? STRATA_BUF_INPUT : STRATA_BUF_OUTPUT;
    if (t.depth == 0 && k->phase == 0)
        sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, 0, n);
    int64_t cr = (int64_t)k->phase - t.depth + 1, cs = (int64_t)k->phase - t.depth;
    if (t.up >= 0 && cr >= 0 && cr < C)
        sched_recv(k, 0, t.up, STRATA_BUF_OUTPUT, sched_blk_off(n, C, (uint64_t)cr),
                   sched_blk_len(n, C, (uint64_t)cr));
    if (cs < 0 || cs >= C) return;
    uint64_t o = sched_blk_off(n, C, (uint64_t)cs), len = sched_blk_len(n, C, (uint64_t)cs);
    if (t.out >= 0) sched_send(k, 0, t.out, sbuf, o, len);
    if (t.in >= 0) sched_send(k, 0, t.in, sbuf, o, len);
}

static void h_reduce(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t C = s->p.chunks, T = h_depth(s);
    uint64_t n = s->p.count;
    htree_t t = h_tree(s, r);
    bool leaf = t.in < 0 && t.out < 0;
    int acc = t.depth == 0 ? STRATA_BUF_OUTPUT : STRATA_BUF_SCRATCH;
    int64_t cr = (int64_t)k->phase - (T - t.depth - 1), cs = (int64_t)k->phase - (T - t.depth);
    if (!leaf && cr >= 0 && cr < C) {
        /* both children in one phase: the second reduction waits for the first */
        uint64_t o = sched_blk_off(n, C, (uint64_t)cr), len = sched_blk_len(n, C, (uint64_t)cr);
        int first = t.out >= 0 ? t.out : t.in;
        sched_recv_reduce(k, 0, first, STRATA_BUF_INPUT, o, acc, o, len);
        if (t.out >= 0 && t.in >= 0) sched_recv_reduce(k, 1, t.in, acc, o, acc, o, len);
    }
    if (t.up >= 0 && cs >= 0 && cs < C)
        sched_send(k, 0, t.up, leaf ? STRATA_BUF_INPUT : acc, sched_blk_off(n, C, (uint64_t)cs),
                   sched_blk_len(n, C, (uint64_t)cs));
}

/* Alltoall, two-level (each message crosses the network once, between
 * ranks of one local index): inside the server local rank l sends local
 * rank j the N blocks it has for the ranks of local index j (pairwise,
 * g-1 phases; its own column is copied in phase 0) into scratch, laid
 * out [from local rank][to server]; then across, rank (node, l) sends
 * rank (node', l) the g blocks gathered for it (pairwise, N-1 phases),
 * which land as the blocks of the g ranks of server node. Its own
 * server's g blocks are copied once the first stage is complete. */
static void h_alltoall(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t g = s->p.group, N = s->p.nranks / g, node = r / g, l = r % g, ph = k->phase;
    uint64_t n = s->p.count, Nn = (uint64_t)N * n;
    hcol_t in = {STRATA_BUF_INPUT, 0, n, (int64_t)(g * n), N, n};
    hcol_t x = {STRATA_BUF_SCRATCH, 0, Nn, (int64_t)n, N, n};
    hcol_t xs = {STRATA_BUF_SCRATCH, 0, n, (int64_t)Nn, g, n};
    hcol_t out = {STRATA_BUF_OUTPUT, 0, g * n, (int64_t)n, g, n};
    uint32_t after = 0; /* local copies first, then the transfers */
    if (ph == 0) hemit(k, STRATA_STEP_COPY, after++, -1, &in, l, &x, l);
    bool last_in = ph == g - 2;
    bool first_across = N > 1 && ph == g - 1;
    if (first_across) hemit(k, STRATA_STEP_COPY, after++, -1, &xs, node, &out, node);
    if (ph < g - 1) {
        uint32_t to = (l + ph + 1) % g, from = sched_mod((int64_t)l - ph - 1, g);
        hemit(k, STRATA_STEP_SEND, after, (int32_t)(node * g + to), &in, to, &in, to);
        hemit(k, STRATA_STEP_RECV, after, (int32_t)(node * g + from), &x, from, &x, from);
        /* one server: its blocks are complete once this last exchange is in */
        if (N == 1 && last_in) hemit(k, STRATA_STEP_COPY, after + 2, -1, &xs, 0, &out, 0);
        return;
    }
    ph -= g - 1;
    uint32_t to = (node + ph + 1) % N, from = sched_mod((int64_t)node - ph - 1, N);
    hemit(k, STRATA_STEP_SEND, after, (int32_t)(to * g + l), &xs, to, &xs, to);
    hemit(k, STRATA_STEP_RECV, after, (int32_t)(from * g + l), &out, from, &out, from);
}

static void hier_phase(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    switch (s->p.coll) {
    case STRATA_COLL_REDUCE_SCATTER:
    case STRATA_COLL_BARRIER:
        h_reduce_scatter(s, r, k);
        break;
    case STRATA_COLL_ALLGATHER:
        h_allgather(s, r, k);
        break;
    case STRATA_COLL_BROADCAST:
        h_broadcast(s, r, k);
        break;
    case STRATA_COLL_REDUCE:
        h_reduce(s, r, k);
        break;
    case STRATA_COLL_ALLTOALL:
        h_alltoall(s, r, k);
        break;
    default:
        sched_twolevel_algo_phase(s, r, k);
        break;
    }
}

static uint32_t hier_class(const strata_sched_t *s, uint32_t phase)
{
    return s->p.coll == STRATA_COLL_ALLREDUCE ? sched_twolevel_class(s, phase) : phase;
}

static uint32_t hier_pattern(const strata_sched_t *s, uint32_t phase)
{
    if (s->p.coll != STRATA_COLL_ALLREDUCE) return STRATA_SCHED_NO_PATTERN;
    return sched_twolevel_pattern(s, phase);
}

static strata_status_t hier_init(strata_sched_t *s, strata_error_t *err)
{
    if (s->p.group == 0) s->p.group = s->p.nranks % 8 == 0 ? 8 : s->p.nranks;
    strata_status_t st = sched_twolevel_init(s, "hier", err);
    if (st != STRATA_OK) return st;
    uint32_t g = s->p.group, N = s->p.nranks / g, C = s->p.chunks;
    uint64_t n = s->p.count, Nn = (uint64_t)N * n;
    switch (s->p.coll) {
    case STRATA_COLL_REDUCE_SCATTER:
    case STRATA_COLL_BARRIER:
        s->nphases = (g - 1) + (N - 1);
        s->buf[STRATA_BUF_SCRATCH] = 3 * Nn + 2 * n;
        break;
    case STRATA_COLL_ALLGATHER:
        s->nphases = (g - 1) + (N - 1);
        break;
    case STRATA_COLL_BROADCAST:
        s->nphases = C + h_depth(s) - 1;
        break;
    case STRATA_COLL_REDUCE:
        s->nphases = C + h_depth(s) - 1;
        s->buf[STRATA_BUF_SCRATCH] = n;
        break;
    case STRATA_COLL_ALLTOALL:
        s->nphases = (g - 1) + (N - 1);
        s->buf[STRATA_BUF_SCRATCH] = (uint64_t)s->p.nranks * n;
        break;
    default:
        break;
    }
    return STRATA_OK;
}

const sched_algo_t sched_hier = {
    .id = STRATA_ALGO_HIER,
    .colls = SCHED_COLL(ALLREDUCE) | SCHED_COLL(REDUCE_SCATTER) | SCHED_COLL(ALLGATHER) |
             SCHED_COLL(BROADCAST) | SCHED_COLL(REDUCE) | SCHED_COLL(ALLTOALL) |
             SCHED_COLL(BARRIER),
    .init = hier_init,
    .phase = hier_phase,
    .phase_class = hier_class,
    .phase_pattern = hier_pattern,
};
