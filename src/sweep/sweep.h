/* sweep.h — what-if sweeps: a spec (YAML) expands into an ordered list of
 * points; each point runs one simulation through a table of point kinds
 * (train, coll, p2p) and yields one row of named result columns.
 *
 * Spec format: workloads/sweeps/README.md.  A point is a list of settings
 * (key → value, both strings) merged from the spec's `set:`, one entry of
 * `list:` and one combination of `grid:` (later wins).  The point order is
 * list-major, then the grid's keys in file order with the last key varying
 * fastest; it depends only on the spec text.
 *
 * Ownership: FsSweepSpec owns its axes and values; points are read by
 * index.  FsSweepResult owns its strings (fs_sweep_result_clear).
 * Errors: FS_SWEEP_ERROR (spec content, with file:line:col), FS_YAML_ERROR
 * (syntax), the errors of each kind's run (stored in the result's error
 * text: one point's failure never stops the sweep).
 * Thread safety: a spec is read-only after loading; fs_sweep_point_run may
 * run on many threads at once with one shared FsSweepEnv.
 */
#pragma once

#include <glib.h>

#include "catalog/catalog.h"
#include "coll/nccl-params.h"
#include "compute/efficiency.h"
#include "scenario/scenario.h"
#include "topo/topo.h"
#include "util/schema.h"

G_BEGIN_DECLS

#define FS_SWEEP_ERROR (fs_sweep_error_quark())
GQuark fs_sweep_error_quark(void);

typedef enum {
  FS_SWEEP_ERROR_SPEC,     /* the spec is wrong (file:line:col) */
  FS_SWEEP_ERROR_RESUME,   /* the output to resume was written by another spec */
} FsSweepError;

/* The number of points a spec may expand to (the sweep guard), and the
 * guard in force: $FABRICSIM_MAX_POINTS (1 to 2^32 − 1) or the default. */
#define FS_SWEEP_MAX_POINTS 10000000u
guint64 fs_sweep_max_points(void);

typedef struct FsSweepSpec FsSweepSpec;

/* Shared, read-only inputs of every point: the catalog, the compute
 * model's curves, NCCL's constants and the topologies already loaded
 * (a cache filled before points run, by fs_sweep_env_prepare); and a
 * thread-safe memo of collectives timed alone (workload/collmemo.h), so
 * that points measure each distinct collective once — a hit returns
 * exactly what a new measurement would, so results do not depend on the
 * order points run in. */
typedef struct FsSweepEnv FsSweepEnv;

/* One point's outcome.  values[i] is column i of the kind's columns
 * (NULL when the point failed).  The runner fills index. */
typedef struct {
  guint index;
  gboolean ok;
  char *error;     /* one line, when !ok */
  char **values;   /* NULL-terminated, kind's column count */
} FsSweepResult;

void fs_sweep_result_clear(FsSweepResult *r);

typedef enum { FS_COL_NUM, FS_COL_STR } FsSweepColType;

typedef struct {
  const char *name;
  FsSweepColType type;
} FsSweepColumn;

/* A point kind: its settings and result columns, and how it runs.
 * accepts(key) says whether a setting belongs to the kind (the common
 * keys topology, workload, model and D.<name> are handled for all). */
typedef struct {
  const char *name;
  const char *summary;
  const FsSweepColumn *columns;  /* terminated by a NULL name */
  gboolean (*accepts)(const char *key);
  gboolean (*run)(const FsSweepEnv *env, const FsSweepSpec *spec, guint point,
                  char **values, GError **error);
} FsSweepKind;

/* The kinds, NULL-terminated (kinds.c). */
extern const FsSweepKind *const fs_sweep_kinds[];

/* Appends to out one entry per kind of point: its name, summary and the
 * columns of its rows (what `fabricsim sweep --list` prints). */
void fs_sweep_kinds_describe(GString *out);
const FsSweepKind *fs_sweep_kind_find(const char *name);
guint fs_sweep_kind_n_columns(const FsSweepKind *k);

/* Loading.  Relative topology and workload paths resolve against the
 * spec's folder first, then the working directory.  Cost: the product of
 * the axes (the expansion is implicit: points are computed by index). */
FsSweepSpec *fs_sweep_spec_load_file(const char *path, GError **error);
/* The declared top-level keys of a sweep spec (util/schema.h), named as
 * workloads/sweeps/README.md's markers name them ("sweep.spec"); *n
 * receives the count.  Static, borrowed. */
const FsSchemaEntry *fs_sweep_spec_schemas(guint *n);

FsSweepSpec *fs_sweep_spec_load_string(const char *text, const char *name, const char *dir,
                                       GError **error);
void fs_sweep_spec_free(FsSweepSpec *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsSweepSpec, fs_sweep_spec_free)

const char *fs_sweep_spec_name(const FsSweepSpec *s);
const FsSweepKind *fs_sweep_spec_kind(const FsSweepSpec *s);
guint fs_sweep_spec_n_points(const FsSweepSpec *s);
/* The keys that vary (list and grid keys, in first-seen order): the
 * parameter columns of the output. */
guint fs_sweep_spec_n_axes(const FsSweepSpec *s);
const char *fs_sweep_spec_axis(const FsSweepSpec *s, guint i);
/* The value of key at point (merged set/list/grid; borrowed), or NULL. */
const char *fs_sweep_point_get(const FsSweepSpec *s, guint point, const char *key);
/* Every setting of a point in a fixed order (set keys, then axes):
 * keys[i] → values[i], borrowed, NULL-terminated arrays of n entries. */
guint fs_sweep_point_settings(const FsSweepSpec *s, guint point, const char **keys,
                              const char **values, guint max);
/* The resolved path of the point's topology / workload (newly allocated),
 * or NULL when none is set. */
char *fs_sweep_point_path(const FsSweepSpec *s, guint point, const char *key);

/* Environment: a scenario (scenario.h) loaded from in (NULL: every
 * default; its topology is ignored, each point loads its own, and it
 * always loads the curves and NCCL constants): --models, --calibration,
 * NCCL_ALGO / NCCL_PROTO / NCCL_COLLNET_ENABLE mean what they mean in
 * every command.  Errors: as fs_scenario_load. */
FsSweepEnv *fs_sweep_env_new(const FsScenarioInputs *in, GError **error);
void fs_sweep_env_free(FsSweepEnv *env);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsSweepEnv, fs_sweep_env_free)
/* Loads (once) every topology the points first..n_points use, with
 * stride, so that points share them read-only.  A topology that fails to
 * load is remembered with its error; its points fail with it. */
void fs_sweep_env_prepare(FsSweepEnv *env, const FsSweepSpec *s, guint first, guint stride);
const FsCatalog *fs_sweep_env_catalog(const FsSweepEnv *env);
const FsEfficiency *fs_sweep_env_efficiency(const FsSweepEnv *env);
const FsNcclParams *fs_sweep_env_nccl(const FsSweepEnv *env);
/* The point's topology (borrowed from the environment), or NULL with the
 * load's error. */
const FsTopo *fs_sweep_env_topo(const FsSweepEnv *env, const FsSweepSpec *s, guint point,
                                GError **error);

/* Runs one point: fills r (index, ok, values or error).  Thread-safe. */
void fs_sweep_point_run(const FsSweepEnv *env, const FsSweepSpec *s, guint point,
                        FsSweepResult *r);

/* Running many points on a thread pool.  Results reach on_result in the
 * calling thread, in completion order (not point order); poll (may be
 * NULL) is called from the same thread at least every 20 ms while waiting
 * and may feed results from elsewhere (MPI).  The points run are
 * first, first + stride, … below n_points.  threads 0 = all cores.
 * After fs_sim_request_interrupt no point starts and points cut short are
 * not delivered; if any point was left out, FALSE with
 * FS_RUNTIME_ERROR_INTERRUPTED (the delivered ones stand). */
typedef void (*FsSweepResultFn)(FsSweepResult *r, void *ud);  /* takes r's contents */
typedef void (*FsSweepPollFn)(void *ud);
gboolean fs_sweep_run(const FsSweepEnv *env, const FsSweepSpec *s, guint first, guint stride,
                      guint threads, FsSweepResultFn on_result, FsSweepPollFn poll, void *ud,
                      GError **error);

/* The same pool for any list of independent tasks (the planner's
 * candidate designs): run(task, ud) runs on a worker thread and returns
 * its result (owned by the caller of run_tasks until done takes it);
 * done(task, result, ud) is called in the calling thread, in completion
 * order; poll as above.  Tasks first, first + stride, … below n run;
 * threads 0 = all cores.  A run that returns NULL was cut short by an
 * interrupt (fs_sim_request_interrupt); after an interrupt no new task
 * starts.  Errors: a pool that cannot start; FS_RUNTIME_ERROR_INTERRUPTED
 * when any task was dropped (the finished ones were delivered). */
typedef void *(*FsSweepTaskFn)(guint task, void *ud);
typedef void (*FsSweepTaskDoneFn)(guint task, void *result, void *ud);
gboolean fs_sweep_run_tasks(guint first, guint stride, guint n, guint threads, FsSweepTaskFn run,
                            FsSweepTaskDoneFn done, FsSweepPollFn poll, void *ud, GError **error);

G_END_DECLS
