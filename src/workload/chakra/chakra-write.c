/* chakra-write.c — an op graph as per-rank Chakra traces (chakra.h), encoded
 * by protoc-c's code for et_def.proto, framed as Chakra's protolib frames
 * them (each message after its length as a varint). */
#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "coll/coll.h"
#include "util/error.h"
#include "util/interrupt.h"
#include "util/strutil.h"
#include "workload/chakra/chakra-private.h"
#include "workload/chakra/et_def.pb-c.h"
#include "workload/spec.h"

/* Node ids: the metadata node is 0; op i is i + 1; the receive written for
 * a transfer x that has no receive op of its own is RECV_BASE + x, after
 * every op, so that a rank's receives keep the order of their sends. */
#define META_ID 0

typedef struct {
  guint32 op;          /* graph op, or FS_OP_NONE for a written receive */
  guint32 xfer;        /* the transfer of a written receive */
  uint64_t id;
  GArray *ctrl, *data; /* uint64_t node ids */
} WNode;

typedef struct {
  const FsOpGraph *g;
  const FsTopo *topo;
  guint n_ranks;
  guint *rank_of_stream;     /* stream → trace rank */
  GArray **nodes;            /* per rank: WNode */
  guint32 *node_of_op;       /* op → index in its rank's nodes, or FS_OP_NONE (left out) */
  GArray **through;          /* per left-out op: the ops its dependents wait for */
  guint32 *recv_of_xfer;     /* XFER → its receive's node index on the destination rank */
  GPtrArray *groups;         /* GArray(guint ranks) per process group; name = index + 1 */
  /* Data-parallel replicas that the step mirrors by symmetry: written as
   * copies of the simulated rank.  n_rep = 1 when nothing is mirrored. */
  guint n_rep, d0;           /* replicas; the simulated ranks' replica index */
  gint **rep;                /* per simulated trace rank: its replicas' trace ranks, or NULL */
  guint *template_of;        /* per trace rank: the simulated rank it copies */
  guint *replica_of;         /* per trace rank: its replica index */
  guint *members;            /* per collective: member ops in the graph */
  guint n_colls;
  uint64_t recv_base;
} Writer;

static gboolean refuse(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static gboolean refuse(GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID, "--chakra-out: %s", msg);
  return FALSE;
}

static guint trace_rank(const Writer *w, int gpu)
{
  return (guint)fs_topo_node(w->topo, (guint)gpu)->gpu_rank;
}

/* Replica d of simulated trace rank t. */
static guint map_rank(const Writer *w, guint t, guint d)
{
  return w->rep != NULL && w->rep[t] != NULL ? (guint)w->rep[t][d] : t;
}

/* The process group of collective c as replica d runs it (created on
 * first use): a mirrored collective (its group spans the replicas) is the
 * same for all; another is replica d's own, its ranks mapped. */
static guint group_of(Writer *w, guint c, guint d)
{
  const guint *gpus;
  guint n;
  fs_opgraph_coll_info(w->g, c, NULL, NULL, &gpus, &n);
  gboolean mirrored = w->members[c] < n;
  g_autoptr(GArray) ranks = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < n; i++) {
    guint r = trace_rank(w, (int)gpus[i]);
    if (!mirrored)
      r = map_rank(w, r, d);
    g_array_append_val(ranks, r);
  }
  for (guint k = 0; k < w->groups->len; k++) {
    GArray *have = w->groups->pdata[k];
    if (have->len == n && memcmp(have->data, ranks->data, n * sizeof(guint)) == 0)
      return k;
  }
  g_ptr_array_add(w->groups, g_steal_pointer(&ranks));
  return w->groups->len - 1;
}

/* Checks what a Chakra trace can say, and maps streams to trace ranks. */
static gboolean check(Writer *w, GError **error)
{
  const FsOpGraph *g = w->g;
  guint ngpu, ns = fs_opgraph_n_streams(g);
  fs_topo_gpus(w->topo, &ngpu);
  g_autofree gboolean *used = g_new0(gboolean, ngpu);
  w->rank_of_stream = g_new(guint, MAX(ns, 1));
  for (guint s = 0; s < ns; s++) {
    const FsStream *st = fs_opgraph_stream(g, s);
    w->rank_of_stream[s] = trace_rank(w, st->gpu);
    used[w->rank_of_stream[s]] = TRUE;
  }
  /* Members of each collective, and ops Chakra cannot express. */
  w->n_colls = 0;
  for (guint32 i = 0; i < fs_opgraph_n_ops(g); i++)
    if (fs_opgraph_op(g, i)->kind == FS_OP_COLL)
      w->n_colls = MAX(w->n_colls, fs_opgraph_op(g, i)->coll + 1);
  w->members = g_new0(guint, MAX(w->n_colls, 1));
  for (guint32 i = 0; i < fs_opgraph_n_ops(g); i++) {
    const FsOp *o = fs_opgraph_op(g, i);
    if (o->kind == FS_OP_DELAY && o->dur != 0)
      return refuse(error, "op \"%s\" (%s, on rank %u) is communication timed alone, which a "
                    "Chakra trace cannot express; write steps whose communication runs on the "
                    "fabric (tp = cp = ep = 1, the max-min flow model, no --dp-isolated)",
                    o->name, fs_op_cat_name(o->cat), w->rank_of_stream[o->stream]);
    if (o->kind == FS_OP_COLL)
      w->members[o->coll]++;
    if (o->kind == FS_OP_XFER && !used[trace_rank(w, o->dst)])
      return refuse(error, "op \"%s\" sends to %s, which has no rank in the step", o->name,
                    fs_topo_node(w->topo, (guint)o->dst)->name);
  }
  /* Mirrored replicas: a collective with fewer member ops than GPUs spans
   * the data-parallel replicas, the simulated rank at the same place (d0)
   * of every such group, the others' GPUs simulated by no stream. */
  w->rep = g_new0(gint *, ngpu);
  w->n_rep = 1;
  w->d0 = 0;
  gboolean any = FALSE;
  for (guint32 i = 0; i < fs_opgraph_n_ops(g); i++) {
    const FsOp *o = fs_opgraph_op(g, i);
    const guint *gpus;
    guint n;
    if (o->kind != FS_OP_COLL || !fs_opgraph_coll_info(g, o->coll, NULL, NULL, &gpus, &n) ||
        w->members[o->coll] == n)
      continue;
    guint s = w->rank_of_stream[o->stream], at = G_MAXUINT;
    for (guint k = 0; k < n; k++) {
      guint t = trace_rank(w, (int)gpus[k]);
      if (t == s)
        at = k;
      else if (used[t])
        return refuse(error, "a collective over %u GPUs has %u members in the step, two of them "
                      "simulated: its mirrored replicas cannot be told apart", n, w->members[o->coll]);
    }
    if (!any) {
      w->n_rep = n;
      w->d0 = at;
      any = TRUE;
    }
    if (n != w->n_rep || at != w->d0)
      return refuse(error, "the mirrored collectives do not span the same replicas (%u GPUs at "
                    "place %u, and %u at place %u)", w->n_rep, w->d0, n, at);
    if (w->rep[s] == NULL) {
      w->rep[s] = g_new(gint, n);
      for (guint k = 0; k < n; k++)
        w->rep[s][k] = trace_rank(w, (int)gpus[k]);
    } else {
      for (guint k = 0; k < n; k++)
        if (w->rep[s][k] != (gint)trace_rank(w, (int)gpus[k]))
          return refuse(error, "rank %u joins mirrored collectives over two different groups", s);
    }
  }
  g_autofree gboolean *covered = g_new0(gboolean, ngpu);
  w->template_of = g_new(guint, ngpu);
  w->replica_of = g_new(guint, ngpu);
  for (guint t = 0; t < ngpu; t++) {
    if (!used[t])
      continue;
    if (any && w->rep[t] == NULL)
      return refuse(error, "rank %u has no part in the mirrored collectives, so its replicas "
                    "are unknown", t);
    for (guint d = 0; d < w->n_rep; d++) {
      guint m = map_rank(w, t, d);
      if (covered[m])
        return refuse(error, "GPU %u is the replica of two ranks", m);
      covered[m] = TRUE;
      w->template_of[m] = t;
      w->replica_of[m] = any ? d : w->d0;
    }
  }
  w->n_ranks = 0;
  while (w->n_ranks < ngpu && covered[w->n_ranks])
    w->n_ranks++;
  for (guint r = w->n_ranks; r < ngpu; r++)
    if (covered[r])
      return refuse(error, "the step runs on GPU %u but not on GPU %u of the topology; a "
                    "Chakra trace's ranks are the first N GPUs", r, w->n_ranks);
  if (w->n_ranks == 0)
    return refuse(error, "the step has no op");
  return TRUE;
}

static WNode *add_node(Writer *w, guint rank, guint32 op)
{
  WNode n = { .op = op, .xfer = FS_OP_NONE, .ctrl = g_array_new(FALSE, FALSE, sizeof(uint64_t)),
              .data = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
  g_array_append_val(w->nodes[rank], n);
  return &g_array_index(w->nodes[rank], WNode, w->nodes[rank]->len - 1);
}

static void add_dep(GArray *list, uint64_t id)
{
  for (guint i = 0; i < list->len; i++)
    if (g_array_index(list, uint64_t, i) == id)
      return;
  g_array_append_val(list, id);
}

/* The node ids on rank that op's dependency d stands for (appended to out);
 * FALSE when it cannot be said in rank's file. */
static gboolean dep_ids(Writer *w, guint rank, guint32 d, GArray *out, GError **error)
{
  const FsOp *x = fs_opgraph_op(w->g, d);
  guint xr = w->rank_of_stream[x->stream];
  if (w->node_of_op[d] == FS_OP_NONE) {
    GArray *t = w->through[d];
    for (guint k = 0; t != NULL && k < t->len; k++)
      if (!dep_ids(w, rank, g_array_index(t, guint32, k), out, error))
        return FALSE;
    return TRUE;
  }
  if (xr == rank) {
    add_dep(out, g_array_index(w->nodes[rank], WNode, w->node_of_op[d]).id);
    return TRUE;
  }
  /* Another rank's transfer to this one: its receive here. */
  if (x->kind == FS_OP_XFER && w->recv_of_xfer[d] != FS_OP_NONE &&
      trace_rank(w, x->dst) == rank) {
    add_dep(out, g_array_index(w->nodes[rank], WNode, w->recv_of_xfer[d]).id);
    return TRUE;
  }
  return refuse(error, "an op of rank %u waits for op \"%s\" of rank %u, which is not a "
                "transfer to it; a Chakra trace's dependencies stay within a rank", rank,
                x->name, xr);
}

/* Lays out the nodes of every rank and their dependencies. */
static gboolean layout(Writer *w, GError **error)
{
  const FsOpGraph *g = w->g;
  guint nops = fs_opgraph_n_ops(g);
  w->nodes = g_new(GArray *, w->n_ranks);
  for (guint r = 0; r < w->n_ranks; r++)
    w->nodes[r] = g_array_new(FALSE, FALSE, sizeof(WNode));
  w->node_of_op = g_new(guint32, MAX(nops, 1));
  w->recv_of_xfer = g_new(guint32, MAX(nops, 1));
  w->through = g_new0(GArray *, MAX(nops, 1));
  w->recv_base = (uint64_t)nops + 1;
  /* Nodes in op order (ops are added after their dependencies). */
  for (guint32 i = 0; i < nops; i++) {
    const FsOp *o = fs_opgraph_op(g, i);
    w->recv_of_xfer[i] = FS_OP_NONE;
    if (o->kind == FS_OP_DELAY) {
      w->node_of_op[i] = FS_OP_NONE; /* zero time: left out */
      continue;
    }
    guint r = w->rank_of_stream[o->stream];
    w->node_of_op[i] = w->nodes[r]->len;
    add_node(w, r, i)->id = (uint64_t)i + 1;
  }
  /* A receive for each transfer without its own, on the destination. */
  for (guint32 i = 0; i < nops; i++) {
    const FsOp *o = fs_opgraph_op(g, i);
    if (o->kind == FS_OP_XFER && o->partner != FS_OP_NONE) {
      w->recv_of_xfer[i] = w->node_of_op[o->partner];
      g_array_index(w->nodes[w->rank_of_stream[fs_opgraph_op(g, o->partner)->stream]], WNode,
                    w->node_of_op[o->partner]).xfer = i;
    } else if (o->kind == FS_OP_XFER) {
      guint r = trace_rank(w, o->dst);
      w->recv_of_xfer[i] = w->nodes[r]->len;
      WNode *n = add_node(w, r, FS_OP_NONE);
      n->xfer = i;
      n->id = w->recv_base + i;
    }
  }
  /* Dependencies, in op order so that left-out ops are resolved first. */
  g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  for (guint32 i = 0; i < nops; i++) {
    const FsOp *o = fs_opgraph_op(g, i);
    guint r = w->rank_of_stream[o->stream];
    guint nd;
    const uint32_t *d = fs_opgraph_deps(g, i, &nd);
    if (w->node_of_op[i] == FS_OP_NONE) {
      w->through[i] = g_array_new(FALSE, FALSE, sizeof(guint32));
      g_array_append_vals(w->through[i], d, nd);
      continue;
    }
    WNode *n = &g_array_index(w->nodes[r], WNode, w->node_of_op[i]);
    const FsStream *st = fs_opgraph_stream(g, o->stream);
    (void)st;
    for (guint k = 0; k < nd; k++) {
      g_array_set_size(ids, 0);
      if (!dep_ids(w, r, d[k], ids, error))
        return FALSE;
      /* The op before it on its stream is a control dependency (the stream's
       * order); any other a data dependency. */
      gboolean prev = fs_opgraph_op(g, d[k])->stream == o->stream;
      for (guint q = 0; q < ids->len; q++)
        add_dep(prev ? n->ctrl : n->data, g_array_index(ids, uint64_t, q));
    }
  }
  return TRUE;
}

/* ---- Encoding ------------------------------------------------------------ */

typedef struct {
  ChakraProtoMsg__AttributeProto a[10];
  ChakraProtoMsg__AttributeProto *p[10];
  guint n;
} Attrs;

/* Appends a new attribute called name of the value kind vc to at and
 * returns it for its value to be set (at holds ten at most). */
static ChakraProtoMsg__AttributeProto *attr_add(Attrs *at, const char *name,
                                               ChakraProtoMsg__AttributeProto__ValueCase vc)
{
  g_assert(at->n < G_N_ELEMENTS(at->a));
  ChakraProtoMsg__AttributeProto *x = &at->a[at->n];
  *x = (ChakraProtoMsg__AttributeProto)CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  x->name = (char *)name;
  x->value_case = vc;
  at->p[at->n++] = x;
  return x;
}

static void attr_int(Attrs *at, const char *name, int64_t v)
{
  attr_add(at, name, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL)->int64_val = v;
}

static void attr_bool(Attrs *at, const char *name, gboolean v)
{
  attr_add(at, name, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL)->bool_val = v;
}

static void attr_str(Attrs *at, const char *name, const char *v)
{
  attr_add(at, name, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL)->string_val = (char *)v;
}

/* Appends a message after its length as a varint. */
static void frame(GByteArray *out, const ProtobufCMessage *m)
{
  size_t len = protobuf_c_message_get_packed_size(m);
  guint8 v[10];
  guint k = 0;
  size_t x = len;
  do {
    v[k++] = (guint8)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
    x >>= 7;
  } while (x != 0);
  g_byte_array_append(out, v, k);
  guint at = out->len;
  g_byte_array_set_size(out, at + (guint)len);
  protobuf_c_message_pack(m, out->data + at);
}

/* Chakra's comm_size: each rank's input bytes (chakra.h). */
static uint64_t comm_size(FsCollOp op, uint64_t unit, guint n)
{
  if (op == FS_COLL_REDUCE_SCATTER || op == FS_COLL_ALLTOALL || op == FS_COLL_SCATTER)
    return unit * n;
  return unit;
}

static int64_t comm_type(FsCollOp op)
{
  switch (op) {
  case FS_COLL_ALL_REDUCE: return 0;
  case FS_COLL_REDUCE: return 1;
  case FS_COLL_ALL_GATHER: return 2;
  case FS_COLL_GATHER: return 3;
  case FS_COLL_SCATTER: return 4;
  case FS_COLL_BROADCAST: return 5;
  case FS_COLL_ALLTOALL: return 6;
  case FS_COLL_REDUCE_SCATTER: return 7;
  case FS_COLL_BARRIER: return 9;
  default: return -1;
  }
}

/* The stream index of op's stream among its rank's streams. */
static int64_t local_stream(const Writer *w, guint32 stream)
{
  int64_t k = 0;
  guint r = w->rank_of_stream[stream];
  for (guint32 s = 0; s < stream; s++)
    k += w->rank_of_stream[s] == r;
  return k;
}

/* Appends rank's trace in Chakra's binary form to out: a GlobalMetadata message, a metadata node
 * holding the process-group list (when there are groups), then one Node per node of the rank's
 * template, its ranks, streams and groups mapped to this replica (compute, send, receive or
 * collective, with its deps and attributes), each framed by its length.  Returns FALSE through
 * refuse() for a collective that Chakra has no comm_type for; out then holds a partial trace. */
static gboolean encode_rank(Writer *w, guint rank, GByteArray *out, GError **error)
{
  const FsOpGraph *g = w->g;
  guint tmpl = w->template_of[rank], d = w->replica_of[rank];
  ChakraProtoMsg__GlobalMetadata gm = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  gm.version = (char *)"0.0.4";
  frame(out, &gm.base);
  if (w->groups->len > 0) {
    /* PyTorch's process-group list, as Chakra's converter copies it and
     * ASTRA-sim reads it (the Python repr of a one-string list). */
    GString *pg = g_string_new("['[");
    for (guint k = 0; k < w->groups->len; k++) {
      GArray *m = w->groups->pdata[k];
      g_string_append_printf(pg, "%s{\"pg_name\": \"%u\", \"ranks\": [", k ? ", " : "", k + 1);
      for (guint i = 0; i < m->len; i++)
        g_string_append_printf(pg, i ? ", %u" : "%u", g_array_index(m, guint, i));
      g_string_append_printf(pg, "], \"group_size\": %u}", m->len);
    }
    g_string_append(pg, "]']");
    ChakraProtoMsg__IOInfo io = CHAKRA_PROTO_MSG__IOINFO__INIT;
    io.values = pg->str;
    ChakraProtoMsg__Node meta = CHAKRA_PROTO_MSG__NODE__INIT;
    meta.id = META_ID;
    meta.name = (char *)"## process_group:init ##";
    meta.type = CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE;
    meta.inputs = &io;
    frame(out, &meta.base);
    g_string_free(pg, TRUE);
  }
  GArray *nodes = w->nodes[tmpl];
  for (guint k = 0; k < nodes->len; k++) {
    const WNode *n = &g_array_index(nodes, WNode, k);
    ChakraProtoMsg__Node m = CHAKRA_PROTO_MSG__NODE__INIT;
    Attrs at = { .n = 0 };
    g_autofree char *pgname = NULL;
    m.id = n->id;
    m.ctrl_deps = (uint64_t *)n->ctrl->data;
    m.n_ctrl_deps = n->ctrl->len;
    m.data_deps = (uint64_t *)n->data->data;
    m.n_data_deps = n->data->len;
    attr_bool(&at, "is_cpu_op", FALSE);
    if (n->op == FS_OP_NONE || fs_opgraph_op(g, n->op)->kind == FS_OP_RECV) {
      /* A receive: its transfer's source, destination, size and tag. */
      const FsOp *x = fs_opgraph_op(g, n->xfer);
      m.name = n->op == FS_OP_NONE ? (char *)x->name : (char *)fs_opgraph_op(g, n->op)->name;
      m.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE;
      attr_int(&at, "comm_src", map_rank(w, trace_rank(w, x->src), d));
      attr_int(&at, "comm_dst", rank);
      attr_int(&at, "comm_size", (int64_t)x->bytes);
      attr_int(&at, "comm_tag", n->xfer);
    } else {
      const FsOp *o = fs_opgraph_op(g, n->op);
      m.name = (char *)o->name;
      attr_int(&at, "stream", local_stream(w, o->stream));
      if (o->kind == FS_OP_COMPUTE) {
        m.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
        m.duration_micros = (uint64_t)((o->dur + CK_PS_PER_US / 2) / CK_PS_PER_US);
        attr_int(&at, "fabricsim_duration_ps", o->dur);
      } else if (o->kind == FS_OP_XFER) {
        m.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE;
        attr_int(&at, "comm_src", rank);
        attr_int(&at, "comm_dst", map_rank(w, trace_rank(w, o->dst), d));
        attr_int(&at, "comm_size", (int64_t)o->bytes);
        attr_int(&at, "comm_tag", n->op);
      } else {
        FsCollOp cop;
        uint64_t unit;
        guint size;
        fs_opgraph_coll_info(g, o->coll, &cop, &unit, NULL, &size);
        if (comm_type(cop) < 0)
          return refuse(error, "op \"%s\" is a %s, which Chakra has no comm_type for", o->name,
                        fs_coll_op_name(cop));
        m.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
        attr_int(&at, "comm_type", comm_type(cop));
        attr_int(&at, "comm_size", (int64_t)comm_size(cop, unit, size));
        pgname = g_strdup_printf("%u", group_of(w, o->coll, d) + 1);
        attr_str(&at, "pg_name", pgname);
      }
    }
    m.attr = at.p;
    m.n_attr = at.n;
    frame(out, &m.base);
  }
  return TRUE;
}

static void writer_clear(Writer *w)
{
  if (w->nodes != NULL) {
    for (guint r = 0; r < w->n_ranks; r++) {
      for (guint k = 0; k < w->nodes[r]->len; k++) {
        WNode *n = &g_array_index(w->nodes[r], WNode, k);
        g_array_unref(n->ctrl);
        g_array_unref(n->data);
      }
      g_array_unref(w->nodes[r]);
    }
    g_free(w->nodes);
  }
  if (w->through != NULL)
    for (guint32 i = 0; i < fs_opgraph_n_ops(w->g); i++)
      if (w->through[i] != NULL)
        g_array_unref(w->through[i]);
  g_free(w->through);
  g_free(w->node_of_op);
  g_free(w->recv_of_xfer);
  g_free(w->rank_of_stream);
  g_ptr_array_unref(w->groups);
  if (w->rep != NULL) {
    guint ngpu;
    fs_topo_gpus(w->topo, &ngpu);
    for (guint t = 0; t < ngpu; t++)
      g_free(w->rep[t]);
    g_free(w->rep);
  }
  g_free(w->template_of);
  g_free(w->replica_of);
  g_free(w->members);
}

/* See chakra.h. Checks and lays out the graph, numbers the process groups
 * in the order of the collectives' first ops, encodes every rank into
 * memory, then writes the files atomically; an interruption part-way
 * removes the ranks already written. */
gboolean fs_chakra_write(const FsOpGraph *g, const FsTopo *topo, const char *dir,
                         const char *prefix, GError **error)
{
  Writer w = { .g = g, .topo = topo };
  w.groups = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  gboolean ok = check(&w, error) && layout(&w, error);
  /* Process groups in the order of the collectives' first ops, before any
   * file is written (every file lists all of them). */
  for (guint k = 0; ok && k < w.n_rep; k++) {
    guint d = k == 0 ? w.d0 : k <= w.d0 ? k - 1 : k; /* the simulated replica first */
    for (guint32 i = 0; i < fs_opgraph_n_ops(g); i++)
      if (fs_opgraph_op(g, i)->kind == FS_OP_COLL)
        group_of(&w, fs_opgraph_op(g, i)->coll, d);
  }
  GPtrArray *bufs = g_ptr_array_new_with_free_func((GDestroyNotify)g_byte_array_unref);
  for (guint r = 0; ok && r < w.n_ranks; r++) {
    GByteArray *b = g_byte_array_new();
    g_ptr_array_add(bufs, b);
    ok = encode_rank(&w, r, b, error);
    if (ok && fs_interrupt_requested()) { /* SIGINT, SIGTERM: stop before any file */
      g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED,
                  "interrupted while writing %s; nothing written", dir);
      ok = FALSE;
    }
  }
  if (ok && g_mkdir_with_parents(dir, 0777) != 0) {
    int e = errno;
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_IO, "%s: cannot create the folder: %s",
                dir, g_strerror(e));
    ok = FALSE;
  }
  for (guint r = 0; ok && r < w.n_ranks; r++) {
    g_autofree char *base = g_strdup_printf("%s.%u.et", prefix, r);
    g_autofree char *path = g_build_filename(dir, base, NULL);
    GByteArray *b = bufs->pdata[r];
    ok = fs_write_file_atomic(path, (const char *)b->data, b->len, error);
    /* Interrupted part-way: the ranks already written would be a set that
     * no replay can read; they go too. */
    for (guint k = 0; !ok && k < r && g_error_matches(*error, FS_RUNTIME_ERROR,
                                                       FS_RUNTIME_ERROR_INTERRUPTED); k++) {
      g_autofree char *kb = g_strdup_printf("%s.%u.et", prefix, k);
      g_autofree char *kp = g_build_filename(dir, kb, NULL);
      g_unlink(kp);
    }
  }
  g_ptr_array_unref(bufs);
  writer_clear(&w);
  return ok;
}
