/* rng.c — xoshiro256** (Blackman and Vigna, 2018) seeded by splitmix64.
 * See rng.h.
 *
 * The state of stream `stream` of `seed` is four successive outputs of a
 * splitmix64 generator started at a mix of both numbers, so nearby seeds
 * and nearby streams give unrelated sequences.  Every function is O(1)
 * (fs_rng_below loops only with probability < n / 2^64 per draw).
 */
#include "core/rng.h"

#include <math.h>

#define GOLDEN_GAMMA UINT64_C(0x9E3779B97F4A7C15)

uint64_t fs_hash64(uint64_t x)
{
  x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
  return x ^ (x >> 31);
}

guint fs_hash64_key(gconstpointer key)
{
  return (guint)fs_hash64(*(const uint64_t *)key);
}

/* One step of splitmix64: advance the state by the golden gamma, mix it. */
static uint64_t splitmix64(uint64_t *state)
{
  *state += GOLDEN_GAMMA;
  return fs_hash64(*state);
}

void fs_rng_init(FsRng *rng, uint64_t seed, uint64_t stream)
{
  g_return_if_fail(rng != NULL);
  /* Hash the stream before combining so that (seed, stream) pairs with the
   * same sum or xor do not collide. */
  uint64_t sm = fs_hash64(seed + GOLDEN_GAMMA) ^ fs_hash64(fs_hash64(stream) + 2 * GOLDEN_GAMMA);
  for (int i = 0; i < 4; i++)
    rng->s[i] = splitmix64(&sm);
  /* xoshiro's one forbidden state; splitmix64 cannot produce four zeros in
   * a row, but the check costs nothing. */
  if ((rng->s[0] | rng->s[1] | rng->s[2] | rng->s[3]) == 0)
    rng->s[0] = GOLDEN_GAMMA;
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t fs_rng_next(FsRng *rng)
{
  uint64_t *s = rng->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double fs_rng_uniform(FsRng *rng)
{
  return (double)(fs_rng_next(rng) >> 11) * 0x1.0p-53;
}

/* Lemire's nearly-divisionless method: the high word of a 64x64 product is
 * uniform on [0, n) once the low word is outside the biased zone. */
uint64_t fs_rng_below(FsRng *rng, uint64_t n)
{
  g_return_val_if_fail(n > 0, 0);
  __extension__ typedef unsigned __int128 u128;
  u128 m = (u128)fs_rng_next(rng) * n;
  uint64_t low = (uint64_t)m;
  if (low < n) {
    uint64_t threshold = -n % n; /* 2^64 mod n */
    while (low < threshold) {
      m = (u128)fs_rng_next(rng) * n;
      low = (uint64_t)m;
    }
  }
  return (uint64_t)(m >> 64);
}

double fs_rng_exp(FsRng *rng, double mean)
{
  g_return_val_if_fail(mean > 0, 0.0);
  /* 1 - u is in (0, 1], so the logarithm is finite. */
  return -mean * log(1.0 - fs_rng_uniform(rng));
}
