/* test-tuner.c — the NCCL parameter loader (and its corpus), NCCL's cost
 * model, the tuner's choices, NCCL_ALGO / NCCL_PROTO parsing and the
 * explanation text. */
#include <string.h>

#include <glib/gstdio.h>

#include "coll/nccl-params.h"
#include "coll/p2p-sched.h"
#include "coll/tuner.h"
#include "coll/tuner-plugin.h"
#include "collrun/exec-params.h"
#include "util/yaml.h"
#include "testutil.h"

static FsNcclParams *params(void)
{
  GError *err = NULL;
  FsNcclParams *p = fs_nccl_params_load_default(&err);
  fs_assert_no_error(err);
  ck_assert_ptr_nonnull(p);
  return p;
}

/* One host of H100s on NVLink: 16 channels of 20 GB/s. */
static FsCollSysInfo hopper_box(void)
{
  FsCollSysInfo s = {
    .arch = FS_NCCL_ROW_HOPPER, .intra_hw = FS_NCCL_HW_NVLINK, .cpu = FS_NCCL_CPU_INTEL,
    .bw_intra = 20.0, .bw_inter = 12.0, .max_channels = 16, .nvls_channels = 0,
    .ll128 = TRUE,
  };
  return s;
}

START_TEST(test_params_default_values)
{
  g_autoptr(FsNcclParams) p = params();
  ck_assert_str_eq(p->version, "2.30.7");
  ck_assert_uint_eq(p->steps, 8);
  ck_assert_double_eq_tol(p->base_lat[FS_NCCL_ALGO_RING][FS_PROTO_LL], 6.6, 1e-12);
  ck_assert_double_eq_tol(p->hw_lat[FS_NCCL_HW_NET][FS_NCCL_ALGO_NVLS_TREE][FS_PROTO_SIMPLE], 20.9, 1e-12);
  ck_assert_double_eq_tol(p->tree_corr[FS_PROTO_SIMPLE][0], 0.9, 1e-12);
  ck_assert_double_eq_tol(p->ring_copy_sm_share, 1.0, 1e-12);
  /* Chunks: LL 512 KiB / 8 steps × 50 % payload; Simple 4 steps of 512 KiB
   * in slices of 2 steps. */
  ck_assert_uint_eq(fs_nccl_params_chunk_bytes(p, FS_PROTO_LL), 32768);
  ck_assert_uint_eq(fs_nccl_params_slice_bytes(p, FS_PROTO_LL), 32768);
  ck_assert_uint_eq(fs_nccl_params_chunk_bytes(p, FS_PROTO_SIMPLE), 2097152);
  ck_assert_uint_eq(fs_nccl_params_slice_bytes(p, FS_PROTO_SIMPLE), 1048576);
  FsNcclRow r;
  ck_assert(fs_nccl_params_arch_row(p, "ada", &r) && r == FS_NCCL_ROW_AMPERE);
  ck_assert(fs_nccl_params_arch_row(p, "Hopper", &r) && r == FS_NCCL_ROW_HOPPER);
  ck_assert(!fs_nccl_params_arch_row(p, "kepler", &r));
}
END_TEST

START_TEST(test_params_corpus)
{
  g_autofree char *dir = fs_test_data_path("nccl-params");
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL)
    if (g_str_has_suffix(name, ".yaml"))
      g_ptr_array_add(names, g_strdup(name));
  guint ny = 0, nn = 0;
  for (guint i = 0; i < names->len; i++) {
    const char *f = g_ptr_array_index(names, i);
    g_autofree char *path = g_build_filename(dir, f, NULL);
    GError *err = NULL;
    FsNcclParams *p = fs_nccl_params_load(path, &err);
    if (f[0] == 'y') {
      ck_assert_msg(p != NULL, "%s: %s", f, err ? err->message : "");
      ny++;
    } else {
      ck_assert_msg(p == NULL, "%s was accepted", f);
      g_autofree char *errpath = g_strndup(path, strlen(path) - 5);
      g_autofree char *ef = g_strconcat(errpath, ".err", NULL);
      g_autofree char *want = NULL;
      ck_assert(g_file_get_contents(ef, &want, NULL, NULL));
      g_strstrip(want);
      ck_assert_msg(strstr(err->message, want) != NULL, "%s: \"%s\" lacks \"%s\"", f, err->message, want);
      /* Every message starts with file:line:col. */
      ck_assert_msg(g_str_has_prefix(err->message, path), "%s: no position in \"%s\"", f, err->message);
      g_clear_error(&err);
      nn++;
    }
    fs_nccl_params_free(p);
  }
  ck_assert_uint_ge(ny, 1);
  ck_assert_uint_ge(nn, 10);
}
END_TEST

START_TEST(test_cost_ring_latency_and_bandwidth)
{
  g_autoptr(FsNcclParams) p = params();
  FsCollSysInfo s = hopper_box();
  g_autoptr(FsComm) c = fs_comm_new(8);
  const FsCollAlgo *ring = fs_coll_algo_find("ring");
  FsCollCost k;
  /* LL: 6.6 + 14 × 0.6 µs; bus min(llMax 141, 320 × 0.5). */
  ck_assert(fs_coll_cost(p, &s, c, FS_COLL_ALL_REDUCE, ring, FS_PROTO_LL, 16, 8, &k));
  ck_assert_double_eq_tol(k.lat_us, 15.0, 1e-9);
  ck_assert_double_eq_tol(k.busbw_gbps, 141.0, 1e-9);
  /* Simple: 8.4 + 14 × 3.4 µs; bus 320, alg 320 × 8/14. */
  ck_assert(fs_coll_cost(p, &s, c, FS_COLL_ALL_REDUCE, ring, FS_PROTO_SIMPLE, 16, 1 << 30, &k));
  ck_assert_double_eq_tol(k.lat_us, 56.0, 1e-9);
  ck_assert_double_eq_tol(k.algbw_gbps, 320.0 * 8 / 14, 1e-9);
  ck_assert_double_eq_tol(k.time_us, 56.0 + (double)(1 << 30) / (1000.0 * 320 * 8 / 14), 1e-6);
  /* Two hosts of 8: intra steps use max(0.6, 1.0 net overhead), 2 NET steps of 2.7. */
  g_autoptr(FsComm) c2 = fs_comm_new_grid(2, 8);
  ck_assert(fs_coll_cost(p, &s, c2, FS_COLL_ALL_REDUCE, ring, FS_PROTO_LL, 16, 8, &k));
  ck_assert_double_eq_tol(k.lat_us, 6.6 + 28 * 1.0 + 2 * 2.7, 1e-9);
  /* NVLS gives LL no bandwidth. */
  ck_assert(!fs_coll_cost(p, &s, c, FS_COLL_ALL_REDUCE, fs_coll_algo_find("nvls"), FS_PROTO_LL, 16, 8, &k));
}
END_TEST

START_TEST(test_tuner_small_and_large)
{
  g_autoptr(FsNcclParams) p = params();
  FsCollSysInfo s = hopper_box();
  g_autoptr(FsComm) c = fs_comm_new(8);
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  FsCollChoice ch;
  GError *err = NULL;
  /* 8 bytes: latency-bound, LL, one channel. */
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, 8, &prefs, &ch, &err));
  ck_assert_str_eq(ch.algo->name, "ring");
  ck_assert_uint_eq(ch.proto, FS_PROTO_LL);
  ck_assert_uint_eq(ch.nchannels, 1);
  ck_assert_uint_eq(ch.chunk_bytes, 32768);
  /* 1 GiB: bandwidth-bound, Simple on all channels. */
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, 1 << 30, &prefs, &ch, &err));
  ck_assert_str_eq(ch.algo->name, "ring");
  ck_assert_uint_eq(ch.proto, FS_PROTO_SIMPLE);
  ck_assert_uint_eq(ch.nchannels, 16);
  /* With NVLS on the host, large all_reduce goes in-switch. */
  int sw = 99;
  fs_comm_set_nvls_switch(c, 0, &sw, 1);
  s.nvls_channels = 16, s.nvls_heads = 8;
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, 1 << 30, &prefs, &ch, &err));
  ck_assert_str_eq(ch.algo->name, "nvls");
  ck_assert_uint_eq(ch.proto, FS_PROTO_SIMPLE);
  /* Without LL128 the middle sizes cannot pick it. */
  s.ll128 = FALSE;
  for (uint64_t b = 8; b <= (1u << 30); b *= 4) {
    ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, b, &prefs, &ch, &err));
    ck_assert_uint_ne(ch.proto, FS_PROTO_LL128);
  }
  /* Point to point ops go direct: LL for small peers, Simple above. */
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALLTOALL, 8 * 1024, &prefs, &ch, &err));
  ck_assert_str_eq(ch.algo->name, "direct");
  ck_assert_uint_eq(ch.proto, FS_PROTO_LL);
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALLTOALL, 64 << 20, &prefs, &ch, &err));
  ck_assert_uint_eq(ch.proto, FS_PROTO_SIMPLE);
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_HYPERCUBE, 4096, &prefs, &ch, &err));
  ck_assert_str_eq(ch.algo->name, "rhd");
  fs_assert_no_error(err);
}
END_TEST

START_TEST(test_tuner_time_decreases_with_channels_for_large)
{
  g_autoptr(FsNcclParams) p = params();
  FsCollSysInfo s = hopper_box();
  g_autoptr(FsComm) c = fs_comm_new(8);
  FsCollCost a, b;
  const FsCollAlgo *ring = fs_coll_algo_find("ring");
  ck_assert(fs_coll_cost(p, &s, c, FS_COLL_ALL_REDUCE, ring, FS_PROTO_SIMPLE, 4, 1 << 28, &a));
  ck_assert(fs_coll_cost(p, &s, c, FS_COLL_ALL_REDUCE, ring, FS_PROTO_SIMPLE, 16, 1 << 28, &b));
  ck_assert_double_lt(b.time_us, a.time_us);
  /* Latency does not depend on the size; bandwidth term does. */
  ck_assert(fs_coll_cost(p, &s, c, FS_COLL_ALL_REDUCE, ring, FS_PROTO_SIMPLE, 16, 1 << 10, &a));
  ck_assert_double_eq_tol(a.lat_us, b.lat_us, 1e-12);
}
END_TEST

START_TEST(test_nccl_algo_parsing)
{
  guint64 m;
  GError *err = NULL;
  const FsCollAlgo *ring = fs_coll_algo_find("ring"), *tree = fs_coll_algo_find("tree");
  guint ir = 0, it = 0, in = 0, icd = 0, icc = 0;
  for (guint i = 0; fs_coll_algos[i]; i++) {
    if (fs_coll_algos[i] == ring) ir = i;
    if (fs_coll_algos[i] == tree) it = i;
    if (fs_coll_algos[i]->nccl == FS_NCCL_ALGO_NVLS) in = i;
    if (fs_coll_algos[i]->nccl == FS_NCCL_ALGO_COLLNET_DIRECT) icd = i;
    if (fs_coll_algos[i]->nccl == FS_NCCL_ALGO_COLLNET_CHAIN) icc = i;
  }
  ck_assert(fs_coll_parse_nccl_algo("Ring,Tree", &m, &err));
  ck_assert(m == (((guint64)1 << ir) | ((guint64)1 << it)));
  ck_assert(fs_coll_parse_nccl_algo("ring", &m, &err));
  ck_assert(m == (guint64)1 << ir);
  ck_assert(fs_coll_parse_nccl_algo("^NVLS", &m, &err));
  ck_assert(!(m & ((guint64)1 << in)) && (m & ((guint64)1 << ir)));
  ck_assert(fs_coll_parse_nccl_algo("CollNet", &m, &err));
  ck_assert(m == (((guint64)1 << icd) | ((guint64)1 << icc)));
  ck_assert(fs_coll_parse_nccl_algo(" ^ Tree , Ring", &m, &err));
  ck_assert(!(m & ((guint64)1 << it)) && !(m & ((guint64)1 << ir)) && (m & ((guint64)1 << in)));
  ck_assert(!fs_coll_parse_nccl_algo("Ring,Bogus", &m, &err));
  fs_assert_error(err, FS_COLL_ERROR, "unknown name \"Bogus\"");
  ck_assert(!fs_coll_parse_nccl_algo("Ring,,Tree", &m, &err));
  fs_assert_error(err, FS_COLL_ERROR, "empty name");
  guint pm;
  ck_assert(fs_coll_parse_nccl_proto("^LL", &pm, &err));
  ck_assert_uint_eq(pm, (1u << FS_PROTO_LL128) | (1u << FS_PROTO_SIMPLE));
  ck_assert(fs_coll_parse_nccl_proto("simple", &pm, &err));
  ck_assert_uint_eq(pm, 1u << FS_PROTO_SIMPLE);
  ck_assert(!fs_coll_parse_nccl_proto("LL256", &pm, &err));
  fs_assert_error(err, FS_COLL_ERROR, "NCCL_PROTO");
}
END_TEST

START_TEST(test_tuner_respects_prefs)
{
  g_autoptr(FsNcclParams) p = params();
  FsCollSysInfo s = hopper_box();
  g_autoptr(FsComm) c = fs_comm_new(8);
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  FsCollChoice ch;
  GError *err = NULL;
  /* NCCL_ALGO=Tree: tree for all_reduce, nothing for all_gather. */
  ck_assert(fs_coll_parse_nccl_algo("Tree", &prefs.algo_mask, &err));
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, 1 << 20, &prefs, &ch, &err));
  ck_assert_str_eq(ch.algo->name, "tree");
  ck_assert(!fs_coll_tune(p, &s, c, FS_COLL_ALL_GATHER, 1 << 20, &prefs, &ch, &err));
  fs_assert_error(err, FS_COLL_ERROR, "no allowed algorithm");
  /* NCCL_PROTO=^LL,LL128 at a tiny size: Simple. */
  fs_coll_prefs_init(&prefs);
  ck_assert(fs_coll_parse_nccl_proto("^LL,LL128", &prefs.proto_mask, &err));
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, 8, &prefs, &ch, &err));
  ck_assert_uint_eq(ch.proto, FS_PROTO_SIMPLE);
  /* Forced: rhd, LL128, 3 channels, even where the model would not. */
  fs_coll_prefs_init(&prefs);
  prefs.algo = fs_coll_algo_find("rhd");
  prefs.proto = FS_PROTO_LL128;
  prefs.channels = 3;
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, 1 << 20, &prefs, &ch, &err));
  ck_assert_str_eq(ch.algo->name, "rhd");
  ck_assert_uint_eq(ch.proto, FS_PROTO_LL128);
  ck_assert_uint_eq(ch.nchannels, 3);
  ck_assert_double_gt(ch.cost.time_us, 0);
  /* Forcing an algorithm that cannot run says why. */
  prefs.algo = fs_coll_algo_find("nvls");
  ck_assert(!fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, 1 << 20, &prefs, &ch, &err));
  fs_assert_error(err, FS_COLL_ERROR, "no NVLS");
  fs_assert_no_error(err);
}
END_TEST

/* NCCL >= 2.24's per-collective NCCL_ALGO / NCCL_PROTO: a plain first
 * entry for every collective, "collective:list" entries replacing one
 * collective's set, '^' per entry, and the tuner following each. */
START_TEST(test_nccl_algo_per_collective)
{
  g_autoptr(FsNcclParams) p = params();
  FsCollSysInfo s = hopper_box();
  g_autoptr(FsComm) c = fs_comm_new(8);
  FsCollPrefs prefs;
  FsCollChoice ch;
  GError *err = NULL;
  fs_coll_prefs_init(&prefs);
  ck_assert(fs_coll_prefs_set_nccl_algo(&prefs, "ring;allreduce:tree;AllGather:^tree", &err));
  fs_assert_no_error(err);
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, 1 << 30, &prefs, &ch, &err));
  ck_assert_str_eq(ch.algo->name, "tree");
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_REDUCE_SCATTER, 1 << 30, &prefs, &ch, &err));
  ck_assert_str_eq(ch.algo->name, "ring");
  /* all_gather: everything but tree, so NVLS may win on this NVLS box. */
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_GATHER, 1 << 30, &prefs, &ch, &err));
  ck_assert_str_ne(ch.algo->name, "tree");
  /* Without the plain entry, the other collectives keep every algorithm;
   * names as fabricsim spells them work too. */
  fs_coll_prefs_init(&prefs);
  ck_assert(fs_coll_prefs_set_nccl_algo(&prefs, "all_reduce:ring", &err));
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, 1 << 30, &prefs, &ch, &err));
  ck_assert_str_eq(ch.algo->name, "ring");
  ck_assert(prefs.op_algo_mask[FS_COLL_ALL_GATHER] == ~(guint64)0);
  /* NCCL's own example: everything but LL128, and only LL128 for allreduce. */
  fs_coll_prefs_init(&prefs);
  ck_assert(fs_coll_prefs_set_nccl_proto(&prefs, "^LL128;allreduce:LL128", &err));
  ck_assert_uint_eq(prefs.op_proto_mask[FS_COLL_ALL_REDUCE], 1u << FS_PROTO_LL128);
  ck_assert_uint_eq(prefs.op_proto_mask[FS_COLL_BROADCAST], (1u << FS_PROTO_LL) | (1u << FS_PROTO_SIMPLE));
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, 1 << 30, &prefs, &ch, &err));
  ck_assert_uint_eq(ch.proto, FS_PROTO_LL128);
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_BROADCAST, 1 << 30, &prefs, &ch, &err));
  ck_assert_uint_ne(ch.proto, FS_PROTO_LL128);
  /* Errors: a later entry without a collective, an unknown collective, an
   * empty list; prefs are left as they were. */
  fs_coll_prefs_init(&prefs);
  ck_assert(!fs_coll_prefs_set_nccl_algo(&prefs, "ring;tree", &err));
  fs_assert_error(err, FS_COLL_ERROR, "has no collective");
  ck_assert(!fs_coll_prefs_set_nccl_algo(&prefs, "allreduce:ring;alltoeverything:tree", &err));
  fs_assert_error(err, FS_COLL_ERROR, "unknown collective \"alltoeverything\"");
  ck_assert(prefs.op_algo_mask[FS_COLL_ALL_REDUCE] == ~(guint64)0);
  ck_assert(!fs_coll_prefs_set_nccl_algo(&prefs, "allreduce:", &err));
  fs_assert_error(err, FS_COLL_ERROR, "empty list");
  ck_assert(!fs_coll_prefs_set_nccl_proto(&prefs, "allreduce:LL256", &err));
  fs_assert_error(err, FS_COLL_ERROR, "unknown name \"LL256\"");
}
END_TEST

START_TEST(test_explain_arithmetic)
{
  g_autoptr(FsNcclParams) p = params();
  FsCollSysInfo s = hopper_box();
  g_autoptr(FsComm) c = fs_comm_new(8);
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  prefs.algo = fs_coll_algo_find("ring");
  prefs.proto = FS_PROTO_SIMPLE;
  prefs.channels = 16;
  FsCollChoice ch;
  GError *err = NULL;
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, 1 << 20, &prefs, &ch, &err));
  g_autofree char *text = fs_coll_explain(p, &s, c, FS_COLL_ALL_REDUCE, 1 << 20, &ch);
  ck_assert_ptr_nonnull(strstr(text, "base 8.40 us"));
  ck_assert_ptr_nonnull(strstr(text, "14 steps × 3.40 us (NVLINK)"));
  ck_assert_ptr_nonnull(strstr(text, "= 56.00 us"));
  ck_assert_ptr_nonnull(strstr(text, "16 ch × 20.00 GB/s"));
  ck_assert_ptr_nonnull(strstr(text, "busbw = algbw × 1.7500"));
}
END_TEST

static FsNcclParams *release(const char *v)
{
  GError *err = NULL;
  FsNcclParams *p = fs_nccl_params_load_version(v, "--nccl-version", &err);
  fs_assert_no_error(err);
  ck_assert_ptr_nonnull(p);
  return p;
}

/* Every release file loads; the list runs 2.18 … 2.30 and the default
 * (nccl.yaml) is the newest. */
START_TEST(test_params_releases_load)
{
  g_auto(GStrv) known = fs_nccl_params_known_versions();
  ck_assert_uint_ge(g_strv_length(known), 13);
  for (guint m = 18; m <= 30; m++) {
    g_autofree char *v = g_strdup_printf("2.%u", m);
    ck_assert_msg(g_strv_contains((const char *const *)known, v), "%s not known", v);
    g_autoptr(FsNcclParams) p = release(v);
    ck_assert_msg(g_str_has_prefix(p->version, v), "%s: version %s", v, p->version);
  }
  ck_assert_str_eq(known[g_strv_length(known) - 1], "2.30");
  /* X.Y.Z and version codes pick the same file; 2.30 is nccl.yaml. */
  g_autoptr(FsNcclParams) a = release("2.21.5");
  g_autoptr(FsNcclParams) b = release("22105");
  ck_assert_str_eq(a->file, b->file);
  g_autoptr(FsNcclParams) d = release("2.30");
  ck_assert(g_str_has_suffix(d->file, "nccl.yaml"));
  g_autofree char *rel = fs_nccl_params_release_of_code(2804);
  ck_assert_str_eq(rel, "2.8");
}
END_TEST

/* NCCL's CollNetChain chunk (src/enqueue.cc, the same rule in every release 2.18 … 2.30): at
 * most 256 KiB, halved while a channel holds fewer than depth × 64 (down to 128 KiB), × 8 (64
 * KiB), × 1 (32 KiB) chunks.  On 16 channels of depth 8: 128 KiB at 512 MiB-1 GiB, 256 KiB from
 * 2 GiB (the CoreWeave table's sizes).  The tuner moves a forced collnet_chain in those chunks,
 * one buffer step each (conn_slots = steps), and the executor caps its flows at bwIntra × 0.5,
 * NCCL's price of one channel. */
START_TEST(test_collnet_chain_chunks)
{
  for (guint m = 18; m <= 30; m++) {
    g_autofree char *v = g_strdup_printf("2.%u", m);
    g_autoptr(FsNcclParams) p = release(v);
    ck_assert_uint_eq(fs_nccl_params_collnet_chain_chunk(p, 512ull << 20, 16, 8), 128u << 10);
    ck_assert_uint_eq(fs_nccl_params_collnet_chain_chunk(p, 1ull << 30, 16, 8), 128u << 10);
    ck_assert_uint_eq(fs_nccl_params_collnet_chain_chunk(p, 2ull << 30, 16, 8), 256u << 10);
    ck_assert_uint_eq(fs_nccl_params_collnet_chain_chunk(p, 8ull << 30, 16, 8), 256u << 10);
    ck_assert_uint_eq(fs_nccl_params_collnet_chain_chunk(p, 8u << 20, 16, 8), 64u << 10);
    ck_assert_uint_eq(fs_nccl_params_collnet_chain_chunk(p, 1u << 20, 16, 8), 32u << 10);
    ck_assert_uint_eq(fs_nccl_params_collnet_chain_chunk(p, 8, 16, 8), 32u << 10);
    ck_assert_double_eq(p->collnet_chain_ratio, 0.5);
  }
  g_autoptr(FsNcclParams) p = params();
  FsCollSysInfo s = hopper_box();
  s.collnet = TRUE;
  g_autoptr(FsComm) c = fs_comm_new_grid(2, 8);
  int cn = 200;
  fs_comm_set_collnet_switches(c, &cn, 1);
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  prefs.algo = fs_coll_algo_find("collnet_chain");
  FsCollChoice ch;
  GError *err = NULL;
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, 512ull << 20, &prefs, &ch, &err));
  fs_assert_no_error(err);
  ck_assert_uint_eq(ch.nchannels, 16);
  ck_assert_uint_eq(ch.chunk_bytes, 128u << 10);
  ck_assert_uint_eq(ch.slice_bytes, 128u << 10);
  ck_assert_uint_eq(ch.conn_slots, p->steps);
  FsCollExecParams ep;
  fs_coll_exec_params_depth(p, &s, c, FS_COLL_ALL_REDUCE, 512ull << 20, &ch, 16, &ep);
  ck_assert_double_eq_tol(ep.rate_cap, 20.0 * 0.5 * 1e9, 1e-3);
  /* Without the table: Simple's slices, no cap (as before 2026-11-28). */
  p->collnet_chain_chunk_max = 0, p->collnet_chain_ratio = 0;
  ck_assert(fs_coll_tune(p, &s, c, FS_COLL_ALL_REDUCE, 512ull << 20, &prefs, &ch, &err));
  ck_assert_uint_eq(ch.slice_bytes, fs_nccl_params_slice_bytes(p, FS_PROTO_SIMPLE));
  fs_coll_exec_params_depth(p, &s, c, FS_COLL_ALL_REDUCE, 512ull << 20, &ch, 16, &ep);
  ck_assert_double_eq(ep.rate_cap, 0);
}
END_TEST

/* An unknown release: one error naming the known ones. */
START_TEST(test_params_unknown_release)
{
  const char *bad[] = {"2.17", "3.1", "banana", "2.x"};
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    GError *err = NULL;
    FsNcclParams *p = fs_nccl_params_load_version(bad[i], "--nccl-version", &err);
    ck_assert_ptr_null(p);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(g_str_has_prefix(err->message, "--nccl-version \""), "%s", err->message);
    ck_assert_msg(strstr(err->message, "2.18, 2.19, 2.20, 2.21") != NULL, "%s", err->message);
    ck_assert_msg(strchr(err->message, '\n') == NULL, "%s", err->message);
    g_error_free(err);
  }
}
END_TEST

/* A constant that changed between two releases changes the cost model as
 * it should: Tree/Simple hwLat 28 µs (2.19-2.22) → 4 µs (2.23) and its base
 * latency 0 → 8.4 µs; PAT exists from 2.23; Ring+LL is × 1/4 on one host
 * until 2.20 and × 0.5 after; llMaxBws of Hopper 87.7 → 141 GB/s in 2.21. */
START_TEST(test_params_release_changes)
{
  g_autoptr(FsNcclParams) p22 = release("2.22");
  g_autoptr(FsNcclParams) p23 = release("2.23");
  g_autoptr(FsNcclParams) p20 = release("2.20");
  g_autoptr(FsNcclParams) p21 = release("2.21");
  FsCollSysInfo s = hopper_box();
  g_autoptr(FsComm) c = fs_comm_new(8);
  const FsCollAlgo *tree = fs_coll_algo_find("tree");
  FsCollCost k22, k23;
  /* Tree all_reduce on one host: lat = base + 2 × (ppn-1) × intraLat. */
  ck_assert(fs_coll_cost(p22, &s, c, FS_COLL_ALL_REDUCE, tree, FS_PROTO_SIMPLE, 16, 8, &k22));
  ck_assert(fs_coll_cost(p23, &s, c, FS_COLL_ALL_REDUCE, tree, FS_PROTO_SIMPLE, 16, 8, &k23));
  ck_assert_double_eq_tol(k22.lat_us, 0 + 2 * 7 * 28.0, 1e-9);
  ck_assert_double_eq_tol(k23.lat_us, 8.4 + 2 * 7 * 4.0, 1e-9);
  /* PAT (all_gather, one rank per node): absent in 2.22, costed in 2.23. */
  g_autoptr(FsComm) g = fs_comm_new_grid(8, 1);
  const FsCollAlgo *pat = fs_coll_algo_find("pat");
  ck_assert_ptr_nonnull(pat);
  ck_assert(!fs_coll_cost(p22, &s, g, FS_COLL_ALL_GATHER, pat, FS_PROTO_SIMPLE, 16, 1 << 20, &k22));
  ck_assert(fs_coll_cost(p23, &s, g, FS_COLL_ALL_GATHER, pat, FS_PROTO_SIMPLE, 16, 1 << 20, &k23));
  /* Ring+LL on one host (all_reduce): min(llMaxBw, 320 × f). */
  const FsCollAlgo *ring = fs_coll_algo_find("ring");
  FsCollCost k20, k21;
  ck_assert(fs_coll_cost(p20, &s, c, FS_COLL_ALL_REDUCE, ring, FS_PROTO_LL, 16, 8, &k20));
  ck_assert(fs_coll_cost(p21, &s, c, FS_COLL_ALL_REDUCE, ring, FS_PROTO_LL, 16, 8, &k21));
  ck_assert_double_eq_tol(k20.busbw_gbps, 80.0, 1e-9);  /* 320 / 4 < 87.7 */
  ck_assert_double_eq_tol(k21.busbw_gbps, 141.0, 1e-9); /* min(141, 160) */
  /* all_gather on one host until 2.20: × 1/3. */
  ck_assert(fs_coll_cost(p20, &s, c, FS_COLL_ALL_GATHER, ring, FS_PROTO_LL, 16, 8, &k20));
  ck_assert_double_eq_tol(k20.busbw_gbps, 87.7, 1e-9); /* min(87.7, 106.7) */
  /* The tuner's choice moves with them: small Tree all_reduce is never
   * chosen with a 28 µs step, and the time of an 8-byte all_reduce falls. */
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  FsCollChoice ch22, ch23;
  GError *err = NULL;
  ck_assert(fs_coll_tune(p22, &s, c, FS_COLL_ALL_REDUCE, 8, &prefs, &ch22, &err));
  ck_assert(fs_coll_tune(p23, &s, c, FS_COLL_ALL_REDUCE, 8, &prefs, &ch23, &err));
  fs_assert_no_error(err);
  ck_assert_str_eq(ch22.algo->name, "ring");
}
END_TEST

/* CollNetDirect all_gather / reduce_scatter (2.20+): none before 2.20;
 * 2.20-2.26 busBw = ppn × NIC × the interpolated ratio; 2.27+ ppn × NIC ×
 * 0.9; never with fewer NICs (heads) than ranks on a host. */
START_TEST(test_collnet_allgather_reducescatter)
{
  g_autoptr(FsNcclParams) p19 = release("2.19");
  g_autoptr(FsNcclParams) p20 = release("2.20");
  g_autoptr(FsNcclParams) p27 = release("2.27");
  FsCollSysInfo s = hopper_box();
  s.collnet = TRUE;
  s.collnet_heads = 8;
  s.net_bw_gbps = 50.0;
  g_autoptr(FsComm) c = fs_comm_new_grid(4, 8);
  int cn = 200;
  fs_comm_set_collnet_switches(c, &cn, 1);
  const FsCollAlgo *cd = fs_coll_algo_find("collnet_direct");
  FsCollCost k;
  ck_assert(!fs_coll_cost(p19, &s, c, FS_COLL_ALL_GATHER, cd, FS_PROTO_SIMPLE, 16, 1 << 30, &k));
  ck_assert(fs_coll_cost(p20, &s, c, FS_COLL_ALL_GATHER, cd, FS_PROTO_SIMPLE, 16, 1 << 30, &k));
  ck_assert_double_eq_tol(k.busbw_gbps, 8 * 50.0 * 0.85, 1e-9); /* w = 1 at 8 per node */
  ck_assert_double_eq_tol(k.algbw_gbps, k.busbw_gbps, 1e-9);
  ck_assert(fs_coll_cost(p27, &s, c, FS_COLL_REDUCE_SCATTER, cd, FS_PROTO_SIMPLE, 16, 1 << 30, &k));
  ck_assert_double_eq_tol(k.busbw_gbps, 8 * 50.0 * 0.9, 1e-9);
  ck_assert(!fs_coll_cost(p27, &s, c, FS_COLL_REDUCE_SCATTER, cd, FS_PROTO_LL, 16, 1 << 30, &k));
  s.collnet_heads = 4; /* two GPUs per NIC: NCCL refuses */
  ck_assert(!fs_coll_cost(p27, &s, c, FS_COLL_ALL_GATHER, cd, FS_PROTO_SIMPLE, 16, 1 << 30, &k));
  /* CollNetChain stays all_reduce only. */
  ck_assert_ptr_nonnull(fs_coll_algo_find("collnet_chain")->unsupported(c, FS_COLL_ALL_GATHER));
  ck_assert_ptr_null(cd->unsupported(c, FS_COLL_REDUCE_SCATTER));
}
END_TEST

/* NVLS across hosts (NVLS+SHARP): offered only with CollNet (NCCL_COLLNET_ENABLE),
 * all_gather/reduce_scatter only from 2.20 and with a NIC per rank; NCCL's NVLS
 * graph has a channel per head, bwIntra = 320 / (8+1) per channel, bwInter one
 * 50 GB/s NIC: 2.28+ all_reduce bus = 8 × min(bwIntra × 0.85 × 7/8 × 2, 50). */
START_TEST(test_nvls_across_hosts)
{
  g_autoptr(FsNcclParams) p = params();
  g_autoptr(FsNcclParams) p19 = release("2.19");
  FsCollSysInfo s = hopper_box();
  s.nvls_channels = 16, s.nvls_heads = 8;
  s.net_bw_gbps = 50.0;
  s.collnet_heads = 8;
  g_autoptr(FsComm) c = fs_comm_new_grid(4, 8);
  int sw[4] = {90, 91, 92, 93}, cn = 200;
  for (guint h = 0; h < 4; h++)
    fs_comm_set_nvls_switch(c, h, &sw[h], 1);
  fs_comm_set_collnet_switches(c, &cn, 1);
  const FsCollAlgo *nvls = fs_coll_algo_find("nvls");
  FsCollCost k;
  ck_assert(!fs_coll_cost(p, &s, c, FS_COLL_ALL_REDUCE, nvls, FS_PROTO_SIMPLE, 16, 1 << 30, &k));
  s.collnet = TRUE;
  ck_assert(fs_coll_cost(p, &s, c, FS_COLL_ALL_REDUCE, nvls, FS_PROTO_SIMPLE, 16, 1 << 30, &k));
  double intra = 320.0 / 9 * 0.85 * 7 / 8 * 2;
  ck_assert_double_eq_tol(k.busbw_gbps, 8 * MIN(intra, 50.0), 1e-9);
  ck_assert(fs_coll_cost(p, &s, c, FS_COLL_ALL_GATHER, nvls, FS_PROTO_SIMPLE, 16, 1 << 30, &k));
  ck_assert(!fs_coll_cost(p19, &s, c, FS_COLL_ALL_GATHER, nvls, FS_PROTO_SIMPLE, 16, 1 << 30, &k));
  ck_assert(fs_coll_cost(p19, &s, c, FS_COLL_ALL_REDUCE, nvls, FS_PROTO_SIMPLE, 16, 1 << 30, &k));
  s.collnet_heads = s.nvls_heads = 4; /* two GPUs per NIC: all_reduce on 4 heads, no all_gather */
  ck_assert(!fs_coll_cost(p, &s, c, FS_COLL_REDUCE_SCATTER, nvls, FS_PROTO_SIMPLE, 16, 1 << 30, &k));
  ck_assert(fs_coll_cost(p, &s, c, FS_COLL_ALL_REDUCE, nvls, FS_PROTO_SIMPLE, 16, 1 << 30, &k));
  ck_assert_double_eq_tol(k.busbw_gbps, 4 * 50.0, 1e-9);
}
END_TEST

/* Issue 309's 2 DGX H100 nodes (8 × H100, 8 × 400 Gb/s NICs each): NCCL prices
 * NVLSTree on its NVLS graph, 8 heads each with its own NIC (src/graph/tuning.cc
 * v2.26.2-1 line 275: "if (a == NCCL_ALGO_NVLS_TREE) bw = std::min(graphs[a]->bwIntra,
 * nNodes <= 2 ? graphs[a]->bwInter : graphs[a]->bwInter/2)", busBw = nChannels × bw),
 * so it runs NVLSTree for large all_reduce on 2 nodes (the maintainer in
 * NVIDIA/nccl-tests issue 309) and the ring beyond (half the network per head);
 * 2.28+ as well (v2.28.9-1 line 298, "Handle 2 node case of NVLSTree": bwInter × 2,
 * capped at perChMaxNVLSTreeBw 57.7).  Priced on one NIC, it loses to the ring. */
START_TEST(test_nvls_tree_two_dgx_nodes)
{
  for (guint r = 0; r < 2; r++) {
    FsTestColl t;
    fs_test_coll_open(&t, "dgx-h100-ib-ndr.yaml", "nodes=2", "all", FS_NET_ANALYTIC);
    g_autoptr(FsNcclParams) p = r == 0 ? release("2.26") : params();
    GError *err = NULL;
    ck_assert(fs_coll_sysinfo_from_topo(p, t.router, t.comm, &t.sys, &err));
    fs_assert_no_error(err);
    ck_assert_uint_eq(t.sys.nvls_heads, 8);
    ck_assert_uint_eq(t.sys.net_nics, 8);
    ck_assert_uint_eq(t.sys.graph_channels, 8);
    FsCollPrefs prefs;
    fs_coll_prefs_init(&prefs);
    prefs.collnet_off = TRUE; /* NCCL without NCCL_COLLNET_ENABLE: no NVLS+SHARP */
    fs_coll_prefs_apply_sys(&prefs, &t.sys);
    FsCollChoice ch;
    ck_assert(fs_coll_tune(p, &t.sys, t.comm, FS_COLL_ALL_REDUCE, (uint64_t)4 << 30, &prefs, &ch, &err));
    fs_assert_no_error(err);
    ck_assert_str_eq(ch.algo->name, "nvls_tree");
    ck_assert_uint_eq(ch.nchannels, p->nvls_channels);
    /* 2.26: 8 heads × min(bwIntra = 370.8/9, bwInter = one NIC); 2.30: 8 × 57.7 (the cap). */
    if (r == 0)
      ck_assert_double_eq_tol(ch.cost.busbw_gbps, 8 * t.sys.bw_intra * t.sys.max_channels / 9, 1e-6);
    else
      ck_assert_double_eq_tol(ch.cost.busbw_gbps, 8 * 57.7, 1e-6);
    /* Its heads on one NIC (what fabricsim priced before), it loses to the ring. */
    FsCollSysInfo one = t.sys;
    one.nvls_heads = 1;
    FsCollCost nv, ring;
    ck_assert(fs_coll_cost(p, &t.sys, t.comm, FS_COLL_ALL_REDUCE, fs_coll_algo_find("ring"), FS_PROTO_SIMPLE,
                           t.sys.max_channels, (uint64_t)4 << 30, &ring));
    if (fs_coll_cost(p, &one, t.comm, FS_COLL_ALL_REDUCE, fs_coll_algo_find("nvls_tree"), FS_PROTO_SIMPLE,
                     p->nvls_channels, (uint64_t)4 << 30, &nv))
      ck_assert_double_gt(nv.time_us, ring.time_us);
    fs_test_coll_close(&t);
  }
  /* 4 nodes on 2.26: bwInter / 2 per head (24.8 GB/s × 8) loses to the ring at 4 GiB. */
  FsTestColl t;
  fs_test_coll_open(&t, "dgx-h100-ib-ndr.yaml", "nodes=4", "all", FS_NET_ANALYTIC);
  g_autoptr(FsNcclParams) p = release("2.26");
  GError *err = NULL;
  ck_assert(fs_coll_sysinfo_from_topo(p, t.router, t.comm, &t.sys, &err));
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  prefs.collnet_off = TRUE;
  fs_coll_prefs_apply_sys(&prefs, &t.sys);
  FsCollChoice ch;
  ck_assert(fs_coll_tune(p, &t.sys, t.comm, FS_COLL_ALL_REDUCE, (uint64_t)4 << 30, &prefs, &ch, &err));
  fs_assert_no_error(err);
  ck_assert_str_eq(ch.algo->name, "ring");
  fs_test_coll_close(&t);
}
END_TEST

/* CollNetDirect is priced on NCCL's CollNetDirect graph (2.22+): one channel per head
 * (NIC) at the head's NIC speed, not on the ring's channels: on 2 DGX H100 nodes
 * 8 heads × 49.7 GB/s × 0.85 (sm90), the GPU/NIC ratio 8/8 giving no arity factor. */
START_TEST(test_collnet_direct_heads)
{
  FsTestColl t;
  fs_test_coll_open(&t, "dgx-h100-ib-ndr.yaml", "nodes=2", "all", FS_NET_ANALYTIC);
  ck_assert(t.sys.collnet);
  ck_assert_uint_eq(t.sys.collnet_heads, 8);
  FsCollCost k;
  ck_assert(fs_coll_cost(t.np, &t.sys, t.comm, FS_COLL_ALL_REDUCE, fs_coll_algo_find("collnet_direct"),
                         FS_PROTO_SIMPLE, t.sys.max_channels, (uint64_t)1 << 30, &k));
  ck_assert_double_eq_tol(k.busbw_gbps, 8 * t.sys.net_bw_gbps * t.np->f_collnet_sm90, 1e-6);
  /* Before 2.22 the CollNet graph has the ring graph's channels. */
  g_autoptr(FsNcclParams) p21 = release("2.21");
  ck_assert_uint_eq(p21->direct_heads, 0);
  fs_test_coll_close(&t);
}
END_TEST

/* NVLS before 2.28: algbw = min(bwIntra, bwInter) × nCh × 5/6, not the
 * 2.28+ efficiency model. */
START_TEST(test_params_nvls_legacy)
{
  g_autoptr(FsNcclParams) p27 = release("2.27");
  g_autoptr(FsNcclParams) p28 = release("2.28");
  FsCollSysInfo s = hopper_box();
  s.nvls_channels = 16, s.nvls_heads = 8;
  g_autoptr(FsComm) c = fs_comm_new(8);
  int sw = 99;
  fs_comm_set_nvls_switch(c, 0, &sw, 1);
  const FsCollAlgo *nvls = fs_coll_algo_find("nvls");
  FsCollCost k27, k28;
  ck_assert(fs_coll_cost(p27, &s, c, FS_COLL_ALL_REDUCE, nvls, FS_PROTO_SIMPLE, 16, 1 << 30, &k27));
  ck_assert(fs_coll_cost(p28, &s, c, FS_COLL_ALL_REDUCE, nvls, FS_PROTO_SIMPLE, 16, 1 << 30, &k28));
  /* The NVLS graph: 8 heads (one per GPU on one host) of bwIntra 320 / (8+1). */
  ck_assert_double_eq_tol(k27.algbw_gbps, 8 * 320.0 / 9 * 5 / 6, 1e-9);
  /* 2.28: 8 × 320/9 × 0.85 × 7/8 × 2, × 8/14. */
  ck_assert_double_eq_tol(k28.algbw_gbps, 8 * 320.0 / 9 * 0.85 * 7 / 8 * 2 * 8 / 14, 1e-6);
  ck_assert_double_eq_tol(k27.lat_us, 25.0, 1e-9);
}
END_TEST

/* NCCL's NVLS channels by architecture (src/transport/nvls.cc): 16 on Hopper; on Blackwell
 * 24 within one NVLink domain and 32 across hosts from 2.27 (NVLS_NCHANNELS_SM100_NVL,
 * NVLS_NCHANNELS_SM100), 32 everywhere in 2.25-2.26, 16 before. */
START_TEST(test_nvls_channels_blackwell)
{
  FsTestColl t;
  fs_test_coll_open(&t, "hgx-b200.yaml", NULL, "all", FS_NET_ANALYTIC);
  ck_assert_uint_eq(t.sys.nvls_channels, 24);
  fs_test_coll_close(&t);
  fs_test_coll_open(&t, "cluster.yaml", "node=hgx-b200", "all", FS_NET_ANALYTIC);
  ck_assert_uint_eq(t.sys.nvls_channels, 32);
  fs_test_coll_close(&t);
  fs_test_coll_open(&t, "dgx-h100-ib-ndr.yaml", "nodes=2", "all", FS_NET_ANALYTIC);
  ck_assert_uint_eq(t.sys.nvls_channels, 16);
  fs_test_coll_close(&t);
  g_autoptr(FsNcclParams) p24 = release("2.24");
  g_autoptr(FsNcclParams) p26 = release("2.26");
  g_autoptr(FsNcclParams) p27 = release("2.27");
  ck_assert_uint_eq(fs_nccl_params_nvls_channels(p24, FS_NCCL_ROW_BLACKWELL, FALSE), 16);
  ck_assert_uint_eq(fs_nccl_params_nvls_channels(p26, FS_NCCL_ROW_BLACKWELL, FALSE), 32);
  ck_assert_uint_eq(fs_nccl_params_nvls_channels(p27, FS_NCCL_ROW_BLACKWELL, FALSE), 24);
  ck_assert_uint_eq(fs_nccl_params_nvls_channels(p27, FS_NCCL_ROW_BLACKWELL, TRUE), 32);
  ck_assert_uint_eq(fs_nccl_params_nvls_channels(p27, FS_NCCL_ROW_HOPPER, TRUE), 16);
}
END_TEST

/* NCCL's point-to-point channels per release (coll/p2p-sched.h): a DGX H100
 * rank (NVSwitch peers of 18 NVLinks: 36 channels; one 50 GB/s NIC) with 32
 * collective channels.  2.18/2.19 give a network peer 2 channels at any
 * scale; 2.20–2.28 start at 2 and halve past 64 ranks; 2.29+ take
 * divUp(50, 14) = 4 and halve while the peers of 8-rank batches do not fit
 * 32 channels (past 64 ranks, again past 128). */
START_TEST(test_p2p_channels_per_release)
{
  FsP2pShape s = {.nranks = 16, .nhosts = 2, .max_channels = 32, .local_channels = 36,
                  .net_bw_gbps = 50.0, .net_count = 1};
  static const struct {
    const char *v;
    guint ranks, per_peer;
  } cases[] = {
    {"2.18", 16, 2}, {"2.18", 256, 2}, {"2.27", 16, 2}, {"2.27", 64, 2}, {"2.27", 128, 1},
    {"2.29", 16, 4}, {"2.29", 64, 4},  {"2.30", 128, 2}, {"2.30", 256, 1}, {"2.30", 1024, 1},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(FsNcclParams) p = release(cases[i].v);
    ck_assert(p->p2p.on);
    s.nranks = cases[i].ranks, s.nhosts = cases[i].ranks / 8;
    ck_assert_msg(fs_p2p_channels_per_peer(p, &s) == cases[i].per_peer, "%s on %u ranks: %u, want %u",
                  cases[i].v, cases[i].ranks, fs_p2p_channels_per_peer(p, &s), cases[i].per_peer);
    /* A large send takes every channel of its peer. */
    ck_assert_uint_eq(fs_p2p_op_channels(p, &s, FS_PROTO_SIMPLE, FALSE, 1u << 30), cases[i].per_peer);
  }
  /* A peer on the host with fewer channels (PCIe: 2) bounds the count. */
  g_autoptr(FsNcclParams) p = release("2.30");
  s.nranks = 16, s.nhosts = 2, s.local_channels = 2;
  ck_assert_uint_eq(fs_p2p_channels_per_peer(p, &s), 2);
  /* The split by size (2.30, 16 ranks: nChannelsMin = 4 / 2 = 2; parts of
   * 64 KiB to 128 KiB): 64 KiB on 1 channel, 200 KiB on 2, 512 KiB on 4. */
  s.local_channels = 36;
  ck_assert_uint_eq(fs_p2p_op_channels(p, &s, FS_PROTO_SIMPLE, FALSE, 64 << 10), 1);
  ck_assert_uint_eq(fs_p2p_op_channels(p, &s, FS_PROTO_SIMPLE, FALSE, 200 << 10), 2);
  ck_assert_uint_eq(fs_p2p_op_channels(p, &s, FS_PROTO_SIMPLE, FALSE, 512 << 10), 4);
  ck_assert_uint_eq(fs_p2p_op_channels(p, &s, FS_PROTO_SIMPLE, FALSE, 0), 1);
  /* The file without the table: no schedule. */
  GError *err = NULL;
  g_autofree char *path = fs_test_data_path("nccl-params/y_default.yaml");
  g_autoptr(FsNcclParams) old = fs_nccl_params_load(path, &err);
  fs_assert_no_error(err);
  ck_assert(!old->p2p.on);
}
END_TEST

/* The tuner's choice for sendrecv across hosts: the channels of the
 * schedule, one transfer per channel, and the cost capped at the channels'
 * network rate (2 × 17.9 GB/s of a 50 GB/s NIC on 128 ranks, 2.30: the
 * release file's p2p_net_channel, not NCCL's 14 GB/s estimate). */
START_TEST(test_p2p_tuner_across_hosts)
{
  g_autoptr(FsNcclParams) p = release("2.30");
  FsCollSysInfo sys = hopper_box();
  sys.max_channels = 32, sys.p2p_local_channels = 36, sys.net_bw_gbps = 50.0, sys.net_count = 1;
  guint n = 128;
  g_autoptr(FsComm) comm = fs_comm_new_grid(n / 8, 8);
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  FsCollChoice ch;
  GError *err = NULL;
  ck_assert(fs_coll_tune(p, &sys, comm, FS_COLL_SENDRECV, 1u << 30, &prefs, &ch, &err));
  fs_assert_no_error(err);
  ck_assert_str_eq(ch.algo->name, "direct");
  ck_assert_uint_eq(ch.nchannels, 2);
  ck_assert_uint_eq(ch.chunk_bytes, 1u << 30);
  ck_assert_double_eq_tol(fs_p2p_channel_rate_gbps(p), 17.9, 1e-9);
  ck_assert_double_eq_tol(ch.cost.busbw_gbps, 2 * 17.9, 1e-9);
  ck_assert(fs_coll_p2p_scheduled(p, comm, FS_COLL_SENDRECV, ch.algo));
  ck_assert(!fs_coll_p2p_scheduled(p, comm, FS_COLL_ALL_REDUCE, ch.algo));
}
END_TEST

/* A proxy's serial network posts (p2p_schedule serial_net_posts): on 2 hosts of 8 ranks with
 * 8 NICs an alltoall's busiest proxy posts 8 sends and 8 receives, 14 beyond one of each, so
 * its latency grows by 14 x net_overhead_us of the CPU vendor (1 us Intel, 2 AMD); a
 * sendrecv posts one of each (nothing added); without the key nothing changes. */
START_TEST(test_p2p_serial_net_posts)
{
  g_autoptr(FsNcclParams) p = release("2.28");
  ck_assert(p->p2p.serial_posts);
  FsCollSysInfo sys = hopper_box();
  sys.max_channels = 32, sys.p2p_local_channels = 36, sys.net_bw_gbps = 50.0, sys.net_count = 1;
  sys.net_nics = 8;
  g_autoptr(FsComm) comm = fs_comm_new_grid(2, 8);
  const FsCollAlgo *direct = fs_coll_algo_find("direct");
  for (int amd = 0; amd < 2; amd++) {
    sys.cpu = amd ? FS_NCCL_CPU_AMD : FS_NCCL_CPU_INTEL;
    FsCollCost on, off, sr_on, sr_off;
    ck_assert(fs_coll_cost(p, &sys, comm, FS_COLL_ALLTOALL, direct, FS_PROTO_SIMPLE, 2, 1u << 20, &on));
    ck_assert(fs_coll_cost(p, &sys, comm, FS_COLL_SENDRECV, direct, FS_PROTO_SIMPLE, 2, 1u << 20, &sr_on));
    p->p2p.serial_posts = FALSE;
    ck_assert(fs_coll_cost(p, &sys, comm, FS_COLL_ALLTOALL, direct, FS_PROTO_SIMPLE, 2, 1u << 20, &off));
    ck_assert(fs_coll_cost(p, &sys, comm, FS_COLL_SENDRECV, direct, FS_PROTO_SIMPLE, 2, 1u << 20, &sr_off));
    p->p2p.serial_posts = TRUE;
    ck_assert_double_eq_tol(on.lat_us - off.lat_us, 14 * (amd ? 2.0 : 1.0), 1e-9);
    ck_assert_double_eq_tol(sr_on.lat_us, sr_off.lat_us, 1e-12);
  }
}
END_TEST

/* The per-channel network rate of a point-to-point plan: the p2p_net_channel
 * table's figure when the file has one (every release file: 17.9 GB/s),
 * else NCCL's per_channel_net_bw_gbps (14); NCCL_P2P_PER_CHANNEL_NET_BW
 * changes NCCL's estimate (the channel count of the bandwidth rule), not the
 * table's rate. */
START_TEST(test_p2p_channel_rate)
{
  GError *err = NULL;
  g_autofree char *with = fs_test_data_path("nccl-params/y_p2p_net_channel.yaml");
  g_autofree char *without = fs_test_data_path("nccl-params/y_p2p_schedule.yaml");
  g_autoptr(FsNcclParams) a = fs_nccl_params_load(with, &err);
  fs_assert_no_error(err);
  g_autoptr(FsNcclParams) b = fs_nccl_params_load(without, &err);
  fs_assert_no_error(err);
  ck_assert_double_eq_tol(fs_p2p_channel_rate_gbps(a), 20.0, 1e-12);
  ck_assert_double_eq_tol(fs_p2p_channel_rate_gbps(b), 14.0, 1e-12);
  static const char *const releases[] = {"2.18", "2.24", "2.28", "2.29", "2.30"};
  for (guint i = 0; i < G_N_ELEMENTS(releases); i++) {
    g_autoptr(FsNcclParams) p = release(releases[i]);
    ck_assert_double_eq_tol(fs_p2p_channel_rate_gbps(p), 17.9, 1e-12);
  }
  g_setenv("NCCL_P2P_PER_CHANNEL_NET_BW", "25", TRUE);
  ck_assert(fs_nccl_params_apply_env(a, &err));
  ck_assert(fs_nccl_params_apply_env(b, &err));
  g_unsetenv("NCCL_P2P_PER_CHANNEL_NET_BW");
  fs_assert_no_error(err);
  ck_assert_double_eq_tol(a->p2p.channel_net_bw, 25.0, 1e-12);
  ck_assert_double_eq_tol(fs_p2p_channel_rate_gbps(a), 20.0, 1e-12);
  ck_assert_double_eq_tol(fs_p2p_channel_rate_gbps(b), 25.0, 1e-12);
  /* The bandwidth rule divides the NIC by NCCL's estimate: divUp(50, 25) = 2 channels. */
  FsP2pShape s = {.nranks = 16, .nhosts = 2, .max_channels = 32, .local_channels = 36,
                  .net_bw_gbps = 50.0, .net_count = 1};
  ck_assert_uint_eq(fs_p2p_channels_per_peer(a, &s), 2);
}
END_TEST

/* NCCL's schedule puts a rank's operations to one remote group of 8 local ranks on that group's
 * channels (coll/p2p-sched.h, shared_net_channels): 2.28 on 2 hosts of 8 (p2p channels 32, 2
 * per peer) carries an alltoall's 8 network sends on 2 channels, 8 transfers each, so its
 * network rate is 2 x 17.9 GB/s, not the NIC's 50; 4 hosts: 3 groups on 6 channels; 4 ranks
 * per host: groups of 4; 64 hosts with 1 channel per peer: the 63 groups fill the 32 channels.
 * sendrecv (one network peer) and the file without the key keep a channel per transfer. */
START_TEST(test_p2p_shared_net_channels)
{
  g_autoptr(FsNcclParams) p = release("2.28");
  ck_assert(p->p2p.shared_net);
  FsP2pShape s = {.nranks = 16, .nhosts = 2, .max_channels = 32, .local_channels = 36,
                  .net_bw_gbps = 50.0, .net_count = 1};
  ck_assert_uint_eq(fs_p2p_channels_per_peer(p, &s), 2);
  static const struct {
    guint hosts, local, nch;
    FsCollOp op;
    guint busy;
    double k;
  } cases[] = {
    {2, 8, 2, FS_COLL_ALLTOALL, 2, 8.0},   {2, 8, 2, FS_COLL_GATHER, 2, 8.0},
    {2, 8, 2, FS_COLL_SCATTER, 2, 8.0},    {2, 8, 2, FS_COLL_SENDRECV, 2, 1.0},
    {2, 8, 1, FS_COLL_ALLTOALL, 1, 8.0},   {4, 8, 2, FS_COLL_ALLTOALL, 6, 8.0},
    {8, 4, 2, FS_COLL_ALLTOALL, 14, 4.0},  {64, 8, 1, FS_COLL_ALLTOALL, 32, 504.0 / 32},
    {1, 8, 2, FS_COLL_ALLTOALL, 2, 1.0},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    s.nhosts = cases[i].hosts, s.nranks = cases[i].hosts * cases[i].local;
    ck_assert_msg(fs_p2p_net_channels_busy(p, &s, cases[i].op, cases[i].nch) == cases[i].busy,
                  "case %u: %u busy channels, want %u", i,
                  fs_p2p_net_channels_busy(p, &s, cases[i].op, cases[i].nch), cases[i].busy);
    ck_assert_double_eq_tol(fs_p2p_net_flows_per_channel(p, &s, cases[i].op, cases[i].nch),
                            cases[i].k, 1e-12);
  }
  /* The tuner's rate of a 2-host alltoall: the 2 channels, not the NIC. */
  FsCollSysInfo sys = hopper_box();
  sys.max_channels = 32, sys.p2p_local_channels = 36, sys.net_bw_gbps = 50.0, sys.net_count = 1;
  sys.net_nics = 8;
  g_autoptr(FsComm) comm = fs_comm_new_grid(2, 8);
  const FsCollAlgo *direct = fs_coll_algo_find("direct");
  FsCollCost on, off;
  ck_assert(fs_coll_cost(p, &sys, comm, FS_COLL_ALLTOALL, direct, FS_PROTO_SIMPLE, 2, 1u << 30, &on));
  ck_assert_double_eq_tol(on.busbw_gbps, 2 * 17.9, 1e-9);
  /* Without the key every transfer has a channel of its own: 16 channels, the NIC binds. */
  p->p2p.shared_net = FALSE;
  s.nhosts = 2, s.nranks = 16;
  ck_assert_uint_eq(fs_p2p_net_channels_busy(p, &s, FS_COLL_ALLTOALL, 2), 16);
  ck_assert_double_eq_tol(fs_p2p_net_flows_per_channel(p, &s, FS_COLL_ALLTOALL, 2), 1.0, 1e-12);
  ck_assert(fs_coll_cost(p, &sys, comm, FS_COLL_ALLTOALL, direct, FS_PROTO_SIMPLE, 2, 1u << 30, &off));
  ck_assert_double_eq_tol(off.busbw_gbps, 50.0, 1e-9);
}
END_TEST

/* The network plugin's proxy on EFA (coll/p2p-sched.h fs_p2p_proxy_rate_gbps): NCCL's chunk
 * across hosts (p2p chunk 512 KiB: a quarter below one chunk per peer, a half below 8), the
 * plugin's stripes of at least 128 KiB over 4 devices (1, 2, 4; 3 rounds down to 2), and the
 * proxy's time per message: an alltoall's 512 KiB messages at 1.2 + 4 x 1.3 us, a send and a
 * receive each, move 524288 / 12.8 us = 40.96 GB/s each way; gather's root and sendrecv's
 * ranks at a host's edge run one direction (both with one rank per host).
 * Without a message cost there is no bound, and the tuner's rate takes the least of the NIC,
 * the channels and the proxy. */
START_TEST(test_p2p_proxy_messages)
{
  g_autoptr(FsNcclParams) p = release("2.27");
  p->p2p_net_chunk = 524288;
  ck_assert_uint_eq(fs_p2p_net_chunk_bytes(p, 262144), 131072);
  ck_assert_uint_eq(fs_p2p_net_chunk_bytes(p, 524288), 262144);
  ck_assert_uint_eq(fs_p2p_net_chunk_bytes(p, 4194303), 262144);
  ck_assert_uint_eq(fs_p2p_net_chunk_bytes(p, 4194304), 524288);
  FsP2pShape s = {.nranks = 256, .nhosts = 32, .max_channels = 32, .local_channels = 36,
                  .net_bw_gbps = 48.6, .net_count = 1, .net_msg_us = 1.2, .net_stripe_us = 1.3,
                  .net_min_stripe = 131072, .net_devices = 4};
  static const guint64 sizes[] = {64, 131072, 131073, 262144, 393216, 524288, 1u << 30};
  static const guint stripes[] = {1, 1, 2, 2, 2, 4, 4};
  for (guint i = 0; i < G_N_ELEMENTS(sizes); i++)
    ck_assert_uint_eq(fs_p2p_net_stripes(&s, sizes[i]), stripes[i]);
  ck_assert_double_eq_tol(fs_p2p_proxy_rate_gbps(p, &s, FS_COLL_ALLTOALL, 8u << 20, 1),
                          524288 / 12.8 / 1e3, 1e-9);
  ck_assert_double_eq_tol(fs_p2p_proxy_rate_gbps(p, &s, FS_COLL_GATHER, 8u << 20, 1),
                          2 * 524288 / 12.8 / 1e3, 1e-9);
  /* sendrecv: a rank at a host's edge crosses hosts one way; with one rank per host both. */
  ck_assert_double_eq_tol(fs_p2p_proxy_rate_gbps(p, &s, FS_COLL_SENDRECV, 8u << 20, 1),
                          2 * 524288 / 12.8 / 1e3, 1e-9);
  FsP2pShape one = s;
  one.nranks = 32;
  ck_assert_double_eq_tol(fs_p2p_proxy_rate_gbps(p, &one, FS_COLL_SENDRECV, 8u << 20, 1),
                          524288 / 12.8 / 1e3, 1e-9);
  /* 256 KiB per peer: two 128 KiB messages of one stripe each. */
  ck_assert_double_eq_tol(fs_p2p_proxy_rate_gbps(p, &s, FS_COLL_ALLTOALL, 262144, 1),
                          262144 / (2 * 2 * 2.5) / 1e3, 1e-9);
  ck_assert_uint_eq(fs_p2p_net_transfers(&s, FS_COLL_ALLTOALL, 2), 2 * 248);
  FsP2pShape ib = s;
  ib.net_msg_us = ib.net_stripe_us = 0, ib.net_min_stripe = 0;
  ck_assert_double_eq(fs_p2p_proxy_rate_gbps(p, &ib, FS_COLL_ALLTOALL, 8u << 20, 1), 0);
  ck_assert_uint_eq(fs_p2p_net_stripes(&ib, 1u << 20), 1);
  /* The tuner on 32 hosts of 8 at 2 GiB: 8 MiB per peer, the proxy's 40.96 GB/s binds. */
  FsCollSysInfo sys = hopper_box();
  sys.max_channels = 32, sys.p2p_local_channels = 36, sys.net_bw_gbps = 48.6, sys.net_count = 1;
  sys.net_nics = 8, sys.net_msg_us = 1.2, sys.net_stripe_us = 1.3, sys.net_min_stripe = 131072;
  sys.net_devices = 4;
  g_autoptr(FsComm) comm = fs_comm_new_grid(32, 8);
  FsCollCost c;
  ck_assert(fs_coll_cost(p, &sys, comm, FS_COLL_ALLTOALL, fs_coll_algo_find("direct"),
                         FS_PROTO_SIMPLE, 1, 1u << 31, &c));
  ck_assert_double_eq_tol(c.busbw_gbps, 524288 / 12.8 / 1e3, 1e-9);
}
END_TEST

/* Bad plugin files: each refused with its position and a sentence (the keys are read against
 * the declared schema, coll/tuner-plugin.c). */
START_TEST(test_tuner_plugin_bad_files)
{
  static const char head[] = "name: p\nsource: s\n";
  static const char region[] = "regions:\n  - collective: all_reduce\n    ranks_per_node: 8\n"
                               "    algorithm: ring\n    protocol: LL128\n";
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"name: p\nregions: []\n", ":1:1: "},                               /* no source */
      {"name: p\nsource: s\nregions: []\nextra: 1\n", "extra"},          /* unknown key */
      {"name: p\nsource: s\nmin_nodes: 0\nregions: []\n", ":3:12: "},     /* out of range */
      {"name: p\nsource: s\nenv:\n  source: e\n  FOO: 1\nregions: []\n", "NCCL_*"},
      {"name: p\nsource: s\nenv:\n  NCCL_BUFFSIZE: 1\nregions: []\n", "source"},
      {"name: p\nsource: s\nenv:\n  source: e\n  NCCL_BUFFSIZE: -1\nregions: []\n", ":5:18: "},
  };
  static const struct {
    const char *tail, *want;
  } region_cases[] = {
      {"    vertices: [[0, 0]]\n", "at least 2 vertices"},
      {"    vertices: [[0, 0], [1]]\n", "vertex [bytes, ranks]"},
      {"    vertices: [[0, 0], [1, 1]]\n    colour: red\n", "colour"},
  };
  g_autofree char *dir = g_dir_make_tmp("fs-tuner-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "p.yaml", NULL);
  for (guint i = 0; i < G_N_ELEMENTS(cases) + G_N_ELEMENTS(region_cases); i++) {
    gboolean r = i >= G_N_ELEMENTS(cases);
    g_autofree char *text =
        r ? g_strconcat(head, region, region_cases[i - G_N_ELEMENTS(cases)].tail, NULL)
          : g_strdup(cases[i].text);
    const char *want = r ? region_cases[i - G_N_ELEMENTS(cases)].want : cases[i].want;
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    GError *err = NULL;
    g_autoptr(FsTunerPlugin) t = fs_tuner_plugin_load(path, &err);
    ck_assert_msg(t == NULL && err != NULL, "case %u loaded", i);
    ck_assert_msg(g_str_has_prefix(err->message, path) && strstr(err->message, want) != NULL,
                  "case %u: %s (want \"%s\")", i, err->message, want);
    g_error_free(err);
  }
  /* A whole good file loads, its env in order. */
  g_autofree char *good = g_strconcat(head, "min_nodes: 3\nenv:\n  source: e\n  NCCL_BUFFSIZE: "
                                      "8388608\n", region, "    vertices: [[0, 0], [1, 1]]\n",
                                      NULL);
  ck_assert(g_file_set_contents(path, good, -1, NULL));
  GError *err = NULL;
  g_autoptr(FsTunerPlugin) t = fs_tuner_plugin_load(path, &err);
  fs_assert_no_error(err);
  ck_assert_str_eq(fs_tuner_plugin_env(t)[0], "NCCL_BUFFSIZE=8388608");
  ck_assert(!fs_tuner_plugin_applies(t, 2) && fs_tuner_plugin_applies(t, 3));
  guint n;
  const FsTunerRegion *reg = fs_tuner_plugin_regions(t, &n);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(reg[0].ranks_per_node, 8);
  ck_assert_str_eq(reg[0].algo, "ring");
  ck_assert_int_eq(reg[0].proto, FS_PROTO_LL128);
  g_remove(path);
  g_rmdir(dir);
}
END_TEST

/* The first region of the aws-ofi-nccl p5 plugin that holds (bytes, ranks), as its tuner picks. */
static const char *plugin_pick_name(const FsTunerPlugin *t, double x, double y, FsCollProto *pr)
{
  guint n;
  const FsTunerRegion *r = fs_tuner_plugin_regions(t, &n);
  for (guint i = 0; i < n; i++)
    if (fs_tuner_region_contains(&r[i], x, y)) {
      *pr = r[i].proto;
      return r[i].algo;
    }
  return NULL;
}

/* aws-ofi-nccl's region tuner on p5 (models/nccl/tuners/aws-ofi-nccl-p5.yaml): the steps of the
 * EFA all_reduce table (4 nodes: Ring/LL128 to 1 GiB, Ring/Simple from 2 GiB; 16 nodes:
 * Tree/LL128 to 256 MiB, NVLSTree at 4 GiB on its bottom edge, Ring/Simple at 8 GiB; a vertex
 * counts as inside); NCCL_TUNER_PLUGIN loads it and lays its NCCL_BUFFSIZE and
 * NCCL_P2P_NET_CHUNKSIZE under the given variables; an unknown plugin is an error naming it. */
START_TEST(test_tuner_plugin_regions)
{
  GError *err = NULL;
  g_autofree char *path = fs_tuner_plugin_path("aws-ofi-nccl-p5");
  g_autoptr(FsTunerPlugin) t = fs_tuner_plugin_load(path, &err);
  fs_assert_no_error(err);
  ck_assert(!fs_tuner_plugin_applies(t, 2) && fs_tuner_plugin_applies(t, 3));
  static const struct { double x, y; const char *algo; FsCollProto pr; } pts[] = {
    {33554432, 32, "tree", FS_PROTO_LL128},      {67108864, 32, "ring", FS_PROTO_LL128},
    {1073741824, 32, "ring", FS_PROTO_LL128},    {2147483648.0, 32, "ring", FS_PROTO_SIMPLE},
    {2147483648.0, 64, "ring", FS_PROTO_LL128},  {268435456, 128, "tree", FS_PROTO_LL128},
    {536870912, 128, "ring", FS_PROTO_LL128},    {4294967296.0, 128, "nvls_tree", FS_PROTO_SIMPLE},
    {8589934592.0, 128, "ring", FS_PROTO_SIMPLE},
  };
  for (guint i = 0; i < G_N_ELEMENTS(pts); i++) {
    FsCollProto pr = FS_PROTO_N;
    const char *a = plugin_pick_name(t, pts[i].x, pts[i].y, &pr);
    ck_assert_msg(a != NULL && strcmp(a, pts[i].algo) == 0 && pr == pts[i].pr,
                  "(%.0f, %.0f): %s/%d, expected %s/%d", pts[i].x, pts[i].y, a ? a : "none", pr,
                  pts[i].algo, pts[i].pr);
  }
  g_autoptr(FsNcclParams) p = release("2.27");
  const char *env[] = {"NCCL_TUNER_PLUGIN=aws-ofi-nccl-p5", "NCCL_P2P_NET_CHUNKSIZE=262144", NULL};
  ck_assert(fs_nccl_params_apply_environ(p, env, &err));
  fs_assert_no_error(err);
  ck_assert_ptr_nonnull(p->tuner_plugin);
  ck_assert_uint_eq(p->proto[FS_PROTO_SIMPLE].buffer, 8388608);
  ck_assert_uint_eq(p->p2p_net_chunk, 262144);
  const char *bad[] = {"NCCL_TUNER_PLUGIN=no-such-plugin", NULL};
  ck_assert(!fs_nccl_params_apply_environ(p, bad, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "no-such-plugin"));
  g_clear_error(&err);
  const char *buf[] = {"NCCL_BUFFSIZE=lots", NULL};
  ck_assert(!fs_nccl_params_apply_environ(p, buf, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "NCCL_BUFFSIZE"));
  g_clear_error(&err);
}
END_TEST

/* The names fs_nccl_params_env_names lists are the ones fs_nccl_params_apply_environ reads:
 * each numeric one, set to a word, is refused with an error naming it (so `validate`'s note
 * and the constants cannot name different variables); the channel limits reach their fields. */
START_TEST(test_nccl_env_names_are_read)
{
  GError *err = NULL;
  guint n = 0;
  for (const char *const *v = fs_nccl_params_env_names(); *v != NULL; v++, n++) {
    if (strcmp(*v, "NCCL_TUNER_PLUGIN") == 0)
      continue;
    g_autoptr(FsNcclParams) p = release("2.27");
    g_autofree char *kv = g_strconcat(*v, "=lots", NULL);
    const char *env[] = {kv, NULL};
    ck_assert_msg(!fs_nccl_params_apply_environ(p, env, &err), "%s is not read", *v);
    ck_assert_ptr_nonnull(strstr(err->message, *v));
    g_clear_error(&err);
  }
  ck_assert_uint_eq(n, 11);
  g_autoptr(FsNcclParams) p = release("2.27");
  const char *lim[] = {"NCCL_MIN_CTAS=2", "NCCL_MAX_CTAS=3", "NCCL_MIN_NCHANNELS=4",
                       "NCCL_MAX_NCHANNELS=5", NULL};
  ck_assert(fs_nccl_params_apply_environ(p, lim, &err));
  fs_assert_no_error(err);
  ck_assert(p->env_min_ctas == 2 && p->env_max_ctas == 3 && p->env_min_nchannels == 4 &&
            p->env_max_nchannels == 5);
}
END_TEST

/* NCCL's ring LL128 cap is per channel of its graph (graphs[RING]->nChannels ×
 * perChMaxRingLL128Bw): across hosts the 8 graph channels run as 16, so each executed channel
 * of a Ring/LL128 plan moves at most 36.7 × 8 / 16 GB/s (collrun/exec-params.h rate_cap); a
 * tree keeps its figure per executed channel; on one host the graph's channels are the ones
 * that run and keep the whole figure. */
START_TEST(test_ll128_cap_per_graph_channel)
{
  static const char *const topo[] = {"dgx-h100-ib-ndr.yaml", "dgx-h100.yaml"};
  static const char *const def[] = {"nodes=4", NULL};
  for (guint i = 0; i < 2; i++) {
    FsTestColl t;
    fs_test_coll_open(&t, topo[i], def[i], "all", FS_NET_ANALYTIC);
    g_autoptr(FsNcclParams) p = release("2.27");
    GError *err = NULL;
    ck_assert(fs_coll_sysinfo_from_topo(p, t.router, t.comm, &t.sys, &err));
    fs_assert_no_error(err);
    FsCollChoice ch = {.algo = fs_coll_algo_find("ring"), .proto = FS_PROTO_LL128,
                       .nchannels = t.sys.max_channels};
    FsCollExecParams ep;
    fs_coll_exec_params_depth(p, &t.sys, t.comm, FS_COLL_ALL_REDUCE, (uint64_t)1 << 30, &ch, 0, &ep);
    if (i == 0) {
      ck_assert_uint_eq(t.sys.graph_channels, 8);
      ck_assert_uint_eq(t.sys.max_channels, 16);
      ck_assert_double_eq_tol(ep.rate_cap, 36.7e9 * 8 / 16, 1e-3);
      /* The tree's figure (4+ hosts: 29.0) stays per executed channel. */
      FsCollChoice tr = ch;
      tr.algo = fs_coll_algo_find("tree");
      fs_coll_exec_params_depth(p, &t.sys, t.comm, FS_COLL_ALL_REDUCE, (uint64_t)1 << 30, &tr, 0, &ep);
      ck_assert_double_eq_tol(ep.rate_cap, 29.0e9, 1e-3);
    } else {
      ck_assert_double_eq_tol(ep.rate_cap, 36.7e9, 1e-3);
    }
    fs_test_coll_close(&t);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("tuner");
  FS_ADD_TEST(s, test_params_default_values);
  FS_ADD_TEST(s, test_params_corpus);
  FS_ADD_TEST(s, test_cost_ring_latency_and_bandwidth);
  FS_ADD_TEST(s, test_tuner_small_and_large);
  FS_ADD_TEST(s, test_tuner_time_decreases_with_channels_for_large);
  FS_ADD_TEST(s, test_nccl_algo_parsing);
  FS_ADD_TEST(s, test_tuner_respects_prefs);
  FS_ADD_TEST(s, test_nccl_algo_per_collective);
  FS_ADD_TEST(s, test_explain_arithmetic);
  FS_ADD_TEST(s, test_params_releases_load);
  FS_ADD_TEST(s, test_params_unknown_release);
  FS_ADD_TEST(s, test_params_release_changes);
  FS_ADD_TEST(s, test_p2p_proxy_messages);
  FS_ADD_TEST(s, test_collnet_allgather_reducescatter);
  FS_ADD_TEST(s, test_params_nvls_legacy);
  FS_ADD_TEST(s, test_nvls_across_hosts);
  FS_ADD_TEST(s, test_nvls_tree_two_dgx_nodes);
  FS_ADD_TEST(s, test_collnet_direct_heads);
  FS_ADD_TEST(s, test_nvls_channels_blackwell);
  FS_ADD_TEST(s, test_p2p_channels_per_release);
  FS_ADD_TEST(s, test_p2p_tuner_across_hosts);
  FS_ADD_TEST(s, test_p2p_serial_net_posts);
  FS_ADD_TEST(s, test_p2p_channel_rate);
  FS_ADD_TEST(s, test_p2p_shared_net_channels);
  FS_ADD_TEST(s, test_tuner_plugin_regions);
  FS_ADD_TEST(s, test_tuner_plugin_bad_files);
  FS_ADD_TEST(s, test_nccl_env_names_are_read);
  FS_ADD_TEST(s, test_ll128_cap_per_graph_channel);
  FS_ADD_TEST(s, test_collnet_chain_chunks);
  return fs_test_run_suite(s);
}
