/* kernel.c — see kernel.h. */
#include "compute/kernel.h"

#include <math.h>

#include "compute/attn-occupancy.h"
#include "util/names.h"

static const char *const class_names[] = { FS_KERNEL_CLASSES(FS_NAMES_ENTRY) };

static const char *const pass_names[] = { FS_KERNEL_PASSES(FS_NAMES_ENTRY) };

static const char *const dtype_names[] = { FS_DTYPES(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE_NAME(FsKernelClass, fs_kernel_class, class_names, FS_KERNEL_N_CLASSES)

FS_NAMES_DEFINE_NAME(FsKernelPass, fs_kernel_pass, pass_names, FS_PASS_N)

double fs_dtype_bytes(FsDtype dtype)
{
  switch (dtype) {
  case FS_DTYPE_FP64:
    return 8;
  case FS_DTYPE_FP32:
  case FS_DTYPE_TF32:
    return 4;
  case FS_DTYPE_FP16:
  case FS_DTYPE_BF16:
    return 2;
  case FS_DTYPE_FP8:
  case FS_DTYPE_INT8:
    return 1;
  case FS_DTYPE_FP4:
    return 0.5;
  default:
    g_return_val_if_reached(2);
  }
}

FsKernel fs_kernel_gemm(const char *name, FsKernelPass pass, FsDtype dtype, uint64_t m,
                        uint64_t n, uint64_t k, uint64_t batch)
{
  double e = fs_dtype_bytes(dtype);
  double out = e < 2 ? 2 : e;
  double b = (double)batch;
  FsKernel kn = {
    .name = name,
    .cls = FS_KERNEL_GEMM,
    .pass = pass,
    .dtype = dtype,
    .flops = 2.0 * (double)m * (double)n * (double)k * b,
    .bytes = b * (((double)m * (double)k + (double)k * (double)n) * e + (double)m * (double)n * out),
    .m = m,
    .n = n,
    .k = k,
    .batch = batch,
  };
  kn.model_flops = pass == FS_PASS_RECOMPUTE || pass == FS_PASS_OPTIMIZER ? 0 : kn.flops;
  return kn;
}

FsKernel fs_kernel_attention(const char *name, FsKernelPass pass, FsDtype dtype,
                             uint64_t batch_heads, uint64_t sq, uint64_t skv, uint64_t d,
                             uint64_t kv_heads_ratio, gboolean causal, gboolean backward)
{
  double e = fs_dtype_bytes(dtype);
  if (e < 2)
    e = 2; /* FP8 attention still reads/writes 16-bit O, dO, dQ… (approximation) */
  double bh = (double)batch_heads;
  double ratio = kv_heads_ratio ? (double)kv_heads_ratio : 1.0;
  double fwd = 4.0 * bh * (double)sq * (double)skv * (double)d * (causal ? 0.5 : 1.0);
  double q = bh * (double)sq * (double)d * e;   /* Q, O, dO, dQ: one of them */
  double kv = bh / ratio * (double)skv * (double)d * e; /* K or V (or dK, dV) */
  FsKernel kn = {
    .name = name,
    .cls = FS_KERNEL_ATTENTION,
    .pass = pass,
    .dtype = dtype,
    .m = sq,
    .n = skv,
    .k = d,
    .batch = batch_heads,
    .group = (uint32_t)(kv_heads_ratio ? kv_heads_ratio : 1),
    .causal = causal,
    .backward = backward,
  };
  if (backward) {
    kn.flops = 2.5 * fwd;
    kn.model_flops = 2.0 * fwd;
    kn.bytes = 4 * q + 2 * kv + q + 2 * kv; /* read Q,O,dO,(+LSE) K,V; write dQ,dK,dV */
  } else {
    kn.flops = fwd;
    kn.model_flops = fwd;
    kn.bytes = 2 * q + 2 * kv;
  }
  if (pass == FS_PASS_RECOMPUTE || pass == FS_PASS_OPTIMIZER)
    kn.model_flops = 0;
  return kn;
}

FsKernel fs_kernel_memory(const char *name, FsKernelPass pass, FsDtype dtype, double bytes,
                          double flops)
{
  FsKernel kn = {
    .name = name,
    .cls = FS_KERNEL_MEMORY,
    .pass = pass,
    .dtype = dtype,
    .flops = flops,
    .model_flops = 0,
    .bytes = bytes,
    .batch = 1,
  };
  return kn;
}

/* The datatype whose peak a kernel of dtype runs at on gpu (see kernel.h). */
static FsDtype usable_dtype(const FsGpuModel *gpu, FsDtype dtype)
{
  static const FsDtype wider[FS_DTYPE_N] = {
    [FS_DTYPE_FP4] = FS_DTYPE_FP8,   [FS_DTYPE_FP8] = FS_DTYPE_BF16,
    [FS_DTYPE_INT8] = FS_DTYPE_FP16, [FS_DTYPE_BF16] = FS_DTYPE_FP16,
    [FS_DTYPE_FP16] = FS_DTYPE_FP32, [FS_DTYPE_TF32] = FS_DTYPE_FP32,
    [FS_DTYPE_FP32] = FS_DTYPE_FP64, [FS_DTYPE_FP64] = FS_DTYPE_FP64,
  };
  FsDtype d = dtype;
  for (int i = 0; i < FS_DTYPE_N && !(gpu->flops[d] > 0); i++)
    d = wider[d];
  return d;
}

/* A kernel's size on a curve's axis. */
static double axis_value(const FsKernel *k, FsEffAxis axis)
{
  switch (axis) {
  case FS_EFF_AXIS_MIN_DIM:
    return (double)MIN(k->m, MIN(k->n, k->k));
  case FS_EFF_AXIS_SEQ_LEN:
    return (double)k->n;
  case FS_EFF_AXIS_FLOPS:
    return k->flops;
  default:
    return k->bytes;
  }
}

static FsTime seconds_to_time(double s)
{
  if (!(s >= 0) || !isfinite(s))
    return FS_TIME_MAX;
  return fs_time_from_s(s);
}

/* The roofline time of one kernel (kernel.h): the compute side at the
 * curve's efficiency (times a GEMM curve's measured-shape factor, or an
 * attention curve's head-dimension and occupancy factors, capped at 1),
 * the memory side at the memory curve's, the larger plus launch. */
FsTime fs_kernel_time(const FsKernel *k, const FsGpuModel *gpu, const FsEfficiency *eff,
                      FsKernelTiming *timing)
{
  g_return_val_if_fail(k != NULL && gpu != NULL, FS_TIME_MAX);
  FsKernelTiming t = {0};
  t.launch = gpu->launch_latency;
  t.shape_factor = 1.0;
  t.occupancy = 1.0;

  /* Compute side. */
  if (k->cls == FS_KERNEL_MEMORY) {
    t.peak_dtype = usable_dtype(gpu, FS_DTYPE_FP32);
    t.efficiency = 1.0;
  } else {
    t.peak_dtype = usable_dtype(gpu, k->dtype);
    FsEffKind kind = k->cls == FS_KERNEL_GEMM ? FS_EFF_GEMM
                     : k->backward           ? FS_EFF_ATTENTION_BWD
                                             : FS_EFF_ATTENTION_FWD;
    t.curve = eff ? fs_efficiency_find(eff, kind, gpu->arch, t.peak_dtype, k->causal) : NULL;
    t.efficiency = t.curve ? fs_eff_curve_eval(t.curve, axis_value(k, t.curve->axis)) : 1.0;
    if (t.curve != NULL && k->cls == FS_KERNEL_GEMM && t.curve->n_shapes > 0) {
      t.shape_factor = fs_eff_curve_shape_factor(t.curve, (double)k->m, (double)k->n, (double)k->k);
      t.efficiency = MIN(1.0, t.efficiency * t.shape_factor);
    } else if (t.curve != NULL && k->cls == FS_KERNEL_ATTENTION) {
      t.shape_factor = fs_eff_curve_head_dim_factor(t.curve, (double)k->k);
      t.occupancy = fs_attn_occupancy_factor(t.curve, k->batch, k->m, k->n, k->k, k->causal,
                                             k->backward, gpu->sms);
      t.efficiency = MIN(1.0, t.efficiency * t.shape_factor * t.occupancy);
    }
  }
  t.peak = gpu->flops[t.peak_dtype];
  double compute_s = k->flops > 0 ? k->flops / (t.peak * t.efficiency) : 0;

  /* Memory side. */
  t.mem_curve = eff ? fs_efficiency_find(eff, FS_EFF_MEMORY, gpu->arch, k->dtype, FALSE) : NULL;
  t.mem_efficiency = t.mem_curve ? fs_eff_curve_eval(t.mem_curve, axis_value(k, t.mem_curve->axis)) : 1.0;
  double memory_s = k->bytes > 0 ? k->bytes / (gpu->memory_bandwidth * t.mem_efficiency) : 0;

  t.compute = seconds_to_time(compute_s);
  t.memory = seconds_to_time(memory_s);
  t.memory_bound = memory_s > compute_s;
  FsTime body = MAX(t.compute, t.memory);
  t.time = body > FS_TIME_MAX - t.launch ? FS_TIME_MAX : body + t.launch;
  if (timing != NULL)
    *timing = t;
  return t.time;
}

FsTime fs_kernel_time_shared(const FsKernel *k, const FsGpuModel *gpu, const FsEfficiency *eff,
                             double sm_rate, double hbm_bps)
{
  g_return_val_if_fail(sm_rate > 0 && sm_rate <= 1 && hbm_bps >= 0, FS_TIME_MAX);
  FsKernelTiming t;
  FsTime alone = fs_kernel_time(k, gpu, eff, &t);
  if ((sm_rate >= 1 && hbm_bps <= 0) || alone >= FS_TIME_MAX)
    return alone;
  double compute_s = fs_time_to_s(t.compute) / sm_rate;
  double capacity = gpu->memory_bandwidth * t.mem_efficiency;
  double left = MAX(capacity - hbm_bps, capacity / 2);
  double memory_s = k->bytes > 0 ? k->bytes / left : 0;
  FsTime body = seconds_to_time(MAX(compute_s, memory_s));
  return body > FS_TIME_MAX - t.launch ? FS_TIME_MAX : body + t.launch;
}

FsTime fs_kernel_list_time(const FsKernel *kernels, guint n, const FsGpuModel *gpu,
                           const FsEfficiency *eff)
{
  FsTime total = 0;
  for (guint i = 0; i < n; i++) {
    FsTime t = fs_kernel_time(&kernels[i], gpu, eff, NULL);
    if (t > FS_TIME_MAX - total)
      return FS_TIME_MAX;
    total += t;
  }
  return total;
}

char *fs_kernel_explain(const FsKernel *k, const FsGpuModel *gpu, const FsEfficiency *eff)
{
  FsKernelTiming t;
  fs_kernel_time(k, gpu, eff, &t);
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "%s (%s %s", k->name, fs_kernel_pass_name(k->pass),
                         fs_kernel_class_name(k->cls));
  if (k->cls != FS_KERNEL_MEMORY) {
    g_string_append_printf(s, " %" G_GUINT64_FORMAT "×%" G_GUINT64_FORMAT "×%" G_GUINT64_FORMAT,
                           k->m, k->n, k->k);
    if (k->batch > 1)
      g_string_append_printf(s, " ×%" G_GUINT64_FORMAT, k->batch);
  }
  g_string_append_printf(s, " %s): ", dtype_names[k->dtype]);
  g_autofree char *tc = fs_format_time(t.compute);
  g_autofree char *tm = fs_format_time(t.memory);
  g_autofree char *tl = fs_format_time(t.launch);
  g_autofree char *tt = fs_format_time(t.time);
  g_autofree char *bw = fs_format_bandwidth(gpu->memory_bandwidth);
  g_string_append_printf(s, "%.4g GFLOP at %.1f TFLOP/s (%s) × %.2f", k->flops / 1e9,
                         t.peak / 1e12, dtype_names[t.peak_dtype], t.efficiency);
  if (t.shape_factor != 1.0 && k->cls == FS_KERNEL_GEMM)
    g_string_append_printf(s, " (FLOPs curve %.3f × measured shapes %.3f)",
                           fs_eff_curve_eval(t.curve, k->flops), t.shape_factor);
  else if (t.shape_factor != 1.0 || t.occupancy != 1.0) {
    g_string_append_printf(s, " (%s curve %.3f", fs_eff_axis_name(t.curve->axis),
                           fs_eff_curve_eval(t.curve, axis_value(k, t.curve->axis)));
    if (t.shape_factor != 1.0)
      g_string_append_printf(s, " × head dim %" G_GUINT64_FORMAT " %.3f", k->k, t.shape_factor);
    if (t.occupancy != 1.0)
      g_string_append_printf(s, " × occupancy %.3f", t.occupancy);
    g_string_append_c(s, ')');
  }
  g_string_append_printf(s, " = %s; ", tc);
  g_string_append_printf(s, "%.4g MB at %s × %.2f = %s; + %s launch → %s (%s-bound)",
                         k->bytes / 1e6, bw, t.mem_efficiency, tm, tl, tt,
                         t.memory_bound ? "memory" : "compute");
  return g_string_free(s, FALSE);
}
