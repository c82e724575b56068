/*
 * yield_test.c — when slow yields put a rank's waits to sleep
 * (shm.c comm_yield_seen): a yield that lasted past the slow threshold
 * means something else had the CPU for a long turn. With no more ranks than
 * CPUs that is a hog, and the next COMM_SLEEP_CREDIT blocking steps sleep at
 * once. With more ranks than CPUs (shared_cpus) one slow yield is mostly a
 * core partner that was outside the library (the caller's own code, another
 * library's calls) and ran until its next wait, so only the second slow
 * yield within COMM_SLOW_PAIR (64) yields sets the credit.
 *
 * Sequences by hand, on a communicator struct with no segment (the function
 * reads and writes only the three counters and shared_cpus):
 *   not shared: yield 1 slow -> credit 256 at once;
 *   shared: yield 1 slow -> 0; yields 2-65 fast, yield 66 slow: 65 yields
 *     after yield 1 (> 64) -> 0; yields 67-129 fast, yield 130 slow: 64
 *     after yield 66 (<= 64) -> 256; the credit spent (set to 0 by hand,
 *     as 256 sleeps would leave it), yield 131 slow: 1 after 130 -> 256;
 *   shared, a hog's pattern: slow, fast, slow -> 0 after the first, 256
 *     after the third (2 apart).
 * With the rule removed (credit at every slow yield) the shared case reads
 * 256 after yield 1 and fails; with no pairing window (any two slow
 * yields) it reads 256 after yield 66 and fails.
 */
#define _GNU_SOURCE
#include "test.h"

#include "comm.h"

static void yields(strata_comm_t *c, int fast, bool slow_last)
{
    for (int i = 0; i < fast; i++)
        comm_yield_seen(c, false);
    comm_yield_seen(c, slow_last);
}

static void test_not_shared(void **s)
{
    (void)s;
    strata_comm_t c = {0};
    yields(&c, 0, true);
    assert_int_equal(c.yields_seen, 1);
    assert_int_equal(c.sleep_credit, COMM_SLEEP_CREDIT);
    assert_int_equal(COMM_SLEEP_CREDIT, 256);
}

static void test_shared_pairs(void **s)
{
    (void)s;
    strata_comm_t c = {.shared_cpus = true};
    yields(&c, 0, true); /* yield 1 */
    assert_int_equal(c.sleep_credit, 0);
    yields(&c, 64, true); /* yields 2-65 fast, 66 slow: 65 apart */
    assert_int_equal(c.yields_seen, 66);
    assert_int_equal(c.sleep_credit, 0);
    yields(&c, 63, true); /* 67-129 fast, 130 slow: 64 apart */
    assert_int_equal(c.yields_seen, 130);
    assert_int_equal(c.sleep_credit, 256);
    c.sleep_credit = 0;
    yields(&c, 0, true); /* 131: 1 apart */
    assert_int_equal(c.sleep_credit, 256);
}

static void test_shared_hog(void **s)
{
    (void)s;
    strata_comm_t c = {.shared_cpus = true};
    yields(&c, 0, true);
    assert_int_equal(c.sleep_credit, 0);
    yields(&c, 1, true);
    assert_int_equal(c.yields_seen, 3);
    assert_int_equal(c.sleep_credit, 256);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_not_shared),
                                       cmocka_unit_test(test_shared_pairs),
                                       cmocka_unit_test(test_shared_hog)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
