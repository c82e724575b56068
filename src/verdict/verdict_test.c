/*
 * verdict_test.c — the verdict's figures against values derived by hand
 * (a torus's tiers) and against the layers' own APIs called directly (the
 * model's selection, the crossovers), its conclusion on a server cluster,
 * and its errors.
 */
#define _GNU_SOURCE /* mkstemps, fdopen in test.h */
#include "test.h"
#include "verdict.h"

static strata_link_catalog_t *cat;

static int setup(void **state)
{
    (void)state;
    return strata_link_catalog_load(NULL, &cat, NULL) == STRATA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    strata_link_catalog_destroy(cat);
    return 0;
}

static strata_topo_t *load(const char *spec)
{
    strata_topo_t *t = NULL;
    strata_error_t err;
    if (strata_topo_load_spec(spec, cat, &t, &err) != STRATA_OK) fail_msg("%s: %s", spec, err.msg);
    return t;
}

/* torus:4x4,bw=50: every GPU has 4 links (two per dimension, wrapping) of
 * 50 GB/s per direction, all scale-up: 4 x 50 = 200 GB/s per GPU; no host
 * or network tier. */
static void test_torus_tiers(void **state)
{
    (void)state;
    strata_topo_t *t = load("torus:4x4,bw=50");
    strata_verdict_t *v = NULL;
    assert_int_equal(strata_verdict_create(t, cat, NULL, &v, NULL), STRATA_OK);
    assert_int_equal(v->gpus, 16);
    assert_rel(v->tiers.bw[STRATA_TIER_UP], 200e9, 1e-9);
    assert_near(v->tiers.bw[STRATA_TIER_HOST], 0, 0);
    assert_near(v->tiers.bw[STRATA_TIER_NET], 0, 0);
    assert_near(v->tiers.latency[STRATA_TIER_NET], 0, 0);
    /* curves: 1 KiB doubling to 8 GiB */
    assert_near(v->sizes[0], 1024, 0);
    assert_near(v->sizes[STRATA_VERDICT_SIZES - 1], 8589934592.0, 0);
    /* the selection at 1 GiB is the model's own, called directly */
    strata_coll_cost_t best;
    assert_int_equal(
        strata_coll_select(&v->machine, STRATA_COLL_ALLREDUCE, 1073741824.0, &best, NULL),
        STRATA_OK);
    assert_int_equal(v->best.algo, best.algo);
    assert_rel(v->best.busbw, best.busbw, 1e-12);
    assert_int_equal(v->chosen[20], (int)best.algo); /* 1024 x 2^20 = 1 GiB */
    /* the busbw table is strata_coll_cost's, algorithm by algorithm */
    strata_coll_cost_t ring;
    assert_int_equal(
        strata_coll_cost(&v->machine, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, 65536, &ring, NULL),
        STRATA_OK);
    assert_rel(v->busbw[STRATA_ALGO_RING][6], ring.busbw, 1e-12); /* 1024 x 2^6 = 64 KiB */
    /* the collective table: 1 KiB x 8^k, k = 0..7 (1 KiB .. 2 GiB); its
     * AlltoAll at 2 GiB is the model's selection called directly */
    assert_near(v->table_sizes[0], 1024, 0);
    assert_near(v->table_sizes[7], 2147483648.0, 0);
    assert_int_equal(v->table_ops[2], STRATA_COLL_ALLTOALL);
    strata_coll_cost_t a2a;
    assert_int_equal(
        strata_coll_select(&v->machine, STRATA_COLL_ALLTOALL, 2147483648.0, &a2a, NULL), STRATA_OK);
    assert_true(v->table_ok[2][7]);
    assert_int_equal(v->table[2][7].algo, a2a.algo);
    assert_rel(v->table[2][7].busbw, a2a.busbw, 1e-12);
    /* shares of the best algorithm's time add up to its time */
    assert_true(v->have_sim);
    assert_true(v->lat_share >= 0 && v->lat_share <= 1);
    strata_verdict_destroy(v);
    strata_topo_destroy(t);
}

/* dgx-a100:2: 16 A100 on NVLink3 (12 links x 25 GB/s per direction raw per
 * GPU) and 8 HDR NICs per server, one per GPU: the scale-out tier per GPU
 * is one NIC's goodput, the widest link kinds nvlink3 and ib-hdr; the
 * bounding layer of the chosen algorithm is the tier its model bound names. */
static void test_dgx_a100(void **state)
{
    (void)state;
    strata_topo_t *t = load("dgx-a100:2");
    strata_verdict_t *v = NULL;
    assert_int_equal(strata_verdict_create(t, cat, NULL, &v, NULL), STRATA_OK);
    assert_int_equal(v->servers, 2);
    assert_string_equal(v->tiers.kind[STRATA_TIER_UP], "nvlink3");
    assert_string_equal(v->tiers.kind[STRATA_TIER_NET], "ib-hdr");
    /* one NIC per GPU: the net tier per GPU is the bandwidth of one nic-leaf link */
    double nic = 0;
    for (int32_t i = 0; i < strata_topo_link_count(t); i++) {
        strata_topo_link_t l = strata_topo_link(t, i);
        if (strcmp(l.kind, "ib-hdr") == 0) nic = l.bw_dir > nic ? l.bw_dir : nic;
    }
    assert_rel(v->tiers.bw[STRATA_TIER_NET], nic, 1e-9);
    assert_true(v->have_best);
    if (strcmp(v->best.bound, "scale-up bandwidth") == 0) {
        assert_string_equal(v->layer, "scale-up");
        assert_rel(v->layer_bw, v->tiers.bw[STRATA_TIER_UP], 1e-12);
    } else if (strcmp(v->best.bound, "network bandwidth") == 0) {
        assert_string_equal(v->layer, "scale-out network");
    }
    /* the simulated ring's bound is a scale-out class (the ring crosses the
     * network once per server boundary at one NIC's rate) */
    assert_true(v->sim_top >= 0);
    assert_string_equal(v->sim_layer, "scale-out network");
    assert_rel(v->best_over_sim, v->best.busbw / v->sim.busbw, 1e-12);
    strata_verdict_destroy(v);
    strata_topo_destroy(t);
}

/* pcie-8gpu: 8 GPUs, PCIe 4.0 x16 peers, no NVLink. NCCL moves the data
 * between PCIe peers with SM stores, one 128 B line per TLP: 16 GT/s x 16
 * lanes x 128/130 / 8 = 31.51 GB/s of line, of which 128/(128+24) carry
 * data, and one 8 B DLLP per TLP of 152 B (cost_test's store share): 31.51 x
 * 128/152 x 152/160 = 31.51 x 0.8 = 25.21 GB/s. The bound line names the
 * host/PCIe layer at that figure, the one the ring's busbw reaches, not the
 * link's copy-engine rate (28.0 GB/s) it printed before. */
static void test_pcie_bound(void **state)
{
    (void)state;
    strata_topo_t *t = load("pcie-8gpu");
    strata_verdict_t *v = NULL;
    assert_int_equal(strata_verdict_create(t, cat, NULL, &v, NULL), STRATA_OK);
    assert_string_equal(v->best.bound, "scale-up bandwidth");
    assert_string_equal(v->layer, "host/PCIe");
    double hand = 16e9 * 16 * 128 / 130 / 8 * 0.8;
    assert_rel(v->layer_bw, hand, 1e-3);
    assert_true(v->tiers.bw[STRATA_TIER_HOST] > 27.9e9); /* the layer figure stays the link's */
    assert_rel(v->best.busbw, v->layer_bw, 0.01);        /* 1 GiB ring: within 1 % */
    strata_verdict_destroy(v);
    strata_topo_destroy(t);
}

/* no_sim: the model's figures, no simulated ring */
static void test_no_sim(void **state)
{
    (void)state;
    strata_topo_t *t = load("torus:4x4,bw=50");
    strata_verdict_t *v = NULL;
    strata_verdict_opts_t o = {.no_sim = true};
    assert_int_equal(strata_verdict_create(t, cat, &o, &v, NULL), STRATA_OK);
    assert_false(v->have_sim);
    assert_int_equal(v->sim_top, -1);
    assert_true(v->have_best);
    strata_verdict_destroy(v);
    strata_topo_destroy(t);
}

static void test_workload(void **state)
{
    (void)state;
    strata_topo_t *t = load("torus:4x4,bw=50");
    strata_verdict_t *v = NULL;
    strata_error_t err;
    /* a builder spec records no accelerator memory: not planned, said why */
    strata_verdict_opts_t o = {.workload = "llama3-8b"};
    assert_int_equal(strata_verdict_create(t, cat, &o, &v, &err), STRATA_OK);
    assert_false(v->have_plan);
    assert_string_equal(v->plan_skip, "no accelerator memory recorded");
    strata_verdict_destroy(v);
    v = NULL;
    o.workload = "no-such-model";
    assert_int_not_equal(strata_verdict_create(t, cat, &o, &v, &err), STRATA_OK);
    assert_null(v);
    assert_non_null(strstr(err.msg, "no-such-model"));
    assert_int_equal(strata_verdict_create(NULL, cat, NULL, &v, &err), STRATA_ERR_INVALID);
    strata_verdict_destroy(NULL);
    strata_topo_destroy(t);
}

/* The links section of torus:4x4,bw=50 by hand: 16 GPUs, 32 custom links
 * of 50 GB/s (each GPU has 4, two per dimension); one scale-up row
 * "gpu-gpu" counted once per accelerator end: 2 x 32 / 16 = 4 links and
 * 4 x 50 = 200 GB/s per GPU; no NIC, no network, no data-link figure. */
static void test_links_torus(void **state)
{
    (void)state;
    strata_topo_t *t = load("torus:4x4,bw=50");
    strata_verdict_t *v = NULL;
    strata_verdict_opts_t o = {.sections = 1u << STRATA_VERDICT_LINKS};
    assert_int_equal(strata_verdict_create(t, cat, &o, &v, NULL), STRATA_OK);
    assert_false(v->have_sim); /* only the links asked for: no ring */
    assert_int_equal(v->links.nrows, 1);
    const strata_verdict_link_row_t *r = &v->links.rows[0];
    assert_int_equal(r->tier, STRATA_TIER_UP);
    assert_string_equal(r->between, "gpu-gpu");
    assert_int_equal(r->count, 32);
    assert_rel(r->per_link, 50e9, 1e-12);
    assert_rel(r->links_per_gpu, 4, 1e-12);
    assert_rel(r->per_gpu, 200e9, 1e-12);
    assert_int_equal(v->links.nic_host, -1);
    assert_int_equal(v->links.nic_port, -1);
    assert_string_equal(v->links.net_link, "");
    assert_near(v->links.crossover[STRATA_TIER_NET], 0, 0);
    /* the row's latency x the tier's per-GPU bandwidth */
    assert_rel(v->links.crossover[STRATA_TIER_UP] + 1, r->latency * 200e9 + 1, 1e-12);
    strata_verdict_destroy(v);
    strata_topo_destroy(t);
}

/* dgx-a100:2's scale-out link is InfiniBand HDR: credits, not PFC; its
 * round trip and buffer are the data-link models' own figures over 30 m
 * (called here directly on the catalog entry); a NIC sits behind a PCIe
 * row and on a network row. */
static void test_links_credits(void **state)
{
    (void)state;
    strata_topo_t *t = load("dgx-a100:2");
    strata_verdict_links_t l;
    strata_verdict_links(t, cat, &l);
    assert_string_equal(l.net_link, "ib-hdr");
    assert_false(l.ethernet);
    const strata_link_t *hdr = strata_link_find(cat, "ib-hdr");
    double rtt = strata_link_rtt(hdr->line_dir, 30.0, hdr->wire);
    assert_rel(l.rtt, rtt, 1e-12);
    assert_rel(l.credit_buffer, strata_credit_buffer(hdr->line_dir, rtt), 1e-12);
    assert_true(l.nic_host >= 0 && l.nic_port >= 0);
    assert_int_equal(l.rows[l.nic_host].tier, STRATA_TIER_HOST);
    assert_int_equal(l.rows[l.nic_port].tier, STRATA_TIER_NET);
    assert_non_null(strstr(l.rows[l.nic_port].between, "nic"));
    /* rows come in tier order */
    for (int i = 1; i < l.nrows; i++)
        assert_true(l.rows[i - 1].tier <= l.rows[i].tier);
    strata_topo_destroy(t);
}

/* The topology section of torus:4x4: diameter 2 + 2 = 4 hops; the
 * neighbour path one 50 GB/s hop; with no servers the far path goes to the
 * farthest rank, 4 hops away. */
static void test_topology(void **state)
{
    (void)state;
    strata_topo_t *t = load("torus:4x4,bw=50");
    strata_verdict_t *v = NULL;
    strata_verdict_opts_t o = {.sections = 1u << STRATA_VERDICT_TOPOLOGY};
    assert_int_equal(strata_verdict_create(t, cat, &o, &v, NULL), STRATA_OK);
    const strata_verdict_topo_t *g = &v->topology;
    assert_int_equal(g->metrics.diameter, 4);
    assert_true(g->near.ok);
    assert_int_equal(g->near.nhops, 1);
    assert_rel(g->near.bw, 50e9, 1e-12);
    assert_true(g->far.ok);
    assert_false(g->far_across);
    assert_int_equal(g->far.nhops, 4);
    assert_int_equal(v->links.nrows, 0); /* not asked for */
    strata_verdict_destroy(v);
    strata_topo_destroy(t);
}

/* The sim section: the spread ring is the bottleneck's own, the other two
 * routings are the ring simulated under them directly; torus has no
 * network, so no at-scale rings even with a spec. */
static void test_routings(void **state)
{
    (void)state;
    strata_topo_t *t = load("torus:4x4,bw=50");
    strata_verdict_t *v = NULL;
    strata_verdict_opts_t o = {.spec = "torus:4x4,bw=50"};
    assert_int_equal(strata_verdict_create(t, cat, &o, &v, NULL), STRATA_OK);
    assert_true(v->have_routings);
    assert_string_equal(v->routings.spec, "torus:4x4,bw=50");
    assert_int_equal(v->routings.gpus, 16);
    assert_rel(v->routings.spread.time, v->sim.time, 1e-12);
    strata_sim_result_t r = {0};
    assert_int_equal(strata_verdict_sim_ring(t, STRATA_SIM_ECMP, STRATA_VERDICT_QPS, 1, &r, NULL),
                     STRATA_OK);
    assert_rel(v->routings.qps.time, r.time, 1e-12);
    strata_sim_result_free(&r);
    assert_false(v->have_scale);
    assert_string_equal(v->scale_skip, "");
    assert_string_equal(strata_verdict_section_name(STRATA_VERDICT_SIM), "sim");
    assert_int_equal(strata_verdict_section_find("bottleneck"), STRATA_VERDICT_BOTTLENECK);
    assert_int_equal(strata_verdict_section_find("host"), -1);
    strata_verdict_destroy(v);
    strata_topo_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torus_tiers),   cmocka_unit_test(test_dgx_a100),
        cmocka_unit_test(test_pcie_bound),    cmocka_unit_test(test_no_sim),
        cmocka_unit_test(test_workload),      cmocka_unit_test(test_links_torus),
        cmocka_unit_test(test_links_credits), cmocka_unit_test(test_topology),
        cmocka_unit_test(test_routings),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
