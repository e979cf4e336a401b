/* catalog-private.h — what the catalog's files share: the entry record
 * behind every FsModel and the loader's entry point.  Not for use outside
 * src/catalog. */
#pragma once

#include "catalog/catalog.h"
#include "util/schema.h"
#include "util/yaml.h"

/* A reference from one model to another by name (gpu.pcie, switch.port_link
 * ...), kept from load to resolve with the position of its YAML value. */
typedef struct {
  const char *key;          /* YAML key, for messages */
  const char *target;       /* referenced model's name */
  const char *file;
  int line, col;
  const FsModel **slot;     /* where the resolved pointer goes */
  FsModelKind kind;         /* the kind it must have */
  guint families;           /* links: bit mask of allowed families; 0 = any */
} FsCatalogRef;

#define FS_CATALOG_MAX_REFS 6

/* Every FsModel lives inside one of these (m first, so a const FsModel *
 * handed out by the catalog can be cast back). */
typedef struct {
  FsModel m;
  FsCatalogRef refs[FS_CATALOG_MAX_REFS];
  guint n_refs;
} FsCatalogEntry;

struct FsCatalog {
  GStringChunk *strings;    /* every string of every model */
  GPtrArray *entries;       /* FsCatalogEntry *, owned, sorted by name */
  GHashTable *by_name;      /* name -> FsCatalogEntry *, borrowed */
};

/* Copies s into the catalog's string store (NULL stays NULL). */
const char *fs_catalog_intern(FsCatalog *cat, const char *s);

/* Parses the document's entries into batch (FsCatalogEntry *, g_free'd by
 * the array).  Nothing is added to cat; strings go to cat's store.  Sets
 * an error with file:line:col on the first problem. */
gboolean fs_catalog_parse_doc(FsCatalog *cat, FsYamlDoc *doc, GPtrArray *batch,
                              GError **error);

/* Sets error at node's position in FS_CATALOG_ERROR. */
void fs_catalog_error_at(GError **error, const FsYamlNode *node, FsCatalogError code,
                         const char *format, ...) G_GNUC_PRINTF(4, 5);

/* The declared keys of a models file (schema.c): the file's top level, the
 * keys every entry has, and one table per kind (whose base is the common
 * table).  fs_catalog_form_factors: the GPU form factors, NULL-terminated. */
extern const FsSchema fs_catalog_file_schema;
extern const FsSchema fs_catalog_common_schema;
extern const FsSchema fs_catalog_kind_schemas[FS_MODEL_N_KINDS];
extern const char *const fs_catalog_form_factors[];
