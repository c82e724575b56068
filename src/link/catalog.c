/*
 * catalog.c — loading data/links.json into an immutable catalog of link
 * kinds, and finding entries by id.
 *
 * Design: the file holds primitive facts only (lane count, symbol rate,
 * modulation, line code, packet fields, flow-control traffic, latency and
 * the source of each). The loader validates every field and reports the
 * first problem as file:line:column; then derive.c computes every bandwidth.
 * Strings live in one arena owned by the catalog, entries in one array.
 *
 * Workload: about 60 entries, loaded once per process (tens of µs; see
 * bench/link). Lookups are linear, which at this size beats a hash table.
 */
#include "link.h"

#include <ctype.h>
#include <string.h>

typedef link_parse_ctx_t parse_ctx_t;

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        strata_status_t st_ = (expr);                                                              \
        if (st_ != STRATA_OK) return st_;                                                          \
    } while (0)

/* ==== Field helpers ==== */

strata_status_t link_bad(parse_ctx_t *c, const json_t *v, const char *fmt, const char *key)
{
    return util_json_error(c->doc, v, c->err, STRATA_ERR_PARSE, fmt, key);
}

/* Required string copied into the arena; empty strings are refused. */
strata_status_t link_req_str(parse_ctx_t *c, const json_t *obj, const char *key, const char **out)
{
    const char *s;
    TRY(util_json_req_str(c->doc, obj, key, &s, c->err));
    if (*s == '\0')
        return link_bad(c, json_object_get(obj, key), "field \"%s\" must not be empty", key);
    *out = util_arena_strdup(c->arena, s);
    return *out ? STRATA_OK : strata_error_set(c->err, STRATA_ERR_NOMEM, "out of memory");
}

static strata_status_t opt_str(parse_ctx_t *c, const json_t *obj, const char *key, const char **out)
{
    if (json_object_get(obj, key) == NULL) {
        *out = "";
        return STRATA_OK;
    }
    return link_req_str(c, obj, key, out);
}

/* Required number > 0 (or ≥ 0 when zero_ok) and ≤ 1e6: no physical figure
 * of the catalog (GBd, Gb/s, GB/s, bytes, µs) comes near it, so a larger
 * one is a typo and would otherwise turn into inf downstream. */
strata_status_t link_req_num(parse_ctx_t *c, const json_t *obj, const char *key, int zero_ok,
                             double *out)
{
    TRY(util_json_req_num(c->doc, obj, key, out, c->err));
    if (*out < 0 || (*out == 0 && !zero_ok))
        return link_bad(
            c, json_object_get(obj, key),
            zero_ok ? "field \"%s\" must not be negative" : "field \"%s\" must be positive", key);
    if (*out > 1e6) return link_bad(c, json_object_get(obj, key), "field \"%s\" is over 1e6", key);
    return STRATA_OK;
}

/* Required integer in 1..max. */
static strata_status_t req_count(parse_ctx_t *c, const json_t *obj, const char *key, long max,
                                 int *out)
{
    long v;
    TRY(util_json_req_int(c->doc, obj, key, &v, c->err));
    if (v < 1 || v > max)
        return util_json_error(c->doc, json_object_get(obj, key), c->err, STRATA_ERR_PARSE,
                               "field \"%s\" must be a count from 1 to %ld, found %ld", key, max,
                               v);
    *out = (int)v;
    return STRATA_OK;
}

/* ==== Signal ==== */

static strata_status_t parse_lanes_signal(parse_ctx_t *c, const json_t *s, link_spec_t *sp)
{
    static const char *const keys[] = {"lanes", "baud_gbd", "modulation", NULL};
    TRY(util_json_check_keys(c->doc, s, keys, c->err));
    const char *mod;
    TRY(req_count(c, s, "lanes", 1024, &sp->lanes));
    TRY(link_req_num(c, s, "baud_gbd", 0, &sp->baud));
    TRY(util_json_req_str(c->doc, s, "modulation", &mod, c->err));
    sp->bits_per_symbol = link_modulation_bits(mod);
    if (sp->bits_per_symbol == 0)
        return util_json_error(c->doc, json_object_get(s, "modulation"), c->err, STRATA_ERR_PARSE,
                               "unknown modulation \"%s\" (known: NRZ, PAM4)", mod);
    sp->sig = LINK_SIG_LANES;
    sp->baud *= 1e9;
    sp->lane_bps = sp->baud * sp->bits_per_symbol;
    return STRATA_OK;
}

static strata_status_t parse_gbps_signal(parse_ctx_t *c, const json_t *s, link_spec_t *sp)
{
    static const char *const keys[] = {"lanes", "gbps", "basis", NULL};
    TRY(util_json_check_keys(c->doc, s, keys, c->err));
    TRY(req_count(c, s, "lanes", 1024, &sp->lanes));
    TRY(link_req_num(c, s, "gbps", 0, &sp->lane_bps));
    TRY(link_req_str(c, s, "basis", &sp->signal_basis));
    sp->sig = LINK_SIG_GBPS;
    sp->lane_bps *= 1e9;
    return STRATA_OK;
}

static strata_status_t parse_vendor_signal(parse_ctx_t *c, const json_t *s, link_spec_t *sp)
{
    static const char *const keys[] = {"vendor_gbs", "per", "bidi", "basis", NULL};
    TRY(util_json_check_keys(c->doc, s, keys, c->err));
    const char *per;
    bool bidi = false;
    TRY(link_req_num(c, s, "vendor_gbs", 0, &sp->vendor_Bps));
    TRY(util_json_req_str(c->doc, s, "per", &per, c->err));
    if (strcmp(per, "link") != 0 && strcmp(per, "device") != 0)
        return link_bad(c, json_object_get(s, "per"), "field \"%s\" must be \"link\" or \"device\"",
                        "per");
    TRY(util_json_opt_bool(c->doc, s, "bidi", &bidi, c->err));
    TRY(link_req_str(c, s, "basis", &sp->signal_basis));
    sp->sig = LINK_SIG_VENDOR;
    sp->lanes = 1;
    sp->vendor_Bps *= 1e9;
    sp->vendor_per_device = strcmp(per, "device") == 0;
    sp->vendor_bidi = bidi;
    return STRATA_OK;
}

static strata_status_t parse_signal(parse_ctx_t *c, const json_t *e, link_spec_t *sp)
{
    json_t *s;
    TRY(util_json_req_obj(c->doc, e, "signal", &s, c->err));
    if (json_object_get(s, "vendor_gbs")) return parse_vendor_signal(c, s, sp);
    if (json_object_get(s, "gbps")) return parse_gbps_signal(c, s, sp);
    return parse_lanes_signal(c, s, sp);
}

/* ==== Packet and flow control ==== */

/* An array of [name, bytes] pairs. */
static strata_status_t parse_parts(parse_ctx_t *c, const json_t *pk, const char *key,
                                   link_part_t **out, size_t *n_out)
{
    json_t *arr, *it;
    size_t i;
    TRY(util_json_req_arr(c->doc, pk, key, &arr, c->err));
    link_part_t *p = util_arena_alloc(c->arena, (json_array_size(arr) + 1) * sizeof(*p));
    if (p == NULL) return strata_error_set(c->err, STRATA_ERR_NOMEM, "out of memory");
    json_array_foreach(arr, i, it)
    {
        json_t *nm = json_array_get(it, 0), *b = json_array_get(it, 1);
        if (!json_is_array(it) || json_array_size(it) != 2 || !json_is_string(nm) ||
            !json_is_number(b) || json_number_value(b) < 0 || json_number_value(b) > 1e6)
            return link_bad(c, it, "each item of \"%s\" must be [\"name\", 0 <= bytes <= 1e6]",
                            key);
        p[i].name = util_arena_strdup(c->arena, json_string_value(nm));
        p[i].bytes = json_number_value(b);
        if (p[i].name == NULL) return strata_error_set(c->err, STRATA_ERR_NOMEM, "out of memory");
    }
    *out = p;
    *n_out = json_array_size(arr);
    return STRATA_OK;
}

static strata_status_t parse_packet_sizes(parse_ctx_t *c, const json_t *pk, link_spec_t *sp)
{
    TRY(link_req_num(c, pk, "mtu", 0, &sp->mtu));
    TRY(link_req_num(c, pk, "mtu_min", 0, &sp->mtu_min));
    TRY(link_req_num(c, pk, "mtu_max", 0, &sp->mtu_max));
    if (sp->mtu < sp->mtu_min || sp->mtu > sp->mtu_max)
        return link_bad(c, json_object_get(pk, "mtu"),
                        "field \"%s\" must lie within mtu_min..mtu_max", "mtu");
    TRY(parse_parts(c, pk, "in_mtu", &sp->in_mtu, &sp->n_in_mtu));
    TRY(parse_parts(c, pk, "per_packet", &sp->per_pkt, &sp->n_per_pkt));
    if (link_parts_sum(sp->in_mtu, sp->n_in_mtu) >= sp->mtu_min)
        return link_bad(c, json_object_get(pk, "in_mtu"),
                        "headers in \"%s\" leave no payload at mtu_min", "in_mtu");
    sp->has_packet = 1;
    return STRATA_OK;
}

/* A vendor's usable rate where the packet layout is unpublished (format
 * "none"): it needs lane facts (a vendor throughput figure already is what
 * a link carries) and may not exceed the line rate. */
static strata_status_t parse_usable(parse_ctx_t *c, const json_t *pk, link_spec_t *sp)
{
    const json_t *u = json_object_get(pk, "usable_gbs");
    if (u == NULL) return STRATA_OK;
    if (strcmp(sp->pkt_format, "none") != 0)
        return link_bad(c, u, "field \"%s\" applies only where the packet format is \"none\"",
                        "usable_gbs");
    if (sp->sig == LINK_SIG_VENDOR)
        return link_bad(c, u, "field \"%s\" needs a lane signal, not a vendor figure",
                        "usable_gbs");
    TRY(link_req_num(c, pk, "usable_gbs", 0, &sp->usable_Bps));
    sp->usable_Bps *= 1e9;
    if (sp->usable_Bps > sp->lanes * sp->lane_bps / 8 * sp->code->num / sp->code->den)
        return link_bad(c, u, "field \"%s\" exceeds the link's line rate", "usable_gbs");
    return STRATA_OK;
}

static strata_status_t parse_packet(parse_ctx_t *c, const json_t *e, link_spec_t *sp)
{
    static const char *const keys[] = {"format",     "mtu",   "mtu_min",    "mtu_max", "in_mtu",
                                       "per_packet", "basis", "usable_gbs", NULL};
    json_t *pk;
    TRY(util_json_req_obj(c->doc, e, "packet", &pk, c->err));
    TRY(util_json_check_keys(c->doc, pk, keys, c->err));
    TRY(link_req_str(c, pk, "format", &sp->pkt_format));
    TRY(parse_usable(c, pk, sp));
    if (strcmp(sp->pkt_format, "none") == 0) return link_req_str(c, pk, "basis", &sp->pkt_basis);
    TRY(opt_str(c, pk, "basis", &sp->pkt_basis));
    return parse_packet_sizes(c, pk, sp);
}

static strata_status_t parse_flow(parse_ctx_t *c, const json_t *e, link_spec_t *sp)
{
    static const char *const keys[] = {"bytes", "per_packets", "per_bytes", "basis", NULL};
    json_t *f = json_object_get(e, "flow");
    sp->flow = LINK_FLOW_NONE;
    sp->flow_basis = "";
    if (f == NULL) return STRATA_OK;
    TRY(util_json_req_obj(c->doc, e, "flow", &f, c->err));
    TRY(util_json_check_keys(c->doc, f, keys, c->err));
    TRY(link_req_num(c, f, "bytes", 1, &sp->flow_bytes));
    TRY(link_req_str(c, f, "basis", &sp->flow_basis));
    int pp = json_object_get(f, "per_packets") != NULL,
        pb = json_object_get(f, "per_bytes") != NULL;
    if (pp == pb) return link_bad(c, f, "%s needs exactly one of per_packets, per_bytes", "flow");
    if (pp && !sp->has_packet)
        return link_bad(c, f, "%s per_packets needs a packet format", "flow");
    sp->flow = pp ? LINK_FLOW_PER_PACKETS : LINK_FLOW_PER_BYTES;
    TRY(link_req_num(c, f, pp ? "per_packets" : "per_bytes", 0, &sp->flow_per));
    /* per_bytes: the ACK/credit bytes are part of every per_bytes, so the
     * goodput factor 1 - bytes/per_bytes must stay above 0 */
    if (pb && sp->flow_bytes >= sp->flow_per)
        return link_bad(c, f, "%s: bytes must be less than per_bytes (they are part of it)",
                        "flow");
    return STRATA_OK;
}

/* ==== Entry ==== */

static strata_status_t parse_strings(parse_ctx_t *c, const json_t *e, strata_link_t *l)
{
    TRY(link_req_str(c, e, "id", &l->id));
    TRY(link_req_str(c, e, "category", &l->category));
    TRY(link_req_str(c, e, "name", &l->name));
    TRY(link_req_str(c, e, "source", &l->source));
    TRY(link_req_str(c, e, "confidence", &l->confidence));
    if (strcmp(l->confidence, "H") && strcmp(l->confidence, "M") && strcmp(l->confidence, "L"))
        return link_bad(c, json_object_get(e, "confidence"),
                        "field \"%s\" must be \"H\", \"M\" or \"L\"", "confidence");
    for (const char *p = l->id; *p; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-'))
            return link_bad(c, json_object_get(e, "id"),
                            "field \"%s\" must use only a-z, 0-9 and '-'", "id");
    TRY(opt_str(c, e, "note", &l->note));
    TRY(opt_str(c, e, "memory", &l->memory));
    return opt_str(c, e, "latency_basis", &l->latency_basis);
}

static strata_status_t parse_misc(parse_ctx_t *c, const json_t *e, link_entry_t *en)
{
    const char *code, *duplex;
    TRY(util_json_req_str(c->doc, e, "line_code", &code, c->err));
    en->spec.code = link_code_find(code);
    if (en->spec.code == NULL)
        return util_json_error(c->doc, json_object_get(e, "line_code"), c->err, STRATA_ERR_PARSE,
                               "unknown line code \"%s\" (known: %s)", code, link_code_names());
    TRY(req_count(c, e, "links", 1000000, &en->pub.links));
    TRY(util_json_req_str(c->doc, e, "duplex", &duplex, c->err));
    if (strcmp(duplex, "full") != 0 && strcmp(duplex, "shared") != 0)
        return link_bad(c, json_object_get(e, "duplex"),
                        "field \"%s\" must be \"full\" or \"shared\"", "duplex");
    en->pub.full_duplex = strcmp(duplex, "full") == 0;
    double lat = 0;
    if (json_object_get(e, "latency_us")) {
        TRY(link_req_num(c, e, "latency_us", 1, &lat));
        if (json_object_get(e, "latency_basis") == NULL)
            return link_bad(c, e, "\"latency_us\" needs a \"%s\" saying where it comes from",
                            "latency_basis");
    }
    en->pub.latency = lat * 1e-6;
    /* the split of a path's latency; covered by the same latency_basis */
    static const char *const split[] = {"switch_us", "endpoint_us"};
    double *dst[] = {&en->pub.switch_lat, &en->pub.endpoint};
    for (int i = 0; i < 2; i++) {
        double v = 0;
        if (json_object_get(e, split[i]) == NULL) continue;
        if (json_object_get(e, "latency_us") == NULL)
            return link_bad(c, json_object_get(e, split[i]), "\"%s\" needs \"latency_us\"",
                            split[i]);
        TRY(link_req_num(c, e, split[i], 1, &v));
        *dst[i] = v * 1e-6;
    }
    return STRATA_OK;
}

static strata_status_t parse_entry(parse_ctx_t *c, const json_t *e, link_entry_t *en)
{
    static const char *const keys[] = {"id",
                                       "category",
                                       "name",
                                       "confidence",
                                       "source",
                                       "signal",
                                       "line_code",
                                       "links",
                                       "packet",
                                       "flow",
                                       "duplex",
                                       "latency_us",
                                       "latency_basis",
                                       "note",
                                       "memory",
                                       "switch_us",
                                       "endpoint_us",
                                       NULL};
    if (!json_is_object(e)) return link_bad(c, e, "%s entry must be an object", "links");
    TRY(util_json_check_keys(c->doc, e, keys, c->err));
    TRY(parse_strings(c, e, &en->pub));
    TRY(parse_signal(c, e, &en->spec));
    TRY(parse_misc(c, e, en));
    TRY(parse_packet(c, e, &en->spec));
    TRY(parse_flow(c, e, &en->spec));
    return link_derive_defaults(en, c->err);
}

/* ==== Catalog ==== */

static strata_status_t build_index(strata_link_catalog_t *cat);

static strata_status_t parse_root(parse_ctx_t *c, strata_link_catalog_t *cat)
{
    static const char *const keys[] = {"format", "version", "about", "links", "latencies", NULL};
    const json_t *root = util_json_root(c->doc);
    json_t *arr, *e;
    const char *fmt;
    long ver;
    size_t i;
    TRY(util_json_check_keys(c->doc, root, keys, c->err));
    TRY(util_json_req_str(c->doc, root, "format", &fmt, c->err));
    if (strcmp(fmt, "strata-links") != 0)
        return link_bad(c, json_object_get(root, "format"), "field \"%s\" must be \"strata-links\"",
                        "format");
    TRY(util_json_req_int(c->doc, root, "version", &ver, c->err));
    if (ver != 1)
        return link_bad(c, json_object_get(root, "version"), "%s 1 is the only one known",
                        "version");
    TRY(util_json_req_arr(c->doc, root, "links", &arr, c->err));
    if (json_array_size(arr) == 0) return link_bad(c, arr, "\"%s\" is empty", "links");
    cat->entry = util_arena_alloc(c->arena, json_array_size(arr) * sizeof(*cat->entry));
    if (cat->entry == NULL) return strata_error_set(c->err, STRATA_ERR_NOMEM, "out of memory");
    json_array_foreach(arr, i, e)
    {
        TRY(parse_entry(c, e, &cat->entry[i]));
        if (strata_link_find(cat, cat->entry[i].pub.id))
            return link_bad(c, json_object_get(e, "id"), "duplicate id \"%s\"",
                            cat->entry[i].pub.id);
        cat->n = i + 1;
    }
    /* a scale-up link's "memory" names the HBM of the accelerator
     * generation it belongs to: another entry, of a shared bus */
    json_array_foreach(arr, i, e)
    {
        const char *mem = cat->entry[i].pub.memory;
        const strata_link_t *m = mem[0] ? strata_link_find(cat, mem) : NULL;
        if (mem[0] && (m == NULL || m->full_duplex))
            return link_bad(c, json_object_get(e, "memory"),
                            "field \"%s\" must name a memory entry (duplex \"shared\")", "memory");
    }
    return link_latencies_parse(c, root, cat);
}

/* Build a catalog from a parsed document; takes ownership of doc. */
static strata_status_t catalog_from_doc(util_json_doc_t *doc, strata_link_catalog_t **cat_p,
                                        strata_error_t *err)
{
    strata_status_t st;
    strata_link_catalog_t *cat = util_calloc(1, sizeof(*cat));
    if (cat == NULL || (cat->arena = util_arena_create(16384)) == NULL) {
        st = strata_error_set(err, STRATA_ERR_NOMEM, "%s: out of memory", util_json_name(doc));
        goto fail;
    }
    parse_ctx_t c = {doc, cat->arena, err};
    st = parse_root(&c, cat);
    if (st == STRATA_OK && build_index(cat) != STRATA_OK)
        st = strata_error_set(err, STRATA_ERR_NOMEM, "%s: out of memory", util_json_name(doc));
    if (st != STRATA_OK) goto fail;
    util_json_doc_destroy(doc);
    *cat_p = cat;
    return STRATA_OK;
fail:
    strata_link_catalog_destroy(cat);
    util_json_doc_destroy(doc);
    return st;
}

strata_status_t link_catalog_load_text(const char *text, size_t len, const char *name,
                                       strata_link_catalog_t **cat_p, strata_error_t *err)
{
    util_json_doc_t *doc = NULL;
    strata_status_t st = util_json_load_text(text, len, name, &doc, err);
    return st != STRATA_OK ? st : catalog_from_doc(doc, cat_p, err);
}

strata_status_t strata_link_catalog_load(const char *path, strata_link_catalog_t **cat_p,
                                         strata_error_t *err)
{
    char def[4096];
    if (path == NULL) {
        snprintf(def, sizeof(def), "%s/links.json", strata_data_dir());
        path = def;
    }
    util_json_doc_t *doc = NULL;
    strata_status_t st = util_json_load_file(path, &doc, err);
    return st != STRATA_OK ? st : catalog_from_doc(doc, cat_p, err);
}

void strata_link_catalog_destroy(strata_link_catalog_t *cat)
{
    if (cat == NULL) return;
    util_arena_destroy(cat->arena);
    util_free(cat);
}

size_t strata_link_catalog_count(const strata_link_catalog_t *cat)
{
    return cat ? cat->n : 0;
}

const strata_link_t *strata_link_catalog_at(const strata_link_catalog_t *cat, size_t i)
{
    return cat && i < cat->n ? &cat->entry[i].pub : NULL;
}

/* FNV-1a over the id folded as util_str_eq_nocase folds it (tolower) */
static size_t id_hash(const char *id)
{
    uint64_t h = 1469598103934665603u;
    for (const unsigned char *p = (const unsigned char *)id; *p; p++)
        h = (h ^ (uint64_t)tolower(*p)) * 1099511628211u;
    return (size_t)h;
}

/* The index of every id, built once the catalog is whole: a topology of
 * 400k devices looks a link up by name millions of times. */
static strata_status_t build_index(strata_link_catalog_t *cat)
{
    size_t n = 16;
    while (n < 2 * cat->n)
        n *= 2;
    cat->index = util_arena_alloc(cat->arena, n * sizeof(*cat->index));
    if (cat->index == NULL) return STRATA_ERR_NOMEM;
    memset(cat->index, 0, n * sizeof(*cat->index));
    for (size_t i = 0; i < cat->n; i++) {
        size_t j = id_hash(cat->entry[i].pub.id) & (n - 1);
        while (cat->index[j])
            j = (j + 1) & (n - 1);
        cat->index[j] = (uint32_t)i + 1;
    }
    cat->nindex = n;
    return STRATA_OK;
}

const strata_link_t *strata_link_find(const strata_link_catalog_t *cat, const char *id)
{
    if (cat == NULL || id == NULL) return NULL;
    if (cat->index == NULL) { /* while loading */
        for (size_t i = 0; i < cat->n; i++)
            if (util_str_eq_nocase(cat->entry[i].pub.id, id)) return &cat->entry[i].pub;
        return NULL;
    }
    for (size_t j = id_hash(id) & (cat->nindex - 1); cat->index[j]; j = (j + 1) & (cat->nindex - 1))
        if (util_str_eq_nocase(cat->entry[cat->index[j] - 1].pub.id, id))
            return &cat->entry[cat->index[j] - 1].pub;
    return NULL;
}
