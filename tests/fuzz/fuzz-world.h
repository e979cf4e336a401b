/* fuzz-world.h — the fixture of the drivers that run what they load
 * (fuzz-trace.c, fuzz-chakra.c): the DGX H100 topology with the shipped
 * catalog, efficiency curves and NCCL parameters, loaded once, and one run
 * of an op graph on a fresh simulator over it.
 *
 * Include it after fuzz-common.h in one driver at a time (its state is
 * static).  A setup failure is a broken promise (fs_fuzz_fail): the shipped
 * data must load.
 */
#pragma once

#include "catalog/catalog.h"
#include "coll/nccl-params.h"
#include "collrun/coll-topo.h"
#include "core/sim.h"
#include "fuzz-common.h"
#include "net/flow.h"
#include "net/route.h"
#include "util/error.h"
#include "workload/opgraph.h"
#include "workload/spec.h"

/* What a loaded trace runs on. */
typedef struct {
  const FsTopo *topo;
  FsEfficiency *eff;
  FsNcclParams *nccl;
} FsFuzzWorld;

/* The world, loaded on the first call and kept for the process. */
static inline const FsFuzzWorld *fs_fuzz_world(void)
{
  static FsFuzzWorld w;
  if (w.topo != NULL)
    return &w;
  GError *error = NULL;
  FsCatalog *cat = fs_catalog_load_default(NULL, &error);
  if (cat == NULL)
    fs_fuzz_fail("cannot load the catalog: %s", error->message);
  g_autofree char *path = g_build_filename(FS_SOURCE_DATA_DIR, "topologies",
                                           "dgx-h100.yaml", NULL);
  w.topo = fs_topo_load_file(path, cat, NULL, &error);
  if (w.topo == NULL)
    fs_fuzz_fail("cannot load %s: %s", path, error->message);
  w.eff = fs_efficiency_load_default(NULL, &error);
  if (w.eff == NULL)
    fs_fuzz_fail("cannot load the efficiency curves: %s", error->message);
  w.nccl = fs_nccl_params_load_default(&error);
  if (w.nccl == NULL)
    fs_fuzz_fail("cannot load the NCCL parameters: %s", error->message);
  return &w;
}

/* Runs graph once on a fresh simulator, flow network and router over the
 * world's topology.  TRUE when the run ends (a run that ends yet sets an
 * error is a broken promise); FALSE with *error set otherwise, for the
 * driver to check (a deadlock report, or a one-line error). */
static inline gboolean fs_fuzz_run_graph(FsOpGraph *graph, GError **error)
{
  const FsFuzzWorld *w = fs_fuzz_world();
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) router = fs_router_new(w->topo, net, NULL);
  g_autoptr(FsCollTopoNet) tnet = fs_coll_topo_net_new(router);
  FsOpEnv env = {sim, net, router, tnet, w->nccl, NULL, FS_COLL_EXEC_STEPS};
  GError *local = NULL;
  if (fs_opgraph_run(graph, &env, &local)) {
    if (local != NULL)
      fs_fuzz_fail("the run succeeded but set an error: %s", local->message);
    return TRUE;
  }
  g_propagate_error(error, local);
  return FALSE;
}
