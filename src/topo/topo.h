/*
 * topo.h (internal) — the representation behind strata_topo_t, shared by the
 * files of src/topo: graph.c (storage, adjacency), build_*.c (builders),
 * route.c (routers), metrics.c, bisect.c, dot.c, spec.c and the importers.
 *
 * Devices are stored as parallel arrays (struct of arrays) so a 100k-GPU
 * cluster of ~400k devices costs ~10 MB; links as one array of 40-byte
 * records; adjacency in CSR form built once by topo_finish. Strings (device
 * names, link kinds) live in the topology's arena.
 */
#ifndef STRATA_TOPO_INTERNAL_H
#define STRATA_TOPO_INTERNAL_H

#include "strata/topo.h"
#include "util.h"

/* What the builder knew about the structure: enables structural routing
 * and closed-form bisection. */
typedef enum {
    TOPO_SHAPE_NONE = 0, /* arbitrary graph: BFS routing, computed bisection */
    TOPO_SHAPE_GRID,     /* ring / mesh / torus: dims, wrap */
    TOPO_SHAPE_FULL,     /* fully connected */
    TOPO_SHAPE_TIERED,   /* switches by tier (single switch, fat-trees, clusters) */
} topo_shape_kind_t;

typedef struct topo_shape {
    topo_shape_kind_t kind;
    int ndims;
    int32_t dims[3];
    bool wrap[3];
    /* Closed-form bisection (per direction, B/s) when known, with its formula. */
    bool has_closed;
    double closed_bw;
    char closed_how[160];
    /* Endpoint symmetry: endpoints r and r' with r % sym_classes equal are
     * images of each other under an automorphism, so hop metrics need one
     * BFS per class. 0 = no symmetry known. */
    int32_t sym_classes;
    /* Clusters, recorded by the network builder (cluster_net) and carried
     * over by cluster_build.c to hand-wired servers on the same network:
     * att_share > 0 when the tree is complete and the server count even —
     * the network's share per NIC up-link (B/s, min over tiers) that any
     * traffic with at most that much in and out of each NIC gets (uniform
     * spreading over the up-links); servers_symmetric when an automorphism
     * of the network maps any server's NICs onto any other's, rail by rail
     * (rails, or whole servers per leaf and per pod). topo_cluster_shape
     * turns them into the closed form and the hop symmetry. */
    double att_share;
    bool servers_symmetric;
} topo_shape_t;

typedef struct topo_link_rec {
    int32_t a, b;
    int32_t mult;
    int32_t tier;
    const char *kind;
    double bw_dir;
    double latency;     /* one hop (cable, PHY) */
    double sw_lat;      /* a switch entered over this link: its traversal */
    double endpoint;    /* endpoints' overhead, once per message (path max) */
    double store_share; /* strata_link_sm_store_share of the catalog kind, else 1 */
} topo_link_rec_t;

struct strata_topo {
    char *name;
    util_arena_t *arena;
    const strata_link_catalog_t *cat; /* valid while building only */
    bool finished;
    /* building: the SM-store share of the last 8 catalog rows links were
     * added with (graph.c, row_store_share) */
    struct {
        const strata_link_t *row; /* NULL = free */
        double store_share;
    } rows[8];
    int32_t rows_next;

    int32_t ndev, cap_dev;
    uint8_t *kind;
    int8_t *tier;
    int32_t *group, *local, *rank, *nic;
    const char **dname;
    const char **dmem;   /* accelerators' memory ids (arena strings), NULL = none */
    double *dcap;        /* memory devices' capacity in bytes, 0 = not recorded */
    int32_t *local_next; /* building: next local index per (group, kind) */
    size_t local_cap;

    int32_t nlink, cap_link;
    topo_link_rec_t *links;

    int32_t *adj_off;  /* ndev + 1 */
    int32_t *adj_nbr;  /* 2 × nlink */
    int32_t *adj_chan; /* outgoing channel for each adjacency entry */
    /* Rows are sorted by (tier, id) of the neighbour: entries
     * [adj_off[v], adj_same[v]) are lower tiers, [adj_same[v], adj_up[v])
     * the same tier, [adj_up[v], adj_off[v+1]) higher tiers. */
    int32_t *adj_same, *adj_up;

    int32_t nep;
    int32_t *ep; /* rank → device */
    int32_t ngroups;
    int32_t max_tier;

    topo_shape_t shape;

    /* Host data paths: P2P off sends accelerator pairs of a server through
     * host memory; stage[v] is the memory accelerator v stages through
     * (ndev entries, built by finish when p2p_off, else NULL). */
    bool p2p_off;
    int32_t *stage;

    /* A cluster without accelerators: its CPUs are the endpoints, held as
     * kind ACCEL so that ranks and routes treat them alike, and counted and
     * printed as cpu (topo_kind_counts). */
    bool cpu_endpoints;
};

/* Devices per kind as printed: endpoints that are CPUs count as cpu, not
 * accel (graph.c). */
void topo_kind_counts(const strata_topo_t *t, int32_t cnt[STRATA_DEV_KIND_COUNT]);

/* Record memory id `memory` on accelerator dev, finished or not, checked
 * against cat when cat is not NULL (strata_topo_set_memory's contract;
 * builders of finished topologies such as the torus call it). (graph.c) */
strata_status_t topo_record_memory(strata_topo_t *t, int32_t dev, const char *memory,
                                   const strata_link_catalog_t *cat, strata_error_t *err);

/* Nearest host memory (kind MEMORY) of device s inside its server: fewest
 * hops, then the lower id; -1 when none. dist (ndev entries) must be all
 * -1 on entry and is again on return; queue (ndev entries) is scratch.
 * (graph.c) */
int32_t topo_nearest_memory(const strata_topo_t *t, int32_t s, int32_t *dist, int32_t *queue);

/* Growth of device/link arrays (graph.c). */
/* Endpoints a fat-tree of radix k holds in `tiers` tiers: k (one switch),
 * k²/2 (leaf-spine), k³/4 (three tiers; Al-Fares et al. 2008). Checked
 * before anything is allocated. */
double topo_fattree_capacity(int32_t k, int32_t tiers);
strata_status_t topo_reserve_devices(strata_topo_t *t, int32_t n, strata_error_t *err);
strata_status_t topo_reserve_links(strata_topo_t *t, int32_t n, strata_error_t *err);

/* Index in the CSR arrays of neighbour b in a's row, or -1 (graph.c). */
int32_t topo_row_find(const strata_topo_t *t, int32_t a, int32_t b);

/* Resolve a link spec to figures for ONE link (graph.c). */
strata_status_t topo_spec_resolve(const strata_topo_t *t, const strata_topo_linkspec_t *spec,
                                  const char **kind_p, int32_t *mult_p, double *bw_p, double *lat_p,
                                  strata_error_t *err);

/* Breadth-first hop distances from src over the whole graph into dist
 * (ndev entries, -1 unreachable), using queue (ndev entries) as scratch.
 * Returns the number of devices reached. (route.c) */
int32_t topo_bfs(const strata_topo_t *t, int32_t src, int32_t *dist, int32_t *queue);

/* Bisection helpers (bisect.c): closed form recorded by builders. */
void topo_shape_set_closed(topo_shape_t *s, double bw, const char *fmt, ...) STRATA_PRINTF(3, 4);

/* Clusters of identical servers (group 0 first, servers copies of it):
 * after finish, turn shape.att_share into the closed-form bisection when
 * the servers' wiring allows it (see bisect.c) and shape.servers_symmetric
 * into sym_classes = accelerators per server. (bisect.c) */
strata_status_t topo_cluster_shape(strata_topo_t *t, int32_t servers, strata_error_t *err);

#endif
