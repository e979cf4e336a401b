/* train.c — see train.h. */
#include "report/train.h"
#include "report/format.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "scenario/step-factor.h"
#include "util/units.h"
#include "workload/schedule.h"

#define TRAIN_SCHEMA_VERSION 1
#define TRACE_LINKS 16  /* counter tracks in --trace */

static double ms(FsTime t) { return fs_time_to_s(t) * 1e3; }

/* The validated estimate of r: its step time (s), tokens/s and MFU times
 * the catalog's step-time factor sf (step-factor.h). */
static FsStepCalibrated calibrated(const FsStepFactor *sf, const FsTrainResult *r)
{
  return fs_step_factor_apply(sf, fs_time_to_s(r->step_time), r->tokens_per_s, r->mfu);
}

/* A number, or null without a step factor. */
static json_t *real_or_null(const FsStepFactor *sf, double v)
{
  return sf != NULL ? json_real(v) : json_null();
}

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
  json_object_set_new(o, "host_ms", json_real(ms(c->time.host)));
  json_object_set_new(o, "model_tflop", json_real(c->model_flops / 1e12));
  return o;
}

/* See train.h. Appends the text report of a finished training step to out: layout, step time,
 * throughput, MFU, the validated estimate (with a step factor) and energy, the time of each
 * rank class by category with exposed communication and bubble, the busiest links, and the
 * memory of the worst stage. */
void fs_report_train_text(GString *out, FsTrain *t, const FsWorkload *w, const FsTopo *topo,
                          const FsMemoryBreakdown *mem, const FsLinkUse *links, guint nl,
                          const FsStepFactor *sf)
{
  const FsTrainResult *r = fs_train_result(t);
  g_string_append_printf(out, "%s on %s: %u × %s\n", w->name, fs_topo_name(topo), r->gpus, r->gpu_name);
  g_string_append_printf(out, "  layout       tp %u%s, pp %u (%s%s), dp %u, cp %u, ep %u, ZeRO-%u; %u micro-batches of %u per replica\n",
         w->tp, w->sequence_parallel ? " + SP" : "", w->pp, fs_pp_schedule_name(w->schedule),
         w->vp > 1 ? ", virtual stages" : "", w->dp, w->cp, w->ep, w->zero_stage, r->microbatches,
         w->micro_batch);
  g_string_append_printf(out, "  step time    %.3f ms\n", ms(r->step_time));
  g_string_append_printf(out, "  tokens/s     %.0f\n", r->tokens_per_s);
  g_string_append_printf(out, "  model TFLOP/s per GPU  %.1f  (MFU %.1f%% of %.0f TFLOP/s %s peak; %.1f%% with causal "
         "attention halved)\n", r->tflops_per_gpu, 100 * r->mfu, r->peak_flops / 1e12,
         fs_dtype_name(r->peak_dtype), 100 * r->mfu_causal);
  if (sf != NULL) {
    FsStepCalibrated c = calibrated(sf, r);
    g_string_append_printf(out, "  validated    step %.3f ms, tokens/s %.0f, MFU %.1f%%  (× %.4f: the one step-time "
           "factor fitted on %u published training steps, validation/REPORT.md)\n", c.step_s * 1e3,
           c.tokens_per_s, 100 * c.mfu, sf->factor, sf->fit_rows);
  }
  g_string_append_printf(out, "  energy/step  %.4g kJ (%u GPUs × %.0f W TDP × step time)\n", r->energy_j / 1e3, r->gpus,
         r->gpu->tdp);
  g_string_append_printf(out, "\nTime per rank class (ms; stage s = its tp 0, dp 0 rank):\n");
  g_string_append_printf(out, "  %-5s %-6s %9s %9s %9s %9s | %8s %8s %8s %8s %8s %8s | %9s %8s\n", "stage",
         "rank", "forward", "backward", "recompute", "optimizer", "tp", "cp", "ep", "pp", "dp", "emb",
         "bubble", "host");
  for (guint i = 0; i < r->classes->len; i++) {
    const FsTrainClass *c = &g_array_index(r->classes, FsTrainClass, i);
    g_string_append_printf(out, "  %-5u %-6u %9.2f %9.2f %9.2f %9.2f | %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f | %9.2f %8.2f\n",
           c->stage, c->rank, ms(c->time.busy[FS_CAT_FORWARD]), ms(c->time.busy[FS_CAT_BACKWARD]),
           ms(c->time.busy[FS_CAT_RECOMPUTE]), ms(c->time.busy[FS_CAT_OPTIMIZER]),
           ms(c->time.exposed[FS_CAT_TP]), ms(c->time.exposed[FS_CAT_CP]),
           ms(c->time.exposed[FS_CAT_EP]), ms(c->time.exposed[FS_CAT_PP]),
           ms(c->time.exposed[FS_CAT_DP] + c->time.exposed[FS_CAT_COMM]),
           ms(c->time.exposed[FS_CAT_EMB]), ms(c->time.bubble), ms(c->time.host));
  }
  g_string_append_printf(out, "  (communication columns are exposed time: the compute stream waited for it;\n"
         "   emb: the tied-embedding gradient all-reduce between the first and last stage;\n"
         "   host: the compute stream waited for the host to issue its kernels, launch %s)\n",
         fs_launch_mode_name(fs_train_result(t)->launch));
  g_string_append_printf(out, "\nBusiest links (mean utilisation over the step):\n");
  if (nl == 0)
    g_string_append_printf(out, "  none: no traffic crossed a link\n");
  for (guint i = 0; i < nl; i++) {
    g_autofree char *name = fs_router_channel_name(fs_train_router(t), links[i].channel);
    g_autofree char *sz = fs_format_size(links[i].bytes);
    g_string_append_printf(out, "  %-44s %5.1f%%  %s\n", name, 100 * links[i].utilisation, sz);
  }
  g_autofree char *tot = fs_format_size(mem->total);
  g_autofree char *cap = fs_format_size(mem->capacity);
  g_string_append_printf(out, "\nMemory per GPU (worst stage %u): %s of %s%s\n", mem->stage, tot, cap,
         mem->fits ? "" : "  — DOES NOT FIT");
  g_string_append_printf(out, "  weights %.1f GiB, gradients %.1f GiB, master %.1f GiB, optimizer %.1f GiB, "
         "activations %.1f GiB, buffers %.1f GiB\n",
         mem->weights / 1073741824.0, mem->gradients / 1073741824.0, mem->master / 1073741824.0,
         mem->optimizer / 1073741824.0, mem->activations / 1073741824.0,
         (mem->comm_buffers + mem->reserved + mem->recompute_workspace) / 1073741824.0);
  g_string_append_printf(out, "\n(simulated %u ranks, %u ops; the rest mirrored by symmetry)\n", r->simulated_ranks,
         r->n_ops);
}

/* Builds the JSON document of a finished training step: layout, step time, throughput, MFU,
 * energy, each rank class, the busiest links and the worst stage's memory. The caller owns the
 * returned reference. */
static json_t *result_json(FsTrain *t, const FsWorkload *w, const FsTopo *topo,
                           const FsMemoryBreakdown *mem, const FsLinkUse *links, guint nl,
                           const FsStepFactor *sf)
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
  json_object_set_new(o, "model_flops_per_step_causal", json_real(r->model_flops_causal));
  json_object_set_new(o, "model_tflops_per_gpu", json_real(r->tflops_per_gpu));
  json_object_set_new(o, "peak_tflops_per_gpu", json_real(r->peak_flops / 1e12));
  json_object_set_new(o, "mfu", json_real(r->mfu));
  json_object_set_new(o, "mfu_causal", json_real(r->mfu_causal));
  json_object_set_new(o, "energy_j", json_real(r->energy_j));
  FsStepCalibrated c = sf != NULL ? calibrated(sf, r) : (FsStepCalibrated){ 0 };
  json_object_set_new(o, "step_factor", real_or_null(sf, sf != NULL ? sf->factor : 0));
  json_object_set_new(o, "calibrated_step_time_s", real_or_null(sf, c.step_s));
  json_object_set_new(o, "calibrated_tokens_per_s", real_or_null(sf, c.tokens_per_s));
  json_object_set_new(o, "calibrated_mfu", real_or_null(sf, c.mfu));
  json_t *cls = json_array();
  for (guint i = 0; i < r->classes->len; i++)
    json_array_append_new(cls, class_json(&g_array_index(r->classes, FsTrainClass, i)));
  json_object_set_new(o, "rank_classes", cls);
  json_t *lk = json_array();
  for (guint i = 0; i < nl; i++) {
    json_t *l = json_object();
    g_autofree char *name = fs_router_channel_name(fs_train_router(t), links[i].channel);
    json_object_set_new(l, "channel", json_string(name));
    json_object_set_new(l, "utilisation", json_real(links[i].utilisation));
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

void fs_report_train_json(GString *out, FsTrain *t, const FsWorkload *w, const FsTopo *topo,
                          const FsMemoryBreakdown *mem, const FsLinkUse *links, guint nl,
                          const FsStepFactor *sf)
{
  json_t *o = result_json(t, w, topo, mem, links, nl, sf);
  fs_report_append_json(out, o, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
}

void fs_report_train_csv(GString *out, FsTrain *t, const FsStepFactor *sf)
{
  const FsTrainResult *r = fs_train_result(t);
  g_autofree char *cal = sf != NULL ? g_strdup_printf("%.10g", calibrated(sf, r).step_s * 1e3) : g_strdup("");
  g_string_append_printf(out, "stage,rank,step_time_ms");
  for (guint k = 0; k < FS_CAT_N; k++)
    if (k != FS_CAT_OTHER)
      g_string_append_printf(out, ",%s_ms", fs_op_cat_name(k));
  g_string_append_printf(out, ",bubble_ms,host_ms,calibrated_step_time_ms\n");
  for (guint i = 0; i < r->classes->len; i++) {
    const FsTrainClass *c = &g_array_index(r->classes, FsTrainClass, i);
    g_string_append_printf(out, "%u,%u,%.10g", c->stage, c->rank, ms(r->step_time));
    for (guint k = 0; k < FS_CAT_N; k++)
      if (k != FS_CAT_OTHER)
        g_string_append_printf(out, ",%.10g", ms(fs_op_cat_is_comm(k) ? c->time.exposed[k] : c->time.busy[k]));
    g_string_append_printf(out, ",%.10g,%.10g,%s\n", ms(c->time.bubble), ms(c->time.host), cal);
  }
}

gboolean fs_report_train_trace(const char *path, FsTrain *t, const FsWorkload *w, const FsTopo *topo,
                               const FsLinkSampler *sampler, GError **error)
{
  FsTime end = fs_train_result(t)->step_time;
  g_autofree char *title = g_strdup_printf("%s on %s", w->name, fs_topo_name(topo));
  FsReportTrace tr = { .graph = fs_train_graph(t), .topo = topo, .net = fs_train_net(t),
                       .router = fs_train_router(t), .sampler = sampler, .end = end, .title = title,
                       .n_links = TRACE_LINKS };
  return fs_report_write_trace(path, &tr, error);
}
