/* commands.c — the subcommand table, the dispatcher (fs_cli_main) and the
 * plumbing subcommands share (option parsing is in options.c). */
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

#include "report/progress.h"
#include "util/error.h"
#include "util/strutil.h"

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

static void print_usage(FILE *out)
{
  fprintf(out,
          "Usage: fabricsim <command> [options]\n"
          "\n"
          "A discrete-event simulator of GPU interconnects and training steps.\n"
          "\n"
          "Commands:\n");
  for (const FsCommand *c = fs_commands; c->name != NULL; c++)
    fprintf(out, "  %-10s %s\n", c->name, c->summary);
  fprintf(out,
          "  %-10s %s\n"
          "\n"
          "Options:\n"
          "  -h, --help     show this help\n"
          "  --version      print the version\n"
          "\n"
          "Run 'fabricsim <command> --help' for a command's options and an example.\n",
          "help", "show this list, or 'help <command>' for one command");
}

static char *command_names(void)
{
  GString *s = g_string_new(NULL);
  for (const FsCommand *c = fs_commands; c->name != NULL; c++)
    g_string_append_printf(s, "%s%s", s->len ? ", " : "", c->name);
  g_string_append(s, ", help");
  return g_string_free(s, FALSE);
}

static int unknown_command(const char *name)
{
  g_autofree char *names = command_names();
  g_autofree char *shown = fs_escape_controls(name);
  fprintf(stderr, "fabricsim: unknown command '%s'; commands are: %s\n", shown, names);
  return 2;
}

static int run_help(int argc, char **argv)
{
  if (argc < 2) {
    print_usage(stdout);
    return 0;
  }
  const FsCommand *c = fs_command_find(argv[1]);
  if (c == NULL)
    return unknown_command(argv[1]);
  char *help_argv[] = {(char *)c->name, (char *)"--help", NULL};
  return c->run(2, help_argv);
}

int fs_cli_main(int argc, char **argv)
{
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
    return run_help(1, argv + 1);
  if (strcmp(name, "help") == 0)
    return run_help(argc - 1, argv + 1);
  if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
    printf("fabricsim %s\n", FS_VERSION);
    return 0;
  }
  if (name[0] == '-') {
    g_autofree char *shown = fs_escape_controls(name);
    fprintf(stderr, "fabricsim: unknown option '%s' (see 'fabricsim --help')\n", shown);
    return 2;
  }
  const FsCommand *c = fs_command_find(name);
  if (c == NULL)
    return unknown_command(name);
  return c->run(argc - 1, argv + 1);
}

const FsCommand *fs_command_find(const char *name)
{
  for (const FsCommand *c = fs_commands; c->name != NULL; c++)
    if (strcmp(c->name, name) == 0)
      return c;
  return NULL;
}

int fs_cli_fail(const char *cmd, GError *error)
{
  fs_progress_end_line();  /* the message on a line of its own, not after the progress line */
  if (g_error_matches(error, G_OPTION_ERROR, FS_USAGE_ERROR)) {
    int st = fs_cli_usage(cmd, "%s", error->message);
    g_error_free(error);
    return st;
  }
  int status = fs_error_exit_status(error);
  /* One line, whatever the arguments quoted in the message hold. */
  g_autofree char *shown = fs_escape_controls(error->message);
  fprintf(stderr, "fabricsim %s: %s\n", cmd, shown);
  g_error_free(error);
  return status;
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
