/* output.h — a sweep's results as CSV or JSON, streamed in point order.
 *
 * Rows reach the writer in any order; it buffers those that run ahead and
 * writes each point as soon as every earlier one is written, so the file
 * is the same whatever the threads' timing.  While running, rows stream to
 * OUT.partial (flushed per row); when the last point is in, the whole file
 * is written to OUT atomically (fs_write_file_atomic) and OUT.partial is
 * removed.  With resume, the rows of OUT.partial (or of OUT) that match
 * the spec's points 0, 1, … are kept and those points are not run again;
 * a file made by another spec (header or a row's parameters differ) is
 * refused with FS_SWEEP_ERROR_RESUME.
 *
 * Formats (schemas in README.md, "Output"): CSV with a header line
 * `point,<axes…>,status,<kind's columns…>,error`; JSON
 * `{"schema_version": 1, "sweep", "kind", "points_total", "columns",
 * "points": [ {"point", "params", "status", "results", "error"}, … ]}`
 * with one point per line.  A NULL path writes to stdout (no resume).
 */
#pragma once

#include <stdio.h>

#include "sweep/sweep.h"

G_BEGIN_DECLS

#define FS_SWEEP_SCHEMA_VERSION 1

typedef enum { FS_SWEEP_CSV, FS_SWEEP_JSON } FsSweepFormat;

typedef struct FsSweepWriter FsSweepWriter;

FsSweepWriter *fs_sweep_writer_open(const FsSweepSpec *s, const char *path, FsSweepFormat fmt,
                                    gboolean resume, GError **error);
/* Points 0 … done-1 are finished (kept from a resumed file or written). */
guint fs_sweep_writer_done(const FsSweepWriter *w);

/* The error of a sweep interrupted after kept of total points: with out
 * (the -o file), how to resume; without, that -o makes it resumable.
 * FS_RUNTIME_ERROR_INTERRUPTED; caller frees. */
GError *fs_sweep_interrupted_error(guint kept, guint total, const char *out);
/* Takes r's contents (r is cleared).  Errors: FS_RUNTIME_ERROR_IO. */
gboolean fs_sweep_writer_add(FsSweepWriter *w, FsSweepResult *r, GError **error);
/* After every point: the final file.  FS_RUNTIME_ERROR_IO on failure. */
gboolean fs_sweep_writer_finish(FsSweepWriter *w, GError **error);
void fs_sweep_writer_free(FsSweepWriter *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsSweepWriter, fs_sweep_writer_free)

/* One row (no newline) of result r in fmt; the JSON row has no trailing
 * comma.  Newly allocated. */
char *fs_sweep_format_row(const FsSweepSpec *s, FsSweepFormat fmt, const FsSweepResult *r);
char *fs_sweep_format_header(const FsSweepSpec *s, FsSweepFormat fmt);

G_END_DECLS
