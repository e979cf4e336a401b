/* schedule.h — `fabricsim explain schedule`: the pipeline schedules of the
 * schedule table (workload/schedule.h) drawn as timelines, one row per
 * stage, with the bubble measured on the drawing and the textbook formula
 * (p-1)/(v·m+p-1); as text, CSV (every pass) and SVG.  Deterministic.
 */
#pragma once

#include <glib.h>

#include "workload/schedule.h"

G_BEGIN_DECLS

/* Appends the timelines of schedule only (NULL: every schedule) for p
 * stages, m micro-batches and V chunks per stage (interleaved), as text or,
 * with csv, one line per pass; with svg_path also writes the SVG there
 * (atomic).  FALSE with the write error (nothing appended then). */
gboolean fs_report_schedules(GString *out, const FsSchedule *only, guint p, guint m, guint V,
                             gboolean csv, const char *svg_path, GError **error);

G_END_DECLS
