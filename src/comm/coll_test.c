/*
 * coll_test.c — every collective × op × data type × rank count × count,
 * out of place and in place, on real forked ranks, exact against a
 * reference computed independently in the test.
 *
 * Usage: coll_test P... (rank counts to run; CTest runs 2; 1 2; 3; 4; 5; 8).
 * Each P is one cmocka test that launches P ranks (strata_launch_fn); each
 * rank loops over count ∈ {0, 1, 7, 1023, 1M+3} × data type × operator and
 * runs allreduce, reduce, reduce-scatter, allgather, alltoall and broadcast,
 * and send/recv around the ring (run_p2p),
 * each collective with the memory-semantic engine (shm) and with the collective
 * layer's ring and recursive-doubling schedules where it implements them,
 * in and out of place (the schedules at 1 M + 3 only for fp32, bf16 and
 * int32, to keep each test within a few minutes on 2 loaded cores), and counts mismatches; the
 * rank's exit code is non-zero on any mismatch or error, which fails the test. Reduce-scatter,
 * allgather and alltoall use blocks of ceil(count / P) elements per rank so their buffers stay near
 * `count` elements.
 *
 * Exactness: inputs are small integers (|v| <= 5, products of at most 8
 * factors in {1, 2, -1}), so every sum, product, minimum and maximum is
 * exact in every type and in any association order (fp16 and bf16 hold
 * integers up to 256 exactly); AVG is that exact sum divided once by P in
 * the element type (fp32 for halves). Hence the tolerance is zero for every
 * type and algorithm, although ring and recursive doubling associate the
 * reduction differently from the engine's rank order. Integer overflow
 * (int8 products) wraps identically in reference and library (two's
 * complement arithmetic done unsigned).
 */
#define _GNU_SOURCE
#include "test.h"

#include "comm.h"

#include <unistd.h>

static const size_t counts[] = {0, 1, 7, 1023, (1u << 20) + 3};
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))

/* ==== Typed access: strata_dtype_get/set ==== */
#define put strata_dtype_set
#define get strata_dtype_get

static bool is_float(strata_dtype_t dt)
{
    return dt == STRATA_FP16 || dt == STRATA_BF16 || dt == STRATA_FP32 || dt == STRATA_FP64;
}

static bool is_unsigned(strata_dtype_t dt)
{
    return dt == STRATA_UINT8 || dt == STRATA_UINT32 || dt == STRATA_UINT64;
}

/* Input of rank r at element i for operator op. */
static double gen(strata_dtype_t dt, strata_op_t op, int r, size_t i)
{
    if (op == STRATA_PROD) {
        double v = (i + (size_t)r) % 3 == 0 ? 2 : 1;
        return !is_unsigned(dt) && (i + 2 * (size_t)r) % 5 == 0 ? -v : v;
    }
    double v = (double)((i * 7 + (size_t)r * 3) % 11);
    return is_unsigned(dt) ? v : v - 5;
}

/* The reference reduction of element i over P ranks, stored into ref[i]. */
static void ref_elem(strata_dtype_t dt, strata_op_t op, int P, void *ref, size_t i)
{
    double acc = gen(dt, op, 0, i);
    uint64_t wrap = (uint64_t)(int64_t)acc;
    for (int q = 1; q < P; q++) {
        double v = gen(dt, op, q, i);
        if (op == STRATA_PROD)
            acc *= v, wrap *= (uint64_t)(int64_t)v;
        else if (op == STRATA_MIN)
            acc = v < acc ? v : acc;
        else if (op == STRATA_MAX)
            acc = v > acc ? v : acc;
        else
            acc += v, wrap += (uint64_t)(int64_t)v;
    }
    if (!is_float(dt) && (op == STRATA_PROD || op == STRATA_SUM || op == STRATA_AVG)) {
        /* wrap into the type first, then (AVG) divide there: C truncation */
        put(dt, ref, i, (double)(int64_t)wrap);
        if (dt == STRATA_INT64 || dt == STRATA_UINT64) {
            if (op == STRATA_AVG) {
                if (dt == STRATA_INT64)
                    ((int64_t *)ref)[i] = (int64_t)wrap / P;
                else
                    ((uint64_t *)ref)[i] = wrap / (uint64_t)P;
            } else {
                memcpy((char *)ref + i * 8, &wrap, 8);
            }
            return;
        }
        if (op == STRATA_AVG) put(dt, ref, i, trunc(get(dt, ref, i) / P));
        return;
    }
    if (op == STRATA_AVG) {
        if (dt == STRATA_FP64)
            acc = acc / P;
        else
            acc = (double)((float)acc / (float)P);
    }
    put(dt, ref, i, acc);
}

/* ==== One rank ==== */

typedef struct rank_ctx {
    strata_comm_t *c;
    int rank, P;
    long errors, calls, skipped;
    unsigned char *in, *out, *ref;
} rank_ctx_t;

static bool check(rank_ctx_t *x, const char *what, strata_dtype_t dt, strata_op_t op, size_t n,
                  const void *got, const void *want, size_t want_off, strata_status_t st)
{
    x->calls++;
    if (st != STRATA_OK) {
        fprintf(stderr, "rank %d: %s %s %s n=%zu: status %d: %s\n", x->rank, what,
                strata_dtype_name(dt), strata_op_name(op), n, st, strata_comm_errmsg(x->c));
        x->errors++;
        return false;
    }
    for (size_t i = 0; i < n; i++)
        if (get(dt, got, i) != get(dt, want, want_off + i)) {
            fprintf(stderr, "rank %d: %s %s %s n=%zu: element %zu is %g, expected %g\n", x->rank,
                    what, strata_dtype_name(dt), strata_op_name(op), n, i, get(dt, got, i),
                    get(dt, want, want_off + i));
            x->errors++;
            return false;
        }
    return true;
}

/* The message-passing algorithms run every case up to 1023 elements; at
 * 1 M + 3 only for fp32, bf16 and int32 (every operator), to keep each
 * test within a few minutes on 2 loaded cores. */
static size_t g_count;
static strata_dtype_t g_dt;

static bool g_quick; /* COLL_TEST_QUICK: 1 M + 3 only for fp32 and int32, on every path */

static bool sched_has(int P, strata_coll_t coll, strata_comm_algo_t a)
{
    if (g_quick && g_count > 1023 && g_dt != STRATA_FP32 && g_dt != STRATA_INT32) return false;
    if (a == STRATA_COMM_SHM) return true;
    if (g_count > 1023 && g_dt != STRATA_FP32 && g_dt != STRATA_BF16 && g_dt != STRATA_INT32)
        return false;
    strata_sched_params_t p = {.coll = coll,
                               .algo =
                                   a == STRATA_COMM_RING ? STRATA_ALGO_RING : STRATA_ALGO_RECDBL,
                               .nranks = (uint32_t)P,
                               .count = 64,
                               .elem_size = 4};
    return strata_sched_check(&p, NULL) == STRATA_OK;
}

static void fill(rank_ctx_t *x, strata_dtype_t dt, strata_op_t op, void *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put(dt, b, i, gen(dt, op, x->rank, i));
}

static void run_reductions(rank_ctx_t *x, size_t count, strata_dtype_t dt, strata_op_t op)
{
    size_t es = strata_dtype_size(dt), blk = (count + (size_t)x->P - 1) / (size_t)x->P;
    size_t N = blk * (size_t)x->P > count ? blk * (size_t)x->P : count;
    for (size_t i = 0; i < N; i++)
        ref_elem(dt, op, x->P, x->ref, i);
    for (strata_comm_algo_t a = STRATA_COMM_SHM; a <= STRATA_COMM_RECDBL; a++) {
        if (!sched_has(x->P, STRATA_COLL_ALLREDUCE, a)) {
            x->skipped++;
            continue;
        }
        strata_call_opts_t o = {.algo = a};
        char what[64];
        snprintf(what, sizeof(what), "allreduce/%s", strata_comm_algo_name(a));
        fill(x, dt, op, x->in, count);
        memset(x->out, 0xee, count * es);
        check(x, what, dt, op, count, x->out, x->ref, 0,
              strata_comm_allreduce(x->c, x->in, x->out, count, dt, op, &o));
        fill(x, dt, op, x->out, count);
        snprintf(what, sizeof(what), "allreduce/%s in place", strata_comm_algo_name(a));
        check(x, what, dt, op, count, x->out, x->ref, 0,
              strata_comm_allreduce(x->c, STRATA_IN_PLACE, x->out, count, dt, op, &o));
    }
    int root = (int)((count + (size_t)op) % (size_t)x->P);
    for (strata_comm_algo_t a = STRATA_COMM_SHM; a <= STRATA_COMM_RECDBL; a++) {
        strata_call_opts_t o = {.algo = a};
        char what[64];
        if (sched_has(x->P, STRATA_COLL_REDUCE, a)) {
            snprintf(what, sizeof(what), "reduce/%s", strata_comm_algo_name(a));
            fill(x, dt, op, x->in, count);
            memset(x->out, 0xee, count * es);
            strata_status_t st = strata_comm_reduce(x->c, x->in, x->out, count, dt, op, root, &o);
            check(x, what, dt, op, x->rank == root ? count : 0, x->out, x->ref, 0, st);
        } else
            x->skipped++;
        if (!sched_has(x->P, STRATA_COLL_REDUCE_SCATTER, a)) {
            x->skipped++;
            continue;
        }
        snprintf(what, sizeof(what), "reduce_scatter/%s", strata_comm_algo_name(a));
        fill(x, dt, op, x->in, blk * (size_t)x->P);
        check(x, what, dt, op, blk, x->out, x->ref, (size_t)x->rank * blk,
              strata_comm_reduce_scatter(x->c, x->in, x->out, blk, dt, op, &o));
        fill(x, dt, op, x->out, blk * (size_t)x->P);
        snprintf(what, sizeof(what), "reduce_scatter/%s in place", strata_comm_algo_name(a));
        check(x, what, dt, op, blk, x->out, x->ref, (size_t)x->rank * blk,
              strata_comm_reduce_scatter(x->c, STRATA_IN_PLACE, x->out, blk, dt, op, &o));
    }
}

/* Value of element j of the block rank `from` sends to rank `to`. */
static double a2a_val(int from, int to, size_t j)
{
    return (double)(((size_t)from * 31 + (size_t)to * 7 + j) % 101) - 50;
}

static void run_moves_algo(rank_ctx_t *x, size_t count, strata_dtype_t dt, strata_comm_algo_t a)
{
    size_t P = (size_t)x->P, r = (size_t)x->rank, blk = (count + P - 1) / P,
           es = strata_dtype_size(dt);
    strata_call_opts_t o = {.algo = a};
    char what[64];
    if (sched_has(x->P, STRATA_COLL_ALLGATHER, a)) {
        for (size_t q = 0; q < P; q++)
            for (size_t j = 0; j < blk; j++)
                put(dt, x->ref, q * blk + j, a2a_val((int)q, 0, j));
        for (int inpl = 0; inpl < 2; inpl++) {
            memset(x->out, 0xee, P * blk * es);
            unsigned char *mine = inpl ? x->out + r * blk * es : x->in;
            for (size_t j = 0; j < blk; j++)
                put(dt, mine, j, a2a_val((int)r, 0, j));
            snprintf(what, sizeof(what), "allgather/%s%s", strata_comm_algo_name(a),
                     inpl ? " in place" : "");
            check(x, what, dt, STRATA_SUM, P * blk, x->out, x->ref, 0,
                  strata_comm_allgather(x->c, inpl ? STRATA_IN_PLACE : x->in, x->out, blk, dt, &o));
        }
    } else
        x->skipped++;
    if (sched_has(x->P, STRATA_COLL_ALLTOALL, a)) {
        for (size_t q = 0; q < P; q++)
            for (size_t j = 0; j < blk; j++) {
                put(dt, x->ref, q * blk + j, a2a_val((int)q, (int)r, j));
                put(dt, x->in, q * blk + j, a2a_val((int)r, (int)q, j));
            }
        memset(x->out, 0xee, P * blk * es);
        snprintf(what, sizeof(what), "alltoall/%s", strata_comm_algo_name(a));
        check(x, what, dt, STRATA_SUM, P * blk, x->out, x->ref, 0,
              strata_comm_alltoall(x->c, x->in, x->out, blk, dt, &o));
        memcpy(x->out, x->in, P * blk * es);
        snprintf(what, sizeof(what), "alltoall/%s in place", strata_comm_algo_name(a));
        check(x, what, dt, STRATA_SUM, P * blk, x->out, x->ref, 0,
              strata_comm_alltoall(x->c, STRATA_IN_PLACE, x->out, blk, dt, &o));
    } else
        x->skipped++;
    if (sched_has(x->P, STRATA_COLL_BROADCAST, a)) {
        int root = (int)(count % P);
        for (size_t i = 0; i < count; i++)
            put(dt, x->ref, i, (double)((i * 13 + (size_t)root) % 97) - 48);
        if (x->rank == root)
            memcpy(x->out, x->ref, count * es);
        else
            memset(x->out, 0xee, count * es);
        snprintf(what, sizeof(what), "broadcast/%s", strata_comm_algo_name(a));
        check(x, what, dt, STRATA_SUM, count, x->out, x->ref, 0,
              strata_comm_broadcast(x->c, x->out, count, dt, root, &o));
    } else
        x->skipped++;
}

/* Send/recv around the ring, one hop at a time (rank 0 sends first, every
 * other rank receives from its left and then sends to its right, so no two
 * ranks wait on each other): each rank gets its left neighbour's count
 * elements, a2a_val(left, r, j), exactly. Across pretend or real hosts the
 * hops between hosts go over TCP and the others over shared memory. At
 * 1 M + 3 only fp32 and int32 (the bytes, not the type, are what moves). */
static void run_p2p(rank_ctx_t *x, size_t count, strata_dtype_t dt)
{
    int P = x->P, r = x->rank, left = (r + P - 1) % P, right = (r + 1) % P;
    size_t es = strata_dtype_size(dt);
    if (P < 2 || (count > 1023 && dt != STRATA_FP32 && dt != STRATA_INT32)) {
        x->skipped++;
        return;
    }
    for (size_t j = 0; j < count; j++) {
        put(dt, x->in, j, a2a_val(r, right, j));
        put(dt, x->ref, j, a2a_val(left, r, j));
    }
    memset(x->out, 0xee, count * es);
    strata_status_t st = STRATA_OK;
    if (r == 0) st = strata_comm_send(x->c, x->in, count * es, right, NULL);
    if (st == STRATA_OK) st = strata_comm_recv(x->c, x->out, count * es, left, NULL);
    if (st == STRATA_OK && r != 0) st = strata_comm_send(x->c, x->in, count * es, right, NULL);
    check(x, "send/recv", dt, STRATA_SUM, count, x->out, x->ref, 0, st);
}

static void run_moves(rank_ctx_t *x, size_t count, strata_dtype_t dt)
{
    for (strata_comm_algo_t a = STRATA_COMM_SHM; a <= STRATA_COMM_RECDBL; a++)
        run_moves_algo(x, count, dt, a);
    run_p2p(x, count, dt);
}

/* Hosts of g > 1 ranks (COLL_TEST_HOSTS): which schedule auto runs, as
 * sched's cost model on comm.c's host machine (1 µs / 5 GB/s inside a host,
 * 50 µs / 125 MB/s between) decides. At 4 MiB every collective is
 * bandwidth-bound and the two-level schedule sends each byte over the host
 * link once per stage where the flat one repeats it (hier); at 8 B an
 * allreduce is one latency per round: recursive doubling's log2 P rounds
 * (one across hosts) beat hier's 2(N-1) across. Barrier on 2 x 2: hier's
 * g-1 = 1 round inside and N-1 = 1 across against recursive doubling's
 * one inside and one across: a tie, which hier wins; then one barrier on
 * it (a schedule of zero-element messages). */
static int check_choices(rank_ctx_t *x)
{
    static const strata_coll_t colls[] = {STRATA_COLL_ALLREDUCE, STRATA_COLL_REDUCE_SCATTER,
                                          STRATA_COLL_ALLGATHER, STRATA_COLL_BROADCAST,
                                          STRATA_COLL_REDUCE,    STRATA_COLL_ALLTOALL};
    comm_call_t k = {.c = x->c, .algo = STRATA_COMM_AUTO};
    int bad = 0;
    /* Alltoall on 2 hosts x 2 ranks (P = 4, a power of two): pairwise pairs
     * ranks by XOR (pairwise.c), one step inside a host and two across,
     * each across step with both ranks of a host on its one link (hosts_machine:
     * 1 us, 5 GB/s inside; 50 us, 125 MB/s between): 1 us + 1 MiB / 5 GB/s
     * + 2 (50 us + 1 MiB / 62.5 MB/s) = 33.865 ms, against the two-level
     * schedule's 34.025 ms (its inside stage moves 2 MiB, its one across
     * step 2 MiB per rank): the flat schedule. */
    bool flat_a2a = x->P == 4 && x->c->host_group == 2;
    for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++) {
        strata_algo_t a = comm_exec_algo(&k, colls[i], 4u << 20);
        if (colls[i] == STRATA_COLL_ALLTOALL && flat_a2a) {
            if (a != STRATA_ALGO_PAIRWISE) {
                fprintf(stderr, "alltoall at 4 MiB on 2 x 2: not pairwise\n");
                bad++;
            }
            continue;
        }
        if (a != STRATA_ALGO_HIER || k.group != (uint32_t)x->c->host_group || k.chunks < 1) {
            fprintf(stderr, "%s at 4 MiB: not the two-level schedule\n",
                    strata_coll_name(colls[i]));
            bad++;
        }
    }
    if (comm_exec_algo(&k, STRATA_COLL_ALLREDUCE, 8) != STRATA_ALGO_RECDBL) {
        fprintf(stderr, "allreduce at 8 B: not recursive doubling\n");
        bad++;
    }
    if (x->P == 4 && comm_exec_algo(&k, STRATA_COLL_BARRIER, 0) != STRATA_ALGO_HIER) {
        fprintf(stderr, "barrier on 2 x 2: not the two-level schedule\n");
        bad++;
    }
    strata_status_t st = strata_comm_barrier(x->c, NULL);
    if (st != STRATA_OK) fprintf(stderr, "barrier: %s\n", strata_comm_errmsg(x->c)), bad++;
    return bad;
}

/* The choice across hosts on given figures (strata_comm_set_hosts_machine),
 * on a duplicate so the other checks keep the defaults. 2 hosts x 2 ranks,
 * a message inside a host li = 1 us at Bi = 2 GB/s, between hosts
 * le = 20 us at Bn = 2 GB/s, one NIC a host. Allgather of n bytes in all
 * (the flat schedule above 64 KiB is the ring):
 *   hier: one step inside moving N·n/P = n/2 (li + n/2 / Bi), one across
 *         moving n/P = n/4 with both ranks sharing the NIC (le + n/4 / (Bn/2)):
 *         21 us + n / 2e9 s;
 *   ring: P-1 = 3 steps; each sends n/P per step through the NIC (le +
 *         n/4 / Bn) while the local block takes li + n/8 / Bi, less:
 *         60 us + 3n / 8e9 s.
 * Equal at n / 8e9 = 39 us: n* = 312,000 B; hier below, ring above. Both
 * then run on the duplicate, checked exactly. The defaults are labelled. */
static int check_given_figures(rank_ctx_t *x)
{
    int bad = 0;
    const char *src = strata_comm_hosts_machine(x->c, NULL);
    if (strncmp(src, "assumed defaults", 16) != 0)
        fprintf(stderr, "default figures labelled '%s'\n", src), bad++;
    strata_comm_t *d = NULL;
    strata_error_t err = {0};
    if (strata_comm_dup(x->c, &d, &err) != STRATA_OK) {
        fprintf(stderr, "rank %d: dup: %s\n", x->rank, err.msg);
        return bad + 1;
    }
    strata_coll_machine_t m = {.nranks = 4, .per_server = 3, .servers = 2, .nics = 1};
    if (strata_comm_set_hosts_machine(d, &m, "wrong shape") != STRATA_ERR_INVALID)
        fprintf(stderr, "a 2 x 3 machine taken for 2 x 2 hosts\n"), bad++;
    m = (strata_coll_machine_t){.nics = 1, /* nranks 0: the communicator's shape */
                                .bw_intra = 2e9,
                                .lat_intra = 1e-6,
                                .bw_nic = 2e9,
                                .lat_inter = 20e-6,
                                .eta_intra = 1};
    if (strata_comm_set_hosts_machine(d, &m, "test figures") != STRATA_OK ||
        strcmp(strata_comm_hosts_machine(d, NULL), "test figures") != 0) {
        fprintf(stderr, "rank %d: set_hosts_machine: %s\n", x->rank, strata_comm_errmsg(d));
        strata_comm_destroy(d);
        return bad + 1;
    }
    static const struct {
        size_t n;
        strata_algo_t want;
    } cases[] = {{300000, STRATA_ALGO_HIER},
                 {311984, STRATA_ALGO_HIER},
                 {312016, STRATA_ALGO_RING},
                 {324000, STRATA_ALGO_RING}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        strata_algo_t a =
            strata_comm_schedule_for(d, STRATA_COLL_ALLGATHER, cases[i].n, STRATA_COMM_AUTO);
        if (a != cases[i].want) {
            fprintf(stderr, "allgather of %zu B on the given figures: %s, want %s\n", cases[i].n,
                    strata_algo_name(a), strata_algo_name(cases[i].want));
            bad++;
        }
        size_t cnt = cases[i].n / 4 / sizeof(int32_t);
        int32_t *in = malloc(cnt * sizeof *in), *out = malloc(4 * cnt * sizeof *out);
        for (size_t j = 0; in && j < cnt; j++)
            in[j] = (int32_t)(x->rank * 1000003 + (int)j);
        if (!in || !out ||
            strata_comm_allgather(d, in, out, cnt, STRATA_INT32, NULL) != STRATA_OK) {
            fprintf(stderr, "rank %d: allgather: %s\n", x->rank, strata_comm_errmsg(d));
            bad++;
        }
        for (size_t j = 0; !bad && j < 4 * cnt; j++)
            if (out[j] != (int32_t)((int)(j / cnt) * 1000003 + (int)(j % cnt)))
                fprintf(stderr, "rank %d: allgather [%zu] = %d\n", x->rank, j, out[j]), bad++;
        free(in), free(out);
    }
    strata_comm_destroy(d);
    return bad;
}

/* A duplicate of a communicator that spans hosts (its own segments and TCP
 * streams): an allreduce of (r+1)·(i+1) over P ranks gives P(P+1)/2·(i+1)
 * on it, small (4 elements) and large (1 M + 3: frames on every stream),
 * with a parent call in between; the parent goes on afterwards. */
static int check_dup(rank_ctx_t *x)
{
    strata_comm_t *d = NULL;
    strata_error_t err = {0};
    if (strata_comm_dup(x->c, &d, &err) != STRATA_OK) {
        fprintf(stderr, "rank %d: dup: %s\n", x->rank, err.msg);
        return 1;
    }
    int bad = d->tcp == NULL || d->nhosts != x->c->nhosts || d->host_group != x->c->host_group;
    size_t ns[2] = {4, (1u << 20) + 3};
    for (int t = 0; t < 2 && !bad; t++) {
        int32_t *v = malloc(ns[t] * sizeof *v);
        for (size_t i = 0; v && i < ns[t]; i++)
            v[i] = (int32_t)((x->rank + 1) * (int)(i % 1000 + 1));
        if (!v || strata_comm_allreduce(d, STRATA_IN_PLACE, v, ns[t], STRATA_INT32, STRATA_SUM,
                                        NULL) != STRATA_OK) {
            fprintf(stderr, "rank %d: dup allreduce: %s\n", x->rank, strata_comm_errmsg(d));
            bad = 1;
        }
        for (size_t i = 0; !bad && i < ns[t]; i++)
            if (v[i] != x->P * (x->P + 1) / 2 * (int32_t)(i % 1000 + 1)) {
                fprintf(stderr, "rank %d: dup allreduce [%zu] = %d\n", x->rank, i, v[i]);
                bad = 1;
            }
        free(v);
        if (!bad && strata_comm_barrier(x->c, NULL) != STRATA_OK) bad = 1;
    }
    strata_comm_destroy(d);
    return bad;
}

static int rank_main(void *arg)
{
    (void)arg;
    rank_ctx_t x = {0};
    strata_error_t err = {0};
    /* COLL_TEST_HOSTS=k: split the ranks into k pretend hosts (STRATA_HOST),
     * consecutive ranks together: shared memory inside each, TCP between. */
    const char *hs = getenv("COLL_TEST_HOSTS"), *rs = getenv("STRATA_RANK"),
               *ps = getenv("STRATA_SIZE");
    if (hs && rs && ps && atoi(hs) > 0) {
        char h[16];
        snprintf(h, sizeof h, "h%d", atoi(rs) * atoi(hs) / atoi(ps));
        setenv("STRATA_HOST", h, 1);
    }
    if (strata_comm_init_env(&x.c, &err) != STRATA_OK) {
        fprintf(stderr, "init: %s\n", err.msg);
        return 2;
    }
    x.rank = strata_comm_rank(x.c), x.P = strata_comm_size(x.c);
    /* the path under test: k hosts (STRATA_HOST) or one per rank (TCP only) */
    const char *tr = getenv("STRATA_TRANSPORT");
    const char *eh = getenv("COLL_TEST_EXPECT_HOSTS"); /* hosts the ranks really span */
    int want_hosts = tr && strcmp(tr, "tcp") == 0 ? x.P
                     : eh && atoi(eh) > 0         ? atoi(eh)
                     : hs && atoi(hs) > 0         ? atoi(hs)
                                                  : 1;
    int got_hosts = x.c->remote ? x.c->nhosts : 1;
    if (got_hosts != want_hosts || (want_hosts > 1) != (x.c->tcp != NULL)) {
        fprintf(stderr, "rank %d: %d hosts (tcp %s), expected %d\n", x.rank, got_hosts,
                x.c->tcp ? "on" : "off", want_hosts);
        return 4;
    }
    if (hs && atoi(hs) > 1 && x.P / atoi(hs) > 1 && check_choices(&x)) return 5;
    if (x.c->remote && check_dup(&x)) return 6;
    if (hs && x.P == 4 && atoi(hs) == 2 && check_given_figures(&x)) return 7;
    size_t maxn = (counts[NCOUNTS - 1] + (size_t)x.P) * 8;
    x.in = malloc(maxn), x.out = malloc(maxn), x.ref = malloc(maxn);
    for (size_t ci = 0; ci < NCOUNTS && x.in && x.out && x.ref; ci++)
        for (int dt = 0; dt < STRATA_DTYPE_COUNT; dt++) {
            g_count = counts[ci], g_dt = (strata_dtype_t)dt;
            for (int op = 0; op < STRATA_OP_COUNT; op++)
                run_reductions(&x, counts[ci], (strata_dtype_t)dt, (strata_op_t)op);
            run_moves(&x, counts[ci], (strata_dtype_t)dt);
        }
    if (x.rank == 0) /* the job's hash names its segments (netns_test.sh counts them) */
        printf("job %s\n", x.c->jobhash);
    if (x.rank == 0)
        printf("P=%d: %ld calls checked, %ld errors, %ld algorithm cases skipped (not in sched, "
               "or large counts of the other types)\n",
               x.P, x.calls, x.errors, x.skipped);
    free(x.in), free(x.out), free(x.ref);
    strata_comm_destroy(x.c);
    return x.errors ? 1 : 0;
}

static void test_matrix(void **state)
{
    int P = *(int *)*state, code = -1;
    strata_error_t err = {0};
    assert_int_equal(strata_launch_fn(P, rank_main, NULL, 2.0, &code, &err), STRATA_OK);
    assert_int_equal(code, 0);
}

int main(int argc, char **argv)
{
    /* One rank of a job started elsewhere (tests/netns/netns_test.sh): the
     * environment names rank, size and rendezvous. */
    g_quick = getenv("COLL_TEST_QUICK") != NULL;
    if (getenv("COLL_TEST_RANK_MODE")) return rank_main(NULL);
    static int Ps[8];
    struct CMUnitTest tests[8];
    int n = 0;
    for (int i = 1; i < argc && n < 8; i++, n++) {
        Ps[n] = atoi(argv[i]);
        tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(test_matrix, &Ps[n]);
    }
    if (n == 0) {
        Ps[0] = 2;
        tests[0] = (struct CMUnitTest)cmocka_unit_test_prestate(test_matrix, &Ps[0]);
        n = 1;
    }
    return _cmocka_run_group_tests("coll", tests, (size_t)n, NULL, NULL);
}
