/* p2p.h — the measurements of CUDA's p2pBandwidthLatencyTest and
 * nvbandwidth, simulated: for every ordered GPU pair, a transfer alone
 * (unidirectional bandwidth), both directions at once (bidirectional, the
 * sum) and a 4-byte transfer (latency); per GPU, host-to-device and
 * device-to-host from its nearest CPU, and host-to-device for all GPUs at
 * once.  Bandwidth = bytes / time to the last byte landing (GB/s are 10^9
 * B/s).  Each measurement runs alone on an empty flow network, one after
 * another on one simulation whose clock starts again at 0 for each
 * (fs_flownet_rewind), so they cannot disturb each other and each has the
 * whole of the clock's range.
 *
 * Cost: 3 simulations of one or two transfers per ordered pair: O(GPUs²)
 * small runs; the caller bounds the GPU count.  Ownership: the result owns
 * its arrays.  Errors: a transfer that would end past the clock's range
 * (FS_RUNTIME_ERROR_CLOCK, "simulated time exceeds the clock's range") or
 * an interrupt (FS_RUNTIME_ERROR_INTERRUPTED) gives NULL; a pair without a
 * route is recorded as such, not an error.
 */
#pragma once

#include <glib.h>

#include "net/flow.h"
#include "net/route.h"
#include "topo/topo.h"

G_BEGIN_DECLS

typedef struct {
  guint n;                /* GPUs measured: the first n in placement order */
  guint *gpus;            /* their node indices */
  /* n × n, row = source; < 0 on the diagonal and where there is no route. */
  double *uni_gbps, *bi_gbps, *latency_us;
  FsRouteKind *kind;      /* n × n; valid where routed */
  gboolean *routed;       /* n × n */
  /* Per GPU; cpu < 0 (and rates < 0) when it has no host memory path. */
  int *cpu;
  double *h2d_gbps, *d2h_gbps;
  double h2d_all_gbps;    /* all GPUs at once, in total; < 0 if none */
  guint h2d_all_gpus;
} FsP2pResult;

/* Measures the first max_gpus GPUs of the router's topology (0 = all) with
 * transfers of bytes (> 0), on the router's own flow network and simulator
 * (a command's: scenario/scenario.h, FsScenarioWorld), which must be idle;
 * NULL with error when a run stops (above). */
FsP2pResult *fs_p2p_measure_on(FsRouter *router, uint64_t bytes, guint max_gpus, GError **error);
/* The same on a simulator, flow network (model) and router (opt, or NULL
 * for the defaults) of its own over topo: for tests and tools. */
FsP2pResult *fs_p2p_measure(const FsTopo *topo, FsNetModel model, const FsRouteOptions *opt,
                            uint64_t bytes, guint max_gpus, GError **error);
void fs_p2p_result_free(FsP2pResult *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsP2pResult, fs_p2p_result_free)

G_END_DECLS
