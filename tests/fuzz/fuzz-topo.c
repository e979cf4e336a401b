/* fuzz-topo.c — libFuzzer driver for the topology loader (src/topo/:
 * loader.c, loader-gen.c, names.c, gen.c, topo.c, validate.c) and what
 * `fabricsim topo` does with a loaded topology (paths, bisection, DOT).
 *
 * The text goes to fs_topo_load_string over the real catalog (models/),
 * named as a file in tests/data/topo/ so that the corpus' relative
 * includes (tests/data/topo/inc/) resolve the same way in every run.
 * Promises checked: errors are one line, in FS_TOPO_ERROR or FS_YAML_ERROR,
 * and start with a file name and, after it, LINE:COL when they give a
 * position (an error in an included file names that file); a loaded
 * topology has every node findable by name, links between distinct
 * existing nodes with a count of at least 1 and a positive bandwidth, and
 * GPU ranks that match the GPU list; path classification, bisection and
 * DOT output run on it.  Corpus: tests/data/topo/.
 */
#include "catalog/catalog.h"
#include "fuzz-common.h"
#include "topo/paths.h"
#include "topo/topo.h"
#include "util/yaml.h"

/* Inputs above this many nodes skip the quadratic path matrix. */
#define MATRIX_GPUS 64

/* Small size limits: a 60-byte input may otherwise ask for a million GPUs
 * (within the default limits, and seconds under ASan), which finds
 * nothing new and stalls the fuzzer.  The limit checks themselves still
 * run, at these values. */
static const FsTopoLimits fuzz_limits = {4096, 16384, 65536};

static const FsCatalog *catalog(void)
{
  static FsCatalog *cat;
  if (cat == NULL) {
    fs_topo_set_limits(&fuzz_limits);
    GError *error = NULL;
    cat = fs_catalog_load_default(NULL, &error);
    if (cat == NULL)
      fs_fuzz_fail("cannot load the catalog: %s", error->message);
  }
  return cat;
}

static const char *input_name(void)
{
  static char *name;
  if (name == NULL)
    name = g_build_filename(FS_SOURCE_DATA_DIR, "tests", "data", "topo", FS_FUZZ_NAME,
                            NULL);
  return name;
}

/* "FILE:LINE:COL: ", "FILE:LINE: " or "FILE: " for some FILE without ':'. */
static void check_error(GError *error)
{
  fs_fuzz_check_one_line(error);
  if (error->domain != FS_TOPO_ERROR && error->domain != FS_YAML_ERROR)
    fs_fuzz_fail("topology error in another domain: %s", error->message);
  const char *m = error->message, *colon = strchr(m, ':');
  if (colon == NULL || colon == m)
    fs_fuzz_fail("topology error does not start with a file name: %s", m);
  g_autofree char *file = g_strndup(m, (gsize)(colon - m));
  fs_fuzz_check_input_error(error, file);
  g_error_free(error);
}

static void check_topology(const FsTopo *topo)
{
  guint n = fs_topo_n_nodes(topo), nl = fs_topo_n_links(topo);
  for (guint i = 0; i < n; i++) {
    const FsTopoNode *node = fs_topo_node(topo, i);
    if (node->name == NULL || fs_topo_find(topo, node->name) != (int)i)
      fs_fuzz_fail("node %u (%s) is not found by its name", i, node->name ? node->name : "?");
    if (node->model == NULL)
      fs_fuzz_fail("node %s has no model", node->name);
    guint na;
    const FsTopoAdj *adj = fs_topo_adj(topo, i, &na);
    for (guint k = 0; k < na; k++)
      if (adj[k].link >= nl || adj[k].peer >= n)
        fs_fuzz_fail("node %s has an adjacency entry out of range", node->name);
  }
  for (guint i = 0; i < nl; i++) {
    const FsTopoLink *l = fs_topo_link(topo, i);
    if (l->a >= n || l->b >= n || l->a == l->b)
      fs_fuzz_fail("link %u joins %u and %u of %u nodes", i, l->a, l->b, n);
    if (l->count < 1 || !(l->bandwidth > 0) || l->latency < 0)
      fs_fuzz_fail("link %u has count %u, bandwidth %g, latency %" G_GINT64_FORMAT, i, l->count,
                   l->bandwidth, l->latency);
  }
  guint ng;
  const guint *gpus = fs_topo_gpus(topo, &ng);
  for (guint r = 0; r < ng; r++) {
    if (gpus[r] >= n || fs_topo_node(topo, gpus[r])->gpu_rank != (int)r)
      fs_fuzz_fail("GPU list entry %u does not match the node's rank", r);
  }
  for (guint h = 0; h < fs_topo_n_hosts(topo); h++)
    if (fs_topo_host_name(topo, h) == NULL)
      fs_fuzz_fail("host %u has no name", h);
  if (ng <= MATRIX_GPUS) {
    g_free(fs_topo_paths_matrix(topo));
    for (guint a = 0; a < ng; a++)
      for (guint b = 0; b < ng; b++) {
        guint nv = 0;
        FsPathType p = fs_topo_path_type(topo, gpus[a], gpus[b], &nv);
        g_free(fs_path_label(p, nv));
      }
  }
  if (n <= 100000) {
    double bis = fs_topo_bisection(topo);
    if (!(bis >= 0))
      fs_fuzz_fail("negative or NaN bisection bandwidth %g", bis);
    g_free(fs_topo_to_dot(topo));
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const FsCatalog *cat = catalog();
  g_autofree char *text = g_strndup((const char *)data, size);
  GError *error = NULL;
  FsTopo *topo = fs_topo_load_string(text, input_name(), cat, NULL, &error);
  if (topo == NULL) {
    check_error(error);
    return 0;
  }
  if (error != NULL)
    fs_fuzz_fail("the topology loaded but an error was set: %s", error->message);
  check_topology(topo);
  fs_topo_free(topo);
  return 0;
}
