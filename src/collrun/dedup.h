/* dedup.h — the channels of a plan that time alike in the analytic flow
 * model, so that a collective timed alone runs one channel of each kind.
 *
 * In the analytic model (flow.h) no two flows share anything: a flow
 * started at S with B bytes over a path takes, whatever else runs,
 * min(its cap, the path's smallest capacity) as its rate (the cap includes
 * the collective's shared-link cap, exec.h fs_coll_share_caps, which the
 * comparison below takes step for step) and finishes at
 * S + ⌈B / rate⌉ + the path's latency.  The executor (exec.h) adds only
 * per-step latencies (by the step's inter flag and whether a dependency
 * is on the same connection) and reduction delays (bytes / reduce_bw).  A
 * channel whose dependencies stay inside it is therefore a closed system:
 * its steps' times depend on its own steps only.  Two channels whose
 * steps agree one for one in kind, payload bytes, inter flag, dependency
 * and credit positions (inside the channel), same-connection flags of the
 * dependencies, and the timing profile of each transfer's route (per
 * path: its share of the bytes, smallest capacity and latency) run
 * identically to the picosecond; the collective ends when its last
 * channel does.  So running one channel of each kind gives the same
 * time, exactly (tests/test-coll-dedup.c compares ring, tree, NVLS, NVLS
 * tree and hierarchical plans on four fabrics with full runs, to the
 * picosecond).  Channel folding (coll/plan.h) is the
 * max-min model's counterpart; it needs identical nodes, this needs only
 * identical figures (the rings of a rail-optimized fabric use other NICs
 * and rails, channel by channel).
 *
 * A route's profile must not depend on the transfer's ECMP key (the
 * channels' connections hash to different keys): the profile callback
 * says so, and a plan with such a route is not deduplicated.
 *
 * Ownership: borrows everything.  Errors: none (no dedup on any doubt).
 * Cost: O(steps + deps) plus one profile per distinct node pair, and a
 * channel-by-channel comparison against each kind found so far.
 */
#pragma once

#include <glib.h>

#include "coll/plan.h"

G_BEGIN_DECLS

/* Appends to out the timing profile in the analytic model of a transfer
 * from topology node src to node dst (any encoding; equal bytes must mean
 * equal timing), or returns FALSE when it may depend on the transfer's
 * ECMP key or cannot be found. */
typedef gboolean (*FsCollRouteProfileFn)(void *ctx, int src, int dst, GByteArray *out);

/* step_caps (nullable, one per step): each transfer's rate cap when links are
 * shared inside the collective (exec.h, fs_coll_share_caps); two channels are
 * alike only when their caps agree step for step too.
 *
 * The channels of plan to run (bit c set: channel c runs) so that every
 * channel left out has one run that times exactly like it (above), and in
 * *kinds their count; 0 when nothing can be left out (one channel, more
 * than 64, a dependency across channels, a folded plan, a route profile
 * refused). */
guint64 fs_coll_plan_distinct_channels(const FsCollPlan *plan, FsCollRouteProfileFn profile,
                                       void *ctx, const double *step_caps, guint *kinds);

G_END_DECLS
