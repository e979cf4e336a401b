/* import-smi-build.c — from a parsed `nvidia-smi topo -m` matrix
 * (import-smi.c) to topology YAML.
 *
 * Inference (documented for users in topologies/README.md).  Cells rank
 * the PCIe distance of a pair: PIX 1 < PXB 2 < PHB 3 < NODE 4 < SYS 5; an
 * NV# cell hides the pair's PCIe distance.  Devices are grouped four times
 * by union-find: pairs at most NODE (plus equal NUMA affinity, or equal
 * CPU affinity when there is no NUMA column) share a socket; at most PHB a
 * host bridge (one CPU node); at most PXB an upstream PCIe switch; PIX a
 * leaf PCIe switch.  Groups with no known cell between them are merged at
 * the socket and host-bridge levels (first fit, in device order), so that
 * devices seen only through NV# cells land on the first socket.  Every
 * known cell is then checked against the tree (a matrix that is not a
 * tree is an error at the offending cell).  NVLink: a GPU's NV# cells
 * become point-to-point links of that count when their sum fits the GPU
 * model's NVLinks; a set of GPUs that are all NV k to each other and that
 * would exceed it becomes an NVSwitch plane where every GPU has k links,
 * spread evenly over the fewest switches of the model that hold them.
 * Finally the YAML is loaded and every GPU pair's class compared with the
 * input.
 *
 * Cost: O(n^2) for n devices (n <= FS_IMPORT_MAX_DEVICES) plus the load.
 */
#include <stdlib.h>
#include <string.h>

#include "topo/identify.h"
#include "topo/import-private.h"
#include "topo/import-smi-private.h"
#include "topo/import.h"
#include "topo/paths.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/strutil.h"

/* ---- grouping ---------------------------------------------------------------- */

static guint uf_find(guint *p, guint x)
{
  while (p[x] != x)
    x = p[x] = p[p[x]];
  return x;
}

/* Joins x and y keeping the smaller index as the root (deterministic). */
static void uf_union(guint *p, guint x, guint y)
{
  x = uf_find(p, x), y = uf_find(p, y);
  if (x < y)
    p[y] = x;
  else if (y < x)
    p[x] = y;
}

static int level(const Smi *s, guint i, guint j)
{
  int c = s->m[i * s->n + j].code;
  return c >= C_PIX ? c : 0;
}

/* Affinity key of device i for socket grouping, or NULL. */
static const char *aff_key(const Smi *s, guint i)
{
  if (s->aff_ignored != NULL)
    return NULL;
  const char *v = s->has_numa ? dev(s, i)->numa_aff : dev(s, i)->cpu_aff;
  return v != NULL && strcmp(v, "N/A") != 0 ? v : NULL;
}

/* Groups at threshold lvl into p (roots are the smallest members): union of
 * pairs whose known level is <= lvl.  With merge, groups inside one
 * parent group (parent may be NULL) that have no known cell between them
 * are then merged, first fit in order of their smallest member. */
static void group(const Smi *s, guint *p, int lvl, const guint *parent, gboolean merge)
{
  guint n = s->n;
  for (guint i = 0; i < n; i++)
    p[i] = i;
  for (guint i = 0; i < n; i++)
    for (guint j = i + 1; j < n; j++) {
      int v = level(s, i, j);
      if (v > 0 && v <= lvl)
        uf_union(p, i, j);
    }
  if (lvl == C_NODE)
    for (guint i = 0; i < n; i++)
      for (guint j = i + 1; j < n && aff_key(s, i) != NULL; j++)
        if (aff_key(s, j) != NULL && strcmp(aff_key(s, i), aff_key(s, j)) == 0)
          uf_union(p, i, j);
  if (!merge)
    return;
  /* conflict[a*n+b]: groups with roots a and b have a known cell between
   * them or different affinities. */
  g_autofree guint8 *conflict = g_new0(guint8, (gsize)n * n);
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < n; j++) {
      guint a = uf_find(p, i), b = uf_find(p, j);
      if (a == b)
        continue;
      const char *ka = lvl == C_NODE ? aff_key(s, i) : NULL;
      const char *kb = lvl == C_NODE ? aff_key(s, j) : NULL;
      if (level(s, i, j) > 0 || (ka != NULL && kb != NULL && strcmp(ka, kb) != 0) ||
          (parent != NULL && uf_find((guint *)parent, i) != uf_find((guint *)parent, j)))
        conflict[a * n + b] = 1;
    }
  for (guint r = 0; r < n; r++) {
    if (uf_find(p, r) != r)
      continue;
    for (guint k = 0; k < r; k++) {
      if (uf_find(p, k) != k || conflict[k * n + r])
        continue;
      /* Merge r into k: k inherits r's conflicts. */
      for (guint x = 0; x < n; x++) {
        conflict[k * n + x] |= conflict[r * n + x];
        conflict[x * n + k] |= conflict[x * n + r];
      }
      p[r] = k;
      break;
    }
  }
  for (guint i = 0; i < n; i++)
    p[i] = uf_find(p, i);
}

/* ---- model choices ------------------------------------------------------------- */

typedef struct {
  const FsModel *gpu, *cpu, *nic;
  char *gpu_why, *cpu_why, *nic_why;
  GPtrArray *guesses;  /* char *: YAML notes on undecided models, written after the choice */
} Models;

/* NVLink facts of the matrix: per-GPU sums of NV# cells, and per connected
 * NV component whether it is a uniform all-to-all set (count k). */
typedef struct {
  guint ngpu;
  guint *gpu_dev;      /* GPU index -> device index */
  guint *sum;          /* per GPU */
  guint *comp;         /* per GPU: component root (GPU index) */
  guint *comp_size;    /* per root */
  guint *comp_k;       /* per root: k if uniform all-to-all, else 0 */
  guint max_comp;
} NvFacts;

/* Fills f from the matrix: its GPUs' device indices, each GPU's sum of direct NVLinks, the
 * components of GPUs joined by NVLink (union-find), their sizes, the largest, and for each
 * component the k of its links when all its pairs are NVk.  f owns new arrays that
 * nv_facts_clear frees.  Cost: O(GPUs²). */
static void nv_facts(const Smi *s, NvFacts *f)
{
  guint g = 0;
  for (guint i = 0; i < s->n; i++)
    g += dev(s, i)->gpu;
  f->ngpu = g;
  f->gpu_dev = g_new(guint, g);
  f->sum = g_new0(guint, g);
  f->comp = g_new(guint, g);
  f->comp_size = g_new0(guint, g);
  f->comp_k = g_new0(guint, g);
  g = 0;
  for (guint i = 0; i < s->n; i++)
    if (dev(s, i)->gpu)
      f->gpu_dev[g++] = i;
  for (guint a = 0; a < f->ngpu; a++)
    f->comp[a] = a;
  for (guint a = 0; a < f->ngpu; a++)
    for (guint b = 0; b < f->ngpu; b++) {
      const Cell *c = &s->m[f->gpu_dev[a] * s->n + f->gpu_dev[b]];
      if (c->code == C_NV) {
        f->sum[a] += c->nv;
        uf_union(f->comp, a, b);
      }
    }
  f->max_comp = 0;
  for (guint a = 0; a < f->ngpu; a++)
    f->comp_size[f->comp[a] = uf_find(f->comp, a)]++;
  for (guint r = 0; r < f->ngpu; r++) {
    if (f->comp[r] != r || f->comp_size[r] < 2)
      continue;
    f->max_comp = MAX(f->max_comp, f->comp_size[r]);
    guint k = 0;
    gboolean uniform = TRUE;
    for (guint a = 0; a < f->ngpu && uniform; a++)
      for (guint b = a + 1; b < f->ngpu && uniform; b++) {
        if (f->comp[a] != r || f->comp[b] != r)
          continue;
        const Cell *c = &s->m[f->gpu_dev[a] * s->n + f->gpu_dev[b]];
        if (c->code != C_NV || (k != 0 && c->nv != k))
          uniform = FALSE;
        else
          k = c->nv;
      }
    f->comp_k[r] = uniform ? k : 0;
  }
}

static void nv_facts_clear(NvFacts *f)
{
  g_free(f->gpu_dev), g_free(f->sum), g_free(f->comp), g_free(f->comp_size), g_free(f->comp_k);
}

/* TRUE when GPU model m can carry component r: as direct links, or as an
 * NVSwitch plane (*plane set). */
static gboolean fits(const NvFacts *f, guint r, const FsModel *m, gboolean *plane)
{
  guint budget = m->u.gpu.nvlink != NULL ? m->u.gpu.nvlinks : 0, most = 0;
  for (guint a = 0; a < f->ngpu; a++)
    if (f->comp[a] == r)
      most = MAX(most, f->sum[a]);
  *plane = FALSE;
  if (most <= budget)
    return TRUE;
  if (f->comp_size[r] >= 3 && f->comp_k[r] != 0 && f->comp_k[r] <= budget) {
    *plane = TRUE;
    return TRUE;
  }
  return FALSE;
}

/* TRUE when m carries every component; with direct_only, as direct links
 * alone (no NVSwitch plane). */
static gboolean fits_all(const NvFacts *f, const FsModel *m, gboolean direct_only)
{
  gboolean plane;
  for (guint r = 0; r < f->ngpu; r++)
    if (f->comp[r] == r && (!fits(f, r, m, &plane) || (direct_only && plane)))
      return FALSE;
  return TRUE;
}

/* fits() for the identification: the GPU model carries the matrix. */
static gboolean fits_cb(const FsModel *m, gpointer data)
{
  return fits_all(data, m, FALSE);
}

/* The highest CPU number in the CPU Affinity column + 1 (0 when none). */
static guint logical_cpus(const Smi *s)
{
  guint most = 0;
  for (guint i = 0; i < s->n; i++) {
    const char *p = dev(s, i)->cpu_aff;
    while (p != NULL && *p) {
      if (g_ascii_isdigit(*p)) {
        char *end;
        guint64 v = g_ascii_strtoull(p, &end, 10);
        if (v < 1000000)
          most = MAX(most, (guint)v + 1);
        p = end;
      } else {
        p++;
      }
    }
  }
  return most;
}

/* Adds "what model (why); also fits a, b" to the messages and the YAML
 * when the clues left alternatives. */
static void report_guess(const Smi *s, const FsImportOptions *opt, Models *md,
                         const char *what, const FsIdentity *id, const char *option)
{
  if (id->alternatives == NULL || id->alternatives->len == 0)
    return;
  g_autofree char *alt = fs_identity_alternatives(id);
  g_ptr_array_add(md->guesses, g_strdup_printf(
           "Guess: %s %s (%s). The clues fit as well: %s. Name the model with %s%s.", what,
           id->model->name, id->why, alt, option,
           strcmp(option, "--gpu") == 0 ? " or give nvidia-smi -L/-q text with --smi-q" : ""));
  if (opt != NULL && opt->messages != NULL)
    g_ptr_array_add(opt->messages,
                    g_strdup_printf("%s: guess: %s %s (%s); also fits %s; name it with %s",
                                    s->name, what, id->model->name, id->why, alt, option));
}

/* Chooses the GPU, CPU and NIC models into md, each from its option (--gpu, --cpu, --nic) when
 * given, else identified from the matrix's NVLink facts f, its CPU affinities and socket count
 * nsock, and the hardware text of opt (parsed here); the reason goes to md's *_why strings and
 * undecided guesses to md->guesses and opt->messages.  Returns FALSE with error set for a model
 * name the catalog lacks, bad hardware text, or FS_TOPO_ERROR_MODEL when no model fits. */
static gboolean choose_models(const Smi *s, const NvFacts *f, guint nsock,
                              const FsCatalog *cat, const FsImportOptions *opt, Models *md,
                              GError **error)
{
  FsHwText hw = {0};
  if (opt != NULL && opt->hw_text != NULL &&
      !fs_hw_text_parse(opt->hw_text, opt->hw_text_len,
                        opt->hw_text_name ? opt->hw_text_name : "--smi-q", &hw, error))
    return FALSE;
  gboolean ok = FALSE;
  FsIdentity gi = {0}, ci = {0}, ni = {0};
  guint most = 0;
  for (guint a = 0; a < f->ngpu; a++)
    most = MAX(most, f->sum[a]);
  if (opt != NULL && opt->gpu != NULL) {
    if (!(md->gpu = imp_require(cat, opt->gpu, FS_MODEL_GPU, "--gpu", error)))
      goto out;
    md->gpu_why = g_strdup("given with --gpu");
  } else {
    FsGpuClues gc = {.nv_sum = most, .nv_set = f->max_comp, .fits = fits_cb,
                     .fits_data = (gpointer)f};
    for (guint r = 0; r < f->ngpu; r++)
      if (f->comp[r] == r && f->comp_size[r] >= 3 && f->comp_k[r] > gc.nv_plane)
        gc.nv_plane = f->comp_k[r];
    if (hw.gpu_names != NULL && hw.gpu_names->len > 0)
      gc.product_name = g_ptr_array_index(hw.gpu_names, 0);
    gc.pci_vendor = hw.gpu_vendor, gc.pci_device = hw.gpu_device;
    fs_identify_gpu(cat, &gc, &gi);
    if (gi.model == NULL) {
      /* A whole-matrix error: at the header's first device. */
      const Dev *d0 = s->devs->len > 0 ? g_ptr_array_index(s->devs, 0) : NULL;
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL, s->name,
                      d0 != NULL ? MAX(d0->line, 1) : 1, d0 != NULL ? MAX(d0->col, 1) : 1,
                      "no GPU model in the catalog has the %u NVLinks the "
                      "matrix needs; name one with --gpu", most);
      goto out;
    }
    md->gpu = gi.model;
    md->gpu_why = g_strdup_printf("%s: %s", gi.decided ? "identified" : "guessed", gi.why);
    report_guess(s, opt, md, "GPU", &gi, "--gpu");
  }
  if (opt != NULL && opt->cpu != NULL) {
    if (!(md->cpu = imp_require(cat, opt->cpu, FS_MODEL_CPU, "--cpu", error)))
      goto out;
    md->cpu_why = g_strdup("given with --cpu");
  } else {
    FsCpuClues cc = {.family = -1, .model = -1, .logical_cpus = logical_cpus(s),
                     .sockets = nsock, .gpu = md->gpu};
    guint spare = md->gpu->u.gpu.nvlink != NULL && f->max_comp >= 2 ? md->gpu->u.gpu.nvlinks : 0;
    for (guint a = 0; a < f->ngpu && spare > 0; a++)
      spare = f->sum[a] < md->gpu->u.gpu.nvlinks ? MIN(spare, md->gpu->u.gpu.nvlinks - f->sum[a])
                                                  : 0;
    cc.gpu_spare_nvlinks = spare;
    fs_identify_cpu(cat, &cc, &ci);
    if (ci.model == NULL) {
      g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL, "%s: the catalog has no CPU model",
                  s->name);
      goto out;
    }
    md->cpu = ci.model;
    md->cpu_why = g_strdup_printf("%s: %s", ci.decided ? "identified" : "guessed", ci.why);
    report_guess(s, opt, md, "CPU", &ci, "--cpu");
  }
  if (opt != NULL && opt->nic != NULL) {
    if (!(md->nic = imp_require(cat, opt->nic, FS_MODEL_NIC, "--nic", error)))
      goto out;
    md->nic_why = g_strdup("given with --nic");
  } else {
    FsNicClues nc = {.pci_vendor = hw.nic_vendor, .pci_device = hw.nic_device,
                     .rate_gbps = hw.nic_rate_gbps, .family = hw.nic_family, .gpu = md->gpu};
    fs_identify_nic(cat, &nc, &ni);
    if (ni.model == NULL) {
      g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL, "%s: the catalog has no NIC model",
                  s->name);
      goto out;
    }
    md->nic = ni.model;
    md->nic_why = g_strdup_printf("%s: %s", ni.decided ? "identified" : "guessed", ni.why);
    gboolean has_nic = FALSE;
    for (guint i = 0; i < s->n; i++)
      has_nic |= !dev(s, i)->gpu;
    if (has_nic)
      report_guess(s, opt, md, "NIC", &ni, "--nic");
  }
  ok = TRUE;
out:
  fs_identity_clear(&gi), fs_identity_clear(&ci), fs_identity_clear(&ni);
  fs_hw_text_clear(&hw);
  return ok;
}

/* ---- building ------------------------------------------------------------------ */

/* Checks every known cell against the grouping; error at the first cell
 * the tree cannot reproduce. */
static gboolean check_tree(const Smi *s, const guint *sock, const guint *hb, const guint *up,
                           const guint *leaf, GError **error)
{
  for (guint i = 0; i < s->n; i++)
    for (guint j = 0; j < s->n; j++) {
      int want = level(s, i, j);
      if (want == 0)
        continue;
      int got = leaf[i] == leaf[j] ? C_PIX : up[i] == up[j] ? C_PXB : hb[i] == hb[j] ? C_PHB
              : sock[i] == sock[j] ? C_NODE : C_SYS;
      if (got == want)
        continue;
      const Cell *c = &s->m[i * s->n + j];
      if (c->line == 0)
        c = &s->m[j * s->n + i];
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, c->line, c->col,
                      "%s/%s is %s, but the other cells put %s and %s %s (%s); the matrix does "
                      "not describe one PCIe tree", dev(s, i)->label, dev(s, j)->label,
                      fs_smi_level_names[want], dev(s, i)->label, dev(s, j)->label,
                      got < want ? "closer" : "farther apart", fs_smi_level_names[got]);
      return FALSE;
    }
  return TRUE;
}

static const FsModel *dev_pcie(const Smi *s, guint i, const Models *md)
{
  return dev(s, i)->gpu ? md->gpu->u.gpu.pcie : md->nic->u.nic.pcie;
}

/* Verifies that the YAML reproduces every GPU pair of the input. */
static gboolean verify(const Smi *s, const NvFacts *f, const char *yaml, const FsCatalog *cat,
                       GError **error)
{
  GError *e = NULL;
  g_autofree char *label = g_strdup_printf("%s (imported)", s->name);
  g_autoptr(FsTopo) t = fs_topo_load_string(yaml, label, cat, NULL, &e);
  if (t == NULL) {
    g_set_error(error, FS_TOPO_ERROR, e->code, "the imported topology does not load: %s",
                e->message);
    g_error_free(e);
    return FALSE;
  }
  guint ng;
  const guint *gpus = fs_topo_gpus(t, &ng);
  g_assert(ng == f->ngpu);
  for (guint a = 0; a < ng; a++)
    for (guint b = 0; b < ng; b++) {
      const Cell *c = &s->m[f->gpu_dev[a] * s->n + f->gpu_dev[b]];
      guint nv;
      FsPathType p = fs_topo_path_type(t, gpus[a], gpus[b], &nv);
      g_autofree char *got = fs_path_label(p, nv), *want = smi_cell_label(c);
      if (strcmp(got, want) != 0) {
        fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, c->line, c->col,
                        "the imported topology classifies %s/%s as %s, not %s as here (the "
                        "models chosen cannot reproduce this cell)",
                        dev(s, f->gpu_dev[a])->label, dev(s, f->gpu_dev[b])->label, got, want);
        return FALSE;
      }
    }
  return TRUE;
}

/* The affinity column says nothing when two devices with equal affinity
 * are SYS apart (a VM or a single-socket box reports NUMA 0 everywhere):
 * sockets then come from the cells alone, and the YAML and the messages
 * say so. */
static void check_affinity(Smi *s, const FsImportOptions *opt)
{
  for (guint i = 0; i < s->n; i++)
    for (guint j = i + 1; j < s->n; j++) {
      const char *a = aff_key(s, i), *b = aff_key(s, j);
      if (level(s, i, j) != C_SYS || a == NULL || b == NULL || strcmp(a, b) != 0)
        continue;
      const char *col = s->has_numa ? "NUMA Affinity" : "CPU Affinity";
      const Cell *c = &s->m[i * s->n + j];
      if (c->line == 0)
        c = &s->m[j * s->n + i];
      g_autofree char *q = fs_escape_controls(a);
      s->aff_ignored = g_strdup_printf(
        "The %s column is ignored: %s and %s both say %s there but their cell is SYS (line "
        "%d), which NUMA nodes cannot be (a VM, or a box whose %s says nothing); sockets "
        "come from the SYS cells alone.", col, dev(s, i)->label, dev(s, j)->label, q, c->line,
        col);
      if (opt != NULL && opt->messages != NULL)
        g_ptr_array_add(opt->messages,
                        g_strdup_printf("%s:%d:%d: note: %s", s->name, c->line, c->col,
                                        s->aff_ignored));
      return;
    }
}

/* Builds topology YAML from the parsed matrix s: groups the devices into sockets, host bridges,
 * upstream and leaf PCIe switches from the cell codes (and the affinity column, which is dropped
 * with a note when only without it the cells make a PCIe tree), chooses the models, then emits
 * CPUs, GPUs, NICs, NVLinks (direct, or an NVSwitch plane), PCIe switches and socket links, and
 * checks that the YAML reproduces every GPU pair.  Returns a new string that the caller frees,
 * or NULL with error set: the tree check's error at its cell, FS_TOPO_ERROR_MODEL or _PORTS
 * when no model or port budget fits, or verify's error. */
char *smi_build(Smi *s, const FsCatalog *cat, const FsImportOptions *opt, GError **error)
{
  guint n = s->n;
  check_affinity(s, opt);
  g_autofree guint *sock = g_new(guint, n), *hb = g_new(guint, n), *up = g_new(guint, n),
                   *leaf = g_new(guint, n);
  group(s, sock, C_NODE, NULL, TRUE);
  group(s, hb, C_PHB, sock, TRUE);
  group(s, up, C_PXB, NULL, FALSE);
  group(s, leaf, C_PIX, NULL, FALSE);
  GError *tree_error = NULL;
  if (!check_tree(s, sock, hb, up, leaf, &tree_error)) {
    /* Equal affinities across SYS cells through NV# pairs: the cells alone
     * may still make a tree (the affinity column says nothing). */
    gboolean retried = FALSE;
    if (s->aff_ignored == NULL) {
      for (guint i = 0; i < n && !retried; i++)
        retried = aff_key(s, i) != NULL;
      if (retried) {
        s->aff_ignored = g_strdup_printf(
          "The %s column is ignored: with it the cells make no PCIe tree (%s); without it "
          "they do, so it says nothing about sockets here (a VM, or a box that reports one "
          "NUMA node).", s->has_numa ? "NUMA Affinity" : "CPU Affinity", tree_error->message);
        group(s, sock, C_NODE, NULL, TRUE);
        group(s, hb, C_PHB, sock, TRUE);
      }
    }
    if (!retried || !check_tree(s, sock, hb, up, leaf, NULL)) {
      g_propagate_error(error, tree_error);
      return NULL;
    }
    if (opt != NULL && opt->messages != NULL)
      g_ptr_array_add(opt->messages, g_strdup_printf("%s: note: %s", s->name, s->aff_ignored));
    g_error_free(tree_error);
  }

  NvFacts f = {0};
  nv_facts(s, &f);
  Models md = {0};
  char *yaml = NULL;
  g_autoptr(ImpGraph) g = imp_graph_new();
  int *cpu_node = g_new(int, n), *sock_index = g_new(int, n), *first_cpu = NULL;
  guint *node = g_new(guint, n);
  GString *plane_desc = g_string_new(NULL);
  /* CPUs: one per host-bridge group, numbered by socket in device order. */
  guint nsock = 0, ncpu = 0;
  for (guint i = 0; i < n; i++)
    sock_index[i] = cpu_node[i] = -1;
  for (guint i = 0; i < n; i++)
    if (sock[i] == i)
      sock_index[i] = (int)nsock++;
  md.guesses = g_ptr_array_new_with_free_func(g_free);
  if (!choose_models(s, &f, nsock, cat, opt, &md, error))
    goto out;
  first_cpu = g_new(int, nsock);
  for (guint k = 0; k < nsock; k++)
    first_cpu[k] = -1;
  for (guint sk = 0; sk < nsock; sk++)
    for (guint i = 0; i < n; i++)
      if (hb[i] == i && sock_index[sock[i]] == (int)sk) {
        cpu_node[i] = (int)imp_add_node(g, md.cpu, (int)sk, NULL, "cpu%u", ncpu++);
        if (first_cpu[sk] < 0)
          first_cpu[sk] = cpu_node[i];
      }
  /* GPUs in column order, then NICs. */
  guint ngpu = 0, nnic = 0;
  for (guint i = 0; i < n; i++)
    if (dev(s, i)->gpu) {
      g_autofree char *own = g_strdup_printf("GPU%u", ngpu);
      const char *c = strcmp(own, dev(s, i)->label) != 0 ? dev(s, i)->label : NULL;
      node[i] = imp_add_node(g, md.gpu, -1, c, "gpu%u", ngpu++);
    }
  for (guint i = 0; i < n; i++)
    if (!dev(s, i)->gpu) {
      g_autofree char *c = dev(s, i)->alias != NULL
                             ? g_strdup_printf("%s (%s)", dev(s, i)->label, dev(s, i)->alias)
                             : g_strdup(dev(s, i)->label);
      node[i] = imp_add_node(g, md.nic, -1, c, "nic%u", nnic++);
    }

  /* NVLink. */
  const FsModel *nvl = md.gpu->u.gpu.nvlink, *nvsw = NULL;
  guint nswitch = 0, nplanes = 0, ndirect = 0;
  for (guint r = 0; r < f.ngpu; r++) {
    if (f.comp[r] != r || f.comp_size[r] < 2)
      continue;
    gboolean plane;
    if (!fits(&f, r, md.gpu, &plane)) {
      guint a = r;
      for (guint x = 0; x < f.ngpu; x++)
        if (f.comp[x] == r && f.sum[x] > f.sum[a])
          a = x;
      const Dev *d = dev(s, f.gpu_dev[a]);
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PORTS, s->name, d->row_line, 1,
                      "%s's NV# cells add up to %u NVLinks but %s has %u, and its NVLink peers "
                      "are not all NV# of one count to each other (which would mean an NVSwitch "
                      "plane)", d->label, f.sum[a], md.gpu->name, md.gpu->u.gpu.nvlinks);
      goto out;
    }
    if (!plane) {
      for (guint a = 0; a < f.ngpu; a++)
        for (guint b = a + 1; b < f.ngpu; b++) {
          const Cell *c = &s->m[f.gpu_dev[a] * n + f.gpu_dev[b]];
          if (f.comp[a] == r && c->code == C_NV) {
            imp_add_link(g, node[f.gpu_dev[a]], node[f.gpu_dev[b]], nvl, c->nv);
            ndirect++;
          }
        }
      continue;
    }
    /* A plane: the fewest switches S with size * ceil(k/S) ports each. */
    if (nvsw == NULL && !(nvsw = imp_nvswitch(cat, nvl))) {
      g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL,
                  "%s: no NVSwitch model in the catalog has %s ports", s->name, nvl->name);
      goto out;
    }
    guint k = f.comp_k[r], m = f.comp_size[r], S = 0;
    for (guint x = 1; x <= k && S == 0; x++)
      if (m * ((k + x - 1) / x) <= nvsw->u.sw.ports)
        S = x;
    if (S == 0) {
      g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PORTS,
                  "%s: %u GPUs all NV%u to each other need more NVSwitch ports than %s chips "
                  "have (%u)", s->name, m, k, nvsw->name, nvsw->u.sw.ports);
      goto out;
    }
    guint sw0 = g->nodes->len;
    for (guint x = 0; x < S; x++)
      imp_add_node(g, nvsw, -1, NULL, "nvswitch%u", nswitch++);
    for (guint a = 0; a < f.ngpu; a++)
      if (f.comp[a] == r)
        for (guint x = 0; x < S; x++)
          imp_add_link(g, node[f.gpu_dev[a]], sw0 + x, nvl, k / S + (x < k % S));
    g_string_append_printf(plane_desc, "%s%u GPUs all NV%u: %u %s, each GPU with %u links",
                           nplanes ? "; " : "", m, k, S, nvsw->name, k);
    nplanes++;
  }

  /* PCIe: the largest switch fan-out decides the switch model. */
  guint most_ports = 0;
  for (guint i = 0; i < n; i++) {
    guint kids = 0;
    if (leaf[i] == i) {
      for (guint j = 0; j < n; j++)
        kids += leaf[j] == i;
      most_ports = MAX(most_ports, kids + 1);
    }
    if (up[i] == i) {
      kids = 0;
      for (guint j = 0; j < n; j++)
        kids += up[j] == i && leaf[j] == j;
      most_ports = MAX(most_ports, kids + 1);
    }
  }
  const FsModel *psw = imp_pcie_switch(cat, md.gpu->u.gpu.pcie, most_ports);
  guint npsw = 0;
  for (guint i = 0; i < n; i++) {
    if (up[i] != i)
      continue;
    const FsModel *cpu_pcie = md.cpu->u.cpu.pcie;
    guint cpu = (guint)cpu_node[hb[i]], nleaf = 0;
    for (guint j = 0; j < n; j++)
      nleaf += up[j] == i && leaf[j] == j;
    if (nleaf == 1 && leaf[i] == i) {
      guint size = 0;
      for (guint j = 0; j < n; j++)
        size += leaf[j] == i;
      if (size == 1) {
        imp_add_link(g, node[i], cpu, dev_pcie(s, i, &md), 1);
        continue;
      }
    }
    if (psw == NULL) {
      g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL,
                  "%s: no PCIe switch model in the catalog has %u ports", s->name, most_ports);
      goto out;
    }
    const FsModel *sw_link = psw->u.sw.port_link != NULL ? psw->u.sw.port_link : cpu_pcie;
    guint top = imp_add_node(g, psw, -1, NULL, "pcie%u", npsw++);
    imp_add_link(g, top, cpu, sw_link, 1);
    gboolean direct_used = FALSE;
    for (guint j = 0; j < n; j++) {
      if (up[j] != i || leaf[j] != j)
        continue;
      guint parent = top, size = 0;
      for (guint x = 0; x < n; x++)
        size += leaf[x] == j;
      /* One lone device may sit on the upstream switch itself (PXB to the
       * rest still); others get a leaf switch each. */
      if (nleaf > 1 && size == 1 && !direct_used) {
        direct_used = TRUE;
      } else if (nleaf > 1) {
        parent = imp_add_node(g, psw, -1, NULL, "pcie%u", npsw++);
        imp_add_link(g, parent, top, sw_link, 1);
      }
      for (guint x = 0; x < n; x++)
        if (leaf[x] == j)
          imp_add_link(g, node[x], parent, dev_pcie(s, x, &md), 1);
    }
  }
  /* Host bridges of a socket joined to its first; sockets to socket 0. */
  for (guint i = 0; i < n; i++)
    if (hb[i] == i && cpu_node[i] != first_cpu[sock_index[sock[i]]])
      imp_add_link(g, (guint)cpu_node[i], (guint)first_cpu[sock_index[sock[i]]],
                   md.cpu->u.cpu.pcie, 1);
  for (guint k = 1; k < nsock; k++) {
    guint count;
    const FsModel *sl = imp_socket_link(md.cpu, &count);
    imp_add_link(g, (guint)first_cpu[0], (guint)first_cpu[k], sl, count);
  }

  imp_note(g, "GPU model %s (%s); CPU %s (%s); NIC %s (%s). Override with --gpu, --cpu and "
           "--nic.", md.gpu->name, md.gpu_why, md.cpu->name, md.cpu_why, md.nic->name,
           md.nic_why);
  for (guint i = 0; i < md.guesses->len; i++)
    imp_note(g, "%s", (const char *)g_ptr_array_index(md.guesses, i));
  if (s->aff_ignored != NULL)
    imp_note(g, "%s", s->aff_ignored);
  if (s->repairs != NULL)
    imp_note(g, "Repaired input: %s.", s->repairs);
  if (nplanes > 0)
    imp_note(g, "NVLink: every pair NV# of one count, more links than point-to-point allows, "
             "is an NVSwitch plane, links spread evenly over the fewest switches that hold "
             "them (%s).%s", plane_desc->str,
             ndirect ? " Other NV# cells are direct links." : "");
  else if (ndirect > 0)
    imp_note(g, "NVLink: each NV# cell is that many direct links between the pair.");
  imp_note(g, "PCIe, inferred from the PIX/PXB/PHB/NODE/SYS cells%s: %u socket%s, %u host "
           "bridge%s (CPU nodes), %u PCIe switch%s (%s). A pair shown as NV# hides its PCIe "
           "path; devices known only through such cells are put on the first socket.",
           s->has_numa ? " and NUMA affinity" : "", nsock, nsock == 1 ? "" : "s", ncpu,
           ncpu == 1 ? "" : "s", npsw, npsw == 1 ? "" : "es", psw != NULL ? psw->name : "none");
  yaml = imp_emit(g, "import-smi", s->name);
  if (!verify(s, &f, yaml, cat, error))
    g_clear_pointer(&yaml, g_free);
out:
  g_string_free(plane_desc, TRUE);
  g_free(cpu_node), g_free(sock_index), g_free(first_cpu), g_free(node);
  nv_facts_clear(&f);
  g_free(md.gpu_why), g_free(md.cpu_why), g_free(md.nic_why);
  if (md.guesses != NULL)
    g_ptr_array_free(md.guesses, TRUE);
  return yaml;
}
