/* fuzz-nccl-xml.c — libFuzzer driver for the NCCL topology XML importer
 * (src/topo/import-nccl.c); promises in fuzz-import.h.  Corpus:
 * tests/data/nccl-xml/. */
#include "fuzz-import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_import(fs_import_nccl, data, size);
  return 0;
}
