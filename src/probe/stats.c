/*
 * stats.c — the probe's arithmetic: medians and spread of repeated
 * timings, bandwidth from bytes and time, and the checks that reject a
 * figure outside physical sense.
 *
 * A probe is only as good as its statistics on a noisy host: the median
 * (robust to the one sample a preemption stretched) is the figure, the
 * interquartile range over the median its spread. Quartiles are linear
 * interpolations between order statistics (type 7 of Hyndman & Fan 1996,
 * the default of R and NumPy), so a test can derive them by hand.
 */
#include "probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double probe_median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Quantile q of sorted v[0..n-1] (Hyndman-Fan type 7). */
static double quantile(const double *v, size_t n, double q)
{
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h), hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (h - (double)lo) * (v[hi] - v[lo]);
}

strata_status_t strata_probe_stat(const double *x, size_t n, strata_probe_stat_t *stat_p,
                                  strata_error_t *err)
{
    if (!x || n == 0 || !stat_p)
        return strata_error_set(err, STRATA_ERR_INVALID, "probe: no samples to summarise");
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return strata_error_set(err, STRATA_ERR_INVALID, "probe: sample %zu is not a number",
                                    i);
    double *v = util_malloc(n * sizeof(*v));
    if (!v) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    memcpy(v, x, n * sizeof(*v));
    qsort(v, n, sizeof(*v), cmp_double);
    strata_probe_stat_t s = {
        .median = quantile(v, n, 0.5), .min = v[0], .max = v[n - 1], .n = (int)n};
    double iqr = quantile(v, n, 0.75) - quantile(v, n, 0.25);
    s.spread = s.median != 0 ? iqr / fabs(s.median) : 0;
    util_free(v);
    *stat_p = s;
    return STRATA_OK;
}

double strata_probe_bandwidth(double bytes, double seconds)
{
    if (!(seconds > 0) || !(bytes >= 0) || !isfinite(seconds) || !isfinite(bytes)) return -1;
    return bytes / seconds;
}

#define ADD_CHAIN 100000

double strata_probe_add_time(int bursts)
{
    double best = INFINITY;
    for (int b = 0; b < (bursts > 0 ? bursts : 1); b++) {
        unsigned long x = (unsigned long)b;
        double t0 = util_now();
        for (long i = 0; i < ADD_CHAIN; i++) {
            x += 1;
            __asm__ volatile("" : "+r"(x)); /* each add waits for the last; none folded */
        }
        double t = (util_now() - t0) / ADD_CHAIN;
        if (t < best) best = t;
    }
    return best;
}

double strata_probe_slowest(const double *rank_median, int n)
{
    double worst = 0;
    for (int i = 0; i < n; i++)
        if (rank_median[i] > worst) worst = rank_median[i];
    return worst;
}

void probe_stat_add(strata_probe_stat_t *s, double add)
{
    if (s->n <= 0 || !(add > 0)) return;
    double iqr = s->spread * s->median; /* spread = IQR / median: the IQR does not move */
    s->median += add, s->min += add, s->max += add;
    s->spread = s->median > 0 ? iqr / s->median : 0;
}

strata_status_t strata_probe_check_latency(const char *what, double seconds, strata_error_t *err)
{
    if (isfinite(seconds) && seconds > 0) return STRATA_OK;
    return strata_error_set(err, STRATA_ERR_RANGE,
                            "%s: measured latency %g s is not physical (must be > 0 and finite)",
                            what, seconds);
}

strata_status_t strata_probe_check_bandwidth(const char *what, double bw, double ceiling,
                                             strata_error_t *err)
{
    if (!isfinite(bw) || bw <= 0)
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "%s: measured bandwidth %g B/s is not physical (must be > 0)", what,
                                bw);
    if (ceiling > 0 && bw > ceiling)
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "%s: measured %.3g GB/s is faster than the hardware allows "
                                "(%.3g GB/s); the timing is wrong",
                                what, bw / 1e9, ceiling / 1e9);
    return STRATA_OK;
}

strata_status_t probe_sample(double (*fn)(void *), void *arg, double budget_s,
                             strata_probe_stat_t *stat_p, strata_error_t *err)
{
    double v[PROBE_MAX_REPS], t0 = util_now();
    size_t n = 0;
    while (n < PROBE_MAX_REPS && (n < PROBE_MIN_REPS || util_now() - t0 < budget_s)) {
        double s = fn(arg);
        if (!(s > 0))
            return strata_error_set(err, STRATA_ERR_SYSTEM, "probe: a measurement failed");
        v[n++] = s;
    }
    return strata_probe_stat(v, n, stat_p, err);
}

double probe_share(double now, double deadline, int left)
{
    double rest = deadline - now;
    return rest > 0 ? rest / (left > 1 ? left : 1) : 0;
}

bool probe_more(int n, int max, double el, double last, double budget)
{
    if (n <= 0) return true;
    return n < max && el + last < budget;
}

int probe_rounds(int full, int least, double share, double last)
{
    return last > share && least < full ? least : full;
}

strata_status_t probe_sample_in(double (*fn)(void *), void *arg, double budget_s,
                                strata_probe_stat_t *stat_p, strata_error_t *err)
{
    double v[PROBE_MAX_REPS], t0 = util_now(), last = 0;
    int n = 0;
    while (probe_more(n, PROBE_MAX_REPS, util_now() - t0, last, budget_s)) {
        double ts = util_now(), s = fn(arg);
        if (!(s > 0))
            return strata_error_set(err, STRATA_ERR_SYSTEM, "probe: a measurement failed");
        last = util_now() - ts;
        v[n++] = s;
    }
    return strata_probe_stat(v, (size_t)n, stat_p, err);
}

const char *strata_probe_mem_kind_name(strata_probe_mem_kind_t kind)
{
    static const char *const names[] = {
#define STRATA_PROBE_MEM_NAME(name, text) text,
        STRATA_PROBE_MEM_MAP(STRATA_PROBE_MEM_NAME)
#undef STRATA_PROBE_MEM_NAME
    };
    return kind >= 0 && kind < STRATA_PROBE_MEM_KINDS ? names[kind] : "?";
}

/* ==== The clock's own cost ==== */

double probe_clock_cost(void)
{
    double d[31];
    for (int i = 0; i < 31; i++) {
        double t0 = util_now();
        d[i] = util_now() - t0;
    }
    strata_probe_stat_t st;
    return strata_probe_stat(d, 31, &st, NULL) == STRATA_OK && st.median > 0 ? st.median : 0;
}

double probe_less_clock(double t, int reads, double clk)
{
    double less = t - reads * clk;
    return less > 0 ? less : t; /* a clock slower than the interval: keep it whole */
}
