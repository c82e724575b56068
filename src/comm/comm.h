/*
 * comm.h — internals of the runtime module: the communicator record, the
 * layout of the shared-memory segment, the transport table, bounded waiting,
 * reductions and copies.
 *
 * Design. A communicator is a rank, a size, a default deadline, the peers'
 * pids (watched through pidfds) and one transport. The only transport today is
 * shm (one segment per communicator and host); it is reached through
 * comm_transport_t, a table of functions, so a TCP transport can slot in for
 * peers on other hosts. Collectives are executed either by the shm
 * memory-semantic engine (allreduce_shm.c: ranks read each other's staged
 * data in the segment) or by the schedule executor (exec.c: message passing
 * over per-pair channels, following the collective layer's schedules).
 *
 * Synchronisation is by single-writer counters, each in its own cache line,
 * that only grow (epochs): a waiter compares against the value it expects, so
 * nothing is ever reset and no extra barrier is needed between calls.
 */
#ifndef STRATA_COMM_INTERNAL_H
#define STRATA_COMM_INTERNAL_H

#include "strata/comm.h"
#include "util.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COMM_LINE 64
/* Ranks per communicator (per-pair channels grow as size^2). */
#define COMM_MAX_SIZE 64

/* ==== Segment layout ==== */

/* Engine staging: per rank, COMM_DEPTH slots of COMM_REGION bytes. A chunk
 * of the vector is split into size slices, slice q staged at q*cap inside a
 * region; 3-deep so a rank can stage chunk c+1 while peers still read c
 * (the prototype's depth, issue #6). */
#define COMM_DEPTH  3
#define COMM_REGION (1024u * 1024u)
/* Per-pair channels for message passing: COMM_CH_SLOTS slots of
 * COMM_CH_BYTES payload each. */
#define COMM_CH_SLOTS 4
#define COMM_CH_BYTES (64u * 1024u)
/* Bytes of payload that fit beside the sequence number in one line. */
#define COMM_LINE_DATA 56

typedef struct comm_line {
    _Atomic uint64_t v;
    char pad[COMM_LINE - sizeof(uint64_t)];
} comm_line_t;

/* One rank's small-message slot: sequence number beside the data. */
typedef struct comm_small {
    _Atomic uint64_t seq;
    unsigned char data[COMM_LINE_DATA];
} comm_small_t;

/* One line for two words that are never busy at the same time: the
 * calibration ping-pong (strata_comm_calibrate only) and the off-CPU word
 * (CPU + 1 while this rank is inside sched_yield, else 0; a hint to waiters).
 * Sharing it keeps a rank's block at 6 lines, as before the word existed
 * (a 7th or 8th line measured 1-4% slower 2-rank 8 B allreduces). */
typedef struct comm_misc {
    _Atomic uint64_t ping;
    _Atomic uint64_t off;
    /* Written only while blocked in the schedule executor (every 64 polls):
     * (signature word << 32) | call number mod 2^32, and the call's count,
     * so that ranks waiting on each other in different collectives see it. */
    _Atomic uint64_t xcall;
    _Atomic uint64_t xcount;
    /* Sleeping waits (shm.c, "Waiting"): bit r set by rank r before it
     * sleeps until this rank posts; cleared by this rank when it wakes
     * them. Read by this rank after every post (one load of its own line). */
    _Atomic uint64_t wmask;
    /* The futex word rank r sleeps on: bumped by whoever wakes it. */
    _Atomic uint32_t bell;
    char pad[COMM_LINE - 5 * sizeof(uint64_t) - sizeof(uint32_t)];
} comm_misc_t;
_Static_assert(sizeof(comm_misc_t) == COMM_LINE, "comm_misc_t is one cache line");

/* The engine's staged word: (call signature word << 32) | (chunk sequence
 * + 1) mod 2^32, and beside it, in the same line, the call's full count
 * (read only to name it in a mismatch message). */
typedef struct comm_staged {
    _Atomic uint64_t v;
    _Atomic uint64_t count;
    /* Registered buffers (mem.c), written with an allreduce's chunk 0 of
     * the engine (the call's first handshake): pool serial + 1 (0: this
     * rank's buffers are not both registered), the pool's size and the
     * send and receive buffers' offsets in it. */
    _Atomic uint64_t reg, reg_bytes, reg_src, reg_dst;
    char pad[COMM_LINE - 6 * sizeof(uint64_t)];
} comm_staged_t;

/* Lines one rank writes (and everyone reads). The small slots' seq word is
 * (call signature word << 32) | sequence mod 2^32. */
typedef struct comm_rank_lines {
    comm_small_t small[2]; /* parity of the small-call sequence */
    comm_staged_t staged;  /* A: chunk sequence staged (copied in) + signature */
    comm_line_t reduced;   /* B: chunk sequence whose own slice is reduced */
    comm_line_t done;      /* C: chunk sequence fully consumed */
    comm_misc_t misc;      /* calibration ping-pong; off-CPU word */
} comm_rank_lines_t;

typedef struct comm_seg_header {
    uint64_t magic;
    uint32_t size;
    uint32_t version;
    uint64_t bytes;
    /* CPUs online where the segment was made (its creator's count, so that
     * every rank of the host reads the same figure: the engine's chunk
     * layout follows from it and must agree) */
    uint32_t cpus;
    uint32_t spare;
    char pad0[COMM_LINE - 32];
    /* 0: healthy; else (rank + 1) | reason << 16 of the first failure. */
    _Atomic uint64_t failed;
    char pad1[COMM_LINE - sizeof(uint64_t)];
} comm_seg_header_t;

#define COMM_SEG_MAGIC     0x5354524154415347ULL /* "STRATASG" */
#define COMM_FAIL_DIED     1u
#define COMM_FAIL_ABORTED  2u
#define COMM_FAIL_TIMEOUT  3u
#define COMM_FAIL_MISMATCH 4u

/* ==== Call signatures ==== */

/* What a rank called, compactly: carried with data that moves anyway (the
 * small slots' and the engine's staged words, the channel slots' headers),
 * so ranks that called with a different collective, root, operator, count or
 * type get STRATA_ERR_MISMATCH instead of wrong data, at no extra
 * synchronisation. */
typedef enum {
    COMM_SIG_BARRIER,
    COMM_SIG_ALLREDUCE,
    COMM_SIG_REDUCE,
    COMM_SIG_BROADCAST,
    COMM_SIG_REDUCE_SCATTER,
    COMM_SIG_ALLGATHER,
    COMM_SIG_ALLTOALL,
    COMM_SIG_P2P
} comm_sig_coll_t;

typedef struct comm_sig {
    uint8_t coll;  /* comm_sig_coll_t */
    uint8_t dtype; /* strata_dtype_t */
    uint8_t op;    /* strata_op_t (SUM where the collective has none) */
    uint8_t root;  /* 0 where the collective has none */
    uint32_t pad;
    uint64_t count; /* as passed (send/recv: bytes) */
} comm_sig_t;

/* 32-bit word: coll 3 | dtype 4 | op 3 | root 6 bits, then the count when
 * below 2^15, else 2^15 | 15 bits of its hash (a count mismatch between two
 * counts of 32 Ki or more escapes with probability 2^-15). */
uint32_t comm_sig_word(const comm_sig_t *s);
/* The signature a word encodes; count = the word's count field when it is
 * exact, else `count` (the full value published elsewhere). */
comm_sig_t comm_sig_from_word(uint32_t w, uint64_t count);
/* "allreduce(count 4, float, sum)", "broadcast(count 3, int32, root 1)". */
void comm_sig_describe(const comm_sig_t *s, char *buf, size_t len);

/* A message's tag in a channel slot: the sender's call and its number
 * (collectives on the executor count from 1; send/recv: 0). */
typedef struct comm_tag {
    comm_sig_t sig;
    uint64_t call;
} comm_tag_t;

typedef struct comm_chan_slot {
    uint64_t msg_bytes; /* total bytes of the message this slot belongs to */
    uint64_t len;       /* payload bytes in this slot */
    comm_tag_t tag;     /* the sender's call */
    char pad[COMM_LINE - 16 - sizeof(comm_tag_t)];
    unsigned char data[COMM_CH_BYTES];
} comm_chan_slot_t;

typedef struct comm_chan {
    comm_line_t head; /* slots written (sender) */
    comm_line_t tail; /* slots consumed (receiver) */
    comm_chan_slot_t slot[COMM_CH_SLOTS];
} comm_chan_t;

/* Offsets of each part in the segment, computed from size only. */
typedef struct comm_layout {
    size_t lines;   /* comm_rank_lines_t[size] */
    size_t regions; /* [size][COMM_DEPTH][COMM_REGION] */
    size_t chans;   /* comm_chan_t[size][size] (from, to) */
    size_t bytes;
} comm_layout_t;

void comm_layout_compute(int size, comm_layout_t *l);

/* ==== Communicator ==== */

typedef struct comm_transport comm_transport_t;
struct comm_wait; /* comm_wait_t, below: a transport's idle step takes one */
typedef struct comm_tcp comm_tcp_t;

/* A measured choice between two modes of one step of the allreduce engine
 * (allreduce_shm.c mode_pick, mode_learn): the calls of the current size
 * class run so far (the same count on every rank), the class (log2 of the
 * bytes), this rank's measured seconds per byte of a call in mode 0 and in
 * mode 1, each figure's mean deviation and number of calls, the mode it
 * prefers, and how many calls ran in mode 1 (tests). */
typedef struct comm_learn {
    uint64_t calls;
    int bucket;
    double cost[2], dev[2];
    unsigned n[2];
    bool mode;
    uint64_t on_calls;
} comm_learn_t;

struct strata_comm {
    int rank, size;
    double timeout;
    char errmsg[STRATA_ERROR_MSG_MAX];
    volatile sig_atomic_t aborted_local;
    /* peers */
    int32_t *pids;
    int *pidfds;
    /* segment */
    unsigned char *seg;
    size_t seg_bytes;
    comm_layout_t lay;
    comm_seg_header_t *hdr;
    comm_rank_lines_t *lines;
    const comm_transport_t *tp;
    /* epochs */
    uint64_t cseq;     /* engine chunks staged so far */
    uint64_t sseq;     /* small calls so far */
    uint64_t pseq;     /* ping-pong rounds */
    uint64_t xseq;     /* collectives run by the schedule executor */
    uint64_t *ch_sent; /* per peer: slots sent on chan (rank -> peer) */
    uint64_t *ch_recv; /* per peer: slots consumed on chan (peer -> rank) */
    /* waiting policy: polls before yielding when the awaited peer is
     * unknown (spin_limit) or appears to be on a CPU (spin_running); whether
     * peers' off-CPU words are consulted at all */
    unsigned spin_limit;
    unsigned spin_running;
    bool offcpu_hint;
    /* the host's ranks outnumber its CPUs (the segment's `cpus`): the
     * engine splits allreduce into more chunks (allreduce_shm.c) */
    bool shared_cpus;
    /* Sleeping waits: how many more blocking steps sleep at once without
     * trying sched_yield (set when a yield lasted long: a CPU hog had the
     * CPU; shm.c). */
    unsigned sleep_credit;
    strata_comm_algo_t env_algo; /* $STRATA_ALGO at start-up, AUTO if unset */
    char jobhash[17];
    unsigned dup_count;
    void *exec_cache; /* exec.c: the last schedule, materialised */
    /* ranks on other hosts (bootstrap.c): remote[r] when rank r is reached
     * over TCP; NULL when every rank shares this host */
    bool *remote;
    int nhosts;
    int host_group;       /* ranks per host when every host holds that many
                             consecutive ranks (the two-level schedules' shape), else 0 */
    int kernels;          /* distinct kernels (host name + boot id) the ranks run on */
    int cores;            /* processors the ranks run on: over the kernels, the fewer of
                             its ranks and the CPUs they may use (comm_kernels) */
    comm_tcp_t *tcp;      /* transport_tcp.c, when remote ranks exist */
    struct comm_mem *mem; /* mem.c: registered buffers, NULL until the first */
    uint64_t reg_calls;   /* allreduces run on registered buffers (tests) */
    /* Two measured choices of the allreduce engine (allreduce_shm.c
     * mode_pick): how it stages at P > 2 (mode 1: streaming stores) and how
     * it stores its output (mode 1: streaming stores). */
    comm_learn_t stage, out;
    /* the machine the choice across hosts prices on (comm.c hosts_machine):
     * given by strata_comm_set_hosts_machine, else assumed defaults */
    bool hosts_set;
    strata_coll_machine_t hosts_m;
    char hosts_src[128];
};

/* Per-call context: deadline and the collective's name for messages. */
typedef struct comm_call {
    strata_comm_t *c;
    double deadline;
    double timeout;
    const char *what;
    strata_comm_algo_t algo;
    uint32_t group;   /* schedules' ranks per node (hierarchical), 0: none */
    uint32_t chunks;  /* schedules' pipeline chunks (hierarchical), 0: one */
    comm_sig_t sig;   /* this rank's arguments */
    uint32_t sigword; /* comm_sig_word(&sig) */
    int dead;         /* rank + 1 of a peer found exited, reported at the next check */
} comm_call_t;

/* A transport moves messages between two ranks as a stream of slots
 * (ordered per sender-receiver pair). The slot interface is non-blocking so
 * one thread can progress many transfers at once (the schedule executor
 * posts every step of a phase together) and zero-copy where the transport
 * allows (shm hands out the slot in the segment itself). */
struct comm_transport {
    const char *name;
    /* A free slot towards peer and its capacity, or NULL when full. */
    void *(*send_slot)(strata_comm_t *c, int peer, size_t *cap_p);
    /* Publish the slot got from send_slot: len bytes of a message of
     * msg_bytes in all, sent by the call `tag`. */
    void (*send_commit)(strata_comm_t *c, int peer, const comm_tag_t *tag, uint64_t msg_bytes,
                        size_t len);
    /* The next filled slot from peer (its sender's tag, its message's total
     * and this slot's length), or NULL when none has arrived. */
    const void *(*recv_slot)(strata_comm_t *c, int peer, comm_tag_t *tag_p, uint64_t *msg_bytes_p,
                             size_t *len_p);
    /* Hand the slot got from recv_slot back to the sender. */
    void (*recv_release)(strata_comm_t *c, int peer);
    /* Nothing moved: wait a little for the transport (true when this may
     * have blocked, so the caller runs its deadline checks); `peers` are
     * the ranks the wait still needs (bit per rank). NULL: comm_wait_step
     * (spin, then sleep until one of them posts). */
    bool (*idle)(comm_call_t *k, struct comm_wait *w, uint64_t peers);
    /* A transport failure (a peer closed or sent garbage) as the call's
     * status and message; NULL: none. */
    strata_status_t (*status)(comm_call_t *k);
    /* Before a call returns: wait (bounded by its deadline) until what it
     * sent is out of this process (a rank may exit right after). NULL: the
     * slots are already the peer's. */
    strata_status_t (*drain)(comm_call_t *k);
    /* Optional, for peers comm_tp_direct() names: queue the len bytes at
     * data (the caller's memory) as the next slot towards peer without
     * copying them. The bytes must stay unchanged until sent(mark) is true
     * for the returned mark; 0 when no slot is free. */
    uint64_t (*send_ref)(strata_comm_t *c, int peer, const comm_tag_t *tag, uint64_t msg_bytes,
                         const void *data, size_t len);
    /* Whether every slot up to mark has left this process. */
    bool (*sent)(strata_comm_t *c, int peer, uint64_t mark);
    /* Optional: the message the next receive from peer expects (its
     * sender's tag and size) lies contiguous at dst: slots of it that
     * arrive from now on may be written straight there, and recv_slot then
     * returns their place in dst. dst NULL withdraws the offer. */
    void (*recv_into)(strata_comm_t *c, int peer, const comm_tag_t *tag, uint64_t msg_bytes,
                      void *dst);
};

extern const comm_transport_t comm_shm_transport;
/* TCP to ranks on other hosts, shared memory to the others (transport_tcp.c). */
extern const comm_transport_t comm_tcp_transport;

/* ==== TCP (transport_tcp.c) ==== */

#define COMM_TCP_HDR         48
#define COMM_TCP_FRAME       (256u * 1024u) /* payload bytes per frame */
#define COMM_TCP_MAX_STREAMS 8
#define COMM_TCP_ID          32 /* communicator id: random, from rank 0 */

/* A data frame's header, decoded. */
typedef struct comm_tcp_frame {
    uint32_t cid;
    uint64_t seq, msg_bytes;
    comm_tag_t tag;
    uint32_t len;
} comm_tcp_frame_t;
void comm_tcp_frame_build(unsigned char h[COMM_TCP_HDR], const comm_tcp_frame_t *f);
/* Validate a received header: magic, communicator cid, sequence seq, len
 * <= cap and <= msg_bytes, the call's fields in range. 0 and *f, or -1 and
 * *why. */
int comm_tcp_frame_parse(const unsigned char h[COMM_TCP_HDR], uint32_t cid, uint64_t seq,
                         size_t cap, comm_tcp_frame_t *f, const char **why);
/* A failure notice: "STRX" cid32 rank32 reason32, zeros to COMM_TCP_HDR.
 * A rank whose call failed sends it on every stream before it shuts its
 * connections, naming the rank and cause (COMM_FAIL_*) of the failure as
 * its host's failure word has them, so remote ranks report the cause, not
 * the close. The parse checks cid, rank < size, the reason's range and
 * that the rest is zeros: 0
 * and *rank, *reason, or -1 and *why. */
void comm_tcp_notice_build(unsigned char h[COMM_TCP_HDR], uint32_t cid, int rank, unsigned reason);
int comm_tcp_notice_parse(const unsigned char h[COMM_TCP_HDR], uint32_t cid, int size, int *rank,
                          unsigned *reason, const char **why);
bool comm_tcp_is_notice(const unsigned char h[COMM_TCP_HDR]);

/* An IPv4 (family 4) or IPv6 (6) address and port, as published in the
 * bootstrap. */
typedef struct comm_net_addr {
    uint32_t family;
    uint16_t port;
    uint32_t scope;
    unsigned char ip[16];
} comm_net_addr_t;
void comm_net_from_sockaddr(const void *sa, comm_net_addr_t *a);
void comm_net_describe(const comm_net_addr_t *a, char *buf, size_t len);
/* The first address of an interface chosen by spec (STRATA_IFNAME syntax:
 * prefixes, "=exact", "^avoid"), of `family` if it has one. 0 or -1. */
int comm_net_ifaddr(const char *spec, int family, comm_net_addr_t *out, strata_error_t *err);
/* Listen on a's address, any port; *a gets the port. The fd or -1. */
int comm_tcp_listen(comm_net_addr_t *a, strata_error_t *err);
/* This rank's data address (the local end of its streams, port 0) and
 * its streams per peer, for a communicator with TCP peers. 0 or -1. */
int comm_tcp_local(const strata_comm_t *c, comm_net_addr_t *a, int *nstreams_p);
/* Connect every pair on different hosts (c->remote) with nstreams streams
 * each: dial lower ranks at addrs[], accept higher ones on lfd; then make
 * comm_tcp_transport c's transport. */
strata_status_t comm_tcp_connect(strata_comm_t *c, const char *token,
                                 const unsigned char id[COMM_TCP_ID], const comm_net_addr_t *addrs,
                                 int nstreams, int lfd, double deadline, strata_error_t *err);
/* Shut every connection down (peers see the close at once); free all. */
void comm_tcp_shutdown(strata_comm_t *c);
void comm_tcp_destroy(strata_comm_t *c);
/* The socket of stream `stream` to `peer`, or -1 (tests inject faults). */
int comm_tcp_test_fd(const strata_comm_t *c, int peer, int stream);
/* The communicator number its frames carry, 0 without TCP (tests forge frames). */
uint32_t comm_tcp_test_cid(const strata_comm_t *c);

/* ==== Errors and waiting (shm.c) ==== */

/* Record a message in comm->errmsg and return status. */
strata_status_t comm_fail(comm_call_t *k, strata_status_t st, const char *fmt, ...)
    STRATA_PRINTF(3, 4);
/* Wait until *flag >= target, spinning then yielding, bounded by the call's
 * deadline, the sticky failure word and the peers' liveness. `peer` names
 * the rank awaited in messages. */
strata_status_t comm_wait_ge(comm_call_t *k, _Atomic uint64_t *flag, uint64_t target, int peer);
/* Rank `peer` called `theirs` where this rank called k->sig: record both
 * in the message, mark the communicator failed, return STRATA_ERR_MISMATCH. */
strata_status_t comm_mismatch(comm_call_t *k, int peer, const comm_sig_t *theirs);
/* Only the abort flag and the segment's failure word (no clock, no syscall). */
strata_status_t comm_check_fast(comm_call_t *k);
/* Poll once: OK, or the error that ends the call (failure/abort/deadline,
 * or the death of `peer` — of any peer when peer is -1, of none when it is
 * COMM_NO_PEER). A death is reported by the check after the one that found
 * it (the caller polls in between: a peer may post and exit at once). */
#define COMM_NO_PEER (-2)
strata_status_t comm_check(comm_call_t *k, int peer);
/* Tests only: called by comm_check just before it looks for exited peers. */
extern void (*comm_test_live_hook)(strata_comm_t *c, int peer);
/* Whether a wait runs its checks (comm_check) on this poll: every 64 polls
 * while it spins, and after every yield — on a loaded host one yield can
 * last a whole time slice (ms), and 64 of them overshot a 1 s deadline by
 * more than a second (bench/README.md, soak). A clock read (~25 ns) is
 * small beside a yield (~1.2 us). */
static inline bool comm_poll_due(unsigned *polls, bool yielded)
{
    return (++*polls & 63) == 0 || yielded;
}
/* This rank's CPU (sched_getcpu), or -1. */
int comm_this_cpu(void);
/* CPUs this process may use (0 if unknown), and pinning it to the k-th of
 * them, k modulo their count (launch.c; no-op on failure). */
int comm_cpu_count(void);
void comm_pin_cpu(int k);
/* Yield the CPU, showing it in this rank's off-CPU word meanwhile. */
void comm_yield(strata_comm_t *c);
/* Whether `peer` is inside sched_yield on this rank's CPU (*cpu, looked up
 * once when COMM_CPU_UNKNOWN): it then waits for this CPU, so spinning only
 * delays it. Inline: it runs on every poll of the small slots. */
#define COMM_CPU_UNKNOWN (-2)
static inline bool comm_peer_needs_cpu(strata_comm_t *c, int peer, int *cpu)
{
    if (!c->offcpu_hint) return false;
    uint64_t v = atomic_load_explicit(&c->lines[peer].misc.off, memory_order_relaxed);
    if (v == 0) return false;
    if (*cpu == COMM_CPU_UNKNOWN) *cpu = comm_this_cpu();
    return v == UINT64_MAX || *cpu < 0 || v == (uint64_t)*cpu + 1;
}
/* The state of one wait (a loop polling some words until they show what it
 * waits for). Start it with COMM_WAIT_INIT. */
/* A yield longer than this (s) gave the CPU to something that ran until its
 * slice ended (EEVDF's base slice is 0.75 ms and more): the next
 * COMM_SLEEP_CREDIT blocking steps sleep at once (shm.c's waits and the TCP
 * transport's). A hand-off among the job's own ranks takes microseconds
 * (bench/README.md: 1.4-4.3 us a call with 4 ranks on 1-2 cores). */
#define COMM_YIELD_SLOW   100e-6
#define COMM_SLEEP_CREDIT 256u
/* The same threshold when the host's ranks outnumber its CPUs
 * (shared_cpus): there a yield hands the CPU to a core partner of the job,
 * whose turn between two waits lasts up to a few hundred microseconds (4
 * ranks on 2 CPUs, 8 B-4 MiB: 0.3-5 % of yields took 100-300 us, about one
 * in a thousand 300-500 us; bench/README.md, issue 17 session 8), and taking
 * that for a hog put the ranks to sleep for COMM_SLEEP_CREDIT steps, each
 * woken by a futex call. Still below the 0.75 ms base slice a hog holds
 * the CPU for, so a yield beside one still counts as slow. */
#define COMM_YIELD_SLOW_SHARED 500e-6
/* While the mark holds and the host's ranks outnumber its CPUs, every
 * COMM_SLEEP_RETEST-th sleep (the credit counts sleeps; each follows a step
 * that arms it) yields once more instead,
 * and a fast yield clears the mark. There the mark is also set by a core
 * partner that was outside the library (a 4 MiB vsmpi round's first call
 * follows the MPI library's round: one slow yield per rank per round), and
 * COMM_SLEEP_CREDIT steps then outlast the round (~9 blocking steps a
 * 4 MiB call: ~29 calls): every hand-off on a core became a futex sleep
 * and wake (6.6 voluntary switches a rank-call, against 0.07 without the
 * mark; bench/README.md "s16-h17"). Beside a hog the re-test yield is slow,
 * so the mark is set again: one hog slice per 64 sleeps. */
#define COMM_SLEEP_RETEST 64u
/* Whether the blocking step a wait is about to take under the mark
 * (credit > 0: sleeps left) is a re-test yield: the 64th, 128th, ...
 * sleep since the mark was set (credit 193, 129, 65, 1 of 256). */
static inline bool comm_sleep_retest(unsigned credit, bool shared_cpus)
{
    return shared_cpus && credit > 0 && credit <= COMM_SLEEP_CREDIT &&
           (COMM_SLEEP_CREDIT - credit) % COMM_SLEEP_RETEST == COMM_SLEEP_RETEST - 1;
}

typedef struct comm_wait {
    unsigned spins;  /* pauses so far */
    unsigned polls;  /* for comm_poll_due */
    unsigned yields; /* sched_yield calls so far */
    int cpu;         /* for comm_peer_needs_cpu */
    bool armed;      /* announced to peers; `bell` is the value to sleep on */
    uint32_t bell;
} comm_wait_t;
#define COMM_WAIT_INIT                                                                             \
    {                                                                                              \
        .cpu = COMM_CPU_UNKNOWN                                                                    \
    }
/* Blocking step of a wait (shm.c): yield, or (after COMM_YIELDS yields, or
 * at once while yields are slow) announce this rank to `peers` (bit per
 * rank) and, on the next step, sleep on this rank's bell until one of them
 * posts or COMM_SLEEP_MAX s pass (never past the call's deadline). Returns
 * true: the caller runs its checks (comm_poll_due) and polls again. */
bool comm_wait_block(comm_call_t *k, comm_wait_t *w, uint64_t peers);
/* One step of a wait: block (above) if asked or once `limit` pauses are
 * spent (then forget w->cpu and return true), else pause. */
static inline bool comm_wait_step(comm_call_t *k, comm_wait_t *w, unsigned limit, bool yield_now,
                                  uint64_t peers)
{
    if (yield_now || ++w->spins >= limit) return comm_wait_block(k, w, peers);
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    return false;
}
/* A full (seq_cst) fence between a store and a later load of another word
 * (the waiter/poster hand-shake below). GCC's ThreadSanitizer does not
 * model atomic_thread_fence (-Wtsan, an error with -Werror): under it the
 * fence is a seq_cst read-modify-write of a word of this process, which
 * TSan does model and which orders the same way on x86 (a locked
 * instruction); the plain build keeps the fence. */
#if defined(__SANITIZE_THREAD__)
extern _Atomic unsigned comm_fence_word;
#define comm_fence_seq_cst() atomic_fetch_add_explicit(&comm_fence_word, 0, memory_order_seq_cst)
#else
#define comm_fence_seq_cst() atomic_thread_fence(memory_order_seq_cst)
#endif
/* After publishing a word other ranks may wait on: wake those that sleep
 * on this rank (the fast path is one load of this rank's own line). */
void comm_wake_slow(strata_comm_t *c);
static inline void comm_posted(strata_comm_t *c)
{
    /* The publishing store must be visible before wmask is read, or a
     * waiter that announced itself just then would sleep through it (the
     * waiter fences between its announcement and its last poll). Measured:
     * no cost beyond noise on the 2-rank 8 B allreduce (bench/README.md). */
    comm_fence_seq_cst();
    if (atomic_load_explicit(&c->lines[c->rank].misc.wmask, memory_order_relaxed))
        comm_wake_slow(c);
}
/* CPUs this process may run on (-1 unknown). */
long comm_cpus_allowed(void);
/* Mark the segment failed (first writer wins). */
void comm_mark_failed(strata_comm_t *c, int rank, unsigned reason);
/* A recorded failure's cause (COMM_FAIL_*) as the status a rank that meets
 * it returns, and the words after "rank R " in its message: one wording for
 * a cause read from this host's word (shm.c) and from another host's
 * failure notice (transport_tcp.c). */
strata_status_t comm_fail_cause(unsigned reason, const char **phrase);

/* Create (rank 0) / attach a segment. */
strata_status_t comm_seg_create(strata_comm_t *c, const char *name, strata_error_t *err);
strata_status_t comm_seg_attach(strata_comm_t *c, const char *name, strata_error_t *err);
void comm_seg_unmap(strata_comm_t *c);
/* A fresh segment name: /strata-<jobhash>-<pid>-<serial> (the launcher
 * removes /dev/shm/strata-<jobhash>-* after the job as a last resort). */
void comm_seg_name(const strata_comm_t *c, char *buf, size_t len);
/* Fill waiting policy, epochs and liveness handles after the segment is mapped. */
strata_status_t comm_local_setup(strata_comm_t *c, strata_error_t *err);

static inline unsigned char *comm_region(strata_comm_t *c, int rank, uint64_t seq)
{
    return c->seg + c->lay.regions +
           ((size_t)rank * COMM_DEPTH + (size_t)(seq % COMM_DEPTH)) * COMM_REGION;
}
static inline comm_chan_t *comm_chan(strata_comm_t *c, int from, int to)
{
    return (comm_chan_t *)(c->seg + c->lay.chans) + ((size_t)from * (size_t)c->size + (size_t)to);
}

/* Open a /strata-* shared-memory object only if it is this user's regular
 * file, mode 0600, of `bytes` bytes (shm.c). The fd, or -1 and err. */
int comm_shm_open_checked(const char *name, size_t bytes, strata_error_t *err);

/* ==== Registered buffers (mem.c) ==== */

/* Pool per rank and communicator when STRATA_MEM_MAX is unset: 4 GiB of
 * address space (sparse: only allocations hold memory). */
#define COMM_MEM_MAX_DEFAULT ((size_t)4 << 30)
size_t comm_mem_max(void);
/* Where a range of this rank's registered memory lies in its pool. */
typedef struct comm_mem_ref {
    uint32_t serial;
    uint64_t pool_bytes, off;
} comm_mem_ref_t;
/* Whether [p, p + bytes) lies inside one live allocation of this rank's
 * pool on c; fills *ref then. */
bool comm_mem_lookup(const strata_comm_t *c, const void *p, size_t bytes, comm_mem_ref_t *ref);
/* Rank q's pool (serial, size as it published them), mapped on first use;
 * a failure is the call's error. */
strata_status_t comm_mem_peer(comm_call_t *k, int q, uint32_t serial, uint64_t pool_bytes,
                              unsigned char **base_p);
/* Unmap the peers' pools, unmap and unlink this rank's. */
void comm_mem_destroy(strata_comm_t *c);

/* ==== Bootstrap (bootstrap.c) ==== */

typedef struct comm_peer_info {
    int32_t pid;
    char host[64];
} comm_peer_info_t;

/* Rendezvous, identity exchange and segment setup for rank/size at root. */
/* strata_comm_dup's part for a communicator spanning hosts: n (allocated,
 * pids and job hash copied) gets the host layout, its hosts' segments and
 * its own TCP streams, set up over c's collectives (bootstrap.c). */
strata_status_t comm_dup_cross(strata_comm_t *c, strata_comm_t *n, strata_error_t *err);
strata_status_t comm_bootstrap(strata_comm_t *c, const char *root, const char *token,
                               strata_error_t *err);
/* 16 hex digits naming the job in segment names: a keyed hash (HMAC) of
 * its token, which tells nothing about the token. */
void comm_job_hash(const char *token, char out[17]);

/* The bootstrap's proofs (bootstrap.c; protocol in its header comment). */
#define COMM_BOOT_NONCE         32
#define COMM_BOOT_MAC           32 /* HMAC-SHA256 */
#define COMM_BOOT_LABEL_HELLO   "strata-v2 hello"
#define COMM_BOOT_LABEL_PROOF   "strata-v2 proof"
#define COMM_BOOT_LABEL_WELCOME "strata-v2 welcome"
#define COMM_BOOT_LABEL_JOB     "strata-v2 job"
#define COMM_BOOT_LABEL_PORT    "strata-v2 port"
/* out = HMAC-SHA256(key, label NUL | na | nb | body); na, nb (COMM_BOOT_NONCE
 * bytes each) may be NULL. */
void comm_boot_mac(const char *key, const char *label, const unsigned char *na,
                   const unsigned char *nb, const void *body, size_t blen,
                   unsigned char out[COMM_BOOT_MAC]);
/* Send a status frame: magic status [msglen msg] (msg truncated to 255
 * bytes; NULL: no message part). 0, or -1 when it could not be sent by
 * deadline. */
int comm_boot_send_status(int fd, const char *magic, uint32_t status, const char *msg,
                          double deadline);
/* Host identity: hostname + boot id. */
void comm_host_id(char out[64]);
/* Over n host ids (comm_host_id): the distinct kernels and the processors
 * the ranks run on (per kernel the fewer of its ranks and its CPUs). */
void comm_kernels(char (*ids)[64], int n, int *kernels_p, int *cores_p);
/* CPUs the job may use on this kernel (shm.c). */
long comm_job_cpus(void);

/* ==== Data types and reductions (dtype.c, reduce.c) ==== */

/* out = a op b elementwise (out may alias a or b). AVG reduces as SUM. */
void comm_reduce2(void *out, const void *a, const void *b, size_t n, strata_dtype_t dt,
                  strata_op_t op);
/* out = srcs[0] op srcs[1] op … in that order (fp16/bf16 accumulated in fp32
 * and rounded once); for AVG divides by `size` at the end. nsrc >= 1. out
 * may alias srcs[0] or srcs[1] exactly (the first pass reads both before it
 * writes an element; later passes read out), no later input. */
void comm_reduce_n(void *out, const void *const *srcs, int nsrc, size_t n, strata_dtype_t dt,
                   strata_op_t op, int size);
/* comm_reduce_n, with the result also written to `copy` (not overlapping out;
 * it may be exactly one of the inputs, as the in-place allreduce passes its
 * own input: every element is read before its copy is stored, and no later
 * pass reads an earlier input) with non-temporal stores, tile by tile as the last pass
 * computes it, so that those stores overlap the reduction's loads; no store
 * fence (the caller fences once per phase, as after comm_copy_nofence). */
void comm_reduce_n_stream(void *out, void *copy, const void *const *srcs, int nsrc, size_t n,
                          strata_dtype_t dt, strata_op_t op, int size);
/* For AVG: out[i] /= size (after a SUM by other means). No-op otherwise. */
void comm_reduce_finish(void *buf, size_t n, strata_dtype_t dt, strata_op_t op, int size);

/* ==== Copies (copy.c) ==== */

/* Copy with non-temporal stores when `stream` (large outputs that will not be
 * re-read soon), else memcpy. Ends with a store fence when streaming. */
void comm_copy(void *dst, const void *src, size_t bytes, bool stream);
/* comm_copy without the store fence; a phase that streams its pieces with
 * it calls comm_stream_fence once after the last, before its flag. */
void comm_copy_nofence(void *dst, const void *src, size_t bytes, bool stream);
void comm_stream_fence(void);
/* Output size from which copies to user buffers stream (see copy.c):
 * 16 MiB, or STRATA_NT_THRESHOLD (read once). An allreduce measures its
 * choice instead (allreduce_shm.c out_mode) unless comm_stream_env(). */
size_t comm_stream_min(void);
/* Whether STRATA_NT_THRESHOLD fixes the crossover (read once). */
bool comm_stream_env(void);
/* Bytes of the last-level cache (sysfs, read once); 0 when unknown. */
size_t comm_llc_bytes(void);

/* ==== Collectives ==== */

/* Memory-semantic engine (allreduce_shm.c). */
/* The pipeline chunk (all P slices) for large vectors, at most COMM_REGION:
 * 256 KiB, or STRATA_CHUNK (read once). */
size_t comm_chunk_bytes(void);
/* The allreduce chunk when the host's ranks outnumber its CPUs:
 * STRATA_DIRECT_CHUNK_SHARED (at most COMM_REGION), or STRATA_CHUNK's. */
size_t comm_chunk_bytes_shared(void);
strata_status_t comm_shm_allreduce(comm_call_t *k, const void *src, void *dst, size_t count,
                                   strata_dtype_t dt, strata_op_t op, int root);
strata_status_t comm_shm_reduce_scatter(comm_call_t *k, const void *src, void *dst, size_t count,
                                        strata_dtype_t dt, strata_op_t op);
strata_status_t comm_shm_allgather(comm_call_t *k, const void *src, void *dst, size_t bytes);
strata_status_t comm_shm_alltoall(comm_call_t *k, const void *src, void *dst, size_t bytes);
strata_status_t comm_shm_broadcast(comm_call_t *k, void *buf, size_t bytes, int root);
strata_status_t comm_shm_barrier(comm_call_t *k);
/* One small collective through the line slots: every rank publishes
 * `bytes` <= COMM_LINE_DATA of data and receives all ranks' lines. */
strata_status_t comm_small_exchange(comm_call_t *k, const void *mine, size_t bytes,
                                    const unsigned char **lines_p);
strata_status_t comm_small_allreduce(comm_call_t *k, const void *src, void *dst, size_t count,
                                     strata_dtype_t dt, strata_op_t op, int root);

/* Timing hook (comm.c): strata_comm_allreduce's and strata_comm_barrier's
 * paths on a one-rank communicator through the engine and the line slots
 * (the public calls return a copy there); STRATA_ERR_INVALID for any other
 * communicator. strata probe times them (src/probe/shm.c). */
strata_status_t comm_alone_allreduce(strata_comm_t *c, const void *src, void *dst, size_t count,
                                     strata_dtype_t dt, strata_op_t op);
strata_status_t comm_alone_barrier(strata_comm_t *c);

/* Schedule executor (exec.c): ring and recursive doubling. */
void comm_exec_free(strata_comm_t *c);
/* Point-to-point over the transport (exec.c). */
strata_status_t comm_p2p_send(comm_call_t *k, int peer, const void *buf, size_t bytes);
strata_status_t comm_p2p_recv(comm_call_t *k, int peer, void *buf, size_t bytes);

/* Execute the collective layer's schedule for (coll, algo) on this rank:
 * count as in strata/sched.h; src may overlap dst (in place): the input is
 * then staged first. */
/* The schedule a message-passing call of coll on `bytes` (the collective's
 * whole buffer, as sched's cost model counts it) runs: sets k->group and
 * k->chunks for the two-level one (comm.c). */
strata_algo_t comm_exec_algo(comm_call_t *k, strata_coll_t coll, size_t bytes);
strata_status_t comm_exec(comm_call_t *k, strata_coll_t coll, strata_algo_t algo, const void *src,
                          void *dst, size_t count, strata_dtype_t dt, strata_op_t op, int root);

#endif
