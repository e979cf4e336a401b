/* nccl-ref.c — the `nccl-tests` reference kind of `fabricsim validate`
 * (nccl-ref.h): each row's collective is run the way `fabricsim coll` runs
 * it (float, sum; the tuner's choice under the scenario's NCCL_ALGO,
 * NCCL_PROTO and NCCL_COLLNET_ENABLE unless the table's `algorithm:`
 * forces one) on the first `ranks` GPUs of the table's topology, in a
 * world the scenario builds, and its busbw or time is compared with the
 * measured out-of-place figure.
 *
 * Header keys: `topology` (a path, relative to the data root when not
 * absolute), `defines` (optional: the topology's parameters as
 * `NAME=INTEGER` words, like `-D`, e.g. `nodes=2`), `collective`, `ranks`
 * (a number; or a `gpus` column), `algorithm` (`default` or a `fabricsim
 * coll --list` name), `nccl` (optional: the release measured, first word
 * X.Y; absent = the default constants), `launch` (optional: nccl-tests'
 * launch flags `-t N -g N -G N` followed by prose, coll/launch.h; absent =
 * `-g 1`, one process per GPU).  Columns: `size_bytes`, `oop_busbw_GBps`,
 * optional `oop_time_us` (needed by the time metric) and `gpus`.
 * Cost: one simulated collective per row; the world of each rank count is
 * built once per table.
 */
#include <string.h>

#include "scenario/nccl-ref.h"

#include "collrun/bench.h"
#include "collrun/coll-topo.h"
#include "util/datadir.h"
#include "util/error.h"

typedef struct {
  guint nranks;
  FsScenarioWorld *world;  /* simulator, flow network, router (the scenario's) */
  FsComm *comm;
  FsCollSysInfo sys;
  FsCollAloneMemo *memo;  /* shared by the rows of this rank count, as a sweep shares it */
} Setup;

typedef struct {
  const FsScenario *sc;
  FsTopo *topo;
  FsNcclParams *np;
  FsCollOp op;
  FsCollPrefs prefs;
  guint ranks;          /* 0: per row, from the gpus column */
  FsCollLaunch launch;  /* the table's `launch` (default -g 1) */
  int c_gpus, c_size, c_time, c_busbw;
  GPtrArray *setups;    /* Setup *, one per rank count */
} Nccl;

static void setup_free(gpointer p)
{
  Setup *s = p;
  if (s->memo != NULL)
    fs_coll_alone_memo_free(s->memo);
  fs_comm_free(s->comm);
  fs_scenario_world_free(s->world);
  g_free(s);
}

static void nccl_free(void *ctx)
{
  Nccl *c = ctx;
  if (c == NULL)
    return;
  g_ptr_array_free(c->setups, TRUE);
  fs_nccl_params_free(c->np);
  fs_topo_free(c->topo);
  g_free(c);
}

static gboolean fail_key(const FsValTable *t, const char *key, GError **error, const char *fmt,
                         ...) G_GNUC_PRINTF(4, 5);
static gboolean fail_key(const FsValTable *t, const char *key, GError **error, const char *fmt,
                         ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_KIND, t->file, 1, 1, "%s: %s", key, msg);
  return FALSE;
}

/* The line of t's header key (1 when absent). */
static int key_line(const FsValTable *t, const char *key)
{
  for (guint i = 0; i < t->keys->len; i++)
    if (strcmp(g_ptr_array_index(t->keys, i), key) == 0)
      return GPOINTER_TO_INT(g_ptr_array_index(t->key_lines, i));
  return 1;
}

/* The prepare step of the nccl-tests table kind: reads the table's collective, optional
 * algorithm, rank count (or its gpus column) and column positions; loads its topology through
 * the scenario in->world (relative to the data root, with the `defines` parameters) and the NCCL
 * constants of the table's `nccl` release (the scenario's without it), with the NCCL_*
 * environment and the calibration applied (fs_scenario_nccl_release).  The tuner inputs are the
 * scenario's (NCCL_ALGO, NCCL_PROTO, NCCL_COLLNET_ENABLE), the table's algorithm winning.
 * On success *ctx holds a new Nccl context, freed by the kind's free_ctx (nccl_free).  Returns
 * FALSE with FS_VAL_ERROR set for a missing or bad key or column, or the loader's error prefixed
 * with the table's file (and the `defines` or `nccl` line at fault). */
static gboolean nccl_prepare(const FsValTable *t, const FsValInputs *in, void **ctx,
                             GError **error)
{
  g_return_val_if_fail(in->world != NULL, FALSE);
  const char *topo_key = fs_val_table_require(t, "topology", error);
  const char *coll = topo_key ? fs_val_table_require(t, "collective", error) : NULL;
  if (coll == NULL)
    return FALSE;
  Nccl *c = g_new0(Nccl, 1);
  c->setups = g_ptr_array_new_with_free_func(setup_free);
  if (!fs_coll_op_from_name(coll, &c->op)) {
    nccl_free(c);
    return fail_key(t, "collective", error, "unknown collective \"%s\"", coll);
  }
  c->sc = in->world;
  /* The scenario's tuner inputs, as `fabricsim coll` runs: NCCL_ALGO and
   * NCCL_PROTO; CollNet (SHARP) only with NCCL_COLLNET_ENABLE=1, or where
   * the table's algorithm forces it. */
  c->prefs = *fs_scenario_prefs(c->sc);
  const char *algo = fs_val_table_key(t, "algorithm");
  if (algo != NULL && !g_str_has_prefix(algo, "default")) {
    g_autofree char *name = g_strdup(algo);
    char *sp = strchr(name, ' ');
    if (sp != NULL)
      *sp = '\0';
    if ((c->prefs.algo = fs_coll_algo_find(name)) == NULL) {
      nccl_free(c);
      return fail_key(t, "algorithm", error, "unknown algorithm \"%s\" (fabricsim coll --list)",
                      name);
    }
  }
  c->c_gpus = fs_val_table_col(t, "gpus", NULL);
  if (c->c_gpus < 0) {
    const char *r = fs_val_table_require(t, "ranks", error);
    guint64 v = 0;
    if (r == NULL || !g_ascii_string_to_unsigned(r, 10, 1, 65536, &v, NULL)) {
      nccl_free(c);
      return r == NULL ? FALSE
                       : fail_key(t, "ranks", error, "expected a rank count, got \"%s\"", r);
    }
    c->ranks = (guint)v;
  }
  if ((c->c_size = fs_val_table_col(t, "size_bytes", error)) < 0 ||
      (c->c_busbw = fs_val_table_col(t, "oop_busbw_GBps", error)) < 0) {
    nccl_free(c);
    return FALSE;
  }
  /* Optional: a table of bandwidths only cannot bar time. */
  c->c_time = fs_val_table_col(t, "oop_time_us", NULL);
  /* How the benchmark was launched sets the small-size floor. */
  GError *le = NULL;
  if (!fs_coll_launch_parse(fs_val_table_key(t, "launch"), &c->launch, &le)) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_KIND, t->file, key_line(t, "launch"), 3,
                    "launch: %s", le->message);
    g_error_free(le);
    nccl_free(c);
    return FALSE;
  }
  /* Paths are relative to the data root (the repository root, or the
   * installed share/fabricsim: util/datadir.h). */
  g_autofree char *path = g_canonicalize_filename(topo_key, fs_datadir_root());
  /* The topology's parameters, as `-D NAME=INTEGER` would give them. */
  const char *defs = fs_val_table_key(t, "defines");
  g_auto(GStrv) defines = defs != NULL ? g_strsplit_set(defs, " \t,", -1) : NULL;
  g_autoptr(GPtrArray) dv = g_ptr_array_new();
  for (guint i = 0; defines != NULL && defines[i] != NULL; i++)
    if (defines[i][0] != '\0')
      g_ptr_array_add(dv, defines[i]);
  g_ptr_array_add(dv, NULL);
  GError *e = NULL;
  /* The NCCL release the table was measured with (`nccl: 2.26`, first word), else the
   * default parameters. */
  const char *rel = fs_val_table_key(t, "nccl");
  g_autofree char *relw = rel != NULL ? g_strdup(rel) : NULL;
  if (relw != NULL && strchr(relw, ' ') != NULL)
    *strchr(relw, ' ') = '\0';
  if ((c->topo = fs_scenario_load_topology(c->sc, path, (const char *const *)dv->pdata, &e)) ==
      NULL) {
    /* A bad or unknown parameter is the defines line's fault. */
    int line = 0;
    if (defs != NULL && g_error_matches(e, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM))
      line = key_line(t, "defines");
    fs_error_prefix_at(e, t->file, line, line > 0 ? 3 : 0);
    g_propagate_error(error, e);
    nccl_free(c);
    return FALSE;
  }
  /* The release's constants with the NCCL_* environment and NCCL's latencies from the
   * calibration (models/nccl is not in the catalog, so --calibration reaches it here). */
  if ((c->np = fs_scenario_nccl_release(c->sc, relw, "nccl", c->topo, &e)) == NULL) {
    /* An unknown release is the nccl line's fault. */
    int line = relw != NULL ? key_line(t, "nccl") : 0;
    fs_error_prefix_at(e, t->file, line, line > 0 ? 3 : 0);
    g_propagate_error(error, e);
    nccl_free(c);
    return FALSE;
  }
  /* The NCCL variables the run set (`env: NCCL_BUFFSIZE=8388608 ...`, up to the first word
   * without '='), as `fabricsim coll` reads them from the environment; over the process's own NCCL_* variables
   * and the calibration, which fs_scenario_nccl_release applied. */
  const char *env = fs_val_table_key(t, "env");
  if (env != NULL) {
    g_auto(GStrv) words = g_strsplit_set(env, " \t", -1);
    g_autoptr(GPtrArray) ev = g_ptr_array_new();
    for (guint i = 0; words[i] != NULL; i++) {
      if (words[i][0] == '\0')
        continue;
      if (strchr(words[i], '=') == NULL)
        break;
      if (!g_str_has_prefix(words[i], "NCCL_")) {
        fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_KIND, t->file, key_line(t, "env"), 3,
                        "env: expected NCCL_NAME=VALUE words, got \"%s\"", words[i]);
        nccl_free(c);
        return FALSE;
      }
      g_ptr_array_add(ev, words[i]);
    }
    g_ptr_array_add(ev, NULL);
    if (!fs_nccl_params_apply_environ(c->np, (const char *const *)ev->pdata, &e)) {
      fs_error_prefix_at(e, t->file, key_line(t, "env"), 3);
      g_propagate_error(error, e);
      nccl_free(c);
      return FALSE;
    }
  }
  *ctx = c;
  return TRUE;
}

/* The network and communicator for n ranks (built on first use). */
static Setup *setup_for(Nccl *c, guint n, GError **error)
{
  for (guint i = 0; i < c->setups->len; i++) {
    Setup *s = g_ptr_array_index(c->setups, i);
    if (s->nranks == n)
      return s;
  }
  g_autofree char *count = g_strdup_printf("%u", n);
  guint ng = 0;
  g_autofree guint *gpus = fs_coll_parse_gpus(c->topo, count, &ng, error);
  if (gpus == NULL)
    return NULL;
  Setup *s = g_new0(Setup, 1);
  s->nranks = n;
  s->memo = fs_coll_alone_memo_new();
  s->world = fs_scenario_world_new(c->sc, c->topo, FS_NET_MAXMIN, NULL);
  g_ptr_array_add(c->setups, s);
  if ((s->comm = fs_coll_comm_from_topo(s->world->router, gpus, ng, c->np->max_channels,
                                        error)) == NULL ||
      !fs_coll_sysinfo_from_topo(c->np, s->world->router, s->comm, &s->sys, error))
    return NULL;
  fs_coll_prefs_apply_sys(&c->prefs, &s->sys);
  return s;
}

static gboolean nccl_predict(void *ctx, const FsValTable *t, guint row, const char *metric,
                             double *predicted, double *measured, uint64_t *size, GError **error)
{
  Nccl *c = ctx;
  gboolean busbw = strcmp(metric, "busbw") == 0;
  if (!busbw && strcmp(metric, "time") != 0)
    return fail_key(t, "bar", error, "kind nccl-tests predicts busbw or time, not \"%s\"", metric);
  uint64_t n = c->ranks;
  if (c->c_gpus >= 0 && !fs_val_table_u64(t, row, c->c_gpus, &n, error))
    return FALSE;
  if (!busbw && c->c_time < 0)
    return fail_key(t, "bar", error, "the time metric needs an oop_time_us column");
  if (!fs_val_table_u64(t, row, c->c_size, size, error) ||
      !fs_val_table_double(t, row, busbw ? c->c_busbw : c->c_time, measured, error))
    return FALSE;
  Setup *s = setup_for(c, (guint)n, error);
  if (s == NULL)
    return FALSE;
  FsCollSweep sw = {.op = c->op, .dtype = FS_COLL_DT_FLOAT, .redop = FS_COLL_REDOP_SUM,
                    .min_bytes = *size, .max_bytes = *size, .step_bytes = 1,
                    .prefs = c->prefs, .launch = c->launch,
                    .alone = {.memo = s->memo, .exec = FS_COLL_EXEC_AUTO}};
  fs_coll_topo_alone_routes(&sw.alone, s->world->tnet, TRUE);
  g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(FsNcclTestsRow));
  if (!fs_coll_bench(c->np, &s->sys, s->comm, &sw, s->world->net, fs_coll_topo_xfer,
                     s->world->tnet, rows, error))
    return FALSE;
  const FsNcclTestsRow *r = &g_array_index(rows, FsNcclTestsRow, 0);
  *predicted = busbw ? r->oop_busbw : r->oop_time_us;
  return TRUE;
}

const FsValKind fs_val_kind_nccl_tests = {
  "nccl-tests",
  "nccl-tests rows: the collective simulated on the table's topology (fabricsim coll)",
  nccl_prepare,
  nccl_predict,
  nccl_free,
};

const FsValKind *const fs_scenario_val_kinds[] = {
  &fs_val_kind_host_copy,
  &fs_val_kind_gemm,
  &fs_val_kind_attention,
  &fs_val_kind_nccl_tests,
  NULL,
};

FsValResult *fs_scenario_val_run(const FsScenario *sc, const FsValTable *t, GError **error)
{
  g_return_val_if_fail(sc != NULL && fs_scenario_nccl(sc) != NULL, NULL);
  FsValInputs in = {fs_scenario_catalog(sc), fs_scenario_calibration(sc), sc};
  return fs_val_run_kinds(t, fs_scenario_val_kinds, &in, error);
}
