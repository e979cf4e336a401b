/* spec-fields.h — internal to the workload spec: the table of scalar
 * fields that the YAML loader and the command-line overrides share, and
 * where each field's value came from (for messages).
 *
 * One row per field: its YAML path ("parallel.tp"), its Megatron-LM flag
 * and short flag (or NULL), its type and where it lives in FsWorkload.
 */
#pragma once

#include <stddef.h>

#include "workload/spec.h"

typedef enum {
  FT_UINT,    /* guint, in [min, max] */
  FT_BOOL,    /* gboolean */
  FT_DOUBLE,  /* double, >= 0 */
  FT_SIZE,    /* uint64_t bytes ("25 MB") */
  FT_ENUM,    /* an int-sized enum, by name */
} FieldType;

/* Field ids, in table order. */
typedef enum {
  F_GPUS,
  F_LAYERS, F_HIDDEN, F_FFN, F_HEADS, F_KV_HEADS, F_HEAD_DIM, F_VOCAB, F_SEQ, F_MAX_POS,
  F_MLP, F_NORM, F_POSITION, F_BIAS, F_TIED, F_DROPOUT, F_CAUSAL, F_FLASH,
  F_EXPERTS, F_TOPK, F_CAPACITY, F_MOE_FFN, F_MOE_EVERY,
  F_GLOBAL, F_MICRO, F_GRAD_ACCUM, F_DTYPE, F_OPTIMIZER, F_RECOMPUTE, F_GRAD_FP32, F_RESERVE,
  F_TP, F_PP, F_DP, F_CP, F_EP, F_VP, F_SP, F_SCHEDULE, F_ZERO, F_FSDP, F_BUCKET,
  F_STAGE_LAYERS, F_FIRST_STAGE, F_LAST_STAGE, F_ACCOUNT_EMB, F_ACCOUNT_LOSS,
  F_OVERLAP_DP, F_OVERLAP_TP, F_OVERLAP_PARAM,
  F_ORDER, F_RANKS, F_OFFLOAD,
  F_N
} FieldId;

typedef struct {
  FieldId id;
  const char *path;
  const char *megatron;   /* "--tensor-model-parallel-size" or NULL */
  const char *flag;       /* "--tp" or NULL */
  FieldType type;
  size_t offset;          /* in FsWorkload; (size_t)-1: stored in priv or special */
  guint min, max;         /* FT_UINT */
  const char *const *names; /* FT_ENUM: NULL-terminated */
  const int *values;      /* FT_ENUM: value of names[i] (NULL: i) */
} Field;

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

const Field *fs_workload_field(FieldId id);
/* The field an override name refers to, or NULL. */
const Field *fs_workload_field_by_name(const char *name);
/* "fp8" for an enum field's value, etc.  Borrowed. */
const char *fs_workload_enum_name(const Field *f, int value);
/* Sets field f of w from text (an override); the message has no position. */
gboolean fs_workload_field_set_text(FsWorkload *w, const Field *f, const char *text, GError **error);
