/* plan.h — a collective as a DAG of steps, and the table of algorithms
 * that build them.
 *
 * A plan is what one collective call does, independent of the network:
 * transfers (src endpoint → dst endpoint, payload bytes, channel) and
 * local reductions, each with the steps it must wait for.  Endpoints are
 * ranks, the NVLS switch of a host (in-switch reduction over NVLink) or the
 * CollNet/SHARP network switch of a shard; the executor maps them to topology nodes
 * through the communicator.
 *
 * Pipelining follows NCCL: each channel carries its share of the data in
 * chunks (req->chunk_bytes, from the protocol's buffer: buffer/NCCL_STEPS ×
 * chunk steps), and data moves in slices (req->slice_bytes) that flow
 * through the algorithm independently.  A connection (channel, src, dst)
 * is a FIFO: each transfer on it waits for the previous one on it (the
 * builder adds that dependency), so slices of one step leave one after
 * another and the next step's first slice can follow as soon as it has
 * arrived.  A small message is a handful of latency-bound steps; a large
 * one a deep pipeline that keeps every link busy.  (The executor charges
 * the protocol's per-step latency on dependencies between different
 * connections, not on the FIFO order of one connection.)
 *
 * Algorithms register by name in a table of callbacks (fs_coll_algos);
 * the CLI lists them from the table.  Each says which ops it supports on a
 * communicator, and builds the steps through the builder below.
 *
 * Speed (collrun/alone.h): channels that are identical can be folded into one of
 * width k (fs_coll_plan_fold); an algorithm that is a repetition of loops
 * says how many request bytes one loop takes (loop_bytes), so that a run
 * alone on the network can simulate a few loops and extrapolate; one whose
 * loops are alike ring steps says how many (ring_steps), and a request can
 * cut them (max_ring_steps) for step extrapolation; a run that shares the
 * network can ask for coarser slices (max_slices_per_conn).
 *
 * Flow control (conn_slots): NCCL's connection buffers hold NCCL_STEPS
 * buffer steps, so a sender runs at most that many slices ahead of what
 * its receiver has consumed; the builder adds those waits as credits
 * (FsCollStep.n_credits) after building the data dependencies.
 *
 * Ownership: a plan owns its steps and dependency arrays; the algorithm
 * and communicator it names are borrowed (the comm must outlive the plan).
 * Errors: FS_COLL_ERROR_UNSUPPORTED when an algorithm cannot run the op on
 * the communicator, FS_COLL_ERROR_INVALID for a bad request,
 * FS_RUNTIME_ERROR_LIMIT past FS_COLL_PLAN_MAX_STEPS.
 * Cost: O(steps + deps); steps ≈ channels × chunks × (steps per chunk).
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "coll/coll.h"
#include "coll/comm.h"

G_BEGIN_DECLS

/* Endpoints: a rank (0..n-1), the NVLS switch of host index h, or the
 * CollNet switch of shard j, packed into 32 bits. */
typedef uint32_t FsCollEp;
#define FS_EP_KIND_MASK 0xC0000000u
#define FS_EP_RANK_KIND 0x00000000u
#define FS_EP_NVLS_KIND 0x80000000u
#define FS_EP_COLLNET_KIND 0xC0000000u
#define FS_EP_RANK(r) ((FsCollEp)(r))
#define FS_EP_NVLS(h) ((FsCollEp)(FS_EP_NVLS_KIND | (uint32_t)(h)))
#define FS_EP_COLLNET(j) ((FsCollEp)(FS_EP_COLLNET_KIND | (uint32_t)(j)))
#define FS_EP_KIND(ep) ((ep) & FS_EP_KIND_MASK)
#define FS_EP_INDEX(ep) ((ep) & ~FS_EP_KIND_MASK)

/* The most steps one plan may have by default: a resource guard (a ring
 * all_reduce moves about channels × 2n × n transfers per loop, so thousands
 * of ranks on many channels grow quickly).  Beyond the limit in force
 * (req->max_steps, else fs_coll_plan_max_steps()) fs_coll_plan_new fails
 * with FS_RUNTIME_ERROR_LIMIT, naming the guard and FABRICSIM_MAX_STEPS. */
#define FS_COLL_PLAN_MAX_STEPS (1u << 24)
/* The limit in force: $FABRICSIM_MAX_STEPS when it is an integer from 1 to
 * 2^32 - 2 (util/limits.h; read once), else FS_COLL_PLAN_MAX_STEPS. */
guint fs_coll_plan_max_steps(void);

/* "No step": ignored where a dependency is expected. */
#define FS_STEP_NONE UINT32_MAX

typedef enum {
  FS_STEP_XFER,   /* src sends bytes to dst on channel */
  FS_STEP_REDUCE, /* src (a rank) combines bytes locally; dst == src */
} FsCollStepKind;

typedef struct {
  FsCollStepKind kind;
  FsCollEp src, dst;
  uint32_t conn;      /* a transfer's connection (channel, lane, src, dst) as an index
                         0 .. fs_coll_plan_n_conns() − 1, numbered in the order of
                         their first transfer; FS_STEP_NONE for a reduction */
  uint64_t bytes;     /* payload bytes (the protocol's wire overhead is the executor's) */
  uint16_t channel;
  uint8_t lane;       /* FIFO lane within the connection (see fs_plan_xfer_lane) */
  uint8_t width;      /* identical channels this step stands for (1; more in a folded
                         plan, see fs_coll_plan_fold): the executor moves width × bytes
                         at width × the per-flow rate cap */
  uint8_t ring_head;  /* the first transfer of a ring step on its connection, or any
                         transfer of a tree (fs_plan_xfer_ring): across hosts the
                         connection's previous transfer is followed by the executor's
                         ring_step_latency_inter */
  gboolean inter;     /* crosses hosts (network latency class) */
  uint32_t dep_off;   /* dependencies: deps[dep_off .. dep_off + n_deps) */
  uint32_t n_deps;
  uint32_t n_credits; /* then flow-control waits: deps[dep_off + n_deps ..
                         + n_credits) (FsCollRequest.conn_slots); they may
                         point to later steps */
} FsCollStep;

/* What to build. */
typedef struct {
  FsCollOp op;
  uint64_t bytes;       /* FsCollSizes.unit_bytes: the buffer, or the per-rank block */
  FsCollDtype dtype;
  FsCollRedop redop;
  guint root;           /* rooted ops */
  FsCollProto proto;
  guint nchannels;      /* >= 1 */
  uint64_t chunk_bytes; /* payload per pipelined chunk (per rank block per loop), >= 1 */
  uint64_t slice_bytes; /* payload per transfer inside a chunk; 0 = chunk_bytes */
  guint max_steps;      /* resource guard; 0 = fs_coll_plan_max_steps() */
  /* Folding while building (fs_coll_plan_new_folded): the steps it may
   * make, kept or mirrored (not stored), when more than max_steps; the
   * kept ones stay bounded by max_steps.  0 (or at most max_steps): every
   * step made counts against max_steps, as for a whole plan.  For a plan
   * past the guard whole that folding brings under it (collrun/alone.c). */
  guint64 max_virtual;
  /* Slice coarsening, for collectives that share the network with others
   * (where the shortcuts of collrun/alone.h cannot apply): 0 = exact NCCL
   * slicing; N > 0 = chunk and slice sizes are multiplied by the smallest
   * power of two that leaves no connection more than N transfers (or as
   * few as one chunk per channel allows).  Fewer, larger flows simulate
   * faster; the cost is accuracy of the pipeline: filling and draining it
   * takes a larger slice per hop, so a collective whose data is a few
   * slices deep runs longer than exact (measured in tests/test-coll-fast.c
   * and tests/bench/RESULTS.md).  The plan's request records the sizes
   * used. */
  guint max_slices_per_conn;
  /* NCCL's bounded connection buffers: a connection holds NCCL_STEPS buffer
   * steps, i.e. conn_slots = steps / slice_steps transfers (Simple 4,
   * LL and LL128 8: models/nccl/nccl.yaml; the tuner sets it in
   * FsCollChoice).  Transfer k of a connection then waits until every step
   * at the receiver that consumes transfer k − conn_slots (forwards or
   * reduces its data) has completed: the sender cannot run more than the
   * buffer ahead of the receiver.  Without it (0 = unbounded) the lanes of
   * a tree or NVLS tree drift apart and never settle into a periodic
   * regime (collrun/alone.h).  These waits are credits, not data: the executor
   * charges no step latency for them and the latency depth ignores them.
   * A transfer whose data nothing consumes (a final delivery) frees its
   * slot at once. */
  guint conn_slots;
  /* For timing only (alone.h, step extrapolation): ring phases stop after
   * this many ring steps per loop (0 = all of them).  The plan is then not
   * a whole collective, only its first steps. */
  guint max_ring_steps;
  /* For timing alone only (collrun/rails.h): TRUE lets the NVLS tree make
   * only local rank 0's part of every host (its NVLS legs and its shard's
   * tree), where the caller found every local rank's routes aligned with
   * rank 0's (fs_coll_rails_new, whose watches the run then checks) and
   * every chunk splits into equal shards (checked while building); the
   * plan then times as the whole one.  FALSE (and any other algorithm):
   * every rank. */
  gboolean mirror_rails;
  /* For timing alone only (collrun/rotation.h): s > 0 (rotation) with
   * order m >= 2 (rotation_order) lets an algorithm whose channel c + k·s
   * is channel c with every rank rotated by k·s (fs_comm_ring_rotation;
   * NCCL's tree) make only the channels c with c mod (s·m) < s, where the
   * caller lets every class of rotated links run as one (flow.h,
   * fs_flownet_set_alias) and checks its watches; nchannels must be a
   * multiple of s·m and every channel's share equal.  The plan then times
   * as the whole one.  0: every channel. */
  guint rotation, rotation_order;
} FsCollRequest;

typedef struct FsCollPlan FsCollPlan;

/* TRUE when transfers between topology nodes src and dst take the same
 * paths whatever their ECMP key (fs_coll_topo_route_fixed). */
typedef gboolean (*FsCollRouteFixedFn)(void *ctx, int src, int dst);
typedef struct FsCollAlgo FsCollAlgo;
typedef struct FsPlanBuilder FsPlanBuilder;

/* Indices into NCCL's tuning tables (tuning.cc order), or NONE for an
 * algorithm NCCL does not have. */
#define FS_NCCL_ALGOS(X)              \
  X(TREE, "Tree")                     \
  X(RING, "Ring")                     \
  X(COLLNET_DIRECT, "CollNetDirect")  \
  X(COLLNET_CHAIN, "CollNetChain")    \
  X(NVLS, "NVLS")                     \
  X(NVLS_TREE, "NVLSTree")            \
  X(PAT, "PAT")

typedef enum {
#define X(id, name) FS_NCCL_ALGO_##id,
  FS_NCCL_ALGOS(X)
#undef X
  FS_NCCL_ALGO_N,
  FS_NCCL_ALGO_NONE = -1
} FsNcclAlgo;

const char *fs_nccl_algo_name(FsNcclAlgo a);

struct FsCollAlgo {
  const char *name;     /* "ring", "tree", … (command line, output) */
  FsNcclAlgo nccl;      /* NCCL's algorithm, for NCCL_ALGO and the cost model */
  const char *summary;  /* one line for listings */
  /* NULL when op can run on comm; otherwise a static sentence why not. */
  const char *(*unsupported)(const FsComm *comm, FsCollOp op);
  /* Adds the steps of one collective. */
  void (*build)(FsPlanBuilder *b);
  /* Loop structure, for the step guard and the stream model
   * (collrun/alone.h, streams.h); NULL when the plan is not a repetition of
   * identical loops.  The request bytes one loop of
   * one channel consumes: removing k × this from every channel's share of
   * req->bytes (fs_coll_channel_bytes) removes exactly k whole loops from
   * every channel and leaves the rest of the plan (the last, partial loop
   * included) as it was.  0 when it cannot (e.g. not a multiple of the
   * datatype size). */
  uint64_t (*loop_bytes)(const FsComm *comm, const FsCollRequest *req);
  /* Step structure, for step extrapolation (collrun/alone.h); NULL when none: the
   * ring steps in every loop of every channel (2(n-1) for a ring
   * all_reduce), all alike, which FsCollRequest.max_ring_steps truncates.
   * 0 when the plan has no such steps. */
  guint (*ring_steps)(const FsComm *comm, const FsCollRequest *req);
  /* Rotated channels, for a collective timed alone (collrun/rotation.h);
   * NULL when none: for op, the multiple s of shifts under which channel
   * c + s is channel c with every rank rotated by s whenever ring c + s
   * is ring c rotated so (fs_comm_ring_rotation): the channel's steps
   * depend on its ring (and on c mod s) alone, every rank alike; 0 when
   * they do not (a root's chain).  Such an algorithm skips the channels
   * fs_plan_channel_rotated names. */
  guint (*rotates)(FsCollOp op);
};

/* The algorithm table, in listing order, NULL-terminated. */
extern const FsCollAlgo *const fs_coll_algos[];
const FsCollAlgo *fs_coll_algo_find(const char *name);
/* The algorithm that implements NCCL's algorithm a (NULL if none). */
const FsCollAlgo *fs_coll_algo_for_nccl(FsNcclAlgo a);

/* Builds the plan of req with algo on comm; NULL with error when algo
 * does not support it or req is invalid. */
FsCollPlan *fs_coll_plan_new(const FsComm *comm, const FsCollAlgo *algo,
                             const FsCollRequest *req, GError **error);
void fs_coll_plan_free(FsCollPlan *plan);

/* The steps the plan of req would have unfolded, what the plan-step guard
 * counts (of a folded plan too: its steps × its width, unless the request
 * lets folding while building keep fewer, FsCollRequest.max_virtual), into *steps,
 * without storing them: the algorithm runs, nothing is allocated.  For a
 * decision on a plan too large to build (collrun/alone.c).  Errors: those
 * of fs_coll_plan_new's checks of the request; never the guard.  Cost: one
 * call per step. */
gboolean fs_coll_plan_count_steps(const FsComm *comm, const FsCollAlgo *algo,
                                  const FsCollRequest *req, guint64 *steps, GError **error);
/* The steps the plan of req would have unfolded, as fs_coll_plan_count_steps
 * counts them, where req holds F whole loops of q bytes per channel (the
 * last, partial loop kept): for F >= 2 its plans of one and two whole loops
 * are counted and the rest extrapolated (every whole loop adds the same
 * steps), for F < 2 req itself; with mirror_rails off (the guard counts
 * every rank's part).  Into *steps (a double: it may pass 2^64 in
 * principle).  Errors: fs_coll_plan_count_steps's.  Cost: the algorithm's
 * calls for three loops. */
gboolean fs_coll_plan_count_loop_steps(const FsComm *comm, const FsCollAlgo *algo,
                                       const FsCollRequest *req, uint64_t q, guint64 F,
                                       double *steps, GError **error);
/* Channel folding.  Channels whose steps are identical (same transfers
 * between the same topology nodes with the same bytes and the same
 * dependencies, channel for channel) behave identically when the
 * collective runs alone: under max-min sharing, multiplying every flow of
 * the network by the same count k (k copies, same paths) multiplies every
 * rate by k and leaves every time unchanged, so k copies can run as one
 * flow of k × bytes capped at k × the cap.  This returns a plan that keeps
 * 1/k of each class of identical channels with width k, where k is the
 * greatest common divisor of the class sizes (every flow must stand for
 * the same count), or NULL when k would be 1, when a dependency crosses
 * channels, or when a transfer's route may depend on its ECMP key
 * (route_fixed says no for a pair of nodes; the copies could then take
 * different paths).  Exact only for a collective alone on the network.
 * Cost: O(steps + deps) plus one route_fixed call per connection. */
FsCollPlan *fs_coll_plan_fold(const FsCollPlan *plan, FsCollRouteFixedFn route_fixed, void *ctx);
/* The same as fs_coll_plan_fold(fs_coll_plan_new(...)), or the plan of
 * fs_coll_plan_new when that gives NULL, for less: channel by channel, as
 * the algorithms build them, a channel identical to an earlier kept one is
 * dropped when it ends, so the whole plan never exists; while a channel
 * matches an earlier kept one step for step its steps are only compared as
 * they are made (mirrored), not stored, and stored only from the first
 * step that differs (copied from the kept channel up to there) — the same
 * plan for less (tests/test-coll-fast.c compares it with the folded whole
 * plan).  Channels the algorithm makes no step of (those a rotation skips,
 * FsCollRequest.rotation) are one class of empty channels, as in the
 * whole plan (tests/test-rotation.c).  Where that does not give the same plan (the
 * channels' shares differ, a class would keep several members, a step
 * comes out of channel order, a dependency leaves its channel) it builds
 * the whole plan and folds it.  Errors: those of fs_coll_plan_new. */
FsCollPlan *fs_coll_plan_new_folded(const FsComm *comm, const FsCollAlgo *algo,
                                    const FsCollRequest *req, FsCollRouteFixedFn route_fixed,
                                    void *ctx, GError **error);
/* TRUE when fs_coll_plan_new_folded folded the plan while building it,
 * FALSE when it built the whole plan (and folded that), and for any other
 * plan: the two give the same plan, the first for less (a test's check
 * that the cheap way was taken). */
gboolean fs_coll_plan_folded_while_built(const FsCollPlan *plan);
/* The width of a folded plan's steps (1 for a plan that is not folded). */
guint fs_coll_plan_width(const FsCollPlan *plan);
/* TRUE when fixed(ctx, a, b) holds for the topology nodes a, b of every
 * connection of p (one question per connection, in the order of their
 * first transfer; FALSE at the first that does not hold, or at an
 * endpoint without a node).  Folding asks it whether routes are fixed
 * (FsCollRouteFixedFn); other questions of a node pair fit too.  Cost:
 * O(steps) plus the calls.  plan-fold.c. */
gboolean fs_coll_plan_routes_fixed(const FsCollPlan *p, FsCollRouteFixedFn fixed, void *ctx);

/* The most transfers any connection (channel, lane, src, dst) carries. */
guint fs_coll_plan_max_conn_xfers(const FsCollPlan *plan);
/* How many connections the plan's transfers use (FsCollStep.conn is below
 * it): a table indexed by it replaces a lookup per transfer.  O(1). */
guint fs_coll_plan_n_conns(const FsCollPlan *plan);
/* Channel ch's share of bytes split over nchannels (what fs_plan_split
 * gives the algorithms: whole elements of dtype, the remainder to the last
 * channel). */
uint64_t fs_coll_channel_bytes(uint64_t bytes, FsCollDtype dtype, guint nchannels, guint ch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollPlan, fs_coll_plan_free)

const FsCollRequest *fs_coll_plan_request(const FsCollPlan *plan);
const FsCollAlgo *fs_coll_plan_algo(const FsCollPlan *plan);
const FsComm *fs_coll_plan_comm(const FsCollPlan *plan);
guint fs_coll_plan_n_steps(const FsCollPlan *plan);
/* The steps are stored contiguously in id order: &fs_coll_plan_step(p, 0)[i]
 * is step i for every i < n_steps (the executor indexes them so). */
const FsCollStep *fs_coll_plan_step(const FsCollPlan *plan, guint i);
/* TRUE when steps a and b are transfers on the same connection (channel,
 * lane, src, dst): a dependency between them is FIFO order, not data. */
static inline gboolean fs_coll_step_same_conn(const FsCollStep *a, const FsCollStep *b)
{
  return a->kind == FS_STEP_XFER && b->kind == FS_STEP_XFER && a->src == b->src &&
         a->dst == b->dst && a->channel == b->channel && a->lane == b->lane;
}
/* The topology node of endpoint ep for a step on channel ch (a rank's
 * GPU, a host's NVLS switch for that channel, a shard's CollNet switch);
 * -1 if none. */
int fs_coll_ep_node(const FsComm *comm, FsCollEp ep, guint ch);
/* Dependencies of step i (borrowed), count in *n.  Data and FIFO order
 * only: they always point to earlier steps. */
const uint32_t *fs_coll_plan_deps(const FsCollPlan *plan, guint i, guint *n);
/* Flow-control waits of step i (FsCollRequest.conn_slots; borrowed), count
 * in *n: steps that must complete before it starts, earlier or later in
 * step order. */
const uint32_t *fs_coll_plan_credits(const FsCollPlan *plan, guint i, guint *n);
/* Every step's dependencies and credits back to back (borrowed; NULL when
 * the plan has none): step s's are [s->dep_off, s->dep_off + s->n_deps),
 * its credits the s->n_credits after them.  For loops over the whole plan
 * (the executor's successor lists), instead of two calls per step.  O(1). */
const uint32_t *fs_coll_plan_dep_array(const FsCollPlan *plan);
/* Counts: transfers, reductions, payload bytes sent by transfers. */
guint fs_coll_plan_n_xfers(const FsCollPlan *plan);
uint64_t fs_coll_plan_xfer_bytes(const FsCollPlan *plan);
/* Length in steps of the longest dependency chain (the latency-bound
 * critical path). */
guint fs_coll_plan_depth(const FsCollPlan *plan);
/* The most latency-charged hops on one dependency chain: dependencies on a
 * transfer of another connection, plus the final delivery (what the
 * executor charges a per-step latency for; see collrun/exec.h).  For a tiny
 * message the run takes base + this × step latency. */
guint fs_coll_plan_latency_depth(const FsCollPlan *plan);
/* A one-line description: "ring all_reduce 8 ranks 2 ch LL128: 224 steps". */
char *fs_coll_plan_describe(const FsCollPlan *plan);

/* ---- For algorithm files ---------------------------------------------- */

const FsComm *fs_plan_comm(const FsPlanBuilder *b);
const FsCollRequest *fs_plan_req(const FsPlanBuilder *b);
/* Whether the plan has passed its step limit (every further step is
 * dropped and the plan fails): loops over chunks may stop early. */
gboolean fs_plan_overflowed(const FsPlanBuilder *b);
/* Adds a transfer.  deps (n entries, FS_STEP_NONE ignored) plus the
 * previous transfer on the same connection.  Returns the step id. */
uint32_t fs_plan_xfer(FsPlanBuilder *b, guint channel, FsCollEp src, FsCollEp dst,
                      uint64_t bytes, const uint32_t *deps, guint n);
/* The same on FIFO lane `lane` of the connection: transfers on different
 * lanes of one connection are independent (NCCL runs them from different
 * warps, e.g. NVLS's reduce-scatter and all-gather halves). */
/* The same, the first transfer of a ring step on its connection (FsCollStep.ring_head): a
 * ring's loop marks its steps' first slices so that the executor can charge NCCL's network
 * step between consecutive steps of a connection across hosts (collrun/exec.h); a tree marks
 * every chunk, which its proxy's posts separate (algo-tree.c). */
uint32_t fs_plan_xfer_ring(FsPlanBuilder *b, guint channel, FsCollEp src, FsCollEp dst,
                           uint64_t bytes, const uint32_t *deps, guint n);
uint32_t fs_plan_xfer_lane(FsPlanBuilder *b, guint channel, guint lane, FsCollEp src,
                           FsCollEp dst, uint64_t bytes, const uint32_t *deps, guint n);
/* Adds a local reduction of bytes at rank (on the channel of the last
 * transfer added, for folding). */
uint32_t fs_plan_reduce(FsPlanBuilder *b, guint rank, uint64_t bytes, const uint32_t *deps,
                        guint n);
/* Called by an algorithm before it makes channel ch's steps, when it knows
 * that they are channel r's for every r = ch − step, ch − 2·step, … ≥ 0
 * (same kinds, endpoints, bytes and dependencies within the channel) but
 * for the topology node each channel's NVLS switch endpoints stand for.
 * TRUE: the builder, folding while building (fs_coll_plan_new_folded),
 * takes ch as a mirror of such an r whose NVLS switches are ch's on every
 * host, and the algorithm must skip channel ch (make none of its steps).
 * FALSE: make the channel as usual (always so for a plain build, when
 * counting, past the guard, or when folding this way has failed).  With
 * FABRICSIM_CHECK_MIRRORS=1 (the default of a build without
 * FS_RELEASE, i.e. every build but `--buildtype=release`) it returns FALSE
 * and checks instead, when the channel ends, that it was found equal to
 * the kept channel it would have mirrored (a g_error if not: the
 * algorithm's claim was wrong).  O(hosts × candidates). */
gboolean fs_plan_channel_mirrored(FsPlanBuilder *b, guint ch, guint step);
/* Called by an algorithm before it makes channel ch's steps, when its
 * channel c + k·s is channel c's with every rank rotated by k·s
 * (fs_comm_rotate_rank) for the request's rotation s: TRUE when the
 * request lets it make only the channels c mod (s·m) < s
 * (FsCollRequest.rotation) and ch is another, whose steps it must then
 * not make.  FALSE when counting (the guard counts every channel). */
gboolean fs_plan_channel_rotated(const FsPlanBuilder *b, guint ch);
/* Whether an algorithm's claims of mirrored or rotated channels are
 * checked (a build without FS_RELEASE, or FABRICSIM_CHECK_MIRRORS=1;
 * =0 turns it off). */
gboolean fs_plan_check_mirrors(void);
/* Part i of total split into parts pieces (sizes differ by at most one
 * element of the request's datatype; the remainder goes to the last). */
uint64_t fs_plan_split(const FsPlanBuilder *b, uint64_t total, guint parts, guint i);

/* Binary-tree shape used by the tree algorithms (NCCL's btree: rank 0 is
 * the root with one child; nodes are numbered 0..n-1).  tree 1 is the
 * complementary tree (shifted when n is odd, mirrored when even), so that
 * leaves of one are inner nodes of the other.  -1 for none. */
void fs_coll_btree(guint n, guint tree, guint node, int *parent, int *child0, int *child1);

G_END_DECLS
