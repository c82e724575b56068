/*
 * chart.c — line charts and grouped/stacked bar charts as inline SVG, each
 * inside an HTML <figure> with its title and, beneath the drawing, a table
 * of every number drawn.
 *
 * Design: a chart is a handle that copies what it is given (series,
 * categories, marks, labels) and draws it all in one render call, so the
 * caller never keeps buffers alive. Layout is fixed arithmetic: a plot area
 * inside margins (left for y tick labels, bottom for x tick labels and the
 * axis label, right for the legend), axes from strata_axis_* (axis.c),
 * series coloured from one colour-blind-safe palette (Okabe & Ito, "Color
 * Universal Design", 2008), dashed after the eighth. Workload: a handful of
 * charts per report, tens of series, hundreds of points.
 */
#include "report.h"
#include "util.h"

#include <math.h>
#include <string.h>

#define MAX_SERIES 32
#define MAX_MARKS  32

/* Okabe-Ito, yellow left out (unreadable on white), grey last. */
static const char *const palette[] = {"#0072B2", "#D55E00", "#009E73", "#E69F00",
                                      "#CC79A7", "#56B4E9", "#000000", "#999999"};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

typedef struct series {
    char *name;
    size_t n;
    double *x, *y; /* x NULL for bar series (one y per category) */
    bool emph;
} series_t;

typedef struct mark {
    double x, y;
    char *label;
} mark_t;

typedef struct axis_spec {
    strata_axis_scale_t scale;
    char *label, *unit;
    bool binary;
} axis_spec_t;

struct strata_chart {
    strata_chart_kind_t kind;
    char *id, *title, *note;
    axis_spec_t ax, ay;
    size_t ncat;
    char **cats;
    int nseries, nmarks;
    series_t series[MAX_SERIES];
    mark_t marks[MAX_MARKS];
};

/* ==== Building ==== */

static bool id_ok(const char *id)
{
    if (!id || !id[0]) return false;
    for (const char *p = id; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_'))
            return false;
    return true;
}

bool report_id_ok(const char *id)
{
    return id_ok(id);
}

strata_status_t strata_chart_create(strata_chart_kind_t kind, const char *id, const char *title,
                                    strata_chart_t **chart_p, strata_error_t *err)
{
    if (!id_ok(id))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "chart id '%s': use letters, digits, '-' and '_'", id ? id : "");
    if (kind < STRATA_CHART_LINE || kind > STRATA_CHART_STACKED)
        return strata_error_set(err, STRATA_ERR_INVALID, "chart '%s': unknown kind %d", id,
                                (int)kind);
    strata_chart_t *c = util_calloc(1, sizeof(*c));
    if (!c) return strata_error_set(err, STRATA_ERR_NOMEM, "chart '%s': out of memory", id);
    c->kind = kind;
    c->id = util_strdup(id);
    c->title = util_strdup(title ? title : "");
    if (!c->id || !c->title) {
        strata_chart_destroy(c);
        return strata_error_set(err, STRATA_ERR_NOMEM, "chart '%s': out of memory", id);
    }
    *chart_p = c;
    return STRATA_OK;
}

void strata_chart_destroy(strata_chart_t *c)
{
    if (!c) return;
    for (int i = 0; i < c->nseries; i++) {
        util_free(c->series[i].name);
        util_free(c->series[i].x);
        util_free(c->series[i].y);
    }
    for (int i = 0; i < c->nmarks; i++)
        util_free(c->marks[i].label);
    for (size_t i = 0; i < c->ncat; i++)
        util_free(c->cats[i]);
    util_free(c->cats);
    util_free(c->ax.label), util_free(c->ax.unit), util_free(c->ay.label), util_free(c->ay.unit);
    util_free(c->id), util_free(c->title), util_free(c->note);
    util_free(c);
}

static void set_axis(axis_spec_t *a, strata_axis_scale_t scale, const char *label, const char *unit,
                     bool binary)
{
    util_free(a->label), util_free(a->unit);
    a->scale = scale;
    a->label = util_strdup(label ? label : "");
    a->unit = util_strdup(unit ? unit : "");
    a->binary = binary;
}

void strata_chart_x(strata_chart_t *c, strata_axis_scale_t scale, const char *label,
                    const char *unit, bool binary)
{
    if (c) set_axis(&c->ax, scale, label, unit, binary);
}

void strata_chart_y(strata_chart_t *c, strata_axis_scale_t scale, const char *label,
                    const char *unit, bool binary)
{
    if (c) set_axis(&c->ay, scale, label, unit, binary);
}

void strata_chart_note(strata_chart_t *c, const char *note)
{
    if (!c) return;
    util_free(c->note);
    c->note = note ? util_strdup(note) : NULL;
}

static double *copy_doubles(const double *v, size_t n)
{
    double *d = util_malloc(n ? n * sizeof(*d) : 1);
    if (d && n) memcpy(d, v, n * sizeof(*d));
    return d;
}

static int add_series(strata_chart_t *c, const char *name, size_t n, const double *xs,
                      const double *ys)
{
    if (c->nseries == MAX_SERIES || !ys) return -1;
    series_t *s = &c->series[c->nseries];
    memset(s, 0, sizeof(*s));
    s->name = util_strdup(name ? name : "");
    s->n = n;
    s->y = copy_doubles(ys, n);
    s->x = xs ? copy_doubles(xs, n) : NULL;
    if (!s->name || !s->y || (xs && !s->x)) {
        util_free(s->name), util_free(s->y), util_free(s->x);
        return -1;
    }
    return c->nseries++;
}

int strata_chart_line(strata_chart_t *c, const char *name, size_t n, const double *xs,
                      const double *ys)
{
    if (!c || c->kind != STRATA_CHART_LINE || !xs) return -1;
    return add_series(c, name, n, xs, ys);
}

void strata_chart_emphasise(strata_chart_t *c, int series)
{
    if (c && series >= 0 && series < c->nseries) c->series[series].emph = true;
}

strata_status_t strata_chart_mark(strata_chart_t *c, double x, double y, const char *label)
{
    if (!c || c->nmarks == MAX_MARKS) return STRATA_ERR_INVALID;
    mark_t *m = &c->marks[c->nmarks];
    m->label = util_strdup(label ? label : "");
    if (!m->label) return STRATA_ERR_NOMEM;
    m->x = x, m->y = y;
    c->nmarks++;
    return STRATA_OK;
}

strata_status_t strata_chart_categories(strata_chart_t *c, size_t n, const char *const *names)
{
    if (!c || c->kind == STRATA_CHART_LINE || c->ncat || c->nseries || !n)
        return STRATA_ERR_INVALID;
    c->cats = util_calloc(n, sizeof(*c->cats));
    if (!c->cats) return STRATA_ERR_NOMEM;
    c->ncat = n;
    for (size_t i = 0; i < n; i++)
        if (!(c->cats[i] = util_strdup(names[i] ? names[i] : ""))) return STRATA_ERR_NOMEM;
    return STRATA_OK;
}

int strata_chart_bars(strata_chart_t *c, const char *name, const double *values)
{
    if (!c || c->kind == STRATA_CHART_LINE || !c->ncat) return -1;
    return add_series(c, name, c->ncat, NULL, values);
}

/* ==== Drawing helpers ==== */

typedef struct frame {
    double left, right, top, bottom; /* plot area, px */
    strata_axis_t x, y;
    int width, height;
} frame_t;

static const char *colour(int i)
{
    return palette[(size_t)i % NPALETTE];
}

/* Dash pattern of series i: solid for the first NPALETTE, then dashed. */
static const char *dash(int i)
{
    return (size_t)i < NPALETTE       ? ""
           : (size_t)i < 2 * NPALETTE ? " stroke-dasharray=\"6 3\""
                                      : " stroke-dasharray=\"2 2\"";
}

static void text(FILE *out, double x, double y, const char *anchor, const char *cls, const char *s)
{
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"%s\">", x, y, anchor, cls);
    strata_html_escape(out, s);
    fputs("</text>\n", out);
}

static bool usable(const strata_axis_t *a, double v)
{
    return isfinite(v) && (a->scale != STRATA_AXIS_LOG || v > 0);
}

static void axis_title(FILE *out, const frame_t *f, const axis_spec_t *ax, bool y)
{
    char buf[256];
    const char *u = ax->unit && ax->unit[0] ? ax->unit : NULL;
    int n = snprintf(buf, sizeof(buf), "%s%s%s%s", ax->label ? ax->label : "", u ? " (" : "",
                     u ? (ax->binary && strcmp(u, "B") == 0 ? "bytes" : u) : "", u ? ")" : "");
    /* about 6.6 px a character at 12 px: say "log scale" where it fits */
    double room = y ? f->bottom - f->top : f->right - f->left;
    if (ax->scale == STRATA_AXIS_LOG && n > 0 && (size_t)n + 11 < sizeof(buf) &&
        6.6 * (n + 11) < room)
        snprintf(buf + n, sizeof(buf) - (size_t)n, ", log scale");
    if (!y) {
        text(out, (f->left + f->right) / 2, f->height - 6, "middle", "axis-title", buf);
        return;
    }
    fprintf(out,
            "<text transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\" "
            "class=\"axis-title\">",
            (f->top + f->bottom) / 2);
    strata_html_escape(out, buf);
    fputs("</text>\n", out);
}

/* Grid lines and tick labels of the y axis (every chart has one). */
static void y_axis(FILE *out, const frame_t *f, const axis_spec_t *ay)
{
    double t[32];
    size_t n = strata_axis_ticks(&f->y, t, 32);
    char buf[64];
    for (size_t i = 0; i < n; i++) {
        double py = strata_axis_map(&f->y, t[i]);
        fprintf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
                f->left, f->right, py, py);
        text(out, f->left - 5, py + 3.5, "end", "tick",
             strata_report_value(t[i], ay->unit, ay->binary, buf, sizeof(buf)));
    }
    fprintf(out,
            "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n"
            "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
            f->left, f->left, f->top, f->bottom, f->left, f->right, f->bottom, f->bottom);
    axis_title(out, f, ay, true);
}

static void legend(FILE *out, const strata_chart_t *c, const frame_t *f, bool bars)
{
    double x = f->right + 12, y = f->top + 6;
    for (int i = 0; i < c->nseries; i++, y += 16) {
        const series_t *s = &c->series[i];
        if (bars)
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>\n",
                    x, y - 8, colour(i));
        else
            fprintf(out,
                    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                    "stroke-width=\"%s\"%s/>\n",
                    x, x + 16, y - 3, y - 3, colour(i), s->emph ? "4" : "2", dash(i));
        text(out, x + 20, y, "start", s->emph ? "legend emph" : "legend", s->name);
    }
}

static bool frame_range(const strata_chart_t *c, bool xaxis, double *lo, double *hi)
{
    const strata_axis_scale_t sc = xaxis ? c->ax.scale : c->ay.scale;
    strata_axis_t probe = {.scale = sc};
    double l = INFINITY, h = -INFINITY;
    for (int i = 0; i < c->nseries; i++)
        for (size_t k = 0; k < c->series[i].n; k++) {
            double v = xaxis ? c->series[i].x[k] : c->series[i].y[k];
            if (usable(&probe, v)) l = fmin(l, v), h = fmax(h, v);
        }
    for (int i = 0; i < c->nmarks; i++) {
        double v = xaxis ? c->marks[i].x : c->marks[i].y;
        if (usable(&probe, v)) l = fmin(l, v), h = fmax(h, v);
    }
    if (!(l <= h)) return false;
    *lo = l, *hi = h;
    return true;
}

/* Widest category label, in characters. */
static size_t max_cat(const strata_chart_t *c)
{
    size_t w = 0;
    for (size_t i = 0; i < c->ncat; i++)
        w = strlen(c->cats[i]) > w ? strlen(c->cats[i]) : w;
    return w;
}

static void frame_init(const strata_chart_t *c, int width, int height, frame_t *f)
{
    size_t lw = 0;
    for (int i = 0; i < c->nseries; i++)
        lw = strlen(c->series[i].name) + 2 > lw ? strlen(c->series[i].name) + 2 : lw;
    double legend_w = c->nseries > 1 || (c->nseries == 1 && c->kind != STRATA_CHART_BARS)
                          ? fmin(220, 30 + 6.2 * (double)lw)
                          : 10;
    double bottom = 44;
    if (c->kind != STRATA_CHART_LINE && c->ncat) {
        double band = (width - 80 - legend_w) / (double)c->ncat;
        if (6.5 * (double)max_cat(c) > band) bottom = fmin(150, 30 + 4.8 * (double)max_cat(c));
    }
    f->width = width, f->height = height;
    f->left = 78, f->top = 14, f->right = width - legend_w, f->bottom = height - bottom;
}

/* ==== Line charts ==== */

static void line_x_axis(FILE *out, const frame_t *f, const axis_spec_t *ax)
{
    double t[32];
    size_t n = strata_axis_ticks(&f->x, t, 32);
    char buf[64];
    for (size_t i = 0; i < n; i++) {
        double px = strata_axis_map(&f->x, t[i]);
        fprintf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", px,
                px, f->top, f->bottom);
        text(out, px, f->bottom + 14, "middle", "tick",
             strata_report_value(t[i], ax->unit, ax->binary, buf, sizeof(buf)));
    }
    axis_title(out, f, ax, false);
}

static void line_series(FILE *out, const frame_t *f, const series_t *s, int i)
{
    fprintf(out,
            "<polyline class=\"series s%d%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s "
            "points=\"",
            i, s->emph ? " emph" : "", colour(i), s->emph ? "4" : "2", dash(i));
    for (size_t k = 0; k < s->n; k++)
        if (usable(&f->x, s->x[k]) && usable(&f->y, s->y[k]))
            fprintf(out, "%.1f,%.1f ", strata_axis_map(&f->x, s->x[k]),
                    strata_axis_map(&f->y, s->y[k]));
    fputs("\"/>\n", out);
}

/* Marks: a ring and its label above it (below near the top), moved one
 * line further out while it would overlap a label already placed (about
 * 6 px a character at 10.5 px bold), and anchored towards the plot's
 * middle so it stays inside. */
typedef struct box {
    double x0, x1, y;
} box_t;

static bool overlaps(const box_t *placed, int n, const box_t *b)
{
    for (int i = 0; i < n; i++)
        if (b->x0 < placed[i].x1 && placed[i].x0 < b->x1 && fabs(b->y - placed[i].y) < 12)
            return true;
    return false;
}

static void line_marks(FILE *out, const strata_chart_t *c, const frame_t *f)
{
    box_t placed[MAX_MARKS];
    int np = 0;
    for (int i = 0; i < c->nmarks; i++) {
        const mark_t *m = &c->marks[i];
        if (!usable(&f->x, m->x) || !usable(&f->y, m->y)) continue;
        double px = strata_axis_map(&f->x, m->x), py = strata_axis_map(&f->y, m->y);
        bool right = px > (f->left + f->right) / 2;
        double w = 6.0 * (double)strlen(m->label);
        box_t b = {right ? px - w : px, right ? px : px + w, py - 10};
        double step = -13;
        for (int k = 0; k < 8 && (overlaps(placed, np, &b) || b.y < f->top + 10); k++) {
            b.y += step;
            if (b.y < f->top + 10 && step < 0) b.y = py + 18, step = 13; /* go below */
        }
        placed[np++] = b;
        fprintf(out,
                "<g class=\"mark\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\"/>"
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
                px, py, px, px, py + (b.y < py ? -5 : 5), b.y + (b.y < py ? 3 : -10));
        text(out, px, b.y, right ? "end" : "start", "mark-label", m->label);
        fputs("</g>\n", out);
    }
}

static void line_svg(FILE *out, const strata_chart_t *c, const frame_t *f)
{
    y_axis(out, f, &c->ay);
    line_x_axis(out, f, &c->ax);
    /* emphasised series last, on top of the others */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < c->nseries; i++)
            if (c->series[i].emph == (pass == 1)) line_series(out, f, &c->series[i], i);
    line_marks(out, c, f);
    legend(out, c, f, false);
}

/* ==== Bar charts ==== */

static double bar_total(const strata_chart_t *c, size_t k)
{
    double t = 0;
    for (int i = 0; i < c->nseries; i++)
        if (isfinite(c->series[i].y[k]) && c->series[i].y[k] > 0) t += c->series[i].y[k];
    return t;
}

static void bar_labels(FILE *out, const strata_chart_t *c, const frame_t *f, double band)
{
    bool rotate = 6.5 * (double)max_cat(c) > band;
    for (size_t k = 0; k < c->ncat; k++) {
        double px = f->left + band * ((double)k + 0.5);
        if (!rotate) {
            text(out, px, f->bottom + 14, "middle", "tick", c->cats[k]);
            continue;
        }
        fprintf(out,
                "<text transform=\"translate(%.1f %.1f) rotate(-35)\" text-anchor=\"end\" "
                "class=\"tick\">",
                px + 3, f->bottom + 10);
        strata_html_escape(out, c->cats[k]);
        fputs("</text>\n", out);
    }
}

static void bar_rect(FILE *out, double x, double y0, double y1, double w, int i, const char *tip)
{
    if (!(fabs(y0 - y1) > 0.05)) return;
    fprintf(out,
            "<rect class=\"bar s%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"%s\"><title>",
            i, x, fmin(y0, y1), w, fabs(y0 - y1), colour(i));
    strata_html_escape(out, tip);
    fputs("</title></rect>\n", out);
}

static void bars_svg(FILE *out, const strata_chart_t *c, const frame_t *f)
{
    y_axis(out, f, &c->ay);
    double band = (f->right - f->left) / (double)c->ncat;
    bool stacked = c->kind == STRATA_CHART_STACKED;
    double w = stacked ? band * 0.6 : band * 0.8 / c->nseries;
    char tip[256], v[64];
    for (size_t k = 0; k < c->ncat; k++) {
        double x0 = f->left + band * (double)k + band * (stacked ? 0.2 : 0.1), acc = 0;
        for (int i = 0; i < c->nseries; i++) {
            double y = c->series[i].y[k];
            if (!usable(&f->y, y)) continue;
            snprintf(tip, sizeof(tip), "%s, %s: %s", c->cats[k], c->series[i].name,
                     strata_report_value(y, c->ay.unit, c->ay.binary, v, sizeof(v)));
            if (stacked) {
                if (y <= 0) continue;
                bar_rect(out, x0, strata_axis_map(&f->y, acc), strata_axis_map(&f->y, acc + y), w,
                         i, tip);
                acc += y;
            } else {
                bar_rect(out, x0 + w * i, f->bottom, strata_axis_map(&f->y, y), w, i, tip);
            }
        }
    }
    bar_labels(out, c, f, band);
    legend(out, c, f, true);
}

/* ==== Tables ==== */

static void cell(FILE *out, const char *tag, const char *s)
{
    fprintf(out, "<%s>", tag);
    strata_html_escape(out, s);
    fprintf(out, "</%s>", tag);
}

static void cell_value(FILE *out, double v, const axis_spec_t *a)
{
    char buf[64];
    cell(out, "td", strata_report_value(v, a->unit, a->binary, buf, sizeof(buf)));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Rows: the distinct x values of all series, a column per series. */
static void line_table(FILE *out, const strata_chart_t *c)
{
    size_t total = 0;
    for (int i = 0; i < c->nseries; i++)
        total += c->series[i].n;
    double *xs = util_malloc(total ? total * sizeof(*xs) : 1);
    if (!xs) return;
    size_t n = 0;
    for (int i = 0; i < c->nseries; i++)
        for (size_t k = 0; k < c->series[i].n; k++)
            if (isfinite(c->series[i].x[k])) xs[n++] = c->series[i].x[k];
    qsort(xs, n, sizeof(*xs), cmp_double);
    fputs("<thead><tr>", out);
    cell(out, "th", c->ax.label);
    for (int i = 0; i < c->nseries; i++)
        cell(out, "th", c->series[i].name);
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t r = 0; r < n; r++) {
        if (r > 0 && xs[r] == xs[r - 1]) continue;
        fputs("<tr>", out);
        cell_value(out, xs[r], &c->ax);
        for (int i = 0; i < c->nseries; i++) {
            double y = NAN;
            for (size_t k = 0; k < c->series[i].n; k++)
                if (c->series[i].x[k] == xs[r]) y = c->series[i].y[k];
            cell_value(out, y, &c->ay);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody>\n", out);
    util_free(xs);
}

/* Rows: the categories, a column per series (and the stack's total); a
 * single category reads better transposed, a row per series. */
static void bars_table(FILE *out, const strata_chart_t *c)
{
    bool stacked = c->kind == STRATA_CHART_STACKED;
    if (c->ncat == 1) {
        fputs("<thead><tr><th></th>", out);
        cell(out, "th", c->cats[0]);
        fputs("</tr></thead>\n<tbody>\n", out);
        for (int i = 0; i < c->nseries; i++) {
            fputs("<tr>", out);
            cell(out, "td", c->series[i].name);
            cell_value(out, c->series[i].y[0], &c->ay);
            fputs("</tr>\n", out);
        }
        if (stacked && c->nseries > 1) {
            fputs("<tr><td>total</td>", out);
            cell_value(out, bar_total(c, 0), &c->ay);
            fputs("</tr>\n", out);
        }
        fputs("</tbody>\n", out);
        return;
    }
    fputs("<thead><tr>", out);
    cell(out, "th", c->ax.label && c->ax.label[0] ? c->ax.label : "");
    for (int i = 0; i < c->nseries; i++)
        cell(out, "th", c->series[i].name);
    if (stacked && c->nseries > 1) cell(out, "th", "total");
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t k = 0; k < c->ncat; k++) {
        fputs("<tr>", out);
        cell(out, "td", c->cats[k]);
        for (int i = 0; i < c->nseries; i++)
            cell_value(out, c->series[i].y[k], &c->ay);
        if (stacked && c->nseries > 1) cell_value(out, bar_total(c, k), &c->ay);
        fputs("</tr>\n", out);
    }
    fputs("</tbody>\n", out);
}

static void marks_list(FILE *out, const strata_chart_t *c)
{
    if (!c->nmarks) return;
    fputs("<ul class=\"strata-marks\">\n", out);
    char a[64], b[64];
    for (int i = 0; i < c->nmarks; i++) {
        fputs("<li>", out);
        strata_html_escape(out, c->marks[i].label);
        fprintf(out, " (%s, %s)</li>\n",
                strata_report_value(c->marks[i].x, c->ax.unit, c->ax.binary, a, sizeof(a)),
                strata_report_value(c->marks[i].y, c->ay.unit, c->ay.binary, b, sizeof(b)));
    }
    fputs("</ul>\n", out);
}

/* ==== Rendering ==== */

static const char *const kind_class[] = {"strata-line", "strata-bars", "strata-stacked"};

void report_figure_open(FILE *out, const char *id, const char *cls, const char *title,
                        const char *note)
{
    fprintf(out, "<figure id=\"%s\" class=\"strata-chart %s\">\n<figcaption>", id, cls);
    strata_html_escape(out, title);
    fputs("</figcaption>\n", out);
    if (note && note[0]) {
        fputs("<p class=\"note\">", out);
        strata_html_escape(out, note);
        fputs("</p>\n", out);
    }
}

void report_svg_open(FILE *out, int width, int height, const char *title)
{
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" role=\"img\"><title>",
            width, height, width, height);
    strata_html_escape(out, title);
    fputs("</title>\n", out);
}

static bool has_data(const strata_chart_t *c, frame_t *f)
{
    double lo, hi;
    if (c->kind == STRATA_CHART_LINE) {
        if (!frame_range(c, true, &lo, &hi)) return false;
        strata_axis_nice(c->ax.scale, c->ax.binary, &lo, &hi);
        f->x = (strata_axis_t){c->ax.scale, lo, hi, f->left, f->right, c->ax.binary};
        if (!frame_range(c, false, &lo, &hi)) return false;
    } else {
        if (!c->ncat || !c->nseries) return false;
        lo = INFINITY, hi = -INFINITY;
        strata_axis_t probe = {.scale = c->ay.scale};
        for (size_t k = 0; k < c->ncat; k++)
            for (int i = 0; i < c->nseries; i++) {
                double v = c->kind == STRATA_CHART_STACKED ? bar_total(c, k) : c->series[i].y[k];
                if (usable(&probe, v)) lo = fmin(lo, v), hi = fmax(hi, v);
            }
        if (!(lo <= hi)) return false;
        /* bars on a log axis rise from the axis: start a step below the
         * smallest so it has a height */
        if (c->ay.scale == STRATA_AXIS_LOG) lo /= c->ay.binary ? 2 : 10;
    }
    strata_axis_nice(c->ay.scale, c->ay.binary, &lo, &hi);
    f->y = (strata_axis_t){c->ay.scale, lo, hi, f->bottom, f->top, c->ay.binary};
    return true;
}

strata_status_t strata_chart_render(const strata_chart_t *c, FILE *out, int width, int height)
{
    if (!c || !out || width < 200 || height < 120) return STRATA_ERR_INVALID;
    frame_t f;
    frame_init(c, width, height, &f);
    report_figure_open(out, c->id, kind_class[c->kind], c->title, c->note);
    if (!has_data(c, &f)) {
        fputs("<p class=\"nodata\">no data</p>\n</figure>\n", out);
        return ferror(out) ? STRATA_ERR_IO : STRATA_OK;
    }
    report_svg_open(out, width, height, c->title);
    if (c->kind == STRATA_CHART_LINE)
        line_svg(out, c, &f);
    else
        bars_svg(out, c, &f);
    fputs("</svg>\n", out);
    marks_list(out, c);
    fputs("<table class=\"strata-data\">\n", out);
    if (c->kind == STRATA_CHART_LINE)
        line_table(out, c);
    else
        bars_table(out, c);
    fputs("</table>\n</figure>\n", out);
    return ferror(out) ? STRATA_ERR_IO : STRATA_OK;
}
