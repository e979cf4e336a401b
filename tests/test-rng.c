/* test-rng.c — deterministic random streams. */
#include <math.h>

#include "core/rng.h"
#include "testutil.h"

/* Check's ck_assert reports its position to the parent process on every
 * call; in loops of millions of iterations that dominates the run time, so
 * loops use this plain check, which costs nothing until it fails. */
#define loop_assert(cond)                                    \
  do {                                                       \
    if (G_UNLIKELY(!(cond)))                                 \
      ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #cond);  \
  } while (0)

START_TEST(test_rng_same_seed_same_sequence)
{
  FsRng a, b;
  fs_rng_init(&a, 1234, 5);
  fs_rng_init(&b, 1234, 5);
  for (int i = 0; i < 1000; i++)
    loop_assert(fs_rng_next(&a) == fs_rng_next(&b));
  /* A copy continues the same sequence (plain value type). */
  FsRng c = a;
  ck_assert_uint_eq(fs_rng_next(&a), fs_rng_next(&c));
}
END_TEST

START_TEST(test_rng_known_values)
{
  /* The generator is part of the output format: fixed seeds must give
   * fixed numbers on every platform.  These values pin the algorithm. */
  /* xoshiro256** from a hand-set state (values from the reference code). */
  FsRng r = {{1, 2, 3, 4}};
  ck_assert_uint_eq(fs_rng_next(&r), 11520);
  ck_assert_uint_eq(fs_rng_next(&r), 0);
  ck_assert_uint_eq(fs_rng_next(&r), 1509978240);
  /* The seeding (computed independently from the formula in rng.c). */
  fs_rng_init(&r, 0, 0);
  ck_assert_uint_eq(fs_rng_next(&r), UINT64_C(0xd4d5e19fa14d7204));
  ck_assert_uint_eq(fs_rng_next(&r), UINT64_C(0x26a7681f9612c531));
  fs_rng_init(&r, 42, 7);
  ck_assert_uint_eq(fs_rng_next(&r), UINT64_C(0x575626450eeee28c));
  /* splitmix64's finaliser on known inputs. */
  ck_assert_uint_eq(fs_hash64(0), 0);
  ck_assert_uint_eq(fs_hash64(UINT64_C(0x9E3779B97F4A7C15)), UINT64_C(0xE220A8397B1DCDAF));
}
END_TEST

START_TEST(test_rng_streams_differ)
{
  /* Different streams of one seed, and one stream of different seeds,
   * share no early outputs. */
  enum { N = 256 };
  uint64_t v[4][N];
  uint64_t seeds[4] = {1, 1, 2, 2};
  uint64_t streams[4] = {0, 1, 0, 1};
  for (int k = 0; k < 4; k++) {
    FsRng r;
    fs_rng_init(&r, seeds[k], streams[k]);
    for (int i = 0; i < N; i++)
      v[k][i] = fs_rng_next(&r);
  }
  for (int a = 0; a < 4; a++)
    for (int b = a + 1; b < 4; b++)
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
          loop_assert(v[a][i] != v[b][j]);
  /* (seed + 1, stream) must not be (seed, stream + 1) shifted. */
  FsRng x, y;
  fs_rng_init(&x, 10, 11);
  fs_rng_init(&y, 11, 10);
  ck_assert_uint_ne(fs_rng_next(&x), fs_rng_next(&y));
}
END_TEST

START_TEST(test_rng_uniform_range)
{
  FsRng r;
  fs_rng_init(&r, 99, 0);
  double sum = 0;
  const int n = 100000;
  for (int i = 0; i < n; i++) {
    double u = fs_rng_uniform(&r);
    loop_assert(u >= 0.0 && u < 1.0);
    sum += u;
  }
  /* Mean 1/2, standard error 1/sqrt(12 n) ~ 0.0009. */
  ck_assert_msg(fabs(sum / n - 0.5) < 0.005, "mean %f", sum / n);
}
END_TEST

START_TEST(test_rng_below_range_and_uniformity)
{
  FsRng r;
  fs_rng_init(&r, 7, 7);
  ck_assert_uint_eq(fs_rng_below(&r, 1), 0);
  enum { K = 10 };
  int counts[K] = {0};
  const int n = 100000;
  for (int i = 0; i < n; i++) {
    uint64_t x = fs_rng_below(&r, K);
    loop_assert(x < K);
    counts[x]++;
  }
  /* Chi-square with 9 degrees of freedom: 27.9 is the 0.999 quantile. */
  double chi2 = 0;
  for (int k = 0; k < K; k++) {
    double e = (double)n / K;
    chi2 += (counts[k] - e) * (counts[k] - e) / e;
  }
  ck_assert_msg(chi2 < 27.9, "chi-square %f", chi2);
  /* A bound just above 2^63 rejects about half the raw draws; results must
   * still be in range, and both halves must appear. */
  uint64_t big = (UINT64_C(1) << 63) + 1;
  int high = 0;
  for (int i = 0; i < 1000; i++) {
    uint64_t x = fs_rng_below(&r, big);
    loop_assert(x < big);
    high += x >= (UINT64_C(1) << 62);
  }
  ck_assert(high > 400 && high < 600);
  /* The largest bound. */
  for (int i = 0; i < 100; i++)
    (void)fs_rng_below(&r, UINT64_MAX);
}
END_TEST

START_TEST(test_rng_exp_mean)
{
  FsRng r;
  fs_rng_init(&r, 5, 1);
  const int n = 100000;
  const double mean = 3.5;
  double sum = 0;
  for (int i = 0; i < n; i++) {
    double x = fs_rng_exp(&r, mean);
    loop_assert(x >= 0.0 && isfinite(x));
    sum += x;
  }
  /* Standard error mean / sqrt(n) ~ 0.011; allow 5 of them. */
  ck_assert_msg(fabs(sum / n - mean) < 0.055, "mean %f", sum / n);
}
END_TEST

START_TEST(test_rng_hash_spreads)
{
  /* Consecutive inputs land in both halves of a two-way split about
   * equally (used for ECMP). */
  int ones = 0;
  for (uint64_t i = 1; i <= 10000; i++)
    ones += (int)(fs_hash64(i) & 1);
  ck_assert_msg(ones > 4700 && ones < 5300, "ones %d", ones);
  ck_assert_uint_ne(fs_hash64(1), fs_hash64(2));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("rng");
  FS_ADD_TEST(s, test_rng_same_seed_same_sequence);
  FS_ADD_TEST(s, test_rng_known_values);
  FS_ADD_TEST(s, test_rng_streams_differ);
  FS_ADD_TEST(s, test_rng_uniform_range);
  FS_ADD_TEST(s, test_rng_below_range_and_uniformity);
  FS_ADD_TEST(s, test_rng_exp_mean);
  FS_ADD_TEST(s, test_rng_hash_spreads);
  return fs_test_run_suite(s);
}
