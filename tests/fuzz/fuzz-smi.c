/* fuzz-smi.c — libFuzzer driver for the `nvidia-smi topo -m` importer
 * (src/topo/import-smi*.c); promises in fuzz-import.h.  Corpus: tests/data/smi/. */
#include "fuzz-import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_import(fs_import_smi, data, size);
  return 0;
}
