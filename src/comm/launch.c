/*
 * launch.c — the local launcher behind `strata run` and `strata bench`:
 * fork N ranks with the rendezvous environment, watch them, and end the
 * job as a unit.
 *
 * Design. The launcher listens on a free loopback port (bind to port 0,
 * handed to rank 0 as STRATA_ROOT_FD so the port cannot be lost), picks a
 * random 128-bit token (getrandom; no fallback: without randomness the job
 * does not start), and forks the ranks with STRATA_RANK, STRATA_SIZE,
 * STRATA_LOCAL_RANK, STRATA_ROOT, STRATA_TOKEN and STRATA_LAUNCH_FD set.
 * Each rank dies with the launcher (PR_SET_PDEATHSIG, SIGKILL; a rank whose
 * launcher died before that call exits at once). Ranks are pinned one per
 * CPU when the CPUs suffice (bind_rank). SIGINT, SIGTERM and SIGHUP
 * received by the launcher are forwarded from the handler itself (kill(2)
 * is async-signal-safe). The launcher waits only for its own ranks (a
 * pidfd per rank, polled, then waitpid on that pid: a host program's other
 * children are never reaped here). When a rank exits, the launcher tells
 * every other rank on its STRATA_LAUNCH_FD socket (rank, wait status), so
 * a start-up waiting for that rank fails at once (bootstrap.c). The first
 * rank to fail (non-zero exit or killed by a signal) sets the job's exit
 * code, the others get SIGTERM and, after grace_s, SIGKILL. Finally any
 * /dev/shm/strata-<jobhash>-* left by a rank that died during start-up
 * (before the segment was unlinked) is removed.
 */
#define _GNU_SOURCE
#include "comm.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile pid_t *g_pids;
static volatile int g_n;

static void forward(int sig)
{
    for (int i = 0; i < g_n; i++)
        if (g_pids[i] > 0) kill(g_pids[i], sig);
}

/* A listening loopback socket on a free port, made before the ranks start
 * and handed to rank 0 (STRATA_ROOT_FD), so no other process can take the
 * port between choosing it and rank 0 listening, and early connections of
 * the other ranks wait in its backlog. */
static int listen_free(int *port_p, strata_error_t *err)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        strata_error_set(err, STRATA_ERR_SYSTEM, "cannot listen on a loopback port: %s",
                         strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    *port_p = ntohs(sa.sin_port);
    return fd;
}

static int make_token(char out[33], strata_error_t *err)
{
    unsigned char r[16];
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        strata_error_set(err, STRATA_ERR_SYSTEM, "getrandom (for the job token): %s",
                         strerror(errno));
        return -1;
    }
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
    return 0;
}

static void clean_shm(const char *jobhash)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "strata-%s-", jobhash);
    DIR *d = opendir("/dev/shm");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            char name[300];
            snprintf(name, sizeof(name), "/dev/shm/%s", e->d_name);
            if (unlink(name) == 0)
                strata_log(STRATA_LOG_INFO, "launcher: removed leftover %s", name);
        }
    closedir(d);
}

typedef struct job {
    int n;
    pid_t *pids;  /* 0 once reaped */
    int *pidfds;  /* -1: none (then polled every 5 ms) */
    int (*ev)[2]; /* per rank: [0] the rank's end, [1] the launcher's (-1: closed) */
    int code;     /* first failure's code, 0 so far */
    int alive;
    double kill_at; /* when to SIGKILL the rest (0: not yet) */
} job_t;

/* Pin rank to the rank-th CPU this process may use when there are at least
 * n of them (like mpirun --bind-to core): an unpinned rank that the
 * scheduler moves onto its peer's core turns every hand-off into a context
 * switch (measured: 256 KiB allreduce 53-85 us unpinned vs 12 us pinned,
 * bench/README.md). Oversubscribed jobs stay unpinned, as with mpirun.
 * STRATA_BIND=0 disables. */
static void bind_rank(int rank, int n)
{
    const char *env = getenv("STRATA_BIND");
    if (env && strcmp(env, "0") == 0) return;
    if (comm_cpu_count() >= n) comm_pin_cpu(rank);
}

int comm_cpu_count(void)
{
    cpu_set_t mask;
    return sched_getaffinity(0, sizeof(mask), &mask) == 0 ? CPU_COUNT(&mask) : 0;
}

void comm_pin_cpu(int k)
{
    cpu_set_t mask, one;
    if (sched_getaffinity(0, sizeof(mask), &mask) != 0 || CPU_COUNT(&mask) == 0) return;
    k %= CPU_COUNT(&mask);
    for (int b = 0, i = 0; b < CPU_SETSIZE; b++)
        if (CPU_ISSET(b, &mask) && i++ == k) {
            CPU_ZERO(&one);
            CPU_SET(b, &one);
            sched_setaffinity(0, sizeof(one), &one);
            return;
        }
}

static void child_env(int rank, int n, int port, const char *token, int lfd, int evfd)
{
    char buf[64];
    if (rank == 0) { /* rank 0 inherits the listening socket across exec */
        fcntl(lfd, F_SETFD, 0);
        snprintf(buf, sizeof(buf), "%d", lfd);
        setenv("STRATA_ROOT_FD", buf, 1);
    } else {
        close(lfd);
        unsetenv("STRATA_ROOT_FD");
    }
    fcntl(evfd, F_SETFD, 0);
    snprintf(buf, sizeof(buf), "%d:%d:%d", evfd, rank, n);
    setenv("STRATA_LAUNCH_FD", buf, 1);
    snprintf(buf, sizeof(buf), "%d", rank);
    setenv("STRATA_RANK", buf, 1);
    setenv("STRATA_LOCAL_RANK", buf, 1);
    snprintf(buf, sizeof(buf), "%d", n);
    setenv("STRATA_SIZE", buf, 1);
    snprintf(buf, sizeof(buf), "127.0.0.1:%d", port);
    setenv("STRATA_ROOT", buf, 1);
    setenv("STRATA_TOKEN", token, 1);
}

/* In rank r right after fork: die with the launcher, drop the launcher's
 * descriptors (pidfds, other ranks' event sockets). */
static void child_detach(job_t *j, int r, pid_t launcher)
{
    /* If the launcher died between fork and prctl, no signal will come:
     * getppid() then names another process. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != launcher) _exit(128 + SIGKILL);
    for (int i = 0; i < j->n; i++) {
        if (j->pidfds[i] >= 0) close(j->pidfds[i]);
        if (j->ev[i][1] >= 0) close(j->ev[i][1]);
        if (i != r && j->ev[i][0] >= 0) close(j->ev[i][0]);
    }
}

static int exit_code(int status)
{
    return WIFEXITED(status)     ? WEXITSTATUS(status)
           : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                 : 1;
}

/* Tell every rank still running that rank i ended with status. */
static void notify_exit(job_t *j, int i, int status)
{
    unsigned char b[8];
    for (int k = 0; k < 4; k++)
        b[k] = (unsigned char)((unsigned)i >> 8 * k),
        b[4 + k] = (unsigned char)((unsigned)status >> 8 * k);
    for (int k = 0; k < j->n; k++)
        if (k != i && j->pids[k] > 0 && j->ev[k][1] >= 0)
            send(j->ev[k][1], b, sizeof(b), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (j->ev[i][1] >= 0) close(j->ev[i][1]), j->ev[i][1] = -1;
}

/* Reap every rank that has finished, by its own pid. The first failure
 * sets the job's code; among ranks found dead together a rank killed by a
 * signal wins, since the others most likely failed because of it (they see
 * a dead peer within milliseconds). */
static void reap(job_t *j, double grace_s)
{
    int fail_rank = -1, fail_status = 0;
    for (int i = 0; i < j->n; i++) {
        int status = 0;
        if (j->pids[i] <= 0) continue;
        pid_t got = waitpid(j->pids[i], &status, WNOHANG);
        if (got == 0 || (got < 0 && errno != ECHILD)) continue;
        if (got < 0)
            strata_log(STRATA_LOG_WARN, "launcher: rank %d was reaped by another waiter", i);
        j->pids[i] = 0;
        j->alive--;
        if (j->pidfds[i] >= 0) close(j->pidfds[i]), j->pidfds[i] = -1;
        notify_exit(j, i, status);
        if (exit_code(status) != 0 &&
            (fail_rank < 0 || (WIFSIGNALED(status) && !WIFSIGNALED(fail_status))))
            fail_rank = i, fail_status = status;
    }
    if (fail_rank < 0 || j->code != 0) return;
    j->code = exit_code(fail_status);
    if (WIFSIGNALED(fail_status))
        strata_log(STRATA_LOG_WARN, "launcher: rank %d killed by signal %d", fail_rank,
                   WTERMSIG(fail_status));
    else
        strata_log(STRATA_LOG_WARN, "launcher: rank %d exited with %d", fail_rank, j->code);
    forward(SIGTERM);
    j->kill_at = util_now() + grace_s;
}

/* Wait for every rank: poll their pidfds (every 5 ms without them), wake
 * at least once a second and at the end of the grace period. */
static void watch(job_t *j, double grace_s)
{
    struct pollfd pf[COMM_MAX_SIZE];
    while (j->alive > 0) {
        int n = 0, ms = 1000;
        for (int i = 0; i < j->n; i++)
            if (j->pids[i] > 0 && j->pidfds[i] >= 0)
                pf[n++] = (struct pollfd){.fd = j->pidfds[i], .events = POLLIN};
            else if (j->pids[i] > 0)
                ms = 5;
        if (j->kill_at > 0) {
            double left = j->kill_at - util_now();
            if (left * 1000 < ms) ms = left > 0 ? (int)(left * 1000) + 1 : 0;
        }
        poll(pf, (nfds_t)n, ms); /* EINTR (a forwarded signal) just loops */
        reap(j, grace_s);
        if (j->kill_at > 0 && util_now() >= j->kill_at) {
            forward(SIGKILL);
            j->kill_at = util_now() + 3600;
        }
    }
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
#else
    (void)pid;
    return -1;
#endif
}

static job_t *job_new(int n, strata_error_t *err)
{
    job_t *j = util_calloc(1, sizeof(*j));
    if (j) j->pids = util_calloc((size_t)n, sizeof(pid_t));
    if (j) j->pidfds = util_malloc((size_t)n * sizeof(int));
    if (j) j->ev = util_malloc((size_t)n * sizeof(*j->ev));
    if (!j || !j->pids || !j->pidfds || !j->ev) {
        if (j) util_free(j->pids), util_free(j->pidfds), util_free(j->ev), util_free(j);
        strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
        return NULL;
    }
    j->n = n;
    for (int i = 0; i < n; i++) {
        j->pidfds[i] = -1;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, j->ev[i]) != 0)
            j->ev[i][0] = j->ev[i][1] = -1; /* the rank just gets no early-exit news */
    }
    return j;
}

static void job_free(job_t *j)
{
    for (int i = 0; i < j->n; i++) {
        if (j->pidfds[i] >= 0) close(j->pidfds[i]);
        if (j->ev[i][0] >= 0) close(j->ev[i][0]);
        if (j->ev[i][1] >= 0) close(j->ev[i][1]);
    }
    util_free(j->pids), util_free(j->pidfds), util_free(j->ev), util_free(j);
}

static void run_rank(job_t *j, int r, pid_t launcher, int port, const char *token, int lfd,
                     char *const argv[], int (*fn)(void *), void *arg)
{
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++)
        signal(sigs[i], SIG_DFL);
    int evfd = j->ev[r][0];
    j->ev[r][0] = -1; /* kept: child_detach closes the rest */
    child_detach(j, r, launcher);
    child_env(r, j->n, port, token, lfd, evfd);
    bind_rank(r, j->n);
    if (fn) {
        int rc = fn(arg);
        fflush(NULL);
        _exit(rc);
    }
    execvp(argv[0], argv);
    fprintf(stderr, "strata run: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

static strata_status_t launch(int n, char *const argv[], int (*fn)(void *), void *arg,
                              double grace_s, int *code_p, strata_error_t *err)
{
    if (n < 1 || n > COMM_MAX_SIZE)
        return strata_error_set(err, STRATA_ERR_INVALID, "rank count %d is not 1..%d", n,
                                COMM_MAX_SIZE);
    char token[33], jobhash[17];
    if (make_token(token, err) != 0) return STRATA_ERR_SYSTEM;
    comm_job_hash(token, jobhash);
    int port = 0, lfd = listen_free(&port, err);
    if (lfd < 0) return STRATA_ERR_SYSTEM;
    job_t *j = job_new(n, err);
    if (!j) {
        close(lfd);
        return STRATA_ERR_NOMEM;
    }
    g_pids = j->pids, g_n = n;
    struct sigaction sa = {.sa_handler = forward}, old[3];
    sigemptyset(&sa.sa_mask);
    const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &sa, &old[i]);
    fflush(NULL);
    strata_status_t st = STRATA_OK;
    pid_t self = getpid();
    for (int r = 0; r < n; r++) {
        pid_t pid = fork();
        if (pid == 0) run_rank(j, r, self, port, token, lfd, argv, fn, arg);
        if (pid < 0) {
            st = strata_error_set(err, STRATA_ERR_SYSTEM, "fork: %s", strerror(errno));
            forward(SIGKILL);
            break;
        }
        j->pids[r] = pid;
        j->pidfds[r] = open_pidfd(pid);
        if (j->ev[r][0] >= 0) close(j->ev[r][0]), j->ev[r][0] = -1;
        j->alive++;
    }
    close(lfd);
    watch(j, grace_s > 0 ? grace_s : 2.0);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    g_n = 0;
    clean_shm(jobhash);
    if (st == STRATA_OK) *code_p = j->code;
    job_free(j);
    return st;
}

strata_status_t strata_launch(int n, char *const argv[], double grace_s, int *exit_code_p,
                              strata_error_t *err)
{
    if (!argv || !argv[0] || !exit_code_p)
        return strata_error_set(err, STRATA_ERR_INVALID, "no program to run");
    return launch(n, argv, NULL, NULL, grace_s, exit_code_p, err);
}

strata_status_t strata_launch_fn(int n, int (*fn)(void *arg), void *arg, double grace_s,
                                 int *exit_code_p, strata_error_t *err)
{
    if (!fn || !exit_code_p) return strata_error_set(err, STRATA_ERR_INVALID, "no function");
    return launch(n, NULL, fn, arg, grace_s, exit_code_p, err);
}
