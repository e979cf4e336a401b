/* fuzz-replay.c — runs a fuzz driver over files, without libFuzzer.
 *
 *   replay-<driver> [--max-seconds S] PATH...
 *
 * Each PATH is a file or a folder (its regular files, sorted by name, not
 * recursive).  Every file is read whole and passed once to the driver's
 * LLVMFuzzerTestOneInput.  A driver that finds a broken promise aborts, so
 * the exit status is non-zero on any regression; an input that takes longer
 * than S seconds (default 10) is reported and fails the run too.  This is
 * how the corpora (tests/data/<format>/) and saved crashers replay as the
 * meson suite fuzz-replay under any compiler.
 */
#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"

/* libFuzzer calls this once before the first input when a driver defines it. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static gint compare_names(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the files at path (a file, or the regular files in a folder). */
static gboolean collect(const char *path, GPtrArray *files)
{
  if (!g_file_test(path, G_FILE_TEST_IS_DIR)) {
    g_ptr_array_add(files, g_strdup(path));
    return TRUE;
  }
  GError *error = NULL;
  GDir *dir = g_dir_open(path, 0, &error);
  if (dir == NULL) {
    fprintf(stderr, "replay: %s\n", error->message);
    g_error_free(error);
    return FALSE;
  }
  GPtrArray *here = g_ptr_array_new();
  const char *name;
  while ((name = g_dir_read_name(dir)) != NULL) {
    char *full = g_build_filename(path, name, NULL);
    if (g_file_test(full, G_FILE_TEST_IS_REGULAR))
      g_ptr_array_add(here, full);
    else
      g_free(full);
  }
  g_dir_close(dir);
  g_ptr_array_sort(here, compare_names);
  for (guint i = 0; i < here->len; i++)
    g_ptr_array_add(files, here->pdata[i]);
  g_ptr_array_free(here, TRUE);
  return TRUE;
}

int main(int argc, char **argv)
{
  double max_seconds = 10;
  int first = 1;
  if (argc > 2 && strcmp(argv[1], "--max-seconds") == 0) {
    max_seconds = g_ascii_strtod(argv[2], NULL);
    first = 3;
  }
  if (first >= argc) {
    fprintf(stderr, "usage: %s [--max-seconds S] PATH...\n", argv[0]);
    return 2;
  }
  if (LLVMFuzzerInitialize != NULL)
    LLVMFuzzerInitialize(&argc, &argv);
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  for (int i = first; i < argc; i++)
    if (!collect(argv[i], files))
      return 1;
  int slow = 0;
  for (guint i = 0; i < files->len; i++) {
    const char *path = files->pdata[i];
    char *data;
    gsize len;
    GError *error = NULL;
    if (!g_file_get_contents(path, &data, &len, &error)) {
      fprintf(stderr, "replay: %s\n", error->message);
      g_error_free(error);
      return 1;
    }
    /* The driver must not read past len: hand it a copy without a NUL. */
    uint8_t *copy = g_malloc(len > 0 ? len : 1);
    memcpy(copy, data, len);
    g_free(data);
    gint64 start = g_get_monotonic_time();
    LLVMFuzzerTestOneInput(copy, len);
    double seconds = (double)(g_get_monotonic_time() - start) / 1e6;
    g_free(copy);
    if (seconds > max_seconds) {
      fprintf(stderr, "replay: %s took %.1f s (limit %.0f s)\n", path, seconds, max_seconds);
      slow++;
    }
  }
  printf("replayed %u inputs%s\n", files->len, slow ? ", some too slow" : "");
  g_ptr_array_free(files, TRUE);
  return slow ? 1 : 0;
}
