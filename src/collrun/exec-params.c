/* exec-params.c — executor parameters from NCCL's model.  See exec-params.h. */
#include "collrun/exec-params.h"

#include <string.h>

void fs_coll_exec_params(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                         FsCollOp op, uint64_t nbytes, const FsCollChoice *choice,
                         const FsCollPlan *plan, FsCollExecParams *out)
{
  fs_coll_exec_params_depth(p, sys, comm, op, nbytes, choice, fs_coll_plan_latency_depth(plan), out);
}

/* See exec-params.h: the executor's latencies for a plan of latency depth `depth`, the
 * payload, the per-flow rate caps (a point-to-point channel's or a collective connection's
 * across NVLink domains, the LL128 cap) and the reduction bandwidth, from p and sys. */
void fs_coll_exec_params_depth(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                               FsCollOp op, uint64_t nbytes, const FsCollChoice *choice,
                               guint depth, FsCollExecParams *out)
{
  memset(out, 0, sizeof *out);
  FsNcclAlgo a = choice->algo->nccl == FS_NCCL_ALGO_NONE ? FS_NCCL_ALGO_RING : choice->algo->nccl;
  FsCollCost c = {0};
  double base_us = p->base_lat[a][choice->proto], lat_us = base_us;
  if (fs_coll_cost(p, sys, comm, op, choice->algo, choice->proto, choice->nchannels, nbytes, &c)) {
    base_us = MIN(c.base_us, c.lat_us);
    lat_us = c.lat_us;
  }
  /* The proxies' serial sends of a Ring/LL or LL128 plan across hosts (not in NCCL's model):
   * spread over the plan's steps with the rest. */
  lat_us += fs_coll_ring_proxy_sends_us(p, sys, comm, op, choice->algo, choice->proto,
                                        choice->nchannels, NULL);
  double step_us = depth > 0 ? (lat_us - base_us) / depth : 0;
  out->base_latency = fs_time_from_s(base_us * 1e-6);
  /* The flows pay the network's own latency; the step pays the rest. */
  out->step_latency[0] = fs_time_from_s(MAX(step_us - sys->path_lat_intra, 0) * 1e-6);
  out->step_latency[1] = fs_time_from_s(MAX(step_us - sys->path_lat_inter, 0) * 1e-6);
  /* A ring's connection across hosts runs its steps one after the other, each after NCCL's
   * network step (the proxy's send, the receiver's flush, the GPU's poll: Ring/Simple's
   * interLat) and the host's share of a ring step (fs_coll_ring_step_idle_us, models/nccl
   * coll_net_channel).  The executor counts it from the drain of the step before on the
   * connection (exec.h), whose path latency is then not on that edge: the whole idle, no
   * route latency taken off (before 2026-11-28 the edge ran from the delivery, and the
   * network's latency was taken off; the same spacing of steps). */
  double idle = fs_coll_ring_step_idle_us(p, sys, comm, choice->algo, choice->proto, &c, NULL);
  if (idle > 0)
    out->ring_step_latency_inter = fs_time_from_s(idle * 1e-6);
  /* A tree's connection across hosts idles between its chunks while the proxy posts the
   * sends and receives of its channels (fs_coll_tree_proxy_posts_us; not in NCCL's model, so
   * nothing of it is in the network's latency). */
  double posts = fs_coll_tree_proxy_posts_us(p, sys, comm, choice->algo, choice->nchannels);
  if (posts > 0)
    out->ring_step_latency_inter = fs_time_from_s(posts * 1e-6);
  out->payload = p->proto[choice->proto].payload;
  /* Plans built of ring phases have one local copy per loop and rank;
   * nothing else in them is a reduction step. */
  if (choice->algo->nccl == FS_NCCL_ALGO_RING || strcmp(choice->algo->name, "hier") == 0)
    out->reduce_bw = sys->local_copy_bw;
  /* A network channel of a point-to-point plan moves at most NCCL's per-channel network
   * bandwidth, shared by the transfers NCCL's schedule puts on it (coll/p2p-sched.h): every
   * transfer across hosts gets its share. */
  if (fs_coll_p2p_scheduled(p, comm, op, choice->algo)) {
    FsP2pShape shape;
    fs_coll_p2p_shape(sys, comm, &shape);
    double k = fs_p2p_net_flows_per_channel(p, &shape, op, choice->nchannels);
    out->rate_cap_inter = fs_p2p_channel_rate_gbps(p) * 1e9 / k;
    /* The network plugin's proxy runs the GPU's messages one after another (p2p-sched.h
     * fs_p2p_proxy_rate_gbps): its rate, shared by the GPU's transfers across hosts. */
    double proxy = fs_p2p_proxy_rate_gbps(p, &shape, op,
                                          fs_p2p_peer_bytes(op, nbytes, fs_comm_size(comm)),
                                          choice->nchannels);
    if (proxy > 0)
      out->rate_cap_inter = MIN(out->rate_cap_inter,
                                proxy * 1e9 / (double)fs_p2p_net_transfers(&shape, op,
                                                                           choice->nchannels));
  }
  else if (p->coll_channel_net_bw > 0 && fs_comm_n_nvlink_domains(comm) > 1) {
    /* A collective's channel is one thread block per GPU with one network connection per
     * peer across hosts (a ring's next host, a tree's parent and children, an NVLS tree's
     * heads): each moves at most coll_channel_net_bw (models/nccl coll_net_channel).  Not
     * inside one NVLink domain (the trays of a GB200 NVL72 rack talk over NVLink); a
     * communicator over several domains caps its NVLink hops between trays too. */
    out->rate_cap_inter = p->coll_channel_net_bw * 1e9;
  }
  if (choice->algo->nccl == FS_NCCL_ALGO_NVLS_TREE && p->nvls_tree_exec_bw[sys->arch] > 0 &&
      fs_comm_size(comm) > 1) {
    /* NCCL's NVLSTree kernel (models/nccl nvls_tree_kernel): busbw at most heads × the
     * figure, i.e. algbw = busbw × n / 2(n-1), shared by the plan's channels; every flow
     * of a channel (its NVLS legs and its tree's network legs) moves at most that. */
    guint n = fs_comm_size(comm);
    double bus = p->nvls_tree_exec_bw[sys->arch] * MAX(sys->nvls_heads, 1u);
    out->rate_cap = bus * n / (2.0 * (n - 1)) / MAX(choice->nchannels, 1u) * 1e9;
  }
  if (choice->algo->nccl == FS_NCCL_ALGO_COLLNET_CHAIN && p->collnet_chain_ratio > 0 &&
      fs_comm_n_hosts(comm) > 1) {
    /* A CollNetChain channel is one thread block on each GPU of its chain (models/nccl
     * collnet_chain): it moves at most NCCL's price of one channel, bwIntra × the ratio of
     * algorithm bandwidth, and cannot take what another channel leaves on its links; every
     * flow of the channel (chain hops both ways, the head's trip through the switch) moves
     * at most that. */
    out->rate_cap = sys->bw_intra * p->collnet_chain_ratio * 1e9;
  }
  if (choice->proto == FS_PROTO_LL128) {
    guint nh = fs_comm_n_hosts(comm), col = nh == 1 ? 0 : nh == 2 ? 1 : 2;
    double cap = choice->algo->nccl == FS_NCCL_ALGO_TREE ? p->tree_ll128_bw[sys->arch][col]
                                                        : p->ring_ll128_bw[sys->arch][col];
    /* NCCL's ring cap is per channel of its ring graph (graphs[RING]->nChannels ×
     * perChMaxRingLL128Bw); across hosts connecting the rings doubles the graph's channels
     * into the ones that run (sys->graph_channels), which share it.  The tree's figure stays
     * per channel that runs: halved, the 1 MiB trees of the split: fit table (issue 309,
     * 4 and 8 nodes) came out 55 % slow (time MAPE 26.66 -> 50.78 %). */
    if (choice->algo->nccl != FS_NCCL_ALGO_TREE && sys->graph_channels > 0 &&
        sys->max_channels > sys->graph_channels)
      cap *= (double)sys->graph_channels / sys->max_channels;
    out->rate_cap = cap * 1e9;
  }
}
