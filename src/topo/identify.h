/* identify.h — which catalog GPU, CPU and NIC a machine has, from the
 * clues an importer finds (src/topo/import-smi.c, import-nccl.c).
 *
 * Every identification fact is catalog data (models/README.md,
 * "Identification"): `pci_ids`, `product_names`, `compute_capability`,
 * `form_factor`, `nvlinks`, `reference_cpu`/`reference_nic` of GPUs;
 * `cpuid`, `cores`, `threads_per_core`, `nvlink` of CPUs; `pci_ids` and
 * port rates of NICs.  This module holds the rules only.
 *
 * Each fs_identify_* starts from every catalog model of its kind, in
 * catalog file order (the files in name order, entries as written), and
 * applies its clues in a fixed order: a hard clue (PCI id, product name,
 * CPUID) keeps only the models it names when it names any; a soft clue
 * keeps the models it prefers when it prefers any.  The first model left
 * is the choice; the others left are the alternatives, which the
 * importers report as one "guess" line each on stderr and as comments in
 * the YAML.  The rules are documented for users in topologies/README.md,
 * "Importing a machine".
 *
 * Cost: O(models × list items) per call.  Pure: same clues, same answer.
 */
#pragma once

#include <glib.h>

#include "catalog/catalog.h"

G_BEGIN_DECLS

/* The result of one identification.  model is NULL only when the catalog
 * has no model of the kind (or none passes the caller's fit test). */
typedef struct {
  const FsModel *model;
  gboolean decided;        /* a hard clue named exactly this model */
  char *why;               /* one phrase: the clues that chose it (owned) */
  GPtrArray *alternatives; /* const FsModel *: others the clues fit as well */
} FsIdentity;

/* Frees the identity's strings and array (not the struct). */
void fs_identity_clear(FsIdentity *id);

/* "h200-sxm, b200" (caller frees); "" when there are none. */
char *fs_identity_alternatives(const FsIdentity *id);

/* Clues about the GPUs.  Unknown fields are 0 / NULL / FALSE. */
typedef struct {
  const char *product_name;   /* "NVIDIA H100 80GB HBM3" (nvidia-smi -L/-q) */
  guint pci_vendor, pci_device; /* 0x10de, 0x2330 (nvidia-smi -q, NCCL <pci device>) */
  guint compute_capability;   /* NCCL's sm: 90 */
  guint nv_sum;               /* the largest per-GPU sum of direct NVLinks */
  guint nv_plane;             /* k when GPUs are all NVk to each other through a switch */
  guint nv_set;               /* the largest set of GPUs joined by NVLink (2 = pairs) */
  gboolean nvswitch;          /* an NVSwitch is known to be present */
  gboolean grace;             /* the host CPU is a Grace (superchips possible) */
  /* Returns FALSE when GPU model m cannot carry the input's NVLinks. */
  gboolean (*fits)(const FsModel *m, gpointer data);
  gpointer fits_data;
} FsGpuClues;

/* Clues about the CPUs. */
typedef struct {
  const char *vendor;       /* CPUID vendor "GenuineIntel", or a machine name ("ppc64le") */
  int family, model;        /* CPUID family and model as /proc/cpuinfo prints them; -1 unknown */
  guint logical_cpus;       /* highest CPU number in the affinities + 1; 0 unknown */
  guint sockets;            /* socket groups the input shows (>= 1) */
  const FsModel *gpu;       /* the chosen GPU: its reference CPU, and its NVLinks */
  guint gpu_spare_nvlinks;  /* NVLinks every GPU leaves unused (to a POWER CPU?) */
} FsCpuClues;

/* Clues about the NICs. */
typedef struct {
  guint pci_vendor, pci_device; /* 0x15b3, 0x101b (NCCL <pci device>, ibstat "CA type: MT4123") */
  double rate_gbps;         /* fastest port rate, Gb/s; 0 unknown */
  int family;               /* FS_LINK_INFINIBAND, FS_LINK_ETHERNET, or -1 */
  const FsModel *gpu;       /* the chosen GPU: its reference NIC */
} FsNicClues;

void fs_identify_gpu(const FsCatalog *cat, const FsGpuClues *c, FsIdentity *out);
void fs_identify_cpu(const FsCatalog *cat, const FsCpuClues *c, FsIdentity *out);
void fs_identify_nic(const FsCatalog *cat, const FsNicClues *c, FsIdentity *out);

/* CPUID family as /proc/cpuinfo prints it from NCCL's `familyid`
 * (family + extended family << 4): 143 -> 23 (AMD Zen 2), 6 -> 6. */
int fs_identify_cpuid_family_from_nccl(int familyid);

/* ---- text beside the matrix: nvidia-smi -L / -q, ibstat, ibv_devinfo ---- */

/* What fs_hw_text_parse found.  Strings are owned. */
typedef struct {
  GPtrArray *gpu_names;     /* char *: product names, one per GPU line, in order */
  guint gpu_vendor, gpu_device; /* from the first "Device Id : 0x233010DE" (-q); 0 if none */
  guint nic_vendor, nic_device; /* from "CA type: MT4123" / "vendor_part_id: 4123"; 0 if none */
  double nic_rate_gbps;     /* fastest "Rate: 200" (ibstat), 0 if none */
  int nic_family;           /* "Link layer: InfiniBand/Ethernet": FS_LINK_*, or -1 */
  guint lines_used;         /* lines that gave a clue */
} FsHwText;

/* Reads `nvidia-smi -L` lines ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: …)",
 * also "GPU 0,1,2,3: NVIDIA B200" as tools print them), `nvidia-smi -q`
 * ("Product Name : …", "Device Id : 0x233010DE"), `ibstat` ("CA type:
 * MT4123", "Rate: 200", "Link layer: InfiniBand") and `ibv_devinfo`
 * ("vendor_part_id: 4123") in any order; other lines are skipped.  FALSE
 * with "name:line:col: …" for GPU lines that name different products (one
 * GPU model per machine) or when no line gives a clue.  Cost: linear. */
gboolean fs_hw_text_parse(const char *text, gsize len, const char *name, FsHwText *out,
                          GError **error);
void fs_hw_text_clear(FsHwText *t);

G_END_DECLS
