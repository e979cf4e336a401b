/* import-smi-private.h — the `nvidia-smi topo -m` matrix as read by
 * import-smi.c and turned into a topology by import-smi-build.c. */
#pragma once

#include <glib.h>

#include "catalog/catalog.h"
#include "topo/import.h"

enum { C_UNSET = -2, C_X = -1, C_NV = 0, C_PIX = 1, C_PXB, C_PHB, C_NODE, C_SYS };
/* Names of the codes C_NV..C_SYS, indexed by code. */
extern const char *const fs_smi_level_names[];

typedef struct {
  gint8 code;
  guint8 nv;       /* NV# count */
  int line, col;
} Cell;

typedef struct {
  char *label;     /* header label: GPU0, NIC3, mlx5_0 */
  gboolean gpu;
  char *alias;     /* from the NIC legend, or NULL */
  char *cpu_aff, *numa_aff;
  int line, col;   /* header position */
  int row_line;    /* line of its row, 0 if none */
} Dev;

typedef struct {
  const char *start;
  int len, col;    /* col: 1-based in the original line */
} Tok;

typedef struct {
  const char *name;
  GPtrArray *devs;         /* Dev * */
  guint n;
  Cell *m;                 /* n * n */
  gboolean has_numa;
  char *aff_ignored;       /* why the affinity column is ignored, or NULL */
  /* Repairs of a pasted matrix: words split (first at glued_line:col) and
   * markdown table lines (first at pipe_line); repairs is their sentence
   * for the YAML header, or NULL. */
  guint glued, pipe_lines;
  int glued_line, glued_col, pipe_line;
  char *glued_word;
  char *repairs;
} Smi;

static inline Dev *dev(const Smi *s, guint i)
{
  return g_ptr_array_index(s->devs, i);
}

/* "X", "NV12", "PIX" … for a cell (caller frees). */
char *smi_cell_label(const Cell *c);

/* Infers the topology of a parsed matrix and returns its YAML (caller
 * frees), checked to reproduce every GPU pair; NULL with error. */
char *smi_build(Smi *s, const FsCatalog *cat, const FsImportOptions *opt, GError **error);
