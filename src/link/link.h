/*
 * link.h — internals of the link module shared by its files: the primitive
 * facts of one catalog entry (link_spec_t) as parsed from data/links.json,
 * the line-code and modulation tables, and the derivation entry point used
 * by the catalog loader.
 *
 * A catalog entry is a link_entry_t whose first member is the public
 * strata_link_t, so a public pointer handed out by the catalog converts back
 * to its entry (link_entry_of). Entries only ever come from a catalog.
 */
#ifndef STRATA_LINK_INTERNAL_H
#define STRATA_LINK_INTERNAL_H

#include "strata/link.h"
#include "util.h"

/* A line code: efficiency num/den and why. */
typedef struct link_code {
    const char *name;
    double num, den;
    const char *what;
} link_code_t;

/* A named overhead field of a packet, bytes. */
typedef struct link_part {
    const char *name;
    double bytes;
} link_part_t;

typedef enum {
    LINK_SIG_LANES,  /* lanes × baud × bits/symbol */
    LINK_SIG_GBPS,   /* lanes × a published bit rate, modulation unpublished */
    LINK_SIG_VENDOR, /* a vendor throughput figure (no lane facts in the catalog) */
} link_sig_kind_t;

typedef enum { LINK_FLOW_NONE, LINK_FLOW_PER_PACKETS, LINK_FLOW_PER_BYTES } link_flow_kind_t;

typedef struct link_spec {
    link_sig_kind_t sig;
    int lanes;
    double baud;         /* symbols/s per lane (LANES) */
    int bits_per_symbol; /* 1 NRZ, 2 PAM4 */
    double lane_bps;     /* bit/s per lane (LANES, GBPS) */
    double vendor_Bps;   /* B/s (VENDOR), as quoted */
    int vendor_per_device, vendor_bidi;
    const char *signal_basis;
    const link_code_t *code;
    /* packet step; has_packet 0 means η_pkt = 1 with pkt_basis saying why,
     * or, where the layout is unpublished but the vendor states what a link
     * carries, usable_Bps > 0: η_pkt = usable / the default line rate */
    int has_packet;
    const char *pkt_format, *pkt_basis;
    double usable_Bps;
    double mtu, mtu_min, mtu_max;
    link_part_t *in_mtu, *per_pkt;
    size_t n_in_mtu, n_per_pkt;
    /* flow-control step */
    link_flow_kind_t flow;
    double flow_bytes, flow_per;
    const char *flow_basis;
} link_spec_t;

typedef struct link_entry {
    strata_link_t pub; /* first: public pointers convert back */
    link_spec_t spec;
} link_entry_t;

struct strata_link_catalog {
    util_arena_t *arena; /* every string and array below */
    link_entry_t *entry;
    size_t n;
    strata_latency_t *lat;
    size_t nlat;
    uint32_t *index; /* ids by case-folded hash, entry + 1 (0: empty); nindex a power of two */
    size_t nindex;
};

/* State of one load: the document (for positions), where strings go, and
 * the caller's error record. */
typedef struct link_parse_ctx {
    const util_json_doc_t *doc;
    util_arena_t *arena;
    strata_error_t *err;
} link_parse_ctx_t;

/* Field helpers of the loader (catalog.c), each failing with a positioned
 * PARSE error. fmt has one %s, the key. */
strata_status_t link_bad(link_parse_ctx_t *c, const json_t *v, const char *fmt, const char *key);
/* Non-empty string, copied into the arena. */
strata_status_t link_req_str(link_parse_ctx_t *c, const json_t *obj, const char *key,
                             const char **out);
/* Number in (0, 1e6], or [0, 1e6] when zero_ok. */
strata_status_t link_req_num(link_parse_ctx_t *c, const json_t *obj, const char *key, int zero_ok,
                             double *out);
/* The optional "latencies" array of the catalog root (latency.c). */
strata_status_t link_latencies_parse(link_parse_ctx_t *c, const json_t *root,
                                     strata_link_catalog_t *cat);

static inline const link_entry_t *link_entry_of(const strata_link_t *l)
{
    return (const link_entry_t *)(const void *)l;
}

/* Line code by name (exact), or NULL. The table lists every accepted name. */
const link_code_t *link_code_find(const char *name);
/* "8b/10b, 64b/66b, ..." for error messages. */
const char *link_code_names(void);
/* Bits per symbol of a modulation name ("NRZ" 1, "PAM4" 2), 0 if unknown. */
int link_modulation_bits(const char *name);

/* Sum of a part list, bytes. */
double link_parts_sum(const link_part_t *p, size_t n);

/* As strata_link_catalog_load, from text in memory (name used in errors).
 * For tests and fuzzing. */
strata_status_t link_catalog_load_text(const char *text, size_t len, const char *name,
                                       strata_link_catalog_t **cat_p, strata_error_t *err);

/* Fill the derived fields of e->pub from e->spec at default options. */
strata_status_t link_derive_defaults(link_entry_t *e, strata_error_t *err);

#endif
