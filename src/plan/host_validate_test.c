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
 *    46.44 GB/s, in tolerance once the ring is priced at the rate of the
 *    SMs' 128 B stores (strata_link_sm_store_share).
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

/* NCCL's choice (Ring/Simple) priced by strata. NCCL's P2P transport
 * moves the ring's data with the GPU's SMs: on PCIe the sender's threads
 * store into the receiver's buffer (P2P read is for NVLink only,
 * NVIDIA/nccl#512), one 128 B line per store, so every TLP carries 128 B
 * where the copy engine's (H4, H5: cudaMemcpy) carry the 256 B MPS:
 *   63.015 GB/s (32 GT/s x 16 x 128/130 / 8)
 *   x 128/(128 + 24) (STP, 4 DW header, LCRC) x 152/160 (Ack + UpdateFC
 *   DLLPs, 16 B per 2 TLPs) = 63.015 x 0.8 = 50.41 GB/s,
 * 0.9 of the catalog's 56.01 (256/288). The Simple protocol's one flag per
 * 512 KiB step (4 MiB buffer / 8 steps) is < 0.01 % of the bytes, and 8
 * steps in flight hide the flag's round trip (~2 us against ~10 us of data
 * per step), so neither enters at 1 GiB. The ring runs at a GPU's x16
 * link (each uplink carries one ring hop each way): busbw 50.41 GB/s
 * against 46.44 measured, +8.6 %. */
static void test_nccl_ring(void **state)
{
    (void)state;
    fix_t f;
    fix_open(&f, "gpt-1.7b", BOX); /* the workload does not enter the host path */
    strata_coll_machine_t m;
    strata_nccl_choice_t c;
    strata_error_t err;
    assert_int_equal(strata_coll_machine_from_topo(f.topo, f.cat, &m, &err), STRATA_OK);
    assert_rel(m.store_share, 0.9, 1e-12);
    assert_int_equal(
        strata_coll_select_nccl(&m, STRATA_COLL_ALLREDUCE, 1024.0 * (1 << 20), &c, &err),
        STRATA_OK);
    assert_string_equal(strata_nccl_algo_name(c.algo), "Ring");
    double r = c.cost.busbw / 46.44e9;
    print_message("NCCL ring 1024 MB: predicted %.2f GB/s busbw, measured 46.44: %+.1f %%\n",
                  c.cost.busbw / 1e9, 100 * (r - 1));
    assert_rel(c.cost.busbw, 0.9 * strata_link_find(f.cat, "pcie5")->bw_dir, 0.01);
    assert_true(r >= 0.85 && r <= 1.15);
    fix_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_dma_all_gpus),
        cmocka_unit_test(test_p2p_across_switches),
        cmocka_unit_test(test_nccl_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
