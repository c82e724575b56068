/*
 * cluster_file.c — cluster files: the JSON description of a server, how many
 * of them, and the network that joins them (docs/formats.md).
 *
 * Design: one reader for presets and user files. Every value is read through
 * util_json's positioned getters, so any error — unknown field, wrong type,
 * unknown link id, device referenced before it is defined, negative count —
 * names file:line:col and says what was expected. The writer emits the same
 * format from a topoio_cluster_t, whatever produced it (file, preset with
 * options, NCCL XML, hwloc), so an import can be saved, edited and reloaded.
 *
 * Workload: files of a few hundred lines, read once per command.
 */
#include "topoio.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ==== Description helpers ==== */

topoio_cluster_t *topoio_cluster_create(void)
{
    topoio_cluster_t *c = util_calloc(1, sizeof(*c));
    if (c == NULL) return NULL;
    c->arena = util_arena_create(4096);
    if (c->arena == NULL) {
        util_free(c);
        return NULL;
    }
    c->servers = 1;
    return c;
}

void topoio_cluster_destroy(topoio_cluster_t *c)
{
    if (c == NULL) return;
    UTIL_VEC_FREE(&c->sources);
    UTIL_VEC_FREE(&c->groups);
    UTIL_VEC_FREE(&c->conns);
    util_arena_destroy(c->arena);
    util_free(c);
}

const char *topoio_str(topoio_cluster_t *c, const char *s)
{
    return s ? util_arena_strdup(c->arena, s) : NULL;
}

long topoio_add_group(topoio_cluster_t *c, const char *name, const char *kind, long count)
{
    topoio_group_t g = {.name = topoio_str(c, name), .kind = topoio_str(c, kind), .count = count};
    if (g.name == NULL || g.kind == NULL || UTIL_VEC_PUSH(&c->groups, g)) return -1;
    return (long)c->groups.n - 1;
}

int topoio_add_conn(topoio_cluster_t *c, long ga, long ia, long gb, long ib, const char *link,
                    long count, long lanes)
{
    topoio_conn_t k = {.a = {ga, ia},
                       .b = {gb, ib},
                       .map = TOPOIO_MAP_ALL,
                       .link = topoio_str(c, link),
                       .count = count,
                       .lanes = lanes};
    if (k.link == NULL) return -1;
    return UTIL_VEC_PUSH(&c->conns, k);
}

long topoio_find_group(const topoio_cluster_t *c, const char *name)
{
    for (size_t i = 0; i < c->groups.n; i++)
        if (strcmp(c->groups.v[i].name, name) == 0) return (long)i;
    return -1;
}

long topoio_count_kind(const topoio_cluster_t *c, const char *kind)
{
    long n = 0;
    for (size_t i = 0; i < c->groups.n; i++)
        if (strcmp(c->groups.v[i].kind, kind) == 0) n += c->groups.v[i].count;
    return n;
}

/* The device kinds of a cluster file: the words strata prints for them
 * (strata_dev_kind_str: accel, cpu, nic, pcie-switch, scaleup-switch,
 * memory, storage), the vendors' names (gpu, npu, tpu; nvswitch) and
 * cxl-memory (a memory whose link must be CXL-capable) — one table, the one of
 * docs/formats.md "Device kinds". "switch", a network switch, is printed
 * but is no server's device: the network builders make switches. */
static const struct {
    const char *word;
    strata_dev_kind_t kind;
} kind_words[] = {
    {"accel", STRATA_DEV_ACCEL},
    {"gpu", STRATA_DEV_ACCEL},
    {"npu", STRATA_DEV_ACCEL},
    {"tpu", STRATA_DEV_ACCEL},
    {"cpu", STRATA_DEV_CPU},
    {"nic", STRATA_DEV_NIC},
    {"pcie-switch", STRATA_DEV_PCIE_SWITCH},
    {"scaleup-switch", STRATA_DEV_SCALEUP_SWITCH},
    {"nvswitch", STRATA_DEV_SCALEUP_SWITCH},
    {"memory", STRATA_DEV_MEMORY},
    {"cxl-memory", STRATA_DEV_MEMORY}, /* a host memory behind a CXL link */
    {"storage", STRATA_DEV_STORAGE},
};
#define KIND_WORDS                                                                                 \
    "accel (or gpu, npu, tpu), cpu, nic, pcie-switch, scaleup-switch (or nvswitch), memory, "      \
    "cxl-memory or storage"

int topoio_kind_of(const char *word, strata_dev_kind_t *kind_p)
{
    for (size_t i = 0; word && i < sizeof(kind_words) / sizeof(kind_words[0]); i++)
        if (strcmp(word, kind_words[i].word) == 0) {
            *kind_p = kind_words[i].kind;
            return 0;
        }
    return -1;
}

bool topoio_is_accel_kind(const char *k)
{
    strata_dev_kind_t kind;
    return topoio_kind_of(k, &kind) == 0 && kind == STRATA_DEV_ACCEL;
}

long topoio_count_devkind(const topoio_cluster_t *c, strata_dev_kind_t kind)
{
    long n = 0;
    strata_dev_kind_t k;
    for (size_t i = 0; i < c->groups.n; i++)
        if (topoio_kind_of(c->groups.v[i].kind, &k) == 0 && k == kind) n += c->groups.v[i].count;
    return n;
}
static const char *const builders[] = {"rail-fat-tree", "fat-tree", "switch",
                                       "torus",         "none",     NULL};
static const char *const map_names[] = {"all", "block", "mesh", NULL};

static bool in_list(const char *const *list, const char *s)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(list[i], s) == 0) return true;
    return false;
}

/* Names become member names and endpoint syntax: keep them plain. */
static bool name_ok(const char *s)
{
    if (*s == '\0') return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_.:-", *s)) return false;
    return true;
}

/* NIC port kind from the speed in Mb/s (nccl.md §3.2: 400000 = NDR). */
/* Speeds in Mb/s as NCCL and sysfs report them: IB 4x ports SDR 10000 ..
 * XDR 800000 (per-lane 2500 .. 200000 × 4, nccl.md §3.4); Ethernet by its
 * nominal rate (links.md Ethernet rows). */
const char *topoio_port_kind(long mbps, bool ib, bool verbs)
{
    static const struct {
        long mbps;
        const char *ib, *roce, *eth;
    } t[] = {
        {10000, "ib-sdr", NULL, "eth-10g"},
        {20000, "ib-ddr", NULL, NULL},
        {25000, NULL, "roce-25g", "eth-25g"},
        {40000, "ib-qdr", NULL, "eth-40g"},
        {56000, "ib-fdr", NULL, NULL},
        {100000, "ib-edr", "roce-100g", "eth-100g"},
        {200000, "ib-hdr", "roce-200g", "eth-200g"},
        {400000, "ib-ndr", "roce-400g", "eth-400g"},
        {800000, "ib-xdr", "roce-800g", "eth-800g"},
    };
    const char *best = NULL;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        const char *k = ib ? t[i].ib : verbs ? t[i].roce : t[i].eth;
        if (k && t[i].mbps <= mbps) best = k; /* fastest kind not above the port speed */
    }
    return best;
}

/* ==== Reading ==== */

typedef struct reader {
    const util_json_doc_t *doc;
    const strata_link_catalog_t *cat;
    topoio_cluster_t *c;
    strata_error_t *err;
} reader_t;

static strata_status_t bad(reader_t *r, const json_t *v, const char *fmt, const char *arg)
{
    return util_json_error(r->doc, v, r->err, STRATA_ERR_PARSE, fmt, arg);
}

static strata_status_t check_link_id(reader_t *r, const json_t *v, const char *id)
{
    if (r->cat && strata_link_find(r->cat, id) == NULL)
        return bad(r, v,
                   "unknown link id \"%s\" (expected an id of data/links.json, "
                   "e.g. nvlink4, pcie5, ib-ndr)",
                   id);
    return STRATA_OK;
}

/* An optional integer field in [min, max], with a default; out of range
 * (2^32 + 1 as well as -1) is an error at the value's position. */
static strata_status_t opt_range(reader_t *r, const json_t *obj, const char *key, long min,
                                 long max, long *out)
{
    long v = *out;
    strata_status_t st = util_json_opt_int(r->doc, obj, key, &v, r->err);
    if (st) return st;
    if (v < min || v > max)
        return util_json_error(r->doc, json_object_get(obj, key), r->err, STRATA_ERR_PARSE,
                               "\"%s\" must be an integer from %ld to %ld, got %ld", key, min, max,
                               v);
    *out = v;
    return STRATA_OK;
}

bool topoio_is_port_kind(const strata_link_t *l)
{
    static const char *const cats[] = {"InfiniBand", "RoCEv2", "Ethernet", NULL};
    return l && l->category && in_list(cats, l->category);
}

/* A network port id: in the catalog and a scale-out kind. */
static strata_status_t check_port_id(reader_t *r, const json_t *v, const char *id)
{
    strata_status_t st = check_link_id(r, v, id);
    if (st || r->cat == NULL || topoio_is_port_kind(strata_link_find(r->cat, id))) return st;
    return bad(r, v,
               "\"%s\" is not a network port kind (expected an InfiniBand, RoCE or Ethernet "
               "id, e.g. ib-ndr, roce-400g, eth-100g)",
               id);
}

/* The accelerator memories of the catalog, comma-separated, for messages. */
static const char *memory_ids(const strata_link_catalog_t *cat, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < strata_link_catalog_count(cat) && n < len; i++) {
        const strata_link_t *l = strata_link_catalog_at(cat, i);
        if (strata_topo_memory_find(cat, l->id) == NULL) continue;
        int w = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", l->id);
        if (w < 0) break;
        n += (size_t)w;
    }
    return buf;
}

/* "memory": an accelerator's memory, by catalog id of an HBM row. */
static strata_status_t check_memory(reader_t *r, const json_t *d, const char *kind,
                                    const char *memory)
{
    const json_t *v = json_object_get(d, "memory");
    char ids[512];
    if (!topoio_is_accel_kind(kind))
        return bad(r, v,
                   "\"memory\" is recorded on accelerators only (kind accel, gpu, npu or tpu), not "
                   "on kind \"%s\"",
                   kind);
    if (r->cat == NULL) return STRATA_OK;
    if (strata_link_find(r->cat, memory) == NULL)
        return util_json_error(r->doc, v, r->err, STRATA_ERR_PARSE,
                               "unknown memory id \"%s\" (expected an accelerator memory of "
                               "data/links.json: %s)",
                               memory, memory_ids(r->cat, ids, sizeof(ids)));
    if (strata_topo_memory_find(r->cat, memory) == NULL)
        return util_json_error(r->doc, v, r->err, STRATA_ERR_PARSE,
                               "\"%s\" is not an accelerator memory (expected one of %s)", memory,
                               memory_ids(r->cat, ids, sizeof(ids)));
    return STRATA_OK;
}

/* "capacity_gb": what a host memory (kind memory or cxl-memory) holds, GB
 * per member — the planner's memory tiers check offloaded states against
 * it (docs/formats.md). */
static strata_status_t read_capacity(reader_t *r, const json_t *d, const char *kind, double *gb_p)
{
    const json_t *v = json_object_get(d, "capacity_gb");
    if (v == NULL) return STRATA_OK;
    strata_dev_kind_t dk;
    if (topoio_kind_of(kind, &dk) != 0 || dk != STRATA_DEV_MEMORY)
        return bad(r, v,
                   "\"capacity_gb\" is recorded on host memories only (kind memory or "
                   "cxl-memory), not on kind \"%s\"",
                   kind);
    strata_status_t st = util_json_opt_num(r->doc, d, "capacity_gb", gb_p, r->err);
    if (st) return st;
    if (!(*gb_p > 0) || *gb_p > TOPOIO_CAPACITY_MAX)
        return util_json_error(r->doc, v, r->err, STRATA_ERR_PARSE,
                               "\"capacity_gb\" must be a number of GB above 0 and at most %g, "
                               "got %g",
                               TOPOIO_CAPACITY_MAX, *gb_p);
    return STRATA_OK;
}

static strata_status_t read_device(reader_t *r, const json_t *d)
{
    static const char *const keys[] = {"name", "kind",   "count",       "model", "port",
                                       "info", "memory", "capacity_gb", NULL};
    const char *name, *kind, *model = NULL, *port = NULL, *info = NULL, *memory = NULL;
    long count = 1;
    strata_status_t st;
    if (!json_is_object(d)) return bad(r, d, "expected a device object%s", "");
    if ((st = util_json_check_keys(r->doc, d, keys, r->err)) ||
        (st = util_json_req_str(r->doc, d, "name", &name, r->err)) ||
        (st = util_json_req_str(r->doc, d, "kind", &kind, r->err)) ||
        (st = opt_range(r, d, "count", 1, TOPOIO_COUNT_MAX, &count)) ||
        (st = util_json_opt_str(r->doc, d, "model", &model, r->err)) ||
        (st = util_json_opt_str(r->doc, d, "port", &port, r->err)) ||
        (st = util_json_opt_str(r->doc, d, "info", &info, r->err)) ||
        (st = util_json_opt_str(r->doc, d, "memory", &memory, r->err)))
        return st;
    if (!name_ok(name))
        return bad(r, json_object_get(d, "name"),
                   "device name \"%s\" must be letters, digits, '_', '.', ':' or '-'", name);
    if (topoio_find_group(r->c, name) >= 0)
        return bad(r, json_object_get(d, "name"), "device \"%s\" is defined twice", name);
    strata_dev_kind_t dk;
    if (strcmp(kind, "switch") == 0)
        return bad(r, json_object_get(d, "kind"),
                   "device kind \"%s\" is a network switch, which \"network\" builds; a "
                   "server's devices are " KIND_WORDS,
                   kind);
    if (topoio_kind_of(kind, &dk) != 0)
        return bad(r, json_object_get(d, "kind"),
                   "unknown device kind \"%s\" (expected " KIND_WORDS ")", kind);
    if (port && (st = check_port_id(r, json_object_get(d, "port"), port))) return st;
    if (memory && (st = check_memory(r, d, kind, memory))) return st;
    double cap_gb = 0;
    if ((st = read_capacity(r, d, kind, &cap_gb))) return st;
    long g = topoio_add_group(r->c, name, kind, count);
    if (g < 0) return strata_error_set(r->err, STRATA_ERR_NOMEM, "out of memory");
    topoio_group_t *gp = &r->c->groups.v[g];
    gp->model = topoio_str(r->c, model);
    gp->port = topoio_str(r->c, port);
    gp->info = topoio_str(r->c, info);
    gp->memory = topoio_str(r->c, memory);
    gp->capacity_gb = cap_gb;
    return STRATA_OK;
}

/* Parse an endpoint "group" or "group[i]" against the devices defined so far. */
static strata_status_t read_end(reader_t *r, const json_t *obj, const char *key, topoio_end_t *e)
{
    const char *s;
    strata_status_t st = util_json_req_str(r->doc, obj, key, &s, r->err);
    if (st) return st;
    const json_t *v = json_object_get(obj, key);
    char name[128];
    const char *br = strchr(s, '[');
    size_t n = br ? (size_t)(br - s) : strlen(s);
    if (n >= sizeof(name)) return bad(r, v, "device name too long: \"%s\"", s);
    memcpy(name, s, n);
    name[n] = '\0';
    e->group = topoio_find_group(r->c, name);
    if (e->group < 0)
        return bad(r, v,
                   "device \"%s\" is not defined (define it in \"devices\" before "
                   "linking it)",
                   name);
    e->index = -1;
    if (br) {
        char *end;
        long i = strtol(br + 1, &end, 10);
        if (end == br + 1 || strcmp(end, "]") != 0)
            return bad(r, v, "expected \"group\" or \"group[index]\", got \"%s\"", s);
        if (i < 0 || i >= r->c->groups.v[e->group].count)
            return bad(r, v, "index out of range in \"%s\"", s);
        e->index = i;
    }
    return STRATA_OK;
}

static strata_status_t read_map(reader_t *r, const json_t *l, topoio_conn_t *k)
{
    const char *map = NULL;
    strata_status_t st = util_json_opt_str(r->doc, l, "map", &map, r->err);
    if (st) return st;
    if (json_object_get(l, "mesh")) {
        if (map)
            return bad(r, json_object_get(l, "map"), "\"map\" is not used with \"mesh\"%s", "");
        k->map = TOPOIO_MAP_MESH;
        return read_end(r, l, "mesh", &k->a);
    }
    if (map && (!in_list(map_names, map) || strcmp(map, "mesh") == 0))
        return bad(r, json_object_get(l, "map"), "unknown map \"%s\" (expected all or block)", map);
    k->map = map && strcmp(map, "block") == 0 ? TOPOIO_MAP_BLOCK : TOPOIO_MAP_ALL;
    if ((st = read_end(r, l, "from", &k->a)) || (st = read_end(r, l, "to", &k->b))) return st;
    if (k->map == TOPOIO_MAP_BLOCK) {
        long na = r->c->groups.v[k->a.group].count, nb = r->c->groups.v[k->b.group].count;
        long big = na > nb ? na : nb, small = na > nb ? nb : na;
        if (k->a.index >= 0 || k->b.index >= 0 || big % small != 0)
            return bad(r, json_object_get(l, "map"),
                       "map \"block\" needs two whole groups whose sizes divide%s", "");
    }
    return STRATA_OK;
}

/* A link's "measured" object: its bandwidth and latency as strata probe
 * measured them (docs/probe.md), replacing the catalog's figures. */
static strata_status_t read_measured(reader_t *r, const json_t *l, topoio_conn_t *k)
{
    static const char *const keys[] = {"bw_Bps", "alpha_s", "bw_spread", "alpha_spread",
                                       "date",   "method",  NULL};
    json_t *m = json_object_get(l, "measured");
    const char *date = NULL, *method = NULL;
    strata_status_t st;
    if (m == NULL) return STRATA_OK;
    if ((st = util_json_req_obj(r->doc, l, "measured", &m, r->err)) ||
        (st = util_json_check_keys(r->doc, m, keys, r->err)) ||
        (st = util_json_req_num(r->doc, m, "bw_Bps", &k->meas_bw, r->err)) ||
        (st = util_json_req_num(r->doc, m, "alpha_s", &k->meas_lat, r->err)) ||
        (st = util_json_opt_num(r->doc, m, "bw_spread", &k->meas_bw_spread, r->err)) ||
        (st = util_json_opt_num(r->doc, m, "alpha_spread", &k->meas_lat_spread, r->err)) ||
        (st = util_json_opt_str(r->doc, m, "date", &date, r->err)) ||
        (st = util_json_opt_str(r->doc, m, "method", &method, r->err)))
        return st;
    /* upper bounds of physical sense (strata/topo.h; docs/probe.md) */
    if (!(k->meas_bw > 0) || !(k->meas_bw <= STRATA_MEASURED_RATE_MAX))
        return bad(r, json_object_get(m, "bw_Bps"),
                   "\"bw_Bps\" must be > 0 and at most 1e14 B/s (100 TB/s)%s", "");
    if (!(k->meas_lat >= 0) || !(k->meas_lat <= STRATA_MEASURED_TIME_MAX))
        return bad(r, json_object_get(m, "alpha_s"), "\"alpha_s\" must be from 0 to 5 s%s", "");
    if (json_object_get(m, "bw_spread") && !(k->meas_bw_spread >= 0))
        return bad(r, json_object_get(m, "bw_spread"), "\"bw_spread\" must be >= 0%s", "");
    if (json_object_get(m, "alpha_spread") && !(k->meas_lat_spread >= 0))
        return bad(r, json_object_get(m, "alpha_spread"), "\"alpha_spread\" must be >= 0%s", "");
    k->meas_date = topoio_str(r->c, date);
    k->meas_method = topoio_str(r->c, method);
    return STRATA_OK;
}

/* A socket link (catalog category "Socket": UPI, xGMI) joins two CPU
 * sockets of the server: both ends are cpu groups, and the server has at
 * least two sockets. */
static strata_status_t check_socket_link(reader_t *r, const json_t *l, const topoio_conn_t *k,
                                         const char *id)
{
    const strata_link_t *cl = r->cat ? strata_link_find(r->cat, id) : NULL;
    if (!cl || !cl->category || strcmp(cl->category, "Socket") != 0) return STRATA_OK;
    const json_t *at = json_object_get(l, "link");
    long cpus = topoio_count_kind(r->c, "cpu");
    if (cpus < 2)
        return util_json_error(r->doc, at, r->err, STRATA_ERR_PARSE,
                               "\"%s\" is a socket-to-socket link, but this server has %ld CPU "
                               "socket(s): it needs two",
                               id, cpus);
    const topoio_group_t *ga = &r->c->groups.v[k->a.group];
    const topoio_group_t *gb = &r->c->groups.v[k->map == TOPOIO_MAP_MESH ? k->a.group : k->b.group];
    if (strcmp(ga->kind, "cpu") != 0 || strcmp(gb->kind, "cpu") != 0)
        return util_json_error(r->doc, at, r->err, STRATA_ERR_PARSE,
                               "\"%s\" is a socket-to-socket link: it joins cpu devices, not "
                               "\"%s\" and \"%s\"",
                               id, ga->name, gb->name);
    return STRATA_OK;
}

/* A CXL memory expander (kind cxl-memory) hangs on a CXL-capable link. */
static strata_status_t check_cxl_link(reader_t *r, const json_t *l, const topoio_conn_t *k,
                                      const char *id)
{
    const strata_link_t *cl = r->cat ? strata_link_find(r->cat, id) : NULL;
    const topoio_group_t *ga = &r->c->groups.v[k->a.group];
    const topoio_group_t *gb = &r->c->groups.v[k->map == TOPOIO_MAP_MESH ? k->a.group : k->b.group];
    const topoio_group_t *m = strcmp(ga->kind, "cxl-memory") == 0   ? ga
                              : strcmp(gb->kind, "cxl-memory") == 0 ? gb
                                                                    : NULL;
    if (!cl || !m || (cl->category && strcmp(cl->category, "CXL") == 0)) return STRATA_OK;
    return util_json_error(r->doc, json_object_get(l, "link"), r->err, STRATA_ERR_PARSE,
                           "\"%s\" joins CXL memory \"%s\" but is not a CXL-capable link "
                           "(category %s; expected cxl1, cxl2 or cxl3)",
                           id, m->name, cl->category);
}

/* "p2p": "on" (default) or "off" (strata_topo_set_p2p). */
static strata_status_t read_p2p(reader_t *r, const json_t *root)
{
    const char *v = NULL;
    strata_status_t st = util_json_opt_str(r->doc, root, "p2p", &v, r->err);
    if (st || v == NULL) return st;
    if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
        return bad(r, json_object_get(root, "p2p"),
                   "unknown \"p2p\" value \"%s\" (expected on or off)", v);
    r->c->p2p_off = strcmp(v, "off") == 0;
    return STRATA_OK;
}

static strata_status_t read_link(reader_t *r, const json_t *l)
{
    static const char *const keys[] = {"from", "to",    "mesh",     "link", "count",
                                       "map",  "lanes", "measured", NULL};
    topoio_conn_t k = {.count = 1, .meas_bw_spread = -1, .meas_lat_spread = -1};
    const char *id;
    strata_status_t st;
    if (!json_is_object(l)) return bad(r, l, "expected a link object%s", "");
    if ((st = util_json_check_keys(r->doc, l, keys, r->err)) || (st = read_map(r, l, &k)) ||
        (st = util_json_req_str(r->doc, l, "link", &id, r->err)) ||
        (st = read_measured(r, l, &k)) ||
        (k.meas_bw <= 0 && (st = check_link_id(r, json_object_get(l, "link"), id))) ||
        (st = opt_range(r, l, "count", 1, TOPOIO_COUNT_MAX, &k.count)) ||
        (st = opt_range(r, l, "lanes", 0, TOPOIO_LANES_MAX, &k.lanes)))
        return st;
    if ((st = check_socket_link(r, l, &k, id)) || (st = check_cxl_link(r, l, &k, id))) return st;
    k.link = topoio_str(r->c, id);
    if (UTIL_VEC_PUSH(&r->c->conns, k))
        return strata_error_set(r->err, STRATA_ERR_NOMEM, "out of memory");
    return STRATA_OK;
}

static strata_status_t read_array(reader_t *r, const json_t *obj, const char *key, bool required,
                                  strata_status_t (*each)(reader_t *, const json_t *))
{
    json_t *a = json_object_get(obj, key);
    if (a == NULL && !required) return STRATA_OK;
    strata_status_t st = util_json_req_arr(r->doc, obj, key, &a, r->err);
    size_t i;
    json_t *v;
    if (st) return st;
    json_array_foreach(a, i, v)
    {
        if ((st = each(r, v))) return st;
    }
    return STRATA_OK;
}

static strata_status_t read_server(reader_t *r, const json_t *root)
{
    static const char *const keys[] = {"devices", "links", NULL};
    json_t *s;
    strata_status_t st;
    if ((st = util_json_req_obj(r->doc, root, "server", &s, r->err)) ||
        (st = util_json_check_keys(r->doc, s, keys, r->err)) ||
        (st = read_array(r, s, "devices", true, read_device)) ||
        (st = read_array(r, s, "links", false, read_link)))
        return st;
    if (r->c->groups.n == 0)
        return bad(r, json_object_get(s, "devices"), "a server needs at least one device%s", "");
    return STRATA_OK;
}

/* "oversubscription": 2 (every tier) or [1, 2] (leaf first). */
static strata_status_t read_oversub(reader_t *r, const json_t *net)
{
    json_t *v = json_object_get(net, "oversubscription");
    topoio_net_t *n = &r->c->net;
    if (v == NULL) return STRATA_OK;
    if (json_is_number(v)) {
        n->oversub[0] = json_number_value(v);
        n->ntiers_oversub = 1;
    } else if (json_is_array(v) && json_array_size(v) >= 1 &&
               json_array_size(v) <= TOPOIO_MAX_TIERS) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *x = json_array_get(v, i);
            if (!json_is_number(x)) return bad(r, x, "expected a number (oversubscription)%s", "");
            n->oversub[i] = json_number_value(x);
        }
        n->ntiers_oversub = (int)json_array_size(v);
    } else {
        return bad(r, v,
                   "\"oversubscription\" expects a number or an array of 1 to 4 "
                   "numbers (leaf tier first)%s",
                   "");
    }
    for (int i = 0; i < n->ntiers_oversub; i++)
        if (!(n->oversub[i] >= 1) || n->oversub[i] > TOPOIO_OVERSUB_MAX)
            return bad(r, v, "oversubscription must be from 1 (non-blocking) to 1e6%s", "");
    return STRATA_OK;
}

static strata_status_t read_dims(reader_t *r, const json_t *net)
{
    json_t *v = json_object_get(net, "dims");
    topoio_net_t *n = &r->c->net;
    if (v == NULL) return STRATA_OK;
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > TOPOIO_MAX_DIMS)
        return bad(r, v, "\"dims\" expects an array of 1 to 3 positive integers%s", "");
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *x = json_array_get(v, i);
        if (!json_is_integer(x) || json_integer_value(x) < 1 ||
            json_integer_value(x) > TOPOIO_DIM_MAX)
            return bad(r, x, "expected an integer from 1 to 1048576 (torus dimension)%s", "");
        n->dims[i] = (long)json_integer_value(x);
    }
    n->ndims = (int)json_array_size(v);
    return STRATA_OK;
}

static strata_status_t read_network(reader_t *r, const json_t *root)
{
    static const char *const keys[] = {"builder", "port", "nics", "tiers", "oversubscription",
                                       "radix",   "dims", "link", NULL};
    json_t *net = json_object_get(root, "network");
    topoio_net_t *n = &r->c->net;
    const char *builder, *port = NULL, *link = NULL;
    strata_status_t st;
    if (net == NULL) return STRATA_OK;
    if ((st = util_json_req_obj(r->doc, root, "network", &net, r->err)) ||
        (st = util_json_check_keys(r->doc, net, keys, r->err)) ||
        (st = util_json_req_str(r->doc, net, "builder", &builder, r->err)) ||
        (st = util_json_opt_str(r->doc, net, "port", &port, r->err)) ||
        (st = util_json_opt_str(r->doc, net, "link", &link, r->err)) ||
        (st = opt_range(r, net, "nics", 0, TOPOIO_COUNT_MAX, &n->nics)) ||
        (st = opt_range(r, net, "tiers", 0, TOPOIO_SWITCH_TIERS, &n->tiers)) ||
        (st = opt_range(r, net, "radix", 0, TOPOIO_RADIX_MAX, &n->radix)) ||
        (st = read_oversub(r, net)) || (st = read_dims(r, net)))
        return st;
    if (!in_list(builders, builder))
        return bad(r, json_object_get(net, "builder"),
                   "unknown network builder \"%s\" (expected "
                   "rail-fat-tree, fat-tree, switch, torus or none)",
                   builder);
    if (port && (st = check_port_id(r, json_object_get(net, "port"), port))) return st;
    if (link && (st = check_link_id(r, json_object_get(net, "link"), link))) return st;
    if (n->radix % 2)
        return bad(r, json_object_get(net, "radix"),
                   "\"radix\" must be even (ports split down and up)%s", "");
    if (strcmp(builder, "torus") == 0 && (n->ndims == 0 || link == NULL))
        return bad(r, net, "a torus network needs \"dims\" and \"link\"%s", "");
    n->builder = strcmp(builder, "none") == 0 ? NULL : topoio_str(r->c, builder);
    n->port = topoio_str(r->c, port);
    n->link = topoio_str(r->c, link);
    return STRATA_OK;
}

static strata_status_t read_source(reader_t *r, const json_t *v)
{
    if (!json_is_string(v)) return bad(r, v, "expected a string (a source citation)%s", "");
    const char *s = topoio_str(r->c, json_string_value(v));
    if (UTIL_VEC_PUSH(&r->c->sources, s))
        return strata_error_set(r->err, STRATA_ERR_NOMEM, "out of memory");
    return STRATA_OK;
}

static strata_status_t read_root(reader_t *r)
{
    static const char *const keys[] = {"name",        "description", "sources", "servers",
                                       "max_servers", "server",      "network", "measured",
                                       "p2p",         NULL};
    const json_t *root = util_json_root(r->doc);
    const char *name = NULL, *desc = NULL;
    topoio_cluster_t *c = r->c;
    strata_status_t st;
    if (!json_is_object(root)) return bad(r, root, "expected a cluster object {...}%s", "");
    if ((st = util_json_check_keys(r->doc, root, keys, r->err)) ||
        (st = util_json_opt_str(r->doc, root, "name", &name, r->err)) ||
        (st = util_json_opt_str(r->doc, root, "description", &desc, r->err)) ||
        (st = read_array(r, root, "sources", false, read_source)) ||
        (st = opt_range(r, root, "servers", 1, TOPOIO_SERVERS_MAX, &c->servers)) ||
        (st = opt_range(r, root, "max_servers", 0, TOPOIO_SERVERS_MAX, &c->max_servers)) ||
        (st = read_server(r, root)) || (st = read_network(r, root)) || (st = read_p2p(r, root)))
        return st;
    json_t *meas = json_object_get(root, "measured");
    if (meas && !json_is_object(meas))
        return bad(r, meas, "\"measured\" must be an object (strata probe's figures)%s", "");
    if (meas) {
        char *text = json_dumps(meas, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        c->measured = topoio_str(c, text);
        free(text);
    }
    if (c->max_servers && c->servers > c->max_servers)
        return bad(r, json_object_get(root, "servers"), "\"servers\" exceeds \"max_servers\"%s",
                   "");
    c->name = topoio_str(c, name);
    c->description = topoio_str(c, desc);
    return STRATA_OK;
}

static strata_status_t load_doc(util_json_doc_t *doc, const strata_link_catalog_t *cat,
                                topoio_cluster_t **c_p, strata_error_t *err)
{
    reader_t r = {.doc = doc, .cat = cat, .err = err, .c = topoio_cluster_create()};
    strata_status_t st = STRATA_ERR_NOMEM;
    if (r.c == NULL)
        strata_error_set(err, st, "out of memory");
    else if ((st = read_root(&r)) == STRATA_OK)
        *c_p = r.c;
    if (st) topoio_cluster_destroy(r.c);
    util_json_doc_destroy(doc);
    return st;
}

strata_status_t topoio_load_json(const char *path, const strata_link_catalog_t *cat,
                                 topoio_cluster_t **c_p, strata_error_t *err)
{
    util_json_doc_t *doc;
    strata_status_t st = util_json_load_file(path, &doc, err);
    return st ? st : load_doc(doc, cat, c_p, err);
}

strata_status_t topoio_load_json_text(const char *text, const char *name,
                                      const strata_link_catalog_t *cat, topoio_cluster_t **c_p,
                                      strata_error_t *err)
{
    util_json_doc_t *doc;
    strata_status_t st = util_json_load_text(text, strlen(text), name, &doc, err);
    return st ? st : load_doc(doc, cat, c_p, err);
}

/* ==== Validation of built descriptions (importers) ==== */

strata_status_t topoio_validate(const topoio_cluster_t *c, const strata_link_catalog_t *cat,
                                const char *where, strata_error_t *err)
{
    for (size_t i = 0; i < c->conns.n; i++)
        if (c->conns.v[i].meas_bw <= 0 && strata_link_find(cat, c->conns.v[i].link) == NULL)
            return strata_error_set_at(err, STRATA_ERR_NOT_FOUND, where, 0, 0,
                                       "link id \"%s\" is not in the link catalog",
                                       c->conns.v[i].link);
    for (size_t i = 0; i < c->groups.n; i++)
        if (c->groups.v[i].port && strata_link_find(cat, c->groups.v[i].port) == NULL)
            return strata_error_set_at(err, STRATA_ERR_NOT_FOUND, where, 0, 0,
                                       "NIC port id \"%s\" is not in the link catalog",
                                       c->groups.v[i].port);
    for (size_t i = 0; i < c->groups.n; i++) {
        const topoio_group_t *g = &c->groups.v[i];
        if (g->memory &&
            (!topoio_is_accel_kind(g->kind) || strata_topo_memory_find(cat, g->memory) == NULL))
            return strata_error_set_at(err, STRATA_ERR_NOT_FOUND, where, 0, 0,
                                       "memory \"%s\" of device \"%s\" is not an accelerator "
                                       "memory of the link catalog on an accelerator",
                                       g->memory, g->name);
    }
    return STRATA_OK;
}

/* ==== Writing ==== */

static json_t *end_json(const topoio_cluster_t *c, topoio_end_t e)
{
    const char *name = c->groups.v[e.group].name;
    if (e.index < 0) return json_string(name);
    char buf[192];
    snprintf(buf, sizeof(buf), "%s[%ld]", name, e.index);
    return json_string(buf);
}

static void set_str(json_t *o, const char *key, const char *s)
{
    if (s) json_object_set_new(o, key, json_string(s));
}

static json_t *group_json(const topoio_group_t *g)
{
    json_t *o = json_object();
    set_str(o, "name", g->name);
    set_str(o, "kind", g->kind);
    if (g->count != 1) json_object_set_new(o, "count", json_integer(g->count));
    set_str(o, "model", g->model);
    set_str(o, "port", g->port);
    set_str(o, "info", g->info);
    set_str(o, "memory", g->memory);
    if (g->capacity_gb > 0) json_object_set_new(o, "capacity_gb", json_real(g->capacity_gb));
    return o;
}

static json_t *conn_json(const topoio_cluster_t *c, const topoio_conn_t *k)
{
    json_t *o = json_object();
    if (k->map == TOPOIO_MAP_MESH) {
        json_object_set_new(o, "mesh", end_json(c, k->a));
    } else {
        json_object_set_new(o, "from", end_json(c, k->a));
        json_object_set_new(o, "to", end_json(c, k->b));
        if (k->map == TOPOIO_MAP_BLOCK) json_object_set_new(o, "map", json_string("block"));
    }
    set_str(o, "link", k->link);
    if (k->count != 1) json_object_set_new(o, "count", json_integer(k->count));
    if (k->lanes) json_object_set_new(o, "lanes", json_integer(k->lanes));
    if (k->meas_bw > 0) {
        json_t *m = json_pack("{s:o,s:o}", "bw_Bps", util_json_real(k->meas_bw), "alpha_s",
                              util_json_real(k->meas_lat));
        if (k->meas_bw_spread >= 0)
            json_object_set_new(m, "bw_spread", util_json_real(k->meas_bw_spread));
        if (k->meas_lat_spread >= 0)
            json_object_set_new(m, "alpha_spread", util_json_real(k->meas_lat_spread));
        set_str(m, "date", k->meas_date);
        set_str(m, "method", k->meas_method);
        json_object_set_new(o, "measured", m);
    }
    return o;
}

static json_t *net_json(const topoio_net_t *n)
{
    json_t *o = json_object();
    set_str(o, "builder", n->builder);
    set_str(o, "port", n->port);
    if (n->nics) json_object_set_new(o, "nics", json_integer(n->nics));
    if (n->tiers) json_object_set_new(o, "tiers", json_integer(n->tiers));
    if (n->ntiers_oversub) {
        json_t *a = json_array();
        for (int i = 0; i < n->ntiers_oversub; i++)
            json_array_append_new(a, util_json_real(n->oversub[i]));
        json_object_set_new(o, "oversubscription", a);
    }
    if (n->radix) json_object_set_new(o, "radix", json_integer(n->radix));
    if (n->ndims) {
        json_t *a = json_array();
        for (int i = 0; i < n->ndims; i++)
            json_array_append_new(a, json_integer(n->dims[i]));
        json_object_set_new(o, "dims", a);
    }
    set_str(o, "link", n->link);
    return o;
}

static json_t *cluster_json(const topoio_cluster_t *c)
{
    json_t *root = json_object(), *server = json_object();
    json_t *devs = json_array(), *links = json_array();
    set_str(root, "name", c->name);
    set_str(root, "description", c->description);
    if (c->sources.n) {
        json_t *src = json_array();
        for (size_t i = 0; i < c->sources.n; i++)
            json_array_append_new(src, json_string(c->sources.v[i]));
        json_object_set_new(root, "sources", src);
    }
    json_object_set_new(root, "servers", json_integer(c->servers));
    if (c->max_servers) json_object_set_new(root, "max_servers", json_integer(c->max_servers));
    if (c->p2p_off) json_object_set_new(root, "p2p", json_string("off"));
    for (size_t i = 0; i < c->groups.n; i++)
        json_array_append_new(devs, group_json(&c->groups.v[i]));
    for (size_t i = 0; i < c->conns.n; i++)
        json_array_append_new(links, conn_json(c, &c->conns.v[i]));
    json_object_set_new(server, "devices", devs);
    json_object_set_new(server, "links", links);
    json_object_set_new(root, "server", server);
    if (c->net.builder) json_object_set_new(root, "network", net_json(&c->net));
    if (c->measured) json_object_set_new(root, "measured", json_loads(c->measured, 0, NULL));
    return root;
}

strata_status_t topoio_export_json(const topoio_cluster_t *c, FILE *out, strata_error_t *err)
{
    json_t *root = cluster_json(c);
    int rc = root ? util_json_dump(root, out) : -1;
    json_decref(root);
    if (rc != 0) return strata_error_set(err, STRATA_ERR_IO, "cannot write the cluster file");
    return STRATA_OK;
}
