/* error.c — see error.h. */
#include "util/error.h"

#include <string.h>

G_DEFINE_QUARK(fs-runtime-error-quark, fs_runtime_error)

int fs_error_exit_status(const GError *error)
{
  if (error != NULL && error->domain == FS_RUNTIME_ERROR)
    return error->code == FS_RUNTIME_ERROR_INTERRUPTED ? FS_EXIT_INTERRUPTED : 1;
  return 2;
}

static char *location_string(const char *file, int line, int col)
{
  if (line <= 0)
    return g_strdup_printf("%s", file ? file : "<input>");
  if (col <= 0)
    return g_strdup_printf("%s:%d", file ? file : "<input>", line);
  return g_strdup_printf("%s:%d:%d", file ? file : "<input>", line, col);
}

/* Writes control characters (a newline inside a quoted YAML string, a tab,
 * a stray byte) as C escapes, so that a message is always one line. */
static char *one_line(char *msg)
{
  const char *p = msg;
  while (*p != '\0' && !g_ascii_iscntrl(*p))
    p++;
  if (*p == '\0')
    return msg;
  GString *s = g_string_sized_new(strlen(msg) + 8);
  for (p = msg; *p != '\0'; p++) {
    if (*p == '\n')
      g_string_append(s, "\\n");
    else if (*p == '\r')
      g_string_append(s, "\\r");
    else if (*p == '\t')
      g_string_append(s, "\\t");
    else if (g_ascii_iscntrl(*p))
      g_string_append_printf(s, "\\x%02X", (guchar)*p);
    else
      g_string_append_c(s, *p);
  }
  g_free(msg);
  return g_string_free(s, FALSE);
}

void fs_set_error_at_va(GError **error, GQuark domain, int code, const char *file, int line,
                        int col, const char *format, va_list ap)
{
  if (error == NULL)
    return;
  g_autofree char *msg = one_line(g_strdup_vprintf(format, ap));
  g_autofree char *loc = location_string(file, line, col);
  g_set_error(error, domain, code, "%s: %s", loc, msg);
}

void fs_set_error_va(GError **error, GQuark domain, int code, const char *format, va_list ap)
{
  if (error == NULL)
    return;
  g_autofree char *msg = one_line(g_strdup_vprintf(format, ap));
  g_set_error_literal(error, domain, code, msg);
}

void fs_set_error_at(GError **error, GQuark domain, int code, const char *file,
                     int line, int col, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  fs_set_error_at_va(error, domain, code, file, line, col, format, ap);
  va_end(ap);
}

void fs_error_prefix_at(GError *error, const char *file, int line, int col)
{
  g_return_if_fail(error != NULL);
  g_autofree char *loc = location_string(file, line, col);
  char *msg = g_strdup_printf("%s: %s", loc, error->message);
  g_free(error->message);
  error->message = one_line(msg);
}
