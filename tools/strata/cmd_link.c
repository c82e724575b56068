/*
 * cmd_link.c — `strata link NAME`: one link's derivation, layer by layer,
 * from raw signalling to application goodput, then the data-link models at
 * the given cable length, credit buffer and bit-error rate: credit-limited
 * rate and the buffer line rate needs, goodput under go-back-N and selective
 * repeat, and for RoCE what PFC does and why it is needed.
 */
#include "cli_report.h"

#include <math.h>
#include <string.h>

/* Flag bounds, far above any real link: packets (--payload, --mtu) up to
 * 1 GiB, credit buffers (--buffer) up to 1 TiB; the link layer then checks
 * each link's own MTU range. */
#define LINK_PACKET_MAX 1073741824.0
#define LINK_BUFFER_MAX 1099511627776.0

typedef struct link_args {
    const char *name, *catalog;
    strata_link_opts_t opts;
    double ber, length, buffer;
    int have_length, json;
} link_args_t;

static void usage(FILE *out)
{
    fprintf(out, "usage: strata link NAME [--lanes N] [--payload B | --mtu B] [--ber X]\n"
                 "                        [--length M] [--buffer B] [--catalog FILE]\n\n"
                 "One link's derivation, layer by layer: signalling -> line code -> packet\n"
                 "framing -> flow control -> goodput, then the data-link models. NAME is a\n"
                 "catalog id (see `strata links`), e.g. pcie5, nvlink4, ib-ndr, roce-400g.\n\n"
                 "options:\n"
                 "  --lanes N      lanes per link, 1..1024 (e.g. 4 for a PCIe x4 slot; default:\n"
                 "                 catalog)\n"
                 "  --payload B    payload bytes per packet (PCIe: MPS; sizes like 4K accepted;\n"
                 "                 at most 1G)\n"
                 "  --mtu B        MTU: IP MTU for TCP, path MTU for IB/RoCE, MPS for PCIe (at\n"
                 "                 most 1G)\n"
                 "  --ber X        bit-error rate for the CRC/retransmission model, 0 <= X < 1\n"
                 "                 (default 1e-12, the usual PCIe/Ethernet/IB target)\n"
                 "  --length M     cable length in metres (default 30 for network ports, else 1)\n"
                 "  --buffer B     receive buffer (credits) for the credit model (default 64K,\n"
                 "                 at most 1T)\n"
                 "  --catalog FILE catalog file (default: <data dir>/links.json)\n"
                 "  --json         JSON instead of text (bytes, seconds, B/s)\n"
                 "  -o FILE        write the output to FILE (also --output FILE)\n"
                 "  -h, --help     this help\n\n"
                 "exit: 0 ok, 1 unknown link or bad catalog, 2 bad option\n");
}

/* ==== Options ==== */

static int opt_error(const char *fmt, const char *arg)
{
    cli_usage_error("link", fmt, arg);
    return -1;
}

/* Parse the value of option argv[*i] into a; -1 after printing a usage error. */
static int parse_opt(int argc, char **argv, int *i, link_args_t *a)
{
    static const char *const known[] = {"--lanes",  "--payload", "--mtu",     "--ber",
                                        "--length", "--buffer",  "--catalog", NULL};
    const char *o = argv[*i];
    int k = 0;
    while (known[k] && strcmp(o, known[k]) != 0)
        k++;
    if (known[k] == NULL && strcmp(o, "--json") == 0) return a->json = 1, 0;
    if (known[k] == NULL) return cli_unknown_option("link", o), -1;
    if (*i + 1 >= argc) return opt_error("%s needs a value", o);
    const char *v = argv[++*i];
    long n = 0;
    switch (k) {
    case 0:
        if (cli_parse_int("link", o, v, 1, 1024, &n)) return -1;
        a->opts.lanes = (int)n;
        return 0;
    case 1:
        return cli_parse_size("link", o, v, LINK_PACKET_MAX, &a->opts.payload);
    case 2:
        return cli_parse_size("link", o, v, LINK_PACKET_MAX, &a->opts.mtu);
    case 3:
        if (cli_parse_double("link", o, v, 0, 1, &a->ber)) return -1;
        return a->ber < 1 ? 0 : opt_error("--ber is a bit-error rate in [0, 1), got '%s'", v);
    case 4:
        a->have_length = 1;
        return cli_parse_double("link", o, v, 0, 1e5, &a->length);
    case 5:
        return cli_parse_size("link", o, v, LINK_BUFFER_MAX, &a->buffer);
    default:
        a->catalog = v;
        return 0;
    }
}

static int parse_args(int argc, char **argv, link_args_t *a)
{
    *a = (link_args_t){.ber = 1e-12, .buffer = 65536};
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1]) {
            if (parse_opt(argc, argv, &i, a)) return CLI_USAGE;
        } else if (a->name == NULL) {
            a->name = argv[i];
        } else {
            return cli_usage_error("link", "unexpected argument '%s' (one link at a time)",
                                   argv[i]);
        }
    }
    if (a->name == NULL) return cli_usage_error("link", "missing link NAME (see 'strata links')");
    if (a->opts.payload > 0 && a->opts.mtu > 0)
        return cli_usage_error("link", "give --payload or --mtu, not both");
    if (a->buffer <= 0) return cli_usage_error("link", "--buffer must be positive");
    return CLI_OK;
}

/* ==== Derivation ==== */

static int is_port(const strata_link_t *l)
{
    return !strcmp(l->category, "InfiniBand") || !strcmp(l->category, "Ethernet") ||
           !strcmp(l->category, "RoCEv2") || !strcmp(l->category, "Gaudi");
}

static int is_ethernet(const strata_link_t *l)
{
    return !strcmp(l->category, "Ethernet") || !strcmp(l->category, "RoCEv2") ||
           !strcmp(l->category, "Gaudi");
}

static void print_basis(const char *basis)
{
    if (basis && *basis) printf("  %-14s (%s)\n", "", basis);
}

static void print_steps(const strata_link_t *l, const strata_link_derivation_t *d)
{
    printf("\nphysical layer (one link, one direction)\n");
    for (size_t i = 0; i < d->nsteps; i++) {
        const strata_link_step_t *s = &d->step[i];
        if (strcmp(s->what, "packet") == 0) printf("data-link layer\n");
        printf("  %-14s %s\n", s->what, s->how);
        if (i == 0) print_basis(l->signal_basis);
        if (strcmp(s->what, "packet") == 0) print_basis(l->packet_basis);
        if (strcmp(s->what, "flow control") == 0) print_basis(l->flow_basis);
    }
    if (d->mtu == 0 && d->eta_pkt == 1) {
        printf("data-link layer\n  %-14s none modelled\n", "packet");
        print_basis(l->packet_basis);
    }
}

static void print_result(const strata_link_t *l, const strata_link_derivation_t *d)
{
    char a[32], b[32], c[32];
    printf("result\n  %-14s", "chain");
    for (size_t i = 0; i < d->nsteps; i++)
        printf("%s%s %s", i ? " -> " : " ", report_gbs(d->step[i].bw_dir, a, 32), d->step[i].what);
    printf(" (GB/s)\n");
    if (l->full_duplex)
        printf("  %-14s %s GB/s per direction, %s GB/s bidirectional (%.1f %% of raw signalling)\n",
               "goodput", report_gbs(d->bw_dir, a, 32), report_gbs(2 * d->bw_dir, b, 32),
               100 * d->bw_dir / d->raw_dir);
    else
        printf("  %-14s %s GB/s, shared by reads and writes (a bus, not a duplex link)\n",
               "bandwidth", report_gbs(d->bw_dir, a, 32));
    if (l->full_duplex)
        printf("  %-14s %d link%s x %s = %s GB/s per direction, %s GB/s bidirectional\n",
               "per device", l->links, l->links > 1 ? "s" : "", report_gbs(d->bw_dir, a, 32),
               report_gbs(l->links * d->bw_dir, b, 32),
               report_gbs(2 * l->links * d->bw_dir, c, 32));
    else
        printf("  %-14s %d x %s = %s GB/s (shared)\n", "per device", l->links,
               report_gbs(d->bw_dir, a, 32), report_gbs(l->links * d->bw_dir, b, 32));
    if (l->switch_lat > 0 || l->endpoint > 0) { /* a row may hold only endpoints (eth-1g-tbf) */
        char e[32], m[32], sum[128] = "";
        const double part[] = {l->latency, l->switch_lat, l->endpoint};
        const char *const what[] = {"one hop", "a switch", "endpoints once"};
        for (int k = 0; k < 3; k++)
            if (part[k] > 0)
                snprintf(sum + strlen(sum), sizeof(sum) - strlen(sum), "%s%s %s",
                         sum[0] ? " + " : "", report_time(part[k], e, 32), what[k]);
        printf("  %-14s %s = %s a message through one switch\n  %-14s (%s)\n", "latency", sum,
               report_time(strata_link_message_latency(l, 1), m, 32), "", l->latency_basis);
    } else if (l->latency > 0)
        printf("  %-14s %s one hop (%s)\n", "latency", report_time(l->latency, c, 32),
               l->latency_basis);
    else
        printf("  %-14s none in the catalog\n", "latency");
    if (*l->note) printf("  %-14s %s\n", "note", l->note);
}

/* What a collective library's protocols leave of the goodput, for the
 * kinds collectives cross (not memories). */
static void print_protocols(const strata_link_t *l, const strata_link_derivation_t *d)
{
    char a[32];
    if (!l->full_duplex) return;
    printf("collective protocols (NCCL, nccl.md 2.5; what a collective gets of the goodput)\n");
    for (int i = 0; i < STRATA_LINK_PROTOCOLS; i++) {
        const strata_link_protocol_t *p = strata_link_protocol(i);
        printf("  %-14s x %.4g (%s) = %s GB/s\n", p->name, p->eta, p->how,
               report_gbs(d->bw_dir * p->eta, a, 32));
    }
}

/* GPUDirect RDMA's read path for non-flit PCIe kinds: a NIC reading GPU
 * memory at the derivation's MPS (its MTU) and the spec's default MRRS. */
static void print_gdr(const strata_link_t *l, const strata_link_derivation_t *d)
{
    strata_link_gdr_t g, r;
    char a[32], b[32];
    if (strata_link_gdr_read(l, d->lanes, d->mtu, 0, 0, &g, NULL) != STRATA_OK) return;
    printf("GPUDirect RDMA read (a NIC reading GPU memory; MPS %g, MRRS %g; PCIe Base Spec "
           "2.2.7, 2.2.9)\n",
           g.mps, g.mrrs);
    printf("  %-14s %s\n", "requests", g.how_req);
    printf("  %-14s %s\n", "completions", g.how_cpl);
    printf("  %-14s %s GB/s x %.5f = %s GB/s per direction\n", "read goodput",
           report_gbs(g.line_dir, a, 32), g.eta_read, report_gbs(g.bw_dir, b, 32));
    if (strata_link_gdr_read(l, d->lanes, d->mtu, 0, 64, &r, NULL) == STRATA_OK)
        printf("  %-14s %s GB/s if the GPU split completions at a 64 B RCB (x %.5f)\n",
               "worst case", report_gbs(r.bw_dir, a, 32), r.eta_read);
}

/* ==== Data-link models ==== */

static void print_credits(const link_args_t *a, const strata_link_derivation_t *d, double rtt)
{
    char r[32], t[32], g[32], b[32], w[32];
    double need = strata_credit_buffer(d->line_dir, rtt);
    double wire_rate = strata_credit_rate(d->line_dir, a->buffer, rtt);
    double eff = d->line_dir > 0 ? d->bw_dir / d->line_dir : 1;
    if (d->wire > 0)
        printf("  %-14s 2 x %g m x 5 ns/m + 2 x %g B / %s GB/s (one packet each way) = %s\n",
               "round trip", a->length, d->wire, report_gbs(d->line_dir, r, 32),
               report_time(rtt, t, 32));
    else
        printf("  %-14s 2 x %g m x 5 ns/m = %s\n", "round trip", a->length,
               report_time(rtt, t, 32));
    printf("  %-14s line rate needs rate x RTT = %.0f B of receive buffer (credits)\n", "credits",
           need);
    printf("  %-14s with %s of credits: min(%s, %.0f B / %s) = %s GB/s on the wire -> %s GB/s "
           "goodput\n",
           "", strata_fmt_size(a->buffer, b, 32), report_gbs(d->line_dir, r, 32), a->buffer,
           report_time(rtt, t, 32), report_gbs(wire_rate, g, 32),
           report_gbs(wire_rate * eff, w, 32));
}

static void print_retx(const link_args_t *a, const strata_link_derivation_t *d, double rtt)
{
    char g1[32], g2[32];
    double p = strata_retx_per(a->ber, d->wire);
    double n = strata_retx_window(d->line_dir, rtt, d->wire);
    double gbn = strata_retx_gbn(p, n), sr = strata_retx_sr(p);
    printf("  %-14s packet error p = 1 - (1 - BER %g)^(8 bits x %g B) = %.3g\n", "CRC + retx",
           a->ber, d->wire, p);
    printf("  %-14s go-back-N, window 1 + ceil(rate x RTT / wire) = %.0f packets: (1-p)/(1-p+Np) = "
           "%.4f %% -> %s GB/s\n",
           "", n, 100 * gbn, report_gbs(d->bw_dir * gbn, g1, 32));
    printf("  %-14s selective repeat: 1-p = %.4f %% -> %s GB/s\n", "", 100 * sr,
           report_gbs(d->bw_dir * sr, g2, 32));
}

/* RoCE: what a pause costs, the headroom a lossless port needs, and what
 * happens without PFC: go-back-N over the end-to-end window. */
static void print_pfc(const link_args_t *a, const strata_link_t *l,
                      const strata_link_derivation_t *d)
{
    char t[32], g[32];
    const double drop = 1e-3; /* illustrative congestion drop rate, stated in the output */
    double e2e = 2 * strata_link_message_latency(l, 1); /* round trip through one switch */
    double n = strata_retx_window(d->line_dir, e2e, d->wire);
    double gbn = strata_retx_gbn(drop, n);
    printf("lossless Ethernet (PFC, IEEE 802.1Qbb)\n");
    printf("  %-14s a pause of 65535 quanta x 512 bit times stops the priority for %s\n", "pause",
           report_time(strata_pfc_pause_time(d->line_dir, 65535), t, 32));
    printf("  %-14s 1000 pauses/s of 65535 quanta leave %s GB/s of %s\n", "",
           /* quanta are bit times at the MAC rate; goodput scales with it */
           report_gbs(strata_pfc_throughput(d->line_dir, 65535, 1000) / d->line_dir * d->bw_dir, g,
                      32),
           report_gbs(d->bw_dir, t, 32));
    printf("  %-14s rate x (2 x %g m x 5 ns/m + %g us response) + 2 x %g B + 84 B = %.0f B per "
           "priority\n",
           "headroom", a->length, STRATA_PFC_RESPONSE_S * 1e6, d->wire,
           strata_pfc_headroom(d->line_dir, a->length, d->wire));
    printf("  %-14s RoCE NICs recover loss by go-back-N over the end-to-end window (RTT 2 x %s,\n"
           "  %-14s %.0f packets): at %g drop rate goodput falls to %.1f %% (%s GB/s), where "
           "selective\n"
           "  %-14s repeat would keep %.1f %%. PFC turns drops into pauses; ECN/DCQCN keeps pauses "
           "rare.\n",
           "without PFC", report_time(strata_link_message_latency(l, 1), t, 32), "", n, drop,
           100 * gbn, report_gbs(d->bw_dir * gbn, g, 32), "", 100 * strata_retx_sr(drop));
}

static void print_datalink(link_args_t *a, const strata_link_t *l,
                           const strata_link_derivation_t *d)
{
    char b[32];
    if (!l->full_duplex) {
        printf("\ndata-link models: none for a memory bus\n");
        return;
    }
    printf("\ndata-link models (--length %g m, --buffer %s, --ber %g)\n", a->length,
           strata_fmt_size(a->buffer, b, 32), a->ber);
    double rtt = strata_link_rtt(d->line_dir, a->length, d->wire);
    if (is_ethernet(l))
        printf(
            "  %-14s Ethernet has no link-level credits: it drops on overflow unless PFC pauses\n",
            "flow control");
    else
        print_credits(a, d, rtt);
    if (d->wire > 0)
        print_retx(a, d, rtt);
    else
        printf("  %-14s packet format not published: not modelled\n", "CRC + retx");
    if (!strcmp(l->category, "RoCEv2") || !strcmp(l->category, "Gaudi"))
        print_pfc(a, l, d);
    else if (!strcmp(l->category, "Ethernet"))
        printf("  %-14s TCP recovers loss end to end with SACK (selective repeat), so plain\n"
               "  %-14s Ethernet needs no PFC; RoCE does (see `strata link roce-...`)\n",
               "loss", "");
}

/* ==== JSON ==== */

static void json_steps(strata_json_t *j, const strata_link_derivation_t *d)
{
    strata_json_open(j, "steps", '[');
    for (size_t i = 0; i < d->nsteps; i++) {
        const strata_link_step_t *s = &d->step[i];
        strata_json_open(j, NULL, '{');
        strata_json_str(j, "what", s->what);
        strata_json_str(j, "how", s->how);
        strata_json_num(j, "eta", s->eta);
        strata_json_num(j, "bw_dir_Bps", s->bw_dir);
        strata_json_close(j, '{');
    }
    strata_json_close(j, '[');
}

static void json_result(strata_json_t *j, const strata_link_t *l, const strata_link_derivation_t *d)
{
    strata_json_int(j, "lanes", d->lanes);
    strata_json_bool(j, "full_duplex", l->full_duplex);
    strata_json_num(j, "raw_dir_Bps", d->raw_dir);
    strata_json_num(j, "line_dir_Bps", d->line_dir);
    strata_json_num(j, "bw_dir_Bps", d->bw_dir);
    strata_json_num(j, "bw_bidi_Bps", l->full_duplex ? 2 * d->bw_dir : d->bw_dir);
    strata_json_open(j, "packet", '{');
    strata_json_num(j, "mtu_B", d->mtu);
    strata_json_num(j, "payload_B", d->payload);
    strata_json_num(j, "wire_B", d->wire);
    strata_json_close(j, '{');
    strata_json_int(j, "links_per_device", l->links);
    strata_json_num(j, "device_bw_dir_Bps", l->links * d->bw_dir);
    strata_json_open(j, "latency", '{');
    strata_json_num(j, "hop_s", l->latency);
    strata_json_num(j, "switch_s", l->switch_lat);
    strata_json_num(j, "endpoint_s", l->endpoint);
    strata_json_num(j, "message_one_switch_s",
                    l->latency > 0 ? strata_link_message_latency(l, 1) : 0);
    strata_json_close(j, '{');
    strata_json_open(j, "protocols", '[');
    for (int i = 0; l->full_duplex && i < STRATA_LINK_PROTOCOLS; i++) {
        const strata_link_protocol_t *p = strata_link_protocol(i);
        strata_json_open(j, NULL, '{');
        strata_json_str(j, "name", p->name);
        strata_json_num(j, "eta", p->eta);
        strata_json_num(j, "bw_dir_Bps", d->bw_dir * p->eta);
        strata_json_close(j, '{');
    }
    strata_json_close(j, '[');
}

/* The data-link models' figures, the same functions the text calls. */
static void json_datalink(strata_json_t *j, const link_args_t *a, const strata_link_t *l,
                          const strata_link_derivation_t *d)
{
    if (!l->full_duplex) { /* no data-link models for a half-duplex link */
        strata_json_null(j, "datalink");
        return;
    }
    double rtt = strata_link_rtt(d->line_dir, a->length, d->wire);
    strata_json_open(j, "datalink", '{');
    strata_json_num(j, "length_m", a->length);
    strata_json_num(j, "buffer_B", a->buffer);
    strata_json_num(j, "ber", a->ber);
    strata_json_num(j, "rtt_s", rtt);
    if (!is_ethernet(l)) {
        strata_json_open(j, "credits", '{');
        strata_json_num(j, "buffer_needed_B", strata_credit_buffer(d->line_dir, rtt));
        strata_json_num(j, "wire_rate_Bps", strata_credit_rate(d->line_dir, a->buffer, rtt));
        strata_json_close(j, '{');
    }
    if (d->wire > 0) {
        double p = strata_retx_per(a->ber, d->wire);
        double n = strata_retx_window(d->line_dir, rtt, d->wire);
        strata_json_open(j, "retx", '{');
        strata_json_num(j, "packet_error", p);
        strata_json_num(j, "gbn_window", n);
        strata_json_num(j, "gbn_eta", strata_retx_gbn(p, n));
        strata_json_num(j, "sr_eta", strata_retx_sr(p));
        strata_json_num(j, "gbn_Bps", d->bw_dir * strata_retx_gbn(p, n));
        strata_json_num(j, "sr_Bps", d->bw_dir * strata_retx_sr(p));
        strata_json_close(j, '{');
    }
    if (!strcmp(l->category, "RoCEv2") || !strcmp(l->category, "Gaudi")) {
        strata_json_open(j, "pfc", '{');
        strata_json_num(j, "pause_s", strata_pfc_pause_time(d->line_dir, 65535));
        strata_json_num(j, "headroom_B", strata_pfc_headroom(d->line_dir, a->length, d->wire));
        strata_json_close(j, '{');
    }
    strata_json_close(j, '{');
}

static void print_json(const link_args_t *a, const strata_link_t *l,
                       const strata_link_derivation_t *d)
{
    strata_json_t j;
    strata_json_document(&j, stdout);
    j.digits = 12; /* a derivation: every digit the model has */
    strata_json_str(&j, "id", l->id);
    strata_json_str(&j, "name", l->name);
    strata_json_str(&j, "category", l->category);
    strata_json_str(&j, "confidence", l->confidence);
    strata_json_str(&j, "source", l->source);
    json_steps(&j, d);
    json_result(&j, l, d);
    json_datalink(&j, a, l, d);
    strata_json_close(&j, '{');
}

/* ==== The command ==== */

int cmd_link(int argc, char **argv)
{
    link_args_t a;
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_OK) return rc;
    strata_link_catalog_t *cat = NULL;
    if ((rc = report_load_links(a.catalog, &cat)) != CLI_OK) return rc;
    const strata_link_t *l = report_find_link("link", cat, a.name);
    strata_link_derivation_t d;
    strata_error_t err;
    strata_error_clear(&err);
    if (l == NULL)
        rc = CLI_FAIL;
    else if (strata_link_derive(l, &a.opts, &d, &err) != STRATA_OK)
        rc = cli_usage_error("link", "%s: %s", l->id, err.msg);
    if (rc == CLI_OK && !a.have_length) a.length = is_port(l) ? 30 : 1;
    if (rc == CLI_OK && a.json) {
        print_json(&a, l, &d);
    } else if (rc == CLI_OK) {
        printf("%s: %s  [%s, confidence %s]\nsource: %s\n", l->id, l->name, l->category,
               l->confidence, l->source);
        print_steps(l, &d);
        print_result(l, &d);
        print_protocols(l, &d);
        print_gdr(l, &d);
        print_datalink(&a, l, &d);
    }
    strata_link_catalog_destroy(cat);
    return rc;
}
