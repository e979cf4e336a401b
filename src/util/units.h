/* units.h — parse and print physical quantities, once, at the boundary.
 *
 * Inside fabricsim: time is int64 picoseconds (FsTime), sizes are uint64
 * bytes, rates are double bytes per second.  Conventions:
 *   - "GB/s" is 10^9 bytes/s; "Gb/s" (and "Gbps") is 10^9 bits/s; "GiB/s"
 *     is 2^30 bytes/s.  A bare number in a bandwidth is rejected (no unit).
 *   - Sizes: a bare "K", "M", "G", "T" suffix is a power of 1024 (as in
 *     nccl-tests' -b/-e); "KB/MB/GB/TB" are powers of 1000 and
 *     "KiB/MiB/GiB/TiB" powers of 1024; "B" or no suffix is bytes.
 *   - Time: "ps", "ns", "us", "µs", "ms", "s"; a bare number is rejected.
 *   - Lane rates: "GT/s" (transfers/s, one bit per transfer per lane) and
 *     bit rates "Gb/s" both give bits per second per lane.
 * Numbers may carry a sign, decimals and an exponent ("1.5e3 ns"); spaces
 * between number and unit are optional.  Negative values, overflow of the
 * internal type, unknown suffixes and junk after the unit are errors
 * (FS_UNITS_ERROR) whose message quotes the input and shows an example.
 *
 * Details, for anyone writing inputs:
 *   - Units are case-sensitive ("GB/s" bytes, "Gb/s" bits, "gb/s" is an
 *     error).  "µs" may be written with U+00B5 (micro sign) or U+03BC
 *     (Greek mu).  Other units: "MT/s" lane rates; "mW", "MW"; "GFLOP/s",
 *     "EFLOP/s".  Quiet aliases (accepted, not listed in messages):
 *     bandwidths "kB/s", "kb/s", "bps", "Kbps", "Mbps", "Tbps", "PB/s",
 *     "EB/s"; sizes "k/m/g/t" (1024^n, as nccl-tests), "P", "PB", "PiB",
 *     "E", "EB", "EiB"; power "KW"; "FLOPS", "GFLOPS", "PFLOPS", "EFLOPS".
 *   - The number is decimal only: no hex, no "inf"/"nan" (those are
 *     FS_UNITS_ERROR_RANGE), no digit grouping.  Leading and trailing
 *     whitespace is ignored; whitespace inside the unit is junk.
 *   - Times and sizes are computed in exact decimal arithmetic and rounded
 *     half up to the nearest picosecond or byte ("0.5 ps" is 1 ps,
 *     "9223372.036854775807 s" is FS_TIME_MAX), as long as the number's
 *     significant digits fit in 64 bits (19 digits always do); longer
 *     numbers go through a double.
 *   - Messages look like
 *       expected a time like "1.5 us", got "12 parsecs": unknown unit
 *       "parsecs" (known units: ps, ns, us, µs, ms, s)
 *     and have no position: callers with one (the YAML getters) prepend it.
 * Cost: each call is linear in the length of the text.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef int64_t FsTime; /* picoseconds */

#define FS_PS ((FsTime)1)
#define FS_NS ((FsTime)1000)
#define FS_US ((FsTime)1000000)
#define FS_MS ((FsTime)1000000000)
#define FS_SEC ((FsTime)1000000000000)
#define FS_TIME_MAX INT64_MAX

#define FS_UNITS_ERROR (fs_units_error_quark())
GQuark fs_units_error_quark(void);

typedef enum {
  FS_UNITS_ERROR_SYNTAX,   /* not a number followed by a known unit */
  FS_UNITS_ERROR_UNIT,     /* unknown or missing unit */
  FS_UNITS_ERROR_RANGE,    /* negative, NaN, infinite or overflowing */
} FsUnitsError;

/* Parses a plain number ("12", "-3.5", "1e9").  Rejects trailing junk. */
gboolean fs_parse_number(const char *text, double *out, GError **error);

/* Parses a non-negative integer that fits in int64 ("64", "1e3" is allowed
 * when exact).  Rejects fractions and trailing junk. */
gboolean fs_parse_int(const char *text, int64_t *out, GError **error);

/* Parses an integer with an optional sign that fits in int64 ("-3", "64",
 * "1e3" when exact).  Digits-only input is converted exactly; out-of-range
 * values fail with FS_UNITS_ERROR_RANGE, fractions with _SYNTAX. */
gboolean fs_parse_int64(const char *text, int64_t *out, GError **error);

/* Upper bounds of the double-valued quantities: anything above is a typo,
 * not hardware (FS_UNITS_ERROR_RANGE). */
#define FS_BANDWIDTH_MAX 1e18 /* bytes/s (1000000 TB/s) */
#define FS_LANE_RATE_MAX 1e18 /* bits/s */
#define FS_POWER_MAX 1e12     /* watts */
#define FS_FLOPS_MAX 1e24     /* FLOP/s */

/* Parses a bandwidth into bytes per second (> 0). */
gboolean fs_parse_bandwidth(const char *text, double *bytes_per_s, GError **error);

/* Parses a per-lane signalling rate ("16 GT/s", "53.125 Gb/s") into bits
 * per second (> 0). */
gboolean fs_parse_lane_rate(const char *text, double *bits_per_s, GError **error);

/* Parses a duration into picoseconds (>= 0, rounded to the nearest ps). */
gboolean fs_parse_time(const char *text, FsTime *ps, GError **error);

/* Parses a size into bytes (>= 0). */
gboolean fs_parse_size(const char *text, uint64_t *bytes, GError **error);

/* Parses a power figure ("700 W", "1.2 kW") into watts (>= 0). */
gboolean fs_parse_power(const char *text, double *watts, GError **error);

/* Parses a FLOP rate ("989 TFLOP/s", "1.98 PFLOP/s", "67 TFLOPS") into FLOP/s
 * (>= 0). */
gboolean fs_parse_flops(const char *text, double *flops, GError **error);

/* Formatting: return newly allocated strings (caller frees).  Output is
 * deterministic and locale-independent, and the parsers read it back
 * (to the printed precision; a bandwidth must still be > 0).
 *   fs_format_bandwidth: decimal units B/s ... EB/s chosen so the number is
 *     below 1000, one decimal ("450.0 GB/s", "1.5 TB/s", "0.0 B/s").
 *   fs_format_time: whole picoseconds below 1 ns ("999 ps"); otherwise
 *     ns/us/ms/s with three decimals, rounded half up in integer
 *     arithmetic, the unit chosen so the number is in [1, 1000) ("1.500 us";
 *     seconds have no upper bound; near FS_TIME_MAX the last digit rounds
 *     down so the text still parses: "9223372.036 s").  Negative times get "-".
 *   fs_format_size: below 1024 "N B"; otherwise the largest binary unit not
 *     above the size, as an integer when exact ("96 MiB") or with one
 *     decimal ("1.5 KiB", "953.7 MiB"). */
char *fs_format_bandwidth(double bytes_per_s); /* "450.0 GB/s" */
char *fs_format_time(FsTime ps);               /* "1.500 us" (picks ps/ns/us/ms/s) */
char *fs_format_size(uint64_t bytes);          /* "1 GiB", "96 MiB", "8 B" */

/* Conversions used in reports. */
static inline double fs_time_to_us(FsTime t) { return (double)t / (double)FS_US; }
static inline double fs_time_to_s(FsTime t) { return (double)t / (double)FS_SEC; }
/* Seconds (double) to picoseconds, rounded to nearest (half away from
 * zero); saturates at FS_TIME_MAX (and at -FS_TIME_MAX); NaN gives 0. */
FsTime fs_time_from_s(double seconds);
/* Picoseconds (double) to FsTime, rounded to nearest (half away from zero,
 * as llround); saturates at FS_TIME_MAX (and at -FS_TIME_MAX); NaN gives
 * FS_TIME_MAX (an undefined time is never early). */
FsTime fs_time_from_ps(double ps);

/* The simulated clock's range.  FS_TIME_MAX is the clock's end: every sum
 * of times that could pass it saturates there (fs_time_add_sat), and the
 * simulator refuses to run an event at FS_TIME_MAX (sim.h), so that a run
 * too long for the clock stops with an error instead of wrapping to a
 * negative time.  FS_CLOCK_RANGE says so in words, for messages. */
#define FS_CLOCK_RANGE "int64 picoseconds: at most 9223372.036 s, about 106 days"

/* a + b for b >= 0, or FS_TIME_MAX when the sum reaches or passes it. */
static inline FsTime fs_time_add_sat(FsTime a, FsTime b)
{
  return a >= FS_TIME_MAX - b ? FS_TIME_MAX : a + b;
}

/* a × n for a >= 0, or FS_TIME_MAX when the product reaches or passes it. */
static inline FsTime fs_time_mul_sat(FsTime a, uint64_t n)
{
  if (a == 0 || n == 0)
    return 0;
  return (uint64_t)a >= (uint64_t)FS_TIME_MAX / n ? FS_TIME_MAX : a * (FsTime)n;
}

/* Sets *error (FS_RUNTIME_ERROR / FS_RUNTIME_ERROR_CLOCK, util/error.h) to
 * "simulated time exceeds the clock's range (FS_CLOCK_RANGE): " and the
 * formatted detail, which says what would have passed it and how to make
 * the run shorter.  Returns FALSE. */
gboolean fs_set_clock_range_error(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);

G_END_DECLS
