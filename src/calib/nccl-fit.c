/* nccl-fit.c — see nccl-fit.h. */
#include "calib/nccl-fit.h"

#include "calib/calibration.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void fs_nccl_fit_free(FsNcclFit *fit)
{
  if (fit == NULL)
    return;
  g_free(fit->log);
  g_free(fit->collective);
  g_free(fit->sizes);
  g_free(fit->measured_us);
  g_free(fit->measured_busbw);
  g_free(fit->fitted_us);
  g_free(fit->sim_us);
  if (fit->dropped != NULL)
    g_array_free(fit->dropped, TRUE);
  g_strfreev(fit->models);
  g_free(fit);
}

/* nccl-tests' busbw factor and NCCL's step count per collective. */
static void coll_factors(const char *coll, guint n, double *factor, guint *nsteps)
{
  double nn = n;
  if (strcmp(coll, "all_reduce") == 0) {
    *factor = 2 * (nn - 1) / nn;
    *nsteps = 2 * (n - 1);
  } else if (strcmp(coll, "all_gather") == 0 || strcmp(coll, "reduce_scatter") == 0 ||
             strcmp(coll, "alltoall") == 0 || strcmp(coll, "gather") == 0 ||
             strcmp(coll, "scatter") == 0) {
    *factor = (nn - 1) / nn;
    *nsteps = n - 1;
  } else if (strcmp(coll, "sendrecv") == 0) {
    *factor = 1;
    *nsteps = 1;
  } else {
    *factor = 1;
    *nsteps = n > 1 ? n - 1 : 1;
  }
  if (*nsteps == 0)
    *nsteps = 1;
}

typedef struct {
  uint64_t size;
  double time, busbw;
} Sample;

static int sample_cmp(const void *a, const void *b)
{
  const Sample *x = a, *y = b;
  if (x->size != y->size)
    return x->size < y->size ? -1 : 1;
  return (x->time > y->time) - (x->time < y->time);
}

/* Adds the distinct link model names of family on links adjacent to node. */
static void adjacent_family(const FsTopo *topo, guint node, FsLinkFamily family, double *raw,
                            guint *links, GPtrArray *models)
{
  guint na = 0;
  const FsTopoAdj *adj = fs_topo_adj(topo, node, &na);
  for (guint i = 0; i < na; i++) {
    const FsTopoLink *l = fs_topo_link(topo, adj[i].link);
    if (l->model->u.link.family != family)
      continue;
    *raw += l->model->u.link.raw_bandwidth * l->count;
    *links += l->count;
    if (!g_ptr_array_find_with_equal_func(models, l->model->name, g_str_equal, NULL))
      g_ptr_array_add(models, (gpointer)l->model->name);
  }
}

/* Decides the family the collective's bandwidth goes through and its raw
 * bandwidth per GPU (nccl-fit.h, step 2). */
static gboolean link_figures(FsNcclFit *fit, const FsTopo *topo, GError **error)
{
  guint ng = 0;
  const guint *gpus = fs_topo_gpus(topo, &ng);
  if (ng < fit->nranks) {
    g_set_error(error, FS_FIT_ERROR, FS_FIT_ERROR_DATA,
                "the log has %u ranks but topology \"%s\" has %u GPUs", fit->nranks,
                fs_topo_name(topo), ng);
    return FALSE;
  }
  g_autoptr(GPtrArray) models = g_ptr_array_new();
  /* GPUs per host among the ranks. */
  guint nh = fs_topo_n_hosts(topo);
  guint *per_host = g_new0(guint, nh + 1);
  guint hosts = 0;
  for (guint r = 0; r < fit->nranks; r++) {
    int h = fs_topo_node(topo, gpus[r])->host;
    guint hi = h < 0 ? nh : (guint)h;
    if (per_host[hi]++ == 0)
      hosts++;
  }
  fit->nhosts = hosts;
  double raw = 0;
  guint links = 0;
  if (hosts > 1) {
    /* Network links at the NICs of each host, per GPU of the
     * communicator; the slowest host decides. */
    double worst = INFINITY;
    for (guint h = 0; h < nh; h++) {
      if (per_host[h] == 0)
        continue;
      double hraw = 0;
      guint hl = 0;
      guint nn = 0;
      const guint *nodes = fs_topo_host_nodes(topo, h, &nn);
      for (guint i = 0; i < nn; i++) {
        if (fs_topo_node(topo, nodes[i])->kind != FS_NODE_NIC)
          continue;
        adjacent_family(topo, nodes[i], FS_LINK_INFINIBAND, &hraw, &hl, models);
        adjacent_family(topo, nodes[i], FS_LINK_ETHERNET, &hraw, &hl, models);
      }
      if (hraw / per_host[h] < worst) {
        worst = hraw / per_host[h];
        links = (hl + per_host[h] - 1) / per_host[h];
      }
    }
    raw = isfinite(worst) ? worst : 0;
    fit->family = FS_LINK_INFINIBAND;
    if (models->len > 0) {
      const FsModel *m = fs_catalog_get(fs_topo_catalog(topo), g_ptr_array_index(models, 0));
      if (m != NULL)
        fit->family = m->u.link.family;
    }
  } else {
    adjacent_family(topo, gpus[0], FS_LINK_NVLINK, &raw, &links, models);
    fit->family = FS_LINK_NVLINK;
    if (links == 0) {
      adjacent_family(topo, gpus[0], FS_LINK_PCIE, &raw, &links, models);
      fit->family = FS_LINK_PCIE;
    }
  }
  g_free(per_host);
  if (raw <= 0 || models->len == 0) {
    g_set_error(error, FS_FIT_ERROR, FS_FIT_ERROR_DATA,
                "topology \"%s\": the %u ranks' GPUs have no %s link to fit", fs_topo_name(topo),
                fit->nranks, fs_link_family_name(fit->family));
    return FALSE;
  }
  fit->raw_per_gpu = raw;
  fit->links_per_gpu = links;
  fit->models = g_new0(char *, models->len + 1);
  for (guint i = 0; i < models->len; i++)
    fit->models[i] = g_strdup(g_ptr_array_index(models, i));
  return TRUE;
}

/* See nccl-fit.h.  Also: collective NULL takes the name the first log gives (none: an
 * FS_NCCL_LOG_ERROR_PARSE error); rows without figures for the chosen in-place or out-of-place
 * side, or with time 0, go to fit->dropped.  Fails with FS_FIT_ERROR_DATA when the tests ran on
 * different or unknown rank counts, and with FS_NCCL_LOG_ERROR_PARSE when a log's host count
 * differs from the one topo gives the ranks; fit and link errors are prefixed with the log's
 * file and line.  Returns a new fit, which the caller frees. */
FsNcclFit *fs_nccl_fit_tests(const FsNcclLogTest *const *tests, const char *const *files, guint n,
                             const FsTopo *topo, const char *collective, gboolean in_place,
                             double base_us, GError **error)
{
  g_return_val_if_fail(tests != NULL && n > 0 && topo != NULL, NULL);
  const char *coll = collective != NULL ? collective : tests[0]->collective;
  if (coll == NULL) {
    g_set_error(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_PARSE,
                "%s:%d:1: the log does not name its collective; give it with --op", files[0],
                MAX(tests[0]->line, 1));
    return NULL;
  }
  for (guint i = 1; i < n; i++)
    if (tests[i]->nranks != tests[0]->nranks) {
      g_set_error(error, FS_FIT_ERROR, FS_FIT_ERROR_DATA,
                  "%s and %s ran on %u and %u ranks; fit them separately", files[0], files[i],
                  tests[0]->nranks, tests[i]->nranks);
      return NULL;
    }
  g_autoptr(FsNcclFit) fit = g_new0(FsNcclFit, 1);
  fit->log = g_strdup(files[0]);
  fit->collective = g_strdup(coll);
  fit->nranks = tests[0]->nranks;
  fit->in_place = in_place;
  fit->base_us = base_us;
  fit->dropped = g_array_new(FALSE, FALSE, sizeof(FsNcclLogDrop));
  if (fit->nranks == 0) {
    g_set_error(error, FS_FIT_ERROR, FS_FIT_ERROR_DATA,
                "%s: the log says neither its devices nor nThread/nGpus: rank count unknown",
                files[0]);
    return NULL;
  }
  coll_factors(coll, fit->nranks, &fit->busbw_factor, &fit->nsteps);

  /* Samples from every test, then the median time per size. */
  GArray *all = g_array_new(FALSE, FALSE, sizeof(Sample));
  for (guint t = 0; t < n; t++)
    for (guint i = 0; i < tests[t]->rows->len; i++) {
      const FsNcclLogRow *r = &g_array_index(tests[t]->rows, FsNcclLogRow, i);
      gboolean has = in_place ? r->has_ip : r->has_oop;
      Sample s = {r->size, in_place ? r->ip_time_us : r->oop_time_us,
                  in_place ? r->ip_busbw : r->oop_busbw};
      if (has && s.time > 0) {
        g_array_append_val(all, s);
        continue;
      }
      FsNcclLogDrop d = {files[t], r->line,
                         !has ? (in_place ? "no in-place figures" : "no out-of-place figures")
                              : (in_place ? "in-place time is 0" : "out-of-place time is 0")};
      g_array_append_val(fit->dropped, d);
    }
  g_array_sort(all, sample_cmp);
  fit->sizes = g_new(uint64_t, all->len + 1);
  fit->measured_us = g_new(double, all->len + 1);
  fit->measured_busbw = g_new(double, all->len + 1);
  for (guint i = 0; i < all->len;) {
    guint j = i;
    while (j < all->len && g_array_index(all, Sample, j).size == g_array_index(all, Sample, i).size)
      j++;
    const Sample *mid = &g_array_index(all, Sample, i + (j - i) / 2);
    fit->sizes[fit->n] = mid->size;
    fit->measured_us[fit->n] = mid->time;
    fit->measured_busbw[fit->n] = mid->busbw;
    fit->n++;
    i = j;
  }
  g_array_free(all, TRUE);
  if (!fs_fit_regimes(fit->sizes, fit->measured_us, fit->n, FS_FIT_MAX_REGIMES, fit->regimes,
                      &fit->n_regimes, error)) {
    g_prefix_error(error, "%s:%d:1: ", files[0], MAX(tests[0]->line, 1));
    return NULL;
  }
  fit->fitted_us = g_new(double, fit->n);
  for (guint i = 0; i < fit->n; i++) {
    fit->fitted_us[i] = fs_fit_regimes_eval(fit->regimes, fit->n_regimes, fit->sizes, fit->sizes[i]);
    fit->peak_busbw = MAX(fit->peak_busbw, fit->measured_busbw[i] * 1e9);
  }
  if (!link_figures(fit, topo, error)) {
    g_prefix_error(error, "%s:%d:1: ", files[0], MAX(tests[0]->ranks_line, 1));
    return NULL;
  }
  /* The hosts the log ran on against the ones the topology gives its ranks. */
  for (guint i = 0; i < n; i++)
    if (tests[i]->nhosts > 0 && tests[i]->nhosts != fit->nhosts) {
      g_set_error(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_PARSE,
                  "%s:%d:1: the log ran on %u host%s, but topology \"%s\" puts its %u ranks on "
                  "%u (rank r on GPU r); give a topology of the machine measured", files[i],
                  MAX(tests[i]->hosts_line, 1), tests[i]->nhosts, tests[i]->nhosts == 1 ? "" : "s",
                  fs_topo_name(topo), fit->nranks, fit->nhosts);
      return NULL;
    }
  fit->efficiency = fit->peak_busbw / fit->raw_per_gpu;
  fit->step_latency_us = MAX(0, (fit->regimes[0].alpha_us - base_us) / fit->nsteps);
  return g_steal_pointer(&fit);
}

FsNcclFit *fs_nccl_fit_test(const FsNcclLogTest *test, const char *log_file, const FsTopo *topo,
                            const char *collective, gboolean in_place, double base_us,
                            GError **error)
{
  return fs_nccl_fit_tests(&test, &log_file, 1, topo, collective, in_place, base_us, error);
}

/* ---- JSON ------------------------------------------------------------------- */

static void set(json_t *o, const char *k, json_t *v) { json_object_set_new(o, k, v); }

/* One entry of the "tests" array of the fitted section: f's identity, link figures, one object
 * per regime (its size range, α, β, errors) and one per merged size (measured against fitted
 * time), plus a "simulated" object when f has a simulator fit.  Returns a new reference. */
static json_t *fit_json(const FsNcclFit *f)
{
  json_t *o = json_object();
  set(o, "log", json_string(f->log));
  set(o, "collective", json_string(f->collective));
  set(o, "ranks", json_integer(f->nranks));
  set(o, "hosts", json_integer(f->nhosts));
  set(o, "in_place", json_boolean(f->in_place));
  set(o, "busbw_factor", json_real(f->busbw_factor));
  set(o, "nsteps", json_integer(f->nsteps));
  set(o, "family", json_string(fs_link_family_name(f->family)));
  json_t *models = json_array();
  for (guint i = 0; f->models[i]; i++)
    json_array_append_new(models, json_string(f->models[i]));
  set(o, "models", models);
  set(o, "links_per_gpu", json_integer(f->links_per_gpu));
  set(o, "raw_per_gpu_GBps", json_real(f->raw_per_gpu / 1e9));
  set(o, "peak_busbw_GBps", json_real(f->peak_busbw / 1e9));
  set(o, "efficiency", json_real(f->efficiency));
  set(o, "base_latency_us", json_real(f->base_us));
  set(o, "step_latency_us", json_real(f->step_latency_us));
  json_t *regs = json_array();
  for (guint i = 0; i < f->n_regimes; i++) {
    const FsAlphaBeta *r = &f->regimes[i];
    json_t *ro = json_object();
    set(ro, "min_size_bytes", json_integer((json_int_t)f->sizes[r->first]));
    set(ro, "max_size_bytes", json_integer((json_int_t)f->sizes[r->last]));
    set(ro, "alpha_us", json_real(r->alpha_us));
    set(ro, "beta_GBps", isfinite(r->beta) ? json_real(r->beta / 1e9) : json_null());
    set(ro, "busbw_GBps",
        isfinite(r->beta) ? json_real(r->beta / 1e9 * f->busbw_factor) : json_null());
    const FsAlphaBeta *big = &f->regimes[f->n_regimes - 1];
    set(ro, "bw_fraction",
        isfinite(r->beta) && isfinite(big->beta) ? json_real(r->beta / big->beta) : json_null());
    set(ro, "rms_error_pct", json_real(100 * r->rms_rel));
    set(ro, "max_error_pct", json_real(100 * r->max_rel));
    json_array_append_new(regs, ro);
  }
  set(o, "regimes", regs);
  json_t *rows = json_array();
  for (guint i = 0; i < f->n; i++) {
    json_t *ro = json_object();
    set(ro, "size_bytes", json_integer((json_int_t)f->sizes[i]));
    set(ro, "measured_us", json_real(f->measured_us[i]));
    set(ro, "fitted_us", json_real(f->fitted_us[i]));
    set(ro, "error_pct", json_real(100 * (f->fitted_us[i] / f->measured_us[i] - 1)));
    json_array_append_new(rows, ro);
  }
  set(o, "rows", rows);
  if (f->has_sim) {
    json_t *so = json_object();
    set(so, "efficiency", json_real(f->sim_efficiency));
    set(so, "hw_latency_scale", json_real(f->sim_latency_scale));
    set(so, "rms_error_pct", json_real(100 * f->sim_rms_rel));
    set(so, "evaluations", json_integer(f->sim_evaluations));
    set(so, "converged", json_boolean(f->sim_converged));
    json_t *pr = json_array();
    for (guint i = 0; i < f->n; i++)
      json_array_append_new(pr, json_real(f->sim_us[i]));
    set(so, "predicted_us", pr);
    set(o, "simulated", so);
  }
  return o;
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, guint n)
{
  qsort(v, n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* See nccl-fit.h.  Also: the families come in enum order and a family's models are listed
 * once each, in the order first met; a test with no measured bus bandwidth counts for none.
 * A fit's efficiency is its simulator-fitted one when it has one, else the busbw ratio. */
json_t *fs_nccl_fit_section(FsNcclFit *const *fits, guint n, const char *topology)
{
  json_t *o = json_object();
  set(o, "method", json_string("nccl-tests"));
  set(o, "topology", json_string(topology != NULL ? topology : ""));
  json_t *tests = json_array();
  for (guint i = 0; i < n; i++)
    json_array_append_new(tests, fit_json(fits[i]));
  set(o, "tests", tests);
  /* Per family, in enum order (deterministic): medians over its tests. */
  json_t *links = json_object();
  double *eff = g_new(double, n + 1), *lat = g_new(double, n + 1), *scl = g_new(double, n + 1);
  for (int fam = 0; fam < FS_LINK_N_FAMILIES; fam++) {
    guint k = 0, ks = 0;
    json_t *models = json_array();
    for (guint i = 0; i < n; i++) {
      if ((int)fits[i]->family != fam || fits[i]->peak_busbw <= 0)
        continue;
      /* The simulator-fitted efficiency when there is one: it is what
       * makes the simulator match; the busbw ratio is the α-β estimate. */
      eff[k] = fits[i]->has_sim ? fits[i]->sim_efficiency : fits[i]->efficiency;
      lat[k] = fits[i]->step_latency_us;
      k++;
      if (fits[i]->has_sim)
        scl[ks++] = fits[i]->sim_latency_scale;
      for (guint m = 0; fits[i]->models[m]; m++) {
        gboolean seen = FALSE;
        for (size_t j = 0; j < json_array_size(models); j++)
          seen |= strcmp(json_string_value(json_array_get(models, j)), fits[i]->models[m]) == 0;
        if (!seen)
          json_array_append_new(models, json_string(fits[i]->models[m]));
      }
    }
    if (k == 0) {
      json_decref(models);
      continue;
    }
    json_t *fo = json_object();
    set(fo, "efficiency", json_real(median(eff, k)));
    set(fo, "step_latency_us", json_real(median(lat, k)));
    if (ks > 0)
      set(fo, "hw_latency_scale", json_real(median(scl, ks)));
    set(fo, "models", models);
    set(fo, "tests", json_integer(k));
    set(links, fs_link_family_name((FsLinkFamily)fam), fo);
  }
  g_free(eff);
  g_free(lat);
  g_free(scl);
  set(o, "links", links);
  return o;
}

/* The base latency for a collective: base_override when >= 0, else the
 * matching one-rank floor of the calibration, else 0. */
static double base_for(double base_override, const FsCalibration *cal, const char *coll)
{
  if (base_override >= 0)
    return base_override;
  if (cal == NULL || coll == NULL)
    return 0;
  for (int op = 0; op < FS_CALIB_NCCL_N; op++)
    if (strcmp(fs_calib_nccl_op_name((FsCalibNcclOp)op), coll) == 0 && cal->nccl[op].present &&
        cal->nccl[op].ranks == 1)
      return cal->nccl[op].latency_floor_us;
  return 0;
}

GPtrArray *fs_nccl_fit_logs(GPtrArray *logs, const FsTopo *topo, const char *collective,
                            gboolean in_place, double base_override, const FsCalibration *cal,
                            GError **error)
{
  g_autoptr(GPtrArray) fits = g_ptr_array_new_with_free_func((GDestroyNotify)fs_nccl_fit_free);
  g_autoptr(GPtrArray) done = g_ptr_array_new(); /* tests already in a group */
  for (guint li = 0; li < logs->len; li++) {
    const FsNcclLog *log = g_ptr_array_index(logs, li);
    for (guint ti = 0; ti < log->tests->len; ti++) {
      const FsNcclLogTest *t = g_ptr_array_index(log->tests, ti);
      if (g_ptr_array_find(done, t, NULL))
        continue;
      const char *coll = collective != NULL ? collective : t->collective;
      g_autoptr(GPtrArray) group = g_ptr_array_new(), files = g_ptr_array_new();
      for (guint lj = li; lj < logs->len; lj++) {
        const FsNcclLog *l2 = g_ptr_array_index(logs, lj);
        for (guint tj = 0; tj < l2->tests->len; tj++) {
          const FsNcclLogTest *u = g_ptr_array_index(l2->tests, tj);
          const char *c2 = collective != NULL ? collective : u->collective;
          if (g_ptr_array_find(done, u, NULL) || u->nranks != t->nranks ||
              g_strcmp0(c2, coll) != 0)
            continue;
          g_ptr_array_add(group, (gpointer)u);
          g_ptr_array_add(files, l2->file);
          g_ptr_array_add(done, (gpointer)u);
        }
      }
      FsNcclFit *f = fs_nccl_fit_tests((const FsNcclLogTest *const *)group->pdata,
                                       (const char *const *)files->pdata, group->len, topo,
                                       collective, in_place, base_for(base_override, cal, coll),
                                       error);
      if (f == NULL)
        return NULL;
      g_ptr_array_add(fits, f);
    }
  }
  return g_steal_pointer(&fits);
}
