/* strutil.h — small string helpers shared by the loaders and the command. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Levenshtein edit distance between a and b (bytes, case-sensitive).
 * Cost O(|a|*|b|) time, O(|b|) memory. */
guint fs_edit_distance(const char *a, const char *b);

/* Returns the candidate closest to word (borrowed pointer into candidates),
 * or NULL when none is within a small distance (max(2, len/3)).  Ties go to
 * the first candidate, so the answer is deterministic.  candidates is a
 * NULL-terminated array or, with n >= 0, an array of n strings (NULL
 * entries skipped).  An exact match is returned as is.  Cost: one
 * fs_edit_distance per candidate. */
const char *fs_did_you_mean(const char *word, const char *const *candidates, gssize n);

/* Returns a copy of text (caller frees) with ASCII control characters
 * written as C escapes ("\n", "\t", "\r", "\x01"; DEL is "\x7F"), so that
 * an error message quoting user input stays on one line.  Other bytes,
 * UTF-8 included, are copied as they are.  Linear in the length. */
char *fs_escape_controls(const char *text);

/* The words of s: the pieces between runs of any of the characters of seps,
 * without empty ones ("a  b\t" on " \t" → {"a", "b"}).  Returns a new
 * NULL-terminated vector (free with g_strfreev).  Cost: O(length). */
char **fs_split_words(const char *s, const char *seps);

/* The lines of text, as g_strsplit(text, "\n", -1) gives them (every piece
 * between newlines, empty ones included; "" gives an empty vector).
 * Returns a new NULL-terminated vector (free with g_strfreev).  Cost:
 * O(length), also under AddressSanitizer, whose strstr check measures the
 * whole rest of the text at each line and made g_strsplit quadratic there
 * (60,000 lines: 24 s of CPU). */
char **fs_split_lines(const char *text);

/* Writes contents to path atomically: a temporary file
 * "path.tmp-PID-XXXXXX" in the same folder (mode 0666 minus the umask),
 * written in full, fsync()ed, then rename()d over path.  On failure nothing
 * at path changes and the temporary file is removed; error is in
 * FS_RUNTIME_ERROR / FS_RUNTIME_ERROR_IO and names the path and the
 * system's reason.  A stop request (util/interrupt.h: SIGINT, SIGTERM)
 * before or during the write (looked at every MiB) removes the temporary
 * file and fails with FS_RUNTIME_ERROR_INTERRUPTED ("interrupted while
 * writing PATH; nothing written").  Temporary files of path left by a
 * killed run (their PID no longer runs) are removed first.  A symbolic
 * link at path is replaced, not followed.  path "-" writes to stdout
 * (flushing stdio first; not interruptible). */
gboolean fs_write_file_atomic(const char *path, const char *contents, gsize len,
                              GError **error);

/* The same atomic write in pieces, for an output built as it is written
 * (a trace): open creates the temporary file "path.tmp-PID-XXXXXX" (after
 * removing those of killed runs, as above), write appends to it, commit
 * syncs it and renames it over path, abort removes it.  Nothing appears at
 * path before commit succeeds.  A stop request (util/interrupt.h) before
 * open, during a write (looked at every MiB) or before commit fails with
 * FS_RUNTIME_ERROR_INTERRUPTED ("interrupted while writing PATH; nothing
 * written"); other failures with FS_RUNTIME_ERROR_IO.  Ownership: open
 * returns a new handle (NULL on error) that commit and abort free, commit
 * also when it fails; after a failed write the caller aborts.  path "-"
 * writes to stdout as it goes (not interruptible; commit only frees). */
typedef struct FsAtomicFile FsAtomicFile;
FsAtomicFile *fs_atomic_file_open(const char *path, GError **error);
gboolean fs_atomic_file_write(FsAtomicFile *f, const char *buf, gsize len, GError **error);
gboolean fs_atomic_file_commit(FsAtomicFile *f, GError **error);
void fs_atomic_file_abort(FsAtomicFile *f);

G_END_DECLS
