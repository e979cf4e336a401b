/* fuzz-trace.c — libFuzzer driver for the replay trace loader
 * (src/workload/replay.c) on the DGX H100 topology.
 *
 * The bytes go to fs_replay_load_string named "fuzz.json".  Promises
 * checked: a rejection is one line in FS_WORKLOAD_ERROR starting
 * "fuzz.json:LINE:COL: "; an accepted trace has 1 to 8 ranks, at least one
 * op, and per-rank tables of that size.  Traces of at most 16 ops are then
 * run as `fabricsim replay` runs them: the run ends, or fails with a
 * deadlock report naming ranks and ops (several lines: one per stuck op)
 * or a one-line error.  Corpus: tests/data/replay/.
 */
#include "fuzz-world.h"
#include "workload/replay.h"

#define INPUT_NAME "fuzz.json"
#define MAX_RUN_OPS 16

/* Runs the loaded trace; checks how a run that does not end fails. */
static void run(FsReplay *rp)
{
  GError *error = NULL;
  if (fs_fuzz_run_graph(rp->graph, &error))
    return;
  /* A deadlock report lists the stuck ops one per line; other failures
   * are one line. */
  if (g_error_matches(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_DEADLOCK)) {
    if (strstr(error->message, "rank ") == NULL || strstr(error->message, " op ") == NULL)
      fs_fuzz_fail("a deadlock report names no rank or op: %s", error->message);
  } else {
    fs_fuzz_check_one_line(error);
  }
  g_error_free(error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const FsTopo *topo = fs_fuzz_world()->topo;
  FsEfficiency *eff = fs_fuzz_world()->eff;
  g_autofree char *text = fs_fuzz_text(data, size);
  GError *error = NULL;
  FsReplay *rp = fs_replay_load_string(text, INPUT_NAME, topo, eff, &error);
  if (rp == NULL) {
    fs_fuzz_rejected(error, INPUT_NAME, FS_WORKLOAD_ERROR, 0, "trace");
    return 0;
  }
  if (error != NULL)
    fs_fuzz_fail("the load succeeded but set an error: %s", error->message);
  guint ngpu;
  fs_topo_gpus(topo, &ngpu);
  if (rp->n_ranks < 1 || rp->n_ranks > ngpu || rp->rank_ops == NULL ||
      rp->rank_ops->len != rp->n_ranks || rp->compute_stream == NULL)
    fs_fuzz_fail("an accepted trace has %u ranks and %u rank tables", rp->n_ranks,
                 rp->rank_ops ? rp->rank_ops->len : 0);
  if (fs_opgraph_n_ops(rp->graph) == 0)
    fs_fuzz_fail("an accepted trace has no op");
  if (fs_opgraph_n_ops(rp->graph) <= MAX_RUN_OPS)
    run(rp);
  fs_replay_free(rp);
  return 0;
}
