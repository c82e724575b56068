/*
 * fz_hwloc.c — hwloc XML exports (STRATA_HWLOC_XML) through the
 * crash-isolating reader: the input is written to a per-process file and
 * topoio_hwloc_load parses it in a child process, so a libhwloc crash
 * (hwloc 2.9 has some: corpus/hwloc/crash-hwloc-2.9.xml) is an error here,
 * not a finding. What is fuzzed is strata's side: the child's description,
 * its round trip as a cluster file, instantiation and export. Invariant:
 * a description that loads has exactly one CPU group named "cpu" (the
 * importer always adds it) and instantiates.
 */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#include "fuzz.h"
#include "topoio.h"

static const char *input_path(void)
{
    static char path[64];
    if (path[0] == 0) {
        snprintf(path, sizeof(path), "/tmp/strata-fz-hwloc-%ld.xml", (long)getpid());
        setenv("STRATA_HWLOC_XML", path, 1);
        setenv("STRATA_SYSFS_NET", "/nonexistent", 1); /* no host NIC speeds */
        setenv("STRATA_LOG", "error", 1);
    }
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const strata_link_catalog_t *cat = fuzz_catalog();
    const char *path = input_path();
    FILE *f = fopen(path, "wb");
    if (f == NULL) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    if (topoio_hwloc_load(cat, &c, &err) == STRATA_OK) {
        long cpu = topoio_find_group(c, "cpu");
        if (cpu < 0 || c->groups.v[cpu].count != 1) fuzz_fail("no single cpu group");
        strata_topo_t *t = NULL;
        if (topoio_instantiate(c, cat, &t, &err) != STRATA_OK)
            fuzz_fail("a loaded host description does not build: %s", err.msg);
        strata_topo_destroy(t);
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            topoio_export_json(c, null, &err);
            fclose(null);
        }
        topoio_cluster_destroy(c);
    }
    unlink(path);
    return 0;
}
