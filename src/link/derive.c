/*
 * derive.c — every bandwidth of the catalog, derived from primitive facts
 * (shared/reference/links.md, "Formula used"):
 *
 *   BW_dir = lanes × lane_rate × η_line × η_pkt × η_flow / 8
 *
 *   lane_rate = baud × bits/symbol (NRZ 1, PAM4 2)
 *   η_line    = the line code's data bits / line bits (table below)
 *   η_pkt     = payload / wire bytes of one packet at the MTU
 *   η_flow    = share of the wire left after ACK / credit / DLLP traffic
 *
 * Each step is recorded with its arithmetic in words so `strata link` can
 * print a derivation an engineer can check by hand. Entries without lane
 * facts (HBM, HCCS, ICI v5e+) start from a vendor throughput figure and say
 * so. Pure functions; cheap (well under a microsecond per entry).
 */
#include "link.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ==== Line codes and modulations ==== */

static const link_code_t codes[] = {
    /* IEEE 802.3 cl. 36 / PCIe 1.0-2.0 / IB SDR-QDR */
    {"8b/10b", 8, 10, "8 data bits per 10 line bits"},
    /* IEEE 802.3 cl. 49 (10GBASE-R), IB FDR/EDR */
    {"64b/66b", 64, 66, "64 data bits per 66-bit block"},
    /* PCIe 3.0-5.0, CXL 1.1/2.0 (Intel AN 708 683390) */
    {"128b/130b", 128, 130, "128 data bits per 130-bit block"},
    /* PCIe 6.0/7.0 and CXL 3.x FLIT: 256 B = 242 B TLP+DLP + 8 B CRC + 6 B FEC (links.md) */
    {"flit 242/256", 242, 256, "242 B of each 256 B flit; 8 B CRC + 6 B FEC"},
    /* 25G/100G NRZ: 64b/66b transcoded to 256b/257b, RS(528,514) FEC (Intel AN 846) */
    {"RS(528,514)+256b/257b", 514.0 * 256, 528.0 * 257, "256b/257b transcode, RS(528,514) FEC"},
    /* 50G+/lane PAM4 Ethernet and IB HDR/NDR/XDR: RS(544,514) "KP4" FEC (Intel 683852) */
    {"RS(544,514)+256b/257b", 514.0 * 256, 544.0 * 257, "256b/257b transcode, RS(544,514) FEC"},
    /* parallel memory bus: data pins carry data */
    {"none", 1, 1, "parallel bus, no line code"},
    /* a software rate limit (Linux tc tbf) counts frame bytes, not line bits */
    {"rate limit", 1, 1, "a rate limit that counts frame bytes (no line code on a veth)"},
    /* NVLink, xGMI, HCCS, ICI: vendor figures equal the signalling rate */
    {"unpublished", 1, 1, "line code not published; vendor figures equal the signalling rate"},
};

const link_code_t *link_code_find(const char *name)
{
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (strcmp(codes[i].name, name) == 0) return &codes[i];
    return NULL;
}

const char *link_code_names(void)
{
    return "8b/10b, 64b/66b, 128b/130b, flit 242/256, RS(528,514)+256b/257b, "
           "RS(544,514)+256b/257b, none, rate limit, unpublished";
}

int link_modulation_bits(const char *name)
{
    if (strcmp(name, "NRZ") == 0) return 1;
    if (strcmp(name, "PAM4") == 0) return 2; /* 2 bits per symbol, 4 levels */
    return 0;
}

double link_parts_sum(const link_part_t *p, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i].bytes;
    return s;
}

/* ==== Formatting ==== */

/* GB/s (1e9 B/s) with precision that keeps 3-4 significant digits. */
static const char *gbs(double Bps, char *buf, size_t len)
{
    double g = Bps / 1e9;
    snprintf(buf, len, g >= 10 ? "%.1f GB/s" : g >= 1 ? "%.2f GB/s" : "%.3f GB/s", g);
    return buf;
}

static strata_link_step_t *add_step(strata_link_derivation_t *d, const char *what, double eta,
                                    double bw)
{
    strata_link_step_t *s = &d->step[d->nsteps++];
    snprintf(s->what, sizeof(s->what), "%s", what);
    s->eta = eta;
    s->bw_dir = bw;
    return s;
}

/* Step text via vsnprintf: truncation of an over-long vendor name is fine. */
static void set_how(strata_link_step_t *s, const char *fmt, ...) STRATA_PRINTF(2, 3);
static void set_how(strata_link_step_t *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->how, sizeof(s->how), fmt, ap);
    va_end(ap);
}

/* "16 B STP framing + sequence + ..." */
static void parts_text(const link_part_t *p, size_t n, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%g %s", i ? " + " : "", p[i].bytes, p[i].name);
}

/* ==== Steps ==== */

static void step_signal(const link_spec_t *sp, const strata_link_t *l, int lanes,
                        strata_link_derivation_t *d)
{
    char b[32];
    if (sp->sig == LINK_SIG_VENDOR) {
        double div = (sp->vendor_bidi ? 2.0 : 1.0) * (sp->vendor_per_device ? l->links : 1);
        d->raw_dir = sp->vendor_Bps / div;
        strata_link_step_t *s = add_step(d, "vendor figure", 1, d->raw_dir);
        set_how(s, "%g GB/s %s%s / %g = %s per link per direction", sp->vendor_Bps / 1e9,
                sp->vendor_bidi ? "bidirectional " : "",
                sp->vendor_per_device ? "per device" : "per link", div, gbs(d->raw_dir, b, 32));
        return;
    }
    d->raw_dir = lanes * sp->lane_bps / 8;
    strata_link_step_t *s = add_step(d, "signalling", 1, d->raw_dir);
    if (sp->sig == LINK_SIG_GBPS)
        set_how(s, "%d lane%s x %g Gb/s (modulation unpublished) / 8 = %s", lanes,
                lanes > 1 ? "s" : "", sp->lane_bps / 1e9, gbs(d->raw_dir, b, 32));
    else
        set_how(s, "%d lane%s x %.7g GBd %s (%d bit/symbol) = %.7g Gb/s / 8 = %s", lanes,
                lanes > 1 ? "s" : "", sp->baud / 1e9, sp->bits_per_symbol == 2 ? "PAM4" : "NRZ",
                sp->bits_per_symbol, lanes * sp->lane_bps / 1e9, gbs(d->raw_dir, b, 32));
}

static void step_line(const link_spec_t *sp, strata_link_derivation_t *d)
{
    char b[32];
    d->eta_line = sp->code->num / sp->code->den;
    d->line_dir = d->raw_dir * d->eta_line;
    if (sp->sig == LINK_SIG_VENDOR) return;
    strata_link_step_t *s = add_step(d, "line code", d->eta_line, d->line_dir);
    set_how(s, "x %.5f (%s: %s) = %s", d->eta_line, sp->code->name, sp->code->what,
            gbs(d->line_dir, b, 32));
}

static void step_packet(const link_spec_t *sp, double mtu, strata_link_derivation_t *d)
{
    char b[32], parts[160], in[96];
    if (!sp->has_packet) {
        d->eta_pkt = 1;
        if (sp->usable_Bps > 0) /* of the default lanes' line rate: fewer lanes, less */
            d->eta_pkt = sp->usable_Bps / (sp->lanes * sp->lane_bps / 8 * d->eta_line);
        d->pkt_dir = d->line_dir * d->eta_pkt;
        if (sp->usable_Bps > 0) {
            strata_link_step_t *s = add_step(d, "packet", d->eta_pkt, d->pkt_dir);
            set_how(s, "x %.4g (layout unpublished: the vendor's usable rate, %s per link) = %s",
                    d->eta_pkt, gbs(sp->usable_Bps, parts, sizeof(parts)), gbs(d->pkt_dir, b, 32));
        }
        return;
    }
    d->mtu = mtu;
    d->payload = mtu - link_parts_sum(sp->in_mtu, sp->n_in_mtu);
    d->wire = mtu + link_parts_sum(sp->per_pkt, sp->n_per_pkt);
    d->eta_pkt = d->payload / d->wire;
    d->pkt_dir = d->line_dir * d->eta_pkt;
    parts_text(sp->per_pkt, sp->n_per_pkt, parts, sizeof(parts));
    parts_text(sp->in_mtu, sp->n_in_mtu, in, sizeof(in));
    strata_link_step_t *s = add_step(d, "packet", d->eta_pkt, d->pkt_dir);
    set_how(s, "x %g/%g (%s, MTU %g%s%s; wire = MTU + %s) = %s", d->payload, d->wire,
            sp->pkt_format, mtu, sp->n_in_mtu ? " incl. " : "", in, parts, gbs(d->pkt_dir, b, 32));
}

static void step_flow(const link_spec_t *sp, strata_link_derivation_t *d)
{
    char b[32];
    d->eta_flow = 1;
    if (sp->flow == LINK_FLOW_PER_PACKETS && sp->flow_bytes > 0)
        d->eta_flow = d->wire / (d->wire + sp->flow_bytes / sp->flow_per);
    else if (sp->flow == LINK_FLOW_PER_BYTES)
        d->eta_flow = 1 - sp->flow_bytes / sp->flow_per;
    d->bw_dir = d->pkt_dir * d->eta_flow;
    if (sp->flow == LINK_FLOW_NONE) return;
    strata_link_step_t *s = add_step(d, "flow control", d->eta_flow, d->bw_dir);
    if (sp->flow_bytes == 0)
        set_how(s, "x 1 (no flow-control bytes per packet modelled) = %s", gbs(d->bw_dir, b, 32));
    else if (sp->flow == LINK_FLOW_PER_BYTES)
        set_how(s, "x (1 - %g/%g) (%g B of every %g B carry ACK/credits) = %s", sp->flow_bytes,
                sp->flow_per, sp->flow_bytes, sp->flow_per, gbs(d->bw_dir, b, 32));
    else
        set_how(s, "x %g/%g (%g B of ACK/credit traffic per %g packet%s) = %s", d->wire,
                d->wire + sp->flow_bytes / sp->flow_per, sp->flow_bytes, sp->flow_per,
                sp->flow_per > 1 ? "s" : "", gbs(d->bw_dir, b, 32));
}

/* ==== Entry points ==== */

static strata_status_t resolve_mtu(const link_spec_t *sp, const strata_link_opts_t *o,
                                   double *mtu_p, strata_error_t *err)
{
    double in = sp->has_packet ? link_parts_sum(sp->in_mtu, sp->n_in_mtu) : 0;
    double mtu = sp->mtu;
    if (o && o->mtu > 0) mtu = o->mtu;
    if (o && o->payload > 0) mtu = o->payload + in;
    if ((o && (o->mtu > 0 || o->payload > 0)) && !sp->has_packet)
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "this link has no packet step (%s), so no MTU or payload applies",
                                sp->pkt_basis);
    if (sp->has_packet && (mtu < sp->mtu_min || mtu > sp->mtu_max))
        return strata_error_set(
            err, STRATA_ERR_RANGE, "%s allows MTU %g..%g B (payload %g..%g B), got MTU %g B",
            sp->pkt_format, sp->mtu_min, sp->mtu_max, sp->mtu_min - in, sp->mtu_max - in, mtu);
    *mtu_p = mtu;
    return STRATA_OK;
}

strata_status_t strata_link_derive(const strata_link_t *link, const strata_link_opts_t *opts,
                                   strata_link_derivation_t *d_p, strata_error_t *err)
{
    if (link == NULL || d_p == NULL)
        return strata_error_set(err, STRATA_ERR_INVALID, "strata_link_derive: NULL argument");
    const link_spec_t *sp = &link_entry_of(link)->spec;
    int lanes = opts && opts->lanes ? opts->lanes : sp->lanes;
    if (lanes < 1 || lanes > 1024)
        return strata_error_set(err, STRATA_ERR_RANGE, "lanes must be 1..1024, got %d", lanes);
    if (sp->sig == LINK_SIG_VENDOR && lanes != sp->lanes)
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "%s has no lane facts (vendor figure), so --lanes does not apply",
                                link->id);
    double mtu = 0;
    strata_status_t st = resolve_mtu(sp, opts, &mtu, err);
    if (st != STRATA_OK) return st;
    strata_link_derivation_t d = {.lanes = lanes};
    step_signal(sp, link, lanes, &d);
    step_line(sp, &d);
    step_packet(sp, mtu, &d);
    step_flow(sp, &d);
    *d_p = d;
    return STRATA_OK;
}

strata_status_t link_derive_defaults(link_entry_t *e, strata_error_t *err)
{
    strata_link_derivation_t d;
    strata_status_t st = strata_link_derive(&e->pub, NULL, &d, err);
    if (st != STRATA_OK) return st;
    strata_link_t *l = &e->pub;
    const link_spec_t *sp = &e->spec;
    l->lanes = sp->lanes;
    l->raw_dir = d.raw_dir;
    l->line_dir = d.line_dir;
    l->pkt_dir = d.pkt_dir;
    l->bw_dir = d.bw_dir;
    l->bw_bidi = l->full_duplex ? 2 * d.bw_dir : d.bw_dir;
    l->device_bw_dir = l->links * d.bw_dir;
    l->lane_rate = sp->sig == LINK_SIG_VENDOR ? 8 * d.raw_dir : sp->lane_bps;
    l->eta_line = d.eta_line;
    l->eta_pkt = d.eta_pkt;
    l->eta_flow = d.eta_flow;
    l->mtu = d.mtu;
    l->payload = d.payload;
    l->wire = d.wire;
    l->vendor_figure = sp->sig == LINK_SIG_VENDOR;
    l->modulation =
        sp->sig == LINK_SIG_LANES ? (sp->bits_per_symbol == 2 ? "PAM4" : "NRZ") : "unpublished";
    l->line_code = sp->code->name;
    l->packet_format = sp->pkt_format;
    l->signal_basis = sp->signal_basis ? sp->signal_basis : "";
    l->packet_basis = sp->pkt_basis ? sp->pkt_basis : "";
    l->flow_basis = sp->flow_basis ? sp->flow_basis : "";
    return STRATA_OK;
}

/* ==== GPUDirect RDMA read path (link.h) ==== */

/* PCIe Base Spec 2.2.7 / 2.2.9: MRd with a 64-bit address has a 4 DW
 * header, CplD a 3 DW one; the spec's default Max_Read_Request_Size is
 * 512 B (Device Control register, 010b). */
#define PCIE_MRD64_HDR    16.0
#define PCIE_CPLD_HDR     12.0
#define PCIE_MRRS_DEFAULT 512.0

static bool pow2_in(double x, double lo, double hi)
{
    if (!(x >= lo && x <= hi)) return false;
    for (double v = lo; v <= hi; v *= 2)
        if (x == v) return true;
    return false;
}

/* Framing bytes of one TLP: the entry's per-packet parts other than its
 * header (STP framing/sequence, LCRC). */
static double tlp_framing(const link_spec_t *sp)
{
    double f = 0;
    for (size_t i = 0; i < sp->n_per_pkt; i++)
        if (!strstr(sp->per_pkt[i].name, "header")) f += sp->per_pkt[i].bytes;
    return f;
}

/* The DLLP bytes one TLP of `wire` bytes carries with it (the entry's
 * flow-control rule). */
static double tlp_dllp(const link_spec_t *sp, double wire)
{
    if (sp->flow == LINK_FLOW_PER_PACKETS && sp->flow_per > 0) return sp->flow_bytes / sp->flow_per;
    if (sp->flow == LINK_FLOW_PER_BYTES && sp->flow_per > 0)
        return wire * sp->flow_bytes / (sp->flow_per - sp->flow_bytes);
    return 0;
}

strata_status_t strata_link_gdr_read(const strata_link_t *link, int lanes, double mps, double mrrs,
                                     double rcb, strata_link_gdr_t *g_p, strata_error_t *err)
{
    if (!link || !g_p) return strata_error_set(err, STRATA_ERR_INVALID, "gdr read: NULL argument");
    const link_spec_t *sp = &link_entry_of(link)->spec;
    if (strcmp(link->category, "PCIe") != 0 || !sp->has_packet ||
        strncmp(sp->code->name, "flit", 4) == 0)
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                "%s: the GPUDirect read path is modelled for non-flit PCIe "
                                "(Gen1-5) only",
                                link->id);
    if (mps == 0) mps = sp->mtu;
    if (mrrs == 0) mrrs = PCIE_MRRS_DEFAULT;
    if (!pow2_in(mps, 128, 4096) || !pow2_in(mrrs, 128, 4096))
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "MPS and MRRS must be powers of two in 128..4096 B, got %g and %g",
                                mps, mrrs);
    if (rcb != 0 && rcb != 64 && rcb != 128)
        return strata_error_set(err, STRATA_ERR_RANGE, "RCB must be 64 or 128 B, got %g", rcb);
    strata_link_opts_t o = {.lanes = lanes};
    strata_link_derivation_t d;
    strata_status_t st = strata_link_derive(link, &o, &d, err);
    if (st != STRATA_OK) return st;
    strata_link_gdr_t g = {.mps = mps, .mrrs = mrrs, .rcb = rcb, .line_dir = d.line_dir};
    double fr = tlp_framing(sp);
    g.cpl = rcb > 0 ? rcb : mps < mrrs ? mps : mrrs;
    g.cpl_per_req = mrrs / g.cpl;
    double cw = g.cpl + fr + PCIE_CPLD_HDR, rw = fr + PCIE_MRD64_HDR;
    double cd = tlp_dllp(sp, cw), rd = tlp_dllp(sp, rw);
    g.cpl_wire = cw + cd, g.req_wire = rw + rd;
    g.eta_read = g.cpl / g.cpl_wire;
    g.req_per_byte = g.req_wire / mrrs;
    g.bw_dir = g.line_dir * g.eta_read;
    snprintf(g.how_req, sizeof(g.how_req),
             "1 MRd per %g B read: %g B framing+LCRC + %g B header (4 DW) + %g B DLLP share = "
             "%g B the other way (%.4g per byte read)",
             mrrs, fr, PCIE_MRD64_HDR, rd, g.req_wire, g.req_per_byte);
    snprintf(g.how_cpl, sizeof(g.how_cpl),
             "%g CplD of %g B per request: %g + %g framing+LCRC + %g header (3 DW) + %g DLLP share "
             "= %g B: x %g/%g = %.5f",
             g.cpl_per_req, g.cpl, g.cpl, fr, PCIE_CPLD_HDR, cd, g.cpl_wire, g.cpl, g.cpl_wire,
             g.eta_read);
    *g_p = g;
    return STRATA_OK;
}

/* ==== Store packets without a catalog ==== */

double strata_link_store_eta(const char *kind)
{
    bool nvl = kind && (strncmp(kind, "nvlink", 6) == 0 || strncmp(kind, "nvswitch", 8) == 0);
    return nvl ? STRATA_NVLINK_PAYLOAD / (STRATA_NVLINK_PAYLOAD + STRATA_NVLINK_OVERHEAD) : 1.0;
}

double strata_link_sm_store_share(const strata_link_t *l)
{
    if (!l || !l->packet_format || strcmp(l->packet_format, "PCIe TLP (non-flit)") != 0 ||
        !(l->payload > STRATA_SM_STORE_BYTES) || !(l->bw_dir > 0))
        return 1.0;
    strata_link_opts_t o = {.payload = STRATA_SM_STORE_BYTES};
    strata_link_derivation_t d;
    if (strata_link_derive(l, &o, &d, NULL) != STRATA_OK) return 1.0;
    return d.bw_dir / l->bw_dir;
}

/* ==== Collective protocols ==== */

static const strata_link_protocol_t protocols[STRATA_LINK_PROTOCOLS] = {
    /* LL: each 16 B line = 2 x (4 B data + 4 B flag), stored with one 8 B atomic */
    {"LL", 8.0 / 16.0, "16 B lines carry 2 x 4 B of data and 2 x 4 B of flags: 8/16"},
    /* LL128: 128 B lines, 120 B data + 8 B flag (NCCL_LL128_DATAELEMS 15 of 16 u64) */
    {"LL128", 120.0 / 128.0, "128 B lines carry 120 B of data and an 8 B flag: 120/128"},
    /* Simple: 4 MiB buffers in 8 steps, data only; one flag handshake per step */
    {"Simple", 1.0, "data only, in steps of a 4 MiB buffer split 8 ways, one handshake each"},
};

const strata_link_protocol_t *strata_link_protocol(int i)
{
    return i >= 0 && i < STRATA_LINK_PROTOCOLS ? &protocols[i] : NULL;
}
