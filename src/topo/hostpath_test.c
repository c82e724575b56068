/*
 * hostpath_test.c — host data paths (strata_topo_xfer) on the 2-socket
 * PCIe box (data/presets/pcie-8gpu-2s.json), each figure worked out by
 * hand from the catalog's per-link figures:
 *   pcie4   28.01 GB/s per direction (strata link pcie4), hop 0.1 us,
 *           switch traversal 0.1 us, endpoints 0.7 us once per message;
 *   dram    8 x DDR5-4800 = 307.2 GB/s shared, 153.6 GB/s each way, 0.1 us;
 *   upi2    4 x 32 = 128 GB/s, 0.05 us.
 */
#define _GNU_SOURCE
#include "test.h"
#include "test_catalog.h"
#include "strata/topo.h"

static strata_topo_t *load(const char *spec)
{
    strata_topo_t *t;
    strata_error_t err;
    if (strata_topo_load_spec(spec, cat, &t, &err)) fail_msg("%s", err.msg);
    return t;
}

static strata_xfer_t xfer(const strata_topo_t *t, const char *a, const char *b,
                          strata_xfer_mode_t mode, double bytes, double cpu)
{
    strata_xfer_t x;
    strata_error_t err;
    int32_t da = strata_topo_find_device(t, a), db = strata_topo_find_device(t, b);
    if (strata_topo_xfer(t, da, db, mode, bytes, cpu, &x, &err)) fail_msg("%s", err.msg);
    return x;
}

#define GIB 1073741824.0

/* Host -> device, 1 GiB from dram0 to gpu0 (dram0 > cpu0 > pcisw0 > gpu0).
 * Pinned: one DMA by gpu0's copy engine, bottleneck min(153.6, 28.01,
 * 28.01) = 28.01 GB/s; latency 0.1 (dram) + 0.1 + 0.1 (PCIe hops) + 0.1
 * (pcisw0 traversal) + 0.7 (endpoints) = 1.1 us; 1 copy.
 * Pageable: first the CPU copies the pageable buffer into a pinned bounce
 * buffer in the same DRAM, reading over dram0 -> cpu0 and writing over
 * cpu0 -> dram0: 153.6 GB/s each way, so 2^30 / 153.6e9 = 6.99 ms plus
 * 2 x 0.1 us, then the same DMA: 2 copies, 38.33 + 6.99 = 45.3 ms against
 * 38.3 ms pinned. With one core's memcpy at 10 GB/s (--cpu-copy) the copy
 * takes 107.4 ms and the whole 145.7 ms. */
static void test_pinned_vs_pageable(void **state)
{
    (void)state;
    strata_topo_t *t = load("pcie-8gpu-2s");
    double pcie = strata_link_find(cat, "pcie4")->bw_dir, mem = 8 * 38.4e9 / 2;
    strata_xfer_t p = xfer(t, "dram0", "gpu0", STRATA_XFER_PINNED, GIB, 0);
    assert_int_equal(p.nstages, 1);
    assert_int_equal(p.copies, 1);
    assert_int_equal(p.stage[0].n, 3);
    assert_rel(p.stage[0].bw, pcie, 1e-12);
    assert_rel(p.stage[0].latency, 1.1e-6, 1e-9);
    assert_rel(p.time, 1.1e-6 + GIB / pcie, 1e-12);
    strata_xfer_t g = xfer(t, "dram0", "gpu0", STRATA_XFER_PAGEABLE, GIB, 0);
    assert_int_equal(g.nstages, 2);
    assert_int_equal(g.copies, 2);
    assert_string_equal(g.stage[0].mover, "CPU (memcpy)");
    assert_rel(g.stage[0].bw, mem, 1e-12);
    assert_rel(g.stage[0].latency, 0.2e-6, 1e-9);
    assert_rel(g.time, 0.2e-6 + GIB / mem + p.time, 1e-12);
    assert_rel(g.time, 45.3e-3, 2e-3);
    strata_xfer_t c = xfer(t, "dram0", "gpu0", STRATA_XFER_PAGEABLE, GIB, 10e9);
    assert_rel(c.time, 0.2e-6 + GIB / 10e9 + p.time, 1e-12);
    strata_topo_destroy(t);
}

/* GPU -> GPU across sockets, gpu0 -> gpu4. P2P on: one DMA gpu0 > pcisw0 >
 * cpu0 > (UPI) cpu1 > pcisw2 > gpu4, 5 hops, 28.01 GB/s, latency 4 x 0.1
 * (PCIe) + 0.05 (UPI) + 2 x 0.1 (pcisw0, pcisw2) + 0.7 = 1.35 us. P2P
 * off: D2H gpu0 > pcisw0 > cpu0 > dram0 (1.1 us) then H2D dram0 > cpu0 >
 * cpu1 > pcisw2 > gpu4 (0.1 + 0.05 + 2 x 0.1 + 0.1 + 0.7 = 1.15 us): 2 copies,
 * each at 28.01 GB/s, so twice the time of the direct copy for 1 GiB. */
static void test_gpu_pairs(void **state)
{
    (void)state;
    strata_topo_t *on = load("pcie-8gpu-2s"), *off = load("pcie-8gpu-2s,p2p=off");
    double pcie = strata_link_find(cat, "pcie4")->bw_dir;
    strata_xfer_t d = xfer(on, "gpu0", "gpu4", STRATA_XFER_AUTO, GIB, 0);
    assert_int_equal(d.mode, STRATA_XFER_DIRECT);
    assert_int_equal(d.nhops, 5);
    assert_rel(d.stage[0].latency, 1.35e-6, 1e-9);
    strata_xfer_t s = xfer(off, "gpu0", "gpu4", STRATA_XFER_AUTO, GIB, 0);
    assert_int_equal(s.mode, STRATA_XFER_STAGED);
    assert_int_equal(s.copies, 2);
    assert_int_equal(s.stage[0].to, strata_topo_find_device(off, "dram0"));
    assert_rel(s.stage[0].latency, 1.1e-6, 1e-9);
    assert_rel(s.stage[1].latency, 1.15e-6, 1e-9);
    assert_rel(s.time, 2.25e-6 + 2 * GIB / pcie, 1e-12);
    strata_xfer_t x;
    strata_error_t err;
    assert_int_equal(strata_topo_xfer(off, strata_topo_find_device(off, "gpu0"),
                                      strata_topo_find_device(off, "gpu4"), STRATA_XFER_DIRECT, GIB,
                                      0, &x, &err),
                     STRATA_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "p2p=off"));
    strata_topo_destroy(on);
    strata_topo_destroy(off);
}

/* NIC -> GPU. GPUDirect RDMA nic0 > pcisw0 > gpu0: one copy by the NIC,
 * 28.01 GB/s, 0.1 + 0.1 + 0.1 + 0.7 = 1.0 us. Staged: nic0 > pcisw0 >
 * cpu0 > dram0 (1.1 us) then dram0 > cpu0 > pcisw0 > gpu0 (1.1 us): two
 * copies. nic2 sits on socket 1: GPUDirect to gpu0 would cross UPI, which
 * it cannot (one root complex). */
static void test_gpudirect_rdma(void **state)
{
    (void)state;
    strata_topo_t *t = load("pcie-8gpu-2s");
    double pcie = strata_link_find(cat, "pcie4")->bw_dir;
    strata_xfer_t d = xfer(t, "nic0", "gpu0", STRATA_XFER_DIRECT, GIB, 0);
    assert_int_equal(d.copies, 1);
    assert_string_equal(d.stage[0].mover, "NIC nic0");
    assert_rel(d.time, 1.0e-6 + GIB / pcie, 1e-12);
    strata_xfer_t s = xfer(t, "nic0", "gpu0", STRATA_XFER_STAGED, GIB, 0);
    assert_int_equal(s.copies, 2);
    assert_rel(s.time, 2.2e-6 + 2 * GIB / pcie, 1e-12);
    strata_xfer_t x;
    strata_error_t err;
    assert_int_equal(strata_topo_xfer(t, strata_topo_find_device(t, "nic2"),
                                      strata_topo_find_device(t, "gpu0"), STRATA_XFER_DIRECT, GIB,
                                      0, &x, &err),
                     STRATA_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "one root complex"));
    assert_int_equal(strata_topo_xfer(t, strata_topo_find_device(t, "gpu0"),
                                      strata_topo_find_device(t, "gpu1"), STRATA_XFER_PINNED, GIB,
                                      0, &x, &err),
                     STRATA_ERR_INVALID);
    strata_topo_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pinned_vs_pageable),
        cmocka_unit_test(test_gpu_pairs),
        cmocka_unit_test(test_gpudirect_rdma),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
