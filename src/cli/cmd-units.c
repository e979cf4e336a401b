/* cmd-units.c — `fabricsim units QUANTITY...`: parse quantities the way every
 * fabricsim input does and print them in SI base units.  Useful to check a
 * YAML value before writing it, and to teach GB/s vs Gb/s vs GiB/s. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "report/units.h"

static char *opt_kind = NULL;

static const GOptionEntry entries[] = {
  {"kind", 'k', 0, G_OPTION_ARG_STRING, &opt_kind,
   "Quantity kind: bandwidth, lane-rate, time, size, power, flops (default: guess)", "KIND"},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

int fs_cmd_units(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx = g_option_context_new("QUANTITY... - parse quantities into SI units");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Prints each quantity as fabricsim reads it: bytes/s, bits/s per lane,\n"
    "picoseconds, bytes, watts or FLOP/s.  GB/s is 10^9 bytes/s, Gb/s is bits,\n"
    "GiB/s is 2^30 bytes/s; a bare K/M/G size suffix is a power of 1024.\n"
    "\n"
    "Example:\n"
    "  fabricsim units \"900 GB/s\" \"400 Gb/s\" \"1.5 us\" 16G \"32 GT/s\"\n"
    "  fabricsim units --kind time -- \"-5 ns\"    # an error: times are never negative\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "units");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc < 2 || (argc == 2 && strcmp(argv[1], "--") == 0))
    return fs_cli_usage("units", "expected at least one QUANTITY");
  gboolean dashdash = FALSE;
  for (int i = 1; i < argc; i++) {
    /* GOptionContext leaves "--" in place: it only ends the options
     * ("fabricsim units -- -5ns"). */
    if (!dashdash && strcmp(argv[i], "--") == 0) {
      dashdash = TRUE;
      continue;
    }
    GError *error = NULL;
    g_autoptr(GString) out = g_string_new(NULL);
    if (!fs_report_quantity(out, opt_kind, argv[i], &error))
      return fs_cli_fail("units", error);
    fputs(out->str, stdout);
  }
  return 0;
}
