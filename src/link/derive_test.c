/*
 * derive_test.c — the catalog's derived figures against values computed by
 * hand (arithmetic beside each), so a wrong line code, packet field or
 * formula step fails here.
 */
#define _DEFAULT_SOURCE
#include "link.h"
#include "test.h"

static strata_link_catalog_t *cat;

static int setup(void **state)
{
    strata_error_t err;
    (void)state;
    return strata_link_catalog_load(STRATA_SOURCE_DIR "/data/links.json", &cat, &err);
}

static int teardown(void **state)
{
    (void)state;
    strata_link_catalog_destroy(cat);
    return 0;
}

static const strata_link_t *get(const char *id)
{
    const strata_link_t *l = strata_link_find(cat, id);
    if (l == NULL) fail_msg("no catalog entry %s", id);
    return l;
}

static void test_pcie5(void **state)
{
    (void)state;
    const strata_link_t *l = get("pcie5");
    /* 16 lanes x 32 GT/s NRZ = 512 Gb/s = 64 GB/s raw */
    assert_near(l->raw_dir, 64e9, 1);
    /* 64 x 128/130 = 63.015 GB/s after 128b/130b */
    assert_near(l->line_dir, 63.0154e9, 1e5);
    /* 256 B MPS: 256 / (256 + 4 framing + 16 hdr + 4 LCRC) = 256/280 = 0.914286;
     * 63.0154 x 0.914286 = 57.614 GB/s */
    assert_near(l->pkt_dir, 57.614e9, 1e6);
    /* 16 B DLLPs per 2 TLPs = 8 B per 280 B TLP: 280/288; 57.614 x 0.97222 = 56.013 */
    assert_near(l->bw_dir, 56.013e9, 1e6);
    assert_near(l->bw_bidi, 2 * l->bw_dir, 1);
}

/* GPUDirect RDMA read over PCIe 5.0 x16, MPS 256, MRRS 512, by hand:
 * line rate 64 x 128/130 = 63.0154 GB/s. The NIC's MRd: 4 framing/seq +
 * 4 LCRC + 16 header (4 DW) = 24 B, plus its share of the DLLPs (16 B per
 * 2 TLPs: 8 B) = 32 B per 512 B read, 0.0625 B per byte the other way.
 * The GPU answers with 512/256 = 2 CplD of 256 B: 256 + 8 + 12 (3 DW) =
 * 276 B + 8 B DLLP share = 284 B: eta 256/284 = 0.901408, 63.0154 x
 * 0.901408 = 56.803 GB/s (above the 56.013 of posted writes: a CplD header
 * is a DW shorter than a 64-bit MWr's). Split at a 64 B RCB: 8 CplD of
 * 64 B, 64 + 8 + 12 + 8 = 92 B each: 64/92 = 0.695652, 43.837 GB/s.
 * Bad sizes and a non-PCIe kind are refused. */
static void test_gdr_read_pcie5(void **state)
{
    (void)state;
    strata_link_gdr_t g;
    strata_error_t err;
    assert_int_equal(strata_link_gdr_read(get("pcie5"), 16, 0, 0, 0, &g, &err), STRATA_OK);
    assert_near(g.mps, 256, 0);
    assert_near(g.mrrs, 512, 0);
    assert_near(g.cpl_per_req, 2, 0);
    assert_near(g.req_wire, 32, 1e-12);
    assert_near(g.req_per_byte, 0.0625, 1e-12);
    assert_near(g.cpl_wire, 284, 1e-12);
    assert_near(g.eta_read, 256.0 / 284.0, 1e-12);
    assert_near(g.bw_dir, 56.803e9, 1e6);
    assert_int_equal(strata_link_gdr_read(get("pcie5"), 16, 256, 512, 64, &g, &err), STRATA_OK);
    assert_near(g.cpl_per_req, 8, 0);
    assert_near(g.eta_read, 64.0 / 92.0, 1e-12);
    assert_near(g.bw_dir, 43.837e9, 1e6);
    assert_int_equal(strata_link_gdr_read(get("pcie5"), 16, 300, 512, 0, &g, &err),
                     STRATA_ERR_RANGE);
    assert_int_equal(strata_link_gdr_read(get("pcie5"), 16, 256, 512, 32, &g, &err),
                     STRATA_ERR_RANGE);
    assert_int_equal(strata_link_gdr_read(get("ib-ndr"), 0, 0, 0, 0, &g, &err),
                     STRATA_ERR_UNSUPPORTED);
    assert_int_equal(strata_link_gdr_read(get("pcie6"), 0, 0, 0, 0, &g, &err),
                     STRATA_ERR_UNSUPPORTED);
}

static void test_pcie5_x4_mps128(void **state)
{
    (void)state;
    strata_link_derivation_t d;
    strata_link_opts_t o = {.lanes = 4, .payload = 128};
    assert_int_equal(strata_link_derive(get("pcie5"), &o, &d, NULL), STRATA_OK);
    /* 4 x 32 / 8 = 16 GB/s raw; x 128/130 = 15.7538; x 128/152 = 13.2664 GB/s */
    assert_near(d.raw_dir, 16e9, 1);
    assert_near(d.pkt_dir, 13.2664e9, 1e5);
    assert_int_equal(d.nsteps, 4);
}

/* An SM's stores on PCIe: one 128 B line per TLP. PCIe 5.0 x16 at 128 B:
 * 63.015 GB/s after 128b/130b x 128/(128 + 4 STP + 16 header + 4 LCRC) =
 * 128/152, x 152/160 (16 B of Ack + UpdateFC DLLPs per 2 TLPs) = 128/160:
 * 50.41 GB/s; the catalog's 256 B MPS gives 256/288: 56.01. Share
 * (128/160) / (256/288) = 0.9 exactly, the same for every non-flit PCIe
 * generation (the same fields). NVLink (already at 128 B), RoCE (NIC
 * packets) and PCIe 6.0 (flit mode) keep 1. */
static void test_sm_store_share(void **state)
{
    (void)state;
    const char *gens[] = {"pcie3", "pcie4", "pcie5"};
    for (int i = 0; i < 3; i++)
        assert_near(strata_link_sm_store_share(get(gens[i])), 0.9, 1e-12);
    assert_near(get("pcie5")->bw_dir * strata_link_sm_store_share(get("pcie5")), 50.41e9, 0.01e9);
    assert_true(strata_link_sm_store_share(get("nvlink4")) == 1.0);
    assert_true(strata_link_sm_store_share(get("roce-100g")) == 1.0);
    assert_true(strata_link_sm_store_share(get("pcie6")) == 1.0);
    assert_true(strata_link_sm_store_share(NULL) == 1.0);
}

static void test_pcie6_flit(void **state)
{
    (void)state;
    const strata_link_t *l = get("pcie6");
    /* 16 x 32 GBd x 2 (PAM4) = 1024 Gb/s = 128 GB/s; x 242/256 = 121.0 */
    assert_near(l->raw_dir, 128e9, 1);
    assert_near(l->line_dir, 121e9, 1);
    /* x 256/272 (flit-mode 16 B header) x 236/242 (DLP) = 111.06 GB/s (links.md: ≈111) */
    assert_near(l->bw_dir, 121e9 * 256 / 272 * 236 / 242, 1e3);
    assert_near(l->bw_dir, 111.06e9, 0.01e9);
}

static void test_ib_ndr(void **state)
{
    (void)state;
    const strata_link_t *l = get("ib-ndr");
    /* 4 x 53.125 GBd x 2 = 425 Gb/s; x 514/544 x 256/257 = 400 Gb/s = 50 GB/s */
    assert_near(l->line_dir, 50e9, 1e3);
    /* 4096 / (4096 + 8 LRH + 12 BTH + 4 ICRC + 2 VCRC) = 4096/4122; 50 x 0.993692 = 49.685 */
    assert_near(l->bw_dir, 49.685e9, 1e6);
}

static void test_eth100_tcp(void **state)
{
    (void)state;
    const strata_link_t *l = get("eth-100g");
    /* 4 x 25.78125 x 514/528 x 256/257 = 100 Gb/s = 12.5 GB/s at the MAC */
    assert_near(l->line_dir, 12.5e9, 1e3);
    /* MTU 1500: payload 1460 (−20 IPv4 −20 TCP), wire 1538 (+8 preamble +14 MAC +4 FCS +12 IFG);
     * 12.5 x 1460/1538 = 11.866 GB/s */
    assert_near(l->bw_dir, 11.866e9, 1e6);
    strata_link_derivation_t d;
    strata_link_opts_t o = {.mtu = 9000};
    assert_int_equal(strata_link_derive(l, &o, &d, NULL), STRATA_OK);
    /* MTU 9000: 8960/9038 x 12.5 = 12.392 GB/s (links.md 12.39) */
    assert_near(d.bw_dir, 12.392e9, 1e6);
}

static void test_roce(void **state)
{
    (void)state;
    const strata_link_t *l = get("roce-100g");
    /* 4096 / (4096 + 20 + 14 + 20 + 8 + 12 + 4 + 4 = 4178) = 0.98037 */
    assert_near(l->eta_pkt, 0.98037, 1e-5);
    assert_near(l->bw_dir, 12.255e9, 1e6);
    strata_link_derivation_t d;
    strata_link_opts_t o = {.mtu = 1024};
    assert_int_equal(strata_link_derive(l, &o, &d, NULL), STRATA_OK);
    /* 1024/1106 = 0.92586 (links.md 92.6 %) */
    assert_near(d.eta_pkt, 0.92586, 1e-5);
    /* 25G: 25.78125 x 64/66-equivalent = 25 Gb/s; 3.125 x 0.98037 = 3.0637 (links.md 3.06) */
    assert_near(get("roce-25g")->bw_dir, 3.0637e9, 1e6);
}

static void test_nvlink(void **state)
{
    (void)state;
    /* H100: 18 links x 2 lanes x 100 Gb/s (50 GBd PAM4) / 8 = 18 x 25 = 450 GB/s per dir
     * signalling; after the store packet 128/(128+32) = 0.8: 18 x 20 = 360 GB/s per dir
     * (NCCL's own per-link figure for SM90 is 20.6 GB/s, nccl.md 2.5: within 3 %) */
    assert_near(get("nvlink4")->raw_dir * get("nvlink4")->links, 450e9, 1);
    assert_near(get("nvlink4")->device_bw_dir, 360e9, 1);
    assert_near(get("nvlink4")->links * get("nvlink4")->bw_bidi, 720e9, 1);
    /* A100: 12 links x 4 lanes x 50 Gb/s NRZ / 8 = 12 x 25 = 300 GB/s per dir raw, 600 bidi
     * (the seed's 450 GB/s is wrong); x 0.8 = 240 GB/s (NCCL: 12 x 20 = 240) */
    assert_near(get("nvlink3")->raw_dir * get("nvlink3")->links, 300e9, 1);
    assert_near(get("nvlink3")->device_bw_dir, 240e9, 1);
    /* B200: 18 x 2 x 200 / 8 = 900 GB/s per dir raw, x 0.8 = 720 */
    assert_near(get("nvlink5")->device_bw_dir, 720e9, 1);
    /* NVSwitch gen3: 64 ports x 25 GB/s = 1.6 TB/s per dir raw, x 0.8 = 1.28 TB/s */
    assert_near(get("nvswitch3")->device_bw_dir, 1.28e12, 1);
    /* every NVLink / NVSwitch entry derives the store-packet efficiency the
     * header names (strata_link_store_eta, the one sched and sim use) */
    for (size_t i = 0; i < strata_link_catalog_count(cat); i++) {
        const strata_link_t *l = strata_link_catalog_at(cat, i);
        if (strncmp(l->id, "nvlink", 6) && strncmp(l->id, "nvswitch", 8)) continue;
        assert_near(l->eta_pkt, 0.8, 1e-12);
        assert_near(strata_link_store_eta(l->id), l->eta_pkt, 1e-12);
    }
    assert_near(strata_link_store_eta("ib-ndr"), 1.0, 0);
    /* the generation's memory: a scale-up link names its HBM */
    assert_string_equal(get("nvlink4")->memory, "hbm-h100");
    assert_string_equal(get("nvlink3")->memory, "hbm-a100-80");
    assert_string_equal(get("ib-ndr")->memory, "");
    /* NCCL's protocols: LL 8 of 16 B, LL128 120 of 128 B, Simple all data */
    assert_string_equal(strata_link_protocol(0)->name, "LL");
    assert_near(strata_link_protocol(0)->eta, 0.5, 0);
    assert_near(strata_link_protocol(1)->eta, 0.9375, 0);
    assert_near(strata_link_protocol(2)->eta, 1.0, 0);
    assert_null(strata_link_protocol(3));
    assert_null(strata_link_protocol(-1));
}

static void test_vendor_and_memory(void **state)
{
    (void)state;
    /* 910B: 56 GB/s per peer bidi -> 28 per dir; 7 links -> 196 per dir, 392 bidi */
    assert_near(get("hccs-910b")->bw_dir, 28e9, 1);
    assert_near(get("hccs-910b")->device_bw_dir, 196e9, 1);
    /* v5p: 1200 GB/s bidi per chip / 2 / 6 ports = 100 GB/s per link per dir */
    assert_near(get("ici-v5p")->bw_dir, 100e9, 1);
    /* DDR4-3200: 64 bits x 3.2 GT/s / 8 = 25.6 GB/s, shared by both directions */
    assert_near(get("ddr4-3200")->bw_dir, 25.6e9, 1);
    assert_near(get("ddr4-3200")->bw_bidi, 25.6e9, 1);
    /* MI300X IF: 16 x 32 / 8 = 64 GB/s per link signalling; the layout is
     * unpublished, AMD states ~48 GB/s usable (ROCm blog; RCCL topo.h 48.0):
     * x 48/64 = 0.75; 7 links = 336 GB/s (672 bidi) */
    assert_near(get("if-mi300x")->line_dir, 64e9, 1);
    assert_near(get("if-mi300x")->eta_pkt, 0.75, 1e-12);
    assert_near(get("if-mi300x")->device_bw_dir, 336e9, 1);
    /* Gaudi2: 24 ports x 100 GbE = 24 x 12.5 = 300 GB/s at the MAC */
    assert_near(get("gaudi2")->links * get("gaudi2")->line_dir, 300e9, 1e3);
}

static void test_bad_options(void **state)
{
    (void)state;
    strata_link_derivation_t d;
    strata_error_t err;
    strata_link_opts_t o = {.mtu = 10};
    assert_int_equal(strata_link_derive(get("roce-100g"), &o, &d, &err), STRATA_ERR_RANGE);
    o = (strata_link_opts_t){.lanes = -1};
    assert_int_equal(strata_link_derive(get("pcie5"), &o, &d, &err), STRATA_ERR_RANGE);
    o = (strata_link_opts_t){.mtu = 1500};
    assert_int_equal(strata_link_derive(get("nvlink4"), &o, &d, &err), STRATA_ERR_RANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pcie5),          cmocka_unit_test(test_pcie5_x4_mps128),
        cmocka_unit_test(test_pcie6_flit),     cmocka_unit_test(test_ib_ndr),
        cmocka_unit_test(test_eth100_tcp),     cmocka_unit_test(test_roce),
        cmocka_unit_test(test_nvlink),         cmocka_unit_test(test_vendor_and_memory),
        cmocka_unit_test(test_bad_options),    cmocka_unit_test(test_gdr_read_pcie5),
        cmocka_unit_test(test_sm_store_share),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
