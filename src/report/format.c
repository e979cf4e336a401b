/* format.c — what every report writer shares (format.h). */
#include "report/format.h"

#include <stdlib.h>

void fs_report_append_json(GString *out, json_t *doc, size_t flags)
{
  char *s = json_dumps(doc, flags);
  g_string_append_printf(out, "%s\n", s);
  free(s);
  json_decref(doc);
}
