/* names.h — the catalog's enum name tables, private to src/catalog.
 *
 * Each table is generated from the X-macro list in catalog.h, indexed by
 * the enum value and NULL-terminated, so that a loader can offer
 * "did you mean" over the same strings the printers use.
 */
#pragma once

#include "catalog/catalog.h"

extern const char *const fs_model_kind_names[FS_MODEL_N_KINDS + 1];
extern const char *const fs_link_family_names[FS_LINK_N_FAMILIES + 1];
extern const char *const fs_switch_kind_names[FS_SWITCH_N_KINDS + 1];
extern const char *const fs_gpu_arch_names[FS_ARCH_N + 1];
extern const char *const fs_dtype_names[FS_DTYPE_N + 1];
extern const char *const fs_cpu_vendor_names[FS_VENDOR_N + 1];
