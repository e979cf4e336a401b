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

struct FsAtomicFile {
  char *path;   /* the target, or "-" */
  char *tmp;    /* the temporary file; NULL for stdout */
  int fd;
};

/* See strutil.h. "-" is stdout (flushed first); else, after the stop
 * request and leftovers of killed runs, a temporary file beside path,
 * named with our process id, with the mode the umask gives a new file. */
FsAtomicFile *fs_atomic_file_open(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  if (strcmp(path, "-") == 0) {
    fflush(stdout);
    FsAtomicFile *f = g_new0(FsAtomicFile, 1);
    f->path = g_strdup(path);
    f->fd = STDOUT_FILENO;
    return f;
  }
  if (fs_interrupt_requested()) {
    interrupted(error, path);
    return NULL;
  }
  remove_stale_temps(path);
  /* The temporary file lives next to the target so that rename() is atomic;
   * its name carries our process id, so that the next run can tell a
   * leftover of a killed run (strutil.h). */
  g_autofree char *tmp = g_strdup_printf("%s.tmp-%ld-XXXXXX", path, (long)getpid());
  int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) {
    set_io_error(error, path, "cannot create a temporary file", errno);
    return NULL;
  }
  /* Give the new file the mode open(path, O_CREAT, 0666) would: honour the umask. */
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) != 0) {
    int err = errno;
    close(fd);
    g_unlink(tmp);
    set_io_error(error, path, "cannot write", err);
    return NULL;
  }
  FsAtomicFile *f = g_new0(FsAtomicFile, 1);
  f->path = g_strdup(path);
  f->tmp = g_steal_pointer(&tmp);
  f->fd = fd;
  return f;
}

/* Removes f's temporary file (if any) and frees f. */
static void atomic_file_drop(FsAtomicFile *f)
{
  if (f->tmp != NULL) {
    if (f->fd >= 0)
      close(f->fd);
    g_unlink(f->tmp);
  }
  g_free(f->tmp);
  g_free(f->path);
  g_free(f);
}

gboolean fs_atomic_file_write(FsAtomicFile *f, const char *buf, gsize len, GError **error)
{
  g_return_val_if_fail(f != NULL, FALSE);
  g_return_val_if_fail(buf != NULL || len == 0, FALSE);
  int err = 0;
  if (f->tmp == NULL) {
    if (!write_all(f->fd, buf, len, FALSE, &err))
      return set_io_error(error, "<stdout>", "cannot write", err);
    return TRUE;
  }
  if (write_all(f->fd, buf, len, TRUE, &err))
    return TRUE;
  if (err == EINTR && fs_interrupt_requested())
    return interrupted(error, f->path);
  return set_io_error(error, f->path, "cannot write", err);
}

gboolean fs_atomic_file_commit(FsAtomicFile *f, GError **error)
{
  g_return_val_if_fail(f != NULL, FALSE);
  if (f->tmp == NULL) {
    atomic_file_drop(f);
    return TRUE;
  }
  int err = 0;
  if (fs_interrupt_requested())
    err = EINTR;
  if (err == 0 && fsync(f->fd) != 0)
    err = errno;
  if (close(f->fd) != 0 && err == 0)
    err = errno;
  f->fd = -1;
  if (err == 0 && g_rename(f->tmp, f->path) != 0)
    err = errno;
  if (err == 0) {
    g_clear_pointer(&f->tmp, g_free); /* renamed: nothing to remove */
    atomic_file_drop(f);
    return TRUE;
  }
  g_autofree char *path = g_strdup(f->path);
  atomic_file_drop(f);
  if (err == EINTR && fs_interrupt_requested())
    return interrupted(error, path);
  return set_io_error(error, path, "cannot write", err);
}

void fs_atomic_file_abort(FsAtomicFile *f)
{
  if (f != NULL)
    atomic_file_drop(f);
}

/* See strutil.h: one fs_atomic_file_open, write and commit. */
gboolean fs_write_file_atomic(const char *path, const char *contents, gsize len, GError **error)
{
  g_return_val_if_fail(path != NULL, FALSE);
  g_return_val_if_fail(contents != NULL || len == 0, FALSE);
  FsAtomicFile *f = fs_atomic_file_open(path, error);
  if (f == NULL)
    return FALSE;
  if (!fs_atomic_file_write(f, contents, len, error)) {
    fs_atomic_file_abort(f);
    return FALSE;
  }
  return fs_atomic_file_commit(f, error);
}

char **fs_split_lines(const char *text)
{
  g_return_val_if_fail(text != NULL, NULL);
  GPtrArray *lines = g_ptr_array_new();
  if (*text != '\0')
    for (const char *p = text;;) {
      const char *nl = strchr(p, '\n');
      if (nl == NULL) {
        g_ptr_array_add(lines, g_strdup(p));
        break;
      }
      g_ptr_array_add(lines, g_strndup(p, (gsize)(nl - p)));
      p = nl + 1;
    }
  g_ptr_array_add(lines, NULL);
  return (char **)g_ptr_array_free(lines, FALSE);
}

char **fs_split_words(const char *s, const char *seps)
{
  char **parts = g_strsplit_set(s, seps, -1);
  guint j = 0;
  for (guint i = 0; parts[i]; i++) {
    if (parts[i][0] != '\0')
      parts[j++] = parts[i];
    else
      g_free(parts[i]);
  }
  parts[j] = NULL;
  return parts;
}
