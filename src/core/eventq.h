/* eventq.h — the event queue: an array-backed 4-ary min-heap of runs of
 * events at equal times, keyed (time, sequence).
 *
 * The sequence number is assigned at push time from a counter that never
 * repeats, so the key is a total order and events at the same time pop in
 * the order they were pushed (FIFO ties).  Events live in a pool owned by
 * the queue (slots are recycled through a free list; the pool grows by
 * doubling, so there is no allocation per event once warm).  Every event is
 * named by an FsEventId that carries its slot and a generation count: a
 * stale id (its event already popped or cancelled) is recognised and
 * ignored, so callers may keep ids without tracking their lifetime.
 *
 * Costs: push, pop, cancel and reschedule are O(log r) for r distinct
 * pending times (at most n), and O(1) for a push at a time already pending
 * (usually) or a pop followed by another event at its time; peek is O(1).
 * Internally the key is packed into one 128-bit integer (time, 32-bit
 * sequence within an epoch, slot); see eventq.c for the layout and runs.
 * Not thread-safe; one queue per simulation.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "util/units.h"

G_BEGIN_DECLS

typedef struct FsEventQueue FsEventQueue;

/* slot (low 32 bits) | generation (high 32 bits); 0 is never a valid id. */
typedef uint64_t FsEventId;
#define FS_EVENT_NONE ((FsEventId)0)

typedef void (*FsEventFn)(void *ctx, uint64_t arg);

/* A popped event: the callback, its context and argument, and its key. */
typedef struct {
  FsTime time;
  uint64_t seq;
  FsEventFn fn;
  void *ctx;
  uint64_t arg;
} FsEvent;

FsEventQueue *fs_eventq_new(void);
void fs_eventq_free(FsEventQueue *q);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsEventQueue, fs_eventq_free)

/* Schedules fn(ctx, arg) at time; returns its id. */
FsEventId fs_eventq_push(FsEventQueue *q, FsTime time, FsEventFn fn, void *ctx, uint64_t arg);

/* Removes the earliest event into *out.  Returns FALSE when empty. */
gboolean fs_eventq_pop(FsEventQueue *q, FsEvent *out);

/* Removes the earliest event into *out if its time is <= until.  Returns
 * FALSE (and leaves the queue alone) when empty or when the earliest event
 * is later than until.  The simulator's run loops use it: one call a step. */
gboolean fs_eventq_pop_until(FsEventQueue *q, FsTime until, FsEvent *out);

/* Time of the earliest event; FS_TIME_MAX when empty. */
FsTime fs_eventq_peek_time(const FsEventQueue *q);

/* Cancels a pending event.  Returns FALSE (and does nothing) if id is stale. */
gboolean fs_eventq_cancel(FsEventQueue *q, FsEventId id);

/* Moves a pending event to a new time, giving it a fresh sequence number (it
 * runs after events already at that time).  Returns the event's new id (the
 * old one becomes stale), or FS_EVENT_NONE if id was stale. */
FsEventId fs_eventq_reschedule(FsEventQueue *q, FsEventId id, FsTime time);

/* TRUE when id names a pending event. */
gboolean fs_eventq_is_pending(const FsEventQueue *q, FsEventId id);

/* Number of pending events. */
guint fs_eventq_size(const FsEventQueue *q);

/* Time at which the pending event id is scheduled; FS_TIME_MAX if id is
 * stale.  O(1). */
FsTime fs_eventq_time_of(const FsEventQueue *q, FsEventId id);

/* Checks every internal invariant (heap order, recorded positions, padding,
 * sequence numbers); TRUE when all hold.  O(n); for tests and debugging. */
gboolean fs_eventq_check(const FsEventQueue *q);

/* Sequence numbers are 32 bits wide per epoch: when `limit` numbers have been
 * handed out, the pending events are renumbered in order (O(n log n)) and a
 * new epoch begins, invisibly to callers (FsEvent.seq keeps growing).  The
 * default limit is 2^32 - 1; tests lower it to exercise renumbering (it must
 * stay above the largest number of events pending at once). */
void fs_eventq_set_seq_limit(FsEventQueue *q, uint32_t limit);

G_END_DECLS
