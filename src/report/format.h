/* format.h — the output formats every report writer knows. */
#pragma once

typedef enum {
  FS_REPORT_TEXT,  /* for people: aligned columns, units */
  FS_REPORT_JSON,  /* one document, schema_version first */
  FS_REPORT_CSV,   /* a header line, then one line per row */
} FsReportFormat;

#include <glib.h>
#include <jansson.h>

/* Appends json_dumps(doc, flags) and a newline to out, and releases doc
 * (the reference is taken).  The one way every report writes a JSON
 * document. */
void fs_report_append_json(GString *out, json_t *doc, size_t flags);
