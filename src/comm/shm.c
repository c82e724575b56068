/*
 * shm.c — the shared-memory segment of a communicator and bounded waiting.
 *
 * The segment (one per communicator and host) holds, in order: a header
 * with the sticky failure word; one block of cache lines per rank (small
 * slots, stage/reduce/done epochs, ping, off-CPU word, sleepers' mask and
 * bell); the engine's staging regions
 * (per rank, COMM_DEPTH × COMM_REGION bytes); the per-pair channels. Rank 0
 * creates it with shm_open(O_EXCL, 0600); the bootstrap unlinks it as soon
 * as every rank has mapped it, so nothing survives the job in /dev/shm.
 *
 * Waiting: a waiter spins on a counter with a pause instruction, and after
 * `spin_limit` polls blocks on every poll (a rank that keeps spinning on an
 * oversubscribed core would starve the very peer it waits for; MPICH
 * nemesis likewise yields after 1000 polls). Blocking is first
 * sched_yield — the cheapest hand-off when the CPU is shared only with the
 * job's own ranks, which yield back within microseconds — and after
 * COMM_YIELDS yields in one wait, or at once while recent yields were slow
 * (one lasted over COMM_YIELD_SLOW: a process that does not yield, such as
 * a CPU hog, had the CPU for its whole time slice; COMM_YIELD_SLOW_SHARED
 * when the job's ranks outnumber the CPUs, where a core partner's turn
 * takes longer than that), a sleep on a futex. There, too, every
 * COMM_SLEEP_RETEST-th sleep under the mark is a yield instead, and a fast
 * one clears the mark (comm_sleep_retest: a partner outside the library
 * sets it as a hog does, but its CPU comes back at once afterwards). A
 * yielder stays runnable and the scheduler treats it as CPU-bound (EEVDF
 * even pushes its deadline back), so beside hogs it runs again only after
 * their slices; a woken sleeper is runnable with the lag it kept while
 * asleep and gets the CPU ahead of the hog's next slice (comm_hog_test: 2
 * ranks and a hog on one CPU, 58-132 us a call against 1.1-3.6 ms). A rank inside sched_yield shows
 * it in its off-CPU word (its CPU + 1): a waiter whose awaited peer is yielding on the waiter's own
 * CPU blocks at once, since the peer cannot post before it gets this CPU back.
 *
 * Sleeping (non-private futexes: the words live in the shared segment). A
 * waiter r first reads its own `bell`, sets bit r in the `wmask` of every
 * peer whose post it waits for, fences, polls its words once more and only
 * then sleeps: FUTEX_WAIT on its bell with the value it read, for at most
 * COMM_SLEEP_MAX and never past the call's deadline. A poster, after every
 * publishing store, fences and reads its own wmask (comm_posted: a fence
 * and one load of a line it owns, the whole fast-path cost); when it is
 * non-zero it takes the mask, bumps each waiter's bell and FUTEX_WAKEs it.
 * By the two fences, either the poster sees the waiter's bit or the
 * waiter's last poll sees the post; a bell bumped after the waiter read it
 * makes FUTEX_WAIT return at once, so no wake is lost.
 * Marking the communicator failed wakes every rank.
 *
 * Every 64 polls and after every blocking step a wait checks the call's
 * deadline, the local abort flag and the segment's failure word, and every
 * ~5 ms polls the peers' pidfds: a peer that has exited (even if not yet
 * reaped) ends the wait with STRATA_ERR_PEER, and the failure is written to
 * the segment so every other rank stops too. A sleep ends within
 * COMM_SLEEP_MAX, so a stopped or killed peer, which never posts, delays
 * these checks by at most that.
 */
#define _GNU_SOURCE
#include "comm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
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
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__)
_Atomic unsigned comm_fence_word; /* comm_fence_seq_cst under TSan (comm.h) */
#endif

/* Sleep at most this long per step (s): short enough that a sleeper still
 * sees abort, the failure word and peer death within milliseconds when no
 * post wakes it, long enough that a stopped peer costs few wake-ups (500
 * a second). */
#define COMM_SLEEP_MAX 0.002
/* Yields one wait makes before it sleeps: enough for a round of hand-offs
 * among the job's own ranks on one CPU (5 ranks: 4), with room. */
#define COMM_YIELDS 16

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
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    c->hdr->cpus = ncpu > 0 && ncpu < INT32_MAX ? (uint32_t)ncpu : 0;
    atomic_store(&c->hdr->failed, 0);
    return STRATA_OK;
}

/* Open an existing segment only if it is what this job's rank 0 made: a
 * /strata-* name, not a symbolic link, a regular file owned by this user
 * with mode exactly 0600 and the layout's size. Anything else may be
 * another user's file, whose owner could read or write the job's data. */
int comm_shm_open_checked(const char *name, size_t bytes, strata_error_t *err)
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
    int fd = comm_shm_open_checked(name, c->lay.bytes, err);
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

/* CPUs the job may use: an affinity of one CPU is a launcher binding each
 * rank to its own core (mpirun --bind-to core), not a limit on the job; a
 * wider restricted set (taskset, cgroup cpuset) is. */
long comm_job_cpus(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    long aff = comm_cpus_allowed();
    if (aff > 1 && aff < ncpu) ncpu = aff;
    return ncpu;
}

static unsigned default_spin_limit(int size)
{
    const char *env = getenv("STRATA_SPIN");
    if (env && *env) return (unsigned)strtoul(env, NULL, 10);
    long ncpu = comm_job_cpus();
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
 * running peer for up to COMM_SPIN_RUNNING polls (STRATA_SPIN_RUNNING): there
 * the peer has every input it needs and posts within ~0.1-0.5 us, unless it
 * was preempted or is itself just waking from a sleep. Blocking early then
 * starts a cascade on a loaded host: the waiter sleeps, the peer that wakes
 * it finds it slow to return and sleeps in turn, and every later call pays
 * two wake-ups — 10-20 us medians for 8 B calls against 0.25 us (3 of 5 paired
 * runs at load 28 with 256 polls, 0 of 5 with 4096; bench/README.md, issue
 * 17). 4096 polls (~100-200 us of pause) is about one wake-up on such a
 * host (the probe's "futex wake to running": 0.1-0.4 ms at load 13-28), the
 * spin-then-block rule that costs at most twice the better choice. Ranks
 * that outnumber the job's CPUs keep 256: there the awaited peer may be
 * queued on this very CPU. Engine waits keep spin_limit (the peer may be
 * copying for many microseconds). */
#define COMM_SPIN_RUNNING 4096u
static void set_wait_policy(strata_comm_t *c)
{
    c->spin_limit = default_spin_limit(c->size);
    const char *off = getenv("STRATA_OFFCPU"), *run = getenv("STRATA_SPIN_RUNNING");
    c->offcpu_hint = !(off && strcmp(off, "0") == 0);
    c->spin_running = !c->offcpu_hint             ? c->spin_limit
                      : run && *run               ? (unsigned)strtoul(run, NULL, 10)
                      : c->size > comm_job_cpus() ? 256u
                                                  : COMM_SPIN_RUNNING;
}

/* Map the engine's staging slots into this process before the first call:
 * this rank's own slots writable (it writes them), the other local ranks'
 * readable, as far as the default pipeline chunk reaches into each slot (the
 * whole slot is 1 MiB, all of it used by allreduce when the ranks outnumber
 * the CPUs, else only with STRATA_CHUNK). Otherwise the
 * first large collective of every communicator takes a page fault per 4 KiB
 * page per rank — on a host whose first touch costs 1-7 us a page (the
 * probe's "first-touch page fault"), 2-3 ms per rank at P = 2, paid inside
 * the call while the peers wait. MADV_POPULATE_* (Linux 5.14) only maps;
 * where the kernel lacks it the pages fault in on first use as before. */
static void seg_prefault(strata_comm_t *c)
{
#if defined(MADV_POPULATE_WRITE) && defined(MADV_POPULATE_READ)
    if (!c->seg) return;
    size_t chunk = c->shared_cpus ? comm_chunk_bytes_shared() : comm_chunk_bytes();
    size_t page = (size_t)sysconf(_SC_PAGESIZE), used = align_up(chunk, page);
    if (used > COMM_REGION) used = COMM_REGION;
    for (int q = 0; q < c->size; q++) {
        if (c->remote && c->remote[q]) continue;
        for (uint64_t d = 0; d < COMM_DEPTH; d++)
            (void)madvise(comm_region(c, q, d), used,
                          q == c->rank ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
    }
#else
    (void)c;
#endif
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
    c->shared_cpus = c->hdr && c->hdr->cpus > 0 && (uint32_t)c->size > c->hdr->cpus;
    seg_prefault(c);
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

/* ==== Sleeping waits ==== */

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
    /* Non-private: the word is in a MAP_SHARED segment other processes map. */
    return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

static void bell_ring(strata_comm_t *c, int p)
{
    _Atomic uint32_t *bell = &c->lines[p].misc.bell;
    atomic_fetch_add_explicit(bell, 1, memory_order_release);
    futex(bell, FUTEX_WAKE, INT_MAX, NULL);
}

void comm_wake_slow(strata_comm_t *c)
{
    uint64_t m = atomic_exchange_explicit(&c->lines[c->rank].misc.wmask, 0, memory_order_acq_rel);
    for (int p = 0; m; p++, m >>= 1)
        if (m & 1) bell_ring(c, p);
}

/* Announce rank r to `peers` (their wmask) and remember r's bell. */
static void wait_arm(strata_comm_t *c, comm_wait_t *w, uint64_t peers)
{
    uint64_t bit = (uint64_t)1 << c->rank;
    w->bell = atomic_load_explicit(&c->lines[c->rank].misc.bell, memory_order_acquire);
    peers &= ~bit;
    if (!peers) peers = ~bit & (c->size < 64 ? ((uint64_t)1 << c->size) - 1 : ~(uint64_t)0);
    for (int p = 0; p < c->size; p++)
        if (peers >> p & 1)
            atomic_fetch_or_explicit(&c->lines[p].misc.wmask, bit, memory_order_seq_cst);
    comm_fence_seq_cst(); /* pairs with comm_posted's */
    w->armed = true;
}

/* Sleep on this rank's bell while it holds w->bell, at most COMM_SLEEP_MAX
 * and not past the deadline (once it is known: comm_check sets it). */
static void wait_sleep(comm_call_t *k, comm_wait_t *w)
{
    double t = COMM_SLEEP_MAX;
    if (k->deadline > 0) {
        double left = k->deadline - util_now();
        if (left < t) t = left;
    }
    w->armed = false;
    if (t <= 0) return;
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(t * 1e9) + 1};
    futex(&k->c->lines[k->c->rank].misc.bell, FUTEX_WAIT, w->bell, &ts);
    if (k->c->sleep_credit) k->c->sleep_credit--;
}

bool comm_wait_block(comm_call_t *k, comm_wait_t *w, uint64_t peers)
{
    strata_comm_t *c = k->c;
    w->cpu = COMM_CPU_UNKNOWN; /* the scheduler may move us */
    bool retest = !w->armed && comm_sleep_retest(c->sleep_credit, c->shared_cpus);
    if (w->yields < COMM_YIELDS && (c->sleep_credit == 0 || retest)) {
        double t0 = util_now();
        comm_yield(c);
        w->yields++;
        if (util_now() - t0 > (c->shared_cpus ? COMM_YIELD_SLOW_SHARED : COMM_YIELD_SLOW))
            c->sleep_credit = COMM_SLEEP_CREDIT;
        else if (retest)
            c->sleep_credit = 0; /* the CPU came back at once: no hog (comm.h) */
        return true;
    }
    if (!w->armed)
        wait_arm(c, w, peers); /* the caller polls once more, then sleeps */
    else
        wait_sleep(k, w);
    return true;
}

void comm_mark_failed(strata_comm_t *c, int rank, unsigned reason)
{
    if (!c->hdr) return;
    uint64_t expect = 0, v = (uint64_t)(rank + 1) | (uint64_t)reason << 16;
    if (!atomic_compare_exchange_strong(&c->hdr->failed, &expect, v)) return;
    /* Every sleeper is waiting for something that will not come now. */
    for (int p = 0; p < c->size; p++)
        if (p != c->rank) bell_ring(c, p);
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

strata_status_t comm_fail_cause(unsigned reason, const char **phrase)
{
    switch (reason) {
    case COMM_FAIL_TIMEOUT:
        *phrase = "timed out (communicator failed)";
        return STRATA_ERR_TIMEOUT;
    case COMM_FAIL_MISMATCH:
        *phrase = "found ranks calling with different arguments (communicator failed)";
        return STRATA_ERR_MISMATCH;
    case COMM_FAIL_ABORTED:
        *phrase = "aborted";
        return STRATA_ERR_PEER;
    default:
        *phrase = "died";
        return STRATA_ERR_PEER;
    }
}

static strata_status_t failure_status(comm_call_t *k, uint64_t f)
{
    int who = (int)(f & 0xffff) - 1;
    unsigned reason = (unsigned)(f >> 16);
    if (reason == COMM_FAIL_ABORTED && who == k->c->rank)
        return comm_fail(k, STRATA_ERR_ABORTED, "%s: aborted", k->what);
    const char *phrase;
    strata_status_t st = comm_fail_cause(reason, &phrase);
    return comm_fail(k, st, "%s: rank %d %s", k->what, who, phrase);
}

/* Index of a peer whose process has exited, or -1 (size <= COMM_MAX_SIZE).
 * Only `only` is checked when it is a rank, none when it is COMM_NO_PEER: a
 * peer that finished its part and exited normally must not fail a wait on
 * someone else. */
static int dead_peer(strata_comm_t *c, int only)
{
    struct pollfd fds[COMM_MAX_SIZE];
    int idx[COMM_MAX_SIZE], n = 0;
    if (only == COMM_NO_PEER) return -1;
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

void (*comm_test_live_hook)(strata_comm_t *c, int peer);

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
    /* a death found at the last check is the cause, even at the deadline */
    if (k->dead && (k->dead - 1 == peer || peer == -1)) {
        /* found exited at the last check, and the caller's poll since
         * still lacks what it waits for: the peer died before posting it */
        int d = k->dead - 1;
        comm_mark_failed(c, d, COMM_FAIL_DIED);
        return comm_fail(k, STRATA_ERR_PEER, "%s: rank %d (pid %ld) died", k->what, d,
                         (long)c->pids[d]);
    }
    k->dead = 0; /* that wait ended: its peer had posted before it exited */
    if (now > k->deadline) {
        comm_mark_failed(c, c->rank, COMM_FAIL_TIMEOUT);
        if (peer < 0)
            return comm_fail(k, STRATA_ERR_TIMEOUT, "%s: timed out after %.3g s waiting for %s",
                             k->what, k->timeout, peer == -1 ? "its peers" : "remote ranks");
        return comm_fail(k, STRATA_ERR_TIMEOUT, "%s: timed out after %.3g s waiting for rank %d",
                         k->what, k->timeout, peer);
    }
    static _Thread_local double next_live;
    if (now >= next_live) {
        next_live = now + 0.005;
        if (comm_test_live_hook) comm_test_live_hook(c, peer);
        int d = dead_peer(c, peer);
        if (d >= 0) {
            /* A peer that recorded a failure (a mismatch it found, its
             * timeout) and then exited: the recorded failure is the cause,
             * and it may have landed after the flag was read above. The
             * peer's store precedes its exit, which the pidfd saw. */
            uint64_t f = atomic_load_explicit(&c->hdr->failed, memory_order_acquire);
            if (f) return failure_status(k, f);
            /* A peer that finished its part exits normally: what it posted
             * last (the very post this wait is for) may have landed after
             * the caller's poll. Its stores precede its exit too: the
             * caller polls once more, and the next check reports the
             * death only if the wait still goes on. */
            k->dead = d + 1;
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

strata_status_t comm_wait_ge(comm_call_t *k, _Atomic uint64_t *flag, uint64_t target, int peer)
{
    strata_comm_t *c = k->c;
    comm_wait_t w = COMM_WAIT_INIT;
    bool blocked = false;
    for (;;) {
        if (atomic_load_explicit(flag, memory_order_acquire) >= target) return STRATA_OK;
        if (comm_poll_due(&w.polls, blocked)) {
            strata_status_t st = comm_check(k, peer);
            if (st != STRATA_OK) return st;
        }
        /* Engine waits keep the blind limit: the awaited peer may be in
         * a long copy or waiting itself (spinning on it while it runs cost
         * 64 KiB / 256 KiB with 4 ranks on 2 cores 40% / 25%). */
        blocked =
            comm_wait_step(k, &w, c->spin_limit, peer >= 0 && comm_peer_needs_cpu(c, peer, &w.cpu),
                           peer >= 0 ? (uint64_t)1 << peer : 0);
    }
}
