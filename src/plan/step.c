/*
 * step.c — one training step under a plan: validation of the sizes, the
 * per-stage pass times (compute plus the exposed TP/CP/EP collectives of
 * each layer), the pipeline schedule, the data-parallel gradient sync
 * against the backward pass, the optimizer, FLOP rates and the traffic
 * table (plan_traffic.c adds the bottleneck).
 *
 * Rank order (Megatron's default tp-cp-ep-dp-pp): rank = tp_rank + tp *
 * (cp_rank + cp * (dp_rank + dp * pp_rank)), the EP group being the first
 * ep ranks of the DP dimension. So a TP group is tp consecutive ranks, a
 * CP group stride tp, EP and DP groups stride tp cp, a PP neighbour
 * stride tp cp dp. Another order (config.order) permutes the strides.
 */
#include "plan.h"

#include <math.h>
#include <string.h>

enum { D_TP, D_PP, D_DP, D_EP, D_CP };

void strata_plan_config_default(strata_plan_config_t *c)
{
    *c = (strata_plan_config_t){.tp = 1,
                                .pp = 1,
                                .vpp = 1,
                                .dp = 1,
                                .ep = 1,
                                .cp = 1,
                                .mbs = 1,
                                .zero = 1,
                                .sp = true,
                                .recompute = STRATA_RECOMP_SELECTIVE,
                                .flash = true,
                                .overlap_dp = true,
                                .overlap_pp = true};
}

static strata_status_t invalid(strata_error_t *err, const char *fmt, int a, int b)
{
    return strata_error_set(err, STRATA_ERR_INVALID, fmt, a, b);
}

static strata_status_t check(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                             strata_error_t *err)
{
    const strata_workload_t *w = &ctx->w;
    unsigned mask = 0;
    for (int i = 0; i < 4; i++)
        mask |= c->order[i] < 4 ? 1u << c->order[i] : 16u;
    if (mask != 15 && (c->order[0] | c->order[1] | c->order[2] | c->order[3]))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "plan: the rank order must name tp, cp, dp and pp once each");
    if (c->tp < 1 || c->pp < 1 || c->vpp < 1 || c->dp < 1 || c->ep < 1 || c->cp < 1 || c->mbs < 1 ||
        c->gbs < 1 || c->zero < 0 || c->zero > 3)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "plan: every size must be >= 1 and ZeRO 0-3");
    if (w->heads % c->tp)
        return invalid(err, "TP %d does not divide the %d attention heads", c->tp, w->heads);
    if (w->kv_heads % c->tp && c->tp % w->kv_heads)
        return invalid(err, "TP %d and the %d KV heads do not divide one another", c->tp,
                       w->kv_heads);
    if (!plan_layers_split(w, c))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "PP %d x %d chunks does not divide the %d layers (nor the %d of "
                                "one fewer on the first and last stage)",
                                c->pp, c->vpp, w->layers, w->layers + 2);
    if (c->vpp > 1 && c->pp == 1)
        return invalid(err, "interleaving (%d chunks) needs PP > 1, got PP %d", c->vpp, c->pp);
    long prod = (long)c->tp * c->pp * c->dp * c->cp;
    if (prod != ctx->gpus)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "TP %d x PP %d x DP %d x CP %d = %ld, not the %d GPUs", c->tp,
                                c->pp, c->dp, c->cp, prod, ctx->gpus);
    if (c->ep > 1 && (!w->experts || w->experts % c->ep || c->dp % c->ep))
        return invalid(err, "EP %d must divide the experts (%d) and DP", c->ep, w->experts);
    if (w->seq % (2 * c->cp) && c->cp > 1)
        return invalid(err, "CP %d: 2 x CP must divide the sequence %d", c->cp, w->seq);
    if (c->gbs % ((long)c->mbs * c->dp))
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "batch %d is not divisible by micro-batch %d x DP %d", c->gbs,
                                c->mbs, c->dp);
    int m = c->gbs / (c->mbs * c->dp);
    if (c->vpp > 1 && m % c->pp)
        return invalid(err, "interleaving needs the %d micro-batches to be a multiple of PP %d", m,
                       c->pp);
    return STRATA_OK;
}

/* ==== Rank order ==== */

static const char *const dim_names[4] = {"tp", "cp", "dp", "pp"};

int strata_plan_order_parse(const char *s, uint8_t order[4])
{
    uint8_t o[4];
    int n = 0;
    bool seen[4] = {false};
    char tok[8];
    while (*s) {
        size_t k = strcspn(s, "-,");
        if (k == 0 || k >= sizeof(tok)) return -1;
        memcpy(tok, s, k), tok[k] = 0;
        s += k + (s[k] ? 1 : 0);
        if (!strcmp(tok, "ep")) {
            if (*s && strncmp(s, "dp", 2)) return -1; /* ep must stand before dp */
            continue;
        }
        int d = 0;
        while (d < 4 && strcmp(tok, dim_names[d]))
            d++;
        if (d == 4 || seen[d]) return -1;
        seen[d] = true, o[n++] = (uint8_t)d;
    }
    for (int d = 0; d < 4; d++)
        if (!seen[d]) o[n++] = (uint8_t)d;
    memcpy(order, o, 4);
    return 0;
}

const char *strata_plan_order_str(const uint8_t order[4], char *buf, size_t len)
{
    uint8_t def[4] = {0, 1, 2, 3};
    const uint8_t *o = order[0] || order[1] || order[2] || order[3] ? order : def;
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < 4 && o[i] < 4; i++) {
        int k = snprintf(buf + used, len - used, "%s%s%s", i ? "-" : "",
                         o[i] == STRATA_PLAN_DIM_DP ? "ep-" : "", dim_names[o[i]]);
        if (k > 0 && (size_t)k < len - used) used += (size_t)k;
    }
    return buf;
}

/* ==== Traffic ==== */

static void traffic(strata_plan_result_t *r, const char *dim, const char *op, const plan_group_t *g,
                    double bytes, double calls, double one, double exposed, strata_algo_t algo)
{
    if (r->ntraffic >= STRATA_PLAN_MAX_TRAFFIC || calls <= 0 || g->n <= 1) return;
    strata_plan_traffic_t *t = &r->traffic[r->ntraffic++];
    memset(t, 0, sizeof(*t));
    snprintf(t->dim, sizeof(t->dim), "%s", dim);
    snprintf(t->op, sizeof(t->op), "%s", op);
    snprintf(t->tier, sizeof(t->tier), "%s", g->tier);
    snprintf(t->algo, sizeof(t->algo), "%s", strata_algo_name(algo));
    t->group = g->n, t->stride = g->stride, t->bytes = bytes, t->calls = calls,
    t->time = calls * one;
    t->exposed = exposed;
}

/* ==== Per-layer communication ==== */

typedef struct layer_comm {
    double tp_f, tp_b; /* exposed TP/SP per layer and micro-batch */
    double cp_f, cp_b, ep_f, ep_b;
    double tp_one, cp_one, ep_one; /* one call */
    strata_algo_t tp_algo, cp_algo, ep_algo;
    int tp_calls_f, tp_calls_b;
} layer_comm_t;

static double hidden_under(double comm, double window, bool overlap)
{
    if (!overlap) return comm;
    return comm > window ? comm - window : 0;
}

static void layer_comm(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                       const plan_group_t *tp, const plan_group_t *cp, const plan_group_t *ep,
                       const plan_layer_time_t *lt, bool moe, layer_comm_t *k)
{
    const strata_workload_t *w = &ctx->w;
    double T = (double)c->mbs * w->seq / c->cp, ab = plan_act_bytes(ctx), act = T * w->hidden * ab;
    bool full = c->recompute == STRATA_RECOMP_FULL;
    memset(k, 0, sizeof(*k));
    /* Megatron TP: 2 collectives per layer forward, 2 backward; SP turns
     * each all-reduce into all-gather + reduce-scatter of the same size */
    k->tp_calls_f = 2, k->tp_calls_b = 2 + (full ? 2 : 0);
    if (c->sp) {
        double ag = plan_coll_time(tp, STRATA_COLL_ALLGATHER, act, &k->tp_algo);
        double rs = plan_coll_time(tp, STRATA_COLL_REDUCE_SCATTER, act, NULL);
        k->tp_one = (ag + rs) / 2;
        k->tp_calls_f *= 2, k->tp_calls_b *= 2;
    } else {
        k->tp_one = plan_coll_time(tp, STRATA_COLL_ALLREDUCE, act, &k->tp_algo);
    }
    k->tp_f = hidden_under(k->tp_calls_f * k->tp_one, lt->fwd_gemm, c->overlap_tp);
    k->tp_b = hidden_under(k->tp_calls_b * k->tp_one, lt->bwd_gemm, c->overlap_tp);
    /* CP (ring attention): K and V blocks gathered around the ring in
     * forward, again in backward with dK/dV reduce-scattered; overlapped
     * with the attention core as the ring kernels do */
    double kv = 2 * T * ((double)w->hidden * w->kv_heads / w->heads) / c->tp * ab;
    k->cp_one = plan_coll_time(cp, STRATA_COLL_ALLGATHER, kv * c->cp, &k->cp_algo);
    k->cp_f = hidden_under(k->cp_one, lt->attn_core, true);
    k->cp_b = hidden_under(2 * k->cp_one, 2 * lt->attn_core, true);
    /* EP: all-to-all dispatch and combine, forward and backward */
    if (moe) {
        double a2a = T * w->topk * w->hidden * ab / c->tp;
        k->ep_one = plan_coll_time(ep, STRATA_COLL_ALLTOALL, a2a, &k->ep_algo);
        k->ep_f = 2 * k->ep_one, k->ep_b = (full ? 4 : 2) * k->ep_one;
    }
}

/* ==== Stages and pipeline ==== */

typedef struct stages {
    int nv;
    double *tf, *tb;              /* per virtual stage, one micro-batch */
    double gemm, mem, tp, cp, ep; /* per micro-batch on the busiest stage */
    double work;                  /* max over stages of sum of tf + tb */
    int busiest;
    double tp_calls, ep_calls, cp_calls; /* per micro-batch, busiest stage */
    double flops;    /* executed per micro-batch, all layers, one GPU of a TP group */
    layer_comm_t kd; /* a dense layer's communication */
} stages_t;

typedef struct groups {
    plan_group_t tp, cp, ep, dp, edp, pp;
} groups_t;

/* Rank distance between neighbours of each dimension under c's order:
 * the product of the sizes of the dimensions that vary faster. */
static void strides(const strata_plan_config_t *c, long st[4])
{
    uint8_t def[4] = {0, 1, 2, 3};
    const uint8_t *o = c->order[0] || c->order[1] || c->order[2] || c->order[3] ? c->order : def;
    int size[4] = {c->tp, c->cp, c->dp, c->pp};
    long run = 1;
    for (int i = 0; i < 4; i++)
        st[o[i]] = run, run *= size[o[i]];
}

static strata_status_t make_groups(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                                   groups_t *g, strata_error_t *err)
{
    long st[4];
    strata_status_t s;
    strides(c, st);
    if ((s = plan_group(ctx, c->tp, (int)st[0], &g->tp, err)) ||
        (s = plan_group(ctx, c->cp, (int)st[1], &g->cp, err)) ||
        (s = plan_group(ctx, c->ep, (int)st[2], &g->ep, err)) ||
        (s = plan_group(ctx, c->dp, (int)st[2], &g->dp, err)) ||
        (s = plan_group(ctx, c->dp / c->ep, (int)(st[2] * c->ep), &g->edp, err)))
        return s;
    return plan_group(ctx, c->pp > 1 ? 2 : 1, (int)st[3], &g->pp, err);
}

#define GM_COLS 8 /* per stage: GEMM, memory, TP, CP, EP seconds; TP, CP, EP calls */

/* One layer on virtual stage vs: its pass times, and the busiest-stage
 * accounting (gm: per stage GEMM, memory, TP, CP, EP seconds). */
static void add_layer(stages_t *s, double *gm, const strata_plan_config_t *c, int vs,
                      const plan_layer_time_t *lt, const layer_comm_t *k, bool is_moe)
{
    int stage = vs % c->pp;
    s->tf[vs] += lt->fwd_gemm + lt->fwd_mem + k->tp_f + k->cp_f + k->ep_f;
    s->tb[vs] += lt->bwd_gemm + lt->bwd_mem + k->tp_b + k->cp_b + k->ep_b;
    double *a = gm + stage * GM_COLS;
    a[0] += lt->fwd_gemm + lt->bwd_gemm, a[1] += lt->fwd_mem + lt->bwd_mem;
    a[2] += k->tp_f + k->tp_b, a[3] += k->cp_f + k->cp_b, a[4] += k->ep_f + k->ep_b;
    a[5] += k->tp_calls_f + k->tp_calls_b;
    a[6] += c->cp > 1 ? 3 : 0;
    a[7] += is_moe ? (k->ep_f + k->ep_b) / (k->ep_one > 0 ? k->ep_one : 1) : 0;
    s->flops += lt->fwd_flops + lt->bwd_flops;
}

static strata_status_t build_stages(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                                    const groups_t *g, stages_t *s, strata_error_t *err)
{
    const strata_workload_t *w = &ctx->w;
    plan_layer_time_t dense, moe, logits;
    layer_comm_t kd, km;
    s->nv = c->pp * c->vpp;
    s->tf = util_calloc((size_t)s->nv, sizeof(double));
    s->tb = util_calloc((size_t)s->nv, sizeof(double));
    double *gm = util_calloc((size_t)c->pp * GM_COLS, sizeof(double));
    if (!s->tf || !s->tb || !gm) {
        util_free(gm);
        return strata_error_set(err, STRATA_ERR_NOMEM, "plan: out of memory");
    }
    plan_layer_time(ctx, c, false, &dense);
    plan_layer_time(ctx, c, true, &moe);
    plan_logits_time(ctx, c, &logits);
    layer_comm(ctx, c, &g->tp, &g->cp, &g->ep, &dense, false, &kd);
    layer_comm(ctx, c, &g->tp, &g->cp, &g->ep, &moe, true, &km);
    s->kd = w->experts && w->moe_first == 0 ? km : kd;
    for (int vs = 0; vs < s->nv; vs++) {
        int first, n;
        plan_stage_layers(w, c, vs, &first, &n);
        for (int i = first; i < first + n; i++) {
            bool is_moe = strata_workload_is_moe_layer(w, i);
            add_layer(s, gm, c, vs, is_moe ? &moe : &dense, is_moe ? &km : &kd, is_moe);
        }
    }
    int last = s->nv - 1, lstage = last % c->pp;
    s->tf[last] += logits.fwd_gemm + logits.fwd_mem;
    s->tb[last] += logits.bwd_gemm + logits.bwd_mem;
    gm[lstage * GM_COLS] += logits.fwd_gemm + logits.bwd_gemm;
    gm[lstage * GM_COLS + 1] += logits.fwd_mem + logits.bwd_mem;
    s->flops += logits.fwd_flops + logits.bwd_flops;
    s->work = -1;
    for (int r = 0; r < c->pp; r++) {
        double sum = 0;
        for (int k = 0; k < c->vpp; k++)
            sum += s->tf[k * c->pp + r] + s->tb[k * c->pp + r];
        if (sum > s->work) s->work = sum, s->busiest = r;
    }
    double *a = gm + s->busiest * GM_COLS;
    s->gemm = a[0], s->mem = a[1], s->tp = a[2], s->cp = a[3], s->ep = a[4];
    s->tp_calls = a[5], s->cp_calls = a[6], s->ep_calls = a[7];
    util_free(gm);
    return STRATA_OK;
}

/* Makespan of the schedule for m micro-batches. Past 3p micro-batches the
 * steady state adds one busiest-stage pass pair per micro-batch, so the
 * schedule is simulated for 2p + (m mod p) and extended exactly. */
static double pipe_time(const strata_plan_config_t *c, const stages_t *s, int m, double tx,
                        bool blocking)
{
    if (c->pp == 1) return m * s->work;
    int ms = m;
    if (m > 3 * c->pp) ms = 2 * c->pp + m % c->pp;
    double t = plan_pipeline(c->pp, c->vpp, ms, s->tf, s->tb, tx, blocking);
    return t < 0 ? t : t + (m - ms) * s->work;
}

/* ==== Data parallelism ==== */

/* Megatron's DDP bucket: max(40e6, 1e6 x DP) parameters
 * (megatron/core/distributed/distributed_data_parallel.py). Buckets are
 * ready one after another across the window (the last micro-batch's
 * backward on stage 0) and reduce one at a time; what runs past the
 * window is exposed. */
static double dp_sync(const strata_plan_ctx_t *ctx, const plan_group_t *g, strata_coll_t coll,
                      double params, double window, bool overlap, double *total_p,
                      strata_algo_t *algo_p)
{
    /* What-ifs (strata_plan_ctx_set_comm): dp_ratio of the gradient bytes
     * travel; a codec encodes before and decodes after, 2 passes over the
     * gradient bytes at codec_bw, in series with the collective. */
    double bytes_per = ctx->w.grad_bytes * ctx->comm.dp_ratio;
    double codec = ctx->comm.codec_bw > 0 ? 2.0 * ctx->w.grad_bytes / ctx->comm.codec_bw : 0;
    if (g->n <= 1 || params <= 0) return *total_p = 0, 0;
    if (!overlap) {
        *total_p = plan_coll_time(g, coll, params * bytes_per, algo_p) + params * codec;
        return *total_p;
    }
    double bucket = fmax(40e6, 1e6 * g->n), nb = ceil(params / bucket);
    double last = params - (nb - 1) * bucket;
    double one = plan_coll_time(g, coll, bucket * bytes_per, algo_p) + bucket * codec;
    double tail = plan_coll_time(g, coll, last * bytes_per, NULL) + last * codec;
    double finish = 0;
    for (double i = 1; i <= nb; i++) {
        double arrive = window * i / nb;
        finish = (finish > arrive ? finish : arrive) + (i == nb ? tail : one);
    }
    *total_p = (nb - 1) * one + tail;
    return finish > window ? finish - window : 0;
}

/* ==== The step ==== */

typedef struct dp_part {
    double exposed, grads_total, params_total;
    double exposed_grads, exposed_params; /* the parts of exposed */
    double egrads_total, exposed_egrads;  /* expert gradients over the expert-DP group */
    double eparams_total, exposed_eparams;
    strata_algo_t ea, epa;
    strata_algo_t ga, pa;
    strata_coll_t gcoll;
    double gparams, eparams;
} dp_part_t;

static void data_parallel(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                          const groups_t *g, const stages_t *s, dp_part_t *d)
{
    const strata_workload_t *w = &ctx->w;
    double all = plan_stage_params(ctx, c, 0), experts = 0;
    for (int k = 0; k < c->vpp; k++) {
        int first, n;
        plan_stage_layers(w, c, k * c->pp, &first, &n);
        for (int i = first; i < first + n; i++)
            if (strata_workload_is_moe_layer(w, i))
                experts += (double)w->experts / c->ep * plan_ffn_params(w, w->moe_ffn) / c->tp;
    }
    double window = 0;
    for (int k = 0; k < c->vpp; k++)
        window += s->tb[k * c->pp];
    memset(d, 0, sizeof(*d));
    d->gparams = all - experts, d->eparams = experts;
    d->gcoll = c->zero >= 1 ? STRATA_COLL_REDUCE_SCATTER : STRATA_COLL_ALLREDUCE;
    d->exposed_grads =
        dp_sync(ctx, &g->dp, d->gcoll, d->gparams, window, c->overlap_dp, &d->grads_total, &d->ga);
    d->exposed_egrads = dp_sync(ctx, &g->edp, d->gcoll, d->eparams, window, c->overlap_dp,
                                &d->egrads_total, &d->ea);
    d->exposed = d->exposed_grads + d->exposed_egrads;
    if (c->zero == 1 || c->zero == 2) {
        /* updated weights gathered after the step (ZeRO-3 gathers per
         * layer instead); with overlap, under the first forward pass of
         * the next step (--overlap-param-gather); the expert weights'
         * gather runs after the dense one */
        d->params_total =
            plan_coll_time(&g->dp, STRATA_COLL_ALLGATHER, d->gparams * w->weight_bytes, &d->pa);
        d->eparams_total =
            plan_coll_time(&g->edp, STRATA_COLL_ALLGATHER, d->eparams * w->weight_bytes, &d->epa);
        double ag = d->params_total + d->eparams_total;
        double exposed = hidden_under(ag, s->tf[0], c->overlap_dp);
        /* charged to the expert gather first: it is the later one */
        d->exposed_eparams = exposed < d->eparams_total ? exposed : d->eparams_total;
        d->exposed_params = exposed - d->exposed_eparams;
        d->exposed += exposed;
    }
}

/* ZeRO-3: each layer's weights gathered before its forward and its
 * backward, prefetched under the previous layer when overlap is on. */
typedef struct z3 {
    double bytes, calls, one, exposed;
} z3_t;

static void zero3(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c, const groups_t *g,
                  const stages_t *s, int m, z3_t *z)
{
    memset(z, 0, sizeof(*z));
    if (c->zero < 3 || c->dp == 1) return;
    int first, per;
    plan_stage_layers(&ctx->w, c, 0, &first, &per);
    per *= c->vpp;
    z->bytes = plan_stage_params(ctx, c, 0) / per * ctx->w.weight_bytes;
    z->one = plan_coll_time(&g->dp, STRATA_COLL_ALLGATHER, z->bytes, NULL);
    double compute = s->work / per / 2; /* one pass of one layer, on average */
    z->calls = 2.0 * per * m;
    z->exposed = z->calls * hidden_under(z->one, compute, c->overlap_dp);
}

static void flops_and_rates(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                            const stages_t *s, int m, strata_plan_result_t *r)
{
    r->model_flops = plan_model_flops(&ctx->w, c->gbs);
    r->hw_flops = s->flops * m * c->dp * c->tp * c->cp;
    double denom = r->step * r->gpus;
    r->tflops_model = r->model_flops / denom / 1e12;
    r->tflops_hw = r->hw_flops / denom / 1e12;
    r->mfu = r->model_flops / (denom * ctx->a.bf16);
    r->tokens_per_s = (double)c->gbs * ctx->w.seq / r->step;
}

/* Adam: read fp32 master, m, v and the fp32 gradient, write master, m, v
 * and the 16-bit weight: 30 bytes per local parameter. */
static double optimizer_time(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c)
{
    double p = plan_stage_params(ctx, c, 0) / (c->zero >= 1 ? c->dp : 1);
    return p * 30 / (ctx->a.hbm_bw * ctx->a.hbm_eff);
}

/* Offloaded optimizer (offload.c): the CPU's Adam moves the same 30 bytes
 * per local parameter through the tier's memory; the gradients go down
 * and the updated 16-bit weights come back over the routed path. */
static strata_status_t offload_step(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                                    strata_plan_result_t *r, strata_error_t *err)
{
    if (c->offload != STRATA_PLAN_OFFLOAD_HOST && c->offload != STRATA_PLAN_OFFLOAD_CXL)
        return strata_error_set(err, STRATA_ERR_INVALID, "plan: offload %d unknown", c->offload);
    const struct plan_tier *pt = &ctx->tier[c->offload]; /* read once (ctx.c) */
    if (pt->st) return strata_error_set(err, pt->st, "%s", pt->why);
    double xbw = pt->xfer_bw, mbw = pt->mem_bw;
    double p = plan_stage_params(ctx, c, 0) / (c->zero >= 1 ? c->dp : 1);
    r->optimizer = p * 30 / mbw;
    r->offload = p * (ctx->w.grad_bytes + ctx->w.weight_bytes) / xbw;
    r->offload_xfer_bw = xbw, r->offload_mem_bw = mbw;
    return STRATA_OK;
}

static void fill_traffic(const strata_plan_config_t *c, const groups_t *g, const stages_t *s,
                         const layer_comm_t *kd, const dp_part_t *d, int m, double tx,
                         double pp_exp, const z3_t *z, strata_plan_result_t *r,
                         const strata_plan_ctx_t *ctx)
{
    double T = (double)c->mbs * ctx->w.seq / c->cp, act = T * ctx->w.hidden * plan_act_bytes(ctx);
    double tp_calls = s->tp_calls * m;
    if (c->sp) {
        traffic(r, "SP", "allgather", &g->tp, act, tp_calls / 2, kd->tp_one, s->tp * m / 2,
                kd->tp_algo);
        traffic(r, "SP", "reducescatter", &g->tp, act, tp_calls / 2, kd->tp_one, s->tp * m / 2,
                kd->tp_algo);
    } else {
        traffic(r, "TP", "allreduce", &g->tp, act, tp_calls, kd->tp_one, s->tp * m, kd->tp_algo);
    }
    traffic(r, "CP", "allgather", &g->cp, 0, s->cp_calls * m, kd->cp_one, s->cp * m, kd->cp_algo);
    if (r->ntraffic && !strcmp(r->traffic[r->ntraffic - 1].dim, "CP"))
        r->traffic[r->ntraffic - 1].bytes = 2 * T * ctx->w.hidden * ctx->w.kv_heads / ctx->w.heads /
                                            c->tp * plan_act_bytes(ctx) * c->cp;
    if (s->ep_calls > 0) {
        layer_comm_t km;
        plan_layer_time_t lt;
        plan_layer_time(ctx, c, true, &lt);
        layer_comm(ctx, c, &g->tp, &g->cp, &g->ep, &lt, true, &km);
        traffic(r, "EP", "alltoall", &g->ep,
                T * ctx->w.topk * ctx->w.hidden * plan_act_bytes(ctx) / c->tp, s->ep_calls * m,
                km.ep_one, s->ep * m, km.ep_algo);
    }
    double pp_bytes = act / (c->sp ? c->tp : 1);
    double pp_calls = 2.0 * m * c->vpp;
    traffic(r, "PP", "send/recv", &g->pp, pp_bytes, pp_calls, tx, pp_exp, STRATA_ALGO_PAIRWISE);
    double gb = ctx->w.grad_bytes * ctx->comm.dp_ratio;
    traffic(r, "DP", strata_coll_name(d->gcoll), &g->dp, d->gparams * gb, 1, d->grads_total,
            d->exposed_grads, d->ga);
    if (d->eparams > 0)
        traffic(r, "EDP", strata_coll_name(d->gcoll), &g->edp, d->eparams * gb, 1, d->egrads_total,
                d->exposed_egrads, d->ea);
    if (c->zero == 1 || c->zero == 2)
        traffic(r, "DP", "allgather", &g->dp, d->gparams * ctx->w.weight_bytes, 1, d->params_total,
                d->exposed_params, d->pa);
    if ((c->zero == 1 || c->zero == 2) && d->eparams > 0)
        traffic(r, "EDP", "allgather", &g->edp, d->eparams * ctx->w.weight_bytes, 1,
                d->eparams_total, d->exposed_eparams, d->epa);
    if (c->zero >= 3)
        traffic(r, "DP", "allgather", &g->dp, z->bytes, z->calls, z->one, z->exposed,
                STRATA_ALGO_RING);
}

/* Same pass times: every field but the ZeRO stage equal. */
static bool same_passes(const strata_plan_config_t *a, const strata_plan_config_t *b)
{
    return a->tp == b->tp && a->pp == b->pp && a->vpp == b->vpp && a->dp == b->dp &&
           a->ep == b->ep && a->cp == b->cp && a->mbs == b->mbs && a->gbs == b->gbs &&
           a->sp == b->sp && a->recompute == b->recompute && a->flash == b->flash &&
           a->fp8 == b->fp8 && a->overlap_dp == b->overlap_dp && a->overlap_tp == b->overlap_tp &&
           a->overlap_pp == b->overlap_pp && !memcmp(a->order, b->order, sizeof(a->order));
}

static void pipe_times(const strata_plan_config_t *c, const stages_t *s, int m, double tx,
                       plan_pipe_cache_t *cache, double *t0_p, double *t1_p)
{
    int k = c->recompute >= 0 && c->recompute < 3 ? (int)c->recompute : 0;
    if (cache && cache->valid[k] && same_passes(&cache->key[k], c)) {
        *t0_p = cache->t0[k], *t1_p = cache->t1[k];
        return;
    }
    *t0_p = pipe_time(c, s, m, 0, false);
    *t1_p = pipe_time(c, s, m, tx, !c->overlap_pp);
    if (cache)
        cache->valid[k] = true, cache->key[k] = *c, cache->t0[k] = *t0_p, cache->t1[k] = *t1_p;
}

strata_status_t plan_eval_core(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                               strata_plan_result_t *r, strata_error_t *err)
{
    return plan_eval_cached(ctx, c, NULL, r, err);
}

strata_status_t plan_eval_cached(const strata_plan_ctx_t *ctx, const strata_plan_config_t *c,
                                 plan_pipe_cache_t *cache, strata_plan_result_t *r,
                                 strata_error_t *err)
{
    strata_status_t st = check(ctx, c, err);
    if (st) return st;
    groups_t g;
    stages_t s = {0};
    if ((st = make_groups(ctx, c, &g, err)) || (st = build_stages(ctx, c, &g, &s, err))) {
        util_free(s.tf), util_free(s.tb);
        return st;
    }
    memset(r, 0, sizeof(*r));
    r->cfg = *c, r->gpus = ctx->gpus;
    int m = r->micro = c->gbs / (c->mbs * c->dp);
    double act = (double)c->mbs * ctx->w.seq / c->cp * ctx->w.hidden * plan_act_bytes(ctx);
    double tx = plan_coll_time(&g.pp, STRATA_COLL_SENDRECV, act / (c->sp ? c->tp : 1), NULL);
    double t0, t1;
    pipe_times(c, &s, m, tx, cache, &t0, &t1);
    dp_part_t d;
    data_parallel(ctx, c, &g, &s, &d);
    z3_t z;
    zero3(ctx, c, &g, &s, m, &z);
    r->compute = (s.gemm + s.mem) * m, r->compute_gemm = s.gemm * m, r->compute_mem = s.mem * m;
    r->bubble = t0 - s.work * m;
    r->exposed[D_TP] = s.tp * m, r->exposed[D_CP] = s.cp * m, r->exposed[D_EP] = s.ep * m;
    r->exposed[D_PP] = t1 - t0, r->exposed[D_DP] = d.exposed + z.exposed;
    r->optimizer = optimizer_time(ctx, c);
    if (c->offload && (st = offload_step(ctx, c, r, err))) {
        util_free(s.tf), util_free(s.tb);
        return st;
    }
    r->step = t1 + r->exposed[D_DP] + r->optimizer + r->offload;
    flops_and_rates(ctx, c, &s, m, r);
    plan_memory(ctx, c, m, r);
    fill_traffic(c, &g, &s, &s.kd, &d, m, tx, r->exposed[D_PP], &z, r, ctx);
    util_free(s.tf), util_free(s.tb);
    if (t0 < 0 || t1 < 0)
        return strata_error_set(err, STRATA_ERR_INTERNAL, "plan: pipeline schedule failed");
    return STRATA_OK;
}
