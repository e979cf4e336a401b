/* sim.h — the simulation clock over an event queue.
 *
 * FsSim owns an FsEventQueue and the current time.  Callbacks scheduled with
 * fs_sim_at / fs_sim_after run in (time, sequence) order; inside a callback
 * fs_sim_now() is the event's time.  Scheduling an event before now is a
 * broken invariant: the run stops with g_error() naming the caller's
 * file:line (the FS_SIM_AT macro passes them).
 *
 * The simulator knows nothing of networks or GPUs.  It also counts the
 * events it ran and enforces an event budget (a resource guard: when
 * exceeded, fs_sim_run* stop and return FALSE with FS_RUNTIME_ERROR_LIMIT).
 * A new simulator's budget is FS_SIM_MAX_EVENTS, or $FABRICSIM_MAX_EVENTS
 * when that is a positive integer (0 or "unlimited" lifts it).
 *
 * Interrupts: fs_sim_request_interrupt (async-signal-safe: it only sets a
 * volatile sig_atomic_t; the command's SIGINT handler calls it) makes every
 * run loop, in every thread, return FALSE before its next event with
 * FS_RUNTIME_ERROR_INTERRUPTED ("interrupted at simulated time T after N
 * events; partial results not written"), the event left pending.  The
 * request stays until fs_sim_clear_interrupt.
 */
#pragma once

#include <glib.h>

#include "core/eventq.h"

G_BEGIN_DECLS

typedef struct FsSim FsSim;

FsSim *fs_sim_new(void);
void fs_sim_free(FsSim *sim);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsSim, fs_sim_free)

FsTime fs_sim_now(const FsSim *sim);

/* Schedules fn(ctx, arg) at absolute time t (>= now).  Use the macros. */
FsEventId fs_sim_at_loc(FsSim *sim, FsTime t, FsEventFn fn, void *ctx, uint64_t arg,
                        const char *file, int line);
#define fs_sim_at(sim, t, fn, ctx, arg) fs_sim_at_loc((sim), (t), (fn), (ctx), (arg), __FILE__, __LINE__)
/* Schedules at now + delay (delay >= 0). */
#define fs_sim_after(sim, d, fn, ctx, arg) \
  fs_sim_at_loc((sim), fs_sim_now(sim) + (d), (fn), (ctx), (arg), __FILE__, __LINE__)

gboolean fs_sim_cancel(FsSim *sim, FsEventId id);
/* Moves a pending event to absolute time t (>= now); returns its new id. */
FsEventId fs_sim_reschedule_loc(FsSim *sim, FsEventId id, FsTime t, const char *file, int line);
#define fs_sim_reschedule(sim, id, t) fs_sim_reschedule_loc((sim), (id), (t), __FILE__, __LINE__)

/* The default event budget: 10^11 events (hours of simulation; a run that
 * long is almost surely an event that reschedules itself forever). */
#define FS_SIM_MAX_EVENTS UINT64_C(100000000000)

/* Sets the event budget (0 = unlimited). */
void fs_sim_set_event_limit(FsSim *sim, uint64_t max_events);
/* The budget a new simulator gets: $FABRICSIM_MAX_EVENTS (a positive
 * integer; 0 or "unlimited" for none) or FS_SIM_MAX_EVENTS. */
uint64_t fs_sim_default_event_limit(void);

/* Asks every run loop to stop before its next event (see the header
 * comment).  Async-signal-safe. */
void fs_sim_request_interrupt(void);
/* Whether an interrupt was requested (and not cleared). */
gboolean fs_sim_interrupt_requested(void);
/* Forgets the request (tests; a command never clears it). */
void fs_sim_clear_interrupt(void);

/* Progress: every FS_SIM_TICK_EVENTS events a run loop of this thread has
 * run (in any simulator), fn(sim, ud) is called before the next event, for
 * a progress line (report/progress.h).  One hook per thread (thread-local:
 * a sweep's worker threads never call the main thread's); NULL removes it.
 * fn must not schedule or run events.  Cost: one test per event. */
#define FS_SIM_TICK_EVENTS 65536u
typedef void (*FsSimTickFn)(const FsSim *sim, void *ud);
void fs_sim_set_tick(FsSimTickFn fn, void *ud);

/* Runs until the queue is empty. */
gboolean fs_sim_run(FsSim *sim, GError **error);
/* Runs every event with time <= t, then sets now = t (if t is later).  If a
 * callback calls fs_sim_stop, returns TRUE with now left at that event. */
gboolean fs_sim_run_until(FsSim *sim, FsTime t, GError **error);
/* Runs while pred(data) is TRUE before each event and events remain. */
gboolean fs_sim_run_while(FsSim *sim, gboolean (*pred)(void *data), void *data, GError **error);
/* Asks the running loop to return (TRUE) after the current event.  Each
 * fs_sim_run* call clears the request when it starts.
 *
 * All fs_sim_run* return FALSE with FS_RUNTIME_ERROR_LIMIT, leaving the
 * next event pending, when running it would exceed the event budget. */
void fs_sim_stop(FsSim *sim);

uint64_t fs_sim_events_run(const FsSim *sim);
guint fs_sim_pending(const FsSim *sim);

/* The simulator's queue (borrowed), for queries such as fs_eventq_is_pending
 * or fs_eventq_time_of.  Schedule through fs_sim_at, not on the queue, so
 * that the "event in the past" check applies. */
FsEventQueue *fs_sim_get_queue(FsSim *sim);

G_END_DECLS
