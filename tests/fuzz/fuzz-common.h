/* fuzz-common.h — what every fuzz driver checks besides "no crash".
 *
 * A driver is one function, LLVMFuzzerTestOneInput(data, size), that hands
 * the bytes to one parser through its load-from-string API and then checks
 * the parser's promises with fs_fuzz_check_*; a broken promise calls
 * abort(), which libFuzzer reports as a crash (and the replay runner,
 * fuzz-replay.c, as a failed test).  Drivers are built twice: against
 * libFuzzer with ASan+UBSan (clang, -Dfuzz=enabled) and as plain programs
 * that replay the corpora (tests/meson.build, suite fuzz-replay).
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file name every driver passes to the parser, so that error messages
 * can be checked for their "file:line:col: " prefix. */
#define FS_FUZZ_NAME "fuzz.yaml"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reports a broken promise and stops (libFuzzer saves the input). */
G_GNUC_NORETURN G_GNUC_PRINTF(1, 2) static inline void fs_fuzz_fail(const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  fputs("fuzz: broken promise: ", stderr);
  vfprintf(stderr, format, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

/* A set error must be a single non-empty line. */
static inline void fs_fuzz_check_one_line(const GError *error)
{
  if (error == NULL)
    fs_fuzz_fail("the call failed without setting an error");
  if (error->message == NULL || error->message[0] == '\0')
    fs_fuzz_fail("empty error message");
  if (strchr(error->message, '\n') != NULL || strchr(error->message, '\r') != NULL)
    fs_fuzz_fail("error message spans several lines: %s", error->message);
}

/* An input error must name the file and a position: "NAME:LINE:COL: " with
 * LINE, COL >= 1, or "NAME: " for errors about the whole file. */
static inline void fs_fuzz_check_input_error(const GError *error, const char *name)
{
  fs_fuzz_check_one_line(error);
  size_t n = strlen(name);
  const char *m = error->message;
  if (strncmp(m, name, n) != 0 || (m[n] != ':'))
    fs_fuzz_fail("error message does not start with \"%s:\": %s", name, m);
  const char *p = m + n + 1;
  if (*p == ' ')
    return;
  char *end;
  long line = strtol(p, &end, 10);
  if (end == p || line < 1 || *end != ':')
    fs_fuzz_fail("error message has no valid line after the file name: %s", m);
  p = end + 1;
  if (*p == ' ')
    return;
  long col = strtol(p, &end, 10);
  if (end == p || col < 1 || strncmp(end, ": ", 2) != 0)
    fs_fuzz_fail("error message has no valid column after the line: %s", m);
}

/* Like fs_fuzz_check_input_error, for the formats whose every rejection
 * carries a position: "NAME:LINE:COL: " with LINE, COL >= 1. */
static inline void fs_fuzz_check_error_at(const GError *error, const char *name)
{
  fs_fuzz_check_input_error(error, name);
  const char *p = error->message + strlen(name) + 1;
  if (*p == ' ')
    fs_fuzz_fail("error message has no LINE:COL: %s", error->message);
  p = strchr(p, ':') + 1;
  if (*p == ' ')
    fs_fuzz_fail("error message has no column: %s", error->message);
}

/* A rejected input: the error names the input with LINE:COL, is in domain
 * or other (0: none), and is freed.  what names the format in the message. */
static inline void fs_fuzz_rejected(GError *error, const char *name, GQuark domain, GQuark other,
                                    const char *what)
{
  fs_fuzz_check_error_at(error, name);
  if (error->domain != domain && (other == 0 || error->domain != other))
    fs_fuzz_fail("%s error in another domain: %s", what, error->message);
  g_error_free(error);
}

/* A NUL-terminated copy of the fuzzer's bytes (they are not terminated). */
static inline char *fs_fuzz_text(const uint8_t *data, size_t size)
{
  char *text = g_malloc(size + 1);
  if (size > 0)
    memcpy(text, data, size);
  text[size] = '\0';
  return text;
}
