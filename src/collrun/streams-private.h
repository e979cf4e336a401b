/* streams-private.h — the stream model's inside, shared by its two files:
 * streams.c (the streams: connections numbered into streams, their routes
 * and the links they load, families of a sweep's memo, the skeletons'
 * grid and the runs on the network) and streams-sched.c (the schedule of a
 * skeleton: its max-plus evaluation at the streams' rates, the links'
 * deficit of that schedule, its repair to the links' capacity).  Not for
 * other modules: they use streams.h.
 */
#pragma once

#include "collrun/exec-params.h"
#include "collrun/streams.h"

G_BEGIN_DECLS

/* A connection: what makes a stream (exec.c keys its transfers so). */
typedef struct {
  guint32 channel, lane;
  FsCollEp src, dst;
} ConnKey;

typedef struct {
  ConnKey k;
  int src_node, dst_node;
  uint64_t key;  /* the ECMP key of its transfers (exec.c conn_key) */
  double wire;   /* its wire bytes in the full collective */
  double t;      /* seconds its busiest link (or cap) needs for the whole run */
  double lat;    /* ps: its slowest path's latency */
  double cap;    /* bytes/s: its rate cap (flow cap × width), 0 = none */
  guint width;   /* identical connections it stands for (a folded skeleton) */
  gboolean inter; /* it crosses hosts (FsCollStep.inter): rate_cap_inter applies */
} Stream;

/* A skeleton: a cut plan, each of its steps' stream (G_MAXUINT32 for a
 * reduction), and the wire bytes it puts on every stream. */
typedef struct {
  FsCollPlan *plan;
  guint32 *conn;
  GArray *wire; /* double per stream */
  double depth;
  double time;  /* ps, max-plus, the schedule repaired to the links' capacity */
  double time0; /* ps, max-plus at the streams' own rates (no repair) */
  gboolean cached; /* a copy of a memo's skeleton: its plan, conn and wire are the memo's */
  guint passes;    /* relaxation passes made (streams_skel_time) */
} Skel;

/* The streams' paths, found once per stream: path p of stream i is
 * w[first[i] + p] with its hops at hops[hop_off[first[i] + p]] (its hop
 * count, then its channels); first[i] == G_MAXUINT: not routed yet. */
typedef struct {
  GArray *first; /* guint per stream, then its path count: 2 per stream */
  GArray *w;     /* double per path */
  GArray *hop_off; /* guint per path */
  GArray *hops;  /* FsChannelId */
  GArray *tw, *th; /* scratch: one stream's weights and hops as the route callback gives them */
} Routes;

/* A family of a sweep's memo (streams.c). */
typedef struct Family Family;

typedef struct {
  const FsComm *comm;
  const FsCollRequest *req;
  const FsCollStreamsOpts *opts;
  FsFlowNet *net;
  gboolean shared_links; /* relaxed over all its links at once (streams.h: tree, CollNet, NVLS) */
  uint64_t key;
  double payload;
  /* The connections numbered so far and their first figures (the
   * family's when a memo is used, else the model's own): */
  GHashTable *conns; /* ConnKey* (owned) → index + 1 */
  GArray *tmpl;      /* Stream, cap holding the width */
  Routes *routes;
  GArray *streams;   /* Stream: this model's figures, from tmpl at each attempt */
  Family *fam;       /* the memo's family, or NULL */
  /* The loaded links (maxmin): their time for their full-size bytes (ps)
   * and the streams crossing each (CSR), from pace(). */
  guint n_links;
  FsChannelId *links;
  double *link_need;
  guint *inc_off;
  guint32 *inc;
  double *inc_w; /* the share of the stream's bytes on the link */
  guint *link_rep; /* per link, the first with the same streams in the same order, the
                     same shares and capacity (pace): the schedule's figures of one are
                     the other's, so the repair and the deficit compute a class once */
} Ctx;

/* The value at `to` of a quantity measured at three equally spaced counts
 * at[] (or at one: then it is that value); *agree (when not NULL) is set
 * FALSE where the two slopes disagree by more than tol (relative).
 * Cost: O(1). */
double streams_extrap(const double v[3], const guint64 at[3], guint n, guint64 to, gboolean *agree,
                      double tol);

/* The relaxation of a repaired schedule (streams_skel_time with relax):
 * at most STREAMS_RELAX_PASSES passes, until no transfer's stretch
 * changes by more than STREAMS_RELAX_TOL (relative). */
#define STREAMS_RELAX_PASSES 64
#define STREAMS_RELAX_TOL 1e-6
/* How closely a relaxed skeleton's times per loop must agree (streams.c):
 * the relaxation's fixed point is found to STREAMS_RELAX_TOL per transfer,
 * and the loops of one steady state then agree to 1e-4 (NVLS tree, 4 DGX
 * H100 nodes), those of a filling pipeline differ by percents. */
#define STREAMS_RELAX_AGREE 1e-3
/* The most steps the whole plan may have for a model's schedules to be
 * relaxed (streams.c; a pass costs about a repair, up to
 * STREAMS_RELAX_PASSES of them), and its grids too: the whole 256 MiB NVLS
 * tree on 16 DGX H100 nodes has 49 K, 1 GiB on 4 nodes 47 K. */
#define STREAMS_RELAX_MAX_SKELETON (1u << 16)

/* Skeleton k's max-plus times: k->time0 at the streams' own rates (with
 * the links' deficit of that schedule into busy[link], in ps, when c has
 * loaded links) and k->time with the schedule repaired once to the links'
 * capacity, then with relax relaxed to a fixed point, each pass a repair
 * that lets a stretch shrink where the max-min shares allow (streams.h;
 * with c->shared_links, each pass shares all the links at once).  xa, xb: scratch of a double per step of k's plan.  Needs c's
 * streams paced (their t, lat and wire) and its links loaded (pace in
 * streams.c).  Cost: two max-plus passes over the plan's steps (in plan
 * order when every step depends only on earlier ones, else in dependency
 * order over a successor graph made once) and, per class of loaded links
 * (Ctx.link_rep), a merge sort of its transfers' sending intervals and of
 * their start and end events. */
void streams_skel_time(const Ctx *c, Skel *k, const FsCollExecParams *ep, double payload,
                       gboolean relax, double *xa, double *xb, double *busy);

G_END_DECLS
