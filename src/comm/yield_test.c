/*
 * yield_test.c — the slow-yield mark's re-test (shm.c comm_wait_block,
 * comm.h comm_sleep_retest), in one process on a communicator built by
 * hand (no segment: the blocking step touches only the rank lines).
 *
 * The mark (sleep_credit = COMM_SLEEP_CREDIT = 256 sleeps) is set by a yield
 * that took longer than COMM_YIELD_SLOW(_SHARED); each sleep under it takes
 * one. With ranks outnumbering CPUs the 64th, 128th, 192nd and 256th sleep
 * since it was set — credit 256 - 63 = 193, 129, 65 and 1 — is a yield
 * instead, and a fast yield clears the mark. Worked by hand: credit 256
 * (0 sleeps taken) is no re-test, 193 is, 192 is not (the 65th sleep).
 * Without shared CPUs no step is (the rule as before), nor without a mark.
 */
#define _GNU_SOURCE
#include "test.h"

#include "comm.h"

#include <stdlib.h>

static void test_retest_steps(void **state)
{
    (void)state;
    assert_false(comm_sleep_retest(256, true));
    assert_true(comm_sleep_retest(193, true));
    assert_false(comm_sleep_retest(192, true));
    assert_false(comm_sleep_retest(194, true));
    assert_true(comm_sleep_retest(129, true));
    assert_true(comm_sleep_retest(65, true));
    assert_true(comm_sleep_retest(1, true));
    assert_false(comm_sleep_retest(0, true));    /* no mark: plain yields anyway */
    assert_false(comm_sleep_retest(193, false)); /* ranks <= CPUs: unchanged */
    int n = 0;
    for (unsigned credit = 1; credit <= COMM_SLEEP_CREDIT; credit++)
        n += comm_sleep_retest(credit, true);
    assert_int_equal(n, 4); /* 256 / 64 */
}

/* A rank 0 of 4 whose lines are plain memory. */
typedef struct fake {
    strata_comm_t c;
    comm_call_t k;
} fake_t;

static fake_t *fake_new(bool shared, unsigned credit)
{
    fake_t *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->c.rank = 0, f->c.size = 4, f->c.shared_cpus = shared, f->c.sleep_credit = credit;
    f->c.lines = aligned_alloc(64, 4 * sizeof(comm_rank_lines_t));
    assert_non_null(f->c.lines);
    memset(f->c.lines, 0, 4 * sizeof(comm_rank_lines_t));
    f->k.c = &f->c;
    return f;
}

static void fake_free(fake_t *f)
{
    free(f->c.lines);
    free(f);
}

static void test_retest_yield_clears_the_mark(void **state)
{
    (void)state;
    fake_t *f = fake_new(true, 193); /* 63 sleeps taken: this step re-tests */
    comm_wait_t w = COMM_WAIT_INIT;
    double t0 = util_now();
    assert_true(comm_wait_block(&f->k, &w, 2));
    double took = util_now() - t0;
    assert_int_equal(w.yields, 1); /* it yielded, */
    assert_false(w.armed);         /* and did not announce a sleep */
    assert_int_equal(atomic_load(&f->c.lines[1].misc.wmask), 0);
    /* A yield on this test's CPU under 500 us clears the mark; one that
     * took longer (another process had the CPU) sets it again. The step
     * times the yield alone, within took: a took under the bound means a
     * fast yield; over it, the yield itself may still have been fast (the
     * thread lost its CPU after it), so either outcome. */
    if (took < COMM_YIELD_SLOW_SHARED)
        assert_int_equal(f->c.sleep_credit, 0);
    else
        assert_true(f->c.sleep_credit == 0 || f->c.sleep_credit == COMM_SLEEP_CREDIT);
    fake_free(f);
}

static void test_other_steps_sleep(void **state)
{
    (void)state;
    /* credit 192: not a re-test step, so the step announces the sleep to
     * the awaited rank 1 (its wmask gets bit 0) and does not yield */
    fake_t *f = fake_new(true, 192);
    comm_wait_t w = COMM_WAIT_INIT;
    assert_true(comm_wait_block(&f->k, &w, 2));
    assert_int_equal(w.yields, 0);
    assert_true(w.armed);
    assert_int_equal(atomic_load(&f->c.lines[1].misc.wmask), 1);
    assert_int_equal(f->c.sleep_credit, 192);
    fake_free(f);
    /* ranks <= CPUs: credit 193 sleeps as before */
    f = fake_new(false, 193);
    w = (comm_wait_t)COMM_WAIT_INIT;
    assert_true(comm_wait_block(&f->k, &w, 2));
    assert_int_equal(w.yields, 0);
    assert_true(w.armed);
    assert_int_equal(f->c.sleep_credit, 193);
    fake_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retest_steps),
        cmocka_unit_test(test_retest_yield_clears_the_mark),
        cmocka_unit_test(test_other_steps_sleep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
