/* replay.c — trace files into op graphs (see replay.h). */
#include "workload/replay.h"

#include <jansson.h>
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

typedef struct {
  const char *file;
  const FsJsonDoc *doc;    /* positions of the values, for messages */
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

static gboolean bad(GError **error, const Loader *ld, int i, const char *id, const char *fmt, ...)
  G_GNUC_PRINTF(5, 6);

static gboolean bad(GError **error, const Loader *ld, int i, const char *id, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_autofree char *path = g_strdup_printf("$.ops[%d]", i);
  int line, col;
  fs_json_doc_position(ld->doc, path, &line, &col);
  fs_set_error_at(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID, ld->file, line, col,
                  "ops[%d]%s%s%s: %s", i, id ? " (id \"" : "", id ? id : "", id ? "\")" : "", msg);
  return FALSE;
}

/* An error about the value at path ("$.ranks[2]"), at its position. */
static gboolean bad_at(GError **error, const Loader *ld, const char *path, const char *fmt, ...)
  G_GNUC_PRINTF(4, 5);

static gboolean bad_at(GError **error, const Loader *ld, const char *path, const char *fmt, ...)
{
  int line, col;
  fs_json_doc_position(ld->doc, path, &line, &col);
  va_list ap;
  va_start(ap, fmt);
  fs_set_error_at_va(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID, ld->file, line, col,
                     fmt, ap);
  va_end(ap);
  return FALSE;
}

/* A size: a number of bytes or a string with a unit ("64M"). */
static gboolean get_size(json_t *v, uint64_t *out, GError **error)
{
  if (json_is_integer(v) && json_integer_value(v) >= 0) {
    *out = (uint64_t)json_integer_value(v);
    return TRUE;
  }
  if (json_is_string(v))
    return fs_parse_size(json_string_value(v), out, error);
  g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID,
              "expected a size (bytes, or a string such as \"64M\")");
  return FALSE;
}

static int gpu_of(const Loader *ld, json_t *v)
{
  guint n;
  const guint *gpus = fs_topo_gpus(ld->topo, &n);
  if (json_is_integer(v)) {
    json_int_t i = json_integer_value(v);
    return i >= 0 && (guint64)i < n ? (int)gpus[i] : -1;
  }
  if (json_is_string(v)) {
    int node = fs_topo_find(ld->topo, json_string_value(v));
    if (node >= 0 && fs_topo_node(ld->topo, (guint)node)->kind == FS_NODE_GPU)
      return node;
  }
  return -1;
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

/* Sets the replay's rank count from root's "nranks" (else the length of "ranks"), maps rank i to
 * the topology's i-th GPU unless a "ranks" entry names another GPU, and gives each rank an empty
 * op list and no compute stream yet.  Returns FALSE through bad_at when the count is 0 or above
 * the topology's GPUs, or an entry has a bad rank or an unknown GPU. */
static gboolean load_ranks(Loader *ld, json_t *root, GError **error)
{
  guint ngpu;
  fs_topo_gpus(ld->topo, &ngpu);
  json_t *ranks = json_object_get(root, "ranks");
  guint n = 0;
  json_t *nr = json_object_get(root, "nranks");
  if (json_is_integer(nr))
    n = json_integer_value(nr) > 0 && json_integer_value(nr) <= ngpu
          ? (guint)json_integer_value(nr) : 0;
  else if (json_is_array(ranks))
    n = (guint)json_array_size(ranks);
  if (n == 0 || n > ngpu)
    return bad_at(error, ld, json_object_get(root, "nranks") ? "$.nranks" : "$.ranks",
               "expected \"ranks\" (a list of {\"rank\", \"gpu\"}) or "
               "\"nranks\" (1 to the topology's %u GPUs)", ngpu);
  ld->r->n_ranks = n;
  ld->gpu = g_new(guint, n);
  const guint *gpus = fs_topo_gpus(ld->topo, &ngpu);
  for (guint i = 0; i < n; i++)
    ld->gpu[i] = gpus[i];
  if (json_is_array(ranks)) {
    size_t i;
    json_t *e;
    json_array_foreach(ranks, i, e) {
      json_t *rk = json_object_get(e, "rank");
      g_autofree char *at = g_strdup_printf("$.ranks[%zu]", i);
      if (!json_is_integer(rk) || json_integer_value(rk) < 0 || json_integer_value(rk) >= n)
        return bad_at(error, ld, at, "ranks[%zu]: expected \"rank\" from 0 to %u", i, n - 1);
      json_t *gv = json_object_get(e, "gpu");
      if (gv != NULL) {
        int node = gpu_of(ld, gv);
        if (node < 0)
          return bad_at(error, ld, at, "ranks[%zu]: \"gpu\" is not a GPU of the topology "
                     "(a GPU name such as \"node0/gpu1\" or an index)", i);
        ld->gpu[json_integer_value(rk)] = (guint)node;
      }
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

/* Reads root's "communicators" (absent: none) and adds each to the op graph on the GPUs of its
 * ranks; ld keeps its index by name, its size, its member ranks and an empty list of calls.
 * Returns FALSE through bad_at, at the entry's JSON path, for a malformed entry, a name defined
 * twice, or a rank out of range or listed twice. */
static gboolean load_comms(Loader *ld, json_t *root, GError **error)
{
  json_t *comms = json_object_get(root, "communicators");
  if (comms != NULL && !json_is_array(comms))
    return bad_at(error, ld, "$.communicators", "\"communicators\" must be a list of {\"name\", \"ranks\"}");
  size_t i;
  json_t *e;
  json_array_foreach(comms, i, e) {
    const char *name = json_string_value(json_object_get(e, "name"));
    json_t *rk = json_object_get(e, "ranks");
    g_autofree char *at = g_strdup_printf("$.communicators[%zu]", i);
    if (name == NULL || !json_is_array(rk) || json_array_size(rk) == 0)
      return bad_at(error, ld, at, "communicators[%zu]: expected \"name\" and a non-empty \"ranks\" list", i);
    if (g_hash_table_contains(ld->comms, name))
      return bad_at(error, ld, at, "communicators[%zu]: \"%s\" is defined twice", i, name);
    guint n = (guint)json_array_size(rk);
    g_autofree guint *nodes = g_new(guint, n);
    GArray *members = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint k = 0; k < n; k++) {
      json_t *x = json_array_get(rk, k);
      g_autofree char *xat = g_strdup_printf("%s.ranks[%u]", at, k);
      if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= ld->r->n_ranks) {
        g_array_unref(members);
        return bad_at(error, ld, xat, "communicators[%zu]: ranks[%u] is not a rank (0 to %u)",
                   i, k, ld->r->n_ranks - 1);
      }
      guint r = (guint)json_integer_value(x);
      for (guint q = 0; q < members->len; q++)
        if (g_array_index(members, guint, q) == r) {
          g_array_unref(members);
          return bad_at(error, ld, xat, "communicators[%zu]: rank %u is listed twice", i, r);
        }
      g_array_append_val(members, r);
      nodes[k] = ld->gpu[r];
    }
    guint c = fs_opgraph_add_comm(ld->r->graph, name, nodes, n);
    g_hash_table_insert(ld->comms, g_strdup(name), GUINT_TO_POINTER(c + 1));
    g_array_append_val(ld->comm_size, n);
    GArray *calls = g_array_new(FALSE, FALSE, sizeof(guint));
    g_array_append_val(ld->comm_calls, calls);
    g_array_append_val(ld->comm_ranks, members);
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

/* The k-th collective call of `rank` on comm: the collective it joins. */
static gboolean coll_for(Loader *ld, int i, const char *id, guint comm, guint rank, FsCollOp op,
                         uint64_t bytes, GHashTable *calls_by_rank, guint *out, GError **error)
{
  g_autofree char *key = g_strdup_printf("%u/%u", comm, rank);
  guint k = GPOINTER_TO_UINT(g_hash_table_lookup(calls_by_rank, key));
  g_hash_table_replace(calls_by_rank, g_steal_pointer(&key), GUINT_TO_POINTER(k + 1));
  GArray *calls = g_array_index(ld->comm_calls, GArray *, comm);
  if (k < calls->len) {
    guint c = g_array_index(calls, guint, k);
    const CollInfo *ci = &g_array_index(ld->coll_info, CollInfo, c);
    FsCollOp have = ci->op;
    uint64_t have_bytes = ci->bytes;
    if (have != op || have_bytes != bytes)
      return bad(error, ld, i, id, "collective call %u on this communicator is %s of %" G_GUINT64_FORMAT
                 " bytes on another rank but %s of %" G_GUINT64_FORMAT " bytes here", k + 1,
                 fs_coll_op_name(have), have_bytes, fs_coll_op_name(op), bytes);
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

/* Reads root's "ops" into the op graph in two passes.  The first adds each op on its rank's
 * stream: compute (a duration, or FLOPs at the efficiency of its dtype), send and recv (the
 * n-th send from a rank to a peer pairs with the n-th matching recv), or a collective on a
 * communicator (calls matched across ranks by coll_for).  Then each transfer also counts for its
 * receiver, and the second pass adds the "deps" by op id.  Returns FALSE through bad() at the
 * op for an unknown kind, a missing or bad field, a time past the simulated clock, a rank
 * outside its communicator or an unknown dependency. */
static gboolean load_ops(Loader *ld, json_t *root, GError **error)
{
  json_t *ops = json_object_get(root, "ops");
  if (!json_is_array(ops) || json_array_size(ops) == 0)
    return bad_at(error, ld, "$.ops", "expected \"ops\": a non-empty list of ops");
  FsOpGraph *g = ld->r->graph;
  g_autoptr(GHashTable) calls_by_rank = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GArray) op_of = g_array_new(FALSE, FALSE, sizeof(guint32));
  size_t n = json_array_size(ops);
  /* First pass: create the ops; dependencies by id come in the second. */
  for (size_t i = 0; i < n; i++) {
    json_t *e = json_array_get(ops, i);
    const char *id = json_string_value(json_object_get(e, "id"));
    const char *kind = json_string_value(json_object_get(e, "kind"));
    json_t *rk = json_object_get(e, "rank");
    if (!json_is_object(e) || kind == NULL)
      return bad(error, ld, (int)i, id, "expected an object with \"kind\" (compute, send, recv or a "
                 "collective such as all_reduce)");
    if (!json_is_integer(rk) || json_integer_value(rk) < 0 || json_integer_value(rk) >= ld->r->n_ranks)
      return bad(error, ld, (int)i, id, "expected \"rank\" from 0 to %u", ld->r->n_ranks - 1);
    guint rank = (guint)json_integer_value(rk);
    if (id != NULL && g_hash_table_contains(ld->ids, id))
      return bad(error, ld, (int)i, id, "the id is used twice");
    const char *sname = json_string_value(json_object_get(e, "stream"));
    const char *label = json_string_value(json_object_get(e, "name"));
    FsOp o = { .mb = -1, .layer = -1, .name = label ? label : (id ? id : kind) };
    guint stream;
    GError *sub = NULL;
    if (strcmp(kind, "compute") == 0) {
      json_t *dur = json_object_get(e, "duration"), *fl = json_object_get(e, "flops");
      o.kind = FS_OP_COMPUTE;
      o.cat = FS_CAT_FORWARD;
      if (json_is_string(dur)) {
        if (!fs_parse_time(json_string_value(dur), &o.dur, &sub) || o.dur < 0) {
          bad(error, ld, (int)i, id, "\"duration\": %s", sub ? sub->message : "must not be negative");
          g_clear_error(&sub);
          return FALSE;
        }
        if (o.dur >= FS_TIME_MAX)
          return bad(error, ld, (int)i, id, "\"duration\": %s is the whole of the simulated clock's "
                     "range (%s); expected less", json_string_value(dur), CLOCK_RANGE);
      } else if (json_is_number(fl) && json_number_value(fl) >= 0) {
        FsDtype dt = FS_DTYPE_BF16;
        const char *dts = json_string_value(json_object_get(e, "dtype"));
        if (dts != NULL && !fs_dtype_from_name(dts, &dt))
          return bad(error, ld, (int)i, id, "unknown \"dtype\" \"%s\"", dts);
        o.dur = flops_time(ld, rank, json_number_value(fl), dt);
        o.model_flops = json_number_value(fl);
        /* A kernel time saturates at FS_TIME_MAX: the op could never end. */
        if (o.dur >= FS_TIME_MAX)
          return bad(error, ld, (int)i, id, "\"flops\": %g FLOPs take longer than the simulated "
                     "clock's range (%s) on rank %u's GPU; expected fewer", o.model_flops,
                     CLOCK_RANGE, rank);
      } else {
        return bad(error, ld, (int)i, id, "a compute op needs \"duration\" (\"1.5 ms\") or \"flops\" (a number)");
      }
      stream = stream_of(ld, rank, sname ? sname : "compute", TRUE);
    } else if (strcmp(kind, "send") == 0 || strcmp(kind, "recv") == 0) {
      gboolean send = kind[0] == 's';
      json_t *peer = json_object_get(e, "peer");
      if (!json_is_integer(peer) || json_integer_value(peer) < 0 || json_integer_value(peer) >= ld->r->n_ranks ||
          (guint)json_integer_value(peer) == rank)
        return bad(error, ld, (int)i, id, "expected \"peer\": another rank (0 to %u)", ld->r->n_ranks - 1);
      guint p = (guint)json_integer_value(peer);
      o.kind = send ? FS_OP_XFER : FS_OP_RECV;
      o.cat = FS_CAT_COMM;
      if (send) {
        if (!get_size(json_object_get(e, "bytes"), &o.bytes, &sub)) {
          bad(error, ld, (int)i, id, "\"bytes\": %s", sub->message);
          g_clear_error(&sub);
          return FALSE;
        }
        o.src = (int32_t)ld->gpu[rank];
        o.dst = (int32_t)ld->gpu[p];
      }
      stream = stream_of(ld, rank, sname ? sname : (send ? "send" : "recv"), FALSE);
      guint32 op = fs_opgraph_add(g, stream, &o, NULL, 0);
      rank_op(ld, rank, op);
      g_autofree char *key = send ? g_strdup_printf("%u>%u", rank, p) : g_strdup_printf("%u>%u", p, rank);
      GHashTable *mine = send ? ld->pair_sends : ld->pair_recvs;
      GHashTable *theirs = send ? ld->pair_recvs : ld->pair_sends;
      GArray *q = g_hash_table_lookup(mine, key);
      if (q == NULL) {
        q = g_array_new(FALSE, FALSE, sizeof(guint32));
        g_hash_table_insert(mine, g_strdup(key), q);
      }
      g_array_append_val(q, op);
      GArray *other = g_hash_table_lookup(theirs, key);
      if (other != NULL && other->len >= q->len) {
        guint32 x = g_array_index(other, guint32, q->len - 1);
        if (send)
          fs_opgraph_pair(g, op, x);
        else
          fs_opgraph_pair(g, x, op);
      }
      g_array_append_val(op_of, op);
      if (id != NULL)
        g_hash_table_insert(ld->ids, g_strdup(id), GUINT_TO_POINTER(op + 1));
      continue;
    } else {
      FsCollOp cop;
      if (!fs_coll_op_from_name(kind, &cop) || cop == FS_COLL_SENDRECV)
        return bad(error, ld, (int)i, id, "unknown kind \"%s\" (compute, send, recv, all_reduce, "
                   "all_gather, reduce_scatter, broadcast, reduce, alltoall, …)", kind);
      const char *cname = json_string_value(json_object_get(e, "comm"));
      gpointer cv = cname ? g_hash_table_lookup(ld->comms, cname) : NULL;
      if (cv == NULL)
        return bad(error, ld, (int)i, id, "expected \"comm\": the name of a communicator");
      guint comm = GPOINTER_TO_UINT(cv) - 1;
      if (!in_comm(ld, comm, rank))
        return bad(error, ld, (int)i, id, "rank %u is not a member of communicator \"%s\"", rank, cname);
      if (!get_size(json_object_get(e, "bytes"), &o.bytes, &sub)) {
        bad(error, ld, (int)i, id, "\"bytes\": %s", sub->message);
        g_clear_error(&sub);
        return FALSE;
      }
      guint c = 0;
      if (!coll_for(ld, (int)i, id, comm, rank, cop, o.bytes, calls_by_rank, &c, error))
        return FALSE;
      o.kind = FS_OP_COLL;
      o.cat = FS_CAT_COMM;
      o.coll = c;
      stream = stream_of(ld, rank, sname ? sname : "comm", FALSE);
    }
    guint32 op = fs_opgraph_add(g, stream, &o, NULL, 0);
    if (o.kind != FS_OP_COMPUTE)
      rank_op(ld, rank, op);
    g_array_append_val(op_of, op);
    if (id != NULL)
      g_hash_table_insert(ld->ids, g_strdup(id), GUINT_TO_POINTER(op + 1));
  }
  /* Incoming transfers count for the receiver's breakdown. */
  for (guint32 o = 0; o < fs_opgraph_n_ops(g); o++) {
    const FsOp *x = fs_opgraph_op(g, o);
    if (x->kind == FS_OP_XFER && x->partner != FS_OP_NONE)
      rank_op(ld, fs_opgraph_stream(g, fs_opgraph_op(g, x->partner)->stream)->rank, o);
  }
  for (size_t i = 0; i < n; i++) {
    json_t *e = json_array_get(ops, i);
    json_t *deps = json_object_get(e, "deps");
    const char *id = json_string_value(json_object_get(e, "id"));
    if (deps == NULL)
      continue;
    if (!json_is_array(deps))
      return bad(error, ld, (int)i, id, "\"deps\" must be a list of op ids");
    size_t k;
    json_t *d;
    json_array_foreach(deps, k, d) {
      gpointer v = json_is_string(d) ? g_hash_table_lookup(ld->ids, json_string_value(d)) : NULL;
      if (v == NULL)
        return bad(error, ld, (int)i, id, "deps[%zu] is not the id of an op", k);
      fs_opgraph_add_dep(g, g_array_index(op_of, guint32, i), GPOINTER_TO_UINT(v) - 1);
    }
  }
  return TRUE;
}

/* ---- the declared keys (util/schema.h) -------------------------------------- */

/* Every key a trace may hold, per object; the values are read by the loader
 * above (FS_SCHEMA_ANY), so the walk refuses an unknown key ("did you mean")
 * and documents the format (workloads/README.md's generated tables). */
#define KEY(k, vdoc, d)                                                                         \
  {.key = k, .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE, .value_doc = vdoc, .doc = d}
/* A key the loader requires (req: the README's "required" column). */
#define NEED(k, req, vdoc, d)                                                                   \
  {.key = k, .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE, .value_doc = vdoc, .doc = d,    \
   .required_doc = req}

static const FsSchemaField trace_fields[] = {
  KEY("schema_version", "`1`", "the format's version (optional)"),
  KEY("name", "text", "shown in the output (default: the file name)"),
  NEED("ranks", "this or `nranks`", "list of tables `replay.rank`", "rank → GPU"),
  NEED("nranks", "this or `ranks`", "a number", "ranks 0 .. N−1 on the topology's first N GPUs"),
  KEY("communicators", "list of tables `replay.communicator`", "the groups collectives run on"),
  NEED("ops", "yes", "list of tables `replay.op`", "every rank's ops (not empty)"),
};
static const FsSchema trace_schema = {"trace", NULL, trace_fields, G_N_ELEMENTS(trace_fields)};

static const FsSchemaField rank_fields[] = {
  NEED("rank", "yes", "a number", "the rank, 0 to N−1"),
  KEY("gpu", "a GPU name or index", "its GPU (default: the rank-th GPU in placement order)"),
};
static const FsSchema rank_schema = {"rank", NULL, rank_fields, G_N_ELEMENTS(rank_fields)};

static const FsSchemaField comm_fields[] = {
  NEED("name", "yes", "text", "what ops' `comm` names (unique)"),
  NEED("ranks", "yes", "list of ranks", "its members (not empty, each once)"),
};
static const FsSchema comm_schema = {"communicator", NULL, comm_fields, G_N_ELEMENTS(comm_fields)};

static const FsSchemaField op_fields[] = {
  KEY("id", "text", "what `deps` name (unique)"),
  NEED("rank", "yes", "a number", "the rank that runs it"),
  NEED("kind", "yes", "`compute`, `send`, `recv` or a collective (`all_reduce`, …)",
       "what it does"),
  NEED("duration", "compute: this or `flops`", "a time (`\"1.5 ms\"`)", "how long it takes"),
  NEED("flops", "compute: this or `duration`", "a number",
       "FLOPs, timed as a square GEMM on the rank's GPU"),
  KEY("dtype", "a datatype (`bf16`)", "compute with flops: the GEMM's datatype (default bf16)"),
  NEED("peer", "send, recv", "a rank", "the other rank"),
  NEED("bytes", "send, a collective", "a number, or a size string (`\"32M\"`)",
       "send: what it moves; a collective: the buffer per rank"),
  NEED("comm", "a collective", "text", "the communicator's name"),
  KEY("stream", "text", "ops of one (rank, stream) run in file order (default by kind)"),
  KEY("deps", "list of ids", "ops that must finish first"),
  KEY("name", "text", "the label in the trace (default: the id)"),
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

/* Walks the objects of list (a node of the document's tree, or NULL) against schema; items that
 * are not objects are left to the loader. */
static gboolean walk_items(const FsYamlNode *list, const FsSchema *schema, GError **error)
{
  for (guint i = 0; list != NULL && list->kind == FS_YAML_SEQ && i < list->n; i++)
    if (list->values[i]->kind == FS_YAML_MAP &&
        !fs_schema_read(schema, list->values[i], NULL, NULL, error))
      return FALSE;
  return TRUE;
}

/* Refuses the first key the format does not declare, in the trace object and in each rank,
 * communicator and op object (a misspelled "deps" or "stream" would be ignored otherwise),
 * in FS_WORKLOAD_ERROR_INVALID with the key's position and JSON path. */
static gboolean check_keys(const FsJsonDoc *doc, GError **error)
{
  g_autoptr(FsYamlDoc) tree = fs_yaml_doc_from_json(doc);
  const FsYamlNode *root = fs_yaml_doc_root(tree);
  GError *e = NULL;
  if (fs_schema_read(&trace_schema, root, NULL, NULL, &e) &&
      walk_items(fs_yaml_map_get(root, "ranks"), &rank_schema, &e) &&
      walk_items(fs_yaml_map_get(root, "communicators"), &comm_schema, &e) &&
      walk_items(fs_yaml_map_get(root, "ops"), &op_schema, &e))
    return TRUE;
  g_set_error_literal(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID, e->message);
  g_error_free(e);
  return FALSE;
}

/* Builds a replay from the parsed document doc: checks the root and its schema_version, the
 * declared keys (check_keys), then reads the ranks, communicators and ops; the name is the file's "name", else name.  Returns a
 * new replay that the caller frees with fs_replay_free, or NULL with error set at the JSON path
 * of the first fault (the partial replay is freed). */
static FsReplay *load(const FsJsonDoc *doc, const char *name, const FsTopo *topo,
                      const FsEfficiency *eff, GError **error)
{
  json_t *root = fs_json_doc_root(doc);
  Loader ld = { .file = name, .doc = doc, .topo = topo, .eff = eff };
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
  gboolean ok = TRUE;
  json_t *sv = json_object_get(root, "schema_version");
  if (!json_is_object(root))
    ok = bad_at(error, &ld, "$", "expected a JSON object with \"ranks\", \"communicators\" and \"ops\"");
  else if (sv != NULL && (!json_is_integer(sv) || json_integer_value(sv) != FS_REPLAY_SCHEMA_VERSION))
    ok = bad_at(error, &ld, "$.schema_version", "\"schema_version\" must be %d", FS_REPLAY_SCHEMA_VERSION);
  ok = ok && check_keys(doc, error) && load_ranks(&ld, root, error) && load_comms(&ld, root, error) &&
       load_ops(&ld, root, error);
  const char *nm = json_is_object(root) ? json_string_value(json_object_get(root, "name")) : NULL;
  r->name = g_strdup(nm ? nm : name);
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
