/*
 * tree.c — NCCL's double binary tree allreduce, pipelined in chunks, flat
 * over ranks or over nodes with a chain of ranks inside each node.
 *
 * Two binary trees span the N nodes so that a node is an inner node in at
 * most one of them (NCCL src/graph/trees.cc ncclGetDtree: tree 0 from the
 * in-order bit pattern, tree 1 its mirror for even N, its shift by one for
 * odd N). Each tree allreduces half the buffer: reduce up, broadcast down.
 *
 * Nodes. With group g (ranks per server) the ranks form N = ceil(P/g)
 * nodes of g consecutive ranks (the last may be smaller), as NCCL builds
 * its trees over nodes and chains the GPUs inside a node
 * (src/graph/connect.cc ncclTopoPreset, connectTrees: per channel an
 * intra-node order treeIntra, position j+1 below position j). To spread
 * the network traffic over every rank's NIC, as NCCL's channels do, each
 * tree's half is split into g channels and channel h's chain in a node of
 * m ranks starts at local rank h mod m, goes next to its PCIe sibling
 * h^1 (up from an even head, h, h+1, h+2, ...; down from an odd one) and
 * on in that direction. NCCL's balanced tree (NCCL_TOPO_PATTERN_BALANCED_TREE,
 * its first choice, graph.h) spreads a node's tree edges over the first
 * two GPUs of the chain, which both reach the channel's NIC (search.cc:
 * the second GPU goes back to the same NET): the head (position 0) meets
 * the parent node and child node 1, position 1 meets child node 0
 * (treeToChild0 = treeIntra[1], treeToChild1 = treeIntra[0]); a node of one
 * rank meets all three. A child node 0 therefore sits 2 hops below its
 * parent's head. Which NIC carries an edge: the simulator sends through
 * the NIC on the receiver's rail, so an edge into position 1 crosses on
 * rail h^1 and an edge out of it on rail h, where NCCL uses rail h both
 * ways; each NIC carries the same bytes either way (channel h^1 mirrors
 * it). g = 1 (the default) is the flat tree over all ranks; g >= P is one
 * node: a pipelined chain reduce + broadcast.
 *
 * More NICs than ranks (params rails = R > g, a multiple of g; g = 1 for
 * a GH200 node's one GPU and four NICs): R channels per tree, channel h
 * on slice h of R of its tree's half, rank h mod g's chain, rail h — the
 * ring's rule (ring.c), since NCCL's tree search starts its channels on
 * the NICs in turn as the ring's does. The simulator splits such a
 * server's sends over the NICs of the rails (sim/route.c).
 *
 * Each (tree, channel) is then one rank-level tree whose vertices have a
 * parent, up to three children, a depth and a height. With C chunks the
 * phases pipeline: chunk c leaves a rank of height h at phase c + h on its
 * way up (up and down run at once, as in NCCL's runTreeSplit, where half
 * a channel's threads reduce up while the other half broadcast down); the
 * root (height T) starts sending
 * chunk c down at phase c + T and a rank at depth d forwards it at phase
 * c + T + d, so the whole takes C - 1 + 2 max(T) phases and each edge
 * carries each chunk once each way. Heights: position j >= 2 of a node of
 * m ranks, m - 1 - j; position 1, max(m - 2, 1 + child 0's); the head,
 * 1 + max(position 1's, child 1's). So with equal nodes T = g - 1 + the
 * deepest head's depth, which counts 1 per child-1 edge and 2 per child-0
 * edge: 1 for N = 2, 3 for N = 4, 5 for N = 8 (2 log2 N - 1 for powers of
 * two; NCCL's own estimate, g - 1 + log2 N, sizes nothing here).
 *
 * Chunks: the caller's C. The cost model passes NCCL's chunk, 512 KiB of a
 * channel's slice per step with Simple (sched_nccl_tree_chunk), so C =
 * ceil(n / (2g) / 512 KiB): NCCL does not pick C to suit the message.
 *
 * Traffic per rank and direction (equal nodes of g ranks, n bytes): the
 * chain of one (tree, channel) moves its piece up g-1 hops and down g-1
 * hops, and every rank heads one channel per tree, so each rank sends
 * 2(g-1)/g n over scale-up links; a node's network ports carry
 * E n/2 where E (sched_dtree_max_edges) is the number of tree edges at the
 * node (2 for N = 2; 3 or 4 for N > 2), shared by its g heads.
 *
 * Memory: per tree and node, parent, two children, depth and height in
 * O(N) (s->tab); a rank's place is computed from them in O(1).
 */
#include "sched.h"

#include <string.h>

/* ==== Node trees ==== */

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

void sched_dtree_links(uint32_t N, int t, uint32_t n, int32_t *up, int32_t *d0, int32_t *d1)
{
    int u, a, b;
    (t == 0 ? btree : btree2)((int)N, (int)n, &u, &a, &b);
    *up = u, *d0 = a, *d1 = b;
}

uint32_t sched_dtree_max_edges(uint32_t N)
{
    uint32_t best = 0;
    for (uint32_t n = 0; n < N; n++) {
        uint32_t e = 0;
        for (int t = 0; t < 2; t++) {
            int32_t u, a, b;
            sched_dtree_links(N, t, n, &u, &a, &b);
            e += (u >= 0) + (a >= 0) + (b >= 0);
        }
        if (e > best) best = e;
    }
    return best;
}

#define DT(s, t, n, f)                                                                             \
    ((s)->tab[((size_t)(t) * (size_t)(s)->aux[SCHED_DT_N] + (size_t)(n)) * DT_FIELDS + (f)])

static uint32_t node_size(uint32_t P, uint32_t g, uint32_t n)
{
    return P - n * g < g ? P - n * g : g;
}

/* Does node n of tree t hand its child node 0 to its second chain rank
 * (NCCL's balanced tree: the node has two ranks or more)? */
static bool balanced(const strata_sched_t *s, uint32_t g, bool chain, int64_t n)
{
    return chain && node_size(s->p.nranks, g, (uint32_t)n) > 1;
}

/* Node n's head's rank depth: one per node edge, two where the edge enters
 * the parent at its second chain rank (child 0 of a balanced parent). */
static int32_t head_depth(strata_sched_t *s, int t, uint32_t g, bool chain, int32_t n)
{
    uint32_t N = (uint32_t)s->aux[SCHED_DT_N];
    int32_t d = 0;
    for (uint32_t i = 0; DT(s, t, n, DT_PARENT) >= 0 && i <= N; i++) {
        int32_t up = DT(s, t, n, DT_PARENT);
        d += DT(s, t, up, DT_C0) == n && balanced(s, g, chain, up) ? 2 : 1;
        n = up;
    }
    return d;
}

/* Heights of node n's head and second chain rank, its children's done. */
static void fill_heights(strata_sched_t *s, int t, uint32_t g, bool chain, uint32_t n)
{
    int32_t m = chain ? (int32_t)node_size(s->p.nranks, g, n) : 1;
    int32_t c0 = DT(s, t, n, DT_C0), c1 = DT(s, t, n, DT_C1);
    int32_t h0 = c0 < 0 ? -1 : DT(s, t, c0, DT_HEIGHT), h1 = c1 < 0 ? -1 : DT(s, t, c1, DT_HEIGHT);
    if (m > 1) { /* second rank: the chain below it and child node 0 */
        int32_t second = m - 2 > h0 + 1 ? m - 2 : h0 + 1;
        DT(s, t, n, DT_H1) = second;
        DT(s, t, n, DT_HEIGHT) = 1 + (second > h1 ? second : h1);
    } else {
        DT(s, t, n, DT_H1) = -1;
        DT(s, t, n, DT_HEIGHT) = 1 + (h0 > h1 ? h0 : h1); /* 0 for a leaf */
    }
}

/* Links, depths, then heights by sweeping depths from the deepest (a
 * child's depth exceeds its parent's). */
static void fill_one(strata_sched_t *s, int t, uint32_t g, bool chain)
{
    uint32_t N = (uint32_t)s->aux[SCHED_DT_N];
    int32_t maxd = 0;
    for (uint32_t n = 0; n < N; n++)
        sched_dtree_links(N, t, n, &DT(s, t, n, DT_PARENT), &DT(s, t, n, DT_C0),
                          &DT(s, t, n, DT_C1));
    for (uint32_t n = 0; n < N; n++) {
        int32_t d = head_depth(s, t, g, chain, (int32_t)n);
        DT(s, t, n, DT_DEPTH) = d;
        if (d > maxd) maxd = d;
        if (DT(s, t, n, DT_PARENT) < 0) s->aux[SCHED_DT_T0 + t] = n; /* root, for now */
    }
    for (int32_t d = maxd; d >= 0; d--)
        for (uint32_t n = 0; n < N; n++)
            if (DT(s, t, n, DT_DEPTH) == d) fill_heights(s, t, g, chain, n);
    s->aux[SCHED_DT_T0 + t] = DT(s, t, s->aux[SCHED_DT_T0 + t], DT_HEIGHT);
}

strata_status_t sched_dtree_init(strata_sched_t *s, uint32_t g, bool chain, strata_error_t *err)
{
    uint32_t N = (s->p.nranks + g - 1) / g;
    s->aux[SCHED_DT_N] = N;
    s->tab = util_malloc(2 * (size_t)N * DT_FIELDS * sizeof(*s->tab));
    if (!s->tab)
        return strata_error_set(err, STRATA_ERR_NOMEM, "%s: out of memory",
                                strata_algo_name(s->p.algo));
    fill_one(s, 0, g, chain);
    fill_one(s, 1, g, chain);
    return STRATA_OK;
}

/* ==== Rank-level trees ==== */

/* One rank's place in the rank-level tree of (tree t, channel h). */
typedef struct place {
    int32_t parent, child[3];
    int64_t depth, height;
    int64_t chh[3]; /* the children's heights (place_get only) */
} place_t;

/* Channel h's chain in a node of m ranks starts at local rank h mod m and
 * goes to its PCIe sibling next (h^1: up from an even head, down from an
 * odd one), then on in that direction. Local rank at position j, and the
 * position of local rank l. */
static uint32_t chain_local(uint32_t m, uint32_t h, uint32_t j)
{
    uint32_t hh = h % m;
    return hh % 2 == 0 ? (hh + j) % m : (hh + m - j % m) % m;
}
static uint32_t chain_pos(uint32_t m, uint32_t h, uint32_t l)
{
    uint32_t hh = h % m;
    return hh % 2 == 0 ? (l + m - hh) % m : (hh + m - l) % m;
}

static int32_t rank_at(const strata_sched_t *s, int64_t node, uint32_t h, uint32_t j)
{
    uint32_t g = s->p.group, m = node_size(s->p.nranks, g, (uint32_t)node);
    return (int32_t)((uint32_t)node * g + chain_local(m, h, j));
}

/* The rank of node n that meets its parent node's edge, and the parent's
 * rank it meets: the parent's second chain rank when n is its child 0
 * and the parent has two ranks or more (NCCL's balanced tree), else its
 * head. */
static int32_t up_rank(const strata_sched_t *s, int t, uint32_t h, int64_t n)
{
    int32_t up = sched_dt(s, t, n, DT_PARENT);
    if (up < 0) return -1;
    bool second = sched_dt(s, t, up, DT_C0) == n && sched_dt(s, t, up, DT_H1) >= 0;
    return rank_at(s, up, h, second ? 1 : 0);
}

static void place_of(const strata_sched_t *s, int t, uint32_t h, uint32_t r, place_t *pl)
{
    uint32_t g = s->p.group, n = r / g, m = node_size(s->p.nranks, g, n);
    uint32_t j = chain_pos(m, h, r % g); /* position in the chain */
    int32_t c0 = sched_dt(s, t, n, DT_C0), c1 = sched_dt(s, t, n, DT_C1);
    pl->child[0] = pl->child[1] = pl->child[2] = -1;
    pl->depth = sched_dt(s, t, n, DT_DEPTH) + j;
    if (j + 1 < m) pl->child[0] = rank_at(s, n, h, j + 1);
    if (j > 0) {
        pl->parent = rank_at(s, n, h, j - 1);
        pl->height = j == 1 ? (int64_t)sched_dt(s, t, n, DT_H1) : (int64_t)(m - 1 - j);
        if (j == 1 && c0 >= 0) pl->child[1] = rank_at(s, c0, h, 0);
        return;
    }
    pl->parent = up_rank(s, t, h, n);
    if (c1 >= 0) pl->child[1] = rank_at(s, c1, h, 0);
    if (m == 1 && c0 >= 0) pl->child[2] = rank_at(s, c0, h, 0);
    pl->height = sched_dt(s, t, n, DT_HEIGHT);
}

static int64_t height_of(const strata_sched_t *s, int t, uint32_t h, int32_t r)
{
    place_t pl;
    place_of(s, t, h, (uint32_t)r, &pl);
    return pl.height;
}

/* The places of every (tree, channel, rank), cached: a phase asks each
 * rank's place in every (tree, channel) and its children's heights, and
 * every phase asks the same (issue 14: place_of was a fifth of a folded
 * tree run at 4,096 GPUs). The cache sits after the node table in s->tab
 * (aux[TREE_PL_OFF] its offset, 0: none), PL_FIELDS int32 per entry, in
 * (t, h, r) order: 2 g P entries, 36 B each (9.4 MiB at 16,384 ranks in
 * servers of 8). Above TREE_PL_MAX entries (one node of many ranks: 2 P^2)
 * places are computed on demand as before; either way the same numbers. */
enum { PL_PARENT, PL_C0, PL_C1, PL_C2, PL_H0, PL_H1, PL_H2, PL_DEPTH, PL_HEIGHT, PL_FIELDS };
enum { TREE_PL_OFF = 3, TREE_SEG_OFF = 4 };
#define TREE_PL_MAX ((size_t)1 << 22)

static strata_status_t places_init(strata_sched_t *s, strata_error_t *err)
{
    size_t P = s->p.nranks, g = s->p.group, n = 2 * g * P;
    s->aux[TREE_PL_OFF] = 0;
    /* channels over rails (params rails > g, width() below): channel h
     * >= g has no entry; places are computed on demand */
    if (n > TREE_PL_MAX || s->p.rails > s->p.group) return STRATA_OK;
    size_t base = 2 * (size_t)s->aux[SCHED_DT_N] * DT_FIELDS;
    /* then per segment (2g) its offset, chunk length and the number of
     * longer chunks (sched_blk_off/len without a division per chunk) */
    size_t segs = base + n * PL_FIELDS;
    int32_t *tab = util_realloc(s->tab, (segs + 2 * g * 6) * sizeof(*tab));
    if (!tab) return strata_error_set(err, STRATA_ERR_NOMEM, "tree: out of memory");
    s->tab = tab;
    int32_t *e = tab + base;
    for (int t = 0; t < 2; t++)
        for (uint32_t h = 0; h < g; h++)
            for (uint32_t r = 0; r < P; r++, e += PL_FIELDS) {
                place_t pl;
                place_of(s, t, h, r, &pl);
                e[PL_PARENT] = pl.parent;
                for (int i = 0; i < 3; i++) {
                    e[PL_C0 + i] = pl.child[i];
                    e[PL_H0 + i] = pl.child[i] < 0 ? -1 : (int32_t)height_of(s, t, h, pl.child[i]);
                }
                e[PL_DEPTH] = (int32_t)pl.depth;
                e[PL_HEIGHT] = (int32_t)pl.height;
            }
    for (uint64_t seg = 0; seg < 2 * g; seg++) {
        uint64_t sl = sched_blk_len(s->p.count, 2 * g, seg), C = s->p.chunks;
        uint64_t v[3] = {sched_blk_off(s->p.count, 2 * g, seg), sl / C, sl % C};
        memcpy(tab + segs + seg * 6, v, sizeof(v));
    }
    s->aux[TREE_PL_OFF] = (int64_t)base;
    s->aux[TREE_SEG_OFF] = (int64_t)segs;
    return STRATA_OK;
}

/* place_of with the children's heights, from the cache when there is one. */
static void place_get(const strata_sched_t *s, int t, uint32_t h, uint32_t r, place_t *pl)
{
    if (s->aux[TREE_PL_OFF] == 0) {
        place_of(s, t, h, r, pl);
        for (int i = 0; i < 3; i++)
            pl->chh[i] = pl->child[i] < 0 ? -1 : height_of(s, t, h, pl->child[i]);
        return;
    }
    size_t P = s->p.nranks, g = s->p.group;
    const int32_t *e = s->tab + s->aux[TREE_PL_OFF] + (((size_t)t * g + h) * P + r) * PL_FIELDS;
    pl->parent = e[PL_PARENT];
    for (int i = 0; i < 3; i++) {
        pl->child[i] = e[PL_C0 + i];
        pl->chh[i] = e[PL_H0 + i];
    }
    pl->depth = e[PL_DEPTH];
    pl->height = e[PL_HEIGHT];
}

/* ==== Channels (the public view, ring.c's strata_sched_channel) ==== */

/* Channels per tree: a head per rank of a node (g), or with params rails
 * R > g (a server with more NICs than ranks: a GH200 node's one GPU and
 * four NICs) R, channel h on rail h with rank h mod g's chain, as the
 * ring's (ring.c): NCCL's tree search starts channels on the NICs in
 * turn as the ring's does (search.cc ncclTopoSearchRecNet), so every NIC
 * carries a channel. */
static uint32_t width(const strata_sched_t *s)
{
    return s->p.rails > s->p.group ? s->p.rails : s->p.group;
}

uint32_t sched_tree_channels(const strata_sched_t *s)
{
    uint32_t W = width(s);
    return W > 1 && s->aux[SCHED_DT_N] > 1 ? 2 * W : 0;
}

/* The chain of a full node (the view names one server's local ranks). */
void sched_tree_channel(const strata_sched_t *s, uint32_t c, strata_sched_channel_t *ch)
{
    uint32_t g = s->p.group, W = width(s), t = c / W, h = c % W;
    uint64_t nseg = 2 * (uint64_t)W, seg = (uint64_t)t * W + h;
    *ch = (strata_sched_channel_t){.entry = chain_local(g, h, 0),
                                   .exit = chain_local(g, h, 1),
                                   .up = h % g % 2 == 0,
                                   .servers = (uint32_t)s->aux[SCHED_DT_N],
                                   .off = sched_blk_off(s->p.count, nseg, seg),
                                   .count = sched_blk_len(s->p.count, nseg, seg),
                                   .tree = (int32_t)t,
                                   .rail = s->p.rails > g ? (int32_t)h : -1};
}

uint32_t sched_tree_channel_local(const strata_sched_t *s, uint32_t c, uint32_t pos)
{
    uint32_t g = s->p.group;
    return chain_local(g, c % width(s), pos % g);
}

static strata_status_t tree_init(strata_sched_t *s, strata_error_t *err)
{
    if (s->p.group == 0) s->p.group = 1;
    if (s->p.group > s->p.nranks)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "tree: %u ranks per node is more than the %u ranks", s->p.group,
                                s->p.nranks);
    uint32_t g = s->p.group, P = s->p.nranks;
    if (s->p.rails > g && (s->p.rails % g || g == P))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "tree: %u rails is not a multiple of %u ranks per server over "
                                "several servers",
                                s->p.rails, g);
    if (s->p.rails <= g) s->p.rails = 0;
    strata_status_t st = sched_dtree_init(s, s->p.group, true, err);
    if (st) return st;
    int64_t T0 = s->aux[SCHED_DT_T0], T1 = s->aux[SCHED_DT_T1];
    s->nphases = s->p.chunks - 1 + 2 * (uint32_t)(T0 > T1 ? T0 : T1);
    return places_init(s, err);
}

/* Chunk c of (tree t, channel h)'s segment: segment t*W + h of 2W. */
static void chunk(const strata_sched_t *s, int t, uint32_t h, int64_t c, uint64_t *off,
                  uint64_t *len)
{
    if (s->aux[TREE_PL_OFF]) { /* the cached segment (places_init; W = g) */
        uint64_t v[3], i = (uint64_t)c;
        memcpy(v, s->tab + s->aux[TREE_SEG_OFF] + ((size_t)t * s->p.group + h) * 6, sizeof(v));
        *off = v[0] + i * v[1] + (i < v[2] ? i : v[2]);
        *len = v[1] + (i < v[2] ? 1 : 0);
        return;
    }
    uint64_t W = width(s), nseg = 2 * W, seg = (uint64_t)t * W + h;
    uint64_t base = sched_blk_off(s->p.count, nseg, seg), sl = sched_blk_len(s->p.count, nseg, seg);
    *off = base + sched_blk_off(sl, s->p.chunks, (uint64_t)c);
    *len = sched_blk_len(sl, s->p.chunks, (uint64_t)c);
}

static void tree_steps(const strata_sched_t *s, int t, uint32_t h, uint32_t r, uint32_t after,
                       sched_sink_t *k)
{
    int64_t C = s->p.chunks, ph = k->phase, T = s->aux[SCHED_DT_T0 + t];
    place_t pl;
    place_get(s, t, h, r, &pl);
    int O = STRATA_BUF_OUTPUT;
    uint64_t off, len;
    for (int i = 0; i < 3; i++) { /* up: reduce chunk from each child */
        if (pl.child[i] < 0) continue;
        int64_t c = ph - pl.chh[i];
        if (c >= 0 && c < C) {
            chunk(s, t, h, c, &off, &len);
            sched_recv_reduce(k, after, pl.child[i], O, off, O, off, len);
        }
    }
    int64_t cu = ph - pl.height, cd = ph - (T + pl.depth - 1), cs = ph - (T + pl.depth);
    if (pl.parent >= 0 && cu >= 0 && cu < C) {
        chunk(s, t, h, cu, &off, &len);
        sched_send(k, after, pl.parent, O, off, len);
    }
    if (pl.parent >= 0 && cd >= 0 && cd < C) {
        chunk(s, t, h, cd, &off, &len);
        sched_recv(k, after, pl.parent, O, off, len);
    }
    for (int i = 0; i < 3 && cs >= 0 && cs < C; i++)
        if (pl.child[i] >= 0) {
            chunk(s, t, h, cs, &off, &len);
            sched_send(k, after, pl.child[i], O, off, len);
        }
}

static void tree_phase(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t after = 0;
    if (k->phase == 0) { /* accumulate in OUTPUT: start from this rank's input */
        sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, 0, s->p.count);
        after = 1;
    }
    uint32_t nh = k->reps ? 2 : width(s); /* representatives: channels 0 and 1 */
    for (int t = 0; t < 2; t++)
        for (uint32_t h = 0; h < nh; h++)
            tree_steps(s, t, h, r, after, k);
}

/* The channel rotation (strata_sched_rot_order). With P = N g, g even and
 * every segment of equal length L = count / 2g, rho (local rank l -> l + 2
 * mod g in every node) carries channel h's steps onto channel h + 2's:
 *   - chain_local(g, h + 2, j) = chain_local(g, h, j) + 2 mod g (an even
 *     head adds j, an odd one subtracts it; h + 2 has h's parity), so
 *     rank_at(n, h + 2, j) = rho(rank_at(n, h, j)) and chain_pos(g, h + 2,
 *     rho(r)) = chain_pos(g, h, r): a rank's position j in its chain, and
 *     so its depth and height, are rho's image's in channel h + 2;
 *   - the node tables (links, depths, heights, DT_H1) do not depend on h,
 *     so up_rank and the children (rank_at of a child or parent node) are
 *     images under rho too: place_of(t, h + 2, rho(r)) = rho(place_of(t,
 *     h, r)) with equal depth and height;
 *   - chunk c of segment (t, h) has length blk_len(L, C, c), the same for
 *     every h: tree_steps(t, h + 2, rho(r)) emits, step for step, the
 *     images of tree_steps(t, h, r) (same op, after, bytes, buffer).
 * rho^(g/2) is the identity, and channels 0 and 1 (one even, one odd)
 * meet every orbit {h, h + 2, ...} once. Which chunks a phase moves
 * (c = phase - x for the offsets x a rank's place gives, and their
 * lengths) is common to all channels, and every offset x in use at some
 * (rank, channel) is in use at its image in channel 0 or 1, so two phases
 * whose representative steps agree agree in all their steps. The phase-0
 * copy is per rank and kept in the representatives. */
/* The steady state (sched_dtree_class). Phase ph of the tree moves, at a
 * rank of depth d and height hgt in tree t, chunks ph - x for x among the
 * children's heights, hgt, T_t + d - 1 and T_t + d — all in [0, 2 T_t],
 * since d + hgt <= T_t (a child is at least one lower and one deeper).
 * For 2 max(T_0, T_1) <= ph <= C - 1 every one of those is a chunk, so
 * every rank emits the same steps in every such phase (ph > 0: no copy);
 * with equal chunk lengths they move the same bytes, and the phases are
 * one class (exactly the same messages, as the contract asks). */
uint32_t sched_dtree_class(const strata_sched_t *s, uint32_t phase, int64_t reach)
{
    uint64_t nseg = 2 * (uint64_t)s->p.group, C = s->p.chunks;
    if (s->p.count % nseg || (s->p.count / nseg) % C) return phase; /* unequal chunks */
    if ((int64_t)phase >= reach && phase <= C - 1 && reach >= 1) return (uint32_t)reach;
    return phase;
}

static uint32_t tree_class(const strata_sched_t *s, uint32_t phase)
{
    int64_t T0 = s->aux[SCHED_DT_T0], T1 = s->aux[SCHED_DT_T1];
    /* channels over rails: 2W segments (W = rails, a multiple of g), whose
     * chunks must be equal too; then so are the 2g of sched_dtree_class */
    uint64_t nseg = 2 * (uint64_t)width(s);
    if (s->p.count % nseg || (s->p.count / nseg) % s->p.chunks) return phase;
    return sched_dtree_class(s, phase, 2 * (T0 > T1 ? T0 : T1));
}

uint32_t sched_dtree_rot_order(const strata_sched_t *s)
{
    uint32_t g = s->p.group, P = s->p.nranks;
    /* channels over rails (tree, params rails > g): not proven, none */
    if (s->p.rails > g) return 1;
    if (g < 4 || g % 2 || P % g || s->p.count % (2 * (uint64_t)g)) return 1;
    return g / 2;
}

const sched_algo_t sched_tree = {
    .id = STRATA_ALGO_TREE,
    .colls = SCHED_COLL(ALLREDUCE),
    .init = tree_init,
    .phase = tree_phase,
    .phase_class = tree_class,
    .rot_order = sched_dtree_rot_order,
};
