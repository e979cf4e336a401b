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

/* Runs `fabricsim ARGV...` (argv[0] is the program): dispatch to a
 * subcommand, `help [COMMAND]`, `--help`, `--version`.  Returns the exit
 * status.  Re-entrant: every subcommand restores its options and frees what
 * parsing allocated before it returns (fs_cli_options_begin), so the fuzz
 * driver (tests/fuzz/fuzz-cli.c) can call it once per input. */
int fs_cli_main(int argc, char **argv);

/* Shared plumbing for subcommands. */

/* The options of one GOptionEntry table, for the time one subcommand runs.
 * The first begin of a table remembers the value each entry's arg_data
 * holds (its default, e.g. `static gint opt_iters = 20;`); every begin
 * restores those values, and end frees what GOption allocated since
 * (strings, filenames, string arrays) and restores them again.  Tables with
 * callbacks keep no state here.  Use FS_CLI_OPTIONS(entries) as the first
 * line of the function that parses them: end then runs on every return. */
typedef struct {
  const GOptionEntry *entries;
} FsCliOptions;

FsCliOptions fs_cli_options_begin(const GOptionEntry *entries);
void fs_cli_options_end(FsCliOptions *opts);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(FsCliOptions, fs_cli_options_end)
#define FS_CLI_OPTIONS(entries) \
  g_auto(FsCliOptions) fs_cli_options_ G_GNUC_UNUSED = fs_cli_options_begin(entries)

/* fs_cli_options_parse's answer when the command goes on. */
#define FS_CLI_GO_ON (-1)

/* Parses options.  Returns FS_CLI_GO_ON, or the status the command must
 * exit with: 0 after printing the help (-h, --help, --help-all, -?) on
 * stdout, 2 after printing "fabricsim <cmd>: <message>" on stderr.  Help
 * is printed here rather than by GLib, which would exit() the process.
 * Use as
 *   int done = fs_cli_options_parse(ctx, &argc, &argv, "units");
 *   if (done != FS_CLI_GO_ON)
 *     return done; */
int fs_cli_options_parse(GOptionContext *ctx, int *argc, char ***argv, const char *cmd);

/* Prints error as one line on stderr ("fabricsim <cmd>: <message>", control
 * characters written as C escapes; a deadlock report keeps its one line
 * per stuck op; an FS_USAGE_ERROR as fs_cli_usage), frees it, and returns
 * its exit status (see fs_error_exit_status). */
int fs_cli_fail(const char *cmd, GError *error);

/* Prints a usage error (one line: control characters in the arguments are
 * written as C escapes) and returns 2. */
int fs_cli_usage(const char *cmd, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* The option entries most commands share, each worded once (a command whose
 * option means more, e.g. validate's --calibration, writes its own). */
#define FS_OPT_MODELS(var)                                                          \
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &(var),                                   \
   "Catalog folder (default: $FABRICSIM_MODELS or the installed models/)", "DIR"}
#define FS_OPT_CALIBRATION(var)                                                     \
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &(var),                              \
   "Lay a calibration file (fabricsim calibrate, the probes) over the catalog", "FILE"}
#define FS_OPT_DEFINE(var)                                                          \
  {"define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &(var),                             \
   "Override a topology parameter (repeatable)", "NAME=VALUE"}
#define FS_OPT_QUIET(var) \
  {"quiet", 'q', 0, G_OPTION_ARG_NONE, &(var), "No progress line on a terminal", NULL}

/* Fills *ropt from the NCCL-like routing flags shared by p2p and flows
 * (--p2p-level NAME or NULL, --p2p-disable, --ib-disable).  Returns 0, or
 * prints a usage error for an unknown level and returns 2. */
int fs_cli_route_options(const char *cmd, const char *p2p_level, gboolean p2p_disable,
                         gboolean ib_disable, FsRouteOptions *ropt);
