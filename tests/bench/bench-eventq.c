/* bench-eventq.c — event-core throughput in the classic hold model.
 *
 * For each pending count N: fill a queue with N events at Exp(1 us) times,
 * then repeat M times { pop the earliest; push one at its time + Exp(1 us) },
 * so the queue stays at N events.  The timed part is the M hold operations
 * only; each configuration runs `--repeat` times on a fresh queue and the
 * best run is reported.  Increments are drawn beforehand into a table (2^20
 * entries, cycled) so that the figure measures the queue, not the logarithm
 * in the exponential sampler.
 *
 * Two layers are measured:
 *   eventq  raw fs_eventq_pop / fs_eventq_push;
 *   sim     fs_sim: each event's callback schedules its successor with
 *           fs_sim_after, and fs_sim_run runs the M events (the way models
 *           use the core).
 *
 * Output: one line per (layer, N), key=value fields, then nothing else:
 *   layer=eventq pending=10000 ops=20000000 best_s=0.7000 events_per_s=28.57e6 \
 *     best_cpu_s=0.6900 events_per_cpu_s=28.99e6 peak_rss_mib=10.2
 * (one line).  events_per_s counts hold operations (one pop and one push
 * each) per second of wall time; events_per_cpu_s per second of this
 * thread's CPU time (the better figure on a busy machine).
 * peak_rss_mib is the process's peak resident set so far; configurations run
 * in increasing N, so it reflects the largest queue yet.
 *
 *   bench-eventq [--pending N[,N...]] [--ops M] [--repeat R] [--layer eventq|sim|both]
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "core/eventq.h"
#include "core/rng.h"
#include "core/sim.h"

#define TABLE_BITS 20
#define TABLE_SIZE ((size_t)1 << TABLE_BITS)

static FsTime *incr; /* Exp(1 us) increments in picoseconds (>= 1) */

static void fill_table(void)
{
  FsRng rng;
  fs_rng_init(&rng, 42, 0);
  incr = g_new(FsTime, TABLE_SIZE);
  for (size_t i = 0; i < TABLE_SIZE; i++)
    incr[i] = 1 + (FsTime)fs_rng_exp(&rng, (double)FS_US);
}

static void nop(void *ctx, uint64_t arg)
{
  (void)ctx;
  (void)arg;
}

/* Wall-clock and CPU-time stopwatches.  The CPU time of this thread is
 * less disturbed than wall time on a shared machine (time slices given to
 * other processes do not count), so both are reported. */
typedef struct {
  double wall, cpu;
} Stamp;

static Stamp stamp(void)
{
  struct timespec w, c;
  clock_gettime(CLOCK_MONOTONIC, &w);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
  return (Stamp){(double)w.tv_sec + (double)w.tv_nsec * 1e-9, (double)c.tv_sec + (double)c.tv_nsec * 1e-9};
}

static Stamp elapsed(Stamp t0)
{
  Stamp t1 = stamp();
  return (Stamp){t1.wall - t0.wall, t1.cpu - t0.cpu};
}

static double peak_rss_mib(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0; /* ru_maxrss is in KiB on Linux */
}

/* One timed run of the raw queue. */
static Stamp run_eventq(uint64_t n, uint64_t ops, uint64_t *checksum)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  size_t k = 0;
  for (uint64_t i = 0; i < n; i++)
    fs_eventq_push(q, incr[k++ & (TABLE_SIZE - 1)], nop, NULL, i);
  Stamp t0 = stamp();
  FsEvent ev;
  uint64_t sum = 0;
  for (uint64_t i = 0; i < ops; i++) {
    fs_eventq_pop(q, &ev);
    sum += ev.arg;
    fs_eventq_push(q, ev.time + incr[k++ & (TABLE_SIZE - 1)], nop, NULL, ev.arg);
  }
  Stamp t = elapsed(t0);
  *checksum += sum;
  return t;
}

typedef struct {
  FsSim *sim;
  size_t k;
} HoldModel;

static void hold_event(void *ctx, uint64_t arg)
{
  HoldModel *m = ctx;
  fs_sim_after(m->sim, incr[m->k++ & (TABLE_SIZE - 1)], hold_event, m, arg);
}

/* One timed run through fs_sim. */
static Stamp run_sim(uint64_t n, uint64_t ops, uint64_t *checksum)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  HoldModel m = {sim, 0};
  for (uint64_t i = 0; i < n; i++)
    fs_sim_at(sim, incr[m.k++ & (TABLE_SIZE - 1)], hold_event, &m, i);
  /* The budget ends the run after exactly `ops` events (an expected error). */
  fs_sim_set_event_limit(sim, ops);
  Stamp t0 = stamp();
  g_autoptr(GError) error = NULL;
  gboolean ok = fs_sim_run(sim, &error);
  Stamp t = elapsed(t0);
  if (ok || fs_sim_events_run(sim) != ops) {
    fprintf(stderr, "bench-eventq: sim run stopped after %" PRIu64 " events\n", fs_sim_events_run(sim));
    exit(1);
  }
  *checksum += (uint64_t)fs_sim_now(sim);
  return t;
}

int main(int argc, char **argv)
{
  /* GOption replaces (without freeing) a string it sets, so defaults are
   * applied after parsing. */
  g_autofree char *pending = NULL;
  gint64 ops = 20000000;
  gint repeat = 3;
  g_autofree char *layer = NULL;
  GOptionEntry entries[] = {
    {"pending", 'n', 0, G_OPTION_ARG_STRING, &pending, "Pending counts, comma-separated", "N,N"},
    {"ops", 'm', 0, G_OPTION_ARG_INT64, &ops, "Hold operations per run", "M"},
    {"repeat", 'r', 0, G_OPTION_ARG_INT, &repeat, "Runs per configuration (best is kept)", "R"},
    {"layer", 'l', 0, G_OPTION_ARG_STRING, &layer, "eventq, sim or both", "L"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("— event queue hold-model benchmark");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "bench-eventq: %s\n", error->message);
    return 2;
  }
  if (pending == NULL)
    pending = g_strdup("10000,100000,1000000");
  if (layer == NULL)
    layer = g_strdup("both");
  gboolean do_q = g_str_equal(layer, "eventq") || g_str_equal(layer, "both");
  gboolean do_sim = g_str_equal(layer, "sim") || g_str_equal(layer, "both");
  if ((!do_q && !do_sim) || ops <= 0 || repeat <= 0) {
    fprintf(stderr, "bench-eventq: expected --layer eventq|sim|both, --ops > 0, --repeat > 0\n");
    return 2;
  }
  fill_table();
  g_auto(GStrv) ns = g_strsplit(pending, ",", -1);
  uint64_t checksum = 0;
  for (int i = 0; ns[i] != NULL; i++) {
    uint64_t n = g_ascii_strtoull(ns[i], NULL, 10);
    if (n == 0) {
      fprintf(stderr, "bench-eventq: bad pending count '%s'\n", ns[i]);
      return 2;
    }
    for (int l = 0; l < 2; l++) {
      if ((l == 0 && !do_q) || (l == 1 && !do_sim))
        continue;
      Stamp best = {1e300, 1e300};
      for (int r = 0; r < repeat; r++) {
        Stamp s = l == 0 ? run_eventq(n, (uint64_t)ops, &checksum) : run_sim(n, (uint64_t)ops, &checksum);
        best.wall = MIN(best.wall, s.wall);
        best.cpu = MIN(best.cpu, s.cpu);
      }
      printf("layer=%s pending=%" PRIu64 " ops=%" PRId64 " best_s=%.4f events_per_s=%.2fe6 "
             "best_cpu_s=%.4f events_per_cpu_s=%.2fe6 peak_rss_mib=%.1f\n",
             l == 0 ? "eventq" : "sim", n, ops, best.wall, (double)ops / best.wall / 1e6, best.cpu,
             (double)ops / best.cpu / 1e6, peak_rss_mib());
      fflush(stdout);
    }
  }
  /* Printed to stderr so that the optimiser cannot drop the work. */
  fprintf(stderr, "checksum %" PRIu64 "\n", checksum);
  g_free(incr);
  return 0;
}
