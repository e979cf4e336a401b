/* test-collclass.c — congruence classes of GPU groups (workload/collclass.h)
 * and the memo entries keyed by them: translates share a class and a
 * time; groups that differ in hosts, rails or link speeds do not, and a
 * step that uses classes gives the same result as one that measures every
 * group. */
#include <check.h>
#include <string.h>

#include "catalog/catalog.h"
#include "coll/nccl-params.h"
#include "collrun/coll-topo.h"
#include "compute/efficiency.h"
#include "core/sim.h"
#include "net/flow.h"
#include "net/route.h"
#include "testutil.h"
#include "topo/topo.h"
#include "workload/collclass.h"
#include "workload/executor.h"
#include "workload/opgraph.h"

/* A private network to classify and measure groups on. */
typedef struct {
  FsSim *sim;
  FsFlowNet *net;
  FsRouter *router;
  FsCollTopoNet *tnet;
} Net;

static void net_init_ecmp(Net *n, const FsTopo *topo, FsNetModel model, FsRouteEcmp ecmp)
{
  FsRouteOptions ro;
  fs_route_options_init(&ro);
  ro.ecmp = ecmp;
  n->sim = fs_sim_new();
  n->net = fs_flownet_new(n->sim, model);
  n->router = fs_router_new(topo, n->net, &ro);
  n->tnet = fs_coll_topo_net_new(n->router);
}

static void net_init(Net *n, const FsTopo *topo, FsNetModel model)
{
  net_init_ecmp(n, topo, model, FS_ROUTE_ECMP_AUTO);
}

static void net_clear(Net *n)
{
  fs_coll_topo_net_free(n->tnet);
  fs_router_free(n->router);
  fs_flownet_free(n->net);
  fs_sim_free(n->sim);
}

static guint node(const FsTopo *topo, const char *name)
{
  int i = fs_topo_find(topo, name);
  ck_assert_msg(i >= 0, "no node %s", name);
  return (guint)i;
}

/* The group of named GPUs (comma-separated) as node indices. */
static guint *group(const FsTopo *topo, const char *names, guint *n)
{
  g_auto(GStrv) v = g_strsplit(names, ",", -1);
  *n = g_strv_length(v);
  guint *r = g_new(guint, *n);
  for (guint i = 0; i < *n; i++)
    r[i] = node(topo, v[i]);
  return r;
}

typedef struct {
  gboolean has_class, ecmp;
  guint8 d[FS_COLL_CLASS_DIGEST];
} Cls;

static Cls classify_mode(Net *net, const FsTopo *topo, const char *names, FsCollClassMode mode)
{
  guint n;
  g_autofree guint *g = group(topo, names, &n);
  Cls c;
  GError *err = NULL;
  gboolean ok = fs_coll_class_digest(net->router, fs_test_nccl, mode, g, n, c.d, &c.has_class,
                                     &c.ecmp, &err);
  fs_assert_no_error(err);
  ck_assert(ok);
  return c;
}

/* The mode the executor uses for the network's flow model by default. */
static Cls classify(Net *net, const FsTopo *topo, const char *names)
{
  return classify_mode(net, topo, names, fs_flownet_model(net->net) == FS_NET_ANALYTIC
                                             ? FS_COLL_CLASS_PROFILE : FS_COLL_CLASS_STRICT);
}

static FsTime measure(Net *net, const FsTopo *topo, const char *names, FsCollOp op, uint64_t unit)
{
  guint n;
  g_autofree guint *g = group(topo, names, &n);
  FsOpEnv env = { net->sim, net->net, net->router, net->tnet, fs_test_nccl, NULL, FS_COLL_EXEC_STEPS };
  FsTime t = 0;
  GError *err = NULL;
  ck_assert(fs_opgraph_measure_coll(&env, g, n, op, unit, &t, &err));
  fs_assert_no_error(err);
  return t;
}

static gboolean same_class(const Cls *a, const Cls *b)
{
  return a->has_class && b->has_class && memcmp(a->d, b->d, FS_COLL_CLASS_DIGEST) == 0;
}

/* On a rail-optimized fabric under one leaf, the same rail one host pair
 * over is a translate: one class, the same time (max-min, no ECMP). */
START_TEST(test_collclass_translates_share_a_class)
{
  const char *defs[] = { "nodes=4", NULL };
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100-ib-ndr.yaml", defs);
  Net net;
  net_init(&net, topo, FS_NET_MAXMIN);
  Cls a = classify(&net, topo, "node0/gpu0,node1/gpu0");
  Cls b = classify(&net, topo, "node2/gpu0,node3/gpu0");
  Cls c = classify(&net, topo, "node1/gpu0,node3/gpu0");  /* other host pairs */
  ck_assert(!a.ecmp);
  ck_assert(same_class(&a, &b));
  ck_assert(same_class(&a, &c));
  /* Whole hosts (TP groups) are translates too. */
  Cls h0 = classify(&net, topo, "node0/gpu0,node0/gpu1,node0/gpu2,node0/gpu3");
  Cls h2 = classify(&net, topo, "node2/gpu0,node2/gpu1,node2/gpu2,node2/gpu3");
  ck_assert(same_class(&h0, &h2));
  FsTime ta = measure(&net, topo, "node0/gpu0,node1/gpu0", FS_COLL_ALL_REDUCE, 64u << 20);
  FsTime tb = measure(&net, topo, "node2/gpu0,node3/gpu0", FS_COLL_ALL_REDUCE, 64u << 20);
  ck_assert_int_eq(ta, tb);
  FsTime t0 = measure(&net, topo, "node0/gpu0,node0/gpu1,node0/gpu2,node0/gpu3",
                      FS_COLL_REDUCE_SCATTER, 8u << 20);
  FsTime t2 = measure(&net, topo, "node2/gpu0,node2/gpu1,node2/gpu2,node2/gpu3",
                      FS_COLL_REDUCE_SCATTER, 8u << 20);
  ck_assert_int_eq(t0, t2);
  net_clear(&net);
}
END_TEST

/* Groups that time differently never share a class: inside a host vs
 * across hosts, other local indices, mixed rails, another rank order
 * with other hosts' pattern. */
START_TEST(test_collclass_non_congruent_groups_differ)
{
  const char *defs[] = { "nodes=4", NULL };
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100-ib-ndr.yaml", defs);
  Net net;
  net_init(&net, topo, FS_NET_MAXMIN);
  const char *groups[] = {
    "node0/gpu0,node1/gpu0",
    "node0/gpu0,node0/gpu1",
    "node0/gpu0,node1/gpu1",
    "node0/gpu0,node1/gpu0,node2/gpu0,node3/gpu0",
    "node0/gpu0,node0/gpu1,node1/gpu0,node1/gpu1",
    "node0/gpu0,node1/gpu0,node0/gpu1,node1/gpu1",
  };
  guint ng = G_N_ELEMENTS(groups);
  Cls cls[G_N_ELEMENTS(groups)];
  for (guint i = 0; i < ng; i++)
    cls[i] = classify(&net, topo, groups[i]);
  for (guint i = 0; i < ng; i++)
    for (guint j = i + 1; j < ng; j++)
      ck_assert_msg(!same_class(&cls[i], &cls[j]), "%s and %s share a class", groups[i], groups[j]);
  /* And the first two really take different times (a memo that merged
   * them would return a wrong one). */
  ck_assert_int_ne(measure(&net, topo, groups[0], FS_COLL_ALL_REDUCE, 16u << 20),
                   measure(&net, topo, groups[1], FS_COLL_ALL_REDUCE, 16u << 20));
  net_clear(&net);
}
END_TEST

/* Two pairs of one-GPU hosts with the same shape but slower links on one
 * pair: different classes and different times, in both flow models. */
START_TEST(test_collclass_link_speed_matters)
{
  const char *text =
    "templates:\n"
    "  box:\n"
    "    nodes:\n"
    "      - {name: gpu0, model: h100-sxm}\n"
    "      - {name: nic0, model: connectx-7}\n"
    "    links:\n"
    "      - {a: gpu0, b: nic0, model: pcie-gen5-x16}\n"
    "hosts:\n"
    "  - {template: box, name: \"n[0-3]\"}\n"
    "nodes:\n"
    "  - {name: sw0, model: quantum-2-ndr}\n"
    "links:\n"
    "  - {a: \"n[0-1]/nic0\", b: sw0, model: ib-ndr}\n"
    "  - {a: \"n[2-3]/nic0\", b: sw0, model: ib-hdr}\n";
  GError *err = NULL;
  g_autoptr(FsTopo) topo = fs_topo_load_string(text, "speeds.yaml", fs_test_cat, NULL, &err);
  fs_assert_no_error(err);
  for (int m = 0; m < 2; m++) {
    Net net;
    net_init(&net, topo, m == 0 ? FS_NET_MAXMIN : FS_NET_ANALYTIC);
    Cls fast = classify(&net, topo, "n0/gpu0,n1/gpu0");
    Cls fast_rev = classify(&net, topo, "n1/gpu0,n0/gpu0");
    Cls slow = classify(&net, topo, "n2/gpu0,n3/gpu0");
    ck_assert(same_class(&fast, &fast_rev));
    ck_assert(!same_class(&fast, &slow));
    FsTime tf = measure(&net, topo, "n0/gpu0,n1/gpu0", FS_COLL_ALL_REDUCE, 32u << 20);
    FsTime tr = measure(&net, topo, "n1/gpu0,n0/gpu0", FS_COLL_ALL_REDUCE, 32u << 20);
    FsTime ts = measure(&net, topo, "n2/gpu0,n3/gpu0", FS_COLL_ALL_REDUCE, 32u << 20);
    ck_assert_int_eq(tf, tr);
    ck_assert_int_lt(tf, ts);
    net_clear(&net);
  }
}
END_TEST

/* Across leaves, with ECMP by flow key, the routes make ECMP choices: the
 * strict class says it is approximate (max-min then uses it only with
 * coll_classes = ON); the analytic profile class is exact, and translates
 * share it.  With the default (InfiniBand switches route by destination)
 * the routes are fixed: the strict class is exact. */
START_TEST(test_collclass_reports_ecmp)
{
  const char *defs[] = { "nodes=64", NULL };
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100-ib-ndr.yaml", defs);
  Net net;
  net_init_ecmp(&net, topo, FS_NET_ANALYTIC, FS_ROUTE_ECMP_FLOW);
  Cls in = classify_mode(&net, topo, "node0/gpu0,node1/gpu0", FS_COLL_CLASS_STRICT);
  Cls across = classify_mode(&net, topo, "node0/gpu0,node40/gpu0", FS_COLL_CLASS_STRICT);
  ck_assert(!in.ecmp);
  ck_assert(across.ecmp);
  ck_assert(!same_class(&in, &across));
  Cls p1 = classify(&net, topo, "node0/gpu0,node40/gpu0");
  Cls p2 = classify(&net, topo, "node1/gpu0,node41/gpu0");
  Cls pin = classify(&net, topo, "node0/gpu0,node1/gpu0");
  ck_assert(!p1.ecmp);
  ck_assert(same_class(&p1, &p2));
  ck_assert(!same_class(&p1, &pin)); /* through a spine: other latency */
  /* Analytic: the same time, as the class claims. */
  ck_assert_int_eq(measure(&net, topo, "node0/gpu0,node40/gpu0", FS_COLL_ALL_GATHER, 4u << 20),
                   measure(&net, topo, "node1/gpu0,node41/gpu0", FS_COLL_ALL_GATHER, 4u << 20));
  /* Loose: spines do not count, the class is approximate. */
  Cls l1 = classify_mode(&net, topo, "node0/gpu0,node40/gpu0", FS_COLL_CLASS_LOOSE);
  Cls l2 = classify_mode(&net, topo, "node1/gpu0,node41/gpu0", FS_COLL_CLASS_LOOSE);
  ck_assert(l1.ecmp && same_class(&l1, &l2));
  net_clear(&net);
  /* By destination: fixed routes, an exact strict class. */
  net_init(&net, topo, FS_NET_MAXMIN);
  Cls d = classify_mode(&net, topo, "node0/gpu0,node40/gpu0", FS_COLL_CLASS_STRICT);
  ck_assert(d.has_class && !d.ecmp);
  net_clear(&net);
}
END_TEST

/* A step whose stages' groups are translates: with classes (auto) the
 * result is the one measuring every group, to the picosecond, in both flow
 * models, and the class entries were hit. */
START_TEST(test_collclass_step_matches_exact_memo)
{
  const char *defs[] = { "nodes=4", NULL };
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100-ib-ndr.yaml", defs);
  const char *layouts[] = { "  tp: 8\n  pp: 2\n  zero_stage: 1\n  bucket_size: 8 MB\n",
                            "  tp: 4\n  pp: 4\n  zero_stage: 0\n" };
  for (int m = 0; m < 2; m++)
    for (guint li = 0; li < G_N_ELEMENTS(layouts); li++) {
      FsTrainOptions off, on;
      fs_train_options_init(&off);
      off.net_model = m == 0 ? FS_NET_MAXMIN : FS_NET_ANALYTIC;
      off.dp_isolated = TRUE;
      off.coll_classes = FS_COLL_CLASSES_OFF;
      on = off;
      on.coll_classes = FS_COLL_CLASSES_AUTO;
      g_autoptr(FsCollMemo) memo = fs_coll_memo_new();
      on.memo = memo;
      FsWorkload *wa = fs_test_small_gpt(layouts[li], NULL);
      FsWorkload *wb = fs_test_small_gpt(layouts[li], NULL);
      FsTrain *ta = fs_test_train(topo, wa, &off);
      FsTrain *tb = fs_test_train(topo, wb, &on);
      fs_test_assert_same_result(ta, tb);
      guint64 hits;
      guint entries;
      fs_coll_memo_class_stats(memo, &hits, &entries);
      ck_assert_uint_gt(entries, 0);
      ck_assert_uint_gt(hits, 0);
      fs_train_free(ta);
      fs_train_free(tb);
      fs_workload_free(wa);
      fs_workload_free(wb);
    }
}
END_TEST

/* Claims: a second thread that wants a key being measured waits for the
 * time instead of measuring it again; a released claim passes to it. */
typedef struct {
  FsCollMemo *memo;
  const FsCollMemoKey *key;
  gboolean hit;
  FsTime got;
} Claimer;

static gpointer claim_thread(gpointer p)
{
  Claimer *c = p;
  c->hit = fs_coll_memo_claim(c->memo, c->key, &c->got);
  if (!c->hit)
    fs_coll_memo_store(c->memo, c->key, 5);
  return NULL;
}

START_TEST(test_collclass_memo_claim_waits)
{
  g_autoptr(FsCollMemo) memo = fs_coll_memo_new();
  guint nodes[] = { 4, 5 };
  guint8 digest[FS_COLL_CLASS_DIGEST] = { 1, 2, 3 };
  FsCollMemoKey exact = { NULL, NULL, FS_NET_MAXMIN, FS_COLL_ALL_REDUCE, 64, nodes, 2, NULL };
  FsCollMemoKey cls = exact;
  cls.class_digest = digest;
  for (int release = 0; release < 2; release++) {
    FsCollMemoKey k = release ? cls : exact;
    FsTime t = 0;
    ck_assert(!fs_coll_memo_claim(memo, &k, &t));        /* ours to measure */
    ck_assert(!fs_coll_memo_lookup(memo, &k, &t));       /* pending: not a hit */
    Claimer c = { memo, &k, FALSE, 0 };
    GThread *th = g_thread_new("claimer", claim_thread, &c);
    g_usleep(20000);
    if (release)
      fs_coll_memo_release(memo, &k);
    else
      fs_coll_memo_store(memo, &k, 42);
    g_thread_join(th);
    ck_assert(c.hit == !release);
    ck_assert(fs_coll_memo_lookup(memo, &k, &t));
    ck_assert_int_eq(t, release ? 5 : 42);
  }
  /* The exact key and the class key are different entries. */
  guint64 hits;
  guint entries;
  fs_coll_memo_class_stats(memo, &hits, &entries);
  ck_assert_uint_eq(entries, 1);
  fs_coll_memo_stats(memo, &hits, &entries);
  ck_assert_uint_eq(entries, 2);
}
END_TEST

/* Option names round-trip. */
START_TEST(test_collclass_option_names)
{
  for (guint i = 0; i < FS_COLL_CLASSES_N; i++) {
    FsCollClasses c;
    ck_assert(fs_coll_classes_from_name(fs_coll_classes_name((FsCollClasses)i), &c));
    ck_assert_int_eq(c, (int)i);
  }
  FsCollClasses c;
  ck_assert(!fs_coll_classes_from_name("sometimes", &c));
  FsTrainOptions o;
  fs_train_options_init(&o);
  ck_assert_int_eq(o.coll_classes, FS_COLL_CLASSES_AUTO);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("collclass");
  TCase *tc = tcase_create("collclass");
  tcase_add_checked_fixture(tc, fs_test_models_setup, fs_test_models_teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_collclass_translates_share_a_class);
  tcase_add_test(tc, test_collclass_non_congruent_groups_differ);
  tcase_add_test(tc, test_collclass_link_speed_matters);
  tcase_add_test(tc, test_collclass_reports_ecmp);
  tcase_add_test(tc, test_collclass_step_matches_exact_memo);
  tcase_add_test(tc, test_collclass_option_names);
  tcase_add_test(tc, test_collclass_memo_claim_waits);
  suite_add_tcase(s, tc);
  return fs_test_run_suite(s);
}
