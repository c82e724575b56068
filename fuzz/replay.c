/*
 * replay.c — the main() a fuzz target gets outside libFuzzer: it runs
 * LLVMFuzzerTestOneInput once on every regular file named on the command
 * line or found (not recursively) in a directory named there, in name
 * order, and prints how many it ran. A directory with no file is an error:
 * a corpus that is missing tests nothing.
 *
 * A crash or sanitizer report in the target ends the process, which CTest
 * reports as the failure of fuzz_replay_<name>; the input is printed first
 * so the failing file is known.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Run the target on the file at path; -1 if it cannot be read. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *bigger = realloc(buf, cap *= 2);
            if (bigger == NULL) free(buf);
            buf = bigger;
        }
    }
    int bad = ferror(f) || buf == NULL;
    fclose(f);
    if (bad) {
        free(buf);
        fprintf(stderr, "replay: cannot read %s\n", path);
        return -1;
    }
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int is_file(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

/* Replay every file of directory dir; the count run, or -1. */
static long replay_dir(const char *dir)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, is_file, alphasort);
    if (n < 0) {
        fprintf(stderr, "replay: cannot list %s\n", dir);
        return -1;
    }
    long ran = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
        if (ran >= 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
            ran = replay_file(path) == 0 ? ran + 1 : -1;
        free(ents[i]);
    }
    free(ents);
    return ran;
}

int main(int argc, char **argv)
{
    long total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        long ran = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) ? replay_dir(argv[i])
                                                                  : replay_file(argv[i]) + 1;
        if (ran <= 0) {
            fprintf(stderr, "replay: nothing replayed from %s\n", argv[i]);
            return 1;
        }
        total += ran;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
        return 2;
    }
    printf("replay: %ld inputs, no crash\n", total);
    return 0;
}
