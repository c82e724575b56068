/*
 * brute_hops_test.h — the hop metrics' independent check, shared by the
 * topology unit tests: every ordered pair of endpoints routed one by one
 * with the public router (the metrics sweep once per source instead).
 * Included once per test executable (static).
 */
#ifndef STRATA_BRUTE_HOPS_TEST_H
#define STRATA_BRUTE_HOPS_TEST_H

#include "strata/topo.h"
#include "test.h"

/* Average and maximum routed hops over every ordered pair of endpoints. */
static inline void brute_hops(const strata_topo_t *t, double *avg, int32_t *diam)
{
    strata_topo_router_t *r;
    assert_int_equal(strata_topo_router_create(t, &r, NULL), 0);
    int32_t n = strata_topo_endpoint_count(t);
    double sum = 0;
    *diam = 0;
    for (int32_t a = 0; a < n; a++)
        for (int32_t b = 0; b < n; b++) {
            if (a == b) continue;
            int32_t h = strata_topo_hops(r, strata_topo_endpoint(t, a), strata_topo_endpoint(t, b));
            sum += h;
            if (h > *diam) *diam = h;
        }
    *avg = sum / ((double)n * (n - 1));
    strata_topo_router_destroy(r);
}

#endif
