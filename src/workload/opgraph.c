/* opgraph.c — the op graph and its event-driven run (see opgraph.h). */
#include "workload/opgraph.h"

#include <string.h>

#include "coll/plan.h"
#include "collrun/alone.h"
#include "collrun/exec-params.h"
#include "collrun/exec.h"
#include "collrun/streams.h"
#include "util/error.h"

static const char *const kind_names[] = {
#define X(id, str) str,
  FS_OP_KINDS(X)
#undef X
};
static const char *const cat_names[] = {
#define X(id, str) str,
  FS_OP_CATS(X)
#undef X
};

const char *fs_op_kind_name(FsOpKind k) { return (guint)k < FS_OP_N_KINDS ? kind_names[k] : "?"; }
const char *fs_op_cat_name(FsOpCat c) { return (guint)c < FS_CAT_N ? cat_names[c] : "?"; }
gboolean fs_op_cat_is_comm(FsOpCat c) { return c >= FS_CAT_TP && c <= FS_CAT_COMM; }

/* A communicator: its GPU nodes, and once a collective runs on it, the
 * FsComm, NCCL's view of it and the plans built so far. */
typedef struct {
  char *name;
  guint *gpus;
  guint n;
  FsComm *comm;
  FsCollSysInfo sys;
  GPtrArray *plans;      /* CachedPlan */
  gboolean streams;      /* trusted collectives as streams (fs_opgraph_comm_set_streams) */
} Comm;

typedef struct {
  FsCollOp op;
  uint64_t unit;
  FsCollPlan *plan;         /* NULL when it runs as streams */
  FsCollStreams *streams;   /* the stream model (FsOpEnv.exec), else NULL */
  FsCollExecParams params;
} CachedPlan;

typedef struct {
  guint comm;
  FsCollOp op;
  uint64_t unit;
  guint expected, joined;
  gboolean fixed;        /* expected set by fs_opgraph_set_coll_expected */
  GArray *members;       /* guint32 op ids */
  FsCollRun *run;
  FsCollStreamsRun *srun;  /* instead of run, as streams (FsOpEnv.exec) */
  void *done_ctx;        /* the run's CollCtx until coll_done frees it (an interrupted
                            run never calls it: fs_opgraph_free does) */
} Coll;

typedef struct {
  guint32 op, dep;
} Edge;

/* A host thread of the host model (fs_opgraph_set_host). */
typedef struct {
  GArray *ops;           /* guint32: its ops in program order */
  guint next;            /* run: the first op not yet issued */
  guint ended;           /* run: the length of the prefix of ops that have ended */
  FsTime clock;          /* run: when the host is free to issue ops[next] */
} Host;

struct FsOpGraph {
  GArray *ops;           /* FsOp */
  GArray *streams;       /* FsStream */
  GArray *edges;         /* Edge */
  GArray *comms;         /* Comm */
  GArray *colls;         /* Coll */
  GArray *hosts;         /* Host */
  GStringChunk *strings;
  GHashTable *interned;  /* string → interned copy (lookup only; never iterated) */
  /* Run state. */
  uint32_t *succ_off, *succ;   /* successors, CSR */
  uint32_t *pred_off, *pred;   /* predecessors, CSR */
  const FsOpEnv *env;
  GError *error;
  uint64_t key;
  FsTime end;
};

FsOpGraph *fs_opgraph_new(void)
{
  FsOpGraph *g = g_new0(FsOpGraph, 1);
  g->ops = g_array_new(FALSE, FALSE, sizeof(FsOp));
  g->streams = g_array_new(FALSE, FALSE, sizeof(FsStream));
  g->edges = g_array_new(FALSE, FALSE, sizeof(Edge));
  g->comms = g_array_new(FALSE, FALSE, sizeof(Comm));
  g->colls = g_array_new(FALSE, FALSE, sizeof(Coll));
  g->hosts = g_array_new(FALSE, FALSE, sizeof(Host));
  g->strings = g_string_chunk_new(4096);
  g->interned = g_hash_table_new(g_str_hash, g_str_equal);
  return g;
}

void fs_opgraph_free(FsOpGraph *g)
{
  if (g == NULL)
    return;
  for (guint i = 0; i < g->streams->len; i++)
    g_free(g_array_index(g->streams, FsStream, i).name);
  for (guint i = 0; i < g->colls->len; i++) {
    Coll *c = &g_array_index(g->colls, Coll, i);
    g_array_unref(c->members);
    fs_coll_run_free(c->run);
    fs_coll_streams_run_free(c->srun);
    g_free(c->done_ctx);
  }
  for (guint i = 0; i < g->comms->len; i++) {
    Comm *c = &g_array_index(g->comms, Comm, i);
    g_free(c->name);
    g_free(c->gpus);
    if (c->plans != NULL)
      g_ptr_array_unref(c->plans);
    fs_comm_free(c->comm);
  }
  for (guint i = 0; i < g->hosts->len; i++)
    g_array_unref(g_array_index(g->hosts, Host, i).ops);
  g_array_unref(g->hosts);
  g_array_unref(g->ops);
  g_array_unref(g->streams);
  g_array_unref(g->edges);
  g_array_unref(g->comms);
  g_array_unref(g->colls);
  g_string_chunk_free(g->strings);
  g_hash_table_unref(g->interned);
  g_free(g->succ_off);
  g_free(g->succ);
  g_free(g->pred_off);
  g_free(g->pred);
  g_clear_error(&g->error);
  g_free(g);
}

const char *fs_opgraph_intern(FsOpGraph *g, const char *s)
{
  if (s == NULL)
    return NULL;
  const char *found = g_hash_table_lookup(g->interned, s);
  if (found == NULL) {
    found = g_string_chunk_insert(g->strings, s);
    g_hash_table_insert(g->interned, (gpointer)found, (gpointer)found);
  }
  return found;
}

guint fs_opgraph_add_stream(FsOpGraph *g, const char *name, guint rank, int gpu, gboolean compute)
{
  FsStream s = { .name = g_strdup(name), .rank = rank, .gpu = gpu, .compute = compute,
                 .last = FS_OP_NONE };
  g_array_append_val(g->streams, s);
  return g->streams->len - 1;
}

guint fs_opgraph_n_streams(const FsOpGraph *g) { return g->streams->len; }
const FsStream *fs_opgraph_stream(const FsOpGraph *g, guint i)
{
  return &g_array_index(g->streams, FsStream, i);
}

guint fs_opgraph_add_comm(FsOpGraph *g, const char *name, const guint *gpus, guint n)
{
  Comm c = { .name = g_strdup(name), .gpus = g_memdup2(gpus, n * sizeof(guint)), .n = n };
  g_array_append_val(g->comms, c);
  return g->comms->len - 1;
}

void fs_opgraph_comm_set_streams(FsOpGraph *g, guint comm)
{
  g_return_if_fail(comm < g->comms->len);
  g_array_index(g->comms, Comm, comm).streams = TRUE;
}

guint fs_opgraph_add_coll(FsOpGraph *g, guint comm, FsCollOp op, uint64_t unit_bytes)
{
  g_return_val_if_fail(comm < g->comms->len, 0);
  Coll c = { .comm = comm, .op = op, .unit = unit_bytes,
             .members = g_array_new(FALSE, FALSE, sizeof(guint32)) };
  g_array_append_val(g->colls, c);
  return g->colls->len - 1;
}

guint fs_opgraph_coll_comm_size(const FsOpGraph *g, guint coll)
{
  if (coll >= g->colls->len)
    return 0;
  guint comm = g_array_index(g->colls, Coll, coll).comm;
  return g_array_index(g->comms, Comm, comm).n;
}

gboolean fs_opgraph_coll_info(const FsOpGraph *g, guint coll, FsCollOp *op, uint64_t *unit,
                              const guint **gpus, guint *n)
{
  if (coll >= g->colls->len)
    return FALSE;
  const Coll *c = &g_array_index(g->colls, Coll, coll);
  const Comm *m = &g_array_index(g->comms, Comm, c->comm);
  if (op != NULL)
    *op = c->op;
  if (unit != NULL)
    *unit = c->unit;
  if (gpus != NULL)
    *gpus = m->gpus;
  if (n != NULL)
    *n = m->n;
  return TRUE;
}

void fs_opgraph_set_coll_expected(FsOpGraph *g, guint coll, guint expected)
{
  g_return_if_fail(coll < g->colls->len);
  Coll *c = &g_array_index(g->colls, Coll, coll);
  c->expected = expected;
  c->fixed = TRUE;
}

guint32 fs_opgraph_add(FsOpGraph *g, guint stream, const FsOp *tmpl, const guint32 *deps, guint n)
{
  g_return_val_if_fail(stream < g->streams->len, FS_OP_NONE);
  FsOp op = *tmpl;
  op.stream = stream;
  op.name = fs_opgraph_intern(g, tmpl->name ? tmpl->name : fs_op_kind_name(tmpl->kind));
  op.partner = FS_OP_NONE;
  op.pending = 0;
  op.start = op.end = -1;
  op.ready = FALSE;
  op.host = FS_OP_NONE;
  op.host_cost = op.host_first = op.host_tail = 0;
  op.host_sync = FALSE;
  op.issue = op.ready_at = -1;
  op.host_wait = 0;
  op.launched = FALSE;
  if (op.kind != FS_OP_COLL)
    op.coll = FS_OP_NONE;
  guint32 id = g->ops->len;
  g_array_append_val(g->ops, op);
  FsStream *s = &g_array_index(g->streams, FsStream, stream);
  if (s->last != FS_OP_NONE)
    fs_opgraph_add_dep(g, id, s->last);
  s->last = id;
  for (guint i = 0; i < n; i++)
    if (deps[i] != FS_OP_NONE)
      fs_opgraph_add_dep(g, id, deps[i]);
  if (op.kind == FS_OP_COLL) {
    g_return_val_if_fail(op.coll < g->colls->len, id);
    Coll *c = &g_array_index(g->colls, Coll, op.coll);
    g_array_append_val(c->members, id);
    if (!c->fixed)
      c->expected++;
  }
  return id;
}

guint fs_opgraph_add_host(FsOpGraph *g)
{
  Host h = { g_array_new(FALSE, FALSE, sizeof(guint32)), 0, 0, 0 };
  g_array_append_val(g->hosts, h);
  return g->hosts->len - 1;
}

void fs_opgraph_set_host(FsOpGraph *g, guint32 op, guint host, FsTime cost, FsTime first,
                         FsTime tail, gboolean sync)
{
  g_return_if_fail(op < g->ops->len && host < g->hosts->len);
  g_return_if_fail(cost >= 0 && first >= 0 && tail >= 0);
  FsOp *o = &g_array_index(g->ops, FsOp, op);
  g_return_if_fail(o->host == FS_OP_NONE);
  o->host = host;
  o->host_cost = cost;
  o->host_first = MIN(first, cost);
  o->host_tail = tail;
  o->host_sync = sync;
  g_array_append_val(g_array_index(g->hosts, Host, host).ops, op);
}

void fs_opgraph_add_dep(FsOpGraph *g, guint32 op, guint32 dep)
{
  g_return_if_fail(op < g->ops->len && dep < g->ops->len);
  Edge e = { op, dep };
  g_array_append_val(g->edges, e);
}

void fs_opgraph_pair(FsOpGraph *g, guint32 xfer, guint32 recv)
{
  FsOp *x = &g_array_index(g->ops, FsOp, xfer), *r = &g_array_index(g->ops, FsOp, recv);
  g_return_if_fail(x->kind == FS_OP_XFER && r->kind == FS_OP_RECV);
  x->partner = recv;
  r->partner = xfer;
}

guint fs_opgraph_n_ops(const FsOpGraph *g) { return g->ops->len; }
const FsOp *fs_opgraph_op(const FsOpGraph *g, guint32 i) { return &g_array_index(g->ops, FsOp, i); }

/* Builds both CSR adjacency arrays from the edge list (stable: edges keep
 * the order they were added in). */
static void build_csr(FsOpGraph *g)
{
  guint n = g->ops->len, m = g->edges->len;
  g_free(g->succ_off); g_free(g->succ); g_free(g->pred_off); g_free(g->pred);
  g->succ_off = g_new0(uint32_t, n + 1);
  g->pred_off = g_new0(uint32_t, n + 1);
  g->succ = g_new(uint32_t, MAX(m, 1u));
  g->pred = g_new(uint32_t, MAX(m, 1u));
  const Edge *e = (const Edge *)g->edges->data;
  for (guint i = 0; i < m; i++) {
    g->succ_off[e[i].dep + 1]++;
    g->pred_off[e[i].op + 1]++;
  }
  for (guint i = 0; i < n; i++) {
    g->succ_off[i + 1] += g->succ_off[i];
    g->pred_off[i + 1] += g->pred_off[i];
  }
  g_autofree uint32_t *sf = g_memdup2(g->succ_off, n * sizeof(uint32_t));
  g_autofree uint32_t *pf = g_memdup2(g->pred_off, n * sizeof(uint32_t));
  for (guint i = 0; i < m; i++) {
    g->succ[sf[e[i].dep]++] = e[i].op;
    g->pred[pf[e[i].op]++] = e[i].dep;
  }
}

const uint32_t *fs_opgraph_deps(const FsOpGraph *g, guint32 i, guint *n)
{
  if (g->pred_off == NULL) {
    build_csr((FsOpGraph *)g);
  }
  *n = g->pred_off[i + 1] - g->pred_off[i];
  return g->pred + g->pred_off[i];
}

FsTime fs_opgraph_end(const FsOpGraph *g) { return g->end; }

/* ---- running ------------------------------------------------------------ */

static void op_ready(FsOpGraph *g, guint32 id);
static void cached_plan_free(CachedPlan *p);
static void host_advance(FsOpGraph *g, guint h);

static void fail(FsOpGraph *g, GError *err)
{
  if (g->error == NULL)
    g->error = err;
  else
    g_error_free(err);
}

static void launch_cb(void *ctx, uint64_t arg)
{
  op_ready(ctx, (guint32)arg);
}

/* Starts op id once both its dependencies are met and its host has issued
 * it: now, or at its first launch if that is later. */
static void gate(FsOpGraph *g, guint32 id)
{
  FsOp *op = &g_array_index(g->ops, FsOp, id);
  if (op->launched || op->pending > 0 || op->issue < 0)
    return;
  op->launched = TRUE;
  FsSim *sim = g->env->sim;
  FsTime now = fs_sim_now(sim), s = op->issue + op->host_first;
  if (s > now)
    fs_sim_after(sim, s - now, launch_cb, g, id);
  else
    op_ready(g, id);
}

/* Issues the ops of host h in program order until one must wait: a sync op
 * before every op issued earlier has ended and its dependencies are met. */
static void host_advance(FsOpGraph *g, guint hi)
{
  Host *h = &g_array_index(g->hosts, Host, hi);
  FsTime now = fs_sim_now(g->env->sim);
  while (h->next < h->ops->len) {
    guint32 id = g_array_index(h->ops, guint32, h->next);
    FsOp *op = &g_array_index(g->ops, FsOp, id);
    FsTime at = h->clock;
    if (op->host_sync) {
      if (h->ended < h->next || op->pending > 0)
        return;
      at = MAX(at, now);
    }
    op->issue = at;
    h->clock = at + op->host_cost;
    h->next++;
    gate(g, id);
    h = &g_array_index(g->hosts, Host, hi); /* gate may run ops; the array does not move */
  }
}

/* Op id's dependencies are all met at now. */
static void deps_met(FsOpGraph *g, guint32 id)
{
  FsOp *op = &g_array_index(g->ops, FsOp, id);
  if (op->host == FS_OP_NONE) {
    op_ready(g, id);
    return;
  }
  op->ready_at = fs_sim_now(g->env->sim);
  if (op->host_sync && op->issue < 0)
    host_advance(g, op->host);
  gate(g, id);
}

/* Marks op done at now and releases its successors. */
static void op_done(FsOpGraph *g, guint32 id)
{
  FsSim *sim = g->env->sim;
  FsOp *op = &g_array_index(g->ops, FsOp, id);
  op->end = fs_sim_now(sim);
  if (op->end > g->end)
    g->end = op->end;
  if (op->host != FS_OP_NONE) {
    /* The ended prefix of its host grows; a sync op may now be issued. */
    Host *h = &g_array_index(g->hosts, Host, op->host);
    guint e0 = h->ended;
    while (h->ended < h->ops->len &&
           g_array_index(g->ops, FsOp, g_array_index(h->ops, guint32, h->ended)).end >= 0)
      h->ended++;
    if (h->ended > e0 && h->ended >= h->next)
      host_advance(g, op->host);
  }
  for (uint32_t k = g->succ_off[id]; k < g->succ_off[id + 1]; k++) {
    guint32 s = g->succ[k];
    FsOp *so = &g_array_index(g->ops, FsOp, s);
    if (--so->pending == 0)
      deps_met(g, s);
  }
}

static void timed_done(void *ctx, uint64_t arg)
{
  op_done(ctx, (guint32)arg);
}

/* A transfer's flow carries its op id (+1) as the flow's user pointer and
 * the graph as its context: nothing is allocated per transfer, so a run
 * interrupted with flows in flight leaks nothing. */
static void xfer_done(void *ctx, const FsFlowInfo *info)
{
  FsOpGraph *g = ctx;
  guint32 id = (guint32)(GPOINTER_TO_UINT(info->user) - 1);
  FsOp *op = &g_array_index(g->ops, FsOp, id);
  guint32 partner = op->partner;
  op_done(g, id);
  if (partner != FS_OP_NONE)
    op_done(g, partner);
}

static void start_xfer(FsOpGraph *g, guint32 id)
{
  FsSim *sim = g->env->sim;
  FsOp *op = &g_array_index(g->ops, FsOp, id);
  op->start = fs_sim_now(sim);
  if (op->partner != FS_OP_NONE)
    g_array_index(g->ops, FsOp, op->partner).start = op->start;
  void *user = GUINT_TO_POINTER(id + 1);
  GError *err = NULL;
  if (op->src == op->dst || op->bytes == 0) {
    /* Nothing crosses a link: done now. */
    FsFlowInfo info = { 0 };
    info.user = user;
    xfer_done(g, &info);
    return;
  }
  /* A send between hosts runs on NCCL's channels for it (coll/p2p-sched.h), each at most
   * the per-channel network bandwidth. */
  double cap = g->env->nccl != NULL ? fs_coll_p2p_send_cap(g->env->nccl, g->env->router, op->src,
                                                           op->dst, op->bytes)
                                    : 0;
  if (!fs_router_transfer(g->env->router, (guint)op->src, (guint)op->dst, op->bytes, op->start, cap,
                          g->key++, xfer_done, g, user, &err))
    fail(g, err);
}

/* Builds (once) the FsComm and NCCL's view for communicator i. */
static Comm *comm_ready(FsOpGraph *g, guint i, GError **error)
{
  Comm *c = &g_array_index(g->comms, Comm, i);
  if (c->comm != NULL)
    return c;
  c->comm = fs_coll_comm_from_topo(g->env->router, c->gpus, c->n, g->env->nccl->max_channels, error);
  if (c->comm == NULL)
    return NULL;
  if (!fs_coll_sysinfo_from_topo(g->env->nccl, g->env->router, c->comm, &c->sys, error)) {
    g_clear_pointer(&c->comm, fs_comm_free);
    return NULL;
  }
  if (g->env->prefs != NULL)
    fs_coll_prefs_apply_sys(g->env->prefs, &c->sys);
  c->plans = g_ptr_array_new_with_free_func((GDestroyNotify)cached_plan_free);
  return c;
}

/* NCCL's choice for op with unit bytes per rank (or the buffer) on comm of
 * n ranks, bf16, and the plan request it gives (with NCCL's bounded
 * connection buffers); *nbytes as fs_coll_cost. */
static gboolean tune(const FsOpEnv *env, const FsCollSysInfo *sys, const FsComm *comm, guint n,
                     FsCollOp op, uint64_t unit, FsCollChoice *ch, FsCollRequest *req,
                     uint64_t *nbytes, GError **error)
{
  gboolean per_rank = op == FS_COLL_ALL_GATHER || op == FS_COLL_REDUCE_SCATTER ||
                      op == FS_COLL_ALLTOALL || op == FS_COLL_GATHER || op == FS_COLL_SCATTER;
  uint64_t requested = per_rank ? unit * n : unit;
  FsCollSizes sizes;
  fs_coll_sizes(op, requested, FS_COLL_DT_BFLOAT16, n, &sizes);
  *nbytes = fs_coll_nccl_bytes(op, &sizes, n);
  FsCollPrefs defaults;
  const FsCollPrefs *prefs = env->prefs;
  if (prefs == NULL) {
    fs_coll_prefs_init(&defaults);
    prefs = &defaults;
  }
  if (!fs_coll_tune(env->nccl, sys, comm, op, *nbytes, prefs, ch, error))
    return FALSE;
  *req =
    fs_coll_choice_request(ch, op, sizes.unit_bytes, FS_COLL_DT_BFLOAT16, FS_COLL_REDOP_SUM, 0);
  return TRUE;
}

/* A new, empty entry for (op, unit) in c's plans (borrowed: c owns it). */
static CachedPlan *cached_plan_add(Comm *c, FsCollOp op, uint64_t unit)
{
  CachedPlan *p = g_new0(CachedPlan, 1);
  p->op = op;
  p->unit = unit;
  g_ptr_array_add(c->plans, p);
  return p;
}

/* Whether comm's collective op by algo may run as streams under
 * fs_opgraph_comm_set_streams: what --exec auto trusts (streams.h), NVLS
 * across hosts excepted as fs_coll_exec_pick_streams excepts it (SHARP). */
static gboolean streams_trusted(const FsComm *comm, const FsCollAlgo *algo, FsCollOp op)
{
  return fs_coll_exec_streams_trusted(algo, op) &&
         !(algo->nccl == FS_NCCL_ALGO_NVLS && fs_comm_n_hosts(comm) > 1);
}

/* The plan (built once per op and size on a communicator) and executor
 * parameters of a collective, tuned as NCCL would. */
static CachedPlan *plan_for(FsOpGraph *g, Comm *c, FsCollOp op, uint64_t unit, GError **error)
{
  for (guint i = 0; i < c->plans->len; i++) {
    CachedPlan *p = g_ptr_array_index(c->plans, i);
    if (p->op == op && p->unit == unit)
      return p;
  }
  const FsNcclParams *np = g->env->nccl;
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nbytes;
  if (!tune(g->env, &c->sys, c->comm, c->n, op, unit, &ch, &req, &nbytes, error))
    return NULL;
  FsCollExec ex = g->env->exec;
  if (ex == FS_COLL_EXEC_STREAMS ||
      (ex == FS_COLL_EXEC_AUTO && (fs_coll_exec_pick_streams(c->comm, ch.algo, &req) ||
                                   (c->streams && streams_trusted(c->comm, ch.algo, op))))) {
    FsCollStreamsOpts so = {fs_coll_topo_route_fixed, fs_coll_topo_route_paths, g->env->tnet,
                            NULL};
    FsCollStreams *s = fs_coll_streams_new(np, &c->sys, c->comm, nbytes, &ch, &req,
                                           g->key++, g->env->net, &so, error);
    if (s == NULL)
      return NULL;
    CachedPlan *p = cached_plan_add(c, op, unit);
    p->streams = s;
    return p;
  }
  FsCollPlan *plan = fs_coll_plan_new(c->comm, ch.algo, &req, error);
  if (plan == NULL)
    return NULL;
  CachedPlan *p = cached_plan_add(c, op, unit);
  p->plan = plan;
  fs_coll_exec_params(np, &c->sys, c->comm, op, nbytes, &ch, plan, &p->params);
  return p;
}

static void cached_plan_free(CachedPlan *p)
{
  fs_coll_plan_free(p->plan);
  fs_coll_streams_free(p->streams);
  g_free(p);
}

typedef struct {
  FsOpGraph *g;
  guint coll;
} CollCtx;

static void coll_free_later(void *ctx, uint64_t arg)
{
  FsOpGraph *g = ctx;
  Coll *c = &g_array_index(g->colls, Coll, arg);
  GError *err = NULL;
  if (c->srun != NULL) {
    if (!fs_coll_streams_run_finish(c->srun, &err))
      fail(g, err);
    g_clear_pointer(&c->srun, fs_coll_streams_run_free);
    return;
  }
  if (!fs_coll_run_finish(c->run, &err))
    fail(g, err);
  g_clear_pointer(&c->run, fs_coll_run_free);
}

static void coll_done(void *ctx, FsCollRun *run)
{
  (void)run;
  CollCtx *cc = ctx;
  FsOpGraph *g = cc->g;
  guint ci = cc->coll;
  g_array_index(g->colls, Coll, ci).done_ctx = NULL;
  g_free(cc);
  /* The run is freed by a later event: it is still on the stack here. */
  fs_sim_after(g->env->sim, 0, coll_free_later, g, ci);
  Coll *c = &g_array_index(g->colls, Coll, ci);
  for (guint i = 0; i < c->members->len; i++)
    op_done(g, g_array_index(c->members, guint32, i));
}

static void coll_streams_done(void *ctx, FsCollStreamsRun *run)
{
  (void)run;
  coll_done(ctx, NULL);
}

static void start_coll(FsOpGraph *g, guint ci)
{
  Coll *c = &g_array_index(g->colls, Coll, ci);
  FsSim *sim = g->env->sim;
  for (guint i = 0; i < c->members->len; i++)
    g_array_index(g->ops, FsOp, g_array_index(c->members, guint32, i)).start = fs_sim_now(sim);
  if (g_array_index(g->comms, Comm, c->comm).n < 2) {
    for (guint i = 0; i < c->members->len; i++)
      op_done(g, g_array_index(c->members, guint32, i));
    return;
  }
  GError *err = NULL;
  Comm *comm = comm_ready(g, c->comm, &err);
  CachedPlan *p = comm ? plan_for(g, comm, c->op, c->unit, &err) : NULL;
  if (p == NULL) {
    fail(g, err);
    return;
  }
  CollCtx *cc = g_new(CollCtx, 1);
  cc->g = g;
  cc->coll = ci;
  c->done_ctx = cc;
  if (p->streams != NULL) {
    c->srun = fs_coll_streams_start(g->env->net, p->streams, fs_coll_topo_xfer, g->env->tnet,
                                    fs_sim_now(sim), coll_streams_done, cc);
    fs_coll_streams_run_set_copies(c->srun, fs_coll_topo_xfer_copies);
    return;
  }
  FsCollExecParams params = p->params;
  params.key = g->key++;
  params.share_paths = fs_coll_topo_route_paths; /* the analytic model's shared links */
  params.share_ctx = g->env->tnet;
  c->run = fs_coll_run_start(g->env->net, p->plan, &params, fs_coll_topo_xfer, g->env->tnet,
                             fs_sim_now(sim), coll_done, cc);
}

/* An op whose dependencies are all met at now. */
static void op_ready(FsOpGraph *g, guint32 id)
{
  FsSim *sim = g->env->sim;
  FsOp *op = &g_array_index(g->ops, FsOp, id);
  op->ready = TRUE;
  FsTime dur = op->dur;
  if (op->host != FS_OP_NONE) {
    /* Waiting for the host: before the start, and while the host is still
     * issuing the op's kernels (its end bound by issue + tail). */
    FsTime now = fs_sim_now(sim);
    op->host_wait = now - op->ready_at;
    if ((op->kind == FS_OP_COMPUTE || op->kind == FS_OP_DELAY) &&
        op->issue + op->host_tail > now + dur) {
      op->host_wait += op->issue + op->host_tail - (now + dur);
      dur = op->issue + op->host_tail - now;
    }
  }
  switch (op->kind) {
  case FS_OP_COMPUTE:
  case FS_OP_DELAY:
    op->start = fs_sim_now(sim);
    /* Each duration is below FS_TIME_MAX, but a chain of them can pass it. */
    if (dur >= FS_TIME_MAX - op->start) {
      const FsStream *s = &g_array_index(g->streams, FsStream, op->stream);
      GError *e = NULL;
      fs_set_clock_range_error(&e, "rank %u op %u would end past the clock's end", s->rank, id);
      fail(g, e);
      break;
    }
    fs_sim_after(sim, dur, timed_done, g, id);
    break;
  case FS_OP_XFER:
    if (op->partner == FS_OP_NONE || g_array_index(g->ops, FsOp, op->partner).ready)
      start_xfer(g, id);
    break;
  case FS_OP_RECV:
    if (op->partner != FS_OP_NONE && g_array_index(g->ops, FsOp, op->partner).ready)
      start_xfer(g, op->partner);
    break;
  case FS_OP_COLL: {
    Coll *c = &g_array_index(g->colls, Coll, op->coll);
    if (++c->joined == c->expected)
      start_coll(g, op->coll);
    break;
  }
  default:
    g_assert_not_reached();
  }
}

/* Describes why op id is stuck: its first unmet dependency, or the
 * collective or partner it waits for. */
static void describe_stuck(FsOpGraph *g, guint32 id, GString *out)
{
  const FsOp *op = &g_array_index(g->ops, FsOp, id);
  const FsStream *s = &g_array_index(g->streams, FsStream, op->stream);
  g_string_append_printf(out, "rank %u %s op %u \"%s\"", s->rank, s->name, id, op->name);
  if (op->mb >= 0)
    g_string_append_printf(out, " (micro-batch %d)", op->mb);
  if (op->ready) {
    if (op->kind == FS_OP_COLL) {
      const Coll *c = &g_array_index(g->colls, Coll, op->coll);
      const Comm *cm = &g_array_index(g->comms, Comm, c->comm);
      g_string_append_printf(out, " waits in %s on communicator %s: %u of %u members joined",
                             fs_coll_op_name(c->op), cm->name, c->joined, c->expected);
    } else if (op->partner == FS_OP_NONE) {
      g_string_append(out, op->kind == FS_OP_RECV ? " waits for a send that does not exist"
                                                  : " is ready but never finished");
    } else {
      const FsOp *p = &g_array_index(g->ops, FsOp, op->partner);
      const FsStream *ps = &g_array_index(g->streams, FsStream, p->stream);
      g_string_append_printf(out, " waits for its partner on rank %u (op %u \"%s\")", ps->rank,
                             op->partner, p->name);
    }
    return;
  }
  for (uint32_t k = g->pred_off[id]; k < g->pred_off[id + 1]; k++) {
    const FsOp *d = &g_array_index(g->ops, FsOp, g->pred[k]);
    if (d->end < 0) {
      const FsStream *ds = &g_array_index(g->streams, FsStream, d->stream);
      g_string_append_printf(out, " waits for rank %u %s op %u \"%s\"", ds->rank, ds->name,
                             g->pred[k], d->name);
      return;
    }
  }
}

/* See opgraph.h.  Also: every op's run state is reset first, and the graph runs on env's
 * simulator.  Returns FALSE with the simulator's or an op's error, or with
 * FS_RUNTIME_ERROR_DEADLOCK when ops never ran; that message names the first stuck op that waits
 * on no other stuck op (else the first of a cycle) and what it waits for.  Cost: the simulation's,
 * plus O(ops) for the check. */
gboolean fs_opgraph_run(FsOpGraph *g, const FsOpEnv *env, GError **error)
{
  g->env = env;
  g->end = fs_sim_now(env->sim);
  build_csr(g);
  guint n = g->ops->len;
  for (guint i = 0; i < n; i++) {
    FsOp *op = &g_array_index(g->ops, FsOp, i);
    op->pending = g->pred_off[i + 1] - g->pred_off[i];
    op->ready = FALSE;
    op->start = op->end = -1;
    op->issue = op->ready_at = -1;
    op->host_wait = 0;
    op->launched = FALSE;
  }
  for (guint i = 0; i < g->colls->len; i++)
    g_array_index(g->colls, Coll, i).joined = 0;
  for (guint i = 0; i < g->hosts->len; i++) {
    Host *h = &g_array_index(g->hosts, Host, i);
    h->next = h->ended = 0;
    h->clock = g->end;
  }
  for (guint i = 0; i < n && g->error == NULL; i++)
    if (g_array_index(g->ops, FsOp, i).pending == 0)
      deps_met(g, i);
  for (guint i = 0; i < g->hosts->len && g->error == NULL; i++)
    host_advance(g, i);
  if (g->error == NULL && !fs_sim_run(env->sim, error))
    return FALSE;
  if (g->error != NULL) {
    g_propagate_error(error, g->error);
    g->error = NULL;
    return FALSE;
  }
  /* Every op must have finished.  The report is one line: the first op
   * that did not, among those waiting on no other stuck op (the heads of
   * the jam: a collective not every member joined, a receive without its
   * send), else the first of a cycle, and what it waits for. */
  guint total = 0, head = G_MAXUINT;
  for (guint pass = 0; pass < 2 && head == G_MAXUINT; pass++)
    for (guint i = 0; i < n && head == G_MAXUINT; i++) {
      const FsOp *op = &g_array_index(g->ops, FsOp, i);
      if (op->end < 0 && (pass == 0) == op->ready)
        head = i;
    }
  for (guint i = 0; i < n; i++)
    total += g_array_index(g->ops, FsOp, i).end < 0;
  if (head != G_MAXUINT) {
    g_autoptr(GString) msg = g_string_new(NULL);
    describe_stuck(g, head, msg);
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_DEADLOCK,
                "deadlock: %u of %u ops never ran (a dependency cycle, a collective that not every "
                "member joins, or a receive without its send); first stuck: %s",
                total, n, msg->str);
    return FALSE;
  }
  return TRUE;
}

gboolean fs_opgraph_measure_coll(const FsOpEnv *env, const guint *gpus, guint n, FsCollOp op,
                                 uint64_t unit_bytes, FsTime *elapsed, GError **error)
{
  *elapsed = 0;
  if (n < 2)
    return TRUE;
  g_autoptr(FsComm) comm = fs_coll_comm_from_topo(env->router, gpus, n, env->nccl->max_channels,
                                                  error);
  FsCollSysInfo sys;
  if (comm == NULL || !fs_coll_sysinfo_from_topo(env->nccl, env->router, comm, &sys, error))
    return FALSE;
  if (env->prefs != NULL)
    fs_coll_prefs_apply_sys(env->prefs, &sys);
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nbytes;
  if (!tune(env, &sys, comm, n, op, unit_bytes, &ch, &req, &nbytes, error))
    return FALSE;
  /* Alone on the network: the shortcuts of alone.h apply (channel
   * folding, loop and step extrapolation, each checked as it runs). */
  FsCollAloneOpts opts = { .route_profile = fs_coll_topo_route_profile,
                           .route_paths = fs_coll_topo_route_paths, .exec = env->exec };
  fs_coll_topo_alone_routes(&opts, env->tnet, FALSE);
  FsCollAloneStats st;
  if (!fs_coll_time_alone(env->nccl, &sys, comm, nbytes, &ch, &req, 0, env->net,
                          fs_coll_topo_xfer, env->tnet, &opts, &st, error))
    return FALSE;
  *elapsed = st.time;
  return TRUE;
}

/* ---- measurement ---------------------------------------------------------- */

typedef struct {
  FsTime t;
  int delta;       /* +1 start, -1 end */
  int cat;         /* -1: compute, -2: waiting for the host */
} Edge2;

static int edge2_cmp(const void *a, const void *b)
{
  const Edge2 *x = a, *y = b;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  /* Ends before starts at one instant. */
  return x->delta - y->delta;
}

/* Communication categories in the order that wins when several are active
 * during an idle segment: data-parallel first, then tied embeddings,
 * pipeline, CP, EP, TP. */
static const FsOpCat comm_priority[] = {
  FS_CAT_DP, FS_CAT_EMB, FS_CAT_PP, FS_CAT_CP, FS_CAT_EP, FS_CAT_TP, FS_CAT_COMM,
};

/* See opgraph.h.  Also: out is zeroed first and only the stretch from `from` to `to` counts
 * (out->total is its length); ops that never ran are left out, and at one instant ends are
 * taken before starts.  Never fails. */
void fs_opgraph_breakdown(const FsOpGraph *g, guint compute_stream, const guint32 *comm_ops,
                          guint n_comm, FsTime from, FsTime to, FsOpBreakdown *out)
{
  memset(out, 0, sizeof *out);
  g_autoptr(GArray) ev = g_array_new(FALSE, FALSE, sizeof(Edge2));
  for (guint i = 0; i < g->ops->len; i++) {
    const FsOp *op = &g_array_index(g->ops, FsOp, i);
    if (op->stream != compute_stream || op->end < 0)
      continue;
    FsTime d = op->end - op->start;
    if (op->host != FS_OP_NONE && op->ready_at >= 0) {
      /* Before its start the op waited for its first launch; after it, for
       * the host to issue the rest (the stretch of its end). */
      FsTime pre = op->start - op->ready_at, stretch = MIN(op->host_wait - pre, d);
      if (stretch > 0) {
        d -= stretch;
        out->host += stretch;
      }
      if (pre > 0) {
        Edge2 a = { op->ready_at, +1, -2 }, b = { op->start, -1, -2 };
        g_array_append_val(ev, a);
        g_array_append_val(ev, b);
      }
    }
    if (fs_op_cat_is_comm(op->cat)) {
      /* Blocking communication on the compute stream: exposed by definition. */
      out->exposed[op->cat] += d;
    } else {
      out->busy[op->cat] += d;
    }
    Edge2 a = { op->start, +1, -1 }, b = { op->end, -1, -1 };
    g_array_append_val(ev, a);
    g_array_append_val(ev, b);
  }
  for (guint i = 0; i < n_comm; i++) {
    const FsOp *op = &g_array_index(g->ops, FsOp, comm_ops[i]);
    if (op->end < 0 || op->stream == compute_stream)
      continue;
    Edge2 a = { op->start, +1, op->cat }, b = { op->end, -1, op->cat };
    g_array_append_val(ev, a);
    g_array_append_val(ev, b);
  }
  g_array_sort(ev, edge2_cmp);
  int active[FS_CAT_N] = { 0 };
  int busy = 0, host = 0;
  FsTime t = from;
  for (guint i = 0; i <= ev->len; i++) {
    FsTime next = i < ev->len ? g_array_index(ev, Edge2, i).t : to;
    if (next > to)
      next = to;
    if (next > t && busy == 0 && host > 0) {
      out->host += next - t;
    } else if (next > t && busy == 0) {
      FsTime d = next - t;
      gboolean any = FALSE;
      for (guint k = 0; k < G_N_ELEMENTS(comm_priority) && !any; k++)
        if (active[comm_priority[k]] > 0) {
          out->exposed[comm_priority[k]] += d;
          any = TRUE;
        }
      if (!any)
        out->bubble += d;
    }
    if (next > t)
      t = next;
    if (i == ev->len)
      break;
    const Edge2 *e = &g_array_index(ev, Edge2, i);
    if (e->cat == -2)
      host += e->delta;
    else if (e->cat < 0)
      busy += e->delta;
    else
      active[e->cat] += e->delta;
  }
  out->total = to - from;
}
