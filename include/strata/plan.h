/*
 * strata/plan.h — the strategy layer: one training step of a transformer
 * on a modelled cluster under a parallel plan (TP/SP, PP 1F1B or
 * interleaved, DP with ZeRO, EP, CP), and a search for the best plan.
 *
 * Model (docs/plan.md). A workload (data/models/NAME.json) gives the
 * shapes; an accelerator (data/accelerators.json) gives peak FLOP/s, HBM,
 * SM count, GEMM tile and the best measured fraction of peak from a named
 * public microbenchmark. Compute time is derived: every GEMM by a roofline
 * with tile and wave quantisation, every memory-bound operator by bytes
 * over HBM bandwidth. Every collective a step makes is priced by sched's
 * collective model (strata_coll_select) on the machine description of its
 * group's real ranks on the cluster (the rank order tp-cp-ep-dp-pp), so a
 * group lands on the tiers it really crosses. The pipeline is an event
 * simulation of Megatron's schedule (warm-up, 1F1B, cool-down; interleaved
 * with v model chunks), so the bubble comes from the schedule. Memory per
 * GPU follows Korthikanti et al. (2022) and Megatron's estimator.
 *
 * Thread safety: a context is immutable after create; strata_plan_eval may
 * run from several threads on one context.
 */
#ifndef STRATA_PLAN_H
#define STRATA_PLAN_H

#include "strata/common.h"
#include "strata/link.h"
#include "strata/sched.h"
#include "strata/topo.h"

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Workloads ==== */

typedef struct strata_workload {
    char name[64];
    char description[256];
    char source[512];
    int layers, hidden, heads, kv_heads, ffn, vocab, seq;
    bool gated;   /* SwiGLU/GeGLU: three FFN matrices instead of two */
    bool tied;    /* input and output embeddings share one matrix */
    bool dropout; /* trained with dropout (masks stored, dropout kernels run) */
    int weight_bytes, grad_bytes, optim_bytes; /* per element: 2, 4, 4 */
    /* Mixture of experts (experts == 0: dense). Layer i is MoE when
     * i >= moe_first and (i - moe_first) % moe_every == 0. */
    int experts, topk, shared_experts, moe_ffn, moe_first, moe_every;
} strata_workload_t;

/* Load a workload: a name of data/models/ ("gpt3-175b") or a path ending
 * in .json. Errors carry file:line:col. */
STRATA_API strata_status_t strata_workload_load(const char *name, strata_workload_t *w_p,
                                                strata_error_t *err);
/* Names of the files of data/models, comma-separated, into buf; returns buf. */
STRATA_API const char *strata_workload_names(char *buf, size_t len);
/* Parameters: total, and those active per token (MoE: top-k experts). */
STRATA_API double strata_workload_params(const strata_workload_t *w);
STRATA_API double strata_workload_active_params(const strata_workload_t *w);
STRATA_API bool strata_workload_is_moe_layer(const strata_workload_t *w, int layer);

/* ==== Accelerators ==== */

typedef struct strata_accel {
    char id[32], name[96], memory[32];
    double fp32, tf32, bf16, fp8; /* dense peak FLOP/s; 0 = none */
    double hbm_bytes, hbm_bw;     /* capacity B, bandwidth B/s */
    int units;                    /* SMs / CUs / matrix cores a GEMM tiles onto */
    int tile_m, tile_n;           /* output tile of one unit, elements */
    double gemm_eff;              /* best measured BF16 GEMM / peak (named benchmark) */
    double hbm_eff;               /* best measured stream bandwidth / peak */
} strata_accel_t;

/* Load accelerator `id` from path (NULL: <data dir>/accelerators.json). */
STRATA_API strata_status_t strata_accel_load(const char *path, const char *id, strata_accel_t *a_p,
                                             strata_error_t *err);
/* The accelerator whose memory is `memory` (a links.json HBM id). */
STRATA_API strata_status_t strata_accel_for_memory(const char *path, const char *memory,
                                                   strata_accel_t *a_p, strata_error_t *err);

/* ==== Plans ==== */

typedef enum {
    STRATA_RECOMP_NONE = 0,
    STRATA_RECOMP_SELECTIVE = 1, /* attention core only (Korthikanti) */
    STRATA_RECOMP_FULL = 2,      /* whole layer; keeps its input */
} strata_recompute_t;

typedef struct strata_plan_config {
    int tp, pp, vpp, dp, ep, cp; /* vpp: model chunks per GPU (1 = 1F1B) */
    int mbs, gbs;                /* micro-batch and global batch, sequences */
    int zero;                    /* 0 none; 1 optimizer states (distributed
                                    optimizer); 2 + grads; 3 + params (FSDP) */
    bool sp;                     /* sequence parallelism with TP */
    strata_recompute_t recompute;
    bool flash;      /* fused (flash) attention: no s x s matrix in HBM */
    bool fp8;        /* GEMMs at the FP8 peak */
    bool overlap_dp; /* DP gradient sync bucketed under the backward pass */
    bool overlap_tp; /* TP/SP collectives hidden under GEMMs */
    bool overlap_pp; /* PP transfers asynchronous (not on the critical path) */
    /* Rank order, fastest-varying first: a permutation of the
     * STRATA_PLAN_DIM_* values; all zero = Megatron's tp-cp-ep-dp-pp. EP
     * is always the fastest part of DP. */
    uint8_t order[4];
    /* Where the optimizer states live (ZeRO-Offload, Ren et al., USENIX
     * ATC'21): STRATA_PLAN_OFFLOAD_NONE in HBM; HOST in the host DRAM
     * nearest each GPU, CXL in a CXL memory expander (a cxl-memory device
     * of the cluster). Offloaded, the fp32 master weights and Adam moments
     * leave HBM, the CPU runs Adam at the tier's memory bandwidth, and
     * every step pays the gradients down and the updated weights up over
     * the routed PCIe/CXL path (docs/plan.md, "Memory tiers"). In the
     * base of strata_plan_search, -1 lets the search choose among none
     * and the tiers the cluster has. */
    int offload;
} strata_plan_config_t;

enum { STRATA_PLAN_OFFLOAD_NONE = 0, STRATA_PLAN_OFFLOAD_HOST = 1, STRATA_PLAN_OFFLOAD_CXL = 2 };

enum {
    STRATA_PLAN_DIM_TP = 0,
    STRATA_PLAN_DIM_CP = 1,
    STRATA_PLAN_DIM_DP = 2,
    STRATA_PLAN_DIM_PP = 3
};

/* Parse an order like "tp-cp-ep-dp-pp" or "tp-pp-dp" (dimensions left
 * out keep their default place after the named ones; "ep" may stand just
 * before "dp"). 0 ok, -1 bad (unknown or repeated dimension). */
STRATA_API int strata_plan_order_parse(const char *s, uint8_t order[4]);
/* The order as text ("tp-cp-ep-dp-pp"), into buf; returns buf. */
STRATA_API const char *strata_plan_order_str(const uint8_t order[4], char *buf, size_t len);

/* Defaults: tp=pp=vpp=dp=ep=cp=1, mbs=1, zero=1, sp on, selective
 * recompute, flash on, overlap_dp and overlap_pp on, overlap_tp off. */
STRATA_API void strata_plan_config_default(strata_plan_config_t *c);

typedef struct strata_plan_ctx strata_plan_ctx_t;

/* A context: the workload, the accelerator and the cluster's collective
 * machine (read off topo with cat). topo must outlive the context. */
STRATA_API strata_status_t strata_plan_ctx_create(const strata_workload_t *w,
                                                  const strata_accel_t *a,
                                                  const strata_topo_t *topo,
                                                  const strata_link_catalog_t *cat,
                                                  strata_plan_ctx_t **ctx_p, strata_error_t *err);
STRATA_API void strata_plan_ctx_destroy(strata_plan_ctx_t *ctx);

/* What-ifs on communication (strata wall). Defaults (create): 1, 1, 0. */
typedef struct strata_plan_comm_opts {
    double nic_scale;     /* scale-out bandwidth per NIC x this */
    double dp_ratio;      /* DP gradient bytes on the wire / gradient bytes (compression
                             ratio x communicated precision / stored precision), (0, 1] */
    double codec_bw;      /* B/s of gradient bytes one GPU compresses (and decompresses)
                             per second; 0 = no codec charged */
    double act_ratio;     /* activation bytes on the wire (TP, SP, CP, EP, PP) / their BF16
                             bytes: 2 = FP32, 0.5 = FP8; 0 = 1 */
    double scaleup_scale; /* scale-up bandwidth per rank x this; 0 = 1 */
    int scaleup_size;     /* GPUs per scale-up domain (a multiple of the server's GPUs
                             dividing every count priced; NICs per GPU kept); 0 = the server */
    bool flat;            /* topology-unaware: every group spanning scale-up domains runs
                             a flat ring whose neighbours sit in other domains (rank order
                             blind to the topology), at the NIC share of one rank */
    double flat_ecmp;     /* flat: bandwidth kept under ECMP hash collisions, (0, 1]; 0 = 1
                             (strata_wall_run measures it with the simulator) */
} strata_plan_comm_opts_t;

/* Set the what-ifs; call before any evaluation (the context is shared
 * read-only afterwards). INVALID when a figure is out of range. */
STRATA_API strata_status_t strata_plan_ctx_set_comm(strata_plan_ctx_t *ctx,
                                                    const strata_plan_comm_opts_t *o,
                                                    strata_error_t *err);
STRATA_API int strata_plan_ctx_gpus(const strata_plan_ctx_t *ctx);

#define STRATA_PLAN_MAX_TRAFFIC 16

/* One kind of communication in a step. */
typedef struct strata_plan_traffic {
    char dim[8];     /* "TP", "SP", "PP", "DP", "EP", "CP" */
    char op[16];     /* collective name, "send/recv" */
    char tier[48];   /* "scale-up nvlink3", "scale-out ib-hdr x1" */
    char algo[16];   /* chosen algorithm */
    int group;       /* ranks in the group */
    int stride;      /* rank distance between its members (rank order tp-cp-ep-dp-pp) */
    double bytes;    /* per call (nccl-tests size) */
    double calls;    /* per step, per GPU */
    double time;     /* s per step (calls x one call) */
    double exposed;  /* s per step on the critical path */
    double sim_time; /* s per step by the simulator, 0 = not simulated */
} strata_plan_traffic_t;

typedef struct strata_plan_result {
    strata_plan_config_t cfg;
    int gpus, micro;                  /* micro-batches per step per DP replica */
    double step;                      /* s */
    double compute;                   /* s: forward + backward (+ recompute) on the busiest stage */
    double compute_gemm, compute_mem; /* of compute: GEMM time, memory-bound time */
    double bubble;                    /* s: pipeline idle on the busiest stage */
    double optimizer;                 /* s */
    double exposed[6];                /* s per dimension TP, PP, DP, EP, CP, (unused) */
    double model_flops;               /* per step, Megatron convention (causal, no recompute) */
    double hw_flops;                  /* per step, as executed (recompute, masked attention) */
    double tflops_model, tflops_hw, mfu, tokens_per_s;
    /* Memory per GPU (most loaded stage), bytes */
    double mem_weights, mem_grads, mem_optim, mem_act, mem_buffers, mem_total, mem_capacity;
    bool fits;
    int ntraffic;
    strata_plan_traffic_t traffic[STRATA_PLAN_MAX_TRAFFIC];
    char bottleneck[64]; /* the layer that bounds the step */
    char advice[160];    /* the one change that would move it most */
    /* offload (cfg.offload != NONE): s per step moving gradients to the
     * tier and weights back (in step), and the figures that priced it:
     * the worst GPU's share of the routed path and of the tier's memory */
    double offload, offload_xfer_bw, offload_mem_bw;
    /* offload: bytes of optimizer states each GPU keeps in the tier (the
     * busiest stage's), and its share of the tier's capacity (capacity of
     * its memory / GPUs using it; 0 = not recorded, not checked). A plan
     * whose states exceed the share does not fit (fits = false). */
    double mem_offload, mem_offload_capacity;
} strata_plan_result_t;

/* Evaluate cfg. INVALID (with the reason in err) when sizes do not divide
 * (TP vs heads, PP vs layers, product vs GPUs, batch vs micro-batch x DP).
 * A plan that does not fit memory is returned with fits = false. */
STRATA_API strata_status_t strata_plan_eval(const strata_plan_ctx_t *ctx,
                                            const strata_plan_config_t *cfg,
                                            strata_plan_result_t *r_p, strata_error_t *err);

/* Search every valid (tp, pp, vpp, dp, ep, cp, mbs, zero, recompute) for
 * gbs sequences on all GPUs of ctx, keeping plans that fit; the best
 * `max` by step time into out (sorted), their number in *n_p, and how many
 * plans were evaluated in *evaluated_p. base supplies the switches
 * (overlap, flash, fp8). No feasible plan: STRATA_ERR_RANGE with what ran
 * out and the nearest miss in err. */
STRATA_API strata_status_t strata_plan_search(const strata_plan_ctx_t *ctx,
                                              const strata_plan_config_t *base, int gbs,
                                              strata_plan_result_t *out, int max, int *n_p,
                                              long *evaluated_p, strata_error_t *err);

/* Time every kind of traffic of r with the simulator: one call of each,
 * all groups of its dimension at once on the cluster (every DP group
 * reducing over the same NICs), flows sharing links max-min fairly. Fills
 * traffic[i].sim_time (per step: calls x one simulated call). Clusters of
 * more than max_gpus GPUs are refused (ERR_RANGE) to bound the run. */
STRATA_API strata_status_t strata_plan_simulate(const strata_plan_ctx_t *ctx,
                                                strata_plan_result_t *r, int max_gpus,
                                                strata_error_t *err);

/* Print a result as text (the breakdown, the traffic table, memory, the
 * bottleneck) or JSON. */
STRATA_API void strata_plan_print(const strata_plan_ctx_t *ctx, const strata_plan_result_t *r,
                                  bool json, FILE *out);

/* Pipeline schedule (exposed for tests): makespan of one stage-pipeline
 * step with p stages, v chunks per stage, m micro-batches, forward and
 * backward times per chunk tf/tb (all chunks equal) and a transfer of tx
 * on every stage boundary; Megatron's order (warm-up, 1F1B, cool-down).
 * Returns the time, or a negative value for an invalid or deadlocked
 * schedule. */
STRATA_API double strata_plan_pipeline_time(int p, int v, int m, double tf, double tb, double tx);

/* ==== The fabric's physical limits (fabric.c, docs/wall.md) ==== */

#define STRATA_FABRIC_MAX_PARTS 16

typedef struct strata_fabric_part {
    char id[32], name[96];
    double gbps;   /* optics: module rate; switch: port rate */
    double watts;  /* optics: one module; switch: system (or ASIC) */
    int ports;     /* switch radix (0 for optics) */
    double hop_ns; /* switch port-to-port */
} strata_fabric_part_t;

typedef struct strata_fabric_catalog {
    int noptics, nswitches;
    strata_fabric_part_t optics[STRATA_FABRIC_MAX_PARTS], switches[STRATA_FABRIC_MAX_PARTS];
    double copper_w, copper_ns_m, copper_m; /* per end; ns per metre; run length */
    double fiber_ns_m, fiber_m;
    double cpo_pj_bit; /* co-packaged optics energy per bit */
} strata_fabric_catalog_t;

/* Load path (NULL: <data dir>/fabric.json). Errors carry file:line:col. */
STRATA_API strata_status_t strata_fabric_catalog_load(const char *path, strata_fabric_catalog_t *c,
                                                      strata_error_t *err);

/* One tier of links: tier 1 joins endpoints to leaves (copper, in the
 * rack), tier 2 leaves to spines, tier 3 spines (aggregation) to cores. */
typedef struct strata_fabric_tier {
    long switches; /* switches at the top of this tier's links */
    long links, transceivers, cables;
    bool optical;
    double watts; /* transceivers (or copper ends) of this tier */
} strata_fabric_tier_t;

typedef struct strata_fabric {
    long endpoints;
    int radix, tiers; /* tiers of switches (1-3) */
    double port_gbps;
    long switches;
    strata_fabric_tier_t tier[3];
    double switch_w, optics_w, total_w, w_per_endpoint;
    double cpo_w_per_endpoint; /* optics priced at the co-packaged pJ/bit */
    int diameter;              /* switches on the longest shortest path */
    double latency_ns;         /* hops + propagation across the diameter */
    char switch_id[32], optic_id[32];
} strata_fabric_t;

/* Size a non-blocking folded-Clos (k-ary fat-tree) of switch `sw` (an id
 * of c->switches) for n endpoints: 1 tier up to k, 2 up to k^2/2, 3 up to
 * k^3/4; ERR_RANGE beyond. */
STRATA_API strata_status_t strata_fabric_size(const strata_fabric_catalog_t *c, const char *sw,
                                              long n, strata_fabric_t *f, strata_error_t *err);
/* The id of the first switch whose port rate is at least gbps, or NULL. */
STRATA_API const char *strata_fabric_switch_for(const strata_fabric_catalog_t *c, double gbps);

/* ==== The communication wall (wall.c, docs/wall.md) ==== */

typedef enum {
    STRATA_WALL_BEST = 0, /* the planner's search at every size */
    STRATA_WALL_DP = 1,   /* pure data parallelism (ZeRO as fits) */
    STRATA_WALL_DPTP = 2, /* TP = the server's GPUs, DP across */
    STRATA_WALL_3D = 3,   /* TP = the server, PP 8 (or the most that divides), DP across */
} strata_wall_strategy_t;

#define STRATA_WALL_MAX_POINTS 24

typedef struct strata_wall_point {
    int gpus, gbs;
    bool ok; /* a plan exists and fits; else why says */
    char why[160];
    strata_plan_result_t r;
    double comm_total[6]; /* s per step per dimension (TP, PP, DP, EP, CP), all traffic */
    double exposed_comm;  /* s: sum of r.exposed */
    double exposed_share; /* exposed_comm / step */
    double efficiency;    /* tokens/s per GPU over the first point's */
    char tier[48];        /* tier of the traffic with the most exposed time */
    char tier_dim[8];
    int fabric_tiers; /* switch tiers of the scale-out fat-tree, 0 = none/unknown */
    double fabric_w_per_gpu, fabric_cpo_w_per_gpu, fabric_latency_ns;
    /* comm.flat: the bandwidth share the flat rings keep under ECMP collisions
     * (comm.flat_ecmp when given; else simulated at this count when it has two
     * servers and at most 512 GPUs — a ring allreduce in a shuffled rank order,
     * spread / ECMP routing time — and the last simulated one beyond) */
    double ecmp_eff;
    bool ecmp_simulated;
} strata_wall_point_t;

typedef struct strata_wall_opts {
    const char *family;     /* cluster preset name ("dgx-h100") */
    const char *accel;      /* NULL: the one the cluster's memory names */
    int gpus_min, gpus_max; /* doubling from min while <= max; 0: the server's
                               GPUs, the most of them up to 100,000 */
    bool strong;            /* fixed global batch gbs; else batch_per_gpu x GPUs */
    int gbs, batch_per_gpu;
    strata_wall_strategy_t strategy;
    strata_plan_config_t base; /* switches: overlap, flash, fp8 */
    strata_plan_comm_opts_t comm;
    double share; /* the wall: exposed communication > share of the step */
} strata_wall_opts_t;

typedef struct strata_wall {
    int npoints, wall_index; /* wall_index -1: no wall in the range */
    int per_server;

    strata_wall_point_t points[STRATA_WALL_MAX_POINTS];
} strata_wall_t;

/* Sweep o->family from gpus_min to gpus_max (doubling) under one strategy,
 * every point priced by strata_plan_eval / strata_plan_search. INVALID for
 * a range that does not fit the family (a count not a multiple of the
 * server) or bad options. w: the workload; cat: the link catalog; fab:
 * the fabric catalog (NULL: no fabric columns). */
STRATA_API strata_status_t strata_wall_run(const strata_workload_t *w,
                                           const strata_link_catalog_t *cat,
                                           const strata_fabric_catalog_t *fab,
                                           const strata_wall_opts_t *o, strata_wall_t *out,
                                           strata_error_t *err);
STRATA_API const char *strata_wall_strategy_name(strata_wall_strategy_t s);

#ifdef __cplusplus
}
#endif
#endif /* STRATA_PLAN_H */
