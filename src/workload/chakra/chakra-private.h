/* chakra-private.h — the nodes of a Chakra trace as the reader hands them
 * to the graph builder (chakra-read.c → chakra-graph.c).  Internal. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "workload/chakra/chakra.h"

G_BEGIN_DECLS

/* Picoseconds per microsecond (Chakra's durations are in microseconds). */
#define CK_PS_PER_US INT64_C(1000000)

/* Chakra's NodeType and CollectiveCommType values (et_def.proto). */
enum {
  CK_INVALID_NODE = 0, CK_METADATA_NODE = 1, CK_MEM_LOAD_NODE = 2, CK_MEM_STORE_NODE = 3,
  CK_COMP_NODE = 4, CK_COMM_SEND_NODE = 5, CK_COMM_RECV_NODE = 6, CK_COMM_COLL_NODE = 7,
};

/* One node, with the attributes fabricsim reads (has_* says whether the
 * trace had them). */
typedef struct {
  uint64_t id;
  char *name;
  int type;
  GArray *deps;                 /* uint64_t: ctrl_deps then data_deps */
  guint n_ctrl;                 /* how many of deps are ctrl_deps */
  uint64_t duration_us;
  gboolean has_comm_type, has_comm_size, has_src, has_dst, has_tag;
  int64_t comm_type, comm_size, comm_src, comm_dst, comm_tag;
  char *pg_name;                /* NULL: none */
  gboolean has_num_ops, has_tensor_size;
  double num_ops, tensor_size;
  gboolean is_cpu_op;
  gboolean has_duration_ps;     /* fabricsim_duration_ps */
  int64_t duration_ps;
  gboolean has_stream;          /* stream: the CUDA stream (Chakra's PyTorch converter) */
  int64_t stream;
  char *inputs_values;          /* METADATA_NODE: inputs.values, or NULL */
  /* Where it came from, for messages: "file: byte N" or "file:L:C". */
  char *where;
} CkNode;

typedef struct {
  char *name;                   /* the file's name as given */
  guint rank;
  GArray *nodes;                /* CkNode */
} CkFile;

/* Parses one file's bytes (the name's extension picks JSON or binary) into
 * f->nodes.  Errors as chakra.h says. */
gboolean ck_parse(const char *name, const guint8 *data, gsize len, CkFile *f, GError **error);
void ck_file_clear(CkFile *f);
void ck_node_clear(CkNode *n);

/* Parses an ASTRA-sim text workload (the Text input of Chakra's converter;
 * chakra-text.c) into n ranks' nodes, files[0 … n-1].nodes (created here,
 * also on failure), as the converter writes them for one pass.  Errors:
 * FS_WORKLOAD_ERROR at "name:line:col: …".  Cost: linear in the text and
 * in n × the nodes of a rank. */
gboolean ck_parse_text(const char *name, const guint8 *data, gsize len, guint n, CkFile *files,
                       GError **error);

/* Builds the replay from parsed files (ranks 0 … n-1, in order). */
FsReplay *ck_build(CkFile *files, guint n, const char *title, const FsTopo *topo,
                   const FsEfficiency *eff, const FsChakraOptions *opt, FsChakraStats *stats,
                   GError **error);

G_END_DECLS
