/*
 * cmd_wall.c — `strata wall MODEL FAMILY [--gpus LO:HI] [--weak [--per-gpu S]
 * | --strong --batch B] [--strategy S] [what-ifs] [--json]`: the
 * communication wall. For GPU counts doubling across the range, clusters
 * FAMILY:N/per-server, every point priced by the planner (strata_wall_run):
 * compute, communication per dimension, exposed share, bubble, step,
 * scaling efficiency, MFU, the scale-out fabric's tiers and watts per GPU;
 * the wall is the first count whose exposed communication passes --share.
 * A what-if flag runs the sweep twice and reports the change in step time
 * and in the wall's position.
 */
#include "cli.h"
#include "cli_report.h"

#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: strata wall MODEL FAMILY [--gpus LO:HI] [--weak [--per-gpu S] |\n"
        "                   --strong --batch B] [--strategy best|dp|dp+tp|3d|all]\n"
        "                   [--share F] [--no-overlap] [--compress R [--codec-gbs X]]\n"
        "                   [--precision fp32|bf16|fp8] [--act-precision P] [--nic-x K]\n"
        "                   [--scaleup-x K] [--scaleup-size D] [--flat] [--accel ID] [--json]\n\n"
        "The communication wall of MODEL on clusters FAMILY:N/(GPUs per server) for N\n"
        "doubling from LO to HI (default: one server to 100,000 GPUs). Every point is\n"
        "priced by the planner (strata plan): best = its search, dp = pure data\n"
        "parallelism, dp+tp = TP over the server's GPUs, 3d = TP in the server, PP 8.\n"
        "The wall: the first N whose exposed communication exceeds F of the step.\n\n"
        "  --weak          global batch = S sequences x GPUs (default, S = 1)\n"
        "  --strong        fixed global batch B (default 1536)\n"
        "  --share F       wall threshold, 0 < F < 1 (default 0.5)\n"
        "What-ifs (the sweep runs twice; the change in step time and wall is shown):\n"
        "  --no-overlap    DP gradient sync and PP transfers not overlapped\n"
        "  --compress R    DP gradients compressed to R of their bytes (0 < R <= 1),\n"
        "                  encoded and decoded at --codec-gbs X GB/s per GPU (default 100,\n"
        "                  an assumption: state your codec's rate)\n"
        "  --precision P   DP gradients communicated in fp32, bf16 or fp8\n"
        "  --act-precision P  activations (TP, SP, CP, EP, PP traffic) communicated in\n"
        "                  fp32, bf16 or fp8 (default bf16)\n"
        "  --nic-x K       scale-out bandwidth per NIC x K (e.g. 2, 4)\n"
        "  --scaleup-x K   scale-up bandwidth per GPU x K (a faster NVLink generation)\n"
        "  --scaleup-size D  scale-up domains of D GPUs (NVL72-class: 64 for 8-GPU\n"
        "                  servers; a multiple of the server dividing every count),\n"
        "                  same scale-up link per GPU, same NICs per GPU\n"
        "  --flat          topology-unaware communication: every group that spans\n"
        "                  servers runs a flat ring in a rank order blind to servers\n"
        "                  and rails, at its NIC share, with the ECMP collisions the\n"
        "                  simulator finds for that ring (shuffled order, <= 512 GPUs)\n"
        "  --json          JSON instead of text\n"
        "  -o FILE         write the output to FILE (also --output FILE)\n");
}

typedef struct wall_args {
    const char *model, *family, *accel;
    strata_wall_opts_t o, what;
    int json, all, whatif;
    double compress, codec_gbs, precision, act_precision;
} wall_args_t;

static int parse_range(const char *v, strata_wall_opts_t *o)
{
    char *end;
    long lo = strtol(v, &end, 10), hi = lo;
    if (*end == ':') hi = strtol(end + 1, &end, 10);
    if (*end || lo < 1 || hi < lo || hi > 1 << 24)
        return cli_usage_error("wall", "--gpus expects LO:HI with 1 <= LO <= HI, got '%s'", v);
    o->gpus_min = (int)lo, o->gpus_max = (int)hi;
    return CLI_OK;
}

static int parse_choice(const char *opt, const char *v, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) return *out = i, CLI_OK;
    return cli_usage_error("wall", "%s: unknown value '%s'", opt, v);
}

static int parse_value(const char *s, const char *v, wall_args_t *a)
{
    static const char *const strategies[] = {"best", "dp", "dp+tp", "3d", "all"};
    static const char *const precisions[] = {"fp8", "bf16", "", "fp32"};
    long n;
    int k = 0;
    if (!strcmp(s, "--gpus")) return parse_range(v, &a->o);
    if (!strcmp(s, "--accel")) return a->accel = v, CLI_OK;
    if (!strcmp(s, "--batch") || !strcmp(s, "--per-gpu")) {
        if (cli_parse_int("wall", s, v, 1, 1 << 24, &n)) return CLI_USAGE;
        *(s[2] == 'b' ? &a->o.gbs : &a->o.batch_per_gpu) = (int)n;
        return CLI_OK;
    }
    if (!strcmp(s, "--strategy")) {
        if (parse_choice(s, v, strategies, 5, &k)) return CLI_USAGE;
        a->all = k == 4;
        a->o.strategy = k == 4 ? STRATA_WALL_BEST : (strata_wall_strategy_t)k;
        return CLI_OK;
    }
    if (!strcmp(s, "--precision") || !strcmp(s, "--act-precision")) {
        k = -1;
        for (int i = 0; i < 4 && *v; i++)
            if (!strcmp(v, precisions[i])) k = i;
        if (k < 0) return cli_usage_error("wall", "%s expects fp32, bf16 or fp8, got '%s'", s, v);
        *(s[2] == 'p' ? &a->precision : &a->act_precision) = k + 1, a->whatif = 1;
        return CLI_OK;
    }
    if (!strcmp(s, "--scaleup-size")) {
        if (cli_parse_int("wall", s, v, 1, 1 << 24, &n)) return CLI_USAGE;
        a->what.comm.scaleup_size = (int)n, a->whatif = 1;
        return CLI_OK;
    }
    double x;
    if (!strcmp(s, "--share") || !strcmp(s, "--compress") || !strcmp(s, "--codec-gbs") ||
        !strcmp(s, "--nic-x") || !strcmp(s, "--scaleup-x")) {
        if (cli_parse_double("wall", s, v, 0, 1e9, &x)) return CLI_USAGE;
        if (!strcmp(s, "--share")) {
            if (x <= 0 || x >= 1)
                return cli_usage_error("wall", "--share must be in (0, 1), got %g", x);
            a->o.share = x;
        } else if (!strcmp(s, "--compress")) {
            if (x <= 0 || x > 1)
                return cli_usage_error("wall", "--compress ratio must be in (0, 1], got %g", x);
            a->compress = x, a->whatif = 1;
        } else if (!strcmp(s, "--codec-gbs")) {
            if (x <= 0) return cli_usage_error("wall", "--codec-gbs must be positive, got %g", x);
            a->codec_gbs = x;
        } else {
            if (x <= 0 || x > 1000)
                return cli_usage_error("wall", "%s must be in (0, 1000], got %g", s, x);
            *(s[2] == 'n' ? &a->what.comm.nic_scale : &a->what.comm.scaleup_scale) = x;
            a->whatif = 1;
        }
        return CLI_OK;
    }
    return cli_unknown_option("wall", s);
}

static int parse_args(int argc, char **argv, wall_args_t *a)
{
    memset(a, 0, sizeof(*a));
    strata_plan_config_default(&a->o.base);
    a->o.share = 0.5, a->o.gbs = 1536, a->o.batch_per_gpu = 1, a->all = 1;
    a->o.comm = (strata_plan_comm_opts_t){.nic_scale = 1, .dp_ratio = 1};
    a->what.comm = a->o.comm;
    a->codec_gbs = 100;
    int no_overlap = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--json"))
            a->json = 1;
        else if (!strcmp(s, "--weak"))
            a->o.strong = false;
        else if (!strcmp(s, "--strong"))
            a->o.strong = true;
        else if (!strcmp(s, "--no-overlap"))
            no_overlap = 1, a->whatif = 1;
        else if (!strcmp(s, "--flat"))
            a->what.comm.flat = true, a->whatif = 1;
        else if (s[0] == '-' && s[1]) {
            if (i + 1 >= argc) return cli_usage_error("wall", "%s needs a value or is unknown", s);
            int rc = parse_value(s, argv[++i], a);
            if (rc) return rc;
        } else if (!a->model)
            a->model = s;
        else if (!a->family)
            a->family = s;
        else
            return cli_usage_error("wall", "unexpected argument '%s'", s);
    }
    if (!a->model) return cli_usage_error("wall", "missing MODEL (e.g. gpt3-175b)");
    if (!a->family)
        return cli_usage_error("wall", "missing FAMILY (a cluster preset, e.g. dgx-h100)");
    a->o.family = a->family, a->o.accel = a->accel;
    strata_wall_opts_t *w = &a->what;
    strata_plan_comm_opts_t comm = w->comm;
    *w = a->o;
    w->comm = comm;
    if (no_overlap) w->base.overlap_dp = w->base.overlap_pp = false;
    return CLI_OK;
}

static void print_text(const strata_wall_t *wl, const strata_wall_opts_t *o)
{
    printf("strategy %s, %s scaling, the wall at exposed communication > %.0f %% of the step\n",
           strata_wall_strategy_name(o->strategy), o->strong ? "strong" : "weak", o->share * 100);
    printf("%7s %6s %-17s %8s %7s %8s %8s %8s %7s %6s %5s %5s %3s %6s %6s\n", "GPUs", "batch",
           "plan", "compute", "bubble", "TP comm", "DP comm", "exposed", "step", "share", "eff",
           "MFU", "fab", "W/GPU", "hop-ns");
    for (int i = 0; i < wl->npoints; i++) {
        const strata_wall_point_t *p = &wl->points[i];
        const strata_plan_result_t *r = &p->r;
        if (!p->ok) {
            printf("%7d %6d %s\n", p->gpus, p->gbs, p->why);
            continue;
        }
        char plan[40];
        snprintf(plan, sizeof(plan), "%d/%d/%d z%d m%d", r->cfg.tp, r->cfg.pp, r->cfg.dp,
                 r->cfg.zero, r->cfg.mbs);
        printf("%7d %6d %-17s %8.3f %7.3f %8.3f %8.3f %8.3f %7.3f %5.1f%% %5.2f %4.1f%% %3d %6.1f "
               "%6.0f%s\n",
               p->gpus, p->gbs, plan, r->compute, r->bubble, p->comm_total[0], p->comm_total[2],
               p->exposed_comm, r->step, p->exposed_share * 100, p->efficiency, r->mfu * 100,
               p->fabric_tiers, p->fabric_w_per_gpu, p->fabric_latency_ns,
               i == wl->wall_index ? "  <- wall" : "");
    }
    if (wl->wall_index < 0) {
        printf("no wall up to %d GPUs\n", wl->npoints ? wl->points[wl->npoints - 1].gpus : 0);
    } else {
        const strata_wall_point_t *p = &wl->points[wl->wall_index];
        printf("wall: %d GPUs, exposed communication %.1f %% of the step; most exposed: %s on %s\n",
               p->gpus, p->exposed_share * 100, p->tier_dim, p->tier);
    }
    printf("(plan = TP/PP/DP zero-stage micro-batch; times in s per step; fab = switch tiers)\n");
    if (o->comm.flat) {
        printf("flat rings keep this share of their NIC bandwidth under ECMP collisions (a ring\n"
               "allreduce in a shuffled rank order, spread / ECMP routing time; * simulated at\n"
               "that count, else the last simulated):");
        for (int i = 0; i < wl->npoints; i++)
            if (wl->points[i].gpus > wl->per_server)
                printf(" %d:%.0f%%%s", wl->points[i].gpus, wl->points[i].ecmp_eff * 100,
                       wl->points[i].ecmp_simulated ? "*" : "");
        printf("\n");
    }
}

/* The five communication dimensions of a plan, as the planner orders them. */
static void json_dims(strata_json_t *j, const char *key, const double *v)
{
    static const char *const dims[] = {"tp", "pp", "dp", "ep", "cp"};
    strata_json_open(j, key, '{');
    for (int i = 0; i < 5; i++)
        strata_json_num(j, dims[i], v[i]);
    strata_json_close(j, '{');
}

static void json_point(strata_json_t *j, const strata_wall_point_t *p)
{
    const strata_plan_result_t *r = &p->r;
    strata_json_open(j, NULL, '{');
    strata_json_int(j, "gpus", p->gpus);
    strata_json_int(j, "batch", p->gbs);
    strata_json_bool(j, "ok", p->ok);
    if (p->ok) {
        strata_json_int(j, "tp", r->cfg.tp), strata_json_int(j, "pp", r->cfg.pp);
        strata_json_int(j, "dp", r->cfg.dp), strata_json_int(j, "zero", r->cfg.zero);
        strata_json_int(j, "mbs", r->cfg.mbs);
        strata_json_num(j, "compute_s", r->compute);
        strata_json_num(j, "bubble_s", r->bubble);
        json_dims(j, "comm_s", p->comm_total);
        json_dims(j, "exposed_s", r->exposed);
        strata_json_num(j, "step_s", r->step);
        strata_json_num(j, "exposed_share", p->exposed_share);
        strata_json_num(j, "efficiency", p->efficiency);
        strata_json_num(j, "mfu", r->mfu);
        strata_json_str(j, "tier", p->tier);
    }
    if (p->ecmp_eff > 0) {
        strata_json_num(j, "ecmp_eff", p->ecmp_eff);
        strata_json_bool(j, "ecmp_simulated", p->ecmp_simulated);
    }
    strata_json_int(j, "fabric_tiers", p->fabric_tiers);
    strata_json_num(j, "fabric_per_gpu_W", p->fabric_w_per_gpu);
    strata_json_num(j, "fabric_cpo_per_gpu_W", p->fabric_cpo_w_per_gpu);
    strata_json_num(j, "fabric_latency_s", p->fabric_latency_ns * 1e-9);
    strata_json_close(j, '{');
}

static void print_json(strata_json_t *j, const strata_wall_t *wl, const strata_wall_opts_t *o,
                       const char *key)
{
    strata_json_open(j, NULL, '{');
    strata_json_str(j, "strategy", strata_wall_strategy_name(o->strategy));
    strata_json_str(j, "run", key);
    strata_json_int(j, "wall", wl->wall_index < 0 ? 0 : wl->points[wl->wall_index].gpus);
    strata_json_open(j, "points", '[');
    for (int i = 0; i < wl->npoints; i++)
        json_point(j, &wl->points[i]);
    strata_json_close(j, '[');
    strata_json_close(j, '{');
}

/* The what-if against the baseline: step change per point, wall move. */
static void print_delta(const strata_wall_t *b, const strata_wall_t *w)
{
    printf("what-if: step time change per point");
    for (int i = 0; i < b->npoints && i < w->npoints; i++)
        if (b->points[i].ok && w->points[i].ok)
            printf(" %d:%+.1f%%", b->points[i].gpus,
                   (w->points[i].r.step / b->points[i].r.step - 1) * 100);
    char from[32] = "none in the range", to[32] = "none in the range";
    if (b->wall_index >= 0) snprintf(from, sizeof(from), "%d GPUs", b->points[b->wall_index].gpus);
    if (w->wall_index >= 0) snprintf(to, sizeof(to), "%d GPUs", w->points[w->wall_index].gpus);
    printf("\nwhat-if: wall %s -> %s\n", from, to);
}

static int run_one(const wall_args_t *a, const strata_workload_t *w,
                   const strata_link_catalog_t *cat, const strata_fabric_catalog_t *fab,
                   strata_wall_strategy_t s, int first, strata_json_t *j)
{
    strata_wall_t *b = malloc(sizeof(*b)), *x = a->whatif ? malloc(sizeof(*x)) : NULL;
    strata_wall_opts_t o = a->o, ow = a->what;
    strata_error_t err;
    strata_error_clear(&err);
    int rc = CLI_OK;
    o.strategy = ow.strategy = s;
    if (!b || (a->whatif && !x))
        rc = CLI_FAIL;
    else if (strata_wall_run(w, cat, fab, &o, b, &err) ||
             (x && strata_wall_run(w, cat, fab, &ow, x, &err)))
        rc = err.status == STRATA_ERR_INVALID ? cli_usage_error("wall", "%s", err.msg)
                                              : cli_fail(&err);
    if (!rc && a->json) {
        print_json(j, b, &o, "base");
        if (x) print_json(j, x, &ow, "what-if");
    } else if (!rc) {
        printf("%s", first ? "" : "\n");
        print_text(b, &o);
        if (x) printf("\nwith the what-if:\n"), print_text(x, &ow), print_delta(b, x);
    }
    free(b);
    free(x);
    return rc;
}

int cmd_wall(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) return usage(stdout), CLI_OK;
    wall_args_t a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    strata_workload_t w;
    strata_fabric_catalog_t fab;
    strata_error_t err;
    strata_error_clear(&err);
    if (strata_workload_load(a.model, &w, &err)) {
        char buf[1024];
        fprintf(stderr, "strata wall: %s\n", strata_error_str(&err, buf, sizeof(buf)));
        return CLI_USAGE;
    }
    /* precision: bytes per communicated element (fp8 1, bf16 2, fp32 4) */
    double ratio =
        (a.compress > 0 ? a.compress : 1) * (a.precision > 0 ? a.precision / w.grad_bytes : 1);
    a.what.comm.dp_ratio = ratio;
    /* activations are BF16 (2 bytes) in the planner: the wire ratio is bytes / 2 */
    if (a.act_precision > 0) a.what.comm.act_ratio = a.act_precision / 2;
    if (a.compress > 0) a.what.comm.codec_bw = a.codec_gbs * 1e9;
    if (strata_fabric_catalog_load(NULL, &fab, &err)) return cli_fail(&err);
    strata_link_catalog_t *cat = NULL;
    rc = report_load_links(NULL, &cat);
    if (rc) return rc;
    strata_json_t j;
    if (a.json) {
        strata_json_document(&j, stdout);
        strata_json_str(&j, "model", w.name);
        strata_json_str(&j, "family", a.family);
        strata_json_open(&j, "runs", '[');
    }
    for (int s = a.all ? 0 : (int)a.o.strategy; !rc && s <= (a.all ? 3 : (int)a.o.strategy); s++)
        rc = run_one(&a, &w, cat, &fab, (strata_wall_strategy_t)s,
                     s == (a.all ? 0 : (int)a.o.strategy), &j);
    if (a.json && !rc) strata_json_close(&j, '['), strata_json_close(&j, '{');
    strata_link_catalog_destroy(cat);
    return rc;
}
