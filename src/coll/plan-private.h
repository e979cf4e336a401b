/* plan-private.h — what the files of the collective plan share (private to
 * src/coll/): the plan's arrays (struct FsCollPlan), the builder's state
 * (struct FsPlanBuilder: its connection table and the state of folding while
 * building) and the calls between the builder (plan-build.c), folding while
 * building (plan-mirror.c) and folding a whole plan (plan-fold.c).  The public
 * API is plan.h. */
#ifndef FS_COLL_PLAN_PRIVATE_H
#define FS_COLL_PLAN_PRIVATE_H

#include "coll/plan.h"

struct FsCollPlan {
  FsCollRequest req;
  const FsCollAlgo *algo;
  const FsComm *comm;
  GArray *steps;  /* FsCollStep */
  GArray *deps;   /* uint32_t */
  guint n_xfers;
  uint64_t xfer_bytes;
  guint width;     /* channels each step stands for (fs_coll_plan_fold) */
  guint max_conn;  /* most transfers on one connection */
  guint n_conns;   /* connections (FsCollStep.conn) */
  guint lat_depth; /* fs_coll_plan_latency_depth + 1, once computed (0: not yet) */
  gboolean folded_while_built; /* fs_coll_plan_folded_while_built */
};

/* A connection: its last transfer is kept for the FIFO dependency. */
typedef struct {
  uint32_t src, dst, channel, lane;
} ConnKey;

/* A connection's entry in the builder's table (ConnTable): its key, its
 * last transfer, its index (FsCollStep.conn) and the next entry of its
 * chain; count 0: made by the lookup, no transfer stored yet. */
typedef struct {
  ConnKey key;
  uint32_t last;
  uint32_t count;  /* transfers on the connection */
  uint32_t id;
  uint32_t next;   /* in the pool; FS_STEP_NONE ends the chain */
} ConnEntry;

/* The builder's connections, looked up once per transfer (the builder's
 * inner loop): entries in one pool in the order they were made, chained
 * per (channel, source endpoint) from a head array per channel indexed by
 * the source (ranks, then NVLS switches, then CollNet switches, each
 * index modulo the communicator's size: a chain compares whole keys; a
 * switch's connections to ranks by the receiving rank instead).  A
 * source has a few connections per channel, and the algorithms make the
 * transfers of one channel rank after rank, so a lookup reads one head
 * near the last one and entries made together: no hashing, no allocation
 * per connection, few cache misses on thousands of ranks.  Where sources
 * have many connections (the direct alltoall: n − 1 per rank and
 * channel), each source's slot splits into `spread` slots by the other
 * endpoint, spread doubling (and every chain rebuilt) whenever the
 * connections exceed 4 per slot in use: chains stay short, and the build
 * O(connections) instead of O(n) per lookup. */
#define FS_PLAN_CONN_TABLES 64

typedef struct {
  ConnEntry *pool;
  guint n, cap;
  guint n_ep;                          /* slots per endpoint kind: the communicator's size */
  guint spread;                        /* slots per endpoint (a power of two; 0 is 1) */
  guint n_tables;                      /* head arrays in use */
  uint32_t *head[FS_PLAN_CONN_TABLES]; /* by channel (mod); NULL: not used yet */
} ConnTable;

/* Folding while building (fs_coll_plan_new_folded): the algorithm still
 * makes every step, but a channel that turns out identical to an earlier
 * kept one (compared when it ends; algorithms build channel by channel) is
 * dropped from the arrays at once.  Step ids given to the algorithm are
 * then virtual (every step made, in order), stored ids are those kept. */
typedef struct {
  gboolean on;
  gboolean failed;    /* cannot fold this way: the caller builds and folds */
  guint cur;          /* channel being made (G_MAXUINT: none yet) */
  uint32_t vcount;    /* steps made */
  uint32_t vbase[64]; /* virtual id of channel c's first step */
  uint32_t sbase[64]; /* stored id of channel c's first step (while kept) */
  uint32_t cbase[64]; /* the plan's connection count when channel c began */
  guint rep[64];      /* the kept channel c equals (c itself when kept) */
  guint size[64];     /* channels equal to kept channel c, c included */
  guint count[64];    /* steps of kept channel c */
  gboolean seen[64];
  gboolean open;      /* channel cur has steps made and has not ended */
  /* fs_plan_channel_mirrored: expect[c], the kept channel c was found to
   * mirror without being made, or, when checking, must be found equal to
   * when it ends (G_MAXUINT: none claimed; set once a claim is made). */
  guint expect[64];
  gboolean claimed;   /* expect[] is filled */
  /* Mirroring: while the channel being made matches, step for step so far,
   * one or more kept channels (the bits of `alive`), its steps are only
   * compared with theirs (fold_mirror), not stored; when the last match
   * fails, or the channel ends without an equal, the steps made so far are
   * copied from a channel that matched them (fold_materialize) and the
   * build goes on storing.  The plan comes out the same as storing every
   * step and comparing at the channel's end (fold_equal), for less. */
  guint64 kept;       /* bit c: channel c is kept */
  guint64 alive;      /* kept channels the current one still matches */
  gboolean mirror;    /* the current channel's steps are not stored (yet) */
  guint64 nvls_same;  /* bit r: kept channel r's NVLS switches are the current one's */
} FoldBuild;

struct FsPlanBuilder {
  FsCollPlan *plan;
  GArray *fifo_prev; /* uint32_t per step: the previous transfer on its connection */
  gboolean overflow;  /* past FS_COLL_PLAN_MAX_STEPS: further steps are dropped */
  ConnTable conns;
  guint cur_channel; /* channel of the last transfer (for reductions) */
  FoldBuild fold;
  guint steps_cap, deps_cap, fifo_cap; /* elements allocated (see reserve) */
  /* fs_coll_plan_count_steps: steps are counted, not stored; every one
   * gets id 0 (a step, never FS_STEP_NONE, so the algorithm's choices
   * stay those of a real build). */
  gboolean count_only;
  guint64 counted;
};

/* Makes room for `need` elements in a (GArray of plain elements, no
 * clearing) without changing its length, doubling the allocation: the
 * builder then writes elements and sets a->len itself, one store per step
 * instead of a GLib call per element. */
static inline void reserve(GArray *a, guint *cap, guint need)
{
  if (need <= *cap)
    return;
  guint len = a->len, c = MAX(MAX(need, *cap * 2), 256u);
  g_array_set_size(a, c);
  a->len = len;
  *cap = c;
}

/* Unchecked accessors for the builder's and the folds' loops (i < n_steps by
 * construction). */
static inline const FsCollStep *fs_coll_plan_step_at(const FsCollPlan *p, guint i)
{
  return &g_array_index(p->steps, FsCollStep, i);
}

static inline const uint32_t *fs_coll_plan_deps_at(const FsCollPlan *p, guint i, guint *n)
{
  const FsCollStep *s = fs_coll_plan_step_at(p, i);
  *n = s->n_deps;
  return s->n_deps ? &g_array_index(p->deps, uint32_t, s->dep_off) : NULL;
}

/* The entry of connection k in t; a new one (count 0, chained, not
 * numbered) when there is none.  Grows t's pool; O(connections of k's
 * source endpoint on k's channel).  plan-build.c. */
ConnEntry *fs_plan_conn_get(ConnTable *t, const ConnKey *k);

/* The plan-step guard (plan.h): TRUE when the next step would pass it.  A
 * plan built whole: its steps past max_steps.  A plan folded while built:
 * the steps made (kept or mirrored) past max_steps, or, when the request
 * allows more (FsCollRequest.max_virtual), the steps kept past max_steps
 * or those made past max_virtual (and FS_PLAN_MAX_VIRTUAL); once its
 * folding failed, the steps made past max_steps (the whole plan is built
 * next).  plan-build.c. */
gboolean fs_plan_at_guard(const FsPlanBuilder *b);
/* The steps a plan folded while built may make, kept or mirrored (the
 * part of the guard above that a mirrored step, not stored, must pass).
 * plan-build.c. */
guint64 fs_plan_virtual_limit(const FsPlanBuilder *b);
/* Virtual step ids of a plan folded while built stay below this (they are
 * uint32_t, FS_STEP_NONE excluded). */
#define FS_PLAN_MAX_VIRTUAL (UINT32_MAX - 1u)

/* Folding while building (plan-mirror.c): the stored id of virtual id v, a
 * step of the channel being made; sets FoldBuild.failed (and returns 0)
 * when v lies before that channel. */
uint32_t fs_plan_fold_stored(FsPlanBuilder *b, uint32_t v);

/* Folding while building (plan-mirror.c): a step of channel ch is about to
 * be made; starts ch (ending the channel before it) when it is new.  FALSE
 * when folding this way fails (the step is then not stored). */
gboolean fs_plan_fold_step(FsPlanBuilder *b, guint ch);

/* Mirroring (plan-mirror.c): TRUE with s's virtual id in *id when the
 * channel being made still matches a kept channel step for step and s is
 * that channel's step there (nothing is stored); FALSE: store s as usual
 * (the steps mirrored so far have then been stored). */
gboolean fs_plan_fold_mirror(FsPlanBuilder *b, const FsCollStep *s, const uint32_t *deps, guint n,
                             uint32_t *id);

/* Folding while building, once the algorithm is done (plan-mirror.c): TRUE
 * when the kept channels are the plan fs_coll_plan_fold gives (the plan's
 * width and totals are then set); FALSE: build the whole plan and fold it. */
gboolean fs_plan_fold_finish(FsPlanBuilder *b, FsCollRouteFixedFn route_fixed, void *ctx);

#endif
