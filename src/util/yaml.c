/* yaml.c — see yaml.h.
 *
 * The loader reads libyaml's event stream (yaml_parser_parse) and builds
 * the tree itself, so that it controls every limit: a stack of open
 * collections (at most FS_YAML_MAX_DEPTH deep), a table of anchors, and a
 * running count of nodes in which an alias counts as the whole subtree it
 * stands for.  Nodes, pointer arrays and strings live in memory owned by
 * the document (a bump arena and a GStringChunk), freed in one go.
 * Access to the tree and the typed getters are in yaml-get.c.
 */
#include "util/yaml.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "util/error.h"
#include "util/json-pos.h"
#include "util/limits.h"
#include "util/strutil.h"

G_DEFINE_QUARK(fs-yaml-error-quark, fs_yaml_error)

/* Largest file fs_yaml_load_file reads (a guard against reading a disk image). */
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

/* The JSON front end ------------------------------------------------------- */

/* A node of kind at path, positioned where json-pos saw it. */
static FsYamlNode *json_node(FsYamlDoc *doc, const FsJsonDoc *json, FsYamlKind kind,
                             const char *path)
{
  Node *n = arena_alloc(doc, sizeof(Node));
  n->pub.kind = kind;
  n->pub.file = doc->name;
  n->pub.path = g_string_chunk_insert_const(doc->strings, path);
  fs_json_doc_position(json, path, &n->pub.line, &n->pub.col);
  return &n->pub;
}

/* Builds the node of value v at path (jansson bounds the depth at 2048). */
static FsYamlNode *json_build(FsYamlDoc *doc, const FsJsonDoc *json, json_t *v, const char *path)
{
  FsYamlNode *n;
  switch (json_typeof(v)) {
  case JSON_OBJECT: {
    n = json_node(doc, json, FS_YAML_MAP, path);
    n->n = (guint)json_object_size(v);
    n->keys = arena_alloc(doc, sizeof(FsYamlNode *) * MAX(n->n, 1));
    n->values = arena_alloc(doc, sizeof(FsYamlNode *) * MAX(n->n, 1));
    const char *key;
    json_t *member;
    guint i = 0;
    json_object_foreach(v, key, member)
    {
      g_autofree char *mpath = fs_json_path_member(path, key);
      FsYamlNode *k = json_node(doc, json, FS_YAML_SCALAR, mpath);
      fs_json_doc_key_position(json, mpath, &k->line, &k->col);
      k->value = g_string_chunk_insert_const(doc->strings, key);
      k->quoted = TRUE;
      n->keys[i] = k;
      n->values[i++] = json_build(doc, json, member, mpath);
    }
    return n;
  }
  case JSON_ARRAY:
    n = json_node(doc, json, FS_YAML_SEQ, path);
    n->n = (guint)json_array_size(v);
    n->values = arena_alloc(doc, sizeof(FsYamlNode *) * MAX(n->n, 1));
    for (guint i = 0; i < n->n; i++) {
      g_autofree char *ipath = fs_json_path_index(path, i);
      n->values[i] = json_build(doc, json, json_array_get(v, i), ipath);
    }
    return n;
  case JSON_STRING:
    n = json_node(doc, json, FS_YAML_SCALAR, path);
    n->value = g_string_chunk_insert_len(doc->strings, json_string_value(v),
                                         (gssize)json_string_length(v));
    n->quoted = TRUE;
    return n;
  case JSON_INTEGER:
  case JSON_REAL: {
    n = json_node(doc, json, FS_YAML_SCALAR, path);
    g_autofree char *text = fs_json_doc_literal(json, path);
    if (text == NULL) {
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      text = g_strdup(g_ascii_dtostr(buf, sizeof buf, json_number_value(v)));
    }
    n->value = g_string_chunk_insert_const(doc->strings, text);
    return n;
  }
  case JSON_TRUE:
  case JSON_FALSE:
    n = json_node(doc, json, FS_YAML_SCALAR, path);
    n->value = json_is_true(v) ? "true" : "false";
    return n;
  case JSON_NULL:
    break;
  }
  n = json_node(doc, json, FS_YAML_SCALAR, path);
  n->value = "";
  n->is_null = TRUE;
  return n;
}

FsYamlDoc *fs_yaml_doc_from_json(const FsJsonDoc *json)
{
  g_return_val_if_fail(json != NULL, NULL);
  FsYamlDoc *doc = doc_new(fs_json_doc_name(json));
  doc->root = json_build(doc, json, fs_json_doc_root(json), "$");
  return doc;
}

/* Headers of other formats ------------------------------------------------- */

/* A scalar of text at line:col. */
static FsYamlNode *pair_scalar(FsYamlDoc *doc, const char *text, int line, int col)
{
  Node *n = arena_alloc(doc, sizeof(Node));
  n->pub.kind = FS_YAML_SCALAR;
  n->pub.file = doc->name;
  n->pub.line = line;
  n->pub.col = col;
  n->pub.value = g_string_chunk_insert_const(doc->strings, text);
  n->pub.quoted = TRUE;
  return &n->pub;
}

FsYamlDoc *fs_yaml_doc_from_pairs(const char *name, const FsYamlPair *pairs, guint n)
{
  g_return_val_if_fail(pairs != NULL || n == 0, NULL);
  FsYamlDoc *doc = doc_new(name);
  Node *map = arena_alloc(doc, sizeof(Node));
  map->pub.kind = FS_YAML_MAP;
  map->pub.file = doc->name;
  map->pub.line = map->pub.col = 1;
  map->pub.n = n;
  map->pub.keys = arena_alloc(doc, sizeof(FsYamlNode *) * MAX(n, 1));
  map->pub.values = arena_alloc(doc, sizeof(FsYamlNode *) * MAX(n, 1));
  for (guint i = 0; i < n; i++) {
    map->pub.keys[i] = pair_scalar(doc, pairs[i].key, pairs[i].key_line, pairs[i].key_col);
    map->pub.values[i] = pair_scalar(doc, pairs[i].value, pairs[i].value_line,
                                     pairs[i].value_col);
  }
  doc->root = &map->pub;
  return doc;
}

/* Loading ---------------------------------------------------------------- */

/* One open collection. */
typedef struct {
  Node *node;
  GPtrArray *keys;       /* maps only */
  GPtrArray *values;
  GHashTable *seen;      /* maps with many keys: key text -> first key node */
  GPtrArray *merges;     /* maps: values of "<<" merge keys, in order */
  Node *pending_key;     /* maps: a key waiting for its value */
  gboolean pending_merge; /* pending_key is a "<<" merge key */
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
  if (f->merges)
    g_ptr_array_free(f->merges, TRUE);
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
  /* Keys and values quoted in messages may hold newlines: keep one line. */
  g_autofree char *clean = fs_escape_controls(msg);
  fs_set_error_at(error, FS_YAML_ERROR, code, ld->doc->name, (int)mark->line + 1,
                  (int)mark->column + 1, "%s", clean);
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
    if (parser->problem_value >= 0 && parser->problem_value <= 0xFF)
      fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_SYNTAX, ld->doc->name, line, col,
                      "%s (byte 0x%02X); YAML files must be UTF-8 text", problem,
                      (unsigned)parser->problem_value);
    else if (parser->problem_value > 0xFF)
      fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_SYNTAX, ld->doc->name, line, col,
                      "%s (character U+%04X); YAML files must be UTF-8 text", problem,
                      (unsigned)parser->problem_value);
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

/* The node guard (FS_YAML_MAX_NODES or $FABRICSIM_MAX_YAML_NODES) and the depth guard
 * (FS_YAML_MAX_DEPTH or $FABRICSIM_MAX_YAML_DEPTH, at most FS_YAML_DEPTH_CEILING: the
 * loader's frames are on the heap, but the tree's users recurse). */
static guint64 max_nodes(void)
{
  return fs_env_limit("FABRICSIM_MAX_YAML_NODES", FS_YAML_MAX_NODES, (guint64)1 << 32);
}

static guint max_depth(void)
{
  return (guint)fs_env_limit("FABRICSIM_MAX_YAML_DEPTH", FS_YAML_MAX_DEPTH, FS_YAML_DEPTH_CEILING);
}

/* Counts weight more nodes against the node guard. */
static gboolean count_nodes(Loader *ld, guint64 weight, const yaml_mark_t *mark, GError **error)
{
  guint64 limit = max_nodes();
  if (weight > limit || ld->total + weight > limit)
    return load_error(ld, error, FS_YAML_ERROR_LIMIT, mark,
                      "the document has more than %" G_GUINT64_FORMAT " nodes (aliases counted as "
                      "copies); is an alias expanding too much? (FABRICSIM_MAX_YAML_NODES raises "
                      "the limit)",
                      limit);
  ld->total += weight;
  return TRUE;
}

static void register_anchor(Loader *ld, const char *name, Node *n)
{
  g_hash_table_replace(ld->anchors, g_strdup(name), n);
}

/* Maps with more keys than this index them in a hash table; smaller ones
 * (nearly all) are scanned, which is cheaper than a table per mapping. */
#define SCAN_KEYS 16

/* The key node spelled key among the frame's keys (explicit and merged so
 * far, plus a merge key), or NULL. */
static Node *frame_find_key(Frame *f, const char *key)
{
  if (f->seen != NULL)
    return g_hash_table_lookup(f->seen, key);
  for (guint i = 0; i < f->keys->len; i++) {
    Node *k = f->keys->pdata[i];
    if (strcmp(k->pub.value, key) == 0)
      return k;
  }
  return NULL;
}

/* Records key k as present in the frame (after frame_find_key said no). */
static void frame_add_key(Frame *f, Node *k, Node *value)
{
  g_ptr_array_add(f->keys, k);
  g_ptr_array_add(f->values, value);
  if (f->seen == NULL && f->keys->len > SCAN_KEYS) {
    f->seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < f->keys->len; i++) {
      Node *ki = f->keys->pdata[i];
      g_hash_table_insert(f->seen, (gpointer)ki->pub.value, ki);
    }
  } else if (f->seen != NULL) {
    g_hash_table_insert(f->seen, (gpointer)k->pub.value, k);
  }
}

/* TRUE for the YAML 1.1 merge key: "<<" written plain. */
static gboolean is_merge_key(const Node *k)
{
  return !k->pub.quoted && strcmp(k->pub.value, "<<") == 0;
}

/* Checks the value of a merge key: a mapping or a list of mappings. */
static gboolean check_merge_value(Loader *ld, const Node *v, const yaml_mark_t *at, GError **error)
{
  gboolean ok = v->pub.kind == FS_YAML_MAP;
  if (v->pub.kind == FS_YAML_SEQ) {
    ok = TRUE;
    for (guint i = 0; i < v->pub.n; i++)
      ok = ok && v->pub.values[i]->kind == FS_YAML_MAP;
  }
  if (!ok)
    return load_error(ld, error, FS_YAML_ERROR_SYNTAX, at,
                      "a merge key (<<) takes a mapping or a list of mappings, got %s",
                      fs_yaml_kind_name(&v->pub));
  return TRUE;
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
    Node *k = f->pending_key;
    f->pending_key = NULL;
    if (f->pending_merge) {
      /* Merged entries are added when the mapping closes, so that explicit
       * keys win wherever they appear. */
      f->pending_merge = FALSE;
      if (!check_merge_value(ld, n, at, error))
        return FALSE;
      if (f->merges == NULL)
        f->merges = g_ptr_array_new();
      g_ptr_array_add(f->merges, n);
      return TRUE;
    }
    frame_add_key(f, k, n);
    return TRUE;
  }
  /* n is a key. */
  if (n->pub.kind != FS_YAML_SCALAR)
    return load_error(ld, error, FS_YAML_ERROR_SYNTAX, at, "a mapping key must be a scalar, got %s",
                      fs_yaml_kind_name(&n->pub));
  Node *first = frame_find_key(f, n->pub.value);
  if (first == NULL && is_merge_key(n) && f->merges != NULL)
    return load_error(ld, error, FS_YAML_ERROR_SYNTAX, at,
                      "a second merge key (<<) in one mapping; give one << a list of mappings");
  if (first != NULL)
    return load_error(ld, error, FS_YAML_ERROR_SYNTAX, at,
                      "duplicate key \"%s\" (first defined at line %d, column %d)", n->pub.value,
                      first->pub.line, first->pub.col);
  f->pending_key = n;
  f->pending_merge = is_merge_key(n);
  return TRUE;
}

/* Adds the entries of the frame's merge sources whose keys the mapping does
 * not have, in order: the first source listed wins over later ones. */
static void apply_merges(Frame *f)
{
  for (guint m = 0; m < f->merges->len; m++) {
    const Node *src = f->merges->pdata[m];
    guint nsrc = src->pub.kind == FS_YAML_SEQ ? src->pub.n : 1;
    for (guint s = 0; s < nsrc; s++) {
      const FsYamlNode *map = src->pub.kind == FS_YAML_SEQ ? src->pub.values[s] : &src->pub;
      for (guint i = 0; i < map->n; i++) {
        Node *k = (Node *)map->keys[i];
        if (frame_find_key(f, k->pub.value) == NULL)
          frame_add_key(f, k, (Node *)map->values[i]);
      }
    }
  }
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
  if (ld->stack->len + target->height > max_depth())
    return load_error(ld, error, FS_YAML_ERROR_LIMIT, mark,
                      "alias *%s makes the document nest deeper than %u levels "
                      "(FABRICSIM_MAX_YAML_DEPTH raises the limit)", name, max_depth());
  if (!count_nodes(ld, target->weight, mark, error))
    return FALSE;
  return attach(ld, target, mark, error);
}

static gboolean on_start(Loader *ld, const yaml_event_t *ev, FsYamlKind kind, GError **error)
{
  const yaml_mark_t *mark = &ev->start_mark;
  if (ld->stack->len >= max_depth())
    return load_error(ld, error, FS_YAML_ERROR_LIMIT, mark,
                      "the document nests deeper than %u levels (FABRICSIM_MAX_YAML_DEPTH raises "
                      "the limit)", max_depth());
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
  if (f.merges != NULL)
    apply_merges(&f);
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
  gboolean ok;
  const guchar *u = (const guchar *)ld.text;
  if (ld.len >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF)))
    /* libyaml would read it, but every position and message assumes UTF-8. */
    ok = load_error(&ld, error, FS_YAML_ERROR_SYNTAX, &(yaml_mark_t){0, 0, 0},
                    "the text is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8");
  else
    ok = load_events(&ld, error);
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

/* The file-size guard's error. */
static void too_large(const char *path, GError **error)
{
  g_autofree char *lim = fs_limit_bytes_text(fs_limit_file_bytes());
  fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_LIMIT, path, 0, 0,
                  "the file is larger than %s; is it really a YAML input? "
                  "(FABRICSIM_MAX_FILE_BYTES raises the limit)", lim);
}

/* See yaml.h. Reads the whole file into memory, refusing one over the file-size guard with
 * FS_YAML_ERROR_LIMIT and an unreadable one with FS_YAML_ERROR_IO, then parses it with
 * fs_yaml_load_string(), naming path in errors. The caller owns the returned document. */
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
  struct stat st;
  guint64 limit = fs_limit_file_bytes();
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (guint64)st.st_size > limit) {
    close(fd);
    too_large(path, error);
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
    if ((guint64)buf->len + (guint64)r > limit) {
      close(fd);
      g_byte_array_free(buf, TRUE);
      too_large(path, error);
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
