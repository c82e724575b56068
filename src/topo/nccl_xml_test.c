/*
 * nccl_xml_test.c — NCCL topology XML import: the HGX H200 dump of
 * nccl.md §3.3 (completed to 8 GPUs) becomes 8 GPUs, 4 NVSwitches and 8
 * NICs at 50 GB/s; GPU↔GPU NVLinks, invisible targets, and every kind of bad
 * input (malformed, truncated, wrong-typed, wrong version) with its line.
 */
#define _DEFAULT_SOURCE
#include "topoio_test.h"

#include <unistd.h>

static const char *h200 = STRATA_SOURCE_DIR "/tests/data/nccl_h200.xml";

static void test_h200(void **state)
{
    (void)state;
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    must(topoio_nccl_xml_load(h200, cat, &c, &err), &err);
    assert_int_equal(topoio_count_kind(c, "gpu"), 8);
    assert_int_equal(topoio_count_kind(c, "nvswitch"), 4);
    assert_int_equal(topoio_count_kind(c, "nic"), 8);
    assert_int_equal(topoio_count_kind(c, "cpu"), 2);
    assert_int_equal(topoio_count_kind(c, "pcie-switch"), 8);
    /* Every NIC: 400000 Mb/s → NCCL's bw = speed/8000 = 50 GB/s (nccl.md
     * §2.5). The port kind chosen must carry that line rate. */
    for (size_t g = 0; g < c->groups.n; g++) {
        if (strcmp(c->groups.v[g].kind, "nic") != 0) continue;
        assert_string_equal(c->groups.v[g].port, "roce-400g"); /* class 0x020000 + mlx5 */
        assert_rel(strata_link_find(cat, c->groups.v[g].port)->line_dir, 400000 / 8000.0 * 1e9,
                   0.01);
    }
    strata_topo_t *t = NULL;
    must(topoio_instantiate(c, cat, &t, &err), &err);
    /* 2 CPU + 8 PCIe switches + 8 GPU + 8 NIC + 4 NVSwitch = 30 devices;
     * 8×4 NVLink + 8 switch↔CPU + 8 GPU↔switch + 8 NIC↔switch = 56 links. */
    assert_int_equal(strata_topo_device_count(t), 30);
    assert_int_equal(strata_topo_link_count(t), 56);
    for (int r = 0; r < 8; r++)
        assert_int_equal(links_of(t, strata_topo_endpoint(t, r), "nvlink4"), 18);
    /* The switch the dump lists first (0000:07) gets 5 links from each GPU. */
    assert_int_equal(links_of(t, strata_topo_find_device(t, "nvsw0"), "nvlink4"), 40);
    assert_int_equal(links_of(t, strata_topo_find_device(t, "nvsw2"), "nvlink4"), 32);
    /* Gen5 x16 ("32.0 GT/s PCIe", width 16) between GPU 0 and its switch. */
    int32_t l = strata_topo_link_between(t, strata_topo_find_device(t, "gpu0"),
                                         strata_topo_find_device(t, "pcisw0"));
    assert_true(l >= 0);
    assert_string_equal(strata_topo_link(t, l).kind, "pcie5");
    strata_topo_destroy(t);
    topoio_cluster_destroy(c);
}

static void test_h200_export_reload(void **state)
{
    (void)state;
    topoio_cluster_t *c = NULL, *c2 = NULL;
    strata_error_t err;
    must(topoio_nccl_xml_load(h200, cat, &c, &err), &err);
    char path[] = "/tmp/strata-xml-XXXXXX";
    FILE *f = fdopen(mkstemp(path), "w");
    must(topoio_export_json(c, f, &err), &err);
    fclose(f);
    must(topoio_load_json(path, cat, &c2, &err), &err);
    unlink(path);
    assert_int_equal(c2->groups.n, c->groups.n);
    assert_int_equal(c2->conns.n, c->conns.n);
    for (size_t i = 0; i < c->conns.n; i++) {
        assert_string_equal(c2->conns.v[i].link, c->conns.v[i].link);
        assert_int_equal(c2->conns.v[i].count, c->conns.v[i].count);
    }
    topoio_cluster_destroy(c);
    topoio_cluster_destroy(c2);
}

/* Two PCIe A100s joined by an NVLink bridge (12 links, as in the Azure
 * NCv4 topology, nccl.md §3.3), both sides listing it; a third GPU whose
 * NVLink target NCCL could not see. */
static const char *const bridge =
    "<system version=\"1\">\n"
    "  <cpu numaid=\"0\">\n"
    "    <pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
    "link_width=\"16\">\n"
    "      <gpu dev=\"0\" sm=\"80\"><nvlink target=\"0000:02:00.0\" count=\"12\" "
    "tclass=\"0x030200\"/></gpu>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:02:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
    "link_width=\"8\">\n"
    "      <gpu dev=\"1\" sm=\"80\"><nvlink target=\"0000:01:00.0\" count=\"12\" "
    "tclass=\"0x030200\"/></gpu>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:03:00.0\" class=\"0x030200\">\n"
    "      <gpu dev=\"2\" sm=\"80\"><nvlink target=\"fffffff:ffff:ff\" count=\"12\"/></gpu>\n"
    "    </pci>\n"
    "    <nic><net name=\"eth0\" speed=\"100000\"/></nic>\n"
    "  </cpu>\n"
    "</system>\n";

static void test_gpu_pairs_and_invisible_targets(void **state)
{
    (void)state;
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    must(topoio_nccl_xml_load_text(bridge, "b.xml", cat, &c, &err), &err);
    strata_topo_t *t = NULL;
    must(topoio_instantiate(c, cat, &t, &err), &err);
    int32_t g0 = strata_topo_find_device(t, "gpu0"), g1 = strata_topo_find_device(t, "gpu1");
    int32_t l = strata_topo_link_between(t, g0, g1);
    assert_true(l >= 0);
    /* Listed by both GPUs, added once, with its 12 NVLink3 links. */
    assert_int_equal(links_of(t, g0, "nvlink3"), 12);
    assert_int_equal(strata_topo_link(t, l).mult, 12);
    /* The invisible target became an NVSwitch. */
    assert_int_equal(topoio_count_kind(c, "nvswitch"), 1);
    /* x8 link: half of the Gen4 x16 catalog bandwidth; no link_speed: Gen3. */
    const strata_link_t *p4 = strata_link_find(cat, "pcie4");
    l = strata_topo_link_between(t, g1, strata_topo_find_device(t, "cpu0"));
    assert_rel(strata_topo_link(t, l).bw_dir, p4->bw_dir * 8 / p4->lanes, 1e-12);
    l = strata_topo_link_between(t, strata_topo_find_device(t, "gpu2"),
                                 strata_topo_find_device(t, "cpu0"));
    assert_string_equal(strata_topo_link(t, l).kind, "pcie3");
    /* The bare NIC under the CPU: Ethernet by name (eth0), 100 Gb/s. */
    assert_string_equal(c->groups.v[topoio_find_group(c, "nic0")].port, "eth-100g");
    strata_topo_destroy(t);
    topoio_cluster_destroy(c);
}

/* A GH200 node: the GPU's C2C links (count 10, as NCCL dumps Grace Hopper). */
static void test_c2c(void **state)
{
    (void)state;
    const char *gh = "<system version=\"1\">\n"
                     "  <cpu numaid=\"0\" arch=\"arm64\">\n"
                     "    <pci busid=\"0009:01:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s "
                     "PCIe\" link_width=\"16\">\n"
                     "      <gpu dev=\"0\" sm=\"90\"><c2c bw=\"45000\" count=\"10\"/></gpu>\n"
                     "    </pci>\n"
                     "  </cpu>\n"
                     "</system>\n";
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    must(topoio_nccl_xml_load_text(gh, "gh.xml", cat, &c, &err), &err);
    strata_topo_t *t = NULL;
    must(topoio_instantiate(c, cat, &t, &err), &err);
    int32_t g = strata_topo_find_device(t, "gpu0");
    assert_int_equal(links_of(t, g, "nvlink-c2c"), 10);
    /* 10 × the catalog's C2C link = the GPU's 450 GB/s per direction (links.md). */
    int32_t l = strata_topo_link_between(t, g, strata_topo_find_device(t, "cpu0"));
    int32_t l2 = -1;
    for (int32_t i = 0; i < strata_topo_link_count(t); i++)
        if (strcmp(strata_topo_link(t, i).kind, "nvlink-c2c") == 0) l2 = i;
    assert_true(l >= 0 && l2 >= 0);
    assert_rel(strata_topo_link(t, l2).bw_dir, 10 * strata_link_find(cat, "nvlink-c2c")->bw_dir,
               1e-12);
    strata_topo_destroy(t);
    topoio_cluster_destroy(c);
    expect_load_error(topoio_nccl_xml_load_text, mutate_text(gh, "count=\"10\"", "count=\"ten\""),
                      "gh.xml", "gh.xml:4:0: <c2c> attribute 'count': expected an integer");
}

static void expect_error(const char *text, const char *needle)
{
    expect_load_error(topoio_nccl_xml_load_text, text, "x.xml", needle);
}

/* bridge with the first occurrence of from replaced by to. */
static const char *mutate(const char *from, const char *to)
{
    return mutate_text(bridge, from, to);
}

static void test_errors(void **state)
{
    (void)state;
    /* Wrong types: reported at the element's line. */
    expect_error(mutate("count=\"12\"", "count=\"twelve\""),
                 "x.xml:4:0: <nvlink> attribute 'count': expected an integer, got \"twelve\"");
    expect_error(mutate("sm=\"80\"", "sm=\"8.0\""), "x.xml:4:0: <gpu> attribute 'sm'");
    expect_error(mutate("link_width=\"8\"", "link_width=\"x8\""),
                 "x.xml:6:0: <pci> attribute 'link_width': expected an integer");
    expect_error(mutate("16.0 GT/s", "fast"), "x.xml:3:0: <pci> attribute 'link_speed'");
    expect_error(mutate("speed=\"100000\"", "speed=\"100G\""),
                 "x.xml:12:0: <net> attribute 'speed'");
    expect_error(mutate(" dev=\"1\"", ""), "x.xml:7:0: <gpu> needs attribute 'dev'");
    expect_error(mutate("version=\"1\"", "version=\"2\""), "x.xml:1:0: <system> version 2");
    expect_error(mutate("class=\"0x030200\"", "class=\"gpu\""),
                 "x.xml:3:0: <pci> attribute 'class'");
    /* Truncated inside line 10 after its 6 spaces of indent: libxml2 reports
     * the end of input there (10:7) and the element left open (line 9). */
    char cut[1024];
    snprintf(cut, sizeof(cut), "%.*s", (int)(strstr(bridge, "<gpu dev=\"2\"") - bridge), bridge);
    expect_error(cut, "x.xml:10:7: malformed XML: Premature end of data in tag pci line 9");
    /* Mismatched tag: libxml2 names it, at its line. */
    expect_error(mutate("</gpu>", "</gpx>"), "x.xml:4:");
    expect_error("<topology/>", "x.xml:1:0: expected <system version=\"1\">");
    expect_error("", "malformed XML");
    /* Bounds: strtol's ERANGE (2^64) and int32 overflow (2^32 + 12) are errors,
     * not LONG_MAX or a truncated 12; a link count above the 4096 bound too. */
    expect_error(mutate("count=\"12\"", "count=\"18446744073709551616\""),
                 "x.xml:4:0: <nvlink> attribute 'count': 18446744073709551616 is out of range");
    expect_error(mutate("count=\"12\"", "count=\"4294967308\""),
                 "x.xml:4:0: <nvlink> attribute 'count': 4294967308 is out of range");
    expect_error(mutate("count=\"12\"", "count=\"5000\""),
                 "x.xml:4:0: <nvlink> attribute 'count' must be from 1 to 4096");
}

static void test_missing_file(void **state)
{
    (void)state;
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    assert_int_equal(topoio_nccl_xml_load("/nonexistent/t.xml", cat, &c, &err), STRATA_ERR_IO);
    assert_string_equal(err.file, "/nonexistent/t.xml");
    /* a device is refused at once (it used to be handed to libxml2 whole) */
    assert_int_equal(topoio_nccl_xml_load("/dev/zero", cat, &c, &err), STRATA_ERR_IO);
    assert_non_null(strstr(err.msg, "not a regular file"));
    assert_null(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h200),
        cmocka_unit_test(test_h200_export_reload),
        cmocka_unit_test(test_gpu_pairs_and_invisible_targets),
        cmocka_unit_test(test_c2c),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
