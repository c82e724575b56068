/*
 * cmd_run.c — `strata run -n N [--grace S] [--] PROGRAM ARGS…`: start N local
 * ranks of PROGRAM with the rendezvous environment (strata_launch); with
 * `--hosts h1:4,h2:4` ranks on several hosts through a remote shell
 * (run_hosts.c).
 *
 * Exit code: 0 when every rank succeeded, else the first failing rank's
 * code (128 + signal for a rank killed by a signal); 2 for usage errors.
 * The ranks die with strata run (PR_SET_PDEATHSIG, launch.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <string.h>

#define RUN_RANKS_MAX 64 /* strata_launch's limit: ranks of one host */

static void usage(FILE *out)
{
    fprintf(out, "usage: strata run -n N [--grace SECONDS] [--] PROGRAM [ARGS...]\n"
                 "       strata run --hosts HOST:N,HOST:N... [--rsh CMD] [--root HOST:PORT]\n"
                 "                  [--grace SECONDS] [--] PROGRAM [ARGS...]\n"
                 "       (N 1..64 in all, SECONDS 0..3600)\n\n"
                 "Fork N ranks of PROGRAM on this host with STRATA_RANK, STRATA_SIZE,\n"
                 "STRATA_LOCAL_RANK, STRATA_ROOT (a free loopback port) and STRATA_TOKEN set,\n"
                 "so that strata_comm_init_env() joins them (the token, 128 random bits, is\n"
                 "never sent: ranks prove they know it). SIGINT/SIGTERM/SIGHUP are\n"
                 "forwarded; when one rank fails the others get SIGTERM, then SIGKILL after\n"
                 "the grace period (default 2 s); if strata run itself dies, the ranks get\n"
                 "SIGKILL. Exits with the first failing rank's code.\n\n"
                 "--hosts: rank r runs on the host holding slot r (h1:4,h2:4: ranks 0-3 on h1,\n"
                 "4-7 on h2) as 'CMD HOST ...' (CMD: --rsh, default ssh; 'ip netns exec' runs\n"
                 "them in network namespaces). The token reaches each rank on its standard\n"
                 "input, never on a command line. STRATA_ROOT is --root, else the first host\n"
                 "on a port derived from the token. Ranks on one host share memory, ranks on\n"
                 "different hosts use TCP (docs/runtime.md).\n");
}

int cmd_run(int argc, char **argv)
{
    long n = 0;
    double grace = 2.0;
    const char *hosts = NULL, *rsh = NULL, *root = NULL;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return CLI_OK;
        }
        if ((strcmp(a, "-n") == 0 || strcmp(a, "--np") == 0) && i + 1 < argc) {
            if (cli_parse_int("run", a, argv[++i], 1, RUN_RANKS_MAX, &n)) return CLI_USAGE;
        } else if (strcmp(a, "--hosts") == 0 && i + 1 < argc) {
            hosts = argv[++i];
        } else if (strcmp(a, "--rsh") == 0 && i + 1 < argc) {
            rsh = argv[++i];
        } else if (strcmp(a, "--root") == 0 && i + 1 < argc) {
            root = argv[++i];
        } else if (strcmp(a, "--grace") == 0 && i + 1 < argc) {
            if (cli_parse_double("run", a, argv[++i], 0, 3600, &grace)) return CLI_USAGE;
        } else if (a[0] == '-') {
            return cli_unknown_option("run", a);
        } else {
            break;
        }
    }
    if (hosts && n > 0) return cli_usage_error("run", "-n and --hosts exclude each other");
    if (!hosts && (rsh || root)) return cli_usage_error("run", "--rsh and --root go with --hosts");
    if (hosts) {
        if (i >= argc) return cli_usage_error("run", "no program given");
        return cli_run_hosts(hosts, rsh, root, grace, argv + i, argc - i);
    }
    if (n < 1) return cli_usage_error("run", "-n N (number of ranks) or --hosts is required");
    if (n > 64) return cli_usage_error("run", "-n %ld: at most 64 local ranks", n);
    if (i >= argc) return cli_usage_error("run", "no program given");
    int code = 1;
    strata_error_t err = {0};
    if (strata_launch((int)n, argv + i, grace, &code, &err) != STRATA_OK) return cli_fail(&err);
    return code;
}
