/*
 * bootstrap.c — rendezvous of a communicator's ranks, mutual proof of the
 * job token, identity exchange and shared-memory segment set-up.
 *
 * Protocol version 2 (integers little-endian u32; every frame has a fixed
 * or length-checked size; K = the job token, used as an HMAC-SHA256 key):
 *   0 -> r  CHALLENGE "STRC" ver Ns[32]                 on accept
 *   r -> 0  HELLO     "STRH" ver rank size pid host[64] Nc[32] mac[32]
 *                     mac = HMAC(K, "strata-v2 hello" Ns | bytes before mac)
 *   0 -> r  PROOF     "STRP" HMAC(K, "strata-v2 proof" Ns | hello before mac)
 *   0 -> r  WELCOME   "STRW" 0 size × (pid host[64]) namelen name mac[32]
 *                     mac = HMAC(K, "strata-v2 welcome" Ns Nc | frame before mac)
 *           or        "STRW" status msglen msg (start-up failed: why)
 *   r -> 0  MAPPED    "STRM" status
 *   0 -> r  GO        "STRG" status (0 once every rank mapped the segment
 *                     and it is unlinked)
 * The token itself never travels: each side proves it knows K over the
 * other side's fresh nonce (getrandom), so a listener that took the
 * rendezvous address learns nothing it could replay, and a rank refuses a
 * rank 0 that cannot prove K. MACs are compared in constant time.
 *
 * Rendezvous addresses: "host:port" (TCP; the token must be a secret), or
 * "local": a unix socket named after the job in a directory only this user
 * can enter ($XDG_RUNTIME_DIR/strata, else /tmp/strata-<uid>, created 0700
 * and checked), whose peers' uid is checked with SO_PEERCRED both ways. The
 * second needs no secret (strata_comm_init_env uses it under mpirun/srun
 * without STRATA_TOKEN): only processes of this user reach the socket.
 *
 * Rank 0 handles every unauthenticated connection at once (poll over up to
 * PENDING_MAX of them; beyond that the oldest is dropped), each with its own
 * 2 s deadline for a valid HELLO, so silent or slow strangers cannot delay
 * the job. Other ranks retry connecting until the deadline (rank 0 may
 * start later); a connection closed before the PROOF is retried too (rank
 * 0 may have dropped it). Under `strata run` the launcher reports ranks that
 * exited (STRATA_LAUNCH_FD), so a rank that ends before joining fails the
 * start-up at once instead of at the deadline. After the WELCOME, a rank
 * that sees rank 0 vanish removes the segment itself (rank 0 may have died
 * before unlinking it). Sockets are closed once the segment is shared.
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
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROTO_VER      2
#define HELLO_WAIT_S   2.0 /* a stranger's connection may cost this much, concurrently */
#define PENDING_MAX    256 /* unauthenticated connections handled at once */
#define DROP_LOG_MAX   10  /* dropped connections logged per start-up */
#define HOST_LEN       64
#define NONCE_LEN      COMM_BOOT_NONCE
#define MAC_LEN        COMM_BOOT_MAC
#define CHAL_LEN       (8 + NONCE_LEN)
#define HELLO_BODY     (20 + HOST_LEN + NONCE_LEN) /* magic ver rank size pid host Nc */
#define HELLO_LEN      (HELLO_BODY + MAC_LEN)
#define PROOF_LEN      (4 + MAC_LEN)
#define STATUS_MSG_MAX 255
#define REC_LEN        (4 + HOST_LEN)
#define LOCAL_HINT                                                                                 \
    " (only this user's processes on this host meet there: ranks on other hosts or of other "      \
    "users need the same STRATA_TOKEN and a TCP STRATA_ROOT)"

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

/* ==== Proofs ==== */

void comm_boot_mac(const char *key, const char *label, const unsigned char *na,
                   const unsigned char *nb, const void *body, size_t blen,
                   unsigned char out[COMM_BOOT_MAC])
{
    struct hmac_sha256_ctx h;
    hmac_sha256_set_key(&h, strlen(key), (const uint8_t *)key);
    hmac_sha256_update(&h, strlen(label) + 1, (const uint8_t *)label); /* NUL ends the label */
    if (na) hmac_sha256_update(&h, NONCE_LEN, na);
    if (nb) hmac_sha256_update(&h, NONCE_LEN, nb);
    if (blen) hmac_sha256_update(&h, blen, body);
    hmac_sha256_digest(&h, MAC_LEN, out);
    explicit_bzero(&h, sizeof(h));
}

static bool mac_ok(const unsigned char *want, const unsigned char *got)
{
    return memeql_sec(want, got, MAC_LEN) != 0; /* constant time */
}

static int nonce(unsigned char out[NONCE_LEN])
{
    size_t got = 0;
    while (got < NONCE_LEN) {
        ssize_t n = getrandom(out + got, NONCE_LEN - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    return 0;
}

/* Segment names reveal the job hash to every local user, so it is a keyed
 * hash of the token (HMAC), not a plain one: it tells nothing about it. */
void comm_job_hash(const char *token, char out[17])
{
    unsigned char m[MAC_LEN];
    comm_boot_mac(token, COMM_BOOT_LABEL_JOB, NULL, NULL, NULL, 0, m);
    for (int i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", m[i]);
}

/* Ranks with the same host identity share memory; others use TCP. It is
 * the host name, the boot id and the network namespace: processes in two
 * network namespaces (containers, the namespace tests' "hosts") are treated
 * as two hosts, since they usually do not share /dev/shm either.
 * STRATA_TRANSPORT=tcp makes every process its own host (TCP between all
 * ranks, for tests and comparisons); STRATA_HOST=<name> replaces the
 * namespace part (ranks naming the same host share memory).
 *
 * The id opens with the CPUs the job may use on this kernel (comm_job_cpus,
 * 4 digits) and a '/': not part of the identity (comm_id_same skips it), it
 * tells every rank how many processors each kernel's ranks share, for the
 * cost model's oversubscription terms (comm_kernels). Host name and boot id
 * (the first two fields after it) name the kernel: namespaces of one kernel
 * share its CPUs. */
void comm_host_id(char out[64])
{
    char host[40] = "", boot[40] = "", ns[64] = "";
    gethostname(host, sizeof(host) - 1);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof(boot), f)) boot[0] = 0;
        fclose(f);
        boot[strcspn(boot, "\n")] = 0;
    }
    const char *tr = getenv("STRATA_TRANSPORT"), *name = getenv("STRATA_HOST");
    if (tr && strcmp(tr, "tcp") == 0) {
        snprintf(ns, sizeof ns, "pid:%ld", (long)getpid());
    } else if (name && *name) {
        snprintf(ns, sizeof ns, "h:%.8s", name);
    } else {
        struct stat st;
        if (stat("/proc/self/ns/net", &st) == 0)
            snprintf(ns, sizeof ns, "n:%lu", (unsigned long)st.st_ino);
    }
    long cpus = comm_job_cpus();
    cpus = cpus < 1 ? 1 : cpus > 9999 ? 9999 : cpus;
    memset(out, 0, 64);
    snprintf(out, 64, "%04ld/%.16s/%.24s/%.14s", cpus, host, boot, ns);
}

/* The identity part of a host id (past the CPU count). */
static const char *id_host(const char *id)
{
    return strlen(id) > 5 && id[4] == '/' ? id + 5 : id;
}

static bool comm_id_same(const char *a, const char *b)
{
    return strcmp(id_host(a), id_host(b)) == 0;
}

/* Length of the kernel part of an identity: host name and boot id. */
static size_t id_kernel_len(const char *h)
{
    const char *s = strchr(h, '/');
    s = s ? strchr(s + 1, '/') : NULL;
    return s ? (size_t)(s - h) : strlen(h);
}

void comm_kernels(char (*ids)[64], int n, int *kernels_p, int *cores_p)
{
    int kernels = 0, cores = 0;
    for (int r = 0; r < n; r++) {
        const char *h = id_host(ids[r]);
        size_t len = id_kernel_len(h);
        bool seen = false;
        for (int q = 0; q < r && !seen; q++)
            seen = id_kernel_len(id_host(ids[q])) == len && !memcmp(id_host(ids[q]), h, len);
        if (seen) continue;
        /* a new kernel: its ranks, and the fewest CPUs any of them may use */
        int ranks = 0, cpus = 0;
        for (int q = r; q < n; q++) {
            const char *o = id_host(ids[q]);
            if (id_kernel_len(o) != len || memcmp(o, h, len)) continue;
            int k = o != ids[q] ? atoi(ids[q]) : 1;
            ranks++, cpus = cpus == 0 || k < cpus ? k : cpus;
        }
        kernels++, cores += ranks < cpus ? ranks : cpus;
    }
    *kernels_p = kernels, *cores_p = cores;
}

/* ==== Launcher events ==== */

/* `strata run` hands each rank one end of a socket pair (STRATA_LAUNCH_FD =
 * "fd:rank:size") on which it sends (rank, wait status) whenever a rank
 * exits, one datagram each. Drained into a process-wide table; they describe the launch's world
 * communicator only. */
static struct {
    pthread_mutex_t mu;
    bool read_env;
    int fd, rank, size;
    uint64_t exited; /* bit r: rank r exited (COMM_MAX_SIZE == 64) */
    int status[COMM_MAX_SIZE];
} g_launch = {.mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .rank = -1};

static void launch_open_locked(void)
{
    g_launch.read_env = true;
    const char *env = getenv("STRATA_LAUNCH_FD");
    int fd, rank, size;
    struct stat st;
    if (!env || sscanf(env, "%d:%d:%d", &fd, &rank, &size) != 3) return;
    unsetenv("STRATA_LAUNCH_FD");
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return;
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    g_launch.fd = fd, g_launch.rank = rank, g_launch.size = size;
}

/* Ranks of c the launcher reported as exited (0 when c is not its world). */
static uint64_t launch_exited(const strata_comm_t *c, int *fd_p)
{
    pthread_mutex_lock(&g_launch.mu);
    if (!g_launch.read_env) launch_open_locked();
    unsigned char b[8 * COMM_MAX_SIZE];
    ssize_t n = -1;
    while (g_launch.fd >= 0 && (n = read(g_launch.fd, b, sizeof(b))) != 0) {
        if (n < 0) break; /* EAGAIN: drained */
        for (ssize_t i = 0; i + 8 <= n; i += 8) {
            uint32_t r = get32(b + i);
            if (r < COMM_MAX_SIZE)
                g_launch.exited |= 1ull << r, g_launch.status[r] = (int)get32(b + i + 4);
        }
    }
    if (g_launch.fd >= 0 && n == 0) close(g_launch.fd), g_launch.fd = -1; /* launcher gone */
    bool world = c->rank == g_launch.rank && c->size == g_launch.size;
    uint64_t ex = world ? g_launch.exited : 0;
    if (fd_p) *fd_p = world ? g_launch.fd : -1;
    pthread_mutex_unlock(&g_launch.mu);
    return ex;
}

static strata_status_t exited_error(int rank, strata_error_t *err)
{
    int s = g_launch.status[rank];
    return strata_error_set(
        err, STRATA_ERR_PEER, "bootstrap: rank %d exited (%s %d) before joining the communicator",
        rank, WIFSIGNALED(s) ? "signal" : "code", WIFSIGNALED(s) ? WTERMSIG(s) : WEXITSTATUS(s));
}

/* ==== Addresses ==== */

typedef struct boot_addr {
    bool local;                 /* unix socket in a private directory, else TCP */
    struct sockaddr_storage in; /* IPv4 or IPv6 */
    socklen_t inlen;
    struct sockaddr_un un;
    char desc[sizeof(((struct sockaddr_un *)0)->sun_path) + 16];
} boot_addr_t;

static int parse_tcp(const char *root, boot_addr_t *a, strata_error_t *err)
{
    char host[256];
    const char *colon = root ? strrchr(root, ':') : NULL;
    if (colon && root[0] == '[' && colon > root && colon[-1] != ']') colon = NULL; /* [v6] */
    if (!colon || colon == root || (size_t)(colon - root) >= sizeof(host) || !colon[1]) {
        strata_error_set(err, STRATA_ERR_INVALID,
                         "rendezvous address '%s' is not host:port or \"local\"",
                         root ? root : "(null)");
        return -1;
    }
    memcpy(host, root, (size_t)(colon - root));
    host[colon - root] = 0;
    if (host[0] == '[') { /* "[2001:db8::1]:port" */
        size_t hl = strlen(host);
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = 0;
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port <= 0 || port > 65535) {
        strata_error_set(err, STRATA_ERR_INVALID, "rendezvous port in '%s' is not 1..65535", root);
        return -1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res) {
        strata_error_set(err, STRATA_ERR_INVALID, "cannot resolve rendezvous host '%s'", host);
        return -1;
    }
    memcpy(&a->in, res->ai_addr, res->ai_addrlen);
    a->inlen = res->ai_addrlen;
    if (a->in.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&a->in)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)&a->in)->sin_port = htons((uint16_t)port);
    freeaddrinfo(res);
    snprintf(a->desc, sizeof(a->desc), "%s", root);
    return 0;
}

static bool private_dir(const char *path, struct stat *st)
{
    return lstat(path, st) == 0 && S_ISDIR(st->st_mode) && st->st_uid == geteuid() &&
           (st->st_mode & 077) == 0;
}

/* The local rendezvous socket: <dir>/<jobhash>.sock where dir is a
 * directory of this user that nobody else may enter. */
static int parse_local(const char *jobhash, boot_addr_t *a, strata_error_t *err)
{
    char dir[80]; /* + "/<jobhash>.sock" fits sun_path (108) */
    struct stat st;
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (xdg && xdg[0] == '/' && strlen(xdg) < 64 && private_dir(xdg, &st))
        snprintf(dir, sizeof(dir), "%s/strata", xdg);
    else
        snprintf(dir, sizeof(dir), "/tmp/strata-%u", (unsigned)geteuid());
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        strata_error_set(err, STRATA_ERR_SYSTEM, "bootstrap: cannot create %s: %s", dir,
                         strerror(errno));
        return -1;
    }
    if (!private_dir(dir, &st)) {
        strata_error_set(err, STRATA_ERR_SYSTEM,
                         "bootstrap: %s is not a private directory of uid %u (owner %u, mode "
                         "%03o): remove it, or set XDG_RUNTIME_DIR to one",
                         dir, (unsigned)geteuid(), (unsigned)st.st_uid,
                         (unsigned)st.st_mode & 0777);
        return -1;
    }
    a->local = true;
    a->un.sun_family = AF_UNIX;
    snprintf(a->un.sun_path, sizeof(a->un.sun_path), "%s/%s.sock", dir, jobhash);
    snprintf(a->desc, sizeof(a->desc), "%s", a->un.sun_path);
    return 0;
}

static strata_status_t parse_root(const char *root, const char *jobhash, boot_addr_t *a,
                                  strata_error_t *err)
{
    memset(a, 0, sizeof(*a));
    if (root && strcmp(root, "local") == 0)
        return parse_local(jobhash, a, err) ? STRATA_ERR_SYSTEM : STRATA_OK;
    return parse_tcp(root, a, err) ? STRATA_ERR_INVALID : STRATA_OK;
}

static const struct sockaddr *addr_of(const boot_addr_t *a, socklen_t *len)
{
    *len = a->local ? (socklen_t)sizeof(a->un) : a->inlen;
    return a->local ? (const struct sockaddr *)&a->un : (const struct sockaddr *)&a->in;
}

/* uid of a unix socket's peer, or (uid_t)-1. */
static uid_t peer_uid(int fd, pid_t *pid_p)
{
    struct ucred cr;
    socklen_t len = sizeof(cr);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0) return (uid_t)-1;
    if (pid_p) *pid_p = cr.pid;
    return cr.uid;
}

/* ==== Rank 0 ==== */

typedef struct pending { /* an accepted connection that has not proven the token yet */
    int fd;
    double until; /* its own deadline for a valid HELLO */
    size_t got;
    unsigned char ns[NONCE_LEN];
    unsigned char buf[HELLO_LEN];
    char peer[48];
} pending_t;

typedef struct boot_server {
    strata_comm_t *c;
    const char *token;
    const boot_addr_t *addr;
    int lfd;
    int *fds;
    char (*hosts)[HOST_LEN];
    unsigned char (*ns)[NONCE_LEN], (*nc)[NONCE_LEN]; /* per rank, for the WELCOME's MAC */
    pending_t *pend;                                  /* oldest first */
    int npend, dropped;
    double deadline;
} boot_server_t;

static void log_drop(boot_server_t *s, const char *peer, const char *why)
{
    if (s->dropped++ < DROP_LOG_MAX)
        strata_log(STRATA_LOG_WARN, "bootstrap: dropped connection from %s: %s", peer, why);
    else if (s->dropped == DROP_LOG_MAX + 1)
        strata_log(STRATA_LOG_WARN, "bootstrap: further dropped connections are not logged");
}

static void drop_pending(boot_server_t *s, int i, const char *why)
{
    if (why) log_drop(s, s->pend[i].peer, why);
    close(s->pend[i].fd);
    memmove(&s->pend[i], &s->pend[i + 1], (size_t)(s->npend - i - 1) * sizeof(pending_t));
    s->npend--;
}

/* Check one complete HELLO read on a connection that was sent nonce ns.
 * Returns the rank (and records its pid, host and nonces), or -1 with *why. */
static int parse_hello(boot_server_t *s, const unsigned char ns[NONCE_LEN],
                       const unsigned char b[HELLO_LEN], const char **why)
{
    unsigned char mac[MAC_LEN];
    if (memcmp(b, "STRH", 4) != 0 || get32(b + 4) != PROTO_VER) {
        *why = "not a strata hello (version 2)";
        return -1;
    }
    comm_boot_mac(s->token, COMM_BOOT_LABEL_HELLO, ns, NULL, b, HELLO_BODY, mac);
    if (!mac_ok(mac, b + HELLO_BODY)) {
        *why = "wrong job token (its proof does not match)";
        return -1;
    }
    uint32_t rank = get32(b + 8), size = get32(b + 12);
    if (size != (uint32_t)s->c->size || rank == 0 || rank >= size) {
        *why = "rank or size does not match this job";
        return -1;
    }
    if (s->fds[rank] >= 0) {
        *why = "rank already connected";
        return -1;
    }
    s->c->pids[rank] = (int32_t)get32(b + 16);
    memcpy(s->hosts[rank], b + 20, HOST_LEN);
    s->hosts[rank][HOST_LEN - 1] = 0;
    memcpy(s->nc[rank], b + 20 + HOST_LEN, NONCE_LEN);
    memcpy(s->ns[rank], ns, NONCE_LEN);
    return (int)rank;
}

/* "ip:port" or "uid U pid P" of a fresh connection, for the log; *uid_p is
 * the peer's uid on a local socket (else this process's). */
static void describe_peer(const boot_server_t *s, int fd, char peer[48], uid_t *uid_p)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    pid_t pid = 0;
    *uid_p = s->addr->local ? peer_uid(fd, &pid) : geteuid();
    if (s->addr->local) {
        snprintf(peer, 48, "uid %u pid %ld", (unsigned)*uid_p, (long)pid);
    } else if (getpeername(fd, (struct sockaddr *)&sa, &len) == 0) {
        comm_net_addr_t na;
        comm_net_from_sockaddr(&sa, &na);
        comm_net_describe(&na, peer, 48);
    } else {
        snprintf(peer, 48, "?");
    }
}

/* Send a fresh connection its challenge and track it with its own 2 s
 * deadline (dropping the oldest when PENDING_MAX are tracked). */
static void track(boot_server_t *s, int fd, const char *peer)
{
    if (s->npend == PENDING_MAX)
        drop_pending(s, 0, "evicted: too many connections without a hello");
    pending_t *p = &s->pend[s->npend];
    unsigned char chal[CHAL_LEN];
    memcpy(chal, "STRC", 4);
    put32(chal + 4, PROTO_VER);
    if (nonce(p->ns) != 0) {
        log_drop(s, peer, "getrandom failed");
        close(fd);
        return;
    }
    memcpy(chal + 8, p->ns, NONCE_LEN);
    if (send(fd, chal, CHAL_LEN, MSG_NOSIGNAL | MSG_DONTWAIT) != CHAL_LEN) {
        log_drop(s, peer, "cannot send the challenge");
        close(fd);
        return;
    }
    p->fd = fd, p->got = 0, p->until = util_now() + HELLO_WAIT_S;
    snprintf(p->peer, sizeof(p->peer), "%s", peer);
    s->npend++;
}

/* Take every waiting connection: a local peer must be this user. */
static void accept_new(boot_server_t *s)
{
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EINTR || errno == ECONNABORTED)) continue;
        if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
            if (s->npend > 0) {
                drop_pending(s, 0, "evicted: out of file descriptors");
                continue;
            }
            struct timespec ts = {0, 10 * 1000 * 1000}; /* not a busy loop meanwhile */
            nanosleep(&ts, NULL);
        }
        if (fd < 0) return;
        char peer[48];
        uid_t uid;
        describe_peer(s, fd, peer, &uid);
        if (uid != geteuid()) {
            log_drop(s, peer,
                     "another user's process (ranks of different users need "
                     "STRATA_TOKEN and a TCP STRATA_ROOT)");
            close(fd);
            continue;
        }
        track(s, fd, peer);
    }
}

/* Read what pending connection i sent; on a complete valid HELLO answer
 * with the PROOF and make it rank r's connection. Returns 1 when a rank
 * joined, else 0. */
static int progress(boot_server_t *s, int i)
{
    pending_t *p = &s->pend[i];
    ssize_t n = recv(p->fd, p->buf + p->got, HELLO_LEN - p->got, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n <= 0) {
        drop_pending(s, i, n == 0 ? "closed before a complete hello" : strerror(errno));
        return 0;
    }
    p->got += (size_t)n;
    if (p->got < HELLO_LEN) return 0;
    const char *why = "";
    int r = parse_hello(s, p->ns, p->buf, &why);
    if (r < 0) {
        drop_pending(s, i, why);
        return 0;
    }
    unsigned char proof[PROOF_LEN];
    memcpy(proof, "STRP", 4);
    comm_boot_mac(s->token, COMM_BOOT_LABEL_PROOF, p->ns, NULL, p->buf, HELLO_BODY, proof + 4);
    if (send(p->fd, proof, PROOF_LEN, MSG_NOSIGNAL | MSG_DONTWAIT) != PROOF_LEN) {
        drop_pending(s, i, "cannot send the proof");
        return 0;
    }
    s->fds[r] = p->fd;
    memmove(&s->pend[i], &s->pend[i + 1], (size_t)(s->npend - i - 1) * sizeof(pending_t));
    s->npend--;
    return 1;
}

static strata_status_t missing_error(boot_server_t *s, int missing, strata_error_t *err)
{
    return strata_error_set(err, STRATA_ERR_TIMEOUT,
                            "bootstrap: %d of %d ranks did not connect to %s in time%s", missing,
                            s->c->size - 1, s->addr->desc, s->addr->local ? LOCAL_HINT : "");
}

/* One pass: fail on a rank that exited or the deadline, drop connections
 * past their own deadline, then wait for any event. */
static strata_status_t accept_step(boot_server_t *s, struct pollfd *pf, int *missing,
                                   strata_error_t *err)
{
    int lafd;
    uint64_t gone = launch_exited(s->c, &lafd);
    for (int r = 1; r < s->c->size; r++)
        if (s->fds[r] < 0 && (gone >> r & 1)) return exited_error(r, err);
    double now = util_now(), wake = s->deadline;
    if (now >= s->deadline) return missing_error(s, *missing, err);
    for (int i = s->npend - 1; i >= 0; i--)
        if (s->pend[i].until <= now) drop_pending(s, i, "no valid hello within 2 s");
    for (int i = 0; i < s->npend; i++)
        if (s->pend[i].until < wake) wake = s->pend[i].until;
    int n = 0, base;
    pf[n++] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
    if (lafd >= 0) pf[n++] = (struct pollfd){.fd = lafd, .events = POLLIN};
    base = n;
    for (int i = 0; i < s->npend; i++)
        pf[n++] = (struct pollfd){.fd = s->pend[i].fd, .events = POLLIN};
    if (poll(pf, (nfds_t)n, (int)((wake - now) * 1000) + 1) <= 0) return STRATA_OK;
    for (int i = s->npend - 1; i >= 0; i--) /* backwards: progress may remove entry i */
        if (pf[base + i].revents) *missing -= progress(s, i);
    if (pf[0].revents) accept_new(s);
    return STRATA_OK;
}

static strata_status_t accept_all(boot_server_t *s, strata_error_t *err)
{
    int missing = s->c->size - 1;
    struct pollfd *pf = util_malloc((PENDING_MAX + 2) * sizeof(*pf));
    s->pend = util_malloc(PENDING_MAX * sizeof(pending_t));
    if (!pf || !s->pend) {
        util_free(pf);
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    }
    strata_status_t st = STRATA_OK;
    while (missing > 0 && st == STRATA_OK)
        st = accept_step(s, pf, &missing, err);
    if (s->npend > 0)
        strata_log(STRATA_LOG_INFO, "bootstrap: closed %d connections that sent no hello",
                   s->npend);
    while (s->npend > 0)
        drop_pending(s, s->npend - 1, NULL);
    util_free(pf);
    return st;
}

int comm_boot_send_status(int fd, const char *magic, uint32_t status, const char *msg,
                          double deadline)
{
    unsigned char b[12 + STATUS_MSG_MAX];
    size_t mlen = msg ? strnlen(msg, STATUS_MSG_MAX) : 0, len = 8;
    memcpy(b, magic, 4);
    put32(b + 4, status);
    if (msg) put32(b + 8, (uint32_t)mlen), memcpy(b + 12, msg, mlen), len = 12 + mlen;
    const char *why;
    return sock_io(fd, b, len, deadline, true, &why);
}

static void send_status(boot_server_t *s, const char *magic, uint32_t status, const char *msg)
{
    for (int r = 1; r < s->c->size; r++)
        if (s->fds[r] >= 0) comm_boot_send_status(s->fds[r], magic, status, msg, s->deadline);
}

/* WELCOME to each rank, its MAC bound to that rank's two nonces. */
static strata_status_t send_welcome(boot_server_t *s, const char *name, strata_error_t *err)
{
    size_t n = (size_t)s->c->size, nlen = strlen(name);
    size_t len = 12 + n * REC_LEN + 4 + nlen;
    unsigned char *b = util_calloc(1, len + MAC_LEN);
    if (!b) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    memcpy(b, "STRW", 4);
    put32(b + 4, 0);
    put32(b + 8, (uint32_t)n);
    unsigned char *p = b + 12;
    for (size_t i = 0; i < n; i++, p += REC_LEN) {
        put32(p, (uint32_t)s->c->pids[i]);
        memcpy(p + 4, s->hosts[i], HOST_LEN);
    }
    put32(p, (uint32_t)nlen);
    memcpy(p + 4, name, nlen);
    strata_status_t st = STRATA_OK;
    const char *why = "";
    for (int r = 1; r < s->c->size && st == STRATA_OK; r++) {
        comm_boot_mac(s->token, COMM_BOOT_LABEL_WELCOME, s->ns[r], s->nc[r], b, len, b + len);
        if (sock_io(s->fds[r], b, len + MAC_LEN, s->deadline, true, &why))
            st = strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank %d: %s", r, why);
    }
    util_free(b);
    return st;
}

/* Rank r's 8-byte answer once it has mapped (what: the segment it was to
 * map, for the error). */
static strata_status_t read_mapped(boot_server_t *s, int r, const char *what, strata_error_t *err)
{
    unsigned char b[8];
    const char *why = "";
    if (sock_io(s->fds[r], b, 8, s->deadline, false, &why))
        return strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank %d: %s", r, why);
    if (memcmp(b, "STRM", 4) != 0 || get32(b + 4) != 0)
        return strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank %d could not %s", r, what);
    return STRATA_OK;
}

static strata_status_t wait_mapped(boot_server_t *s, strata_error_t *err)
{
    for (int r = 1; r < s->c->size; r++) {
        strata_status_t st = read_mapped(s, r, "map the segment", err);
        if (st) return st;
    }
    return STRATA_OK;
}

static void already_listens(const boot_addr_t *a, strata_error_t *err)
{
    strata_error_set(err, STRATA_ERR_SYSTEM,
                     "bootstrap: another rank 0 of this job already listens at %s (two jobs with "
                     "one name? give each its own STRATA_TOKEN)",
                     a->desc);
}

/* Before binding the local socket: a socket file nobody listens on is a
 * dead rank 0's and is removed; a live one is another rank 0 with this job
 * name, which is an error rather than a takeover. 0 or -1. */
static int clear_stale(const boot_addr_t *a, strata_error_t *err)
{
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (probe < 0) return 0;
    int r = connect(probe, (const struct sockaddr *)&a->un, sizeof(a->un)), e = errno;
    close(probe);
    if (r == 0 || e == EAGAIN) {
        already_listens(a, err);
        return -1;
    }
    if (e == ECONNREFUSED) unlink(a->un.sun_path);
    return 0;
}

static int listen_at(const boot_addr_t *a, strata_error_t *err)
{
    int fd =
        socket(a->local ? AF_UNIX : a->in.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0) {
        strata_error_set(err, STRATA_ERR_SYSTEM, "socket: %s", strerror(errno));
        return -1;
    }
    if (a->local && clear_stale(a, err) != 0) {
        close(fd);
        return -1;
    }
    if (!a->local) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    socklen_t len;
    const struct sockaddr *sa = addr_of(a, &len);
    /* A local socket is bound under a private name and linked to its real
     * one only once it listens: bound there directly, it would exist for a
     * moment without listening, and another rank 0's stale check (or a
     * rank) would meet ECONNREFUSED and take it for a dead one's. link()
     * fails on an existing name, as bind() did. */
    struct sockaddr_un tmp = a->un;
    if (a->local) {
        char *slash = strrchr(tmp.sun_path, '/');
        size_t at = slash ? (size_t)(slash - tmp.sun_path) + 1 : 0;
        snprintf(tmp.sun_path + at, sizeof(tmp.sun_path) - at, "t%ld", (long)getpid());
        unlink(tmp.sun_path); /* a name of this pid: ours or a dead process's */
        sa = (const struct sockaddr *)&tmp, len = sizeof(tmp);
    }
    bool ok = bind(fd, sa, len) == 0 && listen(fd, 128) == 0;
    int e = errno;
    if (ok && a->local) {
        ok = link(tmp.sun_path, a->un.sun_path) == 0;
        e = errno;
        unlink(tmp.sun_path);
    }
    if (!ok) {
        if (a->local && e == EEXIST)
            already_listens(a, err);
        else
            strata_error_set(err, STRATA_ERR_SYSTEM, "bootstrap: cannot listen at %s: %s", a->desc,
                             strerror(e));
        close(fd);
        return -1;
    }
    return fd;
}

/* The listening socket `strata run` made for rank 0 (STRATA_ROOT_FD), if it
 * is a socket bound to the rendezvous port; used once. */
static int inherited_listener(const boot_addr_t *a)
{
    const char *env = getenv("STRATA_ROOT_FD");
    if (a->local || !env || !*env) return -1;
    char *end;
    long fd = strtol(env, &end, 10);
    struct sockaddr_storage got;
    socklen_t len = sizeof(got);
    comm_net_addr_t want, have;
    comm_net_from_sockaddr(&a->in, &want);
    if (*end || fd < 0 || fd > 65535 || getsockname((int)fd, (struct sockaddr *)&got, &len) != 0 ||
        got.ss_family != a->in.ss_family ||
        (comm_net_from_sockaddr(&got, &have), have.port) != want.port)
        return -1;
    unsetenv("STRATA_ROOT_FD");
    fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    fcntl((int)fd, F_SETFL, fcntl((int)fd, F_GETFL) | O_NONBLOCK);
    return (int)fd;
}

static strata_status_t same_host(boot_server_t *s, strata_error_t *err)
{
    for (int r = 1; r < s->c->size; r++)
        if (!comm_id_same(s->hosts[r], s->hosts[0])) {
            strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                             "bootstrap: rank %d is on host %s, rank 0 on %s: ranks on "
                             "different hosts (or network namespaces) meet at a TCP "
                             "rendezvous, not \"local\": set STRATA_TOKEN and STRATA_ROOT",
                             r, id_host(s->hosts[r]), id_host(s->hosts[0]));
            send_status(s, "STRW", 1, err ? err->msg : "different hosts");
            return STRATA_ERR_UNSUPPORTED;
        }
    return STRATA_OK;
}

/* Segment, WELCOME, MAPPED, unlink, GO: once every rank proved the token. */
static strata_status_t share_segment(boot_server_t *s, strata_error_t *err)
{
    char name[128];
    comm_seg_name(s->c, name, sizeof(name));
    strata_status_t st = comm_seg_create(s->c, name, err);
    if (st != STRATA_OK) {
        send_status(s, "STRW", 1, err ? err->msg : "segment");
        return st;
    }
    st = send_welcome(s, name, err);
    if (st == STRATA_OK) st = wait_mapped(s, err);
    shm_unlink(name); /* every rank has mapped it, or the job failed */
    send_status(s, "STRG", st == STRATA_OK ? 0 : 1, NULL);
    if (st != STRATA_OK) comm_seg_unmap(s->c);
    return st;
}

/* ==== Across hosts ====
 *
 * When rank 0 finds ranks on more than one host (by host identity, see
 * comm_host_id) it runs these frames instead of WELCOME (a same-host job's
 * frames are unchanged):
 *   0 -> r  CROSS    "STRX" 0 size
 *   r -> 0  ADDR     "STRA" family port scope ip[16]    (its data listener)
 *   0 -> r  TABLE    "STRY" 0 size nstreams id[32] role namelen
 *                    size × (pid host[64] family port scope ip[16]) name mac[32]
 *                    mac = HMAC(K, "strata-v3 table" Ns Nc | frame before mac)
 *   r -> 0  MAPPED   "STRM" status;   0 -> r  GO  "STRG" status
 * The lowest rank of each host is that host's leader: its TABLE says role 1
 * (create the host's segment, named by rank 0), and rank 0 sends the other
 * ranks their TABLE (role 0: attach) only once every leader has mapped its
 * segment. Leaders unlink their segment on GO, as rank 0 does its own. Then
 * every pair on different hosts connects its TCP streams
 * (comm_tcp_connect), each proving the token again. */
#define LABEL_TABLE "strata-v3 table"
#define ADDR_LEN    32
#define TABLE_HEAD  (24 + COMM_TCP_ID + 8)
#define TABLE_REC   (4 + HOST_LEN + 28)

static void put_addr(unsigned char *p, const comm_net_addr_t *a)
{
    put32(p, a->family), put32(p + 4, a->port), put32(p + 8, a->scope);
    memcpy(p + 12, a->ip, 16);
}

static int get_addr(const unsigned char *p, comm_net_addr_t *a)
{
    a->family = get32(p), a->port = (uint16_t)get32(p + 4), a->scope = get32(p + 8);
    memcpy(a->ip, p + 12, 16);
    return (a->family == 4 || a->family == 6) && a->port != 0 && get32(p + 4) < 65536 ? 0 : -1;
}

/* STRATA_TCP_STREAMS: TCP connections per pair of ranks on different
 * hosts (1..8, default 2); rank 0's value counts. */
static int tcp_streams(void)
{
    const char *e = getenv("STRATA_TCP_STREAMS");
    long n = 2;
    if (e && *e && (util_parse_long(e, &n) != 0 || n < 1 || n > COMM_TCP_MAX_STREAMS)) n = 2;
    return (int)n;
}

/* This rank's data address: STRATA_IFNAME's interface, else `near` (the
 * local address this rank reached rank 0 from, or rank 0's own rendezvous
 * address), else the first interface that is up and not loopback. A data
 * listener is opened on it. The fd, or -1. */
static int data_listener(const comm_net_addr_t *near, comm_net_addr_t *a, strata_error_t *err)
{
    const char *spec = getenv("STRATA_IFNAME");
    static const unsigned char any[16] = {0};
    *a = *near;
    a->port = 0;
    if (spec && *spec) {
        if (comm_net_ifaddr(spec, (int)near->family, a, err) != 0) return -1;
    } else if (memcmp(a->ip, any, a->family == 6 ? 16 : 4) == 0) {
        if (comm_net_ifaddr("^lo", (int)near->family, a, err) != 0) return -1;
    }
    return comm_tcp_listen(a, err);
}

/* Host index of each rank (by identity, in rank order) and the count. */
static int group_hosts(char (*hosts)[HOST_LEN], int n, int *host_of)
{
    int nh = 0;
    for (int r = 0; r < n; r++) {
        host_of[r] = -1;
        for (int q = 0; q < r && host_of[r] < 0; q++)
            if (comm_id_same(hosts[q], hosts[r])) host_of[r] = host_of[q];
        if (host_of[r] < 0) host_of[r] = nh++;
    }
    return nh;
}

static strata_status_t set_remote(strata_comm_t *c, const int *host_of, int nhosts,
                                  char (*hosts)[HOST_LEN], strata_error_t *err)
{
    comm_kernels(hosts, c->size, &c->kernels, &c->cores);
    c->remote = util_calloc((size_t)c->size, sizeof(bool));
    if (!c->remote) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    for (int r = 0; r < c->size; r++)
        c->remote[r] = host_of[r] != host_of[c->rank];
    c->nhosts = nhosts;
    int g = c->size % nhosts == 0 ? c->size / nhosts : 0;
    for (int r = 0; r < c->size && g > 0; r++)
        if (host_of[r] != r / g) g = 0; /* not consecutive: no two-level shape */
    c->host_group = g;
    return STRATA_OK;
}

typedef struct cross {
    int *host_of, nhosts, nstreams;
    comm_net_addr_t *addrs;
    unsigned char id[COMM_TCP_ID];
    char base[128];
} cross_t;

static strata_status_t send_table(boot_server_t *s, cross_t *x, int r, strata_error_t *err)
{
    size_t n = (size_t)s->c->size;
    char name[160];
    snprintf(name, sizeof name, "%s-h%d", x->base, x->host_of[r]);
    bool leader = true;
    for (int q = 0; q < r; q++)
        if (x->host_of[q] == x->host_of[r]) leader = false;
    size_t nl = strlen(name), len = TABLE_HEAD + n * TABLE_REC + nl;
    unsigned char *b = util_calloc(1, len + MAC_LEN);
    if (!b) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    memcpy(b, "STRY", 4);
    put32(b + 8, (uint32_t)n), put32(b + 12, (uint32_t)x->nstreams);
    memcpy(b + 16, x->id, COMM_TCP_ID);
    put32(b + 16 + COMM_TCP_ID, leader), put32(b + 20 + COMM_TCP_ID, (uint32_t)nl);
    unsigned char *p = b + TABLE_HEAD;
    for (size_t i = 0; i < n; i++, p += TABLE_REC) {
        put32(p, (uint32_t)s->c->pids[i]);
        memcpy(p + 4, s->hosts[i], HOST_LEN);
        put_addr(p + 4 + HOST_LEN, &x->addrs[i]);
    }
    memcpy(p, name, nl);
    comm_boot_mac(s->token, LABEL_TABLE, s->ns[r], s->nc[r], b, len, b + len);
    const char *why = "";
    strata_status_t st = STRATA_OK;
    if (sock_io(s->fds[r], b, len + MAC_LEN, s->deadline, true, &why))
        st = strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank %d: %s", r, why);
    util_free(b);
    return st;
}

/* Rank 0: addresses in, tables out (leaders first), segments, GO. */
static strata_status_t serve_cross_frames(boot_server_t *s, cross_t *x, strata_error_t *err)
{
    strata_comm_t *c = s->c;
    unsigned char h[12], b[ADDR_LEN];
    const char *why = "";
    memcpy(h, "STRX", 4), put32(h + 4, 0), put32(h + 8, (uint32_t)c->size);
    for (int r = 1; r < c->size; r++)
        if (sock_io(s->fds[r], h, 12, s->deadline, true, &why))
            return strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank %d: %s", r, why);
    for (int r = 1; r < c->size; r++) {
        if (sock_io(s->fds[r], b, ADDR_LEN, s->deadline, false, &why))
            return strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank %d: %s", r, why);
        if (memcmp(b, "STRA", 4) != 0 || get_addr(b + 4, &x->addrs[r]) != 0)
            return strata_error_set(err, STRATA_ERR_PROTOCOL,
                                    "bootstrap: rank %d sent a bad data address", r);
    }
    char name[160];
    snprintf(name, sizeof name, "%s-h0", x->base);
    strata_status_t st = comm_seg_create(c, name, err);
    for (int pass = 0; pass < 2 && st == STRATA_OK; pass++) /* leaders, then the others */
        for (int r = 1; r < c->size && st == STRATA_OK; r++) {
            bool leader = true;
            for (int q = 0; q < r; q++)
                if (x->host_of[q] == x->host_of[r]) leader = false;
            if (leader != (pass == 0) || x->host_of[r] == 0) continue;
            st = send_table(s, x, r, err);
            if (st == STRATA_OK) st = read_mapped(s, r, "set up its host's segment", err);
        }
    for (int r = 1; r < c->size && st == STRATA_OK; r++) /* rank 0's host-mates */
        if (x->host_of[r] == 0) {
            st = send_table(s, x, r, err);
            if (st == STRATA_OK) st = read_mapped(s, r, "set up its host's segment", err);
        }
    shm_unlink(name);
    send_status(s, "STRG", st == STRATA_OK ? 0 : 1, NULL);
    return st;
}

static strata_status_t serve_cross(boot_server_t *s, strata_error_t *err)
{
    strata_comm_t *c = s->c;
    cross_t x = {.nstreams = tcp_streams()};
    x.host_of = util_calloc((size_t)c->size, sizeof(int));
    x.addrs = util_calloc((size_t)c->size, sizeof(comm_net_addr_t));
    int lfd = -1;
    strata_status_t st = STRATA_ERR_NOMEM;
    if (!x.host_of || !x.addrs) {
        strata_error_set(err, st, "out of memory");
        goto out;
    }
    x.nhosts = group_hosts(s->hosts, c->size, x.host_of);
    comm_seg_name(c, x.base, sizeof x.base);
    comm_net_addr_t near;
    comm_net_from_sockaddr(&s->addr->in, &near);
    st = STRATA_ERR_SYSTEM;
    if (nonce(x.id) != 0) {
        strata_error_set(err, st, "bootstrap: getrandom: %s", strerror(errno));
        goto out;
    }
    if ((lfd = data_listener(&near, &x.addrs[0], err)) < 0) goto out;
    st = set_remote(c, x.host_of, x.nhosts, s->hosts, err);
    if (st == STRATA_OK) st = serve_cross_frames(s, &x, err);
    if (st != STRATA_OK) comm_seg_unmap(c);
    for (int r = 1; r < c->size; r++)
        if (s->fds[r] >= 0) close(s->fds[r]), s->fds[r] = -1;
    if (st == STRATA_OK)
        st = comm_tcp_connect(c, s->token, x.id, x.addrs, x.nstreams, lfd, s->deadline, err);
out:
    if (lfd >= 0) close(lfd);
    util_free(x.host_of);
    util_free(x.addrs);
    return st;
}

/* A rank: the TABLE after its ADDR; host grouping, peers' addresses, the
 * segment (created when it leads its host), MAPPED, GO. */
static strata_status_t read_table(strata_comm_t *c, int fd, double deadline, const char *token,
                                  const unsigned char ns[NONCE_LEN],
                                  const unsigned char nc[NONCE_LEN], cross_t *x, bool *leader_p,
                                  strata_error_t *err)
{
    size_t n = (size_t)c->size, fixed = TABLE_HEAD + n * TABLE_REC;
    unsigned char *b = util_malloc(fixed + 160 + MAC_LEN), want[MAC_LEN];
    char(*hosts)[HOST_LEN] = util_calloc(n, HOST_LEN);
    const char *why = "";
    strata_status_t st = STRATA_ERR_NOMEM;
    if (!b || !hosts) {
        strata_error_set(err, st, "out of memory");
        goto out;
    }
    st = STRATA_ERR_PROTOCOL;
    uint32_t nl = 0;
    if (sock_io(fd, b, fixed, deadline, false, &why) || memcmp(b, "STRY", 4) || get32(b + 8) != n ||
        (x->nstreams = (int)get32(b + 12)) < 1 || x->nstreams > COMM_TCP_MAX_STREAMS ||
        (nl = get32(b + 20 + COMM_TCP_ID)) == 0 || nl >= 128 ||
        sock_io(fd, b + fixed, nl + MAC_LEN, deadline, false, &why)) {
        strata_error_set(err, st, "bootstrap: bad table frame from rank 0%s%s", *why ? ": " : "",
                         why);
        goto out;
    }
    comm_boot_mac(token, LABEL_TABLE, ns, nc, b, fixed + nl, want);
    if (!mac_ok(want, b + fixed + nl)) {
        strata_error_set(err, st, "bootstrap: the table frame's MAC does not match");
        goto out;
    }
    memcpy(x->id, b + 16, COMM_TCP_ID);
    *leader_p = get32(b + 16 + COMM_TCP_ID) == 1;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = b + TABLE_HEAD + i * TABLE_REC;
        c->pids[i] = (int32_t)get32(p);
        memcpy(hosts[i], p + 4, HOST_LEN);
        hosts[i][HOST_LEN - 1] = 0;
        if (get_addr(p + 4 + HOST_LEN, &x->addrs[i]) != 0 && (int)i != c->rank) {
            strata_error_set(err, st, "bootstrap: the table has no address for rank %zu", i);
            goto out;
        }
    }
    memcpy(x->base, b + fixed, nl);
    x->base[nl] = 0;
    x->nhosts = group_hosts(hosts, c->size, x->host_of);
    st = set_remote(c, x->host_of, x->nhosts, hosts, err);
out:
    util_free(b);
    util_free(hosts);
    return st;
}

static strata_status_t join_cross(strata_comm_t *c, int fd, double deadline, const char *token,
                                  const unsigned char ns[NONCE_LEN],
                                  const unsigned char nc[NONCE_LEN], strata_error_t *err)
{
    cross_t x = {0};
    x.host_of = util_calloc((size_t)c->size, sizeof(int));
    x.addrs = util_calloc((size_t)c->size, sizeof(comm_net_addr_t));
    int lfd = -1;
    bool leader = false, made = false;
    unsigned char b[ADDR_LEN];
    const char *why = "";
    strata_status_t st = STRATA_ERR_NOMEM;
    if (!x.host_of || !x.addrs) {
        strata_error_set(err, st, "out of memory");
        goto out;
    }
    struct sockaddr_storage me;
    socklen_t ml = sizeof me;
    comm_net_addr_t near, mine;
    st = STRATA_ERR_SYSTEM;
    if (getsockname(fd, (struct sockaddr *)&me, &ml) != 0) {
        strata_error_set(err, st, "getsockname: %s", strerror(errno));
        goto out;
    }
    comm_net_from_sockaddr(&me, &near);
    if ((lfd = data_listener(&near, &mine, err)) < 0) goto out;
    memcpy(b, "STRA", 4);
    put_addr(b + 4, &mine);
    st = STRATA_ERR_PEER;
    if (sock_io(fd, b, ADDR_LEN, deadline, true, &why)) {
        strata_error_set(err, st, "bootstrap: rank 0: %s", why);
        goto out;
    }
    st = read_table(c, fd, deadline, token, ns, nc, &x, &leader, err);
    if (st == STRATA_OK) {
        st = leader ? comm_seg_create(c, x.base, err) : comm_seg_attach(c, x.base, err);
        made = leader && st == STRATA_OK;
        memcpy(b, "STRM", 4);
        put32(b + 4, st == STRATA_OK ? 0 : 1);
        if (sock_io(fd, b, 8, deadline, true, &why) && st == STRATA_OK)
            st = strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank 0: %s", why);
    }
    if (st == STRATA_OK &&
        (sock_io(fd, b, 8, deadline, false, &why) || memcmp(b, "STRG", 4) || get32(b + 4))) {
        if (!leader) shm_unlink(x.base); /* its leader may have died before unlinking */
        st = strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank 0 did not confirm start-up");
    }
    if (made) shm_unlink(x.base);
    close(fd);
    fd = -1;
    if (st == STRATA_OK)
        st = comm_tcp_connect(c, token, x.id, x.addrs, x.nstreams, lfd, deadline, err);
out:
    if (fd >= 0) close(fd);
    if (lfd >= 0) close(lfd);
    util_free(x.host_of);
    util_free(x.addrs);
    return st;
}

/* ==== Duplicating a communicator that spans hosts ====
 *
 * Over the parent's own collectives (its streams proved the token, so the
 * frames come from the job's ranks): rank 0 broadcasts a fresh
 * communicator id and a fresh 32-byte key, which stands for the token in
 * the new streams' proofs (the token itself is not kept after start-up);
 * every rank opens a data listener on the local address of its parent
 * streams, each host's leader (its lowest rank) creates the new segment,
 * and one allgather publishes every rank's listener, its leader's segment
 * name and whether both worked. Everyone sees the same table, so all fail
 * together; the others attach, a max-allreduce of failures lets the
 * leaders unlink, and the pairs on different hosts connect as at
 * start-up (comm_tcp_connect). */
#define DUP_REC (4 + ADDR_LEN + 64)

static strata_status_t dup_fail(strata_comm_t *c, strata_status_t st, strata_error_t *err)
{
    return strata_error_set(err, st, "strata_comm_dup: %s", c->errmsg);
}

strata_status_t comm_dup_cross(strata_comm_t *c, strata_comm_t *n, strata_error_t *err)
{
    int P = c->size, leader = 0, nstreams = 0, lfd = -1;
    while (c->remote[leader])
        leader++;
    n->remote = util_calloc((size_t)P, sizeof(bool));
    unsigned char *all = util_calloc((size_t)P, DUP_REC);
    comm_net_addr_t *addrs = util_calloc((size_t)P, sizeof(comm_net_addr_t));
    if (!n->remote || !all || !addrs) {
        util_free(all), util_free(addrs);
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    }
    memcpy(n->remote, c->remote, (size_t)P * sizeof(bool));
    n->nhosts = c->nhosts, n->host_group = c->host_group;
    n->kernels = c->kernels, n->cores = c->cores;
    unsigned char sec[COMM_TCP_ID + NONCE_LEN + 1] = {0}, rec[DUP_REC] = {0};
    comm_net_addr_t mine = {0};
    char name[64] = "";
    bool made = false;
    strata_error_t mine_err = {0};
    uint32_t bad = 0;
    if (c->rank == 0) sec[sizeof sec - 1] = nonce(sec) == 0 && nonce(sec + COMM_TCP_ID) == 0;
    strata_status_t st = strata_comm_broadcast(c, sec, sizeof sec, STRATA_UINT8, 0, NULL);
    if (st != STRATA_OK) goto out_parent;
    /* this rank's listener and (a leader) segment; failures are published */
    if (comm_tcp_local(c, &mine, &nstreams) != 0 || (lfd = comm_tcp_listen(&mine, &mine_err)) < 0)
        bad = 1;
    if (!bad && c->rank == leader) {
        comm_seg_name(n, name, sizeof name);
        if (comm_seg_create(n, name, &mine_err) != STRATA_OK) bad = 2, name[0] = 0;
        made = bad == 0;
    }
    put32(rec, bad);
    put_addr(rec + 4, &mine);
    memcpy(rec + 4 + ADDR_LEN, name, sizeof name);
    st = strata_comm_allgather(c, rec, all, DUP_REC, STRATA_UINT8, NULL);
    if (st != STRATA_OK) goto out_parent;
    st = STRATA_ERR_SYSTEM;
    if (!sec[sizeof sec - 1]) {
        strata_error_set(err, st, "strata_comm_dup: rank 0 could not draw a communicator id");
        goto out;
    }
    for (int r = 0; r < P; r++) {
        const unsigned char *q = all + (size_t)r * DUP_REC;
        if (get32(q) != 0) {
            strata_error_set(err, st, "strata_comm_dup: rank %d could not %s%s%s", r,
                             get32(q) == 1 ? "open a data listener" : "create its host's segment",
                             r == c->rank && mine_err.msg[0] ? ": " : "",
                             r == c->rank ? mine_err.msg : "");
            goto out;
        }
        if (r != c->rank && c->remote[r] && get_addr(q + 4, &addrs[r]) != 0) {
            strata_error_set(err, STRATA_ERR_PROTOCOL, "strata_comm_dup: no address for rank %d",
                             r);
            goto out;
        }
    }
    const unsigned char *ln = all + (size_t)leader * DUP_REC + 4 + ADDR_LEN;
    memcpy(name, ln, sizeof name);
    name[sizeof name - 1] = 0;
    int32_t failed = c->rank != leader && comm_seg_attach(n, name, &mine_err) != STRATA_OK, any = 0;
    st = strata_comm_allreduce(c, &failed, &any, 1, STRATA_INT32, STRATA_MAX, NULL);
    if (st != STRATA_OK) goto out_parent;
    if (any) {
        st = strata_error_set(err, STRATA_ERR_SYSTEM, "strata_comm_dup: %s",
                              failed ? mine_err.msg : "a rank could not map its host's segment");
        goto out;
    }
    /* the key as the new streams' token (hex: the proofs take a string) */
    char key[2 * NONCE_LEN + 1];
    for (int i = 0; i < NONCE_LEN; i++)
        snprintf(key + 2 * i, 3, "%02x", sec[COMM_TCP_ID + i]);
    st = comm_tcp_connect(n, key, sec, addrs, nstreams, lfd, util_now() + c->timeout, err);
    goto out;
out_parent:
    dup_fail(c, st, err);
out:
    if (made) shm_unlink(name); /* its ranks have mapped it, or the dup failed */
    if (lfd >= 0) close(lfd);
    util_free(all), util_free(addrs);
    return st;
}

static strata_status_t serve(strata_comm_t *c, const boot_addr_t *a, const char *token,
                             double deadline, strata_error_t *err)
{
    size_t n = (size_t)c->size;
    boot_server_t s = {.c = c, .token = token, .addr = a, .deadline = deadline};
    s.fds = util_malloc(n * sizeof(int));
    s.hosts = util_calloc(n, HOST_LEN);
    s.ns = util_calloc(n, NONCE_LEN);
    s.nc = util_calloc(n, NONCE_LEN);
    strata_status_t st = STRATA_ERR_NOMEM;
    if (!s.fds || !s.hosts || !s.ns || !s.nc) {
        strata_error_set(err, st, "out of memory");
        goto out_free;
    }
    comm_host_id(s.hosts[0]);
    for (size_t i = 0; i < n; i++)
        s.fds[i] = -1;
    st = STRATA_ERR_SYSTEM;
    s.lfd = inherited_listener(a);
    if (s.lfd < 0) s.lfd = listen_at(a, err);
    if (s.lfd < 0) goto out_free;
    struct stat mine = {0}, now;
    if (a->local) stat(a->un.sun_path, &mine);
    st = accept_all(&s, err);
    close(s.lfd);
    if (a->local && stat(a->un.sun_path, &now) == 0 && now.st_ino == mine.st_ino)
        unlink(a->un.sun_path); /* ours, not a later job's */
    if (st != STRATA_OK) send_status(&s, "STRW", 1, err ? err->msg : "start-up failed");
    bool one_host = true;
    for (int r = 1; r < c->size; r++)
        if (!comm_id_same(s.hosts[r], s.hosts[0])) one_host = false;
    if (st == STRATA_OK && !one_host && a->local) st = same_host(&s, err);
    if (st == STRATA_OK) st = one_host ? share_segment(&s, err) : serve_cross(&s, err);
    for (size_t i = 0; i < n; i++)
        if (s.fds[i] >= 0) close(s.fds[i]);
out_free:
    util_free(s.pend);
    util_free(s.fds);
    util_free(s.hosts);
    util_free(s.ns);
    util_free(s.nc);
    return st;
}

/* ==== Ranks > 0 ==== */

enum { JOIN_OK = 0, JOIN_RETRY = 1, JOIN_FAIL = -1 };

/* connect() bounded by deadline and 1 s (a full accept queue drops SYNs,
 * and a blocking connect would then wait minutes). 0, or -1 with errno. */
static int connect_by(int fd, const struct sockaddr *sa, socklen_t len, double deadline)
{
    if (connect(fd, sa, len) == 0) return 0;
    if (errno != EINPROGRESS) return -1;
    double left = deadline - util_now();
    struct pollfd pf = {.fd = fd, .events = POLLOUT};
    int e = 0;
    socklen_t elen = sizeof(e);
    if (poll(&pf, 1, left <= 0 ? 0 : left > 1 ? 1000 : (int)(left * 1000) + 1) <= 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) != 0) return -1;
    errno = e;
    return e == 0 ? 0 : -1;
}

/* One connection attempt. JOIN_RETRY when rank 0 is not there yet. */
static int dial(const boot_addr_t *a, double deadline, int *fd_p, const char **why,
                strata_error_t *err)
{
    int fd =
        socket(a->local ? AF_UNIX : a->in.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        strata_error_set(err, STRATA_ERR_SYSTEM, "socket: %s", strerror(errno));
        return JOIN_FAIL;
    }
    socklen_t len;
    const struct sockaddr *sa = addr_of(a, &len);
    if (connect_by(fd, sa, len, deadline) != 0) {
        int e = errno;
        close(fd);
        if (a->local && e == EACCES) {
            strata_error_set(err, STRATA_ERR_SYSTEM, "bootstrap: cannot reach %s: %s", a->desc,
                             strerror(e));
            return JOIN_FAIL;
        }
        *why = e == ENOENT || e == ECONNREFUSED ? "nobody listening yet"
               : e == EAGAIN                    ? "its queue is full"
                                                : strerror(e);
        return JOIN_RETRY;
    }
    uid_t uid = a->local ? peer_uid(fd, NULL) : geteuid();
    if (uid != geteuid()) {
        close(fd);
        strata_error_set(err, STRATA_ERR_PEER, "bootstrap: %s belongs to uid %u, not to uid %u",
                         a->desc, (unsigned)uid, (unsigned)geteuid());
        return JOIN_FAIL;
    }
    if (!a->local) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    *fd_p = fd;
    return JOIN_OK;
}

static void build_hello(const strata_comm_t *c, const char *token,
                        const unsigned char ns[NONCE_LEN], const unsigned char nc[NONCE_LEN],
                        unsigned char b[HELLO_LEN])
{
    memcpy(b, "STRH", 4);
    put32(b + 4, PROTO_VER);
    put32(b + 8, (uint32_t)c->rank);
    put32(b + 12, (uint32_t)c->size);
    put32(b + 16, (uint32_t)getpid());
    comm_host_id((char *)b + 20);
    memcpy(b + 20 + HOST_LEN, nc, NONCE_LEN);
    comm_boot_mac(token, COMM_BOOT_LABEL_HELLO, ns, NULL, b, HELLO_BODY, b + HELLO_BODY);
}

/* CHALLENGE, HELLO, PROOF on a fresh connection. JOIN_RETRY when rank 0
 * closed it before proving itself (it drops connections it cannot serve,
 * and a rank with a wrong token: the deadline then ends the retries). */
static int handshake(strata_comm_t *c, int fd, const char *token, double deadline,
                     unsigned char ns[NONCE_LEN], unsigned char nc[NONCE_LEN], const char **why,
                     strata_error_t *err)
{
    unsigned char chal[CHAL_LEN], hello[HELLO_LEN], proof[PROOF_LEN], want[MAC_LEN];
    if (sock_io(fd, chal, CHAL_LEN, deadline, false, why)) {
        if (util_now() >= deadline)
            *why = "connected, but no challenge came: whatever listens there is not this "
                   "job's rank 0, or rank 0 is stuck";
        return JOIN_RETRY;
    }
    if (memcmp(chal, "STRC", 4) != 0 || get32(chal + 4) != PROTO_VER) {
        strata_error_set(err, STRATA_ERR_PROTOCOL,
                         "bootstrap: what listens at the rendezvous address is not a strata "
                         "rank 0 speaking protocol 2");
        return JOIN_FAIL;
    }
    memcpy(ns, chal + 8, NONCE_LEN);
    if (nonce(nc) != 0) {
        strata_error_set(err, STRATA_ERR_SYSTEM, "bootstrap: getrandom: %s", strerror(errno));
        return JOIN_FAIL;
    }
    build_hello(c, token, ns, nc, hello);
    if (sock_io(fd, hello, HELLO_LEN, deadline, true, why) ||
        sock_io(fd, proof, PROOF_LEN, deadline, false, why)) {
        *why = "rank 0 closed the connection without proving the job token (a wrong "
               "STRATA_TOKEN on this rank?)";
        return JOIN_RETRY;
    }
    comm_boot_mac(token, COMM_BOOT_LABEL_PROOF, ns, NULL, hello, HELLO_BODY, want);
    if (memcmp(proof, "STRP", 4) != 0 || !mac_ok(want, proof + 4)) {
        strata_error_set(err, STRATA_ERR_PEER,
                         "bootstrap: the process at the rendezvous address cannot prove it "
                         "knows the job token: not this job's rank 0 (a different "
                         "STRATA_TOKEN, or another process took the address)");
        return JOIN_FAIL;
    }
    return JOIN_OK;
}

/* Connect and authenticate both ways, retrying until the deadline. */
static strata_status_t connect_auth(strata_comm_t *c, const boot_addr_t *a, const char *token,
                                    double deadline, unsigned char ns[NONCE_LEN],
                                    unsigned char nc[NONCE_LEN], int *fd_p, strata_error_t *err)
{
    const char *why = "nobody listening";
    strata_error_t mine;
    if (!err) err = &mine; /* the status is needed here */
    while (util_now() < deadline) {
        if (launch_exited(c, NULL) & 1) return exited_error(0, err);
        int fd = -1, r = dial(a, deadline, &fd, &why, err);
        if (r == JOIN_OK) {
            r = handshake(c, fd, token, deadline, ns, nc, &why, err);
            if (r == JOIN_OK) {
                *fd_p = fd;
                return STRATA_OK;
            }
            close(fd);
        }
        if (r == JOIN_FAIL) return err->status;
        struct timespec ts = {0, 20 * 1000 * 1000}; /* 20 ms between attempts */
        nanosleep(&ts, NULL);
    }
    return strata_error_set(err, STRATA_ERR_TIMEOUT,
                            "bootstrap: rank 0 at %s: %s (start-up deadline)%s", a->desc, why,
                            a->local ? LOCAL_HINT : "");
}

/* Read the WELCOME (pids and the segment name) and check its MAC. */
static strata_status_t read_welcome(strata_comm_t *c, int fd, const unsigned char h[12],
                                    double deadline, const char *token,
                                    const unsigned char ns[NONCE_LEN],
                                    const unsigned char nc[NONCE_LEN], char *name, size_t nlen_max,
                                    strata_error_t *err)
{
    unsigned char mac[MAC_LEN], want[MAC_LEN];
    const char *why = "";
    if (memcmp(h, "STRW", 4) != 0)
        return strata_error_set(err, STRATA_ERR_PROTOCOL, "bootstrap: bad frame from rank 0");
    if (get32(h + 4) != 0) {
        char msg[STATUS_MSG_MAX + 1] = "";
        uint32_t ml = get32(h + 8);
        if (ml <= STATUS_MSG_MAX && sock_io(fd, msg, ml, deadline, false, &why) == 0) msg[ml] = 0;
        return strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank 0 failed: %s", msg);
    }
    if (get32(h + 8) != (uint32_t)c->size)
        return strata_error_set(err, STRATA_ERR_PROTOCOL, "bootstrap: size mismatch with rank 0");
    size_t recs = (size_t)c->size * REC_LEN, len = 12 + recs + 4;
    unsigned char *b = util_malloc(len + nlen_max);
    if (!b) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    memcpy(b, h, 12);
    uint32_t nl = 0;
    strata_status_t st = STRATA_OK;
    if (sock_io(fd, b + 12, recs + 4, deadline, false, &why) || (nl = get32(b + 12 + recs)) == 0 ||
        nl >= nlen_max || sock_io(fd, b + len, nl, deadline, false, &why) ||
        sock_io(fd, mac, MAC_LEN, deadline, false, &why))
        st = strata_error_set(err, STRATA_ERR_PROTOCOL, "bootstrap: bad welcome frame");
    if (st == STRATA_OK) {
        comm_boot_mac(token, COMM_BOOT_LABEL_WELCOME, ns, nc, b, len + nl, want);
        if (!mac_ok(want, mac))
            st = strata_error_set(err, STRATA_ERR_PROTOCOL,
                                  "bootstrap: the welcome frame's MAC does not match");
    }
    if (st == STRATA_OK) {
        for (int i = 0; i < c->size; i++)
            c->pids[i] = (int32_t)get32(b + 12 + (size_t)i * REC_LEN);
        memcpy(name, b + len, nl);
        name[nl] = 0;
    }
    util_free(b);
    return st;
}

static strata_status_t join(strata_comm_t *c, const boot_addr_t *a, const char *token,
                            double deadline, strata_error_t *err)
{
    unsigned char ns[NONCE_LEN], nc[NONCE_LEN], b[8];
    int fd = -1;
    strata_status_t st = connect_auth(c, a, token, deadline, ns, nc, &fd, err);
    if (st != STRATA_OK) return st;
    char name[128];
    const char *why = "";
    unsigned char h[12];
    if (sock_io(fd, h, 12, deadline, false, &why))
        st = strata_error_set(err, STRATA_ERR_PEER, "bootstrap: waiting for rank 0: %s", why);
    else if (memcmp(h, "STRX", 4) == 0 && get32(h + 4) == 0 && !a->local)
        return get32(h + 8) == (uint32_t)c->size
                   ? join_cross(c, fd, deadline, token, ns, nc, err)
                   : (close(fd), strata_error_set(err, STRATA_ERR_PROTOCOL,
                                                  "bootstrap: size mismatch with rank 0"));
    else
        st = read_welcome(c, fd, h, deadline, token, ns, nc, name, sizeof(name), err);
    if (st == STRATA_OK) {
        st = comm_seg_attach(c, name, err);
        memcpy(b, "STRM", 4);
        put32(b + 4, st == STRATA_OK ? 0 : 1);
        if (sock_io(fd, b, 8, deadline, true, &why) && st == STRATA_OK)
            st = strata_error_set(err, STRATA_ERR_PEER, "bootstrap: rank 0: %s", why);
        if (st == STRATA_OK &&
            (sock_io(fd, b, 8, deadline, false, &why) || memcmp(b, "STRG", 4) || get32(b + 4))) {
            /* Rank 0 failed or died before unlinking: the name is this job's. */
            shm_unlink(name);
            st = strata_error_set(err, STRATA_ERR_PEER,
                                  "bootstrap: rank 0 did not confirm start-up");
        }
    }
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
    boot_addr_t a;
    strata_status_t st = parse_root(root, c->jobhash, &a, err);
    if (st != STRATA_OK) return st;
    return c->rank == 0 ? serve(c, &a, token, deadline, err) : join(c, &a, token, deadline, err);
}
