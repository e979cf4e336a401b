/* nccl-releases.c — which NCCL release a file of models/nccl/ describes:
 * release names ("2.28", "2.28.9-1", "v2.28", a version code like 22809),
 * the releases shipped (one `nccl-X.Y.yaml` each, plus the default file's
 * own), and the file for a release.  See nccl-params.h; the files and their
 * sources are in models/nccl/README.md. */
#include "coll/nccl-params.h"

#include <stdio.h>
#include <string.h>

#include "coll/comm.h"

/* "X.Y" of "X.Y", "X.Y.Z", "X.Y.Z-1" or "vX.Y…"; NULL when not one. */
static char *release_of(const char *v)
{
  if (v[0] == 'v')
    v++;
  guint a, b;
  int used = 0;
  if (sscanf(v, "%u.%u%n", &a, &b, &used) != 2 || a > 99 || b > 99 ||
      (v[used] != '\0' && v[used] != '.' && v[used] != '-' && v[used] != '+'))
    return NULL;
  return g_strdup_printf("%u.%u", a, b);
}

char *fs_nccl_params_release_of_code(guint code)
{
  if (code == 0)
    return NULL;
  /* NCCL_VERSION_CODE: X*10000 + Y*100 + Z from 2.9, X*1000 + Y*100 + Z before. */
  if (code >= 20900)
    return g_strdup_printf("%u.%u", code / 10000, code / 100 % 100);
  return g_strdup_printf("%u.%u", code / 1000, code / 100 % 10);
}

static int release_cmp(const void *a, const void *b)
{
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  guint xa = 0, xb = 0, ya = 0, yb = 0;
  sscanf(x, "%u.%u", &xa, &xb);
  sscanf(y, "%u.%u", &ya, &yb);
  return xa != ya ? (xa < ya ? -1 : 1) : xb != yb ? (xb < yb ? -1 : 1) : 0;
}

/* The default file's release, read from its nccl_version (NULL on error). */
static char *default_release(const char *path)
{
  g_autoptr(GError) e = NULL;
  g_autoptr(FsNcclParams) p = fs_nccl_params_load(path, &e);
  return p != NULL ? release_of(p->version) : NULL;
}

char **fs_nccl_params_known_versions(void)
{
  g_autofree char *def = fs_nccl_params_default_path();
  g_autofree char *dir = g_path_get_dirname(def);
  GPtrArray *out = g_ptr_array_new();
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  for (const char *name; d != NULL && (name = g_dir_read_name(d)) != NULL;) {
    if (!g_str_has_prefix(name, "nccl-") || !g_str_has_suffix(name, ".yaml"))
      continue;
    g_autofree char *mid = g_strndup(name + 5, strlen(name) - 5 - 5);
    char *r = release_of(mid);
    if (r != NULL && strcmp(r, mid) == 0)
      g_ptr_array_add(out, r);
    else
      g_free(r);
  }
  char *dr = default_release(def);
  if (dr != NULL && !g_ptr_array_find_with_equal_func(out, dr, g_str_equal, NULL))
    g_ptr_array_add(out, dr);
  else
    g_free(dr);
  g_ptr_array_sort(out, release_cmp);
  g_ptr_array_add(out, NULL);
  return (char **)g_ptr_array_free(out, FALSE);
}

char *fs_nccl_params_version_path(const char *version, const char *what, GError **error)
{
  g_return_val_if_fail(version != NULL && what != NULL, NULL);
  g_autofree char *rel = NULL;
  if (version[0] != '\0' && version[strspn(version, "0123456789")] == '\0') {
    guint64 code = g_ascii_strtoull(version, NULL, 10);
    rel = code > 0 && code < 1000000 ? fs_nccl_params_release_of_code((guint)code) : NULL;
  } else {
    rel = release_of(version);
  }
  g_autofree char *def = fs_nccl_params_default_path();
  g_autofree char *dir = g_path_get_dirname(def);
  if (rel != NULL) {
    g_autofree char *name = g_strdup_printf("nccl-%s.yaml", rel);
    char *path = g_build_filename(dir, name, NULL);
    if (g_file_test(path, G_FILE_TEST_EXISTS))
      return path;
    g_free(path);
    g_autofree char *dr = default_release(def);
    if (dr != NULL && strcmp(dr, rel) == 0)
      return g_steal_pointer(&def);
  }
  g_auto(GStrv) known = fs_nccl_params_known_versions();
  g_autofree char *list = g_strjoinv(", ", known);
  g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE,
              "%s \"%s\": %s; known releases (%s): %s", what, version,
              rel == NULL ? "not an NCCL version (expected X.Y, X.Y.Z or a version code like 22105)"
                          : "no parameter file for this release",
              dir, known[0] != NULL ? list : "none");
  return NULL;
}

FsNcclParams *fs_nccl_params_load_version(const char *version, const char *what, GError **error)
{
  g_autofree char *path = fs_nccl_params_version_path(version, what, error);
  return path != NULL ? fs_nccl_params_load(path, error) : NULL;
}
