/*
 * html.c — self-contained HTML pages: escaping, the page frame with its
 * inline style sheet (screen and print), headings, paragraphs and
 * preformatted text. The page references nothing outside itself: no
 * scripts, no web fonts (the system's sans-serif and monospace), no
 * images other than the inline SVG the charts write.
 */
#include "report.h"

void strata_html_escape(FILE *out, const char *s)
{
    if (!s) return;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        case '\t':
        case '\n':
            fputc(*p, out);
            break;
        default:
            fputc(*p < 0x20 || *p == 0x7f ? ' ' : *p, out);
        }
    }
}

/* The style sheet: charts keep their inline colours; this sets the text,
 * the axes, the tables, and on paper keeps each figure on one page. */
static const char css[] =
    "body{font-family:sans-serif;margin:1.5em auto;max-width:1000px;color:#222;"
    "background:#fff;line-height:1.4}\n"
    "h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;border-bottom:1px solid #ccc;"
    "margin-top:1.6em}\n"
    "figure.strata-chart{margin:1em 0;padding:.5em;border:1px solid #e4e4e4;"
    "break-inside:avoid;page-break-inside:avoid;overflow-x:auto}\n"
    "div.row{display:flex;flex-wrap:wrap;gap:10px;align-items:flex-start}\n"
    "div.row figure.strata-chart{flex:1 1 420px;margin:.5em 0;min-width:0}\n"
    "figcaption{font-weight:bold;margin-bottom:.3em}\n"
    "p.note{font-size:.9em;color:#555;margin:.2em 0 .5em}\n"
    "svg{display:block;max-width:100%;height:auto}\n"
    "svg text{font-family:sans-serif;font-size:11px;fill:#222}\n"
    "svg text.axis-title{font-size:12px}svg text.legend.emph{font-weight:bold}\n"
    "svg text.mark-label{font-size:10.5px;font-weight:bold}\n"
    "svg text.node-label{font-size:10px;fill:#fff}svg text.edge-label{font-size:9px;fill:#666}\n"
    "svg line.grid{stroke:#e6e6e6;stroke-width:1}svg line.axis{stroke:#444;stroke-width:1}\n"
    "svg line.edge{stroke:#9a9a9a;stroke-width:1}\n"
    "svg g.mark circle{fill:none;stroke:#000;stroke-width:1.5}svg g.mark line{stroke:#000;"
    "stroke-width:.8}\n"
    "table.strata-data{border-collapse:collapse;font-size:.8em;margin-top:.5em}\n"
    "table.strata-data th,table.strata-data td{border:1px solid #ddd;padding:1px 6px;"
    "text-align:right}\n"
    "table.strata-data td:first-child,table.strata-data th:first-child{text-align:left}\n"
    "ul.strata-marks{font-size:.85em;margin:.3em 0}\n"
    "pre{background:#f6f6f6;padding:.6em;font-size:.8em;overflow-x:auto}\n"
    "@media print{body{max-width:none;margin:0}pre{white-space:pre-wrap}"
    "figure.strata-chart{border:none}}\n";

void strata_html_begin(FILE *out, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          out);
    strata_html_escape(out, title);
    fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", css);
    strata_html_escape(out, title);
    fputs("</h1>\n", out);
}

void strata_html_end(FILE *out)
{
    fputs("</body>\n</html>\n", out);
}

void strata_html_heading(FILE *out, const char *id, const char *text)
{
    if (id && report_id_ok(id))
        fprintf(out, "<h2 id=\"%s\">", id);
    else
        fputs("<h2>", out);
    strata_html_escape(out, text);
    fputs("</h2>\n", out);
}

void strata_html_para(FILE *out, const char *text)
{
    fputs("<p>", out);
    strata_html_escape(out, text);
    fputs("</p>\n", out);
}

void strata_html_pre(FILE *out, const char *text)
{
    fputs("<pre>", out);
    strata_html_escape(out, text);
    fputs("</pre>\n", out);
}
