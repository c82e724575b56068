/*
 * bench_sched.c — how fast the collective layer is:
 *  1. prediction: every algorithm x every collective it implements x 30
 *     sizes (8 B .. 4 GiB) on a 16,384-GPU cluster (2,048 DGX-like servers
 *     on a rail-optimised fat-tree); target < 100 ms;
 *  2. the cluster's model inputs read off its topology (routing three rank
 *     pairs), reported separately (done once per cluster);
 *  3. lazy generation: walking the steps of a 16,384-rank ring allreduce
 *     and of the double binary tree over 2,048 servers of 8, phase by
 *     phase, in time per step.
 * Prints medians of repeated runs; no assertions (unit tests check values).
 * Usage: bench_sched [rounds]
 */
#define _POSIX_C_SOURCE 200809L
#include "strata/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../bench_util.h"

/* Every (collective, algorithm) pair that applies, 30 sizes; returns how
 * many predictions were made. */
static long predict_all(const strata_coll_machine_t *m, double *sink)
{
    long n = 0;
    for (int c = 0; c < STRATA_COLL_COUNT; c++)
        for (int i = 0; i < 30; i++) {
            double size = 8.0 * (double)(1ull << i);
            for (int a = 0; a < STRATA_ALGO_COUNT; a++) {
                strata_coll_cost_t k;
                if (strata_coll_cost(m, (strata_coll_t)c, (strata_algo_t)a, size, &k, NULL))
                    continue;
                *sink += k.time;
                n++;
            }
        }
    return n;
}

/* Walk every `pstride`-th phase of every `rstride`-th rank of a schedule;
 * seconds taken, steps walked in *steps. */
static double walk(const strata_sched_params_t *p, uint32_t pstride, uint32_t rstride, long *steps)
{
    strata_sched_t *s;
    if (strata_sched_create(p, &s, NULL)) return 0;
    double t0 = now(), sum = 0;
    *steps = 0;
    for (uint32_t ph = 0; ph < strata_sched_nphases(s); ph += pstride)
        for (uint32_t r = 0; r < p->nranks; r += rstride)
            for (uint32_t i = 0; i < strata_sched_phase_nsteps(s, r, ph); i++) {
                strata_step_t st;
                strata_sched_phase_step(s, r, ph, i, &st);
                sum += (double)st.count;
                (*steps)++;
            }
    double t = now() - t0;
    strata_sched_destroy(s);
    return sum > 0 ? t : t;
}

/* A 16,384-rank ring allreduce: every 64th phase (a ring's phases are
 * alike), all ranks; or with group 8 (a channel per rank of a server: a
 * rank's phase holds 8 x 2 steps, each query enumerates them) every 16th
 * rank. */
static double walk_ring(uint32_t P, uint32_t group, long *steps)
{
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_RING,
                               .nranks = P,
                               .count = (uint64_t)P * 1024,
                               .elem_size = 4,
                               .group = group};
    return walk(&p, 64, group > 1 ? 16 : 1, steps);
}

/* The double binary tree over 2,048 servers of 8 (16 chunks): creation
 * (O(N) tables) included; every 4th phase, every 16th rank. A phase of
 * one rank has up to 2 x 8 (tree, channel) parts, and each step query
 * enumerates its phase, so a step costs O(steps of the phase). */
static double walk_tree(uint32_t P, long *steps)
{
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_TREE,
                               .nranks = P,
                               .count = (uint64_t)P * 1024,
                               .elem_size = 4,
                               .chunks = 16,
                               .group = 8};
    return walk(&p, 4, 16, steps);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    if (rounds < 1 || rounds > 1000) rounds = 20;
    strata_link_catalog_t *cat;
    strata_error_t err;
    if (strata_link_catalog_load(NULL, &cat, &err)) {
        fprintf(stderr, "bench_sched: %s\n", err.msg);
        return 1;
    }
    double tb[1000], tp[1000], tw[1000], tc[1000], tt[1000], sink = 0;
    long npred = 0, nsteps = 0, nchan = 0, ntree = 0;
    strata_coll_machine_t m;
    for (int r = 0; r < rounds; r++) {
        strata_topo_t *t;
        double t0 = now();
        if (strata_topo_load_spec("railft:servers=2048,gpus=8", cat, &t, &err) ||
            strata_coll_machine_from_topo(t, cat, &m, &err)) {
            fprintf(stderr, "bench_sched: %s\n", err.msg);
            return 1;
        }
        double t1 = now();
        npred = predict_all(&m, &sink);
        tp[r] = now() - t1;
        tb[r] = t1 - t0;
        strata_topo_destroy(t);
        tw[r] = walk_ring(16384, 1, &nsteps);
        tc[r] = walk_ring(16384, 8, &nchan);
        tt[r] = walk_tree(16384, &ntree);
    }
    printf("16,384 GPUs (railft:servers=2048,gpus=8), median of %d rounds:\n", rounds);
    printf(
        "  predict %ld (collective, algorithm, size) costs, 30 sizes: %.3f ms (target < 100 ms)\n",
        npred, median(tp, rounds) * 1e3);
    printf("  build topology + read model inputs:                       %.1f ms\n",
           median(tb, rounds) * 1e3);
    printf("  lazy ring schedule, %ld steps walked:                      %.1f ns/step\n", nsteps,
           median(tw, rounds) / (double)nsteps * 1e9);
    printf("  lazy ring, 8 channels, %ld steps walked:                  %.1f ns/step\n", nchan,
           median(tc, rounds) / (double)nchan * 1e9);
    printf("  lazy tree over 2048 servers x 8, %ld steps walked:       %.1f ns/step\n", ntree,
           median(tt, rounds) / (double)ntree * 1e9);
    strata_link_catalog_destroy(cat);
    return sink > 0 ? 0 : 1;
}
