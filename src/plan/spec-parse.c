/* spec-parse.c — see plan.h ("Option values"). */
#include <math.h>
#include <string.h>

#include "plan/plan.h"
#include "util/error.h"
#include "util/units.h"

/* A count with an optional decimal suffix: K, M, G (or B), T. */
/* The largest amount an option takes: 1000 T (10^15) dollars, tokens,
 * years or kWh.  Past it the plan's totals (days, dollars, MWh) stop being
 * printable as figures; no real plan comes near (the largest training runs
 * are tens of T tokens). */
#define AMOUNT_MAX 1e15

gboolean fs_planner_parse_amount(const char *opt, const char *text, double *out, GError **error)
{
  g_autofree char *t = g_strstrip(g_strdup(text));
  const char *s = t[0] == '$' ? t + 1 : t;
  gsize n = strlen(s);
  double mult = 1;
  if (n > 0) {
    switch (s[n - 1]) {
    case 'k': case 'K': mult = 1e3; break;
    case 'M': mult = 1e6; break;
    case 'G': case 'B': mult = 1e9; break;
    case 'T': mult = 1e12; break;
    default: break;
    }
  }
  g_autofree char *num = g_strndup(s, mult > 1 ? n - 1 : n);
  double v;
  if (!fs_parse_number(num, &v, NULL) || !(v >= 0) || !isfinite(v * mult)) {
    g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR, "%s expects a number >= 0 (suffixes K, M, G, T), not \"%s\"", opt, text);
    return FALSE;
  }
  if (v * mult > AMOUNT_MAX) {
    g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR,
                "%s is %s, above the limit of 1e15 (1000 T) for an amount", opt, text);
    return FALSE;
  }
  *out = v * mult;
  return TRUE;
}

gboolean fs_planner_parse_list(const char *opt, const char *text, guint *out, guint *n, GError **error)
{
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  *n = 0;
  for (guint i = 0; parts[i] != NULL; i++) {
    int64_t v;
    g_strstrip(parts[i]);
    if (*n >= FS_PLANNER_MAX_CHOICES || !fs_parse_int(parts[i], &v, NULL) || v > G_MAXINT) {
      g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR, "%s expects up to %u comma-separated integers, not \"%s\"", opt,
                   FS_PLANNER_MAX_CHOICES, text);
      return FALSE;
    }
    out[(*n)++] = (guint)v;
  }
  return TRUE;
}

gboolean fs_planner_parse_gpus(const char *text, FsPlannerSpec *s, GError **error)
{
  const char *dash = strchr(text, '-');
  if (dash == NULL)
    return fs_planner_parse_list("--gpus", text, s->gpus, &s->n_gpus, error);
  g_autofree char *lo = g_strndup(text, dash - text);
  int64_t a, b;
  if (!fs_parse_int(g_strstrip(lo), &a, NULL) || !fs_parse_int(dash + 1, &b, NULL) || a < 1 ||
      b < a || b > (1 << 24)) {
    g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR, "--gpus expects a list (8,16,32) or a range LO-HI with 1 <= LO <= HI, not \"%s\"", text);
    return FALSE;
  }
  s->gpus_min = (guint)a;
  s->gpus_max = (guint)b;
  return TRUE;
}

gboolean fs_planner_parse_recompute(const char *text, FsPlannerSpec *s, GError **error)
{
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  for (guint i = 0; parts[i] != NULL; i++) {
    FsRecompute r;
    if (s->n_recompute >= FS_PLANNER_MAX_CHOICES || !fs_recompute_from_name(g_strstrip(parts[i]), &r)) {
      g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR, "--recompute expects none, selective or full (comma-separated), not \"%s\"", text);
      return FALSE;
    }
    s->recompute[s->n_recompute++] = r;
  }
  return TRUE;
}

gboolean fs_planner_parse_schedules(const char *text, FsPlannerSpec *s, GError **error)
{
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  for (guint i = 0; parts[i] != NULL; i++) {
    FsPpSchedule v;
    if (s->n_schedule >= FS_PLANNER_MAX_CHOICES || !fs_pp_schedule_from_name(g_strstrip(parts[i]), &v)) {
      g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR, "--schedule expects gpipe, 1f1b or interleaved (comma-separated), not \"%s\"", text);
      return FALSE;
    }
    s->schedule[s->n_schedule++] = v;
  }
  return TRUE;
}

gboolean fs_planner_parse_step(const char *text, double *out, GError **error)
{
  double v;
  FsTime t;
  if (fs_parse_number(text, &v, NULL) && v > 0 && isfinite(v)) {
    *out = v;
    return TRUE;
  }
  if (fs_parse_time(text, &t, NULL) && t > 0) {
    *out = fs_time_to_s(t);
    return TRUE;
  }
  g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR, "--target-step-time expects a time > 0 (\"20 s\", \"900 ms\"), not \"%s\"", text);
  return FALSE;
}

