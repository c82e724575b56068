/*
 * trace.c — the Chrome trace-event file (opens in Perfetto and
 * chrome://tracing): one process per rank with a "send" and a "recv"
 * thread (a rank's sends and receives overlap in time, and complete events
 * on one thread must nest), and one counter track per traced link with its
 * load in GB/s over time.
 *
 * Items are recorded during the trace pass of a run (driver.c records
 * steps, the engine's load observer records link loads) and written at the
 * end, one event at a time: each event is built and escaped by jansson and
 * streamed, so a large trace never sits in memory as a JSON tree.
 * Format: Trace Event Format (Google, "Trace Event Format" document):
 * "X" complete events with ts/dur in microseconds, "C" counter events,
 * "M" metadata events naming processes and threads.
 */
#include "sim.h"

#include <string.h>

void sim_trace_add(sim_trace_t *tr, const sim_tev_t *e)
{
    if (tr->truncated) return;
    if (tr->ev.n >= SIM_TRACE_MAX_EVENTS)
        tr->truncated = true;
    else if (UTIL_VEC_PUSH(&tr->ev, *e))
        tr->truncated = tr->oom = true;
}

static int emit(FILE *f, json_t *ev, bool *first)
{
    if (!ev) return -1;
    if (!*first) fputs(",\n", f);
    *first = false;
    int rc = json_dumpf(ev, f, JSON_COMPACT);
    json_decref(ev);
    return rc;
}

static const char *op_name(int op)
{
    switch (op) {
    case STRATA_STEP_SEND:
        return "send";
    case STRATA_STEP_RECV:
        return "recv";
    case STRATA_STEP_RECV_REDUCE:
        return "recv+reduce";
    default:
        return "local";
    }
}

static int emit_meta(FILE *f, const char *what, int pid, int tid, const char *name, bool *first)
{
    json_t *ev = tid < 0 ? json_pack("{s:s,s:s,s:i,s:{s:s}}", "name", what, "ph", "M", "pid", pid,
                                     "args", "name", name)
                         : json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", what, "ph", "M", "pid",
                                     pid, "tid", tid, "args", "name", name);
    return emit(f, ev, first);
}

static int emit_step(FILE *f, const sim_tev_t *e, uint32_t ranks_pid0, bool *first)
{
    char name[64];
    bool send = e->op == STRATA_STEP_SEND;
    snprintf(name, sizeof(name), "%s %s %d", op_name(e->op), send ? "to" : "from", (int)e->peer);
    json_t *ev = json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f,s:{s:i,s:f}}", "name", name, "cat",
                           op_name(e->op), "ph", "X", "pid", (int)(ranks_pid0 + (uint32_t)e->agent),
                           "tid", send ? 0 : 1, "ts", e->t0 * 1e6, "dur", (e->t1 - e->t0) * 1e6,
                           "args", "peer", (int)e->peer, "bytes", e->bytes);
    return emit(f, ev, first);
}

static int emit_load(FILE *f, const sim_tev_t *e, const char *name, bool *first)
{
    json_t *ev = json_pack("{s:s,s:s,s:i,s:f,s:{s:f}}", "name", name, "ph", "C", "pid", 0, "ts",
                           e->t0 * 1e6, "args", "GB/s", e->bytes / 1e9);
    return emit(f, ev, first);
}

/* Name of global agent g: "rank r", "switch k" (in-network agents), with
 * the collective's number in front when there are several. */
static void agent_name(const sim_job_t *jobs, uint32_t njobs, uint32_t g, char *buf, size_t len)
{
    uint32_t j = 0;
    while (j + 1 < njobs && g >= jobs[j + 1].base)
        j++;
    uint32_t a = g - jobs[j].base, P = strata_sched_params(jobs[j].s)->nranks;
    char pre[16] = "";
    if (njobs > 1) snprintf(pre, sizeof(pre), "c%u ", j);
    if (a < P)
        snprintf(buf, len, "%srank %u", pre, a);
    else
        snprintf(buf, len, "%sswitch %u", pre, a - P);
}

/* Write the recorded trace to path. link_names[k] names traced track k;
 * agent g of the jobs gets process g + 1. */
strata_status_t sim_trace_write(const sim_trace_t *tr, const char *path, const sim_job_t *jobs,
                                uint32_t njobs, char (*link_names)[96], int ntracks,
                                strata_error_t *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return strata_error_set(err, STRATA_ERR_IO, "%s: cannot write trace file", path);
    bool first = true;
    int rc = 0;
    uint32_t nagents = njobs ? jobs[njobs - 1].base + jobs[njobs - 1].nagents : 0;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
    rc |= emit_meta(f, "process_name", 0, -1, "links (load, GB/s)", &first);
    for (uint32_t g = 0; g < nagents && rc == 0; g++) {
        char name[48];
        agent_name(jobs, njobs, g, name, sizeof(name));
        rc |= emit_meta(f, "process_name", (int)g + 1, -1, name, &first);
        rc |= emit_meta(f, "thread_name", (int)g + 1, 0, "send", &first);
        rc |= emit_meta(f, "thread_name", (int)g + 1, 1, "recv", &first);
    }
    for (size_t i = 0; i < tr->ev.n && rc == 0; i++) {
        const sim_tev_t *e = &tr->ev.v[i];
        if (e->agent >= 0)
            rc |= emit_step(f, e, 1, &first);
        else if (e->chan >= 0 && tr->chan_track[e->chan] >= 0 && tr->chan_track[e->chan] < ntracks)
            rc |= emit_load(f, e, link_names[tr->chan_track[e->chan]], &first);
    }
    fprintf(f, "\n],\"otherData\":{\"generator\":\"strata sim\",\"truncated\":%s}}\n",
            tr->truncated ? "true" : "false");
    if (fclose(f) != 0 || rc != 0)
        return strata_error_set(err, STRATA_ERR_IO, "%s: error writing trace file", path);
    return STRATA_OK;
}

/* Engine observer: the load on channel r is `rate` from engine time t. */
void sim_trace_on_load(void *ctx, uint32_t r, double t, double rate)
{
    sim_trace_t *tr = ctx;
    if (r >= tr->nchan || tr->chan_track[r] < 0) return;
    sim_tev_t e = {-1, -1, (int32_t)r, 0, rate, t + tr->offset, t + tr->offset};
    sim_trace_add(tr, &e);
}
