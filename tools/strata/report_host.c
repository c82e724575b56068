/*
 * report_host.c — `strata report`'s section on this host as measured:
 * for a cluster file written by `strata probe --save` (or `local` when
 * STRATA_PROBE names one), what bounds strata's collectives here, from
 * the measurements (strata_probe_bottleneck): the coherence latency, the
 * memory copy between cores, the scheduler when ranks outnumber cores;
 * with the calibrated prediction of an 8 B and a 64 MiB allreduce.
 * Presets and other descriptions hold no measurements: the section is left
 * out for them.
 */
#include "cli_report.h"

#include <stdlib.h>
#include <string.h>

/* The calibration file of this report: the cluster file itself (its name
 * up to any ",key=value"), or $STRATA_PROBE for `local`. */
static const char *calib_path(const report_ctx_t *ctx, char *buf, size_t len)
{
    if (strcmp(ctx->spec, "local") == 0) return getenv("STRATA_PROBE");
    snprintf(buf, len, "%s", ctx->spec);
    char *comma = strchr(buf, ',');
    if (comma) *comma = 0;
    size_t n = strlen(buf);
    return n > 5 && strcmp(buf + n - 5, ".json") == 0 ? buf : NULL;
}

bool report_host_applies(const report_ctx_t *ctx)
{
    char buf[1024];
    strata_probe_calib_t c;
    const char *path = calib_path(ctx, buf, sizeof(buf));
    if (strcmp(ctx->spec, "local") == 0) return true; /* says how to measure it */
    /* a file with figures applies even when they are bad: the section then
     * fails with the loader's file:line:col message (before, a bad figure
     * left the section out without a word) */
    return path && strata_probe_calib_load(path, &c, NULL) != STRATA_ERR_NOT_FOUND;
}

static void one(const report_ctx_t *ctx, const strata_probe_calib_t *c, int P)
{
    char text[640], a[32], b[32];
    double t8 = strata_probe_predict(c, STRATA_COLL_ALLREDUCE, STRATA_COMM_SHM, P, 8);
    double t64 = strata_probe_predict(c, STRATA_COLL_ALLREDUCE, STRATA_COMM_SHM, P, 64 << 20);
    strata_probe_bottleneck(c, P, text, sizeof(text));
    if (ctx->json) {
        char key[32];
        snprintf(key, sizeof(key), "ranks_%d", P);
        strata_json_open(ctx->json, key, '{');
        strata_json_num(ctx->json, "allreduce_8B_s", t8);
        strata_json_num(ctx->json, "allreduce_64MiB_s", t64);
        strata_json_str(ctx->json, "bottleneck", text);
        strata_json_close(ctx->json, '}');
        return;
    }
    fprintf(ctx->out, "  %d ranks: allreduce 8 B %s, 64 MiB %s (calibrated model)\n  %s\n", P,
            report_time(t8, a, sizeof(a)), report_time(t64, b, sizeof(b)), text);
}

strata_status_t report_host_run(const report_ctx_t *ctx, strata_error_t *err)
{
    char buf[1024];
    const char *path = calib_path(ctx, buf, sizeof(buf));
    strata_probe_calib_t c;
    if (!path) {
        if (ctx->json) {
            strata_json_bool(ctx->json, "measured", false);
            return STRATA_OK;
        }
        fprintf(ctx->out, "  not measured: run 'strata probe --save local.json', then 'strata "
                          "report local.json'\n  (or set STRATA_PROBE=local.json for 'strata "
                          "report local')\n");
        return STRATA_OK;
    }
    strata_status_t st = strata_probe_calib_load(path, &c, err);
    if (st != STRATA_OK) return st;
    if (ctx->json) {
        strata_json_bool(ctx->json, "measured", true);
        strata_json_str(ctx->json, "date", c.date);
        strata_json_int(ctx->json, "cores", c.cores);
    } else {
        fprintf(ctx->out, "  measured by strata probe on %s (%s), %d cores\n", c.date, path,
                c.cores);
    }
    one(ctx, &c, c.cores > 1 ? c.cores : 2);
    one(ctx, &c, 2 * (c.cores > 1 ? c.cores : 2));
    return STRATA_OK;
}
