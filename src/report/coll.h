/* coll.h — the outputs of `fabricsim coll` (scenario/coll-test.h): the
 * nccl-tests text (one block per collective, with --explain's arithmetic),
 * JSON, CSV, the Chrome trace of the sweep, and the --list of algorithms.
 * Every writer appends to a GString (the command prints it whole, so an
 * error leaves nothing half-printed) and is deterministic.
 */
#pragma once

#include <glib.h>

#include "scenario/coll-test.h"

G_BEGIN_DECLS

/* The header fields nccl-tests prints that the simulation does not use. */
typedef struct {
  int warmup_iters, iters, check;
} FsCollTextOptions;

/* nccl-tests' text: per collective its header, table and footer, or its
 * "# Not run:" reason; with explain, the cost model's arithmetic for each
 * size (first datatype and redop) as "# " lines.  FALSE with the tuner's
 * error (explain only). */
gboolean fs_report_coll_text(GString *out, const FsScenario *sc, const FsCollTest *r,
                             const FsCollTextOptions *opt, gboolean explain, GError **error);
/* nccl-tests' own -J JSON file (src/coll/ncclt-format.h) of the sweep's
 * one collective, as nccl-tests would write it to path (named in its
 * command line).  Deterministic. */
void fs_report_coll_ncclt_json(GString *out, const FsScenario *sc, const FsCollTest *r,
                               const FsCollTextOptions *opt, const char *path);
/* JSON (schema_version 2; README "coll --json"). */
void fs_report_coll_json(GString *out, const FsScenario *sc, const FsCollTest *r);
/* CSV: one line per row. */
void fs_report_coll_csv(GString *out, const FsCollTest *r);

/* Runs each size of the sweep (each collective's first datatype and redop)
 * once more, back to back, as collectives of an op graph (one stream per
 * rank) on a world of the scenario — the same tuner inputs (NCCL_ALGO,
 * NCCL_PROTO, --algo, --proto, --channels, CollNet) as the table —
 * sampling link utilisation, and writes the Chrome trace to path.  FALSE
 * with a run or write error.  Cost: one more simulation of the sweep. */
gboolean fs_report_coll_trace(const char *path, const FsScenario *sc, const FsCollTest *r,
                              GError **error);

/* `fabricsim explain coll`: the rings the search found on the scenario's
 * topology, the tuner's choice (the scenario's tuner inputs) for op on
 * bytes over the GPUs gpus_text names ("all", a count or a list) and its
 * alpha-beta arithmetic; size_label is the size as the user wrote it.
 * FALSE with the GPU list's, communicator's or tuner's error. */
gboolean fs_report_coll_explain(GString *out, const FsScenario *sc, FsCollOp op, uint64_t bytes,
                                const char *gpus_text, const char *size_label, GError **error);

/* The algorithms (name, NCCL name, summary) and protocols (coll --list). */
void fs_report_coll_list(GString *out);

G_END_DECLS
