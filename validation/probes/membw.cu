/* membw probe: device memory bandwidth (HBM on an H100).
 *
 * Kernels over float4 with a grid-stride loop (16-byte coalesced accesses):
 *   copy:  a[i] = b[i]              bytes = 2 x array size
 *   triad: a[i] = b[i] + s * c[i]   bytes = 3 x array size
 * and cudaMemcpy device-to-device (bytes = 2 x size). Array sizes 1 MiB ..
 * 1 GiB in powers of 4: the small ones live in L2 (the "l2_resident" flag
 * says so, from the device's L2 size) and measure the cache, the large ones
 * the DRAM. Each sample times a batch of launches with events (enough to
 * move about 1 GiB), median over the samples. Inputs are non-zero; the triad
 * result is checked on a sample of elements against the host.
 * Records: membw_copy, membw_triad, d2d_memcpy. Summary: bandwidth of each at
 * the largest size. Cost: a few seconds; memory: 3 GiB.
 */
#include "probe.h"

#include <math.h>
#include <stdlib.h>

__global__ void init_kernel(float *a, uint64_t n, float base, float step)
{
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    a[i] = base + step * (float)(i % 1021);
}

__global__ void copy_kernel(float4 *__restrict__ a, const float4 *__restrict__ b, uint64_t n4)
{
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n4;
       i += (uint64_t)gridDim.x * blockDim.x)
    a[i] = b[i];
}

__global__ void triad_kernel(float4 *__restrict__ a, const float4 *__restrict__ b,
                             const float4 *__restrict__ c, float s, uint64_t n4)
{
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n4;
       i += (uint64_t)gridDim.x * blockDim.x) {
    float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

enum { OP_COPY, OP_TRIAD, OP_MEMCPY };

static void run_op(int op, float *a, float *b, float *c, uint64_t bytes, int grid, cudaStream_t st)
{
  uint64_t n4 = bytes / sizeof(float4);
  if (op == OP_COPY)
    copy_kernel<<<grid, 256, 0, st>>>((float4 *)a, (const float4 *)b, n4);
  else if (op == OP_TRIAD)
    triad_kernel<<<grid, 256, 0, st>>>((float4 *)a, (const float4 *)b, (const float4 *)c, 3.0f, n4);
  else
    FS_CK(cudaMemcpyAsync(a, b, bytes, cudaMemcpyDeviceToDevice, st));
  FS_CK_LAUNCH();
}

static void check_triad(const float *da, uint64_t n)
{
  /* b = 1 + 0.001 (i % 1021), c = 0.5 + 0.002 (i % 1021), a = b + 3 c */
  const uint64_t idx[] = {0, 1, 1020, 1021, 4097, n / 2 + 3, n - 1};
  for (size_t k = 0; k < sizeof idx / sizeof idx[0]; k++) {
    float got;
    FS_CK(cudaMemcpy(&got, da + idx[k], sizeof got, cudaMemcpyDeviceToHost));
    double m = (double)(idx[k] % 1021);
    double want = (1.0 + 0.001 * m) + 3.0 * (0.5 + 0.002 * m);
    if (fabs(got - want) > 1e-5 * fabs(want))
      fs_probe_die(__FILE__, __LINE__, "triad check", "wrong result: kernel or memory fault");
  }
}

/* See probe.h: for every array size of the list above, times the copy and triad kernels and
 * a device-to-device cudaMemcpy, checks the triad's result, and writes one record per
 * kernel and the bandwidth of each at the largest size as the summary. */
void fs_probe_membw(FsProbeCtx *ctx)
{
  const uint64_t max_size = 1ull << 30;
  const uint64_t l2 = (uint64_t)ctx->prop.l2CacheSize;
  float *a, *b, *c;
  FS_CK(cudaMalloc((void **)&a, max_size));
  FS_CK(cudaMalloc((void **)&b, max_size));
  FS_CK(cudaMalloc((void **)&c, max_size));
  uint64_t n = max_size / sizeof(float);
  int grid = ctx->prop.multiProcessorCount * 8;
  init_kernel<<<grid, 256>>>(a, n, -1.0f, 0.0f);
  init_kernel<<<grid, 256>>>(b, n, 1.0f, 0.001f);
  init_kernel<<<grid, 256>>>(c, n, 0.5f, 0.002f);
  FS_CK_LAUNCH();
  FS_CK(cudaDeviceSynchronize());

  cudaStream_t st;
  cudaEvent_t e0, e1;
  FS_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  FS_CK(cudaEventCreate(&e0));
  FS_CK(cudaEventCreate(&e1));

  static const char *names[] = {"membw_copy", "membw_triad", "d2d_memcpy"};
  static const int arrays[] = {2, 3, 2};
  const int reps = ctx->quick ? 10 : 25;
  double samples[25];
  char sz[32];

  for (int op = OP_COPY; op <= OP_MEMCPY; op++) {
    double last_bw = 0, best_bw = 0;
    for (uint64_t size = 1u << 20; size <= max_size; size *= 4) {
      int batch = (int)((1ull << 30) / size);
      if (batch < 1)
        batch = 1;
      if (batch > 256)
        batch = 256;
      for (int w = 0; w < 3; w++)
        run_op(op, a, b, c, size, grid, st);
      for (int r = 0; r < reps; r++) {
        FS_CK(cudaEventRecord(e0, st));
        for (int k = 0; k < batch; k++)
          run_op(op, a, b, c, size, grid, st);
        FS_CK(cudaEventRecord(e1, st));
        FS_CK(cudaEventSynchronize(e1));
        float ms = 0;
        FS_CK(cudaEventElapsedTime(&ms, e0, e1));
        samples[r] = ms * 1e3 / batch;
      }
      if (op == OP_TRIAD)
        check_triad(a, size / sizeof(float));
      FsStats s;
      fs_stats_compute(samples, reps, &s);
      uint64_t moved = arrays[op] * size;
      double bw = moved / (s.median * 1e-6) / 1e9;
      fs_probe_record_begin(ctx, names[op]);
      fs_json_uint(ctx->out, "size_bytes", size);
      fs_json_uint(ctx->out, "bytes_moved", moved);
      fs_json_bool(ctx->out, "l2_resident", moved <= l2);
      fs_json_int(ctx->out, "launches_per_sample", batch);
      fs_json_stats_us(ctx->out, "", &s);
      fs_json_number(ctx->out, "bandwidth_GBps", bw);
      fs_json_object_end(ctx->out);
      fs_probe_log("%-12s %8s  %8.1f GB/s (read+write)%s", names[op],
                   fs_probe_size_str(size, sz, sizeof sz), bw, moved <= l2 ? "  [L2]" : "");
      last_bw = bw;
      if (bw > best_bw)
        best_bw = bw;
    }
    fs_json_object_begin(ctx->summary, names[op], 1);
    fs_json_number(ctx->summary, "bandwidth_GBps", last_bw);
    fs_json_uint(ctx->summary, "size_bytes", max_size);
    fs_json_number(ctx->summary, "best_any_size_GBps", best_bw);
    fs_json_object_end(ctx->summary);
  }
  FS_CK(cudaEventDestroy(e0));
  FS_CK(cudaEventDestroy(e1));
  FS_CK(cudaStreamDestroy(st));
  FS_CK(cudaFree(a));
  FS_CK(cudaFree(b));
  FS_CK(cudaFree(c));
}
