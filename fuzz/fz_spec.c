/*
 * fz_spec.c — cluster spec strings (`dgx-h100:4,nics=4`, builders such as
 * `fattree:...`, presets with options): describe (parse only, any numbers),
 * and build the topology when every number is small, so one input cannot
 * legally ask for a million-GPU cluster and time out.
 */
#include <ctype.h>

#include "fuzz.h"
#include "topoio.h"

/* 1 when no digit run is longer than two digits, there is no exponent and
 * the numbers' product is at most 2^18: every count in the spec is then
 * below 100 and a builder whose size is their product (torus:AxBxC) stays
 * near 262,144 devices. (torus:99x99x99, 970,299 devices, takes 10.7 s
 * under ASan: the -timeout.) */
static int small_numbers(const char *s)
{
    int run = 0, num = 0;
    double product = 1;
    for (const char *p = s;; p++) {
        if (isdigit((unsigned char)*p)) {
            run++, num = num * 10 + (*p - '0');
        } else {
            if (run > 0) product *= num > 0 ? num : 1;
            run = num = 0;
        }
        if (!*p) break;
        if (run > 2 || *p == 'e' || *p == 'E') return 0;
    }
    return product <= 262144;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 200) return 0;
    const strata_link_catalog_t *cat = fuzz_catalog();
    char *s = fuzz_cstr(data, size);
    /* file names and the local machine are other targets' inputs */
    if (strstr(s, ".json") || strstr(s, ".xml") || strstr(s, "local")) {
        free(s);
        return 0;
    }
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    if (topoio_describe(s, cat, &c, &err) == STRATA_OK) topoio_cluster_destroy(c);
    if (small_numbers(s)) {
        strata_topo_t *t = NULL;
        if (strata_topo_load_spec(s, cat, &t, &err) == STRATA_OK) strata_topo_destroy(t);
    }
    free(s);
    return 0;
}
