/*
 * tree.c — NCCL's double binary tree allreduce, pipelined in chunks.
 *
 * Two binary trees span the P ranks so that a rank is an inner node in at
 * most one of them (NCCL src/graph/trees.cc ncclGetDtree: tree 0 from the
 * in-order bit pattern, tree 1 its mirror for even P, its shift by one for
 * odd P). Each tree allreduces half the buffer: reduce up, broadcast down.
 * With C chunks the phases pipeline: chunk c leaves a node of height h at
 * phase c + h on its way up; the root (height T) starts sending chunk c down
 * at phase c + T and a node at depth d forwards it at phase c + T + d, so
 * the whole takes C - 1 + 2T phases and each link carries each chunk once
 * each way. Latency O(log P), bandwidth ~n per rank per direction.
 *
 * Memory: per tree and rank, parent, two children, depth and height are
 * precomputed in O(P) (s->tab) so a step is O(1).
 */
#include "sched.h"

enum { T_PARENT, T_C0, T_C1, T_DEPTH, T_HEIGHT, T_FIELDS };

#define TAB(s, t, r, f) ((s)->tab[(((size_t)(t) * (s)->p.nranks + (r)) * T_FIELDS) + (f)])

/* NCCL's ncclGetBtree. */
static void btree(int P, int r, int *u, int *d0, int *d1)
{
    int bit;
    for (bit = 1; bit < P; bit <<= 1)
        if (bit & r) break;
    if (r == 0) {
        *u = -1, *d0 = -1, *d1 = P > 1 ? bit >> 1 : -1;
        return;
    }
    int up = (r ^ bit) | (bit << 1);
    if (up >= P) up = r ^ bit;
    *u = up;
    int low = bit >> 1;
    *d0 = low == 0 ? -1 : r - low;
    int down1 = low == 0 ? -1 : r + low;
    while (down1 >= P) {
        low >>= 1;
        down1 = low == 0 ? -1 : r + low;
    }
    *d1 = down1;
}

/* NCCL's ncclGetDtree, second tree: mirror (even P) or shift (odd P). */
static void btree2(int P, int r, int *u, int *d0, int *d1)
{
    int a, b, c;
    if (P % 2 == 1) {
        btree(P, (r - 1 + P) % P, &a, &b, &c);
        *u = a < 0 ? -1 : (a + 1) % P, *d0 = b < 0 ? -1 : (b + 1) % P;
        *d1 = c < 0 ? -1 : (c + 1) % P;
    } else {
        btree(P, P - 1 - r, &a, &b, &c);
        *u = a < 0 ? -1 : P - 1 - a, *d0 = b < 0 ? -1 : P - 1 - b;
        *d1 = c < 0 ? -1 : P - 1 - c;
    }
}

static void fill_tree(strata_sched_t *s, int t)
{
    int P = (int)s->p.nranks;
    for (int r = 0; r < P; r++) {
        int u, d0, d1;
        (t == 0 ? btree : btree2)(P, r, &u, &d0, &d1);
        TAB(s, t, r, T_PARENT) = u, TAB(s, t, r, T_C0) = d0, TAB(s, t, r, T_C1) = d1;
        TAB(s, t, r, T_DEPTH) = -1, TAB(s, t, r, T_HEIGHT) = 0;
    }
    for (int r = 0; r < P; r++) { /* depth: walk up (O(log P) each) */
        int d = 0;
        for (int x = r; TAB(s, t, x, T_PARENT) >= 0 && d <= P; x = TAB(s, t, x, T_PARENT)) d++;
        TAB(s, t, r, T_DEPTH) = d;
    }
    for (int r = 0; r < P; r++) { /* height: push up from every node */
        int h = 0;
        for (int x = r; TAB(s, t, x, T_PARENT) >= 0;) {
            x = TAB(s, t, x, T_PARENT);
            if (TAB(s, t, x, T_HEIGHT) >= ++h) break;
            TAB(s, t, x, T_HEIGHT) = h;
        }
    }
}

static int root_of(const strata_sched_t *s, int t)
{
    /* tree 0's root is rank 0; tree 1's is the mirror / shift of it */
    int P = (int)s->p.nranks;
    return t == 0 ? 0 : (P % 2 == 1 ? 1 : P - 1);
}

static strata_status_t tree_init(strata_sched_t *s, strata_error_t *err)
{
    size_t n = 2 * (size_t)s->p.nranks * T_FIELDS;
    s->tab = util_malloc(n * sizeof(*s->tab));
    if (!s->tab) return strata_error_set(err, STRATA_ERR_NOMEM, "tree: out of memory");
    fill_tree(s, 0);
    fill_tree(s, 1);
    int64_t T0 = TAB(s, 0, root_of(s, 0), T_HEIGHT), T1 = TAB(s, 1, root_of(s, 1), T_HEIGHT);
    s->aux[0] = T0, s->aux[1] = T1;
    s->nphases = s->p.chunks - 1 + 2 * (uint32_t)(T0 > T1 ? T0 : T1);
    return STRATA_OK;
}

/* Chunk c of tree t's half of the buffer. */
static void chunk(const strata_sched_t *s, int t, int64_t c, uint64_t *off, uint64_t *len)
{
    uint64_t n = s->p.count, h0 = (n + 1) / 2, base = t == 0 ? 0 : h0, hl = t == 0 ? h0 : n - h0;
    *off = base + sched_blk_off(hl, s->p.chunks, (uint64_t)c);
    *len = sched_blk_len(hl, s->p.chunks, (uint64_t)c);
}

static void tree_steps(const strata_sched_t *s, int t, uint32_t r, uint32_t after, sched_sink_t *k)
{
    int64_t C = s->p.chunks, ph = k->phase, T = s->aux[t], h = TAB(s, t, r, T_HEIGHT);
    int64_t d = TAB(s, t, r, T_DEPTH);
    int par = TAB(s, t, r, T_PARENT), ch[2] = {TAB(s, t, r, T_C0), TAB(s, t, r, T_C1)};
    int O = STRATA_BUF_OUTPUT;
    uint64_t off, len;
    for (int i = 0; i < 2; i++) { /* up: reduce chunk from each child */
        if (ch[i] < 0) continue;
        int64_t c = ph - TAB(s, t, ch[i], T_HEIGHT);
        if (c >= 0 && c < C) {
            chunk(s, t, c, &off, &len);
            sched_recv_reduce(k, after, ch[i], O, off, O, off, len);
        }
    }
    int64_t cu = ph - h, cd = ph - (T + d - 1), cs = ph - (T + d);
    if (par >= 0 && cu >= 0 && cu < C) {
        chunk(s, t, cu, &off, &len);
        sched_send(k, after, par, O, off, len);
    }
    if (par >= 0 && cd >= 0 && cd < C) {
        chunk(s, t, cd, &off, &len);
        sched_recv(k, after, par, O, off, len);
    }
    for (int i = 0; i < 2 && cs >= 0 && cs < C; i++)
        if (ch[i] >= 0) {
            chunk(s, t, cs, &off, &len);
            sched_send(k, after, ch[i], O, off, len);
        }
}

static void tree_phase(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t after = 0;
    if (k->phase == 0) { /* accumulate in OUTPUT: start from this rank's input */
        sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, 0, s->p.count);
        after = 1;
    }
    tree_steps(s, 0, r, after, k);
    tree_steps(s, 1, r, after, k);
}

const sched_algo_t sched_tree = {
    .id = STRATA_ALGO_TREE,
    .colls = SCHED_COLL(ALLREDUCE),
    .init = tree_init,
    .phase = tree_phase,
};
