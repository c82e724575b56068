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
/* True if argv holds -h/--help before any "--". */
int cli_wants_help(int argc, char **argv);
/* Parse a size with K/M/G suffix or report a usage error; 0 ok, -1 bad. */
int cli_parse_size(const char *cmd, const char *opt, const char *arg, double *out);
/* The value of a size string (tools/strata/size.c): 0 and *out written, or
 * -1 (nothing printed) when arg is not a finite non-negative size. */
int cli_size_value(const char *arg, double *out);
/* Parse a strictly positive integer (or >= min). 0 ok, -1 bad (message printed). */
int cli_parse_int(const char *cmd, const char *opt, const char *arg, long min, long *out);
/* Parse a finite double >= min. 0 ok, -1 bad (message printed). */
int cli_parse_double(const char *cmd, const char *opt, const char *arg, double min, double *out);

/* The command table, defined in main.c. */
extern const cli_command_t cli_commands[];

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
CLI_DECLARE(coll);
CLI_DECLARE(sim);
CLI_DECLARE(plan);

#endif
