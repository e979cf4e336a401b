/* names.c — see names.h. */
#include "util/names.h"

#include <string.h>

/* The one loop behind both lookups. */
static gboolean names_index(const char *const *names, guint n, const char *name, gboolean nocase,
                            guint *out)
{
  if (name == NULL)
    return FALSE;
  for (guint i = 0; i < n && names[i] != NULL; i++)
    if ((nocase ? g_ascii_strcasecmp(name, names[i]) : strcmp(name, names[i])) == 0) {
      if (out != NULL)
        *out = i;
      return TRUE;
    }
  return FALSE;
}

gboolean fs_names_index(const char *const *names, guint n, const char *name, guint *out)
{
  return names_index(names, n, name, FALSE, out);
}

gboolean fs_names_index_nocase(const char *const *names, guint n, const char *name, guint *out)
{
  return names_index(names, n, name, TRUE, out);
}
