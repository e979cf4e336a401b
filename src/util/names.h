/* names.h — the name tables of the enums that appear in YAML, JSON, the
 * command line and reports.  Each such enum comes from one X-macro list
 * (catalog.h shows the pattern); its module builds a table of the
 * spellings, indexed by value, and defines `<prefix>_name` and
 * `<prefix>_from_name` over it with FS_NAMES_DEFINE, so that every enum
 * looks its names up the same way.
 *
 *   static const char *const ecmp_names[] = { FS_ROUTE_ECMP_MODES(FS_NAMES_ENTRY) };
 *   FS_NAMES_DEFINE(FsRouteEcmp, fs_route_ecmp, ecmp_names, FS_ROUTE_ECMP_N,
 *                   fs_names_index_nocase)
 *
 * Lookups are linear: the tables hold a handful of names.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The index of name in a name table — names[0 .. n), stopping early at a
 * NULL entry, so that G_MAXUINT serves for a NULL-terminated table.
 * Returns TRUE and sets *out (out may be NULL); FALSE when name is NULL
 * or not in the table (*out untouched).  fs_names_index compares bytes
 * exactly (YAML and JSON spellings); fs_names_index_nocase ignores ASCII
 * case (command-line and NCCL_* spellings).  Linear in the table. */
gboolean fs_names_index(const char *const *names, guint n, const char *name, guint *out);
gboolean fs_names_index_nocase(const char *const *names, guint n, const char *name, guint *out);

/* The spelling of one entry X(id, str) of an X-macro list: a table of
 * the spellings in value order is { LIST(FS_NAMES_ENTRY) }. */
#define FS_NAMES_ENTRY(id, str) str,

/* Defines, for the enum Type whose spellings are names[0 .. count):
 *   const char *PREFIX_name(Type v) — names[v]; "?" after a critical
 *     warning for a value out of range (a programmer error).
 * For an enum that is written but never read back. */
#define FS_NAMES_DEFINE_NAME(Type, prefix, names, count)      \
  const char *prefix##_name(Type v)                           \
  {                                                           \
    g_return_val_if_fail((guint)v < (guint)(count), "?");     \
    return (names)[v];                                        \
  }

/* Defines, for the enum Type whose spellings are names[0 .. count):
 *   const char *PREFIX_name(Type v), as FS_NAMES_DEFINE_NAME;
 *   gboolean PREFIX_from_name(const char *s, Type *out) — the value spelt
 *     s, looked up with `lookup` (fs_names_index or fs_names_index_nocase);
 *     FALSE when s is NULL or unknown; out may be NULL. */
#define FS_NAMES_DEFINE(Type, prefix, names, count, lookup)   \
  FS_NAMES_DEFINE_NAME(Type, prefix, names, count)            \
  gboolean prefix##_from_name(const char *s, Type *out)       \
  {                                                           \
    guint i_;                                                 \
    if (!lookup((names), (count), s, &i_))                    \
      return FALSE;                                           \
    if (out != NULL)                                          \
      *out = (Type)i_;                                        \
    return TRUE;                                              \
  }

G_END_DECLS
