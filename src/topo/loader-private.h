/* loader-private.h — what the files of the topology loader share:
 * loader.c (scalar helpers, reading files and includes, the entry points),
 * loader-params.c (parameters and -D overrides), loader-build.c (hosts,
 * nodes and links built from the entries read) and loader-gen.c (the
 * `generators:` section).  Private to the topo module. */
#pragma once

#include "topo/topo.h"
#include "util/schema.h"
#include "util/yaml.h"

typedef struct {
  const char *name;
  const FsYamlNode *map;     /* the template's mapping */
  const FsYamlNode *key;     /* its key, for messages */
} Template;

/* Where a parameter's value came from: a -D override (file NULL) or a
 * file's declaration (the value's position). */
typedef struct {
  const FsYamlNode *value;   /* NULL for a -D override */
  const char *define;        /* the -D text, "name=value", or NULL */
} ParamSource;

typedef struct {
  const FsCatalog *cat;
  FsTopo *topo;
  GPtrArray *docs;           /* FsYamlDoc *, kept until the end */
  GHashTable *params;        /* integer parameters: name -> int64_t * */
  GHashTable *strings;       /* string parameters: name -> char * */
  GHashTable *param_src;     /* name -> ParamSource * */
  GPtrArray *param_order;    /* names, declaration order */
  GHashTable *overrides;     /* -D name -> value text (char *) */
  GHashTable *overrides_used; /* -D names read by a declaration */
  GPtrArray *host_template;  /* per host index: the template name it was made from (or NULL) */
  GHashTable *templates;     /* name -> Template * */
  GPtrArray *template_order; /* names, for did-you-mean */
  GPtrArray *chain;          /* canonical paths being read */
  GHashTable *read;          /* canonical paths read */
  GPtrArray *hosts, *nodes, *links, *gens; /* const FsYamlNode * entries */
  char *name;                /* the top file's name: or basename */
  int lone_host;             /* host of top-level nodes when no templates are instantiated */
  int routing;               /* FsTopoRouting from the outermost `routing:` field, -1 none */
} Loader;

/* Scalar helpers: ${} substitution, positions in errors (loader.c). */
char *fs_topo_loader_text(Loader *L, const FsYamlNode *node, const char *what, GError **error);
gboolean fs_topo_loader_int(Loader *L, const FsYamlNode *node, int64_t min, int64_t max,
                            const char *what, int64_t *out, GError **error);
/* map[key] as an unsigned integer up to max; absent leaves *out. */
gboolean fs_topo_loader_uint(Loader *L, const FsYamlNode *map, const char *key, guint max,
                             guint *out, GError **error);
/* The names of a pattern node, each prefixed; NULL with error. */
GPtrArray *fs_topo_loader_names(Loader *L, const FsYamlNode *node, const char *prefix,
                                GError **error);
/* A model of kind (FS_MODEL_N_KINDS: any device kind) named by node. */
const FsModel *fs_topo_loader_model(Loader *L, const FsYamlNode *node, FsModelKind kind,
                                    GError **error);
/* Node indices of names; a missing one fails at node (with did-you-mean). */
guint *fs_topo_loader_resolve(Loader *L, GPtrArray *names, const FsYamlNode *node,
                              GError **error);

/* Hosts made from the template named name, in order (a new array). */
GArray *fs_topo_loader_template_hosts(Loader *L, const char *name);
/* A yes/no value (true/false, yes/no, 1/0 after ${}) at node. */
gboolean fs_topo_loader_bool(Loader *L, const FsYamlNode *node, const char *what,
                             gboolean *out, GError **error);

/* ---- declared keys (loader-schema.c) ---- */

/* The tables of the mappings of a topology file (fs_topo_schemas). */
extern const FsSchema fs_topo_file_schema, fs_topo_template_schema, fs_topo_host_schema,
  fs_topo_node_schema, fs_topo_link_schema, fs_topo_param_schema, fs_topo_gen_schema,
  fs_topo_fat_tree_schema, fs_topo_rail_schema, fs_topo_dragonfly_schema, fs_topo_rack_schema;
/* Checks map against schema: a mapping, no undeclared key (unless
 * allow_unknown), every required key, each value of its declared kind; the
 * values themselves are the loader's to read.  FALSE with the first error
 * "file:line:col: ..." (FS_YAML_ERROR_SCHEMA).  Cost: keys × fields. */
gboolean fs_topo_loader_check(const FsSchema *schema, const FsYamlNode *map,
                              gboolean allow_unknown, GError **error);

/* ---- parameters (loader-params.c) ---- */

/* Records the -D overrides ("name=value", the value typed later by the
 * parameter's declaration).  FALSE with FS_TOPO_ERROR_PARAM for one
 * without a valid name, an = or a value. */
gboolean fs_topo_loader_parse_defines(Loader *L, const char *const *defines, GError **error);
/* Reads a parameters: mapping: each declaration's value in force (a -D
 * override, a value set before, or its default) is recorded and checked
 * against it.  FALSE with the error at the file position. */
gboolean fs_topo_loader_read_parameters(Loader *L, const FsYamlNode *map, GError **error);
/* FALSE with FS_TOPO_ERROR_PARAM naming the first (by name) -D override
 * that no declaration read, and the parameters there are. */
gboolean fs_topo_loader_check_defines(Loader *L, GError **error);
/* Frees a ParamSource (the values of L->param_src). */
void fs_topo_loader_param_source_free(gpointer p);

/* ---- building (loader-build.c) ---- */

/* Builds the topology from what reading collected: parameters, routing,
 * hosts, top-level nodes, links and generators, then finalizes and
 * validates it.  A new topology (caller frees), or NULL with the first
 * error (unused -D, a bad entry, a failed validation). */
FsTopo *fs_topo_loader_build(Loader *L, GError **error);

/* Runs one `generators:` entry (loader-gen.c). */
gboolean fs_topo_loader_generate(Loader *L, const FsYamlNode *e, GError **error);
