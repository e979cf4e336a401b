/* flowfile.h — flow lists for `fabricsim flows`: read a CSV or JSON list of
 * transfers (id, start, src, dst, bytes, optional dependencies), replay it
 * on a topology through the router and the flow network, and keep each
 * transfer's result.  Format and example in tests/data/flows/README.md.
 *
 * A transfer starts at max(its start, the finish of every transfer it
 * depends on).  Ids are unique; a dependency on an unknown id or a cycle
 * is an input error.  Errors: FS_NET_ERROR_INPUT with "file:line:col: "
 * (CSV) or "file: flow N (id): " (JSON, whose values carry no position),
 * FS_NET_ERROR_NO_ROUTE from routing, FS_UNITS_ERROR texts wrapped.
 *
 * Ownership: FsFlowList owns its records and strings.  Memory O(flows +
 * dependencies); the replay runs all ready transfers concurrently.
 */
#pragma once

#include <glib.h>

#include "net/flow.h"
#include "net/route.h"
#include "topo/topo.h"

G_BEGIN_DECLS

typedef struct {
  char *id;
  FsTime start;           /* as given */
  guint src, dst;         /* topology nodes */
  uint64_t bytes;
  guint *deps;            /* indices of the transfers it waits for */
  guint n_deps;
  int line;               /* CSV line, or 0 */
  /* Results of fs_flow_list_replay. */
  gboolean done;
  FsRouteKind kind;
  FsFlowInfo info;        /* start = actual start; finish; mean_rate; bottleneck */
} FsFlowRecord;

typedef struct {
  GPtrArray *records;     /* FsFlowRecord*, in file order */
} FsFlowList;

/* Reads path (".json" by extension or a leading '{' / '['; else CSV),
 * resolving node names in topo.  NULL with error. */
FsFlowList *fs_flow_list_load(const char *path, const FsTopo *topo, GError **error);
void fs_flow_list_free(FsFlowList *list);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsFlowList, fs_flow_list_free)

/* Replays the list on a new simulation over topo with the given model and
 * routing options, filling each record's results.  FALSE with error when a
 * pair has no route (or the run fails). */
gboolean fs_flow_list_replay(FsFlowList *list, const FsTopo *topo, FsNetModel model,
                             const FsRouteOptions *opt, GError **error);
/* The same on the caller's router (its flow network and simulator, which
 * must be idle), from the simulator's current time, so that the caller
 * can observe the network (link statistics, a link sampler). */
gboolean fs_flow_list_replay_on(FsFlowList *list, FsRouter *router, GError **error);

G_END_DECLS
