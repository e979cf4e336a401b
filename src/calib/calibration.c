/* calibration.c — reading a calibration file and applying it to the
 * catalog (see calibration.h; the rules are validation/README.md's table
 * "How a calibration file overrides the catalog").
 */
#include "calib/calibration.h"

#include <math.h>
#include <string.h>

#include "util/json-pos.h"
#include "util/units.h"

G_DEFINE_QUARK(fs-calib-error-quark, fs_calib_error)

static const char *const nccl_op_names[] = {
#define X(id, str) str,
  FS_CALIB_NCCL_OPS(X)
#undef X
};

const char *fs_calib_nccl_op_name(FsCalibNcclOp op)
{
  g_return_val_if_fail(op < FS_CALIB_NCCL_N, "?");
  return nccl_op_names[op];
}

/* ---- typed access with positions ---------------------------------------- */

typedef struct {
  const FsJsonDoc *doc;
  GError **error;
} Rd;

static gboolean rd_fail(Rd *rd, const char *path, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static gboolean rd_fail(Rd *rd, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fs_json_doc_error(rd->doc, rd->error, FS_CALIB_ERROR, FS_CALIB_ERROR_INVALID, path, "%s", msg);
  return FALSE;
}

static const char *type_name(const json_t *v)
{
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER:
  case JSON_REAL: return "a number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  default: return "null";
  }
}

/* Member key of obj (at path) or NULL; *mpath receives the member's path. */
static json_t *member(const json_t *obj, const char *path, const char *key, char **mpath)
{
  *mpath = fs_json_path_member(path, key);
  return json_object_get(obj, key);
}

/* A required object member. */
static gboolean get_object(Rd *rd, const json_t *obj, const char *path, const char *key,
                           json_t **out, char **mpath)
{
  *out = member(obj, path, key, mpath);
  if (*out == NULL)
    return rd_fail(rd, *mpath, "missing; expected an object");
  if (!json_is_object(*out))
    return rd_fail(rd, *mpath, "expected an object, got %s", type_name(*out));
  return TRUE;
}

/* Physical bounds of the figures a calibration file holds (validation/
 * README.md, "Bounds"): a value outside is a typo or a broken probe, never
 * hardware, and is refused where it stands.  Bandwidths: up to 100 TB/s
 * (ten times the fastest memory of the catalog); latencies: up to 1 s;
 * link efficiencies: up to 2 (in-switch reduction at most halves what a
 * GPU sends; above 1 is kept but not applied, apply.c); the simulator-
 * fitted latency scale: the fitter's own range (nccl-simfit.c). */
typedef struct {
  double lo, hi;
  gboolean lo_open;   /* lo itself is out of range */
  const char *expect; /* "a bandwidth above 0 and at most 100000 GB/s" */
} Bound;

static const Bound BOUND_GBPS = {0, 1e5, TRUE, "a bandwidth above 0 and at most 100000 GB/s"};
static const Bound BOUND_GBPS0 = {0, 1e5, FALSE, "a bandwidth from 0 to 100000 GB/s"};
static const Bound BOUND_US = {0, 1e6, FALSE, "a latency from 0 to 1000000 us (1 s)"};
static const Bound BOUND_EFF = {0, 2, TRUE, "an efficiency above 0 and at most 2"};
static const Bound BOUND_SCALE = {FS_CALIB_HW_LATENCY_SCALE_MIN, FS_CALIB_HW_LATENCY_SCALE_MAX, FALSE,
                                  "a latency scale from 0.05 to 20 (the fitter's range)"};
static const Bound BOUND_TFLOPS = {0, 1e6, TRUE, "a rate above 0 and at most 1000000 TFLOP/s"};
static const Bound BOUND_BYTES = {0, 1.8e19, FALSE, "a size from 0 to 1.8e19 bytes"};

/* A required number within bound b. */
static gboolean get_bounded(Rd *rd, const json_t *obj, const char *path, const char *key,
                            const Bound *b, double *out)
{
  g_autofree char *mp = NULL;
  json_t *v = member(obj, path, key, &mp);
  if (v == NULL)
    return rd_fail(rd, mp, "missing; expected %s", b->expect);
  if (!json_is_number(v))
    return rd_fail(rd, mp, "expected a number, got %s", type_name(v));
  double d = json_number_value(v);
  if (!isfinite(d) || d < b->lo || (b->lo_open && d == b->lo) || d > b->hi)
    return rd_fail(rd, mp, "%g is out of range; expected %s", d, b->expect);
  *out = d;
  return TRUE;
}

/* A required non-negative integer up to max. */
static gboolean get_uint(Rd *rd, const json_t *obj, const char *path, const char *key,
                         uint64_t max, uint64_t *out)
{
  g_autofree char *mp = NULL;
  json_t *v = member(obj, path, key, &mp);
  if (v == NULL)
    return rd_fail(rd, mp, "missing; expected an integer");
  if (!json_is_integer(v))
    return rd_fail(rd, mp, "expected an integer, got %s", type_name(v));
  json_int_t i = json_integer_value(v);
  if (i < 0 || (uint64_t)i > max)
    return rd_fail(rd, mp, "%" JSON_INTEGER_FORMAT " is out of range; expected 0 to %" G_GUINT64_FORMAT,
                   i, max);
  *out = (uint64_t)i;
  return TRUE;
}

/* A required string (borrowed from the tree). */
static gboolean get_string(Rd *rd, const json_t *obj, const char *path, const char *key,
                           const char **out)
{
  g_autofree char *mp = NULL;
  json_t *v = member(obj, path, key, &mp);
  if (v == NULL)
    return rd_fail(rd, mp, "missing; expected a string");
  if (!json_is_string(v))
    return rd_fail(rd, mp, "expected a string, got %s", type_name(v));
  *out = json_string_value(v);
  return TRUE;
}

/* An optional string: NULL when absent; an error when not a string. */
static gboolean opt_string(Rd *rd, const json_t *obj, const char *path, const char *key,
                           const char **out)
{
  *out = NULL;
  if (obj == NULL || json_object_get(obj, key) == NULL)
    return TRUE;
  return get_string(rd, obj, path, key, out);
}

/* ---- reading --------------------------------------------------------------- */

static gboolean read_version(Rd *rd, const json_t *root, FsCalibration *cal)
{
  g_autofree char *mp = NULL;
  json_t *v = member(root, "$", "schema_version", &mp);
  if (v == NULL)
    return rd_fail(rd, mp, "missing; expected the integer %d", FS_CALIB_SCHEMA_MAJOR);
  if (!json_is_number(v))
    return rd_fail(rd, mp, "expected an integer, got %s", type_name(v));
  double d = json_number_value(v);
  if (!isfinite(d) || floor(d) != FS_CALIB_SCHEMA_MAJOR) {
    fs_json_doc_error(rd->doc, rd->error, FS_CALIB_ERROR, FS_CALIB_ERROR_VERSION, mp,
                      "schema version %g is not supported; this fabricsim reads major version %d "
                      "(validation/README.md)",
                      d, FS_CALIB_SCHEMA_MAJOR);
    return FALSE;
  }
  cal->schema_version = (int)floor(d);
  return TRUE;
}

/* Finds the entry of root's "devices" whose "index" equals "device_index" (an entry without
 * "index" counts as its array slot) and copies its name, SM count and memory size into cal.
 * Returns FALSE with the reader's error set when a field is missing or out of range, or when no
 * device has that index. */
static gboolean read_device(Rd *rd, const json_t *root, FsCalibration *cal)
{
  uint64_t index;
  if (!get_uint(rd, root, "$", "device_index", 1024, &index))
    return FALSE;
  g_autofree char *dpath = NULL;
  json_t *devs = member(root, "$", "devices", &dpath);
  if (devs == NULL)
    return rd_fail(rd, dpath, "missing; expected an array of devices");
  if (!json_is_array(devs))
    return rd_fail(rd, dpath, "expected an array, got %s", type_name(devs));
  /* Find the device whose index is device_index (normally at that slot). */
  json_t *dev = NULL;
  g_autofree char *path = NULL;
  for (size_t i = 0; i < json_array_size(devs); i++) {
    json_t *d = json_array_get(devs, i);
    g_autofree char *p = fs_json_path_index(dpath, i);
    if (!json_is_object(d))
      return rd_fail(rd, p, "expected an object, got %s", type_name(d));
    json_t *ix = json_object_get(d, "index");
    if ((ix != NULL && json_is_integer(ix) && (uint64_t)json_integer_value(ix) == index) ||
        (ix == NULL && i == index)) {
      dev = d;
      path = g_steal_pointer(&p);
      break;
    }
  }
  if (dev == NULL) {
    g_autofree char *ip = fs_json_path_member("$", "device_index");
    return rd_fail(rd, ip, "no device with index %" G_GUINT64_FORMAT " in \"devices\"", index);
  }
  const char *name;
  uint64_t sms, mem;
  if (!get_string(rd, dev, path, "name", &name) ||
      !get_uint(rd, dev, path, "sm_count", 100000, &sms) ||
      !get_uint(rd, dev, path, "memory_bytes", (uint64_t)1 << 50, &mem))
    return FALSE;
  cal->device_name = g_strdup(name);
  cal->sm_count = (guint)sms;
  cal->memory_bytes = mem;
  return TRUE;
}

static gboolean read_environment(Rd *rd, const json_t *root, FsCalibration *cal)
{
  json_t *env = json_object_get(root, "environment");
  if (env == NULL)
    return TRUE;
  g_autofree char *path = fs_json_path_member("$", "environment");
  if (!json_is_object(env))
    return rd_fail(rd, path, "expected an object, got %s", type_name(env));
  const char *gen, *width;
  if (!opt_string(rd, env, path, "nvidia_smi.pcie.link.gen.max", &gen) ||
      !opt_string(rd, env, path, "nvidia_smi.pcie.link.width.max", &width))
    return FALSE;
  cal->pcie_gen_max = g_strdup(gen);
  cal->pcie_width_max = g_strdup(width);
  return TRUE;
}

/* summary.<key>, or NULL when absent (an error when not an object). */
static gboolean summary_entry(Rd *rd, const json_t *summary, const char *key, json_t **out,
                              char **path)
{
  *path = fs_json_path_member("$.summary", key);
  *out = json_object_get(summary, key);
  if (*out != NULL && !json_is_object(*out))
    return rd_fail(rd, *path, "expected an object, got %s", type_name(*out));
  return TRUE;
}

static gboolean read_copies(Rd *rd, const json_t *summary, FsCalibration *cal)
{
  const char *keys[] = {"h2d_pinned", "d2h_pinned"};
  double *peak[] = {&cal->h2d_peak, &cal->d2h_peak};
  double *lat[] = {&cal->h2d_latency_us, &cal->d2h_latency_us};
  double *host[] = {&cal->h2d_host_latency_us, &cal->d2h_host_latency_us};
  for (int i = 0; i < 2; i++) {
    json_t *o;
    g_autofree char *p = NULL;
    if (!summary_entry(rd, summary, keys[i], &o, &p))
      return FALSE;
    if (o == NULL)
      continue;
    double gbps;
    if (!get_bounded(rd, o, p, "peak_bandwidth_GBps", &BOUND_GBPS, &gbps) ||
        !get_bounded(rd, o, p, "latency_4B_us", &BOUND_US, lat[i]))
      return FALSE;
    *peak[i] = gbps * 1e9;
    if (json_object_get(o, "host_latency_4B_us") != NULL &&
        !get_bounded(rd, o, p, "host_latency_4B_us", &BOUND_US, host[i]))
      return FALSE;
  }
  json_t *o;
  g_autofree char *p = NULL;
  if (!summary_entry(rd, summary, "bidir_pinned", &o, &p))
    return FALSE;
  if (o != NULL) {
    double gbps = 0;
    if (!get_bounded(rd, o, p, "peak_bandwidth_GBps", &BOUND_GBPS, &gbps))
      return FALSE;
    cal->bidir_peak = gbps * 1e9;
  }
  return TRUE;
}

static gboolean read_membw(Rd *rd, const json_t *summary, FsCalibration *cal)
{
  const char *keys[] = {"membw_copy", "membw_triad", "d2d_memcpy"};
  double *out[] = {&cal->membw_copy, &cal->membw_triad, &cal->d2d_memcpy};
  for (int i = 0; i < 3; i++) {
    json_t *o;
    g_autofree char *p = NULL;
    double gbps;
    if (!summary_entry(rd, summary, keys[i], &o, &p))
      return FALSE;
    if (o == NULL)
      continue;
    if (!get_bounded(rd, o, p, "bandwidth_GBps", &BOUND_GBPS, &gbps))
      return FALSE;
    *out[i] = gbps * 1e9;
  }
  return TRUE;
}

static gboolean read_launch(Rd *rd, const json_t *summary, FsCalibration *cal)
{
  json_t *o;
  g_autofree char *p = NULL;
  if (!summary_entry(rd, summary, "launch", &o, &p))
    return FALSE;
  if (o == NULL)
    return TRUE;
  const char *keys[] = {"async_us", "graph_us", "sync_us"};
  FsTime *out[] = {&cal->compute.launch_latency, &cal->compute.graph_launch_latency,
                   &cal->compute.sync_launch_latency};
  for (int i = 0; i < 3; i++) {
    double us;
    /* async_us is what overrides the catalog; the others are extras. */
    if (i > 0 && json_object_get(o, keys[i]) == NULL)
      continue;
    if (!get_bounded(rd, o, p, keys[i], &BOUND_US, &us))
      return FALSE;
    *out[i] = (FsTime)llround(us * 1e6);
  }
  return TRUE;
}

static gboolean read_nccl(Rd *rd, const json_t *summary, FsCalibration *cal)
{
  for (int op = 0; op < FS_CALIB_NCCL_N; op++) {
    g_autofree char *key = g_strdup_printf("nccl_%s", nccl_op_names[op]);
    json_t *o;
    g_autofree char *p = NULL;
    if (!summary_entry(rd, summary, key, &o, &p))
      return FALSE;
    if (o == NULL)
      continue;
    FsCalibNccl *n = &cal->nccl[op];
    uint64_t ranks, smallest = 0;
    double algbw = 0, busbw = 0;
    if (!get_uint(rd, o, p, "ranks", 65536, &ranks) ||
        !get_bounded(rd, o, p, "latency_floor_us", &BOUND_US, &n->latency_floor_us))
      return FALSE;
    if (ranks < 1) {
      g_autofree char *mp = fs_json_path_member(p, "ranks");
      return rd_fail(rd, mp, "expected at least 1 rank");
    }
    if ((json_object_get(o, "smallest_size_bytes") != NULL &&
         !get_uint(rd, o, p, "smallest_size_bytes", G_MAXUINT64 >> 1, &smallest)) ||
        (json_object_get(o, "peak_algbw_GBps") != NULL &&
         !get_bounded(rd, o, p, "peak_algbw_GBps", &BOUND_GBPS0, &algbw)) ||
        (json_object_get(o, "peak_busbw_GBps") != NULL &&
         !get_bounded(rd, o, p, "peak_busbw_GBps", &BOUND_GBPS0, &busbw)))
      return FALSE;
    n->present = TRUE;
    n->ranks = (guint)ranks;
    n->smallest_size = smallest;
    n->peak_algbw = algbw * 1e9;
    n->peak_busbw = busbw * 1e9;
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

/* Reads the "gemm" probe records of root's "measurements" array (absent is fine) into
 * cal->compute.gemm, one array per catalog datatype, sorted by m·n·k then shape; cal owns them.
 * A datatype with no catalog counterpart is skipped with one warning in cal->warnings. On a
 * malformed record it sets the reader's error (rd_fail) and returns FALSE; the points read
 * before it are kept in cal. */
static gboolean read_gemm(Rd *rd, const json_t *root, FsCalibration *cal)
{
  json_t *ms = json_object_get(root, "measurements");
  if (ms == NULL)
    return TRUE;
  if (!json_is_array(ms))
    return rd_fail(rd, "$.measurements", "expected an array, got %s", type_name(ms));
  GArray *pts[FS_DTYPE_N];
  for (int d = 0; d < FS_DTYPE_N; d++)
    pts[d] = g_array_new(FALSE, TRUE, sizeof(FsCalibGemmPoint));
  gboolean ok = TRUE;
  GHashTable *warned = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (size_t i = 0; ok && i < json_array_size(ms); i++) {
    json_t *r = json_array_get(ms, i);
    g_autofree char *p = fs_json_path_index("$.measurements", i);
    const char *probe, *dtname, *shape;
    if (!json_is_object(r)) {
      ok = rd_fail(rd, p, "expected an object, got %s", type_name(r));
      break;
    }
    if (!get_string(rd, r, p, "probe", &probe)) {
      ok = FALSE;
      break;
    }
    if (strcmp(probe, "gemm") != 0)
      continue;
    FsCalibGemmPoint pt = {0};
    double tflops;
    if (!get_string(rd, r, p, "dtype", &dtname) || !get_string(rd, r, p, "shape", &shape) ||
        !get_uint(rd, r, p, "m", 1u << 30, &pt.m) || !get_uint(rd, r, p, "n", 1u << 30, &pt.n) ||
        !get_uint(rd, r, p, "k", 1u << 30, &pt.k) || !get_bounded(rd, r, p, "tflops", &BOUND_TFLOPS, &tflops)) {
      ok = FALSE;
      break;
    }
    if (pt.m == 0 || pt.n == 0 || pt.k == 0) {
      ok = rd_fail(rd, p, "a GEMM dimension is 0; expected m, n and k above 0");
      break;
    }
    FsDtype dt;
    if (!gemm_dtype(dtname, &dt)) {
      if (!g_hash_table_contains(warned, dtname)) {
        g_hash_table_add(warned, g_strdup(dtname));
        g_ptr_array_add(cal->warnings,
                        g_strdup_printf("%s: GEMM datatype \"%s\" has no catalog datatype; its "
                                        "records are not used",
                                        cal->file, dtname));
      }
      continue;
    }
    if (json_object_get(r, "min_bytes") != NULL &&
        !get_bounded(rd, r, p, "min_bytes", &BOUND_BYTES, &pt.min_bytes)) {
      ok = FALSE;
      break;
    }
    pt.shape = g_strdup(shape);
    pt.flops = 2.0 * (double)pt.m * (double)pt.n * (double)pt.k;
    pt.rate = tflops * 1e12;
    g_array_append_val(pts[dt], pt);
  }
  g_hash_table_destroy(warned);
  for (int d = 0; d < FS_DTYPE_N; d++) {
    g_array_sort(pts[d], gemm_cmp);
    cal->compute.n_gemm[d] = pts[d]->len;
    cal->compute.gemm[d] = (FsCalibGemmPoint *)(void *)g_array_free(pts[d], FALSE);
  }
  return ok;
}

/* fitted.links: {"nvlink": {"efficiency": 0.9, "step_latency_us": 1.0,
 * "models": ["nvlink4"]}, ...}. */
static gboolean read_fitted(Rd *rd, const json_t *fitted, FsCalibration *cal)
{
  json_t *links;
  g_autofree char *lp = NULL;
  if (!get_object(rd, fitted, "$.fitted", "links", &links, &lp))
    return FALSE;
  cal->link_fits = g_new0(FsCalibLinkFit, json_object_size(links) + 1);
  /* Families in enum order, so that the result does not depend on the
   * file's member order. */
  for (int fam = 0; fam < FS_LINK_N_FAMILIES; fam++) {
    const char *key = fs_link_family_name((FsLinkFamily)fam);
    json_t *o = json_object_get(links, key);
    if (o == NULL)
      continue;
    g_autofree char *p = fs_json_path_member(lp, key);
    if (!json_is_object(o))
      return rd_fail(rd, p, "expected an object, got %s", type_name(o));
    FsCalibLinkFit *f = &cal->link_fits[cal->n_link_fits];
    f->family = (FsLinkFamily)fam;
    if (!get_bounded(rd, o, p, "efficiency", &BOUND_EFF, &f->efficiency) ||
        !get_bounded(rd, o, p, "step_latency_us", &BOUND_US, &f->step_latency_us))
      return FALSE;
    if (json_object_get(o, "hw_latency_scale") != NULL &&
        !get_bounded(rd, o, p, "hw_latency_scale", &BOUND_SCALE, &f->hw_latency_scale))
      return FALSE;
    g_autofree char *mp = NULL;
    json_t *models = member(o, p, "models", &mp);
    if (models == NULL || !json_is_array(models))
      return rd_fail(rd, mp, "expected an array of link model names");
    f->models = g_new0(char *, json_array_size(models) + 1);
    cal->n_link_fits++;
    for (size_t i = 0; i < json_array_size(models); i++) {
      json_t *m = json_array_get(models, i);
      if (!json_is_string(m)) {
        g_autofree char *ip = fs_json_path_index(mp, i);
        return rd_fail(rd, ip, "expected a link model name, got %s", type_name(m));
      }
      f->models[i] = g_strdup(json_string_value(m));
    }
  }
  const char *key_;
  json_t *value_;
  json_object_foreach(links, key_, value_)
  {
    (void)value_;
    FsLinkFamily fam;
    if (!fs_link_family_from_name(key_, &fam)) {
      g_autofree char *p = fs_json_path_member(lp, key_);
      return rd_fail(rd, p, "unknown link family \"%s\"", key_);
    }
  }
  return TRUE;
}

static gboolean read_all(Rd *rd, FsCalibration *cal)
{
  const json_t *root = fs_json_doc_root(rd->doc);
  if (!json_is_object(root))
    return rd_fail(rd, "$", "expected an object (a calibration file), got %s", type_name(root));
  if (!read_version(rd, root, cal))
    return FALSE;
  json_t *fitted = json_object_get(root, "fitted");
  if (fitted != NULL) {
    if (!json_is_object(fitted))
      return rd_fail(rd, "$.fitted", "expected an object, got %s", type_name(fitted));
    if (!read_fitted(rd, fitted, cal))
      return FALSE;
    /* A file of fitted figures only (fabricsim calibrate) measures no device. */
    if (json_object_get(root, "devices") == NULL && json_object_get(root, "summary") == NULL) {
      const char *date;
      if (!opt_string(rd, root, "$", "date", &date))
        return FALSE;
      cal->date = g_strdup(date != NULL ? date : "undated");
      cal->mode = g_strdup("fitted");
      return TRUE;
    }
  }
  if (!read_device(rd, root, cal) || !read_environment(rd, root, cal))
    return FALSE;
  const char *date, *mode;
  if (!opt_string(rd, root, "$", "date", &date) || !opt_string(rd, root, "$", "mode", &mode))
    return FALSE;
  cal->date = g_strdup(date != NULL ? date : "undated");
  cal->mode = g_strdup(mode != NULL ? mode : "");
  json_t *summary;
  g_autofree char *sp = NULL;
  return get_object(rd, root, "$", "summary", &summary, &sp) && read_copies(rd, summary, cal) &&
         read_membw(rd, summary, cal) && read_launch(rd, summary, cal) &&
         read_nccl(rd, summary, cal) && read_gemm(rd, root, cal);
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
  Rd rd = {doc, error};
  if (!read_all(&rd, cal)) {
    fs_calibration_free(cal);
    return NULL;
  }
  cal->n_load_warnings = cal->warnings->len;
  return cal;
}

FsCalibration *fs_calibration_load(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  g_autoptr(FsJsonDoc) doc = fs_json_doc_load(path, error);
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
