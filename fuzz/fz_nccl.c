/*
 * fz_nccl.c — NCCL topology XML (NCCL_TOPO_DUMP_FILE format): parse into a
 * cluster; when small, instantiate it; export it as a cluster file.
 */
#include "fuzz.h"
#include "topoio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const strata_link_catalog_t *cat = fuzz_catalog();
    char *text = fuzz_cstr(data, size);
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    if (topoio_nccl_xml_load_text(text, "f.xml", cat, &c, &err) == STRATA_OK) {
        long total = 0;
        for (size_t i = 0; i < c->groups.n; i++)
            total += c->groups.v[i].count;
        if (total <= 4096) {
            strata_topo_t *t = NULL;
            if (topoio_instantiate(c, cat, &t, &err) == STRATA_OK) strata_topo_destroy(t);
        }
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            topoio_export_json(c, null, &err);
            fclose(null);
        }
        topoio_cluster_destroy(c);
    }
    free(text);
    return 0;
}
