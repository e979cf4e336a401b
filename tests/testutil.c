/* testutil.c — see testutil.h. */
#include "testutil.h"

#include <stdlib.h>

static const char *env_or(const char *name, const char *fallback)
{
  const char *v = g_getenv(name);
  return v ? v : fallback;
}

char *fs_test_data_path(const char *relative)
{
  return g_build_filename(env_or("FS_TEST_DATA", "tests/data"), relative, NULL);
}

char *fs_test_source_path(const char *relative)
{
  return g_build_filename(env_or("FS_SOURCE_ROOT", "."), relative, NULL);
}

int fs_test_run_suite(Suite *s)
{
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
