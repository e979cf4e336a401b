/* bench-sweep.c — a sweep of GPT-3 175B layouts on 1,024 H100s (128 DGX
 * H100 nodes, rail-optimized NDR) in the analytic flow model: POINTS
 * layouts (tp × pp × micro-batch × ZeRO stage × schedule, in a fixed
 * order, cycling when POINTS is larger) run with THREADS threads.
 *
 *   bench-sweep [POINTS [THREADS]] [--same] [--write-spec FILE]
 *
 * --same: every point is the first layout (tp 8, pp 8, micro-batch 1,
 * ZeRO-1, 1F1B), to time the runner on equal points.
 *
 * Prints points, ok, failed (layouts that do not divide the GPUs or the
 * batch), wall seconds, user and system CPU seconds (cpu_s, sys_s: the
 * figures to compare on a loaded machine), points/s, peak RSS, and the
 * 1-minute load average at the start and the end (what else ran).
 * --write-spec writes the spec and exits (for `mpirun -n K fabricsim
 * sweep FILE`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "sweep/sweep.h"

typedef struct {
  guint ok, failed;
} Count;

static void count(FsSweepResult *r, void *ud)
{
  Count *c = ud;
  if (r->ok)
    c->ok++;
  else
    c->failed++;
}

static char *spec_text(guint points, const char *root, gboolean same)
{
  static const guint tp[] = { 8, 4, 2, 1 }, pp[] = { 8, 16, 4, 32, 2, 1 }, mb[] = { 1, 2, 4, 8 };
  static const guint zero[] = { 1, 0, 2, 3 };
  static const char *sched[] = { "1f1b", "gpipe", "interleaved" };
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "name: bench-gpt3-175b-layouts\nkind: train\nset:\n"
                            "  topology: %s/topologies/dgx-h100-ib-ndr.yaml\n"
                            "  workload: %s/workloads/gpt3-175b.yaml\n"
                            "  D.nodes: 128\n  model: analytic\nlist:\n", root, root);
  guint total = same ? 1 : 4 * 6 * 4 * 4 * 3;
  for (guint i = 0; i < points; i++) {
    guint k = i % total;
    g_string_append_printf(s, "  - {tp: %u, pp: %u, micro_batch: %u, zero_stage: %u, schedule: %s}\n",
                           tp[k % 4], pp[(k / 4) % 6], mb[(k / 24) % 4], zero[(k / 96) % 4],
                           sched[k / 384]);
  }
  return g_string_free(s, FALSE);
}

int main(int argc, char **argv)
{
  guint points = 1000, threads = 0;
  const char *write = NULL;
  gboolean same = FALSE;
  int pos = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--same") == 0)
      same = TRUE;
    else if (strcmp(argv[i], "--write-spec") == 0 && i + 1 < argc)
      write = argv[++i];
    else if (pos++ == 0)
      points = (guint)atoi(argv[i]);
    else
      threads = (guint)atoi(argv[i]);
  }
  const char *root = g_getenv("FS_SOURCE_ROOT") ? g_getenv("FS_SOURCE_ROOT") : FS_SOURCE_DATA_DIR;
  g_autofree char *text = spec_text(points, root, same);
  if (write != NULL)
    return g_file_set_contents(write, text, -1, NULL) ? 0 : 1;
  GError *error = NULL;
  g_autoptr(FsSweepSpec) spec = fs_sweep_spec_load_string(text, "bench", ".", &error);
  g_autoptr(FsSweepEnv) env = spec ? fs_sweep_env_new(NULL, &error) : NULL;
  if (env == NULL) {
    fprintf(stderr, "bench-sweep: %s\n", error->message);
    return 1;
  }
  double load0[1] = {-1}, load1[1] = {-1};
  if (getloadavg(load0, 1) < 1)
    load0[0] = -1;
  gint64 t0 = g_get_monotonic_time();
  fs_sweep_env_prepare(env, spec, 0, 1);
  gint64 t1 = g_get_monotonic_time();
  Count c = {0};
  if (!fs_sweep_run(env, spec, 0, 1, threads, count, NULL, &c, &error)) {
    fprintf(stderr, "bench-sweep: %s\n", error->message);
    return 1;
  }
  double wall = (g_get_monotonic_time() - t0) / 1e6;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  if (getloadavg(load1, 1) < 1)
    load1[0] = -1;
  printf("points=%u ok=%u failed=%u threads=%u topo_load_s=%.2f wall_s=%.2f cpu_s=%.2f "
         "sys_s=%.2f points_per_s=%.2f peak_rss_mib=%.0f load_start=%.2f load_end=%.2f\n",
         points, c.ok, c.failed, threads ? threads : g_get_num_processors(), (t1 - t0) / 1e6, wall,
         ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
         ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, points / wall, ru.ru_maxrss / 1024.0,
         load0[0], load1[0]);
  return c.ok + c.failed == points ? 0 : 1;
}
