/* test-testutil.c — the test helpers themselves.  testutil.h replaces Check's
 * ck_assert_msg (on which every ck_assert_* macro is built) by one that does
 * not record the assertions that hold; this proves that each kind of
 * assertion still fails, with Check's message, and that holding ones pass.
 * The failing suite runs in a child (this executable again, with
 * $FS_TESTUTIL_FAILING set), so that its failures are not this suite's. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ---- the child's suite: every case but the last must fail --------------- */

START_TEST(fail_bare)
{
  int x = 3;
  ck_assert(x == 4);
}
END_TEST

START_TEST(fail_msg)
{
  ck_assert_msg(strlen("abc") == 2, "length %d", 3);
}
END_TEST

START_TEST(fail_uint)
{
  guint n = 7;
  ck_assert_uint_eq(n, 8);
}
END_TEST

START_TEST(fail_str)
{
  ck_assert_str_eq("left", "right");
}
END_TEST

START_TEST(fail_double)
{
  ck_assert_double_le(0.5, 0.25);
}
END_TEST

START_TEST(fail_ptr)
{
  const char *p = NULL;
  ck_assert_ptr_nonnull(p);
}
END_TEST

/* A failure after many assertions that hold: the first that fails stops it. */
START_TEST(fail_late)
{
  for (guint i = 0; i < 1000; i++)
    ck_assert_uint_lt(i, 999);
}
END_TEST

START_TEST(pass_all)
{
  ck_assert(1);
  ck_assert_msg(2 + 2 == 4, "arithmetic");
  ck_assert_uint_eq(7, 7);
  ck_assert_str_eq("same", "same");
  ck_assert_double_le(0.25, 0.5);
  ck_assert_ptr_nonnull("x");
}
END_TEST

/* Runs the failing suite; prints Check's report on stdout; the exit status
 * is the number of failed cases. */
static int run_failing(void)
{
  Suite *s = suite_create("failing");
  FS_ADD_TEST(s, fail_bare);
  FS_ADD_TEST(s, fail_msg);
  FS_ADD_TEST(s, fail_uint);
  FS_ADD_TEST(s, fail_str);
  FS_ADD_TEST(s, fail_double);
  FS_ADD_TEST(s, fail_ptr);
  FS_ADD_TEST(s, fail_late);
  FS_ADD_TEST(s, pass_all);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed;
}

/* ---- this suite ---------------------------------------------------------- */

START_TEST(test_assertions_still_fail)
{
  char *argv[] = {(char *)"/proc/self/exe", NULL};
  g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "FS_TESTUTIL_FAILING", "1", TRUE);
  env = g_environ_unsetenv(env, "CK_RUN_CASE");
  env = g_environ_unsetenv(env, "CK_RUN_SUITE");
  g_autofree char *out = NULL;
  int wait_status = 0;
  GError *err = NULL;
  ck_assert_msg(g_spawn_sync(NULL, argv, env, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL,
                             &wait_status, &err),
                "spawn: %s", err ? err->message : "");
  ck_assert_msg(WIFEXITED(wait_status), "the failing suite did not exit: %s", out);
  /* Seven failures of eight, each reported at its assertion with Check's text. */
  ck_assert_msg(WEXITSTATUS(wait_status) == 7, "%d failures, expected 7: %s",
                WEXITSTATUS(wait_status), out);
  ck_assert_msg(strstr(out, "Checks: 8, Failures: 7") != NULL, "%s", out);
  const char *expected[] = {
    "test-testutil.c:17:F:fail_bare:fail_bare:0: Assertion 'x == 4' failed",
    ":fail_msg:fail_msg:0: length 3",
    ":fail_uint:fail_uint:0: Assertion 'n == 8' failed: n == 7, 8 == 8",
    ":fail_str:fail_str:0: Assertion '\"left\" == \"right\"' failed",
    ":fail_double:fail_double:0: Assertion '0.5 <= 0.25' failed",
    ":fail_ptr:fail_ptr:0: Assertion 'p != NULL' failed",
    ":fail_late:fail_late:0: Assertion 'i < 999' failed: i == 999, 999 == 999",
  };
  for (guint i = 0; i < G_N_ELEMENTS(expected); i++)
    ck_assert_msg(strstr(out, expected[i]) != NULL, "no \"%s\" in:\n%s", expected[i], out);
  ck_assert_msg(strstr(out, "pass_all") == NULL, "pass_all failed:\n%s", out);
}
END_TEST

int main(void)
{
  if (g_getenv("FS_TESTUTIL_FAILING") != NULL)
    return run_failing();
  Suite *s = suite_create("testutil");
  FS_ADD_TEST(s, test_assertions_still_fail);
  return fs_test_run_suite(s);
}
