/* plan.h — the outputs of `fabricsim plan` (plan/plan.h): the ranked
 * designs with their systems, cost, energy and the reason each wins, as
 * text, JSON or CSV (schemas in README.md, "Output"), and the one-line
 * reason when no design meets the target.  Deterministic.
 */
#pragma once

#include <glib.h>

#include "plan/plan.h"
#include "report/format.h"

G_BEGIN_DECLS

/* The first top designs (0: all) of a finished plan. */
void fs_report_plan(GString *out, FsReportFormat fmt, const FsPlanner *p, guint top);

/* Why nothing was simulated, or nothing met the target: one sentence,
 * without a newline (the command prints it on stderr). */
void fs_report_plan_failure(GString *out, const FsPlanner *p);

G_END_DECLS
