/*
 * shm.c — the shared-memory segment of a communicator and bounded waiting.
 *
 * The segment (one per communicator and host) holds, in order: a header
 * with the sticky failure word; one block of cache lines per rank (small
 * slots, stage/reduce/done epochs, ping, off-CPU word); the engine's staging regions
 * (per rank, COMM_DEPTH × COMM_REGION bytes); the per-pair channels. Rank 0
 * creates it with shm_open(O_EXCL, 0600); the bootstrap unlinks it as soon
 * as every rank has mapped it, so nothing survives the job in /dev/shm.
 *
 * Waiting: a waiter spins on a counter with a pause instruction, and after
 * `spin_limit` polls yields the CPU on every poll (a rank that keeps
 * spinning on an oversubscribed core would starve the very peer it waits
 * for; MPICH nemesis likewise yields after 1000 polls). A rank inside
 * sched_yield shows it in its off-CPU word (its CPU + 1): a waiter whose
 * awaited peer is yielding on the waiter's own CPU yields at once, since the
 * peer cannot post before it gets this CPU back. Every 64 polls and after
 * every yield it checks the call's deadline, the local abort flag and the segment's
 * failure word, and every ~5 ms polls the peers' pidfds: a peer that has
 * exited (even if not yet reaped) ends the wait with STRATA_ERR_PEER, and
 * the failure is written to the segment so every other rank stops too.
 */
#define _GNU_SOURCE
#include "comm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ==== Layout ==== */

static size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

void comm_layout_compute(int size, comm_layout_t *l)
{
    size_t p = (size_t)size;
    l->lines = sizeof(comm_seg_header_t);
    l->regions = align_up(l->lines + p * sizeof(comm_rank_lines_t), 4096);
    l->chans = align_up(l->regions + p * COMM_DEPTH * COMM_REGION, 4096);
    l->bytes = align_up(l->chans + (p > 1 ? p * p * sizeof(comm_chan_t) : 0), 4096);
}

void comm_seg_name(const strata_comm_t *c, char *buf, size_t len)
{
    static _Atomic unsigned serial; /* segments this process has named */
    snprintf(buf, len, "/strata-%s-%ld-%u", c->jobhash, (long)getpid(),
             atomic_fetch_add(&serial, 1));
}

static void seg_bind(strata_comm_t *c, unsigned char *base)
{
    c->seg = base;
    c->seg_bytes = c->lay.bytes;
    c->hdr = (comm_seg_header_t *)base;
    c->lines = (comm_rank_lines_t *)(base + c->lay.lines);
}

strata_status_t comm_seg_create(strata_comm_t *c, const char *name, strata_error_t *err)
{
    comm_layout_compute(c->size, &c->lay);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return strata_error_set(err, STRATA_ERR_SYSTEM, "shm_open %s: %s", name, strerror(errno));
    /* Exactly 0600 whatever the umask: the other ranks refuse any other mode. */
    if (fchmod(fd, 0600) != 0 || ftruncate(fd, (off_t)c->lay.bytes) != 0) {
        int e = errno;
        close(fd);
        shm_unlink(name);
        return strata_error_set(err, STRATA_ERR_SYSTEM, "setting up %s (%zu bytes): %s", name,
                                c->lay.bytes, strerror(e));
    }
    void *p = mmap(NULL, c->lay.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(name);
        return strata_error_set(err, STRATA_ERR_SYSTEM, "mmap %s: %s", name, strerror(e));
    }
    seg_bind(c, p);
    c->hdr->magic = COMM_SEG_MAGIC;
    c->hdr->size = (uint32_t)c->size;
    c->hdr->version = 1;
    c->hdr->bytes = c->lay.bytes;
    atomic_store(&c->hdr->failed, 0);
    return STRATA_OK;
}

/* Open an existing segment only if it is what this job's rank 0 made: a
 * /strata-* name, not a symbolic link, a regular file owned by this user
 * with mode exactly 0600 and the layout's size. Anything else may be
 * another user's file, whose owner could read or write the job's data. */
static int seg_open_checked(const char *name, size_t bytes, strata_error_t *err)
{
    if (strncmp(name, "/strata-", 8) != 0 || strchr(name + 1, '/')) {
        strata_error_set(err, STRATA_ERR_PROTOCOL, "segment name '%s' is not /strata-*", name);
        return -1;
    }
    int fd = shm_open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0) {
        strata_error_set(err, STRATA_ERR_SYSTEM, "shm_open %s: %s", name,
                         errno == ELOOP ? "a symbolic link (refused)" : strerror(errno));
        return -1;
    }
    struct stat st = {0};
    const char *bad = NULL;
    if (fstat(fd, &st) != 0)
        bad = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        bad = "not a regular file";
    else if (st.st_uid != geteuid())
        bad = "owned by another user";
    else if ((st.st_mode & 07777) != 0600)
        bad = "mode is not 0600";
    else if ((size_t)st.st_size != bytes)
        bad = "size does not match the layout";
    if (bad) {
        strata_error_set(err, STRATA_ERR_PROTOCOL,
                         "segment %s refused: %s (owner uid %u, mode %04o, %lld bytes; expected "
                         "uid %u, 0600, %zu bytes)",
                         name, bad, (unsigned)st.st_uid, (unsigned)st.st_mode & 07777,
                         (long long)st.st_size, (unsigned)geteuid(), bytes);
        close(fd);
        return -1;
    }
    return fd;
}

strata_status_t comm_seg_attach(strata_comm_t *c, const char *name, strata_error_t *err)
{
    comm_layout_compute(c->size, &c->lay);
    strata_error_t mine;
    if (!err) err = &mine;
    int fd = seg_open_checked(name, c->lay.bytes, err);
    if (fd < 0) return err->status;
    void *p = mmap(NULL, c->lay.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return strata_error_set(err, STRATA_ERR_SYSTEM, "mmap %s: %s", name, strerror(e));
    seg_bind(c, p);
    if (c->hdr->magic != COMM_SEG_MAGIC || c->hdr->size != (uint32_t)c->size) {
        comm_seg_unmap(c);
        return strata_error_set(err, STRATA_ERR_PROTOCOL, "segment %s is not this communicator's",
                                name);
    }
    return STRATA_OK;
}

void comm_seg_unmap(strata_comm_t *c)
{
    if (c->seg) munmap(c->seg, c->seg_bytes);
    c->seg = NULL;
    c->hdr = NULL;
    c->lines = NULL;
}

/* ==== Local state after mapping ==== */

static int open_pidfd(int32_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/* CPUs this process may run on. */
long comm_cpus_allowed(void)
{
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return -1;
    return CPU_COUNT(&mask);
}

static unsigned default_spin_limit(int size)
{
    const char *env = getenv("STRATA_SPIN");
    if (env && *env) return (unsigned)strtoul(env, NULL, 10);
    /* CPUs the job may use: an affinity of one CPU is a launcher binding
     * each rank to its own core (mpirun --bind-to core), not a limit on the
     * job; a wider restricted set (taskset, cgroup cpuset) is. */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    long aff = comm_cpus_allowed();
    if (aff > 1 && aff < ncpu) ncpu = aff;
    /* About 6 us of pause instructions (Zen: ~65 cycles each at 2.6 GHz)
     * covers a normal cross-core hand-off (~0.06-1 us) and a peer's chunk
     * copy; past that the peer is probably descheduled, maybe onto this
     * very core (the host's other load can push two ranks onto one core),
     * so poll with a yield in between. Oversubscribed by our own ranks:
     * yield almost at once (2 polls: measured best of 1, 4, 16, 64 with
     * 4 ranks on 2 cores, bench/README.md). */
    return size > ncpu ? 2u : 256u;
}

/* The off-CPU hint (yield at once to a peer waiting for this CPU) is on
 * unless STRATA_OFFCPU=0, which restores the plain policy (spin_limit polls,
 * then yield) for comparisons. While it is on, the small slots' waits poll a
 * running peer for up to 256 polls (~6 us, as above; STRATA_SPIN_RUNNING):
 * there the peer has every input it needs and posts within ~0.1-0.5 us.
 * Engine waits keep spin_limit (the peer may be copying for microseconds). */
static void set_wait_policy(strata_comm_t *c)
{
    c->spin_limit = default_spin_limit(c->size);
    const char *off = getenv("STRATA_OFFCPU"), *run = getenv("STRATA_SPIN_RUNNING");
    c->offcpu_hint = !(off && strcmp(off, "0") == 0);
    c->spin_running = !c->offcpu_hint ? c->spin_limit
                      : run && *run   ? (unsigned)strtoul(run, NULL, 10)
                                      : 256u;
}

strata_status_t comm_local_setup(strata_comm_t *c, strata_error_t *err)
{
    c->pidfds = util_calloc((size_t)c->size, sizeof(int));
    c->ch_sent = util_calloc((size_t)c->size, sizeof(uint64_t));
    c->ch_recv = util_calloc((size_t)c->size, sizeof(uint64_t));
    if (!c->pidfds || !c->ch_sent || !c->ch_recv)
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    for (int i = 0; i < c->size; i++)
        c->pidfds[i] = i == c->rank || (c->remote && c->remote[i]) ? -1 : open_pidfd(c->pids[i]);
    set_wait_policy(c);
    return STRATA_OK;
}

/* ==== Errors ==== */

strata_status_t comm_fail(comm_call_t *k, strata_status_t st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->c->errmsg, sizeof(k->c->errmsg), fmt, ap);
    va_end(ap);
    return st;
}

void comm_mark_failed(strata_comm_t *c, int rank, unsigned reason)
{
    if (!c->hdr) return;
    uint64_t expect = 0, v = (uint64_t)(rank + 1) | (uint64_t)reason << 16;
    atomic_compare_exchange_strong(&c->hdr->failed, &expect, v);
}

strata_status_t comm_mismatch(comm_call_t *k, int peer, const comm_sig_t *theirs)
{
    char mine[96], other[96];
    comm_sig_describe(&k->sig, mine, sizeof mine);
    comm_sig_describe(theirs, other, sizeof other);
    comm_mark_failed(k->c, k->c->rank, COMM_FAIL_MISMATCH);
    return comm_fail(k, STRATA_ERR_MISMATCH, "%s: mismatched calls: rank %d called %s, rank %d %s",
                     k->what, k->c->rank, mine, peer, other);
}

static strata_status_t failure_status(comm_call_t *k, uint64_t f)
{
    int who = (int)(f & 0xffff) - 1;
    unsigned reason = (unsigned)(f >> 16);
    if (reason == COMM_FAIL_ABORTED && who == k->c->rank)
        return comm_fail(k, STRATA_ERR_ABORTED, "%s: aborted", k->what);
    if (reason == COMM_FAIL_TIMEOUT)
        return comm_fail(k, STRATA_ERR_TIMEOUT, "%s: rank %d timed out (communicator failed)",
                         k->what, who);
    if (reason == COMM_FAIL_MISMATCH)
        return comm_fail(k, STRATA_ERR_MISMATCH,
                         "%s: rank %d found ranks calling with different arguments "
                         "(communicator failed)",
                         k->what, who);
    return comm_fail(k, STRATA_ERR_PEER, "%s: rank %d %s", k->what, who,
                     reason == COMM_FAIL_ABORTED ? "aborted" : "died");
}

/* Index of a peer whose process has exited, or -1 (size <= COMM_MAX_SIZE).
 * Only `only` is checked when it is a rank: a peer that finished its part
 * and exited normally must not fail a wait on someone else. */
static int dead_peer(strata_comm_t *c, int only)
{
    struct pollfd fds[COMM_MAX_SIZE];
    int idx[COMM_MAX_SIZE], n = 0;
    for (int i = 0; i < c->size; i++) {
        if (i == c->rank || (only >= 0 && i != only)) continue;
        if (c->remote && c->remote[i]) continue; /* another host: its TCP streams tell */
        if (c->pidfds[i] < 0) {
            if (kill(c->pids[i], 0) != 0 && errno == ESRCH) return i;
            continue;
        }
        fds[n] = (struct pollfd){.fd = c->pidfds[i], .events = POLLIN};
        idx[n++] = i;
    }
    if (n > 0 && poll(fds, (nfds_t)n, 0) > 0)
        for (int j = 0; j < n; j++)
            if (fds[j].revents) return idx[j];
    return -1;
}

strata_status_t comm_check_fast(comm_call_t *k)
{
    strata_comm_t *c = k->c;
    if (c->aborted_local) {
        comm_mark_failed(c, c->rank, COMM_FAIL_ABORTED);
        return comm_fail(k, STRATA_ERR_ABORTED, "%s: aborted", k->what);
    }
    uint64_t f = atomic_load_explicit(&c->hdr->failed, memory_order_acquire);
    return f ? failure_status(k, f) : STRATA_OK;
}

strata_status_t comm_check(comm_call_t *k, int peer)
{
    strata_comm_t *c = k->c;
    strata_status_t st = comm_check_fast(k);
    if (st != STRATA_OK) return st;
    double now = util_now();
    if (k->deadline == 0) k->deadline = now + k->timeout;
    if (now > k->deadline) {
        comm_mark_failed(c, c->rank, COMM_FAIL_TIMEOUT);
        return comm_fail(k, STRATA_ERR_TIMEOUT, "%s: timed out after %.3g s waiting for rank %d",
                         k->what, k->timeout, peer);
    }
    static _Thread_local double next_live;
    if (now >= next_live) {
        next_live = now + 0.005;
        int d = dead_peer(c, peer);
        if (d >= 0) {
            comm_mark_failed(c, d, COMM_FAIL_DIED);
            return comm_fail(k, STRATA_ERR_PEER, "%s: rank %d (pid %ld) died", k->what, d,
                             (long)c->pids[d]);
        }
    }
    return STRATA_OK;
}

int comm_this_cpu(void)
{
    return sched_getcpu();
}

/* While inside sched_yield the rank's `off` word holds its CPU + 1, so that
 * waiters on that CPU yield to it at once. */
void comm_yield(strata_comm_t *c)
{
    _Atomic uint64_t *off = &c->lines[c->rank].misc.off;
    int cpu = sched_getcpu();
    atomic_store_explicit(off, cpu >= 0 ? (uint64_t)cpu + 1 : UINT64_MAX, memory_order_relaxed);
    sched_yield();
    atomic_store_explicit(off, 0, memory_order_relaxed);
}

bool comm_relax(strata_comm_t *c, unsigned *spins)
{
    if (++*spins < c->spin_limit) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return false;
    }
    comm_yield(c);
    return true;
}

strata_status_t comm_wait_ge(comm_call_t *k, _Atomic uint64_t *flag, uint64_t target, int peer)
{
    strata_comm_t *c = k->c;
    unsigned spins = 0, polls = 0;
    int cpu = COMM_CPU_UNKNOWN;
    bool yielded = false;
    for (;;) {
        if (atomic_load_explicit(flag, memory_order_acquire) >= target) return STRATA_OK;
        if (comm_poll_due(&polls, yielded)) {
            strata_status_t st = comm_check(k, peer);
            if (st != STRATA_OK) return st;
        }
        /* Engine waits keep the blind limit: the awaited peer may be in
         * a long copy or waiting itself (spinning on it while it runs cost
         * 64 KiB / 256 KiB with 4 ranks on 2 cores 40% / 25%). */
        yielded = comm_wait_step(c, &spins, c->spin_limit, &cpu,
                                 peer >= 0 && comm_peer_needs_cpu(c, peer, &cpu));
    }
}
