/*
 * launch.c — the local launcher behind `strata run` and `strata bench`:
 * fork N ranks with the rendezvous environment, watch them, and end the
 * job as a unit.
 *
 * Design. The launcher listens on a free loopback port (bind to port 0,
 * handed to rank 0 as STRATA_ROOT_FD so the port cannot be lost), picks a
 * random 128-bit token, and forks the ranks with STRATA_RANK,
 * STRATA_SIZE, STRATA_LOCAL_RANK, STRATA_ROOT and STRATA_TOKEN set.
 * Ranks are pinned one per CPU when the CPUs suffice (bind_rank). SIGINT,
 * SIGTERM and SIGHUP received by the launcher are forwarded from the
 * handler itself (kill(2) is async-signal-safe). The launcher blocks in
 * waitpid; the first rank to fail (non-zero exit or killed by a signal)
 * sets the job's exit code, the others get SIGTERM and, after grace_s,
 * SIGKILL. Finally any /dev/shm/strata-<jobhash>-* left by a rank that died
 * during start-up (before the segment was unlinked) is removed.
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
#include <sched.h>
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

static void make_token(char out[33])
{
    unsigned char r[16];
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        uint64_t x = util_hash_u64((uint64_t)getpid() ^ (uint64_t)(util_now() * 1e9));
        memcpy(r, &x, 8), x = util_hash_u64(x), memcpy(r + 8, &x, 8);
    }
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
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
    pid_t *pids;
    int code; /* first failure's code, 0 so far */
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

static void child_env(int rank, int n, int port, const char *token, int lfd)
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
    snprintf(buf, sizeof(buf), "%d", rank);
    setenv("STRATA_RANK", buf, 1);
    setenv("STRATA_LOCAL_RANK", buf, 1);
    snprintf(buf, sizeof(buf), "%d", n);
    setenv("STRATA_SIZE", buf, 1);
    snprintf(buf, sizeof(buf), "127.0.0.1:%d", port);
    setenv("STRATA_ROOT", buf, 1);
    setenv("STRATA_TOKEN", token, 1);
}

static int exit_code(int status)
{
    return WIFEXITED(status)     ? WEXITSTATUS(status)
           : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                 : 1;
}

/* Account for one finished rank; returns its index or -1. */
static int reap_one(job_t *j, pid_t pid)
{
    for (int i = 0; i < j->n; i++)
        if (j->pids[i] == pid) {
            j->pids[i] = 0;
            j->alive--;
            return i;
        }
    return -1;
}

/* Reap the rank that woke us and every other one already finished. The
 * first failure sets the job's code; among ranks found dead together a
 * rank killed by a signal wins, since the others most likely failed
 * because of it (they see a dead peer within milliseconds). */
static void reap(job_t *j, pid_t pid, int status, double grace_s)
{
    int fail_rank = -1, fail_status = 0;
    for (;;) {
        int i = reap_one(j, pid);
        bool failed = exit_code(status) != 0;
        if (i >= 0 && failed &&
            (fail_rank < 0 || (WIFSIGNALED(status) && !WIFSIGNALED(fail_status))))
            fail_rank = i, fail_status = status;
        pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0) break;
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

/* Wait for every rank; blocking while all is well, polling during the grace
 * period after a failure. */
static void watch(job_t *j, double grace_s)
{
    while (j->alive > 0) {
        int status;
        int flags = j->kill_at > 0 ? WNOHANG : 0;
        pid_t pid = waitpid(-1, &status, flags);
        if (pid > 0) {
            reap(j, pid, status, grace_s);
            continue;
        }
        if (pid < 0 && errno != EINTR) break;
        if (j->kill_at > 0 && util_now() >= j->kill_at) {
            forward(SIGKILL);
            j->kill_at = util_now() + 3600;
        }
        if (pid == 0) {
            struct timespec ts = {0, 5 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
}

static strata_status_t launch(int n, char *const argv[], int (*fn)(void *), void *arg,
                              double grace_s, int *code_p, strata_error_t *err)
{
    if (n < 1 || n > COMM_MAX_SIZE)
        return strata_error_set(err, STRATA_ERR_INVALID, "rank count %d is not 1..%d", n,
                                COMM_MAX_SIZE);
    int port = 0, lfd = listen_free(&port, err);
    if (lfd < 0) return STRATA_ERR_SYSTEM;
    char token[33], jobhash[17];
    make_token(token);
    comm_job_hash(token, jobhash);
    job_t j = {.n = n, .pids = util_calloc((size_t)n, sizeof(pid_t))};
    if (!j.pids) {
        close(lfd);
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    }
    g_pids = j.pids, g_n = n;
    struct sigaction sa = {.sa_handler = forward}, old[3];
    sigemptyset(&sa.sa_mask);
    const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &sa, &old[i]);
    fflush(NULL);
    strata_status_t st = STRATA_OK;
    for (int r = 0; r < n; r++) {
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 3; i++)
                signal(sigs[i], SIG_DFL);
            child_env(r, n, port, token, lfd);
            bind_rank(r, n);
            if (fn) {
                int rc = fn(arg);
                fflush(NULL);
                _exit(rc);
            }
            execvp(argv[0], argv);
            fprintf(stderr, "strata run: cannot run %s: %s\n", argv[0], strerror(errno));
            _exit(127);
        }
        if (pid < 0) {
            st = strata_error_set(err, STRATA_ERR_SYSTEM, "fork: %s", strerror(errno));
            forward(SIGKILL);
            break;
        }
        j.pids[r] = pid;
        j.alive++;
    }
    close(lfd);
    watch(&j, grace_s > 0 ? grace_s : 2.0);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    g_n = 0;
    clean_shm(jobhash);
    util_free(j.pids);
    if (st == STRATA_OK) *code_p = j.code;
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
