/* strutil.c — see strutil.h. */
#include "util/strutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "util/error.h"
#include "util/interrupt.h"

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

/* Bytes written between two looks at the stop request. */
#define WRITE_CHUNK ((gsize)1 << 20)

/* Writes all of buf to fd, retrying short writes and EINTR.  With
 * interruptible, stops (FALSE, *err = EINTR) when a stop is requested
 * before a chunk. */
static gboolean write_all(int fd, const char *buf, gsize len, gboolean interruptible, int *err)
{
  while (len > 0) {
    if (interruptible && fs_interrupt_requested()) {
      *err = EINTR;
      return FALSE;
    }
    ssize_t w = write(fd, buf, MIN(len, WRITE_CHUNK));
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

static gboolean interrupted(GError **error, const char *path)
{
  g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED,
              "interrupted while writing %s; nothing written", path);
  return FALSE;
}

/* Whether name (in path's folder) is a temporary file of
 * fs_write_file_atomic for path: "BASE.tmp-PID-XXXXXX".  *pid: its PID. */
static gboolean temp_of(const char *name, const char *base, long *pid)
{
  gsize lb = strlen(base);
  if (strncmp(name, base, lb) != 0 || strncmp(name + lb, ".tmp-", 5) != 0)
    return FALSE;
  const char *p = name + lb + 5, *q = p;
  while (g_ascii_isdigit(*q))
    q++;
  if (q == p || q - p > 9 || *q != '-' || strlen(q + 1) != 6)
    return FALSE;
  for (const char *c = q + 1; *c; c++)
    if (!g_ascii_isalnum(*c))
      return FALSE;
  *pid = strtol(p, NULL, 10);
  return *pid > 0;
}

/* Removes the temporary files a killed run left for path: those whose
 * process no longer exists (kill(pid, 0) fails with ESRCH).  A live
 * process's file may be another run writing the same output: kept. */
static void remove_stale_temps(const char *path)
{
  g_autofree char *dir = g_path_get_dirname(path);
  g_autofree char *base = g_path_get_basename(path);
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d == NULL)
    return;
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL) {
    long pid;
    if (!temp_of(name, base, &pid) || pid == (long)getpid() ||
        kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue;
    g_autofree char *full = g_build_filename(dir, name, NULL);
    g_unlink(full);
  }
  g_dir_close(d);
}

/* See strutil.h. "-" writes to stdout without a temporary. Otherwise the bytes go to a
 * temporary next to path, are synced and renamed over it, so a reader never sees half a file;
 * any failure removes the temporary and leaves the old file in place. Sets
 * FS_RUNTIME_ERROR_INTERRUPTED on an interrupt and FS_RUNTIME_ERROR_IO on an I/O failure. */
gboolean fs_write_file_atomic(const char *path, const char *contents, gsize len, GError **error)
{
  g_return_val_if_fail(path != NULL, FALSE);
  g_return_val_if_fail(contents != NULL || len == 0, FALSE);
  int err = 0;
  if (strcmp(path, "-") == 0) {
    fflush(stdout);
    if (!write_all(STDOUT_FILENO, contents, len, FALSE, &err))
      return set_io_error(error, "<stdout>", "cannot write", err);
    return TRUE;
  }
  if (fs_interrupt_requested())
    return interrupted(error, path);
  remove_stale_temps(path);
  /* The temporary file lives next to the target so that rename() is atomic;
   * its name carries our process id, so that the next run can tell a
   * leftover of a killed run (strutil.h). */
  g_autofree char *tmp = g_strdup_printf("%s.tmp-%ld-XXXXXX", path, (long)getpid());
  int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0)
    return set_io_error(error, path, "cannot create a temporary file", errno);
  /* Give the new file the mode open(path, O_CREAT, 0666) would: honour the umask. */
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) != 0)
    err = errno;
  if (err == 0)
    write_all(fd, contents, len, TRUE, &err); /* sets err on failure */
  if (err == 0 && fsync(fd) != 0)
    err = errno;
  if (close(fd) != 0 && err == 0)
    err = errno;
  if (err == 0 && g_rename(tmp, path) != 0)
    err = errno;
  if (err != 0) {
    g_unlink(tmp);
    if (err == EINTR && fs_interrupt_requested())
      return interrupted(error, path);
    return set_io_error(error, path, "cannot write", err);
  }
  return TRUE;
}
