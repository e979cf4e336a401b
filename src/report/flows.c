/* flows.c — see flows.h. */
#include "report/flows.h"
#include "report/format.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "report/links.h"
#include "util/units.h"

#define FLOWS_SCHEMA_VERSION 1
#define TRACE_LINKS 16

static char *bottleneck_name(const FsTopo *t, int64_t ch)
{
  if (ch == FS_CHANNEL_NONE || (guint64)ch >= fs_topo_n_channels(t))
    return g_strdup("-");
  return g_strdup_printf("%s->%s", fs_topo_node(t, fs_topo_channel_src(t, (guint)ch))->name,
                         fs_topo_node(t, fs_topo_channel_dst(t, (guint)ch))->name);
}

/* See flows.h. Appends the replayed flow list to out as JSON (one object per transfer plus
 * makespan and total bytes), as CSV (one row per transfer) or as a text table with a makespan
 * line. Each transfer gives its transport, start, finish, mean rate and bottleneck channel. */
void fs_report_flows(GString *out, FsReportFormat fmt, const FsTopo *t, FsNetModel model,
                     const FsFlowList *list)
{
  GPtrArray *recs = list->records;
  FsTime makespan = 0;
  uint64_t total = 0;
  for (guint i = 0; i < recs->len; i++) {
    FsFlowRecord *r = g_ptr_array_index(recs, i);
    makespan = MAX(makespan, r->info.finish);
    total += r->bytes;
  }
  if (fmt == FS_REPORT_JSON) {
    json_t *o = json_object();
    json_object_set_new(o, "schema_version", json_integer(FLOWS_SCHEMA_VERSION));
    json_object_set_new(o, "topology", json_string(fs_topo_name(t)));
    json_object_set_new(o, "model", json_string(fs_net_model_name(model)));
    json_t *arr = json_array();
    for (guint i = 0; i < recs->len; i++) {
      FsFlowRecord *r = g_ptr_array_index(recs, i);
      g_autofree char *bn = bottleneck_name(t, r->info.bottleneck);
      json_t *f = json_object();
      json_object_set_new(f, "id", json_string(r->id));
      json_object_set_new(f, "src", json_string(fs_topo_node(t, r->src)->name));
      json_object_set_new(f, "dst", json_string(fs_topo_node(t, r->dst)->name));
      json_object_set_new(f, "bytes", json_integer((json_int_t)r->bytes));
      json_object_set_new(f, "transport", json_string(fs_route_kind_name(r->kind)));
      json_object_set_new(f, "start_ps", json_integer(r->info.start));
      json_object_set_new(f, "finish_ps", json_integer(r->info.finish));
      json_object_set_new(f, "latency_ps", json_integer(r->info.latency));
      json_object_set_new(f, "mean_rate_gbps", json_real(r->info.mean_rate / 1e9));
      json_object_set_new(f, "paths", json_integer(r->info.path_len));
      json_object_set_new(f, "bottleneck", r->info.bottleneck == FS_CHANNEL_NONE
                                             ? json_null() : json_string(bn));
      json_array_append_new(arr, f);
    }
    json_object_set_new(o, "flows", arr);
    json_object_set_new(o, "makespan_ps", json_integer(makespan));
    json_object_set_new(o, "bytes", json_integer((json_int_t)total));
    fs_report_append_json(out, o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    return;
  }
  if (fmt == FS_REPORT_CSV) {
    g_string_append_printf(out, "id,src,dst,bytes,transport,start_ps,finish_ps,mean_rate_Bps,paths,bottleneck\n");
    for (guint i = 0; i < recs->len; i++) {
      FsFlowRecord *r = g_ptr_array_index(recs, i);
      g_autofree char *bn = bottleneck_name(t, r->info.bottleneck);
      g_string_append_printf(out, "%s,%s,%s,%" G_GUINT64_FORMAT ",%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
             ",%.10g,%u,%s\n", r->id, fs_topo_node(t, r->src)->name,
             fs_topo_node(t, r->dst)->name, r->bytes, fs_route_kind_name(r->kind), r->info.start,
             r->info.finish, r->info.mean_rate, r->info.path_len, bn);
    }
    return;
  }
  g_string_append_printf(out, "# flows: %u transfers on %s, %s flow model\n", recs->len, fs_topo_name(t),
         fs_net_model_name(model));
  g_string_append_printf(out, "%-12s %-14s %-14s %12s %-11s %12s %12s %10s  %s\n", "id", "src", "dst", "bytes",
         "transport", "start(us)", "finish(us)", "GB/s", "bottleneck");
  for (guint i = 0; i < recs->len; i++) {
    FsFlowRecord *r = g_ptr_array_index(recs, i);
    g_autofree char *bn = bottleneck_name(t, r->info.bottleneck);
    g_string_append_printf(out, "%-12s %-14s %-14s %12" G_GUINT64_FORMAT " %-11s %12.3f %12.3f %10.2f  %s\n", r->id,
           fs_topo_node(t, r->src)->name, fs_topo_node(t, r->dst)->name, r->bytes,
           fs_route_kind_name(r->kind), fs_time_to_us(r->info.start),
           fs_time_to_us(r->info.finish), r->info.mean_rate / 1e9, bn);
  }
  g_autofree char *ms = fs_format_time(makespan);
  g_autofree char *sz = fs_format_size(total);
  g_string_append_printf(out, "# makespan %s, %s moved\n", ms, sz);
}

gboolean fs_report_flows_trace(const char *path, const FsTopo *t, FsFlowNet *net, FsRouter *router,
                               FsLinkSampler *sampler, const FsFlowList *list, const char *name,
                               GError **error)
{
  GPtrArray *recs = list->records;
  FsTime makespan = 0;
  g_autofree FsTraceTransfer *xs = g_new0(FsTraceTransfer, MAX(recs->len, 1u));
  for (guint i = 0; i < recs->len; i++) {
    FsFlowRecord *r = g_ptr_array_index(recs, i);
    makespan = MAX(makespan, r->info.finish);
    xs[i] = (FsTraceTransfer){ r->id, (guint)r->src, (guint)r->dst, r->bytes,
                               fs_route_kind_name(r->kind), r->info.start, r->info.finish };
  }
  if (sampler != NULL)
    fs_link_sampler_finish(sampler, makespan);
  g_autofree char *title = g_strdup_printf("%s on %s", name, fs_topo_name(t));
  FsReportTrace tr = { .transfers = xs, .n_transfers = recs->len, .topo = t, .net = net,
                       .router = router, .sampler = sampler, .end = makespan, .title = title,
                       .n_links = TRACE_LINKS };
  return fs_report_write_trace(path, &tr, error);
}
