/* flows.h — the outputs of `fabricsim flows` (net/flowfile.h): per
 * transfer its start, finish, mean rate, transport and limiting channel,
 * and the makespan, as text, JSON or CSV; and the Chrome trace of the
 * transfers.  Deterministic; arguments borrowed; the list has been
 * replayed.
 */
#pragma once

#include <glib.h>

#include "net/flowfile.h"
#include "net/route.h"
#include "report/format.h"
#include "report/link-sampler.h"

G_BEGIN_DECLS

void fs_report_flows(GString *out, FsReportFormat fmt, const FsTopo *t, FsNetModel model,
                     const FsFlowList *list);

/* Closes sampler (may be NULL) at the makespan and writes the trace of the
 * transfers (titled "NAME on TOPOLOGY"; the 16 busiest links as counters)
 * to path.  FALSE with the write error. */
gboolean fs_report_flows_trace(const char *path, const FsTopo *t, FsFlowNet *net, FsRouter *router,
                               FsLinkSampler *sampler, const FsFlowList *list, const char *name,
                               GError **error);

G_END_DECLS
