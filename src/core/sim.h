/* sim.h — the simulation clock over an event queue.
 *
 * FsSim owns an FsEventQueue and the current time.  Callbacks scheduled with
 * fs_sim_at / fs_sim_after run in (time, sequence) order; inside a callback
 * fs_sim_now() is the event's time.  Scheduling an event before now is a
 * broken invariant: the run stops with g_error() naming the caller's
 * file:line (the FS_SIM_AT macro passes them).
 *
 * The simulator knows nothing of networks or GPUs.  It also counts the
 * events it ran and enforces an optional event budget (a resource guard:
 * when exceeded, fs_sim_run* stop and return FALSE with
 * FS_RUNTIME_ERROR_LIMIT).
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

/* Sets the event budget (0 = unlimited, the default). */
void fs_sim_set_event_limit(FsSim *sim, uint64_t max_events);

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
