/* datadir.c — the data root and the folders of the shipped data (see
 * datadir.h).  The build compiles in three places: FS_SOURCE_DATA_DIR (the
 * source tree), FS_INSTALLED_DATA_DIR (<prefix>/<datadir>/fabricsim) and
 * FS_DATA_FROM_BINDIR (the same folder relative to <prefix>/<bindir>, empty
 * when bindir is absolute). */
#include "util/datadir.h"

#include <string.h>

/* Each kind's folder under the root and the variable that replaces it. */
static const struct {
  const char *folder;
  const char *env;
} kinds[] = {
    [FS_DATA_MODELS] = {"models", "FABRICSIM_MODELS"},
    [FS_DATA_TOPOLOGIES] = {"topologies", NULL},
    [FS_DATA_WORKLOADS] = {"workloads", "FABRICSIM_WORKLOADS"},
    [FS_DATA_VALIDATION] = {"validation/reference", "FABRICSIM_VALIDATION"},
};

/* A data root is a folder with a models/ folder in it. */
static gboolean is_root(const char *dir)
{
  g_autofree char *models = g_build_filename(dir, "models", NULL);
  return g_file_test(models, G_FILE_TEST_IS_DIR);
}

/* The root when $FABRICSIM_DATA is unset: beside the binary, the source
 * tree, the compiled-in prefix (interned; run once). */
static gpointer find_root(gpointer unused)
{
  (void)unused;
  if (FS_DATA_FROM_BINDIR[0] != '\0') {
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (exe != NULL) {
      g_autofree char *bindir = g_path_get_dirname(exe);
      g_autofree char *rel = g_build_filename(bindir, FS_DATA_FROM_BINDIR, NULL);
      g_autofree char *dir = g_canonicalize_filename(rel, NULL);
      if (is_root(dir))
        return (gpointer)g_intern_string(dir);
    }
  }
  if (is_root(FS_SOURCE_DATA_DIR))
    return (gpointer)g_intern_static_string(FS_SOURCE_DATA_DIR);
  return (gpointer)g_intern_static_string(FS_INSTALLED_DATA_DIR);
}

const char *fs_datadir_root(void)
{
  const char *env = g_getenv("FABRICSIM_DATA");
  if (env != NULL && env[0] != '\0')
    return g_intern_string(env);
  static GOnce once = G_ONCE_INIT;
  return g_once(&once, find_root, NULL);
}

const char *fs_datadir(FsDataKind kind)
{
  g_return_val_if_fail((guint)kind < G_N_ELEMENTS(kinds), NULL);
  const char *env = kinds[kind].env != NULL ? g_getenv(kinds[kind].env) : NULL;
  if (env != NULL && env[0] != '\0')
    return g_intern_string(env);
  g_autofree char *dir = g_build_filename(fs_datadir_root(), kinds[kind].folder, NULL);
  return g_intern_string(dir);
}

char *fs_datadir_resolve(const char *name)
{
  g_return_val_if_fail(name != NULL, NULL);
  if (name[0] == '\0' || g_path_is_absolute(name) || g_file_test(name, G_FILE_TEST_EXISTS))
    return g_strdup(name);
  g_autofree char *in_root = g_build_filename(fs_datadir_root(), name, NULL);
  return g_file_test(in_root, G_FILE_TEST_EXISTS) ? g_steal_pointer(&in_root) : g_strdup(name);
}

char *fs_datadir_find(FsDataKind kind, const char *name)
{
  g_return_val_if_fail((guint)kind < G_N_ELEMENTS(kinds) && name != NULL, NULL);
  if (name[0] == '\0' || g_path_is_absolute(name) || g_file_test(name, G_FILE_TEST_EXISTS))
    return g_strdup(name);
  /* "topologies/x.yaml" as the examples write it: the part after the folder. */
  const char *rest = name;
  const char *folder = kinds[kind].folder;
  gsize n = strlen(folder);
  if (strncmp(rest, folder, n) == 0 && rest[n] == '/')
    rest += n + 1;
  const char *dir = fs_datadir(kind);
  g_autofree char *plain = g_build_filename(dir, rest, NULL);
  if (g_file_test(plain, G_FILE_TEST_IS_REGULAR))
    return g_steal_pointer(&plain);
  g_autofree char *yaml = g_strconcat(plain, ".yaml", NULL);
  if (g_file_test(yaml, G_FILE_TEST_IS_REGULAR))
    return g_steal_pointer(&yaml);
  return g_strdup(name);
}
