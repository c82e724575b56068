/*
 * meshring_test.c — the rings of switchless meshes (meshring.c) and the
 * ring schedule that runs them (ring.c, params rings / ring_order):
 *  - how many arc-disjoint directed rings each mesh gives, derived by hand
 *    (below), each ring checked independently: a permutation whose every
 *    hop is a link of the topology, no link carrying more rings per
 *    direction than it has lanes;
 *  - the symbolic verifier proves every collective the ring implements
 *    correct over hand-made DGX-1 rings and over the rings found, on one
 *    server and over two;
 *  - the cost model's ring on a mesh: K rings at once, by hand;
 *  - bad orders are refused with a message.
 */
#define _GNU_SOURCE
#include "test.h"
#include "test_catalog.h"
#include "sched.h"

#include <math.h>
#include <string.h>

#define KL (STRATA_MESH_RINGS_MAX * STRATA_MESH_MEMBERS_MAX)

/* Lanes from endpoint u to endpoint v (0: no direct link). */
static int lanes(const strata_topo_t *t, int32_t u, int32_t v)
{
    const int32_t *nbr, *chan;
    int32_t du = strata_topo_endpoint(t, u), dv = strata_topo_endpoint(t, v);
    int32_t deg = strata_topo_adjacency(t, du, &nbr, &chan);
    int m = 0;
    for (int32_t i = 0; i < deg; i++)
        if (nbr[i] == dv) m += strata_topo_link(t, strata_topo_chan_link(chan[i])).mult;
    return m;
}

/* Rings of `spec` (one server / direct network of L ranks), checked as the
 * file comment says; returns how many. */
static uint32_t rings_of(const char *spec, uint32_t L, uint16_t *order, double *lane)
{
    strata_topo_t *t;
    strata_error_t err;
    if (strata_topo_load_spec(spec, cat, &t, &err)) fail_msg("%s", err.msg);
    assert_int_equal(strata_topo_endpoint_count(t), L);
    uint32_t k = strata_coll_mesh_rings(t, NULL, L, 0, order, lane);
    int used[STRATA_MESH_MEMBERS_MAX][STRATA_MESH_MEMBERS_MAX] = {{0}};
    for (uint32_t q = 0; q < k; q++) {
        uint32_t seen = 0;
        for (uint32_t l = 0; l < L; l++) {
            uint32_t u = order[q * L + l], v = order[q * L + (l + 1) % L];
            assert_true(u < L && !(seen >> u & 1));
            seen |= 1u << u;
            assert_true(lanes(t, (int32_t)u, (int32_t)v) > 0); /* a hop is a link */
            used[u][v]++;
        }
    }
    for (uint32_t u = 0; u < L; u++)
        for (uint32_t v = 0; v < L; v++)
            assert_true(used[u][v] <= lanes(t, (int32_t)u, (int32_t)v));
    strata_topo_destroy(t);
    return k;
}

/* By hand:
 *  - full mesh of 8 (MI300X's xGMI, Ascend 910B's HCCS, full:8): 7 links
 *    per GPU, 7 lanes out and 7 in, so at most 7 rings; the complete
 *    symmetric digraph on 8 vertices decomposes into 7 directed
 *    Hamiltonian cycles (Tillson 1980), so 7.
 *  - full mesh of 4: at most 3, but K*4 has no decomposition (Tillson: n =
 *    4 and 6 are the exceptions); 0-1-2-3 and its reverse give 2.
 *  - DGX-1 cube-mesh: 6 lanes per GPU; the doubled links form the cycle
 *    0-3-2-1-5-6-7-4 (2 lanes each way: 4 rings), the single links
 *    0-1-3-7-5-4-6-2 (2 more), so 6.
 *  - ring of 8: one cycle, both directions: 2. 4x4 torus: 4 links per
 *    chip; a 2D torus splits into 2 Hamiltonian cycles, each both ways: 4.
 *  - NVSwitch (dgx-h100) and PCIe (pcie-8gpu) servers: no direct links: 0. */
static void test_ring_counts(void **state)
{
    (void)state;
    uint16_t order[KL];
    double lane = 0;
    assert_int_equal(rings_of("full:8", 8, order, &lane), 7);
    assert_int_equal(rings_of("mi300x", 8, order, &lane), 7);
    assert_int_equal(rings_of("ascend-910b", 8, order, &lane), 7);
    assert_int_equal(rings_of("full:4", 4, order, &lane), 2);
    assert_int_equal(rings_of("dgx-1v", 8, order, &lane), 6);
    assert_int_equal(rings_of("ring:8", 8, order, &lane), 2);
    assert_int_equal(rings_of("torus:4x4", 16, order, &lane), 4);
    assert_int_equal(rings_of("dgx-h100", 8, order, &lane), 0);
    assert_int_equal(rings_of("pcie-8gpu", 8, order, &lane), 0);
    /* two DGX-1 servers: the rings of one server, both wired alike */
    strata_topo_t *t;
    strata_error_t err;
    if (strata_topo_load_spec("dgx-1v:2", cat, &t, &err)) fail_msg("%s", err.msg);
    assert_int_equal(strata_coll_mesh_rings(t, NULL, 16, 8, order, &lane), 6);
    assert_int_equal(strata_coll_mesh_rings(t, NULL, 16, 0, order, &lane), 0); /* not one server */
    strata_topo_destroy(t);
}

/* DGX-1 rings by hand (test_ring_counts): the doubled cycle twice each
 * way, the single cycle once each way. */
static const uint16_t dgx1[6 * 8] = {
    0, 3, 2, 1, 5, 6, 7, 4, 0, 3, 2, 1, 5, 6, 7, 4, 0, 4, 7, 6, 5, 1, 2, 3,
    0, 4, 7, 6, 5, 1, 2, 3, 0, 1, 3, 7, 5, 4, 6, 2, 0, 2, 6, 4, 5, 7, 3, 1,
};

static void verify_rings(strata_coll_t c, uint32_t P, uint32_t group, uint32_t K,
                         const uint16_t *order, uint64_t n, uint32_t chunks)
{
    strata_sched_params_t p = {.coll = c,
                               .algo = STRATA_ALGO_RING,
                               .nranks = P,
                               .count = n,
                               .elem_size = 4,
                               .root = P - 3,
                               .chunks = chunks,
                               .group = group,
                               .rings = K,
                               .ring_order = order};
    strata_sched_t *s = NULL;
    strata_error_t err;
    if (strata_sched_create(&p, &s, &err)) fail_msg("create: %s", err.msg);
    assert_int_equal(strata_sched_params(s)->rings, K);
    if (strata_sched_verify(s, &err))
        fail_msg("%s %s P=%u group=%u K=%u n=%llu chunks=%u", strata_coll_name(c), err.msg, P,
                 group, K, (unsigned long long)n, chunks);
    strata_sched_destroy(s);
}

static void test_verify_mesh_rings(void **state)
{
    (void)state;
    const strata_coll_t colls[] = {STRATA_COLL_ALLREDUCE, STRATA_COLL_REDUCE_SCATTER,
                                   STRATA_COLL_ALLGATHER, STRATA_COLL_BROADCAST,
                                   STRATA_COLL_REDUCE};
    /* counts: one element, fewer than the channels, not divisible by them */
    const uint64_t ns[] = {1, 7, 97};
    uint16_t found[KL];
    uint32_t kf = rings_of("full:8", 8, found, &(double){0});
    for (size_t c = 0; c < 5; c++) {
        for (size_t i = 0; i < 3; i++)
            for (uint32_t ch = 1; ch <= 3; ch += 2) {
                verify_rings(colls[c], 8, 0, 6, dgx1, ns[i], ch);   /* one server */
                verify_rings(colls[c], 16, 8, 6, dgx1, ns[i], ch);  /* two servers */
                verify_rings(colls[c], 8, 0, kf, found, ns[i], ch); /* found on full:8 */
            }
        verify_rings(colls[c], 24, 8, 6, dgx1, 293, 2); /* three servers, several per block */
    }
}

/* The model's ring on a mesh: K rings, each step a block of n/(K P) on
 * each ring's own lane at once, so on one server of P ranks
 *   t = 2(P-1) (alpha + n / (P K B_lane)),  busbw = 2(P-1)/P n / t.
 * MI300X: K = 7 over xGMI lanes; DGX-1: K = 6 over NVLink2 lanes. The lane
 * figure is the topology's link (bw_dir / mult), read back here. */
static void test_mesh_cost(void **state)
{
    (void)state;
    const char *specs[] = {"mi300x", "dgx-1v"};
    const double Ks[] = {7, 6};
    for (int i = 0; i < 2; i++) {
        strata_topo_t *t;
        strata_error_t err;
        strata_coll_machine_t m;
        if (strata_topo_load_spec(specs[i], cat, &t, &err)) fail_msg("%s", err.msg);
        assert_int_equal(strata_coll_machine_from_topo(t, cat, &m, &err), STRATA_OK);
        strata_topo_link_t lk = {0};
        for (int32_t l = 0; l < strata_topo_link_count(t); l++) {
            lk = strata_topo_link(t, l);
            if (strata_topo_device(t, lk.a).kind == STRATA_DEV_ACCEL &&
                strata_topo_device(t, lk.b).kind == STRATA_DEV_ACCEL && lk.mult == 1)
                break;
        }
        strata_topo_destroy(t);
        assert_int_equal(m.mesh_rings, (uint32_t)Ks[i]);
        assert_rel(m.bw_mesh_lane, lk.bw_dir, 1e-12);
        double n = 1 << 30, P = 8, K = Ks[i];
        strata_coll_cost_t c;
        assert_int_equal(strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, n, &c, &err),
                         STRATA_OK);
        double beta = 2 * (P - 1) * n / (P * K * lk.bw_dir);
        assert_rel(c.beta, beta, 1e-12);
        assert_rel(c.alpha, 2 * (P - 1) * m.lat_intra, 1e-12);
        /* busbw within alpha's share of K lanes: 448 GB/s for MI300X's
         * 7 x 64, 120 for DGX-1's 6 x 20.0 */
        assert_rel(c.busbw, K * lk.bw_dir, 2 * (P - 1) * m.lat_intra / c.time + 1e-12);
        /* one ring (no mesh) is K times slower in its bandwidth term */
        m.mesh_rings = 0;
        strata_coll_cost_t one;
        assert_int_equal(
            strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, n, &one, &err),
            STRATA_OK);
        assert_rel(one.beta, beta * K * lk.bw_dir / m.bw_intra, 1e-9);
    }
}

/* The schedule follows the orders: in phase 0 of an allreduce on one
 * DGX-1 (6 rings, no rotation), rank 0 sends once per ring to its
 * successor in that ring, 3, 3, 4, 4, 1, 2 (dgx1 above), and on two
 * servers channel (ring q, rotation h) starts its server walk at place h:
 * rank 0 sits at place 0 of every order, so for h = 0 it sends to the
 * same successors; for h = 1 rank 0 is the last of the rotated walk and
 * sends to the next server's first, rank 8 + order[1] = 11, 11, 12, 12,
 * 9, 10. */
static void test_orders_followed(void **state)
{
    (void)state;
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_RING,
                               .nranks = 8,
                               .count = 8 * 6 * 4,
                               .elem_size = 4,
                               .rings = 6,
                               .ring_order = dgx1};
    strata_sched_t *s = NULL;
    strata_error_t err;
    strata_step_t st[128];
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_OK);
    uint32_t n = strata_sched_phase_steps(s, 0, 0, st, 128), k = 0;
    const int32_t want[6] = {3, 3, 4, 4, 1, 2};
    for (uint32_t i = 0; i < n; i++)
        if (st[i].op == STRATA_STEP_SEND) assert_int_equal(st[i].peer, want[k++]);
    assert_int_equal(k, 6);
    strata_sched_destroy(s);
    p.nranks = 16, p.group = 8, p.count = 16 * 48;
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_OK);
    n = strata_sched_phase_steps(s, 0, 0, st, 128), k = 0;
    const int32_t want1[6] = {11, 11, 12, 12, 9, 10};
    for (uint32_t i = 0; i < n; i++) {
        if (st[i].op != STRATA_STEP_SEND) continue;
        uint32_t q = k / 8, h = k % 8;
        if (h == 0) assert_int_equal(st[i].peer, want[q]);
        if (h == 1) assert_int_equal(st[i].peer, want1[q]);
        k++;
    }
    assert_int_equal(k, 48);
    strata_sched_destroy(s);
}

static void test_bad_orders(void **state)
{
    (void)state;
    const uint16_t dup[8] = {0, 1, 2, 3, 4, 5, 6, 6}, big[8] = {0, 1, 2, 3, 4, 5, 6, 8};
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_RING,
                               .nranks = 8,
                               .count = 64,
                               .elem_size = 4,
                               .rings = 1,
                               .ring_order = dup};
    strata_error_t err;
    strata_sched_t *s = NULL;
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "not an order of 8 local ranks (place 7: 6)"));
    p.ring_order = big;
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_ERR_INVALID);
    p.rings = STRATA_MESH_RINGS_MAX + 1;
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "at most 16"));
    /* no orders: one ring, rings reads back 0 */
    p.rings = 3, p.ring_order = NULL;
    assert_int_equal(strata_sched_create(&p, &s, &err), STRATA_OK);
    assert_int_equal(strata_sched_params(s)->rings, 0);
    strata_sched_destroy(s);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_counts), cmocka_unit_test(test_verify_mesh_rings),
        cmocka_unit_test(test_mesh_cost),   cmocka_unit_test(test_orders_followed),
        cmocka_unit_test(test_bad_orders),
    };
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, setup, teardown);
}
