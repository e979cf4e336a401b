/* link-sampler.h — per-link utilisation over time, sampled while a
 * simulation runs, for the trace's counter tracks and the heat map.
 *
 * A sampler schedules one event on the flow network's simulator every
 * `bin` picoseconds and records, for every channel, the bytes that crossed
 * it since the previous sample (the channel's `volume`, the integral of its
 * load, which the flow network keeps exact at any instant).  It starts with
 * 100 ns bins; whenever it holds 2 × max_bins bins it merges them pairwise
 * and doubles the bin width, so a run of any length ends with between
 * max_bins and 2 × max_bins bins of equal width (the last one partial).  It
 * stops rescheduling itself when it is the only event left, so
 * fs_sim_run still ends; call fs_link_sampler_finish after the run to
 * close the last bin at the end time.
 *
 * Utilisation of a channel in a bin = bytes moved / (capacity × bin width),
 * in [0, 1].  Sampling reads statistics only: it changes no result.
 *
 * Ownership: the sampler borrows the flow network (and its simulator),
 * which must outlive the run; free it with fs_link_sampler_free.  Memory:
 * channels × 2 × max_bins floats plus one double per channel;
 * fs_link_sampler_new returns NULL (no sampling) when that would exceed
 * FS_LINK_SAMPLER_MAX_BYTES or $FABRICSIM_MAX_SAMPLER_BYTES, with one
 * warning line on stderr naming the guard.  Cost per sample: O(channels).
 */
#pragma once

#include <glib.h>

#include "net/flow.h"

G_BEGIN_DECLS

#define FS_LINK_SAMPLER_MAX_BYTES (64u << 20)

typedef struct FsLinkSampler FsLinkSampler;

/* Starts sampling net's channels (all of them, as they are now) at the
 * simulator's current time.  NULL when the memory bound would be exceeded
 * or max_bins is 0. */
FsLinkSampler *fs_link_sampler_new(FsFlowNet *net, guint max_bins);
void fs_link_sampler_free(FsLinkSampler *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsLinkSampler, fs_link_sampler_free)

/* Closes the last bin at time end (>= the last sample; the simulator's
 * clock after the run).  Call once, after the run. */
void fs_link_sampler_finish(FsLinkSampler *s, FsTime end);

/* Number of bins, and the width of every bin but the last (which ends at
 * the finish time). */
guint fs_link_sampler_n_bins(const FsLinkSampler *s);
FsTime fs_link_sampler_bin_width(const FsLinkSampler *s);
/* Start time of bin i (i may equal n_bins: the finish time). */
FsTime fs_link_sampler_bin_start(const FsLinkSampler *s, guint i);
/* Mean utilisation of channel ch in bin i, 0..1. */
double fs_link_sampler_util(const FsLinkSampler *s, FsChannelId ch, guint i);

G_END_DECLS
