/*
 * plan_test.c — the plan module against values derived by hand: FLOPs per
 * step against closed forms, memory per GPU for two configurations worked
 * out below, the pipeline schedule against schedules drawn by hand, the
 * search's plans (fit memory, cover the GPU count), and the errors of bad
 * workloads and plans.
 */
#define _DEFAULT_SOURCE /* mkstemps */
#include "plan_fix_test.h"

/* ==== Fixtures ==== */

static strata_plan_config_t config(int tp, int pp, int dp, int mbs, int gbs)
{
    strata_plan_config_t c;
    strata_plan_config_default(&c);
    c.tp = tp, c.pp = pp, c.dp = dp, c.mbs = mbs, c.gbs = gbs;
    return c;
}

/* ==== FLOPs ==== */

/* Megatron's model count with causal attention, for a GPT layer
 * (QKV + output 24 h^2, FFN 48 h^2 per token and layer, x3 for training
 * is in the 72; causal attention 6 s h; logits 6 h V):
 *   F = 72 B s l h^2 (1 + s/(12 h) + V/(12 l h)).
 * Small model: l = 2, h = 64, s = 128, V = 1000, B = 8:
 *   72 * 8 * 128 * 2 * 4096 = 603,979,776;
 *   1 + 128/768 + 1000/1536 = 1.817708333... (603,979,776 + 483,183,820.8 + 10,695,475.2);
 *   F = 1,097,859,072. */
static void test_model_flops_closed_form(void **state)
{
    const char *path = test_write_tmp(
        ".json",
        "{\"name\": \"tiny\", \"source\": \"test\", \"layers\": 2, \"hidden\": 64, \"heads\": 4,"
        " \"ffn_hidden\": 256, \"vocab\": 1000, \"seq\": 128, \"tied_embeddings\": true}");
    strata_workload_t w;
    strata_error_t err;
    assert_int_equal(strata_workload_load(path, &w, &err), STRATA_OK);
    assert_near(plan_model_flops(&w, 8), 1097859072.0, 1);
    remove(path);
}

/* What the model executes with unfused attention and full recompute is
 * the SC21 count (Narayanan et al. 2021, section 5.1):
 *   F = 96 B s l h^2 (1 + s/(6 h) + V/(16 l h)).
 * GPT 1.7B (l 24, h 2304, s 2048, V 51200), B = 16:
 *   96 * 16 * 2048 * 24 * 2304^2 = 4.00771e14 ... times
 *   1 + 2048/13824 + 51200/884736 = 1.2060185... = 4.83338e14. */
static void test_executed_flops_sc21(void **state)
{
    fix_t f;
    fix_open(&f, "gpt-1.7b", "dgx-a100");
    strata_plan_config_t c = config(1, 1, 8, 1, 16);
    c.flash = false, c.recompute = STRATA_RECOMP_FULL, c.sp = false;
    strata_plan_result_t r;
    strata_error_t err;
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_OK);
    double h = 2304, s = 2048, l = 24, V = 51200, B = 16;
    double sc21 = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    assert_rel(r.hw_flops, sc21, 1e-9);
    assert_rel(sc21, 4.83338e14, 1e-5);
    fix_close(&f);
}

/* Parameter counts against the published ones (a second source: the
 * papers' own totals): Mixtral 8x7B 46.7 B total, 12.9 B active (Jiang et
 * al. 2024); Llama 2 7B 6.74 B (Touvron et al. 2023, model card); Llama 3
 * 8B 8.03 B and 405B 405 B (Dubey et al. 2024); GPT-3 175B (Brown et al.
 * 2020: 175.0 B, 174.6 B with its 50257-token vocabulary). */
static void test_param_counts(void **state)
{
    static const struct {
        const char *m;
        double total, active, tol;
    } k[] = {
        {"mixtral-8x7b", 46.7e9, 12.9e9, 0.01}, {"llama2-7b", 6.74e9, 6.74e9, 0.005},
        {"llama3-8b", 8.03e9, 8.03e9, 0.005},   {"llama3-405b", 405e9, 405e9, 0.01},
        {"gpt3-175b", 175e9, 175e9, 0.01},
    };
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
        strata_workload_t w;
        strata_error_t err;
        assert_int_equal(strata_workload_load(k[i].m, &w, &err), STRATA_OK);
        assert_rel(strata_workload_params(&w), k[i].total, k[i].tol);
        assert_rel(strata_workload_active_params(&w), k[i].active, k[i].tol);
    }
}

/* ==== Memory ==== */

/* Config A: GPT 1.7B, TP 1, PP 1, DP 8, micro-batch 1, ZeRO-0, full
 * recompute, unfused attention, on 8 A100 80GB.
 *   params P = 24 (12 h^2 + 2 h) + V h (tied, one stage)
 *            = 24 * 63,705,600 + 117,964,800 = 1,646,899,200
 *   weights 2P = 3,293,798,400; grads 4P = 6,587,596,800;
 *   optimizer (4 master + 4 m + 4 v) P = 19,762,790,400
 *   activations: full recompute keeps 2 s b h = 9,437,184 per layer,
 *     x 24 layers x min(m, p) = 1 micro-batch = 226,492,416;
 *     plus the layer being recomputed, no SP, t = 1: s b h (10 + 24)
 *     = 160,432,128, + 5 a s^2 b = 503,316,480;
 *     plus the output layer (p = 1): 4 s b h (1 + V/h) = 438,304,768
 *     -> 1,328,545,792
 *   buffers: none (t = 1, p = 1)
 *   total 3,293,798,400 + 6,587,596,800 + 19,762,790,400 + 1,328,545,792
 *       = 30,972,731,392 bytes. */
static void test_memory_gpt_dp(void **state)
{
    fix_t f;
    fix_open(&f, "gpt-1.7b", "dgx-a100");
    strata_plan_config_t c = config(1, 1, 8, 1, 16);
    c.flash = false, c.recompute = STRATA_RECOMP_FULL, c.zero = 0, c.sp = false;
    strata_plan_result_t r;
    strata_error_t err;
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_OK);
    assert_near(r.mem_weights, 3293798400.0, 1);
    assert_near(r.mem_grads, 6587596800.0, 1);
    assert_near(r.mem_optim, 19762790400.0, 1);
    assert_near(r.mem_act, 1328545792.0, 2);
    assert_near(r.mem_total, 30972731392.0, 4);
    assert_true(r.fits);
    fix_close(&f);
}

/* Config B: Llama 2 7B, TP 2 (SP), PP 2, DP 2, micro-batch 1, batch 8
 * (m = 4), ZeRO-1, selective recompute, flash, on 8 A100 80GB.
 *   stage 0: 16 layers x ((4 h^2 + 2 h)/2 + 3 h ffn / 2) + V h / 2
 *          = 16 x (33,558,528 + 67,633,152) + 65,536,000 = 1,684,602,880
 *   weights 2P = 3,369,205,760; grads 4P = 6,738,411,520;
 *   optimizer 12P / DP 2 = 10,107,617,280
 *   activations: SP + selective, s b h (18 + 4 ffn/h) / t
 *     = 16,777,216 x 28.75 / 2 = 241,172,480 per layer,
 *     x 16 layers x min(m 4, p 2) = 7,717,519,360
 *   buffers: TP all-gather 2 s b h = 33,554,432, pipeline send and
 *     receive 2 x 2 s b h / t = 33,554,432
 *   total 27,999,862,784 bytes. */
static void test_memory_llama_3d(void **state)
{
    fix_t f;
    fix_open(&f, "llama2-7b", "dgx-a100");
    strata_plan_config_t c = config(2, 2, 2, 1, 8);
    strata_plan_result_t r;
    strata_error_t err;
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_OK);
    assert_near(r.mem_weights, 3369205760.0, 1);
    assert_near(r.mem_optim, 10107617280.0, 1);
    assert_near(r.mem_act, 7717519360.0, 1);
    assert_near(r.mem_total, 27999862784.0, 4);
    fix_close(&f);
}

/* ==== Pipeline ==== */

/* 1F1B, p = 2, m = 2, forward 2, backward 4 per stage, drawn by hand:
 *   stage 0: F0 [0,2]  F1 [2,4]            B0 [8,12]          B1 [14,18]
 *   stage 1:     F0 [2,4] B0 [4,8] F1 [8,10] B1 [10,14]
 * makespan 18 = ideal 12 + bubble 6 ((p-1)/m of the ideal).
 * Interleaved, v = 2 chunks of forward 1, backward 2 (same work), order
 * of Megatron's schedule (stage 0 warms up with all 4 forwards, stage 1
 * with 2; F(mb, virtual stage)):
 *   s0: F(0,0)[0,1] F(1,0)[1,2] F(0,2)[2,3] F(1,2)[3,4]
 *       B(0,2)[6,8] B(1,2)[9,11] B(0,0)[11,13] B(1,0)[13,15]
 *   s1: F(0,1)[1,2] F(1,1)[2,3] F(0,3)[3,4] B(0,3)[4,6] F(1,3)[6,7]
 *       B(1,3)[7,9] B(0,1)[9,11] B(1,1)[11,13]
 * makespan 15: bubble 3, half of 1F1B's. */
static void test_pipeline_hand_drawn(void **state)
{
    assert_near(strata_plan_pipeline_time(2, 1, 2, 2, 4, 0), 18, 1e-12);
    assert_near(strata_plan_pipeline_time(2, 2, 2, 1, 2, 0), 15, 1e-12);
    /* a transfer of 0.5 on every boundary: 1F1B stage 1 starts at 2.5,
     * its B0 ends 8.5, stage 0's B0 [9,13]; F1 reaches stage 1 at 4.5,
     * runs [8.5,10.5], B1 [10.5,14.5]; stage 0's B1 [15,19] */
    assert_near(strata_plan_pipeline_time(2, 1, 2, 2, 4, 0.5), 19, 1e-12);
    /* interleaving needs m to be a multiple of p */
    assert_true(strata_plan_pipeline_time(2, 2, 3, 1, 2, 0) < 0);
}

/* Llama 3 405B's split (Dubey et al. 2024, 3.3.2): 126 layers on 16
 * stages, 8 each, one fewer on the first and the last:
 * stage 0 = layers 0..6, stage 1 = 7..14, stage 15 = 119..125. */
static void test_uneven_stages(void **state)
{
    strata_workload_t w = {.layers = 126};
    strata_plan_config_t c = config(8, 16, 64, 1, 2048);
    int first, n;
    assert_true(plan_layers_split(&w, &c));
    plan_stage_layers(&w, &c, 0, &first, &n);
    assert_int_equal(first, 0), assert_int_equal(n, 7);
    plan_stage_layers(&w, &c, 1, &first, &n);
    assert_int_equal(first, 7), assert_int_equal(n, 8);
    plan_stage_layers(&w, &c, 15, &first, &n);
    assert_int_equal(first, 119), assert_int_equal(n, 7);
    c.pp = 5; /* 128 is not a multiple of 5 either */
    assert_false(plan_layers_split(&w, &c));
    c.pp = 16, c.vpp = 2; /* only without interleaving */
    assert_false(plan_layers_split(&w, &c));
}

/* ==== Search ==== */

static strata_status_t search(fix_t *f, int gbs, strata_plan_result_t *r, int max, int *n_p,
                              long *evaluated_p, strata_error_t *err)
{
    strata_plan_config_t base;
    strata_plan_config_default(&base);
    return strata_plan_search(f->ctx, &base, gbs, r, max, n_p, evaluated_p, err);
}

static void test_search_fits_and_covers(void **state)
{
    fix_t f;
    fix_open(&f, "gpt-1.7b", "dgx-a100:2");
    strata_plan_result_t r[8];
    int n = 0;
    long evaluated = 0;
    strata_error_t err;
    assert_int_equal(search(&f, 64, r, 8, &n, &evaluated, &err), STRATA_OK);
    assert_int_equal(n, 8);
    assert_true(evaluated >= n);
    for (int i = 0; i < n; i++) {
        const strata_plan_config_t *c = &r[i].cfg;
        assert_int_equal(c->tp * c->pp * c->dp * c->cp, 16);
        assert_true(r[i].fits && r[i].mem_total <= 80e9);
        assert_int_equal(c->gbs % (c->mbs * c->dp), 0);
        if (i) assert_true(r[i].step >= r[i - 1].step);
    }
    fix_close(&f);
}

static void test_search_nothing_fits(void **state)
{
    fix_t f;
    fix_open(&f, "gpt-1t", "dgx-a100");
    strata_plan_result_t r[2];
    int n = 0;
    strata_error_t err;
    assert_int_equal(search(&f, 8, r, 2, &n, NULL, &err), STRATA_ERR_RANGE);
    assert_non_null(strstr(err.msg, "misses by"));
    fix_close(&f);
}

/* Rank order: GPT 1.7B on 4 DGX A100, TP 2, PP 4, DP 4. Default order
 * tp-cp-dp-pp: a pipeline neighbour is TP x DP = 8 ranks away, on the
 * next server (scale-out); tp-pp-dp: 2 ranks away, same server
 * (scale-up), and the DP group (stride 8) now spans the servers. */
static void test_rank_order_tiers(void **state)
{
    fix_t f;
    fix_open(&f, "gpt-1.7b", "dgx-a100:4");
    strata_plan_config_t c = config(2, 4, 4, 1, 64);
    strata_plan_result_t r;
    strata_error_t err;
    const char *tier[2][2]; /* [order][PP, DP] */
    char buf[2][2][48];
    for (int o = 0; o < 2; o++) {
        if (o) assert_int_equal(strata_plan_order_parse("tp-pp-dp", c.order), 0);
        assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_OK);
        for (int i = 0; i < r.ntraffic; i++) {
            int k = !strcmp(r.traffic[i].dim, "PP") ? 0 : !strcmp(r.traffic[i].dim, "DP") ? 1 : -1;
            if (k >= 0) snprintf(buf[o][k], 48, "%s", r.traffic[i].tier), tier[o][k] = buf[o][k];
        }
    }
    assert_string_equal(tier[0][0], "scale-out ib-hdr");
    assert_string_equal(tier[1][0], "scale-up nvlink3");
    assert_string_equal(tier[1][1], "scale-out ib-hdr");
    char s[48];
    assert_string_equal(strata_plan_order_str(c.order, s, sizeof(s)), "tp-pp-ep-dp-cp");
    assert_int_equal(strata_plan_order_parse("tp-dp-tp", c.order), -1);
    assert_int_equal(strata_plan_order_parse("tp-ep-pp", c.order), -1);
    fix_close(&f);
}

/* ==== Simulator beside the model ==== */

/* Llama 3 8B on two DGX H100, TP 8, DP 2: eight DP groups, each a pair of
 * GPUs on the same rail of the two servers. The model prices one group on
 * its share of the server's NICs (8 NICs / 8 groups = 1 each); the
 * simulator runs all eight at once on the real fabric. On a rail-optimised
 * non-blocking fabric the share is exact: the two must agree. */
static void test_sim_matches_share(void **state)
{
    fix_t f;
    fix_open(&f, "llama3-8b", "dgx-h100:2");
    strata_plan_config_t c = config(8, 1, 2, 1, 32);
    c.zero = 0, c.overlap_dp = false;
    strata_plan_result_t r;
    strata_error_t err;
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_OK);
    assert_int_equal(strata_plan_simulate(f.ctx, &r, 64, &err), STRATA_OK);
    int dp = -1;
    for (int i = 0; i < r.ntraffic; i++)
        if (!strcmp(r.traffic[i].dim, "DP")) dp = i;
    assert_true(dp >= 0);
    assert_int_equal(r.traffic[dp].group, 2);
    assert_non_null(strstr(r.traffic[dp].tier, "scale-out"));
    assert_rel(r.traffic[dp].sim_time, r.traffic[dp].time, 0.02);
    /* a cluster past the bound is refused */
    assert_int_equal(strata_plan_simulate(f.ctx, &r, 8, &err), STRATA_ERR_RANGE);
    fix_close(&f);
}

/* ==== Bad input ==== */

static void test_bad_plans(void **state)
{
    fix_t f;
    fix_open(&f, "gpt-1.7b", "dgx-a100");
    strata_plan_result_t r;
    strata_error_t err;
    strata_plan_config_t c = config(8, 1, 1, 1, 8);
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_OK);
    c = config(8, 1, 2, 1, 8); /* 16 GPUs on 8 */
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "not the 8 GPUs"));
    c = config(1, 8, 1, 1, 8); /* 24 layers on 8 stages: fine; 5 would not */
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_OK);
    c = config(1, 1, 8, 3, 16);
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_ERR_INVALID);
    assert_non_null(strstr(err.msg, "not divisible by micro-batch 3 x DP 8"));
    fix_close(&f);
}

static void test_bad_workload_file(void **state)
{
    strata_workload_t w;
    strata_error_t err;
    const char *p = test_write_tmp(
        ".json", "{\"name\": \"x\", \"source\": \"s\", \"layers\": 2, \"hidden\": 64,\n"
                 " \"heads\": 5, \"ffn_hidden\": 256, \"vocab\": 10, \"seq\": 8}");
    assert_int_equal(strata_workload_load(p, &w, &err), STRATA_ERR_PARSE);
    assert_int_equal(err.line, 2);
    assert_non_null(strstr(err.msg, "does not divide"));
    remove(p);
    p = test_write_tmp(".json", "{\"name\": \"x\", \"source\": \"s\", \"layer\": 2}");
    assert_int_equal(strata_workload_load(p, &w, &err), STRATA_ERR_PARSE);
    remove(p);
    assert_int_equal(strata_workload_load("no-such-model", &w, &err), STRATA_ERR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "gpt3-175b"));
}

/* ==== Memory tiers: offload ==== */

/* gpt-7.5b (P parameters, strata_workload_params) on pcie-8gpu-2s, DP 8,
 * ZeRO-1: each GPU updates p = P/8 parameters.
 * host: gpu0 and gpu1 share pcisw0's uplink: 28.01/2 = 14.0 GB/s each;
 *   dram0 serves gpu0..3: 2 x 153.6 / 4 = 76.8 GB/s each (the DDR bus
 *   307.2 GB/s shared by 4). Adam: 30 B x p / 76.8 GB/s; transfers: (4 B
 *   fp32 gradient down + 2 B bf16 weight up) x p / 14.0 GB/s.
 * cxl: one x8 CXL 2.0 expander on socket 0 serves all 8 GPUs: its link,
 *   59.3 x 8/16 = 29.65 GB/s per direction, gives 29.65/8 = 3.71 GB/s each
 *   (socket 1's GPUs cross UPI, 128 GB/s, not the bottleneck); Adam at
 *   2 x 29.65 / 8 = 7.41 GB/s.
 * The optimizer states leave HBM: mem_optim = 0. */
static void test_offload_tiers(void **state)
{
    (void)state;
    fix_t f;
    fix_open(&f, "gpt-7.5b", "pcie-8gpu-2s");
    strata_plan_config_t c = config(1, 1, 8, 1, 64);
    strata_plan_result_t r0, rh, rc;
    strata_error_t err;
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r0, &err), STRATA_OK);
    c.offload = STRATA_PLAN_OFFLOAD_HOST;
    assert_int_equal(strata_plan_eval(f.ctx, &c, &rh, &err), STRATA_OK);
    c.offload = STRATA_PLAN_OFFLOAD_CXL;
    assert_int_equal(strata_plan_eval(f.ctx, &c, &rc, &err), STRATA_OK);
    double p = strata_workload_params(&f.ctx->w) / 8;
    double pcie = strata_link_find(f.cat, "pcie4")->bw_dir;
    double cxl8 = strata_link_find(f.cat, "cxl2")->bw_dir / 2;
    assert_rel(rh.offload_xfer_bw, pcie / 2, 1e-12);
    assert_rel(rh.offload_mem_bw, 2 * 153.6e9 / 4, 1e-12);
    /* p: within 1e-5 of the stage-0 count the planner uses (PP 1) */
    assert_rel(rh.optimizer, 30 * p / 76.8e9, 1e-5);
    assert_rel(rh.offload, 6 * p / (pcie / 2), 1e-5);
    assert_rel(rc.offload_xfer_bw, cxl8 / 8, 1e-12);
    assert_rel(rc.offload_mem_bw, 2 * cxl8 / 8, 1e-12);
    assert_true(r0.mem_optim > 0);
    assert_rel(rh.mem_optim, 0, 0);
    assert_rel(rh.mem_total, r0.mem_total - r0.mem_optim, 1e-12);
    assert_rel(rh.step - r0.step, rh.offload + rh.optimizer - r0.optimizer, 1e-9);
    fix_close(&f);
}

/* Tier capacities (pcie-8gpu-2s: 512 GB of DDR5 per socket, a 256 GB CXL
 * expander on socket 0). Each GPU's share: host, dram0 serves gpu0..3:
 * 512/4 = 128 GB; CXL, the one expander serves all 8: 256/8 = 32 GB.
 * gpt-7.5b (P parameters) keeps 12 B per parameter in the tier (fp32
 * master 4 + Adam's two fp32 moments 2 x 4):
 *   ZeRO-1, DP 8: 12 P / 8 = 11.3 GB per GPU — fits both tiers;
 *   ZeRO-0:       12 P     = 90.6 GB per GPU — fits host DRAM (128), not
 *                 the CXL tier (32): misses by 12 P - 32 GB, while its HBM
 *                 (the states gone) still fits. */
static void test_offload_capacity(void **state)
{
    (void)state;
    fix_t f;
    fix_open(&f, "gpt-7.5b", "pcie-8gpu-2s");
    double P = strata_workload_params(&f.ctx->w);
    strata_plan_config_t c = config(1, 1, 8, 1, 64);
    strata_plan_result_t r;
    strata_error_t err;
    c.offload = STRATA_PLAN_OFFLOAD_HOST;
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_OK);
    assert_rel(r.mem_offload, 12 * P / 8, 1e-5);
    assert_rel(r.mem_offload_capacity, 512e9 / 4, 1e-12);
    assert_true(r.fits);
    c.offload = STRATA_PLAN_OFFLOAD_CXL;
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_OK);
    assert_rel(r.mem_offload_capacity, 256e9 / 8, 1e-12);
    assert_true(r.fits);
    c.zero = 0;
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_OK);
    assert_rel(r.mem_offload, 12 * P, 1e-5);
    assert_true(r.mem_total <= r.mem_capacity); /* HBM holds the rest */
    assert_false(r.fits);                       /* the CXL tier does not hold the states */
    assert_rel(r.mem_offload - r.mem_offload_capacity, 12 * P - 32e9, 1e-5);
    c.offload = STRATA_PLAN_OFFLOAD_HOST;
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_OK);
    assert_true(r.fits && r.mem_offload <= 128e9);
    fix_close(&f);
}

/* A cluster whose memories record no capacity is not checked: the share
 * reads 0 and the plan fits as before (the same ZeRO-0 CXL plan). */
static void test_offload_capacity_unrecorded(void **state)
{
    (void)state;
    const char *p = test_write_tmp(
        ".json",
        "{\"name\": \"nocap\", \"server\": {\"devices\": [\n"
        "  {\"name\": \"cpu\", \"kind\": \"cpu\"}, {\"name\": \"dram\", \"kind\": \"memory\"},\n"
        "  {\"name\": \"cxl\", \"kind\": \"cxl-memory\"},\n"
        "  {\"name\": \"gpu\", \"kind\": \"gpu\", \"count\": 8}],\n"
        " \"links\": [{\"from\": \"gpu\", \"to\": \"cpu\", \"link\": \"pcie4\"},\n"
        "  {\"from\": \"dram\", \"to\": \"cpu\", \"link\": \"ddr5-4800\", \"count\": 8},\n"
        "  {\"from\": \"cxl\", \"to\": \"cpu\", \"link\": \"cxl2\"}]}}\n");
    fix_t f;
    fix_open(&f, "gpt-7.5b", p);
    strata_plan_config_t c = config(1, 1, 8, 1, 64);
    strata_plan_result_t r;
    strata_error_t err;
    c.offload = STRATA_PLAN_OFFLOAD_CXL, c.zero = 0;
    assert_int_equal(strata_plan_eval(f.ctx, &c, &r, &err), STRATA_OK);
    assert_rel(r.mem_offload_capacity, 0, 0);
    assert_true(r.fits);
    fix_close(&f);
    remove(p);
}

/* The search may choose the tier: gpt-39.1b with a batch of 64 fits no
 * plan of pcie-8gpu-2s (8 x A100 80 GB) with every state in HBM — the
 * nearest, TP 8 with ZeRO-0 and full recompute, misses by 8.3 GB, its
 * Adam states alone 12 B x 39.1e9 / 8 = 58.7 GB per GPU — and with the
 * offload tiers allowed its best plan keeps the optimizer states in host
 * DRAM (faster than the CXL tier: 14.0 vs 3.7 GB/s per GPU on the path,
 * test_offload_tiers). */
static void test_search_offload(void **state)
{
    (void)state;
    fix_t f;
    fix_open(&f, "gpt-39.1b", "pcie-8gpu-2s");
    strata_plan_config_t base;
    strata_plan_config_default(&base);
    strata_plan_result_t r[2];
    int n = 0;
    long evaluated = 0;
    strata_error_t err;
    assert_int_equal(strata_plan_search(f.ctx, &base, 64, r, 2, &n, &evaluated, &err),
                     STRATA_ERR_RANGE);
    assert_non_null(strstr(err.msg, "no plan fits memory"));
    base.offload = -1;
    assert_int_equal(strata_plan_search(f.ctx, &base, 64, r, 2, &n, &evaluated, &err), STRATA_OK);
    assert_true(n >= 1);
    assert_int_equal(r[0].cfg.offload, STRATA_PLAN_OFFLOAD_HOST);
    assert_true(r[0].fits && r[0].mem_optim == 0);
    fix_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offload_tiers),
        cmocka_unit_test(test_search_offload),
        cmocka_unit_test(test_offload_capacity),
        cmocka_unit_test(test_offload_capacity_unrecorded),
        cmocka_unit_test(test_model_flops_closed_form),
        cmocka_unit_test(test_executed_flops_sc21),
        cmocka_unit_test(test_param_counts),
        cmocka_unit_test(test_memory_gpt_dp),
        cmocka_unit_test(test_memory_llama_3d),
        cmocka_unit_test(test_pipeline_hand_drawn),
        cmocka_unit_test(test_uneven_stages),
        cmocka_unit_test(test_search_fits_and_covers),
        cmocka_unit_test(test_search_nothing_fits),
        cmocka_unit_test(test_rank_order_tiers),
        cmocka_unit_test(test_sim_matches_share),
        cmocka_unit_test(test_bad_plans),
        cmocka_unit_test(test_bad_workload_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
