/*
 * result.c — printing a simulation result as text (summary and two
 * tables: link classes, most loaded links) or as one JSON object.
 * Units: seconds in JSON, B/s as GB/s (1e9) in text, like nccl-tests.
 */
#include "sim.h"

#include <math.h>

static void print_text(const strata_sim_result_t *r, FILE *out)
{
    char t[32], tab[32], b[32];
    fprintf(out, "simulated: %s\n", r->desc);
    util_fmt_time(r->time, t, sizeof(t));
    util_fmt_time(r->time_ab, tab, sizeof(tab));
    double dev = r->time_ab > 0 ? (r->time / r->time_ab - 1) * 100 : 0;
    fprintf(out, "  time      %s  (each flow alone on its path: %s; links shared: %+.1f %%)\n", t,
            tab, dev);
    if (r->time_model > 0) {
        util_fmt_time(r->time_model, tab, sizeof(tab));
        fprintf(out, "  model     %s  (collective layer's formula, alpha + beta terms; %+.1f %%)\n",
                tab, (r->time / r->time_model - 1) * 100);
        if (r->model_caveat) fprintf(out, "            model caveat: %s\n", r->model_caveat);
    }
    fprintf(out, "  algbw     %.2f GB/s   busbw %.2f GB/s\n", r->algbw / 1e9, r->busbw / 1e9);
    fprintf(out,
            "  phases    %llu (%llu simulated, %llu reused, %llu generated; certified "
            "contention-free: %llu)   flows %llu   events %llu\n",
            (unsigned long long)r->phases, (unsigned long long)r->phases_simulated,
            (unsigned long long)(r->phases - r->phases_simulated),
            (unsigned long long)r->phases_generated, (unsigned long long)r->phases_certified,
            (unsigned long long)r->flows, (unsigned long long)r->events);
    if (r->phases_folded)
        fprintf(out, "  folded    %llu phases by parts: %llu of their %llu flows run\n",
                (unsigned long long)r->phases_folded, (unsigned long long)r->fold_timed,
                (unsigned long long)r->fold_flows);
    if (r->phases_rot)
        fprintf(out,
                "  rotated   %llu folded phases generated from 1 channel in %u (channel "
                "rotation; %llu timed on its quotient, %llu of them from the representatives)\n",
                (unsigned long long)r->phases_rot, r->rot_order, (unsigned long long)r->phases_quot,
                (unsigned long long)r->phases_map);
    if (r->phases_relabeled)
        fprintf(out,
                "  relabeled %llu phases onto a representative distance (a proven symmetry of "
                "the cluster)\n",
                (unsigned long long)r->phases_relabeled);
    fprintf(out, "\n  %-22s %12s %12s %7s %8s\n", "link class", "capacity", "carried", "util",
            "bound");
    for (int c = 0; c < r->nclasses; c++) {
        const strata_sim_class_t *k = &r->classes[c];
        util_fmt_bytes(k->bytes, b, sizeof(b));
        fprintf(out, "  %-22s %7.1f GB/s %12s %6.1f%% %7.1f%%\n", k->name, k->capacity / 1e9, b,
                k->utilisation * 100, k->bound_share * 100);
    }
    fprintf(out, "  %-22s %12s %12s %7s %7.1f%%\n", "(latency, waits)", "", "", "",
            r->latency_share * 100);
    if (r->nlinks == 0) return;
    fprintf(out, "\n  %-36s %-20s %12s %7s\n", "most loaded links", "class", "carried", "util");
    for (int i = 0; i < r->nlinks; i++) {
        const strata_sim_link_load_t *l = &r->links[i];
        util_fmt_bytes(l->bytes, b, sizeof(b));
        fprintf(out, "  %-36s %-20s %12s %6.1f%%\n", l->name,
                l->cls >= 0 && l->cls < r->nclasses ? r->classes[l->cls].name : "?", b,
                l->utilisation * 100);
    }
}

static json_t *to_json(const strata_sim_result_t *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema_version", json_integer(STRATA_JSON_SCHEMA_VERSION));
    json_object_set_new(o, "description", json_string(r->desc));
    json_object_set_new(o, "time_s", util_json_real(r->time));
    json_object_set_new(o, "time_alpha_beta_s", util_json_real(r->time_ab));
    json_object_set_new(o, "time_model_s",
                        r->time_model > 0 ? util_json_real(r->time_model) : json_null());
    if (r->model_caveat) json_object_set_new(o, "model_caveat", json_string(r->model_caveat));
    json_object_set_new(o, "size_B", json_real(r->bytes));
    json_object_set_new(o, "algbw_Bps", util_json_real(r->algbw));
    json_object_set_new(o, "busbw_Bps", util_json_real(r->busbw));
    json_object_set_new(o, "latency_share", util_json_real(r->latency_share));
    json_t *cls = json_array();
    for (int c = 0; c < r->nclasses; c++) {
        const strata_sim_class_t *k = &r->classes[c];
        json_array_append_new(
            cls, json_pack("{s:s,s:i,s:o,s:o,s:o,s:o}", "name", k->name, "tier", (int)k->tier,
                           "capacity_Bps", util_json_real(k->capacity), "moved_B",
                           json_real(k->bytes), "utilisation", util_json_real(k->utilisation),
                           "bound_share", util_json_real(k->bound_share)));
    }
    json_object_set_new(o, "classes", cls);
    json_t *links = json_array();
    for (int i = 0; i < r->nlinks; i++) {
        const strata_sim_link_load_t *l = &r->links[i];
        json_array_append_new(links, json_pack("{s:s,s:i,s:i,s:s,s:o,s:o}", "name", l->name, "link",
                                               (int)l->link, "channel", (int)l->chan, "class",
                                               l->cls < r->nclasses ? r->classes[l->cls].name : "?",
                                               "moved_B", json_real(l->bytes), "utilisation",
                                               util_json_real(l->utilisation)));
    }
    json_object_set_new(o, "top_links", links);
    json_t *jobs = json_array();
    for (uint32_t j = 0; j < r->njobs; j++)
        json_array_append_new(jobs, util_json_real(r->job_time[j]));
    json_object_set_new(o, "collective_times_s", jobs);
    json_object_set_new(o, "phases", json_integer((json_int_t)r->phases));
    json_object_set_new(o, "phases_simulated", json_integer((json_int_t)r->phases_simulated));
    json_object_set_new(o, "phases_certified", json_integer((json_int_t)r->phases_certified));
    json_object_set_new(o, "phases_generated", json_integer((json_int_t)r->phases_generated));
    if (r->phases_folded) { /* present only when some phase was folded */
        json_object_set_new(o, "phases_folded", json_integer((json_int_t)r->phases_folded));
        json_object_set_new(o, "fold_flows", json_integer((json_int_t)r->fold_flows));
        json_object_set_new(o, "fold_flows_run", json_integer((json_int_t)r->fold_timed));
    }
    if (r->phases_rot) { /* present only when the channel rotation was used */
        json_object_set_new(o, "phases_rotated", json_integer((json_int_t)r->phases_rot));
        json_object_set_new(o, "rotation_order", json_integer((json_int_t)r->rot_order));
        json_object_set_new(o, "phases_quotient", json_integer((json_int_t)r->phases_quot));
        json_object_set_new(o, "phases_quotient_map", json_integer((json_int_t)r->phases_map));
    }
    if (r->phases_relabeled) /* present only when some phase was relabelled */
        json_object_set_new(o, "phases_relabeled", json_integer((json_int_t)r->phases_relabeled));
    json_object_set_new(o, "flows", json_integer((json_int_t)r->flows));
    json_object_set_new(o, "events", json_integer((json_int_t)r->events));
    return o;
}

strata_status_t strata_sim_result_print(const strata_sim_result_t *res, bool json, FILE *out,
                                        strata_error_t *err)
{
    if (!json) {
        print_text(res, out);
        return ferror(out) ? strata_error_set(err, STRATA_ERR_IO, "write error") : STRATA_OK;
    }
    json_t *o = to_json(res);
    if (!o) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    int rc = util_json_dump(o, out);
    json_decref(o);
    return rc ? strata_error_set(err, STRATA_ERR_IO, "write error") : STRATA_OK;
}
