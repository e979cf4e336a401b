/* catalog-json.h — models as JSON (jansson), for `fabricsim models --json`
 * and for reports that embed the hardware they ran on.
 *
 * Schema (stable; keys in this order): name, kind, description, source,
 * file, line, then the kind's fields.  Units are SI base units: bandwidths
 * in bytes/s per direction, lane rates in bits/s, times in picoseconds
 * (integers), sizes in bytes, power in watts, FLOP/s, prices in US
 * dollars.  References to other models are their names (null when
 * absent).  Documented in models/README.md.
 */
#pragma once

#include <jansson.h>

#include "catalog/catalog.h"

G_BEGIN_DECLS

/* A new JSON object describing m (caller owns the reference). */
json_t *fs_model_to_json(const FsModel *m);

/* A new JSON array of every model in name order, or only those of one
 * kind (kind < 0: all). */
json_t *fs_catalog_to_json(const FsCatalog *cat, int kind);

G_END_DECLS
