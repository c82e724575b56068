/*
 * net.c — TCP latency and bandwidth, over loopback (a server thread in
 * this process) or to a peer running `strata probe --serve PORT`.
 *
 * Protocol (client → server): a header of three uint64 (samples, trips,
 * stream bytes), then per sample: `trips` 8-byte ping-pongs (the server
 * echoes each), then `stream bytes` which the server acknowledges with one
 * byte once all arrived. latency = batch / (2 × trips); bandwidth = bytes
 * / (time until the acknowledgement − one latency). TCP_NODELAY on both
 * ends; every socket operation times out after IO_TIMEOUT_S.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define IO_TIMEOUT_S 5
#define CHUNK        (256 * 1024)

static void tune(int fd)
{
    int one = 1;
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int io_all(int fd, void *buf, size_t n, bool out)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k, n -= (size_t)k;
    }
    return 0;
}

/* Serve one client on the connected socket fd: echo and sink. */
static int serve_fd(int fd)
{
    uint64_t h[3];
    tune(fd);
    if (io_all(fd, h, sizeof(h), false) != 0 || h[0] > PROBE_MAX_REPS || h[1] > 1000000 ||
        h[2] > ((uint64_t)1 << 30))
        return -1;
    unsigned char *buf = util_malloc(CHUNK);
    int rc = buf ? 0 : -1;
    for (uint64_t s = 0; s < h[0] && rc == 0; s++) {
        for (uint64_t t = 0; t < h[1] && rc == 0; t++)
            rc = io_all(fd, buf, 8, false) || io_all(fd, buf, 8, true) ? -1 : 0;
        for (uint64_t left = h[2]; left > 0 && rc == 0;) {
            size_t k = left < CHUNK ? (size_t)left : CHUNK;
            rc = io_all(fd, buf, k, false);
            left -= k;
        }
        if (rc == 0) rc = io_all(fd, buf, 1, true);
    }
    util_free(buf);
    return rc;
}

static void *serve_thread(void *arg)
{
    int lfd = *(int *)arg, fd = accept(lfd, NULL, NULL);
    if (fd >= 0) {
        serve_fd(fd);
        close(fd);
    }
    return NULL;
}

typedef struct tcp_run {
    int fd, samples;
    uint64_t trips, bytes;
    double lat[PROBE_MAX_REPS], bw[PROBE_MAX_REPS];
} tcp_run_t;

static int client(tcp_run_t *t)
{
    uint64_t h[3] = {(uint64_t)t->samples, t->trips, t->bytes};
    unsigned char *buf = util_malloc(CHUNK);
    int rc = buf && io_all(t->fd, h, sizeof(h), true) == 0 ? 0 : -1;
    if (buf) memset(buf, 7, CHUNK);
    for (int s = 0; s < t->samples && rc == 0; s++) {
        double t0 = util_now();
        for (uint64_t i = 0; i < t->trips && rc == 0; i++)
            rc = io_all(t->fd, buf, 8, true) || io_all(t->fd, buf, 8, false) ? -1 : 0;
        t->lat[s] = (util_now() - t0) / (2.0 * (double)t->trips);
        t0 = util_now();
        for (uint64_t left = t->bytes; left > 0 && rc == 0;) {
            size_t k = left < CHUNK ? (size_t)left : CHUNK;
            rc = io_all(t->fd, buf, k, true);
            left -= k;
        }
        if (rc == 0) rc = io_all(t->fd, buf, 1, false);
        t->bw[s] = strata_probe_bandwidth((double)t->bytes, util_now() - t0 - t->lat[s]);
    }
    util_free(buf);
    return rc;
}

static int connect_to(const char *peer, strata_error_t *err)
{
    char host[96];
    const char *colon = strrchr(peer, ':');
    if (!colon || colon == peer || (size_t)(colon - peer) >= sizeof(host)) {
        strata_error_set(err, STRATA_ERR_INVALID, "probe: peer '%s' is not host:port", peer);
        return -1;
    }
    memcpy(host, peer, (size_t)(colon - peer));
    host[colon - peer] = 0;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0 || !ai) {
        strata_error_set(err, STRATA_ERR_NOT_FOUND, "probe: cannot resolve peer '%s'", peer);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) tune(fd);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        strata_error_set(err, STRATA_ERR_IO, "probe: cannot connect to peer '%s': %s", peer,
                         strerror(errno));
        if (fd >= 0) close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

/* A listening socket on addr:port (port 0: any free port, written back). */
static int listen_on(uint32_t addr, int *port, strata_error_t *err)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_addr.s_addr = htonl(addr), .sin_port = htons((uint16_t)*port)};
    socklen_t len = sizeof(sa);
    if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        strata_error_set(err, STRATA_ERR_SYSTEM, "probe: cannot listen on port %d: %s", *port,
                         strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

strata_status_t strata_probe_serve(int port, double timeout_s, strata_error_t *err)
{
    if (port < 1 || port > 65535)
        return strata_error_set(err, STRATA_ERR_INVALID, "probe: port %d out of 1..65535", port);
    int lfd = listen_on(INADDR_ANY, &port, err);
    if (lfd < 0) return STRATA_ERR_SYSTEM;
    if (!(timeout_s > 0) || timeout_s > 86400)
        timeout_s = 60; /* never unbounded: SO_RCVTIMEO 0 would wait forever */
    struct timeval tv = {.tv_sec = (long)timeout_s,
                         .tv_usec = (long)((timeout_s - (double)(long)timeout_s) * 1e6)};
    if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;
    setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)); /* bounds accept() */
    int fd = accept(lfd, NULL, NULL);
    close(lfd);
    if (fd < 0)
        return strata_error_set(err, STRATA_ERR_TIMEOUT, "probe: no peer connected within %g s",
                                timeout_s);
    int rc = serve_fd(fd);
    close(fd);
    return rc == 0 ? STRATA_OK
                   : strata_error_set(err, STRATA_ERR_PROTOCOL, "probe: the peer broke off");
}

strata_status_t probe_net(probe_ctx_t *x, double budget, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    const char *peer = x->opts->peer;
    tcp_run_t t = {.samples = x->opts->quick ? 5 : 11,
                   .trips = x->opts->quick ? 100 : 500,
                   .bytes = x->opts->quick ? (uint64_t)4 << 20 : (uint64_t)32 << 20};
    pthread_t th;
    int lfd = -1, port = 0;
    if (peer) {
        snprintf(res->tcp_target, sizeof(res->tcp_target), "%s", peer);
        if ((t.fd = connect_to(peer, err)) < 0) return err ? err->status : STRATA_ERR_IO;
    } else {
        snprintf(res->tcp_target, sizeof(res->tcp_target), "loopback");
        if ((lfd = listen_on(INADDR_LOOPBACK, &port, err)) < 0) return STRATA_ERR_SYSTEM;
        if (pthread_create(&th, NULL, serve_thread, &lfd) != 0) {
            close(lfd);
            return strata_error_set(err, STRATA_ERR_SYSTEM, "probe: cannot start a thread");
        }
        char where[32];
        snprintf(where, sizeof(where), "127.0.0.1:%d", port);
        t.fd = connect_to(where, err);
        if (t.fd < 0) shutdown(lfd, SHUT_RDWR); /* wakes accept() */
    }
    int rc = t.fd >= 0 ? client(&t) : -1;
    if (t.fd >= 0) close(t.fd);
    if (!peer) {
        pthread_join(th, NULL);
        close(lfd);
    }
    probe_tick(x, budget, 1);
    if (rc != 0)
        return err && err->status
                   ? err->status
                   : strata_error_set(err, STRATA_ERR_IO, "probe: tcp: the exchange with %s failed",
                                      res->tcp_target);
    strata_status_t st = strata_probe_stat(t.lat, (size_t)t.samples, &res->tcp_alpha, err);
    return st ? st : strata_probe_stat(t.bw, (size_t)t.samples, &res->tcp_bw, err);
}
