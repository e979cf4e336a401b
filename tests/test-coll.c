/* test-coll.c — collective names, nccl-tests sizes and busbw factors,
 * communicators, plans of every algorithm, binary trees, and the
 * nccl-tests text/JSON format. */
#include <string.h>

#include "coll/coll.h"
#include "coll/comm.h"
#include "coll/launch.h"
#include "coll/ncclt-format.h"
#include "coll/plan.h"
#include "util/error.h"
#include "testutil.h"

/* A request with explicit chunking (no params file needed). */
static FsCollRequest req_of(FsCollOp op, uint64_t bytes, guint nch, uint64_t chunk)
{
  FsCollRequest r = {
    .op = op, .bytes = bytes, .dtype = FS_COLL_DT_FLOAT, .redop = FS_COLL_REDOP_SUM,
    .root = 0, .proto = FS_PROTO_SIMPLE, .nchannels = nch, .chunk_bytes = chunk,
  };
  return r;
}

static FsCollPlan *plan_of(const FsComm *comm, const char *algo, const FsCollRequest *req)
{
  GError *err = NULL;
  const FsCollAlgo *a = fs_coll_algo_find(algo);
  ck_assert_ptr_nonnull(a);
  FsCollPlan *p = fs_coll_plan_new(comm, a, req, &err);
  fs_assert_no_error(err);
  return p;
}

START_TEST(test_coll_busbw_factors)
{
  ck_assert_double_eq_tol(fs_coll_busbw_factor(FS_COLL_ALL_REDUCE, 8), 1.75, 1e-12);
  ck_assert_double_eq_tol(fs_coll_busbw_factor(FS_COLL_ALL_GATHER, 8), 0.875, 1e-12);
  ck_assert_double_eq_tol(fs_coll_busbw_factor(FS_COLL_REDUCE_SCATTER, 4), 0.75, 1e-12);
  ck_assert_double_eq_tol(fs_coll_busbw_factor(FS_COLL_ALLTOALL, 2), 0.5, 1e-12);
  ck_assert_double_eq_tol(fs_coll_busbw_factor(FS_COLL_GATHER, 8), 0.875, 1e-12);
  ck_assert_double_eq_tol(fs_coll_busbw_factor(FS_COLL_SCATTER, 8), 0.875, 1e-12);
  ck_assert_double_eq_tol(fs_coll_busbw_factor(FS_COLL_BROADCAST, 8), 1.0, 1e-12);
  ck_assert_double_eq_tol(fs_coll_busbw_factor(FS_COLL_REDUCE, 8), 1.0, 1e-12);
  ck_assert_double_eq_tol(fs_coll_busbw_factor(FS_COLL_SENDRECV, 8), 1.0, 1e-12);
  ck_assert_double_eq_tol(fs_coll_busbw_factor(FS_COLL_HYPERCUBE, 8), 1.0, 1e-12);
}
END_TEST

START_TEST(test_coll_sizes_match_nccl_tests)
{
  FsCollSizes s;
  /* all_reduce: count = S / 4, algbw over S. */
  fs_coll_sizes(FS_COLL_ALL_REDUCE, 1048576, FS_COLL_DT_FLOAT, 8, &s);
  ck_assert_uint_eq(s.count, 262144);
  ck_assert_uint_eq(s.size, 1048576);
  ck_assert_uint_eq(s.algbw_bytes, 1048576);
  /* all_gather of 1000 B floats on 8 ranks: base = (250/8) & ~3 = 28. */
  fs_coll_sizes(FS_COLL_ALL_GATHER, 1000, FS_COLL_DT_FLOAT, 8, &s);
  ck_assert_uint_eq(s.count, 28);
  ck_assert_uint_eq(s.size, 28 * 4 * 8);
  ck_assert_uint_eq(s.unit_bytes, 28 * 4);
  ck_assert_uint_eq(s.algbw_bytes, 28 * 4 * 8);
  /* reduce_scatter prints the send size (the whole array). */
  fs_coll_sizes(FS_COLL_REDUCE_SCATTER, 1 << 20, FS_COLL_DT_HALF, 4, &s);
  ck_assert_uint_eq(s.count, (1 << 20) / 2 / 4);
  ck_assert_uint_eq(s.size, 1 << 20);
  /* alltoall and hypercube. */
  fs_coll_sizes(FS_COLL_ALLTOALL, 4096, FS_COLL_DT_INT8, 4, &s);
  ck_assert_uint_eq(s.count, 1024);
  ck_assert_uint_eq(s.size, 4096);
  fs_coll_sizes(FS_COLL_HYPERCUBE, 4096, FS_COLL_DT_INT8, 4, &s);
  ck_assert_uint_eq(s.algbw_bytes, 1024 * 3);
  /* Bandwidths: 1 MiB in 10 us = 104.8576 GB/s algbw; ×1.75 busbw. */
  double alg, bus;
  fs_coll_sizes(FS_COLL_ALL_REDUCE, 1048576, FS_COLL_DT_FLOAT, 8, &s);
  fs_coll_bandwidths(FS_COLL_ALL_REDUCE, &s, 8, 10e-6, &alg, &bus);
  ck_assert_double_eq_tol(alg, 104.8576, 1e-9);
  ck_assert_double_eq_tol(bus, 104.8576 * 1.75, 1e-9);
}
END_TEST

START_TEST(test_coll_names_roundtrip)
{
  FsCollOp op;
  ck_assert(fs_coll_op_from_name("AllReduce", &op) && op == FS_COLL_ALL_REDUCE);
  ck_assert(fs_coll_op_from_name("reduce-scatter", &op) && op == FS_COLL_REDUCE_SCATTER);
  ck_assert(!fs_coll_op_from_name("allreduced", &op));
  for (guint i = 0; i < FS_COLL_N_OPS; i++) {
    ck_assert(fs_coll_op_from_name(fs_coll_op_name(i), &op));
    ck_assert_uint_eq(op, i);
  }
  FsCollDtype dt;
  ck_assert(fs_coll_dtype_from_name("bf16", &dt) && dt == FS_COLL_DT_BFLOAT16);
  ck_assert(fs_coll_dtype_from_name("float", &dt) && fs_coll_dtype_size(dt) == 4);
  ck_assert(!fs_coll_dtype_from_name("float128", &dt));
  FsCollProto p;
  ck_assert(fs_coll_proto_from_name("ll128", &p) && p == FS_PROTO_LL128);
  ck_assert_str_eq(fs_coll_op_redop_label(FS_COLL_ALL_GATHER, FS_COLL_REDOP_SUM), "none");
  ck_assert_str_eq(fs_coll_op_redop_label(FS_COLL_ALL_REDUCE, FS_COLL_REDOP_MAX), "max");
}
END_TEST

START_TEST(test_comm_hosts_and_rings)
{
  g_autoptr(FsComm) c = fs_comm_new_grid(3, 4);
  ck_assert_uint_eq(fs_comm_size(c), 12);
  ck_assert_uint_eq(fs_comm_n_hosts(c), 3);
  ck_assert_uint_eq(fs_comm_ppn(c), 4);
  ck_assert_uint_eq(fs_comm_local_rank(c, 6), 2);
  ck_assert_uint_eq(fs_comm_host_index(c, 11), 2);
  const guint *r = fs_comm_ring(c, 5);
  for (guint i = 0; i < 12; i++)
    ck_assert_uint_eq(r[i], i);
  guint bad[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10};
  GError *err = NULL;
  ck_assert(!fs_comm_set_ring(c, 0, bad, &err));
  fs_assert_error(err, FS_COLL_ERROR, "not a permutation");
  guint rev[12];
  for (guint i = 0; i < 12; i++)
    rev[i] = 11 - i;
  ck_assert(fs_comm_set_ring(c, 0, rev, &err));
  ck_assert_uint_eq(fs_comm_ring(c, 3)[0], 11);
  /* Regrouping hosts updates the tables. */
  fs_comm_set_host(c, 0, 7);
  ck_assert_uint_eq(fs_comm_n_hosts(c), 4);
}
END_TEST

START_TEST(test_plan_ring_all_reduce_steps)
{
  /* One chunk per rank block: 2(n-1) ring steps, n transfers each, then
   * each rank's local copy (NCCL's ring kernel's last primitive). */
  for (guint n = 2; n <= 9; n++) {
    g_autoptr(FsComm) c = fs_comm_new(n);
    FsCollRequest req = req_of(FS_COLL_ALL_REDUCE, 4096 * n, 1, 1 << 20);
    g_autoptr(FsCollPlan) p = plan_of(c, "ring", &req);
    ck_assert_uint_eq(fs_coll_plan_n_xfers(p), n * 2 * (n - 1));
    ck_assert_uint_eq(fs_coll_plan_depth(p), 2 * (n - 1) + 1);
    ck_assert_uint_eq(fs_coll_plan_n_steps(p) - fs_coll_plan_n_xfers(p), n);
    /* Each rank sends 2(n-1)/n of the buffer. */
    ck_assert_uint_eq(fs_coll_plan_xfer_bytes(p), (uint64_t)2 * (n - 1) * 4096 * n);
  }
  /* Three loops of chunks on 2 channels: 3 × 2 × n × 2(n-1) transfers,
   * and the buffer slots make later loops wait for earlier ones. */
  g_autoptr(FsComm) c = fs_comm_new(4);
  FsCollRequest req = req_of(FS_COLL_ALL_REDUCE, 2 * 3 * 4 * 1024, 2, 1024);
  g_autoptr(FsCollPlan) p = plan_of(c, "ring", &req);
  ck_assert_uint_eq(fs_coll_plan_n_xfers(p), 3 * 2 * 4 * 6);
  ck_assert_uint_gt(fs_coll_plan_depth(p), 6);
}
END_TEST

START_TEST(test_plan_ring_other_ops)
{
  g_autoptr(FsComm) c = fs_comm_new(8);
  FsCollRequest req = req_of(FS_COLL_ALL_GATHER, 4096, 1, 1 << 20);
  g_autoptr(FsCollPlan) ag = plan_of(c, "ring", &req);
  ck_assert_uint_eq(fs_coll_plan_n_xfers(ag), 8 * 7);
  ck_assert_uint_eq(fs_coll_plan_xfer_bytes(ag), 8 * 7 * 4096);
  req.op = FS_COLL_REDUCE_SCATTER;
  g_autoptr(FsCollPlan) rs = plan_of(c, "ring", &req);
  ck_assert_uint_eq(fs_coll_plan_depth(rs), 7 + 1);
  req.op = FS_COLL_BROADCAST;
  req.root = 3;
  g_autoptr(FsCollPlan) bc = plan_of(c, "ring", &req);
  ck_assert_uint_eq(fs_coll_plan_n_xfers(bc), 7);
  ck_assert_uint_eq(FS_EP_INDEX(fs_coll_plan_step(bc, 0)->src), 3);
  req.op = FS_COLL_REDUCE;
  g_autoptr(FsCollPlan) rd = plan_of(c, "ring", &req);
  ck_assert_uint_eq(FS_EP_INDEX(fs_coll_plan_step(rd, 6)->dst), 3);
  req.op = FS_COLL_ALLTOALL;
  GError *err = NULL;
  ck_assert_ptr_null(fs_coll_plan_new(c, fs_coll_algo_find("ring"), &req, &err));
  fs_assert_error(err, FS_COLL_ERROR, "the ring runs");
}
END_TEST

/* Depth of node in tree t of n nodes (edges to the root). */
static guint tree_depth(guint n, guint t, guint node)
{
  guint d = 0;
  int p, c0, c1;
  fs_coll_btree(n, t, node, &p, &c0, &c1);
  while (p >= 0) {
    d++;
    fs_coll_btree(n, t, (guint)p, &p, &c0, &c1);
    ck_assert_uint_le(d, n);
  }
  return d;
}

START_TEST(test_btree_shape)
{
  for (guint n = 1; n <= 70; n++)
    for (guint t = 0; t < 2; t++) {
      guint roots = 0, maxd = 0;
      for (guint v = 0; v < n; v++) {
        int p, c0, c1;
        fs_coll_btree(n, t, v, &p, &c0, &c1);
        if (p < 0)
          roots++;
        else {
          /* The parent lists v as a child. */
          int pp, a, b;
          fs_coll_btree(n, t, (guint)p, &pp, &a, &b);
          ck_assert_msg(a == (int)v || b == (int)v, "n=%u t=%u: %u not a child of %d", n, t, v, p);
        }
        maxd = MAX(maxd, tree_depth(n, t, v));
      }
      ck_assert_uint_eq(roots, 1);
      /* Depth is logarithmic: at most ceil(log2 n) + 1. */
      guint lg = 0;
      while ((1u << lg) < n)
        lg++;
      ck_assert_msg(maxd <= lg + 1, "n=%u t=%u depth %u", n, t, maxd);
    }
  /* n = 2^k: depth exactly k in tree 0. */
  ck_assert_uint_eq(tree_depth(8, 0, 1), 3);
  ck_assert_uint_eq(tree_depth(16, 0, 1), 4);
}
END_TEST

START_TEST(test_plan_tree_depth_log_n)
{
  /* One rank per host, one chunk: up log2 n hops then down log2 n. */
  for (guint k = 1; k <= 5; k++) {
    guint n = 1u << k;
    g_autoptr(FsComm) c = fs_comm_new_grid(n, 1);
    FsCollRequest req = req_of(FS_COLL_ALL_REDUCE, 1024, 1, 1 << 20);
    g_autoptr(FsCollPlan) p = plan_of(c, "tree", &req);
    ck_assert_uint_eq(fs_coll_plan_depth(p), 2 * k);
    ck_assert_uint_eq(fs_coll_plan_n_xfers(p), 2 * (n - 1));
  }
  /* Hosts of 4: the chain inside each host adds 3 hops each way. */
  g_autoptr(FsComm) c = fs_comm_new_grid(4, 4);
  FsCollRequest req = req_of(FS_COLL_ALL_REDUCE, 1024, 2, 1 << 20);
  g_autoptr(FsCollPlan) p = plan_of(c, "tree", &req);
  ck_assert_uint_eq(fs_coll_plan_n_xfers(p), 2 * 2 * 15);
}
END_TEST

/* NVLink domains: hosts that share an NVLS switch (a GB200 NVL72 rack's
 * trays) count once, a host without one counts alone. */
START_TEST(test_comm_nvlink_domains)
{
  g_autoptr(FsComm) c = fs_comm_new_grid(4, 4);
  ck_assert_uint_eq(fs_comm_n_nvlink_domains(c), 4);
  int rack0 = 100, rack1 = 101;
  fs_comm_set_nvls_switch(c, 0, &rack0, 1);
  fs_comm_set_nvls_switch(c, 1, &rack0, 1);
  ck_assert_uint_eq(fs_comm_n_nvlink_domains(c), 3);
  fs_comm_set_nvls_switch(c, 2, &rack1, 1);
  fs_comm_set_nvls_switch(c, 3, &rack1, 1);
  ck_assert_uint_eq(fs_comm_n_nvlink_domains(c), 2);
  fs_comm_set_nvls_switch(c, 2, &rack0, 1);
  fs_comm_set_nvls_switch(c, 3, &rack0, 1);
  ck_assert_uint_eq(fs_comm_n_nvlink_domains(c), 1);
}
END_TEST

START_TEST(test_plan_every_algorithm_builds)
{
  /* Every algorithm, every op it accepts, on a 2-host × 4 communicator
   * with switches bound: plans are DAGs (deps point backwards) and move
   * data. */
  g_autoptr(FsComm) c = fs_comm_new_grid(2, 4);
  int sw0 = 100, sw1 = 101;
  fs_comm_set_nvls_switch(c, 0, &sw0, 1);
  fs_comm_set_nvls_switch(c, 1, &sw1, 1);
  int cn = 200;
  fs_comm_set_collnet_switches(c, &cn, 1);
  g_autoptr(FsComm) one = fs_comm_new(8);
  fs_comm_set_nvls_switch(one, 0, &sw0, 1);
  const FsComm *comms[] = {c, one};
  guint built = 0;
  for (guint ci = 0; ci < 2; ci++)
    for (guint a = 0; fs_coll_algos[a]; a++)
      for (guint op = 0; op < FS_COLL_N_OPS; op++) {
        if (fs_coll_algos[a]->unsupported(comms[ci], op) != NULL)
          continue;
        FsCollRequest req = req_of(op, 65536, 2, 8192);
        req.root = 5;
        g_autoptr(FsCollPlan) p = plan_of(comms[ci], fs_coll_algos[a]->name, &req);
        ck_assert_uint_gt(fs_coll_plan_n_steps(p), 0);
        for (guint i = 0; i < fs_coll_plan_n_steps(p); i++) {
          guint nd;
          const uint32_t *d = fs_coll_plan_deps(p, i, &nd);
          for (guint j = 0; j < nd; j++)
            ck_assert_uint_lt(d[j], i);
        }
        if (op != FS_COLL_BARRIER)
          ck_assert_uint_gt(fs_coll_plan_xfer_bytes(p), 0);
        built++;
      }
  ck_assert_uint_ge(built, 30);
}
END_TEST

/* Every transfer depends on the previous transfer on its connection
 * (channel, lane, src, dst), found by a backward scan of the plan, and the
 * plan's connection indices hold (fs_test_check_plan_conns; folded plans:
 * test-coll-fast.c), for every algorithm and op on a 2-host × 4
 * communicator. */
START_TEST(test_plan_fifo_per_connection)
{
  g_autoptr(FsComm) c = fs_comm_new_grid(2, 4);
  int sw0 = 100, sw1 = 101;
  fs_comm_set_nvls_switch(c, 0, &sw0, 1);
  fs_comm_set_nvls_switch(c, 1, &sw1, 1);
  int cn = 200;
  fs_comm_set_collnet_switches(c, &cn, 1);
  guint checked = 0;
  for (guint a = 0; fs_coll_algos[a]; a++)
    for (guint op = 0; op < FS_COLL_N_OPS; op++) {
      if (fs_coll_algos[a]->unsupported(c, op) != NULL)
        continue;
      FsCollRequest req = req_of(op, 65536, 2, 8192);
      g_autoptr(FsCollPlan) p = plan_of(c, fs_coll_algos[a]->name, &req);
      fs_test_check_plan_conns(p, fs_coll_algos[a]->name);
      guint n = fs_coll_plan_n_steps(p);
      for (guint i = 0; i < n; i++) {
        const FsCollStep *s = fs_coll_plan_step(p, i);
        if (s->kind != FS_STEP_XFER)
          continue;
        guint prev = G_MAXUINT;
        for (guint j = i; j-- > 0;)
          if (fs_coll_step_same_conn(fs_coll_plan_step(p, j), s)) {
            prev = j;
            break;
          }
        if (prev == G_MAXUINT)
          continue;
        guint nd;
        const uint32_t *d = fs_coll_plan_deps(p, i, &nd);
        gboolean has_prev = FALSE;
        for (guint j = 0; j < nd; j++)
          has_prev |= d[j] == prev;
        ck_assert_msg(has_prev, "%s op %u: step %u lacks FIFO dep on %u", fs_coll_algos[a]->name,
                        op, i, prev);
        checked++;
      }
    }
  ck_assert_uint_gt(checked, 1000);
}
END_TEST

START_TEST(test_plan_volumes)
{
  g_autoptr(FsComm) c = fs_comm_new(8);
  int sw = 8;
  fs_comm_set_nvls_switch(c, 0, &sw, 1);
  const uint64_t S = 8 * 8192;
  FsCollRequest req = req_of(FS_COLL_ALL_REDUCE, S, 1, 1 << 20);
  /* One-shot: every rank sends S to 7 peers. */
  g_autoptr(FsCollPlan) d = plan_of(c, "direct", &req);
  ck_assert_uint_eq(fs_coll_plan_xfer_bytes(d), 8 * 7 * S);
  /* Rabenseifner: 2 × (1/2 + 1/4 + 1/8) S per rank. */
  g_autoptr(FsCollPlan) r = plan_of(c, "rhd", &req);
  ck_assert_uint_eq(fs_coll_plan_xfer_bytes(r), 8 * 2 * (S / 2 + S / 4 + S / 8));
  ck_assert_uint_eq(fs_coll_plan_depth(r), 6);
  /* NVLS: each GPU link carries S + S/8 up and S/8 + S down. */
  g_autoptr(FsCollPlan) nv = plan_of(c, "nvls", &req);
  uint64_t up = 0, down = 0;
  for (guint i = 0; i < fs_coll_plan_n_steps(nv); i++) {
    const FsCollStep *s = fs_coll_plan_step(nv, i);
    if (s->kind != FS_STEP_XFER)
      continue;
    if (FS_EP_KIND(s->dst) == FS_EP_NVLS_KIND && FS_EP_INDEX(s->src) == 3)
      up += s->bytes;
    if (FS_EP_KIND(s->src) == FS_EP_NVLS_KIND && FS_EP_INDEX(s->dst) == 3)
      down += s->bytes;
  }
  ck_assert_uint_eq(up, S + S / 8);
  ck_assert_uint_eq(down, S + S / 8);
  /* PAT all_gather: n-1 blocks per rank in ceil(log2 n) steps. */
  req.op = FS_COLL_ALL_GATHER;
  req.bytes = 4096;
  g_autoptr(FsComm) c6 = fs_comm_new(6);
  g_autoptr(FsCollPlan) pat = plan_of(c6, "pat", &req);
  ck_assert_uint_eq(fs_coll_plan_xfer_bytes(pat), 6 * 5 * 4096);
  ck_assert_uint_eq(fs_coll_plan_depth(pat), 3);
}
END_TEST

/* CollNetDirect all_gather and reduce_scatter on 2 hosts × 4 (one CollNet
 * switch): every rank receives the whole output of all_gather (its rail's
 * nh blocks from the switch, the other rails' from its 3 peers), and every
 * rank sends its rail's nh blocks (the host's sum) up for reduce_scatter
 * and gets back only its own block. */
START_TEST(test_plan_collnet_rails)
{
  g_autoptr(FsComm) c = fs_comm_new_grid(2, 4);
  int cn = 200;
  fs_comm_set_collnet_switches(c, &cn, 1);
  const uint64_t S = 4 * 8192;
  for (guint k = 0; k < 2; k++) {
    FsCollRequest req = req_of(k == 0 ? FS_COLL_ALL_GATHER : FS_COLL_REDUCE_SCATTER, S, 2, 8192);
    g_autoptr(FsCollPlan) p = plan_of(c, "collnet_direct", &req);
    uint64_t into3 = 0, up3 = 0, down3 = 0;
    for (guint i = 0; i < fs_coll_plan_n_steps(p); i++) {
      const FsCollStep *s = fs_coll_plan_step(p, i);
      if (s->kind != FS_STEP_XFER)
        continue;
      if (s->dst == FS_EP_RANK(3))
        into3 += s->bytes;
      if (s->src == FS_EP_RANK(3) && FS_EP_KIND(s->dst) == FS_EP_COLLNET_KIND)
        up3 += s->bytes;
      if (s->dst == FS_EP_RANK(3) && FS_EP_KIND(s->src) == FS_EP_COLLNET_KIND)
        down3 += s->bytes;
    }
    if (k == 0) {
      ck_assert_uint_eq(into3, 8 * S);
      ck_assert_uint_eq(up3, S);
      ck_assert_uint_eq(down3, 2 * S);
    } else {
      ck_assert_uint_eq(up3, 2 * S);
      ck_assert_uint_eq(down3, S);
      ck_assert_uint_eq(into3, 3 * 2 * S + S);
    }
  }
}
END_TEST

/* NVLS across hosts (NVLS+SHARP) on 2 hosts × 4, one NVLS switch per host
 * and one CollNet switch: rank 3 heads shard 3.  all_reduce: the host's
 * load-reduce returns shard 3 (S/4), which goes to the network and back;
 * all_gather: its block up, its rail's 2 blocks back, stored once in the
 * NVLS switch, and every rail's 2 blocks multicast to it (8 S);
 * reduce_scatter: its 4 rails' 2 blocks into the load-reduce, the rail's
 * sum (2 S) up, its own block (S) back. */
START_TEST(test_plan_nvls_sharp)
{
  g_autoptr(FsComm) c = fs_comm_new_grid(2, 4);
  int sw0 = 100, sw1 = 101, cn = 200;
  fs_comm_set_nvls_switch(c, 0, &sw0, 1);
  fs_comm_set_nvls_switch(c, 1, &sw1, 1);
  g_autoptr(FsComm) bare = fs_comm_new_grid(2, 4);
  fs_comm_set_nvls_switch(bare, 0, &sw0, 1);
  fs_comm_set_nvls_switch(bare, 1, &sw1, 1);
  ck_assert_ptr_nonnull(strstr(fs_coll_algo_find("nvls")->unsupported(bare, FS_COLL_ALL_REDUCE), "SHARP"));
  fs_comm_set_collnet_switches(c, &cn, 1);
  const uint64_t S = 4 * 8192;
  const FsCollOp ops[] = {FS_COLL_ALL_REDUCE, FS_COLL_ALL_GATHER, FS_COLL_REDUCE_SCATTER};
  /* Expected per op: to the network, from it, into the NVLS switch, from it. */
  const uint64_t want[3][4] = {
    {S / 4, S / 4, S + S / 4, S / 4 + S},
    {S, 2 * S, 2 * S, 8 * S},
    {2 * S, S, 8 * S, 2 * S},
  };
  for (guint k = 0; k < 3; k++) {
    FsCollRequest req = req_of(ops[k], S, 2, 8192);
    g_autoptr(FsCollPlan) p = plan_of(c, "nvls", &req);
    uint64_t got[4] = {0};
    for (guint i = 0; i < fs_coll_plan_n_steps(p); i++) {
      const FsCollStep *s = fs_coll_plan_step(p, i);
      if (s->kind != FS_STEP_XFER)
        continue;
      gboolean from3 = s->src == FS_EP_RANK(3), to3 = s->dst == FS_EP_RANK(3);
      got[0] += from3 && FS_EP_KIND(s->dst) == FS_EP_COLLNET_KIND ? s->bytes : 0;
      got[1] += to3 && FS_EP_KIND(s->src) == FS_EP_COLLNET_KIND ? s->bytes : 0;
      got[2] += from3 && FS_EP_KIND(s->dst) == FS_EP_NVLS_KIND ? s->bytes : 0;
      got[3] += to3 && FS_EP_KIND(s->src) == FS_EP_NVLS_KIND ? s->bytes : 0;
    }
    for (guint j = 0; j < 4; j++)
      ck_assert_msg(got[j] == want[k][j], "%s: flow %u: %" G_GUINT64_FORMAT " B, want %" G_GUINT64_FORMAT,
                    fs_coll_op_name(ops[k]), j, got[j], want[k][j]);
  }
}
END_TEST

START_TEST(test_plan_unsupported_reasons)
{
  g_autoptr(FsComm) c = fs_comm_new(6);
  GError *err = NULL;
  FsCollRequest req = req_of(FS_COLL_ALL_REDUCE, 1024, 1, 1024);
  ck_assert_ptr_null(fs_coll_plan_new(c, fs_coll_algo_find("nvls"), &req, &err));
  fs_assert_error(err, FS_COLL_ERROR, "no NVLS");
  ck_assert_ptr_null(fs_coll_plan_new(c, fs_coll_algo_find("collnet_direct"), &req, &err));
  fs_assert_error(err, FS_COLL_ERROR, "CollNet");
  req.op = FS_COLL_ALL_GATHER;
  ck_assert_ptr_null(fs_coll_plan_new(c, fs_coll_algo_find("rhd"), &req, &err));
  fs_assert_error(err, FS_COLL_ERROR, "power-of-two");
  req.op = FS_COLL_BROADCAST;
  req.root = 6;
  ck_assert_ptr_null(fs_coll_plan_new(c, fs_coll_algo_find("ring"), &req, &err));
  fs_assert_error(err, FS_COLL_ERROR, "root 6");
}
END_TEST

START_TEST(test_plan_step_limit)
{
  /* 64 ranks × 8 channels of ring all_reduce: 8 × (126 × 64 transfers +
   * 64 local copies) steps, over a guard of 50,000 (the default guard is
   * FS_COLL_PLAN_MAX_STEPS). */
  g_autoptr(FsComm) c = fs_comm_new(64);
  FsCollRequest req = req_of(FS_COLL_ALL_REDUCE, 1u << 24, 8, 1u << 20);
  req.max_steps = 50000;
  GError *err = NULL;
  ck_assert_ptr_null(fs_coll_plan_new(c, fs_coll_algo_find("ring"), &req, &err));
  fs_assert_error(err, FS_RUNTIME_ERROR, "more than 50000 steps");
  req.max_steps = 8 * 127 * 64;
  g_autoptr(FsCollPlan) p = plan_of(c, "ring", &req);
  ck_assert_uint_eq(fs_coll_plan_n_steps(p), 8 * 127 * 64);
}
END_TEST

START_TEST(test_plan_count_steps)
{
  /* Counting without building gives the steps a build makes, whatever the
   * guard (the count is what decides that a plan is past it), for every
   * algorithm that runs here; a bad request fails as the build does. */
  g_autoptr(FsComm) c = fs_comm_new_grid(4, 4);
  static const char *const algos[] = {"ring", "tree", "hier", "pat", "rhd", "direct"};
  static const FsCollOp ops[] = {FS_COLL_ALL_REDUCE, FS_COLL_ALL_GATHER, FS_COLL_BROADCAST};
  guint checked = 0;
  for (guint a = 0; a < G_N_ELEMENTS(algos); a++)
    for (guint o = 0; o < G_N_ELEMENTS(ops); o++) {
      FsCollRequest req = req_of(ops[o], 3u << 20, 4, 1u << 18);
      const FsCollAlgo *algo = fs_coll_algo_find(algos[a]);
      GError *err = NULL;
      g_autoptr(FsCollPlan) p = fs_coll_plan_new(c, algo, &req, &err);
      if (p == NULL) {
        g_clear_error(&err);
        continue;
      }
      guint64 n = 0;
      req.max_steps = 10; /* the count is not bounded by the guard */
      ck_assert(fs_coll_plan_count_steps(c, algo, &req, &n, &err));
      fs_assert_no_error(err);
      ck_assert_uint_eq(n, fs_coll_plan_n_steps(p));
      checked++;
    }
  ck_assert_uint_ge(checked, 8);
  FsCollRequest bad = req_of(FS_COLL_ALL_REDUCE, 1u << 20, 0, 1u << 18);
  guint64 n = 7;
  GError *err = NULL;
  ck_assert(!fs_coll_plan_count_steps(c, fs_coll_algo_find("ring"), &bad, &n, &err));
  fs_assert_error(err, FS_COLL_ERROR, "channels must be 1..64");
}
END_TEST

START_TEST(test_plan_deterministic)
{
  g_autoptr(FsComm) c = fs_comm_new_grid(2, 4);
  FsCollRequest req = req_of(FS_COLL_ALL_REDUCE, 1 << 20, 4, 65536);
  g_autoptr(FsCollPlan) a = plan_of(c, "hier", &req);
  g_autoptr(FsCollPlan) b = plan_of(c, "hier", &req);
  ck_assert_uint_eq(fs_coll_plan_n_steps(a), fs_coll_plan_n_steps(b));
  for (guint i = 0; i < fs_coll_plan_n_steps(a); i++) {
    const FsCollStep *x = fs_coll_plan_step(a, i), *y = fs_coll_plan_step(b, i);
    ck_assert(x->src == y->src && x->dst == y->dst && x->bytes == y->bytes && x->n_deps == y->n_deps);
  }
  g_autofree char *d = fs_coll_plan_describe(a);
  ck_assert_ptr_nonnull(strstr(d, "hier all_reduce 8 ranks 4 ch"));
}
END_TEST

START_TEST(test_ncclt_float_format)
{
  char b[16];
  fs_ncclt_float(12.3456, 6, b);
  ck_assert_str_eq(b, " 12.35");
  fs_ncclt_float(1234.56, 6, b);
  ck_assert_str_eq(b, "1234.6");
  fs_ncclt_float(123456.7, 6, b);
  ck_assert_str_eq(b, "123457");
  fs_ncclt_float(12345678.0, 6, b);
  ck_assert_str_eq(b, " 1e+07");
  fs_ncclt_float(27.55, 7, b);
  ck_assert_str_eq(b, "  27.55");
  fs_ncclt_float(123456789.0, 7, b);
  ck_assert_str_eq(b, "1.2e+08");
}
END_TEST

START_TEST(test_ncclt_table_layout)
{
  g_autoptr(GString) s = g_string_new(NULL);
  fs_ncclt_table_header(s);
  const char *want_header =
    "#\n"
    "#                                                              out-of-place                       in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n";
  ck_assert_str_eq(s->str, want_header);
  g_string_truncate(s, 0);
  FsNcclTestsRow row = {
    .type_name = "float", .redop_label = "sum", .root = -1,
    .oop_time_us = 27.55, .oop_algbw = 38.07, .oop_busbw = 66.62,
    .ip_time_us = 27.05, .ip_algbw = 38.77, .ip_busbw = 67.84,
    .algo = "ring", .proto = "LL128", .channels = 16,
  };
  fs_coll_sizes(FS_COLL_ALL_REDUCE, 1048576, FS_COLL_DT_FLOAT, 8, &row.sizes);
  fs_ncclt_row(s, &row);
  ck_assert_str_eq(s->str, "     1048576        262144     float     sum      -1    27.55   38.07   66.62    N/A"
                           "    27.05   38.77   67.84    N/A  # ring/LL128/16\n");
  g_string_truncate(s, 0);
  fs_ncclt_footer(s, FS_COLL_ALL_REDUCE, 67.23);
  ck_assert_str_eq(s->str, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 67.23 \n#\n"
                           "# Collective test concluded: all_reduce_perf\n");
  json_t *j = fs_ncclt_row_json(&row);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "size_bytes")), 1048576);
  ck_assert_str_eq(json_string_value(json_object_get(j, "algo")), "ring");
  ck_assert_double_eq_tol(json_real_value(json_object_get(j, "busbw_GBps")), 66.62, 1e-12);
  json_decref(j);
}
END_TEST

START_TEST(test_ncclt_header_lines)
{
  g_autoptr(GString) s = g_string_new(NULL);
  FsNcclTestsHeader h = {
    .op = FS_COLL_ALL_GATHER, .version_tag = "fabricsim-0.1.0", .nccl_version_code = 23007,
    .nthreads = 1, .ngpus = 8, .min_bytes = 8, .max_bytes = 134217728, .step_factor = 2,
    .warmup_iters = 1, .iters = 20, .agg_iters = 1, .validation = 0,
  };
  FsNcclTestsDevice d = {.rank = 0, .hostname = "node0", .device = 0, .name = "NVIDIA H100 80GB HBM3"};
  fs_ncclt_header(s, &h, &d, 1);
  ck_assert_str_eq(s->str,
                   "# nccl-tests version fabricsim-0.1.0 nccl-headers=23007 nccl-library=23007\n"
                   "# Collective test starting: all_gather_perf\n"
                   "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 1 iters: 20 "
                   "agg iters: 1 validation: 0 graph: 0 unalign: 0\n"
                   "#\n"
                   "# Using devices\n"
                   "#  Rank  0 Group  0 Pid      0 on      node0 device  0 [0000:00:00] NVIDIA H100 80GB HBM3\n");
}
END_TEST

/* nccl-tests' launch flags and the host floor they set (coll/launch.h). */
START_TEST(test_launch)
{
  FsCollLaunch l;
  GError *error = NULL;
  ck_assert(fs_coll_launch_parse(NULL, &l, &error));
  ck_assert_uint_eq(l.threads, 1);
  ck_assert_uint_eq(l.gpus_per_thread, 1);
  ck_assert_uint_eq(l.graph_iters, 0);
  ck_assert_double_eq_tol(fs_coll_launch_host_us(&l, 4.1), 4.1, 1e-12);
  ck_assert(fs_coll_launch_parse("-g  8 -t 2 (one process, two threads)", &l, &error));
  ck_assert_uint_eq(l.threads, 2);
  ck_assert_uint_eq(l.gpus_per_thread, 8);
  ck_assert_double_eq_tol(fs_coll_launch_host_us(&l, 4.1), 32.8, 1e-9);
  g_autofree char *d = fs_coll_launch_describe(&l);
  ck_assert_str_eq(d, "-t 2 -g 8");
  ck_assert(fs_coll_launch_parse("--ngpus 8 --cudagraph 4", &l, &error));
  ck_assert_double_eq_tol(fs_coll_launch_host_us(&l, 4.1), 8.2, 1e-9);
  g_autofree char *d2 = fs_coll_launch_describe(&l);
  ck_assert_str_eq(d2, "-t 1 -g 8 -G 4");
  ck_assert(!fs_coll_launch_parse("-g 0", &l, &error));
  ck_assert_str_eq(error->message, "-g takes a count from 1 to 1024, got \"0\"");
  g_clear_error(&error);
  ck_assert(!fs_coll_launch_parse("-g 2 -g 4", &l, &error));
  ck_assert_str_eq(error->message, "-g is given twice");
  g_clear_error(&error);
  ck_assert(!fs_coll_launch_parse("-t", &l, &error));
  g_clear_error(&error);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("coll");
  FS_ADD_TEST(s, test_coll_busbw_factors);
  FS_ADD_TEST(s, test_coll_sizes_match_nccl_tests);
  FS_ADD_TEST(s, test_coll_names_roundtrip);
  FS_ADD_TEST(s, test_comm_hosts_and_rings);
  FS_ADD_TEST(s, test_comm_nvlink_domains);
  FS_ADD_TEST(s, test_plan_ring_all_reduce_steps);
  FS_ADD_TEST(s, test_plan_ring_other_ops);
  FS_ADD_TEST(s, test_btree_shape);
  FS_ADD_TEST(s, test_plan_tree_depth_log_n);
  FS_ADD_TEST(s, test_plan_every_algorithm_builds);
  FS_ADD_TEST(s, test_plan_fifo_per_connection);
  FS_ADD_TEST(s, test_plan_volumes);
  FS_ADD_TEST(s, test_plan_collnet_rails);
  FS_ADD_TEST(s, test_plan_nvls_sharp);
  FS_ADD_TEST(s, test_plan_unsupported_reasons);
  FS_ADD_TEST(s, test_plan_step_limit);
  FS_ADD_TEST(s, test_plan_count_steps);
  FS_ADD_TEST(s, test_plan_deterministic);
  FS_ADD_TEST(s, test_ncclt_float_format);
  FS_ADD_TEST(s, test_ncclt_table_layout);
  FS_ADD_TEST(s, test_ncclt_header_lines);
  FS_ADD_TEST(s, test_launch);
  return fs_test_run_suite(s);
}
