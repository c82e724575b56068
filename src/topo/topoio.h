/*
 * topoio.h — internal header of the topology I/O half: the cluster
 * description every importer produces and the one loader/exporter reads and
 * writes.
 *
 * Design: a cluster is described, not built, by the readers. A description
 * says what ONE server holds (device groups, intra-server links by link
 * catalog id and multiplicity, NICs with their PCIe attachment), how many
 * servers there are, and which network joins them (a builder name plus its
 * parameters). Presets (data/presets/NAME.json), user cluster files, NCCL
 * topology XML and the hwloc view of the local host all become this same
 * structure, so there is exactly one path from a description to a
 * strata_topo_t (topoio_instantiate) and one writer (topoio_export_json),
 * which makes "load → export → load" a round trip by construction.
 *
 * Workload: descriptions are tiny (tens of groups); everything here is
 * linear in the file size. Instantiation is linear in the built graph.
 *
 * Ownership: a topoio_cluster_t owns every string and array it points to
 * (strings live in its arena); topoio_cluster_destroy frees all of it.
 */
#ifndef STRATA_TOPOIO_H
#define STRATA_TOPOIO_H

#include "strata/link.h"
#include "strata/topo.h"
#include "util.h"

#include <stdbool.h>

#define TOPOIO_MAX_TIERS 4
#define TOPOIO_MAX_DIMS  3

/* Limits of a description (docs/formats.md "Limits"), checked where each
 * value is read (cluster files with file:line:col, preset options) and
 * again, with the fabric's capacity, before anything is allocated. */
#define TOPOIO_COUNT_MAX    4096L      /* devices in a group, links of a rule, fabric NICs */
#define TOPOIO_LANES_MAX    1024L      /* lanes of a link (as strata link --lanes) */
#define TOPOIO_SERVERS_MAX  (1L << 20) /* servers (as railft:servers=) */
#define TOPOIO_SWITCH_TIERS 3L         /* switch tiers of the fat-tree builders */
#define TOPOIO_RADIX_MAX    1024L      /* switch ports, even (the fat-tree builder's bound) */
#define TOPOIO_OVERSUB_MAX  1e6        /* down:up ratio of a tier (as oversub= of specs) */
#define TOPOIO_DIM_MAX      (1L << 20) /* a torus dimension (as torus:AxB) */
#define TOPOIO_CAPACITY_MAX 1e6        /* GB of one memory device (a petabyte) */

/* How a link rule maps the members of its two endpoint groups. */
typedef enum {
    TOPOIO_MAP_ALL = 0, /* every member of "from" to every member of "to" */
    TOPOIO_MAP_BLOCK,   /* member i of the larger group to member i*small/large of the other */
    TOPOIO_MAP_MESH,    /* full mesh among the members of one group */
} topoio_map_t;

/* A group of identical devices in one server: "gpu" × 8 gives members
 * gpu0..gpu7 (a group of one keeps its bare name). */
typedef struct topoio_group {
    const char *name;
    const char *kind;  /* gpu npu tpu cpu nvswitch pcie-switch nic memory */
    const char *model; /* may be NULL */
    const char *port;  /* NICs: catalog id of the network port, may be NULL */
    const char *info;  /* free text for display (caches, "speed unknown"), may be NULL */
    long count;
    const char *memory; /* accelerators: catalog id of their memory ("hbm-h200"), may be NULL */
    double capacity_gb; /* memory and cxl-memory: GB (1e9 B) per member, 0 = not recorded */
} topoio_group_t;

/* One endpoint of a link rule: a whole group (index -1) or one member. */
typedef struct topoio_end {
    long group;
    long index;
} topoio_end_t;

/* A link rule: count parallel links of catalog kind `link` between the
 * mapped members of a and b (b unused for MESH). lanes 0 = catalog width. */
typedef struct topoio_conn {
    topoio_end_t a, b;
    topoio_map_t map;
    const char *link;
    long count;
    long lanes;
    /* "measured" (strata probe, docs/probe.md): when meas_bw > 0 the link's
     * bandwidth per direction (B/s) and latency (s) are these, not the
     * catalog's; link then names the measured path and need not be a
     * catalog id. Spreads are relative (IQR / median), -1 when absent. */
    double meas_bw, meas_lat, meas_bw_spread, meas_lat_spread;
    const char *meas_date, *meas_method;
} topoio_conn_t;

/* The network joining the servers. builder NULL means none (one server). */
typedef struct topoio_net {
    const char *builder; /* "rail-fat-tree", "fat-tree", "switch", "torus" */
    const char *port;    /* catalog id of fabric ports; NULL = the NIC group's port */
    long nics;           /* NICs per server on the fabric; 0 = all NIC members */
    long tiers;          /* switch tiers (fat-tree builders); 0 = builder default */
    int ntiers_oversub;
    double oversub[TOPOIO_MAX_TIERS]; /* per tier, leaf first; 1 = non-blocking */
    long radix;                       /* switch ports; 0 = builder default */
    int ndims;                        /* torus: dims of ONE server's block */
    long dims[TOPOIO_MAX_DIMS];
    const char *link; /* torus: catalog id of the torus links */
} topoio_net_t;

typedef struct topoio_cluster {
    util_arena_t *arena;
    const char *name;
    const char *description;
    UTIL_VEC(const char *) sources;
    UTIL_VEC(topoio_group_t) groups;
    UTIL_VEC(topoio_conn_t) conns;
    long servers;     /* default server count */
    long max_servers; /* 0 = unlimited */
    topoio_net_t net;
    /* top-level "measured" object (strata probe's figures of this host),
     * kept as compact JSON text so export writes it back; NULL = none */
    const char *measured;
    /* "p2p": "off" — GPU peer-to-peer disabled (strata_topo_set_p2p) */
    bool p2p_off;
} topoio_cluster_t;

/* ==== Description (cluster_file.c) ==== */

/* An empty description (servers = 1, no network). NULL on OOM. */
topoio_cluster_t *topoio_cluster_create(void);
void topoio_cluster_destroy(topoio_cluster_t *c);
/* Arena copy of s (NULL stays NULL). */
const char *topoio_str(topoio_cluster_t *c, const char *s);
/* Append a group; returns its index or -1 on OOM. */
long topoio_add_group(topoio_cluster_t *c, const char *name, const char *kind, long count);
/* Append a link of `count` × `link` between member ia of group ga and member
 * ib of group gb (index -1 = whole group, map ALL). 0 ok, -1 OOM. */
int topoio_add_conn(topoio_cluster_t *c, long ga, long ia, long gb, long ib, const char *link,
                    long count, long lanes);
/* Index of the group called name, or -1. */
long topoio_find_group(const topoio_cluster_t *c, const char *name);
/* Total devices of a given kind in one server. */
long topoio_count_kind(const topoio_cluster_t *c, const char *kind);
/* Whether a group kind is an accelerator (accel, gpu, npu, tpu): the
 * endpoints, and the only kinds that may record a memory. */
bool topoio_is_accel_kind(const char *kind);
/* The device kind of a cluster file's kind word (the words strata prints,
 * strata_dev_kind_str, and gpu/npu/tpu/nvswitch): 0 and *kind_p, or -1. */
int topoio_kind_of(const char *word, strata_dev_kind_t *kind_p);
/* Total devices of one device kind in one server, whatever word names it. */
long topoio_count_devkind(const topoio_cluster_t *c, strata_dev_kind_t kind);

/* Whether l can be a network (scale-out) port: InfiniBand, RoCE or
 * Ethernet — not a scale-up link, bus or memory. */
bool topoio_is_port_kind(const strata_link_t *l);

/* Catalog id of a network port of mbps Mb/s: the fastest kind not above it
 * (InfiniBand when ib, RoCE when verbs, else Ethernet TCP); NULL below 10G. */
const char *topoio_port_kind(long mbps, bool ib, bool verbs);

/* Load a cluster file. cat validates link ids. Errors carry file:line:col. */
strata_status_t topoio_load_json(const char *path, const strata_link_catalog_t *cat,
                                 topoio_cluster_t **c_p, strata_error_t *err);
strata_status_t topoio_load_json_text(const char *text, const char *name,
                                      const strata_link_catalog_t *cat, topoio_cluster_t **c_p,
                                      strata_error_t *err);
/* Write c as a cluster file (the same format topoio_load_json reads). */
strata_status_t topoio_export_json(const topoio_cluster_t *c, FILE *out, strata_error_t *err);
/* Check that every link id is in cat, every NIC port too, and every
 * recorded memory is an accelerator memory of cat on an accelerator group
 * (importers call this; the JSON loader checks as it reads). */
strata_status_t topoio_validate(const topoio_cluster_t *c, const strata_link_catalog_t *cat,
                                const char *where, strata_error_t *err);

/* ==== Building (cluster_build.c) ==== */

/* Build c as a finished topology: c->servers copies of the server (devices
 * named "gpu3" for one server, "s2.gpu3" for several; ranks server-major),
 * joined by c->net through strata_topo_build_cluster's fabric (rail or
 * plain fat-tree, single switch) or replaced by strata_topo_build_torus for
 * a torus. When the server holds no gpu/npu/tpu, its CPUs are the endpoints
 * (CPU clusters, hosts without accelerators). */
strata_status_t topoio_instantiate(const topoio_cluster_t *c, const strata_link_catalog_t *cat,
                                   strata_topo_t **topo_p, strata_error_t *err);

/* ==== Presets and names (preset.c) ==== */

/* Resolve "NAME[:SERVERS][,key=value...]" against data/presets. Keys:
 * servers, net, oversub, nics, port, tiers, radix, memory. Unknown preset → error
 * listing the available ones. */
strata_status_t topoio_preset_load(const char *spec, const strata_link_catalog_t *cat,
                                   topoio_cluster_t **c_p, strata_error_t *err);
/* Apply ",key=value" options (string after the first ',') to c. */
strata_status_t topoio_apply_options(topoio_cluster_t *c, const char *opts,
                                     const strata_link_catalog_t *cat, strata_error_t *err);
/* Write the available preset names, comma-separated, into buf. */
const char *topoio_preset_list(char *buf, size_t len);

/* ==== Specs (cluster_spec.c) ==== */

/* Describe a non-builder spec: "local", FILE.json[,opts], FILE.xml[,opts] or
 * a preset NAME[:SERVERS][,opts]. */
strata_status_t topoio_describe(const char *spec, const strata_link_catalog_t *cat,
                                topoio_cluster_t **c_p, strata_error_t *err);
/* Describe, then instantiate (spec.c calls this for non-builder specs). */
strata_status_t topoio_load_spec(const char *spec, const strata_link_catalog_t *cat,
                                 strata_topo_t **topo_p, strata_error_t *err);
/* Human-readable description (name, devices with model and info, links,
 * network, sources). */
void topoio_print(const topoio_cluster_t *c, FILE *out);

/* ==== Importers ==== */

/* NCCL topology XML (NCCL_TOPO_DUMP_FILE format) → one-server description. */
strata_status_t topoio_nccl_xml_load(const char *path, const strata_link_catalog_t *cat,
                                     topoio_cluster_t **c_p, strata_error_t *err);
strata_status_t topoio_nccl_xml_load_text(const char *text, const char *name,
                                          const strata_link_catalog_t *cat, topoio_cluster_t **c_p,
                                          strata_error_t *err);

/* The local host through hwloc. Never fails for lack of data: when hwloc
 * gives no topology or no PCI devices the description says so in its
 * description/info text and holds what could be found (at least one CPU).
 * STRATA_HWLOC_XML=FILE loads an hwloc XML export instead of this host;
 * STRATA_HWLOC_SYNTHETIC=DESC an hwloc synthetic description (tests). */
strata_status_t topoio_hwloc_load(const strata_link_catalog_t *cat, topoio_cluster_t **c_p,
                                  strata_error_t *err);

#endif /* STRATA_TOPOIO_H */
