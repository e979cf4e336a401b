/* progress.c — see progress.h. */
#include "report/progress.h"

#include <stdio.h>
#include <unistd.h>

#include "core/sim.h"
#include "util/units.h"

/* A run shorter than this shows nothing; redraws are this far apart. */
#define SHOW_AFTER_US 1000000
#define REDRAW_US 100000

struct FsProgress {
  const char *cmd;
  gboolean enabled;
  gboolean drawn;     /* something is on the line */
  gint64 t0, last;    /* monotonic µs: start, last draw */
  guint64 ticks;      /* simulator ticks seen */
  gboolean counted;   /* fs_progress_count was called: the tick draws no more */
};

/* The line that fs_progress_end_line ends: the last one created, while it
 * lives (the main thread's only; see progress.h). */
static FsProgress *current;

/* Whether to draw now: enabled, past the first second, and not drawn in
 * the last tenth (unless final). */
static gboolean due(FsProgress *p, gboolean final, gint64 *now)
{
  if (!p->enabled)
    return FALSE;
  *now = g_get_monotonic_time();
  if (*now - p->t0 < SHOW_AFTER_US)
    return FALSE;
  if (!final && p->drawn && *now - p->last < REDRAW_US)
    return FALSE;
  p->last = *now;
  p->drawn = TRUE;
  return TRUE;
}

static void on_tick(const FsSim *sim, void *ud)
{
  FsProgress *p = ud;
  p->ticks++;
  gint64 now;
  if (p->counted || !due(p, FALSE, &now))
    return;
  g_autofree char *t = fs_format_time(fs_sim_now(sim));
  double events = (double)p->ticks * FS_SIM_TICK_EVENTS;
  fprintf(stderr, "\r%s: %.0f s, %.3g M events, simulated %s   ", p->cmd, (now - p->t0) / 1e6,
          events / 1e6, t);
  fflush(stderr);
}

FsProgress *fs_progress_new(const char *cmd, gboolean quiet)
{
  FsProgress *p = g_new0(FsProgress, 1);
  p->cmd = cmd;
  p->enabled = !quiet && isatty(STDERR_FILENO);
  p->t0 = p->last = g_get_monotonic_time();
  if (p->enabled)
    fs_sim_set_tick(on_tick, p);
  current = p;
  return p;
}

gboolean fs_progress_enabled(const FsProgress *p)
{
  return p != NULL && p->enabled;
}

void fs_progress_count(FsProgress *p, guint64 done, guint64 total, const char *unit)
{
  gint64 now;
  if (p == NULL)
    return;
  p->counted = TRUE;
  if (!due(p, done == total, &now))
    return;
  double el = (now - p->t0) / 1e6, rate = el > 0 ? done / el : 0;
  double eta = rate > 0 && total > done ? (total - done) / rate : 0;
  int width = 30, fill = total ? (int)((guint64)width * MIN(done, total) / total) : width;
  char bar[64];
  for (int i = 0; i < width; i++)
    bar[i] = i < fill ? '#' : '.';
  bar[width] = '\0';
  fprintf(stderr, "\r[%s] %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " %s  %.1f/s  ETA %d:%02d   ", bar,
          done, total, unit, rate, (int)eta / 60, (int)eta % 60);
  fflush(stderr);
}

void fs_progress_end_line(void)
{
  if (current == NULL || !current->drawn)
    return;
  fputc('\n', stderr);
  fflush(stderr);
  current->drawn = FALSE;
}

void fs_progress_free(FsProgress *p)
{
  if (p == NULL)
    return;
  if (current == p)
    current = NULL;
  if (p->enabled)
    fs_sim_set_tick(NULL, NULL);
  if (p->drawn) {
    fputc('\n', stderr);
    fflush(stderr);
  }
  g_free(p);
}
