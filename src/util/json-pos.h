/* json-pos.h — JSON input with positions: loading a file through jansson
 * with file:line:col errors, and the line and column of every value by
 * its path, for messages about values that parsed but mean nothing
 * ("$.summary.launch.async_us: expected a number").
 *
 * jansson reports positions only for syntax errors, so once it has accepted a
 * text, a small scanner walks the same text once and records where each
 * value starts, keyed by its path: "$" for the root, ".key" for a member
 * (keys with characters other than letters, digits and '_' are written
 * ["key"]), "[i]" for an array element.  A key that occurs twice keeps its
 * first position.
 *
 * Ownership: FsJsonDoc owns the jansson tree, the text and the index; the
 * json_t returned by fs_json_doc_root is borrowed.  Errors are in
 * FS_JSON_ERROR.  Cost: jansson's parse; the scanner, linear in the text
 * with one hash entry per value, runs on the first position query
 * (fs_json_doc_position, _key_position, _literal, _error), so a document
 * that is never asked for one does not pay for it.  That first query
 * fills the index: queries on one document are not thread-safe.
 */
#pragma once

#include <glib.h>
#include <jansson.h>

G_BEGIN_DECLS

#define FS_JSON_ERROR (fs_json_error_quark())
GQuark fs_json_error_quark(void);

typedef enum {
  FS_JSON_ERROR_SYNTAX, /* not JSON (jansson's message, with its position) */
  FS_JSON_ERROR_IO,     /* the file could not be read or is too large */
} FsJsonError;

/* The largest JSON file fs_json_doc_load reads: the input-file guard
 * (util/limits.h fs_limit_file_bytes: 256 MiB, $FABRICSIM_MAX_FILE_BYTES). */

typedef struct FsJsonDoc FsJsonDoc;

/* Reads and parses path (duplicate keys are a syntax error).  NULL with
 * "path:line:col: message" on failure. */
FsJsonDoc *fs_json_doc_load(const char *path, GError **error);
/* The same from text; name stands for the file in messages. */
FsJsonDoc *fs_json_doc_parse(const char *text, gsize len, const char *name, GError **error);
void fs_json_doc_free(FsJsonDoc *doc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsJsonDoc, fs_json_doc_free)

json_t *fs_json_doc_root(const FsJsonDoc *doc);
const char *fs_json_doc_name(const FsJsonDoc *doc);

/* Line and column (1-based) where the value at path starts.  A path that
 * was not recorded (a member that is absent) falls back to its longest
 * recorded prefix, so "$.a.missing" gives the position of "$.a".  Always
 * succeeds: the root is at least recorded. */
void fs_json_doc_position(const FsJsonDoc *doc, const char *path, int *line, int *col);

/* Line and column (1-based) where the key of member path is written
 * ("$.a.b": the position of "b" inside $.a).  FALSE when path is not a
 * member of an object. */
gboolean fs_json_doc_key_position(const FsJsonDoc *doc, const char *path, int *line, int *col);

/* The text of the value at path as written in the file: a number's literal
 * ("3e7", "-0.5"), for messages that quote it.  NULL when path was not
 * recorded.  Caller frees.  Cost: the literal's length. */
char *fs_json_doc_literal(const FsJsonDoc *doc, const char *path);

/* Sets error to "name:line:col: path: message" in domain/code, with the
 * position of path. */
void fs_json_doc_error(const FsJsonDoc *doc, GError **error, GQuark domain, int code,
                       const char *path, const char *format, ...) G_GNUC_PRINTF(6, 7);

/* Appends the path of member key of parent (".key" or ["key"]).  Caller
 * frees. */
char *fs_json_path_member(const char *parent, const char *key);
/* Appends "[i]".  Caller frees. */
char *fs_json_path_index(const char *parent, gsize i);

G_END_DECLS
