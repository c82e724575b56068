/*
 * tcpbound.c — what loopback TCP carries for exactly a ring allreduce's
 * traffic, with nothing of strata in the way: P processes, a full mesh of
 * K TCP connections per pair over 127.0.0.1 (each used both ways, as
 * strata's transport does), and the ring's 2(P-1) steps of S/P bytes: in
 * each step every rank sends S/P bytes to its right neighbour and receives
 * S/P from its left one at once, piece by piece (piece j of a step on
 * stream j mod K), in one thread driving non-blocking sockets with epoll,
 * and a step ends when both its send and its receive are complete (as a
 * phase of strata's executor does). At P = 2 the right and the left
 * neighbour are the same rank: 32 MiB each way at once, then again, for
 * S = 64 MiB.
 *
 * Modes (-m): `raw` sends from and receives into the user buffers (the
 * transport's own cost: two kernel copies per byte, one each side);
 * `frame` adds strata's two user-space copies (a piece is gathered into a
 * frame buffer before its send and received into one, then copied out);
 * `reduce` is `frame` with the first P-1 steps' pieces added (float sum)
 * into the destination instead of copied, as the reduce-scatter half does;
 * `rrecv` receives straight into the user buffer in the allgather steps
 * and into one frame per stream in the reduce-scatter steps, and sends
 * from the user buffer (the fewest copies a transport can make for an
 * allreduce with a reduction).
 *
 * Output: one line per configuration: the median over rounds of the
 * slowest rank's time, the bus bandwidth 2(P-1)/P·S / t, and the CPU
 * (user + sys) per rank and round, the mean over ranks.
 *
 * Usage: tcpbound [-p P] [-s BYTES] [-c PIECE] [-k STREAMS] [-b SOCKBUF]
 *                 [-r ROUNDS] [-m raw|frame|reduce|rrecv] [-a]
 *   -b 0 keeps the kernel's autotuned socket buffers (strata's and Open
 *   MPI 4.1's default); -a binds rank r to CPU r mod ncpu.
 * (bench/tcp/bound.sh runs the sweep recorded in bench/README.md "tcp, fewer
 * copies".)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXP 8
#define MAXK 8
#define MAXR 64
#define MAXD 16

typedef enum { MODE_RAW, MODE_FRAME, MODE_REDUCE, MODE_RRECV } mode_t_;

typedef struct cfg {
    int p, k, rounds, bind, depth;
    size_t s, piece, sockbuf;
    mode_t_ mode;
} cfg_t;

typedef struct shared {
    pthread_barrier_t bar;
    double t[MAXR][MAXP];
    double cpu[MAXP];
    long waits[MAXP], stalls[MAXP];
} shared_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_self(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static void die(const char *what)
{
    fprintf(stderr, "tcpbound: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* ==== Connections ==== */

static void tune(int fd, size_t sockbuf)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (sockbuf) {
        int b = (int)sockbuf;
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b, sizeof b);
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &b, sizeof b);
    }
}

static int listener(uint16_t *port_p)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, len) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        die("listen");
    *port_p = ntohs(a.sin_port);
    return fd;
}

/* fd[q][j]: stream j to rank q. The higher rank dials and says who it is. */
static void mesh(const cfg_t *g, int r, int lfd, const uint16_t *port, int fd[MAXP][MAXK])
{
    for (int q = 0; q < r; q++)
        for (int j = 0; j < g->k; j++) {
            struct sockaddr_in a = {.sin_family = AF_INET,
                                    .sin_port = htons(port[q]),
                                    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
            int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            tune(s, g->sockbuf); /* before connect: the window scale is set there */
            if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0) die("connect");
            int hello[2] = {r, j};
            if (write(s, hello, sizeof hello) != (ssize_t)sizeof hello) die("hello");
            fd[q][j] = s;
        }
    for (int n = (g->p - 1 - r) * g->k; n > 0; n--) {
        int s = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        int hello[2];
        if (s < 0 || read(s, hello, sizeof hello) != (ssize_t)sizeof hello) die("accept");
        tune(s, g->sockbuf);
        fd[hello[0]][hello[1]] = s;
    }
    for (int q = 0; q < g->p; q++)
        for (int j = 0; q != r && j < g->k; j++)
            if (fcntl(fd[q][j], F_SETFL, fcntl(fd[q][j], F_GETFL) | O_NONBLOCK) != 0)
                die("nonblock");
}

/* ==== One ring step ==== */

/* One direction of a step on one stream: pieces j, j+K, j+2K, ... */
typedef struct lane {
    size_t piece; /* current piece index */
    size_t off;   /* bytes of it moved */
    bool staged;  /* send: piece copied into the frame */
} lane_t;

typedef struct step {
    const cfg_t *g;
    unsigned char *src, *dst;                       /* this step's send and receive blocks */
    unsigned char *sf[MAXK][MAXD], *rf[MAXK][MAXD]; /* frames per stream, used in turn */
    size_t bytes, npieces;
    bool add, direct_rx, direct_tx;
    long waits, stalls; /* epoll_wait calls, and those that timed out */
} step_t;

static size_t piece_len(const step_t *s, size_t i)
{
    size_t at = i * s->g->piece;
    return s->bytes - at < s->g->piece ? s->bytes - at : s->g->piece;
}

static void add_floats(unsigned char *d, const unsigned char *a, size_t n)
{
    float *x = (float *)(void *)d;
    const float *y = (const float *)(const void *)a;
    for (size_t i = 0; i < n / sizeof(float); i++)
        x[i] += y[i];
}

/* Write what the socket takes of stream j's pieces; true on progress. */
static bool tx(step_t *s, int fd, int j, lane_t *l)
{
    bool moved = false;
    while (l->piece < s->npieces) {
        size_t n = piece_len(s, l->piece);
        const unsigned char *from = s->src + l->piece * s->g->piece;
        if (!s->direct_tx) {
            unsigned char *f = s->sf[j][l->piece / (size_t)s->g->k % (size_t)s->g->depth];
            if (!l->staged) memcpy(f, from, n), l->staged = true;
            from = f;
        }
        ssize_t w = send(fd, from + l->off, n - l->off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) break;
        if (w <= 0) die("send");
        moved = true;
        if ((l->off += (size_t)w) == n) l->piece += (size_t)s->g->k, l->off = 0, l->staged = false;
    }
    return moved;
}

static bool rx(step_t *s, int fd, int j, lane_t *l)
{
    bool moved = false;
    while (l->piece < s->npieces) {
        size_t n = piece_len(s, l->piece);
        unsigned char *to = s->dst + l->piece * s->g->piece;
        unsigned char *f = s->rf[j][l->piece / (size_t)s->g->k % (size_t)s->g->depth];
        unsigned char *into = s->direct_rx ? to : f;
        ssize_t got = recv(fd, into + l->off, n - l->off, MSG_DONTWAIT);
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) break;
        if (got == 0) errno = ECONNRESET;
        if (got <= 0) die("recv");
        moved = true;
        if ((l->off += (size_t)got) < n) continue;
        if (s->add)
            add_floats(to, f, n);
        else if (!s->direct_rx)
            memcpy(to, f, n);
        l->piece += (size_t)s->g->k, l->off = 0;
    }
    return moved;
}

static void run_step(step_t *s, int ep, const int *out, const int *in)
{
    lane_t lt[MAXK], lr[MAXK];
    int k = s->g->k;
    for (int j = 0; j < k; j++)
        lt[j] = lr[j] = (lane_t){.piece = (size_t)j};
    for (;;) {
        bool moved = false, done = true;
        for (int j = 0; j < k; j++) {
            moved |= tx(s, out[j], j, &lt[j]);
            moved |= rx(s, in[j], j, &lr[j]);
            done &= lt[j].piece >= s->npieces && lr[j].piece >= s->npieces;
        }
        if (done) return;
        if (!moved) {
            struct epoll_event ev[2 * MAXK];
            int n = epoll_wait(ep, ev, 2 * MAXK, 100);
            if (n < 0 && errno != EINTR) die("epoll_wait");
            s->waits++, s->stalls += n == 0;
        }
    }
}

/* ==== A rank ==== */

static void add_fd(int ep, int fd)
{
    struct epoll_event e = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.fd = fd};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) != 0 && errno != EEXIST) die("epoll_ctl");
}

static void rank_main(const cfg_t *g, int r, int lfd, const uint16_t *port, shared_t *sh)
{
    alarm(300); /* a peer that died leaves this rank waiting: end it */
    if (g->bind) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(r % (int)sysconf(_SC_NPROCESSORS_ONLN), &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    int fd[MAXP][MAXK];
    mesh(g, r, lfd, port, fd);
    int right = (r + 1) % g->p, left = (r + g->p - 1) % g->p;
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) die("epoll_create1");
    for (int j = 0; j < g->k; j++)
        add_fd(ep, fd[right][j]), add_fd(ep, fd[left][j]);
    size_t blk = g->s / (size_t)g->p;
    unsigned char *src = malloc(g->s), *dst = malloc(g->s);
    step_t st = {.g = g, .bytes = blk, .npieces = (blk + g->piece - 1) / g->piece};
    if (!src || !dst) die("malloc");
    for (size_t i = 0; i < g->s / sizeof(float); i++)
        ((float *)(void *)src)[i] = (float)(i % 7), ((float *)(void *)dst)[i] = 1;
    for (int j = 0; j < g->k; j++)
        for (int d = 0; d < g->depth; d++)
            if (!(st.sf[j][d] = malloc(g->piece)) || !(st.rf[j][d] = malloc(g->piece)))
                die("malloc");
    double c0 = 0;
    for (int round = -1; round < g->rounds; round++) { /* round -1 warms up */
        pthread_barrier_wait(&sh->bar);
        if (round == 0) c0 = cpu_self(), st.waits = st.stalls = 0;
        double t0 = now();
        for (int k = 0; k < 2 * (g->p - 1); k++) {
            bool rs = k < g->p - 1; /* reduce-scatter half */
            st.src = (rs && k == 0 ? src : dst) + (size_t)((r - k + 2 * g->p) % g->p) * blk;
            st.dst = dst + (size_t)((r - k - 1 + 2 * g->p) % g->p) * blk;
            st.add = rs && (g->mode == MODE_REDUCE || g->mode == MODE_RRECV);
            st.direct_tx = g->mode == MODE_RAW || g->mode == MODE_RRECV;
            st.direct_rx = g->mode == MODE_RAW || (g->mode == MODE_RRECV && !rs);
            run_step(&st, ep, fd[right], fd[left]);
        }
        if (round >= 0) sh->t[round][r] = now() - t0;
    }
    sh->cpu[r] = (cpu_self() - c0) / g->rounds;
    sh->waits[r] = st.waits, sh->stalls[r] = st.stalls;
    pthread_barrier_wait(&sh->bar); /* nobody closes while a peer still reads */
}

/* ==== Driver ==== */

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static size_t size_arg(const char *a)
{
    char *e;
    double v = strtod(a, &e);
    size_t m = *e == 'K' ? 1024 : *e == 'M' ? 1024 * 1024 : *e == 'G' ? 1024 * 1024 * 1024 : 1;
    return (size_t)(v * (double)m);
}

static const char *mode_name[] = {"raw", "frame", "reduce", "rrecv"};

int main(int argc, char **argv)
{
    cfg_t g = {.p = 2, .k = 2, .depth = 1, .rounds = 7, .s = 64u << 20, .piece = 256u << 10};
    int o;
    while ((o = getopt(argc, argv, "p:s:c:k:b:r:m:d:a")) != -1) {
        if (o == 'p')
            g.p = atoi(optarg);
        else if (o == 's')
            g.s = size_arg(optarg);
        else if (o == 'c')
            g.piece = size_arg(optarg);
        else if (o == 'k')
            g.k = atoi(optarg);
        else if (o == 'b')
            g.sockbuf = size_arg(optarg);
        else if (o == 'r')
            g.rounds = atoi(optarg);
        else if (o == 'a')
            g.bind = 1;
        else if (o == 'd')
            g.depth = atoi(optarg);
        else if (o == 'm') {
            int m = 0;
            while (m < 4 && strcmp(optarg, mode_name[m]) != 0)
                m++;
            if (m == 4) goto usage;
            g.mode = (mode_t_)m;
        } else
            goto usage;
    }
    if (g.p < 2 || g.p > MAXP || g.k < 1 || g.k > MAXK || g.rounds < 1 || g.rounds > MAXR ||
        g.depth < 1 || g.depth > MAXD || g.piece < 64 || g.s < (size_t)g.p * sizeof(float) ||
        g.s % ((size_t)g.p * sizeof(float)))
        goto usage;
    shared_t *sh =
        mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) die("mmap");
    pthread_barrierattr_t ba;
    pthread_barrierattr_init(&ba);
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&sh->bar, &ba, (unsigned)g.p);
    int lfd[MAXP];
    uint16_t port[MAXP];
    for (int r = 0; r < g.p; r++)
        lfd[r] = listener(&port[r]);
    for (int r = 0; r < g.p; r++) {
        pid_t pid = fork();
        if (pid < 0) die("fork");
        if (pid == 0) {
            rank_main(&g, r, lfd[r], port, sh);
            _exit(0);
        }
    }
    int bad = 0, stt;
    for (int r = 0; r < g.p; r++)
        if (wait(&stt) < 0 || !WIFEXITED(stt) || WEXITSTATUS(stt) != 0) bad = 1;
    if (bad) {
        fprintf(stderr, "tcpbound: a rank failed\n");
        return 1;
    }
    double t[MAXR], cpu = 0;
    long waits = 0, stalls = 0;
    for (int i = 0; i < g.rounds; i++) {
        t[i] = 0;
        for (int r = 0; r < g.p; r++)
            t[i] = sh->t[i][r] > t[i] ? sh->t[i][r] : t[i];
    }
    for (int r = 0; r < g.p; r++)
        cpu += sh->cpu[r] / g.p, waits += sh->waits[r], stalls += sh->stalls[r];
    qsort(t, (size_t)g.rounds, sizeof(double), cmp);
    double med = g.rounds % 2 ? t[g.rounds / 2] : (t[g.rounds / 2 - 1] + t[g.rounds / 2]) / 2;
    double bus = 2.0 * (g.p - 1) / g.p * (double)g.s / med;
    printf(
        "P %d  S %zu  piece %zu  streams %d  sockbuf %s%zu  mode %-6s  median %8.2f ms  best %8.2f "
        "ms  busbw %5.2f GB/s  depth %d  cpu/rank %6.2f ms  waits/rank/round %ld%s\n",
        g.p, g.s, g.piece, g.k, g.sockbuf ? "" : "auto", g.sockbuf, mode_name[g.mode], med * 1e3,
        t[0] * 1e3, bus / 1e9, g.depth, cpu * 1e3, waits / g.p / g.rounds,
        stalls ? "  (epoll timed out: stalls)" : "");
    return 0;
usage:
    fprintf(stderr,
            "usage: tcpbound [-p 2..%d] [-s BYTES] [-c PIECE] [-k 1..%d] [-b SOCKBUF] "
            "[-r 1..%d] [-m raw|frame|reduce|rrecv] [-d 1..%d] [-a]\n",
            MAXP, MAXK, MAXR, MAXD);
    return 2;
}
