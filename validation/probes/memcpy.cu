/* memcpy probe: host<->device copies over the host link (PCIe on x86).
 *
 * Measures cudaMemcpyAsync host-to-device and device-to-host, from pinned
 * (cudaMallocHost) and pageable (malloc, pre-touched) host memory, for sizes
 * 4 B .. 1 GiB in powers of 4 (256 MiB with --quick), plus simultaneous
 * H2D+D2H (bidirectional, pinned) from 1 MiB up. Each repetition is one copy,
 * timed twice: with CUDA events around it on the stream (device-side time,
 * "median_us") and with the host clock from the enqueue to the end of
 * cudaStreamSynchronize ("host_median_us", what a program waiting on the
 * copy sees). bandwidth_GBps = size / event median (1 GB = 1e9 B).
 * Repetitions are interleaved across sizes (see below).
 * Records: h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable, bidir_pinned.
 * Summary: per record kind, peak bandwidth and the 4 B latencies.
 * Cost: about 10-20 s on a PCIe Gen5 host; memory: 3 x max size.
 */
#include "probe.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name;
  int h2d;
  int pinned;
} Kind;

static int reps_for(uint64_t size, int quick)
{
  if (size <= (1u << 20))
    return quick ? 50 : 200;
  if (size <= (64u << 20))
    return quick ? 15 : 60;
  return quick ? 5 : 30;
}

static void summary_begin(FsProbeCtx *ctx, const char *name)
{
  fs_json_object_begin(ctx->summary, name, 1);
}

/* See probe.h: allocates pinned and pageable buffers of the largest size, times host-to-device,
 * device-to-host (pinned, pageable) and bidirectional copies over the sizes, repetitions
 * interleaved, and writes one record per kind and size and the summary's peaks and latencies. */
void fs_probe_memcpy(FsProbeCtx *ctx)
{
  const uint64_t max_size = ctx->quick ? (256ull << 20) : (1ull << 30);
  char *pinned = NULL, *pageable = NULL, *dev = NULL, *dev2 = NULL, *pinned2 = NULL;
  FS_CK(cudaMallocHost((void **)&pinned, max_size));
  FS_CK(cudaMallocHost((void **)&pinned2, max_size));
  pageable = (char *)malloc(max_size);
  if (!pageable)
    fs_probe_die(__FILE__, __LINE__, "malloc", "out of host memory");
  memset(pageable, 1, max_size);
  memset(pinned, 2, max_size);
  memset(pinned2, 3, max_size);
  FS_CK(cudaMalloc((void **)&dev, max_size));
  FS_CK(cudaMalloc((void **)&dev2, max_size));
  FS_CK(cudaMemset(dev, 4, max_size));
  FS_CK(cudaMemset(dev2, 5, max_size));

  cudaStream_t st, st2;
  cudaEvent_t e0, e1, e2;
  FS_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  FS_CK(cudaStreamCreateWithFlags(&st2, cudaStreamNonBlocking));
  FS_CK(cudaEventCreate(&e0));
  FS_CK(cudaEventCreate(&e1));
  FS_CK(cudaEventCreate(&e2));

  static const Kind kinds[] = {
    {"h2d_pinned", 1, 1}, {"d2h_pinned", 0, 1}, {"h2d_pageable", 1, 0}, {"d2h_pageable", 0, 0},
  };
  const int maxreps = reps_for(4, ctx->quick);
  uint64_t sizes[32];
  int nsizes = 0;
  for (uint64_t size = 4; size <= max_size; size *= 4)
    sizes[nsizes++] = size;
  double *ev = (double *)malloc(sizeof(double) * maxreps * nsizes);
  double *hs = (double *)malloc(sizeof(double) * maxreps * nsizes);
  char sz[32];

  /* Repetitions are interleaved across sizes (round r measures every size
   * that still needs samples), so that a slow phase of the host link lasting
   * seconds spreads over all sizes instead of distorting a few neighbours. */
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    const Kind *kd = &kinds[k];
    char *host = kd->pinned ? pinned : pageable;
    void *dst = kd->h2d ? (void *)dev : (void *)host;
    const void *src = kd->h2d ? (const void *)host : (const void *)dev;
    cudaMemcpyKind dir = kd->h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    for (int i = 0; i < nsizes; i++)
      for (int w = 0; w < 3; w++)
        FS_CK(cudaMemcpyAsync(dst, src, sizes[i], dir, st));
    FS_CK(cudaStreamSynchronize(st));
    for (int r = 0; r < maxreps; r++) {
      for (int i = 0; i < nsizes; i++) {
        if (r >= reps_for(sizes[i], ctx->quick))
          continue;
        double t0 = fs_now_us();
        FS_CK(cudaEventRecord(e0, st));
        FS_CK(cudaMemcpyAsync(dst, src, sizes[i], dir, st));
        FS_CK(cudaEventRecord(e1, st));
        FS_CK(cudaStreamSynchronize(st));
        hs[i * maxreps + r] = fs_now_us() - t0;
        float ms = 0;
        FS_CK(cudaEventElapsedTime(&ms, e0, e1));
        ev[i * maxreps + r] = ms * 1e3;
      }
    }
    double peak = 0, lat = 0, host_lat = 0;
    uint64_t peak_size = 0;
    for (int i = 0; i < nsizes; i++) {
      uint64_t size = sizes[i];
      FsStats s, h;
      fs_stats_compute(ev + i * maxreps, reps_for(size, ctx->quick), &s);
      fs_stats_compute(hs + i * maxreps, reps_for(size, ctx->quick), &h);
      double bw = size / (s.median * 1e-6) / 1e9;
      fs_probe_record_begin(ctx, kd->name);
      fs_json_uint(ctx->out, "size_bytes", size);
      fs_json_stats_us(ctx->out, "", &s);
      fs_json_number(ctx->out, "bandwidth_GBps", bw);
      fs_json_stats_us(ctx->out, "host_", &h);
      fs_json_number(ctx->out, "host_bandwidth_GBps", size / (h.median * 1e-6) / 1e9);
      fs_json_object_end(ctx->out);
      if (size == 4) {
        lat = s.median;
        host_lat = h.median;
      }
      if (bw > peak) {
        peak = bw;
        peak_size = size;
      }
      if (size >= (1u << 20) && (size & ((16u << 20) - 1)) == 0)
        fs_probe_log("%-13s %8s  %8.2f GB/s  (median %.1f us)", kd->name,
                     fs_probe_size_str(size, sz, sizeof sz), bw, s.median);
    }
    fs_probe_log("%-13s 4 B latency %.2f us (events), %.2f us (host round trip); peak %.2f GB/s",
                 kd->name, lat, host_lat, peak);
    summary_begin(ctx, kd->name);
    fs_json_number(ctx->summary, "peak_bandwidth_GBps", peak);
    fs_json_uint(ctx->summary, "peak_size_bytes", peak_size);
    fs_json_number(ctx->summary, "latency_4B_us", lat);
    fs_json_number(ctx->summary, "host_latency_4B_us", host_lat);
    fs_json_object_end(ctx->summary);
  }

  /* Both directions at once: H2D on st, D2H on st2, both between e0 and e2;
   * sizes from 1 MiB, interleaved like the above. */
  int first = 0;
  while (first < nsizes && sizes[first] < (1u << 20))
    first++;
  for (int r = -2; r < reps_for(1u << 20, ctx->quick); r++) {
    for (int i = first; i < nsizes; i++) {
      uint64_t size = sizes[i];
      if (r >= reps_for(size, ctx->quick))
        continue;
      FS_CK(cudaEventRecord(e0, st));
      FS_CK(cudaStreamWaitEvent(st2, e0, 0));
      FS_CK(cudaMemcpyAsync(dev, pinned, size, cudaMemcpyHostToDevice, st));
      FS_CK(cudaMemcpyAsync(pinned2, dev2, size, cudaMemcpyDeviceToHost, st2));
      FS_CK(cudaEventRecord(e1, st2));
      FS_CK(cudaStreamWaitEvent(st, e1, 0));
      FS_CK(cudaEventRecord(e2, st));
      FS_CK(cudaStreamSynchronize(st));
      float ms = 0;
      FS_CK(cudaEventElapsedTime(&ms, e0, e2));
      if (r >= 0)
        ev[i * maxreps + r] = ms * 1e3;
    }
  }
  double peak = 0;
  for (int i = first; i < nsizes; i++) {
    uint64_t size = sizes[i];
    FsStats s;
    fs_stats_compute(ev + i * maxreps, reps_for(size, ctx->quick), &s);
    double bw = 2.0 * size / (s.median * 1e-6) / 1e9;
    fs_probe_record_begin(ctx, "bidir_pinned");
    fs_json_uint(ctx->out, "size_bytes", size);
    fs_json_stats_us(ctx->out, "", &s);
    fs_json_number(ctx->out, "bandwidth_GBps", bw);
    fs_json_number(ctx->out, "per_direction_GBps", bw / 2);
    fs_json_object_end(ctx->out);
    if (bw > peak)
      peak = bw;
    fs_probe_log("%-13s %8s  %8.2f GB/s both directions together", "bidir_pinned",
                 fs_probe_size_str(size, sz, sizeof sz), bw);
  }
  summary_begin(ctx, "bidir_pinned");
  fs_json_number(ctx->summary, "peak_bandwidth_GBps", peak);
  fs_json_object_end(ctx->summary);

  free(ev);
  free(hs);
  free(pageable);
  FS_CK(cudaFreeHost(pinned));
  FS_CK(cudaFreeHost(pinned2));
  FS_CK(cudaFree(dev));
  FS_CK(cudaFree(dev2));
  FS_CK(cudaEventDestroy(e0));
  FS_CK(cudaEventDestroy(e1));
  FS_CK(cudaEventDestroy(e2));
  FS_CK(cudaStreamDestroy(st));
  FS_CK(cudaStreamDestroy(st2));
}
