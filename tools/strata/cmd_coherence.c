/*
 * cmd_coherence.c — `strata coherence [model|local]`: the coherence layer.
 * model (default): CXL.io / .mem / .cache messages on a CXL link (flit
 * slots, wire bytes, efficiency, data bandwidth) and the load, store and
 * ownership-transfer figures of each memory tier of a described server
 * (strata/coherence.h). local: this machine's cache-line transfer latency
 * between two cores and its memory bandwidth, measured by strata probe's
 * memory and coherence sections, beside what the model predicts for it.
 */
#include "cli_report.h"

#include <stdlib.h>
#include <string.h>

typedef struct coh_args {
    bool local, json;
    const char *link, *dram, *socket, *catalog;
    long lanes, channels, socket_links, switches;
    double bytes;
    double mix_r, mix_w; /* --mix R:W, lines read per lines written */
} coh_args_t;

static void usage(FILE *out)
{
    fprintf(out, "usage: strata coherence [model] [--link ID] [--lanes N] [--size B] [--dram ID]\n"
                 "                        [--channels N] [--socket ID|none] [--socket-links N]\n"
                 "                        [--switches N] [--mix R:W] [--catalog FILE] [--json]\n"
                 "                        [-o FILE]\n"
                 "       strata coherence local [--dram ID] [--channels N] [--json] [-o FILE]\n\n"
                 "model: CXL.io, CXL.mem and CXL.cache messages on a CXL link (68 B or 256 B\n"
                 "flits: slots, wire bytes, efficiency, data bandwidth), then what a load, a\n"
                 "store and a cache-line ownership transfer cost on each memory tier of the\n"
                 "server: local DRAM, the remote socket, a CXL expander, a CXL pool behind\n"
                 "switches, and a line two agents write in turn (ping-pong).\n"
                 "local: measure this machine (a cache-line transfer between two cores, memory\n"
                 "bandwidth; a few seconds) and print the model's prediction beside it.\n\n"
                 "options:\n"
                 "  --link ID         CXL link of the expander (default cxl2; cxl1, cxl3)\n"
                 "  --lanes N         its lanes, 1..16 (default: the catalog's x16)\n"
                 "  --size B          message size, 64 B lines, 64..1M (default 64)\n"
                 "  --dram ID         memory channel kind (default ddr5-4800)\n"
                 "  --channels N      channels per socket, 1..24 (default 8)\n"
                 "  --socket ID|none  socket link (default upi2; xgmi-genoa; none: 1 socket)\n"
                 "  --socket-links N  links between the sockets, 1..8 (default 4)\n"
                 "  --switches N      CXL switch levels in front of the pool, 1..8 (default 1)\n"
                 "  --mix R:W         CXL.mem reads and writes at once, R lines read per W\n"
                 "                    written, 0..1000 each (default 2:1, Intel MLC's mix)\n"
                 "  --catalog FILE    link catalog (default: <data dir>/links.json)\n"
                 "  --json            one JSON object instead of text (docs/formats.md units)\n"
                 "  -o FILE           write the output to FILE (also --output FILE)\n"
                 "  -h, --help        this help\n\n"
                 "exit: 0 ok, 1 a link that does not fit its role or a failed measurement,\n"
                 "2 bad option\n");
}

/* --mix R:W: two numbers 0..1000, not both 0. */
static int parse_mix(const char *v, coh_args_t *a)
{
    char *end;
    double r = strtod(v, &end), w = -1;
    if (end != v && *end == ':') {
        const char *p = end + 1;
        w = strtod(p, &end);
        if (end == p || *end) w = -1;
    }
    if (!(r >= 0 && r <= 1000 && w >= 0 && w <= 1000 && r + w > 0))
        return cli_usage_error("coherence",
                               "--mix expects R:W, lines read per lines written, two numbers "
                               "0..1000 not both 0, got '%s'",
                               v);
    a->mix_r = r, a->mix_w = w;
    return 0;
}

static int parse_opt(int argc, char **argv, int *i, coh_args_t *a)
{
    static const char *const known[] = {"--link",         "--lanes",  "--size",    "--dram",
                                        "--channels",     "--socket", "--catalog", "--switches",
                                        "--socket-links", "--mix",    NULL};
    const char *o = argv[*i];
    if (strcmp(o, "--json") == 0) {
        a->json = true;
        return 0;
    }
    int k = 0;
    while (known[k] && strcmp(o, known[k]) != 0)
        k++;
    if (!known[k]) return cli_usage_error("coherence", "unknown option '%s'", o);
    if (*i + 1 >= argc) return cli_usage_error("coherence", "%s needs a value", o);
    const char *v = argv[++*i];
    switch (k) {
    case 0:
        a->link = v;
        return 0;
    case 1:
        return cli_parse_int("coherence", o, v, 1, 16, &a->lanes) ? CLI_USAGE : 0;
    case 2:
        return cli_parse_size("coherence", o, v, 1048576, &a->bytes) ? CLI_USAGE : 0;
    case 3:
        a->dram = v;
        return 0;
    case 4:
        return cli_parse_int("coherence", o, v, 1, 24, &a->channels) ? CLI_USAGE : 0;
    case 5:
        a->socket = v;
        return 0;
    case 6:
        a->catalog = v;
        return 0;
    case 7:
        return cli_parse_int("coherence", o, v, 1, 8, &a->switches) ? CLI_USAGE : 0;
    case 9:
        return parse_mix(v, a);
    default:
        return cli_parse_int("coherence", o, v, 1, 8, &a->socket_links) ? CLI_USAGE : 0;
    }
}

static int parse_args(int argc, char **argv, coh_args_t *a)
{
    *a = (coh_args_t){.link = "cxl2",
                      .dram = "ddr5-4800",
                      .socket = "upi2",
                      .channels = 8,
                      .socket_links = 4,
                      .switches = 1,
                      .bytes = 64,
                      .mix_r = 2,
                      .mix_w = 1};
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1]) {
            if (parse_opt(argc, argv, &i, a)) return CLI_USAGE;
        } else if (i == 1 && (strcmp(argv[i], "model") == 0 || strcmp(argv[i], "local") == 0)) {
            a->local = strcmp(argv[i], "local") == 0;
        } else {
            return cli_usage_error("coherence", "unexpected argument '%s' (model or local)",
                                   argv[i]);
        }
    }
    if ((long)a->bytes % 64 != 0 || a->bytes < 64)
        return cli_usage_error("coherence", "--size must be a multiple of 64 B lines");
    return CLI_OK;
}

/* ==== Model ==== */

static int find_link(const strata_link_catalog_t *cat, const char *id, const char *role,
                     const strata_link_t **l_p)
{
    *l_p = strata_link_find(cat, id);
    if (*l_p) return 0;
    fprintf(stderr, "strata: coherence: unknown %s link '%s' (see strata links)\n", role, id);
    return -1;
}

static int server_of(const strata_link_catalog_t *cat, const coh_args_t *a, strata_coh_server_t *s)
{
    *s = (strata_coh_server_t){.channels = (int)a->channels,
                               .socket_links = (int)a->socket_links,
                               .cxl_lanes = (int)a->lanes,
                               .switches = (int)a->switches};
    if (find_link(cat, a->dram, "memory", &s->dram) || find_link(cat, a->link, "CXL", &s->cxl))
        return -1;
    if (strcmp(s->dram->category, "Memory") != 0) {
        fprintf(stderr, "strata: coherence: '%s' is not a memory channel (category %s)\n", a->dram,
                s->dram->category);
        return -1;
    }
    if (strcmp(a->socket, "none") == 0) return 0;
    if (find_link(cat, a->socket, "socket", &s->socket)) return -1;
    if (strcmp(s->socket->category, "Socket") != 0) {
        fprintf(stderr,
                "strata: coherence: '%s' is not a socket-to-socket link (category %s; upi2, "
                "xgmi-genoa)\n",
                a->socket, s->socket->category);
        return -1;
    }
    return 0;
}

static void json_flit(strata_json_t *j, strata_cxl_class_t c, const strata_cxl_msg_t *m,
                      double data_bw)
{
    strata_json_open(j, NULL, '{');
    strata_json_str(j, "class", strata_cxl_class_str(c));
    strata_json_int(j, "flit_B", m->flit_bytes);
    strata_json_int(j, "req_slots", m->req_slots);
    strata_json_int(j, "rsp_slots", m->rsp_slots);
    strata_json_num(j, "req_B", m->req_wire);
    strata_json_num(j, "rsp_B", m->rsp_wire);
    strata_json_num(j, "efficiency", m->efficiency);
    strata_json_num(j, "data_Bps", data_bw);
    strata_json_close(j, '{');
}

/* The CXL message table (text, or the "messages" member of j's object). */
static int print_flits(const strata_coh_server_t *s, const coh_args_t *a, strata_json_t *j)
{
    strata_error_t err;
    char b1[32];
    int lanes = s->cxl_lanes ? s->cxl_lanes : s->cxl->lanes;
    if (j) {
        strata_json_str(j, "link", s->cxl->id);
        strata_json_int(j, "lanes", lanes);
        strata_json_num(j, "size_B", a->bytes);
        strata_json_open(j, "messages", '[');
    } else {
        printf("CXL messages on %s x%d, %.0f B each\n", s->cxl->id, lanes, a->bytes);
        printf("  %-42s %5s %9s %9s %6s %6s %8s %10s\n", "class", "flit", "req slots", "rsp slots",
               "req B", "rsp B", "eff", "data GB/s");
    }
    for (int c = 0; c < STRATA_CXL_CLASS_COUNT; c++) {
        strata_cxl_msg_t m;
        if (strata_cxl_message(s->cxl, (strata_cxl_class_t)c, a->bytes, &m, &err))
            return cli_fail(&err);
        double width = s->cxl_lanes ? (double)s->cxl_lanes / s->cxl->lanes : 1;
        if (j)
            json_flit(j, (strata_cxl_class_t)c, &m, m.data_bw_dir * width);
        else
            printf("  %-42s %4dB %9d %9d %6.0f %6.0f %7.1f%% %10s\n",
                   strata_cxl_class_str((strata_cxl_class_t)c), m.flit_bytes, m.req_slots,
                   m.rsp_slots, m.req_wire, m.rsp_wire, 100 * m.efficiency,
                   report_gbs(m.data_bw_dir * width, b1, sizeof(b1)));
    }
    double mix;
    if (strata_cxl_mix_bw(s->cxl, s->cxl_lanes, a->mix_r, a->mix_w, &mix, &err))
        return cli_fail(&err);
    if (j) {
        strata_json_close(j, '[');
        strata_json_open(j, "mix", '{');
        strata_json_num(j, "read_lines", a->mix_r);
        strata_json_num(j, "write_lines", a->mix_w);
        strata_json_num(j, "data_Bps", mix);
        strata_json_close(j, '{');
    } else {
        printf("  CXL.mem reads and writes at once, %g:%g: %s GB/s of data (both directions)\n",
               a->mix_r, a->mix_w, report_gbs(mix, b1, sizeof(b1)));
    }
    return CLI_OK;
}

static void json_tier(strata_json_t *j, strata_coh_tier_t t, const strata_coh_figures_t *f)
{
    strata_json_open(j, NULL, '{');
    strata_json_str(j, "tier", strata_coh_tier_str(t));
    strata_json_num(j, "load_s", f->load_s);
    strata_json_num(j, "store_s", f->store_s);
    strata_json_num(j, "ownership_s", f->own_s);
    strata_json_num(j, "read_Bps", f->read_bw);
    strata_json_str(j, "how", f->how);
    strata_json_close(j, '{');
}

/* The memory tiers (text, or the "tiers" member of j's object). */
static int print_tiers(const strata_coh_server_t *s, strata_json_t *j)
{
    char b[4][32];
    if (j) {
        strata_json_str(j, "dram", s->dram->id);
        strata_json_int(j, "channels", s->channels);
        strata_json_str(j, "socket", s->socket ? s->socket->id : "none");
        strata_json_int(j, "switches", s->switches);
        strata_json_open(j, "tiers", '[');
    } else {
        printf("memory tiers (%d x %s per socket, %s, %s, %d CXL switch level%s)\n", s->channels,
               s->dram->id, s->socket ? s->socket->id : "one socket", s->cxl->id, s->switches,
               s->switches == 1 ? "" : "s");
        printf("  %-48s %8s %8s %9s %10s  %s\n", "tier", "load", "store", "ownership", "read GB/s",
               "how");
    }
    for (int t = 0; t < STRATA_COH_TIER_COUNT; t++) {
        strata_coh_figures_t f;
        strata_error_t err;
        if (strata_coh_tier(s, (strata_coh_tier_t)t, &f, &err)) continue; /* absent tier */
        if (j)
            json_tier(j, (strata_coh_tier_t)t, &f);
        else
            printf("  %-48s %8s %8s %9s %10s  %s\n", strata_coh_tier_str((strata_coh_tier_t)t),
                   report_time(f.load_s, b[0], 32), report_time(f.store_s, b[1], 32),
                   report_time(f.own_s, b[2], 32), report_gbs(f.read_bw, b[3], 32), f.how);
    }
    if (j) strata_json_close(j, '[');
    return CLI_OK;
}

/* A direct-attached expander's load, hop by hop (text, or the "cxl_load"
 * member of j's object): the sourced parts and what none covers. */
static int print_load_parts(const strata_coh_server_t *s, strata_json_t *j)
{
    strata_cxl_load_t l;
    strata_coh_figures_t f;
    strata_error_t err;
    if (strata_cxl_load_parts(s, 0, &l, &err) ||
        strata_coh_tier(s, STRATA_COH_CXL_EXPANDER, &f, &err))
        return cli_fail(&err);
    char b[2][32];
    if (j) {
        strata_json_open(j, "cxl_load", '{');
        strata_json_open(j, "parts", '[');
        for (int i = 0; i < l.nparts; i++) {
            strata_json_open(j, NULL, '{');
            strata_json_str(j, "what", l.part[i].what);
            strata_json_num(j, "latency_s", l.part[i].s);
            strata_json_str(j, "source", l.part[i].source);
            strata_json_close(j, '{');
        }
        strata_json_close(j, '[');
        strata_json_num(j, "sum_s", l.total_s);
        strata_json_num(j, "tier_load_s", f.load_s);
        strata_json_str(j, "missing", l.missing);
        strata_json_close(j, '{');
        return CLI_OK;
    }
    printf("a CXL expander's load, hop by hop (%s x%d, direct attached)\n", s->cxl->id,
           s->cxl_lanes > 0 ? s->cxl_lanes : s->cxl->lanes);
    for (int i = 0; i < l.nparts; i++)
        printf("  %-46s %9s  %s\n", l.part[i].what, report_time(l.part[i].s, b[0], 32),
               l.part[i].source);
    printf("  %-46s %9s  against the tier's %s (the catalog's)\n  not in the sum: %s\n",
           "sum of the sourced parts", report_time(l.total_s, b[0], 32),
           report_time(f.load_s, b[1], 32), l.missing);
    return CLI_OK;
}

/* ==== Local ==== */

/* What run_local compares: measured (probe medians) beside the model. */
typedef struct local_figs {
    double c2c, c2c_model;       /* cache-line transfer within a socket, s; 0 = one core */
    double across, across_model; /* across sockets, s; 0 = one socket */
    double read_all, read_model, read_one; /* memory read, B/s */
    const char *source;                    /* of the bandwidth model */
} local_figs_t;

static void local_text(const strata_probe_result_t *r, const local_figs_t *f)
{
    char b[3][32];
    printf("this host: %s, %d cores on %d socket%s (probe, quick; medians)\n",
           r->cpu_model[0] ? r->cpu_model : "cpu model unknown", r->cores, r->packages,
           r->packages == 1 ? "" : "s");
    printf("  %-44s %10s %10s %8s\n", "figure", "measured", "model", "ratio");
    if (f->c2c > 0)
        printf("  %-44s %10s %10s %7.2fx\n", "cache-line transfer, two cores of one socket",
               report_time(f->c2c, b[0], 32), report_time(f->c2c_model, b[1], 32),
               f->c2c / f->c2c_model);
    else
        printf("  %-44s %10s\n", "cache-line transfer, two cores", "one core: not measured");
    if (f->across > 0)
        printf("  %-44s %10s %10s %7.2fx\n", "cache-line transfer, two sockets",
               report_time(f->across, b[0], 32), report_time(f->across_model, b[1], 32),
               f->across / f->across_model);
    printf("  %-44s %10s %10s %7.2fx\n", "memory read bandwidth, all cores of node 0",
           report_gbs(f->read_all, b[0], 32), report_gbs(f->read_model, b[1], 32),
           f->read_all / f->read_model);
    printf("  %-44s %10s\n", "memory read bandwidth, one core", report_gbs(f->read_one, b[0], 32));
    printf("model: transfer %s (%s); bandwidth %s\n",
           "60 ns within a socket, 150 ns across (Sapphire Rapids class, chipsandcheese, L)",
           "src/link/coherence.c", f->source);
}

/* A measured figure beside the model's; both 0 = not measured. */
static void json_pair(strata_json_t *j, const char *key, const char *unit, double measured,
                      double model)
{
    char m[48], p[48];
    if (measured <= 0) return;
    snprintf(m, sizeof(m), "measured_%s", unit);
    snprintf(p, sizeof(p), "model_%s", unit);
    strata_json_open(j, key, '{');
    strata_json_num(j, m, measured);
    strata_json_num(j, p, model);
    strata_json_num(j, "ratio", model > 0 ? measured / model : 0);
    strata_json_close(j, '{');
}

static void local_json(const strata_probe_result_t *r, const local_figs_t *f)
{
    strata_json_t j;
    strata_json_document(&j, stdout);
    strata_json_str(&j, "cpu_model", r->cpu_model);
    strata_json_int(&j, "cores", r->cores);
    strata_json_int(&j, "sockets", r->packages);
    json_pair(&j, "transfer_one_socket", "s", f->c2c, f->c2c_model);
    json_pair(&j, "transfer_two_sockets", "s", f->across, f->across_model);
    json_pair(&j, "read_all_cores", "Bps", f->read_all, f->read_model);
    strata_json_num(&j, "read_one_core_Bps", f->read_one);
    strata_json_str(&j, "bandwidth_model", f->source);
    strata_json_close(&j, '{');
}

static int run_local(const strata_coh_server_t *s, bool json)
{
    strata_probe_opts_t o = {.quick = true, .coherence_only = true};
    strata_probe_result_t *r = NULL;
    strata_error_t err;
    if (strata_probe_run(&o, &r, &err)) return cli_fail(&err);
    strata_coh_figures_t loc, rem = {0};
    if (strata_coh_tier(s, STRATA_COH_LOCAL, &loc, &err)) {
        strata_probe_destroy(r);
        return cli_fail(&err);
    }
    bool two = r->packages > 1 && s->socket &&
               strata_coh_tier(s, STRATA_COH_PINGPONG_REMOTE, &rem, &err) == STRATA_OK;
    local_figs_t f = {0};
    double c2c = r->c2c_within.n ? r->c2c_within.median : r->c2c_all.median;
    if (r->cores > 1 && c2c > 0) f.c2c = c2c, f.c2c_model = loc.own_s;
    if (r->c2c_note[0]) /* a loaded host: said, not taken for "one core" */
        fprintf(stderr, "strata: coherence local: cache-line transfer not measured: %s\n",
                r->c2c_note);
    if (two && r->c2c_across.n) f.across = r->c2c_across.median, f.across_model = rem.own_s;
    f.read_one = r->numa[0].one[STRATA_PROBE_MEM_READ].median;
    f.read_all = r->numa[0].all[STRATA_PROBE_MEM_READ].median;
    f.read_model = r->bus_ceiling > 0 ? r->bus_ceiling : loc.read_bw;
    f.source = r->bus_ceiling > 0 ? r->ceiling_source : "--channels x --dram (no HMAT figure)";
    if (json)
        local_json(r, &f);
    else
        local_text(r, &f);
    strata_probe_destroy(r);
    return CLI_OK;
}

/* The model: the message table and the tiers, as text or one JSON object. */
static int run_model(const strata_coh_server_t *s, const coh_args_t *a)
{
    strata_json_t j;
    if (a->json) strata_json_document(&j, stdout);
    int rc = print_flits(s, a, a->json ? &j : NULL);
    if (!rc) rc = print_tiers(s, a->json ? &j : NULL);
    if (!rc) rc = print_load_parts(s, a->json ? &j : NULL);
    if (a->json && !rc) strata_json_close(&j, '{');
    return rc;
}

int cmd_coherence(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    coh_args_t a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    strata_link_catalog_t *cat = NULL;
    strata_error_t err;
    if (strata_link_catalog_load(a.catalog, &cat, &err)) return cli_fail(&err);
    strata_coh_server_t s;
    strata_cxl_msg_t m;
    if (server_of(cat, &a, &s))
        rc = CLI_FAIL;
    else if (strata_cxl_message(s.cxl, STRATA_CXL_MEM_READ, 64, &m, &err)) /* a CXL link? */
        rc = cli_fail(&err);
    else if (a.local)
        rc = run_local(&s, a.json);
    else
        rc = run_model(&s, &a);
    strata_link_catalog_destroy(cat);
    return rc;
}
