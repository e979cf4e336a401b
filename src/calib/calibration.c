/* calibration.c — reading a calibration file and applying it to the
 * catalog (see calibration.h; the rules are validation/README.md's table
 * "How a calibration file overrides the catalog").
 */
#include "calib/calibration.h"

#include <math.h>
#include <string.h>

#include "catalog/names.h"
#include "util/datadir.h"
#include "util/error.h"
#include "util/json-pos.h"
#include "util/names.h"
#include "util/schema.h"
#include "util/units.h"
#include "util/yaml.h"

G_DEFINE_QUARK(fs-calib-error-quark, fs_calib_error)

static const char *const nccl_op_names[] = { FS_CALIB_NCCL_OPS(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE_NAME(FsCalibNcclOp, fs_calib_nccl_op, nccl_op_names, FS_CALIB_NCCL_N)

/* ---- the format: schemas ------------------------------------------------
 *
 * The calibration file is JSON (validation/README.md, "Calibration file
 * format"); it is read as a tree of FsYamlNode (util/yaml.h's JSON front
 * end) against the tables below, so that every message has the form
 * "file:line:col: $.path: sentence".  Members the tables do not declare are
 * ignored: probe output carries more than fabricsim reads, and newer
 * probes add members (schema minor versions).
 *
 * Physical bounds of the figures (validation/README.md, "Bounds"): a value
 * outside is a typo or a broken probe, never hardware, and is refused where
 * it stands.  Bandwidths: up to 100 TB/s (ten times the fastest memory of
 * the catalog); latencies: up to 1 s; link efficiencies: up to 2 (in-switch
 * reduction at most halves what a GPU sends; above 1 is kept but not
 * applied, apply.c); the simulator-fitted latency scale: the fitter's own
 * range (nccl-simfit.c). */

/* The top level, the device and the environment, read into this record
 * before they are copied into FsCalibration (strings borrowed from the
 * tree). */
typedef struct {
  double version;
  guint device_index;
  const char *date, *mode, *gen_max, *width_max;
  const char *name;
  guint sm_count;
  uint64_t memory_bytes;
} Head;

#define HOFF(m) offsetof(Head, m)
#define COFF(m) offsetof(FsCalibration, m)
#define NOFF(m) offsetof(FsCalibNccl, m)
#define NOWHERE FS_SCHEMA_NOWHERE
#define UNLESS_FITTED "yes, unless the file holds `fitted` only"

/* A bandwidth in GB/s, above 0 (open) or from 0. */
#define GBPS(k, off, req, lo_open, d)                                                            \
  {.key = k, .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_BANDWIDTH, .number_unit = "GB/s",     \
   .offset = off, .required = req, .min = "0", .min_open = lo_open, .max = "100000", .doc = d}
/* A latency in µs kept as a number of µs. */
#define US(k, off, req, d)                                                                       \
  {.key = k, .type = FS_SCHEMA_DOUBLE, .number_unit = "us", .offset = off, .required = req,      \
   .min = "0", .max = "1000000", .doc = d}
/* A latency in µs stored as FsTime. */
#define US_TIME(k, off, req, d)                                                                  \
  {.key = k, .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_TIME, .number_unit = "us",            \
   .offset = off, .required = req, .min = "0", .max = "1000000", .doc = d}

static const FsSchemaField version_fields[] = {
  {.key = "schema_version", .type = FS_SCHEMA_DOUBLE, .offset = HOFF(version), .required = TRUE,
   .value_doc = "number", .doc = "the format's version: major 1 is read, any minor part (`1.2`)"},
};
static const FsSchema version_schema = {"calibration file", NULL, version_fields,
                                        G_N_ELEMENTS(version_fields)};

static const FsSchemaField links_fields[] = {
  {.key = "links", .type = FS_SCHEMA_MAP, .offset = NOWHERE, .required = TRUE,
   .value_doc = "mapping of link family to `calibration.link_fit`",
   .doc = "one entry per link family fitted (`nvlink`, `pcie`, …)"},
};
static const FsSchema fitted_schema = {"fitted", NULL, links_fields, G_N_ELEMENTS(links_fields)};

static const FsSchemaField environment_fields[] = {
  {.key = "nvidia_smi.pcie.link.gen.max", .type = FS_SCHEMA_STRING, .offset = HOFF(gen_max),
   .doc = "the PCIe generation nvidia-smi reports (reported only)"},
  {.key = "nvidia_smi.pcie.link.width.max", .type = FS_SCHEMA_STRING, .offset = HOFF(width_max),
   .doc = "the PCIe link width nvidia-smi reports (reported only)"},
};
static const FsSchema environment_schema = {"environment", NULL, environment_fields,
                                            G_N_ELEMENTS(environment_fields)};

static const FsSchemaField top_fields[] = {
  {.key = "fitted", .type = FS_SCHEMA_MAP, .offset = NOWHERE, .sub = &fitted_schema,
   .value_doc = "mapping (`calibration.fitted`)",
   .doc = "figures fitted by `fabricsim calibrate`; a file may hold only these"},
  {.key = "device_index", .type = FS_SCHEMA_UINT, .offset = HOFF(device_index), .max = "1024",
   .required_doc = UNLESS_FITTED, .doc = "the `index` of the measured device in `devices`"},
  {.key = "devices", .type = FS_SCHEMA_LIST, .offset = NOWHERE, .required_doc = UNLESS_FITTED,
   .value_doc = "list of `calibration.device`",
   .doc = "the devices of the machine (an entry without `index` is its slot)"},
  {.key = "environment", .type = FS_SCHEMA_MAP, .offset = NOWHERE, .sub = &environment_schema,
   .value_doc = "mapping (`calibration.environment`)", .doc = "what the probe saw of the host"},
  {.key = "date", .type = FS_SCHEMA_STRING, .offset = HOFF(date),
   .doc = "when it was measured (`undated` when absent)"},
  {.key = "mode", .type = FS_SCHEMA_STRING, .offset = HOFF(mode), .doc = "the probe's mode"},
  {.key = "summary", .type = FS_SCHEMA_MAP, .offset = NOWHERE, .required_doc = UNLESS_FITTED,
   .value_doc = "mapping (`calibration.summary`)", .doc = "the probe's figures"},
  {.key = "measurements", .type = FS_SCHEMA_LIST, .offset = NOWHERE,
   .value_doc = "list of `calibration.gemm` (and other probes' records)",
   .doc = "raw records; the `gemm` ones give the GEMM curves"},
};
static const FsSchema top_schema = {"calibration file", &version_schema, top_fields,
                                    G_N_ELEMENTS(top_fields)};

static const FsSchemaField device_fields[] = {
  {.key = "index", .type = FS_SCHEMA_UINT, .offset = NOWHERE,
   .doc = "the device's index (`device_index` names it)"},
  {.key = "name", .type = FS_SCHEMA_STRING, .offset = HOFF(name), .required = TRUE,
   .doc = "the device's name (matched against the catalog's GPUs)"},
  {.key = "sm_count", .type = FS_SCHEMA_UINT, .offset = HOFF(sm_count), .required = TRUE,
   .max = "100000", .doc = "streaming multiprocessors"},
  {.key = "memory_bytes", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE, .number_unit = "B",
   .offset = HOFF(memory_bytes), .required = TRUE, .max = "1125899906842624",
   .doc = "device memory"},
};
static const FsSchema device_schema = {"device", NULL, device_fields, G_N_ELEMENTS(device_fields)};

/* summary.h2d_pinned and d2h_pinned: the same fields, other places. */
#define COPY_FIELDS(dir)                                                                         \
  GBPS("peak_bandwidth_GBps", COFF(dir##_peak), TRUE, TRUE, "peak pinned copy bandwidth"),      \
    US("latency_4B_us", COFF(dir##_latency_us), TRUE, "4-byte copy, event-timed median"),       \
    US("host_latency_4B_us", COFF(dir##_host_latency_us), FALSE,                                \
       "4-byte copy as the host waits for it")
static const FsSchemaField h2d_fields[] = {COPY_FIELDS(h2d)};
static const FsSchemaField d2h_fields[] = {COPY_FIELDS(d2h)};
static const FsSchema h2d_schema = {"h2d_pinned", NULL, h2d_fields, G_N_ELEMENTS(h2d_fields)};
static const FsSchema d2h_schema = {"d2h_pinned", NULL, d2h_fields, G_N_ELEMENTS(d2h_fields)};
static const FsSchemaField bidir_fields[] = {
  GBPS("peak_bandwidth_GBps", COFF(bidir_peak), TRUE, TRUE, "both directions at once, summed"),
};
static const FsSchema bidir_schema = {"bidir_pinned", NULL, bidir_fields, 1};
#define MEMBW(name)                                                                              \
  static const FsSchemaField name##_fields[] = {                                                 \
    GBPS("bandwidth_GBps", COFF(name), TRUE, TRUE, "device memory bandwidth at 1 GiB arrays"),   \
  };                                                                                             \
  static const FsSchema name##_schema = {#name, NULL, name##_fields, 1};
MEMBW(membw_copy)
MEMBW(membw_triad)
MEMBW(d2d_memcpy)
static const FsSchemaField launch_fields[] = {
  US_TIME("async_us", COFF(compute.launch_latency), TRUE, "back-to-back kernels on a stream"),
  US_TIME("graph_us", COFF(compute.graph_launch_latency), FALSE, "per node of a CUDA graph"),
  US_TIME("sync_us", COFF(compute.sync_launch_latency), FALSE, "a kernel the host waits for"),
};
static const FsSchema launch_schema = {"launch", NULL, launch_fields, G_N_ELEMENTS(launch_fields)};

#define SUMMARY_ENTRY(k, s, d)                                                                   \
  {.key = k, .type = FS_SCHEMA_MAP, .offset = NOWHERE, .sub = s, .doc = d}
#define NCCL_ENTRY(id, str)                                                                      \
  {.key = "nccl_" str, .type = FS_SCHEMA_MAP, .offset = NOWHERE,                                 \
   .value_doc = "mapping (`calibration.nccl`)", .doc = "nccl-tests " str " figures"},
static const FsSchemaField summary_fields[] = {
  SUMMARY_ENTRY("h2d_pinned", &h2d_schema, "host to device copies (`calibration.copy`)"),
  SUMMARY_ENTRY("d2h_pinned", &d2h_schema, "device to host copies (`calibration.copy`)"),
  SUMMARY_ENTRY("bidir_pinned", &bidir_schema, "`peak_bandwidth_GBps` of both at once"),
  SUMMARY_ENTRY("membw_copy", &membw_copy_schema, "`bandwidth_GBps` of a copy kernel"),
  SUMMARY_ENTRY("membw_triad", &membw_triad_schema, "`bandwidth_GBps` of a triad kernel"),
  SUMMARY_ENTRY("d2d_memcpy", &d2d_memcpy_schema, "`bandwidth_GBps` of cudaMemcpy on the device"),
  SUMMARY_ENTRY("launch", &launch_schema, "kernel launch latencies (`calibration.launch`)"),
  FS_CALIB_NCCL_OPS(NCCL_ENTRY)
};
static const FsSchema summary_schema = {"summary", NULL, summary_fields,
                                        G_N_ELEMENTS(summary_fields)};

static const FsSchemaField nccl_fields[] = {
  {.key = "ranks", .type = FS_SCHEMA_UINT, .offset = NOFF(ranks), .required = TRUE, .min = "1",
   .max = "65536", .doc = "ranks of the run"},
  US("latency_floor_us", NOFF(latency_floor_us), TRUE, "median time at the smallest size"),
  {.key = "smallest_size_bytes", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE,
   .number_unit = "B", .offset = NOFF(smallest_size), .max = "9223372036854775807",
   .doc = "the smallest size measured"},
  GBPS("peak_algbw_GBps", NOFF(peak_algbw), FALSE, FALSE, "peak algorithm bandwidth"),
  GBPS("peak_busbw_GBps", NOFF(peak_busbw), FALSE, FALSE, "peak bus bandwidth"),
};
static const FsSchema nccl_schema = {"nccl entry", NULL, nccl_fields, G_N_ELEMENTS(nccl_fields)};

/* One `measurements` record (any probe), and the fields of a `gemm` one. */
typedef struct {
  const char *probe, *dtype, *shape;
  guint m, n, k;
  double rate, min_bytes;
} Gemm;
#define GOFF(m) offsetof(Gemm, m)
#define DIM(k) {.key = #k, .type = FS_SCHEMA_UINT, .offset = GOFF(k), .required = TRUE,          \
                .min = "1", .max = "1073741824", .doc = "GEMM dimension (C is m×n, k summed)"}
static const FsSchemaField record_fields[] = {
  {.key = "probe", .type = FS_SCHEMA_STRING, .offset = GOFF(probe), .required = TRUE,
   .doc = "the probe that wrote the record; only `gemm` records are read"},
};
static const FsSchema record_schema = {"measurement", NULL, record_fields, 1};
static const FsSchemaField gemm_fields[] = {
  {.key = "dtype", .type = FS_SCHEMA_STRING, .offset = GOFF(dtype), .required = TRUE,
   .doc = "`fp32`, `tf32`, `bf16`, `fp16` or `fp8_e4m3` (others are skipped with a warning)"},
  {.key = "shape", .type = FS_SCHEMA_STRING, .offset = GOFF(shape), .required = TRUE,
   .doc = "the shape's name (`square_8192`)"},
  DIM(m), DIM(n), DIM(k),
  {.key = "tflops", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_FLOPS, .number_unit = "TFLOP/s",
   .offset = GOFF(rate), .required = TRUE, .min = "0", .min_open = TRUE, .max = "1000000",
   .doc = "the measured rate"},
  {.key = "min_bytes", .type = FS_SCHEMA_DOUBLE, .number_unit = "B", .offset = GOFF(min_bytes),
   .min = "0", .max = "1.8e19", .doc = "A and B read once, D written once"},
};
static const FsSchema gemm_schema = {"gemm record", &record_schema, gemm_fields,
                                     G_N_ELEMENTS(gemm_fields)};

static const FsSchemaField link_fit_fields[] = {
  {.key = "efficiency", .type = FS_SCHEMA_DOUBLE, .offset = offsetof(FsCalibLinkFit, efficiency),
   .required = TRUE, .min = "0", .min_open = TRUE, .max = "2",
   .doc = "link efficiency to set on every model of `models`"},
  US("step_latency_us", offsetof(FsCalibLinkFit, step_latency_us), TRUE,
     "NCCL latency per step over this family"),
  {.key = "hw_latency_scale", .type = FS_SCHEMA_DOUBLE,
   .offset = offsetof(FsCalibLinkFit, hw_latency_scale),
   .min = G_STRINGIFY(FS_CALIB_HW_LATENCY_SCALE_MIN),
   .max = G_STRINGIFY(FS_CALIB_HW_LATENCY_SCALE_MAX),
   .doc = "factor on NCCL's hardware latencies of the family (the fitter's range)"},
  {.key = "models", .type = FS_SCHEMA_LIST, .offset = NOWHERE, .required = TRUE,
   .value_doc = "list of link model names", .doc = "the catalog link models it applies to"},
};
static const FsSchema link_fit_schema = {"link fit", NULL, link_fit_fields,
                                         G_N_ELEMENTS(link_fit_fields)};

static const FsSchemaEntry schemas[] = {
  {"calibration.version", &version_schema}, {"calibration.file", &top_schema},        {"calibration.fitted", &fitted_schema},
  {"calibration.link_fit", &link_fit_schema}, {"calibration.device", &device_schema},
  {"calibration.environment", &environment_schema}, {"calibration.summary", &summary_schema},
  {"calibration.copy", &h2d_schema},        {"calibration.launch", &launch_schema},
  {"calibration.nccl", &nccl_schema},       {"calibration.gemm", &gemm_schema},
};

const FsSchemaEntry *fs_calibration_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
}

/* ---- reading --------------------------------------------------------------- */

/* Unknown members are left alone (see above). */
static const FsSchemaRead lenient = {.allow_unknown = TRUE};

/* Finds the entry of "devices" whose "index" equals device_index (an entry
 * without "index" counts as its slot) and reads it into head. */
static gboolean read_device(const FsYamlNode *root, Head *head, GError **error)
{
  const FsYamlNode *ixn = fs_yaml_require_key(root, "device_index", "calibration file", error);
  const FsYamlNode *devs = ixn ? fs_yaml_require_key(root, "devices", "calibration file", error)
                               : NULL;
  if (devs == NULL)
    return FALSE;
  for (guint i = 0; i < devs->n; i++) {
    const FsYamlNode *d = devs->values[i];
    if (!fs_yaml_require_map(d, error))
      return FALSE;
    const FsYamlNode *ix = fs_yaml_map_get(d, "index");
    int64_t v;
    if ((ix != NULL && fs_yaml_get_int(ix, 0, INT64_MAX, &v, NULL) && v == head->device_index) ||
        (ix == NULL && i == head->device_index))
      return fs_schema_read(&device_schema, d, head, &lenient, error);
  }
  fs_yaml_error(error, ixn, "no device with index %u in \"devices\"", head->device_index);
  return FALSE;
}

static gboolean read_nccl(const FsYamlNode *summary, FsCalibration *cal, GError **error)
{
  for (int op = 0; op < FS_CALIB_NCCL_N; op++) {
    g_autofree char *key = g_strdup_printf("nccl_%s", nccl_op_names[op]);
    const FsYamlNode *o = fs_yaml_map_get(summary, key);
    if (o == NULL)
      continue;
    if (!fs_schema_read(&nccl_schema, o, &cal->nccl[op], &lenient, error))
      return FALSE;
    cal->nccl[op].present = TRUE;
  }
  return TRUE;
}

/* The file's GEMM datatype names and the catalog datatypes they measure. */
static gboolean gemm_dtype(const char *name, FsDtype *out)
{
  static const struct { const char *file; FsDtype dt; } map[] = {
    {"fp32", FS_DTYPE_FP32}, {"tf32", FS_DTYPE_TF32}, {"bf16", FS_DTYPE_BF16},
    {"fp16", FS_DTYPE_FP16}, {"fp8_e4m3", FS_DTYPE_FP8},
  };
  for (guint i = 0; i < G_N_ELEMENTS(map); i++)
    if (strcmp(name, map[i].file) == 0) {
      *out = map[i].dt;
      return TRUE;
    }
  return FALSE;
}

static gint gemm_cmp(gconstpointer a, gconstpointer b)
{
  const FsCalibGemmPoint *x = a, *y = b;
  double vx = (double)x->m * (double)x->n * (double)x->k;
  double vy = (double)y->m * (double)y->n * (double)y->k;
  if (vx != vy)
    return vx < vy ? -1 : 1;
  return strcmp(x->shape, y->shape);
}

/* Reads the "gemm" records of "measurements" (absent is fine) into
 * cal->compute.gemm, one array per catalog datatype, sorted by m·n·k then
 * shape; cal owns them.  A datatype with no catalog counterpart is skipped
 * with one warning in cal->warnings.  FALSE at the first malformed record;
 * the points read before it are kept in cal. */
static gboolean read_gemm(const FsYamlNode *root, FsCalibration *cal, GError **error)
{
  const FsYamlNode *ms = fs_yaml_map_get(root, "measurements");
  GArray *pts[FS_DTYPE_N];
  for (int d = 0; d < FS_DTYPE_N; d++)
    pts[d] = g_array_new(FALSE, TRUE, sizeof(FsCalibGemmPoint));
  gboolean ok = TRUE;
  g_autoptr(GHashTable) warned = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; ok && ms != NULL && i < ms->n; i++) {
    Gemm g = {0};
    ok = fs_schema_read(&record_schema, ms->values[i], &g, &lenient, error);
    if (!ok || strcmp(g.probe, "gemm") != 0)
      continue;
    FsSchemaRead own = {.allow_unknown = TRUE, .skip_base = TRUE};
    ok = fs_schema_read(&gemm_schema, ms->values[i], &g, &own, error);
    FsDtype dt;
    if (!ok)
      break;
    if (!gemm_dtype(g.dtype, &dt)) {
      if (g_hash_table_add(warned, (gpointer)g.dtype))
        g_ptr_array_add(cal->warnings,
                        g_strdup_printf("%s: GEMM datatype \"%s\" has no catalog datatype; its "
                                        "records are not used",
                                        cal->file, g.dtype));
      continue;
    }
    FsCalibGemmPoint pt = {.shape = g_strdup(g.shape), .m = g.m, .n = g.n, .k = g.k,
                           .min_bytes = g.min_bytes, .rate = g.rate};
    pt.flops = 2.0 * (double)pt.m * (double)pt.n * (double)pt.k;
    g_array_append_val(pts[dt], pt);
  }
  for (int d = 0; d < FS_DTYPE_N; d++) {
    g_array_sort(pts[d], gemm_cmp);
    cal->compute.n_gemm[d] = pts[d]->len;
    cal->compute.gemm[d] = (FsCalibGemmPoint *)(void *)g_array_free(pts[d], FALSE);
  }
  return ok;
}

/* fitted.links: {"nvlink": {"efficiency": 0.9, "step_latency_us": 1.0,
 * "models": ["nvlink4"]}, ...}, read in the order of the families (not of
 * the file), so that the result does not depend on the member order. */
static gboolean read_fitted(const FsYamlNode *fitted, FsCalibration *cal, GError **error)
{
  const FsYamlNode *links = fs_yaml_map_get(fitted, "links");
  if (!fs_yaml_check_keys(links, fs_link_family_names, "fitted links", error))
    return FALSE;
  cal->link_fits = g_new0(FsCalibLinkFit, links->n + 1);
  for (int fam = 0; fam < FS_LINK_N_FAMILIES; fam++) {
    const FsYamlNode *o = fs_yaml_map_get(links, fs_link_family_name((FsLinkFamily)fam));
    if (o == NULL)
      continue;
    FsCalibLinkFit *f = &cal->link_fits[cal->n_link_fits];
    f->family = (FsLinkFamily)fam;
    if (!fs_schema_read(&link_fit_schema, o, f, &lenient, error))
      return FALSE;
    const FsYamlNode *models = fs_yaml_map_get(o, "models");
    f->models = g_new0(char *, models->n + 1);
    cal->n_link_fits++;
    for (guint i = 0; i < models->n; i++) {
      const char *m;
      if (!fs_yaml_get_string(models->values[i], &m, error))
        return FALSE;
      f->models[i] = g_strdup(m);
    }
  }
  return TRUE;
}

/* Reads the whole file: the version first (a file of another major version
 * is refused before anything else is judged), then the rest in the order of
 * the tables. */
static gboolean read_all(const FsYamlNode *root, FsCalibration *cal, GError **error)
{
  Head head = {0};
  if (!fs_yaml_require_map(root, error) ||
      !fs_schema_read(&version_schema, root, &head, &lenient, error))
    return FALSE;
  if (!isfinite(head.version) || floor(head.version) != FS_CALIB_SCHEMA_MAJOR) {
    const FsYamlNode *v = fs_yaml_map_get(root, "schema_version");
    fs_set_error_at(error, FS_CALIB_ERROR, FS_CALIB_ERROR_VERSION, v->file, v->line, v->col,
                    "%s: schema version %s is not supported; this fabricsim reads major version "
                    "%d (validation/README.md)",
                    v->path, v->value, FS_CALIB_SCHEMA_MAJOR);
    return FALSE;
  }
  cal->schema_version = (int)floor(head.version);
  FsSchemaRead own = {.allow_unknown = TRUE, .skip_base = TRUE};
  if (!fs_schema_read(&top_schema, root, &head, &own, error))
    return FALSE;
  const FsYamlNode *fitted = fs_yaml_map_get(root, "fitted");
  if (fitted != NULL && !read_fitted(fitted, cal, error))
    return FALSE;
  /* A file of fitted figures only (fabricsim calibrate) measures no device. */
  gboolean fitted_only = fitted != NULL && fs_yaml_map_get(root, "devices") == NULL &&
                         fs_yaml_map_get(root, "summary") == NULL;
  cal->date = g_strdup(head.date != NULL ? head.date : "undated");
  if (fitted_only) {
    cal->mode = g_strdup("fitted");
    return TRUE;
  }
  cal->mode = g_strdup(head.mode != NULL ? head.mode : "");
  if (!read_device(root, &head, error))
    return FALSE;
  cal->device_name = g_strdup(head.name);
  cal->sm_count = head.sm_count;
  cal->memory_bytes = head.memory_bytes;
  cal->pcie_gen_max = g_strdup(head.gen_max);
  cal->pcie_width_max = g_strdup(head.width_max);
  const FsYamlNode *summary = fs_yaml_require_key(root, "summary", "calibration file", error);
  return summary != NULL && fs_schema_read(&summary_schema, summary, cal, &lenient, error) &&
         read_nccl(summary, cal, error) && read_gemm(root, cal, error);
}

static void change_free(gpointer p)
{
  FsCalibChange *c = p;
  g_free(c->model);
  g_free(c->field);
  g_free(c->before);
  g_free(c->after);
  g_free(c->rule);
  g_free(c);
}

static FsCalibration *from_doc(const FsJsonDoc *doc, GError **error)
{
  FsCalibration *cal = g_new0(FsCalibration, 1);
  cal->file = g_strdup(fs_json_doc_name(doc));
  cal->changes = g_ptr_array_new_with_free_func(change_free);
  cal->warnings = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(FsYamlDoc) tree = fs_yaml_doc_from_json(doc);
  GError *local = NULL;
  if (!read_all(fs_yaml_doc_root(tree), cal, &local)) {
    /* The walker's errors are the calibration module's. */
    if (local->domain == FS_YAML_ERROR) {
      local->domain = FS_CALIB_ERROR;
      local->code = FS_CALIB_ERROR_INVALID;
    }
    g_propagate_error(error, local);
    fs_calibration_free(cal);
    return NULL;
  }
  cal->n_load_warnings = cal->warnings->len;
  return cal;
}

FsCalibration *fs_calibration_load(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  g_autofree char *found = fs_datadir_resolve(path);
  g_autoptr(FsJsonDoc) doc = fs_json_doc_load(found, error);
  return doc != NULL ? from_doc(doc, error) : NULL;
}

FsCalibration *fs_calibration_load_string(const char *text, gsize len, const char *name,
                                          GError **error)
{
  g_return_val_if_fail(text != NULL && name != NULL, NULL);
  g_autoptr(FsJsonDoc) doc = fs_json_doc_parse(text, len, name, error);
  return doc != NULL ? from_doc(doc, error) : NULL;
}

void fs_calibration_free(FsCalibration *cal)
{
  if (cal == NULL)
    return;
  for (int d = 0; d < FS_DTYPE_N; d++) {
    for (guint i = 0; i < cal->compute.n_gemm[d]; i++)
      g_free(cal->compute.gemm[d][i].shape);
    g_free(cal->compute.gemm[d]);
  }
  for (guint i = 0; i < cal->n_link_fits; i++)
    g_strfreev(cal->link_fits[i].models);
  g_free(cal->link_fits);
  g_free(cal->file);
  g_free(cal->date);
  g_free(cal->mode);
  g_free(cal->device_name);
  g_free(cal->pcie_gen_max);
  g_free(cal->pcie_width_max);
  g_free(cal->gpu_model);
  g_free(cal->host_link);
  g_free(cal->provenance);
  if (cal->changes)
    g_ptr_array_free(cal->changes, TRUE);
  if (cal->warnings)
    g_ptr_array_free(cal->warnings, TRUE);
  g_free(cal);
}
