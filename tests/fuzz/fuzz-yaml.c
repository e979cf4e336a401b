/* fuzz-yaml.c — libFuzzer driver for the YAML tree and its getters
 * (src/util/yaml.c, src/util/yaml-get.c).
 *
 * The bytes (not NUL-terminated: the loader must respect the length) go to
 * fs_yaml_load_string.  Promises checked: a rejection sets one FS_YAML_ERROR
 * whose message is one line starting "fuzz.yaml:LINE:COL: "; an accepted
 * tree has positions >= 1 and the document's file name on every node,
 * scalar keys in mappings, no duplicate keys, and nesting within
 * FS_YAML_MAX_DEPTH; every typed getter applied to every node either
 * succeeds or fails with such a message.  Corpus: tests/data/yaml/.
 */
#include "fuzz-common.h"
#include "util/yaml.h"

/* Distinct nodes visited per input at most (each is visited once: aliases
 * make the tree a DAG whose expansion can reach FS_YAML_MAX_NODES). */
#define MAX_VISITS 5000
/* Of those, the first this many go through every getter (error messages
 * are allocation-heavy under ASan; more would only slow the fuzzer). */
#define MAX_GETTER_NODES 24

/* Checks a getter's outcome; frees the error. */
static void check_get_at(const char *call, gboolean ok, GError *error)
{
  if (ok) {
    if (error != NULL)
      fs_fuzz_fail("%s succeeded but set an error: %s", call, error->message);
    return;
  }
  if (error == NULL)
    fs_fuzz_fail("%s failed without setting an error", call);
  fs_fuzz_check_input_error(error, FS_FUZZ_NAME);
  if (error->domain != FS_YAML_ERROR)
    fs_fuzz_fail("getter error outside FS_YAML_ERROR: %s", error->message);
  g_error_free(error);
}

/* Runs one call that may set e, then checks its outcome. */
#define CHECK(call)                  \
  do {                               \
    e = NULL;                        \
    gboolean ok_ = (call);           \
    check_get_at(#call, ok_, e);     \
  } while (0)

/* Every typed getter on one node. */
static void exercise_getters(const FsYamlNode *node)
{
  GError *e = NULL;
  const char *s;
  gboolean b;
  int64_t i;
  double d;
  uint64_t u;
  FsTime t;
  CHECK(fs_yaml_get_string(node, &s, &e));
  CHECK(fs_yaml_get_bool(node, &b, &e));
  CHECK(fs_yaml_get_int(node, INT64_MIN, INT64_MAX, &i, &e));
  CHECK(fs_yaml_get_int(node, 0, 100, &i, &e));
  CHECK(fs_yaml_get_int(node, -5, INT64_MAX, &i, &e));
  CHECK(fs_yaml_get_int(node, INT64_MIN, 5, &i, &e));
  CHECK(fs_yaml_get_double(node, 0, 1, &d, &e));
  CHECK(fs_yaml_get_bandwidth(node, &d, &e));
  CHECK(fs_yaml_get_lane_rate(node, &d, &e));
  CHECK(fs_yaml_get_time(node, &t, &e));
  CHECK(fs_yaml_get_size(node, &u, &e));
  CHECK(fs_yaml_get_power(node, &d, &e));
  CHECK(fs_yaml_get_flops(node, &d, &e));
  CHECK(fs_yaml_require_map(node, &e));
  CHECK(fs_yaml_require_seq(node, &e));
}

/* Keys a fabricsim schema might ask for, to drive the map helpers. */
static const char *const some_keys[] = {"name", "kind", "models", "latency", "bandwidth",
                                        "count", "source", NULL};

static void exercise_map(const FsYamlNode *map)
{
  GError *e = NULL;
  CHECK(fs_yaml_check_keys(map, some_keys, "a fuzzed mapping", &e));
  CHECK(fs_yaml_require_key(map, "name", "a fuzzed mapping", &e) != NULL);
  const char *s;
  gboolean b;
  int64_t i;
  double d;
  uint64_t u;
  FsTime t;
  CHECK(fs_yaml_opt_string(map, "name", &s, &e));
  CHECK(fs_yaml_opt_bool(map, "kind", &b, &e));
  CHECK(fs_yaml_opt_int(map, "count", 1, 1000, &i, &e));
  CHECK(fs_yaml_opt_double(map, "source", -1, 1, &d, &e));
  CHECK(fs_yaml_opt_bandwidth(map, "bandwidth", &d, &e));
  CHECK(fs_yaml_opt_time(map, "latency", &t, &e));
  CHECK(fs_yaml_opt_size(map, "models", &u, &e));
}

static void walk(const FsYamlNode *node, guint depth, GHashTable *seen)
{
  if (g_hash_table_size(seen) >= MAX_VISITS || !g_hash_table_add(seen, (gpointer)node))
    return;
  if (node->kind != FS_YAML_SCALAR && depth > FS_YAML_MAX_DEPTH)
    fs_fuzz_fail("the tree nests deeper than FS_YAML_MAX_DEPTH");
  if (node->line < 1 || node->col < 1)
    fs_fuzz_fail("node at %d:%d: positions are 1-based", node->line, node->col);
  if (node->file == NULL || strcmp(node->file, FS_FUZZ_NAME) != 0)
    fs_fuzz_fail("node at %d:%d does not carry the document's name", node->line, node->col);
  gboolean getters = g_hash_table_size(seen) <= MAX_GETTER_NODES;
  if (getters)
    exercise_getters(node);
  switch (node->kind) {
  case FS_YAML_SCALAR:
    if (node->value == NULL)
      fs_fuzz_fail("scalar at %d:%d has no text", node->line, node->col);
    if (node->is_null && (node->quoted || node->value[0] != '\0'))
      fs_fuzz_fail("null scalar at %d:%d is quoted or has text", node->line, node->col);
    break;
  case FS_YAML_MAP:
    if (getters)
      exercise_map(node);
    for (guint i = 0; i < node->n; i++) {
      const FsYamlNode *k = node->keys[i];
      if (k == NULL || k->kind != FS_YAML_SCALAR)
        fs_fuzz_fail("mapping at %d:%d has a non-scalar key", node->line, node->col);
      /* Small maps only: the check is quadratic. */
      for (guint j = 0; j < i && node->n <= 64; j++)
        if (strcmp(node->keys[j]->value, k->value) == 0)
          fs_fuzz_fail("mapping at %d:%d has the key \"%s\" twice", node->line, node->col,
                       k->value);
      if (fs_yaml_map_get(node, k->value) == NULL)
        fs_fuzz_fail("fs_yaml_map_get does not find the key \"%s\"", k->value);
      walk(k, depth + 1, seen);
      walk(node->values[i], depth + 1, seen);
    }
    break;
  case FS_YAML_SEQ:
    if (node->keys != NULL)
      fs_fuzz_fail("list at %d:%d has keys", node->line, node->col);
    for (guint i = 0; i < node->n; i++)
      walk(node->values[i], depth + 1, seen);
    break;
  default:
    fs_fuzz_fail("node of unknown kind %d", (int)node->kind);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  GError *error = NULL;
  FsYamlDoc *doc = fs_yaml_load_string((const char *)data, (gssize)size, FS_FUZZ_NAME, &error);
  if (doc == NULL) {
    fs_fuzz_check_input_error(error, FS_FUZZ_NAME);
    if (error->domain != FS_YAML_ERROR)
      fs_fuzz_fail("load error outside FS_YAML_ERROR: %s", error->message);
    g_error_free(error);
    return 0;
  }
  if (error != NULL)
    fs_fuzz_fail("the document loaded but an error was set: %s", error->message);
  if (strcmp(fs_yaml_doc_name(doc), FS_FUZZ_NAME) != 0)
    fs_fuzz_fail("the document lost its name");
  const FsYamlNode *root = fs_yaml_doc_root(doc);
  GHashTable *seen = g_hash_table_new(NULL, NULL);
  if (root != NULL)
    walk(root, 1, seen);
  g_hash_table_destroy(seen);
  fs_yaml_doc_free(doc);
  return 0;
}
