/* validate.c — see validate.h. */
#include "report/validate.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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
  g_string_append_printf(out, "  %s MAPE %s %% over %u row%s (max %s %%): %s\n", metric, mape, r->in_scope,
         r->in_scope == 1 ? "" : "s", mx,
         r->pass ? (r->gap ? "PASS (its gap is closed: remove the table's gap line)" : "PASS")
                 : (r->gap ? "KNOWN GAP" : "FAIL"));
  if (r->gap != NULL && !r->pass)
    g_string_append_printf(out, "  known gap: %s\n", r->gap);
  g_string_append(out, "\n");
}

FsValReport *fs_report_validate_new(const char *calibration)
{
  FsValReport *v = g_new0(FsValReport, 1);
  v->calibration = g_strdup(calibration);
  v->tables = json_array();
  v->notes = json_array();
  v->text = g_string_new(NULL);
  return v;
}

void fs_report_validate_add(FsValReport *v, const FsValResult *r, const char *metric)
{
  if (!r->ran)
    v->not_run++;
  else if (r->pass)
    v->pass++;
  else if (r->gap != NULL)
    v->gaps++;
  else
    v->failed++;
  json_array_append_new(v->tables, fs_val_result_json(r));
  table_text(v->text, r, metric);
}

void fs_report_validate_note(FsValReport *v, const char *line)
{
  json_array_append_new(v->notes, json_string(line));
  g_string_append_printf(v->text, "%s\n", line);
}

void fs_report_validate_training(FsValReport *v, const FsTrainRef *ref)
{
  for (guint i = 0; i < ref->tables->len; i++) {
    const FsTrainRefTable *t = g_ptr_array_index(ref->tables, i);
    g_autofree char *metric = g_strdup_printf("test-set %s", t->metric);
    fs_report_validate_add(v, t->result, metric);
    g_autofree char *fit = fmt("%.2f", t->fit_mape), *raw = fmt("%.2f", t->raw_mape);
    g_autofree char *k = fmt("%.3f", t->factor);
    g_autofree char *line = g_strdup_printf("  (%s: fit rows in sample %s %% over %u; raw, all rows "
                                            "%s %%; %s factor %s)\n", t->result->table, fit,
                                            t->n_fit, raw, t->generation, k);
    fs_report_validate_note(v, line);
  }
  for (guint g = 0; g < ref->generations->len; g++) {
    g_autofree char *k = fmt("%.3f", g_array_index(ref->factors, double, g));
    g_autofree char *line = g_strdup_printf("training calibration %s: step times x %s, fitted on %u "
                                            "fit rows", (char *)g_ptr_array_index(ref->generations, g),
                                            k, g_array_index(ref->fit_rows, guint, g));
    fs_report_validate_note(v, line);
  }
  g_autofree char *mape = fmt("%.2f", ref->test_mape);
  g_autofree char *line = g_strdup_printf("training tables: test-set MAPE %s %% over %u rows\n", mape,
                                          ref->n_test);
  fs_report_validate_note(v, line);
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
