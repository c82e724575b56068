/*
 * nccl.c — what NCCL would pick (`strata coll --select nccl`): its
 * algorithm and protocol, chosen by NCCL's public tuning model
 * (src/graph/tuning.cc; constants transcribed in shared/reference/nccl.md
 * §2.2-2.4, NCCL ~2.30), beside strata's own best.
 *
 * NCCL predicts time = latency + bytes / (1000 × algorithm bandwidth) for
 * every enabled (algorithm, protocol) and runs the cheapest. Its inputs are
 * per-architecture latency tables (base + per-hop by hardware class:
 * NVLink, PCI, network) and bandwidths its topology search finds. Here the
 * search's result is replaced by strata's derived machine: the per-GPU
 * scale-up bandwidth (bw_intra) and the server's NIC share (min(NICs,
 * ranks per server) × bw_nic), which is what the search's channels add up
 * to (nChannels × per-channel speed). NVLS's per-channel speed is
 * quantised to the search's speed arrays, as the search does (search.cc):
 * its NVLS graph has one channel per head GPU, and the tuning model counts
 * those channels, not the 16-32 CTAs the NVLS kernel launches
 * (NVLS_NCHANNELS_SM90/SM100, transport/nvls.cc). On one server the search
 * is forced to one channel per GPU (minChannels = maxChannels = min(32,
 * GPUs)); each channel takes its speed from every GPU's NVSwitch link and
 * once more at its head GPU (ncclTopoSearchTryNvls), so the speed is the
 * largest of the intra array with (channels + 1) x speed within the GPU's
 * bandwidth: 8 H100 (360 GB/s) run 8 channels of 40, 8 H800 (160) 8 of 15.
 * Across servers the search starts each channel at a NIC and makes that
 * NIC's local GPU its head (ncclTopoSearchRecNet), so there are at most as
 * many channels as NICs, at a speed of the inter array within the NIC; it
 * takes the graph with the most channels, then the most channels x speed.
 * Its second pass raises only the network speed (bwInter) while it is
 * below twice the NVLink speed and the NIC carries it. 8 H100 with 8 NDR
 * NICs: 8 channels, NVLink 40, network 48; with 4 NICs: 4 channels of 48.
 *
 * The tuning model changed across releases; the machine's nccl_version
 * (`--nccl-version`) selects the generation of tuning.cc it follows (the
 * table below, read off NVIDIA/nccl's tags v2.19.3-1 .. v2.30.4-1). The
 * change that moves large messages is 2.28's: before it NVLS and NVLSTree
 * took min(bwIntra, bwInter) per channel (NVLSTree bwInter / 2 beyond two
 * nodes) and converted busBw to algBw by 5/6, so NVLSTree never won large
 * messages past two nodes of 8 GPUs with 8 NICs (<= 8 x 24 x 5/6 = 160 GB/s of algBw
 * against the ring's ~186); from 2.28 NVLSTree's per-channel figure is
 * min(bwIntra x nvlsEfficiency x (nCh - 1)/nCh x 2, bwInter, a per-channel
 * cap) converted like the ring's. The search (channels, speeds) is the
 * current one for every release: its changes since 2.19 (dual-NIC NVLS
 * graphs in 2.22, 32 NVLS heads in 2.25, SM90's speed 11 in the intra
 * array) do not touch the servers modelled here.
 *
 * The model only chooses. What the choice gets is strata's price of the
 * schedule NCCL runs (ring, tree, innet for NVLS/CollNet, nvlstree, PAT ≈
 * bruck) with the protocol's payload efficiency applied to its bandwidth
 * term (strata_link_protocol: LL 8 data bytes in 16, LL128 120 in 128,
 * Simple 1; nccl.md §2.5). O(1) per call.
 */
#include "sched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { NA_TREE, NA_RING, NA_COLLNET_DIRECT, NA_COLLNET_CHAIN, NA_NVLS, NA_NVLS_TREE, NA_PAT };
enum { NP_LL, NP_LL128, NP_SIMPLE };
enum { HW_NVLINK, HW_PCI, HW_NET };
enum { CC_VOLTA, CC_AMPERE, CC_HOPPER, CC_BLACKWELL };

static const char *const algo_names[STRATA_NCCL_ALGOS] = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
static const char *const proto_names[STRATA_NCCL_PROTOS] = {"LL", "LL128", "Simple"};

/* ==== NCCL's constants (nccl.md §2.3, §2.4; tuning.cc) ==== */

/* baseLatencies[algo][proto], us */
static const double base_lat[STRATA_NCCL_ALGOS][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0},
                                                      {0, 0, 0},        {0, 0, 0},        {0, 0, 0},
                                                      {8.0, 8.0, 8.0}};
/* hwLatencies[hw][algo][proto], us */
static const double hw_lat[3][STRATA_NCCL_ALGOS][3] = {
    {{0.6, 1.25, 4.0},
     {0.6, 1.9, 3.4},
     {0, 0, 3.7},
     {0, 0, 2.8},
     {0, 0, 25},
     {0, 0, 25},
     {0, 0, 4.0}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
    {{5.0, 8.5, 14},
     {2.7, 4.0, 14.0},
     {0, 0, 31},
     {0, 0, 30},
     {0, 0, 18},
     {0, 0, 20.9},
     {0, 0, 14}}};
/* [compcap][nodes scale: 1, 2, >2 nodes], GB/s. Hopper's llMaxBw and
 * Blackwell's per-channel rows changed across releases: they come from
 * the release's generation (gens below); these rows did not change. */
static const double ll_max_bw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282, 90, 70}};
static const double per_ch_ring_ll128[3][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}};
static const double per_ch_tree_ll128[3][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}};
static const double per_ch_tree[3][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};
static const double per_ch_nvls_tree[3][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}};
static const double nvls_eff[4] = {0, 0, 0.85, 0.74};
/* Tree AllReduce bandwidth correction per log2(bytes / 64), 64 B .. 256 MiB */
static const double tree_corr[3][24] = {{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
                                         .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
                                        {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
                                         .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
                                        {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
                                         .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
/* The search's per-channel speeds, GB/s (search.cc; nccl.md §2.5): the
 * intra arrays on one server, the inter arrays across servers */
static const double speeds_generic[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
static const double speeds_sm90[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
static const double speeds_sm100[] = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
static const double inter_generic[] = {48, 30, 28, 24, 20, 18,  15,  12,   10,  9,
                                       7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
static const double inter_sm90[] = {48, 45, 42, 40, 30,  24,  22,   20,  17.5,
                                    15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};
static const double inter_sm100[] = {96, 86,   80, 48, 45.1, 42, 40,  30,  24,   22,
                                     20, 17.5, 15, 12, 6,    3,  2.4, 1.2, 0.24, 0.12};
/* ==== Releases (tuning.cc at each tag of NVIDIA/nccl) ==== */

/* Blackwell's per-channel rows (GB/s; index 1 nodes, 2 nodes, > 2 nodes):
 * Ring/LL128, Tree/LL128, Tree, NVLSTree. 2.25-2.27 doubled Hopper's. */
static const double bw_2_25[4][3] = {
    {73.4, 73.4, 73.4}, {73.4, 73.4, 58.0}, {77.4, 82.8, 72.0}, {0, 0, 0}};
static const double bw_2_28[4][3] = {
    {73.4, 73.4, 73.4}, {55.6, 31.67, 20.0}, {70.0, 42.8, 24.0}, {0, 96.0, 43.1}};
static const double bw_2_28_9[4][3] = {
    {73.4, 34.6, 73.4}, {55.6, 31.67, 20.0}, {70.0, 42.8, 24.0}, {0, 96.0, 43.8}};
static const double bw_2_29[4][3] = {
    {34.5, 34.6, 34.5}, {55.6, 31.67, 20.0}, {70.0, 42.8, 24.0}, {0, 96.0, 43.8}};
static const double bw_2_30[4][3] = {
    {40.0, 40.0, 40.0}, {55.6, 31.67, 20.0}, {70.0, 42.8, 24.0}, {0, 96.0, 80.0}};

/* What differs between generations of the tuning model, from `from` on.
 * Not told apart: CollNet allgather / reducescatter (from 2.20; CollNet
 * needs network SHARP, which no preset turns on). */
typedef struct nccl_gen {
    uint32_t from;        /* first release, NCCL_VERSION_CODE */
    const char *tag;      /* the releases, for reports */
    double tree_base;     /* baseLatencies[Tree][Simple], us */
    double tree_hw[3];    /* hwLatencies[NVLink, PCI, NET][Tree][Simple], us */
    double nvls_nvlink;   /* hwLatencies[NVLink][NVLS, NVLSTree][Simple], us */
    double nvlstree_net;  /* hwLatencies[NET][NVLSTree][Simple], us */
    double ll_hopper[3];  /* llMaxBws, Hopper's row */
    bool ring_ll_quarter; /* Ring/LL busBw x 1/4 (1/3: one server, not AR or reduce); else 1/2 */
    bool ll128_ppn1;      /* Ring/LL128 x 0.7 with one rank per server (else 0.92) */
    bool net_steps_2n;    /* the ring allreduce's latency: 2N network steps, else 2(N - 1) */
    bool ppn1_tree_net;   /* one rank per server: the Tree's network latency for every algorithm */
    bool pat;             /* PAT for allgather and reducescatter */
    bool agrs_raw; /* non-ring allgather / reducescatter busBw is the algBw (else NVLS x 5/6) */
    bool nvls_eff; /* NVLS as from 2.28 (see the file comment) */
    const double (*blackwell)[3]; /* Blackwell's rows; NULL: sm100 not supported */
} nccl_gen_t;

/* Columns: from, tag, tree_base, tree_hw, nvls_nvlink, nvlstree_net,
 * ll_hopper; ring_ll_quarter, ll128_ppn1, net_steps_2n, ppn1_tree_net,
 * pat, agrs_raw, nvls_eff; blackwell. */
/* clang-format off */
static const nccl_gen_t gens[] = {
    {21900, "2.19-2.20",     0,   {28, 28, 28},   23, 14,   {87.7, 22.5, 19.0},
     true,  true,  true,  false, false, false, false, NULL},
    {22100, "2.21-2.22",     0,   {28, 28, 28},   25, 14,   {141.0, 45.0, 35.0},
     false, true,  true,  false, false, false, false, NULL},
    {22300, "2.23-2.24",     8.4, {4.0, 4.0, 14}, 25, 14,   {141.0, 45.0, 35.0},
     false, false, false, true,  true,  true,  false, NULL},
    {22500, "2.25-2.27",     8.4, {4.0, 4.0, 14}, 25, 14,   {141.0, 45.0, 35.0},
     false, false, false, true,  true,  true,  false, bw_2_25},
    {22800, "2.28.0-2.28.7", 8.4, {4.0, 4.0, 14}, 25, 14,   {141.0, 45.0, 35.0},
     false, false, false, true,  true,  true,  true,  bw_2_28},
    {22809, "2.28.9",        8.4, {4.0, 4.0, 14}, 25, 20.9, {141.0, 45.0, 35.0},
     false, false, false, true,  true,  true,  true,  bw_2_28_9},
    {22900, "2.29",          8.4, {4.0, 4.0, 14}, 25, 20.9, {141.0, 45.0, 35.0},
     false, false, false, true,  true,  true,  true,  bw_2_29},
    {23000, "2.30+",         8.4, {4.0, 4.0, 14}, 25, 20.9, {141.0, 45.0, 35.0},
     false, false, false, true,  true,  true,  true,  bw_2_30},
};
/* clang-format on */
#define NGENS (sizeof(gens) / sizeof(gens[0]))

/* The generation release `code` follows; 0: the newest. */
static const nccl_gen_t *gen_of(uint32_t code)
{
    const nccl_gen_t *g = &gens[NGENS - 1];
    if (code == 0) return g;
    for (size_t i = 0; i < NGENS && gens[i].from <= code; i++)
        g = &gens[i];
    return g;
}

const char *strata_nccl_version_model(uint32_t code)
{
    return gen_of(code)->tag;
}

strata_status_t strata_nccl_version_parse(const char *text, uint32_t *code_p, strata_error_t *err)
{
    unsigned long v[3] = {0, 0, 0};
    const char *s = text ? text : "";
    char *end = NULL;
    int n = 0;
    if (*s == 'v') s++; /* a git tag: v2.19.3-1 */
    while (n < 3 && *s >= '0' && *s <= '9') {
        v[n++] = strtoul(s, &end, 10);
        s = end;
        if (s[0] != '.' || s[1] < '0' || s[1] > '9') break; /* a dot only before a digit */
        s++;
    }
    /* what may follow: a package suffix ("-1") or a build ("+cuda12.9") */
    if (n < 2 || (*s && *s != '-' && *s != '+') || v[1] > 99 || v[2] > 99)
        return strata_error_set(err, STRATA_ERR_PARSE,
                                "NCCL version '%s': expected MAJOR.MINOR[.PATCH] like 2.19.3",
                                text ? text : "");
    uint32_t code = (uint32_t)(v[0] * 10000 + v[1] * 100 + v[2]);
    if (v[0] != 2 || code < gens[0].from)
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "NCCL version '%s': tuning models are transcribed from 2.19 on",
                                text);
    *code_p = code;
    return STRATA_OK;
}

/* NVLS heads, hence graph channels, at most NCCL_MAX_NVLS_ARITY (device.h) */
#define NVLS_MAX_ARITY 32.0
/* The search's first pass gives up on slower speeds once one is at most
 * this fraction of the best graph's (search.cc) */
#define SEARCH_SPEED_FLOOR 0.49
/* Host network overhead per message, us (getNetOverhead: x86 Intel 1.0, x3 for Simple) */
#define NET_OVERHEAD_US 1.0

/* Buffers and steps (init.cc DEFAULT_*BUFFSIZE, device.h): NCCL_STEPS slots
 * per connection; Simple 4 MiB; LL 8 lines of 16 B per thread x 512
 * threads x 8 steps; LL128 120 8-byte words per thread x 640 threads x
 * 8 steps */
#define NCCL_STEPS        8.0
#define SIMPLE_BUFF_BYTES 4194304.0
#define LL_BUFF_BYTES     (8.0 * 512 * NCCL_STEPS * 16)
#define LL128_BUFF_BYTES  (120.0 * 640 * NCCL_STEPS * 8)

/* ==== Inputs ==== */

typedef struct nccl_in {
    int cc, scale;         /* compcap index, node-scale index */
    int intra_hw;          /* HW_NVLINK or HW_PCI */
    double P, N, ppn;      /* ranks, nodes, ranks per node */
    double up, net;        /* GB/s: per-GPU scale-up, per-GPU share of the NICs */
    double nic, heads;     /* GB/s of one NIC; NICs per server that can head NVLS */
    bool nvls, collnet;    /* NVLink SHARP, network SHARP */
    bool ll128;            /* LL128 enabled by default */
    const nccl_gen_t *gen; /* the release's tuning model */
    /* per-channel ceilings for this architecture and node scale, GB/s:
     * llMaxBw, Ring/LL128, Tree/LL128, Tree, NVLSTree */
    double ll_max, ring_ll128, tree_ll128, tree, nvls_tree;
} nccl_in_t;

static int compcap_of(const char *kind)
{
    if (!strcmp(kind, "nvlink1") || !strcmp(kind, "nvlink2")) return CC_VOLTA;
    if (!strcmp(kind, "nvlink4")) return CC_HOPPER;
    if (!strcmp(kind, "nvlink5")) return CC_BLACKWELL;
    return CC_AMPERE; /* nvlink3, PCIe boxes (Ampere/Ada), other vendors' links */
}

static nccl_in_t inputs(const strata_coll_machine_t *m)
{
    nccl_in_t in = {.P = m->nranks, .N = m->servers > 1 ? m->servers : 1};
    in.ppn = in.P / in.N;
    in.cc = compcap_of(m->intra_kind);
    in.scale = in.N <= 1 ? 0 : in.N <= 2 ? 1 : 2;
    in.intra_hw = strncmp(m->intra_kind, "nvlink", 6) ? HW_PCI : HW_NVLINK;
    /* one rank a server with several NICs (rails): no scale-up hop bounds
     * it (bw_intra is then one NIC's figure, strata_coll_machine_from_topo) */
    in.up = m->per_server == 1 && in.N > 1 && sched_rails(m) > 1 ? INFINITY : m->bw_intra / 1e9;
    /* the ring's and tree's channels rotate over every NIC the GPUs reach
     * best (sched_rails); NVLS heads are GPUs, one NIC each */
    double K = m->nics < m->per_server ? m->nics : m->per_server;
    in.net = in.N > 1 ? sched_rails(m) * m->bw_nic / 1e9 : INFINITY;
    in.nic = m->bw_nic / 1e9;
    in.heads = fmin(K, NVLS_MAX_ARITY); /* each NIC's own GPU, one per NIC */
    in.nvls = m->switch_reduce && in.cc >= CC_HOPPER;
    in.collnet = m->net_reduce && in.N > 1;
    /* LL128 on by default with NVLink inside (and a NIC behind a PCIe
     * switch across), Volta/Ampere/Hopper+ (nccl.md §2.4) */
    in.ll128 = in.intra_hw == HW_NVLINK;
    in.gen = gen_of(m->nccl_version);
    int i = in.scale;
    in.ll_max = in.cc == CC_HOPPER ? in.gen->ll_hopper[i] : ll_max_bw[in.cc][i];
    if (in.cc == CC_BLACKWELL) { /* all 0 where the release has no sm100 */
        const double(*bw)[3] = in.gen->blackwell;
        in.ring_ll128 = bw ? bw[0][i] : 0, in.tree_ll128 = bw ? bw[1][i] : 0;
        in.tree = bw ? bw[2][i] : 0, in.nvls_tree = bw ? bw[3][i] : 0;
    } else {
        in.ring_ll128 = per_ch_ring_ll128[in.cc][i], in.tree_ll128 = per_ch_tree_ll128[in.cc][i];
        in.tree = per_ch_tree[in.cc][i], in.nvls_tree = per_ch_nvls_tree[in.cc][i];
    }
    return in;
}

/* Whether the release knows the architecture (sm100 from 2.25.1). */
static bool arch_supported(const nccl_in_t *in)
{
    return in->cc != CC_BLACKWELL || in->gen->blackwell;
}

/* The search's speed array: intra (one server) or inter (across servers),
 * by compute capability; its length in *n_p. */
static const double *speed_array(const nccl_in_t *in, bool inter, size_t *n_p)
{
#define ARRAY(a) (*n_p = sizeof(a) / sizeof(a[0]), a)
    if (in->cc == CC_HOPPER) return inter ? ARRAY(inter_sm90) : ARRAY(speeds_sm90);
    if (in->cc == CC_BLACKWELL) return inter ? ARRAY(inter_sm100) : ARRAY(speeds_sm100);
    return inter ? ARRAY(inter_generic) : ARRAY(speeds_generic);
#undef ARRAY
}

/* Index of the largest speed of s[0..n-1] not above bw (the search tries
 * them top down until its channels fit), else the last. */
static size_t speed_index(const double *s, size_t n, double bw)
{
    size_t i = 0;
    while (i + 1 < n && s[i] > bw)
        i++;
    return i;
}

static double quantise(const nccl_in_t *in, double bw)
{
    size_t n;
    const double *s = speed_array(in, false, &n);
    return s[speed_index(s, n, bw)];
}

/* NCCL's NVLS graph (see the file comment): channels, NVLink speed
 * (bwIntra) and network speed (bwInter) per channel, GB/s. */
typedef struct nvls_graph {
    double nch, intra, inter;
} nvls_graph_t;

/* Channels at speed s across servers: one per NIC, each NIC carrying s,
 * every GPU's NVSwitch link s per channel and its head's once more. */
static double nvls_channels_at(const nccl_in_t *in, double s)
{
    if (s > in->nic) return 0;
    return fmax(0, fmin(in->heads, floor(in->up / s + 1e-9) - 1));
}

static nvls_graph_t nvls_graph(const nccl_in_t *in)
{
    nvls_graph_t g = {0};
    size_t n, i;
    if (in->N <= 1) { /* every GPU a head: (nch + 1) x speed within its link */
        const double *s = speed_array(in, false, &n);
        g.nch = fmin(in->ppn, NVLS_MAX_ARITY);
        i = speed_index(s, n, in->up / (g.nch + 1) + 1e-9);
        g.intra = g.inter = s[i];
    } else { /* pass 1: the most channels, then the most channels x speed */
        const double *s = speed_array(in, true, &n);
        double max_ch = fmin(in->ppn, NVLS_MAX_ARITY);
        size_t best = n;
        for (i = speed_index(s, n, in->nic); i < n; i++) {
            if (g.nch > 0 && s[i] / g.intra <= SEARCH_SPEED_FLOOR) break;
            double c = nvls_channels_at(in, s[i]);
            if (c > g.nch || c * s[i] > g.nch * g.intra)
                g.nch = c, g.intra = g.inter = s[i], best = i;
            if (g.nch >= max_ch) break; /* every GPU a head: the search's optimum */
        }
        if (best == n) return g;
        i = best;
    }
    /* pass 2: raise the network speed alone while below twice the NVLink
     * speed and the NIC carries it (one server: no NIC, the array's top) */
    const double *s = speed_array(in, in->N > 1, &n);
    while (i > 0 && g.inter < 2 * g.intra && (in->N <= 1 || s[i - 1] <= in->nic))
        g.inter = s[--i];
    return g;
}

/* ==== Bandwidth (GB/s of algorithm bandwidth, 0: not available) ==== */

static bool algo_applies(const nccl_in_t *in, strata_coll_t c, int a)
{
    bool ar = c == STRATA_COLL_ALLREDUCE,
         agrs = c == STRATA_COLL_ALLGATHER || c == STRATA_COLL_REDUCE_SCATTER;
    switch (a) {
    case NA_RING:
        return ar || agrs || c == STRATA_COLL_BROADCAST || c == STRATA_COLL_REDUCE;
    case NA_TREE:
        return ar;
    case NA_COLLNET_DIRECT:
        return in->collnet && in->nvls && (ar || agrs);
    case NA_COLLNET_CHAIN:
        return in->collnet && ar;
    case NA_NVLS: /* across servers only with CollNet (SHARP) enabled (tuning.cc) */
        return in->nvls && (ar || agrs) && (in->N <= 1 || in->collnet);
    case NA_NVLS_TREE:
        return in->nvls && in->N > 1 && ar;
    case NA_PAT:
        return in->gen->pat && agrs && in->ppn == 1 && in->N > 1;
    default:
        return false;
    }
}

/* NVLS and NVLSTree busBw (Simple only): per channel the NVLink speed
 * after NCCL's NVLS efficiency, both directions for an allreduce, against
 * the network speed (twice for a two-node NVLSTree) and NVLSTree's
 * per-channel cap; times the channels (tuning.cc, 2.28 on). Before 2.28:
 * min(bwIntra, bwInter), NVLSTree's bwInter halved beyond two nodes. */
static double nvls_bus_bw(const nccl_in_t *in, strata_coll_t c, int a, int p)
{
    nvls_graph_t g = nvls_graph(in);
    if (p != NP_SIMPLE) return 0;
    if (!in->gen->nvls_eff)
        return g.nch * fmin(g.intra, a == NA_NVLS_TREE && in->N > 2 ? g.inter / 2 : g.inter);
    if (g.nch < 2) return 0; /* NVLS needs 2 channels (tuning.cc) */
    double intra = g.intra * nvls_eff[in->cc] * (g.nch - 1) / g.nch;
    intra *= c == STRATA_COLL_ALLREDUCE ? 2 : (in->ppn - 1) / in->ppn;
    double inter = g.inter * (a == NA_NVLS_TREE && in->N <= 2 ? 2 : 1);
    double bw = fmin(intra, inter);
    if (a == NA_NVLS_TREE) bw = fmin(bw, in->nvls_tree);
    return g.nch * bw;
}

/* Ring/LL's share of busBw: 1/2; up to 2.20, 1/4 across servers or for
 * an allreduce or reduce, 1/3 otherwise. */
static double ring_ll_share(const nccl_in_t *in, strata_coll_t c)
{
    if (!in->gen->ring_ll_quarter) return 0.5;
    return in->N > 1 || c == STRATA_COLL_ALLREDUCE || c == STRATA_COLL_REDUCE ? 0.25 : 1.0 / 3;
}

static double bus_bw(const nccl_in_t *in, strata_coll_t c, int a, int p)
{
    if (a == NA_NVLS || a == NA_NVLS_TREE) return nvls_bus_bw(in, c, a, p);
    double base = fmin(in->up, in->net), nch = 2 * ceil(base / quantise(in, 1e9));
    if (nch < 2) nch = 2;
    double bw = base;
    if (a == NA_COLLNET_DIRECT || a == NA_COLLNET_CHAIN)
        return p == NP_SIMPLE ? fmin(in->up, in->net * 0.9) : 0;
    if (a == NA_RING && p == NP_LL) bw = fmin(in->ll_max, bw * ring_ll_share(in, c));
    if (a == NA_RING && p == NP_LL128)
        bw = fmin(bw * (in->gen->ll128_ppn1 && in->ppn < 2 ? 0.7 : 0.92), nch * in->ring_ll128);
    if (a == NA_TREE) bw = fmin(bw * 0.92, nch * in->tree);
    if (a == NA_TREE && p == NP_LL) bw = fmin(bw / 3.8, in->ll_max);
    if (a == NA_TREE && p == NP_LL128)
        bw = fmin(bw * (in->N == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * in->tree_ll128);
    if (a == NA_PAT) bw *= 0.75;
    return bw;
}

/* busBw -> algBw: ring-like ratio nRanks/nsteps, tree and CollNet 0.5. */
static double alg_bw(const nccl_in_t *in, strata_coll_t c, int a, int p)
{
    if ((p == NP_LL128 && !in->ll128) || !arch_supported(in) || !algo_applies(in, c, a)) return 0;
    double bus = bus_bw(in, c, a, p);
    bool agrs = c == STRATA_COLL_ALLGATHER || c == STRATA_COLL_REDUCE_SCATTER;
    if (a == NA_PAT || (agrs && (a == NA_COLLNET_DIRECT || (a == NA_NVLS && in->gen->agrs_raw))))
        return bus;
    bool nvls = a == NA_NVLS || a == NA_NVLS_TREE;
    if (nvls && !in->gen->nvls_eff) return bus * 5.0 / 6.0; /* tuning.cc before 2.28 */
    double nsteps = c == STRATA_COLL_ALLREDUCE ? 2 * (in->P - 1) : agrs ? in->P - 1 : in->P;
    return bus * (a == NA_RING || nvls ? in->P / nsteps : 0.5);
}

/* ==== Latency, us ==== */

/* hwLatencies[hw][a][p] of the release. */
static double hw_latency(const nccl_in_t *in, int hw, int a, int p)
{
    if (p == NP_SIMPLE && a == NA_TREE) return in->gen->tree_hw[hw];
    if (p == NP_SIMPLE && hw == HW_NVLINK && (a == NA_NVLS || a == NA_NVLS_TREE))
        return in->gen->nvls_nvlink;
    if (p == NP_SIMPLE && hw == HW_NET && a == NA_NVLS_TREE) return in->gen->nvlstree_net;
    return hw_lat[hw][a][p];
}

static double latency(const nccl_in_t *in, strata_coll_t c, int a, int p)
{
    bool agrs = c == STRATA_COLL_ALLGATHER || c == STRATA_COLL_REDUCE_SCATTER;
    double nsteps = c == STRATA_COLL_ALLREDUCE ? 2 * (in->P - 1) : agrs ? in->P - 1 : in->P;
    double intra = hw_latency(in, in->intra_hw, a, p);
    double inter = hw_latency(in, HW_NET, in->ppn == 1 && in->gen->ppn1_tree_net ? NA_TREE : a, p);
    double lat = a == NA_TREE && p == NP_SIMPLE ? in->gen->tree_base : base_lat[a][p];
    double log2n = floor(log2(in->N));
    switch (a) {
    case NA_RING:
        if (c == STRATA_COLL_BROADCAST || c == STRATA_COLL_REDUCE)
            return lat + hw_latency(in, in->N > 1 ? HW_NET : in->intra_hw, a, p);
        if (in->N > 1) intra = fmax(intra, NET_OVERHEAD_US * (p == NP_SIMPLE ? 3 : 1));
        {
            double ninter = in->N <= 1                   ? 0
                            : c == STRATA_COLL_ALLREDUCE ? 2 * (in->N - !in->gen->net_steps_2n)
                                                         : in->N - 1;
            return lat + (nsteps - ninter) * intra + ninter * inter;
        }
    case NA_TREE:
        return lat + 2 * ((in->ppn - 1) * intra + log2n * inter);
    case NA_COLLNET_DIRECT:
        return lat + 2 * (fmin(1, in->ppn - 1) * intra + (in->ppn - 1) * 0.4) + inter;
    case NA_COLLNET_CHAIN:
        return lat + 2 * (in->ppn - 1) * intra + inter;
    case NA_NVLS:
        return intra + (in->N > 1 ? inter : 0);
    case NA_NVLS_TREE:
        return lat + intra + 2 * log2n * inter;
    case NA_PAT:
        return lat + log2n * (inter / 3.5) + in->P * 2.8;
    default:
        return INFINITY;
    }
}

/* NCCL's predicted time, s; INFINITY when not available. */
static double nccl_time(const nccl_in_t *in, strata_coll_t c, int a, int p, double bytes)
{
    double bw = alg_bw(in, c, a, p);
    if (!(bw > 0)) return INFINITY;
    double lat = latency(in, c, a, p);
    if (a == NA_TREE && c == STRATA_COLL_ALLREDUCE) {
        double b64 = bytes / 64;
        int lg = b64 >= 1 ? (int)floor(log2(b64)) : 0;
        if (lg < 24) bw *= tree_corr[p][lg];
    }
    if (a == NA_RING && p == NP_SIMPLE && in->N > 1 && c == STRATA_COLL_ALLREDUCE &&
        bytes / (in->P * 2) >= 64) /* "plateau effect of ring" (nChannels ~ 2 per rank) */
        lat *= in->cc >= CC_AMPERE ? 1.4 : 1.9;
    return lat * 1e-6 + bytes / (1e9 * bw);
}

/* ==== The tree's chunk (enqueue.cc, NCCL ~2.30) ==== */

/* A tree step carries one chunk of stepSize = buffer / NCCL_STEPS (the
 * tree's chunkSteps is 1): Simple 512 KiB; LL half of it is data (8 of 16
 * bytes), 32 KiB; LL128 15 data words of 16, 576,000 B, halved while a
 * channel's share is under (1 + log2 nodes + ppn/10) x 64/ppn chunks, to
 * 128 KiB, then under x 16/ppn, to 32 KiB. Simple has no such rule in this
 * NCCL: 512 KiB at every size. NCCL counts its own channels; here they
 * are strata's 2g (one per tree and head rank, tree.c). */
double sched_nccl_tree_chunk(int proto, double bytes, const strata_coll_machine_t *m)
{
    if (proto == SCHED_NCCL_LL) return LL_BUFF_BYTES / NCCL_STEPS / 2;
    if (proto != SCHED_NCCL_LL128) return SIMPLE_BUFF_BYTES / NCCL_STEPS;
    double chunk = LL128_BUFF_BYTES / NCCL_STEPS / 16 * 15;
    double N = m->servers > 1 ? m->servers : 1, ppn = m->nranks / N, nch = 2 * ppn;
    double steps = 1 + floor(log2(N)) + 0.1 * ppn;
    while (floor(bytes / (nch * chunk)) < steps * 64 / ppn && chunk > 131072)
        chunk /= 2;
    while (floor(bytes / (nch * chunk)) < steps * 16 / ppn && chunk > 32768)
        chunk /= 2;
    return chunk;
}

/* ==== The choice, priced by strata ==== */

/* The schedule strata prices for NCCL's algorithm a. */
static strata_algo_t schedule_of(int a, strata_coll_t c)
{
    switch (a) {
    case NA_TREE:
        return STRATA_ALGO_TREE;
    case NA_NVLS_TREE:
        return STRATA_ALGO_NVLSTREE;
    case NA_NVLS:
    case NA_COLLNET_DIRECT:
    case NA_COLLNET_CHAIN:
        return STRATA_ALGO_INNET;
    case NA_PAT:
        return sched_algo_supports(c, STRATA_ALGO_BRUCK) ? STRATA_ALGO_BRUCK : STRATA_ALGO_RING;
    default:
        return STRATA_ALGO_RING;
    }
}

const char *strata_nccl_algo_name(int algo)
{
    return algo >= 0 && algo < STRATA_NCCL_ALGOS ? algo_names[algo] : "?";
}

const char *strata_nccl_proto_name(int proto)
{
    return proto >= 0 && proto < STRATA_NCCL_PROTOS ? proto_names[proto] : "?";
}

double strata_nccl_model_time(const strata_coll_machine_t *m, strata_coll_t coll, int algo,
                              int proto, double bytes)
{
    if (!m || algo < 0 || algo >= STRATA_NCCL_ALGOS || proto < 0 || proto >= STRATA_NCCL_PROTOS ||
        m->nranks < 2)
        return INFINITY;
    nccl_in_t in = inputs(m);
    return nccl_time(&in, coll, algo, proto, bytes);
}

strata_status_t strata_coll_select_nccl(const strata_coll_machine_t *m, strata_coll_t coll,
                                        double bytes, strata_nccl_choice_t *out_p,
                                        strata_error_t *err)
{
    strata_nccl_choice_t best = {.algo = -1, .model_time = INFINITY};
    if (!m) return strata_error_set(err, STRATA_ERR_INVALID, "no machine");
    nccl_in_t in = inputs(m);
    if (!arch_supported(&in))
        return strata_error_set(
            err, STRATA_ERR_UNSUPPORTED,
            "NCCL %u.%u.%u does not support Blackwell (sm100 arrived in 2.25.1)",
            m->nccl_version / 10000, m->nccl_version / 100 % 100, m->nccl_version % 100);
    for (int a = 0; a < STRATA_NCCL_ALGOS; a++)
        for (int p = 0; p < STRATA_NCCL_PROTOS; p++) {
            double t = strata_nccl_model_time(m, coll, a, p, bytes);
            strata_coll_cost_t c;
            double chunk = a == NA_TREE ? sched_nccl_tree_chunk(p, bytes, m) : 0;
            if (!(t < best.model_time) ||
                sched_coll_cost_chunk(m, coll, schedule_of(a, coll), bytes, chunk, &c, NULL))
                continue;
            best.algo = a, best.proto = p, best.model_time = t, best.cost = c;
        }
    if (best.algo < 0)
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                "NCCL implements no algorithm for %s here", strata_coll_name(coll));
    /* the protocol carries proto_eta of its bytes as payload: the bandwidth
     * term stretches by 1/eta, the rest of the schedule's price stays */
    strata_coll_cost_t *c = &best.cost;
    best.proto_eta = strata_link_protocol(best.proto)->eta; /* the link layer's figure */
    c->beta /= best.proto_eta;
    c->time = c->alpha + fmax(c->beta, c->gamma);
    c->algbw = c->time > 0 ? bytes / c->time : 0;
    c->busbw = c->algbw * strata_coll_busbw_factor(coll, m->nranks);
    if (best.algo == NA_NVLS || best.algo == NA_NVLS_TREE) {
        nvls_graph_t g = nvls_graph(&in);
        best.nvls_channels = g.nch, best.nvls_intra = g.intra, best.nvls_inter = g.inter;
    }
    *out_p = best;
    return STRATA_OK;
}

/* Which shipping libraries implement a strata algorithm (GPU collective
 * libraries first), or NULL when none does: the label an explanation
 * prints beside a choice. */
const char *strata_algo_libraries(strata_algo_t algo)
{
    switch (algo) {
    case STRATA_ALGO_RING:
        return "NCCL, RCCL, MPICH, Open MPI";
    case STRATA_ALGO_TREE:
        return "NCCL, RCCL";
    case STRATA_ALGO_INNET:
        return "NCCL (NVLS, CollNet/SHARP)";
    case STRATA_ALGO_NVLSTREE:
        return "NCCL (NVLSTree)";
    case STRATA_ALGO_BINOMIAL:
    case STRATA_ALGO_RECDBL:
    case STRATA_ALGO_RABENSEIFNER:
    case STRATA_ALGO_BRUCK:
    case STRATA_ALGO_PAIRWISE:
        return "MPICH, Open MPI (CPU); no GPU collective library";
    case STRATA_ALGO_HIER:
        return "Horovod hierarchical allreduce (NCCL + MPI)";
    default:
        return NULL;
    }
}
