/*
 * nccl_test.c — NCCL's selection (nccl.c): its tuning model's latencies
 * checked against the worked examples of shared/reference/nccl.md §2.6
 * (arithmetic from NCCL's published constants, done by hand there), its
 * bandwidths derived by hand below, the choices it makes, and strata's
 * price of a choice under a protocol.
 */
#define _GNU_SOURCE
#include "test.h"
#include "sched.h"

#include <math.h>

/* One server of P NVLink4 (Hopper) ranks at `up` B/s per GPU. */
static strata_coll_machine_t hopper(uint32_t P, uint32_t servers, double up, bool nvls)
{
    strata_coll_machine_t m = {.nranks = P * servers,
                               .per_server = P,
                               .servers = servers,
                               .nics = P,
                               .bw_intra = up,
                               .bw_nic = 49.7e9,
                               .lat_intra = 2e-6,
                               .lat_inter = 6e-6,
                               .eta_intra = 0.8,
                               .reduce_bw = 1e30,
                               .switch_reduce = nvls};
    snprintf(m.intra_kind, sizeof(m.intra_kind), "nvlink4");
    snprintf(m.inter_kind, sizeof(m.inter_kind), "ib-ndr");
    return m;
}

enum { TREE, RING, CN_DIRECT, CN_CHAIN, NVLS, NVLS_TREE, PAT };
enum { LL, LL128, SIMPLE };

static double us(const strata_coll_machine_t *m, int a, int p, double bytes)
{
    return strata_nccl_model_time(m, STRATA_COLL_ALLREDUCE, a, p, bytes) * 1e6;
}

/* nccl.md §2.6: latencies at 0 bytes. */
static void test_latency_examples(void **state)
{
    (void)state;
    strata_coll_machine_t one = hopper(8, 1, 360e9, false);
    /* 8 GPUs, 1 node, Ring: LL 6.6 + 14 x 0.6 = 15.0; LL128 14.0 + 14 x 1.9 = 40.6;
     * Simple 8.4 + 14 x 3.4 = 56.0 */
    assert_rel(us(&one, RING, LL, 0), 15.0, 1e-9);
    assert_rel(us(&one, RING, LL128, 0), 40.6, 1e-9);
    assert_rel(us(&one, RING, SIMPLE, 0), 56.0, 1e-9);
    /* Tree Simple 8.4 + 2 x 7 x 4.0 = 64.4; LL 6.8 + 2 x 7 x 0.6 = 15.2 */
    assert_rel(us(&one, TREE, SIMPLE, 0), 64.4, 1e-9);
    assert_rel(us(&one, TREE, LL, 0), 15.2, 1e-9);
    /* 16 nodes x 8: Ring LL 6.6 + 224 x max(0.6, 1.0 net overhead) + 30 x 2.7 = 311.6;
     * Tree LL 6.8 + 2 x (7 x 0.6 + 4 x 5.0) = 55.2 */
    strata_coll_machine_t big = hopper(8, 16, 360e9, false);
    assert_rel(us(&big, RING, LL, 0), 311.6, 1e-9);
    assert_rel(us(&big, TREE, LL, 0), 55.2, 1e-9);
    /* NVLS needs NVLink SHARP; NVLSTree more than one node */
    assert_true(isinf(us(&one, NVLS, SIMPLE, 0)));
    strata_coll_machine_t sharp = hopper(8, 1, 360e9, true);
    assert_true(isinf(us(&sharp, NVLS_TREE, SIMPLE, 0)));
    assert_rel(us(&sharp, NVLS, SIMPLE, 0), 25.0, 1e-9); /* NVLINK NVLS Simple 25 us */
}

/* Bandwidths by hand at 1 GiB, one H100 server (360 GB/s per GPU):
 * Ring Simple busBw 360 -> algBw 360 x 8/14 = 205.71 GB/s;
 * NVLS: 16 channels of 360/16 = 22.5 -> the SM90 search speed 20; x 0.85 x
 * 15/16 x 2 (allreduce) x 16 = 510 -> algBw 510 x 8/14 = 291.43 GB/s. */
static void test_bandwidth_by_hand(void **state)
{
    (void)state;
    strata_coll_machine_t m = hopper(8, 1, 360e9, true);
    double n = 1 << 30;
    assert_rel(us(&m, RING, SIMPLE, n), 56.0 + n / (360e3 * 8 / 14), 1e-9);
    assert_rel(us(&m, NVLS, SIMPLE, n), 25.0 + n / (510e3 * 8 / 14), 1e-9);
    /* Ring LL128: busBw min(360 x 0.92, nCh x 36.7) with nCh = 2 x ceil(360/60) = 12:
     * 331.2 -> algBw 189.26 */
    assert_rel(us(&m, RING, LL128, n), 40.6 + n / (331.2e3 * 8 / 14), 1e-9);
    /* Tree Simple: min(360 x 0.92, 12 x 38.7) = 331.2, ratio 0.5, x the 1 GiB
     * correction (log2(2^30/64) = 24: past the table, 1) */
    assert_rel(us(&m, TREE, SIMPLE, n), 64.4 + n / (331.2e3 * 0.5), 1e-9);
}

/* The choices: small messages Ring/LL (15.0 us beats Tree/LL's 15.2), large
 * ones NVLS/Simple with NVLink SHARP, Ring/Simple without. */
static void test_choices(void **state)
{
    (void)state;
    strata_nccl_choice_t c;
    strata_coll_machine_t m = hopper(8, 1, 360e9, true), plain = hopper(8, 1, 360e9, false);
    assert_int_equal(strata_coll_select_nccl(&m, STRATA_COLL_ALLREDUCE, 8, &c, NULL), STRATA_OK);
    assert_string_equal(strata_nccl_algo_name(c.algo), "Ring");
    assert_string_equal(strata_nccl_proto_name(c.proto), "LL");
    assert_int_equal(c.cost.algo, STRATA_ALGO_RING);
    assert_int_equal(strata_coll_select_nccl(&m, STRATA_COLL_ALLREDUCE, 1 << 30, &c, NULL),
                     STRATA_OK);
    assert_string_equal(strata_nccl_algo_name(c.algo), "NVLS");
    assert_int_equal(c.cost.algo, STRATA_ALGO_INNET);
    assert_int_equal(strata_coll_select_nccl(&plain, STRATA_COLL_ALLREDUCE, 1 << 30, &c, NULL),
                     STRATA_OK);
    assert_string_equal(strata_nccl_algo_name(c.algo), "Ring");
    assert_string_equal(strata_nccl_proto_name(c.proto), "Simple");
    /* 16 servers, small: Tree/LL (55.2 us) beats Ring/LL (311.6 us) */
    strata_coll_machine_t big = hopper(8, 16, 360e9, false);
    assert_int_equal(strata_coll_select_nccl(&big, STRATA_COLL_ALLREDUCE, 8, &c, NULL), STRATA_OK);
    assert_string_equal(strata_nccl_algo_name(c.algo), "Tree");
    assert_int_equal(c.cost.algo, STRATA_ALGO_TREE);
    /* alltoall: no NCCL collective algorithm */
    assert_int_equal(strata_coll_select_nccl(&m, STRATA_COLL_ALLTOALL, 1 << 20, &c, NULL),
                     STRATA_ERR_UNSUPPORTED);
}

/* strata's price of a choice under LL: the bandwidth term of the same
 * schedule doubled (8 of 16 bytes carry data), latency unchanged. */
static void test_protocol_price(void **state)
{
    (void)state;
    strata_coll_machine_t m = hopper(8, 1, 360e9, false);
    strata_nccl_choice_t c;
    strata_coll_cost_t ring;
    assert_int_equal(strata_coll_select_nccl(&m, STRATA_COLL_ALLREDUCE, 4096, &c, NULL),
                     STRATA_OK);
    assert_string_equal(strata_nccl_proto_name(c.proto), "LL");
    assert_int_equal(strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, 4096, &ring,
                                      NULL),
                     STRATA_OK);
    assert_rel(c.proto_eta, 0.5, 0);
    assert_rel(c.cost.beta, 2 * ring.beta, 1e-12);
    assert_rel(c.cost.alpha, ring.alpha, 1e-12);
    assert_rel(c.cost.time, ring.alpha + fmax(2 * ring.beta, ring.gamma), 1e-12);
}

static void test_library_labels(void **state)
{
    (void)state;
    assert_null(strata_algo_libraries(STRATA_ALGO_TORUS2D));
    assert_non_null(strstr(strata_algo_libraries(STRATA_ALGO_RABENSEIFNER), "no GPU"));
    assert_non_null(strstr(strata_algo_libraries(STRATA_ALGO_RING), "NCCL"));
    assert_string_equal(strata_nccl_algo_name(7), "?");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_latency_examples), cmocka_unit_test(test_bandwidth_by_hand),
        cmocka_unit_test(test_choices),          cmocka_unit_test(test_protocol_price),
        cmocka_unit_test(test_library_labels),
    };
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
