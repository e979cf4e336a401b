/* rotation.h — channels that mirror each other rotated: NCCL's tree and
 * the ring's phases in a collective timed alone.
 *
 * On a host of L GPUs each with its own NIC (DGX H100: 8, the NICs on four
 * PCIe switches of two GPUs each), NCCL's rings are rotations of each
 * other: ring i + s visits the GPUs of ring i shifted by s local ranks on
 * every host (pi_s, coll/comm.h fs_comm_ring_rotation; s = 2 there, order
 * m = 4).  The tree of channel c is built from ring c and tree index
 * c mod 2 alone, and a ring all_reduce, all_gather or reduce_scatter's
 * channel c from ring c alone (not a chain from a root: the root stays),
 * so (for the tree with s even: FsCollAlgo.rotates) channel c + k·s is
 * channel c with every rank moved by pi_s^k: its NVLink hops on the
 * rotated GPUs' links, its network hops on the rotated rails.  Alone on the network, where the
 * topology rotates the same way, every flow of channel c + k·s then has
 * the rate of its image in channel c at every moment, and the plan need
 * only make the channels c mod (s·m) < s (FsCollRequest.rotation): 1/m
 * of its transfers.
 *
 * What they share.  Unlike the NVLS tree's rails (rails.h), rotated
 * channels cross the same links: channel 0's hop from GPU 0 to GPU 2 and
 * channel 2's from GPU 2 to GPU 4 both leave through NVLinks that the
 * other's images use too.  So the run lets every orbit of links under the
 * rotation be one link (flow.h, fs_flownet_set_alias): the orbit {e,
 * pi(e), …, pi^(m-1)(e)} of m distinct links of equal capacity and
 * latency runs as its first member, which then carries each made flow
 * once for every member it crosses — exactly the load every member
 * carries in the whole run, where channel c + k·s puts on pi^k(e) what
 * channel c puts on e.  Max-min on the orbits is max-min on the whole
 * network restricted to the made flows (the whole allocation is
 * invariant under the rotation, max-min being unique).
 *
 * Found how.  Every transfer of the made channels (taken from their plan
 * of one loop, a ring's cut to one ring step) and each image k = 0 … m−1 of it are routed (with the
 * run's paths: bundled NVSwitch planes where they are on) and paired hop
 * for hop (rails-private.h).  Channels joined by pairs form components;
 * a component is an orbit when its pairs number its members 0 … m−1
 * consistently (the pair (k, a, b) says b = pi^k(a)), each once, all of
 * one capacity.  Any other component (the spine links, whose ECMP by
 * destination does not follow the rotation) is not merged and is watched
 * as the rails' are: the loads of the channels paired with each of its
 * channels must stay within its capacity together, and each made flow's
 * channel there below it, so that it never limits a flow.  A run whose
 * watches fail runs the whole plan (collrun/alone.c); so does a path that
 * would cross two members of one orbit.
 *
 * Soundness: only for a collective alone on the network, with fixed
 * routes, equal channel shares (checked by the plan builder) and an
 * algorithm that says its channels rotate (algo-tree.c; checked, edge for
 * edge, by a build with FABRICSIM_CHECK_MIRRORS, and the whole run
 * compared with the rotated one there, collrun/alone.c).
 *
 * Ownership: an FsCollRotation owns its aliases and watches; it borrows
 * nothing after fs_coll_rotation_new returns.  Errors: none (NULL on any
 * doubt).  Cost: a plan of one loop, and two route lookups per distinct
 * transfer of the made channels and rotation; a sweep's memo keeps it
 * (alone.c).
 */
#pragma once

#include <glib.h>

#include "coll/plan.h"
#include "collrun/exec.h"
#include "net/flow.h"

G_BEGIN_DECLS

typedef struct FsCollRotation FsCollRotation;

/* The rotation s and order m an algorithm's channels may be made under
 * (FsCollRequest.rotation, rotation_order) for req on comm: an algorithm
 * whose channels rotate for req's op (FsCollAlgo.rotates: NCCL's tree,
 * by even shifts; the ring's phases) on two or more hosts whose rings
 * rotate by such a shift, with a multiple of s·m channels of equal
 * shares; 0 (m 0) otherwise.  Cost: fs_comm_ring_rotation. */
guint fs_coll_rotation_shift(const FsComm *comm, const FsCollAlgo *algo, const FsCollRequest *req,
                             guint *order);
/* The rotation of req (fs_coll_rotation_shift non-zero) on net with the
 * paths its flows take now (paths: FsCollRoutePathsFn of the flows a
 * transfer starts, bundles included; fixed: whether a pair's route takes
 * no key; ctx: of both): the orbits merged and the watches, or NULL when
 * a transfer's image does not align with it or a path would cross two
 * members of one orbit. */
FsCollRotation *fs_coll_rotation_new(const FsComm *comm, const FsCollAlgo *algo,
                                     const FsCollRequest *req, const FsFlowNet *net,
                                     FsCollRouteFixedFn fixed, FsCollRoutePathsFn paths,
                                     void *ctx);
void fs_coll_rotation_free(FsCollRotation *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollRotation, fs_coll_rotation_free)

/* Channels merged into another (the orbits' members but their first),
 * and channels watched. */
guint fs_coll_rotation_n_merged(const FsCollRotation *r);
guint fs_coll_rotation_n_watched(const FsCollRotation *r);
/* Before a run of the rotated plan on net: sets its aliases and watches. */
void fs_coll_rotation_begin(const FsCollRotation *r, FsFlowNet *net);
/* After it: drops them; TRUE when every watch held (the run timed as the
 * whole plan would). */
gboolean fs_coll_rotation_end(const FsCollRotation *r, FsFlowNet *net);

G_END_DECLS
