/* efficiency.h — achieved fraction of peak as data: the efficiency curves
 * of the kernel time model, loaded from the YAML files in models/compute/ (format in
 * models/compute/README.md).
 *
 * A curve says, for one kernel kind (GEMM, attention forward, attention
 * backward, memory-bound), one GPU architecture (or any) and one datatype
 * (or any), which fraction of the peak rate a kernel of a given size
 * achieves.  The size is the curve's axis: min(M,N,K) for GEMMs, the key
 * length for attention, the bytes moved for memory-bound kernels.  Between
 * points the curve is piecewise linear (in log x by default, or in x);
 * outside the points it is clamped to the first or last value.  A GEMM
 * curve may carry measured shapes and an attention curve head-dimension
 * rows, each a factor on the curve (fs_eff_curve_shape_factor,
 * fs_eff_curve_head_dim_factor), and its kernels' thread-block tiles
 * (compute/attn-occupancy.h).
 *
 * Lookup picks the most specific curve that matches (architecture counts
 * more than datatype, datatype more than the causal flag); a curve for
 * `arch: any` / no `dtype:` is the fallback.  Calibration replaces curves
 * with fs_efficiency_set() or by loading a file with replace = TRUE; a
 * replaced curve keeps its key and takes the new points and source (and
 * the replacement's shapes, head-dimension rows and tiles, none from
 * fs_efficiency_set()).
 *
 * Ownership: FsEfficiency owns every curve and string; the const pointers it
 * hands out live until the next replace of that curve or the free.  Curves
 * are kept in load order and lookups never depend on hash order.  Errors
 * are in FS_EFFICIENCY_ERROR (or FS_YAML_ERROR from the YAML layer), with
 * file:line:col.
 */
#pragma once

#include <glib.h>

#include "catalog/catalog.h"
#include "util/schema.h"

G_BEGIN_DECLS

#define FS_EFFICIENCY_ERROR (fs_efficiency_error_quark())
GQuark fs_efficiency_error_quark(void);

typedef enum {
  FS_EFFICIENCY_ERROR_INVALID,   /* a curve is malformed (points, ranges) */
  FS_EFFICIENCY_ERROR_DUPLICATE, /* two curves with one key */
  FS_EFFICIENCY_ERROR_IO,        /* the folder could not be read */
} FsEfficiencyError;

/* Kernel kinds that have a curve (`kind: gemm`).  The overlap kinds are
 * not kernels: their y is the fraction of a compute kernel's rate that is
 * left while a communication kernel of that parallelism (TP, CP, DP, EP)
 * runs beside it on the same GPU (1 − SMs the communication occupies /
 * SMs), x the communication's bytes. */
#define FS_EFF_KINDS(X)                  \
  X(GEMM, "gemm")                        \
  X(ATTENTION_FWD, "attention-forward")  \
  X(ATTENTION_BWD, "attention-backward") \
  X(MEMORY, "memory")                    \
  X(OVERLAP_TP, "overlap-tp")            \
  X(OVERLAP_CP, "overlap-cp")            \
  X(OVERLAP_DP, "overlap-dp")            \
  X(OVERLAP_EP, "overlap-ep")

typedef enum {
#define X(id, str) FS_EFF_##id,
  FS_EFF_KINDS(X)
#undef X
  FS_EFF_N_KINDS
} FsEffKind;

/* What a curve's x is (`axis: min_dim`). */
#define FS_EFF_AXES(X)      \
  X(MIN_DIM, "min_dim")     \
  X(SEQ_LEN, "seq_len")     \
  X(BYTES, "bytes")         \
  X(FLOPS, "flops")

typedef enum {
#define X(id, str) FS_EFF_AXIS_##id,
  FS_EFF_AXES(X)
#undef X
  FS_EFF_N_AXES
} FsEffAxis;

const char *fs_eff_kind_name(FsEffKind k);
const char *fs_eff_axis_name(FsEffAxis a);
gboolean fs_eff_kind_from_name(const char *s, FsEffKind *out);
gboolean fs_eff_axis_from_name(const char *s, FsEffAxis *out);

/* The causal qualifier of an attention curve. */
typedef enum {
  FS_EFF_CAUSAL_ANY = -1,
  FS_EFF_CAUSAL_NO = 0,
  FS_EFF_CAUSAL_YES = 1,
} FsEffCausal;

typedef struct {
  FsEffKind kind;
  gboolean any_arch;     /* `arch: any` */
  FsGpuArch arch;        /* when !any_arch */
  gboolean any_dtype;    /* no `dtype:` */
  FsDtype dtype;         /* when !any_dtype */
  FsEffCausal causal;
  FsEffAxis axis;
  gboolean log_scale;    /* interpolate in log(x) (default) or in x */
  guint n;               /* points, >= 1, x strictly increasing, x > 0 */
  double *x;
  double *y;             /* fractions of peak, 0 < y <= 1 */
  char *source;
  char *note;            /* may be "" */
  char *file;            /* where it was defined ("" for fs_efficiency_set) */
  int line, col;
  /* GEMM curves on the flops axis only: measured GEMM shapes (`shapes:`),
   * n_shapes rows of 4 doubles (m, n, k, efficiency), and the factor in
   * every dimension over which a lone shape's pull on its neighbours
   * falls to half (`shape_range:`, > 1); see fs_eff_curve_shape_factor. */
  guint n_shapes;
  double *shapes;
  double shape_range;
  double *shape_cache;   /* per shape: ln m, ln n, ln k, residual (derived at load) */
  /* Attention curves only: the head-dimension factor (`head_dims:`),
   * n_head_dims rows of 2 doubles (head dim, factor), head dims strictly
   * increasing; see fs_eff_curve_head_dim_factor. */
  guint n_head_dims;
  double *head_dims;
  /* Attention curves only: the thread-block tiles of the kernels the curve
   * times (`tiles:`), n_tiles rows of 3 doubles (head dim, block, step),
   * head dims strictly increasing, and the size of the kernels its points
   * were measured on (`measured_tokens:` batch × sequence length,
   * `measured_hidden:` heads × head dim; both with tiles, else 0); see
   * compute/attn-occupancy.h. */
  guint n_tiles;
  double *tiles;
  guint measured_tokens;
  guint measured_hidden;
} FsEffCurve;

typedef struct FsEfficiency FsEfficiency;

/* Host (framework) costs of issuing GPU work, per architecture or any
 * (`host:` in a curves file; models/compute/README.md, "Host costs"):
 * what the training executor's host model charges (workload/executor.h,
 * `framework.launch`).  All three are times in ps, at least 0. */
typedef struct {
  gboolean any_arch;     /* `arch: any` */
  FsGpuArch arch;        /* when !any_arch */
  FsTime eager_op;       /* host time per GPU op issued eagerly (PyTorch, autograd) */
  FsTime graph_launch;   /* host time per CUDA-graph launch */
  FsTime gpu_gap;        /* the GPU's own gap per kernel when the host runs ahead */
  char *source;
  char *file;            /* where it was defined */
  int line, col;
} FsEffHost;

/* What a communication kernel moves through the HBM of its GPU per byte
 * that GPU receives (`comm_hbm:` in a curves file; models/compute/
 * README.md, "Communication and HBM"): the HBM bandwidth it takes from a
 * memory-bound kernel beside it.  One for every architecture. */
typedef struct {
  double collective;     /* NCCL ring/tree collectives and TE userbuffers */
  double point_to_point; /* NCCL send/recv and all-to-all */
  char *source;
  char *file;            /* where it was defined */
  int line, col;
} FsEffCommHbm;

/* The communication HBM figures, or NULL when no file gave them.
 * Borrowed from eff (valid until the next load into it). */
const FsEffCommHbm *fs_efficiency_comm_hbm(const FsEfficiency *eff);

/* The host costs for arch: its own entry, else the `any` one, else NULL.
 * Borrowed from eff (valid until the next load into it).  Cost: O(entries). */
const FsEffHost *fs_efficiency_host(const FsEfficiency *eff, FsGpuArch arch);

/* The declared keys of a curves file and of one curve (util/schema.h), named
 * as models/compute/README.md's markers name them ("efficiency.curve"); *n
 * receives the count.  Static, borrowed. */
const FsSchemaEntry *fs_efficiency_schemas(guint *n);


FsEfficiency *fs_efficiency_new(void);
void fs_efficiency_free(FsEfficiency *eff);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsEfficiency, fs_efficiency_free)

/* Loads one curves file.  A curve whose key (kind, arch, dtype, causal) is
 * already present is an error unless replace is TRUE, in which case it
 * replaces the earlier one.  On error eff is unchanged. */
gboolean fs_efficiency_load_file(FsEfficiency *eff, const char *path, gboolean replace,
                                 GError **error);
/* The same from len bytes of text (-1: NUL-terminated); name stands for
 * the file in messages. */
gboolean fs_efficiency_load_string(FsEfficiency *eff, const char *text, gssize len,
                                   const char *name, gboolean replace, GError **error);

/* Loads every *.yaml in dir, sorted by name (duplicates are errors). */
FsEfficiency *fs_efficiency_load_dir(const char *dir, GError **error);

/* The curves folder: <models>/compute, where <models> is
 * fs_datadir(FS_DATA_MODELS) (util/datadir.h).  Caller frees. */
char *fs_efficiency_default_dir(void);

/* Loads dir, or fs_efficiency_default_dir() when dir is NULL. */
FsEfficiency *fs_efficiency_load_default(const char *dir, GError **error);

/* Adds or replaces the curve with this key (any_arch: arch ignored;
 * any_dtype: dtype ignored).  x and y (n points) are copied; x must be
 * strictly increasing and positive, y in (0, 1].  Error:
 * FS_EFFICIENCY_ERROR_INVALID. */
gboolean fs_efficiency_set(FsEfficiency *eff, FsEffKind kind, gboolean any_arch, FsGpuArch arch,
                           gboolean any_dtype, FsDtype dtype, FsEffCausal causal,
                           FsEffAxis axis, const double *x, const double *y, guint n,
                           const char *source, GError **error);

/* Lays measured GEMM efficiencies over the GEMM curve of (arch, dtype)
 * while keeping what they do not measure.  The prior curve is the one that
 * applied before (fs_efficiency_find); the new curve, keyed (gemm, arch,
 * dtype, axis flops), takes:
 *  - the points x, y (n ≥ 1, x FLOPs strictly increasing, y in (0, 1]) and,
 *    when the prior curve is on the flops axis, its points below x[0] and
 *    above x[n − 1] scaled by new / prior at that end (capped at 1), so that
 *    the prior ramp continues beyond the measured range;
 *  - the measured shapes (n_shapes rows of m, n, k, efficiency; m, n, k
 *    whole in [1, 2^30], efficiency in (0, 1], no shape twice) and every
 *    shape of the prior curve that they do not measure, its residual kept:
 *    efficiency = its residual against the prior curve × the new curve at
 *    its FLOPs (capped at 1);
 *  - the prior curve's shape_range (4 without a prior table), source as given.
 * A calibration that measured only squares thus keeps the catalog's shape
 * residuals, and one that measured shapes reproduces them exactly
 * (models/compute/README.md, "GEMM shapes").  On error (bad points or
 * shapes: FS_EFFICIENCY_ERROR_INVALID) eff is unchanged.  Cost O((n +
 * prior points + shapes) · prior shapes). */
gboolean fs_efficiency_calibrate_gemm(FsEfficiency *eff, FsGpuArch arch, FsDtype dtype,
                                      const double *x, const double *y, guint n,
                                      const double *shapes, guint n_shapes, const char *source,
                                      GError **error);

/* The best curve for a kernel (see the header comment for the order), or
 * NULL when none matches.  causal is ignored for non-attention kinds. */
const FsEffCurve *fs_efficiency_find(const FsEfficiency *eff, FsEffKind kind, FsGpuArch arch,
                                     FsDtype dtype, gboolean causal);

/* The curve's value at x (clamped at both ends).  Cost: O(log n). */
double fs_eff_curve_eval(const FsEffCurve *curve, double x);

/* The shape factor of a GEMM of m×n×k (per product of a batch) on a GEMM
 * curve with measured shapes: the efficiency of the kernel is
 * fs_eff_curve_eval(curve, flops) × this factor (capped at 1 by the
 * caller).  Each measured shape i gives a residual r_i = its efficiency /
 * the curve at its own FLOPs (2·m_i·n_i·k_i); the factor is their
 * inverse-square-distance mean, distance d_i measured in (ln m, ln n,
 * ln k), with the curve itself (residual 1) as one more neighbour at
 * distance ln(shape_range):
 *   factor = (1/ln²(range) + Σ r_i/d_i²) / (1/ln²(range) + Σ 1/d_i²).
 * At a measured shape it is that shape's residual exactly, so the model
 * reproduces the table there; far from every shape it tends to 1 (the
 * FLOPs curve alone).  1.0 for a curve without shapes or a zero
 * dimension.  Deterministic; cost O(n_shapes). */
double fs_eff_curve_shape_factor(const FsEffCurve *curve, double m, double n, double k);

/* The head-dimension factor of an attention kernel of head dimension d on
 * an attention curve with `head_dims:` rows (d_i, f_i): the efficiency of
 * the kernel is fs_eff_curve_eval(curve, seq_len) × this factor (capped at
 * 1 by the caller).  f_i is the published efficiency at head dim d_i over
 * the one at the head dim the curve's points were measured at (whose row
 * has factor 1); between rows the factor is piecewise linear in ln d,
 * outside them clamped to the first or last row.  1.0 for a curve
 * without rows or d < 1.  Deterministic; cost O(n_head_dims). */
double fs_eff_curve_head_dim_factor(const FsEffCurve *curve, double d);

/* fs_efficiency_find + eval at x, which must be on the found curve's axis
 * (fs_kernel_time picks x by the axis); 1.0 (the roofline itself) when no
 * curve matches.  *used (if non-NULL) is set to the curve or NULL. */
double fs_efficiency_lookup(const FsEfficiency *eff, FsEffKind kind, FsGpuArch arch,
                            FsDtype dtype, gboolean causal, double x, const FsEffCurve **used);

guint fs_efficiency_size(const FsEfficiency *eff);
/* i-th curve in load order. */
const FsEffCurve *fs_efficiency_nth(const FsEfficiency *eff, guint i);

G_END_DECLS
