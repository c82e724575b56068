/*
 * stage_test.c — how an allreduce at P > 2 stages (allreduce_shm.c,
 * stage_mode): cached stores or streaming ones, chosen per rank by measuring
 * its calls, with the other mode probed on the same calls on every rank.
 *
 * The probe schedule is fixed by the call count, so the mode of the first
 * calls is known by hand whatever the measurements say: a rank prefers
 * cached stores until each mode has two calls measured, and the first
 * probe window (allreduce_shm.c probe_pos, paired, phase 2) is calls 2-3
 * of a class, after call 1 (the reference; call 0 is outside any window)
 * and before call 4 (back): calls 0 and 1 stage cached, 2 and 3 streaming
 * — after calls 0, 1, 2, 3 the count of streaming calls
 * (comm->stage.on_calls) is 0, 0, 1, 2. A call of another size class
 * (power of two) starts over: its calls 0 and 1 add nothing. Then an
 * allreduce of the first size on registered buffers (every rank), which
 * stages only its chunk 0 and is no call of the choice: it neither counts
 * nor starts the first class over, so the next call of the second class
 * is its call 2, a probe: +0 then +1. (Were it counted, it would restart
 * the first class at its call 0, and the next call would restart the
 * second at its call 0, cached: +0, +0.)
 * STRATA_STAGE_NT=1 stages every counted call streaming (7 of 8: not the
 * registered one), STRATA_STAGE_NT=0 none. At P = 2 the mode never applies
 * (0 throughout): there a rank's slot lines were last touched by itself.
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

/* after[] per rank: the streaming counts after big calls 0..3, small
 * calls 0..1, the registered big call and small call 2, packed as decimal
 * digits (each count < 10). */
static int rank_main(void *arg)
{
    (void)arg;
    strata_comm_t *c = ranks_join();
    int r = strata_comm_rank(c), P = strata_comm_size(c);
    float *src = malloc(BIG_N * sizeof(float)), *dst = malloc(BIG_N * sizeof(float));
    if (!src || !dst) return 4;
    ranks_fill_pattern(src, BIG_N, r);
    float *rsrc = NULL, *rdst = NULL;
    strata_status_t st = strata_comm_mem_alloc(c, BIG_N * sizeof(float), (void **)&rsrc);
    if (st == STRATA_OK) st = strata_comm_mem_alloc(c, BIG_N * sizeof(float), (void **)&rdst);
    if (st == STRATA_OK) ranks_fill_pattern(rsrc, BIG_N, r);
    int digits = 0;
    for (int k = 0; k < 8 && st == STRATA_OK; k++) {
        size_t n = k < 4 || k == 6 ? BIG_N : SMALL_N;
        float *in = k == 6 ? rsrc : src, *out = k == 6 ? rdst : dst;
        memset(out, 0xff, n * sizeof(float));
        st = strata_comm_allreduce(c, in, out, n, STRATA_FP32, STRATA_SUM, NULL);
        if (st == STRATA_OK && ranks_check_pattern(out, n, P)) st = STRATA_ERR_PROTOCOL;
        digits = digits * 10 + (int)c->stage.on_calls;
    }
    if (st == STRATA_OK && c->reg_calls != 1) st = STRATA_ERR_PROTOCOL; /* call 6 registered */
    if (rsrc) strata_comm_mem_free(c, rsrc);
    if (rdst) strata_comm_mem_free(c, rdst);
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
               "call %08d (expected %08d)\n",
               P, env ? env : "(unset)", r, rrep->after[r], expect);
        assert_int_equal(rrep->status[r], STRATA_OK);
        assert_int_equal(rrep->after[r], expect);
    }
    unsetenv("STRATA_STAGE_NT");
}

/* Measured: probes on calls 2-3, none on calls 0-1 of the new class; the
 * registered call uncounted, then the new class's call 2 (a probe). */
static void test_probe_schedule(void **s)
{
    (void)s;
    run_case(4, NULL, 122223); /* 0,0,1,2 then 2,2, then 2, 3: digits 00122223 */
    run_case(3, NULL, 122223);
}

static void test_forced(void **s)
{
    (void)s;
    run_case(4, "1", 12345667);
    run_case(3, "1", 12345667);
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
