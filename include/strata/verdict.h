/*
 * strata/verdict.h — the bottleneck analysis of one cluster (and, when
 * given, a training workload): strata's main job as a library call.
 *
 * strata_verdict_create reads a finished topology and returns every figure
 * the analysis rests on and its conclusion:
 *   - per tier of the stack (scale-up, host/PCIe, scale-out network): the
 *     bandwidth each accelerator has on it, per direction, the widest link
 *     kind, and the latency of one message across it;
 *   - the collective model (strata/sched.h) on the cluster: AllReduce bus
 *     bandwidth of every algorithm across message sizes, the one chosen at
 *     each size and the sizes where the choice changes; the collective
 *     table (AllReduce, AllGather, AlltoAll: the selected algorithm and its
 *     busbw from 1 KiB to 2 GiB, and each one's choices from 8 B to 8 GiB);
 *   - a 1 GiB allreduce: the best algorithm's cost and bound, the flat
 *     ring's, and the ring simulated with congestion (strata/sim.h, spread
 *     routing) with the link class that bounded it longest;
 *   - the bounding layer, its per-GPU bandwidth, the shares of the best
 *     algorithm's time spent on that term and on latency, and how far the
 *     simulated ring falls below the best algorithm;
 *   - with a workload: the planner's best plan on the cluster (step-time
 *     parts, memory, traffic per tier, its bottleneck);
 *   - the rows of every section of `strata report`: each kind of link per
 *     tier with its per-GPU figures and what they imply (the NIC's PCIe
 *     path, the scale-out link's credits or PFC headroom, the α-β
 *     crossovers); the topology's metrics and two routed paths; the ring
 *     simulated under spread, ECMP and ECMP with 8 queue pairs, on the
 *     cluster and on the same servers at about 1,024 GPUs.
 * The sections (strata_verdict_section_t) name which parts a caller wants;
 * renderers (strata/report.h: strata_verdict_print_section for text,
 * strata_verdict_print_json, strata_verdict_print_html) format a verdict
 * and compute nothing.
 *
 * Cost: one collective model and one simulated ring over every GPU (about
 * 0.01 s at 32 GPUs, 0.3 s at 1,000 in a release build); the sim section
 * two more rings and, at scale, three at about 1,024 GPUs (about 1 s); the
 * topology section its metrics (hop counts sampled above 4,096 GPUs); with
 * a workload the planner's search (capped as `strata report` does).
 * Thread safety: a verdict is immutable after create.
 */
#ifndef STRATA_VERDICT_H
#define STRATA_VERDICT_H

#include "strata/common.h"
#include "strata/link.h"
#include "strata/plan.h"
#include "strata/sched.h"
#include "strata/sim.h"
#include "strata/topo.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The allreduce message the verdict studies: 1 GiB, nccl-tests' usual
 * large message, where bandwidth dominates. */
#define STRATA_VERDICT_BIG_BYTES 1073741824.0

/* The message sizes of the collective curves: 1 KiB to 8 GiB, doubling. */
#define STRATA_VERDICT_SIZES 24
#define STRATA_VERDICT_CROSS 8

/* Tiers of the stack, by the devices at a link's two ends (docs/report.md). */
typedef enum {
    STRATA_TIER_UP = 0,   /* accelerators and scale-up switches among themselves */
    STRATA_TIER_HOST = 1, /* CPUs, PCIe switches, an accelerator to its NIC */
    STRATA_TIER_NET = 2,  /* anything touching a network switch */
    STRATA_TIER_COUNT = 3
} strata_tier_t;

/* "scale-up", "host/PCIe", "scale-out"; static. */
STRATA_API const char *strata_tier_name(strata_tier_t tier);
/* The tier of a link between devices a and b. */
STRATA_API strata_tier_t strata_tier_of(const strata_topo_device_t *a,
                                        const strata_topo_device_t *b);

typedef struct strata_verdict_tiers {
    /* B/s per accelerator per direction; 0 = the cluster has no such tier.
     * Scale-up counts each accelerator end of a link; host, the links with
     * an accelerator end; net, the links that leave the servers. */
    double bw[STRATA_TIER_COUNT];
    char kind[STRATA_TIER_COUNT][32]; /* widest link kind of each, "" */
    /* One message across the tier, s: rank 0 -> 1 inside a server and
     * across the farthest servers (the collective model's routes); the
     * host tier: its slowest link's hop latency. 0 = absent. */
    double latency[STRATA_TIER_COUNT];
} strata_verdict_tiers_t;

/* The tier figures alone (one pass over the links, no routing). */
STRATA_API void strata_verdict_tiers(const strata_topo_t *topo, strata_verdict_tiers_t *t_p);

/* The collective table: AllReduce, AllGather, AlltoAll at 1 KiB, 8 KiB ...
 * 2 GiB (x8), the algorithm the model selects at each and its busbw. */
#define STRATA_VERDICT_TABLE_OPS   3
#define STRATA_VERDICT_TABLE_SIZES 8

typedef struct strata_verdict_choice {
    bool ok;                   /* the model prices this collective here */
    strata_coll_cost_t lo, hi; /* selected at 8 B and at 8 GiB */
    size_t ncross;             /* the selection changes above sizes[i] to algos[i] */
    double sizes[STRATA_VERDICT_CROSS];
    strata_algo_t algos[STRATA_VERDICT_CROSS];
} strata_verdict_choice_t;

/* The sections of the analysis, in the order `strata report` prints them;
 * each names the parts of strata_verdict_t it fills (below). */
typedef enum {
    STRATA_VERDICT_LINKS = 0,      /* links: the link rows and their findings */
    STRATA_VERDICT_TOPOLOGY = 1,   /* topo: metrics and two routed paths */
    STRATA_VERDICT_COLL = 2,       /* curves, the collective table (always filled) */
    STRATA_VERDICT_SIM = 3,        /* routings, scale: the ring under three routings */
    STRATA_VERDICT_STRATEGY = 4,   /* the plan (with a workload) */
    STRATA_VERDICT_BOTTLENECK = 5, /* best, ring, sim and the conclusion */
    STRATA_VERDICT_SECTION_COUNT = 6
} strata_verdict_section_t;

/* "links", "topology", "coll", "sim", "strategy", "bottleneck"; static. */
STRATA_API const char *strata_verdict_section_name(strata_verdict_section_t s);
/* The section of that name, or -1. */
STRATA_API int strata_verdict_section_find(const char *name);

/* ---- links ---- */
#define STRATA_VERDICT_LINK_ROWS 24

/* Cable length of the data-link figures: 30 m, the default `strata link`
 * uses for network ports, so the two agree. */
#define STRATA_VERDICT_CABLE_M 30.0

/* One row: the topology's links of one tier, kind and pair of device
 * roles ("gpu", "upsw", "pcisw", "cpu", "nic", network switches by tier:
 * "switch", "leaf", "spine", "core"), lower device kind first. */
typedef struct strata_verdict_link_row {
    strata_tier_t tier;
    char kind[32];
    char between[48];     /* "gpu-upsw", "nic-leaf" */
    int32_t count;        /* topology links (each may bundle several) */
    double per_link;      /* B/s per direction of one link (the lowest seen) */
    double links_per_gpu; /* links x multiplicity per accelerator (an
                             accelerator-accelerator link counts for both) */
    double per_gpu;       /* B/s per accelerator per direction, counted so */
    double latency;       /* one hop, s */
} strata_verdict_link_row_t;

typedef struct strata_verdict_links {
    int nrows; /* rows in tier order; more than STRATA_VERDICT_LINK_ROWS kinds: the rest left out */
    strata_verdict_link_row_t rows[STRATA_VERDICT_LINK_ROWS];
    /* The host link in front of a NIC and the NIC's network port (the
     * first rows of each whose roles name a nic); -1 = none. */
    int nic_host, nic_port;
    /* Latency x per-GPU bandwidth of the widest row of a tier, B: below
     * it a message is latency-bound; 0 = no such tier. */
    double crossover[STRATA_TIER_COUNT];
    /* The data-link figure of the scale-out tier's widest link over
     * STRATA_VERDICT_CABLE_M, when the catalog has its line rate and wire
     * overhead: Ethernet (no credits) the PFC headroom per priority, else
     * the link round trip and the credit buffer that runs at line rate. */
    char net_link[32]; /* catalog id, "" = no figure */
    bool ethernet;
    double pfc_headroom;  /* B */
    double rtt;           /* s */
    double credit_buffer; /* B */
} strata_verdict_links_t;

/* ---- topology ---- */
#define STRATA_VERDICT_PATH_HOPS 256

/* A routed path from rank `from` to rank `to` (first equal-cost choice). */
typedef struct strata_verdict_path {
    bool ok;
    int32_t from, to;
    int32_t nhops;
    int32_t chans[STRATA_VERDICT_PATH_HOPS]; /* strata_topo_path's channels */
    double bw;                               /* bottleneck, B/s */
    double latency;                          /* s */
    double paths;                            /* equal-cost paths */
} strata_verdict_path_t;

typedef struct strata_verdict_topo {
    strata_topo_metrics_t metrics;
    /* Neighbours (ranks 0 and 1), and across servers (rank 0 to the next
     * index of server 1) or, without servers, to the farthest rank. */
    strata_verdict_path_t near, far;
    bool far_across; /* far crosses servers (else: the farthest rank) */
} strata_verdict_topo_t;

/* ---- sim ---- */

/* Queue pairs per connection of the third routing: what
 * NCCL_IB_QPS_PER_CONNECTION=8 does to spread a connection over ECMP paths. */
#define STRATA_VERDICT_QPS 8
/* About this many GPUs for the at-scale rings. */
#define STRATA_VERDICT_SCALE_GPUS 1024

/* The verdict's ring on one cluster under three routings: ideal spreading,
 * ECMP hashing with one connection per rank pair, and with
 * STRATA_VERDICT_QPS. */
typedef struct strata_verdict_routings {
    char spec[256]; /* the cluster, as given or as grown ("SPEC,servers=N") */
    int32_t gpus;
    strata_sim_result_t spread, ecmp, qps;
} strata_verdict_routings_t;

typedef struct strata_verdict_opts {
    /* A workload to plan on the cluster (a data/models name or a .json
     * path), or NULL for none. */
    const char *workload;
    /* Sequences per GPU of the planned global batch (0: 16). */
    int seq_per_gpu;
    /* A ring already simulated on this topology (spread, 1 GiB), copied
     * instead of simulating again; NULL: simulate. */
    const strata_sim_result_t *sim;
    /* Most loaded links kept in sim (0: 10). */
    int top_links;
    /* Leave the ring unsimulated (have_sim false): the model's figures only. */
    bool no_sim;
    /* The sections to fill, a mask of 1u << strata_verdict_section_t; 0:
     * every one. Tiers, machine, curves and table are always filled. */
    unsigned sections;
    /* The cluster's spec (as strata_topo_load_spec takes it), for the sim
     * section's at-scale rings: the same spec with ",servers=N" for about
     * STRATA_VERDICT_SCALE_GPUS GPUs, when the cluster has a network and
     * fewer GPUs. NULL: no at-scale rings. */
    const char *spec;
} strata_verdict_opts_t;

typedef struct strata_verdict {
    const strata_topo_t *topo; /* borrowed: must outlive the verdict */
    int32_t gpus, servers;
    strata_verdict_tiers_t tiers;
    strata_coll_machine_t machine;

    /* AllReduce curves: busbw[a][i] B/s of algorithm a at sizes[i] bytes,
     * 0 where a does not apply; chosen[i] the selected algorithm (-1: none). */
    double sizes[STRATA_VERDICT_SIZES];
    double busbw[STRATA_ALGO_COUNT][STRATA_VERDICT_SIZES];
    int chosen[STRATA_VERDICT_SIZES];
    size_t ncross; /* the selected algorithm changes above cross_sizes[i] */
    double cross_sizes[STRATA_VERDICT_CROSS];
    strata_algo_t cross_algos[STRATA_VERDICT_CROSS];

    /* The collective table and each collective's choices from 8 B to 8 GiB. */
    strata_coll_t table_ops[STRATA_VERDICT_TABLE_OPS];
    double table_sizes[STRATA_VERDICT_TABLE_SIZES];
    bool table_ok[STRATA_VERDICT_TABLE_OPS][STRATA_VERDICT_TABLE_SIZES];
    strata_coll_cost_t table[STRATA_VERDICT_TABLE_OPS][STRATA_VERDICT_TABLE_SIZES];
    strata_verdict_choice_t choices[STRATA_VERDICT_TABLE_OPS];

    /* The 1 GiB allreduce (gpus >= 2). */
    bool have_best, have_ring, have_sim;
    strata_coll_cost_t best, ring;
    strata_sim_result_t sim;
    int sim_top; /* index into sim.classes of the class that bounded it longest; -1: latency */

    /* The conclusion (have_best). */
    const char *layer;     /* "scale-up", "host/PCIe", "scale-out network", "memory (reduction)",
                              "latency"; static */
    double layer_bw;       /* that layer's B/s per GPU, 0 = none */
    double bw_share;       /* share of best.time on the bounding term */
    double lat_share;      /* share of best.time on latency */
    const char *sim_layer; /* the layer of the simulated ring's bound; static */
    double sim_share;      /* share of the simulated time bound by it */
    double best_over_sim;  /* best.busbw / sim.busbw, 0 = n/a */

    /* The workload (opts.workload): planned when have_plan; else a reason
     * in plan_skip ("" when no workload was asked for). */
    bool have_plan;
    bool plan_no_memory; /* not planned: the cluster records no accelerator memory */
    strata_workload_t workload;
    strata_plan_result_t plan;
    char plan_skip[STRATA_ERROR_MSG_MAX];
    char plan_model[256]; /* opts.workload as given, "" = none */

    /* The sections filled (a mask as opts.sections). */
    unsigned sections;
    strata_verdict_links_t links;       /* LINKS */
    strata_verdict_topo_t topology;     /* TOPOLOGY */
    bool have_routings;                 /* SIM, gpus >= 2 */
    strata_verdict_routings_t routings; /* the cluster itself */
    /* SIM at scale: have_scale, or scale_skip the grown spec that did not
     * load ("" when no at-scale ring applies). */
    bool have_scale;
    strata_verdict_routings_t scale;
    char scale_skip[256];
} strata_verdict_t;

/* Analyse topo (with catalog cat, for the reduction memory and the plan;
 * may be NULL without a workload) into a new verdict; opts may be NULL.
 * Errors: the model's or simulator's (NOMEM, INVALID), or a workload that
 * does not load (file:line:col); a cluster too small for the workload is
 * not an error (plan_skip says why). Free with strata_verdict_destroy. */
STRATA_API strata_status_t strata_verdict_create(const strata_topo_t *topo,
                                                 const strata_link_catalog_t *cat,
                                                 const strata_verdict_opts_t *opts,
                                                 strata_verdict_t **v_p, strata_error_t *err);
STRATA_API void strata_verdict_destroy(strata_verdict_t *v);

/* The layer a simulated link class belongs to ("scale-out network" above
 * tier 0, in a server "scale-up" when its kind is the scale-up tier's,
 * else "host/PCIe"; "latency" for NULL); static. */
STRATA_API const char *strata_verdict_class_layer(const strata_verdict_t *v,
                                                  const strata_sim_class_t *c);

/* The ring the verdict simulates: a STRATA_VERDICT_BIG_BYTES allreduce
 * over every accelerator of topo, the ring's channels over servers as
 * sched's model prices it, timed by the flow simulator under routing with
 * conns connections per rank pair (ECMP queue pairs; 0 = 1) and the
 * top_links most loaded links kept. Free res with strata_sim_result_free. */
STRATA_API strata_status_t strata_verdict_sim_ring(const strata_topo_t *topo,
                                                   strata_sim_routing_t routing, uint32_t conns,
                                                   int top_links, strata_sim_result_t *res,
                                                   strata_error_t *err);
/* The rows of the links section on topo (one pass over the links) and the
 * data-link figure of its scale-out link from cat (may be NULL: none). */
STRATA_API void strata_verdict_links(const strata_topo_t *topo, const strata_link_catalog_t *cat,
                                     strata_verdict_links_t *l_p);

/* Index into r->classes of the class that bounded r longest, or -1 when
 * path latency and waits did (latency_share above every class's share). */
STRATA_API int strata_verdict_top_class(const strata_sim_result_t *r);

#ifdef __cplusplus
}
#endif

#endif
