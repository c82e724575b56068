/*
 * comm.c — the communicator: start-up (explicit and from the environment),
 * duplication, abort and destruction, argument checking and the dispatch of
 * every collective to the memory-semantic engine or the schedule executor.
 *
 * Dispatch. AUTO (or $STRATA_ALGO) resolves per call: intra-host the engine
 * (STRATA_COMM_SHM) is used for every size — its small, flat and pipelined
 * variants cover the range (allreduce_shm.c); RING and RECDBL run the
 * collective layer's schedules over the per-pair channels (exec.c). Every
 * call gets a comm_call_t with its deadline; errors leave a message in
 * comm->errmsg. Argument errors (STRATA_ERR_INVALID) leave the communicator
 * usable; any other failure is sticky in the segment.
 */
#define _GNU_SOURCE
#include "comm.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_S 60.0
/* Derived ports: 20000 + HMAC(token) % 12768, i.e. 20000..32767 — below
 * Linux's default ephemeral range (32768..60999), so no outgoing connection's
 * local port on the root host can hold the rendezvous port. */
#define DEFAULT_PORT_BASE 20000
#define DEFAULT_PORT_SPAN 12768u

static strata_comm_t *comm_alloc(int rank, int size, double timeout)
{
    strata_comm_t *c = util_calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->rank = rank, c->size = size;
    c->timeout = timeout > 0 ? timeout : DEFAULT_TIMEOUT_S;
    c->tp = &comm_shm_transport;
    const char *env = getenv("STRATA_ALGO");
    if (!env || !*env || strata_comm_algo_parse(env, &c->env_algo) != STRATA_OK)
        c->env_algo = STRATA_COMM_AUTO;
    c->pids = util_calloc((size_t)size, sizeof(int32_t));
    if (!c->pids) {
        util_free(c);
        return NULL;
    }
    return c;
}

void strata_comm_destroy(strata_comm_t *c)
{
    if (!c) return;
    comm_exec_free(c);
    comm_tcp_destroy(c);
    util_free(c->remote);
    comm_mem_destroy(c);
    comm_seg_unmap(c);
    if (c->pidfds)
        for (int i = 0; i < c->size; i++)
            if (c->pidfds[i] >= 0) close(c->pidfds[i]);
    util_free(c->pidfds);
    util_free(c->ch_sent);
    util_free(c->ch_recv);
    util_free(c->pids);
    util_free(c);
}

strata_status_t strata_comm_init(int rank, int size, const char *root, const char *token,
                                 double timeout_s, strata_comm_t **comm_p, strata_error_t *err)
{
    if (size < 1 || size > COMM_MAX_SIZE || rank < 0 || rank >= size)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "rank %d of size %d: need 0 <= rank < size <= %d", rank, size,
                                COMM_MAX_SIZE);
    if (!token || !*token || strlen(token) > 255)
        return strata_error_set(err, STRATA_ERR_INVALID, "the job token must be 1..255 bytes");
    if (!comm_p || timeout_s < 0)
        return strata_error_set(err, STRATA_ERR_INVALID, "invalid argument to strata_comm_init");
    strata_comm_t *c = comm_alloc(rank, size, timeout_s);
    if (!c) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    comm_job_hash(token, c->jobhash);
    strata_status_t st = comm_bootstrap(c, root, token, err);
    if (st == STRATA_OK) st = comm_local_setup(c, err);
    if (st != STRATA_OK) {
        strata_comm_destroy(c);
        return st;
    }
    *comm_p = c;
    return STRATA_OK;
}

/* ==== Environment ==== */

static const char *env_first(const char *const *names)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        if (v && *v) return v;
    }
    return NULL;
}

static int env_int(const char *const *names, long *out)
{
    const char *v = env_first(names);
    return v && util_parse_long(v, out) == 0 ? 0 : -1;
}

/* Name of the job when STRATA_TOKEN is unset: the launcher's job identity,
 * which every rank of one job sees alike, or the common parent (mpirun's
 * daemon). Not a secret: it only names the local rendezvous socket, which
 * only this user's processes can reach. */
static void job_name(char *buf, size_t len)
{
    static const char *const ids[] = {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "SLURM_JOB_ID",
                                      "PMI_KVSNAME",    "TORCHELASTIC_RUN_ID",     NULL};
    const char *id = env_first(ids);
    if (id)
        snprintf(buf, len, "job:%s:%s", id, getenv("SLURM_STEP_ID") ? getenv("SLURM_STEP_ID") : "");
    else
        snprintf(buf, len, "ppid:%ld", (long)getppid());
}

/* Whether the launcher says this job has ranks on more than one host. */
static bool job_spans_hosts(long size)
{
    static const char *const local_v[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                                          "PMIX_LOCAL_SIZE", "LOCAL_WORLD_SIZE", NULL};
    static const char *const nodes_v[] = {"SLURM_STEP_NUM_NODES", "SLURM_NNODES", NULL};
    long local, nodes;
    if (env_int(local_v, &local) == 0 && local < size) return true;
    return env_int(nodes_v, &nodes) == 0 && nodes > 1;
}

#define TOKEN_HINT                                                                                 \
    "set STRATA_TOKEN to the same secret in every rank, e.g. STRATA_TOKEN=$(od -An -N16 -tx1 "     \
    "/dev/urandom | tr -d ' \\n')"

/* Token and rendezvous address from the environment. With STRATA_TOKEN: TCP
 * at STRATA_ROOT (default: a port derived from the token by HMAC, on
 * MASTER_ADDR when torchrun set it, else on the loopback address).
 * Without: a same-host, same-user job only, over the local socket; a job
 * that names a TCP address or spans hosts is refused (no guessable secret). */
static strata_status_t env_rendezvous(long size, char token[300], char root[300],
                                      strata_error_t *err)
{
    const char *t = getenv("STRATA_TOKEN"), *r = getenv("STRATA_ROOT");
    if (t && *t) {
        snprintf(token, 300, "%s", t);
        if (r && *r) {
            snprintf(root, 300, "%s", r);
        } else {
            unsigned char m[COMM_BOOT_MAC];
            comm_boot_mac(token, COMM_BOOT_LABEL_PORT, NULL, NULL, NULL, 0, m);
            uint32_t h = (uint32_t)m[0] | (uint32_t)m[1] << 8 | (uint32_t)m[2] << 16;
            const char *ma = getenv("MASTER_ADDR");
            bool v6 = ma && strchr(ma, ':') && ma[0] != '[';
            snprintf(root, 300, v6 ? "[%s]:%u" : "%s:%u", ma && *ma ? ma : "127.0.0.1",
                     DEFAULT_PORT_BASE + h % DEFAULT_PORT_SPAN);
        }
        return STRATA_OK;
    }
    if (r && *r)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "STRATA_ROOT=%s without STRATA_TOKEN: a TCP rendezvous needs a "
                                "shared secret; " TOKEN_HINT,
                                r);
    if (job_spans_hosts(size))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "this job spans several hosts and STRATA_TOKEN is unset: ranks "
                                "on different hosts need a shared secret; " TOKEN_HINT
                                ", and STRATA_ROOT=<rank 0 host>:<port>");
    job_name(token, 300);
    snprintf(root, 300, "local");
    return STRATA_OK;
}

strata_status_t strata_comm_init_env(strata_comm_t **comm_p, strata_error_t *err)
{
    /* strata run, mpirun (Open MPI, then PMI: MPICH/Hydra), srun, torchrun */
    static const char *const rank_v[] = {
        "STRATA_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK", NULL};
    static const char *const size_v[] = {"STRATA_SIZE",  "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                         "SLURM_NTASKS", "WORLD_SIZE",           NULL};
    long rank, size;
    if (env_int(rank_v, &rank) || env_int(size_v, &size))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "rank and size not found in the environment (STRATA_RANK/"
                                "STRATA_SIZE, OMPI_COMM_WORLD_*, PMI_*, SLURM_*, RANK/WORLD_SIZE)");
    char token[300], root[300];
    strata_status_t st = env_rendezvous(size, token, root, err);
    if (st != STRATA_OK) return st;
    double timeout = 0;
    const char *to = getenv("STRATA_TIMEOUT");
    if (to && *to && (util_parse_double(to, &timeout) || timeout <= 0))
        return strata_error_set(err, STRATA_ERR_INVALID, "STRATA_TIMEOUT='%s' is not seconds > 0",
                                to);
    if (rank > INT32_MAX || size > INT32_MAX) rank = size = -1;
    return strata_comm_init((int)rank, (int)size, root, token, timeout, comm_p, err);
}

/* ==== Small accessors ==== */

int strata_comm_rank(const strata_comm_t *c)
{
    return c ? c->rank : -1;
}

int strata_comm_size(const strata_comm_t *c)
{
    return c ? c->size : 0;
}

const char *strata_comm_errmsg(const strata_comm_t *c)
{
    return c ? c->errmsg : "no communicator";
}

void strata_comm_set_timeout(strata_comm_t *c, double timeout_s)
{
    if (c && timeout_s > 0) c->timeout = timeout_s;
}

void strata_comm_abort(strata_comm_t *c)
{
    if (!c) return;
    c->aborted_local = 1;
    if (c->hdr) {
        uint64_t expect = 0, v = (uint64_t)(c->rank + 1) | (uint64_t)COMM_FAIL_ABORTED << 16;
        atomic_compare_exchange_strong(&c->hdr->failed, &expect, v);
    }
}

/* ==== Call signatures ==== */

static uint32_t count_field(uint64_t n)
{
    return n < 0x8000 ? (uint32_t)n : 0x8000u | (uint32_t)(util_hash64(&n, sizeof n, 0) & 0x7fff);
}

uint32_t comm_sig_word(const comm_sig_t *s)
{
    return (uint32_t)(s->coll & 7u) | (uint32_t)(s->dtype & 15u) << 3 |
           (uint32_t)(s->op & 7u) << 7 | (uint32_t)(s->root & 63u) << 10 |
           count_field(s->count) << 16;
}

comm_sig_t comm_sig_from_word(uint32_t w, uint64_t count)
{
    uint32_t n = w >> 16;
    return (comm_sig_t){.coll = (uint8_t)(w & 7u),
                        .dtype = (uint8_t)(w >> 3 & 15u),
                        .op = (uint8_t)(w >> 7 & 7u),
                        .root = (uint8_t)(w >> 10 & 63u),
                        .count = n < 0x8000 ? n : count};
}

void comm_sig_describe(const comm_sig_t *s, char *buf, size_t len)
{
    static const char *const names[] = {"barrier",        "allreduce", "reduce",   "broadcast",
                                        "reduce_scatter", "allgather", "alltoall", "send/recv"};
    const char *name = names[s->coll & 7u];
    const char *dt = s->dtype < STRATA_DTYPE_COUNT ? strata_dtype_name(s->dtype) : "?";
    const char *op = s->op < STRATA_OP_COUNT ? strata_op_name(s->op) : "?";
    unsigned long long n = (unsigned long long)s->count;
    switch ((comm_sig_coll_t)s->coll) {
    case COMM_SIG_BARRIER:
        snprintf(buf, len, "barrier()");
        break;
    case COMM_SIG_P2P:
        snprintf(buf, len, "send/recv(%llu bytes)", n);
        break;
    case COMM_SIG_ALLREDUCE:
    case COMM_SIG_REDUCE_SCATTER:
        snprintf(buf, len, "%s(count %llu, %s, %s)", name, n, dt, op);
        break;
    case COMM_SIG_REDUCE:
        snprintf(buf, len, "reduce(count %llu, %s, %s, root %u)", n, dt, op, s->root);
        break;
    case COMM_SIG_BROADCAST:
        snprintf(buf, len, "broadcast(count %llu, %s, root %u)", n, dt, s->root);
        break;
    default:
        snprintf(buf, len, "%s(count %llu, %s)", name, n, dt);
        break;
    }
}

/* Record this rank's arguments in the call (they travel with its data). */
static void sign(comm_call_t *k, comm_sig_coll_t coll, size_t count, strata_dtype_t dt,
                 strata_op_t op, int root)
{
    k->sig = (comm_sig_t){.coll = (uint8_t)coll,
                          .dtype = (uint8_t)dt,
                          .op = (uint8_t)op,
                          .root = (uint8_t)(root < 0 ? 0 : root),
                          .count = count};
    k->sigword = comm_sig_word(&k->sig);
}

/* ==== Calls ==== */

static strata_status_t bad(strata_comm_t *c, const char *what, const char *fmt, ...)
    STRATA_PRINTF(3, 4);
static strata_status_t bad(strata_comm_t *c, const char *what, const char *fmt, ...)
{
    char msg[STRATA_ERROR_MSG_MAX - 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(c->errmsg, sizeof(c->errmsg), "%s: %s", what, msg);
    return STRATA_ERR_INVALID;
}

/* Start a call: deadline, algorithm, and a check that the communicator is
 * still healthy. */
static strata_status_t begin(strata_comm_t *c, const char *what, const strata_call_opts_t *o,
                             comm_call_t *k)
{
    c->errmsg[0] = 0;
    k->c = c;
    k->what = what;
    k->timeout = o && o->timeout_s > 0 ? o->timeout_s : c->timeout;
    k->deadline = 0; /* set at the first slow check: no clock read on the fast path */
    k->algo = o ? o->algo : STRATA_COMM_AUTO;
    k->group = 0, k->chunks = 0;
    k->dead = 0;
    if ((unsigned)k->algo >= STRATA_COMM_ALGO_COUNT) return bad(c, what, "unknown algorithm");
    return comm_check_fast(k);
}

/* The machine the cost model prices a communicator spanning hosts on:
 * N hosts of g ranks, each host one network link. Unless one was given
 * (strata_comm_set_hosts_machine: a cluster file's, or strata probe's
 * measured shared-memory and TCP alpha/beta), assumed defaults, labelled as
 * such: inside a host a message is a flag and a copy through the segment
 * (about 1 µs, one core's copy bandwidth, ~5 GB/s); between hosts it
 * crosses two TCP stacks (α = 50 µs) over a 1 Gbit/s link; a rank reduces
 * and copies within its memory at that core's ~5 GB/s.
 *
 * Hosts that are one kernel (STRATA_TRANSPORT=tcp, network namespaces:
 * comm_kernels finds one host name and boot id) have no wire between them:
 * TCP over loopback or a veth moves each byte by two CPU copies, the
 * sender's into the socket buffer and the receiver's out of it, so the
 * link is half the copy rate (2.5 GB/s). The ranks share that kernel's
 * CPUs: `cores` is, over the kernels, the fewer of its ranks and the CPUs
 * they may use (comm_job_cpus), and when the ranks outnumber them sched's
 * cost model multiplies the data terms by ceil(P / cores) and charges each
 * step (P - cores) x lat_oversub: a rank waiting on its sockets yields,
 * then sleeps in epoll_wait, and a peer sharing its core runs after one
 * process switch, 0.7-3.1 µs by sched_yield and 1.2-5.1 µs by futex on this
 * VM (strata probe, docs/probe.md "The wait regime"): 5 µs, the top. */
#define HOSTS_DEFAULT_SRC                                                                          \
    "assumed defaults (1 us, 5 GB/s inside a host; 50 us, 1 Gbit/s between; not measured)"
#define HOSTS_KERNEL_SRC                                                                           \
    "assumed defaults (1 us, 5 GB/s inside a host; 50 us and 2 copies at 5 GB/s between "          \
    "hosts on one kernel; not measured)"
#define HOSTS_OVERSUB_S 5e-6

static strata_coll_machine_t hosts_machine(const strata_comm_t *c)
{
    if (c->hosts_set) return c->hosts_m;
    uint32_t g = c->host_group > 0 ? (uint32_t)c->host_group : 1;
    bool one_kernel = c->kernels == 1;
    return (strata_coll_machine_t){.nranks = (uint32_t)c->size,
                                   .per_server = g,
                                   .servers = (uint32_t)c->size / g,
                                   .nics = 1,
                                   .bw_intra = 5e9,
                                   .bw_nic = one_kernel ? 5e9 / 2 : 125e6,
                                   .lat_intra = 1e-6,
                                   .lat_inter = 50e-6,
                                   .eta_intra = 1,
                                   .reduce_bw = 5e9,
                                   .bw_copy = 5e9,
                                   .cores = c->cores > 0 ? (uint32_t)c->cores : 0,
                                   .lat_oversub = HOSTS_OVERSUB_S};
}

/* The schedule for a communicator spanning hosts. Allreduce: sched's cost
 * model (strata_coll_cost on hosts_machine) prices the ring, recursive
 * doubling and Rabenseifner (recursive halving + doubling) for the call's
 * size and the cheapest runs (the ring on a tie). On P ranks with one
 * message costing α + m·β between hosts, reductions at R and one rank's
 * copy at C (hosts_machine), the α-β-γ forms are (P a power of two,
 * L = log2 P):
 *   ring          2(P-1) α + 2(P-1)/P S β,  γ = (P-1)/P S / R;
 *   recdbl        L α + L S β + S / C,       γ = L S / R;
 *   rabenseifner  2L α + 2(P-1)/P S β + S / C, γ = (P-1)/P S / R;
 * time = α-terms + max(β-terms, γ). The S / C is the copy both others
 * make first (they work in the output buffer; the ring reduces straight
 * from the input). On the defaults for hosts apart (α = 50 µs, β = 8 ns/B,
 * C = R = 5 GB/s) at P = 4: recdbl 100 µs + 16.2 ns/B·S, rabenseifner
 * 200 µs + 12.2 ns/B·S, ring 300 µs + 12 ns/B·S: recursive doubling up to
 * 25,000 B, Rabenseifner to 500,000 B, the ring above. Hosts on one kernel
 * (β = 2 / C = 0.4 ns/B): recdbl 100 µs + 1.0 ns/B·S, rabenseifner
 * 200 µs + 0.8, ring 300 µs + 0.6, Rabenseifner their mean, so recursive
 * doubling up to 500,000 B and the ring above; with the 4 ranks on 2 CPUs
 * (data × 2, each step 2 × 5 µs more) the switch is at 300,000 B. At P = 2
 * Rabenseifner is the ring plus the copy, and the ring beats recursive
 * doubling above S = α·C = 250,000 B (one α more against the copy).
 * Measured on loopback TCP (bench/README.md "TCP, session 9" and "TCP,
 * session 10"). Allgather: recursive doubling
 * up to 64 KiB at P >= 4 and always at P = 2, else the ring (allgather
 * copies its own block whichever runs). The others run on the ring
 * (alltoall on pairwise exchange, see comm_exec_algo). STRATA_ALGO or the
 * call's algo overrides. */
static strata_comm_algo_t cross_algo(const strata_comm_t *c, strata_coll_t coll, size_t bytes)
{
    if (coll == STRATA_COLL_ALLGATHER)
        return c->size == 2 || bytes <= 65536 ? STRATA_COMM_RECDBL : STRATA_COMM_RING;
    if (coll != STRATA_COLL_ALLREDUCE) return STRATA_COMM_RING;
    static const struct {
        strata_algo_t sched;
        strata_comm_algo_t comm;
    } cand[] = {{STRATA_ALGO_RING, STRATA_COMM_RING},
                {STRATA_ALGO_RECDBL, STRATA_COMM_RECDBL},
                {STRATA_ALGO_RABENSEIFNER, STRATA_COMM_RABENSEIFNER}};
    strata_coll_machine_t m = hosts_machine(c);
    strata_comm_algo_t best = STRATA_COMM_RING;
    double t_best = 0;
    for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
        strata_coll_cost_t k;
        if (strata_coll_cost(&m, coll, cand[i].sched, (double)bytes, &k, NULL) != STRATA_OK)
            continue;
        if (best == STRATA_COMM_RING && i == 0)
            t_best = k.time;
        else if (k.time < t_best)
            best = cand[i].comm, t_best = k.time;
    }
    return best;
}

strata_comm_algo_t strata_comm_algo_for(const strata_comm_t *c, strata_coll_t coll, size_t bytes,
                                        strata_comm_algo_t requested)
{
    strata_comm_algo_t a = requested != STRATA_COMM_AUTO          ? requested
                           : c && c->env_algo != STRATA_COMM_AUTO ? c->env_algo
                                                                  : STRATA_COMM_SHM;
    /* Across hosts the memory-semantic engine cannot run (no segment
     * spans them): the collective layer's schedules over TCP do. */
    if (a == STRATA_COMM_SHM && c && c->remote) a = cross_algo(c, coll, bytes);
    return a;
}

static strata_status_t check_types(strata_comm_t *c, const char *what, strata_dtype_t dt,
                                   strata_op_t op, size_t count, const void *buf)
{
    if ((unsigned)dt >= STRATA_DTYPE_COUNT) return bad(c, what, "unknown data type %d", (int)dt);
    if ((unsigned)op >= STRATA_OP_COUNT) return bad(c, what, "unknown operator %d", (int)op);
    if (count > SIZE_MAX / 8 / (size_t)c->size) return bad(c, what, "count %zu too large", count);
    if (count > 0 && !buf) return bad(c, what, "NULL buffer");
    return STRATA_OK;
}

static bool in_place(const void *send, const void *recv)
{
    return send == STRATA_IN_PLACE || send == recv;
}

const char *strata_comm_hosts_machine(const strata_comm_t *c, strata_coll_machine_t *m_p)
{
    if (!c) return "";
    if (m_p) *m_p = hosts_machine(c);
    return c->hosts_set ? c->hosts_src : c->kernels == 1 ? HOSTS_KERNEL_SRC : HOSTS_DEFAULT_SRC;
}

strata_status_t strata_comm_set_hosts_machine(strata_comm_t *c, const strata_coll_machine_t *m,
                                              const char *source)
{
    if (!c || !m) return STRATA_ERR_INVALID;
    /* rank 0's machine, so that every rank makes the same choice */
    strata_coll_machine_t mm = *m;
    char src[sizeof(c->hosts_src)] = "";
    snprintf(src, sizeof src, "%s", source ? source : "given");
    strata_status_t st = strata_comm_broadcast(c, &mm, sizeof mm, STRATA_UINT8, 0, NULL);
    if (st == STRATA_OK) st = strata_comm_broadcast(c, src, sizeof src, STRATA_UINT8, 0, NULL);
    if (st != STRATA_OK) return st;
    src[sizeof src - 1] = 0;
    int g = c->host_group;
    if (mm.nranks == 0) { /* comm's shape */
        strata_coll_machine_t d = hosts_machine(c);
        mm.nranks = d.nranks, mm.per_server = d.per_server, mm.servers = d.servers;
    }
    if (c->remote && g > 1 &&
        (mm.nranks != (uint32_t)c->size || mm.per_server != (uint32_t)g ||
         mm.servers != (uint32_t)(c->size / g)))
        return bad(c, "set_hosts_machine",
                   "the machine has %u ranks = %u servers x %u, this communicator %d = %d hosts x "
                   "%d",
                   mm.nranks, mm.servers, mm.per_server, c->size, c->size / g, g);
    c->hosts_m = mm;
    memcpy(c->hosts_src, src, sizeof src);
    c->hosts_set = true;
    return STRATA_OK;
}

strata_algo_t strata_comm_cross_choice(const strata_coll_machine_t *m, strata_coll_t coll,
                                       strata_algo_t flat, double bytes, strata_coll_cost_t *cost_p)
{
    strata_coll_cost_t f, h;
    bool fok = strata_coll_cost(m, coll, flat, bytes, &f, NULL) == STRATA_OK;
    if (strata_coll_cost(m, coll, STRATA_ALGO_HIER, bytes, &h, NULL) == STRATA_OK &&
        (!fok || h.time <= f.time)) {
        if (cost_p) *cost_p = h;
        return STRATA_ALGO_HIER;
    }
    if (cost_p) *cost_p = fok ? f : (strata_coll_cost_t){.coll = coll, .algo = flat};
    return flat;
}

/* The collective layer's algorithm for a message-passing call (and, for
 * the two-level one, k->group and k->chunks). Alltoall has neither a ring
 * nor a recursive-doubling schedule: it runs on pairwise exchange (each
 * rank sends block q straight to rank q). Across hosts that each hold
 * g > 1 consecutive ranks, when the choice is strata's (auto or shm), sched's
 * cost model (strata_coll_cost, on hosts_machine) decides between the flat
 * schedule and the two-level one (sched's HIER: a stage over shared memory
 * inside each host, a stage between the ranks of one local index across
 * hosts — rail-style, every rank's TCP streams carry 1/g — e.g. for
 * allreduce ring reduce-scatter inside, ring allreduce of each 1/g block
 * across, ring allgather inside: each host's link carries 2(N-1)/N·S
 * against the flat ring's 2(P-1)/P·S, in fewer TCP phases), and the
 * two-level schedule runs with the chunk count the model chose (and wins a
 * tie: every message across hosts then joins ranks of one local index). The flat
 * ring is priced as the model's ring over these servers (g channels
 * sharing the host's one link: the same bytes and phases per link as one
 * ring over all ranks); strata_comm_cross_choice is the choice. */
strata_algo_t comm_exec_algo(comm_call_t *k, strata_coll_t coll, size_t bytes)
{
    strata_comm_t *c = k->c;
    strata_comm_algo_t req = k->algo != STRATA_COMM_AUTO ? k->algo : c->env_algo;
    strata_comm_algo_t a = strata_comm_algo_for(c, coll, bytes, k->algo);
    strata_algo_t flat = coll == STRATA_COLL_ALLTOALL    ? STRATA_ALGO_PAIRWISE
                         : a == STRATA_COMM_RECDBL       ? STRATA_ALGO_RECDBL
                         : coll == STRATA_COLL_BARRIER   ? STRATA_ALGO_RECDBL
                         : a == STRATA_COMM_RABENSEIFNER ? STRATA_ALGO_RABENSEIFNER
                                                         : STRATA_ALGO_RING;
    /* recursive doubling and Rabenseifner have no broadcast (nor every
     * other operation): the ring runs those, as documented, rather than a
     * call failing for an algorithm that was asked for every operation at
     * once */
    if (flat == STRATA_ALGO_RECDBL || flat == STRATA_ALGO_RABENSEIFNER) {
        strata_sched_params_t p = {
            .coll = coll, .algo = flat, .nranks = (uint32_t)c->size, .elem_size = 1};
        if (strata_sched_check(&p, NULL) == STRATA_ERR_UNSUPPORTED) flat = STRATA_ALGO_RING;
    }
    k->group = 0, k->chunks = 0;
    int g = c->host_group;
    if ((req == STRATA_COMM_AUTO || req == STRATA_COMM_SHM) && c->remote && g > 1 &&
        c->size / g > 1) {
        strata_coll_machine_t m = hosts_machine(c);
        strata_coll_cost_t h;
        if (strata_comm_cross_choice(&m, coll, flat, (double)bytes, &h) == STRATA_ALGO_HIER) {
            k->group = (uint32_t)g;
            k->chunks = h.chunks;
            return STRATA_ALGO_HIER;
        }
    }
    return flat;
}

strata_algo_t strata_comm_schedule_for(const strata_comm_t *c, strata_coll_t coll, size_t bytes,
                                       strata_comm_algo_t requested)
{
    if (!c || strata_comm_algo_for(c, coll, bytes, requested) == STRATA_COMM_SHM)
        return STRATA_ALGO_DIRECT;
    comm_call_t k = {.c = (strata_comm_t *)c, .algo = requested};
    return comm_exec_algo(&k, coll, bytes);
}

/* Run coll either on the engine (fn) or through the schedule executor. */
#define DISPATCH(k, coll, bytes, engine_call, src, dst, count, dt, op, root)                       \
    (strata_comm_algo_for((k)->c, coll, bytes, (k)->algo) == STRATA_COMM_SHM                       \
         ? (engine_call)                                                                           \
         : comm_exec(k, coll, comm_exec_algo(k, coll, bytes), src, dst, count, dt, op, root))

/* strata_comm_allreduce; `alone`: a one-rank communicator's call runs the
 * engine too (comm_alone_allreduce) instead of returning a copy. */
static strata_status_t allreduce_call(strata_comm_t *c, const void *sendbuf, void *recvbuf,
                                      size_t count, strata_dtype_t dt, strata_op_t op,
                                      const strata_call_opts_t *opts, bool alone)
{
    comm_call_t k;
    if (!c) return STRATA_ERR_INVALID;
    strata_status_t st = begin(c, "allreduce", opts, &k);
    if (st == STRATA_OK) st = check_types(c, k.what, dt, op, count, recvbuf);
    if (st != STRATA_OK || count == 0) return st;
    const void *src = in_place(sendbuf, recvbuf) ? recvbuf : sendbuf;
    if (!src) return bad(c, k.what, "NULL send buffer");
    size_t bytes = count * strata_dtype_size(dt);
    if (c->size == 1 && !alone) return memmove(recvbuf, src, bytes), STRATA_OK;
    sign(&k, COMM_SIG_ALLREDUCE, count, dt, op, -1);
    return DISPATCH(&k, STRATA_COLL_ALLREDUCE, bytes,
                    comm_shm_allreduce(&k, src, recvbuf, count, dt, op, -1), src, recvbuf, count,
                    dt, op, -1);
}

strata_status_t strata_comm_allreduce(strata_comm_t *c, const void *sendbuf, void *recvbuf,
                                      size_t count, strata_dtype_t dt, strata_op_t op,
                                      const strata_call_opts_t *opts)
{
    return allreduce_call(c, sendbuf, recvbuf, count, dt, op, opts, false);
}

strata_status_t strata_comm_reduce(strata_comm_t *c, const void *sendbuf, void *recvbuf,
                                   size_t count, strata_dtype_t dt, strata_op_t op, int root,
                                   const strata_call_opts_t *opts)
{
    comm_call_t k;
    if (!c) return STRATA_ERR_INVALID;
    strata_status_t st = begin(c, "reduce", opts, &k);
    if (st != STRATA_OK) return st;
    if (root < 0 || root >= c->size) return bad(c, k.what, "root %d out of range", root);
    bool me = c->rank == root;
    st = check_types(c, k.what, dt, op, count, me ? recvbuf : (const void *)sendbuf);
    if (st != STRATA_OK || count == 0) return st;
    if (sendbuf == STRATA_IN_PLACE && !me) return bad(c, k.what, "in place is for the root only");
    const void *src = me && in_place(sendbuf, recvbuf) ? recvbuf : sendbuf;
    size_t bytes = count * strata_dtype_size(dt);
    if (c->size == 1) return memmove(recvbuf, src, bytes), STRATA_OK;
    sign(&k, COMM_SIG_REDUCE, count, dt, op, root);
    return DISPATCH(&k, STRATA_COLL_REDUCE, bytes,
                    comm_shm_allreduce(&k, src, recvbuf, count, dt, op, root), src, recvbuf, count,
                    dt, op, root);
}

strata_status_t strata_comm_reduce_scatter(strata_comm_t *c, const void *sendbuf, void *recvbuf,
                                           size_t count, strata_dtype_t dt, strata_op_t op,
                                           const strata_call_opts_t *opts)
{
    comm_call_t k;
    if (!c) return STRATA_ERR_INVALID;
    strata_status_t st = begin(c, "reduce_scatter", opts, &k);
    if (st == STRATA_OK) st = check_types(c, k.what, dt, op, count, recvbuf);
    if (st != STRATA_OK || count == 0) return st;
    const void *src = in_place(sendbuf, recvbuf) ? recvbuf : sendbuf;
    size_t bytes = count * strata_dtype_size(dt);
    if (c->size == 1) return memmove(recvbuf, src, bytes), STRATA_OK;
    sign(&k, COMM_SIG_REDUCE_SCATTER, count, dt, op, -1);
    return DISPATCH(&k, STRATA_COLL_REDUCE_SCATTER, bytes * (size_t)c->size,
                    comm_shm_reduce_scatter(&k, src, recvbuf, count, dt, op), src, recvbuf, count,
                    dt, op, -1);
}

strata_status_t strata_comm_allgather(strata_comm_t *c, const void *sendbuf, void *recvbuf,
                                      size_t count, strata_dtype_t dt,
                                      const strata_call_opts_t *opts)
{
    comm_call_t k;
    if (!c) return STRATA_ERR_INVALID;
    strata_status_t st = begin(c, "allgather", opts, &k);
    if (st == STRATA_OK) st = check_types(c, k.what, dt, STRATA_SUM, count, recvbuf);
    if (st != STRATA_OK || count == 0) return st;
    size_t bytes = count * strata_dtype_size(dt);
    const void *src =
        sendbuf == STRATA_IN_PLACE ? (unsigned char *)recvbuf + (size_t)c->rank * bytes : sendbuf;
    if (c->size == 1) return memmove(recvbuf, src, bytes), STRATA_OK;
    sign(&k, COMM_SIG_ALLGATHER, count, dt, STRATA_SUM, -1);
    return DISPATCH(&k, STRATA_COLL_ALLGATHER, bytes * (size_t)c->size,
                    comm_shm_allgather(&k, src, recvbuf, bytes), src, recvbuf, count, dt,
                    STRATA_SUM, -1);
}

strata_status_t strata_comm_alltoall(strata_comm_t *c, const void *sendbuf, void *recvbuf,
                                     size_t count, strata_dtype_t dt,
                                     const strata_call_opts_t *opts)
{
    comm_call_t k;
    if (!c) return STRATA_ERR_INVALID;
    strata_status_t st = begin(c, "alltoall", opts, &k);
    if (st == STRATA_OK) st = check_types(c, k.what, dt, STRATA_SUM, count, recvbuf);
    if (st != STRATA_OK || count == 0) return st;
    size_t bytes = count * strata_dtype_size(dt);
    const void *src = in_place(sendbuf, recvbuf) ? recvbuf : sendbuf;
    if (c->size == 1) return memmove(recvbuf, src, bytes), STRATA_OK;
    sign(&k, COMM_SIG_ALLTOALL, count, dt, STRATA_SUM, -1);
    return DISPATCH(&k, STRATA_COLL_ALLTOALL, bytes * (size_t)c->size,
                    comm_shm_alltoall(&k, src, recvbuf, bytes), src, recvbuf, count, dt, STRATA_SUM,
                    -1);
}

strata_status_t strata_comm_broadcast(strata_comm_t *c, void *buf, size_t count, strata_dtype_t dt,
                                      int root, const strata_call_opts_t *opts)
{
    comm_call_t k;
    if (!c) return STRATA_ERR_INVALID;
    strata_status_t st = begin(c, "broadcast", opts, &k);
    if (st != STRATA_OK) return st;
    if (root < 0 || root >= c->size) return bad(c, k.what, "root %d out of range", root);
    st = check_types(c, k.what, dt, STRATA_SUM, count, buf);
    if (st != STRATA_OK || count == 0 || c->size == 1) return st;
    size_t bytes = count * strata_dtype_size(dt);
    sign(&k, COMM_SIG_BROADCAST, count, dt, STRATA_SUM, root);
    return DISPATCH(&k, STRATA_COLL_BROADCAST, bytes, comm_shm_broadcast(&k, buf, bytes, root), buf,
                    buf, count, dt, STRATA_SUM, root);
}

/* strata_comm_barrier; `alone`: as allreduce_call's. */
static strata_status_t barrier_call(strata_comm_t *c, const strata_call_opts_t *opts, bool alone)
{
    comm_call_t k;
    if (!c) return STRATA_ERR_INVALID;
    strata_status_t st = begin(c, "barrier", opts, &k);
    if (st != STRATA_OK || (c->size == 1 && !alone)) return st;
    sign(&k, COMM_SIG_BARRIER, 0, STRATA_INT8, STRATA_SUM, -1);
    if (c->remote) {
        /* across hosts: the two-level barrier (sched's, messages of no
         * data) where the cost model prefers it, else a one-byte
         * recursive-doubling allreduce */
        if (comm_exec_algo(&k, STRATA_COLL_BARRIER, 0) == STRATA_ALGO_HIER)
            return comm_exec(&k, STRATA_COLL_BARRIER, STRATA_ALGO_HIER, NULL, NULL, 0, STRATA_UINT8,
                             STRATA_SUM, -1);
        unsigned char one = 1, got = 0;
        return comm_exec(&k, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RECDBL, &one, &got, 1, STRATA_UINT8,
                         STRATA_SUM, -1);
    }
    return comm_shm_barrier(&k);
}

strata_status_t strata_comm_barrier(strata_comm_t *c, const strata_call_opts_t *opts)
{
    return barrier_call(c, opts, false);
}

/* ==== Timing hook: a call's own work, no peer ==== */

/* The public allreduce's and barrier's paths on a one-rank communicator,
 * through the shared-memory engine and the line slots as a call of several
 * ranks runs them, where the public calls return at once (a copy): every
 * step on the calling thread, with no peer to wait for — the waits find
 * every other rank (none) ready. strata probe times these to price what a
 * call does on its own core (src/probe/shm.c, "flat_work"). */
strata_status_t comm_alone_allreduce(strata_comm_t *c, const void *src, void *dst, size_t count,
                                     strata_dtype_t dt, strata_op_t op)
{
    if (!c || c->size != 1 || !c->lines || c->remote || (unsigned)dt >= STRATA_DTYPE_COUNT)
        return STRATA_ERR_INVALID;
    /* the line path and the flat one only (allreduce_shm.c's bound, its
     * STRATA_FLAT_MAX too): the pipeline stores its reduced slices in rank
     * 1's region, which a one-rank segment has not */
    static long flat = -2; /* read once, as the engine does: not timed with the call */
    if (flat == -2) {
        const char *env = getenv("STRATA_FLAT_MAX");
        flat = env && *env ? atol(env) : (long)STRATA_DIRECT_FLAT_MAX;
    }
    size_t bytes = count * strata_dtype_size(dt);
    if (count > SIZE_MAX / 8 || (bytes > COMM_LINE_DATA && flat >= 0 && bytes > (size_t)flat))
        return bad(c, "allreduce", "%zu B: beyond the flat path, which alone runs on one rank",
                   bytes);
    /* the engine's path or none: with $STRATA_ALGO naming a schedule the
     * public call would run the executor, which is not what is timed */
    if (strata_comm_algo_for(c, STRATA_COLL_ALLREDUCE, bytes, STRATA_COMM_AUTO) != STRATA_COMM_SHM)
        return bad(c, "allreduce", "%zu B: not on the shared-memory engine ($STRATA_ALGO)", bytes);
    return allreduce_call(c, src, dst, count, dt, op, NULL, true);
}

strata_status_t comm_alone_barrier(strata_comm_t *c)
{
    if (!c || c->size != 1 || !c->lines || c->remote) return STRATA_ERR_INVALID;
    return barrier_call(c, NULL, true);
}

static strata_status_t p2p_begin(strata_comm_t *c, const char *what, const void *buf, size_t bytes,
                                 int peer, const strata_call_opts_t *opts, comm_call_t *k)
{
    strata_status_t st = begin(c, what, opts, k);
    if (st != STRATA_OK) return st;
    if (peer < 0 || peer >= c->size || peer == c->rank)
        return bad(c, what, "peer %d is not another rank of 0..%d", peer, c->size - 1);
    if (bytes > 0 && !buf) return bad(c, what, "NULL buffer");
    sign(k, COMM_SIG_P2P, bytes, STRATA_UINT8, STRATA_SUM, -1);
    return STRATA_OK;
}

strata_status_t strata_comm_send(strata_comm_t *c, const void *buf, size_t bytes, int peer,
                                 const strata_call_opts_t *opts)
{
    comm_call_t k;
    if (!c) return STRATA_ERR_INVALID;
    strata_status_t st = p2p_begin(c, "send", buf, bytes, peer, opts, &k);
    return st != STRATA_OK ? st : comm_p2p_send(&k, peer, buf, bytes);
}

strata_status_t strata_comm_recv(strata_comm_t *c, void *buf, size_t bytes, int peer,
                                 const strata_call_opts_t *opts)
{
    comm_call_t k;
    if (!c) return STRATA_ERR_INVALID;
    strata_status_t st = p2p_begin(c, "recv", buf, bytes, peer, opts, &k);
    return st != STRATA_OK ? st : comm_p2p_recv(&k, peer, buf, bytes);
}

/* ==== Duplication ==== */

strata_status_t strata_comm_dup(strata_comm_t *c, strata_comm_t **comm_p, strata_error_t *err)
{
    if (!c || !comm_p) return strata_error_set(err, STRATA_ERR_INVALID, "NULL communicator");
    strata_comm_t *n = comm_alloc(c->rank, c->size, c->timeout);
    if (!n) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    memcpy(n->pids, c->pids, (size_t)c->size * sizeof(int32_t));
    memcpy(n->jobhash, c->jobhash, sizeof(n->jobhash));
    n->hosts_set = c->hosts_set, n->hosts_m = c->hosts_m;
    memcpy(n->hosts_src, c->hosts_src, sizeof(n->hosts_src));
    if (c->remote) { /* across hosts: segments per host and new TCP streams */
        strata_status_t st = comm_dup_cross(c, n, err);
        if (st == STRATA_OK) st = comm_local_setup(n, err);
        if (st != STRATA_OK) {
            strata_comm_destroy(n);
            return st;
        }
        *comm_p = n;
        return STRATA_OK;
    }
    /* Rank 0 names and creates the segment and broadcasts the name (empty:
     * failed); the others map it, and a barrier lets rank 0 unlink it. */
    char name[64] = "";
    strata_status_t st = STRATA_OK;
    if (c->rank == 0) {
        comm_seg_name(n, name, sizeof(name));
        st = comm_seg_create(n, name, err);
        if (st != STRATA_OK) name[0] = 0;
    }
    strata_status_t st2 = strata_comm_broadcast(c, name, sizeof(name), STRATA_UINT8, 0, NULL);
    if (st2 == STRATA_OK && name[0] && c->rank != 0) st = comm_seg_attach(n, name, err);
    if (st2 == STRATA_OK) st2 = strata_comm_barrier(c, NULL);
    if (c->rank == 0 && name[0]) shm_unlink(name);
    if (st2 != STRATA_OK)
        st = strata_error_set(err, st2, "%s", c->errmsg);
    else if (!name[0] && st == STRATA_OK)
        st = strata_error_set(err, STRATA_ERR_PEER, "rank 0 could not create the segment");
    if (st == STRATA_OK) st = comm_local_setup(n, err);
    if (st != STRATA_OK) {
        strata_comm_destroy(n);
        return st;
    }
    *comm_p = n;
    return STRATA_OK;
}
