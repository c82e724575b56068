/*
 * route_test.c — routers: path counts and hops against hand arithmetic and
 * an independent BFS written here over the public adjacency, every
 * enumerated path valid and distinct, hash picks spread over the set,
 * cluster routes through the NICs, path figures and bad ids.
 */
#define _GNU_SOURCE
#include "test.h"
#include "topo.h"

#define GB 1e9

/* Independent: BFS distance and number of shortest paths src→dst. */
static int32_t bfs_paths(const strata_topo_t *t, int32_t src, int32_t dst, double *count)
{
    int32_t n = strata_topo_device_count(t), *dist = malloc(n * sizeof(int32_t)),
            *q = malloc(n * sizeof(int32_t)), h = 0, tl = 0;
    double *c = calloc(n, sizeof(double));
    for (int32_t i = 0; i < n; i++)
        dist[i] = -1;
    dist[src] = 0, c[src] = 1, q[tl++] = src;
    while (h < tl) {
        int32_t u = q[h++];
        const int32_t *nb;
        int32_t d = strata_topo_adjacency(t, u, &nb, NULL);
        for (int32_t i = 0; i < d; i++) {
            if (dist[nb[i]] < 0) dist[nb[i]] = dist[u] + 1, q[tl++] = nb[i];
            if (dist[nb[i]] == dist[u] + 1) c[nb[i]] += c[u];
        }
    }
    int32_t r = dist[dst];
    *count = c[dst];
    free(dist), free(q), free(c);
    return r;
}

/* Path of n channels is a walk src → dst; returns a hash of it. */
static uint64_t check_walk(const strata_topo_t *t, int32_t src, int32_t dst, const int32_t *ch,
                           int32_t n)
{
    int32_t at = src;
    uint64_t h = 1469598103934665603ULL;
    for (int32_t i = 0; i < n; i++) {
        assert_int_equal(strata_topo_chan_src(t, ch[i]), at);
        at = strata_topo_chan_dst(t, ch[i]);
        h = (h ^ (uint64_t)ch[i]) * 1099511628211ULL;
    }
    assert_int_equal(at, dst);
    return h;
}

/* Enumerate every path src→dst: count as stated, all walks, all distinct. */
static void check_all_paths(strata_topo_router_t *r, const strata_topo_t *t, int32_t src,
                            int32_t dst, double want_count, int32_t want_hops)
{
    double count = strata_topo_path_count(r, src, dst);
    assert_near(count, want_count, 0);
    assert_int_equal(strata_topo_hops(r, src, dst), want_hops);
    uint64_t seen[256];
    assert_true(count <= 256);
    for (uint64_t k = 0; k < (uint64_t)count; k++) {
        int32_t ch[64], n;
        assert_int_equal(strata_topo_path(r, src, dst, k, ch, 64, &n), STRATA_OK);
        assert_int_equal(n, want_hops);
        seen[k] = check_walk(t, src, dst, ch, n);
        for (uint64_t j = 0; j < k; j++)
            assert_true(seen[j] != seen[k]);
    }
}

static void test_ring(void **state)
{
    (void)state;
    strata_topo_linkspec_t l = strata_topo_linkspec_bw(25 * GB);
    strata_topo_t *t;
    strata_topo_router_t *r;
    assert_int_equal(strata_topo_build_ring(8, &l, NULL, &t, NULL), 0);
    assert_int_equal(strata_topo_router_create(t, &r, NULL), 0);
    check_all_paths(r, t, 0, 4, 2, 4); /* opposite: both ways, 4 hops */
    check_all_paths(r, t, 0, 3, 1, 3);
    check_all_paths(r, t, 1, 7, 1, 2); /* backwards over the wrap */
    check_all_paths(r, t, 5, 5, 1, 0);
    strata_topo_router_destroy(r);
    strata_topo_destroy(t);
}

static void test_torus(void **state)
{
    (void)state;
    strata_topo_linkspec_t l = strata_topo_linkspec_bw(50 * GB);
    int32_t dims[3] = {4, 4, 4};
    strata_topo_t *t;
    strata_topo_router_t *r;
    assert_int_equal(strata_topo_build_torus(3, dims, &l, NULL, &t, NULL), 0);
    assert_int_equal(strata_topo_router_create(t, &r, NULL), 0);
    /* (0,0,0) → (2,2,2) = rank 2 + 4·2 + 16·2 = 42: every dimension ties,
     * 2³ = 8 dimension-order paths of 6 hops */
    check_all_paths(r, t, 0, 42, 8, 6);
    /* (1,0,0) → (0,3,1) = rank 0 + 12 + 16 = 28: 1 + 1 + 1 hops, no tie */
    check_all_paths(r, t, 1, 28, 1, 3);
    /* dimension-order hops equal true shortest distances for all pairs from 0 */
    for (int32_t d = 0; d < 64; d++) {
        double c;
        assert_int_equal(strata_topo_hops(r, 0, d), bfs_paths(t, 0, d, &c));
    }
    strata_topo_router_destroy(r);
    strata_topo_destroy(t);
}

/* A 3-tier k = 4 fat-tree of 50 GB/s links and a router on it. */
static void fattree_k4(strata_topo_t **t, strata_topo_router_t **r)
{
    strata_topo_linkspec_t l = strata_topo_linkspec_bw(50 * GB);
    strata_topo_fattree_t ft = {.k = 4, .tiers = 3, .link = {&l}};
    assert_int_equal(strata_topo_build_fattree(&ft, NULL, t, NULL), 0);
    assert_int_equal(strata_topo_router_create(*t, r, NULL), 0);
}

static void test_fattree(void **state)
{
    (void)state;
    strata_topo_t *t;
    strata_topo_router_t *r;
    fattree_k4(&t, &r);
    /* k = 4: 2 endpoints per leaf, 4 per pod; (k/2)² = 4 paths between
     * pods (6 hops), k/2 = 2 inside a pod (4), 1 on a leaf (2) */
    check_all_paths(r, t, 0, 15, 4, 6);
    check_all_paths(r, t, 0, 2, 2, 4);
    check_all_paths(r, t, 0, 1, 1, 2);
    /* up/down paths of a fat-tree are all its shortest paths: compare */
    for (int32_t a = 0; a < 16; a++)
        for (int32_t b = 0; b < 16; b++) {
            double c;
            int32_t h = bfs_paths(t, a, b, &c);
            assert_int_equal(strata_topo_hops(r, a, b), h);
            assert_near(strata_topo_path_count(r, a, b), c, 0);
        }
    /* hash picks: 400 seeds over the 4 inter-pod paths use every one */
    int used[4] = {0};
    for (uint64_t seed = 0; seed < 400; seed++) {
        int32_t ch[8], n;
        assert_int_equal(strata_topo_path_hash(r, 0, 15, seed, ch, 8, &n), STRATA_OK);
        for (uint64_t k = 0; k < 4; k++) {
            int32_t c2[8], n2;
            strata_topo_path(r, 0, 15, k, c2, 8, &n2);
            if (memcmp(ch, c2, sizeof(int32_t) * 6) == 0) used[k]++;
        }
    }
    for (int k = 0; k < 4; k++)
        assert_true(used[k] > 50); /* ~100 each expected */
    strata_topo_router_destroy(r);
    strata_topo_destroy(t);
}

static void check_split(strata_topo_router_t *r, const strata_topo_t *t, int32_t a, int32_t b);

static void test_cluster(void **state)
{
    (void)state;
    /* 4 servers × 2 GPUs, 2 scale-up switches (each GPU ×3 links), NIC per
     * GPU behind a PCIe switch per GPU pair, rail-optimised k = 4 */
    strata_topo_server_t s = {
        .name = "box",
        .accels = 2,
        .scaleup_switches = 2,
        .scaleup = {NULL, 3, 100 * GB, 1e-7},
        .nics = 2,
        .pcie = {NULL, 1, 60 * GB, 2e-7},
        .pcie_switches = 1,
        .cpus = 1,
        .nic_net = {NULL, 1, 50 * GB, 5e-7},
    };
    strata_topo_fattree_t net = {.k = 4, .tiers = 2};
    strata_topo_t *t;
    strata_topo_router_t *r;
    strata_error_t err;
    assert_int_equal(strata_topo_build_cluster(&s, 4, &net, true, NULL, &t, &err), 0);
    assert_int_equal(strata_topo_router_create(t, &r, NULL), 0);
    int32_t g0 = strata_topo_endpoint(t, 0), g1 = strata_topo_endpoint(t, 1);
    int32_t g2 = strata_topo_endpoint(t, 2), g3 = strata_topo_endpoint(t, 3);
    /* same server: through either scale-up switch, 2 paths of 2 hops */
    check_all_paths(r, t, g0, g1, 2, 2);
    /* server 0 GPU 0 → server 1 GPU 0: same rail leaf:
     * GPU→PCIe sw→NIC→leaf→NIC→PCIe sw→GPU = 6 hops, one path */
    check_all_paths(r, t, g0, g2, 1, 6);
    /* rail 0 → rail 1 of another server: leaf → spine (2 choices) → leaf */
    check_all_paths(r, t, g0, g3, 2, 8);
    int32_t ch[16], n;
    assert_int_equal(strata_topo_path(r, g0, g3, 0, ch, 16, &n), 0);
    /* first hop to the PCIe switch, then the GPU's own NIC */
    strata_topo_device_t d = strata_topo_device(t, strata_topo_chan_dst(t, ch[1]));
    assert_int_equal(d.kind, STRATA_DEV_NIC);
    assert_int_equal(strata_topo_chan_dst(t, ch[1]), strata_topo_device(t, g0).nic);
    double bw, lat;
    strata_topo_path_figures(t, ch, n, &bw, &lat);
    /* bottleneck: the 50 GB/s NIC links; latency 4 PCIe + 4 network hops:
     * 4 × 0.2 + 4 × 0.5 = 2.8 us */
    assert_near(bw, 50 * GB, 1);
    assert_near(lat, 2.8e-6, 1e-12);
    /* too small a buffer: ERR_RANGE and the needed length */
    assert_int_equal(strata_topo_path(r, g0, g3, 0, ch, 3, &n), STRATA_ERR_RANGE);
    assert_int_equal(n, 8);
    assert_int_equal(strata_topo_path(r, g0, 9999, 0, ch, 16, &n), STRATA_ERR_INVALID);
    assert_near(strata_topo_path_count(r, -1, g0), 0, 0);
    assert_int_equal(strata_topo_hops(r, g0, 9999), -1);
    /* GPU → PCIe switch → NIC → leaf → spine (2) → leaf → NIC → GPU */
    check_split(r, t, g0, g3);
    check_split(r, t, g0, g2);
    /* inside a server (no up/down segment): not a split route */
    assert_int_equal(strata_topo_path_split(r, g0, g1, ch, &bw, 0, &bw, &lat), -1);
    strata_topo_router_destroy(r);
    strata_topo_destroy(t);
}

/* The router keeps the last pair's plan (route.c): repeated and
 * interleaved queries on one router must give exactly the paths a fresh
 * router gives each pair, including after another pair's up/down search
 * replaced the state the memo's extraction reads. */
static void test_plan_memo(void **state)
{
    (void)state;
    strata_topo_t *t;
    strata_topo_router_t *r;
    fattree_k4(&t, &r);
    static const int32_t pairs[][2] = {{0, 15}, {0, 15}, {3, 12}, {0, 15}, {0, 1}, {0, 15}, {5, 9}};
    for (size_t q = 0; q < sizeof(pairs) / sizeof(pairs[0]); q++) {
        int32_t a = pairs[q][0], b = pairs[q][1];
        double count = strata_topo_path_count(r, a, b);
        for (uint64_t k = 0; k < (uint64_t)count; k++) {
            strata_topo_router_t *fresh;
            int32_t c1[8], c2[8], n1, n2;
            assert_int_equal(strata_topo_router_create(t, &fresh, NULL), 0);
            assert_int_equal(strata_topo_path(r, a, b, k, c1, 8, &n1), STRATA_OK);
            assert_int_equal(strata_topo_path(fresh, a, b, k, c2, 8, &n2), STRATA_OK);
            assert_int_equal(n1, n2);
            assert_memory_equal(c1, c2, (size_t)n1 * sizeof(int32_t));
            strata_topo_router_destroy(fresh);
            /* another pair's search between two paths of this pair */
            if (k == 0) assert_true(strata_topo_hops(r, 2, 14) > 0);
        }
    }
    strata_topo_router_destroy(r);
    strata_topo_destroy(t);
}

/* strata_topo_path_split's fractions against listing every path: the
 * share of the paths src → dst crossing each channel, on a 3-tier fat-tree
 * (pod to pod across the core: the probe meeting; inside a pod; on one
 * leaf) and a rail-optimised cluster (GPU → NIC → fabric → NIC → GPU). */
static void check_split(strata_topo_router_t *r, const strata_topo_t *t, int32_t a, int32_t b)
{
    int32_t nch = 2 * strata_topo_link_count(t), chans[256], ch[32], n;
    double frac[256], bw, lat, want[1024] = {0};
    assert_true(nch <= 1024);
    int32_t ns = strata_topo_path_split(r, a, b, chans, frac, 256, &bw, &lat);
    assert_true(ns > 0 && ns <= 256);
    double count = strata_topo_path_count(r, a, b), bw0, lat0;
    for (uint64_t k = 0; k < (uint64_t)count; k++) {
        assert_int_equal(strata_topo_path(r, a, b, k, ch, 32, &n), STRATA_OK);
        for (int32_t h = 0; h < n; h++)
            want[ch[h]] += 1 / count;
        strata_topo_path_figures(t, ch, n, &bw0, &lat0);
        assert_true(bw0 == bw && fabs(lat0 - lat) <= 1e-15);
    }
    double got[1024] = {0};
    for (int32_t i = 0; i < ns; i++)
        got[chans[i]] += frac[i];
    for (int32_t c = 0; c < nch; c++)
        if (fabs(got[c] - want[c]) > 1e-12)
            fail_msg("%d -> %d channel %d: split %.15g, paths %.15g", a, b, c, got[c], want[c]);
    /* too little room: the count needed, nothing beyond max written */
    assert_int_equal(strata_topo_path_split(r, a, b, chans, frac, 1, &bw, &lat), ns);
}

static void test_path_split(void **state)
{
    (void)state;
    strata_topo_t *t;
    strata_topo_router_t *r;
    fattree_k4(&t, &r);
    check_split(r, t, 0, 15); /* across the core: 4 paths */
    check_split(r, t, 15, 0);
    check_split(r, t, 0, 2); /* inside a pod: 2 */
    check_split(r, t, 0, 1); /* one leaf: 1 */
    strata_topo_router_destroy(r);
    strata_topo_destroy(t);
    strata_topo_linkspec_t l = strata_topo_linkspec_bw(50 * GB);
    strata_topo_fattree_t ft = {.k = 8, .tiers = 3, .link = {&l}};
    assert_int_equal(strata_topo_build_fattree(&ft, NULL, &t, NULL), 0);
    assert_int_equal(strata_topo_router_create(t, &r, NULL), 0);
    check_split(r, t, 0, 127); /* 16 paths across the core */
    check_split(r, t, 5, 9);
    strata_topo_router_destroy(r);
    strata_topo_destroy(t);
}

static void test_general_graph(void **state)
{
    (void)state;
    /* a hand-made graph with no shape: 4-cycle a-b-c-d plus chord a-c
     * avoided; two shortest a→c paths via b and d */
    strata_topo_t *t;
    strata_topo_router_t *r;
    strata_topo_linkspec_t l = strata_topo_linkspec_bw(10 * GB);
    int32_t v[5];
    assert_int_equal(strata_topo_create("square", NULL, &t, NULL), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(strata_topo_add_device(t, STRATA_DEV_ACCEL, 0, -1, NULL, &v[i], NULL), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(strata_topo_add_link(t, v[i], v[(i + 1) % 4], &l, NULL, NULL), 0);
    assert_int_equal(strata_topo_finish(t, NULL), 0);
    assert_int_equal(strata_topo_router_create(t, &r, NULL), 0);
    check_all_paths(r, t, v[0], v[2], 2, 2);
    check_all_paths(r, t, v[0], v[1], 1, 1);
    assert_int_equal(strata_topo_link_between(t, v[0], v[3]), 3);
    assert_int_equal(strata_topo_link_between(t, v[0], v[2]), -1);
    strata_topo_router_destroy(r);
    strata_topo_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring),          cmocka_unit_test(test_torus),
        cmocka_unit_test(test_fattree),       cmocka_unit_test(test_cluster),
        cmocka_unit_test(test_general_graph), cmocka_unit_test(test_plan_memo),
        cmocka_unit_test(test_path_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
