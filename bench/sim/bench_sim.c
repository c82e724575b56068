/*
 * bench_sim.c — how fast the simulator times a ring allreduce on a large
 * rail-optimised fat-tree, with phase reuse and event by event.
 *
 *   bench_sim CLUSTER [reuse|full|full:N] [spread|ecmp] [SIZE_BYTES]
 *
 * reuse: the default run (repeated phases timed once). full: every phase
 * simulated. full:N: only the first N phases event by event, and the whole
 * run extrapolated from their cost (for cases where the full run takes
 * minutes). Prints one line: ranks, phases, simulated time, wall seconds
 * of the simulation pass (building the topology excluded, the α-β pass
 * excluded), engine events and events per second, peak RSS.
 * One case per process so peak RSS belongs to that case.
 */
#define _POSIX_C_SOURCE 200809L
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* ru_maxrss is KiB on Linux */
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_sim CLUSTER [reuse|full|full:N] [spread|ecmp] [SIZE]\n");
        return 2;
    }
    const char *mode = argc > 2 ? argv[2] : "reuse";
    const char *routing = argc > 3 ? argv[3] : "spread";
    double size = argc > 4 ? atof(argv[4]) : 1073741824.0;
    strata_error_t err;
    strata_link_catalog_t *cat = NULL;
    strata_topo_t *topo = NULL;
    if (strata_link_catalog_load(NULL, &cat, &err) != STRATA_OK ||
        strata_topo_load_spec(argv[1], cat, &topo, &err) != STRATA_OK) {
        fprintf(stderr, "bench_sim: %s\n", err.msg);
        return 1;
    }
    uint32_t P = (uint32_t)strata_topo_endpoint_count(topo);
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_RING,
                               .nranks = P,
                               .count = (uint64_t)(size / 4),
                               .elem_size = 4,
                               .chunks = 1};
    strata_sched_t *s = NULL;
    strata_sim_t *sim = NULL;
    strata_sim_opts_t o = strata_sim_opts_default();
    o.routing = strcmp(routing, "ecmp") == 0 ? STRATA_SIM_ECMP : STRATA_SIM_SPREAD;
    o.no_reuse = strncmp(mode, "full", 4) == 0;
    uint32_t limit = strncmp(mode, "full:", 5) == 0 ? (uint32_t)atol(mode + 5) : 0;
    strata_sim_result_t r;
    if (strata_sched_create(&p, &s, &err) != STRATA_OK ||
        strata_sim_create(topo, &o, &sim, &err) != STRATA_OK ||
        strata_sim_add(sim, s, NULL, &err) != STRATA_OK) {
        fprintf(stderr, "bench_sim: %s\n", err.msg);
        return 1;
    }
    sim_set_phase_limit(sim, limit);
    if (strata_sim_run(sim, &r, &err) != STRATA_OK) {
        fprintf(stderr, "bench_sim: %s\n", err.msg);
        return 1;
    }
    uint32_t nph = strata_sched_nphases(s);
    double scale = limit && limit < nph ? (double)nph / limit : 1;
    printf("%-30s %-7s %-6s ranks %6u phases %6u (simulated %6llu) sim_time %9.3f ms "
           "wall %8.3f s%s events %10llu (%.2f M/s) peak_rss %7.1f MiB\n",
           argv[1], mode, routing, P, nph, (unsigned long long)r.phases_simulated,
           r.time * scale * 1e3, r.wall * scale, scale > 1 ? " (extrapolated)" : "",
           (unsigned long long)((double)r.events * scale), (double)r.events / r.wall / 1e6,
           peak_rss_mib());
    if (getenv("BENCH_VERBOSE"))
        printf("batches %llu flows %llu\n", (unsigned long long)r.batches,
               (unsigned long long)r.flows);
    strata_sim_result_free(&r);
    strata_sim_destroy(sim);
    strata_sched_destroy(s);
    strata_topo_destroy(topo);
    strata_link_catalog_destroy(cat);
    return 0;
}
