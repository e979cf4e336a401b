/* units.c — see units.h. */
#include "report/units.h"

#include <string.h>

#include "util/strutil.h"
#include "util/units.h"

/* Prints one quantity of the named kind; FALSE with error if it does not parse. */
static gboolean print_one(GString *out, const char *kind, const char *text, GError **error)
{
  if (strcmp(kind, "bandwidth") == 0) {
    double v;
    if (!fs_parse_bandwidth(text, &v, error))
      return FALSE;
    g_autofree char *f = fs_format_bandwidth(v);
    g_string_append_printf(out, "%s\tbandwidth\t%.17g B/s\t%s\t%.6g Gb/s\n", text, v, f, v * 8 / 1e9);
  } else if (strcmp(kind, "lane-rate") == 0) {
    double v;
    if (!fs_parse_lane_rate(text, &v, error))
      return FALSE;
    g_string_append_printf(out, "%s\tlane-rate\t%.17g bit/s\n", text, v);
  } else if (strcmp(kind, "time") == 0) {
    FsTime v;
    if (!fs_parse_time(text, &v, error))
      return FALSE;
    g_autofree char *f = fs_format_time(v);
    g_string_append_printf(out, "%s\ttime\t%" G_GINT64_FORMAT " ps\t%s\n", text, v, f);
  } else if (strcmp(kind, "size") == 0) {
    uint64_t v;
    if (!fs_parse_size(text, &v, error))
      return FALSE;
    g_autofree char *f = fs_format_size(v);
    g_string_append_printf(out, "%s\tsize\t%" G_GUINT64_FORMAT " B\t%s\n", text, v, f);
  } else if (strcmp(kind, "power") == 0) {
    double v;
    if (!fs_parse_power(text, &v, error))
      return FALSE;
    g_string_append_printf(out, "%s\tpower\t%.17g W\n", text, v);
  } else if (strcmp(kind, "flops") == 0) {
    double v;
    if (!fs_parse_flops(text, &v, error))
      return FALSE;
    g_string_append_printf(out, "%s\tflops\t%.17g FLOP/s\n", text, v);
  } else {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "unknown kind \"%s\"; expected bandwidth, lane-rate, time, size, power or flops",
                kind);
    return FALSE;
  }
  return TRUE;
}

/* Without --kind: the first kind that accepts the text, in an order where
 * the units cannot be confused (a bare number is a size, as in nccl-tests).
 * When none accepts it, the most telling reason: a value out of range for
 * the kind whose unit it carries ("1e30 TB/s", "-5 ns"), then junk after a
 * known unit ("5 GB/sx"), else a sentence listing the kinds. */
static gboolean print_guess(GString *out, const char *text, GError **error)
{
  static const char *const kinds[] = {"bandwidth", "lane-rate", "time", "power", "flops", "size"};
  GError *reasons[G_N_ELEMENTS(kinds)] = {NULL};
  gboolean ok = FALSE;
  guint n = 0;
  for (; n < G_N_ELEMENTS(kinds) && !ok; n++)
    ok = print_one(out, kinds[n], text, &reasons[n]);
  GError *best = NULL;
  if (!ok) {
    char *end = NULL;
    g_ascii_strtod(text, &end);
    gboolean has_number = end != NULL && end != text;
    for (guint i = 0; i < n && best == NULL; i++)
      if (reasons[i]->code == FS_UNITS_ERROR_RANGE)
        best = reasons[i];
    for (guint i = 0; i < n && best == NULL && has_number; i++)
      if (reasons[i]->code == FS_UNITS_ERROR_SYNTAX)
        best = reasons[i];
    if (best != NULL)
      g_propagate_error(error, g_error_copy(best));
    else {
      g_autofree char *shown = fs_escape_controls(text);
      g_set_error(error, FS_UNITS_ERROR, FS_UNITS_ERROR_UNIT,
                  "\"%s\" is not a bandwidth, lane rate, time, power, FLOP rate or size "
                  "(e.g. \"50 GB/s\", \"16 GT/s\", \"1.5 us\", \"700 W\", \"989 TFLOP/s\", \"16G\"); "
                  "use --kind KIND for the reason",
                  shown);
    }
  }
  for (guint i = 0; i < n; i++)
    g_clear_error(&reasons[i]);
  return ok;
}

gboolean fs_report_quantity(GString *out, const char *kind, const char *text, GError **error)
{
  return kind != NULL ? print_one(out, kind, text, error) : print_guess(out, text, error);
}
