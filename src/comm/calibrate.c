/*
 * calibrate.c — the quick figures `strata bench` measures on this host, now,
 * when no file of `strata probe` is given (docs/runtime.md):
 *   α        one-way latency of a flag through the segment: rank 0 and 1
 *            ping-pong a counter in 20 batches of 100 round trips; α is the
 *            fastest batch's time / 200 (other load on the host only adds).
 *   copy_bw  one core's memcpy bandwidth on a buffer of the benchmark's
 *            largest size (capped at 64 MiB), best of 3 after a warm-up.
 *   red_bw   one core's two-input float sum at the same size (output bytes/s).
 * There is no model here: the prediction is sched's cost model
 * (strata_coll_cost, the direct schedule for the engine) on a machine made
 * of these figures (strata_probe_calib_quick, strata_probe_machine).
 */
#define _GNU_SOURCE
#include "comm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PINGS   100 /* round trips per batch */
#define BATCHES 20  /* the fastest batch counts: the host's other load only adds */

/* One batch of PINGS round trips between ranks 0 and 1; seconds one way. */
static double ping_batch(comm_call_t *k)
{
    strata_comm_t *c = k->c;
    _Atomic uint64_t *mine = &c->lines[c->rank].misc.ping,
                     *theirs = &c->lines[1 - c->rank].misc.ping;
    uint64_t base = c->pseq;
    c->pseq += PINGS;
    double t0 = util_now();
    for (uint64_t i = 1; i <= PINGS; i++) {
        if (c->rank == 0) atomic_store_explicit(mine, base + i, memory_order_release);
        if (c->rank == 0) comm_posted(c);
        if (comm_wait_ge(k, theirs, base + i, 1 - c->rank) != STRATA_OK) return 0;
        if (c->rank == 1) atomic_store_explicit(mine, base + i, memory_order_release);
        if (c->rank == 1) comm_posted(c);
    }
    return (util_now() - t0) / (2.0 * PINGS);
}

/* Ranks 0 and 1 on different hosts: the same round trips as one-byte
 * messages over TCP (send/recv), one way = half a round. */
static double ping_batch_tcp(comm_call_t *k)
{
    strata_comm_t *c = k->c;
    unsigned char b = 0;
    strata_call_opts_t o = {.timeout_s = k->timeout};
    double t0 = util_now();
    for (int i = 0; i < PINGS; i++) {
        strata_status_t st =
            c->rank == 0 ? strata_comm_send(c, &b, 1, 1, &o) : strata_comm_recv(c, &b, 1, 0, &o);
        if (st == STRATA_OK)
            st = c->rank == 0 ? strata_comm_recv(c, &b, 1, 1, &o)
                              : strata_comm_send(c, &b, 1, 0, &o);
        if (st != STRATA_OK) return 0;
    }
    return (util_now() - t0) / (2.0 * PINGS);
}

static double ping_pong(comm_call_t *k)
{
    if (k->c->size < 2 || k->c->rank > 1) return 0;
    if (k->c->remote && k->c->remote[1 - k->c->rank]) {
        double best = 0;
        for (int b = 0; b < BATCHES; b++) {
            double t = ping_batch_tcp(k);
            if (t > 0 && (best == 0 || t < best)) best = t;
        }
        return best;
    }
    double best = 0;
    for (int b = 0; b < BATCHES; b++) {
        double t = ping_batch(k);
        if (t > 0 && (best == 0 || t < best)) best = t;
    }
    return best;
}

static double best_bw(size_t bytes, unsigned char *a, unsigned char *b, bool reduce)
{
    double best = 0;
    for (int rep = 0; rep < 4; rep++) {
        double t0 = util_now();
        if (reduce)
            comm_reduce2(b, b, a, bytes / 4, STRATA_FP32, STRATA_SUM);
        else
            memcpy(b, a, bytes);
        double t = util_now() - t0;
        if (rep > 0 && t > 0 && bytes / t > best) best = (double)bytes / t;
    }
    return best;
}

strata_status_t strata_comm_calibrate(strata_comm_t *c, size_t bytes, strata_comm_model_t *m_p)
{
    if (!c || !m_p) return STRATA_ERR_INVALID;
    if (bytes > ((size_t)64 << 20)) bytes = (size_t)64 << 20;
    if (bytes < ((size_t)1 << 20)) bytes = (size_t)1 << 20;
    comm_call_t k = {.c = c, .what = "calibrate", .timeout = c->timeout};
    k.deadline = util_now() + c->timeout;
    double fig[3] = {0, 0, 0};
    strata_status_t st = strata_comm_barrier(c, NULL);
    if (st != STRATA_OK) return st;
    fig[0] = ping_pong(&k);
    unsigned char *a = util_malloc(bytes), *b = util_malloc(bytes);
    if (a && b) {
        memset(a, 1, bytes), memset(b, 0, bytes);
        fig[1] = best_bw(bytes, a, b, false);
        fig[2] = best_bw(bytes, a, b, true);
    }
    util_free(a);
    util_free(b);
    /* every rank adopts rank 0's figures */
    st = strata_comm_broadcast(c, fig, 3, STRATA_FP64, 0, NULL);
    if (st != STRATA_OK) return st;
    m_p->alpha_s = fig[0], m_p->copy_bw = fig[1], m_p->reduce_bw = fig[2];
    return STRATA_OK;
}
