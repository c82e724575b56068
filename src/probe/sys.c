/*
 * sys.c — what the operating system charges the runtime:
 *
 *   proc_switch  two processes pinned to one cpu hand a turn back and forth
 *                with sched_yield (the runtime's way to give up a shared
 *                core): a round is two switches; sample = batch / switches.
 *   futex_switch the same two processes on one cpu, each waiting for its
 *                turn asleep in FUTEX_WAIT (a shared word, as the
 *                runtime's bells) and woken by the other's FUTEX_WAKE: the
 *                switch the runtime's futex regime pays when ranks share a
 *                core; sample = batch / switches.
 *   futex_wake   two threads on different cpus (one cpu when only one)
 *                wake each other with FUTEX_WAKE, each waiting in
 *                FUTEX_WAIT: time from a wake to the woken thread running,
 *                = round / 2.
 *   page_fault   first touch of each 4 KiB page of a fresh anonymous
 *                mapping (the kernel zeroes and maps a page): batch / pages.
 * Every wait is bounded (yield loops check a deadline; FUTEX_WAIT has a
 * timeout); a child process is always reaped.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 2000
/* A round that waits longer than DEADLINE_S for its peer has stalled (the
 * peer died or never ran); a whole sample gives up after SAMPLE_MAX_S.
 * The limit is per round, not per sample: under CPU hogs at equal
 * priority every turn can cost a time slice of a few ms, and 2,000 of them
 * passed a per-sample 2 s (cli_probe_cli under stress-ng, bench/stress). */
#define DEADLINE_S   2.0
#define SAMPLE_MAX_S 30.0

/* Whether a wait that started its round at *round_t0 (0: not yet) has
 * stalled, or the sample passed `end`. */
static bool stalled(double *round_t0, double end)
{
    double now = util_now();
    if (*round_t0 == 0) *round_t0 = now;
    return now > end || now - *round_t0 > DEADLINE_S;
}

/* A sample's parameters: the cpus and how many rounds (or bytes). */
typedef struct sys_arg {
    int cpus[2];
    uint64_t rounds;
} sys_arg_t;

/* Rounds that make one sample last about `secs` when one round took
 * `each` s in a pilot; 50 .. MAX_ROUNDS. */
static uint64_t rounds_for(double secs, double each)
{
    double r = each > 0 ? secs / each : MAX_ROUNDS;
    return r < 50 ? 50 : r > MAX_ROUNDS ? MAX_ROUNDS : (uint64_t)r;
}

/* ==== Process switch ==== */

typedef struct turn {
    _Atomic uint32_t next; /* even: parent's turn, odd: child's */
    atomic_bool stop;
    bool futex; /* wait asleep on `next` (else sched_yield) */
} turn_t;

static bool take_turns(turn_t *t, uint32_t mine, uint64_t rounds, double end)
{
    for (uint32_t k = 0; k < rounds; k++) {
        uint32_t want = 2 * k + mine, v;
        double t0 = 0;
        while ((v = atomic_load(&t->next)) != want) {
            if (atomic_load(&t->stop) || stalled(&t0, end)) return false;
            if (t->futex) { /* non-private: the word is shared by two processes */
                struct timespec ts = {.tv_nsec = 50 * 1000 * 1000};
                syscall(SYS_futex, (uint32_t *)&t->next, FUTEX_WAIT, v, &ts, NULL, 0);
            } else {
                sched_yield();
            }
        }
        atomic_store(&t->next, want + 1);
        if (t->futex) syscall(SYS_futex, (uint32_t *)&t->next, FUTEX_WAKE, 1, NULL, NULL, 0);
    }
    return true;
}

static double turns_sample(const sys_arg_t *a, bool futex)
{
    int cpu = a->cpus[0];
    uint64_t rounds = a->rounds;
    turn_t *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (t == MAP_FAILED) return -1;
    atomic_init(&t->next, 0);
    atomic_init(&t->stop, false);
    t->futex = futex;
    double end = util_now() + SAMPLE_MAX_S, r = -1;
    pid_t pid = fork();
    if (pid == 0) {
        probe_pin(cpu);
        _exit(take_turns(t, 1, rounds, end) ? 0 : 1);
    }
    if (pid > 0) {
        probe_pin(cpu);
        double t0 = util_now();
        if (take_turns(t, 0, rounds, end)) r = (util_now() - t0) / (2.0 * (double)rounds);
        atomic_store(&t->stop, true);
        if (futex) syscall(SYS_futex, (uint32_t *)&t->next, FUTEX_WAKE, 1, NULL, NULL, 0);
        int status;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) r = -1;
    }
    munmap(t, sizeof(*t));
    return r;
}

static double switch_sample(void *arg)
{
    return turns_sample(arg, false);
}

static double futex_switch_sample(void *arg)
{
    return turns_sample(arg, true);
}

/* ==== Futex wake ==== */

typedef struct fx {
    _Atomic uint32_t word; /* even: main's turn, odd: helper's */
    int cpu;
    uint32_t rounds;
    atomic_bool stop;
} fx_t;

static void fx_wait(_Atomic uint32_t *w, uint32_t seen)
{
    struct timespec ts = {.tv_nsec = 50 * 1000 * 1000};
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

static void fx_wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Wait for `want` (sleeping in the kernel), then post want + 1. */
static bool fx_step(fx_t *f, uint32_t want, double end)
{
    uint32_t v;
    double t0 = 0;
    while ((v = atomic_load(&f->word)) != want) {
        if (atomic_load(&f->stop) || stalled(&t0, end)) return false;
        fx_wait(&f->word, v);
    }
    atomic_store(&f->word, want + 1);
    fx_wake(&f->word);
    return true;
}

static void *fx_helper(void *arg)
{
    fx_t *f = arg;
    probe_pin(f->cpu);
    double end = util_now() + SAMPLE_MAX_S;
    for (uint32_t k = 0; k < f->rounds; k++)
        if (!fx_step(f, 2 * k + 1, end)) break;
    return NULL;
}

static double futex_sample(void *arg)
{
    const sys_arg_t *a = arg; /* cpus: [main, helper] */
    fx_t f = {.cpu = a->cpus[1], .rounds = (uint32_t)a->rounds};
    const int *cpus = a->cpus;
    pthread_t th;
    atomic_init(&f.word, 0);
    atomic_init(&f.stop, false);
    if (pthread_create(&th, NULL, fx_helper, &f) != 0) return -1;
    probe_pin(cpus[0]);
    double t0 = util_now(), end = t0 + SAMPLE_MAX_S, r = -1;
    uint32_t k;
    for (k = 0; k < f.rounds; k++)
        if (!fx_step(&f, 2 * k, end)) break;
    /* the last post wakes the helper's final wait; wait for its answer */
    if (k == f.rounds && fx_step(&f, 2 * f.rounds, end))
        r = (util_now() - t0) / (2.0 * f.rounds + 1);
    atomic_store(&f.stop, true);
    fx_wake(&f.word);
    pthread_join(th, NULL);
    return r;
}

/* ==== First-touch page fault ==== */

static double fault_sample(void *arg)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = ((const sys_arg_t *)arg)->rounds * page;
    unsigned char *p =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    double t0 = util_now();
    for (size_t i = 0; i < bytes; i += page)
        p[i] = 1;
    double r = (util_now() - t0) / (double)(bytes / page);
    munmap(p, bytes);
    return r;
}

/* Sample fn within `budget` (the figure's share of its section, the
 * pilot's time included): rounds sized by a 50-round pilot so that one
 * sample takes about a fifth of it, then samples while one more ends
 * within it (probe_sample_in: one at the least, fewer than PROBE_MIN_REPS
 * on a loaded host, where the pilot underestimated a sample's time). */
static strata_status_t sized(double (*fn)(void *), sys_arg_t *a, double budget,
                             strata_probe_stat_t *stat_p, strata_error_t *err)
{
    double t0 = util_now();
    a->rounds = 50;
    double each = fn(a); /* per switch / wake / page: ~ per round / 2 */
    if (!(each > 0)) return strata_error_set(err, STRATA_ERR_SYSTEM, "probe: a measurement failed");
    a->rounds = rounds_for(budget / (PROBE_MIN_REPS + 2), 2 * each);
    return probe_sample_in(fn, a, budget - (util_now() - t0), stat_p, err);
}

strata_status_t probe_fault(probe_ctx_t *x, double budget, strata_error_t *err)
{
    sys_arg_t a = {.cpus = {0, 0}}; /* the fault sample uses no cpus */
    (void)budget;                   /* the rest of the section's plan: its last figure */
    return sized(fault_sample, &a, probe_share(util_now(), x->deadline, 1), &x->res->page_fault,
                 err);
}

/* A switch or futex figure as probe_figure attempts it: a round that
 * stalls (or a sample past SAMPLE_MAX_S, or a fork that fails) makes
 * the sample fail; that is STRATA_ERR_TIMEOUT, so that it is tried once
 * more and then not measured, and the section goes on. Each attempt its
 * share of what is left of the section (`left` figures). */
typedef struct sys_try {
    probe_ctx_t *x;
    double (*fn)(void *);
    sys_arg_t *a;
    int left;
    strata_probe_stat_t *s;
    const char *name;
} sys_try_t;

static strata_status_t sys_attempt(void *arg, strata_error_t *err)
{
    sys_try_t *t = arg;
    strata_status_t st =
        sized(t->fn, t->a, probe_share(util_now(), t->x->deadline, t->left), t->s, err);
    if (st != STRATA_ERR_SYSTEM) return st;
    return strata_error_set(err, STRATA_ERR_TIMEOUT,
                            "probe: system costs: %s: a round stalled for %.0f s (or a sample "
                            "passed %.0f s)",
                            t->name, DEADLINE_S, SAMPLE_MAX_S);
}

/* The section's figures by name, as a gap names them. */
static const char *const sys_names[] = {"process switch (sched_yield)",
                                        "process switch (futex, one cpu)", "futex wake to running"};

strata_status_t probe_sys(probe_ctx_t *x, double budget, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    sys_arg_t a = {.cpus = {res->cpus[0], res->cores > 1 ? res->cpus[1] : res->cpus[0]}};
    cpu_set_t saved;
    sched_getaffinity(0, sizeof(saved), &saved); /* the samples pin this thread */
    probe_gaps_drop(res, sys_names, 3);          /* a second pass's own */
    /* four figures, each its share of what is left of the section; the
     * calibration prices the wait regimes with the two switches, not the
     * wake (not saved) */
    double (*const fns[])(void *) = {switch_sample, futex_switch_sample, futex_sample};
    strata_probe_stat_t *outs[] = {&res->proc_switch, &res->futex_switch, &res->futex_wake};
    strata_status_t st = STRATA_OK;
    for (int i = 0; i < 3 && st == STRATA_OK; i++) {
        sys_try_t t = {x, fns[i], &a, 4 - i, outs[i], sys_names[i]};
        st = probe_figure(res, sys_names[i], 0, i < 2, sys_attempt, &t, outs[i], err);
        probe_tick(x, budget, (i + 1.0) / 4);
    }
    sched_setaffinity(0, sizeof(saved), &saved);
    if (st == STRATA_OK) st = probe_fault(x, budget / 4, err);
    probe_tick(x, budget, 1);
    return st;
}
