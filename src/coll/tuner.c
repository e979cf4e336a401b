/* tuner.c — NCCL's cost model (tuning.cc), the tuner and the α-β
 * explanation.  See tuner.h; the tuner's inputs (NCCL_ALGO / NCCL_PROTO)
 * are parsed in tuner-prefs.c.
 *
 * The model is evaluated by one function that can also narrate its
 * arithmetic into a GString, so `explain` and the tuner cannot disagree. */
#include "coll/tuner.h"

#include <math.h>
#include <string.h>

static guint log2i(guint64 x)
{
  guint r = 0;
  while (x >>= 1)
    r++;
  return r;
}

static guint ceil_log2(guint n)
{
  guint r = 0;
  while (((guint64)1 << r) < n)
    r++;
  return r;
}

/* NCCL's nsteps: the ring steps, and n for an op without a ring phase. */
static guint nccl_nsteps(FsCollOp op, guint n)
{
  gboolean ring = op == FS_COLL_ALL_REDUCE || op == FS_COLL_REDUCE_SCATTER ||
                  op == FS_COLL_ALL_GATHER;
  return ring ? fs_coll_ring_steps(op, n) : n;
}

FsCollRequest fs_coll_choice_request(const FsCollChoice *ch, FsCollOp op, uint64_t unit_bytes,
                                     FsCollDtype dtype, FsCollRedop redop, guint root)
{
  return (FsCollRequest){
    .op = op, .bytes = unit_bytes, .dtype = dtype, .redop = redop, .root = root,
    .proto = ch->proto, .nchannels = ch->nchannels, .chunk_bytes = ch->chunk_bytes,
    .slice_bytes = ch->slice_bytes, .conn_slots = ch->conn_slots,
  };
}

uint64_t fs_coll_nccl_bytes(FsCollOp op, const FsCollSizes *sizes, guint nranks)
{
  return fs_coll_unit_is_block(op) ? sizes->unit_bytes * nranks : sizes->unit_bytes;
}

/* Appends to why when narrating. */
static void say(GString *why, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void say(GString *why, const char *fmt, ...)
{
  if (why == NULL)
    return;
  va_list ap;
  va_start(ap, fmt);
  g_string_append_vprintf(why, fmt, ap);
  va_end(ap);
}

/* NVLS across hosts (NVLS+SHARP): NCCL offers it only with CollNet
 * enabled (tuning.cc: "Disable ... Collnet+NVLS if collnet is not
 * supported"), and all_gather/reduce_scatter only where CollNet runs
 * them (2.20+, one NIC per rank: the collNetHeadsNum check). */
static gboolean nvls_net_offered(const FsNcclParams *p, const FsCollSysInfo *sys, guint ppn, gboolean agrs)
{
  if (!sys->collnet)
    return FALSE;
  return !agrs || (p->collnet_agrs && ppn <= sys->collnet_heads);
}

/* NCCL's NVLS graph (src/graph/search.cc, pattern NVLS), the graph NVLS and
 * NVLSTree are priced on (tuning.cc graphs[NVLS] = graphs[NVLS_TREE]): one
 * channel per head (sys->nvls_heads, at least 1 here).  Every channel pulls
 * from every GPU through the NVSwitch and twice from its head
 * (ncclTopoSearchTryNvls: "d0 == g ? 2 : 1"), so a channel's bwIntra is a
 * GPU's NVLink bandwidth / (heads + 1); across hosts each head crosses on
 * its own NIC (ncclTopoSearchRecNet reserves bwInter on the head's NIC), so
 * a channel's bwInter is one NIC's bandwidth.  On one host nothing bounds
 * bwInter (the search raises it above bwIntra): *inter_ch = *intra_ch. */
static void nvls_graph(const FsCollSysInfo *sys, guint nh, guint *heads, double *intra_ch, double *inter_ch)
{
  *heads = MAX(sys->nvls_heads, 1u);
  *intra_ch = sys->bw_intra * sys->max_channels / (*heads + 1);
  *inter_ch = nh > 1 && sys->net_bw_gbps > 0 ? sys->net_bw_gbps : *intra_ch;
}

/* NCCL's model for the algorithms it has. */
static gboolean cost_nccl(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                          FsCollOp op, FsNcclAlgo a, FsCollProto pr, guint nch, uint64_t nbytes,
                          FsCollCost *c, GString *why)
{
  guint n = fs_comm_size(comm), nh = fs_comm_n_hosts(comm), ppn = fs_comm_ppn(comm);
  FsNcclRow row = sys->arch;
  guint col = nh == 1 ? 0 : nh == 2 ? 1 : 2;
  gboolean simple = pr == FS_PROTO_SIMPLE;
  gboolean ar = op == FS_COLL_ALL_REDUCE;
  gboolean agrs = op == FS_COLL_ALL_GATHER || op == FS_COLL_REDUCE_SCATTER;
  const char *an = fs_nccl_algo_name(a), *pn = fs_coll_proto_name(pr);

  /* Which pairs NCCL gives a bandwidth at all (none for an algorithm the
   * release does not have). */
  if (p->algo_absent & ((guint64)1 << a))
    return FALSE;
  if ((a == FS_NCCL_ALGO_NVLS || a == FS_NCCL_ALGO_NVLS_TREE || a == FS_NCCL_ALGO_COLLNET_DIRECT ||
       a == FS_NCCL_ALGO_COLLNET_CHAIN || a == FS_NCCL_ALGO_PAT) && !simple)
    return FALSE;
  if ((a == FS_NCCL_ALGO_NVLS || a == FS_NCCL_ALGO_NVLS_TREE) && sys->nvls_channels < 2)
    return FALSE;
  if ((a == FS_NCCL_ALGO_COLLNET_DIRECT || a == FS_NCCL_ALGO_COLLNET_CHAIN) && !sys->collnet)
    return FALSE;
  if (a == FS_NCCL_ALGO_PAT && ppn != 1)
    return FALSE;

  c->nsteps = nccl_nsteps(op, n);
  gboolean collnet = a == FS_NCCL_ALGO_COLLNET_DIRECT || a == FS_NCCL_ALGO_COLLNET_CHAIN;
  gboolean nvls = a == FS_NCCL_ALGO_NVLS || a == FS_NCCL_ALGO_NVLS_TREE;
  double bw = (nh <= 2 || collnet) ? sys->bw_intra : sys->bw_inter;
  double bus = nch * bw;
  if (!nvls)
    say(why, "bandwidth: bus = %u ch × %.2f GB/s (%s) = %.2f GB/s\n", nch, bw,
        (nh <= 2 || collnet) ? "bwIntra" : "bwInter", bus);
  double llmax = nh == 1 ? p->ll_max_bw_single[row]
                         : p->ll_max_bw_multi[sys->cpu == FS_NCCL_CPU_AMD ? 1 : 0][nh <= 2 ? 0 : 1];

  /* NCCL's per-channel caps multiply its graph's channels (graphs[a]->nChannels), which
   * across hosts are half the channels it runs (sys->graph_channels). */
  guint capch = sys->graph_channels > 0 ? MIN(nch, sys->graph_channels) : nch;
  gboolean nvls_legacy = nvls && p->f_nvls_legacy_ratio > 0;
  guint heads = 0;
  double intra_ch = 0, inter_ch = 0;
  if (nvls) {
    nvls_graph(sys, nh, &heads, &intra_ch, &inter_ch);
    say(why, "bandwidth: NVLS graph of %u head%s (one channel each; %u NVLS channel%s run it): "
        "bwIntra = %.2f GB/s per GPU / (%u+1) = %.2f GB/s", heads, heads == 1 ? "" : "s",
        sys->nvls_channels, sys->nvls_channels == 1 ? "" : "s", sys->bw_intra * sys->max_channels,
        heads, intra_ch);
    if (nh > 1)
      say(why, ", bwInter = one NIC per head = %.2f GB/s", inter_ch);
    say(why, "\n");
  }
  if (nvls_legacy) {
    /* Before 2.28: nCh × min(bwIntra, bwInter; halved for NVLSTree beyond 2 nodes), × a ratio
     * for algbw (tuning.cc v2.26: "bw = std::min(graphs[a]->bwIntra, nNodes <= 2 ?
     * graphs[a]->bwInter : graphs[a]->bwInter/2)"). */
    double inter = a == FS_NCCL_ALGO_NVLS_TREE && nh > 2 ? inter_ch / 2 : inter_ch;
    double per = nh > 1 ? MIN(intra_ch, inter) : intra_ch;
    bus = heads * per;
    say(why, "  NVLS (before 2.28): bus = %u ch × min(bwIntra %.2f%s) = %.2f GB/s\n", heads, intra_ch,
        nh > 1 ? (a == FS_NCCL_ALGO_NVLS_TREE && nh > 2 ? ", bwInter/2" : ", bwInter") : "", bus);
    if (nh > 1 && a == FS_NCCL_ALGO_NVLS && !nvls_net_offered(p, sys, ppn, agrs))
      return FALSE;
  } else if (nvls) {
    /* tuning.cc 2.28+: "NVLS/NVLStree needs at least 2 channels". */
    if (heads < 2)
      return FALSE;
    double intra = intra_ch * p->nvls_eff[row] * (heads - 1) / heads;
    say(why, "  NVLS: intra = bwIntra %.2f × efficiency %.2f × (%u-1)/%u", intra_ch, p->nvls_eff[row],
        heads, heads);
    if (ar) {
      intra *= 2;
      say(why, " × 2 (all_reduce pipelines two operations)");
    } else {
      intra *= (double)(ppn - 1) / ppn;
      say(why, " × (ppn-1)/ppn");
    }
    say(why, " = %.2f GB/s per channel\n", intra);
    double per = intra;
    if (nh > 1) {
      double inter = inter_ch * ((nh <= 2 && a == FS_NCCL_ALGO_NVLS_TREE) ? 2 : 1);
      per = MIN(per, inter);
      say(why, "  inter = bwInter%s = %.2f GB/s; min = %.2f GB/s per channel\n",
          (nh <= 2 && a == FS_NCCL_ALGO_NVLS_TREE) ? " × 2 (2 nodes)" : "", inter, per);
    }
    if (a == FS_NCCL_ALGO_NVLS_TREE && p->nvls_tree_bw[row][col] > 0) {
      per = MIN(per, p->nvls_tree_bw[row][col]);
      say(why, "  cap %.2f GB/s per channel (perChMaxNVLSTreeBw): %.2f GB/s\n", p->nvls_tree_bw[row][col], per);
    }
    bus = heads * per;
    say(why, "  bus = %u ch × %.2f GB/s = %.2f GB/s\n", heads, per, bus);
    if (nh > 1 && a == FS_NCCL_ALGO_NVLS && !nvls_net_offered(p, sys, ppn, agrs))
      return FALSE;
  } else if (a == FS_NCCL_ALGO_RING && pr == FS_PROTO_LL) {
    double f = nh == 1 && !ar && op != FS_COLL_REDUCE && p->f_ring_ll_one_host_other > 0
                   ? p->f_ring_ll_one_host_other
                   : p->f_ring_ll;
    bus = MIN(llmax, bus * f);
    say(why, "  Ring+LL: min(llMaxBw %.2f, bus × %.2f) = %.2f GB/s\n", llmax, f, bus);
  } else if (a == FS_NCCL_ALGO_RING && pr == FS_PROTO_LL128) {
    double f = ppn < 2 ? p->f_ring_ll128_one_ppn : p->f_ring_ll128;
    bus = MIN(bus * f, capch * p->ring_ll128_bw[row][col]);
    say(why, "  Ring+LL128: min(bus × %.2f, %u graph ch × %.2f) = %.2f GB/s\n", f, capch,
        p->ring_ll128_bw[row][col], bus);
  } else if (a == FS_NCCL_ALGO_TREE) {
    if (ar) {
      bus = MIN(bus * p->f_tree_ar, capch * p->tree_bw[row][col]);
      say(why, "  Tree all_reduce: min(bus × %.2f, %u graph ch × %.2f) = %.2f GB/s\n", p->f_tree_ar, capch,
          p->tree_bw[row][col], bus);
    }
    if (pr == FS_PROTO_LL) {
      bus = MIN(bus / p->f_tree_ll_div, llmax);
      say(why, "  Tree+LL: min(bus / %.2f, llMaxBw %.2f) = %.2f GB/s\n", p->f_tree_ll_div, llmax, bus);
    } else if (pr == FS_PROTO_LL128) {
      double f = nh == 1 ? p->f_tree_ll128_one_host : p->f_ll128;
      bus = MIN(bus * f, capch * p->tree_ll128_bw[row][col]);
      say(why, "  Tree+LL128: min(bus × %.4f, %u graph ch × %.2f) = %.2f GB/s\n", f, capch,
          p->tree_ll128_bw[row][col], bus);
    }
  } else if (a == FS_NCCL_ALGO_PAT) {
    bus *= p->f_pat;
    say(why, "  PAT: × %.2f = %.2f GB/s\n", p->f_pat, bus);
  } else if (a == FS_NCCL_ALGO_COLLNET_DIRECT && agrs) {
    /* 2.20+: every rank of a host needs a head (NIC) of its own. */
    if (!p->collnet_agrs || ppn > sys->collnet_heads)
      return FALSE;
    /* NCCL's CollNet graph gives each GPU a channel to its NIC at the NIC's
     * speed: bwIntra = bwInter = one GPU's network bandwidth. */
    double cap = p->collnet_agrs_inter > 0 ? sys->net_bw_gbps * MIN(1.0, p->collnet_agrs_inter)
                                           : sys->net_bw_gbps;
    double w = (ppn - 1) / 7.0;
    double f = w * p->collnet_agrs_ppn8 + (1 - w) * p->collnet_agrs_ppn1;
    bus = ppn * cap * f;
    say(why, "  CollNetDirect all_gather/reduce_scatter: bus = %u ppn × %.2f GB/s × %.3f = %.2f GB/s\n",
        ppn, cap, f, bus);
  } else if (a == FS_NCCL_ALGO_COLLNET_DIRECT) {
    /* NCCL prices its CollNetDirect graph (2.22+, search.cc pattern COLLNET_DIRECT): one
     * channel per head (NIC-local GPU), bwIntra the head's NIC speed, at most what the
     * head's NVLinks carry when every other GPU also sends each other head 1/(ppn-1) of a
     * channel (ncclTopoSearchTryCollnetDirect: "mul = 1.0 / (count - 1)").  Before 2.22 the
     * CollNet graph has the ring graph's channels (direct_heads 0). */
    double g = nch;
    if (p->direct_heads > 0 && sys->collnet_heads > 0 && sys->net_bw_gbps > 0) {
      g = sys->collnet_heads;
      double per = sys->net_bw_gbps;
      if (ppn > 1)
        per = MIN(per, sys->bw_intra * sys->max_channels / (1 + (g - 1) / (ppn - 1)));
      bus = g * per;
      say(why, "  CollNetDirect graph: %u head%s × bwIntra %.2f GB/s (the head's NIC) = %.2f GB/s\n",
          sys->collnet_heads, sys->collnet_heads == 1 ? "" : "s", per, bus);
    }
    double f = (double)ppn / g;
    f -= (f - 1) / 2;
    if (f > 0)
      bus /= f;
    if (row >= FS_NCCL_ROW_HOPPER)
      bus *= p->f_collnet_sm90;
    say(why, "  CollNetDirect: / arity factor %.3f%s = %.2f GB/s\n", f,
        row >= FS_NCCL_ROW_HOPPER ? " × sm90 factor" : "", bus);
  }
  c->busbw_gbps = bus;
  if (bus <= 0)
    return FALSE;

  /* Bus → algorithm bandwidth. */
  double alg;
  if (nvls_legacy) {
    alg = bus * p->f_nvls_legacy_ratio;
    say(why, "  algorithm bandwidth = bus × %.4f = %.2f GB/s\n", p->f_nvls_legacy_ratio, alg);
  } else if (a == FS_NCCL_ALGO_RING || a == FS_NCCL_ALGO_NVLS || a == FS_NCCL_ALGO_NVLS_TREE) {
    alg = bus * n / c->nsteps;
    say(why, "  algorithm bandwidth = bus × n/nsteps = %.2f × %u/%u = %.2f GB/s\n", bus, n, c->nsteps, alg);
  } else if (agrs) {
    alg = bus;
    say(why, "  algorithm bandwidth = bus = %.2f GB/s\n", alg);
  } else {
    alg = bus * 0.5;
    say(why, "  algorithm bandwidth = bus × 0.5 = %.2f GB/s\n", alg);
  }

  /* Latency. */
  FsNcclAlgo inter_algo = ppn == 1 ? FS_NCCL_ALGO_TREE : a;
  double base = p->base_lat[a][pr];
  double intra_lat = p->hw_lat[sys->intra_hw][a][pr];
  double inter_lat = p->hw_lat[FS_NCCL_HW_NET][inter_algo][pr] + sys->latency_inter +
                     (simple ? sys->latency_inter : 0);
  double lat = base;
  c->base_us = base;
  say(why, "latency: base %.2f us (%s/%s)", base, an, pn);
  switch (a) {
  case FS_NCCL_ALGO_RING: {
    if (nh > 1) {
      double ovh = p->net_overhead_us[sys->cpu] * (simple ? p->net_overhead_simple_mult : 1);
      intra_lat = MAX(intra_lat, ovh);
    }
    guint ninter = nh == 1 ? 0 : ar ? 2 * (nh - 1) : nh - 1;
    c->inter_steps = ninter;
    lat += (c->nsteps - ninter) * intra_lat + ninter * inter_lat;
    say(why, " + %u steps × %.2f us (%s)", c->nsteps - ninter, intra_lat, fs_nccl_hw_name(sys->intra_hw));
    if (ninter)
      say(why, " + %u steps × %.2f us (NET)", ninter, inter_lat);
    break;
  }
  case FS_NCCL_ALGO_TREE:
    lat += 2 * ((ppn - 1) * intra_lat + log2i(nh) * inter_lat);
    say(why, " + 2 × ((%u-1) × %.2f + log2(%u) × %.2f) us", ppn, intra_lat, nh, inter_lat);
    break;
  case FS_NCCL_ALGO_COLLNET_DIRECT:
    lat += 2 * (MIN(1, ppn - 1) * intra_lat + (ppn - 1) * p->collnet_arity_us) + inter_lat;
    say(why, " + 2 × (%u × %.2f + %u × %.2f) + %.2f us", MIN(1, ppn - 1), intra_lat, ppn - 1,
        p->collnet_arity_us, inter_lat);
    break;
  case FS_NCCL_ALGO_COLLNET_CHAIN:
    lat += 2 * (ppn - 1) * intra_lat + inter_lat;
    say(why, " + 2 × %u × %.2f + %.2f us", ppn - 1, intra_lat, inter_lat);
    break;
  case FS_NCCL_ALGO_NVLS:
    lat = intra_lat + (nh > 1 ? inter_lat : 0);
    say(why, " replaced by the NVLS hw latency %.2f us", lat);
    break;
  case FS_NCCL_ALGO_NVLS_TREE:
    lat += intra_lat + 2 * log2i(nh) * inter_lat;
    say(why, " + %.2f + 2 × log2(%u) × %.2f us", intra_lat, nh, inter_lat);
    break;
  case FS_NCCL_ALGO_PAT:
    lat += log2i(nh) * (inter_lat / p->pat_inter_div) + n * p->pat_rank_us;
    say(why, " + log2(%u) × %.2f/%.1f + %u × %.2f us", nh, inter_lat, p->pat_inter_div, n, p->pat_rank_us);
    break;
  default:
    break;
  }
  c->intra_lat_us = intra_lat;
  c->inter_lat_us = inter_lat;
  if (a == FS_NCCL_ALGO_TREE && ar) {
    guint idx = MIN(log2i(MAX(nbytes >> 6, 1)), FS_NCCL_TREE_CORR_N - 1);
    alg *= p->tree_corr[pr][idx];
    say(why, "\n  tree correction [%u] × %.2f: algorithm bandwidth %.2f GB/s", idx, p->tree_corr[pr][idx], alg);
  }
  if (a == FS_NCCL_ALGO_RING && simple && ar && nh > 1 && nbytes / ((guint64)nch * n) >= 64) {
    double f = row == FS_NCCL_ROW_VOLTA ? p->f_ring_plateau_old : p->f_ring_plateau;
    lat *= f;
    say(why, "\n  ring plateau: latency × %.2f", f);
  }
  say(why, " = %.2f us\n", lat);
  c->lat_us = lat;
  c->algbw_gbps = alg;
  c->time_us = lat + (double)nbytes / (1000.0 * alg);
  return TRUE;
}

/* The network operations (sends and receives across hosts) that the busiest proxy of the
 * first rank's host posts for one alltoall or sendrecv: the host's ranks' network peers,
 * spread over its nics NICs (PXN hands each to the proxy of the peer's rail); 0 for other
 * ops.  Cost: O(ranks). */
static guint p2p_net_ops_per_proxy(const FsComm *comm, FsCollOp op, guint nics)
{
  guint n = fs_comm_size(comm), h0 = fs_comm_host(comm, 0), ops = 0;
  for (guint r = 0; r < n; r++) {
    if (fs_comm_host(comm, r) != h0)
      continue;
    if (op == FS_COLL_ALLTOALL) {
      for (guint q = 0; q < n; q++)
        ops += fs_comm_host(comm, q) != h0 ? 2 : 0; /* a send to q and a receive from q */
    } else if (op == FS_COLL_SENDRECV) {
      ops += fs_comm_host(comm, (r + 1) % n) != h0 ? 1 : 0;
      ops += fs_comm_host(comm, (r + n - 1) % n) != h0 ? 1 : 0;
    }
  }
  return (ops + MAX(nics, 1u) - 1) / MAX(nics, 1u);
}

/* A plain α-β estimate for fabricsim's own algorithms (rhd, direct,
 * hier), with NCCL's Ring latencies and the protocol's payload. */
static gboolean cost_generic(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                             FsCollOp op, const FsCollAlgo *algo, FsCollProto pr, guint nch,
                             uint64_t nbytes, FsCollCost *c, GString *why)
{
  guint n = fs_comm_size(comm), nh = fs_comm_n_hosts(comm), L = fs_comm_ppn(comm);
  if (pr == FS_PROTO_LL128 && !sys->ll128)
    return FALSE;
  double eff = p->proto[pr].payload;
  /* Across hosts a rank's exchanges leave by its own NIC. */
  double bw = (nh > 1 ? sys->net_bw_gbps / MAX(sys->max_channels, 1u) : sys->bw_intra) * nch * eff;
  /* bytes each rank sends per byte of nbytes, and steps. */
  double load = 1;
  guint steps = 1;
  const char *name = algo->name;
  if (strcmp(name, "rhd") == 0) {
    steps = op == FS_COLL_ALL_REDUCE ? 2 * log2i(n) + ((n & (n - 1)) == 0 ? 0 : 2) : ceil_log2(n);
    load = op == FS_COLL_ALL_REDUCE ? 2.0 * (n - 1) / n : op == FS_COLL_BARRIER ? 0 : (double)(n - 1) / n;
  } else if (strcmp(name, "direct") == 0) {
    steps = op == FS_COLL_BARRIER ? 2 : 1;
    switch (op) {
    case FS_COLL_ALL_REDUCE:
    case FS_COLL_BROADCAST:
    case FS_COLL_REDUCE:
      load = n - 1;
      break;
    case FS_COLL_SENDRECV:
      load = 1;
      break;
    case FS_COLL_BARRIER:
      load = 0;
      break;
    default:
      load = (double)(n - 1) / n;
      break;
    }
  } else {
    steps = 2 * (L - 1) + 2 * (nh - 1);
    load = 2.0 * (n - 1) / n;
  }
  FsNcclHw hw = nh > 1 ? FS_NCCL_HW_NET : sys->intra_hw;
  double step_lat = p->hw_lat[hw][FS_NCCL_ALGO_RING][pr];
  c->nsteps = steps;
  c->base_us = p->base_lat[FS_NCCL_ALGO_RING][pr];
  c->lat_us = c->base_us + steps * step_lat;
  c->intra_lat_us = c->inter_lat_us = step_lat;
  gboolean sched = fs_coll_p2p_scheduled(p, comm, op, algo) && sys->net_bw_gbps > 0;
  double post_us = 0, proxy_gbps = 0;
  guint posts = 0, busy = nch;
  FsP2pShape shape;
  if (sched) {
    /* NCCL's schedule (p2p-sched.h): each channel that carries a rank's network operations
     * moves at most fs_p2p_channel_rate_gbps over the NIC (the operations to one remote group
     * of ranks share their channels). */
    fs_coll_p2p_shape(sys, comm, &shape);
    busy = fs_p2p_net_channels_busy(p, &shape, op, nch);
    bw = MIN(sys->net_bw_gbps, busy * fs_p2p_channel_rate_gbps(p));
    /* The network plugin's proxy, one message after another (p2p-sched.h). */
    proxy_gbps = fs_p2p_proxy_rate_gbps(p, &shape, op, fs_p2p_peer_bytes(op, nbytes, n), nch);
    if (proxy_gbps > 0)
      bw = MIN(bw, proxy_gbps);
    bw *= eff;
    /* Only the blocks of ranks on other hosts cross the network (the others move over the
     * host's links at the same time): alltoall's and the root's of gather and scatter. */
    if ((op == FS_COLL_ALLTOALL || op == FS_COLL_GATHER || op == FS_COLL_SCATTER) && L < n)
      load = (double)(n - L) / n;
    /* A proxy posts its network operations one after the other, each at NCCL's network post
     * overhead (getNetOverhead, per CPU vendor); the latency above holds one send and one
     * receive, each further one waits (models/nccl/README.md, "p2p_schedule"). */
    if (nh > 1 && p->p2p.serial_posts) {
      guint ops = p2p_net_ops_per_proxy(comm, op, sys->net_nics);
      posts = ops > 2 ? ops - 2 : 0;
      post_us = posts * p->net_overhead_us[sys->cpu];
      c->lat_us += post_us;
    }
  }
  c->busbw_gbps = bw;
  c->algbw_gbps = load > 0 ? bw / load : bw;
  c->time_us = c->lat_us + (load > 0 ? (double)nbytes / (1000.0 * c->algbw_gbps) : 0);
  if (sched) {
    double k = fs_p2p_net_flows_per_channel(p, &shape, op, nch);
    g_autofree char *shared = k > 1 ? g_strdup_printf(", %.3g transfers sharing each (NCCL's "
                                                      "schedule groups)", k) : g_strdup("");
    uint64_t msg = fs_p2p_net_chunk_bytes(p, fs_p2p_peer_bytes(op, nbytes, n));
    g_autofree char *proxy = proxy_gbps > 0
      ? g_strdup_printf(", the plugin's proxy %.2f GB/s (%" G_GUINT64_FORMAT " B messages, "
                        "%.2f us + %u stripes × %.2f us each)", proxy_gbps, msg,
                        shape.net_msg_us, fs_p2p_net_stripes(&shape, msg), shape.net_stripe_us)
      : g_strdup("");
    say(why, "bandwidth: min(NIC %.2f GB/s, %u ch × %.2f GB/s per network channel%s%s) × payload "
        "%.4f = %.2f GB/s per rank; each rank sends %.3f × the bytes across hosts: %.2f GB/s\n",
        sys->net_bw_gbps, busy, fs_p2p_channel_rate_gbps(p), shared, proxy, eff, bw, load,
        c->algbw_gbps);
  }
  else
    say(why, "bandwidth: %u ch × %.2f GB/s × payload %.4f = %.2f GB/s per rank; each rank sends %.3f × the bytes: %.2f GB/s\n",
        nch, nh > 1 ? sys->bw_inter : sys->bw_intra, eff, bw, load, c->algbw_gbps);
  if (posts > 0)
    say(why, "latency: base %.2f us (Ring/%s) + %u steps × %.2f us (%s) + %u network posts × "
        "%.2f us (one proxy's) = %.2f us\n", c->base_us, fs_coll_proto_name(pr), steps, step_lat,
        fs_nccl_hw_name(hw), posts, p->net_overhead_us[sys->cpu], c->lat_us);
  else
    say(why, "latency: base %.2f us (Ring/%s) + %u steps × %.2f us (%s) = %.2f us\n", c->base_us,
        fs_coll_proto_name(pr), steps, step_lat, fs_nccl_hw_name(hw), c->lat_us);
  return TRUE;
}

static gboolean cost_impl(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                          FsCollOp op, const FsCollAlgo *algo, FsCollProto pr, guint nch,
                          uint64_t nbytes, FsCollCost *out, GString *why)
{
  memset(out, 0, sizeof *out);
  if (nch == 0 || algo->unsupported(comm, op) != NULL)
    return FALSE;
  if (pr == FS_PROTO_LL128 && !sys->ll128)
    return FALSE;
  gboolean ok = algo->nccl == FS_NCCL_ALGO_NONE
                  ? cost_generic(p, sys, comm, op, algo, pr, nch, nbytes, out, why)
                  : cost_nccl(p, sys, comm, op, algo->nccl, pr, nch, nbytes, out, why);
  if (!ok)
    memset(out, 0, sizeof *out);
  return ok;
}

gboolean fs_coll_cost(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                      FsCollOp op, const FsCollAlgo *algo, FsCollProto proto, guint nch,
                      uint64_t nbytes, FsCollCost *out)
{
  return cost_impl(p, sys, comm, op, algo, proto, nch, nbytes, out, NULL);
}

static gboolean is_p2p(FsCollOp op)
{
  return fs_coll_op_is_p2p(op);
}

void fs_coll_p2p_shape(const FsCollSysInfo *sys, const FsComm *comm, FsP2pShape *out)
{
  *out = (FsP2pShape){
    .nranks = fs_comm_size(comm),
    .nhosts = fs_comm_n_hosts(comm),
    .max_channels = sys->p2p_max_channels ? sys->p2p_max_channels : sys->max_channels,
    .local_channels = sys->p2p_local_channels,
    .net_bw_gbps = sys->net_bw_gbps,
    .net_count = sys->net_count,
    .net_msg_us = sys->net_msg_us,
    .net_stripe_us = sys->net_stripe_us,
    .net_min_stripe = sys->net_min_stripe,
    .net_devices = sys->net_devices,
  };
}

gboolean fs_coll_p2p_scheduled(const FsNcclParams *p, const FsComm *comm, FsCollOp op,
                               const FsCollAlgo *algo)
{
  return p->p2p.on && fs_comm_n_hosts(comm) > 1 && fs_coll_op_is_p2p(op) && algo != NULL &&
         strcmp(algo->name, "direct") == 0;
}

/* NCCL's channel reduction for small messages. */
static guint fit_channels(const FsNcclParams *p, const FsCollAlgo *algo, FsCollProto pr, guint nc,
                          guint nranks, uint64_t nbytes)
{
  guint64 nt = p->proto[pr].max_threads;
  guint64 thr = p->proto[pr].thread_threshold;
  if (algo->nccl == FS_NCCL_ALGO_RING && pr == FS_PROTO_LL)
    thr *= nranks;
  while (nc >= 2 && nbytes < nc * nt * thr)
    nc--;
  return nc;
}

/* The tuner plugin's pick (coll/tuner-plugin.h) for op moving nbytes on comm, as NCCL applies
 * it: the first of the plugin's regions for op and comm's ranks per node that contains
 * (nbytes, ranks) and whose algorithm and protocol NCCL offers (allowed by the masks and given
 * bandwidth by the model: not NCCL_ALGO_PROTO_IGNORE) gets cost 0 and wins, on forced_channels
 * channels when non-zero (--channels), else the algorithm's own.  TRUE with out's
 * algorithm, protocol, channels and cost set; FALSE (out untouched) when the plugin leaves the
 * choice to NCCL's model.  Cost: the regions' vertices, one cost evaluation per candidate. */
static gboolean plugin_pick(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                            FsCollOp op, uint64_t nbytes, guint64 algo_mask, guint proto_mask,
                            guint forced_channels, FsCollChoice *out)
{
  const FsTunerPlugin *t = p->tuner_plugin;
  guint hosts = fs_comm_n_hosts(comm), n = fs_comm_size(comm), nr;
  if (t == NULL || !fs_tuner_plugin_applies(t, hosts))
    return FALSE;
  const FsTunerRegion *r = fs_tuner_plugin_regions(t, &nr);
  for (guint i = 0; i < nr; i++) {
    if (r[i].op != op || n != r[i].ranks_per_node * hosts || !(proto_mask & (1u << r[i].proto)))
      continue;
    guint ai = 0;
    while (fs_coll_algos[ai] && strcmp(fs_coll_algos[ai]->name, r[i].algo) != 0)
      ai++;
    const FsCollAlgo *a = fs_coll_algos[ai];
    if (a == NULL || !(algo_mask & FS_COLL_ALGO_BIT(ai)))
      continue;
    guint nch = forced_channels ? forced_channels
                : (a->nccl == FS_NCCL_ALGO_NVLS || a->nccl == FS_NCCL_ALGO_NVLS_TREE)
                  ? sys->nvls_channels : MAX(sys->max_channels, 1);
    FsCollCost c;
    if (!cost_impl(p, sys, comm, op, a, r[i].proto, nch, nbytes, &c, NULL))
      continue;
    if (!fs_tuner_region_contains(&r[i], (double)nbytes, (double)n))
      continue;
    out->algo = a, out->proto = r[i].proto, out->nchannels = nch, out->cost = c;
    out->plugin = fs_tuner_plugin_name(t);
    return TRUE;
  }
  return FALSE;
}

/* See tuner.h. Point-to-point ops take direct (rhd for hypercube and barrier) with LL below the
 * p2p threshold; the others take the cheapest of NCCL's algorithms and the allowed protocols by
 * the cost model, or the forced algorithm even when the model gives it no bandwidth. Channels
 * are then cut for small messages as NCCL does, and the chunk, slice and credit sizes come from
 * p. Costs one cost evaluation per algorithm and protocol. */
gboolean fs_coll_tune(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                      FsCollOp op, uint64_t nbytes, const FsCollPrefs *prefs, FsCollChoice *out,
                      GError **error)
{
  memset(out, 0, sizeof *out);
  guint n = fs_comm_size(comm);
  guint maxch = MAX(sys->max_channels, 1);
  gboolean found = FALSE;
  double best = INFINITY;
  guint64 algo_mask = prefs->algo_mask & prefs->op_algo_mask[op];
  guint proto_mask = prefs->proto_mask & prefs->op_proto_mask[op];
  if (is_p2p(op) && prefs->algo == NULL) {
    /* Not in NCCL's tuning table: send/recv (direct), or the recursive
     * exchanges for hypercube and barrier. */
    const FsCollAlgo *a = fs_coll_algo_find(op == FS_COLL_HYPERCUBE || op == FS_COLL_BARRIER ? "rhd" : "direct");
    uint64_t per_peer = op == FS_COLL_SENDRECV ? nbytes : nbytes / n;
    FsCollProto pr = prefs->proto >= 0 ? (FsCollProto)prefs->proto
                     : per_peer <= p->p2p_ll_threshold && (proto_mask & (1u << FS_PROTO_LL))
                       ? FS_PROTO_LL : FS_PROTO_SIMPLE;
    guint nch = prefs->channels ? prefs->channels : fit_channels(p, a, pr, maxch, n, nbytes);
    FsP2pShape shape;
    fs_coll_p2p_shape(sys, comm, &shape);
    gboolean sched = fs_coll_p2p_scheduled(p, comm, op, a);
    if (sched) {
      /* NCCL's split of each send over its peer's channels (p2p-sched.h); LL up to the
       * threshold per channel of the peer. */
      if (prefs->proto < 0)
        pr = per_peer <= (uint64_t)fs_p2p_channels_per_peer(p, &shape) * p->p2p_ll_threshold &&
             (proto_mask & (1u << FS_PROTO_LL)) ? FS_PROTO_LL : FS_PROTO_SIMPLE;
      if (!prefs->channels)
        nch = fs_p2p_op_channels(p, &shape, pr, FALSE, per_peer);
    }
    if (a->unsupported(comm, op) != NULL) {
      g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_UNSUPPORTED, "%s on %u ranks: %s",
                  fs_coll_op_name(op), n, a->unsupported(comm, op));
      return FALSE;
    }
    out->algo = a, out->proto = pr, out->nchannels = nch;
    cost_impl(p, sys, comm, op, a, pr, nch, nbytes, &out->cost, NULL);
    uint64_t chunk = fs_comm_n_hosts(comm) > 1 || sys->intra_hw != FS_NCCL_HW_NVLINK ? p->p2p_net_chunk
                                                                                     : p->p2p_nvl_chunk;
    out->chunk_bytes = MAX((uint64_t)(chunk * p->proto[pr].payload), 1);
    if (sched) /* one transfer per channel and peer (p2p-sched.h) */
      out->chunk_bytes = MAX(per_peer, 1);
    out->slice_bytes = out->chunk_bytes;
    return TRUE;
  }
  for (guint i = 0; fs_coll_algos[i]; i++) {
    const FsCollAlgo *a = fs_coll_algos[i];
    if (prefs->algo ? a != prefs->algo : !(algo_mask & FS_COLL_ALGO_BIT(i)))
      continue;
    /* The tuner, like NCCL, only weighs NCCL's algorithms unless told. */
    if (prefs->algo == NULL && a->nccl == FS_NCCL_ALGO_NONE)
      continue;
    for (guint pr = 0; pr < FS_PROTO_N; pr++) {
      if (prefs->proto >= 0 ? (int)pr != prefs->proto : !(proto_mask & (1u << pr)))
        continue;
      guint nch = prefs->channels ? prefs->channels
                  : (a->nccl == FS_NCCL_ALGO_NVLS || a->nccl == FS_NCCL_ALGO_NVLS_TREE) ? sys->nvls_channels
                  : maxch;
      FsCollCost c;
      if (!cost_impl(p, sys, comm, op, a, (FsCollProto)pr, nch, nbytes, &c, NULL))
        continue;
      if (c.time_us < best) {
        best = c.time_us;
        out->algo = a, out->proto = (FsCollProto)pr, out->nchannels = nch, out->cost = c;
        found = TRUE;
      }
    }
  }
  /* A tuner plugin rewrites NCCL's cost table; forcing an algorithm or protocol bypasses it. */
  if (found && prefs->algo == NULL && prefs->proto < 0)
    plugin_pick(p, sys, comm, op, nbytes, algo_mask, proto_mask, prefs->channels, out);
  if (!found && prefs->algo != NULL && prefs->algo->unsupported(comm, op) == NULL) {
    /* A forced algorithm the model gives no bandwidth (e.g. NVLS with LL):
     * run it as asked; the estimate stays empty. */
    out->algo = prefs->algo;
    out->proto = prefs->proto >= 0 ? (FsCollProto)prefs->proto : FS_PROTO_SIMPLE;
    out->nchannels = prefs->channels ? prefs->channels : maxch;
    found = TRUE;
  }
  if (!found) {
    const char *why = prefs->algo ? prefs->algo->unsupported(comm, op) : NULL;
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_UNSUPPORTED,
                "no allowed algorithm and protocol can run %s on %u ranks%s%s", fs_coll_op_name(op), n,
                why ? ": " : "", why ? why : "");
    return FALSE;
  }
  if (prefs->channels == 0) {
    guint nc = fit_channels(p, out->algo, out->proto, out->nchannels, n, nbytes);
    if (nc != out->nchannels) {
      out->nchannels = nc;
      cost_impl(p, sys, comm, op, out->algo, out->proto, nc, nbytes, &out->cost, NULL);
    }
  }
  out->chunk_bytes = fs_nccl_params_chunk_bytes(p, out->proto);
  out->slice_bytes = fs_nccl_params_slice_bytes(p, out->proto);
  if (out->algo->nccl == FS_NCCL_ALGO_TREE && out->proto == FS_PROTO_LL128) {
    guint nh = MAX(fs_comm_n_hosts(comm), 1u);
    out->chunk_bytes = fs_coll_tree_ll128_chunk(p, out->chunk_bytes, nbytes, out->nchannels, nh,
                                                (double)n / nh);
    out->slice_bytes = MIN(out->slice_bytes, out->chunk_bytes);
  }
  out->conn_slots = p->proto[out->proto].slice_steps > 0
                      ? MAX(p->steps / p->proto[out->proto].slice_steps, 1u) : 0;
  /* CollNetChain moves in NCCL's own chunks, one buffer step each (models/nccl collnet_chain;
   * src/enqueue.cc: chunk and slice steps are 1 for every algorithm but the ring). */
  uint64_t cc = out->algo->nccl == FS_NCCL_ALGO_COLLNET_CHAIN && out->proto == FS_PROTO_SIMPLE
                  ? fs_nccl_params_collnet_chain_chunk(p, nbytes, out->nchannels, fs_comm_ppn(comm))
                  : 0;
  if (cc > 0) {
    out->chunk_bytes = out->slice_bytes = cc;
    out->conn_slots = p->steps;
  }
  return TRUE;
}

/* See tuner.h.  NCCL compares with integer division (nBytes / (nChannels * chunkSize)). */
uint64_t fs_coll_tree_ll128_chunk(const FsNcclParams *p, uint64_t chunk, uint64_t nbytes,
                                  guint nchannels, guint nodes, double ppn)
{
  if (p->tree_ll128_grain <= 0 || nchannels == 0 || ppn <= 0)
    return chunk;
  double nsteps = 1 + log2i(nodes) + p->tree_ll128_ppn_steps * ppn;
  for (guint i = 0; i < 2; i++)
    chunk = fs_nccl_chunk_halve(chunk, nbytes / nchannels, nsteps * p->tree_ll128_chunks[i] / ppn,
                                p->tree_ll128_floor[i]);
  uint64_t grain = (uint64_t)p->tree_ll128_grain;
  return MAX(chunk / grain * grain, grain);
}

/* The channels one host NIC's proxy thread serves, its posts one after the other: the
 * collective's channels spread over the host's NICs (sys->net_nics > 0). */
static guint proxy_channels(const FsCollSysInfo *sys, guint nchannels)
{
  return (nchannels + sys->net_nics - 1) / sys->net_nics;
}

/* See tuner.h. */
double fs_coll_ring_proxy_sends_us(const FsNcclParams *p, const FsCollSysInfo *sys,
                                   const FsComm *comm, FsCollOp op, const FsCollAlgo *algo,
                                   FsCollProto proto, guint nchannels, double *per_step_us)
{
  if (per_step_us != NULL)
    *per_step_us = 0;
  guint n = fs_comm_size(comm);
  if (algo->nccl != FS_NCCL_ALGO_RING || proto == FS_PROTO_SIMPLE || p->coll_ring_serial_sends <= 0 ||
      fs_comm_n_hosts(comm) < 2 || sys->net_nics == 0 || n < 2)
    return 0;
  guint steps = op == FS_COLL_ALL_REDUCE ? 2 * (n - 1)
                : op == FS_COLL_ALL_GATHER || op == FS_COLL_REDUCE_SCATTER ? n - 1 : 0;
  guint k = proxy_channels(sys, nchannels);
  if (steps == 0 || k < 2)
    return 0;
  double step = p->coll_ring_serial_sends * (k - 1) * p->net_overhead_us[sys->cpu];
  if (per_step_us != NULL)
    *per_step_us = step;
  return steps * step;
}

/* See tuner.h. */
double fs_coll_tree_proxy_posts_us(const FsNcclParams *p, const FsCollSysInfo *sys,
                                   const FsComm *comm, const FsCollAlgo *algo, guint nchannels)
{
  if (algo->nccl != FS_NCCL_ALGO_TREE || p->coll_tree_step_posts <= 0 ||
      fs_comm_n_hosts(comm) < 2 || sys->net_nics == 0 || nchannels == 0)
    return 0;
  return p->coll_tree_step_posts * proxy_channels(sys, nchannels) * p->net_overhead_us[sys->cpu];
}

/* See tuner.h: NCCL prices a step of a ring across hosts at max(NVLink hw latency, its network
 * post overhead) (tuning.cc "Inter-node rings still have to launch nsteps * net overhead"). */
double fs_coll_ring_step_idle_us(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                                 const FsCollAlgo *algo, FsCollProto proto, const FsCollCost *c,
                                 double *host_us)
{
  if (host_us != NULL)
    *host_us = 0;
  if (algo->nccl != FS_NCCL_ALGO_RING || proto != FS_PROTO_SIMPLE || p->coll_ring_step_lats <= 0 ||
      fs_comm_n_hosts(comm) < 2)
    return 0;
  double nvlink = p->hw_lat[sys->intra_hw][FS_NCCL_ALGO_RING][FS_PROTO_SIMPLE];
  double host = p->coll_ring_step_host_excess * MAX(c->intra_lat_us - nvlink, 0);
  if (host_us != NULL)
    *host_us = host;
  return p->coll_ring_step_lats * c->inter_lat_us + host;
}

/* See tuner.h: the choice, NCCL's arithmetic for its cost, and what the executor adds that
 * NCCL's model does not (a ring's network steps, the proxies' serial sends, the local copy). */
char *fs_coll_explain(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                      FsCollOp op, uint64_t nbytes, const FsCollChoice *ch)
{
  GString *s = g_string_new(NULL);
  guint n = fs_comm_size(comm);
  g_string_append_printf(s, "%s of %" G_GUINT64_FORMAT " bytes on %u ranks (%u host%s × up to %u), NCCL %s model (%s)\n",
                         fs_coll_op_name(op), nbytes, n, fs_comm_n_hosts(comm),
                         fs_comm_n_hosts(comm) == 1 ? "" : "s", fs_comm_ppn(comm), p->version, p->file);
  g_string_append_printf(s, "choice: %s / %s / %u channel%s; chunk %" G_GUINT64_FORMAT " B in slices of %" G_GUINT64_FORMAT " B\n",
                         ch->algo->name, fs_coll_proto_name(ch->proto), ch->nchannels,
                         ch->nchannels == 1 ? "" : "s", ch->chunk_bytes, ch->slice_bytes);
  if (ch->plugin != NULL)
    g_string_append_printf(s, "chosen by the tuner plugin %s (NCCL_TUNER_PLUGIN): the first of its regions "
                           "that holds (%" G_GUINT64_FORMAT " B, %u ranks) sets this pair's cost to 0\n",
                           ch->plugin, nbytes, n);
  FsCollCost c;
  if (!cost_impl(p, sys, comm, op, ch->algo, ch->proto, ch->nchannels, nbytes, &c, s)) {
    g_string_append(s, "the model gives this choice no bandwidth (NCCL would not pick it)\n");
    return g_string_free(s, FALSE);
  }
  g_string_append_printf(s, "time = latency + bytes / algorithm bandwidth = %.2f us + %" G_GUINT64_FORMAT
                         " B / %.2f GB/s = %.2f + %.2f = %.2f us\n",
                         c.lat_us, nbytes, c.algbw_gbps, c.lat_us, c.time_us - c.lat_us, c.time_us);
  double f = fs_coll_busbw_factor(op, n);
  double alg = c.time_us > 0 ? (double)nbytes / 1e3 / c.time_us : 0;
  g_string_append_printf(s, "nccl-tests: algbw = %.2f GB/s, busbw = algbw × %.4f = %.2f GB/s\n", alg, f, alg * f);
  double host_us, idle = fs_coll_ring_step_idle_us(p, sys, comm, ch->algo, ch->proto, &c, &host_us);
  if (idle > 0)
    g_string_append_printf(s, "simulated, not in NCCL's model: the ring's connection across hosts idles "
                           "%.2f us before each ring step (NCCL's network step %.2f us × %.1f + the "
                           "host's share of a step %.2f us; coll_net_channel)\n",
                           idle, c.inter_lat_us, p->coll_ring_step_lats, host_us);
  double per_step, sends = fs_coll_ring_proxy_sends_us(p, sys, comm, op, ch->algo, ch->proto,
                                                      ch->nchannels, &per_step);
  if (sends > 0)
    g_string_append_printf(s, "simulated, not in NCCL's model: %u channels on %u NICs, each "
                           "proxy posts its channels' sends of a ring step one after the other: "
                           "%.2f us more per ring step, %.2f us in all (coll_net_channel "
                           "ring_serial_sends)\n", ch->nchannels, sys->net_nics, per_step, sends);
  double posts = fs_coll_tree_proxy_posts_us(p, sys, comm, ch->algo, ch->nchannels);
  if (posts > 0)
    g_string_append_printf(s, "simulated, not in NCCL's model: %u channels on %u NICs, each "
                           "proxy posts a send and a receive per chunk for each of its channels "
                           "one after the other: a tree's connection across hosts idles %.2f us "
                           "between chunks (coll_net_channel tree_step_posts)\n",
                           ch->nchannels, sys->net_nics, posts);
  if (ch->algo->nccl == FS_NCCL_ALGO_COLLNET_CHAIN && p->collnet_chain_ratio > 0 &&
      fs_comm_n_hosts(comm) > 1)
    g_string_append_printf(s, "executed: each channel is one thread block, every flow of it at most "
                           "bwIntra × %.2f = %.2f GB/s (NCCL's price of one channel; collnet_chain "
                           "kernel_ratio), in chunks of %" G_GUINT64_FORMAT " B through its chain\n",
                           p->collnet_chain_ratio, sys->bw_intra * p->collnet_chain_ratio, ch->chunk_bytes);
  if (sys->local_copy_bw > 0 && (ch->algo->nccl == FS_NCCL_ALGO_RING || strcmp(ch->algo->name, "hier") == 0))
    g_string_append_printf(s, "simulated, not in NCCL's model: after each loop every rank copies its chunk "
                           "inside the GPU at %.1f GB/s (ring_kernel.local_copy_sm_share)\n",
                           sys->local_copy_bw / 1e9);
  return g_string_free(s, FALSE);
}
