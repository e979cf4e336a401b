/* algo-sharp.c — a shard's trip through the network's aggregation tree
 * (SHARP switches, the CollNet switches of comm.h), shared by the
 * algorithms that reduce or gather in the network: collnet_direct,
 * collnet_chain (algo-collnet.c) and NVLS across hosts (algo-nvls.c).
 * With one group every host sends shard j to shard j's switch, which
 * returns the result once every host's part arrived; with several groups
 * (leaf switches) a host sends to its group's leaf, each leaf sends the
 * group's partial result to the root, and the root returns the total to
 * every leaf, which returns it to its hosts. */
#include "coll/algos.h"

void fs_sharp_trip_init(FsSharpTrip *t, const FsComm *comm)
{
  t->nh = fs_comm_n_hosts(comm);
  t->G = fs_comm_collnet_n_groups(comm);
  t->tree = t->G > 1;
  t->hosts = g_new0(guint, MAX(t->G, 1));
  for (guint h = 0; t->tree && h < t->nh; h++)
    t->hosts[fs_comm_collnet_group(comm, h)]++;
  t->grp_up = g_new(uint32_t, MAX(t->G, 1));
  t->down = g_new(uint64_t, MAX(t->G, 1));
  t->deps = g_new(uint32_t, t->nh);
  t->back_dep = g_new(uint32_t, t->nh);
  t->from = g_new(FsCollEp, t->nh);
}

guint fs_sharp_build_start(const FsPlanBuilder *b, FsSharpTrip *t, guint *L)
{
  const FsComm *comm = fs_plan_comm(b);
  fs_comm_host_ranks(comm, 0, L);
  fs_sharp_trip_init(t, comm);
  return t->nh;
}

void fs_sharp_trip_clear(FsSharpTrip *t)
{
  g_free(t->hosts);
  g_free(t->grp_up);
  g_free(t->down);
  g_free(t->deps);
  g_free(t->back_dep);
  g_free(t->from);
}

void fs_sharp_trip_run(FsPlanBuilder *b, FsSharpTrip *t, guint ch, guint shard, FsSharpKind kind,
                       uint64_t bytes, const uint32_t *up)
{
  const FsComm *comm = fs_plan_comm(b);
  guint nh = t->nh, G = t->G;
  if (!t->tree) {
    /* The shard's switch returns the total to each host once all arrived:
     * the return waits for every host's part (fs_sharp_trip_back: deps = up). */
    for (guint h = 0; h < nh; h++)
      t->from[h] = FS_EP_COLLNET(shard);
    return;
  }
  for (guint g = 0; g < G; g++) {
    uint64_t up_bytes = kind == FS_SHARP_GATHER ? t->hosts[g] * bytes : bytes;
    t->down[g] = kind == FS_SHARP_GATHER    ? nh * bytes
                 : kind == FS_SHARP_SCATTER ? t->hosts[g] * (bytes / nh)
                                            : bytes;
    guint nd = 0;
    for (guint h = 0; h < nh; h++)
      if (fs_comm_collnet_group(comm, h) == g)
        t->deps[nd++] = up[h];
    t->grp_up[g] = fs_plan_xfer(b, ch, FS_EP_COLLNET(fs_comm_collnet_leaf(comm, g, shard)),
                                FS_EP_COLLNET(shard), up_bytes, t->deps, nd);
  }
  for (guint g = 0; g < G; g++) {
    uint32_t down = fs_plan_xfer(b, ch, FS_EP_COLLNET(shard),
                                 FS_EP_COLLNET(fs_comm_collnet_leaf(comm, g, shard)), t->down[g],
                                 t->grp_up, G);
    for (guint h = 0; h < nh; h++)
      if (fs_comm_collnet_group(comm, h) == g) {
        t->back_dep[h] = down;
        t->from[h] = FS_EP_COLLNET(fs_comm_collnet_leaf(comm, g, shard));
      }
  }
}

uint32_t fs_sharp_trip_back(FsPlanBuilder *b, const FsSharpTrip *t, guint ch, guint h, guint rank,
                            uint64_t bytes, const uint32_t *up)
{
  return t->tree ? fs_plan_xfer(b, ch, t->from[h], FS_EP_RANK(rank), bytes, &t->back_dep[h], 1)
                 : fs_plan_xfer(b, ch, t->from[h], FS_EP_RANK(rank), bytes, up, t->nh);
}

FsCollEp fs_sharp_up_switch(const FsComm *comm, guint h, guint j)
{
  if (fs_comm_collnet_n_groups(comm) <= 1)
    return FS_EP_COLLNET(j);
  return FS_EP_COLLNET(fs_comm_collnet_leaf(comm, fs_comm_collnet_group(comm, h), j));
}

uint64_t fs_sharp_rail_unit(const FsCollRequest *req, uint64_t share)
{
  uint64_t unit = req->slice_bytes, least = MAX(req->slice_bytes / FS_SHARP_MIN_UNIT_DIV, 1);
  while (unit / 2 >= least && share / unit < FS_SHARP_MIN_CHUNKS)
    unit /= 2;
  return unit;
}

uint64_t fs_sharp_loop_bytes(const FsCollRequest *req, uint64_t unit)
{
  uint64_t share = fs_coll_channel_bytes(req->bytes, req->dtype, req->nchannels, 0);
  for (guint c = 1; c < req->nchannels; c++)
    share = MIN(share, fs_coll_channel_bytes(req->bytes, req->dtype, req->nchannels, c));
  if (unit == 0 || share / unit < FS_SHARP_MIN_CHUNKS)
    return 0;
  return fs_algo_loop_bytes(req, unit);
}
