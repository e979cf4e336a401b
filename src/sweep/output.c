/* output.c — CSV and JSON rows of a sweep, the in-order streaming writer
 * and resume (contract in output.h). */
#include <errno.h>
#include <jansson.h>
#include <string.h>
#include <glib/gstdio.h>

#include "sweep/output.h"
#include "util/error.h"
#include "util/strutil.h"

struct FsSweepWriter {
  const FsSweepSpec *spec;
  FsSweepFormat fmt;
  char *path, *partial;
  FILE *out;                 /* the partial file, or stdout */
  guint next, n;             /* next point to write; points in all */
  GHashTable *pending;       /* point → FsSweepResult*, ahead of next */
};

static void csv_field(GString *out, const char *v)
{
  if (v == NULL)
    return;
  if (strpbrk(v, ",\"\n\r") == NULL) {
    g_string_append(out, v);
    return;
  }
  g_string_append_c(out, '"');
  for (const char *c = v; *c; c++) {
    if (*c == '"')
      g_string_append_c(out, '"');
    g_string_append_c(out, *c);
  }
  g_string_append_c(out, '"');
}

static void json_str(GString *out, const char *v)
{
  json_t *j = json_string(v);
  if (j == NULL) { /* not UTF-8: the message is still shown, escaped */
    g_autofree char *esc = g_strescape(v, NULL);
    j = json_string(esc);
  }
  char *t = json_dumps(j, JSON_ENCODE_ANY);
  g_string_append(out, t);
  free(t);
  json_decref(j);
}

/* A JSON number exactly as written ("8", "1.5e9"); else FALSE. */
static gboolean is_number(const char *v)
{
  return v[0] != '\0' && g_regex_match_simple("^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?$",
                                              v, 0, 0);
}

static void json_value(GString *out, const char *v, gboolean numeric)
{
  if (v == NULL)
    g_string_append(out, "null");
  else if (numeric && is_number(v))
    g_string_append(out, v);
  else
    json_str(out, v);
}

char *fs_sweep_format_header(const FsSweepSpec *s, FsSweepFormat fmt)
{
  const FsSweepKind *k = fs_sweep_spec_kind(s);
  GString *out = g_string_new(NULL);
  if (fmt == FS_SWEEP_CSV) {
    g_string_append(out, "point");
    for (guint i = 0; i < fs_sweep_spec_n_axes(s); i++) {
      g_string_append_c(out, ',');
      csv_field(out, fs_sweep_spec_axis(s, i));
    }
    g_string_append(out, ",status");
    for (guint i = 0; k->columns[i].name; i++)
      g_string_append_printf(out, ",%s", k->columns[i].name);
    g_string_append(out, ",error");
    return g_string_free(out, FALSE);
  }
  g_string_append_printf(out, "{\"schema_version\": %d, \"sweep\": ", FS_SWEEP_SCHEMA_VERSION);
  json_str(out, fs_sweep_spec_name(s));
  g_string_append_printf(out, ", \"kind\": \"%s\", \"points_total\": %u, \"params\": [", k->name,
                         fs_sweep_spec_n_points(s));
  for (guint i = 0; i < fs_sweep_spec_n_axes(s); i++) {
    g_string_append(out, i ? ", " : "");
    json_str(out, fs_sweep_spec_axis(s, i));
  }
  g_string_append(out, "], \"columns\": [");
  for (guint i = 0; k->columns[i].name; i++)
    g_string_append_printf(out, "%s\"%s\"", i ? ", " : "", k->columns[i].name);
  g_string_append(out, "], \"points\": [");
  return g_string_free(out, FALSE);
}

/* The row's leading part that depends only on the point (used to match
 * rows when resuming). */
static void row_prefix(GString *out, const FsSweepSpec *s, FsSweepFormat fmt, guint point)
{
  if (fmt == FS_SWEEP_CSV) {
    g_string_append_printf(out, "%u", point);
    for (guint i = 0; i < fs_sweep_spec_n_axes(s); i++) {
      g_string_append_c(out, ',');
      csv_field(out, fs_sweep_point_get(s, point, fs_sweep_spec_axis(s, i)));
    }
    g_string_append_c(out, ',');
    return;
  }
  g_string_append_printf(out, "{\"point\": %u, \"params\": {", point);
  for (guint i = 0; i < fs_sweep_spec_n_axes(s); i++) {
    g_string_append(out, i ? ", " : "");
    json_str(out, fs_sweep_spec_axis(s, i));
    g_string_append(out, ": ");
    json_value(out, fs_sweep_point_get(s, point, fs_sweep_spec_axis(s, i)), TRUE);
  }
  g_string_append(out, "}, ");
}

char *fs_sweep_format_row(const FsSweepSpec *s, FsSweepFormat fmt, const FsSweepResult *r)
{
  const FsSweepKind *k = fs_sweep_spec_kind(s);
  GString *out = g_string_new(NULL);
  row_prefix(out, s, fmt, r->index);
  if (fmt == FS_SWEEP_CSV) {
    g_string_append(out, r->ok ? "ok" : "error");
    for (guint i = 0; k->columns[i].name; i++) {
      g_string_append_c(out, ',');
      csv_field(out, r->ok ? r->values[i] : NULL);
    }
    g_string_append_c(out, ',');
    csv_field(out, r->error);
    return g_string_free(out, FALSE);
  }
  g_string_append_printf(out, "\"status\": \"%s\", \"results\": ", r->ok ? "ok" : "error");
  if (r->ok) {
    g_string_append_c(out, '{');
    for (guint i = 0; k->columns[i].name; i++) {
      g_string_append_printf(out, "%s\"%s\": ", i ? ", " : "", k->columns[i].name);
      json_value(out, r->values[i], k->columns[i].type == FS_COL_NUM);
    }
    g_string_append_c(out, '}');
  } else {
    g_string_append(out, "null");
  }
  g_string_append(out, ", \"error\": ");
  json_value(out, r->error, FALSE);
  g_string_append_c(out, '}');
  return g_string_free(out, FALSE);
}

static gboolean io_error(GError **error, const char *path, int err)
{
  g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_IO, "%s: %s", path, g_strerror(err));
  return FALSE;
}

static gboolean put_line(FsSweepWriter *w, const char *line, gboolean last_point, GError **error)
{
  gboolean comma = w->fmt == FS_SWEEP_JSON && !last_point;
  if (fprintf(w->out, "%s%s\n", line, comma ? "," : "") < 0 || fflush(w->out) != 0)
    return io_error(error, w->partial ? w->partial : "stdout", errno);
  return TRUE;
}

/* Reads the rows of a previous run: keeps header + the rows that match
 * points 0, 1, … (complete lines only).  Sets w->next. */
static gboolean read_previous(FsSweepWriter *w, const char *from, GString *keep, GError **error)
{
  g_autofree char *text = NULL;
  gsize len;
  GError *local = NULL;
  if (!g_file_get_contents(from, &text, &len, &local)) {
    g_propagate_error(error, local);
    return FALSE;
  }
  g_autofree char *header = fs_sweep_format_header(w->spec, w->fmt);
  char *line = text, *nl = strchr(line, '\n');
  if (nl == NULL || (size_t)(nl - line) != strlen(header) || strncmp(line, header, nl - line) != 0) {
    g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_RESUME,
                "%s was not written by this sweep spec (its header differs); remove it or "
                "choose another output", from);
    return FALSE;
  }
  g_string_append_len(keep, line, nl - line + 1);
  line = nl + 1;
  g_autoptr(GString) prefix = g_string_new(NULL);
  while (w->next < w->n && (nl = strchr(line, '\n')) != NULL) {
    g_string_truncate(prefix, 0);
    row_prefix(prefix, w->spec, w->fmt, w->next);
    if (strncmp(line, prefix->str, prefix->len) != 0) {
      if (w->fmt == FS_SWEEP_JSON && line[0] == ']')
        break;  /* the footer of a finished file */
      g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_RESUME,
                  "%s: row %u is not point %u of this sweep spec; remove the file or choose "
                  "another output", from, w->next + 1, w->next);
      return FALSE;
    }
    g_string_append_len(keep, line, nl - line + 1);
    line = nl + 1;
    w->next++;
  }
  return TRUE;
}

FsSweepWriter *fs_sweep_writer_open(const FsSweepSpec *s, const char *path, FsSweepFormat fmt,
                                    gboolean resume, GError **error)
{
  g_autoptr(FsSweepWriter) w = g_new0(FsSweepWriter, 1);
  w->spec = s;
  w->fmt = fmt;
  w->n = fs_sweep_spec_n_points(s);
  w->pending = g_hash_table_new(g_direct_hash, g_direct_equal);
  if (path == NULL) {
    w->out = stdout;
    g_autofree char *h = fs_sweep_format_header(s, fmt);
    if (!put_line(w, h, TRUE, error))
      return NULL;
    return g_steal_pointer(&w);
  }
  w->path = g_strdup(path);
  w->partial = g_strconcat(path, ".partial", NULL);
  g_autoptr(GString) keep = g_string_new(NULL);
  if (resume) {
    const char *from = g_file_test(w->partial, G_FILE_TEST_EXISTS) ? w->partial
                       : g_file_test(path, G_FILE_TEST_EXISTS)     ? path
                                                                   : NULL;
    if (from != NULL && !read_previous(w, from, keep, error))
      return NULL;
  }
  if (keep->len == 0) {
    g_autofree char *h = fs_sweep_format_header(s, fmt);
    g_string_append_printf(keep, "%s\n", h);
  }
  if ((w->out = g_fopen(w->partial, "w")) == NULL) {
    io_error(error, w->partial, errno);
    return NULL;
  }
  if (fwrite(keep->str, 1, keep->len, w->out) != keep->len || fflush(w->out) != 0) {
    io_error(error, w->partial, errno);
    return NULL;
  }
  return g_steal_pointer(&w);
}

guint fs_sweep_writer_done(const FsSweepWriter *w) { return w->next; }

gboolean fs_sweep_writer_add(FsSweepWriter *w, FsSweepResult *r, GError **error)
{
  FsSweepResult *copy = g_new(FsSweepResult, 1);
  *copy = *r;
  r->values = NULL;
  r->error = NULL;
  g_hash_table_insert(w->pending, GUINT_TO_POINTER(copy->index), copy);
  FsSweepResult *next;
  while ((next = g_hash_table_lookup(w->pending, GUINT_TO_POINTER(w->next))) != NULL) {
    g_hash_table_remove(w->pending, GUINT_TO_POINTER(w->next));
    g_autofree char *line = fs_sweep_format_row(w->spec, w->fmt, next);
    fs_sweep_result_clear(next);
    g_free(next);
    if (!put_line(w, line, w->next + 1 == w->n, error))
      return FALSE;
    w->next++;
  }
  return TRUE;
}

gboolean fs_sweep_writer_finish(FsSweepWriter *w, GError **error)
{
  if (w->next != w->n) {
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_IO,
                "the sweep stopped after %u of %u points", w->next, w->n);
    return FALSE;
  }
  if (w->fmt == FS_SWEEP_JSON && fputs("]}\n", w->out) < 0)
    return io_error(error, w->partial ? w->partial : "stdout", errno);
  if (w->path == NULL)
    return fflush(stdout) == 0 ? TRUE : io_error(error, "stdout", errno);
  if (fclose(w->out) != 0) {
    w->out = NULL;
    return io_error(error, w->partial, errno);
  }
  w->out = NULL;
  g_autofree char *text = NULL;
  gsize len;
  if (!g_file_get_contents(w->partial, &text, &len, error))
    return FALSE;
  if (!fs_write_file_atomic(w->path, text, len, error))
    return FALSE;
  g_unlink(w->partial);
  return TRUE;
}

static void pending_free(gpointer key, gpointer value, gpointer ud)
{
  (void)key;
  (void)ud;
  fs_sweep_result_clear(value);
  g_free(value);
}

void fs_sweep_writer_free(FsSweepWriter *w)
{
  if (w == NULL)
    return;
  if (w->out != NULL && w->out != stdout)
    fclose(w->out);
  g_hash_table_foreach(w->pending, pending_free, NULL);
  g_hash_table_unref(w->pending);
  g_free(w->path);
  g_free(w->partial);
  g_free(w);
}

GError *fs_sweep_interrupted_error(guint kept, guint total, const char *out)
{
  if (out != NULL)
    return g_error_new(FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED,
                       "interrupted: %u of %u points done; re-run with --resume to finish %s",
                       kept, total, out);
  return g_error_new(FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED,
                     "interrupted: %u of %u points done (rows above); use -o FILE to be able to "
                     "resume", kept, total);
}
