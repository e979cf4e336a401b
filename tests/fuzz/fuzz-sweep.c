/* fuzz-sweep.c — libFuzzer driver for the sweep spec reader
 * (src/sweep/spec.c).
 *
 * The bytes go to fs_sweep_spec_load_string named "fuzz.yaml" in
 * tests/data/sweep/ (so relative paths resolve beside the corpus).
 * Promises checked: a rejection is one line in FS_SWEEP_ERROR or
 * FS_YAML_ERROR starting "…/fuzz.yaml:LINE:COL: "; an accepted spec has a
 * kind, 1 to FS_SWEEP_MAX_POINTS points and named axes, and on its first,
 * last and a middle point every axis has a value, the settings list every
 * axis, and paths resolve (or are absent).  Corpus: tests/data/sweep/.
 */
#include "fuzz-common.h"
#include "sweep/sweep.h"
#include "util/yaml.h"

static const char *corpus_dir(void)
{
  static char *dir;
  if (dir == NULL)
    dir = g_build_filename(FS_SOURCE_MODELS_DIR, "..", "tests", "data", "sweep", NULL);
  return dir;
}

static void check_point(const FsSweepSpec *s, guint p)
{
  for (guint a = 0; a < fs_sweep_spec_n_axes(s); a++) {
    const char *key = fs_sweep_spec_axis(s, a);
    if (key == NULL || key[0] == '\0')
      fs_fuzz_fail("axis %u has no name", a);
    if (fs_sweep_point_get(s, p, key) == NULL)
      fs_fuzz_fail("point %u has no value for axis %s", p, key);
  }
  const char *keys[256], *values[256];
  guint n = fs_sweep_point_settings(s, p, keys, values, G_N_ELEMENTS(keys) - 1);
  if (n < MIN(fs_sweep_spec_n_axes(s), G_N_ELEMENTS(keys) - 1))
    fs_fuzz_fail("point %u: %u settings for %u axes", p, n, fs_sweep_spec_n_axes(s));
  for (guint i = 0; i < n && i < G_N_ELEMENTS(keys) - 1; i++)
    if (keys[i] == NULL || values[i] == NULL)
      fs_fuzz_fail("point %u: setting %u is NULL", p, i);
  g_free(fs_sweep_point_path(s, p, "topology"));
  g_free(fs_sweep_point_path(s, p, "workload"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  g_autofree char *text = fs_fuzz_text(data, size);
  g_autofree char *name = g_build_filename(corpus_dir(), FS_FUZZ_NAME, NULL);
  GError *error = NULL;
  FsSweepSpec *s = fs_sweep_spec_load_string(text, name, corpus_dir(), &error);
  if (s == NULL) {
    fs_fuzz_rejected(error, name, FS_SWEEP_ERROR, FS_YAML_ERROR, "sweep");
    return 0;
  }
  if (error != NULL)
    fs_fuzz_fail("the load succeeded but set an error: %s", error->message);
  guint n = fs_sweep_spec_n_points(s);
  if (n < 1 || n > FS_SWEEP_MAX_POINTS || fs_sweep_spec_kind(s) == NULL)
    fs_fuzz_fail("an accepted spec has %u points or no kind", n);
  check_point(s, 0);
  check_point(s, n / 2);
  check_point(s, n - 1);
  fs_sweep_spec_free(s);
  return 0;
}
