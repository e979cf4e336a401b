/* test-cli-options.c — src/cli/options.c: option tables restored and freed
 * after every command, help without exit(), one-line usage errors. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "testutil.h"

static gint opt_iters = 20;
static gint64 opt_bytes = -1;
static double opt_scale = 0.5;
static gboolean opt_json = FALSE;
static char *opt_name = NULL;
static char *opt_file = (char *)"default.yaml";
static char **opt_defines = NULL;

static const GOptionEntry entries[] = {
  {"iters", 'n', 0, G_OPTION_ARG_INT, &opt_iters, "Iterations", "N"},
  {"bytes", 0, 0, G_OPTION_ARG_INT64, &opt_bytes, "Bytes", "B"},
  {"scale", 0, 0, G_OPTION_ARG_DOUBLE, &opt_scale, "Scale", "X"},
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "JSON", NULL},
  {"name", 0, 0, G_OPTION_ARG_STRING, &opt_name, "Name", "NAME"},
  {"file", 0, 0, G_OPTION_ARG_FILENAME, &opt_file, "File", "FILE"},
  {"define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &opt_defines, "Define", "K=V"},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* What one run saw after parsing. */
typedef struct {
  int status;
  gint iters;
  gint64 bytes;
  double scale;
  gboolean json;
  char name[32], file[32];
  guint n_defines;
} Seen;

/* A command in the shape of src/cli/cmd-*.c, on a copy of args. */
static Seen run(const char *const *args)
{
  Seen seen = {0};
  FS_CLI_OPTIONS(entries);
  g_auto(GStrv) copy = g_strdupv((char **)args);
  g_autofree char **argv = g_memdup2(copy, (g_strv_length(copy) + 1) * sizeof(char *));
  int argc = (int)g_strv_length(copy);
  g_autoptr(GOptionContext) ctx = g_option_context_new("- test");
  g_option_context_add_main_entries(ctx, entries, NULL);
  int done = fs_cli_options_parse(ctx, &argc, &argv, "test");
  seen.status = done;
  seen.iters = opt_iters;
  seen.bytes = opt_bytes;
  seen.scale = opt_scale;
  seen.json = opt_json;
  g_strlcpy(seen.name, opt_name ? opt_name : "(null)", sizeof seen.name);
  g_strlcpy(seen.file, opt_file ? opt_file : "(null)", sizeof seen.file);
  seen.n_defines = opt_defines ? g_strv_length(opt_defines) : 0;
  return seen;
}

static void assert_defaults(void)
{
  ck_assert_int_eq(opt_iters, 20);
  ck_assert(opt_bytes == -1);
  ck_assert(opt_scale == 0.5);
  ck_assert(!opt_json);
  ck_assert_ptr_null(opt_name);
  ck_assert_str_eq(opt_file, "default.yaml");
  ck_assert_ptr_null(opt_defines);
}

START_TEST(test_cli_options_restored_after_each_run)
{
  const char *const set[] = {"test", "-n", "7", "--bytes=9", "--scale", "2", "--json",
                             "--name", "a", "--name", "b", "--file", "x.yaml",
                             "-D", "p=1", "-D", "q=2", NULL};
  Seen s = run(set);
  ck_assert_int_eq(s.status, FS_CLI_GO_ON);
  ck_assert_int_eq(s.iters, 7);
  ck_assert(s.bytes == 9);
  ck_assert(s.scale == 2);
  ck_assert(s.json);
  ck_assert_str_eq(s.name, "b");
  ck_assert_str_eq(s.file, "x.yaml");
  ck_assert_uint_eq(s.n_defines, 2);
  assert_defaults();
  /* A second run without options sees the defaults, not the first run's. */
  const char *const none[] = {"test", NULL};
  s = run(none);
  ck_assert_int_eq(s.status, FS_CLI_GO_ON);
  ck_assert_int_eq(s.iters, 20);
  ck_assert_str_eq(s.name, "(null)");
  ck_assert_str_eq(s.file, "default.yaml");
  ck_assert_uint_eq(s.n_defines, 0);
  assert_defaults();
}
END_TEST

START_TEST(test_cli_options_failed_parse_restores)
{
  const char *const bad[] = {"test", "--name", "a", "-n", "many", NULL};
  Seen s = run(bad);
  ck_assert_int_eq(s.status, 2);
  assert_defaults();
}
END_TEST

/* --help prints and returns 0 (GLib's own help would exit the process);
 * an error before it still wins, as with GLib. */
START_TEST(test_cli_options_help_returns)
{
  const char *const help[] = {"test", "--name", "a", "--help", "--bogus", NULL};
  ck_assert_int_eq(run(help).status, 0);
  const char *const short_help[] = {"test", "-h", NULL};
  ck_assert_int_eq(run(short_help).status, 0);
  const char *const all[] = {"test", "--help-all", NULL};
  ck_assert_int_eq(run(all).status, 0);
  const char *const late[] = {"test", "--bogus", "--help", NULL};
  ck_assert_int_eq(run(late).status, 2);
  assert_defaults();
}
END_TEST

/* Usage errors are one line whatever the arguments hold. */
START_TEST(test_cli_options_usage_is_one_line)
{
  char *text = NULL;
  size_t len = 0;
  FILE *capture = open_memstream(&text, &len);
  FILE *saved = stderr;
  stderr = capture;
  int status = fs_cli_usage("test", "unknown kind \"%s\"", "a\nb\tc");
  const char *const bad[] = {"test", "--bo\ngus", NULL};
  int status2 = run(bad).status;
  stderr = saved;
  fclose(capture);
  ck_assert_int_eq(status, 2);
  ck_assert_int_eq(status2, 2);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  ck_assert_uint_eq(g_strv_length(lines), 3); /* two lines and the empty end */
  ck_assert_str_eq(lines[0], "fabricsim test: unknown kind \"a\\nb\\tc\" (see 'fabricsim test --help')");
  ck_assert(g_str_has_prefix(lines[1], "fabricsim test: Unknown option --bo\\ngus"));
  free(text);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("cli-options");
  FS_ADD_TEST(s, test_cli_options_restored_after_each_run);
  FS_ADD_TEST(s, test_cli_options_failed_parse_restores);
  FS_ADD_TEST(s, test_cli_options_help_returns);
  FS_ADD_TEST(s, test_cli_options_usage_is_one_line);
  return fs_test_run_suite(s);
}
