/* commands.c — the subcommand table and the plumbing subcommands share. */
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

#include "util/error.h"

/* Declarations of every fs_cmd_<name>, then the table, from one list. */
#define FS_CMD(name, summary) int fs_cmd_##name(int argc, char **argv);
#include "cli/command-table.h"
#undef FS_CMD

const FsCommand fs_commands[] = {
#define FS_CMD(name, summary) {#name, summary, fs_cmd_##name},
#include "cli/command-table.h"
#undef FS_CMD
  {NULL, NULL, NULL},
};

const FsCommand *fs_command_find(const char *name)
{
  for (const FsCommand *c = fs_commands; c->name != NULL; c++)
    if (strcmp(c->name, name) == 0)
      return c;
  return NULL;
}

gboolean fs_cli_parse(GOptionContext *ctx, int *argc, char ***argv, const char *cmd)
{
  g_autoptr(GError) error = NULL;
  if (g_option_context_parse(ctx, argc, argv, &error))
    return TRUE;
  fprintf(stderr, "fabricsim %s: %s (see 'fabricsim %s --help')\n", cmd, error->message, cmd);
  return FALSE;
}

int fs_cli_fail(const char *cmd, GError *error)
{
  int status = fs_error_exit_status(error);
  fprintf(stderr, "fabricsim %s: %s\n", cmd, error->message);
  g_error_free(error);
  return status;
}

int fs_cli_usage(const char *cmd, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  fprintf(stderr, "fabricsim %s: %s (see 'fabricsim %s --help')\n", cmd, msg, cmd);
  return 2;
}

int fs_cli_route_options(const char *cmd, const char *p2p_level, gboolean p2p_disable,
                         gboolean ib_disable, FsRouteOptions *ropt)
{
  fs_route_options_init(ropt);
  ropt->p2p_disable = p2p_disable;
  ropt->ib_disable = ib_disable;
  if (p2p_level != NULL && !fs_route_p2p_level_from_name(p2p_level, &ropt->p2p_level))
    return fs_cli_usage(cmd, "unknown --p2p-level \"%s\"; expected LOC, NVL, PIX, PXB, PHB, "
                        "NODE or SYS", p2p_level);
  return 0;
}
