/* rails-private.h — what the mirrored rails (rails.c) and the rotated
 * channels (rotation.c) share: pairing two transfers' routes hop for hop,
 * and a set of watches of summed channel loads checked over a run.
 *
 * Ownership: an FsCollAlign borrows its network and callbacks and owns its
 * arrays (fs_coll_align_clear); an FsCollRails owns its arrays.  Errors:
 * none (FALSE on any doubt). */
#pragma once

#include "collrun/rails.h"

G_BEGIN_DECLS

/* A watch set: watch i sums the loads of members[off[i] .. off[i + 1])
 * and must stay within cap[i] (below it when strict[i]). */
struct FsCollRails {
  GArray *members; /* FsChannelId, watch by watch */
  GArray *off;     /* guint: watch i's members at [off[i], off[i + 1]) */
  GArray *cap;     /* double per watch: the watched channel's capacity */
  GArray *strict;  /* gboolean per watch: below capacity, not only up to it */
};

/* An empty watch set (fs_coll_rails_free frees it). */
FsCollRails *fs_coll_rails_alloc(void);
/* Adds a watch of the n channels m (a channel listed k times counts k
 * times) within cap, or below it when strict. */
void fs_coll_rails_add_watch(FsCollRails *r, const FsChannelId *m, guint n, double cap,
                             gboolean strict);

/* The root of x in a union-find forest up (up[r] == r at a root), halving
 * the path on the way. */
static inline guint fs_coll_uf_find(guint *up, guint x)
{
  while (up[x] != x)
    x = up[x] = up[up[x]];
  return x;
}

/* One hop's pair: channel a of the transfer mirrored and channel b of its
 * image j (a rail, a rotation). */
typedef struct {
  guint j;
  FsChannelId a, b;
} FsCollAlignTriple;

/* The pairs of channels that aligned hops cross, distinct, in the order
 * first seen. */
typedef struct {
  const FsFlowNet *net;
  FsCollRouteFixedFn fixed;
  FsCollRoutePathsFn paths;
  void *ctx;
  guint nc;          /* the network's channels */
  GHashTable *seen;  /* (j, a, b) packed, distinct */
  GArray *triples;   /* FsCollAlignTriple */
  GArray *w0, *h0, *w, *h; /* scratch: the two routes (exec.h, FsCollRoutePathsFn) */
} FsCollAlign;

void fs_coll_align_init(FsCollAlign *k, const FsFlowNet *net, FsCollRouteFixedFn fixed,
                        FsCollRoutePathsFn paths, void *ctx);
void fs_coll_align_clear(FsCollAlign *k);
/* The transfer from node s0 to d0 and its image j from sj to dj: TRUE
 * when both routes are fixed and align path for path (same shares, same
 * hop counts, same latency hop for hop); their hops' pairs are recorded.
 * j < 256. */
gboolean fs_coll_align_pair(FsCollAlign *k, guint j, int s0, int d0, int sj, int dj);

G_END_DECLS
