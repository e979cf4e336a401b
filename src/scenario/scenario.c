/* scenario.c — see scenario.h. */
#include "scenario/scenario.h"

#include <string.h>

#include "calib/nccl-apply.h"
#include "collrun/coll-topo.h"
#include "scenario/step-factor.h"

struct FsScenario {
  FsCatalog *cat;
  FsCalibration *cal;
  FsEfficiency *eff;
  FsNcclParams *nccl;
  FsTopo *topo;
  FsCollPrefs prefs;
  FsStepFactor *step_factor;  /* models/calibration/training-step.yaml, or NULL */
  char *nccl_path;  /* the file the NCCL constants came from */
  char *env_text;   /* fs_scenario_env_text */
};

gboolean fs_scenario_prefs_from_env(FsCollPrefs *prefs, GError **error)
{
  fs_coll_prefs_init(prefs);
  const char *algo = g_getenv("NCCL_ALGO"), *proto = g_getenv("NCCL_PROTO");
  if (algo != NULL && algo[0] != '\0' && !fs_coll_prefs_set_nccl_algo(prefs, algo, error))
    return FALSE;
  if (proto != NULL && proto[0] != '\0' && !fs_coll_prefs_set_nccl_proto(prefs, proto, error))
    return FALSE;
  /* As in NCCL, CollNet (SHARP) is used only when enabled. */
  const char *cn = g_getenv("NCCL_COLLNET_ENABLE");
  prefs->collnet_off = !(cn != NULL && strcmp(cn, "1") == 0);
  /* NCCL_CROSS_NIC and NCCL_PXN_DISABLE choose the NICs of every router
   * (net/route.h, fs_route_options_init): a bad value is refused here. */
  return fs_route_options_check_env(error);
}

/* Lays a command's forced choices over prefs. */
static gboolean force_tuner(FsCollPrefs *prefs, const char *algo, const char *proto, int channels,
                            GError **error)
{
  if (algo != NULL && (prefs->algo = fs_coll_algo_find(algo)) == NULL) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "unknown algorithm \"%s\" (see fabricsim coll --list)", algo);
    return FALSE;
  }
  if (proto != NULL) {
    FsCollProto p;
    if (!fs_coll_proto_from_name(proto, &p)) {
      g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "unknown protocol \"%s\"; expected LL, LL128 or Simple", proto);
      return FALSE;
    }
    prefs->proto = (int)p;
  }
  if (channels < 0 || channels > 64) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--channels must be 1 to 64");
    return FALSE;
  }
  prefs->channels = (guint)channels;
  return TRUE;
}

/* The NCCL_* variables set in the environment that a scenario applies
 * (fs_scenario_env_text), or NULL. */
static char *env_text(void)
{
  /* fs_scenario_prefs_from_env's and net/route.h's, then fs_nccl_params_apply_env's. */
  static const char *const vars[] = {
    "NCCL_ALGO", "NCCL_PROTO", "NCCL_COLLNET_ENABLE", "NCCL_CROSS_NIC", "NCCL_PXN_DISABLE", NULL,
  };
  const char *const *lists[] = { vars, fs_nccl_params_env_names() };
  g_autoptr(GString) out = g_string_new(NULL);
  for (guint l = 0; l < G_N_ELEMENTS(lists); l++)
    for (const char *const *n = lists[l]; *n != NULL; n++) {
      const char *v = g_getenv(*n);
      if (v != NULL && v[0] != '\0')
        g_string_append_printf(out, "%s%s=%s", out->len > 0 ? " " : "", *n, v);
    }
  return out->len > 0 ? g_string_free(g_steal_pointer(&out), FALSE) : NULL;
}

/* Loads the inputs in their order (tuner inputs, catalog with the
 * calibration laid over it, topology, curves, NCCL constants), then applies
 * the rest of the calibration (curves, NCCL constants) at once. */
FsScenario *fs_scenario_load(const FsScenarioInputs *in, GError **error)
{
  g_return_val_if_fail(in != NULL, NULL);
  g_autoptr(FsScenario) sc = g_new0(FsScenario, 1);
  fs_coll_prefs_init(&sc->prefs);
  if ((in->needs & FS_SCENARIO_NEED_NCCL) &&
      (!fs_scenario_prefs_from_env(&sc->prefs, error) ||
       !force_tuner(&sc->prefs, in->algo, in->proto, in->channels, error)))
    return NULL;
  sc->cat = fs_calibration_load_catalog(in->models_dir, in->calibration, &sc->cal, error);
  if (sc->cat == NULL)
    return NULL;
  if (in->topology != NULL &&
      (sc->topo = fs_topo_load_file(in->topology, sc->cat, in->defines, error)) == NULL)
    return NULL;
  if (in->needs & FS_SCENARIO_NEED_EFFICIENCY) {
    g_autofree char *dir = in->models_dir ? g_build_filename(in->models_dir, "compute", NULL) : NULL;
    if ((sc->eff = fs_efficiency_load_default(dir, error)) == NULL)
      return NULL;
  }
  /* A training step's validated factor: read by every command that can
   * run one (both needs); a models folder without the file has none. */
  if ((in->needs & FS_SCENARIO_NEED_EFFICIENCY) && (in->needs & FS_SCENARIO_NEED_NCCL)) {
    g_autofree char *sf = fs_step_factor_path(in->models_dir);
    if (g_file_test(sf, G_FILE_TEST_EXISTS) &&
        (sc->step_factor = fs_step_factor_load(sf, error)) == NULL)
      return NULL;
  }
  if (in->needs & FS_SCENARIO_NEED_NCCL) {
    if (in->nccl_params != NULL && in->nccl_version != NULL) {
      g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE,
                  "give --nccl-version or --nccl-params, not both");
      return NULL;
    }
    sc->nccl_path = in->nccl_params ? g_strdup(in->nccl_params)
                  : in->nccl_version ? fs_nccl_params_version_path(in->nccl_version, "--nccl-version", error)
                                     : fs_nccl_params_default_path();
    if (sc->nccl_path == NULL || (sc->nccl = fs_nccl_params_load(sc->nccl_path, error)) == NULL)
      return NULL;
    /* NCCL's point-to-point variables (NCCL_P2P_NET_CHUNKSIZE, NCCL_NCHANNELS_PER_NET_PEER…). */
    if (!fs_nccl_params_apply_env(sc->nccl, error))
      return NULL;
    sc->env_text = env_text();
  }
  /* The calibration's one moment: the catalog has it already (the
   * topology's models are the calibrated ones); now the curves and NCCL's
   * constants, matched against the topology's first GPU. */
  if (sc->cal != NULL && sc->eff != NULL &&
      !fs_calibration_apply_efficiency(sc->cal, sc->cat, sc->eff, error))
    return NULL;
  if (sc->cal != NULL && sc->nccl != NULL && sc->topo != NULL)
    fs_calibration_apply_nccl(sc->cal, fs_calibration_topo_gpu(sc->topo), sc->nccl, NULL);
  return g_steal_pointer(&sc);
}

void fs_scenario_free(FsScenario *sc)
{
  if (sc == NULL)
    return;
  fs_topo_free(sc->topo);
  fs_nccl_params_free(sc->nccl);
  g_free(sc->nccl_path);
  g_free(sc->env_text);
  fs_efficiency_free(sc->eff);
  fs_step_factor_free(sc->step_factor);
  fs_calibration_free(sc->cal);
  fs_catalog_free(sc->cat);
  g_free(sc);
}

FsCatalog *fs_scenario_catalog(const FsScenario *sc) { return sc->cat; }
const FsCalibration *fs_scenario_calibration(const FsScenario *sc) { return sc->cal; }
const FsTopo *fs_scenario_topo(const FsScenario *sc) { return sc->topo; }
const FsEfficiency *fs_scenario_efficiency(const FsScenario *sc) { return sc->eff; }
const FsNcclParams *fs_scenario_nccl(const FsScenario *sc) { return sc->nccl; }
const FsCollPrefs *fs_scenario_prefs(const FsScenario *sc) { return &sc->prefs; }
const FsStepFactor *fs_scenario_step_factor(const FsScenario *sc) { return sc->step_factor; }

FsTopo *fs_scenario_load_topology(const FsScenario *sc, const char *path,
                                  const char *const *defines, GError **error)
{
  g_return_val_if_fail(sc != NULL && path != NULL, NULL);
  return fs_topo_load_file(path, sc->cat, defines, error);
}

FsNcclParams *fs_scenario_nccl_release(const FsScenario *sc, const char *version, const char *what,
                                       const FsTopo *topo, GError **error)
{
  g_return_val_if_fail(sc != NULL && topo != NULL, NULL);
  g_autofree char *path = version != NULL ? fs_nccl_params_version_path(version, what, error)
                        : sc->nccl_path != NULL ? g_strdup(sc->nccl_path)
                                                : fs_nccl_params_default_path();
  if (path == NULL)
    return NULL;
  g_autoptr(FsNcclParams) np = fs_nccl_params_load(path, error);
  if (np == NULL || !fs_nccl_params_apply_env(np, error))
    return NULL;
  if (sc->cal != NULL)
    fs_calibration_apply_nccl(sc->cal, fs_calibration_topo_gpu(topo), np, NULL);
  return g_steal_pointer(&np);
}

const char *fs_scenario_env_text(const FsScenario *sc) { return sc->env_text; }

FsNcclParams *fs_scenario_nccl_for_topo(const FsScenario *sc, const FsTopo *topo, GError **error)
{
  g_return_val_if_fail(sc != NULL && topo != NULL, NULL);
  if (sc->cal == NULL || sc->nccl_path == NULL)
    return NULL;
  return fs_scenario_nccl_release(sc, NULL, NULL, topo, error);
}

/* The engines over topo: simulator, flow network in model, router with
 * ropt and the collective layer's view; env without NCCL constants or
 * tuner inputs.  Every simulator, network and router of a run is built
 * here. */
static FsScenarioWorld *world_build(const FsTopo *topo, FsNetModel model, const FsRouteOptions *ropt)
{
  FsScenarioWorld *w = g_new0(FsScenarioWorld, 1);
  w->sim = fs_sim_new();
  w->net = fs_flownet_new(w->sim, model);
  w->router = fs_router_new(topo, w->net, ropt);
  w->tnet = fs_coll_topo_net_new(w->router);
  w->env = (FsOpEnv){ w->sim, w->net, w->router, w->tnet, NULL, NULL, FS_COLL_EXEC_STEPS };
  return w;
}

FsScenarioWorld *fs_scenario_world_new(const FsScenario *sc, const FsTopo *topo, FsNetModel model,
                                       const FsRouteOptions *ropt)
{
  g_return_val_if_fail(sc != NULL, NULL);
  if (topo == NULL)
    topo = sc->topo;
  g_return_val_if_fail(topo != NULL, NULL);
  FsScenarioWorld *w = world_build(topo, model, ropt);
  w->env.nccl = sc->nccl;
  w->env.prefs = &sc->prefs;
  return w;
}

void fs_scenario_world_free(FsScenarioWorld *w)
{
  if (w == NULL)
    return;
  fs_coll_topo_net_free(w->tnet);
  fs_router_free(w->router);
  fs_flownet_free(w->net);
  fs_sim_free(w->sim);
  g_free(w);
}

/* FsTrainEngines.world_new: a world of NCCL's default routes. */
static gpointer train_world_new(const FsTopo *topo, FsNetModel model, FsOpEnv *env)
{
  FsScenarioWorld *w = world_build(topo, model, NULL);
  *env = w->env;
  return w;
}

static void train_world_free(gpointer w) { fs_scenario_world_free(w); }

const FsTrainEngines *fs_scenario_engines(void)
{
  static const FsTrainEngines engines = { train_world_new, train_world_free };
  return &engines;
}

FsTrain *fs_scenario_train_new(const FsScenario *sc, const FsTopo *topo, const FsNcclParams *nccl,
                               const FsWorkload *w, const FsTrainOptions *opt, GError **error)
{
  g_return_val_if_fail(sc != NULL && sc->eff != NULL && sc->nccl != NULL, NULL);
  FsTrainOptions o;
  if (opt != NULL)
    o = *opt;
  else
    fs_train_options_init(&o);
  o.prefs = &sc->prefs;
  return fs_train_new(topo != NULL ? topo : sc->topo, w, sc->eff, nccl != NULL ? nccl : sc->nccl,
                      fs_scenario_engines(), &o, error);
}
