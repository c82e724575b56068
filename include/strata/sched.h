/*
 * strata/sched.h — collective schedules: every algorithm written once as a
 * lazy schedule generator that the simulator (sim) times and the runtime
 * (comm) executes, plus the symbolic verifier and the α-β-γ cost model.
 *
 * ==== The contract (read this if you consume schedules) ====
 *
 * A schedule is (collective, algorithm, P ranks, count, elem_size, params).
 * It is never stored whole: ask for the steps of one agent in one phase and
 * the generator computes them in O(steps of that phase). materialise() builds
 * an agent's whole list for small P (runtime, tests).
 *
 * Agents. Agents 0..P-1 are the ranks. Algorithms that reduce in the network
 * (STRATA_ALGO_INNET: NVLink SHARP / NVLS, InfiniBand SHARP; STRATA_ALGO_NVLSTREE:
 * NVLS inside each server, one switch agent per server) add switch agents
 * P..nagents-1: a switch agent has only a SCRATCH buffer, receives, reduces
 * and sends like a rank. The simulator maps it onto the switch device; the
 * runtime may run it as a helper (thread/process) or refuse the algorithm.
 *
 * Buffers, per agent: STRATA_BUF_INPUT (the user's send buffer, read only),
 * STRATA_BUF_OUTPUT (the user's receive buffer), STRATA_BUF_SCRATCH
 * (strata_sched_buf_count(.., STRATA_BUF_SCRATCH) elements, allocated by the
 * executor). INPUT and OUTPUT must not overlap (an in-place caller copies
 * first). All offsets, strides and counts are in ELEMENTS of elem_size bytes,
 * so an executor reduces typed data: byte offset = element offset * elem_size.
 *
 * Phases. Steps are grouped into bulk-synchronous phases 0..nphases-1, shared
 * by all agents (an agent may have no steps in a phase). Ordering rules:
 *   1. A step starts only after ALL of its agent's steps in earlier phases
 *      have completed.
 *   2. Within a phase, a step starts only after the first `after` steps of
 *      that agent's same phase have completed (after == 0: no extra wait).
 *      Otherwise steps of one phase are concurrent: post them all.
 *   3. Matching: the k-th SEND from agent a to agent b (in phase order, then
 *      step order) matches the k-th RECV or RECV_REDUCE at b whose peer is a.
 *      Matched steps have equal count*nblk and lie in the same phase. The
 *      verifier checks the schedule is deadlock-free even with rendezvous
 *      (unbuffered) sends, so an executor may block a send until its
 *      receive is posted.
 *   4. Concurrent steps of one agent never write a region another one reads
 *      or writes, except RECV_REDUCEs accumulating into the same region; an
 *      executor applies those one at a time (e.g. receive into a staging
 *      buffer, reduce on completion).
 * Reductions assume a commutative, associative operator (sum, min, max, ...).
 *
 * Step semantics (block b = 0..nblk-1, j = 0..count-1; msg is the message):
 *   SEND        msg[b*count+j]  = src[src_off + b*src_stride + j]
 *   RECV        dst[dst_off + b*dst_stride + j] = msg[b*count+j]
 *   RECV_REDUCE dst[dst_off + b*dst_stride + j] =
 *                   src[src_off + b*src_stride + j] (+) msg[b*count+j]
 *               (src may equal dst: accumulate in place)
 *   COPY        dst[..] = src[..]             (local, peer -1)
 *   REDUCE      dst[..] = dst[..] (+) src[..] (local, peer -1)
 * nblk == 1 is the common contiguous case (strides then unused).
 *
 * Phase classes, for the simulator: strata_sched_phase_class() returns an id;
 * two phases with the same id move exactly the same messages (same sender,
 * receiver, bytes, op kind) and differ only in which data they carry, so one
 * timing serves both. A repeating ring phase has one class for all its
 * repetitions. Classes are conservative: equal ids are a promise, different
 * ids are not a claim of difference.
 *
 * Sizes per collective (count is in elements; P = nranks):
 *   ALLREDUCE       in count,    out count
 *   REDUCE_SCATTER  in P*count,  out count   (count = per-rank block, as NCCL)
 *   ALLGATHER       in count,    out P*count (count = per-rank block)
 *   BROADCAST       in count (root), out count
 *   REDUCE          in count,    out count (root)
 *   ALLTOALL        in P*count,  out P*count (in block j -> rank j out block r)
 *   SENDRECV        in count,    out count (rank r sends to r+1, receives
 *                                from r-1, mod P: nccl-tests sendrecv_perf)
 *   BARRIER         count 0; only synchronisation (zero-element messages)
 * count == 0 gives an empty schedule (no phases) except for BARRIER.
 *
 * Thread safety: a schedule is immutable after create; every query below is
 * pure and may be called from several threads.
 */
#ifndef STRATA_SCHED_H
#define STRATA_SCHED_H

#include "strata/common.h"
#include "strata/link.h"
#include "strata/topo.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Names ==== */

#define STRATA_COLL_MAP(X)                                                                         \
    X(ALLREDUCE, "allreduce")                                                                      \
    X(REDUCE_SCATTER, "reducescatter")                                                             \
    X(ALLGATHER, "allgather")                                                                      \
    X(BROADCAST, "broadcast")                                                                      \
    X(REDUCE, "reduce")                                                                            \
    X(ALLTOALL, "alltoall")                                                                        \
    X(SENDRECV, "sendrecv")                                                                        \
    X(BARRIER, "barrier")

typedef enum {
#define STRATA_COLL_ENUM(name, text) STRATA_COLL_##name,
    STRATA_COLL_MAP(STRATA_COLL_ENUM)
#undef STRATA_COLL_ENUM
        STRATA_COLL_COUNT
} strata_coll_t;

/* One file per algorithm under src/sched/. */
#define STRATA_ALGO_MAP(X)                                                                         \
    X(RING, "ring")                 /* ring, pipelined in chunks; chain for bcast/reduce */        \
    X(TREE, "tree")                 /* NCCL's double binary tree (over nodes), pipelined */        \
    X(BINOMIAL, "binomial")         /* binomial tree */                                            \
    X(RECDBL, "recdbl")             /* recursive doubling */                                       \
    X(RABENSEIFNER, "rabenseifner") /* recursive halving + doubling */                             \
    X(BRUCK, "bruck")               /* Bruck (log P rounds, any P) */                              \
    X(PAIRWISE, "pairwise")         /* pairwise exchange / direct send */                          \
    X(HIER, "hier")                 /* two-level: intra RS -> inter AR -> intra AG */              \
    X(TORUS2D, "torus2d")           /* row RS -> column AR -> row AG */                            \
    X(INNET, "innet")               /* reduction in the switch (NVLS, SHARP) */                    \
    X(NVLSTREE, "nvlstree")         /* NVLS inside servers, double binary tree across */           \
    X(DIRECT, "direct")             /* loads/stores in shared memory (strata's shm engine) */

typedef enum {
#define STRATA_ALGO_ENUM(name, text) STRATA_ALGO_##name,
    STRATA_ALGO_MAP(STRATA_ALGO_ENUM)
#undef STRATA_ALGO_ENUM
        STRATA_ALGO_COUNT
} strata_algo_t;

/* The layout of STRATA_ALGO_DIRECT, shared with the runtime's engine that
 * runs it (src/comm/allreduce_shm.c), so the schedule the model prices is
 * the one that runs: data of at most LINE_MAX bytes travels beside a
 * sequence number in one 64-byte cache line; allreduce and reduce of at
 * most FLAT_MAX bytes run flat (every rank reduces the whole vector); the
 * rest is pipelined in chunks of CHUNK bytes (all P slices), a slice at
 * least SLICE_MIN bytes and a multiple of a 64-byte line. */
#define STRATA_DIRECT_LINE_MAX 56u
#define STRATA_DIRECT_FLAT_MAX 2048u
#define STRATA_DIRECT_CHUNK    262144u
/* Allreduce's chunk when the host's ranks outnumber its CPUs: the vector
 * over SHARED_CHUNKS, at least CHUNK and at most CHUNK_SHARED (the whole
 * 1 MiB staging slot). Two ranks on a core take turns at least once per
 * chunk, so fewer, larger chunks mean fewer switches: 4 (the fewest that
 * let a core's two ranks interleave), so 1 MiB chunks from 4 MiB up (4
 * ranks on 2 CPUs, 4 MiB: 16 -> 4 chunks, 0.93-1.27 -> 0.79-0.86 ms a call
 * on session 17's host; 64 MiB: 256 -> 64 chunks, 24.5 -> 21.8 ms on
 * session 10's, where 4 chunks at 4 MiB had measured slower than 16;
 * bench/README.md, issue 17 "s17-h17"). */
#define STRATA_DIRECT_CHUNK_SHARED  (1u << 20)
#define STRATA_DIRECT_SHARED_CHUNKS 4u
#define STRATA_DIRECT_SLICE_MIN     4096u
/* The fixed crossover from which outputs are stored with non-temporal
 * stores (src/comm/copy.c comm_stream_min): the other collectives and
 * registered-buffer allreduces use it; a staged allreduce starts from it and
 * then measures which store mode is cheaper for outputs from 1 MiB to the
 * last-level cache (src/comm/allreduce_shm.c out_mode), so a model should
 * price both modes at each size and take the cheaper. */
#define STRATA_DIRECT_STREAM_MIN (16u << 20)
/* Allreduce's reduce phase runs in blocks of this many bytes, each copied
 * to the rank's output while it is in L1 (src/comm/allreduce_shm.c). */
#define STRATA_DIRECT_BLOCK (16u << 10)

/* The engine's layout of one direct collective (what the model prices and
 * what a probe must measure at): pipeline chunks, bytes of the first chunk
 * (all P slices), bytes of one rank's slice of it (the whole vector when
 * allreduce or reduce runs flat), and bytes reduced and copied out at a
 * time. shared: the ranks outnumber the CPUs (the engine then splits
 * allreduce into at least 4 chunks, as the other collectives). O(1). */
typedef struct strata_direct_layout {
    double chunks, chunk, slice, block;
    bool flat;
} strata_direct_layout_t;

/* "allreduce", "ring", ...; "?" when out of range. */
STRATA_API const char *strata_coll_name(strata_coll_t coll);
STRATA_API const char *strata_algo_name(strata_algo_t algo);
/* Parse a name (case-insensitive; "reduce_scatter"/"reduce-scatter" and
 * "all_reduce" style spellings accepted). 0 ok, -1 unknown. */
STRATA_API int strata_coll_parse(const char *s, strata_coll_t *coll_p);
STRATA_API int strata_algo_parse(const char *s, strata_algo_t *algo_p);

/* ==== Steps ==== */

typedef enum {
    STRATA_STEP_SEND = 0,
    STRATA_STEP_RECV = 1,
    STRATA_STEP_RECV_REDUCE = 2,
    STRATA_STEP_COPY = 3,
    STRATA_STEP_REDUCE = 4,
} strata_step_op_t;

typedef enum {
    STRATA_BUF_INPUT = 0,
    STRATA_BUF_OUTPUT = 1,
    STRATA_BUF_SCRATCH = 2,
    STRATA_BUF_COUNT = 3,
} strata_buf_t;

/* One step of one agent (semantics in the header comment). */
typedef struct strata_step {
    uint8_t op;      /* strata_step_op_t */
    uint8_t src_buf; /* strata_buf_t read (SEND, RECV_REDUCE, COPY, REDUCE) */
    uint8_t dst_buf; /* strata_buf_t written (RECV, RECV_REDUCE, COPY, REDUCE) */
    uint8_t pad_;
    int32_t peer;       /* agent sent to / received from; -1 for COPY, REDUCE */
    uint32_t phase;     /* bulk-synchronous phase */
    uint32_t after;     /* wait for the first `after` steps of this phase */
    uint64_t src_off;   /* elements */
    uint64_t dst_off;   /* elements */
    uint64_t count;     /* elements per block */
    uint64_t nblk;      /* blocks, >= 1 */
    int64_t src_stride; /* elements between block starts in src (nblk > 1; may be < 0) */
    int64_t dst_stride; /* elements between block starts in dst (nblk > 1; may be < 0) */
} strata_step_t;

/* ==== Schedules ==== */

typedef struct strata_sched strata_sched_t;

/* Mesh rings (strata_coll_mesh_rings, params ring_order): at most this
 * many rings, over at most this many ranks of one server. */
#define STRATA_MESH_RINGS_MAX   16
#define STRATA_MESH_MEMBERS_MAX 16

typedef struct strata_sched_params {
    strata_coll_t coll;
    strata_algo_t algo;
    uint32_t nranks;    /* P >= 1 */
    uint64_t count;     /* elements, meaning per collective (header comment) */
    uint32_t elem_size; /* bytes per element, >= 1 (4 for float) */
    uint32_t root;      /* BROADCAST, REDUCE */
    uint32_t chunks;    /* pipeline chunks (ring, tree); 0 = 1 */
    uint32_t group;     /* ranks per node: RING (ranks per server, dividing P:
                           that many channels, each leaving every server by
                           its own rank and NIC; 1 = the single ring 0..P-1),
                           HIER, INNET and NVLSTREE (ranks per
                           switch), TREE (ranks per server: the tree spans
                           servers, a chain inside each, as NCCL; need not
                           divide P for TREE, NVLSTREE), TORUS2D (row length);
                           0 = a default (all P for INNET and NVLSTREE, 1 =
                           flat over ranks for RING and TREE, the largest divisor <=
                           sqrt(P) for TORUS2D, 8 for HIER when it divides P) */
    /* RING only: the rings of a switchless mesh (strata_coll_mesh_rings).
     * `rings` orders of L local ranks each (L = group when group > 1, else
     * nranks), ring q's order ring_order[q*L .. q*L+L-1] a permutation of
     * 0..L-1: every channel of ring q visits a server's ranks in that
     * order (rotated per channel as above). The buffer is split over
     * rings x max(group, 1) channels. rings 0 (or NULL orders) = 1 ring in
     * the identity order; at most STRATA_MESH_RINGS_MAX. Copied by
     * strata_sched_create; the caller keeps ownership. */
    uint32_t rings;
    const uint16_t *ring_order;
    /* DIRECT allreduce only: every rank's send and receive buffers are
     * registered (strata_comm_mem_alloc: every rank maps them), so above
     * STRATA_DIRECT_FLAT_MAX rank r reduces slice r straight from every
     * INPUT into its OUTPUT and stores it into every peer's OUTPUT — two
     * phases: the first handshake (which stages chunk 0 before the ranks
     * know they all registered) and that reduction. */
    bool registered;
    /* RING and TREE over servers only: NICs per server their channels
     * rotate over (strata_coll_machine_t.rails; NCCL starts channel c at
     * NIC c mod the NICs its GPUs reach best, search.cc). Greater than
     * max(group, 1) and a multiple of it: `rails` channels (times the mesh
     * rings; the tree: per tree), channel c of a ring runs rotation
     * c mod group on rail c, channel c of a tree the chain headed by local
     * rank c mod group (a GH200 node, one GPU and four NICs: four channels
     * of the same ring, or per tree, one a NIC); 0 (or up to group) = one
     * channel per local rank. */
    uint32_t rails;
} strata_sched_params_t;

/* Does `algo` implement `coll` for these parameters? Returns STRATA_OK or
 * STRATA_ERR_UNSUPPORTED / STRATA_ERR_INVALID with a reason in err. */
STRATA_API strata_status_t strata_sched_check(const strata_sched_params_t *p, strata_error_t *err);

/* Create a schedule (cheap: O(1) or O(P) memory, never O(steps)). The caller
 * owns *s_p; strata_sched_destroy(NULL) is a no-op. Errors as sched_check. */
STRATA_API strata_status_t strata_sched_create(const strata_sched_params_t *p, strata_sched_t **s_p,
                                               strata_error_t *err);
STRATA_API void strata_sched_destroy(strata_sched_t *s);

/* The parameters, with defaults (chunks, group) resolved. */
STRATA_API const strata_sched_params_t *strata_sched_params(const strata_sched_t *s);
/* Ranks plus switch agents. */
STRATA_API uint32_t strata_sched_nagents(const strata_sched_t *s);
STRATA_API uint32_t strata_sched_nphases(const strata_sched_t *s);
/* Elements an agent's buffer must hold (0 for INPUT/OUTPUT of switch agents). */
STRATA_API uint64_t strata_sched_buf_count(const strata_sched_t *s, uint32_t agent,
                                           strata_buf_t buf);

/* Steps of `agent` in `phase`: how many, and the i-th (0 <= i < n). */
STRATA_API uint32_t strata_sched_phase_nsteps(const strata_sched_t *s, uint32_t agent,
                                              uint32_t phase);
STRATA_API void strata_sched_phase_step(const strata_sched_t *s, uint32_t agent, uint32_t phase,
                                        uint32_t i, strata_step_t *step_p);
/* All steps of `agent` in `phase` in one walk (strata_sched_phase_step
 * walks the phase once per step): the first min(n, cap) go to steps[];
 * returns n. */
STRATA_API uint32_t strata_sched_phase_steps(const strata_sched_t *s, uint32_t agent,
                                             uint32_t phase, strata_step_t *steps, uint32_t cap);
/* Pattern class of a phase (see header comment). */
STRATA_API uint32_t strata_sched_phase_class(const strata_sched_t *s, uint32_t phase);
/* The timing pattern of a phase, coarser than its class: two phases with
 * one pattern id have, agent by agent, equal step lists but for offsets,
 * buffers and whether a receive (a local step) reduces — equal in op kind
 * with RECV_REDUCE read as RECV and REDUCE as COPY, peer, `after` and
 * count x nblk, all a simulated phase's timing reads when no trace names
 * the operations and no switch pulls (docs/simulator.md). A schedule that
 * names its patterns names them all: the simulator then generates only
 * each pattern's first phase, trusting the promise. Returns
 * STRATA_SCHED_NO_PATTERN when the schedule names none (every schedule
 * but the pipelined two-level allreduce, HIER and TORUS2D with equal
 * blocks). */
#define STRATA_SCHED_NO_PATTERN UINT32_MAX
STRATA_API uint32_t strata_sched_phase_pattern(const strata_sched_t *s, uint32_t phase);

/* Channel rotation (the simulator's channel quotient, docs/simulator.md
 * "Channels generated by rotation"). A schedule may declare an order
 * k >= 2 and an agent map rho (strata_sched_rot_agent(s, a, 1); rho^k =
 * identity) under which its channels fall into orbits of k: in every
 * phase, the sends and receives of every channel are the images under
 * rho^i of those of a representative channel (the first channels, one
 * per orbit). Then, per phase:
 *   - the multiset of sends (agent, peer, count x nblk, src_buf, after)
 *     equals the union over i < k of the images (rho^i agent, rho^i peer,
 *     ...) of the sends of rep_steps (below), and so does the multiset of
 *     receives (agent, peer, count x nblk; with or without a reduction
 *     alike);
 *   - rep_steps keeps every local step (copy, reduce);
 *   - two phases whose rep_steps agree agent by agent in (op, peer,
 *     after, count x nblk, src_buf) agree so in their full steps.
 * sched_verify_test checks the first two on every phase of each
 * declaring schedule against the full walk. Returns k, or 1 when the
 * schedule declares no rotation (TREE and NVLSTREE over full servers of
 * an even group >= 4 with a count divisible by 2 group, tree.c). */
STRATA_API uint32_t strata_sched_rot_order(const strata_sched_t *s);
/* rho^i(agent): rank r = n g + l -> n g + (l + 2 i) mod g; switch agents
 * fixed. Only meaningful when strata_sched_rot_order(s) > 1. */
STRATA_API uint32_t strata_sched_rot_agent(const strata_sched_t *s, uint32_t agent, uint32_t i);
/* strata_sched_phase_steps restricted to the representative channels
 * (all steps when the order is 1). */
STRATA_API uint32_t strata_sched_phase_rep_steps(const strata_sched_t *s, uint32_t agent,
                                                 uint32_t phase, strata_step_t *steps,
                                                 uint32_t cap);

/* Flat view: total steps of an agent and the idx-th in phase order.
 * O(nphases) per call: for small P; the simulator should walk phases. */
STRATA_API uint64_t strata_sched_nsteps(const strata_sched_t *s, uint32_t agent);
STRATA_API void strata_sched_step(const strata_sched_t *s, uint32_t agent, uint64_t idx,
                                  strata_step_t *step_p);
/* All steps of one agent in order. The caller frees *steps_p with free().
 * NOMEM on failure. */
STRATA_API strata_status_t strata_sched_materialise(const strata_sched_t *s, uint32_t agent,
                                                    strata_step_t **steps_p, size_t *n_p,
                                                    strata_error_t *err);

/* ==== Channels (ring.c) ==== */

/* A RING schedule over servers of g ranks (group = g) runs g channels, as
 * NCCL does: channel c carries its slice [off, off + count) of the buffer
 * round its own ring, which visits the servers in order 0..servers-1 and
 * inside every server enters at local rank `entry` (= c) and leaves from
 * local rank `exit`, going up (c, c+1, ...) or down (c, c-1, ...). Its
 * hop from one server to the next joins the NIC of local rank `entry` on
 * both sides: one rail (a send leaving from `exit` reaches that NIC through
 * the PCIe switch the two GPUs share, or over NVLink through GPU `entry`,
 * PXN). A schedule that wants rail-aligned server edges (the tree) makes
 * every edge end at the local rank whose NIC is the rail: the simulator
 * sends a ring's hop through the NIC on the receiver's rail. */
typedef struct strata_sched_channel {
    uint32_t entry, exit; /* local ranks: receives from / sends to the network */
    bool up;              /* local order entry, entry+1, ... (else entry-1, ...) */
    uint32_t servers;     /* servers the ring visits, in order 0, 1, ... */
    uint64_t off, count;  /* its slice of the buffer, elements */
    int32_t tree;         /* TREE: which of the two trees (0, 1); RING: -1 */
    int32_t rail;         /* RING with params rails > group: the server's NIC of
                             this local index (c mod rails) carries its hops;
                             -1: local rank entry's own NIC */
} strata_sched_channel_t;

/* A TREE schedule over several servers of g ranks (group = g > 1) runs
 * 2g channels, as NCCL does (tree.c): channel c = t g + h carries its
 * slice of tree t's half of the buffer; in every server its chain starts
 * at local rank `entry` (= h, the head: it meets the parent server and
 * child server 1 through NIC h), goes next to `exit` (h's PCIe sibling
 * h^1: it meets child server 0, through the same NIC in NCCL), then on
 * `up` or down. strata_sched_channel_local gives the chain's order.
 *
 * Channels of s: its group for RING, 2 group for TREE over several
 * servers, 0 for every other schedule. */
STRATA_API uint32_t strata_sched_channels(const strata_sched_t *s);
/* Channel c (0 <= c < strata_sched_channels(s)); ERR_UNSUPPORTED for a
 * schedule without channels, ERR_RANGE for c out of range. */
STRATA_API strata_status_t strata_sched_channel(const strata_sched_t *s, uint32_t c,
                                                strata_sched_channel_t *ch_p, strata_error_t *err);
/* Local rank at position pos (0 = entry, g-1 = exit) of channel c's order
 * in every server; UINT32_MAX on bad arguments. */
STRATA_API uint32_t strata_sched_channel_local(const strata_sched_t *s, uint32_t c, uint32_t pos);

/* ==== Verifier ==== */

/* Execute the schedule symbolically on tagged data (each element of each
 * rank's input carries a 64-bit tag; reductions combine tags so that a
 * missing or doubled contribution changes the result) with rendezvous
 * semantics, and check: every rank's output holds exactly the right
 * contributions, each once; every SEND has its matching RECV with equal
 * size; no access leaves a buffer; no concurrent hazard (rule 4); no
 * deadlock. Returns OK, or STRATA_ERR_PROTOCOL with the first problem
 * ("rank 3 output element 17: ...") in err. Memory O(P * buffers). */
STRATA_API strata_status_t strata_sched_verify(const strata_sched_t *s, strata_error_t *err);

/* ==== Cost model (cost.c) and selection (select.c) ==== */

/* What the α-β-γ model needs to know about a cluster, read off a topology
 * by routing representative rank pairs (strata_coll_machine_from_topo) or
 * filled by hand. Bandwidths are B/s per direction, after every overhead
 * the link layer and the framing model know of. */
typedef struct strata_coll_machine {
    uint32_t nranks;     /* P */
    uint32_t per_server; /* g: ranks per server (P when there are no servers) */
    uint32_t servers;    /* N = P / g */
    uint32_t nics;       /* NICs per server carrying collective traffic */
    double bw_intra;     /* rank to rank inside a server (all equal-cost paths) */
    double bw_nic;       /* one rank to a rank on another server (one NIC) */
    double lat_intra;    /* one message inside a server, s (path latency) */
    double lat_inter;    /* one message between the farthest servers, s */
    double eta_intra;    /* packet efficiency of the scale-up link, already
                            inside bw_intra (the link layer's figure; 1 =
                            none, 0 is taken as 1). innet and nvlstree charge
                            the switch's read requests, (1 - eta_intra) per
                            byte it pulls, in the other direction */
    double reduce_bw;    /* local reduction rate, B/s of output; 0 = unknown
                            (the reduction term is then not modelled) */
    bool switch_reduce;  /* scale-up switches reduce (NVLink SHARP / NVLS) */
    bool net_reduce;     /* network switches reduce (InfiniBand SHARP) */
    bool direct;         /* accelerators link to each other (torus, mesh,
                            ring): different dimensions use different links */
    /* Direct networks: every rank r exchanging with r XOR 2^k at once
     * (k < 32): the bandwidth one flow gets given the load the pattern puts
     * on the busiest link it crosses, and that pair's path latency; ring_*
     * the same for r -> r+1. 0 = not computed (use bw_intra, lat_intra). */
    double bw_dist[32], lat_dist[32];
    /* ... and binomial steps (binomial.c, root 0), only their senders
     * active: [0] reduce (v = 2^k mod 2^(k+1) -> v - 2^k), [1] broadcast
     * (v < 2^k -> v + 2^k). 0 = not computed. */
    double bw_binom[2][32];
    double bw_ring, lat_ring;
    double bw_col, lat_col; /* torus2d columns: r -> r + row length */
    bool col_disjoint;      /* ... on links the row rings do not use */
    char intra_kind[32];    /* link kinds, for reports */
    char inter_kind[32];
    /* One message between the same local rank of two servers, s: the
     * farther of server 0 -> 1 and server 0 -> the last (one rail of a
     * rail-optimised fabric; the tree's server edges). 0 = lat_inter. */
    double lat_rail;
    /* One leg rank -> switch in the middle of its path, as one message (the
     * endpoints' overhead once): inside a server (to the scale-up switch)
     * and along lat_rail's path (to the rail's switch). innet and nvlstree
     * send to the switch. 0 = half of lat_intra / lat_rail. */
    double lat_leg_intra, lat_leg_rail;
    /* The accelerator memory reduce_bw comes from: catalog id ("hbm-h200";
     * "" = none known), and whether the cluster recorded it on rank 0's
     * accelerator (strata_topo_device_t.memory) or it is guessed from the
     * scale-up link kind (intra_kind's generation). */
    char memory_kind[32];
    bool memory_recorded;
    /* A ring channel's slowest hop between servers (ring.c: from local
     * rank 1 of a server, channel 0's exit, to local rank 0 of the next,
     * its entry, through NIC 0 on both sides: one rail; the farther of
     * server 0 -> 1 and the last -> 0), as one message, s; 0 =
     * lat_inter. ring_pxn: the exit reaches its rail's NIC over scale-up
     * links through the GPU next to it (PXN; no shared PCIe switch), so
     * every rank sends all g of its blocks per step over scale-up links. */
    double lat_ring_rail;
    bool ring_pxn;
    /* GPUDirect RDMA read throughput of the GPU's PCIe link (a NIC reading
     * GPU memory, strata_link_gdr_read), B/s; bw_nic is capped by it. 0 =
     * not known (no catalog, no PCIe link, one server). */
    double bw_gdr_read;
    /* Switchless meshes (strata_coll_mesh_rings): how many arc-disjoint
     * directed rings a server's accelerator links admit (0 or 1: one ring,
     * as over a switch), and the bandwidth of one ring's hop (one lane of
     * the slowest link kind, per direction). The ring runs that many at
     * once. */
    uint32_t mesh_rings;
    double bw_mesh_lane;
    /* Flat tree on a direct network or a switchless server (<= 1,024
     * ranks): the busiest link's load when every edge of the double binary
     * tree carries its chunk each way, over what one rank's E edges cost
     * through bw_intra (a switch's port); 0 = 1 (not routed). */
    double tree_edge_factor;
    /* NICs per server a ring's channels spread over (NCCL's search starts
     * channel c at NIC c mod (the NICs its GPUs reach best), search.cc
     * ncclTopoSearchRecNet): min(nics, per_server) plus the cabled NICs no
     * accelerator calls its own that a rank reaches as near as its own NIC
     * (a GH200 node: one GPU, four NICs on the Grace: 4). 0 = min(nics,
     * per_server). */
    uint32_t rails;
    /* Memory-semantic algorithms (direct: ranks load and store in memory
     * they share, strata's shared-memory engine), and ranks sharing
     * processors. Read off a topology: bw_read and bw_copy from the
     * accelerator memory (its bandwidth, and half of it for a copy that
     * reads and writes each byte), the rest 0. strata_probe_machine fills
     * them with what strata probe measured on this host. */
    double bw_read;     /* one rank reading its own memory, B/s; 0 = not charged */
    double bw_copy;     /* one rank copying within its own memory, B/s; 0 = not charged */
    double bw_load;     /* one byte handed to a peer through shared memory: stored by its
                           owner, loaded by the peer, B/s; 0 = bw_intra */
    double bw_store;    /* the extra cost of storing a loaded byte to the output where the
                           output lives (memory, for outputs beyond the caches) rather than
                           where bw_load's measurement stored it, B/s; 0 = none */
    double lat_sync;    /* one flag handed from rank to rank through shared memory, s
                           (a cache-line transfer); 0 = lat_intra */
    bool registered;    /* direct allreduce on registered buffers (strata_sched_params_t) */
    uint32_t cores;     /* processors the ranks run on; 0 = one per rank */
    double lat_oversub; /* extra cost of each synchronisation per rank beyond the cores, s
                           (the scheduler's switches); with cores, the data terms also
                           grow by ceil(ranks / cores) */
    /* the direct allreduce's pipeline: a byte a peer staged, loaded and
     * reduced by its owner into lines the peers load next (the loads
     * overlap the stores), B/s; 0 = min(bw_load, reduce_bw) */
    double bw_reduce_load;
    /* GPUs that are PCIe peers (strata_topo_pcie_peers) write into each
     * other with SM stores, one 128 B line a TLP: the share of the links'
     * rate those stores get (strata_link_sm_store_share of the rank's
     * first link, 0.9 on PCIe 1.0-5.0), already inside every figure
     * between the ranks of a server above. 0 = 1 (not applied). */
    double store_share;
    /* The NCCL release whose tuning model `--select nccl` follows, as
     * NCCL_VERSION_CODE (major x 10000 + minor x 100 + patch: 21903 is
     * 2.19.3; strata_nccl_version_parse). 0 = the newest transcribed (2.30).
     * Only the choice follows it: strata's price of the schedule does not. */
    uint32_t nccl_version;
} strata_coll_machine_t;

/* Read the model inputs off a finished topology (see cost.c for how). cat
 * supplies the reduction rate (the HBM recorded on rank 0's accelerator,
 * strata_topo_device_t.memory, else the one the scale-up link kind
 * implies; memory_kind and memory_recorded say which) and may be NULL
 * (then reduce_bw is 0: not modelled). Routes three rank pairs; on direct
 * networks of up to 8,192 ranks also whole patterns (O(P log P) routes). */
STRATA_API strata_status_t strata_coll_machine_from_topo(const strata_topo_t *topo,
                                                         const strata_link_catalog_t *cat,
                                                         strata_coll_machine_t *m_p,
                                                         strata_error_t *err);

/* Where m's reduction memory (m->memory_kind) comes from, in words for
 * reports: "recorded in the cluster", "guessed from the scale-up link", or
 * "not known" when there is none. Static strings. */
STRATA_API const char *strata_coll_memory_source(const strata_coll_machine_t *m);

/* NVLink's store-packet efficiency for "nvlink*" kinds, 1 for others
 * (strata_link_store_eta). It is already inside every catalog bandwidth:
 * use it only for what a switch's read request costs per pulled byte,
 * 1 minus it (NVLS). */
STRATA_API double strata_coll_link_efficiency(const char *kind);

/* Ranks per server of a collective whose rank r runs on endpoint ranks[r]
 * (ranks NULL: endpoint r) of n: g when the ranks come in runs of g
 * consecutive ranks on one server, every server's run of the same length
 * (so g divides n; n when all share one server); 0 when the ranks are not
 * on servers or not in such runs. strata_coll_machine_from_topo derives
 * per_server from it, and a schedule timed on topo should pass it as the
 * group of RING, TREE and HIER when it is below n (several servers), so
 * the schedule is the algorithm the model prices. O(n). */
STRATA_API uint32_t strata_coll_ranks_per_server(const strata_topo_t *topo, const int32_t *ranks,
                                                 uint32_t n);

/* NICs per server a ring's channels rotate over when a server has more
 * NICs than its g ranks own (strata_coll_machine_t.rails, from the first
 * server's cabled NICs: those no accelerator owns that one of endpoints
 * 0..g-1 reaches as near as its own NIC, plus min(the others, g)); 0 when
 * it has none (one channel per rank). A ring timed on topo passes it as
 * the schedule's rails. O(NICs of a server x devices). */
STRATA_API uint32_t strata_coll_rails(const strata_topo_t *topo, uint32_t g);

/* The rings of a switchless mesh: over the L ranks ranks[0..L-1] (NULL:
 * endpoints 0..L-1) of one server, L = group when group > 1 (every server
 * of n ranks wired alike, checked), else n (one server or a direct
 * network), find as many arc-disjoint directed Hamiltonian rings of the
 * accelerator-to-accelerator links as the search can (a link of mult m
 * carries m rings each way; exact for L <= 8, a bounded search beyond;
 * meshring.c). Writes the rings, each an order of the L local indices,
 * into order_p (room for STRATA_MESH_RINGS_MAX x L) and one lane's
 * bandwidth per direction into *lane_bw_p; returns how many (0: not a
 * switchless mesh — a scale-up switch, a pair not linked directly on
 * every ring, L < 2 or above STRATA_MESH_MEMBERS_MAX, or servers wired
 * differently). Deterministic: the model and the simulator get the same
 * rings. Thread-safe. */
STRATA_API uint32_t strata_coll_mesh_rings(const strata_topo_t *topo, const int32_t *ranks,
                                           uint32_t n, uint32_t group, uint16_t *order_p,
                                           double *lane_bw_p);

/* The predicted cost of one collective with one algorithm. */
typedef struct strata_coll_cost {
    strata_coll_t coll;
    strata_algo_t algo;
    double bytes;        /* nccl-tests "size": the buffer for AR/bcast/reduce,
                            P x block for AG/RS/alltoall */
    double time;         /* s = alpha + max(beta, gamma) (reduction is fused) */
    double alpha;        /* latency term, s */
    double beta;         /* bandwidth term, s */
    double gamma;        /* reduction term, s */
    double steps;        /* sequential message steps (latency terms) */
    uint32_t chunks;     /* pipeline chunks the model chose */
    double bytes_intra;  /* bytes one rank sends over scale-up links; for innet
                            and nvlstree its busier direction, receives plus
                            the switch's read requests (payload-rate bytes) */
    double bytes_inter;  /* bytes one rank's share of the NICs sends */
    double algbw, busbw; /* B/s, nccl-tests definitions */
    const char *bound;   /* "latency", "scale-up bandwidth", "network bandwidth", "reduction" */
} strata_coll_cost_t;

/* nccl-tests busbw / algbw factor of a collective on P ranks. */
STRATA_API double strata_coll_busbw_factor(strata_coll_t coll, uint32_t P);
/* The direct schedule's layout of coll of `bytes` on P ranks (above). */
STRATA_API void strata_direct_layout(strata_coll_t coll, uint32_t P, double bytes, bool shared,
                                     strata_direct_layout_t *l);

/* Predict algo for coll of `bytes` on machine m. ERR_UNSUPPORTED (with a
 * reason) when the algorithm does not apply (e.g. innet without reducing
 * switches, hier on one server). */
STRATA_API strata_status_t strata_coll_cost(const strata_coll_machine_t *m, strata_coll_t coll,
                                            strata_algo_t algo, double bytes,
                                            strata_coll_cost_t *c_p, strata_error_t *err);

/* One line on the form of `algo` the model prices on m (e.g. "double
 * binary tree over 2 servers, a chain of 8 ranks in each"), written into
 * buf (always terminated); returns buf. */
STRATA_API const char *strata_coll_algo_form(const strata_coll_machine_t *m, strata_algo_t algo,
                                             char *buf, size_t len);

/* Channel c of algo's schedule on m across the servers of topology t
 * (RING without mesh rings, TREE; several servers of several ranks): one
 * line naming its rail (the NIC of its entry rank on every server), the
 * local ranks that meet the network and how the second reaches that NIC
 * (the PCIe switch they share, the same NIC, or PXN over scale-up links),
 * written into buf (always terminated) when c is below the count. Returns
 * how many channels algo has there (0: none). t and m must describe the
 * same cluster (m from strata_coll_machine_from_topo(t)). */
STRATA_API uint32_t strata_coll_channel_line(const strata_topo_t *t, const strata_coll_machine_t *m,
                                             strata_algo_t algo, uint32_t c, char *buf, size_t len);

/* Contention the model cannot see for algo on m, in words (a static
 * string), or NULL when its figures hold: where the simulator and the
 * model differ for a known reason the model does not capture, this names
 * it so reports can print it beside the model's figure. */
STRATA_API const char *strata_coll_model_caveat(const strata_coll_machine_t *m, strata_algo_t algo);

/* Whether strata_coll_select considers algo: every algorithm but DIRECT.
 * Direct loads need ranks that map each other's memory, which a cluster
 * file does not record for accelerators (P2P/IPC mappings), and no GPU
 * library runs strata's shared-memory engine; it is priced when asked for
 * (strata_coll_cost), and strata's runtime chooses it for itself. */
STRATA_API bool strata_coll_selectable(strata_algo_t algo);

/* The cheapest applicable algorithm for coll of `bytes` on m. */
STRATA_API strata_status_t strata_coll_select(const strata_coll_machine_t *m, strata_coll_t coll,
                                              double bytes, strata_coll_cost_t *best_p,
                                              strata_error_t *err);

/* Message sizes (bytes, ascending, at most max) at which the selected
 * algorithm changes between lo and hi bytes, found by bisection on a log
 * scale; algos_p[i] is the algorithm chosen above sizes_p[i]. Returns how
 * many were found. */
STRATA_API size_t strata_coll_crossovers(const strata_coll_machine_t *m, strata_coll_t coll,
                                         double lo, double hi, double *sizes_p,
                                         strata_algo_t *algos_p, size_t max);

/* ==== What NCCL would pick (nccl.c) ==== */

/* NCCL's algorithms (nccl_tuner.h order: Tree, Ring, CollNetDirect,
 * CollNetChain, NVLS, NVLSTree, PAT) and protocols (LL, LL128, Simple). */
#define STRATA_NCCL_ALGOS  7
#define STRATA_NCCL_PROTOS 3

typedef struct strata_nccl_choice {
    int algo, proto;         /* indices: strata_nccl_algo_name / _proto_name */
    double model_time;       /* NCCL's own estimate, s (its tuning model) */
    double proto_eta;        /* payload share of the protocol's bytes */
    strata_coll_cost_t cost; /* strata's price of the schedule NCCL runs
                                (cost.algo) under that protocol */
    /* NVLS and NVLSTree: the graph NCCL's search would build (nccl.c): its
     * channels (one per head GPU) and per-channel NVLink (bwIntra) and
     * network (bwInter) speeds, GB/s; 0 for the other algorithms */
    double nvls_channels, nvls_intra, nvls_inter;
} strata_nccl_choice_t;

/* The (algorithm, protocol) NCCL's public tuning model (src/graph/
 * tuning.cc: per-architecture latency and bandwidth tables) picks for coll
 * of `bytes` on m, with m's derived bandwidths standing in for NCCL's
 * topology search, and strata's price of that schedule. ERR_UNSUPPORTED
 * when NCCL implements none of it here (alltoall, sendrecv, barrier). */
STRATA_API strata_status_t strata_coll_select_nccl(const strata_coll_machine_t *m,
                                                   strata_coll_t coll, double bytes,
                                                   strata_nccl_choice_t *out_p,
                                                   strata_error_t *err);
/* NCCL's estimate for one (algorithm, protocol), s; INFINITY when NCCL would
 * not run it here. */
STRATA_API double strata_nccl_model_time(const strata_coll_machine_t *m, strata_coll_t coll,
                                         int algo, int proto, double bytes);
/* Parse an NCCL release ("2.19.3", "2.27.3+cuda12.9", "v2.19.3-1", "2.21")
 * into *code_p (NCCL_VERSION_CODE; a missing patch is 0). ERR_PARSE when
 * it is not major.minor[.patch]; ERR_RANGE when it is not 2.19 or later
 * (the oldest tuning model transcribed). err names the text. */
STRATA_API strata_status_t strata_nccl_version_parse(const char *text, uint32_t *code_p,
                                                     strata_error_t *err);
/* The releases whose tuning model NCCL code `code` follows, as text
 * ("2.19-2.20", ...; "2.30+" for 0 or anything newer). Static string. */
STRATA_API const char *strata_nccl_version_model(uint32_t code);
STRATA_API const char *strata_nccl_algo_name(int algo);
STRATA_API const char *strata_nccl_proto_name(int proto);
/* Shipping libraries that implement algo ("NCCL, RCCL", ...), or NULL when
 * none does (strata's own schedule). Static strings. */
STRATA_API const char *strata_algo_libraries(strata_algo_t algo);

#ifdef __cplusplus
}
#endif
#endif /* STRATA_SCHED_H */
