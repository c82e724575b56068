/*
 * pipeline.c — the pipeline schedule as an event simulation, so the bubble
 * comes from the schedule rather than a formula.
 *
 * Each of p stages runs its list of forward and backward passes in
 * Megatron's order (megatron/core/pipeline_parallel/schedules.py): v model
 * chunks per stage (v = 1 is 1F1B), micro-batches taken in groups of p per
 * chunk; warm-up forwards (p - r - 1 for 1F1B; 2(p - r - 1) + (v - 1) p
 * interleaved, capped at m v), then one forward and one backward in turn,
 * then the remaining backwards. A pass starts when its stage is free and
 * its input has arrived: the forward of virtual stage k needs the forward
 * of k - 1 (on the previous stage, or from the last stage to the first
 * for the next chunk), the backward of k needs the backward of k + 1 (and
 * the last virtual stage its own forward), each plus the transfer time.
 * With blocking transfers the sender's stage is also busy for the send.
 *
 * Workload: O(p m v) passes, each visited a bounded number of times.
 */
#include "plan.h"

#include <math.h>
#include <stdlib.h>

typedef struct pass {
    int mb, chunk;
    bool bwd;
} pass_t;

/* Megatron's chunk of the k-th forward (backward) pass of a stage. */
static int chunk_of(int k, int p, int v, bool bwd)
{
    int c = (k / p) % v;
    return bwd ? v - 1 - c : c;
}

static int mb_of(int k, int p, int v)
{
    return (k / (p * v)) * p + k % p;
}

/* The order of passes on stage r (n = 2 m v entries). */
static void stage_order(int p, int v, int m, int r, pass_t *out)
{
    int total = m * v, warm;
    if (v == 1)
        warm = p - r - 1;
    else
        warm = 2 * (p - r - 1) + (v - 1) * p;
    if (warm > total) warm = total;
    int kf = 0, kb = 0, n = 0;
    for (; kf < warm; kf++)
        out[n++] = (pass_t){mb_of(kf, p, v), chunk_of(kf, p, v, false), false};
    while (kf < total) {
        out[n++] = (pass_t){mb_of(kf, p, v), chunk_of(kf, p, v, false), false}, kf++;
        out[n++] = (pass_t){mb_of(kb, p, v), chunk_of(kb, p, v, true), true}, kb++;
    }
    for (; kb < total; kb++)
        out[n++] = (pass_t){mb_of(kb, p, v), chunk_of(kb, p, v, true), true};
}

typedef struct sim {
    int p, v, m;
    double *fend, *bend; /* finish time per (virtual stage, micro-batch); NAN = not yet */
} sim_t;

/* When the input of pass x on stage r is ready; NAN when not yet known. */
static double ready_at(const sim_t *s, int r, pass_t x, double tx)
{
    int p = s->p, vs = x.chunk * p + r, nv = p * s->v;
    if (!x.bwd) {
        if (vs == 0) return 0;
        double t = s->fend[(size_t)(vs - 1) * s->m + x.mb];
        return isnan(t) ? NAN : t + tx;
    }
    if (vs == nv - 1) return s->fend[(size_t)vs * s->m + x.mb];
    double t = s->bend[(size_t)(vs + 1) * s->m + x.mb];
    return isnan(t) ? NAN : t + tx;
}

double plan_pipeline(int p, int v, int m, const double *tf, const double *tb, double tx,
                     bool blocking)
{
    if (p < 1 || v < 1 || m < 1 || (v > 1 && m % p)) return -1;
    size_t nv = (size_t)p * v, npass = 2 * (size_t)m * v;
    sim_t s = {p, v, m, util_malloc(nv * m * sizeof(double)), util_malloc(nv * m * sizeof(double))};
    pass_t *order = util_malloc((size_t)p * npass * sizeof(pass_t));
    size_t *next = util_calloc((size_t)p, sizeof(size_t));
    double *free_at = util_calloc((size_t)p, sizeof(double)), end = -1;
    if (!s.fend || !s.bend || !order || !next || !free_at) goto out;
    for (size_t i = 0; i < nv * m; i++)
        s.fend[i] = s.bend[i] = NAN;
    for (int r = 0; r < p; r++)
        stage_order(p, v, m, r, order + (size_t)r * npass);
    size_t done = 0;
    while (done < (size_t)p * npass) {
        size_t progress = 0;
        for (int r = 0; r < p; r++) {
            while (next[r] < npass) {
                pass_t x = order[(size_t)r * npass + next[r]];
                double in = ready_at(&s, r, x, tx);
                if (isnan(in)) break;
                size_t vs = (size_t)x.chunk * p + r;
                double start = in > free_at[r] ? in : free_at[r];
                double dur = (x.bwd ? tb : tf)[vs];
                bool sends = x.bwd ? vs > 0 : vs + 1 < nv;
                free_at[r] = start + dur + (blocking && sends ? tx : 0);
                (x.bwd ? s.bend : s.fend)[vs * m + x.mb] = start + dur;
                next[r]++, progress++;
            }
        }
        if (progress == 0) goto out; /* deadlock: the order is wrong */
        done += progress;
    }
    end = 0;
    for (int r = 0; r < p; r++)
        if (free_at[r] > end) end = free_at[r];
out:
    util_free(s.fend), util_free(s.bend), util_free(order), util_free(next), util_free(free_at);
    return end;
}

double strata_plan_pipeline_time(int p, int v, int m, double tf, double tb, double tx)
{
    if (p < 1 || v < 1 || p > 4096 || v > 256) return -1;
    size_t nv = (size_t)p * v;
    double *f = util_malloc(nv * sizeof(double)), *b = util_malloc(nv * sizeof(double)), t = -1;
    if (f && b) {
        for (size_t i = 0; i < nv; i++)
            f[i] = tf, b[i] = tb;
        t = plan_pipeline(p, v, m, f, b, tx, false);
    }
    util_free(f), util_free(b);
    return t;
}
