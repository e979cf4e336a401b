/* cmd-train.c — `fabricsim train TOPO WORKLOAD [overrides…]`: simulate one
 * training step and report step time, throughput, MFU, where the time
 * went per pipeline stage, the busiest links, memory per GPU and energy.
 * JSON schema: workloads/README.md ("train --json"). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib/calibration.h"
#include "calib/nccl-apply.h"
#include "catalog/catalog.h"
#include "cli/commands.h"
#include "compute/efficiency.h"
#include "report/link-sampler.h"
#include "report/trace-json.h"
#include "topo/topo.h"
#include "util/strutil.h"
#include "util/units.h"
#include "workload/chakra/chakra.h"
#include "workload/executor.h"
#include "workload/schedule.h"
#include "workload/spec.h"

#define TRAIN_SCHEMA_VERSION 1
#define TOP_LINKS 8
#define TRACE_LINKS 16  /* counter tracks in --trace */
#define TRACE_BINS 100  /* utilisation samples per link, at least (link-sampler.h) */

static char **opt_defines = NULL;
static char *opt_models = NULL;
static char *opt_calibration = NULL;
static gboolean opt_json = FALSE, opt_csv = FALSE;
static gboolean opt_strict = FALSE;
static char *opt_trace = NULL;
static char *opt_model = NULL;
static gboolean opt_list = FALSE;
static gboolean opt_dp_isolated = FALSE;
static char *opt_coll_classes = NULL;
static char *opt_chakra_out = NULL;

static const GOptionEntry entries[] = {
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print JSON (schema in workloads/README.md)", NULL},
  {"csv", 0, 0, G_OPTION_ARG_NONE, &opt_csv,
   "Print CSV: one line per rank class (pipeline stage) with its time breakdown in ms", NULL},
  {"trace", 0, 0, G_OPTION_ARG_FILENAME, &opt_trace,
   "Write a Chrome trace-event JSON of the step (opens in Perfetto)", "FILE"},
  {"strict", 0, 0, G_OPTION_ARG_NONE, &opt_strict,
   "Fail (exit 2) when the job does not fit in GPU memory", NULL},
  {"model", 0, 0, G_OPTION_ARG_STRING, &opt_model,
   "Flow model: maxmin (default) or analytic", "MODEL"},
  {"define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &opt_defines,
   "Override a topology parameter (repeatable)", "NAME=VALUE"},
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &opt_calibration,
   "Apply a calibration file (fabricsim calibrate / the probes) to the catalog and the GEMM curves",
   "FILE"},
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &opt_models,
   "Catalog folder (default: $FABRICSIM_MODELS or the built-in models/)", "DIR"},
  {"dp-isolated", 0, 0, G_OPTION_ARG_NONE, &opt_dp_isolated,
   "Time data-parallel collectives alone (no contention; faster on large jobs)", NULL},
  {"coll-classes", 0, 0, G_OPTION_ARG_STRING, &opt_coll_classes,
   "Collectives timed alone on congruent GPU groups share one measurement: auto (where exact, "
   "the default), on (also under max-min with ECMP: approximate), off", "MODE"},
  {"chakra-out", 0, 0, G_OPTION_ARG_FILENAME, &opt_chakra_out,
   "Write the step as MLCommons Chakra traces DIR/step.RANK.et (as ASTRA-sim reads them; "
   "fabricsim replay TOPO --chakra DIR runs them again)", "DIR"},
  {"list-schedules", 0, 0, G_OPTION_ARG_NONE, &opt_list, "List the pipeline schedules", NULL},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

typedef struct {
  guint ch;
  double util;
  uint64_t bytes;
} LinkUse;

static int link_cmp(const void *a, const void *b)
{
  const LinkUse *x = a, *y = b;
  if (x->util != y->util)
    return x->util > y->util ? -1 : 1;
  return x->ch < y->ch ? -1 : x->ch > y->ch;
}

/* The busiest channels by mean utilisation over the step (ties: channel
 * order).  Returns up to max entries. */
static guint busiest_links(FsTrain *t, LinkUse *out, guint max)
{
  FsFlowNet *net = fs_train_net(t);
  FsTime step = fs_train_result(t)->step_time;
  guint n = fs_flownet_n_channels(net);
  g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(LinkUse));
  for (guint i = 0; i < n; i++) {
    FsChannelStats st;
    fs_flownet_channel_stats(net, i, &st);
    if (st.bytes == 0)
      continue;
    LinkUse u = { i, step > 0 ? st.volume / (st.capacity * fs_time_to_s(step)) : 0, st.bytes };
    g_array_append_val(all, u);
  }
  g_array_sort(all, link_cmp);
  guint k = MIN(all->len, max);
  if (k > 0) /* no traffic (e.g. --dp-isolated on one node): all->data may be NULL */
    memcpy(out, all->data, k * sizeof(LinkUse));
  return k;
}

static double ms(FsTime t) { return fs_time_to_s(t) * 1e3; }

static json_t *class_json(const FsTrainClass *c)
{
  json_t *o = json_object();
  json_object_set_new(o, "stage", json_integer(c->stage));
  json_object_set_new(o, "rank", json_integer(c->rank));
  json_t *compute = json_object();
  json_t *exposed = json_object();
  for (guint k = 0; k < FS_CAT_N; k++) {
    if (fs_op_cat_is_comm(k))
      json_object_set_new(exposed, fs_op_cat_name(k), json_real(ms(c->time.exposed[k])));
    else if (k != FS_CAT_OTHER)
      json_object_set_new(compute, fs_op_cat_name(k), json_real(ms(c->time.busy[k])));
  }
  json_object_set_new(o, "compute_ms", compute);
  json_object_set_new(o, "exposed_comm_ms", exposed);
  json_object_set_new(o, "bubble_ms", json_real(ms(c->time.bubble)));
  json_object_set_new(o, "model_tflop", json_real(c->model_flops / 1e12));
  return o;
}

static void print_text(FsTrain *t, const FsWorkload *w, const FsTopo *topo,
                       const FsMemoryBreakdown *mem, const LinkUse *links, guint nl)
{
  const FsTrainResult *r = fs_train_result(t);
  printf("%s on %s: %u × %s\n", w->name, fs_topo_name(topo), r->gpus, r->gpu_name);
  printf("  layout       tp %u%s, pp %u (%s%s), dp %u, cp %u, ep %u, ZeRO-%u; %u micro-batches of %u per replica\n",
         w->tp, w->sequence_parallel ? " + SP" : "", w->pp, fs_pp_schedule_name(w->schedule),
         w->vp > 1 ? ", virtual stages" : "", w->dp, w->cp, w->ep, w->zero_stage, r->microbatches,
         w->micro_batch);
  printf("  step time    %.3f ms\n", ms(r->step_time));
  printf("  tokens/s     %.0f\n", r->tokens_per_s);
  printf("  model TFLOP/s per GPU  %.1f  (MFU %.1f%% of %.0f TFLOP/s %s peak)\n", r->tflops_per_gpu,
         100 * r->mfu, r->peak_flops / 1e12, fs_dtype_name(r->peak_dtype));
  printf("  energy/step  %.4g kJ (%u GPUs × %.0f W TDP × step time)\n", r->energy_j / 1e3, r->gpus,
         r->gpu->tdp);
  printf("\nTime per rank class (ms; stage s = its tp 0, dp 0 rank):\n");
  printf("  %-5s %-6s %9s %9s %9s %9s | %8s %8s %8s %8s %8s %8s | %9s\n", "stage", "rank",
         "forward", "backward", "recompute", "optimizer", "tp", "cp", "ep", "pp", "dp", "emb",
         "bubble");
  for (guint i = 0; i < r->classes->len; i++) {
    const FsTrainClass *c = &g_array_index(r->classes, FsTrainClass, i);
    printf("  %-5u %-6u %9.2f %9.2f %9.2f %9.2f | %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f | %9.2f\n",
           c->stage, c->rank, ms(c->time.busy[FS_CAT_FORWARD]), ms(c->time.busy[FS_CAT_BACKWARD]),
           ms(c->time.busy[FS_CAT_RECOMPUTE]), ms(c->time.busy[FS_CAT_OPTIMIZER]),
           ms(c->time.exposed[FS_CAT_TP]), ms(c->time.exposed[FS_CAT_CP]),
           ms(c->time.exposed[FS_CAT_EP]), ms(c->time.exposed[FS_CAT_PP]),
           ms(c->time.exposed[FS_CAT_DP] + c->time.exposed[FS_CAT_COMM]),
           ms(c->time.exposed[FS_CAT_EMB]), ms(c->time.bubble));
  }
  printf("  (communication columns are exposed time: the compute stream waited for it;\n"
         "   emb: the tied-embedding gradient all-reduce between the first and last stage)\n");
  printf("\nBusiest links (mean utilisation over the step):\n");
  if (nl == 0)
    printf("  none: no traffic crossed a link\n");
  for (guint i = 0; i < nl; i++) {
    g_autofree char *name = fs_router_channel_name(fs_train_router(t), links[i].ch);
    g_autofree char *sz = fs_format_size(links[i].bytes);
    printf("  %-44s %5.1f%%  %s\n", name, 100 * links[i].util, sz);
  }
  g_autofree char *tot = fs_format_size(mem->total);
  g_autofree char *cap = fs_format_size(mem->capacity);
  printf("\nMemory per GPU (worst stage %u): %s of %s%s\n", mem->stage, tot, cap,
         mem->fits ? "" : "  — DOES NOT FIT");
  printf("  weights %.1f GiB, gradients %.1f GiB, master %.1f GiB, optimizer %.1f GiB, "
         "activations %.1f GiB, buffers %.1f GiB\n",
         mem->weights / 1073741824.0, mem->gradients / 1073741824.0, mem->master / 1073741824.0,
         mem->optimizer / 1073741824.0, mem->activations / 1073741824.0,
         (mem->comm_buffers + mem->reserved + mem->recompute_workspace) / 1073741824.0);
  printf("\n(simulated %u ranks, %u ops; the rest mirrored by symmetry)\n", r->simulated_ranks,
         r->n_ops);
}

static json_t *result_json(FsTrain *t, const FsWorkload *w, const FsTopo *topo,
                           const FsMemoryBreakdown *mem, const LinkUse *links, guint nl)
{
  const FsTrainResult *r = fs_train_result(t);
  json_t *o = json_object();
  json_object_set_new(o, "schema_version", json_integer(TRAIN_SCHEMA_VERSION));
  json_object_set_new(o, "workload", json_string(w->name));
  json_object_set_new(o, "topology", json_string(fs_topo_name(topo)));
  json_object_set_new(o, "gpu", json_string(r->gpu_name));
  json_object_set_new(o, "gpus", json_integer(r->gpus));
  json_t *lay = json_object();
  json_object_set_new(lay, "tp", json_integer(w->tp));
  json_object_set_new(lay, "pp", json_integer(w->pp));
  json_object_set_new(lay, "dp", json_integer(w->dp));
  json_object_set_new(lay, "cp", json_integer(w->cp));
  json_object_set_new(lay, "ep", json_integer(w->ep));
  json_object_set_new(lay, "virtual_stages", json_integer(MAX(w->vp, 1u)));
  json_object_set_new(lay, "sequence_parallel", json_boolean(w->sequence_parallel));
  json_object_set_new(lay, "schedule", json_string(fs_pp_schedule_name(w->schedule)));
  json_object_set_new(lay, "zero_stage", json_integer(w->zero_stage));
  json_object_set_new(lay, "micro_batch", json_integer(w->micro_batch));
  json_object_set_new(lay, "global_batch", json_integer(w->global_batch));
  json_object_set_new(lay, "microbatches", json_integer(r->microbatches));
  json_object_set_new(o, "layout", lay);
  json_object_set_new(o, "step_time_s", json_real(fs_time_to_s(r->step_time)));
  json_object_set_new(o, "step_time_ps", json_integer(r->step_time));
  json_object_set_new(o, "tokens_per_step", json_real(r->tokens));
  json_object_set_new(o, "tokens_per_s", json_real(r->tokens_per_s));
  json_object_set_new(o, "model_flops_per_step", json_real(r->model_flops));
  json_object_set_new(o, "model_tflops_per_gpu", json_real(r->tflops_per_gpu));
  json_object_set_new(o, "peak_tflops_per_gpu", json_real(r->peak_flops / 1e12));
  json_object_set_new(o, "mfu", json_real(r->mfu));
  json_object_set_new(o, "energy_j", json_real(r->energy_j));
  json_t *cls = json_array();
  for (guint i = 0; i < r->classes->len; i++)
    json_array_append_new(cls, class_json(&g_array_index(r->classes, FsTrainClass, i)));
  json_object_set_new(o, "rank_classes", cls);
  json_t *lk = json_array();
  for (guint i = 0; i < nl; i++) {
    json_t *l = json_object();
    g_autofree char *name = fs_router_channel_name(fs_train_router(t), links[i].ch);
    json_object_set_new(l, "channel", json_string(name));
    json_object_set_new(l, "utilisation", json_real(links[i].util));
    json_object_set_new(l, "bytes", json_integer((json_int_t)links[i].bytes));
    json_array_append_new(lk, l);
  }
  json_object_set_new(o, "busiest_links", lk);
  json_t *m = json_object();
  json_object_set_new(m, "stage", json_integer(mem->stage));
  json_object_set_new(m, "total_bytes", json_integer((json_int_t)mem->total));
  json_object_set_new(m, "capacity_bytes", json_integer((json_int_t)mem->capacity));
  json_object_set_new(m, "weights_bytes", json_integer((json_int_t)mem->weights));
  json_object_set_new(m, "gradients_bytes", json_integer((json_int_t)mem->gradients));
  json_object_set_new(m, "master_bytes", json_integer((json_int_t)mem->master));
  json_object_set_new(m, "optimizer_bytes", json_integer((json_int_t)mem->optimizer));
  json_object_set_new(m, "activations_bytes", json_integer((json_int_t)mem->activations));
  json_object_set_new(m, "fits", json_boolean(mem->fits));
  json_object_set_new(o, "memory", m);
  json_object_set_new(o, "simulated_ranks", json_integer(r->simulated_ranks));
  json_object_set_new(o, "ops", json_integer(r->n_ops));
  return o;
}

int fs_cmd_train(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx =
    g_option_context_new("TOPO WORKLOAD [OVERRIDE…] - simulate one training step");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_ignore_unknown_options(ctx, TRUE);
  g_option_context_set_description(ctx,
    "OVERRIDEs use Megatron-LM's flag names (--tensor-model-parallel-size=8, --pp 4,\n"
    "--micro-batch-size=2, --sequence-parallel, …) or YAML paths (parallel.tp=8).\n"
    "\nExample:\n"
    "  fabricsim train topologies/dgx-h100.yaml workloads/llama2-7b.yaml\n"
    "  fabricsim train topologies/dgx-h100-ib-ndr.yaml workloads/gpt3-175b.yaml --tp=8 --pp=8 \\\n"
    "      --trace step.json\n"
    "  fabricsim train topologies/dgx-h100.yaml workloads/gpt3-1.3b.yaml --tp=1 --pp=8 \\\n"
    "      --chakra-out step/\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "train");
  if (done != FS_CLI_GO_ON)
    return done;
  if (opt_list) {
    for (guint i = 0; fs_schedules[i] != NULL; i++)
      printf("  %-12s %s\n", fs_schedules[i]->name, fs_schedules[i]->summary);
    return 0;
  }
  if (argc < 3)
    return fs_cli_usage("train", "expected a TOPOLOGY and a WORKLOAD file");
  if (opt_json && opt_csv)
    return fs_cli_usage("train", "--json and --csv are exclusive");
  GError *error = NULL;
  FsTrainOptions topt;
  fs_train_options_init(&topt);
  topt.dp_isolated = opt_dp_isolated;
  if (opt_coll_classes != NULL && !fs_coll_classes_from_name(opt_coll_classes, &topt.coll_classes))
    return fs_cli_usage("train", "unknown --coll-classes \"%s\" (auto, on or off)", opt_coll_classes);
  if (opt_model != NULL && !fs_net_model_from_name(opt_model, &topt.net_model))
    return fs_cli_usage("train", "unknown flow model \"%s\" (maxmin or analytic)", opt_model);
  g_autoptr(FsCalibration) cal = NULL;
  g_autoptr(FsCatalog) cat = fs_calibration_load_catalog(opt_models, opt_calibration, &cal, &error);
  if (cat == NULL)
    return fs_cli_fail("train", error);
  g_autoptr(FsTopo) topo = fs_topo_load_file(argv[1], cat, (const char *const *)opt_defines, &error);
  if (topo == NULL)
    return fs_cli_fail("train", error);
  g_autoptr(FsWorkload) w = fs_workload_load_file(argv[2], NULL, &error);
  if (w == NULL)
    return fs_cli_fail("train", error);
  if (argc > 3 && !fs_workload_apply_overrides(w, (const char *const *)argv + 3, &error))
    return fs_cli_fail("train", error);
  guint ngpus;
  fs_topo_gpus(topo, &ngpus);
  if (!fs_workload_resolve(w, ngpus, &error))
    return fs_cli_fail("train", error);
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(opt_models ? g_build_filename(opt_models, "compute", NULL) : NULL, &error);
  if (eff == NULL || (cal != NULL && !fs_calibration_apply_efficiency(cal, cat, eff, &error)))
    return fs_cli_fail("train", error);
  g_autoptr(FsNcclParams) np = fs_nccl_params_load_default(&error);
  if (np == NULL)
    return fs_cli_fail("train", error);
  fs_calibration_apply_nccl(cal, fs_calibration_topo_gpu(topo), np, NULL);
  g_autoptr(FsTrain) t = fs_train_new(topo, w, eff, np, &topt, &error);
  if (t == NULL)
    return fs_cli_fail("train", error);
  g_autoptr(FsLinkSampler) sampler = opt_trace ? fs_link_sampler_new(fs_train_net(t), TRACE_BINS) : NULL;
  if (!fs_train_run(t, &error))
    return fs_cli_fail("train", error);
  const FsTrainResult *r = fs_train_result(t);
  if (sampler != NULL)
    fs_link_sampler_finish(sampler, r->step_time);
  FsMemoryBreakdown mem;
  if (!fs_workload_memory_estimate(w, r->gpu, &mem, &error))
    return fs_cli_fail("train", error);
  LinkUse links[TOP_LINKS];
  guint nl = busiest_links(t, links, TOP_LINKS);
  if (!mem.fits) {
    g_autofree char *tot = fs_format_size(mem.total);
    g_autofree char *cap = fs_format_size(mem.capacity);
    if (opt_strict)
      return fs_cli_usage("train", "%s needs %s per GPU on stage %u but a %s has %s (--strict)",
                          w->name, tot, mem.stage, r->gpu_name, cap);
    fprintf(stderr, "fabricsim train: warning: %s needs %s per GPU on stage %u but a %s has %s\n",
            w->name, tot, mem.stage, r->gpu_name, cap);
  }
  if (opt_trace != NULL) {
    FsTraceLink tl[TRACE_LINKS];
    guint ntl = fs_trace_busiest_links(fs_train_net(t), r->step_time, tl, TRACE_LINKS);
    char *names[TRACE_LINKS] = { NULL };
    for (guint i = 0; i < ntl; i++)
      tl[i].name = names[i] = fs_router_channel_name(fs_train_router(t), tl[i].channel);
    g_autofree char *title = g_strdup_printf("%s on %s", w->name, fs_topo_name(topo));
    FsTraceOptions to = { title, tl, ntl, sampler, r->step_time };
    g_autofree char *txt = fs_trace_json(fs_train_graph(t), topo, &to);
    gboolean ok = fs_write_file_atomic(opt_trace, txt, strlen(txt), &error);
    for (guint i = 0; i < ntl; i++)
      g_free(names[i]);
    if (!ok)
      return fs_cli_fail("train", error);
  }
  if (opt_chakra_out != NULL &&
      !fs_chakra_write(fs_train_graph(t), topo, opt_chakra_out, "step", &error))
    return fs_cli_fail("train", error);
  if (opt_csv) {
    printf("stage,rank,step_time_ms");
    for (guint k = 0; k < FS_CAT_N; k++)
      if (k != FS_CAT_OTHER)
        printf(",%s_ms", fs_op_cat_name(k));
    printf(",bubble_ms\n");
    for (guint i = 0; i < r->classes->len; i++) {
      const FsTrainClass *c = &g_array_index(r->classes, FsTrainClass, i);
      printf("%u,%u,%.10g", c->stage, c->rank, ms(r->step_time));
      for (guint k = 0; k < FS_CAT_N; k++)
        if (k != FS_CAT_OTHER)
          printf(",%.10g", ms(fs_op_cat_is_comm(k) ? c->time.exposed[k] : c->time.busy[k]));
      printf(",%.10g\n", ms(c->time.bubble));
    }
  } else if (opt_json) {
    json_t *o = result_json(t, w, topo, &mem, links, nl);
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    printf("%s\n", s);
    free(s);
    json_decref(o);
  } else {
    print_text(t, w, topo, &mem, links, nl);
  }
  return 0;
}
