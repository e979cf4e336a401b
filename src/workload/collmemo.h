/* collmemo.h — a memo of collective times measured alone (the DELAY ops of
 * a training step: TP/CP/EP collectives, and data-parallel ones when they
 * are timed alone), shared by every step that runs on the same inputs.
 *
 * A collective measured alone on a private simulator takes a time that
 * depends only on the topology, the NCCL constants, the flow model, the
 * operation, the bytes per rank and the exact list of GPU nodes (in rank
 * order): NCCL's tuner picks the same algorithm, protocol and channels,
 * and nothing else shares the links.  The memo is keyed by all of them
 * (the topology and NCCL constants by address: they must stay alive and
 * unchanged while the memo is used), so a hit returns exactly the time a
 * new measurement would.  Sweeps share one memo between their points:
 * layouts that differ only in micro-batch size or schedule measure each
 * gradient bucket's collective once.
 *
 * A key may instead name a congruence class of GPU groups (collclass.h:
 * the SHA-256 of a signature that translates of one group share); such
 * entries are stored beside the exact ones and counted apart.  Whether a
 * class entry returns exactly what a new measurement would is the
 * caller's choice of when to use classes (collclass.h, executor.h).
 *
 * Thread safety: every call may run on many threads at once (a mutex).
 * A thread that is going to measure a key claims it first
 * (fs_coll_memo_claim): another thread that wants the same key then waits
 * for that result instead of measuring it again (sweeps on several
 * threads would otherwise measure a big collective once per thread).  The
 * claimer stores the time, or releases the claim if the measurement
 * failed, and must hold at most one claim while it claims (or waits):
 * then no two threads wait on each other.  With plain lookups and stores
 * two threads that miss on the same key both measure it; the results are
 * equal, and the first stored stays.  Ownership: the memo copies the node
 * lists; it never iterates its table for output (order cannot leak).
 * Cost: one hash of the node list per lookup; memory O(entries × n).
 */
#pragma once

#include <glib.h>

#include "coll/coll.h"
#include "coll/nccl-params.h"
#include "core/sim.h"
#include "net/flow.h"
#include "topo/topo.h"
#include "workload/collclass.h"

G_BEGIN_DECLS

typedef struct FsCollMemo FsCollMemo;

/* What identifies a measurement (all borrowed). */
typedef struct {
  const FsTopo *topo;
  const FsNcclParams *nccl;
  FsNetModel model;
  FsCollOp op;
  uint64_t unit;             /* bytes per rank, as fs_opgraph_measure_coll takes */
  const guint *nodes;        /* GPU nodes in rank order */
  guint n;
  /* Non-NULL: the key is this congruence class (FS_COLL_CLASS_DIGEST
   * bytes, collclass.h) of n ranks instead of the node list. */
  const guint8 *class_digest;
} FsCollMemoKey;

FsCollMemo *fs_coll_memo_new(void);
void fs_coll_memo_free(FsCollMemo *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollMemo, fs_coll_memo_free)

/* TRUE and the stored time when key was measured before (a key being
 * measured by another thread is a miss; nothing waits). */
gboolean fs_coll_memo_lookup(FsCollMemo *m, const FsCollMemoKey *key, FsTime *out);
/* TRUE and the stored time when key was measured before, waiting first if
 * another thread is measuring it; FALSE when the caller now holds the
 * claim to measure it (then store or release). */
gboolean fs_coll_memo_claim(FsCollMemo *m, const FsCollMemoKey *key, FsTime *out);
/* Gives up a claim without a time (the measurement failed): a waiting
 * thread then claims the key itself. */
void fs_coll_memo_release(FsCollMemo *m, const FsCollMemoKey *key);
/* Stores key's time (the first store of a key wins) and ends a claim on it. */
void fs_coll_memo_store(FsCollMemo *m, const FsCollMemoKey *key, FsTime t);

/* A group's congruence class (collclass.h), kept beside the times so that
 * every step and thread sharing the memo computes a group's signature
 * once.  Keyed by key's topology, NCCL constants, flow model and node list
 * (op and unit ignored) and the signature mode. */
typedef struct {
  gboolean has_class, approx;
  guint8 digest[FS_COLL_CLASS_DIGEST];
} FsCollMemoClass;

/* TRUE and the group's class when it was stored before. */
gboolean fs_coll_memo_get_class(FsCollMemo *m, const FsCollMemoKey *key, FsCollClassMode mode,
                                FsCollMemoClass *out);
/* As fs_coll_memo_get_class, waiting first if another thread is
 * computing the group's class; FALSE when the caller now holds the claim
 * to compute it (then put_class or release_class).  The rule of claims
 * above holds: at most one claim, of either kind, while claiming. */
gboolean fs_coll_memo_claim_class(FsCollMemo *m, const FsCollMemoKey *key, FsCollClassMode mode,
                                  FsCollMemoClass *out);
/* Gives up a claim on a group's class (computing it failed). */
void fs_coll_memo_release_class(FsCollMemo *m, const FsCollMemoKey *key, FsCollClassMode mode);
/* Stores the group's class (the first store wins) and ends a claim on it. */
void fs_coll_memo_put_class(FsCollMemo *m, const FsCollMemoKey *key, FsCollClassMode mode,
                            const FsCollMemoClass *c);

/* Lookups that hit and entries stored, for tests and benchmarks; of
 * them, hits on class keys and class entries (either pointer may be NULL). */
void fs_coll_memo_stats(FsCollMemo *m, guint64 *hits, guint *entries);
void fs_coll_memo_class_stats(FsCollMemo *m, guint64 *hits, guint *entries);

G_END_DECLS
