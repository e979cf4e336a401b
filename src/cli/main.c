/* main.c — the fabricsim process: C locale, stop signals, then fs_cli_main (commands.c).
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
  /* First of all: until the handler is in place a SIGINT kills the process
   * without a word (exit 130, nothing on stderr).  A signal that arrives
   * before any simulation runs is kept, and the first run loop stops. */
  catch_stop_signals();
  /* Numbers are printed and parsed the same way everywhere. */
  setlocale(LC_ALL, "C");
  return fs_cli_main(argc, argv);
}
