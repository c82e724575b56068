/*
 * plan.h — internals of the plan module shared by its files: the context,
 * the per-layer compute model, memory, communication pricing on groups and
 * the pipeline schedule. Public API: include/strata/plan.h.
 */
#ifndef STRATA_PLAN_INT_H
#define STRATA_PLAN_INT_H

#include "strata/plan.h"
#include "strata/sched.h"
#include "util.h"

struct strata_plan_ctx {
    strata_workload_t w;
    strata_accel_t a;
    const strata_topo_t *topo;
    strata_coll_machine_t m;  /* the whole cluster under the what-ifs */
    strata_coll_machine_t m0; /* the whole cluster, read once */
    int gpus;
    strata_plan_comm_opts_t comm; /* what-ifs on communication (wall.c) */
    /* Offload tiers (index STRATA_PLAN_OFFLOAD_*), read once at creation
     * (routing every GPU to its tier memory is too slow for every plan of
     * a search): whether the cluster has the tier (else why not), its
     * transfer and memory bandwidths (plan_offload_tier), and the bytes of
     * the tier's memory each GPU may fill (0 = no such tier, or a memory
     * without a recorded capacity). */
    struct plan_tier {
        strata_status_t st;
        char why[STRATA_ERROR_MSG_MAX];
        double xfer_bw, mem_bw, share;
    } tier[3];
};

/* ctx.c: bytes per activation element on the wire (BF16 x the what-if). */
double plan_act_bytes(const strata_plan_ctx_t *ctx);

/* workload.c: a workload from JSON text (name labels errors). */
strata_status_t plan_workload_parse_text(const char *text, size_t len, const char *name,
                                         strata_workload_t *w_p, strata_error_t *err);
int plan_moe_layers(const strata_workload_t *w);
double plan_attn_params(const strata_workload_t *w);
double plan_ffn_params(const strata_workload_t *w, double ffn);
double plan_embed_params(const strata_workload_t *w);

/* compute.c: seconds of one micro-batch through one layer on one GPU. */
typedef struct plan_layer_time {
    double fwd_gemm, fwd_mem;    /* forward */
    double bwd_gemm, bwd_mem;    /* backward incl. recompute */
    double attn_core;            /* forward attention core (CP overlap window) */
    double attn_gemm, attn_mem;  /* its GEMM and memory-bound parts */
    double fwd_flops, bwd_flops; /* executed, incl. recompute */
} plan_layer_time_t;

double plan_gemm_time(const strata_accel_t *a, double peak, double batch, double M, double N,
                      double K);
void plan_layer_time(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, bool moe,
                     plan_layer_time_t *t_p);
void plan_logits_time(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                      plan_layer_time_t *t_p);
double plan_model_flops(const strata_workload_t *w, double sequences);
double plan_peak(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c);

/* memory.c */
bool plan_layers_split(const strata_workload_t *w, const strata_plan_config_t *c);
void plan_stage_layers(const strata_workload_t *w, const strata_plan_config_t *c, int vs,
                       int *first_p, int *n_p);
double plan_layer_params(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, int first,
                         int n);
double plan_stage_params(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, int stage);

/* offload.c: the tier `kind` (STRATA_PLAN_OFFLOAD_HOST or _CXL) of the
 * first server: the worst GPU's share of its routed path to the tier
 * memory (B/s per direction) and of the tier memory's bandwidth (B/s, both
 * directions). ERR_INVALID when a GPU has no memory of that tier. */
strata_status_t plan_offload_tier(const strata_plan_ctx_t *ctx, int kind, double *xfer_bw_p,
                                  double *mem_bw_p, strata_error_t *err);
/* offload.c: the bytes of tier `kind` each GPU may fill: the least, over
 * the tier's memories the first server's GPUs use, of capacity / GPUs
 * using it; 0 when the cluster has no such tier or a memory used has no
 * recorded capacity (then nothing is checked). */
double plan_offload_share(const strata_topo_t *t, int kind);
void plan_memory(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, int micro,
                 strata_plan_result_t *r);
/* memory.c: by how many bytes r misses memory: the larger of HBM's miss
 * and the offload tier's (negative when it fits). */
double plan_memory_miss(const strata_plan_result_t *r);

/* comm.c: a group of n ranks spaced `stride` apart, starting at rank 0. */
typedef struct plan_group {
    strata_coll_machine_t m;
    int n, stride;
    char tier[48];
    bool network; /* crosses the scale-out network */
    bool flat;    /* comm.flat what-if: a flat ring only */
} plan_group_t;

strata_status_t plan_group(const strata_plan_ctx_t *ctx, int n, int stride, plan_group_t *g_p,
                           strata_error_t *err);
/* Time of one collective of `bytes` (nccl-tests size) on g: the cheapest
 * algorithm of sched's model; algo_p may be NULL. 0 for n == 1. */
double plan_coll_time(const plan_group_t *g, strata_coll_t coll, double bytes,
                      strata_algo_t *algo_p);

/* pipeline.c: per virtual stage forward/backward times (index c*p + r). */
double plan_pipeline(int p, int v, int m, const double *tf, const double *tb, double tx,
                     bool blocking);

/* bottleneck.c: fill r->bottleneck and r->advice. */
void plan_finish_result(const strata_plan_ctx_t *ctx, strata_plan_result_t *r);
strata_status_t plan_eval_core(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                               strata_plan_result_t *r, strata_error_t *err);

/* Pipeline makespans remembered across evaluations that differ only in
 * the ZeRO stage (which changes no pass time): one entry per
 * recomputation mode. Owned by one caller (the search). */
typedef struct plan_pipe_cache {
    bool valid[3];
    strata_plan_config_t key[3];
    double t0[3], t1[3];
} plan_pipe_cache_t;

strata_status_t plan_eval_cached(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                                 plan_pipe_cache_t *cache, strata_plan_result_t *r,
                                 strata_error_t *err);

#endif
