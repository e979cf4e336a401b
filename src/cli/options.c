/* options.c — re-entrant GOptionEntry tables and option parsing for the
 * subcommands (commands.h: fs_cli_options_begin/end, fs_cli_options_parse).
 *
 * Every subcommand parses into file-static variables named by its entry
 * table.  So that one process can run commands again and again (the fuzz
 * driver tests/fuzz/fuzz-cli.c, and `help CMD` running CMD --help), the
 * first begin of a table records the value each entry points at, by the
 * entry's type, and end frees what GOption allocated into them and writes
 * the recorded values back.  Defaults such as `static gint opt_iters = 20;`
 * therefore hold on every run, and a run leaks nothing.
 *
 * The records live for the process (at most MAX_TABLES tables, each a
 * small array).  Not thread-safe: options are parsed on the main thread.
 */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "util/strutil.h"

/* More tables than src/cli has (13 commands, 4 explain topics). */
#define MAX_TABLES 64

typedef union {
  gboolean b;
  gint i;
  gint64 i64;
  gdouble d;
  gpointer p;
} Value;

typedef struct {
  const GOptionEntry *entries;
  guint n;
  Value *values; /* the defaults, one per entry */
} Snapshot;

static Snapshot snapshots[MAX_TABLES];
static guint n_snapshots;

static guint count_entries(const GOptionEntry *entries)
{
  guint n = 0;
  while (entries[n].long_name != NULL)
    n++;
  return n;
}

static Value read_value(const GOptionEntry *e)
{
  Value v = { .i64 = 0 };
  switch (e->arg) {
  case G_OPTION_ARG_NONE: v.b = *(gboolean *)e->arg_data; break;
  case G_OPTION_ARG_INT: v.i = *(gint *)e->arg_data; break;
  case G_OPTION_ARG_INT64: v.i64 = *(gint64 *)e->arg_data; break;
  case G_OPTION_ARG_DOUBLE: v.d = *(gdouble *)e->arg_data; break;
  case G_OPTION_ARG_STRING:
  case G_OPTION_ARG_FILENAME:
  case G_OPTION_ARG_STRING_ARRAY:
  case G_OPTION_ARG_FILENAME_ARRAY: v.p = *(gpointer *)e->arg_data; break;
  case G_OPTION_ARG_CALLBACK: break;
  }
  return v;
}

/* Writes v back into e's variable; a string or array that differs from v
 * was allocated by GOption (or replaced by the command with its own
 * g_malloc'd copy) and is freed. */
static void restore_value(const GOptionEntry *e, Value v)
{
  switch (e->arg) {
  case G_OPTION_ARG_NONE: *(gboolean *)e->arg_data = v.b; break;
  case G_OPTION_ARG_INT: *(gint *)e->arg_data = v.i; break;
  case G_OPTION_ARG_INT64: *(gint64 *)e->arg_data = v.i64; break;
  case G_OPTION_ARG_DOUBLE: *(gdouble *)e->arg_data = v.d; break;
  case G_OPTION_ARG_STRING:
  case G_OPTION_ARG_FILENAME: {
    char **s = e->arg_data;
    if (*s != v.p)
      g_free(*s);
    *s = v.p;
    break;
  }
  case G_OPTION_ARG_STRING_ARRAY:
  case G_OPTION_ARG_FILENAME_ARRAY: {
    char ***a = e->arg_data;
    if (*a != v.p)
      g_strfreev(*a);
    *a = v.p;
    break;
  }
  case G_OPTION_ARG_CALLBACK: break;
  }
}

static Snapshot *find_snapshot(const GOptionEntry *entries)
{
  for (guint i = 0; i < n_snapshots; i++)
    if (snapshots[i].entries == entries)
      return &snapshots[i];
  return NULL;
}

static void restore_all(const Snapshot *s)
{
  for (guint i = 0; i < s->n; i++)
    if (s->entries[i].arg_data != NULL)
      restore_value(&s->entries[i], s->values[i]);
}

FsCliOptions fs_cli_options_begin(const GOptionEntry *entries)
{
  FsCliOptions opts = { entries };
  Snapshot *s = find_snapshot(entries);
  if (s != NULL) {
    restore_all(s);
    return opts;
  }
  g_assert(n_snapshots < MAX_TABLES);
  s = &snapshots[n_snapshots++];
  s->entries = entries;
  s->n = count_entries(entries);
  s->values = g_new0(Value, MAX(s->n, 1u));
  for (guint i = 0; i < s->n; i++)
    if (entries[i].arg_data != NULL)
      s->values[i] = read_value(&entries[i]);
  return opts;
}

void fs_cli_options_end(FsCliOptions *opts)
{
  const Snapshot *s = opts->entries ? find_snapshot(opts->entries) : NULL;
  if (s != NULL)
    restore_all(s);
  opts->entries = NULL;
}

/* Help ------------------------------------------------------------------ */

/* GLib's own -h/--help prints and calls exit(0); these hidden entries do
 * the same recognition (at the point of the command line where GLib would)
 * and stop the parse, and fs_cli_options_parse prints the help itself. */
enum { HELP_NONE, HELP_MAIN, HELP_ALL };
static int help_asked;

static gboolean on_help(const gchar *name, const gchar *value, gpointer data, GError **error)
{
  (void)value;
  (void)data;
  help_asked = strcmp(name, "--help-all") == 0 ? HELP_ALL : HELP_MAIN;
  g_set_error_literal(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "help");
  return FALSE;
}

#define HELP_FLAGS (G_OPTION_FLAG_HIDDEN | G_OPTION_FLAG_NO_ARG)
static const GOptionEntry help_entries[] = {
  {"help", 'h', HELP_FLAGS, G_OPTION_ARG_CALLBACK, (gpointer)on_help, NULL, NULL},
  {"help-all", '?', HELP_FLAGS, G_OPTION_ARG_CALLBACK, (gpointer)on_help, NULL, NULL},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* Prints "fabricsim CMD: MESSAGE (see ...)" on one line. */
static void print_usage_error(const char *cmd, const char *message)
{
  g_autofree char *shown = fs_escape_controls(message);
  fprintf(stderr, "fabricsim %s: %s (see 'fabricsim %s --help')\n", cmd, shown, cmd);
}

int fs_cli_options_parse(GOptionContext *ctx, int *argc, char ***argv, const char *cmd)
{
  g_option_context_set_help_enabled(ctx, FALSE);
  g_option_context_add_main_entries(ctx, help_entries, NULL);
  help_asked = HELP_NONE;
  g_autoptr(GError) error = NULL;
  gboolean ok = g_option_context_parse(ctx, argc, argv, &error);
  int asked = help_asked;
  help_asked = HELP_NONE;
  if (asked != HELP_NONE) {
    /* As GLib prints it: with the "Help Options" section. */
    g_option_context_set_help_enabled(ctx, TRUE);
    g_autofree char *help = g_option_context_get_help(ctx, asked == HELP_MAIN, NULL);
    /* GLib lists -? when an entry has -h, as help_entries' has; no
     * command's own table uses -h. */
    char *row = strstr(help, "\n  -?, --help ");
    if (row != NULL)
      row[4] = 'h';
    g_print("%s", help); /* as GLib: in the locale's charset */
    return 0;
  }
  if (ok)
    return FS_CLI_GO_ON;
  print_usage_error(cmd, error->message);
  return 2;
}

int fs_cli_usage(const char *cmd, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  print_usage_error(cmd, msg);
  return 2;
}
