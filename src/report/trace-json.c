/* trace-json.c — Chrome trace-event JSON of an op graph (see trace-json.h). */
#include "report/trace-json.h"

#include <jansson.h>

/* A JSON string literal of s (escaped by jansson). */
static void append_str(GString *out, const char *s)
{
  json_t *j = json_string(s);
  char *txt = json_dumps(j, JSON_ENCODE_ANY);
  g_string_append(out, txt);
  free(txt);
  json_decref(j);
}

static void append_us(GString *out, FsTime ps)
{
  g_string_append_printf(out, "%" G_GINT64_FORMAT ".%06" G_GINT64_FORMAT, ps / 1000000,
                         ps % 1000000);
}

static int pid_of(const FsTopo *topo, int gpu)
{
  if (gpu < 0)
    return 0;
  int h = fs_topo_node(topo, (guint)gpu)->host;
  return h < 0 ? 0 : h + 1;
}

char *fs_trace_json(const FsOpGraph *g, const FsTopo *topo, const char *title,
                    const FsTraceLink *links, guint n_links, FsTime end)
{
  GString *out = g_string_new("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"title\":");
  append_str(out, title ? title : "fabricsim");
  g_string_append(out, "},\"traceEvents\":[\n");
  gboolean first = TRUE;
  guint ns = fs_opgraph_n_streams(g);
  /* Process names (hosts), each once, in stream order. */
  g_autofree gboolean *named = g_new0(gboolean, fs_topo_n_hosts(topo) + 1);
  for (guint i = 0; i < ns; i++) {
    const FsStream *s = fs_opgraph_stream(g, i);
    int pid = pid_of(topo, s->gpu);
    if (!named[pid]) {
      named[pid] = TRUE;
      g_string_append_printf(out, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":",
                             first ? "" : ",\n", pid);
      append_str(out, pid == 0 ? "fabric" : fs_topo_host_name(topo, (guint)(pid - 1)));
      g_string_append(out, "}}");
      first = FALSE;
    }
    g_autofree char *tname = g_strdup_printf("rank %u %s (%s)", s->rank, s->name,
                                             s->gpu >= 0 ? fs_topo_node(topo, (guint)s->gpu)->name : "-");
    g_string_append_printf(out, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%u,\"args\":{\"name\":",
                           pid, i + 1);
    append_str(out, tname);
    g_string_append_printf(out, "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%u,"
                           "\"args\":{\"sort_index\":%u}}", pid, i + 1, i + 1);
  }
  guint n = fs_opgraph_n_ops(g);
  for (guint i = 0; i < n; i++) {
    const FsOp *op = fs_opgraph_op(g, i);
    if (op->start < 0 || op->end <= op->start)
      continue;
    const FsStream *s = fs_opgraph_stream(g, op->stream);
    g_string_append_printf(out, "%s{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"name\":", first ? "" : ",\n",
                           pid_of(topo, s->gpu), op->stream + 1);
    first = FALSE;
    append_str(out, op->name);
    g_string_append_printf(out, ",\"cat\":\"%s\",\"ts\":", fs_op_cat_name(op->cat));
    append_us(out, op->start);
    g_string_append(out, ",\"dur\":");
    append_us(out, op->end - op->start);
    g_string_append_printf(out, ",\"args\":{\"op\":%u", i);
    if (op->mb >= 0)
      g_string_append_printf(out, ",\"microbatch\":%d", op->mb);
    if (op->layer >= 0)
      g_string_append_printf(out, ",\"layer\":%d", op->layer);
    if (op->bytes > 0)
      g_string_append_printf(out, ",\"bytes\":%" G_GUINT64_FORMAT, op->bytes);
    g_string_append(out, "}}");
  }
  for (guint i = 0; i < n_links; i++) {
    for (guint k = 0; k < 2; k++) {
      g_string_append_printf(out, "%s{\"ph\":\"C\",\"pid\":0,\"name\":", first ? "" : ",\n");
      first = FALSE;
      g_autofree char *nm = g_strdup_printf("link %s utilisation", links[i].name);
      append_str(out, nm);
      g_string_append(out, ",\"ts\":");
      append_us(out, k == 0 ? 0 : end);
      g_string_append_printf(out, ",\"args\":{\"utilisation\":%.4f}}", k == 0 ? links[i].utilisation : 0.0);
    }
  }
  g_string_append(out, "\n]}\n");
  return g_string_free(out, FALSE);
}
