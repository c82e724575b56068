/*
 * cmd_plan.c — `strata plan MODEL CLUSTER [--gpus N] [--batch B] [--tp T
 * --pp P ... | --search] [--json]`: one training step of a workload under a
 * parallel plan on a cluster — step time broken down, the traffic of each
 * parallel dimension mapped to the tier it crosses, memory per GPU, the
 * bottleneck and the single change that helps most — or, with --search,
 * the best plans for the GPU count.
 *
 * MODEL is a name of data/models/ or a .json file; CLUSTER anything
 * strata_topo_load_spec resolves. --gpus N on a preset name picks N / (GPUs
 * per server) servers. The accelerator is the one whose HBM the cluster
 * records (data/accelerators.json), or --accel ID.
 */
#include "cli.h"
#include "cli_report.h"

#include <stdlib.h>
#include <string.h>

/* --sim runs every group of a dimension at once; past this the run is long. */
#define PLAN_SIM_MAX_GPUS 1024

static void usage(FILE *out)
{
    fprintf(out, "usage: strata plan MODEL CLUSTER [--gpus N] [--batch B] [--json]\n"
                 "                   [--tp T] [--pp P] [--vpp V] [--cp C] [--ep E] [--mbs M]\n"
                 "                   [--zero 0-3] [--recompute none|selective|full] [--no-sp]\n"
                 "                   [--no-flash] [--fp8] [--overlap-tp] [--no-overlap-dp]\n"
                 "                   [--no-overlap-pp] [--order O] [--search [--top K]] [--sim]\n"
                 "                   [--accel ID]\n\n"
                 "Model one training step of MODEL on CLUSTER under a parallel plan: compute\n"
                 "(roofline with tile/wave quantisation), every collective priced by the\n"
                 "collective model on its group's real placement, pipeline schedule, memory per\n"
                 "GPU, the bottleneck layer. DP = GPUs / (TP x PP x CP).\n\n"
                 "  --gpus N        GPUs (a preset name gets N / per-server servers)\n"
                 "  --batch B       global batch in sequences (default 512)\n"
                 "  --tp/--pp/--cp  tensor, pipeline, context parallel sizes (default 1)\n"
                 "  --vpp V         model chunks per pipeline stage (interleaved 1F1B)\n"
                 "  --ep E          expert parallel size (MoE; divides DP)\n"
                 "  --mbs M         micro-batch size (default 1)\n"
                 "  --zero Z        0 none, 1 distributed optimizer (default), 2 + grads, 3 FSDP\n"
                 "  --recompute R   none, selective (default), full\n"
                 "  --offload T     optimizer states in HBM (none, default), host DRAM (host)\n"
                 "                  or CXL memory (cxl), ZeRO-Offload style: the CPU runs Adam\n"
                 "                  and each step moves gradients down and weights up over\n"
                 "                  the routed PCIe/CXL path (needs memory devices: e.g.\n"
                 "                  pcie-8gpu-2s)\n"
                 "  --no-sp         TP without sequence parallelism\n"
                 "  --no-flash      unfused attention (s x s scores in HBM)\n"
                 "  --fp8           GEMMs at the FP8 peak\n"
                 "  --overlap-tp    hide TP collectives under GEMMs\n"
                 "  --no-overlap-dp gradient sync after the backward pass, not under it\n"
                 "  --no-overlap-pp blocking pipeline transfers\n"
                 "  --order O       rank order, fastest first (default tp-cp-ep-dp-pp: TP inside\n"
                 "                  a server, PP across); tp-cp-pp-dp puts pipeline stages inside\n"
                 "                  a server and DP across\n"
                 "  --search        rank every valid plan (TP, PP, v, CP, EP, micro-batch, ZeRO,\n"
                 "                  recompute, and the offload tier when the cluster has host\n"
                 "                  or CXL memory and --offload is not given) that fits\n"
                 "                  memory; --top K shows K (default 5)\n"
                 "  --sim           also time each traffic kind with the simulator, all groups of\n"
                 "                  its dimension at once (up to 1024 GPUs)\n"
                 "  --accel ID      accelerator of data/accelerators.json\n"
                 "  --json          JSON instead of text\n"
                 "  -o FILE         write the output to FILE (also --output FILE)\n\n"
                 "Models: strata plan --list\n");
}

typedef struct plan_args {
    const char *model, *cluster, *accel;
    long gpus, top;
    int json, search, sim;
    strata_plan_config_t cfg;
} plan_args_t;

static int int_opt(const char *opt, const char *v, long min, long max, int *out)
{
    long x;
    if (cli_parse_int("plan", opt, v, min, max, &x)) return CLI_USAGE;
    *out = (int)x;
    return CLI_OK;
}

static int parse_value(const char *s, const char *v, plan_args_t *a)
{
    strata_plan_config_t *c = &a->cfg;
    int n = 0, rc;
    if (!strcmp(s, "--tp")) return int_opt(s, v, 1, 1 << 20, &c->tp);
    if (!strcmp(s, "--pp")) return int_opt(s, v, 1, 1 << 20, &c->pp);
    if (!strcmp(s, "--vpp")) return int_opt(s, v, 1, 1 << 20, &c->vpp);
    if (!strcmp(s, "--cp")) return int_opt(s, v, 1, 1 << 20, &c->cp);
    if (!strcmp(s, "--ep")) return int_opt(s, v, 1, 1 << 20, &c->ep);
    if (!strcmp(s, "--mbs")) return int_opt(s, v, 1, 1 << 20, &c->mbs);
    if (!strcmp(s, "--batch")) return int_opt(s, v, 1, 1 << 28, &c->gbs);
    if (!strcmp(s, "--zero")) return int_opt(s, v, 0, 3, &c->zero);
    if (!strcmp(s, "--gpus")) return (rc = int_opt(s, v, 1, 1 << 24, &n)) ? rc : (a->gpus = n, 0);
    if (!strcmp(s, "--top")) return (rc = int_opt(s, v, 1, 100, &n)) ? rc : (a->top = n, 0);
    if (!strcmp(s, "--accel")) return a->accel = v, CLI_OK;
    if (!strcmp(s, "--order")) {
        if (strata_plan_order_parse(v, c->order))
            return cli_usage_error("plan",
                                   "--order expects tp, cp, (ep-)dp and pp once each, "
                                   "fastest first (e.g. tp-cp-ep-dp-pp), got '%s'",
                                   v);
        return CLI_OK;
    }
    if (!strcmp(s, "--recompute")) {
        if (!strcmp(v, "none"))
            c->recompute = STRATA_RECOMP_NONE;
        else if (!strcmp(v, "selective"))
            c->recompute = STRATA_RECOMP_SELECTIVE;
        else if (!strcmp(v, "full"))
            c->recompute = STRATA_RECOMP_FULL;
        else
            return cli_usage_error("plan", "--recompute expects none, selective or full, got '%s'",
                                   v);
        return CLI_OK;
    }
    if (!strcmp(s, "--offload")) {
        static const char *const tiers[] = {"none", "host", "cxl"};
        for (int k = 0; k < 3; k++)
            if (!strcmp(v, tiers[k])) return c->offload = k, CLI_OK;
        return cli_usage_error("plan", "--offload expects none, host or cxl, got '%s'", v);
    }
    return cli_unknown_option("plan", s);
}

static int parse_flag(const char *s, plan_args_t *a)
{
    strata_plan_config_t *c = &a->cfg;
    if (!strcmp(s, "--json"))
        a->json = 1;
    else if (!strcmp(s, "--search"))
        a->search = 1;
    else if (!strcmp(s, "--sim"))
        a->sim = 1;
    else if (!strcmp(s, "--no-sp"))
        c->sp = false;
    else if (!strcmp(s, "--no-flash"))
        c->flash = false;
    else if (!strcmp(s, "--fp8"))
        c->fp8 = true;
    else if (!strcmp(s, "--overlap-tp"))
        c->overlap_tp = true;
    else if (!strcmp(s, "--no-overlap-dp"))
        c->overlap_dp = false;
    else if (!strcmp(s, "--no-overlap-pp"))
        c->overlap_pp = false;
    else
        return -1;
    return 0;
}

static int parse_args(int argc, char **argv, plan_args_t *a)
{
    memset(a, 0, sizeof(*a));
    strata_plan_config_default(&a->cfg);
    a->cfg.offload = -1; /* not given: none for one plan, the search chooses */
    a->cfg.gbs = 512, a->top = 5;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (s[0] == '-' && s[1]) {
            if (!parse_flag(s, a)) continue;
            if (i + 1 >= argc || !strncmp(argv[i + 1], "--", 2)) {
                if (strstr(" --tp --pp --vpp --cp --ep --mbs --batch --zero --gpus --top --accel "
                           "--recompute --order --offload ",
                           s) &&
                    strlen(s) > 2)
                    return cli_usage_error("plan", "%s needs a value", s);
                return cli_unknown_option("plan", s);
            }
            int rc = parse_value(s, argv[++i], a);
            if (rc) return rc;
        } else if (!a->model) {
            a->model = s;
        } else if (!a->cluster) {
            a->cluster = s;
        } else {
            return cli_usage_error("plan", "unexpected argument '%s'", s);
        }
    }
    if (!a->model) return cli_usage_error("plan", "missing MODEL (e.g. gpt3-175b; see --list)");
    if (!a->cluster) return cli_usage_error("plan", "missing CLUSTER (e.g. dgx-a100:4)");
    return CLI_OK;
}

/* The cluster: with --gpus on a preset name, N / per-server servers. */
static int load_cluster(const plan_args_t *a, const strata_link_catalog_t *cat, strata_topo_t **t_p)
{
    strata_error_t err;
    strata_error_clear(&err);
    if (strata_topo_load_spec(a->cluster, cat, t_p, &err)) return cli_fail(&err);
    long n = strata_topo_endpoint_count(*t_p);
    if (!a->gpus || a->gpus == n) return CLI_OK;
    bool preset = !strchr(a->cluster, ':') && !strstr(a->cluster, ".json") &&
                  !strstr(a->cluster, ".xml") && n > 0;
    strata_topo_destroy(*t_p);
    *t_p = NULL;
    if (!preset || a->gpus % n)
        return cli_usage_error("plan", "--gpus %ld does not match cluster '%s' (%ld GPUs%s)",
                               a->gpus, a->cluster, n,
                               preset ? " per server, which must divide it" : "");
    /* NAME[,options] -> NAME:SERVERS[,options] */
    char spec[512];
    const char *comma = strchr(a->cluster, ',');
    int name_len = comma ? (int)(comma - a->cluster) : (int)strlen(a->cluster);
    snprintf(spec, sizeof(spec), "%.*s:%ld%s", name_len, a->cluster, a->gpus / n,
             comma ? comma : "");
    if (strata_topo_load_spec(spec, cat, t_p, &err)) return cli_fail(&err);
    return CLI_OK;
}

static int find_accel(const plan_args_t *a, const strata_topo_t *t, strata_accel_t *x)
{
    strata_error_t err;
    strata_error_clear(&err);
    if (a->accel) {
        if (strata_accel_load(NULL, a->accel, x, &err)) {
            fprintf(stderr, "strata plan: %s\n", err.msg);
            return CLI_USAGE;
        }
        return CLI_OK;
    }
    const char *mem = strata_topo_device(t, strata_topo_endpoint(t, 0)).memory;
    if (!mem)
        return cli_usage_error("plan",
                               "cluster '%s' records no accelerator memory: give --accel "
                               "ID (data/accelerators.json)",
                               a->cluster);
    if (strata_accel_for_memory(NULL, mem, x, &err)) {
        fprintf(stderr, "strata plan: %s; give --accel ID\n", err.msg);
        return CLI_USAGE;
    }
    return CLI_OK;
}

static int run_search(const plan_args_t *a, const strata_plan_ctx_t *ctx)
{
    strata_plan_result_t *res = calloc((size_t)a->top, sizeof(*res));
    int n = 0;
    long evaluated = 0;
    strata_error_t err;
    strata_error_clear(&err);
    if (!res) return CLI_FAIL;
    strata_status_t st =
        strata_plan_search(ctx, &a->cfg, a->cfg.gbs, res, (int)a->top, &n, &evaluated, &err);
    if (st) {
        free(res);
        fprintf(stderr, "strata plan: %s\n", err.msg);
        return CLI_FAIL;
    }
    if (a->json)
        printf("{\"schema_version\": %d, \"evaluated\": %ld, \"plans\": [\n",
               STRATA_JSON_SCHEMA_VERSION, evaluated);
    else
        printf("search: %ld plans considered; the best %d:\n", evaluated, n);
    for (int i = 0; i < n; i++) {
        if (!a->json) printf("\n#%d ", i + 1);
        strata_plan_print(ctx, &res[i], a->json, stdout);
        if (a->json && i + 1 < n) printf(",\n");
    }
    if (a->json) printf("]}\n");
    free(res);
    return CLI_OK;
}

static int run(const plan_args_t *a, const strata_workload_t *w, strata_link_catalog_t *cat)
{
    strata_topo_t *t = NULL;
    strata_plan_ctx_t *ctx = NULL;
    strata_accel_t x;
    strata_error_t err;
    strata_error_clear(&err);
    int rc = load_cluster(a, cat, &t);
    if (!rc) rc = find_accel(a, t, &x);
    if (!rc && strata_plan_ctx_create(w, &x, t, cat, &ctx, &err)) rc = cli_fail(&err);
    if (!rc && a->search) {
        rc = run_search(a, ctx);
    } else if (!rc) {
        strata_plan_config_t c = a->cfg;
        if (c.offload < 0) c.offload = STRATA_PLAN_OFFLOAD_NONE;
        long rest = (long)c.tp * c.pp * c.cp;
        c.dp = (int)(strata_plan_ctx_gpus(ctx) / rest);
        strata_plan_result_t r;
        if (c.dp < 1 || c.dp * rest != strata_plan_ctx_gpus(ctx)) {
            rc = cli_usage_error("plan", "TP %d x PP %d x CP %d = %ld does not divide the %d GPUs",
                                 c.tp, c.pp, c.cp, rest, strata_plan_ctx_gpus(ctx));
        } else if (strata_plan_eval(ctx, &c, &r, &err)) {
            rc = cli_usage_error("plan", "%s", err.msg);
        } else if (a->sim && strata_plan_simulate(ctx, &r, PLAN_SIM_MAX_GPUS, &err)) {
            rc = cli_fail(&err);
        } else {
            strata_plan_print(ctx, &r, a->json, stdout);
            if (!r.fits && r.mem_total <= r.mem_capacity) {
                fprintf(stderr,
                        "strata plan: the plan does not fit: %.2f GB of optimizer states per GPU "
                        "in the offload tier, whose capacity gives each GPU %.2f GB (misses by "
                        "%.2f GB)\n",
                        r.mem_offload / 1e9, r.mem_offload_capacity / 1e9,
                        (r.mem_offload - r.mem_offload_capacity) / 1e9);
                rc = CLI_FAIL;
            } else if (!r.fits) {
                fprintf(stderr,
                        "strata plan: the plan does not fit: %.2f GB per GPU on a %.0f GB "
                        "accelerator (misses by %.2f GB)\n",
                        r.mem_total / 1e9, r.mem_capacity / 1e9,
                        (r.mem_total - r.mem_capacity) / 1e9);
                rc = CLI_FAIL;
            }
        }
    }
    strata_plan_ctx_destroy(ctx);
    strata_topo_destroy(t);
    return rc;
}

int cmd_plan(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        char names[4096];
        printf("%s\n", strata_workload_names(names, sizeof(names)));
        return CLI_OK;
    }
    plan_args_t a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    strata_workload_t w;
    strata_error_t err;
    strata_error_clear(&err);
    if (strata_workload_load(a.model, &w, &err)) {
        char buf[1024];
        fprintf(stderr, "strata plan: %s\n", strata_error_str(&err, buf, sizeof(buf)));
        return CLI_USAGE;
    }
    strata_link_catalog_t *cat = NULL;
    rc = report_load_links(NULL, &cat);
    if (rc) return rc;
    rc = run(&a, &w, cat);
    strata_link_catalog_destroy(cat);
    return rc;
}
