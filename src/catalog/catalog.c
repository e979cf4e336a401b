/* catalog.c — the FsCatalog container: loading files and folders,
 * resolving references between models, and lookups (see catalog.h).
 *
 * Models are kept in an array sorted by name, digit runs by value
 * (pcie-gen4-x2 before pcie-gen4-x16; iteration order never depends on a
 * hash table) plus a hash table for exact lookups.  Loading a
 * file is all-or-nothing: its entries are parsed into a batch, checked for
 * duplicate names (within the batch and against the catalog) and only then
 * added.  Cost: a load is linear in the file plus O(n) per inserted model
 * for the sorted insert (catalogs hold a few hundred models).
 */
#include <string.h>

#include "catalog/catalog-private.h"
#include "catalog/names.h"
#include "util/datadir.h"
#include "util/error.h"
#include "util/strutil.h"

G_DEFINE_QUARK(fs-catalog-error-quark, fs_catalog_error)

FsCatalog *fs_catalog_new(void)
{
  FsCatalog *cat = g_new0(FsCatalog, 1);
  cat->strings = g_string_chunk_new(4096);
  cat->entries = g_ptr_array_new_with_free_func(g_free);
  cat->by_name = g_hash_table_new(g_str_hash, g_str_equal);
  return cat;
}

void fs_catalog_free(FsCatalog *cat)
{
  if (cat == NULL)
    return;
  g_hash_table_destroy(cat->by_name);
  g_ptr_array_free(cat->entries, TRUE);
  g_string_chunk_free(cat->strings);
  g_free(cat);
}

const char *fs_catalog_intern(FsCatalog *cat, const char *s)
{
  return s == NULL ? NULL : g_string_chunk_insert_const(cat->strings, s);
}

/* Name order: digit runs compare by value, so pcie-gen4-x2 sorts before
 * pcie-gen4-x16; other characters compare as bytes.  Names that tie this
 * way ("x02" and "x2") fall back to strcmp, so the order is total. */
static int name_cmp(const char *a, const char *b)
{
  const char *p = a, *q = b;
  while (*p && *q) {
    if (g_ascii_isdigit(*p) && g_ascii_isdigit(*q)) {
      while (*p == '0')
        p++;
      while (*q == '0')
        q++;
      const char *pe = p, *qe = q;
      while (g_ascii_isdigit(*pe))
        pe++;
      while (g_ascii_isdigit(*qe))
        qe++;
      if (pe - p != qe - q)
        return pe - p < qe - q ? -1 : 1;
      int c = strncmp(p, q, (size_t)(pe - p));
      if (c != 0)
        return c;
      p = pe;
      q = qe;
    } else {
      if (*p != *q)
        return (unsigned char)*p < (unsigned char)*q ? -1 : 1;
      p++;
      q++;
    }
  }
  if (*p || *q)
    return *p ? 1 : -1;
  return strcmp(a, b);
}

/* Position of the first entry whose name is >= name (binary search). */
static guint lower_bound(const FsCatalog *cat, const char *name)
{
  guint lo = 0, hi = cat->entries->len;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    const FsCatalogEntry *e = g_ptr_array_index(cat->entries, mid);
    if (name_cmp(e->m.name, name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void duplicate_error(GError **error, const FsModel *dup, const FsModel *first)
{
  fs_set_error_at(error, FS_CATALOG_ERROR, FS_CATALOG_ERROR_DUPLICATE, dup->file, dup->line,
                  dup->col, "duplicate model \"%s\"; first defined at %s:%d:%d", dup->name,
                  first->file, first->line, first->col);
}

/* Adds a parsed batch to the catalog, or nothing if a name is taken. */
static gboolean commit_batch(FsCatalog *cat, GPtrArray *batch, GError **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < batch->len; i++) {
    const FsCatalogEntry *e = g_ptr_array_index(batch, i);
    const FsCatalogEntry *first = g_hash_table_lookup(cat->by_name, e->m.name);
    if (first == NULL)
      first = g_hash_table_lookup(seen, e->m.name);
    if (first != NULL) {
      duplicate_error(error, &e->m, &first->m);
      return FALSE;
    }
    g_hash_table_insert(seen, (gpointer)e->m.name, (gpointer)e);
  }
  /* Move ownership of every entry from batch to the catalog. */
  for (guint i = 0; i < batch->len; i++) {
    FsCatalogEntry *e = g_ptr_array_index(batch, i);
    g_ptr_array_insert(cat->entries, (gint)lower_bound(cat, e->m.name), e);
    g_hash_table_insert(cat->by_name, (gpointer)e->m.name, e);
  }
  g_ptr_array_set_free_func(batch, NULL);
  return TRUE;
}

static gboolean load_doc(FsCatalog *cat, FsYamlDoc *doc, GError **error)
{
  g_autoptr(GPtrArray) batch = g_ptr_array_new_with_free_func(g_free);
  return fs_catalog_parse_doc(cat, doc, batch, error) && commit_batch(cat, batch, error);
}

gboolean fs_catalog_load_file(FsCatalog *cat, const char *path, GError **error)
{
  g_return_val_if_fail(cat != NULL && path != NULL, FALSE);
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_file(path, error);
  return doc != NULL && load_doc(cat, doc, error);
}

gboolean fs_catalog_load_string(FsCatalog *cat, const char *text, gssize len, const char *name,
                                GError **error)
{
  g_return_val_if_fail(cat != NULL && text != NULL && name != NULL, FALSE);
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_string(text, len, name, error);
  return doc != NULL && load_doc(cat, doc, error);
}

/* Names of every model of one kind (or all, kind < 0), borrowed, in name
 * order, NULL-terminated: the candidates for "did you mean". */
static GPtrArray *names_of_kind(const FsCatalog *cat, int kind)
{
  GPtrArray *names = g_ptr_array_new();
  for (guint i = 0; i < cat->entries->len; i++) {
    const FsCatalogEntry *e = g_ptr_array_index(cat->entries, i);
    if (kind < 0 || (int)e->m.kind == kind)
      g_ptr_array_add(names, (gpointer)e->m.name);
  }
  g_ptr_array_add(names, NULL);
  return names;
}

/* "unknown <what> model "x"; did you mean "y"?" (no position). */
static void unknown_error(const FsCatalog *cat, const char *name, int kind, GError **error)
{
  g_autoptr(GPtrArray) names = names_of_kind(cat, kind);
  const char *guess = fs_did_you_mean(name, (const char *const *)names->pdata, -1);
  const char *what = kind < 0 ? "" : fs_model_kind_names[kind];
  const char *sp = kind < 0 ? "" : " ";
  if (guess != NULL)
    g_set_error(error, FS_CATALOG_ERROR, FS_CATALOG_ERROR_UNKNOWN,
                "unknown %s%smodel \"%s\"; did you mean \"%s\"?", what, sp, name, guess);
  else
    g_set_error(error, FS_CATALOG_ERROR, FS_CATALOG_ERROR_UNKNOWN,
                "unknown %s%smodel \"%s\" ('fabricsim models' lists them)", what, sp, name);
}

static gboolean resolve_ref(FsCatalog *cat, const FsCatalogRef *r, GError **error)
{
  const FsCatalogEntry *t = g_hash_table_lookup(cat->by_name, r->target);
  if (t == NULL || t->m.kind != r->kind) {
    if (t != NULL) {
      fs_set_error_at(error, FS_CATALOG_ERROR, FS_CATALOG_ERROR_INVALID, r->file, r->line,
                      r->col, "\"%s\" is a %s model; \"%s\" expects a %s model", r->target,
                      fs_model_kind_names[t->m.kind], r->key, fs_model_kind_names[r->kind]);
      return FALSE;
    }
    GError *e = NULL;
    unknown_error(cat, r->target, (int)r->kind, &e);
    fs_error_prefix_at(e, r->file, r->line, r->col);
    g_propagate_error(error, e);
    return FALSE;
  }
  if (r->families != 0 && !(r->families & (1u << t->m.u.link.family))) {
    GString *allowed = g_string_new(NULL);
    for (guint f = 0; f < FS_LINK_N_FAMILIES; f++)
      if (r->families & (1u << f))
        g_string_append_printf(allowed, "%s%s", allowed->len ? " or " : "",
                               fs_link_family_names[f]);
    fs_set_error_at(error, FS_CATALOG_ERROR, FS_CATALOG_ERROR_INVALID, r->file, r->line, r->col,
                    "\"%s\" is a %s link; \"%s\" expects a link of family %s", r->target,
                    fs_link_family_names[t->m.u.link.family], r->key, allowed->str);
    g_string_free(allowed, TRUE);
    return FALSE;
  }
  *r->slot = &t->m;
  return TRUE;
}

gboolean fs_catalog_resolve(FsCatalog *cat, GError **error)
{
  g_return_val_if_fail(cat != NULL, FALSE);
  /* In file order would need the load order; name order is as
   * deterministic and reports the same first error every time. */
  for (guint i = 0; i < cat->entries->len; i++) {
    FsCatalogEntry *e = g_ptr_array_index(cat->entries, i);
    for (guint j = 0; j < e->n_refs; j++)
      if (!resolve_ref(cat, &e->refs[j], error))
        return FALSE;
  }
  return TRUE;
}

static gint compare_strings(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

FsCatalog *fs_catalog_load_dir(const char *dir, GError **error)
{
  g_return_val_if_fail(dir != NULL, NULL);
  GError *e = NULL;
  g_autoptr(GDir) d = g_dir_open(dir, 0, &e);
  if (d == NULL) {
    g_set_error(error, FS_CATALOG_ERROR, FS_CATALOG_ERROR_INVALID,
                "cannot open models folder: %s", e->message);
    g_error_free(e);
    return NULL;
  }
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
  for (const char *n; (n = g_dir_read_name(d)) != NULL;) {
    if (!g_str_has_suffix(n, ".yaml") || n[0] == '.')
      continue;
    char *path = g_build_filename(dir, n, NULL);
    /* Only plain files directly in dir: subfolders belong to other modules. */
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
      g_ptr_array_add(files, path);
    else
      g_free(path);
  }
  if (files->len == 0) {
    g_set_error(error, FS_CATALOG_ERROR, FS_CATALOG_ERROR_INVALID,
                "%s: no *.yaml models files in this folder", dir);
    return NULL;
  }
  g_ptr_array_sort(files, compare_strings);
  g_autoptr(FsCatalog) cat = fs_catalog_new();
  for (guint i = 0; i < files->len; i++)
    if (!fs_catalog_load_file(cat, g_ptr_array_index(files, i), error))
      return NULL;
  if (!fs_catalog_resolve(cat, error))
    return NULL;
  return g_steal_pointer(&cat);
}

/* Re-interns an entry's strings into dst's store and re-aims its reference
 * slots at the copy (each slot lies inside its entry); the targets are
 * set by fs_catalog_copy once every entry exists. */
static FsCatalogEntry *copy_entry(FsCatalog *dst, const FsCatalogEntry *src)
{
  FsCatalogEntry *e = g_memdup2(src, sizeof *e);
  FsModel *m = &e->m;
  m->name = fs_catalog_intern(dst, m->name);
  m->description = fs_catalog_intern(dst, m->description);
  m->source = fs_catalog_intern(dst, m->source);
  m->file = fs_catalog_intern(dst, m->file);
  m->calibration = fs_catalog_intern(dst, m->calibration);
  m->ids.pci_ids = fs_catalog_intern(dst, m->ids.pci_ids);
  m->ids.product_names = fs_catalog_intern(dst, m->ids.product_names);
  m->ids.cpuid = fs_catalog_intern(dst, m->ids.cpuid);
  if (m->kind == FS_MODEL_GPU)
    m->u.gpu.form_factor = fs_catalog_intern(dst, m->u.gpu.form_factor);
  if (m->kind == FS_MODEL_LINK) {
    m->u.link.generation = fs_catalog_intern(dst, m->u.link.generation);
    m->u.link.encoding_name = fs_catalog_intern(dst, m->u.link.encoding_name);
    m->u.link.encoding_ratio = fs_catalog_intern(dst, m->u.link.encoding_ratio);
  }
  for (guint j = 0; j < e->n_refs; j++) {
    FsCatalogRef *r = &e->refs[j];
    r->target = fs_catalog_intern(dst, r->target);
    r->file = m->file;
    r->slot = (const FsModel **)((char *)e + ((const char *)src->refs[j].slot - (const char *)src));
  }
  return e;
}

FsCatalog *fs_catalog_copy(const FsCatalog *src)
{
  g_return_val_if_fail(src != NULL, NULL);
  FsCatalog *dst = fs_catalog_new();
  for (guint i = 0; i < src->entries->len; i++) {
    FsCatalogEntry *e = copy_entry(dst, g_ptr_array_index(src->entries, i));
    g_ptr_array_add(dst->entries, e);
    g_hash_table_insert(dst->by_name, (gpointer)e->m.name, e);
  }
  /* A reference resolved in src points at the copy of its target. */
  for (guint i = 0; i < dst->entries->len; i++) {
    FsCatalogEntry *e = g_ptr_array_index(dst->entries, i);
    for (guint j = 0; j < e->n_refs; j++)
      if (*e->refs[j].slot != NULL)
        *e->refs[j].slot = fs_catalog_get(dst, e->refs[j].target);
  }
  return dst;
}

const char *fs_catalog_default_dir(void)
{
  return fs_datadir(FS_DATA_MODELS);
}

FsCatalog *fs_catalog_load_default(const char *dir, GError **error)
{
  return fs_catalog_load_dir(dir != NULL ? dir : fs_catalog_default_dir(), error);
}

const FsModel *fs_catalog_get(const FsCatalog *cat, const char *name)
{
  g_return_val_if_fail(cat != NULL, NULL);
  if (name == NULL)
    return NULL;
  const FsCatalogEntry *e = g_hash_table_lookup(cat->by_name, name);
  return e ? &e->m : NULL;
}

const FsModel *fs_catalog_find(const FsCatalog *cat, const char *name, GError **error)
{
  const FsModel *m = fs_catalog_get(cat, name);
  if (m == NULL)
    unknown_error(cat, name ? name : "", -1, error);
  return m;
}

const FsModel *fs_catalog_require(const FsCatalog *cat, const char *name, FsModelKind kind,
                                  GError **error)
{
  const FsModel *m = fs_catalog_get(cat, name);
  if (m != NULL && m->kind == kind)
    return m;
  if (m != NULL)
    g_set_error(error, FS_CATALOG_ERROR, FS_CATALOG_ERROR_UNKNOWN,
                "\"%s\" is a %s model, not a %s model", name, fs_model_kind_names[m->kind],
                fs_model_kind_names[kind]);
  else
    unknown_error(cat, name ? name : "", (int)kind, error);
  return NULL;
}

guint fs_catalog_size(const FsCatalog *cat)
{
  g_return_val_if_fail(cat != NULL, 0);
  return cat->entries->len;
}

const FsModel *fs_catalog_nth(const FsCatalog *cat, guint i)
{
  g_return_val_if_fail(cat != NULL && i < cat->entries->len, NULL);
  const FsCatalogEntry *e = g_ptr_array_index(cat->entries, i);
  return &e->m;
}
