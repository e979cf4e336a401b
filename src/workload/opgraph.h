/* opgraph.h — per-rank op graphs of one training step, run as events.
 *
 * An op graph is a set of streams (a rank's compute stream, its
 * communication streams) and of ops on them, with dependencies.  Ops on one
 * stream run one after another in the order they were added (each op
 * depends on the previous op of its stream); explicit dependencies link
 * streams and ranks.  Kinds:
 *
 *   COMPUTE  a fixed duration (kernels already timed by the compute model);
 *   DELAY    a fixed duration of communication measured beforehand (a
 *            collective whose links nothing else uses; see executor.h);
 *   XFER     a point-to-point transfer of bytes from one GPU node to
 *            another, started as flows on the flow network when the op is
 *            ready — and, when it has a partner RECV op, when that op is
 *            ready too (a rendezvous);
 *   RECV     the receiving side of an XFER: done when the transfer is;
 *   COLL     one rank's part in a collective: the collective starts on the
 *            flow network (a plan from the tuner, run by the coll executor)
 *            when the last of the graph's member ops of that collective is
 *            ready, and every member op completes when it ends.  Members
 *            that the graph does not simulate (mirrored ranks) are not
 *            waited for: `expected` counts only the ops added.
 *
 * Running: fs_opgraph_run starts every op whose dependencies are met at
 * the current time of env->sim and runs the simulation until the queue
 * is empty.  An op that never ran (a cycle of dependencies, a collective
 * some member never joins, a RECV without its XFER) makes the run fail
 * with FS_RUNTIME_ERROR_DEADLOCK naming up to eight stuck ops, their ranks
 * and what each waits for.
 *
 * Ownership: the graph owns its streams, ops, names and collectives; names
 * passed in are copied (interned) once.  The environment (sim, net,
 * router, NCCL parameters) is borrowed during the run.  Cost: O(ops + deps)
 * memory; running costs one event per COMPUTE/DELAY op plus the flow
 * network's work for XFER and COLL ops.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "coll/nccl-params.h"
#include "collrun/coll-topo.h"
#include "collrun/streams.h"
#include "core/sim.h"
#include "net/route.h"

G_BEGIN_DECLS

#define FS_OP_KINDS(X)     \
  X(COMPUTE, "compute")    \
  X(DELAY, "delay")        \
  X(XFER, "send")          \
  X(RECV, "recv")          \
  X(COLL, "collective")

typedef enum {
#define X(id, str) FS_OP_##id,
  FS_OP_KINDS(X)
#undef X
  FS_OP_N_KINDS
} FsOpKind;

/* What an op's time counts as in the breakdown. */
#define FS_OP_CATS(X)            \
  X(FORWARD, "forward")          \
  X(BACKWARD, "backward")        \
  X(RECOMPUTE, "recompute")      \
  X(OPTIMIZER, "optimizer")      \
  X(TP, "tp")                    \
  X(CP, "cp")                    \
  X(EP, "ep")                    \
  X(PP, "pp")                    \
  X(DP, "dp")                    \
  X(EMB, "emb")                  \
  X(COMM, "comm")                \
  X(OTHER, "other")

typedef enum {
#define X(id, str) FS_CAT_##id,
  FS_OP_CATS(X)
#undef X
  FS_CAT_N
} FsOpCat;

const char *fs_op_kind_name(FsOpKind k);
const char *fs_op_cat_name(FsOpCat c);
/* TRUE for the categories that are communication (tp … comm).  EMB is the
 * all-reduce of tied embedding gradients between the first and the last
 * pipeline stage. */
gboolean fs_op_cat_is_comm(FsOpCat c);

#define FS_OP_NONE UINT32_MAX

typedef struct {
  FsOpKind kind;
  FsOpCat cat;
  guint32 stream;
  const char *name;      /* interned */
  FsTime dur;            /* COMPUTE, DELAY */
  uint64_t bytes;        /* XFER payload; COLL unit bytes */
  int32_t src, dst;      /* XFER: topology nodes */
  guint32 partner;       /* XFER ↔ RECV, or FS_OP_NONE */
  guint32 coll;          /* COLL: collective index */
  gint32 mb;             /* micro-batch, or -1 */
  gint32 layer;          /* layer, or -1 */
  double model_flops;    /* COMPUTE: FLOPs that count for MFU */
  guint32 dep_off, n_deps;
  /* The host model (fs_opgraph_set_host); host is FS_OP_NONE for an op no
   * host issues (it starts when its dependencies are met). */
  guint32 host;          /* the host thread that issues the op */
  FsTime host_cost;      /* host time to issue it (all its launches) */
  FsTime host_first;     /* host time until its first launch is issued (<= host_cost) */
  FsTime host_tail;      /* its end is at least issue + host_tail */
  gboolean host_sync;    /* the host first waits for every op it issued before and for
                            this op's own dependencies (a device synchronization) */
  /* Filled by the run. */
  guint32 pending;
  FsTime start, end;     /* end < 0 until done */
  gboolean ready;        /* dependencies met (and, with a host, its first launch issued) */
  FsTime issue;          /* host time its issue began (-1: no host, or not yet) */
  FsTime ready_at;       /* when its dependencies were met */
  FsTime host_wait;      /* of [ready_at, end]: the time spent waiting for the host */
  gboolean launched;     /* run state of the host gate */
} FsOp;

typedef struct {
  char *name;            /* "compute", "dp", "pp-send", … */
  guint rank;            /* the rank whose stream it is */
  int gpu;               /* its GPU's topology node */
  gboolean compute;      /* a compute stream (the bubble is measured here) */
  guint32 last;          /* last op added, or FS_OP_NONE */
} FsStream;

typedef struct FsOpGraph FsOpGraph;

FsOpGraph *fs_opgraph_new(void);
void fs_opgraph_free(FsOpGraph *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsOpGraph, fs_opgraph_free)

/* Adds a stream; returns its index. */
guint fs_opgraph_add_stream(FsOpGraph *g, const char *name, guint rank, int gpu,
                            gboolean compute);
guint fs_opgraph_n_streams(const FsOpGraph *g);
const FsStream *fs_opgraph_stream(const FsOpGraph *g, guint i);

/* Adds a communicator over n GPU nodes (copied); returns its index. */
guint fs_opgraph_add_comm(FsOpGraph *g, const char *name, const guint *gpus, guint n);
/* Makes the collectives of comm run the stream model (collrun/streams.h)
 * where it is trusted (fs_coll_exec_streams_trusted: every algorithm but
 * NCCL's tree, CollNet, the chains of broadcast and reduce, and NVLS
 * across hosts, as fs_coll_exec_pick_streams), deep or not, when
 * FsOpEnv.exec is AUTO; the others, and every collective under STEPS or
 * STREAMS, run as env->exec says.  Cost: O(1). */
void fs_opgraph_comm_set_streams(FsOpGraph *g, guint comm);
/* Adds a collective on comm of op with unit_bytes per rank (as
 * FsCollSizes.unit_bytes); members join with COLL ops.  Returns its index. */
guint fs_opgraph_add_coll(FsOpGraph *g, guint comm, FsCollOp op, uint64_t unit_bytes);

/* The number of GPUs of the communicator that collective coll runs on
 * (0 for an unknown index). */
guint fs_opgraph_coll_comm_size(const FsOpGraph *g, guint coll);

/* The operation, unit bytes and GPU nodes (borrowed from the graph, *n of
 * them, in the communicator's rank order) of collective coll; FALSE for an
 * unknown index.  Any output pointer may be NULL.  Cost: O(1). */
gboolean fs_opgraph_coll_info(const FsOpGraph *g, guint coll, FsCollOp *op, uint64_t *unit,
                              const guint **gpus, guint *n);

/* Sets how many member ops the collective waits for (default: as many as
 * are added).  A replay sets the communicator's size, so that a member
 * that never calls the collective is a deadlock, not a smaller collective. */
void fs_opgraph_set_coll_expected(FsOpGraph *g, guint coll, guint expected);

/* Adds an op on stream (after the stream's previous op) with deps
 * (n entries; FS_OP_NONE entries are skipped).  Returns the op's index.
 * The op record is filled from tmpl (kind, cat, name, dur, bytes, src,
 * dst, coll, mb, layer, model_flops); the rest is set here. */
guint32 fs_opgraph_add(FsOpGraph *g, guint stream, const FsOp *tmpl, const guint32 *deps,
                       guint n);
/* The host model: a host thread issues the ops given to it in the order of
 * the fs_opgraph_set_host calls (its program order), one after another,
 * never waiting for the GPU except before a `sync` op.  For op i issued
 * from host time H_i (the host's clock when it reaches the op; with
 * sync, no earlier than the end of every op the host issued before it and
 * of the op's own dependencies):
 *   the host's clock then moves to H_i + cost_i;
 *   the op starts at max(its dependencies' end, H_i + first_i);
 *   a COMPUTE or DELAY op ends at max(start + dur, H_i + tail_i);
 * an XFER, RECV or COLL op is ready (joins its rendezvous) at that start.
 * Without hosts nothing changes: the run is the one described above.
 * Cost: O(ops) per run. */
guint fs_opgraph_add_host(FsOpGraph *g);
/* Gives op (before the run) to host (from fs_opgraph_add_host), after the
 * ops given to it so far, with its issue cost, first-launch time and tail
 * (times >= 0; first is clamped to cost) and whether the host
 * synchronizes before it.  An op is given to at most one host, once. */
void fs_opgraph_set_host(FsOpGraph *g, guint32 op, guint host, FsTime cost, FsTime first,
                         FsTime tail, gboolean sync);

/* Adds one more dependency to op (before the run). */
void fs_opgraph_add_dep(FsOpGraph *g, guint32 op, guint32 dep);
/* Pairs an XFER with its RECV. */
void fs_opgraph_pair(FsOpGraph *g, guint32 xfer, guint32 recv);

guint fs_opgraph_n_ops(const FsOpGraph *g);
const FsOp *fs_opgraph_op(const FsOpGraph *g, guint32 i);
const uint32_t *fs_opgraph_deps(const FsOpGraph *g, guint32 i, guint *n);
/* The interned copy of s (owned by the graph). */
const char *fs_opgraph_intern(FsOpGraph *g, const char *s);

/* What the run needs; all borrowed. */
typedef struct {
  FsSim *sim;
  FsFlowNet *net;
  FsRouter *router;
  FsCollTopoNet *tnet;
  const FsNcclParams *nccl;
  /* The tuner's inputs for every collective (NCCL_ALGO / NCCL_PROTO,
   * CollNet; scenario.h), or NULL for NCCL's defaults (fs_coll_prefs_init). */
  const FsCollPrefs *prefs;
  /* How collectives run (collrun/streams.h): STEPS (zero) plans on the
   * executor, STREAMS the stream model, AUTO by its rule (the default of
   * FsTrainOptions). */
  FsCollExec exec;
} FsOpEnv;

/* Runs the graph from now to completion (see the header comment). */
gboolean fs_opgraph_run(FsOpGraph *g, const FsOpEnv *env, GError **error);

/* Time of the last op's end (after a run). */
FsTime fs_opgraph_end(const FsOpGraph *g);

/* Measures a collective alone: op on the GPU nodes gpus (n), unit_bytes
 * per rank, tuned as NCCL would, run from now on env, whose simulator must
 * have nothing else to do (a private one: nothing else shares its links).
 * Used for DELAY ops.  Cost: one plan and one isolated run. */
gboolean fs_opgraph_measure_coll(const FsOpEnv *env, const guint *gpus, guint n, FsCollOp op,
                                 uint64_t unit_bytes, FsTime *elapsed, GError **error);

/* Where one rank's time went between from and to. */
typedef struct {
  FsTime total;
  FsTime busy[FS_CAT_N];     /* compute-stream time by compute category */
  FsTime exposed[FS_CAT_N];  /* communication the compute stream waited for, by kind */
  FsTime bubble;             /* compute stream idle with no communication of its own active */
  FsTime host;               /* compute stream waiting for the host to issue its work */
} FsOpBreakdown;

/* Measures a rank after a run: its compute stream's busy time by
 * category; communication ops on that stream count as exposed; the time
 * its ops waited for the host (FsOp.host_wait) counts as host; each idle
 * stretch of the compute stream counts as exposed communication of the
 * first active kind among comm_ops (the rank's other streams' ops and the
 * transfers it receives; priority dp, emb, pp, cp, ep, tp), else as bubble.
 * Cost: O(ops log ops). */
void fs_opgraph_breakdown(const FsOpGraph *g, guint compute_stream, const guint32 *comm_ops,
                          guint n_comm, FsTime from, FsTime to, FsOpBreakdown *out);

G_END_DECLS
