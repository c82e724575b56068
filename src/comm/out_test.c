/*
 * out_test.c — how an allreduce stores its output (allreduce_shm.c,
 * out_mode): plain stores or streaming ones, chosen per rank by measuring
 * its calls of a size class, the other mode probed on the same calls on
 * every rank.
 *
 * The probe schedule is fixed by the call count, so the mode of the first
 * calls of a class is known by hand whatever the measurements say: a rank
 * keeps the class's starting mode (streaming from comm_stream_min() =
 * 16 MiB, plain below) until each mode has two calls measured, and the
 * first probe windows (the other mode; allreduce_shm.c probe_pos, phase 8)
 * are the class's calls 8-9 and 12-13, measured on 9 and 13 (against the
 * current mode's calls 7 and 11): no switch before call 14, whose mode is
 * the measurements'. Each rank makes 14 calls of B floats, then 10 of
 * 256 Ki + 5 floats (1 MiB + 20 B: another class, from OUT_LEARN_MIN),
 * then 3 of 128 Ki floats (512 KiB: below OUT_LEARN_MIN, plain and never
 * counted as a call of the choice). After each call it records how many
 * calls stored their output streaming (comm->out.on_calls):
 *   B = 1 Mi + 3 (4 MiB + 12 B, starts plain): calls 0-7 plain, 8-9
 *     stream, 10-11 plain, 12-13 stream: 0 x 8, 1 2 2 2 3 4; the 1 MiB
 *     class: calls 0-7 plain, 8-9 stream: 4 x 8, 5 6; 512 KiB: 6 6 6.
 *   B = 4 Mi + 3 (16 MiB + 12 B, starts streaming): calls 0-7 stream, 8-9
 *     plain, 10-11 stream, 12-13 plain: 1 2 ... 8 8 8 9 10 10 10; then
 *     10 x 8, 11 12; 12 12 12.
 *     (On a host whose last-level cache, comm_llc_bytes, is smaller than
 *     16 MiB + 12 B, that class streams unmeasured: 1 2 ... 14, then 14 x 8,
 *     15 16; 16 16 16.)
 *   STRATA_NT_THRESHOLD=1 (a fixed crossover, every output streams):
 *     1 2 ... 27. STRATA_NT_THRESHOLD=2^40: none, 0 throughout.
 * At P > 2 the staging choice (stage_mode) probes calls 2-3 and 6-7 of the
 * same classes; the output counts are the same. The choice's call count
 * (comm->out.calls) ends at 10: the 1 MiB class's calls, the 512 KiB
 * calls not counted (0 when the threshold is fixed: no class measured).
 *
 * Every result is checked exactly whatever the mode: rank r contributes
 * i % 5 + r, so element i is P·(i % 5) + P(P−1)/2 (integers below 2^24,
 * exact in fp32). The odd counts make slices whose ends are not 16-byte
 * aligned (the streaming copy's memcpy head and tail).
 */
#define _GNU_SOURCE
#include "test.h"

#include "ranks_test.h"

#include <stdint.h>
#include <stdlib.h>

#define NCALLS  27
#define SMALL_N (((size_t)1 << 18) + 5)
#define TINY_N  ((size_t)1 << 17)

/* per rank: out.on_calls after each call, then out.calls at the end */
typedef struct {
    int after[16][NCALLS];
    int calls[16];
} out_report_t;

static out_report_t *orep;
static size_t big_n;

static int rank_main(void *arg)
{
    (void)arg;
    strata_comm_t *c = ranks_join();
    int r = strata_comm_rank(c), P = strata_comm_size(c);
    float *src = malloc(big_n * sizeof(float)), *dst = malloc(big_n * sizeof(float));
    if (!src || !dst) return 4;
    ranks_fill_pattern(src, big_n, r);
    strata_status_t st = STRATA_OK;
    for (int k = 0; k < NCALLS && st == STRATA_OK; k++) {
        size_t n = k < 14 ? big_n : k < 24 ? SMALL_N : TINY_N;
        memset(dst, 0xff, n * sizeof(float));
        st = strata_comm_allreduce(c, src, dst, n, STRATA_FP32, STRATA_SUM, NULL);
        if (st == STRATA_OK && ranks_check_pattern(dst, n, P)) st = STRATA_ERR_PROTOCOL;
        orep->after[r][k] = (int)c->out.on_calls;
    }
    orep->calls[r] = (int)c->out.calls;
    ranks_record(c, st, util_now());
    free(src), free(dst);
    strata_comm_destroy(c);
    return st == STRATA_OK ? 0 : 1;
}

static void run_case(int P, size_t n, const char *env, const int *expect, int calls)
{
    if (env)
        setenv("STRATA_NT_THRESHOLD", env, 1);
    else
        unsetenv("STRATA_NT_THRESHOLD");
    big_n = n;
    ranks_fresh();
    if (orep) munmap(orep, sizeof(*orep));
    orep = mmap(NULL, sizeof(*orep), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(orep != MAP_FAILED);
    memset(orep, 0, sizeof(*orep));
    assert_int_equal(ranks_run(P, rank_main), 0);
    for (int r = 0; r < P; r++) {
        printf("out_test: P = %d, %zu floats, STRATA_NT_THRESHOLD=%s, rank %d: streamed outputs "
               "after each call",
               P, n, env ? env : "(unset)", r);
        for (int k = 0; k < NCALLS; k++)
            printf(" %d", orep->after[r][k]);
        printf(", %d calls measured\n", orep->calls[r]);
        assert_int_equal(rrep->status[r], STRATA_OK);
        for (int k = 0; k < NCALLS; k++)
            assert_int_equal(orep->after[r][k], expect[k]);
        assert_int_equal(orep->calls[r], calls);
    }
    unsetenv("STRATA_NT_THRESHOLD");
}

#define N4M  (((size_t)1 << 20) + 3)
#define N16M (((size_t)4 << 20) + 3)

static const int from_plain[NCALLS] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 2, 2, 3, 4,
                                       4, 4, 4, 4, 4, 4, 4, 4, 5, 6, 6, 6, 6};

/* Measured, starting plain: probes on calls 8-9 and 12-13 of each class. */
static void test_probe_schedule(void **s)
{
    (void)s;
    run_case(2, N4M, NULL, from_plain, 10);
    run_case(4, N4M, NULL, from_plain, 10); /* stage_mode's probes on calls 2-3, 6-7 */
    run_case(3, N4M, NULL, from_plain, 10);
}

/* Measured, starting streaming (16 MiB and more): calls 8-9, 12-13 plain.
 * On a host whose last-level cache is smaller than the output, the output
 * streams unmeasured: calls 0-13 stream, then the 1 MiB class as above. */
static void test_from_streaming(void **s)
{
    (void)s;
    static const int expect[NCALLS] = {1,  2,  3,  4,  5,  6,  7,  8,  8,  8,  9,  10, 10, 10,
                                       10, 10, 10, 10, 10, 10, 10, 10, 11, 12, 12, 12, 12};
    static const int above_llc[NCALLS] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
                                          14, 14, 14, 14, 14, 14, 14, 14, 15, 16, 16, 16, 16};
    size_t llc = comm_llc_bytes();
    printf("out_test: last-level cache %zu bytes\n", llc);
    run_case(2, N16M, NULL, llc > 0 && N16M * sizeof(float) > llc ? above_llc : expect, 10);
}

/* STRATA_NT_THRESHOLD fixes the crossover: no probes. */
static void test_forced(void **s)
{
    (void)s;
    int all[NCALLS], none[NCALLS] = {0};
    for (int k = 0; k < NCALLS; k++)
        all[k] = k + 1;
    run_case(2, N4M, "1", all, 0);
    run_case(4, N4M, "1", all, 0);
    run_case(3, N4M, "1099511627776", none, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_probe_schedule),
                                       cmocka_unit_test(test_from_streaming),
                                       cmocka_unit_test(test_forced)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
