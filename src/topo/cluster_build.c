/*
 * cluster_build.c — from a cluster description (topoio.h) to a finished
 * strata_topo_t: the one path every preset, cluster file and importer takes.
 *
 * Design: servers are built by hand through the public graph API (any
 * wiring a description can state, e.g. DGX-1's hybrid cube-mesh). The
 * network is NOT built here: a fat-tree (plain or rail-optimised) comes from
 * strata_topo_build_cluster on a stand-in server that holds only the NICs,
 * and its switch tiers and NIC↔leaf links are grafted onto the real
 * servers' NICs — so there is one copy of each builder, in build_*.c. The
 * stand-in's shape record (per-NIC network share, whether servers are
 * interchangeable) comes along, and the closed-form bisection and hop
 * symmetry are then derived from the real servers' wiring (bisect.c,
 * topo_cluster_shape), never from the stand-in's. A torus network (TPU
 * pods) is the topology itself: strata_topo_build_torus.
 *
 * Link figures: by catalog id; a link narrower than the catalog width
 * ("lanes": 8 on a x16 kind) scales the catalog bandwidth by lanes/width.
 *
 * Workload: linear in the built graph; the fabric is built twice (stand-in
 * and graft), which is cheap next to anything done with the result.
 */
#include "topo.h" /* internal: a torus's name and memory, the fabric's shape record */
#include "topoio.h"

#include <string.h>

typedef struct builder {
    const topoio_cluster_t *c;
    const strata_link_catalog_t *cat;
    strata_topo_t *t;
    long *offset;      /* first member index of each group inside a server */
    long per_server;   /* devices per server */
    bool cpu_endpoint; /* no accelerators: CPUs are the endpoints */
    strata_error_t *err;
} builder_t;

static strata_dev_kind_t dev_kind(const builder_t *b, const char *k)
{
    strata_dev_kind_t kind = STRATA_DEV_NIC;
    topoio_kind_of(k, &kind); /* the reader admitted only kind words */
    return kind == STRATA_DEV_CPU && b->cpu_endpoint ? STRATA_DEV_ACCEL : kind;
}

/* Device id of member m of group g in server s (devices are created
 * server by server, group by group). */
static int32_t member_id(const builder_t *b, long s, long g, long m)
{
    return (int32_t)(s * b->per_server + b->offset[g] + m);
}

static void member_name(const builder_t *b, long s, const topoio_group_t *g, long m, char *buf,
                        size_t len)
{
    char local[160];
    if (g->count == 1)
        snprintf(local, sizeof(local), "%s", g->name);
    else
        snprintf(local, sizeof(local), "%s%ld", g->name, m);
    if (b->c->servers == 1)
        snprintf(buf, len, "%s", local);
    else
        snprintf(buf, len, "s%ld.%s", s, local);
}

static strata_status_t add_server_devices(builder_t *b, long s)
{
    char name[200];
    for (size_t g = 0; g < b->c->groups.n; g++) {
        const topoio_group_t *gr = &b->c->groups.v[g];
        for (long m = 0; m < gr->count; m++) {
            member_name(b, s, gr, m, name, sizeof(name));
            int32_t id;
            strata_status_t st = strata_topo_add_device(b->t, dev_kind(b, gr->kind), 0, (int32_t)s,
                                                        name, &id, b->err);
            if (!st && gr->memory) st = strata_topo_set_memory(b->t, id, gr->memory, b->err);
            if (!st && gr->capacity_gb > 0)
                st = strata_topo_set_capacity(b->t, id, gr->capacity_gb * 1e9, b->err);
            if (st) return st;
        }
    }
    return STRATA_OK;
}

static strata_status_t link_spec(const builder_t *b, const topoio_conn_t *k,
                                 strata_topo_linkspec_t *spec)
{
    *spec = strata_topo_linkspec_kind(k->link, (int32_t)k->count);
    if (k->meas_bw > 0) { /* measured by strata probe: these figures, not the catalog's */
        spec->bw_dir = k->meas_bw;
        spec->latency = k->meas_lat;
        return STRATA_OK;
    }
    if (k->lanes == 0) return STRATA_OK;
    const strata_link_t *l = strata_link_find(b->cat, k->link);
    if (l == NULL)
        return strata_error_set(b->err, STRATA_ERR_NOT_FOUND, "unknown link id \"%s\"", k->link);
    /* Bandwidth scales with the lane count: BW_dir = lanes × lane rate × η / 8
     * (links.md "Formula used"); latency does not depend on width. */
    spec->bw_dir = l->bw_dir * (double)k->lanes / (double)(l->lanes > 0 ? l->lanes : 1);
    /* latency (and its split) stays the catalog's: spec->latency < 0 */
    return STRATA_OK;
}

static strata_status_t add_one(builder_t *b, int32_t x, int32_t y,
                               const strata_topo_linkspec_t *spec)
{
    if (x == y) return STRATA_OK;
    return strata_topo_add_link(b->t, x, y, spec, NULL, b->err);
}

/* Expand one link rule in server s. */
static strata_status_t add_conn(builder_t *b, long s, const topoio_conn_t *k)
{
    strata_topo_linkspec_t spec;
    strata_status_t st = link_spec(b, k, &spec);
    const topoio_group_t *ga = &b->c->groups.v[k->a.group];
    if (st) return st;
    if (k->map == TOPOIO_MAP_MESH) {
        for (long i = 0; i < ga->count && !st; i++)
            for (long j = i + 1; j < ga->count && !st; j++)
                st = add_one(b, member_id(b, s, k->a.group, i), member_id(b, s, k->a.group, j),
                             &spec);
        return st;
    }
    const topoio_group_t *gb = &b->c->groups.v[k->b.group];
    if (k->map == TOPOIO_MAP_BLOCK) {
        long na = ga->count, nb = gb->count, n = na > nb ? na : nb;
        for (long i = 0; i < n && !st; i++)
            st = add_one(b, member_id(b, s, k->a.group, na >= nb ? i : i * na / nb),
                         member_id(b, s, k->b.group, nb >= na ? i : i * nb / na), &spec);
        return st;
    }
    long a0 = k->a.index < 0 ? 0 : k->a.index, a1 = k->a.index < 0 ? ga->count : k->a.index + 1;
    long b0 = k->b.index < 0 ? 0 : k->b.index, b1 = k->b.index < 0 ? gb->count : k->b.index + 1;
    for (long i = a0; i < a1 && !st; i++)
        for (long j = b0; j < b1 && !st; j++)
            st = add_one(b, member_id(b, s, k->a.group, i), member_id(b, s, k->b.group, j), &spec);
    return st;
}

static strata_status_t add_servers(builder_t *b)
{
    strata_status_t st = STRATA_OK;
    for (long s = 0; s < b->c->servers && !st; s++) {
        st = add_server_devices(b, s);
        for (size_t k = 0; k < b->c->conns.n && !st; k++)
            st = add_conn(b, s, &b->c->conns.v[k]);
    }
    return st;
}

/* ==== Network graft ==== */

/* NICs of one server that join the fabric, in group order; first net.nics. */
static long fabric_nics(const topoio_cluster_t *c, const char **port_p)
{
    long n = 0;
    *port_p = c->net.port;
    for (size_t g = 0; g < c->groups.n; g++) {
        const topoio_group_t *gr = &c->groups.v[g];
        if (strcmp(gr->kind, "nic") != 0) continue;
        if (*port_p == NULL) *port_p = gr->port;
        n += gr->count;
    }
    if (c->net.nics > 0 && c->net.nics < n) n = c->net.nics;
    return n;
}

/* Device id of the i-th fabric NIC of server s. */
static int32_t nic_id(const builder_t *b, long s, long i)
{
    for (size_t g = 0; g < b->c->groups.n; g++) {
        const topoio_group_t *gr = &b->c->groups.v[g];
        if (strcmp(gr->kind, "nic") != 0) continue;
        if (i < gr->count) return member_id(b, s, (long)g, i);
        i -= gr->count;
    }
    return -1;
}

/* Switch tiers needed for `endpoints` ports on radix-k switches:
 * k (one switch), k²/2 (leaf-spine), k³/4 (three tiers; Al-Fares 2008). */
static int32_t tiers_for(long endpoints, long k)
{
    if (endpoints <= k) return 1;
    if (endpoints <= k * k / 2) return 2;
    return 3;
}

/* The radix cannot hold the fabric: find the smallest power-of-two
 * radix that can (building it, up to 1024 ports) and say exactly which
 * option to add, rather than inventing a switch the preset does not name. */
static strata_status_t suggest_radix(const builder_t *b, const strata_topo_server_t *srv,
                                     const strata_topo_fattree_t *ft0, int32_t tiers)
{
    const topoio_net_t *n = &b->c->net;
    strata_topo_fattree_t ft = *ft0;
    strata_error_t ignored;
    ft.tiers = tiers;
    for (ft.k = ft0->k * 2; ft.k <= 1024; ft.k *= 2) {
        strata_topo_t *fab = NULL;
        strata_status_t st = strata_topo_build_cluster(srv, (int32_t)b->c->servers, &ft,
                                                       strcmp(n->builder, "rail-fat-tree") == 0,
                                                       b->cat, &fab, &ignored);
        strata_topo_destroy(fab);
        if (st == STRATA_OK)
            return strata_error_set(b->err, STRATA_ERR_RANGE,
                                    "%ld servers x %d NICs do not fit %d tiers of %d-port "
                                    "switches; add radix=%d",
                                    b->c->servers, (int)srv->nics, (int)tiers, (int)ft0->k,
                                    (int)ft.k);
    }
    return STRATA_ERR_RANGE; /* the builder's own message stands */
}

static strata_status_t build_fabric(const builder_t *b, long nics, const char *port,
                                    strata_topo_t **fab_p)
{
    const topoio_net_t *n = &b->c->net;
    bool sw = strcmp(n->builder, "switch") == 0;
    long endpoints = nics * b->c->servers;
    /* Default radix 64: NVIDIA Quantum-2 NDR, 64 × 400G ports (links.md IB NDR row). */
    long k = n->radix ? n->radix : 64;
    if (sw && k < endpoints) k = endpoints + (endpoints & 1);
    strata_topo_server_t srv = {.name = b->c->name,
                                .accels = (int32_t)nics,
                                .nics = (int32_t)nics,
                                .pcie = strata_topo_linkspec_kind(port, 1),
                                .nic_net = strata_topo_linkspec_kind(port, 1)};
    strata_topo_fattree_t ft = {.k = (int32_t)k};
    for (int i = 0; i < n->ntiers_oversub && i + 1 < STRATA_TOPO_TIERS_MAX; i++)
        ft.oversub[i + 1] = n->oversub[i];
    int32_t t0 = sw ? 1 : n->tiers ? (int32_t)n->tiers : tiers_for(endpoints, k);
    /* Rails of several servers need a spine tier to meet (NVIDIA DGX
     * SuperPOD: one leaf per rail, spines above); so does a requested
     * oversubscription. One server's NICs need only one switch. */
    bool oversub = n->ntiers_oversub && n->oversub[0] > 1;
    bool rails = strcmp(n->builder, "rail-fat-tree") == 0 && b->c->servers > 1;
    if (!sw && !n->tiers && t0 < 2 && (oversub || rails)) t0 = 2;
    /* ratio i (leaf tier first) needs a switch tier above tier i+1: a
     * ratio beyond the last tier would be dropped, so refuse it, and let a
     * ratio > 1 at tier 2 ask for the third tier */
    int32_t need = 1;
    for (int i = 0; i < n->ntiers_oversub; i++)
        if (n->oversub[i] > 1) need = (int32_t)i + 2;
    int above = (sw ? 1 : n->tiers ? (int)n->tiers : 3) - 1; /* switch tiers above the leaves */
    if (n->ntiers_oversub > 2 || (n->tiers && need > n->tiers) || (sw && need > 1))
        return strata_error_set(b->err, STRATA_ERR_INVALID,
                                "oversub: %d ratio%s, but this fabric has %d switch tier%s above "
                                "its leaves (at most 2: oversub=R1:R2)",
                                n->ntiers_oversub, n->ntiers_oversub > 1 ? "s" : "", above,
                                above == 1 ? "" : "s");
    if (!sw && !n->tiers && t0 < need) t0 = need;
    int32_t t1 = sw || n->tiers ? t0 : 3;
    strata_status_t st = STRATA_ERR_INVALID;
    for (int32_t t = t0; t <= t1; t++) {
        ft.tiers = t;
        st = strata_topo_build_cluster(&srv, (int32_t)b->c->servers, &ft,
                                       strcmp(n->builder, "rail-fat-tree") == 0, b->cat, fab_p,
                                       b->err);
        if (st == STRATA_OK) break;
    }
    if (st == STRATA_ERR_RANGE && !sw) st = suggest_radix(b, &srv, &ft, t1);
    return st;
}

/* Copy the fabric's switches and the links among switches and NICs. */
static strata_status_t graft(builder_t *b, const strata_topo_t *fab, long nics)
{
    int32_t nd = strata_topo_device_count(fab);
    int32_t *map = util_malloc((size_t)(nd > 0 ? nd : 1) * sizeof(int32_t));
    strata_status_t st = STRATA_OK;
    if (map == NULL) return strata_error_set(b->err, STRATA_ERR_NOMEM, "out of memory");
    for (int32_t d = 0; d < nd && !st; d++) {
        strata_topo_device_t dv = strata_topo_device(fab, d);
        map[d] = -1;
        if (dv.tier > 0)
            st = strata_topo_add_device(b->t, dv.kind, dv.tier, -1, dv.name, &map[d], b->err);
        else if (dv.kind == STRATA_DEV_NIC && dv.local >= 0 && dv.local < nics)
            map[d] = nic_id(b, dv.group, dv.local);
    }
    for (int32_t l = 0; l < strata_topo_link_count(fab) && !st; l++) {
        strata_topo_link_t lk = strata_topo_link(fab, l);
        if (map[lk.a] < 0 || map[lk.b] < 0) continue;
        /* Figures copied as built (oversubscription already applied). */
        strata_topo_linkspec_t spec = {
            .kind = lk.kind, .mult = lk.mult, .bw_dir = lk.bw_dir / lk.mult, .latency = lk.latency};
        st = strata_topo_add_link(b->t, map[lk.a], map[lk.b], &spec, NULL, b->err);
    }
    util_free(map);
    return st;
}

static strata_status_t add_network(builder_t *b)
{
    const char *port;
    long nics = fabric_nics(b->c, &port);
    if (nics == 0) {
        if (b->c->servers == 1) return STRATA_OK;
        return strata_error_set(b->err, STRATA_ERR_INVALID,
                                "cluster '%s': %ld servers but no NIC to join them",
                                b->c->name ? b->c->name : "?", b->c->servers);
    }
    if (port == NULL)
        return strata_error_set(b->err, STRATA_ERR_INVALID,
                                "cluster '%s': the NICs have no "
                                "\"port\" link id and the network names none",
                                b->c->name ? b->c->name : "?");
    strata_topo_t *fab = NULL;
    strata_status_t st = build_fabric(b, nics, port, &fab);
    if (st == STRATA_OK) st = graft(b, fab, nics);
    /* The grafted fabric is the stand-in's, switch for switch and NIC for
     * NIC, so what the builder proved about it holds here: its per-NIC
     * share and whether servers are interchangeable. What depends on the
     * servers (egress, spreading, in-server routes) is computed on the
     * real ones by topo_cluster_shape after finish. */
    if (st == STRATA_OK) {
        b->t->shape.kind = TOPO_SHAPE_TIERED;
        b->t->shape.att_share = fab->shape.att_share;
        b->t->shape.servers_symmetric = fab->shape.servers_symmetric;
    }
    strata_topo_destroy(fab);
    return st;
}

/* ==== Torus ==== */

/* Total torus shape: the server block repeated along the dimensions,
 * servers factored as evenly as possible (largest factor on the last axis). */
static strata_status_t torus_dims(const topoio_cluster_t *c, int32_t *dims, strata_error_t *err)
{
    long rest = c->servers, rep[TOPOIO_MAX_DIMS];
    for (int i = 0; i < c->net.ndims; i++)
        rep[i] = 1;
    for (long f = 2; rest > 1;) {
        if (rest % f) {
            f++;
            continue;
        }
        int min = 0; /* give the factor to the axis with the smallest extent */
        for (int i = 1; i < c->net.ndims; i++)
            if (rep[i] * c->net.dims[i] < rep[min] * c->net.dims[min]) min = i;
        rep[min] *= f;
        rest /= f;
    }
    for (int i = 0; i < c->net.ndims; i++) {
        long d = rep[i] * c->net.dims[i];
        if (d > INT32_MAX) return strata_error_set(err, STRATA_ERR_RANGE, "torus too large");
        dims[i] = (int32_t)d;
    }
    return STRATA_OK;
}

/* The memory a torus's accelerators record: the torus places a block's
 * accelerators by position, not by group, so the groups must agree (all
 * the same id, or none). */
static strata_status_t torus_memory(const topoio_cluster_t *c, const char **mem_p,
                                    strata_error_t *err)
{
    const char *mem = NULL;
    bool first = true;
    for (size_t g = 0; g < c->groups.n; g++) {
        const topoio_group_t *gr = &c->groups.v[g];
        if (!topoio_is_accel_kind(gr->kind)) continue;
        const char *m = gr->memory;
        bool same = m && mem ? strcmp(m, mem) == 0 : m == mem;
        if (!first && !same) goto differ;
        mem = m, first = false;
    }
    *mem_p = mem;
    return STRATA_OK;
differ:
    return strata_error_set(err, STRATA_ERR_INVALID,
                            "torus network: the accelerator groups record different memories "
                            "(a torus places accelerators by position, not by group)");
}

/* Record mem on every accelerator of a finished torus. */
static strata_status_t torus_set_memory(strata_topo_t *t, const char *mem,
                                        const strata_link_catalog_t *cat, strata_error_t *err)
{
    strata_status_t st = STRATA_OK;
    for (int32_t r = 0; mem && r < strata_topo_endpoint_count(t) && !st; r++)
        st = topo_record_memory(t, strata_topo_endpoint(t, r), mem, cat, err);
    return st;
}

static strata_status_t build_torus(const topoio_cluster_t *c, const strata_link_catalog_t *cat,
                                   strata_topo_t **topo_p, strata_error_t *err)
{
    int32_t dims[TOPOIO_MAX_DIMS];
    long per = 1;
    for (int i = 0; i < c->net.ndims; i++)
        per *= c->net.dims[i];
    long acc = topoio_count_devkind(c, STRATA_DEV_ACCEL);
    if (acc != per || c->conns.n)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "torus network: the server must hold exactly the %ld accelerators "
                                "of one dims block and no links (found %ld)",
                                per, acc);
    const char *mem = NULL;
    strata_status_t st = torus_memory(c, &mem, err);
    if (st == STRATA_OK) st = torus_dims(c, dims, err);
    strata_topo_linkspec_t spec = strata_topo_linkspec_kind(c->net.link, 1);
    if (st == STRATA_OK) st = strata_topo_build_torus(c->net.ndims, dims, &spec, cat, topo_p, err);
    if (st) return st;
    if (c->name) {
        char *name = util_arena_strdup((*topo_p)->arena, c->name);
        if (name) (*topo_p)->name = name;
    }
    if ((st = torus_set_memory(*topo_p, mem, cat, err))) {
        strata_topo_destroy(*topo_p);
        *topo_p = NULL;
    }
    return st;
}

/* ==== Entry ==== */

/* Largest graph built from a description: 16M devices or links, ~100× a
 * 100k-GPU cluster, so a typo ("count": 100000000) fails fast instead of
 * exhausting memory or time. */
#define MAX_ELEMENTS (1L << 24)

/* Device pairs one link rule joins in one server. */
static double conn_pairs(const topoio_cluster_t *c, const topoio_conn_t *k)
{
    double na = k->a.index >= 0 ? 1 : (double)c->groups.v[k->a.group].count;
    if (k->map == TOPOIO_MAP_MESH) return na * (na - 1) / 2;
    double nb = k->b.index >= 0 ? 1 : (double)c->groups.v[k->b.group].count;
    return k->map == TOPOIO_MAP_BLOCK ? (na > nb ? na : nb) : na * nb;
}

/* A fat-tree network the switches cannot hold, refused before any server
 * is built (dgx-h100:300000 used to build 1.4 GB of servers first): the
 * fabric's NICs against k, k²/2 or k³/4 (tiers as asked, else up to 3;
 * a single switch grows to the NIC count, up to the radix bound). */
static strata_status_t check_fabric(const topoio_cluster_t *c, strata_error_t *err)
{
    const char *port;
    const topoio_net_t *n = &c->net;
    if (n->builder == NULL || strcmp(n->builder, "torus") == 0) return STRATA_OK;
    double nics = (double)fabric_nics(c, &port) * (double)c->servers;
    bool sw = strcmp(n->builder, "switch") == 0;
    long k = sw ? TOPOIO_RADIX_MAX : n->radix ? n->radix : 64; /* default: Quantum-2, 64 ports */
    long tiers = sw ? 1 : n->tiers ? n->tiers : TOPOIO_SWITCH_TIERS;
    double cap = topo_fattree_capacity((int32_t)k, (int32_t)tiers);
    if (nics <= cap) return STRATA_OK;
    long k2 = k; /* the smallest power-of-two radix that would hold it, if any */
    while (k2 < TOPOIO_RADIX_MAX && topo_fattree_capacity((int32_t)k2, (int32_t)tiers) < nics)
        k2 *= 2;
    if (!sw && k2 > k && topo_fattree_capacity((int32_t)k2, (int32_t)tiers) >= nics)
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "%s: %.0f NICs on the network exceed what %ld-port switches join "
                                "in %ld tier(s) (%.0f); add radix=%ld",
                                c->name ? c->name : "cluster", nics, k, tiers, cap, k2);
    return strata_error_set(err, STRATA_ERR_RANGE,
                            "%s: %.0f NICs on the network exceed what %ld-port switches join in "
                            "%ld tier(s) (%.0f; use fewer servers)",
                            c->name ? c->name : "cluster", nics, k, tiers, cap);
}

static strata_status_t check_size(const topoio_cluster_t *c, strata_error_t *err)
{
    double dev = 0, links = 0;
    for (size_t g = 0; g < c->groups.n; g++)
        dev += (double)c->groups.v[g].count;
    for (size_t k = 0; k < c->conns.n; k++)
        links += conn_pairs(c, &c->conns.v[k]);
    if (c->servers < 1 || c->servers > TOPOIO_SERVERS_MAX)
        return strata_error_set(err, STRATA_ERR_RANGE, "%s: %ld servers (1 to %ld)",
                                c->name ? c->name : "cluster", c->servers, TOPOIO_SERVERS_MAX);
    if (dev * (double)c->servers > (double)MAX_ELEMENTS ||
        links * (double)c->servers > (double)MAX_ELEMENTS)
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "%s: %.0f devices and %.0f links is beyond what strata builds "
                                "(%ld of each)",
                                c->name ? c->name : "cluster", dev * (double)c->servers,
                                links * (double)c->servers, MAX_ELEMENTS);
    return check_fabric(c, err);
}

strata_status_t topoio_instantiate(const topoio_cluster_t *c, const strata_link_catalog_t *cat,
                                   strata_topo_t **topo_p, strata_error_t *err)
{
    if (c->max_servers && c->servers > c->max_servers)
        return strata_error_set(err, STRATA_ERR_RANGE, "%s: at most %ld servers, asked for %ld",
                                c->name ? c->name : "cluster", c->max_servers, c->servers);
    strata_status_t st0 = check_size(c, err);
    if (st0) return st0;
    if (c->net.builder && strcmp(c->net.builder, "torus") == 0) {
        if (c->p2p_off)
            return strata_error_set(err, STRATA_ERR_INVALID,
                                    "%s: p2p=off applies to servers whose accelerators stage "
                                    "through host memory, not to a torus of chips",
                                    c->name ? c->name : "cluster");
        return build_torus(c, cat, topo_p, err);
    }
    builder_t b = {.c = c, .cat = cat, .err = err};
    b.offset = util_calloc(c->groups.n + 1, sizeof(long));
    if (b.offset == NULL) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    for (size_t g = 0; g < c->groups.n; g++) {
        b.offset[g + 1] = b.offset[g] + c->groups.v[g].count;
    }
    b.cpu_endpoint = topoio_count_devkind(c, STRATA_DEV_ACCEL) == 0;
    b.per_server = b.offset[c->groups.n];
    strata_status_t st = strata_topo_create(c->name ? c->name : "cluster", cat, &b.t, err);
    if (st == STRATA_OK) b.t->cpu_endpoints = b.cpu_endpoint;
    if (st == STRATA_OK && c->p2p_off) st = strata_topo_set_p2p(b.t, false, err);
    if (st == STRATA_OK) st = add_servers(&b);
    if (st == STRATA_OK && c->net.builder) st = add_network(&b);
    if (st == STRATA_OK) st = strata_topo_finish(b.t, err);
    if (st == STRATA_OK) st = topo_cluster_shape(b.t, (int32_t)c->servers, err);
    util_free(b.offset);
    if (st) {
        strata_topo_destroy(b.t);
        return st;
    }
    *topo_p = b.t;
    return STRATA_OK;
}
