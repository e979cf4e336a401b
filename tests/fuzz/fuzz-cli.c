/* fuzz-cli.c — libFuzzer driver for the command line: `fabricsim ARGS...`
 * run in-process through fs_cli_main (src/cli/commands.c).
 *
 * Input: the arguments after "fabricsim", separated by NUL bytes when the
 * input holds one, else by newlines (so that corpus files read as one
 * argument per line); a separator at the very end ends the last argument.
 * At most MAX_ARGS arguments of at most MAX_ARG_LEN bytes each; a longer
 * input is skipped.  Corpus: tests/data/cli/ (README.md there).
 *
 * The driver works in a scratch folder holding links to the source tree's
 * topologies/, workloads/, models/ and tests/, so that corpus
 * paths such as topologies/dgx-h100.yaml load, links to everything else in
 * the folder it started in (libFuzzer's relative paths), and an empty out/
 * where commands may write (--trace out/t.json, -o out/s.csv).  Writing
 * anywhere else fails as a permission error would: fs_write_file_atomic and
 * fs_sweep_writer_open are wrapped at link time (-Wl,--wrap, see
 * meson.build), so a mutated path never touches the source tree and no
 * run sees another's output.  out/ is emptied after each run.  The
 * models folders are read once: fs_catalog_load_default is wrapped too and
 * hands each command a copy (fs_catalog_copy) of the catalog it loaded
 * first from that folder — the folders the driver reaches do not change
 * while it runs (out/ is never cached), and parsing the catalog was about a
 * third of a typical run.  The
 * environment keeps runs small and alike: FABRICSIM_MAX_EVENTS,
 * FABRICSIM_MAX_CANDIDATES, FABRICSIM_MAX_FLOWS, FABRICSIM_MAX_LAYERS and
 * the topology limits are lowered, FABRICSIM_VALIDATION names a folder with one small reference
 * table (reference/), the NCCL_* variables the commands read are unset, stdin reads
 * /dev/null and a command's stdout goes to /dev/null.
 *
 * Promises checked (stderr is captured): the exit status is 0, 1 or 2;
 * with status 2 stderr is exactly one line starting "fabricsim: " or
 * "fabricsim CMD: " (CMD the subcommand, and the topic for explain), and
 * when what follows is an argument naming an existing file and a colon, it
 * goes on "FILE:LINE:COL: " or "FILE: "; with status 1 the first line has
 * that prefix and only a deadlock report spans several lines; with
 * status 0 every stderr line is a "fabricsim" warning or a progress line.  `fabricsim` alone prints its
 * usage on stderr and exits 2 (tests/cli/test-help.sh).  GLib warnings and
 * criticals abort.  With FS_FUZZ_CLI_VERBOSE set, each run's exit status
 * and first stderr line are printed.  libFuzzer adds: no crash, leak
 * (every option and result is freed by the time fs_cli_main returns), UB
 * or hang.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <stdlib.h>
#include <unistd.h>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "fuzz-common.h"
#include "sweep/output.h"
#include "util/error.h"

#define MAX_ARGS 24
#define MAX_ARG_LEN 256
#define OUT_DIR "out"
#define VALIDATION_DIR "reference"
#define VALIDATION_TABLE "h100_pcie_gen5_host_copies_fabricsim_probe.csv"

int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The real functions behind the link-time wrappers. */
gboolean __real_fs_write_file_atomic(const char *path, const char *contents, gsize len,
                                     GError **error);
gboolean __wrap_fs_write_file_atomic(const char *path, const char *contents, gsize len,
                                     GError **error);
FsSweepWriter *__real_fs_sweep_writer_open(const FsSweepSpec *s, const char *path,
                                           FsSweepFormat fmt, gboolean resume, GError **error);
FsSweepWriter *__wrap_fs_sweep_writer_open(const FsSweepSpec *s, const char *path,
                                           FsSweepFormat fmt, gboolean resume, GError **error);

FsCatalog *__real_fs_catalog_load_default(const char *dir, GError **error);
FsCatalog *__wrap_fs_catalog_load_default(const char *dir, GError **error);

static char *scratch;   /* the scratch folder (the working directory) */
static char *out_dir;   /* scratch/out, absolute */
static FILE *real_stderr;
static int null_out, real_stdout; /* file descriptors */
static gboolean verbose;          /* $FS_FUZZ_CLI_VERBOSE: each run's status */

/* TRUE when path, taken from the working directory without following
 * links, lies inside out/. */
static gboolean writable(const char *path)
{
  if (path == NULL || path[0] == '\0')
    return FALSE;
  g_autofree char *full = g_canonicalize_filename(path, scratch);
  size_t n = strlen(out_dir);
  return strncmp(full, out_dir, n) == 0 && full[n] == '/' && full[n + 1] != '\0';
}

static gboolean refuse(const char *path, GError **error)
{
  g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_IO, "%s: cannot write: %s", path,
              g_strerror(EACCES));
  return FALSE;
}

gboolean __wrap_fs_write_file_atomic(const char *path, const char *contents, gsize len,
                                     GError **error)
{
  if (path != NULL && strcmp(path, "-") != 0 && !writable(path))
    return refuse(path, error);
  return __real_fs_write_file_atomic(path, contents, len, error);
}

FsSweepWriter *__wrap_fs_sweep_writer_open(const FsSweepSpec *s, const char *path,
                                           FsSweepFormat fmt, gboolean resume, GError **error)
{
  if (path != NULL && !writable(path)) {
    g_autofree char *partial = g_strconcat(path, ".partial", NULL);
    refuse(partial, error);
    return NULL;
  }
  return __real_fs_sweep_writer_open(s, path, fmt, resume, error);
}

/* Catalogs loaded so far: canonical folder -> FsCatalog (kept for the
 * process' lifetime, reachable, so not a leak). */
static GHashTable *catalogs;

FsCatalog *__wrap_fs_catalog_load_default(const char *dir, GError **error)
{
  g_autofree char *key =
      g_canonicalize_filename(dir != NULL ? dir : fs_catalog_default_dir(), scratch);
  size_t n = strlen(out_dir);
  if (strncmp(key, out_dir, n) == 0 && (key[n] == '/' || key[n] == '\0'))
    return __real_fs_catalog_load_default(dir, error);
  if (catalogs == NULL)
    catalogs = g_hash_table_new(g_str_hash, g_str_equal);
  FsCatalog *cat = g_hash_table_lookup(catalogs, key);
  if (cat == NULL) {
    /* Errors are not kept: a failing folder fails the same way each time. */
    if ((cat = __real_fs_catalog_load_default(dir, error)) == NULL)
      return NULL;
    g_hash_table_insert(catalogs, g_steal_pointer(&key), cat);
  }
  return fs_catalog_copy(cat);
}

/* Removes every file in out/ (commands write files only). */
static void empty_out_dir(void)
{
  GDir *d = g_dir_open(out_dir, 0, NULL);
  if (d == NULL)
    return;
  for (const char *n; (n = g_dir_read_name(d)) != NULL;) {
    g_autofree char *p = g_build_filename(out_dir, n, NULL);
    if (g_unlink(p) != 0)
      fs_fuzz_fail("cannot remove %s: %s", p, g_strerror(errno));
  }
  g_dir_close(d);
}

/* Removes the scratch folder: its links, out/, reference/ and itself. */
static void remove_scratch(void)
{
  if (scratch == NULL)
    return;
  empty_out_dir();
  g_rmdir(out_dir);
  g_autofree char *ref = g_build_filename(scratch, VALIDATION_DIR, NULL);
  g_autofree char *table = g_build_filename(ref, VALIDATION_TABLE, NULL);
  g_unlink(table);
  g_rmdir(ref);
  GDir *d = g_dir_open(scratch, 0, NULL);
  if (d != NULL) {
    for (const char *n; (n = g_dir_read_name(d)) != NULL;) {
      g_autofree char *p = g_build_filename(scratch, n, NULL);
      if (g_file_test(p, G_FILE_TEST_IS_SYMLINK))
        g_unlink(p);
    }
    g_dir_close(d);
  }
  g_rmdir(scratch);
}

static void link_into_scratch(const char *target, const char *name)
{
  g_autofree char *link = g_build_filename(scratch, name, NULL);
  if (symlink(target, link) != 0 && errno != EEXIST)
    fs_fuzz_fail("cannot link %s: %s", link, g_strerror(errno));
}

/* The scratch folder, made the working directory: links to the source
 * tree's input folders, then to every other entry of the starting folder
 * (so that libFuzzer's relative corpus and artifact paths still resolve,
 * also when a crash happens inside a command), and out/. */
static void enter_scratch(void)
{
  static const char *const inputs[] = {"topologies", "workloads", "models", "tests"};
  GError *error = NULL;
  scratch = g_dir_make_tmp("fabricsim-fuzz-cli-XXXXXX", &error);
  if (scratch == NULL)
    fs_fuzz_fail("cannot make a scratch folder: %s", error->message);
  atexit(remove_scratch);
  g_autofree char *root = g_canonicalize_filename(FS_SOURCE_DATA_DIR, NULL);
  for (guint i = 0; i < G_N_ELEMENTS(inputs); i++) {
    g_autofree char *target = g_build_filename(root, inputs[i], NULL);
    link_into_scratch(target, inputs[i]);
  }
  g_autofree char *home = g_get_current_dir();
  GDir *d = g_dir_open(home, 0, NULL);
  if (d != NULL) {
    for (const char *n; (n = g_dir_read_name(d)) != NULL;) {
      if (strcmp(n, OUT_DIR) == 0)
        continue;
      g_autofree char *target = g_build_filename(home, n, NULL);
      link_into_scratch(target, n); /* the source folders above win */
    }
    g_dir_close(d);
  }
  out_dir = g_build_filename(scratch, OUT_DIR, NULL);
  if (g_mkdir(out_dir, 0700) != 0 || chdir(scratch) != 0)
    fs_fuzz_fail("cannot prepare %s: %s", scratch, g_strerror(errno));
  /* `validate` runs every table of its folder: 3 s of CPU under ASan for
   * validation/reference/ (the fuzzer's second finding).  Its default
   * here is a folder with the smallest table only. */
  g_autofree char *ref = g_build_filename(scratch, VALIDATION_DIR, NULL);
  g_autofree char *table = g_build_filename(root, "validation", "reference", VALIDATION_TABLE, NULL);
  g_autofree char *link = g_build_filename(ref, VALIDATION_TABLE, NULL);
  if (g_mkdir(ref, 0700) != 0 || symlink(table, link) != 0)
    fs_fuzz_fail("cannot prepare %s: %s", ref, g_strerror(errno));
  g_setenv("FABRICSIM_VALIDATION", ref, TRUE);
}

/* GLib warnings and criticals are programmer errors: report and stop. */
static void on_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
  (void)data;
  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING)) {
    stderr = real_stderr;
    fs_fuzz_fail("GLib %s: %s", domain ? domain : "", message);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  setlocale(LC_ALL, "C");
  /* Small runs: an input slower than a second or two is a finding only
   * when these limits do not bound it. */
  /* A Llama 2 7B step on one DGX H100 takes about 200,000 events and
   * `plan` simulates 30 layouts of it by default: under ASan that was
   * 10-40 s per input and held the fourth session's run to 6 inputs/s.
   * Such inputs now stop at the limits with their clear errors. */
  g_setenv("FABRICSIM_MAX_EVENTS", "50000", TRUE);
  /* Threads of `plan` and `sweep` live as long as the driver: a pool thread
   * that exits frees GLib 2.74's per-thread GSlice memory (calloc 2,032
   * bytes) in a TLS destructor, after glibc has cleared the TLS slot, and a
   * per-input leak check that ran in between reported it as a leak (fifth
   * session, run 10). */
  g_thread_pool_set_max_unused_threads(-1);
  g_thread_pool_set_max_idle_time(0);
  g_setenv("FABRICSIM_MAX_CANDIDATES", "2", TRUE);
  g_setenv("FABRICSIM_MAX_FLOWS", "256", TRUE);
  g_setenv("FABRICSIM_MAX_LAYERS", "4096", TRUE);
  /* About 40 DGX hosts: `topo paths` is quadratic in the GPUs (2 s for
   * 2,080 GPUs without sanitizers; the first minute of fuzzing found it). */
  g_setenv("FABRICSIM_MAX_NAMES", "1024", TRUE);
  g_setenv("FABRICSIM_MAX_NODES", "1024", TRUE);
  g_setenv("FABRICSIM_MAX_LINKS", "8192", TRUE);
  g_setenv("FABRICSIM_MODELS", FS_SOURCE_DATA_DIR "/models", TRUE);
  static const char *const unset[] = {"NCCL_ALGO", "NCCL_PROTO", "NCCL_COLLNET_ENABLE",
                                      "FABRICSIM_WORKLOADS",
                                      "FS_NET_CHECK", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                      "PMIX_RANK"};
  for (guint i = 0; i < G_N_ELEMENTS(unset); i++)
    g_unsetenv(unset[i]);
  enter_scratch();

  /* stdin empty; stdout goes to /dev/null while a command runs. */
  int null_in = open("/dev/null", O_RDONLY);
  null_out = open("/dev/null", O_WRONLY | O_CLOEXEC);
  real_stdout = dup(STDOUT_FILENO);
  if (null_in < 0 || null_out < 0 || real_stdout < 0 || dup2(null_in, STDIN_FILENO) < 0)
    fs_fuzz_fail("cannot redirect stdin and stdout to /dev/null");
  close(null_in);
  real_stderr = stderr;
  verbose = g_getenv("FS_FUZZ_CLI_VERBOSE") != NULL;
  g_log_set_default_handler(on_log, NULL);
  return 0;
}

/* Splits the input into arguments; FALSE when it has too many or too long. */
static gboolean split_args(const uint8_t *data, size_t size, GPtrArray *args)
{
  char sep = memchr(data, '\0', size) != NULL ? '\0' : '\n';
  size_t start = 0;
  for (size_t i = 0; i <= size; i++) {
    if (i < size && data[i] != (uint8_t)sep)
      continue;
    if (i == size && start == size)
      break; /* nothing after the last separator */
    if (i - start > MAX_ARG_LEN || args->len >= MAX_ARGS + 1)
      return FALSE;
    g_ptr_array_add(args, g_strndup((const char *)data + start, i - start));
    start = i + 1;
  }
  return TRUE;
}

/* The prefix a subcommand's messages carry, "fabricsim CMD: " (for
 * explain, "fabricsim explain TOPIC: " or "fabricsim explain: "), or NULL
 * when the message has none of the accepted prefixes. */
static const char *after_prefix(const char *line, char **argv, int argc)
{
  if (g_str_has_prefix(line, "fabricsim: "))
    return line + strlen("fabricsim: ");
  if (argc < 2 || !g_str_has_prefix(line, "fabricsim "))
    return NULL;
  const char *p = line + strlen("fabricsim ");
  const char *cmd = argv[1];
  if (strcmp(cmd, "help") == 0 && argc > 2)
    cmd = argv[2]; /* help CMD runs CMD --help */
  size_t n = strlen(cmd);
  if (strncmp(p, cmd, n) != 0)
    return NULL;
  p += n;
  if (strncmp(p, ": ", 2) == 0)
    return p + 2;
  /* A topic of explain: one lower-case word. */
  if (*p != ' ')
    return NULL;
  p++;
  while (*p >= 'a' && *p <= 'z')
    p++;
  return strncmp(p, ": ", 2) == 0 ? p + 2 : NULL;
}

/* The longest argument (or value of --opt=value) that names an existing
 * file and that message starts with, followed by a colon; NULL if none.
 * A name is taken whole: "a.yaml::" is not "a.yaml". */
static const char *file_named(const char *message, char **argv, int argc)
{
  const char *best = NULL;
  size_t best_len = 0;
  for (int i = 1; i < argc; i++) {
    const char *eq = strchr(argv[i], '=');
    const char *cands[2] = {argv[i], eq ? eq + 1 : NULL};
    for (guint k = 0; k < 2; k++) {
      const char *c = cands[k];
      size_t n = c ? strlen(c) : 0;
      if (n == 0 || n <= best_len || strncmp(message, c, n) != 0 || message[n] != ':' ||
          !g_file_test(c, G_FILE_TEST_IS_REGULAR))
        continue;
      best = c;
      best_len = n;
    }
  }
  return best;
}

/* When message is about a file named on the command line, it is an input
 * error at a position: "FILE:LINE:COL: " or "FILE: ". */
static void check_file_position(const char *message, const char *line, char **argv, int argc)
{
  const char *name = file_named(message, argv, argc);
  if (name == NULL)
    return;
  const char *p = message + strlen(name) + 1;
  if (*p == ' ')
    return;
  char *end;
  long ln = strtol(p, &end, 10);
  if (end == p || ln < 1 || *end != ':')
    fs_fuzz_fail("an error about %s has no valid line: %s", name, line);
  p = end + 1;
  if (*p == ' ')
    return;
  long col = strtol(p, &end, 10);
  if (end == p || col < 1 || strncmp(end, ": ", 2) != 0)
    fs_fuzz_fail("an error about %s has no valid column: %s", name, line);
}

static void check_output(int status, const char *err, size_t err_len, char **argv, int argc)
{
  if (status != 0 && status != 1 && status != 2)
    fs_fuzz_fail("exit status %d", status);
  if (memchr(err, '\0', err_len) != NULL)
    fs_fuzz_fail("a NUL byte on stderr");
  if (argc < 2) {
    if (status != 2 || !g_str_has_prefix(err, "Usage: fabricsim"))
      fs_fuzz_fail("`fabricsim` alone: status %d, stderr %s", status, err);
    return;
  }
  g_auto(GStrv) lines = g_strsplit(err, "\n", -1);
  guint n = g_strv_length(lines);
  /* The text ends with a newline: the last piece is empty. */
  if (err_len > 0 && err[err_len - 1] != '\n')
    fs_fuzz_fail("stderr does not end with a newline: %s", err);
  guint n_lines = n > 0 ? n - 1 : 0;
  if (status == 0) {
    for (guint i = 0; i < n_lines; i++)
      if (!g_str_has_prefix(lines[i], "fabricsim") && lines[i][0] != '\r')
        fs_fuzz_fail("status 0 with a stderr line that is not a fabricsim message: %s", lines[i]);
    return;
  }
  if (n_lines == 0)
    fs_fuzz_fail("exit status %d and nothing on stderr", status);
  const char *message = after_prefix(lines[0], argv, argc);
  if (message == NULL)
    fs_fuzz_fail("error without a \"fabricsim CMD: \" prefix: %s", lines[0]);
  /* Not blank (a file name may begin with a space: "fabricsim p2p:  -si: …"). */
  if (message[strspn(message, " ")] == '\0')
    fs_fuzz_fail("empty error message: %s", lines[0]);
  if (n_lines > 1 && (status == 2 || strstr(err, "deadlock") == NULL))
    fs_fuzz_fail("exit status %d with %u lines on stderr: %s", status, n_lines, err);
  if (status == 2)
    check_file_position(message, lines[0], argv, argc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(args, g_strdup("fabricsim"));
  if (!split_args(data, size, args))
    return 0;
  int argc = (int)args->len;
  /* The command may reorder argv (GOption removes what it parsed): give it
   * a copy of the pointers and keep args for freeing. */
  g_autofree char **argv = g_new0(char *, args->len + 1);
  memcpy(argv, args->pdata, args->len * sizeof(char *));
  g_autofree char **shown = g_memdup2(argv, (args->len + 1) * sizeof(char *));

  char *err = NULL;
  size_t err_len = 0;
  FILE *capture = open_memstream(&err, &err_len);
  if (capture == NULL)
    fs_fuzz_fail("open_memstream: %s", g_strerror(errno));
  fflush(stdout);
  stderr = capture;
  dup2(null_out, STDOUT_FILENO);
  int status = fs_cli_main(argc, argv);
  fflush(stdout);
  dup2(real_stdout, STDOUT_FILENO);
  stderr = real_stderr;
  fclose(capture);
  empty_out_dir();
  if (verbose) {
    const char *nl = err_len > 0 ? strchr(err, '\n') : NULL;
    fprintf(stderr, "fuzz-cli: %s: exit %d%s%.*s\n", argc > 1 ? shown[1] : "(none)", status,
            err_len > 0 ? ": " : "", nl ? (int)(nl - err) : (int)err_len, err ? err : "");
  }
  check_output(status, err, err_len, shown, argc);
  free(err);
  return 0;
}
