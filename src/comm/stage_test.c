/*
 * stage_test.c — how an allreduce at P > 2 stages (allreduce_shm.c,
 * stage_mode): cached stores or streaming ones, chosen per rank by measuring
 * its calls, with the other mode probed on the same calls on every rank.
 *
 * The probe schedule is fixed by the call count, so the mode of the first
 * calls is known by hand whatever the measurements say: a rank prefers
 * cached stores until each mode has two calls measured, so calls 0 and 2
 * stage cached and calls 1 and 3 (the probes) streaming — after calls 0, 1,
 * 2, 3 the count of streaming calls (comm->stage.on_calls) is 0, 1, 1, 2.
 * A call of another size class (power of two) starts over: its calls 0 and
 * 1 add 0 and 1. STRATA_STAGE_NT=1 stages every such call streaming (4 of 4),
 * STRATA_STAGE_NT=0 none. At P = 2 the mode never applies (0 of 4): there a
 * rank's slot lines were last touched by itself.
 *
 * Every result is checked exactly whatever the mode: rank r contributes
 * i % 5 + r, so element i is P·(i % 5) + P(P−1)/2 (integers below 2^24,
 * exact in fp32). Sizes: 1 Mi + 3 floats (4 MiB + 12 B: several chunks;
 * the odd tail makes slices whose ends are not 16-byte aligned, the
 * streaming copy's memcpy head and tail) and 256 Ki + 5 floats (1 MiB +
 * 20 B, another size class).
 */
#define _GNU_SOURCE
#include "test.h"

#include "ranks_test.h"

#include <stdlib.h>

#define BIG_N   (((size_t)1 << 20) + 3)
#define SMALL_N (((size_t)1 << 18) + 5)

/* after[] per rank: the streaming counts after big calls 0..3 and small
 * calls 0..1, packed as decimal digits (each count < 10). */
static int rank_main(void *arg)
{
    (void)arg;
    strata_comm_t *c = ranks_join();
    int r = strata_comm_rank(c), P = strata_comm_size(c);
    float *src = malloc(BIG_N * sizeof(float)), *dst = malloc(BIG_N * sizeof(float));
    if (!src || !dst) return 4;
    ranks_fill_pattern(src, BIG_N, r);
    strata_status_t st = STRATA_OK;
    int digits = 0;
    for (int k = 0; k < 6 && st == STRATA_OK; k++) {
        size_t n = k < 4 ? BIG_N : SMALL_N;
        memset(dst, 0xff, n * sizeof(float));
        st = strata_comm_allreduce(c, src, dst, n, STRATA_FP32, STRATA_SUM, NULL);
        if (st == STRATA_OK && ranks_check_pattern(dst, n, P)) st = STRATA_ERR_PROTOCOL;
        digits = digits * 10 + (int)c->stage.on_calls;
    }
    rrep->after[r] = digits;
    ranks_record(c, st, util_now());
    free(src), free(dst);
    strata_comm_destroy(c);
    return st == STRATA_OK ? 0 : 1;
}

static void run_case(int P, const char *env, int expect)
{
    if (env)
        setenv("STRATA_STAGE_NT", env, 1);
    else
        unsetenv("STRATA_STAGE_NT");
    ranks_fresh();
    assert_int_equal(ranks_run(P, rank_main), 0);
    for (int r = 0; r < P; r++) {
        printf("stage_test: P = %d, STRATA_STAGE_NT=%s, rank %d: streaming calls after each "
               "call %06d (expected %06d)\n",
               P, env ? env : "(unset)", r, rrep->after[r], expect);
        assert_int_equal(rrep->status[r], STRATA_OK);
        assert_int_equal(rrep->after[r], expect);
    }
    unsetenv("STRATA_STAGE_NT");
}

/* Measured: probes on calls 1 and 3, then 1 of the new size class. */
static void test_probe_schedule(void **s)
{
    (void)s;
    run_case(4, NULL, 11223); /* 0,1,1,2 then 2,3: digits 011223 */
    run_case(3, NULL, 11223);
}

static void test_forced(void **s)
{
    (void)s;
    run_case(4, "1", 123456);
    run_case(3, "1", 123456);
    run_case(4, "0", 0);
}

static void test_two_ranks(void **s)
{
    (void)s;
    run_case(2, NULL, 0);
    run_case(2, "1", 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_probe_schedule),
                                       cmocka_unit_test(test_forced),
                                       cmocka_unit_test(test_two_ranks)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
