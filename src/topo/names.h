/* names.h — name ranges ("node[0-3]/gpu[0-7]") and ${parameter}
 * expressions of the topology YAML.  Private to the topo module.
 *
 * Ranges: each [...] holds comma-separated integers or inclusive a-b
 * spans ("gpu[0-3,6]"); a leading zero pads to the width of the start
 * ("port[00-15]").  The leftmost bracket varies slowest.  A pattern without
 * brackets is one name.
 *
 * Expressions: ${...} holds integers, parameter names, + - * / % and
 * parentheses, evaluated in int64 with overflow and division-by-zero
 * checks; ${name} alone may also insert a string parameter's text.  Errors carry no position: callers prefix the YAML node's.
 * All errors are in FS_TOPO_ERROR.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/* Evaluates expr with parameters from params (char * -> int64_t *). */
gboolean fs_topo_eval(const char *expr, GHashTable *params, int64_t *out, GError **error);

/* Replaces every ${expr} in text by its decimal value; caller frees *out. */
gboolean fs_topo_subst(const char *text, GHashTable *params, char **out, GError **error);

/* The same with string parameters (strings: char * -> char *, may be NULL):
 * a ${name} that holds only the name of a string parameter is replaced by
 * its text; a string parameter inside arithmetic is an error that says so.
 * Names are looked up in params first.  Cost: linear in text. */
gboolean fs_topo_subst_strings(const char *text, GHashTable *params, GHashTable *strings,
                               char **out, GError **error);

/* Parses text as a whole integer in [min, max] ("12"); error says what was
 * expected and quotes text. */
gboolean fs_topo_parse_int(const char *text, int64_t min, int64_t max, int64_t *out,
                           GError **error);

/* Expands pattern into names appended to out (a GPtrArray of char *, which
 * the caller owns and frees with g_free).  Fails on bad syntax and when
 * the expansion would exceed FS_TOPO_MAX_NAMES names. */
gboolean fs_topo_expand(const char *pattern, GPtrArray *out, GError **error);

G_END_DECLS
