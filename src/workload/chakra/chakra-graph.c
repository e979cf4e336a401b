/* chakra-graph.c — parsed Chakra nodes into a replay op graph (the mapping
 * is in chakra.h and tests/data/chakra/README.md). */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "coll/coll.h"
#include "compute/kernel.h"
#include "util/strutil.h"
#include "util/units.h"
#include "workload/chakra/chakra-private.h"
#include "workload/spec.h"

/* Chakra's CollectiveCommType values, in et_def.proto's order, as
 * fabricsim's collectives; REDUCE_SCATTER_BLOCK is a reduce-scatter. */
static const FsCollOp comm_types[] = {
  FS_COLL_ALL_REDUCE, FS_COLL_REDUCE, FS_COLL_ALL_GATHER, FS_COLL_GATHER, FS_COLL_SCATTER,
  FS_COLL_BROADCAST, FS_COLL_ALLTOALL, FS_COLL_REDUCE_SCATTER, FS_COLL_REDUCE_SCATTER,
  FS_COLL_BARRIER,
};
static const char *const comm_type_names[] = {
  "ALL_REDUCE", "REDUCE", "ALL_GATHER", "GATHER", "SCATTER", "BROADCAST", "ALL_TO_ALL",
  "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER",
};
static const char *const type_names[] = {
  "INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE", "COMP_NODE",
  "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE",
};

typedef struct {
  const FsTopo *topo;
  const FsEfficiency *eff;
  const FsChakraOptions *opt;
  FsChakraStats st;
  CkFile *files;
  guint n;
  FsReplay *r;
  guint *gpu;                  /* rank → topology node */
  GHashTable *groups;          /* pg_name → GArray(guint) of ranks (lookup only) */
  GHashTable *comms;           /* "r0,r1,…" → comm index + 1 (lookup only) */
  GArray *comm_calls;          /* GArray(guint coll) per comm */
  GArray *coll_info;           /* CollInfo per collective */
  GHashTable *calls_by_rank;   /* "comm/rank" → calls so far */
  GHashTable *sends, *recvs;   /* "src>dst#tag" → GArray(P2p) (lookup only) */
  GPtrArray *recv_keys;        /* the keys of recvs, in order of first use */
} Builder;

/* A send or receive node waiting to be matched. */
typedef struct {
  guint32 op;
  const CkNode *node;
  guint index;
} P2p;

typedef struct {
  FsCollOp op;
  uint64_t bytes;
  const CkNode *first;         /* the node that created it (for messages) */
} CollInfo;

static gboolean bad(GError **error, const CkNode *n, guint index, const char *fmt, ...)
  G_GNUC_PRINTF(4, 5);

static gboolean bad(GError **error, const CkNode *n, guint index, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_autofree char *esc = fs_escape_controls(msg);
  g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID,
              "%s: node %u (id %" G_GUINT64_FORMAT "): %s", n->where, index, n->id, esc);
  return FALSE;
}

/* ---- Process groups ------------------------------------------------------ */

/* The JSON list inside a METADATA_NODE's inputs.values: PyTorch's
 * process-group list, written either as JSON or as the Python repr of a
 * one-string list ("['[{…}]']"), as Chakra's converter copies it. */
static json_t *pg_list(const char *values)
{
  json_t *v = json_loads(values, 0, NULL);
  if (v == NULL) {
    gsize l = strlen(values);
    if (l >= 4 && (values[0] == '[') && (values[1] == '\'' || values[1] == '"') &&
        values[l - 1] == ']' && values[l - 2] == values[1]) {
      g_autofree char *inner = g_strndup(values + 2, l - 4);
      v = json_loads(inner, 0, NULL);
    }
  } else if (json_is_array(v) && json_array_size(v) == 1 && json_is_string(json_array_get(v, 0))) {
    json_t *inner = json_loads(json_string_value(json_array_get(v, 0)), 0, NULL);
    json_decref(v);
    v = inner;
  }
  return v;
}

/* Reads the process groups that node n (at index in its file) defines in its inputs.values
 * (PyTorch's [{"pg_name", "ranks"}, …] list; a node without "pg_name" defines none) into
 * b->groups by name; an empty ranks list means every rank.  Returns FALSE through bad() for a
 * list of another shape, a rank out of range or listed twice, or a group defined again with
 * other ranks. */
static gboolean read_groups(Builder *b, const CkNode *n, guint index, GError **error)
{
  if (n->inputs_values == NULL || strstr(n->inputs_values, "pg_name") == NULL)
    return TRUE;
  json_t *list = pg_list(n->inputs_values);
  gboolean ok = json_is_array(list);
  size_t k;
  json_t *e;
  json_array_foreach(list, k, e) {
    const char *name = json_string_value(json_object_get(e, "pg_name"));
    json_t *ranks = json_object_get(e, "ranks");
    if (name == NULL || !json_is_array(ranks)) {
      ok = FALSE;
      break;
    }
    GArray *members = g_array_new(FALSE, FALSE, sizeof(guint));
    size_t q;
    json_t *x;
    json_array_foreach(ranks, q, x) {
      guint rk = (guint)json_integer_value(x);
      if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= b->n) {
        g_array_unref(members);
        json_decref(list);
        return bad(error, n, index, "process group \"%s\": ranks[%zu] is not a rank of this "
                   "trace (0 to %u)", name, q, b->n - 1);
      }
      for (guint j = 0; j < members->len; j++)
        if (g_array_index(members, guint, j) == rk) {
          g_array_unref(members);
          json_decref(list);
          return bad(error, n, index, "process group \"%s\": rank %u is listed twice", name, rk);
        }
      g_array_append_val(members, rk);
    }
    if (members->len == 0) /* PyTorch: no ranks listed means the whole world */
      for (guint rk = 0; rk < b->n; rk++)
        g_array_append_val(members, rk);
    GArray *have = g_hash_table_lookup(b->groups, name);
    if (have != NULL) {
      gboolean same = have->len == members->len &&
        memcmp(have->data, members->data, members->len * sizeof(guint)) == 0;
      g_array_unref(members);
      if (!same) {
        json_decref(list);
        return bad(error, n, index, "process group \"%s\" is defined again with other ranks", name);
      }
    } else {
      g_hash_table_insert(b->groups, g_strdup(name), members);
    }
  }
  json_decref(list);
  if (!ok)
    return bad(error, n, index, "inputs.values names \"pg_name\" but is not PyTorch's process-group "
               "list ([{\"pg_name\": …, \"ranks\": […]}, …])");
  return TRUE;
}

/* ---- Order --------------------------------------------------------------- */

typedef struct {
  uint64_t id;
  guint index;
} IdIndex;

static int cmp_id(const void *a, const void *b)
{
  const IdIndex *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* The index of node id in the sorted table, or -1. */
static gint64 find_id(const IdIndex *t, guint n, uint64_t id)
{
  guint lo = 0, hi = n;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (t[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && t[lo].id == id ? (gint64)t[lo].index : -1;
}

/* A binary min-heap of node indices keyed by node id. */
static void heap_push(GArray *h, const CkNode *nodes, guint x)
{
  g_array_append_val(h, x);
  guint *a = (guint *)h->data;
  for (guint i = h->len - 1; i > 0;) {
    guint p = (i - 1) / 2;
    if (nodes[a[p]].id <= nodes[a[i]].id)
      break;
    guint t = a[p]; a[p] = a[i]; a[i] = t;
    i = p;
  }
}

static guint heap_pop(GArray *h, const CkNode *nodes)
{
  guint *a = (guint *)h->data;
  guint top = a[0];
  a[0] = a[h->len - 1];
  g_array_set_size(h, h->len - 1);
  a = (guint *)h->data;
  for (guint i = 0;;) {
    guint l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->len && nodes[a[l]].id < nodes[a[m]].id)
      m = l;
    if (r < h->len && nodes[a[r]].id < nodes[a[m]].id)
      m = r;
    if (m == i)
      break;
    guint t = a[m]; a[m] = a[i]; a[i] = t;
    i = m;
  }
  return top;
}

/* The rank's nodes in a topological order, ties by lower id (as ASTRA-sim
 * issues ready nodes); dep[i] receives node i's dependencies as indices. */
static gboolean order_rank(const CkFile *f, gboolean ctrl, GArray **dep_out, GArray **order_out,
                           guint *missing, GError **error)
{
  const CkNode *nodes = (const CkNode *)f->nodes->data;
  guint n = f->nodes->len;
  g_autofree IdIndex *t = g_new(IdIndex, MAX(n, 1));
  for (guint i = 0; i < n; i++)
    t[i] = (IdIndex){ nodes[i].id, i };
  qsort(t, n, sizeof *t, cmp_id);
  for (guint i = 1; i < n; i++)
    if (t[i].id == t[i - 1].id) {
      guint a = MIN(t[i].index, t[i - 1].index), b = MAX(t[i].index, t[i - 1].index);
      return bad(error, &nodes[b], b, "the id is used by node %u too", a);
    }
  /* Dependencies as indices (duplicates dropped), and the reverse edges. */
  GArray *dep = g_array_new(FALSE, FALSE, sizeof(guint));  /* flat */
  g_autofree guint *dep_off = g_new0(guint, n + 1);
  g_autofree guint *pending = g_new0(guint, n);
  for (guint i = 0; i < n; i++) {
    dep_off[i] = dep->len;
    for (guint k = ctrl ? 0 : nodes[i].n_ctrl; k < nodes[i].deps->len; k++) {
      uint64_t id = g_array_index(nodes[i].deps, uint64_t, k);
      gint64 j = find_id(t, n, id);
      if (j < 0) {
        /* Chakra's PyTorch converter keeps dependencies on the operators it
         * drops (the thread's root, kernel launches); its feeder treats
         * them as met, and so does this. */
        (*missing)++;
        continue;
      }
      if ((guint)j == i) { /* seen in converted PyTorch traces too */
        (*missing)++;
        continue;
      }
      gboolean dup = FALSE;
      for (guint q = dep_off[i]; q < dep->len && !dup; q++)
        dup = g_array_index(dep, guint, q) == (guint)j;
      if (!dup) {
        guint jj = (guint)j;
        g_array_append_val(dep, jj);
        pending[i]++;
      }
    }
  }
  dep_off[n] = dep->len;
  /* Children lists (CSR) for Kahn's algorithm. */
  g_autofree guint *child_off = g_new0(guint, n + 1);
  for (guint q = 0; q < dep->len; q++)
    child_off[g_array_index(dep, guint, q) + 1]++;
  for (guint i = 0; i < n; i++)
    child_off[i + 1] += child_off[i];
  g_autofree guint *child = g_new(guint, MAX(dep->len, 1));
  g_autofree guint *fill = g_new0(guint, n);
  for (guint i = 0; i < n; i++)
    for (guint q = dep_off[i]; q < dep_off[i + 1]; q++) {
      guint p = g_array_index(dep, guint, q);
      child[child_off[p] + fill[p]++] = i;
    }
  GArray *order = g_array_sized_new(FALSE, FALSE, sizeof(guint), n);
  g_autoptr(GArray) heap = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < n; i++)
    if (pending[i] == 0)
      heap_push(heap, nodes, i);
  while (heap->len > 0) {
    guint i = heap_pop(heap, nodes);
    g_array_append_val(order, i);
    for (guint q = child_off[i]; q < child_off[i + 1]; q++)
      if (--pending[child[q]] == 0)
        heap_push(heap, nodes, child[q]);
  }
  if (order->len < n) {
    guint first = 0;
    while (pending[first] == 0)
      first++;
    g_array_unref(order);
    g_array_unref(dep);
    return bad(error, &nodes[first], first, "is in a dependency cycle or depends on one");
  }
  /* Hand back the per-node lists: dep as a flat array, offsets first. */
  GArray *packed = g_array_sized_new(FALSE, FALSE, sizeof(guint), n + 1 + dep->len);
  g_array_append_vals(packed, dep_off, n + 1);
  g_array_append_vals(packed, dep->data, dep->len);
  g_array_unref(dep);
  *dep_out = packed;
  *order_out = order;
  return TRUE;
}

/* ---- Ops ----------------------------------------------------------------- */

/* The stream a node runs on: its CUDA stream (the `stream` attribute of
 * GPU nodes) when the trace has one, else one per kind (GPU compute, CPU,
 * collectives and sends) and, for receives, one per sending rank.  The
 * first stream a GPU compute node creates is the rank's compute stream. */
static guint stream_for(Builder *b, guint rank, GHashTable *streams, const CkNode *x, guint peer)
{
  gboolean comp = x->type == CK_COMP_NODE && !x->is_cpu_op;
  g_autofree char *key = NULL;
  if (x->is_cpu_op)
    key = g_strdup("cpu");
  else if (x->has_stream)
    key = g_strdup_printf("stream %" G_GINT64_FORMAT, x->stream);
  else if (comp)
    key = g_strdup("compute");
  else if (x->type == CK_COMM_RECV_NODE)
    key = g_strdup_printf("recv from %u", peer);
  else
    key = g_strdup("comm");
  gpointer v = g_hash_table_lookup(streams, key);
  if (v != NULL)
    return GPOINTER_TO_UINT(v) - 1;
  guint s = fs_opgraph_add_stream(b->r->graph, key, rank, (int)b->gpu[rank], comp);
  if (comp && b->r->compute_stream[rank] == G_MAXUINT)
    b->r->compute_stream[rank] = s;
  g_hash_table_insert(streams, g_steal_pointer(&key), GUINT_TO_POINTER(s + 1));
  return s;
}

/* A compute node's time: measured, modelled or zero. */
static gboolean compute_time(Builder *b, guint rank, const CkNode *n, guint index, FsTime *dur,
                             double *flops, GError **error)
{
  *flops = 0;
  if (n->has_duration_ps) {
    b->st.measured++;
    *dur = n->duration_ps;
    return TRUE;
  }
  if (n->duration_us > 0) {
    if (n->duration_us >= (uint64_t)(FS_TIME_MAX / CK_PS_PER_US))
      return bad(error, n, index, "duration_micros %" G_GUINT64_FORMAT " is beyond the simulated "
                 "clock's range (about 106 days)", n->duration_us);
    b->st.measured++;
    *dur = (FsTime)n->duration_us * CK_PS_PER_US;
    return TRUE;
  }
  double fl = n->has_num_ops ? n->num_ops : 0, by = n->has_tensor_size ? n->tensor_size : 0;
  if (fl <= 0 && by <= 0) {
    b->st.untimed++;
    *dur = 0;
    return TRUE;
  }
  const FsGpuModel *gpu = &fs_topo_node(b->topo, b->gpu[rank])->model->u.gpu;
  FsKernel k;
  if (fl > 0) {
    /* As a replay trace's "flops": a square GEMM of these FLOPs picks the
     * efficiency curve's point (sides capped where every curve is flat). */
    uint64_t side = (uint64_t)CLAMP(round(cbrt(fl / 2.0)), 1.0, (double)(1u << 30));
    k = fs_kernel_gemm("chakra", FS_PASS_FORWARD, FS_DTYPE_BF16, side, side, side, 1);
    k.flops = k.model_flops = fl;
    if (by > 0)
      k.bytes = by;
  } else {
    k = fs_kernel_memory("chakra", FS_PASS_FORWARD, FS_DTYPE_BF16, by, 0);
  }
  *dur = fs_kernel_time(&k, gpu, b->eff, NULL);
  *flops = fl;
  if (*dur >= FS_TIME_MAX)
    return bad(error, n, index, "num_ops %g and tensor_size %g take longer than the simulated "
               "clock's range on rank %u's GPU", fl, by, rank);
  b->st.modelled++;
  return TRUE;
}

/* The communicator of a member list (created once). */
static guint comm_of(Builder *b, const GArray *members)
{
  GString *key = g_string_new(NULL);
  for (guint i = 0; i < members->len; i++)
    g_string_append_printf(key, i ? ",%u" : "%u", g_array_index(members, guint, i));
  gpointer v = g_hash_table_lookup(b->comms, key->str);
  if (v != NULL) {
    g_string_free(key, TRUE);
    return GPOINTER_TO_UINT(v) - 1;
  }
  g_autofree guint *nodes = g_new(guint, members->len);
  for (guint i = 0; i < members->len; i++)
    nodes[i] = b->gpu[g_array_index(members, guint, i)];
  guint c = fs_opgraph_add_comm(b->r->graph, key->str, nodes, members->len);
  g_hash_table_insert(b->comms, g_string_free(key, FALSE), GUINT_TO_POINTER(c + 1));
  GArray *calls = g_array_new(FALSE, FALSE, sizeof(guint));
  g_array_append_val(b->comm_calls, calls);
  return c;
}

/* The collective that rank's next call on comm joins. */
static gboolean coll_for(Builder *b, const CkNode *n, guint index, guint rank, guint comm,
                         guint size, FsCollOp op, uint64_t bytes, guint *out, GError **error)
{
  g_autofree char *key = g_strdup_printf("%u/%u", comm, rank);
  guint k = GPOINTER_TO_UINT(g_hash_table_lookup(b->calls_by_rank, key));
  g_hash_table_replace(b->calls_by_rank, g_steal_pointer(&key), GUINT_TO_POINTER(k + 1));
  GArray *calls = g_array_index(b->comm_calls, GArray *, comm);
  if (k < calls->len) {
    guint c = g_array_index(calls, guint, k);
    const CollInfo *ci = &g_array_index(b->coll_info, CollInfo, c);
    if (ci->op != op || ci->bytes != bytes)
      return bad(error, n, index, "call %u of this process group is %s of %" G_GUINT64_FORMAT
                 " bytes per rank here but %s of %" G_GUINT64_FORMAT " at %s (node id %"
                 G_GUINT64_FORMAT ")", k + 1, fs_coll_op_name(op), bytes, fs_coll_op_name(ci->op),
                 ci->bytes, ci->first->where, ci->first->id);
    *out = c;
    return TRUE;
  }
  guint c = fs_opgraph_add_coll(b->r->graph, comm, op, bytes);
  fs_opgraph_set_coll_expected(b->r->graph, c, size);
  g_array_append_val(calls, c);
  CollInfo ci = { op, bytes, n };
  g_array_append_val(b->coll_info, ci);
  *out = c;
  return TRUE;
}

/* The members of node n's process group. */
static gboolean group_of(Builder *b, const CkNode *n, guint index, guint rank, GArray **out,
                         GError **error)
{
  const char *pg = n->pg_name ? n->pg_name : "";
  GArray *m = g_hash_table_lookup(b->groups, pg);
  if (m == NULL && (pg[0] == '\0' || strcmp(pg, "0") == 0)) {
    /* ASTRA-sim: no group, or group "0", is every rank. */
    m = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < b->n; i++)
      g_array_append_val(m, i);
    g_hash_table_insert(b->groups, g_strdup(pg), m);
  }
  if (m == NULL)
    return bad(error, n, index, "process group \"%s\" is not defined (no METADATA_NODE of the "
               "trace lists it)", pg);
  gboolean in = FALSE;
  for (guint i = 0; i < m->len && !in; i++)
    in = g_array_index(m, guint, i) == rank;
  if (!in)
    return bad(error, n, index, "rank %u is not a member of process group \"%s\"", rank, pg);
  *out = m;
  return TRUE;
}

static void unref_array(gpointer a)
{
  if (a != NULL)
    g_array_unref(a);
}

static void add_rank_op(Builder *b, guint rank, guint32 op)
{
  g_array_append_val(g_ptr_array_index(b->r->rank_ops, rank), op);
}

/* Adds the ops of rank's trace file to the replay's graph, in dependency order (ctrl_deps that
 * close a cycle are dropped and counted): compute nodes as compute ops, collectives by
 * comm_type on their process group, sends as eager transfers and receives as zero-time ops
 * queued for matching by (source, destination, tag); metadata nodes are counted, and unknown
 * types fail or, with --skip-unknown, are skipped.  A node that makes no op passes its own
 * dependencies on to its dependents.  Returns FALSE with error set by order_rank (a cycle of data
 * deps) or through bad() at the node for a missing or bad attribute. */
static gboolean build_rank(Builder *b, guint rank, GError **error)
{
  CkFile *f = &b->files[rank];
  const CkNode *nodes = (const CkNode *)f->nodes->data;
  guint n = f->nodes->len;
  GArray *packed = NULL, *order = NULL;
  /* ctrl_deps that close a cycle (Chakra's PyTorch converter writes
   * such, and Chakra's own feeder reads data_deps only) are dropped. */
  guint missing = 0;
  GError *cycle = NULL;
  if (!order_rank(f, TRUE, &packed, &order, &missing, &cycle)) {
    missing = 0;
    if (!order_rank(f, FALSE, &packed, &order, &missing, error)) {
      g_error_free(cycle);
      return FALSE;
    }
    g_error_free(cycle);
    b->st.ctrl_dropped++;
  }
  b->st.missing_deps += missing;
  const guint *dep_off = (const guint *)packed->data, *deps = dep_off + n + 1;
  FsOpGraph *g = b->r->graph;
  /* Per node: its op, or (zero-time nodes left out) the ops it stands for. */
  g_autofree guint32 *op_of = g_new(guint32, MAX(n, 1));
  GPtrArray *through = g_ptr_array_new_full(n, unref_array);
  for (guint i = 0; i < n; i++)
    g_ptr_array_add(through, NULL);
  g_autoptr(GHashTable) streams = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  gboolean ok = TRUE;
  g_autoptr(GArray) dl = g_array_new(FALSE, FALSE, sizeof(guint32));
  for (guint oi = 0; oi < order->len && ok; oi++) {
    guint i = g_array_index(order, guint, oi);
    const CkNode *x = &nodes[i];
    /* The ops this node waits for. */
    g_array_set_size(dl, 0);
    for (guint q = dep_off[i]; q < dep_off[i + 1]; q++) {
      guint p = deps[q];
      if (op_of[p] != FS_OP_NONE)
        g_array_append_val(dl, op_of[p]);
      else if (through->pdata[p] != NULL)
        g_array_append_vals(dl, ((GArray *)through->pdata[p])->data,
                            ((GArray *)through->pdata[p])->len);
    }
    op_of[i] = FS_OP_NONE;
    FsOp o = { .mb = -1, .layer = -1, .partner = FS_OP_NONE };
    g_autofree char *label = x->name && x->name[0] ? NULL
                             : g_strdup_printf("node %" G_GUINT64_FORMAT, x->id);
    o.name = label ? label : x->name;
    guint stream = G_MAXUINT;
    b->st.nodes++;
    switch (x->type) {
    case CK_COMP_NODE:
      o.kind = FS_OP_COMPUTE;
      o.cat = FS_CAT_FORWARD;
      ok = compute_time(b, rank, x, i, &o.dur, &o.model_flops, error);
      stream = stream_for(b, rank, streams, x, 0);
      break;
    case CK_COMM_COLL_NODE: {
      if (x->is_cpu_op) {
        /* The host side of a collective (PyTorch's c10d call): CPU time. */
        o.kind = FS_OP_COMPUTE;
        o.cat = FS_CAT_FORWARD;
        ok = compute_time(b, rank, x, i, &o.dur, &o.model_flops, error);
        stream = stream_for(b, rank, streams, x, 0);
        break;
      }
      if (!x->has_comm_type || x->comm_type >= (int64_t)G_N_ELEMENTS(comm_types)) {
        if (!b->opt->skip_unknown) {
          ok = x->has_comm_type
            ? bad(error, x, i, "unknown comm_type %" G_GINT64_FORMAT " (0 to 9, et_def.proto's "
                  "CollectiveCommType); --skip-unknown skips such nodes", x->comm_type)
            : bad(error, x, i, "a COMM_COLL_NODE needs the attribute comm_type");
          break;
        }
        b->st.skipped++;
        break;
      }
      FsCollOp cop = comm_types[x->comm_type];
      if (!x->has_comm_size && cop != FS_COLL_BARRIER) {
        ok = bad(error, x, i, "a %s node needs the attribute comm_size (bytes)",
                 comm_type_names[x->comm_type]);
        break;
      }
      GArray *members = NULL;
      if (!(ok = group_of(b, x, i, rank, &members, error)))
        break;
      guint size = members->len;
      uint64_t bytes = (uint64_t)x->comm_size;
      /* comm_size is each rank's input; fabricsim's unit is the per-rank
       * block of the collectives whose input holds every block. */
      if (cop == FS_COLL_REDUCE_SCATTER || cop == FS_COLL_ALLTOALL || cop == FS_COLL_SCATTER)
        bytes = (bytes + size - 1) / size;
      if (cop == FS_COLL_BARRIER)
        bytes = 0;
      b->st.collectives++;
      if (size < 2) {
        o.kind = FS_OP_DELAY; /* a group of one: nothing to exchange */
        o.cat = FS_CAT_COMM;
        stream = stream_for(b, rank, streams, x, 0);
        break;
      }
      guint comm = comm_of(b, members), c = 0;
      if (!(ok = coll_for(b, x, i, rank, comm, size, cop, bytes, &c, error)))
        break;
      o.kind = FS_OP_COLL;
      o.cat = FS_CAT_COMM;
      o.coll = c;
      o.bytes = bytes;
      stream = stream_for(b, rank, streams, x, 0);
      break;
    }
    case CK_COMM_SEND_NODE:
    case CK_COMM_RECV_NODE: {
      gboolean send = x->type == CK_COMM_SEND_NODE;
      int64_t peer = send ? x->comm_dst : x->comm_src;
      if (!(send ? x->has_dst : x->has_src) || peer < 0 || peer >= (int64_t)b->n ||
          (guint)peer == rank) {
        ok = bad(error, x, i, "a %s needs %s: another rank of the trace (0 to %u)",
                 type_names[x->type], send ? "comm_dst" : "comm_src", b->n - 1);
        break;
      }
      if ((send ? x->has_src && x->comm_src != rank : x->has_dst && x->comm_dst != rank)) {
        ok = bad(error, x, i, "%s is %" G_GINT64_FORMAT " but this is rank %u's file",
                 send ? "comm_src" : "comm_dst", send ? x->comm_src : x->comm_dst, rank);
        break;
      }
      if (send && !x->has_comm_size) {
        ok = bad(error, x, i, "a COMM_SEND_NODE needs the attribute comm_size (bytes)");
        break;
      }
      b->st.p2p++;
      /* Sends are eager, as in ASTRA-sim: a send starts when its node is
       * ready, whether or not the receive is posted; a receive (a zero-time
       * op) ends when it is ready and its matching send has arrived. */
      o.kind = send ? FS_OP_XFER : FS_OP_DELAY;
      o.cat = FS_CAT_COMM;
      if (send) {
        o.bytes = (uint64_t)x->comm_size;
        o.src = (int32_t)b->gpu[rank];
        o.dst = (int32_t)b->gpu[peer];
      }
      stream = stream_for(b, rank, streams, x, (guint)peer);
      guint32 op = fs_opgraph_add(g, stream, &o, (const guint32 *)dl->data, dl->len);
      op_of[i] = op;
      if (!send)
        add_rank_op(b, rank, op);
      g_autofree char *key = g_strdup_printf("%u>%u#%" G_GINT64_FORMAT, send ? rank : (guint)peer,
                                             send ? (guint)peer : rank, x->has_tag ? x->comm_tag : 0);
      GHashTable *mine = send ? b->sends : b->recvs;
      GArray *q = g_hash_table_lookup(mine, key);
      if (q == NULL) {
        q = g_array_new(FALSE, FALSE, sizeof(P2p));
        g_hash_table_insert(mine, g_strdup(key), q);
        if (!send)
          g_ptr_array_add(b->recv_keys, g_strdup(key));
      }
      P2p p = { op, x, i };
      g_array_append_val(q, p);
      continue;
    }
    case CK_METADATA_NODE:
      b->st.metadata++; /* its process groups were read first (ck_build) */
      break;
    default:
      if (!b->opt->skip_unknown) {
        ok = x->type >= 0 && x->type < (int)G_N_ELEMENTS(type_names)
          ? bad(error, x, i, "fabricsim does not simulate %s nodes; --skip-unknown skips them",
                type_names[x->type])
          : bad(error, x, i, "unknown node type %d; --skip-unknown skips such nodes", x->type);
        break;
      }
      b->st.skipped++;
      break;
    }
    if (!ok)
      break;
    if (stream == G_MAXUINT) {
      /* Left out: its dependents wait for what it waited for. */
      GArray *t = g_array_new(FALSE, FALSE, sizeof(guint32));
      g_array_append_vals(t, dl->data, dl->len);
      through->pdata[i] = t;
      continue;
    }
    guint32 op = fs_opgraph_add(g, stream, &o, (const guint32 *)dl->data, dl->len);
    op_of[i] = op;
    if (o.kind != FS_OP_COMPUTE)
      add_rank_op(b, rank, op);
  }
  g_ptr_array_unref(through);
  g_array_unref(packed);
  g_array_unref(order);
  return ok;
}

/* Builds one replay from the n parsed trace files (file i is rank i, on the topology's i-th
 * GPU): reads every file's process groups first, then each rank's ops, then makes the k-th
 * receive of each (source, destination, tag) wait for the k-th send.  Returns a new replay that
 * the caller frees with fs_replay_free, with the counts in *stats when stats is not NULL; or
 * NULL with error set by a node's check, for a receive without its send, or with
 * FS_WORKLOAD_ERROR_INVALID when no node makes an op. */
FsReplay *ck_build(CkFile *files, guint n, const char *title, const FsTopo *topo,
                   const FsEfficiency *eff, const FsChakraOptions *opt, FsChakraStats *stats,
                   GError **error)
{
  static const FsChakraOptions defaults = { FALSE };
  Builder b = { .topo = topo, .eff = eff, .opt = opt ? opt : &defaults, .files = files, .n = n };
  FsReplay *r = g_new0(FsReplay, 1);
  r->graph = fs_opgraph_new();
  r->name = g_strdup(title);
  r->n_ranks = n;
  b.r = r;
  guint ngpu;
  const guint *gpus = fs_topo_gpus(topo, &ngpu);
  b.gpu = g_new(guint, n);
  r->compute_stream = g_new(guint, n);
  r->rank_ops = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  for (guint i = 0; i < n; i++) {
    b.gpu[i] = gpus[i];
    r->compute_stream[i] = G_MAXUINT;
    g_ptr_array_add(r->rank_ops, g_array_new(FALSE, FALSE, sizeof(guint32)));
  }
  b.groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
  b.comms = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  b.calls_by_rank = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  b.sends = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
  b.recvs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
  b.recv_keys = g_ptr_array_new_with_free_func(g_free);
  b.comm_calls = g_array_new(FALSE, FALSE, sizeof(GArray *));
  b.coll_info = g_array_new(FALSE, FALSE, sizeof(CollInfo));
  b.st.ranks = n;
  gboolean ok = TRUE;
  /* Process groups first: a metadata node may come after the nodes that use
   * its groups, or in another rank's file. */
  for (guint rk = 0; rk < n && ok; rk++)
    for (guint i = 0; i < files[rk].nodes->len && ok; i++) {
      const CkNode *x = &g_array_index(files[rk].nodes, CkNode, i);
      if (x->type == CK_METADATA_NODE)
        ok = read_groups(&b, x, i, error);
    }
  for (guint rk = 0; rk < n && ok; rk++)
    ok = build_rank(&b, rk, error);
  /* The k-th receive of a (source, destination, tag) waits for the k-th
   * send; its transfer counts for the receiver's breakdown. */
  for (guint k = 0; ok && k < b.recv_keys->len; k++) {
    const char *key = b.recv_keys->pdata[k];
    GArray *rq = g_hash_table_lookup(b.recvs, key), *sq = g_hash_table_lookup(b.sends, key);
    guint have = sq ? sq->len : 0;
    if (rq->len > have) {
      const P2p *p = &g_array_index(rq, P2p, have);
      ok = bad(error, p->node, p->index, "receive %u from rank %" G_GINT64_FORMAT " (tag %"
               G_GINT64_FORMAT ") has no matching send: that rank sends %u", have + 1,
               p->node->comm_src, p->node->has_tag ? p->node->comm_tag : 0, have);
      break;
    }
    for (guint q = 0; q < rq->len; q++) {
      guint32 recv = g_array_index(rq, P2p, q).op, send = g_array_index(sq, P2p, q).op;
      fs_opgraph_add_dep(r->graph, recv, send);
      add_rank_op(&b, fs_opgraph_stream(r->graph, fs_opgraph_op(r->graph, recv)->stream)->rank, send);
    }
  }
  if (ok) {
    FsOpGraph *g = r->graph;
    if (fs_opgraph_n_ops(g) == 0) {
      g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID,
                  "%s: the trace has no node that fabricsim simulates", files[0].name);
      ok = FALSE;
    }
  }
  for (guint i = 0; i < b.comm_calls->len; i++)
    g_array_unref(g_array_index(b.comm_calls, GArray *, i));
  g_array_unref(b.comm_calls);
  g_array_unref(b.coll_info);
  g_hash_table_unref(b.groups);
  g_hash_table_unref(b.comms);
  g_hash_table_unref(b.calls_by_rank);
  g_hash_table_unref(b.sends);
  g_hash_table_unref(b.recvs);
  g_ptr_array_unref(b.recv_keys);
  g_free(b.gpu);
  if (!ok) {
    fs_replay_free(r);
    return NULL;
  }
  if (stats != NULL)
    *stats = b.st;
  return r;
}
