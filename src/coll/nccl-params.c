/* nccl-params.c — the loader of the files in models/nccl/.  See nccl-params.h and
 * models/nccl/README.md.  Every table is declared as a schema
 * (util/schema.h, nccl-params-schema.c) and read by one walk: a table is a mapping with a
 * `source:`, rows are lists of numbers of a fixed length, and a missing
 * row, an unknown key (with "did you mean"), a wrong type or a number out
 * of range is an error naming file:line:col. */
#include "coll/nccl-params-private.h"

#include <string.h>

#include "util/datadir.h"
#include "util/error.h"
#include "util/names.h"
#include "util/schema.h"
#include "util/yaml.h"

gboolean fs_nccl_params_arch_row(const FsNcclParams *p, const char *arch, FsNcclRow *out)
{
  guint i;
  if (!fs_names_index_nocase((const char *const *)p->arch_names, p->n_archs, arch, &i))
    return FALSE;
  *out = p->arch_rows[i];
  return TRUE;
}

/* FsSchemaRead.any_key of arch_rows: appends the architecture and its row. */
static gboolean arch_row_seen(const FsSchemaField *field, const FsYamlNode *key,
                              const FsYamlNode *node, gconstpointer value, gpointer data,
                              GError **error)
{
  (void)field, (void)node, (void)error;
  FsNcclParams *p = data;
  p->arch_names = g_renew(char *, p->arch_names, p->n_archs + 2);
  p->arch_rows = g_renew(FsNcclRow, p->arch_rows, p->n_archs + 2);
  p->arch_names[p->n_archs] = g_strdup(key->value);
  p->arch_rows[p->n_archs++] = (FsNcclRow) * (const int *)value;
  p->arch_names[p->n_archs] = NULL;
  return TRUE;
}

/* A protocol's chunk_steps or slice_steps (key) lies in 1 .. the file's steps. */
static gboolean check_steps(const FsNcclParams *p, const FsYamlNode *m, const char *key,
                            guint v, GError **error)
{
  if (v >= 1 && v <= p->steps)
    return TRUE;
  fs_yaml_error(error, fs_yaml_map_get(m, key), "expected an integer from 1 to %u, got %u",
                p->steps, v);
  return FALSE;
}

/* Fills p from the root map of an NCCL parameter file: one walk of the
 * file's schema (nccl-params-schema.c) stores every table; then what the
 * tables cannot say — a protocol's steps within the file's `steps` and its
 * buffer of at least `steps` bytes, part sizes with min <= max, the
 * defaults one key takes from another.  A YAML error at the offending node and FALSE on the
 * first problem. */
static gboolean load(FsNcclParams *p, const FsYamlNode *root, GError **error)
{
  FsSchemaRead opts = {.any_key = arch_row_seen, .data = p};
  p->arch_names = g_new0(char *, 1);
  p->arch_rows = g_new0(FsNcclRow, 1);
  if (!fs_schema_read(&fs_nccl_params_file_schema, root, p, &opts, error))
    return FALSE;
  p->version = g_strdup(fs_yaml_map_get(root, "nccl_version")->value);
  p->collnet_agrs = fs_yaml_map_get(root, "collnet_allgather_reducescatter") != NULL;

  const FsYamlNode *t = fs_yaml_map_get(root, "protocols");
  for (guint i = 0; i < FS_PROTO_N; i++) {
    const char *name = fs_coll_proto_name((FsCollProto)i);
    const FsYamlNode *m = fs_yaml_map_get(t, name);
    const FsNcclProto *pr = &p->proto[i];
    if (!check_steps(p, m, "chunk_steps", pr->chunk_steps, error) ||
        !check_steps(p, m, "slice_steps", pr->slice_steps, error))
      return FALSE;
    if (pr->buffer < p->steps) {
      fs_yaml_error(error, fs_yaml_map_get(m, "buffer"),
                    "protocol %s needs a buffer of at least %u bytes (one per step)", name,
                    p->steps);
      return FALSE;
    }
    if (pr->slice_steps > pr->chunk_steps) {
      fs_yaml_error(error, fs_yaml_map_get(m, "slice_steps"),
                    "protocol %s: slice_steps (%u) must not exceed chunk_steps (%u)", name,
                    pr->slice_steps, pr->chunk_steps);
      return FALSE;
    }
  }

  t = fs_yaml_map_get(root, "bandwidth_factors");
  if (fs_yaml_map_get(t, "ring_ll128_one_rank_per_node") == NULL)
    p->f_ring_ll128_one_ppn = p->f_ring_ll128;

  t = fs_yaml_map_get(root, "p2p_schedule");
  if (t != NULL) {
    static const char *const parts[] = {"part_net", "part_host"};
    const double *vals[] = {p->p2p.part_net, p->p2p.part_host};
    for (guint i = 0; i < G_N_ELEMENTS(parts); i++)
      if (vals[i][1] < vals[i][0]) {
        fs_yaml_error(error, fs_yaml_map_get(t, parts[i]),
                      "expected [min, max] part sizes in chunks with 0 < min <= max");
        return FALSE;
      }
    p->p2p.on = TRUE;
  }
  return TRUE;
}

static FsNcclParams *from_doc(FsYamlDoc *doc, const char *path, GError **error)
{
  const FsYamlNode *root = fs_yaml_doc_root(doc);
  if (root == NULL) {
    fs_set_error_at(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE, path, 1, 1,
                    "empty file; expected the NCCL parameter tables");
    return NULL;
  }
  FsNcclParams *p = g_new0(FsNcclParams, 1);
  p->file = g_strdup(path);
  if (!load(p, root, error)) {
    fs_nccl_params_free(p);
    return NULL;
  }
  return p;
}

FsNcclParams *fs_nccl_params_load(const char *path, GError **error)
{
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_file(path, error);
  return doc != NULL ? from_doc(doc, path, error) : NULL;
}

FsNcclParams *fs_nccl_params_load_string(const char *text, gssize len, const char *name,
                                         GError **error)
{
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_string(text, len, name, error);
  return doc != NULL ? from_doc(doc, name, error) : NULL;
}

char *fs_nccl_params_default_path(void)
{
  return g_build_filename(fs_datadir(FS_DATA_MODELS), "nccl", "nccl.yaml", NULL);
}

FsNcclParams *fs_nccl_params_load_default(GError **error)
{
  g_autofree char *path = fs_nccl_params_default_path();
  return fs_nccl_params_load(path, error);
}

void fs_nccl_params_free(FsNcclParams *p)
{
  if (p == NULL)
    return;
  g_free(p->file);
  g_free(p->version);
  fs_tuner_plugin_free(p->tuner_plugin);
  g_strfreev(p->arch_names);
  g_free(p->arch_rows);
  g_free(p);
}

uint64_t fs_nccl_params_chunk_bytes(const FsNcclParams *p, FsCollProto proto)
{
  const FsNcclProto *pr = &p->proto[proto];
  uint64_t c = (uint64_t)((double)(pr->buffer / p->steps * pr->chunk_steps) * pr->payload);
  return MAX(c, 1);
}

uint64_t fs_nccl_params_slice_bytes(const FsNcclParams *p, FsCollProto proto)
{
  const FsNcclProto *pr = &p->proto[proto];
  uint64_t c = (uint64_t)((double)(pr->buffer / p->steps * pr->slice_steps) * pr->payload);
  return MAX(c, 1);
}

/* See nccl-params.h: NCCL's computeColl for CollNetChain (src/enqueue.cc), with nBytes the
 * whole buffer and chunkSteps 1. */
uint64_t fs_nccl_params_collnet_chain_chunk(const FsNcclParams *p, uint64_t nbytes, guint nchannels,
                                            guint depth)
{
  if (p->collnet_chain_chunk_max == 0)
    return 0;
  uint64_t step = p->proto[FS_PROTO_SIMPLE].buffer / MAX(p->steps, 1u);
  uint64_t chunk = MAX(MIN(p->collnet_chain_chunk_max, step), 1);
  uint64_t per = nbytes / MAX(nchannels, 1u);
  for (guint i = 0; i < 3; i++)
    chunk = fs_nccl_chunk_halve(chunk, per, (double)depth * p->collnet_chain_chunk_loops[i],
                                p->collnet_chain_chunk_floor[i]);
  return chunk;
}

uint64_t fs_nccl_chunk_halve(uint64_t chunk, uint64_t per_channel, double min_chunks, double floor)
{
  while (chunk > 1 && (double)chunk > floor && (double)(per_channel / chunk) < min_chunks)
    chunk /= 2;
  return chunk;
}

guint fs_nccl_params_nvls_channels(const FsNcclParams *p, FsNcclRow row, gboolean multi_node)
{
  guint v = row == FS_NCCL_ROW_BLACKWELL ? p->nvls_channels_sm100[multi_node ? 1 : 0] : 0;
  return v > 0 ? v : p->nvls_channels;
}

void fs_nccl_params_channels(const FsNcclParams *p, guint *ring, guint *nvls)
{
  guint cap = MAX(p->max_channels, 1u);
  guint min_ctas = MIN(p->env_min_ctas, cap), max_ctas = p->env_max_ctas ? MIN(p->env_max_ctas, cap) : cap;
  if (min_ctas > max_ctas) /* src/init.cc: "minCTAs is larger than maxCTAs, set both to" max */
    min_ctas = max_ctas;
  guint max_nch = p->env_max_nchannels ? MIN(p->env_max_nchannels, cap) : cap;
  guint min_nch = MIN(p->env_min_nchannels, cap);
  /* src/graph/connect.cc: nChannels = min(maxNchannels, nChannels, maxCTAs), then copied up to
   * max(minNchannels, minCTAs) (copyChannels never goes past MAXCHANNELS). */
  guint r = MIN(MIN(*ring, max_nch), max_ctas);
  r = MAX(r, MIN(MAX(min_nch, min_ctas), cap));
  *ring = MAX(r, 1u);
  /* src/transport/nvls.cc: nvlsChannels = max(minCTAs, min(maxCTAs, channels)). */
  if (*nvls > 0)
    *nvls = MAX(min_ctas, MIN(max_ctas, *nvls));
}
