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
#undef NAME
/* The training datatypes (a subset of the catalog's). */
static const char *const dtype_names[] = {"fp32", "tf32", "fp16", "bf16", "fp8", NULL};
static const int dtype_values[] = {FS_DTYPE_FP32, FS_DTYPE_TF32, FS_DTYPE_FP16, FS_DTYPE_BF16,
                                   FS_DTYPE_FP8};

#define OFF(member) offsetof(FsWorkload, member)
#define NONE ((size_t)-1)

/* Rows: id, YAML path, Megatron flag, short flag, type, offset, min, max,
 * enum names, enum values. */
static const Field fields[F_N] = {
  [F_GPUS] = {F_GPUS, "gpus", NULL, NULL, FT_UINT, OFF(gpus), 1, 1u << 24, NULL, NULL},
  [F_LAYERS] = {F_LAYERS, "model.layers", "--num-layers", NULL, FT_UINT, OFF(model.layers), 1, 100000, NULL, NULL},
  [F_HIDDEN] = {F_HIDDEN, "model.hidden", "--hidden-size", NULL, FT_UINT, OFF(model.hidden), 1, 1u << 24, NULL, NULL},
  [F_FFN] = {F_FFN, "model.ffn_hidden", "--ffn-hidden-size", NULL, FT_UINT, OFF(model.ffn_hidden), 1, 1u << 26, NULL, NULL},
  [F_HEADS] = {F_HEADS, "model.heads", "--num-attention-heads", NULL, FT_UINT, OFF(model.heads), 1, 65536, NULL, NULL},
  [F_KV_HEADS] = {F_KV_HEADS, "model.kv_heads", "--num-query-groups", NULL, FT_UINT, OFF(model.kv_heads), 1, 65536, NULL, NULL},
  [F_HEAD_DIM] = {F_HEAD_DIM, "model.head_dim", "--kv-channels", NULL, FT_UINT, OFF(model.head_dim), 1, 65536, NULL, NULL},
  [F_VOCAB] = {F_VOCAB, "model.vocab", "--vocab-size", NULL, FT_UINT, OFF(model.vocab), 1, 1u << 26, NULL, NULL},
  [F_SEQ] = {F_SEQ, "model.seq_length", "--seq-length", NULL, FT_UINT, OFF(model.seq_len), 1, 1u << 26, NULL, NULL},
  [F_MAX_POS] = {F_MAX_POS, "model.max_positions", "--max-position-embeddings", NULL, FT_UINT, OFF(model.max_positions), 1, 1u << 26, NULL, NULL},
  [F_MLP] = {F_MLP, "model.mlp", NULL, NULL, FT_ENUM, OFF(model.mlp), 0, 0, mlp_names, NULL},
  [F_NORM] = {F_NORM, "model.norm", "--normalization", NULL, FT_ENUM, OFF(model.norm), 0, 0, norm_names, NULL},
  [F_POSITION] = {F_POSITION, "model.position", "--position-embedding-type", NULL, FT_ENUM, OFF(model.position), 0, 0, position_names, NULL},
  [F_BIAS] = {F_BIAS, "model.bias", NULL, NULL, FT_BOOL, OFF(model.bias), 0, 0, NULL, NULL},
  [F_TIED] = {F_TIED, "model.tied_embeddings", NULL, NULL, FT_BOOL, OFF(model.tied_embeddings), 0, 0, NULL, NULL},
  [F_DROPOUT] = {F_DROPOUT, "model.dropout", NULL, NULL, FT_BOOL, OFF(model.dropout), 0, 0, NULL, NULL},
  [F_CAUSAL] = {F_CAUSAL, "model.causal", NULL, NULL, FT_BOOL, OFF(model.causal), 0, 0, NULL, NULL},
  [F_FLASH] = {F_FLASH, "model.flash_attention", "--use-flash-attn", NULL, FT_BOOL, OFF(model.flash_attention), 0, 0, NULL, NULL},
  [F_EXPERTS] = {F_EXPERTS, "model.experts", "--num-experts", NULL, FT_UINT, OFF(model.experts), 1, 65536, NULL, NULL},
  [F_TOPK] = {F_TOPK, "model.top_k", "--moe-router-topk", NULL, FT_UINT, OFF(model.top_k), 1, 65536, NULL, NULL},
  [F_CAPACITY] = {F_CAPACITY, "model.capacity_factor", "--moe-expert-capacity-factor", NULL, FT_DOUBLE, OFF(model.capacity_factor), 0, 0, NULL, NULL},
  [F_MOE_FFN] = {F_MOE_FFN, "model.moe_ffn_hidden", "--moe-ffn-hidden-size", NULL, FT_UINT, OFF(model.moe_ffn_hidden), 1, 1u << 26, NULL, NULL},
  [F_MOE_EVERY] = {F_MOE_EVERY, "model.moe_every", NULL, NULL, FT_UINT, OFF(model.moe_every), 1, 100000, NULL, NULL},
  [F_GLOBAL] = {F_GLOBAL, "training.global_batch", "--global-batch-size", NULL, FT_UINT, OFF(global_batch), 1, 1u << 30, NULL, NULL},
  [F_MICRO] = {F_MICRO, "training.micro_batch", "--micro-batch-size", NULL, FT_UINT, OFF(micro_batch), 1, 1u << 20, NULL, NULL},
  [F_GRAD_ACCUM] = {F_GRAD_ACCUM, "training.gradient_accumulation", NULL, NULL, FT_UINT, OFF(grad_accum), 1, 1u << 24, NULL, NULL},
  [F_DTYPE] = {F_DTYPE, "training.dtype", NULL, NULL, FT_ENUM, OFF(dtype), 0, 0, dtype_names, dtype_values},
  [F_OPTIMIZER] = {F_OPTIMIZER, "training.optimizer", "--optimizer", NULL, FT_ENUM, OFF(optimizer), 0, 0, optimizer_names, NULL},
  [F_RECOMPUTE] = {F_RECOMPUTE, "training.recompute", "--recompute-granularity", NULL, FT_ENUM, OFF(recompute), 0, 0, recompute_names, NULL},
  [F_GRAD_FP32] = {F_GRAD_FP32, "training.grad_fp32", "--accumulate-allreduce-grads-in-fp32", NULL, FT_BOOL, OFF(grad_fp32), 0, 0, NULL, NULL},
  [F_RESERVE] = {F_RESERVE, "training.memory_reserve", NULL, NULL, FT_SIZE, OFF(memory_reserve), 0, 0, NULL, NULL},
  [F_TP] = {F_TP, "parallel.tp", "--tensor-model-parallel-size", "--tp", FT_UINT, OFF(tp), 1, 65536, NULL, NULL},
  [F_PP] = {F_PP, "parallel.pp", "--pipeline-model-parallel-size", "--pp", FT_UINT, OFF(pp), 1, 65536, NULL, NULL},
  [F_DP] = {F_DP, "parallel.dp", "--data-parallel-size", "--dp", FT_UINT, OFF(dp), 1, 1u << 24, NULL, NULL},
  [F_CP] = {F_CP, "parallel.cp", "--context-parallel-size", "--cp", FT_UINT, OFF(cp), 1, 65536, NULL, NULL},
  [F_EP] = {F_EP, "parallel.ep", "--expert-model-parallel-size", "--ep", FT_UINT, OFF(ep), 1, 65536, NULL, NULL},
  [F_VP] = {F_VP, "parallel.virtual_stages", "--virtual-pipeline-model-parallel-size", "--vp", FT_UINT, OFF(vp), 1, 1024, NULL, NULL},
  [F_SP] = {F_SP, "parallel.sequence_parallel", "--sequence-parallel", "--sp", FT_BOOL, OFF(sequence_parallel), 0, 0, NULL, NULL},
  [F_SCHEDULE] = {F_SCHEDULE, "parallel.schedule", NULL, NULL, FT_ENUM, OFF(schedule), 0, 0, schedule_names, NULL},
  [F_ZERO] = {F_ZERO, "parallel.zero_stage", "--zero-stage", NULL, FT_UINT, OFF(zero_stage), 0, 3, NULL, NULL},
  [F_FSDP] = {F_FSDP, "parallel.fsdp", "--use-torch-fsdp2", NULL, FT_BOOL, NONE, 0, 0, NULL, NULL},
  [F_BUCKET] = {F_BUCKET, "parallel.bucket_size", NULL, NULL, FT_SIZE, OFF(bucket_size), 0, 0, NULL, NULL},
  [F_STAGE_LAYERS] = {F_STAGE_LAYERS, "parallel.stage_layers", NULL, NULL, FT_ENUM, NONE, 0, 0, NULL, NULL},
  [F_FIRST_STAGE] = {F_FIRST_STAGE, "parallel.first_stage_layers", "--decoder-first-pipeline-num-layers", NULL, FT_UINT, OFF(first_stage_layers), 1, 100000, NULL, NULL},
  [F_LAST_STAGE] = {F_LAST_STAGE, "parallel.last_stage_layers", "--decoder-last-pipeline-num-layers", NULL, FT_UINT, OFF(last_stage_layers), 1, 100000, NULL, NULL},
  [F_ACCOUNT_EMB] = {F_ACCOUNT_EMB, "parallel.account_for_embedding", "--account-for-embedding-in-pipeline-split", NULL, FT_BOOL, OFF(account_embedding), 0, 0, NULL, NULL},
  [F_ACCOUNT_LOSS] = {F_ACCOUNT_LOSS, "parallel.account_for_loss", "--account-for-loss-in-pipeline-split", NULL, FT_BOOL, OFF(account_loss), 0, 0, NULL, NULL},
  [F_OVERLAP_DP] = {F_OVERLAP_DP, "parallel.overlap.dp_grads", "--overlap-grad-reduce", NULL, FT_BOOL, OFF(overlap_dp_grads), 0, 0, NULL, NULL},
  [F_OVERLAP_TP] = {F_OVERLAP_TP, "parallel.overlap.tp_comm", "--tp-comm-overlap", NULL, FT_BOOL, OFF(overlap_tp_comm), 0, 0, NULL, NULL},
  [F_OVERLAP_PARAM] = {F_OVERLAP_PARAM, "parallel.overlap.param_gather", "--overlap-param-gather", NULL, FT_BOOL, OFF(overlap_param_gather), 0, 0, NULL, NULL},
  [F_ORDER] = {F_ORDER, "placement.order", NULL, NULL, FT_ENUM, NONE, 0, 0, NULL, NULL},
  [F_RANKS] = {F_RANKS, "placement.ranks", NULL, NULL, FT_ENUM, NONE, 0, 0, NULL, NULL},
  [F_OFFLOAD] = {F_OFFLOAD, "offload.optimizer", "--optimizer-cpu-offload", NULL, FT_BOOL, OFF(offload_optimizer), 0, 0, NULL, NULL},
};

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

const Field *fs_workload_field(FieldId id)
{
  g_return_val_if_fail((guint)id < F_N, NULL);
  return &fields[id];
}

/* The key after the last dot: "tp" for "parallel.tp". */
static const char *short_key(const char *path)
{
  const char *dot = strrchr(path, '.');
  return dot ? dot + 1 : path;
}

const Field *fs_workload_field_by_name(const char *name)
{
  if (name == NULL)
    return NULL;
  for (guint i = 0; i < F_N; i++) {
    const Field *f = &fields[i];
    if (f->offset == NONE && i != F_FSDP)
      continue; /* placement: YAML only */
    if (strcmp(name, f->path) == 0 || (f->megatron && strcmp(name, f->megatron) == 0) ||
        (f->flag && strcmp(name, f->flag) == 0))
      return f;
    /* "tp=8" and "--tp=8" name a field by its last path component too. */
    const char *bare = g_str_has_prefix(name, "--") ? name + 2 : name;
    if (strcmp(bare, short_key(f->path)) == 0 || strcmp(bare, f->path) == 0)
      return f;
  }
  return NULL;
}

const char *fs_workload_enum_name(const Field *f, int value)
{
  for (guint i = 0; f->names && f->names[i]; i++)
    if ((f->values ? f->values[i] : (int)i) == value)
      return f->names[i];
  return "?";
}

static gboolean bad_value(GError **error, const Field *f, const char *text, const char *expected)
{
  g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_OVERRIDE, "expected %s for %s, got \"%s\"",
              expected, f->path, text ? text : "");
  return FALSE;
}

/* See spec-fields.h.  Also: the text is read by the field's type (an integer within the field's
 * bounds, true/false/yes/no/1/0 with NULL meaning true, a non-negative number, a size, or an
 * enum name) and stored at the field's offset in w.  Returns FALSE with
 * FS_WORKLOAD_ERROR_OVERRIDE set, saying what was expected, when the text does not fit. */
gboolean fs_workload_field_set_text(FsWorkload *w, const Field *f, const char *text, GError **error)
{
  char *base = (char *)w;
  switch (f->type) {
  case FT_UINT: {
    int64_t v;
    if (text == NULL || !fs_parse_int(text, &v, NULL) || v < (int64_t)f->min || v > (int64_t)f->max) {
      g_autofree char *exp = g_strdup_printf("an integer from %u to %u", f->min, f->max);
      return bad_value(error, f, text, exp);
    }
    *(guint *)(base + f->offset) = (guint)v;
    return TRUE;
  }
  case FT_BOOL: {
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
  case FT_DOUBLE: {
    double v;
    if (text == NULL || !fs_parse_number(text, &v, NULL) || !(v >= 0))
      return bad_value(error, f, text, "a non-negative number");
    *(double *)(base + f->offset) = v;
    return TRUE;
  }
  case FT_SIZE: {
    uint64_t v;
    if (text == NULL || !fs_parse_size(text, &v, NULL))
      return bad_value(error, f, text, "a size like \"25 MB\"");
    *(uint64_t *)(base + f->offset) = v;
    return TRUE;
  }
  case FT_ENUM: {
    guint i;
    if (f->names != NULL && fs_names_index(f->names, G_MAXUINT, text, &i)) {
      *(int *)(base + f->offset) = f->values ? f->values[i] : (int)i;
      return TRUE;
    }
    g_autofree char *list = f->names ? g_strjoinv(", ", (char **)f->names) : g_strdup("");
    g_autofree char *exp = g_strdup_printf("one of %s", list);
    return bad_value(error, f, text, exp);
  }
  }
  g_return_val_if_reached(FALSE);
}

/* Every accepted override name, built once. */
static gpointer build_names(gpointer unused)
{
  (void)unused;
  GPtrArray *a = g_ptr_array_new();
  for (guint i = 0; i < F_N; i++) {
    const Field *f = &fields[i];
    if (f->offset == NONE && i != F_FSDP)
      continue;
    if (f->megatron)
      g_ptr_array_add(a, (gpointer)f->megatron);
    if (f->flag)
      g_ptr_array_add(a, (gpointer)f->flag);
    g_ptr_array_add(a, (gpointer)f->path);
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
  const Field *f = NULL;
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
    f = &fields[aliases[a].id];
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
  if (v == NULL && f->type != FT_BOOL) {
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
    const Field *f = fs_workload_field_by_name(a);
    int al = alias_index(a);
    if (al >= 0 && args[i + 1] != NULL && alias_takes(al, args[i + 1])) {
      if (!fs_workload_apply_override(w, a, args[i + 1], error))
        return FALSE;
      i++;
      continue;
    }
    if (f != NULL && al < 0 && f->type != FT_BOOL && args[i + 1] != NULL) {
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
