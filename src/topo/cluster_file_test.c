/*
 * cluster_file_test.c — cluster files: every preset loads and builds with
 * the device and link counts its sources state; every class of bad input
 * names file:line:col; load → export → load is a round trip.
 */
#define _DEFAULT_SOURCE
#include "topoio_test.h"

#include <unistd.h>

static topoio_cluster_t *load_preset(const char *spec)
{
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    strata_status_t st = topoio_preset_load(spec, cat, &c, &err);
    if (st) {
        char buf[1024];
        fail_msg("%s: %s", spec, strata_error_str(&err, buf, sizeof(buf)));
    }
    return c;
}

/* Build one server only, without its network (tests the server wiring). */
static strata_topo_t *build_server(topoio_cluster_t *c)
{
    strata_topo_t *t = NULL;
    strata_error_t err;
    c->net.builder = NULL;
    c->servers = 1;
    if (topoio_instantiate(c, cat, &t, &err)) {
        char buf[1024];
        fail_msg("%s", strata_error_str(&err, buf, sizeof(buf)));
    }
    return t;
}

static int count_kind(const strata_topo_t *t, strata_dev_kind_t k)
{
    int n = 0;
    for (int32_t i = 0; i < strata_topo_device_count(t); i++)
        n += strata_topo_device(t, i).kind == k;
    return n;
}

static double bw_of(const strata_topo_t *t, int32_t dev, const char *kind)
{
    double s = 0;
    for (int32_t l = 0; l < strata_topo_link_count(t); l++) {
        strata_topo_link_t lk = strata_topo_link(t, l);
        if ((lk.a == dev || lk.b == dev) && strcmp(lk.kind, kind) == 0) s += lk.bw_dir;
    }
    return s;
}

static void test_dgx_h100_server(void **state)
{
    (void)state;
    topoio_cluster_t *c = load_preset("dgx-h100");
    strata_topo_t *t = build_server(c);
    /* 2 CPU + 2 DRAM + 4 PCIe switches + 8 GPU + 4 NVSwitch + 8 NIC = 28
     * devices. */
    assert_int_equal(strata_topo_device_count(t), 28);
    /* 8 GPUs × 4 NVSwitches + 8 GPU↔PCIe + 8 NIC↔PCIe + 4 PCIe↔CPU + 2
     * DRAM↔CPU + 1 UPI = 55 links. */
    assert_int_equal(strata_topo_link_count(t), 55);
    assert_int_equal(count_kind(t, STRATA_DEV_ACCEL), 8);
    assert_int_equal(count_kind(t, STRATA_DEV_SCALEUP_SWITCH), 4);
    int32_t g0 = strata_topo_find_device(t, "gpu0");
    assert_true(g0 >= 0);
    /* 5+5+4+4 = 18 NVLink4 links per GPU (links.md NVSwitch gen3 row). */
    assert_int_equal(links_of(t, g0, "nvlink4"), 18);
    assert_rel(bw_of(t, g0, "nvlink4"), 18 * strata_link_find(cat, "nvlink4")->bw_dir, 1e-12);
    /* nvsw2 carries 4 links from each of 8 GPUs = 32. */
    assert_int_equal(links_of(t, strata_topo_find_device(t, "nvsw2"), "nvlink4"), 32);
    /* block map: GPUs 6,7 and NICs 6,7 on PCIe switch 3, which sits on CPU 1. */
    int32_t p3 = strata_topo_find_device(t, "pcisw3");
    assert_true(strata_topo_link_between(t, strata_topo_find_device(t, "gpu7"), p3) >= 0);
    assert_true(strata_topo_link_between(t, strata_topo_find_device(t, "nic6"), p3) >= 0);
    assert_true(strata_topo_link_between(t, p3, strata_topo_find_device(t, "cpu1")) >= 0);
    /* Each socket's DRAM: 8 DDR5-4800 channels of 38.4 GB/s, a shared bus
     * (half each way): 8 x 19.2 = 153.6 GB/s per direction; 1 TB each
     * (DGX H100 user guide: 2 TB); the sockets joined by 4 UPI links of
     * 32 GB/s = 128 GB/s per direction. */
    int32_t d1 = strata_topo_find_device(t, "dram1"), c1 = strata_topo_find_device(t, "cpu1");
    assert_true(strata_topo_link_between(t, d1, c1) >= 0);
    assert_rel(bw_of(t, d1, "ddr5-4800"), 153.6e9, 1e-12);
    assert_rel(strata_topo_device(t, d1).capacity, 1024e9, 0);
    assert_rel(bw_of(t, c1, "upi2"), 128e9, 1e-12);
    assert_rel(strata_topo_device(t, c1).capacity, 0, 0); /* not a memory */
    strata_topo_destroy(t);
    topoio_cluster_destroy(c);
}

static void test_dgx1_cube_mesh(void **state)
{
    (void)state;
    topoio_cluster_t *c = load_preset("dgx-1v");
    strata_topo_t *t = build_server(c);
    char name[16];
    /* Every V100 uses all 6 of its NVLink2 links (whitepaper, hybrid cube-mesh). */
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof(name), "gpu%d", i);
        assert_int_equal(links_of(t, strata_topo_find_device(t, name), "nvlink2"), 6);
    }
    /* 16 GPU pairs carry NVLink: 6 inside each quad + 4 between quads. */
    int pairs = 0;
    for (int32_t l = 0; l < strata_topo_link_count(t); l++)
        pairs += strcmp(strata_topo_link(t, l).kind, "nvlink2") == 0;
    assert_int_equal(pairs, 16);
    strata_topo_destroy(t);
    topoio_cluster_destroy(c);
}

static void test_other_servers(void **state)
{
    (void)state;
    struct {
        const char *preset, *kind;
        int accels, scaleup, nics, per_accel;
    } cases[] = {
        /* A100: 6 switches × 2 links = 12 NVLink3 per GPU (links.md gen2 row). */
        {"dgx-a100", "nvlink3", 8, 6, 8, 12},
        /* DGX-2: one link to each of the board's 6 switches. */
        {"dgx-2", "nvlink2", 16, 12, 8, 6},
        /* NVL72: one NVLink5 link to each of 18 switches. */
        {"gb200-nvl72", "nvlink5", 72, 18, 72, 18},
        /* MI300X: 7 IF links, one per peer. */
        {"mi300x", "if-mi300x", 8, 0, 8, 7},
        /* 910B: 7 HCCS peers. */
        {"ascend-910b", "hccs-910b", 8, 0, 8, 7},
        {"hgx-h200", "nvlink4", 8, 4, 8, 18},
        {"pcie-8gpu", "nvlink4", 8, 0, 4, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        topoio_cluster_t *c = load_preset(cases[i].preset);
        strata_topo_t *t = build_server(c);
        assert_int_equal(count_kind(t, STRATA_DEV_ACCEL), cases[i].accels);
        assert_int_equal(count_kind(t, STRATA_DEV_SCALEUP_SWITCH), cases[i].scaleup);
        assert_int_equal(count_kind(t, STRATA_DEV_NIC), cases[i].nics);
        assert_int_equal(links_of(t, strata_topo_endpoint(t, 0), cases[i].kind),
                         cases[i].per_accel);
        strata_topo_destroy(t);
        topoio_cluster_destroy(c);
    }
}

static void test_cpu_cluster_endpoint(void **state)
{
    (void)state;
    topoio_cluster_t *c = load_preset("cpu-cluster,port=eth-25g");
    assert_string_equal(c->net.port, "eth-25g");
    strata_topo_t *t = build_server(c);
    /* No accelerator: the socket is the endpoint. */
    assert_int_equal(strata_topo_endpoint_count(t), 1);
    assert_string_equal(strata_topo_device(t, strata_topo_endpoint(t, 0)).name, "cpu");
    strata_topo_destroy(t);
    topoio_cluster_destroy(c);
}

static void test_spec_options(void **state)
{
    (void)state;
    topoio_cluster_t *c = load_preset("dgx-h100:16,oversub=4,nics=4,tiers=2");
    assert_int_equal(c->servers, 16);
    assert_int_equal(c->net.nics, 4);
    assert_int_equal(c->net.tiers, 2);
    assert_int_equal(c->net.ntiers_oversub, 1);
    assert_near(c->net.oversub[0], 4, 0);
    topoio_cluster_destroy(c);
    c = load_preset("dgx-a100,net=fat-tree,oversub=2:3");
    assert_string_equal(c->net.builder, "fat-tree");
    assert_int_equal(c->net.ntiers_oversub, 2);
    assert_near(c->net.oversub[1], 3, 0);
    topoio_cluster_destroy(c);
}

static void expect_spec_error(const char *spec, const char *needle)
{
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    char buf[1024];
    assert_int_not_equal(topoio_preset_load(spec, cat, &c, &err), STRATA_OK);
    strata_error_str(&err, buf, sizeof(buf));
    if (strstr(buf, needle) == NULL) fail_msg("%s: got '%s', expected '%s'", spec, buf, needle);
    assert_null(c);
}

static void test_spec_errors(void **state)
{
    (void)state;
    /* The list of presets is named in the message. */
    expect_spec_error("dgx-h900", "presets: ascend-910b, cpu-cluster, dgx-1v, dgx-2");
    expect_spec_error("dgx-h100:0", "servers=0: expected an integer from 1 to 1048576");
    expect_spec_error("dgx-h100:x", "servers=x");
    expect_spec_error("dgx-h100,oversub=0.5", "oversub=0.5");
    expect_spec_error("dgx-h100,nics=9", "nics=9 but a server has 8 NICs");
    expect_spec_error("dgx-h100,port=ib-zdr", "port=ib-zdr: expected a network port id");
    expect_spec_error("dgx-h100,speed=3", "unknown cluster option 'speed'");
    expect_spec_error("dgx-h100,nics", "not key=value");
    expect_spec_error("dgx-h100,memory=ddr5-4800",
                      "option memory=ddr5-4800: expected an accelerator memory");
    expect_spec_error("cpu-cluster,memory=hbm-h100",
                      "option memory=hbm-h100: expected a cluster with accelerators");
    expect_spec_error("../etc/passwd", "unknown cluster '../etc/passwd'");
}

/* A valid small file used as the base of the error cases. */
static const char *const good =
    "{\n"
    "  \"name\": \"t\",\n"
    "  \"server\": {\n"
    "    \"devices\": [\n"
    "      {\"name\": \"gpu\", \"kind\": \"gpu\", \"count\": 4},\n"
    "      {\"name\": \"sw\", \"kind\": \"nvswitch\"}\n"
    "    ],\n"
    "    \"links\": [{\"from\": \"gpu\", \"to\": \"sw\", \"link\": \"nvlink4\", \"count\": 3}]\n"
    "  }\n"
    "}\n";

static void expect_error(const char *text, const char *where_msg)
{
    expect_load_error(topoio_load_json_text, text, "c.json", where_msg);
}

/* Replace the first occurrence of from with to in good. */
static const char *mutate(const char *from, const char *to)
{
    return mutate_text(good, from, to);
}

/* The words strata prints for device kinds are the words a cluster file
 * takes: every kind strata_dev_kind_str names but the network switch reads
 * back as itself, and the file with the printed words (accel,
 * scaleup-switch) builds the same server as with the vendors' (gpu,
 * nvswitch): 4 GPUs + 1 switch = 5 devices, 4 groups of 3 NVLink4 links. */
static void fingerprint(topoio_cluster_t *c, int *dev, int *links, double *bw);

static void test_kind_words(void **state)
{
    (void)state;
    for (int k = 0; k < STRATA_DEV_KIND_COUNT; k++) {
        strata_dev_kind_t got = STRATA_DEV_KIND_COUNT, pub = STRATA_DEV_KIND_COUNT;
        const char *word = strata_dev_kind_str((strata_dev_kind_t)k);
        assert_int_equal(strata_dev_kind_parse(word, &pub), 0);
        assert_int_equal(pub, k);
        if (k == STRATA_DEV_NET_SWITCH) {
            assert_int_equal(topoio_kind_of(word, &got), -1);
            continue;
        }
        assert_int_equal(topoio_kind_of(word, &got), 0);
        assert_int_equal(got, k);
    }
    const char *aliases[][2] = {
        {"gpu", "accel"}, {"npu", "accel"}, {"tpu", "accel"}, {"nvswitch", "scaleup-switch"}};
    for (size_t i = 0; i < 4; i++) {
        strata_dev_kind_t a, b, pub;
        assert_int_equal(topoio_kind_of(aliases[i][0], &a), 0);
        assert_int_equal(topoio_kind_of(aliases[i][1], &b), 0);
        assert_int_equal(a, b);
        assert_int_equal(strata_dev_kind_parse(aliases[i][0], &pub), 0);
        assert_int_equal(pub, a);
    }
    char *printed = strdup(mutate_text(good, "\"kind\": \"gpu\"", "\"kind\": \"accel\""));
    const char *both =
        mutate_text(printed, "\"kind\": \"nvswitch\"", "\"kind\": \"scaleup-switch\"");
    topoio_cluster_t *c1 = NULL, *c2 = NULL;
    strata_error_t err;
    assert_int_equal(topoio_load_json_text(good, "c.json", cat, &c1, &err), STRATA_OK);
    assert_int_equal(topoio_load_json_text(both, "c.json", cat, &c2, &err), STRATA_OK);
    free(printed);
    int d1, l1, d2, l2;
    double b1, b2;
    fingerprint(c1, &d1, &l1, &b1);
    fingerprint(c2, &d2, &l2, &b2);
    assert_int_equal(d1, 5);
    assert_int_equal(d2, 5);
    assert_int_equal(l1, l2);
    assert_rel(b1, b2, 1e-12);
    assert_int_equal(topoio_count_devkind(c2, STRATA_DEV_ACCEL), 4);
    topoio_cluster_destroy(c1);
    topoio_cluster_destroy(c2);
    expect_error(mutate("\"kind\": \"nvswitch\"", "\"kind\": \"switch\""),
                 "c.json:6:30: device kind \"switch\" is a network switch");
}

static void test_file_errors(void **state)
{
    (void)state;
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    assert_int_equal(topoio_load_json_text(good, "c.json", cat, &c, &err), STRATA_OK);
    topoio_cluster_destroy(c);
    /* Columns are 1-based positions of the offending value (line 5 starts with 6 spaces). */
    expect_error(mutate("\"count\": 4", "\"cuont\": 4"), "c.json:5:47: unknown field \"cuont\"");
    expect_error(mutate("\"count\": 4", "\"count\": \"4\""), "c.json:5:47:");
    expect_error(mutate("\"count\": 4", "\"count\": \"4\""), "integer");
    expect_error(mutate("\"count\": 4", "\"count\": -4"),
                 "c.json:5:47: \"count\" must be an integer from 1 to 4096, got -4");
    expect_error(mutate("nvlink4", "nvlink9"), "c.json:8:51: unknown link id \"nvlink9\"");
    expect_error(mutate("\"to\": \"sw\"", "\"to\": \"sw2\""),
                 "c.json:8:37: device \"sw2\" is not defined");
    expect_error(mutate("\"to\": \"sw\"", "\"to\": \"gpu[4]\""), "index out of range");
    expect_error(mutate("\"kind\": \"nvswitch\"", "\"kind\": \"router\""),
                 "c.json:6:30: unknown device kind \"router\"");
    expect_error(mutate("\"name\": \"sw\"", "\"name\": \"gpu\""), "defined twice");
    expect_error(mutate("\"count\": 3", "\"count\": 3, \"map\": \"star\""), "unknown map \"star\"");
    /* Truncated JSON: the parser's own position. */
    expect_error("{\"server\": {\"devices\": [", "c.json:1:");
    /* A device used before its definition (links first is fine; order in
     * "devices" is what counts: linking to a later group is an error only
     * when it does not exist at all). */
    expect_error("{\"server\": {\"devices\": [{\"name\": \"g\", \"kind\": \"gpu\"}],"
                 " \"links\": [{\"mesh\": \"h\", \"link\": \"nvlink4\"}]}}",
                 "c.json:1:75: device \"h\" is not defined");
    expect_error("{\"server\": {\"devices\": [{\"name\": \"g\", \"kind\": \"gpu\"}]},"
                 " \"network\": {\"builder\": \"clos\"}}",
                 "unknown network builder \"clos\"");
    expect_error("{\"server\": {\"devices\": [{\"name\": \"g\", \"kind\": \"gpu\"}]},"
                 " \"network\": {\"builder\": \"fat-tree\", \"oversubscription\": [1, 0.5]}}",
                 "oversubscription must be from 1 (non-blocking) to 1e6");
}

/* Every integer of a cluster file is range-checked where it stands: 2^32 + 1
 * used to be truncated to 1 (an int32_t count), -1 to wrap. Columns: the
 * link rule's "count" value on line 8 opens at column 71 (4 spaces, then
 * {"links": [{"from": "gpu", "to": "sw", "link": "nvlink4", "count": ),
 * the device count at 47 (test_file_errors). */
static void test_file_bounds(void **state)
{
    (void)state;
    expect_error(mutate("\"count\": 4", "\"count\": 4294967297"),
                 "c.json:5:47: \"count\" must be an integer from 1 to 4096, got 4294967297");
    expect_error(mutate("\"count\": 3", "\"count\": 4294967297"),
                 "c.json:8:71: \"count\" must be an integer from 1 to 4096, got 4294967297");
    expect_error(mutate("\"count\": 3", "\"count\": 3, \"lanes\": 1025"),
                 "\"lanes\" must be an integer from 0 to 1024, got 1025");
    /* 2^63 does not fit jansson's integer: its own positioned parse error */
    expect_error(mutate("\"count\": 4", "\"count\": 9223372036854775808"), "c.json:5:");
    /* top level: "servers": 1048577 replaces line 2's "name": "t", its value
     * at column 3 + strlen("\"servers\": ") = 14 */
    expect_error(mutate("\"name\": \"t\"", "\"servers\": 1048577"),
                 "c.json:2:14: \"servers\" must be an integer from 1 to 1048576, got 1048577");
    const char *net = "{\"server\": {\"devices\": [{\"name\": \"g\", \"kind\": \"gpu\"}]},"
                      " \"network\": {\"builder\": \"fat-tree\", %s}}";
    char buf[512];
    snprintf(buf, sizeof(buf), net, "\"radix\": 63");
    expect_error(buf, "\"radix\" must be even");
    snprintf(buf, sizeof(buf), net, "\"radix\": 2048");
    expect_error(buf, "\"radix\" must be an integer from 0 to 1024, got 2048");
    snprintf(buf, sizeof(buf), net, "\"tiers\": 4");
    expect_error(buf, "\"tiers\" must be an integer from 0 to 3, got 4");
    snprintf(buf, sizeof(buf), net, "\"oversubscription\": 1e308");
    expect_error(buf, "oversubscription must be from 1 (non-blocking) to 1e6");
    snprintf(buf, sizeof(buf), net, "\"port\": \"nvlink4\"");
    expect_error(buf, "\"nvlink4\" is not a network port kind");
    snprintf(buf, sizeof(buf), net, "\"dims\": [2097152], \"link\": \"ici-v4\"");
    expect_error(buf, "expected an integer from 1 to 1048576 (torus dimension)");
}

/* Options and sizes are refused before anything is allocated, each with
 * its documented bound. dgx-h100 has 8 fabric NICs: 300000 servers are
 * 2.4e6 NICs, and 64-port switches join at most 64^3/4 = 65536 in three
 * tiers. railft servers=2^20, gpus=16: 2^24 NICs, same bound. */
static void test_limits_before_building(void **state)
{
    (void)state;
    expect_spec_error("dgx-h100,oversub=1e308", "oversub=1e308: expected ratios from 1 to 1e6");
    expect_spec_error("dgx-h100,port=nvlink4", "port=nvlink4: expected a network port id");
    expect_spec_error("dgx-h100,radix=2048", "radix=2048: expected an integer from 2 to 1024");
    expect_spec_error("dgx-h100,radix=63", "radix=63: expected an even port count");
    expect_spec_error("dgx-h100,tiers=4", "tiers=4: expected an integer from 1 to 3");
    expect_spec_error("dgx-h100:1048577", "servers=1048577: expected an integer from 1 to 1048576");
    expect_spec_error("dgx-h100:99999999999999999999", "servers=99999999999999999999");

    topoio_cluster_t *c = load_preset("dgx-h100:300000");
    strata_topo_t *t = NULL;
    strata_error_t err;
    assert_int_equal(topoio_instantiate(c, cat, &t, &err), STRATA_ERR_RANGE);
    assert_non_null(strstr(err.msg, "2400000 NICs on the network exceed what 64-port switches "
                                    "join in 3 tier(s) (65536"));
    assert_null(t);
    topoio_cluster_destroy(c);
    assert_int_equal(strata_topo_load_spec("railft:servers=1048576,gpus=16", cat, &t, &err),
                     STRATA_ERR_RANGE);
    assert_non_null(strstr(err.msg, "16777216 NICs exceed what 64-port switches join in 3"));
    assert_null(t);
}

/* "memory": an accelerator's memory, by catalog id of an HBM row. Line 5
 * of `good` is 6 spaces, then {"name": "gpu", "kind": "gpu", "count": 4}:
 * the 4 sits at column 47, so in `"count": 4, "memory": "X"` the value X
 * opens at 47 + 1 (4) + 2 (", ") + 8 ("memory") + 2 (": ") = column 60.
 * Line 6's "kind" value opens at column 30 (as the "router" case above),
 * so in {"name": "sw", "kind": "nic", "memory": ...} the memory value
 * opens at 30 + 5 ("nic") + 2 + 8 + 2 = column 47. */
static void test_memory_errors(void **state)
{
    (void)state;
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    const char *ok = mutate("\"count\": 4", "\"count\": 4, \"memory\": \"hbm-h200\"");
    must(topoio_load_json_text(ok, "c.json", cat, &c, &err), &err);
    assert_string_equal(c->groups.v[0].memory, "hbm-h200");
    assert_null(c->groups.v[1].memory);
    topoio_cluster_destroy(c);
    expect_error(mutate("\"count\": 4", "\"count\": 4, \"memory\": \"hbm-h900\""),
                 "c.json:5:60: unknown memory id \"hbm-h900\" (expected an accelerator memory of "
                 "data/links.json: hbm-a100-40, hbm-a100-80, hbm-h100, hbm-h200");
    /* A catalog id that is a link, or a CPU's DDR channel, is not an
     * accelerator's memory. */
    expect_error(mutate("\"count\": 4", "\"count\": 4, \"memory\": \"nvlink4\""),
                 "c.json:5:60: \"nvlink4\" is not an accelerator memory (expected one of");
    expect_error(mutate("\"count\": 4", "\"count\": 4, \"memory\": \"ddr5-4800\""),
                 "c.json:5:60: \"ddr5-4800\" is not an accelerator memory");
    expect_error(mutate("\"count\": 4", "\"count\": 4, \"memory\": 80"), "c.json:5:60:");
    expect_error(mutate("\"kind\": \"nvswitch\"", "\"kind\": \"nic\", \"memory\": \"hbm-h100\""),
                 "c.json:6:47: \"memory\" is recorded on accelerators only (kind accel, gpu, "
                 "npu or tpu), not on kind \"nic\"");
}

/* "capacity_gb" on host memories (kind memory, cxl-memory): read, built
 * into the device (GB = 1e9 B), exported and read back; on any other kind,
 * zero, negative or not a number, one clear error at its place. */
static void test_capacity(void **state)
{
    (void)state;
    topoio_cluster_t *c = NULL, *c2 = NULL;
    strata_error_t err;
    const char *mem = mutate("{\"name\": \"sw\", \"kind\": \"nvswitch\"}",
                             "{\"name\": \"sw\", \"kind\": \"nvswitch\"}, {\"name\": \"cpu\", "
                             "\"kind\": \"cpu\"}, {\"name\": \"dram\", \"kind\": \"memory\", "
                             "\"capacity_gb\": 512.5}");
    must(topoio_load_json_text(mem, "c.json", cat, &c, &err), &err);
    assert_rel(c->groups.v[3].capacity_gb, 512.5, 0);
    assert_rel(c->groups.v[0].capacity_gb, 0, 0);
    char path[] = "/tmp/strata-cap-XXXXXX";
    FILE *f = fdopen(mkstemp(path), "w");
    assert_int_equal(topoio_export_json(c, f, &err), STRATA_OK);
    fclose(f);
    must(topoio_load_json(path, cat, &c2, &err), &err);
    unlink(path);
    assert_rel(c2->groups.v[3].capacity_gb, 512.5, 0);
    topoio_cluster_destroy(c), topoio_cluster_destroy(c2);
    /* built: dram of pcie-8gpu-2s holds 512 GB, its CXL expander 256 GB */
    c = load_preset("pcie-8gpu-2s");
    strata_topo_t *t = build_server(c);
    assert_rel(strata_topo_device(t, strata_topo_find_device(t, "dram1")).capacity, 512e9, 0);
    assert_rel(strata_topo_device(t, strata_topo_find_device(t, "cxlmem")).capacity, 256e9, 0);
    assert_int_equal(strata_topo_set_capacity(t, strata_topo_find_device(t, "gpu0"), 1e9, &err),
                     STRATA_ERR_INVALID); /* finished, and not a memory */
    strata_topo_destroy(t);
    topoio_cluster_destroy(c);
    expect_error(mutate("\"count\": 4", "\"count\": 4, \"capacity_gb\": 80"),
                 "c.json:5:65: \"capacity_gb\" is recorded on host memories only (kind memory "
                 "or cxl-memory), not on kind \"gpu\"");
    const char *zero = mutate("\"kind\": \"nvswitch\"", "\"kind\": \"memory\", \"capacity_gb\": 0");
    expect_error(zero, "c.json:6:55: \"capacity_gb\" must be a number of GB above 0 and at most "
                       "1e+06, got 0");
    expect_error(mutate("\"kind\": \"nvswitch\"", "\"kind\": \"memory\", \"capacity_gb\": \"1TB\""),
                 "c.json:6:");
}

/* Presets record their accelerators' memory where the catalog has it
 * (links.md "Memory ceiling" row) and the preset's sources say which
 * part it is; the others record none. Every accelerator carries it (all
 * servers, the torus too), no other device does. */
static void test_preset_memory(void **state)
{
    (void)state;
    struct {
        const char *spec, *memory;
    } cases[] = {
        {"dgx-a100:2", "hbm-a100-80"}, /* A100 SXM4 80GB */
        {"dgx-h100:2", "hbm-h100"},
        {"hgx-h200:2", "hbm-h200"},
        {"gb200-nvl72", "hbm-b200"},
        {"mi300x:2", "hbm-mi300x"},
        {"tpu-v4:2", "hbm-tpuv4"}, /* torus: 128 chips */
        {"dgx-1v", NULL},          /* V100: no catalog row */
        {"pcie-8gpu", NULL},       /* L40S (GDDR6): no catalog row */
        {"tpu-v5e", NULL},         /* the catalog has v5p, not v5e */
        {"cpu-cluster", NULL},     /* CPU endpoint */
        /* the option replaces (DGX A100 40GB) or adds (DGX-1) the memory */
        {"dgx-a100:2,memory=hbm-a100-40", "hbm-a100-40"},
        {"dgx-1v,memory=hbm-h100", "hbm-h100"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        strata_topo_t *t = NULL;
        strata_error_t err;
        must(strata_topo_load_spec(cases[i].spec, cat, &t, &err), &err);
        int accels = 0;
        for (int32_t d = 0; d < strata_topo_device_count(t); d++) {
            strata_topo_device_t dv = strata_topo_device(t, d);
            const char *want = dv.kind == STRATA_DEV_ACCEL ? cases[i].memory : NULL;
            accels += dv.kind == STRATA_DEV_ACCEL;
            if (want == NULL && dv.memory != NULL)
                fail_msg("%s: %s records %s", cases[i].spec, dv.name, dv.memory);
            if (want) assert_string_equal(dv.memory, want);
        }
        assert_int_equal(accels, strata_topo_endpoint_count(t));
        strata_topo_destroy(t);
    }
}

/* strata_topo_set_memory: accelerators only, catalog HBM ids only, before
 * finish; the builder's server spec records it on accelerators. */
static void test_set_memory(void **state)
{
    (void)state;
    strata_topo_t *t = NULL;
    strata_error_t err;
    int32_t g, n;
    must(strata_topo_create("m", cat, &t, &err), &err);
    must(strata_topo_add_device(t, STRATA_DEV_ACCEL, 0, 0, "g", &g, &err), &err);
    must(strata_topo_add_device(t, STRATA_DEV_NIC, 0, 0, "n", &n, &err), &err);
    assert_int_equal(strata_topo_set_memory(t, n, "hbm-h100", &err), STRATA_ERR_INVALID);
    assert_int_equal(strata_topo_set_memory(t, g, "hbm-x", &err), STRATA_ERR_NOT_FOUND);
    assert_int_equal(strata_topo_set_memory(t, g, "ddr4-3200", &err), STRATA_ERR_INVALID);
    assert_int_equal(strata_topo_set_memory(t, 7, "hbm-h100", &err), STRATA_ERR_INVALID);
    must(strata_topo_set_memory(t, g, "hbm-b200", &err), &err);
    strata_topo_linkspec_t l = strata_topo_linkspec_kind("pcie5", 1);
    must(strata_topo_add_link(t, g, n, &l, NULL, &err), &err);
    must(strata_topo_finish(t, &err), &err);
    assert_string_equal(strata_topo_device(t, g).memory, "hbm-b200");
    assert_null(strata_topo_device(t, n).memory);
    assert_null(strata_topo_device(t, 99).memory);
    assert_int_equal(strata_topo_set_memory(t, g, "hbm-h100", &err), STRATA_ERR_INVALID);
    strata_topo_destroy(t);
    /* The builder: 2 servers x 4 accelerators record it; the NICs do not. */
    strata_topo_server_t sv = {.name = "s",
                               .accels = 4,
                               .nics = 4,
                               .pcie = strata_topo_linkspec_kind("pcie5", 1),
                               .nic_net = strata_topo_linkspec_kind("ib-ndr", 1),
                               .memory = "hbm-mi300x"};
    strata_topo_fattree_t net = {.k = 8, .tiers = 2};
    must(strata_topo_build_cluster(&sv, 2, &net, true, cat, &t, &err), &err);
    for (int32_t r = 0; r < 8; r++)
        assert_string_equal(strata_topo_device(t, strata_topo_endpoint(t, r)).memory, "hbm-mi300x");
    assert_null(
        strata_topo_device(t, strata_topo_device(t, strata_topo_endpoint(t, 0)).nic).memory);
    strata_topo_destroy(t);
    sv.memory = "nvlink4";
    assert_int_equal(strata_topo_build_cluster(&sv, 2, &net, true, cat, &t, &err),
                     STRATA_ERR_INVALID);
}

/* Device count, link count and total bandwidth of the built server. */
static void fingerprint(topoio_cluster_t *c, int *dev, int *links, double *bw)
{
    strata_topo_t *t = build_server(c);
    *dev = strata_topo_device_count(t);
    *links = strata_topo_link_count(t);
    *bw = 0;
    for (int32_t l = 0; l < *links; l++)
        *bw += strata_topo_link(t, l).bw_dir;
    strata_topo_destroy(t);
}

static void test_round_trip(void **state)
{
    (void)state;
    const char *presets[] = {"dgx-1v",    "dgx-2",       "dgx-a100",    "dgx-h100:4,oversub=2",
                             "hgx-h200",  "mi300x",      "ascend-910b", "gb200-nvl72",
                             "pcie-8gpu", "cpu-cluster", "tpu-v4:2",    "tpu-v5e"};
    for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
        topoio_cluster_t *c = load_preset(presets[i]), *c2 = NULL;
        char path[] = "/tmp/strata-rt-XXXXXX";
        int fd = mkstemp(path);
        FILE *f = fdopen(fd, "w");
        strata_error_t err;
        assert_int_equal(topoio_export_json(c, f, &err), STRATA_OK);
        fclose(f);
        assert_int_equal(topoio_load_json(path, cat, &c2, &err), STRATA_OK);
        unlink(path);
        assert_int_equal(c2->servers, c->servers);
        assert_int_equal(c2->net.ntiers_oversub, c->net.ntiers_oversub);
        assert_near(c2->net.oversub[0], c->net.oversub[0], 0);
        assert_int_equal(c2->net.ndims, c->net.ndims);
        /* every group keeps its recorded memory (hgx-h200: hbm-h200 ...) */
        assert_int_equal(c2->groups.n, c->groups.n);
        for (size_t g = 0; g < c->groups.n; g++) {
            const char *m1 = c->groups.v[g].memory, *m2 = c2->groups.v[g].memory;
            if (m1 == NULL)
                assert_null(m2);
            else
                assert_string_equal(m1, m2);
        }
        if (c->net.ndims == 0) {
            int d1, l1, d2, l2;
            double b1, b2;
            fingerprint(c, &d1, &l1, &b1);
            fingerprint(c2, &d2, &l2, &b2);
            assert_int_equal(d1, d2);
            assert_int_equal(l1, l2);
            assert_rel(b1, b2, 1e-12);
        }
        topoio_cluster_destroy(c);
        topoio_cluster_destroy(c2);
    }
}

static void test_lanes_scale_bandwidth(void **state)
{
    (void)state;
    const char *text = "{\"server\": {\"devices\": [{\"name\": \"g\", \"kind\": \"gpu\"},"
                       " {\"name\": \"c\", \"kind\": \"cpu\"}],"
                       " \"links\": [{\"from\": \"g\", \"to\": \"c\", \"link\": \"pcie4\","
                       " \"lanes\": 8}]}}";
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    assert_int_equal(topoio_load_json_text(text, "x.json", cat, &c, &err), STRATA_OK);
    strata_topo_t *t = build_server(c);
    const strata_link_t *p4 = strata_link_find(cat, "pcie4");
    /* x8 of a x16 kind carries half the catalog bandwidth. */
    assert_rel(strata_topo_link(t, 0).bw_dir, p4->bw_dir * 8 / p4->lanes, 1e-12);
    strata_topo_destroy(t);
    topoio_cluster_destroy(c);
}

/* The leaf switch a NIC hangs from (its one tier-1 neighbour). */
static int32_t leaf_of(const strata_topo_t *t, const char *nic)
{
    const int32_t *nbr, *chan;
    int32_t d = strata_topo_find_device(t, nic);
    int32_t n = strata_topo_adjacency(t, d, &nbr, &chan);
    for (int32_t i = 0; i < n; i++)
        if (strata_topo_device(t, nbr[i]).tier == 1) return nbr[i];
    return -1;
}

static strata_topo_t *build_spec(const char *spec)
{
    topoio_cluster_t *c = load_preset(spec);
    strata_topo_t *t = NULL;
    strata_error_t err;
    char buf[1024];
    if (topoio_instantiate(c, cat, &t, &err))
        fail_msg("%s", strata_error_str(&err, buf, sizeof(buf)));
    topoio_cluster_destroy(c);
    return t;
}

static void test_rail_network(void **state)
{
    (void)state;
    strata_topo_t *t = build_spec("dgx-h100:4");
    /* 4 servers × (2+4+8+4+8) = 104 devices inside servers, server-major ranks. */
    assert_int_equal(strata_topo_endpoint_count(t), 32);
    assert_string_equal(strata_topo_device(t, strata_topo_endpoint(t, 9)).name, "s1.gpu1");
    /* Rail-optimised: NIC i of every server on the same leaf, rails apart. */
    assert_int_equal(leaf_of(t, "s0.nic3"), leaf_of(t, "s3.nic3"));
    assert_int_not_equal(leaf_of(t, "s0.nic3"), leaf_of(t, "s0.nic4"));
    assert_true(leaf_of(t, "s0.nic0") >= 0);
    strata_topo_destroy(t);
    /* Plain fat-tree: a server's NICs fill a leaf in order instead. */
    t = build_spec("dgx-h100:4,net=fat-tree,tiers=2");
    assert_int_equal(leaf_of(t, "s0.nic3"), leaf_of(t, "s0.nic4"));
    strata_topo_destroy(t);
}

static void test_oversub_and_nics(void **state)
{
    (void)state;
    strata_topo_t *t = build_spec("dgx-h100:16,oversub=4,nics=4");
    const strata_link_t *ndr = strata_link_find(cat, "ib-ndr");
    int nic_links = 0, up = 0;
    for (int32_t l = 0; l < strata_topo_link_count(t); l++) {
        strata_topo_link_t lk = strata_topo_link(t, l);
        if (lk.tier == 1) nic_links++;
        if (lk.tier == 2) {
            /* 4:1 at the leaves: uplinks carry a quarter (build_fattree's model). */
            assert_rel(lk.bw_dir, ndr->bw_dir / 4, 1e-9);
            up++;
        }
    }
    /* nics=4: only NICs 0-3 of each of 16 servers join the fabric. */
    assert_int_equal(nic_links, 64);
    assert_true(up > 0);
    assert_int_equal(leaf_of(t, "s0.nic4"), -1);
    strata_topo_destroy(t);
}

/* Typos that would build billions of elements fail fast. */
static void test_too_large(void **state)
{
    (void)state;
    topoio_cluster_t *c = NULL;
    strata_topo_t *t = NULL;
    strata_error_t err;
    /* A full mesh of 4096 GPUs (the group bound) in each of 4 servers:
     * 4·4096·4095/2 ≈ 3.4e7 links > 2^24. */
    const char *mesh =
        "{\"servers\": 4, \"server\": {\"devices\": [{\"name\": \"g\", \"kind\": \"gpu\","
        " \"count\": 4096}], \"links\": [{\"mesh\": \"g\", \"link\": \"nvlink4\"}]}}";
    must(topoio_load_json_text(mesh, "m.json", cat, &c, &err), &err);
    assert_int_equal(topoio_instantiate(c, cat, &t, &err), STRATA_ERR_RANGE);
    assert_non_null(strstr(err.msg, "beyond what strata builds"));
    topoio_cluster_destroy(c);
    /* 26 devices × 1,000,000 servers. */
    c = load_preset("dgx-h100:1000000");
    assert_int_equal(topoio_instantiate(c, cat, &t, &err), STRATA_ERR_RANGE);
    assert_null(t);
    topoio_cluster_destroy(c);
}

static void test_torus_shapes(void **state)
{
    (void)state;
    /* 64 cubes of 4×4×4 → 16×16×16 = 4096 chips, 3 links per chip. */
    strata_topo_t *t = build_spec("tpu-v4:64");
    assert_int_equal(strata_topo_endpoint_count(t), 4096);
    assert_int_equal(strata_topo_link_count(t), 3 * 4096);
    assert_string_equal(strata_topo_name(t), "tpu-v4");
    strata_topo_destroy(t);
    /* 2 cubes → 4×4×8: 128 chips, 3 wrapped dimensions → 384 links. */
    t = build_spec("tpu-v4:2");
    assert_int_equal(strata_topo_link_count(t), 384);
    strata_topo_destroy(t);
    topoio_cluster_t *c = load_preset("tpu-v4:65");
    strata_error_t err;
    assert_int_equal(topoio_instantiate(c, cat, &t, &err), STRATA_ERR_RANGE);
    topoio_cluster_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dgx_h100_server), cmocka_unit_test(test_dgx1_cube_mesh),
        cmocka_unit_test(test_other_servers),   cmocka_unit_test(test_cpu_cluster_endpoint),
        cmocka_unit_test(test_spec_options),    cmocka_unit_test(test_spec_errors),
        cmocka_unit_test(test_file_errors),     cmocka_unit_test(test_kind_words),
        cmocka_unit_test(test_memory_errors),   cmocka_unit_test(test_preset_memory),
        cmocka_unit_test(test_capacity),        cmocka_unit_test(test_set_memory),
        cmocka_unit_test(test_round_trip),      cmocka_unit_test(test_lanes_scale_bandwidth),
        cmocka_unit_test(test_rail_network),    cmocka_unit_test(test_oversub_and_nics),
        cmocka_unit_test(test_torus_shapes),    cmocka_unit_test(test_too_large),
        cmocka_unit_test(test_file_bounds),     cmocka_unit_test(test_limits_before_building),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
