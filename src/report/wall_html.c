/*
 * wall_html.c — the communication wall (strata_wall_run) as charts: the
 * step-time stack at every GPU count of the sweep (the counts double, so
 * even spacing is a log axis), the exposed-communication share against
 * GPUs with the wall's threshold, and the scale-out fabric's watts per GPU.
 * Formatting only.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>

#define W 900

static strata_status_t wall_stack(const strata_wall_t *w, FILE *out)
{
    static const char *const dims[] = {"TP", "PP", "DP", "EP", "CP"};
    char names[STRATA_WALL_MAX_POINTS][16];
    const char *cats[STRATA_WALL_MAX_POINTS];
    int n = 0;
    for (int i = 0; i < w->npoints; i++)
        if (w->points[i].ok) {
            snprintf(names[n], sizeof(names[n]), "%d", w->points[i].gpus);
            cats[n] = names[n], n++;
        }
    strata_chart_t *c = NULL;
    strata_status_t st = strata_chart_create(STRATA_CHART_STACKED, "wall-step",
                                             "Step time against GPUs: compute, bubble and exposed "
                                             "communication",
                                             &c, NULL);
    if (st) return st;
    strata_chart_x(c, STRATA_AXIS_LINEAR, "GPUs (doubling: a log axis)", "", false);
    strata_chart_y(c, STRATA_AXIS_LINEAR, "time per step", "s", false);
    if (n) {
        strata_chart_categories(c, (size_t)n, cats);
        double y[STRATA_WALL_MAX_POINTS];
        for (int part = -2; part < 5; part++) {
            int k = 0;
            bool any = false;
            for (int i = 0; i < w->npoints; i++) {
                const strata_plan_result_t *r = &w->points[i].r;
                if (!w->points[i].ok) continue;
                y[k] = part == -2 ? r->compute : part == -1 ? r->bubble : r->exposed[part];
                any |= y[k++] > 0;
            }
            char name[48];
            snprintf(name, sizeof(name), "%s%s%s",
                     part == -2   ? "compute"
                     : part == -1 ? "bubble"
                                  : "exposed ",
                     part >= 0 ? dims[part] : "", part >= 0 ? " comm" : "");
            if (any || part < 0) strata_chart_bars(c, name, y);
        }
    }
    st = strata_chart_render(c, out, W, 380);
    strata_chart_destroy(c);
    return st;
}

static strata_status_t wall_line(const strata_wall_t *w, FILE *out, bool watts, double share)
{
    double x[STRATA_WALL_MAX_POINTS], y[STRATA_WALL_MAX_POINTS], t[STRATA_WALL_MAX_POINTS];
    int n = 0;
    for (int i = 0; i < w->npoints; i++) {
        const strata_wall_point_t *p = &w->points[i];
        if (!p->ok) continue;
        x[n] = p->gpus;
        y[n] =
            watts ? (p->fabric_w_per_gpu > 0 ? p->fabric_w_per_gpu : NAN) : p->exposed_share * 100;
        t[n++] = share * 100;
    }
    strata_chart_t *c = NULL;
    strata_status_t st = strata_chart_create(
        STRATA_CHART_LINE, watts ? "wall-fabric" : "wall-share",
        watts ? "Scale-out fabric power per GPU" : "Exposed communication, share of the step", &c,
        NULL);
    if (st) return st;
    strata_chart_x(c, STRATA_AXIS_LOG, "GPUs", "", false);
    strata_chart_y(c, STRATA_AXIS_LINEAR, watts ? "power per GPU" : "share of the step",
                   watts ? "W" : "%", false);
    strata_chart_emphasise(
        c, strata_chart_line(c, watts ? "fabric W/GPU" : "exposed share", (size_t)n, x, y));
    if (!watts) {
        strata_chart_line(c, "wall threshold", (size_t)n, x, t);
        if (w->wall_index >= 0) {
            const strata_wall_point_t *p = &w->points[w->wall_index];
            char lab[64];
            snprintf(lab, sizeof(lab), "the wall: %d GPUs", p->gpus);
            strata_chart_mark(c, p->gpus, p->exposed_share * 100, lab);
        }
    }
    st = strata_chart_render(c, out, W / 2 - 10, 320);
    strata_chart_destroy(c);
    return st;
}

strata_status_t strata_wall_print_html(const strata_wall_t *w, const char *model,
                                       const char *family, double share, FILE *out)
{
    if (!w || !out) return STRATA_ERR_INVALID;
    char s[256];
    strata_html_heading(out, "wall", "The communication wall");
    if (w->wall_index >= 0)
        snprintf(s, sizeof(s),
                 "%s on %s: exposed communication passes %.0f %% of the step at %d "
                 "GPUs (the planner's best plan at every count).",
                 model, family, share * 100, w->points[w->wall_index].gpus);
    else
        snprintf(s, sizeof(s),
                 "%s on %s: no wall up to %d GPUs (exposed communication stays "
                 "under %.0f %% of the step).",
                 model, family, w->npoints ? w->points[w->npoints - 1].gpus : 0, share * 100);
    strata_html_para(out, s);
    strata_status_t st = wall_stack(w, out);
    fputs("<div class=\"row\">\n", out);
    if (!st) st = wall_line(w, out, false, share);
    if (!st) st = wall_line(w, out, true, share);
    fputs("</div>\n", out);
    return st;
}
