/*
 * metrics_test.c — metrics against hand arithmetic and against a brute
 * force over every endpoint pair with the router; builder specs (with the
 * real catalog and with explicit bandwidths) and their errors.
 */
#define _GNU_SOURCE
#include "test.h"
#include "topo.h"
#include "brute_hops_test.h"

#define GB 1e9

static strata_topo_t *spec(const char *s, const strata_link_catalog_t *cat)
{
    strata_topo_t *t = NULL;
    strata_error_t err;
    if (strata_topo_load_spec(s, cat, &t, &err)) fail_msg("%s: %s", s, err.msg);
    return t;
}

static strata_topo_metrics_t metrics(const strata_topo_t *t)
{
    strata_topo_metrics_t m;
    strata_error_t err;
    if (strata_topo_metrics(t, &m, &err)) fail_msg("metrics: %s", err.msg);
    return m;
}

static void check_against_brute(const strata_topo_t *t)
{
    strata_topo_metrics_t m = metrics(t);
    double avg;
    int32_t diam;
    brute_hops(t, &avg, &diam);
    assert_true(m.hops_exact);
    assert_near(m.avg_hops, avg, 1e-9);
    assert_int_equal(m.diameter, diam);
}

static void test_ring_fattree(void **state)
{
    (void)state;
    strata_topo_t *t = spec("ring:8,bw=25", NULL);
    strata_topo_metrics_t m = metrics(t);
    /* hops from one node: 1+2+3+4+3+2+1 = 16 over 7 peers */
    assert_int_equal(m.diameter, 4);
    assert_near(m.avg_hops, 16.0 / 7, 1e-12);
    assert_near(m.injection[0], 50 * GB, 1); /* two 25 GB/s links each */
    assert_int_equal(m.count[STRATA_DEV_ACCEL], 8);
    assert_near(m.bisection.bw, 50 * GB, 1);
    strata_topo_destroy(t);

    t = spec("fattree:k=8,bw=50,oversub=1:4", NULL);
    m = metrics(t);
    /* from one endpoint: 3 on its leaf (2 hops), 12 in its pod (4), 112
     * elsewhere (6): (6 + 48 + 672) / 127 */
    assert_near(m.avg_hops, 726.0 / 127, 1e-12);
    assert_int_equal(m.diameter, 6);
    assert_int_equal(m.tiers, 4);
    assert_int_equal(m.count[STRATA_DEV_NET_SWITCH], 80);
    assert_near(m.injection[1], 50 * GB, 1);
    assert_near(m.injection[2], 50 * GB, 1);
    assert_near(m.injection[3], 12.5 * GB, 1); /* 50 / 4 above the aggregation tier */
    assert_near(m.oversub[1], 1, 1e-12);
    assert_near(m.oversub[2], 4, 1e-12);
    assert_near(m.oversub[3], 0, 0); /* top tier: nothing above */
    assert_near(m.bisection.bw, 800 * GB, 1);
    check_against_brute(t);
    strata_topo_destroy(t);
}

static void test_brute_force_agreement(void **state)
{
    (void)state;
    const char *specs[] = {"torus:4x4x2,bw=10",
                           "mesh:3x5,bw=10",
                           "full:6,bw=10",
                           "switch:7,bw=10",
                           "fattree:k=4,tiers=3,n=11,bw=10",
                           "fattree:k=6,tiers=2,bw=10"};
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        strata_topo_t *t = spec(specs[i], NULL);
        check_against_brute(t);
        strata_topo_destroy(t);
    }
}

static void test_clusters_with_catalog(void **state)
{
    (void)state;
    strata_link_catalog_t *cat;
    strata_error_t err;
    assert_int_equal(strata_link_catalog_load(NULL, &cat, &err), STRATA_OK);
    const strata_link_t *nvl = strata_link_find(cat, "nvlink4");
    const strata_link_t *ndr = strata_link_find(cat, "ib-ndr");
    assert_non_null(nvl);
    assert_non_null(ndr);
    /* a ring with the catalog's default nvlink4 link: bisection 2 links */
    strata_topo_t *t = spec("ring:8", cat);
    assert_near(metrics(t).bisection.bw, 2 * nvl->bw_dir, 1);
    strata_topo_destroy(t);
    /* rail-optimised, 4 servers × 8: 32 NICs fit one 64-port switch */
    t = spec("railft:servers=4,gpus=8", cat);
    assert_int_equal(metrics(t).count[STRATA_DEV_NET_SWITCH], 1);
    /* half the servers × 8 NDR ports (PCIe 5 x16 is wider than NDR) */
    assert_near(metrics(t).bisection.bw, 2 * 8 * ndr->bw_dir, 1);
    strata_topo_destroy(t);
    /* forced to two tiers: 32 GPUs, 32 NICs, 4 scale-up fabrics, 8 rail
     * leaves of 4 NICs each (one block), so 4 spines keep it non-blocking */
    t = spec("railft:servers=4,gpus=8,tiers=2", cat);
    strata_topo_metrics_t m = metrics(t);
    assert_int_equal(m.count[STRATA_DEV_ACCEL], 32);
    assert_int_equal(m.count[STRATA_DEV_NIC], 32);
    assert_int_equal(m.count[STRATA_DEV_SCALEUP_SWITCH], 4);
    assert_int_equal(m.count[STRATA_DEV_NET_SWITCH], 12);
    assert_near(m.oversub[1], 1, 1e-12);
    assert_int_equal(m.bisection.method, STRATA_BISECT_CLOSED);
    assert_near(m.injection[0], 18 * nvl->bw_dir, 1); /* 18 NVLink4 links */
    assert_near(m.injection[1], ndr->bw_dir, 1);      /* one NDR port per GPU */
    check_against_brute(t);
    strata_topo_destroy(t);
    /* complete rail tree, 3 tiers, k = 8: blocks of 4 servers × 4 rails
     * fill a pod; 16 servers → 4 pods; ranks equivalent by rail */
    t = spec("railft:servers=16,gpus=4,k=8,tiers=3", cat);
    m = metrics(t);
    assert_true(strstr(m.hops_how, "symmetry") != NULL);
    assert_int_equal(m.bisection.method, STRATA_BISECT_CLOSED);
    check_against_brute(t);
    strata_topo_destroy(t);
    strata_link_catalog_destroy(cat);
}

/* A cluster without accelerators (cpu-cluster:4: one CPU and one NIC per
 * server, 4 servers on a fat-tree): its endpoints are the 4 CPUs, counted
 * and printed as cpu, never accel; a GPU server keeps accel and cpu apart
 * (dgx-h100: 8 accel, 2 cpu). */
static void test_cpu_endpoints(void **state)
{
    (void)state;
    strata_link_catalog_t *cat;
    strata_error_t err;
    assert_int_equal(strata_link_catalog_load(NULL, &cat, &err), STRATA_OK);
    strata_topo_t *t = spec("cpu-cluster:4", cat);
    strata_topo_metrics_t m = metrics(t);
    assert_int_equal(m.endpoints, 4);
    assert_int_equal(m.count[STRATA_DEV_CPU], 4);
    assert_int_equal(m.count[STRATA_DEV_ACCEL], 0);
    assert_int_equal(m.count[STRATA_DEV_NIC], 4);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(strata_topo_print(t, false, f, &err), STRATA_OK);
    fclose(f);
    assert_non_null(strstr(buf, ": cpu 4 nic 4 "));
    assert_null(strstr(buf, "accel"));
    free(buf);
    strata_topo_destroy(t);
    t = spec("dgx-h100", cat);
    m = metrics(t);
    assert_int_equal(m.count[STRATA_DEV_ACCEL], 8);
    assert_int_equal(m.count[STRATA_DEV_CPU], 2);
    strata_topo_destroy(t);
    strata_link_catalog_destroy(cat);
}

static void test_spec_errors(void **state)
{
    (void)state;
    struct {
        const char *spec, *msg;
        strata_status_t st;
    } bad[] = {
        {"ring:", "expected a size", STRATA_ERR_INVALID},
        {"ring:x", "expected a count from 0 to 16777216, got 'x'", STRATA_ERR_INVALID},
        {"ring:2,bw=10", "ring: 2 accelerators", STRATA_ERR_INVALID},
        {"torus:4x4y,bw=10", "expected dimensions like 4x4x4, got '4x4y'", STRATA_ERR_INVALID},
        {"torus:4x4x4x4,bw=10", "expected dimensions", STRATA_ERR_INVALID},
        {"fattree:k=8,foo=1", "unknown option 'foo'", STRATA_ERR_INVALID},
        {"fattree:k=8,oversub=0.5", "oversub expects ratios >= 1", STRATA_ERR_INVALID},
        {"fattree:k=7,bw=1", "radix k=7 must be even", STRATA_ERR_INVALID},
        {"fattree:8", "expected key=value, got '8'", STRATA_ERR_INVALID},
        {"ring:8,bw=-1", "bw expects GB/s", STRATA_ERR_INVALID},
        {"ring:8", "needs the link catalog", STRATA_ERR_INVALID},
        {"railft:servers=4", "railft needs servers=S and gpus=G", STRATA_ERR_INVALID},
        {"nosuch", "unknown cluster 'nosuch'", STRATA_ERR_NOT_FOUND},
        {"", "empty cluster spec", STRATA_ERR_INVALID},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        strata_topo_t *t = NULL;
        strata_error_t err;
        strata_status_t st = strata_topo_load_spec(bad[i].spec, NULL, &t, &err);
        if (st != bad[i].st || !strstr(err.msg, bad[i].msg))
            fail_msg("'%s': status %d, message '%s'", bad[i].spec, st, err.msg);
        assert_null(t);
    }
}

static void test_alloc_failure(void **state)
{
    (void)state;
    /* every allocation failing in turn, while building a cluster from a
     * spec and while computing its metrics (router, sweeps, max-flow):
     * ERR_NOMEM or success, never a crash or a leak (asan build) */
    int built = 0, measured = 0;
    strata_link_catalog_t *cat;
    assert_int_equal(strata_link_catalog_load(NULL, &cat, NULL), STRATA_OK);
    for (long n = 0; n < 2000 && !(built && measured); n++) {
        strata_topo_t *t = NULL;
        util_alloc_fail_after(n);
        strata_status_t st =
            strata_topo_load_spec("railft:servers=5,gpus=2,k=4,bw=10", cat, &t, NULL);
        util_alloc_fail_after(-1);
        if (st) {
            assert_int_equal(st, STRATA_ERR_NOMEM);
            continue;
        }
        built = 1;
        strata_topo_metrics_t m;
        util_alloc_fail_after(n);
        st = strata_topo_metrics(t, &m, NULL);
        util_alloc_fail_after(-1);
        if (st)
            assert_int_equal(st, STRATA_ERR_NOMEM);
        else
            measured = 1;
        strata_topo_destroy(t);
    }
    strata_link_catalog_destroy(cat);
    assert_true(built && measured);
}

/* Links of many kinds in turn, two of each in a row — more kinds than the
 * build remembers (graph.c keeps 8), then the first ones again once
 * forgotten, and pcie5 spelled in capitals — each carry their own catalog
 * row's figures: the bandwidth, latency and SM-store share read here
 * straight from the catalog (pcie5's share is 0.9, link/derive_test.c). */
static void test_link_kinds_in_turn(void **state)
{
    (void)state;
    strata_link_catalog_t *cat = NULL;
    strata_error_t err;
    assert_int_equal(strata_link_catalog_load(NULL, &cat, &err), STRATA_OK);
    const strata_link_t *rows[12];
    int nk = 0;
    rows[nk++] = strata_link_find(cat, "pcie5");
    assert_non_null(rows[0]);
    for (size_t i = 0; i < strata_link_catalog_count(cat) && nk < 12; i++) {
        const strata_link_t *r = strata_link_catalog_at(cat, i);
        if (r != rows[0] && r->full_duplex && r->bw_dir > 0) rows[nk++] = r;
    }
    assert_int_equal(nk, 12);
    enum { N = 50 };
    strata_topo_t *t = NULL;
    assert_int_equal(strata_topo_create("kinds", cat, &t, &err), STRATA_OK);
    int32_t dev[N + 1];
    for (int i = 0; i <= N; i++) {
        char name[16];
        snprintf(name, sizeof(name), "g%d", i);
        assert_int_equal(strata_topo_add_device(t, STRATA_DEV_ACCEL, 0, -1, name, &dev[i], &err),
                         STRATA_OK);
    }
    for (int i = 0; i < N; i++) {
        const char *kind = i >= 48 ? "PCIE5" : rows[i / 2 % 12]->id;
        strata_topo_linkspec_t l = strata_topo_linkspec_kind(kind, 1);
        assert_int_equal(strata_topo_add_link(t, dev[i], dev[i + 1], &l, NULL, &err), STRATA_OK);
    }
    assert_int_equal(strata_topo_finish(t, &err), STRATA_OK);
    for (int i = 0; i < N; i++) {
        const strata_link_t *r = rows[i / 2 % 12];
        strata_topo_link_t got = strata_topo_link(t, i);
        assert_true(got.bw_dir == r->bw_dir && got.latency == r->latency);
        assert_true(got.store_share == strata_link_sm_store_share(r));
    }
    static const int pcie5[] = {0, 1, 24, 25, 48, 49}; /* first, once forgotten, PCIE5 */
    for (size_t i = 0; i < sizeof(pcie5) / sizeof(pcie5[0]); i++)
        assert_true(fabs(strata_topo_link(t, pcie5[i]).store_share - 0.9) < 1e-12);
    strata_topo_destroy(t);
    strata_link_catalog_destroy(cat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_fattree),          cmocka_unit_test(test_brute_force_agreement),
        cmocka_unit_test(test_clusters_with_catalog), cmocka_unit_test(test_spec_errors),
        cmocka_unit_test(test_alloc_failure),         cmocka_unit_test(test_cpu_endpoints),
        cmocka_unit_test(test_link_kinds_in_turn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
