/*
 * bootstrap.c — rendezvous of a communicator's ranks over TCP, identity
 * exchange and shared-memory segment set-up.
 *
 * Protocol (all integers little-endian u32; every frame length-checked):
 *   rank r>0 -> 0   HELLO  "STRH" ver=1 toklen token rank size pid host[64]
 *   0 -> r          WELCOME "STRW" status; if 0: size × (pid host[64]),
 *                   namelen name (the segment); else msglen msg
 *   r -> 0          MAPPED "STRM" status
 *   0 -> r          GO     "STRG" status  (0 once every rank mapped and
 *                   the segment is unlinked)
 * Rank 0 listens at the root address and accepts connections one at a time;
 * the first bytes of each must be a HELLO with the job token, read within
 * 2 s: anything else (no token, a wrong one, garbage, silence) is closed and
 * logged, and accepting continues, so a stray connection cannot stop the
 * job. Other ranks retry connecting until the deadline (rank 0 may start
 * later). Every socket operation waits with poll() bounded by the call's
 * deadline. The sockets are closed once the segment is shared: intra-host
 * collectives need nothing else, and peer death is then seen through pids.
 *
 * Workload: once per communicator; correctness and bounded time matter, not
 * speed.
 */
#define _GNU_SOURCE
#include "comm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HELLO_WAIT_S 2.0
#define TOKEN_MAX    255
#define HOST_LEN     64

/* ==== Framing ==== */

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16), p[3] = (unsigned char)(v >> 24);
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Read or write exactly len bytes before deadline. 0 ok; -1 with a reason. */
static int sock_io(int fd, void *buf, size_t len, double deadline, bool wr, const char **why)
{
    unsigned char *p = buf;
    while (len > 0) {
        double left = deadline - util_now();
        if (left <= 0) {
            *why = "timed out";
            return -1;
        }
        struct pollfd pf = {.fd = fd, .events = wr ? POLLOUT : POLLIN};
        int r = poll(&pf, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n == 0) {
            *why = "connection closed";
            return -1;
        }
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
            *why = strerror(errno);
            return -1;
        }
        p += n, len -= (size_t)n;
    }
    return 0;
}

static int parse_root(const char *root, struct sockaddr_in *sa, strata_error_t *err)
{
    char host[256];
    const char *colon = root ? strrchr(root, ':') : NULL;
    if (!colon || colon == root || (size_t)(colon - root) >= sizeof(host) || !colon[1]) {
        strata_error_set(err, STRATA_ERR_INVALID, "rendezvous address '%s' is not host:port",
                         root ? root : "(null)");
        return -1;
    }
    memcpy(host, root, (size_t)(colon - root));
    host[colon - root] = 0;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port <= 0 || port > 65535) {
        strata_error_set(err, STRATA_ERR_INVALID, "rendezvous port in '%s' is not 1..65535", root);
        return -1;
    }
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res) {
        strata_error_set(err, STRATA_ERR_INVALID, "cannot resolve rendezvous host '%s'", host);
        return -1;
    }
    memcpy(sa, res->ai_addr, sizeof(*sa));
    sa->sin_port = htons((uint16_t)port);
    freeaddrinfo(res);
    return 0;
}

void comm_host_id(char out[64])
{
    char host[40] = "", boot[40] = "";
    gethostname(host, sizeof(host) - 1);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof(boot), f)) boot[0] = 0;
        fclose(f);
        boot[strcspn(boot, "\n")] = 0;
    }
    memset(out, 0, 64);
    snprintf(out, 64, "%.31s/%.31s", host, boot);
}

static bool token_eq(const char *a, size_t alen, const char *b, size_t blen)
{
    unsigned char d = alen != blen;
    for (size_t i = 0; i < alen && i < blen; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

/* ==== Rank 0 ==== */

typedef struct boot_server {
    strata_comm_t *c;
    const char *token;
    int lfd;
    int *fds;
    char (*hosts)[HOST_LEN];
    double deadline;
} boot_server_t;

/* Read and check one HELLO on a fresh connection. Returns the rank, or -1
 * with *why set. */
static int read_hello(boot_server_t *s, int fd, const char **why)
{
    double dl = util_now() + HELLO_WAIT_S;
    if (dl > s->deadline) dl = s->deadline;
    unsigned char h[12], tok[TOKEN_MAX], tail[12 + HOST_LEN];
    if (sock_io(fd, h, 12, dl, false, why)) return -1;
    uint32_t toklen = get32(h + 8);
    if (memcmp(h, "STRH", 4) != 0 || get32(h + 4) != 1 || toklen == 0 || toklen > TOKEN_MAX) {
        *why = "not a strata hello";
        return -1;
    }
    if (sock_io(fd, tok, toklen, dl, false, why) || sock_io(fd, tail, sizeof(tail), dl, false, why))
        return -1;
    if (!token_eq((char *)tok, toklen, s->token, strlen(s->token))) {
        *why = "wrong job token";
        return -1;
    }
    uint32_t rank = get32(tail), size = get32(tail + 4);
    if (size != (uint32_t)s->c->size || rank == 0 || rank >= size) {
        *why = "rank or size does not match this job";
        return -1;
    }
    if (s->fds[rank] >= 0) {
        *why = "rank already connected";
        return -1;
    }
    s->c->pids[rank] = (int32_t)get32(tail + 8);
    memcpy(s->hosts[rank], tail + 12, HOST_LEN);
    s->hosts[rank][HOST_LEN - 1] = 0;
    return (int)rank;
}

static strata_status_t accept_all(boot_server_t *s, strata_error_t *err)
{
    int missing = s->c->size - 1;
    while (missing > 0) {
        double left = s->deadline - util_now();
        if (left <= 0)
            return strata_error_set(err, STRATA_ERR_TIMEOUT,
                                    "bootstrap: %d of %d ranks did not connect in time", missing,
                                    s->c->size - 1);
        struct pollfd pf = {.fd = s->lfd, .events = POLLIN};
        if (poll(&pf, 1, (int)(left * 1000) + 1) <= 0) continue;
        struct sockaddr_in peer;
        socklen_t plen = sizeof(peer);
        int fd = accept(s->lfd, (struct sockaddr *)&peer, &plen);
        if (fd < 0) continue;
        const char *why = "";
        int r = read_hello(s, fd, &why);
        if (r < 0) {
            char ip[INET_ADDRSTRLEN] = "?";
            inet_ntop(AF_INET, &peer.sin_addr, ip, sizeof(ip));
            strata_log(STRATA_LOG_WARN, "bootstrap: dropped connection from %s:%u: %s", ip,
                       ntohs(peer.sin_port), why);
            close(fd);
            continue;
        }
        s->fds[r] = fd;
        missing--;
    }
    return STRATA_OK;
}

static void send_status(boot_server_t *s, const char *magic, uint32_t status, const char *msg)
{
    unsigned char b[8 + 256];
    size_t mlen = msg ? strlen(msg) : 0;
    if (mlen > 255) mlen = 255;
    memcpy(b, magic, 4);
    put32(b + 4, status);
    if (msg) put32(b + 8, (uint32_t)mlen), memcpy(b + 12, msg, mlen);
    const char *why;
    for (int r = 1; r < s->c->size; r++)
        if (s->fds[r] >= 0) sock_io(s->fds[r], b, msg ? 12 + mlen : 8, s->deadline, true, &why);
}

static strata_status_t send_welcome(boot_server_t *s, const char *name, strata_error_t *err)
{
    size_t n = (size_t)s->c->size, nlen = strlen(name);
    size_t len = 12 + n * (4 + HOST_LEN) + 4 + nlen;
    unsigned char *b = util_calloc(1, len);
    if (!b) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    memcpy(b, "STRW", 4);
    put32(b + 4, 0);
    put32(b + 8, (uint32_t)n);
    unsigned char *p = b + 12;
    for (size_t i = 0; i < n; i++, p += 4 + HOST_LEN) {
        put32(p, (uint32_t)s->c->pids[i]);
        memcpy(p + 4, s->hosts[i], HOST_LEN);
    }
    put32(p, (uint32_t)nlen);
    memcpy(p + 4, name, nlen);
    strata_status_t st = STRATA_OK;
    const char *why = "";
    for (int r = 1; r < s->c->size && st == STRATA_OK; r++)
        if (sock_io(s->fds[r], b, len, s->deadline, true, &why))
            st = strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank %d: %s", r, why);
    util_free(b);
    return st;
}

static strata_status_t wait_mapped(boot_server_t *s, strata_error_t *err)
{
    for (int r = 1; r < s->c->size; r++) {
        unsigned char b[8];
        const char *why = "";
        if (sock_io(s->fds[r], b, 8, s->deadline, false, &why))
            return strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank %d: %s", r, why);
        if (memcmp(b, "STRM", 4) != 0 || get32(b + 4) != 0)
            return strata_error_set(err, STRATA_ERR_PEER,
                                    "bootstrap: rank %d could not map the segment", r);
    }
    return STRATA_OK;
}

static int listen_at(const struct sockaddr_in *sa, strata_error_t *err)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0) {
        strata_error_set(err, STRATA_ERR_SYSTEM, "socket: %s", strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0 || listen(fd, 128) != 0) {
        strata_error_set(err, STRATA_ERR_SYSTEM, "bootstrap: cannot listen on port %u: %s",
                         ntohs(sa->sin_port), strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* The listening socket `strata run` made for rank 0 (STRATA_ROOT_FD), if it
 * is a socket bound to the rendezvous port; used once. */
static int inherited_listener(const struct sockaddr_in *sa)
{
    const char *env = getenv("STRATA_ROOT_FD");
    if (!env || !*env) return -1;
    char *end;
    long fd = strtol(env, &end, 10);
    struct sockaddr_in got;
    socklen_t len = sizeof(got);
    if (*end || fd < 0 || fd > 65535 || getsockname((int)fd, (struct sockaddr *)&got, &len) != 0 ||
        got.sin_family != AF_INET || got.sin_port != sa->sin_port)
        return -1;
    unsetenv("STRATA_ROOT_FD");
    fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    return (int)fd;
}

static strata_status_t serve(strata_comm_t *c, const struct sockaddr_in *sa, const char *token,
                             double deadline, strata_error_t *err)
{
    boot_server_t s = {.c = c, .token = token, .deadline = deadline};
    s.fds = util_malloc((size_t)c->size * sizeof(int));
    s.hosts = util_calloc((size_t)c->size, HOST_LEN);
    if (!s.fds || !s.hosts) {
        util_free(s.fds);
        util_free(s.hosts);
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    }
    comm_host_id(s.hosts[0]);
    for (int i = 0; i < c->size; i++)
        s.fds[i] = -1;
    char name[128];
    bool created = false;
    strata_status_t st = STRATA_ERR_SYSTEM;
    s.lfd = inherited_listener(sa);
    if (s.lfd < 0) s.lfd = listen_at(sa, err);
    if (s.lfd < 0) goto out;
    st = accept_all(&s, err);
    close(s.lfd);
    if (st != STRATA_OK) goto out;
    for (int r = 1; r < c->size; r++)
        if (strcmp(s.hosts[r], s.hosts[0]) != 0) {
            st = strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                  "bootstrap: rank %d is on host %s, rank 0 on %s: ranks on "
                                  "different hosts need the TCP transport (not in this build)",
                                  r, s.hosts[r], s.hosts[0]);
            send_status(&s, "STRW", 1, err ? err->msg : "different hosts");
            goto out;
        }
    comm_seg_name(c, name, sizeof(name));
    st = comm_seg_create(c, name, err);
    if (st != STRATA_OK) {
        send_status(&s, "STRW", 1, err ? err->msg : "segment");
        goto out;
    }
    created = true;
    st = send_welcome(&s, name, err);
    if (st == STRATA_OK) st = wait_mapped(&s, err);
    shm_unlink(name); /* every rank has mapped it, or the job failed */
    send_status(&s, "STRG", st == STRATA_OK ? 0 : 1, NULL);
out:
    if (st != STRATA_OK && created) comm_seg_unmap(c);
    for (int i = 0; i < c->size; i++)
        if (s.fds[i] >= 0) close(s.fds[i]);
    util_free(s.fds);
    util_free(s.hosts);
    return st;
}

/* ==== Ranks > 0 ==== */

static int connect_by(const struct sockaddr_in *sa, double deadline, strata_error_t *err)
{
    while (util_now() < deadline) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) break;
        if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            return fd;
        }
        close(fd);
        struct timespec ts = {0, 20 * 1000 * 1000}; /* 20 ms between attempts */
        nanosleep(&ts, NULL);
    }
    strata_error_set(err, STRATA_ERR_TIMEOUT, "bootstrap: cannot reach rank 0 at port %u in time",
                     ntohs(sa->sin_port));
    return -1;
}

static strata_status_t send_hello(strata_comm_t *c, int fd, const char *token, double deadline,
                                  strata_error_t *err)
{
    size_t tl = strlen(token);
    unsigned char b[12 + TOKEN_MAX + 12 + HOST_LEN];
    memcpy(b, "STRH", 4);
    put32(b + 4, 1);
    put32(b + 8, (uint32_t)tl);
    memcpy(b + 12, token, tl);
    unsigned char *p = b + 12 + tl;
    put32(p, (uint32_t)c->rank);
    put32(p + 4, (uint32_t)c->size);
    put32(p + 8, (uint32_t)getpid());
    comm_host_id((char *)p + 12);
    const char *why = "";
    if (sock_io(fd, b, 12 + tl + 12 + HOST_LEN, deadline, true, &why))
        return strata_error_set(err, STRATA_ERR_PEER, "bootstrap: sending hello: %s", why);
    return STRATA_OK;
}

/* Read WELCOME: pids and the segment name. */
static strata_status_t read_welcome(strata_comm_t *c, int fd, double deadline, char *name,
                                    size_t nlen_max, strata_error_t *err)
{
    unsigned char h[12], rec[4 + HOST_LEN], nl[4];
    const char *why = "";
    if (sock_io(fd, h, 12, deadline, false, &why))
        return strata_error_set(err, STRATA_ERR_PEER, "bootstrap: waiting for rank 0: %s", why);
    if (memcmp(h, "STRW", 4) != 0)
        return strata_error_set(err, STRATA_ERR_PROTOCOL, "bootstrap: bad frame from rank 0");
    if (get32(h + 4) != 0) {
        char msg[256] = "";
        uint32_t ml = get32(h + 8);
        if (ml < sizeof(msg) && sock_io(fd, msg, ml, deadline, false, &why) == 0) msg[ml] = 0;
        return strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank 0 failed: %s", msg);
    }
    if (get32(h + 8) != (uint32_t)c->size)
        return strata_error_set(err, STRATA_ERR_PROTOCOL, "bootstrap: size mismatch with rank 0");
    for (int i = 0; i < c->size; i++) {
        if (sock_io(fd, rec, sizeof(rec), deadline, false, &why))
            return strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank 0: %s", why);
        c->pids[i] = (int32_t)get32(rec);
    }
    if (sock_io(fd, nl, 4, deadline, false, &why) || get32(nl) == 0 || get32(nl) >= nlen_max ||
        sock_io(fd, name, get32(nl), deadline, false, &why))
        return strata_error_set(err, STRATA_ERR_PROTOCOL, "bootstrap: bad segment name frame");
    name[get32(nl)] = 0;
    return STRATA_OK;
}

static strata_status_t join(strata_comm_t *c, const struct sockaddr_in *sa, const char *token,
                            double deadline, strata_error_t *err)
{
    int fd = connect_by(sa, deadline, err);
    if (fd < 0) return STRATA_ERR_TIMEOUT;
    char name[128];
    unsigned char b[8];
    const char *why = "";
    strata_status_t st = send_hello(c, fd, token, deadline, err);
    if (st == STRATA_OK) st = read_welcome(c, fd, deadline, name, sizeof(name), err);
    if (st == STRATA_OK) {
        st = comm_seg_attach(c, name, err);
        memcpy(b, "STRM", 4);
        put32(b + 4, st == STRATA_OK ? 0 : 1);
        if (sock_io(fd, b, 8, deadline, true, &why) && st == STRATA_OK)
            st = strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank 0: %s", why);
    }
    if (st == STRATA_OK &&
        (sock_io(fd, b, 8, deadline, false, &why) || memcmp(b, "STRG", 4) || get32(b + 4)))
        st = strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank 0 did not confirm start-up");
    if (st != STRATA_OK && c->seg) comm_seg_unmap(c);
    close(fd);
    return st;
}

strata_status_t comm_bootstrap(strata_comm_t *c, const char *root, const char *token,
                               strata_error_t *err)
{
    c->pids[c->rank] = (int32_t)getpid();
    double deadline = util_now() + c->timeout;
    if (c->size == 1) {
        char name[128];
        comm_seg_name(c, name, sizeof(name));
        strata_status_t st = comm_seg_create(c, name, err);
        shm_unlink(name);
        return st;
    }
    struct sockaddr_in sa;
    if (parse_root(root, &sa, err)) return STRATA_ERR_INVALID;
    return c->rank == 0 ? serve(c, &sa, token, deadline, err) : join(c, &sa, token, deadline, err);
}
