/*
 * bench_plan.c — the full plan search for a model on a cluster, timed:
 * every valid (TP, PP, v, CP, EP, micro-batch, ZeRO, recompute) for the
 * GPU count, pruned by memory, ranked by step time. Target (issue 12):
 * GPT-3 175B on 3,072 A100s (dgx-a100:384, batch 1536) under 2 s.
 *
 * usage: bench_plan [MODEL CLUSTER BATCH ROUNDS]; prints the median and
 * the range of ROUNDS runs, the plans considered, and the best plan.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "bench_util.h"
#include "strata/strata.h"
#include "strata/plan.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "gpt3-175b";
    const char *cluster = argc > 2 ? argv[2] : "dgx-a100:384";
    int batch = argc > 3 ? atoi(argv[3]) : 1536, rounds = argc > 4 ? atoi(argv[4]) : 5;
    if (batch < 1 || rounds < 1 || rounds > 100) {
        fprintf(stderr, "usage: bench_plan [MODEL CLUSTER BATCH ROUNDS(1-100)]\n");
        return 2;
    }
    strata_error_t err;
    strata_link_catalog_t *cat = NULL;
    strata_topo_t *topo = NULL;
    strata_workload_t w;
    strata_accel_t a;
    strata_plan_ctx_t *ctx = NULL;
    double t0 = now();
    if (strata_link_catalog_load(NULL, &cat, &err) ||
        strata_topo_load_spec(cluster, cat, &topo, &err) || strata_workload_load(model, &w, &err) ||
        strata_accel_for_memory(NULL,
                                strata_topo_device(topo, strata_topo_endpoint(topo, 0)).memory
                                    ? strata_topo_device(topo, strata_topo_endpoint(topo, 0)).memory
                                    : "hbm-a100-80",
                                &a, &err) ||
        strata_plan_ctx_create(&w, &a, topo, cat, &ctx, &err)) {
        fprintf(stderr, "bench_plan: %s\n", err.msg);
        return 1;
    }
    double setup = now() - t0, times[100];
    strata_plan_result_t best[5];
    int n = 0;
    long evaluated = 0;
    strata_plan_config_t base;
    strata_plan_config_default(&base);
    for (int i = 0; i < rounds; i++) {
        t0 = now();
        if (strata_plan_search(ctx, &base, batch, best, 5, &n, &evaluated, &err)) {
            fprintf(stderr, "bench_plan: %s\n", err.msg);
            return 1;
        }
        times[i] = now() - t0;
    }
    double lo, hi, med = median_range(times, rounds, &lo, &hi);
    printf("%s on %s (%d GPUs), batch %d: setup (cluster + machine) %.3f s\n", model, cluster,
           strata_plan_ctx_gpus(ctx), batch, setup);
    printf(
        "search: median %.3f s over %d runs (%.3f-%.3f s), %ld plans considered (target < 2 s)\n",
        med, rounds, lo, hi, evaluated);
    if (n) {
        const strata_plan_config_t *c = &best[0].cfg;
        printf("best: TP %d PP %d v %d DP %d CP %d mbs %d ZeRO-%d recompute %d: step %.3f s, "
               "%.1f TFLOP/s per GPU (MFU %.1f %%)\n",
               c->tp, c->pp, c->vpp, c->dp, c->cp, c->mbs, c->zero, (int)c->recompute, best[0].step,
               best[0].tflops_model, 100 * best[0].mfu);
    }
    strata_plan_ctx_destroy(ctx);
    strata_topo_destroy(topo);
    strata_link_catalog_destroy(cat);
    return 0;
}
