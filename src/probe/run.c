/*
 * run.c — strata_probe_run: the sections in order, each with its share of
 * the time budget, a progress bar over the whole, and the sanity checks
 * every figure passes before the result is returned; the text and JSON
 * renderings of a result.
 *
 * Budgets (s, default / --quick), in this order: memory 24 / 3, TCP 3 /
 * 0.6, system 6 / 1.5, coherence 3 / 0.6, hand-over 2 / 0.4, shm 6 / 1.5;
 * a placement reading of 0.1 s before and
 * after, and (not with --quick) the last three once more when the
 * placement moved (run_placed). A loaded host takes fewer samples of each,
 * not longer: each section's deadline (x->deadline, its start + its plan)
 * bounds its figures' shares (probe_share, probe_more), down to one sample
 * a figure; the hand-over's sizes take fewer rounds (probe_rounds) and
 * the shm transport's launches fewer samples. A figure whose attempt
 * stalls twice is not measured (probe_figure, res->gaps) and the probe
 * goes on.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <jansson.h>
#include <string.h>

typedef struct section {
    const char *name;
    double plan, plan_quick;
    strata_status_t (*run)(probe_ctx_t *, double, strata_error_t *);
} section_t;

/* The sections whose figures depend on the vCPUs' placement (the line
 * hand-off, the hand-over between cores, strata's shm transport) come
 * last, right before the closing placement reading, so that they describe
 * the placement the probe ends in, which is the one a bench run right
 * after it meets if the host does not move the vCPUs in between: traced
 * on this host (2026-12-03, bench/README.md "s13-h19") the placement held
 * through the memory stage and moved at the sections that start
 * processes or sleep (shm, tcp, system costs), where a vCPU idles. */
static const section_t sections[] = {
    {"memory", 24, 3, probe_mem},         {"store overlap", 1, 0.3, probe_overlap},
    {"tcp", 3, 0.6, probe_net},           {"system costs", 6, 1.5, probe_sys},
    {"coherence", 3, 0.6, probe_c2c},     {"hand-over", 2, 0.4, probe_remote},
    {"shm transport", 6, 1.5, probe_shm},
};
#define NSECTIONS    (sizeof(sections) / sizeof(sections[0]))
#define FIRST_PLACED 4 /* sections[FIRST_PLACED..]: the placement's */

/* coherence_only: what `strata coherence local` needs */
static const section_t coherence_sections[] = {
    {"memory", 24, 3, probe_mem},
    {"coherence", 3, 0.6, probe_c2c},
};

/* host_costs_only: what bench/vs-mpi prints beside its table. */
static const section_t cost_sections[] = {
    {"coherence", 3, 0.6, probe_c2c},
    {"first touch", 2, 0.5, probe_fault},
};

/* A placement reading's budget (s): 0.1 s is ~60 samples of 100 round
 * trips at the far placement's 165 ns */
#define PLACEMENT_READ_S 0.1

bool probe_placement_differs(const double *v, int n)
{
    double lo = 0, hi = 0;
    for (int i = 0; i < n; i++) {
        if (!(v[i] > 0)) continue;
        if (lo == 0 || v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
    }
    return lo > 0 && hi > STRATA_PROBE_PLACEMENT_RATIO * lo;
}

/* Run tab[from..to) in turn, each with its quick plan when short; each
 * adds its plan to x->done. */
static strata_status_t run_sections(probe_ctx_t *x, const section_t *tab, size_t from, size_t to,
                                    bool short_plan, strata_error_t *err)
{
    strata_status_t st = STRATA_OK;
    for (size_t i = from; i < to && st == STRATA_OK; i++) {
        double plan = x->opts->quick || short_plan ? tab[i].plan_quick : tab[i].plan;
        x->bar.label = tab[i].name;
        double t0 = util_now();
        x->deadline = t0 + plan;
        st = tab[i].run(x, plan, err);
        strata_log(STRATA_LOG_INFO, "probe: %s: %.2f s (planned %.1f s)", tab[i].name,
                   util_now() - t0, plan);
        x->done += plan;
    }
    return st;
}

/* A placement reading, its time logged as a section's. */
static strata_status_t reading(strata_probe_result_t *res, strata_probe_stat_t *s_p,
                               strata_error_t *err)
{
    double t0 = util_now();
    strata_status_t st = probe_line_reading(res, PLACEMENT_READ_S, s_p, err);
    strata_log(STRATA_LOG_INFO, "probe: placement reading: %.2f s (planned %.1f s)",
               util_now() - t0, PLACEMENT_READ_S);
    return st;
}

/* Memory, a reading, the rest (from `from`), a reading. */
static strata_status_t one_pass(probe_ctx_t *x, size_t from, bool short_plan, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    strata_status_t st = run_sections(x, sections, 0, 1, short_plan, err);
    if (st == STRATA_OK) st = reading(res, &res->line_mem, err);
    if (st == STRATA_OK) st = run_sections(x, sections, from, NSECTIONS, short_plan, err);
    if (st == STRATA_OK) st = reading(res, &res->line_last, err);
    return st;
}

bool probe_barrier_closer(const strata_probe_result_t *r)
{
    return r->barrier_fit.n > 0 && r->c2c_all.n > 0 && r->barrier_fit.median < r->c2c_all.median;
}

/* Whether the calibration's three readings (after the memory stage, in
 * the coherence section, at the end) span two placements. */
static bool readings_differ(const strata_probe_result_t *r)
{
    double v[3] = {r->line_mem.median, r->c2c_all.median, r->line_last.median};
    return probe_placement_differs(v, 3);
}

/* Whether the figures of the calibration (the memory curves, the
 * line-dependent sections, up to the end) span two placements: the
 * readings, or the shm section's barrier faster than one hand-off of the
 * coherence section's line (it met a placement between two readings:
 * every reading far and the barrier close, 2026-12-03 11:49:58,
 * bench/README.md "s14-h19"). */
static bool mixed(const strata_probe_result_t *r)
{
    return readings_differ(r) || probe_barrier_closer(r);
}

/* The whole probe: a placement reading at the start, after the memory
 * stage and at the end. When the calibration's figures span two
 * placements (the memory stage's reading, the coherence section's and the
 * end's; not with --quick, whose budget has no room), the memory stage
 * and the placement's sections run once more, on their --quick budgets
 * (sizes unchanged), so that the calibration describes one placement, the
 * one at the end; `placement_mixed` says when it moved again. A move
 * before the memory stage alone is said (placement_changed), not redone. */
static strata_status_t run_placed(probe_ctx_t *x, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    strata_status_t st = reading(res, &res->line_first, err);
    if (st == STRATA_OK) st = one_pass(x, 1, false, err);
    double v[4] = {res->line_first.median, res->line_mem.median, res->c2c_all.median,
                   res->line_last.median};
    res->placement_changed = probe_placement_differs(v, 4);
    if (st == STRATA_OK && !x->opts->quick && mixed(res)) {
        strata_log(STRATA_LOG_INFO,
                   "probe: the placement moved (line %.0f, %.0f, %.0f, %.0f ns): memory and "
                   "the placement's sections again",
                   v[0] * 1e9, v[1] * 1e9, v[2] * 1e9, v[3] * 1e9);
        res->remeasured = true;
        st = one_pass(x, FIRST_PLACED, true, err);
    }
    res->placement_mixed = mixed(res);
    return st;
}

strata_status_t strata_probe_run(const strata_probe_opts_t *opts, strata_probe_result_t **res_p,
                                 strata_error_t *err)
{
    strata_probe_opts_t none = {0};
    if (!opts) opts = &none;
    if (!res_p) return strata_error_set(err, STRATA_ERR_INVALID, "probe: no result pointer");
    strata_probe_result_t *res = util_malloc(sizeof(*res));
    if (!res) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    memset(res, 0, sizeof(*res));
    res->quick = opts->quick;
    probe_host_facts(res);
    if (res->cores < 1) {
        util_free(res);
        return strata_error_set(err, STRATA_ERR_SYSTEM, "probe: no cpu is available");
    }
    probe_ctx_t x = {.opts = opts, .res = res, .t0 = util_now()};
    const section_t *tab = opts->host_costs_only  ? cost_sections
                           : opts->coherence_only ? coherence_sections
                                                  : sections;
    size_t nsec = opts->host_costs_only || opts->coherence_only ? 2 : NSECTIONS;
    for (size_t i = 0; i < nsec; i++)
        x.total += opts->quick ? tab[i].plan_quick : tab[i].plan;
    if (opts->progress) util_progress_begin(&x.bar, "strata probe", x.total);
    strata_status_t st =
        tab == sections ? run_placed(&x, err) : run_sections(&x, tab, 0, nsec, false, err);
    if (st == STRATA_OK && tab == sections) probe_accel(&x, 0);
    if (opts->progress) util_progress_end(&x.bar);
    res->seconds = util_now() - x.t0;
    strata_log(STRATA_LOG_INFO, "probe: all: %.2f s (planned %.1f s)", res->seconds, x.total);
    if (st == STRATA_OK) st = strata_probe_validate(res, err);
    if (st != STRATA_OK) {
        util_free(res);
        return st;
    }
    *res_p = res;
    return STRATA_OK;
}

void strata_probe_destroy(strata_probe_result_t *res)
{
    util_free(res);
}

/* ==== Sanity ==== */

static strata_status_t check_lat(const char *what, const strata_probe_stat_t *s,
                                 strata_error_t *err)
{
    if (s->n == 0) return STRATA_OK; /* not measured */
    strata_status_t st = strata_probe_check_latency(what, s->median, err);
    return st ? st : strata_probe_check_latency(what, s->min, err);
}

static strata_status_t check_bw(const char *what, const strata_probe_stat_t *s, double ceiling,
                                strata_error_t *err)
{
    if (s->n == 0) return STRATA_OK;
    return strata_probe_check_bandwidth(what, s->median, ceiling, err);
}

strata_status_t strata_probe_validate(const strata_probe_result_t *r, strata_error_t *err)
{
    strata_status_t st = STRATA_OK;
    char what[96];
    /* the declared bus bounds only what comes from DRAM: the big buffer */
    for (int i = 0; i < r->numa_nodes && st == STRATA_OK; i++)
        for (int k = 0; k < STRATA_PROBE_MEM_KINDS && st == STRATA_OK; k++) {
            snprintf(what, sizeof(what), "memory %s, node %d, one core",
                     strata_probe_mem_kind_name(k), r->numa[i].node);
            st = check_bw(what, &r->numa[i].one[k], r->bus_ceiling, err);
            snprintf(what, sizeof(what), "memory %s, node %d, all cores",
                     strata_probe_mem_kind_name(k), r->numa[i].node);
            if (st == STRATA_OK) st = check_bw(what, &r->numa[i].all[k], r->bus_ceiling, err);
        }
    /* each size curve named in its message (before, all eight were called
     * "memory copy", so a bad read curve blamed the copy) */
    static const char *const curve_name[] = {"copy",
                                             "reduce",
                                             "read",
                                             "write",
                                             "read, all cores",
                                             "write, all cores",
                                             "streaming write",
                                             "streaming write, all cores"};
    for (int c = 0; c < r->curve_n && st == STRATA_OK; c++) {
        const strata_probe_stat_t *curve[] = {&r->copy_curve[c],     &r->reduce_curve[c],
                                              &r->read_curve[c],     &r->write_curve[c],
                                              &r->read_all_curve[c], &r->write_all_curve[c],
                                              &r->write_nt_curve[c], &r->write_nt_all_curve[c]};
        for (size_t k = 0; k < sizeof(curve) / sizeof(curve[0]) && st == STRATA_OK; k++) {
            snprintf(what, sizeof(what), "memory %s at %.0f B", curve_name[k], r->curve_bytes[c]);
            st = check_bw(what, curve[k], 0, err);
        }
    }
    if (st == STRATA_OK) st = check_lat("coherence (cache-line transfer)", &r->c2c_all, err);
    if (st == STRATA_OK) st = check_lat("coherence at the start", &r->line_first, err);
    if (st == STRATA_OK) st = check_lat("coherence at the end", &r->line_last, err);
    if (st == STRATA_OK) st = check_lat("coherence after the memory stage", &r->line_mem, err);
    for (int i = 0; i < r->remote_n && st == STRATA_OK; i++) {
        snprintf(what, sizeof(what), "hand-over at %.0f B", r->remote_bytes[i]);
        st = check_bw(what, &r->remote_copy[i], 0, err);
    }
    for (int i = 0; i < r->flat_n && st == STRATA_OK; i++) {
        snprintf(what, sizeof(what), "hand-over reduced at %.0f B", r->flat_bytes[i]);
        st = check_bw(what, &r->flat_copy[i], 0, err);
    }
    for (int i = 0; i < r->reduce_n && st == STRATA_OK; i++) {
        snprintf(what, sizeof(what), "reduction of a hand-over at %.0f B", r->reduce_bytes[i]);
        st = check_bw(what, &r->reduce_load[i], 0, err);
    }
    if (st == STRATA_OK && r->stream_hand.n && r->stream_reduce.n &&
        !(st = check_bw("streamed hand-over", &r->stream_hand, 0, err)))
        st = check_bw("streamed reduction", &r->stream_reduce, 0, err);
    for (int z = 0; z < r->shm_curve_n && st == STRATA_OK; z++) {
        snprintf(what, sizeof(what), "shm one way at %.0f B", r->shm_curve_bytes[z]);
        st = check_lat(what, &r->shm_oneway[z], err);
    }
    if (st == STRATA_OK) st = check_lat("shm alpha", &r->shm_alpha, err);
    if (st == STRATA_OK) st = check_bw("shm bandwidth", &r->shm_bw, 0, err);
    if (st == STRATA_OK) st = check_lat("tcp alpha", &r->tcp_alpha, err);
    if (st == STRATA_OK) st = check_bw("tcp bandwidth", &r->tcp_bw, 0, err);
    if (st == STRATA_OK) st = check_lat("process switch", &r->proc_switch, err);
    if (st == STRATA_OK) st = check_lat("futex wake", &r->futex_wake, err);
    if (st == STRATA_OK) st = check_lat("futex switch", &r->futex_switch, err);
    if (st == STRATA_OK) st = check_lat("page fault", &r->page_fault, err);
    if (st == STRATA_OK) st = check_lat("barrier", &r->barrier_fit, err);
    if (st == STRATA_OK && r->line_work.n)
        st = check_lat("line path's own work", &r->line_work, err);
    if (st == STRATA_OK && r->clock_read.n) st = check_lat("clock read", &r->clock_read, err);
    /* a difference of two batches' medians (shm.c, flat_work): its min
     * (the flat batch's fastest less the others' medians) can reach 0
     * in noise, so the median alone is held to physical sense */
    if (st == STRATA_OK && r->flat_work.n)
        st = strata_probe_check_latency("flat call's own work", r->flat_work.median, err);
    /* nt_overlap, a hidden fraction, is kept as measured (the calibration
     * clamps it to 0 .. 1: a loaded host reads it below 0, never a reason
     * to fail); it is finite, as strata_probe_stat refuses a NAN sample */
    return st;
}

/* ==== Text ==== */

static void line_stat(FILE *out, const char *name, const strata_probe_stat_t *s, double scale,
                      const char *unit)
{
    if (s->n == 0) {
        fprintf(out, "  %-34s %12s\n", name, "-");
        return;
    }
    fprintf(out, "  %-34s %12.3f %-5s ±%4.1f%%  [%.3f .. %.3f]  n=%d\n", name, s->median * scale,
            unit, s->spread * 50, s->min * scale, s->max * scale, s->n);
}

/* A rate in GB/s, or "-" where it was not measured. */
static const char *gbps_or_dash(const strata_probe_stat_t *s, char *buf, size_t len)
{
    if (s->n == 0) return "-";
    snprintf(buf, len, "%.2f", s->median / 1e9);
    return buf;
}

/* The memory stage's figures taken, and those with fewer than
 * PROBE_MIN_REPS samples (its time ran short: a loaded host). */
static int memory_short(const strata_probe_result_t *r, int *taken)
{
    int n = 0, k = 0;
    for (int i = 0; i < r->numa_nodes; i++)
        for (int m = 0; m < STRATA_PROBE_MEM_KINDS; m++) {
            const strata_probe_stat_t *s[] = {&r->numa[i].one[m], &r->numa[i].all[m]};
            for (int j = 0; j < 2; j++)
                if (s[j]->n) n++, k += s[j]->n < PROBE_MIN_REPS;
        }
    for (int c = 0; c < r->curve_n; c++) {
        const strata_probe_stat_t *s[] = {&r->copy_curve[c],     &r->reduce_curve[c],
                                          &r->read_curve[c],     &r->write_curve[c],
                                          &r->read_all_curve[c], &r->write_all_curve[c],
                                          &r->write_nt_curve[c], &r->write_nt_all_curve[c]};
        for (size_t j = 0; j < sizeof(s) / sizeof(s[0]); j++)
            if (s[j]->n) n++, k += s[j]->n < PROBE_MIN_REPS;
    }
    *taken = n;
    return k;
}

static void print_memory(const strata_probe_result_t *r, FILE *out)
{
    char b[32], nt[32];
    char ab[32];
    fprintf(out,
            "\nmemory bandwidth, %s buffers (all cores: %s each) (GB/s; median ±half the IQR; "
            "[min .. max])\n",
            util_fmt_bytes((double)r->big_bytes, b, sizeof(b)),
            util_fmt_bytes((double)r->all_bytes, ab, sizeof(ab)));
    for (int i = 0; i < r->numa_nodes; i++)
        for (int k = 0; k < STRATA_PROBE_MEM_KINDS; k++) {
            char name[64];
            snprintf(name, sizeof(name), "node %d %-8s one core", r->numa[i].node,
                     strata_probe_mem_kind_name(k));
            line_stat(out, name, &r->numa[i].one[k], 1e-9, "GB/s");
            snprintf(name, sizeof(name), "node %d %-8s %d cores", r->numa[i].node,
                     strata_probe_mem_kind_name(k), r->numa[i].cores);
            line_stat(out, name, &r->numa[i].all[k], 1e-9, "GB/s");
            if (r->numa[i].all_windows[k] > 0 &&
                r->numa[i].all_concurrent[k] < r->numa[i].all_windows[k])
                fprintf(out, "    (%d of %d windows had all %d cores running together%s)\n",
                        r->numa[i].all_concurrent[k], r->numa[i].all_windows[k], r->numa[i].cores,
                        r->numa[i].all_concurrent[k] < PROBE_MIN_REPS
                            ? ": too few, the figure is over all windows, each first start to "
                              "last end"
                            : ": the figure is theirs");
        }
    fprintf(out,
            "\none core, by buffer size (GB/s; write nt: streaming stores)\n"
            "  %10s %10s %10s %10s %10s %10s\n",
            "buffer", "copy", "reduce", "read", "write", "write nt");
    for (int c = 0; c < r->curve_n; c++)
        fprintf(out, "  %10s %10.2f %10.2f %10.2f %10.2f %10s\n",
                util_fmt_bytes(r->curve_bytes[c], b, sizeof(b)), r->copy_curve[c].median / 1e9,
                r->reduce_curve[c].median / 1e9, r->read_curve[c].median / 1e9,
                r->write_curve[c].median / 1e9,
                gbps_or_dash(&r->write_nt_curve[c], nt, sizeof(nt)));
    if (r->curve_n > 0 && r->read_all_curve[0].n > 0) {
        fprintf(out,
                "\neach core while all %d stream at once, by buffer size (GB/s per core)\n"
                "  %10s %10s %10s %10s\n",
                r->numa_nodes > 0 ? r->numa[0].cores : r->cores, "buffer", "read", "write",
                "write nt");
        for (int c = 0; c < r->curve_n; c++)
            fprintf(out, "  %10s %10.2f %10.2f %10s\n",
                    util_fmt_bytes(r->curve_bytes[c], b, sizeof(b)),
                    r->read_all_curve[c].median / 1e9, r->write_all_curve[c].median / 1e9,
                    gbps_or_dash(&r->write_nt_all_curve[c], nt, sizeof(nt)));
    }
    fprintf(out, "  bus ceiling: %s\n", r->ceiling_source);
    int taken, few = memory_short(r, &taken);
    if (few)
        fprintf(out,
                "  %d of %d figures took fewer than %d samples (the stage's time ran short: a "
                "loaded host); --json gives each figure's n and spread\n",
                few, taken, PROBE_MIN_REPS);
}

/* The placement readings, and a line saying so when the placement moved. */
static void print_placement(const strata_probe_result_t *r, FILE *out)
{
    if (r->line_first.n == 0 || r->line_last.n == 0) return;
    fprintf(out,
            "  placement: line %.0f ns at the start, %.0f ns after the memory stage, %.0f ns in "
            "the coherence section, %.0f ns at the end%s\n",
            r->line_first.median * 1e9, r->line_mem.median * 1e9, r->c2c_all.median * 1e9,
            r->line_last.median * 1e9,
            r->remeasured ? " (the last three of a second pass: the placement had moved)" : "");
    if (r->placement_mixed && !readings_differ(r))
        fprintf(out,
                "  PLACEMENT CHANGED during the probe: the barrier (%.3f us) is under one line "
                "hand-off (%.0f ns), which no barrier is in one placement: the shm section met "
                "another placement than the coherence section\n",
                r->barrier_fit.median * 1e6, r->c2c_all.median * 1e9);
    else if (r->placement_mixed)
        fprintf(out,
                "  PLACEMENT CHANGED during the probe (readings over %.1fx apart): the "
                "calibration mixes two placements (memory curves at %.0f ns, the line-dependent "
                "figures at %.0f ns)\n",
                STRATA_PROBE_PLACEMENT_RATIO, r->line_mem.median * 1e9, r->c2c_all.median * 1e9);
    else if (r->placement_changed)
        fprintf(out, "  placement moved during the probe; the calibration %s one (%.0f ns)\n",
                r->remeasured ? "was measured again in" : "was measured in",
                r->c2c_all.median * 1e9);
}

static void print_c2c(const strata_probe_result_t *r, FILE *out)
{
    fprintf(out, "\ncache-line transfer, one way (ns), cpu by cpu\n      ");
    int n = r->cores > 16 ? 16 : r->cores;
    if (r->c2c_note[0]) {
        fprintf(out, "not measured: %s\n", r->c2c_note);
        n = 0;
    }
    for (int j = 0; j < n; j++)
        fprintf(out, " %6d", r->cpus[j]);
    fprintf(out, "\n");
    for (int i = 0; i < n; i++) {
        fprintf(out, "  %4d", r->cpus[i]);
        for (int j = 0; j < n; j++)
            fprintf(out, " %6.0f", r->c2c[i][j] * 1e9);
        fprintf(out, "\n");
    }
    if (r->cores > n && n > 0)
        fprintf(out, "  (first 16 of %d cpus shown; --json has all)\n", r->cores);
    line_stat(out, "all pairs", &r->c2c_all, 1e9, "ns");
    print_placement(r, out);
    if (r->packages > 1) {
        line_stat(out, "pairs within a socket (medians)", &r->c2c_within, 1e9, "ns");
        line_stat(out, "pairs across sockets (medians)", &r->c2c_across, 1e9, "ns");
    }
    if (r->remote_n)
        fprintf(out,
                "\nhand-over between cores: one stages, the other copies out, both at once, as the "
                "pipeline (GB/s)\n");
    for (int i = 0; i < r->remote_n; i++) {
        char b[32], name[48];
        snprintf(name, sizeof(name), "%s", util_fmt_bytes(r->remote_bytes[i], b, sizeof(b)));
        line_stat(out, name, &r->remote_copy[i], 1e-9, "GB/s");
    }
    if (r->flat_n)
        fprintf(out, "hand-over in the flat allreduce's round, back to back: bytes / what the "
                     "copy into its slot and the sum of the peer's slot with its own input add "
                     "(GB/s)\n");
    for (int i = 0; i < r->flat_n; i++) {
        char b[32], name[48];
        snprintf(name, sizeof(name), "%s, reduced", util_fmt_bytes(r->flat_bytes[i], b, sizeof(b)));
        line_stat(out, name, &r->flat_copy[i], 1e-9, "GB/s");
    }
    if (r->flat_sync.n) {
        line_stat(out, "flags alone (staged, done), a round", &r->flat_sync, 1e6, "us");
        if (r->c2c_all.median > 0)
            fprintf(out, "    = %.1f line hand-offs of %.0f ns (the engine's flat path counts 2)\n",
                    r->flat_sync.median / r->c2c_all.median, r->c2c_all.median * 1e9);
    }
    if (r->reduce_n)
        fprintf(out, "the pipeline's reduction: the other's buffer summed with one's own input "
                     "and written over it (GB/s)\n");
    for (int i = 0; i < r->reduce_n; i++) {
        char b[32], name[48];
        snprintf(name, sizeof(name), "%s, pipeline reduce",
                 util_fmt_bytes(r->reduce_bytes[i], b, sizeof(b)));
        line_stat(out, name, &r->reduce_load[i], 1e-9, "GB/s");
    }
    if (r->stream_hand.n && r->stream_reduce.n) {
        char b[32], name[64];
        fprintf(out, "the pipeline's round streamed: input and output past the last-level cache, "
                     "at a slice (GB/s)\n");
        util_fmt_bytes(r->stream_bytes, b, sizeof(b));
        snprintf(name, sizeof(name), "%s, streamed hand-over", b);
        line_stat(out, name, &r->stream_hand, 1e-9, "GB/s");
        snprintf(name, sizeof(name), "%s, streamed reduce", b);
        line_stat(out, name, &r->stream_reduce, 1e-9, "GB/s");
    }
}

/* The figures given up (strata_probe_gap_t), one line each. */
static void print_gaps(const strata_probe_result_t *r, FILE *out)
{
    if (r->gap_n == 0) return;
    fprintf(out, "\nnot measured (an attempt stalled, and so did one more):\n");
    for (int i = 0; i < r->gap_n && i < STRATA_PROBE_GAPS_MAX; i++) {
        const strata_probe_gap_t *g = &r->gaps[i];
        char b[32];
        fprintf(out, "  %s%s%s: %s%s\n", g->figure, g->bytes > 0 ? " at " : "",
                g->bytes > 0 ? util_fmt_bytes(g->bytes, b, sizeof(b)) : "", g->why,
                g->calib ? "; the calibration needs it (--save refuses)" : "");
    }
}

void strata_probe_print(const strata_probe_result_t *r, FILE *out)
{
    fprintf(out, "# strata probe: %s, %s, %d cpus, %s%s (%.1f s)\n", r->host,
            r->cpu_model[0] ? r->cpu_model : "cpu model unknown", r->cores, r->date,
            r->quick ? ", quick" : "", r->seconds);
    print_memory(r, out);
    print_c2c(r, out);
    char b[64];
    fprintf(out, "\nstrata shm transport (send/recv between ranks 0 and 1)\n");
    line_stat(out, "alpha (8 B one way)", &r->shm_alpha, 1e6, "us");
    for (int z = 1; z < r->shm_curve_n; z++) {
        char sz[32];
        snprintf(b, sizeof(b), "one way, %s",
                 util_fmt_bytes(r->shm_curve_bytes[z], sz, sizeof(sz)));
        line_stat(out, b, &r->shm_oneway[z], 1e6, "us");
    }
    snprintf(b, sizeof(b), "bandwidth (%zu KiB)", r->shm_bw_bytes >> 10);
    line_stat(out, b, &r->shm_bw, 1e-9, "GB/s");
    snprintf(b, sizeof(b), "barrier, %d ranks", r->ranks_fit);
    line_stat(out, b, &r->barrier_fit, 1e6, "us");
    snprintf(b, sizeof(b), "barrier, %d ranks", r->ranks_over);
    line_stat(out, b, &r->barrier_over, 1e6, "us");
    line_stat(out, "per rank beyond the cores", &r->per_rank, 1e6, "us");
    if (r->line_work.n) {
        line_stat(out, "8 B allreduce's own work, one rank", &r->line_work, 1e9, "ns");
        line_stat(out, "clock read, one rank", &r->clock_read, 1e9, "ns");
    }
    if (r->flat_work.n)
        line_stat(out, "64 B flat call's own work, one rank", &r->flat_work, 1e9, "ns");
    if (r->add_time.n) line_stat(out, "dependent add, one rank", &r->add_time, 1e9, "ns");
    if (r->nt_overlap.n)
        line_stat(out, "streamed stores hidden by a reduce", &r->nt_overlap, 1, "");
    fprintf(out, "\ntcp (%s)\n", r->tcp_target);
    line_stat(out, "latency (8 B one way)", &r->tcp_alpha, 1e6, "us");
    line_stat(out, "bandwidth", &r->tcp_bw, 1e-9, "GB/s");
    fprintf(out, "\nsystem costs\n");
    line_stat(out, "process switch (sched_yield)", &r->proc_switch, 1e6, "us");
    line_stat(out, "process switch (futex, one cpu)", &r->futex_switch, 1e6, "us");
    line_stat(out, "futex wake to running", &r->futex_wake, 1e6, "us");
    line_stat(out, "first-touch page fault", &r->page_fault, 1e6, "us");
    print_gaps(r, out);
    fprintf(out, "\naccelerators: %s\n", r->accel_note);
}

/* ==== JSON ==== */

json_t *probe_stat_json(const strata_probe_stat_t *s);
json_t *probe_stat_json(const strata_probe_stat_t *s)
{
    if (s->n == 0) return json_null();
    return json_pack("{s:o,s:o,s:o,s:o,s:i}", "median", util_json_real(s->median), "min",
                     util_json_real(s->min), "max", util_json_real(s->max), "spread",
                     util_json_real(s->spread), "n", s->n);
}

static json_t *memory_json(const strata_probe_result_t *r)
{
    json_t *nodes = json_array(), *curve = json_array();
    for (int i = 0; i < r->numa_nodes; i++) {
        json_t *one = json_object(), *all = json_object();
        for (int k = 0; k < STRATA_PROBE_MEM_KINDS; k++) {
            json_object_set_new(one, strata_probe_mem_kind_name(k),
                                probe_stat_json(&r->numa[i].one[k]));
            json_object_set_new(all, strata_probe_mem_kind_name(k),
                                probe_stat_json(&r->numa[i].all[k]));
        }
        json_t *conc = json_object(), *win = json_object();
        for (int k = 0; k < STRATA_PROBE_MEM_KINDS; k++) {
            json_object_set_new(conc, strata_probe_mem_kind_name(k),
                                json_integer(r->numa[i].all_concurrent[k]));
            json_object_set_new(win, strata_probe_mem_kind_name(k),
                                json_integer(r->numa[i].all_windows[k]));
        }
        json_array_append_new(nodes, json_pack("{s:i,s:i,s:o,s:o,s:o,s:o}", "node", r->numa[i].node,
                                               "cores", r->numa[i].cores, "one_core_Bps", one,
                                               "all_cores_Bps", all, "all_cores_concurrent", conc,
                                               "all_cores_windows", win));
    }
    for (int c = 0; c < r->curve_n; c++) {
        json_t *pt = json_pack("{s:f,s:o,s:o,s:o,s:o}", "size_B", r->curve_bytes[c], "copy_Bps",
                               probe_stat_json(&r->copy_curve[c]), "reduce_Bps",
                               probe_stat_json(&r->reduce_curve[c]), "read_Bps",
                               probe_stat_json(&r->read_curve[c]), "write_Bps",
                               probe_stat_json(&r->write_curve[c]));
        if (pt && r->read_all_curve[c].n > 0) { /* per core, all cores at once */
            json_object_set_new(pt, "read_all_Bps", probe_stat_json(&r->read_all_curve[c]));
            json_object_set_new(pt, "write_all_Bps", probe_stat_json(&r->write_all_curve[c]));
        }
        if (pt && r->write_nt_curve[c].n > 0) /* streaming stores, from 1 MiB */
            json_object_set_new(pt, "write_nt_Bps", probe_stat_json(&r->write_nt_curve[c]));
        if (pt && r->write_nt_all_curve[c].n > 0)
            json_object_set_new(pt, "write_nt_all_Bps", probe_stat_json(&r->write_nt_all_curve[c]));
        json_array_append_new(curve, pt);
    }
    return json_pack("{s:I,s:I,s:o,s:o,s:f,s:s}", "buffer_B", (json_int_t)r->big_bytes,
                     "all_cores_buffer_B", (json_int_t)r->all_bytes, "nodes", nodes, "curve", curve,
                     "bus_ceiling_Bps", r->bus_ceiling, "ceiling_source", r->ceiling_source);
}

static json_t *c2c_json(const strata_probe_result_t *r)
{
    json_t *m = json_array(), *cpus = json_array(), *remote = json_array(), *flat = json_array(),
           *red = json_array();
    for (int i = 0; i < r->reduce_n; i++)
        json_array_append_new(red, json_pack("{s:f,s:o}", "size_B", r->reduce_bytes[i],
                                             "reduce_Bps", probe_stat_json(&r->reduce_load[i])));
    for (int i = 0; i < r->flat_n; i++)
        json_array_append_new(flat, json_pack("{s:f,s:o}", "size_B", r->flat_bytes[i],
                                              "handover_Bps", probe_stat_json(&r->flat_copy[i])));
    for (int i = 0; i < r->remote_n; i++)
        json_array_append_new(remote,
                              json_pack("{s:f,s:o}", "size_B", r->remote_bytes[i], "handover_Bps",
                                        probe_stat_json(&r->remote_copy[i])));
    for (int i = 0; i < r->cores; i++) {
        json_t *row = json_array();
        for (int j = 0; j < r->cores; j++)
            json_array_append_new(row, util_json_real(r->c2c[i][j]));
        json_array_append_new(m, row);
        json_array_append_new(cpus, json_integer(r->cpus[i]));
    }
    if (r->c2c_note[0]) { /* not measured: no matrix of zeros */
        json_decref(m);
        m = json_null();
    }
    json_t *doc = json_pack("{s:o,s:o,s:o,s:i,s:o,s:o,s:o,s:o,s:o}", "cpus", cpus, "one_way_s", m,
                            "all_pairs_s", probe_stat_json(&r->c2c_all), "sockets", r->packages,
                            "within_socket_s", probe_stat_json(&r->c2c_within), "across_sockets_s",
                            probe_stat_json(&r->c2c_across), "handover", remote, "handover_flat",
                            flat, "handover_reduce", red);
    if (doc && r->flat_sync.n)
        json_object_set_new(doc, "flat_flags_s", probe_stat_json(&r->flat_sync));
    if (doc && r->stream_hand.n && r->stream_reduce.n)
        json_object_set_new(doc, "streamed_round",
                            json_pack("{s:f,s:o,s:o}", "size_B", r->stream_bytes, "handover_Bps",
                                      probe_stat_json(&r->stream_hand), "reduce_Bps",
                                      probe_stat_json(&r->stream_reduce)));
    if (doc && r->c2c_note[0]) json_object_set_new(doc, "not_measured", json_string(r->c2c_note));
    if (doc && r->line_first.n && r->line_last.n)
        json_object_set_new(
            doc, "placement",
            json_pack("{s:o,s:o,s:o,s:b,s:b,s:b}", "first_s", probe_stat_json(&r->line_first),
                      "after_memory_s", probe_stat_json(&r->line_mem), "last_s",
                      probe_stat_json(&r->line_last), "changed", r->placement_changed, "remeasured",
                      r->remeasured, "mixed", r->placement_mixed));
    return doc;
}

/* The figures given up: [{"figure", "size_B" (null without a size),
 * "calibration", "why"}], [] when none. */
static json_t *gaps_json(const strata_probe_result_t *r)
{
    json_t *a = json_array();
    for (int i = 0; a && i < r->gap_n && i < STRATA_PROBE_GAPS_MAX; i++) {
        const strata_probe_gap_t *g = &r->gaps[i];
        json_array_append_new(a, json_pack("{s:s,s:o,s:b,s:s}", "figure", g->figure, "size_B",
                                           g->bytes > 0 ? json_real(g->bytes) : json_null(),
                                           "calibration", g->calib, "why", g->why));
    }
    return a;
}

strata_status_t strata_probe_write_json(const strata_probe_result_t *r, FILE *out,
                                        strata_error_t *err)
{
    json_t *curve = json_array();
    for (int z = 0; z < r->shm_curve_n; z++)
        json_array_append_new(curve, json_pack("{s:f,s:o}", "size_B", r->shm_curve_bytes[z],
                                               "oneway_s", probe_stat_json(&r->shm_oneway[z])));
    json_t *shm = json_pack(
        "{s:o,s:o,s:o,s:I,s:o,s:o,s:o,s:i,s:i}", "oneway", curve, "alpha_s",
        probe_stat_json(&r->shm_alpha), "bw_Bps", probe_stat_json(&r->shm_bw), "bw_size_B",
        (json_int_t)r->shm_bw_bytes, "barrier_fit_s", probe_stat_json(&r->barrier_fit),
        "barrier_over_s", probe_stat_json(&r->barrier_over), "per_rank_s",
        probe_stat_json(&r->per_rank), "ranks_fit", r->ranks_fit, "ranks_over", r->ranks_over);
    if (shm && r->line_work.n) {
        json_object_set_new(shm, "line_work_s", probe_stat_json(&r->line_work));
        json_object_set_new(shm, "clock_read_s", probe_stat_json(&r->clock_read));
    }
    if (shm && r->flat_work.n) {
        json_object_set_new(shm, "flat_work_s", probe_stat_json(&r->flat_work));
        json_object_set_new(shm, "barrier_work_s", probe_stat_json(&r->barrier_work));
    }
    if (shm && r->nt_overlap.n)
        json_object_set_new(shm, "nt_overlap", probe_stat_json(&r->nt_overlap));
    if (shm && r->add_time.n) json_object_set_new(shm, "add_s", probe_stat_json(&r->add_time));
    json_t *doc = json_pack(
        "{s:i,s:s,s:s,s:s,s:i,s:b,s:f,s:o,s:o,s:o,s:{s:s,s:o,s:o},s:{s:o,s:o,s:o,s:o},s:s}",
        "schema_version", STRATA_JSON_SCHEMA_VERSION, "date", r->date, "host", r->host, "cpu_model",
        r->cpu_model, "cpus", r->cores, "quick", r->quick, "duration_s", r->seconds, "memory",
        memory_json(r), "coherence", c2c_json(r), "shm", shm, "tcp", "target", r->tcp_target,
        "alpha_s", probe_stat_json(&r->tcp_alpha), "bw_Bps", probe_stat_json(&r->tcp_bw), "system",
        "proc_switch_s", probe_stat_json(&r->proc_switch), "futex_switch_s",
        probe_stat_json(&r->futex_switch), "futex_wake_s", probe_stat_json(&r->futex_wake),
        "page_fault_s", probe_stat_json(&r->page_fault), "accelerators", r->accel_note);
    if (!doc) return strata_error_set(err, STRATA_ERR_NOMEM, "probe: cannot build JSON");
    json_object_set_new(doc, "figures_not_measured", gaps_json(r));
    int rc = util_json_dump(doc, out);
    json_decref(doc);
    return rc == 0 ? STRATA_OK : strata_error_set(err, STRATA_ERR_IO, "probe: write failed");
}
