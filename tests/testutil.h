/* testutil.h — helpers shared by the Check test executables. */
#pragma once

#include <check.h>
#include <glib.h>

/* Path of a file under tests/data (caller frees). */
char *fs_test_data_path(const char *relative);
/* Path of a file under the source root (caller frees). */
char *fs_test_source_path(const char *relative);

/* Runs a suite with CK_NORMAL output; returns the process exit status. */
int fs_test_run_suite(Suite *s);

/* Adds a test case with one test function, named after the function. */
#define FS_ADD_TEST(suite, fn)                         \
  do {                                                 \
    TCase *tc_ = tcase_create(#fn);                    \
    tcase_add_test(tc_, fn);                           \
    tcase_set_timeout(tc_, 120);                       \
    suite_add_tcase((suite), tc_);                     \
  } while (0)

/* Asserts that a GError is set, in domain, and that its message contains
 * fragment.  Frees the error. */
#define fs_assert_error(err, domain_, fragment)                                      \
  do {                                                                              \
    ck_assert_msg((err) != NULL, "expected an error containing \"%s\"", (fragment)); \
    ck_assert_msg((err)->domain == (domain_), "wrong error domain for: %s", (err)->message); \
    ck_assert_msg(strstr((err)->message, (fragment)) != NULL,                        \
                  "error \"%s\" does not contain \"%s\"", (err)->message, (fragment)); \
    g_clear_error(&(err));                                                          \
  } while (0)

#define fs_assert_no_error(err)                                                     \
  ck_assert_msg((err) == NULL, "unexpected error: %s", (err) ? (err)->message : "")
