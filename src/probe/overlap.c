/*
 * overlap.c — how much of a streamed store's time stays exposed beside a
 * read+reduce stream, on one core, with the engine's own kernels (docs/
 * probe.md, "The streamed output's overlap").
 *
 * The engine's pipelined allreduce at a streaming size reduces, block by
 * block (STRATA_DIRECT_BLOCK), its input (in memory) with a peer's staged
 * slot (in the caches) into a cache-resident sum, and copies each block
 * of the sum to its output with non-temporal stores (allreduce_shm.c,
 * reduce()); the stores drain from write-combining buffers while the next
 * block's loads proceed. Three kernels over the same bytes (probe_overlap_bytes: the LLC's
 * size, 32..128 MiB): A  the read+reduce alone: comm_reduce_n(sum, {input, slot}) a block at a
 * time, the input streaming from memory, slot and sum cycling through OVL_HOT bytes of cache; C  A
 * with each block's sum copied to an output of those bytes by comm_copy_nofence(..., stream =
 * true), one fence at the end; B  the streamed copies alone (the same sum blocks to the same
 * output). A sample is (t_A + t_B - t_C) / t_B from one pass of each, in turn: the fraction of the
 * streamed stores' own time that the read+reduce hides (0: in series; 1: hidden entirely; below 0:
 * beside the reads the stores cost more than alone, the memory bus turning between reads and
 * writes). Nothing the model predicts (an allreduce) is timed.
 */
#define _GNU_SOURCE
#include "probe.h"

#include "comm.h" /* the engine's reduction and copy kernels */

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#define OVL_MIN ((size_t)32 << 20)  /* the input and output: at least 32 MiB, */
#define OVL_MAX ((size_t)128 << 20) /* at most 128 (the probe's minute) */
#define OVL_HOT ((size_t)256 << 10) /* slot and sum: in L2, as a slice's blocks are */

typedef struct ovl {
    unsigned char *in, *slot, *sum, *out;
    size_t bytes;
} ovl_t;

size_t probe_overlap_bytes(size_t llc)
{
    /* the input read from memory, as at the sizes h prices (16-64 MiB on
     * this host's 32 MiB L3): as large as the LLC, within the bounds, whole
     * engine blocks */
    size_t b = llc < OVL_MIN ? OVL_MIN : llc > OVL_MAX ? OVL_MAX : llc;
    return (b + STRATA_DIRECT_BLOCK - 1) / STRATA_DIRECT_BLOCK * STRATA_DIRECT_BLOCK;
}

static void reduce_pass(const ovl_t *w, bool copy)
{
    size_t blk = STRATA_DIRECT_BLOCK;
    for (size_t o = 0; o < w->bytes; o += blk) {
        size_t h = o % OVL_HOT;
        const void *srcs[2] = {w->in + o, w->slot + h};
        comm_reduce_n(w->sum + h, srcs, 2, blk / sizeof(float), STRATA_FP32, STRATA_SUM, 2);
        if (copy) comm_copy_nofence(w->out + o, w->sum + h, blk, true);
    }
    if (copy) comm_stream_fence();
    __asm__ volatile("" : : "r"(w->sum), "r"(w->out) : "memory");
}

static void copy_pass(const ovl_t *w)
{
    size_t blk = STRATA_DIRECT_BLOCK;
    for (size_t o = 0; o < w->bytes; o += blk)
        comm_copy_nofence(w->out + o, w->sum + o % OVL_HOT, blk, true);
    comm_stream_fence();
    __asm__ volatile("" : : "r"(w->out) : "memory");
}

/* One sample: (t_A + t_B - t_C) / t_B. */
static double probe_overlap_sample(const ovl_t *w)
{
    double t0 = util_now();
    reduce_pass(w, false);
    double t1 = util_now();
    reduce_pass(w, true);
    double t2 = util_now();
    copy_pass(w);
    double t3 = util_now();
    double ta = t1 - t0, tc = t2 - t1, tb = t3 - t2;
    /* a pass of no time (the clock) is no reading: NAN, which
     * strata_probe_stat refuses */
    return tb > 0 ? (ta + tb - tc) / tb : NAN;
}

strata_status_t probe_overlap(probe_ctx_t *x, double budget, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    size_t bytes = probe_overlap_bytes(comm_llc_bytes());
    ovl_t w = {util_malloc(bytes), util_malloc(OVL_HOT), util_malloc(OVL_HOT), util_malloc(bytes),
               bytes};
    strata_status_t st = STRATA_OK;
    if (!w.in || !w.slot || !w.sum || !w.out) {
        st = strata_error_set(err, STRATA_ERR_NOMEM, "probe: overlap: out of memory");
        goto done;
    }
    /* touch every page (and fill the floats with small values) before timing */
    memset(w.in, 0, bytes), memset(w.out, 0, bytes);
    memset(w.slot, 0, OVL_HOT), memset(w.sum, 0, OVL_HOT);
    /* up to 3 (7) samples, while one more ends before the section's
     * deadline (probe_more: the allocation, first touch and warm-up above
     * and below come out of the same plan; one at the least) */
    int max = x->opts->quick ? 3 : 7, n = 0;
    double h[PROBE_MAX_REPS];
    /* on one core: the thread pinned for the passes (the three of a sample
     * on one cpu), its own affinity given back after, so that the threads
     * later sections start inherit the process's */
    cpu_set_t was;
    bool pinned = pthread_getaffinity_np(pthread_self(), sizeof(was), &was) == 0 &&
                  probe_pin(res->cpus[0]) == 0;
    probe_overlap_sample(&w); /* warm-up */
    double t0 = util_now(), share = probe_share(t0, x->deadline, 1), last = 0;
    while (probe_more(n, max, util_now() - t0, last, share)) {
        double ts = util_now();
        h[n++] = probe_overlap_sample(&w);
        last = util_now() - ts;
        probe_tick(x, budget, (double)n / max);
    }
    if (pinned) pthread_setaffinity_np(pthread_self(), sizeof(was), &was);
    st = strata_probe_stat(h, (size_t)n, &res->nt_overlap, err);
    if (st == STRATA_OK && n < max)
        strata_log(STRATA_LOG_INFO, "probe: store overlap: %d of %d samples in its %.2f s", n, max,
                   budget);
done:
    util_free(w.in), util_free(w.slot), util_free(w.sum), util_free(w.out);
    return st;
}
