/* topo.c — see topo.h. */
#include "report/topo.h"
#include "report/format.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "topo/paths.h"
#include "util/limits.h"
#include "util/error.h"
#include "util/units.h"

/* Appends a JSON value (takes it) with a newline. */
static void print_json(GString *out, json_t *v)
{
  fs_report_append_json(out, v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
}

static char *bw(double bytes_per_s)
{
  return fs_format_bandwidth(bytes_per_s);
}

/* ---- check --------------------------------------------------------------- */

typedef struct {
  guint bundles, links;
  double bandwidth;   /* sum of per-direction bandwidth */
} FamilyStat;

/* Appends the summary of "topo check" to out, as JSON or text: node counts by kind, switch
 * counts by kind, link bundles and bandwidth by family, the range of NVLink count and bandwidth
 * over the GPUs, the bisection bandwidth (a max-flow, the costly part) and the topology's
 * parameters. Always returns TRUE; the topology was validated when it was built. */
static gboolean do_check(GString *out, const FsTopo *t, gboolean opt_json)
{
  guint nn = fs_topo_n_nodes(t), nl = fs_topo_n_links(t), ng;
  const guint *gpus = fs_topo_gpus(t, &ng);
  guint kinds[FS_NODE_N_KINDS] = {0}, swkinds[FS_SWITCH_N_KINDS] = {0};
  for (guint i = 0; i < nn; i++) {
    const FsTopoNode *n = fs_topo_node(t, i);
    kinds[n->kind]++;
    if (n->kind == FS_NODE_SWITCH)
      swkinds[n->model->u.sw.kind]++;
  }
  FamilyStat fam[FS_LINK_N_FAMILIES] = {{0}};
  for (guint l = 0; l < nl; l++) {
    const FsTopoLink *k = fs_topo_link(t, l);
    FamilyStat *f = &fam[k->model->u.link.family];
    f->bundles++;
    f->links += k->count;
    f->bandwidth += k->bandwidth;
  }
  /* Per-GPU NVLink: count and bandwidth range over the GPUs. */
  guint nv_min = G_MAXUINT, nv_max = 0;
  double nvbw_min = G_MAXDOUBLE, nvbw_max = 0;
  for (guint r = 0; r < ng; r++) {
    guint n, links = 0;
    double b = 0;
    const FsTopoAdj *adj = fs_topo_adj(t, gpus[r], &n);
    for (guint e = 0; e < n; e++) {
      const FsTopoLink *k = fs_topo_link(t, adj[e].link);
      if (k->model->u.link.family == FS_LINK_NVLINK) {
        links += k->count;
        b += k->bandwidth;
      }
    }
    nv_min = MIN(nv_min, links), nv_max = MAX(nv_max, links);
    nvbw_min = MIN(nvbw_min, b), nvbw_max = MAX(nvbw_max, b);
  }
  if (ng == 0)
    nv_min = 0, nvbw_min = 0;
  double bisection = fs_topo_bisection(t);
  const char *method = "max-flow/min-cut from the first half of the GPU list to the second";

  if (opt_json) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(fs_topo_name(t)));
    json_object_set_new(o, "valid", json_true());
    json_object_set_new(o, "gpus", json_integer(ng));
    json_object_set_new(o, "hosts", json_integer(fs_topo_n_hosts(t)));
    json_t *nodes = json_object();
    for (guint k = 0; k < FS_NODE_N_KINDS; k++)
      json_object_set_new(nodes, fs_node_kind_name(k), json_integer(kinds[k]));
    json_object_set_new(o, "nodes", nodes);
    json_t *sw = json_object();
    for (guint k = 0; k < FS_SWITCH_N_KINDS; k++)
      json_object_set_new(sw, fs_switch_kind_name(k), json_integer(swkinds[k]));
    json_object_set_new(o, "switches", sw);
    json_t *links = json_object();
    for (guint f = 0; f < FS_LINK_N_FAMILIES; f++) {
      if (fam[f].bundles == 0)
        continue;
      json_t *x = json_object();
      json_object_set_new(x, "bundles", json_integer(fam[f].bundles));
      json_object_set_new(x, "links", json_integer(fam[f].links));
      json_object_set_new(x, "bandwidth", json_real(fam[f].bandwidth));
      json_object_set_new(links, fs_link_family_name(f), x);
    }
    json_object_set_new(o, "links", links);
    json_t *nv = json_object();
    json_object_set_new(nv, "links_min", json_integer(nv_min));
    json_object_set_new(nv, "links_max", json_integer(nv_max));
    json_object_set_new(nv, "bandwidth_min", json_real(nvbw_min));
    json_object_set_new(nv, "bandwidth_max", json_real(nvbw_max));
    json_object_set_new(o, "nvlink_per_gpu", nv);
    json_t *bi = json_object();
    json_object_set_new(bi, "bandwidth", json_real(bisection));
    json_object_set_new(bi, "method", json_string("max-flow"));
    json_object_set_new(o, "bisection", bi);
    const char *const *pn;
    const int64_t *pv;
    guint np = fs_topo_params(t, &pn, &pv);
    json_t *params = json_object();
    for (guint i = 0; i < np; i++) {
      const char *text = fs_topo_param_string(t, i);
      json_object_set_new(params, pn[i], text ? json_string(text) : json_integer(pv[i]));
    }
    json_object_set_new(o, "parameters", params);
    print_json(out, o);
    return TRUE;
  }

  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "%s: valid. %u GPU%s", fs_topo_name(t), ng, ng == 1 ? "" : "s");
  if (ng > 0)
    g_string_append_printf(s, " (%s)", fs_topo_node(t, gpus[0])->model->name);
  g_string_append_printf(s, " in %u host%s; %u CPU%s, %u NIC%s, %u switch%s", fs_topo_n_hosts(t),
                         fs_topo_n_hosts(t) == 1 ? "" : "s", kinds[FS_NODE_CPU],
                         kinds[FS_NODE_CPU] == 1 ? "" : "s", kinds[FS_NODE_NIC],
                         kinds[FS_NODE_NIC] == 1 ? "" : "s", kinds[FS_NODE_SWITCH],
                         kinds[FS_NODE_SWITCH] == 1 ? "" : "es");
  gboolean first = TRUE;
  for (guint k = 0; k < FS_SWITCH_N_KINDS; k++)
    if (swkinds[k]) {
      g_string_append_printf(s, "%s%u %s", first ? " (" : ", ", swkinds[k], fs_switch_kind_name(k));
      first = FALSE;
    }
  g_string_append(s, first ? ". Links" : "). Links");
  first = TRUE;
  for (guint f = 0; f < FS_LINK_N_FAMILIES; f++) {
    if (fam[f].bundles == 0)
      continue;
    g_autofree char *b = bw(fam[f].bandwidth);
    g_string_append_printf(s, "%s %s %u (%u bundle%s, %s per direction in all)",
                           first ? ":" : ";", fs_link_family_name(f), fam[f].links,
                           fam[f].bundles, fam[f].bundles == 1 ? "" : "s", b);
    first = FALSE;
  }
  if (first)
    g_string_append(s, ": none");
  g_string_append(s, ". ");
  if (nv_max > 0) {
    g_autofree char *a = bw(nvbw_min), *b = bw(nvbw_max);
    if (nv_min == nv_max && nvbw_min == nvbw_max)
      g_string_append_printf(s, "Each GPU has %u NVLinks, %s per direction. ", nv_min, a);
    else
      g_string_append_printf(s, "GPUs have %u to %u NVLinks, %s to %s per direction. ", nv_min,
                             nv_max, a, b);
  } else {
    g_string_append(s, "No NVLink. ");
  }
  if (ng >= 2) {
    g_autofree char *b = bw(bisection);
    g_string_append_printf(s, "Bisection bandwidth %s per direction (%s).", b, method);
  }
  g_string_append_printf(out, "%s\n", s->str);
  g_string_free(s, TRUE);
  return TRUE;
}

/* ---- show ---------------------------------------------------------------- */

/* Appends "topo show" to out: every node (kind, model, host, and rank or socket) and every
 * link bundle (ends, model, count, bandwidth, latency), as one JSON document or as
 * tab-separated text. Always returns TRUE. */
static gboolean do_show(GString *out, const FsTopo *t, gboolean opt_json)
{
  guint nn = fs_topo_n_nodes(t), nl = fs_topo_n_links(t);
  if (opt_json) {
    json_t *o = json_object(), *nodes = json_array(), *links = json_array();
    json_object_set_new(o, "name", json_string(fs_topo_name(t)));
    for (guint i = 0; i < nn; i++) {
      const FsTopoNode *n = fs_topo_node(t, i);
      json_t *x = json_object();
      json_object_set_new(x, "name", json_string(n->name));
      json_object_set_new(x, "kind", json_string(fs_node_kind_name(n->kind)));
      json_object_set_new(x, "model", json_string(n->model->name));
      json_object_set_new(x, "host", n->host >= 0 ? json_string(fs_topo_host_name(t, n->host))
                                                  : json_null());
      if (n->kind == FS_NODE_GPU)
        json_object_set_new(x, "rank", json_integer(n->gpu_rank));
      if (n->kind == FS_NODE_CPU)
        json_object_set_new(x, "socket", json_integer(n->socket));
      json_array_append_new(nodes, x);
    }
    for (guint l = 0; l < nl; l++) {
      const FsTopoLink *k = fs_topo_link(t, l);
      json_t *x = json_object();
      json_object_set_new(x, "a", json_string(fs_topo_node(t, k->a)->name));
      json_object_set_new(x, "b", json_string(fs_topo_node(t, k->b)->name));
      json_object_set_new(x, "model", json_string(k->model->name));
      json_object_set_new(x, "family", json_string(fs_link_family_name(k->model->u.link.family)));
      json_object_set_new(x, "count", json_integer(k->count));
      json_object_set_new(x, "bandwidth", json_real(k->bandwidth));
      json_object_set_new(x, "latency_ps", json_integer(k->latency));
      json_array_append_new(links, x);
    }
    json_object_set_new(o, "nodes", nodes);
    json_object_set_new(o, "links", links);
    print_json(out, o);
    return TRUE;
  }
  g_string_append_printf(out, "# %s: %u nodes, %u links\n# node\tkind\tmodel\thost\n", fs_topo_name(t), nn, nl);
  for (guint i = 0; i < nn; i++) {
    const FsTopoNode *n = fs_topo_node(t, i);
    g_string_append_printf(out, "%s\t%s\t%s\t%s\n", n->name, fs_node_kind_name(n->kind), n->model->name,
           n->host >= 0 ? fs_topo_host_name(t, n->host) : "-");
  }
  g_string_append_printf(out, "# link\ta\tb\tmodel\tcount\tbandwidth per direction\tlatency\n");
  for (guint l = 0; l < nl; l++) {
    const FsTopoLink *k = fs_topo_link(t, l);
    g_autofree char *b = bw(k->bandwidth);
    g_autofree char *lat = fs_format_time(k->latency);
    g_string_append_printf(out, "%u\t%s\t%s\t%s\t%u\t%s\t%s\n", l, fs_topo_node(t, k->a)->name,
           fs_topo_node(t, k->b)->name, k->model->name, k->count, b, lat);
  }
  return TRUE;
}

/* ---- paths, dot ------------------------------------------------------------ */

static gboolean do_paths(GString *out, const FsTopo *t, gboolean opt_json, GError **error)
{
  guint ng;
  const guint *gpus = fs_topo_gpus(t, &ng);
  guint64 limit = fs_env_limit("FABRICSIM_MAX_MATRIX_GPUS", FS_PATHS_MATRIX_MAX_GPUS, 1u << 20);
  if (ng > limit) {
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_LIMIT,
                "%s has %u GPUs; the path matrix is printed for at most %" G_GUINT64_FORMAT
                " (lower the node count with -D; FABRICSIM_MAX_MATRIX_GPUS raises the limit)",
                fs_topo_name(t), ng, limit);
    return FALSE;
  }
  if (!opt_json) {
    g_autofree char *m = fs_topo_paths_matrix(t);
    g_string_append(out, m);
    return TRUE;
  }
  json_t *o = json_object(), *names = json_array(), *rows = json_array();
  for (guint i = 0; i < ng; i++) {
    json_array_append_new(names, json_string(fs_topo_node(t, gpus[i])->name));
    json_t *row = json_array();
    for (guint j = 0; j < ng; j++) {
      guint nv;
      FsPathType p = fs_topo_path_type(t, gpus[i], gpus[j], &nv);
      g_autofree char *label = fs_path_label(p, nv);
      json_array_append_new(row, json_string(label));
    }
    json_array_append_new(rows, row);
  }
  json_object_set_new(o, "gpus", names);
  json_object_set_new(o, "matrix", rows);
  print_json(out, o);
  return TRUE;
}

static gboolean do_dot(GString *out, const FsTopo *t, gboolean opt_json)
{
  g_autofree char *dot = fs_topo_to_dot(t);
  if (opt_json) {
    json_t *o = json_object();
    json_object_set_new(o, "dot", json_string(dot));
    print_json(out, o);
  } else {
    g_string_append(out, dot);
  }
  return TRUE;
}

gboolean fs_report_topo(GString *out, const char *action, const FsTopo *t, gboolean json,
                        GError **error)
{
  if (strcmp(action, "check") == 0)
    return do_check(out, t, json);
  if (strcmp(action, "show") == 0)
    return do_show(out, t, json);
  if (strcmp(action, "paths") == 0)
    return do_paths(out, t, json, error);
  g_return_val_if_fail(strcmp(action, "dot") == 0, FALSE);
  return do_dot(out, t, json);
}
