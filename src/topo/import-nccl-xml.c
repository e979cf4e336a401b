/* import-nccl-xml.c — the element tree of an NCCL topology XML: GLib's
 * GMarkup reads the text (comments, an <?xml?> declaration and a leading
 * comment block are fine) into XNode elements, each with its attributes
 * and the line and column of its '<', under a nesting guard
 * (FABRICSIM_MAX_XML_DEPTH).  What the elements mean is import-nccl.c's
 * walk; which models they name, import-nccl-models.c. */
#include <string.h>

#include "topo/import-nccl-private.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/limits.h"
#include "util/names.h"
#include "util/strutil.h"

/* See import-nccl-private.h. */
void nccl_xml_free(gpointer p)
{
  XNode *x = p;
  g_free(x->name);
  g_strfreev(x->keys);
  g_strfreev(x->vals);
  g_ptr_array_free(x->kids, TRUE);
  g_free(x);
}

typedef struct {
  XNode *root, *cur;
  const char *text;
  gsize len;
  GArray *line_start;   /* byte offset of each line's start, line 1 first */
  guint depth;
} Reader;

/* GMarkup reports the position after the start tag; moves (line, col) back
 * to the tag's '<' so that messages point at the element's start. */
static void tag_start(const Reader *r, int *line, int *col)
{
  if (*line < 1 || (guint)*line > r->line_start->len)
    return;
  gsize ls = g_array_index(r->line_start, gsize, *line - 1);
  gsize le = (guint)*line < r->line_start->len ? g_array_index(r->line_start, gsize, *line)
                                               : r->len;
  const char *p = r->text + ls;
  for (int c = 1; c < *col && p < r->text + le; c++)
    p = g_utf8_next_char(p);
  /* A stray lead byte (0xF0-0xFF) jumps up to 6 bytes: never past the line
   * (found by tests/fuzz/fuzz-nccl-xml.c: a heap-buffer-overflow read). */
  if (p > r->text + le)
    p = r->text + le;
  if (p > r->text)
    p--;          /* the position is just past the tag's '>' */
  while (p > r->text && *p != '<')
    p--;
  gsize off = (gsize)(p - r->text);
  int l = *line;
  while (l > 1 && g_array_index(r->line_start, gsize, l - 1) > off)
    l--;
  *line = l;
  *col = (int)g_utf8_strlen(r->text + g_array_index(r->line_start, gsize, l - 1),
                            (gssize)(off - g_array_index(r->line_start, gsize, l - 1))) + 1;
}

#define MAX_DEPTH 64

static void on_start(GMarkupParseContext *ctx, const char *name, const char **keys,
                     const char **vals, gpointer data, GError **error)
{
  Reader *r = data;
  /* The nesting guard: MAX_DEPTH, or $FABRICSIM_MAX_XML_DEPTH (at most 4096: the tree is
   * walked recursively). */
  guint64 limit = fs_env_limit("FABRICSIM_MAX_XML_DEPTH", MAX_DEPTH, 4096);
  if ((guint64)++r->depth > limit) {
    g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                "elements nested more than %" G_GUINT64_FORMAT " deep (FABRICSIM_MAX_XML_DEPTH "
                "raises the limit)", limit);
    return;
  }
  XNode *x = g_new0(XNode, 1);
  x->name = g_strdup(name);
  x->keys = g_strdupv((char **)keys);
  x->vals = g_strdupv((char **)vals);
  g_markup_parse_context_get_position(ctx, &x->line, &x->col);
  tag_start(r, &x->line, &x->col);
  x->kids = g_ptr_array_new_with_free_func(nccl_xml_free);
  x->parent = r->cur;
  if (r->cur == NULL) {
    if (r->root != NULL) {
      nccl_xml_free(x);
      g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                  "a second top-level element <%s>", name);
      return;
    }
    r->root = x;
  } else {
    g_ptr_array_add(r->cur->kids, x);
  }
  r->cur = x;
}

static void on_end(GMarkupParseContext *ctx, const char *name, gpointer data, GError **error)
{
  (void)ctx, (void)name, (void)error;
  Reader *r = data;
  r->depth--;
  r->cur = r->cur->parent;
}

/* See import-nccl-private.h. */
const char *nccl_attr(const XNode *x, const char *key)
{
  guint i;
  return fs_names_index((const char *const *)x->keys, G_MAXUINT, key, &i) ? x->vals[i] : NULL;
}

/* See import-nccl-private.h. */
guint nccl_pci_attr(const XNode *x, const char *key)
{
  const char *v = x != NULL ? nccl_attr(x, key) : NULL;
  if (v == NULL || !g_str_has_prefix(v, "0x"))
    return 0;
  char *end;
  guint64 n = g_ascii_strtoull(v + 2, &end, 16);
  return end != v + 2 && *end == '\0' && n <= 0xffff ? (guint)n : 0;
}

/* See import-nccl-private.h. */
XNode *nccl_xml_parse(const char *text, gsize len, const char *name, GError **error)
{
  static const GMarkupParser parser = {on_start, on_end, NULL, NULL, NULL};
  Reader r = {.text = text, .len = len, .line_start = g_array_new(FALSE, FALSE, sizeof(gsize))};
  gsize zero = 0;
  g_array_append_val(r.line_start, zero);
  for (gsize i = 0; i < len; i++)
    if (text[i] == '\n') {
      gsize next = i + 1;
      g_array_append_val(r.line_start, next);
    }
  GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, &r, NULL);
  GError *e = NULL;
  gboolean ok = g_markup_parse_context_parse(ctx, text, (gssize)len, &e) &&
                g_markup_parse_context_end_parse(ctx, &e);
  if (ok && r.root == NULL) {
    ok = FALSE;
    g_set_error(&e, G_MARKUP_ERROR, G_MARKUP_ERROR_EMPTY, "no element: expected <system>");
  }
  if (!ok) {
    int line, col;
    g_markup_parse_context_get_position(ctx, &line, &col);
    /* GMarkup's message starts with "Error on line L char C: ". */
    const char *msg = e->message;
    if (g_str_has_prefix(msg, "Error on line")) {
      const char *colon = strstr(msg, ": ");
      if (colon != NULL)
        msg = colon + 2;
    }
    g_autofree char *clean = fs_escape_controls(msg);
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, name, line, col,
                    "malformed XML: %s", clean);
    g_error_free(e);
    g_markup_parse_context_free(ctx);
    g_array_free(r.line_start, TRUE);
    if (r.root != NULL)
      nccl_xml_free(r.root);
    return NULL;
  }
  g_markup_parse_context_free(ctx);
  g_array_free(r.line_start, TRUE);
  return r.root;
}
