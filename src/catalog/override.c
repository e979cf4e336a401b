/* override.c — the setters through which a calibration changes a loaded
 * catalog (see "Calibration overrides" in catalog.h).
 *
 * Models live inside FsCatalogEntry records owned by the catalog; the
 * const FsModel pointers handed out elsewhere point into them, so a
 * setter changes the model in place and every holder sees the new figure.
 * Provenance is kept per model as "field: note" items joined by "; ".
 */
#include <string.h>

#include "catalog/catalog-private.h"

/* The largest time a setter accepts: 1 s, as the loader's limit. */
#define MAX_OVERRIDE_TIME ((FsTime)1000000000000LL)

/* The entry named name of the given kind, or NULL with an error. */
static FsModel *mutable_model(FsCatalog *cat, const char *name, FsModelKind kind, GError **error)
{
  const FsModel *m = fs_catalog_require(cat, name, kind, error);
  /* The catalog owns the entry; handing out const is a convention of the
   * read-only API, which the setters are the one exception to. */
  return (FsModel *)m;
}

/* Appends "field: note" to the model's calibration string; a field with
 * the same note as the last item joins it ("a, b: note").  A NULL note
 * records nothing (a fitter trying values). */
static void note_override(FsCatalog *cat, FsModel *m, const char *field, const char *note)
{
  if (note == NULL)
    return;
  g_autofree char *tail = g_strdup_printf(": %s", note);
  g_autofree char *joined = NULL;
  if (m->calibration == NULL) {
    joined = g_strdup_printf("%s%s", field, tail);
  } else if (g_str_has_suffix(m->calibration, tail)) {
    gsize keep = strlen(m->calibration) - strlen(tail);
    joined = g_strdup_printf("%.*s, %s%s", (int)keep, m->calibration, field, tail);
  } else {
    joined = g_strdup_printf("%s; %s%s", m->calibration, field, tail);
  }
  m->calibration = fs_catalog_intern(cat, joined);
}

static gboolean check_fraction(const char *name, const char *field, double v, GError **error)
{
  if (v > 0 && v <= 1)
    return TRUE;
  g_set_error(error, FS_CATALOG_ERROR, FS_CATALOG_ERROR_INVALID,
              "%s: %s %g is out of range; expected more than 0 and at most 1", name, field, v);
  return FALSE;
}

static gboolean check_time(const char *name, const char *field, FsTime t, GError **error)
{
  if (t >= 0 && t <= MAX_OVERRIDE_TIME)
    return TRUE;
  g_set_error(error, FS_CATALOG_ERROR, FS_CATALOG_ERROR_INVALID,
              "%s: %s of %" G_GINT64_FORMAT " ps is out of range; expected 0 to 1 s", name, field,
              (gint64)t);
  return FALSE;
}

gboolean fs_catalog_set_link_efficiency(FsCatalog *cat, const char *link, double efficiency,
                                        const char *note, GError **error)
{
  g_return_val_if_fail(cat != NULL && link != NULL, FALSE);
  FsModel *m = mutable_model(cat, link, FS_MODEL_LINK, error);
  if (m == NULL || !check_fraction(link, "efficiency", efficiency, error))
    return FALSE;
  FsLinkModel *l = &m->u.link;
  /* The measured fraction replaces the TLP model, whose inputs would
   * otherwise be printed next to a figure they no longer produce. */
  l->max_payload = 0;
  l->tlp_overhead = 0;
  l->efficiency = efficiency;
  l->bandwidth = l->raw_bandwidth * efficiency;
  note_override(cat, m, "efficiency", note);
  return TRUE;
}

gboolean fs_catalog_set_gpu_launch_latency(FsCatalog *cat, const char *gpu, FsTime t,
                                           const char *note, GError **error)
{
  g_return_val_if_fail(cat != NULL && gpu != NULL, FALSE);
  FsModel *m = mutable_model(cat, gpu, FS_MODEL_GPU, error);
  if (m == NULL || !check_time(gpu, "launch_latency", t, error))
    return FALSE;
  m->u.gpu.launch_latency = t;
  note_override(cat, m, "launch_latency", note);
  return TRUE;
}

gboolean fs_catalog_set_gpu_memory_efficiency(FsCatalog *cat, const char *gpu, double efficiency,
                                              const char *note, GError **error)
{
  g_return_val_if_fail(cat != NULL && gpu != NULL, FALSE);
  FsModel *m = mutable_model(cat, gpu, FS_MODEL_GPU, error);
  if (m == NULL || !check_fraction(gpu, "memory_efficiency", efficiency, error))
    return FALSE;
  m->u.gpu.memory_efficiency = efficiency;
  note_override(cat, m, "memory_efficiency", note);
  return TRUE;
}

gboolean fs_catalog_set_gpu_copy_latency(FsCatalog *cat, const char *gpu, FsTime t,
                                         const char *note, GError **error)
{
  g_return_val_if_fail(cat != NULL && gpu != NULL, FALSE);
  FsModel *m = mutable_model(cat, gpu, FS_MODEL_GPU, error);
  if (m == NULL || !check_time(gpu, "copy_latency", t, error))
    return FALSE;
  m->u.gpu.copy_latency = t;
  note_override(cat, m, "copy_latency", note);
  return TRUE;
}
