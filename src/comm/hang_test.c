/*
 * hang_test.c — no call blocks past its deadline: point-to-point, the
 * schedule executor, the small slots and the engine, each against a peer
 * that never calls, is SIGKILLed or SIGSTOPped — also while its off-CPU word
 * says it is inside sched_yield (the case that left the small slots' waiter
 * yielding for ever) — and against a local abort from another thread.
 *
 * Each survivor must return the typed error (TIMEOUT for a silent or stopped
 * peer: a stopped process is indistinguishable from a slow one; PEER for a
 * dead one; ABORTED for its own abort) within twice its deadline. Before the
 * fix every case but the engine's hung until ctest's timeout.
 */
#define _GNU_SOURCE
#include "test.h"

#include "ranks_test.h"

#include <pthread.h>
#include <signal.h>

#define DEADLINE 1.0

static const strata_call_opts_t opts = {.timeout_s = DEADLINE};

/* How the misbehaving rank (rank 1) leaves the job. */
typedef enum { GONE_SLEEP, GONE_KILL, GONE_STOP } gone_t;
static gone_t g_gone;
static bool g_in_yield; /* pretend to be inside sched_yield when going */

static void misbehave(strata_comm_t *c)
{
    if (g_in_yield) /* the off-CPU word as comm_yield leaves it: CPU unknown */
        atomic_store(&c->lines[c->rank].misc.off, UINT64_MAX);
    if (g_gone == GONE_KILL) raise(SIGKILL);
    if (g_gone == GONE_STOP) raise(SIGSTOP);
    sleep(4); /* GONE_SLEEP: alive but never calls */
    strata_comm_destroy(c);
    _exit(0);
}

/* Survivors end the stopped rank once they have reported. */
static void reap_stopped(strata_comm_t *c)
{
    if (g_gone == GONE_STOP && c->rank == 0) kill(c->pids[1], SIGKILL);
}

/* The call under test, chosen per test. */
static strata_status_t (*g_call)(strata_comm_t *c);

static int rank_main(void *arg)
{
    (void)arg;
    signal(SIGTERM, SIG_IGN); /* report even after the launcher's SIGTERM */
    strata_comm_t *c = ranks_join();
    if (c->rank == 1) misbehave(c);
    double t0 = util_now();
    ranks_record(c, g_call(c), t0);
    reap_stopped(c);
    strata_comm_destroy(c);
    return 0;
}

/* Run g_call on n ranks with rank 1 gone as told; every other rank must
 * return `want` within (lo, 2 × DEADLINE]. */
static void expect(int n, gone_t gone, bool in_yield, strata_status_t want, double lo)
{
    g_gone = gone, g_in_yield = in_yield;
    ranks_fresh();
    ranks_run(n, rank_main);
    for (int r = 0; r < n; r++) {
        if (r == 1) continue;
        assert_true(rrep->done[r]);
        if (rrep->status[r] != (int)want)
            fail_msg("rank %d: %s (%s), expected %s", r,
                     strata_status_str((strata_status_t)rrep->status[r]), rrep->msg[r],
                     strata_status_str(want));
        if (!(rrep->elapsed[r] <= 2 * DEADLINE && rrep->elapsed[r] >= lo))
            fail_msg("rank %d returned after %.3f s, expected (%.2f, %.2f]", r, rrep->elapsed[r],
                     lo, 2 * DEADLINE);
    }
}

/* ==== Calls ==== */

static unsigned char g_buf[1 << 20];

static strata_status_t recv_small(strata_comm_t *c)
{
    return strata_comm_recv(c, g_buf, 100, 1, &opts);
}

/* 1 MiB: fills the channel's 4 × 64 KiB slots, then waits for space */
static strata_status_t send_big(strata_comm_t *c)
{
    return strata_comm_send(c, g_buf, sizeof g_buf, 1, &opts);
}

static strata_status_t ring_allreduce(strata_comm_t *c)
{
    strata_call_opts_t o = opts;
    o.algo = STRATA_COMM_RING;
    return strata_comm_allreduce(c, STRATA_IN_PLACE, g_buf, sizeof g_buf / 4, STRATA_FP32,
                                 STRATA_SUM, &o);
}

static strata_status_t recdbl_allreduce(strata_comm_t *c)
{
    strata_call_opts_t o = opts;
    o.algo = STRATA_COMM_RECDBL;
    return strata_comm_allreduce(c, STRATA_IN_PLACE, g_buf, 1000, STRATA_INT32, STRATA_SUM, &o);
}

static strata_status_t small_allreduce(strata_comm_t *c)
{
    return strata_comm_allreduce(c, STRATA_IN_PLACE, g_buf, 4, STRATA_FP32, STRATA_SUM, &opts);
}

static strata_status_t barrier(strata_comm_t *c)
{
    return strata_comm_barrier(c, &opts);
}

static strata_status_t engine_allreduce(strata_comm_t *c)
{
    return strata_comm_allreduce(c, STRATA_IN_PLACE, g_buf, 16384, STRATA_FP32, STRATA_SUM, &opts);
}

/* ==== Tests ==== */

static void test_recv_silent_peer(void **state)
{
    (void)state;
    g_call = recv_small;
    expect(2, GONE_SLEEP, false, STRATA_ERR_TIMEOUT, DEADLINE * 0.5);
}

static void test_send_full_channel(void **state)
{
    (void)state;
    g_call = send_big;
    expect(2, GONE_SLEEP, false, STRATA_ERR_TIMEOUT, DEADLINE * 0.5);
}

static strata_comm_t *g_abort_comm;

static void *abort_soon(void *arg)
{
    (void)arg;
    usleep(300000);
    strata_comm_abort(g_abort_comm);
    return NULL;
}

/* recv with a long deadline, aborted by another thread after 0.3 s */
static strata_status_t recv_aborted(strata_comm_t *c)
{
    pthread_t t;
    g_abort_comm = c;
    pthread_create(&t, NULL, abort_soon, NULL);
    strata_call_opts_t o = {.timeout_s = 30};
    strata_status_t st = strata_comm_recv(c, g_buf, 100, 1, &o);
    pthread_join(t, NULL);
    return st;
}

static void test_recv_abort(void **state)
{
    (void)state;
    g_call = recv_aborted;
    expect(2, GONE_SLEEP, false, STRATA_ERR_ABORTED, 0.2);
}

static void test_executor_peer_killed(void **state)
{
    (void)state;
    g_call = ring_allreduce;
    expect(3, GONE_KILL, false, STRATA_ERR_PEER, 0);
}

static void test_executor_peer_stopped(void **state)
{
    (void)state;
    g_call = recdbl_allreduce;
    expect(2, GONE_STOP, false, STRATA_ERR_TIMEOUT, DEADLINE * 0.5);
}

static void test_small_killed_in_yield(void **state)
{
    (void)state;
    g_call = small_allreduce;
    expect(3, GONE_KILL, true, STRATA_ERR_PEER, 0);
}

static void test_small_stopped_in_yield(void **state)
{
    (void)state;
    g_call = barrier;
    expect(2, GONE_STOP, true, STRATA_ERR_TIMEOUT, DEADLINE * 0.5);
}

static void test_engine_stopped_in_yield(void **state)
{
    (void)state;
    g_call = engine_allreduce;
    expect(3, GONE_STOP, true, STRATA_ERR_TIMEOUT, DEADLINE * 0.5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recv_silent_peer),
        cmocka_unit_test(test_send_full_channel),
        cmocka_unit_test(test_recv_abort),
        cmocka_unit_test(test_executor_peer_killed),
        cmocka_unit_test(test_executor_peer_stopped),
        cmocka_unit_test(test_small_killed_in_yield),
        cmocka_unit_test(test_small_stopped_in_yield),
        cmocka_unit_test(test_engine_stopped_in_yield),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
