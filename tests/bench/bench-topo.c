/* bench-topo.c — topology load, generation and analysis at cluster scale.
 *
 * Measures, each the best of --repeat runs:
 *   load       fs_topo_load_file of topologies/dgx-h100-ib-ndr.yaml with
 *              -D nodes=N/8 (N GPUs: template instantiation of N/8 DGX H100
 *              nodes, rail-optimized NDR fat-tree, finalize, validate);
 *   generate   the C generator alone: N GPUs as endpoints of a fat-tree of
 *              64-port switches (three levels at 16,384), finalize, validate;
 *   bisection  fs_topo_bisection (Dinic max-flow) on the loaded cluster;
 *   paths      fs_topo_path_type for GPU 0 against every GPU.
 * Output: one line per measurement, key=value fields:
 *   step=load gpus=16384 nodes=54272 links=137216 best_s=0.210 peak_rss_mib=27.9
 * peak_rss_mib is the process's peak resident set so far (steps run in the
 * order above, so it includes the earlier steps).
 *
 *   bench-topo [--gpus N] [--repeat R] [--models DIR] [--file PATH]
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "catalog/catalog.h"
#include "topo/gen.h"
#include "topo/paths.h"
#include "topo/topo.h"

static double peak_rss_mib(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0;
}

static void report(const char *step, const FsTopo *t, double best)
{
  guint ng;
  fs_topo_gpus(t, &ng);
  printf("step=%s gpus=%u nodes=%u links=%u best_s=%.4f peak_rss_mib=%.1f\n", step, ng,
         fs_topo_n_nodes(t), fs_topo_n_links(t), best, peak_rss_mib());
}

static FsTopo *generate(const FsCatalog *cat, guint n, GError **error)
{
  const FsModel *gpu = fs_catalog_require(cat, "h100-sxm", FS_MODEL_GPU, error);
  const FsModel *sw = gpu ? fs_catalog_require(cat, "quantum-2-ndr", FS_MODEL_SWITCH, error) : NULL;
  const FsModel *ib = sw ? fs_catalog_require(cat, "ib-ndr", FS_MODEL_LINK, error) : NULL;
  if (ib == NULL)
    return NULL;
  FsTopo *t = fs_topo_new(cat, "generated");
  g_autofree guint *ep = g_new(guint, n);
  char name[64];
  for (guint i = 0; i < n; i++) {
    int h = i % 8 == 0 ? fs_topo_add_host(t, "h") : (int)fs_topo_n_hosts(t) - 1;
    g_snprintf(name, sizeof name, "node%u/gpu%u", i / 8, i % 8);
    if (!fs_topo_add_node(t, name, gpu, h, -1, NULL, 0, 0, &ep[i], error))
      goto fail;
  }
  FsFabricSpec spec = {sw, ib, 1.0, 0, "ft", {"bench", 0, 0}};
  if (!fs_topo_gen_fat_tree(t, ep, n, &spec, NULL, error))
    goto fail;
  fs_topo_finalize(t);
  if (!fs_topo_validate(t, error))
    goto fail;
  return t;
fail:
  fs_topo_free(t);
  return NULL;
}

int main(int argc, char **argv)
{
  gint gpus = 16384, repeat = 3;
  g_autofree char *models = NULL, *file = NULL;
  GOptionEntry entries[] = {
    {"gpus", 0, 0, G_OPTION_ARG_INT, &gpus, "GPUs (a multiple of 8)", "N"},
    {"repeat", 0, 0, G_OPTION_ARG_INT, &repeat, "Runs per step (best is reported)", "R"},
    {"models", 0, 0, G_OPTION_ARG_FILENAME, &models, "Catalog folder", "DIR"},
    {"file", 0, 0, G_OPTION_ARG_FILENAME, &file, "Topology file (default: dgx-h100-ib-ndr)", "PATH"},
    {NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("- topology benchmark");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error) || gpus < 8 || gpus % 8 != 0 ||
      repeat < 1) {
    fprintf(stderr, "bench-topo: %s\n", error ? error->message : "--gpus must be a multiple of 8");
    return 2;
  }
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(models, &error);
  if (cat == NULL) {
    fprintf(stderr, "bench-topo: %s\n", error->message);
    return 2;
  }
  if (file == NULL)
    file = g_build_filename(FS_SOURCE_DATA_DIR, "topologies", "dgx-h100-ib-ndr.yaml",
                            NULL);
  g_autofree char *define = g_strdup_printf("nodes=%d", gpus / 8);
  const char *const defines[] = {define, NULL};

  FsTopo *loaded = NULL;
  double best = G_MAXDOUBLE;
  for (int r = 0; r < repeat; r++) {
    fs_topo_free(loaded);
    gint64 t0 = g_get_monotonic_time();
    loaded = fs_topo_load_file(file, cat, defines, &error);
    if (loaded == NULL) {
      fprintf(stderr, "bench-topo: %s\n", error->message);
      return 2;
    }
    best = MIN(best, (g_get_monotonic_time() - t0) / 1e6);
  }
  report("load", loaded, best);

  best = G_MAXDOUBLE;
  for (int r = 0; r < repeat; r++) {
    gint64 t0 = g_get_monotonic_time();
    FsTopo *g = generate(cat, (guint)gpus, &error);
    if (g == NULL) {
      fprintf(stderr, "bench-topo: %s\n", error->message);
      return 2;
    }
    best = MIN(best, (g_get_monotonic_time() - t0) / 1e6);
    if (r == repeat - 1)
      report("generate", g, best);
    fs_topo_free(g);
  }

  best = G_MAXDOUBLE;
  double bis = 0;
  for (int r = 0; r < repeat; r++) {
    gint64 t0 = g_get_monotonic_time();
    bis = fs_topo_bisection(loaded);
    best = MIN(best, (g_get_monotonic_time() - t0) / 1e6);
  }
  report("bisection", loaded, best);
  printf("# bisection=%.6g B/s per direction\n", bis);

  guint ng;
  const guint *g = fs_topo_gpus(loaded, &ng);
  best = G_MAXDOUBLE;
  guint nv_pairs = 0;
  for (int r = 0; r < repeat; r++) {
    gint64 t0 = g_get_monotonic_time();
    nv_pairs = 0;
    for (guint j = 0; j < ng; j++) {
      guint nv;
      nv_pairs += fs_topo_path_type(loaded, g[0], g[j], &nv) == FS_PATH_NV;
    }
    best = MIN(best, (g_get_monotonic_time() - t0) / 1e6);
  }
  report("paths", loaded, best);
  printf("# paths: GPU0 has NV# to %u GPUs\n", nv_pairs);
  fs_topo_free(loaded);
  return 0;
}
