/* link-sampler.c — per-link utilisation over time (see link-sampler.h). */
#include "report/link-sampler.h"

#include "util/limits.h"

#include <string.h>

#include "core/sim.h"

#define FIRST_BIN ((FsTime)100000) /* 100 ns */

struct FsLinkSampler {
  FsFlowNet *net;
  FsSim *sim;
  guint n_ch;
  guint max_bins;    /* merge when 2 × max_bins bins are full */
  FsTime t0;         /* start of bin 0 */
  FsTime bin;        /* width of a full bin */
  guint n_bins;      /* closed bins */
  float *bytes;      /* [bin * n_ch + ch]: bytes moved in the bin */
  double *last;      /* volume of each channel at the last sample */
  FsTime end;        /* finish time, or -1 before fs_link_sampler_finish */
  FsEventId pending; /* the next sample's event, or 0 */
  gboolean scheduled;
};

/* Closes a bin: bytes since the last sample, per channel. */
static void close_bin(FsLinkSampler *s)
{
  float *row = s->bytes + (gsize)s->n_bins * s->n_ch;
  for (guint c = 0; c < s->n_ch; c++) {
    FsChannelStats st;
    fs_flownet_channel_stats(s->net, c, &st);
    row[c] = (float)(st.volume - s->last[c]);
    s->last[c] = st.volume;
  }
  s->n_bins++;
}

/* Halves the number of bins by adding neighbours; the width doubles. */
static void merge(FsLinkSampler *s)
{
  guint half = s->n_bins / 2;
  for (guint i = 0; i < half; i++) {
    float *dst = s->bytes + (gsize)i * s->n_ch;
    const float *a = s->bytes + (gsize)(2 * i) * s->n_ch, *b = a + s->n_ch;
    for (guint c = 0; c < s->n_ch; c++)
      dst[c] = a[c] + b[c];
  }
  s->n_bins = half;
  s->bin *= 2;
}

static void sample(void *ctx, uint64_t arg)
{
  FsLinkSampler *s = ctx;
  (void)arg;
  s->scheduled = FALSE;
  close_bin(s);
  if (s->n_bins == 2 * s->max_bins)
    merge(s);
  /* Keep sampling while anything else may still happen. */
  /* Never at the clock's end itself: an event there is an error for the
   * run loop (core/sim.h), and the sampler is no reason to stop a run. */
  FsTime next = fs_time_add_sat(s->t0, fs_time_mul_sat(s->bin, s->n_bins + 1));
  if (fs_sim_pending(s->sim) > 0 && next < FS_TIME_MAX) {
    s->pending = fs_sim_at(s->sim, next, sample, s, 0);
    s->scheduled = TRUE;
  }
}

FsLinkSampler *fs_link_sampler_new(FsFlowNet *net, guint max_bins)
{
  guint n = fs_flownet_n_channels(net);
  guint64 limit = fs_env_limit("FABRICSIM_MAX_SAMPLER_BYTES", FS_LINK_SAMPLER_MAX_BYTES, (guint64)1 << 40);
  guint64 need = (guint64)n * 2 * max_bins * sizeof(float);
  if (max_bins == 0)
    return NULL;
  if (need > limit) {
    /* The sampler guard: the trace goes on without link tracks, and says why. */
    g_autofree char *a = fs_limit_bytes_text(need);
    g_autofree char *b = fs_limit_bytes_text(limit);
    g_printerr("fabricsim: warning: no link utilisation in the trace: sampling %u channels needs "
               "%s, above the sampler guard of %s (FABRICSIM_MAX_SAMPLER_BYTES raises the limit)\n",
               n, a, b);
    return NULL;
  }
  FsLinkSampler *s = g_new0(FsLinkSampler, 1);
  s->net = net;
  s->sim = fs_flownet_sim(net);
  s->n_ch = n;
  s->max_bins = max_bins;
  s->t0 = fs_sim_now(s->sim);
  s->bin = FIRST_BIN;
  s->bytes = g_new0(float, (gsize)n * 2 * max_bins);
  s->last = g_new0(double, MAX(n, 1u));
  for (guint c = 0; c < n; c++) {
    FsChannelStats st;
    fs_flownet_channel_stats(net, c, &st);
    s->last[c] = st.volume;
  }
  s->end = -1;
  s->pending = fs_sim_at(s->sim, fs_time_add_sat(s->t0, s->bin), sample, s, 0);
  s->scheduled = TRUE;
  return s;
}

void fs_link_sampler_free(FsLinkSampler *s)
{
  if (s == NULL)
    return;
  if (s->scheduled)
    fs_sim_cancel(s->sim, s->pending);
  g_free(s->bytes);
  g_free(s->last);
  g_free(s);
}

void fs_link_sampler_finish(FsLinkSampler *s, FsTime end)
{
  g_return_if_fail(s != NULL && s->end < 0);
  if (s->scheduled) {
    fs_sim_cancel(s->sim, s->pending);
    s->scheduled = FALSE;
  }
  FsTime closed = s->t0 + (FsTime)s->n_bins * s->bin;
  end = MAX(end, s->t0);
  if (end > closed) {
    if (s->n_bins == 2 * s->max_bins)
      merge(s);
    close_bin(s);
  } else {
    /* The last sample ran after the end (it was scheduled while events
     * were pending): nothing moved after the end, so bins that start at or
     * after it fold into the bin that holds it, which ends at end. */
    while (s->n_bins > 1 && s->t0 + (FsTime)(s->n_bins - 1) * s->bin >= end) {
      float *prev = s->bytes + (gsize)(s->n_bins - 2) * s->n_ch, *last = prev + s->n_ch;
      for (guint c = 0; c < s->n_ch; c++)
        prev[c] += last[c];
      s->n_bins--;
    }
  }
  s->end = end;
}

guint fs_link_sampler_n_bins(const FsLinkSampler *s) { return s->n_bins; }
FsTime fs_link_sampler_bin_width(const FsLinkSampler *s) { return s->bin; }

FsTime fs_link_sampler_bin_start(const FsLinkSampler *s, guint i)
{
  if (i >= s->n_bins && s->end >= 0)
    return s->end;
  return s->t0 + (FsTime)i * s->bin;
}

double fs_link_sampler_util(const FsLinkSampler *s, FsChannelId ch, guint i)
{
  g_return_val_if_fail(ch < s->n_ch && i < s->n_bins, 0);
  FsTime w = fs_link_sampler_bin_start(s, i + 1) - fs_link_sampler_bin_start(s, i);
  double cap = fs_flownet_channel_capacity(s->net, ch);
  if (w <= 0 || cap <= 0)
    return 0;
  double u = s->bytes[(gsize)i * s->n_ch + ch] / (cap * fs_time_to_s(w));
  return CLAMP(u, 0.0, 1.0);
}
