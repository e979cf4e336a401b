/* topo.c — the topology graph: builder, indexes and accessors (see topo.h). */
#include "topo/topo.h"

#include <string.h>

#include "topo/topo-private.h"
#include "util/error.h"
#include "util/limits.h"
#include "util/names.h"

G_DEFINE_QUARK(fs-topo-error-quark, fs_topo_error)

/* Limits --------------------------------------------------------------- */

#define LIMIT_CEILING ((guint64)1 << 31)

static FsTopoLimits limits;
static gsize limits_ready;


const FsTopoLimits *fs_topo_limits(void)
{
  if (g_once_init_enter(&limits_ready)) {
    limits.names = fs_env_limit("FABRICSIM_MAX_NAMES", FS_TOPO_MAX_NAMES, LIMIT_CEILING);
    limits.nodes = fs_env_limit("FABRICSIM_MAX_NODES", FS_TOPO_MAX_NODES, LIMIT_CEILING);
    limits.links = fs_env_limit("FABRICSIM_MAX_LINKS", FS_TOPO_MAX_LINKS, LIMIT_CEILING);
    g_once_init_leave(&limits_ready, 1);
  }
  return &limits;
}

void fs_topo_set_limits(const FsTopoLimits *l)
{
  g_return_if_fail(l != NULL && l->names >= 1 && l->nodes >= 1 && l->links >= 1);
  fs_topo_limits();
  limits.names = MIN(l->names, LIMIT_CEILING);
  limits.nodes = MIN(l->nodes, LIMIT_CEILING);
  limits.links = MIN(l->links, LIMIT_CEILING);
}

static const char *const node_kind_names[] = { FS_NODE_KINDS(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE_NAME(FsNodeKind, fs_node_kind, node_kind_names, FS_NODE_N_KINDS)

FsTopo *fs_topo_new(const FsCatalog *cat, const char *name)
{
  FsTopo *t = g_new0(FsTopo, 1);
  t->cat = cat;
  t->strings = g_string_chunk_new(64 * 1024);
  t->name = g_string_chunk_insert_const(t->strings, name ? name : "topology");
  t->nodes = g_array_new(FALSE, FALSE, sizeof(FsTopoNode));
  t->links = g_array_new(FALSE, FALSE, sizeof(FsTopoLink));
  t->by_name = g_hash_table_new(g_str_hash, g_str_equal);
  t->host_names = g_ptr_array_new();
  t->host_counts = g_array_new(FALSE, TRUE, sizeof(int));
  t->param_names = g_ptr_array_new();
  t->param_values = g_array_new(FALSE, FALSE, sizeof(int64_t));
  t->param_strings = g_ptr_array_new();
  return t;
}

void fs_topo_free(FsTopo *t)
{
  if (t == NULL)
    return;
  g_string_chunk_free(t->strings);
  g_array_free(t->nodes, TRUE);
  g_array_free(t->links, TRUE);
  g_hash_table_destroy(t->by_name);
  g_ptr_array_free(t->host_names, TRUE);
  g_array_free(t->host_counts, TRUE);
  g_ptr_array_free(t->param_names, TRUE);
  g_array_free(t->param_values, TRUE);
  g_ptr_array_free(t->param_strings, TRUE);
  g_free(t->adj_start);
  g_free(t->adj);
  g_free(t->gpus);
  g_free(t->host_node_start);
  g_free(t->host_node_list);
  g_free(t->host_gpu_start);
  g_free(t->host_gpu_list);
  g_free(t->nv_comp);
  g_free(t->nv_sw_links);
  g_free(t);
}

const char *fs_topo_intern(FsTopo *t, const char *s)
{
  return s ? g_string_chunk_insert_const(t->strings, s) : NULL;
}

int fs_topo_add_host(FsTopo *t, const char *name)
{
  g_return_val_if_fail(!t->finalized, -1);
  g_ptr_array_add(t->host_names, (gpointer)fs_topo_intern(t, name));
  g_array_set_size(t->host_counts, t->host_counts->len + FS_NODE_N_KINDS);
  return (int)t->host_names->len - 1;
}

static gboolean node_kind_of_model(const FsModel *m, FsNodeKind *out)
{
  switch (m->kind) {
  case FS_MODEL_GPU: *out = FS_NODE_GPU; return TRUE;
  case FS_MODEL_CPU: *out = FS_NODE_CPU; return TRUE;
  case FS_MODEL_SWITCH: *out = FS_NODE_SWITCH; return TRUE;
  case FS_MODEL_NIC: *out = FS_NODE_NIC; return TRUE;
  default: return FALSE;
  }
}

/* See topo.h. The node's local index counts nodes of its kind in its host (or in the fabric); a
 * CPU's socket defaults to that index. Also fails with FS_TOPO_ERROR_MODEL for a model that is
 * not a node kind and FS_TOPO_ERROR_LIMIT past FABRICSIM_MAX_NODES. Name and file are interned. */
gboolean fs_topo_add_node(FsTopo *t, const char *name, const FsModel *model, int host,
                          int socket, const char *file, int line, int col, guint *index,
                          GError **error)
{
  g_return_val_if_fail(!t->finalized, FALSE);
  g_return_val_if_fail(model != NULL && name != NULL, FALSE);
  g_return_val_if_fail(host >= -1 && host < (int)t->host_names->len, FALSE);
  FsNodeKind kind;
  if (!node_kind_of_model(model, &kind)) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL, file, line, col,
                    "node \"%s\" has model \"%s\", which is a %s model; expected a gpu, cpu, "
                    "switch or nic model", name, model->name, fs_model_kind_name(model->kind));
    return FALSE;
  }
  if (t->nodes->len >= fs_topo_limits()->nodes) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_LIMIT, file, line, col,
                    "more than %" G_GUINT64_FORMAT " nodes; fabricsim topologies are limited "
                    "to that (FABRICSIM_MAX_NODES raises it)", fs_topo_limits()->nodes);
    return FALSE;
  }
  gpointer old;
  if (g_hash_table_lookup_extended(t->by_name, name, NULL, &old)) {
    const FsTopoNode *o = &g_array_index(t->nodes, FsTopoNode, GPOINTER_TO_UINT(old));
    if (o->file != NULL)
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_DUPLICATE, file, line, col,
                      "duplicate node name \"%s\" (first declared at %s:%d:%d)", name, o->file,
                      o->line, o->col);
    else
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_DUPLICATE, file, line, col,
                      "duplicate node name \"%s\"", name);
    return FALSE;
  }
  FsTopoNode n = {0};
  n.name = fs_topo_intern(t, name);
  n.kind = kind;
  n.model = model;
  n.host = host;
  n.gpu_rank = -1;
  n.reduction = kind == FS_NODE_SWITCH && model->u.sw.reduction;
  if (host >= 0) {
    n.local = g_array_index(t->host_counts, int, (guint)host * FS_NODE_N_KINDS + kind)++;
  } else {
    n.local = t->fabric_counts[kind]++;
  }
  n.socket = kind == FS_NODE_CPU ? (socket >= 0 ? socket : n.local) : -1;
  n.file = fs_topo_intern(t, file);
  n.line = line;
  n.col = col;
  guint i = t->nodes->len;
  g_array_append_val(t->nodes, n);
  g_hash_table_insert(t->by_name, (gpointer)n.name, GUINT_TO_POINTER(i));
  if (index)
    *index = i;
  return TRUE;
}

/* See topo.h. The link's bandwidth is the model's times count and its latency the model's. Also
 * fails with FS_TOPO_ERROR_MODEL for a model that is not a link model and FS_TOPO_ERROR_LIMIT
 * past FABRICSIM_MAX_LINKS. */
gboolean fs_topo_add_link(FsTopo *t, guint a, guint b, const FsModel *model, guint count,
                          const char *file, int line, int col, guint *index, GError **error)
{
  g_return_val_if_fail(!t->finalized, FALSE);
  g_return_val_if_fail(a < t->nodes->len && b < t->nodes->len && model != NULL, FALSE);
  const FsTopoNode *na = &g_array_index(t->nodes, FsTopoNode, a);
  if (model->kind != FS_MODEL_LINK) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL, file, line, col,
                    "link model \"%s\" is a %s model; expected a link model", model->name,
                    fs_model_kind_name(model->kind));
    return FALSE;
  }
  if (a == b) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, file, line, col,
                    "link from \"%s\" to itself; a link joins two different nodes", na->name);
    return FALSE;
  }
  if (t->links->len >= fs_topo_limits()->links) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_LIMIT, file, line, col,
                    "more than %" G_GUINT64_FORMAT " links; fabricsim topologies are limited "
                    "to that (FABRICSIM_MAX_LINKS raises it)", fs_topo_limits()->links);
    return FALSE;
  }
  if (count == 0) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, file, line, col,
                    "link count must be at least 1");
    return FALSE;
  }
  FsTopoLink l = {0};
  l.a = a;
  l.b = b;
  l.model = model;
  l.count = count;
  l.bandwidth = model->u.link.bandwidth * count;
  l.latency = model->u.link.latency;
  l.file = fs_topo_intern(t, file);
  l.line = line;
  l.col = col;
  if (index)
    *index = t->links->len;
  g_array_append_val(t->links, l);
  return TRUE;
}

/* Sort key for the GPU order: host-major (fabric GPUs last), then local. */
static int gpu_order(gconstpointer pa, gconstpointer pb, gpointer data)
{
  const FsTopo *t = data;
  const FsTopoNode *a = &g_array_index(t->nodes, FsTopoNode, *(const guint *)pa);
  const FsTopoNode *b = &g_array_index(t->nodes, FsTopoNode, *(const guint *)pb);
  guint ha = a->host < 0 ? G_MAXUINT : (guint)a->host;
  guint hb = b->host < 0 ? G_MAXUINT : (guint)b->host;
  if (ha != hb)
    return ha < hb ? -1 : 1;
  return a->local < b->local ? -1 : a->local > b->local;
}

/* Union-find over node indices, used for the NVSwitch planes. */
static guint uf_find(guint *parent, guint x)
{
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

static gboolean is_nvswitch(const FsTopoNode *n)
{
  return n->kind == FS_NODE_SWITCH && n->model->u.sw.kind == FS_SWITCH_NVSWITCH;
}

/* Each GPU's NVSwitch plane: the set of NVSwitches and GPUs joined by
 * NVLinks that touch a switch (GPU-switch and switch-switch links), and
 * how many NVLinks the GPU has into it.  Two GPUs on one plane are NV#
 * with # the smaller of their counts, as nvidia-smi shows (DGX H100:
 * 5+4+4+5 = NV18 even though no switch sees all 18 links). */
static void build_nvswitch_planes(FsTopo *t)
{
  guint nn = t->nodes->len, nl = t->links->len;
  guint *parent = g_new(guint, nn);
  for (guint i = 0; i < nn; i++)
    parent[i] = i;
  for (guint l = 0; l < nl; l++) {
    const FsTopoLink *k = &g_array_index(t->links, FsTopoLink, l);
    const FsTopoNode *a = &g_array_index(t->nodes, FsTopoNode, k->a);
    const FsTopoNode *b = &g_array_index(t->nodes, FsTopoNode, k->b);
    if (k->model->u.link.family != FS_LINK_NVLINK)
      continue;
    gboolean sa = is_nvswitch(a), sb = is_nvswitch(b);
    if (!(sa && sb) && !(sa && b->kind == FS_NODE_GPU) && !(sb && a->kind == FS_NODE_GPU))
      continue;
    guint ra = uf_find(parent, k->a), rb = uf_find(parent, k->b);
    if (ra != rb)
      parent[MAX(ra, rb)] = MIN(ra, rb);
  }
  t->nv_comp = g_new(int, t->n_gpus + 1);
  t->nv_sw_links = g_new0(guint, t->n_gpus + 1);
  for (guint r = 0; r < t->n_gpus; r++) {
    guint g = t->gpus[r];
    for (guint e = t->adj_start[g]; e < t->adj_start[g + 1]; e++) {
      const FsTopoLink *k = &g_array_index(t->links, FsTopoLink, t->adj[e].link);
      const FsTopoNode *p = &g_array_index(t->nodes, FsTopoNode, t->adj[e].peer);
      if (k->model->u.link.family == FS_LINK_NVLINK && is_nvswitch(p))
        t->nv_sw_links[r] += k->count;
    }
    t->nv_comp[r] = t->nv_sw_links[r] > 0 ? (int)uf_find(parent, g) : -1;
  }
  g_free(parent);
}

/* See topo.h. Builds the CSR adjacency (in link order), the GPU placement order (host-major,
 * fabric GPUs last) with each GPU's rank, the per-host node and GPU lists, then the NVSwitch
 * planes. After it the topology takes no more nodes or links. */
void fs_topo_finalize(FsTopo *t)
{
  g_return_if_fail(!t->finalized);
  guint nn = t->nodes->len, nl = t->links->len;
  FsTopoNode *nodes = (FsTopoNode *)(void *)t->nodes->data;
  /* CSR adjacency: count degrees, prefix-sum, fill in link order. */
  t->adj_start = g_new0(guint, nn + 1);
  for (guint l = 0; l < nl; l++) {
    const FsTopoLink *k = &g_array_index(t->links, FsTopoLink, l);
    t->adj_start[k->a + 1]++;
    t->adj_start[k->b + 1]++;
  }
  for (guint i = 0; i < nn; i++)
    t->adj_start[i + 1] += t->adj_start[i];
  t->adj = g_new(FsTopoAdj, 2 * (gsize)nl + 1);
  guint *fill = g_memdup2(t->adj_start, sizeof(guint) * nn);
  for (guint l = 0; l < nl; l++) {
    const FsTopoLink *k = &g_array_index(t->links, FsTopoLink, l);
    t->adj[fill[k->a]++] = (FsTopoAdj){l, k->b};
    t->adj[fill[k->b]++] = (FsTopoAdj){l, k->a};
  }
  g_free(fill);

  /* GPUs in placement order, and their ranks. */
  t->n_gpus = 0;
  for (guint i = 0; i < nn; i++)
    t->n_gpus += nodes[i].kind == FS_NODE_GPU;
  t->gpus = g_new(guint, t->n_gpus + 1);
  guint k = 0;
  for (guint i = 0; i < nn; i++)
    if (nodes[i].kind == FS_NODE_GPU)
      t->gpus[k++] = i;
  g_qsort_with_data(t->gpus, (gint)t->n_gpus, sizeof(guint), gpu_order, t);
  for (guint r = 0; r < t->n_gpus; r++)
    nodes[t->gpus[r]].gpu_rank = (int)r;

  /* Per-host node and GPU lists (CSR again). */
  guint nh = t->host_names->len;
  t->host_node_start = g_new0(guint, nh + 1);
  t->host_gpu_start = g_new0(guint, nh + 1);
  for (guint i = 0; i < nn; i++)
    if (nodes[i].host >= 0) {
      t->host_node_start[nodes[i].host + 1]++;
      if (nodes[i].kind == FS_NODE_GPU)
        t->host_gpu_start[nodes[i].host + 1]++;
    }
  for (guint h = 0; h < nh; h++) {
    t->host_node_start[h + 1] += t->host_node_start[h];
    t->host_gpu_start[h + 1] += t->host_gpu_start[h];
  }
  t->host_node_list = g_new(guint, t->host_node_start[nh] + 1);
  t->host_gpu_list = g_new(guint, t->host_gpu_start[nh] + 1);
  guint *nf = g_memdup2(t->host_node_start, sizeof(guint) * (nh + 1));
  for (guint i = 0; i < nn; i++)
    if (nodes[i].host >= 0)
      t->host_node_list[nf[nodes[i].host]++] = i;
  g_free(nf);
  /* GPUs of a host in local order are a slice of the placement order. */
  guint *gf = g_memdup2(t->host_gpu_start, sizeof(guint) * (nh + 1));
  for (guint r = 0; r < t->n_gpus; r++) {
    const FsTopoNode *g = &nodes[t->gpus[r]];
    if (g->host >= 0)
      t->host_gpu_list[gf[g->host]++] = t->gpus[r];
  }
  g_free(gf);

  t->finalized = TRUE;
  build_nvswitch_planes(t);
}

const char *fs_topo_name(const FsTopo *t) { return t->name; }
const FsCatalog *fs_topo_catalog(const FsTopo *t) { return t->cat; }
guint fs_topo_n_nodes(const FsTopo *t) { return t->nodes->len; }
guint fs_topo_n_links(const FsTopo *t) { return t->links->len; }

const FsTopoNode *fs_topo_node(const FsTopo *t, guint i)
{
  g_return_val_if_fail(i < t->nodes->len, NULL);
  return &g_array_index(t->nodes, FsTopoNode, i);
}

const FsTopoLink *fs_topo_link(const FsTopo *t, guint i)
{
  g_return_val_if_fail(i < t->links->len, NULL);
  return &g_array_index(t->links, FsTopoLink, i);
}

const FsTopoAdj *fs_topo_adj(const FsTopo *t, guint node, guint *n)
{
  g_return_val_if_fail(t->finalized && node < t->nodes->len, NULL);
  *n = t->adj_start[node + 1] - t->adj_start[node];
  return t->adj + t->adj_start[node];
}

guint fs_topo_channel_src(const FsTopo *t, guint ch)
{
  const FsTopoLink *l = fs_topo_link(t, ch >> 1);
  return (ch & 1) ? l->b : l->a;
}

guint fs_topo_channel_dst(const FsTopo *t, guint ch)
{
  const FsTopoLink *l = fs_topo_link(t, ch >> 1);
  return (ch & 1) ? l->a : l->b;
}

guint fs_topo_channel_from(const FsTopo *t, guint link, guint from)
{
  const FsTopoLink *l = fs_topo_link(t, link);
  g_return_val_if_fail(l->a == from || l->b == from, 2 * link);
  return 2 * link + (l->a == from ? 0 : 1);
}

FsTime fs_topo_node_latency(const FsTopo *t, guint node)
{
  const FsTopoNode *n = fs_topo_node(t, node);
  switch (n->kind) {
  case FS_NODE_SWITCH: return n->model->u.sw.latency;
  case FS_NODE_NIC: return n->model->u.nic.latency;
  default: return 0;
  }
}

int fs_topo_find(const FsTopo *t, const char *name)
{
  gpointer v;
  if (!g_hash_table_lookup_extended(t->by_name, name, NULL, &v))
    return -1;
  return (int)GPOINTER_TO_UINT(v);
}

int fs_topo_find_gpu(const FsTopo *t, const char *text)
{
  char *end = NULL;
  guint64 idx = g_ascii_strtoull(text, &end, 10);
  if (end != text && *end == '\0' && g_ascii_isdigit(text[0]))
    return idx < t->n_gpus ? (int)t->gpus[idx] : -1;
  int node = fs_topo_find(t, text);
  return node >= 0 && fs_topo_node(t, (guint)node)->kind == FS_NODE_GPU ? node : -1;
}

const guint *fs_topo_gpus(const FsTopo *t, guint *n)
{
  g_return_val_if_fail(t->finalized, NULL);
  *n = t->n_gpus;
  return t->gpus;
}

guint fs_topo_n_hosts(const FsTopo *t) { return t->host_names->len; }

const char *fs_topo_host_name(const FsTopo *t, guint h)
{
  g_return_val_if_fail(h < t->host_names->len, NULL);
  return g_ptr_array_index(t->host_names, h);
}

const guint *fs_topo_host_nodes(const FsTopo *t, guint h, guint *n)
{
  g_return_val_if_fail(t->finalized && h < t->host_names->len, NULL);
  *n = t->host_node_start[h + 1] - t->host_node_start[h];
  return t->host_node_list + t->host_node_start[h];
}

const guint *fs_topo_host_gpus(const FsTopo *t, guint h, guint *n)
{
  g_return_val_if_fail(t->finalized && h < t->host_names->len, NULL);
  *n = t->host_gpu_start[h + 1] - t->host_gpu_start[h];
  return t->host_gpu_list + t->host_gpu_start[h];
}

guint fs_topo_node_links(const FsTopo *t, guint node, FsLinkFamily family)
{
  guint n, sum = 0;
  const FsTopoAdj *adj = fs_topo_adj(t, node, &n);
  for (guint e = 0; e < n; e++) {
    const FsTopoLink *l = fs_topo_link(t, adj[e].link);
    if (l->model->u.link.family == family)
      sum += l->count;
  }
  return sum;
}

guint fs_topo_node_ports(const FsTopo *t, guint node)
{
  guint n, sum = 0;
  const FsTopoAdj *adj = fs_topo_adj(t, node, &n);
  for (guint e = 0; e < n; e++)
    sum += fs_topo_link(t, adj[e].link)->count;
  return sum;
}

void fs_topo_set_param(FsTopo *t, const char *name, int64_t value)
{
  g_ptr_array_add(t->param_names, (gpointer)fs_topo_intern(t, name));
  g_array_append_val(t->param_values, value);
  g_ptr_array_add(t->param_strings, NULL);
}

void fs_topo_set_param_string(FsTopo *t, const char *name, const char *value)
{
  int64_t zero = 0;
  g_ptr_array_add(t->param_names, (gpointer)fs_topo_intern(t, name));
  g_array_append_val(t->param_values, zero);
  g_ptr_array_add(t->param_strings, (gpointer)fs_topo_intern(t, value));
}

const char *fs_topo_param_string(const FsTopo *t, guint i)
{
  g_return_val_if_fail(i < t->param_strings->len, NULL);
  return t->param_strings->pdata[i];
}

void fs_topo_set_reduction(FsTopo *t, guint node, gboolean reduction)
{
  g_return_if_fail(!t->finalized && node < t->nodes->len);
  FsTopoNode *n = &g_array_index(t->nodes, FsTopoNode, node);
  n->reduction = reduction && n->kind == FS_NODE_SWITCH && n->model->u.sw.reduction;
}

static const char *const routing_names[] = { FS_TOPO_ROUTINGS(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE(FsTopoRouting, fs_topo_routing, routing_names, FS_TOPO_ROUTING_N,
                fs_names_index_nocase)

FsTopoRouting fs_topo_routing(const FsTopo *t)
{
  return t->routing;
}

void fs_topo_set_routing(FsTopo *t, FsTopoRouting routing)
{
  g_return_if_fail(routing < FS_TOPO_ROUTING_N);
  t->routing = routing;
}

guint fs_topo_params(const FsTopo *t, const char *const **names, const int64_t **values)
{
  *names = (const char *const *)t->param_names->pdata;
  *values = (const int64_t *)(void *)t->param_values->data;
  return t->param_names->len;
}
