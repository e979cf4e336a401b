/* bench.h — nccl-tests on the simulator: a sweep of sizes of one
 * collective, each tuned (or forced), planned, run alone on the flow
 * network (fs_coll_time_alone: step extrapolation, channel folding when
 * the sweep allows it, the NVLS tree's rails and the stream models' work
 * shared through a memo the sweep keeps unless alone.exact or the caller
 * brings one), and reported as nccl-tests rows.  Each row is the time its
 * size gives alone (`coll -b S -e S`): the memo shares no times.
 *
 * Each size runs with the executor parameters of exec-params.h.
 *
 * Ownership: rows are returned in a GArray of FsNcclTestsRow whose string
 * fields point to static names (algorithm, protocol, datatype, redop).
 * Errors: FS_COLL_ERROR (nothing can run the op), the transfer callback's
 * errors, FS_RUNTIME_ERROR when a run does not complete.
 */
#pragma once

#include <glib.h>

#include "coll/launch.h"
#include "coll/ncclt-format.h"
#include "coll/tuner.h"
#include "collrun/alone.h"
#include "collrun/exec-params.h"
#include "collrun/exec.h"

G_BEGIN_DECLS

typedef struct {
  FsCollOp op;
  FsCollDtype dtype;
  FsCollRedop redop;
  guint root;
  uint64_t min_bytes, max_bytes;
  uint64_t step_factor;  /* > 1: multiply; else add step_bytes (>= 1) */
  uint64_t step_bytes;
  FsCollPrefs prefs;
  /* How each size is timed (alone.h): zero = step extrapolation, no
   * folding; set alone.route_fixed to fold identical channels, alone.exact
   * to simulate every transfer. */
  FsCollAloneOpts alone;
  /* How nccl-tests launches it (coll/launch.h): each row's time is at
   * least one iteration's host issue time.  All zero = the defaults of
   * fs_coll_launch_init (one process per GPU). */
  FsCollLaunch launch;
} FsCollSweep;

/* Runs the sweep on net (all runs alone, one after another) and appends
 * one row per size to rows (GArray of FsNcclTestsRow).  The in-place
 * columns repeat the out-of-place run (the simulator moves the same
 * bytes).  Each time is at least the sweep's host launch floor
 * (coll/launch.h with p->host_launch_us).  Sizes that give no data for ops that split the buffer
 * (count 0) still run (latency only), as nccl-tests prints them. */
gboolean fs_coll_bench(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                       const FsCollSweep *sweep, FsFlowNet *net, FsCollTransferFn xfer,
                       void *xfer_ctx, GArray *rows, GError **error);

/* One size of a sweep with what the tuner chose for it. */
typedef struct {
  uint64_t size;          /* the sweep's size, bytes */
  FsCollSizes sizes;      /* what each rank sends and receives for it */
  uint64_t nbytes;        /* the size NCCL's tuner is asked about */
  FsCollChoice choice;    /* algorithm, protocol and channels */
} FsCollBenchStep;

typedef gboolean (*FsCollBenchFn)(const FsCollBenchStep *step, void *data, GError **error);

/* Walks the sizes of sweep from min_bytes to max_bytes (times step_factor,
 * or plus step_bytes), stopping where the next size would not grow or would
 * overflow; tunes each (fs_coll_tune) and calls fn with it, in increasing
 * order.  Stops at the first error of the tuner or of fn.  Shared by
 * fs_coll_bench and the explanation of a sweep (report/coll.c). */
gboolean fs_coll_bench_each_size(const FsNcclParams *p, const FsCollSysInfo *sys,
                                 const FsComm *comm, const FsCollSweep *sweep, FsCollBenchFn fn,
                                 void *data, GError **error);

/* Mean of both busbw columns over rows (nccl-tests' "Avg bus bandwidth"). */
double fs_coll_bench_avg_busbw(const GArray *rows);

G_END_DECLS
