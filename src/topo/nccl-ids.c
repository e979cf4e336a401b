/* nccl-ids.c — the identification tables that NCCL's topology XML needs in
 * both directions: PCI device IDs of NVIDIA GPUs and NVIDIA/Mellanox
 * adapters, NCCL's CPU vendor/familyid/modelid, and the compute capability
 * (`sm`) of each GPU architecture.  The importer (import-nccl.c) reads
 * them; the exporter (export-nccl.c) writes them, so an exported file
 * imports with the same models.  The names are catalog model names.
 *
 * Sources: PCI device IDs from the PCI ID database (pci-ids.ucw.cz, vendor
 * 10de NVIDIA and 15b3 Mellanox); NCCL's familyid = family + extended
 * family << 4 and modelid = model + extended model << 4 as NCCL's
 * src/graph/xml.cc writes them from CPUID (Intel family 6: Broadwell-EP
 * model 79, Skylake/Cascade Lake-SP 85, Sapphire Rapids 143, Emerald
 * Rapids 207; AMD Zen 2 family 0x17 → 143, Zen 3/4 family 0x19 → 175,
 * Zen 5 family 0x1A → 191); compute capabilities from NVIDIA's CUDA GPU
 * list (Pascal 6.0, Volta 7.0, Ampere 8.0, Ada 8.9, Hopper 9.0, Blackwell
 * 10.0). */
#include <string.h>

#include "topo/import-private.h"

static const struct {
  const char *device, *model;
} gpu_ids[] = {
  {"0x15f9", "p100-sxm2"},      /* GP100GL Tesla P100 SXM2 16GB */
  {"0x1db1", "v100-sxm2-16gb"}, /* GV100GL Tesla V100 SXM2 16GB */
  {"0x1db5", "v100-sxm2-32gb"}, /* GV100GL Tesla V100 SXM2 32GB */
  {"0x20b0", "a100-sxm4-40gb"}, /* GA100 A100 SXM4 40GB */
  {"0x20b2", "a100-sxm4-80gb"}, /* GA100 A100 SXM4 80GB */
  {"0x2330", "h100-sxm"},       /* GH100 H100 SXM5 80GB */
  {"0x2331", "h100-pcie"},      /* GH100 H100 PCIe */
  {"0x2335", "h200-sxm"},       /* GH100 H200 SXM 141GB */
  {"0x2342", "gh200"},          /* GH100 GH200 120GB / 480GB */
  {"0x2348", "gh200-144gb"},    /* GH100 GH200 144GB HBM3e */
  {"0x2684", "rtx-4090"},       /* AD102 GeForce RTX 4090 */
  {"0x2901", "b200"},           /* GB100 B200 */
  {"0x2941", "gb200"},          /* GB100 GB200 */
};

static const struct {
  const char *device, *model;
} nic_ids[] = {
  {"0x1017", "connectx-5"}, {"0x1018", "connectx-5"}, {"0x1019", "connectx-5"},
  {"0x101b", "connectx-6"}, {"0x101c", "connectx-6"}, {"0x101d", "connectx-6"},
  {"0x101f", "connectx-6"}, {"0x1021", "connectx-7"},
  {"0x1023", "connectx-8"}, {"0xa2dc", "bluefield-3"},
};

/* NCCL's CPU ids, one row per catalog model; within a vendor the rows are
 * in increasing (familyid, modelid). */
static const struct {
  const char *vendor;
  long familyid, modelid;
  const char *model;
} cpu_ids[] = {
  {"GenuineIntel", 6, 79, "xeon-e5-2698-v4"},     /* Broadwell-EP */
  {"GenuineIntel", 6, 85, "xeon-platinum-8168"},  /* Skylake-SP / Cascade Lake */
  {"GenuineIntel", 6, 143, "xeon-platinum-8480c"}, /* Sapphire Rapids */
  {"GenuineIntel", 6, 207, "xeon-platinum-8480c"}, /* Emerald Rapids: the 8480C stands for it */
  {"AuthenticAMD", 143, 49, "epyc-7742"},         /* Zen 2 (Rome) */
  {"AuthenticAMD", 175, 17, "epyc-9654"},         /* Zen 4 (Genoa); Zen 3 Milan is 175/1 */
};

static gboolean hex_eq(const char *a, const char *b)
{
  return a != NULL && b != NULL && g_ascii_strcasecmp(a, b) == 0;
}

const char *imp_nccl_gpu_for_device(const char *vendor, const char *device)
{
  if (!hex_eq(vendor, "0x10de"))
    return NULL;
  for (gsize i = 0; i < G_N_ELEMENTS(gpu_ids); i++)
    if (hex_eq(device, gpu_ids[i].device))
      return gpu_ids[i].model;
  return NULL;
}

const char *imp_nccl_device_for_gpu(const char *model)
{
  for (gsize i = 0; i < G_N_ELEMENTS(gpu_ids); i++)
    if (strcmp(model, gpu_ids[i].model) == 0)
      return gpu_ids[i].device;
  return NULL;
}

const char *imp_nccl_nic_for_device(const char *vendor, const char *device)
{
  if (!hex_eq(vendor, "0x15b3"))
    return NULL;
  for (gsize i = 0; i < G_N_ELEMENTS(nic_ids); i++)
    if (hex_eq(device, nic_ids[i].device))
      return nic_ids[i].model;
  return NULL;
}

const char *imp_nccl_device_for_nic(const char *model)
{
  for (gsize i = 0; i < G_N_ELEMENTS(nic_ids); i++)
    if (strcmp(model, nic_ids[i].model) == 0)
      return nic_ids[i].device;
  return NULL;
}

const char *imp_nccl_cpu_for(const char *vendor, long familyid, long modelid, gboolean *exact)
{
  *exact = FALSE;
  if (vendor == NULL)
    return NULL;
  /* Hand-written files (Azure's) give AMD's base family (0x17, 0x19,
   * 0x1A) where NCCL writes family + extended family << 4. */
  if (strcmp(vendor, "AuthenticAMD") == 0 && familyid >= 0x17 && familyid <= 0x1f)
    familyid = 0xf + ((familyid - 0xf) << 4);
  const char *best = NULL, *first = NULL;
  for (gsize i = 0; i < G_N_ELEMENTS(cpu_ids); i++) {
    if (strcmp(vendor, cpu_ids[i].vendor) != 0)
      continue;
    if (first == NULL)
      first = cpu_ids[i].model;
    gboolean intel = strcmp(vendor, "GenuineIntel") == 0;
    if (familyid == cpu_ids[i].familyid && (!intel || modelid == cpu_ids[i].modelid)) {
      *exact = TRUE;
      return cpu_ids[i].model;
    }
    /* The newest row not newer than the part (Intel by model within
     * family 6, AMD by family). */
    if (intel ? familyid == cpu_ids[i].familyid && modelid > cpu_ids[i].modelid
              : familyid > cpu_ids[i].familyid)
      best = cpu_ids[i].model;
  }
  return best != NULL ? best : first;
}

gboolean imp_nccl_cpu_ids(const char *model, const char **vendor, long *familyid, long *modelid)
{
  for (gsize i = 0; i < G_N_ELEMENTS(cpu_ids); i++)
    if (strcmp(model, cpu_ids[i].model) == 0) {
      *vendor = cpu_ids[i].vendor;
      *familyid = cpu_ids[i].familyid;
      *modelid = cpu_ids[i].modelid;
      return TRUE;
    }
  return FALSE;
}

static const struct {
  FsGpuArch arch;
  long sm;
} arch_sm[] = {
  {FS_ARCH_PASCAL, 60}, {FS_ARCH_VOLTA, 70}, {FS_ARCH_AMPERE, 80},
  {FS_ARCH_ADA, 89},    {FS_ARCH_HOPPER, 90}, {FS_ARCH_BLACKWELL, 100},
};

long imp_nccl_sm_for_arch(FsGpuArch arch)
{
  for (gsize i = 0; i < G_N_ELEMENTS(arch_sm); i++)
    if (arch_sm[i].arch == arch)
      return arch_sm[i].sm;
  return -1;
}
