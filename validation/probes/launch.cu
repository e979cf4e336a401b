/* launch probe: the cost of launching a kernel.
 *
 * An empty kernel <<<1, 1>>> on a non-blocking stream:
 *   launch_async:  1000 launches back to back between two events; per-launch
 *                  time = span / 1000 (the device-side launch throughput floor).
 *   launch_sync:   one launch then cudaStreamSynchronize, host clock; the round
 *                  trip a program that waits on every kernel pays.
 *   launch_graph:  the 1000 launches captured in a CUDA graph, replayed
 *                  between events; per-node time.
 *   launch_enqueue: host time to enqueue 256 launches / 256 (the CPU's share).
 *   event_pair:    two events recorded back to back (timer floor).
 * Records carry median/min/max/p10/p90 in microseconds per launch.
 * Summary "launch": the medians. Cost: about 2 s.
 */
#include "probe.h"

#include <stdlib.h>

__global__ void empty_kernel(void) {}

static void record(FsProbeCtx *ctx, const char *name, double *samples, int n, int per, double *median)
{
  FsStats s;
  fs_stats_compute(samples, n, &s);
  fs_probe_record_begin(ctx, name);
  fs_json_int(ctx->out, "launches_per_sample", per);
  fs_json_stats_us(ctx->out, "", &s);
  fs_json_object_end(ctx->out);
  fs_probe_log("%-15s median %.3f us  (p10 %.3f, p90 %.3f)", name, s.median, s.p10, s.p90);
  *median = s.median;
}

/* See probe.h: times the empty kernel's launches (async, sync, in a CUDA graph), the host's
 * enqueue cost and an event pair, one record each, and writes their medians as the summary. */
void fs_probe_launch(FsProbeCtx *ctx)
{
  const int batch = 1000, enqueue_batch = 256;
  const int reps = ctx->quick ? 15 : 40;
  const int sync_reps = ctx->quick ? 300 : 2000;
  double *samples = (double *)malloc(sizeof(double) * sync_reps);
  cudaStream_t st;
  cudaEvent_t e0, e1;
  FS_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  FS_CK(cudaEventCreate(&e0));
  FS_CK(cudaEventCreate(&e1));
  for (int w = 0; w < 100; w++)
    empty_kernel<<<1, 1, 0, st>>>();
  FS_CK_LAUNCH();
  FS_CK(cudaStreamSynchronize(st));

  double async_us, sync_us, graph_us, enqueue_us, event_us;
  for (int r = 0; r < reps; r++) {
    FS_CK(cudaEventRecord(e0, st));
    for (int k = 0; k < batch; k++)
      empty_kernel<<<1, 1, 0, st>>>();
    FS_CK(cudaEventRecord(e1, st));
    FS_CK(cudaEventSynchronize(e1));
    float ms;
    FS_CK(cudaEventElapsedTime(&ms, e0, e1));
    samples[r] = ms * 1e3 / batch;
  }
  FS_CK_LAUNCH();
  record(ctx, "launch_async", samples, reps, batch, &async_us);

  for (int r = 0; r < sync_reps; r++) {
    double t0 = fs_now_us();
    empty_kernel<<<1, 1, 0, st>>>();
    FS_CK(cudaStreamSynchronize(st));
    samples[r] = fs_now_us() - t0;
  }
  FS_CK_LAUNCH();
  record(ctx, "launch_sync", samples, sync_reps, 1, &sync_us);

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  FS_CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int k = 0; k < batch; k++)
    empty_kernel<<<1, 1, 0, st>>>();
  FS_CK(cudaStreamEndCapture(st, &graph));
  FS_CK(cudaGraphInstantiate(&exec, graph, 0));
  FS_CK(cudaGraphLaunch(exec, st));
  FS_CK(cudaStreamSynchronize(st));
  for (int r = 0; r < reps; r++) {
    FS_CK(cudaEventRecord(e0, st));
    FS_CK(cudaGraphLaunch(exec, st));
    FS_CK(cudaEventRecord(e1, st));
    FS_CK(cudaEventSynchronize(e1));
    float ms;
    FS_CK(cudaEventElapsedTime(&ms, e0, e1));
    samples[r] = ms * 1e3 / batch;
  }
  record(ctx, "launch_graph", samples, reps, batch, &graph_us);
  FS_CK(cudaGraphExecDestroy(exec));
  FS_CK(cudaGraphDestroy(graph));

  for (int r = 0; r < reps; r++) {
    double t0 = fs_now_us();
    for (int k = 0; k < enqueue_batch; k++)
      empty_kernel<<<1, 1, 0, st>>>();
    samples[r] = (fs_now_us() - t0) / enqueue_batch;
    FS_CK(cudaStreamSynchronize(st));
  }
  FS_CK_LAUNCH();
  record(ctx, "launch_enqueue", samples, reps, enqueue_batch, &enqueue_us);

  for (int r = 0; r < reps; r++) {
    FS_CK(cudaEventRecord(e0, st));
    FS_CK(cudaEventRecord(e1, st));
    FS_CK(cudaEventSynchronize(e1));
    float ms;
    FS_CK(cudaEventElapsedTime(&ms, e0, e1));
    samples[r] = ms * 1e3;
  }
  record(ctx, "event_pair", samples, reps, 1, &event_us);

  fs_json_object_begin(ctx->summary, "launch", 1);
  fs_json_number(ctx->summary, "async_us", async_us);
  fs_json_number(ctx->summary, "sync_us", sync_us);
  fs_json_number(ctx->summary, "graph_us", graph_us);
  fs_json_number(ctx->summary, "enqueue_us", enqueue_us);
  fs_json_number(ctx->summary, "event_pair_us", event_us);
  fs_json_object_end(ctx->summary);

  free(samples);
  FS_CK(cudaEventDestroy(e0));
  FS_CK(cudaEventDestroy(e1));
  FS_CK(cudaStreamDestroy(st));
}
