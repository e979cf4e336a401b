/* bench-coll.c — how fast collective plans are built, and how big they get:
 * ring, tree and NVLS all_reduce plans of 1 GiB on 8 to 512 ranks with
 * NCCL's Simple chunking (2 MiB chunks in 1 MiB slices) on 32 channels.
 *
 *   bench-coll [--repeat N]
 *
 * Prints one line of key=value figures per case (ranks, algo, steps,
 * deps_per_step, build_s best of N, steps_per_s), then peak_rss_mib; exits
 * 1 if a plan cannot be built. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "coll/plan.h"

static double now_s(void)
{
  return (double)g_get_monotonic_time() / 1e6;
}

int main(int argc, char **argv)
{
  int repeat = 3;
  if (argc == 3 && strcmp(argv[1], "--repeat") == 0)
    repeat = atoi(argv[2]);
  if (repeat < 1) {
    fprintf(stderr, "usage: bench-coll [--repeat N]\n");
    return 2;
  }
  static const guint ranks[] = {8, 64, 256, 512};
  static const char *const algos[] = {"ring", "tree", "nvls"};
  for (guint i = 0; i < G_N_ELEMENTS(ranks); i++)
    for (guint a = 0; a < G_N_ELEMENTS(algos); a++) {
      g_autoptr(FsComm) comm = fs_comm_new_grid(ranks[i] / 8, 8);
      if (strcmp(algos[a], "nvls") == 0) {
        if (ranks[i] > 8)
          continue;
        int sw = 1000;
        fs_comm_set_nvls_switch(comm, 0, &sw, 1);
      }
      FsCollRequest req = {
        .op = FS_COLL_ALL_REDUCE, .bytes = 1u << 30, .dtype = FS_COLL_DT_FLOAT,
        .proto = FS_PROTO_SIMPLE, .nchannels = 32, .chunk_bytes = 2u << 20, .slice_bytes = 1u << 20,
      };
      double best = 1e30;
      guint steps = 0, deps = 0;
      for (int r = 0; r < repeat; r++) {
        double t0 = now_s();
        GError *err = NULL;
        FsCollPlan *p = fs_coll_plan_new(comm, fs_coll_algo_find(algos[a]), &req, &err);
        double t = now_s() - t0;
        if (p == NULL) {
          fprintf(stderr, "bench-coll: %s\n", err->message);
          return 1;
        }
        steps = fs_coll_plan_n_steps(p);
        deps = 0;
        for (guint k = 0; k < steps; k++) {
          guint nd;
          fs_coll_plan_deps(p, k, &nd);
          deps += nd;
        }
        fs_coll_plan_free(p);
        best = MIN(best, t);
      }
      printf("ranks=%u algo=%s steps=%u deps_per_step=%.2f build_s=%.4f steps_per_s=%.0f\n", ranks[i],
             algos[a], steps, steps ? (double)deps / steps : 0.0, best, steps / best);
    }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("peak_rss_mib=%.1f\n", ru.ru_maxrss / 1024.0);
  return 0;
}
