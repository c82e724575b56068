/*
 * bench_topoio.c — how long the topology I/O takes from a CLUSTER argument
 * to a finished topology: presets (JSON read, validation, server wiring,
 * fat-tree graft), an NCCL topology XML, an export to JSON, and `local`
 * (hwloc discovery). Prints medians of repeated runs; no assertions (the
 * unit tests check correctness). Usage: bench_topoio [rounds]
 */
#define _POSIX_C_SOURCE 200809L
#include "strata/strata.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../bench_util.h"

/* Median seconds of `rounds` builds of spec; prints one line. */
static int bench_spec(const strata_link_catalog_t *cat, const char *spec, int rounds)
{
    double t[1000];
    int32_t dev = 0, ep = 0;
    for (int r = 0; r < rounds; r++) {
        strata_topo_t *topo = NULL;
        strata_error_t err;
        double t0 = now();
        if (strata_topo_load_spec(spec, cat, &topo, &err) != STRATA_OK) {
            char buf[1024];
            fprintf(stderr, "bench_topoio: %s\n", strata_error_str(&err, buf, sizeof(buf)));
            return 1;
        }
        t[r] = now() - t0;
        dev = strata_topo_device_count(topo);
        ep = strata_topo_endpoint_count(topo);
        strata_topo_destroy(topo);
    }
    qsort(t, (size_t)rounds, sizeof(t[0]), cmp);
    printf("%-44s %8d devices %6d endpoints  %9.3f ms\n", spec, dev, ep, t[rounds / 2] * 1e3);
    return 0;
}

static int bench_export(const strata_link_catalog_t *cat, const char *spec, int rounds)
{
    double t[1000];
    FILE *null = fopen("/dev/null", "w");
    for (int r = 0; r < rounds; r++) {
        strata_error_t err;
        double t0 = now();
        if (strata_cluster_export(spec, cat, null, &err) != STRATA_OK) return 1;
        t[r] = now() - t0;
    }
    fclose(null);
    qsort(t, (size_t)rounds, sizeof(t[0]), cmp);
    printf("%-44s %34s %9.3f ms\n", "export (load + write JSON)", spec, t[rounds / 2] * 1e3);
    return 0;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 21;
    if (rounds < 1 || rounds > 1000) rounds = 21;
    strata_link_catalog_t *cat = NULL;
    strata_error_t err;
    if (strata_link_catalog_load(NULL, &cat, &err) != STRATA_OK) return 1;
    const char *specs[] = {"dgx-h100",
                           "dgx-h100:2048",
                           "gb200-nvl72:64",
                           "tpu-v4:64",
                           STRATA_SOURCE_DIR "/tests/data/nccl_h200.xml",
                           "local"};
    int rc = 0;
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]) && !rc; i++)
        rc = bench_spec(cat, specs[i], rounds);
    if (!rc) rc = bench_export(cat, "dgx-h100", rounds);
    strata_link_catalog_destroy(cat);
    return rc;
}
