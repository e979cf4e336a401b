/* parse.c — models YAML to catalog entries (schema: models/README.md).
 *
 * A models file is a mapping with one key, `models:`, a list of entries.
 * Each entry is checked for unknown keys (with "did you mean"), required
 * keys, types, units and sanity ranges; every error names file:line:col.
 * References to other models (gpu.pcie, switch.port_link ...) are recorded
 * with their position and resolved later by fs_catalog_resolve, so files
 * may be loaded in any order.  Derived link figures are computed here.
 *
 * The sanity ranges below are not hardware figures: they only reject
 * values no real part can have (a typo of a unit, "1e30 TB/s").
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

/* Sanity bounds (see the file comment and models/README.md). */
#define MAX_BANDWIDTH 1e14       /* bytes/s: 100 TB/s per direction */
#define MAX_LANE_RATE 1e12       /* bits/s per lane: 1 Tb/s */
#define MAX_LANES 64
#define MAX_TIME FS_SEC          /* any latency: 1 s */
#define MAX_MEMORY ((uint64_t)1 << 50) /* 1 PiB */
#define MAX_FLOPS 1e18           /* 1 EFLOP/s per device */
#define MAX_POWER 1e5            /* watts */
#define MAX_PRICE 1e8            /* US dollars */
#define MAX_PAYLOAD (1u << 20)   /* bytes */
#define MAX_OVERHEAD (1u << 16)  /* bytes */

void fs_catalog_error_at(GError **error, const FsYamlNode *node, FsCatalogError code,
                         const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  fs_set_error_at(error, FS_CATALOG_ERROR, code, node->file, node->line, node->col, "%s", msg);
}

/* Keys allowed per kind; the first four are common to all. */
#define COMMON_KEYS "name", "kind", "description", "source"
static const char *const link_keys[] = {
  COMMON_KEYS, "family", "generation", "lane_rate", "lanes", "widths", "encoding",
  "encoding_name", "max_payload", "tlp_overhead", "efficiency", "bandwidth", "latency", NULL};
static const char *const switch_keys[] = {
  COMMON_KEYS, "switch_kind", "ports", "port_link", "latency", "reduction",
  "reduction_bandwidth", "power", "price", "lanes", NULL};
static const char *const gpu_keys[] = {
  COMMON_KEYS, "arch", "flops", "memory", "memory_bandwidth", "nvlink", "nvlinks", "pcie",
  "c2c", "tdp", "price", "launch_latency", "sms", "pci_ids", "product_names", "compute_capability",
  "form_factor", "reference_cpu", "reference_nic", NULL};
static const char *const cpu_keys[] = {
  COMMON_KEYS, "vendor", "pcie_lanes", "pcie", "intersocket", "intersocket_links",
  "memory_bandwidth", "nvlink", "nvlinks", "tdp", "price", "root_latency", "root_bandwidth",
  "cores", "threads_per_core", "cpuid", "pci_ids", "product_names", NULL};
static const char *const nic_keys[] = {
  COMMON_KEYS, "port_link", "ports", "pcie", "latency", "gpudirect", "power", "price",
  "pci_ids", "product_names", NULL};

static const char *const *const keys_by_kind[FS_MODEL_N_KINDS] = {
  [FS_MODEL_LINK] = link_keys, [FS_MODEL_SWITCH] = switch_keys, [FS_MODEL_GPU] = gpu_keys,
  [FS_MODEL_CPU] = cpu_keys, [FS_MODEL_NIC] = nic_keys,
};

#define FAMILY(f) (1u << (f))

/* ---- typed, range-checked getters ------------------------------------- */

/* An enum value from a name table, with "did you mean" on a miss. */
static gboolean get_enum(const FsYamlNode *node, const char *const *names, const char *what,
                         int *out, GError **error)
{
  const char *s;
  if (!fs_yaml_get_string(node, &s, error))
    return FALSE;
  guint i;
  if (fs_names_index(names, G_MAXUINT, s, &i)) {
    *out = (int)i;
    return TRUE;
  }
  const char *guess = fs_did_you_mean(s, names, -1);
  g_autofree char *list = g_strjoinv(", ", (char **)names);
  if (guess != NULL)
    fs_catalog_error_at(error, node, FS_CATALOG_ERROR_INVALID,
                        "unknown %s \"%s\"; did you mean \"%s\"?", what, s, guess);
  else
    fs_catalog_error_at(error, node, FS_CATALOG_ERROR_INVALID,
                        "unknown %s \"%s\"; expected one of: %s", what, s, list);
  return FALSE;
}

static gboolean out_of_range(const FsYamlNode *node, const char *what, const char *limit,
                             GError **error)
{
  fs_catalog_error_at(error, node, FS_CATALOG_ERROR_INVALID,
                      "%s \"%s\" is out of range (%s)", what, node->value ? node->value : "",
                      limit);
  return FALSE;
}

static gboolean get_bandwidth(const FsYamlNode *node, double *out, GError **error)
{
  if (!fs_yaml_get_bandwidth(node, out, error))
    return FALSE;
  if (!(*out > 0) || *out > MAX_BANDWIDTH)
    return out_of_range(node, "bandwidth", "expected more than 0 and at most 100 TB/s", error);
  return TRUE;
}

static gboolean get_time(const FsYamlNode *node, FsTime *out, GError **error)
{
  if (!fs_yaml_get_time(node, out, error))
    return FALSE;
  if (*out < 0 || *out > MAX_TIME)
    return out_of_range(node, "time", "expected 0 to 1 s", error);
  return TRUE;
}

static gboolean get_power(const FsYamlNode *node, double *out, GError **error)
{
  if (!fs_yaml_get_power(node, out, error))
    return FALSE;
  if (!(*out >= 0) || *out > MAX_POWER)
    return out_of_range(node, "power", "expected 0 to 100 kW", error);
  return TRUE;
}

static gboolean get_count(const FsYamlNode *node, int64_t min, int64_t max, guint *out,
                          GError **error)
{
  int64_t v;
  if (!fs_yaml_get_int(node, min, max, &v, error))
    return FALSE;
  *out = (guint)v;
  return TRUE;
}

/* Optional forms: an absent key leaves *out as it is. */
static gboolean opt_bandwidth(const FsYamlNode *map, const char *key, double *out, GError **error)
{
  const FsYamlNode *n = fs_yaml_map_get(map, key);
  return n == NULL || get_bandwidth(n, out, error);
}

static gboolean opt_power(const FsYamlNode *map, const char *key, double *out, GError **error)
{
  const FsYamlNode *n = fs_yaml_map_get(map, key);
  return n == NULL || get_power(n, out, error);
}

static gboolean opt_count(const FsYamlNode *map, const char *key, int64_t min, int64_t max,
                          guint *out, GError **error)
{
  const FsYamlNode *n = fs_yaml_map_get(map, key);
  return n == NULL || get_count(n, min, max, out, error);
}

static gboolean opt_price(const FsYamlNode *map, double *out, GError **error)
{
  return fs_yaml_opt_double(map, "price", 0, MAX_PRICE, out, error);
}

static gboolean req_time(const FsYamlNode *map, const char *key, const char *what, FsTime *out,
                         GError **error)
{
  const FsYamlNode *n = fs_yaml_require_key(map, key, what, error);
  return n != NULL && get_time(n, out, error);
}

static gboolean req_bandwidth(const FsYamlNode *map, const char *key, const char *what,
                              double *out, GError **error)
{
  const FsYamlNode *n = fs_yaml_require_key(map, key, what, error);
  return n != NULL && get_bandwidth(n, out, error);
}

/* Records a reference to another model (required or optional). */
static gboolean add_ref(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map,
                        const char *key, gboolean required, const char *what,
                        const FsModel **slot, FsModelKind kind, guint families,
                        GError **error)
{
  const FsYamlNode *n = required ? fs_yaml_require_key(map, key, what, error)
                                 : fs_yaml_map_get(map, key);
  if (n == NULL)
    return !required;
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

/* "10de:2330": four hex digits, a colon, four hex digits, lowercase. */
static gboolean valid_pci_id(const char *s)
{
  if (strlen(s) != 9 || s[4] != ':')
    return FALSE;
  for (int i = 0; i < 9; i++)
    if (i != 4 && !(g_ascii_isdigit(s[i]) || (s[i] >= 'a' && s[i] <= 'f')))
      return FALSE;
  return TRUE;
}

/* "GenuineIntel 6 143" (vendor, family, model in decimal) or a machine
 * name of lowercase letters, digits and '_' ("ppc64le", "aarch64"). */
static gboolean valid_cpuid(const char *s)
{
  g_auto(GStrv) w = g_strsplit(s, " ", -1);
  guint n = g_strv_length(w);
  if (n == 1) {
    for (const char *p = s; *p; p++)
      if (!(g_ascii_islower(*p) || g_ascii_isdigit(*p) || *p == '_'))
        return FALSE;
    return *s != '\0';
  }
  if (n != 3 || *w[0] == '\0')
    return FALSE;
  for (guint i = 1; i < 3; i++) {
    if (*w[i] == '\0' || strlen(w[i]) > 4)
      return FALSE;
    for (const char *p = w[i]; *p; p++)
      if (!g_ascii_isdigit(*p))
        return FALSE;
  }
  return TRUE;
}

/* An optional list of strings (key), each checked by valid (may be NULL:
 * any non-empty string without a newline); stored joined by '\n' ("" when
 * absent).  what and example name the expected form in the error. */
static gboolean opt_id_list(FsCatalog *cat, const FsYamlNode *map, const char *key,
                            gboolean (*valid)(const char *), const char *example,
                            const char **out, GError **error)
{
  *out = fs_catalog_intern(cat, "");
  const FsYamlNode *n = fs_yaml_map_get(map, key);
  if (n == NULL)
    return TRUE;
  if (!fs_yaml_require_seq(n, error))
    return FALSE;
  if (n->n == 0) {
    fs_catalog_error_at(error, n, FS_CATALOG_ERROR_INVALID,
                        "\"%s\" is empty; expected a list like [%s]", key, example);
    return FALSE;
  }
  GString *joined = g_string_new(NULL);
  for (guint i = 0; i < n->n; i++) {
    const char *v;
    if (!fs_yaml_get_string(n->values[i], &v, error)) {
      g_string_free(joined, TRUE);
      return FALSE;
    }
    if (*v == '\0' || strchr(v, '\n') != NULL || (valid != NULL && !valid(v))) {
      fs_catalog_error_at(error, n->values[i], FS_CATALOG_ERROR_INVALID,
                          "\"%s\" in \"%s\" is not of the form %s", v, key, example);
      g_string_free(joined, TRUE);
      return FALSE;
    }
    g_string_append_printf(joined, "%s%s", i ? "\n" : "", v);
  }
  *out = fs_catalog_intern(cat, joined->str);
  g_string_free(joined, TRUE);
  return TRUE;
}

/* pci_ids and product_names (GPUs, CPUs, NICs), cpuid (CPUs). */
static gboolean parse_ids(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map,
                          GError **error)
{
  FsModelIds *ids = &e->m.ids;
  if (!opt_id_list(cat, map, "pci_ids", valid_pci_id, "\"10de:2330\" (vendor:device, lowercase hex)",
                   &ids->pci_ids, error) ||
      !opt_id_list(cat, map, "product_names", NULL, "\"NVIDIA H100 80GB HBM3\"",
                   &ids->product_names, error))
    return FALSE;
  if (e->m.kind != FS_MODEL_CPU) {
    ids->cpuid = fs_catalog_intern(cat, "");
    return TRUE;
  }
  return opt_id_list(cat, map, "cpuid", valid_cpuid,
                     "\"GenuineIntel 6 143\" (vendor, family, model) or a machine name "
                     "(\"ppc64le\")", &ids->cpuid, error);
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

/* Parses the link fields into e; *widths receives the `widths:` list (or
 * NULL) for the caller to expand. */
static gboolean parse_link(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map,
                           GArray **widths, GError **error)
{
  FsLinkModel *l = &e->m.u.link;
  int family;
  const FsYamlNode *n = fs_yaml_require_key(map, "family", "link model", error);
  if (n == NULL || !get_enum(n, fs_link_family_names, "link family", &family, error))
    return FALSE;
  l->family = (FsLinkFamily)family;
  const char *generation = "";
  if (!fs_yaml_opt_string(map, "generation", &generation, error))
    return FALSE;
  l->generation = fs_catalog_intern(cat, generation);
  if (!req_time(map, "latency", "link model", &l->latency, error))
    return FALSE;

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
    if (!get_bandwidth(bw, &b, error))
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
    if (!fs_yaml_get_lane_rate(rate, &l->lane_rate, error))
      return FALSE;
    if (!(l->lane_rate > 0) || l->lane_rate > MAX_LANE_RATE)
      return out_of_range(rate, "lane rate", "expected more than 0 and at most 1 Tb/s", error);
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
    if (lanes != NULL && !get_count(lanes, 1, MAX_LANES, &l->lanes, error))
      return FALSE;
    if (wlist != NULL) {
      if (!fs_yaml_require_seq(wlist, error))
        return FALSE;
      if (wlist->n == 0) {
        fs_catalog_error_at(error, wlist, FS_CATALOG_ERROR_INVALID,
                            "\"widths\" is empty; expected lane counts like [1, 2, 4, 8, 16]");
        return FALSE;
      }
      *widths = g_array_new(FALSE, FALSE, sizeof(guint));
      for (guint i = 0; i < wlist->n; i++) {
        guint w;
        if (!get_count(wlist->values[i], 1, MAX_LANES, &w, error))
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
      const char *text;
      if (!parse_encoding(cat, enc, &l->encoding, &l->encoding_ratio, error) ||
          !fs_yaml_get_string(enc, &text, error))
        return FALSE;
      l->encoding_name = fs_catalog_intern(cat, text);
    }
  }
  const char *ename = NULL;
  if (!fs_yaml_opt_string(map, "encoding_name", &ename, error))
    return FALSE;
  if (ename != NULL)
    l->encoding_name = fs_catalog_intern(cat, ename);

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
    if (!fs_yaml_get_size(mp, &p, error) || !fs_yaml_get_size(oh, &o, error))
      return FALSE;
    if (p < 1 || p > MAX_PAYLOAD)
      return out_of_range(mp, "max_payload", "expected 1 B to 1 MiB", error);
    if (o > MAX_OVERHEAD)
      return out_of_range(oh, "tlp_overhead", "expected 0 to 64 KiB", error);
    l->max_payload = (uint32_t)p;
    l->tlp_overhead = (uint32_t)o;
  } else if (ef != NULL) {
    double v;
    if (!fs_yaml_get_double(ef, 0, 1, &v, error))
      return FALSE;
    if (!(v > 0))
      return out_of_range(ef, "efficiency", "expected more than 0 and at most 1", error);
    l->efficiency = v;
  }
  link_derive(l);
  if (l->raw_bandwidth > MAX_BANDWIDTH) {
    fs_catalog_error_at(error, rate ? rate : map, FS_CATALOG_ERROR_INVALID,
                        "the link's raw bandwidth comes to %g B/s, beyond 100 TB/s; "
                        "check the units of \"lane_rate\"", l->raw_bandwidth);
    return FALSE;
  }
  return TRUE;
}

/* ---- switches, GPUs, CPUs, NICs ---------------------------------------- */

/* Fills the switch model of e from its YAML map: kind, port count and port link (which must be
 * of the switch's link family), latency, optional in-switch reduction, power, price and PCIe
 * lanes. Sets a catalog error at the offending node, for example reduction_bandwidth without
 * reduction or lanes on a switch that is not PCIe, and returns FALSE on one. */
static gboolean parse_switch(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map,
                             GError **error)
{
  FsSwitchModel *s = &e->m.u.sw;
  int kind;
  const FsYamlNode *n = fs_yaml_require_key(map, "switch_kind", "switch model", error);
  if (n == NULL || !get_enum(n, fs_switch_kind_names, "switch kind", &kind, error))
    return FALSE;
  s->kind = (FsSwitchKind)kind;
  n = fs_yaml_require_key(map, "ports", "switch model", error);
  if (n == NULL || !get_count(n, 1, 4096, &s->ports, error))
    return FALSE;
  guint families = 0;
  switch (s->kind) {
  case FS_SWITCH_NVSWITCH: families = FAMILY(FS_LINK_NVLINK); break;
  case FS_SWITCH_PCIE: families = FAMILY(FS_LINK_PCIE); break;
  case FS_SWITCH_INFINIBAND: families = FAMILY(FS_LINK_INFINIBAND); break;
  case FS_SWITCH_ETHERNET: families = FAMILY(FS_LINK_ETHERNET); break;
  default: break;
  }
  if (!add_ref(cat, e, map, "port_link", TRUE, "switch model", &s->port_link, FS_MODEL_LINK,
               families, error) ||
      !req_time(map, "latency", "switch model", &s->latency, error) ||
      !fs_yaml_opt_bool(map, "reduction", &s->reduction, error) ||
      !opt_bandwidth(map, "reduction_bandwidth", &s->reduction_bandwidth, error) ||
      !opt_power(map, "power", &s->power, error) || !opt_price(map, &s->price, error) ||
      !opt_count(map, "lanes", 1, 4096, &s->lanes, error))
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

/* Fills the GPU model of e from its YAML map: architecture, FLOP rate per datatype, memory and
 * its bandwidth, NVLink and host links, TDP, price, launch latency and SM count, and the
 * identification keys (compute capability "9.0", form factor, reference CPU and NIC). Links
 * and references are resolved through add_ref(). Sets a catalog error at the offending node
 * and returns FALSE on the first bad key. */
static gboolean parse_gpu(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map,
                          GError **error)
{
  FsGpuModel *g = &e->m.u.gpu;
  int arch;
  const FsYamlNode *n = fs_yaml_require_key(map, "arch", "gpu model", error);
  if (n == NULL || !get_enum(n, fs_gpu_arch_names, "GPU architecture", &arch, error))
    return FALSE;
  g->arch = (FsGpuArch)arch;

  const FsYamlNode *fl = fs_yaml_require_key(map, "flops", "gpu model", error);
  if (fl == NULL || !fs_yaml_require_map(fl, error) ||
      !fs_yaml_check_keys(fl, fs_dtype_names, "flops", error))
    return FALSE;
  if (fl->n == 0) {
    fs_catalog_error_at(error, fl, FS_CATALOG_ERROR_INVALID,
                        "\"flops\" lists no datatype; expected e.g. \"bf16: 989.4 TFLOP/s\"");
    return FALSE;
  }
  for (guint i = 0; i < fl->n; i++) {
    FsDtype d;
    if (!fs_dtype_from_name(fl->keys[i]->value, &d))
      g_assert_not_reached(); /* fs_yaml_check_keys let only dtype names through */
    if (!fs_yaml_get_flops(fl->values[i], &g->flops[d], error))
      return FALSE;
    if (!(g->flops[d] >= 0) || g->flops[d] > MAX_FLOPS)
      return out_of_range(fl->values[i], "FLOP rate", "expected 0 to 1 EFLOP/s", error);
  }

  n = fs_yaml_require_key(map, "memory", "gpu model", error);
  if (n == NULL || !fs_yaml_get_size(n, &g->memory, error))
    return FALSE;
  if (g->memory < 1 || g->memory > MAX_MEMORY)
    return out_of_range(n, "memory", "expected 1 B to 1 PiB", error);
  if (!req_bandwidth(map, "memory_bandwidth", "gpu model", &g->memory_bandwidth, error) ||
      !add_ref(cat, e, map, "nvlink", FALSE, "gpu model", &g->nvlink, FS_MODEL_LINK,
               FAMILY(FS_LINK_NVLINK), error) ||
      !opt_count(map, "nvlinks", 0, 64, &g->nvlinks, error) ||
      !check_nvlink_pair(map, g->nvlinks, error) ||
      !add_ref(cat, e, map, "pcie", TRUE, "gpu model", &g->pcie, FS_MODEL_LINK,
               FAMILY(FS_LINK_PCIE), error) ||
      !add_ref(cat, e, map, "c2c", FALSE, "gpu model", &g->c2c, FS_MODEL_LINK,
               FAMILY(FS_LINK_C2C), error))
    return FALSE;
  n = fs_yaml_require_key(map, "tdp", "gpu model", error);
  if (n == NULL || !get_power(n, &g->tdp, error) || !opt_price(map, &g->price, error) ||
      !req_time(map, "launch_latency", "gpu model", &g->launch_latency, error))
    return FALSE;
  n = fs_yaml_require_key(map, "sms", "gpu model", error);
  g->memory_efficiency = 1; /* until a calibration says otherwise */
  if (n == NULL || !get_count(n, 1, 100000, &g->sms, error))
    return FALSE;
  /* Identification: compute capability "9.0", form factor, reference host. */
  const FsYamlNode *cc = fs_yaml_map_get(map, "compute_capability");
  if (cc != NULL) {
    const char *v;
    guint major, minor;
    char tail;
    if (!fs_yaml_get_string(cc, &v, error))
      return FALSE;
    if (sscanf(v, "%2u.%1u%c", &major, &minor, &tail) != 2 || major == 0) {
      fs_catalog_error_at(error, cc, FS_CATALOG_ERROR_INVALID,
                          "compute capability \"%s\" is not of the form \"9.0\"", v);
      return FALSE;
    }
    g->compute_capability = major * 10 + minor;
  }
  static const char *const form_factors[] = {"sxm", "pcie", "superchip", NULL};
  const FsYamlNode *ff = fs_yaml_map_get(map, "form_factor");
  int form = -1;
  if (ff != NULL && !get_enum(ff, form_factors, "form factor", &form, error))
    return FALSE;
  g->form_factor = fs_catalog_intern(cat, form >= 0 ? form_factors[form] : "");
  return add_ref(cat, e, map, "reference_cpu", FALSE, "gpu model", &g->reference_cpu,
                 FS_MODEL_CPU, 0, error) &&
         add_ref(cat, e, map, "reference_nic", FALSE, "gpu model", &g->reference_nic,
                 FS_MODEL_NIC, 0, error);
}

static gboolean parse_cpu(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map,
                          GError **error)
{
  FsCpuModel *c = &e->m.u.cpu;
  int vendor;
  const FsYamlNode *n = fs_yaml_require_key(map, "vendor", "cpu model", error);
  if (n == NULL || !get_enum(n, fs_cpu_vendor_names, "CPU vendor", &vendor, error))
    return FALSE;
  c->vendor = (FsCpuVendor)vendor;
  n = fs_yaml_require_key(map, "pcie_lanes", "cpu model", error);
  if (n == NULL || !get_count(n, 0, 1024, &c->pcie_lanes, error) ||
      !add_ref(cat, e, map, "pcie", TRUE, "cpu model", &c->pcie, FS_MODEL_LINK,
               FAMILY(FS_LINK_PCIE), error) ||
      !add_ref(cat, e, map, "intersocket", FALSE, "cpu model", &c->intersocket, FS_MODEL_LINK,
               FAMILY(FS_LINK_INTERSOCKET) | FAMILY(FS_LINK_C2C), error) ||
      !opt_count(map, "intersocket_links", 0, 64, &c->intersocket_links, error) ||
      !req_bandwidth(map, "memory_bandwidth", "cpu model", &c->memory_bandwidth, error) ||
      !add_ref(cat, e, map, "nvlink", FALSE, "cpu model", &c->nvlink, FS_MODEL_LINK,
               FAMILY(FS_LINK_NVLINK), error) ||
      !opt_count(map, "nvlinks", 0, 64, &c->nvlinks, error) ||
      !check_nvlink_pair(map, c->nvlinks, error) ||
      !opt_power(map, "tdp", &c->tdp, error) || !opt_price(map, &c->price, error) ||
      !req_time(map, "root_latency", "cpu model", &c->root_latency, error) ||
      !opt_bandwidth(map, "root_bandwidth", &c->root_bandwidth, error))
    return FALSE;
  const FsYamlNode *links = fs_yaml_map_get(map, "intersocket_links");
  if (links != NULL && c->intersocket_links > 0 && fs_yaml_map_get(map, "intersocket") == NULL) {
    fs_catalog_error_at(error, links, FS_CATALOG_ERROR_INVALID,
                        "\"intersocket_links\" needs \"intersocket\" (the link model)");
    return FALSE;
  }
  if (fs_yaml_map_get(map, "intersocket") != NULL && links == NULL)
    c->intersocket_links = 1;
  return opt_count(map, "cores", 1, 4096, &c->cores, error) &&
         opt_count(map, "threads_per_core", 1, 16, &c->threads_per_core, error);
}

static gboolean parse_nic(FsCatalog *cat, FsCatalogEntry *e, const FsYamlNode *map,
                          GError **error)
{
  FsNicModel *c = &e->m.u.nic;
  c->ports = 1;
  return add_ref(cat, e, map, "port_link", TRUE, "nic model", &c->port_link, FS_MODEL_LINK,
                 FAMILY(FS_LINK_INFINIBAND) | FAMILY(FS_LINK_ETHERNET), error) &&
         opt_count(map, "ports", 1, 64, &c->ports, error) &&
         add_ref(cat, e, map, "pcie", TRUE, "nic model", &c->pcie, FS_MODEL_LINK,
                 FAMILY(FS_LINK_PCIE), error) &&
         req_time(map, "latency", "nic model", &c->latency, error) &&
         fs_yaml_opt_bool(map, "gpudirect", &c->gpudirect, error) &&
         opt_power(map, "power", &c->power, error) && opt_price(map, &c->price, error);
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

/* Parses one list item into one entry (or several, for `widths:`). */
static gboolean parse_entry(FsCatalog *cat, const char *file, const FsYamlNode *item,
                            GPtrArray *batch, GError **error)
{
  if (!fs_yaml_require_map(item, error))
    return FALSE;
  const FsYamlNode *n = fs_yaml_require_key(item, "name", "model", error);
  const char *name;
  if (n == NULL || !fs_yaml_get_string(n, &name, error))
    return FALSE;
  if (!valid_name(name)) {
    fs_catalog_error_at(error, n, FS_CATALOG_ERROR_INVALID,
                        "model name \"%s\" must be lowercase letters, digits and dashes "
                        "(e.g. \"pcie-gen4-x16\")", name);
    return FALSE;
  }
  int kind;
  n = fs_yaml_require_key(item, "kind", "model", error);
  if (n == NULL || !get_enum(n, fs_model_kind_names, "model kind", &kind, error))
    return FALSE;
  g_autofree char *what = g_strdup_printf("%s model", fs_model_kind_names[kind]);
  if (!fs_yaml_check_keys(item, keys_by_kind[kind], what, error))
    return FALSE;

  const char *source, *description = "";
  n = fs_yaml_require_key(item, "source", what, error);
  if (n == NULL || !fs_yaml_get_string(n, &source, error) ||
      !fs_yaml_opt_string(item, "description", &description, error))
    return FALSE;
  g_autofree char *trimmed = g_strstrip(g_strdup(source));
  if (trimmed[0] == '\0') {
    fs_catalog_error_at(error, n, FS_CATALOG_ERROR_INVALID,
                        "empty \"source\"; every model must say where its figures come from");
    return FALSE;
  }

  FsCatalogEntry *e = g_new0(FsCatalogEntry, 1);
  g_ptr_array_add(batch, e);
  e->m.kind = (FsModelKind)kind;
  e->m.name = fs_catalog_intern(cat, name);
  e->m.description = fs_catalog_intern(cat, description);
  e->m.source = fs_catalog_intern(cat, trimmed);
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
    ok = parse_ids(cat, e, item, error);
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
  static const char *const top_keys[] = {"models", NULL};
  if (!fs_yaml_require_map(root, error) ||
      !fs_yaml_check_keys(root, top_keys, "models file", error))
    return FALSE;
  const FsYamlNode *list = fs_yaml_require_key(root, "models", "models file", error);
  if (list == NULL || !fs_yaml_require_seq(list, error))
    return FALSE;
  for (guint i = 0; i < list->n; i++)
    if (!parse_entry(cat, file, list->values[i], batch, error))
      return FALSE;
  return TRUE;
}
