/* bench-flows.c — speed and memory of the flow engine (src/net/flow.h) on a
 * synthetic two-level fat-tree of channels (no topology file needed).
 *
 *   bench-flows random [FLOWS] [ENDPOINTS]     Poisson arrivals, random pairs
 *   bench-flows alltoall [ENDPOINTS] [BYTES]   every ordered pair, in waves
 *   bench-flows cluster FILE NODES [FLOWS]      a topology file with -D
 *                                               nodes=NODES: FLOWS random GPU
 *                                               pairs routed (NCCL transports,
 *                                               ECMP) and replayed
 *   options (after the scenario's arguments):
 *     --model analytic    the alpha-beta model instead of max-min
 *     --pipelined         all-to-all: each source starts its next send when
 *                         its previous one finishes (default: waves with a
 *                         barrier, wave k = shift by k, as NCCL's grouped
 *                         send/recv over one peer per step)
 *     --hash              route inter-leaf flows over a spine chosen by an
 *                         ECMP hash of (src, dst) instead of D-mod-k
 *
 * The fabric: ENDPOINTS hosts in leaves of L = sqrt(ENDPOINTS) hosts (a
 * power of two), L spines, one 50 GB/s channel per direction between a host
 * and its leaf and between every leaf and every spine (full bisection), 500
 * ns per hop.  A flow inside a leaf crosses 2 channels, across leaves 4.
 * These numbers are a synthetic load for the engine, not hardware figures.
 *
 * Prints one line: scenario, flows, simulated time, wall time, flows/s,
 * recomputations, mean and largest component, peak RSS.  Exit status 1 if
 * a flow did not finish.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "catalog/catalog.h"
#include "core/rng.h"
#include "core/sim.h"
#include "net/flow.h"
#include "net/route.h"
#include "topo/topo.h"

#define LINK_BW 50e9
#define HOP_LAT (500 * FS_NS)

typedef struct {
  FsSim *sim;
  FsFlowNet *net;
  guint n, leaf_size, n_leaves, n_spines;
  FsChannelId up0, down0, ls0, sl0; /* first channel of each group */
  gboolean hash;
  /* all-to-all state */
  uint64_t bytes;
  guint wave, waves;
  guint in_wave;
  guint *next_peer;                 /* pipelined: per source */
  uint64_t finished;
} Bench;

static void build_fabric(Bench *b, guint n)
{
  b->n = n;
  guint l = 1;
  while (l * l < n)
    l *= 2;
  b->leaf_size = l;
  b->n_leaves = (n + l - 1) / l;
  b->n_spines = l;
  b->up0 = fs_flownet_n_channels(b->net);
  for (guint i = 0; i < n; i++)
    fs_flownet_add_channel(b->net, LINK_BW, HOP_LAT);
  b->down0 = fs_flownet_n_channels(b->net);
  for (guint i = 0; i < n; i++)
    fs_flownet_add_channel(b->net, LINK_BW, HOP_LAT);
  b->ls0 = fs_flownet_n_channels(b->net);
  for (guint i = 0; i < b->n_leaves * b->n_spines; i++)
    fs_flownet_add_channel(b->net, LINK_BW, HOP_LAT);
  b->sl0 = fs_flownet_n_channels(b->net);
  for (guint i = 0; i < b->n_leaves * b->n_spines; i++)
    fs_flownet_add_channel(b->net, LINK_BW, HOP_LAT);
}

static guint route(const Bench *b, guint src, guint dst, FsChannelId *path)
{
  guint ls = src / b->leaf_size, ld = dst / b->leaf_size;
  if (ls == ld) {
    path[0] = b->up0 + src;
    path[1] = b->down0 + dst;
    return 2;
  }
  guint spine = b->hash ? (guint)(fs_hash64(((uint64_t)src << 32) | dst) % b->n_spines)
                        : dst % b->n_spines; /* D-mod-k */
  path[0] = b->up0 + src;
  path[1] = b->ls0 + ls * b->n_spines + spine;
  path[2] = b->sl0 + ld * b->n_spines + spine;
  path[3] = b->down0 + dst;
  return 4;
}

static void count_done(void *ctx, const FsFlowInfo *info)
{
  (void)info;
  ((Bench *)ctx)->finished++;
}

static void start(Bench *b, guint src, guint dst, uint64_t bytes, FsTime at, FsFlowDoneFn fn)
{
  FsChannelId path[4];
  FsFlowSpec spec = {.src = (int32_t)src, .dst = (int32_t)dst, .bytes = bytes, .start = at,
                     .done = fn, .ctx = b};
  spec.path = path;
  spec.path_len = route(b, src, dst, path);
  fs_flownet_start(b->net, &spec);
}

/* ---- all-to-all ---- */

static void wave_done(void *ctx, const FsFlowInfo *info);

static void start_wave(Bench *b)
{
  b->in_wave = b->n;
  for (guint i = 0; i < b->n; i++)
    start(b, i, (i + b->wave) % b->n, b->bytes, fs_sim_now(b->sim), wave_done);
}

static void wave_done(void *ctx, const FsFlowInfo *info)
{
  (void)info;
  Bench *b = ctx;
  b->finished++;
  if (--b->in_wave == 0 && ++b->wave <= b->waves)
    start_wave(b);
}

static void peer_done(void *ctx, const FsFlowInfo *info)
{
  Bench *b = ctx;
  b->finished++;
  guint src = (guint)info->src;
  if (++b->next_peer[src] < b->n)
    start(b, src, (src + b->next_peer[src]) % b->n, b->bytes, fs_sim_now(b->sim), peer_done);
}

static long peak_rss_kib(void);

/* The cluster scenario: routes and replays random GPU pairs on a real
 * topology.  Returns the exit status. */
static int run_cluster(const char *file, guint nodes, guint flows, FsNetModel model)
{
  GError *error = NULL;
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(NULL, &error);
  if (cat == NULL) {
    fprintf(stderr, "bench-flows: %s\n", error->message);
    return 1;
  }
  g_autofree char *def = g_strdup_printf("nodes=%u", nodes);
  const char *defs[] = {def, NULL};
  gint64 t0 = g_get_monotonic_time();
  g_autoptr(FsTopo) t = fs_topo_load_file(file, cat, defs, &error);
  if (t == NULL) {
    fprintf(stderr, "bench-flows: %s\n", error->message);
    return 1;
  }
  gint64 t1 = g_get_monotonic_time();
  Bench b = {0};
  b.sim = fs_sim_new();
  b.net = fs_flownet_new(b.sim, model);
  FsRouter *r = fs_router_new(t, b.net, NULL);
  guint ng;
  const guint *gpus = fs_topo_gpus(t, &ng);
  FsRng rng;
  fs_rng_init(&rng, 1, 2);
  /* Offered load: a quarter of a 50 GB/s NIC per GPU, 1 MB flows. */
  double arrivals_per_s = ng * 50e9 * 0.25 / 1e6, at = 0;
  for (guint f = 0; f < flows; f++) {
    at += fs_rng_exp(&rng, 1.0 / arrivals_per_s);
    guint a = (guint)fs_rng_below(&rng, ng), d = (guint)fs_rng_below(&rng, ng - 1);
    d += d >= a;
    if (!fs_router_transfer(r, gpus[a], gpus[d], 1 + (uint64_t)fs_rng_exp(&rng, 1e6),
                            fs_time_from_s(at), 0, f, count_done, &b, NULL, &error)) {
      fprintf(stderr, "bench-flows: %s\n", error->message);
      return 1;
    }
  }
  gint64 t2 = g_get_monotonic_time();
  if (!fs_sim_run(b.sim, &error)) {
    fprintf(stderr, "bench-flows: %s\n", error->message);
    return 1;
  }
  gint64 t3 = g_get_monotonic_time();
  FsFlowNetStats st;
  fs_flownet_stats(b.net, &st);
  printf("cluster %s nodes=%u gpus=%u model=%s transfers=%u flows=%" G_GUINT64_FORMAT
         " load=%.2f s route=%.2f s run=%.2f s sim=%.3f ms mean_component=%.1f peak_rss=%.0f MiB\n",
         file, nodes, ng, fs_net_model_name(model), flows, st.flows_finished,
         (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6, (double)(t3 - t2) / 1e6,
         fs_time_to_s(fs_sim_now(b.sim)) * 1e3,
         st.recomputations ? (double)st.recomputed_flows / (double)st.recomputations : 0.0,
         (double)peak_rss_kib() / 1024.0);
  guint done = (guint)b.finished;
  fs_router_free(r);
  fs_flownet_free(b.net);
  fs_sim_free(b.sim);
  return done == flows ? 0 : 1;
}

static long peak_rss_kib(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
  const char *scenario = argc > 1 ? argv[1] : "random";
  if (strcmp(scenario, "cluster") == 0) {
    if (argc < 4) {
      fprintf(stderr, "bench-flows: cluster FILE NODES [FLOWS] [--model analytic]\n");
      return 2;
    }
    FsNetModel m = FS_NET_MAXMIN;
    guint flows = 100000;
    for (int i = 4; i < argc; i++) {
      if (strcmp(argv[i], "--model") == 0 && i + 1 < argc)
        fs_net_model_from_name(argv[++i], &m);
      else
        flows = (guint)g_ascii_strtoull(argv[i], NULL, 10);
    }
    return run_cluster(argv[2], (guint)g_ascii_strtoull(argv[3], NULL, 10), flows, m);
  }
  FsNetModel model = FS_NET_MAXMIN;
  gboolean pipelined = FALSE, hash = FALSE;
  guint64 nums[2] = {0, 0};
  guint n_nums = 0;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
      if (!fs_net_model_from_name(argv[++i], &model)) {
        fprintf(stderr, "bench-flows: unknown model %s\n", argv[i]);
        return 2;
      }
    } else if (strcmp(argv[i], "--pipelined") == 0) {
      pipelined = TRUE;
    } else if (strcmp(argv[i], "--hash") == 0) {
      hash = TRUE;
    } else if (n_nums < 2) {
      nums[n_nums++] = g_ascii_strtoull(argv[i], NULL, 10);
    } else {
      fprintf(stderr, "bench-flows: unexpected argument %s\n", argv[i]);
      return 2;
    }
  }

  Bench b = {0};
  b.sim = fs_sim_new();
  b.net = fs_flownet_new(b.sim, model);
  b.hash = hash;
  uint64_t expect;
  gint64 t0 = g_get_monotonic_time();
  if (strcmp(scenario, "random") == 0) {
    guint flows = nums[0] ? (guint)nums[0] : 100000;
    guint n = nums[1] ? (guint)nums[1] : 1024;
    build_fabric(&b, n);
    /* Offered load: half of every host's link, flows of 1 MB on average
     * (exponential, at least 1 byte). */
    FsRng rng;
    fs_rng_init(&rng, 1, 1);
    double mean_size = 1e6;
    double arrivals_per_s = n * LINK_BW * 0.5 / mean_size;
    double t = 0;
    for (guint f = 0; f < flows; f++) {
      t += fs_rng_exp(&rng, 1.0 / arrivals_per_s);
      guint src = (guint)fs_rng_below(&rng, n), dst = (guint)fs_rng_below(&rng, n - 1);
      dst += dst >= src;
      uint64_t bytes = 1 + (uint64_t)fs_rng_exp(&rng, mean_size);
      start(&b, src, dst, bytes, fs_time_from_s(t), count_done);
    }
    expect = flows;
  } else if (strcmp(scenario, "alltoall") == 0) {
    guint n = nums[0] ? (guint)nums[0] : 4096;
    b.bytes = nums[1] ? nums[1] : 1000000;
    build_fabric(&b, n);
    expect = (uint64_t)n * (n - 1);
    if (pipelined) {
      b.next_peer = g_new(guint, n);
      for (guint i = 0; i < n; i++) {
        b.next_peer[i] = 1;
        start(&b, i, (i + 1) % n, b.bytes, 0, peer_done);
      }
    } else {
      b.wave = 1;
      b.waves = n - 1;
      start_wave(&b);
    }
  } else {
    fprintf(stderr, "bench-flows: unknown scenario %s (random or alltoall)\n", scenario);
    return 2;
  }

  GError *error = NULL;
  if (!fs_sim_run(b.sim, &error)) {
    fprintf(stderr, "bench-flows: %s\n", error->message);
    return 1;
  }
  double wall = (double)(g_get_monotonic_time() - t0) / 1e6;
  FsFlowNetStats st;
  fs_flownet_stats(b.net, &st);
  printf("%s%s%s model=%s endpoints=%u flows=%" G_GUINT64_FORMAT " sim=%.3f ms wall=%.2f s "
         "flows/s=%.0f events=%" G_GUINT64_FORMAT " recomputations=%" G_GUINT64_FORMAT
         " mean_component=%.1f max_component=%u rate_changes=%" G_GUINT64_FORMAT " peak_rss=%.0f MiB\n",
         scenario, pipelined ? " pipelined" : "", hash ? " hash" : "", fs_net_model_name(model),
         b.n, b.finished, fs_time_to_s(fs_sim_now(b.sim)) * 1e3, wall, (double)b.finished / wall,
         fs_sim_events_run(b.sim), st.recomputations,
         st.recomputations ? (double)st.recomputed_flows / (double)st.recomputations : 0.0,
         st.max_component, st.rate_changes, (double)peak_rss_kib() / 1024.0);
  fs_flownet_free(b.net);
  fs_sim_free(b.sim);
  g_free(b.next_peer);
  return b.finished == expect ? 0 : 1;
}
