/* tuner-plugin.c — an NCCL tuner plugin's regions, loaded from a file
 * (tuner-plugin.h). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "coll/comm.h"
#include "coll/plan.h"
#include "coll/tuner-plugin.h"
#include "util/datadir.h"
#include "util/error.h"
#include "util/schema.h"
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

/* FS_SCHEMA_STRING forms of a region's names (FsSchemaField.valid). */
static gboolean is_collective(const char *s)
{
  FsCollOp op;
  return fs_coll_op_from_name(s, &op);
}

static gboolean is_algorithm(const char *s)
{
  return fs_coll_algo_find(s) != NULL;
}

static gboolean is_protocol(const char *s)
{
  FsCollProto p;
  return fs_coll_proto_from_name(s, &p);
}

/* One region as the walk reads it; read_region turns it into an
 * FsTunerRegion. */
typedef struct {
  const char *collective, *algorithm, *protocol;
  guint ranks_per_node;
} RegionKeys;

static const FsSchemaField region_fields[] = {
  {.key = "collective", .type = FS_SCHEMA_STRING, .offset = offsetof(RegionKeys, collective),
   .required = TRUE, .valid = is_collective, .form = "\"all_reduce\" (fabricsim coll --list)",
   .doc = "the collective the region applies to (`all_reduce`, …)"},
  {.key = "ranks_per_node", .type = FS_SCHEMA_UINT,
   .offset = offsetof(RegionKeys, ranks_per_node), .required = TRUE, .min = "1", .max = "1024",
   .doc = "the region applies when the communicator has this many ranks on every node"},
  {.key = "algorithm", .type = FS_SCHEMA_STRING, .offset = offsetof(RegionKeys, algorithm),
   .required = TRUE, .valid = is_algorithm, .form = "\"ring\" (fabricsim coll --list)",
   .doc = "the algorithm NCCL runs inside the region, by fabricsim's name"},
  {.key = "protocol", .type = FS_SCHEMA_STRING, .offset = offsetof(RegionKeys, protocol),
   .required = TRUE, .valid = is_protocol, .form = "\"LL\", \"LL128\" or \"Simple\"",
   .doc = "the protocol NCCL runs inside the region"},
  {.key = "vertices", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .value_doc = "list of `[bytes, ranks]`",
   .doc = "the region's polygon, at least 2 vertices: x NCCL's nBytes of the call, y its "
          "ranks (non-negative numbers)"},
};
static const FsSchema region_schema = {"tuner plugin region", NULL, region_fields,
                                       G_N_ELEMENTS(region_fields)};

static const FsSchemaField env_fields[] = {
  {.key = "source", .type = FS_SCHEMA_STRING, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .doc = "where the values come from"},
  {.key = "NCCL_… variable", .type = FS_SCHEMA_UINT, .offset = FS_SCHEMA_NOWHERE, .any_key = TRUE,
   .doc = "a variable the plugin sets unless the user does, with its whole value"},
};
static const FsSchema env_schema = {"tuner plugin env", NULL, env_fields,
                                    G_N_ELEMENTS(env_fields)};

typedef struct {
  const char *name;
  guint min_nodes;
} PluginKeys;

static const FsSchemaField plugin_fields[] = {
  {.key = "name", .type = FS_SCHEMA_STRING, .offset = offsetof(PluginKeys, name),
   .required = TRUE, .nonempty = TRUE, .doc = "the plugin's name, printed with the tuner's "
                                              "choice"},
  {.key = "source", .type = FS_SCHEMA_STRING, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .doc = "where the regions come from"},
  {.key = "min_nodes", .type = FS_SCHEMA_UINT, .offset = offsetof(PluginKeys, min_nodes),
   .min = "1", .max = "1048576", .def = "1",
   .doc = "communicators of fewer nodes keep NCCL's own choice"},
  {.key = "env", .type = FS_SCHEMA_MAP, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "table `nccl.tuner.env`", .doc = "the NCCL_* variables the plugin sets"},
  {.key = "regions", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .value_doc = "list of table `nccl.tuner.region`",
   .doc = "in order: the first region that holds the call wins"},
};
static const FsSchema plugin_schema = {"tuner plugin", NULL, plugin_fields,
                                       G_N_ELEMENTS(plugin_fields)};

static const FsSchemaEntry schemas[] = {
  {"nccl.tuner", &plugin_schema},
  {"nccl.tuner.env", &env_schema},
  {"nccl.tuner.region", &region_schema},
};

const FsSchemaEntry *fs_tuner_plugin_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
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

/* Reads one region mapping against region_schema, then its vertices, into
 * t's list, its arrays owned by t. */
static gboolean read_region(FsTunerPlugin *t, const FsYamlNode *m, GError **error)
{
  RegionKeys k = {0};
  FsSchemaRead opts = {.domain = FS_COLL_ERROR, .code = FS_COLL_ERROR_PARSE};
  if (!fs_schema_read(&region_schema, m, &k, &opts, error))
    return FALSE;
  FsTunerRegion r = {.ranks_per_node = k.ranks_per_node};
  fs_coll_op_from_name(k.collective, &r.op);
  fs_coll_proto_from_name(k.protocol, &r.proto);
  char *algo = g_strdup(k.algorithm);
  g_ptr_array_add(t->names, algo);
  r.algo = algo;
  const FsYamlNode *n = fs_yaml_map_get(m, "vertices");
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

/* FsSchemaRead.any_key of env_schema: an NCCL_* variable and its value
 * into the GPtrArray of "NAME=VALUE" at data. */
static gboolean env_seen(const FsSchemaField *field, const FsYamlNode *key,
                         const FsYamlNode *node, gconstpointer value, gpointer data,
                         GError **error)
{
  (void)field, (void)node;
  if (!g_str_has_prefix(key->value, "NCCL_")) {
    fs_yaml_error(error, key, "expected an NCCL_* variable, got \"%s\"", key->value);
    return FALSE;
  }
  g_ptr_array_add(data, g_strdup_printf("%s=%u", key->value, *(const guint *)value));
  return TRUE;
}

FsTunerPlugin *fs_tuner_plugin_load(const char *path, GError **error)
{
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_file(path, error);
  if (doc == NULL)
    return NULL;
  const FsYamlNode *root = fs_yaml_doc_root(doc);
  if (root == NULL) {
    fs_set_error_at(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE, path, 1, 1,
                    "empty file; expected a tuner plugin's name, source and regions");
    return NULL;
  }
  PluginKeys k = {0};
  g_autoptr(GPtrArray) env = g_ptr_array_new_with_free_func(g_free);
  FsSchemaRead opts = {.domain = FS_COLL_ERROR, .code = FS_COLL_ERROR_PARSE};
  FsSchemaRead env_opts = {.domain = FS_COLL_ERROR, .code = FS_COLL_ERROR_PARSE,
                           .any_key = env_seen, .data = env};
  if (!fs_schema_read(&plugin_schema, root, &k, &opts, error))
    return NULL;
  const FsYamlNode *e = fs_yaml_map_get(root, "env");
  if (e != NULL && !fs_schema_read(&env_schema, e, NULL, &env_opts, error))
    return NULL;
  g_ptr_array_add(env, NULL);
  g_autoptr(FsTunerPlugin) t = g_new0(FsTunerPlugin, 1);
  t->regions = g_array_new(FALSE, FALSE, sizeof(FsTunerRegion));
  t->coords = g_ptr_array_new_with_free_func(g_free);
  t->names = g_ptr_array_new_with_free_func(g_free);
  t->name = g_strdup(k.name);
  t->min_nodes = k.min_nodes;
  t->env = (GStrv)g_ptr_array_steal(env, NULL);
  const FsYamlNode *n = fs_yaml_map_get(root, "regions");
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
