/*
 * run_hosts.c — `strata run --hosts h1:4,h2:4 [--rsh CMD] [--root HOST:PORT]
 * -- PROGRAM ARGS…`: start ranks on several hosts through a remote shell.
 *
 * Rank r runs on the host whose slots hold it (h1 gets ranks 0..3, h2 4..7),
 * as `CMD HOST env STRATA_RANK=r STRATA_SIZE=N STRATA_LOCAL_RANK=k
 * STRATA_ROOT=… PROGRAM ARGS…`, CMD being `ssh` by default; any command that
 * takes a host name and then a command works (`ip netns exec` runs ranks in
 * network namespaces: tests/netns/netns_test.sh). The job token (128 random
 * bits) never appears on a command line, where other users could read it:
 * each rank's first action is a shell that reads it from its standard input,
 * which strata run writes and then closes. With ssh the command is sent as
 * one quoted string (ssh hands it to the remote shell), otherwise as
 * arguments. STRATA_ROOT is --root, else the first host on a port derived
 * from the token (MASTER_ADDR: see strata_comm_init_env).
 *
 * Supervision as in `strata run -n`: when one rank's command fails the others
 * get SIGTERM, then SIGKILL after the grace period; SIGINT/SIGTERM/SIGHUP are
 * forwarded; the exit code is the first failing rank's. Workload: once per
 * job; a few dozen processes.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOSTS_MAX 64
#define RANKS_MAX 64

typedef struct host_slot {
    char name[256];
    long n;
} host_slot_t;

/* "h1:4,h2:4" (a host without ":N" has one slot). Count of hosts, or -1. */
static int parse_hosts(const char *s, host_slot_t *h, long *total)
{
    int n = 0;
    *total = 0;
    for (const char *p = s; *p; n++) {
        size_t len = strcspn(p, ",");
        if (n == HOSTS_MAX || len == 0 || len >= sizeof h[n].name)
            return cli_usage_error("run", "--hosts '%s': expected HOST[:N],HOST[:N],...", s), -1;
        memcpy(h[n].name, p, len);
        h[n].name[len] = 0;
        char *colon = strrchr(h[n].name, ':');
        h[n].n = 1;
        if (colon && colon[1] && !strchr(colon + 1, ']')) {
            *colon = 0;
            if (cli_parse_int("run", "--hosts", colon + 1, 1, RANKS_MAX, &h[n].n)) return -1;
        }
        if (!h[n].name[0]) return cli_usage_error("run", "--hosts '%s': empty host name", s), -1;
        *total += h[n].n;
        p += len + (p[len] == ',');
    }
    if (*total > RANKS_MAX)
        return cli_usage_error("run", "--hosts '%s': %ld ranks, at most %d", s, *total, RANKS_MAX),
               -1;
    return n;
}

/* Single-quote s for a POSIX shell into out (ssh's remote command). */
static void shell_quote(const char *s, char *out, size_t cap)
{
    size_t o = 0;
    out[o++] = '\'';
    for (; *s && o + 5 < cap; s++) {
        if (*s == '\'') {
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            out[o++] = *s;
        }
    }
    out[o++] = '\'';
    out[o] = 0;
}

static volatile sig_atomic_t g_signal;
static void on_signal(int sig)
{
    g_signal = sig;
}

typedef struct job {
    pid_t pid[RANKS_MAX];
    int n, running;
} job_t;

/* The argv of rank r: rsh words, host, the token-reading shell, env, program. */
static char **rank_argv(char **rsh, int nrsh, const char *host, long r, long size, long k,
                        const char *root_env, char **prog, int nprog, bool ssh)
{
    static const char *const reader = "IFS= read -r STRATA_TOKEN && export STRATA_TOKEN && "
                                      "exec \"$0\" \"$@\" </dev/null";
    int n = nrsh + 1 + 3 + 5 + nprog + 1;
    char **v = calloc((size_t)n, sizeof(char *)), vars[4][320];
    if (!v) return NULL;
    snprintf(vars[0], sizeof vars[0], "STRATA_RANK=%ld", r);
    snprintf(vars[1], sizeof vars[1], "STRATA_SIZE=%ld", size);
    snprintf(vars[2], sizeof vars[2], "STRATA_LOCAL_RANK=%ld", k);
    snprintf(vars[3], sizeof vars[3], "%s", root_env);
    const char *cmd[RANKS_MAX + 16];
    int c = 0;
    cmd[c++] = "sh", cmd[c++] = "-c", cmd[c++] = reader, cmd[c++] = "env";
    for (int i = 0; i < 4; i++)
        cmd[c++] = vars[i];
    int m = 0;
    for (int i = 0; i < nrsh; i++)
        v[m++] = strdup(rsh[i]);
    v[m++] = strdup(host);
    if (ssh) { /* one string, quoted word by word, for the remote shell */
        size_t cap = 65536, used = 0;
        char *line = calloc(1, cap), q[4096];
        for (int i = 0; i < c + nprog && line; i++) {
            shell_quote(i < c ? cmd[i] : prog[i - c], q, sizeof q);
            used += (size_t)snprintf(line + used, cap - used, "%s%s", i ? " " : "", q);
        }
        v[m++] = line;
    } else {
        for (int i = 0; i < c; i++)
            v[m++] = strdup(cmd[i]);
        for (int i = 0; i < nprog; i++)
            v[m++] = strdup(prog[i]);
    }
    v[m] = NULL;
    return v;
}

static pid_t spawn(char **argv, const char *token)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[0], 0);
        close(fds[0]), close(fds[1]);
        execvp(argv[0], argv);
        fprintf(stderr, "strata run: %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fds[0]);
    if (pid > 0) {
        char line[64];
        int len = snprintf(line, sizeof line, "%s\n", token);
        if (write(fds[1], line, (size_t)len) != len) { /* the rank then fails to join */
        }
    }
    close(fds[1]);
    return pid;
}

static int exit_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Wait for every rank; on the first failure (or a signal) stop the others. */
static int supervise(job_t *j, double grace)
{
    int first = 0;
    double kill_at = 0;
    while (j->running > 0) {
        for (int r = 0; r < j->n; r++) {
            int status;
            if (j->pid[r] <= 0 || waitpid(j->pid[r], &status, WNOHANG) != j->pid[r]) continue;
            j->pid[r] = 0, j->running--;
            int code = exit_code(status);
            if (code != 0 && first == 0) {
                first = code;
                fprintf(stderr, "strata run: rank %d exited with %d; stopping the others\n", r,
                        code);
            }
        }
        if ((first || g_signal) && kill_at == 0) {
            for (int r = 0; r < j->n; r++)
                if (j->pid[r] > 0) kill(j->pid[r], SIGTERM);
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            kill_at = (double)ts.tv_sec + ts.tv_nsec * 1e-9 + grace;
            if (!first) first = 128 + g_signal;
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (kill_at > 0 && (double)ts.tv_sec + ts.tv_nsec * 1e-9 >= kill_at)
            for (int r = 0; r < j->n; r++)
                if (j->pid[r] > 0) kill(j->pid[r], SIGKILL);
        struct timespec nap = {0, 10 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    return first;
}

int cli_run_hosts(const char *hosts, const char *rsh_cmd, const char *root, double grace,
                  char **prog, int nprog)
{
    host_slot_t h[HOSTS_MAX];
    long total;
    int nh = parse_hosts(hosts, h, &total);
    if (nh < 0) return CLI_USAGE;
    char rshbuf[1024], *rsh[32];
    int nrsh = 0;
    snprintf(rshbuf, sizeof rshbuf, "%s", rsh_cmd && *rsh_cmd ? rsh_cmd : "ssh");
    for (char *t = strtok(rshbuf, " \t"); t && nrsh < 32; t = strtok(NULL, " \t"))
        rsh[nrsh++] = t;
    if (nrsh == 0) return cli_usage_error("run", "--rsh: empty command");
    bool ssh = strcmp(rsh[0], "ssh") == 0 || strstr(rsh[0], "/ssh") != NULL;
    unsigned char rnd[16];
    char token[33], root_env[320];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        fprintf(stderr, "strata run: getrandom: %s\n", strerror(errno));
        return CLI_FAIL;
    }
    for (int i = 0; i < 16; i++)
        snprintf(token + 2 * i, 3, "%02x", rnd[i]);
    if (root && *root)
        snprintf(root_env, sizeof root_env, "STRATA_ROOT=%s", root);
    else
        snprintf(root_env, sizeof root_env, "MASTER_ADDR=%s", h[0].name);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL), sigaction(SIGTERM, &sa, NULL), sigaction(SIGHUP, &sa, NULL);
    job_t j = {.n = 0};
    for (int i = 0; i < nh; i++)
        for (long k = 0; k < h[i].n; k++) {
            char **argv =
                rank_argv(rsh, nrsh, h[i].name, j.n, total, k, root_env, prog, nprog, ssh);
            pid_t pid = argv ? spawn(argv, token) : -1;
            for (char **a = argv; a && *a; a++)
                free(*a);
            free(argv);
            j.pid[j.n++] = pid;
            if (pid > 0) j.running++;
            if (pid <= 0) {
                fprintf(stderr, "strata run: cannot start rank %d on %s\n", j.n - 1, h[i].name);
                g_signal = SIGTERM;
            }
        }
    explicit_bzero(token, sizeof token);
    return supervise(&j, grace);
}
