/* p2p.h — the outputs of `fabricsim p2p` (net/p2p.h): transport,
 * unidirectional and bidirectional bandwidth and latency matrices of the
 * first ng GPUs, and host↔device bandwidth, as text (as CUDA's
 * p2pBandwidthLatencyTest prints), JSON or CSV.  Deterministic.
 */
#pragma once

#include <glib.h>

#include "net/p2p.h"
#include "report/format.h"

G_BEGIN_DECLS

void fs_report_p2p(GString *out, FsReportFormat fmt, const FsTopo *t, FsNetModel model,
                   uint64_t bytes, guint ng, const FsP2pResult *res);

G_END_DECLS
