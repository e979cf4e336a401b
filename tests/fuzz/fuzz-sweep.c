/* fuzz-sweep.c — libFuzzer driver for the sweep spec reader
 * (src/sweep/spec.c).
 *
 * The bytes go to fs_sweep_spec_load_string named "fuzz.yaml" in
 * tests/data/sweep/ (so relative paths resolve beside the corpus).
 * Promises checked: a rejection is one line in FS_SWEEP_ERROR or
 * FS_YAML_ERROR starting "…/fuzz.yaml:LINE:COL: "; an accepted spec has a
 * kind, 1 to FS_SWEEP_MAX_POINTS points and named axes, and on its first,
 * last and a middle point each axis has the value the text gives it (grid,
 * else the point's list entry, else set: a list entry may leave out an
 * axis that another entry names, and then the point has no value for it),
 * the settings are set's other keys then the axes that have a value, and
 * paths resolve (or are absent).  Corpus: tests/data/sweep/.
 */
#include "fuzz-common.h"
#include "sweep/sweep.h"
#include "util/yaml.h"

static const char *corpus_dir(void)
{
  static char *dir;
  if (dir == NULL)
    dir = g_build_filename(FS_SOURCE_DATA_DIR, "tests", "data", "sweep", NULL);
  return dir;
}

/* The number of values of a grid axis (a scalar is one value). */
static guint axis_len(const FsYamlNode *vals)
{
  return vals->kind == FS_YAML_SEQ ? vals->n : 1;
}

/* What the spec text says the value of key at point p is, read again from
 * the YAML tree: the grid's value (last axis fastest), else the point's
 * list entry's, else set's, else none.  A list entry need not name every
 * key another entry names, so an axis may have no value at a point. */
static const char *expected_value(const FsYamlNode *root, guint n_points, guint p, const char *key)
{
  const FsYamlNode *grid = fs_yaml_map_get(root, "grid");
  const FsYamlNode *list = fs_yaml_map_get(root, "list");
  const FsYamlNode *set = fs_yaml_map_get(root, "set");
  guint n_grid = 1;
  for (guint i = 0; grid != NULL && i < grid->n; i++)
    n_grid *= axis_len(grid->values[i]);
  for (guint a = 0; grid != NULL && a < grid->n; a++) {
    if (strcmp(grid->keys[a]->value, key) != 0)
      continue;
    guint g = p % n_grid;
    for (guint i = grid->n; i-- > a + 1;)
      g /= axis_len(grid->values[i]);
    const FsYamlNode *vals = grid->values[a];
    return vals->kind == FS_YAML_SEQ ? vals->values[g % vals->n]->value : vals->value;
  }
  if (list != NULL) {
    if (list->n != n_points / n_grid)
      fs_fuzz_fail("%u points from %u list entries and %u grid combinations", n_points, list->n,
                   n_grid);
    const FsYamlNode *v = fs_yaml_map_get(list->values[p / n_grid], key);
    if (v != NULL)
      return v->value;
  }
  const FsYamlNode *v = set ? fs_yaml_map_get(set, key) : NULL;
  return v ? v->value : NULL;
}

static gboolean is_axis(const FsSweepSpec *s, const char *key)
{
  for (guint a = 0; a < fs_sweep_spec_n_axes(s); a++)
    if (strcmp(fs_sweep_spec_axis(s, a), key) == 0)
      return TRUE;
  return FALSE;
}

/* Point p's values and settings are the ones the text gives: every axis
 * has the value expected_value finds (or none where it finds none); the
 * settings are set's keys that are no axis, then the axes that have a
 * value, in axis order. */
static void check_point(const FsSweepSpec *s, const FsYamlNode *root, guint p)
{
  const char *keys[256], *values[256];
  guint want = 0;
  const FsYamlNode *set = fs_yaml_map_get(root, "set");
  for (guint i = 0; set != NULL && i < set->n; i++)
    if (!is_axis(s, set->keys[i]->value) && want < G_N_ELEMENTS(keys))
      keys[want++] = set->keys[i]->value;
  for (guint a = 0; a < fs_sweep_spec_n_axes(s); a++) {
    const char *key = fs_sweep_spec_axis(s, a);
    if (key == NULL || key[0] == '\0')
      fs_fuzz_fail("axis %u has no name", a);
    const char *have = fs_sweep_point_get(s, p, key);
    const char *expect = expected_value(root, fs_sweep_spec_n_points(s), p, key);
    if ((have == NULL) != (expect == NULL) || (have != NULL && strcmp(have, expect) != 0))
      fs_fuzz_fail("point %u, axis %s: value \"%s\", the text says \"%s\"", p, key,
                   have ? have : "(none)", expect ? expect : "(none)");
    if (have != NULL && want < G_N_ELEMENTS(keys))
      keys[want++] = key;
  }
  const char *got_keys[256];
  guint n = fs_sweep_point_settings(s, p, got_keys, values, G_N_ELEMENTS(got_keys) - 1);
  if (n != MIN(want, G_N_ELEMENTS(got_keys) - 1))
    fs_fuzz_fail("point %u: %u settings, the text gives %u", p, n, want);
  for (guint i = 0; i < n; i++)
    if (got_keys[i] == NULL || values[i] == NULL || strcmp(got_keys[i], keys[i]) != 0)
      fs_fuzz_fail("point %u: setting %u is %s, expected %s", p, i,
                   got_keys[i] ? got_keys[i] : "NULL", keys[i]);
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
  /* The text parsed once more, to know what each point must hold. */
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_string(text, -1, name, NULL);
  if (doc == NULL || fs_yaml_doc_root(doc) == NULL)
    fs_fuzz_fail("an accepted spec does not load as YAML a second time");
  check_point(s, fs_yaml_doc_root(doc), 0);
  check_point(s, fs_yaml_doc_root(doc), n / 2);
  check_point(s, fs_yaml_doc_root(doc), n - 1);
  fs_sweep_spec_free(s);
  return 0;
}
