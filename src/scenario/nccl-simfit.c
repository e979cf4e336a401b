/* nccl-simfit.c — see nccl-simfit.h. */
#include "scenario/nccl-simfit.h"

#include <math.h>
#include <string.h>

#include "calib/calibration.h"
#include "collrun/bench.h"
#include "collrun/coll-topo.h"
#include "net/route.h"

typedef struct {
  const FsScenario *sc;
  FsCatalog *cat;
  const char *topo_path;
  const FsNcclFit *fit;
  const FsNcclParams *np;
  FsCollOp op;
  FsNcclHw hw;
} Sim;

/* Runs every size with parameters p (see the header); times in µs. */
static gboolean predict(void *ctx, const double *p, const uint64_t *sizes, guint n, double *out,
                        GError **error)
{
  Sim *s = ctx;
  for (guint m = 0; s->fit->models[m]; m++)
    if (!fs_catalog_set_link_efficiency(s->cat, s->fit->models[m], p[0], NULL, error))
      return FALSE;
  /* Loaded again each time: its links take the catalog's refitted figures. */
  g_autoptr(FsTopo) topo = fs_scenario_load_topology(s->sc, s->topo_path, NULL, error);
  if (topo == NULL)
    return FALSE;
  /* A shallow copy: only the latency table (an array inside the record)
   * changes; the pointers stay owned by s->np. */
  FsNcclParams np = *s->np;
  for (int a = 0; a < FS_NCCL_ALGO_N; a++)
    for (int q = 0; q < FS_PROTO_N; q++)
      np.hw_lat[s->hw][a][q] *= p[1];
  g_autofree char *count = g_strdup_printf("%u", s->fit->nranks);
  guint ng = 0;
  g_autofree guint *gpus = fs_coll_parse_gpus(topo, count, &ng, error);
  if (gpus == NULL)
    return FALSE;
  g_autoptr(FsScenarioWorld) w = fs_scenario_world_new(s->sc, topo, FS_NET_MAXMIN, NULL);
  g_autoptr(FsComm) comm = fs_coll_comm_from_topo(w->router, gpus, ng, np.max_channels, error);
  FsCollSysInfo sys;
  if (comm == NULL || !fs_coll_sysinfo_from_topo(&np, w->router, comm, &sys, error))
    return FALSE;
  const FsCollPrefs *prefs = fs_scenario_prefs(s->sc);
  fs_coll_prefs_apply_sys(prefs, &sys);
  g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(FsNcclTestsRow));
  for (guint i = 0; i < n; i++) {
    FsCollSweep sw = {.op = s->op, .dtype = FS_COLL_DT_FLOAT, .redop = FS_COLL_REDOP_SUM,
                      .min_bytes = sizes[i], .max_bytes = sizes[i], .step_bytes = 1,
                      .alone = {.exec = FS_COLL_EXEC_AUTO}};
    fs_coll_topo_alone_routes(&sw.alone, w->tnet, TRUE);
    sw.prefs = *prefs;
    g_array_set_size(rows, 0);
    if (!fs_coll_bench(&np, &sys, comm, &sw, w->net, fs_coll_topo_xfer, w->tnet, rows, error))
      return FALSE;
    out[i] = g_array_index(rows, FsNcclTestsRow, 0).oop_time_us;
  }
  return TRUE;
}

gboolean fs_nccl_fit_simulate(FsNcclFit *fit, const FsScenario *sc, const char *topo_path,
                              int max_iter, GError **error)
{
  g_return_val_if_fail(fit != NULL && sc != NULL && topo_path != NULL, FALSE);
  g_return_val_if_fail(fs_scenario_nccl(sc) != NULL, FALSE);
  FsCatalog *cat = fs_scenario_catalog(sc);
  Sim s = {.sc = sc, .cat = cat, .topo_path = topo_path, .fit = fit};
  if (!fs_coll_op_from_name(fit->collective, &s.op)) {
    g_set_error(error, FS_FIT_ERROR, FS_FIT_ERROR_DATA, "unknown collective \"%s\"",
                fit->collective);
    return FALSE;
  }
  s.hw = fit->family == FS_LINK_NVLINK ? FS_NCCL_HW_NVLINK
         : fit->family == FS_LINK_PCIE ? FS_NCCL_HW_PCI
                                       : FS_NCCL_HW_NET;
  s.np = fs_scenario_nccl(sc);
  const FsModel *m0 = fs_catalog_get(cat, fit->models[0]);
  FsFitParam p[2] = {
    {"efficiency", m0 != NULL ? m0->u.link.efficiency : 0.8, 0.05, 1.0},
    {"hw_latency_scale", 1.0, FS_CALIB_HW_LATENCY_SCALE_MIN, FS_CALIB_HW_LATENCY_SCALE_MAX},
  };
  FsFitResult res;
  if (!fs_fit_params(predict, &s, p, 2, fit->sizes, fit->measured_us, fit->n, max_iter, &res,
                     error))
    return FALSE;
  double par[2] = {p[0].value, p[1].value};
  g_free(fit->sim_us);
  fit->sim_us = g_new(double, fit->n);
  if (!predict(&s, par, fit->sizes, fit->n, fit->sim_us, error))
    return FALSE;
  fit->has_sim = TRUE;
  fit->sim_efficiency = par[0];
  fit->sim_latency_scale = par[1];
  fit->sim_rms_rel = res.rms_rel;
  fit->sim_evaluations = res.evaluations + 1;
  fit->sim_converged = res.converged;
  return TRUE;
}
