/* replay.c — trace files into op graphs (see replay.h): the JSON document as a
 * tree of nodes (util/yaml.h), each object read against its declared fields
 * (util/schema.h: types, units, ranges, the README's tables), then what one
 * table cannot say — references between records, a rank count bounded by
 * the topology — checked here with the same "file:line:col: $.path:" form. */
#include "workload/replay.h"

#include <math.h>
#include <string.h>

#include "coll/coll.h"
#include "compute/kernel.h"
#include "util/datadir.h"
#include "util/error.h"
#include "util/json-pos.h"
#include "util/schema.h"
#include "util/units.h"
#include "util/yaml.h"
#include "workload/spec.h"

/* FS_TIME_MAX in words, for messages. */
#define CLOCK_RANGE "9223372 s, about 106 days"

/* ---- the declared fields (util/schema.h) -------------------------------------- */

/* Each object of a trace as the schema walk stores it.  Which optional keys
 * are present the loader asks the node (fs_yaml_map_get). */
typedef struct {
  guint version, nranks;
  const char *name;
} TraceRec;

typedef struct {
  guint rank;
  const char *gpu;         /* a GPU node's name (a JSON string) or index (a number) */
} RankRec;

typedef struct {
  const char *name;
} CommRec;

typedef struct {
  const char *id, *kind, *dtype, *comm, *stream, *name;
  guint rank, peer;
  FsTime duration;
  double flops;
  uint64_t bytes;
} OpRec;

/* The items of the lists: objects (read with their own table by the loader),
 * ranks and op ids. */
static const FsSchemaField object_item = {
  .key = "object", .type = FS_SCHEMA_MAP,
  .form = "{\"id\": \"a\", \"rank\": 0, \"kind\": \"compute\", \"duration\": \"1 ms\"}"};
static const FsSchemaField rank_item = {.key = "ranks", .type = FS_SCHEMA_UINT, .form = "0, 1"};
static const FsSchemaField dep_item = {.key = "deps", .type = FS_SCHEMA_STRING};

static const FsSchemaField trace_fields[] = {
  {.key = "schema_version", .type = FS_SCHEMA_UINT, .offset = offsetof(TraceRec, version),
   .min = G_STRINGIFY(FS_REPLAY_SCHEMA_VERSION), .max = G_STRINGIFY(FS_REPLAY_SCHEMA_VERSION),
   .value_doc = "`1`", .doc = "the format's version (optional)"},
  {.key = "name", .type = FS_SCHEMA_STRING, .offset = offsetof(TraceRec, name),
   .doc = "shown in the output (default: the file name)"},
  {.key = "ranks", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE, .item = &object_item,
   .value_doc = "list of tables `replay.rank`", .required_doc = "this or `nranks`",
   .doc = "rank → GPU"},
  {.key = "nranks", .type = FS_SCHEMA_UINT, .offset = offsetof(TraceRec, nranks), .min = "1",
   .required_doc = "this or `ranks`",
   .doc = "ranks 0 .. N−1 on the topology's first N GPUs (at most its GPU count)"},
  {.key = "communicators", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE,
   .item = &object_item, .value_doc = "list of tables `replay.communicator`",
   .doc = "the groups collectives run on"},
  {.key = "ops", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .item = &object_item, .nonempty = TRUE, .value_doc = "list of tables `replay.op`",
   .doc = "every rank's ops (not empty)"},
};
static const FsSchema trace_schema = {"trace", NULL, trace_fields, G_N_ELEMENTS(trace_fields)};

static const FsSchemaField rank_fields[] = {
  {.key = "rank", .type = FS_SCHEMA_UINT, .offset = offsetof(RankRec, rank), .required = TRUE,
   .doc = "the rank, 0 to N−1"},
  {.key = "gpu", .type = FS_SCHEMA_SCALAR, .offset = offsetof(RankRec, gpu),
   .value_doc = "a GPU name or index", .doc = "its GPU (default: the rank-th GPU in placement order)"},
};
static const FsSchema rank_schema = {"rank", NULL, rank_fields, G_N_ELEMENTS(rank_fields)};

static const FsSchemaField comm_fields[] = {
  {.key = "name", .type = FS_SCHEMA_STRING, .offset = offsetof(CommRec, name), .required = TRUE,
   .nonempty = TRUE, .doc = "what ops' `comm` names (unique)"},
  {.key = "ranks", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .item = &rank_item, .nonempty = TRUE, .value_doc = "list of ranks",
   .doc = "its members (not empty, each once)"},
};
static const FsSchema comm_schema = {"communicator", NULL, comm_fields, G_N_ELEMENTS(comm_fields)};

static const FsSchemaField op_fields[] = {
  {.key = "id", .type = FS_SCHEMA_STRING, .offset = offsetof(OpRec, id),
   .doc = "what `deps` name (unique)"},
  {.key = "rank", .type = FS_SCHEMA_UINT, .offset = offsetof(OpRec, rank), .required = TRUE,
   .doc = "the rank that runs it"},
  {.key = "kind", .type = FS_SCHEMA_STRING, .offset = offsetof(OpRec, kind), .required = TRUE,
   .value_doc = "`compute`, `send`, `recv` or a collective (`all_reduce`, …)",
   .doc = "what it does"},
  {.key = "duration", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_TIME,
   .offset = offsetof(OpRec, duration), .min = "0 s", .required_doc = "compute: this or `flops`",
   .doc = "how long it takes (less than the simulated clock's range, " CLOCK_RANGE ")"},
  {.key = "flops", .type = FS_SCHEMA_DOUBLE, .offset = offsetof(OpRec, flops), .min = "0",
   .required_doc = "compute: this or `duration`",
   .doc = "FLOPs, timed as a square GEMM on the rank's GPU"},
  {.key = "dtype", .type = FS_SCHEMA_STRING, .offset = offsetof(OpRec, dtype),
   .value_doc = "a datatype (`bf16`)", .doc = "compute with flops: the GEMM's datatype (default bf16)"},
  {.key = "peer", .type = FS_SCHEMA_UINT, .offset = offsetof(OpRec, peer),
   .required_doc = "send, recv", .doc = "the other rank"},
  {.key = "bytes", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE,
   .offset = offsetof(OpRec, bytes), .required_doc = "send, a collective",
   .value_doc = "a number, or a size string (`\"32M\"`)",
   .doc = "send: what it moves; a collective: the buffer per rank"},
  {.key = "comm", .type = FS_SCHEMA_STRING, .offset = offsetof(OpRec, comm),
   .required_doc = "a collective", .doc = "the communicator's name"},
  {.key = "stream", .type = FS_SCHEMA_STRING, .offset = offsetof(OpRec, stream),
   .doc = "ops of one (rank, stream) run in file order (default by kind)"},
  {.key = "deps", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE, .item = &dep_item,
   .value_doc = "list of ids", .doc = "ops that must finish first"},
  {.key = "name", .type = FS_SCHEMA_STRING, .offset = offsetof(OpRec, name),
   .doc = "the label in the trace (default: the id)"},
};
static const FsSchema op_schema = {"op", NULL, op_fields, G_N_ELEMENTS(op_fields)};

static const FsSchemaEntry schemas[] = {
  {"replay.trace", &trace_schema},
  {"replay.rank", &rank_schema},
  {"replay.communicator", &comm_schema},
  {"replay.op", &op_schema},
};

const FsSchemaEntry *fs_replay_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
}

/* ---- the loader: what the tables cannot say ----------------------------------- */

typedef struct {
  const FsTopo *topo;
  const FsEfficiency *eff;
  FsReplay *r;
  guint *gpu;              /* rank → topology node */
  GHashTable *streams;     /* "rank/stream" → index + 1 (lookup only) */
  GHashTable *ids;         /* op id → op index + 1 (lookup only) */
  GHashTable *comms;       /* name → comm index + 1 (lookup only) */
  GArray *comm_size;       /* guint per comm */
  GArray *comm_calls;      /* GArray(guint coll) per comm: collectives in call order */
  GArray *comm_ranks;      /* GArray(guint) per comm: members */
  GHashTable *pair_sends, *pair_recvs; /* "a>b" → GArray of op ids (lookup only) */
  GArray *coll_info;       /* CollInfo per collective */
} Loader;

typedef struct {
  FsCollOp op;
  uint64_t bytes;
} CollInfo;

/* An error at node (a value, or the object it belongs to), "file:line:col: $.path: " and the
 * sentence, preceded by the op's id when it has one. */
static gboolean bad(GError **error, const FsYamlNode *node, const char *id, const char *fmt, ...)
  G_GNUC_PRINTF(4, 5);

static gboolean bad(GError **error, const FsYamlNode *node, const char *id, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (id != NULL)
    fs_yaml_error(error, node, "op \"%s\": %s", id, msg);
  else
    fs_yaml_error(error, node, "%s", msg);
  return FALSE;
}

/* The node of key in map, else map itself: where an error about a missing or bad key points. */
static const FsYamlNode *at_key(const FsYamlNode *map, const char *key)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v != NULL ? v : map;
}

/* The items of a list node, or none when it is absent. */
static guint n_items(const FsYamlNode *list)
{
  return list != NULL ? list->n : 0;
}

/* The topology node of a "gpu" value: a JSON number is an index in the topology's GPU order, a
 * string a GPU node's name; -1 when it is neither. */
static int gpu_of(const Loader *ld, const FsYamlNode *v)
{
  guint n;
  const guint *gpus = fs_topo_gpus(ld->topo, &n);
  if (!v->quoted) {
    guint64 i;
    return g_ascii_string_to_unsigned(v->value, 10, 0, G_MAXUINT, &i, NULL) && i < n
             ? (int)gpus[i] : -1;
  }
  int node = fs_topo_find(ld->topo, v->value);
  return node >= 0 && fs_topo_node(ld->topo, (guint)node)->kind == FS_NODE_GPU ? node : -1;
}

static guint stream_of(Loader *ld, guint rank, const char *name, gboolean compute)
{
  g_autofree char *key = g_strdup_printf("%u/%s", rank, name);
  gpointer v = g_hash_table_lookup(ld->streams, key);
  if (v != NULL)
    return GPOINTER_TO_UINT(v) - 1;
  guint s = fs_opgraph_add_stream(ld->r->graph, name, rank, (int)ld->gpu[rank], compute);
  g_hash_table_insert(ld->streams, g_steal_pointer(&key), GUINT_TO_POINTER(s + 1));
  if (compute && ld->r->compute_stream[rank] == G_MAXUINT)
    ld->r->compute_stream[rank] = s;
  return s;
}

static void rank_op(Loader *ld, guint rank, guint32 op)
{
  g_array_append_val(g_ptr_array_index(ld->r->rank_ops, rank), op);
}

/* Checks that the value of key in map (a rank the walk read as an integer, *v) names a rank,
 * below n; FALSE at the value. */
static gboolean check_rank(const FsYamlNode *map, const char *key, const char *id, guint v,
                           guint n, GError **error)
{
  return v < n || bad(error, at_key(map, key), id, "expected a rank from 0 to %u, got %u", n - 1, v);
}

/* Sets the replay's rank count from the trace's "nranks" (else the length of "ranks"), maps rank
 * i to the topology's i-th GPU unless a "ranks" entry names another GPU, and gives each rank an
 * empty op list and no compute stream yet.  FALSE when the count is 0 or above the topology's
 * GPUs, or an entry (walked against rank_schema) has a rank out of range or an unknown GPU. */
static gboolean load_ranks(Loader *ld, const FsYamlNode *root, const TraceRec *tr, GError **error)
{
  guint ngpu;
  const guint *gpus = fs_topo_gpus(ld->topo, &ngpu);
  const FsYamlNode *ranks = fs_yaml_map_get(root, "ranks"), *nr = fs_yaml_map_get(root, "nranks");
  guint n = nr != NULL ? tr->nranks : n_items(ranks);
  if (n == 0 || n > ngpu)
    return bad(error, nr != NULL ? nr : ranks != NULL ? ranks : root, NULL,
               "expected \"ranks\" (a list of {\"rank\", \"gpu\"}) or \"nranks\" (1 to the "
               "topology's %u GPUs)", ngpu);
  ld->r->n_ranks = n;
  ld->gpu = g_new(guint, n);
  for (guint i = 0; i < n; i++)
    ld->gpu[i] = gpus[i];
  for (guint i = 0; i < n_items(ranks); i++) {
    const FsYamlNode *e = ranks->values[i];
    RankRec rr = { 0 };
    if (!fs_schema_read(&rank_schema, e, &rr, NULL, error) ||
        !check_rank(e, "rank", NULL, rr.rank, n, error))
      return FALSE;
    if (rr.gpu != NULL) {
      const FsYamlNode *gv = fs_yaml_map_get(e, "gpu");
      int node = gpu_of(ld, gv);
      if (node < 0)
        return bad(error, gv, NULL, "\"%s\" is not a GPU of the topology (a GPU name such as "
                   "\"node0/gpu1\" or an index from 0 to %u)", rr.gpu, ngpu - 1);
      ld->gpu[rr.rank] = (guint)node;
    }
  }
  ld->r->compute_stream = g_new(guint, n);
  ld->r->rank_ops = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  for (guint i = 0; i < n; i++) {
    ld->r->compute_stream[i] = G_MAXUINT;
    g_ptr_array_add(ld->r->rank_ops, g_array_new(FALSE, FALSE, sizeof(guint32)));
  }
  return TRUE;
}

/* Reads the trace's "communicators" (absent: none), each walked against comm_schema, and adds
 * each to the op graph on the GPUs of its ranks; ld keeps its index by name, its size, its
 * member ranks and an empty list of calls.  FALSE at the value for a name defined twice, or a
 * rank out of range or listed twice. */
static gboolean load_comms(Loader *ld, const FsYamlNode *root, GError **error)
{
  const FsYamlNode *comms = fs_yaml_map_get(root, "communicators");
  for (guint i = 0; i < n_items(comms); i++) {
    const FsYamlNode *e = comms->values[i];
    CommRec cr = { 0 };
    if (!fs_schema_read(&comm_schema, e, &cr, NULL, error))
      return FALSE;
    if (g_hash_table_contains(ld->comms, cr.name))
      return bad(error, fs_yaml_map_get(e, "name"), NULL, "communicator \"%s\" is defined twice",
                 cr.name);
    const FsYamlNode *rk = fs_yaml_map_get(e, "ranks");
    g_autofree guint *nodes = g_new(guint, rk->n);
    g_autoptr(GArray) members = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint k = 0; k < rk->n; k++) {
      guint r;
      if (!fs_schema_read_value(&rank_item, rk->values[k], &r, error))
        return FALSE;
      if (r >= ld->r->n_ranks)
        return bad(error, rk->values[k], NULL, "expected a rank from 0 to %u, got %u",
                   ld->r->n_ranks - 1, r);
      for (guint q = 0; q < members->len; q++)
        if (g_array_index(members, guint, q) == r)
          return bad(error, rk->values[k], NULL, "rank %u is listed twice", r);
      g_array_append_val(members, r);
      nodes[k] = ld->gpu[r];
    }
    guint c = fs_opgraph_add_comm(ld->r->graph, cr.name, nodes, rk->n);
    g_hash_table_insert(ld->comms, g_strdup(cr.name), GUINT_TO_POINTER(c + 1));
    g_array_append_val(ld->comm_size, rk->n);
    GArray *calls = g_array_new(FALSE, FALSE, sizeof(guint));
    g_array_append_val(ld->comm_calls, calls);
    g_array_append_val(ld->comm_ranks, members);
    members = NULL;
  }
  return TRUE;
}

static FsTime flops_time(const Loader *ld, guint rank, double flops, FsDtype dt)
{
  const FsGpuModel *gpu = &fs_topo_node(ld->topo, ld->gpu[rank])->model->u.gpu;
  /* The square GEMM of these FLOPs only picks the efficiency curve's
   * point; past 2^30 per side every curve is flat, and the cap keeps the
   * conversion to an integer defined for any finite count. */
  uint64_t side = (uint64_t)CLAMP(round(cbrt(flops / 2.0)), 1.0, (double)(1u << 30));
  FsKernel k = fs_kernel_gemm("compute", FS_PASS_FORWARD, dt, side, side, side, 1);
  k.flops = k.model_flops = flops;
  return fs_kernel_time(&k, gpu, ld->eff, NULL);
}

/* The k-th collective call of `rank` on comm: the collective it joins.  FALSE at the op (o)
 * when that call is another operation or size on another rank. */
static gboolean coll_for(Loader *ld, const FsYamlNode *o, const char *id, guint comm, guint rank,
                         FsCollOp op, uint64_t bytes, GHashTable *calls_by_rank, guint *out,
                         GError **error)
{
  g_autofree char *key = g_strdup_printf("%u/%u", comm, rank);
  guint k = GPOINTER_TO_UINT(g_hash_table_lookup(calls_by_rank, key));
  g_hash_table_replace(calls_by_rank, g_steal_pointer(&key), GUINT_TO_POINTER(k + 1));
  GArray *calls = g_array_index(ld->comm_calls, GArray *, comm);
  if (k < calls->len) {
    guint c = g_array_index(calls, guint, k);
    const CollInfo *ci = &g_array_index(ld->coll_info, CollInfo, c);
    if (ci->op != op || ci->bytes != bytes)
      return bad(error, o, id, "collective call %u on this communicator is %s of %" G_GUINT64_FORMAT
                 " bytes on another rank but %s of %" G_GUINT64_FORMAT " bytes here", k + 1,
                 fs_coll_op_name(ci->op), ci->bytes, fs_coll_op_name(op), bytes);
    *out = c;
    return TRUE;
  }
  guint c = fs_opgraph_add_coll(ld->r->graph, comm, op, bytes);
  fs_opgraph_set_coll_expected(ld->r->graph, c, g_array_index(ld->comm_size, guint, comm));
  g_array_append_val(calls, c);
  CollInfo ci = { op, bytes };
  g_array_append_val(ld->coll_info, ci);
  *out = c;
  return TRUE;
}

static gboolean in_comm(const Loader *ld, guint comm, guint rank)
{
  GArray *m = g_array_index(ld->comm_ranks, GArray *, comm);
  for (guint i = 0; i < m->len; i++)
    if (g_array_index(m, guint, i) == rank)
      return TRUE;
  return FALSE;
}

/* A compute op's time (o: its object, read into rec): its duration, or its FLOPs timed as a
 * square GEMM of its dtype on the rank's GPU.  FALSE when it has neither, an unknown dtype, or a
 * time the simulated clock cannot hold. */
static gboolean compute_time(const Loader *ld, const FsYamlNode *o, const OpRec *rec, FsOp *op,
                             GError **error)
{
  const FsYamlNode *dur = fs_yaml_map_get(o, "duration");
  if (dur != NULL) {
    op->dur = rec->duration;
    return op->dur < FS_TIME_MAX ||
           bad(error, dur, rec->id, "%s is the whole of the simulated clock's range (%s); "
               "expected less", dur->value, CLOCK_RANGE);
  }
  const FsYamlNode *fl = fs_yaml_map_get(o, "flops");
  if (fl == NULL)
    return bad(error, o, rec->id, "a compute op needs \"duration\" (\"1.5 ms\") or \"flops\" "
               "(a number)");
  FsDtype dt = FS_DTYPE_BF16;
  if (rec->dtype != NULL && !fs_dtype_from_name(rec->dtype, &dt))
    return bad(error, fs_yaml_map_get(o, "dtype"), rec->id, "unknown dtype \"%s\"", rec->dtype);
  op->dur = flops_time(ld, rec->rank, rec->flops, dt);
  op->model_flops = rec->flops;
  /* A kernel time saturates at FS_TIME_MAX: the op could never end. */
  return op->dur < FS_TIME_MAX ||
         bad(error, fl, rec->id, "%g FLOPs take longer than the simulated clock's range (%s) on "
             "rank %u's GPU; expected fewer", rec->flops, CLOCK_RANGE, rec->rank);
}

/* Adds a send or recv op (o, read into rec, template op) on its rank and pairs it: the n-th
 * send from a rank to a peer with the n-th matching recv.  Returns its id in *out; FALSE when
 * the peer is missing, out of range or the rank itself, or a send has no "bytes". */
static gboolean add_p2p(Loader *ld, const FsYamlNode *o, const OpRec *rec, FsOp *op, guint32 *out,
                        GError **error)
{
  gboolean send = rec->kind[0] == 's';
  guint n = ld->r->n_ranks;
  if (fs_yaml_map_get(o, "peer") == NULL || rec->peer >= n || rec->peer == rec->rank)
    return bad(error, at_key(o, "peer"), rec->id, "expected \"peer\": another rank (0 to %u)", n - 1);
  op->kind = send ? FS_OP_XFER : FS_OP_RECV;
  op->cat = FS_CAT_COMM;
  if (send) {
    if (fs_yaml_map_get(o, "bytes") == NULL)
      return bad(error, o, rec->id, "a send needs \"bytes\" (a number, or a size string such as "
                 "\"64M\")");
    op->bytes = rec->bytes;
    op->src = (int32_t)ld->gpu[rec->rank];
    op->dst = (int32_t)ld->gpu[rec->peer];
  }
  FsOpGraph *g = ld->r->graph;
  guint stream = stream_of(ld, rec->rank, rec->stream ? rec->stream : (send ? "send" : "recv"), FALSE);
  guint32 id = fs_opgraph_add(g, stream, op, NULL, 0);
  rank_op(ld, rec->rank, id);
  guint a = send ? rec->rank : rec->peer, b = send ? rec->peer : rec->rank;
  g_autofree char *key = g_strdup_printf("%u>%u", a, b);
  GHashTable *mine = send ? ld->pair_sends : ld->pair_recvs;
  GHashTable *theirs = send ? ld->pair_recvs : ld->pair_sends;
  GArray *q = g_hash_table_lookup(mine, key);
  if (q == NULL) {
    q = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_hash_table_insert(mine, g_strdup(key), q);
  }
  g_array_append_val(q, id);
  GArray *other = g_hash_table_lookup(theirs, key);
  if (other != NULL && other->len >= q->len) {
    guint32 x = g_array_index(other, guint32, q->len - 1);
    if (send)
      fs_opgraph_pair(g, id, x);
    else
      fs_opgraph_pair(g, x, id);
  }
  *out = id;
  return TRUE;
}

/* Fills a collective op (o, read into rec, template op) on its communicator: the call it joins
 * (coll_for) and its stream in *stream.  FALSE for an unknown kind, a communicator that is not
 * defined or does not hold the rank, or no "bytes". */
static gboolean fill_coll(Loader *ld, const FsYamlNode *o, const OpRec *rec, FsOp *op,
                          GHashTable *calls_by_rank, guint *stream, GError **error)
{
  FsCollOp cop;
  if (!fs_coll_op_from_name(rec->kind, &cop) || cop == FS_COLL_SENDRECV)
    return bad(error, fs_yaml_map_get(o, "kind"), rec->id, "unknown kind \"%s\" (compute, send, "
               "recv, all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, …)",
               rec->kind);
  gpointer cv = rec->comm ? g_hash_table_lookup(ld->comms, rec->comm) : NULL;
  if (cv == NULL)
    return bad(error, at_key(o, "comm"), rec->id, "expected \"comm\": the name of a communicator");
  guint comm = GPOINTER_TO_UINT(cv) - 1;
  if (!in_comm(ld, comm, rec->rank))
    return bad(error, at_key(o, "rank"), rec->id, "rank %u is not a member of communicator \"%s\"",
               rec->rank, rec->comm);
  if (fs_yaml_map_get(o, "bytes") == NULL)
    return bad(error, o, rec->id, "a collective needs \"bytes\" (a number, or a size string such "
               "as \"64M\")");
  op->bytes = rec->bytes;
  if (!coll_for(ld, o, rec->id, comm, rec->rank, cop, op->bytes, calls_by_rank, &op->coll, error))
    return FALSE;
  op->kind = FS_OP_COLL;
  op->cat = FS_CAT_COMM;
  *stream = stream_of(ld, rec->rank, rec->stream ? rec->stream : "comm", FALSE);
  return TRUE;
}

/* Adds the "deps" of every op (ops: the list; op_of: each one's op id) by op id.  FALSE at the
 * first id that names no op. */
static gboolean add_deps(Loader *ld, const FsYamlNode *ops, GArray *op_of, GError **error)
{
  for (guint i = 0; i < ops->n; i++) {
    const FsYamlNode *deps = fs_yaml_map_get(ops->values[i], "deps");
    for (guint k = 0; k < n_items(deps); k++) {
      gpointer v = g_hash_table_lookup(ld->ids, deps->values[k]->value);
      if (v == NULL)
        return bad(error, deps->values[k], NULL, "\"%s\" is not the id of an op",
                   deps->values[k]->value);
      fs_opgraph_add_dep(ld->r->graph, g_array_index(op_of, guint32, i), GPOINTER_TO_UINT(v) - 1);
    }
  }
  return TRUE;
}

/* Reads the trace's "ops", each walked against op_schema, into the op graph: each op on its
 * rank's stream — compute (compute_time), send and recv (add_p2p), or a collective on a
 * communicator (fill_coll) — then each transfer also counts for its receiver, and the "deps"
 * come last, by op id (add_deps).  FALSE at the value for a rank out of range, an id used
 * twice, or what those helpers refuse. */
static gboolean load_ops(Loader *ld, const FsYamlNode *root, GError **error)
{
  const FsYamlNode *ops = fs_yaml_map_get(root, "ops");
  FsOpGraph *g = ld->r->graph;
  g_autoptr(GHashTable) calls_by_rank = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GArray) op_of = g_array_new(FALSE, FALSE, sizeof(guint32));
  for (guint i = 0; i < ops->n; i++) {
    const FsYamlNode *o = ops->values[i];
    OpRec rec = { 0 };
    if (!fs_schema_read(&op_schema, o, &rec, NULL, error) ||
        !check_rank(o, "rank", rec.id, rec.rank, ld->r->n_ranks, error))
      return FALSE;
    if (rec.id != NULL && g_hash_table_contains(ld->ids, rec.id))
      return bad(error, fs_yaml_map_get(o, "id"), rec.id, "the id is used twice");
    FsOp op = { .mb = -1, .layer = -1, .name = rec.name ? rec.name : (rec.id ? rec.id : rec.kind) };
    guint32 id;
    if (strcmp(rec.kind, "send") == 0 || strcmp(rec.kind, "recv") == 0) {
      if (!add_p2p(ld, o, &rec, &op, &id, error))
        return FALSE;
    } else {
      guint stream = 0;
      if (strcmp(rec.kind, "compute") == 0) {
        op.kind = FS_OP_COMPUTE;
        op.cat = FS_CAT_FORWARD;
        if (!compute_time(ld, o, &rec, &op, error))
          return FALSE;
        stream = stream_of(ld, rec.rank, rec.stream ? rec.stream : "compute", TRUE);
      } else if (!fill_coll(ld, o, &rec, &op, calls_by_rank, &stream, error)) {
        return FALSE;
      }
      id = fs_opgraph_add(g, stream, &op, NULL, 0);
      if (op.kind != FS_OP_COMPUTE)
        rank_op(ld, rec.rank, id);
    }
    g_array_append_val(op_of, id);
    if (rec.id != NULL)
      g_hash_table_insert(ld->ids, g_strdup(rec.id), GUINT_TO_POINTER(id + 1));
  }
  /* Incoming transfers count for the receiver's breakdown. */
  for (guint32 o = 0; o < fs_opgraph_n_ops(g); o++) {
    const FsOp *x = fs_opgraph_op(g, o);
    if (x->kind == FS_OP_XFER && x->partner != FS_OP_NONE)
      rank_op(ld, fs_opgraph_stream(g, fs_opgraph_op(g, x->partner)->stream)->rank, o);
  }
  return add_deps(ld, ops, op_of, error);
}

/* Builds a replay from the parsed document doc, as a tree of nodes (util/yaml.h): the root must
 * be an object, read against trace_schema (every object's keys and values are declared: the
 * walk refuses an unknown key, a wrong type, unit or range), then the ranks, communicators and
 * ops with what the tables cannot say; the name is the trace's "name", else name.  Returns a new
 * replay that the caller frees with fs_replay_free, or NULL with FS_WORKLOAD_ERROR_INVALID at
 * the position and JSON path of the first fault (the partial replay is freed). */
static FsReplay *load(const FsJsonDoc *doc, const char *name, const FsTopo *topo,
                      const FsEfficiency *eff, GError **error)
{
  g_autoptr(FsYamlDoc) tree = fs_yaml_doc_from_json(doc);
  const FsYamlNode *root = fs_yaml_doc_root(tree);
  Loader ld = { .topo = topo, .eff = eff };
  FsReplay *r = g_new0(FsReplay, 1);
  r->graph = fs_opgraph_new();
  ld.r = r;
  ld.streams = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  ld.ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  ld.comms = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  ld.pair_sends = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
  ld.pair_recvs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
  ld.comm_size = g_array_new(FALSE, FALSE, sizeof(guint));
  ld.coll_info = g_array_new(FALSE, FALSE, sizeof(CollInfo));
  ld.comm_calls = g_array_new(FALSE, FALSE, sizeof(GArray *));
  ld.comm_ranks = g_array_new(FALSE, FALSE, sizeof(GArray *));
  GError *e = NULL;
  TraceRec tr = { 0 };
  gboolean ok = root->kind == FS_YAML_MAP ||
                bad(&e, root, NULL, "expected a JSON object with \"ranks\", \"communicators\" "
                    "and \"ops\"");
  ok = ok && fs_schema_read(&trace_schema, root, &tr, NULL, &e) &&
       load_ranks(&ld, root, &tr, &e) && load_comms(&ld, root, &e) && load_ops(&ld, root, &e);
  r->name = g_strdup(ok && tr.name != NULL ? tr.name : name);
  g_free(ld.gpu);
  g_hash_table_unref(ld.streams);
  g_hash_table_unref(ld.ids);
  g_hash_table_unref(ld.comms);
  g_hash_table_unref(ld.pair_sends);
  g_hash_table_unref(ld.pair_recvs);
  for (guint i = 0; i < ld.comm_calls->len; i++) {
    g_array_unref(g_array_index(ld.comm_calls, GArray *, i));
    g_array_unref(g_array_index(ld.comm_ranks, GArray *, i));
  }
  g_array_unref(ld.comm_size);
  g_array_unref(ld.coll_info);
  g_array_unref(ld.comm_calls);
  g_array_unref(ld.comm_ranks);
  if (!ok) {
    /* The walk's and the node errors' messages, in this module's domain. */
    g_set_error_literal(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID, e->message);
    g_error_free(e);
    fs_replay_free(r);
    return NULL;
  }
  return r;
}

FsReplay *fs_replay_load_string(const char *text, const char *name, const FsTopo *topo,
                                const FsEfficiency *eff, GError **error)
{
  GError *e = NULL;
  g_autoptr(FsJsonDoc) doc = fs_json_doc_parse(text, strlen(text), name, &e);
  if (doc == NULL) {
    /* The same "file:line:col: " message, in this module's domain. */
    g_set_error_literal(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID, e->message);
    g_error_free(e);
    return NULL;
  }
  return load(doc, name, topo, eff, error);
}

FsReplay *fs_replay_load_file(const char *path, const FsTopo *topo, const FsEfficiency *eff,
                              GError **error)
{
  g_autofree char *text = NULL;
  g_autofree char *file = fs_datadir_find(FS_DATA_WORKLOADS, path);
  if (!g_file_get_contents(file, &text, NULL, error))
    return NULL;
  return fs_replay_load_string(text, file, topo, eff, error);
}

void fs_replay_free(FsReplay *r)
{
  if (r == NULL)
    return;
  g_free(r->name);
  fs_opgraph_free(r->graph);
  g_free(r->compute_stream);
  if (r->rank_ops)
    g_ptr_array_unref(r->rank_ops);
  g_free(r);
}
