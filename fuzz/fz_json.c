/*
 * fz_json.c — cluster files (JSON): parse and validate; when the cluster is
 * small, instantiate it as a topology; export it back to JSON and print it.
 * The export of a loaded file must load again (a round trip).
 */
#define _GNU_SOURCE /* open_memstream */
#include "fuzz.h"
#include "topoio.h"

/* Small enough to build in milliseconds (sizes legal beyond this are
 * exercised by the topology tests, not here). */
static int small_cluster(const topoio_cluster_t *c)
{
    long total = 0;
    for (size_t i = 0; i < c->groups.n; i++)
        total += c->groups.v[i].count;
    return c->servers <= 64 && total <= 4096 && c->servers * total <= 20000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const strata_link_catalog_t *cat = fuzz_catalog();
    char *text = fuzz_cstr(data, size);
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    if (topoio_load_json_text(text, "f.json", cat, &c, &err) == STRATA_OK) {
        if (small_cluster(c)) {
            strata_topo_t *t = NULL;
            if (topoio_instantiate(c, cat, &t, &err) == STRATA_OK) strata_topo_destroy(t);
        }
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (f == NULL) abort();
        strata_status_t st = topoio_export_json(c, f, &err);
        fclose(f);
        topoio_cluster_t *again = NULL;
        if (st == STRATA_OK &&
            topoio_load_json_text(out, "export.json", cat, &again, &err) != STRATA_OK)
            fuzz_fail("the export of a loaded cluster file does not load: %s\n%s", err.msg, out);
        topoio_cluster_destroy(again);
        free(out);
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            topoio_print(c, null);
            fclose(null);
        }
        topoio_cluster_destroy(c);
    }
    free(text);
    return 0;
}
