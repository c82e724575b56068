/*
 * exec.c — the schedule executor: runs the collective layer's schedules
 * (strata/sched.h, the same generators the simulator times) over a
 * transport's slot interface, plus point-to-point send/recv.
 *
 * Design. The executor materialises this rank's steps once per distinct
 * (collective, algorithm, count, type, root) and keeps them (a benchmark
 * repeats one call), then walks the phases in order. Inside a phase every
 * step is posted at once and progressed slot by slot in one polling loop —
 * a SEND pushes its message into free slots towards its peer, a RECV or
 * RECV_REDUCE drains slots from its peer into (or reduced into) its
 * destination blocks — honouring the contract's `after` dependencies and
 * keeping the matching order: only the first unfinished send to a peer (and
 * receive from a peer) moves. Progressing everything together is what makes
 * a ring of blocking exchanges safe with finite channel buffers. COPY and
 * REDUCE steps run when reached. AVG is executed as SUM with a final
 * division.
 *
 * Peers on other hosts (TCP) take messages by reference where the bytes
 * lie in one run of memory: a send is queued without a copy and counts as
 * finished once the transport has written it (until then a later step must
 * not overwrite it), and a plain receive offers its destination so that
 * frames land in place.
 *
 * In-place calls: schedules require disjoint input and output, so the
 * input is first copied to a cached staging buffer.
 */
#include "comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct exec_cache {
    strata_sched_params_t key;
    strata_step_t *steps;
    size_t nsteps;
    unsigned char *scratch, *input, *output;
    size_t scratch_bytes, input_bytes, output_bytes;
    size_t in_bytes, out_bytes; /* this rank's INPUT and OUTPUT sizes */
} exec_cache_t;

void comm_exec_free(strata_comm_t *c)
{
    exec_cache_t *x = c->exec_cache;
    if (!x) return;
    free(x->steps);
    util_free(x->scratch);
    util_free(x->input);
    util_free(x->output);
    util_free(x);
    c->exec_cache = NULL;
}

typedef struct xctx {
    comm_call_t *k;
    comm_tag_t tag; /* this call's, sent with every slot */
    unsigned char *buf[STRATA_BUF_COUNT];
    size_t es;
    strata_dtype_t dt;
    strata_op_t op;
} xctx_t;

/* ==== Messages over strided blocks ==== */

static unsigned char *block_at(unsigned char *base, uint64_t off, int64_t stride, uint64_t b,
                               size_t es)
{
    return base + (size_t)((int64_t)off + (int64_t)b * stride) * es;
}

/* Copy message bytes [at, at+len) out of the step's source blocks. */
static void msg_gather(const xctx_t *x, const strata_step_t *st, uint64_t at, unsigned char *out,
                       size_t len)
{
    uint64_t blk = st->count * x->es;
    while (len > 0) {
        uint64_t b = at / blk, j = at % blk;
        size_t n = blk - j < len ? (size_t)(blk - j) : len;
        memcpy(out, block_at(x->buf[st->src_buf], st->src_off, st->src_stride, b, x->es) + j, n);
        out += n, at += n, len -= n;
    }
}

/* Deliver message bytes [at, at+len) into the step's destination blocks. */
static void msg_scatter(const xctx_t *x, const strata_step_t *st, uint64_t at,
                        const unsigned char *in, size_t len)
{
    uint64_t blk = st->count * x->es;
    while (len > 0) {
        uint64_t b = at / blk, j = at % blk;
        size_t n = blk - j < len ? (size_t)(blk - j) : len;
        unsigned char *d = block_at(x->buf[st->dst_buf], st->dst_off, st->dst_stride, b, x->es) + j;
        if (st->op == STRATA_STEP_RECV_REDUCE) {
            const unsigned char *s =
                block_at(x->buf[st->src_buf], st->src_off, st->src_stride, b, x->es) + j;
            comm_reduce2(d, s, in, n / x->es, x->dt, x->op);
        } else {
            memcpy(d, in, n);
        }
        in += n, at += n, len -= n;
    }
}

static void local_step(const xctx_t *x, const strata_step_t *st)
{
    for (uint64_t b = 0; b < st->nblk; b++) {
        unsigned char *d = block_at(x->buf[st->dst_buf], st->dst_off, st->dst_stride, b, x->es);
        const unsigned char *s =
            block_at(x->buf[st->src_buf], st->src_off, st->src_stride, b, x->es);
        if (st->op == STRATA_STEP_COPY)
            memmove(d, s, st->count * x->es);
        else
            comm_reduce2(d, d, s, st->count, x->dt, x->op);
    }
}

/* ==== Progress ==== */

/* A transfer's progress. A send is `queued` once the transport has all of
 * it and `fin` once none of it is read from the caller's memory any more
 * (slots sent by reference: once the transport has written them out); a
 * receive is both at once. */
typedef struct xfer {
    uint64_t total, done;
    uint64_t mark; /* send: the last slot sent by reference (transport's mark), 0: none */
    bool queued, fin, posted;
} xfer_t;

/* Whether messages to and from peer go by reference (sent from the
 * caller's memory, received straight into it): peers on other hosts, over
 * TCP, whose frames are COMM_TCP_FRAME bytes. */
static bool by_ref(const strata_comm_t *c, int peer)
{
    return c->remote && c->remote[peer] && c->tp->send_ref;
}

/* Message bytes [at, at+len) of a step's blocks in buffer buf at off with
 * stride when they lie in one run of memory, else NULL. */
static unsigned char *span(const xctx_t *x, const strata_step_t *st, int buf, uint64_t off,
                           int64_t stride, uint64_t at, size_t len)
{
    uint64_t blk = st->count * x->es, b = at / blk, j = at % blk;
    bool runs = stride == (int64_t)st->count || st->nblk == 1; /* blocks back to back */
    if (!runs && j + len > blk) return NULL;
    return block_at(x->buf[buf], off, stride, b, x->es) + j;
}

/* Push what fits of a send. Returns true on progress. */
static bool push(const xctx_t *x, const strata_step_t *st, xfer_t *f)
{
    strata_comm_t *c = x->k->c;
    bool moved = false, ref = by_ref(c, st->peer);
    while (!f->queued) {
        size_t n =
            f->total - f->done < COMM_TCP_FRAME ? (size_t)(f->total - f->done) : COMM_TCP_FRAME;
        const unsigned char *p =
            ref && n > 0 ? span(x, st, st->src_buf, st->src_off, st->src_stride, f->done, n) : NULL;
        if (p) {
            uint64_t m = c->tp->send_ref(c, st->peer, &x->tag, f->total, p, n);
            if (!m) break;
            f->mark = m;
        } else {
            size_t cap;
            unsigned char *slot = c->tp->send_slot(c, st->peer, &cap);
            if (!slot) break;
            n = f->total - f->done < cap ? (size_t)(f->total - f->done) : cap;
            msg_gather(x, st, f->done, slot, n);
            c->tp->send_commit(c, st->peer, &x->tag, f->total, n);
        }
        f->done += n;
        f->queued = f->done == f->total;
        moved = true;
    }
    if (f->queued && !f->fin) moved |= f->fin = !f->mark || c->tp->sent(c, st->peer, f->mark);
    return moved;
}

/* Whether a message from peer belongs to another call than this one (then
 * the call fails with STRATA_ERR_MISMATCH naming both). A message of an
 * earlier call is one a rank sent while its peers called something that
 * did not receive it (e.g. two ranks each naming itself a broadcast's root). */
static bool mismatched(const xctx_t *x, int peer, const comm_tag_t *tag)
{
    const comm_sig_t *a = &x->tag.sig, *b = &tag->sig;
    if (a->coll == b->coll && a->dtype == b->dtype && a->op == b->op && a->root == b->root &&
        a->count == b->count && x->tag.call == tag->call)
        return false;
    if (a->coll == COMM_SIG_P2P && b->coll == COMM_SIG_P2P) return false; /* sizes: pull() */
    comm_mismatch(x->k, peer, b);
    if (x->tag.call != tag->call) {
        size_t n = strlen(x->k->c->errmsg);
        snprintf(x->k->c->errmsg + n, sizeof(x->k->c->errmsg) - n,
                 " (its message of call #%llu arrived in call #%llu)",
                 (unsigned long long)tag->call, (unsigned long long)x->tag.call);
    }
    return true;
}

/* Drain what has arrived for a receive. -1: protocol error, -2: mismatch
 * (the message is in errmsg). */
static int pull(const xctx_t *x, const strata_step_t *st, xfer_t *f)
{
    strata_comm_t *c = x->k->c;
    int moved = 0;
    /* a plain receive into one run of memory: offer it to the transport,
     * which may then write frames of it in place (no copy here) */
    unsigned char *run = NULL;
    if (st->op == STRATA_STEP_RECV && by_ref(c, st->peer) && c->tp->recv_into && f->total > 0)
        run = span(x, st, st->dst_buf, st->dst_off, st->dst_stride, 0, f->total);
    if (run && !f->posted && f->done == 0) {
        c->tp->recv_into(c, st->peer, &x->tag, f->total, run);
        f->posted = true;
    }
    size_t cap = c->remote && c->remote[st->peer] ? COMM_TCP_FRAME : COMM_CH_BYTES;
    while (!f->fin) {
        uint64_t mb;
        size_t len;
        comm_tag_t tag;
        const unsigned char *slot = c->tp->recv_slot(c, st->peer, &tag, &mb, &len);
        if (!slot) break;
        if (mismatched(x, st->peer, &tag)) return -2;
        /* senders cut a message into full slots and a last one: a frame
         * written in place depends on it */
        size_t want = f->total - f->done < cap ? (size_t)(f->total - f->done) : cap;
        if (mb != f->total) {
            comm_fail(x->k, STRATA_ERR_PROTOCOL,
                      "%s: rank %d sent a %llu-byte message, expected %llu bytes", x->k->what,
                      st->peer, (unsigned long long)mb, (unsigned long long)f->total);
            return -1;
        }
        if (len != want || len % x->es) {
            comm_fail(x->k, STRATA_ERR_PROTOCOL,
                      "%s: rank %d sent a %zu-byte piece at byte %llu of its %llu-byte message, "
                      "expected %zu bytes",
                      x->k->what, st->peer, len, (unsigned long long)f->done,
                      (unsigned long long)f->total, want);
            return -1;
        }
        if (!run || slot != run + f->done) msg_scatter(x, st, f->done, slot, len);
        c->tp->recv_release(c, st->peer);
        f->done += len;
        f->queued = f->fin = f->done == f->total;
        moved = 1;
    }
    if (f->fin && f->posted) c->tp->recv_into(c, st->peer, &x->tag, 0, NULL), f->posted = false;
    return moved;
}

/* Is an earlier unfinished step of the same direction and peer pending? */
static bool blocked(const strata_step_t *st, const xfer_t *f, size_t i)
{
    bool is_send = st[i].op == STRATA_STEP_SEND;
    /* messages keep their order per peer and direction: a send may follow
     * one the transport has whole (queued), even if not yet written */
    for (size_t j = 0; j < i; j++)
        if (!f[j].queued && st[j].peer == st[i].peer && (st[j].op == STRATA_STEP_SEND) == is_send &&
            (st[j].op <= STRATA_STEP_RECV_REDUCE))
            return true;
    for (size_t j = 0; j < st[i].after && j < i; j++)
        if (!f[j].fin) return true;
    return false;
}

/* The peer of the first unfinished transfer: the one whose death to watch. */
static int awaited(const strata_step_t *st, const xfer_t *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!f[i].fin && st[i].peer >= 0) return st[i].peer;
    return -1;
}

/* The peers of the unfinished transfers, one bit each: their posts (a slot
 * filled, a slot freed) are what can unblock this phase. */
static uint64_t pending_peers(const strata_step_t *st, const xfer_t *f, size_t n)
{
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!f[i].fin && st[i].peer >= 0) m |= (uint64_t)1 << st[i].peer;
    return m;
}

/* Slow path of a blocked executor call: show which call this rank is blocked
 * in, and fail if the awaited peer is blocked in the same call number with
 * other arguments — ranks in different collectives may each wait to receive
 * first, so no message would ever show the difference. */
static strata_status_t blocked_elsewhere(const xctx_t *x, int peer)
{
    strata_comm_t *c = x->k->c;
    if (x->tag.call == 0 || peer < 0) return STRATA_OK; /* send/recv: sizes are checked */
    comm_misc_t *me = &c->lines[c->rank].misc, *them = &c->lines[peer].misc;
    atomic_store_explicit(&me->xcount, x->tag.sig.count, memory_order_relaxed);
    atomic_store_explicit(&me->xcall, (uint64_t)x->k->sigword << 32 | (uint32_t)x->tag.call,
                          memory_order_release);
    uint64_t w = atomic_load_explicit(&them->xcall, memory_order_acquire);
    if ((uint32_t)w != (uint32_t)x->tag.call || (uint32_t)(w >> 32) == x->k->sigword)
        return STRATA_OK;
    comm_sig_t theirs = comm_sig_from_word(
        (uint32_t)(w >> 32), atomic_load_explicit(&them->xcount, memory_order_relaxed));
    return comm_mismatch(x->k, peer, &theirs);
}

static strata_status_t run_phase_once(const xctx_t *x, const strata_step_t *st, size_t n,
                                      xfer_t *f);

/* A failed call on a communicator with TCP peers closes its connections:
 * ranks on other hosts see the close at once (the segment's failure word
 * tells only this host's ranks). */
static strata_status_t run_phase(const xctx_t *x, const strata_step_t *st, size_t n, xfer_t *f)
{
    strata_status_t s = run_phase_once(x, st, n, f);
    if (s != STRATA_OK && x->k->c->tcp) comm_tcp_shutdown(x->k->c);
    return s;
}

static strata_status_t run_phase_once(const xctx_t *x, const strata_step_t *st, size_t n, xfer_t *f)
{
    size_t left = n;
    for (size_t i = 0; i < n; i++)
        f[i] = (xfer_t){.total = st[i].count * st[i].nblk * x->es};
    comm_wait_t w = COMM_WAIT_INIT;
    bool waited = false;
    while (left > 0) {
        bool moved = false;
        for (size_t i = 0; i < n; i++) {
            if (f[i].fin || blocked(st, f, i)) continue;
            if (st[i].op == STRATA_STEP_SEND) {
                moved |= push(x, &st[i], &f[i]);
            } else if (st[i].op == STRATA_STEP_RECV || st[i].op == STRATA_STEP_RECV_REDUCE) {
                int r = pull(x, &st[i], &f[i]);
                if (r < 0) return r == -2 ? STRATA_ERR_MISMATCH : STRATA_ERR_PROTOCOL;
                moved |= r > 0;
            } else {
                local_step(x, &st[i]);
                f[i].queued = f[i].fin = moved = true;
            }
            if (f[i].fin) left--;
        }
        if (moved) continue;
        /* polls has its own counter: the wait's spins advance on every
         * step (sharing one kept the count odd here, so the check never ran) */
        if (comm_poll_due(&w.polls, waited)) {
            int peer = awaited(st, f, n);
            strata_status_t s = blocked_elsewhere(x, peer); /* first: names the call */
            if (s == STRATA_OK) s = comm_check(x->k, peer);
            if (s == STRATA_OK && x->k->c->tp->status) s = x->k->c->tp->status(x->k);
            if (s != STRATA_OK) return s;
        }
        /* a sleep ends on a post by any peer this phase still waits for;
         * a transport with its own wait (TCP: epoll) waits there instead */
        uint64_t peers = pending_peers(st, f, n);
        waited = x->k->c->tp->idle ? x->k->c->tp->idle(x->k, &w, peers)
                                   : comm_wait_step(x->k, &w, x->k->c->spin_limit, false, peers);
    }
    return STRATA_OK;
}

/* ==== Schedules ==== */

static bool same_key(const strata_sched_params_t *a, const strata_sched_params_t *b)
{
    return a->coll == b->coll && a->algo == b->algo && a->nranks == b->nranks &&
           a->count == b->count && a->elem_size == b->elem_size && a->root == b->root &&
           a->group == b->group && a->chunks == b->chunks;
}

static strata_status_t grow(unsigned char **p, size_t *have, size_t need)
{
    if (*have >= need) return STRATA_OK;
    unsigned char *q = util_malloc(need ? need : 1);
    if (!q) return STRATA_ERR_NOMEM;
    util_free(*p);
    *p = q, *have = need;
    return STRATA_OK;
}

static strata_status_t load(comm_call_t *k, const strata_sched_params_t *p, exec_cache_t **x_p)
{
    strata_comm_t *c = k->c;
    exec_cache_t *x = c->exec_cache;
    if (!x) {
        x = c->exec_cache = util_calloc(1, sizeof(*x));
        if (!x) return comm_fail(k, STRATA_ERR_NOMEM, "%s: out of memory", k->what);
    }
    if (!x->steps || !same_key(&x->key, p)) {
        strata_error_t err = {0};
        strata_sched_t *s = NULL;
        free(x->steps);
        x->steps = NULL;
        strata_status_t st = strata_sched_create(p, &s, &err);
        if (st == STRATA_OK)
            st = strata_sched_materialise(s, (uint32_t)c->rank, &x->steps, &x->nsteps, &err);
        uint64_t sc = s ? strata_sched_buf_count(s, (uint32_t)c->rank, STRATA_BUF_SCRATCH) : 0;
        uint64_t in = s ? strata_sched_buf_count(s, (uint32_t)c->rank, STRATA_BUF_INPUT) : 0;
        uint64_t out = s ? strata_sched_buf_count(s, (uint32_t)c->rank, STRATA_BUF_OUTPUT) : 0;
        x->in_bytes = (size_t)in * p->elem_size;
        x->out_bytes = (size_t)out * p->elem_size;
        strata_sched_destroy(s);
        if (st != STRATA_OK) {
            x->steps = NULL;
            return comm_fail(k, st, "%s: schedule %s: %s", k->what, strata_algo_name(p->algo),
                             err.msg);
        }
        if (grow(&x->scratch, &x->scratch_bytes, sc * p->elem_size) ||
            grow(&x->input, &x->input_bytes, in * p->elem_size) ||
            grow(&x->output, &x->output_bytes, out * p->elem_size))
            return comm_fail(k, STRATA_ERR_NOMEM, "%s: out of memory", k->what);
        x->key = *p;
    }
    *x_p = x;
    return STRATA_OK;
}

static strata_status_t run_steps(const xctx_t *x, const strata_step_t *steps, size_t n)
{
    xfer_t *f = util_malloc((n ? n : 1) * sizeof(*f));
    if (!f) return comm_fail(x->k, STRATA_ERR_NOMEM, "%s: out of memory", x->k->what);
    strata_status_t st = STRATA_OK;
    for (size_t i = 0; i < n && st == STRATA_OK;) {
        size_t j = i;
        while (j < n && steps[j].phase == steps[i].phase)
            j++;
        st = run_phase(x, steps + i, j - i, f + i);
        i = j;
    }
    if (st == STRATA_OK && x->k->c->tp->drain) st = x->k->c->tp->drain(x->k);
    util_free(f);
    return st;
}

strata_status_t comm_exec(comm_call_t *k, strata_coll_t coll, strata_algo_t algo, const void *src,
                          void *dst, size_t count, strata_dtype_t dt, strata_op_t op, int root)
{
    strata_comm_t *c = k->c;
    strata_sched_params_t p = {.coll = coll,
                               .algo = algo,
                               .nranks = (uint32_t)c->size,
                               .count = count,
                               .elem_size = (uint32_t)strata_dtype_size(dt),
                               .root = root < 0 ? 0 : (uint32_t)root,
                               .chunks = k->chunks ? k->chunks : 1,
                               .group = k->group};
    exec_cache_t *x = NULL;
    strata_status_t st = load(k, &p, &x);
    if (st != STRATA_OK) return st;
    xctx_t xc = {.k = k,
                 .tag = {.sig = k->sig, .call = ++c->xseq},
                 .es = p.elem_size,
                 .dt = dt,
                 .op = op == STRATA_AVG ? STRATA_SUM : op};
    xc.buf[STRATA_BUF_INPUT] = (unsigned char *)(uintptr_t)src;
    /* a reduce's non-root may pass no output: give the schedule a private one */
    xc.buf[STRATA_BUF_OUTPUT] = dst ? dst : x->output;
    xc.buf[STRATA_BUF_SCRATCH] = x->scratch;
    const unsigned char *s0 = src, *d0 = dst;
    if (d0 && x->in_bytes && x->out_bytes && s0 < d0 + x->out_bytes && d0 < s0 + x->in_bytes) {
        /* in place: stage the input where the schedule may read it */
        memcpy(x->input, src, x->in_bytes);
        xc.buf[STRATA_BUF_INPUT] = x->input;
    }
    st = run_steps(&xc, x->steps, x->nsteps);
    if (st == STRATA_OK && op == STRATA_AVG && (root < 0 || root == c->rank))
        comm_reduce_finish(dst, count, dt, op, c->size);
    return st;
}

/* ==== Point to point ==== */

static strata_status_t p2p(comm_call_t *k, int peer, void *buf, size_t bytes, bool is_send)
{
    strata_step_t st = {.op = is_send ? STRATA_STEP_SEND : STRATA_STEP_RECV,
                        .peer = peer,
                        .count = bytes,
                        .nblk = 1,
                        .src_buf = STRATA_BUF_INPUT,
                        .dst_buf = STRATA_BUF_OUTPUT};
    xctx_t x = {.k = k, .tag = {.sig = k->sig}, .es = 1, .dt = STRATA_UINT8, .op = STRATA_SUM};
    x.buf[STRATA_BUF_INPUT] = x.buf[STRATA_BUF_OUTPUT] = buf;
    xfer_t f;
    strata_status_t s = run_phase(&x, &st, 1, &f);
    if (s == STRATA_OK && is_send && k->c->tp->drain) s = k->c->tp->drain(k);
    return s;
}

strata_status_t comm_p2p_send(comm_call_t *k, int peer, const void *buf, size_t bytes)
{
    return p2p(k, peer, (void *)(uintptr_t)buf, bytes, true);
}

strata_status_t comm_p2p_recv(comm_call_t *k, int peer, void *buf, size_t bytes)
{
    return p2p(k, peer, buf, bytes, false);
}
