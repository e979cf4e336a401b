/* error.h — fabricsim's error conventions.
 *
 * Input errors (YAML, JSON, logs, XML, command line) are reported through
 * GError with one domain per module; their message already names
 * file:line:col where a position is known, and says what was expected.
 * The command maps any error to exit status 2 (bad input or usage), except
 * errors in FS_RUNTIME_ERROR, which map to 1 (the run itself failed: a
 * resource limit, a deadlock, an I/O failure on output).
 */
#pragma once

#include <stdarg.h>

#include <glib.h>

G_BEGIN_DECLS

#define FS_RUNTIME_ERROR (fs_runtime_error_quark())
GQuark fs_runtime_error_quark(void);

typedef enum {
  FS_RUNTIME_ERROR_LIMIT,    /* a resource guard (GPUs, flows, events, memory) was hit */
  FS_RUNTIME_ERROR_DEADLOCK, /* the simulation cannot make progress */
  FS_RUNTIME_ERROR_IO,       /* writing an output failed */
  FS_RUNTIME_ERROR_DEVICE,   /* no GPU or a CUDA/NCCL failure in a probe */
  FS_RUNTIME_ERROR_INTERRUPTED, /* SIGINT: the run stopped at an event boundary */
  FS_RUNTIME_ERROR_CLOCK,    /* simulated time would pass the clock's range (units.h) */
} FsRuntimeError;

/* A usage error found after option parsing (values that do not fit each
 * other: minbytes above maxbytes, a root that is not a rank): GOption's
 * domain with this code.  The command prints it as its own usage errors,
 * pointing at --help, and exits 2 (cli/commands.h: fs_cli_fail). */
#define FS_USAGE_ERROR G_OPTION_ERROR_FAILED

/* The exit status of an interrupted command (128 + SIGINT, as a shell
 * reports a process killed by Ctrl-C). */
#define FS_EXIT_INTERRUPTED 130

/* Exit status for an error: FS_EXIT_INTERRUPTED for
 * FS_RUNTIME_ERROR_INTERRUPTED, 1 for other FS_RUNTIME_ERROR, 2 for
 * everything else. */
int fs_error_exit_status(const GError *error);

/* Sets *error (if error is non-NULL) to "file:line:col: message" in
 * domain/code.  line and col are 1-based; a zero line omits ":line:col",
 * a zero col omits ":col".  The message is always one line: control
 * characters in it (say, from a quoted multi-line YAML string) are written
 * as C escapes ("\n", "\t", "\x01"). */
void fs_set_error_at(GError **error, GQuark domain, int code, const char *file,
                     int line, int col, const char *format, ...) G_GNUC_PRINTF(7, 8);

/* fs_set_error_at with the message's arguments as a va_list (ap is used
 * up), for a module's own printf-like error helper: its body is
 * va_start, this, va_end. */
void fs_set_error_at_va(GError **error, GQuark domain, int code, const char *file, int line,
                        int col, const char *format, va_list ap) G_GNUC_PRINTF(7, 0);

/* The same without a position (the message names its place itself, or the
 * caller prefixes one later with fs_error_prefix_at): *error (if non-NULL)
 * set to the message, on one line, in domain/code; ap is used up. */
void fs_set_error_va(GError **error, GQuark domain, int code, const char *format, va_list ap)
  G_GNUC_PRINTF(4, 0);

/* Prepends "file:line:col: " to an existing error's message, in place, and
 * escapes control characters in it as fs_set_error_at does. */
void fs_error_prefix_at(GError *error, const char *file, int line, int col);

G_END_DECLS
