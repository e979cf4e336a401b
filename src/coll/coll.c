/* coll.c — names of collective ops, datatypes, redops and protocols, and
 * nccl-tests' size and bandwidth conventions.  See coll.h. */
#include "coll/coll.h"

#include <string.h>

#include "util/names.h"

typedef struct {
  const char *name, *binary, *label;
  gboolean reduces, rooted;
} OpInfo;

static const OpInfo op_info[FS_COLL_N_OPS] = {
#define X(id, name, bin, red, root, label) {name, bin, label, red, root},
  FS_COLL_OPS(X)
#undef X
};

static const char *const dtype_names[FS_COLL_N_DTYPES] = {
#define X(id, name, size) name,
  FS_COLL_DTYPES(X)
#undef X
};

static const guint dtype_sizes[FS_COLL_N_DTYPES] = {
#define X(id, name, size) size,
  FS_COLL_DTYPES(X)
#undef X
};

static const char *const redop_names[FS_COLL_N_REDOPS] = {
#define X(id, name) name,
  FS_COLL_REDOPS(X)
#undef X
};

static const char *const proto_names[FS_PROTO_N] = {
#define X(id, name) name,
  FS_COLL_PROTOS(X)
#undef X
};

const char *fs_coll_op_name(FsCollOp op)
{
  g_return_val_if_fail(op < FS_COLL_N_OPS, "?");
  return op_info[op].name;
}

const char *fs_coll_op_binary(FsCollOp op)
{
  g_return_val_if_fail(op < FS_COLL_N_OPS, "?");
  return op_info[op].binary;
}

gboolean fs_coll_op_reduces(FsCollOp op)
{
  g_return_val_if_fail(op < FS_COLL_N_OPS, FALSE);
  return op_info[op].reduces;
}

gboolean fs_coll_op_rooted(FsCollOp op)
{
  g_return_val_if_fail(op < FS_COLL_N_OPS, FALSE);
  return op_info[op].rooted;
}

const char *fs_coll_op_redop_label(FsCollOp op, FsCollRedop r)
{
  g_return_val_if_fail(op < FS_COLL_N_OPS, "?");
  return op_info[op].label ? op_info[op].label : fs_coll_redop_name(r);
}

/* Lower-cases name and drops '_', '-' and ' ' into buf (size n). */
static void squash(const char *name, char *buf, gsize n)
{
  gsize j = 0;
  for (const char *p = name; *p && j + 1 < n; p++)
    if (*p != '_' && *p != '-' && *p != ' ')
      buf[j++] = g_ascii_tolower(*p);
  buf[j] = '\0';
}

gboolean fs_coll_op_from_name(const char *name, FsCollOp *out)
{
  char want[64], have[64];
  squash(name, want, sizeof want);
  for (guint i = 0; i < FS_COLL_N_OPS; i++) {
    squash(op_info[i].name, have, sizeof have);
    if (strcmp(want, have) == 0) {
      *out = (FsCollOp)i;
      return TRUE;
    }
  }
  return FALSE;
}

FS_NAMES_DEFINE_NAME(FsCollDtype, fs_coll_dtype, dtype_names, FS_COLL_N_DTYPES)

guint fs_coll_dtype_size(FsCollDtype dt)
{
  g_return_val_if_fail(dt < FS_COLL_N_DTYPES, 1);
  return dtype_sizes[dt];
}

gboolean fs_coll_dtype_from_name(const char *name, FsCollDtype *out)
{
  static const struct {
    const char *alias;
    FsCollDtype dt;
  } aliases[] = {
    {"char", FS_COLL_DT_INT8},     {"int", FS_COLL_DT_INT32},
    {"float32", FS_COLL_DT_FLOAT}, {"fp32", FS_COLL_DT_FLOAT},
    {"float16", FS_COLL_DT_HALF},  {"fp16", FS_COLL_DT_HALF},
    {"bf16", FS_COLL_DT_BFLOAT16}, {"float64", FS_COLL_DT_DOUBLE},
    {"fp64", FS_COLL_DT_DOUBLE},   {"fp8", FS_COLL_DT_F8E4M3},
  };
  guint i;
  if (fs_names_index_nocase(dtype_names, FS_COLL_N_DTYPES, name, &i)) {
    *out = (FsCollDtype)i;
    return TRUE;
  }
  for (i = 0; i < G_N_ELEMENTS(aliases); i++)
    if (g_ascii_strcasecmp(name, aliases[i].alias) == 0) {
      *out = aliases[i].dt;
      return TRUE;
    }
  return FALSE;
}

FS_NAMES_DEFINE(FsCollRedop, fs_coll_redop, redop_names, FS_COLL_N_REDOPS, fs_names_index_nocase)
FS_NAMES_DEFINE(FsCollProto, fs_coll_proto, proto_names, FS_PROTO_N, fs_names_index_nocase)

/* See coll.h: as nccl-tests, the per-rank count of the gathering and scattering ops is rounded
 * down to a 16-byte multiple of elements, and algbw_bytes is the payload its algbw divides
 * (none for a barrier). Pure arithmetic. */
void fs_coll_sizes(FsCollOp op, uint64_t bytes, FsCollDtype dt, guint nranks, FsCollSizes *out)
{
  g_return_if_fail(out != NULL && nranks > 0);
  const uint64_t w = fs_coll_dtype_size(dt);
  const uint64_t n = nranks;
  const uint64_t count = bytes / w;
  /* nccl-tests: base = (count/nranks) & ~(16/eltSize - 1). */
  const uint64_t base = (count / n) & ~(uint64_t)(16 / w - 1);
  uint64_t send = count, recv = count, param = count;
  switch (op) {
  case FS_COLL_ALL_GATHER:
  case FS_COLL_GATHER:
  case FS_COLL_HYPERCUBE:
    send = base, recv = base * n, param = base;
    break;
  case FS_COLL_REDUCE_SCATTER:
  case FS_COLL_SCATTER:
    send = base * n, recv = base, param = base;
    break;
  case FS_COLL_ALLTOALL:
    send = recv = base * n, param = base;
    break;
  default:
    break;
  }
  memset(out, 0, sizeof *out);
  out->count = param;
  out->send_bytes = send * w;
  out->recv_bytes = recv * w;
  out->size = MAX(out->send_bytes, out->recv_bytes);
  out->unit_bytes = param * w;
  if (op == FS_COLL_BARRIER) {
    /* A barrier moves no payload: its rows show time only. */
    out->unit_bytes = 0;
    out->algbw_bytes = 0;
  } else if (op == FS_COLL_HYPERCUBE) {
    out->algbw_bytes = param * w * (n - 1);
  } else {
    out->algbw_bytes = fs_coll_unit_is_block(op) ? param * w * n : param * w;
  }
}

gboolean fs_coll_unit_is_block(FsCollOp op)
{
  switch (op) {
  case FS_COLL_ALL_GATHER:
  case FS_COLL_REDUCE_SCATTER:
  case FS_COLL_ALLTOALL:
  case FS_COLL_GATHER:
  case FS_COLL_SCATTER:
  case FS_COLL_HYPERCUBE:
    return TRUE;
  default:
    return FALSE;
  }
}

guint fs_coll_ring_steps(FsCollOp op, guint n)
{
  switch (op) {
  case FS_COLL_ALL_REDUCE:
    return 2 * (n - 1);
  case FS_COLL_REDUCE_SCATTER:
  case FS_COLL_ALL_GATHER:
    return n - 1;
  default:
    return 0;
  }
}

double fs_coll_busbw_factor(FsCollOp op, guint nranks)
{
  g_return_val_if_fail(nranks > 0, 1.0);
  const double n = nranks;
  switch (op) {
  case FS_COLL_ALL_REDUCE:
    return 2.0 * (n - 1) / n;
  case FS_COLL_ALL_GATHER:
  case FS_COLL_REDUCE_SCATTER:
  case FS_COLL_ALLTOALL:
  case FS_COLL_GATHER:
  case FS_COLL_SCATTER:
    return (n - 1) / n;
  default:
    return 1.0;
  }
}

void fs_coll_bandwidths(FsCollOp op, const FsCollSizes *sizes, guint nranks, double time_s,
                        double *algbw_gbps, double *busbw_gbps)
{
  double alg = time_s > 0 ? (double)sizes->algbw_bytes / 1.0e9 / time_s : 0.0;
  if (algbw_gbps)
    *algbw_gbps = alg;
  if (busbw_gbps)
    *busbw_gbps = alg * fs_coll_busbw_factor(op, nranks);
}
