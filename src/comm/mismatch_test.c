/*
 * mismatch_test.c — ranks that call with a different collective, root,
 * operator, count or data type get STRATA_ERR_MISMATCH, with a message
 * naming both ranks' calls, instead of STRATA_OK and wrong data: on the
 * small slots (16 bytes), the engine (256 KiB), across the two (a count that
 * puts one rank on each) and on the schedule executor (--algo ring).
 *
 * Three ranks; rank 1 deviates. The contract checked: on the small slots and
 * the engine every rank's mismatched call returns MISMATCH (each reads every
 * other rank's signature); on the executor every rank that receives data in
 * the call does, and a rank that only sent (a broadcast root) may return OK
 * — every rank then gets MISMATCH from its next call: the failure is
 * written to the segment, and where no rank received anything (two ranks
 * each naming itself the root) the next executor call finds the other's
 * message of the earlier call in its channel.
 */
#define _GNU_SOURCE
#include "test.h"

#include "ranks_test.h"

enum { SMALL = 4, BIG = 64 * 1024 };

typedef enum { K_COUNT, K_DTYPE, K_COLL, K_ROOT, K_OP, K_PATH } kind_t;
static const char *const kind_names[] = {"count", "dtype", "coll", "root", "op", "path"};

static kind_t g_kind;
static size_t g_count;            /* what the conforming ranks pass */
static strata_comm_algo_t g_algo; /* SHM (small slots, engine) or RING */
static float g_a[2 * BIG], g_b[2 * BIG];

/* The call of rank r: conforming ranks allreduce (or broadcast from 0 for
 * the root case) g_count floats, sum; rank 1 deviates in one argument. */
static strata_status_t call(strata_comm_t *c, int r)
{
    strata_call_opts_t o = {.timeout_s = 10, .algo = g_algo};
    bool odd = r == 1;
    size_t n = g_count;
    strata_dtype_t dt = STRATA_FP32;
    if (odd && g_kind == K_COUNT) n = g_count / 2 + 1;
    if (odd && g_kind == K_PATH) n = g_count == SMALL ? 100 : 3; /* 400 B: engine; 12 B: slots */
    if (odd && g_kind == K_DTYPE) dt = STRATA_INT32;
    if (g_kind == K_ROOT) return strata_comm_broadcast(c, g_a, n, dt, odd ? 1 : 0, &o);
    if (odd && g_kind == K_COLL) return strata_comm_broadcast(c, g_a, n, dt, 0, &o);
    strata_op_t op = odd && g_kind == K_OP ? STRATA_MAX : STRATA_SUM;
    return strata_comm_allreduce(c, g_a, g_b, n, dt, op, &o);
}

static int rank_main(void *arg)
{
    (void)arg;
    strata_comm_t *c = ranks_join();
    int r = strata_comm_rank(c);
    for (size_t i = 0; i < 2 * BIG; i++)
        g_a[i] = (float)(r + 1);
    double t0 = util_now();
    ranks_record(c, call(c, r), t0);
    /* the next call: on the executor one that reads the channels, where a
     * message no rank received in the mismatched call waits */
    strata_call_opts_t o = {.timeout_s = 10, .algo = g_algo};
    float one = 1;
    rrep->after[r] = g_algo == STRATA_COMM_SHM
                         ? strata_comm_barrier(c, &o)
                         : strata_comm_allreduce(c, &one, g_b, 1, STRATA_FP32, STRATA_SUM, &o);
    strata_comm_destroy(c);
    return 0;
}

/* Run one case on P ranks; `strict`: every rank's call itself must fail. */
static void expect_mismatch(int P, kind_t kind, size_t count, strata_comm_algo_t algo, bool strict)
{
    g_kind = kind, g_count = count, g_algo = algo;
    ranks_fresh();
    ranks_run(P, rank_main);
    int direct = 0;
    for (int r = 0; r < P; r++) {
        assert_true(rrep->done[r]);
        int st = rrep->status[r];
        if (st == STRATA_ERR_MISMATCH && strstr(rrep->msg[r], "mismatched calls")) {
            direct++;
            /* the message names the deviating call and a conforming one */
            bool names_odd =
                strstr(rrep->msg[r], "rank 1 called") || strstr(rrep->msg[r], ", rank 1 ");
            if (!names_odd)
                fail_msg("%s: rank %d: '%s' does not name rank 1", kind_names[kind], r,
                         rrep->msg[r]);
        }
        if (st == STRATA_OK && !strict && rrep->after[r] == STRATA_ERR_MISMATCH) continue;
        if (st != STRATA_ERR_MISMATCH)
            fail_msg("%s, count %zu, algo %d: rank %d returned %s (%s), then %s", kind_names[kind],
                     count, (int)algo, r, strata_status_str((strata_status_t)st), rrep->msg[r],
                     strata_status_str((strata_status_t)rrep->after[r]));
    }
    assert_true(direct >= 1 || !strict); /* executor: maybe only in the next call */
}

static void test_small_slots(void **state)
{
    (void)state;
    for (kind_t k = K_COUNT; k <= K_PATH; k++)
        expect_mismatch(3, k, SMALL, STRATA_COMM_SHM, true);
}

static void test_engine(void **state)
{
    (void)state;
    for (kind_t k = K_COUNT; k <= K_PATH; k++)
        expect_mismatch(3, k, BIG, STRATA_COMM_SHM, true);
}

/* Two ranks each naming itself the root: neither receives anything, and
 * still both see the other's call (the root checks chunk 0's words). */
static void test_engine_two_roots(void **state)
{
    (void)state;
    expect_mismatch(2, K_ROOT, BIG, STRATA_COMM_SHM, true);
}

static void test_executor(void **state)
{
    (void)state;
    for (kind_t k = K_COUNT; k <= K_OP; k++) {
        expect_mismatch(3, k, BIG, STRATA_COMM_RING, false);
        expect_mismatch(2, k, SMALL, STRATA_COMM_RING, false);
        /* recdbl has no broadcast schedule (the call fails at once) */
        if (k != K_COLL && k != K_ROOT) expect_mismatch(3, k, SMALL, STRATA_COMM_RECDBL, false);
    }
}

/* The message names both calls exactly. */
static void test_message(void **state)
{
    (void)state;
    expect_mismatch(2, K_OP, SMALL, STRATA_COMM_SHM, true);
    assert_string_equal(rrep->msg[0], "allreduce: mismatched calls: rank 0 called allreduce(count "
                                      "4, float, sum), rank 1 allreduce(count 4, float, max)");
    expect_mismatch(2, K_PATH, BIG, STRATA_COMM_SHM, true);
    assert_string_equal(rrep->msg[1], "allreduce: mismatched calls: rank 1 called allreduce(count "
                                      "3, float, sum), rank 0 allreduce(count 65536, float, sum)");
}

/* Matching calls still succeed, with the right sum (1 + 2 + 3 = 6). */
static int matching_rank(void *arg)
{
    (void)arg;
    strata_comm_t *c = ranks_join();
    int r = strata_comm_rank(c), bad = 0;
    const size_t counts[] = {SMALL, 100, BIG};
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < 3; i++) {
            strata_call_opts_t o = {.algo = a == 0   ? STRATA_COMM_SHM
                                            : a == 1 ? STRATA_COMM_RING
                                                     : STRATA_COMM_RECDBL};
            for (size_t j = 0; j < counts[i]; j++)
                g_a[j] = (float)(r + 1);
            bad += strata_comm_allreduce(c, g_a, g_b, counts[i], STRATA_FP32, STRATA_SUM, &o) !=
                   STRATA_OK;
            for (size_t j = 0; j < counts[i]; j++)
                bad += g_b[j] != 6.0f;
        }
    strata_comm_destroy(c);
    return bad ? 1 : 0;
}

static void test_matching_calls_pass(void **state)
{
    (void)state;
    assert_int_equal(ranks_run(3, matching_rank), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matching_calls_pass), cmocka_unit_test(test_message),
        cmocka_unit_test(test_small_slots),         cmocka_unit_test(test_engine),
        cmocka_unit_test(test_engine_two_roots),    cmocka_unit_test(test_executor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
