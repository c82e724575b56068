/*
 * coherence_test.c — CXL flit efficiency and the tier figures, by hand.
 */
#define _GNU_SOURCE
#include "test.h"
#include "test_catalog.h"
#include "strata/coherence.h"

static strata_cxl_msg_t msg(const char *id, strata_cxl_class_t c, double bytes)
{
    strata_cxl_msg_t m;
    strata_error_t err;
    if (strata_cxl_message(strata_link_find(cat, id), c, bytes, &m, &err)) fail_msg("%s", err.msg);
    return m;
}

/* 68 B flit (CXL 2.0 x16): 4 slots of 16 B per 68 B, 17 B a slot.
 * 64 B read: the host sends MemRd, 1 slot = 17 B; the device answers
 * with a data header slot and 4 data slots = 5 x 17 = 85 B: 64/85 =
 * 75.3 % of the 63.015 GB/s line rate (32 GT/s x 16 x 128/130 / 8) =
 * 47.4 GB/s of reads. 64 B write: header + 4 data = 85 B from the host,
 * 1 slot (Cmp) back: the same 75.3 %. CXL.io, one 64 B TLP: 64 + 24 =
 * 88 B = 5.5 slots, 6 slots = 102 B: 62.7 %. 256 B flit (CXL 3.x x16):
 * 15 slots per 256 B, 17.07 B each; a read answer 5 slots = 85.3 B:
 * 75.0 % of the 128 GB/s raw rate (64 GT/s PAM4 x 16 / 8) = 96 GB/s. */
static void test_flit_efficiency(void **state)
{
    (void)state;
    strata_cxl_msg_t r = msg("cxl2", STRATA_CXL_MEM_READ, 64);
    assert_int_equal(r.flit_bytes, 68);
    assert_int_equal(r.req_slots, 1);
    assert_int_equal(r.rsp_slots, 5);
    assert_rel(r.req_wire, 17, 1e-12);
    assert_rel(r.rsp_wire, 85, 1e-12);
    assert_rel(r.efficiency, 64.0 / 85, 1e-12);
    assert_rel(r.data_bw_dir, 32e9 * 16 * 128 / 130 / 8 * 64 / 85, 1e-9);
    strata_cxl_msg_t w = msg("cxl2", STRATA_CXL_MEM_WRITE, 64);
    assert_int_equal(w.req_slots, 5);
    assert_int_equal(w.rsp_slots, 1);
    assert_rel(w.efficiency, 64.0 / 85, 1e-12);
    strata_cxl_msg_t io = msg("cxl2", STRATA_CXL_IO_DMA, 64);
    assert_int_equal(io.req_slots, 6);
    assert_rel(io.efficiency, 64.0 / 102, 1e-12);
    strata_cxl_msg_t r3 = msg("cxl3", STRATA_CXL_MEM_READ, 64);
    assert_int_equal(r3.flit_bytes, 256);
    assert_rel(r3.efficiency, 64 / (5 * 256.0 / 15), 1e-12);
    assert_rel(r3.data_bw_dir, 128e9 * 0.75, 1e-9);
    strata_cxl_msg_t r4 = msg("cxl2", STRATA_CXL_MEM_READ, 4096); /* 64 lines: same ratio */
    assert_rel(r4.efficiency, 64.0 / 85, 1e-12);
}

/* Reads and writes at once on CXL 2.0 x8 (68 B flits, 31.51 GB/s line
 * rate per direction: 32 GT/s x 8 x 128/130 / 8), in slots per line:
 *   read:  request 1, response 5 (header + 4 data);
 *   write: request 5 (header + 4 data), response 1 (Cmp).
 * 2:1 (two reads per write): request 2 + 5 = 7 slots, response 10 + 1 =
 * 11 slots; the response side bounds: 3 lines of 64 B per 11 x 17 =
 * 187 B, 192/187 x 31.51 = 32.35 GB/s. 1:1: 6 slots each way, 128 B per
 * 102 B: 1.255 x 31.51 = 39.54 GB/s (both directions busy). Reads only:
 * 64/85 x 31.51 = 23.73 GB/s, as the read class. */
static void test_mix(void **state)
{
    (void)state;
    const strata_link_t *l = strata_link_find(cat, "cxl2");
    double line8 = 32e9 * 8 * 128 / 130 / 8, bw;
    strata_error_t err;
    assert_int_equal(strata_cxl_mix_bw(l, 8, 2, 1, &bw, &err), STRATA_OK);
    assert_rel(bw, 192.0 / 187 * line8, 1e-12);
    assert_int_equal(strata_cxl_mix_bw(l, 8, 1, 1, &bw, &err), STRATA_OK);
    assert_rel(bw, 128.0 / 102 * line8, 1e-12);
    assert_int_equal(strata_cxl_mix_bw(l, 8, 1, 0, &bw, &err), STRATA_OK);
    assert_rel(bw, 64.0 / 85 * line8, 1e-12);
    assert_int_equal(strata_cxl_mix_bw(l, 0, 0, 1, &bw, &err), STRATA_OK); /* x16 writes */
    assert_rel(bw, 64.0 / 85 * 2 * line8, 1e-12);
    assert_int_equal(strata_cxl_mix_bw(l, 8, 0, 0, &bw, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "mix 0:0"));
    assert_int_equal(strata_cxl_mix_bw(l, 8, -1, 1, &bw, &err), STRATA_ERR_INVALID);
    assert_int_equal(strata_cxl_mix_bw(strata_link_find(cat, "pcie5"), 8, 2, 1, &bw, &err),
                     STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "'pcie5' is not a CXL link"));
}

/* A public measurement (docs/validation.md, "Host data paths and
 * coherence"): Micron CZ120, a CXL 2.0 type-3 memory expansion module
 * (Microchip SMC 2000 controller, 128/256 GB, PCIe 5.0 x8, E3.S 2T):
 * "up to 36 GB/s (measured by running MLC workload with 2:1 read/write
 * ratio on a single CZ120 memory expansion module)" — Micron via Tom's
 * Hardware, 2023-08-07. The model: the 2:1 mix on cxl2 x8, 32.35 GB/s
 * (test_mix): -10.1 %, inside the 15 % the issue asks. Counting every
 * message header as a slot of its own is the upper bound of the header
 * cost (coherence.h), so the model may read low, as it does. */
static void test_cz120_measured(void **state)
{
    (void)state;
    double bw;
    strata_error_t err;
    assert_int_equal(strata_cxl_mix_bw(strata_link_find(cat, "cxl2"), 8, 2, 1, &bw, &err),
                     STRATA_OK);
    double r = bw / 36e9;
    print_message("Micron CZ120 (CXL 2.0 x8, MLC 2:1): predicted %.2f GB/s, measured 36: "
                  "%+.1f %%\n",
                  bw / 1e9, 100 * (r - 1));
    assert_true(r >= 0.85 && r <= 1.15);
}

/* A CXL expander's load latency, measured and public (docs/validation.md
 * C2): Intel's CacheLib OCP demo (github.com/intel/CacheLib wiki, "OCP demo
 * configuration", 2023-10-12): 2 x Xeon Platinum 8470 (Sapphire Rapids),
 * DDR5-4800, and 3 CXL 2.0 memory expanders per socket, each EDSFF E3.S,
 * PCIe 5.0 x8, 96 GB: "Latency: 250ns", beside the module's MLC-style
 * bandwidths (all reads 17.8 GB/s, 2:1 25.1). strata's CXL expander tier
 * loads in the catalog's cxl2 latency, 210 ns (a midpoint of published
 * ranges, not a derivation from flit, port and controller hops: no
 * per-hop latency with a source was found): -16.0 %, outside the 15 %.
 * A miss, pinned so that a per-hop model shows here; nothing tuned. */
static void test_cxl_latency_measured(void **state)
{
    (void)state;
    strata_coh_server_t s = {.dram = strata_link_find(cat, "ddr5-4800"),
                             .channels = 8,
                             .cxl = strata_link_find(cat, "cxl2"),
                             .cxl_lanes = 8};
    strata_coh_figures_t f;
    strata_error_t err;
    assert_int_equal(strata_coh_tier(&s, STRATA_COH_CXL_EXPANDER, &f, &err), STRATA_OK);
    double r = f.load_s / 250e-9;
    print_message("CXL 2.0 x8 E3.S expander on Sapphire Rapids: predicted %.0f ns load, "
                  "measured 250: %+.1f %%\n",
                  f.load_s * 1e9, 100 * (r - 1));
    assert_rel(f.load_s, 210e-9, 1e-9);
    assert_true(r >= 0.80 && r < 0.85);
}

/* The expander's load from sourced parts (strata_cxl_load_parts), CXL 2.0
 * x8 on 8 x DDR5-4800 (the CacheLib machine of C2):
 *   host path: 100 ns local load - 50 ns DRAM access     =  50 ns
 *   CXL ports, 25 ns each direction                      =  50 ns
 *   flits: MemRd 1 slot = 1 flit, MemData 5 slots = 2 of
 *     4 slots; 3 x 68 B at 32 GT/s x 8 x 128/130 / 8 =
 *     31.51 GB/s: 3 x 2.158 ns                          =   6.47 ns
 *   device DRAM access                                   =  50 ns
 *   sum                                                  = 156.47 ns.
 * Measured (docs/validation.md C2, C3): Intel CacheLib's OCP demo, 250 ns
 * (-37.4 %); Sun et al. MICRO'23, a CXL ASIC expander on Sapphire Rapids
 * "about 2.2x" the 8-channel local DDR5 load, against the sum's 156.47 /
 * 100 = 1.56x (-28.9 %). Both miss 15 %: the published per-hop figures
 * (early-implementation port overheads, DRAM access) leave out the
 * device controller, which no public source gives; pinned so that a
 * sourced controller figure shows here. CXL 3.x x16 (256 B flits, both
 * messages fit one flit each: 2 x 256 B / 128 GB/s = 4 ns) behind 2
 * switch levels (2 x 70 ns, Pond): 50 + 50 + 4 + 140 + 50 = 294 ns. */
static void test_cxl_load_parts(void **state)
{
    (void)state;
    strata_coh_server_t s = {.dram = strata_link_find(cat, "ddr5-4800"),
                             .channels = 8,
                             .cxl = strata_link_find(cat, "cxl2"),
                             .cxl_lanes = 8};
    strata_cxl_load_t l;
    strata_error_t err;
    assert_int_equal(strata_cxl_load_parts(&s, 0, &l, &err), STRATA_OK);
    double flit = 68 / (32e9 * 8 * 128 / 130 / 8);
    assert_int_equal(l.nparts, 4);
    assert_rel(l.part[2].s, 3 * flit, 1e-9);
    assert_rel(l.total_s, 150e-9 + 3 * flit, 1e-9);
    assert_non_null(strstr(l.missing, "device controller"));
    double r250 = l.total_s / 250e-9, r_sun = (l.total_s / 100e-9) / 2.2;
    print_message("CXL 2.0 x8 load from sourced parts %.1f ns: vs CacheLib 250 ns %+.1f %%, "
                  "vs Sun et al. 2.2x local %+.1f %%\n",
                  l.total_s * 1e9, 100 * (r250 - 1), 100 * (r_sun - 1));
    assert_true(r250 >= 0.60 && r250 < 0.65);
    assert_true(r_sun >= 0.69 && r_sun < 0.74);
    s.cxl = strata_link_find(cat, "cxl3"), s.cxl_lanes = 0;
    assert_int_equal(strata_cxl_load_parts(&s, 2, &l, &err), STRATA_OK);
    assert_int_equal(l.nparts, 5);
    assert_rel(l.total_s, 294e-9, 1e-9);
    assert_int_equal(strata_cxl_load_parts(&s, 9, &l, &err), STRATA_ERR_INVALID);
    s.cxl = strata_link_find(cat, "pcie5");
    assert_int_equal(strata_cxl_load_parts(&s, 0, &l, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "not a CXL link"));
}

static void test_not_cxl(void **state)
{
    (void)state;
    strata_cxl_msg_t m;
    strata_error_t err;
    assert_int_equal(
        strata_cxl_message(strata_link_find(cat, "pcie5"), STRATA_CXL_MEM_READ, 64, &m, &err),
        STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "'pcie5' is not a CXL link (category PCIe)"));
    assert_int_equal(
        strata_cxl_message(strata_link_find(cat, "cxl2"), STRATA_CXL_MEM_READ, 65, &m, &err),
        STRATA_ERR_INVALID);
}

/* Tiers of a 2-socket Sapphire Rapids server (8 x DDR5-4800, 4 UPI 2.0)
 * with a CXL 2.0 x8 expander:
 *   local: 100 ns (ddr5-4800), 8 x 38.4 = 307.2 GB/s;
 *   remote socket: 100 + 50 (upi2) = 150 ns, min(307.2, 4 x 32) = 128 GB/s;
 *   CXL expander: 210 ns (catalog cxl2: a CXL.mem load), reads at
 *     47.45 x 8/16 = 23.7 GB/s;
 *   behind 3 switch levels: 210 + 3 x 70 = 420 ns;
 *   ping-pong host / CXL.cache device: (210 - 100) + 60 = 170 ns a
 *     transfer, one 64 B line each: 0.376 GB/s. */
static void test_tiers(void **state)
{
    (void)state;
    strata_coh_server_t s = {.dram = strata_link_find(cat, "ddr5-4800"),
                             .channels = 8,
                             .socket = strata_link_find(cat, "upi2"),
                             .socket_links = 4,
                             .cxl = strata_link_find(cat, "cxl2"),
                             .cxl_lanes = 8,
                             .switches = 3};
    strata_coh_figures_t f;
    strata_error_t err;
    assert_int_equal(strata_coh_tier(&s, STRATA_COH_LOCAL, &f, &err), STRATA_OK);
    assert_rel(f.load_s, 100e-9, 1e-9);
    assert_rel(f.read_bw, 307.2e9, 1e-9);
    assert_int_equal(strata_coh_tier(&s, STRATA_COH_REMOTE_SOCKET, &f, &err), STRATA_OK);
    assert_rel(f.load_s, 150e-9, 1e-9);
    assert_rel(f.read_bw, 128e9, 1e-9);
    assert_int_equal(strata_coh_tier(&s, STRATA_COH_CXL_EXPANDER, &f, &err), STRATA_OK);
    assert_rel(f.load_s, 210e-9, 1e-9);
    assert_rel(f.read_bw, 63.015e9 * 64 / 85 / 2, 1e-4);
    assert_int_equal(strata_coh_tier(&s, STRATA_COH_CXL_POOL, &f, &err), STRATA_OK);
    assert_rel(f.load_s, 420e-9, 1e-9);
    assert_int_equal(strata_coh_tier(&s, STRATA_COH_PINGPONG_CXL, &f, &err), STRATA_OK);
    assert_rel(f.own_s, 170e-9, 1e-9);
    assert_rel(f.read_bw, 64 / 170e-9, 1e-9);
    s.socket = NULL;
    assert_int_equal(strata_coh_tier(&s, STRATA_COH_REMOTE_SOCKET, &f, &err), STRATA_ERR_INVALID);
    s.cxl = strata_link_find(cat, "pcie5");
    assert_int_equal(strata_coh_tier(&s, STRATA_COH_CXL_EXPANDER, &f, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "not a CXL link"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flit_efficiency),
        cmocka_unit_test(test_not_cxl),
        cmocka_unit_test(test_mix),
        cmocka_unit_test(test_cz120_measured),
        cmocka_unit_test(test_cxl_latency_measured),
        cmocka_unit_test(test_cxl_load_parts),
        cmocka_unit_test(test_tiers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
