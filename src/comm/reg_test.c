/*
 * reg_test.c — allreduce on registered buffers (strata_comm_mem_alloc,
 * mem.c; the engine's registered path in allreduce_shm.c) on real forked
 * ranks, at 2, 3 and 4 ranks.
 *
 * Two methods agree: every rank runs each case once on malloc'd buffers
 * (the staging engine, itself checked element by element against an
 * independent reference in coll_test) and once on registered buffers, and
 * the results must be byte-identical — both reduce each element in rank
 * order 0..P-1, only the data's path differs. Cases: every data type ×
 * every operator × counts {1, 700, 1023, 65537} (1: the line slots, where
 * registration changes nothing; the rest above the flat variant's 2 KiB for
 * every type but int8/uint8 at 700 and 1023) out of place and in place, and
 * fp32 sum at 1 Mi + 3 elements (4 MiB + 12 B: over the 16 MiB streaming
 * threshold only with STRATA_NT_THRESHOLD, which the CTest entry sets low
 * so the streamed path runs too). A hand check: fp32 sum with rank r
 * contributing i % 5 + r gives P·(i % 5) + P(P−1)/2 exactly (integers below
 * 2^24).
 *
 * The path taken is counted (comm->reg_calls): each registered case whose
 * bytes exceed the flat variant's STRATA_DIRECT_FLAT_MAX must take it; a
 * mixed call — rank 1's buffers malloc'd, or rank 0's output only not
 * registered — must not, and must give the same result.
 *
 * Rank 0 also checks the allocator's errors and reuse: 0 bytes is
 * STRATA_ERR_INVALID, more than the pool STRATA_ERR_RANGE, freeing a
 * pointer it did not return STRATA_ERR_INVALID (the communicator stays
 * usable: the next allreduce runs), and first fit hands a freed range out
 * again (alloc a, b; free a; alloc 100 bytes returns a).
 *
 * A peer dying inside the registered path: rank 1 publishes its chunk-0
 * staged word with its registered buffers exactly as the engine's first
 * handshake does (signature, sequence 1, pool and offsets), so rank 0
 * takes the registered path, reduces, and waits for rank 1's `reduced`;
 * rank 1 is then SIGKILLed. Rank 0 must return STRATA_ERR_PEER within
 * twice its 2 s deadline (the engine's bounded wait and pidfd check).
 */
#define _GNU_SOURCE
#include "test.h"

#include "ranks_test.h"

#include <signal.h>
#include <stdlib.h>

static const size_t counts[] = {1, 700, 1023, 65537};
#define NCOUNTS  (sizeof(counts) / sizeof(counts[0]))
#define BIG      ((size_t)(1u << 20) + 3)
#define MAXBYTES (BIG * 8)

static double gen(strata_dtype_t dt, strata_op_t op, int r, size_t i)
{
    if (op == STRATA_PROD) return (i + (size_t)r) % 3 == 0 ? 2 : 1;
    double v = (double)((i * 7 + (size_t)r * 3) % 11);
    return dt == STRATA_UINT8 || dt == STRATA_UINT32 || dt == STRATA_UINT64 ? v : v - 5;
}

static void fill(strata_dtype_t dt, strata_op_t op, int r, void *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        strata_dtype_set(dt, buf, i, gen(dt, op, r, i));
}

typedef struct ctx {
    strata_comm_t *c;
    int r, P;
    long errors, reg_expected;
    unsigned char *rin, *rout, *min, *mout, *want;
} ctx_t;

static void bad_case(ctx_t *x, const char *what, strata_dtype_t dt, strata_op_t op, size_t n,
                     strata_status_t st)
{
    fprintf(stderr, "rank %d: %s %s %s n=%zu: status %d %s\n", x->r, what, strata_dtype_name(dt),
            strata_op_name(op), n, st, strata_comm_errmsg(x->c));
    x->errors++;
}

/* One case: the staged result into want, then the registered one (or the
 * mixed one) compared byte for byte. */
static void one(ctx_t *x, strata_dtype_t dt, strata_op_t op, size_t n, bool inplace, bool mixed)
{
    size_t bytes = n * strata_dtype_size(dt);
    fill(dt, op, x->r, x->min, n);
    strata_status_t st = strata_comm_allreduce(x->c, x->min, x->want, n, dt, op, NULL);
    if (st != STRATA_OK) {
        bad_case(x, "staged", dt, op, n, st);
        return;
    }
    /* mixed: rank 1 keeps malloc'd buffers */
    bool mine_reg = !(mixed && x->r == 1);
    unsigned char *in = mine_reg ? x->rin : x->min, *out = mine_reg ? x->rout : x->mout;
    fill(dt, op, x->r, in, n);
    memset(out, 0xa5, bytes);
    st = strata_comm_allreduce(x->c, inplace ? STRATA_IN_PLACE : in, inplace ? in : out, n, dt, op,
                               NULL);
    if (st != STRATA_OK) {
        bad_case(x, mixed ? "mixed" : "registered", dt, op, n, st);
        return;
    }
    if (memcmp(inplace ? in : out, x->want, bytes) != 0) {
        bad_case(x, inplace ? "in place differs" : "differs", dt, op, n, STRATA_OK);
        return;
    }
    if (!mixed && bytes > STRATA_DIRECT_FLAT_MAX) x->reg_expected++;
}

static void allocator_errors(ctx_t *x)
{
    void *p = NULL, *a = NULL, *b = NULL, *again = NULL;
    if (strata_comm_mem_alloc(x->c, 0, &p) != STRATA_ERR_INVALID) x->errors++;
    if (strata_comm_mem_alloc(x->c, comm_mem_max() + 1, &p) != STRATA_ERR_RANGE) x->errors++;
    int local = 0;
    if (strata_comm_mem_free(x->c, &local) != STRATA_ERR_INVALID) x->errors++;
    if (strata_comm_mem_free(x->c, NULL) != STRATA_OK) x->errors++;
    if (strata_comm_mem_alloc(x->c, 5000, &a) != STRATA_OK ||
        strata_comm_mem_alloc(x->c, 100, &b) != STRATA_OK ||
        strata_comm_mem_free(x->c, a) != STRATA_OK ||
        strata_comm_mem_alloc(x->c, 100, &again) != STRATA_OK || again != a ||
        strata_comm_mem_free(x->c, again) != STRATA_OK ||
        strata_comm_mem_free(x->c, b) != STRATA_OK)
        x->errors++, fprintf(stderr, "rank 0: allocator reuse: %s\n", strata_comm_errmsg(x->c));
    if (x->errors) fprintf(stderr, "rank 0: allocator errors: %ld\n", x->errors);
}

static void hand_check(ctx_t *x)
{
    float *in = (float *)x->rin, *out = (float *)x->rout;
    for (size_t i = 0; i < BIG; i++)
        in[i] = (float)(i % 5 + (size_t)x->r);
    strata_status_t st = strata_comm_allreduce(x->c, in, out, BIG, STRATA_FP32, STRATA_SUM, NULL);
    if (st != STRATA_OK) {
        bad_case(x, "hand", STRATA_FP32, STRATA_SUM, BIG, st);
        return;
    }
    x->reg_expected++;
    float base = (float)(x->P * (x->P - 1) / 2);
    for (size_t i = 0; i < BIG; i++)
        if (out[i] != (float)(x->P * (int)(i % 5)) + base) {
            fprintf(stderr, "rank %d: hand check: element %zu is %g, expected %g\n", x->r, i,
                    (double)out[i], (double)((float)(x->P * (int)(i % 5)) + base));
            x->errors++;
            return;
        }
}

static int rank_main(void *arg)
{
    (void)arg;
    ctx_t x = {.c = ranks_join()};
    x.r = strata_comm_rank(x.c), x.P = strata_comm_size(x.c);
    if (x.r == 0) allocator_errors(&x);
    x.min = malloc(MAXBYTES), x.mout = malloc(MAXBYTES), x.want = malloc(MAXBYTES);
    strata_status_t st = strata_comm_mem_alloc(x.c, MAXBYTES, (void **)&x.rin);
    if (st == STRATA_OK) st = strata_comm_mem_alloc(x.c, MAXBYTES, (void **)&x.rout);
    if (st != STRATA_OK || !x.min || !x.mout || !x.want) {
        fprintf(stderr, "rank %d: alloc: %s\n", x.r, strata_comm_errmsg(x.c));
        return 4;
    }
    for (int dt = 0; dt < STRATA_DTYPE_COUNT; dt++)
        for (int op = 0; op < STRATA_OP_COUNT; op++)
            for (size_t k = 0; k < NCOUNTS; k++)
                for (int inplace = 0; inplace < 2; inplace++)
                    one(&x, (strata_dtype_t)dt, (strata_op_t)op, counts[k], inplace, false);
    hand_check(&x);
    one(&x, STRATA_FP32, STRATA_SUM, BIG, true, false);
    long before = (long)x.c->reg_calls;
    one(&x, STRATA_FP32, STRATA_SUM, BIG, false, true);
    one(&x, STRATA_BF16, STRATA_MAX, 65537, true, true);
    if ((long)x.c->reg_calls != before) {
        fprintf(stderr, "rank %d: a mixed call took the registered path\n", x.r);
        x.errors++;
    }
    /* rank 0's output only not registered: falls back too */
    fill(STRATA_INT32, STRATA_SUM, x.r, x.rin, 65537);
    st = strata_comm_allreduce(x.c, x.rin, x.r == 0 ? x.mout : x.rout, 65537, STRATA_INT32,
                               STRATA_SUM, NULL);
    if (st != STRATA_OK || (long)x.c->reg_calls != before) x.errors++;
    if ((long)x.c->reg_calls != x.reg_expected) {
        fprintf(stderr, "rank %d: %llu registered calls, expected %ld\n", x.r,
                (unsigned long long)x.c->reg_calls, x.reg_expected);
        x.errors++;
    }
    printf("reg_test: rank %d of %d: %ld registered calls, %ld errors\n", x.r, x.P, x.reg_expected,
           x.errors);
    ranks_record(x.c, x.errors ? STRATA_ERR_INTERNAL : STRATA_OK, util_now());
    strata_comm_mem_free(x.c, x.rin), strata_comm_mem_free(x.c, x.rout);
    free(x.min), free(x.mout), free(x.want);
    strata_comm_destroy(x.c);
    return x.errors ? 1 : 0;
}

#define DIE_N (1u << 16)

static int die_main(void *arg)
{
    (void)arg;
    signal(SIGTERM, SIG_IGN); /* survive the launcher's SIGTERM long enough to report */
    strata_comm_t *c = ranks_join();
    int r = strata_comm_rank(c);
    float *in = NULL, *out = NULL;
    if (strata_comm_mem_alloc(c, DIE_N * 4, (void **)&in) != STRATA_OK ||
        strata_comm_mem_alloc(c, DIE_N * 4, (void **)&out) != STRATA_OK)
        return 4;
    if (r == 1) { /* the first handshake of allreduce(DIE_N, float, sum), then death */
        comm_sig_t sig = {
            .coll = COMM_SIG_ALLREDUCE, .dtype = STRATA_FP32, .op = STRATA_SUM, .count = DIE_N};
        comm_mem_ref_t a, b;
        if (!comm_mem_lookup(c, in, DIE_N * 4, &a) || !comm_mem_lookup(c, out, DIE_N * 4, &b))
            return 5;
        comm_staged_t *me = &c->lines[1].staged;
        atomic_store(&me->count, DIE_N);
        atomic_store(&me->reg, (uint64_t)a.serial + 1);
        atomic_store(&me->reg_bytes, a.pool_bytes);
        atomic_store(&me->reg_src, a.off);
        atomic_store(&me->reg_dst, b.off);
        atomic_store(&me->v, (uint64_t)comm_sig_word(&sig) << 32 | (uint32_t)(c->cseq + 1));
        usleep(300000); /* rank 0 is in its wait for our `reduced` */
        raise(SIGKILL);
    }
    strata_call_opts_t o = {.timeout_s = 2.0};
    double t0 = util_now();
    strata_status_t st = strata_comm_allreduce(c, in, out, DIE_N, STRATA_FP32, STRATA_SUM, &o);
    ranks_record(c, st, t0);
    rrep->after[0] = (int)c->reg_calls;
    strata_comm_destroy(c);
    return 0;
}

static void test_peer_dies(void **s)
{
    (void)s;
    ranks_fresh();
    ranks_run_grace(2, die_main, 2 * 2.0 + 1); /* rank 0 reports within 2 x its 2 s deadline */
    printf("reg_test: rank 0 got '%s' after %.2f s\n", rrep->msg[0], rrep->elapsed[0]);
    assert_int_equal(rrep->done[0], 1);
    assert_int_equal(rrep->after[0], 1); /* it was the registered path's wait */
    assert_int_equal(rrep->status[0], STRATA_ERR_PEER);
    assert_true(rrep->elapsed[0] < 4.0);
}

static void test_ranks(void **s)
{
    int P = *(int *)*s;
    ranks_fresh();
    assert_int_equal(ranks_run(P, rank_main), 0);
    for (int r = 0; r < P; r++)
        assert_int_equal(rrep->status[r], STRATA_OK);
}

int main(int argc, char **argv)
{
    static int Ps[3] = {2, 3, 4};
    struct CMUnitTest tests[3];
    int n = 0;
    for (int i = 1; i < argc && n < 3; i++)
        Ps[n] = atoi(argv[i]),
        tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(test_ranks, &Ps[n]), n++;
    if (n == 0)
        for (; n < 3; n++)
            tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(test_ranks, &Ps[n]);
    int rc = _cmocka_run_group_tests("reg", tests, (size_t)n, NULL, NULL);
    const struct CMUnitTest die[] = {cmocka_unit_test(test_peer_dies)};
    return rc | _cmocka_run_group_tests("reg_die", die, 1, NULL, NULL);
}
