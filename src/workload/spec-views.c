/* spec-views.c — what the compute module needs from a resolved workload:
 * the transformer run and memory layout records, parameter and FLOP
 * totals, the kernels of a layer-list model and its memory footprint
 * (see spec.h). */
#include <math.h>

#include "workload/spec.h"

void fs_workload_transformer_run(const FsWorkload *w, FsTransformerRun *run)
{
  fs_transformer_run_init(run);
  run->micro_batch = w->micro_batch;
  run->tp = w->tp;
  run->cp = w->cp;
  run->ep = w->ep;
  run->sequence_parallel = w->sequence_parallel && w->tp > 1;
  run->dtype = w->dtype;
  run->recompute = w->recompute;
}

void fs_workload_memory_layout(const FsWorkload *w, FsMemoryLayout *l)
{
  fs_memory_layout_init(l);
  l->tp = w->tp;
  l->pp = w->pp;
  l->dp = w->dp;
  l->cp = w->cp;
  l->ep = w->ep;
  l->vp = w->vp;
  l->sequence_parallel = w->sequence_parallel && w->tp > 1;
  l->schedule = w->schedule;
  l->micro_batch = w->micro_batch;
  l->num_micro_batches = MAX(w->grad_accum, 1);
  l->zero_stage = w->zero_stage;
  l->recompute = w->recompute;
  l->optimizer = w->optimizer;
  l->dtype = w->dtype;
  l->grad_fp32 = w->grad_fp32;
  l->offload_optimizer = w->offload_optimizer;
  l->bucket_size = w->bucket_size;
  l->reserved = w->memory_reserve;
}

double fs_workload_params(const FsWorkload *w)
{
  if (w->form == FS_MODEL_FORM_LAYERS) {
    double s = 0;
    for (guint i = 0; i < w->n_layers; i++)
      s += w->layers[i].params;
    return s;
  }
  FsTransformerParams p;
  fs_transformer_params(&w->model, &p);
  return p.total;
}

double fs_workload_step_model_flops(const FsWorkload *w)
{
  if (w->form == FS_MODEL_FORM_LAYERS) {
    double s = 0;
    for (guint i = 0; i < w->n_layers; i++)
      s += w->layers[i].cls == FS_KERNEL_GEMM ? w->layers[i].flops : 0;
    return 3 * s * w->global_batch;
  }
  return fs_transformer_flops_per_token(&w->model, w->model.causal) * w->model.seq_len *
         (double)w->global_batch;
}

GArray *fs_workload_layer_kernels(const FsWorkload *w, guint i, FsKernelPass pass)
{
  g_return_val_if_fail(w->form == FS_MODEL_FORM_LAYERS && i < w->n_layers, NULL);
  GArray *out = g_array_new(FALSE, TRUE, sizeof(FsKernel));
  const FsLayerSpec *L = &w->layers[i];
  double b = w->micro_batch, e = fs_dtype_bytes(w->dtype == FS_DTYPE_FP8 ? FS_DTYPE_BF16 : w->dtype);
  double acts = L->activations * b;
  FsKernel k = {.cls = L->cls, .dtype = w->dtype, .batch = 1};
  if (pass == FS_PASS_FORWARD || pass == FS_PASS_RECOMPUTE) {
    k.name = L->name;
    k.pass = pass;
    k.flops = L->flops * b;
    k.model_flops = pass == FS_PASS_FORWARD && L->cls == FS_KERNEL_GEMM ? k.flops : 0;
    k.bytes = L->params * e + 2 * acts;
    g_array_append_val(out, k);
  } else if (pass == FS_PASS_BACKWARD) {
    for (int j = 0; j < 2; j++) {
      k.name = L->bwd_names[j];
      k.pass = pass;
      k.flops = L->flops * b;
      k.model_flops = L->cls == FS_KERNEL_GEMM ? k.flops : 0;
      k.bytes = j == 0 ? L->params * e + 2 * acts : 2 * L->params * e + acts;
      g_array_append_val(out, k);
    }
  }
  return out;
}

/* Memory of a layer-list model: layers split over pp stages in order. */
static gboolean layers_memory(const FsWorkload *w, const FsGpuModel *gpu, FsMemoryBreakdown *out)
{
  FsMemoryLayout l;
  fs_workload_memory_layout(w, &l);
  gboolean have = FALSE;
  guint per = (w->n_layers + w->pp - 1) / w->pp;
  for (guint s = 0; s < w->pp; s++) {
    FsMemoryBreakdown m = {0};
    double params = 0, acts = 0;
    for (guint i = s * per; i < MIN((s + 1) * per, w->n_layers); i++) {
      params += w->layers[i].params;
      acts += w->layers[i].activations * w->micro_batch;
    }
    FsModelStates st;
    fs_memory_model_states(params, &l, &st);
    m.stage = s;
    m.layers = MIN((s + 1) * per, w->n_layers) - MIN(s * per, w->n_layers);
    m.params = params;
    m.weights = (uint64_t)llround(st.weights);
    m.gradients = (uint64_t)llround(st.gradients);
    m.master = (uint64_t)llround(st.master);
    m.optimizer = (uint64_t)llround(st.optimizer);
    m.host = (uint64_t)llround(st.host);
    m.in_flight = fs_memory_in_flight(l.schedule, l.pp, l.vp, l.num_micro_batches, s);
    m.activations_per_microbatch = (uint64_t)llround(acts);
    m.activations = (uint64_t)llround(acts * m.in_flight);
    m.comm_buffers = w->dp > 1 ? w->bucket_size : 0;
    m.reserved = w->memory_reserve;
    m.total = m.weights + m.gradients + m.master + m.optimizer + m.activations + m.comm_buffers + m.reserved;
    m.capacity = gpu ? gpu->memory : 0;
    m.fits = gpu ? m.total <= gpu->memory : TRUE;
    if (!have || m.total > out->total) {
      *out = m;
      have = TRUE;
    }
  }
  return TRUE;
}

gboolean fs_workload_memory_estimate(const FsWorkload *w, const FsGpuModel *gpu,
                                     FsMemoryBreakdown *out, GError **error)
{
  if (w->form == FS_MODEL_FORM_LAYERS)
    return layers_memory(w, gpu, out);
  FsMemoryLayout l;
  fs_workload_memory_layout(w, &l);
  return fs_memory_estimate_worst(&w->model, &l, gpu, out, error);
}
