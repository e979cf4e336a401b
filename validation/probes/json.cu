/* A tiny streaming JSON writer for the probe's calibration file.
 *
 * Contract: members are written in call order (deterministic); the writer
 * tracks commas and indentation per depth. Strings are escaped per RFC 8259;
 * numbers use %.6g (%.17g would print timing noise), non-finite values become
 * null. Containers marked flat print on one line, which keeps one measurement
 * per line in the file.
 * Ownership: the FILE belongs to the caller. Errors: none reported here; the
 * caller checks ferror/fclose. Cost: O(bytes written).
 */
#include "probe.h"

#include <math.h>
#include <string.h>

void fs_json_init(FsJson *j, FILE *f, int base_indent)
{
  memset(j, 0, sizeof *j);
  j->f = f;
  j->base_indent = base_indent;
}

static int in_flat(const FsJson *j)
{
  return j->depth > 0 && j->flat[j->depth - 1];
}

static void newline_indent(FsJson *j, int depth)
{
  fputc('\n', j->f);
  for (int i = 0; i < depth + j->base_indent; i++)
    fputs("  ", j->f);
}

static void put_string(FILE *f, const char *s)
{
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    default:
      if (*p < 0x20)
        fprintf(f, "\\u%04x", *p);
      else
        fputc(*p, f);
    }
  }
  fputc('"', f);
}

/* Separator, indentation and key before a member. */
static void member(FsJson *j, const char *key)
{
  if (j->depth > 0) {
    if (j->count[j->depth - 1] > 0)
      fputc(',', j->f);
    if (in_flat(j)) {
      if (j->count[j->depth - 1] > 0)
        fputc(' ', j->f);
    } else {
      newline_indent(j, j->depth);
    }
    j->count[j->depth - 1]++;
  }
  if (key) {
    put_string(j->f, key);
    fputs(": ", j->f);
  }
}

static void container_open(FsJson *j, const char *key, int flat, char c)
{
  member(j, key);
  fputc(c, j->f);
  if (j->depth < FS_JSON_MAX_DEPTH) {
    j->count[j->depth] = 0;
    j->flat[j->depth] = flat || in_flat(j);
  }
  j->depth++;
}

static void container_close(FsJson *j, char c)
{
  j->depth--;
  if (!j->flat[j->depth] && j->count[j->depth] > 0)
    newline_indent(j, j->depth);
  fputc(c, j->f);
  if (j->depth == 0)
    fputc('\n', j->f);
}

void fs_json_object_begin(FsJson *j, const char *key, int flat) { container_open(j, key, flat, '{'); }
void fs_json_object_end(FsJson *j) { container_close(j, '}'); }
void fs_json_array_begin(FsJson *j, const char *key, int flat) { container_open(j, key, flat, '['); }
void fs_json_array_end(FsJson *j) { container_close(j, ']'); }

void fs_json_string(FsJson *j, const char *key, const char *value)
{
  member(j, key);
  if (value)
    put_string(j->f, value);
  else
    fputs("null", j->f);
}

void fs_json_int(FsJson *j, const char *key, long long value)
{
  member(j, key);
  fprintf(j->f, "%lld", value);
}

void fs_json_uint(FsJson *j, const char *key, unsigned long long value)
{
  member(j, key);
  fprintf(j->f, "%llu", value);
}

void fs_json_number(FsJson *j, const char *key, double value)
{
  member(j, key);
  if (isfinite(value))
    fprintf(j->f, "%.6g", value);
  else
    fputs("null", j->f);
}

void fs_json_bool(FsJson *j, const char *key, int value)
{
  member(j, key);
  fputs(value ? "true" : "false", j->f);
}

void fs_json_raw(FsJson *j, const char *key, const char *text)
{
  member(j, key);
  fputs(text, j->f);
}
