/* efficiency.c — see efficiency.h. */
#include "compute/efficiency.h"

#include <math.h>
#include <string.h>

#include "util/datadir.h"
#include "util/error.h"
#include "util/names.h"
#include "util/schema.h"
#include "util/yaml.h"

G_DEFINE_QUARK(fs-efficiency-error-quark, fs_efficiency_error)

/* `shape_range:` when a curve with shapes does not give one (README). */
#define DEFAULT_SHAPE_RANGE 4

/* Name tables, NULL-terminated for the schema below. */
static const char *const kind_names[] = { FS_EFF_KINDS(FS_NAMES_ENTRY) NULL };

static const char *const axis_names[] = { FS_EFF_AXES(FS_NAMES_ENTRY) NULL };

/* Names from the catalog's X-macro lists, so that this module does not
 * need the catalog's code to parse them; "any" (index FS_ARCH_N) matches
 * every architecture. */
static const char *const arch_names[] = { FS_GPU_ARCHS(FS_NAMES_ENTRY) "any", NULL };

static const char *const dtype_names[] = { FS_DTYPES(FS_NAMES_ENTRY) NULL };

static const char *const scale_names[] = { "log", "linear", NULL };

FS_NAMES_DEFINE(FsEffKind, fs_eff_kind, kind_names, FS_EFF_N_KINDS, fs_names_index)
FS_NAMES_DEFINE(FsEffAxis, fs_eff_axis, axis_names, FS_EFF_N_AXES, fs_names_index)

struct FsEfficiency {
  GPtrArray *curves; /* FsEffCurve *, load order */
  GPtrArray *hosts;  /* FsEffHost *, load order, one per architecture key */
  FsEffCommHbm *comm_hbm; /* or NULL */
};

static void comm_hbm_free(FsEffCommHbm *c)
{
  if (c == NULL)
    return;
  g_free(c->source);
  g_free(c->file);
  g_free(c);
}

static void host_free(gpointer p)
{
  FsEffHost *h = p;
  if (h == NULL)
    return;
  g_free(h->source);
  g_free(h->file);
  g_free(h);
}

static void curve_free(gpointer p)
{
  FsEffCurve *c = p;
  if (c == NULL)
    return;
  g_free(c->x);
  g_free(c->y);
  g_free(c->source);
  g_free(c->note);
  g_free(c->file);
  g_free(c->shapes);
  g_free(c->shape_cache);
  g_free(c->head_dims);
  g_free(c->tiles);
  g_free(c);
}

FsEfficiency *fs_efficiency_new(void)
{
  FsEfficiency *eff = g_new0(FsEfficiency, 1);
  eff->curves = g_ptr_array_new_with_free_func(curve_free);
  eff->hosts = g_ptr_array_new_with_free_func(host_free);
  return eff;
}

void fs_efficiency_free(FsEfficiency *eff)
{
  if (eff == NULL)
    return;
  g_ptr_array_free(eff->curves, TRUE);
  g_ptr_array_free(eff->hosts, TRUE);
  comm_hbm_free(eff->comm_hbm);
  g_free(eff);
}

guint fs_efficiency_size(const FsEfficiency *eff)
{
  return eff->curves->len;
}

const FsEffCurve *fs_efficiency_nth(const FsEfficiency *eff, guint i)
{
  g_return_val_if_fail(i < eff->curves->len, NULL);
  return g_ptr_array_index(eff->curves, i);
}

static gboolean same_key(const FsEffCurve *a, const FsEffCurve *b)
{
  return a->kind == b->kind && a->any_arch == b->any_arch &&
         (a->any_arch || a->arch == b->arch) && a->any_dtype == b->any_dtype &&
         (a->any_dtype || a->dtype == b->dtype) && a->causal == b->causal;
}

static int find_key(const GPtrArray *curves, const FsEffCurve *c)
{
  for (guint i = 0; i < curves->len; i++)
    if (same_key(g_ptr_array_index(curves, i), c))
      return (int)i;
  return -1;
}

/* Checks the points of a curve; the message has no position (callers add it). */
static gboolean check_points(const double *x, const double *y, guint n, char **why)
{
  if (n == 0) {
    *why = g_strdup("a curve needs at least one point");
    return FALSE;
  }
  for (guint i = 0; i < n; i++) {
    if (!(x[i] > 0) || !isfinite(x[i])) {
      *why = g_strdup_printf("point %u: x must be a positive number, got %g", i + 1, x[i]);
      return FALSE;
    }
    if (!(y[i] > 0 && y[i] <= 1)) {
      *why = g_strdup_printf("point %u: efficiency must be in (0, 1], got %g", i + 1, y[i]);
      return FALSE;
    }
    if (i > 0 && !(x[i] > x[i - 1])) {
      *why = g_strdup_printf("point %u: x must increase (%g after %g)", i + 1, x[i], x[i - 1]);
      return FALSE;
    }
  }
  return TRUE;
}

/* Puts c into curves (taking it), replacing the curve with its key when
 * replace is set.  On a duplicate without replace, frees c and fails. */
static gboolean insert_curve(GPtrArray *curves, FsEffCurve *c, gboolean replace, GError **error)
{
  int at = find_key(curves, c);
  if (at < 0) {
    g_ptr_array_add(curves, c);
    return TRUE;
  }
  if (!replace) {
    const FsEffCurve *old = g_ptr_array_index(curves, at);
    fs_set_error_at(error, FS_EFFICIENCY_ERROR, FS_EFFICIENCY_ERROR_DUPLICATE, c->file, c->line,
                    c->col, "a %s curve for this arch, dtype and causal flag is already defined at %s:%d:%d",
                    fs_eff_kind_name(c->kind), old->file, old->line, old->col);
    curve_free(c);
    return FALSE;
  }
  curve_free(g_ptr_array_index(curves, at));
  g_ptr_array_index(curves, at) = c;
  return TRUE;
}

gboolean fs_efficiency_set(FsEfficiency *eff, FsEffKind kind, gboolean any_arch, FsGpuArch arch,
                           gboolean any_dtype, FsDtype dtype, FsEffCausal causal,
                           FsEffAxis axis, const double *x, const double *y, guint n,
                           const char *source, GError **error)
{
  g_return_val_if_fail(eff != NULL && (guint)kind < FS_EFF_N_KINDS, FALSE);
  g_autofree char *why = NULL;
  if (!check_points(x, y, n, &why)) {
    g_set_error(error, FS_EFFICIENCY_ERROR, FS_EFFICIENCY_ERROR_INVALID, "%s curve: %s",
                fs_eff_kind_name(kind), why);
    return FALSE;
  }
  FsEffCurve *c = g_new0(FsEffCurve, 1);
  c->kind = kind;
  c->any_arch = any_arch;
  c->arch = any_arch ? 0 : arch;
  c->any_dtype = any_dtype;
  c->dtype = any_dtype ? 0 : dtype;
  c->causal = kind == FS_EFF_ATTENTION_FWD || kind == FS_EFF_ATTENTION_BWD ? causal
                                                                           : FS_EFF_CAUSAL_ANY;
  c->axis = axis;
  c->log_scale = TRUE;
  c->n = n;
  c->x = g_memdup2(x, n * sizeof(double));
  c->y = g_memdup2(y, n * sizeof(double));
  c->source = g_strdup(source ? source : "");
  c->note = g_strdup("");
  c->file = g_strdup("");
  return insert_curve(eff->curves, c, TRUE, error);
}

static void shapes_prepare(FsEffCurve *c);

/* The index of the shape m×n×k (s[0..2]) among the first n rows of 4
 * doubles, or -1. */
static int shape_index(const double *rows, guint n, const double *s)
{
  for (guint i = 0; i < n; i++) {
    const double *r = rows + 4 * (gsize)i;
    if (r[0] == s[0] && r[1] == s[1] && r[2] == s[2])
      return (int)i;
  }
  return -1;
}

/* Checks n_shapes rows of (m, n, k, efficiency) as parse_shapes does for a
 * file; the message has no position. */
static gboolean check_shape_rows(const double *rows, guint n_shapes, char **why)
{
  for (guint i = 0; i < n_shapes; i++) {
    const double *r = rows + 4 * (gsize)i;
    for (guint j = 0; j < 3; j++)
      if (!(r[j] >= 1 && r[j] <= 1073741824.0) || r[j] != floor(r[j])) {
        *why = g_strdup_printf("shape %u: a GEMM dimension must be a whole number from 1 to "
                               "1073741824, got %g", i + 1, r[j]);
        return FALSE;
      }
    if (!(r[3] > 0 && r[3] <= 1)) {
      *why = g_strdup_printf("shape %u: efficiency must be in (0, 1], got %g", i + 1, r[3]);
      return FALSE;
    }
    int p = shape_index(rows, i, r);
    if (p >= 0) {
      *why = g_strdup_printf("shape %gx%gx%g is given twice (shapes %d and %u)", r[0], r[1], r[2],
                             p + 1, i + 1);
      return FALSE;
    }
  }
  return TRUE;
}


/* Builds the calibrated curve (points, then shapes against those points)
 * from the measured figures and the prior curve, and swaps it in; see the
 * header for the rules. */
gboolean fs_efficiency_calibrate_gemm(FsEfficiency *eff, FsGpuArch arch, FsDtype dtype,
                                      const double *x, const double *y, guint n,
                                      const double *shapes, guint n_shapes, const char *source,
                                      GError **error)
{
  g_return_val_if_fail(eff != NULL && (n_shapes == 0 || shapes != NULL), FALSE);
  g_autofree char *why = NULL;
  if (!check_points(x, y, n, &why) || !check_shape_rows(shapes, n_shapes, &why)) {
    g_set_error(error, FS_EFFICIENCY_ERROR, FS_EFFICIENCY_ERROR_INVALID, "gemm curve: %s", why);
    return FALSE;
  }
  const FsEffCurve *prior = fs_efficiency_find(eff, FS_EFF_GEMM, arch, dtype, FALSE);
  if (prior != NULL && prior->axis != FS_EFF_AXIS_FLOPS)
    prior = NULL;
  /* The points: the prior ramp below the measured range, scaled to meet
   * its first point; the measured ones; the prior beyond, scaled likewise. */
  g_autoptr(GArray) px = g_array_new(FALSE, FALSE, sizeof(double));
  g_autoptr(GArray) py = g_array_new(FALSE, FALSE, sizeof(double));
  double lo = prior ? y[0] / fs_eff_curve_eval(prior, x[0]) : 1;
  double hi = prior ? y[n - 1] / fs_eff_curve_eval(prior, x[n - 1]) : 1;
  for (guint i = 0; prior != NULL && i < prior->n && prior->x[i] < x[0]; i++) {
    double v = MIN(1.0, prior->y[i] * lo);
    g_array_append_val(px, prior->x[i]);
    g_array_append_val(py, v);
  }
  g_array_append_vals(px, x, n);
  g_array_append_vals(py, y, n);
  for (guint i = 0; prior != NULL && i < prior->n; i++) {
    if (prior->x[i] <= x[n - 1])
      continue;
    double v = MIN(1.0, prior->y[i] * hi);
    g_array_append_val(px, prior->x[i]);
    g_array_append_val(py, v);
  }
  FsEffCurve *c = g_new0(FsEffCurve, 1);
  c->kind = FS_EFF_GEMM;
  c->arch = arch;
  c->dtype = dtype;
  c->causal = FS_EFF_CAUSAL_ANY;
  c->axis = FS_EFF_AXIS_FLOPS;
  c->log_scale = TRUE;
  c->n = px->len;
  c->x = (double *)(void *)g_array_free(g_steal_pointer(&px), FALSE);
  c->y = (double *)(void *)g_array_free(g_steal_pointer(&py), FALSE);
  c->source = g_strdup(source ? source : "");
  c->note = g_strdup("");
  c->file = g_strdup("");
  /* The shapes: the measured ones, then the prior's that they do not
   * measure, each at its prior residual times the new curve. */
  guint n_prior = prior != NULL ? prior->n_shapes : 0;
  c->shapes = g_new(double, 4 * ((gsize)n_shapes + n_prior) + 1);
  if (n_shapes > 0)
    memcpy(c->shapes, shapes, 4 * (gsize)n_shapes * sizeof(double));
  c->n_shapes = n_shapes;
  for (guint i = 0; i < n_prior; i++) {
    const double *s = prior->shapes + 4 * (gsize)i;
    if (shape_index(shapes, n_shapes, s) >= 0)
      continue;
    double *o = c->shapes + 4 * (gsize)c->n_shapes++;
    o[0] = s[0];
    o[1] = s[1];
    o[2] = s[2];
    o[3] = MIN(1.0, prior->shape_cache[4 * (gsize)i + 3] * fs_eff_curve_eval(c, 2.0 * s[0] * s[1] * s[2]));
  }
  if (c->n_shapes == 0)
    g_clear_pointer(&c->shapes, g_free);
  c->shape_range = n_prior > 0 ? prior->shape_range : DEFAULT_SHAPE_RANGE;
  shapes_prepare(c);
  return insert_curve(eff->curves, c, TRUE, error);
}

/* ---- YAML ---------------------------------------------------------------- */

/* The keys of a curve and of a curves file (util/schema.h); the README's
 * format tables are printed from them (tools/gen-schema-docs). */
#define OFF(member) offsetof(FsEffCurve, member)
static const FsSchemaField curve_fields[] = {
  {.key = "kind", .type = FS_SCHEMA_ENUM, .offset = OFF(kind), .required = TRUE,
   .names = kind_names, .label = "curve kind", .doc = "which kernels the curve times"},
  {.key = "arch", .type = FS_SCHEMA_ENUM, .offset = OFF(arch), .required = TRUE,
   .names = arch_names, .label = "architecture (or \"any\")",
   .doc = "a catalog architecture, or `any` for every GPU"},
  {.key = "dtype", .type = FS_SCHEMA_ENUM, .offset = OFF(dtype), .names = dtype_names,
   .label = "dtype", .required_doc = "no (any datatype)",
   .doc = "the curve applies to this datatype only"},
  {.key = "causal", .type = FS_SCHEMA_BOOL, .offset = FS_SCHEMA_NOWHERE,
   .required_doc = "no (either)", .doc = "attention curves only: with or without a causal mask"},
  {.key = "axis", .type = FS_SCHEMA_ENUM, .offset = OFF(axis), .names = axis_names,
   .label = "axis", .required_doc = "no (per kind, below)", .doc = "what x is"},
  {.key = "scale", .type = FS_SCHEMA_ENUM, .offset = FS_SCHEMA_NOWHERE, .names = scale_names,
   .label = "scale", .def = "log", .doc = "interpolate in log(x) or in x"},
  {.key = "points", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .value_doc = "list of `[x, efficiency]`",
   .doc = "x strictly increasing and positive (at most 1e30), efficiency in (0, 1]"},
  {.key = "source", .type = FS_SCHEMA_STRING, .offset = OFF(source), .required = TRUE,
   .doc = "where the points come from (not empty)"},
  {.key = "note", .type = FS_SCHEMA_STRING, .offset = OFF(note), .def = "",
   .doc = "a remark"},
  {.key = "shapes", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "list of `[m, n, k, efficiency]`", .required_doc = "no (the curve alone)",
   .doc = "`gemm` curves on the `flops` axis only: measured GEMM shapes that pull the curve "
          "towards themselves nearby (\"GEMM shapes\" below); m, n, k integers from 1 to "
          "1073741824, efficiency in (0, 1], each shape once"},
  {.key = "shape_range", .type = FS_SCHEMA_DOUBLE, .offset = OFF(shape_range), .min = "1",
   .min_open = TRUE, .max = "1e6", .def = G_STRINGIFY(DEFAULT_SHAPE_RANGE),
   .doc = "with `shapes`: the factor in every dimension at which a lone shape's pull falls to "
          "half"},
  {.key = "head_dims", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "list of `[head_dim, factor]`", .required_doc = "no (factor 1)",
   .doc = "attention curves only: the efficiency at a head dimension over the one at the head "
          "dimension the points were measured at (\"Attention by head dimension\" below); head "
          "dims integers from 1 to 65536, strictly increasing, factor in (0, 4]"},
  {.key = "tiles", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "list of `[head_dim, block, step]`", .required_doc = "no (occupancy not modelled)",
   .doc = "attention curves only, with `measured_tokens` and `measured_hidden`: the thread-block "
          "tile of the timed kernels per head dimension, rows of queries (forward) or keys "
          "(backward) per block and keys or queries per loop step (\"Attention: thread blocks "
          "and SMs\" below); integers from 1 to 65536, head dims strictly increasing"},
  {.key = "measured_tokens", .type = FS_SCHEMA_UINT, .offset = OFF(measured_tokens), .min = "1",
   .max = "1073741824", .required_doc = "with `tiles`",
   .doc = "batch × sequence length of the kernels every point was measured on (the batch is "
          "this over the length, rounded, at least 1)"},
  {.key = "measured_hidden", .type = FS_SCHEMA_UINT, .offset = OFF(measured_hidden), .min = "1",
   .max = "1048576", .required_doc = "with `tiles`",
   .doc = "heads × head dimension of the kernels every point and `head_dims` row was measured on "
          "(the heads are this over the head dimension, rounded, at least 1)"},
  {.key = "tiles_source", .type = FS_SCHEMA_STRING, .offset = FS_SCHEMA_NOWHERE,
   .required_doc = "with `tiles`", .doc = "where the tiles come from (not empty)"},
};
#undef OFF
static const FsSchema curve_schema = {"curve", NULL, curve_fields, G_N_ELEMENTS(curve_fields)};

#define OFF(member) offsetof(FsEffHost, member)
#define HOST_TIME(k, member, text)                                                        \
  {.key = k, .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_TIME, .offset = OFF(member),     \
   .required = TRUE, .min = "0", .max = "1 s", .doc = text}
static const FsSchemaField host_fields[] = {
  {.key = "arch", .type = FS_SCHEMA_ENUM, .offset = OFF(arch), .required = TRUE,
   .names = arch_names, .label = "architecture (or \"any\")",
   .doc = "a catalog architecture, or `any` for every GPU"},
  HOST_TIME("eager_op", eager_op,
            "host time per GPU op issued eagerly (framework, autograd and launch)"),
  HOST_TIME("graph_launch", graph_launch, "host time per CUDA-graph launch"),
  HOST_TIME("gpu_gap", gpu_gap,
            "the GPU's own gap per kernel while the host runs ahead (replaces the GPU model's "
            "`launch_latency` when a host model runs)"),
  {.key = "source", .type = FS_SCHEMA_STRING, .offset = OFF(source), .required = TRUE,
   .nonempty = TRUE, .doc = "where the figures come from (not empty)"},
};
#undef HOST_TIME
#undef OFF
static const FsSchema host_schema = {"host costs", NULL, host_fields, G_N_ELEMENTS(host_fields)};

#define OFF(member) offsetof(FsEffCommHbm, member)
static const FsSchemaField comm_hbm_fields[] = {
  {.key = "collective", .type = FS_SCHEMA_DOUBLE, .offset = OFF(collective), .required = TRUE,
   .min = "0", .max = "16",
   .doc = "HBM bytes per byte a GPU receives in an NCCL collective (ring, tree) or a TE "
          "userbuffers exchange"},
  {.key = "point_to_point", .type = FS_SCHEMA_DOUBLE, .offset = OFF(point_to_point),
   .required = TRUE, .min = "0", .max = "16",
   .doc = "HBM bytes per byte a GPU receives in NCCL send/recv and all-to-all"},
  {.key = "source", .type = FS_SCHEMA_STRING, .offset = OFF(source), .required = TRUE,
   .nonempty = TRUE, .doc = "where the figures come from (not empty)"},
};
#undef OFF
static const FsSchema comm_hbm_schema = {"communication HBM", NULL, comm_hbm_fields,
                                         G_N_ELEMENTS(comm_hbm_fields)};

static const FsSchemaField file_fields[] = {
  {.key = "curves", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .value_doc = "list of curves", .doc = "the curves of the file"},
  {.key = "host", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "list of host-cost entries", .required_doc = "no (none)",
   .doc = "host (framework) costs of issuing GPU work, one entry per architecture (\"Host "
          "costs\" below)"},
  {.key = "comm_hbm", .type = FS_SCHEMA_MAP, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "mapping (`efficiency.comm_hbm`)", .required_doc = "no (none)",
   .doc = "HBM traffic of communication kernels per byte received (\"Communication and HBM\" "
          "below); in one file of a set unless replacing"},
  {.key = "description", .type = FS_SCHEMA_STRING, .offset = FS_SCHEMA_NOWHERE,
   .doc = "free text about the file"},
};
static const FsSchema file_schema = {"curves file", NULL, file_fields, G_N_ELEMENTS(file_fields)};

static const FsSchemaEntry schemas[] = {
  {"efficiency.file", &file_schema},
  {"efficiency.curve", &curve_schema},
  {"efficiency.host", &host_schema},
  {"efficiency.comm_hbm", &comm_hbm_schema},
};

const FsSchemaEntry *fs_efficiency_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
}

/* The axis each kind uses when the file does not say. */
static FsEffAxis default_axis(FsEffKind k)
{
  switch (k) {
  case FS_EFF_GEMM:
    return FS_EFF_AXIS_MIN_DIM;
  case FS_EFF_ATTENTION_FWD:
  case FS_EFF_ATTENTION_BWD:
    return FS_EFF_AXIS_SEQ_LEN;
  default:
    return FS_EFF_AXIS_BYTES;
  }
}

/* Reads a curve's "shapes" list into c->shapes (m, n, k, efficiency per
 * row): only on a gemm curve on the flops axis, each row four numbers, m,
 * n, k whole from 1 to 2^30, efficiency in (0, 1], no shape twice.  The
 * error is at the offending node. */
static gboolean parse_shapes(FsEffCurve *c, const FsYamlNode *list, GError **error)
{
  if (c->kind != FS_EFF_GEMM || c->axis != FS_EFF_AXIS_FLOPS) {
    fs_yaml_error(error, list, "\"shapes\" applies only to a gemm curve with axis: flops");
    return FALSE;
  }
  if (list->n == 0) {
    fs_yaml_error(error, list, "\"shapes\" is empty; expected a list like [[4096, 12288, 4096, 0.73]]");
    return FALSE;
  }
  g_autofree double *rows = g_new(double, 4 * (gsize)list->n);
  for (guint i = 0; i < list->n; i++) {
    const FsYamlNode *r = list->values[i];
    if (r->kind != FS_YAML_SEQ || r->n != 4) {
      fs_yaml_error(error, r, "expected a shape [m, n, k, efficiency], got %s",
                    fs_yaml_kind_name(r));
      return FALSE;
    }
    double *row = rows + 4 * (gsize)i;
    for (guint j = 0; j < 3; j++) {
      if (!fs_yaml_get_double(r->values[j], 1, 1073741824.0, &row[j], error))
        return FALSE;
      if (row[j] != floor(row[j])) {
        fs_yaml_error(error, r->values[j], "a GEMM dimension must be a whole number, got %g", row[j]);
        return FALSE;
      }
    }
    if (!fs_yaml_get_double(r->values[3], 0, 1, &row[3], error))
      return FALSE;
    if (!(row[3] > 0)) {
      fs_yaml_error(error, r->values[3], "efficiency must be in (0, 1], got %g", row[3]);
      return FALSE;
    }
    int p = shape_index(rows, i, row);
    if (p >= 0) {
      fs_yaml_error(error, r, "shape %gx%gx%g is given twice (shapes %d and %u)", row[0], row[1],
                    row[2], p + 1, i + 1);
      return FALSE;
    }
  }
  c->n_shapes = list->n;
  c->shapes = g_steal_pointer(&rows);
  return TRUE;
}

/* Reads an attention curve's "head_dims" list into c->head_dims (head dim,
 * factor per row): each row two numbers, head dims whole from 1 to 65536
 * and strictly increasing, factor in (0, 4].  The error is at the
 * offending node. */
static gboolean parse_head_dims(FsEffCurve *c, const FsYamlNode *list, GError **error)
{
  if (c->kind != FS_EFF_ATTENTION_FWD && c->kind != FS_EFF_ATTENTION_BWD) {
    fs_yaml_error(error, list, "\"head_dims\" applies only to attention curves");
    return FALSE;
  }
  if (list->n == 0) {
    fs_yaml_error(error, list, "\"head_dims\" is empty; expected a list like [[64, 0.67], [128, 1]]");
    return FALSE;
  }
  g_autofree double *rows = g_new(double, 2 * (gsize)list->n);
  for (guint i = 0; i < list->n; i++) {
    const FsYamlNode *r = list->values[i];
    if (r->kind != FS_YAML_SEQ || r->n != 2) {
      fs_yaml_error(error, r, "expected a row [head_dim, factor], got %s", fs_yaml_kind_name(r));
      return FALSE;
    }
    double *row = rows + 2 * (gsize)i;
    if (!fs_yaml_get_double(r->values[0], 1, 65536, &row[0], error) ||
        !fs_yaml_get_double(r->values[1], 0, 4, &row[1], error))
      return FALSE;
    if (row[0] != floor(row[0])) {
      fs_yaml_error(error, r->values[0], "a head dimension must be a whole number, got %g", row[0]);
      return FALSE;
    }
    if (!(row[1] > 0)) {
      fs_yaml_error(error, r->values[1], "factor must be in (0, 4], got %g", row[1]);
      return FALSE;
    }
    if (i > 0 && !(row[0] > rows[2 * (gsize)(i - 1)])) {
      fs_yaml_error(error, r->values[0], "head dims must increase (%g after %g)", row[0],
                    rows[2 * (gsize)(i - 1)]);
      return FALSE;
    }
  }
  c->n_head_dims = list->n;
  c->head_dims = g_steal_pointer(&rows);
  return TRUE;
}

/* Reads an attention curve's "tiles" list into c->tiles (head dim, block,
 * step per row), with "measured_tokens", "measured_hidden" and a non-empty
 * "tiles_source" required beside it and refused without it: each row three whole numbers from 1 to
 * 65536, head dims strictly increasing.  tn is the "tiles" node or NULL;
 * the error is at the offending node. */
static gboolean parse_tiles(FsEffCurve *c, const FsYamlNode *node, const FsYamlNode *tn,
                            GError **error)
{
  static const char *const sizes[] = {"measured_tokens", "measured_hidden", "tiles_source"};
  for (guint k = 0; k < G_N_ELEMENTS(sizes); k++) {
    const FsYamlNode *sn = fs_yaml_map_get(node, sizes[k]);
    if (tn == NULL && sn != NULL) {
      fs_yaml_error(error, sn, "\"%s\" applies only to a curve with \"tiles\"", sizes[k]);
      return FALSE;
    }
    if (tn != NULL && sn == NULL) {
      fs_yaml_error(error, tn, "\"tiles\" needs \"%s\" beside it", sizes[k]);
      return FALSE;
    }
  }
  if (tn == NULL)
    return TRUE;
  const FsYamlNode *src = fs_yaml_map_get(node, "tiles_source");
  if (src->value == NULL || src->value[0] == '\0') {
    fs_yaml_error(error, src, "\"tiles_source\" must say where the tiles come from");
    return FALSE;
  }
  if (c->kind != FS_EFF_ATTENTION_FWD && c->kind != FS_EFF_ATTENTION_BWD) {
    fs_yaml_error(error, tn, "\"tiles\" applies only to attention curves");
    return FALSE;
  }
  if (tn->n == 0) {
    fs_yaml_error(error, tn, "\"tiles\" is empty; expected a list like [[128, 128, 128]]");
    return FALSE;
  }
  g_autofree double *rows = g_new(double, 3 * (gsize)tn->n);
  for (guint i = 0; i < tn->n; i++) {
    const FsYamlNode *r = tn->values[i];
    if (r->kind != FS_YAML_SEQ || r->n != 3) {
      fs_yaml_error(error, r, "expected a row [head_dim, block, step], got %s", fs_yaml_kind_name(r));
      return FALSE;
    }
    double *row = rows + 3 * (gsize)i;
    for (guint j = 0; j < 3; j++) {
      if (!fs_yaml_get_double(r->values[j], 1, 65536, &row[j], error))
        return FALSE;
      if (row[j] != floor(row[j])) {
        fs_yaml_error(error, r->values[j], "a tile size must be a whole number, got %g", row[j]);
        return FALSE;
      }
    }
    if (i > 0 && !(row[0] > rows[3 * (gsize)(i - 1)])) {
      fs_yaml_error(error, r->values[0], "head dims must increase (%g after %g)", row[0],
                    rows[3 * (gsize)(i - 1)]);
      return FALSE;
    }
  }
  c->n_tiles = tn->n;
  c->tiles = g_steal_pointer(&rows);
  return TRUE;
}

/* Derives c->shape_cache from c->shapes and the points: per shape its log
 * dimensions and its residual against the curve at its own FLOPs. */
static void shapes_prepare(FsEffCurve *c)
{
  g_free(c->shape_cache);
  c->shape_cache = NULL;
  if (c->n_shapes == 0)
    return;
  c->shape_cache = g_new(double, 4 * (gsize)c->n_shapes);
  for (guint i = 0; i < c->n_shapes; i++) {
    const double *s = c->shapes + 4 * (gsize)i;
    double *o = c->shape_cache + 4 * (gsize)i;
    o[0] = log(s[0]);
    o[1] = log(s[1]);
    o[2] = log(s[2]);
    o[3] = s[3] / fs_eff_curve_eval(c, 2.0 * s[0] * s[1] * s[2]);
  }
}

/* Parses one entry of "curves" into a new curve (the caller frees it with curve_free): kind and
 * arch are required ("any" matches every architecture), dtype and causal default to "any", axis
 * to the kind's default and scale to log; "source" must be non-empty and the points must pass
 * check_points. Returns NULL with the YAML error at the offending node; the curve records its
 * file, line and column for later messages. */
static FsEffCurve *parse_curve(const FsYamlNode *node, GError **error)
{
  g_autofree FsEffCurve *c = g_new0(FsEffCurve, 1);
  if (!fs_schema_read(&curve_schema, node, c, NULL, error))
    return NULL;
  /* The strings are borrowed from the document until copied at the end. */
  const char *source = c->source, *note = c->note;
  c->source = c->note = NULL;
  c->any_arch = (guint)c->arch == FS_ARCH_N;
  if (c->any_arch)
    c->arch = 0;
  c->any_dtype = fs_yaml_map_get(node, "dtype") == NULL;
  c->causal = FS_EFF_CAUSAL_ANY;
  FsYamlNode *cn = fs_yaml_map_get(node, "causal");
  if (cn != NULL) {
    if (c->kind != FS_EFF_ATTENTION_FWD && c->kind != FS_EFF_ATTENTION_BWD) {
      fs_yaml_error(error, cn, "\"causal\" applies only to attention curves");
      return NULL;
    }
    gboolean b;
    if (!fs_yaml_get_bool(cn, &b, error))
      return NULL;
    c->causal = b ? FS_EFF_CAUSAL_YES : FS_EFF_CAUSAL_NO;
  }
  if (fs_yaml_map_get(node, "axis") == NULL)
    c->axis = default_axis(c->kind);
  FsYamlNode *sn = fs_yaml_map_get(node, "scale");
  c->log_scale = sn == NULL || strcmp(sn->value, "log") == 0;
  if (source[0] == '\0') {
    fs_yaml_error(error, fs_yaml_map_get(node, "source"),
                  "\"source\" must say where the figures come from");
    return NULL;
  }
  FsYamlNode *pn = fs_yaml_map_get(node, "points");
  if (pn->n == 0) {
    fs_yaml_error(error, pn, "a curve needs at least one point");
    return NULL;
  }
  g_autofree double *x = g_new(double, pn->n);
  g_autofree double *y = g_new(double, pn->n);
  for (guint i = 0; i < pn->n; i++) {
    const FsYamlNode *p = pn->values[i];
    if (p->kind != FS_YAML_SEQ || p->n != 2) {
      fs_yaml_error(error, p, "expected a point [x, efficiency], got %s", fs_yaml_kind_name(p));
      return NULL;
    }
    if (!fs_yaml_get_double(p->values[0], 0, 1e30, &x[i], error) ||
        !fs_yaml_get_double(p->values[1], 0, 1, &y[i], error))
      return NULL;
    g_autofree char *why = NULL;
    if (!check_points(x, y, i + 1, &why)) {
      fs_yaml_error(error, p, "%s", why);
      return NULL;
    }
  }
  FsYamlNode *shn = fs_yaml_map_get(node, "shapes");
  if (shn != NULL && !parse_shapes(c, shn, error))
    return NULL;
  if (shn == NULL && fs_yaml_map_get(node, "shape_range") != NULL) {
    fs_yaml_error(error, fs_yaml_map_get(node, "shape_range"),
                  "\"shape_range\" applies only to a curve with \"shapes\"");
    return NULL;
  }
  FsYamlNode *hdn = fs_yaml_map_get(node, "head_dims");
  if (hdn != NULL && !parse_head_dims(c, hdn, error))
    return NULL;
  if (!parse_tiles(c, node, fs_yaml_map_get(node, "tiles"), error))
    return NULL;
  c->n = pn->n;
  c->x = g_steal_pointer(&x);
  c->y = g_steal_pointer(&y);
  shapes_prepare(c);
  c->source = g_strdup(source);
  c->note = g_strdup(note);
  c->file = g_strdup(node->file);
  c->line = node->line;
  c->col = node->col;
  return g_steal_pointer(&c);
}

static int host_key(const GPtrArray *hosts, const FsEffHost *h)
{
  for (guint i = 0; i < hosts->len; i++) {
    const FsEffHost *o = g_ptr_array_index(hosts, i);
    if (o->any_arch == h->any_arch && (h->any_arch || o->arch == h->arch))
      return (int)i;
  }
  return -1;
}

/* The host-cost entries of eff followed by those of list (a "host" list, or NULL), into a new
 * array *out: an entry of list replaces one of eff with its architecture when replace is set;
 * the same architecture twice in list, or one already in eff without replace, is an error at
 * the entry's "arch". */
static gboolean load_hosts(const FsEfficiency *eff, const FsYamlNode *list, const char *path,
                           gboolean replace, GPtrArray **out, GError **error)
{
  g_autoptr(GPtrArray) hosts = g_ptr_array_new_with_free_func(host_free);
  for (guint i = 0; i < eff->hosts->len; i++) {
    const FsEffHost *o = g_ptr_array_index(eff->hosts, i);
    FsEffHost *h = g_memdup2(o, sizeof *o);
    h->source = g_strdup(o->source);
    h->file = g_strdup(o->file);
    g_ptr_array_add(hosts, h);
  }
  guint before = hosts->len;
  for (guint i = 0; list != NULL && i < list->n; i++) {
    const FsYamlNode *node = list->values[i];
    FsEffHost tmp = { 0 };
    if (!fs_schema_read(&host_schema, node, &tmp, NULL, error))
      return FALSE;
    tmp.any_arch = (guint)tmp.arch == FS_ARCH_N;
    if (tmp.any_arch)
      tmp.arch = 0;
    int k = host_key(hosts, &tmp);
    if (k >= 0 && ((guint)k >= before || !replace)) {
      fs_yaml_error(error, fs_yaml_map_get(node, "arch"),
                    "host costs for \"%s\" are given twice", tmp.any_arch ? "any"
                    : arch_names[tmp.arch]);
      return FALSE;
    }
    FsEffHost *h = g_memdup2(&tmp, sizeof tmp);
    h->source = g_strdup(tmp.source);
    h->file = g_strdup(path);
    h->line = node->line;
    h->col = node->col;
    if (k >= 0) {
      host_free(g_ptr_array_index(hosts, (guint)k));
      g_ptr_array_index(hosts, (guint)k) = h;
    } else {
      g_ptr_array_add(hosts, h);
    }
  }
  *out = g_steal_pointer(&hosts);
  return TRUE;
}

const FsEffHost *fs_efficiency_host(const FsEfficiency *eff, FsGpuArch arch)
{
  const FsEffHost *any = NULL;
  for (guint i = 0; i < eff->hosts->len; i++) {
    const FsEffHost *h = g_ptr_array_index(eff->hosts, i);
    if (!h->any_arch && h->arch == arch)
      return h;
    if (h->any_arch)
      any = h;
  }
  return any;
}

const FsEffCommHbm *fs_efficiency_comm_hbm(const FsEfficiency *eff)
{
  return eff->comm_hbm;
}

/* The `comm_hbm` mapping of a file (node, or NULL) into *out (NULL when
 * absent): an error at the key when eff has one already and replace is not
 * set. */
static gboolean load_comm_hbm(const FsEfficiency *eff, const FsYamlNode *root, const char *path,
                              gboolean replace, FsEffCommHbm **out, GError **error)
{
  *out = NULL;
  const FsYamlNode *node = fs_yaml_map_get(root, "comm_hbm");
  if (node == NULL)
    return TRUE;
  if (eff->comm_hbm != NULL && !replace) {
    fs_yaml_error(error, node, "comm_hbm is given twice (first in %s)", eff->comm_hbm->file);
    return FALSE;
  }
  FsEffCommHbm tmp = { 0 };
  if (!fs_schema_read(&comm_hbm_schema, node, &tmp, NULL, error))
    return FALSE;
  FsEffCommHbm *c = g_memdup2(&tmp, sizeof tmp);
  c->source = g_strdup(tmp.source);
  c->file = g_strdup(path);
  c->line = node->line;
  c->col = node->col;
  *out = c;
  return TRUE;
}

/* Adds the curves of one parsed document to eff, all or nothing: they are parsed into a copy of
 * the present set, so that a failure leaves eff unchanged. A key given twice in the same file
 * is an error even when replace is set; replace lets the file override curves loaded before it.
 * Costs a copy of every loaded curve per file. */
static gboolean load_doc(FsEfficiency *eff, FsYamlDoc *doc, const char *path,
                         gboolean replace, GError **error)
{
  FsYamlNode *root = fs_yaml_doc_root(doc);
  if (root == NULL) {
    fs_set_error_at(error, FS_EFFICIENCY_ERROR, FS_EFFICIENCY_ERROR_INVALID, path, 1, 1,
                    "empty file; expected a mapping with \"curves\"");
    return FALSE;
  }
  if (!fs_schema_read(&file_schema, root, NULL, NULL, error))
    return FALSE;
  FsYamlNode *list = fs_yaml_map_get(root, "curves");
  /* Parse into a staging copy so that a failure leaves eff unchanged. */
  g_autoptr(GPtrArray) staged = g_ptr_array_new_with_free_func(curve_free);
  for (guint i = 0; i < eff->curves->len; i++) {
    const FsEffCurve *o = g_ptr_array_index(eff->curves, i);
    FsEffCurve *c = g_memdup2(o, sizeof *o);
    c->x = g_memdup2(o->x, o->n * sizeof(double));
    c->y = g_memdup2(o->y, o->n * sizeof(double));
    c->source = g_strdup(o->source);
    c->note = g_strdup(o->note);
    c->file = g_strdup(o->file);
    c->shapes = o->n_shapes ? g_memdup2(o->shapes, 4 * o->n_shapes * sizeof(double)) : NULL;
    c->shape_cache = o->n_shapes ? g_memdup2(o->shape_cache, 4 * o->n_shapes * sizeof(double)) : NULL;
    c->head_dims = o->n_head_dims ? g_memdup2(o->head_dims, 2 * o->n_head_dims * sizeof(double)) : NULL;
    c->tiles = o->n_tiles ? g_memdup2(o->tiles, 3 * o->n_tiles * sizeof(double)) : NULL;
    g_ptr_array_add(staged, c);
  }
  /* Within one file a key may appear once, even when replacing. */
  g_autoptr(GPtrArray) parsed = g_ptr_array_new_with_free_func(curve_free);
  for (guint i = 0; i < list->n; i++) {
    FsEffCurve *c = parse_curve(list->values[i], error);
    if (c == NULL)
      return FALSE;
    if (find_key(parsed, c) >= 0) {
      gboolean ok = insert_curve(parsed, c, FALSE, error);
      g_assert(!ok);
      return FALSE;
    }
    g_ptr_array_add(parsed, c);
  }
  for (guint i = 0; i < parsed->len; i++) {
    FsEffCurve *c = g_ptr_array_index(parsed, i);
    g_ptr_array_index(parsed, i) = NULL; /* taken by staged (curve_free skips NULL) */
    if (!insert_curve(staged, c, replace, error))
      return FALSE;
  }
  g_autoptr(GPtrArray) hosts = NULL;
  if (!load_hosts(eff, fs_yaml_map_get(root, "host"), path, replace, &hosts, error))
    return FALSE;
  FsEffCommHbm *hbm;
  if (!load_comm_hbm(eff, root, path, replace, &hbm, error))
    return FALSE;
  if (hbm != NULL) {
    comm_hbm_free(eff->comm_hbm);
    eff->comm_hbm = hbm;
  }
  g_ptr_array_free(eff->curves, TRUE);
  eff->curves = g_steal_pointer(&staged);
  g_ptr_array_free(eff->hosts, TRUE);
  eff->hosts = g_steal_pointer(&hosts);
  return TRUE;
}

gboolean fs_efficiency_load_file(FsEfficiency *eff, const char *path, gboolean replace,
                                 GError **error)
{
  g_return_val_if_fail(eff != NULL && path != NULL, FALSE);
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_file(path, error);
  return doc != NULL && load_doc(eff, doc, path, replace, error);
}

gboolean fs_efficiency_load_string(FsEfficiency *eff, const char *text, gssize len,
                                   const char *name, gboolean replace, GError **error)
{
  g_return_val_if_fail(eff != NULL && text != NULL && name != NULL, FALSE);
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_string(text, len, name, error);
  return doc != NULL && load_doc(eff, doc, name, replace, error);
}

static int compare_names(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

FsEfficiency *fs_efficiency_load_dir(const char *dir, GError **error)
{
  GError *local = NULL;
  g_autoptr(GDir) d = g_dir_open(dir, 0, &local);
  if (d == NULL) {
    g_set_error(error, FS_EFFICIENCY_ERROR, FS_EFFICIENCY_ERROR_IO,
                "cannot read the efficiency curves folder %s: %s", dir, local->message);
    g_error_free(local);
    return NULL;
  }
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL)
    if (g_str_has_suffix(name, ".yaml"))
      g_ptr_array_add(names, g_strdup(name));
  g_ptr_array_sort(names, compare_names);
  g_autoptr(FsEfficiency) eff = fs_efficiency_new();
  for (guint i = 0; i < names->len; i++) {
    g_autofree char *path = g_build_filename(dir, (char *)g_ptr_array_index(names, i), NULL);
    if (!fs_efficiency_load_file(eff, path, FALSE, error))
      return NULL;
  }
  return g_steal_pointer(&eff);
}

char *fs_efficiency_default_dir(void)
{
  return g_build_filename(fs_datadir(FS_DATA_MODELS), "compute", NULL);
}

FsEfficiency *fs_efficiency_load_default(const char *dir, GError **error)
{
  if (dir != NULL)
    return fs_efficiency_load_dir(dir, error);
  g_autofree char *d = fs_efficiency_default_dir();
  return fs_efficiency_load_dir(d, error);
}

/* ---- lookup -------------------------------------------------------------- */

const FsEffCurve *fs_efficiency_find(const FsEfficiency *eff, FsEffKind kind, FsGpuArch arch,
                                     FsDtype dtype, gboolean causal)
{
  g_return_val_if_fail(eff != NULL, NULL);
  const FsEffCurve *best = NULL;
  int best_score = -1;
  gboolean attention = kind == FS_EFF_ATTENTION_FWD || kind == FS_EFF_ATTENTION_BWD;
  for (guint i = 0; i < eff->curves->len; i++) {
    const FsEffCurve *c = g_ptr_array_index(eff->curves, i);
    if (c->kind != kind)
      continue;
    if (!c->any_arch && c->arch != arch)
      continue;
    if (!c->any_dtype && c->dtype != dtype)
      continue;
    if (attention && c->causal != FS_EFF_CAUSAL_ANY && (c->causal == FS_EFF_CAUSAL_YES) != !!causal)
      continue;
    int score = (c->any_arch ? 0 : 4) + (c->any_dtype ? 0 : 2) + (c->causal == FS_EFF_CAUSAL_ANY ? 0 : 1);
    if (score > best_score) {
      best = c;
      best_score = score;
    }
  }
  return best;
}

double fs_eff_curve_eval(const FsEffCurve *c, double x)
{
  g_return_val_if_fail(c != NULL && c->n > 0, 1.0);
  if (!(x > c->x[0]))
    return c->y[0];
  if (x >= c->x[c->n - 1])
    return c->y[c->n - 1];
  /* Binary search for the segment [x[lo], x[lo+1]] that holds x. */
  guint lo = 0, hi = c->n - 1;
  while (hi - lo > 1) {
    guint mid = (lo + hi) / 2;
    if (c->x[mid] <= x)
      lo = mid;
    else
      hi = mid;
  }
  double x0 = c->x[lo], x1 = c->x[hi];
  double t = c->log_scale ? (log(x) - log(x0)) / (log(x1) - log(x0)) : (x - x0) / (x1 - x0);
  return c->y[lo] + t * (c->y[hi] - c->y[lo]);
}

double fs_eff_curve_shape_factor(const FsEffCurve *c, double m, double n, double k)
{
  g_return_val_if_fail(c != NULL, 1.0);
  if (c->n_shapes == 0 || !(m >= 1 && n >= 1 && k >= 1))
    return 1.0;
  double lm = log(m), ln = log(n), lk = log(k);
  double range = log(c->shape_range);
  double w0 = 1.0 / (range * range);
  double sw = w0, swr = w0;
  for (guint i = 0; i < c->n_shapes; i++) {
    const double *s = c->shape_cache + 4 * (gsize)i;
    double dm = lm - s[0], dn = ln - s[1], dk = lk - s[2];
    double d2 = dm * dm + dn * dn + dk * dk;
    if (d2 < 1e-18)
      return s[3]; /* a measured shape: its own residual */
    sw += 1.0 / d2;
    swr += s[3] / d2;
  }
  return swr / sw;
}

double fs_efficiency_lookup(const FsEfficiency *eff, FsEffKind kind, FsGpuArch arch,
                            FsDtype dtype, gboolean causal, double x, const FsEffCurve **used)
{
  const FsEffCurve *c = eff ? fs_efficiency_find(eff, kind, arch, dtype, causal) : NULL;
  if (used != NULL)
    *used = c;
  return c ? fs_eff_curve_eval(c, x) : 1.0;
}

double fs_eff_curve_head_dim_factor(const FsEffCurve *c, double d)
{
  g_return_val_if_fail(c != NULL, 1.0);
  if (c->n_head_dims == 0 || !(d >= 1))
    return 1.0;
  const double *r = c->head_dims;
  guint n = c->n_head_dims;
  if (d <= r[0])
    return r[1];
  if (d >= r[2 * (n - 1)])
    return r[2 * (n - 1) + 1];
  guint i = 1;
  while (r[2 * i] < d)
    i++;
  double x0 = log(r[2 * (i - 1)]), x1 = log(r[2 * i]);
  double f = (log(d) - x0) / (x1 - x0);
  return r[2 * (i - 1) + 1] + f * (r[2 * i + 1] - r[2 * (i - 1) + 1]);
}
