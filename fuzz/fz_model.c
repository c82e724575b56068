/*
 * fz_model.c — workload files (the format of the files in data/models): parse and
 * validate; a workload that loads must give finite, positive parameter
 * and FLOP counts, and its active parameters never exceed its total.
 */
#include "fuzz.h"
#include "plan.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    strata_workload_t w;
    strata_error_t err;
    if (plan_workload_parse_text(text, size, "f.json", &w, &err) == STRATA_OK) {
        double total = strata_workload_params(&w), active = strata_workload_active_params(&w);
        double flops = plan_model_flops(&w, 1);
        if (!(isfinite(total) && total > 0 && isfinite(flops) && flops > 0))
            fuzz_fail("a loaded workload has counts %g params, %g FLOPs", total, flops);
        if (active > total * (1 + 1e-12))
            fuzz_fail("active parameters %g exceed the total %g", active, total);
    }
    free(text);
    return 0;
}
