/* identify.c — the identification rules of identify.h: candidates in
 * catalog file order, narrowed clue by clue. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/identify.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/strutil.h"

void fs_identity_clear(FsIdentity *id)
{
  g_clear_pointer(&id->why, g_free);
  if (id->alternatives != NULL)
    g_ptr_array_free(id->alternatives, TRUE);
  id->alternatives = NULL;
  id->model = NULL;
}

char *fs_identity_alternatives(const FsIdentity *id)
{
  GString *s = g_string_new(NULL);
  for (guint i = 0; id->alternatives != NULL && i < id->alternatives->len; i++) {
    const FsModel *m = g_ptr_array_index(id->alternatives, i);
    g_string_append_printf(s, "%s%s", i ? ", " : "", m->name);
  }
  return g_string_free(s, FALSE);
}

/* ---- candidates ----------------------------------------------------------- */

static gint by_position(gconstpointer a, gconstpointer b)
{
  const FsModel *x = *(const FsModel *const *)a, *y = *(const FsModel *const *)b;
  int c = strcmp(x->file, y->file);
  if (c != 0)
    return c;
  return x->line != y->line ? (x->line < y->line ? -1 : 1) : strcmp(x->name, y->name);
}

/* Every model of kind, in catalog file order. */
static GPtrArray *all_of(const FsCatalog *cat, FsModelKind kind)
{
  GPtrArray *a = g_ptr_array_new();
  for (guint i = 0; i < fs_catalog_size(cat); i++) {
    const FsModel *m = fs_catalog_nth(cat, i);
    if (m->kind == kind)
      g_ptr_array_add(a, (gpointer)m);
  }
  g_ptr_array_sort(a, by_position);
  return a;
}

typedef gboolean (*Keep)(const FsModel *m, gconstpointer clue);

/* Keeps the candidates keep() accepts, when it accepts any; returns how
 * many it accepted (0: the set is unchanged). */
static guint narrow(GPtrArray *cand, Keep keep, gconstpointer clue)
{
  guint n = 0;
  for (guint i = 0; i < cand->len; i++)
    n += keep(g_ptr_array_index(cand, i), clue) != FALSE;
  if (n == 0)
    return 0;
  for (guint i = cand->len; i-- > 0;)
    if (!keep(g_ptr_array_index(cand, i), clue))
      g_ptr_array_remove_index(cand, i);
  return n;
}

/* Fills out from the candidates left: the first, and the rest. */
static void finish(GPtrArray *cand, gboolean decided, GString *why, FsIdentity *out)
{
  out->model = cand->len > 0 ? g_ptr_array_index(cand, 0) : NULL;
  out->decided = decided && cand->len == 1;
  out->alternatives = g_ptr_array_new();
  for (guint i = 1; i < cand->len; i++)
    g_ptr_array_add(out->alternatives, g_ptr_array_index(cand, i));
  out->why = g_string_free(why, FALSE);
  g_ptr_array_free(cand, TRUE);
}

static void say(GString *why, const char *format, ...) G_GNUC_PRINTF(2, 3);
static void say(GString *why, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  if (why->len > 0)
    g_string_append(why, "; ");
  g_string_append_vprintf(why, format, ap);
  va_end(ap);
}

/* ---- GPUs ------------------------------------------------------------------ */

static gboolean gpu_fits(const FsModel *m, gconstpointer clue)
{
  const FsGpuClues *c = clue;
  return c->fits == NULL || c->fits(m, c->fits_data);
}

static gboolean gpu_pci(const FsModel *m, gconstpointer clue)
{
  const FsGpuClues *c = clue;
  return fs_model_has_pci_id(m, c->pci_vendor, c->pci_device);
}

static gboolean gpu_name(const FsModel *m, gconstpointer clue)
{
  return fs_model_has_product_name(m, ((const FsGpuClues *)clue)->product_name);
}

static gboolean gpu_cc(const FsModel *m, gconstpointer clue)
{
  return m->u.gpu.compute_capability == ((const FsGpuClues *)clue)->compute_capability;
}

static gboolean gpu_not_superchip(const FsModel *m, gconstpointer clue)
{
  (void)clue;
  return strcmp(m->u.gpu.form_factor, "superchip") != 0;
}

static gboolean gpu_form(const FsModel *m, gconstpointer clue)
{
  return strcmp(m->u.gpu.form_factor, clue) == 0;
}

static gboolean gpu_nvlinks_eq(const FsModel *m, gconstpointer clue)
{
  return m->u.gpu.nvlink != NULL && m->u.gpu.nvlinks == *(const guint *)clue;
}

/* Chooses the catalog GPU for clues c and fills out (see FsIdentity; clear it with
 * fs_identity_clear).  Models that cannot carry the NVLinks (c->fits) are never chosen.  A PCI id
 * or product name that matches decides; otherwise the compute capability, the board form (SXM
 * when an NVSwitch or more than two NVLinked GPUs, PCIe otherwise; superchips only with a Grace
 * host) and the NVLink count narrow the set.  Each clue used or missed adds a phrase to out->why.
 * Never fails; out->model is NULL only when no GPU model is left. */
void fs_identify_gpu(const FsCatalog *cat, const FsGpuClues *c, FsIdentity *out)
{
  GPtrArray *cand = all_of(cat, FS_MODEL_GPU);
  GString *why = g_string_new(NULL);
  gboolean decided = FALSE;
  /* A model that cannot carry the NVLinks is never chosen. */
  for (guint i = cand->len; i-- > 0;)
    if (!gpu_fits(g_ptr_array_index(cand, i), c))
      g_ptr_array_remove_index(cand, i);
  if (c->pci_device != 0) {
    if (narrow(cand, gpu_pci, c) > 0) {
      say(why, "PCI id %04x:%04x", c->pci_vendor, c->pci_device);
      decided = TRUE;
    } else {
      say(why, "no catalog GPU has PCI id %04x:%04x", c->pci_vendor, c->pci_device);
    }
  }
  if (!decided && c->product_name != NULL) {
    g_autofree char *q = fs_escape_controls(c->product_name);
    if (narrow(cand, gpu_name, c) > 0) {
      say(why, "product name \"%s\"", q);
      decided = TRUE;
    } else {
      say(why, "no catalog GPU is called \"%s\"", q);
    }
  }
  if (!decided && c->compute_capability != 0) {
    if (narrow(cand, gpu_cc, c) > 0)
      say(why, "compute capability %u.%u", c->compute_capability / 10,
          c->compute_capability % 10);
    else
      say(why, "no catalog GPU has compute capability %u.%u", c->compute_capability / 10,
          c->compute_capability % 10);
  }
  if (!decided) {
    /* Superchips (GH200, GB200) only with a Grace host. */
    if (!c->grace)
      narrow(cand, gpu_not_superchip, NULL);
    if (c->nv_set > 2 || c->nvswitch) {
      if (narrow(cand, gpu_form, "sxm") > 0)
        say(why, "%s: an SXM board",
            c->nvswitch ? "an NVSwitch" : "more than two GPUs joined by NVLink");
    } else if (narrow(cand, gpu_form, "pcie") > 0) {
      say(why, c->nv_set == 2 ? "GPUs NVLinked in pairs only: PCIe cards with NVLink bridges"
                              : "no NVLink: PCIe cards");
    }
    /* Direct links when some GPU has enough NVLinks (the fewest that
     * carry the largest per-GPU sum), else an NVSwitch plane of k links. */
    guint best = 0;
    for (guint i = 0; c->nv_sum > 0 && i < cand->len; i++) {
      const FsModel *m = g_ptr_array_index(cand, i);
      if (m->u.gpu.nvlink != NULL && m->u.gpu.nvlinks >= c->nv_sum &&
          (best == 0 || m->u.gpu.nvlinks < best))
        best = m->u.gpu.nvlinks;
    }
    if (best > 0 && narrow(cand, gpu_nvlinks_eq, &best) > 0)
      say(why, "up to %u direct NVLinks per GPU: the GPUs with the fewest NVLinks (%u) that "
          "carry them", c->nv_sum, best);
    else if (c->nv_plane > 0 && narrow(cand, gpu_nvlinks_eq, &c->nv_plane) > 0)
      say(why, "NV%u to every peer, more than direct links allow: an NVSwitch plane, %u "
          "NVLinks per GPU", c->nv_plane, c->nv_plane);
  }
  if (why->len == 0)
    say(why, "no clue; the first GPU of the catalog");
  finish(cand, decided, why, out);
}

/* ---- CPUs ------------------------------------------------------------------ */

static gboolean cpu_cpuid(const FsModel *m, gconstpointer clue)
{
  const FsCpuClues *c = clue;
  return fs_model_has_cpuid(m, c->vendor, c->family, c->model);
}

/* The (family, model) of m's newest `cpuid` item of the clue's vendor not
 * newer than the clue's (family -1: the vendor alone, any item); FALSE
 * when m has none. */
static gboolean cpu_vendor_at_most(const FsModel *m, const FsCpuClues *c, int *fam, int *mod)
{
  gboolean found = FALSE;
  g_auto(GStrv) items = g_strsplit(m->ids.cpuid != NULL ? m->ids.cpuid : "", "\n", -1);
  for (guint i = 0; items[i] != NULL; i++) {
    char vendor[32];
    int f, md;
    if (sscanf(items[i], "%31s %d %d", vendor, &f, &md) != 3 || strcmp(vendor, c->vendor) != 0)
      continue;
    if (c->family >= 0 && (f > c->family || (f == c->family && md > c->model)))
      continue;
    if (!found || f > *fam || (f == *fam && md > *mod))
      *fam = f, *mod = md;
    found = TRUE;
  }
  return found;
}

static gboolean cpu_same_vendor(const FsModel *m, gconstpointer clue)
{
  const FsCpuClues *c = clue;
  FsCpuClues any = *c;
  int f, md;
  any.family = -1;
  return cpu_vendor_at_most(m, &any, &f, &md);
}

static gboolean cpu_gpu_nvlink(const FsModel *m, gconstpointer clue)
{
  const FsCpuClues *c = clue;
  return m->u.cpu.nvlink != NULL && m->u.cpu.nvlink == c->gpu->u.gpu.nvlink;
}

/* The number of sockets of this CPU that make logical_cpus (cores ×
 * threads_per_core each, or cores with SMT off), 0 when none does. */
static guint cpu_sockets(const FsModel *m, guint logical_cpus)
{
  guint per[2] = {m->u.cpu.cores * MAX(m->u.cpu.threads_per_core, 1u), m->u.cpu.cores};
  for (int k = 0; k < 2; k++)
    if (per[k] > 0 && logical_cpus % per[k] == 0)
      return logical_cpus / per[k];
  return 0;
}

/* TRUE when logical_cpus is as many of this CPU as the input shows
 * socket groups (at most two). */
static gboolean cpu_count_exact(const FsModel *m, gconstpointer clue)
{
  const FsCpuClues *c = clue;
  return cpu_sockets(m, c->logical_cpus) == MIN(MAX(c->sockets, 1u), 2u);
}

/* TRUE when logical_cpus is one or two (two only when the input shows
 * several socket groups) of this CPU. */
static gboolean cpu_count(const FsModel *m, gconstpointer clue)
{
  const FsCpuClues *c = clue;
  guint k = cpu_sockets(m, c->logical_cpus);
  return k >= 1 && k <= MIN(MAX(c->sockets, 1u), 2u);
}

/* The PCIe generation of a model's host link (GPU, CPU, NIC), or NULL. */
static const char *pcie_gen(const FsModel *m)
{
  const FsModel *l = m->kind == FS_MODEL_GPU ? m->u.gpu.pcie
                   : m->kind == FS_MODEL_CPU ? m->u.cpu.pcie
                   : m->kind == FS_MODEL_NIC ? m->u.nic.pcie : NULL;
  return l != NULL ? l->u.link.generation : NULL;
}

static gboolean same_pcie_gen(const FsModel *m, gconstpointer clue)
{
  return g_strcmp0(pcie_gen(m), pcie_gen(clue)) == 0;
}

/* Moves m to the front of the candidates when it is one; TRUE if so. */
static gboolean prefer(GPtrArray *cand, const FsModel *m)
{
  for (guint i = 0; m != NULL && i < cand->len; i++)
    if (g_ptr_array_index(cand, i) == m) {
      g_ptr_array_remove_index(cand, i);
      g_ptr_array_insert(cand, 0, (gpointer)m);
      return TRUE;
    }
  return FALSE;
}

int fs_identify_cpuid_family_from_nccl(int familyid)
{
  int base = familyid & 0xf, ext = familyid >> 4;
  return base == 0xf ? base + ext : base;
}

/* Chooses the catalog CPU for clues c and fills out (see FsIdentity; clear it with
 * fs_identity_clear).  A CPUID or machine name that matches decides; one that matches nothing
 * still keeps the choice to that vendor, the newest part not newer than the clue first.  Then
 * the logical CPU count per socket, and while several remain the soft clues: a CPU that takes
 * the GPUs' spare NVLinks, the GPU's PCIe generation, and the GPU's reference host.  Each clue
 * used or missed adds a phrase to out->why.  Never fails. */
void fs_identify_cpu(const FsCatalog *cat, const FsCpuClues *c, FsIdentity *out)
{
  GPtrArray *cand = all_of(cat, FS_MODEL_CPU);
  GString *why = g_string_new(NULL);
  gboolean decided = FALSE, placed = FALSE;
  if (c->vendor != NULL) {
    g_autofree char *q = fs_escape_controls(c->vendor);
    g_autofree char *id = c->family >= 0 ? g_strdup_printf("CPUID %s family %d model %d", q,
                                                           c->family, c->model)
                                         : g_strdup_printf("machine %s", q);
    if (narrow(cand, cpu_cpuid, c) > 0) {
      say(why, "%s", id);
      decided = TRUE;
    } else {
      say(why, "no catalog CPU has %s", id);
      /* Never another vendor's part: the same vendor's, the newest not
       * newer than the clue's first (the first of the vendor if none). */
      if (narrow(cand, cpu_same_vendor, c) > 0) {
        const FsModel *best = NULL;
        int bf = -1, bm = -1;
        for (guint i = 0; c->family >= 0 && i < cand->len; i++) {
          const FsModel *m = g_ptr_array_index(cand, i);
          int f, md;
          if (cpu_vendor_at_most(m, c, &f, &md) && (best == NULL || f > bf || (f == bf && md > bm)))
            best = m, bf = f, bm = md;
        }
        if ((placed = best != NULL && prefer(cand, best)))
          say(why, "the newest %s part of the catalog not newer than it", q);
        else
          say(why, "a %s part", q);
      }
    }
  }
  if (c->logical_cpus > 0 && cand->len > 1) {
    if (narrow(cand, cpu_count_exact, c) > 0 || narrow(cand, cpu_count, c) > 0)
      say(why, "%u logical CPUs on %u socket%s", c->logical_cpus, c->sockets,
          c->sockets == 1 ? "" : "s");
    else if (!decided)
      say(why, "no catalog CPU makes %u logical CPUs on %u socket%s", c->logical_cpus,
          c->sockets, c->sockets == 1 ? "" : "s");
  }
  /* Soft clues while several candidates remain (a CPUID names a family). */
  gboolean open = cand->len > 1;
  if (open && c->gpu != NULL && c->gpu_spare_nvlinks > 0 && c->gpu->u.gpu.nvlink != NULL &&
      narrow(cand, cpu_gpu_nvlink, c) > 0)
    say(why, "every GPU leaves %u of its NVLinks unused: they go to a CPU with %s bricks",
        c->gpu_spare_nvlinks, c->gpu->u.gpu.nvlink->name);
  if (open && c->gpu != NULL && c->gpu->u.gpu.reference_cpu == NULL &&
      narrow(cand, same_pcie_gen, c->gpu) > 0)
    say(why, "root ports of the GPU's PCIe generation (%s)", pcie_gen(c->gpu));
  if (open && !placed && cand->len > 1 && c->gpu != NULL &&
      prefer(cand, c->gpu->u.gpu.reference_cpu))
    say(why, "the host of NVIDIA's reference server for %s", c->gpu->name);
  if (why->len == 0)
    say(why, "no clue; the first CPU of the catalog");
  finish(cand, decided, why, out);
}

/* ---- NICs ------------------------------------------------------------------ */

static gboolean nic_pci(const FsModel *m, gconstpointer clue)
{
  const FsNicClues *c = clue;
  return fs_model_has_pci_id(m, c->pci_vendor, c->pci_device);
}

static gboolean nic_family(const FsModel *m, gconstpointer clue)
{
  const FsNicClues *c = clue;
  return m->u.nic.port_link != NULL && (int)m->u.nic.port_link->u.link.family == c->family;
}

static double nic_gbps(const FsModel *m)
{
  const FsLinkModel *l = &m->u.nic.port_link->u.link;
  return l->lane_rate * l->lanes / 1e9;
}

static gboolean nic_rate(const FsModel *m, gconstpointer clue)
{
  const double *want = clue;   /* {rate, best distance} */
  if (m->u.nic.port_link == NULL)
    return FALSE;
  return fabs(fabs(nic_gbps(m) - want[0]) / MAX(want[0], 1.0) - want[1]) < 1e-9;
}

/* The catalog NIC the clues name: by PCI id when one matches, else narrowed by port family,
 * the nearest port rate, the GPU's PCIe generation and its reference server's NIC; NICs that
 * stand for several devices are never candidates. */
void fs_identify_nic(const FsCatalog *cat, const FsNicClues *c, FsIdentity *out)
{
  GPtrArray *cand = all_of(cat, FS_MODEL_NIC);
  /* A NIC that stands for several devices (a network plugin's rails) is never what a dump or
   * nvidia-smi shows: they list the devices. */
  for (guint i = cand->len; i-- > 0;)
    if (((const FsModel *)g_ptr_array_index(cand, i))->u.nic.devices > 1)
      g_ptr_array_remove_index(cand, i);
  GString *why = g_string_new(NULL);
  gboolean decided = FALSE;
  if (c->pci_device != 0) {
    if (narrow(cand, nic_pci, c) > 0) {
      say(why, "PCI id %04x:%04x", c->pci_vendor, c->pci_device);
      decided = TRUE;
    } else {
      say(why, "no catalog NIC has PCI id %04x:%04x", c->pci_vendor, c->pci_device);
    }
  }
  if (!decided && c->family >= 0 && narrow(cand, nic_family, c) > 0)
    say(why, "%s ports", c->family == FS_LINK_ETHERNET ? "Ethernet" : "InfiniBand");
  if (!decided && c->rate_gbps > 0) {
    double best = -1;
    for (guint i = 0; i < cand->len; i++) {
      const FsModel *m = g_ptr_array_index(cand, i);
      if (m->u.nic.port_link == NULL)
        continue;
      double d = fabs(nic_gbps(m) - c->rate_gbps) / MAX(c->rate_gbps, 1.0);
      if (best < 0 || d < best)
        best = d;
    }
    double want[2] = {c->rate_gbps, best};
    if (best >= 0 && narrow(cand, nic_rate, want) > 0)
      say(why, "%.0f Gb/s ports: the nearest port rate", c->rate_gbps);
  }
  if (!decided && c->pci_device == 0 && c->rate_gbps <= 0 && c->gpu != NULL &&
      c->gpu->u.gpu.reference_nic == NULL && narrow(cand, same_pcie_gen, c->gpu) > 0)
    say(why, "a host link of the GPU's PCIe generation (%s)", pcie_gen(c->gpu));
  if (!decided && cand->len > 1 && c->gpu != NULL && prefer(cand, c->gpu->u.gpu.reference_nic))
    say(why, "the NIC of NVIDIA's reference server for %s", c->gpu->name);
  if (why->len == 0)
    say(why, "no clue; the first NIC of the catalog");
  finish(cand, decided, why, out);
}
