/*
 * bisect_test.c — builders and bisection bandwidth: the figures the issue
 * names, exhaustive search against every closed form on small builders,
 * device and link counts, and bad builder input.
 */
#define _GNU_SOURCE
#include "test.h"
#include "topo.h"

#define GB 1e9

static strata_topo_linkspec_t bw(double gbps)
{
    return strata_topo_linkspec_bw(gbps * GB);
}

static double closed(const strata_topo_t *t)
{
    strata_topo_bisection_t b;
    assert_int_equal(strata_topo_bisection(t, STRATA_BISECT_CLOSED, &b, NULL), STRATA_OK);
    assert_true(b.exact);
    return b.bw;
}

static double exhaustive(const strata_topo_t *t)
{
    strata_topo_bisection_t b;
    assert_int_equal(strata_topo_bisection(t, STRATA_BISECT_EXHAUSTIVE, &b, NULL), STRATA_OK);
    return b.bw;
}

/* ==== The figures of the issue ==== */

static void test_ring8(void **state)
{
    (void)state;
    strata_topo_t *t;
    strata_topo_linkspec_t l = bw(25);
    assert_int_equal(strata_topo_build_ring(8, &l, NULL, &t, NULL), STRATA_OK);
    /* cutting a ring in two halves crosses 2 links: 2 × 25 = 50 GB/s */
    assert_near(closed(t), 50 * GB, 1);
    assert_near(exhaustive(t), 50 * GB, 1);
    strata_topo_destroy(t);
}

static void test_torus444(void **state)
{
    (void)state;
    strata_topo_t *t;
    strata_topo_linkspec_t l = bw(50);
    int32_t dims[3] = {4, 4, 4};
    assert_int_equal(strata_topo_build_torus(3, dims, &l, NULL, &t, NULL), STRATA_OK);
    /* 64 nodes, 3 × 64 = 192 links; a cut across one dimension crosses
     * 16 rows × 2 (wrap) = 32 links × 50 = 1600 GB/s */
    assert_int_equal(strata_topo_link_count(t), 192);
    assert_near(closed(t), 1600 * GB, 1);
    /* the bound's rank-halves candidate is that same cut */
    strata_topo_bisection_t b;
    assert_int_equal(strata_topo_bisection(t, STRATA_BISECT_BOUND, &b, NULL), STRATA_OK);
    assert_false(b.exact);
    assert_near(b.bw, 1600 * GB, 1);
    strata_topo_destroy(t);
}

static strata_topo_t *fattree(int32_t k, int32_t tiers, double r1, double r2, double gbps)
{
    strata_topo_t *t = NULL;
    strata_topo_linkspec_t l = bw(gbps);
    strata_topo_fattree_t ft = {.k = k, .tiers = tiers, .oversub = {0, r1, r2}, .link = {&l}};
    strata_error_t err;
    assert_int_equal(strata_topo_build_fattree(&ft, NULL, &t, &err), STRATA_OK);
    return t;
}

static void test_fattree128(void **state)
{
    (void)state;
    /* k = 8, three tiers: k³/4 = 128 endpoints; non-blocking: 64 × 50 = 3200 */
    strata_topo_t *t = fattree(8, 3, 1, 1, 50);
    assert_int_equal(strata_topo_endpoint_count(t), 128);
    /* switches: 32 leaves + 32 aggregation + 16 cores = 80 */
    assert_int_equal(strata_topo_device_count(t), 208);
    /* links: 128 endpoint + 32 leaves × 4 up + 32 aggs × 4 up = 384 */
    assert_int_equal(strata_topo_link_count(t), 384);
    assert_near(closed(t), 3200 * GB, 1);
    strata_topo_bisection_t b;
    assert_int_equal(strata_topo_bisection(t, STRATA_BISECT_BOUND, &b, NULL), STRATA_OK);
    assert_near(b.bw, 3200 * GB, 1); /* pod halves: max-flow agrees */
    strata_topo_destroy(t);
    /* 1:4 at the top tier (aggregation → core): 3200 / 4 = 800 */
    t = fattree(8, 3, 1, 4, 50);
    assert_near(closed(t), 800 * GB, 1);
    assert_int_equal(strata_topo_bisection(t, STRATA_BISECT_BOUND, &b, NULL), STRATA_OK);
    assert_near(b.bw, 800 * GB, 1);
    strata_topo_destroy(t);
    /* the same endpoint count as a two-tier k = 16 tree, 4:1 at the leaves */
    t = fattree(16, 2, 4, 0, 50);
    assert_int_equal(strata_topo_endpoint_count(t), 128);
    assert_near(closed(t), 800 * GB, 1);
    strata_topo_destroy(t);
}

/* ==== Exhaustive search agrees with every closed form ==== */

static void agree(strata_topo_t *t)
{
    double c = closed(t), e = exhaustive(t);
    if (fabs(c - e) > 1e-6 * (c > 1 ? c : 1))
        fail_msg("%s: closed form %.6g != exhaustive %.6g", strata_topo_name(t), c, e);
    strata_topo_destroy(t);
}

static void test_exhaustive_direct(void **state)
{
    (void)state;
    strata_topo_linkspec_t l = bw(25);
    strata_topo_t *t;
    for (int32_t n = 3; n <= 12; n++) {
        assert_int_equal(strata_topo_build_ring(n, &l, NULL, &t, NULL), STRATA_OK);
        agree(t);
    }
    for (int32_t n = 2; n <= 9; n++) {
        assert_int_equal(strata_topo_build_full(n, &l, NULL, &t, NULL), STRATA_OK);
        agree(t);
    }
    for (int32_t n = 1; n <= 9; n++) {
        assert_int_equal(strata_topo_build_switch(n, &l, NULL, &t, NULL), STRATA_OK);
        agree(t);
    }
    int32_t grids[][3] = {{4, 4, 0}, {2, 4, 0}, {2, 8, 0}, {6, 2, 0},
                          {4, 2, 2}, {2, 2, 2}, {2, 2, 4}, {4, 4, 0}};
    for (size_t i = 0; i < sizeof(grids) / sizeof(grids[0]); i++) {
        int nd = grids[i][2] ? 3 : 2;
        assert_int_equal(strata_topo_build_mesh(nd, grids[i], &l, NULL, &t, NULL), STRATA_OK);
        agree(t);
        assert_int_equal(strata_topo_build_torus(nd, grids[i], &l, NULL, &t, NULL), STRATA_OK);
        agree(t);
    }
}

static void test_exhaustive_fattree(void **state)
{
    (void)state;
    /* k = 4: 4, 8 and 16 endpoints; oversubscription at each tier */
    agree(fattree(4, 1, 0, 0, 50));
    agree(fattree(4, 2, 1, 0, 50));
    agree(fattree(4, 2, 2, 0, 50));
    agree(fattree(4, 3, 1, 1, 50));
    agree(fattree(4, 3, 1, 4, 50));
    agree(fattree(4, 3, 2, 1, 50));
    agree(fattree(4, 3, 3, 2, 50));
    agree(fattree(6, 2, 1.5, 0, 50)); /* 18 endpoints, 6 leaves */
    /* partial but uniform trees: 2 leaves of 4 under 4 spines (k = 8);
     * 6 leaves of 3 in 2 pods of 3 (k = 6, 18 of 54 endpoints) */
    strata_topo_linkspec_t l = bw(50);
    strata_topo_fattree_t ft = {.k = 8, .tiers = 2, .endpoints = 8, .link = {&l}};
    strata_topo_t *t;
    assert_int_equal(strata_topo_build_fattree(&ft, NULL, &t, NULL), STRATA_OK);
    assert_int_equal(strata_topo_device_count(t), 8 + 2 + 4);
    assert_near(closed(t), 4 * 50 * GB, 1);
    agree(t);
    ft = (strata_topo_fattree_t){
        .k = 6, .tiers = 3, .endpoints = 18, .oversub = {0, 1, 2}, .link = {&l}};
    assert_int_equal(strata_topo_build_fattree(&ft, NULL, &t, NULL), STRATA_OK);
    /* 6 leaves, 2 pods × 3 aggregation switches, 3 × 3 cores */
    assert_int_equal(strata_topo_device_count(t), 18 + 6 + 6 + 9);
    assert_near(closed(t), 9 * 25 * GB, 1); /* 2:1 above the aggregation tier */
    agree(t);
}

static strata_topo_server_t small_server(int32_t gpus, int32_t nics, double nvl, double pcie,
                                         double net, int32_t pcie_switches)
{
    strata_topo_server_t s = {
        .name = "box",
        .accels = gpus,
        .scaleup_switches = nvl > 0 ? 1 : 0,
        .scaleup = bw(nvl > 0 ? nvl : 1),
        .nics = nics,
        .pcie = bw(pcie),
        .pcie_switches = pcie_switches,
        .cpus = pcie_switches ? 1 : 0,
        .nic_net = bw(net),
    };
    if (nvl <= 0) s.scaleup = (strata_topo_linkspec_t){0};
    return s;
}

static strata_topo_t *cluster(const strata_topo_server_t *s, int32_t servers, int32_t k,
                              int32_t tiers, bool rail)
{
    strata_topo_fattree_t net = {.k = k, .tiers = tiers};
    strata_topo_t *t = NULL;
    strata_error_t err;
    strata_status_t st = strata_topo_build_cluster(s, servers, &net, rail, NULL, &t, &err);
    if (st) fail_msg("build_cluster: %s", err.msg);
    return t;
}

static void test_exhaustive_cluster(void **state)
{
    (void)state;
    /* 4 servers x 2 GPUs, one NIC each, k = 4 rail-optimised, 2 and 3
     * tiers; NVLink fast: the cut is the network, 2 servers × 2 × 50 */
    strata_topo_server_t s = small_server(2, 2, 450, 64, 50, 0);
    strata_topo_t *t = cluster(&s, 4, 4, 2, true);
    assert_near(closed(t), 200 * GB, 1);
    agree(t);
    agree(cluster(&s, 4, 4, 3, true));
    agree(cluster(&s, 4, 4, 2, false));
    /* PCIe narrower than the NIC: egress 2 × 20 = 40 per server → 80 */
    s = small_server(2, 2, 450, 20, 50, 0);
    t = cluster(&s, 4, 4, 2, true);
    assert_near(closed(t), 80 * GB, 1);
    agree(t);
    /* one NIC for two GPUs behind a PCIe switch with a CPU */
    s = small_server(2, 1, 300, 64, 50, 1);
    agree(cluster(&s, 8, 4, 2, false));
    /* no scale-up at all: GPUs meet only through the NIC */
    s = small_server(2, 2, 0, 64, 50, 0);
    agree(cluster(&s, 4, 4, 2, true));
}

static void test_bound_is_upper(void **state)
{
    (void)state;
    /* partial trees and odd grids have no closed form: AUTO picks
     * exhaustive when small; the bound is never below the exact value */
    strata_topo_linkspec_t l = bw(10);
    strata_topo_fattree_t ft = {.k = 4, .tiers = 3, .endpoints = 11, .link = {&l}};
    strata_topo_t *t;
    assert_int_equal(strata_topo_build_fattree(&ft, NULL, &t, NULL), STRATA_OK);
    strata_topo_bisection_t a, b;
    assert_int_equal(strata_topo_bisection(t, STRATA_BISECT_CLOSED, &a, NULL),
                     STRATA_ERR_UNSUPPORTED);
    assert_int_equal(strata_topo_bisection(t, STRATA_BISECT_AUTO, &a, NULL), STRATA_OK);
    assert_int_equal(a.method, STRATA_BISECT_EXHAUSTIVE);
    assert_int_equal(strata_topo_bisection(t, STRATA_BISECT_BOUND, &b, NULL), STRATA_OK);
    assert_true(b.bw >= a.bw - 1);
    strata_topo_destroy(t);
    int32_t dims[2] = {3, 5};
    assert_int_equal(strata_topo_build_mesh(2, dims, &l, NULL, &t, NULL), STRATA_OK);
    assert_int_equal(strata_topo_bisection(t, STRATA_BISECT_AUTO, &a, NULL), STRATA_OK);
    /* 3×5 mesh (columns of 3), halves of 7 and 8: no straight cut is
     * balanced; the best takes two columns plus the top node of the third,
     * crossing 2 row links + 1 row link + 1 column link = 4 × 10 = 40 */
    assert_near(a.bw, 40 * GB, 1);
    assert_int_equal(strata_topo_bisection(t, STRATA_BISECT_BOUND, &b, NULL), STRATA_OK);
    assert_true(b.bw >= a.bw - 1);
    strata_topo_destroy(t);
    /* too large for exhaustive search */
    dims[0] = dims[1] = 5;
    assert_int_equal(strata_topo_build_mesh(2, dims, &l, NULL, &t, NULL), STRATA_OK);
    assert_int_equal(strata_topo_bisection(t, STRATA_BISECT_EXHAUSTIVE, &a, NULL),
                     STRATA_ERR_RANGE);
    strata_topo_destroy(t);
}

/* ==== Bad input ==== */

static void test_builder_errors(void **state)
{
    (void)state;
    strata_topo_t *t = NULL;
    strata_error_t err;
    strata_topo_linkspec_t l = bw(10), none = {0};
    assert_int_equal(strata_topo_build_ring(2, &l, NULL, &t, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "ring"));
    assert_int_equal(strata_topo_build_ring(8, &none, NULL, &t, &err), STRATA_ERR_INVALID);
    strata_topo_linkspec_t k = strata_topo_linkspec_kind("nvlink4", 18);
    assert_int_equal(strata_topo_build_ring(8, &k, NULL, &t, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "catalog"));
    strata_topo_fattree_t ft = {.k = 5, .tiers = 3, .link = {&l}};
    assert_int_equal(strata_topo_build_fattree(&ft, NULL, &t, &err), STRATA_ERR_INVALID);
    ft.k = 4;
    ft.endpoints = 17; /* k³/4 = 16 */
    assert_int_equal(strata_topo_build_fattree(&ft, NULL, &t, &err), STRATA_ERR_RANGE);
    ft.endpoints = 0;
    ft.oversub[1] = -1;
    assert_int_equal(strata_topo_build_fattree(&ft, NULL, &t, &err), STRATA_ERR_INVALID);
    int32_t dims[2] = {4, 1};
    assert_int_equal(strata_topo_build_torus(2, dims, &l, NULL, &t, &err), STRATA_ERR_INVALID);
    assert_null(t);
}

static void test_graph_errors(void **state)
{
    (void)state;
    strata_topo_t *t;
    strata_error_t err;
    strata_topo_linkspec_t l = bw(10);
    int32_t a, b, c;
    assert_int_equal(strata_topo_create("x", NULL, &t, NULL), STRATA_OK);
    assert_int_equal(strata_topo_finish(t, &err), STRATA_ERR_INVALID); /* no accelerators */
    assert_int_equal(strata_topo_add_device(t, STRATA_DEV_ACCEL, 0, -1, "a", &a, NULL), 0);
    assert_int_equal(strata_topo_add_device(t, STRATA_DEV_ACCEL, 0, -1, "b", &b, NULL), 0);
    assert_int_equal(strata_topo_add_device(t, STRATA_DEV_ACCEL, 0, -1, "c", &c, NULL), 0);
    assert_int_equal(strata_topo_add_device(t, STRATA_DEV_NET_SWITCH, 9, -1, "s", NULL, &err),
                     STRATA_ERR_INVALID);
    assert_int_equal(strata_topo_add_link(t, a, a, &l, NULL, &err), STRATA_ERR_INVALID);
    assert_int_equal(strata_topo_add_link(t, a, 7, &l, NULL, &err), STRATA_ERR_INVALID);
    assert_int_equal(strata_topo_add_link(t, a, b, &l, NULL, NULL), STRATA_OK);
    assert_int_equal(strata_topo_finish(t, &err), STRATA_ERR_INVALID);
    assert_string_equal(err.msg, "topology 'x' is not connected: 'a' cannot reach 'c'");
    strata_topo_destroy(t);
    strata_topo_destroy(NULL);
}

static void test_alloc_failure(void **state)
{
    (void)state;
    /* every allocation of a small fat-tree build failing in turn gives
     * ERR_NOMEM (or success once past the last), never a crash or leak */
    strata_topo_linkspec_t l = bw(10);
    strata_topo_fattree_t ft = {.k = 4, .tiers = 3, .link = {&l}};
    int ok = 0;
    for (long n = 0; n < 400 && !ok; n++) {
        strata_topo_t *t = NULL;
        util_alloc_fail_after(n);
        strata_status_t st = strata_topo_build_fattree(&ft, NULL, &t, NULL);
        util_alloc_fail_after(-1);
        if (st == STRATA_OK)
            ok = 1;
        else
            assert_int_equal(st, STRATA_ERR_NOMEM);
        strata_topo_destroy(t);
    }
    assert_true(ok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring8),
        cmocka_unit_test(test_torus444),
        cmocka_unit_test(test_fattree128),
        cmocka_unit_test(test_exhaustive_direct),
        cmocka_unit_test(test_exhaustive_fattree),
        cmocka_unit_test(test_exhaustive_cluster),
        cmocka_unit_test(test_bound_is_upper),
        cmocka_unit_test(test_builder_errors),
        cmocka_unit_test(test_graph_errors),
        cmocka_unit_test(test_alloc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
