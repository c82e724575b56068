/*
 * calib.c — calibration: what the probe measured, written as a cluster
 * file of this host and read back; the calibrated prediction of strata's
 * own collectives; and the bottleneck the measurements name.
 *
 * Which measurement sets which parameter (docs/probe.md):
 *   line_latency  coherence matrix, median over all pairs: the cost of one
 *                 flag hand-off, i.e. of each synchronisation of the engine.
 *   copy_bw(b), reduce_bw(b)  one core's memcpy and two-input fp32 sum on a
 *                 buffer of b bytes (the curve), read at the collective's
 *                 working set; capped by the all-core copy rate shared among
 *                 the ranks once the working set leaves the private caches.
 *   per_rank      barrier at 2 × cores ranks minus at cores ranks: the extra
 *                 cost of a synchronisation per rank beyond the cores.
 *   shm_alpha, shm_bw  strata send/recv ping-pong: the link α and β of the
 *                 cluster file, and of the message-passing schedules.
 *   barrier       strata's barrier at the cores' ranks: the engine's first
 *                 synchronisation at that rank count (the line path
 *                 without data; α where not measured).
 *   line_work, clock_read  timed on one rank through the library's
 *                 functions (shm.c): the line path's own work beyond the
 *                 barrier's exchange, added to it for 56 B or less; a clock
 *                 read, once in a flat engine call and twice in a pipelined
 *                 one (the engine's learned choices read the clock).
 *   flat_work     timed on one rank, the engine's flat path run alone on a
 *                 one-rank communicator (shm.c): a 64 B call's own work
 *                 beyond the barrier's and its clock read, added for the
 *                 flat path (57 B to 2 KiB); barrier_work, the barrier's
 *                 path there.
 *   flat slope    c2c.c's flat round at 256 B - 2 KiB: what the data adds
 *                 to a round, its least-squares slope in bytes (s/B),
 *                 charged beyond the flat call's first 64 B (57 B - 2 KiB).
 *   flat_flags    c2c.c's flat round without data at 2 ranks (the engine's
 *                 staged and done flags, made as it makes them): at 2
 *                 ranks the flat call's synchronisation, and half of it
 *                 each further flag, in place of line_latency.
 *   write_bw, write_nt_bw  one core's (and all cores') plain and streaming
 *                 stores by buffer size: the output's stores, priced both
 *                 ways and the cheaper taken, as the engine picks.
 *   llc_bytes     the shared last-level cache (sysfs, comm_llc_bytes): the
 *                 curve size the footprint is read at (probe_cache_level).
 *   nt_overlap    the fraction of streamed stores' time a read+reduce
 *                 stream hides, one core (overlap.c), within 0 .. 1: the
 *                 streamed output's stores beside the engine's reduction
 *                 and copies.
 * No allreduce (or other collective the model predicts) is timed to set
 * any of them.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

json_t *probe_stat_json(const strata_probe_stat_t *s);

/* ==== From a result ==== */

/* The measured points of a curve (n > 0 samples) into bytes_out and
 * bw_out, in order; their count. A size not measured (a stalled round on
 * a loaded host, strata_probe_gap_t) is left out, so the model reads the
 * curve there between its measured neighbours (interp), or at the nearest
 * end; a curve with none is 0 points, which every reader takes as not
 * measured. */
static int measured_points(int n, const double *bytes, const strata_probe_stat_t *s,
                           double *bytes_out, double *bw_out)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (s[i].n > 0) bytes_out[k] = bytes[i], bw_out[k++] = s[i].median;
    return k;
}

void strata_probe_calib_from(const strata_probe_result_t *r, strata_probe_calib_t *c)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->date, sizeof(c->date), "%s", r->date);
    c->cores = r->cores;
    c->line_latency = r->c2c_all.median;
    c->shm_alpha = r->shm_alpha.median;
    c->shm_bw = r->shm_bw.median;
    c->per_rank = r->per_rank.n ? r->per_rank.median : 0;
    if (c->per_rank < 0) c->per_rank = 0; /* noise around a zero cost */
    c->barrier = r->barrier_fit.n ? r->barrier_fit.median : 0;
    c->barrier_ranks = r->barrier_fit.n ? r->ranks_fit : 0;
    c->line_work = r->line_work.n ? r->line_work.median : 0;
    c->clock_read = r->clock_read.n ? r->clock_read.median : 0;
    c->flat_work = r->flat_work.n ? r->flat_work.median : 0;
    c->barrier_work = r->flat_work.n && r->barrier_work.n ? r->barrier_work.median : 0;
    c->flat_flags = r->flat_sync.n ? r->flat_sync.median : 0;
    c->add_time = r->add_time.n ? r->add_time.median : 0;
    c->proc_switch = r->proc_switch.median;
    c->futex_switch = r->futex_switch.n ? r->futex_switch.median : 0;
    c->mem_copy_all = r->numa_nodes ? r->numa[0].all[STRATA_PROBE_MEM_COPY].median : 0;
    c->llc_bytes = (double)r->llc_bytes;
    /* the model's bounds: the stores in series (0) or hidden (1); a reading
     * below 0 (dearer beside the reads than alone, a noisy difference of
     * two long passes over a short one) takes the series bound */
    c->nt_overlap = r->nt_overlap.n ? fmin(fmax(r->nt_overlap.median, 0), 1) : 0;
    c->curve_n = r->curve_n;
    for (int i = 0; i < r->curve_n; i++) {
        c->curve_bytes[i] = r->curve_bytes[i];
        c->copy_bw[i] = r->copy_curve[i].median;
        c->reduce_bw[i] = r->reduce_curve[i].median;
        c->read_bw[i] = r->read_curve[i].median;
        c->write_bw[i] = r->write_curve[i].n ? r->write_curve[i].median : 0;
        c->read_all_bw[i] = r->read_all_curve[i].n ? r->read_all_curve[i].median : 0;
        c->write_all_bw[i] = r->write_all_curve[i].n ? r->write_all_curve[i].median : 0;
        c->write_nt_bw[i] = r->write_nt_curve[i].n ? r->write_nt_curve[i].median : 0;
        c->write_nt_all_bw[i] = r->write_nt_all_curve[i].n ? r->write_nt_all_curve[i].median : 0;
    }
    c->flat_n = measured_points(r->flat_n, r->flat_bytes, r->flat_copy, c->flat_bytes, c->flat_bw);
    c->reduce_n = measured_points(r->reduce_n, r->reduce_bytes, r->reduce_load, c->reduce_bytes,
                                  c->reduce_load_bw);
    if (r->stream_hand.n && r->stream_reduce.n) {
        c->stream_bytes = r->stream_bytes;
        c->stream_hand_bw = r->stream_hand.median;
        c->stream_reduce_bw = r->stream_reduce.median;
    }
    c->tcp_alpha = r->tcp_alpha.median;
    c->tcp_bw = r->tcp_bw.median;
    c->remote_n = measured_points(r->remote_n, r->remote_bytes, r->remote_copy, c->remote_bytes,
                                  c->remote_bw);
    c->shm_n = r->shm_curve_n;
    for (int i = 0; i < r->shm_curve_n; i++) {
        c->shm_bytes[i] = r->shm_curve_bytes[i];
        c->shm_oneway[i] = r->shm_oneway[i].median;
    }
}

/* ==== Saving ==== */

static json_t *calib_json(const strata_probe_result_t *r, const strata_probe_calib_t *c)
{
    json_t *curve = json_array(), *shm = json_array(), *remote = json_array();
    json_t *flat = c->flat_n > 0 ? json_array() : NULL;
    json_t *red = c->reduce_n > 0 ? json_array() : NULL;
    for (int i = 0; i < c->reduce_n; i++)
        json_array_append_new(red, json_pack("{s:o,s:o,s:o}", "bytes",
                                             util_json_real(c->reduce_bytes[i]), "handover_Bps",
                                             util_json_real(c->reduce_load_bw[i]), "spread",
                                             util_json_real(r->reduce_load[i].spread)));
    for (int i = 0; i < c->flat_n; i++)
        json_array_append_new(flat,
                              json_pack("{s:o,s:o,s:o}", "bytes", util_json_real(c->flat_bytes[i]),
                                        "handover_Bps", util_json_real(c->flat_bw[i]), "spread",
                                        util_json_real(r->flat_copy[i].spread)));
    for (int i = 0; i < c->remote_n; i++)
        json_array_append_new(remote, json_pack("{s:o,s:o,s:o}", "bytes",
                                                util_json_real(c->remote_bytes[i]), "handover_Bps",
                                                util_json_real(c->remote_bw[i]), "spread",
                                                util_json_real(r->remote_copy[i].spread)));
    for (int i = 0; i < c->shm_n; i++)
        json_array_append_new(shm,
                              json_pack("{s:o,s:o,s:o}", "bytes", util_json_real(c->shm_bytes[i]),
                                        "oneway_s", util_json_real(c->shm_oneway[i]), "spread",
                                        util_json_real(r->shm_oneway[i].spread)));
    for (int i = 0; i < c->curve_n; i++) {
        json_t *pt =
            json_pack("{s:o,s:o,s:o,s:o}", "bytes", util_json_real(c->curve_bytes[i]), "copy_Bps",
                      util_json_real(c->copy_bw[i]), "reduce_Bps", util_json_real(c->reduce_bw[i]),
                      "read_Bps", util_json_real(c->read_bw[i]));
        if (c->write_bw[i] > 0)
            json_object_set_new(pt, "write_Bps", util_json_real(c->write_bw[i]));
        if (c->read_all_bw[i] > 0 && c->write_all_bw[i] > 0) {
            json_object_set_new(pt, "read_all_Bps", util_json_real(c->read_all_bw[i]));
            json_object_set_new(pt, "write_all_Bps", util_json_real(c->write_all_bw[i]));
        }
        if (c->write_nt_bw[i] > 0)
            json_object_set_new(pt, "write_nt_Bps", util_json_real(c->write_nt_bw[i]));
        if (c->write_nt_all_bw[i] > 0)
            json_object_set_new(pt, "write_nt_all_Bps", util_json_real(c->write_nt_all_bw[i]));
        json_array_append_new(curve, pt);
    }
    json_t *doc = json_pack(
        "{s:s,s:s,s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "date", c->date, "by",
        "strata probe (docs/probe.md)", "cores", c->cores, "line_latency_s",
        util_json_real(c->line_latency), "shm_alpha_s", util_json_real(c->shm_alpha), "shm_bw_Bps",
        util_json_real(c->shm_bw), "per_rank_s", util_json_real(c->per_rank), "proc_switch_s",
        util_json_real(c->proc_switch), "mem_copy_all_Bps", util_json_real(c->mem_copy_all),
        "curve", curve, "handover_curve", remote, "shm_curve", shm, "tcp_alpha_s",
        util_json_real(c->tcp_alpha), "tcp_bw_Bps", util_json_real(c->tcp_bw), "spread",
        json_pack("{s:o,s:o,s:o,s:o}", "line_latency", util_json_real(r->c2c_all.spread),
                  "shm_alpha", util_json_real(r->shm_alpha.spread), "shm_bw",
                  util_json_real(r->shm_bw.spread), "per_rank",
                  util_json_real(r->per_rank.spread)));
    /* optional (files before it): the barrier at the cores' ranks */
    if (doc && c->barrier > 0) {
        json_object_set_new(doc, "barrier_s", util_json_real(c->barrier));
        json_object_set_new(doc, "barrier_ranks", json_integer(c->barrier_ranks));
    }
    /* optional (files before it): the call's own work on one rank */
    if (doc && c->line_work > 0 && c->clock_read > 0) {
        json_object_set_new(doc, "line_work_s", util_json_real(c->line_work));
        json_object_set_new(doc, "clock_read_s", util_json_real(c->clock_read));
    }
    /* optional (files before them): the flat call's own work, and the
     * barrier's path beside it */
    if (doc && c->flat_work > 0 && c->barrier_work > 0) {
        json_object_set_new(doc, "flat_work_s", util_json_real(c->flat_work));
        json_object_set_new(doc, "barrier_work_s", util_json_real(c->barrier_work));
    }
    /* optional (files before it): the flat round's flags alone, 2 ranks */
    if (doc && c->flat_flags > 0)
        json_object_set_new(doc, "flat_flags_s", util_json_real(c->flat_flags));
    /* optional (files before it): the vCPU's rate when probed (not priced) */
    if (doc && c->add_time > 0) json_object_set_new(doc, "add_s", util_json_real(c->add_time));
    /* optional (files before it; 0 = unknown): the shared last-level cache */
    if (doc && c->llc_bytes > 0) json_object_set_new(doc, "llc_B", util_json_real(c->llc_bytes));
    /* optional (files before it; 0 = in series): the streamed stores' overlap */
    if (doc && c->nt_overlap > 0)
        json_object_set_new(doc, "nt_overlap", util_json_real(c->nt_overlap));
    /* optional (files before the wait regime): the futex regime's cost */
    if (doc && c->futex_switch > 0)
        json_object_set_new(doc, "futex_switch_s", util_json_real(c->futex_switch));
    /* optional (files before it): the flat path's hand-over */
    if (doc && flat) json_object_set_new(doc, "flat_handover_curve", flat);
    /* optional (files before it): the pipeline's reduction */
    if (doc && red) json_object_set_new(doc, "reduce_handover_curve", red);
    /* optional (files before it, --quick): the pipeline round streamed */
    if (doc && c->stream_hand_bw > 0 && c->stream_reduce_bw > 0) {
        json_object_set_new(doc, "stream_slice_B", util_json_real(c->stream_bytes));
        json_object_set_new(doc, "stream_handover_Bps", util_json_real(c->stream_hand_bw));
        json_object_set_new(doc, "stream_reduce_Bps", util_json_real(c->stream_reduce_bw));
    }
    return doc;
}

static json_t *server_json(const strata_probe_result_t *r, const strata_probe_calib_t *c)
{
    char info[160], model[96];
    snprintf(model, sizeof(model), "%s", r->cpu_model[0] ? r->cpu_model : "unknown");
    for (size_t n = strlen(model); n > 0 && model[n - 1] == ' ';)
        model[--n] = 0;
    snprintf(info, sizeof(info), "%d cpu(s) measured by strata probe on %s; one rank per core",
             r->cores, r->date);
    json_t *dev = json_pack("{s:s,s:s,s:i,s:s,s:s}", "name", "core", "kind", "cpu", "count",
                            r->cores, "model", model, "info", info);
    json_t *links = json_array();
    if (r->cores > 1)
        json_array_append_new(
            links, json_pack("{s:s,s:s,s:{s:o,s:o,s:o,s:o,s:s,s:s}}", "mesh", "core", "link", "shm",
                             "measured", "bw_Bps", util_json_real(c->shm_bw), "alpha_s",
                             util_json_real(c->shm_alpha), "bw_spread",
                             util_json_real(r->shm_bw.spread), "alpha_spread",
                             util_json_real(r->shm_alpha.spread), "date", r->date, "method",
                             "strata send/recv ping-pong between two ranks: alpha = 8 B one "
                             "way, bw = bytes / (one way - alpha)"));
    return json_pack("{s:[o],s:o}", "devices", dev, "links", links);
}

strata_status_t strata_probe_save(const strata_probe_result_t *r, const char *path,
                                  strata_error_t *err)
{
    if (!r || !path) return strata_error_set(err, STRATA_ERR_INVALID, "probe: nothing to save");
    if (r->c2c_note[0]) /* the calibration's line latency is the matrix's median */
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "%s: not written: the coherence matrix, which sets the "
                                "calibration's line latency, was not measured (%.120s); probe "
                                "again on a less loaded host",
                                path, r->c2c_note);
    const strata_probe_gap_t *g = probe_gap_for_calib(r);
    if (g) { /* never a file with a hole in a curve or a figure made up */
        char size[32] = "";
        if (g->bytes > 0) {
            char b[24];
            snprintf(size, sizeof(size), " at %s", util_fmt_bytes(g->bytes, b, sizeof(b)));
        }
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "%s: not written: the %s%s, which the calibration needs, was not "
                                "measured (%.160s); probe again on a less loaded host",
                                path, g->figure, size, g->why);
    }
    strata_probe_calib_t c;
    strata_probe_calib_from(r, &c);
    if (c.remote_n != r->remote_n || c.flat_n != r->flat_n || c.reduce_n != r->reduce_n)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "%s: not written: a hand-over curve has a point without samples",
                                path);
    char desc[256], src[128];
    snprintf(desc, sizeof(desc),
             "this host (%s) as strata probe measured it on %s: cores joined by strata's "
             "shared-memory transport",
             r->host, r->date);
    snprintf(src, sizeof(src), "strata probe, %s (docs/probe.md)", r->date);
    json_t *doc = json_pack("{s:s,s:s,s:[s],s:i,s:o,s:o}", "name", "local-measured", "description",
                            desc, "sources", src, "servers", 1, "server", server_json(r, &c),
                            "measured", calib_json(r, &c));
    if (!doc) return strata_error_set(err, STRATA_ERR_NOMEM, "probe: cannot build the file");
    FILE *f = fopen(path, "w");
    int rc = f ? util_json_dump(doc, f) : -1;
    if (f && fclose(f) != 0) rc = -1; /* as topo's export writes it: no final newline */
    json_decref(doc);
    if (rc != 0)
        return strata_error_set(err, STRATA_ERR_IO, "%s: cannot write the cluster file", path);
    return STRATA_OK;
}

/* ==== Loading ==== */

/* Bounds of physical sense for a saved figure, by its key: a time ("_s")
 * at most STRATA_MEASURED_TIME_MAX and a rate ("_Bps") at most
 * STRATA_MEASURED_RATE_MAX, as cluster files bound a measured link
 * (strata/topo.h), a rate at least 1 B/s, a size ("bytes", "llc_B") at
 * most 2^40 B (1 TiB: no curve point of the probe is a thousandth of
 * that). */
#define CALIB_RATE_MIN  1.0
#define CALIB_BYTES_MAX 1099511627776.0

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* A figure under key: finite, > 0 (positive) or >= 0, and within its
 * kind's bounds above (a zero that is allowed means "not measured"). */
static strata_status_t num(util_json_doc_t *d, json_t *m, const char *key, bool positive,
                           double *out, strata_error_t *err)
{
    strata_status_t st = util_json_req_num(d, m, key, out, err);
    if (st) return st;
    double v = *out;
    if (!isfinite(v) || v < 0 || (positive && v == 0))
        return util_json_error(d, json_object_get(m, key), err, STRATA_ERR_PARSE,
                               "\"%s\" must be %s", key, positive ? "> 0" : ">= 0");
    if (v == 0) return STRATA_OK;
    if (ends_with(key, "_s") && v > STRATA_MEASURED_TIME_MAX)
        return util_json_error(d, json_object_get(m, key), err, STRATA_ERR_PARSE,
                               "\"%s\" is %g s: not physical (at most %g s)", key, v,
                               STRATA_MEASURED_TIME_MAX);
    if (ends_with(key, "_Bps") && (v < CALIB_RATE_MIN || v > STRATA_MEASURED_RATE_MAX))
        return util_json_error(d, json_object_get(m, key), err, STRATA_ERR_PARSE,
                               "\"%s\" is %g B/s: not physical (from 1 B/s to 1e14 B/s)", key, v);
    if ((strcmp(key, "bytes") == 0 || ends_with(key, "_B")) && v > CALIB_BYTES_MAX)
        return util_json_error(d, json_object_get(m, key), err, STRATA_ERR_PARSE,
                               "\"%s\" is %g: at most 2^40 (1 TiB)", key, v);
    return STRATA_OK;
}

/* A count under key: a whole number from lo to hi. */
static strata_status_t count(util_json_doc_t *d, json_t *m, const char *key, int lo, int hi,
                             int *out, strata_error_t *err)
{
    double v;
    strata_status_t st = util_json_req_num(d, m, key, &v, err);
    if (st) return st;
    if (!(v >= lo && v <= hi) || v != floor(v))
        return util_json_error(d, json_object_get(m, key), err, STRATA_ERR_PARSE,
                               "\"%s\" must be a whole number from %d to %d", key, lo, hi);
    *out = (int)v;
    return STRATA_OK;
}

/* An optional "spread" under m: a number >= 0 (a curve point's) or, where
 * obj, an object of such numbers (the top level's). Not used by the model
 * (it prices medians), checked so a file that says nonsense is refused. */
static strata_status_t check_spread(util_json_doc_t *d, json_t *m, bool obj, strata_error_t *err)
{
    json_t *s = json_object_get(m, "spread"), *v;
    const char *k;
    if (!s) return STRATA_OK;
    if (!obj) {
        if (json_is_number(s) && isfinite(json_number_value(s)) && json_number_value(s) >= 0)
            return STRATA_OK;
        return util_json_error(d, s, err, STRATA_ERR_PARSE, "\"spread\" must be a number >= 0");
    }
    if (!json_is_object(s))
        return util_json_error(d, s, err, STRATA_ERR_PARSE,
                               "\"spread\" must be an object of numbers >= 0");
    json_object_foreach(s, k, v)
    {
        if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
            return util_json_error(d, v, err, STRATA_ERR_PARSE,
                                   "\"spread\".\"%s\" must be a number >= 0", k);
    }
    return STRATA_OK;
}

static strata_status_t read_curve(util_json_doc_t *d, json_t *m, strata_probe_calib_t *c,
                                  strata_error_t *err)
{
    json_t *a, *p;
    size_t i;
    strata_status_t st = util_json_req_arr(d, m, "curve", &a, err);
    if (st) return st;
    if (json_array_size(a) < 1 || json_array_size(a) > STRATA_PROBE_CURVE_MAX)
        return util_json_error(d, a, err, STRATA_ERR_PARSE, "\"curve\" needs 1 to %d points",
                               STRATA_PROBE_CURVE_MAX);
    json_array_foreach(a, i, p)
    {
        if (!json_is_object(p))
            return util_json_error(d, p, err, STRATA_ERR_PARSE, "expected a curve point {...}");
        if ((st = num(d, p, "bytes", true, &c->curve_bytes[i], err)) ||
            (st = num(d, p, "copy_Bps", true, &c->copy_bw[i], err)) ||
            (st = num(d, p, "reduce_Bps", true, &c->reduce_bw[i], err)) ||
            (st = num(d, p, "read_Bps", true, &c->read_bw[i], err)))
            return st;
        /* optional (files before the write curve): 0 = not charged */
        if (json_object_get(p, "write_Bps") &&
            (st = num(d, p, "write_Bps", true, &c->write_bw[i], err)))
            return st;
        /* optional (files before them): per core with all cores at once */
        if (json_object_get(p, "read_all_Bps") &&
            (st = num(d, p, "read_all_Bps", true, &c->read_all_bw[i], err)))
            return st;
        if (json_object_get(p, "write_all_Bps") &&
            (st = num(d, p, "write_all_Bps", true, &c->write_all_bw[i], err)))
            return st;
        /* optional (files before them, and sizes below 1 MiB): streaming stores */
        if (json_object_get(p, "write_nt_Bps") &&
            (st = num(d, p, "write_nt_Bps", true, &c->write_nt_bw[i], err)))
            return st;
        if (json_object_get(p, "write_nt_all_Bps") &&
            (st = num(d, p, "write_nt_all_Bps", true, &c->write_nt_all_bw[i], err)))
            return st;
        if (i > 0 && c->curve_bytes[i] <= c->curve_bytes[i - 1])
            return util_json_error(d, json_object_get(p, "bytes"), err, STRATA_ERR_PARSE,
                                   "curve sizes must increase");
    }
    c->curve_n = (int)json_array_size(a);
    return STRATA_OK;
}

/* An optional hand-over curve [{"bytes", "handover_Bps"}...] under key:
 * "handover_curve" (a one-core host has none), "flat_handover_curve"
 * (files before it have none). */
static strata_status_t read_handover(util_json_doc_t *d, json_t *m, const char *key, double *bytes,
                                     double *bw, int *n_p, strata_error_t *err)
{
    json_t *a = json_object_get(m, key), *p;
    size_t i;
    strata_status_t st;
    if (!a) return STRATA_OK;
    if (!json_is_array(a) || json_array_size(a) > STRATA_PROBE_CURVE_MAX)
        return util_json_error(d, a, err, STRATA_ERR_PARSE,
                               "\"%s\" must be an array of at most %d points", key,
                               STRATA_PROBE_CURVE_MAX);
    json_array_foreach(a, i, p)
    {
        if (!json_is_object(p))
            return util_json_error(d, p, err, STRATA_ERR_PARSE, "expected a curve point {...}");
        if ((st = num(d, p, "bytes", true, &bytes[i], err)) ||
            (st = num(d, p, "handover_Bps", true, &bw[i], err)) ||
            (st = check_spread(d, p, false, err)))
            return st;
        if (i > 0 && bytes[i] <= bytes[i - 1])
            return util_json_error(d, json_object_get(p, "bytes"), err, STRATA_ERR_PARSE,
                                   "curve sizes must increase");
    }
    *n_p = (int)json_array_size(a);
    return STRATA_OK;
}

static strata_status_t read_shm_curve(util_json_doc_t *d, json_t *m, strata_probe_calib_t *c,
                                      strata_error_t *err)
{
    json_t *a, *p;
    size_t i;
    strata_status_t st = util_json_req_arr(d, m, "shm_curve", &a, err);
    if (st) return st;
    if (json_array_size(a) < 1 || json_array_size(a) > STRATA_PROBE_CURVE_MAX)
        return util_json_error(d, a, err, STRATA_ERR_PARSE, "\"shm_curve\" needs 1 to %d points",
                               STRATA_PROBE_CURVE_MAX);
    json_array_foreach(a, i, p)
    {
        if (!json_is_object(p))
            return util_json_error(d, p, err, STRATA_ERR_PARSE, "expected a curve point {...}");
        if ((st = num(d, p, "bytes", true, &c->shm_bytes[i], err)) ||
            (st = num(d, p, "oneway_s", true, &c->shm_oneway[i], err)) ||
            (st = check_spread(d, p, false, err)))
            return st;
        if (i > 0 && c->shm_bytes[i] <= c->shm_bytes[i - 1])
            return util_json_error(d, json_object_get(p, "bytes"), err, STRATA_ERR_PARSE,
                                   "curve sizes must increase");
    }
    c->shm_n = (int)json_array_size(a);
    return STRATA_OK;
}

strata_status_t strata_probe_calib_load(const char *path, strata_probe_calib_t *c_p,
                                        strata_error_t *err)
{
    util_json_doc_t *d;
    strata_status_t st = util_json_load_file(path, &d, err);
    if (st) return st;
    json_t *root = util_json_root(d),
           *m = json_is_object(root) ? json_object_get(root, "measured") : NULL;
    strata_probe_calib_t c = {0};
    const char *date = NULL;
    if (!m) {
        st = strata_error_set_at(err, STRATA_ERR_NOT_FOUND, path, 0, 0,
                                 "no \"measured\" object: not written by 'strata probe --save'");
    } else if (!json_is_object(m)) {
        st = util_json_error(d, m, err, STRATA_ERR_PARSE, "\"measured\" must be an object");
    } else if (!(st = util_json_opt_str(d, m, "date", &date, err)) &&
               !(st = count(d, m, "cores", 1, STRATA_PROBE_CORES_MAX, &c.cores, err)) &&
               !(st = num(d, m, "line_latency_s", true, &c.line_latency, err)) &&
               !(st = num(d, m, "shm_alpha_s", true, &c.shm_alpha, err)) &&
               !(st = num(d, m, "shm_bw_Bps", true, &c.shm_bw, err)) &&
               !(st = num(d, m, "per_rank_s", false, &c.per_rank, err)) &&
               !(st = num(d, m, "proc_switch_s", true, &c.proc_switch, err)) &&
               !(st = num(d, m, "mem_copy_all_Bps", true, &c.mem_copy_all, err)) &&
               !(st = num(d, m, "tcp_alpha_s", false, &c.tcp_alpha, err)) &&
               !(st = num(d, m, "tcp_bw_Bps", false, &c.tcp_bw, err))) {
        /* optional (files before the wait regime): 0 = not measured */
        if (json_object_get(m, "futex_switch_s"))
            st = num(d, m, "futex_switch_s", true, &c.futex_switch, err);
        /* optional (files before it): the barrier, with its rank count */
        if (st == STRATA_OK && json_object_get(m, "barrier_s") &&
            !(st = num(d, m, "barrier_s", true, &c.barrier, err)))
            st = count(d, m, "barrier_ranks", 2, STRATA_PROBE_CORES_MAX, &c.barrier_ranks, err);
        if (st == STRATA_OK) st = check_spread(d, m, true, err);
        /* optional (files before it): the call's own work, both or neither */
        if (st == STRATA_OK &&
            (json_object_get(m, "line_work_s") || json_object_get(m, "clock_read_s")) &&
            !(st = num(d, m, "line_work_s", true, &c.line_work, err)))
            st = num(d, m, "clock_read_s", true, &c.clock_read, err);
        /* optional (files before them; 0 = not priced): the flat call's
         * own work and the barrier's path, both or neither */
        if (st == STRATA_OK &&
            (json_object_get(m, "flat_work_s") || json_object_get(m, "barrier_work_s")) &&
            !(st = num(d, m, "flat_work_s", true, &c.flat_work, err)))
            st = num(d, m, "barrier_work_s", true, &c.barrier_work, err);
        /* optional (files before it, --quick): the streamed round, all
         * three or none */
        if (st == STRATA_OK &&
            (json_object_get(m, "stream_slice_B") || json_object_get(m, "stream_handover_Bps") ||
             json_object_get(m, "stream_reduce_Bps")) &&
            !(st = num(d, m, "stream_slice_B", true, &c.stream_bytes, err)) &&
            !(st = num(d, m, "stream_handover_Bps", true, &c.stream_hand_bw, err)))
            st = num(d, m, "stream_reduce_Bps", true, &c.stream_reduce_bw, err);
        /* optional (files before it): the flat round's flags alone */
        if (st == STRATA_OK && json_object_get(m, "flat_flags_s"))
            st = num(d, m, "flat_flags_s", true, &c.flat_flags, err);
        /* optional (files before it): the vCPU's rate when probed */
        if (st == STRATA_OK && json_object_get(m, "add_s"))
            st = num(d, m, "add_s", true, &c.add_time, err);
        /* optional (files before it): the shared last-level cache */
        if (st == STRATA_OK && json_object_get(m, "llc_B"))
            st = num(d, m, "llc_B", true, &c.llc_bytes, err);
        /* optional (files before it): the streamed stores' hidden fraction */
        if (st == STRATA_OK && json_object_get(m, "nt_overlap") &&
            !(st = util_json_req_num(d, m, "nt_overlap", &c.nt_overlap, err)) &&
            !(c.nt_overlap >= 0 && c.nt_overlap <= 1))
            st = util_json_error(d, json_object_get(m, "nt_overlap"), err, STRATA_ERR_PARSE,
                                 "\"nt_overlap\" is %g: a fraction, from 0 to 1", c.nt_overlap);
        if (st == STRATA_OK) st = read_curve(d, m, &c, err);
        if (st == STRATA_OK) st = read_shm_curve(d, m, &c, err);
        if (st == STRATA_OK)
            st = read_handover(d, m, "handover_curve", c.remote_bytes, c.remote_bw, &c.remote_n,
                               err);
        if (st == STRATA_OK)
            st =
                read_handover(d, m, "flat_handover_curve", c.flat_bytes, c.flat_bw, &c.flat_n, err);
        if (st == STRATA_OK)
            st = read_handover(d, m, "reduce_handover_curve", c.reduce_bytes, c.reduce_load_bw,
                               &c.reduce_n, err);
    }
    if (st == STRATA_OK) {
        snprintf(c.date, sizeof(c.date), "%s", date ? date : "");
        *c_p = c;
    }
    util_json_doc_destroy(d);
    return st;
}

/* ==== The calibrated model ==== */

/* Linear in log(bytes) between the points xs[0..n-1], clamped at the ends. */
static double interp(int n, const double *xs, const double *bw, double bytes)
{
    if (n <= 0) return 0;
    if (bytes <= xs[0]) return bw[0];
    for (int i = 1; i < n; i++)
        if (bytes <= xs[i]) {
            double f = log(bytes / xs[i - 1]) / log(xs[i] / xs[i - 1]);
            return bw[i - 1] + f * (bw[i] - bw[i - 1]);
        }
    return bw[n - 1];
}

double probe_flat_slope(const strata_probe_calib_t *c)
{
    int n = c->flat_n;
    if (n < 2) return 0;
    double mx = 0, my = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        if (!(c->flat_bw[i] > 0)) return 0;
        mx += c->flat_bytes[i] / n, my += c->flat_bytes[i] / c->flat_bw[i] / n;
    }
    for (int i = 0; i < n; i++) {
        double dx = c->flat_bytes[i] - mx;
        sxx += dx * dx, sxy += dx * (c->flat_bytes[i] / c->flat_bw[i] - my);
    }
    return sxx > 0 && sxy > 0 ? sxy / sxx : 0;
}

double strata_probe_copy_bw(const strata_probe_calib_t *c, double bytes)
{
    return interp(c->curve_n, c->curve_bytes, c->copy_bw, bytes);
}

double strata_probe_reduce_bw(const strata_probe_calib_t *c, double bytes)
{
    return interp(c->curve_n, c->curve_bytes, c->reduce_bw, bytes);
}

double strata_probe_read_bw(const strata_probe_calib_t *c, double bytes)
{
    return interp(c->curve_n, c->curve_bytes, c->read_bw, bytes);
}

double strata_probe_write_bw(const strata_probe_calib_t *c, double bytes)
{
    for (int i = 0; i < c->curve_n; i++)
        if (!(c->write_bw[i] > 0)) return 0; /* not measured */
    return interp(c->curve_n, c->curve_bytes, c->write_bw, bytes);
}

/* Per core with `busy` cores at once (probe.h): the seconds per byte
 * of the one-core curve (one) and of the all-core one (all), linear in
 * the busy cores between 1 and c->cores; one alone where all is missing
 * at any point of the curve. */
static double busy_bw(const strata_probe_calib_t *c, const double *one, const double *all,
                      double bytes, int busy)
{
    double r1 = interp(c->curve_n, c->curve_bytes, one, bytes);
    bool have = c->cores > 1 && busy > 1;
    for (int i = 0; i < c->curve_n && have; i++)
        have = all[i] > 0;
    if (!have || !(r1 > 0)) return r1;
    double ra = interp(c->curve_n, c->curve_bytes, all, bytes);
    double w = busy >= c->cores ? 1 : (double)(busy - 1) / (c->cores - 1);
    return 1 / ((1 - w) / r1 + w / ra);
}

double strata_probe_read_bw_at(const strata_probe_calib_t *c, double bytes, int busy)
{
    return busy_bw(c, c->read_bw, c->read_all_bw, bytes, busy);
}

double strata_probe_write_bw_at(const strata_probe_calib_t *c, double bytes, int busy)
{
    if (strata_probe_write_bw(c, bytes) <= 0) return 0; /* not measured */
    return busy_bw(c, c->write_bw, c->write_all_bw, bytes, busy);
}

/* Streaming stores per core with `busy` cores at once, as busy_bw, over
 * the points where both kinds were measured (the one-core curve alone at
 * busy <= 1 or where no all-core point was); 0 when none was. */
double strata_probe_write_nt_bw_at(const strata_probe_calib_t *c, double bytes, int busy)
{
    double xs[STRATA_PROBE_CURVE_MAX], one[STRATA_PROBE_CURVE_MAX], all[STRATA_PROBE_CURVE_MAX];
    int n = 0;
    bool have_all = true;
    for (int i = 0; i < c->curve_n; i++)
        if (c->write_nt_bw[i] > 0) {
            xs[n] = c->curve_bytes[i], one[n] = c->write_nt_bw[i], all[n] = c->write_nt_all_bw[i];
            have_all = have_all && all[n] > 0;
            n++;
        }
    if (n == 0) return 0;
    double r1 = interp(n, xs, one, bytes);
    if (!have_all || c->cores < 2 || busy < 2) return r1;
    double ra = interp(n, xs, all, bytes);
    double w = busy >= c->cores ? 1 : (double)(busy - 1) / (c->cores - 1);
    return 1 / ((1 - w) / r1 + w / ra);
}

/* The output's stores at `bytes` in the mode the machine prices: the
 * streaming curve when c->store is STREAM and it was measured, the plain
 * (or, in files before the streaming curve, the engine's fixed) curve
 * otherwise. */
static double out_write_at(const strata_probe_calib_t *c, double bytes, int busy)
{
    double nt =
        c->store == STRATA_PROBE_STORE_STREAM ? strata_probe_write_nt_bw_at(c, bytes, busy) : 0;
    return nt > 0 ? nt : strata_probe_write_bw_at(c, bytes, busy);
}

/* Without a remote curve (one core), the send/recv curve stands in. */
double strata_probe_remote_bw(const strata_probe_calib_t *c, double bytes)
{
    if (c->remote_n > 0) return interp(c->remote_n, c->remote_bytes, c->remote_bw, bytes);
    double t = strata_probe_shm_move(c, bytes);
    return t > 0 ? bytes / t : strata_probe_copy_bw(c, bytes);
}

double strata_probe_shm_move(const strata_probe_calib_t *c, double bytes)
{
    int n = c->shm_n;
    if (n < 2 || bytes <= 0) return 0;
    double a = c->shm_oneway[0];
    /* the β part of the one-way time at the measured sizes */
    if (bytes <= c->shm_bytes[1]) {
        double m1 = c->shm_oneway[1] - a;
        return m1 > 0 ? m1 * bytes / c->shm_bytes[1] : 0;
    }
    for (int i = 2; i < n; i++)
        if (bytes <= c->shm_bytes[i]) {
            double f =
                log(bytes / c->shm_bytes[i - 1]) / log(c->shm_bytes[i] / c->shm_bytes[i - 1]);
            double r0 = (c->shm_oneway[i - 1] - a) / c->shm_bytes[i - 1],
                   r1 = (c->shm_oneway[i] - a) / c->shm_bytes[i];
            double per_byte = r0 + f * (r1 - r0);
            return per_byte > 0 ? per_byte * bytes : 0;
        }
    double last = (c->shm_oneway[n - 1] - a) / c->shm_bytes[n - 1];
    return last > 0 ? last * bytes : 0;
}

/* The buffer size at which the curves price a rank's working set of ws
 * bytes when the call sweeps `sweep` bytes (all ranks' working sets)
 * through the shared last-level cache, every call the same buffers. A
 * cyclic sweep larger than the cache misses nearly every line, one that
 * fits hits nearly every line: a step at the cache's size, which the
 * curves' interpolation in log size between the points either side makes
 * a ramp (8 MiB at 2 ranks: 33.5 MiB swept past a 32 MiB L3 was priced at
 * a rank's 16.75 MiB as if mostly cached, bench/README.md "s14-h19"). So:
 * past the cache, the memory point (the curves' largest, when its
 * all-core footprint, cores x size, is past the cache too); within it, no
 * further than the largest point whose all-core footprint fits it. With
 * the cache unknown, or curves that do not reach past it: ws. */
double probe_cache_level(const strata_probe_calib_t *c, double ws, double sweep)
{
    double L = c->llc_bytes, k = c->cores > 1 ? c->cores : 1;
    int n = c->curve_n;
    if (!(L > 0) || n < 1) return ws;
    double last = c->curve_bytes[n - 1];
    if (sweep > L) return k * last > L ? fmax(ws, last) : ws;
    double fits = 0;
    for (int i = 0; i < n; i++)
        if (k * c->curve_bytes[i] < L) fits = c->curve_bytes[i];
    return fits > 0 ? fmin(ws, fits) : ws;
}

/* The host as sched's cost model sees it, for one call (docs/probe.md):
 * every figure is read off the measured curves at the working set of that
 * call, and the model (sched/cost.c) does the rest — the engine priced as
 * the direct schedule, the message-passing algorithms as theirs. */
#define ENGINE_SLOTS 3 /* engine: staging slots a rank rotates (comm.h COMM_DEPTH) */

double probe_stream_share(const strata_probe_calib_t *c, int size, double slice, double r_in,
                          double r_slice, double r_mem)
{
    if (!(c->stream_hand_bw > 0 && c->stream_reduce_bw > 0) || size != 2 ||
        slice != c->stream_bytes || !(r_in > 0 && r_slice > 0 && r_mem > 0) || r_mem >= r_slice)
        return 0;
    double phi = (1 / r_in - 1 / r_slice) / (1 / r_mem - 1 / r_slice);
    return phi < 0 ? 0 : phi > 1 ? 1 : phi;
}

void strata_probe_machine(const strata_probe_calib_t *c, strata_comm_algo_t algo, int size,
                          double bytes, strata_coll_machine_t *m_p)
{
    double P = size > 1 ? size : 1, S = bytes > 0 ? bytes : 1;
    strata_coll_machine_t m = {.nranks = (uint32_t)P,
                               .per_server = (uint32_t)P,
                               .servers = 1,
                               .nics = 1,
                               .eta_intra = 1,
                               .cores = (uint32_t)c->cores};
    /* sched's oversubscription charges each wait (P - cores) x lat_oversub:
     * the regime's cost of one wait, spread over the ranks beyond */
    if (P > c->cores) m.lat_oversub = strata_probe_wait_cost(c, size) / (P - c->cores);
    snprintf(m.intra_kind, sizeof(m.intra_kind), "shm");
    /* a call's first synchronisation: entering a strata call and handing
     * one flag to a peer costs what an 8-byte strata message costs one way
     * (the same path); each further one a cache-line hand-off */
    m.lat_intra = c->shm_n > 0 ? c->shm_oneway[0] : c->shm_alpha;
    m.lat_sync = c->line_latency;
    /* The engine's first synchronisation is the barrier's path, not a
     * message's: strata's barrier is the line path without data
     * (comm_shm_barrier: enter the call, post one line, fetch the peer's),
     * where an 8-byte message hands two counters over one way (the
     * channel's head, and its tail, which the sender reads back before its
     * next message). In the close placement the two differ by 30-40 ns,
     * in the far one by 75-140 ns: α priced the 8 B allreduce +28 ... +44 %
     * far (bench/README.md, "s13-h19"). Measured at the cores' ranks, so
     * it stands for calls of that many ranks (more ranks wait for the
     * scheduler, priced below; fewer post fewer lines: α then). */
    bool engine = (algo == STRATA_COMM_SHM || algo == STRATA_COMM_AUTO) && P > 1;
    if (engine && c->barrier > 0 && c->barrier_ranks == size) {
        m.lat_intra = c->barrier;
        /* The barrier is the line path without data: an allreduce of 56 B
         * or less does that and its own work besides — the algorithm
         * choice, its data copied beside the sequence, the ranks' lines
         * reduced, the result copied out — timed on one rank through the
         * library's functions (shm.c, line_work): 20-40 ns more than the
         * barrier measured here, 8-12 of it this work (bench/README.md,
         * "s14-h19"). */
        if (S <= STRATA_DIRECT_LINE_MAX) m.lat_intra += c->line_work;
    }
    /* Every engine call (more than 56 B) reads the clock for its learned
     * choices (allreduce_shm.c run(): at its end, and at its start for
     * the pipelined allreduce too): 26-32 ns a read on this VM, measured on
     * one rank (shm.c, clock_read). */
    strata_direct_layout_t lay;
    strata_direct_layout(STRATA_COLL_ALLREDUCE, (uint32_t)P, S, P > c->cores, &lay);
    if (engine && S > STRATA_DIRECT_LINE_MAX) m.lat_intra += (lay.flat ? 1 : 2) * c->clock_read;
    /* The engine's flags, counted in allreduce_shm.c: the line path (56 B
     * or less) hands over one line a call; the flat path two flags
     * (staged, then done), the pipeline three a chunk (staged, reduced,
     * done), every other collective two a chunk (staged, done). sched
     * prices the first as lat_intra and one more a chunk of the pipeline
     * (2 C - 1) or none (flat, one-phase: C - 1) at lat_sync: the done
     * flag is not among them. It is charged here once a call, at the
     * measured line hand-off: the last chunk's done, whose store the
     * call's closing fence waits for and whose line the peer loads when
     * it next stages; an earlier chunk's is loaded behind the next
     * chunk's staging copy (the engine reads it before restaging a slot,
     * three chunks later), and at 2 chunks or more a hand-off is under
     * 0.5 % of the call here. A message (ring, recursive doubling) has
     * no done flag. */
    /* At 2 ranks a flag is priced in the engine's own pattern, where it
     * was measured: the flat round's flags alone (c2c.c flat_side: per
     * round staged and done, each in its own line, posted behind a fence,
     * polled with a pause, as the engine does; flat_flags), half of it a
     * flag. The coherence matrix's ping-pong (one line both threads write,
     * polled without a pause) read 1.3-3.6x that in the far placement of
     * 2026-12-03 22:30-22:50 UTC (300-815 ns against 0.35-0.49 us a
     * round of two) while a plain two-line ping-pong read 190-230 ns
     * (bench/README.md, "s17-h19a"). Without the round (files before it,
     * other rank counts): line_latency. */
    bool pair = engine && size == 2 && c->flat_flags > 0;
    double flag = pair ? c->flat_flags / 2 : c->line_latency;
    if (pair) m.lat_sync = flag;
    if (engine && S > STRATA_DIRECT_LINE_MAX) m.lat_intra += flag;
    /* The flat call's own work on its core (57 B to 2 KiB): setting up the
     * engine's call, staging, two published words with their fences, the
     * reduction's set-up — timed on one rank running the engine's flat
     * path alone (shm.c, flat_work, barrier_work): beyond the barrier's
     * path and the clock read, 50-60 ns on this VM, against the barrier's
     * 11 ns. In series with the call's hand-offs (the bound: loads of the
     * peer's lines in flight may hide some of it). At 2 ranks with the
     * flat round measured, the call is that round's flags (its two
     * hand-offs as the engine makes them) and the call's whole own work
     * — the barrier's path, the flat call's beyond it, the clock read —
     * in place of the barrier, the done flag and the clock read above. */
    if (engine && lay.flat && S > STRATA_DIRECT_LINE_MAX)
        m.lat_intra = pair && c->flat_work > 0 && c->barrier_work > 0
                          ? c->flat_flags + c->barrier_work + c->flat_work + c->clock_read
                          : m.lat_intra + c->flat_work;
    /* message passing: a step's message moves at the send/recv curve's rate
     * for its size (ring: a block of S/P; recursive doubling: all of S) */
    double msg = algo == STRATA_COMM_RECDBL ? S : S / P, mv = strata_probe_shm_move(c, msg);
    m.bw_intra = mv > 0 ? msg / mv : c->shm_bw;
    m.bw_nic = m.bw_intra, m.lat_inter = m.lat_intra;
    /* direct: its own input read, copies and reductions at one core's rates
     * for a working set of S; a byte handed to a peer at the hand-over rate
     * of a pipeline slice (the layout's, below; the whole S when flat) */
    /* the ranks that run at once (all of them, or one per core) read their
     * inputs and store their outputs together: at the per-core rates of
     * that many cores streaming at once (mem.c's all-core curve) */
    int busy = (int)fmin(P, c->cores);
    m.bw_read = strata_probe_read_bw_at(c, S, busy);
    m.bw_copy = strata_probe_copy_bw(c, S);
    m.reduce_bw = strata_probe_reduce_bw(c, S);
    /* the engine's layout (sched.h): a slice of the first chunk, which
     * has at least 4 chunks' worth of slices when the ranks outnumber
     * the cores */
    double slice = lay.slice;
    m.bw_load = strata_probe_remote_bw(c, slice);
    /* the flat path: its round measured as the engine runs it, back to
     * back (c2c.c, flat_side): what the copy into the slot and the sum of
     * the peer's slot with its own input add to a round beyond its
     * synchronisation, the hand-over
     * and the reduction together — both rates of the flat path, so that
     * cost_direct's min(hand, red) is this figure (the pipeline's
     * hand-over curve, another access pattern, does not cap it) */
    /* Priced by the round's cost per byte (probe_flat_slope) beyond the
     * call's first line, whose transfer the engine's call does not pay
     * on top of its flags and own work: the engine's calls of 64, 128 and
     * 256 B cost the same within 0.01-0.02 us, where the round's data
     * adds 0.19-0.30 us at each of those sizes (one transfer of its
     * lines in parallel; bench/comm/flatround.c) and grows by its slope
     * beyond; the engine's 512 B - 2 KiB calls cost 0.08-0.11,
     * 0.25-0.31 and 0.53-0.55 us more than its 64 B one, the slope
     * through the round's 256 B - 2 KiB points 0.28 ns a byte: 0.12,
     * 0.27, 0.55 us (bench/README.md, "Session 20"; docs/probe.md, "The
     * flat path's data"). So (P - 1) x slope x (S - 64 B): the data term at the
     * round's per-byte rate, less its first 64 bytes (the flat call
     * priced above is timed at 64 B). Without a slope (one point, or a
     * curve that does not grow), the round's figure at S, as before. */
    double fb = S <= STRATA_DIRECT_FLAT_MAX ? probe_flat_slope(c) : 0;
    if (fb > 0) {
        m.reduce_bw = m.bw_load = 1 / fb, m.bw_read = 0;
        /* the first 64 B off the call's latency, at most all of it so
         * that α stays a time: from about 40 ranks the offset, (P - 1) x
         * 64 B at the slope, can pass α, and such a call is priced up to
         * that difference dearer (under 1 us at 64 ranks on this host,
         * where the ranks' waits for the cores cost hundreds) */
        m.lat_intra -= fmin((P - 1) * fb * fmin(S, PROBE_FLAT_BASE), m.lat_intra);
    } else if (S <= STRATA_DIRECT_FLAT_MAX && c->flat_n > 0) {
        double fr = interp(c->flat_n, c->flat_bytes, c->flat_bw, S);
        if (fr > 0) m.reduce_bw = m.bw_load = fr;
        /* and the input's reads with them: the round copies its input
         * into the slot and sums it with the peer's, as flat() does, so
         * cost_direct's S / read(S) would count them a second time
         * (2 KiB: 30-40 ns at this host's all-core read curve) */
        if (fr > 0) m.bw_read = 0;
    }
    /* the hand-over curve stores what it loads into a buffer of its size
     * (in cache); the engine stores into the output, a buffer of S (in
     * memory once S leaves the caches; plain or streamed, below): the
     * difference per byte, when positive, is bw_store */
    double w_out = out_write_at(c, S, busy), w_hand = strata_probe_write_bw_at(c, slice, busy);
    double extra = w_out > 0 && w_hand > 0 ? 1 / w_out - 1 / w_hand : 0;
    m.bw_store = extra > 0 ? 1 / extra : 0;
    /* With the pipeline's reduction measured (files before it price as
     * above): each phase of the engine at the rate of a primitive with its
     * access pattern, on a slice in the caches — stage (the hand-over's
     * write) and copy-out (its read) in bw_load, the reduction in
     * bw_reduce_load, both reading a cache-resident input; its own slice
     * copied from the hot sum (the copy curve at the slice) into the
     * output; what the input and output cost beyond a slice's worth of
     * cache is the extra read (1 / read(ws) - 1 / read(slice)) and store
     * (1 / write(ws) - 1 / write(slice), bw_store) per byte, where ws is
     * the rank's footprint, the level its input and output live in: both
     * of S and its three staging slots of a chunk (1 MiB at 2 ranks:
     * 2.75 MiB, past this host's 2 MiB L2, where S alone is not). The own
     * slice is copied out block by block while each block is in L1: the
     * copy curve at a block, and the store beyond a block's. */
    if (c->reduce_n > 0 && P > 1 && !lay.flat) {
        m.bw_reduce_load = interp(c->reduce_n, c->reduce_bytes, c->reduce_load_bw, slice);
        /* Where those bytes live: every call sweeps all P ranks' footprints
         * through the shared last-level cache (probe_cache_level). Plain
         * stores keep the output there too (2 S and the slots a rank);
         * streamed, it bypasses the caches, and only the input and the
         * slots (S and the slots) compete for them — 8 MiB at 2 ranks:
         * 33.5 MiB plain, past this host's 32 MiB L3, every line from
         * memory; 17.5 MiB streamed, the input in the L3. */
        double slots = ENGINE_SLOTS * lay.chunk, ws = 2 * S + slots;
        bool nt =
            c->store == STRATA_PROBE_STORE_STREAM && strata_probe_write_nt_bw_at(c, ws, busy) > 0;
        double in_ws = nt ? S + slots : ws;
        double lvl = probe_cache_level(c, ws, P * ws);
        double r_out = strata_probe_read_bw_at(c, probe_cache_level(c, in_ws, P * in_ws), busy),
               r_hand = strata_probe_read_bw_at(c, slice, busy);
        w_out = nt ? out_write_at(c, ws, busy) : out_write_at(c, lvl, busy);
        /* Streamed, the output's stores drain from the write-combining
         * buffers while the next block's loads and reduction proceed: of
         * their own time 1 / w_out a byte, the part the read+reduce
         * stream does not hide (1 - nt_overlap, overlap.c) is what the
         * call pays; of that, a cached store's worth is already in the
         * hand-over and copy terms. Plain stores: in series, as before. */
        double keep = nt ? 1 - c->nt_overlap : 1;
        extra = w_out > 0 && w_hand > 0 ? keep / w_out - 1 / w_hand : 0;
        m.bw_store = extra > 0 ? 1 / extra : 0;
        double rx = r_out > 0 && r_hand > 0 ? 1 / r_out - 1 / r_hand : 0;
        m.bw_read = rx > 0 ? 1 / rx : 0;
        double blk = fmin(slice, lay.block), cp = strata_probe_copy_bw(c, blk),
               w_blk = strata_probe_write_bw_at(c, blk, busy);
        double own = w_out > 0 && w_blk > 0 ? keep / w_out - 1 / w_blk : 0;
        m.bw_copy = cp > 0 ? 1 / (1 / cp + (own > 0 ? own : 0)) : 0;
        /* From memory (at 2 ranks, the streamed round's): the stage +
         * copy-out and the reduction of the share phi of the input read
         * from memory at the pipeline round streamed as the engine runs
         * it there (c2c.c, HO_STREAM), which reads its input from memory
         * and stores what it copies out there; the rest as above. phi is
         * where the read curve at the input's level (r_out) lies between
         * the slice's (r_hand, 0) and the memory point's (the curves'
         * largest size, 1), in time per byte (probe_stream_share): past
         * the last-level cache the level is the memory point, phi = 1;
         * without the cache's size (a VM without sysfs cache entries) the
         * curve at the footprint says how much of it is memory. The slice rates above plus the read
         * curve's extra priced 16-64 MiB 16-43 % under the engine: the round's 128 KiB stage copied
         * from memory took 6.1-7.7 us against 1.2-1.6 in the caches, 2.4x what the read curve's
         * streaming rate adds (one core's prefetch ramp each slice, both cores at once; a scratch
         * copy of the round, bench/README.md "s18-h19"). Its stores are
         * plain; streamed ones moved it by 1-5 % there, so both branches
         * take it, and the gathered bytes' stores and the input's reads
         * are inside it (bw_store, bw_read: their 1 - phi). The own
         * slice's copy into the output (copy(block) and its stores) stays
         * as above. */
        double r_mem =
            c->curve_n > 0 ? strata_probe_read_bw_at(c, c->curve_bytes[c->curve_n - 1], busy) : 0;
        double phi = probe_stream_share(c, size, slice, r_out, r_hand, r_mem);
        if (phi > 0) {
            m.bw_load = 1 / ((1 - phi) / m.bw_load + phi / c->stream_hand_bw);
            m.bw_reduce_load = 1 / ((1 - phi) / m.bw_reduce_load + phi / c->stream_reduce_bw);
            m.bw_read = phi < 1 && m.bw_read > 0 ? m.bw_read / (1 - phi) : 0;
            m.bw_store = phi < 1 && m.bw_store > 0 ? m.bw_store / (1 - phi) : 0;
        }
    }
    *m_p = m;
}

void strata_probe_calib_quick(double alpha_s, double copy_bw, double reduce_bw, int cores,
                              strata_probe_calib_t *c_p)
{
    strata_probe_calib_t c = {.cores = cores > 0 ? cores : 1,
                              .line_latency = alpha_s,
                              .shm_alpha = alpha_s,
                              .shm_bw = copy_bw / 2,
                              .curve_n = 1,
                              .shm_n = 2};
    snprintf(c.date, sizeof(c.date), "now");
    c.curve_bytes[0] = 1, c.copy_bw[0] = copy_bw, c.reduce_bw[0] = reduce_bw;
    c.read_bw[0] = 0; /* not measured: not charged */
    /* a byte handed over: stored by its owner, loaded by the peer, about
     * one copy's worth of work */
    c.remote_n = 1, c.remote_bytes[0] = 1, c.remote_bw[0] = copy_bw;
    /* a message is copied into a slot and out of it: half the copy rate */
    c.shm_bytes[0] = 8, c.shm_bytes[1] = 1048576;
    c.shm_oneway[0] = alpha_s, c.shm_oneway[1] = alpha_s + 1048576 / c.shm_bw;
    *c_p = c;
}

/* The prediction with the output stored as c->store says (PLAIN or STREAM). */
static double predict_mode(const strata_probe_calib_t *c, strata_coll_t coll,
                           strata_comm_algo_t algo, int size, size_t bytes)
{
    strata_coll_machine_t m;
    strata_probe_machine(c, algo, size, (double)bytes, &m);
    strata_algo_t a = algo == STRATA_COMM_RING           ? STRATA_ALGO_RING
                      : algo == STRATA_COMM_RECDBL       ? STRATA_ALGO_RECDBL
                      : algo == STRATA_COMM_RABENSEIFNER ? STRATA_ALGO_RABENSEIFNER
                                                         : STRATA_ALGO_DIRECT;
    strata_coll_cost_t k;
    strata_status_t st = strata_coll_cost(&m, coll, a, (double)bytes, &k, NULL);
    if (st == STRATA_ERR_UNSUPPORTED && a != STRATA_ALGO_DIRECT) /* the runtime runs the ring */
        st = strata_coll_cost(&m, coll, STRATA_ALGO_RING, (double)bytes, &k, NULL);
    return st == STRATA_OK ? k.time : 0;
}

/* The engine picks, per output size, whichever store mode is cheaper
 * (STRATA_NT_THRESHOLD overrides it), so the model prices both at that
 * size, each from its own write curve, and takes the cheaper. */
strata_probe_store_t strata_probe_store_at(const strata_probe_calib_t *c, strata_coll_t coll,
                                           strata_comm_algo_t algo, int size, double bytes)
{
    if (c->stream_from > 0)
        return bytes >= c->stream_from ? STRATA_PROBE_STORE_STREAM : STRATA_PROBE_STORE_PLAIN;
    if (c->store != STRATA_PROBE_STORE_AUTO) return c->store;
    if (!(strata_probe_write_nt_bw_at(c, bytes, 1) > 0)) return STRATA_PROBE_STORE_PLAIN;
    strata_probe_calib_t k = *c;
    k.store = STRATA_PROBE_STORE_PLAIN;
    double plain = predict_mode(&k, coll, algo, size, (size_t)bytes);
    k.store = STRATA_PROBE_STORE_STREAM;
    double stream = predict_mode(&k, coll, algo, size, (size_t)bytes);
    return stream > 0 && stream < plain ? STRATA_PROBE_STORE_STREAM : STRATA_PROBE_STORE_PLAIN;
}

double strata_probe_predict(const strata_probe_calib_t *c, strata_coll_t coll,
                            strata_comm_algo_t algo, int size, size_t bytes)
{
    if (!c || size < 1 || c->curve_n < 1 || c->cores < 1 || c->shm_n < 2) return 0;
    strata_probe_calib_t k = *c;
    k.store = strata_probe_store_at(c, coll, algo, size, (double)bytes);
    return predict_mode(&k, coll, algo, size, bytes);
}

/* ==== The wait regime ==== */

/* shm.c's COMM_YIELD_SLOW: a yield that took longer makes the engine's
 * waits sleep on a futex at once (docs/runtime.md) */
#define ENGINE_YIELD_SLOW 100e-6

static const char *const wait_names[] = {"auto", "spin", "yield", "futex", "barrier"};

const char *strata_probe_wait_name(strata_probe_wait_t w)
{
    return (unsigned)w < sizeof(wait_names) / sizeof(wait_names[0]) ? wait_names[w] : "?";
}

bool strata_probe_wait_parse(const char *name, strata_probe_wait_t *w_p)
{
    for (unsigned i = 0; name && i < sizeof(wait_names) / sizeof(wait_names[0]); i++)
        if (!strcmp(name, wait_names[i])) {
            *w_p = (strata_probe_wait_t)i;
            return true;
        }
    return false;
}

/* The engine's policy (docs/runtime.md, "The shared-memory segment"):
 * ranks that fit the cores spin; beyond, a waiter whose peer needs its
 * core yields to it at once, and sleeps on a futex instead once a yield
 * is slow (the host's other processes hold the core). */
strata_probe_wait_t strata_probe_wait_of(const strata_probe_calib_t *c, int size)
{
    if (c->wait != STRATA_PROBE_WAIT_AUTO) return c->wait;
    if (size <= c->cores) return STRATA_PROBE_WAIT_SPIN;
    return c->proc_switch > ENGINE_YIELD_SLOW && c->futex_switch > 0 ? STRATA_PROBE_WAIT_FUTEX
                                                                     : STRATA_PROBE_WAIT_YIELD;
}

/* A wait for a rank that shares a core: each core runs its ranks in turn,
 * so to reach the awaited one it switches ceil(P / cores) - 1 times, the
 * cores at once. */
double strata_probe_wait_cost(const strata_probe_calib_t *c, int size)
{
    double P = size, cores = c->cores > 0 ? c->cores : 1;
    if (P <= cores) return 0;
    double switches = ceil(P / cores) - 1;
    switch (strata_probe_wait_of(c, size)) {
    case STRATA_PROBE_WAIT_YIELD:
        return switches * c->proc_switch;
    case STRATA_PROBE_WAIT_FUTEX:
        return switches * c->futex_switch;
    case STRATA_PROBE_WAIT_BARRIER:
        return (P - cores) * c->per_rank;
    default:
        return 0;
    }
}

/* ==== The bottleneck ==== */

const char *strata_probe_bottleneck(const strata_probe_calib_t *c, int P, char *buf, size_t len)
{
    double big = 64.0 * 1048576, small = 8;
    double t_small = strata_probe_predict(c, STRATA_COLL_ALLREDUCE, STRATA_COMM_SHM, P, 8),
           t_fit = c->shm_alpha;
    strata_direct_layout_t lay;
    strata_direct_layout(STRATA_COLL_ALLREDUCE, (uint32_t)P, big, P > c->cores, &lay);
    double cp = strata_probe_remote_bw(c, lay.slice);
    int n = snprintf(
        buf, len,
        "At %d ranks on %d cores: a small allreduce is bound by %s (%.0f ns a "
        "cache-line hand-off%s%s%s); a 64 MiB one by copying what other cores wrote (%.2f GB/s "
        "per rank; all cores copying locally together reach %.2f GB/s).",
        P, c->cores,
        P > c->cores ? "the scheduler (ranks outnumber cores)" : "the coherence latency",
        c->line_latency * 1e9, P > c->cores ? ", plus a wait for a rank sharing the core: " : "",
        P > c->cores ? strata_probe_wait_name(strata_probe_wait_of(c, P)) : "",
        P > c->cores ? " regime" : "", cp / 1e9, c->mem_copy_all / 1e9);
    if (n > 0 && (size_t)n < len && P > c->cores)
        snprintf(buf + n, len - (size_t)n,
                 " Predicted 8 B allreduce: %.2f us, of which %.2f us "
                 "the scheduler.",
                 t_small * 1e6, (t_small - t_fit) * 1e6);
    (void)small;
    return buf;
}
