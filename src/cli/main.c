/* main.c — `fabricsim <subcommand> [options]`: dispatch, help, version.
 *
 * Exit status: 0 ok, 1 runtime failure, 2 bad input or usage, 130 when
 * interrupted.  Errors go to stderr, one line each.
 *
 * Ctrl-C (SIGINT) asks the simulation to stop at its next event boundary
 * (fs_sim_request_interrupt): the command reports where it stopped, writes
 * no partial output and exits 130.  A second Ctrl-C kills the process at
 * once (the handler is reset after the first).  SIGTERM is handled the
 * same way: it is what mpirun sends every rank when the user presses
 * Ctrl-C on it, and what batch schedulers send before a kill.
 */
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "core/sim.h"

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
  fprintf(stderr, "fabricsim: unknown command '%s'; commands are: %s\n", name, names);
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

static void on_stop_signal(int sig)
{
  (void)sig;
  fs_sim_request_interrupt();
}

static void catch_stop_signals(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int main(int argc, char **argv)
{
  /* Numbers are printed and parsed the same way everywhere. */
  setlocale(LC_ALL, "C");

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
    fprintf(stderr, "fabricsim: unknown option '%s' (see 'fabricsim --help')\n", name);
    return 2;
  }
  const FsCommand *c = fs_command_find(name);
  if (c == NULL)
    return unknown_command(name);
  catch_stop_signals();
  return c->run(argc - 1, argv + 1);
}
