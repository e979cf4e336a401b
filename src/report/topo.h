/* topo.h — the outputs of `fabricsim topo check|show|paths|dot`: a
 * summary (GPUs, hosts, switches, links per family, per-GPU NVLink,
 * bisection bandwidth), every node and link, the GPU × GPU path matrix as
 * `nvidia-smi topo -m` prints it, or Graphviz; as text or JSON.
 */
#pragma once

#include <glib.h>

#include "topo/topo.h"

G_BEGIN_DECLS

/* action: "check", "show", "paths" or "dot".  FALSE with
 * FS_RUNTIME_ERROR_LIMIT for a path matrix of more GPUs than
 * FS_PATHS_MATRIX_MAX_GPUS.  Cost: check computes the bisection
 * (max-flow). */
gboolean fs_report_topo(GString *out, const char *action, const FsTopo *t, gboolean json,
                        GError **error);

G_END_DECLS
