/* import.h — importers that turn what a real machine reports about itself
 * into topology YAML (the format of topologies/README.md), and the way
 * back to NCCL:
 *
 *   fs_import_smi   the text of `nvidia-smi topo -m`
 *   fs_import_nccl  the XML NCCL writes to NCCL_TOPO_DUMP_FILE or reads from
 *                   NCCL_TOPO_FILE (dumps and the hand-written files clouds
 *                   publish)
 *   fs_export_nccl  one host of a topology as such an XML
 *
 * Both return the YAML as a new string (caller frees) that starts with a
 * comment naming the importer, the input and every model choice, and that
 * `fabricsim topo` loads.  The smi importer's output reproduces the input
 * matrix: `topo paths` on it prints the same class for every GPU pair
 * (fs_import_smi checks this itself before returning); both importers
 * load their output before returning it, so a model choice that breaks a
 * port budget is reported here.  The inference
 * rules are documented in topologies/README.md, "Importing a machine".
 *
 * Model choices come from FsImportOptions (catalog names; NULL =
 * identify from the input's clues, src/topo/identify.h); every choice and
 * its clues are named in the output's header, and a model the clues could
 * not decide is also one line in FsImportOptions.messages, with its
 * alternatives.  The catalog is borrowed and
 * only read; link models are derived from the chosen devices (a GPU's
 * `pcie` and `nvlink`, a CPU's `intersocket`, a switch's `port_link`).
 *
 * Errors: FS_TOPO_ERROR.  Input errors start with "name:line:col: " (name
 * is the caller's name for the input); an unknown model given in the
 * options is FS_TOPO_ERROR_MODEL without a position.  Cost: O(n^2) in the
 * number of devices for smi (n <= FS_IMPORT_MAX_DEVICES), linear in the
 * XML size for nccl.
 */
#pragma once

#include <glib.h>

#include "catalog/catalog.h"
#include "topo/topo.h"

G_BEGIN_DECLS

/* The most GPUs + NICs one `nvidia-smi topo -m` matrix may have. */
#define FS_IMPORT_MAX_DEVICES 1024

typedef struct {
  const char *gpu;   /* GPU model name, or NULL to guess */
  const char *nic;   /* NIC model name, or NULL to guess */
  const char *cpu;   /* CPU model name, or NULL to guess */
  /* import-smi: text given beside the matrix (`--smi-q FILE`: nvidia-smi
   * -L / -q, ibstat, ibv_devinfo; see fs_hw_text_parse), or NULL. */
  const char *hw_text;
  gsize hw_text_len;
  const char *hw_text_name;
  /* Out, may be NULL: one line (char *, g_free) per model the clues could
   * not decide ("GPU h100-sxm: ...; also fits h200-sxm, b200"), and one
   * per repair of the input (import-smi); the caller prints them. */
  GPtrArray *messages;
} FsImportOptions;

/* Reads `nvidia-smi topo -m` text (len bytes, need not be NUL-terminated)
 * and returns topology YAML (caller frees), or NULL with error. */
char *fs_import_smi(const char *text, gsize len, const char *name, const FsCatalog *cat,
                    const FsImportOptions *opt, GError **error);

/* Reads an NCCL topology dump (XML, len bytes) and returns topology YAML
 * (caller frees), or NULL with error. */
char *fs_import_nccl(const char *text, gsize len, const char *name, const FsCatalog *cat,
                     const FsImportOptions *opt, GError **error);

/* Reads the file at path (and, when hw_path is not NULL, the nvidia-smi
 * -L/-q text there as opt's hardware text) and imports it with
 * fs_import_smi (smi TRUE) or fs_import_nccl.  Returns the YAML (caller
 * frees) or NULL with a GFileError or the importer's error. */
char *fs_import_path(gboolean smi, const char *path, const char *hw_path, const FsCatalog *cat,
                     FsImportOptions *opt, GError **error);

/* Writes host `host` (an index of fs_topo_host_name) of a finalized
 * topology as an NCCL_TOPO_FILE XML (caller frees): <cpu> per CPU node,
 * its PCIe tree (found breadth-first from the CPUs over PCIe and C2C
 * links), GPUs with their NVLinks, NICs with one <net> per port; rules in
 * export-nccl.c and topologies/README.md.  fs_import_nccl of the result
 * gives a topology whose `topo paths` matrix is the host's.  Errors
 * (FS_TOPO_ERROR_INVALID): no such host, a host without GPU or CPU, a GPU
 * with no PCIe path to a CPU.  Deterministic; linear in the host's size. */
char *fs_export_nccl(const FsTopo *topo, guint host, GError **error);

G_END_DECLS
