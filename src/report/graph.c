/*
 * graph.c — node-link drawings as inline SVG: nodes placed in rows (the
 * caller says which row; a topology puts switches above NICs above GPUs),
 * spread evenly along each row in the order added, edges as straight
 * lines drawn beneath them; a legend of node kinds and a table of the
 * edges beneath the drawing.
 *
 * No layout search: rows are the caller's model of the picture, and even
 * spacing is enough for the trees and rails of a cluster. Narrow nodes
 * lose their text (the table keeps it). Workload: up to a few hundred
 * nodes and a few thousand edges.
 */
#include "report.h"
#include "util.h"

#include <math.h>
#include <string.h>

typedef struct gnode {
    int row;
    char *label, *kind;
} gnode_t;

typedef struct gedge {
    int a, b;
    char *label;
} gedge_t;

struct strata_graph {
    char *id, *title, *note;
    UTIL_VEC(gnode_t) nodes;
    UTIL_VEC(gedge_t) edges;
};

/* Fill colours of the node kinds a cluster has; others take grey. */
static const struct {
    const char *kind, *fill;
} fills[] = {
    {"gpu", "#009E73"},  {"switch", "#0072B2"}, {"upsw", "#56B4E9"}, {"nic", "#E69F00"},
    {"pcie", "#CC79A7"}, {"cpu", "#999999"},    {"leaf", "#0072B2"}, {"spine", "#1f4e79"},
    {"core", "#0b2545"}, {"group", "#D55E00"},
};

static const char *fill_of(const char *kind)
{
    for (size_t i = 0; i < sizeof(fills) / sizeof(fills[0]); i++)
        if (strcmp(kind, fills[i].kind) == 0) return fills[i].fill;
    return "#bbbbbb";
}

strata_status_t strata_graph_create(const char *id, const char *title, strata_graph_t **g_p,
                                    strata_error_t *err)
{
    if (!report_id_ok(id))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "graph id '%s': use letters, digits, '-' and '_'", id ? id : "");
    strata_graph_t *g = util_calloc(1, sizeof(*g));
    if (g) g->id = util_strdup(id), g->title = util_strdup(title ? title : "");
    if (!g || !g->id || !g->title) {
        strata_graph_destroy(g);
        return strata_error_set(err, STRATA_ERR_NOMEM, "graph '%s': out of memory", id);
    }
    *g_p = g;
    return STRATA_OK;
}

void strata_graph_destroy(strata_graph_t *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->nodes.n; i++)
        util_free(g->nodes.v[i].label), util_free(g->nodes.v[i].kind);
    for (size_t i = 0; i < g->edges.n; i++)
        util_free(g->edges.v[i].label);
    UTIL_VEC_FREE(&g->nodes);
    UTIL_VEC_FREE(&g->edges);
    util_free(g->id), util_free(g->title), util_free(g->note);
    util_free(g);
}

void strata_graph_note(strata_graph_t *g, const char *note)
{
    if (!g) return;
    util_free(g->note);
    g->note = note ? util_strdup(note) : NULL;
}

int strata_graph_node(strata_graph_t *g, int row, const char *label, const char *kind)
{
    if (!g || row < 0 || row > 64) return -1;
    gnode_t n = {row, util_strdup(label ? label : ""), util_strdup(kind ? kind : "")};
    if (!n.label || !n.kind || UTIL_VEC_PUSH(&g->nodes, n)) {
        util_free(n.label), util_free(n.kind);
        return -1;
    }
    return (int)g->nodes.n - 1;
}

int strata_graph_edge(strata_graph_t *g, int a, int b, const char *label)
{
    if (!g || a < 0 || b < 0 || (size_t)a >= g->nodes.n || (size_t)b >= g->nodes.n) return -1;
    gedge_t e = {a, b, label ? util_strdup(label) : NULL};
    if ((label && !e.label) || UTIL_VEC_PUSH(&g->edges, e)) {
        util_free(e.label);
        return -1;
    }
    return (int)g->edges.n - 1;
}

/* ==== Layout ==== */

typedef struct place {
    double x, y, w, h;
} place_t;

#define LEGEND_H 22.0

/* Rows evenly down the drawing; nodes evenly along their row. */
static void layout(const strata_graph_t *g, int width, int height, place_t *p)
{
    int rows = 0, count[65] = {0}, seen[65] = {0};
    for (size_t i = 0; i < g->nodes.n; i++) {
        count[g->nodes.v[i].row]++;
        rows = g->nodes.v[i].row + 1 > rows ? g->nodes.v[i].row + 1 : rows;
    }
    double rowh = (height - LEGEND_H - 8) / (rows ? rows : 1);
    for (size_t i = 0; i < g->nodes.n; i++) {
        int r = g->nodes.v[i].row;
        double slot = (width - 16.0) / count[r];
        p[i].w = fmin(110, slot - 4);
        p[i].h = fmin(24, rowh * 0.5);
        p[i].x = 8 + slot * (seen[r]++ + 0.5);
        p[i].y = LEGEND_H + 4 + rowh * (r + 0.5);
    }
}

static void draw_edges(FILE *out, const strata_graph_t *g, const place_t *p)
{
    bool labels = g->edges.n <= 40;
    for (size_t i = 0; i < g->edges.n; i++) {
        const place_t *a = &p[g->edges.v[i].a], *b = &p[g->edges.v[i].b];
        fprintf(out, "<line class=\"edge\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                a->x, a->y, b->x, b->y);
        if (!labels || !g->edges.v[i].label) continue;
        fprintf(out, "<text class=\"edge-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                (a->x + b->x) / 2, (a->y + b->y) / 2 - 2);
        strata_html_escape(out, g->edges.v[i].label);
        fputs("</text>\n", out);
    }
}

static void draw_nodes(FILE *out, const strata_graph_t *g, const place_t *p)
{
    for (size_t i = 0; i < g->nodes.n; i++) {
        const gnode_t *n = &g->nodes.v[i];
        fprintf(out,
                "<g class=\"node node-%s\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                "height=\"%.1f\" rx=\"3\" fill=\"%s\"><title>",
                n->kind, p[i].x - p[i].w / 2, p[i].y - p[i].h / 2, fmax(p[i].w, 1), p[i].h,
                fill_of(n->kind));
        strata_html_escape(out, n->label);
        fputs("</title></rect>", out);
        /* text only where it fits: about 6 px per character at 10 px */
        if (p[i].w >= 6.0 * (double)strlen(n->label) + 4) {
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"node-label\">",
                    p[i].x, p[i].y + 3.5);
            strata_html_escape(out, n->label);
            fputs("</text>", out);
        }
        fputs("</g>\n", out);
    }
}

/* One swatch per distinct kind, in order of first appearance. */
static void draw_legend(FILE *out, const strata_graph_t *g)
{
    double x = 8;
    for (size_t i = 0; i < g->nodes.n; i++) {
        const char *k = g->nodes.v[i].kind;
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(g->nodes.v[j].kind, k) != 0;
        if (!first) continue;
        fprintf(out,
                "<rect x=\"%.1f\" y=\"6\" width=\"14\" height=\"10\" fill=\"%s\"/>"
                "<text x=\"%.1f\" y=\"15\" class=\"legend\">",
                x, fill_of(k), x + 18);
        strata_html_escape(out, k);
        fputs("</text>\n", out);
        x += 30 + 6.5 * (double)strlen(k);
    }
}

static void cell(FILE *out, const char *s)
{
    fputs("<td>", out);
    strata_html_escape(out, s);
    fputs("</td>", out);
}

/* Every edge up to EDGE_ROWS_MAX of them; beyond, one row per (kind,
 * kind, label) with its count, so a drawing of thousands of links keeps a
 * readable table. */
#define EDGE_ROWS_MAX 40

static bool same_class(const strata_graph_t *g, const gedge_t *x, const gedge_t *y)
{
    const char *lx = x->label ? x->label : "", *ly = y->label ? y->label : "";
    return strcmp(g->nodes.v[x->a].kind, g->nodes.v[y->a].kind) == 0 &&
           strcmp(g->nodes.v[x->b].kind, g->nodes.v[y->b].kind) == 0 && strcmp(lx, ly) == 0;
}

static void edge_table(FILE *out, const strata_graph_t *g)
{
    bool all = g->edges.n <= EDGE_ROWS_MAX;
    fprintf(out,
            "<table class=\"strata-data\">\n<thead><tr><th>from</th><th>to</th><th>link</th>%s"
            "</tr></thead>\n<tbody>\n",
            all ? "" : "<th>links</th>");
    for (size_t i = 0; i < g->edges.n; i++) {
        const gedge_t *e = &g->edges.v[i];
        size_t n = 1;
        if (!all) {
            bool first = true;
            for (size_t j = 0; j < i && first; j++)
                first = !same_class(g, &g->edges.v[j], e);
            if (!first) continue;
            for (size_t j = i + 1; j < g->edges.n; j++)
                n += same_class(g, &g->edges.v[j], e);
        }
        fputs("<tr>", out);
        cell(out, all ? g->nodes.v[e->a].label : g->nodes.v[e->a].kind);
        cell(out, all ? g->nodes.v[e->b].label : g->nodes.v[e->b].kind);
        cell(out, e->label ? e->label : "");
        if (!all) fprintf(out, "<td>%zu</td>", n);
        fputs("</tr>\n", out);
    }
    fputs("</tbody>\n</table>\n", out);
}

strata_status_t strata_graph_render(const strata_graph_t *g, FILE *out, int width, int height)
{
    if (!g || !out || width < 200 || height < 120) return STRATA_ERR_INVALID;
    report_figure_open(out, g->id, "strata-graph", g->title, g->note);
    if (!g->nodes.n) {
        fputs("<p class=\"nodata\">no data</p>\n</figure>\n", out);
        return ferror(out) ? STRATA_ERR_IO : STRATA_OK;
    }
    place_t *p = util_calloc(g->nodes.n, sizeof(*p));
    if (!p) return STRATA_ERR_NOMEM;
    layout(g, width, height, p);
    report_svg_open(out, width, height, g->title);
    draw_legend(out, g);
    draw_edges(out, g, p);
    draw_nodes(out, g, p);
    fputs("</svg>\n", out);
    edge_table(out, g);
    fputs("</figure>\n", out);
    util_free(p);
    return ferror(out) ? STRATA_ERR_IO : STRATA_OK;
}
