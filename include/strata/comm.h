/*
 * strata/comm.h — the runtime: a communicator over real processes, its
 * collectives, the local launcher and the collective benchmark.
 *
 * A communicator joins `size` processes numbered 0..size-1. Rank 0 listens at
 * a rendezvous address (host:port, or "local": a unix socket in a directory
 * only this user can enter); every other rank connects there, and both sides
 * prove they know the job token (HMAC-SHA256 over nonces from both; the
 * token is never sent); ranks exchange host identity and pids. Ranks
 * sharing a host then map one POSIX shared-memory segment per communicator
 * (owned by the user, mode 0600, checked before mapping), which is unlinked
 * as soon as every rank has mapped it, so a crash leaves nothing in
 * /dev/shm. The sockets are closed after start-up: intra-host traffic goes
 * through the segment only. Ranks on different hosts (host name, boot id,
 * network namespace) each get their host's segment and talk TCP to the
 * others: authenticated streams per pair, framed and checked
 * (docs/runtime.md, "Across hosts").
 *
 * Every collective is blocking, has a deadline (the communicator default,
 * overridable per call through strata_call_opts_t), returns a typed status and
 * leaves a message readable with strata_comm_errmsg(). A dead peer is detected
 * from its pid (pidfd) while waiting, and the failure is made sticky in the
 * segment so that every surviving rank returns STRATA_ERR_PEER. After any
 * error other than STRATA_ERR_INVALID the communicator is unusable; destroy it.
 *
 * Thread safety: one thread at a time may call collectives on a communicator;
 * strata_comm_abort() may be called from any thread (or a signal handler).
 * Different communicators are independent.
 */
#ifndef STRATA_COMM_H
#define STRATA_COMM_H

#include "strata/common.h"
#include "strata/sched.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_comm strata_comm_t;

/* Element types. fp16 (IEEE binary16) and bf16 are reduced through fp32. */
typedef enum {
    STRATA_INT8,
    STRATA_UINT8,
    STRATA_INT32,
    STRATA_UINT32,
    STRATA_INT64,
    STRATA_UINT64,
    STRATA_FP16,
    STRATA_BF16,
    STRATA_FP32,
    STRATA_FP64,
    STRATA_DTYPE_COUNT
} strata_dtype_t;

/* Reduction operators. AVG is the sum divided by the communicator size (for
 * integers: truncating division of the exact sum). */
typedef enum {
    STRATA_SUM,
    STRATA_PROD,
    STRATA_MIN,
    STRATA_MAX,
    STRATA_AVG,
    STRATA_OP_COUNT
} strata_op_t;

/* How a collective is executed. AUTO picks by size; SHM is the
 * memory-semantic engine (each rank reduces its 1/P slice reading its peers'
 * data in the segment, then all gather); RING, RECDBL and RABENSEIFNER
 * execute the collective layer's schedules (strata/sched.h: the same ones
 * the simulator times) as message passing over per-pair shared-memory
 * channels (TCP between hosts). RECDBL and RABENSEIFNER implement only some
 * operations (allreduce and allgather; allreduce and reduce-scatter); the
 * others then run on the ring. STRATA_ALGO in the environment
 * (auto|shm|ring|recdbl|rabenseifner) overrides AUTO. */
typedef enum {
    STRATA_COMM_AUTO,
    STRATA_COMM_SHM,
    STRATA_COMM_RING,
    STRATA_COMM_RECDBL,
    STRATA_COMM_RABENSEIFNER,
    STRATA_COMM_ALGO_COUNT
} strata_comm_algo_t;

/* Pass as the send buffer for an in-place collective (like MPI_IN_PLACE):
 * allreduce/reduce/broadcast: data in recvbuf; reduce-scatter: the full input
 * (count*size elements) in recvbuf, result in its first count elements;
 * allgather: this rank's block already at recvbuf + rank*count; alltoall: the
 * blocks to send in recvbuf, replaced by the blocks received. Passing
 * sendbuf == recvbuf means the same for allreduce, reduce and reduce-scatter. */
#define STRATA_IN_PLACE ((const void *)1)

/* Per-call options; NULL means defaults. */
typedef struct strata_call_opts {
    double timeout_s;        /* > 0: deadline of this call; 0: communicator default */
    strata_comm_algo_t algo; /* AUTO: by size (or $STRATA_ALGO) */
} strata_call_opts_t;

/* ==== Life cycle ==== */

/* Join a communicator with explicit parameters. root is "host:port" (rank 0
 * listens there, IPv4 or a resolvable name; token must then be a secret
 * shared by the ranks only) or "local" (same host and user only: a unix
 * socket named after the token in $XDG_RUNTIME_DIR/strata or
 * /tmp/strata-<uid>; the token need not be secret), token any non-empty
 * string up to 255 bytes, timeout_s the default deadline of every call, also
 * used for start-up (0: 60 s). On success *comm_p owns the communicator.
 * Errors: STRATA_ERR_INVALID (bad arguments), STRATA_ERR_TIMEOUT (a rank did
 * not arrive), STRATA_ERR_PEER (a peer could not prove the token, or exited
 * before joining), STRATA_ERR_SYSTEM, STRATA_ERR_UNSUPPORTED (ranks on
 * different hosts meeting at a "local" rendezvous). */
STRATA_API strata_status_t strata_comm_init(int rank, int size, const char *root, const char *token,
                                            double timeout_s, strata_comm_t **comm_p,
                                            strata_error_t *err);

/* Join from the environment: rank and size from STRATA_RANK/STRATA_SIZE, else
 * OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE, SLURM_PROCID/SLURM_NTASKS,
 * RANK/WORLD_SIZE (torchrun); default deadline from STRATA_TIMEOUT (seconds,
 * default 60). With STRATA_TOKEN: rendezvous at STRATA_ROOT (default a port
 * derived from the token on MASTER_ADDR, else on the loopback address).
 * Without: the "local" rendezvous, named by the launcher's job id
 * (PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid, SLURM_JOB_ID + step,
 * PMI_KVSNAME, TORCHELASTIC_RUN_ID) or the common parent pid; STRATA_ROOT without STRATA_TOKEN,
 * or a job the launcher says spans hosts, is STRATA_ERR_INVALID with a
 * message saying how to set STRATA_TOKEN. */
STRATA_API strata_status_t strata_comm_init_env(strata_comm_t **comm_p, strata_error_t *err);

/* A new communicator over the same ranks with its own segment — one per
 * host, and its own TCP streams, when it spans hosts (collective: every
 * rank must call it; it runs over comm's collectives). */
STRATA_API strata_status_t strata_comm_dup(strata_comm_t *comm, strata_comm_t **comm_p,
                                           strata_error_t *err);

/* Leave and free; no collective synchronisation. NULL is a no-op. */
STRATA_API void strata_comm_destroy(strata_comm_t *comm);

/* Make every pending and future call on comm, in this process and in every
 * other rank sharing its segment, return STRATA_ERR_ABORTED (or
 * STRATA_ERR_PEER in the others). Async-signal-safe and thread-safe. */
STRATA_API void strata_comm_abort(strata_comm_t *comm);

STRATA_API int strata_comm_rank(const strata_comm_t *comm);
STRATA_API int strata_comm_size(const strata_comm_t *comm);
/* Message of the last failed call ("" when none). Owned by comm. */
STRATA_API const char *strata_comm_errmsg(const strata_comm_t *comm);
/* Change the default deadline (seconds > 0). */
STRATA_API void strata_comm_set_timeout(strata_comm_t *comm, double timeout_s);

/* ==== Registered buffers ====
 *
 * Memory every rank of comm on this host maps (NCCL's ncclMemAlloc, on
 * shared memory). When every rank's send and receive buffers of a large
 * allreduce lie in such memory (each inside one allocation; in place
 * allowed), the engine reduces straight from the peers' send buffers and
 * writes straight into their receive buffers: no staging copy (2 ranks:
 * each reads and writes the vector once). Ranks decide together in the
 * call's first handshake; if any rank's buffers are not registered, the
 * call stages as usual, with the same result (docs/runtime.md).
 *
 * strata_comm_mem_alloc: local (not collective); *ptr_p gets `bytes` of
 * page-aligned memory, zero-filled, valid until strata_comm_mem_free or
 * strata_comm_destroy. Each rank's pool holds STRATA_MEM_MAX bytes
 * (default 4 GiB of address space; memory is taken only by allocations).
 * Errors (the communicator stays usable; message in strata_comm_errmsg):
 * STRATA_ERR_INVALID (0 bytes), STRATA_ERR_RANGE (no room in the pool),
 * STRATA_ERR_NOMEM (/dev/shm full), STRATA_ERR_SYSTEM.
 * strata_comm_mem_free: ptr must be what mem_alloc returned on this
 * communicator (else STRATA_ERR_INVALID); NULL is a no-op. Not collective:
 * once this rank's calls on a buffer have returned, no peer touches it.
 * Neither may run while another thread calls a collective on comm. */
STRATA_API strata_status_t strata_comm_mem_alloc(strata_comm_t *comm, size_t bytes, void **ptr_p);
STRATA_API strata_status_t strata_comm_mem_free(strata_comm_t *comm, void *ptr);

/* ==== Collectives (blocking; every rank calls with matching arguments) ====
 *
 * Every call returns within its deadline (opts->timeout_s, else the
 * communicator's): STRATA_ERR_TIMEOUT, STRATA_ERR_PEER (a rank died or
 * aborted), STRATA_ERR_ABORTED (this rank aborted). Ranks that call with a
 * different collective, root, operator, count or type get
 * STRATA_ERR_MISMATCH, the message naming both calls (a rank that only sends
 * in the call, such as a broadcast root on the ring schedule, may return OK
 * and get it from its next call); the communicator is then failed. */

STRATA_API strata_status_t strata_comm_allreduce(strata_comm_t *comm, const void *sendbuf,
                                                 void *recvbuf, size_t count, strata_dtype_t dt,
                                                 strata_op_t op, const strata_call_opts_t *opts);
/* Each rank receives count elements: block `rank` of the reduced count*size. */
STRATA_API strata_status_t strata_comm_reduce_scatter(strata_comm_t *comm, const void *sendbuf,
                                                      void *recvbuf, size_t count,
                                                      strata_dtype_t dt, strata_op_t op,
                                                      const strata_call_opts_t *opts);
/* recvbuf receives count*size elements, block r from rank r. */
STRATA_API strata_status_t strata_comm_allgather(strata_comm_t *comm, const void *sendbuf,
                                                 void *recvbuf, size_t count, strata_dtype_t dt,
                                                 const strata_call_opts_t *opts);
/* buf holds count elements: read at root, written elsewhere. */
STRATA_API strata_status_t strata_comm_broadcast(strata_comm_t *comm, void *buf, size_t count,
                                                 strata_dtype_t dt, int root,
                                                 const strata_call_opts_t *opts);
/* recvbuf is written at root only (may be NULL elsewhere). */
STRATA_API strata_status_t strata_comm_reduce(strata_comm_t *comm, const void *sendbuf,
                                              void *recvbuf, size_t count, strata_dtype_t dt,
                                              strata_op_t op, int root,
                                              const strata_call_opts_t *opts);
/* count elements per destination: block q of sendbuf goes to rank q, block q
 * of recvbuf comes from rank q. */
STRATA_API strata_status_t strata_comm_alltoall(strata_comm_t *comm, const void *sendbuf,
                                                void *recvbuf, size_t count, strata_dtype_t dt,
                                                const strata_call_opts_t *opts);
STRATA_API strata_status_t strata_comm_barrier(strata_comm_t *comm, const strata_call_opts_t *opts);
/* Point-to-point, ordered per (sender, receiver) pair; the receiver must ask
 * for exactly the number of bytes sent (else STRATA_ERR_PROTOCOL). */
STRATA_API strata_status_t strata_comm_send(strata_comm_t *comm, const void *buf, size_t bytes,
                                            int peer, const strata_call_opts_t *opts);
STRATA_API strata_status_t strata_comm_recv(strata_comm_t *comm, void *buf, size_t bytes, int peer,
                                            const strata_call_opts_t *opts);

/* ==== Names ==== */

STRATA_API size_t strata_dtype_size(strata_dtype_t dt);
STRATA_API const char *strata_dtype_name(strata_dtype_t dt); /* nccl-tests names: "float" … */
/* Accepts nccl-tests names and ours: int8 uint8 int32 uint32 int64 uint64
 * half/fp16 bfloat16/bf16 float/fp32 double/fp64. */
STRATA_API strata_status_t strata_dtype_parse(const char *name, strata_dtype_t *dt_p);
STRATA_API const char *strata_op_name(strata_op_t op);
STRATA_API strata_status_t strata_op_parse(const char *name, strata_op_t *op_p);
STRATA_API const char *strata_comm_algo_name(strata_comm_algo_t algo);
STRATA_API strata_status_t strata_comm_algo_parse(const char *name, strata_comm_algo_t *algo_p);

/* Element i of a typed buffer as a double, and the reverse (integers are
 * truncated toward zero and wrapped to the type's width; halves rounded to
 * nearest even; buf need not be aligned to the type). For tests, checks and
 * benchmarks, not for bulk data. */
STRATA_API double strata_dtype_get(strata_dtype_t dt, const void *buf, size_t i);
STRATA_API void strata_dtype_set(strata_dtype_t dt, void *buf, size_t i, double v);

/* Convert between fp32 and fp16/bf16 (round to nearest even). */
STRATA_API uint16_t strata_fp32_to_fp16(float f);
STRATA_API float strata_fp16_to_fp32(uint16_t h);
STRATA_API uint16_t strata_fp32_to_bf16(float f);
STRATA_API float strata_bf16_to_fp32(uint16_t h);

/* ==== Quick figures of this host ==== */

/* Local figures measured by strata_comm_calibrate(): one-way flag latency
 * through the segment (alpha, s), single-core copy bandwidth for a buffer of
 * the benchmark's largest size (bytes/s), and reduction bandwidth. strata
 * bench predicts from them (strata_probe_calib_quick) when no file of
 * strata probe is given; the model is sched's (strata_coll_cost). */
typedef struct strata_comm_model {
    double alpha_s;
    double copy_bw;
    double reduce_bw;
} strata_comm_model_t;

/* Collective over comm: measures a flag ping-pong between ranks 0 and 1 and
 * each rank's memcpy and reduce bandwidth on bytes-sized buffers; every rank
 * gets rank 0's figures. */
STRATA_API strata_status_t strata_comm_calibrate(strata_comm_t *comm, size_t bytes,
                                                 strata_comm_model_t *model_p);

/* The algorithm AUTO resolves to for this call on comm. */
STRATA_API strata_comm_algo_t strata_comm_algo_for(const strata_comm_t *comm, strata_coll_t coll,
                                                   size_t bytes, strata_comm_algo_t requested);

/* ==== The choice across hosts ==== */

/* Across hosts that each hold g > 1 consecutive ranks, strata chooses per
 * call between the flat schedule (ring, recursive doubling, pairwise) and
 * the two-level one (sched's HIER: shared memory inside each host, TCP
 * between the ranks of one local index) with this function: HIER where it
 * applies to m and costs no more than `flat` (a tie goes to HIER), else
 * flat; *cost_p (may be NULL) gets the chosen one's price. `bytes` as
 * strata_coll_cost's. strata bench --model CLUSTER prices with it too. */
STRATA_API strata_algo_t strata_comm_cross_choice(const strata_coll_machine_t *m,
                                                  strata_coll_t coll, strata_algo_t flat,
                                                  double bytes, strata_coll_cost_t *cost_p);

/* The machine comm's choice prices on: N hosts x g ranks, one link each
 * host. Given here (a cluster file's strata_coll_machine_from_topo, or one
 * made of strata probe's measured shared-memory and TCP alpha/beta, as
 * strata bench --model FILE does), else assumed defaults, labelled as
 * such: 1 us and 5 GB/s for a message inside a host, 50 us and 1 Gbit/s
 * between hosts. Collective: every rank adopts rank 0's machine and source
 * text (so all make the same choice). m->nranks 0: comm's shape is filled
 * in; else, where comm spans hosts of g > 1 ranks, m must have its shape
 * (nranks = size, per_server = g, servers = size / g): else
 * STRATA_ERR_INVALID, and nothing changes. */
STRATA_API strata_status_t strata_comm_set_hosts_machine(strata_comm_t *comm,
                                                         const strata_coll_machine_t *m,
                                                         const char *source);

/* The machine comm's choice prices on now into *m_p (may be NULL), and
 * where its figures come from ("assumed defaults ..." or the source given). */
STRATA_API const char *strata_comm_hosts_machine(const strata_comm_t *comm,
                                                 strata_coll_machine_t *m_p);

/* The schedule comm runs for this call (DIRECT: the shared-memory engine;
 * HIER where the choice across hosts takes it). */
STRATA_API strata_algo_t strata_comm_schedule_for(const strata_comm_t *comm, strata_coll_t coll,
                                                  size_t bytes, strata_comm_algo_t requested);

/* ==== Local launcher ==== */

/* Fork n ranks of argv (execvp) with STRATA_RANK, STRATA_SIZE, STRATA_ROOT
 * (a free loopback port whose listening socket rank 0 inherits as
 * STRATA_ROOT_FD), STRATA_TOKEN (random) and STRATA_LOCAL_RANK set;
 * forward SIGINT/SIGTERM/SIGHUP to them; when one fails (non-zero exit or a
 * signal) terminate the others (SIGTERM, then SIGKILL after grace_s). Writes
 * the job's exit code to *exit_code_p: 0 when all succeeded, else the first
 * failing rank's code (128+signal for a signal). Removes any leftover
 * segment of the job from /dev/shm. Also sets STRATA_LAUNCH_FD (a socket on
 * which ranks learn of ranks that exited, so a start-up fails at once when
 * one ends before joining). Waits only for the ranks it forked (never
 * waitpid(-1)): the caller's other children stay for it to reap. The ranks
 * get SIGKILL if the calling thread dies (PR_SET_PDEATHSIG); the call blocks
 * until the job ends, so that is the caller's death. */
STRATA_API strata_status_t strata_launch(int n, char *const argv[], double grace_s,
                                         int *exit_code_p, strata_error_t *err);

/* As strata_launch, but each forked rank calls fn(arg) with the environment
 * set and exits with its return value (no exec). */
STRATA_API strata_status_t strata_launch_fn(int n, int (*fn)(void *arg), void *arg, double grace_s,
                                            int *exit_code_p, strata_error_t *err);

#ifdef __cplusplus
}
#endif
#endif /* STRATA_COMM_H */
