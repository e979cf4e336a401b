/* test-import.c — the importers (src/topo/import-*.c): `nvidia-smi topo -m`
 * text and NCCL topology XML to topology YAML.
 *
 * The smi round trip is checked independently of the importer's own
 * verification: this file re-reads each y_ matrix with a small reader of
 * its own and compares every GPU pair with fs_topo_path_type on the loaded
 * output.  The NCCL samples are compared with the expected matrices in
 * tests/data/nccl-xml/y_*.paths.  n_ files must fail with their .err
 * fragment (which includes line:col); i_ files must not crash, and what
 * they produce must load. */
#include <string.h>

#include "testutil.h"
#include "topo/import.h"
#include "topo/paths.h"
#include "topo/topo.h"

static FsCatalog *cat;

static void setup(void)
{
  GError *e = NULL;
  cat = fs_catalog_load_default(NULL, &e);
  ck_assert_msg(cat != NULL, "catalog: %s", e ? e->message : "");
}

static void teardown(void)
{
  fs_catalog_free(cat);
}

/* g_ptr_array_sort passes pointers to the elements. */
static gint by_name(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files of a corpus folder starting with prefix and ending with ext, sorted. */
static GPtrArray *corpus(const char *folder, const char *prefix, const char *ext)
{
  g_autofree char *dir = fs_test_data_path(folder);
  GDir *d = g_dir_open(dir, 0, NULL);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL)
    if (g_str_has_prefix(name, prefix) && g_str_has_suffix(name, ext))
      g_ptr_array_add(out, g_build_filename(dir, name, NULL));
  g_dir_close(d);
  g_ptr_array_sort(out, by_name);
  return out;
}

static char *import_file(const char *path, gboolean smi, const FsImportOptions *opt,
                         GError **e)
{
  g_autofree char *text = NULL;
  gsize len;
  ck_assert(g_file_get_contents(path, &text, &len, NULL));
  return smi ? fs_import_smi(text, len, path, cat, opt, e)
             : fs_import_nccl(text, len, path, cat, opt, e);
}

/* An independent reader of the GPU part of an smi matrix: the GPU labels of
 * the header (they come first) and, per GPU row, its first ngpu cells. */
static GPtrArray *read_matrix(const char *path, guint *ngpu)
{
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  GString *clean = g_string_new(NULL);
  for (const char *p = text; *p; p++) {
    if (*p == 0x1b) {
      while (*p && !(g_ascii_isalpha(*p) && *(p - 1) != 0x1b))
        p++;
      continue;
    }
    g_string_append_c(clean, *p == '\t' || *p == '\r' ? ' ' : *p);
  }
  g_auto(GStrv) lines = g_strsplit(clean->str, "\n", -1);
  g_string_free(clean, TRUE);
  GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  *ngpu = 0;
  gboolean header = FALSE;
  for (guint l = 0; lines[l] != NULL; l++) {
    g_auto(GStrv) w = g_strsplit_set(g_strstrip(lines[l]), " ", -1);
    GPtrArray *words = g_ptr_array_new();
    for (guint k = 0; w[k] != NULL; k++)
      if (*w[k])
        g_ptr_array_add(words, g_strdup(w[k]));
    g_ptr_array_add(words, NULL);
    char **ws = (char **)g_ptr_array_free(words, FALSE);
    if (!header && ws[0] != NULL && strcmp(ws[0], "GPU0") == 0) {
      header = TRUE;
      while (ws[*ngpu] != NULL && g_str_has_prefix(ws[*ngpu], "GPU") &&
             g_ascii_isdigit(ws[*ngpu][3]))
        (*ngpu)++;
      g_strfreev(ws);
      continue;
    }
    if (header && ws[0] != NULL && g_str_has_prefix(ws[0], "GPU") && g_ascii_isdigit(ws[0][3]))
      g_ptr_array_add(rows, ws);
    else
      g_strfreev(ws);
  }
  ck_assert_uint_eq(rows->len, *ngpu);
  return rows;
}

START_TEST(test_import_smi_round_trip_matrix)
{
  g_autoptr(GPtrArray) files = corpus("smi", "y_", ".txt");
  ck_assert_uint_ge(files->len, 5);
  for (guint f = 0; f < files->len; f++) {
    const char *path = g_ptr_array_index(files, f);
    GError *e = NULL;
    g_autofree char *yaml = import_file(path, TRUE, NULL, &e);
    ck_assert_msg(yaml != NULL, "%s: %s", path, e ? e->message : "");
    ck_assert(g_str_has_prefix(yaml, "# Imported by `fabricsim topo import-smi` from"));
    g_autoptr(FsTopo) t = fs_topo_load_string(yaml, path, cat, NULL, &e);
    ck_assert_msg(t != NULL, "%s: output does not load: %s\n%s", path, e ? e->message : "",
                  yaml);
    guint ng, want_ng;
    const guint *gpus = fs_topo_gpus(t, &ng);
    g_autoptr(GPtrArray) rows = read_matrix(path, &want_ng);
    ck_assert_uint_eq(ng, want_ng);
    for (guint a = 0; a < ng; a++) {
      char **row = g_ptr_array_index(rows, a);
      for (guint b = 0; b < ng; b++) {
        guint nv;
        FsPathType p = fs_topo_path_type(t, gpus[a], gpus[b], &nv);
        g_autofree char *got = fs_path_label(p, nv);
        ck_assert_msg(strcmp(got, row[1 + b]) == 0, "%s: GPU%u/GPU%u is %s, output gives %s",
                      path, a, b, row[1 + b], got);
      }
    }
  }
}
END_TEST

/* n_ files of folder fail with their .err fragment, prefixed by the path. */
static void check_rejects(const char *folder, const char *ext, gboolean smi, guint at_least)
{
  g_autoptr(GPtrArray) files = corpus(folder, "n_", ext);
  ck_assert_uint_ge(files->len, at_least);
  for (guint f = 0; f < files->len; f++) {
    const char *path = g_ptr_array_index(files, f);
    g_autofree char *base = g_strndup(path, strlen(path) - strlen(ext));
    g_autofree char *errfile = g_strconcat(base, ".err", NULL), *frag = NULL;
    ck_assert_msg(g_file_get_contents(errfile, &frag, NULL, NULL), "missing %s", errfile);
    g_strchomp(frag);
    GError *e = NULL;
    g_autofree char *yaml = import_file(path, smi, NULL, &e);
    ck_assert_msg(yaml == NULL, "%s: accepted", path);
    ck_assert_msg(g_str_has_prefix(e->message, path), "%s: message lacks the file: %s", path,
                  e->message);
    ck_assert_msg(strchr(e->message, '\n') == NULL, "%s: message on several lines", path);
    fs_assert_error(e, FS_TOPO_ERROR, frag);
  }
}

/* i_ files: accepted or rejected, never a crash; accepted output loads. */
static void check_either(const char *folder, const char *ext, gboolean smi)
{
  g_autoptr(GPtrArray) files = corpus(folder, "i_", ext);
  ck_assert_uint_ge(files->len, 1);
  for (guint f = 0; f < files->len; f++) {
    const char *path = g_ptr_array_index(files, f);
    GError *e = NULL;
    g_autofree char *yaml = import_file(path, smi, NULL, &e);
    if (yaml == NULL) {
      ck_assert(e != NULL && g_str_has_prefix(e->message, path));
      g_clear_error(&e);
      continue;
    }
    g_autoptr(FsTopo) t = fs_topo_load_string(yaml, path, cat, NULL, &e);
    ck_assert_msg(t != NULL, "%s: output does not load: %s", path, e ? e->message : "");
  }
}

START_TEST(test_import_smi_rejects_with_position)
{
  check_rejects("smi", ".txt", TRUE, 8);
}
END_TEST

START_TEST(test_import_smi_junk_never_crashes)
{
  check_either("smi", ".txt", TRUE);
}
END_TEST

START_TEST(test_import_smi_is_deterministic)
{
  g_autofree char *path = fs_test_data_path("smi/y_dgx-h100-nics.txt");
  GError *e = NULL;
  g_autofree char *a = import_file(path, TRUE, NULL, &e);
  g_autofree char *b = import_file(path, TRUE, NULL, &e);
  ck_assert(a != NULL && b != NULL);
  ck_assert_str_eq(a, b);
}
END_TEST

/* Counts "model: name" occurrences in nodes of the YAML text. */
static guint count_of(const char *yaml, const char *needle)
{
  guint n = 0;
  for (const char *p = strstr(yaml, needle); p != NULL; p = strstr(p + 1, needle))
    n++;
  return n;
}

START_TEST(test_import_smi_guesses_models_by_nvlink)
{
  static const struct { const char *file, *gpu, *cpu, *nic; } cases[] = {
    {"smi/y_dgx1-v100.txt", "v100-sxm2-16gb", "xeon-e5-2698-v4", "connectx-5"},
    {"smi/y_dgx-a100-nics.txt", "a100-sxm4-80gb", "epyc-7742", "connectx-6"},
    {"smi/y_dgx-h100-nics.txt", "h100-sxm", "xeon-platinum-8480c", "connectx-7"},
    {"smi/y_bridge-2gpu.txt", "h100-pcie", "xeon-platinum-8480c", NULL},
    /* NV6 x 3 direct; CPU Affinity up to 191 on 2 sockets: 192 logical
     * CPUs, two 48-core Xeon 8468 with SMT (one 96-core EPYC 9654 would
     * make them too, but the matrix shows two sockets). */
    {"smi/y_hgx-h100-4gpu.txt", "h100-sxm", "xeon-platinum-8468", NULL},
    /* NV6 x 15: plane; CPU Affinity up to 95 on 2 sockets: 2 x 24-core
     * Xeon 8168 with SMT, the DGX-2 host. */
    {"smi/y_dgx2.txt", "v100-sxm2-16gb", "xeon-platinum-8168", NULL},
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *path = fs_test_data_path(cases[i].file);
    GError *e = NULL;
    g_autofree char *yaml = import_file(path, TRUE, NULL, &e);
    ck_assert_msg(yaml != NULL, "%s", e ? e->message : "");
    g_autofree char *g = g_strdup_printf("model: %s}", cases[i].gpu);
    g_autofree char *c = g_strdup_printf("model: %s,", cases[i].cpu);
    ck_assert_msg(count_of(yaml, g) >= 2, "%s: no %s", cases[i].file, cases[i].gpu);
    ck_assert_msg(count_of(yaml, c) >= 1, "%s: no %s", cases[i].file, cases[i].cpu);
    if (cases[i].nic != NULL) {
      g_autofree char *n = g_strdup_printf("model: %s}", cases[i].nic);
      ck_assert_msg(count_of(yaml, n) >= 1, "%s: no %s", cases[i].file, cases[i].nic);
    }
    ck_assert(strstr(yaml, "guessed") != NULL);
  }
}
END_TEST

START_TEST(test_import_smi_nvswitch_plane_rule)
{
  /* DGX H100 (NV18 everywhere): an NVSwitch plane, every GPU 18 links. */
  g_autofree char *path = fs_test_data_path("smi/y_dgx-h100-nics.txt");
  GError *e = NULL;
  g_autofree char *yaml = import_file(path, TRUE, NULL, &e);
  ck_assert(yaml != NULL);
  g_autoptr(FsTopo) t = fs_topo_load_string(yaml, path, cat, NULL, &e);
  ck_assert(t != NULL);
  guint ng, nsw = 0;
  const guint *gpus = fs_topo_gpus(t, &ng);
  for (guint i = 0; i < fs_topo_n_nodes(t); i++) {
    const FsTopoNode *n = fs_topo_node(t, i);
    nsw += n->kind == FS_NODE_SWITCH && n->model->u.sw.kind == FS_SWITCH_NVSWITCH;
  }
  ck_assert_uint_ge(nsw, 1);
  for (guint a = 0; a < ng; a++) {
    ck_assert_uint_eq(fs_topo_node_links(t, gpus[a], FS_LINK_NVLINK), 18);
    guint n;
    const FsTopoAdj *adj = fs_topo_adj(t, gpus[a], &n);
    for (guint k = 0; k < n; k++)   /* no direct GPU-GPU NVLink */
      ck_assert(fs_topo_node(t, adj[k].peer)->kind != FS_NODE_GPU);
  }
  /* DGX-1 (NV1/NV2 cube-mesh): direct links only, 6 per GPU. */
  g_autofree char *p2 = fs_test_data_path("smi/y_dgx1-v100.txt");
  g_autofree char *y2 = import_file(p2, TRUE, NULL, &e);
  ck_assert(y2 != NULL && strstr(y2, "nvswitch") == NULL);
  ck_assert_uint_eq(count_of(y2, "model: nvlink2"), 16);
  /* HGX H100 4-GPU (NV6 to each of 3 peers = 18): direct links, no switch. */
  g_autofree char *p3 = fs_test_data_path("smi/y_hgx-h100-4gpu.txt");
  g_autofree char *y3 = import_file(p3, TRUE, NULL, &e);
  ck_assert(y3 != NULL && strstr(y3, "nvswitch") == NULL);
  ck_assert_uint_eq(count_of(y3, "model: nvlink4, count: 6}"), 6);
  /* DGX-2 (16 GPUs all NV6): one plane; the two CPU affinities make two sockets. */
  g_autofree char *p4 = fs_test_data_path("smi/y_dgx2.txt");
  g_autofree char *y4 = import_file(p4, TRUE, NULL, &e);
  ck_assert(y4 != NULL && strstr(y4, "model: nvswitch-gen1}") != NULL);
  ck_assert(strstr(y4, "socket: 1}") != NULL);
}
END_TEST

START_TEST(test_import_smi_model_options)
{
  g_autofree char *path = fs_test_data_path("smi/y_dgx-a100-nics.txt");
  GError *e = NULL;
  FsImportOptions opt = {.gpu = "a100-sxm4-40gb", .nic = "connectx-7", .cpu = "epyc-9654"};
  g_autofree char *yaml = import_file(path, TRUE, &opt, &e);
  ck_assert_msg(yaml != NULL, "%s", e ? e->message : "");
  ck_assert(strstr(yaml, "given with --gpu") != NULL);
  ck_assert_uint_eq(count_of(yaml, "model: a100-sxm4-40gb}"), 8);
  ck_assert_uint_eq(count_of(yaml, "model: connectx-7}"), 10);
  ck_assert(strstr(yaml, "model: epyc-9654,") != NULL);
  FsImportOptions bad = {.gpu = "h100-sxn", .nic = NULL, .cpu = NULL};
  g_autofree char *none = import_file(path, TRUE, &bad, &e);
  ck_assert(none == NULL);
  fs_assert_error(e, FS_TOPO_ERROR, "--gpu: unknown gpu model \"h100-sxn\"");
  /* A model whose NVLinks cannot carry the matrix: the importer says so. */
  FsImportOptions small = {.gpu = "v100-sxm2-16gb", .nic = NULL, .cpu = NULL};
  g_autofree char *p2 = fs_test_data_path("smi/n_nvlink-budget.txt");
  g_autofree char *y2 = import_file(p2, TRUE, &small, &e);
  ck_assert(y2 == NULL);
  fs_assert_error(e, FS_TOPO_ERROR, "GPU0's NV# cells add up to 24 NVLinks but v100-sxm2-16gb");
}
END_TEST


/* Imports smi text given inline, with messages collected. */
static char *import_text(const char *text, const FsImportOptions *base, GPtrArray *messages,
                         GError **e)
{
  FsImportOptions opt = {0};
  if (base != NULL)
    opt = *base;
  opt.messages = messages;
  return fs_import_smi(text, strlen(text), "inline.txt", cat, &opt, e);
}

START_TEST(test_import_smi_numa_zero_everywhere)
{
  /* A single-socket box or VM: NUMA 0 for every device, SYS cells.  Was
   * refused ("the other cells put GPU0 and GPU2 closer (NODE)"). */
  static const char text[] =
    "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
    "GPU0\t X \tPIX\tSYS\tSYS\t0-31\t0\n"
    "GPU1\tPIX\t X \tSYS\tSYS\t0-31\t0\n"
    "GPU2\tSYS\tSYS\t X \tPIX\t0-31\t0\n"
    "GPU3\tSYS\tSYS\tPIX\t X \t0-31\t0\n";
  g_autoptr(GPtrArray) msg = g_ptr_array_new_with_free_func(g_free);
  GError *e = NULL;
  g_autofree char *yaml = import_text(text, NULL, msg, &e);
  ck_assert_msg(yaml != NULL, "%s", e ? e->message : "");
  ck_assert(strstr(yaml, "NUMA Affinity column is ignored") != NULL);
  gboolean said = FALSE;
  for (guint i = 0; i < msg->len; i++)
    said |= strstr(g_ptr_array_index(msg, i), "inline.txt:2:14: note: The NUMA Affinity") != NULL;
  ck_assert(said);
  ck_assert(strstr(yaml, "socket: 1}") != NULL);   /* SYS: two sockets */
}
END_TEST

START_TEST(test_import_smi_repairs_pasted_text)
{
  /* Tabs lost: a header and a cell run together; then a markdown table. */
  static const char glued[] =
    "\tGPU0\tGPU1\tGPU2\tNIC0NIC1\tCPU Affinity\n"
    "GPU0\t X \tNV18\tNV18\tPIX\tSYS\t0-27\n"
    "GPU1\tNV18\t X \tNV18\tSYSSYS\t0-27\n"
    "GPU2\tNV18\tNV18\t X \tSYS\tPIX\t0-27\n";
  g_autoptr(GPtrArray) msg = g_ptr_array_new_with_free_func(g_free);
  GError *e = NULL;
  g_autofree char *yaml = import_text(glued, NULL, msg, &e);
  ck_assert_msg(yaml != NULL, "%s", e ? e->message : "");
  ck_assert(strstr(yaml, "split 2 words") != NULL);
  ck_assert(strstr(g_ptr_array_index(msg, 0), "repaired: split 2 words of cells or labels run "
                   "together where tabs were lost (first at line 1, column 17: \"NIC0NIC1\")") != NULL);
  static const char md[] =
    "|      | GPU0 | GPU1 | CPU Affinity |\n"
    "|------|------|------|------|\n"
    "| GPU0 | X | NV12 | 0-15 |\n"
    "| GPU1 | NV12 | X | 0-15 |\n";
  g_autoptr(GPtrArray) m2 = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *y2 = import_text(md, NULL, m2, &e);
  ck_assert_msg(y2 != NULL, "%s", e ? e->message : "");
  ck_assert(strstr(g_ptr_array_index(m2, 0), "read 4 markdown table lines") != NULL);
  ck_assert(strstr(y2, "model: nvlink4, count: 12}") != NULL);
}
END_TEST

START_TEST(test_import_smi_identifies_from_smi_q)
{
  g_autofree char *path = fs_test_data_path("smi/y_dgx-h100-nics.txt");
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  GError *e = NULL;
  /* Without clues: a guess, with the alternatives on a message line. */
  g_autoptr(GPtrArray) msg = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *y0 = import_text(text, NULL, msg, &e);
  ck_assert(y0 != NULL && strstr(y0, "model: h100-sxm}") != NULL);
  ck_assert(strstr(y0, "The clues fit as well: h200-sxm, b200") != NULL);
  gboolean guess = FALSE;
  for (guint i = 0; i < msg->len; i++)
    guess |= strstr(g_ptr_array_index(msg, i), "guess: GPU h100-sxm") != NULL;
  ck_assert(guess);
  /* nvidia-smi -L and ibstat text decide GPU and NIC; the CPU follows. */
  static const char l[] = "GPU 0: NVIDIA B200 (UUID: GPU-0)\nGPU 1: NVIDIA B200 (UUID: GPU-1)\n"
                          "CA 'mlx5_0'\n\tCA type: MT4129\n\t\tRate: 400\n";
  FsImportOptions o = {.hw_text = l, .hw_text_len = strlen(l), .hw_text_name = "l.txt"};
  g_autoptr(GPtrArray) m1 = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *y1 = import_text(text, &o, m1, &e);
  ck_assert_msg(y1 != NULL, "%s", e ? e->message : "");
  ck_assert_uint_eq(count_of(y1, "model: b200}"), 8);
  ck_assert(strstr(y1, "B200\"") != NULL && strstr(y1, "15b3:1021") != NULL);
  ck_assert_uint_eq(count_of(y1, "model: connectx-7}"), 10);
  ck_assert(strstr(y1, "model: xeon-platinum-8570,") != NULL);
  /* nvidia-smi -q's Device Id decides as well. */
  static const char q[] = "GPU 00000000:18:00.0\n"
                          "    Product Name                          : NVIDIA H200\n"
                          "    PCI\n"
                          "        Device Id                         : 0x233510DE\n"
                          "GPU 00000000:2A:00.0\n"
                          "    Product Name                          : NVIDIA H200\n";
  FsImportOptions oq = {.hw_text = q, .hw_text_len = strlen(q), .hw_text_name = "q.txt"};
  g_autofree char *yq = import_text(text, &oq, NULL, &e);
  ck_assert(yq != NULL && count_of(yq, "model: h200-sxm}") == 8);
  /* GPU lines that disagree, and text without a clue, are errors. */
  static const char two[] = "GPU 0: NVIDIA H100 80GB HBM3\nGPU 1: NVIDIA H200\n";
  FsImportOptions ot = {.hw_text = two, .hw_text_len = strlen(two), .hw_text_name = "two.txt"};
  ck_assert(import_text(text, &ot, NULL, &e) == NULL);
  fs_assert_error(e, FS_TOPO_ERROR, "two.txt:2:1: this GPU is a \"NVIDIA H200\"");
  FsImportOptions on = {.hw_text = "hello\n", .hw_text_len = 6, .hw_text_name = "none.txt"};
  ck_assert(import_text(text, &on, NULL, &e) == NULL);
  fs_assert_error(e, FS_TOPO_ERROR, "none.txt:1:1: no clue found");
}
END_TEST

START_TEST(test_import_nccl_matches_expected_paths)
{
  g_autoptr(GPtrArray) files = corpus("nccl-xml", "y_", ".xml");
  ck_assert_uint_ge(files->len, 3);
  for (guint f = 0; f < files->len; f++) {
    const char *path = g_ptr_array_index(files, f);
    GError *e = NULL;
    g_autofree char *yaml = import_file(path, FALSE, NULL, &e);
    ck_assert_msg(yaml != NULL, "%s: %s", path, e ? e->message : "");
    ck_assert(g_str_has_prefix(yaml, "# Imported by `fabricsim topo import-nccl` from"));
    g_autoptr(FsTopo) t = fs_topo_load_string(yaml, path, cat, NULL, &e);
    ck_assert_msg(t != NULL, "%s: %s", path, e ? e->message : "");
    g_autofree char *base = g_strndup(path, strlen(path) - 4);
    g_autofree char *pf = g_strconcat(base, ".paths", NULL), *want = NULL;
    ck_assert(g_file_get_contents(pf, &want, NULL, NULL));
    g_auto(GStrv) rows = g_strsplit(g_strstrip(want), "\n", -1);
    guint ng;
    const guint *gpus = fs_topo_gpus(t, &ng);
    ck_assert_uint_eq(ng, g_strv_length(rows));
    for (guint a = 0; a < ng; a++) {
      g_auto(GStrv) cells = g_strsplit(rows[a], " ", -1);
      for (guint b = 0; b < ng; b++) {
        guint nv;
        FsPathType p = fs_topo_path_type(t, gpus[a], gpus[b], &nv);
        g_autofree char *got = fs_path_label(p, nv);
        ck_assert_msg(strcmp(got, cells[b]) == 0, "%s: GPU%u/GPU%u want %s got %s", path, a, b,
                      cells[b], got);
      }
    }
  }
}
END_TEST

START_TEST(test_import_nccl_maps_models)
{
  GError *e = NULL;
  g_autofree char *h = fs_test_data_path("nccl-xml/y_dgx-h100.xml");
  g_autofree char *yh = import_file(h, FALSE, NULL, &e);
  ck_assert_msg(yh != NULL, "%s", e ? e->message : "");
  ck_assert_uint_eq(count_of(yh, "model: h100-sxm}"), 8);
  ck_assert_uint_eq(count_of(yh, "model: nvswitch-gen3}"), 4);
  ck_assert_uint_eq(count_of(yh, "model: nvlink4, count: 5}"), 16);
  ck_assert_uint_eq(count_of(yh, "model: nvlink4, count: 4}"), 16);
  ck_assert_uint_eq(count_of(yh, "model: connectx-7}"), 8);   /* 400000 Mb/s InfiniBand */
  ck_assert_uint_eq(count_of(yh, "model: xeon-platinum-8480c,"), 2);
  ck_assert(strstr(yh, "model: pcie-gen5-x16}") != NULL);
  g_autofree char *a = fs_test_data_path("nccl-xml/y_dgx-a100.xml");
  g_autofree char *ya = import_file(a, FALSE, NULL, &e);
  ck_assert_msg(ya != NULL, "%s", e ? e->message : "");
  ck_assert_uint_eq(count_of(ya, "model: a100-sxm4-80gb}"), 8);
  ck_assert_uint_eq(count_of(ya, "model: nvswitch-gen2}"), 6);
  ck_assert_uint_eq(count_of(ya, "model: connectx-6}"), 9);    /* 200000 Mb/s */
  ck_assert_uint_eq(count_of(ya, "model: epyc-7742,"), 5);
  ck_assert(strstr(ya, "model: pcie-gen4-x16}") != NULL);
  g_autofree char *p = fs_test_data_path("nccl-xml/y_pcie-box.xml");
  g_autofree char *yp = import_file(p, FALSE, NULL, &e);
  ck_assert_msg(yp != NULL, "%s", e ? e->message : "");
  ck_assert_uint_eq(count_of(yp, "model: l40s}"), 4);            /* PCI device 0x26b9 */
  ck_assert(strstr(yp, "model: pcie-gen3-x16}") != NULL);        /* the NIC's 8 GT/s x16 */
  ck_assert(strstr(yp, "model: epyc-7763,") != NULL);  /* familyid 175 (Zen 3), modelid 1 */
  ck_assert_uint_eq(count_of(yp, "model: connectx-5}"), 1);       /* PCI device 0x1017 */
  /* A GPU model that cannot hold the dump's NVLinks: the output would not
   * load, and the importer says so. */
  FsImportOptions v100 = {.gpu = "v100-sxm2-16gb", .nic = NULL, .cpu = NULL};
  g_autofree char *yv = import_file(h, FALSE, &v100, &e);
  ck_assert(yv == NULL);
  fs_assert_error(e, FS_TOPO_ERROR, "the imported topology does not load");
}
END_TEST

START_TEST(test_import_nccl_rejects_with_position)
{
  check_rejects("nccl-xml", ".xml", FALSE, 5);
}
END_TEST

START_TEST(test_import_nccl_junk_never_crashes)
{
  check_either("nccl-xml", ".xml", FALSE);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("import");
  TCase *tcs[] = {
    tcase_create("test_import_smi_round_trip_matrix"),
    tcase_create("test_import_smi_rejects_with_position"),
    tcase_create("test_import_smi_junk_never_crashes"),
    tcase_create("test_import_smi_is_deterministic"),
    tcase_create("test_import_smi_guesses_models_by_nvlink"),
    tcase_create("test_import_smi_nvswitch_plane_rule"),
    tcase_create("test_import_smi_model_options"),
    tcase_create("test_import_smi_numa_zero_everywhere"),
    tcase_create("test_import_smi_repairs_pasted_text"),
    tcase_create("test_import_smi_identifies_from_smi_q"),
    tcase_create("test_import_nccl_matches_expected_paths"),
    tcase_create("test_import_nccl_maps_models"),
    tcase_create("test_import_nccl_rejects_with_position"),
    tcase_create("test_import_nccl_junk_never_crashes"),
  };
  const TTest *fns[] = {
    test_import_smi_round_trip_matrix, test_import_smi_rejects_with_position,
    test_import_smi_junk_never_crashes, test_import_smi_is_deterministic,
    test_import_smi_guesses_models_by_nvlink, test_import_smi_nvswitch_plane_rule,
    test_import_smi_model_options, test_import_smi_numa_zero_everywhere,
    test_import_smi_repairs_pasted_text, test_import_smi_identifies_from_smi_q,
    test_import_nccl_matches_expected_paths,
    test_import_nccl_maps_models, test_import_nccl_rejects_with_position,
    test_import_nccl_junk_never_crashes,
  };
  for (gsize i = 0; i < G_N_ELEMENTS(tcs); i++) {
    tcase_add_checked_fixture(tcs[i], setup, teardown);
    tcase_add_test(tcs[i], fns[i]);
    tcase_set_timeout(tcs[i], 120);
    suite_add_tcase(s, tcs[i]);
  }
  return fs_test_run_suite(s);
}
