/* fuzz-catalog.c — libFuzzer driver for the hardware catalog loader
 * (src/catalog/: parse.c, catalog.c, explain.c, json.c).
 *
 * The bytes go to fs_catalog_load_string as one models file, then
 * fs_catalog_resolve.  Promises checked: errors are one line, in
 * FS_CATALOG_ERROR or FS_YAML_ERROR, and start "fuzz.yaml:LINE:COL: "
 * (resolve errors name the referring entry); a failed load adds nothing
 * (all or nothing); loading the same text twice fails with a duplicate
 * unless it defines no model; every loaded model can be explained and
 * turned into JSON, and lookups by name find it.  Corpus: tests/data/models/.
 */
#include <jansson.h>

#include "catalog/catalog-json.h"
#include "catalog/catalog.h"
#include "fuzz-common.h"
#include "util/yaml.h"

static void check_error(GError *error)
{
  fs_fuzz_check_input_error(error, FS_FUZZ_NAME);
  if (error->domain != FS_CATALOG_ERROR && error->domain != FS_YAML_ERROR)
    fs_fuzz_fail("catalog error in another domain: %s", error->message);
  g_error_free(error);
}

/* Everything a command may do with a resolved model. */
static void exercise_model(const FsCatalog *cat, const FsModel *m)
{
  if (m->name == NULL || m->source == NULL || m->file == NULL)
    fs_fuzz_fail("a model lacks its name, source or file");
  if (fs_catalog_get(cat, m->name) != m)
    fs_fuzz_fail("fs_catalog_get(\"%s\") does not find the model", m->name);
  g_free(fs_model_explain(m));
  if (m->kind == FS_MODEL_LINK) {
    g_free(fs_link_model_explain(m));
    g_free(fs_link_model_label(m));
  }
  json_t *j = fs_model_to_json(m);
  char *text = json_dumps(j, JSON_COMPACT);
  if (text == NULL)
    fs_fuzz_fail("model \"%s\" does not serialise to JSON", m->name);
  free(text);
  json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  FsCatalog *cat = fs_catalog_new();
  GError *error = NULL;
  if (!fs_catalog_load_string(cat, (const char *)data, (gssize)size, FS_FUZZ_NAME, &error)) {
    check_error(error);
    if (fs_catalog_size(cat) != 0)
      fs_fuzz_fail("a failed load left %u models in the catalog", fs_catalog_size(cat));
    fs_catalog_free(cat);
    return 0;
  }
  guint n = fs_catalog_size(cat);
  if (!fs_catalog_resolve(cat, &error)) {
    check_error(error);
    fs_catalog_free(cat);
    return 0;
  }
  for (guint i = 0; i < n; i++) {
    const FsModel *m = fs_catalog_nth(cat, i);
    exercise_model(cat, m);
    if (i > 0 && fs_catalog_nth(cat, i - 1) == m)
      fs_fuzz_fail("fs_catalog_nth repeats a model");
  }
  json_decref(fs_catalog_to_json(cat, -1));
  /* A second copy of the same file: every name is now a duplicate. */
  if (fs_catalog_load_string(cat, (const char *)data, (gssize)size, FS_FUZZ_NAME, &error)) {
    if (n > 0)
      fs_fuzz_fail("loading %u models twice did not report a duplicate", n);
  } else {
    check_error(error);
    if (fs_catalog_size(cat) != n)
      fs_fuzz_fail("a failed second load changed the catalog size from %u to %u", n,
                   fs_catalog_size(cat));
  }
  fs_catalog_free(cat);
  return 0;
}
