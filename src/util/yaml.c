/* yaml.c — see yaml.h.
 *
 * The loader reads libyaml's event stream (yaml_parser_parse) and builds
 * the tree itself, so that it controls every limit: a stack of open
 * collections (at most FS_YAML_MAX_DEPTH deep), a table of anchors, and a
 * running count of nodes in which an alias counts as the whole subtree it
 * stands for.  Nodes, pointer arrays and strings live in memory owned by
 * the document (a bump arena and a GStringChunk), freed in one go.
 */
#include "util/yaml.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "util/error.h"
#include "util/strutil.h"

G_DEFINE_QUARK(fs-yaml-error-quark, fs_yaml_error)

/* Largest file fs_yaml_load_file reads (a guard against reading a disk image). */
#define MAX_FILE_BYTES ((gsize)256 * 1024 * 1024)
#define ARENA_BLOCK 65536

/* A node with what the limits need to know about the subtree below it. */
typedef struct {
  FsYamlNode pub;     /* first, so a FsYamlNode * is a Node * */
  guint64 weight;     /* nodes in the subtree, aliases expanded */
  guint height;       /* collections on the longest path down (0 for a scalar) */
} Node;

struct FsYamlDoc {
  char *name;
  GStringChunk *strings;
  GPtrArray *blocks;  /* arena blocks (g_free) */
  char *cursor;       /* free space in the last block */
  gsize left;
  FsYamlNode *root;
};

/* Bump allocation from the document's arena, 8-byte aligned, zeroed. */
static void *arena_alloc(FsYamlDoc *doc, gsize size)
{
  size = (size + 7) & ~(gsize)7;
  if (size > ARENA_BLOCK / 4) {
    void *p = g_malloc0(size);
    g_ptr_array_add(doc->blocks, p);
    return p;
  }
  if (size > doc->left) {
    doc->cursor = g_malloc0(ARENA_BLOCK);
    doc->left = ARENA_BLOCK;
    g_ptr_array_add(doc->blocks, doc->cursor);
  }
  void *p = doc->cursor;
  doc->cursor += size;
  doc->left -= size;
  return p;
}

static FsYamlDoc *doc_new(const char *name)
{
  FsYamlDoc *doc = g_new0(FsYamlDoc, 1);
  doc->name = g_strdup(name ? name : "<input>");
  doc->strings = g_string_chunk_new(4096);
  doc->blocks = g_ptr_array_new_with_free_func(g_free);
  return doc;
}

void fs_yaml_doc_free(FsYamlDoc *doc)
{
  if (doc == NULL)
    return;
  g_string_chunk_free(doc->strings);
  g_ptr_array_free(doc->blocks, TRUE);
  g_free(doc->name);
  g_free(doc);
}

FsYamlNode *fs_yaml_doc_root(FsYamlDoc *doc)
{
  g_return_val_if_fail(doc != NULL, NULL);
  return doc->root;
}

const char *fs_yaml_doc_name(FsYamlDoc *doc)
{
  g_return_val_if_fail(doc != NULL, NULL);
  return doc->name;
}

/* Loading ---------------------------------------------------------------- */

/* One open collection. */
typedef struct {
  Node *node;
  GPtrArray *keys;       /* maps only */
  GPtrArray *values;
  GHashTable *seen;      /* maps: key text -> first key node (borrowed) */
  Node *pending_key;     /* maps: a key waiting for its value */
  yaml_mark_t start;     /* where the collection starts */
  char *anchor;          /* registered when the collection closes */
} Frame;

typedef struct {
  FsYamlDoc *doc;
  const char *text;
  gsize len;
  GArray *stack;         /* of Frame */
  GHashTable *anchors;   /* name (owned) -> Node * */
  guint64 total;         /* nodes so far, aliases expanded */
  int documents;
} Loader;

static void frame_clear(Frame *f)
{
  if (f->keys)
    g_ptr_array_free(f->keys, TRUE);
  if (f->values)
    g_ptr_array_free(f->values, TRUE);
  if (f->seen)
    g_hash_table_destroy(f->seen);
  g_free(f->anchor);
  memset(f, 0, sizeof *f);
}

static gboolean load_error(Loader *ld, GError **error, int code, const yaml_mark_t *mark,
                           const char *format, ...) G_GNUC_PRINTF(5, 6);
static gboolean load_error(Loader *ld, GError **error, int code, const yaml_mark_t *mark,
                           const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  fs_set_error_at(error, FS_YAML_ERROR, code, ld->doc->name, (int)mark->line + 1,
                  (int)mark->column + 1, "%s", msg);
  return FALSE;
}

/* Line and column (1-based, in characters) of a byte offset into the text. */
static void offset_position(const char *text, gsize len, gsize offset, int *line, int *col)
{
  if (offset > len)
    offset = len;
  int l = 1, c = 1;
  for (gsize i = 0; i < offset; i++) {
    if (text[i] == '\n') {
      l++;
      c = 1;
    } else if (((guchar)text[i] & 0xC0) != 0x80) {
      c++;
    }
  }
  *line = l;
  *col = c;
}

/* The byte at a 0-based line and character column of the text, or '\0'. */
static char char_at(const char *text, gsize len, gsize line, gsize column)
{
  gsize i = 0;
  for (gsize l = 0; l < line && i < len; i++)
    if (text[i] == '\n')
      l++;
  for (gsize c = 0; c < column && i < len; c++) {
    i++;
    while (i < len && ((guchar)text[i] & 0xC0) == 0x80)
      i++;
  }
  return i < len ? text[i] : '\0';
}

/* Turns libyaml's error state into "file:line:col: problem (context)". */
static void parser_error(Loader *ld, const yaml_parser_t *parser, GError **error)
{
  const char *problem = parser->problem ? parser->problem : "cannot parse the YAML";
  if (parser->error == YAML_MEMORY_ERROR)
    g_error("out of memory while parsing %s", ld->doc->name);
  if (parser->error == YAML_READER_ERROR) {
    int line, col;
    offset_position(ld->text, ld->len, parser->problem_offset, &line, &col);
    if (parser->problem_value >= 0)
      fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_SYNTAX, ld->doc->name, line, col,
                      "%s (byte 0x%02X); YAML files must be UTF-8 text", problem,
                      (unsigned)parser->problem_value & 0xFFu);
    else
      fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_SYNTAX, ld->doc->name, line, col,
                      "%s; YAML files must be UTF-8 text", problem);
    return;
  }
  int line = (int)parser->problem_mark.line + 1, col = (int)parser->problem_mark.column + 1;
  /* libyaml's complaint about a tab does not say "tab". */
  const char *hint = "";
  if (char_at(ld->text, ld->len, parser->problem_mark.line, parser->problem_mark.column) == '\t')
    hint = "; YAML does not allow tabs for indentation";
  if (parser->context != NULL)
    fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_SYNTAX, ld->doc->name, line, col,
                    "%s (%s at line %d, column %d)%s", problem, parser->context,
                    (int)parser->context_mark.line + 1, (int)parser->context_mark.column + 1, hint);
  else
    fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_SYNTAX, ld->doc->name, line, col, "%s%s",
                    problem, hint);
}

static Node *node_new(Loader *ld, FsYamlKind kind, const yaml_mark_t *mark)
{
  Node *n = arena_alloc(ld->doc, sizeof(Node));
  n->pub.kind = kind;
  n->pub.file = ld->doc->name;
  n->pub.line = (int)mark->line + 1;
  n->pub.col = (int)mark->column + 1;
  n->pub.value = NULL;
  n->weight = 1;
  return n;
}

/* Counts weight more nodes against FS_YAML_MAX_NODES. */
static gboolean count_nodes(Loader *ld, guint64 weight, const yaml_mark_t *mark, GError **error)
{
  if (weight > FS_YAML_MAX_NODES || ld->total + weight > FS_YAML_MAX_NODES)
    return load_error(ld, error, FS_YAML_ERROR_LIMIT, mark,
                      "the document has more than %d nodes (aliases counted as copies); "
                      "is an alias expanding too much?",
                      FS_YAML_MAX_NODES);
  ld->total += weight;
  return TRUE;
}

static void register_anchor(Loader *ld, const char *name, Node *n)
{
  g_hash_table_replace(ld->anchors, g_strdup(name), n);
}

/* Attaches a finished node (scalar, alias target or closed collection) to
 * the open collection, or makes it the root.  at is where it appears in the
 * text (for an alias, the alias, not the anchored node), for messages. */
static gboolean attach(Loader *ld, Node *n, const yaml_mark_t *at, GError **error)
{
  if (ld->stack->len == 0) {
    ld->doc->root = &n->pub;
    return TRUE;
  }
  Frame *f = &g_array_index(ld->stack, Frame, ld->stack->len - 1);
  f->node->weight += n->weight;
  f->node->height = MAX(f->node->height, n->height + 1);
  if (f->node->pub.kind == FS_YAML_SEQ) {
    g_ptr_array_add(f->values, n);
    return TRUE;
  }
  if (f->pending_key != NULL) {
    g_ptr_array_add(f->keys, f->pending_key);
    g_ptr_array_add(f->values, n);
    f->pending_key = NULL;
    return TRUE;
  }
  /* n is a key. */
  if (n->pub.kind != FS_YAML_SCALAR) {
    return load_error(ld, error, FS_YAML_ERROR_SYNTAX, at, "a mapping key must be a scalar, got %s",
                      fs_yaml_kind_name(&n->pub));
  }
  Node *first = g_hash_table_lookup(f->seen, n->pub.value);
  if (first != NULL) {
    return load_error(ld, error, FS_YAML_ERROR_SYNTAX, at,
                      "duplicate key \"%s\" (first defined at line %d, column %d)", n->pub.value,
                      first->pub.line, first->pub.col);
  }
  g_hash_table_insert(f->seen, (gpointer)n->pub.value, n);
  f->pending_key = n;
  return TRUE;
}

static gboolean on_scalar(Loader *ld, const yaml_event_t *ev, GError **error)
{
  const yaml_mark_t *mark = &ev->start_mark;
  if (!count_nodes(ld, 1, mark, error))
    return FALSE;
  Node *n = node_new(ld, FS_YAML_SCALAR, mark);
  const char *value = (const char *)ev->data.scalar.value;
  gsize length = ev->data.scalar.length;
  if (memchr(value, '\0', length) != NULL)
    return load_error(ld, error, FS_YAML_ERROR_SYNTAX, mark,
                      "a scalar contains a NUL character (\\0), which fabricsim cannot read");
  const char *tag = (const char *)ev->data.scalar.tag;
  gboolean plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
  n->pub.quoted = !plain || (tag != NULL && strcmp(tag, YAML_STR_TAG) == 0);
  n->pub.is_null = !n->pub.quoted &&
                   (length == 0 || strcmp(value, "~") == 0 || strcmp(value, "null") == 0 ||
                    strcmp(value, "Null") == 0 || strcmp(value, "NULL") == 0);
  n->pub.value = n->pub.is_null ? g_string_chunk_insert_const(ld->doc->strings, "")
                                : g_string_chunk_insert_len(ld->doc->strings, value, (gssize)length);
  if (ev->data.scalar.anchor != NULL)
    register_anchor(ld, (const char *)ev->data.scalar.anchor, n);
  return attach(ld, n, mark, error);
}

static gboolean on_alias(Loader *ld, const yaml_event_t *ev, GError **error)
{
  const yaml_mark_t *mark = &ev->start_mark;
  const char *name = (const char *)ev->data.alias.anchor;
  Node *target = g_hash_table_lookup(ld->anchors, name);
  if (target == NULL) {
    for (guint i = 0; i < ld->stack->len; i++) {
      const Frame *f = &g_array_index(ld->stack, Frame, i);
      if (f->anchor != NULL && strcmp(f->anchor, name) == 0)
        return load_error(ld, error, FS_YAML_ERROR_SYNTAX, mark,
                          "alias *%s refers to the node that contains it (a cycle)", name);
    }
    return load_error(ld, error, FS_YAML_ERROR_SYNTAX, mark,
                      "undefined alias *%s: no anchor &%s appears before it", name, name);
  }
  if (ld->stack->len + target->height > FS_YAML_MAX_DEPTH)
    return load_error(ld, error, FS_YAML_ERROR_LIMIT, mark,
                      "alias *%s makes the document nest deeper than %d levels", name,
                      FS_YAML_MAX_DEPTH);
  if (!count_nodes(ld, target->weight, mark, error))
    return FALSE;
  return attach(ld, target, mark, error);
}

static gboolean on_start(Loader *ld, const yaml_event_t *ev, FsYamlKind kind, GError **error)
{
  const yaml_mark_t *mark = &ev->start_mark;
  if (ld->stack->len >= FS_YAML_MAX_DEPTH)
    return load_error(ld, error, FS_YAML_ERROR_LIMIT, mark,
                      "the document nests deeper than %d levels", FS_YAML_MAX_DEPTH);
  if (!count_nodes(ld, 1, mark, error))
    return FALSE;
  Frame f = {0};
  f.node = node_new(ld, kind, mark);
  f.node->height = 1;
  f.start = *mark;
  f.values = g_ptr_array_new();
  const yaml_char_t *anchor;
  if (kind == FS_YAML_MAP) {
    f.keys = g_ptr_array_new();
    f.seen = g_hash_table_new(g_str_hash, g_str_equal);
    anchor = ev->data.mapping_start.anchor;
  } else {
    anchor = ev->data.sequence_start.anchor;
  }
  f.anchor = g_strdup((const char *)anchor);
  g_array_append_val(ld->stack, f);
  return TRUE;
}

static gboolean on_end(Loader *ld, GError **error)
{
  g_assert(ld->stack->len > 0);
  Frame f = g_array_index(ld->stack, Frame, ld->stack->len - 1);
  g_array_set_size(ld->stack, ld->stack->len - 1);
  Node *n = f.node;
  n->pub.n = f.values->len;
  if (f.values->len > 0) {
    n->pub.values = arena_alloc(ld->doc, sizeof(FsYamlNode *) * f.values->len);
    memcpy(n->pub.values, f.values->pdata, sizeof(FsYamlNode *) * f.values->len);
    if (f.keys != NULL) {
      n->pub.keys = arena_alloc(ld->doc, sizeof(FsYamlNode *) * f.keys->len);
      memcpy(n->pub.keys, f.keys->pdata, sizeof(FsYamlNode *) * f.keys->len);
    }
  }
  if (f.anchor != NULL)
    register_anchor(ld, f.anchor, n);
  yaml_mark_t start = f.start;
  frame_clear(&f);
  return attach(ld, n, &start, error);
}

/* Runs the event loop over ld->text.  Fills ld->doc->root. */
static gboolean load_events(Loader *ld, GError **error)
{
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    g_error("out of memory initialising the YAML parser");
  yaml_parser_set_input_string(&parser, (const unsigned char *)ld->text, ld->len);
  yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
  gboolean ok = TRUE, done = FALSE;
  while (ok && !done) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev)) {
      parser_error(ld, &parser, error);
      ok = FALSE;
      break;
    }
    switch (ev.type) {
    case YAML_STREAM_END_EVENT:
      done = TRUE;
      break;
    case YAML_DOCUMENT_START_EVENT:
      if (++ld->documents > 1)
        ok = load_error(ld, error, FS_YAML_ERROR_SYNTAX, &ev.start_mark,
                        "a second YAML document starts here; a fabricsim file holds one document");
      break;
    case YAML_SCALAR_EVENT:
      ok = on_scalar(ld, &ev, error);
      break;
    case YAML_ALIAS_EVENT:
      ok = on_alias(ld, &ev, error);
      break;
    case YAML_SEQUENCE_START_EVENT:
      ok = on_start(ld, &ev, FS_YAML_SEQ, error);
      break;
    case YAML_MAPPING_START_EVENT:
      ok = on_start(ld, &ev, FS_YAML_MAP, error);
      break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
      ok = on_end(ld, error);
      break;
    default:
      break;
    }
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&parser);
  return ok;
}

FsYamlDoc *fs_yaml_load_string(const char *text, gssize len, const char *name, GError **error)
{
  g_return_val_if_fail(text != NULL || len == 0, NULL);
  Loader ld = {0};
  ld.doc = doc_new(name);
  ld.text = text ? text : "";
  ld.len = len < 0 ? strlen(text) : (gsize)len;
  ld.stack = g_array_new(FALSE, TRUE, sizeof(Frame));
  ld.anchors = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  gboolean ok = load_events(&ld, error);
  for (guint i = 0; i < ld.stack->len; i++)
    frame_clear(&g_array_index(ld.stack, Frame, i));
  g_array_free(ld.stack, TRUE);
  g_hash_table_destroy(ld.anchors);
  if (!ok) {
    fs_yaml_doc_free(ld.doc);
    return NULL;
  }
  return ld.doc;
}

FsYamlDoc *fs_yaml_load_file(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_IO, path, 0, 0, "cannot open: %s",
                    g_strerror(err));
    return NULL;
  }
  GByteArray *buf = g_byte_array_new();
  guint8 chunk[65536];
  int err = 0;
  for (;;) {
    ssize_t r = read(fd, chunk, sizeof chunk);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      err = errno;
      break;
    }
    if (r == 0)
      break;
    if (buf->len + (gsize)r > MAX_FILE_BYTES) {
      close(fd);
      g_byte_array_free(buf, TRUE);
      fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_LIMIT, path, 0, 0,
                      "the file is larger than %u MiB; is it really a YAML input?",
                      (unsigned)(MAX_FILE_BYTES >> 20));
      return NULL;
    }
    g_byte_array_append(buf, chunk, (guint)r);
  }
  close(fd);
  if (err != 0) {
    g_byte_array_free(buf, TRUE);
    fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_IO, path, 0, 0, "cannot read: %s",
                    g_strerror(err));
    return NULL;
  }
  FsYamlDoc *doc = fs_yaml_load_string((const char *)buf->data, (gssize)buf->len, path, error);
  g_byte_array_free(buf, TRUE);
  return doc;
}

/* Errors and access ------------------------------------------------------- */

void fs_yaml_error(GError **error, const FsYamlNode *node, const char *format, ...)
{
  if (error == NULL)
    return;
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  if (node == NULL)
    fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_SCHEMA, NULL, 0, 0, "%s", msg);
  else
    fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_SCHEMA, node->file, node->line, node->col,
                    "%s", msg);
}

const char *fs_yaml_kind_name(const FsYamlNode *node)
{
  if (node == NULL)
    return "nothing";
  switch (node->kind) {
  case FS_YAML_MAP:
    return "a mapping";
  case FS_YAML_SEQ:
    return "a list";
  case FS_YAML_SCALAR:
    return node->is_null ? "an empty value" : "a string";
  }
  return "an unknown node";
}

/* "a mapping", "an empty value" or the scalar in quotes, for "got ...". */
static char *describe(const FsYamlNode *node)
{
  if (node != NULL && node->kind == FS_YAML_SCALAR && !node->is_null)
    return g_strdup_printf("\"%s\"", node->value);
  return g_strdup(fs_yaml_kind_name(node));
}

FsYamlNode *fs_yaml_map_get(const FsYamlNode *map, const char *key)
{
  g_return_val_if_fail(key != NULL, NULL);
  if (map == NULL || map->kind != FS_YAML_MAP)
    return NULL;
  for (guint i = 0; i < map->n; i++)
    if (strcmp(map->keys[i]->value, key) == 0)
      return map->values[i];
  return NULL;
}

gboolean fs_yaml_require_map(const FsYamlNode *node, GError **error)
{
  g_return_val_if_fail(node != NULL, FALSE);
  if (node->kind == FS_YAML_MAP)
    return TRUE;
  g_autofree char *got = describe(node);
  fs_yaml_error(error, node, "expected a mapping, got %s", got);
  return FALSE;
}

gboolean fs_yaml_require_seq(const FsYamlNode *node, GError **error)
{
  g_return_val_if_fail(node != NULL, FALSE);
  if (node->kind == FS_YAML_SEQ)
    return TRUE;
  g_autofree char *got = describe(node);
  fs_yaml_error(error, node, "expected a list, got %s", got);
  return FALSE;
}

gboolean fs_yaml_check_keys(const FsYamlNode *map, const char *const *allowed, const char *what,
                            GError **error)
{
  g_return_val_if_fail(map != NULL && allowed != NULL, FALSE);
  if (!fs_yaml_require_map(map, error))
    return FALSE;
  for (guint i = 0; i < map->n; i++) {
    const FsYamlNode *key = map->keys[i];
    gboolean known = FALSE;
    for (const char *const *a = allowed; *a != NULL && !known; a++)
      known = strcmp(*a, key->value) == 0;
    if (known)
      continue;
    const char *guess = fs_did_you_mean(key->value, allowed, -1);
    if (guess != NULL) {
      fs_yaml_error(error, key, "unknown key \"%s\" in %s; did you mean \"%s\"?", key->value, what, guess);
    } else {
      g_autofree char *list = g_strjoinv(", ", (char **)allowed);
      fs_yaml_error(error, key, "unknown key \"%s\" in %s; known keys: %s", key->value, what, list);
    }
    return FALSE;
  }
  return TRUE;
}

FsYamlNode *fs_yaml_require_key(const FsYamlNode *map, const char *key, const char *what,
                                GError **error)
{
  g_return_val_if_fail(map != NULL && key != NULL, NULL);
  if (!fs_yaml_require_map(map, error))
    return NULL;
  FsYamlNode *v = fs_yaml_map_get(map, key);
  if (v == NULL)
    fs_yaml_error(error, map, "missing key \"%s\" in %s", key, what);
  return v;
}

/* Typed getters ------------------------------------------------------------ */

/* The text of a non-null scalar, or NULL with "expected <expect>, got ...". */
static const char *scalar_text(const FsYamlNode *node, const char *expect, GError **error)
{
  g_return_val_if_fail(node != NULL, NULL);
  if (node->kind == FS_YAML_SCALAR && !node->is_null)
    return node->value;
  g_autofree char *got = describe(node);
  fs_yaml_error(error, node, "expected %s, got %s", expect, got);
  return NULL;
}

/* Re-raises a units parser error at node's position, in FS_YAML_ERROR_SCHEMA. */
static gboolean units_error(const FsYamlNode *node, GError *local, GError **error)
{
  fs_yaml_error(error, node, "%s", local->message);
  g_error_free(local);
  return FALSE;
}

gboolean fs_yaml_get_string(const FsYamlNode *node, const char **out, GError **error)
{
  g_return_val_if_fail(out != NULL, FALSE);
  const char *s = scalar_text(node, "a string", error);
  if (s == NULL)
    return FALSE;
  *out = s;
  return TRUE;
}

gboolean fs_yaml_get_bool(const FsYamlNode *node, gboolean *out, GError **error)
{
  g_return_val_if_fail(out != NULL, FALSE);
  static const char *const yes[] = {"true", "yes", "on"};
  static const char *const no[] = {"false", "no", "off"};
  const char *s = scalar_text(node, "true or false", error);
  if (s == NULL)
    return FALSE;
  if (!node->quoted) {
    for (guint i = 0; i < G_N_ELEMENTS(yes); i++) {
      if (g_ascii_strcasecmp(s, yes[i]) == 0) {
        *out = TRUE;
        return TRUE;
      }
      if (g_ascii_strcasecmp(s, no[i]) == 0) {
        *out = FALSE;
        return TRUE;
      }
    }
    fs_yaml_error(error, node, "expected true or false, got \"%s\"", s);
  } else {
    fs_yaml_error(error, node, "expected true or false, got the quoted string \"%s\" (write it without quotes)", s);
  }
  return FALSE;
}

gboolean fs_yaml_get_int(const FsYamlNode *node, int64_t min, int64_t max, int64_t *out,
                         GError **error)
{
  g_return_val_if_fail(out != NULL && min <= max, FALSE);
  const char *s = scalar_text(node, "an integer", error);
  if (s == NULL)
    return FALSE;
  GError *local = NULL;
  int64_t v;
  if (!fs_parse_int64(s, &v, &local))
    return units_error(node, local, error);
  if (v < min || v > max) {
    if (max == INT64_MAX)
      fs_yaml_error(error, node, "expected an integer of at least %" G_GINT64_FORMAT ", got %s", min, s);
    else if (min == INT64_MIN)
      fs_yaml_error(error, node, "expected an integer of at most %" G_GINT64_FORMAT ", got %s", max, s);
    else
      fs_yaml_error(error, node,
                    "expected an integer from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT ", got %s",
                    min, max, s);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

/* A double in C syntax without trailing zeros noise ("0.5", "1e+20"). */
static char *fmt_double(double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.10g", v));
}

gboolean fs_yaml_get_double(const FsYamlNode *node, double min, double max, double *out,
                            GError **error)
{
  g_return_val_if_fail(out != NULL && min <= max, FALSE);
  const char *s = scalar_text(node, "a number", error);
  if (s == NULL)
    return FALSE;
  GError *local = NULL;
  double v;
  if (!fs_parse_number(s, &v, &local))
    return units_error(node, local, error);
  if (v < min || v > max) {
    g_autofree char *lo = fmt_double(min);
    g_autofree char *hi = fmt_double(max);
    fs_yaml_error(error, node, "expected a number from %s to %s, got %s", lo, hi, s);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

/* The getters for quantities differ only in the parser and the example. */
#define QUANTITY_GETTER(fn, type, parser, expect)                                        \
  gboolean fn(const FsYamlNode *node, type *out, GError **error)                       \
  {                                                                                    \
    g_return_val_if_fail(out != NULL, FALSE);                                          \
    const char *s = scalar_text(node, expect, error);                                  \
    if (s == NULL)                                                                     \
      return FALSE;                                                                    \
    GError *local = NULL;                                                              \
    type v;                                                                            \
    if (!parser(s, &v, &local))                                                        \
      return units_error(node, local, error);                                          \
    *out = v;                                                                          \
    return TRUE;                                                                       \
  }

QUANTITY_GETTER(fs_yaml_get_bandwidth, double, fs_parse_bandwidth, "a bandwidth like \"50 GB/s\"")
QUANTITY_GETTER(fs_yaml_get_lane_rate, double, fs_parse_lane_rate, "a lane rate like \"16 GT/s\"")
QUANTITY_GETTER(fs_yaml_get_time, FsTime, fs_parse_time, "a time like \"1.5 us\"")
QUANTITY_GETTER(fs_yaml_get_size, uint64_t, fs_parse_size, "a size like \"16 GiB\"")
QUANTITY_GETTER(fs_yaml_get_power, double, fs_parse_power, "a power like \"700 W\"")
QUANTITY_GETTER(fs_yaml_get_flops, double, fs_parse_flops, "a FLOP rate like \"989 TFLOP/s\"")

/* Optional fields ----------------------------------------------------------- */

gboolean fs_yaml_opt_string(const FsYamlNode *map, const char *key, const char **out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_string(v, out, error);
}

gboolean fs_yaml_opt_bool(const FsYamlNode *map, const char *key, gboolean *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_bool(v, out, error);
}

gboolean fs_yaml_opt_int(const FsYamlNode *map, const char *key, int64_t min, int64_t max,
                         int64_t *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_int(v, min, max, out, error);
}

gboolean fs_yaml_opt_double(const FsYamlNode *map, const char *key, double min, double max,
                            double *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_double(v, min, max, out, error);
}

gboolean fs_yaml_opt_bandwidth(const FsYamlNode *map, const char *key, double *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_bandwidth(v, out, error);
}

gboolean fs_yaml_opt_time(const FsYamlNode *map, const char *key, FsTime *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_time(v, out, error);
}

gboolean fs_yaml_opt_size(const FsYamlNode *map, const char *key, uint64_t *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_size(v, out, error);
}
