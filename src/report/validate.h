/* validate.h — the output of `fabricsim validate` (calib/validate.h): per
 * reference table its rows (predicted, measured, error) and MAPE against
 * the table's bar, then a summary; or one JSON document.  Tables are added
 * as they run; the text or JSON is produced at the end, so nothing is
 * printed when a later table fails to load.
 */
#pragma once

#include <glib.h>

#include "calib/validate.h"
#include "report/format.h"
#include "scenario/scenario.h"
#include "scenario/train-ref.h"

G_BEGIN_DECLS

typedef struct FsValReport FsValReport;

/* A report; calibration (borrowed, copied) is the --calibration file, or
 * NULL; sc the scenario the tables run in: when the environment set NCCL_*
 * variables it applies (fs_scenario_env_text), the report starts with a
 * note naming them, since the tables were measured without them. */
FsValReport *fs_report_validate_new(const char *calibration, const FsScenario *sc);
/* Adds one table's result (bar metric: its name in the text). */
void fs_report_validate_add(FsValReport *v, const FsValResult *r, const char *metric);
/* Adds a line of text after the tables added so far (in JSON: the
 * "notes" array, absent when empty), e.g. the training tables' fitted factors. */
void fs_report_validate_note(FsValReport *v, const char *line);
/* Adds the training tables (scenario/train-ref.h): each as a table listing
 * every row (name, family, set, raw and calibrated prediction, measured,
 * error) with its test-set MAPE against its bar, its in-sample and raw
 * errors; then the one fitted step-time factor, the test-set MAPE over all
 * tables and the test rows' bias and MAPE per model family and per GPU
 * generation (notes).  In JSON each row also carries name, family, raw. */
void fs_report_validate_training(FsValReport *v, const FsTrainRef *ref);
/* Appends the report (text or JSON) and returns the number of tables that
 * missed their bar, not counting known gaps (tables with a `gap:` line,
 * reported as KNOWN GAP and counted in the summary's known gaps). */
guint fs_report_validate_finish(FsValReport *v, GString *out, FsReportFormat fmt);
void fs_report_validate_free(FsValReport *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsValReport, fs_report_validate_free)

G_END_DECLS
