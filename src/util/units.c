/* units.c — see units.h.
 *
 * Every quantity parser follows one path: scan a decimal number (sign,
 * digits, point, exponent), skip blanks, then look the rest of the text up
 * in the kind's table of units.  Times and sizes are converted in exact
 * decimal arithmetic (a 64-bit mantissa and a power of ten, 128-bit
 * intermediates) so that "1.5 us" or "9223372.036854775807 s" land on the
 * exact picosecond; rates stay doubles.  The tables below are
 * the only place that knows the units; the error messages list them.
 */
#include "util/units.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "util/error.h"
#include "util/strutil.h"

G_DEFINE_QUARK(fs-units-error-quark, fs_units_error)

/* One unit: its spelling, its factor to the kind's base unit, and whether
 * it is listed in messages (aliases such as "kB/s" are accepted quietly). */
typedef struct {
  const char *name;
  double factor;
  uint64_t exact;   /* the factor as an integer when it is one, else 0 */
  gboolean hidden;
} Unit;

/* One kind of quantity. */
typedef struct {
  const char *what;      /* "bandwidth", for "expected a bandwidth like ..." */
  const char *article;   /* "a" or "an" */
  const char *example;   /* "50 GB/s" */
  const Unit *units;     /* terminated by a NULL name */
  gboolean unit_required;
  gboolean positive;     /* zero is rejected too */
  double max;            /* largest accepted value in base units (doubles) */
  const char *max_text;  /* that limit for people */
} Kind;

#define K10 1000ULL
#define K2 1024ULL

static const Unit bandwidth_units[] = {
  {"B/s", 1, 1, FALSE},
  {"KB/s", 1e3, K10, FALSE},
  {"kB/s", 1e3, K10, TRUE},
  {"MB/s", 1e6, K10 * K10, FALSE},
  {"GB/s", 1e9, K10 * K10 * K10, FALSE},
  {"TB/s", 1e12, K10 * K10 * K10 * K10, FALSE},
  {"PB/s", 1e15, K10 * K10 * K10 * K10 * K10, TRUE},
  {"EB/s", 1e18, K10 * K10 * K10 * K10 * K10 * K10, TRUE},
  {"KiB/s", 1024.0, K2, FALSE},
  {"MiB/s", 1048576.0, K2 * K2, FALSE},
  {"GiB/s", 1073741824.0, K2 * K2 * K2, FALSE},
  {"TiB/s", 1099511627776.0, K2 * K2 * K2 * K2, FALSE},
  {"b/s", 0.125, 0, FALSE},
  {"Kb/s", 125.0, 125, FALSE},
  {"kb/s", 125.0, 125, TRUE},
  {"Mb/s", 125e3, 125000, FALSE},
  {"Gb/s", 125e6, 125000000, FALSE},
  {"Tb/s", 125e9, 125000000000ULL, FALSE},
  {"bps", 0.125, 0, TRUE},
  {"Kbps", 125.0, 125, TRUE},
  {"kbps", 125.0, 125, TRUE},
  {"Mbps", 125e3, 125000, TRUE},
  {"Gbps", 125e6, 125000000, FALSE},
  {"Tbps", 125e9, 125000000000ULL, TRUE},
  {NULL, 0, 0, FALSE},
};

static const Unit lane_rate_units[] = {
  {"GT/s", 1e9, K10 * K10 * K10, FALSE},
  {"MT/s", 1e6, K10 * K10, FALSE},
  {"Gb/s", 1e9, K10 * K10 * K10, FALSE},
  {"Gbps", 1e9, K10 * K10 * K10, FALSE},
  {"Mb/s", 1e6, K10 * K10, FALSE},
  {"Mbps", 1e6, K10 * K10, TRUE},
  {"Tb/s", 1e12, K10 * K10 * K10 * K10, FALSE},
  {"b/s", 1, 1, TRUE},
  {NULL, 0, 0, FALSE},
};

static const Unit time_units[] = {
  {"ps", 1, 1, FALSE},
  {"ns", 1e3, K10, FALSE},
  {"us", 1e6, K10 * K10, FALSE},
  {"\xc2\xb5s", 1e6, K10 * K10, FALSE}, /* U+00B5 MICRO SIGN */
  {"\xce\xbcs", 1e6, K10 * K10, TRUE},  /* U+03BC GREEK SMALL LETTER MU */
  {"ms", 1e9, K10 * K10 * K10, FALSE},
  {"s", 1e12, K10 * K10 * K10 * K10, FALSE},
  {NULL, 0, 0, FALSE},
};

static const Unit size_units[] = {
  {"", 1, 1, TRUE},
  {"B", 1, 1, FALSE},
  {"K", 1024.0, K2, FALSE},
  {"M", 1048576.0, K2 * K2, FALSE},
  {"G", 1073741824.0, K2 * K2 * K2, FALSE},
  {"T", 1099511627776.0, K2 * K2 * K2 * K2, FALSE},
  {"P", 1125899906842624.0, K2 * K2 * K2 * K2 * K2, TRUE},
  {"k", 1024.0, K2, TRUE},
  {"m", 1048576.0, K2 * K2, TRUE},
  {"g", 1073741824.0, K2 * K2 * K2, TRUE},
  {"t", 1099511627776.0, K2 * K2 * K2 * K2, TRUE},
  {"KB", 1e3, K10, FALSE},
  {"kB", 1e3, K10, TRUE},
  {"MB", 1e6, K10 * K10, FALSE},
  {"GB", 1e9, K10 * K10 * K10, FALSE},
  {"TB", 1e12, K10 * K10 * K10 * K10, FALSE},
  {"PB", 1e15, K10 * K10 * K10 * K10 * K10, TRUE},
  {"KiB", 1024.0, K2, FALSE},
  {"MiB", 1048576.0, K2 * K2, FALSE},
  {"GiB", 1073741824.0, K2 * K2 * K2, FALSE},
  {"TiB", 1099511627776.0, K2 * K2 * K2 * K2, FALSE},
  {"PiB", 1125899906842624.0, K2 * K2 * K2 * K2 * K2, TRUE},
  {"E", 1152921504606846976.0, K2 * K2 * K2 * K2 * K2 * K2, TRUE},
  {"EB", 1e18, K10 * K10 * K10 * K10 * K10 * K10, TRUE},
  {"EiB", 1152921504606846976.0, K2 * K2 * K2 * K2 * K2 * K2, TRUE},
  {NULL, 0, 0, FALSE},
};

static const Unit power_units[] = {
  {"W", 1, 1, FALSE},
  {"kW", 1e3, K10, FALSE},
  {"KW", 1e3, K10, TRUE},
  {"MW", 1e6, K10 * K10, FALSE},
  {"mW", 1e-3, 0, FALSE},
  {NULL, 0, 0, FALSE},
};

static const Unit flops_units[] = {
  {"FLOP/s", 1, 1, FALSE},
  {"FLOPS", 1, 1, TRUE},
  {"GFLOP/s", 1e9, K10 * K10 * K10, FALSE},
  {"GFLOPS", 1e9, K10 * K10 * K10, TRUE},
  {"TFLOP/s", 1e12, K10 * K10 * K10 * K10, FALSE},
  {"TFLOPS", 1e12, K10 * K10 * K10 * K10, FALSE},
  {"PFLOP/s", 1e15, K10 * K10 * K10 * K10 * K10, FALSE},
  {"PFLOPS", 1e15, K10 * K10 * K10 * K10 * K10, TRUE},
  {"EFLOP/s", 1e18, K10 * K10 * K10 * K10 * K10 * K10, FALSE},
  {"EFLOPS", 1e18, K10 * K10 * K10 * K10 * K10 * K10, TRUE},
  {NULL, 0, 0, FALSE},
};

static const Kind kind_bandwidth = {"bandwidth", "a", "50 GB/s", bandwidth_units, TRUE, TRUE,
                                    FS_BANDWIDTH_MAX, "1000000 TB/s"};
static const Kind kind_lane_rate = {"lane rate", "a", "16 GT/s", lane_rate_units, TRUE, TRUE,
                                    FS_LANE_RATE_MAX, "1000000 Tb/s"};
static const Kind kind_time = {"time", "a", "1.5 us", time_units, TRUE, FALSE, 0, NULL};
static const Kind kind_size = {"size", "a", "16 GiB", size_units, FALSE, FALSE, 0, NULL};
static const Kind kind_power = {"power", "a", "700 W", power_units, TRUE, FALSE,
                                FS_POWER_MAX, "1000000 MW"};
static const Kind kind_flops = {"FLOP rate", "a", "989 TFLOP/s", flops_units, TRUE, FALSE,
                                FS_FLOPS_MAX, "1000000 EFLOP/s"};

/* The number at the start of a quantity, as scanned: as a double, and as
 * an exact decimal mantissa * 10^exp10 when its significant digits fit in
 * 64 bits (19 or 20 decimal digits). */
typedef struct {
  double value;        /* the number as a double (may be +-HUGE_VAL on overflow) */
  gboolean negative;   /* a leading '-' */
  uint64_t mantissa;   /* significant digits, without the point */
  int exp10;           /* the value is mantissa * 10^exp10 */
  gboolean exact;      /* mantissa and exp10 hold every non-zero digit */
  const char *end;     /* first character after the number */
} Number;

/* Exponents beyond this are clamped: the value is 0 or overflows anyway. */
#define EXP10_CLAMP 100000

__extension__ typedef unsigned __int128 u128;

/* Length of the blank at p between a number and its unit: a space, a tab,
 * or a UTF-8 no-break, narrow no-break or thin space (style guides put
 * those between a number and its unit); 0 if none. */
static gsize blank_len(const char *p)
{
  if (*p == ' ' || *p == '\t')
    return 1;
  if (strncmp(p, "\xc2\xa0", 2) == 0)
    return 2;
  if (strncmp(p, "\xe2\x80\xaf", 3) == 0 || strncmp(p, "\xe2\x80\x89", 3) == 0)
    return 3;
  return 0;
}

static gboolean is_space(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Scans [blanks] [+-] digits [. digits] [eE [+-] digits] from text.  Returns
 * FALSE when there is no number there; "inf" and "nan" are not numbers here
 * (the caller reports them as out of range).  The value is converted with
 * g_ascii_strtod, so the locale never matters. */
static gboolean scan_number(const char *text, Number *num)
{
  const char *p = text;
  while (is_space(*p))
    p++;
  const char *start = p;
  memset(num, 0, sizeof *num);
  num->exact = TRUE;
  if (*p == '+' || *p == '-') {
    num->negative = (*p == '-');
    p++;
  }
  /* Digits before and after the point, kept while they fit in 64 bits. */
  gsize ndigits = 0, kept = 0;
  gboolean full = FALSE; /* a digit was dropped: drop all later ones too */
  long exp10 = 0;
  gboolean in_fraction = FALSE;
  for (;; p++) {
    if (*p == '.' && !in_fraction) {
      in_fraction = TRUE;
      continue;
    }
    if (!g_ascii_isdigit(*p))
      break;
    ndigits++;
    int d = *p - '0';
    if (kept == 0 && d == 0) {
      if (in_fraction)
        exp10--; /* a leading zero after the point */
      continue;
    }
    uint64_t next;
    if (!full && !__builtin_mul_overflow(num->mantissa, 10, &next) &&
        !__builtin_add_overflow(next, (uint64_t)d, &next)) {
      num->mantissa = next;
      kept++;
      if (in_fraction)
        exp10--;
    } else {
      full = TRUE;
      if (d != 0)
        num->exact = FALSE;
      if (!in_fraction)
        exp10++; /* a dropped digit before the point still scales */
    }
  }
  if (ndigits == 0)
    return FALSE;
  if (*p == 'e' || *p == 'E') {
    const char *q = p + 1;
    int sign = 1;
    if (*q == '+' || *q == '-')
      sign = (*q++ == '-') ? -1 : 1;
    if (g_ascii_isdigit(*q)) {
      long e = 0;
      for (; g_ascii_isdigit(*q); q++)
        e = MIN(e * 10 + (*q - '0'), (long)EXP10_CLAMP);
      exp10 += sign * e;
      p = q;
    }
  }
  num->exp10 = (int)CLAMP(exp10, -2L * EXP10_CLAMP, 2L * EXP10_CLAMP);
  /* g_ascii_strtod reads the same token in the C locale whatever LC_NUMERIC is. */
  char buf[64];
  gsize len = (gsize)(p - start);
  char *token = len < sizeof buf ? buf : g_malloc(len + 1);
  memcpy(token, start, len);
  token[len] = '\0';
  num->value = g_ascii_strtod(token, NULL);
  if (token != buf)
    g_free(token);
  num->end = p;
  return TRUE;
}

/* TRUE when text (after blanks and a sign) spells infinity or NaN. */
static gboolean is_nonfinite_word(const char *text)
{
  const char *p = text;
  while (is_space(*p))
    p++;
  if (*p == '+' || *p == '-')
    p++;
  static const char *const words[] = {"infinity", "inf", "nan"};
  for (guint i = 0; i < G_N_ELEMENTS(words); i++) {
    gsize n = strlen(words[i]);
    if (g_ascii_strncasecmp(p, words[i], n) == 0 && !g_ascii_isalpha(p[n]))
      return TRUE;
  }
  return FALSE;
}

/* "ps, ns, us, µs, ms, s": the units a kind lists in messages. */
static char *known_units(const Kind *kind)
{
  GString *s = g_string_new(NULL);
  for (const Unit *u = kind->units; u->name != NULL; u++) {
    if (u->hidden)
      continue;
    g_string_append_printf(s, "%s%s", s->len ? ", " : "", u->name);
  }
  return g_string_free(s, FALSE);
}

/* Sets *error in FS_UNITS_ERROR with control characters of the message
 * (from the quoted input) escaped, so that it is one line. */
static void set_error(GError **error, int code, const char *format, ...) G_GNUC_PRINTF(3, 4);
static void set_error(GError **error, int code, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  fs_set_error_va(error, FS_UNITS_ERROR, code, format, ap);
  va_end(ap);
}

/* Sets the standard complaint: expected a <kind> like "<example>", got "<text>"<detail>. */
static void set_kind_error(GError **error, int code, const Kind *kind, const char *text,
                           const char *format, ...) G_GNUC_PRINTF(5, 6);
static void set_kind_error(GError **error, int code, const Kind *kind, const char *text,
                           const char *format, ...)
{
  if (error == NULL)
    return;
  g_autofree char *detail = NULL;
  if (format != NULL) {
    va_list ap;
    va_start(ap, format);
    detail = g_strdup_vprintf(format, ap);
    va_end(ap);
  }
  set_error(error, code, "expected %s %s like \"%s\", got \"%s\"%s%s",
              kind->article, kind->what, kind->example, text, detail ? ": " : "",
              detail ? detail : "");
}

/* Finds the unit spelled exactly by [unit, unit+len). */
static const Unit *find_unit(const Kind *kind, const char *unit, gsize len)
{
  for (const Unit *u = kind->units; u->name != NULL; u++)
    if (strlen(u->name) == len && memcmp(u->name, unit, len) == 0)
      return u;
  return NULL;
}

/* The longest listed unit that is a prefix of unit (for "5 GB/sx"), or NULL. */
static const Unit *find_unit_prefix(const Kind *kind, const char *unit, gsize len)
{
  const Unit *best = NULL;
  for (const Unit *u = kind->units; u->name != NULL; u++) {
    gsize n = strlen(u->name);
    if (n > 0 && n < len && memcmp(u->name, unit, n) == 0 && (best == NULL || n > strlen(best->name)))
      best = u;
  }
  return best;
}

/* Parses text as a quantity of kind: fills num with the number and *unit with
 * its unit.  Checks syntax, unit and sign; the caller converts and checks range. */
static gboolean parse_quantity(const char *text, const Kind *kind, Number *num,
                               const Unit **unit, GError **error)
{
  if (text == NULL) {
    set_error(error, FS_UNITS_ERROR_SYNTAX, "expected %s %s like \"%s\", got nothing",
                kind->article, kind->what, kind->example);
    return FALSE;
  }
  if (!scan_number(text, num)) {
    if (is_nonfinite_word(text)) {
      set_kind_error(error, FS_UNITS_ERROR_RANGE, kind, text, "the number must be finite");
      return FALSE;
    }
    set_kind_error(error, FS_UNITS_ERROR_SYNTAX, kind, text, NULL);
    return FALSE;
  }
  const char *u = num->end;
  for (gsize b; (b = blank_len(u)) > 0;)
    u += b;
  const char *e = u + strlen(u);
  while (e > u && is_space(e[-1]))
    e--;
  gsize len = (gsize)(e - u);
  /* Whitespace inside the unit ("5 GB /s") is junk, not a unit. */
  const Unit *found = find_unit(kind, u, len);
  if (found == NULL) {
    g_autofree char *known = known_units(kind);
    if (len == 0) {
      set_kind_error(error, FS_UNITS_ERROR_UNIT, kind, text, "the unit is missing (known units: %s)",
                     known);
      return FALSE;
    }
    const Unit *prefix = find_unit_prefix(kind, u, len);
    if (prefix != NULL) {
      g_autofree char *junk = g_strndup(u + strlen(prefix->name), len - strlen(prefix->name));
      set_kind_error(error, FS_UNITS_ERROR_SYNTAX, kind, text,
                     "unexpected \"%s\" after the unit \"%s\" (known units: %s)", junk,
                     prefix->name, known);
      return FALSE;
    }
    g_autofree char *name = g_strndup(u, len);
    set_kind_error(error, FS_UNITS_ERROR_UNIT, kind, text, "unknown unit \"%s\" (known units: %s)",
                   name, known);
    return FALSE;
  }
  if (found->name[0] == '\0' && kind->unit_required) {
    g_autofree char *known = known_units(kind);
    set_kind_error(error, FS_UNITS_ERROR_UNIT, kind, text, "the unit is missing (known units: %s)",
                   known);
    return FALSE;
  }
  if (!isfinite(num->value)) {
    set_kind_error(error, FS_UNITS_ERROR_RANGE, kind, text, "the number is too large");
    return FALSE;
  }
  if (num->negative && num->mantissa != 0) { /* "-0 ns" is zero; "-1e-400 ns" is not */
    set_kind_error(error, FS_UNITS_ERROR_RANGE, kind, text, "%s %s cannot be negative",
                   kind->article, kind->what);
    return FALSE;
  }
  *unit = found;
  return TRUE;
}

/* Parses a double-valued quantity and applies the kind's range. */
static gboolean parse_double_kind(const char *text, const Kind *kind, double *out, GError **error)
{
  Number num;
  const Unit *unit = NULL;
  if (!parse_quantity(text, kind, &num, &unit, error))
    return FALSE;
  double v = num.value * unit->factor;
  if (num.negative)
    v = 0; /* "-0 W" */
  if (kind->positive && !(v > 0)) {
    set_kind_error(error, FS_UNITS_ERROR_RANGE, kind, text, "%s %s must be greater than zero",
                   kind->article, kind->what);
    return FALSE;
  }
  if (!isfinite(v) || v > kind->max) {
    set_kind_error(error, FS_UNITS_ERROR_RANGE, kind, text, "the value is out of range (the limit is %s)",
                   kind->max_text);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

/* Converts num*unit to an unsigned integer no larger than max, rounding to
 * the nearest (half up).  Exact decimal arithmetic whenever the unit's
 * factor is an integer and the number's digits fit (nearly always); else a
 * double.  FALSE when the result does not fit. */
static gboolean to_uint(const Number *num, const Unit *unit, uint64_t max, uint64_t *out)
{
  if (num->negative || num->mantissa == 0) {
    *out = 0; /* "-0 ns", "0.000 s": all digits zero (other negatives were rejected) */
    return TRUE;
  }
  if (num->exact && unit->exact != 0) {
    u128 v = (u128)num->mantissa * unit->exact; /* < 2^64 * 2^64 */
    if (num->exp10 >= 0) {
      for (int i = 0; i < num->exp10; i++) {
        v *= 10;
        if (v > max)
          return FALSE;
      }
    } else if (num->exp10 < -38) {
      v = 0; /* below 10^38 / 10^39: rounds to zero */
    } else {
      u128 p = 1;
      for (int i = 0; i < -num->exp10; i++)
        p *= 10;
      u128 q = v / p, r = v % p;
      v = q + (r >= p - r ? 1 : 0); /* r >= p/2, without overflow */
    }
    if (v > max)
      return FALSE;
    *out = (uint64_t)v;
    return TRUE;
  }
  double v = round(num->value * unit->factor);
  /* 2^64 and 2^63 are exact doubles; anything at or above the bound overflows. */
  double bound = (max == UINT64_MAX) ? 18446744073709551616.0 : 9223372036854775808.0;
  if (!(v < bound))
    return FALSE;
  uint64_t r = (uint64_t)v;
  if (r > max)
    return FALSE;
  *out = r;
  return TRUE;
}

/* TRUE when nothing but blanks follows the number num scanned from text;
 * else FALSE with FS_UNITS_ERROR_SYNTAX ("expected WHAT, got …"). */
static gboolean nothing_after(const char *text, const Number *num, const char *what,
                              GError **error)
{
  const char *p = num->end;
  while (is_space(*p))
    p++;
  if (*p == '\0')
    return TRUE;
  set_error(error, FS_UNITS_ERROR_SYNTAX,
            "expected %s, got \"%s\": unexpected \"%s\" after the number", what, text, p);
  return FALSE;
}

gboolean fs_parse_number(const char *text, double *out, GError **error)
{
  g_return_val_if_fail(out != NULL, FALSE);
  Number num;
  if (text == NULL || !scan_number(text, &num)) {
    if (text != NULL && is_nonfinite_word(text)) {
      set_error(error, FS_UNITS_ERROR_RANGE,
                  "expected a finite number like \"1.5\", got \"%s\"", text);
      return FALSE;
    }
    set_error(error, FS_UNITS_ERROR_SYNTAX, "expected a number like \"1.5\", got \"%s\"",
                text ? text : "");
    return FALSE;
  }
  if (!nothing_after(text, &num, "a number like \"1.5\"", error))
    return FALSE;
  if (!isfinite(num.value)) {
    set_error(error, FS_UNITS_ERROR_RANGE,
                "expected a number like \"1.5\", got \"%s\": the number is too large", text);
    return FALSE;
  }
  *out = num.value;
  return TRUE;
}

/* FALSE with FS_UNITS_ERROR_RANGE: text is an integer outside int64. */
static gboolean int64_range_error(const char *text, GError **error)
{
  set_error(error, FS_UNITS_ERROR_RANGE,
            "expected an integer like \"64\", got \"%s\": the integer is out of range (it must "
            "lie between -9223372036854775808 and 9223372036854775807)", text);
  return FALSE;
}

/* See units.h. Plain digits with an optional sign convert exactly; other number forms (such as
 * "1e3") are accepted only when whole and inside the int64 range. Sets FS_UNITS_ERROR_SYNTAX
 * for text that is not an integer and FS_UNITS_ERROR_RANGE for one out of range. */
gboolean fs_parse_int64(const char *text, int64_t *out, GError **error)
{
  g_return_val_if_fail(out != NULL, FALSE);
  Number num;
  if (text == NULL || !scan_number(text, &num)) {
    set_error(error, FS_UNITS_ERROR_SYNTAX, "expected an integer like \"64\", got \"%s\"",
                text ? text : "");
    return FALSE;
  }
  if (!nothing_after(text, &num, "an integer like \"64\"", error))
    return FALSE;
  /* Digits only, with or without a sign: exact. */
  const char *q = text;
  while (is_space(*q))
    q++;
  gboolean digits_only = TRUE;
  for (const char *r = (*q == '+' || *q == '-') ? q + 1 : q; r < num.end; r++)
    if (!g_ascii_isdigit(*r))
      digits_only = FALSE;
  if (digits_only) {
    g_autofree char *token = g_strndup(q, (gsize)(num.end - q));
    gint64 v;
    g_autoptr(GError) local = NULL;
    if (!g_ascii_string_to_signed(token[0] == '+' ? token + 1 : token, 10, G_MININT64, G_MAXINT64, &v,
                                  &local))
      return int64_range_error(text, error);
    *out = v;
    return TRUE;
  }
  if (!isfinite(num.value) || num.value >= 9223372036854775808.0 || num.value < -9223372036854775808.0)
    return int64_range_error(text, error);
  if (num.value != floor(num.value)) {
    set_error(error, FS_UNITS_ERROR_SYNTAX,
                "expected an integer like \"64\", got \"%s\": it has a fraction", text);
    return FALSE;
  }
  *out = (int64_t)num.value;
  return TRUE;
}

gboolean fs_parse_int(const char *text, int64_t *out, GError **error)
{
  g_return_val_if_fail(out != NULL, FALSE);
  int64_t v;
  if (!fs_parse_int64(text, &v, error))
    return FALSE;
  if (v < 0) {
    set_error(error, FS_UNITS_ERROR_RANGE,
                "expected a non-negative integer like \"64\", got \"%s\"", text);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

gboolean fs_parse_bandwidth(const char *text, double *bytes_per_s, GError **error)
{
  g_return_val_if_fail(bytes_per_s != NULL, FALSE);
  return parse_double_kind(text, &kind_bandwidth, bytes_per_s, error);
}

gboolean fs_parse_lane_rate(const char *text, double *bits_per_s, GError **error)
{
  g_return_val_if_fail(bits_per_s != NULL, FALSE);
  return parse_double_kind(text, &kind_lane_rate, bits_per_s, error);
}

gboolean fs_parse_power(const char *text, double *watts, GError **error)
{
  g_return_val_if_fail(watts != NULL, FALSE);
  return parse_double_kind(text, &kind_power, watts, error);
}

gboolean fs_parse_flops(const char *text, double *flops, GError **error)
{
  g_return_val_if_fail(flops != NULL, FALSE);
  return parse_double_kind(text, &kind_flops, flops, error);
}

/* Parses an integer-valued quantity of kind no larger than max (rounded to
 * the nearest); past max, FS_UNITS_ERROR_RANGE with too_large as detail. */
static gboolean parse_uint_kind(const char *text, const Kind *kind, uint64_t max,
                                const char *too_large, uint64_t *out, GError **error)
{
  Number num;
  const Unit *unit = NULL;
  if (!parse_quantity(text, kind, &num, &unit, error))
    return FALSE;
  if (!to_uint(&num, unit, max, out)) {
    set_kind_error(error, FS_UNITS_ERROR_RANGE, kind, text, "%s", too_large);
    return FALSE;
  }
  return TRUE;
}

gboolean fs_parse_time(const char *text, FsTime *ps, GError **error)
{
  g_return_val_if_fail(ps != NULL, FALSE);
  uint64_t v;
  if (!parse_uint_kind(text, &kind_time, (uint64_t)FS_TIME_MAX,
                       "the time is too long (the limit is 9223372036854775807 ps, about 106 days)",
                       &v, error))
    return FALSE;
  *ps = (FsTime)v;
  return TRUE;
}

gboolean fs_parse_size(const char *text, uint64_t *bytes, GError **error)
{
  g_return_val_if_fail(bytes != NULL, FALSE);
  return parse_uint_kind(text, &kind_size, UINT64_MAX,
                         "the size is too large (the limit is 18446744073709551615 bytes, 16 EiB)",
                         bytes, error);
}

/* Formatting ------------------------------------------------------------ */

/* Formats v with printf-style format in the C locale. */
static char *format_c(const char *format, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(buf, sizeof buf, format, v);
  return g_strdup(buf);
}

char *fs_format_bandwidth(double bytes_per_s)
{
  static const char *const names[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s", "PB/s", "EB/s"};
  if (!isfinite(bytes_per_s))
    return g_strdup(isnan(bytes_per_s) ? "nan B/s" : (bytes_per_s > 0 ? "inf B/s" : "-inf B/s"));
  double a = fabs(bytes_per_s);
  guint i = 0;
  double scale = 1;
  while (i + 1 < G_N_ELEMENTS(names) && a / scale >= 999.95) {
    scale *= 1000;
    i++;
  }
  g_autofree char *num = format_c("%.1f", bytes_per_s / scale);
  return g_strdup_printf("%s %s", num, names[i]);
}

char *fs_format_time(FsTime ps)
{
  static const char *const names[] = {"ps", "ns", "us", "ms", "s"};
  static const uint64_t scale[] = {1, 1000, 1000000, 1000000000, 1000000000000ULL};
  gboolean neg = ps < 0;
  uint64_t a = neg ? (uint64_t)0 - (uint64_t)ps : (uint64_t)ps;
  const char *sign = neg ? "-" : "";
  if (a < 1000)
    return g_strdup_printf("%s%" G_GUINT64_FORMAT " ps", sign, a);
  /* Thousandths of the chosen unit, rounded half up, in integers. */
  for (guint i = 1; i < G_N_ELEMENTS(names); i++) {
    uint64_t d = scale[i] / 1000;
    uint64_t milli = a / d + ((a % d) * 2 >= d ? 1 : 0);
    /* Never round past FS_TIME_MAX, so that the text parses back. */
    if (!neg && (u128)milli * d > (u128)FS_TIME_MAX)
      milli = a / d;
    if (milli < 1000000 || i + 1 == G_N_ELEMENTS(names))
      return g_strdup_printf("%s%" G_GUINT64_FORMAT ".%03u %s", sign, milli / 1000,
                             (unsigned)(milli % 1000), names[i]);
  }
  g_assert_not_reached();
}

char *fs_format_size(uint64_t bytes)
{
  static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return g_strdup_printf("%" G_GUINT64_FORMAT " B", bytes);
  guint i = 0;
  while (i + 1 < G_N_ELEMENTS(names) && (bytes >> (10 * (i + 1))) > 0)
    i++;
  uint64_t unit = (uint64_t)1 << (10 * i);
  if (bytes % unit == 0)
    return g_strdup_printf("%" G_GUINT64_FORMAT " %s", bytes / unit, names[i]);
  /* Tenths of the unit, rounded half up; 1023.96 MiB becomes 1.0 GiB. */
  uint64_t tenths = bytes / unit * 10 + ((bytes % unit) * 10 + unit / 2) / unit;
  if (tenths >= 10240 && i + 1 < G_N_ELEMENTS(names)) {
    i++;
    tenths = 10;
  }
  /* Never round past 2^64 - 1, so that the text parses back. */
  if ((u128)tenths * unit > (u128)UINT64_MAX * 10)
    tenths = (uint64_t)((u128)bytes * 10 / unit);
  return g_strdup_printf("%" G_GUINT64_FORMAT ".%u %s", tenths / 10, (unsigned)(tenths % 10), names[i]);
}

FsTime fs_time_from_s(double seconds)
{
  if (isnan(seconds))
    return 0;
  double ps = round(seconds * 1e12);
  if (ps >= 9223372036854775808.0)
    return FS_TIME_MAX;
  if (ps <= -9223372036854775808.0)
    return -FS_TIME_MAX;
  return (FsTime)ps;
}

FsTime fs_time_from_ps(double ps)
{
  if (isnan(ps))
    return FS_TIME_MAX;
  double r = round(ps);
  if (r >= 9223372036854775808.0)
    return FS_TIME_MAX;
  if (r <= -9223372036854775808.0)
    return -FS_TIME_MAX;
  return (FsTime)r;
}

gboolean fs_set_clock_range_error(GError **error, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *detail = g_strdup_vprintf(format, ap);
  va_end(ap);
  g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_CLOCK,
              "simulated time exceeds the clock's range (%s): %s", FS_CLOCK_RANGE, detail);
  return FALSE;
}
