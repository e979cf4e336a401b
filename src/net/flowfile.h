/* flowfile.h — flow lists for `fabricsim flows`: read a CSV or JSON list of
 * transfers (id, start, src, dst, bytes, optional dependencies), replay it
 * on a topology through the router and the flow network, and keep each
 * transfer's result.  Format and example in tests/data/flows/README.md.
 *
 * A transfer starts at max(its start, the finish of every transfer it
 * depends on).  Ids are unique; a dependency on an unknown id or a cycle
 * is an input error.  Errors: FS_NET_ERROR_INPUT with "file:line:col: "
 * (JSON: "file:line:col: $.flows[i].member: ", each flow object read
 * against its declared fields, fs_flow_list_schemas, so that an unknown
 * key is refused with "did you mean"), FS_NET_ERROR_NO_ROUTE from routing, FS_UNITS_ERROR
 * texts wrapped.  A list holds at most fs_flow_list_max_flows() transfers
 * (FS_FLOW_LIST_MAX_FLOWS, or the environment variable FABRICSIM_MAX_FLOWS).
 *
 * Ownership: FsFlowList owns its records and strings.  Memory O(flows +
 * dependencies); the replay runs all ready transfers concurrently.
 */
#pragma once

#include <glib.h>

#include "net/flow.h"
#include "net/route.h"
#include "topo/topo.h"
#include "util/schema.h"

G_BEGIN_DECLS

typedef struct {
  char *id;
  FsTime start;           /* as given */
  guint src, dst;         /* topology nodes */
  uint64_t bytes;
  guint *deps;            /* indices of the transfers it waits for */
  guint n_deps;
  int line, col;          /* where the record starts (CSV: its line, column 1) */
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
/* The same from len bytes of text; name stands for the file in messages
 * and, ending in ".json", selects JSON.  A NUL byte is an input error. */
FsFlowList *fs_flow_list_load_string(const char *text, gsize len, const char *name,
                                     const FsTopo *topo, GError **error);

/* The declared fields of a JSON flow list (util/schema.h), with the names
 * tests/data/flows/README.md's generated tables give them ("flows.flow");
 * *n receives the count.  Static, borrowed. */
const FsSchemaEntry *fs_flow_list_schemas(guint *n);

/* The default limit on transfers in one list (10 M: a few GiB of records);
 * also on those an alltoall's step run holds at once (collrun/alone.c). */
#define FS_FLOW_LIST_MAX_FLOWS 10000000u
/* The limit in force: FABRICSIM_MAX_FLOWS when set to a positive integer,
 * else FS_FLOW_LIST_MAX_FLOWS. */
guint fs_flow_list_max_flows(void);
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
