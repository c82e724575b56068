/*
 * cli.h — what every subcommand file of the strata command shares.
 *
 * Each subcommand lives in its own cmd_<name>.c and exposes one entry point
 * `int cmd_<name>(int argc, char **argv)` (argv[0] is the subcommand name),
 * returning the process exit code: 0 ok, 1 failure, 2 usage error.
 * Subcommands use only the public API (include/strata/).
 */
#ifndef STRATA_CLI_H
#define STRATA_CLI_H

#include "strata/strata.h"

#include <stdio.h>

#define CLI_OK    0
#define CLI_FAIL  1
#define CLI_USAGE 2

typedef struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} cli_command_t;

/* Print "strata NAME: message" and a hint to stderr; return CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) STRATA_PRINTF(2, 3);
/* Print "strata: <rendered error>" to stderr; return CLI_FAIL. */
int cli_fail(const strata_error_t *err);
/* strata run --hosts (run_hosts.c): start ranks on hosts HOST[:N],... through
 * rsh_cmd (default ssh); the first failing rank's exit code, or CLI_USAGE. */
int cli_run_hosts(const char *hosts, const char *rsh_cmd, const char *root, double grace,
                  char **prog, int nprog);
/* True if argv holds -h/--help before any "--". */
int cli_wants_help(int argc, char **argv);
/* Numeric flags (strata_parse_*: decimal only, ERANGE reported) within a
 * stated range; otherwise print one line naming the flag, the value and
 * the range, and return -1 (the caller exits CLI_USAGE). 0 ok. */
/* A size with K/M/G/T suffix, 0 <= size <= max bytes. */
int cli_parse_size(const char *cmd, const char *opt, const char *arg, double max, double *out);
/* The value of a size string (tools/strata/size.c, strata_parse_size):
 * 0 and *out written, -1 malformed, -2 out of range (nothing printed). */
int cli_size_value(const char *arg, double *out);
/* An integer, min <= v <= max. */
int cli_parse_int(const char *cmd, const char *opt, const char *arg, long min, long max, long *out);
/* A finite number, min <= v <= max. */
int cli_parse_double(const char *cmd, const char *opt, const char *arg, double min, double max,
                     double *out);

/* Largest collective size a command models or simulates: 2^50 B = 1 PiB,
 * far beyond any training step, and exact in a double (element counts stay
 * below 2^53). */
#define CLI_SIZE_MAX 1125899906842624.0

/* The command table, defined in main.c. */
extern const cli_command_t cli_commands[];
/* The command of this name, or NULL. */
const cli_command_t *cli_find(const char *name);
/* `strata --help`: the commands and what every command shares. */
void cli_usage_main(FILE *out);
/* `strata help ...` (argv[0] = "help"; help.c). */
int cli_help(int argc, char **argv);
/* What `strata NAME --help` prints (NULL: `strata --help`), malloc'd, or
 * NULL for an unknown command. */
char *cli_help_text(const char *name);
/* The word of words[0..n) nearest to w by edit distance when it is near
 * (at most a third of w's letters changed), else NULL. */
const char *cli_nearest(const char *w, const char *const *words, size_t n);
/* "strata CMD: unknown option 'X' (did you mean 'Y'?)", the nearest of the
 * options CMD's --help names; returns CLI_USAGE. */
int cli_unknown_option(const char *cmd, const char *opt);
/* The same for a command name, against the command table. */
int cli_unknown_command(const char *name);
/* Point stdout at path (-o FILE); CLI_FAIL after a message. */
int cli_redirect_stdout(const char *cmd, const char *path);

#define CLI_DECLARE(name) int cmd_##name(int argc, char **argv)
CLI_DECLARE(run);
CLI_DECLARE(bench);
CLI_DECLARE(probe);
CLI_DECLARE(wall);
CLI_DECLARE(fabric);

CLI_DECLARE(report);
CLI_DECLARE(links);
CLI_DECLARE(link);
CLI_DECLARE(topo);
CLI_DECLARE(path);
CLI_DECLARE(coherence);
CLI_DECLARE(coll);
CLI_DECLARE(sim);
CLI_DECLARE(plan);

#endif
