/* sim.c — the simulation clock over an event queue.  See sim.h.
 *
 * The run loops share one function: pop the earliest event while it is due
 * (time <= the horizon), the predicate holds, no stop was asked and the
 * event budget allows, advance the clock to its time and call it.  The
 * clock never moves backwards: scheduling before now is a programming
 * error that stops the process with the caller's file:line.
 */
#include "core/sim.h"

#include <signal.h>
#include <string.h>

#include <inttypes.h>

#include "util/error.h"
#include "util/interrupt.h"
#include "util/limits.h"
#include "util/units.h"


/* The progress hook of this thread (fs_sim_set_tick). */
static _Thread_local FsSimTickFn tick_fn;
static _Thread_local void *tick_ud;

struct FsSim {
  FsEventQueue *q;
  FsTime now;
  uint64_t events_run;
  uint64_t event_limit; /* 0 = unlimited */
  gboolean stop;
};

FsSim *fs_sim_new(void)
{
  FsSim *sim = g_new0(FsSim, 1);
  sim->q = fs_eventq_new();
  sim->event_limit = fs_sim_default_event_limit();
  return sim;
}

void fs_sim_free(FsSim *sim)
{
  if (sim == NULL)
    return;
  fs_eventq_free(sim->q);
  g_free(sim);
}

FsTime fs_sim_now(const FsSim *sim)
{
  g_return_val_if_fail(sim != NULL, 0);
  return sim->now;
}

/* Stops the process: an event before now would break causality. */
static G_GNUC_NORETURN void event_in_the_past(const FsSim *sim, FsTime t, const char *file, int line)
{
  g_error("%s:%d: event in the past: scheduled at t=%" PRId64 " ps but the clock is already at t=%" PRId64
          " ps (%" PRId64 " ps earlier)",
          file ? file : "?", line, t, sim->now, sim->now - t);
}

FsEventId fs_sim_at_loc(FsSim *sim, FsTime t, FsEventFn fn, void *ctx, uint64_t arg,
                        const char *file, int line)
{
  g_return_val_if_fail(sim != NULL && fn != NULL, FS_EVENT_NONE);
  if (G_UNLIKELY(t < sim->now))
    event_in_the_past(sim, t, file, line);
  return fs_eventq_push(sim->q, t, fn, ctx, arg);
}

gboolean fs_sim_cancel(FsSim *sim, FsEventId id)
{
  g_return_val_if_fail(sim != NULL, FALSE);
  return fs_eventq_cancel(sim->q, id);
}

FsEventId fs_sim_reschedule_loc(FsSim *sim, FsEventId id, FsTime t, const char *file, int line)
{
  g_return_val_if_fail(sim != NULL, FS_EVENT_NONE);
  if (G_UNLIKELY(t < sim->now))
    event_in_the_past(sim, t, file, line);
  return fs_eventq_reschedule(sim->q, id, t);
}

void fs_sim_set_event_limit(FsSim *sim, uint64_t max_events)
{
  g_return_if_fail(sim != NULL);
  sim->event_limit = max_events;
}

uint64_t fs_sim_default_event_limit(void)
{
  static gsize once;
  static uint64_t limit;
  if (g_once_init_enter(&once)) {
    /* 0 or "unlimited": no limit. */
    const char *s = g_getenv("FABRICSIM_MAX_EVENTS");
    if (s != NULL && (strcmp(s, "0") == 0 || strcmp(s, "unlimited") == 0))
      limit = 0;
    else
      limit = fs_env_limit("FABRICSIM_MAX_EVENTS", FS_SIM_MAX_EVENTS, G_MAXUINT64);
    g_once_init_leave(&once, 1);
  }
  return limit;
}

void fs_sim_request_interrupt(void) { fs_interrupt_request(); }
gboolean fs_sim_interrupt_requested(void) { return fs_interrupt_requested(); }
void fs_sim_clear_interrupt(void) { fs_interrupt_clear(); }

void fs_sim_set_tick(FsSimTickFn fn, void *ud)
{
  tick_fn = fn;
  tick_ud = ud;
}

/* Runs due events: those with time <= until, while pred (if any) holds.
 * Returns TRUE when the loop ended normally (queue drained or no event due,
 * predicate false, or a stop); *drained tells whether it ended because no
 * event was due.  Returns FALSE with FS_RUNTIME_ERROR_LIMIT when the next
 * event would exceed the budget. */
static gboolean run_loop(FsSim *sim, FsTime until, gboolean (*pred)(void *data), void *data,
                         gboolean *drained, GError **error)
{
  FsEventQueue *q = sim->q;
  *drained = FALSE;
  sim->stop = FALSE;
  for (;;) {
    if (pred != NULL && !pred(data))
      return TRUE;
    if (G_UNLIKELY(fs_interrupt_requested()) && fs_eventq_size(q) > 0) {
      g_autofree char *at = fs_format_time(sim->now);
      g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED,
                  "interrupted at simulated time %s after %" PRIu64 " events; partial results "
                  "not written", at, sim->events_run);
      return FALSE;
    }
    if (G_UNLIKELY(sim->event_limit != 0 && sim->events_run >= sim->event_limit) &&
        fs_eventq_size(q) > 0 && fs_eventq_peek_time(q) <= until) {
      g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_LIMIT,
                  "the simulation reached its limit of %" PRIu64 " events at t=%" PRId64
                  " ps with %u events still pending; raise the limit (FABRICSIM_MAX_EVENTS=N, or "
                  "unlimited) if a run this long is expected, otherwise look for events that "
                  "reschedule themselves forever",
                  sim->event_limit, sim->now, fs_eventq_size(q));
      return FALSE;
    }
    /* (peek_time is FS_TIME_MAX on an empty queue too, hence the size; asked
     * second, it costs one call per event, not two.) */
    if (G_UNLIKELY(until == FS_TIME_MAX) && fs_eventq_peek_time(q) == FS_TIME_MAX &&
        fs_eventq_size(q) > 0) {
      g_autofree char *at = fs_format_time(sim->now);
      return fs_set_clock_range_error(error, "at t=%s, after %" PRIu64 " events, the next event "
                                      "lies past its end; simulate fewer bytes or steps",
                                      at, sim->events_run);
    }
    FsEvent ev;
    if (!fs_eventq_pop_until(q, until, &ev)) {
      *drained = TRUE;
      return TRUE;
    }
    sim->now = ev.time;
    sim->events_run++;
    if (G_UNLIKELY((sim->events_run & (FS_SIM_TICK_EVENTS - 1)) == 0) && tick_fn != NULL)
      tick_fn(sim, tick_ud);
    ev.fn(ev.ctx, ev.arg);
    if (sim->stop)
      return TRUE;
  }
}

gboolean fs_sim_run(FsSim *sim, GError **error)
{
  g_return_val_if_fail(sim != NULL, FALSE);
  gboolean drained;
  return run_loop(sim, FS_TIME_MAX, NULL, NULL, &drained, error);
}

gboolean fs_sim_run_until(FsSim *sim, FsTime t, GError **error)
{
  g_return_val_if_fail(sim != NULL, FALSE);
  gboolean drained;
  if (!run_loop(sim, t, NULL, NULL, &drained, error))
    return FALSE;
  /* Only a loop that ran every due event may move the clock to the horizon;
   * after a stop, events at or before t are still pending. */
  if (drained && t > sim->now)
    sim->now = t;
  return TRUE;
}

gboolean fs_sim_run_while(FsSim *sim, gboolean (*pred)(void *data), void *data, GError **error)
{
  g_return_val_if_fail(sim != NULL && pred != NULL, FALSE);
  gboolean drained;
  return run_loop(sim, FS_TIME_MAX, pred, data, &drained, error);
}

void fs_sim_stop(FsSim *sim)
{
  g_return_if_fail(sim != NULL);
  sim->stop = TRUE;
}

uint64_t fs_sim_events_run(const FsSim *sim)
{
  g_return_val_if_fail(sim != NULL, 0);
  return sim->events_run;
}

guint fs_sim_pending(const FsSim *sim)
{
  g_return_val_if_fail(sim != NULL, 0);
  return fs_eventq_size(sim->q);
}

FsEventQueue *fs_sim_get_queue(FsSim *sim)
{
  g_return_val_if_fail(sim != NULL, NULL);
  return sim->q;
}

gboolean fs_sim_rewind(FsSim *sim)
{
  g_return_val_if_fail(sim != NULL, FALSE);
  if (fs_eventq_size(sim->q) > 0)
    return FALSE;
  sim->now = 0;
  return TRUE;
}
