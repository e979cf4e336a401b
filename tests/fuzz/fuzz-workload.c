/* fuzz-workload.c — libFuzzer driver for the workload job spec loader
 * (src/workload/spec.c, spec-fields.c, spec-views.c, placement.c).
 *
 * The text goes to fs_workload_load_string, named as a file in
 * tests/data/workload/ so that presets resolve beside the corpus first,
 * then in workloads/.  Promises checked: errors are one line, in
 * FS_WORKLOAD_ERROR or FS_YAML_ERROR, and start with a file name (the input
 * or a preset) and LINE:COL when they give a position; a loaded workload
 * re-resolves for other GPU counts without crashing, and its views (model
 * FLOPs, kernels per chunk and pass, optimizer kernels, memory estimate on
 * an H100) run, with finite non-negative totals.  Corpus: tests/data/workload/.
 */
#include <math.h>

#include "catalog/catalog.h"
#include "fuzz-common.h"
#include "util/yaml.h"
#include "workload/spec.h"

/* Workloads with more model chunks or layers than these skip the
 * per-chunk views, whose cost is linear in the layers (model.layers may be
 * 100,000: seconds per input under ASan, run 12 times here). */
#define MAX_CHUNKS 64
#define MAX_VIEW_LAYERS 4096

static const char *input_name(void)
{
  static char *name;
  if (name == NULL)
    name = g_build_filename(FS_SOURCE_DATA_DIR, "tests", "data", "workload",
                            FS_FUZZ_NAME, NULL);
  return name;
}

static const FsGpuModel *h100(void)
{
  static FsCatalog *cat;
  if (cat == NULL) {
    GError *error = NULL;
    cat = fs_catalog_load_default(NULL, &error);
    if (cat == NULL)
      fs_fuzz_fail("cannot load the catalog: %s", error->message);
  }
  const FsModel *m = fs_catalog_get(cat, "h100-sxm");
  if (m == NULL || m->kind != FS_MODEL_GPU)
    fs_fuzz_fail("the catalog has no h100-sxm GPU");
  return &m->u.gpu;
}

static void check_error(GError *error)
{
  fs_fuzz_check_one_line(error);
  if (error->domain != FS_WORKLOAD_ERROR && error->domain != FS_YAML_ERROR)
    fs_fuzz_fail("workload error in another domain: %s", error->message);
  const char *m = error->message, *colon = strchr(m, ':');
  if (colon == NULL || colon == m)
    fs_fuzz_fail("workload error does not start with a file name: %s", m);
  g_autofree char *file = g_strndup(m, (gsize)(colon - m));
  fs_fuzz_check_input_error(error, file);
  g_error_free(error);
}

static void exercise(FsWorkload *w)
{
  double params = fs_workload_params(w), flops = fs_workload_step_model_flops(w, FALSE);
  if (!(params >= 0) || !isfinite(params) || !(flops >= 0) || isnan(flops))
    fs_fuzz_fail("params %g, step FLOPs %g", params, flops);
  guint chunks = fs_workload_chunks(w);
  if (chunks <= MAX_CHUNKS && w->model.layers <= MAX_VIEW_LAYERS &&
      w->n_layers <= MAX_VIEW_LAYERS) {
    for (guint c = 0; c < chunks; c++)
      for (int pass = FS_PASS_FORWARD; pass <= FS_PASS_RECOMPUTE; pass++)
        g_array_unref(fs_workload_chunk_kernels(w, c, (FsKernelPass)pass));
    for (guint s = 0; s <= w->pp && s <= MAX_CHUNKS; s++) {
      GError *error = NULL;
      GArray *k = fs_workload_optimizer_kernels(w, s, &error);
      if (k != NULL)
        g_array_unref(k);
      else
        g_error_free(error);
    }
  }
  FsMemoryBreakdown mem;
  GError *error = NULL;
  if (!fs_workload_memory_estimate(w, h100(), &mem, &error)) {
    fs_fuzz_check_one_line(error);
    g_error_free(error);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* A smaller layer limit (read at the first load): 100,000 layers are
   * legal but take seconds under ASan and find nothing new. */
  g_setenv("FABRICSIM_MAX_LAYERS", "4096", FALSE);
  g_autofree char *text = g_strndup((const char *)data, size);
  GError *error = NULL;
  FsWorkload *w = fs_workload_load_string(text, input_name(), NULL, NULL, &error);
  if (w == NULL) {
    check_error(error);
    return 0;
  }
  if (error != NULL)
    fs_fuzz_fail("the workload loaded but an error was set: %s", error->message);
  exercise(w);
  /* The same spec on other machines: each either resolves or says why. */
  static const guint gpus[] = {1, 8, 1024};
  for (guint i = 0; i < G_N_ELEMENTS(gpus); i++) {
    if (fs_workload_resolve(w, gpus[i], &error))
      exercise(w);
    else
      check_error(error), error = NULL;
  }
  fs_workload_free(w);
  return 0;
}
