/* fabricsim-probe: shared declarations of the CUDA/NCCL calibration probes.
 *
 * Contract: one program, several sub-probes (memcpy, membw, launch, gemm,
 * p2p, nccl). Each probe measures on the GPU(s) of this machine and appends
 * flat measurement records to the calibration JSON (format: validation/README.md),
 * plus a summary object of derived figures, and records why it skipped
 * anything in the "skipped" list.
 *
 * Ownership: the FsProbeCtx owns the two JSON writers; probes own and free
 * every buffer, stream, event and handle they create.
 *
 * Errors: a failing CUDA/cuBLAS/NCCL call that should not fail aborts the
 * program with exit status 1 and a message naming the call and the
 * source line (FS_CK*). Optional features that the device or library lacks
 * (FP8, peer access, a missing NCCL) become "skipped" entries, not errors.
 * No device at all: exit status 2 with "no CUDA device found".
 *
 * Cost: a full run takes a few minutes on one H100 (see validation/README.md);
 * --quick takes about a third of that.
 */
#ifndef FS_PROBE_H
#define FS_PROBE_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#define FS_PROBE_SCHEMA_VERSION 1
#define FS_PROBE_VERSION "0.1.0"

/* ---- a tiny streaming JSON writer (json.cu) ---- */

#define FS_JSON_MAX_DEPTH 16

typedef struct FsJson {
  FILE *f;
  int depth;
  int base_indent;                    /* indent levels added to every line */
  int count[FS_JSON_MAX_DEPTH];       /* members written at each depth */
  int flat[FS_JSON_MAX_DEPTH];        /* container printed on one line */
} FsJson;

void fs_json_init(FsJson *j, FILE *f, int base_indent);
/* key is NULL inside arrays and for the root; flat != 0 keeps the container on one line */
void fs_json_object_begin(FsJson *j, const char *key, int flat);
void fs_json_object_end(FsJson *j);
void fs_json_array_begin(FsJson *j, const char *key, int flat);
void fs_json_array_end(FsJson *j);
void fs_json_string(FsJson *j, const char *key, const char *value);
void fs_json_int(FsJson *j, const char *key, long long value);
void fs_json_uint(FsJson *j, const char *key, unsigned long long value);
/* %.6g; NaN and infinities become null */
void fs_json_number(FsJson *j, const char *key, double value);
void fs_json_bool(FsJson *j, const char *key, int value);
/* already-formatted JSON text as a member (used to splice the summary) */
void fs_json_raw(FsJson *j, const char *key, const char *text);

/* ---- statistics over timing samples (stats.cu) ---- */

typedef struct FsStats {
  int n;
  double median, min, max, p10, p90, mean, stdev;
} FsStats;

/* Sorts samples in place. Percentiles interpolate linearly between ranks. */
void fs_stats_compute(double *samples, int n, FsStats *out);
/* Writes <prefix>median_us, _min_us, _max_us, _p10_us, _p90_us, _stdev_us and reps. */
void fs_json_stats_us(FsJson *j, const char *prefix, const FsStats *s);
/* Monotonic host clock in microseconds. */
double fs_now_us(void);

/* ---- probe context ---- */

#define FS_PROBE_MAX_SKIPS 64

typedef struct FsProbeCtx {
  FsJson *out;          /* positioned inside the "measurements" array */
  FsJson *summary;      /* positioned inside the "summary" object */
  int quick;
  int device;           /* the device single-GPU probes use */
  int ndev;             /* visible devices (p2p, nccl) */
  cudaDeviceProp prop;  /* of `device` */
  int nskips;
  char *skip_probe[FS_PROBE_MAX_SKIPS];
  char *skip_reason[FS_PROBE_MAX_SKIPS];
} FsProbeCtx;

typedef void (*FsProbeFn)(FsProbeCtx *ctx);

void fs_probe_memcpy(FsProbeCtx *ctx);
void fs_probe_membw(FsProbeCtx *ctx);
void fs_probe_launch(FsProbeCtx *ctx);
void fs_probe_gemm(FsProbeCtx *ctx);
void fs_probe_p2p(FsProbeCtx *ctx);
void fs_probe_nccl(FsProbeCtx *ctx);

/* Records that `probe` skipped something and why (also printed to stderr). */
void fs_probe_skip(FsProbeCtx *ctx, const char *probe, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Begins one flat measurement object {"probe": name, ...}; end it with fs_json_object_end. */
void fs_probe_record_begin(FsProbeCtx *ctx, const char *probe);
/* Progress line on stderr. */
void fs_probe_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Human-readable size: "4 B", "64 KiB", "1 GiB". Returns buf. */
const char *fs_probe_size_str(uint64_t bytes, char *buf, size_t len);

/* ---- fatal error checks ---- */

void fs_probe_die(const char *file, int line, const char *what, const char *msg)
    __attribute__((noreturn));

#define FS_CK(call)                                                         \
  do {                                                                      \
    cudaError_t fs_ck_e_ = (call);                                          \
    if (fs_ck_e_ != cudaSuccess)                                            \
      fs_probe_die(__FILE__, __LINE__, #call, cudaGetErrorString(fs_ck_e_)); \
  } while (0)

/* After a kernel launch. */
#define FS_CK_LAUNCH() FS_CK(cudaGetLastError())

#endif /* FS_PROBE_H */
