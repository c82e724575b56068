/*
 * host_validate_test.c — a PCIe-only 8-GPU box measured in public,
 * predicted by strata (docs/validation.md, "Host data paths and
 * coherence"). The box (tests/data/wrx90_2switch.json): 8 RTX PRO 6000
 * Blackwell, PCIe Gen5 x16, no NVLink, on 2 c-payne PCIe Gen5 switches of
 * 4 GPUs each, one Gen5 x16 uplink per switch to a Threadripper Pro
 * 7955WX; P2P on, ACS request-redirect off (voipmonitor/rtx6kpro,
 * hardware/wrx90-cpayne-8gpu-root-topology-comparison.md, "Group A").
 *
 * Figures of that report:
 *  - all 8 GPUs copying 1 GB from pinned host memory at once
 *    (cudaMemcpyAsync, 5 iterations): 114.10 GB/s H2D, 112.77 GB/s D2H in
 *    all, 14.26 and 14.10 per GPU — the path the planner's host offload
 *    tier prices (offload.c), in tolerance;
 *  - GPU-to-GPU writes across the two switches, one way and both ways, in
 *    tolerance;
 *  - NCCL 2.27.5 ring allreduce (NCCL_P2P_LEVEL=SYS) at 1024 MB: busbw
 *    46.44 GB/s — a miss, pinned below with its cause.
 */
#define _DEFAULT_SOURCE /* mkstemps in test.h */
#include "plan_fix_test.h"

#include <math.h>
#include <stdio.h>

#define BOX STRATA_SOURCE_DIR "/tests/data/wrx90_2switch.json"

/* Each GPU's share of its pinned DMA path to host memory, all 8 at once:
 * its own x16 link (56.01 GB/s, the catalog's Gen5 x16 after 128b/130b,
 * 256 B TLPs and DLLPs) carries 1 transfer, its switch's x16 uplink 4:
 * 56.01 / 4 = 14.00 GB/s; the DDR bus, 8 x 38.4 / 2 = 153.6 GB/s a
 * direction shared by 8 (19.2 each), does not bind. Measured 14.26 (H2D)
 * and 14.10 (D2H): -1.8 % and -0.7 %. */
static void test_host_dma_all_gpus(void **state)
{
    (void)state;
    fix_t f;
    fix_open(&f, "gpt-1.7b", BOX); /* the workload does not enter the host path */
    double xfer, mem;
    strata_error_t err;
    assert_int_equal(plan_offload_tier(f.ctx, STRATA_PLAN_OFFLOAD_HOST, &xfer, &mem, &err),
                     STRATA_OK);
    double pcie5 = strata_link_find(f.cat, "pcie5")->bw_dir;
    assert_rel(xfer, pcie5 / 4, 1e-12);
    const double measured[2] = {114.10e9 / 8, 112.77e9 / 8}; /* H2D, D2H per GPU */
    for (int d = 0; d < 2; d++) {
        double r = xfer / measured[d];
        print_message("8 GPUs at once, %s: predicted %.2f GB/s per GPU, measured %.2f: %+.1f %%\n",
                      d ? "D2H" : "H2D", xfer / 1e9, measured[d] / 1e9, 100 * (r - 1));
        assert_true(r >= 0.85 && r <= 1.15);
    }
    fix_close(&f);
}

/* GPU to GPU across the two switches with P2P on (the report's single-pair
 * write, 256 MB, 15 iterations: 56.27 GB/s; two flows, one each way: 109.26
 * GB/s in all). strata: gpu0 > pcisw0 > cpu > pcisw1 > gpu4, every hop a
 * Gen5 x16 link at 56.01 GB/s: -0.5 %; the reverse flow uses the other
 * direction of each link (no channel shared), 2 x 56.01 = 112.0: +2.5 %. */
static void test_p2p_across_switches(void **state)
{
    (void)state;
    fix_t f;
    fix_open(&f, "gpt-1.7b", BOX);
    strata_xfer_t x, y;
    strata_error_t err;
    int32_t g0 = strata_topo_find_device(f.topo, "gpu0"),
            g4 = strata_topo_find_device(f.topo, "gpu4");
    double n = 256.0 * (1 << 20);
    assert_int_equal(strata_topo_xfer(f.topo, g0, g4, STRATA_XFER_DIRECT, n, 0, &x, &err),
                     STRATA_OK);
    assert_int_equal(strata_topo_xfer(f.topo, g4, g0, STRATA_XFER_DIRECT, n, 0, &y, &err),
                     STRATA_OK);
    assert_int_equal(x.nhops, 4);
    for (int32_t i = 0; i < x.nhops; i++)
        for (int32_t j = 0; j < y.nhops; j++)
            assert_int_not_equal(x.hop[i].chan, y.hop[j].chan);
    double one = x.stage[0].bw, both = x.stage[0].bw + y.stage[0].bw;
    print_message("P2P gpu0 -> gpu4: predicted %.2f GB/s, measured 56.27: %+.1f %%; both ways "
                  "%.1f, measured 109.26: %+.1f %%\n",
                  one / 1e9, 100 * (one / 56.27e9 - 1), both / 1e9, 100 * (both / 109.26e9 - 1));
    assert_rel(one, strata_link_find(f.cat, "pcie5")->bw_dir, 1e-12);
    assert_true(fabs(one / 56.27e9 - 1) <= 0.15 && fabs(both / 109.26e9 - 1) <= 0.15);
    fix_close(&f);
}

/* NCCL's choice (Ring/Simple) priced by strata: the ring runs at a GPU's
 * x16 link, 56.0 GB/s busbw (each uplink carries one ring hop each way),
 * against 46.44 measured: +20.5 %, a miss. The same report measures the
 * links strata prices within 3 %: one GPU-to-GPU copy 56.27 GB/s (strata
 * 56.01), two each way across the switches 109.26 GB/s (112.0), the host
 * DMA above; so the gap is not the PCIe model but NCCL's transport on
 * PCIe — SM-driven stores through a few channels (the repository's
 * pcie-bandwidth.md: a dual-EPYC box at 22.2 GB/s with NCCL's default
 * channels at 32 MB, 37.6 averaged over 8 MB-2 GB with 8 channels), which
 * strata's ring price does not model. Pinned in a band so that a model of
 * it shows here. */
static void test_nccl_ring_miss(void **state)
{
    (void)state;
    fix_t f;
    fix_open(&f, "gpt-1.7b", BOX); /* the workload does not enter the host path */
    strata_coll_machine_t m;
    strata_nccl_choice_t c;
    strata_error_t err;
    assert_int_equal(strata_coll_machine_from_topo(f.topo, f.cat, &m, &err), STRATA_OK);
    assert_int_equal(
        strata_coll_select_nccl(&m, STRATA_COLL_ALLREDUCE, 1024.0 * (1 << 20), &c, &err),
        STRATA_OK);
    assert_string_equal(strata_nccl_algo_name(c.algo), "Ring");
    double r = c.cost.busbw / 46.44e9;
    print_message("NCCL ring 1024 MB: predicted %.2f GB/s busbw, measured 46.44: %+.1f %%\n",
                  c.cost.busbw / 1e9, 100 * (r - 1));
    assert_true(r >= 1.15 && r <= 1.25);
    fix_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_dma_all_gpus),
        cmocka_unit_test(test_p2p_across_switches),
        cmocka_unit_test(test_nccl_ring_miss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
