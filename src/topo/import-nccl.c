/* import-nccl.c — NCCL's topology XML (the dump NCCL writes to
 * NCCL_TOPO_DUMP_FILE, src/graph/xml.cc, and the hand-written files clouds
 * publish for NCCL_TOPO_FILE) to topology YAML.
 *
 * Three files: the element tree (import-nccl-xml.c, GLib's GMarkup: comments,
 * an <?xml?> declaration and a leading comment block are fine), the models
 * the elements name (import-nccl-models.c), and here the walk, which reads
 * the tree the way NCCL's ncclTopoAddCpu / ncclTopoAddPci do, in both forms
 * (a dump's <gpu>/<nic> children, or a hand-written file's classes alone),
 * and builds the graph:
 *   <system>          the machine (one host; host_hash is ignored)
 *   <cpu numaid=…>    a CPU node, socket = numaid (-1, a VM's unknown NUMA
 *                     node, is socket 0); vendor/familyid/modelid or arch
 *                     are the clues that identify its model (identify.h)
 *   <pci class=…>     0x03… a GPU, 0x02… a NIC, with or without the
 *                     <gpu>/<nic> child a dump has (a hand-written file has
 *                     none); 0x0604… a PCIe switch; another class is
 *                     NCCL's default, a switch when it has <pci> children,
 *                     else skipped; no class: a switch when it has children,
 *                     else an error (nothing tells a GPU from a NIC)
 *   <gpu dev sm>      the GPU's number and generation; <c2c bw count> its
 *                     NVLink-C2C to the CPU (GH200, GB200)
 *   <nic><net speed>  the NIC's port rate (Mb/s); a <nic> under <cpu> is
 *                     on a CPU root port
 *   <nvlink target count tclass>  to a GPU of the file (its busid; one to
 *                     itself, as Azure NCv4 reports, is ignored), to an
 *                     NVSwitch (0x068000; one switch per target busid,
 *                     spread over several when its links exceed the ports)
 *                     or to the CPU (0x068001, or 0x060000)
 * link_speed / link_width give a <pci>'s link to its parent (pcie-genN-xW),
 * strictly: a value that is not a PCIe rate or width is an error at the
 * element; empty means the device's own link, width 0 is 16 lanes (as in
 * NCCL); a bridge slower than its fastest child (a VM's 2.5 GT/s x1
 * virtual bridge) gets that child's link.  GPUs are declared in dev order
 * (those without <gpu> after, in file order), so placement order is
 * NCCL's device order.  The rules are in topologies/README.md, "Importing
 * a machine".
 *
 * Errors: "name:line:col: sentence" (GMarkup's position), FS_TOPO_ERROR.
 * Cost: linear in the XML size, plus O(GPUs^2) for NVLink pairs.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "topo/identify.h"
#include "topo/import-nccl-private.h"
#include "topo/import-private.h"
#include "topo/import.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/limits.h"
#include "util/names.h"
#include "util/strutil.h"

/* See import-nccl-private.h. */
gboolean nccl_fail_at(const Walk *w, const XNode *x, GError **error, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  fs_set_error_at_va(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, w->name, x->line, x->col,
                     format, ap);
  va_end(ap);
  return FALSE;
}

/* See import-nccl-private.h. */
void nccl_note_once(Walk *w, char *phrase)
{
  if (g_hash_table_contains(w->noted, phrase)) {
    g_free(phrase);
    return;
  }
  g_hash_table_add(w->noted, g_strdup(phrase));
  g_ptr_array_add(w->notes, phrase);
}

static const char *need(const Walk *w, const XNode *x, const char *key, GError **error)
{
  const char *v = nccl_attr(x, key);
  if (v == NULL || *v == '\0')
    nccl_fail_at(w, x, error, "<%s> has no %s attribute", x->name, key);
  return v != NULL && *v != '\0' ? v : NULL;
}

/* See import-nccl-private.h. */
gboolean nccl_int_in(const Walk *w, const XNode *x, const char *key, const char *v, long lo,
                       long *out, GError **error)
{
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  while (*end == ' ' || *end == '\t')
    end++;
  if (end == v || *end != '\0' || errno != 0 || n < lo || n > 1000000000) {
    g_autofree char *q = fs_escape_controls(v);
    return nccl_fail_at(w, x, error, "<%s %s=\"%s\">: expected %s integer", x->name, key, q,
                   lo < 0 ? "an" : "a non-negative");
  }
  *out = n;
  return TRUE;
}

/* A required non-negative decimal integer attribute. */
static gboolean need_int(const Walk *w, const XNode *x, const char *key, long *out,
                         GError **error)
{
  const char *v = need(w, x, key, error);
  return v != NULL && nccl_int_in(w, x, key, v, 0, out, error);
}

/* PCIe generations by transfer rate (GT/s per lane). */
static const struct {
  double gts;
  int gen;
} pcie_gens[] = {{2.5, 1}, {5.0, 2}, {8.0, 3}, {16.0, 4}, {32.0, 5}, {64.0, 6}};

/* The link to the parent that a <pci>'s link_speed and link_width give
 * (*link NULL: the device's own).  Accepted speeds: "" and "Unknown"
 * (unknown), "R GT/s", "R GT/s PCIe", "R GT/s PCIe/s" with R one of the
 * generations' rates; widths: "" (unknown), 0 (NCCL: unknown, taken as
 * 16 when the speed is known), 1, 2, 4, 8, 12, 16, 32.  Anything else is
 * an error at the element. */
static gboolean pcie_link(Walk *w, const XNode *x, const FsModel **link, GError **error)
{
  *link = NULL;
  const char *sp = nccl_attr(x, "link_speed"), *wd = nccl_attr(x, "link_width");
  int gen = 0;
  if (sp != NULL && *sp != '\0' && g_ascii_strncasecmp(sp, "Unknown", 7) != 0) {
    char *end;
    double gts = g_ascii_strtod(sp, &end);
    while (*end == ' ')
      end++;
    gboolean ok = end != sp && g_str_has_prefix(end, "GT/s");
    if (ok) {
      end += 4;
      while (*end == ' ')
        end++;
      ok = *end == '\0' || strcmp(end, "PCIe") == 0 || strcmp(end, "PCIe/s") == 0;
    }
    for (gsize i = 0; ok && i < G_N_ELEMENTS(pcie_gens); i++)
      if (fabs(gts - pcie_gens[i].gts) < 0.05)
        gen = pcie_gens[i].gen;
    if (!ok || gen == 0) {
      g_autofree char *q = fs_escape_controls(sp);
      return nccl_fail_at(w, x, error, "<%s link_speed=\"%s\">: expected a PCIe rate such as "
                     "\"16.0 GT/s PCIe\" (2.5, 5, 8, 16, 32 or 64 GT/s), or \"\"", x->name, q);
    }
  }
  long width = -1;
  if (wd != NULL && *wd != '\0') {
    if (!nccl_int_in(w, x, "link_width", wd, 0, &width, error))
      return FALSE;
    if (width != 0 && width != 1 && width != 2 && width != 4 && width != 8 && width != 12 &&
        width != 16 && width != 32) {
      return nccl_fail_at(w, x, error, "<%s link_width=\"%s\">: expected a PCIe width (1, 2, 4, 8, "
                     "12, 16 or 32), or 0 for unknown", x->name, wd);
    }
  }
  if (gen == 0)
    return TRUE;
  if (width <= 0) {
    width = 16;   /* NCCL's ncclTopoAddPci: width 0 is 16 */
    if (wd != NULL && strcmp(wd, "0") == 0)
      nccl_note_once(w, g_strdup("link_width=\"0\" read as 16 lanes, as NCCL does"));
  }
  g_autofree char *name = g_strdup_printf("pcie-gen%d-x%ld", gen, width);
  const FsModel *m = fs_catalog_get(w->cat, name);
  if (m != NULL && m->kind == FS_MODEL_LINK)
    *link = m;
  else
    nccl_note_once(w, g_strdup_printf("no catalog link %s: the device's own PCIe link instead", name));
  return TRUE;
}

/* A PCI vendor or device attribute ("0x10de") as a number; 0 when absent
 * or not hex. */
static gboolean walk_pci(Walk *w, const XNode *x, int parent, int cpu, GError **error);

/* A NIC: a <nic> (with its <net>s) under a <pci> or a <cpu>, or a <pci>
 * of class 0x02… without one (a hand-written file).  The model waits for
 * the GPUs when nothing in the file names it. */
static gboolean walk_nic(Walk *w, const XNode *nic, const XNode *pci, int parent, int cpu,
                         const FsModel *uplink, GError **error)
{
  double fastest = 0;
  for (guint i = 0; nic != NULL && i < nic->kids->len; i++) {
    const XNode *n = g_ptr_array_index(nic->kids, i);
    if (strcmp(n->name, "net") != 0)
      continue;
    long speed;
    if (need(w, n, "name", error) == NULL || !need_int(w, n, "speed", &speed, error))
      return FALSE;
    fastest = MAX(fastest, (double)speed);
  }
  Ent e = {.kind = E_NIC, .x = pci != NULL ? pci : nic, .dev = nic, .parent = parent,
           .cpu = cpu, .uplink = uplink, .speed = fastest};
  const char *class = pci != NULL ? nccl_attr(pci, "class") : NULL;
  if (w->opt != NULL && w->opt->nic != NULL) {
    e.model = imp_require(w->cat, w->opt->nic, FS_MODEL_NIC, "--nic", error);
    if (e.model == NULL)
      return FALSE;
  } else if ((pci != NULL && nccl_known_nic(w, pci)) || fastest > 0) {
    FsNicClues nc = {.pci_vendor = nccl_pci_attr(pci, "vendor"), .pci_device = nccl_pci_attr(pci, "device"),
                     .rate_gbps = fastest / 1000, .family = -1};
    if (class != NULL && g_str_has_prefix(class, "0x0207"))
      nc.family = FS_LINK_INFINIBAND;
    else if (class != NULL && g_str_has_prefix(class, "0x0200"))
      nc.family = FS_LINK_ETHERNET;
    FsIdentity id = {0};
    fs_identify_nic(w->cat, &nc, &id);
    e.model = id.model;
    if (e.model != NULL)
      nccl_note_identity(w, "NIC", &id, "--nic");
    fs_identity_clear(&id);
    if (e.model == NULL)
      return nccl_fail_at(w, e.x, error, "no NIC model in the catalog");
  }
  g_array_append_val(w->ents, e);
  return TRUE;
}

static gboolean walk_kids(Walk *w, const XNode *x, int parent, int cpu, GError **error)
{
  for (guint i = 0; i < x->kids->len; i++) {
    const XNode *k = g_ptr_array_index(x->kids, i);
    if (strcmp(k->name, "pci") == 0) {
      if (!walk_pci(w, k, parent, cpu, error))
        return FALSE;
    } else if (strcmp(k->name, "nic") == 0) {
      if (!walk_nic(w, k, NULL, parent, cpu, NULL, error))
        return FALSE;
    }
  }
  return TRUE;
}

/* A <pci>: by its child (<gpu>, <nic>, <pci>) and its class, as NCCL's
 * ncclTopoAddPci reads it: 0x03… a GPU, 0x02… a NIC (with or without the
 * <gpu>/<nic> a dump has), 0x0604… a bridge; any other class is NCCL's
 * default, a PCI node: a bridge when it has <pci> children, else skipped.
 * A leaf without a class cannot be told apart and is an error. */
static gboolean walk_pci(Walk *w, const XNode *x, int parent, int cpu, GError **error)
{
  const char *busid = need(w, x, "busid", error);
  if (busid == NULL)
    return FALSE;
  const char *class = nccl_attr(x, "class");
  const XNode *gpu = NULL, *nic = NULL;
  gboolean has_pci = FALSE;
  for (guint i = 0; i < x->kids->len; i++) {
    const XNode *k = g_ptr_array_index(x->kids, i);
    if (strcmp(k->name, "gpu") == 0)
      gpu = gpu != NULL ? gpu : k;
    else if (strcmp(k->name, "nic") == 0)
      nic = nic != NULL ? nic : k;
    else if (strcmp(k->name, "pci") == 0)
      has_pci = TRUE;
  }
  const FsModel *up;
  if (!pcie_link(w, x, &up, error))
    return FALSE;
  if (gpu != NULL || (class != NULL && g_str_has_prefix(class, "0x03"))) {
    long devn = -1, sm = -1, c2c = 0;
    if (gpu != NULL && nccl_attr(gpu, "gcn") != NULL) {
      g_autofree char *q = fs_escape_controls(nccl_attr(gpu, "gcn"));
      return nccl_fail_at(w, gpu, error, "<gpu gcn=\"%s\">: an AMD GPU (RCCL's dump); the catalog "
                     "has no AMD GPU model", q);
    }
    if (gpu != NULL && (!need_int(w, gpu, "dev", &devn, error) ||
                        !need_int(w, gpu, "sm", &sm, error)))
      return FALSE;
    for (guint k = 0; gpu != NULL && k < gpu->kids->len; k++) {
      const XNode *c = g_ptr_array_index(gpu->kids, k);
      long count, bw;
      if (strcmp(c->name, "c2c") != 0)
        continue;
      if (!need_int(w, c, "count", &count, error) || !need_int(w, c, "bw", &bw, error))
        return FALSE;
      c2c += count;
    }
    if (sm >= 0 && (w->opt == NULL || w->opt->gpu == NULL) && !nccl_known_gpu(w, x, sm))
      return nccl_fail_at(w, gpu, error, "unknown GPU compute capability sm=%ld: no catalog GPU "
                     "has it or this PCI id (name the model with --gpu)", sm);
    Ent e = {.kind = E_GPU, .x = x, .dev = gpu, .parent = parent, .cpu = cpu,
             .dev_index = (int)devn, .sm = sm, .c2c = (guint)MIN(c2c, 1000000), .uplink = up};
    g_array_append_val(w->ents, e);
    return TRUE;
  }
  if (nic != NULL || (class != NULL && g_str_has_prefix(class, "0x02")))
    return walk_nic(w, nic, x, parent, cpu, up, error);
  if (class == NULL && !has_pci) {
    g_autofree char *q = fs_escape_controls(busid);
    return nccl_fail_at(w, x, error, "<pci busid=\"%s\"> has no class and no child: it cannot be told "
                   "apart (NCCL fills such entries in from the running machine); give class "
                   "\"0x030200\" for a GPU or \"0x020700\" for a NIC", q);
  }
  if (!has_pci && !g_str_has_prefix(class, "0x0604")) {
    g_autofree char *q = fs_escape_controls(class);
    nccl_note_once(w, g_strdup_printf("<pci class=\"%s\"> without children skipped (neither GPU nor "
                                 "NIC)", q));
    return TRUE;
  }
  Ent e = {.kind = E_SWITCH, .x = x, .parent = parent, .cpu = cpu, .uplink = up};
  g_array_append_val(w->ents, e);
  return walk_kids(w, x, (int)w->ents->len - 1, cpu, error);
}

/* Sort key for GPUs: dev. */
static int by_dev(gconstpointer a, gconstpointer b, gpointer data)
{
  const Walk *w = data;
  const Ent *x = ent(w, *(const int *)a), *y = ent(w, *(const int *)b);
  return (x->dev_index > y->dev_index) - (x->dev_index < y->dev_index);
}

/* The PCIe link model a node hangs from its parent by: the file's, else
 * the device's own. */
static const FsModel *own_link(const Ent *e)
{
  return e->kind == E_GPU ? e->model->u.gpu.pcie
       : e->kind == E_NIC ? e->model->u.nic.pcie : e->model->u.sw.port_link;
}

/* Turns the parsed dump under root (<system>) into topology YAML: CPUs (socket = numaid), GPUs
 * numbered by dev, NICs, one PCIe switch per bridge <pci> and NVSwitches per NVLink target;
 * identifies the GPU, CPU, NIC and switch models from the file's clues or w->opt; then emits
 * the links (PCIe tree, NVLinks, C2C, sockets) with notes on what was read and guessed.  The
 * result is loaded once to check port budgets and models.  Returns a new string that the
 * caller frees, or NULL with error set: at the element for a structural fault (no GPU, a
 * duplicate dev, a bad NVLink target, no fitting model), FS_TOPO_ERROR_MODEL or _PORTS for
 * the switches, or the loader's code when the output does not load.  Cost: linear in the file,
 * times the catalog for identification. */
static char *build(Walk *w, const XNode *root, GError **error)
{
  if (strcmp(root->name, "system") != 0) {
    nccl_fail_at(w, root, error, "the top element is <%s>; expected <system>", root->name);
    return NULL;
  }
  /* CPUs first (numaid -1, a VM's unknown NUMA node, is socket 0). */
  gboolean numa_unknown = FALSE;
  for (guint i = 0; i < root->kids->len; i++) {
    const XNode *c = g_ptr_array_index(root->kids, i);
    if (strcmp(c->name, "cpu") != 0)
      continue;
    long numa;
    const char *nv = need(w, c, "numaid", error);
    if (nv == NULL || !nccl_int_in(w, c, "numaid", nv, -1, &numa, error))
      return NULL;
    numa_unknown |= numa < 0;
    Ent e = {.kind = E_CPU, .x = c, .parent = -1, .cpu = (int)w->ents->len,
             .dev_index = (int)MAX(numa, 0)};
    g_array_append_val(w->ents, e);
    if (!walk_kids(w, c, (int)w->ents->len - 1, (int)w->ents->len - 1, error))
      return NULL;
  }
  if (numa_unknown)
    nccl_note_once(w, g_strdup("numaid=\"-1\" (NUMA unknown, as in a VM) read as socket 0"));
  guint ngpu = 0;
  int max_dev = -1;
  for (guint i = 0; i < w->ents->len; i++)
    if (ent(w, (int)i)->kind == E_GPU) {
      ngpu++;
      max_dev = MAX(max_dev, ent(w, (int)i)->dev_index);
    }
  if (ngpu == 0) {
    nccl_fail_at(w, root, error, "<system> has no GPU (no <cpu><pci><gpu> and no <pci class=\"0x03xxxx\">): "
            "no GPU to import");
    return NULL;
  }
  /* GPUs without <gpu dev> follow the numbered ones in file order. */
  gboolean implicit = FALSE;
  for (guint i = 0; i < w->ents->len; i++)
    if (ent(w, (int)i)->kind == E_GPU && ent(w, (int)i)->dev == NULL) {
      ent(w, (int)i)->dev_index = ++max_dev;
      implicit = TRUE;
    }
  if (implicit)
    nccl_note_once(w, g_strdup("GPUs without <gpu> numbered in file order (NCCL fills them in from "
                          "the running machine); their NVLinks are not in the file"));
  g_autofree int *gi = g_new(int, ngpu);
  ngpu = 0;
  for (guint i = 0; i < w->ents->len; i++)
    if (ent(w, (int)i)->kind == E_GPU)
      gi[ngpu++] = (int)i;
  g_qsort_with_data(gi, (gint)ngpu, sizeof(int), by_dev, w);
  for (guint a = 1; a < ngpu; a++)
    if (ent(w, gi[a])->dev_index == ent(w, gi[a - 1])->dev_index) {
      nccl_fail_at(w, ent(w, gi[a])->dev, error, "a second GPU with dev=%d",
              ent(w, gi[a])->dev_index);
      return NULL;
    }

  /* NVLinks: per GPU pair (max of the two sides), per NVSwitch target. */
  g_autofree guint *pair = g_new0(guint, (gsize)ngpu * ngpu);
  g_autofree guint *cpu_links = g_new0(guint, ngpu);
  GPtrArray *sw_bus = g_ptr_array_new();        /* borrowed busids, sorted later */
  GArray *sw_links = g_array_new(FALSE, FALSE, sizeof(guint) * 3);  /* gpu, sw#, count */
  g_autofree guint *nvsum = g_new0(guint, ngpu);
  g_autofree gboolean *on_switch = g_new0(gboolean, ngpu);
  g_autofree guint *nvset = g_new0(guint, ngpu), *uf = g_new(guint, ngpu);
  char *yaml = NULL;
  g_autofree const FsModel **link = NULL;
  g_autofree guint *sw_first = NULL, *sw_n = NULL;
  g_autoptr(ImpGraph) g = imp_graph_new();
  for (guint a = 0; a < ngpu; a++) {
    const XNode *gx = ent(w, gi[a])->dev;
    for (guint k = 0; gx != NULL && k < gx->kids->len; k++) {
      const XNode *nv = g_ptr_array_index(gx->kids, k);
      if (strcmp(nv->name, "nvlink") != 0)
        continue;
      long count;
      const char *target = need(w, nv, "target", error);
      if (target == NULL || !need_int(w, nv, "count", &count, error))
        goto out;
      if (count == 0)
        continue;
      const char *tclass = nccl_attr(nv, "tclass");
      int peer = -1;
      for (guint b = 0; b < ngpu; b++)
        if (g_ascii_strcasecmp(nccl_attr(ent(w, gi[b])->x, "busid"), target) == 0)
          peer = (int)b;
      if (peer >= 0 && (tclass == NULL || g_str_has_prefix(tclass, "0x03"))) {
        if (peer == (int)a) {
          /* Azure NCv4: NVML reports a GPU's NVLinks with its own bus id. */
          nccl_note_once(w, g_strdup("NVLinks whose target is their own GPU ignored (they join no "
                                "two GPUs)"));
          continue;
        }
        nvsum[a] += (guint)count;
        pair[a * ngpu + (guint)peer] = (guint)count;
      } else if (tclass != NULL && strcmp(tclass, "0x068000") == 0) {
        guint s = 0;
        while (s < sw_bus->len && g_ascii_strcasecmp(g_ptr_array_index(sw_bus, s), target) != 0)
          s++;
        if (s == sw_bus->len)
          g_ptr_array_add(sw_bus, (gpointer)target);
        guint rec[3] = {a, s, (guint)count};
        g_array_append_vals(sw_links, rec, 1);
        nvsum[a] += (guint)count;
        on_switch[a] = TRUE;
      } else if (tclass != NULL && (strcmp(tclass, "0x060000") == 0 ||
                                    strcmp(tclass, "0x068001") == 0)) {
        nvsum[a] += (guint)count;
        cpu_links[a] += (guint)count;
      } else {
        g_autofree char *q = fs_escape_controls(tclass != NULL ? tclass : "(none)");
        g_autofree char *t = fs_escape_controls(target);
        nccl_fail_at(w, nv, error, "NVLink target %s has class %s; expected a GPU of this file, an "
                "NVSwitch (0x068000) or a CPU (0x068001, 0x060000)", t, q);
        goto out;
      }
    }
  }
  /* The size of each GPU's NVLink set (all GPUs when on an NVSwitch). */
  for (guint a = 0; a < ngpu; a++)
    uf[a] = a;
  for (guint a = 0; a < ngpu; a++)
    for (guint b = 0; b < ngpu; b++)
      if (pair[a * ngpu + b] > 0) {
        guint x = a, y = b;
        while (uf[x] != x)
          x = uf[x];
        while (uf[y] != y)
          y = uf[y];
        uf[MAX(x, y)] = MIN(x, y);
      }
  for (guint a = 0; a < ngpu; a++) {
    guint x = a;
    while (uf[x] != x)
      x = uf[x];
    uf[a] = x;
  }
  for (guint a = 0; a < ngpu; a++)
    for (guint b = 0; b < ngpu; b++)
      nvset[a] += uf[b] == uf[a];
  for (guint a = 0; a < ngpu; a++)
    nvset[a] = on_switch[a] ? ngpu : nvset[a] > 1 ? nvset[a] : 0;
  /* GPU, CPU and deferred NIC models.  A GPU that the file does not
   * identify (no <gpu sm>, no known device id) is taken to be the model of
   * the first GPU it does identify: one host, one GPU model. */
  const FsModel *known = NULL;
  for (guint pass = 0; pass < 2; pass++)
    for (guint a = 0; a < ngpu; a++) {
      Ent *e = ent(w, gi[a]);
      gboolean ident = (w->opt != NULL && w->opt->gpu != NULL) || e->sm >= 0 ||
                       nccl_known_gpu(w, e->x, -1);
      if (ident != (pass == 0))
        continue;
      if (pass == 1 && known != NULL) {
        e->model = known;
        nccl_note_once(w, g_strdup_printf("GPUs the file does not identify taken to be %s, as the "
                                     "one it does", known->name));
        continue;
      }
      if (!nccl_gpu_model(w, e, on_switch[a], nvsum[a], nvset[a], error))
        goto out;
      if (known == NULL)
        known = e->model;
    }
  const FsModel *gpu0 = ent(w, gi[0])->model;
  guint spare = cpu_links[0];
  for (guint a = 1; a < ngpu; a++)
    spare = MIN(spare, cpu_links[a]);
  if (!nccl_cpu_models(w, gpu0, spare, error))
    goto out;
  for (guint i = 0; i < w->ents->len; i++) {
    Ent *e = ent(w, (int)i);
    if (e->kind != E_NIC || e->model != NULL)
      continue;
    FsNicClues nc = {.family = -1, .gpu = gpu0};
    FsIdentity id = {0};
    fs_identify_nic(w->cat, &nc, &id);
    e->model = id.model;
    if (e->model != NULL) {
      const char *v = nccl_attr(e->x, "vendor"), *d = nccl_attr(e->x, "device");
      g_autofree char *pid = v != NULL && d != NULL ? g_strdup_printf(" (PCI %s:%s is in no "
                                                                      "catalog pci_ids)", v, d)
                                                    : g_strdup("");
      nccl_note_once(w, g_strdup_printf("NIC %s: the file gives no known device id or <net> speed%s; "
                                   "the NIC of NVIDIA's reference server for %s",
                                   e->model->name, pid, gpu0->name));
    }
    fs_identity_clear(&id);
    if (e->model == NULL) {
      nccl_fail_at(w, e->x, error, "no NIC model in the catalog");
      goto out;
    }
  }
  /* Switch model: the largest fan-out. */
  guint most = 1;
  for (guint i = 0; i < w->ents->len; i++) {
    guint kids = 1;
    for (guint j = 0; j < w->ents->len; j++)
      kids += ent(w, (int)j)->parent == (int)i;
    if (ent(w, (int)i)->kind == E_SWITCH)
      most = MAX(most, kids);
  }
  const FsModel *psw = imp_pcie_switch(w->cat, gpu0->u.gpu.pcie, most);
  for (guint i = 0; i < w->ents->len; i++)
    if (ent(w, (int)i)->kind == E_SWITCH) {
      if (psw == NULL) {
        nccl_fail_at(w, ent(w, (int)i)->x, error, "no PCIe switch model in the catalog has %u ports",
                most);
        goto out;
      }
      ent(w, (int)i)->model = psw;
    }
  /* Each node's link to its parent: the file's, else the device's own.  A
   * bridge that reports a link slower than its fastest child (a VM's
   * virtual bridge: 2.5 GT/s x1 above Gen5 x16 devices) carries the
   * child's link instead: children come after their bridge, so walking
   * backwards settles them first. */
  link = g_new0(const FsModel *, w->ents->len);
  for (guint i = w->ents->len; i-- > 0;) {
    const Ent *e = ent(w, (int)i);
    if (e->kind == E_CPU)
      continue;
    link[i] = e->uplink != NULL ? e->uplink : own_link(e);
    if (e->kind != E_SWITCH)
      continue;
    const FsModel *fastest = NULL;
    for (guint j = i + 1; j < w->ents->len; j++)
      if (ent(w, (int)j)->parent == (int)i &&
          (fastest == NULL || link[j]->u.link.bandwidth > fastest->u.link.bandwidth))
        fastest = link[j];
    if (fastest != NULL && fastest->u.link.bandwidth > link[i]->u.link.bandwidth) {
      nccl_note_once(w, g_strdup_printf("bridges that report a link slower than the devices below "
                                   "them (%s above %s: a VM's virtual bridges) given their "
                                   "fastest child's link", link[i]->name, fastest->name));
      link[i] = fastest;
    }
  }

  /* Nodes: CPUs, GPUs by dev, NICs, PCIe switches, NVSwitches. */
  guint n_cpu = 0, n_nic = 0, n_sw = 0;
  for (guint i = 0; i < w->ents->len; i++) {
    Ent *e = ent(w, (int)i);
    if (e->kind == E_CPU) {
      g_autofree char *c = g_strdup_printf("numaid %s", nccl_attr(e->x, "numaid"));
      e->node = imp_add_node(g, e->model, e->dev_index, c, "cpu%u", n_cpu++);
    }
  }
  for (guint a = 0; a < ngpu; a++) {
    Ent *e = ent(w, gi[a]);
    g_autofree char *c = e->dev != NULL ? g_strdup_printf("dev %d, busid %s", e->dev_index,
                                                          nccl_attr(e->x, "busid"))
                                        : g_strdup_printf("busid %s", nccl_attr(e->x, "busid"));
    e->node = imp_add_node(g, e->model, -1, c, "gpu%u", a);
  }
  for (guint i = 0; i < w->ents->len; i++) {
    Ent *e = ent(w, (int)i);
    if (e->kind != E_NIC)
      continue;
    GString *c = g_string_new(NULL);
    for (guint k = 0; e->dev != NULL && k < e->dev->kids->len; k++) {
      const XNode *n = g_ptr_array_index(e->dev->kids, k);
      if (strcmp(n->name, "net") == 0)
        g_string_append_printf(c, "%s%s %s Mb/s", c->len ? ", " : "", nccl_attr(n, "name"),
                               nccl_attr(n, "speed"));
    }
    if (c->len == 0 && nccl_attr(e->x, "busid") != NULL)
      g_string_append_printf(c, "busid %s", nccl_attr(e->x, "busid"));
    e->node = imp_add_node(g, e->model, -1, c->len ? c->str : NULL, "nic%u", n_nic++);
    g_string_free(c, TRUE);
  }
  for (guint i = 0; i < w->ents->len; i++) {
    Ent *e = ent(w, (int)i);
    if (e->kind == E_SWITCH) {
      g_autofree char *c = g_strdup_printf("busid %s", nccl_attr(e->x, "busid"));
      e->node = imp_add_node(g, e->model, -1, c, "pcie%u", n_sw++);
    }
  }
  /* NVSwitches: one per target bus id, or, when the target's GPU links
   * exceed the model's ports (NCCL dumps one "fffffff:ff:ff.0" target for
   * the whole fabric), the fewest switches that hold them, each GPU's
   * links spread evenly over them (the same NVSwitch plane). */
  const FsModel *nvl = gpu0->u.gpu.nvlink, *nvsw = NULL;
  sw_first = g_new0(guint, sw_bus->len + 1);
  sw_n = g_new0(guint, sw_bus->len + 1);
  if (sw_bus->len > 0) {
    if (nvl == NULL || !(nvsw = imp_nvswitch(w->cat, nvl))) {
      g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL,
                  "%s: no NVSwitch model in the catalog has %s ports", w->name,
                  nvl != NULL ? nvl->name : "NVLink");
      goto out;
    }
    guint n_nvsw = 0;
    for (guint s = 0; s < sw_bus->len; s++) {
      guint most = 1;
      for (guint k = 0; k < sw_links->len; k++) {
        const guint *rec = (const guint *)(sw_links->data + k * sizeof(guint) * 3);
        if (rec[1] == s)
          most = MAX(most, rec[2]);
      }
      guint S = 1;
      for (;; S++) {
        guint64 ports = 0;
        for (guint k = 0; k < sw_links->len; k++) {
          const guint *rec = (const guint *)(sw_links->data + k * sizeof(guint) * 3);
          if (rec[1] == s)
            ports += (rec[2] + S - 1) / S;
        }
        if (ports <= nvsw->u.sw.ports)
          break;
        if (S >= most) {
          g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PORTS,
                      "%s: NVLink target %s joins %" G_GUINT64_FORMAT " GPU links; no number of "
                      "%s (%u ports) holds them", w->name, (char *)g_ptr_array_index(sw_bus, s),
                      ports, nvsw->name, nvsw->u.sw.ports);
          goto out;
        }
      }
      sw_first[s] = g->nodes->len;
      sw_n[s] = S;
      if (S > 1)
        nccl_note_once(w, g_strdup_printf("NVLink target %s spread over %u %s (its GPU links exceed "
                                     "one switch's ports)", (char *)g_ptr_array_index(sw_bus, s),
                                     S, nvsw->name));
      for (guint j = 0; j < S; j++) {
        g_autofree char *c = g_strdup_printf("NVLink target %s",
                                             (char *)g_ptr_array_index(sw_bus, s));
        imp_add_node(g, nvsw, -1, c, "nvswitch%u", n_nvsw++);
      }
    }
  }
  /* Links: PCIe tree, NVLinks, C2C, sockets. */
  for (guint i = 0; i < w->ents->len; i++) {
    Ent *e = ent(w, (int)i);
    if (e->kind != E_CPU)
      imp_add_link(g, e->node, ent(w, e->parent)->node, link[i], 1);
  }
  for (guint a = 0; a < ngpu; a++)
    for (guint b = a + 1; b < ngpu; b++) {
      guint c = MAX(pair[a * ngpu + b], pair[b * ngpu + a]);
      const FsModel *l = ent(w, gi[a])->model->u.gpu.nvlink;
      if (c > 0 && l == NULL) {
        nccl_fail_at(w, ent(w, gi[a])->dev, error, "NVLinks to another GPU, but %s has no NVLink",
                ent(w, gi[a])->model->name);
        goto out;
      }
      if (c > 0)
        imp_add_link(g, ent(w, gi[a])->node, ent(w, gi[b])->node, l, c);
    }
  for (guint k = 0; k < sw_links->len; k++) {
    const guint *rec = (const guint *)(sw_links->data + k * sizeof(guint) * 3);
    guint S = sw_n[rec[1]];
    for (guint j = 0; j < S; j++) {
      guint c = rec[2] / S + (j < rec[2] % S ? 1 : 0);
      if (c > 0)
        imp_add_link(g, ent(w, gi[rec[0]])->node, sw_first[rec[1]] + j, nvl, c);
    }
  }
  for (guint a = 0; a < ngpu; a++) {
    const Ent *e = ent(w, gi[a]), *c = ent(w, e->cpu);
    if (cpu_links[a] > 0) {
      if (c->model->u.cpu.nvlink == NULL) {
        nccl_fail_at(w, e->dev, error, "an NVLink to the CPU, but %s has no NVLink", c->model->name);
        goto out;
      }
      imp_add_link(g, e->node, c->node, c->model->u.cpu.nvlink, cpu_links[a]);
    }
    if (e->c2c > 0 && e->model->u.gpu.c2c != NULL)
      imp_add_link(g, e->node, c->node, e->model->u.gpu.c2c, 1);
    else if (e->c2c > 0)
      nccl_note_once(w, g_strdup_printf("<c2c> of a %s ignored (the model has no NVLink-C2C)",
                                   e->model->name));
  }
  int first = -1;
  for (guint i = 0; i < w->ents->len; i++)
    if (ent(w, (int)i)->kind == E_CPU) {
      if (first < 0) {
        first = (int)i;
        continue;
      }
      guint count;
      const FsModel *sl = imp_socket_link(ent(w, first)->model, &count);
      imp_add_link(g, ent(w, first)->node, ent(w, (int)i)->node, sl, count);
    }

  GString *models = g_string_new(NULL);
  for (guint i = 0; i < w->notes->len; i++)
    g_string_append_printf(models, "%s%s", i ? "; " : "", (char *)g_ptr_array_index(w->notes, i));
  if (models->len > 0)
    imp_note(g, "Read from the file: %s. Override models with --gpu, --cpu and --nic.",
             models->str);
  g_string_free(models, TRUE);
  for (guint i = 0; i < w->guesses->len; i++)
    imp_note(g, "%s", (const char *)g_ptr_array_index(w->guesses, i));
  imp_note(g, "Structure from the file: one CPU node per <cpu> (socket = numaid), one PCIe "
           "switch per bridge <pci> (%s), PCIe links from link_speed and link_width, "
           "NVLinks from <nvlink> (%u NVSwitch target%s).",
           psw != NULL ? psw->name : "none", sw_bus->len, sw_bus->len == 1 ? "" : "s");
  yaml = imp_emit(g, "import-nccl", w->name);
  /* The output must load (port budgets, models): say so here, not later. */
  GError *le = NULL;
  char *label = g_strdup_printf("%s (imported)", w->name);
  FsTopo *t = fs_topo_load_string(yaml, label, w->cat, NULL, &le);
  g_free(label);
  if (t == NULL) {
    g_set_error(error, FS_TOPO_ERROR, le->code, "%s: the imported topology does not load: %s",
                w->name, le->message);
    g_error_free(le);
    g_clear_pointer(&yaml, g_free);
  }
  fs_topo_free(t);
out:
  g_ptr_array_free(sw_bus, TRUE);
  g_array_free(sw_links, TRUE);
  return yaml;
}

/* See import.h.  Also: the XML is read whole into an element tree with GMarkup first (the line
 * starts are kept so that later errors can give a line); malformed XML or a file with no element
 * fails with FS_TOPO_ERROR_INVALID at GMarkup's line and column.  The rest is build's. */
char *fs_import_nccl(const char *text, gsize len, const char *name, const FsCatalog *cat,
                     const FsImportOptions *opt, GError **error)
{
  g_return_val_if_fail(text != NULL && name != NULL && cat != NULL, NULL);
  XNode *root = nccl_xml_parse(text, len, name, error);
  if (root == NULL)
    return NULL;
  Walk w = {.name = name, .cat = cat, .opt = opt,
            .ents = g_array_new(FALSE, TRUE, sizeof(Ent)),
            .notes = g_ptr_array_new_with_free_func(g_free),
            .guesses = g_ptr_array_new_with_free_func(g_free),
            .noted = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL)};
  char *yaml = build(&w, root, error);
  g_array_free(w.ents, TRUE);
  g_ptr_array_free(w.notes, TRUE);
  g_ptr_array_free(w.guesses, TRUE);
  g_hash_table_destroy(w.noted);
  nccl_xml_free(root);
  return yaml;
}
