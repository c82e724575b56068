/*
 * sched.h (internal) — what the algorithm files of the sched module share:
 * the schedule object, the generator interface and small emit helpers.
 *
 * Design: an algorithm is a table (sched_algo_t) with an init function that
 * resolves parameters and sizes, and a phase function that enumerates the
 * steps of one agent in one phase into a sink. The sink either counts the
 * steps or keeps the one with the wanted index, so a single enumeration
 * serves strata_sched_phase_nsteps() and strata_sched_phase_step() without
 * ever storing a schedule. Enumerating one phase costs O(its steps).
 */
#ifndef STRATA_SCHED_INTERNAL_H
#define STRATA_SCHED_INTERNAL_H

#include "strata/sched.h"
#include "util.h"

#define SCHED_AUX_MAX 8

typedef struct sched_sink {
    uint32_t phase;     /* phase being enumerated (stamped on each step) */
    uint32_t want;      /* index to keep; UINT32_MAX: count only */
    uint32_t n;         /* steps emitted so far */
    strata_step_t *out; /* where the wanted step goes */
    strata_step_t *all; /* or: every step, up to `cap` of them (strata_sched_phase_steps) */
    uint32_t cap;
    bool reps; /* emit only the representative channels (strata_sched_rot_order) */
} sched_sink_t;

typedef struct sched_algo sched_algo_t;

struct strata_sched {
    strata_sched_params_t p;
    const sched_algo_t *algo;
    uint32_t nagents;
    uint32_t nphases;
    uint64_t buf[STRATA_BUF_COUNT]; /* rank buffer sizes (elements) */
    uint64_t switch_scratch;        /* scratch of switch agents */
    int64_t aux[SCHED_AUX_MAX];     /* algorithm-specific numbers */
    int32_t *tab;                   /* algorithm-specific table (O(P)), owned */
    uint16_t *order;                /* RING: copy of the mesh ring orders, owned (or NULL) */
};

struct sched_algo {
    strata_algo_t id;
    /* Bit mask of (1u << strata_coll_t) this algorithm implements. */
    uint32_t colls;
    /* Validate parameters beyond the collective (e.g. group divides P),
     * resolve defaults, set nphases, nagents, buf sizes. P >= 2, count > 0
     * (or BARRIER) when called. */
    strata_status_t (*init)(strata_sched_t *s, strata_error_t *err);
    /* Emit the steps of `agent` in phase k->phase. */
    void (*phase)(const strata_sched_t *s, uint32_t agent, sched_sink_t *k);
    /* Optional: pattern class of a phase (NULL: the phase index). */
    uint32_t (*phase_class)(const strata_sched_t *s, uint32_t phase);
    /* Optional: timing pattern of a phase (strata_sched_phase_pattern;
     * NULL or STRATA_SCHED_NO_PATTERN: none named). */
    uint32_t (*phase_pattern)(const strata_sched_t *s, uint32_t phase);
    /* Optional: order of the channel rotation (strata_sched_rot_order;
     * NULL or 1: none). The phase function then honours k->reps. */
    uint32_t (*rot_order)(const strata_sched_t *s);
};

/* The channel rotation both tree.c and nvlstree.c declare: order g/2 when
 * P = N g with g even, g >= 4, and the count splits into 2g equal
 * segments; rho moves local rank l to (l + 2) mod g. 1 otherwise. */
uint32_t sched_dtree_rot_order(const strata_sched_t *s);
/* The pipeline's steady state as a phase class (strata_sched_phase_class)
 * of a double-binary-tree schedule whose steps in phase ph move chunks
 * ph - x for offsets 0 <= x <= reach: phases reach .. C - 1 are one
 * class, named by its first phase, when every chunk of every segment has
 * the same length; every other phase is its own class. */
uint32_t sched_dtree_class(const strata_sched_t *s, uint32_t phase, int64_t reach);

#define SCHED_COLL(c) (1u << STRATA_COLL_##c)

extern const sched_algo_t sched_ring, sched_tree, sched_binomial, sched_recdbl, sched_rabenseifner,
    sched_bruck, sched_pairwise, sched_hier, sched_torus2d, sched_innet, sched_nvlstree,
    sched_direct;

/* Pipeline chunks of the direct schedule (the engine's layout, direct.c)
 * for coll of `bytes` on P ranks; 1 for the flat and line-sized cases.
 * shared: the ranks outnumber the CPUs, where the engine splits allreduce
 * into at least 4 chunks as the other collectives. */
double sched_direct_chunks(strata_coll_t coll, uint32_t P, double bytes, bool shared);
/* Bytes of an allreduce's first chunk in that layout (what the registered
 * path stages before the ranks know they all registered). */
double sched_direct_chunk0(uint32_t P, double bytes, bool shared);

/* Does algo implement coll at all (no parameter checks)? O(1). */
bool sched_algo_supports(strata_coll_t coll, strata_algo_t algo);

/* NICs per server a ring's (or tree's) channels spread over
 * (strata_coll_machine_t.rails; 0 there = min(nics, per_server)). */
static inline double sched_rails(const strata_coll_machine_t *m)
{
    if (m->rails > 0) return m->rails;
    return m->nics < m->per_server ? m->nics : m->per_server;
}

/* The NIC of server `group` with local index L cabled to the network, or
 * -1 (cost.c). O(devices). */
int32_t sched_server_nic(const strata_topo_t *t, int32_t group, int32_t L);

/* ==== Emit helpers (core.c) ==== */

void sched_emit(sched_sink_t *k, const strata_step_t *st);
void sched_send(sched_sink_t *k, uint32_t after, int32_t peer, int buf, uint64_t off,
                uint64_t count);
void sched_recv(sched_sink_t *k, uint32_t after, int32_t peer, int buf, uint64_t off,
                uint64_t count);
/* dst[doff..] = src[soff..] (+) msg */
void sched_recv_reduce(sched_sink_t *k, uint32_t after, int32_t peer, int sbuf, uint64_t soff,
                       int dbuf, uint64_t doff, uint64_t count);
void sched_copy(sched_sink_t *k, uint32_t after, int sbuf, uint64_t soff, int dbuf, uint64_t doff,
                uint64_t count);
void sched_reduce(sched_sink_t *k, uint32_t after, int sbuf, uint64_t soff, int dbuf, uint64_t doff,
                  uint64_t count);

/* ==== Arithmetic helpers ==== */

/* Block i of n equal-as-possible parts of `count` (the first count % n
 * parts one larger): offset and size. */
static inline uint64_t sched_blk_off(uint64_t count, uint64_t n, uint64_t i)
{
    uint64_t q = count / n, r = count % n;
    return i * q + (i < r ? i : r);
}
static inline uint64_t sched_blk_len(uint64_t count, uint64_t n, uint64_t i)
{
    return count / n + (i < count % n ? 1 : 0);
}
static inline uint32_t sched_mod(int64_t a, uint32_t p)
{
    int64_t m = a % (int64_t)p;
    return (uint32_t)(m < 0 ? m + p : m);
}
/* floor(log2(x)) for x >= 1, and ceil(log2(x)). */
uint32_t sched_log2_floor(uint64_t x);
uint32_t sched_log2_ceil(uint64_t x);

/* ==== Ring building blocks (ring.c), reused by hier and torus2d ==== */

/* A ring over m members; member i is rank base + i*stride, or, with
 * group > 1, the members are taken in runs of `group` (servers) and member
 * j is rank base + (j - j%group + (j%group + rot) % group)*stride: each
 * run rotated by rot (ring.c's channels), or with rev taken downwards from
 * rot, (rot - j%group) % group; with `order`, the local member at place l
 * of a run (or of the whole ring, group <= 1) is order[l] rather than l
 * (a mesh ring, ring.c). The region [off, off+len) is
 * split into m blocks. Step k of a reduce-scatter
 * (0 <= k < m-1) leaves member i holding block (i+1) % m fully reduced in
 * `dbuf` (first step reads `sbuf` for the send, every reduce reads sbuf as
 * the other operand); step k of an allgather (0 <= k < m-1) circulates those
 * blocks in dbuf. */
typedef struct sched_ring {
    uint32_t m, i;         /* members, my position */
    uint32_t base, stride; /* rank of member j = base + j*stride */
    uint64_t off, len;     /* region */
    uint32_t group, rot;   /* 0/1: no rotation (hier, torus2d) */
    bool rev;              /* group > 1: each run taken downwards, member j
                              of a run is local rank (rot - j) mod group */
    const int32_t *order;  /* NULL, or the ring's order of local members
                              (group of them when group > 1, else m) */
} sched_ring_t;
void sched_ring_rs_step(const sched_ring_t *g, uint32_t k, int sbuf, int dbuf, sched_sink_t *out);
void sched_ring_ag_step(const sched_ring_t *g, uint32_t k, int buf, sched_sink_t *out);

/* ==== Non-power-of-two folding (recdbl.c), reused by rabenseifner ==== */

/* P = pow + rem with pow = 2^floor(log2 P). Ranks 2i and 2i+1 (i < rem) fold
 * into core rank i (real rank 2i+1 works, 2i waits); rank q >= 2 rem is core
 * rank q - rem. core_lo(c) is the first real block owned by core rank c, so
 * core ranks [a,b) own real blocks [core_lo(a), core_lo(b)). */
typedef struct sched_fold {
    uint32_t P, pow, rem, L;
} sched_fold_t;
void sched_fold_init(sched_fold_t *f, uint32_t P);
/* Core rank of real rank r, or -1 if r only folds (even r < 2 rem). */
int64_t sched_fold_core(const sched_fold_t *f, uint32_t r);
uint32_t sched_fold_real(const sched_fold_t *f, uint32_t core);
uint32_t sched_fold_lo(const sched_fold_t *f, uint32_t core);

/* ==== Two-level allreduce (hier.c), reused by torus2d.c ==== */

/* Ranks r = node*g + local: intra ring reduce-scatter over the g ranks of a
 * node, inter ring allreduce of each rank's block over the P/g ranks with
 * its local index, intra ring allgather, pipelined over chunks. g must
 * divide P. */
uint32_t sched_twolevel_nphases(uint32_t P, uint32_t g, uint32_t chunks);
void sched_twolevel_phase(const strata_sched_t *s, uint32_t g, uint32_t r, sched_sink_t *k);
/* Check group divides P and set nphases; the phase function of both. */
strata_status_t sched_twolevel_init(strata_sched_t *s, const char *what, strata_error_t *err);
void sched_twolevel_algo_phase(const strata_sched_t *s, uint32_t r, sched_sink_t *k);
uint32_t sched_twolevel_class(const strata_sched_t *s, uint32_t phase);
uint32_t sched_twolevel_pattern(const strata_sched_t *s, uint32_t phase);

/* ==== NCCL's double binary tree over nodes (tree.c), reused by nvlstree.c ==== */

/* Ranks are grouped into N = ceil(P/g) nodes of g consecutive ranks (the
 * last node may be smaller). Two binary trees span the nodes so that a node
 * is an inner node in at most one (NCCL ncclGetDtree). sched_dtree_init
 * resolves nothing: it fills s->tab with, per tree t and node n, the fields
 * below, and sets aux[SCHED_DT_N] = N and aux[SCHED_DT_T0 + t] = the root's
 * height. With `chain` (tree.c), a node of m > 1 ranks is a chain whose
 * head meets the parent node and child node 1 and whose second rank meets
 * child node 0 (NCCL's balanced tree): DT_DEPTH is the head's rank depth
 * (+1 per child-1 edge, +2 per child-0 edge below such a node), DT_HEIGHT
 * the head's height (1 + max(DT_H1, child 1's)), DT_H1 the second rank's
 * (max(m - 2, 1 + child 0's); -1 for m = 1). Without (nvlstree.c), depth
 * and height count node edges and DT_H1 is -1. */
enum { DT_PARENT, DT_C0, DT_C1, DT_DEPTH, DT_HEIGHT, DT_H1, DT_FIELDS };
enum { SCHED_DT_N = 0, SCHED_DT_T0 = 1, SCHED_DT_T1 = 2 };
strata_status_t sched_dtree_init(strata_sched_t *s, uint32_t g, bool chain, strata_error_t *err);
static inline int32_t sched_dt(const strata_sched_t *s, int t, int64_t n, int f)
{
    return s->tab[((size_t)t * (size_t)s->aux[SCHED_DT_N] + (size_t)n) * DT_FIELDS + (size_t)f];
}
/* Node n's parent and children in tree t (-1: none) without a table. */
void sched_dtree_links(uint32_t N, int t, uint32_t n, int32_t *up, int32_t *d0, int32_t *d1);
/* The tree's channels (strata_sched_channels etc. for a TREE schedule):
 * 2W over several servers of g ranks, W = g or params rails R > g (tree
 * t's channel h is c = t W + h, rank h mod g's chain), else 0; channel c's
 * view; the local rank at chain position pos. */
uint32_t sched_tree_channels(const strata_sched_t *s);
void sched_tree_channel(const strata_sched_t *s, uint32_t c, strata_sched_channel_t *ch);
uint32_t sched_tree_channel_local(const strata_sched_t *s, uint32_t c, uint32_t pos);
/* Largest number of tree edges (both trees) that meet at one node: what
 * one node's network ports carry per direction, in units of half the
 * buffer. 0 for N = 1, 2 for N = 2, 3 or 4 beyond. O(N log N). */
uint32_t sched_dtree_max_edges(uint32_t N);

/* ==== NCCL's pipeline (nccl.c), priced by cost.c ==== */

/* NCCL's protocols, in its order (LL, LL128, Simple). */
enum { SCHED_NCCL_LL, SCHED_NCCL_LL128, SCHED_NCCL_SIMPLE };

/* The bytes of one channel's slice a tree step carries under protocol
 * `proto` for an allreduce of `bytes` on m (enqueue.cc: the protocol's
 * buffer over NCCL_STEPS, data bytes only; LL128 halved while the message
 * is short for the tree's depth). The tree's channels are strata's 2g
 * (tree.c). O(1). */
double sched_nccl_tree_chunk(int proto, double bytes, const strata_coll_machine_t *m);

/* strata_coll_cost with the tree's chunk fixed at `chunk` bytes of one
 * channel's slice (0: NCCL's Simple chunk); every other algorithm as
 * strata_coll_cost. */
strata_status_t sched_coll_cost_chunk(const strata_coll_machine_t *m, strata_coll_t coll,
                                      strata_algo_t algo, double bytes, double chunk,
                                      strata_coll_cost_t *c_p, strata_error_t *err);

#endif
