/* models.h — the outputs of `fabricsim models`: the catalog, one model per
 * line with its key figures, or one model with every field, its source and
 * the arithmetic of its derived bandwidths; as text or JSON (schema in
 * models/README.md).  With a calibration, the figures it changed first.
 */
#pragma once

#include <glib.h>

#include "calib/calibration.h"
#include "catalog/catalog.h"

G_BEGIN_DECLS

/* One model (cal may be NULL). */
void fs_report_model(GString *out, const FsModel *m, const FsCalibration *cal, gboolean json);
/* Every model of kind (-1: every kind), sorted by name (cal may be NULL). */
void fs_report_catalog(GString *out, const FsCatalog *cat, int kind, const FsCalibration *cal,
                       gboolean json);

G_END_DECLS
