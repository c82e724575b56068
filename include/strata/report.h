/*
 * strata/report.h — renderers: inline SVG charts and self-contained HTML.
 *
 * The report module formats numbers someone else computed; nothing is
 * modelled here. A chart is built by adding data to a handle and rendered
 * in one call as an HTML <figure>: a title, an inline <svg> with axes,
 * tick labels carrying their unit, a legend, marked points, and beneath
 * it a <table> of every number drawn (so the figures are readable without
 * the picture, by a screen reader, or copied out). All text is escaped for
 * XML/HTML. A page (strata_html_begin/_end) carries its own CSS and no
 * scripts, fonts or anything fetched, so it reads offline and prints.
 *
 * Kinds of chart:
 *   - LINE: series of (x, y) points on linear or log axes; points can be
 *     marked and labelled (a chosen algorithm, a crossover);
 *   - BARS: named categories on x, one bar per series in each (grouped);
 *   - STACKED: the same, the series stacked in each category;
 *   - a node-link drawing (strata_graph_t): nodes in rows, edges between.
 * Every chart and graph gets the id the caller gives it and the class
 * "strata-chart" plus "strata-<kind>", so tests and style sheets find it.
 *
 * Handles are not thread-safe; distinct handles may be used from distinct
 * threads. Every function accepting a handle accepts NULL and does nothing
 * (destroy) or fails with STRATA_ERR_INVALID.
 */
#ifndef STRATA_REPORT_H
#define STRATA_REPORT_H

#include "strata/common.h"
#include "strata/plan.h"
#include "strata/verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Text ==== */

/* Write s to out with & < > " ' escaped for XML and HTML text and
 * attribute values; bytes below 0x20 other than \t and \n become spaces
 * (they are not allowed in XML 1.0). s NULL writes nothing. */
STRATA_API void strata_html_escape(FILE *out, const char *s);

/* A value with an SI prefix (k M G T P; m u n p below 1) or, binary true,
 * a 1024-based one (Ki Mi Gi Ti Pi; for bytes), and unit appended:
 * "1 KiB", "400 GB/s", "2.5 us", "12 %"-style ("%" takes no prefix).
 * Three significant digits, trailing zeros dropped; a whole number
 * without a unit below 10^7 (a count) prints every digit. Returns buf. */
STRATA_API const char *strata_report_value(double v, const char *unit, bool binary, char *buf,
                                           size_t len);

/* The formats of strata's text output, one owner for every command:
 *   strata_fmt_gbs: GB/s (1e9 B/s, nccl-tests' unit) without the unit, 3-4
 *     significant digits ("56.0", "4.50", "0.125");
 *   strata_fmt_time: seconds with the prefix that keeps 1 to 999 of them,
 *     3 significant digits ("210 ns", "1.5 us", "8 ms", "2.4 s"; "-" for 0,
 *     less or NaN);
 *   strata_fmt_size: bytes in the largest binary unit (B, KiB, MiB ... EiB)
 *     that keeps at least 1, 3 significant digits, whole from 100 up ("8 B",
 *     "1 KiB", "1.5 MiB", "1.46 KiB" for 1500, "975 KiB", "1023 B"; powers
 *     of two are exact); "-" for negatives and NaN.
 * Return buf. */
STRATA_API const char *strata_fmt_gbs(double Bps, char *buf, size_t len);
STRATA_API const char *strata_fmt_time(double s, char *buf, size_t len);
STRATA_API const char *strata_fmt_size(double bytes, char *buf, size_t len);

/* ==== JSON ==== */

/* A streaming JSON writer: one value per line, indented, commas handled,
 * strings escaped, non-finite numbers as null, whole numbers below 2^53
 * exactly and others with 6 significant digits (j->digits to change). A value type (no allocation);
 * nesting deeper than 15 levels is written flat (never needed). */
typedef struct strata_json {
    FILE *out;
    int digits; /* significant digits of numbers (init: 6; 17 round-trips a double) */
    int depth;
    bool first[16]; /* per open level: nothing written yet */
} strata_json_t;

/* A writer on out with nothing open. */
STRATA_API void strata_json_init(strata_json_t *j, FILE *out);
/* A writer on out with the document's object open and its first member,
 * "schema_version", written. Close with strata_json_close(j, '{'). */
STRATA_API void strata_json_document(strata_json_t *j, FILE *out);
/* Open an object ('{') or array ('['); key NULL inside arrays and at the
 * top; close it, naming either bracket of the pair ('[' or ']' closes an
 * array, anything else an object; a newline follows the outermost close). */
STRATA_API void strata_json_open(strata_json_t *j, const char *key, char bracket);
STRATA_API void strata_json_close(strata_json_t *j, char bracket);
/* Members (key NULL inside arrays). s NULL writes "". */
STRATA_API void strata_json_num(strata_json_t *j, const char *key, double v);
STRATA_API void strata_json_int(strata_json_t *j, const char *key, long v);
STRATA_API void strata_json_str(strata_json_t *j, const char *key, const char *s);
STRATA_API void strata_json_bool(strata_json_t *j, const char *key, bool v);
STRATA_API void strata_json_null(strata_json_t *j, const char *key);
/* s as a JSON string literal (quotes and escapes) to out; NULL as "". */
STRATA_API void strata_json_string(FILE *out, const char *s);

/* ==== Axes ==== */

typedef enum { STRATA_AXIS_LINEAR = 0, STRATA_AXIS_LOG = 1 } strata_axis_scale_t;

/* A data range mapped onto a pixel range. lo < hi; log axes need lo > 0. */
typedef struct strata_axis {
    strata_axis_scale_t scale;
    double lo, hi;       /* data values at px_lo and px_hi */
    double px_lo, px_hi; /* pixel positions (px_hi < px_lo for a y axis) */
    bool binary;         /* log axis of bytes: ticks at powers of 2^10 */
} strata_axis_t;

/* Pixel position of v on a: linear interpolation, or of log10(v) on a log
 * axis; values outside [lo, hi] extrapolate; v <= 0 on a log axis maps to
 * px_lo. */
STRATA_API double strata_axis_map(const strata_axis_t *a, double v);

/* Tick values of a, ascending, at most max into ticks; returns how many.
 * Linear: 1, 2 or 5 x 10^k steps, 4 to 10 ticks inside [lo, hi]. Log:
 * every power of ten inside the range (every 2^10 when binary), thinned to
 * every second, third ... when there would be more than 10. */
STRATA_API size_t strata_axis_ticks(const strata_axis_t *a, double *ticks, size_t max);

/* Widen [*lo, *hi] to a range that reads well: log axes to whole powers of
 * ten (2^10 when binary); linear to multiples of the tick step, starting
 * at 0 when all values are positive. */
STRATA_API void strata_axis_nice(strata_axis_scale_t scale, bool binary, double *lo, double *hi);

/* ==== Charts ==== */

typedef enum {
    STRATA_CHART_LINE = 0,
    STRATA_CHART_BARS = 1,
    STRATA_CHART_STACKED = 2,
} strata_chart_kind_t;

typedef struct strata_chart strata_chart_t;

/* A chart of kind with the HTML id `id` (letters, digits, - and _; else
 * INVALID) and a title. Copies both. Free with strata_chart_destroy. */
STRATA_API strata_status_t strata_chart_create(strata_chart_kind_t kind, const char *id,
                                               const char *title, strata_chart_t **chart_p,
                                               strata_error_t *err);
STRATA_API void strata_chart_destroy(strata_chart_t *chart);

/* Axis labels and units (copied). unit is the unit of the values, to which
 * tick labels add a prefix ("B", "B/s", "s", "W", "%"; "" for counts);
 * binary: 1024-based ticks and prefixes (sizes in bytes). The x axis of
 * BARS and STACKED is the categories (scale and unit unused). */
STRATA_API void strata_chart_x(strata_chart_t *c, strata_axis_scale_t scale, const char *label,
                               const char *unit, bool binary);
STRATA_API void strata_chart_y(strata_chart_t *c, strata_axis_scale_t scale, const char *label,
                               const char *unit, bool binary);
/* A sentence printed under the title (copied). */
STRATA_API void strata_chart_note(strata_chart_t *c, const char *note);

/* LINE: a series of n points (copied); non-finite points, and points <= 0
 * on a log axis, are left out of the curve (and shown as "-" in the
 * table). Returns the series index, or -1 on bad arguments or no memory. */
STRATA_API int strata_chart_line(strata_chart_t *c, const char *name, size_t n, const double *xs,
                                 const double *ys);
/* Emphasise series i (drawn thicker, "(chosen)" style legend). */
STRATA_API void strata_chart_emphasise(strata_chart_t *c, int series);
/* Mark the point (x, y) with a dot and a label (copied). */
STRATA_API strata_status_t strata_chart_mark(strata_chart_t *c, double x, double y,
                                             const char *label);

/* BARS / STACKED: the categories along x (copied; set once, before any
 * series), then series of one value per category. */
STRATA_API strata_status_t strata_chart_categories(strata_chart_t *c, size_t n,
                                                   const char *const *names);
STRATA_API int strata_chart_bars(strata_chart_t *c, const char *name, const double *values);

/* Write the chart as one <figure id="ID" class="strata-chart strata-KIND">
 * holding <figcaption>, an <svg> of width x height pixels and its
 * <table class="strata-data">. An empty chart (no points) renders its title
 * and "no data". Returns STRATA_OK, or STRATA_ERR_IO when out reports a
 * write error. */
STRATA_API strata_status_t strata_chart_render(const strata_chart_t *c, FILE *out, int width,
                                               int height);

/* ==== Node-link drawings ==== */

typedef struct strata_graph strata_graph_t;

STRATA_API strata_status_t strata_graph_create(const char *id, const char *title,
                                               strata_graph_t **g_p, strata_error_t *err);
STRATA_API void strata_graph_destroy(strata_graph_t *g);
STRATA_API void strata_graph_note(strata_graph_t *g, const char *note);
/* A node in row `row` (0 = top); nodes of a row are spread evenly in the
 * order added. kind names its colour class ("gpu", "switch", "nic", ...,
 * the CSS class "node-KIND"). Returns the node index, or -1. */
STRATA_API int strata_graph_node(strata_graph_t *g, int row, const char *label, const char *kind);
/* An edge between nodes a and b; label may be NULL (copied). Returns its
 * index, or -1 when a or b is not a node. */
STRATA_API int strata_graph_edge(strata_graph_t *g, int a, int b, const char *label);
/* Write as <figure id="ID" class="strata-chart strata-graph"> with the
 * drawing and a table of the edges. */
STRATA_API strata_status_t strata_graph_render(const strata_graph_t *g, FILE *out, int width,
                                               int height);

/* ==== The verdict (strata/verdict.h) ==== */

/* One section of the verdict as text, as `strata report` prints it under
 * its heading; spec names the cluster in the text (and in the commands it
 * suggests). A section the verdict did not fill prints nothing. */
STRATA_API void strata_verdict_print_section(const strata_verdict_t *v,
                                             strata_verdict_section_t section, const char *spec,
                                             FILE *out);

/* One section's figures as JSON members of j's open object (the keys of
 * docs/formats.md); nothing for a section the verdict did not fill. */
STRATA_API void strata_verdict_json_section(const strata_verdict_t *v,
                                            strata_verdict_section_t section, strata_json_t *j);
/* The "cluster" member (spec, name, counts of GPUs, servers, devices and
 * links) into j's open object. */
STRATA_API void strata_verdict_json_cluster(const strata_verdict_t *v, const char *spec,
                                            strata_json_t *j);
/* The "cluster" member and every filled section as a member named by
 * strata_verdict_section_name, into j's open object. */
STRATA_API void strata_verdict_json_members(const strata_verdict_t *v, const char *spec,
                                            strata_json_t *j);
/* The whole verdict as one JSON document (schema_version, then
 * strata_verdict_json_members) to out; STRATA_ERR_IO on a write error. */
STRATA_API strata_status_t strata_verdict_print_json(const strata_verdict_t *v, const char *spec,
                                                     FILE *out);

/* The bottleneck summary as text, as `strata report` prints it: the best
 * algorithm, the flat ring (model and simulated), the bounding layer and
 * the reasoning. spec names the cluster in the text. */
STRATA_API void strata_verdict_print_text(const strata_verdict_t *v, const char *spec, FILE *out);

/* The collective table as text, as `strata report`'s coll section prints
 * it: the model's machine, the selected algorithm and busbw of AllReduce,
 * AllGather and AlltoAll from 1 KiB to 2 GiB, and where the choice changes. */
STRATA_API void strata_verdict_print_coll_text(const strata_verdict_t *v, const char *spec,
                                               FILE *out);

/* The verdict's charts as HTML sections (headings, figures with their
 * tables): the tier staircase, AllReduce bus bandwidth of every algorithm
 * against size, the simulated links' utilisation and where the ring's time
 * went, a drawing of the topology (every device up to 96 of them, else one
 * node per kind and tier), and with a plan its step-time stack and memory. */
STRATA_API strata_status_t strata_verdict_print_html(const strata_verdict_t *v, const char *spec,
                                                     FILE *out);

/* The communication wall (strata/plan.h strata_wall_run) as HTML charts:
 * the step-time stack against GPUs (doubling, so evenly spaced = log),
 * the exposed-communication share with its threshold, and fabric watts
 * per GPU. */
STRATA_API strata_status_t strata_wall_print_html(const strata_wall_t *w, const char *model,
                                                  const char *family, double share, FILE *out);

/* ==== Pages ==== */

/* Start a self-contained HTML5 page titled title: doctype, <head> with the
 * charset, the inline style sheet charts use (screen and print) and the
 * title, then <body> and an <h1>. */
STRATA_API void strata_html_begin(FILE *out, const char *title);
/* Close the body and the page. */
STRATA_API void strata_html_end(FILE *out);
/* <h2 id="ID">text</h2> (id may be NULL), <p>text</p>, <pre>text</pre>;
 * text escaped. */
STRATA_API void strata_html_heading(FILE *out, const char *id, const char *text);
STRATA_API void strata_html_para(FILE *out, const char *text);
STRATA_API void strata_html_pre(FILE *out, const char *text);

#ifdef __cplusplus
}
#endif

#endif
