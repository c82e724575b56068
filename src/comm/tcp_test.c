/*
 * tcp_test.c — the TCP transport on one machine (STRATA_TRANSPORT=tcp makes
 * every rank its own host): the frame header's checks, exact results over
 * IPv4 and IPv6 rendezvous, launcher environments (torchrun's, srun's,
 * MPICH's; refused without a token when they say the job spans hosts), and
 * the faults — a peer SIGKILLed mid-allreduce, a peer writing garbage into
 * its stream, a peer that never calls — each ending every survivor's call
 * with a typed error within twice its deadline.
 *
 * The multi-host version of these cases, on network namespaces, is
 * tests/netns/netns_test.sh (label netns).
 */
#define _GNU_SOURCE
#include "test.h"

#include "ranks_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

/* ==== Frame header ==== */

static comm_tcp_frame_t sample(void)
{
    comm_tcp_frame_t f = {.cid = 0xa1b2c3d4u, .seq = 7, .msg_bytes = 1000, .len = 600};
    f.tag.call = 42;
    f.tag.sig = (comm_sig_t){.coll = COMM_SIG_ALLREDUCE,
                             .dtype = STRATA_FP32,
                             .op = STRATA_MAX,
                             .root = 3,
                             .count = 250};
    return f;
}

static void test_frame_roundtrip(void **state)
{
    (void)state;
    unsigned char h[COMM_TCP_HDR];
    comm_tcp_frame_t f = sample(), g;
    comm_tcp_frame_build(h, &f);
    /* by hand: "STRF", then cid little-endian at 4, seq 7 at 8, len 600 =
     * 0x258 at 36 */
    assert_memory_equal(h, "STRF", 4);
    assert_int_equal(h[4], 0xd4), assert_int_equal(h[7], 0xa1);
    assert_int_equal(h[8], 7);
    assert_int_equal(h[36], 0x58), assert_int_equal(h[37], 0x02);
    const char *why = "";
    assert_int_equal(comm_tcp_frame_parse(h, f.cid, 7, 1024, &g, &why), 0);
    assert_int_equal(g.seq, 7);
    assert_int_equal(g.msg_bytes, 1000);
    assert_int_equal(g.len, 600);
    assert_int_equal(g.tag.call, 42);
    assert_int_equal(g.tag.sig.count, 250);
    assert_int_equal(g.tag.sig.op, STRATA_MAX);
    assert_int_equal(g.tag.sig.root, 3);
}

/* Each corruption is refused with its own reason. */
static void expect_bad(const comm_tcp_frame_t *f, uint32_t cid, uint64_t seq, size_t cap,
                       const char *reason_part)
{
    unsigned char h[COMM_TCP_HDR];
    comm_tcp_frame_build(h, f);
    comm_tcp_frame_t g;
    const char *why = "";
    assert_int_equal(comm_tcp_frame_parse(h, cid, seq, cap, &g, &why), -1);
    assert_non_null(strstr(why, reason_part));
}

static void test_frame_refusals(void **state)
{
    (void)state;
    comm_tcp_frame_t f = sample();
    expect_bad(&f, f.cid + 1, 7, 1024, "another communicator");
    expect_bad(&f, f.cid, 8, 1024, "out of sequence");
    expect_bad(&f, f.cid, 7, 599, "longer than its buffer"); /* 600 > 599 */
    comm_tcp_frame_t g = f;
    g.msg_bytes = 599; /* a 600-byte slice of a 599-byte message */
    expect_bad(&g, g.cid, 7, 1024, "longer than its buffer or its message");
    g = f, g.len = 0;
    expect_bad(&g, g.cid, 7, 1024, "empty frame");
    g = f, g.tag.sig.dtype = STRATA_DTYPE_COUNT;
    expect_bad(&g, g.cid, 7, 1024, "invalid call");
    g = f, g.tag.sig.op = STRATA_OP_COUNT;
    expect_bad(&g, g.cid, 7, 1024, "invalid call");
    unsigned char h[COMM_TCP_HDR];
    comm_tcp_frame_build(h, &f);
    h[0] = 'X';
    const char *why = "";
    assert_int_equal(comm_tcp_frame_parse(h, f.cid, 7, 1024, &g, &why), -1);
    assert_non_null(strstr(why, "bad magic"));
    /* an empty message's frame is valid */
    g = f, g.len = 0, g.msg_bytes = 0;
    comm_tcp_frame_build(h, &g);
    assert_int_equal(comm_tcp_frame_parse(h, g.cid, 7, 1024, &f, &why), 0);
}

/* The failure notice: its bytes by hand, and every refusal. */
static void test_notice_frame(void **state)
{
    (void)state;
    unsigned char h[COMM_TCP_HDR];
    comm_tcp_notice_build(h, 0xa1b2c3d4u, 5, COMM_FAIL_TIMEOUT);
    /* "STRX", cid little-endian at 4, rank 5 at 8, reason 3 at 12, zeros */
    assert_memory_equal(h, "STRX", 4);
    assert_int_equal(h[4], 0xd4), assert_int_equal(h[7], 0xa1);
    assert_int_equal(h[8], 5), assert_int_equal(h[12], 3);
    for (int i = 16; i < COMM_TCP_HDR; i++)
        assert_int_equal(h[i], 0);
    assert_true(comm_tcp_is_notice(h));
    int rank = -1;
    unsigned reason = 0;
    const char *why = "";
    assert_int_equal(comm_tcp_notice_parse(h, 0xa1b2c3d4u, 6, &rank, &reason, &why), 0);
    assert_int_equal(rank, 5), assert_int_equal(reason, COMM_FAIL_TIMEOUT);
    assert_int_equal(comm_tcp_notice_parse(h, 0xa1b2c3d5u, 6, &rank, &reason, &why), -1);
    assert_non_null(strstr(why, "another communicator"));
    assert_int_equal(comm_tcp_notice_parse(h, 0xa1b2c3d4u, 5, &rank, &reason, &why), -1);
    assert_non_null(strstr(why, "outside the communicator")); /* rank 5 of 5 */
    comm_tcp_notice_build(h, 1, 0, 0);
    assert_int_equal(comm_tcp_notice_parse(h, 1, 2, &rank, &reason, &why), -1);
    assert_non_null(strstr(why, "unknown cause"));
    comm_tcp_notice_build(h, 1, 0, COMM_FAIL_MISMATCH + 1);
    assert_int_equal(comm_tcp_notice_parse(h, 1, 2, &rank, &reason, &why), -1);
    assert_non_null(strstr(why, "unknown cause"));
    comm_tcp_notice_build(h, 1, 0, COMM_FAIL_MISMATCH);
    assert_int_equal(comm_tcp_notice_parse(h, 1, 2, &rank, &reason, &why), 0);
    h[47] = 1; /* the padding is zeros: what a sender writes */
    assert_int_equal(comm_tcp_notice_parse(h, 1, 2, &rank, &reason, &why), -1);
    assert_non_null(strstr(why, "stray bytes"));
    h[47] = 0;
    h[3] = 'F'; /* a data frame's magic */
    assert_false(comm_tcp_is_notice(h));
    assert_int_equal(comm_tcp_notice_parse(h, 1, 2, &rank, &reason, &why), -1);
    assert_non_null(strstr(why, "bad magic"));
}

/* ==== Ranks ==== */

static int g_mode;
enum { M_SUM, M_KILL, M_GARBAGE, M_SILENT, M_CHOICE, M_SHORT, M_MISMATCH, M_FORGED };
#define BIG (4u << 20) /* floats: 16 MiB, many frames on each stream */

/* The fault cases' call deadline D: every survivor ends within 2 D. The
 * rest of the fault cases' timing derives from it (the launcher's grace,
 * how long a misbehaving rank waits), never from how fast the CPU is: on
 * a starved machine (load 13-20 beside SCHED_FIFO jobs) a rank can be off
 * the CPU for seconds. */
#define DEADLINE 3.0

/* Until rank r has recorded its outcome (ranks_record), at most until
 * `until`; whether it has. For a misbehaving rank that must stay as it is
 * (silent, or with its stream open) for as long as the rank under test is
 * in its call — however long the scheduler makes that. */
static int wait_reported(int r, double until)
{
    volatile int *done = rrep->done;
    while (!done[r] && util_now() < until) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return done[r];
}

/* Sum allreduce of rank-dependent integers, checked exactly: element i is
 * sum over r of (i % 13 + r) = P·(i % 13) + P(P-1)/2. */
static int allreduce_exact(strata_comm_t *c, size_t n, strata_comm_algo_t algo)
{
    int P = strata_comm_size(c), r = strata_comm_rank(c);
    float *x = malloc(n * sizeof(float));
    if (!x) return 5;
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(i % 13 + (size_t)r);
    strata_call_opts_t o = {.algo = algo};
    strata_status_t st =
        strata_comm_allreduce(c, STRATA_IN_PLACE, x, n, STRATA_FP32, STRATA_SUM, &o);
    int bad = st != STRATA_OK;
    for (size_t i = 0; i < n && !bad; i++)
        bad = x[i] != (float)(P * (int)(i % 13) + P * (P - 1) / 2);
    free(x);
    return bad;
}

static int rank_fn(void *arg)
{
    (void)arg;
    signal(SIGTERM, SIG_IGN); /* survive the launcher's SIGTERM long enough to report */
    const char *v6 = getenv("TCP_TEST_ROOT6");
    if (v6) setenv("STRATA_ROOT", v6, 1);
    strata_comm_t *c = ranks_join();
    int r = strata_comm_rank(c), P = strata_comm_size(c);
    if (!c->tcp || c->nhosts != P) _exit(4); /* every rank its own host */
    double t0 = util_now();
    strata_status_t st = STRATA_OK;
    if (g_mode == M_CHOICE && P == 4) {
        /* P = 4 across hosts that are one kernel (every rank its own
         * process on this machine): the default machine (comm.c
         * hosts_machine) has α = 50 µs between hosts, the link two copies
         * at 5 GB/s (β = 0.4 ns/B), copy C and reduction R at 5 GB/s, and
         * the 4 ranks share min(4, this kernel's CPUs) = cores; beyond
         * them the data terms grow by k = ceil(4 / cores) and each step
         * costs (4 - cores) × 5 µs (lat_oversub) more. sched's cost model,
         * time = α-terms + max(β-terms, γ), by hand:
         *   recdbl        2 steps: 2α + max(2Sβ + S/C, 2S/R)    = 100 µs + 1.0 ns·S
         *   rabenseifner  4 steps: 4α + max(1.5Sβ + S/C, .75S/R) = 200 µs + 0.8 ns·S
         *   ring          6 steps: 6α + max(1.5Sβ, .75S/R)      = 300 µs + 0.6 ns·S
         * (before the oversubscription terms). Rabenseifner is their mean
         * in both terms (β = 2/C), so never strictly cheapest: recursive
         * doubling up to X, the ring above, X where the steps' extra
         * 2 (α + (4 - cores) 10 µs) equals 0.4 ns·S·k:
         *   cores >= 4: 100 µs / 0.2 ns = 500,000 B;
         *   cores 3 (k 2): 110 µs / 0.4 ns = 275,000 B;
         *   cores 2 (k 2): 120 µs / 0.4 ns = 300,000 B;
         *   cores 1 (k 4): 130 µs / 0.8 ns = 162,500 B.
         * Then one call each side of X, checked exactly. */
        long cpus = comm_job_cpus();
        int cores = cpus >= 4 ? 4 : (int)cpus;
        double X = cores >= 4 ? 500000 : cores == 3 ? 275000 : cores == 2 ? 300000 : 162500;
        strata_coll_machine_t m;
        strata_comm_hosts_machine(c, &m);
        int bad = c->kernels != 1 || c->cores != cores || m.cores != (uint32_t)cores ||
                  m.bw_nic != 2.5e9 || m.lat_oversub != 5e-6 ||
                  !strstr(strata_comm_hosts_machine(c, NULL), "one kernel");
        const struct {
            size_t bytes;
            strata_comm_algo_t want;
        } cases[] = {{8, STRATA_COMM_RECDBL},
                     {65536, STRATA_COMM_RECDBL},
                     {(size_t)X - 4000, STRATA_COMM_RECDBL},
                     {(size_t)X + 4000, STRATA_COMM_RING},
                     {64u << 20, STRATA_COMM_RING}};
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            strata_comm_algo_t a =
                strata_comm_algo_for(c, STRATA_COLL_ALLREDUCE, cases[i].bytes, STRATA_COMM_AUTO);
            if (a != cases[i].want) {
                fprintf(stderr, "rank %d: allreduce of %zu B at P = 4 on %d cores: %s, want %s\n",
                        r, cases[i].bytes, cores, strata_comm_algo_name(a),
                        strata_comm_algo_name(cases[i].want));
                bad = 1;
            }
        }
        bad |= strata_comm_schedule_for(c, STRATA_COLL_ALLREDUCE, 65536, STRATA_COMM_AUTO) !=
               STRATA_ALGO_RECDBL;
        bad |= allreduce_exact(c, (size_t)X / 4 - 1000, STRATA_COMM_AUTO) |
               allreduce_exact(c, (size_t)X / 4 + 1000, STRATA_COMM_AUTO);
        /* Hosts apart (a 1 Gbit/s link, β = 8 ns/B, no shared cores: the
         * machine given whole), as before: recdbl 100 µs + 16.2 ns·S,
         * rabenseifner 200 µs + 12.2 ns·S, ring 300 µs + 12.0 ns·S:
         * Rabenseifner from 25,000 B (100 µs / 4 ns) to 500,000 B
         * (100 µs / 0.2 ns); one exact call at 64 KiB on it. */
        m = (strata_coll_machine_t){.nranks = 4,
                                    .per_server = 1,
                                    .servers = 4,
                                    .nics = 1,
                                    .bw_intra = 5e9,
                                    .bw_nic = 125e6,
                                    .lat_intra = 1e-6,
                                    .lat_inter = 50e-6,
                                    .eta_intra = 1,
                                    .reduce_bw = 5e9,
                                    .bw_copy = 5e9};
        bad |= strata_comm_set_hosts_machine(c, &m, "hosts apart") != STRATA_OK;
        bad |= strata_comm_algo_for(c, STRATA_COLL_ALLREDUCE, 24000, STRATA_COMM_AUTO) !=
                   STRATA_COMM_RECDBL ||
               strata_comm_algo_for(c, STRATA_COLL_ALLREDUCE, 26000, STRATA_COMM_AUTO) !=
                   STRATA_COMM_RABENSEIFNER ||
               strata_comm_algo_for(c, STRATA_COLL_ALLREDUCE, 490000, STRATA_COMM_AUTO) !=
                   STRATA_COMM_RABENSEIFNER ||
               strata_comm_algo_for(c, STRATA_COLL_ALLREDUCE, 510000, STRATA_COMM_AUTO) !=
                   STRATA_COMM_RING;
        bad |= allreduce_exact(c, 16384, STRATA_COMM_AUTO);
        st = bad ? STRATA_ERR_PROTOCOL : STRATA_OK;
    } else if (g_mode == M_CHOICE) {
        /* P = 2 across hosts, priced as above (comm.c cross_algo), by hand:
         *   recdbl        α + max(Sβ + S/C, S/R)   =  50 µs + 8.2 ns·S
         *   ring          2α + max(Sβ, 0.5S/R)     = 100 µs + 8.0 ns·S
         *   rabenseifner  2α + max(Sβ + S/C, ...)  = the ring plus the copy
         * so the ring from S = 50 µs / 0.2 ns = 250,000 B (α·C), recursive
         * doubling below; allgather always recursive doubling; on a
         * machine without a reduction or copy rate (a cluster without
         * memory) never the ring (recdbl α + Sβ against the ring's
         * 2α + Sβ). Then one call each side of the switch, checked exactly. */
        int bad = strata_comm_algo_for(c, STRATA_COLL_ALLREDUCE, 249000, STRATA_COMM_AUTO) !=
                      STRATA_COMM_RECDBL ||
                  strata_comm_algo_for(c, STRATA_COLL_ALLREDUCE, 251000, STRATA_COMM_AUTO) !=
                      STRATA_COMM_RING ||
                  strata_comm_algo_for(c, STRATA_COLL_ALLGATHER, 64u << 20, STRATA_COMM_AUTO) !=
                      STRATA_COMM_RECDBL;
        bad |= allreduce_exact(c, 62250, STRATA_COMM_AUTO) |
               allreduce_exact(c, 62750, STRATA_COMM_AUTO);
        strata_coll_machine_t m = {
            .nics = 1, .bw_intra = 5e9, .bw_nic = 125e6, .lat_intra = 1e-6, .lat_inter = 50e-6};
        bad |= strata_comm_set_hosts_machine(c, &m, "no reduction rate") != STRATA_OK ||
               strata_comm_algo_for(c, STRATA_COLL_ALLREDUCE, 64u << 20, STRATA_COMM_AUTO) !=
                   STRATA_COMM_RECDBL;
        st = bad ? STRATA_ERR_PROTOCOL : STRATA_OK;
    } else if (g_mode == M_SUM) {
        int bad = 0;
        for (strata_comm_algo_t a = STRATA_COMM_AUTO; a <= STRATA_COMM_RABENSEIFNER; a++)
            bad |= allreduce_exact(c, 1000, a) | allreduce_exact(c, BIG, a);
        st = bad ? STRATA_ERR_PROTOCOL : STRATA_OK;
    } else {
        float *x = calloc(BIG, sizeof(float));
        strata_call_opts_t o = {.timeout_s = DEADLINE, .algo = STRATA_COMM_RING};
        if (g_mode == M_KILL && r == P - 1) {
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL);
            raise(SIGKILL);
        }
        if (g_mode == M_FORGED && r == 1) {
            /* a notice with a cause no strata rank sends */
            unsigned char h[COMM_TCP_HDR];
            comm_tcp_notice_build(h, comm_tcp_test_cid(c), 1, 99);
            int fd = comm_tcp_test_fd(c, 0, 0);
            if (fd < 0 || send(fd, h, sizeof h, MSG_NOSIGNAL) != (ssize_t)sizeof h) _exit(6);
        }
        if (g_mode == M_GARBAGE && r == 1) {
            static const char junk[COMM_TCP_HDR] = "GET / HTTP/1.0\r\n\r\n";
            int fd = comm_tcp_test_fd(c, 0, 0);
            if (fd < 0 || send(fd, junk, sizeof junk, MSG_NOSIGNAL) != (ssize_t)sizeof junk)
                _exit(6);
        }
        if (g_mode == M_SHORT && r == 1) {
            /* a valid frame of this very call (its first message, S/2
             * bytes at P = 2), but a 1000-byte piece where the sender's cut
             * puts a full frame: a receiver that writes frames in place
             * must refuse it */
            unsigned char h[COMM_TCP_HDR + 1000] = {0};
            comm_tcp_frame_t f = {.cid = comm_tcp_test_cid(c),
                                  .seq = 0,
                                  .msg_bytes = BIG * sizeof(float) / 2,
                                  .tag = {.sig = {.coll = COMM_SIG_ALLREDUCE,
                                                  .dtype = STRATA_FP32,
                                                  .op = STRATA_SUM,
                                                  .count = BIG},
                                          .call = 1},
                                  .len = 1000};
            comm_tcp_frame_build(h, &f);
            int fd = comm_tcp_test_fd(c, 0, 0);
            if (fd < 0 || send(fd, h, sizeof h, MSG_NOSIGNAL) != (ssize_t)sizeof h) _exit(6);
            /* nothing more on this stream (a frame of its own would reach
             * rank 0 out of sequence first): read what rank 0 sent until it
             * closes — while rank 0 is in its call, and at most D after it
             * has reported (it shuts its streams before it returns) */
            struct pollfd pf = {.fd = fd, .events = POLLIN};
            static char sink[1 << 16];
            double until = t0 + 10 * DEADLINE;
            st = STRATA_ERR_TIMEOUT;
            while (st == STRATA_ERR_TIMEOUT && util_now() < until) {
                if (((volatile int *)rrep->done)[0] && until > util_now() + DEADLINE)
                    until = util_now() + DEADLINE;
                if (poll(&pf, 1, 100) == 1) {
                    ssize_t n = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
                    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                        st = STRATA_ERR_PEER;
                }
            }
            ranks_record(c, st, t0);
            strata_comm_destroy(c);
            free(x);
            return 0;
        }
        if (g_mode == M_SILENT && r == 1) {
            /* silent, its streams open, until rank 0 has given up (a
             * fixed sleep past 2 D would close them under a rank 0 that
             * the scheduler started late) */
            wait_reported(0, t0 + 10 * DEADLINE);
            _exit(0);
        }
        t0 = util_now();
        size_t n = g_mode == M_MISMATCH && r == P - 1 ? BIG / 2 : BIG;
        st = strata_comm_allreduce(c, STRATA_IN_PLACE, x, n, STRATA_FP32, STRATA_SUM, &o);
        free(x);
    }
    ranks_record(c, st, t0);
    strata_comm_destroy(c);
    return 0;
}

static void run_mode(int mode, int P)
{
    g_mode = mode;
    ranks_fresh();
    setenv("STRATA_TRANSPORT", "tcp", 1);
    /* a survivor has 2 D from a clock it started before the failure that
     * starts the launcher's grace: with 2 D + 1 s of grace, one that keeps
     * its contract reports before the launcher's SIGKILL (with 2 s it was
     * killed unreported whenever the scheduler kept it off the CPU) */
    ranks_run_grace(P, rank_fn, 2 * DEADLINE + 1);
    unsetenv("STRATA_TRANSPORT");
}

static void test_exact(void **state)
{
    (void)state;
    run_mode(M_SUM, 3);
    for (int r = 0; r < 3; r++) {
        assert_int_equal(rrep->done[r], 1);
        assert_int_equal(rrep->status[r], STRATA_OK);
    }
}

/* The schedule at P = 2 and P = 4 across hosts (rank_fn's M_CHOICE states
 * why). */
static void test_p2_choice(void **state)
{
    (void)state;
    run_mode(M_CHOICE, 2);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(rrep->done[r], 1);
        assert_int_equal(rrep->status[r], STRATA_OK);
    }
}

static void test_p4_choice(void **state)
{
    (void)state;
    run_mode(M_CHOICE, 4);
    for (int r = 0; r < 4; r++) {
        assert_int_equal(rrep->done[r], 1);
        assert_int_equal(rrep->status[r], STRATA_OK);
    }
}

/* A free port on IPv6 loopback (::1), bound once and released; -1 where
 * ::1 cannot be bound. */
static int ipv6_loopback_port(void)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0), port = -1;
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    socklen_t len = sizeof a;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin6_port);
    if (fd >= 0) close(fd);
    return port;
}

/* IPv6 loopback rendezvous; skipped where ::1 cannot be bound. */
static void test_ipv6(void **state)
{
    (void)state;
    int port = ipv6_loopback_port();
    if (port < 0) {
        printf("skipped: IPv6 loopback (::1) is not available here\n");
        skip();
    }
    char root[64];
    snprintf(root, sizeof root, "[::1]:%d", port); /* free again; rank 0 binds it */
    setenv("TCP_TEST_ROOT6", root, 1);
    run_mode(M_SUM, 2);
    unsetenv("TCP_TEST_ROOT6");
    for (int r = 0; r < 2; r++)
        assert_int_equal(rrep->status[r], STRATA_OK);
}

/* Every survivor (ranks in their strata call: not skip_rank) ends with a
 * typed error within 2 D. */
static void expect_survivors(int P, int skip_rank, strata_status_t want)
{
    for (int r = 0; r < P; r++) {
        if (r == skip_rank) continue;
        assert_int_equal(rrep->done[r], 1);
        if (want != STRATA_OK) assert_int_equal(rrep->status[r], want);
        assert_true(rrep->status[r] != STRATA_OK);
        if (!(rrep->elapsed[r] < 2 * DEADLINE))
            fail_msg("rank %d ended after %.3f s, not within 2 x %.0f s", r, rrep->elapsed[r],
                     DEADLINE);
    }
}

static void test_peer_killed(void **state)
{
    (void)state;
    run_mode(M_KILL, 3);
    expect_survivors(3, 2, STRATA_OK); /* PEER, or TIMEOUT if the kill beat the first frame */
    for (int r = 0; r < 2; r++)
        assert_true(rrep->status[r] == STRATA_ERR_PEER || rrep->status[r] == STRATA_ERR_TIMEOUT);
}

static void test_garbage(void **state)
{
    (void)state;
    run_mode(M_GARBAGE, 2);
    assert_int_equal(rrep->status[0], STRATA_ERR_PROTOCOL);
    assert_non_null(strstr(rrep->msg[0], "bad magic"));
    expect_survivors(2, -1, STRATA_OK);
}

/* A notice that fails its checks is the peer's protocol error, not a
 * cause taken on trust. */
static void test_forged_notice(void **state)
{
    (void)state;
    run_mode(M_FORGED, 2);
    assert_int_equal(rrep->status[0], STRATA_ERR_PROTOCOL);
    assert_non_null(strstr(rrep->msg[0], "rank 1 (pid "));
    assert_non_null(
        strstr(rrep->msg[0], "sent a failure notice with an unknown cause on stream 0"));
    expect_survivors(2, -1, STRATA_OK);
}

static void test_short_piece(void **state)
{
    (void)state;
    run_mode(M_SHORT, 2);
    assert_int_equal(rrep->status[0], STRATA_ERR_PROTOCOL);
    assert_non_null(strstr(rrep->msg[0], "sent a 1000-byte piece at byte 0 of its 8388608-byte "
                                         "message, expected 262144 bytes"));
    expect_survivors(2, 1, STRATA_OK); /* rank 1 is the forger, in no call */
    /* and closed its streams at once: rank 1 saw the close, within D of
     * rank 0's report (rank_fn's M_SHORT) */
    assert_int_equal(rrep->done[1], 1);
    assert_int_equal(rrep->status[1], STRATA_ERR_PEER);
}

/* A mismatch found on one host reaches the ranks of the others with its
 * cause. Ring at P = 3, rank 2 calling with half the count: of the two
 * conforming ranks, the one that receives from rank 2 finds the mismatch
 * itself (rank 2's frames name its call), as rank 2 does from its
 * sender's; the other receives only from a conforming rank and learns of
 * it from a failure notice (before notices: STRATA_ERR_PEER, "Broken pipe"
 * or "closed its connection"). Every rank then returns MISMATCH, and the
 * rank that was told names who told it and which rank found it. */
static void test_mismatch_notice(void **state)
{
    (void)state;
    run_mode(M_MISMATCH, 3);
    expect_survivors(3, -1, STRATA_OK);
    int found = 0, told = 0;
    for (int r = 0; r < 3; r++) {
        if (rrep->status[r] != STRATA_ERR_MISMATCH)
            fail_msg("rank %d: status %d (%s), expected MISMATCH", r, rrep->status[r],
                     rrep->msg[r]);
        if (strstr(rrep->msg[r], "mismatched calls: rank ")) {
            found++;
            continue;
        }
        int by, of;
        const char *m = strstr(rrep->msg[r], "allreduce: rank ");
        if (!m || sscanf(m, "allreduce: rank %d (pid", &by) != 1 ||
            !(m = strstr(m, "on another host) reported: rank ")) ||
            sscanf(m, "on another host) reported: rank %d", &of) != 1 ||
            !strstr(m, "found ranks calling with different arguments") || by == r || of == r)
            fail_msg("rank %d: '%s' names no notice of the mismatch", r, rrep->msg[r]);
        told++;
    }
    assert_int_equal(found + told, 3);
    assert_true(found >= 1 && found <= 2); /* rank 2 and the one that hears from it */
    assert_true(told >= 1);                /* the one that never receives from rank 2 */
}

static void test_silent(void **state)
{
    (void)state;
    run_mode(M_SILENT, 2);
    assert_int_equal(rrep->status[0], STRATA_ERR_TIMEOUT);
    /* at its deadline, not before it, and within 2 D */
    if (!(rrep->elapsed[0] >= DEADLINE - 0.1 && rrep->elapsed[0] < 2 * DEADLINE))
        fail_msg("rank 0 timed out after %.3f s, expected [%.1f, %.1f)", rrep->elapsed[0],
                 DEADLINE - 0.1, 2 * DEADLINE);
}

/* ==== Interfaces: STRATA_IFNAME ==== */

/* The interface choice, NCCL_SOCKET_IFNAME's syntax, on the one interface
 * every Linux machine has (lo: 127.0.0.1, and ::1 where IPv6 is on): a
 * prefix, an exact name, a list, a negated list that leaves lo, the
 * rendezvous' family first and the other after it, and names that match
 * nothing refused with the spec in the message. */
static void test_ifname_choice(void **state)
{
    (void)state;
    static const unsigned char v4lo[4] = {127, 0, 0, 1}, v6lo[16] = {[15] = 1};
    const char *lo4[] = {"lo", "l", "=lo", "nosuch,lo", "=nosuch,lo"};
    for (size_t i = 0; i < sizeof lo4 / sizeof lo4[0]; i++) {
        comm_net_addr_t a;
        strata_error_t err = {0};
        assert_int_equal(comm_net_ifaddr(lo4[i], 4, &a, &err), 0);
        assert_int_equal(a.family, 4);
        assert_memory_equal(a.ip, v4lo, 4);
        assert_int_equal(a.port, 0);
    }
    /* "^lo": any interface but lo — never loopback's address (where lo is
     * the only one up: refused) */
    {
        comm_net_addr_t a;
        strata_error_t err = {0};
        if (comm_net_ifaddr("^lo", 4, &a, &err) == 0)
            assert_false((a.family == 4 && a.ip[0] == 127) ||
                         (a.family == 6 && memcmp(a.ip, v6lo, 16) == 0));
        else
            assert_non_null(strstr(err.msg, "STRATA_IFNAME=^lo: no interface that is up"));
    }
    /* IPv6 asked first: ::1 where there is one, else lo's IPv4 address */
    comm_net_addr_t a;
    strata_error_t err = {0};
    assert_int_equal(comm_net_ifaddr("=lo", 6, &a, &err), 0);
    if (ipv6_loopback_port() >= 0) {
        assert_int_equal(a.family, 6);
        assert_memory_equal(a.ip, v6lo, 16);
    } else {
        assert_int_equal(a.family, 4);
        assert_memory_equal(a.ip, v4lo, 4);
    }
    /* nothing matches: an exact name that is only a prefix of lo, a name
     * that is not there */
    const char *none[] = {"=l", "nosuch0"};
    for (size_t i = 0; i < 2; i++) {
        memset(&err, 0, sizeof err);
        assert_int_equal(comm_net_ifaddr(none[i], 4, &a, &err), -1);
        assert_int_equal(err.status, STRATA_ERR_INVALID);
        char want[64];
        snprintf(want, sizeof want, "STRATA_IFNAME=%s: no interface that is up", none[i]);
        assert_non_null(strstr(err.msg, want));
    }
}

/* A job with STRATA_IFNAME=lo: its data streams are on 127.0.0.1 (the
 * stream's local address) and it sums exactly; a rank whose STRATA_IFNAME
 * names no interface fails its start-up with the reason. */
static int ifname_fn(void *arg)
{
    (void)arg;
    signal(SIGTERM, SIG_IGN);
    int me = atoi(getenv("STRATA_RANK"));
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    strata_status_t st = strata_comm_init_env(&c, &err);
    if (st != STRATA_OK) {
        rrep->status[me] = st, rrep->done[me] = 1;
        snprintf(rrep->msg[me], sizeof rrep->msg[me], "%s", err.msg);
        return 3;
    }
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int fd = comm_tcp_test_fd(c, 1 - me, 0);
    if (fd < 0 || getsockname(fd, (struct sockaddr *)&sa, &len) != 0 || sa.sin_family != AF_INET ||
        ntohl(sa.sin_addr.s_addr) != INADDR_LOOPBACK)
        st = STRATA_ERR_PROTOCOL;
    if (st == STRATA_OK && allreduce_exact(c, 100000, STRATA_COMM_AUTO)) st = STRATA_ERR_PROTOCOL;
    ranks_record(c, st, util_now());
    strata_comm_destroy(c);
    return 0;
}

static void test_ifname_job(void **state)
{
    (void)state;
    ranks_fresh();
    setenv("STRATA_TRANSPORT", "tcp", 1);
    setenv("STRATA_IFNAME", "=lo", 1);
    ranks_run(2, ifname_fn);
    for (int r = 0; r < 2; r++)
        assert_int_equal(rrep->status[r], STRATA_OK);
    ranks_fresh();
    setenv("STRATA_IFNAME", "=nosuch0", 1);
    setenv("STRATA_TIMEOUT", "20", 1);
    assert_int_not_equal(ranks_run(2, ifname_fn), 0);
    unsetenv("STRATA_TIMEOUT");
    unsetenv("STRATA_IFNAME");
    unsetenv("STRATA_TRANSPORT");
    int named = 0;
    for (int r = 0; r < 2; r++)
        if (rrep->done[r] && rrep->status[r] != STRATA_OK)
            named += strstr(rrep->msg[r], "STRATA_IFNAME==nosuch0: no interface") != NULL;
    assert_true(named >= 1); /* the rank that opened its listener first says why */
}

/* ==== Launchers' environments ==== */

/* Which launcher a rank pretends to run under: its variables alone (no
 * STRATA_RANK/SIZE/ROOT; the token stays, as a user exports it). */
static enum { L_TORCHRUN, L_SRUN, L_MPICH } g_launcher;

static void launcher_env(const char *rank, const char *size, const char *local)
{
    if (g_launcher == L_TORCHRUN) {
        /* the rendezvous is at MASTER_ADDR on the token's port (not
         * MASTER_PORT: torch's own store holds that) */
        setenv("RANK", rank, 1), setenv("WORLD_SIZE", size, 1), setenv("LOCAL_RANK", local, 1);
        setenv("LOCAL_WORLD_SIZE", size, 1);
        setenv("MASTER_ADDR", "127.0.0.1", 1), setenv("MASTER_PORT", "29500", 1);
    } else if (g_launcher == L_SRUN) { /* loopback at the token's port */
        setenv("SLURM_PROCID", rank, 1), setenv("SLURM_NTASKS", size, 1);
        setenv("SLURM_LOCALID", local, 1), setenv("SLURM_NNODES", "1", 1);
        setenv("SLURM_JOB_ID", "4711", 1), setenv("SLURM_STEP_ID", "0", 1);
    } else { /* MPICH's Hydra */
        setenv("PMI_RANK", rank, 1), setenv("PMI_SIZE", size, 1);
        setenv("MPI_LOCALNRANKS", size, 1);
    }
}

/* A rank of a 2-rank job from g_launcher's variables: it must get the rank
 * the launcher gave it and an exact allreduce. */
static int launcher_fn(void *arg)
{
    (void)arg;
    char rank[16], size[16], local[16];
    snprintf(rank, sizeof rank, "%s", getenv("STRATA_RANK"));
    snprintf(size, sizeof size, "%s", getenv("STRATA_SIZE"));
    snprintf(local, sizeof local, "%s", getenv("STRATA_LOCAL_RANK"));
    unsetenv("STRATA_RANK"), unsetenv("STRATA_SIZE"), unsetenv("STRATA_LOCAL_RANK");
    unsetenv("STRATA_ROOT"), unsetenv("STRATA_ROOT_FD");
    launcher_env(rank, size, local);
    strata_comm_t *c = ranks_join();
    strata_status_t st = allreduce_exact(c, 1000, STRATA_COMM_AUTO) ? STRATA_ERR_PROTOCOL : 0;
    if (strata_comm_rank(c) != atoi(rank) || strata_comm_size(c) != atoi(size))
        st = STRATA_ERR_PROTOCOL;
    ranks_record(c, st, util_now());
    strata_comm_destroy(c);
    return 0;
}

static void run_launcher(int launcher)
{
    g_launcher = launcher;
    ranks_fresh();
    setenv("STRATA_TRANSPORT", "tcp", 1);
    ranks_run(2, launcher_fn);
    unsetenv("STRATA_TRANSPORT");
    for (int r = 0; r < 2; r++) {
        assert_int_equal(rrep->done[r], 1);
        assert_int_equal(rrep->status[r], STRATA_OK);
    }
}

static void test_torchrun_env(void **state)
{
    (void)state;
    run_launcher(L_TORCHRUN);
}

static void test_srun_env(void **state)
{
    (void)state;
    run_launcher(L_SRUN);
}

static void test_mpich_env(void **state)
{
    (void)state;
    run_launcher(L_MPICH);
}

/* Each launcher saying the job spans hosts (srun: 2 nodes; Hydra: 1 of
 * the 2 ranks on this host; torchrun: LOCAL_WORLD_SIZE 1 of 2) without
 * STRATA_TOKEN: refused with the reason, never a guessable default. */
static void test_launcher_spanning_hosts_needs_token(void **state)
{
    (void)state;
    static const char *const vars[] = {"STRATA_TOKEN", "STRATA_ROOT", "STRATA_RANK", "STRATA_SIZE",
                                       NULL};
    for (int i = 0; vars[i]; i++)
        unsetenv(vars[i]);
    for (int l = L_TORCHRUN; l <= L_MPICH; l++) {
        g_launcher = l;
        launcher_env("1", "2", "0"); /* one host's values, then this launcher's word */
        if (l == L_TORCHRUN) setenv("LOCAL_WORLD_SIZE", "1", 1);
        if (l == L_SRUN) setenv("SLURM_NNODES", "2", 1);
        if (l == L_MPICH) setenv("MPI_LOCALNRANKS", "1", 1);
        strata_comm_t *c = NULL;
        strata_error_t err = {0};
        assert_int_equal(strata_comm_init_env(&c, &err), STRATA_ERR_INVALID);
        assert_null(c);
        assert_non_null(strstr(err.msg, "spans several hosts"));
        assert_non_null(strstr(err.msg, "STRATA_TOKEN"));
        static const char *const set[] = {
            "RANK",          "WORLD_SIZE",   "LOCAL_RANK",      "LOCAL_WORLD_SIZE",
            "MASTER_ADDR",   "MASTER_PORT",  "SLURM_PROCID",    "SLURM_NTASKS",
            "SLURM_LOCALID", "SLURM_NNODES", "SLURM_JOB_ID",    "SLURM_STEP_ID",
            "PMI_RANK",      "PMI_SIZE",     "MPI_LOCALNRANKS", NULL};
        for (int i = 0; set[i]; i++)
            unsetenv(set[i]);
    }
}

/* One rank of a job started elsewhere (tests/netns/netns_test.sh): join,
 * then allreduce 16 MiB with a deadline of TCP_TEST_RANK seconds until a
 * call fails (or 2000 calls pass), and print the outcome on one line:
 * "rank R call N STATUS SECONDS message" (STATUS the strata_status_t number,
 * SECONDS the last call's), or "init STATUS SECONDS message". */
static int external_rank(double deadline)
{
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    double t0 = util_now();
    strata_status_t st = strata_comm_init_env(&c, &err);
    if (st != STRATA_OK) {
        printf("init %d %.3f %s\n", (int)st, util_now() - t0, err.msg);
        return 3;
    }
    float *x = calloc(BIG, sizeof(float));
    strata_call_opts_t o = {.timeout_s = deadline};
    int calls = 0;
    for (; calls < 2000 && st == STRATA_OK && x; calls++) {
        t0 = util_now();
        st = strata_comm_allreduce(c, STRATA_IN_PLACE, x, BIG, STRATA_FP32, STRATA_SUM, &o);
    }
    printf("rank %d call %d %d %.3f %s\n", strata_comm_rank(c), calls, (int)st, util_now() - t0,
           strata_comm_errmsg(c));
    free(x);
    strata_comm_destroy(c);
    return 0;
}

int main(void)
{
    const char *ext = getenv("TCP_TEST_RANK");
    if (ext) return external_rank(atof(ext));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_roundtrip),
        cmocka_unit_test(test_frame_refusals),
        cmocka_unit_test(test_exact),
        cmocka_unit_test(test_ipv6),
        cmocka_unit_test(test_peer_killed),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_silent),
        cmocka_unit_test(test_mismatch_notice),
        cmocka_unit_test(test_forged_notice),
        cmocka_unit_test(test_notice_frame),
        cmocka_unit_test(test_torchrun_env),
        cmocka_unit_test(test_p2_choice),
        cmocka_unit_test(test_p4_choice),
        cmocka_unit_test(test_short_piece),
        cmocka_unit_test(test_srun_env),
        cmocka_unit_test(test_mpich_env),
        cmocka_unit_test(test_ifname_choice),
        cmocka_unit_test(test_ifname_job),
        cmocka_unit_test(test_launcher_spanning_hosts_needs_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
