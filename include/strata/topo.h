/*
 * strata/topo.h — the topology layer: a cluster as a graph of devices and
 * full-duplex links, builders for the regular topologies, routing (shortest
 * and equal-cost paths), metrics and bisection bandwidth.
 *
 * Model. A device is an accelerator (GPU/TPU/NPU), a CPU socket, a NIC, a PCIe
 * switch, a scale-up switch (NVSwitch and kin) or a network switch of some
 * tier, or a host memory (the DRAM of a CPU socket, joined to it by its
 * memory channels) or a storage device (an NVMe drive on PCIe). A link joins two devices, is full
 * duplex, has a catalog kind (ids of strata/link.h: "nvlink4", "ib-ndr" ...) and a multiplicity
 * (e.g. 18 NVLink4 links between a GPU and its switch fabric); its bandwidth is per direction and
 * already multiplied: bw_dir = mult × per-link bw_dir. Parallel links are one link of higher
 * multiplicity, never several paths.
 *
 * Ids. Devices and links are numbered 0..n-1 as int32_t in creation order.
 * Each link l is two directed channels: 2l carries a→b, 2l+1 carries b→a,
 * each with capacity bw_dir. Routes are lists of channel ids (what the
 * simulator charges).
 *
 * Endpoints. The accelerators are the endpoints of collectives; their rank
 * is their order of creation (rank r = the r-th accelerator added). The
 * builders document their order: grids are row-major with dimension 0
 * fastest; fat-trees fill leaf 0 first; clusters are server-major (rank =
 * server × accels_per_server + local index).
 *
 * Tiers. Every device has a tier: 0 for everything inside a server (or a
 * direct network such as a torus, where accelerators are their own
 * routers), 1 for leaf/edge network switches, 2 for spine/aggregation, 3 for
 * core. A single-switch star has its switch at tier 1. A link's tier is the
 * larger tier of its two ends. Tiers drive up/down routing and the
 * per-tier injection and oversubscription metrics.
 *
 * Storage. A finished topology is compact: struct-of-arrays for devices,
 * links in one array, CSR adjacency (neighbour and outgoing channel per
 * entry, sorted by neighbour tier then id), names in an arena. A 16,384-GPU
 * rail-optimised fat-tree builds in milliseconds (bench/topo).
 *
 * Lifecycle. strata_topo_create → add devices and links → strata_topo_finish
 * (builds adjacency, checks, infers structure) → read-only queries. All the
 * builders and loaders return finished topologies. A finished topology is
 * immutable and may be shared by threads; a router (scratch space for route
 * queries) belongs to one thread at a time.
 *
 * Bandwidth figures come from the link catalog (strata/link.h) through a
 * link spec naming a kind; a spec may instead carry an explicit bandwidth so
 * the topology mathematics can be tested without catalog figures.
 */
#ifndef STRATA_TOPO_H
#define STRATA_TOPO_H

#include "strata/common.h"
#include "strata/link.h"

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_topo strata_topo_t;

/* ==== Devices and links ==== */

/* X(name, text) — the kinds of device, and their names in files and output. */
#define STRATA_DEV_KIND_MAP(X)                                                                     \
    X(ACCEL, "accel")                                                                              \
    X(CPU, "cpu")                                                                                  \
    X(NIC, "nic")                                                                                  \
    X(PCIE_SWITCH, "pcie-switch")                                                                  \
    X(SCALEUP_SWITCH, "scaleup-switch")                                                            \
    X(NET_SWITCH, "switch")                                                                        \
    X(MEMORY, "memory")                                                                            \
    X(STORAGE, "storage")

typedef enum {
#define STRATA_DEV_KIND_ENUM(name, text) STRATA_DEV_##name,
    STRATA_DEV_KIND_MAP(STRATA_DEV_KIND_ENUM)
#undef STRATA_DEV_KIND_ENUM
        STRATA_DEV_KIND_COUNT
} strata_dev_kind_t;

/* Text of a kind ("accel", "switch" ...); "?" when out of range. */
STRATA_API const char *strata_dev_kind_str(strata_dev_kind_t kind);
/* Parse the text of a kind (case-insensitive; "gpu", "npu" and "tpu" are
 * accepted for accel, "nvswitch" for scaleup-switch, as in cluster files:
 * docs/formats.md "Device kinds"). Returns 0 and writes *kind_p, or -1. */
STRATA_API int strata_dev_kind_parse(const char *s, strata_dev_kind_t *kind_p);

/* Bounds of physical sense for a figure measured on a host (a cluster
 * file's "measured" link, a saved probe file): a rate at most 1e14 B/s
 * (100 TB/s, over ten times the fastest memory a processor has, an
 * accelerator's HBM3e at 8 TB/s) and a time at most 5 s (no wait of
 * strata probe lasts longer, so it measured none longer). */
#define STRATA_MEASURED_RATE_MAX 1e14
#define STRATA_MEASURED_TIME_MAX 5.0

/* Deepest tier: 0 (in-server / direct) .. STRATA_TOPO_TIERS_MAX-1 (core). */
#define STRATA_TOPO_TIERS_MAX 4

/* One device, as read back from a topology. name is owned by the topology. */
typedef struct strata_topo_device {
    strata_dev_kind_t kind;
    int32_t tier;  /* 0..3, see "Tiers" above */
    int32_t group; /* server index for in-server devices, -1 otherwise */
    int32_t local; /* index among devices of its kind in its group (GPU 3 of server 7: 3) */
    int32_t rank;  /* endpoint rank for accelerators, -1 otherwise */
    int32_t nic;   /* accelerators: the NIC it sends through off-server, or -1 */
    const char *name;
    /* Accelerators: link catalog id of its memory ("hbm-h200"), as the
     * cluster file or server spec recorded it; NULL = not recorded. Owned
     * by the topology. */
    const char *memory;
    /* Memory devices (a socket's DRAM, a CXL expander): capacity in bytes,
     * as the cluster file or preset recorded it (strata_topo_set_capacity);
     * 0 = not recorded. */
    double capacity;
} strata_topo_device_t;

/* How to make a link: a catalog kind and/or explicit figures. bw_dir and
 * latency are for ONE link; the link added carries mult × bw_dir. A
 * catalog kind that is a shared bus (full_duplex 0: DDR channels) gives
 * each direction half its bandwidth — reads and writes share the bus, and
 * the split is exact for traffic that writes each byte once and reads it
 * once (a staging buffer), the traffic host memory carries here.
 * bw_dir <= 0 means "take bw_dir from the catalog entry of kind", latency
 * < 0 means "take it from the catalog" (0 is a valid explicit latency).
 * kind may be NULL only when bw_dir > 0 and latency >= 0 (then the link's
 * kind reads "custom"). mult 0 is taken as 1. */
typedef struct strata_topo_linkspec {
    const char *kind;
    int32_t mult;
    double bw_dir;  /* B/s per direction of one link */
    double latency; /* s, one hop */
} strata_topo_linkspec_t;

/* A spec for an explicit bandwidth in B/s per direction and zero latency. */
STRATA_API strata_topo_linkspec_t strata_topo_linkspec_bw(double bw_dir);
/* A spec for a catalog kind with multiplicity mult. */
STRATA_API strata_topo_linkspec_t strata_topo_linkspec_kind(const char *kind, int32_t mult);

/* One link, as read back. kind is owned by the topology ("custom" when made
 * from explicit figures only). */
typedef struct strata_topo_link {
    int32_t a, b; /* the two devices; channel 2l is a→b, 2l+1 is b→a */
    int32_t mult; /* parallel links joined into this one */
    int32_t tier; /* max(tier(a), tier(b)) */
    const char *kind;
    double bw_dir;      /* B/s per direction, all mult links together */
    double latency;     /* s, one hop */
    double store_share; /* share of bw_dir a GPU's SM stores get over this link
                           (strata_link_sm_store_share; 1 off the catalog) */
} strata_topo_link_t;

/* ==== Building a graph by hand (importers use this) ==== */

/* An empty, unfinished topology called name (copied). cat may be NULL when
 * every link spec carries explicit figures; it must outlive this call only
 * (figures are copied at add time). */
STRATA_API strata_status_t strata_topo_create(const char *name, const strata_link_catalog_t *cat,
                                              strata_topo_t **topo_p, strata_error_t *err);
STRATA_API void strata_topo_destroy(strata_topo_t *topo);

/* Add a device; name (copied) may be NULL for a generated one. group is the
 * server index or -1. Writes the new id to *id_p (may be NULL). Errors on a
 * finished topology or bad kind/tier. */
STRATA_API strata_status_t strata_topo_add_device(strata_topo_t *topo, strata_dev_kind_t kind,
                                                  int32_t tier, int32_t group, const char *name,
                                                  int32_t *id_p, strata_error_t *err);
/* Add a full-duplex link between devices a and b (a != b). Figures resolve
 * from spec (see strata_topo_linkspec_t); unknown kinds and non-positive
 * bandwidths are errors. Writes the new link id to *id_p (may be NULL). */
STRATA_API strata_status_t strata_topo_add_link(strata_topo_t *topo, int32_t a, int32_t b,
                                                const strata_topo_linkspec_t *spec, int32_t *id_p,
                                                strata_error_t *err);
/* Set which NIC accelerator accel sends through off-server. Otherwise
 * strata_topo_finish picks the nearest NIC of its group that has a link
 * leaving the group (any NIC of the group when none has); among equally
 * near ones the least used so far (accelerators in id order), then the
 * one on the accelerator's rail (NIC local·nics/accels among those
 * candidates), then the lower id. */
STRATA_API strata_status_t strata_topo_set_nic(strata_topo_t *topo, int32_t accel, int32_t nic,
                                               strata_error_t *err);
/* Record the memory of accelerator accel: memory is a link catalog id of
 * an accelerator memory (strata_topo_memory_find), copied. With a catalog
 * (the one given to strata_topo_create) an id that is not one is
 * ERR_NOT_FOUND (unknown) or ERR_INVALID (not a memory); without one any
 * id is kept as given. A device that is not an accelerator is ERR_INVALID,
 * and so is a finished topology. */
STRATA_API strata_status_t strata_topo_set_memory(strata_topo_t *topo, int32_t accel,
                                                  const char *memory, strata_error_t *err);
/* Record the capacity in bytes (> 0, finite) of memory device mem (kind
 * STRATA_DEV_MEMORY: a socket's DRAM, a CXL expander): what the planner's
 * memory tiers may hold. Any other device, a bad figure or a finished
 * topology is ERR_INVALID. */
STRATA_API strata_status_t strata_topo_set_capacity(strata_topo_t *topo, int32_t mem, double bytes,
                                                    strata_error_t *err);
/* The catalog entry id names when it is an accelerator memory (category
 * "HBM": hbm-a100-80, hbm-h100, hbm-h200 ...), else NULL (unknown id, or a
 * link or a CPU memory channel). The one test of "is this a memory id"
 * for cluster files, builders and the cost model. */
STRATA_API const strata_link_t *strata_topo_memory_find(const strata_link_catalog_t *cat,
                                                        const char *id);
/* GPU peer-to-peer on (the default) or off for the whole topology, set
 * before strata_topo_finish. With it off (NCCL_P2P_DISABLE, GeForce-class
 * GPUs, some cloud VMs) accelerators of one server cannot read or write
 * each other: a message is written by the sender's DMA into host memory
 * and read from there by the receiver's, so the router sends every
 * accelerator-to-accelerator path inside a server through the host memory
 * nearest the sender (fewest hops, then lowest id): up the PCIe tree, into
 * and out of the memory, across the socket link when the receiver sits on
 * the other socket, and down. strata_topo_finish fails when an
 * accelerator has no host memory (a device of kind MEMORY) in its server.
 * Paths that leave the server are unchanged (through the NIC). Errors on
 * a finished topology. */
STRATA_API strata_status_t strata_topo_set_p2p(strata_topo_t *topo, bool on, strata_error_t *err);
/* Whether peer-to-peer is on (see strata_topo_set_p2p). */
STRATA_API bool strata_topo_p2p(const strata_topo_t *topo);
/* Whether the accelerators reach each other over PCIe with SM stores: P2P
 * on and no scale-up link (no scale-up switch, no link between two
 * accelerators), so collectives between them write into peers across the
 * PCIe tree (strata_link_sm_store_share prices those stores). */
STRATA_API bool strata_topo_pcie_peers(const strata_topo_t *topo);
/* The host memory accelerator dev stages through when P2P is off: a
 * device id of kind MEMORY, or -1 (P2P on, not an accelerator, none). */
STRATA_API int32_t strata_topo_staging_memory(const strata_topo_t *topo, int32_t dev);
/* Freeze: build adjacency, assign ranks and NICs, check the graph is
 * connected and has at least one accelerator. After this the topology is
 * read-only. */
STRATA_API strata_status_t strata_topo_finish(strata_topo_t *topo, strata_error_t *err);

/* ==== Reading a topology ==== */

STRATA_API const char *strata_topo_name(const strata_topo_t *topo);
STRATA_API int32_t strata_topo_device_count(const strata_topo_t *topo);
STRATA_API int32_t strata_topo_link_count(const strata_topo_t *topo);
/* Number of accelerators (endpoints). */
STRATA_API int32_t strata_topo_endpoint_count(const strata_topo_t *topo);
/* Device id of endpoint rank r, or -1 when out of range. */
STRATA_API int32_t strata_topo_endpoint(const strata_topo_t *topo, int32_t rank);
/* Number of servers (groups), 0 when none. */
STRATA_API int32_t strata_topo_group_count(const strata_topo_t *topo);
/* Device id; out of range gives kind ACCEL, name NULL and all ints -1. */
STRATA_API strata_topo_device_t strata_topo_device(const strata_topo_t *topo, int32_t id);
STRATA_API strata_topo_link_t strata_topo_link(const strata_topo_t *topo, int32_t id);
/* Device id named name, or -1 (linear search). */
STRATA_API int32_t strata_topo_find_device(const strata_topo_t *topo, const char *name);
/* CSR adjacency of a finished topology: *nbr_p[i] is the i-th neighbour of
 * dev and *chan_p[i] the channel dev→neighbour; returns the degree (-1 on a
 * bad id). Arrays are owned by the topology; each row is sorted by the
 * neighbour's (tier, id), so lower-tier neighbours come first. */
STRATA_API int32_t strata_topo_adjacency(const strata_topo_t *topo, int32_t dev,
                                         const int32_t **nbr_p, const int32_t **chan_p);
/* Link joining a and b (the first, if several), or -1. */
STRATA_API int32_t strata_topo_link_between(const strata_topo_t *topo, int32_t a, int32_t b);
/* Directed channel helpers. */
static inline int32_t strata_topo_chan_link(int32_t chan)
{
    return chan >> 1;
}
/* Capacity of a channel = bw_dir of its link (B/s). */
STRATA_API double strata_topo_chan_bw(const strata_topo_t *topo, int32_t chan);
/* Device a channel leaves from / arrives at. */
STRATA_API int32_t strata_topo_chan_src(const strata_topo_t *topo, int32_t chan);
STRATA_API int32_t strata_topo_chan_dst(const strata_topo_t *topo, int32_t chan);

/* ==== Builders ==== */

/* Every builder returns a finished topology (caller destroys it) or an
 * error (bad sizes, unknown kinds). cat may be NULL when the specs carry
 * explicit figures. The regular builders record their shape, which enables
 * structural routing and the closed-form bisection. */

/* Ring of n >= 3 accelerators, link i joins i and i+1 mod n. */
STRATA_API strata_status_t strata_topo_build_ring(int32_t n, const strata_topo_linkspec_t *link,
                                                  const strata_link_catalog_t *cat,
                                                  strata_topo_t **topo_p, strata_error_t *err);
/* ndims (1..3) dimensions of sizes dims[i] >= 2; rank = x0 + d0·(x1 + d1·x2).
 * A torus wraps every dimension of size >= 3 (a size-2 dimension has one
 * link per pair either way). */
STRATA_API strata_status_t strata_topo_build_mesh(int ndims, const int32_t *dims,
                                                  const strata_topo_linkspec_t *link,
                                                  const strata_link_catalog_t *cat,
                                                  strata_topo_t **topo_p, strata_error_t *err);
STRATA_API strata_status_t strata_topo_build_torus(int ndims, const int32_t *dims,
                                                   const strata_topo_linkspec_t *link,
                                                   const strata_link_catalog_t *cat,
                                                   strata_topo_t **topo_p, strata_error_t *err);
/* n >= 2 accelerators, one link between every pair. */
STRATA_API strata_status_t strata_topo_build_full(int32_t n, const strata_topo_linkspec_t *link,
                                                  const strata_link_catalog_t *cat,
                                                  strata_topo_t **topo_p, strata_error_t *err);
/* n >= 1 accelerators on one switch (tier 1). */
STRATA_API strata_status_t strata_topo_build_switch(int32_t n, const strata_topo_linkspec_t *link,
                                                    const strata_link_catalog_t *cat,
                                                    strata_topo_t **topo_p, strata_error_t *err);

/* A k-ary fat-tree (folded Clos) of switches of radix k (even, >= 2):
 *   tiers 1: one switch of k ports;
 *   tiers 2: leaves with k/2 down, k/2 up; k/2 spines; up to k leaves;
 *   tiers 3: pods of k/2 leaves + k/2 aggregation switches (full bipartite),
 *            (k/2)^2 cores, aggregation j of each pod on cores j·k/2..;
 *            up to k pods (Al-Fares et al., SIGCOMM 2008).
 * endpoints 0 means the full tree (k, k²/2, k³/4); fewer builds a partial
 * tree with only the leaves/pods needed, each switch with as many up-links
 * as its tier's fullest switch has down-links (non-blocking, fewest
 * switches). oversub[t] (t = 1..tiers-1) is
 * the down:up ratio at tier t (1 = non-blocking, 4 = 4:1); it is modelled
 * by dividing the per-link bandwidth of the links above tier t by it (so
 * ECMP structure is unchanged); 0 means 1. link[t] is the spec of links at
 * tier t+1 (link[0]: endpoint↔leaf, link[1]: leaf↔spine, link[2]:
 * spine↔core); a NULL entry reuses link[0]. */
typedef struct strata_topo_fattree {
    int32_t k;
    int32_t tiers;     /* 1, 2 or 3 */
    int32_t endpoints; /* 0 = full */
    double oversub[STRATA_TOPO_TIERS_MAX];
    const strata_topo_linkspec_t *link[3];
} strata_topo_fattree_t;

STRATA_API strata_status_t strata_topo_build_fattree(const strata_topo_fattree_t *ft,
                                                     const strata_link_catalog_t *cat,
                                                     strata_topo_t **topo_p, strata_error_t *err);

/* A server template: what one box holds and how it is wired inside.
 *   accels accelerators; scaleup_switches switch chips, each accelerator
 *   joined to each chip by `scaleup` (mult = links per chip); when
 *   scaleup_switches is 0 and scaleup.kind/bw is set, the accelerators are
 *   fully connected by `scaleup` (AMD/Huawei style); nics NICs (nics must
 *   divide accels or equal it; accelerator i uses NIC i·nics/accels);
 *   pcie_switches PCIe switches (0 = accelerator↔NIC links direct), the
 *   accelerators and NICs spread evenly over them, each PCIe switch joined
 *   to CPU socket (i·cpus/pcie_switches); cpus CPU sockets (0 allowed);
 *   memory, when set, is recorded on every accelerator. */
typedef struct strata_topo_server {
    const char *name; /* preset name, e.g. "dgx-h100" */
    int32_t accels;
    int32_t scaleup_switches;
    strata_topo_linkspec_t scaleup; /* accel ↔ scale-up switch (or accel ↔ accel) */
    int32_t nics;
    strata_topo_linkspec_t pcie; /* accel/NIC ↔ PCIe switch, PCIe switch ↔ CPU, or accel ↔ NIC */
    int32_t pcie_switches;
    int32_t cpus;
    strata_topo_linkspec_t nic_net; /* NIC ↔ leaf switch */
    const char *memory;             /* catalog id of the accelerators' memory, NULL = not
                                       recorded (see strata_topo_set_memory) */
} strata_topo_server_t;

/* N servers joined by a network.
 *   net.tiers 0: no network (servers must be 1);
 *   otherwise a fat-tree over the N × nics NICs with net.k, net.tiers and
 *   net.oversub (net.endpoints is ignored; net.link[0] is ignored, the
 *   NIC↔leaf spec is server->nic_net; link[1..2] default to it).
 * rail: rail-optimised — NIC i of every server sits on a rail-i leaf: leaf
 *   (block b, rail i) serves NIC i of servers b·k/2 .. b·k/2 + k/2 - 1, and
 *   leaves are numbered block-major so a pod holds whole blocks of all
 *   rails (DGX SuperPOD style). Otherwise a server's NICs fill leaves in
 *   server order. Ranks are server-major. */
STRATA_API strata_status_t strata_topo_build_cluster(const strata_topo_server_t *server,
                                                     int32_t servers,
                                                     const strata_topo_fattree_t *net, bool rail,
                                                     const strata_link_catalog_t *cat,
                                                     strata_topo_t **topo_p, strata_error_t *err);

/* Resolve a cluster spec to a finished topology. Implemented in
 * src/topo/spec.c. The core understands builder specs:
 *   ring:N  mesh:AxB[xC]  torus:AxB[xC]  full:N  switch:N
 *   fattree:k=K[,tiers=T][,n=ENDPOINTS][,oversub=R1:R2]
 *   railft:servers=S,gpus=G[,k=K][,tiers=T][,oversub=..]
 * each optionally followed by ",link=ID" (catalog kind, default nvlink4
 * for direct topologies, ib-ndr for switched ones), ",mult=M", ",bw=GBPS"
 * (explicit GB/s per direction per link, 1e9 B/s) and ",lat=US".
 * The I/O half (branch topoio) extends the same function, by the same
 * name, with: presets from data/ ("dgx-h100", "dgx-h100:16"), cluster
 * files ("*.json"), NCCL topology XML ("*.xml") and "local" (hwloc).
 * cat may be NULL only for specs that need no catalog figures. */
STRATA_API strata_status_t strata_topo_load_spec(const char *spec, const strata_link_catalog_t *cat,
                                                 strata_topo_t **topo_p, strata_error_t *err);

/* ==== Routing ==== */

/* A router answers path queries on one finished topology with reusable
 * scratch space. Not thread-safe: use one router per thread. The topology
 * must outlive it.
 *
 * Which paths. The equal-cost set between two devices is:
 *  - grids (ring, mesh, torus): dimension-order routing, dimension 0
 *    first; in a wrapped dimension whose two directions tie (distance d/2)
 *    both directions are in the set — so a ring gives 2 paths at n/2;
 *  - tiered networks (fat-trees, switches, clusters): an endpoint leaves
 *    its server through its NIC, climbs to the lowest tier where source
 *    and destination share an ancestor, and descends (up/down); the set is
 *    every such minimal up/down path; inside a server: all shortest paths
 *    through the scale-up fabric (accelerators and scale-up switches), or
 *    when it does not join the two, all shortest paths within the server;
 *  - anything else: all shortest paths by hop count (BFS).
 * Each path is a minimum-hop path for its routing; paths are numbered
 * 0..count-1 in a fixed order. */
typedef struct strata_topo_router strata_topo_router_t;

STRATA_API strata_status_t strata_topo_router_create(const strata_topo_t *topo,
                                                     strata_topo_router_t **router_p,
                                                     strata_error_t *err);
STRATA_API void strata_topo_router_destroy(strata_topo_router_t *router);

/* Number of equal-cost paths from device src to device dst (1 when
 * src == dst: the empty path), as a double because counts can exceed 2^63
 * on large meshes. 0 on bad ids. */
STRATA_API double strata_topo_path_count(strata_topo_router_t *router, int32_t src, int32_t dst);
/* Hop count of the paths from src to dst, or -1 on bad ids. */
STRATA_API int32_t strata_topo_hops(strata_topo_router_t *router, int32_t src, int32_t dst);
/* The index-th equal-cost path (index taken modulo the count) as channel
 * ids into chans[0..max-1]; writes the hop count to *n_p. Returns
 * ERR_RANGE when max is too small (*n_p still says how many), ERR_INVALID
 * on bad ids. */
STRATA_API strata_status_t strata_topo_path(strata_topo_router_t *router, int32_t src, int32_t dst,
                                            uint64_t index, int32_t *chans, int32_t max,
                                            int32_t *n_p);
/* One equal-cost path picked by a hash of (src, dst, seed): what an ECMP
 * switch does with a flow hash. Same contract as strata_topo_path. */
STRATA_API strata_status_t strata_topo_path_hash(strata_topo_router_t *router, int32_t src,
                                                 int32_t dst, uint64_t seed, int32_t *chans,
                                                 int32_t max, int32_t *n_p);

/* The even split of a message over all equal-cost paths src → dst, as the
 * fraction of the paths that cross each channel, computed from path
 * counts without listing the paths (O(edges of the up/down closure)).
 * Only for routes of one up/down segment through network switches, the
 * other segments single paths, and every link of the closure with the
 * same figures — so that every path has the same bottleneck bandwidth and
 * latency, written to *bw_p and *latency_p. Returns the number of
 * channels (written when <= max: call again with room), or -1 when the
 * route is not of that form (list its paths instead). */
STRATA_API int32_t strata_topo_path_split(strata_topo_router_t *router, int32_t src, int32_t dst,
                                          int32_t *chans, double *frac, int32_t max, double *bw_p,
                                          double *latency_p);

/* Bottleneck bandwidth (min channel bw_dir, B/s) and latency of one message
 * (s) over a path given as channels: the sum of its links' hop latencies,
 * the traversal of each switch crossed (of the link kind entering it), and
 * once the largest endpoint overhead of its link kinds (links.json
 * latency_us, switch_us, endpoint_us). n == 0 gives +inf, 0. */
STRATA_API void strata_topo_path_figures(const strata_topo_t *topo, const int32_t *chans, int32_t n,
                                         double *bw_p, double *latency_p);

/* ==== Host data paths: who moves the data, and how many copies ====
 *
 * A transfer between two devices of a server walks one or more stages;
 * each stage is one agent moving the bytes from one memory to another
 * over a routed path: a DMA engine (a GPU's copy engine, a NIC, an NVMe
 * drive) or the CPU (memcpy). Stages run one after the other on the whole
 * message (store and forward through the bounce buffer; the pipelining a
 * driver may do in chunks is not modelled, so a staged time is an upper
 * bound on it). Modes:
 *   DIRECT   one DMA, no host memory: GPU peer-to-peer (NVLink or PCIe),
 *            GPUDirect RDMA (NIC <-> GPU through the PCIe switch),
 *            GPUDirect Storage (NVMe <-> GPU); refused when P2P is off, or
 *            for a NIC or drive whose path to the GPU crosses a socket link
 *            (GPUDirect needs one root complex: CUDA "GPUDirect RDMA" §1);
 *   STAGED   through a bounce buffer in host memory: two DMAs (GPU -> host
 *            -> GPU, NIC -> host -> GPU); for storage the bounce through the
 *            page cache: the drive's DMA into the page cache, the CPU's copy
 *            into a pinned user buffer, the GPU's DMA from it (3 copies);
 *   PINNED   host memory <-> GPU from pinned memory: one DMA;
 *   PAGEABLE host memory <-> GPU from pageable memory: the CPU copies into
 *            a pinned bounce buffer, then the DMA (CUDA Driver API "API
 *            synchronization behavior", fabric-host.md B2);
 *   AUTO     DIRECT (STAGED when P2P is off) between devices, PINNED from
 *            or to host memory.
 * The CPU copy reads and writes the same memory channels: its rate is the
 * memory's per-direction share (half the bus), capped at cpu_copy_Bps when
 * that is > 0 (one core's memcpy rate, e.g. as strata probe measures it). */
typedef enum {
    STRATA_XFER_AUTO = 0,
    STRATA_XFER_DIRECT,
    STRATA_XFER_STAGED,
    STRATA_XFER_PINNED,
    STRATA_XFER_PAGEABLE,
} strata_xfer_mode_t;

#define STRATA_XFER_MAX_STAGES 3
#define STRATA_XFER_MAX_HOPS   48

typedef struct strata_xfer_hop {
    int32_t chan;   /* directed channel (strata_topo_chan_src/dst) */
    int32_t stage;  /* index of the stage that crosses it */
    double bw;      /* B/s per direction of the link */
    double latency; /* s, the link's one-hop latency */
} strata_xfer_hop_t;

typedef struct strata_xfer_stage {
    int32_t from, to; /* devices: where the bytes are read and written */
    char mover[64];   /* "DMA engine of gpu0", "CPU (memcpy)", "NIC nic0" ... */
    char what[64];    /* "P2P write", "D2H into a bounce buffer" ... */
    int32_t first, n; /* its hops: hop[first .. first+n) */
    double bw;        /* bottleneck, B/s */
    double latency;   /* one message over the stage's path (strata_topo_path_figures) */
    double time;      /* latency + bytes / bw */
} strata_xfer_stage_t;

typedef struct strata_xfer {
    strata_xfer_mode_t mode; /* resolved (never AUTO) */
    int nstages;
    strata_xfer_stage_t stage[STRATA_XFER_MAX_STAGES];
    int32_t nhops;
    strata_xfer_hop_t hop[STRATA_XFER_MAX_HOPS];
    int copies;   /* times the bytes are written into a memory, the destination's included */
    double bytes; /* message size */
    double time;  /* sum of the stages' times */
    double bw;    /* bytes / time */
} strata_xfer_t;

/* Mode names: "auto", "direct", "staged", "pinned", "pageable"; parse
 * returns 0 and writes *mode_p, or -1. */
STRATA_API const char *strata_xfer_mode_str(strata_xfer_mode_t mode);
STRATA_API int strata_xfer_mode_parse(const char *s, strata_xfer_mode_t *mode_p);

/* Explain moving `bytes` from device src to device dst of one server under
 * `mode` into *out. src and dst: accelerators, host memories (kind
 * MEMORY), NICs, storage; at least one is an accelerator, or src is
 * storage or a NIC and dst host memory. ERR_INVALID for devices of
 * different servers, a pair or mode that does not apply (PINNED between
 * two GPUs), ERR_UNSUPPORTED for a DIRECT path the hardware cannot take
 * (P2P off, a socket link in a GPUDirect path); the message says which.
 * Thread safety: read-only on topo. */
STRATA_API strata_status_t strata_topo_xfer(const strata_topo_t *topo, int32_t src, int32_t dst,
                                            strata_xfer_mode_t mode, double bytes,
                                            double cpu_copy_Bps, strata_xfer_t *out,
                                            strata_error_t *err);

/* ==== Metrics and bisection ==== */

typedef enum {
    STRATA_BISECT_AUTO = 0,   /* closed form, else exhaustive if small, else bound */
    STRATA_BISECT_CLOSED,     /* closed form of the builder (ERR_UNSUPPORTED if none) */
    STRATA_BISECT_EXHAUSTIVE, /* every balanced partition (ERR_RANGE if too large) */
    STRATA_BISECT_BOUND,      /* an upper bound: best of structural candidate cuts */
} strata_bisect_method_t;

/* Bisection bandwidth, per direction: the minimum, over partitions of the
 * endpoints into halves of sizes floor(n/2) and ceil(n/2), of the capacity
 * of links crossing the cut, with every non-endpoint device free to sit on
 * either side (for each partition, a min s-t cut). */
typedef struct strata_topo_bisection {
    double bw;  /* B/s per direction */
    bool exact; /* false: bw is an upper bound on the true value */
    strata_bisect_method_t method;
    char how[192]; /* e.g. "closed form: 2·(N/k_max)·B" or "bound: ..." */
} strata_topo_bisection_t;

/* Exhaustive search covers graphs of at most this many endpoints. */
#define STRATA_BISECT_EXHAUSTIVE_MAX 20

STRATA_API strata_status_t strata_topo_bisection(const strata_topo_t *topo,
                                                 strata_bisect_method_t method,
                                                 strata_topo_bisection_t *out, strata_error_t *err);

typedef struct strata_topo_metrics {
    int32_t devices, links, endpoints, groups;
    int32_t count[STRATA_DEV_KIND_COUNT]; /* devices per kind */
    int32_t tiers;                        /* highest device tier + 1 */
    /* Hop counts between endpoints (routed paths). */
    int32_t diameter;
    double avg_hops; /* over ordered pairs of distinct endpoints */
    bool hops_exact; /* false: estimated from a sample of sources */
    char hops_how[96];
    /* Per accelerator, per direction, B/s: tier 0 = scale-up links of the
     * accelerator (to other accelerators or scale-up switches); tier t >= 1
     * = capacity of all links between tier t-1 and tier t devices divided by
     * the accelerator count. 0 where the tier does not exist. */
    double injection[STRATA_TOPO_TIERS_MAX];
    /* Switch tiers t >= 1: capacity down (to tier < t) : up (to tier > t);
     * 0 for the top tier and absent tiers. */
    double oversub[STRATA_TOPO_TIERS_MAX];
    strata_topo_bisection_t bisection;
} strata_topo_metrics_t;

/* All metrics (bisection by STRATA_BISECT_AUTO). */
STRATA_API strata_status_t strata_topo_metrics(const strata_topo_t *topo,
                                               strata_topo_metrics_t *out, strata_error_t *err);

/* ==== Output ==== */

/* Summary of a topology (name, device counts per kind, links per kind and
 * tier, servers) to out, as text or as one JSON object. */
STRATA_API strata_status_t strata_topo_print(const strata_topo_t *topo, bool json, FILE *out,
                                             strata_error_t *err);
/* Metrics (from strata_topo_metrics) to out, as text or one JSON object. */
STRATA_API strata_status_t strata_topo_metrics_print(const strata_topo_metrics_t *m, bool json,
                                                     FILE *out, strata_error_t *err);
/* Graphviz DOT of the whole graph to out (one node per device, one edge per
 * link labelled kind×mult). */
STRATA_API strata_status_t strata_topo_write_dot(const strata_topo_t *topo, FILE *out,
                                                 strata_error_t *err);

/* ==== Topology I/O: presets, cluster files, NCCL XML, local host ====
 * (section owned by the I/O half, branch topoio; docs/formats.md)
 *
 * A non-builder cluster spec is one of
 *   NAME[:SERVERS][,key=value...]  a preset of <data dir>/presets (dgx-h100:16)
 *   FILE.json[,key=value...]       a cluster file
 *   FILE.xml[,key=value...]        an NCCL topology (NCCL_TOPO_DUMP_FILE)
 *   local                          this host, through hwloc
 * with keys servers, net (rail-fat-tree|fat-tree|switch|none), oversub
 * (leaf ratio, or R1:R2 leaf first), nics, port (catalog id), tiers, radix,
 * memory (catalog HBM id the accelerators record). strata_topo_load_spec
 * builds any of them. Errors in files carry file:line:col. Thread safety:
 * none of these keep state. */

/* Write the cluster `spec` names as a cluster file (the JSON that
 * FILE.json specs read back) to out. */
STRATA_API strata_status_t strata_cluster_export(const char *spec, const strata_link_catalog_t *cat,
                                                 FILE *out, strata_error_t *err);
/* Print what the spec describes: devices with model and details (caches,
 * PCIe links, NIC speeds for `local`), intra-server links, network and the
 * sources cited. */
STRATA_API strata_status_t strata_cluster_describe(const char *spec,
                                                   const strata_link_catalog_t *cat, FILE *out,
                                                   strata_error_t *err);
/* The available preset names, comma-separated, into buf (always
 * NUL-terminated); returns buf. */
STRATA_API const char *strata_cluster_presets(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* STRATA_TOPO_H */
