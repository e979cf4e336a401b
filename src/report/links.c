/* links.c — see links.h. */
#include "report/links.h"

#include <string.h>

#include "util/units.h"

static int use_cmp(const void *a, const void *b)
{
  const FsLinkUse *x = a, *y = b;
  if (x->utilisation != y->utilisation)
    return x->utilisation > y->utilisation ? -1 : 1;
  return x->channel < y->channel ? -1 : x->channel > y->channel;
}

guint fs_report_busiest_links(FsFlowNet *net, FsTime span, FsLinkUse *out, guint max)
{
  guint n = fs_flownet_n_channels(net);
  g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(FsLinkUse));
  for (guint i = 0; i < n; i++) {
    FsChannelStats st;
    fs_flownet_channel_stats(net, i, &st);
    if (st.bytes == 0)
      continue;
    FsLinkUse u = { i, span > 0 && st.capacity > 0 ? st.volume / (st.capacity * fs_time_to_s(span)) : 0,
                    st.bytes };
    g_array_append_val(all, u);
  }
  g_array_sort(all, use_cmp);
  guint k = MIN(all->len, max);
  if (k > 0) /* no traffic: all->data may be NULL */
    memcpy(out, all->data, k * sizeof(FsLinkUse));
  return k;
}

gboolean fs_report_write_trace(const char *path, const FsReportTrace *t, GError **error)
{
  g_autofree FsLinkUse *use = g_new(FsLinkUse, MAX(t->n_links, 1u));
  g_autofree FsTraceLink *tl = g_new0(FsTraceLink, MAX(t->n_links, 1u));
  guint nl = fs_report_busiest_links(t->net, t->end, use, t->n_links);
  for (guint i = 0; i < nl; i++)
    tl[i] = (FsTraceLink){ fs_router_channel_name(t->router, use[i].channel), use[i].channel,
                           use[i].utilisation };
  FsTraceOptions to = { t->title, tl, nl, t->sampler, t->end };
  gboolean ok = fs_trace_json_write(path, t->graph, t->transfers, t->n_transfers, t->topo, &to, error);
  for (guint i = 0; i < nl; i++)
    g_free((char *)tl[i].name);
  return ok;
}
