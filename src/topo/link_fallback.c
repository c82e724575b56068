/*
 * link_fallback.c — TEMPORARY, compiled only while the link module
 * (src/link) is absent from this tree: a catalog API that finds nothing, so
 * topo builds and its explicit-bandwidth paths work. Removed from the build
 * automatically once src/link exists (see CMakeLists.txt).
 */
#include "strata/link.h"

strata_status_t strata_link_catalog_load(const char *path, strata_link_catalog_t **cat_p,
                                         strata_error_t *err)
{
    (void)path;
    (void)cat_p;
    return strata_error_set(err, STRATA_ERR_UNSUPPORTED, "link catalog not built in this tree");
}
void strata_link_catalog_destroy(strata_link_catalog_t *cat) { (void)cat; }
size_t strata_link_catalog_count(const strata_link_catalog_t *cat) { return cat ? 0 : 0; }
const strata_link_t *strata_link_catalog_at(const strata_link_catalog_t *cat, size_t i)
{
    (void)cat;
    (void)i;
    return NULL;
}
const strata_link_t *strata_link_find(const strata_link_catalog_t *cat, const char *id)
{
    (void)cat;
    (void)id;
    return NULL;
}
