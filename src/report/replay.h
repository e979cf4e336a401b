/* replay.h — the outputs of `fabricsim replay` (workload/replay.h): the
 * makespan, each rank's compute, exposed communication and idle time, and
 * the busiest links, as text, JSON (schema: workloads/README.md) or CSV;
 * and the Chrome trace of the run.  Deterministic; arguments borrowed.
 */
#pragma once

#include <glib.h>

#include "net/route.h"
#include "report/format.h"
#include "report/link-sampler.h"
#include "workload/chakra/chakra.h"
#include "workload/replay.h"

G_BEGIN_DECLS

/* Appends the report of rp's finished run (makespan end) on net.  chakra
 * (nullable): what fs_chakra_load found, reported (text and JSON) when rp
 * came from Chakra traces. */
void fs_report_replay(GString *out, FsReportFormat fmt, const FsReplay *rp, const FsTopo *topo,
                      FsFlowNet *net, FsRouter *router, FsTime end, const FsChakraStats *chakra);

/* Writes the run's Chrome trace (the 8 busiest links as counters) to path.
 * FALSE with the write error. */
gboolean fs_report_replay_trace(const char *path, const FsReplay *rp, const FsTopo *topo,
                                FsFlowNet *net, FsRouter *router, const FsLinkSampler *sampler,
                                FsTime end, GError **error);

G_END_DECLS
