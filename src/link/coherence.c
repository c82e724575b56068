/*
 * coherence.c — the coherence layer (strata/coherence.h): CXL.io, .mem and
 * .cache messages counted in flit slots on a CXL link, and the latency and
 * bandwidth of loads, stores and ownership transfers per memory tier.
 *
 * Flit arithmetic, from the CXL 2.0 link layer (ch. 4.2: a 528-bit
 * cache/mem flit of 4 × 16 B slots and a 16-bit CRC, plus the 2 B protocol
 * id of the Flex Bus) and the CXL 3.x 256 B flit (2 B header, 14 B header
 * slot, 14 × 16 B generic slots, 2 B credit return, 8 B CRC, 6 B FEC):
 *   68 B flit : 4 slots per 68 B  -> 17 B of wire per slot;
 *   256 B flit: 15 slots per 256 B -> 17.07 B of wire per slot.
 * A 64 B line is 4 data slots; each message header is one slot (the upper
 * bound; see the header). The 68 B flit rides the PCIe 5.0 PHY after
 * 128b/130b (the catalog's line rate); the 256 B flit carries its own CRC
 * and FEC, so it is charged against the raw signalling rate.
 *
 * Tier figures: every latency comes from a catalog link's latency (its
 * latency_basis cites the source) or from a constant below with its
 * source. Pure functions.
 */
#include "link.h"
#include "strata/coherence.h"

#include <math.h>
#include <string.h>

#define LINE_BYTES 64.0
#define SLOT_BYTES 16.0
/* 68 B flit: 2 B protocol id + 64 B of slots + 2 B CRC (CXL 2.0 §4.2.2) */
#define FLIT68_BYTES 68.0
#define FLIT68_SLOTS 4.0
/* 256 B flit: H slot + 14 G slots (CXL 3.x 256B flit mode, §6.2) */
#define FLIT256_BYTES 256.0
#define FLIT256_SLOTS 15.0
/* PCIe TLP fields around a CXL.io payload: 4 B framing, 16 B 4DW header,
 * 4 B LCRC — the catalog's PCIe packet fields (Intel AN 683541) */
#define TLP_OVERHEAD 24.0

/* A CXL switch traversal adds ~70 ns to a load (Pond, Li et al. ASPLOS'23
 * §3; shared/reference/fabric-host.md B3, M). */
#define CXL_SWITCH_S 70e-9
/* Parts of a CXL.mem load (strata_cxl_load_parts), each from a public
 * source:
 * - DRAM_ACCESS_S: a DDR device's unloaded access, ~50 ns (Cho, Saxena,
 *   Qureshi, Daglis, "A Case for CXL-Centric Server Processors", arXiv
 *   2305.05033, 2023, §2: DDR's "worst-case (unloaded) access latency of
 *   about 50ns"). The host's own path (core, caches, mesh, home agent) is
 *   the local DRAM load less this access; the device's DRAM costs it once.
 * - CXL_PORT_DIR_S: the CXL interface, host and device ports together, 25
 *   ns in each direction (ibid.: "early implementations of the CXL 2.0
 *   standard demonstrated a 25ns latency overhead per direction", citing
 *   Pond, ASPLOS'23; the same paper gives PLDA's 12 ns controller and the
 *   CXL 3.0 spec's 80 ns pin-to-pin device target, Table 13-2, which
 *   implies ~30 ns of interface over the DRAM access). */
#define DRAM_ACCESS_S  50e-9
#define CXL_PORT_DIR_S 25e-9

/* A cache line moving between two cores of one socket: ~40-80 ns on
 * Sapphire Rapids, between sockets ~100-200 ns (chipsandcheese "Core to
 * Core Latency Data on Large Systems", 2023; fabric-host.md B1, L);
 * midpoints. */
#define OWN_SOCKET_S 60e-9
#define OWN_REMOTE_S 150e-9

static const char *const class_names[] = {
#define STRATA_CXL_CLASS_TEXT(name, text) text,
    STRATA_CXL_CLASS_MAP(STRATA_CXL_CLASS_TEXT)
#undef STRATA_CXL_CLASS_TEXT
};

static const char *const tier_names[] = {
#define STRATA_COH_TIER_TEXT(name, text) text,
    STRATA_COH_TIER_MAP(STRATA_COH_TIER_TEXT)
#undef STRATA_COH_TIER_TEXT
};

const char *strata_cxl_class_str(strata_cxl_class_t c)
{
    return (int)c >= 0 && c < STRATA_CXL_CLASS_COUNT ? class_names[c] : "?";
}

const char *strata_coh_tier_str(strata_coh_tier_t t)
{
    return (int)t >= 0 && t < STRATA_COH_TIER_COUNT ? tier_names[t] : "?";
}

/* ==== Flits ==== */

static strata_status_t not_cxl(const strata_link_t *l, strata_error_t *err)
{
    return strata_error_set(err, STRATA_ERR_INVALID,
                            "'%s' is not a CXL link (category %s): CXL.io, CXL.mem and CXL.cache "
                            "run only on CXL-capable links (cxl1, cxl2, cxl3)",
                            l ? l->id : "(none)", l ? l->category : "none");
}

strata_status_t strata_cxl_message(const strata_link_t *l, strata_cxl_class_t c, double bytes,
                                   strata_cxl_msg_t *out, strata_error_t *err)
{
    if (!l || !l->category || strcmp(l->category, "CXL") != 0) return not_cxl(l, err);
    if ((int)c < 0 || c >= STRATA_CXL_CLASS_COUNT)
        return strata_error_set(err, STRATA_ERR_INVALID, "unknown CXL message class %d", (int)c);
    if (!(bytes >= LINE_BYTES) || bytes > 1048576 || fmod(bytes, LINE_BYTES) != 0)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "CXL message of %g B: expected 64 B lines, 64 B to 1 MiB", bytes);
    strata_cxl_msg_t m;
    memset(&m, 0, sizeof(m));
    bool flit256 = strcmp(l->line_code, "flit 242/256") == 0;
    m.flit_bytes = flit256 ? 256 : 68;
    m.slot_wire = flit256 ? FLIT256_BYTES / FLIT256_SLOTS : FLIT68_BYTES / FLIT68_SLOTS;
    double rate = flit256 ? l->raw_dir : l->line_dir;
    int lines = (int)(bytes / LINE_BYTES), data = lines * (int)(LINE_BYTES / SLOT_BYTES);
    bool data_on_rsp = c == STRATA_CXL_MEM_READ || c == STRATA_CXL_CACHE_OWN;
    if (c == STRATA_CXL_IO_DMA) {
        /* one TLP per 64 B line (MPS aside): payload + 24 B in flit slots */
        m.req_slots = (int)ceil(lines * (LINE_BYTES + TLP_OVERHEAD) / SLOT_BYTES);
        m.rsp_slots = 0; /* posted write: no completion */
    } else {
        /* per line: one request or data header slot, plus 4 data slots on
         * the direction that carries data; the other side one slot each */
        m.req_slots = data_on_rsp ? lines : lines + data;
        m.rsp_slots = data_on_rsp ? lines + data : lines;
    }
    m.req_wire = m.req_slots * m.slot_wire;
    m.rsp_wire = m.rsp_slots * m.slot_wire;
    m.efficiency = bytes / (data_on_rsp ? m.rsp_wire : m.req_wire);
    m.data_bw_dir = rate * m.efficiency;
    *out = m;
    return STRATA_OK;
}

strata_status_t strata_cxl_mix_bw(const strata_link_t *l, int lanes, double reads, double writes,
                                  double *bw_p, strata_error_t *err)
{
    if (!(reads >= 0) || !(writes >= 0) || !(reads + writes > 0) || !isfinite(reads + writes))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "CXL read:write mix %g:%g: expected two numbers >= 0, not both 0",
                                reads, writes);
    strata_cxl_msg_t rd, wr;
    strata_status_t st = strata_cxl_message(l, STRATA_CXL_MEM_READ, LINE_BYTES, &rd, err);
    if (st || (st = strata_cxl_message(l, STRATA_CXL_MEM_WRITE, LINE_BYTES, &wr, err))) return st;
    if (lanes < 0 || lanes > 64)
        return strata_error_set(err, STRATA_ERR_INVALID, "CXL link of %d lanes: expected 1 to 64",
                                lanes);
    double width = lanes > 0 && l->lanes > 0 ? (double)lanes / l->lanes : 1;
    double rate = (rd.flit_bytes == 256 ? l->raw_dir : l->line_dir) * width;
    /* wire bytes per unit of the mix, each direction */
    double req = reads * rd.req_wire + writes * wr.req_wire;
    double rsp = reads * rd.rsp_wire + writes * wr.rsp_wire;
    *bw_p = (reads + writes) * LINE_BYTES * rate / fmax(req, rsp);
    return STRATA_OK;
}

/* ==== Tiers ==== */

static double local_bw(const strata_coh_server_t *s)
{
    /* a shared bus: reads alone use all of it (bw_dir is the bus) */
    return s->channels * s->dram->bw_dir;
}

static strata_status_t cxl_figures(const strata_coh_server_t *s, strata_coh_figures_t *f,
                                   int switches, strata_error_t *err)
{
    strata_cxl_msg_t m;
    strata_status_t st = strata_cxl_message(s->cxl, STRATA_CXL_MEM_READ, LINE_BYTES, &m, err);
    if (st) return st;
    double width = s->cxl_lanes > 0 && s->cxl->lanes > 0 ? (double)s->cxl_lanes / s->cxl->lanes : 1;
    f->read_bw = m.data_bw_dir * width;
    /* the catalog's CXL latency is a whole CXL.mem load (its basis: local
     * DDR + 70-90 ns, Pond; SupMario), plus each switch traversal */
    f->load_s = s->cxl->latency + switches * CXL_SWITCH_S;
    f->store_s = f->load_s; /* write-allocate: the store first owns the line */
    f->own_s = f->load_s;
    snprintf(f->how, sizeof(f->how),
             "%s load %.0f ns (catalog) + %d switch x 70 ns (Pond); reads %.1f%% of the "
             "%d B-flit link",
             s->cxl->id, s->cxl->latency * 1e9, switches, 100 * m.efficiency, m.flit_bytes);
    return STRATA_OK;
}

static strata_status_t need(bool ok, strata_coh_tier_t t, const char *what, strata_error_t *err)
{
    if (ok) return STRATA_OK;
    return strata_error_set(err, STRATA_ERR_INVALID, "tier '%s' needs %s", strata_coh_tier_str(t),
                            what);
}

strata_status_t strata_coh_tier(const strata_coh_server_t *s, strata_coh_tier_t t,
                                strata_coh_figures_t *out, strata_error_t *err)
{
    if (!s || !s->dram || s->channels < 1)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "coherence: the server needs a DRAM kind and >= 1 channel");
    strata_coh_figures_t f;
    memset(&f, 0, sizeof(f));
    double dram = s->dram->latency, sock = s->socket ? s->socket->latency : 0;
    strata_status_t st = STRATA_OK;
    switch (t) {
    case STRATA_COH_LOCAL:
        f.load_s = f.store_s = dram, f.own_s = OWN_SOCKET_S, f.read_bw = local_bw(s);
        snprintf(f.how, sizeof(f.how), "%s load %.0f ns; %d channels", s->dram->id, dram * 1e9,
                 s->channels);
        break;
    case STRATA_COH_REMOTE_SOCKET:
        if ((st = need(s->socket && s->socket_links >= 1, t, "a socket link (2 sockets)", err)))
            return st;
        f.load_s = f.store_s = dram + sock, f.own_s = OWN_REMOTE_S;
        f.read_bw = fmin(local_bw(s), s->socket_links * s->socket->bw_dir);
        snprintf(f.how, sizeof(f.how), "%s load + one %s hop %.0f ns; min(DRAM, %d links)",
                 s->dram->id, s->socket->id, sock * 1e9, s->socket_links);
        break;
    case STRATA_COH_CXL_EXPANDER:
    case STRATA_COH_CXL_POOL: {
        int sw = t == STRATA_COH_CXL_POOL ? (s->switches > 0 ? s->switches : 1) : 0;
        if ((st = need(s->cxl != NULL, t, "a CXL link", err))) return st;
        if ((st = cxl_figures(s, &f, sw, err))) return st;
        break;
    }
    case STRATA_COH_PINGPONG_SOCKET:
    case STRATA_COH_PINGPONG_REMOTE:
    case STRATA_COH_PINGPONG_CXL: {
        if (t == STRATA_COH_PINGPONG_REMOTE &&
            (st = need(s->socket != NULL, t, "a socket link (2 sockets)", err)))
            return st;
        if (t == STRATA_COH_PINGPONG_CXL) {
            if ((st = need(s->cxl != NULL, t, "a CXL link", err))) return st;
            strata_cxl_msg_t m;
            if ((st = strata_cxl_message(s->cxl, STRATA_CXL_CACHE_OWN, LINE_BYTES, &m, err)))
                return st;
            /* the device's RdOwn crosses the link and back (the CXL load less
             * the DRAM access), then the home agent moves the line on-socket */
            f.own_s = (s->cxl->latency - dram) + OWN_SOCKET_S;
        } else {
            f.own_s = t == STRATA_COH_PINGPONG_SOCKET ? OWN_SOCKET_S : OWN_REMOTE_S;
        }
        /* every write first takes the line from the other writer */
        f.load_s = f.store_s = f.own_s;
        f.read_bw = LINE_BYTES / f.own_s;
        snprintf(f.how, sizeof(f.how), "one 64 B line per ownership transfer of %.0f ns",
                 f.own_s * 1e9);
        break;
    }
    default:
        return strata_error_set(err, STRATA_ERR_INVALID, "unknown tier %d", (int)t);
    }
    *out = f;
    return STRATA_OK;
}

/* ==== A load, hop by hop ==== */

static void part(strata_cxl_load_t *l, const char *what, double sec, const char *source)
{
    l->part[l->nparts++] = (strata_cxl_load_part_t){what, sec, source};
    l->total_s += sec;
}

strata_status_t strata_cxl_load_parts(const strata_coh_server_t *s, int switches,
                                      strata_cxl_load_t *out, strata_error_t *err)
{
    if (!s || !s->dram || !s->cxl)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "CXL load: the server needs a DRAM kind and a CXL link");
    if (switches < 0 || switches > 8)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "CXL load behind %d switch levels: expected 0 to 8", switches);
    strata_cxl_msg_t m;
    strata_status_t st = strata_cxl_message(s->cxl, STRATA_CXL_MEM_READ, LINE_BYTES, &m, err);
    if (st) return st;
    strata_cxl_load_t l;
    memset(&l, 0, sizeof(l));
    part(&l, "host: core to home agent and back", fmax(s->dram->latency - DRAM_ACCESS_S, 0),
         "local DRAM load less its DRAM access (Cho et al. 2023: ~50 ns)");
    part(&l, "CXL ports, host and device, both directions", 2 * CXL_PORT_DIR_S,
         "25 ns a direction (Cho et al. 2023: early CXL 2.0, Pond)");
    /* the request's slots in whole flits, then the answer's: MemRd is 1
     * slot, MemData a header and 4 data slots (2 of the 68 B flit's 4-slot
     * payloads, 1 of the 256 B flit's 15 slots) */
    double per_flit = m.flit_bytes == 256 ? FLIT256_SLOTS : FLIT68_SLOTS;
    double width = s->cxl_lanes > 0 && s->cxl->lanes > 0 ? (double)s->cxl_lanes / s->cxl->lanes : 1;
    double rate = (m.flit_bytes == 256 ? s->cxl->raw_dir : s->cxl->line_dir) * width;
    double flits = ceil(m.req_slots / per_flit) + ceil(m.rsp_slots / per_flit);
    part(&l, "flits on the wire (request, answer)", flits * m.flit_bytes / rate,
         "flit arithmetic at the link's width");
    if (switches > 0)
        part(&l, "CXL switch traversals", switches * CXL_SWITCH_S, "70 ns each (Pond)");
    part(&l, "device: its DRAM access", DRAM_ACCESS_S, "Cho et al. 2023: ~50 ns unloaded");
    l.missing = "the device controller (CXL port to DDR controller) and retimers: no public "
                "per-hop figure found";
    *out = l;
    return STRATA_OK;
}
