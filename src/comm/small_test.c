/*
 * small_test.c — many back-to-back small collectives (the line slots of
 * allreduce_shm.c), every result checked exactly, with ranks that run ahead
 * of each other.
 *
 * What it guards: a small call publishes each rank's data in one of two
 * parity slots keyed by the call's sequence number, and a rank leaves as
 * soon as it has read every rank's slot, without waiting for anyone to read
 * its own. A rank may therefore be one call ahead of the slowest; it must
 * never read a slot of the wrong call (stale: the previous call of that
 * parity; or overwritten: the next one), and it must not overwrite its own
 * slot of call k + 2 before every rank has read it for call k. The waits
 * also decide between spinning and yielding from each peer's off-CPU word,
 * so the test runs with the ranks free, all pinned to one CPU (every wait
 * must yield to make progress) and spread over the CPUs round-robin.
 *
 * Workload: CALLS calls per rank, alternating between two communicators
 * (the second a dup of the first: separate segments and sequence numbers)
 * and cycling through int64 SUM allreduce (1..7 elements: up to the 56
 * bytes of a slot), fp32 MAX allreduce (1..14), in-place int64 SUM
 * allreduce, broadcast (1..56 bytes, root moving), reduce to a moving root
 * and barrier. Every value depends on (call, rank, element), so a slot read
 * from any other call gives a different result. Ranks are skewed: rank r
 * sleeps 20-50 µs before one call in 61 + 7r, so the others run ahead into
 * the next call and wait there.
 *
 * After the calls each rank's own off-CPU word must be 0 (it is non-zero
 * only inside sched_yield).
 *
 * Exactness: inputs are integers below 1000, so int64 sums and fp32 maxima
 * are exact; the reference is computed here from the same formula.
 */
#define _GNU_SOURCE
#include "test.h"

#include "comm.h"

#include <unistd.h>

#define CALLS 20000

typedef enum { PIN_FREE, PIN_ONE_CPU, PIN_SPREAD } pin_t;

static pin_t g_pin;

/* Input of rank r, element e, call i: an integer in [0, 1000). */
static int64_t val(long i, int r, size_t e)
{
    uint64_t h = (uint64_t)i * 2654435761u + (uint64_t)r * 40503u + (uint64_t)e * 977u;
    h ^= h >> 13;
    return (int64_t)(h % 1000u);
}

static void pin(int rank)
{
    if (g_pin != PIN_FREE) comm_pin_cpu(g_pin == PIN_ONE_CPU ? 0 : rank);
}

typedef struct ctx {
    int rank, P;
    long errors;
} ctx_t;

static void report(ctx_t *x, strata_comm_t *c, long i, const char *what, strata_status_t st,
                   size_t e, double got, double want)
{
    if (x->errors++ >= 5) return;
    if (st != STRATA_OK)
        fprintf(stderr, "rank %d call %ld %s: status %d: %s\n", x->rank, i, what, st,
                strata_comm_errmsg(c));
    else
        fprintf(stderr, "rank %d call %ld %s: element %zu is %g, expected %g\n", x->rank, i, what,
                e, got, want);
}

static void sum_i64(ctx_t *x, strata_comm_t *c, long i, bool inplace)
{
    size_t n = 1 + (size_t)i % 7;
    int64_t in[7], out[7];
    for (size_t e = 0; e < n; e++)
        in[e] = val(i, x->rank, e), out[e] = inplace ? in[e] : -1;
    strata_status_t st = strata_comm_allreduce(c, inplace ? STRATA_IN_PLACE : in, out, n,
                                               STRATA_INT64, STRATA_SUM, NULL);
    for (size_t e = 0; e < n; e++) {
        int64_t want = 0;
        for (int q = 0; q < x->P; q++)
            want += val(i, q, e);
        if (st != STRATA_OK || out[e] != want) {
            report(x, c, i, "allreduce int64 sum", st, e, (double)out[e], (double)want);
            return;
        }
    }
}

static void max_f32(ctx_t *x, strata_comm_t *c, long i)
{
    size_t n = 1 + (size_t)i % 14;
    float in[14], out[14];
    for (size_t e = 0; e < n; e++)
        in[e] = (float)val(i, x->rank, e), out[e] = -1;
    strata_status_t st = strata_comm_allreduce(c, in, out, n, STRATA_FP32, STRATA_MAX, NULL);
    for (size_t e = 0; e < n; e++) {
        int64_t want = 0;
        for (int q = 0; q < x->P; q++)
            want = val(i, q, e) > want ? val(i, q, e) : want;
        if (st != STRATA_OK || out[e] != (float)want) {
            report(x, c, i, "allreduce fp32 max", st, e, out[e], (double)want);
            return;
        }
    }
}

static void bcast(ctx_t *x, strata_comm_t *c, long i)
{
    size_t n = 1 + (size_t)i % COMM_LINE_DATA;
    int root = (int)(i % x->P);
    unsigned char buf[COMM_LINE_DATA];
    for (size_t e = 0; e < n; e++)
        buf[e] = x->rank == root ? (unsigned char)val(i, root, e) : 0xee;
    strata_status_t st = strata_comm_broadcast(c, buf, n, STRATA_UINT8, root, NULL);
    for (size_t e = 0; e < n; e++)
        if (st != STRATA_OK || buf[e] != (unsigned char)val(i, root, e)) {
            report(x, c, i, "broadcast", st, e, buf[e], (unsigned char)val(i, root, e));
            return;
        }
}

static void reduce(ctx_t *x, strata_comm_t *c, long i)
{
    int root = (int)((i / 7) % x->P);
    int64_t in = val(i, x->rank, 0), out = -1, want = 0;
    strata_status_t st = strata_comm_reduce(c, &in, &out, 1, STRATA_INT64, STRATA_SUM, root, NULL);
    for (int q = 0; q < x->P; q++)
        want += val(i, q, 0);
    if (st != STRATA_OK || (x->rank == root && out != want))
        report(x, c, i, "reduce", st, 0, (double)out, (double)want);
}

static void one_call(ctx_t *x, strata_comm_t *c, long i)
{
    switch (i % 6) {
    case 0:
        sum_i64(x, c, i, false);
        break;
    case 1:
        max_f32(x, c, i);
        break;
    case 2:
        sum_i64(x, c, i, true);
        break;
    case 3:
        bcast(x, c, i);
        break;
    case 4:
        reduce(x, c, i);
        break;
    default: {
        strata_status_t st = strata_comm_barrier(c, NULL);
        if (st != STRATA_OK) report(x, c, i, "barrier", st, 0, 0, 0);
    }
    }
}

static int rank_main(void *arg)
{
    (void)arg;
    ctx_t x = {0};
    strata_comm_t *c = NULL, *d = NULL;
    strata_error_t err = {0};
    if (strata_comm_init_env(&c, &err) != STRATA_OK || strata_comm_dup(c, &d, &err) != STRATA_OK) {
        fprintf(stderr, "init: %s\n", err.msg);
        return 2;
    }
    x.rank = strata_comm_rank(c), x.P = strata_comm_size(c);
    pin(x.rank);
    long skew = 61 + 7 * x.rank;
    for (long i = 0; i < CALLS && x.errors == 0; i++) {
        if (i % skew == 0) usleep(20 + (unsigned)(i % 31));
        one_call(&x, i % 3 == 2 ? d : c, i);
    }
    /* Outside sched_yield a rank's off-CPU word must read 0, or waiters on
     * its CPU would keep yielding to it. */
    for (strata_comm_t *e = c; e; e = e == c ? d : NULL)
        if (atomic_load(&e->lines[x.rank].misc.off) != 0)
            report(&x, e, CALLS, "off word", 0, 0, 1, 0);
    strata_comm_destroy(d);
    strata_comm_destroy(c);
    return x.errors ? 1 : 0;
}

static void run(int P, pin_t p)
{
    int code = -1;
    strata_error_t err = {0};
    g_pin = p; /* inherited by the forked ranks */
    assert_int_equal(strata_launch_fn(P, rank_main, NULL, 2.0, &code, &err), STRATA_OK);
    assert_int_equal(code, 0);
}

static void test_free_2(void **s)
{
    (void)s, run(2, PIN_FREE);
}
static void test_free_3(void **s)
{
    (void)s, run(3, PIN_FREE);
}
static void test_free_4(void **s)
{
    (void)s, run(4, PIN_FREE);
}
static void test_free_5(void **s)
{
    (void)s, run(5, PIN_FREE);
}
static void test_one_cpu_4(void **s)
{
    (void)s, run(4, PIN_ONE_CPU);
}
static void test_one_cpu_5(void **s)
{
    (void)s, run(5, PIN_ONE_CPU);
}
static void test_spread_4(void **s)
{
    (void)s, run(4, PIN_SPREAD);
}
static void test_spread_5(void **s)
{
    (void)s, run(5, PIN_SPREAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_2),    cmocka_unit_test(test_free_3),
        cmocka_unit_test(test_free_4),    cmocka_unit_test(test_free_5),
        cmocka_unit_test(test_one_cpu_4), cmocka_unit_test(test_one_cpu_5),
        cmocka_unit_test(test_spread_4),  cmocka_unit_test(test_spread_5),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
