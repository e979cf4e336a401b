/* interrupt.h — the process's stop request (SIGINT, SIGTERM).
 *
 * The command's signal handler calls fs_interrupt_request (async-signal-
 * safe: it only sets a volatile sig_atomic_t).  Whatever runs long polls
 * fs_interrupt_requested: the simulator's run loops before each event
 * (core/sim.h, whose fs_sim_*_interrupt functions are these), and the
 * atomic writer between the chunks of a file (strutil.h), which then
 * removes its temporary file and writes nothing.  The request stays until
 * fs_interrupt_clear (tests; a command never clears it).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Asks every long loop to stop.  Async-signal-safe. */
void fs_interrupt_request(void);
/* Whether a stop was requested (and not cleared).  Any thread. */
gboolean fs_interrupt_requested(void);
/* Forgets the request. */
void fs_interrupt_clear(void);

G_END_DECLS
