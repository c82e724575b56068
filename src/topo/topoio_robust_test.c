/*
 * topoio_robust_test.c — bad input and allocation failure never crash the
 * topology readers: every prefix of a preset and of the NCCL XML fixture is
 * rejected with a positioned error, and every allocation failure while
 * loading and building a cluster returns an error and leaks nothing (run
 * under asan-ubsan to see the leaks).
 */
#define _DEFAULT_SOURCE
#include "topoio_test.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Every proper prefix (of the first `ws` trimmed) must fail with a line. */
static void prefixes(const char *path, bool xml)
{
    size_t len;
    char *text = slurp(path, &len);
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
        len--;
    int tried = 0;
    for (size_t n = 0; n < len; n += 1 + n % 5, tried++) {
        char save = text[n];
        text[n] = '\0';
        topoio_cluster_t *c = NULL;
        strata_error_t err;
        strata_status_t st = xml ? topoio_nccl_xml_load_text(text, "p", cat, &c, &err)
                                 : topoio_load_json_text(text, "p", cat, &c, &err);
        text[n] = save;
        if (st == STRATA_OK) fail_msg("%s: prefix of %zu bytes accepted", path, n);
        assert_null(c);
        /* The empty document has no line; every other error points in. */
        if (n > 0 && err.line <= 0)
            fail_msg("%s: prefix %zu: error without a line: %s", path, n, err.msg);
    }
    assert_true(tried > 100);
    free(text);
}

static void test_truncated_inputs(void **state)
{
    (void)state;
    prefixes(STRATA_SOURCE_DIR "/data/presets/dgx-h100.json", false);
    prefixes(STRATA_SOURCE_DIR "/data/presets/dgx-1v.json", false);
    prefixes(STRATA_SOURCE_DIR "/tests/data/nccl_h200.xml", true);
}

/* Fail the n-th allocation for n = 0, 1, ... until the whole job succeeds. */
static void oom_loop(const char *spec)
{
    int failures = 0;
    for (long n = 0; n < 100000; n++) {
        strata_topo_t *t = NULL;
        strata_error_t err;
        util_alloc_fail_after(n);
        strata_status_t st = strata_topo_load_spec(spec, cat, &t, &err);
        util_alloc_fail_after(-1);
        if (st == STRATA_OK) {
            assert_true(strata_topo_endpoint_count(t) > 0);
            strata_topo_destroy(t);
            assert_true(failures > 10); /* the loop did exercise failures */
            return;
        }
        assert_null(t);
        failures++;
    }
    fail_msg("%s never succeeded", spec);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    oom_loop("dgx-h100:2");
    oom_loop("tpu-v4");
    oom_loop(STRATA_SOURCE_DIR "/tests/data/nccl_h200.xml");
    setenv("STRATA_HWLOC_SYNTHETIC", "Package:1 Core:2 PU:1", 1);
    oom_loop("local");
    unsetenv("STRATA_HWLOC_SYNTHETIC");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated_inputs),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
