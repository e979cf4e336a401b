/* trace-json.c — Chrome trace-event JSON of an op graph or of transfers
 * (see trace-json.h). */
#include "report/trace-json.h"

#include "report/links.h"

#include <jansson.h>
#include <string.h>

#include "util/strutil.h"
#include "util/units.h"

/* Bytes of trace held in memory before they go to the file. */
#define SPILL_BYTES ((gsize)1 << 20)

/* The trace being built: in out, or, with a sink, through out into the
 * file a MiB at a time.  failed: a write to the sink failed (error set,
 * an interrupt included); the builders then stop at their next event. */
typedef struct {
  GString *out;
  gboolean first;
  FsAtomicFile *sink;
  gboolean failed;
  GError *error;
} Writer;

/* Sends out to the sink once it holds a MiB (or, with all, whatever it
 * holds).  The atomic writer looks at the stop request before each MiB. */
static void spill(Writer *w, gboolean all)
{
  if (w->sink == NULL || w->failed || (!all && w->out->len < SPILL_BYTES))
    return;
  if (!fs_atomic_file_write(w->sink, w->out->str, w->out->len, &w->error))
    w->failed = TRUE;
  g_string_truncate(w->out, 0);
}

/* A JSON string literal of s (escaped by jansson). */
static void append_str(GString *out, const char *s)
{
  json_t *j = json_string(s ? s : "");
  if (j == NULL) /* not UTF-8: keep the trace valid */
    j = json_string("?");
  char *txt = json_dumps(j, JSON_ENCODE_ANY);
  g_string_append(out, txt);
  free(txt);
  json_decref(j);
}

static void append_us(GString *out, FsTime ps)
{
  if (ps < 0) {
    g_string_append_c(out, '-');
    ps = -ps;
  }
  g_string_append_printf(out, "%" G_GINT64_FORMAT ".%06" G_GINT64_FORMAT, ps / 1000000,
                         ps % 1000000);
}

/* Starts an event object: {"ph":"P","pid":N — the caller continues. */
static void ev(Writer *w, char ph, int pid)
{
  spill(w, FALSE);
  g_string_append_printf(w->out, "%s{\"ph\":\"%c\",\"pid\":%d", w->first ? "" : ",\n", ph, pid);
  w->first = FALSE;
}

static void meta_process(Writer *w, int pid, const char *name, int sort)
{
  ev(w, 'M', pid);
  g_string_append(w->out, ",\"name\":\"process_name\",\"args\":{\"name\":");
  append_str(w->out, name);
  g_string_append(w->out, "}}");
  ev(w, 'M', pid);
  g_string_append_printf(w->out, ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}",
                         sort);
}

static void meta_thread(Writer *w, int pid, guint tid, const char *name)
{
  ev(w, 'M', pid);
  g_string_append_printf(w->out, ",\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":", tid);
  append_str(w->out, name);
  g_string_append(w->out, "}}");
  ev(w, 'M', pid);
  g_string_append_printf(w->out, ",\"tid\":%u,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%u}}",
                         tid, tid);
}

/* {"ph":"X",…} without the closing args: the caller appends "}}". */
static void complete(Writer *w, int pid, guint tid, const char *name, const char *cat, FsTime start,
                     FsTime dur)
{
  ev(w, 'X', pid);
  g_string_append_printf(w->out, ",\"tid\":%u,\"name\":", tid);
  append_str(w->out, name);
  g_string_append(w->out, ",\"cat\":");
  append_str(w->out, cat);
  g_string_append(w->out, ",\"ts\":");
  append_us(w->out, start);
  g_string_append(w->out, ",\"dur\":");
  append_us(w->out, dur);
  g_string_append(w->out, ",\"args\":{");
}

/* A flow arrow's end ("s" or "f"), id and cat "transfer". */
static void arrow(Writer *w, char ph, int pid, guint tid, guint64 id, FsTime ts)
{
  ev(w, ph, pid);
  g_string_append_printf(w->out, ",\"tid\":%u,\"name\":\"transfer\",\"cat\":\"transfer\",\"id\":%"
                         G_GUINT64_FORMAT ",\"ts\":", tid, id);
  append_us(w->out, ts);
  g_string_append(w->out, ph == 'f' ? ",\"bp\":\"e\"}" : "}");
}

/* Counter tracks of the links under pid. */
static void counters(Writer *w, int pid, const FsTraceOptions *opt)
{
  if (opt->n_links == 0)
    return;
  meta_process(w, pid, "links", pid);
  for (guint i = 0; i < opt->n_links && !w->failed; i++) {
    const FsTraceLink *l = &opt->links[i];
    g_autofree char *nm = g_strdup_printf("link %s utilisation", l->name);
    guint nb = opt->sampler ? fs_link_sampler_n_bins(opt->sampler) : 0;
    /* One value per bin (or the mean), then back to 0 at the end. */
    for (guint b = 0; b <= MAX(nb, 1u); b++) {
      FsTime ts;
      double u = 0;
      if (nb == 0) {
        ts = b == 0 ? 0 : opt->end;
        u = b == 0 ? l->utilisation : 0.0;
      } else if (b < nb) {
        ts = fs_link_sampler_bin_start(opt->sampler, b);
        u = fs_link_sampler_util(opt->sampler, l->channel, b);
      } else {
        ts = MAX(fs_link_sampler_bin_start(opt->sampler, nb), opt->end);
      }
      ev(w, 'C', pid);
      g_string_append(w->out, ",\"name\":");
      append_str(w->out, nm);
      g_string_append(w->out, ",\"ts\":");
      append_us(w->out, ts);
      g_string_append_printf(w->out, ",\"args\":{\"utilisation\":%.4f}}", u);
    }
  }
}

static int pid_of(const FsTopo *topo, int node)
{
  if (node < 0)
    return 0;
  int h = fs_topo_node(topo, (guint)node)->host;
  return h < 0 ? 0 : h + 1;
}

static const char *pid_name(const FsTopo *topo, int pid)
{
  return pid == 0 ? "fabric" : fs_topo_host_name(topo, (guint)(pid - 1));
}

/* Where the arrow of XFER op x ends: its partner RECV (just before its
 * end), or the first op that took time, on the stream of the op of the
 * destination GPU that waits for it (at its start; the "recv" marker ops
 * of a pipeline take no time).  Returns FS_OP_NONE when there is none. */
static guint32 arrow_target(const FsOpGraph *g, const guint32 *consumer, guint32 x, FsTime *ts)
{
  const FsOp *op = fs_opgraph_op(g, x);
  if (op->partner != FS_OP_NONE) {
    const FsOp *r = fs_opgraph_op(g, op->partner);
    if (r->start < 0 || r->end <= r->start)
      return FS_OP_NONE;
    *ts = r->end - 1;
    return op->partner;
  }
  guint32 c = consumer[x];
  if (c != FS_OP_NONE)
    *ts = fs_opgraph_op(g, c)->start;
  return c;
}

/* Builds the Chrome trace of an executed op graph into w (see trace-json.h): one process per
 * host and one thread per stream, a complete event per op that took time, one async span per
 * collective over all its members, flow arrows from each send to the op that consumes it, and
 * the counters of opt. Ops that never ran or took no time are left out. Stops early once a
 * write to w's sink fails (an interrupt included). O(ops + dependencies). */
static void build_graph(Writer *w, const FsOpGraph *g, const FsTopo *topo, const FsTraceOptions *opt)
{
  g_string_append(w->out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"title\":");
  append_str(w->out, opt->title ? opt->title : "fabricsim");
  g_string_append(w->out, ",\"generator\":\"fabricsim\"},\"traceEvents\":[\n");
  guint ns = fs_opgraph_n_streams(g), n = fs_opgraph_n_ops(g);
  guint nh = fs_topo_n_hosts(topo);
  /* Process names (hosts), each once, in stream order; then threads. */
  g_autofree gboolean *named = g_new0(gboolean, nh + 1);
  for (guint i = 0; i < ns; i++) {
    const FsStream *s = fs_opgraph_stream(g, i);
    int pid = pid_of(topo, s->gpu);
    if (!named[pid]) {
      named[pid] = TRUE;
      meta_process(w, pid, pid_name(topo, pid), pid);
    }
    g_autofree char *tname = g_strdup_printf("rank %u %s (%s)", s->rank, s->name,
                                             s->gpu >= 0 ? fs_topo_node(topo, (guint)s->gpu)->name : "-");
    meta_thread(w, pid, i + 1, tname);
  }
  /* busy[i]: op i if it took time, else the next op of its stream that
   * did (FS_OP_NONE if none).  Streams list their ops in op order. */
  g_autofree guint32 *busy = g_new(guint32, MAX(n, 1u));
  g_autofree guint32 *next = g_new(guint32, MAX(ns, 1u));
  for (guint i = 0; i < ns; i++)
    next[i] = FS_OP_NONE;
  for (guint i = n; i-- > 0;) {
    const FsOp *op = fs_opgraph_op(g, i);
    if (op->start >= 0 && op->end > op->start)
      next[op->stream] = i;
    busy[i] = next[op->stream];
  }
  /* The consumer of each XFER without a partner: the first op (in op
   * order) on a stream of the destination GPU other than the sender's
   * that depends on it, moved on to the first op of that stream that took
   * time. */
  g_autofree guint32 *consumer = g_new(guint32, MAX(n, 1u));
  for (guint i = 0; i < n; i++)
    consumer[i] = FS_OP_NONE;
  g_autofree gboolean *seen = g_new0(gboolean, MAX(n, 1u));
  for (guint i = 0; i < n; i++) {
    guint nd;
    const uint32_t *deps = fs_opgraph_deps(g, i, &nd);
    const FsOp *op = fs_opgraph_op(g, i);
    for (guint k = 0; k < nd; k++) {
      const FsOp *d = fs_opgraph_op(g, deps[k]);
      if (d->kind != FS_OP_XFER || d->partner != FS_OP_NONE || seen[deps[k]] ||
          op->stream == d->stream || fs_opgraph_stream(g, op->stream)->gpu != d->dst)
        continue;
      seen[deps[k]] = TRUE;
      consumer[deps[k]] = busy[i];
    }
  }
  for (guint i = 0; i < n && !w->failed; i++) {
    const FsOp *op = fs_opgraph_op(g, i);
    if (op->start < 0 || op->end <= op->start)
      continue;
    const FsStream *s = fs_opgraph_stream(g, op->stream);
    complete(w, pid_of(topo, s->gpu), op->stream + 1, op->name, fs_op_cat_name(op->cat), op->start,
             op->end - op->start);
    g_string_append_printf(w->out, "\"op\":%u,\"kind\":\"%s\"", i, fs_op_kind_name(op->kind));
    if (op->mb >= 0)
      g_string_append_printf(w->out, ",\"microbatch\":%d", op->mb);
    if (op->layer >= 0)
      g_string_append_printf(w->out, ",\"layer\":%d", op->layer);
    if (op->bytes > 0)
      g_string_append_printf(w->out, ",\"bytes\":%" G_GUINT64_FORMAT, op->bytes);
    g_string_append(w->out, "}}");
  }
  /* Collectives: one async span each, over all its members. */
  guint ncoll = 0;
  for (guint i = 0; i < n; i++) {
    const FsOp *op = fs_opgraph_op(g, i);
    if (op->kind == FS_OP_COLL)
      ncoll = MAX(ncoll, op->coll + 1);
  }
  if (ncoll > 0) {
    g_autofree guint32 *firstm = g_new(guint32, ncoll);
    g_autofree FsTime *cs = g_new(FsTime, ncoll);
    g_autofree FsTime *ce = g_new(FsTime, ncoll);
    for (guint c = 0; c < ncoll; c++) {
      firstm[c] = FS_OP_NONE;
      cs[c] = G_MAXINT64;
      ce[c] = -1;
    }
    for (guint i = 0; i < n; i++) {
      const FsOp *op = fs_opgraph_op(g, i);
      if (op->kind != FS_OP_COLL || op->start < 0 || op->end < op->start)
        continue;
      if (firstm[op->coll] == FS_OP_NONE)
        firstm[op->coll] = i;
      cs[op->coll] = MIN(cs[op->coll], op->start);
      ce[op->coll] = MAX(ce[op->coll], op->end);
    }
    for (guint c = 0; c < ncoll && !w->failed; c++) {
      if (firstm[c] == FS_OP_NONE)
        continue;
      const FsOp *op = fs_opgraph_op(g, firstm[c]);
      const FsStream *s = fs_opgraph_stream(g, op->stream);
      for (guint k = 0; k < 2; k++) {
        ev(w, k == 0 ? 'b' : 'e', pid_of(topo, s->gpu));
        g_string_append_printf(w->out, ",\"tid\":%u,\"name\":", op->stream + 1);
        append_str(w->out, op->name);
        g_string_append_printf(w->out, ",\"cat\":\"collective\",\"id\":%u,\"ts\":", c);
        append_us(w->out, k == 0 ? cs[c] : ce[c]);
        if (k == 0)
          g_string_append_printf(w->out, ",\"args\":{\"bytes\":%" G_GUINT64_FORMAT "}", op->bytes);
        g_string_append(w->out, "}");
      }
    }
  }
  /* Flow arrows from each send to its receive. */
  for (guint i = 0; i < n && !w->failed; i++) {
    const FsOp *op = fs_opgraph_op(g, i);
    FsTime ts;
    guint32 t;
    if (op->kind != FS_OP_XFER || op->start < 0 || (t = arrow_target(g, consumer, i, &ts)) == FS_OP_NONE)
      continue;
    const FsStream *s = fs_opgraph_stream(g, op->stream);
    const FsOp *r = fs_opgraph_op(g, t);
    const FsStream *rs = fs_opgraph_stream(g, r->stream);
    arrow(w, 's', pid_of(topo, s->gpu), op->stream + 1, i, op->start);
    arrow(w, 'f', pid_of(topo, rs->gpu), r->stream + 1, i, ts);
  }
  counters(w, (int)nh + 1, opt);
  g_string_append(w->out, "\n]}\n");
}

/* Builds the Chrome trace of standalone transfers into w: each node that sends or receives gets
 * a send and a receive thread in its host's process, each transfer a complete event on both
 * and an arrow from sender to receiver, then the counters of opt. Stops early as above. */
static void build_transfers(Writer *w, const FsTopo *topo, const FsTraceTransfer *xs, guint n,
                            const FsTraceOptions *opt)
{
  g_string_append(w->out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"title\":");
  append_str(w->out, opt->title ? opt->title : "fabricsim");
  g_string_append(w->out, ",\"generator\":\"fabricsim\"},\"traceEvents\":[\n");
  guint nn = fs_topo_n_nodes(topo), nh = fs_topo_n_hosts(topo);
  /* Track ids: node i sends on tid 2i+1 and receives on tid 2i+2. */
  g_autofree guint8 *used = g_new0(guint8, MAX(nn, 1u));
  for (guint i = 0; i < n; i++) {
    used[xs[i].src] |= 1;
    used[xs[i].dst] |= 2;
  }
  g_autofree gboolean *named = g_new0(gboolean, nh + 1);
  for (guint v = 0; v < nn; v++) {
    if (!used[v])
      continue;
    int pid = pid_of(topo, (int)v);
    if (!named[pid]) {
      named[pid] = TRUE;
      meta_process(w, pid, pid_name(topo, pid), pid);
    }
    for (guint k = 0; k < 2; k++)
      if (used[v] & (1u << k)) {
        g_autofree char *tn = g_strdup_printf("%s %s", fs_topo_node(topo, v)->name, k ? "recv" : "send");
        meta_thread(w, pid, 2 * v + 1 + k, tn);
      }
  }
  for (guint i = 0; i < n && !w->failed; i++) {
    for (guint k = 0; k < 2; k++) {
      guint v = k ? xs[i].dst : xs[i].src;
      complete(w, pid_of(topo, (int)v), 2 * v + 1 + k, xs[i].name, xs[i].transport, xs[i].start,
               xs[i].finish - xs[i].start);
      g_string_append_printf(w->out, "\"transfer\":%u,\"bytes\":%" G_GUINT64_FORMAT ",\"peer\":", i,
                             xs[i].bytes);
      append_str(w->out, fs_topo_node(topo, k ? xs[i].src : xs[i].dst)->name);
      g_string_append(w->out, "}}");
    }
  }
  for (guint i = 0; i < n && !w->failed; i++) {
    arrow(w, 's', pid_of(topo, (int)xs[i].src), 2 * xs[i].src + 1, i, xs[i].start);
    FsTime te = xs[i].finish > xs[i].start ? xs[i].finish - 1 : xs[i].finish;
    arrow(w, 'f', pid_of(topo, (int)xs[i].dst), 2 * xs[i].dst + 2, i, te);
  }
  counters(w, (int)nh + 1, opt);
  g_string_append(w->out, "\n]}\n");
}

/* See trace-json.h: the whole trace in memory. */
char *fs_trace_json(const FsOpGraph *g, const FsTopo *topo, const FsTraceOptions *opt)
{
  Writer w = { g_string_new(NULL), TRUE, NULL, FALSE, NULL };
  build_graph(&w, g, topo, opt);
  return g_string_free(w.out, FALSE);
}

char *fs_trace_json_transfers(const FsTopo *topo, const FsTraceTransfer *xs, guint n,
                              const FsTraceOptions *opt)
{
  Writer w = { g_string_new(NULL), TRUE, NULL, FALSE, NULL };
  build_transfers(&w, topo, xs, n, opt);
  return g_string_free(w.out, FALSE);
}

/* See trace-json.h: built into a MiB buffer that goes to the atomic writer each time it fills,
 * so that the file grows as the trace is built and a stop request ends both. */
gboolean fs_trace_json_write(const char *path, const FsOpGraph *g, const FsTraceTransfer *xs, guint n,
                             const FsTopo *topo, const FsTraceOptions *opt, GError **error)
{
  Writer w = { g_string_new(NULL), TRUE, fs_atomic_file_open(path, error), FALSE, NULL };
  if (w.sink == NULL) {
    g_string_free(w.out, TRUE);
    return FALSE;
  }
  if (g != NULL)
    build_graph(&w, g, topo, opt);
  else
    build_transfers(&w, topo, xs, n, opt);
  spill(&w, TRUE);
  g_string_free(w.out, TRUE);
  if (w.failed) {
    fs_atomic_file_abort(w.sink);
    g_propagate_error(error, w.error);
    return FALSE;
  }
  return fs_atomic_file_commit(w.sink, error);
}

guint fs_trace_busiest_links(FsFlowNet *net, FsTime end, FsTraceLink *out, guint max)
{
  g_autofree FsLinkUse *use = g_new(FsLinkUse, MAX(max, 1u));
  guint k = fs_report_busiest_links(net, end, use, max);
  for (guint i = 0; i < k; i++)
    out[i] = (FsTraceLink){ NULL, use[i].channel, use[i].utilisation };
  return k;
}
