/* fuzz-import.h — the body shared by the two topology importer drivers
 * (fuzz-smi.c, fuzz-nccl-xml.c): import the bytes with fn over the real
 * catalog; an error must be one line in FS_TOPO_ERROR naming the input;
 * an import must be topology YAML that fs_topo_load_string accepts (the
 * importers promise to return only loadable output). */
#pragma once

#include "catalog/catalog.h"
#include "fuzz-common.h"
#include "topo/import.h"
#include "topo/topo.h"

typedef char *(*ImportFn)(const char *, gsize, const char *, const FsCatalog *,
                          const FsImportOptions *, GError **);

static const FsCatalog *import_catalog(void)
{
  static FsCatalog *cat;
  if (cat == NULL) {
    GError *error = NULL;
    cat = fs_catalog_load_default(NULL, &error);
    if (cat == NULL)
      fs_fuzz_fail("cannot load the catalog: %s", error->message);
  }
  return cat;
}

static void fuzz_import(ImportFn fn, const uint8_t *data, size_t size)
{
  const FsCatalog *cat = import_catalog();
  GError *error = NULL;
  FsImportOptions opt = {.gpu = NULL, .nic = NULL, .cpu = NULL};
  char *yaml = fn((const char *)data, size, FS_FUZZ_NAME, cat, &opt, &error);
  if (yaml == NULL) {
    fs_fuzz_check_input_error(error, FS_FUZZ_NAME);
    g_error_free(error);
    return;
  }
  if (error != NULL)
    fs_fuzz_fail("the import succeeded but set an error: %s", error->message);
  FsTopo *topo = fs_topo_load_string(yaml, "imported.yaml", cat, NULL, &error);
  if (topo == NULL)
    fs_fuzz_fail("the imported topology does not load: %s\n%s", error->message, yaml);
  fs_topo_free(topo);
  g_free(yaml);
}
