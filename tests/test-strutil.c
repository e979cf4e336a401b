/* test-strutil.c — edit distance, did-you-mean and atomic writes (src/util/strutil.c),
 * the enums' name tables (src/util/names.c), the resource limits read
 * from the environment (src/util/limits.c) and the shipped data's folders
 * (src/util/datadir.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "testutil.h"
#include "util/datadir.h"
#include "util/error.h"
#include "util/interrupt.h"
#include "util/limits.h"
#include "util/names.h"
#include "util/strutil.h"

START_TEST(test_env_limit)
{
  /* Unset or empty: the default.  A decimal integer from 1 to the ceiling:
   * that value.  Anything else: the default (and a warning on stderr). */
  const char *var = "FABRICSIM_TEST_LIMIT";
  g_unsetenv(var);
  ck_assert_uint_eq(fs_env_limit(var, 7, 100), 7);
  static const struct { const char *text; guint64 want; } cases[] = {
    {"", 7}, {"1", 1}, {"100", 100}, {"42", 42}, {"0", 7}, {"101", 7}, {"-3", 7},
    {"12x", 7}, {" 12", 7}, {"0x10", 7}, {"1e3", 7}, {"99999999999999999999999", 7},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_setenv(var, cases[i].text, TRUE);
    ck_assert_msg(fs_env_limit(var, 7, 100) == cases[i].want, "\"%s\"", cases[i].text);
  }
  g_unsetenv(var);
}
END_TEST

START_TEST(test_strutil_edit_distance)
{
  ck_assert_uint_eq(fs_edit_distance("", ""), 0);
  ck_assert_uint_eq(fs_edit_distance("abc", ""), 3);
  ck_assert_uint_eq(fs_edit_distance("", "abcd"), 4);
  ck_assert_uint_eq(fs_edit_distance("latency", "latency"), 0);
  ck_assert_uint_eq(fs_edit_distance("latncy", "latency"), 1);
  ck_assert_uint_eq(fs_edit_distance("kitten", "sitting"), 3);
  ck_assert_uint_eq(fs_edit_distance("flaw", "lawn"), 2);
  ck_assert_uint_eq(fs_edit_distance("Lanes", "lanes"), 1); /* case-sensitive */
  ck_assert_uint_eq(fs_edit_distance("abc", "cba"), 2);
  /* Symmetric. */
  ck_assert_uint_eq(fs_edit_distance("bandwidth", "bandwith"), fs_edit_distance("bandwith", "bandwidth"));
}
END_TEST

START_TEST(test_strutil_did_you_mean)
{
  const char *const keys[] = {"name", "latency", "bandwidth", "lanes", "source", NULL};
  ck_assert_str_eq(fs_did_you_mean("latncy", keys, -1), "latency");
  ck_assert_str_eq(fs_did_you_mean("bandwith", keys, -1), "bandwidth");
  ck_assert_str_eq(fs_did_you_mean("lane", keys, -1), "lanes");
  ck_assert_ptr_null(fs_did_you_mean("topology", keys, -1));
  ck_assert_ptr_null(fs_did_you_mean("xyzzy", keys, -1));
  /* An exact match is distance 0. */
  ck_assert_ptr_eq(fs_did_you_mean("name", keys, -1), keys[0]);
  /* Counted form: only the first n candidates are considered. */
  ck_assert_ptr_null(fs_did_you_mean("lanes", keys, 2));
  ck_assert_str_eq(fs_did_you_mean("lanes", keys, 4), "lanes");
  /* Ties go to the first candidate. */
  const char *const tie[] = {"abd", "abe", NULL};
  ck_assert_ptr_eq(fs_did_you_mean("abc", tie, -1), tie[0]);
  const char *const tie2[] = {"abe", "abd", NULL};
  ck_assert_ptr_eq(fs_did_you_mean("abc", tie2, -1), tie2[0]);
  /* The threshold grows with the word: max(2, len/3). */
  const char *const longw[] = {"tensor_parallel", NULL};
  ck_assert_str_eq(fs_did_you_mean("tensr_paralel_", longw, -1), "tensor_parallel"); /* distance 3, len 14 */
  ck_assert_ptr_null(fs_did_you_mean("ab", longw, -1));
  /* A very long word is compared quickly (lengths rule most candidates out). */
  g_autofree char *huge = g_strnfill(1000000, 'x');
  ck_assert_ptr_null(fs_did_you_mean(huge, keys, -1));
  const char *const empty[] = {NULL};
  ck_assert_ptr_null(fs_did_you_mean("x", empty, -1));
  ck_assert_ptr_null(fs_did_you_mean("x", NULL, -1));
}
END_TEST

START_TEST(test_strutil_escape_controls)
{
  struct {
    const char *in, *out;
  } cases[] = {
    {"", ""}, {"plain", "plain"}, {"a\nb", "a\\nb"}, {"\t\r", "\\t\\r"},
    {"x\x01y\x7f", "x\\x01y\\x7F"}, {"1.5 \xc2\xb5s", "1.5 \xc2\xb5s"}, {"back\\slash", "back\\slash"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *e = fs_escape_controls(cases[i].in);
    ck_assert_str_eq(e, cases[i].out);
  }
}
END_TEST

/* fs_split_lines gives what g_strsplit(text, "\n", -1) gives, in linear time. */
START_TEST(test_strutil_split_lines)
{
  static const char *const cases[] = {"", "\n", "a", "a\n", "\na", "a\nb", "a\n\nb\n",
                                      "\n\n", " x \r\n y", "tail\n\n"};
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_auto(GStrv) want = g_strsplit(cases[i], "\n", -1);
    g_auto(GStrv) got = fs_split_lines(cases[i]);
    ck_assert_uint_eq(g_strv_length(got), g_strv_length(want));
    for (guint k = 0; want[k] != NULL; k++)
      ck_assert_str_eq(got[k], want[k]);
  }
  /* 200,000 lines: quadratic would be 10^11 bytes scanned under ASan. */
  GString *big = g_string_new(NULL);
  for (guint k = 0; k < 200000; k++)
    g_string_append_printf(big, "line %u\n", k);
  g_auto(GStrv) lines = fs_split_lines(big->str);
  ck_assert_uint_eq(g_strv_length(lines), 200001);
  ck_assert_str_eq(lines[199999], "line 199999");
  ck_assert_str_eq(lines[200000], "");
  g_string_free(big, TRUE);
}
END_TEST

static char *read_all(const char *path)
{
  char *text = NULL;
  gsize len = 0;
  ck_assert(g_file_get_contents(path, &text, &len, NULL));
  return text;
}

START_TEST(test_strutil_atomic_write_creates_and_replaces)
{
  g_autofree char *dir = g_dir_make_tmp("fs-strutil-XXXXXX", NULL);
  ck_assert_ptr_nonnull(dir);
  g_autofree char *path = g_build_filename(dir, "out.json", NULL);
  GError *err = NULL;
  ck_assert(fs_write_file_atomic(path, "first\n", 6, &err));
  fs_assert_no_error(err);
  g_autofree char *a = read_all(path);
  ck_assert_str_eq(a, "first\n");
  ck_assert(fs_write_file_atomic(path, "second", 6, &err));
  g_autofree char *b = read_all(path);
  ck_assert_str_eq(b, "second");
  ck_assert(fs_write_file_atomic(path, "", 0, &err));
  g_autofree char *c = read_all(path);
  ck_assert_str_eq(c, "");
  /* The mode follows the umask like a plain open(O_CREAT, 0666). */
  struct stat st;
  ck_assert_int_eq(g_stat(path, &st), 0);
  mode_t mask = umask(0);
  umask(mask);
  ck_assert_int_eq(st.st_mode & 0777, 0666 & ~mask);
  /* No temporary files are left behind. */
  GDir *d = g_dir_open(dir, 0, NULL);
  int n = 0;
  while (g_dir_read_name(d) != NULL)
    n++;
  g_dir_close(d);
  ck_assert_int_eq(n, 1);
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

START_TEST(test_strutil_atomic_write_failure_keeps_target)
{
  GError *err = NULL;
  ck_assert(!fs_write_file_atomic("/nonexistent-dir-fs/x.txt", "x", 1, &err));
  ck_assert(err != NULL && err->domain == FS_RUNTIME_ERROR && err->code == FS_RUNTIME_ERROR_IO);
  fs_assert_error(err, FS_RUNTIME_ERROR, "/nonexistent-dir-fs/x.txt");
  /* A target that is a directory cannot be replaced; the directory survives. */
  g_autofree char *dir = g_dir_make_tmp("fs-strutil-XXXXXX", NULL);
  g_autofree char *sub = g_build_filename(dir, "sub", NULL);
  ck_assert_int_eq(g_mkdir(sub, 0755), 0);
  ck_assert(!fs_write_file_atomic(sub, "x", 1, &err));
  fs_assert_error(err, FS_RUNTIME_ERROR, "cannot write");
  ck_assert(g_file_test(sub, G_FILE_TEST_IS_DIR));
  GDir *d = g_dir_open(dir, 0, NULL);
  int n = 0;
  while (g_dir_read_name(d) != NULL)
    n++;
  g_dir_close(d);
  ck_assert_int_eq(n, 1); /* the temporary file was removed */
  g_rmdir(sub);
  g_rmdir(dir);
}
END_TEST

/* A stop request (SIGINT/SIGTERM) before or during an atomic write leaves
 * neither the target nor a temporary file (issue 21). */
START_TEST(test_strutil_atomic_write_interrupted)
{
  g_autofree char *dir = g_dir_make_tmp("fs-strutil-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "trace.json", NULL);
  GError *err = NULL;
  fs_interrupt_request();
  gboolean ok = fs_write_file_atomic(path, "x", 1, &err);
  fs_interrupt_clear();
  ck_assert(!ok);
  ck_assert(g_error_matches(err, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED));
  ck_assert_int_eq(fs_error_exit_status(err), 130);
  fs_assert_error(err, FS_RUNTIME_ERROR, "interrupted while writing ");
  GDir *d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_null(g_dir_read_name(d));
  g_dir_close(d);
  g_rmdir(dir);
}
END_TEST

/* The streaming form: the temporary file exists while the output is
 * written, nothing is at the target before commit, and a stop request
 * between two writes fails the next one; abort then leaves nothing. */
START_TEST(test_strutil_atomic_file_stream_interrupted)
{
  g_autofree char *dir = g_dir_make_tmp("fs-strutil-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "trace.json", NULL);
  GError *err = NULL;
  FsAtomicFile *f = fs_atomic_file_open(path, &err);
  ck_assert_ptr_nonnull(f);
  ck_assert(fs_atomic_file_write(f, "[1,", 3, &err));
  ck_assert(!g_file_test(path, G_FILE_TEST_EXISTS));
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *name = g_dir_read_name(d);
  ck_assert(name != NULL && g_str_has_prefix(name, "trace.json.tmp-"));
  g_dir_close(d);
  fs_interrupt_request();
  gboolean ok = fs_atomic_file_write(f, "2]", 2, &err);
  fs_interrupt_clear();
  ck_assert(!ok);
  ck_assert_int_eq(fs_error_exit_status(err), 130);
  fs_assert_error(err, FS_RUNTIME_ERROR, "interrupted while writing ");
  fs_atomic_file_abort(f);
  d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_null(g_dir_read_name(d));
  g_dir_close(d);
  /* Whole: open, two writes, commit gives the bytes in order. */
  f = fs_atomic_file_open(path, &err);
  ck_assert(fs_atomic_file_write(f, "[1,", 3, &err) && fs_atomic_file_write(f, "2]", 2, &err));
  ck_assert(fs_atomic_file_commit(f, &err));
  g_autofree char *got = NULL;
  ck_assert(g_file_get_contents(path, &got, NULL, NULL));
  ck_assert_str_eq(got, "[1,2]");
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

START_TEST(test_strutil_atomic_write_stdout)
{
  /* "-" goes to stdout: redirect fd 1 to a file for the check. */
  g_autofree char *dir = g_dir_make_tmp("fs-strutil-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "stdout.txt", NULL);
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  dup2(fileno(f), STDOUT_FILENO);
  GError *err = NULL;
  gboolean ok = fs_write_file_atomic("-", "hello\n", 6, &err);
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  fclose(f);
  ck_assert(ok);
  fs_assert_no_error(err);
  g_autofree char *text = read_all(path);
  ck_assert_str_eq(text, "hello\n");
  ck_assert(!g_file_test("-", G_FILE_TEST_EXISTS));
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

/* Name tables (util/names.h): exact and ASCII-case-insensitive lookups,
 * a count or a NULL entry ends the table, NULL names and out may be. */
START_TEST(test_names_index)
{
  static const char *const t[] = { "ring", "tree", "nvls", NULL, "hidden" };
  guint i = 99;
  ck_assert(fs_names_index(t, 3, "tree", &i));
  ck_assert_uint_eq(i, 1);
  ck_assert(!fs_names_index(t, 3, "Tree", &i));
  ck_assert_uint_eq(i, 1); /* untouched on a miss */
  ck_assert(fs_names_index_nocase(t, 3, "NVLS", &i));
  ck_assert_uint_eq(i, 2);
  ck_assert(!fs_names_index(t, 2, "nvls", NULL));          /* past n */
  ck_assert(!fs_names_index(t, G_MAXUINT, "hidden", NULL)); /* past the NULL */
  ck_assert(fs_names_index(t, G_MAXUINT, "ring", NULL));
  ck_assert(!fs_names_index(t, 3, NULL, &i));
  ck_assert(!fs_names_index_nocase(t, 3, "", &i));
}
END_TEST

/* Unsets every variable fs_datadir reads. */
static void datadir_clear_env(void)
{
  g_unsetenv("FABRICSIM_DATA");
  g_unsetenv("FABRICSIM_MODELS");
  g_unsetenv("FABRICSIM_WORKLOADS");
  g_unsetenv("FABRICSIM_VALIDATION");
}

START_TEST(test_datadir_folders)
{
  datadir_clear_env();
  /* A test executable has no installed copy beside it: the source tree. */
  ck_assert_str_eq(fs_datadir_root(), FS_SOURCE_DATA_DIR);
  ck_assert_str_eq(fs_datadir(FS_DATA_MODELS), FS_SOURCE_DATA_DIR "/models");
  ck_assert_str_eq(fs_datadir(FS_DATA_TOPOLOGIES), FS_SOURCE_DATA_DIR "/topologies");
  ck_assert_str_eq(fs_datadir(FS_DATA_WORKLOADS), FS_SOURCE_DATA_DIR "/workloads");
  ck_assert_str_eq(fs_datadir(FS_DATA_VALIDATION), FS_SOURCE_DATA_DIR "/validation/reference");
  /* $FABRICSIM_DATA moves every kind; a kind's own variable moves it alone. */
  g_setenv("FABRICSIM_DATA", "/opt/fs", TRUE);
  g_setenv("FABRICSIM_WORKLOADS", "/w", TRUE);
  ck_assert_str_eq(fs_datadir_root(), "/opt/fs");
  ck_assert_str_eq(fs_datadir(FS_DATA_MODELS), "/opt/fs/models");
  ck_assert_str_eq(fs_datadir(FS_DATA_VALIDATION), "/opt/fs/validation/reference");
  ck_assert_str_eq(fs_datadir(FS_DATA_WORKLOADS), "/w");
  /* The one reader of the older variables: the catalog's, the presets'
   * and the references' folders are these. */
  g_setenv("FABRICSIM_MODELS", "/m", TRUE);
  ck_assert_str_eq(fs_datadir(FS_DATA_MODELS), "/m");
  g_setenv("FABRICSIM_VALIDATION", "", TRUE); /* empty: unset */
  ck_assert_str_eq(fs_datadir(FS_DATA_VALIDATION), "/opt/fs/validation/reference");
  datadir_clear_env();
}
END_TEST

START_TEST(test_datadir_find)
{
  datadir_clear_env();
  g_autofree char *here = g_get_current_dir();
  g_autofree char *tmp = g_dir_make_tmp("fs-datadir-XXXXXX", NULL);
  ck_assert_ptr_nonnull(tmp);
  ck_assert_int_eq(g_chdir(tmp), 0);
  const char *want = FS_SOURCE_DATA_DIR "/topologies/dgx-h100.yaml";
  /* From a folder without the file: the shipped one, written as the
   * examples write it, by file name or by bare name. */
  static const char *const names[] = {"topologies/dgx-h100.yaml", "dgx-h100.yaml", "dgx-h100"};
  for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autofree char *p = fs_datadir_find(FS_DATA_TOPOLOGIES, names[i]);
    ck_assert_str_eq(p, want);
  }
  g_autofree char *w = fs_datadir_find(FS_DATA_WORKLOADS, "workloads/traces/pipeline-2stage.json");
  ck_assert_str_eq(w, FS_SOURCE_DATA_DIR "/workloads/traces/pipeline-2stage.json");
  g_autofree char *l = fs_datadir_find(FS_DATA_WORKLOADS, "llama2-7b");
  ck_assert_str_eq(l, FS_SOURCE_DATA_DIR "/workloads/llama2-7b.yaml");
  /* Not shipped: the name as given, for the caller's error message.  A
   * topology is not a workload. */
  g_autofree char *m = fs_datadir_find(FS_DATA_TOPOLOGIES, "no-such-machine");
  ck_assert_str_eq(m, "no-such-machine");
  g_autofree char *k = fs_datadir_find(FS_DATA_WORKLOADS, "dgx-h100");
  ck_assert_str_eq(k, "dgx-h100");
  /* A file in the working folder wins over the shipped one. */
  ck_assert(g_file_set_contents("dgx-h100.yaml", "mine", -1, NULL));
  g_autofree char *own = fs_datadir_find(FS_DATA_TOPOLOGIES, "dgx-h100.yaml");
  ck_assert_str_eq(own, "dgx-h100.yaml");
  /* $FABRICSIM_DATA is where names are looked up. */
  g_setenv("FABRICSIM_DATA", tmp, TRUE);
  g_autofree char *gone = fs_datadir_find(FS_DATA_TOPOLOGIES, "dgx-h100");
  ck_assert_str_eq(gone, "dgx-h100");
  datadir_clear_env();
  g_remove("dgx-h100.yaml");
  ck_assert_int_eq(g_chdir(here), 0);
  g_rmdir(tmp);
}
END_TEST

START_TEST(test_datadir_resolve)
{
  /* A path as the examples write it, from a folder without it: the data
   * root's file or folder of that path; else the name as given; a file in
   * the working folder wins. */
  datadir_clear_env();
  g_autofree char *here = g_get_current_dir();
  g_autofree char *tmp = g_dir_make_tmp("fs-resolve-XXXXXX", NULL);
  ck_assert_int_eq(g_chdir(tmp), 0);
  g_autofree char *cal = fs_datadir_resolve("validation/results/h100-2026-11-23.json");
  ck_assert_str_eq(cal, FS_SOURCE_DATA_DIR "/validation/results/h100-2026-11-23.json");
  g_autofree char *dir = fs_datadir_resolve("tests/data/chakra/all_reduce_8r_1MiB");
  ck_assert_str_eq(dir, FS_SOURCE_DATA_DIR "/tests/data/chakra/all_reduce_8r_1MiB");
  g_autofree char *none = fs_datadir_resolve("run1.log");
  ck_assert_str_eq(none, "run1.log");
  ck_assert(g_file_set_contents("run1.log", "mine", -1, NULL));
  g_autofree char *own = fs_datadir_resolve("run1.log");
  ck_assert_str_eq(own, "run1.log");
  g_remove("run1.log");
  ck_assert_int_eq(g_chdir(here), 0);
  g_rmdir(tmp);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("strutil");
  FS_ADD_TEST(s, test_strutil_edit_distance);
  FS_ADD_TEST(s, test_datadir_folders);
  FS_ADD_TEST(s, test_datadir_find);
  FS_ADD_TEST(s, test_datadir_resolve);
  FS_ADD_TEST(s, test_strutil_did_you_mean);
  FS_ADD_TEST(s, test_strutil_escape_controls);
  FS_ADD_TEST(s, test_strutil_split_lines);
  FS_ADD_TEST(s, test_strutil_atomic_write_creates_and_replaces);
  FS_ADD_TEST(s, test_strutil_atomic_write_failure_keeps_target);
  FS_ADD_TEST(s, test_strutil_atomic_write_stdout);
  FS_ADD_TEST(s, test_strutil_atomic_write_interrupted);
  FS_ADD_TEST(s, test_strutil_atomic_file_stream_interrupted);
  FS_ADD_TEST(s, test_names_index);
  FS_ADD_TEST(s, test_env_limit);
  return fs_test_run_suite(s);
}
