/* cmd-topo.c — `fabricsim topo check|show|paths|dot FILE`: load a topology
 * and validate it, list it, print the GPU × GPU path matrix the way
 * `nvidia-smi topo -m` does, or write Graphviz.  Every form takes -D
 * parameter overrides, --models and --json.  A bad file exits 2 with
 * "file:line:col: sentence".
 *
 * `topo import-smi|import-nccl FILE [-o OUT]` turn `nvidia-smi topo -m`
 * text or an NCCL topology dump into topology YAML (src/topo/import.h),
 * written atomically to OUT or to stdout; --gpu/--cpu/--nic name models. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "topo/import.h"
#include "topo/paths.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/strutil.h"
#include "util/units.h"

static char **opt_defines = NULL;
static char *opt_models = NULL;
static gboolean opt_json = FALSE;
static char *opt_output = NULL;
static char *opt_gpu = NULL, *opt_nic = NULL, *opt_cpu = NULL, *opt_smi_q = NULL;

static const GOptionEntry entries[] = {
  {"define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &opt_defines,
   "Override a topology parameter (repeatable)", "NAME=VALUE"},
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &opt_models,
   "Catalog folder (default: $FABRICSIM_MODELS or the built-in models/)", "DIR"},
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print JSON instead of text", NULL},
  {"output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_output,
   "import-*: write the YAML to FILE (atomically) instead of stdout", "FILE"},
  {"gpu", 0, 0, G_OPTION_ARG_STRING, &opt_gpu, "import-*: GPU model (default: guessed)", "MODEL"},
  {"nic", 0, 0, G_OPTION_ARG_STRING, &opt_nic, "import-*: NIC model (default: guessed)", "MODEL"},
  {"cpu", 0, 0, G_OPTION_ARG_STRING, &opt_cpu, "import-*: CPU model (default: guessed)", "MODEL"},
  {"smi-q", 0, 0, G_OPTION_ARG_FILENAME, &opt_smi_q,
   "import-smi: nvidia-smi -L/-q (and ibstat) text of the same machine, to identify models",
   "FILE"},
  {NULL},
};

/* Prints a JSON value (takes it) with a newline. */
static void print_json(json_t *v)
{
  char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
  printf("%s\n", s);
  free(s);
  json_decref(v);
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

static int do_check(const FsTopo *t)
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
    for (guint i = 0; i < np; i++)
      json_object_set_new(params, pn[i], json_integer(pv[i]));
    json_object_set_new(o, "parameters", params);
    print_json(o);
    return 0;
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
  printf("%s\n", s->str);
  g_string_free(s, TRUE);
  return 0;
}

/* ---- show ---------------------------------------------------------------- */

static int do_show(const FsTopo *t)
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
    print_json(o);
    return 0;
  }
  printf("# %s: %u nodes, %u links\n# node\tkind\tmodel\thost\n", fs_topo_name(t), nn, nl);
  for (guint i = 0; i < nn; i++) {
    const FsTopoNode *n = fs_topo_node(t, i);
    printf("%s\t%s\t%s\t%s\n", n->name, fs_node_kind_name(n->kind), n->model->name,
           n->host >= 0 ? fs_topo_host_name(t, n->host) : "-");
  }
  printf("# link\ta\tb\tmodel\tcount\tbandwidth per direction\tlatency\n");
  for (guint l = 0; l < nl; l++) {
    const FsTopoLink *k = fs_topo_link(t, l);
    g_autofree char *b = bw(k->bandwidth);
    g_autofree char *lat = fs_format_time(k->latency);
    printf("%u\t%s\t%s\t%s\t%u\t%s\t%s\n", l, fs_topo_node(t, k->a)->name,
           fs_topo_node(t, k->b)->name, k->model->name, k->count, b, lat);
  }
  return 0;
}

/* ---- paths, dot ------------------------------------------------------------ */

static int do_paths(const FsTopo *t)
{
  guint ng;
  const guint *gpus = fs_topo_gpus(t, &ng);
  if (ng > FS_PATHS_MATRIX_MAX_GPUS) {
    GError *error = g_error_new(FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_LIMIT,
                                "%s has %u GPUs; the path matrix is printed for at most %d "
                                "(lower the node count with -D)", fs_topo_name(t), ng,
                                FS_PATHS_MATRIX_MAX_GPUS);
    return fs_cli_fail("topo", error);
  }
  if (!opt_json) {
    g_autofree char *m = fs_topo_paths_matrix(t);
    fputs(m, stdout);
    return 0;
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
  print_json(o);
  return 0;
}

static int do_dot(const FsTopo *t)
{
  g_autofree char *dot = fs_topo_to_dot(t);
  if (opt_json) {
    json_t *o = json_object();
    json_object_set_new(o, "dot", json_string(dot));
    print_json(o);
  } else {
    fputs(dot, stdout);
  }
  return 0;
}

/* ---- import-smi, import-nccl ------------------------------------------------ */

static int do_import(const char *action, const char *file)
{
  GError *error = NULL;
  if (opt_json || opt_defines != NULL)
    return fs_cli_usage("topo", "%s takes no --json or -D", action);
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents(file, &text, &len, &error))
    return fs_cli_fail("topo", error);
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(opt_models, &error);
  if (cat == NULL)
    return fs_cli_fail("topo", error);
  g_autofree char *hw = NULL;
  gsize hw_len = 0;
  if (opt_smi_q != NULL && strcmp(action, "import-smi") != 0)
    return fs_cli_usage("topo", "--smi-q applies to import-smi only");
  if (opt_smi_q != NULL && !g_file_get_contents(opt_smi_q, &hw, &hw_len, &error))
    return fs_cli_fail("topo", error);
  g_autoptr(GPtrArray) messages = g_ptr_array_new_with_free_func(g_free);
  FsImportOptions opt = {.gpu = opt_gpu, .nic = opt_nic, .cpu = opt_cpu, .hw_text = hw,
                         .hw_text_len = hw_len, .hw_text_name = opt_smi_q,
                         .messages = messages};
  g_autofree char *yaml = strcmp(action, "import-smi") == 0
                            ? fs_import_smi(text, len, file, cat, &opt, &error)
                            : fs_import_nccl(text, len, file, cat, &opt, &error);
  if (yaml == NULL)
    return fs_cli_fail("topo", error);
  if (!fs_write_file_atomic(opt_output != NULL ? opt_output : "-", yaml, strlen(yaml), &error))
    return fs_cli_fail("topo", error);
  /* Guesses and repairs once the output is written: a failed run says one line. */
  for (guint i = 0; i < messages->len; i++)
    fprintf(stderr, "fabricsim topo: %s\n", (const char *)g_ptr_array_index(messages, i));
  return 0;
}

int fs_cmd_topo(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx =
    g_option_context_new("check|show|paths|dot|import-smi|import-nccl FILE - validate, list, "
                         "classify, draw or import a topology");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Actions:\n"
    "  check   validate and print a summary (GPUs, hosts, switches, links per\n"
    "          family, per-GPU NVLink bandwidth, bisection bandwidth)\n"
    "  show    list every node and link\n"
    "  paths   the GPU x GPU matrix like `nvidia-smi topo -m` (NV#, PIX, PXB,\n"
    "          PHB, NODE, SYS, NET)\n"
    "  dot     Graphviz text (render with `dot -Tsvg`)\n"
    "  import-smi   topology YAML from the text of `nvidia-smi topo -m`\n"
    "  import-nccl  topology YAML from an NCCL_TOPO_DUMP_FILE XML dump\n"
    "          (-o OUT, --gpu/--cpu/--nic MODEL; rules in topologies/README.md)\n"
    "          Models are identified from every clue: PCI ids and product names\n"
    "          (import-smi --smi-q FILE: nvidia-smi -L/-q, ibstat text), NVLink\n"
    "          counts, CPU ids and affinities, NIC ids and rates; each model the\n"
    "          clues cannot decide is one 'guess:' line on stderr, with the\n"
    "          alternatives also written as comments in the YAML.  import-smi\n"
    "          repairs cells run together by lost tabs and markdown pipes, and\n"
    "          says so on stderr.\n"
    "\n"
    "The format is documented in topologies/README.md.  A bad file exits 2\n"
    "with file:line:col and a sentence.\n"
    "\n"
    "Examples:\n"
    "  fabricsim topo check topologies/dgx-h100.yaml\n"
    "  fabricsim topo paths topologies/dgx-1-v100.yaml\n"
    "  fabricsim topo check topologies/dgx-h100-ib-ndr.yaml -D nodes=32 --json\n"
    "  nvidia-smi topo -m > box.txt && fabricsim topo import-smi box.txt -o box.yaml\n"
    "  nvidia-smi -q > q.txt && fabricsim topo import-smi box.txt --smi-q q.txt -o box.yaml\n"
    "  fabricsim topo import-nccl nccl-topo.xml --nic connectx-7 -o box.yaml\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "topo");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc != 3)
    return fs_cli_usage("topo", "expected an action (check, show, paths, dot, import-smi, "
                        "import-nccl) and one FILE");
  const char *action = argv[1], *file = argv[2];
  if (strcmp(action, "import-smi") == 0 || strcmp(action, "import-nccl") == 0)
    return do_import(action, file);
  if (opt_output != NULL || opt_gpu != NULL || opt_nic != NULL || opt_cpu != NULL ||
      opt_smi_q != NULL)
    return fs_cli_usage("topo", "-o, --gpu, --nic, --cpu and --smi-q apply to import-smi and "
                        "import-nccl only");
  int (*run)(const FsTopo *) = NULL;
  if (strcmp(action, "check") == 0)
    run = do_check;
  else if (strcmp(action, "show") == 0)
    run = do_show;
  else if (strcmp(action, "paths") == 0)
    run = do_paths;
  else if (strcmp(action, "dot") == 0)
    run = do_dot;
  else
    return fs_cli_usage("topo", "unknown action \"%s\"; expected check, show, paths, dot, import-smi or "
                        "import-nccl",
                        action);
  GError *error = NULL;
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(opt_models, &error);
  if (cat == NULL)
    return fs_cli_fail("topo", error);
  g_autoptr(FsTopo) t = fs_topo_load_file(file, cat, (const char *const *)opt_defines, &error);
  if (t == NULL)
    return fs_cli_fail("topo", error);
  return run(t);
}
