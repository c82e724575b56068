/*
 * report_test.c — the chart layer's arithmetic (axis mapping, ticks, nice
 * ranges, values with units), escaping, and what a rendered chart, bar
 * chart and node-link drawing contain, every expected value worked out by
 * hand in the comments.
 */
#define _GNU_SOURCE /* open_memstream; mkstemps in test.h */
#include "test.h"
#include "report.h"
#include "util.h"

/* Render into a string (caller frees). */
typedef struct membuf {
    char *buf;
    size_t len;
    FILE *f;
} membuf_t;

static void mb_open(membuf_t *m)
{
    m->buf = NULL, m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    assert_non_null(m->f);
}

static char *mb_close(membuf_t *m)
{
    fclose(m->f);
    return m->buf;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void test_axis_map(void **state)
{
    (void)state;
    /* log 1e3..1e9 over 50..650 px: 100 px per decade */
    strata_axis_t a = {STRATA_AXIS_LOG, 1e3, 1e9, 50, 650, false};
    assert_near(strata_axis_map(&a, 1e3), 50, 1e-9);
    assert_near(strata_axis_map(&a, 1e4), 150, 1e-9);
    assert_near(strata_axis_map(&a, 1e6), 350, 1e-9);
    assert_near(strata_axis_map(&a, 1e9), 650, 1e-9);
    assert_near(strata_axis_map(&a, sqrt(10) * 1e4), 200, 1e-9); /* 10^4.5 */
    assert_near(strata_axis_map(&a, 0), 50, 1e-9);               /* <= 0: the axis start */
    /* a y axis runs upwards: 1e3 at 300 px, 1e9 at 20 px; 1e6 halfway = 160 */
    strata_axis_t y = {STRATA_AXIS_LOG, 1e3, 1e9, 300, 20, false};
    assert_near(strata_axis_map(&y, 1e6), 160, 1e-9);
    /* linear 0..100 over 0..500: 25 -> 125 */
    strata_axis_t l = {STRATA_AXIS_LINEAR, 0, 100, 0, 500, false};
    assert_near(strata_axis_map(&l, 25), 125, 1e-9);
    assert_near(strata_axis_map(&l, 150), 750, 1e-9); /* extrapolates */
}

static void test_axis_ticks(void **state)
{
    (void)state;
    double t[32];
    /* every decade of 1e3..1e9: 7 ticks */
    strata_axis_t a = {STRATA_AXIS_LOG, 1e3, 1e9, 0, 600, false};
    assert_int_equal(strata_axis_ticks(&a, t, 32), 7);
    for (int i = 0; i < 7; i++)
        assert_rel(t[i], pow(10, 3 + i), 1e-12);
    /* 1e-9..1e3 is 13 decades, over 10: every second one, 1e-9, 1e-7 ... 1e3 = 7 */
    strata_axis_t b = {STRATA_AXIS_LOG, 1e-9, 1e3, 0, 600, false};
    assert_int_equal(strata_axis_ticks(&b, t, 32), 7);
    assert_rel(t[1], 1e-7, 1e-12);
    assert_rel(t[6], 1e3, 1e-12);
    /* bytes 2^10..2^33: 24 powers of two, stride 3 -> 2^10, 2^13 ... 2^31 = 8 */
    strata_axis_t c = {STRATA_AXIS_LOG, 1024, 8589934592.0, 0, 600, true};
    assert_int_equal(strata_axis_ticks(&c, t, 32), 8);
    assert_rel(t[0], 1024, 1e-12);
    assert_rel(t[1], 8192, 1e-12);
    assert_rel(t[7], 2147483648.0, 1e-12);
    /* inside one decade, 100..500: 1, 2, 5 x 10^2 */
    strata_axis_t d = {STRATA_AXIS_LOG, 100, 500, 0, 600, false};
    assert_int_equal(strata_axis_ticks(&d, t, 32), 3);
    assert_rel(t[0], 100, 1e-12);
    assert_rel(t[1], 200, 1e-12);
    assert_rel(t[2], 500, 1e-12);
    /* linear 0..100: range/5 = 20 -> step 20: 0 20 40 60 80 100 */
    strata_axis_t e = {STRATA_AXIS_LINEAR, 0, 100, 0, 600, false};
    assert_int_equal(strata_axis_ticks(&e, t, 32), 6);
    assert_near(t[3], 60, 1e-9);
    /* linear 0..7: 7/5 = 1.4 -> step 2: 0 2 4 6 */
    strata_axis_t f = {STRATA_AXIS_LINEAR, 0, 7, 0, 600, false};
    assert_int_equal(strata_axis_ticks(&f, t, 32), 4);
    assert_near(t[3], 6, 1e-9);
}

static void test_axis_nice(void **state)
{
    (void)state;
    double lo = 3e3, hi = 2e8;
    strata_axis_nice(STRATA_AXIS_LOG, false, &lo, &hi); /* to whole decades */
    assert_rel(lo, 1e3, 1e-12);
    assert_rel(hi, 1e9, 1e-12);
    lo = 1500, hi = 3e9; /* 2^10 <= 1500, 3e9 <= 2^32 */
    strata_axis_nice(STRATA_AXIS_LOG, true, &lo, &hi);
    assert_rel(lo, 1024, 1e-12);
    assert_rel(hi, 4294967296.0, 1e-12);
    lo = 0.5, hi = 7.3; /* from 0; step of 0..7.3 is 2 -> 0..8 */
    strata_axis_nice(STRATA_AXIS_LINEAR, false, &lo, &hi);
    assert_near(lo, 0, 1e-12);
    assert_near(hi, 8, 1e-12);
}

static void test_values(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(strata_report_value(1024, "B", true, b, 64), "1 KiB");
    assert_string_equal(strata_report_value(1.5e9, "B", true, b, 64), "1.4 GiB"); /* 1.397 */
    assert_string_equal(strata_report_value(4e11, "B/s", false, b, 64), "400 GB/s");
    assert_string_equal(strata_report_value(2.5e-6, "s", false, b, 64), "2.5 us");
    assert_string_equal(strata_report_value(999.7, "", false, b, 64), "1 k"); /* not "1e+03" */
    assert_string_equal(strata_report_value(12.5, "%", false, b, 64), "12.5%");
    assert_string_equal(strata_report_value(0, "s", false, b, 64), "0 s");
    assert_string_equal(strata_report_value(3, "", false, b, 64), "3");
    assert_string_equal(strata_report_value(65536, "", false, b, 64), "65536"); /* a count */
    assert_string_equal(strata_report_value(NAN, "s", false, b, 64), "-");
    /* the text formats: 3-4 digits of GB/s; a time's prefix keeps 1..999;
     * sizes in the largest binary unit holding at least 1 */
    assert_string_equal(strata_fmt_gbs(56e9, b, 64), "56.0");
    assert_string_equal(strata_fmt_gbs(4.5e9, b, 64), "4.50");
    assert_string_equal(strata_fmt_time(2.1e-7, b, 64), "210 ns");
    assert_string_equal(strata_fmt_time(1.5e-6, b, 64), "1.5 us");
    assert_string_equal(strata_fmt_time(8e-3, b, 64), "8 ms");
    assert_string_equal(strata_fmt_time(2.4, b, 64), "2.4 s");
    assert_string_equal(strata_fmt_time(0, b, 64), "-");
    assert_string_equal(strata_fmt_size(8, b, 64), "8 B");
    assert_string_equal(strata_fmt_size(1024, b, 64), "1 KiB");
    assert_string_equal(strata_fmt_size(1500, b, 64), "1.46 KiB"); /* 1500/1024 = 1.4648 */
    assert_string_equal(strata_fmt_size(1.5 * 1048576, b, 64), "1.5 MiB");
    assert_string_equal(strata_fmt_size(8589934592.0, b, 64), "8 GiB");
    assert_string_equal(strata_fmt_size(1125899906842624.0, b, 64), "1 PiB"); /* 2^50 */
    assert_string_equal(strata_fmt_size(1023, b, 64), "1023 B");
    assert_string_equal(strata_fmt_size(998.7 * 1024, b, 64), "999 KiB");
    assert_string_equal(strata_fmt_size(-1, b, 64), "-");
}

static void test_escape(void **state)
{
    (void)state;
    membuf_t m;
    mb_open(&m);
    strata_html_escape(m.f, "<a href=\"x\">&'\x01");
    char *s = mb_close(&m);
    assert_string_equal(s, "&lt;a href=&quot;x&quot;&gt;&amp;&#39; ");
    free(s);
}

static void test_line_chart(void **state)
{
    (void)state;
    strata_chart_t *c = NULL;
    strata_error_t err;
    assert_int_equal(strata_chart_create(STRATA_CHART_LINE, "bad id", "t", &c, &err),
                     STRATA_ERR_INVALID);
    assert_int_equal(strata_chart_create(STRATA_CHART_LINE, "bw", "busbw <AR>", &c, &err),
                     STRATA_OK);
    strata_chart_x(c, STRATA_AXIS_LOG, "size", "B", false);
    strata_chart_y(c, STRATA_AXIS_LOG, "busbw", "B/s", false);
    double x[] = {1e3, 1e6, 1e9}, y1[] = {1e9, 1e10, 1e11}, y2[] = {2e9, NAN, 5e10};
    assert_int_equal(strata_chart_line(c, "ring", 3, x, y1), 0);
    assert_int_equal(strata_chart_line(c, "tree", 3, x, y2), 1);
    strata_chart_emphasise(c, 0);
    assert_int_equal(strata_chart_mark(c, 1e6, 1e10, "ring & tree"), STRATA_OK);
    membuf_t m;
    mb_open(&m);
    assert_int_equal(strata_chart_render(c, m.f, 700, 300), STRATA_OK);
    char *s = mb_close(&m);
    assert_non_null(strstr(s, "<figure id=\"bw\" class=\"strata-chart strata-line\">"));
    assert_non_null(strstr(s, "<figcaption>busbw &lt;AR&gt;</figcaption>"));
    assert_int_equal(count(s, "<polyline"), 2);
    assert_int_equal(count(s, "class=\"series s0 emph\""), 1);
    /* Layout by hand: legend width = 30 + 6.2 x (strlen("ring") + 9) = 110.6,
     * so the plot runs x 78 .. 700 - 67.2 = 632.8 and y 256 (300 - 44) .. 14.
     * x 1e3..1e9 (already whole decades): 1e6 at (78 + 632.8) / 2 = 355.4;
     * y 1e9..1e11: 1e10 at (256 + 14) / 2 = 135. */
    assert_non_null(strstr(s, "78.0,256.0 355.4,135.0 632.8,14.0"));
    /* tree's NaN point is left out of its curve: two points */
    assert_non_null(strstr(s, "points=\"78.0,219.6 632.8,50.4 \""));
    assert_non_null(strstr(s, "ring &amp; tree"));
    /* table: header, then a row per x; tree's missing point is "-" */
    assert_non_null(strstr(s, "<th>size</th><th>ring</th><th>tree</th>"));
    assert_non_null(strstr(s, "<tr><td>1 MB</td><td>10 GB/s</td><td>-</td></tr>"));
    assert_int_equal(count(s, "<tr><td>"), 3);
    free(s);
    strata_chart_destroy(c);
    strata_chart_destroy(NULL);
}

static void test_bars(void **state)
{
    (void)state;
    strata_chart_t *c = NULL;
    assert_int_equal(strata_chart_create(STRATA_CHART_STACKED, "step", "step", &c, NULL), 0);
    strata_chart_y(c, STRATA_AXIS_LINEAR, "time", "s", false);
    const char *cats[] = {"8 GPUs", "16 GPUs"};
    assert_int_equal(strata_chart_categories(c, 2, cats), STRATA_OK);
    double comp[] = {1.0, 1.0}, comm[] = {0.25, 3.0};
    assert_int_equal(strata_chart_bars(c, "compute", comp), 0);
    assert_int_equal(strata_chart_bars(c, "communication", comm), 1);
    membuf_t m;
    mb_open(&m);
    assert_int_equal(strata_chart_render(c, m.f, 600, 300), STRATA_OK);
    char *s = mb_close(&m);
    assert_non_null(strstr(s, "class=\"strata-chart strata-stacked\""));
    assert_int_equal(count(s, "<rect class=\"bar"), 4);
    /* totals 1.25 and 4 s; the y axis 0..4 (step 1: 0 1 2 3 4, five grid lines) */
    assert_non_null(strstr(s, "<tr><td>16 GPUs</td><td>1 s</td><td>3 s</td><td>4 s</td></tr>"));
    assert_non_null(strstr(s, "<tr><td>8 GPUs</td><td>1 s</td><td>250 ms</td><td>1.25 s</td>"));
    assert_int_equal(count(s, "<line class=\"grid\""), 5);
    free(s);
    strata_chart_destroy(c);
}

static void test_graph(void **state)
{
    (void)state;
    strata_graph_t *g = NULL;
    assert_int_equal(strata_graph_create("topo", "a <tree>", &g, NULL), STRATA_OK);
    int sw = strata_graph_node(g, 0, "leaf0", "leaf");
    int a = strata_graph_node(g, 1, "gpu0", "gpu"), b = strata_graph_node(g, 1, "gpu1", "gpu");
    assert_int_equal(strata_graph_edge(g, sw, a, "ib-ndr"), 0);
    assert_int_equal(strata_graph_edge(g, sw, b, NULL), 1);
    assert_int_equal(strata_graph_edge(g, sw, 7, NULL), -1); /* no node 7 */
    membuf_t m;
    mb_open(&m);
    assert_int_equal(strata_graph_render(g, m.f, 400, 200), STRATA_OK);
    char *s = mb_close(&m);
    assert_non_null(strstr(s, "class=\"strata-chart strata-graph\""));
    assert_int_equal(count(s, "<line class=\"edge\""), 2);
    assert_int_equal(count(s, "<g class=\"node node-gpu\">"), 2);
    /* leaf0 alone in row 0: x = 8 + (400 - 16) / 2 = 200 */
    assert_non_null(strstr(s, "<text x=\"200.0\""));
    assert_non_null(strstr(s, "<tr><td>leaf0</td><td>gpu0</td><td>ib-ndr</td></tr>"));
    free(s);
    strata_graph_destroy(g);
}

static void test_page_and_oom(void **state)
{
    (void)state;
    membuf_t m;
    mb_open(&m);
    strata_html_begin(m.f, "r & d");
    strata_html_end(m.f);
    char *s = mb_close(&m);
    assert_non_null(strstr(s, "<title>r &amp; d</title>"));
    assert_null(strstr(s, "<script"));
    assert_null(strstr(s, "http"));
    free(s);
    strata_chart_t *c = NULL;
    util_alloc_fail_after(0);
    assert_int_equal(strata_chart_create(STRATA_CHART_LINE, "x", "t", &c, NULL), STRATA_ERR_NOMEM);
    util_alloc_fail_after(-1);
    assert_null(c);
}

/* The JSON writer: nesting, commas, escapes, null for non-finite numbers,
 * the document's schema_version first; read back by jansson. */
static void test_json_writer(void **state)
{
    (void)state;
    membuf_t m;
    mb_open(&m);
    strata_json_t j;
    strata_json_document(&j, m.f);
    strata_json_str(&j, "name", "a \"q\"\n");
    strata_json_num(&j, "time_s", 2.5e-6);
    strata_json_num(&j, "bad", NAN);
    strata_json_num(&j, "size_B", 1073741824.0); /* whole: every digit, not 1.07374e+09 */
    strata_json_num(&j, "third", 1.0 / 3);       /* 6 significant digits */
    strata_json_open(&j, "list", '[');
    strata_json_int(&j, NULL, 3);
    strata_json_bool(&j, NULL, true);
    strata_json_close(&j, '[');
    strata_json_open(&j, "empty", '{');
    strata_json_close(&j, '{');
    strata_json_close(&j, '{');
    char *text = mb_close(&m);
    assert_non_null(strstr(text, "{\n  \"schema_version\": 1,\n"));
    json_error_t e;
    json_t *root = json_loads(text, 0, &e);
    assert_non_null(root);
    assert_int_equal(json_integer_value(json_object_get(root, "schema_version")),
                     STRATA_JSON_SCHEMA_VERSION);
    assert_string_equal(json_string_value(json_object_get(root, "name")), "a \"q\"\n");
    assert_near(json_number_value(json_object_get(root, "time_s")), 2.5e-6, 1e-18);
    assert_true(json_is_null(json_object_get(root, "bad")));
    assert_non_null(strstr(text, "\"size_B\": 1073741824,"));
    assert_non_null(strstr(text, "\"third\": 0.333333,"));
    assert_int_equal(json_array_size(json_object_get(root, "list")), 2);
    assert_int_equal(json_object_size(json_object_get(root, "empty")), 0);
    json_decref(root);
    free(text);
}

/* The verdict's JSON renders the verdict's own fields: torus:4x4,bw=50
 * has one link row of 200 GB/s per GPU (4 links x 50 GB/s, by hand), and
 * the bottleneck's busbw is the verdict's best algorithm's (to the
 * writer's 6 digits). Text sections print what the verdict holds. */
static void test_verdict_json(void **state)
{
    (void)state;
    strata_link_catalog_t *cat = NULL;
    strata_topo_t *t = NULL;
    strata_verdict_t *v = NULL;
    assert_int_equal(strata_link_catalog_load(NULL, &cat, NULL), STRATA_OK);
    assert_int_equal(strata_topo_load_spec("torus:4x4,bw=50", cat, &t, NULL), STRATA_OK);
    strata_verdict_opts_t o = {.sections = (1u << STRATA_VERDICT_LINKS) |
                                           (1u << STRATA_VERDICT_BOTTLENECK)};
    assert_int_equal(strata_verdict_create(t, cat, &o, &v, NULL), STRATA_OK);
    membuf_t m;
    mb_open(&m);
    assert_int_equal(strata_verdict_print_json(v, "torus:4x4,bw=50", m.f), STRATA_OK);
    char *text = mb_close(&m);
    json_error_t e;
    json_t *root = json_loads(text, 0, &e);
    assert_non_null(root);
    assert_int_equal(json_integer_value(json_object_get(root, "schema_version")), 1);
    assert_int_equal(json_object_size(root), 4); /* schema_version, cluster, links, bottleneck */
    json_t *row = json_array_get(json_object_get(json_object_get(root, "links"), "rows"), 0);
    assert_rel(json_number_value(json_object_get(row, "per_gpu_Bps")), 200e9, 1e-6);
    json_t *b = json_object_get(root, "bottleneck");
    assert_rel(json_number_value(json_object_get(b, "busbw_Bps")), v->best.busbw, 1e-5);
    assert_string_equal(json_string_value(json_object_get(b, "layer")), v->layer);
    json_decref(root);
    free(text);
    mb_open(&m);
    strata_verdict_print_section(v, STRATA_VERDICT_LINKS, "torus:4x4,bw=50", m.f);
    strata_verdict_print_section(v, STRATA_VERDICT_TOPOLOGY, "torus:4x4,bw=50",
                                 m.f); /* not filled */
    text = mb_close(&m);
    assert_non_null(
        strstr(text, "  scale-up   custom      gpu-gpu               50.0         4     200.0"));
    assert_null(strstr(text, "diameter"));
    free(text);
    strata_verdict_destroy(v);
    strata_topo_destroy(t);
    strata_link_catalog_destroy(cat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axis_map),     cmocka_unit_test(test_axis_ticks),
        cmocka_unit_test(test_axis_nice),    cmocka_unit_test(test_values),
        cmocka_unit_test(test_escape),       cmocka_unit_test(test_line_chart),
        cmocka_unit_test(test_bars),         cmocka_unit_test(test_graph),
        cmocka_unit_test(test_page_and_oom), cmocka_unit_test(test_json_writer),
        cmocka_unit_test(test_verdict_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
