/* topo-private.h — the inside of FsTopo, shared by the topo module's files
 * (topo.c, loader.c, gen.c, validate.c, paths.c).  Not for other modules:
 * they use the accessors in topo.h. */
#pragma once

#include "topo/topo.h"

struct FsTopo {
  const FsCatalog *cat;     /* borrowed */
  const char *name;
  GStringChunk *strings;    /* node names, file names, host names */
  GArray *nodes;            /* FsTopoNode */
  GArray *links;            /* FsTopoLink */
  GHashTable *by_name;      /* name (in strings) -> node index */
  GPtrArray *host_names;    /* const char * (in strings) */
  GArray *host_counts;      /* int, FS_NODE_N_KINDS per host: next local index by kind */
  int fabric_counts[FS_NODE_N_KINDS];
  GPtrArray *param_names;   /* parameters after loading, declaration order */
  GArray *param_values;     /* int64_t (0 for a string parameter) */
  GPtrArray *param_strings; /* const char * (in strings), NULL for an integer parameter */
  FsTopoRouting routing;    /* the fabric's routing (topo.h) */
  gboolean finalized;
  /* Indexes built by fs_topo_finalize. */
  guint *adj_start;         /* nodes + 1 */
  FsTopoAdj *adj;           /* 2 * links */
  guint n_gpus;
  guint *gpus;              /* placement order */
  guint *host_node_start, *host_node_list;
  guint *host_gpu_start, *host_gpu_list;
  int *nv_comp;             /* per GPU rank: NVSwitch plane id, or -1 */
  guint *nv_sw_links;       /* per GPU rank: NVLinks into that plane */
};

/* Returns a copy of s owned by the topology (NULL stays NULL). */
const char *fs_topo_intern(FsTopo *topo, const char *s);
