/*
 * workload.c — workload files (data/models/NAME.json, docs/formats.md) and
 * the accelerator catalog (data/accelerators.json): parsing with
 * file:line:col errors, and the parameter counts the rest of plan uses.
 *
 * Every value goes through util_json's positioned getters, so a typo'd key,
 * a wrong type or an impossible shape (heads not dividing hidden, KV heads
 * not dividing heads, top-k above the expert count) is reported where it is.
 */
#define _DEFAULT_SOURCE /* DT_* in dirent.h is not needed; opendir is POSIX */
#include "plan.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* ==== Workloads ==== */

static strata_status_t dtype_bytes(const util_json_doc_t *d, const json_t *obj, const char *key,
                                   int *out, strata_error_t *err)
{
    const char *s = NULL;
    strata_status_t st = util_json_opt_str(d, obj, key, &s, err);
    if (st || !s) return st;
    static const struct {
        const char *n;
        int b;
    } t[] = {{"fp32", 4}, {"bf16", 2}, {"fp16", 2}, {"fp8", 1}};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (!strcmp(s, t[i].n)) return *out = t[i].b, STRATA_OK;
    return util_json_error(d, json_object_get(obj, key), err, STRATA_ERR_PARSE,
                           "unknown dtype \"%s\" (fp32, bf16, fp16, fp8)", s);
}

static strata_status_t positive(const util_json_doc_t *d, const json_t *obj, const char *key,
                                bool required, int *out, strata_error_t *err)
{
    long v = *out;
    strata_status_t st = required ? util_json_req_int(d, obj, key, &v, err)
                                  : util_json_opt_int(d, obj, key, &v, err);
    if (st) return st;
    if (v < (required ? 1 : 0) || v > 100000000)
        return util_json_error(d, json_object_get(obj, key), err, STRATA_ERR_PARSE,
                               "\"%s\" must be a positive count", key);
    *out = (int)v;
    return STRATA_OK;
}

static strata_status_t read_moe(const util_json_doc_t *d, const json_t *m, strata_workload_t *w,
                                strata_error_t *err)
{
    static const char *const keys[] = {"experts", "top_k", "shared_experts", "ffn_hidden", "first",
                                       "every",   NULL};
    strata_status_t st;
    if (!json_is_object(m))
        return util_json_error(d, m, err, STRATA_ERR_PARSE, "\"moe\" must be an object");
    w->moe_every = 1;
    if ((st = util_json_check_keys(d, m, keys, err)) ||
        (st = positive(d, m, "experts", true, &w->experts, err)) ||
        (st = positive(d, m, "top_k", true, &w->topk, err)) ||
        (st = positive(d, m, "shared_experts", false, &w->shared_experts, err)) ||
        (st = positive(d, m, "ffn_hidden", true, &w->moe_ffn, err)) ||
        (st = positive(d, m, "first", false, &w->moe_first, err)) ||
        (st = positive(d, m, "every", false, &w->moe_every, err)))
        return st;
    if (w->topk > w->experts)
        return util_json_error(d, json_object_get(m, "top_k"), err, STRATA_ERR_PARSE,
                               "\"top_k\" %d exceeds \"experts\" %d", w->topk, w->experts);
    if (w->moe_every < 1) w->moe_every = 1;
    return STRATA_OK;
}

static strata_status_t check_shape(const util_json_doc_t *d, const json_t *root,
                                   const strata_workload_t *w, strata_error_t *err)
{
    if (w->hidden % w->heads)
        return util_json_error(d, json_object_get(root, "heads"), err, STRATA_ERR_PARSE,
                               "\"heads\" %d does not divide \"hidden\" %d", w->heads, w->hidden);
    if (w->kv_heads < 1 || w->heads % w->kv_heads)
        return util_json_error(d, json_object_get(root, "kv_heads"), err, STRATA_ERR_PARSE,
                               "\"kv_heads\" %d does not divide \"heads\" %d", w->kv_heads,
                               w->heads);
    return STRATA_OK;
}

static strata_status_t read_workload(const util_json_doc_t *d, strata_workload_t *w,
                                     strata_error_t *err)
{
    static const char *const keys[] = {
        "format", "version",         "name",     "description", "source", "layers",
        "hidden", "heads",           "kv_heads", "ffn_hidden",  "gated",  "vocab",
        "seq",    "tied_embeddings", "dropout",  "dtype",       "moe",    NULL};
    static const char *const dkeys[] = {"weights", "grads", "optimizer", NULL};
    const json_t *root = util_json_root(d);
    const char *name = NULL, *desc = "", *src = NULL;
    strata_status_t st;
    memset(w, 0, sizeof(*w));
    w->weight_bytes = 2, w->grad_bytes = 4, w->optim_bytes = 4;
    if (!json_is_object(root))
        return util_json_error(d, root, err, STRATA_ERR_PARSE, "expected a model object");
    if ((st = util_json_check_keys(d, root, keys, err)) ||
        (st = util_json_req_str(d, root, "name", &name, err)) ||
        (st = util_json_opt_str(d, root, "description", &desc, err)) ||
        (st = util_json_req_str(d, root, "source", &src, err)) ||
        (st = positive(d, root, "layers", true, &w->layers, err)) ||
        (st = positive(d, root, "hidden", true, &w->hidden, err)) ||
        (st = positive(d, root, "heads", true, &w->heads, err)) ||
        (st = positive(d, root, "ffn_hidden", true, &w->ffn, err)) ||
        (st = positive(d, root, "vocab", true, &w->vocab, err)) ||
        (st = positive(d, root, "seq", true, &w->seq, err)))
        return st;
    w->kv_heads = w->heads;
    if ((st = positive(d, root, "kv_heads", false, &w->kv_heads, err)) ||
        (st = util_json_opt_bool(d, root, "gated", &w->gated, err)) ||
        (st = util_json_opt_bool(d, root, "tied_embeddings", &w->tied, err)) ||
        (st = util_json_opt_bool(d, root, "dropout", &w->dropout, err)) ||
        (st = check_shape(d, root, w, err)))
        return st;
    const json_t *dt = json_object_get(root, "dtype"), *moe = json_object_get(root, "moe");
    if (dt && ((st = util_json_check_keys(d, dt, dkeys, err)) ||
               (st = dtype_bytes(d, dt, "weights", &w->weight_bytes, err)) ||
               (st = dtype_bytes(d, dt, "grads", &w->grad_bytes, err)) ||
               (st = dtype_bytes(d, dt, "optimizer", &w->optim_bytes, err))))
        return st;
    if (moe && (st = read_moe(d, moe, w, err))) return st;
    snprintf(w->name, sizeof(w->name), "%s", name);
    snprintf(w->description, sizeof(w->description), "%s", desc);
    snprintf(w->source, sizeof(w->source), "%s", src);
    return STRATA_OK;
}

strata_status_t strata_workload_load(const char *name, strata_workload_t *w_p, strata_error_t *err)
{
    char path[1024];
    size_t n = strlen(name);
    if (n > 5 && !strcmp(name + n - 5, ".json"))
        snprintf(path, sizeof(path), "%s", name);
    else if (strchr(name, '/') || n == 0 || n > 200)
        return strata_error_set(err, STRATA_ERR_NOT_FOUND, "unknown model '%s'", name);
    else
        snprintf(path, sizeof(path), "%s/models/%s.json", strata_data_dir(), name);
    FILE *f = fopen(path, "r");
    if (!f) {
        char names[2048];
        return strata_error_set(err, STRATA_ERR_NOT_FOUND, "unknown model '%s' (models: %s)", name,
                                strata_workload_names(names, sizeof(names)));
    }
    fclose(f);
    util_json_doc_t *doc = NULL;
    strata_workload_t w;
    strata_status_t st = util_json_load_file(path, &doc, err);
    if (!st) st = read_workload(doc, &w, err);
    util_json_doc_destroy(doc);
    if (!st) *w_p = w;
    return st;
}

strata_status_t plan_workload_parse_text(const char *text, size_t len, const char *name,
                                         strata_workload_t *w_p, strata_error_t *err)
{
    util_json_doc_t *doc = NULL;
    strata_workload_t w;
    strata_status_t st = util_json_load_text(text, len, name, &doc, err);
    if (!st) st = read_workload(doc, &w, err);
    util_json_doc_destroy(doc);
    if (!st) *w_p = w;
    return st;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *strata_workload_names(char *buf, size_t len)
{
    char dir[1024], *names[256];
    size_t n = 0, used = 0;
    snprintf(dir, sizeof(dir), "%s/models", strata_data_dir());
    buf[0] = '\0';
    DIR *d = opendir(dir);
    if (!d) return buf;
    for (struct dirent *e; (e = readdir(d)) != NULL && n < 256;) {
        size_t l = strlen(e->d_name);
        if (l > 5 && !strcmp(e->d_name + l - 5, ".json") && (names[n] = util_strdup(e->d_name)))
            names[n++][l - 5] = '\0';
    }
    closedir(d);
    qsort(names, n, sizeof(names[0]), cmp_str);
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
        if (k > 0 && (size_t)k < len - used) used += (size_t)k;
        util_free(names[i]);
    }
    return buf;
}

bool strata_workload_is_moe_layer(const strata_workload_t *w, int layer)
{
    return w->experts > 0 && layer >= w->moe_first && (layer - w->moe_first) % w->moe_every == 0;
}

int plan_moe_layers(const strata_workload_t *w)
{
    int n = 0;
    for (int i = 0; i < w->layers; i++)
        n += strata_workload_is_moe_layer(w, i);
    return n;
}

/* Attention weights: Q and output h x h, K and V h x (kv width). */
double plan_attn_params(const strata_workload_t *w)
{
    double h = w->hidden, kv = h * w->kv_heads / w->heads;
    return 2 * h * h + 2 * h * kv;
}

double plan_ffn_params(const strata_workload_t *w, double ffn)
{
    return (w->gated ? 3.0 : 2.0) * w->hidden * ffn;
}

double plan_embed_params(const strata_workload_t *w)
{
    return (w->tied ? 1.0 : 2.0) * w->vocab * (double)w->hidden;
}

/* Norm weights are 2h per layer plus the final one: counted, small. */
double strata_workload_params(const strata_workload_t *w)
{
    int moe = plan_moe_layers(w), dense = w->layers - moe;
    double h = w->hidden, experts = w->experts + w->shared_experts;
    return w->layers * (plan_attn_params(w) + 2 * h) + dense * plan_ffn_params(w, w->ffn) +
           moe * (experts * plan_ffn_params(w, w->moe_ffn) + h * w->experts) +
           plan_embed_params(w) + h;
}

double strata_workload_active_params(const strata_workload_t *w)
{
    int moe = plan_moe_layers(w), dense = w->layers - moe;
    double h = w->hidden, active = w->topk + w->shared_experts;
    return w->layers * (plan_attn_params(w) + 2 * h) + dense * plan_ffn_params(w, w->ffn) +
           moe * (active * plan_ffn_params(w, w->moe_ffn) + h * w->experts) + plan_embed_params(w) +
           h;
}

/* ==== Accelerators ==== */

static strata_status_t opt_tflops(const util_json_doc_t *d, const json_t *t, const char *key,
                                  double *out, strata_error_t *err)
{
    const json_t *v = json_object_get(t, key);
    *out = 0;
    if (!v || json_is_null(v)) return STRATA_OK;
    if (!json_is_number(v) || json_number_value(v) <= 0)
        return util_json_error(d, v, err, STRATA_ERR_PARSE, "\"%s\" must be TFLOP/s > 0", key);
    *out = json_number_value(v) * 1e12;
    return STRATA_OK;
}

static strata_status_t read_tile(const util_json_doc_t *d, const json_t *a, strata_accel_t *x,
                                 strata_error_t *err)
{
    const json_t *t = json_object_get(a, "tile");
    if (!json_is_array(t) || json_array_size(t) != 2 || !json_is_integer(json_array_get(t, 0)) ||
        !json_is_integer(json_array_get(t, 1)) || json_integer_value(json_array_get(t, 0)) < 1 ||
        json_integer_value(json_array_get(t, 1)) < 1)
        return util_json_error(d, t ? t : a, err, STRATA_ERR_PARSE,
                               "\"tile\" must be [rows, columns] of positive integers");
    x->tile_m = (int)json_integer_value(json_array_get(t, 0));
    x->tile_n = (int)json_integer_value(json_array_get(t, 1));
    return STRATA_OK;
}

static strata_status_t read_accel(const util_json_doc_t *d, const json_t *a,
                                  const strata_link_catalog_t *cat, strata_accel_t *x,
                                  strata_error_t *err)
{
    static const char *const keys[] = {
        "id",   "name",     "memory",          "hbm_gbs", "hbm_gb",         "tflops", "units",
        "tile", "gemm_eff", "gemm_eff_source", "hbm_eff", "hbm_eff_source", "source", NULL};
    const char *id, *name, *mem = NULL, *src, *esrc;
    double gb, gbs = 0;
    json_t *tf;
    strata_status_t st;
    memset(x, 0, sizeof(*x));
    if ((st = util_json_check_keys(d, a, keys, err)) ||
        (st = util_json_req_str(d, a, "id", &id, err)) ||
        (st = util_json_req_str(d, a, "name", &name, err)) ||
        (st = util_json_req_str(d, a, "source", &src, err)) ||
        (st = util_json_req_str(d, a, "gemm_eff_source", &esrc, err)) ||
        (st = util_json_opt_str(d, a, "memory", &mem, err)) ||
        (st = util_json_opt_num(d, a, "hbm_gbs", &gbs, err)) ||
        (st = util_json_req_num(d, a, "hbm_gb", &gb, err)) ||
        (st = util_json_req_obj(d, a, "tflops", &tf, err)) ||
        (st = positive(d, a, "units", true, &x->units, err)) || (st = read_tile(d, a, x, err)) ||
        (st = opt_tflops(d, tf, "fp32", &x->fp32, err)) ||
        (st = opt_tflops(d, tf, "tf32", &x->tf32, err)) ||
        (st = opt_tflops(d, tf, "bf16", &x->bf16, err)) ||
        (st = opt_tflops(d, tf, "fp8", &x->fp8, err)))
        return st;
    if (x->bf16 <= 0)
        return util_json_error(d, tf, err, STRATA_ERR_PARSE, "\"bf16\" peak is required");
    const json_t *e = json_object_get(a, "gemm_eff");
    x->gemm_eff = 1;
    if (e && !json_is_null(e)) {
        if (!json_is_number(e) || json_number_value(e) <= 0 || json_number_value(e) > 1)
            return util_json_error(d, e, err, STRATA_ERR_PARSE, "\"gemm_eff\" must be in (0, 1]");
        x->gemm_eff = json_number_value(e);
    }
    if (mem) {
        const strata_link_t *l = cat ? strata_link_find(cat, mem) : NULL;
        if (!l)
            return util_json_error(d, json_object_get(a, "memory"), err, STRATA_ERR_PARSE,
                                   "unknown memory \"%s\" (an HBM id of data/links.json)", mem);
        gbs = l->device_bw_dir / 1e9;
    }
    if (gbs <= 0 || gb <= 0)
        return util_json_error(d, a, err, STRATA_ERR_PARSE,
                               "accelerator \"%s\" needs \"memory\" or \"hbm_gbs\", and \"hbm_gb\"",
                               id);
    x->hbm_bw = gbs * 1e9, x->hbm_bytes = gb * 1e9, x->hbm_eff = 1;
    const json_t *he = json_object_get(a, "hbm_eff");
    if (he) {
        if (!json_is_number(he) || json_number_value(he) <= 0 || json_number_value(he) > 1)
            return util_json_error(d, he, err, STRATA_ERR_PARSE, "\"hbm_eff\" must be in (0, 1]");
        if (!json_is_string(json_object_get(a, "hbm_eff_source")))
            return util_json_error(d, he, err, STRATA_ERR_PARSE,
                                   "\"hbm_eff\" needs \"hbm_eff_source\" naming the measurement");
        x->hbm_eff = json_number_value(he);
    }
    snprintf(x->id, sizeof(x->id), "%s", id);
    snprintf(x->name, sizeof(x->name), "%s", name);
    snprintf(x->memory, sizeof(x->memory), "%s", mem ? mem : "");
    return STRATA_OK;
}

/* Find the accelerator whose `field` ("id" or "memory") equals want. */
static strata_status_t accel_find(const char *path, const char *field, const char *want,
                                  strata_accel_t *a_p, strata_error_t *err)
{
    char def[1024];
    if (!path) snprintf(def, sizeof(def), "%s/accelerators.json", strata_data_dir()), path = def;
    util_json_doc_t *doc = NULL;
    strata_link_catalog_t *cat = NULL;
    json_t *arr;
    strata_status_t st = util_json_load_file(path, &doc, err);
    if (!st) st = strata_link_catalog_load(NULL, &cat, err);
    if (!st) st = util_json_req_arr(doc, util_json_root(doc), "accelerators", &arr, err);
    bool found = false;
    for (size_t i = 0; !st && !found && i < json_array_size(arr); i++) {
        strata_accel_t x;
        st = read_accel(doc, json_array_get(arr, i), cat, &x, err);
        const char *v = !strcmp(field, "id") ? x.id : x.memory;
        if (!st && !strcmp(v, want)) *a_p = x, found = true;
    }
    util_json_doc_destroy(doc);
    strata_link_catalog_destroy(cat);
    if (!st && !found)
        st = strata_error_set(err, STRATA_ERR_NOT_FOUND, "no accelerator with %s '%s' in %s", field,
                              want, path);
    return st;
}

strata_status_t strata_accel_load(const char *path, const char *id, strata_accel_t *a_p,
                                  strata_error_t *err)
{
    return accel_find(path, "id", id, a_p, err);
}

strata_status_t strata_accel_for_memory(const char *path, const char *memory, strata_accel_t *a_p,
                                        strata_error_t *err)
{
    return accel_find(path, "memory", memory, a_p, err);
}
