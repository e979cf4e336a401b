/* attn-occupancy.h — how well a fused attention kernel's thread blocks keep
 * a GPU's SMs busy: wave quantization and the tail of unequal blocks.
 *
 * A FlashAttention-style kernel launches one thread block per tile of
 * `block` rows of one (batch, head): forward, `block` queries, which loop
 * over the keys `step` at a time; backward, `block` keys (their dK, dV),
 * which loop over the queries `step` at a time.  The tiles per head
 * dimension are data (`tiles:` of an attention curve, models/compute/
 * README.md, "Attention: thread blocks and SMs").  A block's work is its
 * number of steps: all equal without a mask; with a causal mask (queries
 * aligned to the end of the keys, as FlashAttention aligns them) block i
 * of the forward visits the keys up to its last query, and block j of the
 * backward the queries from its first key on.  With B blocks of works w_i
 * (total W) on S SMs that take the next block when one ends:
 *
 *   - equal works w run in waves: time ceil(B / S) · w;
 *   - unequal works fall out of step after the first wave; when the last
 *     block is handed out (at about W / S less the work still in flight)
 *     the blocks in flight are a length-biased sample of the works, whose
 *     mean remaining work is Σw² / (2 Σw), and the SM that ends last still
 *     holds about the longest block's work: time max(w_max, W / S + w_max
 *     − Σw² / (2 Σw)).
 *
 * The occupancy is (W / S) / time, in (0, 1].  A curve's points already
 * contain the occupancy of the kernels that were measured (`measured_tokens:`
 * batch × sequence, `measured_hidden:` heads × head dim at every point), so
 * the kernel model multiplies a curve's efficiency by the occupancy of the
 * kernel over the occupancy of the measured kernel of the same length and
 * head dimension (fs_attn_occupancy_factor).  Nothing here is fitted.
 *
 * Pure functions of their arguments; no allocation.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "compute/efficiency.h"

G_BEGIN_DECLS

/* The occupancy (above) of one attention kernel on sms SMs: batch_heads
 * query heads of sq queries against skv keys, head dimension d, with the
 * tile of curve's `tiles:` row for d (the first row whose head dim is at
 * least d, else the last).  1.0 when the curve has no tiles, sms is 0 or a
 * size is 0.  Cost O(max(sq, skv) / block). */
double fs_attn_occupancy(const FsEffCurve *curve, uint64_t batch_heads, uint64_t sq, uint64_t skv,
                         uint64_t d, gboolean causal, gboolean backward, guint sms);

/* The factor on curve's efficiency for that kernel: its occupancy over the
 * occupancy of the kernel the curve measured at key length skv and head
 * dimension d (sq = skv, batch max(1, round(measured_tokens / skv)),
 * heads max(1, round(measured_hidden / d)), the same mask and pass).
 * 1.0 when the curve has no tiles, sms is 0 or a size is 0.  Cost: two
 * fs_attn_occupancy. */
double fs_attn_occupancy_factor(const FsEffCurve *curve, uint64_t batch_heads, uint64_t sq,
                                uint64_t skv, uint64_t d, gboolean causal, gboolean backward,
                                guint sms);

G_END_DECLS
