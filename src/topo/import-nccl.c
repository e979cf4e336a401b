/* import-nccl.c — NCCL's topology XML (the dump NCCL writes to
 * NCCL_TOPO_DUMP_FILE, src/graph/xml.cc, and the hand-written files clouds
 * publish for NCCL_TOPO_FILE) to topology YAML.
 *
 * The file is read with GLib's GMarkup (comments, an <?xml?> declaration
 * and a leading comment block are fine) into a small element tree, then
 * walked the way NCCL's ncclTopoAddCpu / ncclTopoAddPci read it:
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
#include "topo/import-private.h"
#include "topo/import.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/limits.h"
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
  /* The nesting guard: MAX_DEPTH, or $FABRICSIM_MAX_XML_DEPTH (at most 4096: the tree is
   * walked recursively). */
  guint64 limit = fs_env_limit("FABRICSIM_MAX_XML_DEPTH", MAX_DEPTH, 4096);
  if ((guint64)++r->depth > limit) {
    g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                "elements nested more than %" G_GUINT64_FORMAT " deep (FABRICSIM_MAX_XML_DEPTH "
                "raises the limit)", limit);
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
  const XNode *x;       /* the <cpu>, <pci> (switch, GPU, NIC) or bare <nic> element */
  const XNode *dev;     /* GPUs: <gpu>, NICs: <nic>; NULL when the file has none */
  int parent;           /* entry index, -1 for CPUs */
  int cpu;              /* entry index of its CPU */
  const FsModel *model;
  const FsModel *uplink;  /* link to the parent from the file (NULL: the device's own) */
  int dev_index;        /* GPU: dev (implicit ones numbered after the explicit); CPU: socket */
  long sm;              /* GPU: <gpu sm>, -1 without <gpu> */
  guint c2c;            /* GPU: <c2c count> */
  double speed;         /* NIC: fastest <net speed> (Mb/s), 0 when unknown */
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

/* Parses a decimal integer attribute in [lo, 1e9] (surrounding blanks
 * allowed, nothing else). */
static gboolean int_in(const Walk *w, const XNode *x, const char *key, const char *v, long lo,
                       long *out, GError **error)
{
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  while (*end == ' ' || *end == '\t')
    end++;
  if (end == v || *end != '\0' || errno != 0 || n < lo || n > 1000000000) {
    g_autofree char *q = fs_escape_controls(v);
    return fail_at(w, x, error, "<%s %s=\"%s\">: expected %s integer", x->name, key, q,
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
  return v != NULL && int_in(w, x, key, v, 0, out, error);
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
  const char *sp = attr(x, "link_speed"), *wd = attr(x, "link_width");
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
      return fail_at(w, x, error, "<%s link_speed=\"%s\">: expected a PCIe rate such as "
                     "\"16.0 GT/s PCIe\" (2.5, 5, 8, 16, 32 or 64 GT/s), or \"\"", x->name, q);
    }
  }
  long width = -1;
  if (wd != NULL && *wd != '\0') {
    if (!int_in(w, x, "link_width", wd, 0, &width, error))
      return FALSE;
    if (width != 0 && width != 1 && width != 2 && width != 4 && width != 8 && width != 12 &&
        width != 16 && width != 32) {
      return fail_at(w, x, error, "<%s link_width=\"%s\">: expected a PCIe width (1, 2, 4, 8, "
                     "12, 16 or 32), or 0 for unknown", x->name, wd);
    }
  }
  if (gen == 0)
    return TRUE;
  if (width <= 0) {
    width = 16;   /* NCCL's ncclTopoAddPci: width 0 is 16 */
    if (wd != NULL && strcmp(wd, "0") == 0)
      note_once(w, g_strdup("link_width=\"0\" read as 16 lanes, as NCCL does"));
  }
  g_autofree char *name = g_strdup_printf("pcie-gen%d-x%ld", gen, width);
  const FsModel *m = fs_catalog_get(w->cat, name);
  if (m != NULL && m->kind == FS_MODEL_LINK)
    *link = m;
  else
    note_once(w, g_strdup_printf("no catalog link %s: the device's own PCIe link instead", name));
  return TRUE;
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

/* fits() for the identification: the GPU has the NVLinks the file gives
 * it (data: the GPU's NVLink count). */
static gboolean nccl_fits(const FsModel *m, gpointer data)
{
  guint want = *(const guint *)data;
  return want == 0 || (m->u.gpu.nvlink != NULL && m->u.gpu.nvlinks >= want);
}

/* TRUE when some catalog GPU has the PCI id of x (catalog `pci_ids`) or,
 * sm >= 0, compute capability sm. */
static gboolean known_gpu(const Walk *w, const XNode *x, long sm)
{
  guint vendor = pci_attr(x, "vendor"), device = pci_attr(x, "device");
  for (guint i = 0; i < fs_catalog_size(w->cat); i++) {
    const FsModel *m = fs_catalog_nth(w->cat, i);
    if (m->kind == FS_MODEL_GPU && ((sm >= 0 && (long)m->u.gpu.compute_capability == sm) ||
                                    (device != 0 && fs_model_has_pci_id(m, vendor, device))))
      return TRUE;
  }
  return FALSE;
}

/* TRUE when some catalog NIC has the PCI id of x. */
static gboolean known_nic(const Walk *w, const XNode *x)
{
  guint vendor = pci_attr(x, "vendor"), device = pci_attr(x, "device");
  for (guint i = 0; device != 0 && i < fs_catalog_size(w->cat); i++) {
    const FsModel *m = fs_catalog_nth(w->cat, i);
    if (m->kind == FS_MODEL_NIC && fs_model_has_pci_id(m, vendor, device))
      return TRUE;
  }
  return FALSE;
}

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
  const char *class = pci != NULL ? attr(pci, "class") : NULL;
  if (w->opt != NULL && w->opt->nic != NULL) {
    e.model = imp_require(w->cat, w->opt->nic, FS_MODEL_NIC, "--nic", error);
    if (e.model == NULL)
      return FALSE;
  } else if ((pci != NULL && known_nic(w, pci)) || fastest > 0) {
    FsNicClues nc = {.pci_vendor = pci_attr(pci, "vendor"), .pci_device = pci_attr(pci, "device"),
                     .rate_gbps = fastest / 1000, .family = -1};
    if (class != NULL && g_str_has_prefix(class, "0x0207"))
      nc.family = FS_LINK_INFINIBAND;
    else if (class != NULL && g_str_has_prefix(class, "0x0200"))
      nc.family = FS_LINK_ETHERNET;
    FsIdentity id = {0};
    fs_identify_nic(w->cat, &nc, &id);
    e.model = id.model;
    if (e.model != NULL)
      note_identity(w, "NIC", &id, "--nic");
    fs_identity_clear(&id);
    if (e.model == NULL)
      return fail_at(w, e.x, error, "no NIC model in the catalog");
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
  const char *class = attr(x, "class");
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
    if (gpu != NULL && attr(gpu, "gcn") != NULL) {
      g_autofree char *q = fs_escape_controls(attr(gpu, "gcn"));
      return fail_at(w, gpu, error, "<gpu gcn=\"%s\">: an AMD GPU (RCCL's dump); the catalog "
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
    if (sm >= 0 && (w->opt == NULL || w->opt->gpu == NULL) && !known_gpu(w, x, sm))
      return fail_at(w, gpu, error, "unknown GPU compute capability sm=%ld: no catalog GPU "
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
    return fail_at(w, x, error, "<pci busid=\"%s\"> has no class and no child: it cannot be told "
                   "apart (NCCL fills such entries in from the running machine); give class "
                   "\"0x030200\" for a GPU or \"0x020700\" for a NIC", q);
  }
  if (!has_pci && !g_str_has_prefix(class, "0x0604")) {
    g_autofree char *q = fs_escape_controls(class);
    note_once(w, g_strdup_printf("<pci class=\"%s\"> without children skipped (neither GPU nor "
                                 "NIC)", q));
    return TRUE;
  }
  Ent e = {.kind = E_SWITCH, .x = x, .parent = parent, .cpu = cpu, .uplink = up};
  g_array_append_val(w->ents, e);
  return walk_kids(w, x, (int)w->ents->len - 1, cpu, error);
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

/* The PCIe link model a node hangs from its parent by: the file's, else
 * the device's own. */
static const FsModel *own_link(const Ent *e)
{
  return e->kind == E_GPU ? e->model->u.gpu.pcie
       : e->kind == E_NIC ? e->model->u.nic.pcie : e->model->u.sw.port_link;
}

/* The CPU models: --cpu, else identified (identify.h) from NCCL's
 * vendor/familyid/modelid (CPUID, catalog `cpuid`), arch ppc64/arm64 and
 * NVLinks every GPU has to the CPU (spare: a CPU with the GPU's NVLink,
 * POWER9) and the GPU's reference CPU.  familyid and modelid are strict
 * numbers. */
static gboolean cpu_models(Walk *w, const FsModel *gpu0, guint spare, GError **error)
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
    const char *vendor = attr(e->x, "vendor"), *arch = attr(e->x, "arch");
    const char *fs = attr(e->x, "familyid"), *ms = attr(e->x, "modelid");
    long fam = -1, mod = -1;
    if (fs != NULL && *fs != '\0' && !int_in(w, e->x, "familyid", fs, 0, &fam, error))
      return FALSE;
    if (ms != NULL && *ms != '\0' && !int_in(w, e->x, "modelid", ms, 0, &mod, error))
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
      note_identity(w, "CPU", &id, "--cpu");
    fs_identity_clear(&id);
    if (e->model == NULL)
      return fail_at(w, e->x, error, "the catalog has no CPU model");
  }
  return TRUE;
}

/* The GPU model of GPU entry e (identify.h): --gpu; else the PCI device
 * id (catalog `pci_ids`), <gpu sm>, NVLink-C2C to a Grace host and the
 * NVLinks; without <gpu> and a known id, the generation of its PCIe link
 * stands for sm, on an NVSwitch (clouds write such files for their NVLink
 * servers, whose NVLinks NCCL finds by itself). */
static gboolean gpu_model(Walk *w, Ent *e, gboolean on_switch, guint nvsum, guint nvset,
                          GError **error)
{
  if (w->opt != NULL && w->opt->gpu != NULL) {
    e->model = imp_require(w->cat, w->opt->gpu, FS_MODEL_GPU, "--gpu", error);
    return e->model != NULL;
  }
  FsGpuClues gc = {.pci_vendor = pci_attr(e->x, "vendor"), .pci_device = pci_attr(e->x, "device"),
                   .nv_sum = nvsum, .nvswitch = on_switch, .nv_set = nvset,
                   .grace = e->c2c > 0, .fits = nccl_fits, .fits_data = &nvsum};
  if (e->sm >= 0) {
    gc.compute_capability = (guint)MIN(e->sm, G_MAXINT);
  } else if (!known_gpu(w, e->x, -1)) {
    const FsModel *up = e->uplink;
    long sm = -1;
    if (up != NULL && up->u.link.generation != NULL) {
      int gen = atoi(up->u.link.generation + strcspn(up->u.link.generation, "0123456789"));
      sm = gen == 3 ? 70 : gen == 4 ? 80 : gen == 5 ? 90 : gen == 6 ? 100 : -1;
    }
    if (sm < 0)
      return fail_at(w, e->x, error, "the GPU cannot be identified (no <gpu sm>, no known PCI "
                     "device id, no PCIe rate): name the model with --gpu");
    gc.compute_capability = (guint)sm;
    gc.nvswitch = TRUE;
    gc.nv_set = MAX(gc.nv_set, 3);
  }
  for (guint i = 0; i < w->ents->len; i++) {
    const Ent *c = &g_array_index(w->ents, Ent, i);
    const char *arch = c->kind == E_CPU ? attr(c->x, "arch") : NULL;
    gc.grace |= arch != NULL && (strcmp(arch, "arm64") == 0 || strcmp(arch, "aarch64") == 0);
  }
  FsIdentity id = {0};
  fs_identify_gpu(w->cat, &gc, &id);
  e->model = id.model;
  if (e->model != NULL)
    note_identity(w, "GPU", &id, "--gpu");
  fs_identity_clear(&id);
  if (e->model == NULL)
    return fail_at(w, e->dev != NULL ? e->dev : e->x, error, "no GPU model in the catalog has "
                   "the %u NVLinks of this GPU; name one with --gpu", nvsum);
  return TRUE;
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
    fail_at(w, root, error, "the top element is <%s>; expected <system>", root->name);
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
    if (nv == NULL || !int_in(w, c, "numaid", nv, -1, &numa, error))
      return NULL;
    numa_unknown |= numa < 0;
    Ent e = {.kind = E_CPU, .x = c, .parent = -1, .cpu = (int)w->ents->len,
             .dev_index = (int)MAX(numa, 0)};
    g_array_append_val(w->ents, e);
    if (!walk_kids(w, c, (int)w->ents->len - 1, (int)w->ents->len - 1, error))
      return NULL;
  }
  if (numa_unknown)
    note_once(w, g_strdup("numaid=\"-1\" (NUMA unknown, as in a VM) read as socket 0"));
  guint ngpu = 0;
  int max_dev = -1;
  for (guint i = 0; i < w->ents->len; i++)
    if (ent(w, (int)i)->kind == E_GPU) {
      ngpu++;
      max_dev = MAX(max_dev, ent(w, (int)i)->dev_index);
    }
  if (ngpu == 0) {
    fail_at(w, root, error, "<system> has no GPU (no <cpu><pci><gpu> and no <pci class=\"0x03xxxx\">): "
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
    note_once(w, g_strdup("GPUs without <gpu> numbered in file order (NCCL fills them in from "
                          "the running machine); their NVLinks are not in the file"));
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
      const char *tclass = attr(nv, "tclass");
      int peer = -1;
      for (guint b = 0; b < ngpu; b++)
        if (g_ascii_strcasecmp(attr(ent(w, gi[b])->x, "busid"), target) == 0)
          peer = (int)b;
      if (peer >= 0 && (tclass == NULL || g_str_has_prefix(tclass, "0x03"))) {
        if (peer == (int)a) {
          /* Azure NCv4: NVML reports a GPU's NVLinks with its own bus id. */
          note_once(w, g_strdup("NVLinks whose target is their own GPU ignored (they join no "
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
        fail_at(w, nv, error, "NVLink target %s has class %s; expected a GPU of this file, an "
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
                       known_gpu(w, e->x, -1);
      if (ident != (pass == 0))
        continue;
      if (pass == 1 && known != NULL) {
        e->model = known;
        note_once(w, g_strdup_printf("GPUs the file does not identify taken to be %s, as the "
                                     "one it does", known->name));
        continue;
      }
      if (!gpu_model(w, e, on_switch[a], nvsum[a], nvset[a], error))
        goto out;
      if (known == NULL)
        known = e->model;
    }
  const FsModel *gpu0 = ent(w, gi[0])->model;
  guint spare = cpu_links[0];
  for (guint a = 1; a < ngpu; a++)
    spare = MIN(spare, cpu_links[a]);
  if (!cpu_models(w, gpu0, spare, error))
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
      const char *v = attr(e->x, "vendor"), *d = attr(e->x, "device");
      g_autofree char *pid = v != NULL && d != NULL ? g_strdup_printf(" (PCI %s:%s is in no "
                                                                      "catalog pci_ids)", v, d)
                                                    : g_strdup("");
      note_once(w, g_strdup_printf("NIC %s: the file gives no known device id or <net> speed%s; "
                                   "the NIC of NVIDIA's reference server for %s",
                                   e->model->name, pid, gpu0->name));
    }
    fs_identity_clear(&id);
    if (e->model == NULL) {
      fail_at(w, e->x, error, "no NIC model in the catalog");
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
        fail_at(w, ent(w, (int)i)->x, error, "no PCIe switch model in the catalog has %u ports",
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
      note_once(w, g_strdup_printf("bridges that report a link slower than the devices below "
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
      g_autofree char *c = g_strdup_printf("numaid %s", attr(e->x, "numaid"));
      e->node = imp_add_node(g, e->model, e->dev_index, c, "cpu%u", n_cpu++);
    }
  }
  for (guint a = 0; a < ngpu; a++) {
    Ent *e = ent(w, gi[a]);
    g_autofree char *c = e->dev != NULL ? g_strdup_printf("dev %d, busid %s", e->dev_index,
                                                          attr(e->x, "busid"))
                                        : g_strdup_printf("busid %s", attr(e->x, "busid"));
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
        g_string_append_printf(c, "%s%s %s Mb/s", c->len ? ", " : "", attr(n, "name"),
                               attr(n, "speed"));
    }
    if (c->len == 0 && attr(e->x, "busid") != NULL)
      g_string_append_printf(c, "busid %s", attr(e->x, "busid"));
    e->node = imp_add_node(g, e->model, -1, c->len ? c->str : NULL, "nic%u", n_nic++);
    g_string_free(c, TRUE);
  }
  for (guint i = 0; i < w->ents->len; i++) {
    Ent *e = ent(w, (int)i);
    if (e->kind == E_SWITCH) {
      g_autofree char *c = g_strdup_printf("busid %s", attr(e->x, "busid"));
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
        note_once(w, g_strdup_printf("NVLink target %s spread over %u %s (its GPU links exceed "
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
        fail_at(w, ent(w, gi[a])->dev, error, "NVLinks to another GPU, but %s has no NVLink",
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
        fail_at(w, e->dev, error, "an NVLink to the CPU, but %s has no NVLink", c->model->name);
        goto out;
      }
      imp_add_link(g, e->node, c->node, c->model->u.cpu.nvlink, cpu_links[a]);
    }
    if (e->c2c > 0 && e->model->u.gpu.c2c != NULL)
      imp_add_link(g, e->node, c->node, e->model->u.gpu.c2c, 1);
    else if (e->c2c > 0)
      note_once(w, g_strdup_printf("<c2c> of a %s ignored (the model has no NVLink-C2C)",
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
