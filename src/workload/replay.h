/* replay.h — explicit per-rank op graphs (trace files) loaded for replay.
 *
 * A trace is JSON (format and an example in workloads/README.md, files in
 * workloads/traces/): ranks mapped to GPUs, communicators, and ops per rank
 * — compute (a duration, or FLOPs timed by the compute model as a square
 * GEMM on the rank's GPU), send/recv (matched in order per ordered pair of
 * ranks), collectives on a communicator (matched in call order per
 * communicator, as NCCL matches them) — with dependencies by op id.  Ops of
 * one (rank, stream) run in file order.
 *
 * Collectives wait for every member of their communicator: a rank that
 * never calls one, a dependency cycle or a recv without a send is a
 * deadlock at run time (FS_RUNTIME_ERROR_DEADLOCK, with ranks and ops).
 * Mismatched calls (different kinds or sizes for the k-th collective of a
 * communicator) are input errors.
 *
 * Every object's keys and values are declared (fs_replay_schemas, read by
 * the schema walker of util/schema.h): their types, units and ranges, and
 * the tables of workloads/README.md, come from one field table.
 *
 * Ownership: FsReplay owns its graph.  Errors: FS_WORKLOAD_ERROR_INVALID
 * with "file:line:col: $.ops[i].KEY: what was expected" at the value's
 * position (the op's id after the path where the fault is the op's:
 * `op "x": ...`): the walk's (an unknown key with "did you mean", a wrong
 * type, unit or range) and the loader's (a rank past the count, an unknown
 * kind, communicator or dependency, mismatched collective calls); JSON
 * syntax errors alike.
 */
#pragma once

#include <glib.h>

#include "compute/efficiency.h"
#include "topo/topo.h"
#include "util/schema.h"
#include "workload/opgraph.h"

G_BEGIN_DECLS

#define FS_REPLAY_SCHEMA_VERSION 1

typedef struct {
  char *name;
  FsOpGraph *graph;
  guint n_ranks;
  guint *compute_stream;   /* per rank: its first compute stream, or G_MAXUINT */
  GPtrArray *rank_ops;     /* per rank: GArray of guint32, its communication ops and incoming sends */
} FsReplay;

FsReplay *fs_replay_load_file(const char *path, const FsTopo *topo, const FsEfficiency *eff,
                              GError **error);
FsReplay *fs_replay_load_string(const char *text, const char *name, const FsTopo *topo,
                                const FsEfficiency *eff, GError **error);
void fs_replay_free(FsReplay *r);
/* The declared fields of a trace (util/schema.h: every object's keys with
 * their types, units and ranges, as the loader reads them), named as
 * workloads/README.md's generated tables name them ("replay.op"); *n
 * receives the count.  Static, borrowed.  A key they do not declare is an
 * input error. */
const FsSchemaEntry *fs_replay_schemas(guint *n);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsReplay, fs_replay_free)

G_END_DECLS
