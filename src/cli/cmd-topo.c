/* cmd-topo.c — `fabricsim topo check|show|paths|dot FILE`: load a topology
 * and validate it, list it, print the GPU × GPU path matrix the way
 * `nvidia-smi topo -m` does, or write Graphviz.  Every form takes -D
 * parameter overrides, --models and --json.  A bad file exits 2 with
 * "file:line:col: sentence".
 *
 * `topo import-smi|import-nccl FILE [-o OUT]` turn `nvidia-smi topo -m`
 * text or an NCCL topology dump into topology YAML (src/topo/import.h),
 * written atomically to OUT or to stdout; --gpu/--cpu/--nic name models.
 * `topo export-nccl FILE [--host N] [-o OUT]` writes one host as an
 * NCCL_TOPO_FILE XML (src/topo/export-nccl.c). */
#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "report/topo.h"
#include "topo/connect.h"
#include "topo/import.h"
#include "util/strutil.h"

static char **opt_defines = NULL;
static char *opt_models = NULL;
static gboolean opt_json = FALSE;
static char *opt_output = NULL;
static char *opt_gpu = NULL, *opt_nic = NULL, *opt_cpu = NULL, *opt_smi_q = NULL;
static gint opt_host = -1;
static gboolean opt_allow_disconnected = FALSE;

static const GOptionEntry entries[] = {
  FS_OPT_DEFINE(opt_defines),
  FS_OPT_MODELS(opt_models),
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print JSON instead of text", NULL},
  {"output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_output,
   "import-*: write the YAML to FILE (atomically) instead of stdout", "FILE"},
  {"gpu", 0, 0, G_OPTION_ARG_STRING, &opt_gpu, "import-*: GPU model (default: guessed)", "MODEL"},
  {"nic", 0, 0, G_OPTION_ARG_STRING, &opt_nic, "import-*: NIC model (default: guessed)", "MODEL"},
  {"cpu", 0, 0, G_OPTION_ARG_STRING, &opt_cpu, "import-*: CPU model (default: guessed)", "MODEL"},
  {"smi-q", 0, 0, G_OPTION_ARG_FILENAME, &opt_smi_q,
   "import-smi: nvidia-smi -L/-q (and ibstat) text of the same machine, to identify models",
   "FILE"},
  {"host", 0, 0, G_OPTION_ARG_INT, &opt_host, "export-nccl: the host to write (default 0)", "N"},
  {"allow-disconnected", 0, 0, G_OPTION_ARG_NONE, &opt_allow_disconnected,
   "check: accept GPUs that cannot reach each other (a warning instead of an error)", NULL},
  {NULL},
};

/* ---- import-smi, import-nccl ------------------------------------------------ */

static int do_import(const char *action, const char *file)
{
  GError *error = NULL;
  if (opt_json || opt_defines != NULL)
    return fs_cli_usage("topo", "%s takes no --json or -D", action);
  gboolean smi = strcmp(action, "import-smi") == 0;
  if (opt_smi_q != NULL && !smi)
    return fs_cli_usage("topo", "--smi-q applies to import-smi only");
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(opt_models, &error);
  if (cat == NULL)
    return fs_cli_fail("topo", error);
  g_autoptr(GPtrArray) messages = g_ptr_array_new_with_free_func(g_free);
  FsImportOptions opt = {.gpu = opt_gpu, .nic = opt_nic, .cpu = opt_cpu, .messages = messages};
  g_autofree char *yaml = fs_import_path(smi, file, opt_smi_q, cat, &opt, &error);
  if (yaml == NULL)
    return fs_cli_fail("topo", error);
  if (!fs_write_file_atomic(opt_output != NULL ? opt_output : "-", yaml, strlen(yaml), &error))
    return fs_cli_fail("topo", error);
  /* Guesses and repairs once the output is written: a failed run says one line. */
  for (guint i = 0; i < messages->len; i++)
    fprintf(stderr, "fabricsim topo: %s\n", (const char *)g_ptr_array_index(messages, i));
  return 0;
}

/* ---- export-nccl ------------------------------------------------------------ */

static int do_export(const FsTopo *t)
{
  GError *error = NULL;
  g_autofree char *xml = fs_export_nccl(t, (guint)MAX(opt_host, 0), &error);
  if (xml == NULL)
    return fs_cli_fail("topo", error);
  if (!fs_write_file_atomic(opt_output != NULL ? opt_output : "-", xml, strlen(xml), &error))
    return fs_cli_fail("topo", error);
  return 0;
}

/* "fabricsim topo ACTION FILE": import-smi and import-nccl go to do_import(); for the other
 * actions it checks which options apply, loads the catalog and the topology, and either exports
 * it for NCCL or prints the report of check, show, paths or dot. check refuses a disconnected
 * topology unless --allow-disconnected, which turns that into a warning. Returns 0, 2 on a
 * usage error, or the exit status of the first error. */
int fs_cmd_topo(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx =
    g_option_context_new("check|show|paths|dot|import-smi|import-nccl|export-nccl FILE - validate, "
                         "list, classify, draw, import or export a topology");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Actions:\n"
    "  check   validate and print a summary (GPUs, hosts, switches, links per\n"
    "          family, per-GPU NVLink bandwidth, bisection bandwidth); GPUs that\n"
    "          cannot reach each other are an error (--allow-disconnected: a warning)\n"
    "  show    list every node and link\n"
    "  paths   the GPU x GPU matrix like `nvidia-smi topo -m` (NV#, PIX, PXB,\n"
    "          PHB, NODE, SYS, NET)\n"
    "  dot     Graphviz text (render with `dot -Tsvg`)\n"
    "  import-smi   topology YAML from the text of `nvidia-smi topo -m`\n"
    "  import-nccl  topology YAML from an NCCL_TOPO_DUMP_FILE XML dump\n"
    "          or a hand-written NCCL_TOPO_FILE (Azure, AWS)\n"
    "          (-o OUT, --gpu/--cpu/--nic MODEL; rules in topologies/README.md)\n"
    "          Models are identified from every clue: PCI ids and product names\n"
    "          (import-smi --smi-q FILE: nvidia-smi -L/-q, ibstat text), NVLink\n"
    "          counts, CPU ids and affinities, NIC ids and rates; each model the\n"
    "          clues cannot decide is one 'guess:' line on stderr, with the\n"
    "          alternatives also written as comments in the YAML.  import-smi\n"
    "          repairs cells run together by lost tabs and markdown pipes, and\n"
    "          says so on stderr.\n"
    "  export-nccl  one host of the topology as an NCCL_TOPO_FILE XML\n"
    "          (--host N, default 0; -o OUT)\n"
    "\n"
    "The format is documented in topologies/README.md.  A bad file exits 2\n"
    "with file:line:col and a sentence.\n"
    "\n"
    "Examples:\n"
    "  fabricsim topo check topologies/dgx-h100.yaml\n"
    "  fabricsim topo paths topologies/dgx-1-v100.yaml\n"
    "  fabricsim topo check topologies/dgx-h100-ib-ndr.yaml -D nodes=32 --json\n"
    "  fabricsim topo check topologies/cluster.yaml -D node=hgx-b200 -D nodes=16 -D sharp=0\n"
    "  nvidia-smi topo -m > box.txt && fabricsim topo import-smi box.txt -o box.yaml\n"
    "  nvidia-smi -q > q.txt && fabricsim topo import-smi box.txt --smi-q q.txt -o box.yaml\n"
    "  fabricsim topo import-nccl tests/data/nccl-xml/y_dgx-h100.xml --nic connectx-7 -o box.yaml\n"
    "  fabricsim topo export-nccl topologies/dgx-h100.yaml -o dgx-h100.xml\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "topo");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc != 3)
    return fs_cli_usage("topo", "expected an action (check, show, paths, dot, import-smi, "
                        "import-nccl, export-nccl) and one FILE");
  const char *action = argv[1], *file = argv[2];
  if (strcmp(action, "import-smi") == 0 || strcmp(action, "import-nccl") == 0)
    return do_import(action, file);
  gboolean export = strcmp(action, "export-nccl") == 0;
  if ((opt_output != NULL && !export) || opt_gpu != NULL || opt_nic != NULL || opt_cpu != NULL ||
      opt_smi_q != NULL)
    return fs_cli_usage("topo", "-o, --gpu, --nic, --cpu and --smi-q apply to import-smi and "
                        "import-nccl only (and -o to export-nccl)");
  if (opt_host != -1 && !export)
    return fs_cli_usage("topo", "--host applies to export-nccl only");
  if (opt_host < -1)
    return fs_cli_usage("topo", "--host %d: expected a host index (0 or more)", opt_host);
  if (export && opt_json)
    return fs_cli_usage("topo", "export-nccl takes no --json");
  if (opt_allow_disconnected && strcmp(action, "check") != 0)
    return fs_cli_usage("topo", "--allow-disconnected applies to check only");
  if (!export && !g_strv_contains((const char *const[]){"check", "show", "paths", "dot", NULL}, action))
    return fs_cli_usage("topo", "unknown action \"%s\"; expected check, show, paths, dot, import-smi, "
                        "import-nccl or export-nccl",
                        action);
  GError *error = NULL;
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(opt_models, &error);
  if (cat == NULL)
    return fs_cli_fail("topo", error);
  g_autoptr(FsTopo) t = fs_topo_load_file(file, cat, (const char *const *)opt_defines, &error);
  if (t == NULL)
    return fs_cli_fail("topo", error);
  if (export)
    return do_export(t);
  GError *unreachable = NULL;
  if (strcmp(action, "check") == 0 && !fs_topo_check_connected(t, &unreachable)) {
    if (!opt_allow_disconnected)
      return fs_cli_fail("topo", unreachable);
    fprintf(stderr, "fabricsim topo: warning: %s\n", unreachable->message);
    g_error_free(unreachable);
  }
  g_autoptr(GString) out = g_string_new(NULL);
  if (!fs_report_topo(out, action, t, opt_json, &error))
    return fs_cli_fail("topo", error);
  fputs(out->str, stdout);
  return 0;
}
