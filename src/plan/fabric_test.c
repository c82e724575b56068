/*
 * fabric_test.c — fat-tree sizing, transceiver counts and power for two
 * radices worked out by hand, and the catalog's errors.
 */
#define _DEFAULT_SOURCE /* mkstemps */
#include "plan.h"
#include "test.h"

static void load(strata_fabric_catalog_t *c)
{
    strata_error_t err;
    assert_int_equal(strata_fabric_catalog_load(NULL, c, &err), STRATA_OK);
}

/* Radix 64 (Quantum-2, 64 x 400G, 747 W, 150 ns; 400G module 9 W; copper
 * 0.1 W per end, 2 m at 4.5 ns/m; fiber 50 m at 5 ns/m), h = 32:
 *  - 64 endpoints: one switch, 64 copper links, 0 transceivers.
 *    W = 747 + 64 x 2 x 0.1 = 759.8; per endpoint 11.871875.
 *    Diameter 1: 150 + 2 x 2 x 4.5 = 168 ns.
 *  - 2048 = 64^2/2: 2 tiers; 2048/32 = 64 leaves, 32 spines = 96 = 3k/2.
 *    Tier 2: 64 x 32 = 2048 links, 4096 modules x 9 W = 36,864 W.
 *    Switches 96 x 747 = 71,712 W; copper 2048 x 0.2 = 409.6 W.
 *    Total 108,985.6 W; per endpoint 53.215625 W.
 *    Diameter 3: 3 x 150 + 18 + 2 x 50 x 5 = 968 ns.
 *  - 2049: 3 tiers; 65 edges, 65 aggregation, 33 cores = 163 switches;
 *    tier 2 and 3: 65 x 32 = 2080 links each, 4160 modules each.
 *  - 65536 = 64^3/4: 2048 edges + 2048 aggregation + 1024 cores = 5120 =
 *    5k^2/4; 65536 links per tier; 65537 is refused. */
static void test_radix_64(void **state)
{
    (void)state;
    strata_fabric_catalog_t c;
    strata_fabric_t f;
    strata_error_t err;
    load(&c);
    assert_int_equal(strata_fabric_size(&c, "quantum-2", 64, &f, &err), STRATA_OK);
    assert_int_equal(f.tiers, 1);
    assert_int_equal(f.switches, 1);
    assert_int_equal(f.tier[0].transceivers, 0);
    assert_float_equal(f.w_per_endpoint, 759.8 / 64, 1e-9);
    assert_float_equal(f.latency_ns, 168, 1e-9);

    assert_int_equal(strata_fabric_size(&c, "quantum-2", 2048, &f, &err), STRATA_OK);
    assert_int_equal(f.tiers, 2);
    assert_int_equal(f.tier[0].switches, 64);
    assert_int_equal(f.tier[1].switches, 32);
    assert_int_equal(f.switches, 96);
    assert_int_equal(f.tier[1].links, 2048);
    assert_int_equal(f.tier[1].transceivers, 4096);
    assert_float_equal(f.total_w, 108985.6, 1e-6);
    assert_float_equal(f.w_per_endpoint, 53.215625, 1e-9);
    assert_int_equal(f.diameter, 3);
    assert_float_equal(f.latency_ns, 968, 1e-9);

    assert_int_equal(strata_fabric_size(&c, "quantum-2", 2049, &f, &err), STRATA_OK);
    assert_int_equal(f.tiers, 3);
    assert_int_equal(f.switches, 163);
    assert_int_equal(f.tier[1].transceivers, 4160);
    assert_int_equal(f.tier[2].transceivers, 4160);

    assert_int_equal(strata_fabric_size(&c, "quantum-2", 65536, &f, &err), STRATA_OK);
    assert_int_equal(f.switches, 5120);
    assert_int_equal(f.tier[2].links, 65536);
    assert_int_equal(strata_fabric_size(&c, "quantum-2", 65537, &f, &err), STRATA_ERR_RANGE);
    assert_non_null(strstr(err.msg, "3 tiers"));
}

/* Radix 128 (Tomahawk 5 as 128 x 400G, 500 W, 400 ns), h = 64:
 *  - 8192 = 128^2/2: 2 tiers, 128 leaves + 64 spines = 192 = 3k/2;
 *    tier 2: 8192 links, 16,384 modules x 9 W = 147,456 W.
 *    Switches 96,000 W; copper 1638.4 W; per endpoint
 *    (96000 + 147456 + 1638.4) / 8192 = 29.9187 W.
 *  - 8193: 3 tiers (a 2-tier radix-64 fabric stops at 2048).
 *  - Co-packaged: 400 Gb/s x 5.6 pJ/bit = 2.24 W per optical end:
 *    (96000 + 1638.4 + 36,700.16) / 8192 = 16.39875 W. */
static void test_radix_128(void **state)
{
    (void)state;
    strata_fabric_catalog_t c;
    strata_fabric_t f;
    strata_error_t err;
    load(&c);
    assert_int_equal(strata_fabric_size(&c, "tomahawk5-400", 8192, &f, &err), STRATA_OK);
    assert_int_equal(f.tiers, 2);
    assert_int_equal(f.switches, 192);
    assert_int_equal(f.tier[1].transceivers, 16384);
    assert_float_equal(f.w_per_endpoint, (96000 + 147456 + 1638.4) / 8192, 1e-9);
    assert_float_equal(f.cpo_w_per_endpoint, 16.39875, 1e-9);
    assert_int_equal(strata_fabric_size(&c, "tomahawk5-400", 8193, &f, &err), STRATA_OK);
    assert_int_equal(f.tiers, 3);
    assert_string_equal(strata_fabric_switch_for(&c, 400), "quantum-2");
    assert_string_equal(strata_fabric_switch_for(&c, 800), "tomahawk5");
    assert_null(strata_fabric_switch_for(&c, 3200));
    assert_int_equal(strata_fabric_size(&c, "nope", 8, &f, &err), STRATA_ERR_INVALID);
}

static void test_bad_catalog(void **state)
{
    (void)state;
    strata_fabric_catalog_t c;
    strata_error_t err;
    const char *p =
        test_write_tmp(".json", "{\"optics\": [],\n \"switches\": [{\"id\": \"s\", "
                                "\"name\": \"n\", \"ports\": 7, \"port_gbps\": 400, \"watts\": 1, "
                                "\"hop_ns\": 1, \"source\": \"x\"}], \"copper\": {}, "
                                "\"fiber\": {}, \"cpo\": {}}");
    assert_int_equal(strata_fabric_catalog_load(p, &c, &err), STRATA_ERR_PARSE);
    assert_int_equal(err.line, 2);
    assert_non_null(strstr(err.msg, "even"));
    remove(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_radix_64),
        cmocka_unit_test(test_radix_128),
        cmocka_unit_test(test_bad_catalog),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
