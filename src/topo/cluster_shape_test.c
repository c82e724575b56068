/*
 * cluster_shape_test.c — what preset-built (hand-wired) clusters inherit
 * from the core: the closed-form bisection derived from the real server
 * (checked against the exhaustive search and hand arithmetic), exact hops
 * by symmetry (checked against every pair routed one by one), each GPU on
 * its own rail's NIC, and the cross-rail route of a rail-optimised
 * cluster (hops and the tier of every switch crossed, by hand).
 */
#define _DEFAULT_SOURCE
#include "topo.h"
#include "topoio_test.h"
#include "brute_hops_test.h"

static strata_topo_t *load(const char *spec)
{
    strata_topo_t *t = NULL;
    strata_error_t err;
    must(strata_topo_load_spec(spec, cat, &t, &err), &err);
    return t;
}

static double bw(const char *kind)
{
    return strata_link_find(cat, kind)->bw_dir;
}

static strata_topo_bisection_t bisection(const strata_topo_t *t, strata_bisect_method_t m)
{
    strata_topo_bisection_t b;
    strata_error_t err;
    must(strata_topo_bisection(t, m, &b, &err), &err);
    return b;
}

/* ==== Closed form on preset clusters ==== */

/* The closed form must exist, equal want, and equal the exhaustive search
 * over all C(15, 7) = 6,435 balanced partitions of the 16 GPUs. */
static void check_closed(const char *spec, double want)
{
    strata_topo_t *t = load(spec);
    strata_topo_bisection_t c = bisection(t, STRATA_BISECT_AUTO);
    if (c.method != STRATA_BISECT_CLOSED) fail_msg("%s: %s", spec, c.how);
    assert_rel(c.bw, want, 1e-9);
    assert_rel(bisection(t, STRATA_BISECT_EXHAUSTIVE).bw, want, 1e-9);
    strata_topo_destroy(t);
}

static void test_preset_closed_form(void **state)
{
    (void)state;
    /* 2 servers: the cut is one server's egress, its 8 NIC up-links (each
     * GPU reaches its NIC through a PCIe switch at least as fast as the
     * port: pcie5 56 > NDR 49.7, pcie4 28 > HDR 24.8, pcie5 > 400G RoCE 49). */
    check_closed("dgx-h100:2", 8 * bw("ib-ndr"));
    check_closed("dgx-a100:2", 8 * bw("ib-hdr"));
    check_closed("mi300x:2", 8 * bw("roce-400g"));
    check_closed("hgx-h200:2", 8 * bw("roce-400g"));
    /* 910B: NIC i hangs off NPU i directly (pcie5 56 > 200G RoCE 24.5). */
    check_closed("ascend-910b:2", 8 * bw("roce-200g"));
    /* DGX-1: 4 EDR NICs, one per PCIe switch shared by 2 GPUs: each GPU
     * sends 12.4/2 over its pcie3 link, the NIC link is the cut. */
    check_closed("dgx-1v:2", 4 * bw("ib-edr"));
    /* PCIe only: 4 × 200G, GPUs spread 2 per switch (pcie4 28 each). */
    check_closed("pcie-8gpu:2", 4 * bw("roce-200g"));
    /* 4 servers: half of them (2) × 8 NDR. */
    strata_topo_t *t = load("dgx-h100:4");
    strata_topo_bisection_t b = bisection(t, STRATA_BISECT_AUTO);
    assert_int_equal(b.method, STRATA_BISECT_CLOSED);
    assert_rel(b.bw, 2 * 8 * bw("ib-ndr"), 1e-9);
    strata_topo_destroy(t);
    /* 3 tiers (radix 16: pods of 8 rail leaves = one block of 8 servers):
     * 16 servers × 8 NDR; the bound's rank-halves cut is that same cut, and
     * no structural cut may go below an exact bisection. */
    t = load("dgx-h100:32,radix=16");
    b = bisection(t, STRATA_BISECT_AUTO);
    assert_int_equal(b.method, STRATA_BISECT_CLOSED);
    assert_rel(b.bw, 16 * 8 * bw("ib-ndr"), 1e-9);
    assert_rel(bisection(t, STRATA_BISECT_BOUND).bw, b.bw, 1e-9);
    strata_topo_destroy(t);
    /* 2:1 at the leaves, 64 servers on radix 16 (3 tiers, pods of one
     * block): the network share halves, 32 × 8 × NDR / 2. */
    t = load("dgx-h100:64,radix=16,oversub=2");
    b = bisection(t, STRATA_BISECT_AUTO);
    assert_int_equal(b.method, STRATA_BISECT_CLOSED);
    assert_rel(b.bw, 32 * 4 * bw("ib-ndr"), 1e-9);
    strata_topo_destroy(t);
    /* But 2:1 with both servers in one rail block: every rail leaf holds a
     * NIC of each server, so the tree's half-cut is no cut around a server,
     * and the servers-halves cut is the 8 NIC links themselves, not 8 × NDR
     * / 2: no closed form is claimed, the exhaustive search gives 8 × NDR. */
    t = load("dgx-h100:2,oversub=2");
    b = bisection(t, STRATA_BISECT_AUTO);
    assert_int_equal(b.method, STRATA_BISECT_EXHAUSTIVE);
    assert_rel(b.bw, 8 * bw("ib-ndr"), 1e-9);
    strata_topo_destroy(t);
}

/* The same oversubscribed rail fabric with an even number of blocks, from
 * a cluster file (the preset path) small enough for the exhaustive search:
 * 4 servers of 2 GPUs (NVSwitch, NIC per GPU), radix 4, 2 tiers: blocks of
 * 2 servers, 2 blocks. Per server: egress 2 × NDR, network share 2 × NDR
 * / 2; closed form 2 servers × NDR, and the search over C(7, 3) = 35
 * partitions agrees. */
static const char *const small_rail_json =
    "{\"name\": \"small\", \"servers\": 4, \"server\": {\"devices\": ["
    "{\"name\": \"gpu\", \"kind\": \"gpu\", \"count\": 2},"
    "{\"name\": \"nvsw\", \"kind\": \"nvswitch\"},"
    "{\"name\": \"nic\", \"kind\": \"nic\", \"count\": 2, \"port\": \"ib-ndr\"}],"
    "\"links\": [{\"from\": \"gpu\", \"to\": \"nvsw\", \"link\": \"nvlink4\", \"count\": 18},"
    "{\"from\": \"gpu\", \"to\": \"nic\", \"map\": \"block\", \"link\": \"pcie5\"}]},"
    "\"network\": {\"builder\": \"rail-fat-tree\", \"radix\": 4, \"tiers\": 2, "
    "\"oversubscription\": [2]}}";

static void test_oversubscribed_rails(void **state)
{
    (void)state;
    topoio_cluster_t *c = NULL;
    strata_topo_t *t = NULL;
    strata_error_t err;
    must(topoio_load_json_text(small_rail_json, "small.json", cat, &c, &err), &err);
    must(topoio_instantiate(c, cat, &t, &err), &err);
    strata_topo_bisection_t b = bisection(t, STRATA_BISECT_AUTO);
    assert_int_equal(b.method, STRATA_BISECT_CLOSED);
    assert_rel(b.bw, 2 * bw("ib-ndr"), 1e-9);
    assert_rel(bisection(t, STRATA_BISECT_EXHAUSTIVE).bw, b.bw, 1e-9);
    strata_topo_destroy(t);
    topoio_cluster_destroy(c);
}

/* A server that cannot spread its egress over its accelerators gets no
 * closed form. Two GPUs; gpu0 on the NDR NIC by pcie5 (56), gpu1 only on
 * gpu0 by pcie3 (14). Egress = network share = 49.7 per server, so the
 * servers-halves formula would say 49.7 for 2 servers; but putting gpu0
 * of both servers on one side and both gpu1 on the other cuts only the
 * two gpu0–gpu1 links: 2 × 14 = 28. The spreading check (each GPU must
 * send 49.7/2 = 24.9 at once; gpu1 has 14) refuses the closed form, and
 * AUTO's exhaustive search finds 28. */
static const char *const weak_json =
    "{\"name\": \"weak\", \"servers\": 2, \"server\": {\"devices\": ["
    "{\"name\": \"gpu\", \"kind\": \"gpu\", \"count\": 2},"
    "{\"name\": \"nic\", \"kind\": \"nic\", \"port\": \"ib-ndr\"}],"
    "\"links\": [{\"from\": \"gpu[0]\", \"to\": \"nic\", \"link\": \"pcie5\"},"
    "{\"from\": \"gpu[0]\", \"to\": \"gpu[1]\", \"link\": \"pcie3\"}]},"
    "\"network\": {\"builder\": \"fat-tree\"}}";

static void test_no_closed_form_when_unspread(void **state)
{
    (void)state;
    topoio_cluster_t *c = NULL;
    strata_topo_t *t = NULL;
    strata_error_t err;
    must(topoio_load_json_text(weak_json, "weak.json", cat, &c, &err), &err);
    must(topoio_instantiate(c, cat, &t, &err), &err);
    strata_topo_bisection_t a = bisection(t, STRATA_BISECT_AUTO);
    assert_int_equal(a.method, STRATA_BISECT_EXHAUSTIVE);
    assert_rel(a.bw, 2 * bw("pcie3"), 1e-9);
    assert_true(bw("pcie3") * 2 < bw("ib-ndr")); /* the formula would be wrong */
    strata_topo_destroy(t);
    /* 12 servers (24 GPUs): too many for the search; the bound says it is
     * one ("upper bound"), and the rank-halves cut it tries costs 6 NICs. */
    c->servers = 12;
    must(topoio_instantiate(c, cat, &t, &err), &err);
    a = bisection(t, STRATA_BISECT_AUTO);
    assert_int_equal(a.method, STRATA_BISECT_BOUND);
    assert_false(a.exact);
    strata_topo_destroy(t);
    topoio_cluster_destroy(c);
}

/* ==== Hops by symmetry ==== */

/* Routed hops from endpoint rank r to all others, summed. */
static long hop_total(const strata_topo_t *t, int32_t r)
{
    strata_topo_router_t *rt;
    assert_int_equal(strata_topo_router_create(t, &rt, NULL), 0);
    long sum = 0;
    for (int32_t b = 0; b < strata_topo_endpoint_count(t); b++)
        sum += strata_topo_hops(rt, strata_topo_endpoint(t, r), strata_topo_endpoint(t, b));
    strata_topo_router_destroy(rt);
    return sum;
}

static void check_hops(const char *spec, const char *how)
{
    strata_topo_t *t = load(spec);
    strata_topo_metrics_t m;
    strata_error_t err;
    must(strata_topo_metrics(t, &m, &err), &err);
    if (strstr(m.hops_how, how) == NULL) fail_msg("%s: hops '%s'", spec, m.hops_how);
    double avg;
    int32_t diam;
    brute_hops(t, &avg, &diam);
    assert_true(m.hops_exact);
    assert_near(m.avg_hops, avg, 1e-9);
    assert_int_equal(m.diameter, diam);
    strata_topo_destroy(t);
}

static void test_preset_hops_by_symmetry(void **state)
{
    (void)state;
    /* Why one source per GPU index suffices: the servers are copies of one
     * description (same wiring, same NIC per GPU), and the rail fabric has
     * an automorphism taking any server's NIC i to any other's NIC i —
     * servers in a block of k/2 share their rail leaves (swap them on every
     * rail at once), blocks hang alike under the spines, and with 3 tiers a
     * pod holds whole blocks (radix 16: pods of 8 leaves = one block of 8
     * rails) — so s.gpuj and s'.gpuj see the same multiset of routed hop
     * counts. The brute force over every pair must agree. */
    check_hops("dgx-h100:4", "8 sources by symmetry");
    check_hops("dgx-h100:32,radix=16", "8 sources by symmetry"); /* 3 tiers */
    check_hops("mi300x:6", "8 sources by symmetry");
    /* Plain tree: whole servers per leaf (4 NICs on 8-down leaves). */
    check_hops("dgx-1v:8,radix=16", "8 sources by symmetry");
    /* 4 NICs on 6-down leaves (radix 12, 2 tiers forced): server 1 has NICs
     * on both leaves, servers 0 and 2 on one each — no symmetry, so none
     * is claimed, all 24 sources are swept; and indeed s0.gpu0 and
     * s1.gpu0 see different hop totals. */
    check_hops("dgx-1v:3,radix=12,tiers=2", "all 24 sources");
    strata_topo_t *t = load("dgx-1v:3,radix=12,tiers=2");
    assert_true(hop_total(t, 0) != hop_total(t, 8));
    strata_topo_destroy(t);
}

/* ==== NICs and the cross-rail route ==== */

static int32_t dev(const strata_topo_t *t, const char *name)
{
    int32_t d = strata_topo_find_device(t, name);
    if (d < 0) fail_msg("no device %s", name);
    return d;
}

static void test_gpu_nic_rails(void **state)
{
    (void)state;
    char g[32], n[32];
    strata_topo_t *t = load("dgx-h100:2");
    /* GPUs 2j, 2j+1 and NICs 2j, 2j+1 share PCIe switch j: both NICs are 2
     * hops away, and GPU i takes NIC i (its rail), not both NIC 2j. */
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 8; i++) {
            snprintf(g, sizeof(g), "s%d.gpu%d", s, i);
            snprintf(n, sizeof(n), "s%d.nic%d", s, i);
            assert_int_equal(strata_topo_device(t, dev(t, g)).nic, dev(t, n));
        }
    strata_topo_destroy(t);
    /* nics=4: only NICs 0-3 (on PCIe switches 0 and 1) join the fabric;
     * the unconnected NICs 4-7 are never chosen. GPUs 0-3 take the NIC on
     * their own PCIe switch (2 hops), one each; GPUs 4-7 reach all four
     * through the NVSwitches (gpu4 > nvsw > gpu0 > pcisw0 > nic0: 4 hops)
     * and spread by use: 2 GPUs per NIC. */
    t = load("dgx-h100:2,nics=4");
    int used[4] = {0};
    for (int i = 0; i < 8; i++) {
        snprintf(g, sizeof(g), "s0.gpu%d", i);
        strata_topo_device_t nic = strata_topo_device(t, strata_topo_device(t, dev(t, g)).nic);
        assert_true(nic.local >= 0 && nic.local < 4);
        if (i < 4) assert_int_equal(nic.local, i);
        used[nic.local]++;
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(used[i], 2);
    strata_topo_destroy(t);
    /* DGX-1: 4 NICs, GPUs 2j and 2j+1 on PCIe switch j with NIC j. */
    t = load("dgx-1v:2");
    for (int i = 0; i < 8; i++) {
        snprintf(g, sizeof(g), "s1.gpu%d", i);
        snprintf(n, sizeof(n), "s1.nic%d", i / 2);
        assert_int_equal(strata_topo_device(t, dev(t, g)).nic, dev(t, n));
    }
    strata_topo_destroy(t);
}

/* Route src→dst: every path a walk over existing channels, with the
 * devices' tiers as listed (want[i] = tier of the i-th device after src). */
static void check_route(const strata_topo_t *t, int32_t src, int32_t dst, double paths,
                        const int *tiers, int32_t hops)
{
    strata_topo_router_t *r;
    assert_int_equal(strata_topo_router_create(t, &r, NULL), 0);
    assert_near(strata_topo_path_count(r, src, dst), paths, 0);
    for (uint64_t k = 0; k < (uint64_t)paths; k++) {
        int32_t ch[32], n, at = src;
        assert_int_equal(strata_topo_path(r, src, dst, k, ch, 32, &n), STRATA_OK);
        assert_int_equal(n, hops);
        for (int32_t i = 0; i < n; i++) {
            strata_topo_link_t l = strata_topo_link(t, strata_topo_chan_link(ch[i]));
            assert_true(l.a == at || l.b == at); /* the channel leaves where we are */
            assert_int_equal(strata_topo_chan_src(t, ch[i]), at);
            at = strata_topo_chan_dst(t, ch[i]);
            assert_int_equal(strata_topo_device(t, at).tier, tiers[i]);
        }
        assert_int_equal(at, dst);
    }
    strata_topo_router_destroy(r);
}

static void test_cross_rail_route(void **state)
{
    (void)state;
    /* Builder cluster: 4 servers × 4 GPUs (one NVSwitch, NIC per GPU
     * direct), rail-optimised, k = 8, 2 tiers. Blocks of k/2 = 4 servers:
     * one block, 4 rail leaves (leaf r holds NIC r of the 4 servers), each
     * with 4 up-links to 4 spines. s0.gpu0 → s1.gpu1 (rail 0 → rail 1):
     * gpu0 > nic0 > leaf0 (tier 1) > spine (tier 2, 4 choices) > leaf1
     * (tier 1) > s1.nic1 > s1.gpu1: 6 hops, 4 paths. strata does not do
     * NCCL's PXN (gpu0 > NVSwitch > gpu1 > nic1 > leaf1 > ...): a GPU always
     * leaves through its own NIC; here both are 6 hops, only the PXN one
     * stays on one rail. Same rail, s0.gpu1 → s1.gpu1: nic1 > leaf1 >
     * nic1: 4 hops, 1 path. */
    strata_topo_server_t sv = {
        .name = "box",
        .accels = 4,
        .scaleup_switches = 1,
        .scaleup = strata_topo_linkspec_kind("nvlink4", 18),
        .nics = 4,
        .pcie = strata_topo_linkspec_kind("pcie5", 1),
        .nic_net = strata_topo_linkspec_kind("ib-ndr", 1),
    };
    strata_topo_fattree_t net = {.k = 8, .tiers = 2};
    strata_topo_t *t;
    strata_error_t err;
    must(strata_topo_build_cluster(&sv, 4, &net, true, cat, &t, &err), &err);
    int32_t g0 = strata_topo_endpoint(t, 0), s1g1 = strata_topo_endpoint(t, 5);
    int32_t s0g1 = strata_topo_endpoint(t, 1);
    static const int cross[] = {0, 1, 2, 1, 0, 0};
    check_route(t, g0, s1g1, 4, cross, 6);
    static const int same[] = {0, 1, 0, 0};
    check_route(t, s0g1, s1g1, 1, same, 4);
    strata_topo_destroy(t);

    /* Preset: dgx-h100:2, rail-optimised NDR, radix 64, 2 tiers (rails of
     * several servers meet at spines). 8 rail leaves of 2 NICs each, hence
     * 2 up-links each, 2 spines. s0.gpu0 → s1.gpu1: gpu0 > pcisw0 > nic0 >
     * leaf (rail 0, tier 1) > spine (tier 2, 2 choices) > leaf (rail 1,
     * tier 1) > s1.nic1 > s1.pcisw0 > s1.gpu1: 8 hops, 2 paths. */
    t = load("dgx-h100:2");
    static const int cross_h100[] = {0, 0, 1, 2, 1, 0, 0, 0};
    check_route(t, dev(t, "s0.gpu0"), dev(t, "s1.gpu1"), 2, cross_h100, 8);
    /* its rail: through s0.nic0 out, s1.nic1 in */
    strata_topo_router_t *r;
    int32_t ch[16], n;
    assert_int_equal(strata_topo_router_create(t, &r, NULL), 0);
    assert_int_equal(strata_topo_path(r, dev(t, "s0.gpu0"), dev(t, "s1.gpu1"), 1, ch, 16, &n), 0);
    assert_int_equal(strata_topo_chan_dst(t, ch[1]), dev(t, "s0.nic0"));
    assert_int_equal(strata_topo_chan_src(t, ch[6]), dev(t, "s1.nic1"));
    strata_topo_router_destroy(r);
    strata_topo_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preset_closed_form),
        cmocka_unit_test(test_oversubscribed_rails),
        cmocka_unit_test(test_no_closed_form_when_unspread),
        cmocka_unit_test(test_preset_hops_by_symmetry),
        cmocka_unit_test(test_gpu_nic_rails),
        cmocka_unit_test(test_cross_rail_route),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
