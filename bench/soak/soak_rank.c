/*
 * soak_rank.c — one rank of the fault soak (bench/soak/soak.sh): runs one
 * path of the runtime in a loop until a call fails, then reports.
 *
 * SOAK_PATH selects the path: `engine` (256 KiB float allreduce, the
 * memory-semantic pipeline), `small` (16 B allreduce, 8 B broadcast and
 * barrier in turn: the line slots), `exec` (64 KiB allreduce on the ring
 * and recursive-doubling schedules in turn: the schedule executor) or `p2p`
 * (100 KiB send/recv around a ring, even ranks sending first). Every call
 * has SOAK_DEADLINE seconds (default 1). Results are checked exactly
 * (small integers), so a wrong result is reported, not only a hang.
 *
 * Output (stdout, one line each): `ready RANK PID JOBHASH` once joined, and
 * when the loop ends `done RANK STATUS ELAPSED CALLS WRONG (name) msg` —
 * STATUS the numeric strata_status_t, ELAPSED the duration of the failing
 * call, WRONG the count of wrong results seen. SIGTERM is ignored so a survivor reports
 * even after the launcher's SIGTERM.
 */
#define _GNU_SOURCE
#include "comm.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { BIG = 64 * 1024, P2P_BYTES = 100 * 1024 };

static int g_rank, g_size;
static float g_a[BIG], g_b[BIG];
static long g_wrong;

/* Every rank contributes rank + 1 + i % 5 at element i: the sum over ranks
 * is P(P+1)/2 + P (i % 5), exact in fp32. */
static strata_status_t allreduce_checked(strata_comm_t *c, size_t n, const strata_call_opts_t *o)
{
    for (size_t i = 0; i < n; i++)
        g_a[i] = (float)(g_rank + 1 + (int)(i % 5));
    strata_status_t st = strata_comm_allreduce(c, g_a, g_b, n, STRATA_FP32, STRATA_SUM, o);
    for (size_t i = 0; st == STRATA_OK && i < n; i++)
        g_wrong += g_b[i] != (float)(g_size * (g_size + 1) / 2 + g_size * (int)(i % 5));
    return st;
}

static strata_status_t small_call(strata_comm_t *c, long it, const strata_call_opts_t *o)
{
    if (it % 3 == 0) return allreduce_checked(c, 4, o);
    if (it % 3 == 1) return strata_comm_barrier(c, o);
    long v = g_rank == 0 ? it : -1; /* broadcast from rank 0 */
    strata_status_t st = strata_comm_broadcast(c, &v, 1, STRATA_INT64, 0, o);
    g_wrong += st == STRATA_OK && v != it;
    return st;
}

static strata_status_t p2p_call(strata_comm_t *c, long it, const strata_call_opts_t *o)
{
    static unsigned char out[P2P_BYTES], in[P2P_BYTES];
    int to = (g_rank + 1) % g_size, from = (g_rank + g_size - 1) % g_size;
    memset(out, (int)((it + g_rank) & 0xff), sizeof out);
    strata_status_t st;
    if (g_rank % 2 == 0) {
        st = strata_comm_send(c, out, sizeof out, to, o);
        if (st == STRATA_OK) st = strata_comm_recv(c, in, sizeof in, from, o);
    } else {
        st = strata_comm_recv(c, in, sizeof in, from, o);
        if (st == STRATA_OK) st = strata_comm_send(c, out, sizeof out, to, o);
    }
    g_wrong += st == STRATA_OK && in[P2P_BYTES - 1] != (unsigned char)((it + from) & 0xff);
    return st;
}

static strata_status_t one_call(strata_comm_t *c, const char *path, long it, double deadline)
{
    strata_call_opts_t o = {.timeout_s = deadline};
    if (!strcmp(path, "engine")) return allreduce_checked(c, BIG, &o);
    if (!strcmp(path, "small")) return small_call(c, it, &o);
    if (!strcmp(path, "p2p")) return p2p_call(c, it, &o);
    o.algo = it % 2 ? STRATA_COMM_RECDBL : STRATA_COMM_RING;
    return allreduce_checked(c, BIG / 4, &o);
}

int main(void)
{
    signal(SIGTERM, SIG_IGN);
    const char *path = getenv("SOAK_PATH") ? getenv("SOAK_PATH") : "engine";
    double deadline = getenv("SOAK_DEADLINE") ? atof(getenv("SOAK_DEADLINE")) : 1.0;
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    if (strata_comm_init_env(&c, &err) != STRATA_OK) {
        printf("init-failed %s\n", err.msg);
        return 2;
    }
    g_rank = strata_comm_rank(c), g_size = strata_comm_size(c);
    printf("ready %d %ld %s\n", g_rank, (long)getpid(), c->jobhash);
    fflush(stdout);
    strata_status_t st = STRATA_OK;
    double t0 = util_now();
    long it;
    for (it = 0; st == STRATA_OK && g_wrong == 0 && it < 100000000; it++) {
        t0 = util_now();
        st = one_call(c, path, it, deadline);
    }
    printf("done %d %d %.3f %ld %ld (%s) %s\n", g_rank, (int)st, util_now() - t0, it, g_wrong,
           strata_status_str(st), strata_comm_errmsg(c));
    fflush(stdout);
    strata_comm_destroy(c);
    return st == STRATA_OK ? 0 : 3;
}
