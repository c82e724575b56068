/*
 * wall_test.c — the communication wall's what-ifs against hand-derived
 * amounts, the latency/bandwidth split of pure-DP weak scaling, and the
 * wall's bad input.
 */
#define _DEFAULT_SOURCE /* mkstemps (test.h) */
#include "plan.h"
#include "test.h"

#include <math.h>

typedef struct fix {
    strata_link_catalog_t *cat;
    strata_topo_t *topo;
    strata_plan_ctx_t *ctx;
    strata_workload_t w;
} fix_t;

static void open_ctx(fix_t *f, const char *cluster)
{
    strata_error_t err;
    strata_accel_t a;
    memset(f, 0, sizeof(*f));
    assert_int_equal(strata_link_catalog_load(NULL, &f->cat, &err), STRATA_OK);
    assert_int_equal(strata_topo_load_spec(cluster, f->cat, &f->topo, &err), STRATA_OK);
    assert_int_equal(strata_workload_load("gpt-1.7b", &f->w, &err), STRATA_OK);
    assert_int_equal(
        strata_accel_load(NULL, strstr(cluster, "a100") ? "a100-80" : "h100", &a, &err), STRATA_OK);
    assert_int_equal(strata_plan_ctx_create(&f->w, &a, f->topo, f->cat, &f->ctx, &err), STRATA_OK);
}

static void close_ctx(fix_t *f)
{
    strata_plan_ctx_destroy(f->ctx);
    strata_topo_destroy(f->topo);
    strata_link_catalog_destroy(f->cat);
}

/* Pure DP, no ZeRO, no overlap: the step's DP traffic is one allreduce. */
static double dp_time(fix_t *f, double ratio)
{
    strata_plan_config_t c;
    strata_plan_result_t r;
    strata_error_t err;
    strata_plan_comm_opts_t o = {.nic_scale = 1, .dp_ratio = ratio};
    strata_plan_config_default(&c);
    c.dp = strata_plan_ctx_gpus(f->ctx), c.gbs = c.dp, c.zero = 0;
    c.overlap_dp = false;
    assert_int_equal(strata_plan_ctx_set_comm(f->ctx, &o, &err), STRATA_OK);
    assert_int_equal(strata_plan_eval(f->ctx, &c, &r, &err), STRATA_OK);
    for (int i = 0; i < r.ntraffic; i++)
        if (!strcmp(r.traffic[i].dim, "DP")) return r.traffic[i].time;
    fail_msg("no DP traffic");
    return 0;
}

/* Weak scaling of pure DP: every GPU keeps its batch, so the gradient
 * bytes n per GPU stay the same at every size. Any allreduce the model
 * picks costs t(P) = L(P) + n B(P): a latency term L (ring: 2(P-1) alpha;
 * tree: 2 log2(P) alpha) that grows with P, and a bandwidth term n B
 * (ring: 2 (P-1)/P n / beta) that tends to 2 n / beta and stays flat.
 * Evaluating at n and n/2 (the wire ratio what-if) separates them:
 * n B = 2 (t(n) - t(n/2)), L = 2 t(n/2) - t(n). From 128 to 1024 GPUs
 * (16 to 128 servers; the model picks a ring at 128 and the NVLS tree at
 * 1024, both bounded by the same NIC bandwidth per server) the ring's
 * (P-1)/P moves from 127/128 to 1023/1024, so the bandwidth term changes
 * by under 5 %, while L must grow (ring 2 x 127 alpha; tree 2 log2 of
 * 128 servers x the larger alpha of a 3-tier fabric, fabric.c). */
static void test_dp_weak_latency_grows_bandwidth_flat(void **state)
{
    (void)state;
    fix_t f;
    double L[2], B[2];
    const char *sizes[2] = {"dgx-h100:16", "dgx-h100:128"};
    for (int i = 0; i < 2; i++) {
        open_ctx(&f, sizes[i]);
        double t1 = dp_time(&f, 1), th = dp_time(&f, 0.5);
        B[i] = 2 * (t1 - th), L[i] = 2 * th - t1;
        close_ctx(&f);
    }
    assert_true(B[0] > 0 && L[0] > 0);
    assert_true(fabs(B[1] / B[0] - 1) < 0.05);
    assert_true(L[1] > 1.1 * L[0]);
}

/* The codec what-if, overlap off: compressing at ratio 1 changes no wire
 * bytes, so the step grows by exactly the codec's two passes over the
 * gradient bytes: 2 x bytes / codec_bw, bytes = the DP allreduce's size
 * (the traffic row: 4 B x the synced parameters). gpt-1.7b pure DP on 16
 * GPUs, codec 100 GB/s. */
static void test_codec_whatif_by_hand(void **state)
{
    (void)state;
    fix_t f;
    strata_plan_config_t c;
    strata_plan_result_t r0, r1;
    strata_error_t err;
    open_ctx(&f, "dgx-h100:2");
    strata_plan_config_default(&c);
    c.dp = 16, c.gbs = 16, c.zero = 0, c.overlap_dp = false;
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r0, &err), STRATA_OK);
    strata_plan_comm_opts_t o = {.nic_scale = 1, .dp_ratio = 1, .codec_bw = 100e9};
    assert_int_equal(strata_plan_ctx_set_comm(f.ctx, &o, &err), STRATA_OK);
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r1, &err), STRATA_OK);
    double expect = 0;
    for (int i = 0; i < r0.ntraffic; i++)
        if (!strcmp(r0.traffic[i].dim, "DP")) expect = 2.0 * r0.traffic[i].bytes / 100e9;
    assert_true(expect > 0.1); /* 1.65e9 params x 4 B x 2 / 1e11 = 0.13 s */
    assert_float_equal(r1.step - r0.step, expect, expect * 1e-9);
    o.dp_ratio = 0, o.codec_bw = 0;
    assert_int_equal(strata_plan_ctx_set_comm(f.ctx, &o, &err), STRATA_ERR_INVALID);
    close_ctx(&f);
}

/* NIC x2 on 2 DGX A100 of pure DP: only the scale-out bandwidth doubles.
 * The hierarchical allreduce's bandwidth term is max(intra, inter) with
 * inter = n / (8 NICs x bw_nic): doubling bw_nic halves inter, so the term
 * falls (the DP traffic crosses the network) but by at most half, and
 * once inter/2 drops below the NVLink part it stops at the intra part. */
static void test_nic_whatif_halves_bandwidth_term(void **state)
{
    (void)state;
    fix_t f;
    strata_error_t err;
    open_ctx(&f, "dgx-a100:2");
    double b1 = 2 * (dp_time(&f, 1) - dp_time(&f, 0.5));
    strata_plan_comm_opts_t o = {.nic_scale = 2, .dp_ratio = 1};
    assert_int_equal(strata_plan_ctx_set_comm(f.ctx, &o, &err), STRATA_OK);
    strata_plan_config_t c;
    strata_plan_result_t r;
    strata_plan_config_default(&c);
    c.dp = 16, c.gbs = 16, c.zero = 0, c.overlap_dp = false;
    double t[2];
    for (int i = 0; i < 2; i++) {
        o.dp_ratio = i ? 0.5 : 1;
        assert_int_equal(strata_plan_ctx_set_comm(f.ctx, &o, &err), STRATA_OK);
        assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_OK);
        for (int k = 0; k < r.ntraffic; k++)
            if (!strcmp(r.traffic[k].dim, "DP")) t[i] = r.traffic[k].time;
    }
    double b2 = 2 * (t[0] - t[1]);
    assert_true(b2 >= 0.5 * b1 * (1 - 1e-9));
    assert_true(b2 < 0.99 * b1);
    close_ctx(&f);
}

static void test_wall_bad_range(void **state)
{
    (void)state;
    strata_link_catalog_t *cat;
    strata_workload_t w;
    strata_error_t err;
    strata_wall_opts_t o = {
        .family = "dgx-h100", .gpus_min = 12, .gpus_max = 64, .batch_per_gpu = 1, .share = 0.5};
    strata_wall_t *wl = malloc(sizeof(*wl));
    assert_non_null(wl);
    strata_plan_config_default(&o.base);
    o.comm = (strata_plan_comm_opts_t){.nic_scale = 1, .dp_ratio = 1};
    assert_int_equal(strata_link_catalog_load(NULL, &cat, &err), STRATA_OK);
    assert_int_equal(strata_workload_load("gpt-1.7b", &w, &err), STRATA_OK);
    assert_int_equal(strata_wall_run(&w, cat, NULL, &o, wl, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "8 GPUs per server"));
    /* 8:32 on gpt-1.7b, pure DP: 3 points, 8 -> 16 -> 32 */
    o.gpus_min = 8, o.gpus_max = 32, o.strategy = STRATA_WALL_DP;
    assert_int_equal(strata_wall_run(&w, cat, NULL, &o, wl, &err), STRATA_OK);
    assert_int_equal(wl->npoints, 3);
    assert_int_equal(wl->points[2].gpus, 32);
    assert_float_equal(wl->points[0].efficiency, 1, 1e-12);
    free(wl);
    strata_link_catalog_destroy(cat);
}

/* One traffic row of an evaluation under what-ifs o. */
static strata_plan_traffic_t row(fix_t *f, const strata_plan_config_t *c,
                                 const strata_plan_comm_opts_t *o, const char *dim)
{
    strata_plan_result_t r;
    strata_error_t err;
    assert_int_equal(strata_plan_ctx_set_comm(f->ctx, o, &err), STRATA_OK);
    assert_int_equal(strata_plan_eval(f->ctx, c, &r, &err), STRATA_OK);
    for (int i = 0; i < r.ntraffic; i++)
        if (!strcmp(r.traffic[i].dim, dim)) return r.traffic[i];
    fail_msg("no %s traffic", dim);
    return r.traffic[0];
}

/* Activation precision: TP (no SP) all-reduces mbs x seq x hidden
 * activations per call, 2 B each in BF16; FP8 sends 1 B each, FP32 4 B.
 * gpt-1.7b, TP 8 in one DGX H100, micro-batch 1: seq x hidden x {1, 2, 4}.
 * The DP gradients keep their bytes (the other what-if). */
static void test_act_precision_by_hand(void **state)
{
    (void)state;
    fix_t f;
    strata_plan_config_t c;
    open_ctx(&f, "dgx-h100:1");
    strata_plan_config_default(&c);
    c.tp = 8, c.dp = 1, c.gbs = 8, c.mbs = 1, c.sp = false;
    double elems = (double)f.w.seq * f.w.hidden;
    static const double ratio[] = {0.5, 1, 2};
    double t[3];
    for (int i = 0; i < 3; i++) {
        strata_plan_comm_opts_t o = {.nic_scale = 1, .dp_ratio = 1, .act_ratio = ratio[i]};
        strata_plan_traffic_t tp = row(&f, &c, &o, "TP");
        assert_float_equal(tp.bytes, elems * 2 * ratio[i], 1e-6);
        t[i] = tp.time;
    }
    assert_true(t[0] < t[1] && t[1] < t[2]);
    close_ctx(&f);
}

/* Scale-up x2 on one DGX H100, TP 8 (only scale-up traffic): the TP
 * all-reduce costs what sched's model prices on the server's machine with
 * bw_intra doubled (a second method: that machine filled by hand), and the
 * bandwidth term of the algorithm it picks is exactly half the one at x1
 * when the pick is the same (bytes x k / bw_intra). */
static void test_scaleup_whatif_by_hand(void **state)
{
    (void)state;
    fix_t f;
    strata_plan_config_t c;
    strata_error_t err;
    open_ctx(&f, "dgx-h100:1");
    strata_plan_config_default(&c);
    c.tp = 8, c.dp = 1, c.gbs = 8, c.mbs = 1, c.sp = false;
    strata_plan_comm_opts_t o = {.nic_scale = 1, .dp_ratio = 1, .scaleup_scale = 2};
    strata_plan_traffic_t tp = row(&f, &c, &o, "TP");
    strata_coll_machine_t m = f.ctx->m0;
    strata_coll_cost_t c1, c2;
    assert_int_equal(strata_coll_select(&m, STRATA_COLL_ALLREDUCE, tp.bytes, &c1, &err), STRATA_OK);
    m.bw_intra *= 2;
    assert_int_equal(strata_coll_select(&m, STRATA_COLL_ALLREDUCE, tp.bytes, &c2, &err), STRATA_OK);
    assert_float_equal(tp.time, c2.time * tp.calls, tp.time * 1e-12);
    assert_true(c2.time < c1.time);
    if (c1.algo == c2.algo && c1.chunks == c2.chunks)
        assert_float_equal(c2.beta, c1.beta / 2, c1.beta * 1e-12);
    close_ctx(&f);
}

/* A larger scale-up domain: 8 DGX H100 (64 GPUs) as one 64-GPU domain.
 * Pure DP's allreduce over all 64 ranks no longer crosses the network: its
 * row names the scale-up tier, and it takes exactly what the same
 * allreduce takes on a 64-rank machine of one server with the NVLink
 * figures per rank (a second method: that machine filled by hand from
 * the 8-GPU server's). A domain that is not a multiple of the server, or
 * does not divide the count, is refused. */
static void test_scaleup_domain(void **state)
{
    (void)state;
    fix_t f;
    strata_plan_config_t c;
    strata_error_t err;
    open_ctx(&f, "dgx-h100:8");
    strata_plan_config_default(&c);
    c.dp = 64, c.gbs = 64, c.zero = 0, c.overlap_dp = false;
    strata_plan_comm_opts_t o = {.nic_scale = 1, .dp_ratio = 1};
    strata_plan_traffic_t base = row(&f, &c, &o, "DP");
    assert_non_null(strstr(base.tier, "scale-out"));
    o.scaleup_size = 64;
    strata_plan_traffic_t big = row(&f, &c, &o, "DP");
    assert_non_null(strstr(big.tier, "scale-up"));
    strata_coll_machine_t m = f.ctx->m0;
    m.nranks = m.per_server = 64, m.servers = 1, m.nics = 64;
    memset(m.bw_dist, 0, sizeof(m.bw_dist));
    memset(m.lat_dist, 0, sizeof(m.lat_dist));
    m.bw_ring = m.lat_ring = m.bw_col = m.lat_col = 0;
    strata_coll_cost_t cost;
    assert_int_equal(strata_coll_select(&m, STRATA_COLL_ALLREDUCE, big.bytes, &cost, &err),
                     STRATA_OK);
    assert_float_equal(big.time, cost.time, cost.time * 1e-12);
    assert_true(big.time < base.time);
    o.scaleup_size = 12;
    assert_int_equal(strata_plan_ctx_set_comm(f.ctx, &o, &err), STRATA_ERR_INVALID);
    o.scaleup_size = 24; /* a multiple of 8 that does not divide 64 */
    assert_int_equal(strata_plan_ctx_set_comm(f.ctx, &o, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "24 GPUs"));
    close_ctx(&f);
}

/* Topology-unaware (flat): 2 DGX H100, pure DP on 16 ranks, ECMP keeping
 * half the bandwidth. The allreduce becomes a ring of 16 whose every step
 * crosses the network: by hand, its bandwidth term is 2 (P-1)/P x n over
 * the rank's NIC share (8 NICs / 8 GPUs: one NIC, bw_nic) x 0.5, i.e.
 * 2 x 15/16 x n / (0.5 bw_nic); its latency term 2 (P-1) = 30 steps at the
 * network's latency, so it is at least 30 x lat_inter. */
static void test_flat_ring_by_hand(void **state)
{
    (void)state;
    fix_t f;
    strata_plan_config_t c;
    open_ctx(&f, "dgx-h100:2");
    strata_plan_config_default(&c);
    c.dp = 16, c.gbs = 16, c.zero = 0, c.overlap_dp = false;
    strata_plan_comm_opts_t o = {.nic_scale = 1, .dp_ratio = 1};
    double aware = row(&f, &c, &o, "DP").time;
    o.flat = true, o.flat_ecmp = 0.5;
    strata_plan_traffic_t t1 = row(&f, &c, &o, "DP");
    assert_non_null(strstr(t1.tier, "flat"));
    o.dp_ratio = 0.5;
    double th = row(&f, &c, &o, "DP").time;
    double B = 2 * (t1.time - th), L = 2 * th - t1.time;
    double n = t1.bytes, bw = f.ctx->m0.bw_nic;
    assert_float_equal(B, 2 * 15.0 / 16 * n / (0.5 * bw), B * 1e-9);
    assert_true(L >= 30 * f.ctx->m0.lat_inter * (1 - 1e-9));
    assert_true(t1.time > aware);
    o.flat_ecmp = 1.5;
    strata_error_t err;
    assert_int_equal(strata_plan_ctx_set_comm(f.ctx, &o, &err), STRATA_ERR_INVALID);
    close_ctx(&f);
}

/* The wall with --flat simulates the ECMP efficiency per count of two
 * servers or more up to 512 GPUs: a fraction in (0, 1], and at most 1 by
 * construction (spread routing is the fluid ideal, never slower). */
static void test_wall_flat_simulates_ecmp(void **state)
{
    (void)state;
    strata_link_catalog_t *cat;
    strata_workload_t w;
    strata_error_t err;
    strata_wall_opts_t o = {.family = "dgx-h100",
                            .gpus_min = 8,
                            .gpus_max = 32,
                            .batch_per_gpu = 1,
                            .share = 0.5,
                            .strategy = STRATA_WALL_DP};
    strata_wall_t *wl = malloc(sizeof(*wl));
    assert_non_null(wl);
    strata_plan_config_default(&o.base);
    o.comm = (strata_plan_comm_opts_t){.nic_scale = 1, .dp_ratio = 1, .flat = true};
    assert_int_equal(strata_link_catalog_load(NULL, &cat, &err), STRATA_OK);
    assert_int_equal(strata_workload_load("gpt-1.7b", &w, &err), STRATA_OK);
    assert_int_equal(strata_wall_run(&w, cat, NULL, &o, wl, &err), STRATA_OK);
    assert_int_equal(wl->npoints, 3);
    assert_false(wl->points[0].ecmp_simulated); /* one server: nothing to route */
    for (int i = 1; i < 3; i++) {
        assert_true(wl->points[i].ecmp_simulated);
        assert_true(wl->points[i].ecmp_eff > 0 && wl->points[i].ecmp_eff <= 1);
    }
    free(wl);
    strata_link_catalog_destroy(cat);
}

/* Gradient precision (--precision bf16): the DP all-reduce carries 2 B per
 * gradient instead of the stored 4 (dp_ratio 0.5), so its row's bytes halve
 * exactly; overlap off (--no-overlap): nothing hides the DP sync, so its
 * exposed time equals its whole time, while with overlap on some of it
 * hides behind the backward pass. gpt-1.7b pure DP on 2 DGX H100. */
static void test_precision_and_overlap_by_hand(void **state)
{
    (void)state;
    fix_t f;
    strata_plan_config_t c;
    open_ctx(&f, "dgx-h100:2");
    strata_plan_config_default(&c);
    c.dp = 16, c.gbs = 16, c.zero = 0, c.overlap_dp = true;
    strata_plan_comm_opts_t o = {.nic_scale = 1, .dp_ratio = 1};
    strata_plan_traffic_t fp32 = row(&f, &c, &o, "DP");
    o.dp_ratio = 2.0 / f.w.grad_bytes;
    strata_plan_traffic_t bf16 = row(&f, &c, &o, "DP");
    assert_int_equal(f.w.grad_bytes, 4);
    assert_float_equal(bf16.bytes, fp32.bytes / 2, fp32.bytes * 1e-12);
    assert_true(bf16.time < fp32.time);
    assert_true(fp32.exposed < fp32.time); /* overlapped: partly hidden */
    c.overlap_dp = false;
    o.dp_ratio = 1;
    strata_plan_traffic_t serial = row(&f, &c, &o, "DP");
    assert_float_equal(serial.exposed, serial.time, serial.time * 1e-12);
    close_ctx(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dp_weak_latency_grows_bandwidth_flat),
        cmocka_unit_test(test_codec_whatif_by_hand),
        cmocka_unit_test(test_nic_whatif_halves_bandwidth_term),
        cmocka_unit_test(test_wall_bad_range),
        cmocka_unit_test(test_act_precision_by_hand),
        cmocka_unit_test(test_scaleup_whatif_by_hand),
        cmocka_unit_test(test_scaleup_domain),
        cmocka_unit_test(test_flat_ring_by_hand),
        cmocka_unit_test(test_wall_flat_simulates_ecmp),
        cmocka_unit_test(test_precision_and_overlap_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
