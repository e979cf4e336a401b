/* import-private.h — what the two importers share: a small graph builder
 * that writes topology YAML, and the model choices (guesses by GPU
 * architecture, switches and links derived from the chosen devices).
 * Internal to src/topo/import-*.c. */
#pragma once

#include <glib.h>

#include "catalog/catalog.h"
#include "topo/import.h"

typedef struct {
  char *name;            /* unique: "gpu0", "pcie3", "cpu1" */
  const FsModel *model;
  int socket;            /* CPUs: the socket written as `socket:`; else -1 */
  char *comment;         /* written after the node, may be NULL */
} ImpNode;

typedef struct {
  guint a, b;
  const FsModel *model;
  guint count;
} ImpLink;

typedef struct {
  GPtrArray *nodes;      /* ImpNode *, owned */
  GArray *links;         /* ImpLink */
  GPtrArray *notes;      /* char *, owned: header comment paragraphs */
} ImpGraph;

ImpGraph *imp_graph_new(void);
void imp_graph_free(ImpGraph *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ImpGraph, imp_graph_free)

/* Adds a node named by format; comment may be NULL.  Returns its index. */
guint imp_add_node(ImpGraph *g, const FsModel *model, int socket, const char *comment,
                   const char *format, ...) G_GNUC_PRINTF(5, 6);
/* Adds count links of model between nodes a and b. */
void imp_add_link(ImpGraph *g, guint a, guint b, const FsModel *model, guint count);
/* Adds a paragraph to the header comment (wrapped when written). */
void imp_note(ImpGraph *g, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* The YAML text (caller frees): a header naming the importer and the input,
 * the notes, then name/source/nodes/links. */
char *imp_emit(const ImpGraph *g, const char *importer, const char *input);

/* The model called name of kind, with the option that named it in the
 * error ("--gpu: unknown gpu model ..."). */
const FsModel *imp_require(const FsCatalog *cat, const char *name, FsModelKind kind,
                           const char *option, GError **error);

/* Default CPU and NIC models for a GPU architecture: the hosts and NICs
 * NVIDIA's own servers of that generation use (DGX-1, DGX A100, DGX H100,
 * DGX B200).  Names of catalog entries; NULL when there is none. */
const char *imp_default_cpu(FsGpuArch arch);
const char *imp_default_nic(FsGpuArch arch);

/* The first PCIe switch model (catalog name order) whose port link has the
 * generation of link and at least min_ports ports; failing that, the first
 * PCIe switch of any generation with min_ports ports; NULL if none. */
const FsModel *imp_pcie_switch(const FsCatalog *cat, const FsModel *link, guint min_ports);

/* The first NVSwitch model whose port link is nvlink; NULL if none. */
const FsModel *imp_nvswitch(const FsCatalog *cat, const FsModel *nvlink);

/* The link that joins two CPU nodes: the CPU's inter-socket link, or its
 * root-port PCIe link when it has none; *count gets the link count. */
const FsModel *imp_socket_link(const FsModel *cpu, guint *count);

/* ---- NCCL topology XML identification (nccl-ids.c) -------------------- */

/* The catalog GPU model of an NVIDIA PCI device ID ("0x2330"), NULL when
 * vendor is not "0x10de" or the ID is not in the table. */
const char *imp_nccl_gpu_for_device(const char *vendor, const char *device);
/* The PCI device ID the table gives a GPU model, or NULL. */
const char *imp_nccl_device_for_gpu(const char *model);
/* The catalog NIC model of a Mellanox/NVIDIA adapter ID (vendor "0x15b3"),
 * physical or virtual function; NULL when not in the table. */
const char *imp_nccl_nic_for_device(const char *vendor, const char *device);
const char *imp_nccl_device_for_nic(const char *model);
/* The catalog CPU model for NCCL's vendor/familyid/modelid: *exact when a
 * row matches, else the newest row of the vendor not newer than the part
 * (or its oldest).  AMD's base family (23, 25, 26) is read as NCCL's
 * familyid (143, 175, 191).  NULL for an unknown vendor. */
const char *imp_nccl_cpu_for(const char *vendor, long familyid, long modelid, gboolean *exact);
/* The vendor/familyid/modelid NCCL would write for a CPU model; FALSE when
 * the table has no row for it. */
gboolean imp_nccl_cpu_ids(const char *model, const char **vendor, long *familyid, long *modelid);
/* NCCL's `sm` (compute capability x 10) of an architecture; -1 if none. */
long imp_nccl_sm_for_arch(FsGpuArch arch);
