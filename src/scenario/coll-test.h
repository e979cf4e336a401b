/* coll-test.h — one `fabricsim coll` run: nccl-tests' sweep of sizes for
 * one collective or each (-o all), datatypes and reduction ops, on the
 * scenario's topology with its NCCL constants and tuner inputs.  The
 * outputs (nccl-tests text, JSON, CSV, trace) are report/coll.h.
 *
 * Ownership: an FsCollTest owns its world, communicator, rows and reasons;
 * it borrows the scenario, which must outlive it.
 */
#pragma once

#include <glib.h>

#include "collrun/bench.h"
#include "scenario/scenario.h"

G_BEGIN_DECLS

/* What runs: collectives, reduction op and datatypes. */
typedef struct {
  FsCollOp ops[FS_COLL_N_OPS]; /* the collectives, each a block of its own */
  guint n_ops;
  const char *redop;           /* NULL (sum), "all", or a reduction op's name (borrowed) */
  FsCollDtype dtypes[FS_COLL_N_DTYPES];
  guint n_dtypes;
} FsCollSelection;

/* Parses -o, --redop and -d (each NULL when not given) as nccl-tests: -o
 * is a collective, "all" (every collective, in the catalog's order), or
 * else a reduction op (-o sum|prod|max|min|avg; --redop also takes "all");
 * -d a datatype or "all".  FALSE with G_OPTION_ERROR_BAD_VALUE naming the
 * unknown name.  The strings are borrowed by sel. */
gboolean fs_coll_selection_parse(FsCollSelection *sel, const char *op, const char *redop,
                                 const char *dtype, GError **error);

/* nccl-tests' launch from coll's flags: ngpus (-g, a count as text, or
 * NULL), threads (-t, 0 = not given), graph (-G, 0 = none), nprocs
 * (mpirun -np, 0 = not given), and whether a --gpus list names the GPUs.
 * Fills *l (coll/launch.h) and *ranks: the GPU count to select, P x t x g
 * with P = nprocs (1 when only -g or -t is given), or NULL for every GPU
 * (no -g, -t, --nprocs: one process per GPU) or for the list (which
 * nprocs may not accompany).  Caller frees *ranks.  FALSE with a usage
 * error (G_OPTION_ERROR) naming the option for a bad value. */
gboolean fs_coll_launch_from_flags(const char *ngpus, gint threads, gint graph, gint nprocs,
                                   gboolean have_list, FsCollLaunch *l, char **ranks,
                                   GError **error);

/* Parses the sizes -b, -e, -f, -i (NULL / 0 when not given; defaults 32M,
 * 32M or -b, 1M) into sw's sizes, checking that the step grows and that at
 * most $FABRICSIM_MAX_SIZES (default 10,000) sizes run.  FALSE with
 * G_OPTION_ERROR_BAD_VALUE, the message naming the options. */
gboolean fs_coll_sizes_parse(FsCollSweep *sw, const char *min, const char *max, gint64 factor,
                             const char *step, GError **error);

typedef struct {
  FsScenarioWorld *world;
  guint *gpus;                 /* topology nodes of the ranks */
  guint n;
  FsComm *comm;
  FsCollSysInfo sys;           /* with the scenario's CollNet setting applied */
  FsCollSweep sweep;           /* the last collective's sweep (sizes, prefs) */
  FsCollSelection sel;
  GArray *rows;                /* FsNcclTestsRow: each collective's rows in turn */
  guint ends[FS_COLL_N_OPS];   /* the end of collective o's rows */
  double avgs[FS_COLL_N_OPS];  /* its average bus bandwidth */
  char *skipped[FS_COLL_N_OPS];/* why collective o did not run (-o all), or NULL */
} FsCollTest;

/* Runs sel's sweeps (sizes, root and exactness from sw; tuner inputs from
 * the scenario) on the GPUs named by gpus (NULL: all; a count, or a list
 * of names or indices).  With several collectives, one that cannot run on
 * the communicator (FS_COLL_ERROR_UNSUPPORTED) is skipped with its reason;
 * when none can run, or one collective alone cannot, that error.  Other
 * errors: the GPU list, a root that is not a rank (G_OPTION_ERROR_BAD_VALUE),
 * the communicator, a run.  Cost: one simulation per size. */
FsCollTest *fs_coll_test_new(const FsScenario *sc, const FsCollSelection *sel, const FsCollSweep *sw,
                           const char *gpus, GError **error);
void fs_coll_test_free(FsCollTest *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollTest, fs_coll_test_free)

G_END_DECLS
