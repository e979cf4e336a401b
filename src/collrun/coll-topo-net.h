/* coll-topo-net.h — a collective's transfers and routes on a topology's
 * router: the FsCollTopoNet context and the callbacks the executor, the
 * step shortcuts (alone.h), the stream model (exec.h) and the alltoall
 * load model (a2a.h) take over it.
 *
 * Ownership: an FsCollTopoNet borrows its router (which must outlive it)
 * and owns its caches.  Errors: FS_NET_ERROR_NO_ROUTE from the router.
 */
#pragma once

#include <glib.h>

#include "collrun/a2a.h"
#include "collrun/alone.h"
#include "collrun/exec.h"
#include "net/route.h"

G_BEGIN_DECLS

/* The transfer context over a router (borrowed; must outlive it): GPU to
 * GPU transfers go through fs_router_transfer (NCCL's transports, NVLink
 * spraying, ECMP); transfers to or from a reducing switch (NVLS, CollNet)
 * take the fewest-hop path that crosses no GPU (cached). */
typedef struct FsCollTopoNet FsCollTopoNet;
FsCollTopoNet *fs_coll_topo_net_new(FsRouter *router);
void fs_coll_topo_net_free(FsCollTopoNet *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollTopoNet, fs_coll_topo_net_free)

/* FsCollTransferFn over an FsCollTopoNet (ctx). */
gboolean fs_coll_topo_xfer(void *ctx, int src, int dst, uint64_t bytes, double rate_cap,
                           uint64_t key, FsFlowDoneFn done, FsFlowDoneFn drained, void *done_ctx,
                           void *user, GError **error);
/* FsCollTransferCopiesFn over an FsCollTopoNet (ctx): fs_coll_topo_xfer's
 * paths, one flow per path for all the copies. */
gboolean fs_coll_topo_xfer_copies(void *ctx, int src, int dst, uint64_t bytes, guint copies,
                                  double rate_cap, uint64_t key, FsFlowDoneFn done,
                                  FsFlowDoneFn drained, void *done_ctx, void *user, GError **error);

/* FsCollRouteFixedFn over an FsCollTopoNet (ctx): TRUE when transfers
 * from node src to node dst take the same paths whatever their key (no
 * ECMP choice on the way), so that identical channels can be folded. */
gboolean fs_coll_topo_route_fixed(void *ctx, int src, int dst);

/* FsCollPlaneBundlesFn over an FsCollTopoNet (ctx, alone.h): sets the
 * NVSwitch plane bundles of its router on or off
 * (fs_router_set_plane_bundles); returns, when off, whether the run since
 * they were set on held (fs_router_plane_bundles_held), and TRUE when on. */
gboolean fs_coll_topo_plane_bundles(void *ctx, gboolean on);
/* FsCollRouteFixedFn over an FsCollTopoNet (ctx, alone.h): TRUE when a
 * transfer from node src to node dst puts no flow on a bundled NVSwitch
 * plane other than its own bundled one (fs_router_plane_pinned; for a
 * switch endpoint, its path), so that bundles hold for it.  Answers
 * between GPUs are kept per pair, as fs_coll_topo_route_fixed's. */
gboolean fs_coll_topo_planes_free(void *ctx, int src, int dst);

/* Sets the route callbacks of o to those of an FsCollTopoNet t (ctx):
 * route_fixed and the plane bundles' two always; on the max-min model
 * (maxmin) also route_paths and the alltoall load model's four, which give
 * the stream model and the load model their routes (alone.h; the analytic
 * model keeps its step runs).  Leaves o's other fields as they are. */
void fs_coll_topo_alone_routes(FsCollAloneOpts *o, FsCollTopoNet *t, gboolean maxmin);

/* FsCollRouteProfileFn over an FsCollTopoNet (ctx, dedup.h): the analytic
 * figures of the paths from node src to node dst (per path: its share of
 * the bytes, smallest capacity, latency); FALSE when the route depends on
 * the key (as fs_coll_topo_route_fixed) or there is none. */
gboolean fs_coll_topo_route_profile(void *ctx, int src, int dst, GByteArray *out);

/* FsCollRoutePathsFn over an FsCollTopoNet (ctx, exec.h): the paths a
 * transfer from node src to node dst with ECMP key `key` takes, as
 * fs_coll_topo_xfer sends it (a reducing switch: its one path). */
gboolean fs_coll_topo_route_paths(void *ctx, int src, int dst, uint64_t key, GArray *weights,
                                  GArray *hops);

/* FsCollRoutePathsFn over an FsCollTopoNet (ctx): the paths the flows of
 * such a transfer take if started now, the NVSwitch planes' bundle where
 * bundles are on (net/route.h, fs_router_flow_paths). */
gboolean fs_coll_topo_flow_paths(void *ctx, int src, int dst, uint64_t key, GArray *weights,
                                 GArray *hops);

/* FsCollRouteRelayFn over an FsCollTopoNet (ctx, a2a.h): the GPU whose NIC
 * sends from GPU node src to GPU node dst (fs_router_net_nics' proxy). */
int fs_coll_topo_route_relay(void *ctx, int src, int dst);
/* FsCollRouteRailFn over an FsCollTopoNet (ctx, a2a.h): the local index
 * of dst's nearest NIC (its receiving NIC, net/route.h). */
int fs_coll_topo_route_rail(void *ctx, int dst);

/* FsCollRouteFabricFn over an FsCollTopoNet (ctx, a2a.h). */
int fs_coll_topo_route_fabric(void *ctx, FsChannelId ch);

/* FsCollRouteOnceFn over an FsCollTopoNet (ctx, a2a.h): fs_router_route_once
 * with key 0 (a reducing switch: its one path, always fixed). */
gboolean fs_coll_topo_route_once(void *ctx, int src, int dst, GArray *weights, GArray *hops,
                                 gboolean *fixed);

G_END_DECLS
