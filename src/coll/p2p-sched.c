/* p2p-sched.c — NCCL's point-to-point scheduling.  See p2p-sched.h. */
#include "coll/p2p-sched.h"

static guint pow2_up(guint v)
{
  guint r = 1;
  while (r < v && r < (1u << 30))
    r <<= 1;
  return r;
}

static guint pow2_down(guint v)
{
  guint r = 1;
  while (r * 2 <= v && r < (1u << 30))
    r <<= 1;
  return r;
}

gboolean fs_coll_op_is_p2p(FsCollOp op)
{
  return op == FS_COLL_ALLTOALL || op == FS_COLL_GATHER || op == FS_COLL_SCATTER ||
         op == FS_COLL_SENDRECV || op == FS_COLL_HYPERCUBE || op == FS_COLL_BARRIER;
}

guint fs_p2p_channels(const FsNcclParams *p, const FsP2pShape *s)
{
  guint maxch = MAX(p->max_channels, 1u);
  return MIN(pow2_up(CLAMP(s->max_channels, 1u, maxch)), pow2_down(maxch));
}

/* ncclTopoGetNchannels for a remote rank.  The scale rule compares with the p2p channels
 * before NCCL rounds them to a power of two (the collective channels, bounded). */
guint fs_p2p_net_peer_channels(const FsNcclParams *p, const FsP2pShape *s)
{
  const FsNcclP2pSched *q = &p->p2p;
  guint nics = MAX(s->net_count, 1u);
  switch (q->net_rule) {
  case FS_NCCL_P2P_FIXED:
    return q->net_channels;
  case FS_NCCL_P2P_SCALE: {
    guint64 c = q->net_channels, pch = CLAMP(s->max_channels, 1u, MAX(p->max_channels, 1u));
    while (c * s->nranks > pch * q->net_scale && c > 1)
      c /= 2;
    return MAX(nics, (guint)c);
  }
  case FS_NCCL_P2P_BANDWIDTH:
  default: {
    if (s->net_bw_gbps <= 0)
      return q->net_channels;
    /* divUp((int)netBw, (int)perChannelBw), as NCCL truncates both to integers. */
    guint64 bw = (guint64)s->net_bw_gbps, per = MAX((guint64)q->channel_net_bw, 1u);
    guint64 c = (bw + per - 1) / per;
    return MAX(nics, (guint)MIN(c, 64u));
  }
  }
}

guint fs_p2p_channels_per_peer(const FsNcclParams *p, const FsP2pShape *s)
{
  const FsNcclP2pSched *q = &p->p2p;
  guint pch = fs_p2p_channels(p, s);
  guint m = pch;
  if (s->local_channels > 0)
    m = MIN(m, s->local_channels);
  if (s->nhosts > 1)
    m = MIN(m, fs_p2p_net_peer_channels(p, s));
  guint per = pow2_up(MAX(m, 1u));
  if (s->nhosts > 1 && q->net_rule == FS_NCCL_P2P_BANDWIDTH) {
    /* 2.29+: fit every peer of a round in one pass over the p2p channels. */
    guint64 batches = (s->nranks + q->work_per_batch - 1) / q->work_per_batch;
    while ((guint64)per * batches > pch && per > 1)
      per /= 2;
  }
  return MIN(per, pch);
}

uint64_t fs_p2p_step_bytes(const FsNcclParams *p, const FsP2pShape *s, FsCollProto proto,
                           gboolean nvlink)
{
  if (proto == FS_PROTO_SIMPLE)
    return s->nhosts > 1 || !nvlink ? p->p2p_net_chunk : p->p2p_nvl_chunk;
  const FsNcclProto *pr = &p->proto[proto];
  return MAX((uint64_t)((double)(pr->buffer / MAX(p->steps, 1u)) * pr->payload), 1u);
}

guint fs_p2p_op_channels(const FsNcclParams *p, const FsP2pShape *s, FsCollProto proto,
                         gboolean nvlink, uint64_t bytes)
{
  const FsNcclP2pSched *q = &p->p2p;
  guint pch = fs_p2p_channels(p, s);
  guint cmax = fs_p2p_channels_per_peer(p, s), cmin = cmax;
  while ((s->nhosts < 2 || q->halve_min_net) && (guint64)cmin * s->nranks > pch && cmin > 1)
    cmin /= 2;
  if (bytes == 0)
    return 1;
  /* The step of the protocol: NCCL sizes parts by stepSize (the p2p chunk for Simple). */
  double step = (double)fs_p2p_step_bytes(p, s, proto, nvlink);
  const double *part = s->nhosts > 1 ? q->part_net : q->part_host;
  uint64_t min_part = MAX((uint64_t)(step * part[0]), 1u), max_part = MAX((uint64_t)(step * part[1]), 1u);
  uint64_t want = (bytes + min_part - 1) / min_part;
  guint n = (guint)MIN((uint64_t)cmin, want);
  n = MAX(n, 1u);
  uint64_t part_size = MAX(min_part, (bytes + n - 1) / n);
  while (part_size > max_part && n <= cmax / 2) {
    n *= 2;
    part_size = (bytes + n - 1) / n;
  }
  return n;
}

double fs_p2p_channel_rate_gbps(const FsNcclParams *p)
{
  return p->p2p_channel_net_rate > 0 ? p->p2p_channel_net_rate : p->p2p.channel_net_bw;
}

/* The network operations of the busiest rank in one direction: every rank off its host for
 * alltoall and at the root of gather and scatter; one for sendrecv and the exchanges. */
static guint64 net_ops(const FsP2pShape *s, FsCollOp op, guint *local)
{
  guint hosts = MAX(s->nhosts, 1u);
  *local = MAX((s->nranks + hosts - 1) / hosts, 1u);
  if (s->nhosts < 2)
    return 0;
  if (op == FS_COLL_ALLTOALL || op == FS_COLL_GATHER || op == FS_COLL_SCATTER)
    return s->nranks > *local ? s->nranks - *local : 0;
  return 1;
}

static guint gcd_u(guint a, guint b)
{
  while (b != 0) {
    guint t = a % b;
    a = b;
    b = t;
  }
  return a;
}

guint fs_p2p_net_channels_busy(const FsNcclParams *p, const FsP2pShape *s, FsCollOp op, guint nch)
{
  guint local;
  nch = MAX(nch, 1u);
  guint64 ops = net_ops(s, op, &local);
  if (ops <= 1)
    return nch;
  if (!p->p2p.shared_net)
    return (guint)MIN(ops * nch, (guint64)G_MAXUINT);
  /* NCCL's schedule group: NCCL_MAX_DEV_WORK_P2P_PER_BATCH local ranks, or its gcd with the
   * ranks per host when they are fewer or not a multiple. */
  guint group = MAX(gcd_u(MAX(p->p2p.work_per_batch, 1u), local), 1u);
  guint64 groups = (ops + group - 1) / group;
  return (guint)MIN(MIN(groups * nch, (guint64)fs_p2p_channels(p, s)), ops * nch);
}

double fs_p2p_net_flows_per_channel(const FsNcclParams *p, const FsP2pShape *s, FsCollOp op,
                                    guint nch)
{
  guint local;
  nch = MAX(nch, 1u);
  guint64 ops = net_ops(s, op, &local);
  if (ops <= 1 || !p->p2p.shared_net)
    return 1.0;
  double k = (double)(ops * nch) / fs_p2p_net_channels_busy(p, s, op, nch);
  return MAX(k, 1.0);
}

uint64_t fs_p2p_peer_bytes(FsCollOp op, uint64_t nbytes, guint n)
{
  return op == FS_COLL_SENDRECV || n == 0 ? nbytes : nbytes / n;
}

uint64_t fs_p2p_net_chunk_bytes(const FsNcclParams *p, uint64_t bytes)
{
  const FsNcclP2pSched *q = &p->p2p;
  double step = (double)p->p2p_net_chunk;
  for (guint i = 0; i < 2; i++)
    if (q->chunk_below[i] > 0 && q->chunk_div[i] > 0 && (double)bytes < q->chunk_below[i] * step)
      return MAX((uint64_t)(step / q->chunk_div[i]), 1u);
  return MAX(p->p2p_net_chunk, 1u);
}

guint fs_p2p_net_stripes(const FsP2pShape *s, uint64_t bytes)
{
  guint dev = MAX(s->net_devices, 1u);
  if (s->net_min_stripe == 0)
    return 1;
  uint64_t want = MAX((bytes + s->net_min_stripe - 1) / s->net_min_stripe, 1u);
  guint n = (guint)MIN(want, (uint64_t)dev);
  while (n > 1 && dev % n != 0)
    n--;
  return n;
}

/* The proxy's time for one message of `bytes`, µs. */
static double message_us(const FsP2pShape *s, uint64_t bytes)
{
  return s->net_msg_us + fs_p2p_net_stripes(s, bytes) * s->net_stripe_us;
}

double fs_p2p_proxy_rate_gbps(const FsNcclParams *p, const FsP2pShape *s, FsCollOp op,
                              uint64_t per_peer, guint nch)
{
  if (s->net_msg_us <= 0 && s->net_stripe_us <= 0)
    return 0;
  nch = MAX(nch, 1u);
  uint64_t part = MAX((per_peer + nch - 1) / nch, 1u);
  uint64_t chunk = fs_p2p_net_chunk_bytes(p, per_peer);
  /* A part moves in whole chunks and a last shorter one (src/enqueue.cc: nsteps =
   * ⌈part / chunk⌉, each step one message). */
  uint64_t full = part / chunk, rest = part % chunk;
  double us = (double)full * message_us(s, chunk) + (rest > 0 ? message_us(s, rest) : 0);
  /* The exchanges' proxies (alltoall, hypercube, barrier) run a receive for every send;
   * gather's and scatter's root one direction only, and sendrecv's r -> r+1 crosses hosts
   * both ways at one rank only with one rank per host. */
  guint hosts = MAX(s->nhosts, 1u);
  gboolean one_per_host = s->nranks <= hosts;
  double dirs = op == FS_COLL_GATHER || op == FS_COLL_SCATTER ? 1.0
                : op == FS_COLL_SENDRECV && !one_per_host ? 1.0 : 2.0;
  return (double)part / (dirs * us) / 1e3;
}

guint64 fs_p2p_net_transfers(const FsP2pShape *s, FsCollOp op, guint nch)
{
  guint local;
  guint64 ops = net_ops(s, op, &local);
  return MAX(ops * MAX(nch, 1u), 1u);
}
