/*
 * hog_test.c — small collectives beside CPU hogs: ranks that outnumber the
 * CPUs left to them by busy-looping processes of the same priority must
 * still make progress at the rate of a sleep/wake hand-off, not of the
 * hogs' time slices.
 *
 * What it guards (issue #10, the suite under `stress-ng --cpu 2`): a rank
 * that waits by spinning and then calling sched_yield stays runnable, and
 * beside a process that never yields it runs again only when that process's
 * time slice ends (milliseconds; EEVDF also pushes a yielder's deadline
 * back). With 20,000 small calls per case, comm_small_test took over 600 s
 * under two hogs. A waiter that sleeps on a futex and is woken by the rank
 * it waits for is placed ahead of the hogs (shm.c, "Waiting").
 *
 * Set-up: one hog (a forked child spinning on a clock read until the
 * parent kills it, or by itself after HOG_LIFE_S, so none outlives a
 * crashed test) and RANKS ranks, all pinned to the first CPU this process
 * may use — so the contest does not depend on where the kernel places
 * them — doing CALLS 8-byte int64 SUM allreduces, each checked exactly
 * (rank r contributes call + r: the sum is P * call + P(P-1)/2).
 *
 * Bound: LIMIT_PER_CALL_S a call, below EEVDF's base slice (0.75 ms before
 * its log2(CPUs) scaling: sysctl_sched_base_slice, kernel/sched/fair.c), so
 * a wait that loses one hog slice per call fails. Measured on the 2-CPU
 * development host at load 13-14 (bench/README.md, "CPU hogs"): the yield
 * path 1.1-1.8 ms a call (2.2-3.6 s: fails), the sleep path 62-132 us
 * (0.12-0.26 s), 4.5-10x inside the bound; 165-182 us (3.3-3.6x inside)
 * since the small slots poll a peer that looks running 4096 times before
 * blocking (shm.c, set_wait_policy; issue 17). RUN_SERIAL keeps the suite's other tests off the
 * CPUs, but not other jobs of a shared machine: at load 13 (six builds and
 * benches beside the suite) one run of the 4-rank case read 738 us a call.
 * Load from outside only adds time and comes and goes, while a wait that
 * loses a hog slice a call loses it in every run; so each case passes when
 * the fastest of up to ATTEMPTS runs is inside the bound (every run's
 * results are checked exactly). Where the CPU is not ours at all (this
 * process, spinning on it for SHARE_PROBE_S, gets under MIN_SHARE of the
 * wall time: other jobs' threads are hogs the test did not start, and their
 * number is unknown), the case is skipped with that figure printed. HOGS, RANKS and PIN (-1:
 * unpinned) override the set-up for experiments.
 */
#define _GNU_SOURCE
#include "test.h"

#include "strata/comm.h"

#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CALLS            2000
#define RANKS            2
#define LIMIT_PER_CALL_S 0.6e-3
#define HOG_LIFE_S       120.0 /* a hog exits by itself after this */
#define ATTEMPTS         3
#define SHARE_PROBE_S    0.1
#define MIN_SHARE        0.7

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int g_pin = -1;
static void pin_to(int cpu)
{
    if (cpu < 0) return;
    cpu_set_t m;
    CPU_ZERO(&m);
    CPU_SET(cpu, &m);
    sched_setaffinity(0, sizeof m, &m);
}

static int rank_main(void *arg)
{
    (void)arg;
    pin_to(g_pin);
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    if (strata_comm_init_env(&c, &err) != STRATA_OK) {
        fprintf(stderr, "init: %s\n", err.msg);
        return 2;
    }
    int r = strata_comm_rank(c), P = strata_comm_size(c), bad = 0;
    for (int64_t i = 0; i < CALLS && !bad; i++) {
        int64_t in = i + r, out = -1, want = (int64_t)P * i + (int64_t)P * (P - 1) / 2;
        strata_status_t st = strata_comm_allreduce(c, &in, &out, 1, STRATA_INT64, STRATA_SUM, NULL);
        if (st != STRATA_OK || out != want) {
            fprintf(stderr, "rank %d call %lld: status %d (%s), %lld, expected %lld\n", r,
                    (long long)i, st, strata_comm_errmsg(c), (long long)out, (long long)want);
            bad = 1;
        }
    }
    strata_comm_destroy(c);
    return bad;
}

static pid_t hog(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        pin_to(g_pin);
        double end = now_s() + HOG_LIFE_S;
        while (now_s() < end) {
        }
        _exit(0);
    }
    return pid;
}

static int env_int(const char *name, int dflt, int lo, int hi)
{
    const char *v = getenv(name);
    int n = v && *v ? atoi(v) : dflt;
    return n < lo ? lo : n > hi ? hi : n;
}

/* The first CPU this process may use (0 if unknown). */
static int first_cpu(void)
{
    cpu_set_t m;
    if (sched_getaffinity(0, sizeof m, &m) != 0) return 0;
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &m)) return i;
    return 0;
}

/* The share of CPU cpu this process gets while spinning on it for
 * SHARE_PROBE_S: near 1 when nothing else runs there. */
static double cpu_share(int cpu)
{
    cpu_set_t old;
    if (cpu < 0 || sched_getaffinity(0, sizeof old, &old) != 0) return 1.0;
    pin_to(cpu);
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    double t0 = now_s(), t;
    while ((t = now_s()) - t0 < SHARE_PROBE_S) {
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    sched_setaffinity(0, sizeof old, &old);
    double cpu_s = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
    return cpu_s / (t - t0);
}

/* One run of R ranks beside H hogs; its results are checked exactly, its
 * wall time is returned. */
static double run_once(int ranks, int attempt)
{
    int H = env_int("HOGS", 1, 0, 16), R = env_int("RANKS", ranks, 2, 16), code = -1;
    g_pin = env_int("PIN", first_cpu(), -1, CPU_SETSIZE - 1);
    pid_t hogs[16];
    for (int i = 0; i < H; i++)
        assert_true((hogs[i] = hog()) > 0);
    strata_error_t err = {0};
    double t0 = now_s();
    strata_status_t st = strata_launch_fn(R, rank_main, NULL, 2.0, &code, &err);
    double t = now_s() - t0;
    for (int i = 0; i < H; i++) {
        kill(hogs[i], SIGKILL);
        waitpid(hogs[i], NULL, 0);
    }
    printf("hog_test: %d ranks beside %d hogs (cpu %d), run %d: %d calls in %.2f s (%.1f us a "
           "call; bound %.2f s)\n",
           R, H, g_pin, attempt, CALLS, t, t / CALLS * 1e6, CALLS * LIMIT_PER_CALL_S);
    assert_int_equal(st, STRATA_OK);
    assert_int_equal(code, 0);
    return t;
}

static void run_beside_hogs(int ranks)
{
    int cpu = env_int("PIN", first_cpu(), -1, CPU_SETSIZE - 1);
    double share = cpu_share(cpu);
    if (share < MIN_SHARE) {
        printf("hog_test: SKIP: cpu %d is shared with other jobs (this process got %.0f %% of it "
               "spinning for %.1f s; the bound needs at least %.0f %%)\n",
               cpu, share * 100, SHARE_PROBE_S, MIN_SHARE * 100);
        skip();
    }
    double best = run_once(ranks, 1);
    for (int a = 2; a <= ATTEMPTS && best >= CALLS * LIMIT_PER_CALL_S; a++) {
        double t = run_once(ranks, a);
        if (t < best) best = t;
    }
    assert_true(best < CALLS * LIMIT_PER_CALL_S);
}

static void test_beside_hogs(void **s)
{
    (void)s;
    run_beside_hogs(RANKS);
}

/* 4 ranks and a hog on one CPU: the ranks outnumber the host's CPUs, so a
 * yield marks yields slow only past COMM_YIELD_SLOW_SHARED (shm.c); that
 * mark must still catch a hog's slice, or every call loses one. Measured
 * (load 16): 283-333 us a call; with the mark never set, 1.65-2.41 ms. */
static void test_beside_hogs_shared(void **s)
{
    (void)s;
    run_beside_hogs(4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_beside_hogs),
                                       cmocka_unit_test(test_beside_hogs_shared)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
