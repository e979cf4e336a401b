/* kernel.h — the kernel time model: one GPU kernel as (FLOPs, bytes moved,
 * datatype, shape class), and its time on a GPU model.
 *
 *   time = max(FLOPs / (peak[dtype] × eff_flops(shape)),
 *              bytes / (HBM bandwidth × eff_mem(bytes)))
 *          + launch overhead
 *
 * peak[dtype] and the HBM bandwidth come from the catalog (FsGpuModel);
 * eff_flops and eff_mem are efficiency curves (efficiency.h), looked up by
 * the GPU's architecture, the kernel's datatype and its size: the FLOPs
 * of the whole kernel for a GEMM (or min(M,N,K) for a curve on that axis),
 * times, for a GEMM curve with measured shapes, the shape factor of its
 * (m, n, k) (fs_eff_curve_shape_factor: the table of measured GEMM shapes
 * interpolated around the curve), the key length for attention (times,
 * for a curve with `head_dims:`, the factor of the kernel's head dimension:
 * fs_eff_curve_head_dim_factor, and for a curve with `tiles:`, the
 * occupancy of the kernel's thread blocks on the GPU's SMs over that of
 * the kernels the curve measured: fs_attn_occupancy_factor), the bytes
 * moved for a memory-bound kernel (whose compute side runs at the FP32
 * vector rate with efficiency 1).  Where the GPU has no peak for the
 * kernel's datatype (FP8 on an A100), the kernel runs at the next wider
 * type that it has: fp4 → fp8 → bf16 → fp16 → fp32 → fp64, tf32 → fp32.
 *
 * Two FLOP counts travel with a kernel: `flops`, what the GPU executes
 * (the time model uses it), and `model_flops`, what counts as useful work
 * for MFU (PaLM's definition): zero for recomputation and the optimizer,
 * 2× forward for an attention backward that executes 2.5× (FlashAttention
 * recomputes the scores), top-k without capacity padding for MoE experts.
 *
 * Kernels are plain records; names are static strings.  Nothing here
 * allocates except the explain string.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "compute/efficiency.h"
#include "util/units.h"

G_BEGIN_DECLS

/* Shape classes: which efficiency curve applies. */
#define FS_KERNEL_CLASSES(X)   \
  X(GEMM, "gemm")              \
  X(ATTENTION, "attention")    \
  X(MEMORY, "memory")

typedef enum {
#define X(id, str) FS_KERNEL_##id,
  FS_KERNEL_CLASSES(X)
#undef X
  FS_KERNEL_N_CLASSES
} FsKernelClass;

/* Which part of a training step a kernel belongs to. */
#define FS_KERNEL_PASSES(X)      \
  X(FORWARD, "forward")          \
  X(BACKWARD, "backward")        \
  X(RECOMPUTE, "recompute")      \
  X(OPTIMIZER, "optimizer")

typedef enum {
#define X(id, str) FS_PASS_##id,
  FS_KERNEL_PASSES(X)
#undef X
  FS_PASS_N
} FsKernelPass;

const char *fs_kernel_class_name(FsKernelClass c);
const char *fs_kernel_pass_name(FsKernelPass p);

typedef struct {
  const char *name;      /* static, e.g. "qkv", "mlp_fc1.dgrad" */
  FsKernelClass cls;
  FsKernelPass pass;
  FsDtype dtype;         /* the datatype whose peak applies */
  double flops;          /* executed FLOPs */
  double model_flops;    /* FLOPs that count for MFU */
  double bytes;          /* bytes read + written in HBM */
  /* GEMM: batch independent products C[m×n] = A[m×k]·B[k×n].
   * Attention: batch = batch × heads, m = query length, n = key length,
   * k = head dimension.  Memory-bound: all zero except batch = 1. */
  uint64_t m, n, k, batch;
  uint32_t group;        /* attention: query heads per KV head (GQA), >= 1 */
  gboolean causal;       /* attention with a causal mask */
  gboolean backward;     /* attention backward (its own curve) */
} FsKernel;

/* Bytes of one element of dtype (fp4: 0.5). */
double fs_dtype_bytes(FsDtype dtype);

/* A GEMM of batch × (m×k · k×n) in dtype: flops = model_flops = 2·m·n·k·batch,
 * bytes = batch·(m·k + k·n)·size(dtype) + batch·m·n·max(size(dtype), 2)
 * (an FP8 GEMM writes a 16-bit result). */
FsKernel fs_kernel_gemm(const char *name, FsKernelPass pass, FsDtype dtype, uint64_t m,
                        uint64_t n, uint64_t k, uint64_t batch);

/* Fused (flash) attention over batch_heads query heads of length sq against
 * keys/values of length skv and head dimension d, with kv_heads_ratio =
 * query heads per KV head (GQA; 1 for MHA).  Forward FLOPs are
 * 4·batch_heads·sq·skv·d (QKᵀ and PV), halved when causal (the masked half
 * is skipped, as FlashAttention counts it).  Backward (backward = TRUE)
 * executes 2.5× the forward FLOPs and counts 2× as model FLOPs.  Bytes:
 * forward reads Q, K, V and writes O; backward reads Q, K, V, O, dO and
 * writes dQ, dK, dV.  dtype is the element type (bf16/fp16/fp8). */
FsKernel fs_kernel_attention(const char *name, FsKernelPass pass, FsDtype dtype,
                             uint64_t batch_heads, uint64_t sq, uint64_t skv, uint64_t d,
                             uint64_t kv_heads_ratio, gboolean causal, gboolean backward);

/* A memory-bound kernel moving bytes and doing flops (elementwise, norms,
 * softmax, optimizer updates). */
FsKernel fs_kernel_memory(const char *name, FsKernelPass pass, FsDtype dtype, double bytes,
                          double flops);

/* The breakdown of one kernel's time. */
typedef struct {
  FsTime time;            /* total: max(compute, memory) + launch */
  FsTime compute;         /* FLOPs / (peak × efficiency) */
  FsTime memory;          /* bytes / (bandwidth × memory efficiency) */
  FsTime launch;
  double peak;            /* FLOP/s used */
  FsDtype peak_dtype;     /* the datatype whose peak was used */
  double efficiency;      /* compute efficiency applied (shape factor included) */
  double shape_factor;    /* GEMM: the curve's measured-shape factor; attention: its head-dim factor (efficiency.h); else 1 */
  double occupancy;       /* attention: the occupancy factor of its thread blocks (attn-occupancy.h); else 1 */
  double mem_efficiency;  /* memory efficiency applied */
  const FsEffCurve *curve;     /* compute curve, or NULL (none matched, or memory-bound) */
  const FsEffCurve *mem_curve; /* memory curve, or NULL */
  gboolean memory_bound;  /* memory > compute */
} FsKernelTiming;

/* The time of kernel k on gpu, with efficiency curves eff (NULL: the plain
 * roofline, efficiency 1).  timing (nullable) receives the breakdown.
 * A GPU with no usable peak or bandwidth gives FS_TIME_MAX.  Cost: a few
 * curve lookups (linear in the number of curves). */
FsTime fs_kernel_time(const FsKernel *k, const FsGpuModel *gpu, const FsEfficiency *eff,
                      FsKernelTiming *timing);

/* The time of kernel k on gpu while a communication kernel runs beside it
 * for the whole of it, holding the fraction 1 − sm_rate of the SMs and
 * moving hbm_bps bytes per second through HBM: the compute side of the
 * roofline at sm_rate of its speed, the memory side on the bandwidth left
 * to it by max-min sharing of what it reaches alone (C = bandwidth ×
 * memory efficiency): max(C − hbm_bps, C / 2).  So a memory-bound kernel
 * loses HBM bandwidth and a compute-bound one only SMs.  sm_rate in
 * (0, 1], hbm_bps >= 0; sm_rate 1 and hbm_bps 0 give fs_kernel_time.  Cost:
 * fs_kernel_time's. */
FsTime fs_kernel_time_shared(const FsKernel *k, const FsGpuModel *gpu, const FsEfficiency *eff,
                             double sm_rate, double hbm_bps);

/* The sum of fs_kernel_time over n kernels (kernels run one after the
 * other on one stream). */
FsTime fs_kernel_list_time(const FsKernel *kernels, guint n, const FsGpuModel *gpu,
                           const FsEfficiency *eff);

/* One line of arithmetic for a kernel, e.g.
 * "qkv (forward gemm 8192×12288×4096 bf16): 824.6 GFLOP at 989.0 TFLOP/s ×
 *  0.80 = 1.042 ms; 302.0 MB at 3350.0 GB/s × 0.90 = 100.2 us; + 4.0 us launch
 *  → 1.046 ms (compute-bound)"; a GEMM whose curve has measured shapes
 * shows the split after its efficiency, "× 0.73 (FLOPs curve 0.784 ×
 * measured shapes 0.930)", an attention kernel its factors other than 1,
 * "× 0.47 (seq_len curve 0.578 × occupancy 0.815)" (the product capped
 * at 1).  Caller frees. */
char *fs_kernel_explain(const FsKernel *k, const FsGpuModel *gpu, const FsEfficiency *eff);

G_END_DECLS
