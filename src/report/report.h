/*
 * report.h — internals of the report module shared by its files: the
 * opening of a chart's <figure> and <svg>, and the id check every chart
 * and drawing applies.
 */
#ifndef STRATA_REPORT_INTERNAL_H
#define STRATA_REPORT_INTERNAL_H

#include "strata/report.h"

#include <stdbool.h>
#include <stdio.h>

/* An HTML id of letters, digits, '-' and '_' (never needs escaping). */
bool report_id_ok(const char *id);
/* <figure id class="strata-chart CLS"><figcaption>title</figcaption>[note] */
void report_figure_open(FILE *out, const char *id, const char *cls, const char *title,
                        const char *note);
/* <svg ...><title>title</title> of width x height pixels. */
void report_svg_open(FILE *out, int width, int height, const char *title);

#endif
