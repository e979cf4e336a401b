/* bench.c — the nccl-tests sweep on the simulator.  See bench.h. */
#include "collrun/bench.h"

double fs_coll_bench_avg_busbw(const GArray *rows)
{
  if (rows->len == 0)
    return 0;
  double sum = 0;
  for (guint i = 0; i < rows->len; i++) {
    const FsNcclTestsRow *r = &g_array_index(rows, FsNcclTestsRow, i);
    sum += r->oop_busbw + r->ip_busbw;
  }
  return sum / (2.0 * rows->len);
}

gboolean fs_coll_bench_each_size(const FsNcclParams *p, const FsCollSysInfo *sys,
                                 const FsComm *comm, const FsCollSweep *sw, FsCollBenchFn fn,
                                 void *data, GError **error)
{
  g_return_val_if_fail(sw->step_factor > 1 || sw->step_bytes >= 1, FALSE);
  guint n = fs_comm_size(comm);
  for (uint64_t size = sw->min_bytes; size <= sw->max_bytes;
       size = sw->step_factor > 1 ? size * sw->step_factor : size + sw->step_bytes) {
    FsCollBenchStep step = {.size = size};
    fs_coll_sizes(sw->op, size, sw->dtype, n, &step.sizes);
    step.nbytes = fs_coll_nccl_bytes(sw->op, &step.sizes, n);
    if (!fs_coll_tune(p, sys, comm, sw->op, step.nbytes, &sw->prefs, &step.choice, error) ||
        !fn(&step, data, error))
      return FALSE;
    /* Stop where the next size would not grow or would overflow. */
    if (sw->step_factor > 1 ? (size == 0 || size > G_MAXUINT64 / sw->step_factor)
                            : size > G_MAXUINT64 - sw->step_bytes)
      break;
  }
  return TRUE;
}

/* What one size of fs_coll_bench needs besides its step. */
typedef struct {
  const FsNcclParams *p;
  const FsCollSysInfo *sys;
  const FsComm *comm;
  const FsCollSweep *sw;
  FsFlowNet *net;
  FsCollTransferFn xfer;
  void *xfer_ctx;
  FsCollAloneOpts alone;
  uint64_t key;           /* ECMP key of the next size */
  GArray *rows;
} Bench;

/* Times one size alone and appends its row. */
static gboolean bench_size(const FsCollBenchStep *step, void *data, GError **error)
{
  Bench *b = data;
  const FsCollSweep *sw = b->sw;
  const FsCollChoice *ch = &step->choice;
  guint n = fs_comm_size(b->comm);
  FsCollRequest req =
    fs_coll_choice_request(ch, sw->op, step->sizes.unit_bytes, sw->dtype, sw->redop, sw->root);
  FsCollAloneStats st;
  if (!fs_coll_time_alone(b->p, b->sys, b->comm, step->nbytes, ch, &req, b->key++, b->net,
                          b->xfer, b->xfer_ctx, &b->alone, &st, error))
    return FALSE;
  FsTime t = st.time;
  /* Back-to-back iterations run no faster than the host issues them. */
  FsCollLaunch l = sw->launch;
  if (l.gpus_per_thread == 0)
    fs_coll_launch_init(&l);
  FsTime host = fs_time_from_s(fs_coll_launch_host_us(&l, b->p->host_launch_us) * 1e-6);
  if (host > t)
    t = host;
  FsNcclTestsRow row = {
    .op = sw->op,
    .sizes = step->sizes,
    .type_name = fs_coll_dtype_name(sw->dtype),
    .redop_label = fs_coll_op_redop_label(sw->op, sw->redop),
    .root = fs_coll_op_rooted(sw->op) ? (int)sw->root : -1,
    .algo = ch->algo->name,
    .proto = fs_coll_proto_name(ch->proto),
    .channels = ch->nchannels,
  };
  row.oop_time_us = fs_time_to_us(t);
  fs_coll_bandwidths(sw->op, &step->sizes, n, fs_time_to_s(t), &row.oop_algbw, &row.oop_busbw);
  row.ip_time_us = row.oop_time_us, row.ip_algbw = row.oop_algbw, row.ip_busbw = row.oop_busbw;
  g_array_append_val(b->rows, row);
  return TRUE;
}

/* See bench.h. Each size is planned, tuned and timed alone (fs_coll_time_alone) with its own
 * ECMP key; the sizes share a memo of whole plans created here unless sw->alone brings one or
 * asks for exact runs. Stops at the first failing size with its error; rows already appended
 * stay. */
gboolean fs_coll_bench(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                       const FsCollSweep *sw, FsFlowNet *net, FsCollTransferFn xfer,
                       void *xfer_ctx, GArray *rows, GError **error)
{
  Bench b = {p, sys, comm, sw, net, xfer, xfer_ctx, sw->alone, 0, rows};
  /* The sweep's sizes share a memo of the NVLS tree's rails (rails.h) and
   * of the stream models' streams, routes and skeletons (streams.h) unless
   * the caller brought one. */
  g_autoptr(FsCollAloneMemo) memo = NULL;
  if (b.alone.memo == NULL && !b.alone.exact)
    b.alone.memo = memo = fs_coll_alone_memo_new();
  return fs_coll_bench_each_size(p, sys, comm, sw, bench_size, &b, error);
}
