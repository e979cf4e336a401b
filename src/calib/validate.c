/* validate.c — reference tables, the runner and its statistics (see
 * validate.h).  The kinds themselves live in validate-kinds.c. */
#include "calib/validate.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "util/datadir.h"
#include "util/error.h"
#include "util/schema.h"
#include "util/strutil.h"
#include "util/units.h"
#include "util/yaml.h"

G_DEFINE_QUARK(fs-val-error-quark, fs_val_error)

/* ---- the header's declared keys (validation/reference/README.md) ---- */

#define KEY(k, req, vdoc, text)                                                              \
  {.key = k, .type = FS_SCHEMA_STRING, .offset = FS_SCHEMA_NOWHERE, .required = req,           \
   .value_doc = vdoc, .doc = text}
static const FsSchemaField header_fields[] = {
  KEY("source", TRUE, "text", "where the numbers come from (paper, repository and commit, file)"),
  KEY("setup", FALSE, "text", "the machine and how it was measured"),
  KEY("kind", TRUE, "a kind's name", "which runner predicts the rows (`fabricsim validate "
      "--list-kinds`; see \"Kinds\")"),
  KEY("bar", TRUE, "`METRIC within N% [for size >= SIZE]`",
      "the accuracy the model must reach over the rows in scope (see below)"),
  KEY("gap", FALSE, "text", "a known gap: by how much the model misses the bar today, and why"),
  KEY("split", FALSE, "`fit`, `test` or `none`, then text",
      "whether a calibration may be fitted on the table (see below)"),
  KEY("command", FALSE, "text", "the command that measured the rows"),
  KEY("columns", FALSE, "text", "how the columns were taken from the source"),
  KEY("measured", FALSE, "text", "when and with what the rows were measured"),
  KEY("note", FALSE, "text", "what a reader of the table should know"),
  KEY("degraded", FALSE, "text", "`degraded/` tables: why the run is below what the machine "
      "reaches"),
  KEY("gpu", FALSE, "a GPU model", "`host-copy`, `gemm`, `attention`: the catalog's GPU model"),
  KEY("topology", FALSE, "a path", "`nccl-tests`: the topology file, from the repository root"),
  KEY("defines", FALSE, "`NAME=INTEGER` words", "`nccl-tests`: the topology's parameters"),
  KEY("collective", FALSE, "a collective", "`nccl-tests`: the operation measured"),
  KEY("ranks", FALSE, "a number or `the gpus column`", "`nccl-tests`: the ranks of each row"),
  KEY("algorithm", FALSE, "`default` or an algorithm", "`nccl-tests`: the algorithm forced, "
      "over `NCCL_ALGO` (`default`: the tuner's choice, which follows `NCCL_ALGO` / `NCCL_PROTO` "
      "as `fabricsim coll` does)"),
  KEY("launch", FALSE, "`-t N -g N -G N` then text", "`nccl-tests`: how nccl-tests was "
      "launched (absent: `-g 1`)"),
  KEY("nccl", FALSE, "a release `X.Y` then text", "`nccl-tests`: the NCCL release whose "
      "constants predict the rows (`models/nccl/nccl-X.Y.yaml`; absent: the default)"),
  KEY("env", FALSE, "`NCCL_NAME=VALUE` words then text", "`nccl-tests`: the NCCL variables the "
      "run set that the NCCL constants read (`NCCL_BUFFSIZE`, `NCCL_TUNER_PLUGIN`, ...; "
      "coll/nccl-params.h); prose after the first word without `=`"),
};
#undef KEY
static const FsSchema header_schema = {"reference table header", NULL, header_fields,
                                       G_N_ELEMENTS(header_fields)};
static const FsSchemaEntry schemas[] = {{"validate.header", &header_schema}};

const FsSchemaEntry *fs_val_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
}

/* Reads the header's keys (positions in cols: key and value column of
 * each) against the declared table: an unknown key, a missing required one,
 * at its file:line:col in FS_VAL_ERROR_PARSE. */
static gboolean check_header(const FsValTable *t, const GArray *cols, const FsSchema *schema,
                             gpointer record, GError **error)
{
  g_autofree FsYamlPair *pairs = g_new0(FsYamlPair, MAX(t->keys->len, 1));
  for (guint i = 0; i < t->keys->len; i++) {
    int line = GPOINTER_TO_INT(g_ptr_array_index(t->key_lines, i));
    pairs[i] = (FsYamlPair){g_ptr_array_index(t->keys, i), g_ptr_array_index(t->values, i),
                            line, g_array_index(cols, int, 2 * i), line,
                            g_array_index(cols, int, 2 * i + 1)};
  }
  g_autoptr(FsYamlDoc) doc = fs_yaml_doc_from_pairs(t->file, pairs, t->keys->len);
  FsSchemaRead opts = {.domain = FS_VAL_ERROR, .code = FS_VAL_ERROR_PARSE};
  return fs_schema_read(schema, fs_yaml_doc_root(doc), record, &opts, error);
}

void fs_val_table_free(FsValTable *t)
{
  if (t == NULL)
    return;
  g_free(t->file);
  g_free(t->name);
  g_ptr_array_free(t->keys, TRUE);
  g_ptr_array_free(t->values, TRUE);
  g_ptr_array_free(t->key_lines, TRUE);
  g_strfreev(t->cols);
  for (guint i = 0; i < t->nrows; i++)
    g_strfreev(t->cells[i]);
  g_free(t->cells);
  g_free(t->row_lines);
  g_free(t->bar_metric);
  g_free(t);
}

/* Splits a CSV line on commas (no quoting: reference tables hold numbers
 * and short words), trimming blanks. */
static char **split_csv(const char *line)
{
  char **f = g_strsplit(line, ",", -1);
  for (guint i = 0; f[i]; i++)
    g_strstrip(f[i]);
  return f;
}

static int key_index(const FsValTable *t, const char *key)
{
  for (guint i = 0; i < t->keys->len; i++)
    if (strcmp(g_ptr_array_index(t->keys, i), key) == 0)
      return (int)i;
  return -1;
}

/* "busbw within 10% for size >= 64MiB" → metric, percent, minimum size. */
static gboolean parse_bar(FsValTable *t, GError **error)
{
  int ki = key_index(t, "bar");
  if (ki < 0) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, t->file, 1, 1,
                    "missing \"# bar: METRIC within N%% [for size >= SIZE]\" header");
    return FALSE;
  }
  const char *bar = g_ptr_array_index(t->values, ki);
  int line = GPOINTER_TO_INT(g_ptr_array_index(t->key_lines, ki));
  g_auto(GStrv) w = g_strsplit_set(bar, " \t", -1);
  GPtrArray *words = g_ptr_array_new();
  for (guint i = 0; w[i]; i++)
    if (w[i][0] != '\0')
      g_ptr_array_add(words, w[i]);
  guint n = words->len;
  gboolean ok = n >= 3 && strcmp(g_ptr_array_index(words, 1), "within") == 0;
  char *end = NULL;
  double pct = 0;
  if (ok) {
    const char *p = g_ptr_array_index(words, 2);
    pct = g_ascii_strtod(p, &end);
    ok = end != p && strcmp(end, "%") == 0 && pct > 0 && pct <= 1000;
  }
  uint64_t min_size = 0;
  if (ok && n > 3) {
    ok = n == 7 && strcmp(g_ptr_array_index(words, 3), "for") == 0 &&
         strcmp(g_ptr_array_index(words, 4), "size") == 0 &&
         strcmp(g_ptr_array_index(words, 5), ">=") == 0;
    if (ok) {
      GError *e = NULL;
      ok = fs_parse_size(g_ptr_array_index(words, 6), &min_size, &e);
      g_clear_error(&e);
    }
  }
  if (ok)
    t->bar_metric = g_strdup(g_ptr_array_index(words, 0));
  g_ptr_array_free(words, TRUE);
  if (!ok) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, t->file, line, 3,
                    "bar \"%s\": expected \"METRIC within N%% [for size >= SIZE]\"", bar);
    return FALSE;
  }
  t->bar_pct = pct;
  t->bar_min_size = min_size;
  return TRUE;
}

FsValTable *fs_val_table_load(const char *path, GError **error)
{
  g_autoptr(FsValTable) t = fs_val_table_read(path, &header_schema, NULL, error);
  if (t == NULL || !parse_bar(t, error))
    return NULL;
  return g_steal_pointer(&t);
}

/* Reads the lines of path into a table (validate.h): "# key: value" lines
 * into keys and values, the first other line into the column names, the
 * rest into rows of the same width; then the keys against header. */
FsValTable *fs_val_table_read(const char *path, const FsSchema *header, gpointer record,
                              GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  g_autofree char *text = NULL;
  GError *e = NULL;
  if (!g_file_get_contents(path, &text, NULL, &e)) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_IO, path, 0, 0, "cannot read: %s",
                    e->message);
    g_error_free(e);
    return NULL;
  }
  g_autoptr(FsValTable) t = g_new0(FsValTable, 1);
  t->file = g_strdup(path);
  g_autofree char *base = g_path_get_basename(path);
  if (g_str_has_suffix(base, ".csv"))
    base[strlen(base) - 4] = '\0';
  t->name = g_strdup(base);
  t->keys = g_ptr_array_new_with_free_func(g_free);
  t->values = g_ptr_array_new_with_free_func(g_free);
  t->key_lines = g_ptr_array_new();
  GPtrArray *rows = g_ptr_array_new();
  GArray *lines = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GArray) key_cols = g_array_new(FALSE, FALSE, sizeof(int)); /* key, value column */
  g_auto(GStrv) all = fs_split_lines(text);
  gboolean ok = TRUE;
  for (guint i = 0; ok && all[i]; i++) {
    char *l = all[i];
    gsize len = strlen(l);
    if (len > 0 && l[len - 1] == '\r')
      l[len - 1] = '\0';
    int line = (int)i + 1;
    if (l[0] == '#') {
      /* "# key: value" where key is a lower-case word; other comments are prose. */
      const char *p = l + 1;
      while (*p == ' ')
        p++;
      const char *k = p;
      while (g_ascii_islower(*p) || *p == '_')
        p++;
      if (p > k && *p == ':') {
        g_autofree char *key = g_strndup(k, (gsize)(p - k));
        g_autofree char *val = g_strstrip(g_strdup(p + 1));
        const char *v = p + 1;
        while (*v == ' ' || *v == '\t')
          v++;
        int kc = (int)(k - l) + 1, vc = (int)(v - l) + 1;
        int ki = key_index(t, key);
        if (ki >= 0) {
          char *joined = g_strdup_printf("%s %s", (char *)g_ptr_array_index(t->values, ki), val);
          g_free(g_ptr_array_index(t->values, ki));
          g_ptr_array_index(t->values, ki) = joined;
        } else {
          g_ptr_array_add(t->keys, g_steal_pointer(&key));
          g_ptr_array_add(t->values, g_steal_pointer(&val));
          g_ptr_array_add(t->key_lines, GINT_TO_POINTER(line));
          g_array_append_val(key_cols, kc);
          g_array_append_val(key_cols, vc);
        }
      }
      continue;
    }
    if (g_strstrip(l)[0] == '\0')
      continue;
    char **f = split_csv(l);
    if (t->cols == NULL) {
      t->cols = f;
      t->ncols = g_strv_length(f);
      t->header_line = line;
      continue;
    }
    if (g_strv_length(f) != t->ncols) {
      fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, path, line, 1,
                      "row has %u fields; the header (line %d) names %u", g_strv_length(f),
                      t->header_line, t->ncols);
      g_strfreev(f);
      ok = FALSE;
      break;
    }
    g_ptr_array_add(rows, f);
    g_array_append_val(lines, line);
  }
  t->nrows = rows->len;
  t->cells = (char ***)g_ptr_array_free(rows, FALSE);
  t->row_lines = (int *)(void *)g_array_free(lines, FALSE);
  if (!ok)
    return NULL;
  if (!check_header(t, key_cols, header, record, error))
    return NULL;
  if (t->cols == NULL || t->nrows == 0) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, path, 1, 1,
                    "no table: expected a header line of column names and at least one row");
    return NULL;
  }
  return g_steal_pointer(&t);
}

const char *fs_val_table_key(const FsValTable *t, const char *key)
{
  int i = key_index(t, key);
  return i < 0 ? NULL : g_ptr_array_index(t->values, i);
}

const char *fs_val_table_require(const FsValTable *t, const char *key, GError **error)
{
  const char *v = fs_val_table_key(t, key);
  if (v == NULL || v[0] == '\0')
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_KIND, t->file, 1, 1,
                    "missing \"# %s: ...\" header", key);
  return v != NULL && v[0] != '\0' ? v : NULL;
}

int fs_val_table_col(const FsValTable *t, const char *name, GError **error)
{
  for (guint i = 0; i < t->ncols; i++)
    if (strcmp(t->cols[i], name) == 0)
      return (int)i;
  if (error != NULL)
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_KIND, t->file, t->header_line, 1,
                    "no column \"%s\"", name);
  return -1;
}

int fs_val_table_cell_col(const FsValTable *t, guint row, int col)
{
  int c = 1;
  for (int i = 0; i < col; i++)
    c += (int)strlen(t->cells[row][i]) + 1;
  return c;
}

gboolean fs_val_table_u64(const FsValTable *t, guint row, int col, uint64_t *out, GError **error)
{
  const char *s = t->cells[row][col];
  char *end;
  errno = 0;
  guint64 v = g_ascii_strtoull(s, &end, 10);
  if (!g_ascii_isdigit(s[0]) || *end != '\0' || errno == ERANGE) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, t->file, t->row_lines[row],
                    fs_val_table_cell_col(t, row, col),
                    "column \"%s\": expected an integer, got \"%s\"", t->cols[col], s);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

gboolean fs_val_table_double(const FsValTable *t, guint row, int col, double *out, GError **error)
{
  const char *s = t->cells[row][col];
  char *end;
  double v = g_ascii_strtod(s, &end);
  if (end == s || *end != '\0' || !isfinite(v)) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, t->file, t->row_lines[row],
                    fs_val_table_cell_col(t, row, col),
                    "column \"%s\": expected a number, got \"%s\"", t->cols[col], s);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

/* The kind named name in kinds (NULL-terminated), or NULL. */
static const FsValKind *kind_in(const FsValKind *const *kinds, const char *name)
{
  for (guint i = 0; name != NULL && kinds[i]; i++)
    if (strcmp(kinds[i]->name, name) == 0)
      return kinds[i];
  return NULL;
}

const FsValKind *fs_val_kind_find(const char *name) { return kind_in(fs_val_kinds, name); }

void fs_val_result_free(FsValResult *r)
{
  if (r == NULL)
    return;
  g_free(r->table);
  g_free(r->file);
  g_free(r->kind);
  g_free(r->source);
  g_free(r->bar);
  g_free(r->gap);
  g_array_free(r->rows, TRUE);
  g_free(r);
}

FsValResult *fs_val_run(const FsValTable *t, const FsCatalog *cat, GError **error)
{
  return fs_val_run_calibrated(t, cat, NULL, error);
}

FsValResult *fs_val_run_calibrated(const FsValTable *t, const FsCatalog *cat,
                                   const FsCalibration *cal, GError **error)
{
  FsValInputs in = {cat, cal, NULL};
  return fs_val_run_kinds(t, fs_val_kinds, &in, error);
}

/* See validate.h.  Also: each row's error is (predicted − measured) / measured in percent; the
 * rows within the bar's size range with a finite error are in scope, and the table passes when
 * some row is in scope and their mean absolute error is within the bar.  The kind's context is
 * freed before returning.  The caller owns the result. */
FsValResult *fs_val_run_kinds(const FsValTable *t, const FsValKind *const *kinds,
                              const FsValInputs *in, GError **error)
{
  g_return_val_if_fail(t != NULL && kinds != NULL && in != NULL && in->cat != NULL, NULL);
  g_autoptr(FsValResult) r = g_new0(FsValResult, 1);
  r->table = g_strdup(t->name);
  r->file = g_strdup(t->file);
  r->kind = g_strdup(fs_val_table_key(t, "kind"));
  r->source = g_strdup(fs_val_table_key(t, "source"));
  r->bar = g_strdup(fs_val_table_key(t, "bar"));
  r->gap = g_strdup(fs_val_table_key(t, "gap"));
  r->rows = g_array_new(FALSE, TRUE, sizeof(FsValRow));
  const FsValKind *k = kind_in(kinds, r->kind);
  r->pass = TRUE;
  if (k == NULL)
    return g_steal_pointer(&r);
  void *ctx = NULL;
  if (!k->prepare(t, in, &ctx, error))
    return NULL;
  r->ran = TRUE;
  double sum = 0;
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < t->nrows; i++) {
    FsValRow row = {.row = i, .line = t->row_lines[i]};
    ok = k->predict(ctx, t, i, t->bar_metric, &row.predicted, &row.measured, &row.size, error);
    if (!ok)
      break;
    row.error_pct = row.measured != 0 ? 100 * (row.predicted - row.measured) / row.measured : NAN;
    row.in_scope = row.size >= t->bar_min_size && isfinite(row.error_pct);
    if (row.in_scope) {
      r->in_scope++;
      sum += fabs(row.error_pct);
      r->max_abs_pct = MAX(r->max_abs_pct, fabs(row.error_pct));
    }
    g_array_append_val(r->rows, row);
  }
  if (k->free_ctx != NULL)
    k->free_ctx(ctx);
  if (!ok)
    return NULL;
  r->mape = r->in_scope > 0 ? sum / r->in_scope : 0;
  r->pass = r->in_scope > 0 && r->mape <= t->bar_pct;
  return g_steal_pointer(&r);
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

GPtrArray *fs_val_list_tables(const char *dir, GError **error)
{
  GError *e = NULL;
  g_autoptr(GDir) d = g_dir_open(dir, 0, &e);
  if (d == NULL) {
    g_set_error(error, FS_VAL_ERROR, FS_VAL_ERROR_IO, "cannot open reference folder: %s",
                e->message);
    g_error_free(e);
    return NULL;
  }
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  for (const char *n; (n = g_dir_read_name(d)) != NULL;)
    if (g_str_has_suffix(n, ".csv") && n[0] != '.')
      g_ptr_array_add(files, g_build_filename(dir, n, NULL));
  g_ptr_array_sort(files, cmp_str);
  return files;
}

const char *fs_val_default_dir(void)
{
  return fs_datadir(FS_DATA_VALIDATION);
}

static void set(json_t *o, const char *k, json_t *v) { json_object_set_new(o, k, v); }

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

json_t *fs_val_result_json(const FsValResult *r)
{
  json_t *o = json_object();
  set(o, "table", json_string(r->table));
  set(o, "file", json_string(r->file));
  set(o, "kind", json_string(r->kind));
  set(o, "source", json_string(r->source));
  set(o, "bar", json_string(r->bar));
  set(o, "ran", json_boolean(r->ran));
  set(o, "pass", json_boolean(r->pass));
  set(o, "gap", r->gap != NULL ? json_string(r->gap) : json_null());
  set(o, "rows_in_scope", json_integer(r->in_scope));
  set(o, "mape_pct", r->ran ? num(r->mape) : json_null());
  set(o, "max_abs_pct", r->ran ? num(r->max_abs_pct) : json_null());
  json_t *rows = json_array();
  for (guint i = 0; i < r->rows->len; i++) {
    const FsValRow *row = &g_array_index(r->rows, FsValRow, i);
    json_t *ro = json_object();
    set(ro, "line", json_integer(row->line));
    set(ro, "size_bytes", json_integer((json_int_t)row->size));
    set(ro, "predicted", num(row->predicted));
    set(ro, "measured", num(row->measured));
    set(ro, "error_pct", num(row->error_pct));
    set(ro, "in_scope", json_boolean(row->in_scope));
    if (row->fit)
      set(ro, "fit", json_true());
    json_array_append_new(rows, ro);
  }
  set(o, "rows", rows);
  return o;
}
