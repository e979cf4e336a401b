/* fuzz-flows.c — libFuzzer driver for the flow list reader (src/net/flowfile.c,
 * CSV and JSON) on the DGX H100 topology.
 *
 * The bytes go to fs_flow_list_load_string named "fuzz.csv" (JSON when they
 * start with '{' or '[').  Promises checked: a rejection is one line in
 * FS_NET_ERROR starting "fuzz.csv:LINE:COL: "; an accepted list has unique
 * non-empty ids, GPU or CPU endpoints, dependencies on other flows only and
 * no cycle (a topological order exists).  Lists of at most 64 flows are
 * then replayed: every flow finishes, not before its start nor before the
 * flows it depends on, or the replay fails with a routing error.  Corpus:
 * tests/data/flows/.
 */
#include "catalog/catalog.h"
#include "fuzz-common.h"
#include "net/flowfile.h"
#include "topo/topo.h"

#define INPUT_NAME "fuzz.csv"
#define MAX_REPLAY 64

static const FsTopo *topology(void)
{
  static FsTopo *topo;
  if (topo == NULL) {
    GError *error = NULL;
    FsCatalog *cat = fs_catalog_load_default(NULL, &error);
    if (cat == NULL)
      fs_fuzz_fail("cannot load the catalog: %s", error->message);
    g_autofree char *path = g_build_filename(FS_SOURCE_DATA_DIR, "topologies",
                                             "dgx-h100.yaml", NULL);
    topo = fs_topo_load_file(path, cat, NULL, &error);
    if (topo == NULL)
      fs_fuzz_fail("cannot load %s: %s", path, error->message);
  }
  return topo;
}

static void check_list(const FsFlowList *l, const FsTopo *t)
{
  guint n = l->records->len;
  g_autoptr(GHashTable) ids = g_hash_table_new(g_str_hash, g_str_equal);
  g_autofree guint *indeg = g_new0(guint, n + 1);
  for (guint i = 0; i < n; i++) {
    const FsFlowRecord *r = g_ptr_array_index(l->records, i);
    if (r->id == NULL || r->id[0] == '\0' || !g_hash_table_add(ids, r->id))
      fs_fuzz_fail("flow %u: empty or duplicate id", i);
    if (r->line < 1 || r->col < 1)
      fs_fuzz_fail("flow %u: no position", i);
    for (guint e = 0; e < 2; e++) {
      guint node = e ? r->dst : r->src;
      if (node >= fs_topo_n_nodes(t))
        fs_fuzz_fail("flow %s: endpoint %u out of range", r->id, node);
      FsNodeKind k = fs_topo_node(t, node)->kind;
      if (k != FS_NODE_GPU && k != FS_NODE_CPU)
        fs_fuzz_fail("flow %s: endpoint %u is not a GPU or a CPU", r->id, node);
    }
    for (guint k = 0; k < r->n_deps; k++)
      if (r->deps[k] >= n || r->deps[k] == i)
        fs_fuzz_fail("flow %s: dependency %u out of range or on itself", r->id, r->deps[k]);
    indeg[i] = r->n_deps;
  }
  /* Acyclic: repeatedly retire flows whose dependencies are all retired. */
  g_autofree gboolean *gone = g_new0(gboolean, n + 1);
  for (guint left = n, progress = 1; left > 0 && progress;) {
    progress = 0;
    for (guint i = 0; i < n; i++) {
      const FsFlowRecord *r = g_ptr_array_index(l->records, i);
      if (gone[i])
        continue;
      gboolean ready = TRUE;
      for (guint k = 0; k < r->n_deps && ready; k++)
        ready = gone[r->deps[k]];
      if (ready) {
        gone[i] = TRUE;
        left--;
        progress = 1;
      }
    }
    if (left > 0 && !progress)
      fs_fuzz_fail("an accepted list has a dependency cycle");
  }
}

static void replay(FsFlowList *l, const FsTopo *t)
{
  FsRouteOptions opt;
  fs_route_options_init(&opt);
  GError *error = NULL;
  if (!fs_flow_list_replay(l, t, FS_NET_MAXMIN, &opt, &error)) {
    fs_fuzz_check_one_line(error);
    if (!g_error_matches(error, FS_NET_ERROR, FS_NET_ERROR_NO_ROUTE))
      fs_fuzz_fail("replay failed with something else than a routing error: %s",
                   error->message);
    g_error_free(error);
    return;
  }
  for (guint i = 0; i < l->records->len; i++) {
    const FsFlowRecord *r = g_ptr_array_index(l->records, i);
    if (!r->done)
      fs_fuzz_fail("flow %s never finished", r->id);
    if (r->info.start < r->start || r->info.finish < r->info.start)
      fs_fuzz_fail("flow %s: start %" G_GINT64_FORMAT ", began %" G_GINT64_FORMAT
                   ", finished %" G_GINT64_FORMAT, r->id, r->start, r->info.start,
                   r->info.finish);
    for (guint k = 0; k < r->n_deps; k++) {
      const FsFlowRecord *d = g_ptr_array_index(l->records, r->deps[k]);
      if (r->info.start < d->info.finish)
        fs_fuzz_fail("flow %s began before its dependency %s finished", r->id, d->id);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const FsTopo *t = topology();
  g_autofree char *text = fs_fuzz_text(data, size);
  GError *error = NULL;
  FsFlowList *l = fs_flow_list_load_string(text, size, INPUT_NAME, t, &error);
  if (l == NULL) {
    fs_fuzz_rejected(error, INPUT_NAME, FS_NET_ERROR, 0, "flow list");
    return 0;
  }
  if (error != NULL)
    fs_fuzz_fail("the load succeeded but set an error: %s", error->message);
  check_list(l, t);
  if (l->records->len <= MAX_REPLAY)
    replay(l, t);
  fs_flow_list_free(l);
  return 0;
}
