/* strutil.c — see strutil.h. */
#include "util/strutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "util/error.h"

/* Two rows of the classic dynamic programme: O(|a|*|b|) time, O(|b|) memory. */
guint fs_edit_distance(const char *a, const char *b)
{
  g_return_val_if_fail(a != NULL && b != NULL, 0);
  gsize la = strlen(a), lb = strlen(b);
  guint *prev = g_new(guint, lb + 1);
  guint *cur = g_new(guint, lb + 1);
  for (gsize j = 0; j <= lb; j++)
    prev[j] = (guint)j;
  for (gsize i = 1; i <= la; i++) {
    cur[0] = (guint)i;
    for (gsize j = 1; j <= lb; j++) {
      guint cost = (a[i - 1] == b[j - 1]) ? 0 : 1;
      guint best = prev[j - 1] + cost;          /* substitute or keep */
      best = MIN(best, prev[j] + 1);            /* delete from a */
      best = MIN(best, cur[j - 1] + 1);         /* insert into a */
      cur[j] = best;
    }
    guint *t = prev;
    prev = cur;
    cur = t;
  }
  guint d = prev[lb];
  g_free(prev);
  g_free(cur);
  return d;
}

const char *fs_did_you_mean(const char *word, const char *const *candidates, gssize n)
{
  g_return_val_if_fail(word != NULL, NULL);
  if (candidates == NULL)
    return NULL;
  gsize lw = strlen(word);
  guint limit = MAX(2u, (guint)(lw / 3));
  const char *best = NULL;
  guint best_d = G_MAXUINT;
  for (gssize i = 0; n < 0 ? candidates[i] != NULL : i < n; i++) {
    if (candidates[i] == NULL)
      continue;
    /* The distance is at least the difference in length: skip hopeless
     * candidates without the quadratic computation. */
    gsize lc = strlen(candidates[i]);
    if ((lc > lw ? lc - lw : lw - lc) > limit)
      continue;
    guint d = fs_edit_distance(word, candidates[i]);
    if (d < best_d) {
      best_d = d;
      best = candidates[i];
    }
  }
  return (best != NULL && best_d <= limit) ? best : NULL;
}

char *fs_escape_controls(const char *text)
{
  g_return_val_if_fail(text != NULL, NULL);
  GString *s = g_string_sized_new(strlen(text) + 8);
  for (const char *p = text; *p != '\0'; p++) {
    if (*p == '\n')
      g_string_append(s, "\\n");
    else if (*p == '\t')
      g_string_append(s, "\\t");
    else if (*p == '\r')
      g_string_append(s, "\\r");
    else if (g_ascii_iscntrl(*p))
      g_string_append_printf(s, "\\x%02X", (guchar)*p);
    else
      g_string_append_c(s, *p);
  }
  return g_string_free(s, FALSE);
}

static gboolean set_io_error(GError **error, const char *path, const char *what, int err)
{
  g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_IO, "%s: %s: %s", path, what, g_strerror(err));
  return FALSE;
}

/* Writes all of buf to fd, retrying short writes and EINTR. */
static gboolean write_all(int fd, const char *buf, gsize len, int *err)
{
  while (len > 0) {
    ssize_t w = write(fd, buf, len);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      *err = errno;
      return FALSE;
    }
    buf += w;
    len -= (gsize)w;
  }
  return TRUE;
}

gboolean fs_write_file_atomic(const char *path, const char *contents, gsize len, GError **error)
{
  g_return_val_if_fail(path != NULL, FALSE);
  g_return_val_if_fail(contents != NULL || len == 0, FALSE);
  int err = 0;
  if (strcmp(path, "-") == 0) {
    fflush(stdout);
    if (!write_all(STDOUT_FILENO, contents, len, &err))
      return set_io_error(error, "<stdout>", "cannot write", err);
    return TRUE;
  }
  /* The temporary file lives next to the target so that rename() is atomic. */
  g_autofree char *tmp = g_strdup_printf("%s.XXXXXX", path);
  int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0)
    return set_io_error(error, path, "cannot create a temporary file", errno);
  /* Give the new file the mode open(path, O_CREAT, 0666) would: honour the umask. */
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) != 0)
    err = errno;
  if (err == 0)
    write_all(fd, contents, len, &err); /* sets err on failure */
  if (err == 0 && fsync(fd) != 0)
    err = errno;
  if (close(fd) != 0 && err == 0)
    err = errno;
  if (err == 0 && g_rename(tmp, path) != 0)
    err = errno;
  if (err != 0) {
    g_unlink(tmp);
    return set_io_error(error, path, "cannot write", err);
  }
  return TRUE;
}
