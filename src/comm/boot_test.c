/*
 * boot_test.c — the start-up's defences, on real processes: the token
 * never travels (a fake rank 0 records what a rank sends), a wrong token is
 * refused by either side, a foreign or loose segment is not mapped, 100
 * silent connections do not stop a job, status frames carry a 255-byte
 * message whole, a rank that exits before joining is noticed at once, a
 * segment does not outlive a rank 0 killed during start-up, the launcher
 * waits only for its own children and its ranks die with it, and the
 * environment start refuses to guess a secret and meets on a private local
 * socket instead.
 *
 * Fake peers speak protocol 2 by hand here (frame layouts written out from
 * bootstrap.c's header comment), using comm_boot_mac for the HMACs.
 */
#define _GNU_SOURCE
#include "test.h"

#include "comm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TOKEN "boot-test-secret-7c1e9a"

/* How long the test waits for another process to act (send its bytes, map
 * a segment, exit). A passing run never waits it out, so it costs nothing;
 * it only has to outlast a scheduler that keeps a process off a starved
 * CPU for seconds (load 13-20 beside SCHED_FIFO jobs). Start-up deadlines
 * the ranks get are WAIT_S or 2 × WAIT_S, and a bound that tells "at once"
 * from "at the deadline" is WAIT_S: no bound assumes a free CPU. */
#define WAIT_S 20.0

/* Frame sizes, by hand: CHALLENGE "STRC" ver Ns[32] = 4 + 4 + 32; HELLO
 * magic ver rank size pid (5 × 4) + host[64] + Nc[32] + mac[32]; PROOF
 * "STRP" mac[32]. */
#define T_CHAL  40
#define T_BODY  116
#define T_HELLO 148
#define T_PROOF 36

typedef struct shared {
    int status[8];
    double elapsed[8];
    int done[8];
    pid_t pid[8];
    int value[8];
    char msg[8][STRATA_ERROR_MSG_MAX];
} shared_t;

static shared_t *sh;

static shared_t *fresh_shared(void)
{
    shared_t *s =
        mmap(NULL, sizeof(shared_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(s != MAP_FAILED);
    memset(s, 0, sizeof(*s));
    return s;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> 8 * i);
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Read exactly len bytes within secs; returns bytes read (< len on EOF or
 * timeout). */
static size_t read_full(int fd, void *buf, size_t len, double secs)
{
    size_t got = 0;
    double end = util_now() + secs;
    while (got < len && util_now() < end) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, 50) <= 0) continue;
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    return got;
}

/* A loopback listener on a free port. */
static int listener(int *port_p)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 128), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port_p = ntohs(sa.sin_port);
    return fd;
}

static int dial_port(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (int tries = 0; tries < 250; tries++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) return fd;
        close(fd);
        usleep(20000);
    }
    return -1;
}

/* Speak as rank `rank` of `size` keyed with `key`: CHALLENGE, HELLO, then
 * wait for the PROOF. Returns 1 for a PROOF that verifies under `key`, 0
 * when rank 0 closed the connection instead, -1 on anything else. The
 * nonces are returned for reading a WELCOME. */
static int fake_hello(int fd, const char *key, int rank, int size, unsigned char ns[32],
                      unsigned char nc[32])
{
    unsigned char chal[T_CHAL], h[T_HELLO], proof[T_PROOF], want[32];
    if (read_full(fd, chal, T_CHAL, WAIT_S) != T_CHAL || memcmp(chal, "STRC", 4) ||
        get32(chal + 4) != 2)
        return -1;
    memcpy(ns, chal + 8, 32);
    memset(nc, 0x5a, 32);
    memcpy(h, "STRH", 4);
    put32(h + 4, 2), put32(h + 8, (uint32_t)rank), put32(h + 12, (uint32_t)size);
    put32(h + 16, (uint32_t)getpid());
    comm_host_id((char *)h + 20);
    memcpy(h + 84, nc, 32);
    comm_boot_mac(key, COMM_BOOT_LABEL_HELLO, ns, NULL, h, T_BODY, h + T_BODY);
    if (write(fd, h, T_HELLO) != T_HELLO) return -1;
    size_t got = read_full(fd, proof, T_PROOF, WAIT_S);
    if (got == 0) return 0;
    if (got != T_PROOF || memcmp(proof, "STRP", 4)) return -1;
    comm_boot_mac(key, COMM_BOOT_LABEL_PROOF, ns, NULL, h, T_BODY, want);
    return memcmp(want, proof + 4, 32) == 0 ? 1 : -1;
}

static int wait_child(pid_t pid, double secs)
{
    int status = 0;
    double end = util_now() + secs;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (util_now() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        usleep(10000);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Whether process pid maps `path` (its /proc/pid/maps names it), polled
 * until `secs` pass. */
static bool wait_mapped(pid_t pid, const char *path, double secs)
{
    char maps[64], line[512];
    snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
    for (double end = util_now() + secs; util_now() < end; usleep(10000)) {
        FILE *f = fopen(maps, "r");
        bool found = false;
        while (f && !found && fgets(line, sizeof(line), f))
            found = strstr(line, path) != NULL;
        if (f) fclose(f);
        if (found) return true;
    }
    return false;
}

/* Child: join as `rank` of `size` at 127.0.0.1:port (or on the inherited
 * listener lfd for rank 0) and record the outcome in sh. */
static void explicit_rank(int rank, int size, int port, int lfd, const char *token, double t)
{
    char root[64], fdbuf[16];
    snprintf(root, sizeof(root), "127.0.0.1:%d", port);
    if (lfd >= 0) snprintf(fdbuf, sizeof(fdbuf), "%d", lfd), setenv("STRATA_ROOT_FD", fdbuf, 1);
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    double t0 = util_now();
    strata_status_t st = strata_comm_init(rank, size, root, token, t, &c, &err);
    sh->status[rank] = st;
    sh->elapsed[rank] = util_now() - t0;
    snprintf(sh->msg[rank], sizeof(sh->msg[rank]), "%s", err.msg);
    sh->done[rank] = 1;
    strata_comm_destroy(c);
    _exit(0);
}

/* ==== The token never travels; a rank refuses a rank 0 without it ==== */

/* Host ids (comm_host_id: CPUs, host name, boot id, namespace) grouped by
 * kernel: the processors the ranks run on are, per kernel, the fewer of its
 * ranks and the fewest CPUs any of its ranks may use. */
static void test_kernels(void **state)
{
    (void)state;
    char one[4][64] = {"0002/a/b1/pid:1", "0002/a/b1/pid:2", "0002/a/b1/pid:3", "0002/a/b1/pid:4"};
    int k = 0, cores = 0;
    comm_kernels(one, 4, &k, &cores);
    assert_int_equal(k, 1);
    assert_int_equal(cores, 2); /* 4 ranks on 2 CPUs */
    /* kernel a: 2 ranks on 8 CPUs (2); kernel c (a's name, another boot):
     * 3 ranks, one of them bound to a CPU of its own: min(3, 1) = 1 */
    char two[5][64] = {"0008/a/b1/n:1", "0008/a/b1/n:2", "0004/a/b2/n:1", "0001/a/b2/n:1",
                       "0004/a/b2/n:9"};
    comm_kernels(two, 5, &k, &cores);
    assert_int_equal(k, 2);
    assert_int_equal(cores, 2 + 1);
    /* every rank its own kernel with CPUs to spare: one per rank */
    char apart[3][64] = {"0016/x/b/n", "0016/y/b/n", "0016/z/b/n"};
    comm_kernels(apart, 3, &k, &cores);
    assert_int_equal(k, 3);
    assert_int_equal(cores, 3);
    /* this process's own id opens with its CPUs */
    char mine[1][64];
    comm_host_id(mine[0]);
    long cpus = comm_job_cpus();
    assert_int_equal(atoi(mine[0]), cpus > 9999 ? 9999 : cpus);
    assert_int_equal(mine[0][4], '/');
}

static void test_token_not_on_wire(void **state)
{
    (void)state;
    sh = fresh_shared();
    int port, lfd = listener(&port);
    pid_t pid = fork();
    if (pid == 0) explicit_rank(1, 2, port, -1, TOKEN, 2 * WAIT_S);
    int fd = accept(lfd, NULL, NULL);
    assert_true(fd >= 0);
    unsigned char chal[T_CHAL] = "STRC", rx[4096], ns[32];
    memset(ns, 0x11, 32);
    put32(chal + 4, 2);
    memcpy(chal + 8, ns, 32);
    assert_int_equal(write(fd, chal, T_CHAL), T_CHAL);
    size_t got = read_full(fd, rx, T_HELLO, WAIT_S);
    /* a rank 0 that does not know the token: its proof is keyed wrongly */
    unsigned char proof[T_PROOF] = "STRP";
    comm_boot_mac("not-the-token", COMM_BOOT_LABEL_PROOF, ns, NULL, rx, T_BODY, proof + 4);
    assert_int_equal(write(fd, proof, T_PROOF), T_PROOF);
    got += read_full(fd, rx + got, sizeof(rx) - got, WAIT_S); /* anything more, to its close */
    assert_int_equal(wait_child(pid, WAIT_S), 0);
    close(fd), close(lfd);
    assert_int_equal(got, T_HELLO);
    assert_null(memmem(rx, got, TOKEN, strlen(TOKEN)));
    /* what it sent instead: HMAC(token, label | Ns | body), verified here */
    unsigned char want[32];
    comm_boot_mac(TOKEN, COMM_BOOT_LABEL_HELLO, ns, NULL, rx, T_BODY, want);
    assert_memory_equal(want, rx + T_BODY, 32);
    assert_int_equal(get32(rx + 8), 1);  /* rank */
    assert_int_equal(get32(rx + 12), 2); /* size */
    assert_int_equal(sh->status[1], STRATA_ERR_PEER);
    assert_non_null(strstr(sh->msg[1], "cannot prove it knows the job token"));
    assert_true(sh->elapsed[1] < WAIT_S); /* refused at once, not at the 2 × WAIT_S deadline */
    munmap(sh, sizeof(*sh));
}

/* ==== Rank 0 refuses a wrong token and proves the right one ==== */

static void test_wrong_token_refused_by_rank0(void **state)
{
    (void)state;
    sh = fresh_shared();
    int port, lfd = listener(&port);
    pid_t pid = fork();
    if (pid == 0) explicit_rank(0, 2, port, lfd, TOKEN, WAIT_S);
    unsigned char ns[32], nc[32];
    int w = dial_port(port), r = -1, proved = 0;
    assert_int_equal(fake_hello(w, "wrong-token", 1, 2, ns, nc), 0); /* closed, no proof */
    /* the right token gets a PROOF that verifies. Rank 0 drops a
     * connection whose HELLO takes over 2 s (bootstrap.c HELLO_WAIT_S), as
     * it may when this process is kept off the CPU: then dial again, as a
     * real rank does, within WAIT_S */
    for (double end = util_now() + WAIT_S; proved == 0 && util_now() < end;) {
        if (r >= 0) close(r);
        r = dial_port(port);
        proved = fake_hello(r, TOKEN, 1, 2, ns, nc);
    }
    assert_int_equal(proved, 1);
    close(w), close(r);
    assert_int_equal(wait_child(pid, 2 * WAIT_S), 0);
    close(lfd);
    assert_int_not_equal(sh->status[0], STRATA_OK); /* its rank 1 then vanished */
    munmap(sh, sizeof(*sh));
}

/* ==== 100 silent connections ==== */

#define SILENT_N 100

static int silent_crowd_rank(void *arg)
{
    (void)arg;
    int r = atoi(getenv("STRATA_RANK")), fds[SILENT_N], port = 0;
    sscanf(strrchr(getenv("STRATA_ROOT"), ':') + 1, "%d", &port);
    if (r == 2) /* opened before any rank connects: first in rank 0's queue */
        for (int i = 0; i < SILENT_N; i++)
            if ((fds[i] = dial_port(port)) < 0) return 5;
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    double t0 = util_now();
    strata_status_t st = strata_comm_init_env(&c, &err);
    sh->elapsed[r] = util_now() - t0;
    sh->status[r] = st;
    snprintf(sh->msg[r], sizeof(sh->msg[r]), "%s", err.msg);
    int x = r + 1, y = 0;
    if (st == STRATA_OK) st = strata_comm_allreduce(c, &x, &y, 1, STRATA_INT32, STRATA_SUM, NULL);
    sh->value[r] = y;
    if (r == 2)
        for (int i = 0; i < SILENT_N; i++)
            close(fds[i]);
    strata_comm_destroy(c);
    return st == STRATA_OK ? 0 : 1;
}

static void test_silent_connections(void **state)
{
    (void)state;
    sh = fresh_shared();
    setenv("STRATA_TIMEOUT", "30", 1); /* one at a time, 2 s each, would need 200 s */
    int code = -1;
    strata_error_t err = {0};
    assert_int_equal(strata_launch_fn(3, silent_crowd_rank, NULL, 2.0, &code, &err), STRATA_OK);
    unsetenv("STRATA_TIMEOUT");
    for (int r = 0; r < 3; r++) {
        if (sh->status[r]) fprintf(stderr, "rank %d: %s\n", r, sh->msg[r]);
        assert_int_equal(sh->status[r], STRATA_OK);
        assert_int_equal(sh->value[r], 6); /* 1 + 2 + 3 */
        assert_true(sh->elapsed[r] < 25);
    }
    assert_int_equal(code, 0);
    munmap(sh, sizeof(*sh));
}

/* ==== Segments another user could read ==== */

static int make_seg(const char *name, size_t bytes, mode_t mode, uid_t uid)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (uid != geteuid() && setresuid(uid, uid, uid) != 0) _exit(3);
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, mode);
        if (fd < 0 || fchmod(fd, mode) || ftruncate(fd, (off_t)bytes)) _exit(4);
        comm_seg_header_t *h = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (h == MAP_FAILED) _exit(5);
        h->magic = COMM_SEG_MAGIC, h->size = 2, h->version = 1, h->bytes = bytes; /* valid */
        _exit(0);
    }
    return wait_child(pid, 5);
}

static strata_status_t attach(const char *name, char *msg, size_t len)
{
    strata_comm_t c = {.size = 2};
    strata_error_t err = {0};
    strata_status_t st = comm_seg_attach(&c, name, &err);
    snprintf(msg, len, "%s", err.msg);
    comm_seg_unmap(&c);
    return st;
}

static void test_foreign_segment_refused(void **state)
{
    (void)state;
    comm_layout_t l;
    comm_layout_compute(2, &l);
    char own[64], loose[64], foreign[64], link_name[64], path[96], target[96], msg[512];
    snprintf(own, sizeof(own), "/strata-boottest-%d-own", (int)getpid());
    snprintf(loose, sizeof(loose), "/strata-boottest-%d-loose", (int)getpid());
    snprintf(foreign, sizeof(foreign), "/strata-boottest-%d-foreign", (int)getpid());
    snprintf(link_name, sizeof(link_name), "/strata-boottest-%d-link", (int)getpid());
    assert_int_equal(make_seg(own, l.bytes, 0600, geteuid()), 0);
    assert_int_equal(attach(own, msg, sizeof(msg)), STRATA_OK); /* the control */
    assert_int_equal(make_seg(loose, l.bytes, 0666, geteuid()), 0);
    assert_int_equal(attach(loose, msg, sizeof(msg)), STRATA_ERR_PROTOCOL);
    assert_non_null(strstr(msg, "mode is not 0600"));
    snprintf(path, sizeof(path), "/dev/shm%s", link_name);
    snprintf(target, sizeof(target), "/dev/shm%s", own);
    assert_int_equal(symlink(target, path), 0);
    assert_int_not_equal(attach(link_name, msg, sizeof(msg)), STRATA_OK);
    assert_non_null(strstr(msg, "symbolic link"));
    assert_int_equal(attach("/etc/passwd", msg, sizeof(msg)), STRATA_ERR_PROTOCOL);
    unlink(path), shm_unlink(own), shm_unlink(loose);
    if (geteuid() != 0) {
        skip(); /* making another user's file needs root */
        return;
    }
    assert_int_equal(make_seg(foreign, l.bytes, 0600, 12345), 0);
    assert_int_equal(attach(foreign, msg, sizeof(msg)), STRATA_ERR_PROTOCOL);
    assert_non_null(strstr(msg, "owned by another user"));
    shm_unlink(foreign);
}

/* ==== Status frames ==== */

static void test_status_frame_255(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    char msg[300], rx[400];
    memset(msg, 'x', sizeof(msg) - 1);
    msg[sizeof(msg) - 1] = 0;
    for (size_t len = 255; len <= 299; len += 44) { /* exactly the maximum, then truncated */
        msg[len] = 0;
        assert_int_equal(comm_boot_send_status(sv[0], "STRW", 1, msg, util_now() + 2), 0);
        /* 4 magic + 4 status + 4 length + 255 bytes of message */
        assert_int_equal(read_full(sv[1], rx, 267, 2), 267);
        assert_memory_equal(rx, "STRW", 4);
        assert_int_equal(get32((unsigned char *)rx + 4), 1);
        assert_int_equal(get32((unsigned char *)rx + 8), 255);
        assert_memory_equal(rx + 12, msg, 255);
        msg[len] = 'x';
    }
    close(sv[0]), close(sv[1]);
}

/* ==== A rank that exits before joining ==== */

static int early_exit_rank(void *arg)
{
    (void)arg;
    int r = atoi(getenv("STRATA_RANK"));
    if (r == 1) return 0; /* never calls init */
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    double t0 = util_now();
    sh->status[r] = strata_comm_init_env(&c, &err);
    sh->elapsed[r] = util_now() - t0;
    snprintf(sh->msg[r], sizeof(sh->msg[r]), "%s", err.msg);
    strata_comm_destroy(c);
    return 0;
}

static void test_early_exit_detected(void **state)
{
    (void)state;
    sh = fresh_shared();
    setenv("STRATA_TIMEOUT", "40", 1); /* 2 × WAIT_S */
    int code = -1;
    strata_error_t err = {0};
    assert_int_equal(strata_launch_fn(3, early_exit_rank, NULL, 2.0, &code, &err), STRATA_OK);
    unsetenv("STRATA_TIMEOUT");
    for (int r = 0; r < 3; r += 2) {
        fprintf(stderr, "rank %d: %.2f s: %s\n", r, sh->elapsed[r], sh->msg[r]);
        assert_int_equal(sh->status[r], STRATA_ERR_PEER);
        assert_true(sh->elapsed[r] < WAIT_S); /* at once, not at the 2 × WAIT_S deadline */
    }
    assert_non_null(strstr(sh->msg[0], "rank 1 exited (code 0) before joining"));
    munmap(sh, sizeof(*sh));
}

/* ==== Rank 0 killed during start-up, outside strata run ==== */

static void test_segment_removed_when_rank0_dies(void **state)
{
    (void)state;
    sh = fresh_shared();
    int port, lfd = listener(&port);
    pid_t p0 = fork();
    if (p0 == 0) explicit_rank(0, 3, port, lfd, TOKEN, WAIT_S);
    pid_t p1 = fork();
    if (p1 == 0) explicit_rank(1, 3, port, -1, TOKEN, WAIT_S);
    close(lfd);
    /* rank 2 by hand: proves the token, reads the WELCOME, never says MAPPED */
    unsigned char ns[32], nc[32], w[12 + 3 * 68 + 4 + 128 + 32], want[32];
    int fd = dial_port(port);
    assert_int_equal(fake_hello(fd, TOKEN, 2, 3, ns, nc), 1);
    assert_int_equal(read_full(fd, w, 12 + 3 * 68 + 4, WAIT_S), 12 + 3 * 68 + 4);
    assert_memory_equal(w, "STRW", 4);
    uint32_t nl = get32(w + 12 + 3 * 68);
    assert_true(nl > 0 && nl < 128);
    size_t len = 12 + 3 * 68 + 4 + nl;
    assert_int_equal(read_full(fd, w + 12 + 3 * 68 + 4, nl + 32, WAIT_S), nl + 32);
    comm_boot_mac(TOKEN, COMM_BOOT_LABEL_WELCOME, ns, nc, w, len, want);
    assert_memory_equal(want, w + len, 32);
    char path[200];
    snprintf(path, sizeof(path), "/dev/shm/%.*s", (int)nl - 1, (char *)w + 12 + 3 * 68 + 4 + 1);
    assert_int_equal(access(path, F_OK), 0); /* the segment exists, rank 0 waits for rank 2 */
    /* rank 1 has read its WELCOME once it maps the segment: wait for that
     * (a fixed 200 ms was not enough on a starved CPU, and a rank 1 still
     * waiting for its WELCOME cannot know the name to remove) */
    assert_true(wait_mapped(p1, path, WAIT_S));
    kill(p0, SIGKILL);
    assert_int_equal(wait_child(p0, WAIT_S), 128 + SIGKILL);
    assert_int_equal(wait_child(p1, 2 * WAIT_S), 0);
    close(fd);
    assert_int_equal(sh->status[1], STRATA_ERR_PEER);
    assert_int_equal(access(path, F_OK), -1); /* rank 1 removed it */
    munmap(sh, sizeof(*sh));
}

/* ==== The launcher and its host program ==== */

static int short_rank(void *arg)
{
    (void)arg;
    usleep(100000);
    return 0;
}

static void test_launcher_leaves_other_children(void **state)
{
    (void)state;
    pid_t other = fork();
    if (other == 0) _exit(42);
    siginfo_t si = {0};
    assert_int_equal(waitid(P_PID, (id_t)other, &si, WEXITED | WNOWAIT), 0); /* a zombie now */
    int code = -1;
    strata_error_t err = {0};
    assert_int_equal(strata_launch_fn(2, short_rank, NULL, 2.0, &code, &err), STRATA_OK);
    assert_int_equal(code, 0);
    int status = 0;
    assert_int_equal(waitpid(other, &status, WNOHANG), other); /* still ours to reap */
    assert_int_equal(WEXITSTATUS(status), 42);
}

static int sleepy_rank(void *arg)
{
    (void)arg;
    sh->pid[atoi(getenv("STRATA_RANK"))] = getpid();
    sleep((unsigned)(6 * WAIT_S));
    return 0;
}

static void test_ranks_die_with_launcher(void **state)
{
    (void)state;
    sh = fresh_shared();
    /* orphaned ranks are re-parented to this process, which can then reap them */
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    pid_t launcher = fork();
    if (launcher == 0) {
        int code;
        strata_launch_fn(2, sleepy_rank, NULL, 2.0, &code, NULL);
        _exit(0);
    }
    double end = util_now() + WAIT_S;
    while ((!sh->pid[0] || !sh->pid[1]) && util_now() < end)
        usleep(10000);
    assert_true(sh->pid[0] > 0 && sh->pid[1] > 0);
    kill(launcher, SIGKILL);
    assert_int_equal(wait_child(launcher, WAIT_S), 128 + SIGKILL);
    for (int r = 0; r < 2; r++) { /* dead at once (WAIT_S), not after their 6 × WAIT_S sleep */
        double t0 = util_now();
        assert_int_equal(wait_child(sh->pid[r], WAIT_S), 128 + SIGKILL);
        printf("rank %d dead %.3f s after the launcher's wait\n", r, util_now() - t0);
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    munmap(sh, sizeof(*sh));
}

/* ==== Starting from the environment ==== */

static strata_status_t init_env_msg(char *msg, size_t len)
{
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    strata_status_t st = strata_comm_init_env(&c, &err);
    snprintf(msg, len, "%s", err.msg);
    strata_comm_destroy(c);
    return st;
}

static void test_env_refuses_guessable_secret(void **state)
{
    (void)state;
    char msg[512];
    unsetenv("STRATA_TOKEN");
    setenv("STRATA_RANK", "1", 1), setenv("STRATA_SIZE", "2", 1);
    setenv("STRATA_ROOT", "127.0.0.1:29999", 1);
    assert_int_equal(init_env_msg(msg, sizeof(msg)), STRATA_ERR_INVALID);
    assert_non_null(strstr(msg, "STRATA_TOKEN"));
    unsetenv("STRATA_ROOT");
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "1", 1); /* 2 ranks, 1 on this host */
    assert_int_equal(init_env_msg(msg, sizeof(msg)), STRATA_ERR_INVALID);
    assert_non_null(strstr(msg, "spans several hosts"));
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    unsetenv("STRATA_RANK"), unsetenv("STRATA_SIZE");
}

/* The local socket's directory must be this user's and closed to others. */
static void test_loose_socket_dir_refused(void **state)
{
    (void)state;
    char base[] = "/tmp/boot-test-XXXXXX", dir[64], msg[512];
    assert_non_null(mkdtemp(base)); /* 0700, ours: accepted as XDG_RUNTIME_DIR */
    snprintf(dir, sizeof(dir), "%s/strata", base);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(chmod(dir, 0755), 0); /* others may enter: refused */
    setenv("XDG_RUNTIME_DIR", base, 1);
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    assert_int_equal(strata_comm_init(0, 2, "local", TOKEN, 1, &c, &err), STRATA_ERR_SYSTEM);
    snprintf(msg, sizeof(msg), "%s", err.msg);
    unsetenv("XDG_RUNTIME_DIR");
    rmdir(dir), rmdir(base);
    assert_non_null(strstr(msg, "is not a private directory"));
    assert_non_null(strstr(msg, "mode 755"));
}

/* A live rank 0 keeps its local socket (a second one with the same job name
 * is refused); a dead one's socket file is replaced. */
static void test_local_socket_taken_or_stale(void **state)
{
    (void)state;
    char base[] = "/tmp/boot-test-XXXXXX", path[128], hash[17], msg[512];
    assert_non_null(mkdtemp(base));
    setenv("XDG_RUNTIME_DIR", base, 1);
    comm_job_hash(TOKEN, hash);
    snprintf(path, sizeof(path), "%s/strata/%s.sock", base, hash); /* bootstrap.c's naming */
    pid_t first = fork();
    if (first == 0) {
        strata_comm_t *c = NULL;
        strata_comm_init(0, 2, "local", TOKEN, 2 * WAIT_S, &c, NULL); /* waits for a rank 1 */
        _exit(0);
    }
    double end = util_now() + WAIT_S;
    while (access(path, F_OK) != 0 && util_now() < end)
        usleep(10000);
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    strata_status_t st = strata_comm_init(0, 2, "local", TOKEN, WAIT_S, &c, &err);
    snprintf(msg, sizeof(msg), "%s", err.msg);
    kill(first, SIGKILL);
    int code = wait_child(first, WAIT_S);
    int stale = access(path, F_OK); /* SIGKILL left the socket file */
    /* now a fresh job of that name starts over the stale file */
    sh = fresh_shared();
    pid_t pids[2];
    for (int r = 0; r < 2; r++)
        if ((pids[r] = fork()) == 0) {
            strata_comm_t *cc = NULL;
            sh->status[r] = strata_comm_init(r, 2, "local", TOKEN, WAIT_S, &cc, NULL);
            strata_comm_destroy(cc);
            _exit(0);
        }
    int c0 = wait_child(pids[0], 2 * WAIT_S), c1 = wait_child(pids[1], 2 * WAIT_S);
    int left = access(path, F_OK);
    unsetenv("XDG_RUNTIME_DIR");
    unlink(path);
    snprintf(path, sizeof(path), "%s/strata", base);
    rmdir(path), rmdir(base);
    assert_int_equal(st, STRATA_ERR_SYSTEM);
    assert_non_null(strstr(msg, "another rank 0 of this job already listens"));
    assert_int_equal(code, 128 + SIGKILL);
    assert_int_equal(stale, 0);
    assert_int_equal(c0, 0), assert_int_equal(c1, 0);
    assert_int_equal(sh->status[0], STRATA_OK);
    assert_int_equal(sh->status[1], STRATA_OK);
    assert_int_equal(left, -1); /* removed once everyone joined */
    munmap(sh, sizeof(*sh));
}

/* mpirun-style ranks (OMPI_COMM_WORLD_* only, siblings of one parent): no
 * secret needed, they meet on the private local socket. */
static void test_local_rendezvous_without_token(void **state)
{
    (void)state;
    sh = fresh_shared();
    pid_t pids[2];
    for (int r = 0; r < 2; r++)
        if ((pids[r] = fork()) == 0) {
            char b[16];
            unsetenv("STRATA_TOKEN"), unsetenv("STRATA_ROOT");
            snprintf(b, sizeof(b), "%d", r);
            setenv("OMPI_COMM_WORLD_RANK", b, 1), setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
            setenv("STRATA_TIMEOUT", "20", 1); /* WAIT_S */
            strata_comm_t *c = NULL;
            strata_error_t err = {0};
            int x = r + 5, y = 0;
            sh->status[r] = strata_comm_init_env(&c, &err);
            if (sh->status[r] == STRATA_OK)
                sh->status[r] = strata_comm_allreduce(c, &x, &y, 1, STRATA_INT32, STRATA_SUM, NULL);
            sh->value[r] = y;
            snprintf(sh->msg[r], sizeof(sh->msg[r]), "%s", err.msg);
            strata_comm_destroy(c);
            _exit(0);
        }
    for (int r = 0; r < 2; r++) {
        assert_int_equal(wait_child(pids[r], 2 * WAIT_S), 0);
        if (sh->status[r]) fprintf(stderr, "rank %d: %s\n", r, sh->msg[r]);
        assert_int_equal(sh->status[r], STRATA_OK);
        assert_int_equal(sh->value[r], 11); /* 5 + 6 */
    }
    munmap(sh, sizeof(*sh));
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels),
        cmocka_unit_test(test_token_not_on_wire),
        cmocka_unit_test(test_wrong_token_refused_by_rank0),
        cmocka_unit_test(test_silent_connections),
        cmocka_unit_test(test_foreign_segment_refused),
        cmocka_unit_test(test_status_frame_255),
        cmocka_unit_test(test_early_exit_detected),
        cmocka_unit_test(test_segment_removed_when_rank0_dies),
        cmocka_unit_test(test_launcher_leaves_other_children),
        cmocka_unit_test(test_ranks_die_with_launcher),
        cmocka_unit_test(test_env_refuses_guessable_secret),
        cmocka_unit_test(test_loose_socket_dir_refused),
        cmocka_unit_test(test_local_socket_taken_or_stale),
        cmocka_unit_test(test_local_rendezvous_without_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
