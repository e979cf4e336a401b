/* datadir.h — where fabricsim finds its shipped data: the catalog and its
 * curves (models/), the topologies, the workloads and the validation
 * references.
 *
 * One data root holds them all, laid out as in the source tree:
 *   <root>/models  <root>/topologies  <root>/workloads  <root>/validation/reference
 * The root is, in this order: $FABRICSIM_DATA when set; the installed copy
 * beside the running binary (<bindir>/../share/fabricsim, so that a moved
 * or DESTDIR-staged install finds its own data); the source tree the
 * binary was built from, while it exists; the installed prefix compiled in
 * (<prefix>/share/fabricsim).  A per-kind variable ($FABRICSIM_MODELS,
 * $FABRICSIM_WORKLOADS, $FABRICSIM_VALIDATION) replaces that kind's folder
 * alone.  This is the one reader of those variables.
 *
 * Strings returned here are interned (g_intern_string): borrowed, valid
 * for the life of the process, never freed.  Environment variables are
 * read on every call, so a test may change them; the binary's own location
 * is read once.  Thread-safe.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The kinds of shipped data, each a folder under the data root. */
typedef enum {
  FS_DATA_MODELS,     /* models/: catalog, compute/ curves, nccl/ constants */
  FS_DATA_TOPOLOGIES, /* topologies/ */
  FS_DATA_WORKLOADS,  /* workloads/: workloads, presets, traces/, sweeps/ */
  FS_DATA_VALIDATION, /* validation/reference/: reference tables */
} FsDataKind;

/* The data root (see the header comment).  Borrowed, never NULL; the
 * folder need not exist (the compiled-in prefix is the last resort). */
const char *fs_datadir_root(void);

/* The folder of one kind: its variable when set and not empty, else
 * <root>/<folder>.  Borrowed, never NULL. */
const char *fs_datadir(FsDataKind kind);

/* The file to open for a name given on a command line or in a spec: name
 * itself when it exists (or is absolute); otherwise the first existing of
 * <kind folder>/<name> and <kind folder>/<name>.yaml, where a leading
 * "<folder>/" of name is dropped first (so "topologies/dgx-h100.yaml",
 * "dgx-h100.yaml" and "dgx-h100" all find the shipped DGX H100 from any
 * folder); name itself when none exists, so that the caller's error names
 * what the user wrote.  Caller frees.  Cost: up to four stat() calls. */
char *fs_datadir_find(FsDataKind kind, const char *name);

/* A file or folder an example names by its place in the source tree
 * ("validation/results/h100-2026-11-23.json",
 * "tests/data/chakra/all_reduce_8r_1MiB"), from any folder: name itself
 * when it exists (or is absolute), else <root>/<name> when that exists (the
 * installed copy lays those files out as the source tree does), else name,
 * so that the caller's error names what the user wrote.  For the inputs
 * that are not of one kind: calibration files, nccl-tests logs, flow lists,
 * Chakra traces, NCCL topology files.  Caller frees.  Cost: two stat(). */
char *fs_datadir_resolve(const char *name);

G_END_DECLS
