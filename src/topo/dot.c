/*
 * dot.c — a topology as Graphviz DOT: one node per device (shape and
 * colour by kind, rank by tier so switches stack above servers), one
 * undirected edge per link labelled kind×mult. Servers become clusters.
 *
 * Meant for graphs a person can look at (up to a few thousand devices);
 * larger ones are written all the same.
 */
#define _POSIX_C_SOURCE 200809L
#include "topo.h"

static const char *kind_style(uint8_t kind)
{
    switch (kind) {
    case STRATA_DEV_ACCEL:
        return "shape=box,style=filled,fillcolor=\"#9fd89f\"";
    case STRATA_DEV_CPU:
        return "shape=box,style=filled,fillcolor=\"#a0c4ff\"";
    case STRATA_DEV_NIC:
        return "shape=ellipse,style=filled,fillcolor=\"#ffd6a5\"";
    case STRATA_DEV_PCIE_SWITCH:
        return "shape=diamond,style=filled,fillcolor=\"#e0e0e0\"";
    case STRATA_DEV_SCALEUP_SWITCH:
        return "shape=hexagon,style=filled,fillcolor=\"#caffbf\"";
    default:
        return "shape=octagon,style=filled,fillcolor=\"#ffadad\"";
    }
}

/* A name as a DOT quoted string (names from imported files may hold
 * quotes or backslashes). */
static void dot_id(const char *s, FILE *out)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void dot_node(const strata_topo_t *t, int32_t v, FILE *out, const char *indent)
{
    fputs(indent, out);
    dot_id(t->dname[v], out);
    fprintf(out, " [%s];\n", kind_style(t->kind[v]));
}

strata_status_t strata_topo_write_dot(const strata_topo_t *t, FILE *out, strata_error_t *err)
{
    fputs("graph ", out);
    dot_id(t->name, out);
    fputs(" {\n  rankdir=BT;\n  node [fontsize=10];\n  edge [fontsize=8];\n", out);
    int32_t v = 0;
    while (v < t->ndev) { /* servers: devices of a group are contiguous in builders */
        int32_t g = t->group[v];
        if (g < 0) {
            dot_node(t, v++, out, "  ");
            continue;
        }
        fprintf(out, "  subgraph \"cluster_s%d\" {\n    label=\"server %d\";\n", (int)g, (int)g);
        while (v < t->ndev && t->group[v] == g)
            dot_node(t, v++, out, "    ");
        fprintf(out, "  }\n");
    }
    for (int tier = 1; tier <= t->max_tier; tier++) {
        fprintf(out, "  { rank=same;");
        for (int32_t u = 0; u < t->ndev; u++)
            if (t->tier[u] == tier) fputc(' ', out), dot_id(t->dname[u], out), fputc(';', out);
        fprintf(out, " }\n");
    }
    for (int32_t l = 0; l < t->nlink; l++) {
        const topo_link_rec_t *k = &t->links[l];
        fputs("  ", out);
        dot_id(t->dname[k->a], out);
        fputs(" -- ", out);
        dot_id(t->dname[k->b], out);
        fprintf(out, " [label=\"%s", k->kind);
        if (k->mult > 1) fprintf(out, "x%d", (int)k->mult);
        fprintf(out, "\"];\n");
    }
    fprintf(out, "}\n");
    return ferror(out) ? strata_error_set(err, STRATA_ERR_IO, "write failed") : STRATA_OK;
}
