/* format.h — the output formats every report writer knows. */
#pragma once

typedef enum {
  FS_REPORT_TEXT,  /* for people: aligned columns, units */
  FS_REPORT_JSON,  /* one document, schema_version first */
  FS_REPORT_CSV,   /* a header line, then one line per row */
} FsReportFormat;
