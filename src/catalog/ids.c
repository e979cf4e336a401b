/* ids.c — tests of a model's identification lists (`pci_ids`,
 * `product_names`, `cpuid`; models/README.md), for the importers'
 * hardware identification (src/topo/identify.c).  Each list is stored as
 * its items joined by '\n' (FsModelIds). */
#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"

char *fs_model_name_normalize(const char *name)
{
  GString *s = g_string_new(NULL);
  for (const char *p = name; *p; p++) {
    char c = g_ascii_tolower(*p);
    if (c == '-' || c == '_' || g_ascii_isspace(c))
      c = ' ';
    if (c == ' ' && (s->len == 0 || s->str[s->len - 1] == ' '))
      continue;
    g_string_append_c(s, c);
  }
  while (s->len > 0 && s->str[s->len - 1] == ' ')
    g_string_truncate(s, s->len - 1);
  for (gboolean again = TRUE; again;) {
    again = FALSE;
    static const char *const prefixes[] = {"nvidia ", "tesla "};
    for (gsize i = 0; i < G_N_ELEMENTS(prefixes); i++)
      if (g_str_has_prefix(s->str, prefixes[i])) {
        g_string_erase(s, 0, (gssize)strlen(prefixes[i]));
        again = TRUE;
      }
  }
  return g_string_free(s, FALSE);
}

/* Calls match(item, data) for each '\n'-separated item of list until one
 * returns TRUE. */
static gboolean any_item(const char *list, gboolean (*match)(const char *item, gpointer data),
                         gpointer data)
{
  if (list == NULL || *list == '\0')
    return FALSE;
  g_auto(GStrv) items = g_strsplit(list, "\n", -1);
  for (guint i = 0; items[i] != NULL; i++)
    if (match(items[i], data))
      return TRUE;
  return FALSE;
}

static gboolean match_pci(const char *item, gpointer data)
{
  const guint *want = data;
  guint v, d;
  char tail;
  return sscanf(item, "%4x:%4x%c", &v, &d, &tail) == 2 && v == want[0] && d == want[1];
}

gboolean fs_model_has_pci_id(const FsModel *m, guint vendor, guint device)
{
  guint want[2] = {vendor, device};
  return any_item(m->ids.pci_ids, match_pci, want);
}

static gboolean match_name(const char *item, gpointer data)
{
  g_autofree char *n = fs_model_name_normalize(item);
  return strcmp(n, data) == 0;
}

gboolean fs_model_has_product_name(const FsModel *m, const char *name)
{
  g_autofree char *want = fs_model_name_normalize(name);
  return *want != '\0' && any_item(m->ids.product_names, match_name, want);
}

typedef struct {
  const char *vendor;
  int family, model;
} CpuidWant;

static gboolean match_cpuid(const char *item, gpointer data)
{
  const CpuidWant *w = data;
  char vendor[32];
  int fam, mod;
  if (sscanf(item, "%31s %d %d", vendor, &fam, &mod) == 3)
    return w->family >= 0 && strcmp(vendor, w->vendor) == 0 && fam == w->family &&
           mod == w->model;
  return w->family < 0 && strcmp(item, w->vendor) == 0;
}

gboolean fs_model_has_cpuid(const FsModel *m, const char *vendor, int family, int model)
{
  CpuidWant w = {vendor, family, model};
  return vendor != NULL && any_item(m->ids.cpuid, match_cpuid, &w);
}
