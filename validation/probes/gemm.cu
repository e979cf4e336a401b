/* gemm probe: matrix-multiply throughput by shape and datatype (cuBLASLt).
 *
 * D(M x N) = A^T(M x K) * B(K x N), column-major, "TN" layout (the one FP8
 * requires; used for every type so that the shapes compare), alpha 1, beta 0,
 * FP32 accumulation, the first algorithm of cuBLASLt's heuristic with a 64 MiB
 * workspace. Datatypes (inputs -> output, compute type):
 *   fp32 (32F -> 32F, COMPUTE_32F), tf32 (32F -> 32F, COMPUTE_32F_FAST_TF32),
 *   bf16 (16BF -> 16BF), fp16 (16F -> 16F), fp8_e4m3 (8F_E4M3 -> 16BF; needs
 *   compute capability >= 8.9, else skipped).
 * Shapes: square 1024 .. 16384, and the GEMMs of transformer layers (names
 * say which model, TP degree and matrix; M = tokens). Inputs are hashed
 * uniform values in [-1, 1) (never zeros). For the first shape of every type
 * 64 output elements are checked against a float64 host product of the same
 * (rounded) inputs: check_rel_err = ||out - ref|| / ||ref||.
 * Each sample times a batch of calls between events (about 2 ms of work);
 * tflops = 2 M N K / median. Records: "gemm". Summary: gemm_<dtype> with the
 * best throughput and its shape, and the square 8192 figure.
 * Cost: about 30-60 s on an H100 (16384^3 in FP32 is ~0.2 s a call).
 */
#include "probe.h"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FS_CK_BLAS(call)                                                        \
  do {                                                                          \
    cublasStatus_t fs_ck_s_ = (call);                                           \
    if (fs_ck_s_ != CUBLAS_STATUS_SUCCESS)                                      \
      fs_probe_die(__FILE__, __LINE__, #call, cublasGetStatusString(fs_ck_s_)); \
  } while (0)

typedef struct {
  const char *name;
  cudaDataType_t in, out;
  cublasComputeType_t compute;
  size_t in_size, out_size;
  int min_cc; /* major*10 + minor */
} GemmType;

static const GemmType types[] = {
  {"fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4, 0},
  {"tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 80},
  {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 80},
  {"fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 0},
  {"fp8_e4m3", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 89},
};

typedef struct {
  const char *name;
  int m, n, k;
} Shape;

static const Shape shapes[] = {
  {"square_1024", 1024, 1024, 1024},
  {"square_2048", 2048, 2048, 2048},
  {"square_4096", 4096, 4096, 4096},
  {"square_8192", 8192, 8192, 8192},
  {"square_16384", 16384, 16384, 16384},
  /* Llama-2-7B (hidden 4096, FFN 11008), 4096 tokens, no TP */
  {"llama7b_qkv", 4096, 12288, 4096},
  {"llama7b_mlp_up_gate", 4096, 22016, 4096},
  {"llama7b_mlp_down", 4096, 4096, 11008},
  /* Llama-2-70B (hidden 8192, FFN 28672, GQA 8 KV heads), TP 8, 4096 tokens */
  {"llama70b_tp8_qkv", 4096, 1280, 8192},
  {"llama70b_tp8_mlp_up_gate", 4096, 7168, 8192},
  {"llama70b_tp8_mlp_down", 4096, 8192, 3584},
  /* GPT-3 175B (hidden 12288, FFN 49152), TP 8, 2048 tokens */
  {"gpt3_175b_tp8_qkv", 2048, 4608, 12288},
  {"gpt3_175b_tp8_mlp_up", 2048, 6144, 12288},
  {"gpt3_175b_tp8_mlp_down", 2048, 12288, 6144},
  /* decoding: 16 tokens through a 8192 x 8192 projection (memory-bound) */
  {"decode_16tok_8192", 16, 8192, 8192},
};

__device__ static float hash_unit(uint64_t i, uint32_t seed)
{
  uint32_t x = (uint32_t)(i * 2654435761ull) ^ (uint32_t)(i >> 32) ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return (float)(x & 0xffffffu) / (float)0x800000 - 1.0f;
}

template <typename T> __global__ void fill_kernel(T *p, uint64_t n, uint32_t seed)
{
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    p[i] = T(hash_unit(i, seed));
}

static void fill(void *p, cudaDataType_t t, uint64_t n, uint32_t seed, int grid)
{
  switch (t) {
  case CUDA_R_32F: fill_kernel<<<grid, 256>>>((float *)p, n, seed); break;
  case CUDA_R_16BF: fill_kernel<<<grid, 256>>>((__nv_bfloat16 *)p, n, seed); break;
  case CUDA_R_16F: fill_kernel<<<grid, 256>>>((__half *)p, n, seed); break;
  case CUDA_R_8F_E4M3: fill_kernel<<<grid, 256>>>((__nv_fp8_e4m3 *)p, n, seed); break;
  default: fs_probe_die(__FILE__, __LINE__, "fill", "unsupported datatype");
  }
  FS_CK_LAUNCH();
}

/* Poison: NaN in every type that has one (0xff bytes), so unwritten outputs show. */
static void poison(void *p, uint64_t bytes)
{
  FS_CK(cudaMemset(p, 0xff, bytes));
}

static double host_value(const void *p, size_t i, cudaDataType_t t)
{
  switch (t) {
  case CUDA_R_32F: return ((const float *)p)[i];
  case CUDA_R_16BF: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
  case CUDA_R_16F: return __half2float(((const __half *)p)[i]);
  case CUDA_R_8F_E4M3: return (float)((const __nv_fp8_e4m3 *)p)[i];
  default: return NAN;
  }
}

/* ||D - ref|| / ||ref|| over 64 sampled elements. */
static double check(const GemmType *ty, const Shape *sh, const void *dA, const void *dB, const void *dD)
{
  size_t na = (size_t)sh->k * sh->m, nb = (size_t)sh->k * sh->n, nd = (size_t)sh->m * sh->n;
  void *A = malloc(na * ty->in_size), *B = malloc(nb * ty->in_size), *D = malloc(nd * ty->out_size);
  FS_CK(cudaMemcpy(A, dA, na * ty->in_size, cudaMemcpyDeviceToHost));
  FS_CK(cudaMemcpy(B, dB, nb * ty->in_size, cudaMemcpyDeviceToHost));
  FS_CK(cudaMemcpy(D, dD, nd * ty->out_size, cudaMemcpyDeviceToHost));
  double err = 0, norm = 0;
  for (int s = 0; s < 64; s++) {
    size_t i = ((size_t)s * 7919u) % sh->m, j = ((size_t)s * 104729u) % sh->n;
    double ref = 0;
    for (int k = 0; k < sh->k; k++)
      ref += host_value(A, (size_t)k + i * sh->k, ty->in) * host_value(B, (size_t)k + j * sh->k, ty->in);
    double got = host_value(D, i + j * sh->m, ty->out);
    err += (got - ref) * (got - ref);
    norm += ref * ref;
  }
  free(A);
  free(B);
  free(D);
  double r = sqrt(err / norm);
  return isnan(r) ? INFINITY : r;
}

typedef struct {
  cublasLtHandle_t lt;
  void *ws;
  size_t ws_size;
  cudaStream_t st;
  cudaEvent_t e0, e1;
} Gemm;

/* Times one (type, shape); returns the TFLOP/s, or -1 when cuBLASLt has no algorithm. */
static double run_one(FsProbeCtx *ctx, Gemm *g, const GemmType *ty, const Shape *sh, int do_check)
{
  uint64_t na = (uint64_t)sh->k * sh->m, nb = (uint64_t)sh->k * sh->n, nd = (uint64_t)sh->m * sh->n;
  void *A, *B, *D;
  FS_CK(cudaMalloc(&A, na * ty->in_size));
  FS_CK(cudaMalloc(&B, nb * ty->in_size));
  FS_CK(cudaMalloc(&D, nd * ty->out_size));
  int grid = ctx->prop.multiProcessorCount * 8;
  fill(A, ty->in, na, 0x1234u, grid);
  fill(B, ty->in, nb, 0xabcdu, grid);
  poison(D, nd * ty->out_size);

  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, ld;
  cublasLtMatmulPreference_t pref;
  FS_CK_BLAS(cublasLtMatmulDescCreate(&op, ty->compute, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  FS_CK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  FS_CK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  FS_CK_BLAS(cublasLtMatrixLayoutCreate(&la, ty->in, sh->k, sh->m, sh->k));
  FS_CK_BLAS(cublasLtMatrixLayoutCreate(&lb, ty->in, sh->k, sh->n, sh->k));
  FS_CK_BLAS(cublasLtMatrixLayoutCreate(&ld, ty->out, sh->m, sh->n, sh->m));
  FS_CK_BLAS(cublasLtMatmulPreferenceCreate(&pref));
  FS_CK_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &g->ws_size, sizeof g->ws_size));
  cublasLtMatmulHeuristicResult_t res;
  int nres = 0;
  cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(g->lt, op, la, lb, ld, ld, pref, 1, &res, &nres);
  double tflops = -1;
  if (hs == CUBLAS_STATUS_SUCCESS && nres > 0) {
    const float alpha = 1.0f, beta = 0.0f;
#define MATMUL()                                                                                \
  FS_CK_BLAS(cublasLtMatmul(g->lt, op, &alpha, A, la, B, lb, &beta, D, ld, D, ld, &res.algo, g->ws, \
                            g->ws_size, g->st))
    MATMUL();
    MATMUL();
    FS_CK(cudaStreamSynchronize(g->st));
    double check_err = do_check ? check(ty, sh, A, B, D) : NAN;
    /* one call to size the batch */
    FS_CK(cudaEventRecord(g->e0, g->st));
    MATMUL();
    FS_CK(cudaEventRecord(g->e1, g->st));
    FS_CK(cudaEventSynchronize(g->e1));
    float ms;
    FS_CK(cudaEventElapsedTime(&ms, g->e0, g->e1));
    int batch = (int)ceil(2.0 / (ms > 1e-4 ? ms : 1e-4));
    if (batch > 50)
      batch = 50;
    const int reps = ctx->quick ? 5 : 20;
    double samples[20];
    for (int r = 0; r < reps; r++) {
      FS_CK(cudaEventRecord(g->e0, g->st));
      for (int b = 0; b < batch; b++)
        MATMUL();
      FS_CK(cudaEventRecord(g->e1, g->st));
      FS_CK(cudaEventSynchronize(g->e1));
      FS_CK(cudaEventElapsedTime(&ms, g->e0, g->e1));
      samples[r] = ms * 1e3 / batch;
    }
#undef MATMUL
    FsStats s;
    fs_stats_compute(samples, reps, &s);
    double flops = 2.0 * sh->m * sh->n * sh->k;
    tflops = flops / (s.median * 1e-6) / 1e12;
    double bytes = (double)(na + nb) * ty->in_size + (double)nd * ty->out_size;
    fs_probe_record_begin(ctx, "gemm");
    fs_json_string(ctx->out, "dtype", ty->name);
    fs_json_string(ctx->out, "shape", sh->name);
    fs_json_int(ctx->out, "m", sh->m);
    fs_json_int(ctx->out, "n", sh->n);
    fs_json_int(ctx->out, "k", sh->k);
    fs_json_number(ctx->out, "flops", flops);
    fs_json_number(ctx->out, "min_bytes", bytes);
    fs_json_int(ctx->out, "calls_per_sample", batch);
    fs_json_stats_us(ctx->out, "", &s);
    fs_json_number(ctx->out, "tflops", tflops);
    fs_json_number(ctx->out, "bandwidth_GBps", bytes / (s.median * 1e-6) / 1e9);
    if (do_check) {
      fs_json_number(ctx->out, "check_rel_err", check_err);
      if (!(check_err < 0.05))
        fprintf(stderr, "  WARNING: gemm %s %s: relative error %g against the host product\n",
                ty->name, sh->name, check_err);
    }
    fs_json_object_end(ctx->out);
    fs_probe_log("gemm %-8s %-26s %6dx%-6dx%-6d %8.1f TFLOP/s  (%.1f us)%s", ty->name, sh->name, sh->m,
                 sh->n, sh->k, tflops, s.median, do_check ? "  [checked]" : "");
  }
  FS_CK_BLAS(cublasLtMatmulPreferenceDestroy(pref));
  FS_CK_BLAS(cublasLtMatrixLayoutDestroy(la));
  FS_CK_BLAS(cublasLtMatrixLayoutDestroy(lb));
  FS_CK_BLAS(cublasLtMatrixLayoutDestroy(ld));
  FS_CK_BLAS(cublasLtMatmulDescDestroy(op));
  FS_CK(cudaFree(A));
  FS_CK(cudaFree(B));
  FS_CK(cudaFree(D));
  return tflops;
}

/* See probe.h: for every datatype the device supports (fp8 from compute capability 8.9),
 * times each shape of the table above with cuBLASLt and writes its record, checks the first
 * shape of each type against the host product, and writes the summary's peak per type. */
void fs_probe_gemm(FsProbeCtx *ctx)
{
  Gemm g;
  memset(&g, 0, sizeof g);
  g.ws_size = 64u << 20;
  FS_CK_BLAS(cublasLtCreate(&g.lt));
  FS_CK(cudaMalloc(&g.ws, g.ws_size));
  FS_CK(cudaStreamCreateWithFlags(&g.st, cudaStreamNonBlocking));
  FS_CK(cudaEventCreate(&g.e0));
  FS_CK(cudaEventCreate(&g.e1));
  int cc = ctx->prop.major * 10 + ctx->prop.minor;

  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    const GemmType *ty = &types[t];
    char key[64];
    snprintf(key, sizeof key, "gemm_%s", ty->name);
    if (cc < ty->min_cc) {
      fs_probe_skip(ctx, key, "needs compute capability %d.%d, device has %d.%d", ty->min_cc / 10,
                    ty->min_cc % 10, ctx->prop.major, ctx->prop.minor);
      continue;
    }
    double best = 0, sq8k = NAN;
    const char *best_shape = NULL;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      double tf = run_one(ctx, &g, ty, &shapes[s], s == 0);
      if (tf < 0) {
        fs_probe_skip(ctx, key, "cuBLASLt has no algorithm for %s", shapes[s].name);
        continue;
      }
      if (tf > best) {
        best = tf;
        best_shape = shapes[s].name;
      }
      if (!strcmp(shapes[s].name, "square_8192"))
        sq8k = tf;
    }
    if (!best_shape)
      continue;
    fs_json_object_begin(ctx->summary, key, 1);
    fs_json_number(ctx->summary, "peak_tflops", best);
    fs_json_string(ctx->summary, "peak_shape", best_shape);
    fs_json_number(ctx->summary, "square_8192_tflops", sq8k);
    fs_json_object_end(ctx->summary);
  }
  FS_CK(cudaEventDestroy(g.e0));
  FS_CK(cudaEventDestroy(g.e1));
  FS_CK(cudaStreamDestroy(g.st));
  FS_CK(cudaFree(g.ws));
  FS_CK_BLAS(cublasLtDestroy(g.lt));
}
