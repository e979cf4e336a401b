/* attn-occupancy.c — see attn-occupancy.h. */
#include "compute/attn-occupancy.h"

#include <math.h>

/* The tile row (head dim, block, step) of curve for head dimension d: the
 * first whose head dim is at least d, else the last.  NULL without rows. */
static const double *tile_for(const FsEffCurve *curve, uint64_t d)
{
  if (curve == NULL || curve->n_tiles == 0)
    return NULL;
  for (guint i = 0; i < curve->n_tiles; i++)
    if (curve->tiles[3 * (gsize)i] >= (double)d)
      return curve->tiles + 3 * (gsize)i;
  return curve->tiles + 3 * (gsize)(curve->n_tiles - 1);
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
  return a / b + (a % b != 0);
}

/* The steps of block i (0-based) of one head, as the header describes: the
 * keys (forward) or queries (backward) it visits, `step` at a time.  off =
 * skv − sq aligns the causal diagonal to the end of the keys. */
static uint64_t block_work(uint64_t i, uint64_t block, uint64_t step, uint64_t sq, uint64_t skv,
                           gboolean causal, gboolean backward)
{
  int64_t off = (int64_t)skv - (int64_t)sq;
  if (!backward) {
    if (!causal)
      return ceil_div(skv, step);
    /* Keys up to (and with) the block's last query's diagonal. */
    int64_t last = (int64_t)MIN((i + 1) * block, sq) - 1;
    int64_t keys = CLAMP(last + off + 1, 0, (int64_t)skv);
    return ceil_div((uint64_t)keys, step);
  }
  if (!causal)
    return ceil_div(sq, step);
  /* Queries that see the block's first key, i.e. from that key's diagonal on. */
  int64_t first = (int64_t)(i * block) - off;
  int64_t queries = (int64_t)sq - MAX(first, 0);
  return queries > 0 ? ceil_div((uint64_t)queries, step) : 0;
}

/* The occupancy of attn-occupancy.h: the works of one head's blocks, their
 * sum, sum of squares and maximum (every head has the same), then waves for
 * equal works and the tail of the longest block for unequal ones. */
double fs_attn_occupancy(const FsEffCurve *curve, uint64_t batch_heads, uint64_t sq, uint64_t skv,
                         uint64_t d, gboolean causal, gboolean backward, guint sms)
{
  const double *tile = tile_for(curve, d);
  if (tile == NULL || sms == 0 || batch_heads == 0 || sq == 0 || skv == 0)
    return 1.0;
  uint64_t block = (uint64_t)tile[1], step = (uint64_t)tile[2];
  uint64_t per_head = ceil_div(backward ? skv : sq, block);
  double sum = 0, sum2 = 0, wmax = 0, wmin = INFINITY;
  for (uint64_t i = 0; i < per_head; i++) {
    double w = (double)block_work(i, block, step, sq, skv, causal, backward);
    sum += w;
    sum2 += w * w;
    wmax = MAX(wmax, w);
    wmin = MIN(wmin, w);
  }
  if (!(sum > 0))
    return 1.0;
  double blocks = (double)batch_heads * (double)per_head, s = sms;
  double ideal = (double)batch_heads * sum / s; /* W / S */
  double time;
  if (wmin == wmax)
    time = ceil(blocks / s) * wmax;
  else
    time = MAX(wmax, ideal + wmax - sum2 / (2 * sum));
  return MIN(1.0, ideal / time);
}

double fs_attn_occupancy_factor(const FsEffCurve *curve, uint64_t batch_heads, uint64_t sq,
                                uint64_t skv, uint64_t d, gboolean causal, gboolean backward,
                                guint sms)
{
  if (tile_for(curve, d) == NULL || sms == 0 || batch_heads == 0 || sq == 0 || skv == 0 || d == 0)
    return 1.0;
  double batch = MAX(1.0, round((double)curve->measured_tokens / (double)skv));
  double heads = MAX(1.0, round((double)curve->measured_hidden / (double)d));
  double ref = fs_attn_occupancy(curve, (uint64_t)(batch * heads), skv, skv, d, causal, backward, sms);
  double occ = fs_attn_occupancy(curve, batch_heads, sq, skv, d, causal, backward, sms);
  return occ / ref;
}
