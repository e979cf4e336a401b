/* names.c — names of the catalog's enums, generated from the X-macro lists
 * in catalog.h so that the enum, its YAML spelling and its JSON spelling
 * cannot drift apart.  Lookups are linear over a handful of names. */
#include "catalog/names.h"

#include <string.h>

#define X(id, str) str,
const char *const fs_model_kind_names[FS_MODEL_N_KINDS + 1] = {FS_MODEL_KINDS(X) NULL};
const char *const fs_link_family_names[FS_LINK_N_FAMILIES + 1] = {FS_LINK_FAMILIES(X) NULL};
const char *const fs_switch_kind_names[FS_SWITCH_N_KINDS + 1] = {FS_SWITCH_KINDS(X) NULL};
const char *const fs_gpu_arch_names[FS_ARCH_N + 1] = {FS_GPU_ARCHS(X) NULL};
const char *const fs_dtype_names[FS_DTYPE_N + 1] = {FS_DTYPES(X) NULL};
const char *const fs_cpu_vendor_names[FS_VENDOR_N + 1] = {FS_CPU_VENDORS(X) NULL};
#undef X

int fs_name_index(const char *const *table, const char *s)
{
  if (s == NULL)
    return -1;
  for (int i = 0; table[i] != NULL; i++)
    if (strcmp(table[i], s) == 0)
      return i;
  return -1;
}

/* Forward lookups assert on an out-of-range value: that is a programmer
 * error, never an input error. */
#define NAME_FN(fn, type, table, n)                  \
  const char *fn(type v)                             \
  {                                                  \
    g_return_val_if_fail((int)v >= 0 && (int)v < (n), "?"); \
    return table[v];                                 \
  }

NAME_FN(fs_model_kind_name, FsModelKind, fs_model_kind_names, FS_MODEL_N_KINDS)
NAME_FN(fs_link_family_name, FsLinkFamily, fs_link_family_names, FS_LINK_N_FAMILIES)
NAME_FN(fs_switch_kind_name, FsSwitchKind, fs_switch_kind_names, FS_SWITCH_N_KINDS)
NAME_FN(fs_gpu_arch_name, FsGpuArch, fs_gpu_arch_names, FS_ARCH_N)
NAME_FN(fs_dtype_name, FsDtype, fs_dtype_names, FS_DTYPE_N)
NAME_FN(fs_cpu_vendor_name, FsCpuVendor, fs_cpu_vendor_names, FS_VENDOR_N)

#define FROM_NAME_FN(fn, type, table)           \
  gboolean fn(const char *s, type *out)         \
  {                                             \
    int i = fs_name_index(table, s);            \
    if (i < 0)                                  \
      return FALSE;                             \
    if (out != NULL)                            \
      *out = (type)i;                           \
    return TRUE;                                \
  }

FROM_NAME_FN(fs_model_kind_from_name, FsModelKind, fs_model_kind_names)
FROM_NAME_FN(fs_link_family_from_name, FsLinkFamily, fs_link_family_names)
FROM_NAME_FN(fs_switch_kind_from_name, FsSwitchKind, fs_switch_kind_names)
FROM_NAME_FN(fs_gpu_arch_from_name, FsGpuArch, fs_gpu_arch_names)
FROM_NAME_FN(fs_dtype_from_name, FsDtype, fs_dtype_names)
FROM_NAME_FN(fs_cpu_vendor_from_name, FsCpuVendor, fs_cpu_vendor_names)
