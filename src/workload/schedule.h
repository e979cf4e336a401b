/* schedule.h — pipeline schedules: the order in which one pipeline stage
 * runs the forward and backward passes of its micro-batches.
 *
 * A schedule is a table entry (STYLE rule 7): a name and a callback that
 * writes, for stage `stage` of p stages running m micro-batches with v
 * model chunks per stage (virtual stages; 1 without interleaving), the
 * stage's compute order as FsSchedItem records.  The order is all a
 * schedule decides: the executor turns it into ops whose dependencies
 * (activations from the previous virtual stage, gradients from the next)
 * make the pipeline, and the bubble is measured as idle time on the compute
 * streams, never computed from a formula.
 *
 * Virtual stage numbering (Megatron-LM): chunk c of stage s is virtual
 * stage c·p + s; activations flow 0 → 1 → … → v·p − 1.
 *
 *   gpipe        all m forwards, then all m backwards (latest first).
 *   1f1b         PipeDream-Flush / Megatron: min(p − s − 1, m) warm-up
 *                forwards, then one forward and one backward in turn, then
 *                the remaining backwards.
 *   interleaved  Megatron's interleaved 1F1B over v chunks (needs m to be a
 *                multiple of p): forward k runs chunk (k div p) mod v of
 *                micro-batch (k div p·v)·p + k mod p; backwards take the
 *                chunks in reverse; warm-up 2·(p − s − 1) + (v − 1)·p.
 *
 * Ownership: the table is static; the callbacks append to a caller-owned
 * GArray of FsSchedItem.  Errors: FS_WORKLOAD_ERROR_INVALID from
 * fs_schedule_check when a schedule cannot run a layout.  Cost: O(m·v).
 */
#pragma once

#include <glib.h>

#include "compute/memory.h"

G_BEGIN_DECLS

typedef struct {
  guint backward : 1; /* 0 forward, 1 backward */
  guint mb : 31;      /* micro-batch, 0..m-1 */
  guint chunk;        /* model chunk on this stage, 0..v-1 */
} FsSchedItem;

typedef struct {
  FsPpSchedule id;
  const char *name;
  const char *summary;
  /* Appends the order of stage (0..p-1) to out (GArray of FsSchedItem). */
  void (*order)(guint p, guint m, guint v, guint stage, GArray *out);
  /* NULL when the schedule runs p, m, v; else a static sentence. */
  const char *(*unsupported)(guint p, guint m, guint v);
} FsSchedule;

/* The table, in listing order, NULL-terminated. */
extern const FsSchedule *const fs_schedules[];

/* The entry for id or name; NULL if none. */
const FsSchedule *fs_schedule_get(FsPpSchedule id);
const FsSchedule *fs_schedule_find(const char *name);

/* FALSE with FS_WORKLOAD_ERROR_INVALID when sched cannot run (p, m, v). */
gboolean fs_schedule_check(const FsSchedule *sched, guint p, guint m, guint v, GError **error);

G_END_DECLS
