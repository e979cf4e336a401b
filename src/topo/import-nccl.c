/* import-nccl.c — NCCL's topology dump (NCCL_TOPO_DUMP_FILE, the XML of
 * NCCL's src/graph/xml.cc) to topology YAML.
 *
 * The dump is read with GLib's GMarkup into a small element tree, then
 * walked:
 *   <system>          the machine (one host; host_hash is ignored)
 *   <cpu numaid=…>    a CPU node, socket = numaid; vendor/familyid/modelid
 *                     (or arch) identify its model (identify.h); CPUs are joined to the
 *                     first by its inter-socket link
 *   <pci class=0x0604…>  a PCIe switch (bridge), linked to its parent
 *   <pci><gpu dev sm>    a GPU; its PCI vendor/device, sm and NVLinks identify
 *                     its model (identify.h)
 *   <pci><nic><net>      a NIC; its class (0x0207 InfiniBand, 0x0200
 *                     Ethernet), PCI id and fastest net speed (Mb/s) identify
 *                     its model
 *   <nic> under <cpu>    a NIC on a CPU root port
 *   <nvlink target count tclass>  NVLinks: to a GPU (its busid), to an
 *                     NVSwitch (tclass 0x068000; one switch node per target
 *                     busid) or to the CPU (tclass 0x060000, POWER9)
 * A pci element's link_speed ("16.0 GT/s PCIe") and link_width give its
 * link to the parent, pcie-genN-xW; when they are missing or empty the
 * device's own PCIe model is used (a switch: its port link).  Other
 * elements are skipped.  GPUs are declared in dev order, so placement
 * order is NCCL's device order.
 *
 * Errors: "name:line:col: sentence" (GMarkup's position), FS_TOPO_ERROR.
 * Cost: linear in the XML size, plus O(GPUs^2) for NVLink pairs.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "topo/identify.h"
#include "topo/import-private.h"
#include "topo/import.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/names.h"
#include "util/strutil.h"

/* ---- the element tree ---------------------------------------------------- */

typedef struct XNode {
  char *name;
  char **keys, **vals;
  int line, col;
  struct XNode *parent;
  GPtrArray *kids;
} XNode;

static void xnode_free(gpointer p)
{
  XNode *x = p;
  g_free(x->name);
  g_strfreev(x->keys);
  g_strfreev(x->vals);
  g_ptr_array_free(x->kids, TRUE);
  g_free(x);
}

typedef struct {
  XNode *root, *cur;
  const char *text;
  gsize len;
  GArray *line_start;   /* byte offset of each line's start, line 1 first */
  guint depth;
} Reader;

/* GMarkup reports the position after the start tag; moves (line, col) back
 * to the tag's '<' so that messages point at the element's start. */
static void tag_start(const Reader *r, int *line, int *col)
{
  if (*line < 1 || (guint)*line > r->line_start->len)
    return;
  gsize ls = g_array_index(r->line_start, gsize, *line - 1);
  gsize le = (guint)*line < r->line_start->len ? g_array_index(r->line_start, gsize, *line)
                                               : r->len;
  const char *p = r->text + ls;
  for (int c = 1; c < *col && p < r->text + le; c++)
    p = g_utf8_next_char(p);
  /* A stray lead byte (0xF0-0xFF) jumps up to 6 bytes: never past the line
   * (found by tests/fuzz/fuzz-nccl-xml.c: a heap-buffer-overflow read). */
  if (p > r->text + le)
    p = r->text + le;
  if (p > r->text)
    p--;          /* the position is just past the tag's '>' */
  while (p > r->text && *p != '<')
    p--;
  gsize off = (gsize)(p - r->text);
  int l = *line;
  while (l > 1 && g_array_index(r->line_start, gsize, l - 1) > off)
    l--;
  *line = l;
  *col = (int)g_utf8_strlen(r->text + g_array_index(r->line_start, gsize, l - 1),
                            (gssize)(off - g_array_index(r->line_start, gsize, l - 1))) + 1;
}

#define MAX_DEPTH 64

static void on_start(GMarkupParseContext *ctx, const char *name, const char **keys,
                     const char **vals, gpointer data, GError **error)
{
  Reader *r = data;
  if (++r->depth > MAX_DEPTH) {
    g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                "elements nested more than %d deep", MAX_DEPTH);
    return;
  }
  XNode *x = g_new0(XNode, 1);
  x->name = g_strdup(name);
  x->keys = g_strdupv((char **)keys);
  x->vals = g_strdupv((char **)vals);
  g_markup_parse_context_get_position(ctx, &x->line, &x->col);
  tag_start(r, &x->line, &x->col);
  x->kids = g_ptr_array_new_with_free_func(xnode_free);
  x->parent = r->cur;
  if (r->cur == NULL) {
    if (r->root != NULL) {
      xnode_free(x);
      g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                  "a second top-level element <%s>", name);
      return;
    }
    r->root = x;
  } else {
    g_ptr_array_add(r->cur->kids, x);
  }
  r->cur = x;
}

static void on_end(GMarkupParseContext *ctx, const char *name, gpointer data, GError **error)
{
  (void)ctx, (void)name, (void)error;
  Reader *r = data;
  r->depth--;
  r->cur = r->cur->parent;
}

static const char *attr(const XNode *x, const char *key)
{
  guint i;
  return fs_names_index((const char *const *)x->keys, G_MAXUINT, key, &i) ? x->vals[i] : NULL;
}

/* ---- the walk ------------------------------------------------------------- */

typedef enum { E_CPU, E_SWITCH, E_GPU, E_NIC } EntKind;

typedef struct {
  EntKind kind;
  const XNode *x;       /* the <cpu>, <pci> (switch, GPU) or <nic> element */
  const XNode *dev;     /* <gpu> for GPUs */
  int parent;           /* entry index, -1 for CPUs */
  int cpu;              /* entry index of its CPU */
  const FsModel *model;
  const FsModel *uplink;  /* link to the parent (NULL: the device's own) */
  int dev_index;        /* GPU: dev */
  guint node;           /* graph node, once made */
} Ent;

typedef struct {
  const char *name;
  const FsCatalog *cat;
  const FsImportOptions *opt;
  GArray *ents;         /* Ent */
  GPtrArray *notes;     /* what was chosen, one phrase each (owned) */
  GPtrArray *guesses;   /* "Guess: ..." paragraphs, one per undecided model (owned) */
  GHashTable *noted;    /* phrases already in notes (set) */
} Walk;

static gboolean fail_at(const Walk *w, const XNode *x, GError **error, const char *format, ...)
  G_GNUC_PRINTF(4, 5);

static gboolean fail_at(const Walk *w, const XNode *x, GError **error, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, w->name, x->line, x->col, "%s",
                  msg);
  return FALSE;
}

static void note_once(Walk *w, char *phrase)
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
  const char *v = attr(x, key);
  if (v == NULL || *v == '\0')
    fail_at(w, x, error, "<%s> has no %s attribute", x->name, key);
  return v != NULL && *v != '\0' ? v : NULL;
}

/* Parses a non-negative decimal integer attribute. */
static gboolean need_int(const Walk *w, const XNode *x, const char *key, long *out,
                         GError **error)
{
  const char *v = need(w, x, key, error);
  if (v == NULL)
    return FALSE;
  char *end;
  long n = strtol(v, &end, 10);
  if (end == v || *end != '\0' || n < 0 || n > 1000000) {
    g_autofree char *q = fs_escape_controls(v);
    return fail_at(w, x, error, "<%s %s=\"%s\">: expected a non-negative integer", x->name, key,
                   q);
  }
  *out = n;
  return TRUE;
}

/* link_speed + link_width to pcie-genN-xW; NULL (no error) when either is
 * missing, empty or unknown. */
static const FsModel *pcie_link(Walk *w, const XNode *x)
{
  static const struct { double gts; int gen; } gens[] = {
    {2.5, 1}, {5.0, 2}, {8.0, 3}, {16.0, 4}, {32.0, 5}, {64.0, 6}};
  const char *sp = attr(x, "link_speed"), *wd = attr(x, "link_width");
  if (sp == NULL || wd == NULL || *sp == '\0' || *wd == '\0')
    return NULL;
  double gts = g_ascii_strtod(sp, NULL);
  long width = strtol(wd, NULL, 10);
  for (gsize i = 0; i < G_N_ELEMENTS(gens); i++)
    if (gts > gens[i].gts - 0.05 && gts < gens[i].gts + 0.05) {
      g_autofree char *name = g_strdup_printf("pcie-gen%d-x%ld", gens[i].gen, width);
      const FsModel *m = fs_catalog_get(w->cat, name);
      return m != NULL && m->kind == FS_MODEL_LINK ? m : NULL;
    }
  return NULL;
}

/* A PCI vendor or device attribute ("0x10de") as a number; 0 when absent
 * or not hex. */
static guint pci_attr(const XNode *x, const char *key)
{
  const char *v = x != NULL ? attr(x, key) : NULL;
  if (v == NULL || !g_str_has_prefix(v, "0x"))
    return 0;
  char *end;
  guint64 n = g_ascii_strtoull(v + 2, &end, 16);
  return end != v + 2 && *end == '\0' && n <= 0xffff ? (guint)n : 0;
}

/* Records an identification: a phrase for the header, and a guess line
 * (opt->messages) when the clues left alternatives. */
static void note_identity(Walk *w, const char *what, const FsIdentity *id, const char *option)
{
  note_once(w, g_strdup_printf("%s %s (%s: %s)", what, id->model->name,
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

/* fits() for the identification: the GPU has the NVLinks the dump gives
 * it (data: the GPU's NVLink count). */
static gboolean nccl_fits(const FsModel *m, gpointer data)
{
  guint want = *(const guint *)data;
  return want == 0 || (m->u.gpu.nvlink != NULL && m->u.gpu.nvlinks >= want);
}

/* TRUE when some catalog GPU has PCI id vendor:device or compute
 * capability sm. */
static gboolean known_gpu(const Walk *w, guint vendor, guint device, long sm)
{
  for (guint i = 0; i < fs_catalog_size(w->cat); i++) {
    const FsModel *m = fs_catalog_nth(w->cat, i);
    if (m->kind == FS_MODEL_GPU && ((long)m->u.gpu.compute_capability == sm ||
                                    (device != 0 && fs_model_has_pci_id(m, vendor, device))))
      return TRUE;
  }
  return FALSE;
}

static gboolean walk_pci(Walk *w, const XNode *x, int parent, int cpu, GError **error);

static gboolean walk_nic(Walk *w, const XNode *nic, const XNode *pci, int parent, int cpu,
                         GError **error)
{
  double fastest = 0;
  GString *names = g_string_new(NULL);
  for (guint i = 0; i < nic->kids->len; i++) {
    const XNode *n = g_ptr_array_index(nic->kids, i);
    if (strcmp(n->name, "net") != 0)
      continue;
    long speed;
    const char *nm = need(w, n, "name", error);
    if (nm == NULL || !need_int(w, n, "speed", &speed, error)) {
      g_string_free(names, TRUE);
      return FALSE;
    }
    fastest = MAX(fastest, (double)speed);
    g_string_append_printf(names, "%s%s %ld Gb/s", names->len ? ", " : "", nm, speed / 1000);
  }
  if (names->len == 0) {
    g_string_free(names, TRUE);
    return fail_at(w, nic, error, "<nic> has no <net> element");
  }
  Ent e = {.kind = E_NIC, .x = nic, .parent = parent, .cpu = cpu};
  const char *class = pci != NULL ? attr(pci, "class") : NULL;
  if (w->opt != NULL && w->opt->nic != NULL) {
    e.model = imp_require(w->cat, w->opt->nic, FS_MODEL_NIC, "--nic", error);
  } else {
    FsNicClues nc = {.pci_vendor = pci_attr(pci, "vendor"), .pci_device = pci_attr(pci, "device"),
                     .rate_gbps = fastest / 1000, .family = -1};
    if (class != NULL && g_str_has_prefix(class, "0x0207"))
      nc.family = FS_LINK_INFINIBAND;
    else if (class != NULL && g_str_has_prefix(class, "0x0200"))
      nc.family = FS_LINK_ETHERNET;
    FsIdentity id = {0};
    fs_identify_nic(w->cat, &nc, &id);
    e.model = id.model;
    if (e.model == NULL)
      fail_at(w, nic, error, "no NIC model in the catalog");
    else
      note_identity(w, "NIC", &id, "--nic");
    fs_identity_clear(&id);
  }
  if (e.model == NULL) {
    g_string_free(names, TRUE);
    return FALSE;
  }
  e.uplink = pci != NULL ? pcie_link(w, pci) : NULL;
  g_array_append_val(w->ents, e);
  g_string_free(names, TRUE);
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
      if (!walk_nic(w, k, NULL, parent, cpu, error))
        return FALSE;
    }
  }
  return TRUE;
}

static gboolean walk_pci(Walk *w, const XNode *x, int parent, int cpu, GError **error)
{
  const char *class = need(w, x, "class", error);
  if (class == NULL || need(w, x, "busid", error) == NULL)
    return FALSE;
  const XNode *gpu = NULL, *nic = NULL;
  for (guint i = 0; i < x->kids->len; i++) {
    const XNode *k = g_ptr_array_index(x->kids, i);
    if (strcmp(k->name, "gpu") == 0)
      gpu = k;
    else if (strcmp(k->name, "nic") == 0)
      nic = k;
  }
  if (gpu != NULL) {
    long devn, sm;
    if (!need_int(w, gpu, "dev", &devn, error) || !need_int(w, gpu, "sm", &sm, error))
      return FALSE;
    Ent e = {.kind = E_GPU, .x = x, .dev = gpu, .parent = parent, .cpu = cpu,
             .dev_index = (int)devn, .uplink = pcie_link(w, x)};
    /* The model waits for the NVLinks (SXM vs PCIe); sm is checked now. */
    if (!known_gpu(w, pci_attr(x, "vendor"), pci_attr(x, "device"), sm) &&
        (w->opt == NULL || w->opt->gpu == NULL))
      return fail_at(w, gpu, error, "no catalog GPU has compute capability sm=%ld (or this "
                     "PCI id); name the model with --gpu", sm);
    g_array_append_val(w->ents, e);
    return TRUE;
  }
  if (nic != NULL)
    return walk_nic(w, nic, x, parent, cpu, error);
  if (g_str_has_prefix(class, "0x0604")) {
    Ent e = {.kind = E_SWITCH, .x = x, .parent = parent, .cpu = cpu, .uplink = pcie_link(w, x)};
    g_array_append_val(w->ents, e);
    return walk_kids(w, x, (int)w->ents->len - 1, cpu, error);
  }
  g_autofree char *q = fs_escape_controls(class);
  return fail_at(w, x, error, "<pci class=\"%s\"> is neither a PCIe bridge (class 0x0604xx) nor "
                 "a device with a <gpu> or <nic> inside", q);
}

static Ent *ent(const Walk *w, int i)
{
  return &g_array_index(w->ents, Ent, i);
}

/* Sort key for GPUs: dev. */
static int by_dev(gconstpointer a, gconstpointer b, gpointer data)
{
  const Walk *w = data;
  const Ent *x = ent(w, *(const int *)a), *y = ent(w, *(const int *)b);
  return (x->dev_index > y->dev_index) - (x->dev_index < y->dev_index);
}

static char *build(Walk *w, const XNode *root, GError **error)
{
  if (strcmp(root->name, "system") != 0) {
    fail_at(w, root, error, "the top element is <%s>; expected <system>", root->name);
    return NULL;
  }
  /* CPUs first. */
  for (guint i = 0; i < root->kids->len; i++) {
    const XNode *c = g_ptr_array_index(root->kids, i);
    if (strcmp(c->name, "cpu") != 0)
      continue;
    long numa;
    if (!need_int(w, c, "numaid", &numa, error))
      return NULL;
    Ent e = {.kind = E_CPU, .x = c, .parent = -1, .cpu = (int)w->ents->len,
             .dev_index = (int)numa};
    g_array_append_val(w->ents, e);
    /* Without --cpu the model is identified once the GPUs are known. */
    if (w->opt != NULL && w->opt->cpu != NULL &&
        !(ent(w, (int)w->ents->len - 1)->model =
            imp_require(w->cat, w->opt->cpu, FS_MODEL_CPU, "--cpu", error)))
      return NULL;
    if (!walk_kids(w, c, (int)w->ents->len - 1, (int)w->ents->len - 1, error))
      return NULL;
  }
  guint ngpu = 0;
  for (guint i = 0; i < w->ents->len; i++)
    ngpu += ent(w, (int)i)->kind == E_GPU;
  if (ngpu == 0) {
    fail_at(w, root, error, "<system> has no <cpu><pci><gpu> element: no GPU to import");
    return NULL;
  }
  g_autofree int *gi = g_new(int, ngpu);
  ngpu = 0;
  for (guint i = 0; i < w->ents->len; i++)
    if (ent(w, (int)i)->kind == E_GPU)
      gi[ngpu++] = (int)i;
  g_qsort_with_data(gi, (gint)ngpu, sizeof(int), by_dev, w);
  for (guint a = 1; a < ngpu; a++)
    if (ent(w, gi[a])->dev_index == ent(w, gi[a - 1])->dev_index) {
      fail_at(w, ent(w, gi[a])->dev, error, "a second GPU with dev=%d",
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
  g_autoptr(ImpGraph) g = imp_graph_new();
  for (guint a = 0; a < ngpu; a++) {
    const XNode *gx = ent(w, gi[a])->dev;
    for (guint k = 0; k < gx->kids->len; k++) {
      const XNode *nv = g_ptr_array_index(gx->kids, k);
      if (strcmp(nv->name, "nvlink") != 0)
        continue;
      long count;
      const char *target = need(w, nv, "target", error);
      if (target == NULL || !need_int(w, nv, "count", &count, error))
        goto out;
      if (count == 0)
        continue;
      const char *tclass = attr(nv, "tclass");
      int peer = -1;
      for (guint b = 0; b < ngpu; b++)
        if (g_ascii_strcasecmp(attr(ent(w, gi[b])->x, "busid"), target) == 0)
          peer = (int)b;
      nvsum[a] += (guint)count;
      if (peer >= 0 && (tclass == NULL || g_str_has_prefix(tclass, "0x03"))) {
        if (peer == (int)a) {
          fail_at(w, nv, error, "an NVLink from a GPU to itself");
          goto out;
        }
        pair[a * ngpu + (guint)peer] = (guint)count;
      } else if (tclass != NULL && strcmp(tclass, "0x068000") == 0) {
        guint s = 0;
        while (s < sw_bus->len && g_ascii_strcasecmp(g_ptr_array_index(sw_bus, s), target) != 0)
          s++;
        if (s == sw_bus->len)
          g_ptr_array_add(sw_bus, (gpointer)target);
        guint rec[3] = {a, s, (guint)count};
        g_array_append_vals(sw_links, rec, 1);
        on_switch[a] = TRUE;
      } else if (tclass != NULL && strcmp(tclass, "0x060000") == 0) {
        cpu_links[a] += (guint)count;
      } else {
        g_autofree char *q = fs_escape_controls(tclass != NULL ? tclass : "(none)");
        g_autofree char *t = fs_escape_controls(target);
        fail_at(w, nv, error, "NVLink target %s has class %s; expected a GPU of this dump, an "
                "NVSwitch (0x068000) or a CPU (0x060000)", t, q);
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
  /* GPU models. */
  for (guint a = 0; a < ngpu; a++) {
    Ent *e = ent(w, gi[a]);
    if (w->opt != NULL && w->opt->gpu != NULL) {
      if (!(e->model = imp_require(w->cat, w->opt->gpu, FS_MODEL_GPU, "--gpu", error)))
        goto out;
      continue;
    }
    FsGpuClues gc = {.pci_vendor = pci_attr(e->x, "vendor"),
                     .pci_device = pci_attr(e->x, "device"),
                     .compute_capability = (guint)strtol(attr(e->dev, "sm"), NULL, 10),
                     .nv_sum = nvsum[a], .nvswitch = on_switch[a], .nv_set = nvset[a],
                     .fits = nccl_fits, .fits_data = &nvsum[a]};
    for (guint i = 0; i < w->ents->len; i++)
      if (ent(w, (int)i)->kind == E_CPU) {
        const char *arch = attr(ent(w, (int)i)->x, "arch");
        gc.grace |= arch != NULL && (strcmp(arch, "arm64") == 0 || strcmp(arch, "aarch64") == 0);
      }
    FsIdentity id = {0};
    fs_identify_gpu(w->cat, &gc, &id);
    if (id.model == NULL) {
      fail_at(w, e->dev, error, "no GPU model in the catalog has the %u NVLinks of this GPU; "
              "name one with --gpu", nvsum[a]);
      fs_identity_clear(&id);
      goto out;
    }
    e->model = id.model;
    note_identity(w, "GPU", &id, "--gpu");
    fs_identity_clear(&id);
  }
  const FsModel *gpu0 = ent(w, gi[0])->model;
  for (guint i = 0; i < w->ents->len; i++) {
    Ent *e = ent(w, (int)i);
    if (e->kind != E_CPU || e->model != NULL)
      continue;
    const char *vendor = attr(e->x, "vendor"), *arch = attr(e->x, "arch");
    const char *fam = attr(e->x, "familyid"), *mod = attr(e->x, "modelid");
    FsCpuClues cc = {.family = -1, .model = -1, .sockets = 1, .gpu = gpu0};
    if (vendor != NULL && fam != NULL && mod != NULL) {
      cc.vendor = vendor;
      cc.family = fs_identify_cpuid_family_from_nccl((int)strtol(fam, NULL, 10));
      cc.model = (int)strtol(mod, NULL, 10);
    } else if (arch != NULL && strcmp(arch, "ppc64") == 0) {
      cc.vendor = "ppc64le";
    } else if (arch != NULL && (strcmp(arch, "arm64") == 0 || strcmp(arch, "aarch64") == 0)) {
      cc.vendor = "aarch64";
    }
    FsIdentity id = {0};
    fs_identify_cpu(w->cat, &cc, &id);
    if (id.model == NULL) {
      fail_at(w, e->x, error, "the catalog has no CPU model");
      fs_identity_clear(&id);
      goto out;
    }
    e->model = id.model;
    note_identity(w, "CPU", &id, "--cpu");
    fs_identity_clear(&id);
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
        fail_at(w, ent(w, (int)i)->x, error, "no PCIe switch model in the catalog has %u ports",
                most);
        goto out;
      }
      ent(w, (int)i)->model = psw;
    }

  /* Nodes: CPUs, GPUs by dev, NICs, PCIe switches, NVSwitches. */
  guint n_cpu = 0, n_nic = 0, n_sw = 0;
  for (guint i = 0; i < w->ents->len; i++) {
    Ent *e = ent(w, (int)i);
    if (e->kind == E_CPU) {
      g_autofree char *c = g_strdup_printf("numaid %d", e->dev_index);
      e->node = imp_add_node(g, e->model, e->dev_index, c, "cpu%u", n_cpu++);
    }
  }
  for (guint a = 0; a < ngpu; a++) {
    Ent *e = ent(w, gi[a]);
    g_autofree char *c = g_strdup_printf("dev %d, busid %s", e->dev_index, attr(e->x, "busid"));
    e->node = imp_add_node(g, e->model, -1, c, "gpu%u", a);
  }
  for (guint i = 0; i < w->ents->len; i++) {
    Ent *e = ent(w, (int)i);
    if (e->kind != E_NIC)
      continue;
    GString *c = g_string_new(NULL);
    for (guint k = 0; k < e->x->kids->len; k++) {
      const XNode *n = g_ptr_array_index(e->x->kids, k);
      if (strcmp(n->name, "net") == 0)
        g_string_append_printf(c, "%s%s %s Mb/s", c->len ? ", " : "", attr(n, "name"),
                               attr(n, "speed"));
    }
    e->node = imp_add_node(g, e->model, -1, c->str, "nic%u", n_nic++);
    g_string_free(c, TRUE);
  }
  for (guint i = 0; i < w->ents->len; i++) {
    Ent *e = ent(w, (int)i);
    if (e->kind == E_SWITCH) {
      g_autofree char *c = g_strdup_printf("busid %s", attr(e->x, "busid"));
      e->node = imp_add_node(g, e->model, -1, c, "pcie%u", n_sw++);
    }
  }
  const FsModel *nvl = gpu0->u.gpu.nvlink, *nvsw = NULL;
  guint sw0 = g->nodes->len;
  if (sw_bus->len > 0) {
    if (nvl == NULL || !(nvsw = imp_nvswitch(w->cat, nvl))) {
      g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL,
                  "%s: no NVSwitch model in the catalog has %s ports", w->name,
                  nvl != NULL ? nvl->name : "NVLink");
      goto out;
    }
    for (guint s = 0; s < sw_bus->len; s++) {
      g_autofree char *c = g_strdup_printf("NVLink target %s", (char *)g_ptr_array_index(sw_bus, s));
      imp_add_node(g, nvsw, -1, c, "nvswitch%u", s);
    }
  }
  /* Links: PCIe tree, NVLinks, sockets. */
  for (guint i = 0; i < w->ents->len; i++) {
    Ent *e = ent(w, (int)i);
    if (e->kind == E_CPU)
      continue;
    const FsModel *own = e->kind == E_GPU ? e->model->u.gpu.pcie
                       : e->kind == E_NIC ? e->model->u.nic.pcie : e->model->u.sw.port_link;
    const FsModel *l = e->uplink != NULL ? e->uplink : own;
    imp_add_link(g, e->node, ent(w, e->parent)->node, l, 1);
  }
  for (guint a = 0; a < ngpu; a++)
    for (guint b = a + 1; b < ngpu; b++) {
      guint c = MAX(pair[a * ngpu + b], pair[b * ngpu + a]);
      if (c > 0)
        imp_add_link(g, ent(w, gi[a])->node, ent(w, gi[b])->node, ent(w, gi[a])->model->u.gpu.nvlink,
                     c);
    }
  for (guint k = 0; k < sw_links->len; k++) {
    const guint *rec = (const guint *)(sw_links->data + k * sizeof(guint) * 3);
    imp_add_link(g, ent(w, gi[rec[0]])->node, sw0 + rec[1], nvl, rec[2]);
  }
  for (guint a = 0; a < ngpu; a++)
    if (cpu_links[a] > 0) {
      const Ent *c = ent(w, ent(w, gi[a])->cpu);
      if (c->model->u.cpu.nvlink == NULL) {
        fail_at(w, ent(w, gi[a])->dev, error, "an NVLink to the CPU, but %s has no NVLink",
                c->model->name);
        goto out;
      }
      imp_add_link(g, ent(w, gi[a])->node, c->node, c->model->u.cpu.nvlink, cpu_links[a]);
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
    imp_note(g, "Models: %s. Override with --gpu, --cpu and --nic.", models->str);
  g_string_free(models, TRUE);
  for (guint i = 0; i < w->guesses->len; i++)
    imp_note(g, "%s", (const char *)g_ptr_array_index(w->guesses, i));
  imp_note(g, "Structure from the dump: one CPU node per <cpu> (socket = numaid), one PCIe "
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

char *fs_import_nccl(const char *text, gsize len, const char *name, const FsCatalog *cat,
                     const FsImportOptions *opt, GError **error)
{
  g_return_val_if_fail(text != NULL && name != NULL && cat != NULL, NULL);
  static const GMarkupParser parser = {on_start, on_end, NULL, NULL, NULL};
  Reader r = {.text = text, .len = len, .line_start = g_array_new(FALSE, FALSE, sizeof(gsize))};
  gsize zero = 0;
  g_array_append_val(r.line_start, zero);
  for (gsize i = 0; i < len; i++)
    if (text[i] == '\n') {
      gsize next = i + 1;
      g_array_append_val(r.line_start, next);
    }
  GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, &r, NULL);
  GError *e = NULL;
  gboolean ok = g_markup_parse_context_parse(ctx, text, (gssize)len, &e) &&
                g_markup_parse_context_end_parse(ctx, &e);
  if (ok && r.root == NULL) {
    ok = FALSE;
    g_set_error(&e, G_MARKUP_ERROR, G_MARKUP_ERROR_EMPTY, "no element: expected <system>");
  }
  if (!ok) {
    int line, col;
    g_markup_parse_context_get_position(ctx, &line, &col);
    /* GMarkup's message starts with "Error on line L char C: ". */
    const char *msg = e->message;
    if (g_str_has_prefix(msg, "Error on line")) {
      const char *colon = strstr(msg, ": ");
      if (colon != NULL)
        msg = colon + 2;
    }
    g_autofree char *clean = fs_escape_controls(msg);
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, name, line, col,
                    "malformed XML: %s", clean);
    g_error_free(e);
    g_markup_parse_context_free(ctx);
    g_array_free(r.line_start, TRUE);
    if (r.root != NULL)
      xnode_free(r.root);
    return NULL;
  }
  g_markup_parse_context_free(ctx);
  g_array_free(r.line_start, TRUE);
  Walk w = {.name = name, .cat = cat, .opt = opt,
            .ents = g_array_new(FALSE, TRUE, sizeof(Ent)),
            .notes = g_ptr_array_new_with_free_func(g_free),
            .guesses = g_ptr_array_new_with_free_func(g_free),
            .noted = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL)};
  char *yaml = build(&w, r.root, error);
  g_array_free(w.ents, TRUE);
  g_ptr_array_free(w.notes, TRUE);
  g_ptr_array_free(w.guesses, TRUE);
  g_hash_table_destroy(w.noted);
  xnode_free(r.root);
  return yaml;
}
