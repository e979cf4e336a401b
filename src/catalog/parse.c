/* parse.c — models YAML to catalog entries (keys: schema.c; format:
 * models/README.md).
 *
 * A models file is a mapping with one key, `models:`, a list of entries.
 * Each entry is read against the tables of schema.c (unknown keys with
 * "did you mean", required keys, types, units and sanity ranges); what a
 * table cannot say is checked here: keys that exclude or need each other,
 * encodings, identification lists and the widths of a link.  Every error
 * names file:line:col.  References to other models (gpu.pcie,
 * switch.port_link ...) are recorded with their position and resolved
 * later by fs_catalog_resolve, so files may be loaded in any order.
 * Derived link figures are computed here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "catalog/catalog-private.h"
#include "catalog/names.h"
#include "util/error.h"
#include "util/names.h"
#include "util/strutil.h"
#include "util/units.h"

void fs_catalog_error_at(GError **error, const FsYamlNode *node, FsCatalogError code,
                         const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  fs_set_error_at_va(error, FS_CATALOG_ERROR, code, node->file, node->line, node->col, format,
                     ap);
  va_end(ap);
}

#define FAMILY(f) (1u << (f))

/* A field of kind's table that parse.c reads itself (FS_SCHEMA_NOWHERE). */
static const FsSchemaField *field(FsModelKind kind, const char *key)
{
  const FsSchemaField *f = fs_schema_field(&fs_catalog_kind_schemas[kind], key);
  g_assert(f != NULL);
  return f;
}

static gboolean out_of_range(const FsYamlNode *node, const char *what, const char *limit,
                             GError **error)
{
  fs_catalog_error_at(error, node, FS_CATALOG_ERROR_INVALID,
                      "%s \"%s\" is out of range (%s)", what, node->value ? node->value : "",
                      limit);
  return FALSE;
}

/* Records a reference to another model, when key is present (the schema
 * has checked that a required one is, and that it is a string). */
static gboolean add_ref(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map,
                        const char *key, const FsModel **slot, FsModelKind kind, guint families,
                        GError **error)
{
  const FsYamlNode *n = fs_yaml_map_get(map, key);
  if (n == NULL)
    return TRUE;
  const char *target;
  if (!fs_yaml_get_string(n, &target, error))
    return FALSE;
  g_assert(e->n_refs < FS_CATALOG_MAX_REFS);
  FsCatalogRef *r = &e->refs[e->n_refs++];
  r->key = key;
  r->target = fs_catalog_intern(cat, target);
  r->file = e->m.file;
  r->line = n->line;
  r->col = n->col;
  r->slot = slot;
  r->kind = kind;
  r->families = families;
  return TRUE;
}

/* ---- identification lists ------------------------------------------------ */

/* The optional list of strings under key, its items checked by the schema
 * (catalog/schema.c: each of its form, the list not empty), stored joined
 * by '\n' ("" when absent). */
static void opt_id_list(FsCatalog *cat, const FsYamlNode *map, const char *key,
                        const char **out)
{
  const FsYamlNode *n = fs_yaml_map_get(map, key);
  GString *joined = g_string_new(NULL);
  for (guint i = 0; n != NULL && i < n->n; i++)
    g_string_append_printf(joined, "%s%s", i ? "\n" : "", n->values[i]->value);
  *out = fs_catalog_intern(cat, joined->str);
  g_string_free(joined, TRUE);
}

/* pci_ids and product_names (GPUs, CPUs, NICs), cpuid (CPUs); the kind's
 * schema read them already. */
static void parse_ids(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map)
{
  FsModelIds *ids = &e->m.ids;
  opt_id_list(cat, map, "pci_ids", &ids->pci_ids);
  opt_id_list(cat, map, "product_names", &ids->product_names);
  if (e->m.kind == FS_MODEL_CPU)
    opt_id_list(cat, map, "cpuid", &ids->cpuid);
  else
    ids->cpuid = fs_catalog_intern(cat, "");
}

/* ---- links ------------------------------------------------------------- */

/* Parses one ratio term: "128b/130b", "242/256" or a plain number. */
static gboolean parse_term(const char *t, double *value, char **display)
{
  const char *slash = strchr(t, '/');
  if (slash == NULL) {
    double v;
    if (!fs_parse_number(t, &v, NULL))
      return FALSE;
    *value = v;
    *display = g_strdup(t);
    return TRUE;
  }
  g_autofree char *a = g_strstrip(g_strndup(t, (gsize)(slash - t)));
  g_autofree char *b = g_strstrip(g_strdup(slash + 1));
  /* An optional "b" (bits) after each side: 128b/130b. */
  gsize la = strlen(a), lb = strlen(b);
  if (la > 1 && a[la - 1] == 'b')
    a[la - 1] = '\0';
  if (lb > 1 && b[lb - 1] == 'b')
    b[lb - 1] = '\0';
  double na, nb;
  if (!fs_parse_number(a, &na, NULL) || !fs_parse_number(b, &nb, NULL) || !(nb > 0))
    return FALSE;
  *value = na / nb;
  *display = g_strdup_printf("%s/%s", a, b);
  return TRUE;
}

/* An encoding: a product of terms joined by "*" or "×". */
static gboolean parse_encoding(FsCatalog *cat, const FsYamlNode *node, double *value,
                               const char **display, GError **error)
{
  const char *text;
  if (!fs_yaml_get_string(node, &text, error))
    return FALSE;
  g_autofree char *norm = g_strdup(text);
  /* Map the UTF-8 multiplication sign to '*'. */
  for (char *p; (p = strstr(norm, "\xc3\x97")) != NULL;) {
    p[0] = '*';
    memmove(p + 1, p + 2, strlen(p + 2) + 1);
  }
  g_auto(GStrv) terms = g_strsplit(norm, "*", -1);
  double v = 1;
  g_autoptr(GPtrArray) shown = g_ptr_array_new_with_free_func(g_free);
  gboolean ok = terms[0] != NULL;
  for (guint i = 0; ok && terms[i] != NULL; i++) {
    double tv;
    char *td = NULL;
    g_strstrip(terms[i]);
    ok = parse_term(terms[i], &tv, &td);
    if (ok) {
      v *= tv;
      g_ptr_array_add(shown, td);
    }
  }
  if (!ok) {
    fs_catalog_error_at(error, node, FS_CATALOG_ERROR_INVALID,
                        "expected an encoding like \"128b/130b\", \"242/256\", "
                        "\"256/257*514/544\" or 0.97, got \"%s\"", text);
    return FALSE;
  }
  if (!(v > 0) || v > 1)
    return out_of_range(node, "encoding", "the payload fraction must be more than 0 and at most 1",
                        error);
  g_ptr_array_add(shown, NULL);
  g_autofree char *joined = g_strjoinv(" \xc3\x97 ", (char **)shown->pdata);
  *value = v;
  *display = fs_catalog_intern(cat, joined);
  return TRUE;
}

/* Computes raw and effective bandwidth of a link from its fields. */
static void link_derive(FsLinkModel *l)
{
  l->raw_bandwidth = l->lane_rate * l->lanes * l->encoding / 8.0;
  if (l->max_payload > 0)
    l->efficiency = (double)l->max_payload / (double)(l->max_payload + l->tlp_overhead);
  l->bandwidth = l->raw_bandwidth * l->efficiency;
}

/* Reads the link figures the schema leaves to this file (family,
 * generation, latency and lanes are stored): bandwidth or lane rate with
 * lanes or widths, encoding and protocol efficiency; *widths receives the
 * `widths:` list (or NULL) for the caller to expand. */
static gboolean parse_link(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map,
                           GArray **widths, GError **error)
{
  FsLinkModel *l = &e->m.u.link;
  const FsYamlNode *bw = fs_yaml_map_get(map, "bandwidth");
  const FsYamlNode *rate = fs_yaml_map_get(map, "lane_rate");
  const FsYamlNode *lanes = fs_yaml_map_get(map, "lanes");
  const FsYamlNode *wlist = fs_yaml_map_get(map, "widths");
  const FsYamlNode *enc = fs_yaml_map_get(map, "encoding");
  l->encoding = 1;
  l->encoding_ratio = fs_catalog_intern(cat, "1");
  l->encoding_name = fs_catalog_intern(cat, "none");
  if (bw != NULL) {
    const FsYamlNode *clash = rate ? rate : lanes ? lanes : wlist ? wlist : enc;
    if (clash != NULL) {
      fs_catalog_error_at(error, clash, FS_CATALOG_ERROR_INVALID,
                          "a link gives either \"bandwidth\" or \"lane_rate\" with "
                          "\"lanes\"/\"widths\" and \"encoding\", not both");
      return FALSE;
    }
    double b;
    if (!fs_schema_read_value(field(FS_MODEL_LINK, "bandwidth"), bw, &b, error))
      return FALSE;
    l->lanes = 1;
    l->lane_rate = 8 * b;
    l->bandwidth_given = TRUE;
  } else {
    if (rate == NULL) {
      fs_catalog_error_at(error, map, FS_CATALOG_ERROR_INVALID,
                          "link model needs either \"bandwidth\" (per direction) or "
                          "\"lane_rate\" with \"lanes\" or \"widths\"");
      return FALSE;
    }
    if (!fs_schema_read_value(field(FS_MODEL_LINK, "lane_rate"), rate, &l->lane_rate, error))
      return FALSE;
    if (lanes != NULL && wlist != NULL) {
      fs_catalog_error_at(error, wlist, FS_CATALOG_ERROR_INVALID,
                          "a link gives either \"lanes\" or \"widths\", not both");
      return FALSE;
    }
    if (lanes == NULL && wlist == NULL) {
      fs_catalog_error_at(error, map, FS_CATALOG_ERROR_INVALID,
                          "link model with \"lane_rate\" needs \"lanes\" or \"widths\"");
      return FALSE;
    }
    if (wlist != NULL) {
      if (wlist->n == 0) {
        fs_catalog_error_at(error, wlist, FS_CATALOG_ERROR_INVALID,
                            "\"widths\" is empty; expected lane counts like [1, 2, 4, 8, 16]");
        return FALSE;
      }
      *widths = g_array_new(FALSE, FALSE, sizeof(guint));
      for (guint i = 0; i < wlist->n; i++) {
        guint w;
        if (!fs_schema_read_value(field(FS_MODEL_LINK, "lanes"), wlist->values[i], &w, error))
          return FALSE;
        for (guint j = 0; j < (*widths)->len; j++)
          if (g_array_index(*widths, guint, j) == w) {
            fs_catalog_error_at(error, wlist->values[i], FS_CATALOG_ERROR_DUPLICATE,
                                "width %u appears twice in \"widths\"", w);
            return FALSE;
          }
        g_array_append_val(*widths, w);
      }
      l->lanes = g_array_index(*widths, guint, 0);
    }
    if (enc != NULL) {
      if (!parse_encoding(cat, enc, &l->encoding, &l->encoding_ratio, error))
        return FALSE;
      l->encoding_name = fs_catalog_intern(cat, enc->value);
    }
  }
  const FsYamlNode *ename = fs_yaml_map_get(map, "encoding_name");
  if (ename != NULL)
    l->encoding_name = fs_catalog_intern(cat, ename->value);

  /* Protocol efficiency: payload/(payload+overhead), or a plain factor. */
  const FsYamlNode *mp = fs_yaml_map_get(map, "max_payload");
  const FsYamlNode *oh = fs_yaml_map_get(map, "tlp_overhead");
  const FsYamlNode *ef = fs_yaml_map_get(map, "efficiency");
  l->efficiency = 1;
  if ((mp == NULL) != (oh == NULL)) {
    fs_catalog_error_at(error, mp ? mp : oh, FS_CATALOG_ERROR_INVALID,
                        "\"max_payload\" and \"tlp_overhead\" go together; give both or neither");
    return FALSE;
  }
  if (mp != NULL) {
    if (ef != NULL) {
      fs_catalog_error_at(error, ef, FS_CATALOG_ERROR_INVALID,
                          "a link gives either \"efficiency\" or \"max_payload\"/\"tlp_overhead\", "
                          "not both");
      return FALSE;
    }
    uint64_t p, o;
    if (!fs_schema_read_value(field(FS_MODEL_LINK, "max_payload"), mp, &p, error) ||
        !fs_schema_read_value(field(FS_MODEL_LINK, "tlp_overhead"), oh, &o, error))
      return FALSE;
    l->max_payload = (uint32_t)p;
    l->tlp_overhead = (uint32_t)o;
  } else if (ef != NULL &&
             !fs_schema_read_value(field(FS_MODEL_LINK, "efficiency"), ef, &l->efficiency, error)) {
    return FALSE;
  }
  link_derive(l);
  double max_bandwidth;
  if (!fs_parse_bandwidth(field(FS_MODEL_LINK, "bandwidth")->max, &max_bandwidth, NULL))
    g_assert_not_reached(); /* fs_schema_check (test-catalog) parses every bound */
  if (l->raw_bandwidth > max_bandwidth) {
    fs_catalog_error_at(error, rate ? rate : map, FS_CATALOG_ERROR_INVALID,
                        "the link's raw bandwidth comes to %g B/s, beyond %s; "
                        "check the units of \"lane_rate\"", l->raw_bandwidth,
                        field(FS_MODEL_LINK, "bandwidth")->max);
    return FALSE;
  }
  return TRUE;
}

/* ---- switches, GPUs, CPUs, NICs ---------------------------------------- */

/* Checks the switch model of e beyond its table: the port link (which must be of the
 * switch's link family), reduction_bandwidth only with reduction, and lanes on PCIe switches
 * only, enough for the ports.  Sets a catalog error at the offending node and returns FALSE on
 * one. */
static gboolean parse_switch(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map,
                             GError **error)
{
  FsSwitchModel *s = &e->m.u.sw;
  guint families = 0;
  switch (s->kind) {
  case FS_SWITCH_NVSWITCH: families = FAMILY(FS_LINK_NVLINK); break;
  case FS_SWITCH_PCIE: families = FAMILY(FS_LINK_PCIE); break;
  case FS_SWITCH_INFINIBAND: families = FAMILY(FS_LINK_INFINIBAND); break;
  case FS_SWITCH_ETHERNET: families = FAMILY(FS_LINK_ETHERNET); break;
  default: break;
  }
  if (!add_ref(cat, e, map, "port_link", &s->port_link, FS_MODEL_LINK, families, error))
    return FALSE;
  if (s->reduction_bandwidth > 0 && !s->reduction) {
    fs_catalog_error_at(error, fs_yaml_map_get(map, "reduction_bandwidth"),
                        FS_CATALOG_ERROR_INVALID,
                        "\"reduction_bandwidth\" given for a switch without \"reduction: true\"");
    return FALSE;
  }
  const FsYamlNode *ln = fs_yaml_map_get(map, "lanes");
  if (ln != NULL && s->kind != FS_SWITCH_PCIE) {
    fs_catalog_error_at(error, ln, FS_CATALOG_ERROR_INVALID,
                        "\"lanes\" is for PCIe switches only");
    return FALSE;
  }
  if (ln != NULL && s->lanes < 16 * s->ports) {
    fs_catalog_error_at(error, ln, FS_CATALOG_ERROR_INVALID,
                        "%u lanes cannot make %u x16 ports", s->lanes, s->ports);
    return FALSE;
  }
  return TRUE;
}

/* nvlink and nvlinks go together (GPU and CPU). */
static gboolean check_nvlink_pair(const FsYamlNode *map, guint nvlinks, GError **error)
{
  const FsYamlNode *model = fs_yaml_map_get(map, "nvlink");
  const FsYamlNode *count = fs_yaml_map_get(map, "nvlinks");
  if (model != NULL && nvlinks == 0) {
    fs_catalog_error_at(error, model, FS_CATALOG_ERROR_INVALID,
                        "\"nvlink\" needs \"nvlinks\" (how many links) of at least 1");
    return FALSE;
  }
  if (count != NULL && nvlinks > 0 && model == NULL) {
    fs_catalog_error_at(error, count, FS_CATALOG_ERROR_INVALID,
                        "\"nvlinks\" needs \"nvlink\" (the link model)");
    return FALSE;
  }
  return TRUE;
}

/* Checks the GPU model of e beyond its table: at least one datatype in flops, the link and
 * host references (through add_ref()), nvlink with nvlinks, and the identification keys
 * (compute capability "9.0", form factor).  Sets a catalog error at the offending node and
 * returns FALSE on the first bad key. */
static gboolean parse_gpu(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map,
                          GError **error)
{
  FsGpuModel *g = &e->m.u.gpu;
  const FsYamlNode *fl = fs_yaml_map_get(map, "flops");
  if (fl->n == 0) {
    fs_catalog_error_at(error, fl, FS_CATALOG_ERROR_INVALID,
                        "\"flops\" lists no datatype; expected e.g. \"bf16: 989.4 TFLOP/s\"");
    return FALSE;
  }
  g->memory_efficiency = 1; /* until a calibration says otherwise */
  if (!add_ref(cat, e, map, "nvlink", &g->nvlink, FS_MODEL_LINK, FAMILY(FS_LINK_NVLINK), error) ||
      !check_nvlink_pair(map, g->nvlinks, error) ||
      !add_ref(cat, e, map, "pcie", &g->pcie, FS_MODEL_LINK, FAMILY(FS_LINK_PCIE), error) ||
      !add_ref(cat, e, map, "c2c", &g->c2c, FS_MODEL_LINK, FAMILY(FS_LINK_C2C), error))
    return FALSE;
  /* Identification: compute capability "9.0", form factor, reference host. */
  const FsYamlNode *cc = fs_yaml_map_get(map, "compute_capability");
  if (cc != NULL) {
    guint major, minor;
    char tail;
    if (sscanf(cc->value, "%2u.%1u%c", &major, &minor, &tail) != 2 || major == 0) {
      fs_catalog_error_at(error, cc, FS_CATALOG_ERROR_INVALID,
                          "compute capability \"%s\" is not of the form \"9.0\"", cc->value);
      return FALSE;
    }
    g->compute_capability = major * 10 + minor;
  }
  const FsYamlNode *ff = fs_yaml_map_get(map, "form_factor");
  g->form_factor = fs_catalog_intern(cat, ff != NULL ? ff->value : "");
  return add_ref(cat, e, map, "reference_cpu", &g->reference_cpu, FS_MODEL_CPU, 0, error) &&
         add_ref(cat, e, map, "reference_nic", &g->reference_nic, FS_MODEL_NIC, 0, error);
}

/* Checks the CPU model of e beyond its table: references, nvlink with nvlinks, and
 * intersocket_links with intersocket (1 link when only the model is given). */
static gboolean parse_cpu(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map,
                          GError **error)
{
  FsCpuModel *c = &e->m.u.cpu;
  if (!add_ref(cat, e, map, "pcie", &c->pcie, FS_MODEL_LINK, FAMILY(FS_LINK_PCIE), error) ||
      !add_ref(cat, e, map, "intersocket", &c->intersocket, FS_MODEL_LINK,
               FAMILY(FS_LINK_INTERSOCKET) | FAMILY(FS_LINK_C2C), error) ||
      !add_ref(cat, e, map, "nvlink", &c->nvlink, FS_MODEL_LINK, FAMILY(FS_LINK_NVLINK), error) ||
      !check_nvlink_pair(map, c->nvlinks, error))
    return FALSE;
  const FsYamlNode *links = fs_yaml_map_get(map, "intersocket_links");
  if (links != NULL && c->intersocket_links > 0 && fs_yaml_map_get(map, "intersocket") == NULL) {
    fs_catalog_error_at(error, links, FS_CATALOG_ERROR_INVALID,
                        "\"intersocket_links\" needs \"intersocket\" (the link model)");
    return FALSE;
  }
  if (fs_yaml_map_get(map, "intersocket") != NULL && links == NULL)
    c->intersocket_links = 1;
  return TRUE;
}

static gboolean parse_nic(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map,
                          GError **error)
{
  FsNicModel *c = &e->m.u.nic;
  return add_ref(cat, e, map, "port_link", &c->port_link, FS_MODEL_LINK,
                 FAMILY(FS_LINK_INFINIBAND) | FAMILY(FS_LINK_ETHERNET), error) &&
         add_ref(cat, e, map, "pcie", &c->pcie, FS_MODEL_LINK, FAMILY(FS_LINK_PCIE), error);
}

/* ---- entries ------------------------------------------------------------ */

/* Model names: lowercase ASCII letters, digits and dashes, starting with a
 * letter or digit (they appear in topologies and on command lines). */
static gboolean valid_name(const char *s)
{
  if (s[0] == '\0' || s[0] == '-')
    return FALSE;
  for (const char *p = s; *p; p++)
    if (!g_ascii_islower(*p) && !g_ascii_isdigit(*p) && *p != '-')
      return FALSE;
  return TRUE;
}

/* Parses one list item into one entry (or several, for `widths:`): the keys common to every
 * kind first (so that the kind picks the table), then the kind's table, then what the table
 * cannot say. */
static gboolean parse_entry(FsCatalog *cat, const char *file, const FsYamlNode *item,
                            GPtrArray *batch, GError **error)
{
  if (!fs_yaml_require_map(item, error))
    return FALSE;
  FsCatalogEntry *e = g_new0(FsCatalogEntry, 1);
  g_ptr_array_add(batch, e);
  FsSchemaRead opts = {.strings = cat->strings, .allow_unknown = TRUE};
  if (!fs_schema_read(&fs_catalog_common_schema, item, &e->m, &opts, error))
    return FALSE;
  const char *name = e->m.name;
  if (!valid_name(name)) {
    fs_catalog_error_at(error, fs_yaml_map_get(item, "name"), FS_CATALOG_ERROR_INVALID,
                        "model name \"%s\" must be lowercase letters, digits and dashes "
                        "(e.g. \"pcie-gen4-x16\")", name);
    return FALSE;
  }
  g_autofree char *trimmed = g_strstrip(g_strdup(e->m.source));
  if (trimmed[0] == '\0') {
    fs_catalog_error_at(error, fs_yaml_map_get(item, "source"), FS_CATALOG_ERROR_INVALID,
                        "empty \"source\"; every model must say where its figures come from");
    return FALSE;
  }
  e->m.source = fs_catalog_intern(cat, trimmed);
  opts.allow_unknown = FALSE;
  opts.skip_base = TRUE;
  if (!fs_schema_read(&fs_catalog_kind_schemas[e->m.kind], item, &e->m, &opts, error))
    return FALSE;
  e->m.file = file;
  e->m.line = item->line;
  e->m.col = item->col;

  g_autoptr(GArray) widths = NULL;
  gboolean ok = FALSE;
  switch (e->m.kind) {
  case FS_MODEL_LINK: ok = parse_link(cat, e, item, &widths, error); break;
  case FS_MODEL_SWITCH: ok = parse_switch(cat, e, item, error); break;
  case FS_MODEL_GPU: ok = parse_gpu(cat, e, item, error); break;
  case FS_MODEL_CPU: ok = parse_cpu(cat, e, item, error); break;
  case FS_MODEL_NIC: ok = parse_nic(cat, e, item, error); break;
  default: g_assert_not_reached();
  }
  if (ok && e->m.kind != FS_MODEL_LINK && e->m.kind != FS_MODEL_SWITCH)
    parse_ids(cat, e, item);
  else if (ok) {
    e->m.ids.pci_ids = e->m.ids.product_names = e->m.ids.cpuid = fs_catalog_intern(cat, "");
  }
  if (!ok || widths == NULL)
    return ok;

  /* `widths: [1, 2, 4]` turns entry NAME into NAME-x1, NAME-x2, NAME-x4.
   * Links hold no references, so a plain copy of the entry is complete. */
  FsCatalogEntry proto = *e;
  g_ptr_array_remove_index(batch, batch->len - 1);
  for (guint i = 0; i < widths->len; i++) {
    guint w = g_array_index(widths, guint, i);
    FsCatalogEntry *x = g_new(FsCatalogEntry, 1);
    *x = proto;
    g_autofree char *xname = g_strdup_printf("%s-x%u", name, w);
    x->m.name = fs_catalog_intern(cat, xname);
    x->m.u.link.lanes = w;
    link_derive(&x->m.u.link);
    g_ptr_array_add(batch, x);
  }
  return TRUE;
}

gboolean fs_catalog_parse_doc(FsCatalog *cat, FsYamlDoc *doc, GPtrArray *batch, GError **error)
{
  const char *file = fs_catalog_intern(cat, fs_yaml_doc_name(doc));
  const FsYamlNode *root = fs_yaml_doc_root(doc);
  if (root == NULL) {
    fs_set_error_at(error, FS_CATALOG_ERROR, FS_CATALOG_ERROR_INVALID, file, 1, 1,
                    "empty models file; expected a mapping with key \"models\" "
                    "(a list of model entries)");
    return FALSE;
  }
  if (!fs_schema_read(&fs_catalog_file_schema, root, NULL, NULL, error))
    return FALSE;
  const FsYamlNode *list = fs_yaml_map_get(root, "models");
  for (guint i = 0; i < list->n; i++)
    if (!parse_entry(cat, file, list->values[i], batch, error))
      return FALSE;
  return TRUE;
}
