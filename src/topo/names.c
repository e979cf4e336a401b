/* names.c — name ranges and ${expressions} (see names.h). */
#include "topo/names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo.h"
#include "util/limits.h"
#include "util/strutil.h"

/* ---- expressions: recursive descent over the text ---------------------- */

/* Deepest nesting of parentheses and unary minus (guards the stack). */
#define MAX_DEPTH 64

/* The nesting guard of a name expression: MAX_DEPTH, or $FABRICSIM_MAX_EXPR_DEPTH (at most
 * 4096: the parser recurses). */
static guint max_depth(void)
{
  static gsize once;
  static guint limit;
  if (g_once_init_enter(&once)) {
    limit = (guint)fs_env_limit("FABRICSIM_MAX_EXPR_DEPTH", MAX_DEPTH, 4096);
    g_once_init_leave(&once, 1);
  }
  return limit;
}

typedef struct {
  const char *s;      /* whole expression, for messages */
  int depth;
  const char *p;      /* cursor */
  GHashTable *params;
  GHashTable *strings; /* string parameters (char * -> char *), may be NULL */
  GError **error;
} Expr;

static void skip_space(Expr *e)
{
  while (*e->p == ' ' || *e->p == '\t')
    e->p++;
}

static gboolean expr_fail(Expr *e, const char *what)
{
  g_set_error(e->error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM, "in expression \"%s\": %s", e->s,
              what);
  return FALSE;
}

static gboolean parse_sum(Expr *e, int64_t *out);

/* Orders a GPtrArray of strings (the array holds char *, sort sees char **). */
static gint cmp_strp(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static gboolean parse_primary_inner(Expr *e, int64_t *out);

static gboolean parse_primary(Expr *e, int64_t *out)
{
  if ((guint)++e->depth > max_depth()) {
    g_autofree char *what = g_strdup_printf("nested more than %u deep (FABRICSIM_MAX_EXPR_DEPTH "
                                            "raises the limit)", max_depth());
    return expr_fail(e, what);
  }
  gboolean ok = parse_primary_inner(e, out);
  e->depth--;
  return ok;
}

/* Parses one primary of a name expression at e->p into *out: a parenthesised sum, a negated
 * primary, a decimal integer, or a parameter name from e->params (a '-' belongs to a name only
 * when a letter follows).  Advances e->p past it.  Returns FALSE through expr_fail for overflow,
 * a non-integer number, an unknown parameter (with a did-you-mean from the declared ones) or an
 * unexpected character. */
static gboolean parse_primary_inner(Expr *e, int64_t *out)
{
  skip_space(e);
  if (*e->p == '(') {
    e->p++;
    if (!parse_sum(e, out))
      return FALSE;
    skip_space(e);
    if (*e->p != ')')
      return expr_fail(e, "expected \")\"");
    e->p++;
    return TRUE;
  }
  if (*e->p == '-') {
    e->p++;
    int64_t v;
    if (!parse_primary(e, &v))
      return FALSE;
    if (v == INT64_MIN)
      return expr_fail(e, "integer overflow");
    *out = -v;
    return TRUE;
  }
  if (g_ascii_isdigit(*e->p)) {
    errno = 0;
    char *end;
    long long v = strtoll(e->p, &end, 10);
    if (errno == ERANGE)
      return expr_fail(e, "integer overflow");
    if (*end == '.' || *end == 'e' || *end == 'E')
      return expr_fail(e, "only integers are allowed");
    e->p = end;
    *out = v;
    return TRUE;
  }
  if (g_ascii_isalpha(*e->p) || *e->p == '_') {
    const char *start = e->p;
    while (g_ascii_isalnum(*e->p) || *e->p == '_' || *e->p == '-') {
      /* A '-' belongs to the name only when a letter follows ("gpus-per-node"
       * is allowed as a name, "n-1" is a subtraction). */
      if (*e->p == '-' && !g_ascii_isalpha(e->p[1]))
        break;
      e->p++;
    }
    g_autofree char *name = g_strndup(start, (gsize)(e->p - start));
    const int64_t *v = g_hash_table_lookup(e->params, name);
    const char *str = e->strings ? g_hash_table_lookup(e->strings, name) : NULL;
    if (v == NULL && str != NULL) {
      g_autofree char *msg = g_strdup_printf("parameter \"%s\" is the string \"%s\"; only "
                                             "integers take part in arithmetic (write ${%s} "
                                             "alone to insert it)", name, str, name);
      return expr_fail(e, msg);
    }
    if (v == NULL) {
      g_autofree char *msg = NULL;
      g_autoptr(GPtrArray) keys = g_ptr_array_new();
      GHashTableIter it;
      gpointer k;
      g_hash_table_iter_init(&it, e->params);
      while (g_hash_table_iter_next(&it, &k, NULL))
        g_ptr_array_add(keys, k);
      if (e->strings != NULL) {
        g_hash_table_iter_init(&it, e->strings);
        while (g_hash_table_iter_next(&it, &k, NULL))
          g_ptr_array_add(keys, k);
      }
      g_ptr_array_sort(keys, cmp_strp);
      const char *best = fs_did_you_mean(name, (const char *const *)keys->pdata,
                                         (gssize)keys->len);
      if (best)
        msg = g_strdup_printf("unknown parameter \"%s\"; did you mean \"%s\"?", name, best);
      else
        msg = g_strdup_printf("unknown parameter \"%s\"; declare it under parameters:", name);
      return expr_fail(e, msg);
    }
    *out = *v;
    return TRUE;
  }
  if (*e->p == '\0')
    return expr_fail(e, "unexpected end; expected a number, a parameter or \"(\"");
  g_autofree char *msg = g_strdup_printf("unexpected \"%c\"; expected a number, a parameter "
                                         "or \"(\"", *e->p);
  return expr_fail(e, msg);
}

static gboolean parse_product(Expr *e, int64_t *out)
{
  if (!parse_primary(e, out))
    return FALSE;
  for (;;) {
    skip_space(e);
    char op = *e->p;
    if (op != '*' && op != '/' && op != '%')
      return TRUE;
    e->p++;
    int64_t r;
    if (!parse_primary(e, &r))
      return FALSE;
    if (op == '*') {
      if (__builtin_mul_overflow(*out, r, out))
        return expr_fail(e, "integer overflow");
    } else {
      if (r == 0)
        return expr_fail(e, "division by zero");
      if (*out == INT64_MIN && r == -1)
        return expr_fail(e, "integer overflow");
      *out = op == '/' ? *out / r : *out % r;
    }
  }
}

static gboolean parse_sum(Expr *e, int64_t *out)
{
  if (!parse_product(e, out))
    return FALSE;
  for (;;) {
    skip_space(e);
    char op = *e->p;
    if (op != '+' && op != '-')
      return TRUE;
    e->p++;
    int64_t r;
    if (!parse_product(e, &r))
      return FALSE;
    gboolean ovf = op == '+' ? __builtin_add_overflow(*out, r, out)
                             : __builtin_sub_overflow(*out, r, out);
    if (ovf)
      return expr_fail(e, "integer overflow");
  }
}

static gboolean eval(const char *expr, GHashTable *params, GHashTable *strings, int64_t *out,
                     GError **error)
{
  Expr e = {expr, 0, expr, params, strings, error};
  if (!parse_sum(&e, out))
    return FALSE;
  skip_space(&e);
  if (*e.p != '\0') {
    g_autofree char *msg = g_strdup_printf("unexpected \"%s\" after the expression", e.p);
    return expr_fail(&e, msg);
  }
  return TRUE;
}

gboolean fs_topo_eval(const char *expr, GHashTable *params, int64_t *out, GError **error)
{
  return eval(expr, params, NULL, out, error);
}

/* The string parameter that expr names alone (spaces around allowed), or NULL. */
static const char *lone_string(const char *expr, GHashTable *strings)
{
  if (strings == NULL)
    return NULL;
  g_autofree char *name = g_strstrip(g_strdup(expr));
  return g_hash_table_lookup(strings, name);
}

gboolean fs_topo_subst(const char *text, GHashTable *params, char **out, GError **error)
{
  return fs_topo_subst_strings(text, params, NULL, out, error);
}

gboolean fs_topo_subst_strings(const char *text, GHashTable *params, GHashTable *strings,
                               char **out, GError **error)
{
  const char *p = strstr(text, "${");
  if (p == NULL) {
    *out = g_strdup(text);
    return TRUE;
  }
  GString *s = g_string_new(NULL);
  const char *from = text;
  while (p != NULL) {
    g_string_append_len(s, from, p - from);
    const char *close = strchr(p + 2, '}');
    if (close == NULL) {
      g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM,
                  "unterminated \"${\" in \"%s\"; expected \"}\"", text);
      g_string_free(s, TRUE);
      return FALSE;
    }
    g_autofree char *expr = g_strndup(p + 2, (gsize)(close - p - 2));
    const char *str = lone_string(expr, strings);
    int64_t v;
    if (str != NULL) {
      g_string_append(s, str);
    } else if (!eval(expr, params, strings, &v, error)) {
      g_string_free(s, TRUE);
      return FALSE;
    } else {
      g_string_append_printf(s, "%" G_GINT64_FORMAT, v);
    }
    from = close + 1;
    p = strstr(from, "${");
  }
  g_string_append(s, from);
  *out = g_string_free(s, FALSE);
  return TRUE;
}

gboolean fs_topo_parse_int(const char *text, int64_t min, int64_t max, int64_t *out,
                           GError **error)
{
  const char *p = text;
  while (*p == ' ')
    p++;
  char *end = NULL;
  errno = 0;
  long long v = (*p == '-' || g_ascii_isdigit(*p)) ? strtoll(p, &end, 10) : 0;
  if (end == NULL || end == p || errno == ERANGE) {
    g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM,
                "expected an integer, got \"%s\"", text);
    return FALSE;
  }
  while (*end == ' ')
    end++;
  if (*end != '\0') {
    g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM,
                "expected an integer, got \"%s\"", text);
    return FALSE;
  }
  if (v < min || v > max) {
    g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM,
                "%lld is out of range; expected %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT, v,
                min, max);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

/* ---- ranges ------------------------------------------------------------ */

/* One piece of a pattern: literal text, or a bracket's list of values. */
typedef struct {
  char *literal;      /* NULL for a bracket */
  GArray *values;     /* gint64 */
  int width;          /* zero-padding width, 0 for none */
} Piece;

static void piece_clear(gpointer p)
{
  Piece *x = p;
  g_free(x->literal);
  if (x->values)
    g_array_free(x->values, TRUE);
}

static gboolean range_fail(GError **error, const char *pattern, const char *what)
{
  g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, "bad name range \"%s\": %s",
              pattern, what);
  return FALSE;
}

/* Parses the inside of one bracket ("0-3,6") into piece. */
static gboolean parse_bracket(const char *pattern, const char *in, Piece *piece, GError **error)
{
  piece->values = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_auto(GStrv) items = g_strsplit(in, ",", -1);
  for (guint i = 0; items[i] != NULL; i++) {
    const char *item = g_strstrip(items[i]);
    char *end;
    if (!g_ascii_isdigit(*item))
      return range_fail(error, pattern, "expected integers like [0-7] or [0,2,4-6]");
    errno = 0;
    gint64 lo = g_ascii_strtoll(item, &end, 10), hi = lo;
    if (item[0] == '0' && g_ascii_isdigit(item[1]))
      piece->width = (int)(end - item);
    if (*end == '-') {
      const char *h = end + 1;
      if (!g_ascii_isdigit(*h))
        return range_fail(error, pattern, "expected a number after \"-\"");
      hi = g_ascii_strtoll(h, &end, 10);
    }
    if (*end != '\0' || errno == ERANGE)
      return range_fail(error, pattern, "expected integers like [0-7] or [0,2,4-6]");
    if (hi < lo)
      return range_fail(error, pattern, "a range must go up, like [0-7]");
    if ((guint64)(hi - lo) >= fs_topo_limits()->names) {
      g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_LIMIT,
                  "name range \"%s\" expands to %" G_GINT64_FORMAT " names; the limit is %"
                  G_GUINT64_FORMAT " (FABRICSIM_MAX_NAMES raises it)",
                  pattern, hi - lo + 1, fs_topo_limits()->names);
      return FALSE;
    }
    for (gint64 v = lo; v <= hi; v++)
      g_array_append_val(piece->values, v);
    if (piece->values->len > fs_topo_limits()->names) {
      g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_LIMIT,
                  "name range \"%s\" expands to more than %" G_GUINT64_FORMAT " names "
                  "(FABRICSIM_MAX_NAMES raises the limit)", pattern, fs_topo_limits()->names);
      return FALSE;
    }
  }
  if (piece->values->len == 0)
    return range_fail(error, pattern, "empty brackets; expected integers like [0-7]");
  return TRUE;
}

/* See names.h.  Also: the pattern is literal text and brackets; names come out in odometer
 * order, the rightmost bracket fastest, each number zero-padded to its bracket's width.  Errors
 * are FS_TOPO_ERROR_INVALID for bad syntax (an empty pattern, unmatched brackets) and
 * FS_TOPO_ERROR_LIMIT past the limit; nothing is appended to out then. */
gboolean fs_topo_expand(const char *pattern, GPtrArray *out, GError **error)
{
  if (*pattern == '\0')
    return range_fail(error, pattern, "a name cannot be empty");
  g_autoptr(GArray) pieces = g_array_new(FALSE, TRUE, sizeof(Piece));
  g_array_set_clear_func(pieces, piece_clear);
  const char *p = pattern;
  guint64 total = 1;
  while (*p) {
    const char *open = strchr(p, '[');
    const char *close_stray = strchr(p, ']');
    if (close_stray != NULL && (open == NULL || close_stray < open))
      return range_fail(error, pattern, "\"]\" without \"[\"");
    if (open == NULL) {
      Piece lit = {g_strdup(p), NULL, 0};
      g_array_append_val(pieces, lit);
      break;
    }
    if (open > p) {
      Piece lit = {g_strndup(p, (gsize)(open - p)), NULL, 0};
      g_array_append_val(pieces, lit);
    }
    const char *close = strchr(open, ']');
    if (close == NULL)
      return range_fail(error, pattern, "\"[\" without \"]\"");
    g_autofree char *in = g_strndup(open + 1, (gsize)(close - open - 1));
    Piece br = {NULL, NULL, 0};
    gboolean ok = parse_bracket(pattern, in, &br, error);
    g_array_append_val(pieces, br);
    if (!ok)
      return FALSE;
    total *= br.values->len;
    if (total > fs_topo_limits()->names) {
      g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_LIMIT,
                  "name range \"%s\" expands to more than %" G_GUINT64_FORMAT " names; split "
                  "the topology or use a generator (FABRICSIM_MAX_NAMES raises the limit)",
                  pattern, fs_topo_limits()->names);
      return FALSE;
    }
    p = close + 1;
  }
  /* Odometer over the brackets, rightmost fastest. */
  guint np = pieces->len;
  g_autofree guint *idx = g_new0(guint, np + 1);
  GString *s = g_string_new(NULL);
  for (guint64 k = 0; k < total; k++) {
    g_string_truncate(s, 0);
    for (guint i = 0; i < np; i++) {
      const Piece *x = &g_array_index(pieces, Piece, i);
      if (x->literal)
        g_string_append(s, x->literal);
      else
        g_string_append_printf(s, "%0*" G_GINT64_FORMAT, x->width,
                               g_array_index(x->values, gint64, idx[i]));
    }
    g_ptr_array_add(out, g_strdup(s->str));
    for (guint i = np; i-- > 0;) {
      const Piece *x = &g_array_index(pieces, Piece, i);
      if (x->literal)
        continue;
      if (++idx[i] < x->values->len)
        break;
      idx[i] = 0;
    }
  }
  g_string_free(s, TRUE);
  return TRUE;
}
