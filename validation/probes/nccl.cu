/* nccl probe: NCCL collectives over every visible GPU, one process.
 *
 * Communicators from ncclCommInitAll over devices 0..n-1 (n = 1 is a valid
 * case: it measures NCCL's launch and latency floor). Collectives:
 * all_reduce (sum), all_gather, reduce_scatter (sum), broadcast (root 0) and
 * sendrecv (rank r sends to r+1 mod n and receives from r-1 mod n), on float
 * buffers, out of place, sizes 4 B .. 1 GiB in powers of 4 (256 MiB with
 * --quick). Sizes follow nccl-tests: size_bytes is the whole array for
 * all_gather / reduce_scatter (count x n x 4) and the per-rank buffer
 * otherwise; algbw = size / time, busbw = algbw x factor (2(n-1)/n for
 * all_reduce, (n-1)/n for all_gather and reduce_scatter, 1 for broadcast and
 * sendrecv), as nccl-tests defines them (doc/PERFORMANCE.md).
 * Timing as nccl-tests: a sample launches `iters` operations back to back
 * (one ncclGroupStart/End per operation over all ranks), waits for every
 * stream, and divides the host-clock span by iters; median over samples.
 * Records: nccl_<collective>. Summary nccl_<collective>: the smallest-size
 * time (the latency floor) and the peak algbw/busbw.
 * Built without NCCL (FS_PROBE_HAVE_NCCL undefined) it records a skip.
 * Cost: about 10-30 s with one GPU.
 */
#include "probe.h"

#include <stdlib.h>
#include <string.h>

#ifdef FS_PROBE_HAVE_NCCL
#include <nccl.h>

#define FS_CK_NCCL(call)                                                       \
  do {                                                                         \
    ncclResult_t fs_ck_r_ = (call);                                            \
    if (fs_ck_r_ != ncclSuccess)                                               \
      fs_probe_die(__FILE__, __LINE__, #call, ncclGetErrorString(fs_ck_r_));   \
  } while (0)

int fs_probe_nccl_version(void)
{
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess)
    return 0;
  return v;
}

enum { AR, AG, RS, BC, SR, NCOLL };
static const char *coll_names[NCOLL] = {"nccl_all_reduce", "nccl_all_gather", "nccl_reduce_scatter",
                                        "nccl_broadcast", "nccl_sendrecv"};

typedef struct {
  int n;
  ncclComm_t *comms;
  cudaStream_t *st;
  float **send, **recv;
} Nccl;

/* One operation on every rank. count = elements per rank's send buffer
 * (all_reduce, broadcast, sendrecv) or per rank's piece (all_gather, reduce_scatter). */
static void launch(Nccl *c, int coll, size_t count)
{
  FS_CK_NCCL(ncclGroupStart());
  for (int r = 0; r < c->n; r++) {
    switch (coll) {
    case AR:
      FS_CK_NCCL(ncclAllReduce(c->send[r], c->recv[r], count, ncclFloat, ncclSum, c->comms[r], c->st[r]));
      break;
    case AG:
      FS_CK_NCCL(ncclAllGather(c->send[r], c->recv[r], count, ncclFloat, c->comms[r], c->st[r]));
      break;
    case RS:
      FS_CK_NCCL(ncclReduceScatter(c->send[r], c->recv[r], count, ncclFloat, ncclSum, c->comms[r], c->st[r]));
      break;
    case BC:
      FS_CK_NCCL(ncclBroadcast(c->send[r], c->recv[r], count, ncclFloat, 0, c->comms[r], c->st[r]));
      break;
    case SR:
      FS_CK_NCCL(ncclSend(c->send[r], count, ncclFloat, (r + 1) % c->n, c->comms[r], c->st[r]));
      FS_CK_NCCL(ncclRecv(c->recv[r], count, ncclFloat, (r + c->n - 1) % c->n, c->comms[r], c->st[r]));
      break;
    }
  }
  FS_CK_NCCL(ncclGroupEnd());
}

static void sync_all(Nccl *c)
{
  for (int r = 0; r < c->n; r++) {
    FS_CK(cudaSetDevice(r));
    FS_CK(cudaStreamSynchronize(c->st[r]));
  }
}

/* See probe.h: builds one communicator per visible GPU (ncclCommInitAll), times each
 * collective of the list above over the sizes as nccl-tests does, writes a record per
 * collective and size and, per collective, the summary's latency floor and peak algbw and
 * busbw, then destroys the communicators. */
void fs_probe_nccl(FsProbeCtx *ctx)
{
  Nccl c;
  c.n = ctx->ndev;
  const uint64_t max_size = ctx->quick ? (256ull << 20) : (1ull << 30);
  const int reps = ctx->quick ? 5 : 20;
  c.comms = (ncclComm_t *)calloc(c.n, sizeof(ncclComm_t));
  c.st = (cudaStream_t *)calloc(c.n, sizeof(cudaStream_t));
  c.send = (float **)calloc(c.n, sizeof(float *));
  c.recv = (float **)calloc(c.n, sizeof(float *));
  FS_CK_NCCL(ncclCommInitAll(c.comms, c.n, NULL));
  for (int r = 0; r < c.n; r++) {
    FS_CK(cudaSetDevice(r));
    FS_CK(cudaStreamCreateWithFlags(&c.st[r], cudaStreamNonBlocking));
    FS_CK(cudaMalloc((void **)&c.send[r], max_size));
    FS_CK(cudaMalloc((void **)&c.recv[r], max_size));
    FS_CK(cudaMemset(c.send[r], 0, max_size)); /* 0.0f: sums stay finite */
    FS_CK(cudaMemset(c.recv[r], 0, max_size));
  }
  double samples[20];
  char sz[32];
  for (int coll = 0; coll < NCOLL; coll++) {
    double floor_us = 0, peak_alg = 0, peak_bus = 0;
    uint64_t floor_size = 0;
    int n = c.n;
    double factor = coll == AR ? 2.0 * (n - 1) / n : (coll == AG || coll == RS) ? (double)(n - 1) / n : 1.0;
    for (uint64_t size = 4; size <= max_size; size *= 4) {
      int whole = coll == AG || coll == RS; /* size is the whole gathered array */
      size_t count = whole ? size / (sizeof(float) * n) : size / sizeof(float);
      if (count == 0)
        continue;
      uint64_t bytes = whole ? (uint64_t)count * sizeof(float) * n : (uint64_t)count * sizeof(float);
      for (int w = 0; w < 5; w++)
        launch(&c, coll, count);
      sync_all(&c);
      /* size the batch so that one sample is at least ~2 ms, 5..200 operations */
      double t0 = fs_now_us();
      launch(&c, coll, count);
      sync_all(&c);
      double one = fs_now_us() - t0;
      int iters = (int)(2000.0 / (one > 1 ? one : 1));
      if (iters < 5) iters = 5;
      if (iters > 200) iters = 200;
      if (bytes >= (256ull << 20)) iters = 5;
      for (int r = 0; r < reps; r++) {
        t0 = fs_now_us();
        for (int i = 0; i < iters; i++)
          launch(&c, coll, count);
        sync_all(&c);
        samples[r] = (fs_now_us() - t0) / iters;
      }
      FsStats s;
      fs_stats_compute(samples, reps, &s);
      double algbw = bytes / (s.median * 1e-6) / 1e9;
      fs_probe_record_begin(ctx, coll_names[coll]);
      fs_json_int(ctx->out, "ranks", n);
      fs_json_uint(ctx->out, "size_bytes", bytes);
      fs_json_uint(ctx->out, "count", count);
      fs_json_string(ctx->out, "type", "float");
      fs_json_int(ctx->out, "iters_per_sample", iters);
      fs_json_stats_us(ctx->out, "", &s);
      fs_json_number(ctx->out, "algbw_GBps", algbw);
      fs_json_number(ctx->out, "busbw_GBps", algbw * factor);
      fs_json_object_end(ctx->out);
      if (floor_size == 0) {
        floor_size = bytes;
        floor_us = s.median;
      }
      if (algbw > peak_alg) {
        peak_alg = algbw;
        peak_bus = algbw * factor;
      }
      if (bytes == floor_size || bytes >= (64ull << 20))
        fs_probe_log("%-20s %d rank(s) %8s  %9.2f us  algbw %7.1f GB/s  busbw %7.1f GB/s", coll_names[coll],
                     n, fs_probe_size_str(bytes, sz, sizeof sz), s.median, algbw, algbw * factor);
    }
    fs_json_object_begin(ctx->summary, coll_names[coll], 1);
    fs_json_int(ctx->summary, "ranks", n);
    fs_json_uint(ctx->summary, "smallest_size_bytes", floor_size);
    fs_json_number(ctx->summary, "latency_floor_us", floor_us);
    fs_json_number(ctx->summary, "peak_algbw_GBps", peak_alg);
    fs_json_number(ctx->summary, "peak_busbw_GBps", peak_bus);
    fs_json_object_end(ctx->summary);
  }
  for (int r = 0; r < c.n; r++) {
    FS_CK_NCCL(ncclCommDestroy(c.comms[r]));
    FS_CK(cudaSetDevice(r));
    FS_CK(cudaFree(c.send[r]));
    FS_CK(cudaFree(c.recv[r]));
    FS_CK(cudaStreamDestroy(c.st[r]));
  }
  FS_CK(cudaSetDevice(ctx->device));
  free(c.comms);
  free(c.st);
  free(c.send);
  free(c.recv);
}

#else /* !FS_PROBE_HAVE_NCCL */

int fs_probe_nccl_version(void)
{
  return 0;
}

void fs_probe_nccl(FsProbeCtx *ctx)
{
  fs_probe_skip(ctx, "nccl", "fabricsim-probe was built without NCCL (nccl.h or libnccl not found)");
}

#endif
