/*
 * transport_tcp.c — the TCP transport between ranks on different hosts:
 * message semantics (every byte goes through both hosts' protocol stacks),
 * behind the same slot interface the schedule executor drives over shared
 * memory (comm_transport_t), so ring, recursive doubling and every other
 * schedule of the collective layer run across hosts unchanged.
 *
 * Connections. Each pair of ranks on different hosts holds `nstreams` TCP
 * connections (STRATA_TCP_STREAMS, rank 0's value, default 2): frame number
 * s of a direction travels on stream s mod nstreams, so a large message is
 * spread over several connections (several congestion windows, several
 * socket buffers) while each stream stays in order and the receiver knows
 * which stream carries the next frame. Every socket is non-blocking with
 * TCP_NODELAY (frames are written whole with one sendmsg, so Nagle could
 * only delay a small message's last segment). The higher rank dials the
 * lower one's data listener (published in the bootstrap's MAC'd table) and
 * proves the job token first: "STRD" from to stream HMAC(K, label | comm id
 * | from to stream); the listener drops anything else (strangers, garbage,
 * silence past 2 s) and is closed once every expected stream has arrived.
 *
 * Frames. A 48-byte header (little-endian): "STRF" commid32 seq64
 * msg_bytes64 call64 coll8 dtype8 op8 root8 len32 count64, then `len`
 * payload bytes. The receiver checks magic, communicator, sequence (the
 * next expected on that stream), len <= its frame buffer and <= the message
 * size, and the call fields' ranges before it reads a payload byte; the
 * executor then checks the message size against what it posted and the
 * call against its own. Anything else is STRATA_ERR_PROTOCOL; a connection
 * closed or reset is STRATA_ERR_PEER; both are sticky, and a failed rank
 * shuts its connections down so that peers on other hosts learn at once —
 * after a failure notice ("STRX" commid32 rank32 cause32, zeros to 48
 * bytes) on every stream that is between frames, so that they learn the
 * cause its host recorded (a mismatch, a timeout, a death), not the close.
 *
 * Progress. One engine per communicator: an epoll set over every stream,
 * interest in input while a receive buffer is free, in output while a frame
 * waits. The slot calls pump the sockets without blocking; when the
 * executor has nothing to do it waits in epoll_wait (at most 5 ms, so its
 * deadline and abort checks keep running; a rank bound to a CPU of its own
 * first polls a while, see tcp_idle), or, when shared-memory peers are
 * in the communicator too, polls epoll without waiting between its usual
 * spins and yields.
 *
 * Copies. A frame whose bytes lie in one run of the caller's memory is
 * written from there (tcp_send_ref: the kernel's copy is the only one; the
 * executor counts the send finished once it is written), and a plain
 * receive into one run of memory is offered to the transport
 * (tcp_recv_into): a frame of that message whose header arrives afterwards
 * is read straight into its place, k * TCP_FRAME bytes in (senders cut every
 * message into full frames and a last one; the executor refuses any other
 * length, and the header is checked before a payload byte is read). Other
 * frames go through a frame buffer (the executor's gather/scatter over
 * strided blocks; a receive that reduces). A failed call's shutdown
 * forgets queued frames and the posted receive, which point into memory the
 * caller gets back. Measured, bench/README.md "tcp, fewer copies": 64 MiB
 * allreduce at 2 ranks over loopback 57 -> 41 ms (the two user-space copies
 * were a quarter of the time). Workload: bulk transfers of 256 KiB frames and
 * latency-bound small frames.
 */
#define _GNU_SOURCE
#include "comm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* 256 KiB frames: 4 in flight per peer cover the bandwidth-delay product of
 * a 10 Gbit/s link at 0.8 ms RTT; the per-frame header is 48 B (0.02 %). */
#define TCP_FRAME       COMM_TCP_FRAME
#define TCP_SEND_DEPTH  4
#define TCP_RECV_DEPTH  (2 * COMM_TCP_MAX_STREAMS)
#define TCP_STAGE       4096 /* staged reads per stream (pump_in) */
#define TCP_SWEEP_S     1e-3 /* tcp_status reads every stream at most this often */
#define TCP_AUTH_LEN    (16 + COMM_BOOT_MAC)
#define TCP_WAIT_MS     5
#define TCP_SPIN        512 /* polls before epoll sleeps, bound ranks (STRATA_TCP_SPIN) */
#define TCP_YIELDS      16  /* yields before epoll sleeps, unbound ranks (STRATA_TCP_YIELDS) */
#define TCP_ACCEPT_WAIT 2.0 /* a stranger's connection may cost this much */
#define TCP_PENDING_MAX 64
#define TCP_LABEL_DATA  "strata-v3 data"

/* ==== Frame header ==== */

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> 8 * i);
}
static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> 8 * i);
}
static uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void comm_tcp_frame_build(unsigned char h[COMM_TCP_HDR], const comm_tcp_frame_t *f)
{
    memcpy(h, "STRF", 4);
    put32(h + 4, f->cid);
    put64(h + 8, f->seq);
    put64(h + 16, f->msg_bytes);
    put64(h + 24, f->tag.call);
    h[32] = f->tag.sig.coll, h[33] = f->tag.sig.dtype, h[34] = f->tag.sig.op;
    h[35] = f->tag.sig.root;
    put32(h + 36, f->len);
    put64(h + 40, f->tag.sig.count);
}

int comm_tcp_frame_parse(const unsigned char h[COMM_TCP_HDR], uint32_t cid, uint64_t seq,
                         size_t cap, comm_tcp_frame_t *f, const char **why)
{
    comm_tcp_frame_t g = {
        .cid = get32(h + 4), .seq = get64(h + 8), .msg_bytes = get64(h + 16), .len = get32(h + 36)};
    g.tag.call = get64(h + 24);
    g.tag.sig = (comm_sig_t){
        .coll = h[32], .dtype = h[33], .op = h[34], .root = h[35], .count = get64(h + 40)};
    if (memcmp(h, "STRF", 4) != 0)
        *why = "not a strata frame (bad magic)";
    else if (g.cid != cid)
        *why = "a frame of another communicator";
    else if (g.seq != seq)
        *why = "a frame out of sequence";
    else if (g.len > cap || g.len > g.msg_bytes)
        *why = "a frame longer than its buffer or its message";
    else if (g.len == 0 && g.msg_bytes != 0)
        *why = "an empty frame of a non-empty message";
    else if (g.tag.sig.coll > COMM_SIG_P2P || g.tag.sig.dtype >= STRATA_DTYPE_COUNT ||
             g.tag.sig.op >= STRATA_OP_COUNT || g.tag.sig.root >= COMM_MAX_SIZE)
        *why = "a frame with an invalid call";
    else {
        *f = g;
        return 0;
    }
    return -1;
}

void comm_tcp_notice_build(unsigned char h[COMM_TCP_HDR], uint32_t cid, int rank, unsigned reason)
{
    memset(h, 0, COMM_TCP_HDR);
    memcpy(h, "STRX", 4);
    put32(h + 4, cid);
    put32(h + 8, (uint32_t)rank);
    put32(h + 12, reason);
}

bool comm_tcp_is_notice(const unsigned char h[COMM_TCP_HDR])
{
    return memcmp(h, "STRX", 4) == 0;
}

int comm_tcp_notice_parse(const unsigned char h[COMM_TCP_HDR], uint32_t cid, int size, int *rank,
                          unsigned *reason, const char **why)
{
    uint32_t r = get32(h + 8), why_code = get32(h + 12);
    bool pad = false;
    for (int i = 16; i < COMM_TCP_HDR; i++)
        pad |= h[i] != 0;
    if (!comm_tcp_is_notice(h))
        *why = "not a failure notice (bad magic)";
    else if (get32(h + 4) != cid)
        *why = "a failure notice of another communicator";
    else if (r >= (uint32_t)size)
        *why = "a failure notice naming a rank outside the communicator";
    else if (why_code < COMM_FAIL_DIED || why_code > COMM_FAIL_MISMATCH)
        *why = "a failure notice with an unknown cause";
    else if (pad)
        *why = "a failure notice with stray bytes after its fields";
    else {
        *rank = (int)r, *reason = why_code;
        return 0;
    }
    return -1;
}

/* ==== State ==== */

typedef struct tcp_buf {
    unsigned char hdr[COMM_TCP_HDR];
    unsigned char *data; /* TCP_FRAME bytes, allocated on first use */
    /* The payload in the caller's memory instead of data: send, the bytes
     * to write (tcp_send_ref); receive, where they go (tcp_recv_into). */
    const unsigned char *ref;
    unsigned char *dst;
    comm_tcp_frame_t f;
    size_t off; /* bytes of header + payload moved so far */
    bool done;  /* receive: complete */
} tcp_buf_t;

typedef struct tcp_stream {
    int fd;
    uint64_t rseq;         /* next frame number expected on this stream */
    tcp_buf_t *rx;         /* frame being received, or NULL */
    uint32_t events;       /* current epoll interest */
    bool eof;              /* the peer closed this stream (its frames so far are all here) */
    bool ready;            /* the socket may hold data (pump_in) */
    unsigned char *in;     /* staging buffer, TCP_STAGE bytes, allocated on first use */
    size_t in_off, in_len; /* its unread bytes: [in_off, in_len) */
} tcp_stream_t;

typedef struct tcp_peer {
    tcp_stream_t s[COMM_TCP_MAX_STREAMS];
    tcp_buf_t sq[TCP_SEND_DEPTH];
    uint64_t s_head, s_tail; /* frames committed / fully written */
    tcp_buf_t rq[TCP_RECV_DEPTH];
    uint64_t r_tail; /* frames handed back by the executor */
    /* The receive posted with tcp_recv_into: frames into_first, ... of a
     * message of into_bytes from call into_tag go to into + k * TCP_FRAME. */
    unsigned char *into;
    uint64_t into_first, into_bytes;
    comm_tag_t into_tag;
} tcp_peer_t;

struct comm_tcp {
    int ep;
    int nstreams;
    uint32_t cid;
    tcp_peer_t *peer; /* [size]; used for remote ranks only */
    bool has_local;   /* shared-memory peers too */
    unsigned spin;    /* polls of the sockets before sleeping in epoll (tcp_idle) */
    unsigned yields;  /* then sched_yield calls before sleeping (tcp_idle) */
    double swept_at;  /* tcp_status's last read of every stream */
    strata_status_t st;
    int failed_peer;     /* the rank the failure names */
    unsigned failed_why; /* its COMM_FAIL_* cause: DIED but for a notice's */
    bool noticed;        /* this rank's notice is sent */
    bool sweeping;       /* tcp_fail is reading every stream for a notice */
    char msg[STRATA_ERROR_MSG_MAX - 64];
};

static int pump_in(strata_comm_t *c, int p, int j);
static tcp_buf_t *tx_frame(comm_tcp_t *t, tcp_peer_t *q, int j);

/* A connection that broke or closed is what a failure elsewhere looks like
 * from here: before it is the cause, every stream is read once more for a
 * failure notice that names the real one (the failing rank wrote it before
 * it closed; the streams of the other peers may hold theirs). While that
 * sweep reads, only a notice counts. */
static void tcp_fail(strata_comm_t *c, int peer, strata_status_t st, const char *why)
{
    comm_tcp_t *t = c->tcp;
    if (t->st != STRATA_OK || t->sweeping) return;
    if (st == STRATA_ERR_PEER) {
        t->sweeping = true;
        for (int p = 0; p < c->size && t->st == STRATA_OK; p++)
            for (int j = 0; c->remote[p] && j < t->nstreams && t->st == STRATA_OK; j++)
                if (t->peer[p].s[j].fd >= 0) t->peer[p].s[j].ready = true, pump_in(c, p, j);
        t->sweeping = false;
        if (t->st != STRATA_OK) return;
    }
    t->st = st;
    t->failed_peer = peer;
    t->failed_why = COMM_FAIL_DIED;
    snprintf(t->msg, sizeof(t->msg), "rank %d (pid %ld on another host): %s", peer,
             (long)c->pids[peer], why);
    comm_tcp_shutdown(c);
}

/* Peer p's notice: rank `rank` failed for `reason`, as its host recorded it. */
static void tcp_notice(strata_comm_t *c, int p, int rank, unsigned reason)
{
    comm_tcp_t *t = c->tcp;
    if (t->st != STRATA_OK) return;
    const char *what;
    t->st = comm_fail_cause(reason, &what);
    t->failed_peer = rank;
    t->failed_why = reason;
    snprintf(t->msg, sizeof(t->msg), "rank %d (pid %ld on another host) reported: rank %d %s", p,
             (long)c->pids[p], rank, what);
    comm_tcp_shutdown(c);
}

/* This rank's notice on every stream that is between frames (one in the
 * middle of a frame would read it as payload: its peer sees the close),
 * once, without waiting: the failure its host's word records, else the
 * remote one this rank found. */
static void send_notice(strata_comm_t *c)
{
    comm_tcp_t *t = c->tcp;
    uint64_t f = c->hdr ? atomic_load_explicit(&c->hdr->failed, memory_order_acquire) : 0;
    int rank = -1;
    unsigned reason = 0;
    if (f)
        rank = (int)(f & 0xffff) - 1, reason = (unsigned)(f >> 16);
    else if (t->st == STRATA_ERR_PEER || t->st == STRATA_ERR_TIMEOUT ||
             t->st == STRATA_ERR_MISMATCH)
        rank = t->failed_peer, reason = t->failed_why;
    else if (c->aborted_local)
        rank = c->rank, reason = COMM_FAIL_ABORTED;
    if (t->noticed || rank < 0 || rank >= c->size || reason < COMM_FAIL_DIED ||
        reason > COMM_FAIL_MISMATCH)
        return;
    t->noticed = true;
    unsigned char h[COMM_TCP_HDR];
    comm_tcp_notice_build(h, t->cid, rank, reason);
    for (int p = 0; p < c->size; p++) {
        tcp_peer_t *q = &t->peer[p];
        for (int j = 0; c->remote[p] && j < t->nstreams; j++) {
            if (q->s[j].fd < 0) continue;
            const tcp_buf_t *b = tx_frame(t, q, j);
            if (!b || b->off == 0) (void)send(q->s[j].fd, h, sizeof h, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
    }
}

/* Also forgets every frame still queued and every posted receive: both
 * point into callers' memory, which a failed call hands back. */
void comm_tcp_shutdown(strata_comm_t *c)
{
    if (!c->tcp) return;
    send_notice(c);
    for (int p = 0; p < c->size; p++) {
        tcp_peer_t *q = &c->tcp->peer[p];
        if (!c->remote[p]) continue;
        for (int j = 0; j < c->tcp->nstreams; j++)
            if (q->s[j].fd >= 0) shutdown(q->s[j].fd, SHUT_RDWR);
        q->s_tail = q->s_head;
        q->into = NULL;
    }
}

void comm_tcp_destroy(strata_comm_t *c)
{
    comm_tcp_t *t = c->tcp;
    if (!t) return;
    for (int p = 0; p < c->size && t->peer; p++) {
        tcp_peer_t *q = &t->peer[p];
        for (int j = 0; j < COMM_TCP_MAX_STREAMS; j++) {
            if (q->s[j].fd >= 0) close(q->s[j].fd);
            util_free(q->s[j].in);
        }
        for (int i = 0; i < TCP_SEND_DEPTH; i++)
            util_free(q->sq[i].data);
        for (int i = 0; i < TCP_RECV_DEPTH; i++)
            util_free(q->rq[i].data);
    }
    if (t->ep >= 0) close(t->ep);
    util_free(t->peer);
    util_free(t);
    c->tcp = NULL;
}

static int recv_depth(const comm_tcp_t *t)
{
    return t->nstreams * 2 > 4 ? t->nstreams * 2 : 4;
}

/* ==== Progress ==== */

/* The frame this stream sends next: the oldest unwritten one numbered
 * j mod nstreams. */
static tcp_buf_t *tx_frame(comm_tcp_t *t, tcp_peer_t *q, int j)
{
    for (uint64_t s = q->s_tail; s < q->s_head; s++) {
        tcp_buf_t *b = &q->sq[s % TCP_SEND_DEPTH];
        if ((int)(s % (uint64_t)t->nstreams) == j && b->off < COMM_TCP_HDR + b->f.len) return b;
    }
    return NULL;
}

/* Write what the socket takes. -1 on a broken connection. */
static int pump_out(strata_comm_t *c, int p, int j)
{
    comm_tcp_t *t = c->tcp;
    tcp_peer_t *q = &t->peer[p];
    tcp_buf_t *b;
    while ((b = tx_frame(t, q, j)) != NULL) {
        struct iovec iov[2];
        int n = 0;
        if (b->off < COMM_TCP_HDR)
            iov[n++] = (struct iovec){b->hdr + b->off, COMM_TCP_HDR - b->off};
        size_t poff = b->off > COMM_TCP_HDR ? b->off - COMM_TCP_HDR : 0;
        const unsigned char *pay = b->ref ? b->ref : b->data;
        if (b->f.len > poff)
            iov[n++] = (struct iovec){(void *)(uintptr_t)(pay + poff), b->f.len - poff};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(q->s[j].fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
        if (w < 0) {
            tcp_fail(c, p, STRATA_ERR_PEER, strerror(errno));
            return -1;
        }
        b->off += (size_t)w;
    }
    while (q->s_tail < q->s_head) { /* retire written frames in order */
        tcp_buf_t *d = &q->sq[q->s_tail % TCP_SEND_DEPTH];
        if (d->off < COMM_TCP_HDR + d->f.len) break;
        q->s_tail++;
    }
    return 0;
}

static bool same_tag(const comm_tag_t *a, const comm_tag_t *b)
{
    return a->call == b->call && a->sig.coll == b->sig.coll && a->sig.dtype == b->sig.dtype &&
           a->sig.op == b->sig.op && a->sig.root == b->sig.root && a->sig.count == b->sig.count;
}

/* Where frame seq's payload goes when it belongs to the posted receive:
 * its message and call are the posted ones and it is the full frame its
 * place there calls for (senders cut a message into TCP_FRAME pieces; the
 * executor fails any other length). NULL: into a receive buffer. */
static unsigned char *placed(const tcp_peer_t *q, uint64_t seq, const comm_tcp_frame_t *f)
{
    if (!q->into || seq < q->into_first || f->msg_bytes != q->into_bytes ||
        !same_tag(&f->tag, &q->into_tag))
        return NULL;
    uint64_t k = seq - q->into_first;
    if (k >= (q->into_bytes + TCP_FRAME - 1) / TCP_FRAME) return NULL;
    uint64_t at = k * TCP_FRAME,
             want = q->into_bytes - at < TCP_FRAME ? q->into_bytes - at : TCP_FRAME;
    return f->len == want ? q->into + at : NULL;
}

/* Account n more bytes of frame b (header or payload) on stream j: parse
 * the header once it is whole, finish the frame once its payload is. -1 on
 * a frame that fails the checks. */
static int rx_advance(strata_comm_t *c, int p, int j, tcp_buf_t *b, size_t n)
{
    comm_tcp_t *t = c->tcp;
    tcp_peer_t *q = &t->peer[p];
    tcp_stream_t *s = &q->s[j];
    b->off += n;
    if (b->off == COMM_TCP_HDR && comm_tcp_is_notice(b->hdr)) {
        const char *why = "";
        int rank;
        unsigned reason;
        if (comm_tcp_notice_parse(b->hdr, t->cid, c->size, &rank, &reason, &why) == 0) {
            tcp_notice(c, p, rank, reason);
        } else {
            char m[128];
            snprintf(m, sizeof m, "sent %s on stream %d", why, j);
            bool was = t->sweeping;
            t->sweeping = false; /* a forged notice is the failure */
            tcp_fail(c, p, STRATA_ERR_PROTOCOL, m);
            t->sweeping = was;
        }
        return -1;
    }
    if (b->off == COMM_TCP_HDR) {
        const char *why = "";
        if (comm_tcp_frame_parse(b->hdr, t->cid, s->rseq, TCP_FRAME, &b->f, &why) != 0) {
            char m[128];
            snprintf(m, sizeof m, "sent %s on stream %d", why, j);
            tcp_fail(c, p, STRATA_ERR_PROTOCOL, m);
            return -1;
        }
        b->dst = placed(q, s->rseq, &b->f);
        if (b->f.len > 0 && !b->dst && !b->data && !(b->data = util_malloc(TCP_FRAME))) {
            tcp_fail(c, p, STRATA_ERR_NOMEM, "out of memory for a receive buffer");
            return -1;
        }
    }
    if (b->off >= COMM_TCP_HDR && b->off == COMM_TCP_HDR + b->f.len) {
        b->done = true;
        s->rx = NULL;
        s->rseq += (uint64_t)t->nstreams;
    }
    return 0;
}

/* Read what has arrived on stream j into free receive buffers. Small
 * reads go through the stream's staging buffer (TCP_STAGE bytes): one
 * recv takes a small frame's header and payload together, and whatever
 * follows; the payload of a frame with TCP_STAGE bytes or more still to
 * come is read straight into its place. The socket is read only while it
 * may hold data (s->ready: set by epoll, cleared by a read that found less
 * than it asked for), so a drained socket costs no EAGAIN read per frame. */
static int pump_in(strata_comm_t *c, int p, int j)
{
    comm_tcp_t *t = c->tcp;
    tcp_peer_t *q = &t->peer[p];
    tcp_stream_t *s = &q->s[j];
    int depth = recv_depth(t);
    for (;;) {
        if (s->eof) return 0;
        if (!s->rx) {
            if (s->rseq >= q->r_tail + (uint64_t)depth) return 0; /* no free buffer */
            s->rx = &q->rq[s->rseq % (uint64_t)depth];
            s->rx->off = 0, s->rx->done = false, s->rx->dst = NULL;
        }
        tcp_buf_t *b = s->rx;
        bool hdr = b->off < COMM_TCP_HDR;
        size_t want = hdr ? COMM_TCP_HDR - b->off : COMM_TCP_HDR + b->f.len - b->off;
        unsigned char *to =
            hdr ? b->hdr + b->off : (b->dst ? b->dst : b->data) + (b->off - COMM_TCP_HDR);
        if (s->in_off < s->in_len) { /* staged bytes first */
            size_t n = s->in_len - s->in_off < want ? s->in_len - s->in_off : want;
            memcpy(to, s->in + s->in_off, n);
            s->in_off += n;
            if (rx_advance(c, p, j, b, n) != 0) return -1;
            continue;
        }
        if (!s->ready) return 0;
        bool direct = !hdr && want >= TCP_STAGE;
        if (!direct && !s->in && !(s->in = util_malloc(TCP_STAGE))) {
            tcp_fail(c, p, STRATA_ERR_NOMEM, "out of memory for a receive buffer");
            return -1;
        }
        size_t ask = direct ? want : TCP_STAGE;
        ssize_t n = recv(s->fd, direct ? to : s->in, ask, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            s->ready = direct; /* mid-payload: more is on its way */
            return 0;
        }
        if (n < 0 && errno == EINTR) return 0;
        if (n == 0 && b->off == 0) {
            /* A rank that finished its part may exit: only a frame that
             * is then still awaited from it is an error (tcp_recv_slot). */
            s->eof = true;
            s->rx = NULL;
            return 0;
        }
        if (n <= 0) {
            tcp_fail(c, p, STRATA_ERR_PEER,
                     n == 0 ? "closed its connection in the middle of a frame" : strerror(errno));
            return -1;
        }
        /* a short staged read drained the socket: the next read waits for
         * epoll; a direct one reads on (bulk data keeps arriving) */
        if (!direct && (size_t)n < ask) s->ready = false;
        if (direct) {
            if (rx_advance(c, p, j, b, (size_t)n) != 0) return -1;
        } else {
            s->in_off = 0, s->in_len = (size_t)n;
        }
    }
}

static void set_interest(comm_tcp_t *t, int p, int j)
{
    tcp_peer_t *q = &t->peer[p];
    tcp_stream_t *s = &q->s[j];
    uint32_t ev = 0;
    if (!s->eof && (s->rx || s->rseq < q->r_tail + (uint64_t)recv_depth(t))) ev |= EPOLLIN;
    if (tx_frame(t, q, j)) ev |= EPOLLOUT;
    if (ev == s->events) return;
    struct epoll_event e = {.events = ev, .data.u64 = (uint64_t)p << 8 | (uint64_t)j};
    /* a closed stream leaves the set: EPOLLHUP is reported whatever the
     * interest, and would turn every wait into a busy loop */
    if (ev == 0 && s->eof)
        epoll_ctl(t->ep, EPOLL_CTL_DEL, s->fd, NULL);
    else
        epoll_ctl(t->ep, s->events == UINT32_MAX ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, s->fd, &e);
    s->events = ev == 0 && s->eof ? UINT32_MAX : ev;
}

static void pump(strata_comm_t *c, int p, int j)
{
    if (c->tcp->st != STRATA_OK) return;
    if (pump_in(c, p, j) == 0 && pump_out(c, p, j) == 0) set_interest(c->tcp, p, j);
}

/* Wait up to ms for any socket, then move what is ready. */
static void progress(strata_comm_t *c, int ms)
{
    comm_tcp_t *t = c->tcp;
    struct epoll_event ev[32];
    int n = epoll_wait(t->ep, ev, 32, ms);
    for (int i = 0; i < n && t->st == STRATA_OK; i++) {
        int p = (int)(ev[i].data.u64 >> 8), j = (int)(ev[i].data.u64 & 0xff);
        if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) t->peer[p].s[j].ready = true;
        pump(c, p, j);
    }
}

/* ==== Slot interface ==== */

/* Whether peer has TCP_SEND_DEPTH frames queued, after writing what the
 * sockets take. */
static bool send_full(strata_comm_t *c, tcp_peer_t *q)
{
    if (q->s_head - q->s_tail < TCP_SEND_DEPTH) return false;
    for (int j = 0; j < c->tcp->nstreams; j++)
        pump(c, (int)(q - c->tcp->peer), j);
    return q->s_head - q->s_tail >= TCP_SEND_DEPTH;
}

static void *tcp_send_slot(strata_comm_t *c, int peer, size_t *cap_p)
{
    if (!c->remote[peer]) return comm_shm_transport.send_slot(c, peer, cap_p);
    comm_tcp_t *t = c->tcp;
    tcp_peer_t *q = &t->peer[peer];
    if (t->st != STRATA_OK) return NULL;
    if (send_full(c, q)) return NULL;
    tcp_buf_t *b = &q->sq[q->s_head % TCP_SEND_DEPTH];
    if (!b->data && !(b->data = util_malloc(TCP_FRAME))) {
        tcp_fail(c, peer, STRATA_ERR_NOMEM, "out of memory for a send buffer");
        return NULL;
    }
    *cap_p = TCP_FRAME;
    return b->data;
}

/* Queue the frame at s_head (payload in its buffer, or at ref) and start
 * writing it. */
static void queue_frame(strata_comm_t *c, int peer, const comm_tag_t *tag, uint64_t msg_bytes,
                        size_t len, const void *ref)
{
    comm_tcp_t *t = c->tcp;
    tcp_peer_t *q = &t->peer[peer];
    tcp_buf_t *b = &q->sq[q->s_head % TCP_SEND_DEPTH];
    b->ref = ref;
    b->f = (comm_tcp_frame_t){
        .cid = t->cid, .seq = q->s_head, .msg_bytes = msg_bytes, .tag = *tag, .len = (uint32_t)len};
    comm_tcp_frame_build(b->hdr, &b->f);
    b->off = 0;
    int j = (int)(q->s_head % (uint64_t)t->nstreams);
    q->s_head++;
    pump(c, peer, j);
}

static void tcp_send_commit(strata_comm_t *c, int peer, const comm_tag_t *tag, uint64_t msg_bytes,
                            size_t len)
{
    if (!c->remote[peer]) {
        comm_shm_transport.send_commit(c, peer, tag, msg_bytes, len);
        return;
    }
    queue_frame(c, peer, tag, msg_bytes, len, NULL);
}

/* A frame whose payload the kernel copies straight from the caller's
 * memory: one copy fewer per byte than a send slot (user -> frame buffer
 * -> socket), and no frame buffer in the cache. Its mark is its frame
 * number + 1 (tcp_sent). */
static uint64_t tcp_send_ref(strata_comm_t *c, int peer, const comm_tag_t *tag, uint64_t msg_bytes,
                             const void *data, size_t len)
{
    tcp_peer_t *q = &c->tcp->peer[peer];
    if (c->tcp->st != STRATA_OK || send_full(c, q)) return 0;
    queue_frame(c, peer, tag, msg_bytes, len, data);
    return q->s_head;
}

static bool tcp_sent(strata_comm_t *c, int peer, uint64_t mark)
{
    comm_tcp_t *t = c->tcp;
    tcp_peer_t *q = &t->peer[peer];
    for (int j = 0; j < t->nstreams && q->s_tail < mark && t->st == STRATA_OK; j++)
        if (tx_frame(t, q, j) && pump_out(c, peer, j) == 0) set_interest(t, peer, j);
    return q->s_tail >= mark;
}

static void tcp_recv_into(strata_comm_t *c, int peer, const comm_tag_t *tag, uint64_t msg_bytes,
                          void *dst)
{
    tcp_peer_t *q = &c->tcp->peer[peer];
    q->into = dst;
    q->into_first = q->r_tail;
    q->into_bytes = msg_bytes;
    q->into_tag = *tag;
}

static const void *tcp_recv_slot(strata_comm_t *c, int peer, comm_tag_t *tag_p,
                                 uint64_t *msg_bytes_p, size_t *len_p)
{
    if (!c->remote[peer]) return comm_shm_transport.recv_slot(c, peer, tag_p, msg_bytes_p, len_p);
    comm_tcp_t *t = c->tcp;
    tcp_peer_t *q = &t->peer[peer];
    int depth = recv_depth(t);
    tcp_buf_t *b = &q->rq[q->r_tail % (uint64_t)depth];
    if (t->st != STRATA_OK) return NULL;
    int j = (int)(q->r_tail % (uint64_t)t->nstreams);
    /* the executor waits for this frame: read its stream directly (a
     * frame the peer sent meanwhile costs one read, no epoll_wait) */
    if (!b->done) q->s[j].ready = true, pump(c, peer, j);
    if (!b->done && q->s[j].eof && t->st == STRATA_OK)
        tcp_fail(c, peer, STRATA_ERR_PEER, "closed its connection (it exited or failed)");
    if (t->st != STRATA_OK || !b->done) return NULL;
    *tag_p = b->f.tag;
    *msg_bytes_p = b->f.msg_bytes;
    *len_p = b->f.len;
    return b->dst    ? b->dst
           : b->data ? b->data
                     : (const void *)b->hdr; /* len 0: any valid pointer */
}

static void tcp_recv_release(strata_comm_t *c, int peer)
{
    if (!c->remote[peer]) {
        comm_shm_transport.recv_release(c, peer);
        return;
    }
    comm_tcp_t *t = c->tcp;
    tcp_peer_t *q = &t->peer[peer];
    uint64_t full = q->r_tail + (uint64_t)recv_depth(t); /* a stream this far had no buffer */
    q->rq[q->r_tail % (uint64_t)recv_depth(t)].done = false;
    q->r_tail++;
    for (int j = 0; j < t->nstreams; j++) /* one that waited for this buffer reads on */
        if (!q->s[j].rx && q->s[j].rseq >= full) pump(c, peer, j);
}

/* With peers on this host too, data may come either way: poll the sockets
 * without blocking and take one step of the shared-memory wait, but
 * never its futex sleep — a frame arriving on a socket rings no bell —
 * so spin, then yield. With only remote peers, block in epoll. */
static bool tcp_idle(comm_call_t *k, comm_wait_t *w, uint64_t peers)
{
    strata_comm_t *c = k->c;
    (void)peers;
    if (c->tcp->has_local) {
        progress(c, 0);
        if (++w->spins < c->spin_limit) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            return false;
        }
        w->spins = 0;
        comm_yield(c);
        return true;
    }
    /* Only remote peers: a rank bound to a CPU of its own (mpirun
     * --bind-to core, srun --cpu-bind, STRATA_BIND) polls the sockets
     * TCP_SPIN times (~0.5-1 ms) before sleeping in epoll, so that a running
     * peer's reply costs no wake-up (the host's other work queued on that
     * CPU would delay it): 8 B allreduce over loopback TCP at load 17-19,
     * 2 bound ranks, median of 5 rounds, 342 us sleeping at once, 44-67 us
     * polling 64-1024 times (bench/README.md). An unbound rank sleeps at
     * once: its peer may be waiting for this very CPU (unbound 2 ranks at
     * load 18: 7.4 us sleeping at once, 24 us polling 64 times, 4-227 us
     * 512 times), and the kernel's wake-up preemption serves it well. */
    if (w->spins < c->tcp->spin) {
        w->spins++;
        progress(c, 0);
        return false;
    }
    /* Then (unbound ranks) yield a few times before sleeping: the CPU goes
     * to a peer queued on it, or, with nothing else to run, the rank keeps
     * polling and its core stays awake (a core that idles takes tens of
     * microseconds to wake in a VM). A yield that gave the CPU away for
     * longer than COMM_YIELD_SLOW met a process that does not yield: the
     * next COMM_SLEEP_CREDIT waits sleep at once, as shm.c's do. */
    if (w->yields < c->tcp->yields && c->sleep_credit == 0) {
        double t0 = util_now();
        sched_yield();
        w->yields++;
        if (util_now() - t0 > COMM_YIELD_SLOW) c->sleep_credit = COMM_SLEEP_CREDIT;
        progress(c, 0); /* a drained socket is read again only once epoll says so */
        return false;
    }
    if (c->sleep_credit) c->sleep_credit--;
    progress(c, TCP_WAIT_MS);
    return true;
}

static strata_status_t tcp_status(comm_call_t *k)
{
    strata_comm_t *c = k->c;
    comm_tcp_t *t = c->tcp;
    /* the executor's periodic check, at most every TCP_SWEEP_S: read every
     * stream once, so that a peer's close is seen on streams no wait is
     * reading (a stream without a free buffer has no EPOLLIN interest) */
    double now = util_now();
    if (now - t->swept_at >= TCP_SWEEP_S) {
        t->swept_at = now;
        for (int p = 0; p < c->size && t->st == STRATA_OK; p++)
            for (int j = 0; c->remote[p] && j < t->nstreams; j++)
                t->peer[p].s[j].ready = true, pump(c, p, j);
    }
    if (t->st == STRATA_OK) return STRATA_OK;
    /* this host's other ranks stop too, naming the remote rank and cause */
    comm_mark_failed(k->c, t->failed_peer, t->failed_why);
    return comm_fail(k, t->st, "%s: %s", k->what, t->msg);
}

static bool unsent(const strata_comm_t *c)
{
    for (int p = 0; p < c->size; p++)
        if (c->remote[p] && c->tcp->peer[p].s_tail < c->tcp->peer[p].s_head) return true;
    return false;
}

/* Frames still queued here when a call ends (its last sends) would be lost
 * if the rank then exits: write them out first. */
static strata_status_t tcp_drain(comm_call_t *k)
{
    strata_comm_t *c = k->c;
    while (unsent(c)) {
        for (int p = 0; p < c->size; p++)
            for (int j = 0; c->remote[p] && j < c->tcp->nstreams; j++)
                pump(c, p, j);
        if (!unsent(c)) break;
        /* only remote peers are waited for: a rank of this host that
         * finished its part and exited is no failure */
        strata_status_t st = tcp_status(k);
        if (st == STRATA_OK) st = comm_check(k, COMM_NO_PEER);
        if (st != STRATA_OK) {
            comm_tcp_shutdown(c);
            return st;
        }
        progress(c, TCP_WAIT_MS);
    }
    return tcp_status(k);
}

const comm_transport_t comm_tcp_transport = {
    .name = "tcp",
    .send_slot = tcp_send_slot,
    .send_commit = tcp_send_commit,
    .recv_slot = tcp_recv_slot,
    .recv_release = tcp_recv_release,
    .idle = tcp_idle,
    .status = tcp_status,
    .drain = tcp_drain,
    .send_ref = tcp_send_ref,
    .sent = tcp_sent,
    .recv_into = tcp_recv_into,
};

/* ==== Addresses ==== */

static socklen_t to_sockaddr(const comm_net_addr_t *a, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    if (a->family == 6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(a->port);
        memcpy(&s6->sin6_addr, a->ip, 16);
        s6->sin6_scope_id = a->scope;
        return sizeof(*s6);
    }
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    s4->sin_family = AF_INET;
    s4->sin_port = htons(a->port);
    memcpy(&s4->sin_addr, a->ip, 4);
    return sizeof(*s4);
}

void comm_net_from_sockaddr(const void *sa, comm_net_addr_t *a)
{
    const struct sockaddr *s = sa;
    memset(a, 0, sizeof(*a));
    if (s->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = sa;
        a->family = 6, a->port = ntohs(s6->sin6_port), a->scope = s6->sin6_scope_id;
        memcpy(a->ip, &s6->sin6_addr, 16);
    } else {
        const struct sockaddr_in *s4 = sa;
        a->family = 4, a->port = ntohs(s4->sin_port);
        memcpy(a->ip, &s4->sin_addr, 4);
    }
}

void comm_net_describe(const comm_net_addr_t *a, char *buf, size_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    inet_ntop(a->family == 6 ? AF_INET6 : AF_INET, a->ip, ip, sizeof ip);
    snprintf(buf, len, a->family == 6 ? "[%s]:%u" : "%s:%u", ip, (unsigned)a->port);
}

/* Whether interface `name` is chosen by spec, NCCL_SOCKET_IFNAME-style: a
 * comma-separated list of name prefixes ("eth,ens"), "=" before the list for
 * exact names, "^" for a list of names to avoid. */
static bool if_chosen(const char *spec, const char *name)
{
    bool neg = spec[0] == '^', exact = false;
    if (neg) spec++;
    if (spec[0] == '=') exact = true, spec++;
    bool hit = false;
    for (const char *p = spec; *p && !hit;) {
        size_t n = strcspn(p, ",");
        if (n > 0 &&
            (exact ? strlen(name) == n && strncmp(name, p, n) == 0 : strncmp(name, p, n) == 0))
            hit = true;
        p += n + (p[n] == ',');
    }
    return neg ? !hit : hit;
}

int comm_net_ifaddr(const char *spec, int family, comm_net_addr_t *out, strata_error_t *err)
{
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0) {
        strata_error_set(err, STRATA_ERR_SYSTEM, "getifaddrs: %s", strerror(errno));
        return -1;
    }
    int found = 0;
    for (int pass = 0; pass < 2 && !found; pass++) /* the rendezvous family first */
        for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
            if (!i->ifa_addr || !(i->ifa_flags & IFF_UP) || !if_chosen(spec, i->ifa_name)) continue;
            int fam = i->ifa_addr->sa_family == AF_INET6  ? 6
                      : i->ifa_addr->sa_family == AF_INET ? 4
                                                          : 0;
            if (fam == 0 || (pass == 0 && fam != family)) continue;
            if (fam == 6 && IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr))
                continue; /* would need a scope on every peer */
            comm_net_from_sockaddr(i->ifa_addr, out);
            out->port = 0;
            found = 1;
        }
    freeifaddrs(ifs);
    if (!found)
        strata_error_set(err, STRATA_ERR_INVALID,
                         "STRATA_IFNAME=%s: no interface that is up has a usable address of that "
                         "name",
                         spec);
    return found ? 0 : -1;
}

int comm_tcp_listen(comm_net_addr_t *a, strata_error_t *err)
{
    struct sockaddr_storage ss;
    socklen_t len = to_sockaddr(a, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 1024) != 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        char d[80];
        comm_net_describe(a, d, sizeof d);
        strata_error_set(err, STRATA_ERR_SYSTEM, "bootstrap: cannot listen for data at %s: %s", d,
                         strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    comm_net_from_sockaddr(&ss, a);
    return fd;
}

/* ==== Connection set-up ==== */

static void auth_frame(const char *token, const unsigned char id[COMM_TCP_ID], int from, int to,
                       int stream, unsigned char b[TCP_AUTH_LEN])
{
    memcpy(b, "STRD", 4);
    put32(b + 4, (uint32_t)from), put32(b + 8, (uint32_t)to), put32(b + 12, (uint32_t)stream);
    comm_boot_mac(token, TCP_LABEL_DATA, id, NULL, b, 16, b + 16);
}

static void tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Dial peer p's listener for stream j and prove the token; retried until
 * the deadline (its listener exists: it was published, but a full backlog
 * may refuse). */
static int dial(strata_comm_t *c, const char *token, const unsigned char *id,
                const comm_net_addr_t *a, int p, int j, double deadline, strata_error_t *err)
{
    struct sockaddr_storage ss;
    socklen_t len = to_sockaddr(a, &ss);
    const char *why = "timed out";
    while (util_now() < deadline) {
        int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) break;
        int r = connect(fd, (struct sockaddr *)&ss, len);
        if (r != 0 && errno == EINPROGRESS) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            double left = deadline - util_now();
            int e = 0;
            socklen_t el = sizeof e;
            int ms = left > 1 ? 1000 : left > 0 ? (int)(left * 1000) + 1 : 0; /* never -1 */
            r = poll(&pf, 1, ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 &&
                        e == 0
                    ? 0
                    : -1;
            errno = e ? e : ETIMEDOUT;
        }
        if (r == 0) {
            unsigned char b[TCP_AUTH_LEN];
            auth_frame(token, id, c->rank, p, j, b);
            tune(fd);
            if (send(fd, b, sizeof b, MSG_NOSIGNAL) == (ssize_t)sizeof b) return fd;
        }
        why = strerror(errno);
        close(fd);
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    char d[80];
    comm_net_describe(a, d, sizeof d);
    strata_error_set(err, STRATA_ERR_TIMEOUT,
                     "bootstrap: rank %d cannot connect to rank %d at %s: %s", c->rank, p, d, why);
    return -1;
}

typedef struct tcp_pending {
    int fd;
    double until;
    size_t got;
    unsigned char b[TCP_AUTH_LEN];
} tcp_pending_t;

/* Check a complete auth frame; the (peer, stream) it opens, or -1. */
static int check_auth(strata_comm_t *c, const char *token, const unsigned char *id,
                      const unsigned char b[TCP_AUTH_LEN], int *stream_p)
{
    unsigned char want[TCP_AUTH_LEN];
    uint32_t from = get32(b + 4), to = get32(b + 8), j = get32(b + 12);
    if (memcmp(b, "STRD", 4) != 0 || to != (uint32_t)c->rank || from >= (uint32_t)c->size ||
        (int)from <= c->rank || !c->remote[from] || j >= (uint32_t)c->tcp->nstreams)
        return -1;
    auth_frame(token, id, (int)from, c->rank, (int)j, want);
    if (memcmp(want + 16, b + 16, COMM_BOOT_MAC) != 0 || c->tcp->peer[from].s[j].fd >= 0) return -1;
    *stream_p = (int)j;
    return (int)from;
}

static void drop(tcp_pending_t *pd, int *n, int i, const char *why, int *logged)
{
    if ((*logged)++ < 10)
        strata_log(STRATA_LOG_WARN, "bootstrap: dropped data connection: %s", why);
    close(pd[i].fd);
    pd[i] = pd[--*n];
}

/* Accept `want` authenticated streams from higher ranks on lfd. */
static strata_status_t accept_streams(strata_comm_t *c, const char *token, const unsigned char *id,
                                      int lfd, int want, double deadline, strata_error_t *err)
{
    tcp_pending_t pd[TCP_PENDING_MAX];
    struct pollfd pf[TCP_PENDING_MAX + 1];
    int n = 0, logged = 0;
    while (want > 0) {
        double now = util_now();
        if (now >= deadline) {
            while (n > 0)
                close(pd[--n].fd);
            return strata_error_set(err, STRATA_ERR_TIMEOUT,
                                    "bootstrap: rank %d: %d data connection(s) from ranks on other "
                                    "hosts did not arrive in time",
                                    c->rank, want);
        }
        for (int i = n - 1; i >= 0; i--)
            if (pd[i].until <= now) drop(pd, &n, i, "no valid greeting within 2 s", &logged);
        pf[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (int i = 0; i < n; i++)
            pf[i + 1] = (struct pollfd){.fd = pd[i].fd, .events = POLLIN};
        if (poll(pf, (nfds_t)n + 1, 50) <= 0) continue;
        for (int i = n - 1; i >= 0; i--) {
            if (!pf[i + 1].revents) continue;
            ssize_t r = recv(pd[i].fd, pd[i].b + pd[i].got, TCP_AUTH_LEN - pd[i].got, MSG_DONTWAIT);
            if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (r <= 0) {
                drop(pd, &n, i, "closed before its greeting", &logged);
                continue;
            }
            if ((pd[i].got += (size_t)r) < TCP_AUTH_LEN) continue;
            int j, p = check_auth(c, token, id, pd[i].b, &j);
            if (p < 0) {
                drop(pd, &n, i, "not a rank of this job (bad greeting or proof)", &logged);
                continue;
            }
            c->tcp->peer[p].s[j].fd = pd[i].fd;
            tune(pd[i].fd);
            pd[i] = pd[--n];
            want--;
        }
        while (pf[0].revents && n < TCP_PENDING_MAX) {
            int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) break;
            pd[n++] = (tcp_pending_t){.fd = fd, .until = util_now() + TCP_ACCEPT_WAIT};
        }
    }
    while (n > 0)
        close(pd[--n].fd);
    return STRATA_OK;
}

strata_status_t comm_tcp_connect(strata_comm_t *c, const char *token,
                                 const unsigned char id[COMM_TCP_ID], const comm_net_addr_t *addrs,
                                 int nstreams, int lfd, double deadline, strata_error_t *err)
{
    comm_tcp_t *t = c->tcp = util_calloc(1, sizeof(*t));
    if (!t || !(t->peer = util_calloc((size_t)c->size, sizeof(tcp_peer_t))))
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    t->ep = -1;
    t->nstreams = nstreams;
    const char *sp = getenv("STRATA_TCP_SPIN");
    t->spin = sp && *sp ? (unsigned)strtoul(sp, NULL, 10) : comm_cpus_allowed() == 1 ? TCP_SPIN : 0;
    const char *yl = getenv("STRATA_TCP_YIELDS");
    t->yields = yl && *yl ? (unsigned)strtoul(yl, NULL, 10) : t->spin ? 0 : TCP_YIELDS;
    t->cid = get32(id);
    for (int p = 0; p < c->size; p++) {
        for (int j = 0; j < COMM_TCP_MAX_STREAMS; j++)
            t->peer[p].s[j] = (tcp_stream_t){.fd = -1, .rseq = (uint64_t)j, .ready = true};
        if (p != c->rank && !c->remote[p]) t->has_local = true;
    }
    /* Test hook: wait this many seconds before dialing, so a test can meet
     * the other ranks' data listeners open (tests/netns/netns_test.sh). */
    const char *delay = getenv("STRATA_TEST_DIAL_DELAY");
    if (delay && atof(delay) > 0 && atof(delay) < 30) {
        struct timespec ts = {(time_t)atof(delay), 0};
        nanosleep(&ts, NULL);
    }
    int want = 0;
    for (int p = 0; p < c->size; p++) {
        if (!c->remote[p]) continue;
        if (p > c->rank) {
            want += nstreams;
            continue;
        }
        for (int j = 0; j < nstreams; j++)
            if ((t->peer[p].s[j].fd = dial(c, token, id, &addrs[p], p, j, deadline, err)) < 0)
                return err ? err->status : STRATA_ERR_TIMEOUT;
    }
    strata_status_t st = accept_streams(c, token, id, lfd, want, deadline, err);
    if (st != STRATA_OK) return st;
    if ((t->ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
        return strata_error_set(err, STRATA_ERR_SYSTEM, "epoll_create1: %s", strerror(errno));
    for (int p = 0; p < c->size; p++)
        for (int j = 0; c->remote[p] && j < nstreams; j++) {
            tcp_stream_t *s = &t->peer[p].s[j];
            s->events = EPOLLIN;
            struct epoll_event e = {.events = EPOLLIN, .data.u64 = (uint64_t)p << 8 | (uint64_t)j};
            if (epoll_ctl(t->ep, EPOLL_CTL_ADD, s->fd, &e) != 0)
                return strata_error_set(err, STRATA_ERR_SYSTEM, "epoll_ctl: %s", strerror(errno));
        }
    c->tp = &comm_tcp_transport;
    return STRATA_OK;
}

int comm_tcp_test_fd(const strata_comm_t *c, int peer, int stream)
{
    if (!c->tcp || peer < 0 || peer >= c->size || !c->remote[peer] || stream < 0 ||
        stream >= c->tcp->nstreams)
        return -1;
    return c->tcp->peer[peer].s[stream].fd;
}

uint32_t comm_tcp_test_cid(const strata_comm_t *c)
{
    return c->tcp ? c->tcp->cid : 0;
}

int comm_tcp_local(const strata_comm_t *c, comm_net_addr_t *a, int *nstreams_p)
{
    for (int p = 0; c->tcp && p < c->size; p++) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        if (!c->remote[p] || c->tcp->peer[p].s[0].fd < 0 ||
            getsockname(c->tcp->peer[p].s[0].fd, (struct sockaddr *)&ss, &len) != 0)
            continue;
        comm_net_from_sockaddr(&ss, a);
        a->port = 0;
        *nstreams_p = c->tcp->nstreams;
        return 0;
    }
    return -1;
}
