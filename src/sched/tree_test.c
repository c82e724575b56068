/*
 * tree_test.c — NCCL's double binary tree over servers (tree.c), checked
 * by hand on 2 and 4 servers of 8 ranks (a DGX H100's shape): which rank
 * talks to which, the bytes every pair carries, the phase count, and the
 * time the cost model gives, by hand for 2 servers and against a second
 * method (the generated schedule walked phase by phase) for 4.
 *
 * Layout (tree.c, NCCL's balanced tree): channel h of tree t has its head
 * at local rank h of every server, its chain goes next to h^1 (up from an
 * even h: h, h+1, ..., h+7 mod 8; down from an odd one: h, h-1, ...). The
 * head meets the parent server and child server 1, the second rank child
 * server 0. The node trees (ncclGetDtree):
 *   2 servers: tree 0: 0 root, 1 its child 1; tree 1 (mirror): 1 root, 0
 *              its child 1. No child 0 anywhere: only heads cross.
 *   4 servers: tree 0: 0 root, child 1 = 2; 2's child 0 = 1, child 1 = 3.
 *              tree 1 (mirror, 3 - r): 3 root, child 1 = 1; 1's child 0 =
 *              2, child 1 = 0.
 */
#define _GNU_SOURCE
#include "test.h"
#include "sched.h"

static const double B_UP = 400e9, B_NIC = 50e9;

/* 8 ranks per server, 8 NICs at B_NIC, B_UP scale-up, no latency (phases
 * cost their bytes only), a reduction too fast to matter. */
static strata_coll_machine_t servers(uint32_t N)
{
    strata_coll_machine_t m = {.nranks = 8 * N,
                               .per_server = 8,
                               .servers = N,
                               .nics = 8,
                               .bw_intra = B_UP,
                               .bw_nic = B_NIC,
                               .eta_intra = 1,
                               .reduce_bw = 1e30};
    return m;
}

static strata_sched_t *tree(uint32_t N, uint64_t count, uint32_t chunks)
{
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = STRATA_ALGO_TREE,
                               .nranks = 8 * N,
                               .count = count,
                               .elem_size = 1,
                               .chunks = chunks,
                               .group = 8};
    strata_sched_t *s = NULL;
    strata_error_t err;
    if (strata_sched_create(&p, &s, &err)) fail_msg("%s", err.msg);
    return s;
}

/* Bytes rank a sends rank b over the whole schedule, into bytes[a*P+b]. */
static void pair_bytes(const strata_sched_t *s, double *bytes)
{
    uint32_t P = strata_sched_params(s)->nranks;
    memset(bytes, 0, (size_t)P * P * sizeof(*bytes));
    for (uint32_t ph = 0; ph < strata_sched_nphases(s); ph++)
        for (uint32_t r = 0; r < P; r++)
            for (uint32_t i = 0; i < strata_sched_phase_nsteps(s, r, ph); i++) {
                strata_step_t st;
                strata_sched_phase_step(s, r, ph, i, &st);
                if (st.op == STRATA_STEP_SEND) bytes[r * P + (uint32_t)st.peer] += (double)st.count;
            }
}

/* A tree edge a <-> b of one (tree, channel): its slice, n/16, each way. */
static void edge(double *want, uint32_t P, uint32_t a, uint32_t b, double q)
{
    want[a * P + b] += q, want[b * P + a] += q;
}

/* The chain inside every server, from the layout above: edge {a, a+1 mod 8}
 * is in every channel's chain except the one whose wrap it is: channel
 * a+1 when that is even (h, ..., h+7 stops short of h+8 = h), channel a
 * when that is odd. So the PCIe pairs {0,1}, {2,3}, ... carry 8 channels,
 * {1,2}, {3,4}, ..., {7,0} carry 6; each channel both trees, each tree n/16
 * each way: n and 3/4 n each way, 1.75 n out of every rank. */
static void chain_edges(double *want, uint32_t N, double n)
{
    uint32_t P = 8 * N;
    for (uint32_t s = 0; s < N; s++)
        for (uint32_t a = 0; a < 8; a++) {
            double uses = a % 2 == 0 ? 8 : 6;
            edge(want, P, 8 * s + a, 8 * s + (a + 1) % 8, uses * 2 * n / 16);
        }
}

static void check_pairs(const strata_sched_t *s, const double *want)
{
    uint32_t P = strata_sched_params(s)->nranks;
    double got[32 * 32];
    pair_bytes(s, got);
    for (uint32_t a = 0; a < P; a++)
        for (uint32_t b = 0; b < P; b++)
            if (got[a * P + b] != want[a * P + b])
                fail_msg("rank %u -> %u: %.0f bytes, by hand %.0f", a, b, got[a * P + b],
                         want[a * P + b]);
}

/* 2 servers: heads only cross, rank h <-> 8 + h on rail h: tree 0 carries
 * channel h's slice up 8+h -> h and down h -> 8+h, tree 1 the other way
 * round: n/8 each way per pair, n out of each server (E = 2 edges x n/2).
 * T = 7 (chain) + 1 = 8: C - 1 + 16 phases. */
static void test_two_servers_shape(void **state)
{
    (void)state;
    const uint32_t P = 16, C = 4;
    const double n = 16 * C * 8; /* 2 trees x 8 channels x 4 chunks x 8 B */
    strata_sched_t *s = tree(2, (uint64_t)n, C);
    assert_int_equal(strata_sched_nphases(s), C - 1 + 16);
    double want[32 * 32] = {0};
    chain_edges(want, 2, n);
    for (uint32_t h = 0; h < 8; h++)
        for (int t = 0; t < 2; t++)
            edge(want, P, h, 8 + h, n / 16);
    check_pairs(s, want);
    strata_error_t err;
    assert_int_equal(strata_sched_verify(s, &err), STRATA_OK);
    /* the channel view (--explain's rails): head h, second rank h^1 */
    assert_int_equal(strata_sched_channels(s), 16);
    for (uint32_t c = 0; c < 16; c++) {
        strata_sched_channel_t ch;
        assert_int_equal(strata_sched_channel(s, c, &ch, NULL), STRATA_OK);
        assert_int_equal(ch.tree, (int32_t)(c / 8));
        assert_int_equal(ch.entry, c % 8);
        assert_int_equal(ch.exit, (c % 8) ^ 1);
        assert_int_equal(ch.servers, 2);
        assert_int_equal(ch.count, n / 16);
        assert_int_equal(strata_sched_channel_local(s, c, 2),
                         c % 2 ? (c % 8 + 6) % 8 : (c % 8 + 2) % 8);
    }
    strata_sched_destroy(s);
}

/* 4 servers, the node trees above, channel h (ranks 8s + local):
 *   tree 0: 8+h -> 16+(h^1) (server 1 is server 2's child 0: the second
 *           rank), 24+h -> 16+h (child 1: the head), 16+h -> h (server 2
 *           is server 0's child 1);
 *   tree 1: 16+h -> 8+(h^1), h -> 8+h, 8+h -> 24+h;
 * each edge n/16 each way. A child-0 edge joins local h and h^1: the
 * simulator sends it through the receiver's rail, NCCL through NIC h; both
 * stay on one rail. Servers 1 and 2 are inner in one tree (3 edges) and
 * a leaf in the other (1): E = 4, 2n out each; servers 0 and 3, n.
 * Depth: tree 0's deepest head is server 1's, 1 (0 -> 2) + 2 (2 -> 1 via
 * the second rank) = 3, T = 7 + 3 = 10 (tree 1 alike): C - 1 + 20 phases. */
static void test_four_servers_shape(void **state)
{
    (void)state;
    const uint32_t P = 32, C = 4;
    const double n = 16 * C * 8, q = n / 16;
    strata_sched_t *s = tree(4, (uint64_t)n, C);
    assert_int_equal(strata_sched_nphases(s), C - 1 + 20);
    double want[32 * 32] = {0};
    chain_edges(want, 4, n);
    for (uint32_t h = 0; h < 8; h++) {
        edge(want, P, 8 + h, 16 + (h ^ 1), q), edge(want, P, 24 + h, 16 + h, q);
        edge(want, P, 16 + h, h, q);
        edge(want, P, 16 + h, 8 + (h ^ 1), q), edge(want, P, h, 8 + h, q);
        edge(want, P, 8 + h, 24 + h, q);
    }
    check_pairs(s, want);
    double got[32 * 32], out[4] = {0};
    pair_bytes(s, got);
    for (uint32_t a = 0; a < P; a++)
        for (uint32_t b = 0; b < P; b++)
            if (a / 8 != b / 8) {
                out[a / 8] += got[a * P + b];
                uint32_t la = a % 8, lb = b % 8; /* one rail: l <-> l or its sibling */
                if (got[a * P + b] > 0 && la != lb && la != (lb ^ 1))
                    fail_msg("rank %u -> %u crosses rails", a, b);
            }
    assert_rel(out[0], n, 1e-12);
    assert_rel(out[1], 2 * n, 1e-12);
    assert_rel(out[2], 2 * n, 1e-12);
    assert_rel(out[3], n, 1e-12);
    strata_error_t err;
    assert_int_equal(strata_sched_verify(s, &err), STRATA_OK);
    strata_sched_destroy(s);
}

/* Second method: walk the schedule; a phase costs the larger of the
 * busiest rank's scale-up bytes (in or out) / B_UP and the busiest NIC's
 * (a rank's bytes to or from other servers; one NIC per rank) / B_NIC.
 * A send to another server leaves by the NIC on the receiver's rail (the
 * simulator's rule); with pxn, a sender on another rail hands it first to
 * the GPU of that rail over scale-up links (PXN, m->ring_pxn), which
 * sends it. */
static double walk(const strata_sched_t *s, const strata_coll_machine_t *m)
{
    uint32_t P = strata_sched_params(s)->nranks;
    double t = 0;
    for (uint32_t ph = 0; ph < strata_sched_nphases(s); ph++) {
        double up[2][32] = {{0}}, nic[2][32] = {{0}}, bu = 0, bn = 0;
        for (uint32_t r = 0; r < P; r++)
            for (uint32_t i = 0; i < strata_sched_phase_nsteps(s, r, ph); i++) {
                strata_step_t st;
                strata_sched_phase_step(s, r, ph, i, &st);
                if (st.op != STRATA_STEP_SEND) continue;
                double b = (double)st.count;
                uint32_t to = (uint32_t)st.peer, relay = r - r % 8 + to % 8;
                if (r / 8 == to / 8) {
                    up[0][r] += b, up[1][to] += b;
                    continue;
                }
                if (m->ring_pxn && relay != r) up[0][r] += b, up[1][relay] += b;
                nic[0][m->ring_pxn ? relay : r] += b, nic[1][to] += b;
            }
        for (int d = 0; d < 2; d++)
            for (uint32_t r = 0; r < P; r++)
                bu = fmax(bu, up[d][r]), bn = fmax(bn, nic[d][r]);
        t += fmax(bu / m->bw_intra, bn / m->bw_nic);
    }
    return t;
}

/* The time, 1 GiB, NCCL's 512 KiB chunk: C = 2^30 / 16 channels / 2^19 =
 * 128 chunks of q = 512 KiB.
 * 2 servers, by hand: a rank carries 28 chain streams (per tree 7 up, at
 * phases 0..6 from its heights, and 7 down, from T + depth: 8..14 and
 * 9..15), each C phases of one chunk; a NIC 2 (up at 7, down at 8). A phase
 * costs max(chain, 8 x NIC) q / 400 GB/s (a NIC chunk at 50 GB/s is 8
 * scale-up ones): every phase is chain-bound but phase 8 (chain 15, NIC
 * 2: 16) and phase C + 6 (chain 14 as the last up streams ended, NIC 2:
 * 16), so t = (28 C + 1 + 2) q / 400 GB/s = 3,587 x 524,288 / 4e11 =
 * 4.70155264 ms: the steady state 1.75 n / 400 GB/s = 4.6976 ms plus 3
 * chunks. 4 servers: NIC-bound, 4 streams per NIC in steady state (32 > 28
 * chain): at least C x 4 q / 50 GB/s = 5.3687 ms, and the 19 fill and
 * drain phases add less than 19 x that / C; the walk gives the exact sum. */
/* ==== The channel rotation (strata_sched_rot_order, tree.c) ====
 * Checked on the generator's output, phase by phase, against the full
 * walk: the sends (agent, peer, bytes, buffer, after) of every channel
 * are the images under rho^i (local rank l -> l + 2i mod g) of the
 * representative channels' sends, the receives (agent, peer, bytes) too,
 * and the representatives keep every local step. */
typedef struct tup {
    uint64_t agent, peer, buf, after, kind, bytes; /* no padding: compared by memcmp */
} tup_t;

static int cmp_tup(const void *pa, const void *pb)
{
    return memcmp(pa, pb, sizeof(tup_t));
}

static strata_sched_t *sched_of(strata_algo_t algo, uint32_t P, uint32_t g, uint64_t count,
                                uint32_t chunks)
{
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = algo,
                               .nranks = P,
                               .count = count,
                               .elem_size = 1,
                               .chunks = chunks,
                               .group = g};
    strata_sched_t *s = NULL;
    strata_error_t err;
    if (strata_sched_create(&p, &s, &err)) fail_msg("%s", err.msg);
    return s;
}

static tup_t tup_of(uint32_t agent, const strata_step_t *st)
{
    tup_t t;
    bool send = st->op == STRATA_STEP_SEND;
    bool recv = st->op == STRATA_STEP_RECV || st->op == STRATA_STEP_RECV_REDUCE;
    t.agent = agent;
    t.kind = send ? 1 : recv ? 2 : 3;
    t.peer = send || recv ? (uint32_t)st->peer : 0;
    t.buf = send ? (uint32_t)st->src_buf : 0;
    t.after = send ? st->after : 0;
    t.bytes = st->count * (uint64_t)st->nblk;
    return t;
}

/* Do the full phases equal the images of the representatives under
 * map(s, agent, i) for i < k? Local steps: the representatives' own. */
static bool images_match(const strata_sched_t *s, uint32_t k,
                         uint32_t (*map)(const strata_sched_t *, uint32_t, uint32_t))
{
    uint32_t A = strata_sched_nagents(s);
    strata_step_t st[256];
    tup_t *full = malloc(sizeof(tup_t) * 65536), *img = malloc(sizeof(tup_t) * 65536);
    bool ok = true;
    for (uint32_t ph = 0; ph < strata_sched_nphases(s) && ok; ph++) {
        size_t nf = 0, ni = 0;
        for (uint32_t a = 0; a < A; a++) {
            uint32_t n = strata_sched_phase_steps(s, a, ph, st, 256);
            assert_true(n <= 256);
            for (uint32_t i = 0; i < n; i++)
                full[nf++] = tup_of(a, &st[i]);
            n = strata_sched_phase_rep_steps(s, a, ph, st, 256);
            for (uint32_t i = 0; i < n; i++) {
                tup_t t = tup_of(a, &st[i]);
                if (t.kind == 3) {
                    img[ni++] = t;
                    continue;
                }
                for (uint32_t r = 0; r < k; r++) {
                    tup_t u = t;
                    u.agent = map(s, a, r);
                    u.peer = map(s, (uint32_t)t.peer, r);
                    img[ni++] = u;
                }
            }
        }
        assert_true(nf < 65536 && ni < 65536);
        qsort(full, nf, sizeof(tup_t), cmp_tup);
        qsort(img, ni, sizeof(tup_t), cmp_tup);
        ok = nf == ni && memcmp(full, img, nf * sizeof(tup_t)) == 0;
    }
    free(full);
    free(img);
    return ok;
}

/* A map that is not the schedule's symmetry: l -> l + i mod g. */
static uint32_t rot_by_one(const strata_sched_t *s, uint32_t a, uint32_t i)
{
    uint32_t g = strata_sched_params(s)->group;
    if (a >= strata_sched_params(s)->nranks) return a;
    return a - a % g + (a % g + i) % g;
}

static void test_rotation(void **state)
{
    (void)state;
    static const strata_algo_t algos[] = {STRATA_ALGO_TREE, STRATA_ALGO_NVLSTREE};
    /* (P, g, count, chunks): 2, 4, 5 servers of 8 (order 4), 3 servers of
     * 4 (order 2), 4 of 6 (order 3); counts divisible by 2g */
    static const struct {
        uint32_t P, g;
        uint64_t count;
        uint32_t chunks, order;
    } cs[] = {{16, 8, 1 << 20, 3, 4},
              {32, 8, 16 * 999, 4, 4},
              {40, 8, 1 << 16, 2, 4},
              {12, 4, 8 * 77, 5, 2},
              {24, 6, 12 * 50, 3, 3}};
    for (size_t a = 0; a < 2; a++)
        for (size_t c = 0; c < sizeof(cs) / sizeof(cs[0]); c++) {
            strata_sched_t *s = sched_of(algos[a], cs[c].P, cs[c].g, cs[c].count, cs[c].chunks);
            uint32_t k = strata_sched_rot_order(s);
            assert_int_equal(k, cs[c].order); /* g / 2 */
            assert_true(images_match(s, k, strata_sched_rot_agent));
            /* the check tells a wrong map apart: rotating by one local rank */
            assert_false(images_match(s, k, rot_by_one));
            /* rho^k is the identity, rho moves a rank within its server */
            assert_int_equal(strata_sched_rot_agent(s, 13 % cs[c].P, k), 13 % cs[c].P);
            assert_int_equal(strata_sched_rot_agent(s, 0, 1), 2);
            strata_sched_destroy(s);
        }
    /* no rotation: odd group, group 2, a partial server, a count that does
     * not split into 2g equal segments, the flat tree */
    strata_sched_t *s = sched_of(STRATA_ALGO_TREE, 15, 5, 1000, 2);
    assert_int_equal(strata_sched_rot_order(s), 1);
    strata_sched_destroy(s);
    s = sched_of(STRATA_ALGO_TREE, 8, 2, 1000, 2);
    assert_int_equal(strata_sched_rot_order(s), 1);
    strata_sched_destroy(s);
    s = sched_of(STRATA_ALGO_NVLSTREE, 20, 8, 1 << 16, 2);
    assert_int_equal(strata_sched_rot_order(s), 1);
    strata_sched_destroy(s);
    s = sched_of(STRATA_ALGO_TREE, 16, 8, 16 * 100 + 8, 2);
    assert_int_equal(strata_sched_rot_order(s), 1);
    strata_sched_destroy(s);
    s = sched_of(STRATA_ALGO_TREE, 16, 1, 1 << 16, 2);
    assert_int_equal(strata_sched_rot_order(s), 1);
    /* without a rotation the representatives are every step */
    strata_step_t a[64], b[64];
    uint32_t n = strata_sched_phase_steps(s, 3, 2, a, 64);
    assert_int_equal(strata_sched_phase_rep_steps(s, 3, 2, b, 64), n);
    assert_memory_equal(a, b, n * sizeof(a[0]));
    strata_sched_destroy(s);
}

/* The pipeline's steady state (sched_dtree_class): phases of one class
 * emit, agent by agent, the same steps but for offsets. By hand, 2
 * servers of 8: the tree's T = g - 1 + 1 = 8 (tree.c), so with C = 24 it
 * has 23 + 16 = 39 phases and phases 16..23 (2T .. C - 1) are class 16;
 * nvlstree's node trees have height T = 1: 24 + 3 + 2 = 29 phases,
 * phases 5..23 (3 + 2T .. C - 1) class 5. 38,416 B: segments of 2,401,
 * not a multiple of 24 chunks (101 or 100 B each): no class. */
static void test_steady_state(void **state)
{
    (void)state;
    static const struct {
        strata_algo_t algo;
        uint32_t nphases, lo;
    } cs[] = {{STRATA_ALGO_TREE, 39, 16}, {STRATA_ALGO_NVLSTREE, 29, 5}};
    static strata_step_t a[1024], b[1024];
    for (size_t c = 0; c < 2; c++) {
        strata_sched_t *s = sched_of(cs[c].algo, 16, 8, 16 * 24 * 100, 24);
        assert_int_equal(strata_sched_nphases(s), cs[c].nphases);
        uint32_t nclass = 0;
        for (uint32_t ph = 0; ph < cs[c].nphases; ph++) {
            uint32_t k = strata_sched_phase_class(s, ph);
            assert_int_equal(k, ph >= cs[c].lo && ph <= 23 ? cs[c].lo : ph);
            if (k == ph) {
                nclass++;
                continue;
            }
            for (uint32_t g = 0; g < strata_sched_nagents(s); g++) {
                uint32_t n = strata_sched_phase_steps(s, g, ph, a, 1024);
                assert_true(n <= 1024);
                assert_int_equal(strata_sched_phase_steps(s, g, k, b, 1024), n);
                for (uint32_t i = 0; i < n; i++) {
                    assert_int_equal(a[i].op, b[i].op);
                    assert_int_equal(a[i].peer, b[i].peer);
                    assert_int_equal(a[i].after, b[i].after);
                    assert_int_equal(a[i].src_buf, b[i].src_buf);
                    assert_int_equal(a[i].count * a[i].nblk, b[i].count * b[i].nblk);
                }
            }
        }
        assert_int_equal(nclass, cs[c].nphases - (23 - cs[c].lo));
        strata_sched_destroy(s);
        s = sched_of(cs[c].algo, 16, 8, 16 * 24 * 100 + 16, 24);
        for (uint32_t ph = 0; ph < strata_sched_nphases(s); ph++)
            assert_int_equal(strata_sched_phase_class(s, ph), ph);
        strata_sched_destroy(s);
    }
}

static void test_time(void **state)
{
    (void)state;
    const double n = 1073741824.0, q = 524288.0;
    strata_coll_machine_t m = servers(2);
    strata_coll_cost_t k;
    assert_int_equal(strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_TREE, n, &k, NULL),
                     STRATA_OK);
    assert_int_equal(k.chunks, 128);
    assert_rel(k.time, 3587 * q / B_UP, 1e-12);
    assert_rel(k.time, 4.70155264e-3, 1e-9);
    strata_sched_t *s = tree(2, (uint64_t)n, 128);
    assert_rel(walk(s, &m), k.time, 1e-12);
    strata_sched_destroy(s);

    m = servers(4);
    assert_int_equal(strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_TREE, n, &k, NULL),
                     STRATA_OK);
    assert_int_equal(k.chunks, 128);
    assert_string_equal(k.bound, "network bandwidth");
    double steady = 128 * 4 * q / B_NIC;
    assert_rel(steady, 5.36870912e-3, 1e-9);
    assert_true(k.time >= steady && k.time < steady * (1 + 19.0 / 128));
    s = tree(4, (uint64_t)n, 128);
    assert_rel(walk(s, &m), k.time, 1e-12);
    /* PXN (no PCIe switch shared with the NIC): a child-0 edge runs from
     * local h to local h^1, so its sender first hands it over scale-up
     * links to the GPU of the receiver's rail: the model adds those
     * relays to the chain's streams, the walk to the ranks' bytes. With
     * 200 GB/s scale-up the chain binds (28 chunks per rank and phase,
     * 28 q / 200 GB/s > 4 NIC chunks, 16 q / 200 GB/s): 28 C q / 200 GB/s =
     * 9.395 ms without relays; servers 1 and 2 each relay one child-0
     * edge per tree, 30 chunks per phase: 30 C q / 200 GB/s = 10.066 ms,
     * plus fill and drain (fewer than 19 of those phases) in both. */
    m.bw_intra = 200e9;
    assert_int_equal(strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_TREE, n, &k, NULL),
                     STRATA_OK);
    double bare = k.time;
    assert_rel(walk(s, &m), bare, 1e-12);
    m.ring_pxn = true;
    assert_int_equal(strata_coll_cost(&m, STRATA_COLL_ALLREDUCE, STRATA_ALGO_TREE, n, &k, NULL),
                     STRATA_OK);
    assert_rel(walk(s, &m), k.time, 1e-12);
    assert_true(bare >= 28 * 128 * q / 200e9 && bare < 28 * (128 + 19) * q / 200e9);
    assert_true(k.time >= 30 * 128 * q / 200e9 && k.time < 30 * (128 + 19) * q / 200e9);
    strata_sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_servers_shape),
        cmocka_unit_test(test_four_servers_shape),
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_steady_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
