/*
 * catalog_test.c — loading links.json: the shipped catalog is complete
 * (every id of the public contract, each with a source), lookups work, and
 * every kind of bad input gives one positioned error (file:line:column),
 * never a crash, including under allocation failure.
 */
#define _DEFAULT_SOURCE
#include "link.h"
#include "test.h"

/* A valid one-entry catalog; each test swaps one line for a broken one.
 * Line numbers below are 1-based lines of this text. */
static const char *const good_lines[] = {
    "{\"format\": \"strata-links\", \"version\": 1, \"links\": [",              /* 1 */
    "  {\"id\": \"x4\", \"category\": \"PCIe\", \"name\": \"X\",",              /* 2 */
    "   \"confidence\": \"H\", \"source\": \"hand\",",                          /* 3 */
    "   \"signal\": {\"lanes\": 4, \"baud_gbd\": 8, \"modulation\": \"NRZ\"},", /* 4 */
    "   \"line_code\": \"128b/130b\", \"links\": 1, \"duplex\": \"full\",",     /* 5 */
    "   \"packet\": {\"format\": \"none\", \"basis\": \"b\"}}",                 /* 6 */
    "]}",                                                                       /* 7 */
};
#define NLINES (sizeof(good_lines) / sizeof(good_lines[0]))

/* The catalog text with line `line` (1-based) replaced by repl (NULL: none). */
static const char *catalog_with(int line, const char *repl)
{
    static char buf[4096];
    size_t o = 0;
    for (size_t i = 0; i < NLINES; i++)
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\n",
                              (int)i + 1 == line ? repl : good_lines[i]);
    return test_write_tmp(".json", buf);
}

static void expect_error(const char *path, strata_status_t want, int line, int col,
                         const char *needle)
{
    strata_link_catalog_t *cat = (void *)0x1;
    strata_error_t err;
    strata_error_clear(&err);
    assert_int_equal(strata_link_catalog_load(path, &cat, &err), want);
    assert_ptr_equal(cat, (void *)0x1); /* untouched on failure */
    if (strstr(err.msg, needle) == NULL) fail_msg("message '%s' lacks '%s'", err.msg, needle);
    assert_string_equal(err.file, path);
    if (err.line != line || err.column != col)
        fail_msg("error at %d:%d, expected %d:%d (%s)", err.line, err.column, line, col, err.msg);
    remove(path);
}

static void test_good_minimal(void **state)
{
    (void)state;
    strata_link_catalog_t *cat = NULL;
    const char *p = catalog_with(0, NULL);
    assert_int_equal(strata_link_catalog_load(p, &cat, NULL), STRATA_OK);
    assert_int_equal(strata_link_catalog_count(cat), 1);
    const strata_link_t *l = strata_link_find(cat, "X4"); /* case-insensitive */
    assert_non_null(l);
    /* 4 x 8 GT/s / 8 = 4 GB/s raw; x 128/130 = 3.93846 GB/s; no packet step */
    assert_near(l->bw_dir, 4e9 * 128 / 130, 1);
    assert_null(strata_link_find(cat, "x8"));
    assert_null(strata_link_catalog_at(cat, 1));
    strata_link_catalog_destroy(cat);
    remove(p);
}

static void test_malformed_json(void **state)
{
    (void)state;
    /* missing comma between "links": 1 and "duplex": jansson stops at line 5 */
    const char *p =
        catalog_with(5, "   \"line_code\": \"128b/130b\", \"links\": 1 \"duplex\": \"full\",");
    strata_link_catalog_t *cat = NULL;
    strata_error_t err;
    assert_int_equal(strata_link_catalog_load(p, &cat, &err), STRATA_ERR_PARSE);
    assert_int_equal(err.line, 5);
    assert_true(err.column > 0);
    remove(p);
}

static void test_missing_field(void **state)
{
    (void)state;
    /* no "source": reported at the entry's opening brace, line 2 column 3 */
    expect_error(catalog_with(3, "   \"confidence\": \"H\","), STRATA_ERR_PARSE, 2, 3,
                 "missing field \"source\"");
}

static void test_negative_lanes(void **state)
{
    (void)state;
    /* the value -4 starts at column 24 of line 4: `   "signal": {"lanes": -4` */
    expect_error(
        catalog_with(4,
                     "   \"signal\": {\"lanes\": -4, \"baud_gbd\": 8, \"modulation\": \"NRZ\"},"),
        STRATA_ERR_PARSE, 4, 24, "\"lanes\" must be a count");
}

static void test_unknown_line_code(void **state)
{
    (void)state;
    /* `   "line_code": "9b/11b"`: the string starts at column 17 */
    expect_error(
        catalog_with(5, "   \"line_code\": \"9b/11b\", \"links\": 1, \"duplex\": \"full\","),
        STRATA_ERR_PARSE, 5, 17, "unknown line code \"9b/11b\"");
}

static void test_unknown_modulation_and_key(void **state)
{
    (void)state;
    expect_error(
        catalog_with(4, "   \"signal\": {\"lanes\": 4, \"baud_gbd\": 8, \"modulation\": \"QAM\"},"),
        STRATA_ERR_PARSE, 4, 56, "unknown modulation");
    /* a typo in a key is refused at its value */
    expect_error(catalog_with(3, "   \"confidence\": \"H\", \"sauce\": \"hand\","),
                 STRATA_ERR_PARSE, 3, 32, "unknown field \"sauce\"");
    expect_error(
        catalog_with(6, "   \"packet\": {\"format\": \"none\", \"basis\": \"b\"}, \"lane\": 2}"),
        STRATA_ERR_PARSE, 6, 56, "unknown field \"lane\"");
}

/* Columns here were counted independently as Python's line.index(token) + 1. */
static void test_bad_values(void **state)
{
    (void)state;
    expect_error(
        catalog_with(5, "   \"line_code\": \"128b/130b\", \"links\": 0, \"duplex\": \"full\","),
        STRATA_ERR_PARSE, 5, 39, "\"links\" must be a count");
    expect_error(
        catalog_with(
            4, "   \"signal\": {\"lanes\": 4, \"baud_gbd\": \"8\", \"modulation\": \"NRZ\"},"),
        STRATA_ERR_PARSE, 4, 39, "must be a number");
    expect_error(catalog_with(6,
                              "   \"packet\": {\"format\": \"TLP\", \"mtu\": 9, \"mtu_min\": 16, "
                              "\"mtu_max\": 64, \"in_mtu\": [], \"per_packet\": []}}"),
                 STRATA_ERR_PARSE, 6, 39, "mtu_min..mtu_max");
}

/* Flow control per bytes: 6 B of every 242 B is a goodput factor of
 * 1 - 6/242 (x4's 3.93846 GB/s line rate -> 3.84082 GB/s); 6 B of every
 * 2.2 B would be negative goodput and is refused at the flow object (found
 * by fz_links). Columns: Python's line.index('{"bytes"') + 1 = 56. */
static void test_flow_per_bytes(void **state)
{
    (void)state;
    strata_link_catalog_t *cat = NULL;
    const char *p =
        catalog_with(6, "   \"packet\": {\"format\": \"none\", \"basis\": \"b\"}, "
                        "\"flow\": {\"bytes\": 6, \"per_bytes\": 242, \"basis\": \"b\"}}");
    assert_int_equal(strata_link_catalog_load(p, &cat, NULL), STRATA_OK);
    assert_near(strata_link_find(cat, "x4")->bw_dir, 4e9 * 128 / 130 * (1 - 6.0 / 242), 1);
    strata_link_catalog_destroy(cat);
    remove(p);
    expect_error(catalog_with(6, "   \"packet\": {\"format\": \"none\", \"basis\": \"b\"}, "
                                 "\"flow\": {\"bytes\": 6, \"per_bytes\": 2.2, \"basis\": \"b\"}}"),
                 STRATA_ERR_PARSE, 6, 56, "bytes must be less than per_bytes");
    expect_error(catalog_with(6, "   \"packet\": {\"format\": \"none\", \"basis\": \"b\"}, "
                                 "\"flow\": {\"bytes\": 6, \"per_bytes\": 6, \"basis\": \"b\"}}"),
                 STRATA_ERR_PARSE, 6, 56, "bytes must be less than per_bytes");
}

/* A vendor's usable rate where the packet layout is unpublished: x4's line
 * rate is 4 x 8 GT/s x 128/130 / 8 = 3.938 GB/s, so 3 GB/s is a packet
 * step of 3/3.938 = 0.7617 and 5 GB/s is refused at its value; it applies
 * only to format "none". Columns: Python's line.index(value) + 1. */
static void test_usable_rate(void **state)
{
    (void)state;
    strata_link_catalog_t *cat = NULL;
    const char *p = catalog_with(
        6, "   \"packet\": {\"format\": \"none\", \"usable_gbs\": 3, \"basis\": \"b\"}}");
    assert_int_equal(strata_link_catalog_load(p, &cat, NULL), STRATA_OK);
    const strata_link_t *l = strata_link_find(cat, "x4");
    assert_near(l->bw_dir, 3e9, 1);
    assert_near(l->eta_pkt, 3.0 / (4 * 8.0 / 8 * 128 / 130), 1e-12);
    strata_link_catalog_destroy(cat);
    remove(p);
    expect_error(catalog_with(6, "   \"packet\": {\"format\": \"none\", \"usable_gbs\": 5, "
                                 "\"basis\": \"b\"}}"),
                 STRATA_ERR_PARSE, 6, 47, "exceeds the link's line rate");
    expect_error(catalog_with(6, "   \"packet\": {\"format\": \"TLP\", \"usable_gbs\": 3, "
                                 "\"mtu\": 32, \"mtu_min\": 16, \"mtu_max\": 64, "
                                 "\"in_mtu\": [], \"per_packet\": []}}"),
                 STRATA_ERR_PARSE, 6, 46, "only where the packet format is \"none\"");
}

/* A "memory" must name a memory entry: x4 names itself, a full-duplex PCIe
 * entry. `   "confidence": "H", "source": "hand", "memory": "x4",`: the value
 * "x4" starts at column 51 (Python's line.index('"x4"') + 1). */
static void test_bad_memory(void **state)
{
    (void)state;
    expect_error(
        catalog_with(3, "   \"confidence\": \"H\", \"source\": \"hand\", \"memory\": \"x4\","),
        STRATA_ERR_PARSE, 3, 51, "must name a memory entry");
}

static void test_duplicate_id(void **state)
{
    (void)state;
    char line[512];
    snprintf(line, sizeof(line), "%s,\n%s%s",
             "   \"packet\": {\"format\": \"none\", \"basis\": \"b\"}}", good_lines[1],
             "\"confidence\": \"H\", \"source\": \"hand\", \"signal\": {\"lanes\": 4, "
             "\"baud_gbd\": 8, \"modulation\": \"NRZ\"}, \"line_code\": \"none\", \"links\": 1, "
             "\"duplex\": \"full\", \"packet\": {\"format\": \"none\", \"basis\": \"b\"}}");
    /* the second entry begins on line 7; its "id" value at column 10 */
    expect_error(catalog_with(6, line), STRATA_ERR_PARSE, 7, 10, "duplicate id \"x4\"");
}

static void test_bad_latency(void **state)
{
    (void)state;
    /* the good catalog with a latencies array whose range is upside down */
    char text[2048];
    size_t o = 0;
    for (size_t i = 0; i + 1 < NLINES; i++)
        o += (size_t)snprintf(text + o, sizeof(text) - o, "%s\n", good_lines[i]);
    snprintf(text + o, sizeof(text) - o,
             "], \"latencies\": [\n {\"id\": \"a\", \"what\": \"w\", \"low_us\": 2, "
             "\"high_us\": 1, \"source\": \"s\", \"confidence\": \"L\"}]}\n");
    strata_link_catalog_t *cat = NULL;
    strata_error_t err;
    assert_int_equal(link_catalog_load_text(text, strlen(text), "lat.json", &cat, &err),
                     STRATA_ERR_PARSE);
    /* line 8: ` {"id": "a", "what": "w", "low_us": 2, "high_us": 1`: the 1 at column 51 (index + 1)
     */
    if (err.line != 8 || err.column != 51 || strstr(err.msg, "below low_us") == NULL)
        fail_msg("got %d:%d %s", err.line, err.column, err.msg);
}

/* The latency split: switch_us / endpoint_us need latency_us, must not be
 * negative; a message through one switch is 2 hops + the switch + the
 * endpoints (hand: 0.5 + 0.5 + 0.25 + 1.5 = 2.75 us). */
static void test_latency_split(void **state)
{
    (void)state;
    expect_error(
        catalog_with(3, "   \"confidence\": \"H\", \"source\": \"hand\", \"switch_us\": 1,"),
        STRATA_ERR_PARSE, 3, 54, "\"switch_us\" needs \"latency_us\"");
    expect_error(catalog_with(3, "   \"confidence\": \"H\", \"source\": \"hand\", \"latency_us\": "
                                 "1, \"latency_basis\": \"b\", \"endpoint_us\": -1,"),
                 STRATA_ERR_PARSE, 3, 95, "\"endpoint_us\" must not be negative");
    const char *path = catalog_with(3, "   \"confidence\": \"H\", \"source\": \"hand\", "
                                       "\"latency_us\": 0.5, \"latency_basis\": \"b\", "
                                       "\"switch_us\": 0.25, \"endpoint_us\": 1.5,");
    strata_link_catalog_t *cat = NULL;
    strata_error_t err;
    assert_int_equal(strata_link_catalog_load(path, &cat, &err), STRATA_OK);
    const strata_link_t *l = strata_link_find(cat, "x4");
    assert_non_null(l);
    assert_true(fabs(strata_link_message_latency(l, 1) - 2.75e-6) < 1e-15);
    assert_true(fabs(strata_link_message_latency(l, 0) - 2.0e-6) < 1e-15);
    strata_link_catalog_destroy(cat);
    remove(path);
}

static void test_missing_file(void **state)
{
    (void)state;
    strata_link_catalog_t *cat = NULL;
    strata_error_t err;
    assert_int_equal(strata_link_catalog_load("/nonexistent/links.json", &cat, &err),
                     STRATA_ERR_IO);
    assert_string_equal(err.file, "/nonexistent/links.json");
    strata_link_catalog_destroy(NULL); /* no-op */
}

/* Every id the public header promises, each with a source and positive figures. */
static void test_shipped_catalog(void **state)
{
    (void)state;
    static const char *const ids[] = {
        "pcie1",      "pcie2",     "pcie3",      "pcie4",       "pcie5",       "pcie6",
        "pcie7",      "cxl1",      "cxl2",       "cxl3",        "nvlink1",     "nvlink2",
        "nvlink3",    "nvlink4",   "nvlink5",    "nvlink-c2c",  "nvswitch1",   "nvswitch2",
        "nvswitch3",  "nvswitch4", "if-mi250x",  "if-mi300x",   "hccs-910",    "hccs-910b",
        "ici-v2",     "ici-v3",    "ici-v4",     "ici-v5e",     "ici-v6e",     "ici-v5p",
        "gaudi1",     "gaudi2",    "eth-10g",    "eth-25g",     "eth-40g",     "eth-100g",
        "eth-200g",   "eth-400g",  "eth-800g",   "eth-1g-tbf",  "roce-25g",    "roce-100g",
        "roce-200g",  "roce-400g", "roce-800g",  "ib-sdr",      "ib-ddr",      "ib-qdr",
        "ib-fdr",     "ib-edr",    "ib-hdr",     "ib-ndr",      "ib-xdr",      "upi2",
        "xgmi-genoa", "upi1",      "qpi",        "xgmi-rome",   "ddr4-2133",   "ddr4-2666",
        "ddr4-3200",  "ddr5-4800", "ddr5-6400",  "hbm-a100-40", "hbm-a100-80", "hbm-h100",
        "hbm-h200",   "hbm-b200",  "hbm-mi300x", "hbm-tpuv4",   "hbm-tpuv5p"};
    strata_link_catalog_t *cat = NULL;
    assert_int_equal(strata_link_catalog_load(NULL, &cat, NULL), STRATA_OK); /* data dir */
    assert_int_equal(strata_link_catalog_count(cat), sizeof(ids) / sizeof(ids[0]));
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        const strata_link_t *l = strata_link_find(cat, ids[i]);
        if (l == NULL) fail_msg("missing %s", ids[i]);
        assert_true(strlen(l->source) > 3);
        assert_true(l->bw_dir > 0 && l->bw_dir <= l->line_dir && l->line_dir <= l->raw_dir);
        assert_near(l->device_bw_dir, l->links * l->bw_dir, 1e-3);
        if (l->latency > 0) assert_true(strlen(l->latency_basis) > 3);
    }
    /* socket links (fabric-host.md B1): UPI 2.0 16 data lanes x 16 GT/s =
     * 2 B per transfer = 32 GB/s per direction, 4 links on SPR; Genoa
     * xGMI 16 lanes x 32 Gb/s = 64 GB/s per direction per link */
    assert_near(strata_link_find(cat, "upi2")->bw_dir, 32e9, 1);
    assert_near(strata_link_find(cat, "upi2")->device_bw_dir, 128e9, 1);
    assert_near(strata_link_find(cat, "xgmi-genoa")->bw_dir, 64e9, 1);
    /* the veth of bench/tcp/run.sh shaped by tbf to 1 Gbit/s: tbf charges
     * the 14 B MAC header + the IP packet, which carries 1448 B of TCP
     * payload (1500 - 20 IPv4 - 32 TCP with timestamps) per 1514 B */
    assert_near(strata_link_find(cat, "eth-1g-tbf")->bw_dir, 125e6 * 1448 / 1514, 1e-3);
    /* the latency hierarchy of links.md: kernel launch 3-10 us, RDMA over IB 0.8-1.5 us */
    assert_int_equal(strata_link_latency_count(cat), 10);
    const strata_latency_t *k = strata_link_latency_find(cat, "gpu-kernel-launch");
    assert_non_null(k);
    assert_near(k->low, 3e-6, 1e-15);
    assert_near(k->high, 10e-6, 1e-15);
    assert_near(strata_link_latency_find(cat, "RDMA-IB")->high, 1.5e-6, 1e-15);
    assert_null(strata_link_latency_at(cat, 10));
    strata_link_catalog_destroy(cat);
}

/* Each allocation in turn fails: the loader must return NOMEM (or succeed
 * once past the last allocation) without leaking (checked under ASan). */
static void test_oom(void **state)
{
    (void)state;
    const char *p = catalog_with(0, NULL);
    int ok = 0;
    for (long n = 0; n < 200 && !ok; n++) {
        strata_link_catalog_t *cat = NULL;
        strata_error_t err;
        util_alloc_fail_after(n);
        strata_status_t st = strata_link_catalog_load(p, &cat, &err);
        util_alloc_fail_after(-1);
        if (st == STRATA_OK)
            ok = 1;
        else
            assert_int_equal(st, STRATA_ERR_NOMEM);
        strata_link_catalog_destroy(cat);
    }
    assert_true(ok);
    remove(p);
}

/* Mutation fuzzing of the shipped catalog: 2000 copies, each with 1-4
 * bytes overwritten by JSON-significant characters at pseudo-random
 * places (fixed seed). Every load must succeed or fail with a positioned
 * PARSE error; none may crash or leak (run under ASan). */
static void test_mutations(void **state)
{
    (void)state;
    FILE *f = fopen(STRATA_SOURCE_DIR "/data/links.json", "rb");
    assert_non_null(f);
    static char text[1 << 17], copy[1 << 17];
    size_t len = fread(text, 1, sizeof(text), f);
    fclose(f);
    assert_true(len > 1000 && len < sizeof(text));
    static const char alphabet[] = "{}[],:\"-0919e. \nx";
    int parsed = 0, rejected = 0;
    for (uint64_t it = 0; it < 2000; it++) {
        memcpy(copy, text, len);
        uint64_t h = util_hash_u64(it + 1);
        for (uint64_t k = 0; k <= (h & 3); k++) {
            uint64_t r = util_hash_u64(h + k);
            copy[r % len] = alphabet[(r >> 32) % (sizeof(alphabet) - 1)];
        }
        strata_link_catalog_t *cat = NULL;
        strata_error_t err;
        strata_status_t st = link_catalog_load_text(copy, len, "mut.json", &cat, &err);
        if (st == STRATA_OK) {
            parsed++;
            strata_link_catalog_destroy(cat);
            continue;
        }
        rejected++;
        assert_int_equal(st, STRATA_ERR_PARSE);
        if (err.line < 1) fail_msg("iteration %d: error without a line: %s", (int)it, err.msg);
    }
    /* both outcomes occur: mutations inside strings parse, structural ones fail */
    assert_true(parsed > 0 && rejected > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_minimal),
        cmocka_unit_test(test_malformed_json),
        cmocka_unit_test(test_missing_field),
        cmocka_unit_test(test_negative_lanes),
        cmocka_unit_test(test_unknown_line_code),
        cmocka_unit_test(test_unknown_modulation_and_key),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_flow_per_bytes),
        cmocka_unit_test(test_usable_rate),
        cmocka_unit_test(test_duplicate_id),
        cmocka_unit_test(test_bad_memory),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_bad_latency),
        cmocka_unit_test(test_shipped_catalog),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_latency_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
