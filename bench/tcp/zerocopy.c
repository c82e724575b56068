/*
 * zerocopy.c — TCP send paths for large frames, measured side by side:
 * plain send() (the kernel copies the user buffer into socket buffers)
 * against MSG_ZEROCOPY (SO_ZEROCOPY; the kernel pins the user pages and
 * reports on the socket's error queue when it no longer needs them,
 * Documentation/networking/msg_zerocopy.rst) and vmsplice + splice (user
 * pages gifted to a pipe, the pipe spliced into the socket). The sender
 * sends TOTAL bytes in CHUNK-byte calls from one buffer; the receiver reads
 * them into one buffer. Each side reports wall time and its own user + sys
 * CPU (getrusage), and the zerocopy sender how many completions the kernel
 * marked SO_EE_CODE_ZEROCOPY_COPIED (it copied after all: loopback and any
 * delivery to a local socket, a veth into another namespace included, copy
 * the pages before queueing them to the receiver, so as not to pin them for
 * an unbounded time).
 *
 * Usage: zerocopy recv PORT
 *        zerocopy send plain|zc|splice HOST PORT TOTAL CHUNK
 * (bench/tcp/zerocopy.sh runs both on loopback and across two namespaces.)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static int die(const char *what)
{
    fprintf(stderr, "zerocopy: %s: %s\n", what, strerror(errno));
    return 1;
}

static int do_recv(int port)
{
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0) return die("listen");
    int fd = accept(l, NULL, NULL);
    if (fd < 0) return die("accept");
    size_t cap = 1 << 20;
    char *buf = malloc(cap);
    if (!buf) return die("malloc");
    memset(buf, 0, cap);
    double t0 = now(), c0 = cpu();
    long long got = 0;
    for (;;) {
        ssize_t n = recv(fd, buf, cap, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += n;
    }
    printf("recv %lld B in %.4f s, cpu %.4f s\n", got, now() - t0, cpu() - c0);
    return 0;
}

/* Reap zerocopy completions; counts notifications, sends covered and the
 * ones the kernel copied. Returns the highest send id completed + 1. */
static unsigned reap(int fd, unsigned *copied, unsigned *notes)
{
    static unsigned done;
    for (;;) {
        char ctl[128];
        struct msghdr mh = {.msg_control = ctl, .msg_controllen = sizeof ctl};
        if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) break;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
            struct sock_extended_err *e = (struct sock_extended_err *)CMSG_DATA(cm);
            if (e->ee_errno != 0 || e->ee_origin != SO_EE_ORIGIN_ZEROCOPY) continue;
            unsigned n = e->ee_data - e->ee_info + 1;
            (*notes)++;
            if (e->ee_code & SO_EE_CODE_ZEROCOPY_COPIED) *copied += n;
            if (e->ee_data + 1 > done) done = e->ee_data + 1;
        }
    }
    return done;
}

static int do_send(const char *mode, const char *host, int port, long long total, size_t chunk)
{
    int zc = strcmp(mode, "zc") == 0, sp = strcmp(mode, "splice") == 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (zc && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one) != 0)
        return die("SO_ZEROCOPY");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, host, &a.sin_addr);
    for (int i = 0; connect(fd, (struct sockaddr *)&a, sizeof a) != 0; i++) {
        if (i > 200) return die("connect");
        usleep(10000);
        close(fd);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (zc) setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one);
    }
    size_t span = (size_t)64 << 20; /* the user buffer the chunks come from */
    char *buf = aligned_alloc(4096, span);
    if (!buf) return die("malloc");
    memset(buf, 1, span);
    int pp[2] = {-1, -1};
    if (sp && pipe(pp) != 0) return die("pipe");
    if (sp) fcntl(pp[1], F_SETPIPE_SZ, (int)chunk);
    double t0 = now(), c0 = cpu();
    long long sent = 0;
    unsigned ids = 0, copied = 0, notes = 0;
    while (sent < total) {
        size_t off = (size_t)(sent % (long long)span), n = chunk;
        if (off + n > span) n = span - off;
        if ((long long)n > total - sent) n = (size_t)(total - sent);
        ssize_t w;
        if (sp) {
            struct iovec iov = {buf + off, n};
            w = vmsplice(pp[1], &iov, 1, 0);
            for (ssize_t left = w; left > 0;) {
                ssize_t s =
                    splice(pp[0], NULL, fd, NULL, (size_t)left, SPLICE_F_MOVE | SPLICE_F_MORE);
                if (s <= 0) return die("splice");
                left -= s;
            }
        } else {
            w = send(fd, buf + off, n, zc ? MSG_ZEROCOPY : 0);
            if (zc && w >= 0) ids++;
            if (zc && w < 0 && errno == ENOBUFS) { /* optmem full: wait for completions */
                struct pollfd p = {.fd = fd, .events = 0};
                poll(&p, 1, 100);
                reap(fd, &copied, &notes);
                continue;
            }
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return die("send");
        sent += w;
        if (zc && ids % 16 == 0) reap(fd, &copied, &notes);
    }
    shutdown(fd, SHUT_WR);
    while (zc && reap(fd, &copied, &notes) < ids) { /* every completion before the end */
        struct pollfd p = {.fd = fd, .events = 0};
        poll(&p, 1, 100);
    }
    char b;
    while (recv(fd, &b, 1, 0) > 0) /* the receiver's close: all bytes are in */
        ;
    double t = now() - t0;
    printf("send %-6s chunk %7zu: %lld B in %.4f s = %.3f GB/s, cpu %.4f s", mode, chunk, sent, t,
           (double)sent / t / 1e9, cpu() - c0);
    if (zc) printf(", %u sends, %u completions, %u copied by the kernel", ids, notes, copied);
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "recv") == 0) return do_recv(atoi(argv[2]));
    if (argc == 7 && strcmp(argv[1], "send") == 0)
        return do_send(argv[2], argv[3], atoi(argv[4]), atoll(argv[5]), (size_t)atol(argv[6]));
    fprintf(stderr,
            "usage: zerocopy recv PORT | zerocopy send plain|zc|splice HOST PORT TOTAL CHUNK\n");
    return 2;
}
