/* chakra.h — MLCommons Chakra execution traces in and out.
 *
 * A Chakra trace is one file per rank, named <prefix>.<rank>.et: a
 * varint-length-delimited GlobalMetadata message, then Node messages, in
 * the schema of et_def.proto (this folder: fabricsim's declaration of
 * Chakra's messages, decoded by the code protoc-c generates from it), or the same messages as
 * JSON objects one after another, as Chakra's jsonizer writes them
 * (<prefix>.<rank>.json); ASTRA-sim's text workloads (.txt) are read as
 * Chakra's converter turns them into such nodes.  The mapping of node types and attributes onto
 * fabricsim's op graph is documented in tests/data/chakra/README.md:
 *
 *   COMP_NODE       a compute op: its `duration_micros` when the trace has
 *                   one (fabricsim's own `fabricsim_duration_ps` attribute
 *                   first), else the compute model's time for its
 *                   `num_ops` FLOPs and `tensor_size` bytes on the rank's
 *                   GPU, else zero; CPU ops (`is_cpu_op`) on a stream of
 *                   their own;
 *   COMM_COLL_NODE  one rank's part in a collective (`comm_type`,
 *                   `comm_size` = each rank's input bytes as ASTRA-sim and
 *                   Chakra's PyTorch converter count them) over the process
 *                   group `pg_name` ("" or "0": every rank; else a group
 *                   from a METADATA_NODE's PyTorch process-group list), the
 *                   k-th call of a group on each rank matched together;
 *   COMM_SEND_NODE, COMM_RECV_NODE  point-to-point transfers between
 *                   `comm_src` and `comm_dst` (trace ranks): a send starts
 *                   when it is ready (eager, as in ASTRA-sim), the k-th
 *                   receive of a (source, destination, `comm_tag`) ends when
 *                   the k-th send has arrived;
 *   METADATA_NODE   read for process groups, no time;
 *   anything else   an error naming the node and its file, or skipped
 *                   (FsChakraOptions.skip_unknown) and counted.
 * `ctrl_deps` and `data_deps` are both dependencies; one on a node id that
 * is not in the file (Chakra's PyTorch converter leaves those behind for
 * the operators it drops), or on the node itself, is ignored and counted;
 * a rank whose ctrl_deps close a cycle (converted PyTorch traces have such)
 * is ordered by its data_deps alone, as Chakra's feeder orders every trace.
 * A COMM_COLL_NODE with is_cpu_op is the host side of a collective (CPU
 * time, like a CPU compute node).  Each rank's nodes are
 * put in a topological order (ties by node id, as ASTRA-sim issues them),
 * and its streams run one node at a time in that order: the CUDA stream of
 * the `stream` attribute, else one for GPU kernels, one for collectives and
 * sends, one per sender for receives; CPU nodes (`is_cpu_op`) on one CPU
 * stream, as ASTRA-sim's hardware resource runs them.  Trace rank i
 * runs on the topology's i-th GPU.
 *
 * Errors: FS_WORKLOAD_ERROR_INVALID, one line: "FILE: byte N: node K (id
 * I): what was wrong" for the binary form, "FILE:LINE:COL: node K (id I):
 * …" for JSON (the position of the node's object), "FILE: …" for a file as
 * a whole; a missing file or folder is a GFileError.
 */
#pragma once

#include <glib.h>

#include "compute/efficiency.h"
#include "topo/topo.h"
#include "workload/opgraph.h"
#include "workload/replay.h"

G_BEGIN_DECLS

typedef struct {
  gboolean skip_unknown;   /* skip (and count) nodes of unknown or unsupported types */
} FsChakraOptions;

/* What a load found (for the report). */
typedef struct {
  guint ranks, nodes;
  guint measured;      /* compute nodes timed by the trace's duration */
  guint modelled;      /* compute nodes timed by the compute model (num_ops / tensor_size) */
  guint untimed;       /* compute nodes with neither: zero time */
  guint collectives;   /* collective nodes (one per rank per call) */
  guint p2p;           /* send and receive nodes */
  guint metadata;      /* metadata nodes */
  guint skipped;       /* nodes skipped with skip_unknown */
  guint ctrl_dropped;  /* ranks whose ctrl_deps were dropped: with them the graph had a cycle */
  guint missing_deps;  /* dependencies on node ids not in the file, or on the node
                          itself: ignored */
} FsChakraStats;

/* Loads the traces at paths: one folder (its files <prefix>.<rank>.et or
 * .json, one prefix, ranks 0 … N-1), or N files (ranks from their
 * <prefix>.<rank>.<ext> names, else in the order given), onto topo (N at
 * most its GPU count); or one ASTRA-sim text workload (a name ending in
 * .txt, the Text input of Chakra's converter: chakra-text.c), read into
 * the nodes that converter writes for one pass, every GPU of topo a rank.  Compute nodes without a duration are timed with
 * eff.  stats (nullable) receives the counts.  Returns the op graph ready
 * to run (replay.h; its name is the prefix), or NULL with error.  Cost:
 * linear in the trace's size plus O(n log n) per rank for the order. */
FsReplay *fs_chakra_load(const char *const *paths, guint n_paths, const FsTopo *topo,
                         const FsEfficiency *eff, const FsChakraOptions *opt,
                         FsChakraStats *stats, GError **error);

/* The same from n in-memory files: names[i] (its extension picks the form,
 * ".txt" with n = 1 a text workload; its "<prefix>.<rank>." part the rank
 * as above) and data[i] of len[i] bytes (borrowed). */
FsReplay *fs_chakra_load_buffers(const char *const *names, const guint8 *const *data,
                                 const gsize *len, guint n, const FsTopo *topo,
                                 const FsEfficiency *eff, const FsChakraOptions *opt,
                                 FsChakraStats *stats, GError **error);

/* Writes the op graph of a finished or unrun step as Chakra traces, one
 * per GPU, DIR/<prefix>.<rank>.et (trace rank = the GPU's position in the
 * topology), each written atomically; byte-identical for the same graph.
 * COMPUTE ops become COMP_NODEs (duration_micros rounded to the
 * microsecond, and the exact `fabricsim_duration_ps`), COLL ops
 * COMM_COLL_NODEs with their process group (listed in a METADATA_NODE as
 * PyTorch's process-group list, which ASTRA-sim reads), XFER/RECV ops
 * COMM_SEND/RECV_NODEs (a receive is written for a transfer without one);
 * each op's stream is its `stream` attribute, the stream order ctrl_deps,
 * other dependencies data_deps.  Zero-time DELAY ops are left out (their
 * dependencies carried through).  Data-parallel replicas that the step
 * mirrors (collectives with fewer member ops than GPUs) are written as
 * copies of the simulated ranks, their transfers and own groups mapped to
 * the replica.  Fails (FS_WORKLOAD_ERROR_INVALID, nothing written) for what
 * a Chakra trace cannot say the same way: a DELAY op of non-zero time (a
 * collective timed alone: tensor, context or expert parallelism,
 * --dp-isolated, the analytic model), or replicas it cannot tell apart.
 * I/O errors are FS_RUNTIME_ERROR_IO.  A stop request (util/interrupt.h)
 * while encoding or writing fails with FS_RUNTIME_ERROR_INTERRUPTED and
 * leaves none of this call's files.  Cost: linear in ops × replicas. */
gboolean fs_chakra_write(const FsOpGraph *g, const FsTopo *topo, const char *dir,
                         const char *prefix, GError **error);

G_END_DECLS
