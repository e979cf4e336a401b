/* trace-json.h — Chrome trace-event JSON (the Trace Event Format; opens in
 * Perfetto and chrome://tracing) of a finished op graph or of a list of
 * transfers.
 *
 * Layout of a trace:
 *   - one process per host (pid = host index + 1, named after the host);
 *     GPUs of the cluster fabric under pid 0 ("fabric"); the link counters
 *     under their own process, pid = hosts + 1, named "links";
 *   - one thread per stream (op graph: tid = stream index + 1, named
 *     "rank R compute (gpu3)", "rank R dp (gpu3)", …; transfers: one
 *     thread per source node), with process_name, thread_name and
 *     thread_sort_index metadata ("M") events;
 *   - a complete ("X") event per op that took time, with its category
 *     (forward, backward, tp, dp, pp, …) and, in args, its op index,
 *     micro-batch, layer and bytes; an op that receives a flow arrow is
 *     drawn even when it took no time;
 *   - each collective as an async span ("b" … "e", cat "collective", id =
 *     the collective's index) from its first member's start to its last
 *     member's end, on its first member's process;
 *   - flow arrows ("s" at the send's start, "f" with "bp":"e" on the
 *     receiving track, cat "transfer", id = the send's op index) from every
 *     send (XFER) to its receive: its partner RECV, or the op on the
 *     destination GPU that waits for it (a pipeline stage's "recv" op);
 *   - a counter ("C") track per busy link, "link A -> B utilisation",
 *     with args {"utilisation": 0..1}: one value per sampler bin when a
 *     sampler is given, else the mean over the run; the track returns to 0
 *     at the end.
 * Times are microseconds with picosecond digits ("ts": 12.345678).
 *
 * Output is deterministic: metadata, then ops in op order, then spans,
 * arrows and counters in index order.  Ownership: fs_trace_json and
 * fs_trace_json_transfers return a newly allocated string (caller frees),
 * without errors; everything passed in is borrowed.  Cost: O(ops + deps +
 * links × bins).
 */
#pragma once

#include <glib.h>

#include "report/link-sampler.h"
#include "topo/topo.h"
#include "workload/opgraph.h"

G_BEGIN_DECLS

/* A busy link to draw as a counter: its name, channel (for the sampler)
 * and mean utilisation over the run (0..1). */
typedef struct {
  const char *name;
  FsChannelId channel;
  double utilisation;
} FsTraceLink;

typedef struct {
  const char *title;              /* otherData.title; NULL: "fabricsim" */
  const FsTraceLink *links;       /* may be NULL */
  guint n_links;
  const FsLinkSampler *sampler;   /* NULL: one mean level per link */
  FsTime end;                     /* end of the run */
} FsTraceOptions;

char *fs_trace_json(const FsOpGraph *g, const FsTopo *topo, const FsTraceOptions *opt);

/* One transfer of a flow list (fabricsim flows). */
typedef struct {
  const char *name;      /* its id */
  guint src, dst;        /* topology nodes */
  uint64_t bytes;
  const char *transport; /* "nvlink", … */
  FsTime start, finish;
} FsTraceTransfer;

/* A trace of transfers: per source node a "send" track with the transfer
 * as an X event, per destination node a "recv" track with the same span,
 * and an arrow from each send to its receive; link counters as above. */
char *fs_trace_json_transfers(const FsTopo *topo, const FsTraceTransfer *xs, guint n,
                              const FsTraceOptions *opt);

/* Writes the trace of g (fs_trace_json) or, when g is NULL, of the n
 * transfers xs (fs_trace_json_transfers) to path as it is built: through
 * the atomic writer (util/strutil.h) a MiB at a time, so that memory stays
 * bounded and a stop request (SIGINT, SIGTERM) during the build stops it
 * within a MiB of output, removes the temporary file and fails with
 * FS_RUNTIME_ERROR_INTERRUPTED; nothing appears at path unless the whole
 * trace was written.  Same bytes as the string functions.  FALSE with the
 * writer's error. */
gboolean fs_trace_json_write(const char *path, const FsOpGraph *g, const FsTraceTransfer *xs, guint n,
                             const FsTopo *topo, const FsTraceOptions *opt, GError **error);

/* The busiest channels of net by mean utilisation over [0, end] (ties:
 * channel order), at most max, into out; returns how many.  Channels that
 * moved no byte are left out.  Names are not filled. */
guint fs_trace_busiest_links(FsFlowNet *net, FsTime end, FsTraceLink *out, guint max);

G_END_DECLS
