/* limits.c — resource limits from the environment (see limits.h). */
#include "util/limits.h"

guint64 fs_env_limit(const char *var, guint64 fallback, guint64 ceiling)
{
  const char *s = g_getenv(var);
  if (s == NULL || *s == '\0')
    return fallback;
  guint64 v;
  if (!g_ascii_string_to_unsigned(s, 10, 1, ceiling, &v, NULL)) {
    g_printerr("fabricsim: ignoring %s=\"%s\": expected an integer from 1 to %" G_GUINT64_FORMAT
               "\n", var, s, ceiling);
    return fallback;
  }
  return v;
}

guint64 fs_limit_file_bytes(void)
{
  return fs_env_limit("FABRICSIM_MAX_FILE_BYTES", FS_MAX_FILE_BYTES, (guint64)1 << 40);
}

char *fs_limit_bytes_text(guint64 bytes)
{
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
    return g_strdup_printf("%" G_GUINT64_FORMAT " MiB", bytes >> 20);
  return g_strdup_printf("%" G_GUINT64_FORMAT " bytes", bytes);
}
