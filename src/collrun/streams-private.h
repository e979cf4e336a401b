/* streams-private.h — the stream model's inside, shared by its files:
 * streams.c (the streams: connections numbered into streams, their routes
 * and the links they load, families of a sweep's memo, the skeletons'
 * grid), streams-sched.c (the schedule of a skeleton: its max-plus
 * evaluation at the streams' rates, the links' deficit of that schedule,
 * its repair to the links' capacity, its whole run) and streams-run.c (a
 * model run on the network).  Not for other modules: they use streams.h
 * (streams-pick.c, the rule of --exec auto, needs nothing of this).
 */
#pragma once

#include "collrun/exec-params.h"
#include "collrun/streams.h"

G_BEGIN_DECLS

/* A stream model (streams.h): built by streams.c, run by streams-run.c. */
struct FsCollStreams {
  GArray *streams; /* Stream */
  FsCollExecParams ep;
  double mp;       /* ps after the base latency: the max-plus time of the full collective */
  double t_bw;     /* seconds */
  FsCollStreamsInfo info;
};

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

/* A skeleton's plan as max-plus walks it (streams-sched.c): its steps'
 * wire bytes and edges, for one payload, not for the latencies of one
 * FsCollExecParams, so a memo's skeleton keeps it for every size. */
typedef struct StreamsDag StreamsDag;

/* A skeleton: a cut plan, each of its steps' stream (G_MAXUINT32 for a
 * reduction), the wire bytes it puts on every stream, and its StreamsDag
 * once timed. */
typedef struct Skel {
  FsCollPlan *plan;
  guint32 *conn;
  GArray *wire; /* double per stream */
  double depth;
  double time;  /* ps, max-plus, the schedule repaired to the links' capacity */
  double time0; /* ps, max-plus at the streams' own rates (no repair) */
  gboolean cached; /* a copy of a memo's skeleton: its plan, conn, wire and dag are the memo's */
  StreamsDag *dag;  /* made by streams_skel_time when first timed (owned unless cached) */
  struct Skel *home; /* a copy of a memo's skeleton: that skeleton (its dag is kept there) */
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
  uint64_t key;
  double payload;
  gboolean unfold;   /* the full plan is built unfolded (streams.c, a whole run) */
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

/* The most steps the whole plan of a collective that runs whole where it
 * is small (streams.c, runs_whole) may have to run on its own network
 * (streams_skel_time; the run costs what the step executor takes for the
 * folded plan): the whole 256 MiB NVLS tree on 16 DGX H100 nodes has
 * 49 K, 1 GiB on 4 nodes 47 K, NVLS LL across 2 nodes 197 K. */
#define STREAMS_WHOLE_MAX_STEPS (1u << 18)
/* The relative agreement of the times per unit of skeletons run on their
 * own network (a ring whose streams share links, streams.c): their
 * flow-network times drift by up to a few 1e-3 per ring step from one
 * count to the next (ring LL128 on 4 x 4 DGX H100 GPUs: 56.77, 56.66,
 * 56.57 us per 4 ring steps), so the counts double to the whole plan
 * where a tighter check would fail and the budget allows. */
#define STREAMS_RUN_TOL 1e-3
/* The most steps such a whole plan may have unfolded to run unfolded
 * (streams.c): the folded plans of the chains of broadcast and reduce are
 * up to 1.4 % off the exact ones; a run of 2^18 unfolded steps took 1-2 s
 * (the ring broadcast of 1 GiB on 32 DGX H100 nodes: 1.3 s, the folded
 * step run 0.7 s), of 2^16 about a quarter of that. */
#define STREAMS_WHOLE_UNFOLD_STEPS (1u << 16)

/* k's StreamsDag for wire bytes counted with payload (bytes a wire
 * packet carries).  Cost: O(k's steps and edges). */
StreamsDag *streams_dag_new(const Skel *k, double payload);
void streams_dag_free(StreamsDag *g);

/* Skeleton k's times: k->time0, max-plus at the streams' own rates, and
 * k->time: with run (a whole plan), the step executor's run of k's plan
 * on a network of its own (the channels its streams cross, at their
 * capacity and latency: the flow network's max-min shares event by event,
 * streams.h), else that schedule repaired once to the links' capacity,
 * with the links' deficit of the first schedule into busy[link], in ps,
 * when c has loaded links.
 * xa, xb: scratch of a double per step of k's plan.  Needs c's streams
 * paced (their t, lat and wire, their routes) and its links loaded (pace
 * in streams.c).  FALSE with error where the run fails.  Cost: a max-plus
 * pass over the plan's steps (in plan order when every step depends only
 * on earlier ones, else in dependency order over a successor graph made
 * once); then the run, the executor's cost for the plan, or per class of
 * loaded links (Ctx.link_rep) a merge sort of its transfers' sending
 * intervals and of their start and end events and a second max-plus pass. */
gboolean streams_skel_time(const Ctx *c, Skel *k, const FsCollExecParams *ep, double payload,
                           gboolean run, double *xa, double *xb, double *busy, GError **error);

G_END_DECLS
