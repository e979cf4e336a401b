/* p2p probe: GPU-to-GPU copies for every ordered pair of visible GPUs.
 *
 * With fewer than 2 GPUs it records a skip ("1 visible GPU: no pairs").
 * For each ordered pair (src, dst): whether peer access is possible
 * (cudaDeviceCanAccessPeer; enabled when it is, otherwise the driver stages
 * through host memory and the record says "peer_access": false), then
 * cudaMemcpyPeerAsync on a stream of the source device for sizes 4 B ..
 * 256 MiB (64 MiB with --quick) in powers of 4, each repetition one copy
 * timed with events on the source device. Records: "p2p" with src, dst,
 * size_bytes, stats and bandwidth_GBps; plus "p2p_bidir" (both directions at
 * once, at the largest size). Summary "p2p": min/max over pairs of the peak
 * bandwidth and of the 4 B latency.
 * Cost: about 2 s per pair.
 */
#include "probe.h"

#include <stdlib.h>

/* See probe.h: with two GPUs or more, for every ordered pair enables peer access where the
 * devices allow it, times the copies described above (one way, then both at once), and
 * writes a record per pair and size and the summary's min/max peak bandwidth and 4 B latency
 * over the pairs; with fewer, a skip record. */
void fs_probe_p2p(FsProbeCtx *ctx)
{
  int n = ctx->ndev;
  if (n < 2) {
    fs_probe_skip(ctx, "p2p", "%d visible GPU: no pairs to measure", n);
    return;
  }
  const uint64_t max_size = ctx->quick ? (64ull << 20) : (256ull << 20);
  const int reps_small = ctx->quick ? 30 : 100, reps_large = ctx->quick ? 5 : 15;
  char **buf = (char **)calloc(n, sizeof(char *));
  cudaStream_t *st = (cudaStream_t *)calloc(n, sizeof(cudaStream_t));
  cudaEvent_t *e0 = (cudaEvent_t *)calloc(n, sizeof(cudaEvent_t));
  cudaEvent_t *e1 = (cudaEvent_t *)calloc(n, sizeof(cudaEvent_t));
  for (int d = 0; d < n; d++) {
    FS_CK(cudaSetDevice(d));
    FS_CK(cudaMalloc((void **)&buf[d], 2 * max_size));
    FS_CK(cudaMemset(buf[d], d + 1, 2 * max_size));
    FS_CK(cudaStreamCreateWithFlags(&st[d], cudaStreamNonBlocking));
    FS_CK(cudaEventCreate(&e0[d]));
    FS_CK(cudaEventCreate(&e1[d]));
    for (int p = 0; p < n; p++) {
      int can = 0;
      if (p != d && cudaDeviceCanAccessPeer(&can, d, p) == cudaSuccess && can) {
        cudaError_t e = cudaDeviceEnablePeerAccess(p, 0);
        if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
          FS_CK(e);
        cudaGetLastError();
      }
    }
  }
  double samples[100];
  double min_peak = 1e300, max_peak = 0, min_lat = 1e300, max_lat = 0;
  char sz[32];
  for (int s = 0; s < n; s++) {
    for (int d = 0; d < n; d++) {
      if (s == d)
        continue;
      int can = 0;
      FS_CK(cudaDeviceCanAccessPeer(&can, s, d));
      FS_CK(cudaSetDevice(s));
      double peak = 0, lat = 0;
      for (uint64_t size = 4; size <= max_size; size *= 4) {
        int reps = size <= (1u << 20) ? reps_small : reps_large;
        for (int r = -3; r < reps; r++) {
          FS_CK(cudaEventRecord(e0[s], st[s]));
          FS_CK(cudaMemcpyPeerAsync(buf[d], d, buf[s], s, size, st[s]));
          FS_CK(cudaEventRecord(e1[s], st[s]));
          FS_CK(cudaEventSynchronize(e1[s]));
          float ms;
          FS_CK(cudaEventElapsedTime(&ms, e0[s], e1[s]));
          if (r >= 0)
            samples[r] = ms * 1e3;
        }
        FsStats st_;
        fs_stats_compute(samples, reps, &st_);
        double bw = size / (st_.median * 1e-6) / 1e9;
        fs_probe_record_begin(ctx, "p2p");
        fs_json_int(ctx->out, "src", s);
        fs_json_int(ctx->out, "dst", d);
        fs_json_bool(ctx->out, "peer_access", can);
        fs_json_uint(ctx->out, "size_bytes", size);
        fs_json_stats_us(ctx->out, "", &st_);
        fs_json_number(ctx->out, "bandwidth_GBps", bw);
        fs_json_object_end(ctx->out);
        if (size == 4)
          lat = st_.median;
        if (bw > peak)
          peak = bw;
      }
      /* both directions at once at the largest size */
      int reps = reps_large;
      FS_CK(cudaSetDevice(d));
      for (int r = -2; r < reps; r++) {
        FS_CK(cudaSetDevice(s));
        FS_CK(cudaEventRecord(e0[s], st[s]));
        FS_CK(cudaMemcpyPeerAsync(buf[d], d, buf[s], s, max_size, st[s]));
        FS_CK(cudaSetDevice(d));
        FS_CK(cudaStreamWaitEvent(st[d], e0[s], 0));
        FS_CK(cudaMemcpyPeerAsync(buf[s] + max_size, s, buf[d] + max_size, d, max_size, st[d]));
        FS_CK(cudaEventRecord(e1[d], st[d]));
        FS_CK(cudaSetDevice(s));
        FS_CK(cudaStreamWaitEvent(st[s], e1[d], 0));
        FS_CK(cudaEventRecord(e1[s], st[s]));
        FS_CK(cudaEventSynchronize(e1[s]));
        float ms;
        FS_CK(cudaEventElapsedTime(&ms, e0[s], e1[s]));
        if (r >= 0)
          samples[r] = ms * 1e3;
      }
      FsStats b;
      fs_stats_compute(samples, reps, &b);
      double bibw = 2.0 * max_size / (b.median * 1e-6) / 1e9;
      fs_probe_record_begin(ctx, "p2p_bidir");
      fs_json_int(ctx->out, "src", s);
      fs_json_int(ctx->out, "dst", d);
      fs_json_uint(ctx->out, "size_bytes", max_size);
      fs_json_stats_us(ctx->out, "", &b);
      fs_json_number(ctx->out, "bandwidth_GBps", bibw);
      fs_json_object_end(ctx->out);
      fs_probe_log("p2p %d->%d%s: peak %.1f GB/s, 4 B %.2f us, bidirectional %.1f GB/s (%s)", s, d,
                   can ? "" : " (no peer access)", peak, lat, bibw,
                   fs_probe_size_str(max_size, sz, sizeof sz));
      if (peak < min_peak) min_peak = peak;
      if (peak > max_peak) max_peak = peak;
      if (lat < min_lat) min_lat = lat;
      if (lat > max_lat) max_lat = lat;
    }
  }
  fs_json_object_begin(ctx->summary, "p2p", 1);
  fs_json_int(ctx->summary, "gpus", n);
  fs_json_number(ctx->summary, "peak_bandwidth_min_GBps", min_peak);
  fs_json_number(ctx->summary, "peak_bandwidth_max_GBps", max_peak);
  fs_json_number(ctx->summary, "latency_4B_min_us", min_lat);
  fs_json_number(ctx->summary, "latency_4B_max_us", max_lat);
  fs_json_object_end(ctx->summary);
  for (int d = 0; d < n; d++) {
    FS_CK(cudaSetDevice(d));
    FS_CK(cudaFree(buf[d]));
    FS_CK(cudaStreamDestroy(st[d]));
    FS_CK(cudaEventDestroy(e0[d]));
    FS_CK(cudaEventDestroy(e1[d]));
  }
  FS_CK(cudaSetDevice(ctx->device));
  free(buf);
  free(st);
  free(e0);
  free(e1);
}
