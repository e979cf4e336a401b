/* fuzz-efficiency.c — libFuzzer driver for the compute efficiency curves
 * reader (src/compute/efficiency.c, the files in models/compute/).
 *
 * The bytes go to fs_efficiency_load_string named "fuzz.yaml" into an empty
 * table, then once more without replace (every curve clashes) and with
 * replace (same number of curves).  Promises checked: a rejection is one
 * line in FS_EFFICIENCY_ERROR or FS_YAML_ERROR starting
 * "fuzz.yaml:LINE:COL: " and leaves the table as it was; every accepted curve has n ≥ 1 points with x
 * positive and increasing and y in (0, 1], a position, and evaluates to a
 * value in (0, 1] anywhere (0, tiny, its points, between them, huge).
 * Corpus: tests/data/efficiency/.
 */
#include <math.h>

#include "compute/efficiency.h"
#include "fuzz-common.h"
#include "util/yaml.h"

#define INPUT_NAME "fuzz.yaml"

static void check_error(GError *error)
{
  fs_fuzz_rejected(error, INPUT_NAME, FS_EFFICIENCY_ERROR, FS_YAML_ERROR, "efficiency");
}

static void check_curve(const FsEffCurve *c)
{
  if (c->n < 1 || c->x == NULL || c->y == NULL)
    fs_fuzz_fail("a curve without points");
  if (c->line < 0 || c->col < 0 || c->file == NULL || c->source == NULL)
    fs_fuzz_fail("a curve without a position or source");
  for (guint i = 0; i < c->n; i++) {
    if (!(c->x[i] > 0) || !isfinite(c->x[i]) || (i > 0 && !(c->x[i] > c->x[i - 1])))
      fs_fuzz_fail("point %u: x = %g", i, c->x[i]);
    if (!(c->y[i] > 0 && c->y[i] <= 1))
      fs_fuzz_fail("point %u: y = %g", i, c->y[i]);
  }
  double probes[] = {0, 1e-300, c->x[0], c->x[c->n - 1], c->x[c->n - 1] * 2, 1e300, INFINITY};
  for (guint i = 0; i < G_N_ELEMENTS(probes) + c->n; i++) {
    double x = i < G_N_ELEMENTS(probes) ? probes[i]
               : (c->x[i - G_N_ELEMENTS(probes)] + c->x[MIN(i - G_N_ELEMENTS(probes) + 1, c->n - 1)]) / 2;
    double y = fs_eff_curve_eval(c, x);
    if (!(y > 0 && y <= 1))
      fs_fuzz_fail("the curve evaluates to %g at x = %g", y, x);
  }
}

static void check_table(const FsEfficiency *eff)
{
  for (guint i = 0; i < fs_efficiency_size(eff); i++)
    check_curve(fs_efficiency_nth(eff, i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  g_autofree char *text = fs_fuzz_text(data, size);
  GError *error = NULL;
  g_autoptr(FsEfficiency) eff = fs_efficiency_new();
  if (!fs_efficiency_load_string(eff, text, (gssize)size, INPUT_NAME, FALSE, &error)) {
    check_error(error);
    if (fs_efficiency_size(eff) != 0)
      fs_fuzz_fail("a failed load changed the table");
    return 0;
  }
  if (error != NULL)
    fs_fuzz_fail("the load succeeded but set an error: %s", error->message);
  check_table(eff);
  /* The same file again: every curve clashes unless replacing, and a
   * failed load leaves the table as it was. */
  guint n = fs_efficiency_size(eff);
  if (n > 0) {
    if (fs_efficiency_load_string(eff, text, (gssize)size, INPUT_NAME, FALSE, &error))
      fs_fuzz_fail("loading the same curves twice succeeded");
    check_error(error);
    error = NULL;
    if (fs_efficiency_size(eff) != n)
      fs_fuzz_fail("a failed load changed the table");
  }
  if (!fs_efficiency_load_string(eff, text, (gssize)size, INPUT_NAME, TRUE, &error))
    fs_fuzz_fail("reloading with replace failed: %s", error->message);
  if (fs_efficiency_size(eff) != n)
    fs_fuzz_fail("reloading with replace changed the number of curves");
  check_table(eff);
  return 0;
}
