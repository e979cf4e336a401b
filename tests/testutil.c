/* testutil.c — see testutil.h. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/validate.h"
#include "compute/kernel.h"

static const char *env_or(const char *name, const char *fallback)
{
  const char *v = g_getenv(name);
  return v ? v : fallback;
}

char *fs_test_data_path(const char *relative)
{
  return g_build_filename(env_or("FS_TEST_DATA", "tests/data"), relative, NULL);
}

char *fs_test_source_path(const char *relative)
{
  return g_build_filename(env_or("FS_SOURCE_ROOT", "."), relative, NULL);
}

gboolean fs_test_reduced(void)
{
  const char *v = g_getenv("FS_TEST_REDUCED");
  return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

int fs_test_run_suite(Suite *s)
{
  SRunner *sr = srunner_create(s);
  /* TAP on stdout, one line per test, so that meson counts each test
   * (tests/meson.build: protocol 'tap').  Check's own summary would not be
   * TAP, so it stays silent, and what the tests print (tables of figures)
   * goes to stderr: the TAP stream is a copy of the original stdout, and
   * stdout becomes stderr.  $CK_TAP_LOG_FILE_NAME, when set, wins. */
  const char *tap = g_getenv("CK_TAP_LOG_FILE_NAME");
  g_autofree char *tap_name = NULL;
  int fd = -1;
  if (tap == NULL || tap[0] == '\0') {
    fflush(stdout);
    fd = dup(STDOUT_FILENO);
    if (fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
      perror("testutil: cannot set up the TAP stream");
      srunner_free(sr);
      return EXIT_FAILURE;
    }
    tap_name = g_strdup_printf("/dev/fd/%d", fd);
    srunner_set_tap(sr, tap_name);
  }
  srunner_run_all(sr, CK_SILENT);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  if (fd >= 0)
    close(fd);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* ---- the topology fixture ------------------------------------------------ */

FsCatalog *fs_test_catalog(void)
{
  static FsCatalog *cat = NULL;
  if (cat == NULL) {
    GError *err = NULL;
    cat = fs_catalog_load_default(NULL, &err);
    ck_assert_msg(cat != NULL, "catalog: %s", err ? err->message : "");
  }
  return cat;
}

void fs_test_catalog_setup(void)
{
  (void)fs_test_catalog();
}

/* topologies/NAME over cat; with error NULL, an error fails the test. */
static FsTopo *load_topo(const FsCatalog *cat, const char *name, const char *const *defines,
                         GError **error)
{
  g_autofree char *rel = g_strdup_printf("topologies/%s%s", name,
                                         g_str_has_suffix(name, ".yaml") ? "" : ".yaml");
  g_autofree char *path = fs_test_source_path(rel);
  GError *err = NULL;
  FsTopo *t = fs_topo_load_file(path, cat, defines, &err);
  if (error != NULL) {
    if (err != NULL)
      g_propagate_error(error, err);
    return t;
  }
  ck_assert_msg(t != NULL, "%s: %s", name, err ? err->message : "");
  return t;
}

FsTopo *fs_test_topo(const char *name, const char *const *defines, GError **error)
{
  return load_topo(fs_test_catalog(), name, defines, error);
}

FsYamlDoc *fs_test_yaml_ok(const char *text)
{
  GError *err = NULL;
  FsYamlDoc *doc = fs_yaml_load_string(text, -1, "t.yaml", &err);
  ck_assert_msg(doc != NULL, "load failed: %s", err ? err->message : "");
  fs_assert_no_error(err);
  return doc;
}

FsTopo *fs_test_topo_text(const char *text, const char *name, const char *const *defines,
                          GError **error)
{
  GError *err = NULL;
  FsTopo *t = fs_topo_load_string(text, name, fs_test_catalog(), defines, &err);
  if (error != NULL) {
    if (err != NULL)
      g_propagate_error(error, err);
    return t;
  }
  ck_assert_msg(t != NULL, "%s: %s", name, err ? err->message : "");
  return t;
}

/* ---- the training-step fixture ------------------------------------------ */

FsCatalog *fs_test_cat;
FsEfficiency *fs_test_eff_load_text(const char *text)
{
  g_autoptr(FsEfficiency) eff = fs_efficiency_new();
  GError *err = NULL;
  ck_assert_msg(fs_efficiency_load_string(eff, text, -1, "t.yaml", FALSE, &err), "%s",
                err ? err->message : "");
  return g_steal_pointer(&eff);
}

void fs_test_eff_refused(guint i, const char *curve, const char *fragment)
{
  g_autofree char *text = g_strdup_printf("curves:\n%s    source: s\n", curve);
  g_autoptr(FsEfficiency) eff = fs_efficiency_new();
  GError *err = NULL;
  ck_assert_msg(!fs_efficiency_load_string(eff, text, -1, "t.yaml", FALSE, &err), "case %u accepted", i);
  ck_assert_msg(strstr(err->message, fragment) != NULL, "case %u: \"%s\" lacks \"%s\"", i,
                err->message, fragment);
  ck_assert_uint_eq(fs_efficiency_size(eff), 0);
  g_clear_error(&err);
}

void fs_test_eff_load_another(FsEfficiency *eff)
{
  GError *err = NULL;
  ck_assert(fs_efficiency_load_string(eff, "curves:\n  - kind: memory\n    arch: any\n"
                                      "    points: [[1, 0.8]]\n    source: s\n",
                                      -1, "m.yaml", FALSE, &err));
  fs_assert_no_error(err);
}

const FsEffCurve *fs_test_eff_replace_attention(FsEfficiency *eff)
{
  GError *err = NULL;
  double x = 1, y = 0.7;
  ck_assert(fs_efficiency_set(eff, FS_EFF_ATTENTION_FWD, FALSE, FS_ARCH_HOPPER, TRUE, 0,
                              FS_EFF_CAUSAL_ANY, FS_EFF_AXIS_SEQ_LEN, &x, &y, 1, "probe", &err));
  fs_assert_no_error(err);
  return fs_efficiency_find(eff, FS_EFF_ATTENTION_FWD, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
}

void fs_test_attention_score(const char *name, gboolean bare, gboolean occupancy, double *mape,
                             double *bias, guint *rows)
{
  g_autofree char *rel = g_strdup_printf("validation/reference/%s.csv", name);
  g_autofree char *path = fs_test_source_path(rel);
  GError *err = NULL;
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(NULL, &err);
  fs_assert_no_error(err);
  g_autoptr(FsValTable) t = fs_val_table_load(path, &err);
  fs_assert_no_error(err);
  const FsModel *gpu = fs_catalog_require(cat, fs_val_table_key(t, "gpu"), FS_MODEL_GPU, &err);
  fs_assert_no_error(err);
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(NULL, &err);
  fs_assert_no_error(err);
  for (guint i = 0; bare && i < fs_efficiency_size(eff); i++) {
    const FsEffCurve *c = fs_efficiency_nth(eff, i);
    if (c->n_head_dims == 0)
      continue;
    g_autofree char *src = g_strdup(c->source);
    ck_assert(fs_efficiency_set(eff, c->kind, c->any_arch, c->arch, c->any_dtype, c->dtype, c->causal,
                                c->axis, c->x, c->y, c->n, src, &err));
  }
  int cd = fs_val_table_col(t, "dtype", NULL), cp = fs_val_table_col(t, "pass", NULL);
  int cc = fs_val_table_col(t, "causal", NULL), cb = fs_val_table_col(t, "batch", NULL);
  int ch = fs_val_table_col(t, "heads", NULL), cs = fs_val_table_col(t, "seq", NULL);
  int ck = fs_val_table_col(t, "head_dim", NULL), ct = fs_val_table_col(t, "tflops", NULL);
  ck_assert(cd >= 0 && cp >= 0 && cc >= 0 && cb >= 0 && ch >= 0 && cs >= 0 && ck >= 0 && ct >= 0);
  FsGpuModel g = gpu->u.gpu;
  if (!occupancy)
    g.sms = 0;
  *mape = *bias = 0;
  *rows = t->nrows;
  for (guint r = 0; r < t->nrows; r++) {
    FsDtype dt;
    uint64_t b, h, s, d;
    double tf;
    ck_assert(fs_dtype_from_name(t->cells[r][cd], &dt));
    ck_assert(fs_val_table_u64(t, r, cb, &b, NULL) && fs_val_table_u64(t, r, ch, &h, NULL) &&
              fs_val_table_u64(t, r, cs, &s, NULL) && fs_val_table_u64(t, r, ck, &d, NULL) &&
              fs_val_table_double(t, r, ct, &tf, NULL));
    gboolean bwd = strcmp(t->cells[r][cp], "backward") == 0;
    gboolean causal = strcmp(t->cells[r][cc], "true") == 0;
    FsKernel kn = fs_kernel_attention("a", bwd ? FS_PASS_BACKWARD : FS_PASS_FORWARD, dt, b * h, s, s, d, 1,
                                      causal, bwd);
    FsKernelTiming tm;
    fs_kernel_time(&kn, &g, eff, &tm);
    double e = fs_time_to_s(tm.time - tm.launch) / (kn.flops / (tf * 1e12)) - 1;
    *mape += fabs(e);
    *bias += e;
  }
  *mape *= 100.0 / t->nrows;
  *bias *= 100.0 / t->nrows;
}

FsEfficiency *fs_test_eff;
FsNcclParams *fs_test_nccl;

void fs_test_models_setup(void)
{
  GError *err = NULL;
  fs_test_cat = fs_catalog_load_default(NULL, &err);
  fs_assert_no_error(err);
  fs_test_eff = fs_efficiency_load_default(NULL, &err);
  fs_assert_no_error(err);
  fs_test_nccl = fs_nccl_params_load_default(&err);
  fs_assert_no_error(err);
}

void fs_test_models_teardown(void)
{
  fs_nccl_params_free(fs_test_nccl);
  fs_efficiency_free(fs_test_eff);
  fs_catalog_free(fs_test_cat);
  fs_test_nccl = NULL;
  fs_test_eff = NULL;
  fs_test_cat = NULL;
}

FsTopo *fs_test_load_topo(const char *name, const char *const *defines)
{
  return load_topo(fs_test_cat, name, defines, NULL);
}

FsWorkload *fs_test_small_gpt(const char *parallel, const char *const *overrides)
{
  g_autofree char *text = g_strdup_printf(
    "name: toy\n"
    "model:\n  layers: 8\n  hidden: 1024\n  ffn_hidden: 4096\n  heads: 16\n  vocab: 32000\n"
    "  seq_length: 1024\n"
    "training:\n  global_batch: 64\n  micro_batch: 2\n  dtype: bf16\n"
    "parallel:\n%s", parallel);
  GError *err = NULL;
  FsWorkload *w = fs_workload_load_string(text, "toy.yaml", NULL, overrides, &err);
  fs_assert_no_error(err);
  return w;
}

FsTrain *fs_test_train(const FsTopo *topo, FsWorkload *w, const FsTrainOptions *opt)
{
  guint n;
  fs_topo_gpus(topo, &n);
  GError *err = NULL;
  ck_assert(fs_workload_resolve(w, n, &err));
  fs_assert_no_error(err);
  FsTrain *t = fs_train_new(topo, w, fs_test_eff, fs_test_nccl, fs_scenario_engines(), opt, &err);
  fs_assert_no_error(err);
  ck_assert(fs_train_run(t, &err));
  fs_assert_no_error(err);
  return t;
}

void fs_test_assert_same_result(const FsTrain *a, const FsTrain *b)
{
  const FsTrainResult *ra = fs_train_result(a), *rb = fs_train_result(b);
  ck_assert_int_eq(ra->step_time, rb->step_time);
  ck_assert_uint_eq(ra->classes->len, rb->classes->len);
  for (guint i = 0; i < ra->classes->len; i++) {
    const FsTrainClass *ca = &g_array_index(ra->classes, FsTrainClass, i);
    const FsTrainClass *cb = &g_array_index(rb->classes, FsTrainClass, i);
    ck_assert(memcmp(&ca->time, &cb->time, sizeof ca->time) == 0);
  }
}

/* ---- the collective fixture ------------------------------------------ */

void fs_test_coll_open(FsTestColl *s, const char *name, const char *define, const char *gpu_list,
                       FsNetModel model)
{
  GError *err = NULL;
  memset(s, 0, sizeof *s);
  s->cat = fs_catalog_load_default(NULL, &err);
  fs_assert_no_error(err);
  g_autofree char *rel = g_strdup_printf("topologies/%s", name);
  g_autofree char *path = fs_test_source_path(rel);
  const char *defines[] = {define, NULL};
  s->topo = fs_topo_load_file(path, s->cat, define ? defines : NULL, &err);
  fs_assert_no_error(err);
  s->np = fs_nccl_params_load_default(&err);
  fs_assert_no_error(err);
  s->sim = fs_sim_new();
  s->net = fs_flownet_new(s->sim, model);
  s->router = fs_router_new(s->topo, s->net, NULL);
  s->tnet = fs_coll_topo_net_new(s->router);
  guint n = 0;
  g_autofree guint *gpus = fs_coll_parse_gpus(s->topo, gpu_list, &n, &err);
  fs_assert_no_error(err);
  s->comm = fs_coll_comm_from_topo(s->router, gpus, n, s->np->max_channels, &err);
  fs_assert_no_error(err);
  ck_assert(fs_coll_sysinfo_from_topo(s->np, s->router, s->comm, &s->sys, &err));
  fs_assert_no_error(err);
}

gboolean fs_test_coll_choose(const FsTestColl *s, FsCollOp op, uint64_t size,
                             const FsCollPrefs *prefs, FsCollChoice *ch, FsCollRequest *req,
                             uint64_t *nbytes)
{
  guint n = fs_comm_size(s->comm);
  FsCollSizes sizes;
  fs_coll_sizes(op, size, FS_COLL_DT_FLOAT, n, &sizes);
  *nbytes = fs_coll_nccl_bytes(op, &sizes, n);
  GError *err = NULL;
  if (!fs_coll_tune(s->np, &s->sys, s->comm, op, *nbytes, prefs, ch, &err)) {
    g_clear_error(&err);
    return FALSE;
  }
  *req = fs_coll_choice_request(ch, op, sizes.unit_bytes, FS_COLL_DT_FLOAT, FS_COLL_REDOP_SUM, 0);
  return TRUE;
}

void fs_test_coll_close(FsTestColl *s)
{
  fs_comm_free(s->comm);
  fs_coll_topo_net_free(s->tnet);
  fs_router_free(s->router);
  fs_flownet_free(s->net);
  fs_sim_free(s->sim);
  fs_nccl_params_free(s->np);
  fs_topo_free(s->topo);
  fs_catalog_free(s->cat);
}

void fs_test_coll_fill_every_channel(FsTestColl *s)
{
  for (FsChannelId c = 0; c < fs_flownet_n_channels(s->net); c++)
    fs_flownet_start(s->net, &(FsFlowSpec){.path = &c, .path_len = 1, .bytes = 1000,
                                           .start = fs_sim_now(s->sim)});
  GError *err = NULL;
  ck_assert(fs_sim_run(s->sim, &err));
  fs_assert_no_error(err);
}

/* FsCollStep.conn: transfers on one connection (fs_coll_step_same_conn)
 * share an index, indices are numbered 0, 1, … in the order of each
 * connection's first transfer, fs_coll_plan_n_conns counts them, and a
 * reduction has none. */
void fs_test_check_plan_conns(const FsCollPlan *p, const char *what)
{
  guint n = fs_coll_plan_n_steps(p), next = 0;
  g_autofree guint *first = g_new(guint, n + 1); /* a connection's first transfer */
  for (guint i = 0; i < n; i++) {
    const FsCollStep *s = fs_coll_plan_step(p, i);
    if (s->kind != FS_STEP_XFER) {
      ck_assert_uint_eq(s->conn, FS_STEP_NONE);
      continue;
    }
    ck_assert_msg(s->conn <= next, "%s: step %u has connection %u before %u", what, i, s->conn,
                  next);
    if (s->conn == next)
      first[next++] = i;
    const FsCollStep *f = fs_coll_plan_step(p, first[s->conn]);
    ck_assert_msg(fs_coll_step_same_conn(f, s), "%s: step %u is not on connection %u", what, i,
                  s->conn);
  }
  for (guint a = 0; a < next; a++)
    for (guint b = a + 1; b < next; b++)
      ck_assert_msg(!fs_coll_step_same_conn(fs_coll_plan_step(p, first[a]),
                                            fs_coll_plan_step(p, first[b])),
                    "%s: connections %u and %u are one", what, a, b);
  ck_assert_uint_eq(fs_coll_plan_n_conns(p), next);
}

/* See testutil.h. */
void fs_test_check_same_plan(const FsCollPlan *a, const FsCollPlan *b, const char *what)
{
  ck_assert_msg(fs_coll_plan_n_steps(a) == fs_coll_plan_n_steps(b), "%s: %u vs %u steps", what,
                fs_coll_plan_n_steps(a), fs_coll_plan_n_steps(b));
  ck_assert_uint_eq(fs_coll_plan_width(a), fs_coll_plan_width(b));
  ck_assert_uint_eq(fs_coll_plan_n_xfers(a), fs_coll_plan_n_xfers(b));
  ck_assert_uint_eq(fs_coll_plan_xfer_bytes(a), fs_coll_plan_xfer_bytes(b));
  ck_assert_uint_eq(fs_coll_plan_max_conn_xfers(a), fs_coll_plan_max_conn_xfers(b));
  ck_assert_uint_eq(fs_coll_plan_n_conns(a), fs_coll_plan_n_conns(b));
  ck_assert_uint_eq(fs_coll_plan_latency_depth(a), fs_coll_plan_latency_depth(b));
  for (guint i = 0; i < fs_coll_plan_n_steps(a); i++) {
    const FsCollStep *x = fs_coll_plan_step(a, i), *y = fs_coll_plan_step(b, i);
    ck_assert_msg(x->kind == y->kind && x->src == y->src && x->dst == y->dst &&
                  x->bytes == y->bytes && x->channel == y->channel && x->lane == y->lane &&
                  x->width == y->width && x->inter == y->inter && x->conn == y->conn,
                  "%s: step %u differs", what, i);
    guint nx, ny, cx, cy;
    const uint32_t *dx = fs_coll_plan_deps(a, i, &nx), *dy = fs_coll_plan_deps(b, i, &ny);
    const uint32_t *kx = fs_coll_plan_credits(a, i, &cx), *ky = fs_coll_plan_credits(b, i, &cy);
    ck_assert_msg(nx == ny && cx == cy, "%s: step %u deps %u/%u credits %u/%u", what, i, nx, ny, cx, cy);
    for (guint j = 0; j < nx; j++)
      ck_assert_uint_eq(dx[j], dy[j]);
    for (guint j = 0; j < cx; j++)
      ck_assert_uint_eq(kx[j], ky[j]);
  }
}
