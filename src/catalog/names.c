/* names.c — names of the catalog's enums, generated from the X-macro lists
 * in catalog.h so that the enum, its YAML spelling and its JSON spelling
 * cannot drift apart.  Lookups are linear over a handful of names. */
#include "catalog/names.h"

#include "util/names.h"

const char *const fs_model_kind_names[FS_MODEL_N_KINDS + 1] = {FS_MODEL_KINDS(FS_NAMES_ENTRY) NULL};
const char *const fs_link_family_names[FS_LINK_N_FAMILIES + 1] = {FS_LINK_FAMILIES(FS_NAMES_ENTRY) NULL};
const char *const fs_switch_kind_names[FS_SWITCH_N_KINDS + 1] = {FS_SWITCH_KINDS(FS_NAMES_ENTRY) NULL};
const char *const fs_gpu_arch_names[FS_ARCH_N + 1] = {FS_GPU_ARCHS(FS_NAMES_ENTRY) NULL};
const char *const fs_dtype_names[FS_DTYPE_N + 1] = {FS_DTYPES(FS_NAMES_ENTRY) NULL};
const char *const fs_cpu_vendor_names[FS_VENDOR_N + 1] = {FS_CPU_VENDORS(FS_NAMES_ENTRY) NULL};

/* Forward lookups assert on an out-of-range value (a programmer error,
 * never an input error); lookups by name are exact. */
FS_NAMES_DEFINE(FsModelKind, fs_model_kind, fs_model_kind_names, FS_MODEL_N_KINDS, fs_names_index)
FS_NAMES_DEFINE(FsLinkFamily, fs_link_family, fs_link_family_names, FS_LINK_N_FAMILIES,
                fs_names_index)
FS_NAMES_DEFINE(FsSwitchKind, fs_switch_kind, fs_switch_kind_names, FS_SWITCH_N_KINDS,
                fs_names_index)
FS_NAMES_DEFINE(FsGpuArch, fs_gpu_arch, fs_gpu_arch_names, FS_ARCH_N, fs_names_index)
FS_NAMES_DEFINE(FsDtype, fs_dtype, fs_dtype_names, FS_DTYPE_N, fs_names_index)
FS_NAMES_DEFINE(FsCpuVendor, fs_cpu_vendor, fs_cpu_vendor_names, FS_VENDOR_N, fs_names_index)
