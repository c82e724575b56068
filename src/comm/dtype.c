/*
 * dtype.c — names of element types, operators, algorithms and collectives,
 * and the fp16/bf16 <-> fp32 conversions every half-precision reduction goes
 * through.
 *
 * Conversions are bit manipulations (IEEE 754-2008 binary16; bfloat16 is the
 * top half of a binary32), rounding to nearest even, NaN kept quiet. They
 * are written branch-light so the reduction loops that call them inline can
 * still be vectorised.
 */
#include "comm.h"

#include <string.h>

static const struct {
    const char *name, *alias;
    size_t size;
} dtypes[STRATA_DTYPE_COUNT] = {
    [STRATA_INT8] = {"int8", "char", 1},   [STRATA_UINT8] = {"uint8", "uchar", 1},
    [STRATA_INT32] = {"int32", "int", 4},  [STRATA_UINT32] = {"uint32", "uint", 4},
    [STRATA_INT64] = {"int64", "long", 8}, [STRATA_UINT64] = {"uint64", "ulong", 8},
    [STRATA_FP16] = {"half", "fp16", 2},   [STRATA_BF16] = {"bfloat16", "bf16", 2},
    [STRATA_FP32] = {"float", "fp32", 4},  [STRATA_FP64] = {"double", "fp64", 8},
};

size_t strata_dtype_size(strata_dtype_t dt)
{
    return (unsigned)dt < STRATA_DTYPE_COUNT ? dtypes[dt].size : 0;
}

const char *strata_dtype_name(strata_dtype_t dt)
{
    return (unsigned)dt < STRATA_DTYPE_COUNT ? dtypes[dt].name : "?";
}

strata_status_t strata_dtype_parse(const char *name, strata_dtype_t *dt_p)
{
    for (int i = 0; i < STRATA_DTYPE_COUNT; i++)
        if (strcmp(name, dtypes[i].name) == 0 || strcmp(name, dtypes[i].alias) == 0) {
            *dt_p = (strata_dtype_t)i;
            return STRATA_OK;
        }
    return STRATA_ERR_INVALID;
}

static const char *const op_names[STRATA_OP_COUNT] = {"sum", "prod", "min", "max", "avg"};
static const char *const algo_names[STRATA_COMM_ALGO_COUNT] = {"auto", "shm", "ring", "recdbl",
                                                               "rabenseifner"};

const char *strata_op_name(strata_op_t op)
{
    return (unsigned)op < STRATA_OP_COUNT ? op_names[op] : "?";
}

static int find_name(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return i;
    return -1;
}

strata_status_t strata_op_parse(const char *name, strata_op_t *op_p)
{
    int i = find_name(op_names, STRATA_OP_COUNT, name);
    if (i < 0) return STRATA_ERR_INVALID;
    *op_p = (strata_op_t)i;
    return STRATA_OK;
}

const char *strata_comm_algo_name(strata_comm_algo_t algo)
{
    return (unsigned)algo < STRATA_COMM_ALGO_COUNT ? algo_names[algo] : "?";
}

strata_status_t strata_comm_algo_parse(const char *name, strata_comm_algo_t *algo_p)
{
    int i = find_name(algo_names, STRATA_COMM_ALGO_COUNT, name);
    if (i < 0 && strcmp(name, "rd") == 0) i = STRATA_COMM_RECDBL;
    if (i < 0) return STRATA_ERR_INVALID;
    *algo_p = (strata_comm_algo_t)i;
    return STRATA_OK;
}

/* ==== Half precision ==== */

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t strata_fp32_to_bf16(float f)
{
    uint32_t u = f2u(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
    return (uint16_t)(u >> 16);
}

float strata_bf16_to_fp32(uint16_t h)
{
    return u2f((uint32_t)h << 16);
}

/* fp32 -> binary16 after the classic method of F. Giesen ("float->half
 * variants", 2016): rebias by magic multiplication, round to nearest even. */
uint16_t strata_fp32_to_fp16(float f)
{
    uint32_t u = f2u(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    u &= 0x7fffffffu;
    uint16_t h;
    if (u >= 0x47800000u) { /* overflow, inf or NaN */
        h = (uint16_t)(u > 0x7f800000u ? 0x7e00u : 0x7c00u);
    } else if (u < 0x38800000u) { /* subnormal or zero: let the FPU round */
        float v = u2f(u) + 0.5f;  /* 0.5 = 2^-1: aligns the 2^-24 unit to bit 0 */
        h = (uint16_t)(f2u(v) - 0x3f000000u);
    } else {
        uint32_t odd = (u >> 13) & 1u;
        u += 0xc8000fffu + odd; /* rebias exponent (-112 << 23) and round */
        h = (uint16_t)(u >> 13);
    }
    return (uint16_t)(h | sign);
}

float strata_fp16_to_fp32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return u2f(sign | 0x7f800000u | (m << 13));
    if (e == 0) /* zero or subnormal: m * 2^-24 */
        return u2f(sign | f2u((float)m * 5.9604644775390625e-8f));
    return u2f(sign | ((e + 112u) << 23) | (m << 13));
}

/* ==== Typed element access ==== */

/* Through memcpy: a buffer of bytes need not be aligned to its type (a
 * test's or a user's vector at any offset); compilers emit one load. */
#define GET(T, conv)                                                                               \
    do {                                                                                           \
        T v_;                                                                                      \
        memcpy(&v_, (const unsigned char *)b + i * sizeof(T), sizeof(T));                          \
        return conv(v_);                                                                           \
    } while (0)
#define PUT(T, val)                                                                                \
    do {                                                                                           \
        T v_ = (val);                                                                              \
        memcpy((unsigned char *)b + i * sizeof(T), &v_, sizeof(T));                                \
    } while (0)
#define AS_DOUBLE(x) ((double)(x))

double strata_dtype_get(strata_dtype_t dt, const void *b, size_t i)
{
    switch (dt) {
    case STRATA_INT8:
        GET(int8_t, AS_DOUBLE);
    case STRATA_UINT8:
        GET(uint8_t, AS_DOUBLE);
    case STRATA_INT32:
        GET(int32_t, AS_DOUBLE);
    case STRATA_UINT32:
        GET(uint32_t, AS_DOUBLE);
    case STRATA_INT64:
        GET(int64_t, AS_DOUBLE);
    case STRATA_UINT64:
        GET(uint64_t, AS_DOUBLE);
    case STRATA_FP16:
        GET(uint16_t, strata_fp16_to_fp32);
    case STRATA_BF16:
        GET(uint16_t, strata_bf16_to_fp32);
    case STRATA_FP32:
        GET(float, AS_DOUBLE);
    case STRATA_FP64:
        GET(double, AS_DOUBLE);
    default:
        return 0;
    }
}

void strata_dtype_set(strata_dtype_t dt, void *b, size_t i, double v)
{
    /* through uint64: out-of-range integers wrap instead of being undefined */
    uint64_t x = v < 0 ? (uint64_t)(int64_t)v : (uint64_t)v;
    switch (dt) {
    case STRATA_INT8:
        PUT(int8_t, (int8_t)(uint8_t)x);
        break;
    case STRATA_UINT8:
        PUT(uint8_t, (uint8_t)x);
        break;
    case STRATA_INT32:
        PUT(int32_t, (int32_t)(uint32_t)x);
        break;
    case STRATA_UINT32:
        PUT(uint32_t, (uint32_t)x);
        break;
    case STRATA_INT64:
        PUT(int64_t, (int64_t)x);
        break;
    case STRATA_UINT64:
        PUT(uint64_t, x);
        break;
    case STRATA_FP16:
        PUT(uint16_t, strata_fp32_to_fp16((float)v));
        break;
    case STRATA_BF16:
        PUT(uint16_t, strata_fp32_to_bf16((float)v));
        break;
    case STRATA_FP32:
        PUT(float, (float)v);
        break;
    case STRATA_FP64:
        PUT(double, v);
        break;
    default:
        break;
    }
}
#undef GET
#undef PUT
#undef AS_DOUBLE
