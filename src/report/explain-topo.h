/* explain-topo.h — `fabricsim explain topo`: why a GPU pair is NV#, PIX,
 * PXB, PHB, NODE, SYS or NET — the rule, the route hop by hop, each path's
 * bottleneck, one transfer timed alone on a world of the scenario, and the
 * transport NCCL would pick with its reason; or, for a whole topology, the
 * GPU matrix (up to 16 GPUs) and one explained pair per path type.
 * level_given: the user set the P2P level (else the text says which
 * default applies).  FALSE with a routing or run error.  Cost: one route
 * and one simulated transfer per pair; at most 4096 pairs classified.
 */
#pragma once

#include <glib.h>

#include "net/route.h"
#include "scenario/scenario.h"

G_BEGIN_DECLS

/* GPU nodes a and b of the scenario's topology. */
gboolean fs_report_explain_pair(GString *out, const FsScenario *sc, const FsRouteOptions *ropt,
                                gboolean level_given, guint a, guint b, uint64_t bytes, GError **error);
gboolean fs_report_explain_topo(GString *out, const FsScenario *sc, const FsRouteOptions *ropt,
                                gboolean level_given, uint64_t bytes, GError **error);

G_END_DECLS
