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

static void print_json_entry(strata_json_t *j, const strata_link_t *l)
{
    strata_json_open(j, NULL, '{');
    strata_json_str(j, "id", l->id);
    strata_json_str(j, "category", l->category);
    strata_json_str(j, "name", l->name);
    strata_json_str(j, "source", l->source);
    strata_json_str(j, "confidence", l->confidence);
    strata_json_int(j, "lanes", l->lanes);
    strata_json_int(j, "links", l->links);
    strata_json_str(j, "modulation", l->modulation);
    strata_json_num(j, "lane_rate_bps", l->lane_rate);
    strata_json_str(j, "line_code", l->line_code);
    strata_json_str(j, "packet", l->packet_format);
    strata_json_num(j, "mtu_B", l->mtu);
    strata_json_num(j, "payload_B", l->payload);
    strata_json_num(j, "wire_B", l->wire);
    strata_json_num(j, "eta_line", l->eta_line);
    strata_json_num(j, "eta_pkt", l->eta_pkt);
    strata_json_num(j, "eta_flow", l->eta_flow);
    strata_json_num(j, "raw_dir_Bps", l->raw_dir);
    strata_json_num(j, "line_dir_Bps", l->line_dir);
    strata_json_num(j, "pkt_dir_Bps", l->pkt_dir);
    strata_json_num(j, "bw_dir_Bps", l->bw_dir);
    strata_json_num(j, "bw_bidi_Bps", l->bw_bidi);
    strata_json_num(j, "device_bw_dir_Bps", l->device_bw_dir);
    strata_json_bool(j, "full_duplex", l->full_duplex);
    strata_json_bool(j, "vendor_figure", l->vendor_figure);
    strata_json_num(j, "latency_s", l->latency);
    strata_json_str(j, "latency_basis", l->latency_basis);
    strata_json_str(j, "note", l->note);
    strata_json_close(j, '{');
}

static void print_json(const strata_link_catalog_t *cat, const char *category)
{
    strata_json_t j;
    strata_json_document(&j, stdout);
    strata_json_str(&j, "units",
                    "SI base units, the unit as the key's suffix (docs/formats.md); "
                    "per direction of one link unless _bidi; device = links x bw_dir");
    strata_json_open(&j, "links", '[');
    for (size_t i = 0; i < strata_link_catalog_count(cat); i++) {
        const strata_link_t *l = strata_link_catalog_at(cat, i);
        if (!category || same_nocase(l->category, category)) print_json_entry(&j, l);
    }
    strata_json_close(&j, '[');
    strata_json_open(&j, "latencies", '[');
    for (size_t i = 0; i < strata_link_latency_count(cat); i++) {
        const strata_latency_t *t = strata_link_latency_at(cat, i);
        strata_json_open(&j, NULL, '{');
        strata_json_str(&j, "id", t->id);
        strata_json_str(&j, "what", t->what);
        strata_json_num(&j, "low_s", t->low);
        strata_json_num(&j, "high_s", t->high);
        strata_json_str(&j, "confidence", t->confidence);
        strata_json_str(&j, "source", t->source);
        strata_json_close(&j, '{');
    }
    strata_json_close(&j, '[');
    strata_json_close(&j, '{');
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
