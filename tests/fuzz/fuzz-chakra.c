/* fuzz-chakra.c — libFuzzer driver for the Chakra trace reader
 * (src/workload/chakra) on the DGX H100 topology.
 *
 * The bytes are one rank's trace: named "fuzz.0.json" when they start
 * with '{' (the JSON forms), "fuzz.txt" when their first non-blank byte is
 * an upper-case letter (an ASTRA-sim text workload, read on every GPU),
 * else "fuzz.0.et" (length-delimited protobuf messages, decoded by
 * protoc-c's code).  Promises checked: a rejection is one line in
 * FS_WORKLOAD_ERROR starting with the name (at LINE:COL for the text
 * form); an accepted trace has one rank (a text workload: one per GPU), at
 * least one op and per-rank tables; traces of at most 16 ops are then run,
 * which ends or fails with a deadlock report or a one-line error.  Corpus:
 * the files of tests/data/chakra/.
 */
#include "fuzz-world.h"
#include "workload/chakra/chakra.h"
#define MAX_RUN_OPS 16

/* Runs the loaded trace; checks how a run that does not end fails. */
static void run(FsReplay *rp)
{
  GError *error = NULL;
  if (fs_fuzz_run_graph(rp->graph, &error))
    return;
  if (!g_error_matches(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_DEADLOCK))
    fs_fuzz_check_one_line(error);
  g_error_free(error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const FsTopo *topo = fs_fuzz_world()->topo;
  FsEfficiency *eff = fs_fuzz_world()->eff;
  size_t first = 0;
  while (first < size && g_ascii_isspace(data[first]))
    first++;
  gboolean text = first < size && g_ascii_isupper(data[first]);
  const char *name = size > 0 && data[0] == '{' ? "fuzz.0.json" : text ? "fuzz.txt" : "fuzz.0.et";
  const char *names[] = { name };
  const guint8 *bufs[] = { data };
  gsize lens[] = { size };
  FsChakraOptions opt = { size % 2 == 1 }; /* both ways of meeting unknown nodes */
  GError *error = NULL;
  FsReplay *rp = fs_chakra_load_buffers(names, bufs, lens, 1, topo, eff, &opt, NULL, &error);
  if (rp == NULL) {
    if (text)
      fs_fuzz_check_error_at(error, name);
    else
      fs_fuzz_check_one_line(error);
    if (error->domain != FS_WORKLOAD_ERROR || !g_str_has_prefix(error->message, name))
      fs_fuzz_fail("a rejection is not a workload error naming %s: %s", name, error->message);
    g_error_free(error);
    return 0;
  }
  if (error != NULL)
    fs_fuzz_fail("the load succeeded but set an error: %s", error->message);
  guint ngpu, want = 1;
  fs_topo_gpus(topo, &ngpu);
  if (text)
    want = ngpu;
  if (rp->n_ranks != want || rp->rank_ops == NULL || rp->rank_ops->len != want ||
      rp->compute_stream == NULL || fs_opgraph_n_ops(rp->graph) == 0)
    fs_fuzz_fail("an accepted trace has %u ranks and %u ops", rp->n_ranks,
                 fs_opgraph_n_ops(rp->graph));
  if (fs_opgraph_n_ops(rp->graph) <= MAX_RUN_OPS)
    run(rp);
  fs_replay_free(rp);
  return 0;
}
