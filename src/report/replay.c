/* replay.c — see replay.h. */
#include "report/replay.h"
#include "report/format.h"

#include <jansson.h>
#include <string.h>

#include "report/links.h"
#include "util/units.h"

#define REPLAY_SCHEMA_VERSION 1
#define TOP_LINKS 8

static double ms(FsTime t) { return fs_time_to_s(t) * 1e3; }

/* Rank r's compute, exposed communication and idle time over [0, end]. */
static void rank_times(const FsReplay *rp, guint r, FsTime end, FsTime *compute, FsTime *exposed,
                       FsTime *idle)
{
  FsOpBreakdown bd;
  memset(&bd, 0, sizeof bd);
  GArray *ops = g_ptr_array_index(rp->rank_ops, r);
  *compute = *exposed = 0;
  if (rp->compute_stream[r] != G_MAXUINT) {
    fs_opgraph_breakdown(rp->graph, rp->compute_stream[r], (const guint32 *)ops->data, ops->len, 0,
                         end, &bd);
    for (guint k = 0; k < FS_CAT_N; k++) {
      *compute += bd.busy[k];
      *exposed += bd.exposed[k];
    }
  } else {
    bd.bubble = end;
  }
  *idle = bd.bubble;
}

/* The GPU of rank r's first stream, or "-". */
static const char *rank_gpu(const FsReplay *rp, const FsTopo *topo, guint r)
{
  for (guint s = 0; s < fs_opgraph_n_streams(rp->graph); s++)
    if (fs_opgraph_stream(rp->graph, s)->rank == r)
      return fs_topo_node(topo, (guint)fs_opgraph_stream(rp->graph, s)->gpu)->name;
  return "-";
}

/* See replay.h. Appends the replay's summary to out in fmt: per rank its compute, exposed
 * communication and idle time up to end, the busiest links by mean utilisation (JSON and text
 * only), and with chakra the counts of the imported Chakra trace (JSON and text only). */
void fs_report_replay(GString *out, FsReportFormat fmt, const FsReplay *rp, const FsTopo *topo,
                      FsFlowNet *net, FsRouter *router, FsTime end, const FsChakraStats *chakra)
{
  FsLinkUse links[TOP_LINKS];
  guint nl = fs_report_busiest_links(net, end, links, TOP_LINKS);
  json_t *ranks = json_array();
  if (fmt == FS_REPORT_CSV) {
    g_string_append(out, "rank,gpu,compute_ms,exposed_comm_ms,idle_ms,makespan_ms\n");
  } else if (fmt == FS_REPORT_TEXT) {
    g_string_append_printf(out, "%s on %s: %u ranks, %u ops\n", rp->name, fs_topo_name(topo),
                           rp->n_ranks, fs_opgraph_n_ops(rp->graph));
    if (chakra != NULL)
      g_string_append_printf(out, "  Chakra: %u nodes; compute %u timed by the trace, %u by the compute "
                             "model, %u untimed; %u collective, %u send/recv, %u metadata; %u skipped; "
                             "%u dependencies on absent nodes ignored; ctrl_deps dropped on %u ranks "
                             "(a cycle)\n", chakra->nodes, chakra->measured, chakra->modelled,
                             chakra->untimed, chakra->collectives, chakra->p2p, chakra->metadata,
                             chakra->skipped, chakra->missing_deps, chakra->ctrl_dropped);
    g_string_append_printf(out, "  makespan %.3f ms\n\n", ms(end));
    g_string_append_printf(out, "  %-5s %-16s %10s %10s %10s\n", "rank", "gpu", "compute", "exposed", "idle");
  }
  for (guint r = 0; r < rp->n_ranks; r++) {
    FsTime compute, exposed, idle;
    rank_times(rp, r, end, &compute, &exposed, &idle);
    const char *gname = rank_gpu(rp, topo, r);
    if (fmt == FS_REPORT_JSON) {
      json_t *o = json_object();
      json_object_set_new(o, "rank", json_integer(r));
      json_object_set_new(o, "gpu", json_string(gname));
      json_object_set_new(o, "compute_ms", json_real(ms(compute)));
      json_object_set_new(o, "exposed_comm_ms", json_real(ms(exposed)));
      json_object_set_new(o, "idle_ms", json_real(ms(idle)));
      json_array_append_new(ranks, o);
    } else if (fmt == FS_REPORT_CSV) {
      g_string_append_printf(out, "%u,%s,%.10g,%.10g,%.10g,%.10g\n", r, gname, ms(compute), ms(exposed),
                             ms(idle), ms(end));
    } else {
      g_string_append_printf(out, "  %-5u %-16s %10.3f %10.3f %10.3f\n", r, gname, ms(compute),
                             ms(exposed), ms(idle));
    }
  }
  json_t *jl = json_array();
  if (fmt == FS_REPORT_TEXT)
    g_string_append(out, "\nBusiest links (mean utilisation):\n");
  for (guint i = 0; i < nl; i++) {
    g_autofree char *name = fs_router_channel_name(router, links[i].channel);
    if (fmt == FS_REPORT_JSON) {
      json_t *o = json_object();
      json_object_set_new(o, "channel", json_string(name));
      json_object_set_new(o, "utilisation", json_real(links[i].utilisation));
      json_array_append_new(jl, o);
    } else if (fmt == FS_REPORT_TEXT) {
      g_string_append_printf(out, "  %-44s %5.1f%%\n", name, 100 * links[i].utilisation);
    }
  }
  if (fmt != FS_REPORT_JSON) {
    json_decref(ranks);
    json_decref(jl);
    return;
  }
  json_t *root = json_object();
  json_object_set_new(root, "schema_version", json_integer(REPLAY_SCHEMA_VERSION));
  json_object_set_new(root, "trace", json_string(rp->name));
  json_object_set_new(root, "topology", json_string(fs_topo_name(topo)));
  json_object_set_new(root, "makespan_s", json_real(fs_time_to_s(end)));
  json_object_set_new(root, "makespan_ps", json_integer(end));
  if (chakra != NULL) {
    json_t *c = json_object();
    json_object_set_new(c, "nodes", json_integer(chakra->nodes));
    json_object_set_new(c, "compute_timed_by_trace", json_integer(chakra->measured));
    json_object_set_new(c, "compute_timed_by_model", json_integer(chakra->modelled));
    json_object_set_new(c, "compute_untimed", json_integer(chakra->untimed));
    json_object_set_new(c, "collectives", json_integer(chakra->collectives));
    json_object_set_new(c, "send_recv", json_integer(chakra->p2p));
    json_object_set_new(c, "metadata", json_integer(chakra->metadata));
    json_object_set_new(c, "skipped", json_integer(chakra->skipped));
    json_object_set_new(c, "absent_dependencies", json_integer(chakra->missing_deps));
    json_object_set_new(c, "ranks_ctrl_deps_dropped", json_integer(chakra->ctrl_dropped));
    json_object_set_new(root, "chakra", c);
  }
  json_object_set_new(root, "ranks", ranks);
  json_object_set_new(root, "busiest_links", jl);
  fs_report_append_json(out, root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
}

gboolean fs_report_replay_trace(const char *path, const FsReplay *rp, const FsTopo *topo,
                                FsFlowNet *net, FsRouter *router, const FsLinkSampler *sampler,
                                FsTime end, GError **error)
{
  FsReportTrace t = { .graph = rp->graph, .topo = topo, .net = net, .router = router,
                      .sampler = sampler, .end = end, .title = rp->name, .n_links = TOP_LINKS };
  return fs_report_write_trace(path, &t, error);
}
