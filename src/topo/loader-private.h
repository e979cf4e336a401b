/* loader-private.h — what loader.c shares with loader-gen.c (the
 * `generators:` section).  Private to the topo module. */
#pragma once

#include "topo/topo.h"
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

/* Runs one `generators:` entry (loader-gen.c). */
gboolean fs_topo_loader_generate(Loader *L, const FsYamlNode *e, GError **error);
