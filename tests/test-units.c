/* test-units.c — the quantity parsers and formatters in src/util/units.c. */
#include <locale.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "util/units.h"

/* Parses text as a bandwidth and checks the value (relative 1e-12). */
static void check_bw(const char *text, double expect)
{
  GError *err = NULL;
  double v = -1;
  ck_assert_msg(fs_parse_bandwidth(text, &v, &err), "\"%s\": %s", text, err ? err->message : "");
  ck_assert_msg(fabs(v - expect) <= 1e-12 * expect, "\"%s\" gave %.17g, expected %.17g", text, v, expect);
}

static void check_time(const char *text, FsTime expect)
{
  GError *err = NULL;
  FsTime v = -1;
  ck_assert_msg(fs_parse_time(text, &v, &err), "\"%s\": %s", text, err ? err->message : "");
  ck_assert_msg(v == expect, "\"%s\" gave %" G_GINT64_FORMAT " ps, expected %" G_GINT64_FORMAT, text, v,
                expect);
}

static void check_size(const char *text, uint64_t expect)
{
  GError *err = NULL;
  uint64_t v = 1;
  ck_assert_msg(fs_parse_size(text, &v, &err), "\"%s\": %s", text, err ? err->message : "");
  ck_assert_msg(v == expect, "\"%s\" gave %" G_GUINT64_FORMAT ", expected %" G_GUINT64_FORMAT, text, v,
                expect);
}

/* A failing parse of each kind, with the error code and a message fragment. */
typedef gboolean (*ParseFn)(const char *, void *, GError **);

static void check_bad(ParseFn fn, const char *text, int code, const char *fragment)
{
  GError *err = NULL;
  guint64 out[2] = {0, 0};
  ck_assert_msg(!fn(text, out, &err), "\"%s\" should be rejected", text);
  ck_assert_msg(err != NULL, "no error for \"%s\"", text);
  ck_assert_msg(err->code == code, "\"%s\": code %d, expected %d (%s)", text, err->code, code, err->message);
  g_autofree char *quoted = g_strdup_printf("\"%s\"", text);
  ck_assert_msg(strstr(err->message, quoted) != NULL, "message does not quote the input: %s", err->message);
  fs_assert_error(err, FS_UNITS_ERROR, fragment);
}

#define BAD(fn, text, code, frag) check_bad((ParseFn)(fn), (text), FS_UNITS_ERROR_##code, (frag))

START_TEST(test_units_bandwidth_conventions)
{
  check_bw("50 GB/s", 50e9);
  check_bw("50GB/s", 50e9);
  check_bw("400 Gb/s", 50e9);
  check_bw("400 Gbps", 50e9);
  check_bw("1 GiB/s", 1073741824.0);
  check_bw("2 MiB/s", 2 * 1048576.0);
  check_bw("3 KiB/s", 3 * 1024.0);
  check_bw("1 TiB/s", 1099511627776.0);
  check_bw("12.5 MB/s", 12.5e6);
  check_bw("7 KB/s", 7e3);
  check_bw("1.8 TB/s", 1.8e12);
  check_bw("100 Mb/s", 12.5e6);
  check_bw("1.6 Tb/s", 200e9);
  check_bw("1e3 B/s", 1000);
  check_bw("  450 GB/s  ", 450e9);
  check_bw("450\tGB/s\n", 450e9);
  check_bw("+5 GB/s", 5e9);
  check_bw(".5 GB/s", 0.5e9);
  check_bw("5. GB/s", 5e9);
  check_bw("1.5E2 GB/s", 150e9);
  check_bw("50\xc2\xa0GB/s", 50e9);     /* no-break space */
  check_bw("50\xe2\x80\xafGB/s", 50e9); /* narrow no-break space */
  check_bw("1 PB/s", 1e15);
  check_bw("1 EB/s", 1e18);
}
END_TEST

START_TEST(test_units_bandwidth_rejects)
{
  BAD(fs_parse_bandwidth, "fast", SYNTAX, "expected a bandwidth like \"50 GB/s\", got \"fast\"");
  BAD(fs_parse_bandwidth, "50", UNIT, "the unit is missing (known units: B/s, KB/s");
  BAD(fs_parse_bandwidth, "5 GB/sx", SYNTAX, "unexpected \"x\" after the unit \"GB/s\"");
  BAD(fs_parse_bandwidth, "5 GB/s x", SYNTAX, "unexpected \" x\" after the unit \"GB/s\"");
  BAD(fs_parse_bandwidth, "5 furlongs", UNIT, "unknown unit \"furlongs\" (known units:");
  BAD(fs_parse_bandwidth, "5 gb/s", UNIT, "unknown unit \"gb/s\"");
  BAD(fs_parse_bandwidth, "-5 GB/s", RANGE, "cannot be negative");
  BAD(fs_parse_bandwidth, "0 GB/s", RANGE, "must be greater than zero");
  BAD(fs_parse_bandwidth, "1e30 TB/s", RANGE, "out of range (the limit is 1000000 TB/s)");
  BAD(fs_parse_bandwidth, "1e999 GB/s", RANGE, "too large");
  BAD(fs_parse_bandwidth, "inf GB/s", RANGE, "finite");
  BAD(fs_parse_bandwidth, "NaN GB/s", RANGE, "finite");
  BAD(fs_parse_bandwidth, "-inf GB/s", RANGE, "finite");
  BAD(fs_parse_bandwidth, "0x10 GB/s", UNIT, "unknown unit \"x10 GB/s\"");
  BAD(fs_parse_bandwidth, "", SYNTAX, "got \"\"");
  BAD(fs_parse_bandwidth, "GB/s", SYNTAX, "got \"GB/s\"");
  BAD(fs_parse_bandwidth, "1,5 GB/s", UNIT, "unknown unit \",5 GB/s\"");
  BAD(fs_parse_bandwidth, "5 GB /s", UNIT, "unknown unit");
  /* Control characters in the input are escaped: a message is one line. */
  GError *nl = NULL;
  double bw;
  ck_assert(!fs_parse_bandwidth("5\nGB/s", &bw, &nl));
  ck_assert_msg(strchr(nl->message, '\n') == NULL, "multi-line: %s", nl->message);
  fs_assert_error(nl, FS_UNITS_ERROR, "got \"5\\nGB/s\": unknown unit \"\\nGB/s\"");
  int64_t iv;
  ck_assert(!fs_parse_int("1\x01", &iv, &nl));
  fs_assert_error(nl, FS_UNITS_ERROR, "unexpected \"\\x01\" after the number");
  BAD(fs_parse_bandwidth, "5 \xe2\x80\x8bGB/s", UNIT, "unknown unit"); /* zero-width space is not a blank */
  GError *err = NULL;
  double v = 0;
  ck_assert(!fs_parse_bandwidth(NULL, &v, &err));
  fs_assert_error(err, FS_UNITS_ERROR, "got nothing");
}
END_TEST

START_TEST(test_units_lane_rate)
{
  GError *err = NULL;
  double v = 0;
  ck_assert(fs_parse_lane_rate("16 GT/s", &v, &err));
  ck_assert(v == 16e9);
  ck_assert(fs_parse_lane_rate("53.125 Gb/s", &v, &err));
  ck_assert(fabs(v - 53.125e9) < 1);
  ck_assert(fs_parse_lane_rate("106.25Gbps", &v, &err));
  ck_assert(fabs(v - 106.25e9) < 1);
  ck_assert(fs_parse_lane_rate("2.5 GT/s", &v, &err));
  ck_assert(v == 2.5e9);
  fs_assert_no_error(err);
  BAD(fs_parse_lane_rate, "16 GB/s", UNIT, "expected a lane rate like \"16 GT/s\"");
  BAD(fs_parse_lane_rate, "16", UNIT, "the unit is missing");
  BAD(fs_parse_lane_rate, "0 GT/s", RANGE, "greater than zero");
}
END_TEST

START_TEST(test_units_time)
{
  check_time("1 ps", 1);
  check_time("1.5 us", 1500000);
  check_time("1.5us", 1500000);
  check_time("1.5 \xc2\xb5s", 1500000);
  check_time("1.5 \xce\xbcs", 1500000);
  check_time("2 ms", 2 * FS_MS);
  check_time("3 s", 3 * FS_SEC);
  check_time("0.5 ns", 500);
  check_time("1.5e3 ns", 1500000);
  check_time("0.4 ps", 0);
  check_time("0.5 ps", 1);
  check_time("0 s", 0);
  check_time("-0 ns", 0);
  check_time("9223372036854775807 ps", FS_TIME_MAX);
  check_time("9223372 s", (FsTime)9223372 * FS_SEC);
  check_time("1e-3 us", 1000);
  /* Exact decimal arithmetic: no double rounding on the way. */
  check_time("9223372.036854775807 s", FS_TIME_MAX);
  check_time("0.000000000001 s", 1);
  check_time("0.0000000000005 s", 1); /* half rounds up */
  check_time("0.00000000000049999 s", 0);
  check_time("1.000000000001 s", FS_SEC + 1);
  check_time("123456.789012345 us", 123456789012);
  check_time("1e-40 s", 0);
  check_time("0.1 ns", 100);
  check_time("00012.50 ns", 12500);
  check_time("1.5e-99999999 s", 0);
  BAD(fs_parse_time, "9223372.036854775808 s", RANGE, "too long");
  BAD(fs_parse_time, "1e99999999 ps", RANGE, "the number is too large");
  BAD(fs_parse_time, "-5 ns", RANGE, "a time cannot be negative");
  BAD(fs_parse_time, "-1e-400 ns", RANGE, "a time cannot be negative");
  BAD(fs_parse_time, "nanoseconds", SYNTAX, "got \"nanoseconds\"");
  BAD(fs_parse_time, "Infinity s", RANGE, "finite");
  BAD(fs_parse_time, "12 parsecs", UNIT, "unknown unit \"parsecs\" (known units: ps, ns, us, \xc2\xb5s, ms, s)");
  BAD(fs_parse_time, "5", UNIT, "expected a time like \"1.5 us\", got \"5\": the unit is missing");
  BAD(fs_parse_time, "9223372036854775808 ps", RANGE, "too long");
  BAD(fs_parse_time, "1e30 s", RANGE, "too long");
  BAD(fs_parse_time, "99999999999999999999999 ps", RANGE, "too long");
  BAD(fs_parse_time, "1 msec", SYNTAX, "unexpected \"ec\" after the unit \"ms\"");
  BAD(fs_parse_time, "soon", SYNTAX, "expected a time like \"1.5 us\", got \"soon\"");
}
END_TEST

START_TEST(test_units_size)
{
  check_size("0", 0);
  check_size("8", 8);
  check_size("8 B", 8);
  check_size("8B", 8);
  check_size("1K", 1024);
  check_size("16G", 16ULL << 30);
  check_size("16 M", 16ULL << 20);
  check_size("2T", 2ULL << 40);
  check_size("1 KB", 1000);
  check_size("1.5 MB", 1500000);
  check_size("96 MiB", 96ULL << 20);
  check_size("1 GiB", 1ULL << 30);
  check_size("1 TiB", 1ULL << 40);
  check_size("80 GB", 80000000000ULL);
  check_size("1 TB", 1000000000000ULL);
  check_size("1.5K", 1536);
  check_size("0.5 B", 1); /* rounded half away from zero */
  check_size("18446744073709551615", UINT64_MAX);
  check_size("16383P", 16383ULL << 50);
  check_size("1e3", 1000);
  check_size("0.1 KB", 100);
  check_size("1.1 KB", 1100);
  check_size("1844674407370955161.4 B", 1844674407370955161ULL);
  check_size("1844674407370955161.5 B", 1844674407370955162ULL);
  check_size("1.8446744073709551615e19", UINT64_MAX);
  check_size("0.00000000000000000000000000000000000000000000001 TB", 0);
  BAD(fs_parse_size, "18446744073709551615.5", RANGE, "too large"); /* past 64-bit digits: a double */
  BAD(fs_parse_size, "18446744073709551616", RANGE, "too large");
  BAD(fs_parse_size, "16384P", RANGE, "too large");
  BAD(fs_parse_size, "1e30 TB", RANGE, "the size is too large");
  BAD(fs_parse_size, "-1", RANGE, "a size cannot be negative");
  BAD(fs_parse_size, "12 parsecs", UNIT, "unknown unit \"parsecs\"");
  BAD(fs_parse_size, "big", SYNTAX, "expected a size like \"16 GiB\", got \"big\"");
  BAD(fs_parse_size, "4 GBytes", SYNTAX, "unexpected \"ytes\" after the unit \"GB\"");
}
END_TEST

START_TEST(test_units_power_and_flops)
{
  GError *err = NULL;
  double v = 0;
  ck_assert(fs_parse_power("700 W", &v, &err) && v == 700);
  ck_assert(fs_parse_power("1.2 kW", &v, &err) && fabs(v - 1200) < 1e-9);
  ck_assert(fs_parse_power("0 W", &v, &err) && v == 0);
  ck_assert(fs_parse_flops("989 TFLOP/s", &v, &err) && v == 989e12);
  ck_assert(fs_parse_flops("67 TFLOPS", &v, &err) && v == 67e12);
  ck_assert(fs_parse_flops("1.98 PFLOP/s", &v, &err) && fabs(v - 1.98e15) < 1);
  ck_assert(fs_parse_flops("19.5 GFLOP/s", &v, &err) && fabs(v - 19.5e9) < 1e-3);
  fs_assert_no_error(err);
  BAD(fs_parse_power, "700", UNIT, "expected a power like \"700 W\"");
  BAD(fs_parse_power, "-1 W", RANGE, "cannot be negative");
  BAD(fs_parse_power, "1e20 W", RANGE, "out of range");
  BAD(fs_parse_flops, "989 TFLOP", UNIT, "unknown unit \"TFLOP\" (known units: FLOP/s,");
  BAD(fs_parse_flops, "1e30 PFLOP/s", RANGE, "out of range");
}
END_TEST

START_TEST(test_units_numbers_and_ints)
{
  GError *err = NULL;
  double d = 0;
  int64_t i = 0;
  ck_assert(fs_parse_number("12", &d, &err) && d == 12);
  ck_assert(fs_parse_number(" -3.5 ", &d, &err) && d == -3.5);
  ck_assert(fs_parse_number("1e9", &d, &err) && d == 1e9);
  ck_assert(fs_parse_int("64", &i, &err) && i == 64);
  ck_assert(fs_parse_int("1e3", &i, &err) && i == 1000);
  ck_assert(fs_parse_int("9223372036854775807", &i, &err) && i == INT64_MAX);
  ck_assert(fs_parse_int64("-9223372036854775808", &i, &err) && i == INT64_MIN);
  ck_assert(fs_parse_int64("-12", &i, &err) && i == -12);
  ck_assert(fs_parse_int64("+12", &i, &err) && i == 12);
  fs_assert_no_error(err);
  BAD(fs_parse_number, "12x", SYNTAX, "unexpected \"x\" after the number");
  BAD(fs_parse_number, "abc", SYNTAX, "expected a number like \"1.5\"");
  BAD(fs_parse_number, "nan", RANGE, "finite");
  BAD(fs_parse_number, "1e400", RANGE, "too large");
  BAD(fs_parse_int, "-1", RANGE, "non-negative");
  BAD(fs_parse_int, "1.5", SYNTAX, "fraction");
  BAD(fs_parse_int, "9223372036854775808", RANGE, "out of range");
  BAD(fs_parse_int, "1e19", RANGE, "out of range");
  BAD(fs_parse_int, "12 GB", SYNTAX, "unexpected \"GB\"");
  BAD(fs_parse_int64, "-9223372036854775809", RANGE, "out of range");
}
END_TEST

/* Switches LC_NUMERIC to a locale whose decimal point is a comma: an
 * installed de_DE or fr_FR, else one built with localedef into a temporary
 * LOCPATH.  Returns FALSE if there is no way to get one. */
static gboolean use_comma_locale(void)
{
  const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
  for (guint i = 0; i < G_N_ELEMENTS(names); i++)
    if (setlocale(LC_NUMERIC, names[i]) != NULL && strcmp(localeconv()->decimal_point, ",") == 0)
      return TRUE;
  g_autofree char *dir = g_dir_make_tmp("fs-locale-XXXXXX", NULL);
  if (dir == NULL)
    return FALSE;
  g_autofree char *target = g_build_filename(dir, "de_DE.UTF-8", NULL);
  const char *argv[] = {"localedef", "-i", "de_DE", "-f", "UTF-8", target, NULL};
  /* localedef may exit non-zero for mere warnings: judge by setlocale. */
  g_spawn_sync(NULL, (char **)argv, NULL,
               G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
               NULL, NULL, NULL, NULL);
  g_setenv("LOCPATH", dir, TRUE);
  gboolean ok = setlocale(LC_NUMERIC, "de_DE.UTF-8") != NULL && strcmp(localeconv()->decimal_point, ",") == 0;
  /* The loaded locale stays mapped; its files can go. */
  const char *rm[] = {"rm", "-rf", dir, NULL};
  g_spawn_sync(NULL, (char **)rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  return ok;
}

/* The parsers and formatters must not depend on LC_NUMERIC. */
START_TEST(test_units_locale_independent)
{
  if (!use_comma_locale()) {
    fprintf(stderr, "test_units_locale_independent: no comma-decimal locale available; checked in C only\n");
  } else {
    /* The locale is really active: the C library now reads "1.5" as 1. */
    ck_assert(strtod("1.5", NULL) == 1.0);
  }
  check_bw("1.5 GB/s", 1.5e9);
  check_time("1.5 us", 1500000);
  GError *err = NULL;
  double d = 0;
  ck_assert(fs_parse_number("2.5", &d, &err) && d == 2.5);
  ck_assert(fs_parse_flops("1.98 PFLOP/s", &d, &err) && fabs(d - 1.98e15) < 1);
  fs_assert_no_error(err);
  BAD(fs_parse_bandwidth, "1,5 GB/s", UNIT, "unknown unit");
  g_autofree char *s = fs_format_bandwidth(1.5e9);
  ck_assert_str_eq(s, "1.5 GB/s");
  g_autofree char *t = fs_format_time(1500000);
  ck_assert_str_eq(t, "1.500 us");
  g_autofree char *z = fs_format_size(1536);
  ck_assert_str_eq(z, "1.5 KiB");
  setlocale(LC_NUMERIC, "C");
}
END_TEST

START_TEST(test_units_format_bandwidth)
{
  struct {
    double v;
    const char *s;
  } cases[] = {
    {450e9, "450.0 GB/s"}, {50e9, "50.0 GB/s"}, {1.5e12, "1.5 TB/s"}, {999e9, "999.0 GB/s"},
    {999.96e9, "1.0 TB/s"}, {12.5e6, "12.5 MB/s"}, {0, "0.0 B/s"}, {3, "3.0 B/s"},
    {1e18, "1.0 EB/s"}, {1e21, "1000.0 EB/s"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *s = fs_format_bandwidth(cases[i].v);
    ck_assert_str_eq(s, cases[i].s);
  }
}
END_TEST

START_TEST(test_units_format_time)
{
  struct {
    FsTime v;
    const char *s;
  } cases[] = {
    {0, "0 ps"}, {999, "999 ps"}, {1000, "1.000 ns"}, {1234, "1.234 ns"}, {1500000, "1.500 us"},
    {999999, "999.999 ns"}, {999999500, "1.000 ms"}, {999999499, "999.999 us"},
    {2 * FS_SEC, "2.000 s"}, {FS_TIME_MAX, "9223372.036 s"} /* rounded down: it must parse back */, {-1500000, "-1.500 us"},
    {INT64_MIN, "-9223372.037 s"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *s = fs_format_time(cases[i].v);
    ck_assert_str_eq(s, cases[i].s);
  }
}
END_TEST

START_TEST(test_units_format_size)
{
  struct {
    uint64_t v;
    const char *s;
  } cases[] = {
    {0, "0 B"}, {8, "8 B"}, {1023, "1023 B"}, {1024, "1 KiB"}, {1536, "1.5 KiB"},
    {96ULL << 20, "96 MiB"}, {1ULL << 30, "1 GiB"}, {(1ULL << 30) - 1, "1.0 GiB"},
    {(1ULL << 30) + (1ULL << 29), "1.5 GiB"}, {1000000000ULL, "953.7 MiB"},
    {UINT64_MAX, "15.9 EiB"} /* rounded down: it must parse back */, {1ULL << 60, "1 EiB"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *s = fs_format_size(cases[i].v);
    ck_assert_str_eq(s, cases[i].s);
  }
}
END_TEST

/* Whatever the formatters print, the parsers read back (to the printed precision). */
START_TEST(test_units_round_trip)
{
  uint64_t sizes[] = {0, 1, 1024, 96ULL << 20, 1ULL << 30, 3ULL << 40, 5ULL << 50};
  for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
    g_autofree char *s = fs_format_size(sizes[i]);
    check_size(s, sizes[i]);
  }
  FsTime times[] = {0, 7, 1000, 1500000, 2 * FS_MS, 3 * FS_SEC, 123456};
  for (guint i = 0; i < G_N_ELEMENTS(times); i++) {
    g_autofree char *s = fs_format_time(times[i]);
    check_time(s, times[i]);
  }
  uint64_t zmax = 0;
  g_autofree char *smax = fs_format_size(UINT64_MAX);
  ck_assert(fs_parse_size(smax, &zmax, NULL));
  check_size("1 EiB", 1ULL << 60);
  check_size("15 E", 15ULL << 60);
  /* The largest time prints as something that still parses. */
  g_autofree char *tmax = fs_format_time(FS_TIME_MAX);
  FsTime back = 0;
  ck_assert(fs_parse_time(tmax, &back, NULL));
  ck_assert(back <= FS_TIME_MAX && FS_TIME_MAX - back < FS_MS);
  double bws[] = {450e9, 50e9, 1.5e12, 12.5e6, 25e9, 3, 2.5e15, 1e18};
  for (guint i = 0; i < G_N_ELEMENTS(bws); i++) {
    g_autofree char *s = fs_format_bandwidth(bws[i]);
    check_bw(s, bws[i]);
  }
}
END_TEST

START_TEST(test_units_time_from_s)
{
  ck_assert_int_eq(fs_time_from_s(1.5e-6), 1500000);
  ck_assert_int_eq(fs_time_from_s(0), 0);
  ck_assert_int_eq(fs_time_from_s(1e-12 * 0.4), 0);
  ck_assert_int_eq(fs_time_from_s(1e-12 * 0.6), 1);
  ck_assert_int_eq(fs_time_from_s(2.0), 2 * FS_SEC);
  ck_assert_int_eq(fs_time_from_s(1e30), FS_TIME_MAX);
  ck_assert_int_eq(fs_time_from_s(INFINITY), FS_TIME_MAX);
  ck_assert_int_eq(fs_time_from_s(-INFINITY), -FS_TIME_MAX);
  ck_assert_int_eq(fs_time_from_s(NAN), 0);
  ck_assert_int_eq(fs_time_from_s(-1e-6), -FS_US);
  ck_assert(fs_time_to_us(1500000) == 1.5);
  ck_assert(fs_time_to_s(FS_SEC) == 1.0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("units");
  FS_ADD_TEST(s, test_units_bandwidth_conventions);
  FS_ADD_TEST(s, test_units_bandwidth_rejects);
  FS_ADD_TEST(s, test_units_lane_rate);
  FS_ADD_TEST(s, test_units_time);
  FS_ADD_TEST(s, test_units_size);
  FS_ADD_TEST(s, test_units_power_and_flops);
  FS_ADD_TEST(s, test_units_numbers_and_ints);
  FS_ADD_TEST(s, test_units_locale_independent);
  FS_ADD_TEST(s, test_units_format_bandwidth);
  FS_ADD_TEST(s, test_units_format_time);
  FS_ADD_TEST(s, test_units_format_size);
  FS_ADD_TEST(s, test_units_round_trip);
  FS_ADD_TEST(s, test_units_time_from_s);
  return fs_test_run_suite(s);
}
