/* rng.h — deterministic random numbers: xoshiro256** seeded by splitmix64.
 *
 * Each component takes its own stream, derived from (seed, stream id), so
 * adding random draws in one component never changes another's sequence.
 * FsRng is a plain value type: copy it, embed it, no allocation.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef struct {
  uint64_t s[4];
} FsRng;

/* Initialises rng for stream `stream` of `seed`. */
void fs_rng_init(FsRng *rng, uint64_t seed, uint64_t stream);
/* Next 64 random bits. */
uint64_t fs_rng_next(FsRng *rng);
/* Uniform double in [0, 1) with 53 random bits. */
double fs_rng_uniform(FsRng *rng);
/* Uniform integer in [0, n) without modulo bias (n > 0). */
uint64_t fs_rng_below(FsRng *rng, uint64_t n);
/* Exponential with the given mean (> 0). */
double fs_rng_exp(FsRng *rng, double mean);

/* 64-bit mixing hash (splitmix64 finaliser); used for deterministic ECMP. */
uint64_t fs_hash64(uint64_t x);
/* GHashFunc for keys that point to a uint64_t, with g_int64_equal: a full
 * mix of the 64 bits.  g_int64_hash XORs the two halves, so keys that pack
 * two 32-bit ids (a node pair) collide whenever a ^ b is the same: on a
 * cluster's regular numbering, thousands of pairs share a bucket. */
guint fs_hash64_key(gconstpointer key);

G_END_DECLS
