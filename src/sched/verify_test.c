/*
 * verify_test.c — every algorithm x collective it implements passes the
 * symbolic verifier for P in {1,2,3,4,5,7,8,16,17,64} and counts 0, 1,
 * < P, not divisible by P and large (the ring also with 2, 3, 4 and 8
 * ranks per server wherever they divide P); deliberately broken schedules (a
 * dropped step, a doubled contribution, a swapped peer) are caught.
 */
#define _GNU_SOURCE
#include "test.h"
#include "sched.h"

static const uint32_t Ps[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 64};

/* Counts to try for P: 0, 1, smaller than P, not divisible by P, large. */
static int counts_for(uint32_t P, strata_coll_t c, uint64_t *out)
{
    if (c == STRATA_COLL_BARRIER) {
        out[0] = 0;
        return 1;
    }
    /* "Large": enough to hold many elements per rank and per chunk; kept
     * smaller for the collectives whose buffers are P times the count. */
    uint64_t large =
        (c == STRATA_COLL_ALLTOALL || c == STRATA_COLL_ALLGATHER || c == STRATA_COLL_REDUCE_SCATTER)
            ? 4099 / P + 3
            : 4099;
    int n = 0;
    out[n++] = 0;
    out[n++] = 1;
    if (P > 2) out[n++] = P - 1;
    out[n++] = 3 * (uint64_t)P + 1;
    out[n++] = large;
    return n;
}

/* group parameter worth trying for the two-level algorithms */
static uint32_t group_for(strata_algo_t a, uint32_t P)
{
    if (a == STRATA_ALGO_HIER || a == STRATA_ALGO_TORUS2D || a == STRATA_ALGO_INNET) {
        for (uint32_t g = 4; g > 1; g--)
            if (P % g == 0 && P / g > 1) return g;
        return P;
    }
    return 0;
}

static void verify_one(strata_coll_t c, strata_algo_t a, uint32_t P, uint64_t n, uint32_t chunks,
                       uint32_t group, int *ran)
{
    strata_sched_params_t p = {.coll = c,
                               .algo = a,
                               .nranks = P,
                               .count = n,
                               .elem_size = 4,
                               .root = P > 2 ? P - 2 : 0,
                               .chunks = chunks,
                               .group = group};
    strata_error_t err;
    strata_sched_t *s = NULL;
    strata_status_t st = strata_sched_create(&p, &s, &err);
    if (st == STRATA_ERR_UNSUPPORTED) return;
    if (st)
        fail_msg("create %s/%s P=%u n=%llu: %s", strata_coll_name(c), strata_algo_name(a), P,
                 (unsigned long long)n, err.msg);
    st = strata_sched_verify(s, &err);
    if (st) fail_msg("%s (chunks %u group %u)", err.msg, chunks, group);
    strata_sched_destroy(s);
    (*ran)++;
}

/* The node-structured trees (tree with a chain per node, nvlstree) take
 * any group: ones that divide P and ones that leave a smaller last node,
 * one node of all P (small P: the chain is long), each with 1 and 3 chunks. */
static void verify_groups(strata_coll_t c, strata_algo_t a, uint32_t P, uint64_t n, int *ran)
{
    if (a != STRATA_ALGO_TREE && a != STRATA_ALGO_NVLSTREE) return;
    const uint32_t gs[] = {2, 3, 4, 8, P};
    for (size_t i = 0; i < sizeof(gs) / sizeof(gs[0]); i++) {
        if (gs[i] > P || (gs[i] == P && P > 17) || (i > 0 && gs[i] == gs[i - 1])) continue;
        verify_one(c, a, P, n, 1, gs[i], ran);
        if (P <= 17) verify_one(c, a, P, n, 3, gs[i], ran);
    }
}

/* The multi-channel ring (ring.c): group g in {2, 3, 4, 8} wherever it
 * divides P (g = 1 is the single ring, run above; g = P is one server),
 * 1 and 3 chunks, every collective ring implements and every count. */
static void verify_ring_groups(strata_coll_t c, strata_algo_t a, uint32_t P, uint64_t n, int *ran)
{
    if (a != STRATA_ALGO_RING) return;
    const uint32_t gs[] = {2, 3, 4, 8};
    for (size_t i = 0; i < sizeof(gs) / sizeof(gs[0]); i++) {
        if (gs[i] > P || P % gs[i]) continue;
        verify_one(c, a, P, n, 1, gs[i], ran);
        if (P <= 17) verify_one(c, a, P, n, 3, gs[i], ran);
    }
}

static void test_all_verify(void **state)
{
    (void)state;
    int ran = 0;
    for (int a = 0; a < STRATA_ALGO_COUNT; a++)
        for (int c = 0; c < STRATA_COLL_COUNT; c++)
            for (size_t pi = 0; pi < sizeof(Ps) / sizeof(Ps[0]); pi++) {
                uint64_t counts[8];
                uint32_t P = Ps[pi];
                int nc = counts_for(P, (strata_coll_t)c, counts);
                for (int i = 0; i < nc; i++) {
                    verify_one(c, a, P, counts[i], 1, group_for(a, P), &ran);
                    if (i == nc - 1 && P <= 17) verify_one(c, a, P, counts[i], 3, 0, &ran);
                    verify_groups(c, a, P, counts[i], &ran);
                    verify_ring_groups(c, a, P, counts[i], &ran);
                }
            }
    /* every algorithm contributes: at least 10 P x 5 counts for allreduce */
    assert_true(ran > 400);
}

/* Direct (the shared-memory engine's layout, direct.c): flat up to 2 KiB
 * (2 phases), then 1 + 2C phases for allreduce, 1 + C for the others, C
 * the engine's chunks. Allreduce of 200,000 floats on 2 ranks: a slice is
 * min(256 KiB / 2, 400,000 B rounded to a line) = 131,072 B, so
 * ceil(400,000 / 131,072) = 4 chunks, 9 phases. Reduce-scatter of 100,000
 * floats per block on 3 ranks: min(87,360 (256 KiB / 3 in lines), 400,000
 * / 4 in lines = 99,968) = 87,360 B = 21,840 floats, 5 chunks, 6 phases.
 * Each passes the verifier. Registered buffers (allreduce only): 2
 * phases at any size (the handshake staging chunk 0, then the reduction
 * from every input into every output), on 2, 3, 4 and 7 ranks with counts
 * that do not divide; at 2 KiB the flat variant as before; another
 * collective or algorithm with `registered` is refused. */
static void direct_phases_reg(strata_coll_t c, uint32_t P, uint64_t n, uint32_t want, bool reg)
{
    strata_sched_params_t p = {.coll = c,
                               .algo = STRATA_ALGO_DIRECT,
                               .nranks = P,
                               .count = n,
                               .elem_size = 4,
                               .root = P - 1,
                               .registered = reg};
    strata_sched_t *s = NULL;
    strata_error_t err;
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_OK);
    assert_int_equal(strata_sched_nphases(s), want);
    if (strata_sched_verify(s, &err)) fail_msg("%s", err.msg);
    strata_sched_destroy(s);
}

static void direct_phases(strata_coll_t c, uint32_t P, uint64_t n, uint32_t want)
{
    direct_phases_reg(c, P, n, want, false);
}

static void test_direct_registered(void **state)
{
    (void)state;
    direct_phases_reg(STRATA_COLL_ALLREDUCE, 2, 512, 2, true); /* flat */
    direct_phases_reg(STRATA_COLL_ALLREDUCE, 2, 200000, 2, true);
    direct_phases_reg(STRATA_COLL_ALLREDUCE, 3, 1000003, 2, true);
    direct_phases_reg(STRATA_COLL_ALLREDUCE, 4, 513, 2, true);
    direct_phases_reg(STRATA_COLL_ALLREDUCE, 7, 65537, 2, true);
    strata_sched_params_t p = {.coll = STRATA_COLL_REDUCE,
                               .algo = STRATA_ALGO_DIRECT,
                               .nranks = 2,
                               .count = 1000,
                               .elem_size = 4,
                               .registered = true};
    strata_sched_t *s = NULL;
    strata_error_t err;
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_ERR_UNSUPPORTED);
    p.coll = STRATA_COLL_ALLREDUCE, p.algo = STRATA_ALGO_RING;
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_ERR_UNSUPPORTED);
}

static void test_direct_layout(void **state)
{
    (void)state;
    direct_phases(STRATA_COLL_ALLREDUCE, 2, 512, 2); /* 2,048 B: flat */
    direct_phases(STRATA_COLL_ALLREDUCE, 2, 513, 3); /* one chunk */
    direct_phases(STRATA_COLL_ALLREDUCE, 2, 200000, 9);
    direct_phases(STRATA_COLL_REDUCE, 2, 200000, 9);
    direct_phases(STRATA_COLL_REDUCE_SCATTER, 3, 100000, 6);
}

/* ==== Broken schedules ==== */

typedef enum { BREAK_DROP, BREAK_DOUBLE, BREAK_PEER } breakage_t;
static const sched_algo_t *inner;
static breakage_t breakage;
static uint32_t bad_agent, bad_phase;

static void broken_phase(const strata_sched_t *s, uint32_t agent, sched_sink_t *k)
{
    if (agent != bad_agent || k->phase != bad_phase) {
        inner->phase(s, agent, k);
        return;
    }
    /* enumerate the real phase, then alter it */
    strata_step_t steps[64];
    uint32_t n = 0;
    for (;; n++) {
        sched_sink_t one = {.phase = k->phase, .want = n, .out = &steps[n]};
        inner->phase(s, agent, &one);
        if (one.n <= n || n == 63) break;
    }
    for (uint32_t i = 0; i < n; i++) {
        strata_step_t t = steps[i];
        if (breakage == BREAK_DROP && t.op == STRATA_STEP_RECV_REDUCE) continue;
        if (breakage == BREAK_PEER && t.op == STRATA_STEP_SEND) t.peer = (t.peer + 1) % 5;
        sched_emit(k, &t);
        if (breakage == BREAK_DOUBLE && t.op == STRATA_STEP_RECV_REDUCE) {
            strata_step_t u = t;
            u.op = STRATA_STEP_REDUCE, u.peer = -1, u.after = i + 1;
            u.src_buf = STRATA_BUF_INPUT; /* adds this rank's input a second time */
            sched_emit(k, &u);
        }
    }
}

static strata_status_t run_broken(breakage_t b, strata_error_t *err)
{
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_RING,
                               .nranks = 5,
                               .count = 50,
                               .elem_size = 4};
    strata_sched_t *s = NULL;
    assert_int_equal(strata_sched_create(&p, &s, err), STRATA_OK);
    assert_int_equal(strata_sched_verify(s, err), STRATA_OK);
    static sched_algo_t fake;
    inner = s->algo;
    fake = *inner;
    fake.phase = broken_phase;
    s->algo = &fake;
    breakage = b, bad_agent = 2, bad_phase = 1;
    strata_status_t st = strata_sched_verify(s, err);
    strata_sched_destroy(s);
    return st;
}

static void test_broken_caught(void **state)
{
    (void)state;
    strata_error_t err;
    assert_int_equal(run_broken(BREAK_DROP, &err), STRATA_ERR_PROTOCOL);
    assert_non_null(
        strstr(err.msg,
               "agent 1 -> 2 message #2: sent 10 elements in phase 1, received as 10 in phase 2"));
    assert_int_equal(run_broken(BREAK_DOUBLE, &err), STRATA_ERR_PROTOCOL);
    assert_non_null(strstr(err.msg, "wrong contributions"));
    assert_int_equal(run_broken(BREAK_PEER, &err), STRATA_ERR_PROTOCOL);
}

/* Each of two ranks first receives from the other, then (after=1) sends:
 * fine with buffered sends that complete eagerly, a deadlock with
 * rendezvous ones. The verifier must say so. */
static void deadlock_phase(const strata_sched_t *s, uint32_t agent, sched_sink_t *k)
{
    (void)s;
    if (k->phase != 0) return;
    sched_recv(k, 0, (int32_t)(1 - agent), STRATA_BUF_OUTPUT, 0, 1);
    sched_send(k, 1, (int32_t)(1 - agent), STRATA_BUF_INPUT, 0, 1);
}

/* Verify a 2-rank sendrecv schedule whose steps `phase` replaces. */
static strata_status_t verify_with(void (*phase)(const strata_sched_t *, uint32_t, sched_sink_t *),
                                   strata_error_t *err)
{
    strata_sched_params_t p = {.coll = STRATA_COLL_SENDRECV,
                               .algo = STRATA_ALGO_PAIRWISE,
                               .nranks = 2,
                               .count = 1,
                               .elem_size = 4};
    strata_sched_t *s = NULL;
    assert_int_equal(strata_sched_create(&p, &s, err), STRATA_OK);
    assert_int_equal(strata_sched_verify(s, err), STRATA_OK);
    static sched_algo_t fake;
    fake = *s->algo;
    fake.phase = phase;
    s->algo = &fake;
    strata_status_t st = strata_sched_verify(s, err);
    strata_sched_destroy(s);
    return st;
}

static void test_deadlock_caught(void **state)
{
    (void)state;
    strata_error_t err;
    assert_int_equal(verify_with(deadlock_phase, &err), STRATA_ERR_PROTOCOL);
    assert_non_null(strstr(err.msg, "deadlock: agent 0 stuck at step 0 of phase 0 (recv, peer 1)"));
}

/* A hazard: a concurrent send and receive on the same region. */
static void hazard_phase(const strata_sched_t *s, uint32_t agent, sched_sink_t *k)
{
    (void)s;
    sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, 0, 1);
    sched_send(k, 0, (int32_t)(1 - agent), STRATA_BUF_OUTPUT, 0, 1);
    sched_recv(k, 0, (int32_t)(1 - agent), STRATA_BUF_OUTPUT, 0, 1);
}

static void test_hazard_caught(void **state)
{
    (void)state;
    strata_error_t err;
    assert_int_equal(verify_with(hazard_phase, &err), STRATA_ERR_PROTOCOL);
    assert_non_null(strstr(err.msg, "concurrent steps 0 (copy) and 1 (send)"));
}

/* Lazy queries agree with materialisation; nsteps and step() index it. */
static void test_lazy_matches_materialised(void **state)
{
    (void)state;
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLTOALL,
                               .algo = STRATA_ALGO_BRUCK,
                               .nranks = 7,
                               .count = 3,
                               .elem_size = 8};
    strata_sched_t *s;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    for (uint32_t r = 0; r < 7; r++) {
        strata_step_t *v;
        size_t n;
        assert_int_equal(strata_sched_materialise(s, r, &v, &n, NULL), STRATA_OK);
        assert_int_equal(n, strata_sched_nsteps(s, r));
        for (size_t i = 0; i < n; i++) {
            strata_step_t st;
            strata_sched_step(s, r, i, &st);
            assert_memory_equal(&st, &v[i], sizeof(st));
        }
        free(v);
    }
    /* Bruck alltoall: rotate, ceil(log2 7) = 3 rounds, un-rotate */
    assert_int_equal(strata_sched_nphases(s), 5);
    /* scratch: working copy + staging, 2 x P x count */
    assert_int_equal(strata_sched_buf_count(s, 0, STRATA_BUF_SCRATCH), 2 * 7 * 3);
    strata_sched_destroy(s);
}

/* Ring phases of equal blocks share one pattern class per half. */
static void test_phase_classes(void **state)
{
    (void)state;
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_RING,
                               .nranks = 8,
                               .count = 64,
                               .elem_size = 4};
    strata_sched_t *s;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    for (uint32_t ph = 0; ph < 14; ph++)
        assert_int_equal(strata_sched_phase_class(s, ph), ph < 7 ? 0 : 1);
    strata_sched_destroy(s);
    p.count = 65; /* unequal blocks: no promise */
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_not_equal(strata_sched_phase_class(s, 0), strata_sched_phase_class(s, 1));
    strata_sched_destroy(s);
    /* hier, 4 servers x 4: 3 intra RS, 3 + 3 inter, 3 intra AG phases */
    p.algo = STRATA_ALGO_HIER, p.nranks = 16, p.group = 4, p.count = 64;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    const uint32_t want[12] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3};
    assert_int_equal(strata_sched_nphases(s), 12);
    for (uint32_t ph = 0; ph < 12; ph++)
        assert_int_equal(strata_sched_phase_class(s, ph), want[ph]);
    strata_sched_destroy(s);
}

/* Two phases of one class must move the same messages (strata/sched.h):
 * every agent's steps equal in op, peer, `after` and bytes (offsets and
 * buffers may differ). Generates every phase of s and compares each with
 * the first phase of its class; returns the number of classes. */
static uint32_t check_classes_equal(const strata_sched_t *s)
{
    uint32_t np = strata_sched_nphases(s), P = strata_sched_nagents(s), ncls = 0;
    uint32_t *ids = calloc(np, sizeof(uint32_t));
    strata_step_t a[256], b[256];
    assert_non_null(ids);
    for (uint32_t p = 0; p < np; p++) {
        ids[p] = strata_sched_phase_class(s, p);
        uint32_t q = 0;
        while (ids[q] != ids[p])
            q++;
        ncls += q == p;
        for (uint32_t r = 0; r < P && q < p; r++) {
            uint32_t n = strata_sched_phase_steps(s, r, p, a, 256);
            uint32_t m = strata_sched_phase_steps(s, r, q, b, 256);
            assert_true(n <= 256);
            assert_int_equal(n, m);
            for (uint32_t i = 0; i < n; i++) {
                assert_int_equal(a[i].op, b[i].op);
                assert_int_equal(a[i].peer, b[i].peer);
                assert_int_equal(a[i].after, b[i].after);
                assert_int_equal(a[i].count * a[i].nblk, b[i].count * b[i].nblk);
            }
        }
    }
    free(ids);
    return ncls;
}

/* The pipelined two-level allreduce's classes (sched_twolevel_class): by
 * hand for small cases, every class checked by generating its phases,
 * and the class count independent of the server count. */
static void test_twolevel_classes(void **state)
{
    (void)state;
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_HIER,
                               .nranks = 16,
                               .group = 2,
                               .chunks = 3,
                               .count = 48,
                               .elem_size = 4};
    strata_sched_t *s;
    /* g = 2, N = 8, C = 3: S = 2 + 14 = 16 steps, intervals K0 = [0,1),
     * K1 = [1,8), K2 = [8,15), K3 = [15,16); phase p's window is
     * [max(0,p-2), min(p,15)]. Inside one interval k with length L: id
     * k + 4(L-1); else 4C + p = 12 + p. p0 [0,0] K0 -> 0; p1, p2 cross
     * K0|K1 -> 13, 14; p3..p7 [p-2,p] in K1, L 3 -> 9; p8 [6,8], p9 [7,9]
     * -> 20, 21; p10..p14 in K2 -> 10; p15 [13,15], p16 [14,15] -> 27, 28;
     * p17 [15,15] K3 -> 3. */
    const uint32_t want[18] = {0, 13, 14, 9, 9, 9, 9, 9, 20, 21, 10, 10, 10, 10, 10, 27, 28, 3};
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_nphases(s), 18);
    for (uint32_t ph = 0; ph < 18; ph++)
        assert_int_equal(strata_sched_phase_class(s, ph), want[ph]);
    assert_int_equal(check_classes_equal(s), 10);
    strata_sched_destroy(s);
    /* twice and four times the servers: still 10 classes (the steady
     * state of each direction is one class however long) */
    for (uint32_t P = 32; P <= 64; P *= 2) {
        p.nranks = P, p.count = 3 * P;
        assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
        assert_int_equal(check_classes_equal(s), 10);
        strata_sched_destroy(s);
    }
    /* C >= S: g = 2, N = 2, C = 6, S = 4, each interval one step; the
     * phases 3..5 run every step (window [0,3]): 4C + 3 = 27 */
    p.nranks = 4, p.chunks = 6, p.count = 24;
    const uint32_t want2[9] = {0, 25, 26, 27, 27, 27, 30, 31, 3};
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_nphases(s), 9);
    for (uint32_t ph = 0; ph < 9; ph++)
        assert_int_equal(strata_sched_phase_class(s, ph), want2[ph]);
    assert_int_equal(check_classes_equal(s), 7);
    strata_sched_destroy(s);
    /* unequal blocks (count 50 = not a multiple of C g N): no promise */
    p.count = 50;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(check_classes_equal(s), 9);
    strata_sched_destroy(s);
    /* more shapes, every class generated and compared: g = 4 and g = 1
     * (no intra stage), 5 chunks; one server (no inter stage: p1 [0,1] and
     * p2 [1,2] are both K0, length 2); torus2d (rows of 4) shares the code */
    const uint32_t shapes[][4] = {{32, 4, 5, 160}, {8, 1, 5, 40}, {64, 4, 5, 320}, {4, 4, 2, 8}};
    for (int k = 0; k < 4; k++) {
        p.nranks = shapes[k][0], p.group = shapes[k][1], p.chunks = shapes[k][2];
        p.count = shapes[k][3];
        assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
        uint32_t np = strata_sched_nphases(s);
        assert_true(check_classes_equal(s) < np);
        strata_sched_destroy(s);
    }
    p.algo = STRATA_ALGO_TORUS2D, p.nranks = 32, p.group = 4, p.chunks = 5, p.count = 160;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_true(check_classes_equal(s) < strata_sched_nphases(s));
    strata_sched_destroy(s);
}

/* Whether phases p and q of s have, agent by agent, equal step lists in
 * what a phase's timing reads (strata_sched_phase_pattern): op with a
 * receive's or a local step's reduction ignored, peer, `after`, bytes. */
static bool phases_time_alike(const strata_sched_t *s, uint32_t p, uint32_t q)
{
    static strata_step_t a[256], b[256];
    for (uint32_t r = 0; r < strata_sched_nagents(s); r++) {
        uint32_t n = strata_sched_phase_steps(s, r, p, a, 256);
        uint32_t m = strata_sched_phase_steps(s, r, q, b, 256);
        assert_true(n <= 256 && m <= 256);
        if (n != m) return false;
        for (uint32_t i = 0; i < n; i++) {
            int oa = a[i].op == STRATA_STEP_RECV_REDUCE ? STRATA_STEP_RECV
                     : a[i].op == STRATA_STEP_REDUCE    ? STRATA_STEP_COPY
                                                        : a[i].op;
            int ob = b[i].op == STRATA_STEP_RECV_REDUCE ? STRATA_STEP_RECV
                     : b[i].op == STRATA_STEP_REDUCE    ? STRATA_STEP_COPY
                                                        : b[i].op;
            if (oa != ob || a[i].peer != b[i].peer || a[i].after != b[i].after ||
                a[i].count * a[i].nblk != b[i].count * b[i].nblk)
                return false;
        }
    }
    return true;
}

/* Every pair of phases of s: equal pattern ids exactly when the phases
 * time alike (generated and compared: the promise, and that no pattern
 * the step lists share is left unnamed). Returns the number of patterns. */
static uint32_t check_patterns_exact(const strata_sched_t *s)
{
    uint32_t np = strata_sched_nphases(s), npat = 0;
    for (uint32_t p = 0; p < np; p++) {
        uint32_t id = strata_sched_phase_pattern(s, p);
        assert_int_not_equal(id, STRATA_SCHED_NO_PATTERN);
        bool first = true;
        for (uint32_t q = 0; q < p; q++) {
            bool same = strata_sched_phase_pattern(s, q) == id;
            assert_int_equal(same, phases_time_alike(s, p, q));
            first = first && !same;
        }
        npat += first;
    }
    return npat;
}

/* The pipelined two-level allreduce's timing patterns
 * (sched_twolevel_pattern): by hand for one case, then every pair of
 * phases of several shapes compared. */
static void test_twolevel_patterns(void **state)
{
    (void)state;
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_HIER,
                               .nranks = 8,
                               .group = 2,
                               .chunks = 2,
                               .count = 2 * 8 * 1000,
                               .elem_size = 4};
    strata_sched_t *s;
    /* g = 2, N = 4, C = 2: S = 8, K0 = [0,1), K1 + K2 = [1,7), K3 = [7,8);
     * phase p's window [max(0,p-1), min(p,7)] gives (a, b, c) = p0 (0,0,1),
     * p1 (0,1,1), p2..p6 (0,2,0), p7 (1,1,0), p8 (1,0,0) -> (0,0,1); W = 3,
     * id = a + 3(b + 3c): 9, 12, 6 (x5), 4, 9 — four patterns, where the
     * classes are six (sim_test's test_twolevel_reuse_identical) */
    const uint32_t want[9] = {9, 12, 6, 6, 6, 6, 6, 4, 9};
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_nphases(s), 9);
    for (uint32_t ph = 0; ph < 9; ph++)
        assert_int_equal(strata_sched_phase_pattern(s, ph), want[ph]);
    assert_int_equal(check_patterns_exact(s), 4);
    strata_sched_destroy(s);
    /* shapes: {P, g, C, count}: the classes' (C < S, C >= S, g = 1, one
     * server) and torus2d's rows */
    const uint32_t shapes[][4] = {{16, 2, 3, 48}, {4, 2, 6, 24},   {32, 4, 5, 160},
                                  {8, 1, 5, 40},  {64, 4, 5, 320}, {4, 4, 2, 8}};
    for (int k = 0; k < 6; k++) {
        p.nranks = shapes[k][0], p.group = shapes[k][1], p.chunks = shapes[k][2];
        p.count = shapes[k][3];
        assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
        assert_true(check_patterns_exact(s) <= check_classes_equal(s));
        strata_sched_destroy(s);
    }
    p.algo = STRATA_ALGO_TORUS2D, p.nranks = 32, p.group = 4, p.chunks = 5, p.count = 160;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_true(check_patterns_exact(s) < strata_sched_nphases(s));
    strata_sched_destroy(s);
    /* unequal blocks, another collective, another algorithm: none named */
    p.algo = STRATA_ALGO_HIER, p.count = 50;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_phase_pattern(s, 0), STRATA_SCHED_NO_PATTERN);
    strata_sched_destroy(s);
    p.count = 160, p.coll = STRATA_COLL_ALLGATHER;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_phase_pattern(s, 0), STRATA_SCHED_NO_PATTERN);
    strata_sched_destroy(s);
    p.coll = STRATA_COLL_ALLREDUCE, p.algo = STRATA_ALGO_RING, p.group = 0;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_phase_pattern(s, 0), STRATA_SCHED_NO_PATTERN);
    strata_sched_destroy(s);
}

/* The two-level schedules of the other collectives (hier.c), by hand, on
 * 3 servers x 2 ranks (P = 6, g = 2, N = 3), count 12 (reduce-scatter:
 * per-rank block 12):
 *  - reduce-scatter: 1 phase inside (g-1), 2 across (N-1). Rank 1 =
 *    (server 0, local 1) sends rank 0 in phase 0 column 0 (the blocks of
 *    ranks 0, 2, 4: 3 blocks of 12, 24 apart, from input offset 0), then
 *    across sends only to rank 3 (its ring: 1, 3, 5), one block of 12;
 *  - alltoall: the same phases; in phase 1 rank 1 first copies its own
 *    server's blocks, then sends rank 3 the g = 2 blocks gathered for it,
 *    36 elements apart in scratch (N·12);
 *  - broadcast from root 3 (server 1, local 1), chunks 2: depth T = 2 + 1,
 *    C + T - 1 = 4 phases; rank 3 sends chunk 0 (6 elements) in phase 0
 *    to rank 5 (across) and rank 2 (inside), rank 0 (server 0, local 0:
 *    depth 2 + 1 = 3) receives chunk 1 last, in phase 3, from rank 1;
 *  - reduce to root 3: the mirror, rank 0 (a leaf at depth 3 = T) sends
 *    chunk 0 in phase 0 to rank 1, and rank 1 (server 0 is the last of the
 *    chain across 1, 2, 0: depth 2) reduces chunk 1 from rank 0 and sends
 *    chunk 0 on to rank 5 (server 2, local 1) in phase 1, from scratch. */
static void test_hier_colls(void **state)
{
    (void)state;
    strata_sched_params_t p = {.coll = STRATA_COLL_REDUCE_SCATTER,
                               .algo = STRATA_ALGO_HIER,
                               .nranks = 6,
                               .group = 2,
                               .count = 12,
                               .elem_size = 4};
    strata_sched_t *s;
    strata_step_t st;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_nphases(s), 3);
    strata_sched_phase_step(s, 1, 0, 0, &st);
    assert_int_equal(st.op, STRATA_STEP_SEND);
    assert_int_equal(st.peer, 0);
    assert_int_equal(st.src_off, 0);
    assert_int_equal(st.nblk, 3);
    assert_int_equal(st.src_stride, 24);
    assert_int_equal(st.count, 12);
    for (uint32_t ph = 1; ph < 3; ph++) {
        strata_sched_phase_step(s, 1, ph, 0, &st);
        assert_int_equal(st.peer, 3);
        assert_int_equal(st.nblk * st.count, 12);
    }
    strata_sched_destroy(s);
    p.coll = STRATA_COLL_ALLTOALL;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_nphases(s), 3);
    strata_sched_phase_step(s, 1, 1, 0, &st); /* first: its own server's blocks, locally */
    assert_int_equal(st.op, STRATA_STEP_COPY);
    strata_sched_phase_step(s, 1, 1, 1, &st);
    assert_int_equal(st.op, STRATA_STEP_SEND);
    assert_int_equal(st.peer, 3);
    assert_int_equal(st.nblk, 2);
    assert_int_equal(st.src_stride, 36);
    strata_sched_destroy(s);
    p.coll = STRATA_COLL_BROADCAST, p.root = 3, p.chunks = 2;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_nphases(s), 4);
    int peers = 0;
    for (uint32_t i = 0; i < strata_sched_phase_nsteps(s, 3, 0); i++) {
        strata_sched_phase_step(s, 3, 0, i, &st);
        if (st.op == STRATA_STEP_SEND) peers |= 1 << st.peer, assert_int_equal(st.count, 6);
    }
    assert_int_equal(peers, (1 << 5) | (1 << 2));
    assert_int_equal(strata_sched_phase_nsteps(s, 0, 3), 1);
    strata_sched_phase_step(s, 0, 3, 0, &st);
    assert_int_equal(st.op, STRATA_STEP_RECV);
    assert_int_equal(st.peer, 1);
    assert_int_equal(st.dst_off, 6);
    strata_sched_destroy(s);
    p.coll = STRATA_COLL_REDUCE;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_nphases(s), 4);
    strata_sched_phase_step(s, 0, 0, 0, &st);
    assert_int_equal(st.op, STRATA_STEP_SEND);
    assert_int_equal(st.peer, 1);
    assert_int_equal(st.src_buf, STRATA_BUF_INPUT);
    assert_int_equal(strata_sched_phase_nsteps(s, 1, 1), 2);
    strata_sched_phase_step(s, 1, 1, 0, &st);
    assert_int_equal(st.op, STRATA_STEP_RECV_REDUCE);
    assert_int_equal(st.peer, 0);
    assert_int_equal(st.dst_off, 6);
    strata_sched_phase_step(s, 1, 1, 1, &st);
    assert_int_equal(st.op, STRATA_STEP_SEND);
    assert_int_equal(st.peer, 5);
    assert_int_equal(st.src_buf, STRATA_BUF_SCRATCH);
    assert_int_equal(st.src_off, 0);
    assert_int_equal(st.count, 6);
    strata_sched_destroy(s);
}

/* The ring's channels, by hand: P = 8 in 2 servers of 4 (group 4), 64
 * elements. Channel c enters every server at local rank c and leaves from
 * c^1: odd channels go up, even ones down (ring.c), so the rings are
 *   c = 0: 0 3 2 1 | 4 7 6 5     c = 1: 1 2 3 0 | 5 6 7 4
 *   c = 2: 2 1 0 3 | 6 5 4 7     c = 3: 3 0 1 2 | 7 4 5 6
 * each on slice [16c, 16c+16) in blocks of 2. Rank 0 sends in phase 0 to
 * its successor on each channel: 3, 5 (c = 1: it leaves server 0), 3, 1.
 * Channel c's reduce-scatter step 0 sends the block of the sender's
 * position: rank 0 is position 0, 3, 2, 1 on channels 0..3 (offsets 0,
 * 16 + 3·2 = 22, 32 + 2·2 = 36, 48 + 1·2 = 50). Rank 3 leaves by channel
 * 2 (to 6, the entry of channel 2 on server 1) and rank 4 comes back by
 * channel 1 (to 1). Each rank sends one block to another server per phase,
 * and every such send lands on the receiving server's local rank c of its
 * channel: NIC c to NIC c, one rail. Group 1 is the single ring 0..7; a
 * group that does not divide P is refused. */
static void test_ring_channels(void **state)
{
    (void)state;
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_RING,
                               .nranks = 8,
                               .count = 64,
                               .elem_size = 4,
                               .group = 4};
    strata_sched_t *s;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_nphases(s), 14);
    assert_int_equal(strata_sched_phase_nsteps(s, 0, 0), 8); /* send + reduce per channel */
    const int32_t to0[4] = {3, 5, 3, 1}, off0[4] = {0, 22, 36, 50};
    for (uint32_t c = 0; c < 4; c++) {
        strata_step_t st;
        strata_sched_phase_step(s, 0, 0, 2 * c, &st);
        assert_int_equal(st.op, STRATA_STEP_SEND);
        assert_int_equal(st.peer, to0[c]);
        assert_int_equal(st.src_off, off0[c]);
        assert_int_equal(st.count, 2);
    }
    strata_step_t st;
    strata_sched_phase_step(s, 3, 0, 4, &st);
    assert_int_equal(st.peer, 6);
    strata_sched_phase_step(s, 4, 0, 2, &st);
    assert_int_equal(st.peer, 1);
    /* the public view: entry c, exit c^1, the orders above */
    const uint32_t order[4][4] = {{0, 3, 2, 1}, {1, 2, 3, 0}, {2, 1, 0, 3}, {3, 0, 1, 2}};
    assert_int_equal(strata_sched_channels(s), 4);
    for (uint32_t c = 0; c < 4; c++) {
        strata_sched_channel_t ch;
        assert_int_equal(strata_sched_channel(s, c, &ch, NULL), STRATA_OK);
        assert_int_equal(ch.entry, c);
        assert_int_equal(ch.exit, c ^ 1);
        assert_int_equal(ch.up, c % 2 == 1);
        assert_int_equal(ch.servers, 2);
        assert_int_equal(ch.off, 16 * c);
        assert_int_equal(ch.count, 16);
        for (uint32_t i = 0; i < 4; i++)
            assert_int_equal(strata_sched_channel_local(s, c, i), order[c][i]);
    }
    strata_sched_channel_t none;
    assert_int_equal(strata_sched_channel(s, 4, &none, NULL), STRATA_ERR_RANGE);
    for (uint32_t ph = 0; ph < 14; ph++) {
        assert_int_equal(strata_sched_phase_class(s, ph), ph < 7 ? 0 : 1);
        for (uint32_t r = 0; r < 8; r++) {
            int cross = 0;
            for (uint32_t i = 0; i < strata_sched_phase_nsteps(s, r, ph); i++) {
                strata_sched_phase_step(s, r, ph, i, &st);
                bool out = st.op == STRATA_STEP_SEND && (uint32_t)st.peer / 4 != r / 4;
                cross += out;
                /* step i / 2 is channel i / 2's: it enters at local rank c */
                if (out) assert_int_equal((uint32_t)st.peer % 4, i / 2);
            }
            assert_int_equal(cross, 1);
        }
    }
    strata_sched_destroy(s);
    /* group 1: one ring, rank r -> r+1, block r of 8 first */
    p.group = 1;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_phase_nsteps(s, 3, 0), 2);
    strata_sched_phase_step(s, 3, 0, 0, &st);
    assert_int_equal(st.peer, 4);
    assert_int_equal(st.src_off, 24);
    assert_int_equal(st.count, 8);
    assert_int_equal(strata_sched_params(s)->group, 1);
    strata_sched_destroy(s);
    strata_error_t err;
    p.group = 3;
    assert_int_equal(strata_sched_check(&p, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "ring: 3 ranks per server does not divide the 8 ranks"));
    p.group = 16;
    assert_int_equal(strata_sched_check(&p, &err), STRATA_ERR_INVALID);
    /* reduce-scatter scratch: two slots of ceil(ceil(10/4)/1) = 3 per channel */
    p.coll = STRATA_COLL_REDUCE_SCATTER, p.group = 4, p.count = 10;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_buf_count(s, 0, STRATA_BUF_SCRATCH), 2 * 4 * 3);
    strata_sched_destroy(s);
}

/* More NICs than ranks a server (params rails, ring.c): a GH200 node's
 * one GPU and four NICs. P = 2, group 1, rails 4: four channels of the
 * ring 0 -> 1 -> 0, channel c on rail c with slice [16c, 16c + 16) of 64;
 * allreduce step 0 of rank 0 sends block 0 of each slice (8 elements at
 * 16c) to rank 1. P = 8 in servers of 2, rails 4: channel c runs rotation
 * c mod 2 (entry c mod 2, exit its neighbour) on rail c. Every collective
 * verifies symbolically; rails that are not a multiple of the group are
 * refused. */
static void test_ring_rails(void **state)
{
    (void)state;
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_RING,
                               .nranks = 2,
                               .count = 64,
                               .elem_size = 4,
                               .group = 1,
                               .rails = 4};
    strata_sched_t *s;
    strata_error_t err;
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_OK);
    assert_int_equal(strata_sched_channels(s), 4);
    assert_int_equal(strata_sched_nphases(s), 2);
    assert_int_equal(strata_sched_phase_nsteps(s, 0, 0), 8);
    for (uint32_t c = 0; c < 4; c++) {
        strata_sched_channel_t ch;
        strata_step_t st;
        assert_int_equal(strata_sched_channel(s, c, &ch, NULL), STRATA_OK);
        assert_int_equal(ch.entry, 0);
        assert_int_equal(ch.exit, 0);
        assert_int_equal(ch.rail, (int32_t)c);
        assert_int_equal(ch.off, 16 * c);
        assert_int_equal(ch.count, 16);
        strata_sched_phase_step(s, 0, 0, 2 * c, &st);
        assert_int_equal(st.op, STRATA_STEP_SEND);
        assert_int_equal(st.peer, 1);
        assert_int_equal(st.src_off, 16 * c);
        assert_int_equal(st.count, 8);
    }
    strata_sched_destroy(s);
    const strata_coll_t colls[] = {STRATA_COLL_ALLREDUCE, STRATA_COLL_REDUCE_SCATTER,
                                   STRATA_COLL_ALLGATHER, STRATA_COLL_BROADCAST,
                                   STRATA_COLL_REDUCE};
    const uint32_t shape[2][3] = {{2, 1, 4}, {8, 2, 4}}; /* P, group, rails */
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++) {
            p.coll = colls[i], p.nranks = shape[k][0], p.group = shape[k][1];
            p.rails = shape[k][2], p.count = 37, p.chunks = 2, p.root = 1;
            assert_int_equal(strata_sched_check(&p, &err), STRATA_OK);
            assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_OK);
            assert_int_equal(strata_sched_channels(s), 4);
            if (strata_sched_verify(s, &err)) fail_msg("%s", err.msg);
            strata_sched_channel_t ch;
            assert_int_equal(strata_sched_channel(s, 3, &ch, NULL), STRATA_OK);
            assert_int_equal(ch.rail, 3);
            assert_int_equal(ch.entry, 3 % shape[k][1]);
            strata_sched_destroy(s);
        }
    p.coll = STRATA_COLL_ALLREDUCE, p.nranks = 8, p.group = 2, p.rails = 3;
    assert_int_equal(strata_sched_check(&p, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "ring: 3 rails is not a multiple of 2 ranks per server"));
    /* no more rails than ranks: one channel a rank, no rail of its own */
    p.group = 4, p.rails = 4;
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_OK);
    strata_sched_channel_t ch;
    assert_int_equal(strata_sched_channel(s, 1, &ch, NULL), STRATA_OK);
    assert_int_equal(ch.rail, -1);
    strata_sched_destroy(s);
}

/* Innet adds switch agents; the double binary tree keeps every rank an
 * inner node of at most one tree (NCCL's design goal) for even P. */
static void test_agents_and_trees(void **state)
{
    (void)state;
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_INNET,
                               .nranks = 16,
                               .count = 64,
                               .elem_size = 4,
                               .group = 8};
    strata_sched_t *s;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    assert_int_equal(strata_sched_nagents(s), 16 + 2 + 8); /* 2 leaves + a root per shard */
    assert_int_equal(strata_sched_buf_count(s, 17, STRATA_BUF_SCRATCH), 64);
    assert_int_equal(strata_sched_buf_count(s, 17, STRATA_BUF_INPUT), 0);
    strata_sched_destroy(s);
    p.algo = STRATA_ALGO_TREE, p.group = 0;
    for (uint32_t P = 2; P <= 64; P += 2) {
        p.nranks = P;
        assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
        for (uint32_t r = 0; r < P; r++) {
            int inner_in = 0;
            for (int t = 0; t < 2; t++)
                inner_in += sched_dt(s, t, r, DT_C0) >= 0 || sched_dt(s, t, r, DT_C1) >= 0;
            assert_true(inner_in <= 1 || P <= 2);
        }
        strata_sched_destroy(s);
    }
}

static void test_bad_params(void **state)
{
    (void)state;
    strata_error_t err;
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLTOALL,
                               .algo = STRATA_ALGO_RING,
                               .nranks = 4,
                               .count = 8,
                               .elem_size = 4};
    assert_int_equal(strata_sched_check(&p, &err), STRATA_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "ring does not implement alltoall"));
    p.algo = STRATA_ALGO_PAIRWISE, p.nranks = 0;
    assert_int_equal(strata_sched_check(&p, &err), STRATA_ERR_INVALID);
    p.nranks = 4, p.coll = STRATA_COLL_BROADCAST, p.algo = STRATA_ALGO_BINOMIAL, p.root = 4;
    assert_int_equal(strata_sched_check(&p, &err), STRATA_ERR_INVALID);
    p.root = 0, p.coll = STRATA_COLL_BARRIER, p.count = 1;
    assert_int_equal(strata_sched_check(&p, &err), STRATA_ERR_INVALID);
    /* node-structured trees: a node larger than the ranks is refused */
    p.coll = STRATA_COLL_ALLREDUCE, p.algo = STRATA_ALGO_TREE, p.group = 5;
    assert_int_equal(strata_sched_check(&p, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "tree: 5 ranks per node is more than the 4 ranks"));
    p.algo = STRATA_ALGO_NVLSTREE;
    assert_int_equal(strata_sched_check(&p, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "nvlstree: 5 ranks per switch is more than the 4 ranks"));
    p.group = 3; /* does not divide 4: a node of 3 and a node of 1 */
    assert_int_equal(strata_sched_check(&p, &err), STRATA_OK);
}

static void test_names(void **state)
{
    (void)state;
    strata_coll_t c;
    strata_algo_t a;
    assert_int_equal(strata_coll_parse("reduce_scatter", &c), 0);
    assert_int_equal(c, STRATA_COLL_REDUCE_SCATTER);
    assert_int_equal(strata_coll_parse("All-Reduce", &c), 0);
    assert_int_equal(c, STRATA_COLL_ALLREDUCE);
    assert_int_equal(strata_coll_parse("allreduce2", &c), -1);
    assert_int_equal(strata_algo_parse("NVLS", &a), 0);
    assert_int_equal(a, STRATA_ALGO_INNET);
    assert_int_equal(strata_algo_parse("rabenseifner", &a), 0);
    assert_int_equal(a, STRATA_ALGO_RABENSEIFNER);
    assert_int_equal(strata_algo_parse(NULL, &a), -1);
    assert_string_equal(strata_coll_name(STRATA_COLL_ALLTOALL), "alltoall");
    assert_string_equal(strata_algo_name(STRATA_ALGO_TORUS2D), "torus2d");
    assert_int_equal(strata_algo_parse("nvls-tree", &a), 0);
    assert_int_equal(a, STRATA_ALGO_NVLSTREE);
    assert_string_equal(strata_algo_name((strata_algo_t)99), "?");
}

/* Every allocation failing in turn: create and verify report NOMEM (or
 * succeed once enough allocations pass), never crash or leak (ASan). */
static void test_out_of_memory(void **state)
{
    (void)state;
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_TREE,
                               .nranks = 5,
                               .count = 10,
                               .elem_size = 4};
    bool passed = false;
    for (long n = 0; n < 400 && !passed; n++) {
        strata_sched_t *s = NULL;
        strata_error_t err;
        util_alloc_fail_after(n);
        strata_status_t st = strata_sched_create(&p, &s, &err);
        if (st == STRATA_OK) st = strata_sched_verify(s, &err);
        util_alloc_fail_after(-1);
        assert_true(st == STRATA_OK || st == STRATA_ERR_NOMEM);
        passed = st == STRATA_OK;
        strata_sched_destroy(s);
    }
    assert_true(passed);
}

/* The tree with more NICs than ranks a server (params rails, tree.c): P =
 * 2 servers of one rank (GH200), rails 4: 4 channels per tree, 8 in all,
 * channel c = t 4 + h on rail h, slice c of 8 (count 64: 8 elements at
 * 8c); with one chunk the tree over 2 nodes (root and one leaf per tree,
 * T = 1) takes C - 1 + 2T = 2 phases. P = 8 in servers of 2,
 * rails 4 and P = 2 with rails 4: the verifier accepts the allreduce;
 * rails that are not a multiple of the group are refused. */
static void test_tree_rails(void **state)
{
    (void)state;
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_TREE,
                               .nranks = 2,
                               .count = 64,
                               .elem_size = 4,
                               .chunks = 1,
                               .group = 1,
                               .rails = 4};
    strata_sched_t *s;
    strata_error_t err;
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_OK);
    assert_int_equal(strata_sched_channels(s), 8);
    assert_int_equal(strata_sched_nphases(s), 2);
    for (uint32_t c = 0; c < 8; c++) {
        strata_sched_channel_t ch;
        assert_int_equal(strata_sched_channel(s, c, &ch, NULL), STRATA_OK);
        assert_int_equal(ch.tree, (int32_t)(c / 4));
        assert_int_equal(ch.rail, (int32_t)(c % 4));
        assert_int_equal(ch.entry, 0);
        assert_int_equal(ch.exit, 0);
        assert_int_equal(ch.off, 8 * c);
        assert_int_equal(ch.count, 8);
    }
    if (strata_sched_verify(s, &err)) fail_msg("%s", err.msg);
    strata_sched_destroy(s);
    p.nranks = 8, p.group = 2, p.count = 37, p.chunks = 2;
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_OK);
    assert_int_equal(strata_sched_channels(s), 8);
    if (strata_sched_verify(s, &err)) fail_msg("%s", err.msg);
    strata_sched_channel_t ch;
    assert_int_equal(strata_sched_channel(s, 7, &ch, NULL), STRATA_OK);
    assert_int_equal(ch.rail, 3);
    assert_int_equal(ch.entry, 1); /* rank 3 mod 2's chain */
    strata_sched_destroy(s);
    p.rails = 3;
    assert_int_equal(strata_sched_check(&p, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "tree: 3 rails is not a multiple of 2 ranks per server"));
    p.rails = 2; /* no more rails than ranks: a channel per rank, as before */
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_OK);
    assert_int_equal(strata_sched_channels(s), 4);
    assert_int_equal(strata_sched_channel(s, 1, &ch, NULL), STRATA_OK);
    assert_int_equal(ch.rail, -1);
    strata_sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_verify),
        cmocka_unit_test(test_hier_colls),
        cmocka_unit_test(test_broken_caught),
        cmocka_unit_test(test_deadlock_caught),
        cmocka_unit_test(test_hazard_caught),
        cmocka_unit_test(test_lazy_matches_materialised),
        cmocka_unit_test(test_phase_classes),
        cmocka_unit_test(test_twolevel_classes),
        cmocka_unit_test(test_twolevel_patterns),
        cmocka_unit_test(test_ring_channels),
        cmocka_unit_test(test_ring_rails),
        cmocka_unit_test(test_tree_rails),
        cmocka_unit_test(test_agents_and_trees),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_direct_layout),
        cmocka_unit_test(test_direct_registered),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
