/* connect.h — whether every GPU of a topology can reach every other one.
 *
 * Loading a topology already refuses a GPU linked to no other GPU
 * (fs_topo_validate); a system in two or more parts, each with GPUs of its
 * own (two islands of NVLink with nothing between them), loads, because a
 * part may be simulated alone.  `fabricsim topo check` refuses it unless
 * --allow-disconnected, and a run that needs a pair across the parts fails
 * in routing (net/route.h).
 */
#pragma once

#include <glib.h>

#include "topo/topo.h"

G_BEGIN_DECLS

/* TRUE when every pair of GPUs is joined by a chain of links (of any
 * family, through any node).  Otherwise FALSE with FS_TOPO_ERROR_UNREACHABLE
 * at the position of the first GPU (placement order) that cannot reach the
 * first GPU of the list (or the first pair, when the first GPU reaches
 * none): "GPU "b" cannot reach GPU "a": no chain of links joins them; …".
 * Cost: O(nodes + links) (union-find). */
gboolean fs_topo_check_connected(const FsTopo *t, GError **error);

G_END_DECLS
