/* nccl-params-private.h — what the loader of models/nccl/ files
 * (nccl-params.c) takes from their schema (nccl-params-schema.c).  Not for
 * other modules: they read FsNcclParams (nccl-params.h). */
#pragma once

#include "coll/nccl-params.h"
#include "util/schema.h"

G_BEGIN_DECLS

/* The schema of a whole parameters file: every table, walked once by
 * fs_schema_read into an FsNcclParams. */
extern const FsSchema fs_nccl_params_file_schema;

G_END_DECLS
