/* commands.h — the table of fabricsim subcommands.
 *
 * Each subcommand lives in src/cli/cmd-<name>.c and exports one entry point
 * `int fs_cmd_<name>(int argc, char **argv)` that parses its own options
 * (argv[0] is the subcommand's name) and returns the process exit status:
 * 0 ok, 1 runtime failure, 2 bad input or usage.
 */
#pragma once

#include <glib.h>

#include "net/route.h"

typedef int (*FsCommandFn)(int argc, char **argv);

typedef struct {
  const char *name;
  const char *summary;  /* one line for `fabricsim help` */
  FsCommandFn run;
} FsCommand;

/* NULL-terminated, in the order `fabricsim help` lists them. */
extern const FsCommand fs_commands[];

const FsCommand *fs_command_find(const char *name);

/* Shared plumbing for subcommands. */

/* Parses options; on error prints "fabricsim <cmd>: <message>" and returns
 * FALSE (the caller returns 2). */
gboolean fs_cli_parse(GOptionContext *ctx, int *argc, char ***argv, const char *cmd);

/* Prints error as one line on stderr ("fabricsim <cmd>: <message>"), frees
 * it, and returns its exit status (see fs_error_exit_status). */
int fs_cli_fail(const char *cmd, GError *error);

/* Prints a usage error and returns 2. */
int fs_cli_usage(const char *cmd, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* Fills *ropt from the NCCL-like routing flags shared by p2p and flows
 * (--p2p-level NAME or NULL, --p2p-disable, --ib-disable).  Returns 0, or
 * prints a usage error for an unknown level and returns 2. */
int fs_cli_route_options(const char *cmd, const char *p2p_level, gboolean p2p_disable,
                         gboolean ib_disable, FsRouteOptions *ropt);
