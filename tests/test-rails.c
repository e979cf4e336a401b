/* test-rails.c — rails and adaptive routing (src/net/route.h): which NIC a
 * host-to-host transfer leaves through under NCCL_CROSS_NIC and
 * NCCL_PXN_DISABLE, PXN over NVLink, adaptive routing's equal split over the
 * spines, the topology's `routing:` field and -D routing, and the rings'
 * description with their NICs (collrun/coll-topo.h), and the step
 * extrapolation of rail-aligned rings (collrun/alone.h: a period of one
 * host's ranks). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"
#include "collrun/alone.h"
#include "collrun/bench.h"
#include "collrun/coll-topo.h"
#include "core/sim.h"
#include "net/route.h"
#include "testutil.h"
#include "topo/topo.h"

static guint node(const FsTopo *t, const char *name)
{
  int i = fs_topo_find(t, name);
  ck_assert_msg(i >= 0, "no node %s", name);
  return (guint)i;
}

/* A router over t with cross_nic and pxn_disable set (the environment's
 * values replaced). */
typedef struct {
  FsSim *sim;
  FsFlowNet *net;
  FsRouter *r;
} World;

static void world_init(World *w, const FsTopo *t, guint cross_nic, gboolean pxn_disable)
{
  FsRouteOptions o;
  fs_route_options_init(&o);
  o.cross_nic = cross_nic;
  o.pxn_disable = pxn_disable;
  w->sim = fs_sim_new();
  w->net = fs_flownet_new(w->sim, FS_NET_MAXMIN);
  w->r = fs_router_new(t, w->net, &o);
}

static void world_clear(World *w)
{
  fs_router_free(w->r);
  fs_flownet_free(w->net);
  fs_sim_free(w->sim);
}

/* TRUE when some path of the route crosses node `through`. */
static gboolean route_crosses(const FsTopo *t, const FsRoute *route, guint through)
{
  for (guint p = 0; p < route->n_paths; p++) {
    guint len;
    const FsChannelId *path = fs_route_path(route, p, &len);
    for (guint h = 0; h < len; h++)
      if (fs_topo_channel_dst(t, path[h]) == through)
        return TRUE;
  }
  return FALSE;
}

/* How many paths of the route cross a switch named like "ib/spine". */
static guint paths_via_spines(const FsTopo *t, const FsRoute *route)
{
  guint n = 0;
  for (guint p = 0; p < route->n_paths; p++) {
    guint len;
    const FsChannelId *path = fs_route_path(route, p, &len);
    for (guint h = 0; h < len; h++)
      if (strstr(fs_topo_node(t, fs_topo_channel_dst(t, path[h]))->name, "spine") != NULL) {
        n++;
        break;
      }
  }
  return n;
}

START_TEST(test_rails_default_uses_the_destination_rail_through_pxn)
{
  /* NCCL_CROSS_NIC=2 with PXN: gpu7 of node0 sends to gpu0 of node1 through
   * node0's nic0 (rail 0), reached over NVLink through node0/gpu0. */
  const char *defs[] = {"nodes=2", NULL};
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100-ib-ndr", defs, NULL);
  World w;
  world_init(&w, t, 2, FALSE);
  guint a = node(t, "node0/gpu7"), b = node(t, "node1/gpu0");
  int sn, rn, proxy;
  ck_assert(fs_router_net_nics(w.r, a, b, &sn, &rn, &proxy));
  ck_assert_int_eq(sn, (int)node(t, "node0/nic0"));
  ck_assert_int_eq(rn, (int)node(t, "node1/nic0"));
  ck_assert_int_eq(proxy, (int)node(t, "node0/gpu0"));
  FsRoute route;
  fs_route_init(&route);
  GError *error = NULL;
  ck_assert(fs_router_route(w.r, a, b, 0, &route, &error));
  fs_assert_no_error(error);
  ck_assert_int_eq(route.kind, FS_ROUTE_NET_GDR);
  ck_assert_uint_eq(route.n_paths, 1); /* one NVLink plane to the proxy (route.c, one_path) */
  ck_assert(route_crosses(t, &route, node(t, "node0/gpu0")));
  ck_assert(!route_crosses(t, &route, node(t, "node0/nic7")));
  ck_assert_uint_eq(paths_via_spines(t, &route), 0);
  double sum = 0;
  for (guint p = 0; p < route.n_paths; p++)
    sum += g_array_index(route.weights, double, p);
  ck_assert(fabs(sum - 1) < 1e-12);
  /* Same host or same rail: nothing changes. */
  ck_assert(!fs_router_net_nics(w.r, a, node(t, "node0/gpu0"), &sn, &rn, &proxy));
  ck_assert(fs_router_net_nics(w.r, node(t, "node0/gpu3"), node(t, "node1/gpu3"), &sn, &rn, &proxy));
  ck_assert_int_eq(proxy, (int)node(t, "node0/gpu3"));
  /* A rail NIC on the sender's own PCIe switch (gpu1 and nic0 share
   * pcie0): used directly, no NVLink leg (NCCL relays only past a CPU). */
  ck_assert(fs_router_net_nics(w.r, node(t, "node0/gpu1"), b, &sn, &rn, &proxy));
  ck_assert_int_eq(sn, (int)node(t, "node0/nic0"));
  ck_assert_int_eq(proxy, (int)node(t, "node0/gpu1"));
  ck_assert(fs_router_route(w.r, node(t, "node0/gpu1"), b, 0, &route, &error));
  ck_assert_uint_eq(route.n_paths, 1);
  ck_assert(!route_crosses(t, &route, node(t, "node0/gpu0")));
  ck_assert(route_crosses(t, &route, node(t, "node0/nic0")));
  fs_route_clear(&route);
  world_clear(&w);
}
END_TEST

START_TEST(test_rails_cross_nic_and_pxn_disable)
{
  const char *defs[] = {"nodes=2", NULL};
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100-ib-ndr", defs, NULL);
  guint a = node(t, "node0/gpu7"), b = node(t, "node1/gpu0");
  int sn, rn, proxy;
  FsRoute route;
  fs_route_init(&route);
  GError *error = NULL;
  /* NCCL_CROSS_NIC=1: the sender's own NIC; rail 7 to rail 0 over a spine. */
  World w;
  world_init(&w, t, 1, FALSE);
  ck_assert(fs_router_net_nics(w.r, a, b, &sn, &rn, &proxy));
  ck_assert_int_eq(sn, (int)node(t, "node0/nic7"));
  ck_assert_int_eq(proxy, (int)a);
  ck_assert(fs_router_route(w.r, a, b, 0, &route, &error));
  ck_assert_uint_eq(route.n_paths, 1);
  ck_assert_uint_eq(paths_via_spines(t, &route), 1);
  world_clear(&w);
  /* NCCL_PXN_DISABLE=1 with the default NCCL_CROSS_NIC=2: own NIC as well. */
  world_init(&w, t, 2, TRUE);
  ck_assert(fs_router_net_nics(w.r, a, b, &sn, &rn, &proxy));
  ck_assert_int_eq(sn, (int)node(t, "node0/nic7"));
  world_clear(&w);
  /* NCCL_CROSS_NIC=0 without PXN: rail 0's NIC over PCIe, through the CPU
   * (gpu7 and nic0 are on different sockets), no NVLink. */
  world_init(&w, t, 0, TRUE);
  ck_assert(fs_router_net_nics(w.r, a, b, &sn, &rn, &proxy));
  ck_assert_int_eq(sn, (int)node(t, "node0/nic0"));
  ck_assert_int_eq(proxy, -1);
  ck_assert(fs_router_route(w.r, a, b, 0, &route, &error));
  fs_assert_no_error(error);
  ck_assert_uint_eq(route.n_paths, 1);
  ck_assert(!route_crosses(t, &route, node(t, "node0/gpu0")));
  ck_assert(route_crosses(t, &route, node(t, "node0/cpu1")));
  ck_assert_int_eq(route.kind, FS_ROUTE_NET_STAGED);
  ck_assert_uint_eq(paths_via_spines(t, &route), 0);
  world_clear(&w);
  fs_route_clear(&route);
}
END_TEST

START_TEST(test_rails_options_from_the_environment)
{
  FsRouteOptions o;
  GError *error = NULL;
  g_setenv("NCCL_CROSS_NIC", "0", TRUE);
  g_setenv("NCCL_PXN_DISABLE", "1", TRUE);
  fs_route_options_init(&o);
  ck_assert_uint_eq(o.cross_nic, 0);
  ck_assert(o.pxn_disable);
  ck_assert(fs_route_options_check_env(&error));
  g_setenv("NCCL_CROSS_NIC", "3", TRUE);
  fs_route_options_init(&o);
  ck_assert_uint_eq(o.cross_nic, 2); /* a bad value leaves the default here */
  ck_assert(!fs_route_options_check_env(&error));
  ck_assert_msg(strstr(error->message, "NCCL_CROSS_NIC=3") != NULL, "%s", error->message);
  g_clear_error(&error);
  g_setenv("NCCL_CROSS_NIC", "1", TRUE);
  g_setenv("NCCL_PXN_DISABLE", "yes", TRUE);
  ck_assert(!fs_route_options_check_env(&error));
  ck_assert_msg(strstr(error->message, "NCCL_PXN_DISABLE") != NULL, "%s", error->message);
  g_clear_error(&error);
  g_unsetenv("NCCL_CROSS_NIC");
  g_unsetenv("NCCL_PXN_DISABLE");
  fs_route_options_init(&o);
  ck_assert_uint_eq(o.cross_nic, 2);
  ck_assert(!o.pxn_disable);
}
END_TEST

START_TEST(test_rails_adaptive_splits_over_every_spine)
{
  /* Rail 7 to rail 0 (NCCL_CROSS_NIC=1) goes leaf → spine → leaf: static
   * routing takes one spine, adaptive routing all of them, evenly, and the
   * route does not depend on the key. */
  const char *stat[] = {"nodes=2", NULL}, *adap[] = {"nodes=2", "routing=adaptive", NULL};
  g_autoptr(FsTopo) ts = fs_test_topo("dgx-h100-ib-ndr", stat, NULL);
  g_autoptr(FsTopo) ta = fs_test_topo("dgx-h100-ib-ndr", adap, NULL);
  ck_assert_int_eq(fs_topo_routing(ts), FS_TOPO_ROUTING_STATIC);
  ck_assert_int_eq(fs_topo_routing(ta), FS_TOPO_ROUTING_ADAPTIVE);
  World w;
  FsRoute route;
  fs_route_init(&route);
  GError *error = NULL;
  world_init(&w, ta, 1, FALSE);
  guint a = node(ta, "node0/gpu7"), b = node(ta, "node1/gpu0");
  ck_assert(fs_router_route(w.r, a, b, 7, &route, &error));
  fs_assert_no_error(error);
  guint spines = 0;
  for (guint i = 0; i < fs_topo_n_nodes(ta); i++)
    spines += strstr(fs_topo_node(ta, i)->name, "ib/spine") != NULL;
  ck_assert_uint_ge(spines, 2);
  ck_assert_uint_eq(route.n_paths, spines);
  ck_assert_uint_eq(paths_via_spines(ta, &route), spines);
  for (guint p = 0; p < route.n_paths; p++)
    ck_assert(fabs(g_array_index(route.weights, double, p) - 1.0 / spines) < 1e-12);
  ck_assert_uint_eq(fs_router_last_choices(w.r), 0);
  /* A transfer moves all its bytes and lands once. */
  ck_assert(fs_router_transfer(w.r, a, b, 1000003, 0, 0, 1, NULL, NULL, NULL, &error));
  ck_assert(fs_sim_run(w.sim, &error));
  fs_assert_no_error(error);
  world_clear(&w);
  /* With PXN (the default) the NVLink planes times the spines, at most
   * FS_ROUTE_MAX_PATHS, and still on one rail. */
  world_init(&w, ta, 2, FALSE);
  ck_assert(fs_router_route(w.r, a, b, 7, &route, &error));
  ck_assert_uint_le(route.n_paths, FS_ROUTE_MAX_PATHS);
  ck_assert_uint_eq(paths_via_spines(ta, &route), 0);
  world_clear(&w);
  /* Static: one path whatever the key. */
  world_init(&w, ts, 1, FALSE);
  ck_assert(fs_router_route(w.r, node(ts, "node0/gpu7"), node(ts, "node1/gpu0"), 7, &route, &error));
  ck_assert_uint_eq(route.n_paths, 1);
  world_clear(&w);
  fs_route_clear(&route);
}
END_TEST

START_TEST(test_rails_routing_field_and_define)
{
  GError *error = NULL;
  const char *base = "hosts: []\n"
                     "nodes:\n"
                     "  - {name: g0, model: h100-sxm}\n";
  g_autofree char *adaptive = g_strconcat("routing: Adaptive\n", base, NULL);
  g_autoptr(FsTopo) t = fs_test_topo_text(adaptive, "r.yaml", NULL, &error);
  fs_assert_no_error(error);
  ck_assert_int_eq(fs_topo_routing(t), FS_TOPO_ROUTING_ADAPTIVE);
  /* A word parameter makes it selectable: -D routing overrides the default. */
  g_autofree char *param = g_strconcat("parameters:\n"
                                       "  routing: {default: adaptive, values: [static, adaptive]}\n"
                                       "routing: ${routing}\n", base, NULL);
  g_autoptr(FsTopo) tp = fs_test_topo_text(param, "r.yaml", NULL, &error);
  fs_assert_no_error(error);
  ck_assert_int_eq(fs_topo_routing(tp), FS_TOPO_ROUTING_ADAPTIVE);
  const char *defs[] = {"routing=static", NULL};
  g_autoptr(FsTopo) t2 = fs_test_topo_text(param, "r.yaml", defs, &error);
  fs_assert_no_error(error);
  ck_assert_int_eq(fs_topo_routing(t2), FS_TOPO_ROUTING_STATIC);
  /* A bad value: file:line:col. */
  g_autofree char *bad = g_strconcat("routing: sprayed\n", base, NULL);
  ck_assert(fs_test_topo_text(bad, "r.yaml", NULL, &error) == NULL);
  ck_assert_msg(strstr(error->message, "r.yaml:1:10: routing must be static or adaptive") != NULL,
                "%s", error->message);
  g_clear_error(&error);
  const char *bad_def[] = {"routing=ecmp", NULL};
  ck_assert(fs_test_topo_text(param, "r.yaml", bad_def, &error) == NULL);
  ck_assert_msg(strstr(error->message, "-D routing=ecmp: parameter \"routing\" is \"ecmp\"; "
                                       "expected one of static, adaptive") != NULL,
                "%s", error->message);
  g_clear_error(&error);
  /* Without values: the field itself refuses the word, at the field. */
  g_autofree char *loose = g_strconcat("parameters: {routing: static}\n"
                                       "routing: ${routing}\n", base, NULL);
  ck_assert(fs_test_topo_text(loose, "r.yaml", bad_def, &error) == NULL);
  ck_assert_msg(strstr(error->message, "r.yaml:2:10: routing must be static or adaptive, got "
                                       "\"ecmp\"") != NULL, "%s", error->message);
  g_clear_error(&error);
  /* -D routing on a topology without the parameter is refused like any
   * undeclared parameter, and a literal field cannot be overridden. */
  const char *ad[] = {"routing=adaptive", NULL};
  ck_assert(fs_test_topo_text(base, "r.yaml", ad, &error) == NULL);
  ck_assert_msg(strstr(error->message, "-D routing=adaptive") != NULL, "%s", error->message);
  g_clear_error(&error);
  ck_assert(fs_test_topo_text(adaptive, "r.yaml", ad, &error) == NULL);
  g_clear_error(&error);
  /* Without the field: static. */
  g_autoptr(FsTopo) t3 = fs_test_topo_text(base, "r.yaml", NULL, &error);
  fs_assert_no_error(error);
  ck_assert_int_eq(fs_topo_routing(t3), FS_TOPO_ROUTING_STATIC);
  ck_assert_str_eq(fs_topo_routing_name(FS_TOPO_ROUTING_ADAPTIVE), "adaptive");
}
END_TEST

/* fs_coll_describe_rings of the 32-channel rings over every GPU of
 * dgx-h100-ib-ndr with defines, routed with cross_nic (caller frees). */
static char *describe_rings(const char *const *defines, guint cross_nic)
{
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100-ib-ndr", defines, NULL);
  guint ng;
  const guint *gpus = fs_topo_gpus(t, &ng);
  GError *error = NULL;
  World w;
  world_init(&w, t, cross_nic, FALSE);
  FsComm *c = fs_coll_comm_from_topo(w.r, gpus, ng, 32, &error);
  fs_assert_no_error(error);
  char *text = fs_coll_describe_rings(w.r, c);
  fs_comm_free(c);
  world_clear(&w);
  return text;
}

START_TEST(test_rails_describe_rings_shows_nics_and_collisions)
{
  /* Rail-aligned (default): every hop stays under its rail's leaf. */
  const char *defs[] = {"nodes=4", NULL};
  g_autofree char *text = describe_rings(defs, 2);
  ck_assert_msg(strstr(text, "ring 0: node0/gpu0") != NULL, "%s", text);
  /* Each ring leaves a host from the GPU that shares the entry's NIC's PCIe
   * switch (pick_exit): no PXN leg. */
  ck_assert_msg(strstr(text, "node0/gpu7 node0/gpu1 -> node0/nic0 -> node1/nic0 -> node1/gpu0")
                  != NULL, "%s", text);
  ck_assert_msg(strstr(text, "node0/gpu5 node0/gpu7 -> node0/nic6 -> node1/nic6 -> node1/gpu6")
                  != NULL, "%s", text);
  ck_assert_msg(strstr(text, "PXN") == NULL, "%s", text);
  ck_assert_msg(strstr(text, "0 crossing rails; none goes above a leaf switch") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "trees: ") != NULL, "%s", text);
  /* NCCL_CROSS_NIC=1 on 64 nodes (two scalable units): every hop changes
   * rails, and static routing by destination puts more than one on a spine
   * link; adaptive routing spreads them to one per link. */
  const char *d64[] = {"nodes=64", NULL}, *a64[] = {"nodes=64", "routing=adaptive", NULL};
  g_autofree char *t1 = describe_rings(d64, 1);
  ck_assert_msg(strstr(t1, "[crosses rails]") != NULL, "%s", t1);
  ck_assert_msg(strstr(t1, "512 host-to-host hops of 8 rings, 512 crossing rails") != NULL, "%s", t1);
  ck_assert_msg(strstr(t1, "2.25 hops per link at once (they share its bandwidth)") != NULL, "%s", t1);
  g_autofree char *t2 = describe_rings(a64, 1);
  ck_assert_msg(strstr(t2, "fabric (adaptive routing)") != NULL, "%s", t2);
  ck_assert_msg(strstr(t2, "1.00 hop per link at once (no collision)") != NULL, "%s", t2);
}
END_TEST

START_TEST(test_rails_rings_extrapolate_by_host_period)
{
  /* 8 nodes, default rails (each ring leaves a host from the GPU beside the
   * entry's NIC): a ring all_reduce used to repeat every 8 steps (one host's
   * ranks), and the step extrapolation took that period (2.2e-6 off).  Since
   * a ring's connection across hosts idles NCCL's network step between its
   * steps (models/nccl coll_net_channel ring_step_latencies), every step is
   * paced by that connection and single steps agree: extrapolated with no
   * period, equal to the full simulation (bound here at 1e-5). */
  FsTestColl s;
  g_unsetenv("NCCL_CROSS_NIC");
  g_unsetenv("NCCL_PXN_DISABLE");
  fs_test_coll_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=8", "all", FS_NET_MAXMIN);
  GError *err = NULL;
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  prefs.algo = fs_coll_algo_find("ring");
  prefs.proto = FS_PROTO_SIMPLE;
  prefs.channels = 32; /* 4 per rail (NCCL_MIN_CTAS=32), the layout this period was
                          measured on (NCCL's default across hosts: 2 per NIC, coll-topo.c) */
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  ck_assert(fs_test_coll_choose(&s, FS_COLL_ALL_REDUCE, 1u << 30, &prefs, &ch, &req, &nb));
  const FsCollAloneOpts exact = {.exact = TRUE};
  const FsCollAloneOpts fast = {.route_fixed = fs_coll_topo_route_fixed, .route_ctx = s.tnet};
  FsCollAloneStats a, b;
  ck_assert(fs_coll_time_alone(s.np, &s.sys, s.comm, nb, &ch, &req, 0, s.net, fs_coll_topo_xfer,
                               s.tnet, &exact, &a, &err));
  ck_assert(fs_coll_time_alone(s.np, &s.sys, s.comm, nb, &ch, &req, 0, s.net, fs_coll_topo_xfer,
                               s.tnet, &fast, &b, &err));
  fs_assert_no_error(err);
  double e = fabs((double)b.time - (double)a.time) / (double)a.time;
  printf("rails 8 nodes all_reduce 1 GiB ring/%s/%u: exact %.3f us, extrapolated %.3f us "
         "(%u of %u ring steps, period %u), error %.2e\n", fs_coll_proto_name(ch.proto),
         ch.nchannels, fs_time_to_us(a.time), fs_time_to_us(b.time), b.sim_ring_steps,
         b.ring_steps, b.step_period, e);
  ck_assert_uint_eq(a.sim_ring_steps, a.ring_steps);
  ck_assert_uint_lt(b.sim_ring_steps, b.ring_steps);
  ck_assert_uint_eq(b.step_period, 0);
  ck_assert_double_le(e, 1e-5);
  fs_test_coll_close(&s);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("rails");
  FS_ADD_TEST(s, test_rails_default_uses_the_destination_rail_through_pxn);
  FS_ADD_TEST(s, test_rails_cross_nic_and_pxn_disable);
  FS_ADD_TEST(s, test_rails_options_from_the_environment);
  FS_ADD_TEST(s, test_rails_adaptive_splits_over_every_spine);
  FS_ADD_TEST(s, test_rails_routing_field_and_define);
  FS_ADD_TEST(s, test_rails_describe_rings_shows_nics_and_collisions);
  FS_ADD_TEST(s, test_rails_rings_extrapolate_by_host_period);
  return fs_test_run_suite(s);
}
