/* p2p.c — simulated p2pBandwidthLatencyTest / nvbandwidth.  Contract in
 * p2p.h. */
#include "net/p2p.h"

#include "core/sim.h"
#include "util/error.h"

typedef struct {
  const FsTopo *topo;
  FsSim *sim;
  FsFlowNet *net;
  FsRouter *router;
  FsTime last_finish;
  guint done;
} Bench;

static void on_done(void *ctx, const FsFlowInfo *info)
{
  Bench *b = ctx;
  b->last_finish = MAX(b->last_finish, info->finish);
  b->done++;
}

/* Runs transfers src[i] → dst[i] of bytes each, all from a rewound clock,
 * to the end.  *t: the time until the last byte landed, or -1 without a
 * route.  FALSE when the run stops (the clock's range, an interrupt). */
static gboolean measure(Bench *b, const guint *src, const guint *dst, guint n, uint64_t bytes,
                        FsTime *t, GError **error)
{
  /* Each measurement is alone on the network and gets the whole clock. */
  gboolean idle = fs_flownet_rewind(b->net);
  g_assert(idle);
  FsTime t0 = fs_sim_now(b->sim);
  b->last_finish = t0;
  b->done = 0;
  *t = -1;
  for (guint i = 0; i < n; i++)
    if (!fs_router_transfer(b->router, src[i], dst[i], bytes, t0, 0, i, on_done, b, NULL, NULL))
      /* Let the transfers already started finish, so the next measurement
       * finds an empty network. */
      return fs_sim_run(b->sim, error);
  GError *e = NULL;
  if (!fs_sim_run(b->sim, &e)) {
    if (!g_error_matches(e, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_CLOCK)) {
      g_propagate_error(error, e);
      return FALSE;
    }
    g_error_free(e);
    g_autofree char *size = fs_format_size(bytes);
    return fs_set_clock_range_error(error, "a transfer of %s from %s to %s would end past the "
                                    "clock's end; measure fewer bytes", size,
                                    fs_topo_node(b->topo, src[0])->name,
                                    fs_topo_node(b->topo, dst[0])->name);
  }
  g_assert(b->done == n);
  *t = b->last_finish - t0;
  return TRUE;
}

static double gbps(double bytes, FsTime t)
{
  return t < 0 ? -1 : t > 0 ? bytes * 1e12 / (double)t / 1e9 : 0;
}

FsP2pResult *fs_p2p_measure(const FsTopo *topo, FsNetModel model, const FsRouteOptions *opt,
                            uint64_t bytes, guint max_gpus, GError **error)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, model);
  g_autoptr(FsRouter) router = fs_router_new(topo, net, opt);
  return fs_p2p_measure_on(router, bytes, max_gpus, error);
}

/* See p2p.h. On router's simulator and flow network (each measurement on an empty network, the
 * clock rewound), simulates for each ordered GPU pair with a route a one-way and a two-way
 * transfer of bytes and a 4-byte one for latency, then host-to-device and device-to-host
 * transfers between each GPU and its nearest CPU, and all GPUs fed from their CPUs at once.
 * Entries without a route stay -1. The result belongs to the caller (fs_p2p_result_free); the
 * cost is 3·n² + 2n + 1 short simulations. */
FsP2pResult *fs_p2p_measure_on(FsRouter *router, uint64_t bytes, guint max_gpus, GError **error)
{
  g_return_val_if_fail(router != NULL && bytes > 0, NULL);
  const FsTopo *topo = fs_router_topo(router);
  FsFlowNet *net = fs_router_net(router);
  FsSim *sim = fs_flownet_sim(net);
  guint ng;
  const guint *gpus = fs_topo_gpus(topo, &ng);
  if (max_gpus > 0)
    ng = MIN(ng, max_gpus);
  FsP2pResult *r = g_new0(FsP2pResult, 1);
  r->n = ng;
  r->gpus = g_memdup2(gpus, sizeof(guint) * MAX(ng, 1));
  guint nn = MAX(ng * ng, 1);
  r->uni_gbps = g_new(double, nn);
  r->bi_gbps = g_new(double, nn);
  r->latency_us = g_new(double, nn);
  r->kind = g_new0(FsRouteKind, nn);
  r->routed = g_new0(gboolean, nn);
  r->cpu = g_new(int, MAX(ng, 1));
  r->h2d_gbps = g_new(double, MAX(ng, 1));
  r->d2h_gbps = g_new(double, MAX(ng, 1));

  Bench b = {topo, sim, net, router, 0, 0};
  FsRoute route;
  fs_route_init(&route);
  for (guint i = 0; i < ng; i++)
    for (guint j = 0; j < ng; j++) {
      guint k = i * ng + j;
      r->uni_gbps[k] = r->bi_gbps[k] = r->latency_us[k] = -1;
      if (i == j || !fs_router_route(router, gpus[i], gpus[j], 0, &route, NULL))
        continue;
      r->routed[k] = TRUE;
      r->kind[k] = route.kind;
      guint s[2] = {gpus[i], gpus[j]}, d[2] = {gpus[j], gpus[i]};
      FsTime tu, tb, tl;
      if (!measure(&b, s, d, 1, bytes, &tu, error) || !measure(&b, s, d, 2, bytes, &tb, error) ||
          !measure(&b, s, d, 1, 4, &tl, error)) {
        fs_route_clear(&route);
        fs_p2p_result_free(r);
        return NULL;
      }
      r->uni_gbps[k] = gbps((double)bytes, tu);
      r->bi_gbps[k] = gbps(2.0 * (double)bytes, tb);
      r->latency_us[k] = tl < 0 ? -1 : fs_time_to_us(tl);
    }
  fs_route_clear(&route);

  g_autofree guint *src = g_new(guint, MAX(ng, 1));
  g_autofree guint *dst = g_new(guint, MAX(ng, 1));
  guint n_host = 0;
  for (guint i = 0; i < ng; i++) {
    r->cpu[i] = fs_router_nearest_cpu(router, gpus[i]);
    r->h2d_gbps[i] = r->d2h_gbps[i] = -1;
    if (r->cpu[i] < 0)
      continue;
    guint c = (guint)r->cpu[i];
    FsTime th, td;
    if (!measure(&b, &c, &gpus[i], 1, bytes, &th, error) ||
        !measure(&b, &gpus[i], &c, 1, bytes, &td, error)) {
      fs_p2p_result_free(r);
      return NULL;
    }
    r->h2d_gbps[i] = gbps((double)bytes, th);
    r->d2h_gbps[i] = gbps((double)bytes, td);
    if (r->h2d_gbps[i] >= 0) {
      src[n_host] = c;
      dst[n_host++] = gpus[i];
    }
  }
  r->h2d_all_gpus = n_host;
  r->h2d_all_gbps = -1;
  if (n_host > 0) {
    FsTime ta;
    if (!measure(&b, src, dst, n_host, bytes, &ta, error)) {
      fs_p2p_result_free(r);
      return NULL;
    }
    /* The bytes in total as a double: n_host × bytes may pass 2^64. */
    r->h2d_all_gbps = gbps((double)n_host * (double)bytes, ta);
  }
  return r;
}

void fs_p2p_result_free(FsP2pResult *r)
{
  if (r == NULL)
    return;
  g_free(r->gpus);
  g_free(r->uni_gbps);
  g_free(r->bi_gbps);
  g_free(r->latency_us);
  g_free(r->kind);
  g_free(r->routed);
  g_free(r->cpu);
  g_free(r->h2d_gbps);
  g_free(r->d2h_gbps);
  g_free(r);
}
