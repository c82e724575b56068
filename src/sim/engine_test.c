/*
 * engine_test.c — the flow engine against hand-solved cases: fair halves on
 * one link, holes left in a link's list by flows that end first, a
 * three-link max-min example with rates that change as flows finish, a 1:4
 * oversubscribed uplink, latency, ideal spreading weights, an event heap
 * against sorting (and a batch taken at once against popping), the hop
 * pool and local resource numbers, and allocation failure.
 */
#define _GNU_SOURCE
#include "test.h"
#include "engine_int.h"

#define GB 1e9

/* Completion times recorded by tag. */
typedef struct done_log {
    double t[16];
    int n;
} done_log_t;

static void log_done(void *ctx, uint64_t tag, double t)
{
    done_log_t *d = ctx;
    d->t[tag] = t;
    d->n++;
}

static void log_any(void *ctx, uint64_t tag, double t)
{
    ((double *)ctx)[tag] = t;
}

static sim_net_t *net_with(uint32_t n, const double *caps)
{
    sim_net_t *net = sim_net_create(n);
    assert_non_null(net);
    for (uint32_t r = 0; r < n; r++)
        sim_net_set_res(net, r, caps[r], r);
    return net;
}

static void add1(sim_net_t *net, double bytes, uint64_t tag, int nh, const uint32_t *res)
{
    sim_hop_t hops[8];
    for (int i = 0; i < nh; i++)
        hops[i] = (sim_hop_t){res[i], 1.0};
    assert_int_equal(sim_flow_add(net, 0, 0, bytes, hops, (uint32_t)nh, tag), 0);
}

/* Two 1 GB flows on one 10 GB/s link get 5 GB/s each: both end at
 * 1 GB / 5 GB/s = 0.2 s (alone, 0.1 s). */
static void test_two_flows_half(void **state)
{
    (void)state;
    double caps[] = {10 * GB};
    sim_net_t *net = net_with(1, caps);
    uint32_t p[] = {0};
    add1(net, 1 * GB, 0, 1, p);
    add1(net, 1 * GB, 1, 1, p);
    done_log_t d = {0};
    assert_int_equal(sim_net_run(net, log_done, &d), 0);
    assert_int_equal(d.n, 2);
    assert_near(d.t[0], 0.2, 1e-12);
    assert_near(d.t[1], 0.2, 1e-12);
    assert_near(sim_net_res_bytes(net, 0), 2 * GB, 1);
    sim_net_destroy(net);
}

/* Holes in a list (removal is lazy, engine_int.h): five flows on one
 * 4 GB/s link, 1, 3, 1, 3, 2 GB, get 0.8 GB/s each; the first and third
 * end at 1 / 0.8 = 1.25 s, leaving holes that the last two entries fill.
 * Three flows at 4/3 GB/s: the 2 GB one has 1 GB left, ends 0.75 s later
 * (2 s), and must be found at its new place; the two 3 GB ones have 1 GB
 * left at 2 GB/s: 2.5 s. */
static void test_list_holes(void **state)
{
    (void)state;
    double caps[] = {4 * GB};
    sim_net_t *net = net_with(1, caps);
    uint32_t p[] = {0};
    double gb[] = {1, 3, 1, 3, 2};
    for (int i = 0; i < 5; i++)
        add1(net, gb[i] * GB, (uint64_t)i, 1, p);
    done_log_t d = {0};
    assert_int_equal(sim_net_run(net, log_done, &d), 0);
    assert_int_equal(d.n, 5);
    double want[] = {1.25, 2.5, 1.25, 2.5, 2.0};
    for (int i = 0; i < 5; i++)
        assert_near(d.t[i], want[i], 1e-12);
    assert_near(sim_net_res_bytes(net, 0), 10 * GB, 1);
    sim_net_destroy(net);
}

/* Three links L0 (10 GB/s), L1 (4), L2 (10). Flows:
 *   f0: L0 L1 L2   f1: L1   f2: L0   f3: L2   f4: L0
 * Progressive filling by hand: shares L0 10/3, L1 4/2 = 2, L2 10/2 = 5.
 * L1 saturates first: f0 = f1 = 2. Then L0 has 10-2 = 8 for f2, f4 → 4
 * each; L2 has 10-2 = 8 for f3 → 8. With bytes = rate × 1 s every flow
 * ends at exactly 1 s; any other rates would end some earlier. */
static void test_three_link_static(void **state)
{
    (void)state;
    double caps[] = {10 * GB, 4 * GB, 10 * GB};
    sim_net_t *net = net_with(3, caps);
    uint32_t p0[] = {0, 1, 2}, p1[] = {1}, p2[] = {0}, p3[] = {2};
    add1(net, 2 * GB, 0, 3, p0);
    add1(net, 2 * GB, 1, 1, p1);
    add1(net, 4 * GB, 2, 1, p2);
    add1(net, 8 * GB, 3, 1, p3);
    add1(net, 4 * GB, 4, 1, p2);
    done_log_t d = {0};
    assert_int_equal(sim_net_run(net, log_done, &d), 0);
    for (int i = 0; i < 5; i++)
        assert_near(d.t[i], 1.0, 1e-9);
    /* L1 is f0's and f1's bottleneck (tier 1): 2 flows × 1 s; L0 bounds
     * f2, f4 (tier 0): 2 flow-s; L2 bounds f3: 1 flow-s. */
    sim_net_stats_t st;
    sim_net_get_stats(net, &st);
    assert_near(st.tier_bound[0], 2.0, 1e-9);
    assert_near(st.tier_bound[1], 2.0, 1e-9);
    assert_near(st.tier_bound[2], 1.0, 1e-9);
    sim_net_destroy(net);
}

/* The same network with f1 = 1 GB, so rates change as flows finish:
 *   t=0.5  f1 ends (2 GB/s × 0.5 s). Now L0: f0,f2,f4 → 10/3 each; L1: f0
 *          alone → 4; L2: f0,f3 → 5. L0 is tightest: f0 = f2 = f4 = 10/3,
 *          f3 = 10 - 10/3 = 20/3. Remaining: f0 1, f2 2, f4 2, f3 4 GB.
 *   t=0.8  f0 ends (1 / (10/3) = 0.3 s). f2, f4 have 2 - 1 = 1 GB left,
 *          now at 5 each; f3 has 4 - 2 = 2 GB left, now at 10.
 *   t=1.0  f2, f4 (1/5 = 0.2 s) and f3 (2/10 = 0.2 s) end. */
static void test_three_link_dynamic(void **state)
{
    (void)state;
    double caps[] = {10 * GB, 4 * GB, 10 * GB};
    sim_net_t *net = net_with(3, caps);
    uint32_t p0[] = {0, 1, 2}, p1[] = {1}, p2[] = {0}, p3[] = {2};
    add1(net, 2 * GB, 0, 3, p0);
    add1(net, 1 * GB, 1, 1, p1);
    add1(net, 4 * GB, 2, 1, p2);
    add1(net, 8 * GB, 3, 1, p3);
    add1(net, 4 * GB, 4, 1, p2);
    done_log_t d = {0};
    assert_int_equal(sim_net_run(net, log_done, &d), 0);
    assert_near(d.t[1], 0.5, 1e-9);
    assert_near(d.t[0], 0.8, 1e-9);
    assert_near(d.t[2], 1.0, 1e-9);
    assert_near(d.t[3], 1.0, 1e-9);
    assert_near(d.t[4], 1.0, 1e-9);
    sim_net_destroy(net);
}

/* 1:4 oversubscription: four hosts with 10 GB/s links (r0..r3) into a leaf
 * whose one uplink (r4) is 10 GB/s; remote downlinks r5..r8 are 10 GB/s.
 * Four 1 GB flows through the uplink each run at 10/4 = 2.5 GB/s, a
 * quarter of their link: 0.4 s instead of 0.1 s. */
static void test_oversubscribed_quarter(void **state)
{
    (void)state;
    double caps[9];
    for (int i = 0; i < 9; i++)
        caps[i] = 10 * GB;
    sim_net_t *net = net_with(9, caps);
    for (uint32_t i = 0; i < 4; i++) {
        uint32_t p[] = {i, 4, 5 + i};
        add1(net, 1 * GB, i, 3, p);
    }
    done_log_t d = {0};
    assert_int_equal(sim_net_run(net, log_done, &d), 0);
    for (int i = 0; i < 4; i++)
        assert_near(d.t[i], 0.4, 1e-12);
    sim_net_stats_t st;
    sim_net_get_stats(net, &st);
    assert_near(st.tier_bound[4], 4 * 0.4, 1e-9); /* the uplink bounded all four */
    sim_net_destroy(net);
}

/* Ties: a flow through two equal 10 GB/s links, r0 of tier 3 and r1 of
 * tier 1 (both saturated by it), is charged to the lower tier, whatever the
 * ids; a second flow on r0 alone makes r0 the only bottleneck of both
 * (5 GB/s each; r1 is then half used). 1 GB at 10 → 0.1 s; at 5 → 0.2 s. */
static void test_tie_attribution(void **state)
{
    (void)state;
    sim_net_t *net = sim_net_create(2);
    sim_net_set_res(net, 0, 10 * GB, 3);
    sim_net_set_res(net, 1, 10 * GB, 1);
    uint32_t p[] = {0, 1}, q[] = {0};
    add1(net, 1 * GB, 0, 2, p);
    done_log_t d = {0};
    assert_int_equal(sim_net_run(net, log_done, &d), 0);
    sim_net_stats_t st;
    sim_net_get_stats(net, &st);
    assert_near(st.tier_bound[1], 0.1, 1e-12);
    assert_near(st.tier_bound[3], 0.0, 1e-12);
    assert_int_equal(sim_net_reset(net), 0);
    add1(net, 1 * GB, 0, 2, p);
    add1(net, 1 * GB, 1, 1, q);
    assert_int_equal(sim_net_run(net, log_done, &d), 0);
    sim_net_get_stats(net, &st);
    assert_near(d.t[0], 0.2, 1e-12);
    assert_near(st.tier_bound[3], 0.4, 1e-12);
    assert_near(st.tier_bound[1], 0.0, 1e-12);
    sim_net_destroy(net);
}

/* Latency then drain: 1 GB at 10 GB/s after 2 µs of path latency ends at
 * 2e-6 + 0.1 s; a zero-byte flow ends after its latency alone. */
static void test_latency(void **state)
{
    (void)state;
    double caps[] = {10 * GB};
    sim_net_t *net = net_with(1, caps);
    sim_hop_t h = {0, 1};
    assert_int_equal(sim_flow_add(net, 0, 2e-6, 1 * GB, &h, 1, 0), 0);
    assert_int_equal(sim_flow_add(net, 0, 3e-6, 0, &h, 1, 1), 0);
    done_log_t d = {0};
    assert_int_equal(sim_net_run(net, log_done, &d), 0);
    assert_near(d.t[0], 0.1 + 2e-6, 1e-15);
    assert_near(d.t[1], 3e-6, 1e-18);
    sim_net_destroy(net);
}

/* Ideal spreading: one flow over two equal paths (r1, r2: 10 GB/s each)
 * behind a 40 GB/s NIC (r0) has weight 1/2 on each path link, so its rate
 * is min(40/1, 10/0.5, 10/0.5) = 20 GB/s: 2 GB take 0.1 s. A second flow
 * pinned on r1 (ECMP-style) then shares r1: r1's share is 10/(0.5+1) =
 * 6.67 for both, fixing both at 20/3. r2 carries the spread flow's other
 * half at 10/3. 2 GB at 20/3 → 0.3 s; the pinned 1 GB flow ends at 0.15 s,
 * then the spread flow has 2 - 1 = 1 GB left at 20 GB/s → 0.2 s. */
static void test_spread_weights(void **state)
{
    (void)state;
    double caps[] = {40 * GB, 10 * GB, 10 * GB};
    sim_net_t *net = net_with(3, caps);
    sim_hop_t spread[] = {{0, 1}, {1, 0.5}, {2, 0.5}};
    assert_int_equal(sim_flow_add(net, 0, 0, 2 * GB, spread, 3, 0), 0);
    done_log_t d = {0};
    assert_int_equal(sim_net_run(net, log_done, &d), 0);
    assert_near(d.t[0], 0.1, 1e-12);
    assert_int_equal(sim_net_reset(net), 0);
    sim_hop_t pinned = {1, 1};
    assert_int_equal(sim_flow_add(net, 0, 0, 2 * GB, spread, 3, 0), 0);
    assert_int_equal(sim_flow_add(net, 0, 0, 1 * GB, &pinned, 1, 1), 0);
    assert_int_equal(sim_net_run(net, log_done, &d), 0);
    assert_near(d.t[1], 0.15, 1e-12);
    assert_near(d.t[0], 0.2, 1e-12);
    sim_net_destroy(net);
}

/* Chained flows: the callback starts the next hop of a 4-step pipeline;
 * each step is 1 µs latency + 1 GB / 10 GB/s, so the end is 4 × 0.100001. */
typedef struct chain {
    sim_net_t *net;
    int left;
    double end;
} chain_t;

static void chain_next(void *ctx, uint64_t tag, double t)
{
    chain_t *c = ctx;
    c->end = t;
    if (--c->left == 0) return;
    sim_hop_t h = {(uint32_t)(tag + 1) % 2, 1};
    assert_int_equal(sim_flow_add(c->net, t, 1e-6, 1 * GB, &h, 1, tag + 1), 0);
}

static void test_chain(void **state)
{
    (void)state;
    double caps[] = {10 * GB, 10 * GB};
    sim_net_t *net = net_with(2, caps);
    chain_t c = {net, 4, 0};
    sim_hop_t h = {0, 1};
    assert_int_equal(sim_flow_add(net, 0, 1e-6, 1 * GB, &h, 1, 0), 0);
    assert_int_equal(sim_net_run(net, chain_next, &c), 0);
    assert_near(c.end, 4 * 0.100001, 1e-12);
    assert_int_equal(sim_flow_add(net, 0.0, 0, 1, &h, 1, 0), -1); /* in the past */
    sim_hop_t bad = {7, 1};
    assert_int_equal(sim_flow_add(net, c.end, 0, 1, &bad, 1, 0), -1);
    sim_net_destroy(net);
}

/* Flows' hops live in one pool that moves when it fills (event.c,
 * hop_room), and resources are numbered locally in the order flows first
 * cross them (engine_int.h). A long flow A (150 GB over r5 then r3, so r5
 * gets the first local number) stays pending while a chain of 300 flows
 * of 1 GB over r0, r1, r3, each started by the last one's completion,
 * fills the pool again and again (3 hops each: the 256-hop pool is full
 * after about 85 of them, and A's hops move each time). By hand, with
 * every link 10 GB/s: while A runs, A and the chain's flow share r3 at
 * 5 GB/s, so a chain flow takes 0.2 s and A ends at 150 / 5 = 30 s,
 * with the 150th chain flow; the other 150 take 0.1 s each alone:
 * the chain ends at 30 + 15 = 45 s. Bytes: r3 150 + 300 GB, r5 150 GB,
 * r0 300 GB. Then a rewind keeps the bytes (and the local numbers: the
 * run used every resource it numbered, test_numbering_kept),
 * and a capacity set while a resource has its local number (a flow added
 * over it) is the one the run uses: 1 GB over r3 at 20 GB/s is 0.05 s.
 * With it, 150 flows of 0.1 GB over r0, r2, r4 added at once (450 hops:
 * the pool grows in place under pending flows) share r0: 10/150 GB/s
 * each, all end at 150 × 0.1 / 10 = 1.5 s. */
typedef struct pool_chain {
    sim_net_t *net;
    int left;
    double end, a_end;
} pool_chain_t;

static void pool_next(void *ctx, uint64_t tag, double t)
{
    pool_chain_t *c = ctx;
    if (tag == 1000) {
        c->a_end = t;
        return;
    }
    c->end = t;
    if (--c->left == 0) return;
    sim_hop_t h[] = {{0, 1}, {1, 1}, {3, 1}};
    assert_int_equal(sim_flow_add(c->net, t, 0, 1 * GB, h, 3, tag + 1), 0);
}

static void test_hop_pool_local_numbers(void **state)
{
    (void)state;
    double caps[] = {10 * GB, 10 * GB, 10 * GB, 10 * GB, 10 * GB, 10 * GB};
    sim_net_t *net = net_with(6, caps);
    sim_hop_t a[] = {{5, 1}, {3, 1}}, h[] = {{0, 1}, {1, 1}, {3, 1}};
    assert_int_equal(sim_flow_add(net, 0, 0, 150 * GB, a, 2, 1000), 0);
    assert_int_equal(sim_flow_add(net, 0, 0, 1 * GB, h, 3, 0), 0);
    pool_chain_t c = {net, 300, 0, 0};
    assert_int_equal(sim_net_run(net, pool_next, &c), 0);
    assert_int_equal(c.left, 0);
    assert_near(c.a_end, 30.0, 1e-9);
    assert_near(c.end, 45.0, 1e-9);
    assert_near(sim_net_res_bytes(net, 3), 450 * GB, 1e-3);
    assert_near(sim_net_res_bytes(net, 5), 150 * GB, 1e-3);
    assert_near(sim_net_res_bytes(net, 0), 300 * GB, 1e-3);
    assert_near(sim_net_res_bytes(net, 2), 0, 0);
    assert_int_equal(sim_net_rewind(net), 0);
    sim_hop_t r3 = {3, 1}, g[] = {{0, 1}, {2, 1}, {4, 1}};
    assert_int_equal(sim_flow_add(net, 0, 0, 1 * GB, &r3, 1, 0), 0);
    sim_net_set_res(net, 3, 20 * GB, 3);
    for (uint64_t i = 1; i <= 150; i++)
        assert_int_equal(sim_flow_add(net, 0, 0, 0.1 * GB, g, 3, i), 0);
    double t[151] = {0};
    assert_int_equal(sim_net_run(net, log_any, t), 0);
    assert_near(t[0], 0.05, 1e-12);
    for (int i = 1; i <= 150; i++)
        assert_near(t[i], 1.5, 1e-9);
    assert_near(sim_net_res_bytes(net, 3), 451 * GB, 1e-3);
    assert_near(sim_net_res_bytes(net, 4), 15 * GB, 1e-3);
    assert_near(sim_net_res_cap(net, 3), 20 * GB, 0);
    sim_net_destroy(net);
}

/* A flow's breakdown by tier when its bottleneck changes tier, and a
 * reused slot's row (not cleared, engine_int.h: only the entries of the
 * flow's tmask are its own). r0 tier 0, r1 tier 1, both 10 GB/s. F: 3 GB
 * over r0, r1; G: 1 GB over r1; H: 1 GB over r1, starting at 0.3 s.
 *   [0, 0.2]   F, G share r1 at 5 GB/s (r0 alone would give F 10): G
 *              ends at 0.2 (1 / 5), its 0.2 s all tier 1; F has 2 GB left.
 *   [0.2, 0.3] F alone at 10 GB/s, both links saturated: r0 (the lower
 *              tier) bounds it. 1 GB left.
 *   [0.3, 0.5] F, H share r1 at 5: F's last 1 GB and H's take 0.2 s.
 * Each interval is charged to the tier that bound the flow during it (the
 * engine brings a flow's account up to date before filling picks its new
 * bottleneck): [0, 0.2] tier 1, [0.2, 0.3] tier 0, [0.3, 0.5] tier 1 — F's
 * row 0.1 in tier 0, 0.4 in tier 1 (the tier changed, so its row was
 * written), 0.5 s in all, its completion time. After a rewind a flow K
 * (slot 0 again, F's; 1 GB over r1, 1 ms of latency) is bound by tier 1
 * only: 0.1 s there and 0 in tier 0 (F's 0.1 s is still in the row),
 * latency 1e-3. */
typedef struct tb_log {
    const sim_net_t *net;
    double tb[3][SIM_MAX_TIERS + 1];
    double t[3];
} tb_log_t;

static void log_tb(void *ctx, uint64_t tag, double t)
{
    tb_log_t *l = ctx;
    memcpy(l->tb[tag], sim_net_done_breakdown(l->net), sizeof(l->tb[tag]));
    l->t[tag] = t;
}

static void test_breakdown_rows(void **state)
{
    (void)state;
    double caps[] = {10 * GB, 10 * GB};
    sim_net_t *net = net_with(2, caps);
    sim_hop_t f[] = {{0, 1}, {1, 1}}, g = {1, 1};
    assert_int_equal(sim_flow_add(net, 0, 0, 3 * GB, f, 2, 0), 0);
    assert_int_equal(sim_flow_add(net, 0, 0, 1 * GB, &g, 1, 1), 0);
    assert_int_equal(sim_flow_add(net, 0.3, 0, 1 * GB, &g, 1, 2), 0);
    tb_log_t l;
    memset(&l, 0xff, sizeof(l)); /* NaNs: every entry must be written */
    l.net = net;
    assert_int_equal(sim_net_run(net, log_tb, &l), 0);
    assert_near(l.t[0], 0.5, 1e-12);
    assert_near(l.t[1], 0.2, 1e-12);
    assert_near(l.t[2], 0.5, 1e-12);
    assert_near(l.tb[0][0], 0.1, 1e-12);
    assert_near(l.tb[0][1], 0.4, 1e-12);
    for (int k = 2; k <= SIM_MAX_TIERS; k++)
        assert_true(l.tb[0][k] == 0);
    assert_true(l.tb[1][0] == 0);
    assert_near(l.tb[1][1], 0.2, 1e-12);
    assert_int_equal(sim_net_rewind(net), 0);
    assert_int_equal(sim_flow_add(net, 0, 1e-3, 1 * GB, &g, 1, 2), 0);
    assert_int_equal((int)net->flows[0].tag, 2); /* F's slot */
    memset(&l, 0xff, sizeof(l));
    l.net = net;
    assert_int_equal(sim_net_run(net, log_tb, &l), 0);
    assert_near(l.t[2], 1e-3 + 0.1, 1e-12);
    assert_true(l.tb[2][0] == 0);
    assert_near(l.tb[2][1], 0.1, 1e-12);
    for (int k = 2; k < SIM_MAX_TIERS; k++)
        assert_true(l.tb[2][k] == 0);
    assert_true(l.tb[2][SIM_MAX_TIERS] == 1e-3);
    sim_net_destroy(net);
}

/* A rewind keeps the local numbering when the run used every numbered
 * resource, else forgets it (engine_int.h), and either way the times are
 * the ones by hand. r0, r1, r2 at 10 GB/s. Run 1: 1 GB over r0, r1 (0.1
 * s); kept (2 numbers). r1 set to 5 GB/s while numbered. Run 2: the same
 * flow (0.2 s, r1 the bottleneck) and 1 GB over r2 (0.1 s): 3 numbers,
 * all used, kept. Run 3: 1 GB over r2 alone (0.1 s): 1 of 3 used, so
 * forgotten. Run 4: two 1 GB flows over r1 and r2 share r1's 5 GB/s:
 * 2.5 each, 0.4 s; numbered afresh, r1 first. Bytes carried over the runs:
 * r1 1 + 1 + 2 = 4 GB, r2 1 + 1 + 2 = 4 GB. */
static void test_numbering_kept(void **state)
{
    (void)state;
    double caps[] = {10 * GB, 10 * GB, 10 * GB};
    sim_net_t *net = net_with(3, caps);
    sim_hop_t a[] = {{0, 1}, {1, 1}}, b = {2, 1}, c[] = {{1, 1}, {2, 1}};
    double t[2] = {0};
    assert_int_equal(sim_flow_add(net, 0, 0, 1 * GB, a, 2, 0), 0);
    assert_int_equal(sim_net_run(net, log_any, t), 0);
    assert_near(t[0], 0.1, 1e-12);
    assert_int_equal(sim_net_rewind(net), 0);
    assert_int_equal(net->n_local, 2);
    sim_net_set_res(net, 1, 5 * GB, 1);
    assert_int_equal(sim_flow_add(net, 0, 0, 1 * GB, a, 2, 0), 0);
    assert_int_equal(sim_flow_add(net, 0, 0, 1 * GB, &b, 1, 1), 0);
    assert_int_equal(sim_net_run(net, log_any, t), 0);
    assert_near(t[0], 0.2, 1e-12);
    assert_near(t[1], 0.1, 1e-12);
    assert_int_equal(sim_net_rewind(net), 0);
    assert_int_equal(net->n_local, 3);
    assert_int_equal(net->lmap[1], 1);
    assert_int_equal(sim_flow_add(net, 0, 0, 1 * GB, &b, 1, 0), 0);
    assert_int_equal(sim_net_run(net, log_any, t), 0);
    assert_near(t[0], 0.1, 1e-12);
    assert_int_equal(sim_net_rewind(net), 0);
    assert_int_equal(net->n_local, 0);
    assert_int_equal(sim_flow_add(net, 0, 0, 1 * GB, c, 2, 0), 0);
    assert_int_equal(sim_flow_add(net, 0, 0, 1 * GB, c, 2, 1), 0);
    assert_int_equal(net->lmap[1], 0);
    assert_int_equal(sim_net_run(net, log_any, t), 0);
    assert_near(t[0], 0.4, 1e-12);
    assert_near(t[1], 0.4, 1e-12);
    assert_near(sim_net_res_bytes(net, 1), 4 * GB, 1e-3);
    assert_near(sim_net_res_bytes(net, 2), 4 * GB, 1e-3);
    sim_net_destroy(net);
}

/* ==== A second method: a naive fluid simulator ====
 * Random networks checked against a deliberately simple reference: at
 * every event recompute all rates by textbook progressive filling over the
 * whole network (no components, no heap, no levels), advance every flow,
 * and step to the next activation or completion. */
enum { RN_RES = 10, RN_FLOWS = 24, RN_HOPS = 4 };

typedef struct rn_flow {
    uint32_t res[RN_HOPS];
    double w[RN_HOPS];
    int n;
    double start, bytes, left, rate, end;
    int state; /* 0 waiting, 1 active, 2 done */
} rn_flow_t;

static void naive_rates(rn_flow_t *f, int nf, const double *cap)
{
    double rem[RN_RES];
    int fixed[RN_FLOWS] = {0};
    memcpy(rem, cap, sizeof(rem));
    for (;;) {
        double wsum[RN_RES] = {0}, best = INFINITY;
        for (int i = 0; i < nf; i++)
            if (f[i].state == 1 && !fixed[i])
                for (int h = 0; h < f[i].n; h++)
                    wsum[f[i].res[h]] += f[i].w[h];
        for (int r = 0; r < RN_RES; r++)
            if (wsum[r] > 0 && fmax(rem[r], 0) / wsum[r] < best) best = fmax(rem[r], 0) / wsum[r];
        if (best == INFINITY) return;
        int at[RN_RES]; /* resources at the level, decided before any is changed */
        for (int r = 0; r < RN_RES; r++)
            at[r] = wsum[r] > 0 && fmax(rem[r], 0) / wsum[r] <= best * (1 + 1e-12);
        for (int r = 0; r < RN_RES; r++) {
            if (!at[r]) continue;
            for (int i = 0; i < nf; i++) {
                int on = 0;
                for (int h = 0; h < f[i].n; h++)
                    on |= f[i].res[h] == (uint32_t)r;
                if (f[i].state != 1 || fixed[i] || !on) continue;
                fixed[i] = 1;
                f[i].rate = best;
                for (int h = 0; h < f[i].n; h++)
                    rem[f[i].res[h]] -= best * f[i].w[h];
            }
        }
    }
}

static void naive_run(rn_flow_t *f, int nf, const double *cap)
{
    double t = 0;
    for (int done = 0; done < nf;) {
        for (int i = 0; i < nf; i++)
            if (f[i].state == 0 && f[i].start <= t) f[i].state = 1;
        naive_rates(f, nf, cap);
        double next = INFINITY;
        for (int i = 0; i < nf; i++) {
            if (f[i].state == 0) next = fmin(next, f[i].start);
            if (f[i].state == 1) next = fmin(next, t + f[i].left / f[i].rate);
        }
        for (int i = 0; i < nf; i++)
            if (f[i].state == 1) f[i].left -= f[i].rate * (next - t);
        t = next;
        for (int i = 0; i < nf; i++)
            if (f[i].state == 1 && f[i].left <= f[i].bytes * 1e-9) {
                f[i].state = 2;
                f[i].end = t;
                done++;
            }
    }
}

static void test_random_vs_naive(void **state)
{
    (void)state;
    static const double weights[] = {0.25, 0.5, 1, 2};
    uint64_t rng = 7;
#define RND() (rng = util_hash_u64(rng))
    for (int trial = 0; trial < 200; trial++) {
        double cap[RN_RES];
        rn_flow_t f[RN_FLOWS];
        sim_net_t *net = sim_net_create(RN_RES);
        for (int r = 0; r < RN_RES; r++) {
            cap[r] = (double)(1 + RND() % 8) * GB;
            sim_net_set_res(net, (uint32_t)r, cap[r], (unsigned)r % 4);
        }
        for (int i = 0; i < RN_FLOWS; i++) {
            memset(&f[i], 0, sizeof(f[i]));
            f[i].n = 1 + (int)(RND() % RN_HOPS);
            sim_hop_t hops[RN_HOPS];
            for (int h = 0; h < f[i].n; h++) {
                f[i].res[h] = (uint32_t)(RND() % RN_RES);
                f[i].w[h] = weights[RND() % 4];
                hops[h] = (sim_hop_t){f[i].res[h], f[i].w[h]};
            }
            f[i].start = (double)(RND() % 4) * 0.05; /* a few flows start together */
            f[i].bytes = f[i].left = (double)(1 + RND() % 16) * 0.125 * GB;
            assert_int_equal(
                sim_flow_add(net, 0, f[i].start, f[i].bytes, hops, (uint32_t)f[i].n, (uint64_t)i),
                0);
        }
        naive_run(f, RN_FLOWS, cap);
        double got[RN_FLOWS];
        assert_int_equal(sim_net_run(net, log_any, got), 0);
        for (int i = 0; i < RN_FLOWS; i++)
            if (fabs(got[i] - f[i].end) > 1e-7 * f[i].end)
                fail_msg("trial %d flow %d: engine %.12g, naive %.12g", trial, i, got[i], f[i].end);
        sim_net_destroy(net);
    }
#undef RND
}

/* Contention-free (ideal) runs fix a flow's rate at activation, joining no
 * list (event.c); with a load observer they take the general path, every
 * batch recomputing its component with fill_ideal. Both must give the
 * same completion times bit for bit, and each time must be the closed
 * form start + latency + bytes / min over hops (cap / w). */
static void count_loads(void *ctx, uint32_t r, double t, double load)
{
    (void)r, (void)t, (void)load;
    ++*(int *)ctx;
}

static void test_ideal_fast_path(void **state)
{
    (void)state;
    static const double weights[] = {0.25, 0.5, 1, 2};
    uint64_t rng = 11;
#define RND() (rng = util_hash_u64(rng))
    for (int trial = 0; trial < 50; trial++) {
        double got[2][RN_FLOWS], want[RN_FLOWS];
        int loads = 0;
        uint64_t seed = rng;
        for (int pass = 0; pass < 2; pass++) {
            rng = seed;
            sim_net_t *net = sim_net_create(RN_RES);
            double cap[RN_RES];
            for (int r = 0; r < RN_RES; r++) {
                cap[r] = (double)(1 + RND() % 8) * GB;
                sim_net_set_res(net, (uint32_t)r, cap[r], (unsigned)r % 4);
            }
            sim_net_set_ideal(net, true);
            if (pass == 1) sim_net_set_load_observer(net, count_loads, &loads);
            for (int i = 0; i < RN_FLOWS; i++) {
                int n = 1 + (int)(RND() % RN_HOPS);
                sim_hop_t hops[RN_HOPS];
                double best = INFINITY;
                for (int h = 0; h < n; h++) {
                    uint32_t res = (uint32_t)(RND() % RN_RES);      /* in this order: one */
                    hops[h] = (sim_hop_t){res, weights[RND() % 4]}; /* draw each */
                    best = fmin(best, cap[hops[h].res] / hops[h].w);
                }
                double start = (double)(RND() % 4) * 0.05, lat = (double)(RND() % 3) * 1e-6;
                double bytes = (double)(1 + RND() % 16) * 0.125 * GB;
                want[i] = start + lat + bytes / best;
                assert_int_equal(
                    sim_flow_add(net, 0, start + lat, bytes, hops, (uint32_t)n, (uint64_t)i), 0);
            }
            assert_int_equal(sim_net_run(net, log_any, got[pass]), 0);
            sim_net_destroy(net);
        }
        assert_true(loads > 0); /* the observer did see the general path */
        for (int i = 0; i < RN_FLOWS; i++) {
            if (memcmp(&got[0][i], &got[1][i], sizeof(double)))
                fail_msg("trial %d flow %d: fast %.17g, general %.17g", trial, i, got[0][i],
                         got[1][i]);
            assert_true(fabs(got[0][i] - want[i]) <= 1e-12 * want[i]);
        }
    }
#undef RND
}

/* The event heap pops keys in sorted order, including after moves. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_heap_order(void **state)
{
    (void)state;
    sim_heap_t h = {0};
    enum { N = 1000 };
    double keys[N];
    uint64_t s = 42;
    assert_int_equal(sim_heap_reserve(&h, N - 1), 0);
    for (uint32_t i = 0; i < N; i++) {
        s = util_hash_u64(s);
        keys[i] = (double)(s % 100000);
        sim_heap_set(&h, i, keys[i] + 1e6); /* insert high, then move down */
    }
    for (uint32_t i = 0; i < N; i++)
        sim_heap_set(&h, i, keys[i]);
    sim_heap_remove(&h, 5);
    keys[5] = -1;
    qsort(keys, N, sizeof(double), cmp_double);
    for (uint32_t i = 1; i < N; i++) {
        double k = sim_heap_top_key(&h);
        sim_heap_pop(&h);
        assert_true(k == keys[i]);
    }
    assert_int_equal(h.n, 0);
    sim_heap_free(&h);
}

/* Taking a batch at once (sim_heap_take) gives exactly the (key, id)
 * sequence popping gives: two heaps filled alike with keys from only 50
 * values (many ties, broken by id); one is popped, the other has every
 * key <= 20 taken at once (about 40 % of it), then is popped: the same
 * ids in the same order. A batch under a sixteenth of the heap (keys <= 0:
 * about 2 %) is left in place. */
static void test_heap_take(void **state)
{
    (void)state;
    enum { N = 1000 };
    sim_heap_t a = {0}, b = {0};
    sim_hent_t out[N];
    uint64_t s = 7;
    assert_int_equal(sim_heap_reserve(&a, N - 1), 0);
    assert_int_equal(sim_heap_reserve(&b, N - 1), 0);
    for (uint32_t i = 0; i < N; i++) {
        s = util_hash_u64(s);
        double k = (double)(s % 50);
        sim_heap_set(&a, i, k);
        sim_heap_set(&b, i, k);
    }
    assert_int_equal(sim_heap_take(&b, 0, out), 0);
    assert_int_equal(b.n, N);
    uint32_t m = sim_heap_take(&b, 20, out);
    assert_true(m > N / 16 && m < N);
    assert_int_equal(b.n, N - m);
    for (uint32_t k = 0; k < m; k++) {
        assert_true(out[k].key <= 20);
        assert_int_equal(out[k].id, sim_heap_pop(&a));
    }
    while (a.n) {
        assert_true(sim_heap_top_key(&a) > 20);
        assert_int_equal(sim_heap_pop(&b), sim_heap_pop(&a));
    }
    assert_int_equal(b.n, 0);
    sim_heap_free(&a);
    sim_heap_free(&b);
}

/* Keys set without sifting and put in order at once (sim_heap_set_lazy,
 * sim_heap_fix) pop in exactly the order sifting gives: two heaps filled
 * alike (keys from 40 values: ties broken by id), then half the entries
 * moved, one heap sifting each change, the other lazily. */
static void test_heap_lazy(void **state)
{
    (void)state;
    enum { N = 2000 };
    sim_heap_t a = {0}, b = {0};
    uint64_t s = 3;
    assert_int_equal(sim_heap_reserve(&a, N - 1), 0);
    assert_int_equal(sim_heap_reserve(&b, N - 1), 0);
    for (uint32_t i = 0; i < N; i++) {
        s = util_hash_u64(s);
        sim_heap_set(&a, i, (double)(s % 40));
        sim_heap_set_lazy(&b, i, (double)(s % 40));
    }
    sim_heap_fix(&b);
    for (uint32_t i = 0; i < N; i += 2) {
        s = util_hash_u64(s);
        sim_heap_set(&a, i, (double)(s % 40) + 0.5);
        sim_heap_set_lazy(&b, i, (double)(s % 40) + 0.5);
    }
    sim_heap_fix(&b);
    assert_int_equal(a.n, N);
    assert_int_equal(b.n, N);
    double last = -1;
    while (a.n) {
        assert_true(sim_heap_top_key(&a) >= last);
        last = sim_heap_top_key(&a);
        assert_true(sim_heap_top_key(&b) == last);
        assert_int_equal(sim_heap_pop(&b), sim_heap_pop(&a));
    }
    assert_int_equal(b.n, 0);
    sim_heap_free(&a);
    sim_heap_free(&b);
}

/* The batch sort sorts by bytes (heap.c): keys that differ only in their
 * last bits (a batch lies within a relative 1e-12: 3.5 µs × (1 + j·2^-52)
 * for j < 7, seven neighbouring doubles) and ids that need three bytes
 * (70,000 of them) still come out exactly as popping gives them. */
static void test_heap_take_close_keys(void **state)
{
    (void)state;
    enum { N = 70000 };
    sim_heap_t a = {0}, b = {0};
    sim_hent_t *out = util_malloc(N * sizeof(*out));
    assert_non_null(out);
    uint64_t s = 11;
    assert_int_equal(sim_heap_reserve(&a, N - 1), 0);
    assert_int_equal(sim_heap_reserve(&b, N - 1), 0);
    for (uint32_t i = 0; i < N; i++) {
        s = util_hash_u64(s);
        double k = 3.5e-6;
        for (uint64_t j = s % 7; j > 0; j--)
            k = nextafter(k, 1);
        sim_heap_set(&a, i, k);
        sim_heap_set(&b, i, k);
    }
    uint32_t m = sim_heap_take(&b, 3.5e-6 * (1 + 1e-12), out);
    assert_int_equal(m, N);
    for (uint32_t k = 0; k < m; k++) {
        assert_true(k == 0 || out[k - 1].key <= out[k].key);
        assert_int_equal(out[k].id, sim_heap_pop(&a));
    }
    util_free(out);
    sim_heap_free(&a);
    sim_heap_free(&b);
}

/* Every allocation failure point of a small run returns an error (or the
 * run completes), never crashes. */
static void test_oom(void **state)
{
    (void)state;
    int ok = 0;
    for (long k = 0; k < 60; k++) {
        util_alloc_fail_after(k);
        sim_net_t *net = sim_net_create(3);
        int rc = -1;
        if (net) {
            for (uint32_t r = 0; r < 3; r++)
                sim_net_set_res(net, r, 10 * GB, 0);
            sim_hop_t p[] = {{0, 1}, {1, 1}, {2, 1}};
            rc = sim_flow_add(net, 0, 0, GB, p, 3, 0);
            if (rc == 0) rc = sim_flow_add(net, 0, 0, GB, p + 1, 2, 1);
            if (rc == 0) rc = sim_net_run(net, NULL, NULL);
        }
        util_alloc_fail_after(-1);
        ok += rc == 0;
        sim_net_destroy(net);
    }
    assert_true(ok > 0); /* enough headroom eventually lets it finish */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_flows_half),
        cmocka_unit_test(test_list_holes),
        cmocka_unit_test(test_three_link_static),
        cmocka_unit_test(test_three_link_dynamic),
        cmocka_unit_test(test_oversubscribed_quarter),
        cmocka_unit_test(test_tie_attribution),
        cmocka_unit_test(test_latency),
        cmocka_unit_test(test_spread_weights),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_hop_pool_local_numbers),
        cmocka_unit_test(test_breakdown_rows),
        cmocka_unit_test(test_numbering_kept),
        cmocka_unit_test(test_random_vs_naive),
        cmocka_unit_test(test_ideal_fast_path),
        cmocka_unit_test(test_heap_order),
        cmocka_unit_test(test_heap_take),
        cmocka_unit_test(test_heap_take_close_keys),
        cmocka_unit_test(test_heap_lazy),
        cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
