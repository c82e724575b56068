/*
 * bench_util.h — what the benchmark programs in bench/<module>/ share: a
 * monotonic clock and the median (and range) of repeated runs (medians, because this
 * machine is shared and noisy).
 */
#ifndef STRATA_BENCH_UTIL_H
#define STRATA_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place; returns its median (upper median for even n). */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp);
    return v[n / 2];
}

/* Sorts v in place; its median, with the fastest and slowest run in lo_p, hi_p. */
static inline double median_range(double *v, int n, double *lo_p, double *hi_p)
{
    double m = median(v, n);
    *lo_p = v[0];
    *hi_p = v[n - 1];
    return m;
}

#endif
