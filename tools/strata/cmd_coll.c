/*
 * cmd_coll.c — `strata coll CLUSTER --op OP [--algo NAME] [--sizes LO:HI]
 * [--json] [--explain SIZE]`: predicted time, algbw and busbw (nccl-tests
 * definitions) of every algorithm for a collective on a cluster, per size,
 * the cheapest one marked and the sizes where the choice changes; with
 * --explain, for one size, where the time goes: steps, bytes per link tier
 * and the dominating term (latency, bandwidth of a tier, reduction).
 *
 * CLUSTER is anything strata_topo_load_spec resolves (railft:servers=2,
 * gpus=8, torus:8x8, a preset, a cluster file). Sizes double from LO to HI.
 */
#include "cli.h"
#include "cli_report.h"

#include <math.h>
#include <string.h>

#define COLL_MAX_SIZES 64

static void usage(FILE *out)
{
    fprintf(out,
            "usage: strata coll CLUSTER [--op OP] [--algo NAME] [--sizes LO:HI] [--json]\n"
            "                   [--explain SIZE] [--select strata|nccl] [--nccl-version V]\n"
            "                   [--catalog FILE]\n\n"
            "Predict a collective on a cluster with every algorithm (alpha-beta-gamma model:\n"
            "link catalog -> topology routes -> algorithm) and mark the cheapest.\n\n"
            "  --op OP         allreduce (default), reducescatter, allgather, broadcast,\n"
            "                  reduce, alltoall, sendrecv, barrier\n"
            "  --algo NAME     only this algorithm: ring, tree, binomial, recdbl,\n"
            "                  rabenseifner, bruck, pairwise, hier, torus2d, innet,\n"
            "                  nvlstree, direct (strata's shared-memory engine: loads\n"
            "                  and stores, one server; priced, never chosen)\n"
            "  --registered    with --algo direct --op allreduce: the ranks' buffers are\n"
            "                  registered (strata_comm_mem_alloc), so the engine reduces\n"
            "                  straight from every input into every output (no staging)\n"
            "  --sizes LO:HI   sizes in bytes (nccl-tests 'size'), doubling (default 8:8G;\n"
            "                  1 <= LO <= HI <= 1024T = 2^50)\n"
            "  --explain SIZE  for one size (up to 1024T): steps, bytes per tier, dominating\n"
            "                  term, and the rail (NIC) of every ring and tree channel\n"
            "                  across servers\n"
            "  --select nccl   also show what NCCL's own tuning model would run (algorithm\n"
            "                  and protocol) and strata's price of it; the busbw columns\n"
            "                  and * then follow NCCL's choice (default: strata, the\n"
            "                  cheapest schedule strata knows)\n"
            "  --nccl-version V\n"
            "                  with --select nccl: the NCCL release whose tuning model\n"
            "                  chooses (2.19.3, 2.27.3+cuda12.9, ...; 2.19 or later;\n"
            "                  default: the newest transcribed, 2.30); strata's price of\n"
            "                  the schedule does not depend on it\n"
            "  --json          JSON instead of text\n"
            "  -o FILE         write the output to FILE (also --output FILE)\n"
            "  --catalog FILE  link catalog (default: <data dir>/links.json)\n\n"
            "CLUSTER: as for 'strata topo' (railft:servers=S,gpus=G, torus:AxB, presets, files)\n");
}

typedef struct coll_args {
    const char *cluster, *catalog;
    strata_coll_t op;
    int algo; /* -1: all */
    double lo, hi, explain;
    int json;
    int nccl;              /* --select nccl */
    int registered;        /* --registered */
    uint32_t nccl_version; /* --nccl-version; 0: the newest tuning model */
} coll_args_t;

static int parse_sizes(const char *arg, coll_args_t *a)
{
    char buf[64];
    const char *colon = strchr(arg, ':');
    if (!colon || (size_t)(colon - arg) >= sizeof(buf))
        return cli_usage_error("coll", "--sizes expects LO:HI like 8:8G, got '%s'", arg);
    memcpy(buf, arg, (size_t)(colon - arg));
    buf[colon - arg] = 0;
    if (cli_parse_size("coll", "--sizes", buf, CLI_SIZE_MAX, &a->lo) ||
        cli_parse_size("coll", "--sizes", colon + 1, CLI_SIZE_MAX, &a->hi))
        return CLI_USAGE;
    if (a->lo < 1 || a->hi < a->lo)
        return cli_usage_error("coll", "--sizes needs 1 <= LO <= HI, got '%s'", arg);
    return CLI_OK;
}

static int parse_value(int argc, char **argv, int *i, coll_args_t *a)
{
    const char *s = argv[*i];
    if (*i + 1 >= argc) return cli_usage_error("coll", "%s needs a value", s);
    const char *v = argv[++*i];
    strata_algo_t al;
    if (!strcmp(s, "--op") && strata_coll_parse(v, &a->op))
        return cli_usage_error("coll", "unknown collective '%s'", v);
    if (!strcmp(s, "--algo")) {
        if (strata_algo_parse(v, &al)) return cli_usage_error("coll", "unknown algorithm '%s'", v);
        a->algo = (int)al;
    }
    if (!strcmp(s, "--sizes")) return parse_sizes(v, a);
    if (!strcmp(s, "--explain") &&
        cli_parse_size("coll", "--explain", v, CLI_SIZE_MAX, &a->explain))
        return CLI_USAGE;
    if (!strcmp(s, "--catalog")) a->catalog = v;
    if (!strcmp(s, "--nccl-version")) {
        strata_error_t err;
        if (strata_nccl_version_parse(v, &a->nccl_version, &err))
            return cli_usage_error("coll", "%s", err.msg);
    }
    if (!strcmp(s, "--select")) {
        if (strcmp(v, "nccl") && strcmp(v, "strata"))
            return cli_usage_error("coll", "--select expects strata or nccl, got '%s'", v);
        a->nccl = !strcmp(v, "nccl");
    }
    return CLI_OK;
}

static int parse_args(int argc, char **argv, coll_args_t *a)
{
    memset(a, 0, sizeof(*a));
    a->op = STRATA_COLL_ALLREDUCE, a->algo = -1, a->lo = 8, a->hi = 8.0 * (1 << 30),
    a->explain = -1;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--json")) {
            a->json = 1;
        } else if (!strcmp(s, "--registered")) {
            a->registered = 1;
        } else if (!strcmp(s, "--op") || !strcmp(s, "--algo") || !strcmp(s, "--sizes") ||
                   !strcmp(s, "--explain") || !strcmp(s, "--catalog") || !strcmp(s, "--select") ||
                   !strcmp(s, "--nccl-version")) {
            int rc = parse_value(argc, argv, &i, a);
            if (rc) return rc;
        } else if (s[0] == '-' && s[1]) {
            return cli_unknown_option("coll", s);
        } else if (!a->cluster) {
            a->cluster = s;
        } else {
            return cli_usage_error("coll", "unexpected argument '%s'", s);
        }
    }
    if (!a->cluster)
        return cli_usage_error("coll", "missing CLUSTER (e.g. railft:servers=2,gpus=8)");
    if (a->nccl_version && !a->nccl)
        return cli_usage_error("coll", "--nccl-version needs --select nccl");
    if (a->registered && (a->algo != STRATA_ALGO_DIRECT || a->op != STRATA_COLL_ALLREDUCE))
        return cli_usage_error("coll", "--registered needs --algo direct and --op allreduce");
    return CLI_OK;
}

/* ==== Output ==== */

static void print_machine(FILE *out, const char *cluster, const strata_coll_machine_t *m)
{
    char a[32], b[32], c[32], d[32];
    fprintf(out, "cluster %s: %u ranks", cluster, m->nranks);
    if (m->servers > 1) fprintf(out, " = %u servers x %u", m->servers, m->per_server);
    char sm[64] = "";
    if (m->store_share > 0) /* PCIe peers: SM stores, one 128 B line a TLP */
        snprintf(sm, sizeof(sm), ", SM stores of 128 B x%.3f", m->store_share);
    fprintf(out, "\n  scale-up %s %s GB/s per rank pair (packet overhead x%.3f%s), latency %s\n",
            m->intra_kind[0] ? m->intra_kind : "-", report_gbs(m->bw_intra, a, sizeof(a)),
            m->eta_intra, sm, report_time(m->lat_intra, b, sizeof(b)));
    if (m->servers > 1)
        fprintf(out, "  network  %s %s GB/s per NIC, %u NICs per server, latency %s\n",
                m->inter_kind, report_gbs(m->bw_nic, c, sizeof(c)), m->nics,
                report_time(m->lat_inter, d, sizeof(d)));
    if (m->servers > 1 && m->bw_gdr_read > 0)
        fprintf(out,
                "  GPUDirect read %s GB/s: a NIC reading GPU memory over PCIe (MRd/CplD at MPS, "
                "MRRS 512 B; `strata link` of the PCIe kind)%s\n",
                report_gbs(m->bw_gdr_read, a, sizeof(a)),
                m->bw_gdr_read <= m->bw_nic ? ", bounding the NIC" : "");
    if (m->reduce_bw > 0)
        fprintf(out, "  reduction %s GB/s (%s bandwidth / 3, %s)",
                report_gbs(m->reduce_bw, a, sizeof(a)), m->memory_kind,
                strata_coll_memory_source(m));
    else
        fprintf(out, "  reduction not modelled (this accelerator's memory is not in the catalog)");
    fprintf(out, "; in-switch reduction: %s\n", m->switch_reduce ? "yes (NVLink SHARP)" : "no");
}

/* Costs of the requested algorithms at one size; n_p how many apply. */
static void costs_at(const strata_coll_machine_t *m, const coll_args_t *a, double size,
                     strata_coll_cost_t *c, bool *ok)
{
    for (int al = 0; al < STRATA_ALGO_COUNT; al++)
        ok[al] = (a->algo < 0 || a->algo == al) &&
                 strata_coll_cost(m, a->op, (strata_algo_t)al, size, &c[al], NULL) == STRATA_OK;
}

/* NCCL's choice at `size` into *n_p; false when NCCL runs nothing here. */
static bool nccl_at(const strata_coll_machine_t *m, const coll_args_t *a, double size,
                    strata_nccl_choice_t *n_p)
{
    return a->nccl && strata_coll_select_nccl(m, a->op, size, n_p, NULL) == STRATA_OK;
}

static int chosen(const strata_coll_cost_t *c, const bool *ok)
{
    int best = -1;
    for (int al = 0; al < STRATA_ALGO_COUNT; al++)
        if (ok[al] && strata_coll_selectable((strata_algo_t)al) &&
            (best < 0 || c[al].time < c[best].time))
            best = al;
    for (int al = 0; al < STRATA_ALGO_COUNT && best < 0; al++) /* --algo direct */
        if (ok[al]) best = al;
    return best;
}

static void print_table(FILE *out, const strata_coll_machine_t *m, const coll_args_t *a)
{
    strata_coll_cost_t c[STRATA_ALGO_COUNT];
    bool ok[STRATA_ALGO_COUNT];
    costs_at(m, a, a->lo, c, ok);
    fprintf(out, "\n%s, predicted time (us) per algorithm; * = chosen; algbw/busbw of the chosen\n",
            strata_coll_name(a->op));
    fprintf(out, "%10s", "size");
    for (int al = 0; al < STRATA_ALGO_COUNT; al++)
        if (ok[al]) fprintf(out, " %13s", strata_algo_name((strata_algo_t)al));
    fprintf(out, " %9s %9s%s\n", "algbw", "busbw", a->nccl ? "  NCCL runs (* = its schedule)" : "");
    for (double s = a->lo; s <= a->hi * 1.0000001; s *= 2) {
        char b[32];
        strata_nccl_choice_t n;
        costs_at(m, a, s, c, ok);
        int best = chosen(c, ok);
        bool nc = nccl_at(m, a, s, &n);
        if (a->nccl) best = nc ? (int)n.cost.algo : -1;
        fprintf(out, "%10s", strata_fmt_size(s, b, sizeof(b)));
        for (int al = 0; al < STRATA_ALGO_COUNT; al++)
            if (ok[al]) fprintf(out, " %12.4g%c", c[al].time * 1e6, al == best ? '*' : ' ');
        if (nc)
            fprintf(out, " %9.4g %9.4g  %s/%s\n", n.cost.algbw / 1e9, n.cost.busbw / 1e9,
                    strata_nccl_algo_name(n.algo), strata_nccl_proto_name(n.proto));
        else if (best >= 0)
            fprintf(out, " %9.4g %9.4g%s\n", c[best].algbw / 1e9, c[best].busbw / 1e9,
                    a->nccl ? "  (NCCL: none)" : "");
        else
            fprintf(out, "\n");
    }
}

static void print_crossovers(FILE *out, const strata_coll_machine_t *m, const coll_args_t *a)
{
    double sizes[16];
    strata_algo_t algos[16];
    strata_coll_cost_t c;
    if (a->algo >= 0 || a->nccl || strata_coll_select(m, a->op, a->lo, &c, NULL)) return;
    size_t n = strata_coll_crossovers(m, a->op, a->lo, a->hi, sizes, algos, 16);
    char b[32];
    fprintf(out, "\nchoice: %s from %s", strata_algo_name(c.algo),
            strata_fmt_size(a->lo, b, sizeof(b)));
    for (size_t i = 0; i < n; i++) {
        fprintf(out, ", %s from %s", strata_algo_name(algos[i]),
                strata_fmt_size(sizes[i], b, sizeof(b)));
    }
    fprintf(out, "\n");
}

/* What each priced algorithm is on this cluster, and why the others that
 * implement the collective do not apply. */
static void print_forms(FILE *out, const strata_topo_t *t, const strata_coll_machine_t *m,
                        const coll_args_t *a, const bool *ok)
{
    char form[160];
    strata_coll_cost_t k;
    strata_error_t err;
    fprintf(out, "\nalgorithms as modelled here:\n");
    for (int al = 0; al < STRATA_ALGO_COUNT; al++) {
        if (a->algo >= 0 && a->algo != al) continue;
        strata_status_t st = strata_coll_cost(m, a->op, (strata_algo_t)al, a->explain, &k, &err);
        if (ok[al]) {
            fprintf(out, "  %-13s %s\n", strata_algo_name((strata_algo_t)al),
                    strata_coll_algo_form(m, (strata_algo_t)al, form, sizeof(form)));
            /* one line per channel: its rail */
            for (uint32_t c = 0;
                 c < strata_coll_channel_line(t, m, (strata_algo_t)al, c, form, sizeof(form)); c++)
                fprintf(out, "    %s\n", form);
        } else if (st && !strstr(err.msg, "does not implement"))
            fprintf(out, "  %-13s not applicable: %s\n", strata_algo_name((strata_algo_t)al),
                    err.msg);
    }
}

/* --select nccl: NCCL's pick, its own estimate and strata's price of it. */
static void print_nccl(FILE *out, const strata_coll_machine_t *m, const coll_args_t *a,
                       const strata_coll_cost_t *best)
{
    strata_nccl_choice_t n;
    if (!a->nccl) return;
    if (!nccl_at(m, a, a->explain, &n)) {
        fprintf(out, "NCCL: implements no algorithm for %s here\n", strata_coll_name(a->op));
        return;
    }
    char rel[64] = "";
    if (m->nccl_version)
        snprintf(rel, sizeof(rel), " %u.%u.%u (tuning model of %s)", m->nccl_version / 10000,
                 m->nccl_version / 100 % 100, m->nccl_version % 100,
                 strata_nccl_version_model(m->nccl_version));
    fprintf(out,
            "NCCL%s would run %s/%s (its tuning model: %.4g us); strata prices that schedule\n"
            "  (%s, %s payload %.1f%%) at %.4g us: algbw %.4g, busbw %.4g GB/s",
            rel, strata_nccl_algo_name(n.algo), strata_nccl_proto_name(n.proto), n.model_time * 1e6,
            strata_algo_name(n.cost.algo), strata_nccl_proto_name(n.proto), 100 * n.proto_eta,
            n.cost.time * 1e6, n.cost.algbw / 1e9, n.cost.busbw / 1e9);
    if (best && best->algo != n.cost.algo && best->time > 0)
        fprintf(out, ";\n  strata's best schedule (%s) takes %.4g us, %.1f %% less",
                strata_algo_name(best->algo), best->time * 1e6,
                100 * (1 - best->time / n.cost.time));
    fprintf(out, "\n");
    if (n.nvls_channels > 0 && m->servers > 1)
        fprintf(
            out,
            "  NCCL's NVLS graph: %g channels, one per NIC's GPU; per channel %g GB/s of NVLink "
            "(bwIntra) and %g of network (bwInter)\n",
            n.nvls_channels, n.nvls_intra, n.nvls_inter);
    else if (n.nvls_channels > 0)
        fprintf(out,
                "  NCCL's NVLS graph: %g channels, one per GPU; per channel %g GB/s of NVLink "
                "(bwIntra), bwInter %g (no network: raised to its speed array's top)\n",
                n.nvls_channels, n.nvls_intra, n.nvls_inter);
}

static void print_explain(FILE *out, const strata_topo_t *t, const strata_coll_machine_t *m,
                          const coll_args_t *a)
{
    strata_coll_cost_t c[STRATA_ALGO_COUNT];
    bool ok[STRATA_ALGO_COUNT];
    char b[32];
    costs_at(m, a, a->explain, c, ok);
    int best = chosen(c, ok);
    fprintf(out, "\n%s of %s: where the time goes\n", strata_coll_name(a->op),
            strata_fmt_size(a->explain, b, sizeof(b)));
    fprintf(out, "  %-13s %10s %8s %7s %12s %12s %10s %10s %10s  %s\n", "algorithm", "time(us)",
            "steps", "chunks", "B scale-up", "B network", "alpha(us)", "beta(us)", "gamma(us)",
            "bound");
    for (int al = 0; al < STRATA_ALGO_COUNT; al++) {
        if (!ok[al]) continue;
        const strata_coll_cost_t *k = &c[al];
        fprintf(out, "  %-12s%c %10.4g %8.0f %7u %12.4g %12.4g %10.4g %10.4g %10.4g  %s\n",
                strata_algo_name((strata_algo_t)al), al == best ? '*' : ' ', k->time * 1e6,
                k->steps, k->chunks, k->bytes_intra, k->bytes_inter, k->alpha * 1e6, k->beta * 1e6,
                k->gamma * 1e6, k->bound);
    }
    if (best >= 0) {
        const char *lib = strata_algo_libraries((strata_algo_t)best);
        fprintf(out, "bottleneck: %s with %s is %s-bound\n", strata_coll_name(a->op),
                strata_algo_name((strata_algo_t)best), c[best].bound);
        fprintf(out, "  %s: %s\n", strata_algo_name((strata_algo_t)best),
                lib ? lib : "no shipping library implements it (strata's own schedule)");
    }
    print_nccl(out, m, a, best >= 0 ? &c[best] : NULL);
    print_forms(out, t, m, a, ok);
}

static void json_cost(strata_json_t *j, const char *key, const strata_coll_cost_t *k)
{
    strata_json_open(j, key, '{');
    strata_json_str(j, "algo", strata_algo_name(k->algo));
    strata_json_num(j, "time_s", k->time);
    strata_json_num(j, "algbw_Bps", k->algbw);
    strata_json_num(j, "busbw_Bps", k->busbw);
    strata_json_num(j, "steps", k->steps);
    strata_json_int(j, "chunks", (long)k->chunks);
    strata_json_num(j, "alpha_s", k->alpha);
    strata_json_num(j, "beta_s", k->beta);
    strata_json_num(j, "gamma_s", k->gamma);
    strata_json_num(j, "scaleup_B", k->bytes_intra);
    strata_json_num(j, "network_B", k->bytes_inter);
    strata_json_str(j, "bound", k->bound);
    strata_json_close(j, '{');
}

/* One message size: every algorithm's cost, the choice, NCCL's. */
static void json_size(strata_json_t *j, const strata_coll_machine_t *m, const coll_args_t *a,
                      double s)
{
    strata_coll_cost_t c[STRATA_ALGO_COUNT];
    bool ok[STRATA_ALGO_COUNT];
    costs_at(m, a, s, c, ok);
    int best = chosen(c, ok);
    strata_json_open(j, NULL, '{');
    strata_json_num(j, "size_B", s);
    strata_json_str(j, "chosen", best >= 0 ? strata_algo_name((strata_algo_t)best) : "");
    strata_json_open(j, "algos", '[');
    for (int al = 0; al < STRATA_ALGO_COUNT; al++)
        if (ok[al]) json_cost(j, NULL, &c[al]);
    strata_json_close(j, '[');
    strata_nccl_choice_t n;
    if (nccl_at(m, a, s, &n)) {
        strata_json_open(j, "nccl", '{');
        strata_json_str(j, "algo", strata_nccl_algo_name(n.algo));
        strata_json_str(j, "proto", strata_nccl_proto_name(n.proto));
        if (m->nccl_version)
            strata_json_str(j, "tuning_model", strata_nccl_version_model(m->nccl_version));
        strata_json_num(j, "model_time_s", n.model_time);
        if (n.nvls_channels > 0) {
            strata_json_open(j, "nvls_graph", '{');
            strata_json_num(j, "channels", n.nvls_channels);
            strata_json_num(j, "nvlink_Bps", n.nvls_intra * 1e9);
            strata_json_num(j, "network_Bps", n.nvls_inter * 1e9);
            strata_json_close(j, '{');
        }
        json_cost(j, "schedule", &n.cost);
        strata_json_close(j, '{');
    }
    strata_json_close(j, '{');
}

static void print_json(FILE *out, const strata_coll_machine_t *m, const coll_args_t *a)
{
    strata_json_t j;
    strata_json_document(&j, out);
    strata_json_str(&j, "cluster", a->cluster);
    strata_json_str(&j, "op", strata_coll_name(a->op));
    strata_json_int(&j, "ranks", (long)m->nranks);
    strata_json_int(&j, "servers", (long)m->servers);
    strata_json_open(&j, "sizes", '[');
    double lo = a->explain >= 0 ? a->explain : a->lo, hi = a->explain >= 0 ? a->explain : a->hi;
    for (double s = lo; s <= hi * 1.0000001; s *= 2)
        json_size(&j, m, a, s);
    strata_json_close(&j, '[');
    strata_json_close(&j, '{');
}

static int run(const coll_args_t *a, strata_link_catalog_t *cat)
{
    strata_topo_t *t = NULL;
    strata_error_t err;
    strata_error_clear(&err);
    strata_coll_machine_t m;
    if (strata_topo_load_spec(a->cluster, cat, &t, &err) ||
        strata_coll_machine_from_topo(t, cat, &m, &err)) {
        strata_topo_destroy(t);
        return cli_fail(&err);
    }
    m.registered = a->registered;
    m.nccl_version = a->nccl_version;
    strata_coll_cost_t c;
    strata_nccl_choice_t n;
    /* a release that cannot run here (Blackwell before 2.25) says so */
    if (a->nccl && strata_coll_select_nccl(&m, a->op, a->lo, &n, &err) &&
        !strstr(err.msg, "implements no algorithm")) {
        strata_topo_destroy(t);
        return cli_fail(&err);
    }
    if (a->algo >= 0 && strata_coll_cost(&m, a->op, (strata_algo_t)a->algo, a->lo, &c, &err)) {
        strata_topo_destroy(t);
        return cli_fail(&err);
    }
    if (a->json)
        print_json(stdout, &m, a);
    else {
        print_machine(stdout, a->cluster, &m);
        if (a->explain >= 0)
            print_explain(stdout, t, &m, a);
        else {
            print_table(stdout, &m, a);
            print_crossovers(stdout, &m, a);
        }
    }
    strata_topo_destroy(t);
    return CLI_OK;
}

int cmd_coll(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    coll_args_t a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    if ((a.hi / a.lo) > pow(2, COLL_MAX_SIZES - 1))
        return cli_usage_error("coll", "--sizes spans more than %d doublings", COLL_MAX_SIZES);
    strata_link_catalog_t *cat = NULL;
    rc = report_load_links(a.catalog, &cat);
    if (rc) return rc;
    rc = run(&a, cat);
    strata_link_catalog_destroy(cat);
    return rc;
}
