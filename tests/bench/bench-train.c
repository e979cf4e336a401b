/* bench-train.c — simulator speed and memory for whole training steps.
 *
 *   bench-train [SCENARIO]
 *     gpt3-1k    GPT-3 175B on 1,024 H100 (128 DGX H100 on IB NDR, rail-
 *                optimized), TP 8 PP 8 DP 16, 1F1B, maxmin contention.
 *                Target: < 5 s wall, < 2 GiB RSS.
 *     llama-16k  Llama 3.1 405B on 16,384 H100 (2,048 DGX H100),
 *                TP 8 PP 16 DP 128, 1F1B, 128 layers (Meta ran 126 on 16
 *                uneven stages; fabricsim splits layers evenly).  Target: < 60 s, < 8 GiB.
 *     small      Llama 2 7B on one DGX H100 (a quick check).
 *   Options after the scenario: --dp-isolated (data-parallel collectives
 *   timed alone), --analytic (the analytic flow model), --coll-classes=MODE
 *   (auto, on, off: congruent groups share a measurement, executor.h),
 *   --exec=MODE (steps, streams, auto: how collectives run, collrun/streams.h).
 *
 * Prints one line: scenario, mode, gpus, step time (simulated), ops,
 * the memo of collectives timed alone (entries, of them congruence
 * classes; hits, of them on classes), CPU seconds, wall seconds (load, build, run), peak RSS MiB.  Exits 1 if a run fails.
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "catalog/catalog.h"
#include "coll/nccl-params.h"
#include "compute/efficiency.h"
#include "scenario/scenario.h"
#include "topo/topo.h"
#include "util/units.h"
#include "workload/executor.h"

static double peak_rss_mib(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;
}

int main(int argc, char **argv)
{
  const char *sc = argc > 1 ? argv[1] : "gpt3-1k";
  FsTrainOptions opt;
  fs_train_options_init(&opt);
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--dp-isolated") == 0)
      opt.dp_isolated = TRUE;
    else if (strcmp(argv[i], "--analytic") == 0)
      opt.net_model = FS_NET_ANALYTIC;
    else if (g_str_has_prefix(argv[i], "--exec=")) {
      if (!fs_coll_exec_from_name(argv[i] + strlen("--exec="), &opt.exec)) {
        fprintf(stderr, "bench-train: --exec takes steps, streams or auto\n");
        return 2;
      }
    } else if (!g_str_has_prefix(argv[i], "--coll-classes=") ||
             !fs_coll_classes_from_name(argv[i] + strlen("--coll-classes="), &opt.coll_classes)) {
      fprintf(stderr, "bench-train: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  const char *topo_file, *wl_file, *nodes;
  const char *ov[8] = { NULL };
  if (strcmp(sc, "gpt3-1k") == 0) {
    topo_file = "topologies/dgx-h100-ib-ndr.yaml";
    nodes = "nodes=128";
    wl_file = "workloads/gpt3-175b.yaml";
    ov[0] = "--tp=8"; ov[1] = "--pp=8";
  } else if (strcmp(sc, "llama-16k") == 0) {
    topo_file = "topologies/dgx-h100-ib-ndr.yaml";
    nodes = "nodes=2048";
    wl_file = "workloads/llama3.1-405b.yaml";
    ov[0] = "--tp=8"; ov[1] = "--pp=16"; ov[2] = "parallel.schedule=1f1b";
    ov[3] = "--num-layers=128"; /* 126 layers do not split over 16 even stages */
  } else if (strcmp(sc, "small") == 0) {
    topo_file = "topologies/dgx-h100.yaml";
    nodes = NULL;
    wl_file = "workloads/llama2-7b.yaml";
  } else {
    fprintf(stderr, "usage: bench-train [gpt3-1k|llama-16k|small]\n");
    return 2;
  }
  GError *err = NULL;
  gint64 t0 = g_get_monotonic_time();
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(NULL, &err);
  g_autofree char *tpath = g_build_filename(FS_SOURCE_DATA_DIR, topo_file, NULL);
  g_autofree char *wpath = g_build_filename(FS_SOURCE_DATA_DIR, wl_file, NULL);
  const char *defs[2] = { nodes, NULL };
  g_autoptr(FsTopo) topo = cat ? fs_topo_load_file(tpath, cat, nodes ? defs : NULL, &err) : NULL;
  g_autoptr(FsWorkload) w = topo ? fs_workload_load_file(wpath, NULL, &err) : NULL;
  g_autoptr(FsEfficiency) eff = w ? fs_efficiency_load_default(NULL, &err) : NULL;
  g_autoptr(FsNcclParams) np = eff ? fs_nccl_params_load_default(&err) : NULL;
  guint ngpus = 0;
  if (np != NULL) {
    fs_topo_gpus(topo, &ngpus);
    if (!fs_workload_apply_overrides(w, ov, &err) || !fs_workload_resolve(w, ngpus, &err))
      np = (fs_nccl_params_free(g_steal_pointer(&np)), NULL);
  }
  if (np == NULL) {
    fprintf(stderr, "bench-train: %s\n", err->message);
    return 1;
  }
  gint64 t1 = g_get_monotonic_time();
  g_autoptr(FsCollMemo) memo = fs_coll_memo_new();
  opt.memo = memo;
  g_autoptr(FsTrain) t = fs_train_new(topo, w, eff, np, fs_scenario_engines(), &opt, &err);
  gint64 t2 = g_get_monotonic_time();
  if (t == NULL || !fs_train_run(t, &err)) {
    fprintf(stderr, "bench-train: %s\n", err->message);
    return 1;
  }
  gint64 t3 = g_get_monotonic_time();
  guint64 hits, chits;
  guint entries, centries;
  fs_coll_memo_stats(memo, &hits, &entries);
  fs_coll_memo_class_stats(memo, &chits, &centries);
  const FsTrainResult *r = fs_train_result(t);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("scenario=%s model=%s dp=%s classes=%s exec=%s gpus=%u step_s=%.4f step_ps=%" G_GINT64_FORMAT
         " mfu=%.3f ops=%u ranks_simulated=%u memo_entries=%u class_entries=%u memo_hits=%" G_GUINT64_FORMAT
         " class_hits=%" G_GUINT64_FORMAT " user_s=%.2f sys_s=%.2f "
         "load_s=%.2f build_s=%.2f run_s=%.2f wall_s=%.2f rss_mib=%.0f\n",
         sc, opt.net_model == FS_NET_ANALYTIC ? "analytic" : "maxmin",
         opt.dp_isolated ? "isolated" : "flows", fs_coll_classes_name(opt.coll_classes),
         fs_coll_exec_name(opt.exec), ngpus,
         fs_time_to_s(r->step_time), (gint64)r->step_time, r->mfu, r->n_ops, r->simulated_ranks,
         entries, centries, hits, chits,
         ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
         (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2) / 1e6, (t3 - t0) / 1e6, peak_rss_mib());
  return 0;
}
