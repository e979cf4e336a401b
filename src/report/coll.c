/* coll.c — see coll.h. */
#include "report/coll.h"
#include "report/format.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "coll/ncclt-format.h"
#include "report/links.h"
#include "util/units.h"

#define COLL_SCHEMA_VERSION 2
#define TRACE_LINKS 16
#define TRACE_BINS 100

void fs_report_coll_list(GString *out)
{
  g_string_append(out, "algorithms:\n");
  for (guint i = 0; fs_coll_algos[i]; i++) {
    const FsCollAlgo *a = fs_coll_algos[i];
    g_string_append_printf(out, "  %-15s %-14s %s\n", a->name,
                           a->nccl == FS_NCCL_ALGO_NONE ? "-" : fs_nccl_algo_name(a->nccl), a->summary);
  }
  g_string_append(out, "protocols:\n");
  for (guint p = 0; p < FS_PROTO_N; p++)
    g_string_append_printf(out, "  %s\n", fs_coll_proto_name(p));
}

/* The collective's name, or "all" for several. */
static const char *collective(const FsCollTest *r)
{
  return r->sel.n_ops == 1 ? fs_coll_op_name(r->sel.ops[0]) : "all";
}

void fs_report_coll_csv(GString *out, const FsCollTest *r)
{
  g_string_append(out, "size_bytes,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,algo,proto,channels,op\n");
  for (guint i = 0; i < r->rows->len; i++) {
    const FsNcclTestsRow *w = &g_array_index(r->rows, FsNcclTestsRow, i);
    g_string_append_printf(out, "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%s,%s,%d,%.10g,%.10g,%.10g,%s,%s,%u,%s\n",
                           w->sizes.size, w->sizes.count, w->type_name, w->redop_label, w->root,
                           w->oop_time_us, w->oop_algbw, w->oop_busbw, w->algo, w->proto, w->channels,
                           fs_coll_op_name(w->op));
  }
}

void fs_report_coll_json(GString *out, const FsScenario *sc, const FsCollTest *r)
{
  const FsCollSelection *sel = &r->sel;
  json_t *root = json_object();
  json_object_set_new(root, "schema_version", json_integer(COLL_SCHEMA_VERSION));
  json_object_set_new(root, "collective", json_string(collective(r)));
  json_object_set_new(root, "topology", json_string(fs_topo_name(fs_scenario_topo(sc))));
  json_object_set_new(root, "nranks", json_integer(r->n));
  json_object_set_new(root, "nccl_version", json_string(fs_scenario_nccl(sc)->version));
  json_t *res = json_array();
  for (guint i = 0; i < r->rows->len; i++)
    json_array_append_new(res, fs_ncclt_row_json(&g_array_index(r->rows, FsNcclTestsRow, i)));
  json_object_set_new(root, "results", res);
  json_object_set_new(root, "avg_busbw_GBps", json_real(fs_coll_bench_avg_busbw(r->rows)));
  json_t *by_op = json_object();
  for (guint o = 0; o < sel->n_ops; o++)
    if (r->skipped[o] == NULL)
      json_object_set_new(by_op, fs_coll_op_name(sel->ops[o]), json_real(r->avgs[o]));
  json_object_set_new(root, "avg_busbw_by_op", by_op);
  json_t *skip = json_array();
  for (guint o = 0; o < sel->n_ops; o++)
    if (r->skipped[o] != NULL) {
      json_t *e = json_object();
      json_object_set_new(e, "op", json_string(fs_coll_op_name(sel->ops[o])));
      json_object_set_new(e, "reason", json_string(r->skipped[o]));
      json_array_append_new(skip, e);
    }
  json_object_set_new(root, "skipped", skip);
  fs_report_append_json(out, root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
}

/* What explain_size needs besides its step. */
typedef struct {
  GString *out;
  const FsNcclParams *np;
  const FsCollSysInfo *sys;
  const FsComm *comm;
  FsCollOp op;
} Explain;

/* Appends the model's arithmetic for one size, each line prefixed "# ". */
static gboolean explain_size(const FsCollBenchStep *step, void *data, GError **error)
{
  (void)error;
  Explain *x = data;
  g_autofree char *text = fs_coll_explain(x->np, x->sys, x->comm, x->op, step->nbytes,
                                          &step->choice);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_string_append(x->out, "#\n");
  for (guint i = 0; lines[i]; i++)
    if (lines[i][0] != '\0')
      g_string_append_printf(x->out, "# %s\n", lines[i]);
  return TRUE;
}

/* Appends the model's arithmetic for every size of the sweep (first
 * datatype and redop), each line prefixed "# ". */
static gboolean explain_sizes(GString *out, const FsNcclParams *np, const FsCollSysInfo *sys,
                              const FsComm *comm, const FsCollSweep *sw, GError **error)
{
  Explain x = {out, np, sys, comm, sw->op};
  return fs_coll_bench_each_size(np, sys, comm, sw, explain_size, &x, error);
}

/* The NCCL version code nccl-tests prints: 2.30.7 → 23007. */
static guint version_code(const char *v)
{
  guint a = 0, b = 0, c = 0;
  if (sscanf(v, "%u.%u.%u", &a, &b, &c) < 2)
    return 0;
  return a * 10000 + b * 100 + c;
}

/* The devices nccl-tests lists, one per rank: host, local index, model.
 * Caller frees (g_free); the strings are the topology's. */
static FsNcclTestsDevice *ncclt_devices(const FsTopo *topo, const FsCollTest *r)
{
  FsNcclTestsDevice *devs = g_new0(FsNcclTestsDevice, r->n);
  for (guint i = 0; i < r->n; i++) {
    const FsTopoNode *node = fs_topo_node(topo, r->gpus[i]);
    devs[i].rank = i;
    devs[i].hostname = node->host >= 0 ? fs_topo_host_name(topo, (guint)node->host) : "fabric";
    devs[i].device = node->local >= 0 ? (guint)node->local : 0;
    devs[i].name = node->model->name;
  }
  return devs;
}

/* The header nccl-tests prints for collective op of the sweep. */
static FsNcclTestsHeader ncclt_header(const FsNcclParams *np, const FsCollTest *r,
                                      const FsCollTextOptions *opt, FsCollOp op)
{
  FsCollLaunch l = r->sweep.launch;
  if (l.gpus_per_thread == 0)
    fs_coll_launch_init(&l);
  FsNcclTestsHeader h = {
    .op = op, .version_tag = "fabricsim-" FS_VERSION,
    .nccl_version_code = version_code(np->version),
    .nthreads = l.threads, .ngpus = l.gpus_per_thread, .graph = l.graph_iters, .min_bytes = r->sweep.min_bytes, .max_bytes = r->sweep.max_bytes,
    .step_factor = r->sweep.step_factor, .step_bytes = r->sweep.step_bytes,
    .warmup_iters = (guint)MAX(opt->warmup_iters, 0), .iters = (guint)MAX(opt->iters, 0),
    .agg_iters = 1, .validation = (guint)MAX(opt->check, 0),
  };
  return h;
}

gboolean fs_report_coll_text(GString *out, const FsScenario *sc, const FsCollTest *r,
                             const FsCollTextOptions *opt, gboolean explain, GError **error)
{
  const FsTopo *topo = fs_scenario_topo(sc);
  const FsNcclParams *np = fs_scenario_nccl(sc);
  const FsCollSelection *sel = &r->sel;
  FsCollSweep sw = r->sweep;
  guint n = r->n;
  g_autofree FsNcclTestsDevice *devs = ncclt_devices(topo, r);
  /* Each collective is a block of its own, as nccl-tests' programs run one
   * after another print them. */
  for (guint o = 0; o < sel->n_ops; o++) {
    FsNcclTestsHeader h = ncclt_header(np, r, opt, sel->ops[o]);
    fs_ncclt_header(out, &h, devs, n);
    if (r->skipped[o] != NULL) {
      g_string_append_printf(out, "#\n# Not run: %s\n#\n# Collective test concluded: %s\n",
                             r->skipped[o], fs_coll_op_binary(sel->ops[o]));
      continue;
    }
    fs_ncclt_table_header(out);
    for (guint i = o ? r->ends[o - 1] : 0; i < r->ends[o]; i++)
      fs_ncclt_row(out, &g_array_index(r->rows, FsNcclTestsRow, i));
    fs_ncclt_footer(out, sel->ops[o], r->avgs[o]);
    sw.op = sel->ops[o];
    sw.dtype = sel->dtypes[0];
    if (explain && !explain_sizes(out, np, &r->sys, r->comm, &sw, error))
      return FALSE;
  }
  return TRUE;
}

/* nccl-tests' -J file for the one collective of the sweep: the command line
 * nccl-tests would have been given (-b -e -f|-i -g -d -o -r -n -w -c -J),
 * the NCCL_* variables the tuner honours when set, and the simulated
 * clock's zero as both times (a simulation has no wall clock). */
void fs_report_coll_ncclt_json(GString *out, const FsScenario *sc, const FsCollTest *r,
                               const FsCollTextOptions *opt, const char *path)
{
  const FsCollSelection *sel = &r->sel;
  const FsCollSweep *sw = &r->sweep;
  FsNcclTestsHeader h = ncclt_header(fs_scenario_nccl(sc), r, opt, sel->ops[0]);
  g_autofree FsNcclTestsDevice *devs = ncclt_devices(fs_scenario_topo(sc), r);
  g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(args, g_strdup(fs_coll_op_binary(sel->ops[0])));
#define ARG(flag, ...) (g_ptr_array_add(args, g_strdup(flag)), \
                        g_ptr_array_add(args, g_strdup_printf(__VA_ARGS__)))
  ARG("-b", "%" G_GUINT64_FORMAT, sw->min_bytes);
  ARG("-e", "%" G_GUINT64_FORMAT, sw->max_bytes);
  if (sw->step_factor > 1)
    ARG("-f", "%" G_GUINT64_FORMAT, sw->step_factor);
  else
    ARG("-i", "%" G_GUINT64_FORMAT, sw->step_bytes);
  ARG("-t", "%u", h.nthreads);
  ARG("-g", "%u", h.ngpus);
  if (h.graph > 0)
    ARG("-G", "%u", h.graph);
  ARG("-d", "%s", sel->n_dtypes > 1 ? "all" : fs_coll_dtype_name(sel->dtypes[0]));
  ARG("-o", "%s", sel->redop != NULL ? sel->redop : "sum");
  if (fs_coll_op_rooted(sel->ops[0]))
    ARG("-r", "%u", sw->root);
  ARG("-n", "%u", h.iters);
  ARG("-w", "%u", h.warmup_iters);
  ARG("-c", "%u", h.validation);
  ARG("-J", "%s", path);
#undef ARG
  g_ptr_array_add(args, NULL);
  g_autoptr(GPtrArray) env = g_ptr_array_new_with_free_func(g_free);
  static const char *const honoured[] = {"NCCL_ALGO", "NCCL_PROTO", "NCCL_COLLNET_ENABLE"};
  for (gsize i = 0; i < G_N_ELEMENTS(honoured); i++)
    if (g_getenv(honoured[i]) != NULL)
      g_ptr_array_add(env, g_strdup_printf("%s=%s", honoured[i], g_getenv(honoured[i])));
  g_ptr_array_add(env, NULL);
  FsNcclTestsJsonRun run = {(const char *const *)args->pdata, (const char *const *)env->pdata,
                            "1970-01-01 00:00:00", "1970-01-01 00:00:00"};
  fs_ncclt_json(out, &h, &run, devs, r->n, (const FsNcclTestsRow *)(void *)r->rows->data,
                r->rows->len, r->avgs[0]);
}

gboolean fs_report_coll_trace(const char *path, const FsScenario *sc, const FsCollTest *r,
                              GError **error)
{
  const FsTopo *topo = fs_scenario_topo(sc);
  guint n = r->n;
  g_autoptr(FsOpGraph) g = fs_opgraph_new();
  guint comm = fs_opgraph_add_comm(g, "world", r->gpus, n);
  g_autofree guint *streams = g_new(guint, n);
  for (guint k = 0; k < n; k++)
    streams[k] = fs_opgraph_add_stream(g, "coll", k, (int)r->gpus[k], TRUE);
  const FsNcclTestsRow *first = NULL;
  for (guint i = 0; i < r->rows->len; i++) {
    const FsNcclTestsRow *row = &g_array_index(r->rows, FsNcclTestsRow, i);
    if (first == NULL || first->op != row->op)
      first = row;
    if (strcmp(row->type_name, first->type_name) != 0 || strcmp(row->redop_label, first->redop_label) != 0)
      continue;
    guint c = fs_opgraph_add_coll(g, comm, row->op, row->sizes.unit_bytes);
    g_autofree char *sz = fs_format_size(row->sizes.size);
    g_autofree char *name = g_strdup_printf("%s %s", fs_coll_op_name(row->op), sz);
    for (guint k = 0; k < n; k++) {
      FsOp op = { .kind = FS_OP_COLL, .cat = FS_CAT_COMM, .name = name, .bytes = row->sizes.unit_bytes,
                  .coll = c, .mb = -1, .layer = -1 };
      fs_opgraph_add(g, streams[k], &op, NULL, 0);
    }
  }
  g_autoptr(FsScenarioWorld) w = fs_scenario_world_new(sc, NULL, FS_NET_MAXMIN, NULL);
  g_autoptr(FsLinkSampler) sampler = fs_link_sampler_new(w->net, TRACE_BINS);
  if (!fs_opgraph_run(g, &w->env, error))
    return FALSE;
  FsTime end = fs_opgraph_end(g);
  if (sampler != NULL)
    fs_link_sampler_finish(sampler, end);
  g_autofree char *title = g_strdup_printf("%s on %u GPUs of %s", collective(r), n, fs_topo_name(topo));
  FsReportTrace t = { .graph = g, .topo = topo, .net = w->net, .router = w->router,
                      .sampler = sampler, .end = end, .title = title, .n_links = TRACE_LINKS };
  return fs_report_write_trace(path, &t, error);
}

gboolean fs_report_coll_explain(GString *out, const FsScenario *sc, FsCollOp op, uint64_t bytes,
                                const char *gpus_text, const char *size_label, GError **error)
{
  const FsTopo *topo = fs_scenario_topo(sc);
  const FsNcclParams *np = fs_scenario_nccl(sc);
  guint n = 0;
  g_autofree guint *gpus = fs_coll_parse_gpus(topo, gpus_text, &n, error);
  if (gpus == NULL)
    return FALSE;
  g_autoptr(FsScenarioWorld) w = fs_scenario_world_new(sc, NULL, FS_NET_MAXMIN, NULL);
  g_autoptr(FsComm) comm = fs_coll_comm_from_topo(w->router, gpus, n, np->max_channels, error);
  if (comm == NULL)
    return FALSE;
  FsCollSysInfo sys;
  if (!fs_coll_sysinfo_from_topo(np, w->router, comm, &sys, error))
    return FALSE;
  /* As `coll`: the scenario's NCCL_ALGO / NCCL_PROTO, and CollNet (SHARP)
   * only with NCCL_COLLNET_ENABLE=1. */
  const FsCollPrefs *prefs = fs_scenario_prefs(sc);
  fs_coll_prefs_apply_sys(prefs, &sys);
  FsCollSizes sizes;
  fs_coll_sizes(op, bytes, FS_COLL_DT_FLOAT, n, &sizes);
  uint64_t nbytes = fs_coll_nccl_bytes(op, &sizes, n);
  FsCollChoice choice;
  if (!fs_coll_tune(np, &sys, comm, op, nbytes, prefs, &choice, error))
    return FALSE;
  g_autofree char *text = fs_coll_explain(np, &sys, comm, op, nbytes, &choice);
  g_autofree char *rings = fs_coll_describe_rings(w->router, comm);
  g_string_append_printf(out, "%s %s on %u GPUs of %s\n%s%s", fs_coll_op_name(op), size_label, n,
                         fs_topo_name(topo), rings, text);
  return TRUE;
}
