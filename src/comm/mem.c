/*
 * mem.c — registered buffers: memory every rank of a communicator on this
 * host maps, so that the engine can reduce straight from the peers' send
 * buffers into their receive buffers with no staging copy (the user-buffer
 * registration of NCCL's ncclMemAlloc/ncclCommRegister, on shared memory).
 *
 * Design. Each rank owns one pool per communicator: a POSIX shared-memory
 * object /strata-<jobhash>-<pid>-m<serial> (mode 0600) of a fixed size
 * (STRATA_MEM_MAX bytes, default COMM_MEM_MAX_DEFAULT), created at its
 * first strata_comm_mem_alloc and mapped whole. The object is sparse: an
 * allocation reserves its pages with fallocate (so a full /dev/shm is
 * STRATA_ERR_NOMEM at allocation, never SIGBUS later) and a free punches
 * them out again. Allocations are page-aligned first-fit ranges kept in a
 * sorted array. Peers learn a pool's serial and size, and the offsets of a
 * call's buffers, from the engine's first handshake of each large allreduce
 * (allreduce_shm.c) and map the pool then, once (by name: pid and job hash
 * they already know), after the same owner/mode/size checks as the
 * communicator's segment. The pool is unlinked when the communicator is
 * destroyed; a crashed rank's pool is removed by the launcher with the
 * job's other strata-<jobhash>-* objects.
 *
 * Workload: a handful of long-lived buffers per communicator (gradients,
 * activations), allocated once; the engine's per-call question "is this
 * range inside one of my allocations" is a binary search.
 */
#define _GNU_SOURCE
#include "comm.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define COMM_MEM_ALIGN      4096u
#define COMM_MEM_BLOCKS_MAX 4096u

typedef struct mem_block {
    size_t off, len;
} mem_block_t;

typedef struct mem_peer {
    unsigned char *base;
    size_t bytes;
    uint32_t serial;
} mem_peer_t;

struct comm_mem {
    /* this rank's pool (fd kept for fallocate) */
    int fd;
    uint32_t serial;
    unsigned char *base;
    size_t bytes;
    char name[96];
    mem_block_t *blocks; /* sorted by off */
    size_t nblocks, cap;
    /* peers' pools, mapped on first use */
    mem_peer_t *peers;
};

size_t comm_mem_max(void)
{
    static size_t max;
    if (max == 0) {
        const char *env = getenv("STRATA_MEM_MAX");
        unsigned long long v = env && *env ? strtoull(env, NULL, 10) : 0;
        max = v >= COMM_MEM_ALIGN ? (size_t)v / COMM_MEM_ALIGN * COMM_MEM_ALIGN
                                  : COMM_MEM_MAX_DEFAULT;
    }
    return max;
}

static strata_status_t mem_err(strata_comm_t *c, strata_status_t st, const char *fmt, ...)
    STRATA_PRINTF(3, 4);
static strata_status_t mem_err(strata_comm_t *c, strata_status_t st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->errmsg, sizeof c->errmsg, fmt, ap);
    va_end(ap);
    return st;
}

/* Create this rank's pool. */
static strata_status_t pool_create(strata_comm_t *c)
{
    static _Atomic unsigned serial;
    struct comm_mem *m = util_calloc(1, sizeof(*m));
    if (m) m->peers = util_calloc((size_t)c->size, sizeof(mem_peer_t));
    if (!m || !m->peers) {
        if (m) util_free(m);
        return mem_err(c, STRATA_ERR_NOMEM, "mem_alloc: out of memory");
    }
    m->serial = atomic_fetch_add(&serial, 1);
    m->bytes = comm_mem_max();
    snprintf(m->name, sizeof m->name, "/strata-%s-%ld-m%u", c->jobhash, (long)getpid(), m->serial);
    m->fd = shm_open(m->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    strata_status_t st = STRATA_OK;
    if (m->fd < 0) {
        st = mem_err(c, STRATA_ERR_SYSTEM, "mem_alloc: shm_open %s: %s", m->name, strerror(errno));
    } else if (fchmod(m->fd, 0600) != 0 || ftruncate(m->fd, (off_t)m->bytes) != 0) {
        st = mem_err(c, STRATA_ERR_SYSTEM, "mem_alloc: sizing %s to %zu bytes: %s", m->name,
                     m->bytes, strerror(errno));
    } else {
        void *p = mmap(NULL, m->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
        if (p == MAP_FAILED)
            st = mem_err(c, STRATA_ERR_SYSTEM, "mem_alloc: mmap %s: %s", m->name, strerror(errno));
        else
            m->base = p;
    }
    if (st != STRATA_OK) {
        if (m->fd >= 0) close(m->fd), shm_unlink(m->name);
        util_free(m->peers), util_free(m);
        return st;
    }
    c->mem = m;
    return STRATA_OK;
}

/* First-fit: the offset of a free range of len bytes, or SIZE_MAX. *at_p:
 * where its block goes in the sorted array. */
static size_t pool_fit(const struct comm_mem *m, size_t len, size_t *at_p)
{
    size_t prev_end = 0;
    for (size_t i = 0; i <= m->nblocks; i++) {
        size_t next = i < m->nblocks ? m->blocks[i].off : m->bytes;
        if (next - prev_end >= len) return *at_p = i, prev_end;
        if (i < m->nblocks) prev_end = m->blocks[i].off + m->blocks[i].len;
    }
    return SIZE_MAX;
}

strata_status_t strata_comm_mem_alloc(strata_comm_t *c, size_t bytes, void **ptr_p)
{
    if (!c || !ptr_p) return STRATA_ERR_INVALID;
    if (bytes == 0) return mem_err(c, STRATA_ERR_INVALID, "mem_alloc: 0 bytes requested");
    size_t max = comm_mem_max();
    if (bytes > max)
        return mem_err(c, STRATA_ERR_RANGE,
                       "mem_alloc: %zu bytes exceed the pool of %zu bytes per rank "
                       "(STRATA_MEM_MAX)",
                       bytes, max);
    if (!c->mem) {
        strata_status_t st = pool_create(c);
        if (st != STRATA_OK) return st;
    }
    struct comm_mem *m = c->mem;
    size_t len = (bytes + COMM_MEM_ALIGN - 1) / COMM_MEM_ALIGN * COMM_MEM_ALIGN, at = 0;
    size_t off = m->nblocks < COMM_MEM_BLOCKS_MAX ? pool_fit(m, len, &at) : SIZE_MAX;
    if (off == SIZE_MAX)
        return mem_err(c, STRATA_ERR_RANGE,
                       "mem_alloc: no free range of %zu bytes in the pool (%zu bytes, %zu "
                       "allocations; STRATA_MEM_MAX, at most %u allocations)",
                       len, m->bytes, m->nblocks, COMM_MEM_BLOCKS_MAX);
    if (m->nblocks == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        mem_block_t *b = util_realloc(m->blocks, cap * sizeof(*b));
        if (!b) return mem_err(c, STRATA_ERR_NOMEM, "mem_alloc: out of memory");
        m->blocks = b, m->cap = cap;
    }
    /* Reserve the pages now: a full /dev/shm fails here, not with SIGBUS
     * at the first touch. */
    int e = posix_fallocate(m->fd, (off_t)off, (off_t)len);
    if (e != 0)
        return mem_err(c, e == ENOSPC ? STRATA_ERR_NOMEM : STRATA_ERR_SYSTEM,
                       "mem_alloc: reserving %zu bytes in %s: %s", len, m->name, strerror(e));
    memmove(m->blocks + at + 1, m->blocks + at, (m->nblocks - at) * sizeof(*m->blocks));
    m->blocks[at] = (mem_block_t){off, len};
    m->nblocks++;
    *ptr_p = m->base + off;
    return STRATA_OK;
}

/* Index of the block starting at p's offset whose range holds [p, p+bytes),
 * or -1. exact: p must be the block's start. */
static long pool_find(const struct comm_mem *m, const void *p, size_t bytes, bool exact)
{
    if (!m || (const unsigned char *)p < m->base || (const unsigned char *)p >= m->base + m->bytes)
        return -1;
    size_t off = (size_t)((const unsigned char *)p - m->base), lo = 0, hi = m->nblocks;
    while (lo < hi) { /* last block with blocks[i].off <= off */
        size_t mid = (lo + hi) / 2;
        if (m->blocks[mid].off <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return -1;
    const mem_block_t *b = &m->blocks[lo - 1];
    if (exact ? b->off != off : off + bytes > b->off + b->len) return -1;
    return (long)(lo - 1);
}

strata_status_t strata_comm_mem_free(strata_comm_t *c, void *p)
{
    if (!c) return STRATA_ERR_INVALID;
    if (!p) return STRATA_OK;
    struct comm_mem *m = c->mem;
    long i = pool_find(m, p, 0, true);
    if (i < 0)
        return mem_err(c, STRATA_ERR_INVALID,
                       "mem_free: %p is not a live allocation of strata_comm_mem_alloc on this "
                       "communicator",
                       p);
    /* Give the pages back (peers' mappings of them read zeros after). */
    fallocate(m->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)m->blocks[i].off,
              (off_t)m->blocks[i].len);
    memmove(m->blocks + i, m->blocks + i + 1, (m->nblocks - (size_t)i - 1) * sizeof(*m->blocks));
    m->nblocks--;
    return STRATA_OK;
}

bool comm_mem_lookup(const strata_comm_t *c, const void *p, size_t bytes, comm_mem_ref_t *ref)
{
    const struct comm_mem *m = c->mem;
    if (pool_find(m, p, bytes, false) < 0) return false;
    ref->serial = m->serial;
    ref->pool_bytes = m->bytes;
    ref->off = (uint64_t)((const unsigned char *)p - m->base);
    return true;
}

strata_status_t comm_mem_peer(comm_call_t *k, int q, uint32_t serial, uint64_t pool_bytes,
                              unsigned char **base_p)
{
    strata_comm_t *c = k->c;
    if (!c->mem) /* the caller found this rank's own buffers registered */
        return comm_fail(k, STRATA_ERR_INTERNAL, "%s: no registered pool", k->what);
    mem_peer_t *pe = &c->mem->peers[q];
    if (pe->base && pe->serial == serial && pe->bytes == pool_bytes) return *base_p = pe->base, 0;
    if (pe->base) munmap(pe->base, pe->bytes), pe->base = NULL;
    char name[96];
    snprintf(name, sizeof name, "/strata-%s-%ld-m%u", c->jobhash, (long)c->pids[q], serial);
    strata_error_t err = {0};
    int fd = comm_shm_open_checked(name, (size_t)pool_bytes, &err);
    if (fd < 0)
        return comm_fail(k, err.status, "%s: rank %d's registered buffers: %s", k->what, q,
                         err.msg);
    void *p = mmap(NULL, (size_t)pool_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return comm_fail(k, STRATA_ERR_SYSTEM, "%s: mapping rank %d's registered buffers %s: %s",
                         k->what, q, name, strerror(e));
    *pe = (mem_peer_t){p, (size_t)pool_bytes, serial};
    *base_p = p;
    return STRATA_OK;
}

void comm_mem_destroy(strata_comm_t *c)
{
    struct comm_mem *m = c->mem;
    if (!m) return;
    for (int q = 0; q < c->size; q++)
        if (m->peers[q].base) munmap(m->peers[q].base, m->peers[q].bytes);
    if (m->base) munmap(m->base, m->bytes);
    close(m->fd);
    shm_unlink(m->name);
    util_free(m->blocks), util_free(m->peers), util_free(m);
    c->mem = NULL;
}
