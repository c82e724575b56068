/*
 * nccl_test.c — NCCL's selection (nccl.c): its tuning model's latencies
 * checked against the worked examples of shared/reference/nccl.md §2.6
 * (arithmetic from NCCL's published constants, done by hand there), its
 * bandwidths derived by hand below, the choices it makes, and strata's
 * price of a choice under a protocol.
 */
#define _GNU_SOURCE
#include "test.h"
#include "test_catalog.h"
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
 * NVLS on one server: one channel per GPU, 8, each taking its speed from
 * every GPU's link and once more at its head: 9 x speed <= 360 -> 40 (the
 * SM90 search speeds 60, 50, 40, ...); x 0.85 x 7/8 x 2 (allreduce) x 8 =
 * 476 -> algBw 476 x 8/14 = 272 GB/s. */
static void test_bandwidth_by_hand(void **state)
{
    (void)state;
    strata_coll_machine_t m = hopper(8, 1, 360e9, true);
    double n = 1 << 30;
    assert_rel(us(&m, RING, SIMPLE, n), 56.0 + n / (360e3 * 8 / 14), 1e-9);
    assert_rel(us(&m, NVLS, SIMPLE, n), 25.0 + n / (476e3 * 8 / 14), 1e-9);
    /* 8 H800 (8 NVLink4 links: 160 GB/s): 9 x speed <= 160 -> 15; 15 x 0.85 x
     * 7/8 x 2 x 8 = 178.5 busBw > Ring's 160, so NVLS is NCCL's choice
     * (16 channels of 160/16 = 10 -> 6 made it 153 and ranked it below Ring) */
    strata_coll_machine_t h800 = hopper(8, 1, 160e9, true);
    assert_rel(us(&h800, NVLS, SIMPLE, n), 25.0 + n / (178.5e3 * 8 / 14), 1e-9);
    assert_rel(us(&h800, RING, SIMPLE, n), 56.0 + n / (160e3 * 8 / 14), 1e-9);
    /* Ring LL128: busBw min(360 x 0.92, nCh x 36.7) with nCh = 2 x ceil(360/60) = 12:
     * 331.2 -> algBw 189.26 */
    assert_rel(us(&m, RING, LL128, n), 40.6 + n / (331.2e3 * 8 / 14), 1e-9);
    /* Tree Simple: min(360 x 0.92, 12 x 38.7) = 331.2, ratio 0.5, x the 1 GiB
     * correction (log2(2^30/64) = 24: past the table, 1) */
    assert_rel(us(&m, TREE, SIMPLE, n), 64.4 + n / (331.2e3 * 0.5), 1e-9);
}

/* NVLS across servers by hand (search.cc's NVLS graph: one channel per NIC,
 * its local GPU the head; tuning.cc's NVLSTree bandwidth). 8 H100 (360 GB/s)
 * with 8 NICs of 49.7 GB/s, SM90 inter speeds 48, 45, 42, 40, ...: at 48 a
 * head carries (c + 1) x 48 <= 360 -> 6 channels; 45 -> 7; 42 -> 7 (fewer
 * x speed); 40 -> 8 = every GPU a head, done. The second pass raises the
 * network speed alone to 42, 45, 48 (within the NIC, below 2 x 40). NVLSTree
 * per channel: min(40 x 0.85 x 7/8 x 2 = 59.5, network 48 (x 2 on two
 * nodes), cap 57.7 (2 nodes) / 45.5 (more)) -> busBw 8 x 57.7 = 461.6 on
 * two nodes, 8 x 45.5 = 364 on four. Latency 0 + 25 + 2 log2(N) x 20.9.
 * With 4 NICs: 4 channels (one per NIC) at 48, (4 + 1) x 48 <= 360; per
 * channel min(48 x 0.85 x 3/4 x 2 = 61.2, 96, 57.7) -> 230.8. (The old
 * emulation's 16 channels of 20 gave 510 and 398 whatever the NICs.) */
static void test_nvls_across_servers(void **state)
{
    (void)state;
    double n = 1 << 30;
    strata_coll_machine_t two = hopper(8, 2, 360e9, true), four = hopper(8, 4, 360e9, true);
    assert_rel(us(&two, NVLS_TREE, SIMPLE, n), 25 + 2 * 20.9 + n / (461.6e3 * 16 / 30), 1e-6);
    assert_rel(us(&four, NVLS_TREE, SIMPLE, n), 25 + 4 * 20.9 + n / (364e3 * 32 / 62), 1e-6);
    two.nics = 4;
    assert_rel(us(&two, NVLS_TREE, SIMPLE, n), 25 + 2 * 20.9 + n / (230.8e3 * 16 / 30), 1e-6);
    /* one NIC: one channel, below NVLS's two */
    two.nics = 1;
    assert_true(isinf(us(&two, NVLS_TREE, SIMPLE, n)));
    /* NVLS itself across servers only with CollNet (SHARP) on */
    assert_true(isinf(us(&four, NVLS, SIMPLE, n)));
    /* the choice carries the graph (what --explain prints) */
    strata_nccl_choice_t c;
    assert_int_equal(strata_coll_select_nccl(&four, STRATA_COLL_ALLREDUCE, n, &c, NULL), STRATA_OK);
    assert_string_equal(strata_nccl_algo_name(c.algo), "NVLSTree");
    assert_rel(c.nvls_channels, 8, 0);
    assert_rel(c.nvls_intra, 40, 0);
    assert_rel(c.nvls_inter, 48, 0);
    /* 8 B200 (720 GB/s) in one server: 9 x speed <= 720 -> 80 (SM100 intra
     * array); the network speed rises to the array's top, 90; min(80 x 0.74
     * x 7/8 x 2 = 103.6, 90) x 8 = 720 busBw */
    strata_coll_machine_t b200 = hopper(8, 1, 720e9, true);
    snprintf(b200.intra_kind, sizeof(b200.intra_kind), "nvlink5");
    assert_rel(us(&b200, NVLS, SIMPLE, n), 25 + n / (720e3 * 8 / 14), 1e-6);
}

/* Releases (tuning.cc at NVIDIA/nccl's tags), by hand at 1 GiB on 8 H100
 * per server with 8 NICs of 49.7 GB/s (the NVLS graph of
 * test_nvls_across_servers: 8 channels, bwIntra 40, bwInter 48).
 * 4 servers, 2.19.3: NVLSTree per channel min(40, 48 / 2) = 24 (bwInter
 * halved beyond two nodes) x 8 = 192 busBw, algBw x 5/6 = 160; latency
 * 0 + NVLink 23 + 2 log2(4) x network 14 = 79 us. Ring: busBw 360, algBw
 * 360 x 32/62; latency 8.4 + (62 - 2 x 4) x max(3.4, 3 x 1.0) + 2 x 4 x 14
 * = 304 us, x 1.4 (plateau) = 425.6. 2.24.3: NVLSTree latency 25 + 4 x 14
 * = 81; the ring crosses the network 2(N - 1) = 6 times: 8.4 + 56 x 3.4 +
 * 6 x 14 = 282.8, x 1.4 = 395.92. Both pick the ring (6204 us against
 * 6790); from 2.28 NVLSTree (364 x 32/62 busBw) is the pick. */
static void test_releases(void **state)
{
    (void)state;
    double n = 1 << 30;
    strata_coll_machine_t four = hopper(8, 4, 360e9, true), two = hopper(8, 2, 360e9, true),
                          one = hopper(8, 1, 360e9, true);
    four.nccl_version = two.nccl_version = one.nccl_version = 21903;
    assert_rel(us(&four, NVLS_TREE, SIMPLE, n), 79 + n / 160e3, 1e-6);
    assert_rel(us(&four, RING, SIMPLE, n), 425.6 + n / (360e3 * 32 / 62), 1e-6);
    strata_nccl_choice_t c;
    assert_int_equal(strata_coll_select_nccl(&four, STRATA_COLL_ALLREDUCE, n, &c, NULL), STRATA_OK);
    assert_string_equal(strata_nccl_algo_name(c.algo), "Ring");
    /* 2 servers: min(40, 48) x 8 = 320 x 5/6; latency 23 + 2 x 14 = 51 us:
     * NVLSTree. One server: NVLS, min(40, bwInter raised to 60) x 8 x 5/6,
     * latency NVLink 23 us */
    assert_rel(us(&two, NVLS_TREE, SIMPLE, n), 51 + n / (320e3 * 5 / 6), 1e-6);
    assert_int_equal(strata_coll_select_nccl(&two, STRATA_COLL_ALLREDUCE, n, &c, NULL), STRATA_OK);
    assert_string_equal(strata_nccl_algo_name(c.algo), "NVLSTree");
    assert_rel(us(&one, NVLS, SIMPLE, n), 23 + n / (320e3 * 5 / 6), 1e-6);
    /* Tree/Simple latency at 2.19: base 0 + 2 x (7 x 28 + 2 x 28) = 504 us */
    assert_rel(us(&four, TREE, SIMPLE, 0), 504, 1e-9);
    four.nccl_version = 22403;
    assert_rel(us(&four, NVLS_TREE, SIMPLE, n), 81 + n / 160e3, 1e-6);
    assert_rel(us(&four, RING, SIMPLE, n), 395.92 + n / (360e3 * 32 / 62), 1e-6);
    assert_int_equal(strata_coll_select_nccl(&four, STRATA_COLL_ALLREDUCE, n, &c, NULL), STRATA_OK);
    assert_string_equal(strata_nccl_algo_name(c.algo), "Ring");
    four.nccl_version = 22800; /* the NVLS model of 2.28: NVLSTree */
    assert_int_equal(strata_coll_select_nccl(&four, STRATA_COLL_ALLREDUCE, n, &c, NULL), STRATA_OK);
    assert_string_equal(strata_nccl_algo_name(c.algo), "NVLSTree");
    /* NVLSTree's network latency: 14 us to 2.28.7, 20.9 from 2.28.9 */
    assert_rel(us(&four, NVLS_TREE, SIMPLE, 0), 25 + 4 * 14, 1e-9);
    four.nccl_version = 22809;
    assert_rel(us(&four, NVLS_TREE, SIMPLE, 0), 25 + 4 * 20.9, 1e-9);
    /* Blackwell before 2.25.1: no sm100 */
    strata_coll_machine_t b200 = hopper(8, 1, 720e9, true);
    snprintf(b200.intra_kind, sizeof(b200.intra_kind), "nvlink5");
    b200.nccl_version = 22403;
    strata_error_t err;
    assert_int_equal(strata_coll_select_nccl(&b200, STRATA_COLL_ALLREDUCE, n, &c, &err),
                     STRATA_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "2.25.1"));
    b200.nccl_version = 22500;
    assert_int_equal(strata_coll_select_nccl(&b200, STRATA_COLL_ALLREDUCE, n, &c, NULL), STRATA_OK);
}

static void test_version_parse(void **state)
{
    (void)state;
    uint32_t v = 0;
    strata_error_t err;
    assert_int_equal(strata_nccl_version_parse("2.19.3", &v, NULL), STRATA_OK);
    assert_int_equal(v, 21903);
    assert_int_equal(strata_nccl_version_parse("2.27.3+cuda12.9", &v, NULL), STRATA_OK);
    assert_int_equal(v, 22703);
    assert_int_equal(strata_nccl_version_parse("2.30.4-1", &v, NULL), STRATA_OK);
    assert_int_equal(v, 23004);
    assert_int_equal(strata_nccl_version_parse("v2.26.2-1", &v, NULL), STRATA_OK); /* a tag */
    assert_int_equal(v, 22602);
    assert_int_equal(strata_nccl_version_parse("2.21", &v, NULL), STRATA_OK);
    assert_int_equal(v, 22100);
    assert_int_equal(strata_nccl_version_parse("2.18.5", &v, &err), STRATA_ERR_RANGE);
    assert_non_null(strstr(err.msg, "2.18.5"));
    assert_int_equal(strata_nccl_version_parse("3.0", &v, NULL), STRATA_ERR_RANGE);
    assert_int_equal(strata_nccl_version_parse("2.x", &v, &err), STRATA_ERR_PARSE);
    assert_int_equal(strata_nccl_version_parse("2", &v, NULL), STRATA_ERR_PARSE);
    assert_int_equal(strata_nccl_version_parse("2.19.3 ", &v, NULL), STRATA_ERR_PARSE);
    assert_int_equal(strata_nccl_version_parse("2.19.", &v, NULL), STRATA_ERR_PARSE);
    assert_int_equal(strata_nccl_version_parse("2.19.3.4", &v, NULL), STRATA_ERR_PARSE);
    assert_int_equal(strata_nccl_version_parse("2.100", &v, NULL), STRATA_ERR_PARSE);
    assert_int_equal(strata_nccl_version_parse("99999999999999999999999.1", &v, NULL),
                     STRATA_ERR_RANGE);
    assert_int_equal(strata_nccl_version_parse("", &v, NULL), STRATA_ERR_PARSE);
    assert_int_equal(strata_nccl_version_parse(NULL, &v, NULL), STRATA_ERR_PARSE);
    assert_int_equal(v, 22100); /* written only on success */
    assert_string_equal(strata_nccl_version_model(21903), "2.19-2.20");
    assert_string_equal(strata_nccl_version_model(22809), "2.28.9");
    assert_string_equal(strata_nccl_version_model(22807), "2.28.0-2.28.7");
    assert_string_equal(strata_nccl_version_model(0), "2.30+");
    assert_string_equal(strata_nccl_version_model(23107), "2.30+");
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
    assert_int_equal(strata_coll_select_nccl(&m, STRATA_COLL_ALLREDUCE, 4096, &c, NULL), STRATA_OK);
    assert_string_equal(strata_nccl_proto_name(c.proto), "LL");
    assert_int_equal(
        strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, 4096, &ring, NULL),
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

/* ==== Public multi-node measurements (docs/validation.md, "Collectives") ==== */

/* The machine of a preset, builder spec or cluster file. */
static strata_coll_machine_t vmachine(const char *spec)
{
    strata_topo_t *t;
    strata_error_t err;
    strata_coll_machine_t m;
    if (strata_topo_load_spec(spec, cat, &t, &err)) fail_msg("%s", err.msg);
    if (strata_coll_machine_from_topo(t, cat, &m, &err)) fail_msg("%s", err.msg);
    strata_topo_destroy(t);
    return m;
}

/* NCCL's choice on a cluster at `bytes`, priced by strata: its busbw.
 * version: the NCCL release the measurement ran (NULL: not stated, the
 * newest tuning model). */
static double nccl_busbw(const char *spec, double bytes, const char *version,
                         strata_nccl_choice_t *c)
{
    strata_error_t err;
    strata_coll_machine_t m = vmachine(spec);
    if (version && strata_nccl_version_parse(version, &m.nccl_version, &err))
        fail_msg("%s", err.msg);
    if (strata_coll_select_nccl(&m, STRATA_COLL_ALLREDUCE, bytes, c, &err)) fail_msg("%s", err.msg);
    return c->cost.busbw;
}

/* A measurement with NCCL_ALGO forced (Simple at these sizes): strata's
 * price of that schedule. */
static double forced_busbw(const char *spec, double bytes, strata_algo_t algo)
{
    strata_error_t err;
    strata_coll_cost_t cost;
    strata_coll_machine_t m = vmachine(spec);
    if (strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, algo, bytes, &cost, &err))
        fail_msg("%s", err.msg);
    return cost.busbw;
}

/* Cluster files of the validation cases (tests/data/validation/) */
#define VDATA STRATA_SOURCE_DIR "/tests/data/validation/"

typedef struct vcase {
    const char *what, *spec, *algo; /* NCCL's algorithm expected */
    double bytes, measured;         /* nccl-tests size, busbw GB/s */
    double lo, hi;                  /* accepted predicted/measured */
    int forced;                     /* NCCL_ALGO forced: strata algorithm + 1; 0: NCCL's choice */
    const char *version;            /* NCCL release the row ran; NULL: not stated */
} vcase_t;

/* In tolerance (10 %): the row is a prediction. Outside: the bounds pin
 * the known miss and its cause (docs/validation.md), so a fix of the cause
 * shows here and the row moves into tolerance. */
static const vcase_t vcases[] = {
    /* NVIDIA (nccl#812, quoted in nccl#1576): DGX A100, 8 x HDR, multi-node ring */
    {"DGX A100 x4, 8xHDR", "dgx-a100:4", "Ring", 8.0 * (1 << 30), 192, 0.90, 1.10, 0, NULL},
    /* nccl-tests#290: 8 x H100, NVLS, single node */
    {"DGX H100 NVLS", "dgx-h100", "NVLS", 8.0 * (1 << 30), 476, 0.90, 1.10, 0, NULL},
    /* validation.md A rows, now with NCCL's choice */
    {"8xA100 ring", "dgx-a100", "Ring", 8.0 * (1 << 30), 232.5, 0.90, 1.10, 0, NULL},
    {"8xH200", "hgx-h200", "NVLS", 4.0 * (1 << 30), 475, 0.90, 1.10, 0, "2.20.3"},
    {"2x8 H200 1 GiB", "hgx-h200:2", "NVLSTree", 1.0 * (1 << 30), 458.7, 0.90, 1.10, 0, NULL},
    {"2x8 H200 3 GiB", "hgx-h200:2", "NVLSTree", 3.0 * (1 << 30), 483.8, 0.90, 1.10, 0, NULL},
    /* 3 x 8 A100, 4 x HDR at 128 MiB (nccl-tests#119): 46 ring steps, each
     * charged its path's per-hop latencies plus the endpoints' once (a miss
     * at -12 % while end-to-end figures were charged per hop) */
    {"3x8 A100, 4xHDR, 128 MiB", "dgx-a100:3,nics=4", "Ring", 128.0 * (1 << 20), 96, 0.90, 1.10, 0,
     NULL},
    /* misses: 2 x 8 A100, 4 x HDR (nccl-tests#175): the NICs' ring ceiling
     * 4 x 24.7 = 99 GB/s vs 86 measured, below what NVIDIA expects (96) */
    {"2x8 A100, 4xHDR", "dgx-a100:2,nics=4", "Ring", 4.0 * (1 << 30), 86, 1.10, 1.20, 0, NULL},
    /* DGX-1 V100, 4 x EDR (nccl-tests#29, maintainer: 48 GB/s): 6 mesh rings
     * over the cube-mesh's NVLink2 lanes (6 x 20.0 = 120 GB/s inside the
     * server, of which a rank's local hops need 7/8) leave the 4 NICs as
     * the bound: per step n/16 through 4 x 12.4 GB/s, 30 steps, busbw =
     * 1.875 n / t = 4 x 12.4 = 49.6 GB/s (a miss at -52 % while one ring
     * ran over single NVLinks: 20.0 x 8/7 = 22.8; issue 11 cause 6) */
    {"DGX-1 x2, 4xEDR", "dgx-1v:2", "Ring", 1.0 * (1 << 30), 48, 0.90, 1.10, 0, NULL},
    /* nccl-tests#100: 2 x HGX A100 80GB, 4 x CX-6 HDR 200G IB per node,
     * -b 1G -e 8G, "can reach 91GB/s": the NICs' ring ceiling, 4 x 24.7 =
     * 98.9 GB/s of busbw (at 8 GiB the ring's 30 steps of latency add 0.3 %) */
    {"2x8 A100, 4xHDR (#100)", "dgx-a100:2,nics=4", "Ring", 8.0 * (1 << 30), 91, 0.90, 1.10, 0,
     NULL},
    /* d-robotics/test_gpu_scripts multi-node report (2026-05-23): 2 x 8
     * H100, 4 x 400G IB rails (mlx5_0,1,6,7), GDRDMA, no SHARP: 353.85 */
    {"2x8 H100, 4xNDR", "dgx-h100:2,nics=4", "NVLSTree", 8.0 * (1 << 30), 353.85, 0.90, 1.10, 0,
     NULL},
    /* aigatech/vpbenchmarking (Voltage Park): 8 x H100 SXM5, NCCL 2.24.3,
     * single node, peak at 8 GiB: 479.72 */
    {"8xH100 (Voltage Park)", "dgx-h100", "NVLS", 8.0 * (1 << 30), 479.72, 0.90, 1.10, 0, "2.24.3"},
    /* NVIDIA GTC 2024 S62129, quoted in NVIDIA/nccl#1649: multi-node H100
     * NVLSTree allreduce busBw "approximately 370GB/s~380GB/s" (node count
     * not stated; 4 modelled) */
    {"H100 NVLSTree (GTC 2024)", "dgx-h100:4", "NVLSTree", 8.0 * (1 << 30), 375, 0.90, 1.10, 0,
     NULL},
    /* misses of the clusters (docs/validation.md): 4 x 8 H100 over NDR /
     * 400G RoCE measured at 320-331. Their releases (2.24.3, 2.19.3) run
     * the ring on four nodes (test_releases: NVLSTree's model gives it
     * bwInter / 2 per channel beyond two nodes), which strata prices at the
     * 8 NICs: 8 x 49.7 (NDR) or 8 x 48.9 (RoCE) less 62 steps of latency;
     * NVIDIA's own ring figure for the hardware is ~380 (row 19 below) and
     * four XE9680 on 2.26.2, the ring too, measure 365.84. The RoCE
     * cluster runs 10-11 % low inside one server (330 ring, 430 NVLS on
     * one node: nccl#1221), where no network enters; the Voltage Park
     * cluster runs its allgather and its NVLSTree as far below
     * (test_one_cluster_one_deficit) */
    {"4x8 H100 NDR (Voltage Park)", "dgx-h100:4", "Ring", 8.0 * (1 << 30), 330.93, 1.15, 1.25, 0,
     "2.24.3"},
    {"4x8 H100 RoCE (nccl#1221)", "dgx-h100:4,port=roce-400g", "Ring", 8.0 * (1 << 30), 320, 1.15,
     1.25, 0, "2.19.3"},
    /* 2 x 8 H100, 8 x 400G RoCE, NCCL 2.19.3, NVLS on: 430 at 4-8 GiB
     * (nccl#1221), the same cluster as above and the same 430 on one node;
     * 2 x 8 H200 on the same NICs (nccl-tests#256) is +2.5 %, 2 x 8 H100
     * with NCCL 2.26.2 (nccl-tests#309, row 22 below) +6.7 % */
    {"2x8 H100 RoCE (nccl#1221)", "dgx-h100:2,port=roce-400g", "NVLSTree", 8.0 * (1 << 30), 430,
     1.10, 1.20, 0, "2.19.3"},
    /* GB200 NVL72, one rack of 72 GPUs, NVLS (coreweave/nccl-tests#43):
     * 834.57 at 8 GiB. The NVLS law that fits H100 (1.32 x the GPU's 720
     * GB/s) gives 1145; 8 B200 in one server also stop at "830+" (nccl#1807),
     * so NVLink5's NVLS rate, not the rack, is what the model lacks. The
     * release: the example's image at that commit (coreweave/nccl-tests
     * aa40070, slurm/nccl-test-distributed-gb200-nvl72-enroot.slurm:
     * nccl2.25.1-1, NCCL_NVLS_ENABLE=1) */
    {"GB200 NVL72 rack (NVLS)", "gb200-nvl72", "NVLS", 8.0 * (1 << 30), 834.57, 1.30, 1.45, 0,
     "2.25.1"},
    /* 8 x H800 (8 NVLink4 links per GPU, tests/data/validation/hgx-h800.json),
     * one server, NVLS: 215 (nccl#1374). NCCL-mode picked Ring (160, -26 %)
     * while its NVLS channels were 16 of 160/16 = 10 -> 6 GB/s; with NCCL's
     * one-server NVLS search (8 channels of 15, test_bandwidth_by_hand) it
     * picks NVLS, which strata prices at 209.4 (the NVLS law, 1.32 x 160 less
     * the latency and fill of 8 GiB) */
    {"8xH800 one server (NVLS)", VDATA "hgx-h800.json", "NVLS", 8.0 * (1 << 30), 215, 0.90, 1.10, 0,
     NULL},
    /* the same GTC 2024 slide (nccl#1649): multi-node allreduce "approximately
     * 380GB/s even without using SHARP", the ring over the 8 NICs: per step
     * n/32 through each server's 8 x 49.7 GB/s, busbw -> 8 x 49.7 = 397.6 less
     * 62 steps of latency (4 servers modelled) */
    {"H100 ring (GTC 2024)", "dgx-h100:4", "Ring", 8.0 * (1 << 30), 380, 0.90, 1.10,
     STRATA_ALGO_RING + 1, NULL},
    /* NVIDIA/nccl#2140: 8 x B300 (tests/data/validation/hgx-b300.json), NCCL
     * 2.30.4, one server, size not stated (8 GiB modelled). NVLS off: 695,
     * NCCL's model then runs Ring: 18 NVLink5 links x 40 GB/s after the
     * packet step = 720 GB/s less 14 steps of latency */
    {"8xB300 NVLS off (ring)", VDATA "hgx-b300.json", "Ring", 8.0 * (1 << 30), 695, 0.90, 1.10,
     STRATA_ALGO_RING + 1, "2.30.4"},
    /* NVLS on: 845, where the NVLS law gives 932.7 -- the Blackwell NVLS
     * miss of the GB200 rack (eight B200: "830+", nccl#1807) */
    {"8xB300 NVLS", VDATA "hgx-b300.json", "NVLS", 8.0 * (1 << 30), 845, 1.05, 1.15, 0, "2.30.4"},
    /* NVIDIA/nccl-tests#309: Dell XE9680 (8 x H100 SXM, 8 x CX-7 NDR 400G IB),
     * NCCL 2.26.2, OpenMPI 4.1.8; after the reporter's fixes "each 2 nodes
     * with 16 pairs can still get 470 GB/s", 4 nodes "max busbw 365.84"
     * (size not stated, 8 GiB modelled). 2 nodes: NVLSTree bound by NVLink,
     * (1 + 1/8 + 0.2) n per rank (501.5); 4 nodes: 2.26.2's tuning runs
     * the ring (test_releases), n/32 per step through each server's 8 NICs
     * at 49.7 GB/s (396.6) */
    {"2x8 H100 NDR (XE9680)", "dgx-h100:2", "NVLSTree", 8.0 * (1 << 30), 470, 0.90, 1.10, 0,
     "2.26.2"},
    {"4x8 H100 NDR (XE9680)", "dgx-h100:4", "Ring", 8.0 * (1 << 30), 365.84, 0.90, 1.10, 0,
     "2.26.2"},
    /* NVIDIA/nccl#1801: GB200, three NVLink partitions on different racks
     * (tests/data/validation/gb200-nvl4.json, -nvl8.json), joined only by
     * IB, NCCL 2.27.3, NCCL_NVLS_ENABLE=0, 16 GiB. NCCL's default there is
     * the ring (priced as forced, NVLS being off): per step n/P through
     * each partition's K NICs, busbw -> K x 49.7 less the steps' latency
     * (K = 4: 198.7; K = 8: 397.2). NCCL_ALGO=Tree: the double binary tree
     * over 3 partitions with a chain in each, NCCL's 512 KiB chunks
     * (tree.c), 233.3 and 487.1 */
    {"3 GB200 NVL4 ring (#1801)", VDATA "gb200-nvl4.json", "Ring", 16.0 * (1 << 30), 196.72, 0.90,
     1.10, STRATA_ALGO_RING + 1, "2.27.3"},
    {"3 GB200 NVL4 tree (#1801)", VDATA "gb200-nvl4.json", "Tree", 16.0 * (1 << 30), 234.43, 0.90,
     1.10, STRATA_ALGO_TREE + 1, "2.27.3"},
    {"3 GB200 NVL8 ring (#1801)", VDATA "gb200-nvl8.json", "Ring", 16.0 * (1 << 30), 393.66, 0.90,
     1.10, STRATA_ALGO_RING + 1, "2.27.3"},
    {"3 GB200 NVL8 tree (#1801)", VDATA "gb200-nvl8.json", "Tree", 16.0 * (1 << 30), 485.68, 0.90,
     1.10, STRATA_ALGO_TREE + 1, "2.27.3"},
    /* a PCIe-only server (docs/validation.md H3; voipmonitor/rtx6kpro):
     * 8 x RTX PRO 6000 Blackwell on two Gen5 switches, NCCL 2.27.5, 1 GiB:
     * 46.44. The ring at one GPU's x16 link as SM stores make it, 128 B per
     * TLP: 63.015 x 128/152 x 152/160 = 50.41 GB/s */
    {"8 PCIe GPUs, 2 switches (H3)", STRATA_SOURCE_DIR "/tests/data/wrx90_2switch.json", "Ring",
     1.0 * (1 << 30), 46.44, 0.90, 1.10, 0, "2.27.5"},
    /* NVIDIA/nccl#2140's other server: 8 x H100 SXM, one server, the same
     * report's NCCL 2.30.4 (size not stated, 8 GiB modelled). NVLS off:
     * 370, NCCL's model then runs the ring, priced as forced: 18 NVLink4
     * links x 20.6 GB/s after the packet step, the ring's 14 steps at 7/8
     * of n per rank: busbw -> the links' 360 less the steps' latency;
     * NVLS on: 480, the NVLS law of row 2 (469.0) */
    {"8xH100 NVLS off (#2140)", "dgx-h100", "Ring", 8.0 * (1 << 30), 370, 0.90, 1.10,
     STRATA_ALGO_RING + 1, "2.30.4"},
    {"8xH100 NVLS (#2140)", "dgx-h100", "NVLS", 8.0 * (1 << 30), 480, 0.90, 1.10, 0, "2.30.4"},
    /* NVIDIA/nccl-tests#309: one Dell XE9680 (8 x H100 SXM), NCCL 2.26.2,
     * NVLS disabled after the reporter's fixes: 368.76, which the reporter
     * sets beside NVIDIA's single-node 370 (size not stated, 8 GiB
     * modelled): the ring as above, 359.9 */
    {"XE9680 NVLS off (#309)", "dgx-h100", "Ring", 8.0 * (1 << 30), 368.76, 0.90, 1.10,
     STRATA_ALGO_RING + 1, "2.26.2"},
    /* Azure/AI-benchmarking-guide, Azure_Results/ND_*_results.md: one VM,
     * all_reduce_perf 1K-8G, in-place busbw at 8G. ND A100 v4 (8 x A100
     * SXM4 80GB, NCCL 2.18.5 -- older than the oldest transcribed tuning
     * model, so the newest decides; A100 has no NVLS, the ring either way):
     * 231.58, the ring over 12 NVLink3 links x 20 GB/s = 239.9 (row 3) */
    {"ND A100 v4 (Azure)", "dgx-a100", "Ring", 8.0 * (1 << 30), 231.58, 0.90, 1.10, 0, NULL},
    /* ND H200 v5 (8 x H200, NCCL 2.20.5): 479.98, NVLS as row 4 (469.0) */
    {"ND H200 v5 (Azure)", "hgx-h200", "NVLS", 8.0 * (1 << 30), 479.98, 0.90, 1.10, 0, "2.20.5"},
    /* ND GB200 v6 (one tray of 4 GB200, NCCL 2.25.1, "Ring algorithm"):
     * 679.61; 2.25.1's model runs the ring on the tray's 4 GPUs: 18
     * NVLink5 links x 40 GB/s after the packet step, busbw -> 720 less 6
     * steps of latency (719.8) */
    {"ND GB200 v6 tray (Azure)", VDATA "gb200-tray.json", "Ring", 8.0 * (1 << 30), 679.61, 0.90,
     1.10, 0, "2.25.1"},
    /* a miss: coreweave/nccl-tests#48 (commit 5ceab10): 20 GB200 NVL72
     * racks, 1440 ranks, 4 IB NICs a tray (NCCL_IB_HCA=ibp), NCCL 2.26.2
     * (the example's image), NCCL_NVLS_ENABLE=0, NCCL_COLLNET_ENABLE=0,
     * NCCL_NET_GDR_C2C=1. The PR shows 512 MiB-4 GiB; the same run to
     * 16 GiB is in the repository's README ("Expected Performance", "20
     * Racks", commit 0120901: the same figures to 4 GiB, then 381.48 at 8
     * GiB and 405.74 at 16 GiB), so the row takes its largest size as the
     * other rows do (it was 346.38 at 4 GiB, +99 %). NVLS and CollNet off,
     * 2.26.2's model runs the tree (test_nvls_off_choice), priced as
     * forced: the double binary tree over 20 racks with a chain of 72 in
     * each, 715 (+76 %); a rate that holds from 2 to 16 GiB
     * (test_tree_racks_line), no cause found (docs/validation.md) */
    {"20 GB200 racks, NVLS off", "gb200-nvl72:20", "Tree", 16.0 * (1 << 30), 405.74, 1.70, 1.85,
     STRATA_ALGO_TREE + 1, "2.26.2"},
    /* NVIDIA/nccl#1579, 2 GH200 nodes (one GPU each), 4 x 200G ports each
     * (tests/data/validation/gh200-4x200g.json), NCCL 2.24.3,
     * NCCL_NET_GDR_LEVEL=SYS: 96.07 at 2 GiB in-place. NCCL's channels
     * rotate over every NIC the GPU reaches best (search.cc), so the one
     * GPU drives all four: 98.0 (+2.0 %; test_more_nics_than_gpus derives
     * it). Was 24.5 (-74.5 %) while strata ran one channel per rank */
    {"2 GH200, 4x200G (#1579)", VDATA "gh200-4x200g.json", "Ring", 2.0 * (1 << 30), 96.07, 0.90,
     1.10, 0, "2.24.3"},
    /* coreweave/nccl-tests 3b06be7 (2026-05-26): "Validated on ... 2-node
     * B200 and H100 base MPIJobs ... (B200 690 GB/s, H100 441 GB/s busbw at
     * 8G)": the manifests' NCCL 2.28.3, NCCL_IB_HCA=ibp (8 NDR NICs a node),
     * NCCL_COLLNET_ENABLE=0, -b 512M -e 8G. 2.28.3's model runs NVLSTree on
     * both. B200 (tests/data/validation/hgx-b200.json): bound by the 8 NICs,
     * 726.9 (+5.3 %). H100: bound by NVLink, (1 + 1/8 + 0.2) n per rank,
     * 501.5 -- a miss like row 16's (430) and above row 22's (470) */
    {"2x8 B200 NDR (CoreWeave)", VDATA "hgx-b200.json", "NVLSTree", 8.0 * (1 << 30), 690, 0.90,
     1.10, 0, "2.28.3"},
    {"2x8 H100 NDR (CoreWeave)", "dgx-h100:2", "NVLSTree", 8.0 * (1 << 30), 441, 1.10, 1.20, 0,
     "2.28.3"},
};

static void test_public_measurements(void **state)
{
    (void)state;
    double sum = 0, all = 0;
    int in = 0;
    size_t nv = sizeof(vcases) / sizeof(vcases[0]);
    for (size_t i = 0; i < nv; i++) {
        const vcase_t *v = &vcases[i];
        strata_nccl_choice_t c;
        double r;
        if (v->forced) {
            r = forced_busbw(v->spec, v->bytes, (strata_algo_t)(v->forced - 1)) /
                (v->measured * 1e9);
            print_message("%-26s forced %s: predicted %6.1f GB/s, measured %6.1f: %+5.1f %%\n",
                          v->what, v->algo, r * v->measured, v->measured, 100 * (r - 1));
        } else {
            r = nccl_busbw(v->spec, v->bytes, v->version, &c) / (v->measured * 1e9);
            print_message(
                "%-26s NCCL %-6s %s/%s: predicted %6.1f GB/s, measured %6.1f: %+5.1f %%\n", v->what,
                v->version ? v->version : "-", strata_nccl_algo_name(c.algo),
                strata_nccl_proto_name(c.proto), r * v->measured, v->measured, 100 * (r - 1));
            assert_string_equal(strata_nccl_algo_name(c.algo), v->algo);
        }
        if (!(r >= v->lo && r <= v->hi))
            fail_msg("%s: predicted/measured %.3f outside [%.2f, %.2f]", v->what, r, v->lo, v->hi);
        if (v->lo >= 0.9 && v->hi <= 1.1) sum += fabs(r - 1), in++;
        all += fabs(r - 1);
    }
    print_message("mean |error|: %.1f %% over the %d rows in tolerance, %.1f %% over all %zu\n",
                  100 * sum / in, in, 100 * all / nv, nv);
    /* the cases in tolerance: mean |error| within 5 % */
    assert_true(sum / in <= 0.05);
}

/* Row 14's cluster (4 x 8 H100, 8 NDR NICs a node, NCCL 2.24.3) measured
 * by three schedules, from the raw nccl-tests output (aigatech/vpbenchmarking
 * as forked to ZiyanIshani/vpbenchmarking, results/nccl/nccl_multinode/
 * nccl_allreduce_ and nccl_allgather_20260224_225706.txt): allreduce
 * out-of-place busbw 330.93 at 8 GiB and 275.26 at 128 MiB, allgather
 * 323.53 at 8 GiB. The allreduce curve dips from 275.26 (128 MiB) to
 * 239.78 (256 MiB) before climbing to 330.93: an algorithm switch, where
 * 2.24.3's model moves from NVLSTree/Simple to Ring/LL128 (its NVLSTree
 * 81 + n / 160e3 us against the ring's, test_releases). strata prices all
 * three at the 8 NICs (`strata coll dgx-h100:4 --select nccl --nccl-version
 * 2.24.3 --explain SIZE`: "network bandwidth"): the ring allreduce and
 * allgather by hand 8 x 49.7 = 397.6 GB/s of busbw less 62 and 31 steps of
 * latency (396.6 both), NVLSTree at 128 MiB 2n a server through the 8
 * NICs plus its fill and latency (328.9). Measured, all three sit 16-23 %
 * below: one deficit of the cluster's network (330.93 / 8 = 41.4 GB/s a
 * NIC, where NVIDIA's maintainer gives "around 48GB/s from each CX7 NIC",
 * nccl-tests#319, and four XE9680 on the ring reach 365.84, row 23), not
 * of one schedule's model. The test pins the three ratios together. */
static void test_one_cluster_one_deficit(void **state)
{
    (void)state;
    const double G = 1 << 30, M = 1 << 20;
    strata_coll_machine_t m = vmachine("dgx-h100:4");
    strata_error_t err;
    assert_int_equal(strata_nccl_version_parse("2.24.3", &m.nccl_version, &err), STRATA_OK);
    strata_nccl_choice_t ar8, ar128, ar256, ag8;
    assert_int_equal(strata_coll_select_nccl(&m, STRATA_COLL_ALLREDUCE, 8 * G, &ar8, &err),
                     STRATA_OK);
    assert_int_equal(strata_coll_select_nccl(&m, STRATA_COLL_ALLREDUCE, 128 * M, &ar128, &err),
                     STRATA_OK);
    assert_int_equal(strata_coll_select_nccl(&m, STRATA_COLL_ALLREDUCE, 256 * M, &ar256, &err),
                     STRATA_OK);
    assert_int_equal(strata_coll_select_nccl(&m, STRATA_COLL_ALLGATHER, 8 * G, &ag8, &err),
                     STRATA_OK);
    /* the switch the measured curve shows between 128 and 256 MiB */
    assert_string_equal(strata_nccl_algo_name(ar128.algo), "NVLSTree");
    assert_string_equal(strata_nccl_algo_name(ar256.algo), "Ring");
    assert_string_equal(strata_nccl_algo_name(ar8.algo), "Ring");
    assert_string_equal(strata_nccl_algo_name(ag8.algo), "Ring");
    /* the NIC ceiling by hand, 8 x 49.7 GB/s, less the steps' latency */
    double nic = 8 * m.bw_nic;
    assert_true(ar8.cost.busbw < nic && ar8.cost.busbw > 0.995 * nic);
    assert_true(ag8.cost.busbw < nic && ag8.cost.busbw > 0.995 * nic);
    double r[3] = {ar8.cost.busbw / 330.93e9, ar128.cost.busbw / 275.26e9,
                   ag8.cost.busbw / 323.53e9};
    double lo = r[0], hi = r[0];
    for (int i = 0; i < 3; i++) {
        print_message("Voltage Park schedule %d: predicted/measured %.3f\n", i, r[i]);
        assert_true(r[i] >= 1.15 && r[i] <= 1.25);
        lo = r[i] < lo ? r[i] : lo;
        hi = r[i] > hi ? r[i] : hi;
    }
    assert_true(hi - lo < 0.04); /* one deficit: 1.195-1.226 */
}

/* Row 14's miss is a rate, not a fill or a latency (docs/validation.md,
 * 2026-12-03). The raw output's out-of-place times (the file of
 * test_one_cluster_one_deficit) are 25265.5 us at 4 GiB and 50291.8 at 8
 * GiB: a line through them gives 25026.3 us per 4 GiB and 239.2 us of
 * fixed time. strata's ring (NCCL 2.24.3's choice at both sizes) by hand:
 * every rank sends 2 x 31/32 of the buffer, all of it through its
 * server's 8 NICs, so the slope is 1.9375 x 4 GiB / (8 x bw_nic) =
 * 20.93 ms per 4 GiB; its fixed time is the 62 steps' latency, about 0.1
 * ms. Of the 8.3 ms missing at 8 GiB, the fixed time explains under 2 %:
 * what a pipeline fill, a per-step handshake or a proxy's latency would
 * add (a fixed time, or one per step at a size-independent count) is not
 * what the cluster lacks; its NICs deliver 41.6 GB/s each where the model
 * gives 49.7. */
static void test_deficit_is_a_rate(void **state)
{
    (void)state;
    const double G = 1 << 30;
    strata_coll_machine_t m = vmachine("dgx-h100:4");
    strata_nccl_choice_t c4, c8;
    nccl_busbw("dgx-h100:4", 4 * G, "2.24.3", &c4);
    nccl_busbw("dgx-h100:4", 8 * G, "2.24.3", &c8);
    assert_string_equal(strata_nccl_algo_name(c4.algo), "Ring");
    assert_string_equal(strata_nccl_algo_name(c8.algo), "Ring");
    double slope = c8.cost.time - c4.cost.time, fixed = c4.cost.time - slope;
    assert_true(fabs(slope / (1.9375 * 4 * G / (8 * m.bw_nic)) - 1) < 1e-3);
    const double mslope = 50291.8e-6 - 25265.5e-6, mfixed = 25265.5e-6 - mslope;
    print_message("row 14 line: measured %.1f us per 4 GiB + %.1f us, strata %.1f + %.1f\n",
                  mslope * 1e6, mfixed * 1e6, slope * 1e6, fixed * 1e6);
    assert_true(fixed > 0 && fixed < 150e-6);
    assert_true(mslope / slope > 1.18 && mslope / slope < 1.21);
    double gap = 50291.8e-6 - c8.cost.time;
    assert_true((mfixed - fixed) / gap < 0.02);
    /* the NICs' rate the measured slope implies: 41.6 GB/s each */
    assert_near(1.9375 * 4 * G / mslope / 8, 41.57e9, 0.05e9);
}

/* Rows 16, 22 and 38 against one server (docs/validation.md,
 * 2026-12-03): with eight NDR NICs a server, two servers' NVLSTree is
 * bound by NVLink in strata, every GPU moving (1 + 1/8 + 0.2) n over its
 * links as on one server (the NICs carry n/8 each way, n / (8 x 49.7) =
 * n / 397.6 GB/s: 0.68 of that time), so its algbw equals one server's
 * NVLS algbw: by hand 360 GB/s / 1.325 = 271.7 GB/s, busbw x 2·15/16 =
 * 509.4 against x 2·7/8 = 475.5,
 * less each one's latency and fill. Measured, two servers' algbw is below
 * one server's on every cluster that has both: 483.8 / 1.875 = 258.0
 * against 479.98 / 1.75 = 274.3 on H200 (0.94; rows 6, 33), 470 / 1.875
 * against 480 / 1.75 on H100 (0.91; rows 22, 30), 430 / 1.875 against the
 * same cluster's 430 / 1.75 (0.93; row 16), 441 / 1.875 (0.86; row 38).
 * The model has no term for what two servers add to NVLS (the candidate,
 * NCCL's warp split, is in docs/validation.md); this pins the ratio at 1,
 * so a modelled cause shows here. */
static void test_nvlstree_two_servers_as_one(void **state)
{
    (void)state;
    const double G = 1 << 30;
    double one = forced_busbw("dgx-h100", 8 * G, STRATA_ALGO_INNET) / 1.75;
    double two = forced_busbw("dgx-h100:2", 8 * G, STRATA_ALGO_NVLSTREE) / 1.875;
    print_message("NVLS algbw: one server %.1f, two servers %.1f GB/s\n", one / 1e9, two / 1e9);
    assert_near(one, 360e9 / 1.325, 0.02 * 360e9 / 1.325);
    assert_near(two, 360e9 / 1.325, 0.02 * 360e9 / 1.325);
    assert_true(fabs(two / one - 1) < 0.01);
    strata_coll_machine_t m = vmachine("dgx-h100:2");
    /* the NICs' time is 0.68 of NVLink's: 8 x 49.7 x 1.325 / 360 = 1.46 */
    assert_near(m.bw_nic * 8 * 1.325 / 360e9, 1.463, 0.005);
}

/* The PCIe read path of GPUDirect RDMA as a cause of rows 7, 10, 14 and
 * 15 (docs/validation.md, checked 2026-12-03): a NIC sends by reading GPU
 * memory, completions coming back at the completer's size. By hand, a
 * x16 link's line rate after 128b/130b is 16 GT/s x 16 x 128/130 / 8 =
 * 31.508 GB/s (Gen4) and 63.015 (Gen5); a CplD costs its payload + 8 B
 * framing and LCRC + 12 B header (3 DW) + 8 B of DLLPs. HDR's goodput is
 * 4 x 50 Gb/s / 8 x 4096/4122 = 24.842 GB/s, NDR's 49.684.
 *   completions at MPS (256 B, the model): x 256/284, 28.401 and 56.803
 *     GB/s: above both NICs, which bind (the rows as predicted);
 *   at a 128 B RCB: x 128/156, 25.853 and 51.705: still above both;
 *   at a 64 B RCB: x 64/92, 21.918 and 43.837: below both, so the ring
 *     over 8 NICs would get 8 x 21.918 = 175.3 GB/s on DGX A100, where
 *     NVIDIA measures 192 (row 1), 4 x 21.918 = 87.7 on 3 x 8 A100 with 4
 *     HDR, measured 96 (row 8), and 8 x 43.837 = 350.7 on 4 x 8 H100,
 *     where NVIDIA gives ~380 (row 19) and four XE9680 measure 365.84
 *     (row 23).
 * No completion size the spec allows lowers the read path into the
 * missing rows' range without putting measured clusters above what it
 * could carry: the read path is not their cause. */
static void test_gdr_read_not_the_cause(void **state)
{
    (void)state;
    strata_error_t err;
    const strata_link_t *g4 = strata_link_find(cat, "pcie4"), *g5 = strata_link_find(cat, "pcie5");
    assert_non_null(g4);
    assert_non_null(g5);
    const double line4 = 16e9 * 16 * 128 / 130 / 8, line5 = 2 * line4;
    const double hdr = 4 * 50e9 / 8 * 4096 / 4122, ndr = 2 * hdr;
    const double rcb[3] = {0, 128, 64}, eta[3] = {256.0 / 284, 128.0 / 156, 64.0 / 92};
    strata_link_gdr_t r4[3], r5[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(strata_link_gdr_read(g4, 16, 256, 512, rcb[i], &r4[i], &err), STRATA_OK);
        assert_int_equal(strata_link_gdr_read(g5, 16, 256, 512, rcb[i], &r5[i], &err), STRATA_OK);
        assert_near(r4[i].bw_dir, line4 * eta[i], 1e6);
        assert_near(r5[i].bw_dir, line5 * eta[i], 1e6);
    }
    /* MPS and 128 B completions: above the NICs' goodput, which binds */
    for (int i = 0; i < 2; i++)
        assert_true(r4[i].bw_dir > hdr && r5[i].bw_dir > ndr);
    /* the machines use the MPS path and the NICs bind */
    strata_coll_machine_t a = vmachine("dgx-a100:2,nics=4"), h = vmachine("dgx-h100:4");
    assert_near(a.bw_gdr_read, r4[0].bw_dir, 1e6);
    assert_near(h.bw_gdr_read, r5[0].bw_dir, 1e6);
    assert_near(a.bw_nic, hdr, 1e7);
    assert_near(h.bw_nic, ndr, 1e7);
    /* 64 B completions: below measurements of healthy clusters */
    assert_true(8 * r4[2].bw_dir < 192e9 && 4 * r4[2].bw_dir < 96e9);
    assert_true(8 * r5[2].bw_dir < 365.84e9 && 8 * r5[2].bw_dir < 380e9);
}

/* Row 38's node count (coreweave/nccl-tests 3b06be7): the commit message
 * says "2-node B200 and H100 base MPIJobs ... (B200 690 GB/s, H100 441
 * GB/s busbw at 8G)", while both manifests it adds or keeps run 8 worker
 * replicas and `mpirun -np 64`. Read as 8 nodes, the B200 figure cannot
 * be met by any schedule over 8 NDR NICs a node: the ring carries
 * busbw <= 8 x 49.684 = 397.5 GB/s (NCCL 2.28.3's choice there), and
 * NVLSTree's double binary tree gives a node inner in one tree and leaf in
 * the other 4 edges, 4/2 n through its 8 NICs, busbw <= 2 x 63/64 x 397.5
 * / 2 = 391.3. Both are below 0.6 x 690: the runs were the 2 nodes the
 * message names, and row 38 (the same job on H100) keeps 2 nodes. */
static void test_coreweave_node_count(void **state)
{
    (void)state;
    const double G = 1 << 30, ndr8 = 8 * 4 * 100e9 / 8 * 4096 / 4122;
    strata_nccl_choice_t c;
    double ring = nccl_busbw(VDATA "hgx-b200.json,servers=8", 8 * G, "2.28.3", &c);
    assert_string_equal(strata_nccl_algo_name(c.algo), "Ring");
    double tree = forced_busbw(VDATA "hgx-b200.json,servers=8", 8 * G, STRATA_ALGO_NVLSTREE);
    print_message("8 x 8 B200: NCCL's ring %.1f, NVLSTree %.1f GB/s (measured 690)\n", ring / 1e9,
                  tree / 1e9);
    assert_true(ring < ndr8 && ring > 0.99 * ndr8);
    assert_true(tree < 2 * 63.0 / 64 * ndr8 / 2);
    assert_true(ring < 0.6 * 690e9 && tree < 0.6 * 690e9);
    /* on 2 nodes the same file is within tolerance (row 37) */
    double two = nccl_busbw(VDATA "hgx-b200.json", 8 * G, "2.28.3", &c);
    assert_true(two / 690e9 > 0.9 && two / 690e9 < 1.1);
}

/* A server with more NICs than GPUs (row 36: 2 GH200 nodes, one GPU and
 * four 200G RoCE ports on the Grace each). NCCL's search lists the NICs
 * the GPU reaches best (ncclTopoSelectNets: all four, each GPU -> C2C ->
 * Grace -> PCIe) and starts channel c at NIC nets[(c + i) mod 4], taking
 * that NIC's bandwidth off for the channel (search.cc
 * ncclTopoSearchRecNet, v2.24.3-1), so its channels use all four NICs:
 * rails = 4 (one owned by the GPU + three it reaches in as few hops).
 * One port by hand (`strata link roce-200g`): 4 lanes x 26.5625 GBd x
 * 2 bit / 8 = 26.5625 GB/s, x 256/257 x 514/544 (transcode, RS FEC) =
 * 25.0 GB/s, x 4096/4178 (RoCEv2 headers per 4 KiB MTU) = 24.5093 GB/s;
 * four: 98.037 GB/s. The ring over n = 2 ranks: 2(n-1) = 2 steps of S/n
 * per rank, all of it through the NICs: t = 2 (S/2) / 98.037 GB/s, algBw
 * = 98.037 and busBw = algBw x 2(n-1)/n = 98.037 GB/s; NCCL 2.24.3 picks
 * Simple (x 1: no LL/LL128 payload loss), and the 2 steps' latency
 * (~2 x 2.5 us against 21.9 ms) takes under 0.05 %. */
static void test_more_nics_than_gpus(void **state)
{
    (void)state;
    strata_coll_machine_t m = vmachine(VDATA "gh200-4x200g.json");
    assert_int_equal(m.per_server, 1);
    assert_int_equal(m.nics, 4);
    assert_int_equal(m.rails, 4);
    strata_nccl_choice_t c;
    double bw = nccl_busbw(VDATA "gh200-4x200g.json", 2.0 * (1 << 30), "2.24.3", &c);
    assert_string_equal(strata_nccl_algo_name(c.algo), "Ring");
    assert_string_equal(strata_nccl_proto_name(c.proto), "Simple");
    double port = 26.5625e9 * 256 / 257 * 514 / 544 * 4096 / 4178;
    assert_rel(bw, 4 * port, 5e-4);
    assert_true(bw < 4 * port);
    /* a hand-filled machine keeps the old rule: rails 0 = min(nics, g) */
    strata_coll_machine_t one = m;
    one.rails = 0;
    strata_coll_cost_t c1, c4;
    strata_error_t err;
    if (strata_coll_cost(&one, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, 2.0 * (1 << 30), &c1,
                         &err) ||
        strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, 2.0 * (1 << 30), &c4, &err))
        fail_msg("%s", err.msg);
    assert_rel(c1.busbw, port, 5e-4);
    assert_rel(c4.busbw, 4 * port, 5e-4);
}

/* NVLS off (NCCL_NVLS_ENABLE=0) and CollNet off: NCCL's model chooses
 * among Tree and Ring (PAT does not run allreduce). The rows priced so
 * say which it picks; this checks it with 2.26.2's model on 20 GB200
 * racks at 4 GiB: Tree/Simple (13.7 ms by NCCL's estimate) against the
 * ring's 2 x 1439 steps (Ring/Simple 26.2 ms, Ring/LL128 18.5 ms). */
static void test_nvls_off_choice(void **state)
{
    (void)state;
    strata_error_t err;
    strata_coll_machine_t m = vmachine("gb200-nvl72:20");
    if (strata_nccl_version_parse("2.26.2", &m.nccl_version, &err)) fail_msg("%s", err.msg);
    double best = INFINITY;
    int best_a = -1;
    for (int a = 0; a < 2; a++) /* nccl_tuner.h order: Tree, Ring */
        for (int p = 0; p < STRATA_NCCL_PROTOS; p++) {
            double t = strata_nccl_model_time(&m, STRATA_COLL_ALLREDUCE, a, p, 4.0 * (1 << 30));
            if (t < best) best = t, best_a = a;
        }
    assert_string_equal(strata_nccl_algo_name(best_a), "Tree");
    double ring = strata_nccl_model_time(&m, STRATA_COLL_ALLREDUCE, 1, 2, 4.0 * (1 << 30));
    assert_true(best > 0.010 && best < 0.020 && ring > 0.020 && ring < 0.035);
}

/* Row 35 (docs/validation.md): where strata's tree on 20 GB200 racks
 * departs from the measured sizes, as a line t = t0 + n / S through 2 and
 * 4 GiB. Measured (coreweave/nccl-tests#48, busbw -> t = 2(P-1)/P n /
 * busbw): 286.52 at 2 GiB is 14.980 ms, 346.38 at 4 GiB 24.782 ms, so
 * 9.802 ms per 2 GiB and t0 = 2 x 14.980 - 24.782 = 5.18 ms. strata's
 * tree: every rank sends 2(g-1)/g n over its scale-up links (tree.c),
 * g = 72, so 2 GiB more costs 1.97222 x 2 GiB / 720 GB/s = 5.882 ms; its
 * fill is charged by the load of each phase (cost.c tree_walk) and the
 * 144 channels' heads are spread over the ranks, so the 2T = 160 fill
 * steps cost little more than their latency: t0 below 1 ms. The miss
 * is then mostly the slope (9.80 against 5.88 ms per 2 GiB: 438 against
 * 730 GB/s of busbw) and the rest the fixed time (5.18 against < 1 ms).
 * The same run to 16 GiB (the repository's README at commit 0120901:
 * 381.48 at 8 GiB, 45.004 ms; 405.74 at 16 GiB, 84.625 ms) gives the same
 * line: 39.62 ms per 8 GiB (busbw 433) and t0 = 2 x 45.004 - 84.625 =
 * 5.38 ms, so the deficit is a rate that holds to 16 GiB, not a pipeline
 * still filling; strata's tree there costs 4 x 5.882 = 23.53 ms per 8 GiB. */
static void test_tree_racks_line(void **state)
{
    (void)state;
    strata_error_t err;
    strata_coll_cost_t c2, c4;
    strata_coll_machine_t m = vmachine("gb200-nvl72:20");
    double G = (double)(1 << 30), P = 1440, g = 72, f = 2 * (P - 1) / P;
    if (strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_TREE, 2 * G, &c2, &err) ||
        strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_TREE, 4 * G, &c4, &err))
        fail_msg("%s", err.msg);
    double slope = 2 * (g - 1) / g * 2 * G / 720e9; /* 5.882 ms */
    assert_rel(m.bw_intra, 720e9, 1e-3);
    assert_rel(c4.time - c2.time, slope, 0.03);
    double t0 = 2 * c2.time - c4.time;
    assert_true(t0 > 0 && t0 < 1e-3);
    double m2 = f * 2 * G / 286.52e9, m4 = f * 4 * G / 346.38e9;
    assert_rel(m4 - m2, 9.802e-3, 1e-3);
    assert_rel(2 * m2 - m4, 5.178e-3, 2e-3);
    strata_coll_cost_t c8, c16;
    if (strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_TREE, 8 * G, &c8, &err) ||
        strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_TREE, 16 * G, &c16, &err))
        fail_msg("%s", err.msg);
    assert_rel(c16.time - c8.time, 4 * slope, 0.03);
    double m8 = f * 8 * G / 381.48e9, m16 = f * 16 * G / 405.74e9;
    assert_rel(m16 - m8, 39.62e-3, 1e-3);
    assert_rel(2 * m8 - m16, 5.38e-3, 5e-3);
    /* one rate from 2 to 16 GiB: the slopes per byte within 2 % */
    assert_rel((m16 - m8) / 8, (m4 - m2) / 2, 0.02);
    print_message("row 35 line 8-16 GiB: measured %.2f ms per 8 GiB (busbw %.0f), t0 %.2f ms; "
                  "strata %.2f ms (busbw %.0f)\n",
                  1e3 * (m16 - m8), f * 8 * G / (m16 - m8) / 1e9, 1e3 * (2 * m8 - m16),
                  1e3 * (c16.time - c8.time), f * 8 * G / (c16.time - c8.time) / 1e9);
    print_message("row 35 line 2-4 GiB: measured %.3f ms per 2 GiB (busbw %.0f), t0 %.2f ms; "
                  "strata %.3f ms (busbw %.0f), t0 %.2f ms\n",
                  1e3 * (m4 - m2), f * 2 * G / (m4 - m2) / 1e9, 1e3 * (2 * m2 - m4),
                  1e3 * (c4.time - c2.time), f * 2 * G / (c4.time - c2.time) / 1e9, 1e3 * t0);
}

/* NVLS on g of an H100 server's 8 GPUs (NVIDIA/nccl#1455: 8 x H100 SXM,
 * NCCL_ALGO=NVLS, all_reduce_perf -b 2G -e 4G -g g). The reporter's busbw:
 * "about 365-370" up to 4 GPUs, then 420, 440, 460 and 480 for 5-8, with
 * algbw 258, 265, 270 and 273 for 5-8 (busbw = algbw x 2(g-1)/g: 412.8,
 * 441.7, 462.9, 477.8, used here; 367.5 for 4). Every GPU keeps its 18
 * NVLink4 links to the 4 NVSwitch chips whatever g, so strata's NVLS law
 * is one curve in g: the traffic down a GPU's links per byte reduced is
 * n (1 + 1/g) (the multicast of every shard, its own reduced shard) +
 * 0.2 n (the switch's read requests, 32 B per 128 B line pulled), and
 * busbw = 2(g-1)/g n / t -> 360 x 2(g-1)/g / (1.2 + 1/g): by hand
 * 372.4, 411.4, 439.0, 459.6, 475.5 for g = 4..8 before latency and fill.
 * The g-dependence is the check: the law is derived once and must follow
 * the measured rise from 4 to 8 GPUs within 3 %. The reporter's 2 and 3
 * GPUs ("365-370", the ring's figure) are left out as likely not NVLS:
 * any NVLS kernel moves
 * at least n (1 + 1/g) into each GPU (every shard's multicast and its own
 * reduced shard), so its busbw is at most 360 x 2(g-1)/g / (1 + 1/g) =
 * 240 at g = 2 and 360 at g = 3, at or below what was measured (NCCL 2.21 to
 * 2.27 does not enable NVLS on 2 GPUs: gpuCount <= 2 in nvls.cc). A cap
 * independent of g, as Blackwell's 810-845 on 8, 72 and 144 GPUs
 * (docs/validation.md, rows 17 and 21), would flatten the rise; on Hopper
 * it does not. */
static void test_nvls_gpu_sweep(void **state)
{
    (void)state;
    static const double measured[] = {367.5, 412.8, 441.7, 462.9, 477.8}; /* g = 4..8 */
    strata_coll_machine_t m = vmachine("dgx-h100");
    assert_rel(m.bw_intra, 360e9, 1e-3);
    for (uint32_t g = 4; g <= 8; g++) {
        strata_error_t err;
        strata_coll_cost_t c;
        m.nranks = m.per_server = g;
        double n = 4.0 * (1 << 30), law = 360 * 2.0 * (g - 1) / g / (1.2 + 1.0 / g);
        if (strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_INNET, n, &c, &err))
            fail_msg("%s", err.msg);
        double busbw = c.busbw / 1e9;
        print_message("H100 NVLS on %u GPUs: law %.1f, strata %.1f, measured %.1f: %+.1f %%\n", g,
                      law, busbw, measured[g - 4], 100 * (busbw / measured[g - 4] - 1));
        assert_true(busbw < law && busbw > 0.97 * law); /* latency and fill: under 3 % at 4 GiB */
        assert_rel(busbw, measured[g - 4], 0.03);
    }
}

/* Acceptance floors (docs/validation.md): Azure's health checks fail a
 * node whose rccl-tests / nccl-tests allreduce busbw at 16 GiB, one
 * process per GPU on one node, falls below the floor, so a healthy node's
 * figure lies above it; a prediction must too, and within 10 %.
 * Azure/azurehpc-health-checks conf/nd96isr_*_v5.conf (check_rccl_allreduce
 * 314 1 16G; check_nccl_allreduce 460.0 / 431.0 1 16G). MI300X: 7 mesh
 * rings of xGMI at AMD's usable 48 GB/s = 336 (+7.0 %); at the signalling
 * rate, 64, it was 448 (+42.7 %). ND A100 v4 (conf/nd96asr_v4.conf,
 * 8 x A100 SXM4 40GB): check_nccl_allreduce 228.0 10 <topology> 8G, at
 * 8 GiB: the ring over 12 NVLink3 links x 20 GB/s after the packet step,
 * busbw -> 240 less 14 steps of latency (row 3's 239.9, +5.2 %); ND A100
 * v4 80GB (conf/nd96amsr_a100_v4.conf): the same floor at 4G. */
static void test_acceptance_floors(void **state)
{
    (void)state;
    static const struct {
        const char *what, *spec, *algo;
        double floor, bytes, hi; /* hi: accepted predicted/floor */
    } f[] = {
        {"ND MI300X v5 (RCCL)", "mi300x", "Ring", 314, 16.0 * (1 << 30), 1.10},
        {"ND H100 v5", "dgx-h100", "NVLS", 460, 16.0 * (1 << 30), 1.10},
        {"ND H200 v5", "hgx-h200", "NVLS", 431, 16.0 * (1 << 30), 1.10},
        {"ND A100 v4", "dgx-a100,memory=hbm-a100-40", "Ring", 228, 8.0 * (1 << 30), 1.10},
        {"ND A100 v4 80GB", "dgx-a100", "Ring", 228, 4.0 * (1 << 30), 1.10},
        /* ND GB200 v6, one tray of 4 B200 (conf/nd128isr_ndr_gb200_v6.conf,
         * check_nccl_allreduce 432.0 1 16G): NCCL's model runs the ring over
         * 18 NVLink5 links x 40 GB/s after the packet step, busbw -> 720
         * less 6 steps of latency = 719.9, 1.67 x the floor. A floor this
         * far below bounds nothing; pinned so that a change shows */
        {"ND GB200 v6 (one tray)", VDATA "gb200-tray.json", "Ring", 432, 16.0 * (1 << 30), 1.70},
    };
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        strata_nccl_choice_t c;
        double r = nccl_busbw(f[i].spec, f[i].bytes, NULL, &c) / (f[i].floor * 1e9);
        print_message("%-22s NCCL %s/%s: predicted %6.1f GB/s, floor %6.1f: %+5.1f %%\n", f[i].what,
                      strata_nccl_algo_name(c.algo), strata_nccl_proto_name(c.proto),
                      r * f[i].floor, f[i].floor, 100 * (r - 1));
        assert_string_equal(strata_nccl_algo_name(c.algo), f[i].algo);
        if (!(r >= 1 && r <= f[i].hi))
            fail_msg("%s: predicted/floor %.3f outside [1, %.2f]", f[i].what, r, f[i].hi);
    }
}

/* The table's row named `what` (vcases). */
static const vcase_t *vrow(const char *what)
{
    for (size_t i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++)
        if (!strcmp(vcases[i].what, what)) return &vcases[i];
    fail_msg("no row %s", what);
    return NULL;
}

/* A row's schedule (NCCL's choice, or the forced one) priced with the
 * NICs' rate scaled by f: predicted / measured busbw, and the bound. */
static double nic_scaled(const vcase_t *v, double f, const char **bound)
{
    strata_error_t err;
    strata_coll_machine_t m = vmachine(v->spec);
    strata_algo_t algo = (strata_algo_t)(v->forced - 1);
    if (!v->forced) {
        strata_nccl_choice_t c;
        nccl_busbw(v->spec, v->bytes, v->version, &c);
        algo = c.cost.algo;
    }
    m.bw_nic *= f;
    strata_coll_cost_t cost;
    if (strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, algo, v->bytes, &cost, &err))
        fail_msg("%s", err.msg);
    if (bound) *bound = cost.bound;
    return cost.busbw / (v->measured * 1e9);
}

/* The NIC factors f in [0.5, 1.5] that keep a row within 10 %: predicted
 * / measured does not fall as f grows, so each end is a bisection (the
 * top is 1.5 where another bound takes over first). */
static void nic_window(const vcase_t *v, double *lo, double *hi)
{
    double a = 0.5, b = 1.5;
    for (int i = 0; i < 30; i++) {
        double f = (a + b) / 2;
        *(nic_scaled(v, f, NULL) >= 0.9 ? &b : &a) = f;
    }
    *lo = b;
    a = 0.5, b = 1.5;
    if (nic_scaled(v, 1.5, NULL) <= 1.1) b = a = 1.5;
    for (int i = 0; i < 30 && a < b; i++) {
        double f = (a + b) / 2;
        *(nic_scaled(v, f, NULL) <= 1.1 ? &a : &b) = f;
    }
    *hi = a;
}

/* Issue 11's common deficit across servers (docs/validation.md, "One
 * factor for the misses?", 2026-12-03): could one NIC rate below strata's
 * put rows 7, 14 and 15 in tolerance without taking out the rows of the
 * same hardware that are in it? Every row of the table whose schedule
 * strata bounds by the NICs on x86 servers (GPUDirect through a PCIe
 * switch, as in the misses) is priced with bw_nic x f; each row allows the
 * f with predicted/measured in [0.9, 1.1]. By hand, ignoring the fixed
 * time (under 0.3 % of these sizes), a row allows f in [0.9 M/P, 1.1 M/P]
 * with P the prediction and M the measurement: the highest floor is row
 * 13's 0.9 x 375 / 377.3 = 0.8945 (4 x 8 H100, NVLSTree, NIC-bound), the
 * lowest ceiling row 15's 1.1 x 320 / 390.7 = 0.9009: a window 0.6 %
 * wide. With the Grace rows (24-27, 36: GPUDirect over C2C) it closes:
 * row 25's floor is 0.9 x 234.43 / 233.3 = 0.9044 by hand (0.9008 with the
 * fixed time), at the ceiling. NVIDIA's maintainers' per-NIC figures, 48
 * GB/s from a CX7 (nccl-tests#319) and 24 from a 200G NIC
 * (nccl-tests#119), are 48 / 49.684 = 24 / 24.842 = 0.966 of strata's
 * rates: above the window, so rows 14 and 15 stay misses at them (by hand
 * 1.1985 x 0.966 = 1.158 and 1.2208 x 0.966 = 1.179). A factor inside the
 * window is what the data fits, not what a source derives; it is not
 * modelled. */
static void test_one_nic_factor(void **state)
{
    (void)state;
    const char *x86[] = {"DGX A100 x4, 8xHDR",        "2x8 A100, 4xHDR",
                         "3x8 A100, 4xHDR, 128 MiB",  "DGX-1 x2, 4xEDR",
                         "2x8 A100, 4xHDR (#100)",    "2x8 H100, 4xNDR",
                         "H100 NVLSTree (GTC 2024)",  "4x8 H100 NDR (Voltage Park)",
                         "4x8 H100 RoCE (nccl#1221)", "H100 ring (GTC 2024)",
                         "4x8 H100 NDR (XE9680)",     "2x8 B200 NDR (CoreWeave)"};
    const char *grace[] = {"3 GB200 NVL4 ring (#1801)", "3 GB200 NVL4 tree (#1801)",
                           "3 GB200 NVL8 ring (#1801)", "3 GB200 NVL8 tree (#1801)",
                           "2 GH200, 4x200G (#1579)"};
    const size_t nx = sizeof(x86) / sizeof(x86[0]), ng = sizeof(grace) / sizeof(grace[0]);
    double lo = 0, hi = 2, glo = 0, ghi = 2;
    for (size_t i = 0; i < nx + ng; i++) {
        const vcase_t *v = vrow(i < nx ? x86[i] : grace[i - nx]);
        const char *bound;
        double a, b;
        nic_scaled(v, 1, &bound);
        assert_string_equal(bound, "network bandwidth");
        nic_window(v, &a, &b);
        print_message("%-28s NICs x f within 10 %% for f in [%.4f, %.4f]\n", v->what, a, b);
        if (i < nx) lo = fmax(lo, a), hi = fmin(hi, b);
        glo = fmax(glo, a), ghi = fmin(ghi, b);
    }
    print_message("one NIC factor: x86 rows [%.4f, %.4f], with the Grace rows [%.4f, %.4f]\n", lo,
                  hi, glo, ghi);
    assert_near(lo, 0.8945, 0.003);
    assert_near(hi, 0.9009, 0.003);
    assert_true(hi - lo < 0.01);
    assert_true(ghi - glo < 0.001);
    /* the per-NIC rates NVIDIA's maintainers state leave rows 14 and 15 out */
    assert_near(48 / 49.684, 24 / 24.842, 1e-3);
    const double nv = 48 / 49.684;
    assert_true(nv > hi);
    assert_near(nic_scaled(vrow("4x8 H100 NDR (Voltage Park)"), nv, NULL), 1.158, 0.003);
    assert_near(nic_scaled(vrow("4x8 H100 RoCE (nccl#1221)"), nv, NULL), 1.179, 0.003);
    /* what a factor fitted mid-window (0.8967) would do: by hand with f x
     * P, rows 1, 8, 9, 11 and 13 fall to -7 ... -10 %, the twelve rows'
     * mean |error| goes from 8.0 % to 6.5 % and the table's from 8.2 % to
     * 7.7 %, rows 16, 17, 21, 35 and 38 still out: no target met */
    const double mid = (lo + hi) / 2;
    size_t nv_rows = sizeof(vcases) / sizeof(vcases[0]);
    double x0 = 0, x1 = 0, a0 = 0, a1 = 0;
    int out = 0;
    for (size_t i = 0; i < nv_rows; i++) {
        bool fitted = false;
        for (size_t k = 0; k < nx; k++)
            fitted |= !strcmp(vcases[i].what, x86[k]);
        double r0 = nic_scaled(&vcases[i], 1, NULL),
               r1 = fitted ? nic_scaled(&vcases[i], mid, NULL) : r0;
        a0 += fabs(r0 - 1), a1 += fabs(r1 - 1);
        if (fitted) x0 += fabs(r0 - 1), x1 += fabs(r1 - 1);
        out += fabs(r1 - 1) > 0.1;
    }
    print_message(
        "fitted %.4f: x86 NIC rows %.1f %% -> %.1f %%, all rows %.1f %% -> %.1f %%, %d out\n", mid,
        100 * x0 / nx, 100 * x1 / nx, 100 * a0 / nv_rows, 100 * a1 / nv_rows, out);
    assert_near(x0 / nx, 0.080, 0.002);
    assert_near(x1 / nx, 0.065, 0.002);
    assert_near(a0 / nv_rows, 0.082, 0.002);
    assert_near(a1 / nv_rows, 0.077, 0.002);
    assert_int_equal(out, 5);
}

/* The same question for the two-server NVLSTree rows, which strata bounds
 * by NVLink (rows 5, 6, 16, 22, 38): a factor g on their busbw keeps each
 * within 10 % for g in [0.9 M/P, 1.1 M/P], P from the model. By hand with
 * the table's P: floors 0.9 x 458.7 / 486.1 = 0.849, 0.9 x 483.8 / 495.8
 * = 0.878 (row 6, the highest), 0.772, 0.843, 0.791; ceilings 1.038,
 * 1.073, 1.1 x 430 / 501.0 = 0.944 (row 16, the lowest), 1.031, 0.967: g
 * in [0.878, 0.944]. The open candidate (docs/validation.md, NCCL's warp
 * split: a child channel's 5 of 7 reduce warps, half the channels a
 * child) gives g = (1 + 5/7) / 2 = 0.857 on every Hopper pair, below the
 * window: it would put row 6 (2 x 8 H200, the same kernel and NVLink) at
 * 0.857 x 495.8 / 483.8 - 1 = -12.2 %. At full strength it is ruled out;
 * a part of it would need a per-warp rate no source gives. */
static void test_two_server_nvls_factor(void **state)
{
    (void)state;
    const char *rows[] = {"2x8 H200 1 GiB", "2x8 H200 3 GiB", "2x8 H100 RoCE (nccl#1221)",
                          "2x8 H100 NDR (XE9680)", "2x8 H100 NDR (CoreWeave)"};
    double lo = 0, hi = 2;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const vcase_t *v = vrow(rows[i]);
        strata_nccl_choice_t c;
        double r = nccl_busbw(v->spec, v->bytes, v->version, &c) / (v->measured * 1e9);
        assert_string_equal(strata_nccl_algo_name(c.algo), "NVLSTree");
        assert_string_equal(c.cost.bound, "scale-up bandwidth");
        lo = fmax(lo, 0.9 / r), hi = fmin(hi, 1.1 / r);
    }
    print_message("one two-server NVLS factor: [%.4f, %.4f]\n", lo, hi);
    assert_near(lo, 0.878, 0.002);
    assert_near(hi, 0.944, 0.002);
    const double warp = (1 + 5.0 / 7) / 2;
    assert_near(warp, 0.857, 0.001);
    assert_true(warp < lo);
    const vcase_t *h200 = vrow("2x8 H200 3 GiB");
    strata_nccl_choice_t c;
    assert_near(warp * nccl_busbw(h200->spec, h200->bytes, NULL, &c) / (h200->measured * 1e9) - 1,
                -0.122, 0.002);
}

/* Bounded buffers as a rate (docs/validation.md, (8)): a channel holds
 * NCCL_STEPS = 8 steps in flight. The ring's Simple step is 4 MiB / 8 =
 * 512 KiB, and each NIC carries two of the 16 channels (NCCL's search: 8
 * channels of 45 GB/s, doubled by connect.cc), so 8 MiB is in flight
 * through a NIC each way: by hand 8 x 2^20 / 49.684e9 = 168.8 us, the
 * round trip a step would need before the window binds. Two servers'
 * NVLSTree: 16 channels (SM90), 128 KiB chunks (below 4 nodes), a head's
 * NIC carrying 1/8 of the data: 16 MiB in flight against algbw / 8, by
 * hand 16 x 2^20 / (267.5e9 / 8) = 501.7 us. Both are over twenty times
 * strata's network latency per hop: the buffers do not bind. */
static void test_bounded_buffers(void **state)
{
    (void)state;
    const double MiB = 1 << 20, G = 1 << 30;
    strata_coll_machine_t m = vmachine("dgx-h100:4");
    double ring = 2 * 8 * 512 * 1024 / m.bw_nic;
    assert_near(ring, 168.8e-6, 0.2e-6);
    strata_nccl_choice_t c;
    nccl_busbw("dgx-h100:2", 8 * G, "2.28.3", &c);
    assert_string_equal(strata_nccl_algo_name(c.algo), "NVLSTree");
    double tree = 16 * 8 * 128 * 1024 / (c.cost.algbw / 8);
    assert_near(c.cost.algbw, 267.5e9, 0.1e9);
    assert_near(tree, 16 * MiB / (267.5e9 / 8), 0.5e-6);
    assert_true(ring > 20 * m.lat_inter && tree > 20 * m.lat_inter);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_latency_examples),
        cmocka_unit_test(test_bandwidth_by_hand),
        cmocka_unit_test(test_nvls_across_servers),
        cmocka_unit_test(test_choices),
        cmocka_unit_test(test_protocol_price),
        cmocka_unit_test(test_library_labels),
        cmocka_unit_test(test_public_measurements),
        cmocka_unit_test(test_more_nics_than_gpus),
        cmocka_unit_test(test_nvls_off_choice),
        cmocka_unit_test(test_tree_racks_line),
        cmocka_unit_test(test_nvls_gpu_sweep),
        cmocka_unit_test(test_acceptance_floors),
        cmocka_unit_test(test_releases),
        cmocka_unit_test(test_version_parse),
        cmocka_unit_test(test_one_cluster_one_deficit),
        cmocka_unit_test(test_gdr_read_not_the_cause),
        cmocka_unit_test(test_deficit_is_a_rate),
        cmocka_unit_test(test_nvlstree_two_servers_as_one),
        cmocka_unit_test(test_coreweave_node_count),
        cmocka_unit_test(test_one_nic_factor),
        cmocka_unit_test(test_two_server_nvls_factor),
        cmocka_unit_test(test_bounded_buffers),
    };
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, setup, teardown);
}
