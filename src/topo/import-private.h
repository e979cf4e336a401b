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

/* The first PCIe switch model (catalog name order) whose port link has the
 * generation of link and at least min_ports ports; failing that, the first
 * PCIe switch of any generation with min_ports ports; NULL if none. */
const FsModel *imp_pcie_switch(const FsCatalog *cat, const FsModel *link, guint min_ports);

/* The first NVSwitch model whose port link is nvlink; NULL if none. */
const FsModel *imp_nvswitch(const FsCatalog *cat, const FsModel *nvlink);

/* The link that joins two CPU nodes: the CPU's inter-socket link, or its
 * root-port PCIe link when it has none; *count gets the link count. */
const FsModel *imp_socket_link(const FsModel *cpu, guint *count);
