/* calibration.h — the calibration file (validation/README.md, schema
 * version 1): reading it, deriving catalog overrides from it, and applying
 * them to a loaded FsCatalog.
 *
 * fs_calibration_load reads the file and keeps the measured figures it
 * uses (the summaries, the GEMM records, the device and nvidia-smi
 * environment).  fs_calibration_apply then matches the measured device to
 * a catalog GPU model (by SM count, memory within 5 % and the product
 * name), derives every override by the rules of validation/README.md and
 * sets them through the catalog's setters (catalog.h), recording each
 * change (model, field, before, after, rule) for `fabricsim models
 * --calibration`.  What the catalog has no field for — GEMM efficiency
 * points, graph and synchronous launch costs, NCCL's base latencies — is
 * kept in plain records (FsCalibCompute, FsCalibNccl) that the compute
 * model and the collective layer read.
 *
 * Ownership: FsCalibration owns every string and array in it; after apply
 * it holds no pointer into the catalog (models are named by their names).
 * Errors: FS_CALIB_ERROR (or FS_JSON_ERROR for a file that is not JSON),
 * each message "file:line:col: $.json.path: what was expected".
 * Cost: linear in the file.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "compute/efficiency.h"
#include "util/schema.h"

G_BEGIN_DECLS

#define FS_CALIB_ERROR (fs_calib_error_quark())
GQuark fs_calib_error_quark(void);

typedef enum {
  FS_CALIB_ERROR_INVALID,  /* a member is missing, of the wrong type or out of range */
  FS_CALIB_ERROR_VERSION,  /* a schema_version this reader does not know */
  FS_CALIB_ERROR_NO_MATCH, /* no catalog model matches the measured device */
} FsCalibError;

/* The newest schema major version this reader understands. */
#define FS_CALIB_SCHEMA_MAJOR 1

/* NCCL records of the nccl probe (`nccl_<op>` in the file). */
#define FS_CALIB_NCCL_OPS(X)           \
  X(ALL_REDUCE, "all_reduce")          \
  X(ALL_GATHER, "all_gather")          \
  X(REDUCE_SCATTER, "reduce_scatter")  \
  X(BROADCAST, "broadcast")            \
  X(SENDRECV, "sendrecv")

typedef enum {
#define X(id, str) FS_CALIB_NCCL_##id,
  FS_CALIB_NCCL_OPS(X)
#undef X
  FS_CALIB_NCCL_N
} FsCalibNcclOp;

const char *fs_calib_nccl_op_name(FsCalibNcclOp op);

/* One measured GEMM (a `gemm` record). */
typedef struct {
  char *shape;          /* "square_8192", "llama7b_qkv" … */
  uint64_t m, n, k;
  double flops;         /* 2·m·n·k */
  double min_bytes;     /* A and B read once, D written once */
  double rate;          /* measured FLOP/s */
  double efficiency;    /* flops / (the matched GPU's peak for the dtype × (flops / rate −
                         * launch_latency)); 0 before apply or when not used */
} FsCalibGemmPoint;

/* What the compute model takes from a calibration.  Zero means "not
 * measured: keep the default". */
typedef struct {
  FsTime launch_latency;       /* launch_async: back-to-back kernels on a stream */
  FsTime graph_launch_latency; /* launch_graph: per node of a CUDA graph */
  FsTime sync_launch_latency;  /* launch_sync: a kernel the host waits for */
  double memory_efficiency;    /* max(copy, triad, d2d) / memory_bandwidth */
  double stream_efficiency;    /* triad / memory_bandwidth (kernels that only stream) */
  /* GEMM points per catalog datatype, sorted by m·n·k (ties: by shape). */
  guint n_gemm[FS_DTYPE_N];
  FsCalibGemmPoint *gemm[FS_DTYPE_N];
} FsCalibCompute;

/* One `summary.nccl_<op>` entry. */
typedef struct {
  gboolean present;
  guint ranks;
  uint64_t smallest_size;
  double latency_floor_us;     /* median time at the smallest size */
  double peak_algbw, peak_busbw; /* bytes/s */
} FsCalibNccl;

/* One override that apply made (or, with applied = FALSE, derived but could
 * not make; `rule` then says why). */
typedef struct {
  char *model;   /* catalog model, or "compute" / "nccl" for figures outside the catalog */
  char *field;
  char *before;  /* formatted, "-" when the field was new */
  char *after;
  char *rule;    /* the arithmetic, one line */
  gboolean applied;
} FsCalibChange;

/* The range of a simulator-fitted hw_latency_scale: the fitter searches
 * it (nccl-simfit.c) and the reader refuses a file's value outside it. */
#define FS_CALIB_HW_LATENCY_SCALE_MIN 0.05
#define FS_CALIB_HW_LATENCY_SCALE_MAX 20.0

/* One family of the `fitted.links` section (fabricsim calibrate). */
typedef struct {
  FsLinkFamily family;
  double efficiency;        /* link efficiency to set on every model below */
  double step_latency_us;   /* NCCL latency per step over this family (for coll) */
  double hw_latency_scale;  /* factor on NCCL's hw latencies of the family's class,
                               fitted through the simulator; 0 = not fitted */
  char **models;            /* catalog link models, NULL-terminated */
} FsCalibLinkFit;

typedef struct {
  /* From the file. */
  char *file;
  int schema_version;
  char *date, *mode;
  char *device_name;
  guint sm_count;
  uint64_t memory_bytes;
  char *pcie_gen_max, *pcie_width_max;   /* nvidia-smi; NULL when absent */
  /* Host link (bytes/s and µs; 0 = absent). */
  double h2d_peak, d2h_peak, bidir_peak;
  double h2d_latency_us, d2h_latency_us;
  double h2d_host_latency_us, d2h_host_latency_us;
  /* Device memory at 1 GiB arrays (bytes/s; 0 = absent). */
  double membw_copy, membw_triad, d2d_memcpy;
  FsCalibCompute compute;
  FsCalibNccl nccl[FS_CALIB_NCCL_N];
  /* The `fitted` section's links (fabricsim calibrate nccl-tests). */
  guint n_link_fits;
  FsCalibLinkFit *link_fits;

  /* Set by fs_calibration_apply (gpu_model stays NULL for a file with only
   * a `fitted` section). */
  char *gpu_model;       /* the matched catalog GPU model */
  char *host_link;       /* its pcie model, NULL when not overridden */
  double host_link_efficiency; /* min(h2d, d2h) / raw; 0 = not derived */
  double host_duplex;    /* bidir / (2 × min(h2d, d2h)); 0 = not measured */
  FsTime copy_latency;   /* mean of the 4 B H2D and D2H event medians */
  char *provenance;      /* "calibration FILE (date, device)" */
  GPtrArray *changes;    /* FsCalibChange *, in the order of the README's table */
  GPtrArray *warnings;   /* char *, sentences */
  guint n_load_warnings; /* warnings[0 .. n) came from the load; apply redoes the rest */
} FsCalibration;

/* The schemas of the calibration file (util/schema.h), for
 * tools/gen-schema-docs; static, *n receives their count. */
const FsSchemaEntry *fs_calibration_schemas(guint *n);

/* Reads a calibration file.  Refuses a schema_version whose major part is
 * not FS_CALIB_SCHEMA_MAJOR (FS_CALIB_ERROR_VERSION).  Required:
 * schema_version, device_index, devices[device_index] (name, sm_count,
 * memory_bytes) and summary — or, instead of those three, a `fitted`
 * section (fitted.links.FAMILY: efficiency, step_latency_us, models); every summary entry and measurement kind is
 * optional, but an entry that is there must have the fields the override
 * rules use, with the right types.  Unknown members, probes and GEMM
 * datatypes are ignored (a warning for GEMM datatypes). */
FsCalibration *fs_calibration_load(const char *path, GError **error);
/* The same from len bytes of text; name stands for the file in messages. */
FsCalibration *fs_calibration_load_string(const char *text, gsize len, const char *name,
                                          GError **error);
void fs_calibration_free(FsCalibration *cal);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCalibration, fs_calibration_free)

/* Matches the device to a GPU model of cat and applies every override the
 * file allows (see validation/README.md for the rules).  Fails with
 * FS_CALIB_ERROR_NO_MATCH naming the device when no model (or more than
 * one equally good) matches; the catalog is unchanged then.  A second
 * apply to another catalog is allowed (changes are recomputed). */
gboolean fs_calibration_apply(FsCalibration *cal, FsCatalog *cat, GError **error);

/* Loads the catalog (models_dir, or the default folder when NULL) and,
 * when calibration_file is non-NULL, loads and applies it; *cal_out (if
 * non-NULL) receives the calibration (NULL without a file).  What every
 * simulating command calls for `--models DIR --calibration FILE`. */
FsCatalog *fs_calibration_load_catalog(const char *models_dir, const char *calibration_file,
                                       FsCalibration **cal_out, GError **error);

/* Lays the measured GEMM points over the compute model's curves: for each
 * datatype with points, the curve (gemm, the matched GPU's architecture,
 * that datatype, axis flops) takes the squares' efficiencies at x =
 * 2·m·n·k as its points (every record's when none is square; equal FLOPs
 * averaged; values above 1 clamped to 1) and every record as a measured
 * shape, keeping from the curve it replaces what the file does not measure
 * (fs_efficiency_calibrate_gemm: the ramp beyond the measured FLOPs, the
 * residuals of shapes not measured), with the calibration as its source.  Needs a prior fs_calibration_apply
 * that matched a GPU (else nothing to do: returns TRUE).  Errors:
 * FS_EFFICIENCY_ERROR from fs_efficiency_set. */
gboolean fs_calibration_apply_efficiency(const FsCalibration *cal, const FsCatalog *cat,
                                         FsEfficiency *eff, GError **error);

/* NCCL's hardware latency per step implied by a multi-rank record:
 * (latency_floor − base) / nsteps with nsteps = 2(n−1) for all_reduce and
 * n−1 for all_gather/reduce_scatter/broadcast (1 for sendrecv); 0 for one
 * rank or a floor below base.  base_us is NCCL's base latency (models/nccl). */
double fs_calib_nccl_step_latency(const FsCalibNccl *n, FsCalibNcclOp op, double base_us);

G_END_DECLS
