/* spec-views.c — what the compute module needs from a resolved workload:
 * the transformer run and memory layout records, parameter and FLOP
 * totals, the kernels of a layer-list model and its memory footprint
 * (see spec.h). */
#include <math.h>

#include "workload/spec.h"

static void chunk_range(const FsWorkload *w, guint chunk, guint *first, guint *count);

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
  run->fp8_recipe = w->fp8_recipe;
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
  l->vstage_first = w->vstage_first; /* borrowed: the layers of each chunk */
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

double fs_workload_step_model_flops(const FsWorkload *w, gboolean causal_half)
{
  if (w->form == FS_MODEL_FORM_LAYERS) {
    double s = 0;
    for (guint i = 0; i < w->n_layers; i++)
      s += w->layers[i].cls == FS_KERNEL_GEMM ? w->layers[i].flops : 0;
    return 3 * s * w->global_batch;
  }
  return fs_transformer_flops_per_token(&w->model, causal_half && w->model.causal) * w->model.seq_len *
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
  for (guint s = 0; s < w->pp; s++) {
    FsMemoryBreakdown m = {0};
    double params = 0, acts = 0;
    guint layers = 0;
    for (guint c = s; c < fs_workload_chunks(w); c += w->pp) {
      guint first, count;
      chunk_range(w, c, &first, &count);
      layers += count;
      for (guint i = first; i < first + count; i++) {
        params += w->layers[i].params;
        acts += w->layers[i].activations * w->micro_batch;
      }
    }
    FsModelStates st;
    fs_memory_model_states(params, &l, &st);
    m.stage = s;
    m.layers = layers;
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

/* Layers [first, first + count) of model chunk `chunk` (0 .. pp·vp − 1):
 * the resolved split (spec.c, resolve_stages), or the even one before
 * resolution. */
static void chunk_range(const FsWorkload *w, guint chunk, guint *first, guint *count)
{
  if (w->vstage_first != NULL) {
    *first = w->vstage_first[chunk];
    *count = w->vstage_first[chunk + 1] - *first;
    return;
  }
  guint chunks = MAX(w->pp, 1) * MAX(w->vp, 1);
  guint n = w->form == FS_MODEL_FORM_LAYERS ? w->n_layers : w->model.layers;
  guint base = n / chunks, extra = n % chunks;
  *first = chunk * base + MIN(chunk, extra);
  *count = base + (chunk < extra ? 1 : 0);
}

void fs_workload_chunk_layers(const FsWorkload *w, guint chunk, guint *first, guint *count)
{
  g_return_if_fail(w != NULL && chunk < fs_workload_chunks(w));
  chunk_range(w, chunk, first, count);
}

guint fs_workload_stage_layers(const FsWorkload *w, guint stage)
{
  guint n = 0;
  for (guint c = stage; stage < MAX(w->pp, 1) && c < fs_workload_chunks(w); c += MAX(w->pp, 1)) {
    guint first, count;
    chunk_range(w, c, &first, &count);
    n += count;
  }
  return n;
}

guint fs_workload_chunks(const FsWorkload *w)
{
  return MAX(w->pp, 1) * MAX(w->vp, 1);
}

static void append(GArray *out, GArray *part)
{
  g_array_append_vals(out, part->data, part->len);
  g_array_unref(part);
}

/* See spec.h. A layer-list model has no embedding or head and recomputes only under full
 * recomputation; a transformer adds the embedding on the first chunk and the head on the last. */
GArray *fs_workload_chunk_kernels(const FsWorkload *w, guint chunk, FsKernelPass pass)
{
  g_return_val_if_fail(w != NULL && chunk < fs_workload_chunks(w), NULL);
  GArray *out = g_array_new(FALSE, TRUE, sizeof(FsKernel));
  guint first, count;
  chunk_range(w, chunk, &first, &count);
  gboolean is_first = chunk == 0, is_last = chunk == fs_workload_chunks(w) - 1;
  if (w->form == FS_MODEL_FORM_LAYERS) {
    if (pass == FS_PASS_RECOMPUTE && w->recompute != FS_RECOMPUTE_FULL)
      return out;
    for (guint k = 0; k < count; k++) {
      guint i = pass == FS_PASS_BACKWARD ? first + count - 1 - k : first + k;
      append(out, fs_workload_layer_kernels(w, i, pass));
    }
    return out;
  }
  FsTransformerRun run;
  fs_workload_transformer_run(w, &run);
  const FsTransformerConfig *m = &w->model;
  switch (pass) {
  case FS_PASS_FORWARD:
    if (is_first)
      append(out, fs_transformer_embedding_kernels(m, &run, FS_PASS_FORWARD));
    for (guint i = first; i < first + count; i++)
      append(out, fs_transformer_layer_kernels(m, &run, i, FS_PASS_FORWARD));
    if (is_last)
      append(out, fs_transformer_head_kernels(m, &run, FS_PASS_FORWARD));
    break;
  case FS_PASS_RECOMPUTE:
    for (guint i = first; i < first + count; i++)
      append(out, fs_transformer_layer_kernels(m, &run, i, FS_PASS_RECOMPUTE));
    break;
  case FS_PASS_BACKWARD:
    if (is_last)
      append(out, fs_transformer_head_kernels(m, &run, FS_PASS_BACKWARD));
    for (guint i = first + count; i-- > first;)
      append(out, fs_transformer_layer_kernels(m, &run, i, FS_PASS_BACKWARD));
    if (is_first)
      append(out, fs_transformer_embedding_kernels(m, &run, FS_PASS_BACKWARD));
    break;
  default:
    break;
  }
  return out;
}

GArray *fs_workload_optimizer_kernels(const FsWorkload *w, guint stage, GError **error)
{
  FsMemoryLayout l;
  fs_workload_memory_layout(w, &l);
  double params;
  if (w->form == FS_MODEL_FORM_LAYERS) {
    params = 0;
    for (guint c = stage; c < fs_workload_chunks(w); c += MAX(w->pp, 1)) {
      guint first, count;
      chunk_range(w, c, &first, &count);
      for (guint i = first; i < first + count; i++)
        params += w->layers[i].params;
    }
  } else {
    FsMemoryBreakdown m;
    if (!fs_memory_estimate(&w->model, &l, stage, NULL, &m, error))
      return NULL;
    params = m.params;
  }
  double local = params;
  /* With ZeRO-1 and up each rank updates its 1/dp shard. */
  if (w->zero_stage >= 1)
    params /= MAX(w->dp, 1);
  gboolean mixed = w->dtype != FS_DTYPE_FP32 && w->dtype != FS_DTYPE_TF32;
  GArray *k = fs_optimizer_kernels(params, w->optimizer, mixed, w->grad_fp32 || !mixed ? 4 : 2);
  /* FP8 GEMMs: Transformer Engine casts the updated 16-bit weights to FP8
   * (and their transpose) once per step, on the first micro-batch; with
   * --fp8-param-gather the optimizer writes its shard in FP8 instead and
   * the gather moves FP8. */
  if (w->dtype == FS_DTYPE_FP8 && w->form == FS_MODEL_FORM_TRANSFORMER) {
    g_autoptr(GArray) c = fs_fp8_weight_cast_kernels(w->fp8_param_gather ? params : local,
                                                          w->fp8_recipe);
    g_array_append_vals(k, c->data, c->len);
  }
  return k;
}
