/* Timing statistics for the probes: median, extremes, p10/p90, mean, stdev.
 *
 * Contract: fs_stats_compute sorts the sample array in place; percentiles
 * interpolate linearly between order statistics (p50 of an even count is the
 * mean of the middle two). Times are microseconds throughout.
 * Ownership: the caller's array. Errors: n <= 0 yields all-zero stats.
 * Cost: O(n log n).
 */
#include "probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double percentile(const double *sorted, int n, double p)
{
  double pos = p * (n - 1);
  int lo = (int)floor(pos);
  int hi = lo + 1 < n ? lo + 1 : lo;
  double frac = pos - lo;
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

void fs_stats_compute(double *samples, int n, FsStats *out)
{
  memset(out, 0, sizeof *out);
  if (n <= 0)
    return;
  qsort(samples, (size_t)n, sizeof *samples, cmp_double);
  out->n = n;
  out->min = samples[0];
  out->max = samples[n - 1];
  out->median = percentile(samples, n, 0.5);
  out->p10 = percentile(samples, n, 0.1);
  out->p90 = percentile(samples, n, 0.9);
  double sum = 0;
  for (int i = 0; i < n; i++)
    sum += samples[i];
  out->mean = sum / n;
  double var = 0;
  for (int i = 0; i < n; i++)
    var += (samples[i] - out->mean) * (samples[i] - out->mean);
  out->stdev = n > 1 ? sqrt(var / (n - 1)) : 0;
}

void fs_json_stats_us(FsJson *j, const char *prefix, const FsStats *s)
{
  static const char *names[] = {"median_us", "min_us", "max_us", "p10_us", "p90_us", "stdev_us"};
  double values[] = {s->median, s->min, s->max, s->p10, s->p90, s->stdev};
  char key[64];
  for (int i = 0; i < 6; i++) {
    snprintf(key, sizeof key, "%s%s", prefix, names[i]);
    fs_json_number(j, key, values[i]);
  }
  if (!prefix[0])
    fs_json_int(j, "reps", s->n);
}

double fs_now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
