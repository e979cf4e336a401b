/* limits.h — resource limits that the environment may override.
 *
 * fabricsim bounds what one run may build or simulate (topology names,
 * nodes and links, workload layers, flows in a flow list, events, the
 * sizes of a `coll` sweep, the designs a `plan` simulates) so that a typo
 * gives an error instead of hours of work or swapping.  Each bound has a
 * default in its module and an environment variable FABRICSIM_MAX_* that
 * replaces it; this is the one reader of those variables.
 *
 * Errors: a value that is not a decimal integer from 1 to the ceiling is
 * ignored with one warning line on stderr ("fabricsim: ignoring VAR=…"),
 * and the default applies.  The caller decides whether to read once
 * (g_once) or on each use.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The value of environment variable var when it is a decimal integer from
 * 1 to ceiling; fallback when it is unset or empty, or (with a warning on
 * stderr) anything else. */
guint64 fs_env_limit(const char *var, guint64 fallback, guint64 ceiling);

/* The input-file guard that the YAML, JSON and nccl-tests log readers
 * share: $FABRICSIM_MAX_FILE_BYTES, default FS_MAX_FILE_BYTES (256 MiB),
 * at most 2^40.  Read on each call. */
#define FS_MAX_FILE_BYTES ((guint64)256 << 20)
guint64 fs_limit_file_bytes(void);

/* "N MiB" when bytes is a whole number of MiB, else "N bytes" (for the
 * guards' messages).  Caller frees. */
char *fs_limit_bytes_text(guint64 bytes);

G_END_DECLS
