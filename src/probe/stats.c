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

/* One timing of ADD_CHAIN dependent adds, s per add. The loop is one
 * register add, a count and a branch in assembly where the ISA is known,
 * so that no build (an unoptimised one keeps a C loop's variables on the
 * stack: a store and a load per add, which time the store forwarding,
 * not the add) changes what is timed; elsewhere a C chain whose value the
 * compiler must keep in a register between adds. Only the result is
 * sunk, once, after the loop. */
static double add_burst(unsigned long seed)
{
    unsigned long x = seed, n = ADD_CHAIN;
    double t0 = util_now();
#if defined(__x86_64__)
    __asm__ volatile("1:\n\taddq $1, %0\n\tsubq $1, %1\n\tjnz 1b" : "+r"(x), "+r"(n) : : "cc");
#elif defined(__aarch64__)
    __asm__ volatile("1:\n\tadd %0, %0, #1\n\tsubs %1, %1, #1\n\tb.ne 1b"
                     : "+r"(x), "+r"(n)
                     :
                     : "cc");
#else
    for (; n > 0; n--) {
        x += 1;
        __asm__ volatile("" : "+r"(x)); /* each add waits for the last; none folded */
    }
#endif
    double t = (util_now() - t0) / ADD_CHAIN;
    __asm__ volatile("" : : "r"(x)); /* the sink: the chain's result is used */
    return t;
}

double strata_probe_add_time(int bursts)
{
    double best = INFINITY;
    for (int b = 0; b < (bursts > 0 ? bursts : 1); b++) {
        double t = add_burst((unsigned long)b);
        if (t < best) best = t;
    }
    return best;
}

double probe_add_reduce(const double *t, int chains, int repeats, double *mins)
{
    for (int c = 0; c < chains; c++) {
        mins[c] = t[(size_t)c * (size_t)repeats];
        for (int k = 1; k < repeats; k++)
            if (t[(size_t)c * (size_t)repeats + k] < mins[c])
                mins[c] = t[(size_t)c * (size_t)repeats + k];
    }
    double v[PROBE_MAX_REPS];
    int n = chains < PROBE_MAX_REPS ? chains : PROBE_MAX_REPS;
    memcpy(v, mins, sizeof(double) * (size_t)n);
    return n > 0 ? probe_median(v, n) : 0;
}

strata_status_t probe_add_chains(int chains, int repeats, strata_probe_stat_t *stat_p,
                                 strata_error_t *err)
{
    chains = chains < 1 ? 1 : chains > PROBE_MAX_REPS ? PROBE_MAX_REPS : chains;
    repeats = repeats < 1 ? 1 : repeats > PROBE_MAX_REPS ? PROBE_MAX_REPS : repeats;
    double t[PROBE_MAX_REPS * PROBE_MAX_REPS], mins[PROBE_MAX_REPS];
    for (int i = 0; i < chains * repeats; i++)
        t[i] = add_burst((unsigned long)i);
    probe_add_reduce(t, chains, repeats, mins);
    return strata_probe_stat(mins, (size_t)chains, stat_p, err);
}

double strata_probe_add_rate(int chains, int repeats)
{
    strata_probe_stat_t s;
    return probe_add_chains(chains, repeats, &s, NULL) == STRATA_OK ? s.median : 0;
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

double probe_round_time(double last_s, int last_rounds, double last_bytes, double bytes)
{
    if (!(last_s > 0) || last_rounds < 1) return 0;
    double scale = last_bytes > 0 && bytes > last_bytes ? bytes / last_bytes : 1;
    return last_s / last_rounds * scale;
}

int probe_rounds(int full, int least, double share, double round_s)
{
    if (least >= full || !(round_s > 0) || round_s * full <= share) return full;
    double fit = share / round_s;
    return fit > least ? (int)fit : least;
}

/* The samplers' stopping rules (probe.h): n taken, el since the first
 * began, last the last one's own time. */
static bool sample_more(probe_rule_t rule, int n, double el, double last, double budget)
{
    if (rule == PROBE_WITHIN_SHARE) return probe_more(n, PROBE_MAX_REPS, el, last, budget);
    return n < PROBE_MAX_REPS && (n < PROBE_MIN_REPS || el < budget);
}

strata_status_t probe_sample_by(double (*fn)(void *), void *arg, double budget_s, probe_rule_t rule,
                                strata_probe_stat_t *stat_p, strata_error_t *err)
{
    double v[PROBE_MAX_REPS], t0 = util_now(), last = 0;
    int n = 0;
    while (sample_more(rule, n, util_now() - t0, last, budget_s)) {
        double ts = util_now(), s = fn(arg);
        if (!(s > 0))
            return strata_error_set(err, STRATA_ERR_SYSTEM, "probe: a measurement failed");
        last = util_now() - ts;
        v[n++] = s;
    }
    return strata_probe_stat(v, (size_t)n, stat_p, err);
}

strata_status_t probe_sample(double (*fn)(void *), void *arg, double budget_s,
                             strata_probe_stat_t *stat_p, strata_error_t *err)
{
    return probe_sample_by(fn, arg, budget_s, PROBE_UNTIL_BUDGET, stat_p, err);
}

strata_status_t probe_sample_in(double (*fn)(void *), void *arg, double budget_s,
                                strata_probe_stat_t *stat_p, strata_error_t *err)
{
    return probe_sample_by(fn, arg, budget_s, PROBE_WITHIN_SHARE, stat_p, err);
}

/* ==== A figure given up ==== */

strata_status_t probe_figure(strata_probe_result_t *res, const char *figure, double bytes,
                             bool calib, probe_attempt_fn fn, void *arg, strata_probe_stat_t *stat,
                             strata_error_t *err)
{
    strata_error_t mine = {0}, *e = err ? err : &mine;
    strata_status_t st = fn(arg, e);
    if (st != STRATA_ERR_TIMEOUT) return st;
    strata_log(STRATA_LOG_INFO, "probe: %s: tried again (%s)", figure, e->msg);
    st = fn(arg, e); /* one fresh attempt: a preempted moment passes */
    if (st != STRATA_ERR_TIMEOUT) return st;
    strata_log(STRATA_LOG_WARN, "probe: %s not measured: %s (tried twice)", figure, e->msg);
    if (stat) memset(stat, 0, sizeof(*stat));
    if (res->gap_n < STRATA_PROBE_GAPS_MAX) {
        strata_probe_gap_t *g = &res->gaps[res->gap_n++];
        snprintf(g->figure, sizeof(g->figure), "%s", figure);
        snprintf(g->why, sizeof(g->why), "%.180s (tried twice)", e->msg);
        g->bytes = bytes, g->calib = calib;
    }
    return STRATA_OK;
}

void probe_gaps_drop(strata_probe_result_t *res, const char *const *figures, int n)
{
    int k = 0;
    for (int i = 0; i < res->gap_n && i < STRATA_PROBE_GAPS_MAX; i++) {
        bool drop = false;
        for (int f = 0; f < n && !drop; f++)
            drop = strcmp(res->gaps[i].figure, figures[f]) == 0;
        if (!drop) res->gaps[k++] = res->gaps[i];
    }
    res->gap_n = k;
}

const strata_probe_gap_t *probe_gap_for_calib(const strata_probe_result_t *r)
{
    for (int i = 0; i < r->gap_n && i < STRATA_PROBE_GAPS_MAX; i++)
        if (r->gaps[i].calib) return &r->gaps[i];
    return NULL;
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
