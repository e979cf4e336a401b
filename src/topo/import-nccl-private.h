/* import-nccl-private.h — what the three files of the NCCL topology XML
 * importer share: the element tree (import-nccl-xml.c), the walk that
 * turns elements into entries and the graph (import-nccl.c) and the
 * identification of their models (import-nccl-models.c).  Not for other
 * modules: they call fs_import_nccl (import.h). */
#ifndef FS_TOPO_IMPORT_NCCL_PRIVATE_H
#define FS_TOPO_IMPORT_NCCL_PRIVATE_H

#include <glib.h>

#include "catalog/catalog.h"
#include "topo/identify.h"
#include "topo/import.h"

/* An element: its name, attributes (NULL-terminated, parallel), the line
 * and column of its '<', its parent and children (owned). */
typedef struct XNode {
  char *name;
  char **keys, **vals;
  int line, col;
  struct XNode *parent;
  GPtrArray *kids;
} XNode;

typedef enum { E_CPU, E_SWITCH, E_GPU, E_NIC } EntKind;

typedef struct {
  EntKind kind;
  const XNode *x;       /* the <cpu>, <pci> (switch, GPU, NIC) or bare <nic> element */
  const XNode *dev;     /* GPUs: <gpu>, NICs: <nic>; NULL when the file has none */
  int parent;           /* entry index, -1 for CPUs */
  int cpu;              /* entry index of its CPU */
  const FsModel *model;
  const FsModel *uplink;  /* link to the parent from the file (NULL: the device's own) */
  int dev_index;        /* GPU: dev (implicit ones numbered after the explicit); CPU: socket */
  long sm;              /* GPU: <gpu sm>, -1 without <gpu> */
  guint c2c;            /* GPU: <c2c count> */
  double speed;         /* NIC: fastest <net speed> (Mb/s), 0 when unknown */
  guint node;           /* graph node, once made */
} Ent;

typedef struct {
  const char *name;
  const FsCatalog *cat;
  const FsImportOptions *opt;
  GArray *ents;         /* Ent */
  GPtrArray *notes;     /* what was chosen, one phrase each (owned) */
  GPtrArray *guesses;   /* "Guess: ..." paragraphs, one per undecided model (owned) */
  GHashTable *noted;    /* phrases already in notes (set) */
} Walk;

/* Entry i of the walk (no bounds check). */
static inline Ent *ent(const Walk *w, int i)
{
  return &g_array_index(w->ents, Ent, i);
}

/* ---- the element tree (import-nccl-xml.c) ---- */

/* Reads the XML text into an element tree (caller frees with
 * nccl_xml_free).  NULL with "name:line:col: malformed XML: ..." in
 * FS_TOPO_ERROR for text GMarkup refuses, no element, a second top-level
 * element or nesting deeper than FABRICSIM_MAX_XML_DEPTH (64).  Linear in
 * len. */
XNode *nccl_xml_parse(const char *text, gsize len, const char *name, GError **error);

/* Frees an element and its children (a GDestroyNotify). */
void nccl_xml_free(gpointer p);

/* The value of attribute key of x, NULL when it has none (borrowed). */
const char *nccl_attr(const XNode *x, const char *key);

/* A "0x"-prefixed hexadecimal attribute of x up to 0xffff (a PCI vendor or
 * device id); 0 when x is NULL or the attribute is missing or not one. */
guint nccl_pci_attr(const XNode *x, const char *key);

/* ---- the walk's errors and notes (import-nccl.c) ---- */

/* Sets "name:line:col: message" at element x in FS_TOPO_ERROR; FALSE. */
gboolean nccl_fail_at(const Walk *w, const XNode *x, GError **error, const char *format, ...)
  G_GNUC_PRINTF(4, 5);

/* Adds phrase (taken) to the import's notes unless it is there already. */
void nccl_note_once(Walk *w, char *phrase);

/* Parses v, attribute key of x, as a decimal integer in [lo, 1e9]
 * (surrounding blanks allowed, nothing else); FALSE with the error at x. */
gboolean nccl_int_in(const Walk *w, const XNode *x, const char *key, const char *v, long lo,
                     long *out, GError **error);

/* ---- models (import-nccl-models.c) ---- */

/* Records an identification: a phrase for the header, and a guess line
 * (opt->messages) when the clues left alternatives (option: the option
 * that names the model instead). */
void nccl_note_identity(Walk *w, const char *what, const FsIdentity *id, const char *option);

/* TRUE when some catalog GPU has the PCI id of x (catalog `pci_ids`) or,
 * sm >= 0, compute capability sm.  O(catalog). */
gboolean nccl_known_gpu(const Walk *w, const XNode *x, long sm);

/* TRUE when some catalog NIC has the PCI id of x.  O(catalog). */
gboolean nccl_known_nic(const Walk *w, const XNode *x);

/* The CPU models of every CPU entry: --cpu, else identified (identify.h)
 * from NCCL's vendor/familyid/modelid, arch, the NVLinks every GPU has to
 * the CPU (spare) and gpu0's reference CPU.  FALSE with the error at the
 * <cpu> element. */
gboolean nccl_cpu_models(Walk *w, const FsModel *gpu0, guint spare, GError **error);

/* The GPU model of GPU entry e: --gpu, else its PCI id, <gpu sm>,
 * NVLink-C2C and its NVLinks (nvsum links to nvset peers); without <gpu>
 * and a known id, on an NVSwitch (on_switch), its PCIe generation.  FALSE
 * with the error at the element. */
gboolean nccl_gpu_model(Walk *w, Ent *e, gboolean on_switch, guint nvsum, guint nvset,
                        GError **error);

#endif
