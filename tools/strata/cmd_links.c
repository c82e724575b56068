/*
 * cmd_links.c — `strata links [--json]`: the link catalog, one row per link
 * kind, with bandwidths derived from its primitive facts (lanes × rate ×
 * line code × packet × flow control) and the typical latency of one hop.
 * --json lists every field, including the source of each row.
 */
#include "cli_report.h"

#include <ctype.h>
#include <string.h>

static int same_nocase(const char *a, const char *b)
{
    while (*a && tolower((unsigned char)*a) == tolower((unsigned char)*b))
        a++, b++;
    return *a == '\0' && *b == '\0';
}

static void usage(FILE *out)
{
    fprintf(out, "usage: strata links [--json] [--category NAME] [--catalog FILE]\n\n"
                 "The link catalog: every bandwidth derived as\n"
                 "  lanes x lane rate x line-code eff. x packet eff. x flow-control share / 8\n"
                 "per direction of one link (GB/s = 1e9 B/s); bidi = 2 x per direction for\n"
                 "full-duplex links; device = links per device x per direction.\n\n"
                 "options:\n"
                 "  --json            every field of every entry, with its source\n"
                 "  -o FILE           write the output to FILE (also --output FILE)\n"
                 "  --category NAME   only this category (PCIe, NVLink, InfiniBand, ...)\n"
                 "  --catalog FILE    catalog file (default: <data dir>/links.json)\n"
                 "  -h, --help        this help\n\n"
                 "See `strata link ID` for one link's derivation step by step.\n");
}

static void print_row(const strata_link_t *l)
{
    char rate[40], raw[16], line[16], good[16], bidi[16], dev[16], lat[16];
    if (l->vendor_figure)
        snprintf(rate, sizeof(rate), "vendor figure");
    else
        snprintf(rate, sizeof(rate), "%dx%.7g Gb/s%s%s", l->lanes, l->lane_rate / 1e9,
                 strcmp(l->modulation, "unpublished") ? " " : "",
                 strcmp(l->modulation, "unpublished") ? l->modulation : "");
    printf("%-12s %-22s %-22s %7s %7s %8s %8s %5d %8s %7s %s\n", l->id, rate, l->line_code,
           report_gbs(l->raw_dir, raw, 16), report_gbs(l->line_dir, line, 16),
           report_gbs(l->bw_dir, good, 16),
           l->full_duplex ? report_gbs(l->bw_bidi, bidi, 16) : "shared", l->links,
           report_gbs(l->device_bw_dir, dev, 16), report_time(l->latency, lat, 16), l->confidence);
}

static void print_table(const strata_link_catalog_t *cat, const char *category)
{
    printf("%-12s %-22s %-22s %7s %7s %8s %8s %5s %8s %7s %s\n", "id", "lanes x rate", "line code",
           "raw", "line", "goodput", "bidi", "links", "device", "latency", "conf");
    const char *last = "";
    for (size_t i = 0; i < strata_link_catalog_count(cat); i++) {
        const strata_link_t *l = strata_link_catalog_at(cat, i);
        if (category && !same_nocase(l->category, category)) continue;
        if (strcmp(last, l->category) != 0 && !category) printf("-- %s\n", l->category);
        last = l->category;
        print_row(l);
    }
    printf("\nlatency hierarchy (one way, small message; ranges from links.md)\n");
    for (size_t i = 0; i < strata_link_latency_count(cat); i++) {
        const strata_latency_t *t = strata_link_latency_at(cat, i);
        char lo[16], hi[16];
        printf("  %-18s %8s .. %-8s %s  %s\n", t->id, report_time(t->low, lo, 16),
               report_time(t->high, hi, 16), t->confidence, t->what);
    }
    printf("\nGB/s per direction of one link (1e9 B/s). goodput = after line code, packet framing\n"
           "at the default MTU (PCIe MPS 256 B, IB and RoCE 4096 B, TCP/IPv4 1500 B) and flow\n"
           "control; device = links x goodput. Vendor-figure rows have no lane facts in the\n"
           "catalog. `strata link ID` shows each derivation; --json gives every source.\n");
}

/* ==== JSON ==== */

static void jstr(const char *key, const char *v, int comma)
{
    printf("      \"%s\": ", key);
    strata_json_string(stdout, v);
    printf("%s\n", comma ? "," : "");
}

static void jnum(const char *key, double v)
{
    printf("      \"%s\": %.6g,\n", key, v);
}

static void print_json_entry(const strata_link_t *l, int last)
{
    printf("    {\n");
    jstr("id", l->id, 1);
    jstr("category", l->category, 1);
    jstr("name", l->name, 1);
    jstr("source", l->source, 1);
    jstr("confidence", l->confidence, 1);
    jnum("lanes", l->lanes);
    jnum("links", l->links);
    jstr("modulation", l->modulation, 1);
    jnum("lane_rate_bps", l->lane_rate);
    jstr("line_code", l->line_code, 1);
    jstr("packet", l->packet_format, 1);
    jnum("mtu_B", l->mtu);
    jnum("payload_B", l->payload);
    jnum("wire_B", l->wire);
    jnum("eta_line", l->eta_line);
    jnum("eta_pkt", l->eta_pkt);
    jnum("eta_flow", l->eta_flow);
    jnum("raw_dir_Bps", l->raw_dir);
    jnum("line_dir_Bps", l->line_dir);
    jnum("pkt_dir_Bps", l->pkt_dir);
    jnum("bw_dir_Bps", l->bw_dir);
    jnum("bw_bidi_Bps", l->bw_bidi);
    jnum("device_bw_dir_Bps", l->device_bw_dir);
    printf("      \"full_duplex\": %s,\n", l->full_duplex ? "true" : "false");
    printf("      \"vendor_figure\": %s,\n", l->vendor_figure ? "true" : "false");
    jnum("latency_s", l->latency);
    jstr("latency_basis", l->latency_basis, 1);
    jstr("note", l->note, 0);
    printf("    }%s\n", last ? "" : ",");
}

static void print_json(const strata_link_catalog_t *cat, const char *category)
{
    size_t n = strata_link_catalog_count(cat), shown = 0, total = 0;
    for (size_t i = 0; i < n; i++)
        total += !category || same_nocase(strata_link_catalog_at(cat, i)->category, category);
    printf("{\n  \"schema_version\": %d,\n  \"units\": \"SI base units, the unit as the key's "
           "suffix (docs/formats.md); per direction of one link unless _bidi; device = links x "
           "bw_dir\",\n  \"links\": [\n",
           STRATA_JSON_SCHEMA_VERSION);
    for (size_t i = 0; i < n; i++) {
        const strata_link_t *l = strata_link_catalog_at(cat, i);
        if (category && !same_nocase(l->category, category)) continue;
        print_json_entry(l, ++shown == total);
    }
    printf("  ],\n  \"latencies\": [\n");
    for (size_t i = 0; i < strata_link_latency_count(cat); i++) {
        const strata_latency_t *t = strata_link_latency_at(cat, i);
        printf("    {\"id\": ");
        strata_json_string(stdout, t->id);
        printf(", \"what\": ");
        strata_json_string(stdout, t->what);
        printf(", \"low_s\": %.6g, \"high_s\": %.6g, \"confidence\": ", t->low, t->high);
        strata_json_string(stdout, t->confidence);
        printf(", \"source\": ");
        strata_json_string(stdout, t->source);
        printf("}%s\n", i + 1 < strata_link_latency_count(cat) ? "," : "");
    }
    printf("  ]\n}\n");
}

/* ==== The command ==== */

int cmd_links(int argc, char **argv)
{
    const char *catalog = NULL, *category = NULL;
    int json = 0;
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int valued = strcmp(o, "--catalog") == 0 || strcmp(o, "--category") == 0;
        if (strcmp(o, "--json") == 0)
            json = 1;
        else if (!valued && o[0] == '-' && o[1])
            return cli_unknown_option("links", o);
        else if (!valued)
            return cli_usage_error("links", "unexpected argument '%s'", o);
        else if (i + 1 >= argc)
            return cli_usage_error("links", "%s needs a value", o);
        else if (strcmp(o, "--catalog") == 0)
            catalog = argv[++i];
        else
            category = argv[++i];
    }
    strata_link_catalog_t *cat = NULL;
    int rc = report_load_links(catalog, &cat);
    if (rc != CLI_OK) return rc;
    size_t match = 0;
    for (size_t i = 0; i < strata_link_catalog_count(cat); i++)
        match += !category || same_nocase(strata_link_catalog_at(cat, i)->category, category);
    if (match == 0) {
        strata_link_catalog_destroy(cat);
        return cli_usage_error("links", "no link has category '%s'", category);
    }
    if (json)
        print_json(cat, category);
    else
        print_table(cat, category);
    strata_link_catalog_destroy(cat);
    return CLI_OK;
}
