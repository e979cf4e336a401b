/* fuzz-trace.c — libFuzzer driver for the replay trace loader
 * (src/workload/replay.c) on the DGX H100 topology.
 *
 * The bytes go to fs_replay_load_string named "fuzz.json".  Promises
 * checked: a rejection is one line in FS_WORKLOAD_ERROR starting
 * "fuzz.json:LINE:COL: "; an accepted trace has 1 to 8 ranks, at least one
 * op, and per-rank tables of that size.  Traces of at most 16 ops are then
 * run as `fabricsim replay` runs them: the run ends, or fails with a
 * deadlock report naming ranks and ops (several lines: one per stuck op)
 * or a one-line error.  Corpus: tests/data/replay/.
 */
#include "catalog/catalog.h"
#include "coll/nccl-params.h"
#include "collrun/coll-topo.h"
#include "core/sim.h"
#include "fuzz-common.h"
#include "net/flow.h"
#include "net/route.h"
#include "util/error.h"
#include "workload/replay.h"
#include "workload/spec.h"

#define INPUT_NAME "fuzz.json"
#define MAX_RUN_OPS 16

static const FsTopo *topo;
static FsEfficiency *eff;
static FsNcclParams *nccl;

static void setup(void)
{
  if (topo != NULL)
    return;
  GError *error = NULL;
  FsCatalog *cat = fs_catalog_load_default(NULL, &error);
  if (cat == NULL)
    fs_fuzz_fail("cannot load the catalog: %s", error->message);
  g_autofree char *path = g_build_filename(FS_SOURCE_DATA_DIR, "topologies",
                                           "dgx-h100.yaml", NULL);
  topo = fs_topo_load_file(path, cat, NULL, &error);
  if (topo == NULL)
    fs_fuzz_fail("cannot load %s: %s", path, error->message);
  eff = fs_efficiency_load_default(NULL, &error);
  if (eff == NULL)
    fs_fuzz_fail("cannot load the efficiency curves: %s", error->message);
  nccl = fs_nccl_params_load_default(&error);
  if (nccl == NULL)
    fs_fuzz_fail("cannot load the NCCL parameters: %s", error->message);
}

static void run(FsReplay *rp)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) router = fs_router_new(topo, net, NULL);
  g_autoptr(FsCollTopoNet) tnet = fs_coll_topo_net_new(router);
  FsOpEnv env = {sim, net, router, tnet, nccl, NULL, FS_COLL_EXEC_STEPS};
  GError *error = NULL;
  if (fs_opgraph_run(rp->graph, &env, &error)) {
    if (error != NULL)
      fs_fuzz_fail("the run succeeded but set an error: %s", error->message);
    return;
  }
  /* A deadlock report lists the stuck ops one per line; other failures
   * are one line. */
  if (g_error_matches(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_DEADLOCK)) {
    if (strstr(error->message, "rank ") == NULL || strstr(error->message, " op ") == NULL)
      fs_fuzz_fail("a deadlock report names no rank or op: %s", error->message);
  } else {
    fs_fuzz_check_one_line(error);
  }
  g_error_free(error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  setup();
  g_autofree char *text = fs_fuzz_text(data, size);
  GError *error = NULL;
  FsReplay *rp = fs_replay_load_string(text, INPUT_NAME, topo, eff, &error);
  if (rp == NULL) {
    fs_fuzz_rejected(error, INPUT_NAME, FS_WORKLOAD_ERROR, 0, "trace");
    return 0;
  }
  if (error != NULL)
    fs_fuzz_fail("the load succeeded but set an error: %s", error->message);
  guint ngpu;
  fs_topo_gpus(topo, &ngpu);
  if (rp->n_ranks < 1 || rp->n_ranks > ngpu || rp->rank_ops == NULL ||
      rp->rank_ops->len != rp->n_ranks || rp->compute_stream == NULL)
    fs_fuzz_fail("an accepted trace has %u ranks and %u rank tables", rp->n_ranks,
                 rp->rank_ops ? rp->rank_ops->len : 0);
  if (fs_opgraph_n_ops(rp->graph) == 0)
    fs_fuzz_fail("an accepted trace has no op");
  if (fs_opgraph_n_ops(rp->graph) <= MAX_RUN_OPS)
    run(rp);
  fs_replay_free(rp);
  return 0;
}
