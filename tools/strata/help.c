/*
 * help.c — what the command says about itself: `strata help [CMD]`, the
 * nearest command or option to a mistyped one, the list of commands and of
 * a command's options (for bash completion and the README check), and man
 * pages generated from the very text `--help` prints.
 *
 * Every command's help lives in one place, its usage() printed by
 * `strata CMD --help`. This file captures that text (the command runs with
 * --help while stdout points at a temporary file) and derives the rest from
 * it: the options a mistyped one is compared with are the words of the help
 * that start with '-', and `strata help --man DIR` (run by the build) wraps
 * the same text in troff. So help, suggestions, completion and man pages
 * cannot drift apart.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ==== Edit distance ==== */

/* Edit distance of a and b: insert, delete, substitute or swap two
 * neighbours, 1 each (optimal string alignment: "benhc" is 1 from
 * "bench"), on words up to 63 bytes; longer words count as far. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b), d[64][64];
    if (n > 63 || m > 63) return (size_t)-1;
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *cli_nearest(const char *w, const char *const *words, size_t n)
{
    /* Near: at most a third of the word's letters wrong (at least one), so
     * "--jsno" finds "--json" but "-x" does not find every short flag. */
    size_t len = strlen(w), limit = len / 3 > 1 ? len / 3 : 1, best = (size_t)-1;
    const char *pick = NULL;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(w, words[i]);
        if (d < best) best = d, pick = words[i];
    }
    return best <= limit && best > 0 ? pick : NULL;
}

/* ==== A command's help text ==== */

const cli_command_t *cli_find(const char *name)
{
    for (const cli_command_t *c = cli_commands; c->name; c++)
        if (strcmp(c->name, name) == 0) return c;
    return NULL;
}

/* What `strata NAME --help` prints (NULL name: `strata --help`), as a
 * malloc'd string, or NULL. stdout points at a temporary file meanwhile. */
char *cli_help_text(const char *name)
{
    const cli_command_t *c = name ? cli_find(name) : NULL;
    if (name && !c) return NULL;
    FILE *tmp = tmpfile();
    if (!tmp) return NULL;
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    if (saved < 0 || dup2(fileno(tmp), STDOUT_FILENO) < 0) {
        if (saved >= 0) close(saved);
        fclose(tmp);
        return NULL;
    }
    if (c) {
        char *argv[] = {(char *)c->name, "--help", NULL};
        c->run(2, argv);
    } else {
        cli_usage_main(stdout);
    }
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    long len = ftell(tmp);
    char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
    rewind(tmp);
    if (text && fread(text, 1, (size_t)len, tmp) != (size_t)len) free(text), text = NULL;
    if (text) text[len] = '\0';
    fclose(tmp);
    return text;
}

/* The options named in a help text: words that start with '-' or '--'
 * after a space, '[', '|' or '(' (not the '-' inside "x-y" or a range
 * "1..-2"). Up to max, each once, pointers into buf (a copy of text). */
static size_t help_options(const char *text, char *buf, size_t cap, const char **opt, size_t max)
{
    size_t n = 0, len = strlen(text);
    if (len + 1 > cap) len = cap - 1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    for (size_t i = 0; i < len && n < max; i++) {
        char prev = i ? buf[i - 1] : ' ';
        if (buf[i] != '-' || !(prev == ' ' || prev == '[' || prev == '|' || prev == '(' ||
                               prev == '\n' || prev == '\0'))
            continue;
        size_t j = i + 1 + (buf[i + 1] == '-');
        if (!isalpha((unsigned char)buf[j])) continue;
        while (isalnum((unsigned char)buf[j]) || buf[j] == '-' || buf[j] == '_')
            j++;
        while (buf[j - 1] == '-')
            j--; /* "--op-" at a line's end */
        char end = buf[j];
        buf[j] = '\0';
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++)
            seen = strcmp(opt[k], buf + i) == 0;
        if (!seen) opt[n++] = buf + i;
        if (end == '\0') break;
        i = j; /* buf[j] is now '\0': the next word starts after it */
    }
    return n;
}

#define HELP_OPTS_MAX 256

int cli_unknown_option(const char *cmd, const char *opt)
{
    char *text = cli_help_text(cmd), word[64] = "";
    const char *near = NULL;
    snprintf(word, sizeof(word), "%s", opt);
    char *eq = strchr(word, '=');
    if (eq) *eq = '\0'; /* --minbytes=8: the name */
    if (text && strlen(word) > 2) {
        static char buf[65536];
        const char *opts[HELP_OPTS_MAX];
        size_t n = help_options(text, buf, sizeof(buf), opts, HELP_OPTS_MAX);
        near = cli_nearest(word, opts, n);
    }
    free(text);
    if (near) return cli_usage_error(cmd, "unknown option '%s' (did you mean '%s'?)", opt, near);
    return cli_usage_error(cmd, "unknown option '%s'", opt);
}

int cli_unknown_command(const char *name)
{
    const char *names[64];
    size_t n = 0;
    for (const cli_command_t *c = cli_commands; c->name && n < 62; c++)
        names[n++] = c->name;
    names[n++] = "help";
    names[n++] = "version";
    const char *near = cli_nearest(name, names, n);
    if (near)
        fprintf(stderr, "strata: unknown command '%s' (did you mean '%s'? see 'strata help')\n",
                name, near);
    else
        fprintf(stderr, "strata: unknown command '%s' (see 'strata help')\n", name);
    return CLI_USAGE;
}

/* ==== Man pages ==== */

/* troff of one line of help: a backslash is \e, a line that starts with
 * '.' or '\'' would be a request, so it starts with \& instead. */
static void man_line(FILE *out, const char *s, size_t len)
{
    if (len && (s[0] == '.' || s[0] == '\'')) fputs("\\&", out);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\')
            fputs("\\e", out);
        else if (s[i] == '-')
            fputs("\\-", out); /* a minus sign, so option names copy and search as typed */
        else
            fputc(s[i], out);
    }
    fputc('\n', out);
}

/* A man page: the summary as NAME, then the help text verbatim (no fill,
 * so its columns stay aligned), then SEE ALSO. */
static void man_page(FILE *out, const char *name, const char *summary, const char *text)
{
    char title[64];
    snprintf(title, sizeof(title), "%s%s", name ? "STRATA-" : "STRATA", name ? name : "");
    for (char *p = title; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    fprintf(out,
            ".\\\" Generated by 'strata help --man' from 'strata%s%s --help'; do not edit.\n"
            ".TH %s 1 \"\" \"strata %s\" \"strata manual\"\n.SH NAME\n",
            name ? " " : "", name ? name : "", title, strata_version());
    fprintf(out, "strata%s%s \\- ", name ? "\\-" : "", name ? name : "");
    man_line(out, summary, strlen(summary));
    fputs(".SH DESCRIPTION\n.nf\n", out);
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        man_line(out, p, len);
        p += len + (nl != NULL);
    }
    fputs(".fi\n.SH SEE ALSO\n", out);
    if (name)
        fputs(".BR strata (1)\n", out);
    else
        for (const cli_command_t *c = cli_commands; c->name; c++)
            fprintf(out, ".BR strata\\-%s (1)%s\n", c->name, c[1].name ? "," : "");
}

static int write_man(const char *dir, const char *name, const char *summary)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/strata%s%s.1", dir, name ? "-" : "", name ? name : "");
    char *text = cli_help_text(name);
    FILE *f = text ? fopen(path, "w") : NULL;
    if (!f) {
        fprintf(stderr, "strata help: cannot write '%s': %s\n", path,
                text ? strerror(errno) : "no help text");
        free(text);
        return CLI_FAIL;
    }
    man_page(f, name, summary, text);
    free(text);
    if (fclose(f) != 0) {
        fprintf(stderr, "strata help: cannot write '%s'\n", path);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int man_all(const char *dir)
{
    int rc = write_man(dir, NULL,
                       "model, simulate, run and measure the communication stack of "
                       "distributed AI training");
    for (const cli_command_t *c = cli_commands; c->name && rc == CLI_OK; c++)
        rc = write_man(dir, c->name, c->summary);
    return rc;
}

/* ==== strata help ==== */

static void help_usage(FILE *out)
{
    fprintf(out, "usage: strata help [COMMAND]\n"
                 "       strata help --commands | --options COMMAND | --man DIR\n\n"
                 "  COMMAND            the options of one command (= strata COMMAND --help)\n"
                 "  --commands         the commands, one per line\n"
                 "  --options COMMAND  the options a command's help names, one per line\n"
                 "  --man DIR          write the man pages strata.1 and strata-COMMAND.1\n"
                 "                     (the --help texts in troff) into DIR\n");
}

static int list_options(const char *name)
{
    char *text = cli_help_text(name);
    if (!text) return cli_unknown_command(name);
    static char buf[65536];
    const char *opts[HELP_OPTS_MAX];
    size_t n = help_options(text, buf, sizeof(buf), opts, HELP_OPTS_MAX);
    for (size_t i = 0; i < n; i++)
        printf("%s\n", opts[i]);
    free(text);
    return CLI_OK;
}

int cli_help(int argc, char **argv)
{
    if (argc < 2) {
        cli_usage_main(stdout);
        return CLI_OK;
    }
    const char *a = argv[1];
    if (argc > 3 || (argc == 3 && strcmp(a, "--options") && strcmp(a, "--man")))
        return cli_usage_error("help", "one COMMAND at a time");
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
        help_usage(stdout);
        return CLI_OK;
    }
    if (!strcmp(a, "--commands")) {
        for (const cli_command_t *c = cli_commands; c->name; c++)
            printf("%s\n", c->name);
        return CLI_OK;
    }
    if (!strcmp(a, "--options") || !strcmp(a, "--man")) {
        if (argc < 3) return cli_usage_error("help", "%s needs a value", a);
        return a[2] == 'o' ? list_options(argv[2]) : man_all(argv[2]);
    }
    if (a[0] == '-') return cli_unknown_option("help", a);
    if (!strcmp(a, "help")) {
        help_usage(stdout);
        return CLI_OK;
    }
    const cli_command_t *c = cli_find(a);
    if (!c) return cli_unknown_command(a);
    char *hargv[] = {(char *)c->name, "--help", NULL};
    return c->run(2, hargv);
}
