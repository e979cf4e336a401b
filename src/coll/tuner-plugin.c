/* tuner-plugin.c — an NCCL tuner plugin's regions, loaded from a file
 * (tuner-plugin.h). */
#include <math.h>
#include <string.h>

#include "coll/comm.h"
#include "coll/plan.h"
#include "coll/tuner-plugin.h"
#include "util/datadir.h"
#include "util/error.h"
#include "util/yaml.h"

struct FsTunerPlugin {
  char *name;
  guint min_nodes;
  GArray *regions;   /* FsTunerRegion; x, y and algo point into the arrays below */
  GPtrArray *coords; /* double arrays owned here */
  GPtrArray *names;  /* algorithm names owned here */
  GStrv env;         /* "NAME=VALUE" */
};

void fs_tuner_plugin_free(FsTunerPlugin *t)
{
  if (t == NULL)
    return;
  g_free(t->name);
  if (t->regions)
    g_array_free(t->regions, TRUE);
  if (t->coords)
    g_ptr_array_free(t->coords, TRUE);
  if (t->names)
    g_ptr_array_free(t->names, TRUE);
  g_strfreev(t->env);
  g_free(t);
}

char *fs_tuner_plugin_path(const char *name)
{
  if (strchr(name, '/') != NULL || g_str_has_suffix(name, ".yaml"))
    return g_strdup(name);
  g_autofree char *file = g_strconcat(name, ".yaml", NULL);
  return g_build_filename(fs_datadir(FS_DATA_MODELS), "nccl", "tuners", file, NULL);
}

/* Reads one vertex [x, y] (two non-negative numbers) into x, y. */
static gboolean read_vertex(const FsYamlNode *v, double *x, double *y, GError **error)
{
  if (!fs_yaml_require_seq(v, error))
    return FALSE;
  if (v->n != 2) {
    fs_yaml_error(error, v, "expected a vertex [bytes, ranks], got %u values", v->n);
    return FALSE;
  }
  return fs_yaml_get_double(v->values[0], 0, INFINITY, x, error) &&
         fs_yaml_get_double(v->values[1], 0, INFINITY, y, error);
}

/* Reads one region mapping (collective, ranks_per_node, algorithm,
 * protocol, vertices) into t's list, its arrays owned by t. */
static gboolean read_region(FsTunerPlugin *t, const FsYamlNode *m, GError **error)
{
  static const char *const keys[] = {"collective", "ranks_per_node", "algorithm", "protocol",
                                     "vertices", NULL};
  if (!fs_yaml_require_map(m, error) || !fs_yaml_check_keys(m, keys, "region", error))
    return FALSE;
  FsTunerRegion r = {0};
  const FsYamlNode *n;
  const char *s;
  int64_t rpn;
  if ((n = fs_yaml_require_key(m, "collective", "region", error)) == NULL ||
      !fs_yaml_get_string(n, &s, error))
    return FALSE;
  if (!fs_coll_op_from_name(s, &r.op)) {
    fs_yaml_error(error, n, "unknown collective \"%s\"", s);
    return FALSE;
  }
  if ((n = fs_yaml_require_key(m, "ranks_per_node", "region", error)) == NULL ||
      !fs_yaml_get_int(n, 1, 1024, &rpn, error))
    return FALSE;
  r.ranks_per_node = (guint)rpn;
  if ((n = fs_yaml_require_key(m, "algorithm", "region", error)) == NULL ||
      !fs_yaml_get_string(n, &s, error))
    return FALSE;
  if (fs_coll_algo_find(s) == NULL) {
    fs_yaml_error(error, n, "unknown algorithm \"%s\" (fabricsim coll --list)", s);
    return FALSE;
  }
  char *algo = g_strdup(s);
  g_ptr_array_add(t->names, algo);
  r.algo = algo;
  if ((n = fs_yaml_require_key(m, "protocol", "region", error)) == NULL ||
      !fs_yaml_get_string(n, &s, error))
    return FALSE;
  if (!fs_coll_proto_from_name(s, &r.proto)) {
    fs_yaml_error(error, n, "unknown protocol \"%s\" (LL, LL128, Simple)", s);
    return FALSE;
  }
  if ((n = fs_yaml_require_key(m, "vertices", "region", error)) == NULL ||
      !fs_yaml_require_seq(n, error))
    return FALSE;
  if (n->n < 2) {
    fs_yaml_error(error, n, "a region needs at least 2 vertices, got %u", n->n);
    return FALSE;
  }
  double *xy = g_new(double, 2 * n->n);
  g_ptr_array_add(t->coords, xy);
  for (guint i = 0; i < n->n; i++)
    if (!read_vertex(n->values[i], &xy[i], &xy[n->n + i], error))
      return FALSE;
  r.n_vertices = n->n, r.x = xy, r.y = xy + n->n;
  g_array_append_val(t->regions, r);
  return TRUE;
}

/* Reads the `env` mapping (NCCL_* names to whole numbers; `source:` aside)
 * into t->env. */
static gboolean read_env(FsTunerPlugin *t, const FsYamlNode *m, GError **error)
{
  g_autoptr(GPtrArray) env = g_ptr_array_new_with_free_func(g_free);
  if (m != NULL) {
    if (!fs_yaml_require_map(m, error) || fs_yaml_require_key(m, "source", "env", error) == NULL)
      return FALSE;
    for (guint i = 0; i < m->n; i++) {
      const char *k = m->keys[i]->value;
      if (strcmp(k, "source") == 0)
        continue;
      int64_t v;
      if (!g_str_has_prefix(k, "NCCL_")) {
        fs_yaml_error(error, m->keys[i], "expected an NCCL_* variable, got \"%s\"", k);
        return FALSE;
      }
      if (!fs_yaml_get_int(m->values[i], 0, G_MAXINT64, &v, error))
        return FALSE;
      g_ptr_array_add(env, g_strdup_printf("%s=%" G_GINT64_FORMAT, k, v));
    }
  }
  g_ptr_array_add(env, NULL);
  t->env = (GStrv)g_ptr_array_steal(env, NULL);
  return TRUE;
}

FsTunerPlugin *fs_tuner_plugin_load(const char *path, GError **error)
{
  static const char *const keys[] = {"name", "source", "min_nodes", "env", "regions", NULL};
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_file(path, error);
  if (doc == NULL)
    return NULL;
  const FsYamlNode *root = fs_yaml_doc_root(doc), *n;
  if (root == NULL) {
    fs_set_error_at(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE, path, 1, 1,
                    "empty file; expected a tuner plugin's name, source and regions");
    return NULL;
  }
  g_autoptr(FsTunerPlugin) t = g_new0(FsTunerPlugin, 1);
  t->regions = g_array_new(FALSE, FALSE, sizeof(FsTunerRegion));
  t->coords = g_ptr_array_new_with_free_func(g_free);
  t->names = g_ptr_array_new_with_free_func(g_free);
  const char *s;
  int64_t mn = 1;
  if (!fs_yaml_require_map(root, error) || !fs_yaml_check_keys(root, keys, "tuner plugin", error) ||
      (n = fs_yaml_require_key(root, "name", "tuner plugin", error)) == NULL ||
      !fs_yaml_get_string(n, &s, error) ||
      fs_yaml_require_key(root, "source", "tuner plugin", error) == NULL ||
      !fs_yaml_opt_int(root, "min_nodes", 1, 1 << 20, &mn, error) ||
      !read_env(t, fs_yaml_map_get(root, "env"), error) ||
      (n = fs_yaml_require_key(root, "regions", "tuner plugin", error)) == NULL ||
      !fs_yaml_require_seq(n, error))
    return NULL;
  t->name = g_strdup(s);
  t->min_nodes = (guint)mn;
  for (guint i = 0; i < n->n; i++)
    if (!read_region(t, n->values[i], error))
      return NULL;
  return g_steal_pointer(&t);
}

const char *fs_tuner_plugin_name(const FsTunerPlugin *t)
{
  return t->name;
}

const char *const *fs_tuner_plugin_env(const FsTunerPlugin *t)
{
  return (const char *const *)t->env;
}

gboolean fs_tuner_plugin_applies(const FsTunerPlugin *t, guint nodes)
{
  return nodes >= t->min_nodes;
}

const FsTunerRegion *fs_tuner_plugin_regions(const FsTunerPlugin *t, guint *n)
{
  *n = t->regions->len;
  return (const FsTunerRegion *)(void *)t->regions->data;
}

/* TRUE when (x, y) lies on the segment a-b: its distance to the segment,
 * relative to the segment's length, below 1e-12 (coordinates of bytes and
 * ranks differ by 10^9; the test is scale-free per axis). */
static gboolean on_segment(double ax, double ay, double bx, double by, double x, double y)
{
  /* Scale each axis by the segment's bounding box so both count alike. */
  double sx = MAX(fabs(bx - ax), 1.0), sy = MAX(fabs(by - ay), 1.0);
  double ux = (bx - ax) / sx, uy = (by - ay) / sy, px = (x - ax) / sx, py = (y - ay) / sy;
  double len2 = ux * ux + uy * uy;
  if (len2 == 0)
    return px * px + py * py < 1e-24;
  double t = (px * ux + py * uy) / len2;
  if (t < -1e-12 || t > 1 + 1e-12)
    return FALSE;
  double dx = px - t * ux, dy = py - t * uy;
  return dx * dx + dy * dy < 1e-24 * len2;
}

gboolean fs_tuner_region_contains(const FsTunerRegion *r, double x, double y)
{
  guint n = r->n_vertices;
  for (guint i = 0; i < n; i++) {
    guint k = (i + 1) % n;
    if (on_segment(r->x[i], r->y[i], r->x[k], r->y[k], x, y))
      return TRUE;
  }
  /* Even-odd rule: count the edges a ray from (x, y) towards +x crosses. */
  gboolean in = FALSE;
  for (guint i = 0, k = n - 1; i < n; k = i++) {
    if ((r->y[i] > y) != (r->y[k] > y)) {
      double cx = r->x[k] + (y - r->y[k]) * (r->x[i] - r->x[k]) / (r->y[i] - r->y[k]);
      if (x < cx)
        in = !in;
    }
  }
  return in;
}
