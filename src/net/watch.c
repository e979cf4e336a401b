/* watch.c — watches of summed channel loads (fs_flownet_watch_add, flow.h):
 * a caller's bound on several channels' loads together, checked over a
 * run.  A watched channel lists its watches (FsChan.watches into
 * w_chan); a recomputation (fill.c) marks the watches of the watched
 * channels it set and re-sums them once all are set, so a peak is never a
 * mix of rates from before and after it. */
#include "net/flow-private.h"

#include <string.h>

guint fs_flownet_watch_add(FsFlowNet *net, const FsChannelId *chans, guint n)
{
  if (net->w_chan == NULL) {
    net->w_members = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
    net->w_off = g_array_new(FALSE, FALSE, sizeof(guint));
    net->w_peak = g_array_new(FALSE, FALSE, sizeof(double));
    net->w_chan = g_array_new(FALSE, FALSE, sizeof(FsWatchRef));
    net->w_dirty = g_array_new(FALSE, FALSE, sizeof(guint));
    net->w_stamp = g_array_new(FALSE, FALSE, sizeof(guint));
    guint zero = 0;
    g_array_append_val(net->w_off, zero);
  }
  guint id = net->w_peak->len;
  for (guint i = 0; i < n; i++) {
    g_return_val_if_fail(chans[i] < net->n_chans, id);
    FsChan *c = &net->chans[chans[i]];
    FsWatchRef ref = {id, c->watches};
    g_array_append_val(net->w_chan, ref);
    c->watches = net->w_chan->len;
  }
  g_array_append_vals(net->w_members, chans, n);
  guint end = net->w_members->len, stamp = 0;
  double peak = 0;
  g_array_append_val(net->w_off, end);
  g_array_append_val(net->w_peak, peak);
  g_array_append_val(net->w_stamp, stamp);
  return id;
}

double fs_flownet_watch_peak(const FsFlowNet *net, guint id)
{
  g_return_val_if_fail(net->w_peak != NULL && id < net->w_peak->len, 0);
  return g_array_index(net->w_peak, double, id);
}

void fs_flownet_watch_clear(FsFlowNet *net)
{
  if (net->w_chan == NULL)
    return;
  for (guint i = 0; i < net->w_members->len; i++)
    net->chans[g_array_index(net->w_members, FsChannelId, i)].watches = 0;
  fs_flownet_watch_free(net);
}

void fs_flownet_watch_free(FsFlowNet *net)
{
  if (net->w_chan == NULL)
    return;
  g_array_unref(net->w_members);
  g_array_unref(net->w_off);
  g_array_unref(net->w_peak);
  g_array_unref(net->w_chan);
  g_array_unref(net->w_dirty);
  g_array_unref(net->w_stamp);
  net->w_members = net->w_off = net->w_peak = net->w_chan = net->w_dirty = net->w_stamp = NULL;
}

void fs_flownet_watch_update(FsFlowNet *net)
{
  if (++net->w_epoch == 0) {
    memset(net->w_stamp->data, 0, sizeof(guint) * net->w_stamp->len);
    net->w_epoch = 1;
  }
  g_array_set_size(net->w_dirty, 0);
  guint *stamp = (guint *)net->w_stamp->data;
  const FsWatchRef *refs = (const FsWatchRef *)net->w_chan->data;
  for (guint i = 0; i < net->comp_chans.n; i++)
    for (guint r = net->chans[net->comp_chans.v[i]].watches; r != 0; r = refs[r - 1].next) {
      guint w = refs[r - 1].watch;
      if (stamp[w] != net->w_epoch) {
        stamp[w] = net->w_epoch;
        g_array_append_val(net->w_dirty, w);
      }
    }
  const guint *off = (const guint *)net->w_off->data;
  const FsChannelId *m = (const FsChannelId *)net->w_members->data;
  double *peak = (double *)net->w_peak->data;
  for (guint i = 0; i < net->w_dirty->len; i++) {
    guint w = g_array_index(net->w_dirty, guint, i);
    double sum = 0;
    for (guint k = off[w]; k < off[w + 1]; k++)
      sum += net->chans[m[k]].load;
    peak[w] = MAX(peak[w], sum);
  }
}
