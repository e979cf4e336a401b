/* json-pos.c — see json-pos.h. */
#include "util/limits.h"
#include "util/json-pos.h"

#include <glib/gstdio.h>
#include <string.h>

#include "util/error.h"

G_DEFINE_QUARK(fs-json-error-quark, fs_json_error)

struct FsJsonDoc {
  char *name;
  char *text;
  gsize len;
  json_t *root;
  GHashTable *pos; /* path (owned) -> Pos (owned); a member's key under path + "@";
                    empty until the first position query (positions()) */
};

/* Where a value (or a member's key) starts. */
typedef struct {
  int line, col;   /* 1-based */
  gsize offset;    /* in the text, bytes */
} Pos;

/* ---- the position scanner ------------------------------------------------ */

typedef struct {
  const char *s;
  gsize len, i;
  int line;
  gsize line_start;
  GString *path;
  GHashTable *pos;
} Scan;

static int peek(const Scan *sc) { return sc->i < sc->len ? (unsigned char)sc->s[sc->i] : -1; }

static void advance(Scan *sc)
{
  if (sc->i < sc->len && sc->s[sc->i] == '\n') {
    sc->line++;
    sc->line_start = sc->i + 1;
  }
  sc->i++;
}

static void skip_ws(Scan *sc)
{
  for (int c; (c = peek(sc)) == ' ' || c == '\t' || c == '\n' || c == '\r';)
    advance(sc);
}

/* The scanner's position now. */
static Pos here(const Scan *sc)
{
  return (Pos){sc->line, (int)(sc->i - sc->line_start + 1), sc->i};
}

/* Records at under the current path plus suffix ("" for a value, "@" for a
 * member's key); the first record wins. */
static void record(Scan *sc, const char *suffix, Pos at)
{
  g_autofree char *key = g_strconcat(sc->path->str, suffix, NULL);
  if (g_hash_table_contains(sc->pos, key))
    return;
  Pos *v = g_new(Pos, 1);
  *v = at;
  g_hash_table_insert(sc->pos, g_steal_pointer(&key), v);
}

static int hexval(int c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Reads 4 hex digits after "\u"; -1 when malformed. */
static long read_u4(Scan *sc)
{
  long v = 0;
  for (int k = 0; k < 4; k++) {
    int h = hexval(peek(sc));
    if (h < 0)
      return -1;
    v = v * 16 + h;
    advance(sc);
  }
  return v;
}

/* Scans a string at the opening quote; appends its decoded text to out
 * when out is non-NULL. */
static void scan_string(Scan *sc, GString *out)
{
  advance(sc); /* the opening quote */
  for (int c; (c = peek(sc)) >= 0;) {
    if (c == '"') {
      advance(sc);
      return;
    }
    if (c != '\\') {
      if (out)
        g_string_append_c(out, (char)c);
      advance(sc);
      continue;
    }
    advance(sc);
    int e = peek(sc);
    if (e < 0)
      return;
    advance(sc);
    if (e != 'u') {
      const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
      const char *p = strchr(from, e);
      if (out && p != NULL)
        g_string_append_c(out, to[p - from]);
      continue;
    }
    long u = read_u4(sc);
    if (u >= 0xD800 && u < 0xDC00 && peek(sc) == '\\') {
      advance(sc);
      if (peek(sc) == 'u') {
        advance(sc);
        long lo = read_u4(sc);
        if (lo >= 0xDC00 && lo < 0xE000)
          u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
      }
    }
    if (out && u > 0)
      g_string_append_unichar(out, (gunichar)u);
  }
}

static void scan_value(Scan *sc, int depth);

/* Scans the value of a member or an element whose path is sc->path, then
 * takes the path back to keep and steps past a ','.  FALSE when no ','
 * follows (the container ends). */
static gboolean scan_item(Scan *sc, int depth, gsize keep)
{
  scan_value(sc, depth + 1);
  g_string_truncate(sc->path, keep);
  skip_ws(sc);
  if (peek(sc) != ',')
    return FALSE;
  advance(sc);
  return TRUE;
}

static void scan_object(Scan *sc, int depth)
{
  advance(sc); /* { */
  skip_ws(sc);
  if (peek(sc) == '}') {
    advance(sc);
    return;
  }
  g_autoptr(GString) key = g_string_new(NULL);
  while (peek(sc) == '"') {
    Pos at = here(sc);
    g_string_truncate(key, 0);
    scan_string(sc, key);
    gsize keep = sc->path->len;
    g_autofree char *p = fs_json_path_member("", key->str);
    g_string_append(sc->path, p);
    record(sc, "@", at); /* the key's own position (an unknown member) */
    skip_ws(sc);
    if (peek(sc) == ':')
      advance(sc);
    if (!scan_item(sc, depth, keep))
      break;
    skip_ws(sc);
  }
  if (peek(sc) == '}')
    advance(sc);
}

static void scan_array(Scan *sc, int depth)
{
  advance(sc); /* [ */
  skip_ws(sc);
  if (peek(sc) == ']') {
    advance(sc);
    return;
  }
  for (gsize idx = 0; peek(sc) >= 0; idx++) {
    gsize keep = sc->path->len;
    g_string_append_printf(sc->path, "[%" G_GSIZE_FORMAT "]", idx);
    if (!scan_item(sc, depth, keep))
      break;
  }
  if (peek(sc) == ']')
    advance(sc);
}

/* The text was accepted by jansson, so the scanner may assume JSON; the
 * depth guard only keeps a pathological input from exhausting the stack. */
static void scan_value(Scan *sc, int depth)
{
  skip_ws(sc);
  record(sc, "", here(sc));
  int c = peek(sc);
  if (depth > 4096)
    return;
  if (c == '{')
    scan_object(sc, depth);
  else if (c == '[')
    scan_array(sc, depth);
  else if (c == '"')
    scan_string(sc, NULL);
  else
    while ((c = peek(sc)) >= 0 && !strchr(",]} \t\r\n", c))
      advance(sc);
}

/* ---- documents ----------------------------------------------------------- */

FsJsonDoc *fs_json_doc_parse(const char *text, gsize len, const char *name, GError **error)
{
  g_return_val_if_fail(text != NULL && name != NULL, NULL);
  json_error_t je;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
  if (root == NULL) {
    fs_set_error_at(error, FS_JSON_ERROR, FS_JSON_ERROR_SYNTAX, name, je.line > 0 ? je.line : 1,
                    je.column > 0 ? je.column : 1, "invalid JSON: %s", je.text);
    return NULL;
  }
  FsJsonDoc *doc = g_new0(FsJsonDoc, 1);
  doc->name = g_strdup(name);
  doc->text = g_strndup(text, len);
  doc->len = len;
  doc->root = root;
  doc->pos = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  return doc;
}

/* doc's position index, scanned on the first query: most documents that
 * load are never asked for a position (a replay trace only when an op is
 * wrong), and the index costs a hash entry per value.  The scan records
 * the root at least, so an empty table means not scanned yet. */
static GHashTable *positions(const FsJsonDoc *doc)
{
  if (g_hash_table_size(doc->pos) == 0) {
    Scan sc = {.s = doc->text, .len = doc->len, .line = 1, .path = g_string_new("$"),
               .pos = doc->pos};
    scan_value(&sc, 0);
    g_string_free(sc.path, TRUE);
  }
  return doc->pos;
}

FsJsonDoc *fs_json_doc_load(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  GStatBuf st;
  if (g_stat(path, &st) == 0 && (guint64)st.st_size > fs_limit_file_bytes()) {
    g_autofree char *lim = fs_limit_bytes_text(fs_limit_file_bytes());
    fs_set_error_at(error, FS_JSON_ERROR, FS_JSON_ERROR_IO, path, 0, 0,
                    "file is larger than %s; refusing to read it (FABRICSIM_MAX_FILE_BYTES raises "
                    "the limit)", lim);
    return NULL;
  }
  g_autofree char *text = NULL;
  gsize len = 0;
  GError *e = NULL;
  if (!g_file_get_contents(path, &text, &len, &e)) {
    fs_set_error_at(error, FS_JSON_ERROR, FS_JSON_ERROR_IO, path, 0, 0, "cannot read: %s",
                    e->message);
    g_error_free(e);
    return NULL;
  }
  return fs_json_doc_parse(text, len, path, error);
}

void fs_json_doc_free(FsJsonDoc *doc)
{
  if (doc == NULL)
    return;
  json_decref(doc->root);
  g_hash_table_destroy(doc->pos);
  g_free(doc->text);
  g_free(doc->name);
  g_free(doc);
}

json_t *fs_json_doc_root(const FsJsonDoc *doc)
{
  g_return_val_if_fail(doc != NULL, NULL);
  return doc->root;
}

const char *fs_json_doc_name(const FsJsonDoc *doc)
{
  g_return_val_if_fail(doc != NULL, NULL);
  return doc->name;
}

void fs_json_doc_position(const FsJsonDoc *doc, const char *path, int *line, int *col)
{
  g_autofree char *p = g_strdup(path != NULL ? path : "$");
  *line = 1;
  *col = 1;
  GHashTable *pos = positions(doc);
  for (;;) {
    const Pos *v = g_hash_table_lookup(pos, p);
    if (v != NULL) {
      *line = v->line;
      *col = v->col;
      return;
    }
    /* Drop the last component: ".key", "[i]" or "[\"key\"]". */
    char *dot = strrchr(p, '.'), *br = strrchr(p, '[');
    char *cut = dot > br ? dot : br;
    if (cut == NULL || cut == p)
      return;
    *cut = '\0';
  }
}

gboolean fs_json_doc_key_position(const FsJsonDoc *doc, const char *path, int *line, int *col)
{
  g_return_val_if_fail(doc != NULL && path != NULL, FALSE);
  g_autofree char *key = g_strconcat(path, "@", NULL);
  const Pos *v = g_hash_table_lookup(positions(doc), key);
  if (v == NULL)
    return FALSE;
  *line = v->line;
  *col = v->col;
  return TRUE;
}

char *fs_json_doc_literal(const FsJsonDoc *doc, const char *path)
{
  g_return_val_if_fail(doc != NULL && path != NULL, NULL);
  const Pos *v = g_hash_table_lookup(positions(doc), path);
  if (v == NULL)
    return NULL;
  gsize end = v->offset;
  while (end < doc->len && !strchr(",]} \t\r\n", doc->text[end]) && doc->text[end] != '\0')
    end++;
  return g_strndup(doc->text + v->offset, end - v->offset);
}

void fs_json_doc_error(const FsJsonDoc *doc, GError **error, GQuark domain, int code,
                       const char *path, const char *format, ...)
{
  if (error == NULL)
    return;
  int line, col;
  fs_json_doc_position(doc, path, &line, &col);
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  fs_set_error_at(error, domain, code, doc->name, line, col, "%s: %s", path, msg);
}

static gboolean plain_key(const char *key)
{
  if (key[0] == '\0')
    return FALSE;
  for (const char *p = key; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_')
      return FALSE;
  return TRUE;
}

char *fs_json_path_member(const char *parent, const char *key)
{
  if (plain_key(key))
    return g_strdup_printf("%s.%s", parent, key);
  GString *s = g_string_new(parent);
  g_string_append(s, "[\"");
  for (const char *p = key; *p; p++) {
    if (*p == '"' || *p == '\\')
      g_string_append_c(s, '\\');
    g_string_append_c(s, *p);
  }
  g_string_append(s, "\"]");
  return g_string_free(s, FALSE);
}

char *fs_json_path_index(const char *parent, gsize i)
{
  return g_strdup_printf("%s[%" G_GSIZE_FORMAT "]", parent, i);
}
