/* trace-json.h — a Chrome trace-event JSON (opens in Perfetto and
 * chrome://tracing) of a finished op graph.
 *
 * One process per host (pid = host index + 1; GPUs of the cluster fabric
 * under pid 0, "fabric"), one thread per stream (tid = stream index + 1,
 * named "rank R compute", "rank R dp", …), one complete ("X") event per op
 * that took time, with its category (forward, backward, tp, dp, …) and,
 * in args, its micro-batch, layer and bytes.  Times are microseconds with
 * picosecond digits ("ts": 12.345678).  Counter ("C") tracks give the
 * utilisation of the `links` busiest channels when link_stats is given.
 *
 * Output is deterministic: events in stream order, then op order.
 * Ownership: returns a newly allocated string (caller frees).  No errors.
 * Cost: O(ops).
 */
#pragma once

#include <glib.h>

#include "topo/topo.h"
#include "workload/opgraph.h"

G_BEGIN_DECLS

/* A busy link to draw as a counter: its name and mean utilisation over the
 * step (a single level from 0 to the step's end). */
typedef struct {
  const char *name;
  double utilisation;  /* 0..1 */
} FsTraceLink;

char *fs_trace_json(const FsOpGraph *g, const FsTopo *topo, const char *title,
                    const FsTraceLink *links, guint n_links, FsTime end);

G_END_DECLS
