/* import-nccl-models.c — which catalog models the elements of an NCCL
 * topology XML name: the GPU (--gpu, else its PCI id, <gpu sm>,
 * NVLink-C2C and NVLinks, or on an NVSwitch its PCIe generation), the CPU
 * (--cpu, else NCCL's CPUID fields or arch, the NVLinks to it, the GPU's
 * reference CPU) and whether a <pci> is a GPU or NIC the catalog knows by
 * its PCI id.  The identification itself is identify.h's; here are the
 * clues a dump or a hand-written file gives, and the notes and guesses
 * the import reports. */
#include <string.h>

#include "topo/identify.h"
#include "topo/import-nccl-private.h"
#include "topo/import-private.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/strutil.h"

/* See import-nccl-private.h. */
void nccl_note_identity(Walk *w, const char *what, const FsIdentity *id, const char *option)
{
  nccl_note_once(w, g_strdup_printf("%s %s (%s: %s)", what, id->model->name,
                               id->decided ? "identified" : "guessed", id->why));
  if (id->alternatives == NULL || id->alternatives->len == 0)
    return;
  g_autofree char *alt = fs_identity_alternatives(id);
  g_autofree char *line = g_strdup_printf("Guess: %s %s (%s). The clues fit as well: %s. Name "
                                          "the model with %s.", what, id->model->name, id->why,
                                          alt, option);
  if (g_hash_table_contains(w->noted, line))
    return;
  g_hash_table_add(w->noted, g_strdup(line));
  g_ptr_array_add(w->guesses, g_strdup(line));
  if (w->opt != NULL && w->opt->messages != NULL)
    g_ptr_array_add(w->opt->messages,
                    g_strdup_printf("%s: guess: %s %s (%s); also fits %s; name it with %s",
                                    w->name, what, id->model->name, id->why, alt, option));
}

/* fits() for the identification: the GPU has the NVLinks the file gives
 * it (data: the GPU's NVLink count). */
static gboolean nccl_fits(const FsModel *m, gpointer data)
{
  guint want = *(const guint *)data;
  return want == 0 || (m->u.gpu.nvlink != NULL && m->u.gpu.nvlinks >= want);
}

/* TRUE when some catalog GPU has the PCI id of x (catalog `pci_ids`) or,
 * sm >= 0, compute capability sm. */
gboolean nccl_known_gpu(const Walk *w, const XNode *x, long sm)
{
  guint vendor = nccl_pci_attr(x, "vendor"), device = nccl_pci_attr(x, "device");
  for (guint i = 0; i < fs_catalog_size(w->cat); i++) {
    const FsModel *m = fs_catalog_nth(w->cat, i);
    if (m->kind == FS_MODEL_GPU && ((sm >= 0 && (long)m->u.gpu.compute_capability == sm) ||
                                    (device != 0 && fs_model_has_pci_id(m, vendor, device))))
      return TRUE;
  }
  return FALSE;
}

/* TRUE when some catalog NIC has the PCI id of x. */
gboolean nccl_known_nic(const Walk *w, const XNode *x)
{
  guint vendor = nccl_pci_attr(x, "vendor"), device = nccl_pci_attr(x, "device");
  for (guint i = 0; device != 0 && i < fs_catalog_size(w->cat); i++) {
    const FsModel *m = fs_catalog_nth(w->cat, i);
    if (m->kind == FS_MODEL_NIC && fs_model_has_pci_id(m, vendor, device))
      return TRUE;
  }
  return FALSE;
}

/* The CPU models: --cpu, else identified (identify.h) from NCCL's
 * vendor/familyid/modelid (CPUID, catalog `cpuid`), arch ppc64/arm64 and
 * NVLinks every GPU has to the CPU (spare: a CPU with the GPU's NVLink,
 * POWER9) and the GPU's reference CPU.  familyid and modelid are strict
 * numbers. */
gboolean nccl_cpu_models(Walk *w, const FsModel *gpu0, guint spare, GError **error)
{
  for (guint i = 0; i < w->ents->len; i++) {
    Ent *e = ent(w, (int)i);
    if (e->kind != E_CPU)
      continue;
    if (w->opt != NULL && w->opt->cpu != NULL) {
      if (!(e->model = imp_require(w->cat, w->opt->cpu, FS_MODEL_CPU, "--cpu", error)))
        return FALSE;
      continue;
    }
    const char *vendor = nccl_attr(e->x, "vendor"), *arch = nccl_attr(e->x, "arch");
    const char *fs = nccl_attr(e->x, "familyid"), *ms = nccl_attr(e->x, "modelid");
    long fam = -1, mod = -1;
    if (fs != NULL && *fs != '\0' && !nccl_int_in(w, e->x, "familyid", fs, 0, &fam, error))
      return FALSE;
    if (ms != NULL && *ms != '\0' && !nccl_int_in(w, e->x, "modelid", ms, 0, &mod, error))
      return FALSE;
    FsCpuClues cc = {.family = -1, .model = -1, .sockets = 1, .gpu = gpu0,
                     .gpu_spare_nvlinks = spare};
    if (arch != NULL && strcmp(arch, "ppc64") == 0) {
      cc.vendor = "ppc64le";
    } else if (arch != NULL && (strcmp(arch, "arm64") == 0 || strcmp(arch, "aarch64") == 0)) {
      cc.vendor = "aarch64";
    } else if (vendor != NULL && *vendor != '\0') {
      cc.vendor = vendor;
      /* Hand-written files (Azure's) give AMD's base family (0x17, 0x19,
       * 0x1A) where NCCL writes family + extended family << 4. */
      if (fam >= 0)
        cc.family = strcmp(vendor, "AuthenticAMD") == 0 && fam >= 0x17 && fam <= 0x1f
                    ? (int)fam : fs_identify_cpuid_family_from_nccl((int)fam);
      cc.model = (int)MIN(mod, G_MAXINT);
    }
    FsIdentity id = {0};
    fs_identify_cpu(w->cat, &cc, &id);
    e->model = id.model;
    if (e->model != NULL)
      nccl_note_identity(w, "CPU", &id, "--cpu");
    fs_identity_clear(&id);
    if (e->model == NULL)
      return nccl_fail_at(w, e->x, error, "the catalog has no CPU model");
  }
  return TRUE;
}

/* The GPU model of GPU entry e (identify.h): --gpu; else the PCI device
 * id (catalog `pci_ids`), <gpu sm>, NVLink-C2C to a Grace host and the
 * NVLinks; without <gpu> and a known id, the generation of its PCIe link
 * stands for sm, on an NVSwitch (clouds write such files for their NVLink
 * servers, whose NVLinks NCCL finds by itself). */
gboolean nccl_gpu_model(Walk *w, Ent *e, gboolean on_switch, guint nvsum, guint nvset,
                        GError **error)
{
  if (w->opt != NULL && w->opt->gpu != NULL) {
    e->model = imp_require(w->cat, w->opt->gpu, FS_MODEL_GPU, "--gpu", error);
    return e->model != NULL;
  }
  FsGpuClues gc = {.pci_vendor = nccl_pci_attr(e->x, "vendor"), .pci_device = nccl_pci_attr(e->x, "device"),
                   .nv_sum = nvsum, .nvswitch = on_switch, .nv_set = nvset,
                   .grace = e->c2c > 0, .fits = nccl_fits, .fits_data = &nvsum};
  if (e->sm >= 0) {
    gc.compute_capability = (guint)MIN(e->sm, G_MAXINT);
  } else if (!nccl_known_gpu(w, e->x, -1)) {
    const FsModel *up = e->uplink;
    long sm = -1;
    if (up != NULL && up->u.link.generation != NULL) {
      int gen = atoi(up->u.link.generation + strcspn(up->u.link.generation, "0123456789"));
      sm = gen == 3 ? 70 : gen == 4 ? 80 : gen == 5 ? 90 : gen == 6 ? 100 : -1;
    }
    if (sm < 0)
      return nccl_fail_at(w, e->x, error, "the GPU cannot be identified (no <gpu sm>, no known PCI "
                     "device id, no PCIe rate): name the model with --gpu");
    gc.compute_capability = (guint)sm;
    gc.nvswitch = TRUE;
    gc.nv_set = MAX(gc.nv_set, 3);
  }
  for (guint i = 0; i < w->ents->len; i++) {
    const Ent *c = &g_array_index(w->ents, Ent, i);
    const char *arch = c->kind == E_CPU ? nccl_attr(c->x, "arch") : NULL;
    gc.grace |= arch != NULL && (strcmp(arch, "arm64") == 0 || strcmp(arch, "aarch64") == 0);
  }
  FsIdentity id = {0};
  fs_identify_gpu(w->cat, &gc, &id);
  e->model = id.model;
  if (e->model != NULL)
    nccl_note_identity(w, "GPU", &id, "--gpu");
  fs_identity_clear(&id);
  if (e->model == NULL)
    return nccl_fail_at(w, e->dev != NULL ? e->dev : e->x, error, "no GPU model in the catalog has "
                   "the %u NVLinks of this GPU; name one with --gpu", nvsum);
  return TRUE;
}
