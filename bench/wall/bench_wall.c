/*
 * bench_wall.c — the communication wall swept, timed: GPT-3 175B on
 * DGX H100 clusters from 64 to 65,536 GPUs (11 sizes), weak scaling (one
 * sequence per GPU), every strategy (best = the planner's search at every
 * size, dp, dp+tp, 3d), each point priced by the planner and its cluster
 * built (strata_wall_run). Target (issue 13): the whole sweep < 10 s.
 *
 * usage: bench_wall [MODEL FAMILY LO HI ROUNDS]; prints the median and
 * range of ROUNDS sweeps and the wall of each strategy.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "bench_util.h"
#include "strata/strata.h"
#include "strata/plan.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "gpt3-175b";
    const char *family = argc > 2 ? argv[2] : "dgx-h100";
    int lo = argc > 3 ? atoi(argv[3]) : 64, hi = argc > 4 ? atoi(argv[4]) : 65536;
    int rounds = argc > 5 ? atoi(argv[5]) : 3;
    if (lo < 1 || hi < lo || rounds < 1 || rounds > 100) {
        fprintf(stderr, "usage: bench_wall [MODEL FAMILY LO HI ROUNDS(1-100)]\n");
        return 2;
    }
    strata_error_t err;
    strata_link_catalog_t *cat = NULL;
    strata_fabric_catalog_t fab;
    strata_workload_t w;
    if (strata_link_catalog_load(NULL, &cat, &err) ||
        strata_fabric_catalog_load(NULL, &fab, &err) || strata_workload_load(model, &w, &err)) {
        fprintf(stderr, "bench_wall: %s\n", err.msg);
        return 1;
    }
    strata_wall_t *wl = malloc(4 * sizeof(*wl));
    double times[100];
    if (!wl) return 1;
    for (int i = 0; i < rounds; i++) {
        double t0 = now();
        for (int s = 0; s < 4; s++) {
            strata_wall_opts_t o = {.family = family,
                                    .gpus_min = lo,
                                    .gpus_max = hi,
                                    .batch_per_gpu = 1,
                                    .strategy = (strata_wall_strategy_t)s,
                                    .share = 0.5};
            strata_plan_config_default(&o.base);
            o.comm = (strata_plan_comm_opts_t){.nic_scale = 1, .dp_ratio = 1};
            if (strata_wall_run(&w, cat, &fab, &o, &wl[s], &err)) {
                fprintf(stderr, "bench_wall: %s\n", err.msg);
                return 1;
            }
        }
        times[i] = now() - t0;
    }
    double mn, mx, med = median_range(times, rounds, &mn, &mx);
    printf("%s on %s, %d to %d GPUs (%d sizes) x 4 strategies, weak scaling\n", model, family, lo,
           hi, wl[0].npoints);
    printf("sweep: median %.2f s over %d runs (%.2f-%.2f s) (target < 10 s)\n", med, rounds, mn,
           mx);
    for (int s = 0; s < 4; s++) {
        const strata_wall_t *x = &wl[s];
        const strata_wall_point_t *last = &x->points[x->npoints - 1];
        if (x->wall_index < 0)
            printf("%-6s no wall; at %d GPUs exposed %.1f %%, efficiency %.2f, MFU %.1f %%\n",
                   strata_wall_strategy_name((strata_wall_strategy_t)s), last->gpus,
                   100 * last->exposed_share, last->efficiency, 100 * last->r.mfu);
        else
            printf("%-6s wall at %d GPUs (%s on %s); at %d GPUs exposed %.1f %%, efficiency %.2f\n",
                   strata_wall_strategy_name((strata_wall_strategy_t)s),
                   x->points[x->wall_index].gpus, x->points[x->wall_index].tier_dim,
                   x->points[x->wall_index].tier, last->gpus, 100 * last->exposed_share,
                   last->efficiency);
    }
    free(wl);
    strata_link_catalog_destroy(cat);
    return 0;
}
