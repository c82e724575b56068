/*
 * datalink_test.c — the data-link models (flowctl.c, retx.c, pfc.c) against
 * values computed by hand, arithmetic beside each.
 */
#define _DEFAULT_SOURCE
#include "link.h"
#include "test.h"

static void test_rtt_and_credits(void **state)
{
    (void)state;
    /* 100 m at 5 ns/m, there and back: 1.0 us; one 4122 B IB packet at
     * 12.5 GB/s each way: 2 x 329.76 ns; total 1.65952 us */
    assert_near(strata_link_rtt(12.5e9, 100, 4122), 1.65952e-6, 1e-12);
    /* NDR: 50 GB/s; rtt = 1 us + 2 x 4122/50e9 (82.44 ns) = 1.16488 us;
     * buffer for line rate = 50e9 x 1.16488e-6 = 58244 B */
    double rtt = strata_link_rtt(50e9, 100, 4122);
    assert_near(strata_credit_buffer(50e9, rtt), 58244, 1e-6);
    /* 32 KiB of credits: 32768 / 1.16488e-6 = 28.1300 GB/s < 50 */
    assert_near(strata_credit_rate(50e9, 32768, rtt), 28.1300e9, 1e5);
    /* enough credits: capped at line rate */
    assert_near(strata_credit_rate(50e9, 1e6, rtt), 50e9, 0);
    assert_near(strata_credit_rate(50e9, 1, 0), 50e9, 0);
}

static void test_retx(void **state)
{
    (void)state;
    /* 4178 B = 33424 bits; p ≈ 33424 x 1e-12 = 3.3424e-8 (second-order term ~5e-16) */
    assert_near(strata_retx_per(1e-12, 4178), 3.3424e-8, 1e-13);
    assert_near(strata_retx_per(0, 4178), 0, 0);
    assert_near(strata_retx_per(1, 4178), 1, 0);
    /* 1 bit at BER 0.5: p = 1 - 0.5^8 for one byte = 0.99609375 */
    assert_near(strata_retx_per(0.5, 1), 0.99609375, 1e-12);
    /* 12.5 GB/s x 10 us = 125000 B = 29.9 packets of 4178 B -> 1 + 30 = 31 */
    assert_near(strata_retx_window(12.5e9, 10e-6, 4178), 31, 0);
    /* go-back-N, p = 1e-3, N = 31: 0.999 / (0.999 + 0.031) = 0.9699029 */
    assert_near(strata_retx_gbn(1e-3, 31), 0.9699029, 1e-7);
    /* p = 1e-2: 0.99 / (0.99 + 0.31) = 0.7615385 — the RoCE loss collapse */
    assert_near(strata_retx_gbn(1e-2, 31), 0.7615385, 1e-7);
    /* selective repeat: 1 - p */
    assert_near(strata_retx_sr(1e-2), 0.99, 1e-12);
    assert_near(strata_retx_gbn(0, 31), 1, 0);
}

static void test_pfc(void **state)
{
    (void)state;
    /* 100 GbE (12.5e9 B/s = 1e11 b/s): 65535 quanta x 512 bits / 1e11 = 335.5392 us */
    assert_near(strata_pfc_pause_time(12.5e9, 65535), 335.5392e-6, 1e-12);
    /* 1000 pauses/s of 1000 quanta: 1000 x 5.12 us = 5.12 ms paused per s -> 0.99488 */
    assert_near(strata_pfc_throughput(12.5e9, 1000, 1000), 0.99488 * 12.5e9, 1);
    /* paused more than all the time: 0, not negative */
    assert_near(strata_pfc_throughput(12.5e9, 65535, 1e4), 0, 0);
    /* headroom, 100 m, 1538 B frames: 12.5e9 x (1 us cable + 1 us response) = 25000
     * + 2 x 1538 + 84 (64 B PFC frame + 20 B preamble/IFG) = 28160 B */
    assert_near(strata_pfc_headroom(12.5e9, 100, 1538), 28160, 1e-6);
}

static void test_suggest(void **state)
{
    (void)state;
    strata_link_catalog_t *cat = NULL;
    char buf[256];
    assert_int_equal(strata_link_catalog_load(NULL, &cat, NULL), STRATA_OK);
    /* one substitution from pcie5; pcie1..7 are all within distance 1 */
    assert_non_null(strstr(strata_link_suggest(cat, "pcie8", buf, sizeof(buf)), "pcie5"));
    assert_non_null(strstr(strata_link_suggest(cat, "ndr", buf, sizeof(buf)), "ib-ndr"));
    assert_string_equal(strata_link_suggest(cat, "zzzzzzzzzz", buf, sizeof(buf)), "");
    strata_link_catalog_destroy(cat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rtt_and_credits),
        cmocka_unit_test(test_retx),
        cmocka_unit_test(test_pfc),
        cmocka_unit_test(test_suggest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
