/* fuzz-units.c — libFuzzer driver for the units parsers (src/util/units.c).
 *
 * The input, cut at its first NUL, goes to every parser in turn.  Promises
 * checked: a parser returns TRUE with no error or FALSE with an error in
 * FS_UNITS_ERROR whose message is one line (for one-line input) and quotes
 * the input; accepted values are in the documented ranges; and formatted
 * times and sizes parse back to within the printed precision.
 * Corpus: tests/data/units/.
 */
#include <math.h>


#include "fuzz-common.h"
#include "util/units.h"

/* Checks the outcome of one parser call; frees the error. */
static void check_outcome(const char *what, const char *text, gboolean ok, GError *error)
{
  if (ok) {
    if (error != NULL)
      fs_fuzz_fail("%s(\"%s\") succeeded but set an error: %s", what, text, error->message);
    return;
  }
  if (error == NULL)
    fs_fuzz_fail("%s(\"%s\") failed without an error", what, text);
  if (error->domain != FS_UNITS_ERROR)
    fs_fuzz_fail("%s(\"%s\"): error outside FS_UNITS_ERROR: %s", what, text, error->message);
  if (strpbrk(text, "\n\r") == NULL)
    fs_fuzz_check_one_line(error);
  g_error_free(error);
}

static void check_double(const char *what, const char *text, double v, double lo, double hi,
                         gboolean open_low)
{
  if (!isfinite(v) || v < lo || v > hi || (open_low && v <= lo))
    fs_fuzz_fail("%s(\"%s\") accepted %g, outside its range", what, text, v);
}

/* Times: fs_format_time prints three decimals of the chosen unit. */
static void check_time_round_trip(FsTime t)
{
  g_autofree char *s = fs_format_time(t);
  FsTime back;
  GError *error = NULL;
  if (!fs_parse_time(s, &back, &error))
    fs_fuzz_fail("fs_format_time(%" G_GINT64_FORMAT ") = \"%s\" does not parse: %s", t, s,
                 error->message);
  /* At most half a thousandth of the printed unit, which is at most the
   * value itself (the number printed is at least 1); exact below 1 ns. */
  FsTime diff = back > t ? back - t : t - back;
  if (t < FS_NS ? diff != 0 : (double)diff * 2000 > (double)t)
    fs_fuzz_fail("fs_format_time(%" G_GINT64_FORMAT ") = \"%s\" reads back as %" G_GINT64_FORMAT,
                 t, s, back);
}

/* Sizes: exact when printed as an integer, else tenths of a binary unit. */
static void check_size_round_trip(uint64_t bytes)
{
  g_autofree char *s = fs_format_size(bytes);
  uint64_t back;
  GError *error = NULL;
  if (!fs_parse_size(s, &back, &error))
    fs_fuzz_fail("fs_format_size(%" G_GUINT64_FORMAT ") = \"%s\" does not parse: %s", bytes, s,
                 error->message);
  uint64_t diff = back > bytes ? back - bytes : bytes - back;
  if (strchr(s, '.') == NULL ? diff != 0 : (double)diff > (double)bytes * 0.05 + 1)
    fs_fuzz_fail("fs_format_size(%" G_GUINT64_FORMAT ") = \"%s\" reads back as %" G_GUINT64_FORMAT,
                 bytes, s, back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* Units are short; long inputs only slow the fuzzer down. */
  if (size > 256)
    return 0;
  g_autofree char *text = g_strndup((const char *)data, size);
  GError *error = NULL;
  gboolean ok;
  double d;
  int64_t i;
  uint64_t u;
  FsTime t;

  ok = fs_parse_number(text, &d, &error);
  if (ok && !isfinite(d))
    fs_fuzz_fail("fs_parse_number(\"%s\") accepted a non-finite number", text);
  check_outcome("fs_parse_number", text, ok, error);
  error = NULL;

  ok = fs_parse_int(text, &i, &error);
  if (ok && i < 0)
    fs_fuzz_fail("fs_parse_int(\"%s\") accepted a negative number", text);
  check_outcome("fs_parse_int", text, ok, error);
  error = NULL;

  ok = fs_parse_int64(text, &i, &error);
  check_outcome("fs_parse_int64", text, ok, error);
  error = NULL;

  ok = fs_parse_bandwidth(text, &d, &error);
  if (ok) {
    check_double("fs_parse_bandwidth", text, d, 0, FS_BANDWIDTH_MAX, TRUE);
    g_autofree char *s = fs_format_bandwidth(d);
    double back;
    GError *e2 = NULL;
    /* Below 0.05 B/s the text is "0.0 B/s", which is not a bandwidth. */
    if (d >= 1 && !fs_parse_bandwidth(s, &back, &e2))
      fs_fuzz_fail("fs_format_bandwidth(%g) = \"%s\" does not parse: %s", d, s, e2->message);
  }
  check_outcome("fs_parse_bandwidth", text, ok, error);
  error = NULL;

  ok = fs_parse_lane_rate(text, &d, &error);
  if (ok)
    check_double("fs_parse_lane_rate", text, d, 0, FS_LANE_RATE_MAX, TRUE);
  check_outcome("fs_parse_lane_rate", text, ok, error);
  error = NULL;

  ok = fs_parse_power(text, &d, &error);
  if (ok)
    check_double("fs_parse_power", text, d, 0, FS_POWER_MAX, FALSE);
  check_outcome("fs_parse_power", text, ok, error);
  error = NULL;

  ok = fs_parse_flops(text, &d, &error);
  if (ok)
    check_double("fs_parse_flops", text, d, 0, FS_FLOPS_MAX, FALSE);
  check_outcome("fs_parse_flops", text, ok, error);
  error = NULL;

  ok = fs_parse_time(text, &t, &error);
  if (ok) {
    if (t < 0)
      fs_fuzz_fail("fs_parse_time(\"%s\") accepted a negative time", text);
    check_time_round_trip(t);
  }
  check_outcome("fs_parse_time", text, ok, error);
  error = NULL;

  ok = fs_parse_size(text, &u, &error);
  if (ok)
    check_size_round_trip(u);
  check_outcome("fs_parse_size", text, ok, error);
  return 0;
}
