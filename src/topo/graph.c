/*
 * graph.c — storage of a topology: devices and links while building, the
 * CSR adjacency and endpoint table built by strata_topo_finish, and the
 * read accessors.
 *
 * Building appends to growable struct-of-arrays (amortised doubling); finish
 * sorts each device's adjacency by the neighbour's (tier, id) (so
 * link_between is a binary search and up/down walks scan only the
 * neighbours above or below), numbers the accelerators as endpoints in creation order, assigns
 * each accelerator the NIC it leaves its server through, and checks that
 * the graph is connected. Workload: up to ~10^6 devices and links, built
 * once, then read millions of times by routers.
 */
#define _POSIX_C_SOURCE 200809L
#include "topo.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ==== Kinds and link specs ==== */

static const char *const kind_names[] = {
#define STRATA_DEV_KIND_TEXT(name, text) text,
    STRATA_DEV_KIND_MAP(STRATA_DEV_KIND_TEXT)
#undef STRATA_DEV_KIND_TEXT
};

const char *strata_dev_kind_str(strata_dev_kind_t kind)
{
    if ((int)kind < 0 || kind >= STRATA_DEV_KIND_COUNT) return "?";
    return kind_names[kind];
}

int strata_dev_kind_parse(const char *s, strata_dev_kind_t *kind_p)
{
    if (!s) return -1;
    for (int k = 0; k < STRATA_DEV_KIND_COUNT; k++)
        if (util_str_eq_nocase(s, kind_names[k])) {
            *kind_p = (strata_dev_kind_t)k;
            return 0;
        }
    if (util_str_eq_nocase(s, "gpu") || util_str_eq_nocase(s, "npu") ||
        util_str_eq_nocase(s, "tpu")) {
        *kind_p = STRATA_DEV_ACCEL;
        return 0;
    }
    if (util_str_eq_nocase(s, "nvswitch")) {
        *kind_p = STRATA_DEV_SCALEUP_SWITCH;
        return 0;
    }
    return -1;
}

strata_topo_linkspec_t strata_topo_linkspec_bw(double bw_dir)
{
    strata_topo_linkspec_t s = {NULL, 1, bw_dir, 0.0};
    return s;
}

strata_topo_linkspec_t strata_topo_linkspec_kind(const char *kind, int32_t mult)
{
    strata_topo_linkspec_t s = {kind, mult, 0.0, -1.0};
    return s;
}

/* The SM-store share of catalog row l (a packet derivation that formats its
 * text), remembered per topology while it is built for the last 8 rows:
 * builders add links in runs of a few kinds, a 16k-GPU cluster some 10^5
 * links, and deriving it for each was 35 % of `strata wall` planning at
 * 16k GPUs. (Finding the row by name is the catalog's hash index.) */
static double row_store_share(strata_topo_t *t, const strata_link_t *l)
{
    int n = (int)(sizeof(t->rows) / sizeof(t->rows[0]));
    for (int i = 0; i < n && t->rows[i].row; i++)
        if (t->rows[i].row == l) return t->rows[i].store_share;
    double share = strata_link_sm_store_share(l);
    int i = t->rows_next++ % n;
    t->rows[i].row = l;
    t->rows[i].store_share = share;
    return share;
}

strata_status_t topo_spec_resolve(const strata_topo_t *t, const strata_topo_linkspec_t *spec,
                                  const char **kind_p, int32_t *mult_p, double *bw_p, double *lat_p,
                                  strata_error_t *err)
{
    if (!spec) return strata_error_set(err, STRATA_ERR_INVALID, "link spec missing");
    if (spec->mult < 0)
        return strata_error_set(err, STRATA_ERR_INVALID, "link multiplicity %d is negative",
                                (int)spec->mult);
    const strata_link_t *l = NULL;
    bool need_cat = !(spec->bw_dir > 0) || spec->latency < 0;
    if (spec->kind && need_cat) {
        if (!t->cat)
            return strata_error_set(err, STRATA_ERR_INVALID,
                                    "link kind '%s' needs the link catalog", spec->kind);
        l = strata_link_find(t->cat, spec->kind);
        if (!l)
            return strata_error_set(err, STRATA_ERR_NOT_FOUND,
                                    "unknown link kind '%s' (see 'strata links')", spec->kind);
    } else if (!spec->kind && need_cat) {
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "link spec needs a kind or an explicit bandwidth and latency");
    }
    double bw = spec->bw_dir > 0 ? spec->bw_dir : l->bw_dir;
    double lat = spec->latency >= 0 ? spec->latency : l->latency;
    if (!(bw > 0) || !isfinite(bw) || !isfinite(lat) || lat < 0)
        return strata_error_set(err, STRATA_ERR_INVALID, "link '%s': bandwidth %g B/s invalid",
                                spec->kind ? spec->kind : "custom", bw);
    *kind_p = spec->kind ? spec->kind : "custom";
    *mult_p = spec->mult ? spec->mult : 1;
    *bw_p = bw;
    *lat_p = lat;
    return STRATA_OK;
}

/* ==== Create / destroy ==== */

strata_status_t strata_topo_create(const char *name, const strata_link_catalog_t *cat,
                                   strata_topo_t **topo_p, strata_error_t *err)
{
    strata_topo_t *t = util_calloc(1, sizeof(*t));
    if (!t) goto nomem;
    t->arena = util_arena_create(1 << 16);
    if (!t->arena) goto nomem;
    t->name = util_arena_strdup(t->arena, name ? name : "topology");
    if (!t->name) goto nomem;
    t->cat = cat;
    *topo_p = t;
    return STRATA_OK;
nomem:
    strata_topo_destroy(t);
    return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory creating a topology");
}

void strata_topo_destroy(strata_topo_t *t)
{
    if (!t) return;
    util_free(t->kind);
    util_free(t->tier);
    util_free(t->group);
    util_free(t->local);
    util_free(t->rank);
    util_free(t->nic);
    util_free(t->dname);
    util_free(t->dmem);
    util_free(t->dcap);
    util_free(t->links);
    util_free(t->adj_off);
    util_free(t->adj_nbr);
    util_free(t->adj_chan);
    util_free(t->adj_same);
    util_free(t->adj_up);
    util_free(t->ep);
    util_free(t->stage);
    util_free(t->local_next);
    util_arena_destroy(t->arena);
    util_free(t);
}

/* Grow one array to cap elements of size elem; 0 or -1. */
static int grow(void **p, size_t cap, size_t elem)
{
    void *q = util_realloc(*p, cap * elem);
    if (!q) return -1;
    *p = q;
    return 0;
}

strata_status_t topo_reserve_devices(strata_topo_t *t, int32_t n, strata_error_t *err)
{
    if (n <= t->cap_dev) return STRATA_OK;
    int32_t cap = t->cap_dev ? t->cap_dev : 64;
    while (cap < n)
        cap = cap > INT32_MAX / 2 ? INT32_MAX : cap * 2;
    if (grow((void **)&t->kind, cap, 1) || grow((void **)&t->tier, cap, 1) ||
        grow((void **)&t->group, cap, 4) || grow((void **)&t->local, cap, 4) ||
        grow((void **)&t->rank, cap, 4) || grow((void **)&t->nic, cap, 4) ||
        grow((void **)&t->dname, cap, sizeof(char *)) ||
        grow((void **)&t->dmem, cap, sizeof(char *)) ||
        grow((void **)&t->dcap, cap, sizeof(double)))
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory for %d devices", (int)n);
    t->cap_dev = cap;
    return STRATA_OK;
}

strata_status_t topo_reserve_links(strata_topo_t *t, int32_t n, strata_error_t *err)
{
    if (n <= t->cap_link) return STRATA_OK;
    int32_t cap = t->cap_link ? t->cap_link : 64;
    while (cap < n)
        cap = cap > INT32_MAX / 4 ? INT32_MAX / 2 : cap * 2;
    if (grow((void **)&t->links, cap, sizeof(topo_link_rec_t)))
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory for %d links", (int)n);
    t->cap_link = cap;
    return STRATA_OK;
}

/* ==== Adding devices and links ==== */

/* Index of the next device of kind in group: a counter per (group, kind),
 * grown as groups appear. */
static int32_t next_local(strata_topo_t *t, strata_dev_kind_t kind, int32_t group)
{
    size_t need = ((size_t)group + 1) * STRATA_DEV_KIND_COUNT;
    if (need > t->local_cap) {
        size_t cap = t->local_cap ? t->local_cap : 64 * STRATA_DEV_KIND_COUNT;
        while (cap < need)
            cap *= 2;
        int32_t *q = util_realloc(t->local_next, cap * sizeof(int32_t));
        if (!q) return -2;
        memset(q + t->local_cap, 0, (cap - t->local_cap) * sizeof(int32_t));
        t->local_next = q;
        t->local_cap = cap;
    }
    return t->local_next[(size_t)group * STRATA_DEV_KIND_COUNT + kind]++;
}

strata_status_t strata_topo_add_device(strata_topo_t *t, strata_dev_kind_t kind, int32_t tier,
                                       int32_t group, const char *name, int32_t *id_p,
                                       strata_error_t *err)
{
    if (t->finished)
        return strata_error_set(err, STRATA_ERR_INVALID, "topology '%s' is already finished",
                                t->name);
    if ((int)kind < 0 || kind >= STRATA_DEV_KIND_COUNT)
        return strata_error_set(err, STRATA_ERR_INVALID, "bad device kind %d", (int)kind);
    if (tier < 0 || tier >= STRATA_TOPO_TIERS_MAX)
        return strata_error_set(err, STRATA_ERR_INVALID, "device tier %d not in 0..%d", (int)tier,
                                STRATA_TOPO_TIERS_MAX - 1);
    if (group < -1) return strata_error_set(err, STRATA_ERR_INVALID, "bad group %d", (int)group);
    if (t->ndev == INT32_MAX - 1)
        return strata_error_set(err, STRATA_ERR_RANGE, "too many devices");
    strata_status_t st = topo_reserve_devices(t, t->ndev + 1, err);
    if (st) return st;
    int32_t id = t->ndev;
    int32_t local = group >= 0 ? next_local(t, kind, group) : -1;
    if (local == -2) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory for groups");
    char buf[64];
    if (!name) {
        if (group >= 0)
            snprintf(buf, sizeof(buf), "s%d.%s%d", (int)group, kind_names[kind], (int)local);
        else
            snprintf(buf, sizeof(buf), "%s%d", kind_names[kind], (int)id);
        name = buf;
    }
    const char *nm = util_arena_strdup(t->arena, name);
    if (!nm) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory for device names");
    t->kind[id] = (uint8_t)kind;
    t->tier[id] = (int8_t)tier;
    t->group[id] = group;
    t->local[id] = local;
    t->rank[id] = -1;
    t->nic[id] = -1;
    t->dname[id] = nm;
    t->dmem[id] = NULL;
    t->dcap[id] = 0;
    t->ndev++;
    if (group >= t->ngroups) t->ngroups = group + 1;
    if (id_p) *id_p = id;
    return STRATA_OK;
}

/* Kind strings are interned per topology: builders pass the same few. */
static const char *intern_kind(strata_topo_t *t, const char *kind)
{
    for (int32_t i = t->nlink - 1; i >= 0 && i >= t->nlink - 64; i--)
        if (strcmp(t->links[i].kind, kind) == 0) return t->links[i].kind;
    return util_arena_strdup(t->arena, kind);
}

strata_status_t strata_topo_add_link(strata_topo_t *t, int32_t a, int32_t b,
                                     const strata_topo_linkspec_t *spec, int32_t *id_p,
                                     strata_error_t *err)
{
    if (t->finished)
        return strata_error_set(err, STRATA_ERR_INVALID, "topology '%s' is already finished",
                                t->name);
    if (a < 0 || a >= t->ndev || b < 0 || b >= t->ndev)
        return strata_error_set(err, STRATA_ERR_INVALID, "link %d-%d: no such device", (int)a,
                                (int)b);
    if (a == b)
        return strata_error_set(err, STRATA_ERR_INVALID, "link from '%s' to itself", t->dname[a]);
    const char *kind;
    int32_t mult;
    double bw, lat;
    strata_status_t st = topo_spec_resolve(t, spec, &kind, &mult, &bw, &lat, err);
    if (st) return st;
    if (t->nlink >= INT32_MAX / 2 - 1)
        return strata_error_set(err, STRATA_ERR_RANGE, "too many links");
    if ((st = topo_reserve_links(t, t->nlink + 1, err))) return st;
    const char *k = intern_kind(t, kind);
    if (!k) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory for link kinds");
    topo_link_rec_t *l = &t->links[t->nlink];
    l->a = a;
    l->b = b;
    l->mult = mult;
    l->tier = t->tier[a] > t->tier[b] ? t->tier[a] : t->tier[b];
    l->kind = k;
    l->bw_dir = bw * mult;
    l->latency = lat;
    l->sw_lat = l->endpoint = 0;
    /* a catalog latency comes with its split; another (measured, custom)
     * stands alone as the whole message's latency over this link */
    const strata_link_t *cl = t->cat ? strata_link_find(t->cat, kind) : NULL;
    /* a shared bus (DDR): reads and writes share it, half each way
     * (strata_topo_linkspec_t) */
    if (cl && !cl->full_duplex && !(spec->bw_dir > 0)) l->bw_dir /= 2;
    if (cl && lat == cl->latency) l->sw_lat = cl->switch_lat, l->endpoint = cl->endpoint;
    l->store_share = cl ? row_store_share(t, cl) : 1;
    if (id_p) *id_p = t->nlink;
    t->nlink++;
    return STRATA_OK;
}

strata_status_t strata_topo_set_nic(strata_topo_t *t, int32_t accel, int32_t nic,
                                    strata_error_t *err)
{
    if (accel < 0 || accel >= t->ndev || t->kind[accel] != STRATA_DEV_ACCEL)
        return strata_error_set(err, STRATA_ERR_INVALID, "set_nic: %d is not an accelerator",
                                (int)accel);
    if (nic < 0 || nic >= t->ndev || t->kind[nic] != STRATA_DEV_NIC)
        return strata_error_set(err, STRATA_ERR_INVALID, "set_nic: %d is not a NIC", (int)nic);
    t->nic[accel] = nic;
    return STRATA_OK;
}

/* ==== Accelerator memory ==== */

/* Accelerator memory rows of the catalog are the "HBM" category
 * (data/links.json, links.md "Memory ceiling"); the "Memory" rows are CPU
 * DDR channels, not an accelerator's memory. */
const strata_link_t *strata_topo_memory_find(const strata_link_catalog_t *cat, const char *id)
{
    const strata_link_t *l = cat && id ? strata_link_find(cat, id) : NULL;
    return l && l->category && strcmp(l->category, "HBM") == 0 ? l : NULL;
}

strata_status_t topo_record_memory(strata_topo_t *t, int32_t dev, const char *memory,
                                   const strata_link_catalog_t *cat, strata_error_t *err)
{
    if (dev < 0 || dev >= t->ndev || t->kind[dev] != STRATA_DEV_ACCEL)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "memory can only be recorded on an accelerator (%d is not one)",
                                (int)dev);
    if (memory == NULL) {
        t->dmem[dev] = NULL;
        return STRATA_OK;
    }
    if (cat && strata_link_find(cat, memory) == NULL)
        return strata_error_set(err, STRATA_ERR_NOT_FOUND, "unknown memory id \"%s\"", memory);
    if (cat && strata_topo_memory_find(cat, memory) == NULL)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "\"%s\" is not an accelerator memory of the link catalog", memory);
    /* Builders record one memory on many accelerators in a row: share the
     * copy the previous device holds (100k GPUs, one string). */
    const char *s = dev > 0 && t->dmem[dev - 1] && strcmp(t->dmem[dev - 1], memory) == 0
                        ? t->dmem[dev - 1]
                        : util_arena_strdup(t->arena, memory);
    if (s == NULL) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    t->dmem[dev] = s;
    return STRATA_OK;
}

strata_status_t strata_topo_set_memory(strata_topo_t *t, int32_t accel, const char *memory,
                                       strata_error_t *err)
{
    if (t->finished)
        return strata_error_set(err, STRATA_ERR_INVALID, "topology '%s' is already finished",
                                t->name);
    return topo_record_memory(t, accel, memory, t->cat, err);
}

strata_status_t strata_topo_set_capacity(strata_topo_t *t, int32_t mem, double bytes,
                                         strata_error_t *err)
{
    if (t->finished)
        return strata_error_set(err, STRATA_ERR_INVALID, "topology '%s' is already finished",
                                t->name);
    if (mem < 0 || mem >= t->ndev || t->kind[mem] != STRATA_DEV_MEMORY)
        return strata_error_set(
            err, STRATA_ERR_INVALID,
            "a capacity can only be recorded on a memory device (%d is not one)", (int)mem);
    if (!(bytes > 0) || !isfinite(bytes))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "capacity of '%s' must be a positive number of bytes",
                                t->dname[mem]);
    t->dcap[mem] = bytes;
    return STRATA_OK;
}

/* ==== Finish ==== */

/* Sort key of a neighbour in a row: (tier, id), so each row is [lower
 * tiers][same tier][higher tiers] and up/down walks scan only their part. */
static int64_t nbr_key(const strata_topo_t *t, int32_t v)
{
    return (int64_t)t->tier[v] << 32 | (uint32_t)v;
}

static int cmp_entry(const void *x, const void *y)
{
    const int64_t *p = x, *q = y;
    return (p[0] > q[0]) - (p[0] < q[0]);
}

/* First index in row v whose neighbour tier is >= tier. */
static int32_t row_tier_start(const strata_topo_t *t, int32_t v, int32_t tier)
{
    int32_t i = t->adj_off[v];
    while (i < t->adj_off[v + 1] && t->tier[t->adj_nbr[i]] < tier)
        i++;
    return i;
}

/* CSR adjacency: counting pass, fill pass, then sort each row by
 * (tier, id) of the neighbour (rows are short; qsort on (key, chan)). */
static strata_status_t build_adjacency(strata_topo_t *t, strata_error_t *err)
{
    size_t m = 2 * (size_t)t->nlink;
    t->adj_off = util_calloc((size_t)t->ndev + 1, sizeof(int32_t));
    t->adj_nbr = util_malloc(m * sizeof(int32_t) + 1);
    t->adj_chan = util_malloc(m * sizeof(int32_t) + 1);
    t->adj_same = util_malloc((size_t)t->ndev * sizeof(int32_t) + 1);
    t->adj_up = util_malloc((size_t)t->ndev * sizeof(int32_t) + 1);
    int64_t *pairs = util_malloc(2 * m * sizeof(int64_t) + 1);
    int32_t *fill = util_calloc((size_t)t->ndev + 1, sizeof(int32_t));
    if (!t->adj_off || !t->adj_nbr || !t->adj_chan || !t->adj_same || !t->adj_up || !pairs ||
        !fill) {
        util_free(pairs);
        util_free(fill);
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory for adjacency");
    }
    for (int32_t l = 0; l < t->nlink; l++) {
        t->adj_off[t->links[l].a + 1]++;
        t->adj_off[t->links[l].b + 1]++;
    }
    for (int32_t v = 0; v < t->ndev; v++)
        t->adj_off[v + 1] += t->adj_off[v];
    for (int32_t l = 0; l < t->nlink; l++) {
        int32_t a = t->links[l].a, b = t->links[l].b;
        int32_t ia = t->adj_off[a] + fill[a]++, ib = t->adj_off[b] + fill[b]++;
        pairs[2 * ia] = nbr_key(t, b);
        pairs[2 * ia + 1] = 2 * l;
        pairs[2 * ib] = nbr_key(t, a);
        pairs[2 * ib + 1] = 2 * l + 1;
    }
    for (int32_t v = 0; v < t->ndev; v++) {
        int32_t o = t->adj_off[v], d = t->adj_off[v + 1] - o;
        qsort(pairs + 2 * o, (size_t)d, 2 * sizeof(int64_t), cmp_entry);
    }
    for (size_t i = 0; i < m; i++) {
        t->adj_nbr[i] = (int32_t)(pairs[2 * i] & 0xffffffff);
        t->adj_chan[i] = (int32_t)pairs[2 * i + 1];
    }
    for (int32_t v = 0; v < t->ndev; v++) {
        t->adj_same[v] = row_tier_start(t, v, t->tier[v]);
        t->adj_up[v] = row_tier_start(t, v, t->tier[v] + 1);
    }
    util_free(pairs);
    util_free(fill);
    return STRATA_OK;
}

/* NIC candidates of each group: the NICs with a link leaving the group (on
 * the network), or every NIC of a group that has none (one server). For a
 * candidate, *idx_p[v] is its index among its group's candidates in id
 * order (-1 otherwise); *ncand_p[g] and *nacc_p[g] count candidates and
 * accelerators per group. */
static int nic_candidates(const strata_topo_t *t, int32_t **idx_p, int32_t **ncand_p,
                          int32_t **nacc_p)
{
    size_t ng = (size_t)t->ngroups + 1;
    int32_t *idx = util_malloc((size_t)t->ndev * sizeof(int32_t) + 1);
    int32_t *ncand = util_calloc(ng, sizeof(int32_t)), *nacc = util_calloc(ng, sizeof(int32_t));
    int32_t *noff = util_calloc(ng, sizeof(int32_t));
    if (!idx || !ncand || !nacc || !noff) {
        util_free(idx), util_free(ncand), util_free(nacc), util_free(noff);
        return -1;
    }
    for (int32_t v = 0; v < t->ndev; v++) {
        idx[v] = -1;
        if (t->group[v] < 0) continue;
        if (t->kind[v] == STRATA_DEV_ACCEL) nacc[t->group[v]]++;
        if (t->kind[v] != STRATA_DEV_NIC) continue;
        for (int32_t i = t->adj_off[v]; i < t->adj_off[v + 1]; i++)
            if (t->group[t->adj_nbr[i]] != t->group[v]) idx[v] = 0; /* leaves the group */
        noff[t->group[v]] += idx[v] == 0;
    }
    for (int32_t v = 0; v < t->ndev; v++) {
        int32_t g = t->group[v];
        if (g < 0 || t->kind[v] != STRATA_DEV_NIC || (noff[g] > 0 && idx[v] < 0)) continue;
        idx[v] = ncand[g]++;
    }
    util_free(noff);
    *idx_p = idx, *ncand_p = ncand, *nacc_p = nacc;
    return 0;
}

/* Whether NIC u beats NIC best (both at the nearest distance) for an
 * accelerator whose rail is candidate `want`: fewer accelerators already
 * on it, then its rail, then the lower id. */
static bool nic_better(const int32_t *load, const int32_t *idx, int32_t want, int32_t u,
                       int32_t best)
{
    if (best < 0) return true;
    if (load[u] != load[best]) return load[u] < load[best];
    if ((idx[u] == want) != (idx[best] == want)) return idx[u] == want;
    return u < best;
}

/* Each accelerator without an explicit NIC takes the nearest candidate NIC
 * of its own group (BFS inside the group). Among equally near ones it
 * takes the least used so far (accelerators in id order), then the one on
 * its rail — candidate local·ncand/naccel, the template's rule
 * (strata_topo_server_t) — then the lower id. On a DGX H100, GPUs 0 and 1
 * share a PCIe switch with NICs 0 and 1 and take one each (as NCCL does),
 * instead of both taking NIC 0. */
static strata_status_t assign_nics(strata_topo_t *t, strata_error_t *err)
{
    int32_t *dist = util_malloc((size_t)t->ndev * sizeof(int32_t));
    int32_t *queue = util_malloc((size_t)t->ndev * sizeof(int32_t));
    int32_t *load = util_calloc((size_t)t->ndev, sizeof(int32_t));
    int32_t *idx = NULL, *ncand = NULL, *nacc = NULL;
    if (!dist || !queue || !load || nic_candidates(t, &idx, &ncand, &nacc)) {
        util_free(dist);
        util_free(queue);
        util_free(load);
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory assigning NICs");
    }
    for (int32_t v = 0; v < t->ndev; v++)
        dist[v] = -1;
    for (int32_t s = 0; s < t->ndev; s++) {
        if (t->kind[s] != STRATA_DEV_ACCEL || t->nic[s] >= 0 || t->group[s] < 0) continue;
        int32_t g = t->group[s], head = 0, tail = 0, best = -1, bestd = -1;
        int32_t want = (int32_t)((int64_t)t->local[s] * ncand[g] / (nacc[g] ? nacc[g] : 1));
        dist[s] = 0;
        queue[tail++] = s;
        while (head < tail) {
            int32_t u = queue[head++];
            if (bestd >= 0 && dist[u] > bestd) break;
            if (t->kind[u] == STRATA_DEV_NIC && idx[u] >= 0 && nic_better(load, idx, want, u, best))
                best = u, bestd = dist[u];
            for (int32_t i = t->adj_off[u]; i < t->adj_off[u + 1]; i++) {
                int32_t w = t->adj_nbr[i];
                if (dist[w] < 0 && t->group[w] == g) {
                    dist[w] = dist[u] + 1;
                    queue[tail++] = w;
                }
            }
        }
        for (int32_t i = 0; i < tail; i++)
            dist[queue[i]] = -1;
        t->nic[s] = best;
        if (best >= 0) load[best]++;
    }
    util_free(dist);
    util_free(queue);
    util_free(load);
    util_free(idx);
    util_free(ncand);
    util_free(nacc);
    return STRATA_OK;
}

static strata_status_t check_connected(strata_topo_t *t, strata_error_t *err)
{
    int32_t *dist = util_malloc((size_t)t->ndev * sizeof(int32_t));
    int32_t *queue = util_malloc((size_t)t->ndev * sizeof(int32_t));
    if (!dist || !queue) {
        util_free(dist);
        util_free(queue);
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory checking connectivity");
    }
    int32_t reached = topo_bfs(t, 0, dist, queue);
    strata_status_t st = STRATA_OK;
    if (reached < t->ndev) {
        int32_t v = 0;
        while (dist[v] >= 0)
            v++;
        st = strata_error_set(err, STRATA_ERR_INVALID,
                              "topology '%s' is not connected: '%s' cannot reach '%s'", t->name,
                              t->dname[0], t->dname[v]);
    }
    util_free(dist);
    util_free(queue);
    return st;
}

/* ==== Host data paths: P2P off ==== */

strata_status_t strata_topo_set_p2p(strata_topo_t *t, bool on, strata_error_t *err)
{
    if (t->finished)
        return strata_error_set(err, STRATA_ERR_INVALID, "set_p2p: topology '%s' is finished",
                                t->name);
    t->p2p_off = !on;
    return STRATA_OK;
}

bool strata_topo_p2p(const strata_topo_t *t)
{
    return !t->p2p_off;
}

void topo_kind_counts(const strata_topo_t *t, int32_t cnt[STRATA_DEV_KIND_COUNT])
{
    for (int k = 0; k < STRATA_DEV_KIND_COUNT; k++)
        cnt[k] = 0;
    for (int32_t v = 0; v < t->ndev; v++)
        cnt[t->kind[v]]++;
    if (t->cpu_endpoints) {
        cnt[STRATA_DEV_CPU] += cnt[STRATA_DEV_ACCEL];
        cnt[STRATA_DEV_ACCEL] = 0;
    }
}

bool strata_topo_pcie_peers(const strata_topo_t *t)
{
    if (t->p2p_off) return false;
    for (int32_t d = 0; d < t->ndev; d++)
        if (t->kind[d] == STRATA_DEV_SCALEUP_SWITCH) return false;
    for (int32_t i = 0; i < t->nlink; i++)
        if (t->kind[t->links[i].a] == STRATA_DEV_ACCEL &&
            t->kind[t->links[i].b] == STRATA_DEV_ACCEL)
            return false;
    return true;
}

int32_t strata_topo_staging_memory(const strata_topo_t *t, int32_t dev)
{
    if (!t->stage || dev < 0 || dev >= t->ndev) return -1;
    return t->stage[dev];
}

/* Nearest host memory of accelerator s inside its server (BFS in creation
 * order, so ties go to the lower id), or -1. dist is all -1 on entry and
 * on return (only the visited entries are reset). */
int32_t topo_nearest_memory(const strata_topo_t *t, int32_t s, int32_t *dist, int32_t *queue)
{
    int32_t head = 0, tail = 0, best = -1, g = t->group[s];
    dist[s] = 0;
    queue[tail++] = s;
    while (head < tail && best < 0) {
        int32_t u = queue[head++];
        for (int32_t i = t->adj_off[u]; i < t->adj_off[u + 1] && best < 0; i++) {
            int32_t w = t->adj_nbr[i];
            if (dist[w] >= 0 || t->group[w] != g) continue;
            if (t->kind[w] == STRATA_DEV_MEMORY) best = w;
            dist[w] = dist[u] + 1;
            queue[tail++] = w;
        }
    }
    for (int32_t i = 0; i < tail; i++)
        dist[queue[i]] = -1;
    return best;
}

/* With P2P off, every accelerator of a server needs a host memory to
 * stage through (strata_topo_set_p2p). */
static strata_status_t assign_staging(strata_topo_t *t, strata_error_t *err)
{
    t->stage = util_malloc((size_t)t->ndev * sizeof(int32_t));
    int32_t *dist = util_malloc((size_t)t->ndev * sizeof(int32_t));
    int32_t *queue = util_malloc((size_t)t->ndev * sizeof(int32_t));
    strata_status_t st = STRATA_OK;
    if (!t->stage || !dist || !queue) {
        st = strata_error_set(err, STRATA_ERR_NOMEM, "out of memory for staging memories");
        goto out;
    }
    for (int32_t v = 0; v < t->ndev; v++)
        dist[v] = -1, t->stage[v] = -1;
    for (int32_t v = 0; v < t->ndev && !st; v++) {
        if (t->kind[v] != STRATA_DEV_ACCEL) continue;
        if (t->group[v] >= 0) t->stage[v] = topo_nearest_memory(t, v, dist, queue);
        if (t->stage[v] < 0)
            st = strata_error_set(err, STRATA_ERR_INVALID,
                                  "p2p=off: accelerator '%s' has no host memory in its server to "
                                  "stage through (add a device of kind memory joined to its CPU "
                                  "socket by its DDR channels)",
                                  t->dname[v]);
    }
out:
    util_free(dist);
    util_free(queue);
    return st;
}

strata_status_t strata_topo_finish(strata_topo_t *t, strata_error_t *err)
{
    if (t->finished) return STRATA_OK;
    strata_status_t st;
    int32_t nep = 0;
    for (int32_t v = 0; v < t->ndev; v++)
        nep += t->kind[v] == STRATA_DEV_ACCEL;
    if (nep == 0)
        return strata_error_set(err, STRATA_ERR_INVALID, "topology '%s' has no accelerators",
                                t->name);
    t->ep = util_malloc((size_t)nep * sizeof(int32_t));
    if (!t->ep) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory for endpoints");
    t->nep = 0;
    t->max_tier = 0;
    for (int32_t v = 0; v < t->ndev; v++) {
        if (t->tier[v] > t->max_tier) t->max_tier = t->tier[v];
        if (t->kind[v] != STRATA_DEV_ACCEL) continue;
        t->rank[v] = t->nep;
        t->ep[t->nep++] = v;
    }
    if ((st = build_adjacency(t, err))) return st;
    if ((st = check_connected(t, err))) return st;
    if ((st = assign_nics(t, err))) return st;
    if (t->p2p_off && (st = assign_staging(t, err))) return st;
    util_free(t->local_next);
    t->local_next = NULL;
    t->local_cap = 0;
    t->cat = NULL;
    t->finished = true;
    return STRATA_OK;
}

/* ==== Reading ==== */

const char *strata_topo_name(const strata_topo_t *t)
{
    return t->name;
}
int32_t strata_topo_device_count(const strata_topo_t *t)
{
    return t->ndev;
}
int32_t strata_topo_link_count(const strata_topo_t *t)
{
    return t->nlink;
}
int32_t strata_topo_endpoint_count(const strata_topo_t *t)
{
    return t->nep;
}
int32_t strata_topo_group_count(const strata_topo_t *t)
{
    return t->ngroups;
}

int32_t strata_topo_endpoint(const strata_topo_t *t, int32_t rank)
{
    return rank >= 0 && rank < t->nep ? t->ep[rank] : -1;
}

strata_topo_device_t strata_topo_device(const strata_topo_t *t, int32_t id)
{
    strata_topo_device_t d = {STRATA_DEV_ACCEL, -1, -1, -1, -1, -1, NULL, NULL, 0};
    if (id < 0 || id >= t->ndev) return d;
    d.kind = (strata_dev_kind_t)t->kind[id];
    d.tier = t->tier[id];
    d.group = t->group[id];
    d.local = t->local[id];
    d.rank = t->rank[id];
    d.nic = t->nic[id];
    d.name = t->dname[id];
    d.memory = t->dmem[id];
    d.capacity = t->dcap[id];
    return d;
}

strata_topo_link_t strata_topo_link(const strata_topo_t *t, int32_t id)
{
    strata_topo_link_t r = {-1, -1, 0, -1, NULL, 0, 0, 1};
    if (id < 0 || id >= t->nlink) return r;
    const topo_link_rec_t *l = &t->links[id];
    r.a = l->a;
    r.b = l->b;
    r.mult = l->mult;
    r.tier = l->tier;
    r.kind = l->kind;
    r.bw_dir = l->bw_dir;
    r.latency = l->latency;
    r.store_share = l->store_share;
    return r;
}

int32_t strata_topo_find_device(const strata_topo_t *t, const char *name)
{
    for (int32_t v = 0; v < t->ndev; v++)
        if (strcmp(t->dname[v], name) == 0) return v;
    return -1;
}

int32_t strata_topo_adjacency(const strata_topo_t *t, int32_t dev, const int32_t **nbr_p,
                              const int32_t **chan_p)
{
    if (!t->finished || dev < 0 || dev >= t->ndev) return -1;
    if (nbr_p) *nbr_p = t->adj_nbr + t->adj_off[dev];
    if (chan_p) *chan_p = t->adj_chan + t->adj_off[dev];
    return t->adj_off[dev + 1] - t->adj_off[dev];
}

int32_t strata_topo_link_between(const strata_topo_t *t, int32_t a, int32_t b)
{
    if (!t->finished || a < 0 || a >= t->ndev || b < 0 || b >= t->ndev) return -1;
    int32_t i = topo_row_find(t, a, b);
    return i >= 0 ? t->adj_chan[i] >> 1 : -1;
}

int32_t topo_row_find(const strata_topo_t *t, int32_t a, int32_t b)
{
    int64_t key = nbr_key(t, b);
    int32_t lo = t->adj_off[a], hi = t->adj_off[a + 1];
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (nbr_key(t, t->adj_nbr[mid]) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->adj_off[a + 1] && t->adj_nbr[lo] == b ? lo : -1;
}

double strata_topo_chan_bw(const strata_topo_t *t, int32_t chan)
{
    if (chan < 0 || (chan >> 1) >= t->nlink) return 0;
    return t->links[chan >> 1].bw_dir;
}

int32_t strata_topo_chan_src(const strata_topo_t *t, int32_t chan)
{
    if (chan < 0 || (chan >> 1) >= t->nlink) return -1;
    const topo_link_rec_t *l = &t->links[chan >> 1];
    return chan & 1 ? l->b : l->a;
}

int32_t strata_topo_chan_dst(const strata_topo_t *t, int32_t chan)
{
    if (chan < 0 || (chan >> 1) >= t->nlink) return -1;
    const topo_link_rec_t *l = &t->links[chan >> 1];
    return chan & 1 ? l->a : l->b;
}

void strata_topo_path_figures(const strata_topo_t *t, const int32_t *chans, int32_t n, double *bw_p,
                              double *latency_p)
{
    /* per-hop latencies add up; a switch between two hops adds the traversal
     * of the link kind entering it; the endpoints' overhead (the largest of
     * the path's link kinds: an RDMA NIC's over the PCIe DMA leading to it)
     * is paid once per message (issue 11, cause 3) */
    double bw = INFINITY, lat = 0, ep = 0;
    for (int32_t i = 0; i < n; i++) {
        const topo_link_rec_t *l = &t->links[chans[i] >> 1];
        if (l->bw_dir < bw) bw = l->bw_dir;
        lat += l->latency;
        uint8_t k = t->kind[strata_topo_chan_dst(t, chans[i])];
        if (i + 1 < n && (k == STRATA_DEV_PCIE_SWITCH || k == STRATA_DEV_SCALEUP_SWITCH ||
                          k == STRATA_DEV_NET_SWITCH))
            lat += l->sw_lat;
        if (l->endpoint > ep) ep = l->endpoint;
    }
    lat += ep;
    if (bw_p) *bw_p = bw;
    if (latency_p) *latency_p = lat;
}
