/* kinds.c — the sweep's shared environment (catalog, compute curves,
 * NCCL constants, topologies loaded once and read by every thread, and a
 * memo of collective times that train points share: collmemo.h) and
 * the table of point kinds: train (one step of a workload), coll (one
 * collective at one size), p2p (one GPU-to-GPU transfer).  Adding a kind
 * is one entry in fs_sweep_kinds[]. */
#include <math.h>
#include <string.h>

#include "coll/plan.h"
#include "collrun/bench.h"
#include "collrun/coll-topo.h"
#include "core/sim.h"
#include "net/flow.h"
#include "net/p2p.h"
#include "net/route.h"
#include "scenario/scenario.h"
#include "sweep/sweep.h"
#include "util/error.h"
#include "util/units.h"
#include "workload/executor.h"
#include "workload/spec.h"

#define MAX_SETTINGS 256

/* ---- environment ---- */

typedef struct {
  FsTopo *topo;
  FsNcclParams *nccl;  /* NCCL's constants calibrated for it (--calibration), or NULL */
  char *error;  /* the load's message when topo is NULL */
} TopoEntry;

struct FsSweepEnv {
  FsScenario *sc;     /* catalog, curves, NCCL constants and tuner inputs */
  const FsCatalog *cat;
  GHashTable *topos;  /* key (path + defines) → TopoEntry*; lookups only */
  FsCollMemo *memo;   /* collective times measured alone, shared by train points */
};

static void topo_entry_free(TopoEntry *e)
{
  fs_topo_free(e->topo);
  fs_nccl_params_free(e->nccl);
  g_free(e->error);
  g_free(e);
}

FsSweepEnv *fs_sweep_env_new(const FsScenarioInputs *in, GError **error)
{
  g_autoptr(FsSweepEnv) env = g_new0(FsSweepEnv, 1);
  env->topos = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify)topo_entry_free);
  FsScenarioInputs mine = { 0 };
  if (in != NULL)
    mine = *in;
  mine.topology = NULL; /* each point loads its own */
  mine.needs = FS_SCENARIO_NEED_NCCL | FS_SCENARIO_NEED_EFFICIENCY;
  if ((env->sc = fs_scenario_load(&mine, error)) == NULL)
    return NULL;
  env->cat = fs_scenario_catalog(env->sc);
  env->memo = fs_coll_memo_new();
  return g_steal_pointer(&env);
}

void fs_sweep_env_free(FsSweepEnv *env)
{
  if (env == NULL)
    return;
  g_hash_table_unref(env->topos);
  fs_coll_memo_free(env->memo);
  fs_scenario_free(env->sc);
  g_free(env);
}

const FsCatalog *fs_sweep_env_catalog(const FsSweepEnv *env) { return env->cat; }
const FsEfficiency *fs_sweep_env_efficiency(const FsSweepEnv *env) { return fs_scenario_efficiency(env->sc); }
const FsNcclParams *fs_sweep_env_nccl(const FsSweepEnv *env) { return fs_scenario_nccl(env->sc); }

/* The point's topology key and its -D list (defines: NULL-terminated,
 * strings borrowed from the spec, in setting order). */
static char *topo_key(const FsSweepSpec *s, guint point, GPtrArray *defines)
{
  const char *keys[MAX_SETTINGS], *vals[MAX_SETTINGS];
  guint n = fs_sweep_point_settings(s, point, keys, vals, MAX_SETTINGS - 1);
  g_autofree char *path = fs_sweep_point_path(s, point, "topology");
  if (path == NULL)
    return NULL;
  GString *k = g_string_new(path);
  for (guint i = 0; i < n; i++)
    if (g_str_has_prefix(keys[i], "D.")) {
      g_string_append_printf(k, "\n%s=%s", keys[i] + 2, vals[i]);
      if (defines != NULL)
        g_ptr_array_add(defines, g_strdup_printf("%s=%s", keys[i] + 2, vals[i]));
    }
  return g_string_free(k, FALSE);
}

void fs_sweep_env_prepare(FsSweepEnv *env, const FsSweepSpec *s, guint first, guint stride)
{
  for (guint p = first; p < fs_sweep_spec_n_points(s); p += MAX(stride, 1u)) {
    g_autoptr(GPtrArray) defs = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *key = topo_key(s, p, defs);
    if (key == NULL || g_hash_table_contains(env->topos, key))
      continue;
    g_ptr_array_add(defs, NULL);
    g_autofree char *path = fs_sweep_point_path(s, p, "topology");
    GError *error = NULL;
    TopoEntry *e = g_new0(TopoEntry, 1);
    e->topo = fs_scenario_load_topology(env->sc, path, (const char *const *)defs->pdata, &error);
    if (e->topo != NULL && (e->nccl = fs_scenario_nccl_for_topo(env->sc, e->topo, &error)) == NULL &&
        error != NULL)
      g_clear_pointer(&e->topo, fs_topo_free);
    if (e->topo == NULL) {
      e->error = g_strdup(error->message);
      g_error_free(error);
    }
    g_hash_table_insert(env->topos, g_steal_pointer(&key), e);
  }
}

const FsTopo *fs_sweep_env_topo(const FsSweepEnv *env, const FsSweepSpec *s, guint point,
                                GError **error)
{
  g_autofree char *key = topo_key(s, point, NULL);
  if (key == NULL) {
    g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC,
                "point %u has no topology (set `topology:`)", point);
    return NULL;
  }
  const TopoEntry *e = g_hash_table_lookup(env->topos, key);
  if (e == NULL) {
    g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC,
                "point %u: its topology was not prepared (fs_sweep_env_prepare)", point);
    return NULL;
  }
  if (e->topo == NULL) {
    g_set_error_literal(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC, e->error);
    return NULL;
  }
  return e->topo;
}

/* The NCCL constants of the point's topology (prepared): its calibrated
 * copy, else the scenario's. */
static const FsNcclParams *point_nccl(const FsSweepEnv *env, const FsSweepSpec *s, guint point)
{
  g_autofree char *key = topo_key(s, point, NULL);
  const TopoEntry *e = key != NULL ? g_hash_table_lookup(env->topos, key) : NULL;
  return e != NULL && e->nccl != NULL ? e->nccl : fs_scenario_nccl(env->sc);
}

static gboolean point_model(const FsSweepSpec *s, guint point, FsNetModel *m, GError **error)
{
  const char *name = fs_sweep_point_get(s, point, "model");
  *m = FS_NET_MAXMIN;
  if (name != NULL && !fs_net_model_from_name(name, m)) {
    g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC,
                "unknown flow model \"%s\" (maxmin or analytic)", name);
    return FALSE;
  }
  return TRUE;
}

static gboolean is_common(const char *key)
{
  return strcmp(key, "topology") == 0 || strcmp(key, "workload") == 0 ||
         strcmp(key, "model") == 0 || g_str_has_prefix(key, "D.");
}

static char *num(double v)
{
  if (!isfinite(v))
    v = 0;
  return g_strdup_printf("%.9g", v);
}

/* ---- train ---- */

/* The workload override a sweep key names: the key itself, --key,
 * --key with '_' as '-', parallel.key or training.key. */
static const char *train_override(const char *key, char *buf, gsize len)
{
  const char *const *names = fs_workload_override_names();
  g_autofree char *dashed = g_strdelimit(g_strdup(key), "_", '-');
  const char *forms[] = { "%s", "--%s", "--%s", "parallel.%s", "training.%s" };
  for (guint f = 0; f < G_N_ELEMENTS(forms); f++) {
    g_snprintf(buf, len, forms[f], f == 2 ? dashed : key);
    for (guint i = 0; names[i] != NULL; i++)
      if (strcmp(names[i], buf) == 0)
        return buf;
  }
  return NULL;
}

static gboolean train_accepts(const char *key)
{
  char buf[128];
  return train_override(key, buf, sizeof buf) != NULL;
}

static const FsSweepColumn train_columns[] = {
  {"gpus", FS_COL_NUM}, {"gpu", FS_COL_STR}, {"tp", FS_COL_NUM}, {"pp", FS_COL_NUM},
  {"dp", FS_COL_NUM}, {"cp", FS_COL_NUM}, {"ep", FS_COL_NUM}, {"zero_stage", FS_COL_NUM},
  {"micro_batch", FS_COL_NUM}, {"microbatches", FS_COL_NUM}, {"step_time_s", FS_COL_NUM},
  {"tokens_per_s", FS_COL_NUM}, {"model_tflops_per_gpu", FS_COL_NUM}, {"mfu", FS_COL_NUM},
  {"exposed_comm_s", FS_COL_NUM}, {"bubble_s", FS_COL_NUM}, {"memory_gib", FS_COL_NUM},
  {"fits", FS_COL_NUM}, {"energy_j", FS_COL_NUM}, {NULL, 0},
};

/* Runs one train point: loads its workload, applies the point's settings as workload overrides
 * (topology, workload, model and the D. definitions excepted), resolves it for the topology's
 * GPUs, simulates one step and fills v (new strings, in train_columns order) with the layout,
 * step time, throughput, MFU, the largest exposed communication and bubble over the stages,
 * memory and energy. FS_SWEEP_ERROR_SPEC without `workload:`; otherwise the loader's or the
 * run's error. */
static gboolean train_run(const FsSweepEnv *env, const FsSweepSpec *s, guint point, char **v,
                          GError **error)
{
  const FsTopo *topo = fs_sweep_env_topo(env, s, point, error);
  if (topo == NULL)
    return FALSE;
  g_autofree char *wpath = fs_sweep_point_path(s, point, "workload");
  if (wpath == NULL) {
    g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC, "a train point needs `workload:`");
    return FALSE;
  }
  FsTrainOptions opt;
  fs_train_options_init(&opt);
  opt.memo = env->memo;
  if (!point_model(s, point, &opt.net_model, error))
    return FALSE;
  g_autoptr(FsWorkload) w = fs_workload_load_file(wpath, NULL, error);
  if (w == NULL)
    return FALSE;
  const char *keys[MAX_SETTINGS], *vals[MAX_SETTINGS];
  guint n = fs_sweep_point_settings(s, point, keys, vals, MAX_SETTINGS - 1);
  for (guint i = 0; i < n; i++) {
    char buf[128];
    if (is_common(keys[i]))
      continue;
    const char *name = train_override(keys[i], buf, sizeof buf);
    if (!fs_workload_apply_override(w, name, vals[i], error))
      return FALSE;
  }
  guint ngpus;
  fs_topo_gpus(topo, &ngpus);
  if (!fs_workload_resolve(w, ngpus, error))
    return FALSE;
  g_autoptr(FsTrain) t = fs_scenario_train_new(env->sc, topo, point_nccl(env, s, point), w, &opt, error);
  if (t == NULL || !fs_train_run(t, error))
    return FALSE;
  const FsTrainResult *r = fs_train_result(t);
  FsMemoryBreakdown mem;
  if (!fs_workload_memory_estimate(w, r->gpu, &mem, error))
    return FALSE;
  FsTime exposed = 0, bubble = 0;
  for (guint i = 0; i < r->classes->len; i++) {
    const FsTrainClass *c = &g_array_index(r->classes, FsTrainClass, i);
    FsTime e = 0;
    for (guint k = 0; k < FS_CAT_N; k++)
      if (fs_op_cat_is_comm(k))
        e += c->time.exposed[k];
    exposed = MAX(exposed, e);
    bubble = MAX(bubble, c->time.bubble);
  }
  guint k = 0;
  v[k++] = g_strdup_printf("%u", r->gpus);
  v[k++] = g_strdup(r->gpu_name);
  v[k++] = g_strdup_printf("%u", w->tp);
  v[k++] = g_strdup_printf("%u", w->pp);
  v[k++] = g_strdup_printf("%u", w->dp);
  v[k++] = g_strdup_printf("%u", w->cp);
  v[k++] = g_strdup_printf("%u", w->ep);
  v[k++] = g_strdup_printf("%u", w->zero_stage);
  v[k++] = g_strdup_printf("%u", w->micro_batch);
  v[k++] = g_strdup_printf("%u", r->microbatches);
  v[k++] = num(fs_time_to_s(r->step_time));
  v[k++] = num(r->tokens_per_s);
  v[k++] = num(r->tflops_per_gpu);
  v[k++] = num(r->mfu);
  v[k++] = num(fs_time_to_s(exposed));
  v[k++] = num(fs_time_to_s(bubble));
  v[k++] = num(mem.total / 1073741824.0);
  v[k++] = g_strdup(mem.fits ? "1" : "0");
  v[k++] = num(r->energy_j);
  return TRUE;
}

/* ---- coll ---- */

static gboolean coll_accepts(const char *key)
{
  static const char *const keys[] = { "op", "size", "gpus", "dtype", "algo", "proto",
                                      "channels", NULL };
  return g_strv_contains(keys, key);
}

static const FsSweepColumn coll_columns[] = {
  {"nranks", FS_COL_NUM}, {"bytes", FS_COL_NUM}, {"time_us", FS_COL_NUM},
  {"algbw_GBps", FS_COL_NUM}, {"busbw_GBps", FS_COL_NUM}, {"algo", FS_COL_STR},
  {"proto", FS_COL_STR}, {"channels", FS_COL_NUM}, {NULL, 0},
};

/* The point's collective, size and tuner choices over the scenario's tuner inputs (NCCL_ALGO,
 * NCCL_PROTO, CollNet): op (all_reduce), dtype (float) and size (128 MiB) with their defaults,
 * one size only, and the optional algo, proto and channels (1 to 64) the tuner must use.
 * FS_SWEEP_ERROR_SPEC names the bad value. */
static gboolean coll_prefs(const FsSweepEnv *env, const FsSweepSpec *s, guint point, FsCollSweep *sw,
                           GError **error)
{
  sw->prefs = *fs_scenario_prefs(env->sc);
  const char *v;
  sw->op = FS_COLL_ALL_REDUCE;
  if ((v = fs_sweep_point_get(s, point, "op")) != NULL && !fs_coll_op_from_name(v, &sw->op)) {
    g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC, "unknown collective \"%s\"", v);
    return FALSE;
  }
  sw->dtype = FS_COLL_DT_FLOAT;
  if ((v = fs_sweep_point_get(s, point, "dtype")) != NULL && !fs_coll_dtype_from_name(v, &sw->dtype)) {
    g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC, "unknown data type \"%s\"", v);
    return FALSE;
  }
  sw->redop = FS_COLL_REDOP_SUM;
  uint64_t bytes = 128u << 20;
  if ((v = fs_sweep_point_get(s, point, "size")) != NULL && !fs_parse_size(v, &bytes, error))
    return FALSE;
  sw->min_bytes = sw->max_bytes = bytes;
  sw->step_factor = 2;
  if ((v = fs_sweep_point_get(s, point, "algo")) != NULL &&
      (sw->prefs.algo = fs_coll_algo_find(v)) == NULL) {
    g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC, "unknown algorithm \"%s\"", v);
    return FALSE;
  }
  if ((v = fs_sweep_point_get(s, point, "proto")) != NULL) {
    FsCollProto p;
    if (!fs_coll_proto_from_name(v, &p)) {
      g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC,
                  "unknown protocol \"%s\"; expected LL, LL128 or Simple", v);
      return FALSE;
    }
    sw->prefs.proto = (int)p;
  }
  if ((v = fs_sweep_point_get(s, point, "channels")) != NULL) {
    char *end;
    guint64 c = g_ascii_strtoull(v, &end, 10);
    if (*end != '\0' || c < 1 || c > 64) {
      g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC, "channels must be 1 to 64, not \"%s\"", v);
      return FALSE;
    }
    sw->prefs.channels = (guint)c;
  }
  return TRUE;
}

/* Runs one coll point: a scenario world (simulator, flow network, router) over the point's
 * topology, the communicator of its GPUs ("all" by default) with the point's NCCL parameters,
 * and the one size timed as nccl-tests would (fs_coll_bench), filling v in coll_columns order.
 * Errors are those of the settings, the GPU list, the communicator or the run. */
static gboolean coll_run(const FsSweepEnv *env, const FsSweepSpec *s, guint point, char **v,
                         GError **error)
{
  const FsTopo *topo = fs_sweep_env_topo(env, s, point, error);
  if (topo == NULL)
    return FALSE;
  FsCollSweep sw = {0};
  FsNetModel model;
  if (!coll_prefs(env, s, point, &sw, error) || !point_model(s, point, &model, error))
    return FALSE;
  const char *gtext = fs_sweep_point_get(s, point, "gpus");
  guint n = 0;
  g_autofree guint *gpus = fs_coll_parse_gpus(topo, gtext ? gtext : "all", &n, error);
  if (gpus == NULL)
    return FALSE;
  const FsNcclParams *np = point_nccl(env, s, point);
  g_autoptr(FsScenarioWorld) world = fs_scenario_world_new(env->sc, topo, model, NULL);
  g_autoptr(FsComm) comm = fs_coll_comm_from_topo(world->router, gpus, n, np->max_channels, error);
  if (comm == NULL)
    return FALSE;
  FsCollSysInfo sys;
  if (!fs_coll_sysinfo_from_topo(np, world->router, comm, &sys, error))
    return FALSE;
  fs_coll_prefs_apply_sys(&sw.prefs, &sys);
  /* As `fabricsim coll`: auto on the max-min model.  The analytic model
   * keeps its step runs, whose shares route_paths would change (alone.h). */
  fs_coll_topo_alone_routes(&sw.alone, world->tnet, model == FS_NET_MAXMIN);
  if (model == FS_NET_MAXMIN)
    sw.alone.exec = FS_COLL_EXEC_AUTO;
  g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(FsNcclTestsRow));
  if (!fs_coll_bench(np, &sys, comm, &sw, world->net, fs_coll_topo_xfer, world->tnet, rows, error))
    return FALSE;
  const FsNcclTestsRow *r = &g_array_index(rows, FsNcclTestsRow, 0);
  guint k = 0;
  v[k++] = g_strdup_printf("%u", n);
  v[k++] = g_strdup_printf("%" G_GUINT64_FORMAT, r->sizes.size);
  v[k++] = num(r->oop_time_us);
  v[k++] = num(r->oop_algbw);
  v[k++] = num(r->oop_busbw);
  v[k++] = g_strdup(r->algo ? r->algo : "");
  v[k++] = g_strdup(r->proto ? r->proto : "");
  v[k++] = g_strdup_printf("%u", r->channels);
  return TRUE;
}

/* ---- p2p ---- */

static gboolean p2p_accepts(const char *key)
{
  static const char *const keys[] = { "src", "dst", "size", NULL };
  return g_strv_contains(keys, key);
}

static const FsSweepColumn p2p_columns[] = {
  {"src_gpu", FS_COL_NUM}, {"dst_gpu", FS_COL_NUM}, {"bytes", FS_COL_NUM}, {"uni_GBps", FS_COL_NUM},
  {"bi_GBps", FS_COL_NUM}, {"latency_us", FS_COL_NUM}, {"transport", FS_COL_STR},
  {"h2d_GBps", FS_COL_NUM}, {NULL, 0},
};

static gboolean gpu_index(const char *v, guint n, guint *out, GError **error)
{
  char *end;
  guint64 i = g_ascii_strtoull(v, &end, 10);
  if (*v == '\0' || *end != '\0' || i >= n) {
    g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC,
                "GPU \"%s\" is not an index of the topology's %u GPUs (placement order)", v, n);
    return FALSE;
  }
  *out = (guint)i;
  return TRUE;
}

/* One GPU pair (src, dst: indices in placement order, default 0 and 1). */
static gboolean p2p_run(const FsSweepEnv *env, const FsSweepSpec *s, guint point, char **v,
                        GError **error)
{
  const FsTopo *topo = fs_sweep_env_topo(env, s, point, error);
  if (topo == NULL)
    return FALSE;
  FsNetModel model;
  if (!point_model(s, point, &model, error))
    return FALSE;
  guint n, src = 0, dst = 1;
  fs_topo_gpus(topo, &n);
  const char *t;
  if ((t = fs_sweep_point_get(s, point, "src")) != NULL && !gpu_index(t, n, &src, error))
    return FALSE;
  if ((t = fs_sweep_point_get(s, point, "dst")) != NULL && !gpu_index(t, n, &dst, error))
    return FALSE;
  if (dst >= n || src == dst) {
    g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC, "p2p needs two different GPUs");
    return FALSE;
  }
  uint64_t bytes = 64u << 20;
  if ((t = fs_sweep_point_get(s, point, "size")) != NULL && !fs_parse_size(t, &bytes, error))
    return FALSE;
  if (bytes == 0) {
    g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC, "size must be > 0");
    return FALSE;
  }
  g_autoptr(FsScenarioWorld) w = fs_scenario_world_new(env->sc, topo, model, NULL);
  g_autoptr(FsP2pResult) r = fs_p2p_measure_on(w->router, bytes, MAX(src, dst) + 1, error);
  if (r == NULL)
    return FALSE;
  guint k = src * r->n + dst;
  if (!r->routed[k]) {
    g_set_error(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC, "no route from GPU %u to GPU %u", src, dst);
    return FALSE;
  }
  guint c = 0;
  v[c++] = g_strdup_printf("%u", src);
  v[c++] = g_strdup_printf("%u", dst);
  v[c++] = g_strdup_printf("%" G_GUINT64_FORMAT, bytes);
  v[c++] = num(r->uni_gbps[k]);
  v[c++] = num(r->bi_gbps[k]);
  v[c++] = num(r->latency_us[k]);
  v[c++] = g_strdup(fs_route_kind_name(r->kind[k]));
  v[c++] = num(r->h2d_gbps[src]);
  return TRUE;
}

/* ---- table ---- */

static const FsSweepKind kind_train = {
  "train", "one training step of `workload` on `topology` (overrides: tp, pp, micro_batch, …)",
  train_columns, train_accepts, train_run,
};
static const FsSweepKind kind_coll = {
  "coll", "one collective (op, size, gpus, dtype, algo, proto, channels) on `topology`",
  coll_columns, coll_accepts, coll_run,
};

static const FsSweepKind kind_p2p = {
  "p2p", "one GPU-to-GPU transfer (src, dst, size) on `topology`: bandwidth, latency, transport",
  p2p_columns, p2p_accepts, p2p_run,
};

const FsSweepKind *const fs_sweep_kinds[] = { &kind_train, &kind_coll, &kind_p2p, NULL };

const FsSweepKind *fs_sweep_kind_find(const char *name)
{
  for (guint i = 0; fs_sweep_kinds[i] != NULL; i++)
    if (strcmp(fs_sweep_kinds[i]->name, name) == 0)
      return fs_sweep_kinds[i];
  return NULL;
}

guint fs_sweep_kind_n_columns(const FsSweepKind *k)
{
  guint n = 0;
  while (k->columns[n].name != NULL)
    n++;
  return n;
}

void fs_sweep_result_clear(FsSweepResult *r)
{
  g_clear_pointer(&r->error, g_free);
  g_clear_pointer(&r->values, g_strfreev);
}

void fs_sweep_point_run(const FsSweepEnv *env, const FsSweepSpec *s, guint point, FsSweepResult *r)
{
  const FsSweepKind *k = fs_sweep_spec_kind(s);
  guint nc = fs_sweep_kind_n_columns(k);
  char **v = g_new0(char *, nc + 1);
  GError *error = NULL;
  r->index = point;
  r->ok = k->run(env, s, point, v, &error);
  if (r->ok) {
    r->values = v;
    r->error = NULL;
  } else {
    g_strfreev(v);
    r->values = NULL;
    r->error = g_strdup(error ? error->message : "failed");
    for (char *c = r->error; *c; c++)
      if (*c == '\n' || *c == '\r')
        *c = ' ';
    g_clear_error(&error);
  }
}

void fs_sweep_kinds_describe(GString *out)
{
  for (guint i = 0; fs_sweep_kinds[i] != NULL; i++) {
    const FsSweepKind *k = fs_sweep_kinds[i];
    g_string_append_printf(out, "%-6s %s\n       columns:", k->name, k->summary);
    for (guint j = 0; k->columns[j].name; j++)
      g_string_append_printf(out, " %s", k->columns[j].name);
    g_string_append(out, "\n");
  }
}
