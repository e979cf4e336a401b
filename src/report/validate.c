/* validate.c — see validate.h. */
#include "report/validate.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct FsValReport {
  char *calibration;
  guint pass, failed, not_run, gaps;
  json_t *tables;     /* JSON: one object per table */
  json_t *notes;      /* JSON: the lines added by fs_report_validate_note */
  GString *text;      /* text: the tables so far */
};

static char *fmt(const char *f, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  if (!isfinite(v))
    return g_strdup("-");
  return g_strdup(g_ascii_formatd(buf, sizeof buf, f, v));
}

/* The metrics a gap line records as "<metric> MAPE" (issue 18's tables record busbw, the
 * bar's, and time, the second bar tests/test-coll-accuracy.c checks), other than `skip`,
 * joined with " and "; *has_skip: whether `skip` is one of them.  Caller frees. */
static char *gap_metrics(const char *gap, const char *skip, gboolean *has_skip)
{
  GString *o = g_string_new(NULL);
  *has_skip = FALSE;
  for (const char *at = strstr(gap, " MAPE "); at != NULL; at = strstr(at + 6, " MAPE ")) {
    const char *w = at;
    while (w > gap && g_ascii_isalnum(w[-1]))
      w--;
    if (w == at)
      continue;
    g_autofree char *m = g_strndup(w, (gsize)(at - w));
    if (strcmp(m, skip) == 0) {
      *has_skip = TRUE;
      continue;
    }
    g_autofree char *seen = g_strdup_printf("%s ", o->str);
    g_autofree char *want = g_strdup_printf("%s ", m);
    if (strstr(seen, want) == NULL) /* once each */
      g_string_append_printf(o, "%s%s", o->len ? " and " : "", m);
  }
  return g_string_free(o, FALSE);
}

/* The verdict of a table that meets its bar while it has a gap line: what the bar closed
 * (its metric's record) and what the line still records (another bar's metric, which this
 * command does not check; *open TRUE then).  Caller frees. */
static char *closed_text(const FsValResult *r, const char *metric, gboolean *open)
{
  gboolean own;
  g_autofree char *others = gap_metrics(r->gap, metric, &own);
  *open = others[0] != '\0';
  if (!*open)
    return g_strdup("PASS (its gap is closed: remove the table's gap line)");
  if (own)
    return g_strdup_printf("PASS (its %s gap is closed: remove %s from the table's gap line; "
                           "it also records %s MAPE, a bar this command does not check)",
                           metric, metric, others);
  return g_strdup_printf("PASS (%s meets the bar; the gap line records only %s MAPE, a bar "
                         "this command does not check: that gap is not closed)", metric, others);
}

static void table_text(GString *out, const FsValResult *r, const char *metric)
{
  g_string_append_printf(out, "%s (%s): bar %s\n", r->table, r->kind, r->bar);
  if (!r->ran) {
    g_string_append_printf(out, "  not run: no runner for kind \"%s\" in this build ('fabricsim validate "
           "--list-kinds')\n\n",
           r->kind);
    return;
  }
  g_string_append_printf(out, "  %5s %14s %12s %12s %9s\n", "line", "size (B)", "predicted", "measured", "error %");
  for (guint i = 0; i < r->rows->len; i++) {
    const FsValRow *row = &g_array_index(r->rows, FsValRow, i);
    g_autofree char *p = fmt("%.4g", row->predicted), *m = fmt("%.4g", row->measured);
    g_autofree char *e = fmt("%+.2f", row->error_pct);
    g_string_append_printf(out, "  %5d %14" G_GUINT64_FORMAT " %12s %12s %9s%s\n", row->line, row->size, p, m, e,
           row->fit ? "  (fit row: calibration, outside the bar)"
           : row->in_scope ? "" : "  (outside the bar)");
  }
  g_autofree char *mape = fmt("%.2f", r->mape), *mx = fmt("%.2f", r->max_abs_pct);
  gboolean open = FALSE;
  g_autofree char *verdict = r->pass && r->gap ? closed_text(r, metric, &open)
                             : g_strdup(r->pass ? "PASS" : r->gap ? "KNOWN GAP" : "FAIL");
  g_string_append_printf(out, "  %s MAPE %s %% over %u row%s (max %s %%): %s\n", metric, mape, r->in_scope,
         r->in_scope == 1 ? "" : "s", mx, verdict);
  if (r->gap != NULL && !r->pass)
    g_string_append_printf(out, "  known gap: %s\n", r->gap);
  else if (open)
    g_string_append_printf(out, "  gap line: %s\n", r->gap);
  g_string_append(out, "\n");
}

FsValReport *fs_report_validate_new(const char *calibration, const FsScenario *sc)
{
  FsValReport *v = g_new0(FsValReport, 1);
  v->calibration = g_strdup(calibration);
  v->tables = json_array();
  v->notes = json_array();
  v->text = g_string_new(NULL);
  const char *env = sc != NULL ? fs_scenario_env_text(sc) : NULL;
  if (env != NULL) {
    g_autofree char *line = g_strdup_printf(
      "note: the NCCL_* variables set here (%s) apply to every simulated table, as to "
      "`fabricsim coll` and `train` (a table's own `algorithm:` line wins over NCCL_ALGO); the "
      "measurements ran without them", env);
    fs_report_validate_note(v, line);
    g_string_append(v->text, "\n");
  }
  return v;
}

static void count(FsValReport *v, const FsValResult *r)
{
  if (!r->ran)
    v->not_run++;
  else if (r->pass)
    v->pass++;
  else if (r->gap != NULL)
    v->gaps++;
  else
    v->failed++;
}

void fs_report_validate_add(FsValReport *v, const FsValResult *r, const char *metric)
{
  count(v, r);
  json_array_append_new(v->tables, fs_val_result_json(r));
  table_text(v->text, r, metric);
}

void fs_report_validate_note(FsValReport *v, const char *line)
{
  json_array_append_new(v->notes, json_string(line));
  g_string_append_printf(v->text, "%s\n", line);
}

/* One training table: every row with its name, family and set. */
static void training_text(GString *out, const FsTrainRefTable *t)
{
  const FsValResult *r = t->result;
  g_string_append_printf(out, "%s (%s, %s, %s): bar %s\n", r->table, r->kind, t->generation,
                         t->metric, r->bar);
  g_string_append_printf(out, "  %5s %-4s %-10s %-34s %12s %12s %12s %9s\n", "line", "set", "family",
                         "name", "raw", "predicted", "measured", "error %");
  for (guint i = 0; i < r->rows->len; i++) {
    const FsValRow *row = &g_array_index(r->rows, FsValRow, i);
    g_autofree char *raw = fmt("%.4g", g_array_index(t->raw, double, i));
    g_autofree char *p = fmt("%.4g", row->predicted), *m = fmt("%.4g", row->measured);
    g_autofree char *e = fmt("%+.2f", row->error_pct);
    g_string_append_printf(out, "  %5d %-4s %-10s %-34s %12s %12s %12s %9s\n", row->line,
                           row->fit ? "fit" : "test", (char *)g_ptr_array_index(t->families, i),
                           (char *)g_ptr_array_index(t->names, i), raw, p, m, e);
  }
  g_autofree char *mape = fmt("%.2f", r->mape), *mx = fmt("%.2f", r->max_abs_pct);
  g_autofree char *fit = fmt("%.2f", t->fit_mape), *rawm = fmt("%.2f", t->raw_mape);
  g_string_append_printf(out, "  test-set MAPE %s %% over %u row%s (max %s %%): %s; fit rows in sample "
                         "%s %% over %u; raw, all rows %s %%\n\n", mape, r->in_scope,
                         r->in_scope == 1 ? "" : "s", mx, r->pass ? "PASS" : "FAIL", fit, t->n_fit,
                         rawm);
}

static void groups_text(FsValReport *v, const char *what, const GArray *groups)
{
  for (guint i = 0; i < groups->len; i++) {
    const FsTrainRefGroup *g = &g_array_index(groups, FsTrainRefGroup, i);
    g_autofree char *b = fmt("%+.2f", g->bias), *m = fmt("%.2f", g->mape);
    g_autofree char *rb = fmt("%+.2f", g->raw_bias);
    g_autofree char *line = g_strdup_printf("  %-10s %-10s %3u test rows: step-time bias %7s %%, MAPE %6s %% "
                                            "(without the factor: bias %7s %%)", what, g->name, g->n_test, b, m, rb);
    fs_report_validate_note(v, line);
  }
}

void fs_report_validate_training(FsValReport *v, const FsTrainRef *ref)
{
  for (guint i = 0; i < ref->tables->len; i++) {
    const FsTrainRefTable *t = g_ptr_array_index(ref->tables, i);
    count(v, t->result);
    json_t *o = fs_val_result_json(t->result);
    json_object_set_new(o, "generation", json_string(t->generation));
    json_object_set_new(o, "metric", json_string(t->metric));
    json_t *rows = json_object_get(o, "rows");
    for (guint j = 0; j < json_array_size(rows); j++) {
      json_t *ro = json_array_get(rows, j);
      json_object_set_new(ro, "name", json_string(g_ptr_array_index(t->names, j)));
      json_object_set_new(ro, "family", json_string(g_ptr_array_index(t->families, j)));
      json_object_set_new(ro, "raw", json_real(g_array_index(t->raw, double, j)));
    }
    json_array_append_new(v->tables, o);
    training_text(v->text, t);
  }
  g_autofree char *k = fmt("%.4f", ref->factor);
  g_autofree char *head = g_strdup_printf("training calibration: one step-time factor for every row, "
                                          "x %s, fitted on %u fit rows (no per-family or "
                                          "per-generation factor); errors below are step-time errors, negative = "
                                          "predicted too fast", k, ref->n_fit);
  fs_report_validate_note(v, head);
  g_autofree char *mape = fmt("%.2f", ref->test_mape), *mx = fmt("%.2f", ref->test_max);
  g_autofree char *bias = fmt("%+.2f", ref->test_bias), *raw = fmt("%.2f", ref->raw_test_mape);
  g_autofree char *line = g_strdup_printf("training tables: test-set step-time MAPE %s %% over %u rows "
                                          "(max %s %%, bias %s %%; without the factor %s %%)", mape,
                                          ref->n_test, mx, bias, raw);
  fs_report_validate_note(v, line);
  groups_text(v, "family", ref->families);
  groups_text(v, "generation", ref->generations);
  g_string_append(v->text, "\n");
}

guint fs_report_validate_finish(FsValReport *v, GString *out, FsReportFormat fmt)
{
  if (fmt == FS_REPORT_JSON) {
    json_t *doc = json_object();
    json_object_set_new(doc, "calibration", v->calibration ? json_string(v->calibration) : json_null());
    json_object_set_new(doc, "tables", json_incref(v->tables));
    if (json_array_size(v->notes) > 0)
      json_object_set_new(doc, "notes", json_incref(v->notes));
    json_object_set_new(doc, "passed", json_integer(v->pass));
    json_object_set_new(doc, "failed", json_integer(v->failed));
    json_object_set_new(doc, "not_run", json_integer(v->not_run));
    json_object_set_new(doc, "known_gaps", json_integer(v->gaps));
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(8));
    json_decref(doc);
    g_string_append_printf(out, "%s\n", text);
    free(text);
  } else {
    g_string_append(out, v->text->str);
    g_string_append_printf(out, "summary: %u passed, %u failed, %u not run", v->pass, v->failed,
                           v->not_run);
    if (v->gaps > 0)
      g_string_append_printf(out, ", %u known gap%s (missed bars recorded in the tables' gap lines)",
                             v->gaps, v->gaps == 1 ? "" : "s");
    g_string_append(out, "\n");
  }
  return v->failed;
}

void fs_report_validate_free(FsValReport *v)
{
  if (v == NULL)
    return;
  g_free(v->calibration);
  json_decref(v->tables);
  json_decref(v->notes);
  g_string_free(v->text, TRUE);
  g_free(v);
}
