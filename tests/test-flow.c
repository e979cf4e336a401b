/* test-flow.c — the flow engine (src/net/flow.h): max-min fair sharing,
 * exact completion times, caps, latency, counters, invariants, and the
 * incremental recomputation against a global one and a brute-force
 * reference. */
#include <math.h>
#include <string.h>

#include "core/rng.h"
#include "core/sim.h"
#include "net/flow.h"
#include "util/error.h"
#include "testutil.h"

#define GBPS 1e9
#define MB ((uint64_t)1000000)

/* Finish records, indexed by the caller's label (spec.src). */
typedef struct {
  FsFlowInfo info[4096];
  guint n;
} Record;

static void record_done(void *ctx, const FsFlowInfo *info)
{
  Record *r = ctx;
  ck_assert_int_lt(info->src, (int)G_N_ELEMENTS(r->info));
  r->info[info->src] = *info;
  r->n++;
}

static FsFlowId start_flow(FsFlowNet *net, Record *r, int label, const FsChannelId *path,
                           guint len, uint64_t bytes, FsTime start, double cap)
{
  FsFlowSpec spec = {
    .src = label, .dst = label, .path = path, .path_len = len, .bytes = bytes,
    .rate_cap = cap, .start = start, .done = record_done, .ctx = r,
  };
  FsFlowId id = fs_flownet_start(net, &spec);
  ck_assert(id != FS_FLOW_NONE);
  return id;
}

static void run(FsSim *sim)
{
  GError *error = NULL;
  ck_assert(fs_sim_run(sim, &error));
  fs_assert_no_error(error);
}

static void assert_check(FsFlowNet *net)
{
  GError *error = NULL;
  gboolean ok = fs_flownet_check(net, &error);
  fs_assert_no_error(error);
  ck_assert(ok);
}

START_TEST(test_flow_two_flows_share_fairly)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  fs_flownet_set_check(net, TRUE);
  FsChannelId ch = fs_flownet_add_channel(net, 1 * GBPS, 0);
  Record r = {0};
  FsFlowId a = start_flow(net, &r, 0, &ch, 1, MB, 0, 0);
  start_flow(net, &r, 1, &ch, 1, MB, 0, 0);
  FsFlowInfo info;
  ck_assert(fs_flownet_get_flow(net, a, &info));
  ck_assert(info.rate == 0.5 * GBPS);
  ck_assert_int_eq(info.bottleneck, ch);
  run(sim);
  ck_assert_int_eq(r.n, 2);
  /* 1 MB at 0.5 GB/s = 2 ms each. */
  ck_assert_int_eq(r.info[0].finish, 2 * FS_MS);
  ck_assert_int_eq(r.info[1].finish, 2 * FS_MS);
  ck_assert(r.info[0].mean_rate == 0.5 * GBPS);
}
END_TEST

START_TEST(test_flow_end_frees_bandwidth_exactly)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  fs_flownet_set_check(net, TRUE);
  FsChannelId ch = fs_flownet_add_channel(net, 1 * GBPS, 0);
  Record r = {0};
  start_flow(net, &r, 0, &ch, 1, 1 * MB, 0, 0);
  start_flow(net, &r, 1, &ch, 1, 2 * MB, 0, 0);
  run(sim);
  /* Both at 0.5 GB/s until A's 1 MB is done at 2 ms; B then has 1 MB left
   * alone at 1 GB/s: 1 ms more. */
  ck_assert_int_eq(r.info[0].finish, 2 * FS_MS);
  ck_assert_int_eq(r.info[1].finish, 3 * FS_MS);
  ck_assert(r.info[1].rate == 1 * GBPS);
}
END_TEST

START_TEST(test_flow_late_start_slows_running_flow)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  fs_flownet_set_check(net, TRUE);
  FsChannelId ch = fs_flownet_add_channel(net, 1 * GBPS, 0);
  Record r = {0};
  start_flow(net, &r, 0, &ch, 1, 2 * MB, 0, 0);
  start_flow(net, &r, 1, &ch, 1, 2 * MB, 1 * FS_MS, 0);
  run(sim);
  /* A alone 1 ms (1 MB), then both at 0.5 GB/s: A's last MB takes 2 ms
   * (done at 3 ms); B has moved 1 MB by then and finishes alone at 4 ms. */
  ck_assert_int_eq(r.info[0].finish, 3 * FS_MS);
  ck_assert_int_eq(r.info[1].start, 1 * FS_MS);
  ck_assert_int_eq(r.info[1].finish, 4 * FS_MS);
}
END_TEST

START_TEST(test_flow_parking_lot)
{
  enum { K = 4 };
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  fs_flownet_set_check(net, TRUE);
  FsChannelId path[K];
  for (int i = 0; i < K; i++)
    path[i] = fs_flownet_add_channel(net, 1 * GBPS, 0);
  Record r = {0};
  FsFlowId longf = start_flow(net, &r, 0, path, K, 1 * MB, 0, 0);
  FsFlowId shortf[K];
  for (int i = 0; i < K; i++)
    shortf[i] = start_flow(net, &r, 1 + i, &path[i], 1, (uint64_t)(i + 1) * MB, 0, 0);
  FsFlowInfo info;
  ck_assert(fs_flownet_get_flow(net, longf, &info));
  ck_assert(info.rate == 0.5 * GBPS);
  for (int i = 0; i < K; i++) {
    ck_assert(fs_flownet_get_flow(net, shortf[i], &info));
    ck_assert(info.rate == 0.5 * GBPS);
  }
  run(sim);
  /* Every link carries two flows at C/2.  The long flow and the first short
   * one finish at 2 ms; short flow i (i+1 MB) has i MB left at 2 ms, alone at
   * C: it finishes at (2 + i) ms. */
  ck_assert_int_eq(r.info[0].finish, 2 * FS_MS);
  for (int i = 0; i < K; i++)
    ck_assert_int_eq(r.info[1 + i].finish, (2 + i) * FS_MS);
}
END_TEST

START_TEST(test_flow_parking_lot_unequal_links)
{
  /* Link 0 at 1 GB/s, link 1 at 3 GB/s; the long flow crosses both, one
   * short flow per link.  Link 0 is the long flow's bottleneck (0.5 GB/s);
   * the short flow on link 1 takes the rest: 2.5 GB/s. */
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  FsChannelId path[2] = {fs_flownet_add_channel(net, 1 * GBPS, 0),
                         fs_flownet_add_channel(net, 3 * GBPS, 0)};
  Record r = {0};
  FsFlowId l = start_flow(net, &r, 0, path, 2, MB, 0, 0);
  FsFlowId s0 = start_flow(net, &r, 1, &path[0], 1, MB, 0, 0);
  FsFlowId s1 = start_flow(net, &r, 2, &path[1], 1, 5 * MB, 0, 0);
  FsFlowInfo a, b, c;
  ck_assert(fs_flownet_get_flow(net, l, &a));
  ck_assert(fs_flownet_get_flow(net, s0, &b));
  ck_assert(fs_flownet_get_flow(net, s1, &c));
  ck_assert(a.rate == 0.5 * GBPS && a.bottleneck == path[0]);
  ck_assert(b.rate == 0.5 * GBPS);
  ck_assert(c.rate == 2.5 * GBPS && c.bottleneck == path[1]);
  run(sim);
  /* At 2 ms the long flow is done; s1 moved 5 MB by 2 ms: done too. */
  ck_assert_int_eq(r.info[0].finish, 2 * FS_MS);
  ck_assert_int_eq(r.info[2].finish, 2 * FS_MS);
}
END_TEST

START_TEST(test_flow_cap_frees_bandwidth)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  fs_flownet_set_check(net, TRUE);
  FsChannelId ch = fs_flownet_add_channel(net, 1 * GBPS, 0);
  Record r = {0};
  FsFlowId a = start_flow(net, &r, 0, &ch, 1, MB, 0, 0.2 * GBPS);
  FsFlowId b = start_flow(net, &r, 1, &ch, 1, MB, 0, 0);
  FsFlowInfo ia, ib;
  ck_assert(fs_flownet_get_flow(net, a, &ia));
  ck_assert(fs_flownet_get_flow(net, b, &ib));
  ck_assert(ia.rate == 0.2 * GBPS);
  ck_assert_int_eq(ia.bottleneck, FS_CHANNEL_NONE);
  ck_assert(ib.rate == 0.8 * GBPS);
  run(sim);
  ck_assert_int_eq(r.info[1].finish, 1250 * FS_US); /* 1 MB at 0.8 GB/s */
  ck_assert_int_eq(r.info[0].finish, 5 * FS_MS);    /* 1 MB at its cap */
  ck_assert_int_eq(r.info[0].bottleneck, FS_CHANNEL_NONE);
}
END_TEST

START_TEST(test_flow_latency_added)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  FsChannelId path[2] = {fs_flownet_add_channel(net, 1 * GBPS, 1 * FS_US),
                         fs_flownet_add_channel(net, 2 * GBPS, 500 * FS_NS)};
  ck_assert_int_eq(fs_flownet_path_latency(net, path, 2), 1500 * FS_NS);
  ck_assert(fs_flownet_path_capacity(net, path, 2) == 1 * GBPS);
  Record r = {0};
  FsFlowSpec spec = {.src = 0, .path = path, .path_len = 2, .bytes = MB,
                     .start = 0, .extra_latency = 250 * FS_NS, .done = record_done, .ctx = &r};
  fs_flownet_start(net, &spec);
  /* A second flow on the same channels starting right after the first one
   * drained (1 ms) is not slowed by the first one's bytes still in flight. */
  start_flow(net, &r, 1, path, 2, MB, 1 * FS_MS, 0);
  run(sim);
  ck_assert_int_eq(r.info[0].drained, 1 * FS_MS);
  ck_assert_int_eq(r.info[0].latency, 1750 * FS_NS);
  ck_assert_int_eq(r.info[0].finish, 1 * FS_MS + 1750 * FS_NS);
  ck_assert_int_eq(r.info[1].finish, 2 * FS_MS + 1500 * FS_NS);
}
END_TEST

START_TEST(test_flow_zero_bytes)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  fs_flownet_set_check(net, TRUE);
  FsChannelId ch = fs_flownet_add_channel(net, 1 * GBPS, 3 * FS_US);
  Record r = {0};
  start_flow(net, &r, 0, &ch, 1, 0, 5 * FS_US, 0);
  start_flow(net, &r, 1, &ch, 1, MB, 0, 0);
  run(sim);
  ck_assert_int_eq(r.info[0].drained, 5 * FS_US);
  ck_assert_int_eq(r.info[0].finish, 8 * FS_US);
  ck_assert(r.info[0].mean_rate == 0);
  /* The zero-byte flow never shared the channel. */
  ck_assert_int_eq(r.info[1].drained, 1 * FS_MS);
  FsChannelStats st;
  fs_flownet_channel_stats(net, ch, &st);
  ck_assert_uint_eq(st.flows_done, 1);
  ck_assert_uint_eq(st.peak_flows, 1);
}
END_TEST

START_TEST(test_flow_empty_path)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  Record r = {0};
  start_flow(net, &r, 0, NULL, 0, MB, 0, 0);            /* uncapped: instant */
  start_flow(net, &r, 1, NULL, 0, MB, 0, 4 * GBPS);     /* capped: 250 us */
  run(sim);
  ck_assert_int_eq(r.info[0].finish, 0);
  ck_assert_int_eq(r.info[1].finish, 250 * FS_US);
}
END_TEST

START_TEST(test_flow_rounds_up_to_the_picosecond)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  FsChannelId ch = fs_flownet_add_channel(net, 3 * GBPS, 0);
  Record r = {0};
  start_flow(net, &r, 0, &ch, 1, 1, 0, 0);           /* 333.33 ps */
  start_flow(net, &r, 1, &ch, 1, 3, 1 * FS_US, 0);   /* exactly 1000 ps */
  start_flow(net, &r, 2, &ch, 1, 1000, 2 * FS_US, 0); /* 333333.33 ps */
  run(sim);
  ck_assert_int_eq(r.info[0].finish, 334);
  ck_assert_int_eq(r.info[1].finish, 1 * FS_US + 1000);
  ck_assert_int_eq(r.info[2].finish, 2 * FS_US + 333334);
}
END_TEST

START_TEST(test_flow_counters)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  FsChannelId ch = fs_flownet_add_channel(net, 1 * GBPS, 0);
  FsChannelId idle = fs_flownet_add_channel(net, 1 * GBPS, 0);
  Record r = {0};
  start_flow(net, &r, 0, &ch, 1, MB, 0, 0);
  start_flow(net, &r, 1, &ch, 1, MB, 0, 0);
  start_flow(net, &r, 2, &ch, 1, MB, 5 * FS_MS, 0);
  run(sim);
  FsChannelStats st;
  fs_flownet_channel_stats(net, ch, &st);
  ck_assert_uint_eq(st.bytes, 3 * MB);
  ck_assert_uint_eq(st.flows_done, 3);
  ck_assert_uint_eq(st.peak_flows, 2);
  ck_assert_uint_eq(st.active_flows, 0);
  ck_assert_int_eq(st.busy, 3 * FS_MS); /* 0-2 ms and 5-6 ms */
  ck_assert(fabs(st.volume - 3e6) < 1e-3);
  fs_flownet_channel_stats(net, idle, &st);
  ck_assert_uint_eq(st.bytes, 0);
  ck_assert_int_eq(st.busy, 0);
  FsFlowNetStats ns;
  fs_flownet_stats(net, &ns);
  ck_assert_uint_eq(ns.flows_started, 3);
  ck_assert_uint_eq(ns.flows_finished, 3);
  ck_assert_uint_eq(ns.flows_active, 0);
  assert_check(net);
}
END_TEST

START_TEST(test_flow_stale_id)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  FsChannelId ch = fs_flownet_add_channel(net, 1 * GBPS, 0);
  Record r = {0};
  FsFlowId a = start_flow(net, &r, 0, &ch, 1, MB, 0, 0);
  FsFlowInfo info;
  ck_assert(fs_flownet_get_flow(net, a, &info));
  run(sim);
  ck_assert(!fs_flownet_get_flow(net, a, &info));
  FsFlowId b = start_flow(net, &r, 1, &ch, 1, MB, fs_sim_now(sim), 0);
  ck_assert(b != a); /* the same slot, a new generation */
  ck_assert(!fs_flownet_get_flow(net, a, &info));
  ck_assert(fs_flownet_get_flow(net, b, &info));
}
END_TEST

/* A chain: each completion starts the next flow, at its finish time. */
typedef struct {
  FsFlowNet *net;
  FsChannelId ch;
  int left;
  FsTime last;
} Chain;

static void chain_next(void *ctx, const FsFlowInfo *info)
{
  Chain *c = ctx;
  c->last = info->finish;
  if (--c->left > 0) {
    FsFlowSpec spec = {.path = &c->ch, .path_len = 1, .bytes = MB,
                       .start = fs_sim_now(fs_flownet_sim(c->net)), .done = chain_next, .ctx = c};
    fs_flownet_start(c->net, &spec);
  }
}

START_TEST(test_flow_callback_starts_next)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  Chain c = {net, fs_flownet_add_channel(net, 1 * GBPS, 10 * FS_NS), 5, 0};
  FsFlowSpec spec = {.path = &c.ch, .path_len = 1, .bytes = MB, .done = chain_next, .ctx = &c};
  fs_flownet_start(net, &spec);
  run(sim);
  ck_assert_int_eq(c.left, 0);
  ck_assert_int_eq(c.last, 5 * (1 * FS_MS + 10 * FS_NS));
}
END_TEST

/* What the drained and done callbacks of flows saw, in the order they ran:
 * the time of each call, its info, and whether it was the drain. */
typedef struct {
  FsFlowNet *net;
  FsTime at[16];
  FsFlowInfo info[16];
  gboolean drain[16];
  guint n;
  guint chain_left;  /* drained_next: flows still to start */
  FsChannelId ch;
} Calls;

static void note(Calls *c, const FsFlowInfo *info, gboolean drain)
{
  ck_assert_uint_lt(c->n, G_N_ELEMENTS(c->at));
  c->at[c->n] = fs_sim_now(fs_flownet_sim(c->net));
  c->info[c->n] = *info;
  c->drain[c->n++] = drain;
}

static void calls_done(void *ctx, const FsFlowInfo *info)
{
  note(ctx, info, FALSE);
}

static void calls_drained(void *ctx, const FsFlowInfo *info)
{
  note(ctx, info, TRUE);
}

/* A drained callback that starts the next flow of a chain on the same
 * channel (a pipelined connection). */
static void drained_next(void *ctx, const FsFlowInfo *info)
{
  Calls *c = ctx;
  note(c, info, TRUE);
  if (c->chain_left == 0)
    return;
  c->chain_left--;
  FsFlowSpec spec = {.src = info->src + 1, .path = &c->ch, .path_len = 1, .bytes = MB,
                     .start = fs_sim_now(fs_flownet_sim(c->net)), .done = calls_done,
                     .drained = drained_next, .ctx = c};
  ck_assert(fs_flownet_start(c->net, &spec) != FS_FLOW_NONE);
}

START_TEST(test_flow_drained_callback)
{
  /* A flow of 1 MB at 1 GB/s over a path of latency L = 2 us: drained at
   * D = 1 ms (its callback's info: drained D, finish D + L), done at D + L,
   * the drain first.  With the maxmin and the analytic model alike. */
  for (int m = 0; m < FS_NET_N_MODELS; m++) {
    g_autoptr(FsSim) sim = fs_sim_new();
    g_autoptr(FsFlowNet) net = fs_flownet_new(sim, (FsNetModel)m);
    fs_flownet_set_check(net, TRUE);
    Calls c = {.net = net, .ch = fs_flownet_add_channel(net, 1 * GBPS, 2 * FS_US)};
    FsFlowSpec spec = {.path = &c.ch, .path_len = 1, .bytes = MB, .done = calls_done,
                       .drained = calls_drained, .ctx = &c};
    fs_flownet_start(net, &spec);
    run(sim);
    ck_assert_uint_eq(c.n, 2);
    ck_assert(c.drain[0] && !c.drain[1]);
    ck_assert_int_eq(c.at[0], 1 * FS_MS);
    ck_assert_int_eq(c.info[0].drained, 1 * FS_MS);
    ck_assert_int_eq(c.info[0].finish, 1 * FS_MS + 2 * FS_US);
    ck_assert_int_eq(c.info[0].latency, 2 * FS_US);
    ck_assert(c.info[0].mean_rate == 1 * GBPS);
    ck_assert_int_eq(c.at[1], 1 * FS_MS + 2 * FS_US);
    ck_assert(memcmp(&c.info[0], &c.info[1], sizeof c.info[0]) == 0);
  }
}
END_TEST

START_TEST(test_flow_drained_starts_next)
{
  /* Three flows of 1 MB on one channel (1 GB/s, latency 2 us), each started
   * by the drain of the one before: they follow each other on the wire with
   * no gap (D = 1, 2, 3 ms) and land L later; started at the finishes
   * instead (test_flow_callback_starts_next) each would pay L again. */
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  fs_flownet_set_check(net, TRUE);
  Calls c = {.net = net, .ch = fs_flownet_add_channel(net, 1 * GBPS, 2 * FS_US), .chain_left = 2};
  FsFlowSpec spec = {.src = 0, .path = &c.ch, .path_len = 1, .bytes = MB, .done = calls_done,
                     .drained = drained_next, .ctx = &c};
  fs_flownet_start(net, &spec);
  run(sim);
  ck_assert_uint_eq(c.n, 6);
  for (guint i = 0; i < c.n; i++) {
    int k = c.info[i].src;
    FsTime d = (k + 1) * FS_MS;
    ck_assert_int_eq(c.info[i].drained, d);
    ck_assert_int_eq(c.at[i], c.drain[i] ? d : d + 2 * FS_US);
  }
}
END_TEST

START_TEST(test_flow_drained_zero_bytes)
{
  /* A zero-byte flow drains when it starts: later (an event at S), or now
   * (inside fs_flownet_start); with no latency it is done right after. */
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  FsChannelId ch = fs_flownet_add_channel(net, 1 * GBPS, 3 * FS_US);
  Calls c = {.net = net};
  FsFlowSpec spec = {.src = 0, .path = &ch, .path_len = 1, .start = 5 * FS_US,
                     .done = calls_done, .drained = calls_drained, .ctx = &c};
  fs_flownet_start(net, &spec);
  ck_assert_uint_eq(c.n, 0);
  spec.src = 1;
  spec.start = 0;
  fs_flownet_start(net, &spec);
  ck_assert_uint_eq(c.n, 1); /* drained inside the call, not yet done */
  ck_assert(c.drain[0] && c.info[0].src == 1 && c.at[0] == 0 && c.info[0].finish == 3 * FS_US);
  spec.src = 2;
  spec.path_len = 0;
  fs_flownet_start(net, &spec);
  ck_assert_uint_eq(c.n, 3); /* no latency: drained, then done, inside the call */
  ck_assert(c.drain[1] && !c.drain[2] && c.info[1].src == 2 && c.info[2].src == 2);
  run(sim);
  ck_assert_uint_eq(c.n, 6);
  /* Flow 1 done at 3 us; flow 0 drained at 5 us, done at 8 us. */
  ck_assert(!c.drain[3] && c.info[3].src == 1 && c.at[3] == 3 * FS_US);
  ck_assert(c.drain[4] && c.info[4].src == 0 && c.at[4] == 5 * FS_US);
  ck_assert(c.info[4].drained == 5 * FS_US && c.info[4].finish == 8 * FS_US);
  ck_assert(!c.drain[5] && c.info[5].src == 0 && c.at[5] == 8 * FS_US);
}
END_TEST

START_TEST(test_flow_drained_copies)
{
  /* A flow of 4 copies (4 MB at a cap of 4 × 0.5 GB/s) drains once, at
   * 2 ms, as each of its copies would, and is done once, L later. */
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  fs_flownet_set_check(net, TRUE);
  FsChannelId ch = fs_flownet_add_channel(net, 10 * GBPS, 1 * FS_US);
  Calls c = {.net = net};
  FsFlowSpec spec = {.path = &ch, .path_len = 1, .bytes = 4 * MB, .rate_cap = 4 * 0.5 * GBPS,
                     .copies = 4, .done = calls_done, .drained = calls_drained, .ctx = &c};
  fs_flownet_start(net, &spec);
  run(sim);
  ck_assert_uint_eq(c.n, 2);
  ck_assert(c.drain[0] && c.at[0] == 2 * FS_MS && c.info[0].bytes == 4 * MB);
  ck_assert(!c.drain[1] && c.at[1] == 2 * FS_MS + 1 * FS_US);
}
END_TEST

START_TEST(test_flow_recomputes_only_the_component)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  FsChannelId a = fs_flownet_add_channel(net, 1 * GBPS, 0);
  FsChannelId b = fs_flownet_add_channel(net, 1 * GBPS, 0);
  Record r = {0};
  for (int i = 0; i < 10; i++)
    start_flow(net, &r, i, &a, 1, MB, 0, 0);
  fs_flownet_flush(net);
  FsFlowNetStats s0, s1;
  fs_flownet_stats(net, &s0);
  ck_assert_uint_eq(s0.recomputations, 1);
  ck_assert_uint_eq(s0.recomputed_flows, 10);
  /* A flow on the other channel is its own component. */
  start_flow(net, &r, 10, &b, 1, MB, fs_sim_now(sim), 0);
  fs_flownet_flush(net);
  fs_flownet_stats(net, &s1);
  ck_assert_uint_eq(s1.recomputations, 2);
  ck_assert_uint_eq(s1.recomputed_flows, 11);
  ck_assert_uint_eq(s1.max_component, 10);
  run(sim);
  ck_assert_int_eq(r.info[10].finish, 1 * FS_MS);
  ck_assert_int_eq(r.info[0].finish, 10 * FS_MS);
}
END_TEST

/* ---- Random scenarios ---------------------------------------------------- */

typedef struct {
  guint n_chans, n_flows;
  double cap[64];
  FsTime lat[64];
  FsChannelId path[512][6];
  guint len[512];
  uint64_t bytes[512];
  FsTime start[512];
  double rcap[512];
} Scenario;

static void make_scenario(Scenario *sc, uint64_t seed, guint n_chans, guint n_flows,
                          gboolean disjoint)
{
  FsRng rng;
  fs_rng_init(&rng, seed, 7);
  memset(sc, 0, sizeof *sc);
  sc->n_chans = n_chans;
  sc->n_flows = n_flows;
  for (guint c = 0; c < G_N_ELEMENTS(sc->cap); c++) {
    sc->cap[c] = (double)(1 + fs_rng_below(&rng, 8)) * 12.5e9;
    sc->lat[c] = (FsTime)fs_rng_below(&rng, 2000) * FS_NS;
  }
  guint next_chan = 0;
  for (guint f = 0; f < n_flows; f++) {
    guint len = 1 + (guint)fs_rng_below(&rng, 5);
    for (guint h = 0; h < len; h++) {
      /* Disjoint: each flow its own channels; else random (distinct). */
      FsChannelId ch;
      if (disjoint) {
        ch = next_chan++;
      } else {
        gboolean dup;
        do {
          ch = (FsChannelId)fs_rng_below(&rng, n_chans);
          dup = FALSE;
          for (guint k = 0; k < h; k++)
            dup |= sc->path[f][k] == ch;
        } while (dup);
      }
      sc->path[f][h] = ch;
    }
    sc->len[f] = len;
    sc->bytes[f] = fs_rng_below(&rng, 4) == 0 ? fs_rng_below(&rng, 100)
                                              : 1 + fs_rng_below(&rng, 64 * MB);
    sc->start[f] = (FsTime)fs_rng_below(&rng, 5000) * FS_US;
    sc->rcap[f] = fs_rng_below(&rng, 3) == 0 ? (double)(1 + fs_rng_below(&rng, 50)) * 1e9 : 0;
  }
  if (disjoint)
    sc->n_chans = MAX(n_chans, next_chan);
  g_assert(sc->n_chans <= G_N_ELEMENTS(sc->cap) || disjoint);
}

/* Runs a scenario; fills rec (by flow index).  */
static void run_scenario(const Scenario *sc, FsNetModel model, gboolean global, gboolean check,
                         Record *rec, FsFlowNetStats *stats)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, model);
  fs_flownet_set_global_recompute(net, global);
  fs_flownet_set_check(net, check);
  for (guint c = 0; c < sc->n_chans; c++)
    fs_flownet_add_channel(net, c < 64 ? sc->cap[c] : 25e9, c < 64 ? sc->lat[c] : 100 * FS_NS);
  memset(rec, 0, sizeof *rec);
  for (guint f = 0; f < sc->n_flows; f++)
    start_flow(net, rec, (int)f, sc->path[f], sc->len[f], sc->bytes[f], sc->start[f], sc->rcap[f]);
  run(sim);
  ck_assert_uint_eq(rec->n, sc->n_flows);
  assert_check(net);
  if (stats)
    fs_flownet_stats(net, stats);
}

START_TEST(test_flow_incremental_equals_global)
{
  static Scenario sc;
  static Record inc, glob;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    make_scenario(&sc, seed, 24, 300, FALSE);
    FsFlowNetStats si, sg;
    run_scenario(&sc, FS_NET_MAXMIN, FALSE, seed <= 3, &inc, &si);
    run_scenario(&sc, FS_NET_MAXMIN, TRUE, FALSE, &glob, &sg);
    for (guint f = 0; f < sc.n_flows; f++) {
      ck_assert_msg(inc.info[f].finish == glob.info[f].finish,
                    "seed %" G_GUINT64_FORMAT " flow %u: incremental %" G_GINT64_FORMAT
                    " global %" G_GINT64_FORMAT, seed, f, inc.info[f].finish, glob.info[f].finish);
      ck_assert(inc.info[f].drained >= inc.info[f].start);
    }
    ck_assert_uint_le(si.recomputed_flows, sg.recomputed_flows);
  }
}
END_TEST

/* A run of capped flows, most of them at their caps, for the fill's
 * shortcut (fill.c): starts on a coarse grid of times (so that many share
 * a recomputation), copies, a channel twice in a path now and then, and a
 * new flow started from each drained callback while the budget lasts. */
typedef struct {
  FsFlowNet *net;
  FsRng rng;
  guint n_chans, started, budget;
  FsFlowInfo info[1024];
  FsFlowId id[1024];
} CapRun;

static void cap_run_done(void *ctx, const FsFlowInfo *info)
{
  CapRun *r = ctx;
  r->info[info->src] = *info;
}

static void cap_run_drained(void *ctx, const FsFlowInfo *info);

/* Starts flow number r->started at `start` on a random path. */
static void cap_run_start(CapRun *r, FsTime start)
{
  FsChannelId path[6];
  guint len = 1 + (guint)fs_rng_below(&r->rng, 4);
  for (guint h = 0; h < len; h++)
    path[h] = (FsChannelId)fs_rng_below(&r->rng, r->n_chans);
  if (fs_rng_below(&r->rng, 10) == 0)
    path[len++] = path[0]; /* a channel twice: it counts twice */
  /* Caps near the channels' shares (12.5-100 GB/s), so that some fills end
   * at the caps and others meet a full channel part way. */
  double cap = fs_rng_below(&r->rng, 8) == 0 ? 0 : (double)(2 + fs_rng_below(&r->rng, 40)) * 1e9;
  FsFlowSpec spec = {
    .src = (int)r->started, .dst = 0, .path = path, .path_len = len,
    .bytes = 1 + fs_rng_below(&r->rng, 8 * MB), .rate_cap = cap,
    .copies = fs_rng_below(&r->rng, 4) == 0 ? 1 + (guint)fs_rng_below(&r->rng, 3) : 1,
    .start = start, .done = cap_run_done, .drained = cap_run_drained, .ctx = r,
  };
  r->id[r->started] = fs_flownet_start(r->net, &spec);
  ck_assert(r->id[r->started] != FS_FLOW_NONE);
  r->started++;
}

static void cap_run_drained(void *ctx, const FsFlowInfo *info)
{
  (void)info;
  CapRun *r = ctx;
  if (r->started < r->budget)
    cap_run_start(r, fs_sim_now(fs_flownet_sim(r->net)));
}

/* Runs seed's flows with the shortcut on or off; the channels' counters
 * go to chan (volume, busy, bytes per channel) and the network's to st. */
static void cap_run(CapRun *r, uint64_t seed, gboolean shortcut, FsChannelStats *chan,
                    FsFlowNetStats *st)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  fs_flownet_set_fill_shortcut(net, shortcut);
  fs_flownet_set_check(net, seed <= 2);
  memset(r, 0, sizeof *r);
  r->net = net;
  fs_rng_init(&r->rng, seed, 11);
  r->n_chans = 6 + (guint)fs_rng_below(&r->rng, 20);
  r->budget = 600;
  for (guint c = 0; c < r->n_chans; c++)
    fs_flownet_add_channel(net, (double)(1 + fs_rng_below(&r->rng, 8)) * 12.5e9,
                           (FsTime)fs_rng_below(&r->rng, 500) * FS_NS);
  for (guint k = 0; k < 300; k++)
    cap_run_start(r, (FsTime)fs_rng_below(&r->rng, 40) * FS_US);
  run(sim);
  assert_check(net);
  for (guint c = 0; c < r->n_chans; c++)
    fs_flownet_channel_stats(net, c, &chan[c]);
  fs_flownet_stats(net, st);
  r->net = NULL;
}

START_TEST(test_flow_fill_shortcut_is_exact)
{
  static CapRun on, off;
  static FsChannelStats con[32], coff[32];
  uint64_t skipped = 0;
  for (uint64_t seed = 1; seed <= 30; seed++) {
    FsFlowNetStats son, soff;
    cap_run(&on, seed, TRUE, con, &son);
    cap_run(&off, seed, FALSE, coff, &soff);
    ck_assert_uint_eq(on.started, off.started);
    for (guint f = 0; f < on.started; f++) {
      const FsFlowInfo *a = &on.info[f], *b = &off.info[f];
      ck_assert_msg(a->drained == b->drained && a->finish == b->finish,
                    "seed %" G_GUINT64_FORMAT " flow %u: drained %" G_GINT64_FORMAT
                    " against %" G_GINT64_FORMAT " without the shortcut", seed, f, a->drained,
                    b->drained);
      ck_assert(a->mean_rate == b->mean_rate);
      ck_assert_int_eq(a->bottleneck, b->bottleneck);
    }
    for (guint c = 0; c < on.n_chans; c++) {
      ck_assert(con[c].volume == coff[c].volume);
      ck_assert_int_eq(con[c].busy, coff[c].busy);
      ck_assert_uint_eq(con[c].bytes, coff[c].bytes);
    }
    ck_assert_uint_eq(son.recomputations, soff.recomputations);
    ck_assert_uint_eq(son.recomputed_flows, soff.recomputed_flows);
    ck_assert_uint_eq(son.rate_changes, soff.rate_changes);
    ck_assert_uint_eq(soff.shares_skipped, 0);
    skipped += son.shares_skipped;
  }
  ck_assert_uint_gt(skipped, 0); /* the shortcut was taken */
}
END_TEST

START_TEST(test_flow_deterministic)
{
  static Scenario sc;
  static Record a, b;
  make_scenario(&sc, 99, 16, 400, FALSE);
  run_scenario(&sc, FS_NET_MAXMIN, FALSE, FALSE, &a, NULL);
  run_scenario(&sc, FS_NET_MAXMIN, FALSE, FALSE, &b, NULL);
  for (guint f = 0; f < sc.n_flows; f++) {
    ck_assert_int_eq(a.info[f].finish, b.info[f].finish);
    ck_assert_int_eq(a.info[f].bottleneck, b.info[f].bottleneck);
    ck_assert(a.info[f].mean_rate == b.info[f].mean_rate);
  }
}
END_TEST

START_TEST(test_flow_conservation_invariant)
{
  static Scenario sc;
  static Record rec;
  for (uint64_t seed = 50; seed < 55; seed++) {
    make_scenario(&sc, seed, 10, 200, FALSE);
    /* fs_flownet_check after every recomputation, and at the end. */
    run_scenario(&sc, FS_NET_MAXMIN, FALSE, TRUE, &rec, NULL);
    for (guint f = 0; f < sc.n_flows; f++) {
      /* No flow beats its own path's capacity or its cap. */
      const FsFlowInfo *i = &rec.info[f];
      double best = INFINITY;
      for (guint h = 0; h < sc.len[f]; h++)
        best = MIN(best, sc.cap[sc.path[f][h]]);
      if (sc.rcap[f] > 0)
        best = MIN(best, sc.rcap[f]);
      ck_assert(i->mean_rate <= best * (1 + 1e-9));
      ck_assert_int_eq(i->finish, i->drained + i->latency);
    }
  }
}
END_TEST

START_TEST(test_flow_analytic_equals_maxmin_without_sharing)
{
  static Scenario sc;
  static Record a, m;
  for (uint64_t seed = 1; seed <= 5; seed++) {
    make_scenario(&sc, seed, 0, 200, TRUE);
    run_scenario(&sc, FS_NET_ANALYTIC, FALSE, FALSE, &a, NULL);
    run_scenario(&sc, FS_NET_MAXMIN, FALSE, TRUE, &m, NULL);
    for (guint f = 0; f < sc.n_flows; f++) {
      ck_assert_int_eq(a.info[f].finish, m.info[f].finish);
      ck_assert_int_eq(a.info[f].bottleneck, m.info[f].bottleneck);
    }
  }
}
END_TEST

START_TEST(test_flow_analytic_ignores_sharing)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_ANALYTIC);
  ck_assert_int_eq(fs_flownet_model(net), FS_NET_ANALYTIC);
  FsChannelId ch = fs_flownet_add_channel(net, 1 * GBPS, 2 * FS_US);
  Record r = {0};
  start_flow(net, &r, 0, &ch, 1, MB, 0, 0);
  start_flow(net, &r, 1, &ch, 1, 2 * MB, 0, 0);
  start_flow(net, &r, 2, &ch, 1, MB, 0, 0.25 * GBPS);
  run(sim);
  ck_assert_int_eq(r.info[0].finish, 1 * FS_MS + 2 * FS_US);
  ck_assert_int_eq(r.info[1].finish, 2 * FS_MS + 2 * FS_US);
  ck_assert_int_eq(r.info[2].finish, 4 * FS_MS + 2 * FS_US);
  FsNetModel m;
  ck_assert(fs_net_model_from_name("analytic", &m) && m == FS_NET_ANALYTIC);
  ck_assert(fs_net_model_from_name("maxmin", &m) && m == FS_NET_MAXMIN);
  ck_assert(!fs_net_model_from_name("fluid", &m));
  ck_assert_str_eq(fs_net_model_name(FS_NET_ANALYTIC), "analytic");
}
END_TEST

/* Brute-force max-min fairness: raise every unfrozen flow together, one
 * bottleneck at a time, scanning all flows and channels each round. */
static void brute_force_rates(const Scenario *sc, const gboolean *active, double *rate)
{
  gboolean frozen[512] = {FALSE};
  double used[64] = {0};
  guint left = 0;
  for (guint f = 0; f < sc->n_flows; f++) {
    frozen[f] = active != NULL && !active[f];
    left += !frozen[f];
  }
  while (left > 0) {
    double level = INFINITY;
    for (guint c = 0; c < sc->n_chans; c++) {
      guint n = 0;
      for (guint f = 0; f < sc->n_flows; f++)
        for (guint h = 0; h < sc->len[f]; h++)
          n += !frozen[f] && sc->path[f][h] == c;
      if (n > 0)
        level = MIN(level, (sc->cap[c] - used[c]) / n);
    }
    for (guint f = 0; f < sc->n_flows; f++)
      if (!frozen[f] && sc->rcap[f] > 0)
        level = MIN(level, sc->rcap[f]);
    /* Freeze what this level saturates. */
    gboolean sat[64];
    for (guint c = 0; c < sc->n_chans; c++) {
      guint n = 0;
      for (guint f = 0; f < sc->n_flows; f++)
        for (guint h = 0; h < sc->len[f]; h++)
          n += !frozen[f] && sc->path[f][h] == c;
      sat[c] = n > 0 && (sc->cap[c] - used[c]) / n <= level * (1 + 1e-12);
    }
    for (guint f = 0; f < sc->n_flows; f++) {
      if (frozen[f])
        continue;
      gboolean fr = sc->rcap[f] > 0 && sc->rcap[f] <= level * (1 + 1e-12);
      for (guint h = 0; h < sc->len[f]; h++)
        fr |= sat[sc->path[f][h]];
      if (fr) {
        frozen[f] = TRUE;
        rate[f] = level;
        left--;
        for (guint h = 0; h < sc->len[f]; h++)
          used[sc->path[f][h]] += level;
      }
    }
  }
}

START_TEST(test_flow_rates_match_brute_force)
{
  static Scenario sc;
  for (uint64_t seed = 1; seed <= 30; seed++) {
    make_scenario(&sc, seed * 31, 12 + seed % 20, 60 + 5 * seed, FALSE);
    g_autoptr(FsSim) sim = fs_sim_new();
    g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
    for (guint c = 0; c < sc.n_chans; c++)
      fs_flownet_add_channel(net, sc.cap[c], 0);
    FsFlowId ids[512];
    Record rec = {0};
    for (guint f = 0; f < sc.n_flows; f++)
      ids[f] = start_flow(net, &rec, (int)f, sc.path[f], sc.len[f], 1 + sc.bytes[f], 0, sc.rcap[f]);
    double want[512];
    brute_force_rates(&sc, NULL, want);
    for (guint f = 0; f < sc.n_flows; f++) {
      FsFlowInfo info;
      ck_assert(fs_flownet_get_flow(net, ids[f], &info));
      ck_assert_msg(fabs(info.rate - want[f]) <= 1e-9 * want[f],
                    "seed %" G_GUINT64_FORMAT " flow %u: rate %.17g, brute force %.17g", seed, f,
                    info.rate, want[f]);
    }
    assert_check(net);
  }
}
END_TEST

START_TEST(test_flow_rates_match_brute_force_while_running)
{
  /* Flows come and go; at 40 instants the running flows' rates must be the
   * brute-force max-min rates of exactly the flows running then. */
  static Scenario sc;
  for (uint64_t seed = 1; seed <= 4; seed++) {
    make_scenario(&sc, seed * 77, 8 + 4 * seed, 400, FALSE);
    g_autoptr(FsSim) sim = fs_sim_new();
    g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
    fs_flownet_set_check(net, TRUE);
    for (guint c = 0; c < sc.n_chans; c++)
      fs_flownet_add_channel(net, sc.cap[c], sc.lat[c]);
    static FsFlowId ids[512];
    static Record rec;
    memset(&rec, 0, sizeof rec);
    for (guint f = 0; f < sc.n_flows; f++)
      ids[f] = start_flow(net, &rec, (int)f, sc.path[f], sc.len[f], 1 + sc.bytes[f],
                          FS_US + sc.start[f], sc.rcap[f]);
    for (int k = 1; k <= 40; k++) {
      GError *error = NULL;
      ck_assert(fs_sim_run_until(sim, (FsTime)k * 125 * FS_US, &error));
      fs_flownet_flush(net);
      gboolean active[512];
      double got[512], want[512];
      guint n_active = 0;
      for (guint f = 0; f < sc.n_flows; f++) {
        FsFlowInfo info;
        active[f] = fs_flownet_get_flow(net, ids[f], &info) && info.drained == 0 &&
                    info.start <= fs_sim_now(sim);
        got[f] = info.rate;
        n_active += active[f];
      }
      brute_force_rates(&sc, active, want);
      for (guint f = 0; f < sc.n_flows; f++)
        if (active[f])
          ck_assert_msg(fabs(got[f] - want[f]) <= 1e-9 * want[f],
                        "seed %" G_GUINT64_FORMAT " t=%d flow %u: rate %.17g, brute force %.17g",
                        seed, k, f, got[f], want[f]);
      if (seed == 1 && k == 8)
        ck_assert_uint_gt(n_active, 20); /* the scenario does overlap flows */
    }
    run(sim);
  }
}
END_TEST

/* A flow longer than the old 4,000,000 s cap finishes at its true time
 * (issue 21: `flows` reported rates above the link's); one past the
 * clock's range stops the run with the clock's range error. */
START_TEST(test_flow_long_transfer_exact_or_clock_error)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  FsChannelId ch = fs_flownet_add_channel(net, 1 * GBPS, 0);
  Record r = {0};
  /* 5e15 bytes at 1 GB/s: 5,000,000 s. */
  start_flow(net, &r, 0, &ch, 1, 5000000000000000ull, 0, 0);
  run(sim);
  ck_assert_int_eq(r.info[0].finish, 5000000 * FS_SEC);
  ck_assert(r.info[0].mean_rate == 1 * GBPS);
  /* The network is idle: the clock may start again at 0. */
  ck_assert(fs_flownet_rewind(net));
  ck_assert_int_eq(fs_sim_now(sim), 0);
  /* 1e16 bytes: 10,000,000 s, past the clock's 9,223,372 s. */
  start_flow(net, &r, 1, &ch, 1, 10000000000000000ull, 0, 0);
  ck_assert(!fs_flownet_rewind(net));
  g_autoptr(GError) error = NULL;
  ck_assert(!fs_sim_run(sim, &error));
  ck_assert(g_error_matches(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_CLOCK));
  ck_assert_int_eq(r.n, 1);
}
END_TEST

/* A flow of c copies gets what c identical flows get under max-min (and in
 * the analytic model): the same finish times, to rounding, with the copies'
 * counts in the channel counters and fs_flownet_check's invariants kept. */
START_TEST(test_flow_copies_equal_identical_flows)
{
  static Scenario sc;
  static Record one, many;
  static const guint pick[] = {1, 2, 3, 4, 8};
  for (uint64_t seed = 1; seed <= 8; seed++) {
    make_scenario(&sc, seed, 24, 300, FALSE);
    FsNetModel model = seed == 8 ? FS_NET_ANALYTIC : FS_NET_MAXMIN;
    FsRng rng;
    fs_rng_init(&rng, seed, 11);
    guint copies[512];
    for (guint f = 0; f < sc.n_flows; f++)
      copies[f] = pick[fs_rng_below(&rng, G_N_ELEMENTS(pick))];
    uint64_t units = 0;
    FsChannelStats st_one[24], st_many[24];
    for (int pass = 0; pass < 2; pass++) {
      g_autoptr(FsSim) sim = fs_sim_new();
      g_autoptr(FsFlowNet) net = fs_flownet_new(sim, model);
      fs_flownet_set_check(net, seed <= 2);
      for (guint c = 0; c < sc.n_chans; c++)
        fs_flownet_add_channel(net, sc.cap[c], sc.lat[c]);
      Record *r = pass == 0 ? &one : &many;
      memset(r, 0, sizeof *r);
      for (guint f = 0; f < sc.n_flows; f++) {
        if (pass == 0) {
          FsFlowSpec spec = {
            .src = (int)f, .dst = (int)f, .path = sc.path[f], .path_len = sc.len[f],
            .bytes = sc.bytes[f] * copies[f], .rate_cap = sc.rcap[f] * copies[f],
            .start = sc.start[f], .done = record_done, .ctx = r, .copies = copies[f],
          };
          ck_assert(fs_flownet_start(net, &spec) != FS_FLOW_NONE);
        } else {
          for (guint k = 0; k < copies[f]; k++)
            start_flow(net, r, (int)(f * 8 + k), sc.path[f], sc.len[f], sc.bytes[f],
                       sc.start[f], sc.rcap[f]);
        }
      }
      run(sim);
      assert_check(net);
      for (guint c = 0; c < sc.n_chans; c++)
        fs_flownet_channel_stats(net, c, pass == 0 ? &st_one[c] : &st_many[c]);
    }
    for (guint f = 0; f < sc.n_flows; f++) {
      units += copies[f];
      for (guint k = 0; k < copies[f]; k++) {
        FsTime a = one.info[f].finish, b = many.info[f * 8 + k].finish;
        ck_assert_msg(llabs(a - b) <= 16 + (FsTime)(1e-12 * (double)b),
                      "seed %" G_GUINT64_FORMAT " flow %u (%u copies): %" G_GINT64_FORMAT
                      " ps as one flow, %" G_GINT64_FORMAT " ps as copies", seed, f, copies[f],
                      a, b);
      }
      ck_assert_uint_eq(one.info[f].bytes, sc.bytes[f] * copies[f]);
    }
    ck_assert_uint_eq(many.n, units);
    for (guint c = 0; c < sc.n_chans; c++) {
      ck_assert_uint_eq(st_one[c].flows_done, st_many[c].flows_done);
      ck_assert_uint_eq(st_one[c].bytes, st_many[c].bytes);
      ck_assert_uint_eq(st_one[c].peak_flows, st_many[c].peak_flows);
    }
  }
}
END_TEST

START_TEST(test_flow_watch_peak_of_summed_loads)
{
  /* Two channels of 1 GB/s, a flow on each, the second starting later and
   * lasting longer: the watch of both (the first counted twice) peaks at
   * 3 GB/s while they overlap, the watch of the second alone at 1 GB/s. */
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  FsChannelId a = fs_flownet_add_channel(net, 1 * GBPS, 0);
  FsChannelId b = fs_flownet_add_channel(net, 1 * GBPS, 0);
  const FsChannelId both[3] = {a, b, a};
  ck_assert_uint_eq(fs_flownet_watch_add(net, both, 3), 0);
  ck_assert_uint_eq(fs_flownet_watch_add(net, &b, 1), 1);
  Record r = {0};
  start_flow(net, &r, 0, &a, 1, 2 * MB, 0, 0);
  start_flow(net, &r, 1, &b, 1, 2 * MB, 1 * FS_MS, 0);
  run(sim);
  ck_assert(fs_flownet_watch_peak(net, 0) == 3 * GBPS);
  ck_assert(fs_flownet_watch_peak(net, 1) == 1 * GBPS);
  fs_flownet_watch_clear(net);
  /* Cleared: a new watch starts from nothing. */
  ck_assert_uint_eq(fs_flownet_watch_add(net, &b, 1), 0);
  ck_assert(fs_flownet_watch_peak(net, 0) == 0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("flow");
  FS_ADD_TEST(s, test_flow_two_flows_share_fairly);
  FS_ADD_TEST(s, test_flow_end_frees_bandwidth_exactly);
  FS_ADD_TEST(s, test_flow_late_start_slows_running_flow);
  FS_ADD_TEST(s, test_flow_parking_lot);
  FS_ADD_TEST(s, test_flow_parking_lot_unequal_links);
  FS_ADD_TEST(s, test_flow_cap_frees_bandwidth);
  FS_ADD_TEST(s, test_flow_latency_added);
  FS_ADD_TEST(s, test_flow_zero_bytes);
  FS_ADD_TEST(s, test_flow_empty_path);
  FS_ADD_TEST(s, test_flow_rounds_up_to_the_picosecond);
  FS_ADD_TEST(s, test_flow_counters);
  FS_ADD_TEST(s, test_flow_stale_id);
  FS_ADD_TEST(s, test_flow_callback_starts_next);
  FS_ADD_TEST(s, test_flow_drained_callback);
  FS_ADD_TEST(s, test_flow_drained_starts_next);
  FS_ADD_TEST(s, test_flow_drained_zero_bytes);
  FS_ADD_TEST(s, test_flow_drained_copies);
  FS_ADD_TEST(s, test_flow_recomputes_only_the_component);
  FS_ADD_TEST(s, test_flow_incremental_equals_global);
  FS_ADD_TEST(s, test_flow_fill_shortcut_is_exact);
  FS_ADD_TEST(s, test_flow_deterministic);
  FS_ADD_TEST(s, test_flow_conservation_invariant);
  FS_ADD_TEST(s, test_flow_analytic_equals_maxmin_without_sharing);
  FS_ADD_TEST(s, test_flow_analytic_ignores_sharing);
  FS_ADD_TEST(s, test_flow_rates_match_brute_force);
  FS_ADD_TEST(s, test_flow_rates_match_brute_force_while_running);
  FS_ADD_TEST(s, test_flow_long_transfer_exact_or_clock_error);
  FS_ADD_TEST(s, test_flow_copies_equal_identical_flows);
  FS_ADD_TEST(s, test_flow_watch_peak_of_summed_loads);
  return fs_test_run_suite(s);
}
