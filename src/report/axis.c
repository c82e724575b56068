/*
 * axis.c — the arithmetic under every chart: mapping data values to pixel
 * positions on linear and log axes, choosing tick values and widening a
 * data range to one that reads well, and writing a value with its unit
 * and an SI (or 1024-based) prefix for tick labels and tables.
 *
 * Pure functions of their arguments, no allocation; a chart calls them a
 * few dozen times.
 */
#include "report.h"
#include "util.h"

#include <math.h>
#include <string.h>

/* ==== Values with units ==== */

/* Drop the trailing zeros of a "%.3g"-style mantissa: "%.3g" already does,
 * except that it never yields "1e+03" below because callers keep m < 999.5. */
static const char *const si_up[] = {"", "k", "M", "G", "T", "P", "E"};
static const char *const si_down[] = {"", "m", "u", "n", "p", "f"};
static const char *const bin_up[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

const char *strata_report_value(double v, const char *unit, bool binary, char *buf, size_t len)
{
    unit = unit ? unit : "";
    if (!isfinite(v)) {
        snprintf(buf, len, "-");
        return buf;
    }
    /* counts (no unit) that are whole numbers: every digit, "65536" */
    if (!unit[0] && v == floor(v) && fabs(v) < 1e7) {
        snprintf(buf, len, "%.0f", v);
        return buf;
    }
    if (v == 0 || strcmp(unit, "%") == 0) {
        snprintf(buf, len, "%.3g%s%s", v, unit[0] && strcmp(unit, "%") ? " " : "", unit);
        return buf;
    }
    double m = fabs(v), base = binary ? 1024 : 1000;
    int k = 0;
    /* 999.5 and up prints as "1e+03" with three digits: take the next prefix */
    while (m >= base - (binary ? 0 : 0.5) && k < 6)
        m /= base, k++;
    while (!binary && m < 0.9995 && k > -5)
        m *= 1000, k--;
    const char *p = k >= 0 ? (binary ? bin_up[k] : si_up[k]) : si_down[-k];
    snprintf(buf, len, "%.3g%s%s%s", v < 0 ? -m : m, (unit[0] || p[0]) ? " " : "", p, unit);
    return buf;
}

/* ==== Mapping ==== */

double strata_axis_map(const strata_axis_t *a, double v)
{
    double lo = a->lo, hi = a->hi, x = v;
    if (a->scale == STRATA_AXIS_LOG) {
        if (!(v > 0) || !(lo > 0) || !(hi > 0)) return a->px_lo;
        lo = log10(lo), hi = log10(hi), x = log10(v);
    }
    if (hi == lo) return (a->px_lo + a->px_hi) / 2;
    return a->px_lo + (x - lo) / (hi - lo) * (a->px_hi - a->px_lo);
}

/* ==== Ticks ==== */

/* The 1, 2 or 5 x 10^k step closest above range / 5. */
static double linear_step(double range)
{
    double raw = range / 5, p = pow(10, floor(log10(raw)));
    if (raw <= p) return p;
    if (raw <= 2 * p) return 2 * p;
    if (raw <= 5 * p) return 5 * p;
    return 10 * p;
}

static size_t linear_ticks(const strata_axis_t *a, double *t, size_t max)
{
    if (!(a->hi > a->lo)) return 0;
    double step = linear_step(a->hi - a->lo), eps = step * 1e-9;
    size_t n = 0;
    for (double k = ceil((a->lo - eps) / step); k * step <= a->hi + eps && n < max; k++) {
        double v = k * step;
        t[n++] = fabs(v) < eps ? 0 : v;
    }
    return n;
}

/* Powers of `base` (10, or 2 for byte axes) inside [lo, hi], every
 * stride-th one so that at most 10 remain; decimal axes spanning fewer than
 * three powers of ten also get the 2x and 5x values (from the power below
 * lo, so a range inside one decade still has ticks). */
static size_t log_ticks(const strata_axis_t *a, double *t, size_t max)
{
    if (!(a->lo > 0) || !(a->hi >= a->lo)) return 0;
    double base = a->binary ? 2 : 10, lb = log(base);
    long e0 = (long)ceil(log(a->lo) / lb - 1e-9), e1 = (long)floor(log(a->hi) / lb + 1e-9);
    long count = e1 - e0 + 1, stride = count > 10 ? (count + 9) / 10 : 1;
    bool fill = !a->binary && count < 3;
    size_t n = 0;
    for (long e = fill ? e0 - 1 : e0; e <= e1 && n < max; e += stride) {
        double p = pow(base, (double)e);
        for (int m = 1; m <= (fill ? 5 : 1) && n < max; m = m == 1 ? 2 : m + 3)
            if (m * p >= a->lo * (1 - 1e-9) && m * p <= a->hi * (1 + 1e-9)) t[n++] = m * p;
    }
    return n;
}

size_t strata_axis_ticks(const strata_axis_t *a, double *ticks, size_t max)
{
    if (!a || !ticks) return 0;
    return a->scale == STRATA_AXIS_LOG ? log_ticks(a, ticks, max) : linear_ticks(a, ticks, max);
}

void strata_axis_nice(strata_axis_scale_t scale, bool binary, double *lo, double *hi)
{
    double l = *lo, h = *hi;
    if (scale == STRATA_AXIS_LOG) {
        if (!(l > 0)) l = h > 0 ? h / 10 : 1;
        if (!(h >= l)) h = l;
        double base = binary ? 2 : 10;
        l = pow(base, floor(log(l) / log(base) + 1e-9));
        h = pow(base, ceil(log(h) / log(base) - 1e-9));
        if (h <= l) h = l * base, l /= binary ? 1 : base;
    } else {
        if (l > 0) l = 0;
        if (h < 0) h = 0;
        if (h <= l) h = l + 1;
        double step = linear_step(h - l);
        l = floor(l / step + 1e-9) * step;
        h = ceil(h / step - 1e-9) * step;
    }
    *lo = l, *hi = h;
}

/* ==== Text formats ==== */

const char *strata_fmt_gbs(double Bps, char *buf, size_t len)
{
    double g = Bps / 1e9;
    snprintf(buf, len, g >= 10 ? "%.1f" : g >= 1 ? "%.2f" : "%.3f", g);
    return buf;
}

const char *strata_fmt_time(double s, char *buf, size_t len)
{
    if (!(s > 0))
        snprintf(buf, len, "-");
    else if (s < 1e-6)
        snprintf(buf, len, "%.3g ns", s * 1e9);
    else if (s < 1e-3)
        snprintf(buf, len, "%.3g us", s * 1e6);
    else if (s < 1)
        snprintf(buf, len, "%.3g ms", s * 1e3);
    else
        snprintf(buf, len, "%.3g s", s);
    return buf;
}

const char *strata_fmt_size(double bytes, char *buf, size_t len)
{
    return util_fmt_bytes(bytes, buf, len); /* the one owner, below every module */
}
