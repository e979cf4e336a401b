/* coll.h — collective operations, datatypes, reduction ops and protocols:
 * the names, and nccl-tests' size and bus-bandwidth conventions.
 *
 * Every enum here appears in output (the nccl-tests table, JSON) or on the
 * command line, so each comes from one X-macro list: the C name, the string
 * and the per-entry figures cannot drift apart.
 *
 * nccl-tests conventions (NVIDIA/nccl-tests src/<coll>.cu, *GetCollByteCount
 * and *GetBw): for a requested size S bytes of a datatype of w bytes on n
 * ranks, count = S / w; collectives whose per-rank part is S/n round that
 * part down to a multiple of 16 bytes.  algbw = algbw_bytes / time and
 * busbw = algbw × factor (fs_coll_busbw_factor).  Pure functions; no
 * allocation; no errors.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/* Collective operations: id, name (command line, JSON), nccl-tests program
 * name (the "# Collective test starting:" line), reduces (combines data
 * with a redop), rooted (has a root), and the text of the "redop" column
 * when it is fixed (NULL: the redop's name, as nccl-tests prints for the
 * tests that loop over reduction ops, sendrecv included). */
#define FS_COLL_OPS(X)                                                            \
  X(ALL_REDUCE, "all_reduce", "all_reduce_perf", TRUE, FALSE, NULL)               \
  X(ALL_GATHER, "all_gather", "all_gather_perf", FALSE, FALSE, "none")            \
  X(REDUCE_SCATTER, "reduce_scatter", "reduce_scatter_perf", TRUE, FALSE, NULL)   \
  X(BROADCAST, "broadcast", "broadcast_perf", FALSE, TRUE, "none")                \
  X(REDUCE, "reduce", "reduce_perf", TRUE, TRUE, NULL)                            \
  X(ALLTOALL, "alltoall", "alltoall_perf", FALSE, FALSE, "none")                  \
  X(SENDRECV, "sendrecv", "sendrecv_perf", FALSE, FALSE, NULL)                    \
  X(GATHER, "gather", "gather_perf", FALSE, TRUE, "none")                         \
  X(SCATTER, "scatter", "scatter_perf", FALSE, TRUE, "none")                      \
  X(HYPERCUBE, "hypercube", "hypercube_perf", FALSE, FALSE, "")                   \
  X(BARRIER, "barrier", "barrier_perf", FALSE, FALSE, "none")

typedef enum {
#define X(id, name, bin, red, root, label) FS_COLL_##id,
  FS_COLL_OPS(X)
#undef X
  FS_COLL_N_OPS
} FsCollOp;

/* Datatypes as nccl-tests names them (-d), with their size in bytes. */
#define FS_COLL_DTYPES(X)     \
  X(INT8, "int8", 1)          \
  X(UINT8, "uint8", 1)        \
  X(INT32, "int32", 4)        \
  X(UINT32, "uint32", 4)      \
  X(INT64, "int64", 8)        \
  X(UINT64, "uint64", 8)      \
  X(HALF, "half", 2)          \
  X(FLOAT, "float", 4)        \
  X(DOUBLE, "double", 8)      \
  X(BFLOAT16, "bfloat16", 2)  \
  X(F8E4M3, "f8e4m3", 1)      \
  X(F8E5M2, "f8e5m2", 1)

typedef enum {
#define X(id, name, size) FS_COLL_DT_##id,
  FS_COLL_DTYPES(X)
#undef X
  FS_COLL_N_DTYPES
} FsCollDtype;

/* Reduction operators (-o in nccl-tests). */
#define FS_COLL_REDOPS(X) \
  X(SUM, "sum")           \
  X(PROD, "prod")         \
  X(MAX, "max")           \
  X(MIN, "min")           \
  X(AVG, "avg")

typedef enum {
#define X(id, name) FS_COLL_REDOP_##id,
  FS_COLL_REDOPS(X)
#undef X
  FS_COLL_N_REDOPS
} FsCollRedop;

/* NCCL protocols, in NCCL's index order (LL, LL128, Simple). */
#define FS_COLL_PROTOS(X) \
  X(LL, "LL")             \
  X(LL128, "LL128")       \
  X(SIMPLE, "Simple")

typedef enum {
#define X(id, name) FS_PROTO_##id,
  FS_COLL_PROTOS(X)
#undef X
  FS_PROTO_N
} FsCollProto;

const char *fs_coll_op_name(FsCollOp op);
/* The nccl-tests program name ("all_reduce_perf"). */
const char *fs_coll_op_binary(FsCollOp op);
gboolean fs_coll_op_reduces(FsCollOp op);
gboolean fs_coll_op_rooted(FsCollOp op);
/* The "redop" column for op run with redop r ("sum", "none", ""). */
const char *fs_coll_op_redop_label(FsCollOp op, FsCollRedop r);
/* Accepts "all_reduce", "allreduce", "all-reduce", "AllReduce" (case and
 * separators are ignored).  FALSE for an unknown name. */
gboolean fs_coll_op_from_name(const char *name, FsCollOp *out);

const char *fs_coll_dtype_name(FsCollDtype dt);
guint fs_coll_dtype_size(FsCollDtype dt);
/* Also accepts nccl-tests' aliases: "float32"/"fp32" → float, "fp16"/"float16"
 * → half, "bf16" → bfloat16, "fp64"/"float64" → double, "char" → int8,
 * "int" → int32. */
gboolean fs_coll_dtype_from_name(const char *name, FsCollDtype *out);

const char *fs_coll_redop_name(FsCollRedop r);
gboolean fs_coll_redop_from_name(const char *name, FsCollRedop *out);

const char *fs_coll_proto_name(FsCollProto p);
/* Case-insensitive ("ll128", "simple"). */
gboolean fs_coll_proto_from_name(const char *name, FsCollProto *out);

/* nccl-tests' sizes for one row of its table. */
typedef struct {
  uint64_t count;        /* elements printed in the "count" column (paramcount) */
  uint64_t size;         /* bytes printed in the "size" column: max(send, recv) */
  uint64_t send_bytes;   /* per-rank send buffer */
  uint64_t recv_bytes;   /* per-rank receive buffer */
  uint64_t algbw_bytes;  /* numerator of algbw */
  /* The data each rank contributes in the collective's own terms: the
   * buffer for all_reduce/broadcast/reduce/sendrecv, the per-rank block for
   * all_gather/reduce_scatter/alltoall/gather/scatter/hypercube. */
  uint64_t unit_bytes;
} FsCollSizes;

/* Computes the sizes nccl-tests uses for `bytes` requested (-b … -e) of
 * dtype on nranks ranks. */
void fs_coll_sizes(FsCollOp op, uint64_t bytes, FsCollDtype dt, guint nranks, FsCollSizes *out);

/* TRUE when op's unit (FsCollSizes.unit_bytes) is a per-rank block: all_gather,
 * reduce_scatter, alltoall, gather, scatter and hypercube; FALSE when it is the buffer. */
gboolean fs_coll_unit_is_block(FsCollOp op);

/* The ring steps of op on n ranks, as NCCL counts them: all_reduce 2(n-1), reduce_scatter and
 * all_gather n-1; 0 for an op without a ring phase. */
guint fs_coll_ring_steps(FsCollOp op, guint n);

/* busbw / algbw: 2(n-1)/n all_reduce; (n-1)/n all_gather, reduce_scatter,
 * alltoall, gather, scatter; 1 otherwise. */
double fs_coll_busbw_factor(FsCollOp op, guint nranks);

/* algbw and busbw in GB/s (10^9 bytes/s) for a row of sizes measured at
 * time_s seconds.  time_s <= 0 gives zeros. */
void fs_coll_bandwidths(FsCollOp op, const FsCollSizes *sizes, guint nranks, double time_s,
                        double *algbw_gbps, double *busbw_gbps);

G_END_DECLS
