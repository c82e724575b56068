/*
 * sim_test.c — the simulator on topologies and schedules, against values
 * derived by hand or from the routes topo chose:
 *  - one ring on a non-blocking switch agrees with the α-β formula (1 %);
 *  - a 1:4 oversubscribed leaf tier gives each crossing flow a quarter;
 *  - ECMP collisions slow exactly the flows the hash put together;
 *  - phase reuse gives the same total, bit for bit, as simulating every phase;
 *  - two collectives sharing a GPU's links each get half;
 *  - the trace is trace-event JSON with every rank's steps;
 *  - bad placements are refused with a clear error.
 */
#define _GNU_SOURCE
#include "test.h"
#include "sim.h"

#include <unistd.h>

#define GB 1e9

static strata_topo_t *make_switch(int n, double bw, double lat)
{
    strata_topo_linkspec_t spec = {NULL, 1, bw, lat};
    strata_topo_t *t = NULL;
    strata_error_t err;
    assert_int_equal(strata_topo_build_switch(n, &spec, NULL, &t, &err), STRATA_OK);
    return t;
}

/* k = 4 two-tier fat-tree: 4 leaves of 2 hosts, 2 spines; oversub at the
 * leaf tier divides the leaf-spine links' bandwidth. */
static strata_topo_t *make_fattree(double bw, double lat, double oversub)
{
    strata_topo_linkspec_t spec = {NULL, 1, bw, lat};
    strata_topo_fattree_t ft = {.k = 4, .tiers = 2, .endpoints = 0, .oversub = {0, oversub}};
    ft.link[0] = &spec;
    strata_topo_t *t = NULL;
    strata_error_t err;
    if (strata_topo_build_fattree(&ft, NULL, &t, &err) != STRATA_OK) fail_msg("%s", err.msg);
    return t;
}

static strata_sched_t *make_sched(strata_coll_t coll, uint32_t P, uint64_t count)
{
    strata_sched_params_t p = {.coll = coll,
                               .algo = STRATA_ALGO_RING,
                               .nranks = P,
                               .count = count,
                               .elem_size = 4,
                               .chunks = 1};
    strata_sched_t *s = NULL;
    strata_error_t err;
    if (strata_sched_create(&p, &s, &err) != STRATA_OK) fail_msg("%s", err.msg);
    return s;
}

static void run1(const strata_topo_t *t, const strata_sched_t *s, const int32_t *ranks,
                 const strata_sim_opts_t *o, strata_sim_result_t *res)
{
    strata_sim_t *sim = NULL;
    strata_error_t err;
    assert_int_equal(strata_sim_create(t, o, &sim, &err), STRATA_OK);
    if (strata_sim_add(sim, s, ranks, &err) != STRATA_OK) fail_msg("%s", err.msg);
    if (strata_sim_run(sim, res, &err) != STRATA_OK) fail_msg("%s", err.msg);
    strata_sim_destroy(sim);
}

/* Ring allreduce of 64 MiB on 8 GPUs behind one switch, 10 GB/s and 1 µs
 * per link. Every phase each rank sends S/P = 8 MiB over 2 hops on links
 * nobody else uses: α-β per phase = 2 × 1 µs + 8388608 / 1e10 s =
 * 840.8608 µs; 2(P-1) = 14 phases → 11.7720512 ms. */
static void test_ring_no_contention_matches_alpha_beta(void **state)
{
    (void)state;
    strata_topo_t *t = make_switch(8, 10 * GB, 1e-6);
    strata_sched_t *s = make_sched(STRATA_COLL_ALLREDUCE, 8, 64u << 20 >> 2);
    strata_sim_opts_t o = strata_sim_opts_default();
    strata_sim_result_t r;
    run1(t, s, NULL, &o, &r);
    double ab = 14 * (2e-6 + 8388608 / 1e10);
    assert_rel(r.time, ab, 0.01);
    assert_rel(r.time_ab, ab, 1e-9);
    assert_rel(r.time, r.time_ab, 1e-9);
    /* and within 1 % of the collective layer's own α-β-γ formula, an
     * independent derivation (strata_coll_cost) */
    assert_true(r.time_model > 0);
    assert_rel(r.time, r.time_model, 0.01);
    /* busbw = S/t × 2(P-1)/P */
    assert_rel(r.busbw, (64.0 * 1048576 / r.time) * 14 / 8, 1e-12);
    assert_int_equal(r.phases, 14);
    assert_int_equal(r.phases_simulated, 2); /* one reduce-scatter, one allgather class */
    strata_sim_result_free(&r);
    /* ASYNC on a symmetric ring: every rank moves in lockstep anyway. */
    o.mode = STRATA_SIM_ASYNC;
    run1(t, s, NULL, &o, &r);
    assert_rel(r.time, ab, 1e-9);
    strata_sim_result_free(&r);
    strata_sched_destroy(s);
    strata_topo_destroy(t);
}

/* Ring allgather of 1 MiB blocks (262144 floats) over ranks placed on
 * endpoints 0,2,1,3 of the k=4 fat-tree: every ring hop crosses from leaf 0
 * to leaf 1 or back, so each leaf sends 2 flows up over its 2 uplinks.
 * With 1:4 oversubscription each uplink has 10/4 GB/s; spread puts weight
 * 1/2 of each flow on each uplink, so each uplink carries Σw = 1 and each
 * flow gets 2.5 GB/s: a quarter. 3 phases × 1048576 / 2.5e9 = 1.2582912 ms.
 * Non-blocking, the same flows run at the host link's 10 GB/s. */
static void test_oversubscribed_quarter(void **state)
{
    (void)state;
    int32_t place[] = {0, 2, 1, 3};
    strata_sched_t *s = make_sched(STRATA_COLL_ALLGATHER, 4, 262144);
    strata_sim_opts_t o = strata_sim_opts_default();
    strata_sim_result_t r;
    strata_topo_t *t = make_fattree(10 * GB, 0, 4);
    run1(t, s, place, &o, &r);
    assert_rel(r.time, 3 * 1048576 / 2.5e9, 1e-9);
    /* the leaf→spine class bounded every flow */
    for (int mode = 0; mode < 2; mode++) {
        double leaf_bound = 0;
        for (int c = 0; c < r.nclasses; c++)
            if (r.classes[c].tier == 2) leaf_bound += r.classes[c].bound_share;
        assert_rel(leaf_bound, 1.0, 1e-9);
        strata_sim_result_free(&r);
        if (mode == 1) break;
        /* the same along the critical chain of the async run */
        o.mode = STRATA_SIM_ASYNC;
        run1(t, s, place, &o, &r);
        assert_rel(r.time, 3 * 1048576 / 2.5e9, 1e-9);
        o.mode = STRATA_SIM_BARRIER;
    }
    strata_topo_destroy(t);
    t = make_fattree(10 * GB, 0, 1);
    run1(t, s, place, &o, &r);
    assert_rel(r.time, 3 * 1048576 / 10e9, 1e-9);
    strata_sim_result_free(&r);
    strata_topo_destroy(t);
    strata_sched_destroy(s);
}

/* ECMP: the same ring with one hashed path per pair. Predict from the
 * paths topo's hash picks: a flow sharing a channel with another gets half
 * of 10 GB/s (two flows at most share here), so each phase lasts
 * max_count × 1 MiB / 10 GB/s. Spread never collides. */
static int ecmp_max_share(const strata_topo_t *t, const int32_t *place, int P, uint64_t seed)
{
    strata_topo_router_t *rt = NULL;
    strata_error_t err;
    assert_int_equal(strata_topo_router_create(t, &rt, &err), STRATA_OK);
    int32_t nch = strata_topo_link_count(t) * 2;
    int *cnt = calloc((size_t)nch, sizeof(int));
    int32_t paths[8][16], n[8];
    for (int r = 0; r < P; r++) {
        int32_t a = strata_topo_endpoint(t, place[r]),
                b = strata_topo_endpoint(t, place[(r + 1) % P]);
        assert_int_equal(strata_topo_path_hash(rt, a, b, seed, paths[r], 16, &n[r]), STRATA_OK);
        for (int h = 0; h < n[r]; h++)
            cnt[paths[r][h]]++;
    }
    int m = 0;
    for (int r = 0; r < P; r++)
        for (int h = 0; h < n[r]; h++)
            if (cnt[paths[r][h]] > m) m = cnt[paths[r][h]];
    free(cnt);
    strata_topo_router_destroy(rt);
    return m;
}

static void test_ecmp_collisions(void **state)
{
    (void)state;
    int32_t place[] = {0, 2, 1, 3};
    strata_sched_t *s = make_sched(STRATA_COLL_ALLGATHER, 4, 262144);
    strata_topo_t *t = make_fattree(10 * GB, 0, 1);
    strata_sim_opts_t o = strata_sim_opts_default();
    o.routing = STRATA_SIM_ECMP;
    int collided = 0;
    for (uint64_t seed = 1; seed <= 16; seed++) {
        o.seed = seed;
        int m = ecmp_max_share(t, place, 4, seed);
        assert_true(m == 1 || m == 2);
        collided += m == 2;
        strata_sim_result_t r;
        run1(t, s, place, &o, &r);
        assert_rel(r.time, 3 * m * 1048576 / 10e9, 1e-9);
        strata_sim_result_free(&r);
        if (m == 2) {
            /* 64 connections per pair, each hashed on its own, split each
             * flow about evenly over both spines: near the spread time
             * (3 × 1 MiB at 10 GB/s), far from the collided 2× */
            o.conns = 64;
            run1(t, s, place, &o, &r);
            assert_true(r.time < 1.25 * 3 * 1048576 / 10e9);
            strata_sim_result_free(&r);
            o.conns = 1;
        }
    }
    assert_true(collided > 0); /* 16 seeds: a collision-free draw each time is (1/4)^16-unlikely */
    strata_topo_destroy(t);
    strata_sched_destroy(s);
}

/* Phase reuse against the event-by-event run on a contended, asymmetric
 * case (ECMP on the fat-tree with latency, 8 ranks, allreduce, 3 chunks):
 * identical totals, and the same bytes per link class. */
static void test_phase_reuse_identical(void **state)
{
    (void)state;
    strata_topo_t *t = make_fattree(10 * GB, 0.7e-6, 2);
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_RING,
                               .nranks = 8,
                               .count = 3 * 8 * 1000,
                               .elem_size = 4,
                               .chunks = 3};
    strata_sched_t *s = NULL;
    strata_error_t err;
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_OK);
    int32_t place[] = {0, 5, 2, 7, 1, 4, 3, 6};
    for (int routing = 0; routing < 2; routing++) {
        strata_sim_opts_t o = strata_sim_opts_default();
        o.routing = routing ? STRATA_SIM_ECMP : STRATA_SIM_SPREAD;
        o.seed = 3;
        strata_sim_result_t a, b;
        run1(t, s, place, &o, &a);
        o.no_reuse = true;
        run1(t, s, place, &o, &b);
        assert_int_equal(a.phases, 3 * 14);
        assert_int_equal(b.phases_simulated, 3 * 14);
        assert_true(a.phases_simulated < a.phases);
        assert_true(a.time == b.time); /* bit-identical */
        assert_true(a.time_ab == b.time_ab);
        for (int c = 0; c < a.nclasses; c++) {
            assert_rel(a.classes[c].bytes, b.classes[c].bytes, 1e-12);
            assert_near(a.classes[c].bound_share, b.classes[c].bound_share, 1e-12);
        }
        strata_sim_result_free(&a);
        strata_sim_result_free(&b);
    }
    strata_sched_destroy(s);
    strata_topo_destroy(t);
}

/* Two collectives at once: allreduce over GPUs {0,1} and over GPUs {0,2}
 * on a 4-GPU switch (10 GB/s, no latency), 8 MiB each. Alone: 2 phases of
 * 4 MiB at 10 GB/s = 0.8388608 ms. Together GPU 0's uplink and downlink
 * carry one flow of each, so all four flows run at 5 GB/s: 1.6777216 ms. */
static void test_concurrent_collectives(void **state)
{
    (void)state;
    strata_topo_t *t = make_switch(4, 10 * GB, 0);
    strata_sched_t *s = make_sched(STRATA_COLL_ALLREDUCE, 2, 2u << 20);
    int32_t tp[] = {0, 1}, dp[] = {0, 2};
    strata_sim_opts_t o = strata_sim_opts_default();
    strata_sim_result_t r;
    run1(t, s, tp, &o, &r);
    assert_rel(r.time, 2 * 4194304 / 10e9, 1e-9);
    strata_sim_result_free(&r);
    strata_sim_t *sim = NULL;
    strata_error_t err;
    assert_int_equal(strata_sim_create(t, &o, &sim, &err), STRATA_OK);
    assert_int_equal(strata_sim_add(sim, s, tp, &err), STRATA_OK);
    assert_int_equal(strata_sim_add(sim, s, dp, &err), STRATA_OK);
    assert_int_equal(strata_sim_run(sim, &r, &err), STRATA_OK);
    assert_rel(r.time, 2 * 4194304 / 5e9, 1e-9);
    assert_rel(r.time_ab, 2 * 4194304 / 10e9, 1e-9); /* α-β ignores the sharing */
    strata_sim_result_free(&r);
    strata_sim_destroy(sim);
    strata_sched_destroy(s);
    strata_topo_destroy(t);
}

/* The trace: valid JSON, trace-event format, and each rank's 2 steps per
 * phase (a send and a receive) in every one of the 2(P-1) phases, reused
 * phases included. */
static void test_trace(void **state)
{
    (void)state;
    char path[] = "/tmp/strata-trace-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    strata_topo_t *t = make_fattree(10 * GB, 1e-6, 1);
    const uint32_t P = 8;
    strata_sched_t *s = make_sched(STRATA_COLL_ALLREDUCE, P, 8 * 4096);
    strata_sim_opts_t o = strata_sim_opts_default();
    o.trace_path = path;
    o.trace_links = 3;
    strata_sim_result_t r;
    run1(t, s, NULL, &o, &r);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) fail_msg("trace is not JSON: %s line %d", je.text, je.line);
    json_t *evs = json_object_get(root, "traceEvents");
    assert_true(json_is_array(evs));
    unsigned steps[8] = {0}, counters = 0;
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        assert_non_null(ph);
        assert_true(json_is_integer(json_object_get(e, "pid")));
        if (strcmp(ph, "X") == 0) {
            assert_true(json_is_number(json_object_get(e, "ts")));
            assert_true(json_number_value(json_object_get(e, "dur")) >= 0);
            json_int_t pid = json_integer_value(json_object_get(e, "pid"));
            assert_true(pid >= 1 && pid <= (json_int_t)P);
            steps[pid - 1]++;
        } else if (strcmp(ph, "C") == 0) {
            counters++;
        }
    }
    for (uint32_t g = 0; g < P; g++)
        assert_int_equal(steps[g], 2 * 2 * (P - 1));
    assert_true(counters > 0);
    json_decref(root);
    unlink(path);
    strata_sim_result_free(&r);
    strata_sched_destroy(s);
    strata_topo_destroy(t);
}

static void test_bad_input(void **state)
{
    (void)state;
    strata_topo_t *t = make_switch(4, 10 * GB, 0);
    strata_sched_t *s = make_sched(STRATA_COLL_ALLREDUCE, 8, 64);
    strata_sim_t *sim = NULL;
    strata_error_t err;
    assert_int_equal(strata_sim_create(t, NULL, &sim, &err), STRATA_OK);
    assert_int_equal(strata_sim_add(sim, s, NULL, &err), STRATA_ERR_RANGE);
    assert_non_null(strstr(err.msg, "rank 4"));
    strata_sim_result_t r;
    assert_int_equal(strata_sim_run(sim, &r, &err), STRATA_ERR_INVALID);
    strata_sim_destroy(sim);
    strata_sim_destroy(NULL);
    strata_sched_destroy(s);
    strata_topo_destroy(t);
}

/* In-network reduction (innet): 4 GPUs each joined to 2 scale-up switches
 * by 10 GB/s links. The switch agent is both switches, each GPU's traffic
 * split evenly (equal links): 20 GB/s per GPU. Every byte goes up once
 * and comes down once: with 4 chunks, 5 phases of 16 MiB at 20 GB/s =
 * 5 × 16777216 / 2e10 = 4.194304 ms; chunks = 1: 2 × 64 MiB → 6.7108864 ms. */
static void test_innet(void **state)
{
    (void)state;
    strata_topo_server_t sv = {0};
    sv.name = "t";
    sv.accels = 4;
    sv.scaleup_switches = 2;
    sv.scaleup = (strata_topo_linkspec_t){NULL, 1, 10 * GB, 0};
    sv.nics = 0;
    strata_topo_fattree_t net = {0};
    strata_topo_t *t = NULL;
    strata_error_t err;
    if (strata_topo_build_cluster(&sv, 1, &net, false, NULL, &t, &err) != STRATA_OK)
        fail_msg("%s", err.msg);
    for (uint32_t chunks = 1; chunks <= 4; chunks += 3) {
        strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                                   .algo = STRATA_ALGO_INNET,
                                   .nranks = 4,
                                   .count = 16u << 20,
                                   .elem_size = 4,
                                   .chunks = chunks};
        strata_sched_t *s = NULL;
        assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_OK);
        strata_sim_opts_t o = strata_sim_opts_default();
        strata_sim_result_t r;
        run1(t, s, NULL, &o, &r);
        assert_rel(r.time, chunks == 1 ? 2 * 67108864 / 2e10 : 5 * 16777216 / 2e10, 1e-9);
        strata_sim_result_free(&r);
        strata_sched_destroy(s);
    }
    /* Inside a server ECMP does not hash: GPUs stripe over their switches.
     * Ring allreduce, 6 phases of 16 MiB at 20 GB/s = 5.0331648 ms either way. */
    strata_sched_t *ring = make_sched(STRATA_COLL_ALLREDUCE, 4, 16u << 20);
    strata_sim_opts_t o = strata_sim_opts_default();
    o.routing = STRATA_SIM_ECMP;
    strata_sim_result_t r;
    run1(t, ring, NULL, &o, &r);
    assert_rel(r.time, 6 * 16777216 / 2e10, 1e-9);
    strata_sim_result_free(&r);
    strata_sched_destroy(ring);
    strata_topo_destroy(t);
}

/* Every allocation failure point of a small run with a trace: the run
 * either succeeds or says "out of memory"; nothing leaks or crashes
 * (asan-ubsan checks the leaks). */
static void test_oom(void **state)
{
    (void)state;
    strata_topo_t *t = make_fattree(10 * GB, 1e-6, 1);
    strata_sched_t *s = make_sched(STRATA_COLL_ALLREDUCE, 8, 8 * 1024);
    char path[] = "/tmp/strata-oom-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    int ok = 0, nomem = 0;
    strata_log_set_level(STRATA_LOG_ERROR); /* truncated-trace warnings are expected */
    for (long k = 0; k < 400; k += 3) {
        strata_sim_opts_t o = strata_sim_opts_default();
        o.trace_path = path;
        o.routing = k % 2 ? STRATA_SIM_ECMP : STRATA_SIM_SPREAD;
        strata_sim_t *sim = NULL;
        strata_sim_result_t r = {0};
        strata_error_t err;
        util_alloc_fail_after(k);
        strata_status_t rc = strata_sim_create(t, &o, &sim, &err);
        if (rc == STRATA_OK) rc = strata_sim_add(sim, s, NULL, &err);
        if (rc == STRATA_OK) rc = strata_sim_run(sim, &r, &err);
        util_alloc_fail_after(-1);
        assert_true(rc == STRATA_OK || rc == STRATA_ERR_NOMEM);
        ok += rc == STRATA_OK;
        nomem += rc == STRATA_ERR_NOMEM;
        strata_sim_result_free(&r);
        strata_sim_destroy(sim);
    }
    assert_true(ok > 0 && nomem > 0);
    unlink(path);
    strata_sched_destroy(s);
    strata_topo_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_no_contention_matches_alpha_beta),
        cmocka_unit_test(test_oversubscribed_quarter),
        cmocka_unit_test(test_ecmp_collisions),
        cmocka_unit_test(test_phase_reuse_identical),
        cmocka_unit_test(test_concurrent_collectives),
        cmocka_unit_test(test_trace),
        cmocka_unit_test(test_innet),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
