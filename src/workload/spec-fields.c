/* spec-fields.c — the workload field table and the command-line overrides
 * (see spec.h and spec-fields.h). */
#include "workload/spec-fields.h"

#include <string.h>

#include "util/names.h"
#include "util/strutil.h"
#include "util/units.h"

/* Enum names come from the X-macro lists of the compute module. */
#define NAME(id, str) str,
static const char *const mlp_names[] = {FS_MLP_TYPES(NAME) NULL};
static const char *const norm_names[] = {FS_NORM_TYPES(NAME) NULL};
static const char *const position_names[] = {FS_POSITION_TYPES(NAME) NULL};
static const char *const recompute_names[] = {FS_RECOMPUTE_KINDS(NAME) NULL};
static const char *const optimizer_names[] = {FS_OPTIMIZERS(NAME) NULL};
static const char *const schedule_names[] = {FS_PP_SCHEDULES(NAME) NULL};
static const char *const overlap_cost_names[] = {FS_OVERLAP_COSTS(NAME) NULL};
static const char *const fp8_recipe_names[] = {FS_FP8_RECIPES(NAME) NULL};
static const char *const launch_names[] = {FS_LAUNCH_MODES(NAME) NULL};
#undef NAME
/* The training datatypes (a subset of the catalog's). */
static const char *const dtype_names[] = {"fp32", "tf32", "fp16", "bf16", "fp8", NULL};
static const int dtype_values[] = {FS_DTYPE_FP32, FS_DTYPE_TF32, FS_DTYPE_FP16, FS_DTYPE_BF16,
                                   FS_DTYPE_FP8};

#define OFF(member) offsetof(FsWorkload, member)
#define NONE FS_SCHEMA_NOWHERE

/* Field macros: key, id, offset, range and doc; A(...) lists a field's
 * command-line options (Megatron-LM's name first, then the short one). */
#define A(...) ((const char *const[]){__VA_ARGS__, NULL})
#define UINT_F(k, i, off, lo, hi, opts, d)                                                       \
  {.key = k, .id = i, .type = FS_SCHEMA_UINT, .offset = off, .min = lo, .max = hi,              \
   .aliases = opts, .doc = d}
#define BOOL_F(k, i, off, opts, d)                                                               \
  {.key = k, .id = i, .type = FS_SCHEMA_BOOL, .offset = off, .aliases = opts, .doc = d}
#define ENUM_F(k, i, off, nm, vals, opts, d)                                                     \
  {.key = k, .id = i, .type = FS_SCHEMA_ENUM, .offset = off, .names = nm, .values = vals,       \
   .aliases = opts, .doc = d}
#define SIZE_F(k, i, off, d)                                                                     \
  {.key = k, .id = i, .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE, .offset = off, .doc = d}
#define TEXT_F(k, d) {.key = k, .type = FS_SCHEMA_STRING, .offset = NONE, .doc = d}
#define K24 "16777216"
#define K26 "67108864"

static const FsSchemaField model_fields[] = {
  TEXT_F("preset", "start from this preset's model (a workload file's base name)"),
  {.key = "kind", .type = FS_SCHEMA_ENUM, .offset = NONE, .names = (const char *const[]){
     "transformer", "layers", NULL}, .label = "model kind",
   .doc = "`layers` for a layer list (`workload.layers`)"},
  TEXT_F("name", "the model's name"),
  TEXT_F("source", "paper or model card with the architecture numbers"),
  TEXT_F("description", "free text"),
  UINT_F("layers", F_LAYERS, OFF(model.layers), "1", "100000", A("--num-layers"), "L"),
  UINT_F("hidden", F_HIDDEN, OFF(model.hidden), "1", K24, A("--hidden-size"), "h"),
  UINT_F("ffn_hidden", F_FFN, OFF(model.ffn_hidden), "1", K26, A("--ffn-hidden-size"),
         "F (per expert for MoE unless `moe_ffn_hidden`)"),
  UINT_F("heads", F_HEADS, OFF(model.heads), "1", "65536", A("--num-attention-heads"), "a"),
  UINT_F("kv_heads", F_KV_HEADS, OFF(model.kv_heads), "1", "65536", A("--num-query-groups"),
         "g (GQA); default `heads`"),
  UINT_F("head_dim", F_HEAD_DIM, OFF(model.head_dim), "1", "65536", A("--kv-channels"),
         "default `hidden` / `heads`"),
  UINT_F("vocab", F_VOCAB, OFF(model.vocab), "1", K26, A("--vocab-size"),
         "padded to a multiple of tp in the logits GEMM"),
  UINT_F("seq_length", F_SEQ, OFF(model.seq_len), "1", K26, A("--seq-length"), "s"),
  UINT_F("max_positions", F_MAX_POS, OFF(model.max_positions), "1", K26,
         A("--max-position-embeddings"), "rows of a learned position table (default `seq_length`)"),
  ENUM_F("mlp", F_MLP, OFF(model.mlp), mlp_names, NULL, NULL, "gelu: 2 matrices, swiglu: 3"),
  ENUM_F("norm", F_NORM, OFF(model.norm), norm_names, NULL, A("--normalization"), "normalisation"),
  ENUM_F("position", F_POSITION, OFF(model.position), position_names, NULL,
         A("--position-embedding-type"), "position embedding"),
  BOOL_F("bias", F_BIAS, OFF(model.bias), NULL, "biases on linear layers"),
  BOOL_F("tied_embeddings", F_TIED, OFF(model.tied_embeddings), NULL,
         "the output layer shares the input embedding (with pp > 1 the last stage holds a copy)"),
  BOOL_F("dropout", F_DROPOUT, OFF(model.dropout), NULL, "dropout after attention and MLP"),
  BOOL_F("causal", F_CAUSAL, OFF(model.causal), NULL, "causal mask (attention FLOPs halved)"),
  BOOL_F("flash_attention", F_FLASH, OFF(model.flash_attention), A("--use-flash-attn"),
         "fused attention: no s×s scores stored"),
  UINT_F("experts", F_EXPERTS, OFF(model.experts), "1", "65536", A("--num-experts"),
         "MoE: experts per MoE layer (absent or 1: dense)"),
  UINT_F("top_k", F_TOPK, OFF(model.top_k), "1", "65536", A("--moe-router-topk"),
         "experts per token"),
  {.key = "capacity_factor", .id = F_CAPACITY, .type = FS_SCHEMA_DOUBLE,
   .offset = OFF(model.capacity_factor), .min = "0", .max = "1000000000",
   .aliases = A("--moe-expert-capacity-factor"), .doc = "0 or 1: dropless"},
  UINT_F("moe_ffn_hidden", F_MOE_FFN, OFF(model.moe_ffn_hidden), "1", K26,
         A("--moe-ffn-hidden-size"), "default `ffn_hidden`"),
  UINT_F("moe_every", F_MOE_EVERY, OFF(model.moe_every), "1", "100000", NULL,
         "every n-th layer is MoE"),
};
const FsSchema fs_workload_model_schema = {"model", NULL, model_fields,
                                           G_N_ELEMENTS(model_fields)};

/* A layer-list model: the same heading keys, then the list. */
static const FsSchemaField layers_fields[] = {
  {.key = "layers", .type = FS_SCHEMA_LIST, .offset = NONE,
   .value_doc = "list of `workload.layer`", .doc = "the layers, first to last"},
};
/* The heading keys alone (model_fields up to "description"). */
static const FsSchema heading_schema = {"model", NULL, model_fields, 5};
const FsSchema fs_workload_layers_schema = {"model", &heading_schema, layers_fields, 1};

static const char *const layer_kind_names[] = {"gemm", "memory", NULL};
static const int layer_kind_values[] = {FS_KERNEL_GEMM, FS_KERNEL_MEMORY};
static const FsSchemaField layer_fields[] = {
  {.key = "name", .type = FS_SCHEMA_STRING, .offset = offsetof(LayerEntry, name),
   .doc = "the layer's name (default `layer`)"},
  {.key = "params", .type = FS_SCHEMA_DOUBLE, .offset = offsetof(LayerEntry, params),
   .required = TRUE, .min = "0", .max = "1e15", .doc = "parameters"},
  {.key = "flops", .type = FS_SCHEMA_DOUBLE, .offset = offsetof(LayerEntry, flops),
   .required = TRUE, .min = "0", .max = "1e18", .doc = "forward FLOPs per sample"},
  {.key = "activations", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE,
   .offset = offsetof(LayerEntry, activations),
   .doc = "bytes kept per sample for the backward"},
  {.key = "kind", .type = FS_SCHEMA_ENUM, .offset = offsetof(LayerEntry, kind),
   .names = layer_kind_names, .values = layer_kind_values, .label = "layer kind", .def = "gemm",
   .doc = "`memory` for a layer bound by memory bandwidth"},
  {.key = "repeat", .type = FS_SCHEMA_UINT, .offset = offsetof(LayerEntry, repeat),
   .min = "1", .max = "100000", .def = "1",
   .doc = "copies, named `name.0`, `name.1`, …"},
};
const FsSchema fs_workload_layer_schema = {"layer", NULL, layer_fields,
                                           G_N_ELEMENTS(layer_fields)};

static const FsSchemaField training_fields[] = {
  UINT_F("global_batch", F_GLOBAL, OFF(global_batch), "1", "1073741824",
         A("--global-batch-size"), "sequences (samples) per step"),
  UINT_F("micro_batch", F_MICRO, OFF(micro_batch), "1", "1048576", A("--micro-batch-size"),
         "sequences per micro-batch"),
  UINT_F("gradient_accumulation", F_GRAD_ACCUM, OFF(grad_accum), "1", K24, NULL,
         "derived = global / (micro × dp); checked if given"),
  ENUM_F("dtype", F_DTYPE, OFF(dtype), dtype_names, dtype_values, NULL,
         "fp8: GEMMs in fp8, the rest 16-bit"),
  ENUM_F("optimizer", F_OPTIMIZER, OFF(optimizer), optimizer_names, NULL, A("--optimizer"),
         "sgd is with momentum"),
  ENUM_F("recompute", F_RECOMPUTE, OFF(recompute), recompute_names, NULL,
         A("--recompute-granularity"), "activation recomputation"),
  BOOL_F("grad_fp32", F_GRAD_FP32, OFF(grad_fp32), A("--accumulate-allreduce-grads-in-fp32"),
         "gradients accumulated in fp32 (Megatron's main_grad)"),
  ENUM_F("fp8_recipe", F_FP8_RECIPE, OFF(fp8_recipe), fp8_recipe_names, NULL, A("--fp8-recipe"),
         "with dtype fp8: delayed, or tensorwise (TE current scaling)"),
  BOOL_F("fp8_param_gather", F_FP8_PARAM, OFF(fp8_param_gather), A("--fp8-param-gather"),
         "with dtype fp8: ZeRO parameter all-gathers in FP8"),
  SIZE_F("memory_reserve", F_RESERVE, OFF(memory_reserve),
         "fixed extra per GPU (context, workspaces)"),
};
const FsSchema fs_workload_training_schema = {"training", NULL, training_fields,
                                              G_N_ELEMENTS(training_fields)};

static const FsSchemaField overlap_fields[] = {
  BOOL_F("dp_grads", F_OVERLAP_DP, OFF(overlap_dp_grads), A("--overlap-grad-reduce"),
         "overlap gradient reduction with backward"),
  BOOL_F("tp_comm", F_OVERLAP_TP, OFF(overlap_tp_comm), A("--tp-comm-overlap"),
         "overlap TP collectives with GEMMs"),
  BOOL_F("param_gather", F_OVERLAP_PARAM, OFF(overlap_param_gather),
         A("--overlap-param-gather"), "overlap ZeRO/FSDP parameter all-gathers"),
  BOOL_F("ep_comm", F_OVERLAP_EP, OFF(overlap_ep_comm), A("--overlap-moe-expert-parallel-comm"),
         "MoE all-to-alls beside another micro-batch's compute (Megatron's combined 1F1B)"),
  ENUM_F("cost", F_OVERLAP_COST, OFF(overlap_cost), overlap_cost_names, NULL, A("--overlap-cost"),
         "modelled, exposed or free: what overlapped TP/CP/DP/EP costs the compute"),
};
static const FsSchema overlap_schema = {"parallel.overlap", NULL, overlap_fields,
                                        G_N_ELEMENTS(overlap_fields)};

static const FsSchemaField parallel_fields[] = {
  UINT_F("tp", F_TP, OFF(tp), "1", "65536", A("--tensor-model-parallel-size", "--tp"),
         "tensor parallel"),
  UINT_F("pp", F_PP, OFF(pp), "1", "65536", A("--pipeline-model-parallel-size", "--pp"),
         "pipeline stages"),
  UINT_F("dp", F_DP, OFF(dp), "1", K24, A("--data-parallel-size", "--dp"),
         "data parallel (default: derived from the GPU count)"),
  UINT_F("cp", F_CP, OFF(cp), "1", "65536", A("--context-parallel-size", "--cp"),
         "context parallel"),
  UINT_F("ep", F_EP, OFF(ep), "1", "65536", A("--expert-model-parallel-size", "--ep"),
         "expert parallel (within dp × cp)"),
  UINT_F("virtual_stages", F_VP, OFF(vp), "1", "1024",
         A("--virtual-pipeline-model-parallel-size", "--vp"),
         "model chunks per stage (interleaved needs 2 or more)"),
  BOOL_F("sequence_parallel", F_SP, OFF(sequence_parallel), A("--sequence-parallel", "--sp"),
         "sequence parallelism with tp"),
  ENUM_F("schedule", F_SCHEDULE, OFF(schedule), schedule_names, NULL, NULL, "pipeline schedule"),
  UINT_F("zero_stage", F_ZERO, OFF(zero_stage), "0", "3", A("--zero-stage"),
         "1 = distributed optimizer"),
  BOOL_F("fsdp", F_FSDP, NONE, A("--use-torch-fsdp2"), "true = ZeRO stage 3"),
  SIZE_F("bucket_size", F_BUCKET, OFF(bucket_size),
         "DP gradient bucket; default Megatron's max(40M, 1M·dp) parameters"),
  {.key = "stage_layers", .id = F_STAGE_LAYERS, .type = FS_SCHEMA_LIST, .offset = NONE,
   .value_doc = "list of integers from 0 to 100000",
   .doc = "uneven stages: layers per pipeline stage (pp entries summing to `layers`)"},
  UINT_F("first_stage_layers", F_FIRST_STAGE, OFF(first_stage_layers), "1", "100000",
         A("--decoder-first-pipeline-num-layers"), "layers of the first stage"),
  UINT_F("last_stage_layers", F_LAST_STAGE, OFF(last_stage_layers), "1", "100000",
         A("--decoder-last-pipeline-num-layers"), "layers of the last stage"),
  BOOL_F("account_for_embedding", F_ACCOUNT_EMB, OFF(account_embedding),
         A("--account-for-embedding-in-pipeline-split"),
         "count the embedding as a layer in the split"),
  BOOL_F("account_for_loss", F_ACCOUNT_LOSS, OFF(account_loss),
         A("--account-for-loss-in-pipeline-split"), "the same for the output layer and loss"),
  {.key = "overlap", .type = FS_SCHEMA_MAP, .offset = NONE, .sub = &overlap_schema,
   .value_doc = "mapping (`workload.overlap`)", .doc = "communication overlapped with compute"},
};
const FsSchema fs_workload_parallel_schema = {"parallel", NULL, parallel_fields,
                                              G_N_ELEMENTS(parallel_fields)};

static const FsSchemaField placement_fields[] = {
  {.key = "order", .id = F_ORDER, .type = FS_SCHEMA_STRING, .offset = NONE,
   .doc = "dimensions innermost first (`tp-cp-ep-dp-pp`, Megatron's default)"},
  {.key = "ranks", .id = F_RANKS, .type = FS_SCHEMA_LIST, .offset = NONE,
   .value_doc = "list of GPU numbers", .doc = "explicit map: rank i runs on GPU ranks[i]"},
};
const FsSchema fs_workload_placement_schema = {"placement", NULL, placement_fields,
                                               G_N_ELEMENTS(placement_fields)};

static const FsSchemaField offload_fields[] = {
  BOOL_F("optimizer", F_OFFLOAD, OFF(offload_optimizer), A("--optimizer-cpu-offload"),
         "master weights and optimizer states in host memory"),
};
const FsSchema fs_workload_offload_schema = {"offload", NULL, offload_fields, 1};

static const FsSchemaField framework_fields[] = {
  ENUM_F("launch", F_LAUNCH, OFF(launch), launch_names, NULL, A("--framework-launch"),
         "eager (default), graphs (one CUDA graph per layer pass) or off: the host time that "
         "issuing the step's GPU work costs"),
};
const FsSchema fs_workload_framework_schema = {"framework", NULL, framework_fields, 1};

static const FsSchemaField top_fields[] = {
  TEXT_F("name", "default: the file name"),
  TEXT_F("description", "free text"),
  TEXT_F("source", "where the configuration comes from (else the model's source)"),
  UINT_F("gpus", F_GPUS, OFF(gpus), "1", K24, NULL,
         "the GPU count (else from the topology, or dp)"),
  {.key = "model", .type = FS_SCHEMA_ANY, .offset = NONE, .required = TRUE,
   .value_doc = "a preset name, or a mapping (`workload.model`)", .doc = "the model"},
  {.key = "training", .type = FS_SCHEMA_MAP, .offset = NONE,
   .value_doc = "mapping (`workload.training`)", .doc = "batch, datatype, optimizer"},
  {.key = "parallel", .type = FS_SCHEMA_MAP, .offset = NONE,
   .value_doc = "mapping (`workload.parallel`)", .doc = "the parallel layout"},
  {.key = "placement", .type = FS_SCHEMA_MAP, .offset = NONE,
   .value_doc = "mapping (`workload.placement`)", .doc = "ranks on GPUs"},
  {.key = "offload", .type = FS_SCHEMA_MAP, .offset = NONE,
   .value_doc = "mapping (`workload.offload`)", .doc = "what lives in host memory"},
  {.key = "framework", .type = FS_SCHEMA_MAP, .offset = NONE,
   .value_doc = "mapping (`workload.framework`)", .doc = "how the host issues the GPU work"},
};
const FsSchema fs_workload_top_schema = {"workload", NULL, top_fields, G_N_ELEMENTS(top_fields)};

static const FsSchemaEntry schemas[] = {
  {"workload.top", &fs_workload_top_schema},
  {"workload.model", &fs_workload_model_schema},
  {"workload.layers", &fs_workload_layers_schema},
  {"workload.layer", &fs_workload_layer_schema},
  {"workload.training", &fs_workload_training_schema},
  {"workload.parallel", &fs_workload_parallel_schema},
  {"workload.overlap", &overlap_schema},
  {"workload.placement", &fs_workload_placement_schema},
  {"workload.offload", &fs_workload_offload_schema},
  {"workload.framework", &fs_workload_framework_schema},
};

const FsSchemaEntry *fs_workload_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
}

/* Every field with an id, and its path, found once in the tables. */
typedef struct {
  const FsSchemaField *field[F_N];
  char *path[F_N];
} Index;

static gpointer build_index(gpointer unused)
{
  (void)unused;
  Index *ix = g_new0(Index, 1);
  for (guint i = 0; i < G_N_ELEMENTS(schemas); i++) {
    const FsSchema *s = schemas[i].schema;
    for (guint k = 0; k < s->n_fields; k++) {
      const FsSchemaField *f = &s->fields[k];
      if (f->id <= F_NONE || f->id >= F_N)
        continue;
      ix->field[f->id] = f;
      ix->path[f->id] = s == &fs_workload_top_schema ? g_strdup(f->key)
                                                     : g_strconcat(s->name, ".", f->key, NULL);
    }
  }
  for (guint i = F_NONE + 1; i < F_N; i++)
    g_assert(ix->field[i] != NULL); /* every id has its row */
  return ix;
}

static const Index *field_index(void)
{
  static GOnce once = G_ONCE_INIT;
  return g_once(&once, build_index, NULL);
}

/* Megatron flags that set a field to a fixed value.  A flag with `takes`
 * also accepts one of those words as its value ("--fp8-format hybrid" or
 * "--fp8-format=hybrid"; Megatron-LM's choices e4m3 and hybrid, both FP8
 * GEMMs here) and refuses any other. */
static const char *const fp8_formats[] = {"hybrid", "e4m3", NULL};
static const struct {
  const char *name;
  FieldId id;
  const char *value;
  const char *const *takes;
} aliases[] = {
  {"--bf16", F_DTYPE, "bf16", NULL},
  {"--fp16", F_DTYPE, "fp16", NULL},
  {"--fp8-format", F_DTYPE, "fp8", fp8_formats},
  {"--use-distributed-optimizer", F_ZERO, "1", NULL},
  {"--recompute-activations", F_RECOMPUTE, "selective", NULL},
  {"--untie-embeddings-and-output-weights", F_TIED, "false", NULL},
  {"--enable-cuda-graph", F_LAUNCH, "graphs", NULL},
};

/* The alias named name, or -1. */
static int alias_index(const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS(aliases); i++)
    if (strcmp(name, aliases[i].name) == 0)
      return (int)i;
  return -1;
}

/* TRUE when word is one of the alias's accepted values. */
static gboolean alias_takes(int a, const char *word)
{
  for (guint i = 0; a >= 0 && aliases[a].takes && aliases[a].takes[i]; i++)
    if (strcmp(word, aliases[a].takes[i]) == 0)
      return TRUE;
  return FALSE;
}

const FsSchemaField *fs_workload_field(FieldId id)
{
  g_return_val_if_fail(id > F_NONE && id < F_N, NULL);
  return field_index()->field[id];
}

const char *fs_workload_field_path(FieldId id)
{
  g_return_val_if_fail(id > F_NONE && id < F_N, NULL);
  return field_index()->path[id];
}

/* TRUE when an override may set f (placement: YAML only). */
static gboolean overridable(const FsSchemaField *f)
{
  return f->offset != NONE || f->id == F_FSDP || f->id == F_STAGE_LAYERS;
}

const FsSchemaField *fs_workload_field_by_name(const char *name)
{
  if (name == NULL)
    return NULL;
  for (guint i = F_NONE + 1; i < F_N; i++) {
    const FsSchemaField *f = fs_workload_field(i);
    const char *path = fs_workload_field_path(i);
    if (!overridable(f))
      continue;
    if (strcmp(name, path) == 0 || (f->aliases && fs_names_index(f->aliases, G_MAXUINT, name, NULL)))
      return f;
    /* "tp=8" and "--tp=8" name a field by its last path component too. */
    const char *bare = g_str_has_prefix(name, "--") ? name + 2 : name;
    if (strcmp(bare, f->key) == 0 || strcmp(bare, path) == 0)
      return f;
  }
  return NULL;
}

const char *fs_workload_enum_name(const FsSchemaField *f, int value)
{
  for (guint i = 0; f->names && f->names[i]; i++)
    if ((f->values ? f->values[i] : (int)i) == value)
      return f->names[i];
  return "?";
}

static gboolean bad_value(GError **error, const FsSchemaField *f, const char *text,
                          const char *expected)
{
  g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_OVERRIDE, "expected %s for %s, got \"%s\"",
              expected, fs_workload_field_path(f->id), text ? text : "");
  return FALSE;
}

/* A bound of an integer field's range (the table's text), or dflt. */
static int64_t bound(const char *text, int64_t dflt)
{
  int64_t v;
  return text != NULL && fs_parse_int(text, &v, NULL) ? v : dflt;
}

/* parallel.stage_layers from an override's text: "[7,8,8]", "[7, 8, 8]" or
 * "7,8,8", each an integer from 0 to 100000 (resolve checks them against pp
 * and the layer count, as for the YAML list). */
static gboolean set_stage_layers(FsWorkload *w, const FsSchemaField *f, const char *text,
                                 GError **error)
{
  const char *expected = "a list of layer counts like [7,8,8,7]";
  if (text == NULL)
    return bad_value(error, f, text, expected);
  g_autofree char *body = g_strstrip(g_strdup(text));
  size_t n = strlen(body);
  if (n >= 2 && body[0] == '[' && body[n - 1] == ']') {
    body[n - 1] = '\0';
    memmove(body, body + 1, n - 1);
  }
  g_auto(GStrv) parts = g_strsplit(body, ",", -1);
  guint count = g_strv_length(parts);
  if (count == 0)
    return bad_value(error, f, text, expected);
  g_autofree guint *layers = g_new0(guint, count);
  for (guint i = 0; i < count; i++) {
    int64_t v;
    if (!fs_parse_int(g_strstrip(parts[i]), &v, NULL) || v < 0 || v > 100000)
      return bad_value(error, f, text, expected);
    layers[i] = (guint)v;
  }
  g_free(w->stage_layers);
  w->stage_layers = g_steal_pointer(&layers);
  w->n_stage_layers = count;
  return TRUE;
}

/* See spec-fields.h.  Also: the text is read by the field's type (an integer within the field's
 * bounds, true/false/yes/no/1/0 with NULL meaning true, a non-negative number, a size, or an
 * enum name) and stored at the field's offset in w.  Returns FALSE with
 * FS_WORKLOAD_ERROR_OVERRIDE set, saying what was expected, when the text does not fit. */
gboolean fs_workload_field_set_text(FsWorkload *w, const FsSchemaField *f, const char *text,
                                    GError **error)
{
  char *base = (char *)w;
  if (f->id == F_STAGE_LAYERS)
    return set_stage_layers(w, f, text, error);
  switch (f->type) {
  case FS_SCHEMA_UINT: {
    int64_t v, lo = bound(f->min, 0), hi = bound(f->max, G_MAXUINT);
    if (text == NULL || !fs_parse_int(text, &v, NULL) || v < lo || v > hi) {
      g_autofree char *exp = g_strdup_printf("an integer from %" G_GINT64_FORMAT " to %"
                                             G_GINT64_FORMAT, lo, hi);
      return bad_value(error, f, text, exp);
    }
    *(guint *)(base + f->offset) = (guint)v;
    return TRUE;
  }
  case FS_SCHEMA_BOOL: {
    gboolean v;
    if (text == NULL || g_ascii_strcasecmp(text, "true") == 0 || strcmp(text, "1") == 0 ||
        g_ascii_strcasecmp(text, "yes") == 0)
      v = TRUE;
    else if (g_ascii_strcasecmp(text, "false") == 0 || strcmp(text, "0") == 0 ||
             g_ascii_strcasecmp(text, "no") == 0)
      v = FALSE;
    else
      return bad_value(error, f, text, "true or false");
    if (f->id == F_FSDP)
      w->priv->fsdp = v;
    else
      *(gboolean *)(base + f->offset) = v;
    return TRUE;
  }
  case FS_SCHEMA_DOUBLE: {
    double v;
    if (text == NULL || !fs_parse_number(text, &v, NULL) || !(v >= 0))
      return bad_value(error, f, text, "a non-negative number");
    *(double *)(base + f->offset) = v;
    return TRUE;
  }
  case FS_SCHEMA_QUANTITY: {
    uint64_t v;
    if (text == NULL || !fs_parse_size(text, &v, NULL))
      return bad_value(error, f, text, "a size like \"25 MB\"");
    *(uint64_t *)(base + f->offset) = v;
    return TRUE;
  }
  case FS_SCHEMA_ENUM: {
    guint i;
    if (f->names != NULL && fs_names_index(f->names, G_MAXUINT, text, &i)) {
      *(int *)(base + f->offset) = f->values ? f->values[i] : (int)i;
      return TRUE;
    }
    g_autofree char *list = f->names ? g_strjoinv(", ", (char **)f->names) : g_strdup("");
    g_autofree char *exp = g_strdup_printf("one of %s", list);
    return bad_value(error, f, text, exp);
  }
  default:
    break;
  }
  g_return_val_if_reached(FALSE);
}

/* Every accepted override name, built once. */
static gpointer build_names(gpointer unused)
{
  (void)unused;
  GPtrArray *a = g_ptr_array_new();
  for (guint i = F_NONE + 1; i < F_N; i++) {
    const FsSchemaField *f = fs_workload_field(i);
    if (!overridable(f))
      continue;
    for (guint k = 0; f->aliases && f->aliases[k]; k++)
      g_ptr_array_add(a, (gpointer)f->aliases[k]);
    g_ptr_array_add(a, (gpointer)fs_workload_field_path(i));
  }
  for (guint i = 0; i < G_N_ELEMENTS(aliases); i++)
    g_ptr_array_add(a, (gpointer)aliases[i].name);
  g_ptr_array_add(a, NULL);
  return g_ptr_array_free(a, FALSE);
}

const char *const *fs_workload_override_names(void)
{
  static GOnce once = G_ONCE_INIT;
  return g_once(&once, build_names, NULL);
}

/* See spec.h.  Also: an alias ("--bf16") stands for a field and its value; the field then
 * remembers the override as its origin ("name=value") instead of a file position.  Errors are
 * FS_WORKLOAD_ERROR_OVERRIDE: an unknown name (with a did-you-mean), a missing value for a
 * field that is not a flag, or a value the field refuses. */
gboolean fs_workload_apply_override(FsWorkload *w, const char *name, const char *value,
                                    GError **error)
{
  g_return_val_if_fail(w != NULL && name != NULL, FALSE);
  g_autofree char *shown = value ? g_strdup_printf("%s=%s", name, value) : g_strdup(name);
  const FsSchemaField *f = NULL;
  const char *v = value;
  int a = alias_index(name);
  if (a >= 0) {
    if (value != NULL && !alias_takes(a, value)) {
      g_autofree char *list = aliases[a].takes ? g_strjoinv(", ", (char **)aliases[a].takes) : NULL;
      g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_OVERRIDE,
                  "override %s: %s %s%s", shown, name, list ? "takes one of " : "is a flag and takes no value",
                  list ? list : "");
      return FALSE;
    }
    f = fs_workload_field(aliases[a].id);
    v = aliases[a].value;
  }
  if (f == NULL)
    f = fs_workload_field_by_name(name);
  if (f == NULL) {
    const char *near = fs_did_you_mean(name, fs_workload_override_names(), -1);
    if (near)
      g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_OVERRIDE,
                  "override %s: unknown option \"%s\"; did you mean \"%s\"?", shown, name, near);
    else
      g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_OVERRIDE,
                  "override %s: unknown option \"%s\"", shown, name);
    return FALSE;
  }
  if (v == NULL && f->type != FS_SCHEMA_BOOL) {
    g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_OVERRIDE,
                "override %s: %s needs a value", shown, name);
    return FALSE;
  }
  GError *local = NULL;
  if (!fs_workload_field_set_text(w, f, v, &local)) {
    g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_OVERRIDE, "override %s: %s", shown,
                local->message);
    g_error_free(local);
    return FALSE;
  }
  FieldPos *p = &w->priv->pos[f->id];
  g_free(p->override);
  p->override = g_steal_pointer(&shown);
  p->file = NULL;
  p->line = p->col = 0;
  p->given = TRUE;
  /* A model size set by hand no longer comes from the preset's file. */
  return TRUE;
}

gboolean fs_workload_apply_overrides(FsWorkload *w, const char *const *args, GError **error)
{
  for (guint i = 0; args && args[i]; i++) {
    const char *a = args[i];
    const char *eq = strchr(a, '=');
    if (eq != NULL) {
      g_autofree char *name = g_strndup(a, eq - a);
      if (!fs_workload_apply_override(w, name, eq + 1, error))
        return FALSE;
      continue;
    }
    /* "--tp 8": a name whose field takes a value consumes the next word;
     * so does an alias that takes words ("--fp8-format hybrid"). */
    const FsSchemaField *f = fs_workload_field_by_name(a);
    int al = alias_index(a);
    if (al >= 0 && args[i + 1] != NULL && alias_takes(al, args[i + 1])) {
      if (!fs_workload_apply_override(w, a, args[i + 1], error))
        return FALSE;
      i++;
      continue;
    }
    if (f != NULL && al < 0 && f->type != FS_SCHEMA_BOOL && args[i + 1] != NULL) {
      if (!fs_workload_apply_override(w, a, args[i + 1], error))
        return FALSE;
      i++;
      continue;
    }
    if (!fs_workload_apply_override(w, a, NULL, error))
      return FALSE;
  }
  return TRUE;
}
