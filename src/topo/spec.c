/*
 * spec.c — resolve a cluster spec (the CLUSTER argument of `strata topo`,
 * `--cluster` elsewhere) to a topology.
 *
 * This file understands builder specs (grammar in strata/topo.h):
 *   ring:8  mesh:4x4  torus:4x4x4  full:8  switch:16
 *   fattree:k=8[,tiers=3][,n=128][,oversub=1:4]
 *   railft:servers=2048,gpus=8[,k=64][,tiers=T][,oversub=..]
 *     (tiers default: the fewest that hold all NICs — 1, 2 or 3)
 * plus ",link=ID", ",mult=M", ",bw=GBPS" (GB/s per direction per link,
 * 1e9 B/s) and ",lat=US" on any of them. The I/O half of the topology layer
 * (presets, cluster files, NCCL XML, local) hooks in at topo_spec_other().
 *
 * Defaults, each a catalog id (data/links.json): direct networks use
 * "nvlink4" links, switched ones "ib-ndr" (a 400 Gb/s 4x port, the NIC of a
 * DGX H100, per NVIDIA's DGX SuperPOD reference architecture). In railft
 * servers every GPU has all its NVLink4 links (the catalog's links per
 * device: 18 on Hopper) to one logical NVSwitch fabric
 * and a PCIe 5.0 x16 link to its own NIC, and the fat-tree uses 64-port
 * switches (Quantum-2: 64 × 400G ports) unless k= says otherwise.
 */
#define _DEFAULT_SOURCE /* strsep */
#define _POSIX_C_SOURCE 200809L
#include "topo.h"
#include "topoio.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_MAX 512

/* Option bounds, checked as parsed (docs/topology.md, "Limits"). */
#define SPEC_SIZE_MAX    (1L << 24) /* ring:N, full:N, switch:N, fattree n= */
#define SPEC_SERVERS_MAX (1L << 20) /* railft servers= */
#define SPEC_GPUS_MAX    4096L      /* railft gpus= (accelerators per server) */
#define SPEC_RADIX_MAX   1024L      /* k= (the fat-tree builder's bound) */
#define SPEC_MULT_MAX    4096L      /* mult= parallel links */

typedef struct spec_opts {
    const char *spec; /* whole spec, for messages */
    const char *link; /* link=ID */
    double bw, lat;   /* bw= (B/s) and lat= (s); < 0 when absent */
    long mult;
    long k, tiers, n, servers, gpus;
    double oversub[STRATA_TOPO_TIERS_MAX];
} spec_opts_t;

static strata_status_t bad(const spec_opts_t *o, strata_error_t *err, const char *what,
                           const char *tok)
{
    return strata_error_set(err, STRATA_ERR_INVALID, "cluster spec '%s': %s '%s'", o->spec, what,
                            tok);
}

/* A count 0..max (decimal; a larger value is an error, never truncated to
 * the int32_t the builders take). */
static strata_status_t parse_long(const spec_opts_t *o, const char *v, long max, long *out,
                                  strata_error_t *err)
{
    long x;
    if (util_parse_long(v, &x) || x < 0 || x > max) {
        char what[64];
        snprintf(what, sizeof(what), "expected a count from 0 to %ld, got", max);
        return bad(o, err, what, v);
    }
    *out = x;
    return STRATA_OK;
}

/* "1:4" or "1:4:2" → oversub[1], oversub[2]: tier t's down:up ratio. A
 * single "4" means 4:1 at the top switch tier. Entries are "a:b" pairs
 * joined by '/', or plain ratios joined by ':' — see docs/topology.md. */
static strata_status_t parse_oversub(spec_opts_t *o, const char *v, strata_error_t *err)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", v);
    int t = 1;
    for (char *save = NULL, *tok = strtok_r(buf, ":", &save); tok;
         tok = strtok_r(NULL, ":", &save), t++) {
        double r;
        if (t >= STRATA_TOPO_TIERS_MAX || util_parse_double(tok, &r) || !(r >= 1) || r > 1e6)
            return bad(o, err, "oversub expects ratios >= 1 per tier like 1:4, got", v);
        o->oversub[t] = r;
    }
    return STRATA_OK;
}

static strata_status_t parse_opt(spec_opts_t *o, char *tok, strata_error_t *err)
{
    char *eq = strchr(tok, '=');
    if (!eq) return bad(o, err, "expected key=value, got", tok);
    *eq = 0;
    const char *k = tok, *v = eq + 1;
    double d;
    if (strcmp(k, "link") == 0)
        o->link = v;
    else if (strcmp(k, "bw") == 0) {
        if (util_parse_double(v, &d) || !(d > 0) || d > 1e6)
            return bad(o, err, "bw expects GB/s per direction, got", v);
        o->bw = d * 1e9;
    } else if (strcmp(k, "lat") == 0) {
        if (util_parse_double(v, &d) || d < 0 || d > 1e6)
            return bad(o, err, "lat expects microseconds, got", v);
        o->lat = d * 1e-6;
    } else if (strcmp(k, "mult") == 0)
        return parse_long(o, v, SPEC_MULT_MAX, &o->mult, err);
    else if (strcmp(k, "k") == 0)
        return parse_long(o, v, SPEC_RADIX_MAX, &o->k, err);
    else if (strcmp(k, "tiers") == 0)
        return parse_long(o, v, 3, &o->tiers, err);
    else if (strcmp(k, "n") == 0)
        return parse_long(o, v, SPEC_SIZE_MAX, &o->n, err);
    else if (strcmp(k, "servers") == 0)
        return parse_long(o, v, SPEC_SERVERS_MAX, &o->servers, err);
    else if (strcmp(k, "gpus") == 0)
        return parse_long(o, v, SPEC_GPUS_MAX, &o->gpus, err);
    else if (strcmp(k, "oversub") == 0)
        return parse_oversub(o, v, err);
    else
        return bad(o, err, "unknown option", k);
    return STRATA_OK;
}

/* Link spec from the options, with a default catalog kind. An explicit
 * bw without link= is a "custom" link of zero latency unless lat= says. */
static strata_topo_linkspec_t opts_link(const spec_opts_t *o, const char *def_kind)
{
    strata_topo_linkspec_t s = {o->link ? o->link : def_kind, (int32_t)(o->mult ? o->mult : 1),
                                o->bw > 0 ? o->bw : 0, o->lat >= 0 ? o->lat : -1};
    if (o->bw > 0 && !o->link) {
        s.kind = NULL;
        if (o->lat < 0) s.latency = 0;
    }
    return s;
}

/* Dimensions "4x4x4" into dims; returns the count or -1. */
static int parse_dims(const char *s, int32_t *dims)
{
    int n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 1 << 20 || n == 3) return -1;
        dims[n++] = (int32_t)v;
        if (*end == 'x' || *end == 'X')
            end++;
        else if (*end)
            return -1;
        s = end;
    }
    return n;
}

static strata_status_t build_railft(const spec_opts_t *o, const strata_link_catalog_t *cat,
                                    strata_topo_t **topo_p, strata_error_t *err)
{
    if (o->servers < 1 || o->gpus < 1)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "cluster spec '%s': railft needs servers=S and gpus=G", o->spec);
    /* each GPU's NVLink count is the catalog's links-per-device */
    const strata_link_t *nvl = cat ? strata_link_find(cat, "nvlink4") : NULL;
    strata_topo_server_t sv = {
        .name = "server",
        .accels = (int32_t)o->gpus,
        .scaleup_switches = 1,
        .scaleup = strata_topo_linkspec_kind("nvlink4", nvl ? nvl->links : 1),
        .nics = (int32_t)o->gpus,
        .pcie = strata_topo_linkspec_kind("pcie5", 1),
        .nic_net = opts_link(o, "ib-ndr"),
    };
    strata_topo_fattree_t net = {.k = (int32_t)(o->k ? o->k : 64)};
    memcpy(net.oversub, o->oversub, sizeof(net.oversub));
    /* default: the fewest tiers that hold every NIC */
    int64_t leaves = (o->servers + net.k / 2 - 1) / (net.k / 2) * o->gpus;
    int64_t nics = o->servers * o->gpus;
    net.tiers = (int32_t)(o->tiers ? o->tiers : nics <= net.k ? 1 : leaves <= net.k ? 2 : 3);
    /* a ratio > 1 at tier t asks for a switch tier above it (up to 3 tiers;
     * beyond, the builder refuses the ratio rather than drop it) */
    for (int32_t t = 1; t < 3 && !o->tiers; t++)
        if (o->oversub[t] > 1 && net.tiers < t + 1) net.tiers = t + 1;
    return strata_topo_build_cluster(&sv, (int32_t)o->servers, &net, true, cat, topo_p, err);
}

static strata_status_t build_from(const char *kind, char *arg, spec_opts_t *o,
                                  const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                  strata_error_t *err)
{
    /* positional argument: everything before the first ',' if it has no '=' */
    char *first = NULL, *rest = arg, *comma = strchr(arg, ',');
    size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
    if (len && !memchr(arg, '=', len)) {
        first = arg;
        rest = comma ? comma + 1 : NULL;
        if (comma) *comma = 0;
    }
    for (char *tok; rest && (tok = strsep(&rest, ","));) {
        if (!*tok) continue;
        strata_status_t st = parse_opt(o, tok, err);
        if (st) return st;
    }
    bool direct = strcmp(kind, "switch") && strcmp(kind, "fattree") && strcmp(kind, "railft");
    strata_topo_linkspec_t l = opts_link(o, direct ? "nvlink4" : "ib-ndr");
    int32_t dims[3];
    long n = 0;
    if (first && strcmp(kind, "mesh") && strcmp(kind, "torus") &&
        parse_long(o, first, SPEC_SIZE_MAX, &n, err))
        return STRATA_ERR_INVALID;
    if (!strcmp(kind, "ring") || !strcmp(kind, "full") || !strcmp(kind, "switch")) {
        if (!first) return bad(o, err, "expected a size after", kind);
        if (!strcmp(kind, "ring")) return strata_topo_build_ring((int32_t)n, &l, cat, topo_p, err);
        if (!strcmp(kind, "full")) return strata_topo_build_full((int32_t)n, &l, cat, topo_p, err);
        return strata_topo_build_switch((int32_t)n, &l, cat, topo_p, err);
    }
    if (!strcmp(kind, "mesh") || !strcmp(kind, "torus")) {
        int nd = first ? parse_dims(first, dims) : -1;
        if (nd < 1) return bad(o, err, "expected dimensions like 4x4x4, got", first ? first : "");
        return !strcmp(kind, "mesh") ? strata_topo_build_mesh(nd, dims, &l, cat, topo_p, err)
                                     : strata_topo_build_torus(nd, dims, &l, cat, topo_p, err);
    }
    if (first) return bad(o, err, "expected key=value, got", first);
    if (!strcmp(kind, "railft")) return build_railft(o, cat, topo_p, err);
    strata_topo_fattree_t ft = {.k = (int32_t)o->k,
                                .tiers = (int32_t)(o->tiers ? o->tiers : 3),
                                .endpoints = (int32_t)(o->n > INT32_MAX ? -1 : o->n)};
    memcpy(ft.oversub, o->oversub, sizeof(ft.oversub));
    ft.link[0] = &l;
    return strata_topo_build_fattree(&ft, cat, topo_p, err);
}

static const char *const builders[] = {"ring",   "mesh",    "torus",  "full",
                                       "switch", "fattree", "railft", NULL};

/* Specs that are not builder specs: presets, files, "local" — the I/O
 * half of the layer (cluster_spec.c). */
static strata_status_t topo_spec_other(const char *spec, const strata_link_catalog_t *cat,
                                       strata_topo_t **topo_p, strata_error_t *err)
{
    return topoio_load_spec(spec, cat, topo_p, err);
}

strata_status_t strata_topo_load_spec(const char *spec, const strata_link_catalog_t *cat,
                                      strata_topo_t **topo_p, strata_error_t *err)
{
    if (!spec || !*spec) return strata_error_set(err, STRATA_ERR_INVALID, "empty cluster spec");
    char buf[SPEC_MAX];
    if (strlen(spec) >= sizeof(buf))
        return strata_error_set(err, STRATA_ERR_INVALID, "cluster spec too long (%zu bytes)",
                                strlen(spec));
    snprintf(buf, sizeof(buf), "%s", spec);
    char *colon = strchr(buf, ':');
    if (colon) {
        *colon = 0;
        for (const char *const *b = builders; *b; b++)
            if (strcmp(buf, *b) == 0) {
                spec_opts_t o = {.spec = spec, .bw = -1, .lat = -1};
                return build_from(*b, colon + 1, &o, cat, topo_p, err);
            }
    }
    return topo_spec_other(spec, cat, topo_p, err);
}
