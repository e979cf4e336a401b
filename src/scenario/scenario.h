/* scenario.h — the world a simulating command runs in, built in one place.
 *
 * An FsScenario holds everything a run reads before it starts: the
 * catalog (models/, or --models DIR), the calibration (--calibration FILE),
 * the compute efficiency curves, NCCL's constants (--nccl-params FILE, or
 * models/nccl/nccl.yaml, with NCCL's point-to-point variables laid over
 * them: fs_nccl_params_apply_env), the tuner inputs of the NCCL_* environment
 * (NCCL_ALGO, NCCL_PROTO, NCCL_COLLNET_ENABLE), the validated step-time
 * factor of a training step (models/calibration/training-step.yaml,
 * scenario/step-factor.h) and the topology with its -D parameters.  fs_scenario_load reads them in that order and applies the
 * calibration at one moment, when everything is loaded: to the catalog
 * (before the topology resolves its models), to the GEMM curves and to the
 * NCCL constants (matched against the topology's first GPU).  Every
 * simulating command (p2p, flows, coll, train, replay, sweep, plan,
 * calibrate --simulate, validate) loads one, so an option or a variable
 * means the same in every command.
 *
 * The scenario also builds the engines a run uses — simulator, flow
 * network, router and the collective layer's view of it (FsScenarioWorld),
 * or a training step (fs_scenario_train_new, whose worlds come from
 * fs_scenario_engines) — with the scenario's NCCL constants and tuner
 * inputs.  No other module builds a simulator, flow network or router.
 *
 * Ownership: the scenario owns what it loaded; the getters return borrowed
 * pointers valid until fs_scenario_free.  A world borrows its topology and
 * the scenario's NCCL constants and tuner inputs.  Not thread-safe to
 * modify; read-only use from several threads (sweep, plan) is safe.
 */
#pragma once

#include <glib.h>

#include "calib/calibration.h"
#include "catalog/catalog.h"
#include "collrun/coll-topo.h"
#include "coll/nccl-params.h"
#include "coll/tuner.h"
#include "compute/efficiency.h"
#include "core/sim.h"
#include "net/flow.h"
#include "net/route.h"
#include "scenario/step-factor.h"
#include "topo/topo.h"
#include "workload/executor.h"
#include "workload/opgraph.h"

G_BEGIN_DECLS

/* What a command needs beyond the catalog and calibration. */
typedef enum {
  FS_SCENARIO_NEED_NCCL = 1 << 0,        /* NCCL constants and the NCCL_* tuner environment */
  FS_SCENARIO_NEED_EFFICIENCY = 1 << 1,  /* the compute model's efficiency curves */
} FsScenarioNeeds;

/* The command line's inputs, all borrowed and optional (NULL: default). */
typedef struct {
  const char *models_dir;       /* --models DIR: catalog, compute/ curves */
  const char *calibration;      /* --calibration FILE */
  const char *nccl_params;      /* --nccl-params FILE */
  const char *nccl_version;     /* --nccl-version X.Y: models/nccl/nccl-X.Y.yaml (not with nccl_params) */
  const char *topology;         /* TOPO file, or NULL (sweep and plan load theirs per point) */
  const char *const *defines;   /* -D NAME=VALUE, NULL-terminated */
  guint needs;                  /* FsScenarioNeeds */
  /* Tuner choices a command forces over NCCL_ALGO / NCCL_PROTO for every
   * collective (coll's --algo, --proto, --channels): NULL or 0 = free. */
  const char *algo, *proto;
  int channels;
} FsScenarioInputs;

typedef struct FsScenario FsScenario;

/* Loads the scenario: first the tuner inputs (NCCL_* environment, then the
 * forced choices; only with FS_SCENARIO_NEED_NCCL), then the files.
 * Errors (GError, one line with file:line:col where the input has one): a
 * bad NCCL_ALGO, NCCL_PROTO or point-to-point variable (FS_COLL_ERROR_PARSE,
 * naming the variable);
 * an unknown forced algorithm or protocol, channels outside 0-64
 * (G_OPTION_ERROR_BAD_VALUE); the catalog, calibration, curves, step factor, NCCL
 * constants or topology that fails to load.  Cost: the files' loading. */
FsScenario *fs_scenario_load(const FsScenarioInputs *in, GError **error);
void fs_scenario_free(FsScenario *sc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsScenario, fs_scenario_free)

/* The calibrated catalog (mutable for calibrate --simulate, which refits
 * link figures in place). */
FsCatalog *fs_scenario_catalog(const FsScenario *sc);
/* The calibration, or NULL without --calibration. */
const FsCalibration *fs_scenario_calibration(const FsScenario *sc);
/* The topology, or NULL when none was given. */
const FsTopo *fs_scenario_topo(const FsScenario *sc);
/* The efficiency curves (NULL unless FS_SCENARIO_NEED_EFFICIENCY). */
const FsEfficiency *fs_scenario_efficiency(const FsScenario *sc);
/* The NCCL constants (NULL unless FS_SCENARIO_NEED_NCCL). */
const FsNcclParams *fs_scenario_nccl(const FsScenario *sc);
/* The tuner inputs: NCCL_ALGO, NCCL_PROTO, NCCL_COLLNET_ENABLE and the
 * forced choices of FsScenarioInputs. */
const FsCollPrefs *fs_scenario_prefs(const FsScenario *sc);
/* The validated step-time factor of a training step (step-factor.h):
 * models/calibration/training-step.yaml of --models DIR or the data root,
 * loaded with FS_SCENARIO_NEED_NCCL and FS_SCENARIO_NEED_EFFICIENCY; NULL
 * otherwise or when that folder has no such file.  It was fitted with the
 * shipped models, no --calibration: a run with one still gets it. */
const FsStepFactor *fs_scenario_step_factor(const FsScenario *sc);

/* Reads the NCCL_* tuner variables into prefs (initialised here): NCCL_ALGO
 * and NCCL_PROTO as NCCL 2.24+ (fs_coll_prefs_set_nccl_algo), CollNet
 * (SHARP) off unless NCCL_COLLNET_ENABLE=1; checks NCCL_CROSS_NIC and
 * NCCL_PXN_DISABLE, which every router reads (net/route.h).  FALSE with
 * the parse error. */
gboolean fs_scenario_prefs_from_env(FsCollPrefs *prefs, GError **error);

/* The engines of one run: a simulator, a flow network on it, a router over
 * topo and the collective layer's view (coll-topo.h), and the op-graph
 * environment over them with the scenario's NCCL constants and tuner
 * inputs.  Owned by the world; fs_scenario_world_free frees all. */
typedef struct {
  FsSim *sim;
  FsFlowNet *net;
  FsRouter *router;
  FsCollTopoNet *tnet;
  FsOpEnv env;
} FsScenarioWorld;

/* A world over topo (NULL: the scenario's) in flow model `model`, routed
 * with ropt (NULL: NCCL's defaults).  The scenario must outlive it.  Cost:
 * the router's setup, O(nodes + links). */
FsScenarioWorld *fs_scenario_world_new(const FsScenario *sc, const FsTopo *topo, FsNetModel model,
                                       const FsRouteOptions *ropt);
void fs_scenario_world_free(FsScenarioWorld *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsScenarioWorld, fs_scenario_world_free)

/* The engines of a training step (executor.h): worlds as
 * fs_scenario_world_new's with NCCL's default routes, needing no
 * scenario (the step sets its own NCCL constants and tuner inputs), for
 * fs_train_new's callers: fs_scenario_train_new, the planner without a
 * scenario, tests.  Static; thread-safe. */
const FsTrainEngines *fs_scenario_engines(void);

/* A training step of w on topo (NULL: the scenario's) with the scenario's
 * curves, NCCL constants (or nccl, when non-NULL: a topology's own, see
 * fs_scenario_nccl_for_topo) and tuner inputs; opt as fs_train_new (its
 * prefs are replaced by the scenario's).  Needs FS_SCENARIO_NEED_NCCL and
 * FS_SCENARIO_NEED_EFFICIENCY.  Errors: as fs_train_new. */
FsTrain *fs_scenario_train_new(const FsScenario *sc, const FsTopo *topo, const FsNcclParams *nccl,
                               const FsWorkload *w, const FsTrainOptions *opt, GError **error);

/* A topology file with its -D parameters (NULL-terminated NAME=VALUE, or
 * NULL) on the scenario's calibrated catalog: for the runs that load their
 * own (validate's nccl-tests tables; a sweep or plan point).  Caller frees.
 * Errors: as fs_topo_load_file. */
FsTopo *fs_scenario_load_topology(const FsScenario *sc, const char *path,
                                  const char *const *defines, GError **error);

/* NCCL's constants of release version (X.Y, as --nccl-version; what names
 * where it came from in the error), or, when version is NULL, the
 * scenario's own file (--nccl-params / --nccl-version, else the default),
 * loaded again with the NCCL_* point-to-point and channel variables laid
 * over them (fs_nccl_params_apply_env) and the calibration matched against
 * topo's first GPU, as fs_scenario_load does for its own.  Caller frees.
 * Errors: an unknown release (FS_COLL_ERROR), the file's, a bad variable. */
FsNcclParams *fs_scenario_nccl_release(const FsScenario *sc, const char *version, const char *what,
                                       const FsTopo *topo, GError **error);

/* The NCCL_* variables the scenario applied that the environment set when
 * it loaded (with FS_SCENARIO_NEED_NCCL): the tuner's (NCCL_ALGO,
 * NCCL_PROTO, NCCL_COLLNET_ENABLE), the router's (NCCL_CROSS_NIC,
 * NCCL_PXN_DISABLE) and NCCL's constants' (point-to-point chunks and
 * channels, NCCL_MIN/MAX_CTAS, NCCL_MIN/MAX_NCHANNELS), as "NAME=VALUE"
 * words separated by spaces; NULL when none was set.  Borrowed.
 * `fabricsim validate` notes them: its tables were measured without them. */
const char *fs_scenario_env_text(const FsScenario *sc);

/* For a scenario without a topology of its own (sweep, plan: one per
 * point) but with a calibration: NCCL's constants loaded again with the
 * NCCL_* variables and calibrated for topo's first GPU, as fs_scenario_load
 * does for the scenario's topology (fs_scenario_nccl_release; caller frees).  NULL without a calibration (the
 * scenario's constants apply as they are) or with the load's error. */
FsNcclParams *fs_scenario_nccl_for_topo(const FsScenario *sc, const FsTopo *topo, GError **error);

G_END_DECLS
