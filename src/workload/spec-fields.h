/* spec-fields.h — internal to the workload spec: the field tables
 * (util/schema.h) that the YAML loader and the command-line overrides
 * share, and where each field's value came from (for messages).
 *
 * One row per key: its type, range, where it lives in FsWorkload, its
 * Megatron-LM option and short option (the row's aliases), and its id
 * (FieldId) for the positions below.
 */
#pragma once

#include <stddef.h>

#include "util/schema.h"
#include "workload/spec.h"

/* Field ids (FsSchemaField.id of the workload's tables; 0 is "none"). */
typedef enum {
  F_NONE,
  F_GPUS,
  F_LAYERS, F_HIDDEN, F_FFN, F_HEADS, F_KV_HEADS, F_HEAD_DIM, F_VOCAB, F_SEQ, F_MAX_POS,
  F_MLP, F_NORM, F_POSITION, F_BIAS, F_TIED, F_DROPOUT, F_CAUSAL, F_FLASH,
  F_EXPERTS, F_TOPK, F_CAPACITY, F_MOE_FFN, F_MOE_EVERY,
  F_GLOBAL, F_MICRO, F_GRAD_ACCUM, F_DTYPE, F_OPTIMIZER, F_RECOMPUTE, F_GRAD_FP32, F_RESERVE,
  F_TP, F_PP, F_DP, F_CP, F_EP, F_VP, F_SP, F_SCHEDULE, F_ZERO, F_FSDP, F_BUCKET,
  F_STAGE_LAYERS, F_FIRST_STAGE, F_LAST_STAGE, F_ACCOUNT_EMB, F_ACCOUNT_LOSS,
  F_OVERLAP_DP, F_OVERLAP_TP, F_OVERLAP_PARAM, F_OVERLAP_EP, F_OVERLAP_COST, F_FP8_RECIPE, F_FP8_PARAM,
  F_ORDER, F_RANKS, F_OFFLOAD, F_LAUNCH,
  F_N
} FieldId;

/* One entry of a layer list, as fs_workload_layer_schema reads it. */
typedef struct {
  const char *name;       /* NULL: "layer" */
  double params, flops;
  uint64_t activations;   /* bytes */
  int kind;               /* FsKernelClass */
  guint repeat;
} LayerEntry;

/* The tables of the workload file, one per mapping (util/schema.h). */
extern const FsSchema fs_workload_top_schema;     /* the document */
extern const FsSchema fs_workload_model_schema;   /* model: a transformer */
extern const FsSchema fs_workload_layers_schema;  /* model: kind: layers */
extern const FsSchema fs_workload_layer_schema;   /* one entry of model.layers */
extern const FsSchema fs_workload_training_schema;
extern const FsSchema fs_workload_parallel_schema; /* overlap nested */
extern const FsSchema fs_workload_placement_schema;
extern const FsSchema fs_workload_offload_schema;
extern const FsSchema fs_workload_framework_schema;

/* Where a field's value came from. */
typedef struct {
  const char *file;       /* interned in priv; NULL: default or override */
  int line, col;
  char *override;         /* "--tp=3" when an override set it (owned) */
  gboolean given;
} FieldPos;

struct FsWorkloadPriv {
  FieldPos pos[F_N];
  FieldPos model_pos, training_pos, parallel_pos, top_pos;
  GStringChunk *files;    /* interned file names */
  gboolean fsdp;
};

/* The field of id, and its YAML path ("parallel.tp"); static. */
const FsSchemaField *fs_workload_field(FieldId id);
const char *fs_workload_field_path(FieldId id);
/* The field an override name refers to, or NULL. */
const FsSchemaField *fs_workload_field_by_name(const char *name);
/* "fp8" for an enum field's value, etc.  Borrowed. */
const char *fs_workload_enum_name(const FsSchemaField *f, int value);
/* Sets field f of w from text (an override); the message has no position. */
gboolean fs_workload_field_set_text(FsWorkload *w, const FsSchemaField *f, const char *text,
                                    GError **error);
