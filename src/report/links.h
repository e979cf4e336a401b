/* links.h — the busiest links of a run, and the trace that draws them.
 *
 * One definition of "busiest" for every report (train, replay, coll
 * --trace, flows --trace): the channels that carried bytes, by mean
 * utilisation over [0, span] (volume / (capacity × span)), highest first,
 * ties in channel order.
 */
#pragma once

#include <glib.h>

#include "net/flow.h"
#include "net/route.h"
#include "report/link-sampler.h"
#include "report/trace-json.h"
#include "topo/topo.h"
#include "workload/opgraph.h"

G_BEGIN_DECLS

typedef struct {
  FsChannelId channel;
  double utilisation;  /* mean over the span, 0..1 */
  uint64_t bytes;      /* carried over the run */
} FsLinkUse;

/* Fills out with up to max busiest channels of net over [0, span] (see the
 * header comment) and returns how many (0 when nothing crossed a link).
 * Cost: O(C log C) for C channels. */
guint fs_report_busiest_links(FsFlowNet *net, FsTime span, FsLinkUse *out, guint max);

/* What a trace draws (trace-json.h): an op graph, or else n_transfers
 * transfers; counter tracks for the n_links busiest links of world's
 * network (named by its router), sampled by sampler (NULL: one mean
 * level), over [0, end]. */
typedef struct {
  const FsOpGraph *graph;
  const FsTraceTransfer *transfers;
  guint n_transfers;
  const FsTopo *topo;
  FsFlowNet *net;
  FsRouter *router;
  const FsLinkSampler *sampler;
  FsTime end;
  const char *title;
  guint n_links;
} FsReportTrace;

/* Writes the trace to path as it is built (fs_trace_json_write: a stop
 * request ends it with FS_RUNTIME_ERROR_INTERRUPTED and no file).  FALSE
 * with the write error.  Cost: the trace's size. */
gboolean fs_report_write_trace(const char *path, const FsReportTrace *t, GError **error);

G_END_DECLS
