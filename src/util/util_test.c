/*
 * util_test.c — status table, error rendering, arena, vectors, size parsing
 * JSON positions, and the progress bar on a terminal.
 */
#define _GNU_SOURCE
#include "test.h"
#include "util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

static void test_status_table(void **state)
{
    (void)state;
    assert_int_equal(STRATA_OK, 0);
    assert_true(STRATA_INPROGRESS > 0);
    assert_true(STRATA_ERR_TIMEOUT < 0);
    assert_string_equal(strata_status_str(STRATA_ERR_TIMEOUT), "timed out");
    assert_string_equal(strata_status_str((strata_status_t)-999), "unknown status");
}

static void test_error_render(void **state)
{
    (void)state;
    strata_error_t e;
    char buf[256];
    strata_error_set_at(&e, STRATA_ERR_PARSE, "a.json", 3, 7, "missing field \"%s\"", "lanes");
    assert_string_equal(strata_error_str(&e, buf, sizeof(buf)),
                        "a.json:3:7: missing field \"lanes\"");
    strata_error_set(&e, STRATA_ERR_INVALID, "bad %d", 5);
    assert_string_equal(strata_error_str(&e, buf, sizeof(buf)), "bad 5");
    assert_int_equal(strata_error_set(NULL, STRATA_ERR_IO, "x"), STRATA_ERR_IO);
}

static void test_arena_and_vec(void **state)
{
    (void)state;
    util_arena_t *a = util_arena_create(64);
    char *p = util_arena_alloc(a, 10);
    char *q = util_arena_alloc(a, 1000); /* larger than a chunk: own chunk */
    char *r = util_arena_alloc(a, 10);
    assert_non_null(p);
    assert_non_null(q);
    assert_non_null(r);
    assert_int_equal((uintptr_t)p % 16, 0);
    assert_int_equal(util_arena_used(a), 16 + 1008 + 16);
    memset(q, 1, 1000);
    util_arena_destroy(a);
    util_arena_destroy(NULL);

    UTIL_VEC(int) v = {0};
    for (int i = 0; i < 1000; i++)
        assert_int_equal(UTIL_VEC_PUSH(&v, i * 2), 0);
    assert_int_equal(v.n, 1000);
    assert_int_equal(v.v[999], 1998);
    UTIL_VEC_FREE(&v);
}

static void test_alloc_failure(void **state)
{
    (void)state;
    util_alloc_fail_after(1);
    void *a = util_malloc(8), *b = util_malloc(8);
    util_alloc_fail_after(-1);
    assert_non_null(a);
    assert_null(b);
    util_free(a);
}

static void test_parse_size(void **state)
{
    (void)state;
    double v;
    assert_int_equal(util_parse_size("8", &v), 0);
    assert_true(v == 8);
    assert_int_equal(util_parse_size("64K", &v), 0);
    assert_true(v == 65536);
    assert_int_equal(util_parse_size("1.5MiB", &v), 0);
    assert_true(v == 1.5 * 1048576);
    assert_int_equal(util_parse_size("8G", &v), 0);
    assert_true(v == 8589934592.0);
    assert_int_equal(util_parse_size("8X", &v), -1);
    assert_int_equal(util_parse_size("-1", &v), -1);
    assert_int_equal(util_parse_size("", &v), -1);
    /* hardening: decimal only, and no silent infinity or zero */
    assert_int_equal(util_parse_size("0x10", &v), -1); /* strtod would read 16 */
    assert_int_equal(util_parse_size("inf", &v), -1);
    assert_int_equal(util_parse_size("nan", &v), -1);
    assert_int_equal(util_parse_size(" 8", &v), -1);
    assert_int_equal(util_parse_size("1e306T", &v), -2); /* 1e306 x 2^40 > DBL_MAX (1.8e308) */
    assert_int_equal(util_parse_size("1e400", &v), -2);  /* ERANGE */
    assert_int_equal(util_parse_size("1e3K", &v), 0);
    assert_true(v == 1024000);
    v = -1;
    assert_int_equal(util_parse_size("8e", &v), -1); /* exponent without digits */
    assert_true(v == -1);                            /* untouched on error */
}

static void test_parse_numbers(void **state)
{
    (void)state;
    long l = 7;
    double d = 7;
    assert_int_equal(util_parse_long("-12", &l), 0);
    assert_int_equal(l, -12);
    assert_int_equal(util_parse_long("99999999999999999999999", &l), -2); /* > 2^63: ERANGE */
    assert_int_equal(util_parse_long("9223372036854775807", &l), 0);      /* 2^63 - 1 */
    assert_true(l == 9223372036854775807L);
    assert_int_equal(util_parse_long("0x10", &l), -1);
    assert_int_equal(util_parse_long(" 1", &l), -1);
    assert_int_equal(util_parse_long("1.0", &l), -1);
    assert_int_equal(util_parse_long("", &l), -1);
    assert_int_equal(util_parse_double("2.5e-3", &d), 0);
    assert_true(d == 0.0025);
    assert_int_equal(util_parse_double("1e308", &d), 0);
    assert_int_equal(util_parse_double("1e309", &d), -2);  /* overflow: ERANGE */
    assert_int_equal(util_parse_double("1e-400", &d), -2); /* underflow: ERANGE */
    assert_int_equal(util_parse_double("0x1p4", &d), -1);
    assert_int_equal(util_parse_double("infinity", &d), -1);
    assert_int_equal(util_parse_double("-nan", &d), -1);
    assert_int_equal(util_parse_double(".", &d), -1);
    assert_int_equal(util_parse_double(".5", &d), 0);
    assert_true(d == 0.5);
}

/* util_read_file: devices and FIFOs are refused at once (no endless read
 * of /dev/zero, no blocking open of a FIFO), and the cap holds whether the
 * size comes from fstat or from reading (/proc files report 0). */
static void test_read_file_bounds(void **state)
{
    (void)state;
    char *buf = NULL, dir[] = "/tmp/strata-util-XXXXXX", path[64];
    size_t len = 0;
    strata_error_t e;
    assert_int_equal(util_read_file("/dev/zero", 1024, &buf, &len, &e), STRATA_ERR_IO);
    assert_non_null(strstr(e.msg, "not a regular file"));
    assert_string_equal(e.file, "/dev/zero");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/fifo.json", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(util_read_file(path, 1024, &buf, &len, &e), STRATA_ERR_IO);
    unlink(path);
    /* 10 bytes against caps of 9 and 10 */
    snprintf(path, sizeof(path), "%s/ten", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("0123456789", f);
    fclose(f);
    assert_int_equal(util_read_file(path, 9, &buf, &len, &e), STRATA_ERR_RANGE);
    assert_non_null(strstr(e.msg, "larger than the 9 B input limit"));
    assert_int_equal(util_read_file(path, 10, &buf, &len, &e), STRATA_OK);
    assert_int_equal(len, 10);
    assert_string_equal(buf, "0123456789");
    util_free(buf);
    unlink(path);
    rmdir(dir);
    /* /proc/self/status: st_size 0, a few hundred bytes when read */
    assert_int_equal(util_read_file("/proc/self/status", 16, &buf, &len, &e), STRATA_ERR_RANGE);
    assert_int_equal(util_read_file("/proc/self/status", UTIL_FILE_MAX, &buf, &len, &e), STRATA_OK);
    assert_true(len > 16 && strncmp(buf, "Name:", 5) == 0);
    util_free(buf);
}

static void test_json_positions(void **state)
{
    (void)state;
    const char *text =
        "{\n  \"a\": 1,\n  \"list\": [ {\"lanes\": -4}, \"x\" ],\n  \"\\u00e9k\": true\n}\n";
    util_json_doc_t *d = NULL;
    strata_error_t e;
    assert_int_equal(util_json_load_text(text, strlen(text), "t.json", &d, &e), STRATA_OK);
    json_t *root = util_json_root(d);
    json_t *list = json_object_get(root, "list");
    json_t *item = json_array_get(list, 0);
    int line, col;
    util_json_pos(d, json_object_get(item, "lanes"), &line, &col);
    /* line 3: `  "list": [ {"lanes": -4}, "x" ],` — columns: `[` 11, `{` 13,
     * `-4` 23, `"x"` 28 */
    assert_int_equal(line, 3);
    assert_int_equal(col, 23);
    util_json_pos(d, json_array_get(list, 1), &line, &col);
    assert_int_equal(line, 3);
    assert_int_equal(col, 28);
    util_json_pos(d, json_object_get(root, "\xc3\xa9k"), &line, &col);
    assert_int_equal(line, 4); /* escaped key decoded and found */

    long n;
    assert_int_equal(util_json_req_int(d, item, "lanes", &n, &e), STRATA_OK);
    assert_int_equal(n, -4);
    const char *s;
    assert_int_equal(util_json_req_str(d, item, "lanes", &s, &e), STRATA_ERR_PARSE);
    char buf[256];
    assert_string_equal(strata_error_str(&e, buf, sizeof(buf)),
                        "t.json:3:23: field \"lanes\" must be a string, found a number");
    assert_int_equal(util_json_req_int(d, item, "width", &n, &e), STRATA_ERR_PARSE);
    assert_string_equal(strata_error_str(&e, buf, sizeof(buf)),
                        "t.json:3:13: missing field \"width\"");
    util_json_doc_destroy(d);
}

static void test_json_syntax_error(void **state)
{
    (void)state;
    const char *text = "{\n  \"a\": [1, 2,\n}\n";
    util_json_doc_t *d = NULL;
    strata_error_t e;
    assert_int_equal(util_json_load_text(text, strlen(text), "bad.json", &d, &e), STRATA_ERR_PARSE);
    assert_null(d);
    assert_string_equal(e.file, "bad.json");
    assert_int_equal(e.line, 3);
    const char *dup = "{\"a\": 1, \"a\": 2}";
    assert_int_equal(util_json_load_text(dup, strlen(dup), "dup.json", &d, &e), STRATA_ERR_PARSE);
    assert_non_null(strstr(e.msg, "duplicate"));

    /* The fuzzer's find: jansson took `1\0}` as the number 1 and the text
     * went on, so the position walker ran past the end. A NUL byte is
     * refused where it stands: line 2, after `  "a": 1` (8 columns) → 9. */
    const char nul[] = "{\n  \"a\": 1\0}\n";
    assert_int_equal(util_json_load_text(nul, sizeof(nul) - 1, "nul.json", &d, &e),
                     STRATA_ERR_PARSE);
    assert_null(d);
    assert_int_equal(e.line, 2);
    assert_int_equal(e.column, 9);
    assert_non_null(strstr(e.msg, "NUL byte"));
}

/* The progress bar on a terminal (a pseudo-terminal as stderr): each
 * redraw is "\rLABEL [bar] NN.N%" then an erase to the end of the line,
 * so a shorter label does not leave the longer one's tail on screen; end
 * erases the line. 5 of 10 done: 15 of 30 '#'; 7.5 of 10: (int)22.5 = 22. */
static void test_progress_tty(void **state)
{
    (void)state;
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(m >= 0);
    assert_int_equal(grantpt(m), 0);
    assert_int_equal(unlockpt(m), 0);
    int s = open(ptsname(m), O_RDWR | O_NOCTTY);
    assert_true(s >= 0);
    struct termios t;
    assert_int_equal(tcgetattr(s, &t), 0);
    cfmakeraw(&t); /* bytes as written, no output translation */
    assert_int_equal(tcsetattr(s, TCSANOW, &t), 0);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    fflush(stderr);
    dup2(s, STDERR_FILENO);
    setenv("STRATA_PROGRESS", "1", 1);
    util_progress_t p;
    util_progress_begin(&p, "system costs", 10);
    bool active = p.active;
    p.last_time = 0; /* the 0.1 s between redraws has passed */
    util_progress_update(&p, 5);
    p.label = "tcp", p.last_time = 0;
    util_progress_update(&p, 7.5);
    util_progress_update(&p, 9); /* within 0.1 s of the last: not drawn */
    util_progress_end(&p);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(s);
    /* A pseudo-terminal may hand the bytes over in more than one read
     * (CI caught one read returning only the first redraw): read until
     * the closed slave's end (EIO or 0), bounded by the buffer. */
    char got[256] = {0};
    size_t n = 0;
    while (n < sizeof(got) - 1) {
        ssize_t r = read(m, got + n, sizeof(got) - 1 - n);
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(m);
    assert_true(active);
    assert_true(n > 0);
    assert_string_equal(got, "\rsystem costs [###############...............]  50.0%\033[K"
                             "\rtcp [######################........]  75.0%\033[K"
                             "\r\033[K");
    /* not a terminal (a file): nothing drawn */
    FILE *f = tmpfile();
    assert_non_null(f);
    saved = dup(STDERR_FILENO);
    dup2(fileno(f), STDERR_FILENO);
    util_progress_begin(&p, "memory", 1);
    dup2(saved, STDERR_FILENO);
    close(saved);
    assert_false(p.active);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_table),     cmocka_unit_test(test_error_render),
        cmocka_unit_test(test_arena_and_vec),    cmocka_unit_test(test_alloc_failure),
        cmocka_unit_test(test_parse_size),       cmocka_unit_test(test_parse_numbers),
        cmocka_unit_test(test_json_positions),   cmocka_unit_test(test_json_syntax_error),
        cmocka_unit_test(test_read_file_bounds), cmocka_unit_test(test_progress_tty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
