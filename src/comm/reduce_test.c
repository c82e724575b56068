/*
 * reduce_test.c — reduction kernels, half-precision conversions and the
 * streaming copy, in one process, against values worked out by hand or by
 * a scalar reference written independently here.
 */
#define _GNU_SOURCE
#include "test.h"

#include "comm.h"

/* ==== Conversions: IEEE 754 binary16 / bfloat16 bit patterns ==== */

static void test_fp16_known_values(void **state)
{
    (void)state;
    assert_int_equal(strata_fp32_to_fp16(1.0f), 0x3c00);     /* exp 15, mantissa 0 */
    assert_int_equal(strata_fp32_to_fp16(-2.0f), 0xc000);    /* sign, exp 16 */
    assert_int_equal(strata_fp32_to_fp16(65504.0f), 0x7bff); /* largest finite */
    assert_int_equal(strata_fp32_to_fp16(65520.0f), 0x7c00); /* halfway to 2^16: rounds to inf */
    assert_int_equal(strata_fp32_to_fp16(5.9604645e-8f), 0x0001); /* 2^-24, smallest subnormal */
    assert_int_equal(strata_fp32_to_fp16(1.0f / 3), 0x3555);      /* 0.333251953125 */
    /* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even -> 1 */
    assert_int_equal(strata_fp32_to_fp16(1.0f + 1.0f / 2048), 0x3c00);
    /* 1 + 3·2^-11 is halfway between 1+2^-10 and 1+2^-9: even is 1+2^-9 */
    assert_int_equal(strata_fp32_to_fp16(1.0f + 3.0f / 2048), 0x3c02);
    assert_true((strata_fp32_to_fp16(NAN) & 0x7c00) == 0x7c00 &&
                (strata_fp32_to_fp16(NAN) & 0x3ff) != 0);
    assert_true(strata_fp16_to_fp32(0x3555) == 0.333251953125f);
    assert_true(strata_fp16_to_fp32(0x0001) == 5.9604644775390625e-8f);
    assert_true(strata_fp16_to_fp32(0xfc00) == -INFINITY);
    for (uint32_t h = 0; h < 0x7c00; h++) /* every finite half survives a round trip */
        assert_int_equal(strata_fp32_to_fp16(strata_fp16_to_fp32((uint16_t)h)), h);
}

static void test_bf16_known_values(void **state)
{
    (void)state;
    assert_int_equal(strata_fp32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(strata_fp32_to_bf16(1.0f + 1.0f / 256), 0x3f80); /* tie -> even */
    assert_int_equal(strata_fp32_to_bf16(1.0f + 3.0f / 256), 0x3f82); /* tie -> even (up) */
    assert_int_equal(strata_fp32_to_bf16(-256.0f), 0xc380);
    assert_true(strata_bf16_to_fp32(0x3f82) == 1.015625f);
    uint16_t n = strata_fp32_to_bf16(NAN);
    assert_true((n & 0x7f80) == 0x7f80 && (n & 0x7f) != 0);
}

/* ==== Kernels against a scalar reference ==== */

#define store strata_dtype_set
#define load  strata_dtype_get

static double ref2(strata_op_t op, double a, double b)
{
    switch (op) {
    case STRATA_PROD:
        return a * b;
    case STRATA_MIN:
        return a < b ? a : b;
    case STRATA_MAX:
        return a > b ? a : b;
    default:
        return a + b;
    }
}

/* 1037 elements: not a multiple of any vector width, so every kernel's
 * remainder loop runs too. Values 1..9 keep every result exact. */
static void test_kernels_match_reference(void **state)
{
    (void)state;
    enum { N = 1037 };
    static unsigned char a[N * 8], b[N * 8], out[N * 8];
    for (int dt = 0; dt < STRATA_DTYPE_COUNT; dt++)
        for (int op = 0; op < STRATA_OP_COUNT; op++) {
            for (size_t i = 0; i < N; i++) {
                store((strata_dtype_t)dt, a, i, (double)(i % 9 + 1));
                store((strata_dtype_t)dt, b, i, (double)((i * 5) % 7 + 1));
            }
            comm_reduce2(out, a, b, N, (strata_dtype_t)dt, (strata_op_t)op);
            for (size_t i = 0; i < N; i++) {
                double want = ref2((strata_op_t)op, (double)(i % 9 + 1), (double)((i * 5) % 7 + 1));
                if (load((strata_dtype_t)dt, out, i) != want)
                    fail_msg("%s %s element %zu: %g != %g", strata_dtype_name((strata_dtype_t)dt),
                             strata_op_name((strata_op_t)op), i, load((strata_dtype_t)dt, out, i),
                             want);
            }
        }
}

static void test_integer_wraparound(void **state)
{
    (void)state;
    int8_t a[3] = {100, -128, 127}, b[3] = {100, -1, 2}, out[3];
    comm_reduce2(out, a, b, 3, STRATA_INT8, STRATA_SUM);
    /* 200 - 256 = -56; -129 + 256 = 127; 129 - 256 = -127 */
    assert_int_equal(out[0], -56);
    assert_int_equal(out[1], 127);
    assert_int_equal(out[2], -127);
    uint64_t x = UINT64_MAX, y = 2, z;
    comm_reduce2(&z, &x, &y, 1, STRATA_UINT64, STRATA_SUM);
    assert_true(z == 1); /* 2^64 - 1 + 2 mod 2^64 */
}

static void test_reduce_n_rounds_halves_once(void **state)
{
    (void)state;
    uint16_t s0 = strata_fp32_to_fp16(2048), s1 = strata_fp32_to_fp16(1), s2 = s1, out;
    const void *srcs[3] = {&s0, &s1, &s2};
    /* fp32 accumulation: 2048 + 1 + 1 = 2050, representable in fp16 (spacing
     * 2 at 2048). Pairwise in fp16 would give 2048 + 1 -> 2048 (tie to even)
     * twice, i.e. 2048. */
    comm_reduce_n(&out, srcs, 3, 1, STRATA_FP16, STRATA_SUM, 3);
    assert_true(strata_fp16_to_fp32(out) == 2050.0f);
    comm_reduce_n(&out, srcs, 3, 1, STRATA_FP16, STRATA_AVG, 3);
    /* 2050 / 3 = 683.33 -> fp16 spacing 0.5 at 512..1024 -> 683.5 */
    assert_true(strata_fp16_to_fp32(out) == 683.5f);
    int32_t i0 = 7, i1 = 8, i2 = -1, io;
    const void *is[3] = {&i0, &i1, &i2};
    comm_reduce_n(&io, is, 3, 1, STRATA_INT32, STRATA_AVG, 3);
    assert_int_equal(io, 4); /* 14 / 3 truncated */
    comm_reduce_n(&io, is, 3, 1, STRATA_INT32, STRATA_MIN, 3);
    assert_int_equal(io, -1);
}

/* comm_reduce_n with out aliasing its first or second input, as the engine
 * uses it (its reduced slice overwrites a staged copy): 4 inputs of 1037
 * elements, values 1..4 so every type holds every result exactly. Input k
 * holds (i + k) % 4 + 1; reference: the same reduction by ref2, in order. */
static void test_reduce_n_aliases_first_inputs(void **state)
{
    (void)state;
    enum { N = 1037, P = 4 };
    static unsigned char in[P][N * 8];
    for (int dt = 0; dt < STRATA_DTYPE_COUNT; dt++)
        for (int op = 0; op < STRATA_OP_COUNT; op++)
            for (int alias = 0; alias < 2; alias++) {
                strata_dtype_t t = (strata_dtype_t)dt;
                const void *srcs[P];
                for (int k = 0; k < P; k++) {
                    srcs[k] = in[k];
                    for (size_t i = 0; i < N; i++)
                        store(t, in[k], i, (double)((i + (size_t)k) % 4 + 1));
                }
                comm_reduce_n(in[alias], srcs, P, N, t, (strata_op_t)op, P);
                for (size_t i = 0; i < N; i++) {
                    double want = (double)(i % 4 + 1);
                    for (int k = 1; k < P; k++)
                        want = ref2((strata_op_t)op, want, (double)((i + (size_t)k) % 4 + 1));
                    if (op == STRATA_AVG)
                        want = dt <= STRATA_UINT64 ? (double)((long long)want / P) : want / P;
                    if (load(t, in[alias], i) != want)
                        fail_msg("%s %s out = input %d, element %zu: %g != %g",
                                 strata_dtype_name(t), strata_op_name((strata_op_t)op), alias, i,
                                 load(t, in[alias], i), want);
                }
            }
}

static void test_stream_copy(void **state)
{
    (void)state;
    enum { N = 1 << 16 };
    static unsigned char src[N + 64], dst[N + 64];
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (unsigned char)(i * 131 + 7);
    /* every head misalignment and a length that leaves a tail */
    for (size_t off = 0; off < 17; off++) {
        memset(dst, 0, sizeof(dst));
        comm_copy(dst + off, src + 3, N - 5, true);
        assert_memory_equal(dst + off, src + 3, N - 5);
        assert_int_equal(dst[off + N - 5], 0); /* nothing written past the end */
        if (off) assert_int_equal(dst[off - 1], 0);
    }
    /* the engine's copy-out in pieces without a fence each (16 KiB blocks
     * and a 255-byte piece below the streaming minimum, at a misaligned
     * start), then one fence: the same bytes as one copy */
    memset(dst, 0, sizeof(dst));
    size_t pieces[] = {16384, 16384, 255, 16384, N - 5 - 3 * 16384 - 255}, at = 0;
    for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++, at += pieces[i - 1])
        comm_copy_nofence(dst + 9 + at, src + 3 + at, pieces[i], true);
    comm_stream_fence();
    assert_int_equal(at, N - 5);
    assert_memory_equal(dst + 9, src + 3, N - 5);
    assert_int_equal(dst[8], 0);
    assert_int_equal(dst[9 + N - 5], 0);
}

/* The streamed reductions' reference at element i: inputs k = 0..np-1
 * hold (i + k) % 4 + 1, reduced in order by ref2; AVG divides by 4 (exact
 * in every float type; integers truncate). */
static double stream_want(strata_op_t op, strata_dtype_t t, int np, size_t i)
{
    double want = (double)(i % 4 + 1);
    for (int k = 1; k < np; k++)
        want = ref2(op, want, (double)((i + (size_t)k) % 4 + 1));
    if (op == STRATA_AVG) want = t <= STRATA_UINT64 ? (double)((long long)want / 4) : want / 4;
    return want;
}

/* comm_reduce_n_stream: the reduction with its streamed second output (the
 * engine's reduce phase when the output streams). Every type and operator,
 * 1, 2, 3 and 4 inputs, out aliasing input 0 or 1 or neither, the copy at
 * every misalignment 0..15 bytes (the head the kernels leave to the plain
 * path) and 1037 elements (full 256-byte tiles and a remainder). Expected
 * values as in test_reduce_n_aliases_first_inputs: input k holds
 * (i + k) % 4 + 1, reduced in order by ref2; both out and the copy must hold
 * them, and nothing may be written beside the copy. AVG divides by 4 (the
 * size passed) whatever the inputs, so its results stay exact. */
static void test_reduce_n_stream(void **state)
{
    (void)state;
    enum { N = 1037, P = 4 };
    static unsigned char in[P][N * 8], sep[N * 8];
    static _Alignas(64) unsigned char copy[N * 8 + 32];
    for (int dt = 0; dt < STRATA_DTYPE_COUNT; dt++)
        for (int op = 0; op < STRATA_OP_COUNT; op++)
            for (int np = 1; np <= P; np++)
                for (int alias = -1; alias < 2; alias++)
                    for (size_t mis = 0; mis < 16; mis += alias == -1 && np == P ? 1 : 5) {
                        strata_dtype_t t = (strata_dtype_t)dt;
                        size_t es = strata_dtype_size(t);
                        const void *srcs[P];
                        for (int k = 0; k < P; k++) {
                            srcs[k] = in[k];
                            for (size_t i = 0; i < N; i++)
                                store(t, in[k], i, (double)((i + (size_t)k) % 4 + 1));
                        }
                        unsigned char *out = alias >= 0 ? in[alias] : sep;
                        memset(copy, 0xA5, sizeof(copy));
                        comm_reduce_n_stream(out, copy + 8 + mis, srcs, np, N, t, (strata_op_t)op,
                                             P);
                        comm_stream_fence();
                        for (size_t i = 0; i < N; i++) {
                            double want = stream_want((strata_op_t)op, t, np, i);
                            if (load(t, out, i) != want || load(t, copy + 8 + mis, i) != want)
                                fail_msg("%s %s %d inputs, out = input %d, copy +%zu, element "
                                         "%zu: out %g copy %g want %g",
                                         strata_dtype_name(t), strata_op_name((strata_op_t)op), np,
                                         alias, mis, i, load(t, out, i), load(t, copy + 8 + mis, i),
                                         want);
                        }
                        for (size_t b = 0; b < 8 + mis; b++)
                            assert_int_equal(copy[b], 0xA5);
                        for (size_t b = 8 + mis + N * es; b < sizeof(copy); b++)
                            assert_int_equal(copy[b], 0xA5);
                    }
}

/* The in-place allreduce's call: `copy` is exactly one of the inputs (the
 * rank's own, first or last of the reduction's order); out is separate.
 * Inputs k = 0..np-1 hold (i + k) % 4 + 1; reference: the same reduction
 * by ref2, in order (as test_reduce_n_stream). */
static void test_reduce_n_stream_copy_is_input(void **state)
{
    (void)state;
    enum { N = 1037, P = 3 };
    static _Alignas(64) unsigned char in[P][N * 8 + 64], sep[N * 8];
    for (int dt = 0; dt < STRATA_DTYPE_COUNT; dt++)
        for (int op = 0; op < STRATA_OP_COUNT; op++)
            for (int np = 2; np <= P; np++)
                for (int which = 0; which < 2; which++)
                    for (size_t mis = 0; mis < 16; mis += 8) {
                        strata_dtype_t t = (strata_dtype_t)dt;
                        const void *srcs[P];
                        for (int k = 0; k < np; k++) {
                            srcs[k] = in[k] + mis;
                            for (size_t i = 0; i < N; i++)
                                store(t, in[k] + mis, i, (double)((i + (size_t)k) % 4 + 1));
                        }
                        int q = which ? np - 1 : 0;
                        unsigned char *copy = in[q] + mis;
                        comm_reduce_n_stream(sep, copy, srcs, np, N, t, (strata_op_t)op, 4);
                        comm_stream_fence();
                        for (size_t i = 0; i < N; i++) {
                            double want = stream_want((strata_op_t)op, t, np, i);
                            if (load(t, sep, i) != want || load(t, copy, i) != want)
                                fail_msg("%s %s %d inputs, copy = input %d +%zu, element %zu: "
                                         "out %g copy %g want %g",
                                         strata_dtype_name(t), strata_op_name((strata_op_t)op), np,
                                         q, mis, i, load(t, sep, i), load(t, copy, i), want);
                        }
                    }
}

static void test_names(void **state)
{
    (void)state;
    strata_dtype_t dt;
    strata_op_t op;
    strata_comm_algo_t a;
    assert_int_equal(strata_dtype_parse("bfloat16", &dt), STRATA_OK);
    assert_int_equal(dt, STRATA_BF16);
    assert_int_equal(strata_dtype_parse("fp16", &dt), STRATA_OK);
    assert_int_equal(dt, STRATA_FP16);
    assert_int_equal(strata_dtype_parse("float128", &dt), STRATA_ERR_INVALID);
    assert_int_equal(strata_op_parse("avg", &op), STRATA_OK);
    assert_int_equal(op, STRATA_AVG);
    assert_int_equal(strata_comm_algo_parse("rd", &a), STRATA_OK);
    assert_int_equal(a, STRATA_COMM_RECDBL);
    assert_int_equal(strata_dtype_size(STRATA_BF16), 2);
    assert_string_equal(strata_dtype_name(STRATA_FP32), "float");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp16_known_values),
        cmocka_unit_test(test_bf16_known_values),
        cmocka_unit_test(test_kernels_match_reference),
        cmocka_unit_test(test_integer_wraparound),
        cmocka_unit_test(test_reduce_n_rounds_halves_once),
        cmocka_unit_test(test_reduce_n_aliases_first_inputs),
        cmocka_unit_test(test_stream_copy),
        cmocka_unit_test(test_reduce_n_stream),
        cmocka_unit_test(test_reduce_n_stream_copy_is_input),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
