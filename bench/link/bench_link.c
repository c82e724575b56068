/*
 * bench_link.c — how long the link layer takes: loading and validating
 * data/links.json (which derives every entry), and deriving every entry
 * again with options. Prints medians of repeated runs; no assertions (the
 * unit tests check correctness). Usage: bench_link [catalog] [rounds]
 */
#define _POSIX_C_SOURCE 200809L
#include "strata/link.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../bench_util.h"

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : STRATA_SOURCE_DIR "/data/links.json";
    int rounds = argc > 2 ? atoi(argv[2]) : 200;
    if (rounds < 1 || rounds > 100000) rounds = 200;
    double *t_load = malloc(sizeof(double) * (size_t)rounds);
    double *t_derive = malloc(sizeof(double) * (size_t)rounds);
    size_t n = 0;
    double sink = 0;
    for (int r = 0; r < rounds; r++) {
        strata_link_catalog_t *cat = NULL;
        strata_error_t err;
        double t0 = now();
        if (strata_link_catalog_load(path, &cat, &err) != STRATA_OK) {
            fprintf(stderr, "bench_link: %s:%d:%d: %s\n", err.file, err.line, err.column, err.msg);
            return 1;
        }
        double t1 = now();
        n = strata_link_catalog_count(cat);
        strata_link_opts_t o = {0};
        for (size_t i = 0; i < n; i++) {
            strata_link_derivation_t d;
            if (strata_link_derive(strata_link_catalog_at(cat, i), &o, &d, NULL) == STRATA_OK)
                sink += d.bw_dir;
        }
        double t2 = now();
        t_load[r] = t1 - t0;
        t_derive[r] = (t2 - t1) / (double)n;
        strata_link_catalog_destroy(cat);
    }
    printf("entries            %zu\n", n);
    printf("load+derive all    %.1f us median of %d (%.2f us per entry)\n",
           median(t_load, rounds) * 1e6, rounds, median(t_load, rounds) * 1e6 / (double)n);
    printf("derive one entry   %.0f ns median\n", median(t_derive, rounds) * 1e9);
    free(t_load);
    free(t_derive);
    return sink > 0 ? 0 : 1;
}
