/*
 * bench_topo.c — the speed target of the topology layer: build a
 * rail-optimised fat-tree of 16,384 GPUs (2,048 servers of 8, 64-port
 * switches, 3 tiers) and compute all its metrics in under 1 s and 1 GiB;
 * then the rate of ECMP route queries (what the simulator asks for).
 *
 * usage: bench_topo [SPEC] [ROUTES]   (defaults: railft:servers=2048,gpus=8, 1000000)
 * Prints wall time per phase and the peak resident set (getrusage).
 */
#define _POSIX_C_SOURCE 200809L
#include "strata/strata.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "../bench_util.h"

static double peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

static int fail(const strata_error_t *err)
{
    char buf[1024];
    fprintf(stderr, "bench_topo: %s\n", strata_error_str(err, buf, sizeof(buf)));
    return 1;
}

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "railft:servers=2048,gpus=8";
    long routes = argc > 2 ? atol(argv[2]) : 1000000;
    strata_error_t err;
    strata_link_catalog_t *cat;
    strata_topo_t *t;
    strata_topo_metrics_t m;
    if (strata_link_catalog_load(NULL, &cat, &err)) return fail(&err);
    double t0 = now();
    if (strata_topo_load_spec(spec, cat, &t, &err)) return fail(&err);
    double t1 = now();
    if (strata_topo_metrics(t, &m, &err)) return fail(&err);
    double t2 = now();
    printf("topology   %s: %d GPUs, %d devices, %d links\n", strata_topo_name(t), (int)m.endpoints,
           (int)m.devices, (int)m.links);
    printf("build      %.3f s\nmetrics    %.3f s (bisection %.4g GB/s, %s; avg hops %.4g, %s)\n",
           t1 - t0, t2 - t1, m.bisection.bw / 1e9, m.bisection.how, m.avg_hops, m.hops_how);
    printf("total      %.3f s, peak RSS %.1f MiB\n", t2 - t0, peak_mib());

    strata_topo_router_t *r;
    if (strata_topo_router_create(t, &r, &err)) return fail(&err);
    int32_t n = strata_topo_endpoint_count(t), chans[64], len;
    uint64_t x = 88172645463325252ULL, hops = 0;
    double t3 = now();
    for (long i = 0; i < routes; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        int32_t a = strata_topo_endpoint(t, (int32_t)(x % (uint64_t)n));
        int32_t b = strata_topo_endpoint(t, (int32_t)((x >> 32) % (uint64_t)n));
        if (strata_topo_path_hash(r, a, b, x, chans, 64, &len) == STRATA_OK) hops += (uint64_t)len;
    }
    double t4 = now();
    printf("routes     %ld ECMP paths (random pairs, hash-picked) in %.3f s: %.2f M/s, "
           "%.2f hops avg; peak RSS %.1f MiB\n",
           routes, t4 - t3, routes / (t4 - t3) / 1e6, (double)hops / (double)routes, peak_mib());
    strata_topo_router_destroy(r);
    strata_topo_destroy(t);
    strata_link_catalog_destroy(cat);
    return 0;
}
