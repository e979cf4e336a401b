/* interrupt.c — the stop request.  See interrupt.h. */
#include "util/interrupt.h"

#include <signal.h>

/* Set from a signal handler, read by every long loop. */
static volatile sig_atomic_t requested;

void fs_interrupt_request(void) { requested = 1; }
gboolean fs_interrupt_requested(void) { return requested != 0; }
void fs_interrupt_clear(void) { requested = 0; }
