/* test-yaml.c — the YAML tree loader and typed getters (src/util/yaml.c),
 * and the conformance corpus in tests/data/yaml (see its README.md). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "testutil.h"
#include "util/yaml.h"

/* Loads text that must fail with code and a message containing fragment. */
static void load_bad(const char *text, gssize len, int code, const char *fragment)
{
  GError *err = NULL;
  FsYamlDoc *doc = fs_yaml_load_string(text, len, "t.yaml", &err);
  ck_assert_msg(doc == NULL, "loaded, expected an error containing \"%s\"", fragment);
  ck_assert_msg(err != NULL, "no error set");
  ck_assert_msg(err->code == code, "code %d, expected %d: %s", err->code, code, err->message);
  ck_assert_msg(g_str_has_prefix(err->message, "t.yaml:"), "no file name: %s", err->message);
  fs_assert_error(err, FS_YAML_ERROR, fragment);
}

static void assert_pos(const FsYamlNode *n, int line, int col)
{
  ck_assert_ptr_nonnull(n);
  ck_assert_msg(n->line == line && n->col == col, "node at %d:%d, expected %d:%d", n->line, n->col,
                line, col);
}

/* The corpus ------------------------------------------------------------ */

static int compare_names(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

START_TEST(test_yaml_corpus)
{
  g_autofree char *dir = fs_test_data_path("yaml");
  GError *err = NULL;
  GDir *d = g_dir_open(dir, 0, &err);
  ck_assert_msg(d != NULL, "cannot open %s: %s", dir, err ? err->message : "");
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL)
    g_ptr_array_add(names, g_strdup(name));
  g_dir_close(d);
  g_ptr_array_sort(names, compare_names);

  int n_y = 0, n_n = 0, n_i = 0;
  for (guint k = 0; k < names->len; k++) {
    const char *f = names->pdata[k];
    g_autofree char *path = g_build_filename(dir, f, NULL);
    if (g_str_has_suffix(f, ".err")) {
      /* Every sidecar belongs to an n_ file. */
      g_autofree char *base = g_strndup(f, strlen(f) - 4);
      g_autofree char *yaml = g_strdup_printf("%s/%s.yaml", dir, base);
      ck_assert_msg(g_str_has_prefix(f, "n_") && g_file_test(yaml, G_FILE_TEST_EXISTS),
                    "%s has no n_*.yaml beside it", f);
      continue;
    }
    if (!g_str_has_suffix(f, ".yaml"))
      continue;
    FsYamlDoc *doc = fs_yaml_load_file(path, &err);
    if (g_str_has_prefix(f, "y_")) {
      ck_assert_msg(doc != NULL, "%s must load: %s", f, err ? err->message : "");
      n_y++;
    } else if (g_str_has_prefix(f, "n_")) {
      ck_assert_msg(doc == NULL, "%s must be rejected", f);
      g_autofree char *errpath = g_strndup(path, strlen(path) - 5);
      g_autofree char *sidecar = g_strconcat(errpath, ".err", NULL);
      g_autofree char *expect = NULL;
      ck_assert_msg(g_file_get_contents(sidecar, &expect, NULL, NULL), "%s has no .err sidecar", f);
      g_strchomp(expect);
      ck_assert_msg(expect[0] == ':' && g_ascii_isdigit(expect[1]),
                    "%s.err must start with :line:col:, got \"%s\"", f, expect);
      ck_assert_msg(g_str_has_prefix(err->message, path), "%s: message does not start with the path: %s", f,
                    err->message);
      ck_assert_msg(strstr(err->message, expect) != NULL, "%s: error \"%s\" does not contain \"%s\"", f,
                    err->message, expect);
      ck_assert_msg(strchr(err->message, '\n') == NULL, "%s: message is not one line", f);
      n_n++;
    } else if (g_str_has_prefix(f, "i_")) {
      /* Either outcome, but a failure must still be a positioned message. */
      if (doc == NULL)
        ck_assert_msg(err != NULL && g_str_has_prefix(err->message, path), "%s: bad error", f);
      n_i++;
    } else {
      ck_abort_msg("%s: corpus files are named y_, n_ or i_", f);
    }
    g_clear_error(&err);
    fs_yaml_doc_free(doc);
  }
  ck_assert_int_ge(n_y, 10);
  ck_assert_int_ge(n_n, 20);
  ck_assert_int_ge(n_i, 5);
}
END_TEST

/* Tree shape and positions ---------------------------------------------- */

START_TEST(test_yaml_positions_nested)
{
  const char *text =
    "name: dgx\n"             /* 1 */
    "nodes:\n"                /* 2 */
    "  - id: 0\n"             /* 3 */
    "    gpus: [a, \"b\"]\n"  /* 4 */
    "  - id: 1\n"             /* 5 */
    "    nic:\n"              /* 6 */
    "      rate: 400 Gb/s\n"; /* 7 */
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok(text);
  FsYamlNode *root = fs_yaml_doc_root(doc);
  ck_assert_int_eq(root->kind, FS_YAML_MAP);
  ck_assert_uint_eq(root->n, 2);
  assert_pos(root, 1, 1);
  ck_assert_str_eq(root->keys[0]->value, "name");
  ck_assert_str_eq(root->keys[1]->value, "nodes");
  assert_pos(root->values[0], 1, 7);
  FsYamlNode *nodes = fs_yaml_map_get(root, "nodes");
  ck_assert_int_eq(nodes->kind, FS_YAML_SEQ);
  ck_assert_ptr_null(nodes->keys);
  ck_assert_uint_eq(nodes->n, 2);
  assert_pos(nodes, 3, 3);
  assert_pos(nodes->values[0], 3, 5);
  FsYamlNode *gpus = fs_yaml_map_get(nodes->values[0], "gpus");
  assert_pos(gpus, 4, 11);
  assert_pos(gpus->values[0], 4, 12);
  assert_pos(gpus->values[1], 4, 15);
  ck_assert(gpus->values[1]->quoted);
  ck_assert(!gpus->values[0]->quoted);
  FsYamlNode *rate = fs_yaml_map_get(fs_yaml_map_get(nodes->values[1], "nic"), "rate");
  assert_pos(rate, 7, 13);
  ck_assert_str_eq(rate->value, "400 Gb/s");
  ck_assert_str_eq(rate->file, "t.yaml");
  ck_assert_str_eq(fs_yaml_doc_name(doc), "t.yaml");
  /* Keys have positions too. */
  assert_pos(fs_yaml_map_get(nodes->values[1], "nic")->keys[0], 7, 7);
}
END_TEST

START_TEST(test_yaml_positions_utf8_columns)
{
  /* Columns count characters, as editors do: "µ" is one column. */
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok("\xc2\xb5\xc2\xb5: x\nb: [\xc3\xa9, y]\n");
  FsYamlNode *root = fs_yaml_doc_root(doc);
  assert_pos(root->values[0], 1, 5);
  assert_pos(root->values[1]->values[1], 2, 8);
}
END_TEST

START_TEST(test_yaml_scalars_null_and_quoted)
{
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok("a: ~\nb: null\nc:\nd: NULL\ne: Null\nf: \"\"\ng: 'null'\nh: nil\n"
                                     "i: !!str 12\nj: |\n  x\n");
  FsYamlNode *root = fs_yaml_doc_root(doc);
  const char *nulls[] = {"a", "b", "c", "d", "e"};
  for (guint i = 0; i < G_N_ELEMENTS(nulls); i++) {
    FsYamlNode *n = fs_yaml_map_get(root, nulls[i]);
    ck_assert_msg(n->is_null, "%s should be null", nulls[i]);
    ck_assert_str_eq(n->value, "");
    ck_assert(!n->quoted);
  }
  FsYamlNode *f = fs_yaml_map_get(root, "f");
  ck_assert(!f->is_null && f->quoted);
  ck_assert_str_eq(f->value, "");
  FsYamlNode *g = fs_yaml_map_get(root, "g");
  ck_assert(!g->is_null && g->quoted);
  ck_assert_str_eq(g->value, "null");
  ck_assert(!fs_yaml_map_get(root, "h")->is_null);
  ck_assert(fs_yaml_map_get(root, "i")->quoted);
  ck_assert(fs_yaml_map_get(root, "j")->quoted);
  ck_assert_str_eq(fs_yaml_map_get(root, "j")->value, "x\n");
}
END_TEST

START_TEST(test_yaml_anchor_and_alias)
{
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok("base: &b\n  x: 1\nlist: [*b, *b]\nname: &n hello\nagain: *n\n");
  FsYamlNode *root = fs_yaml_doc_root(doc);
  FsYamlNode *base = fs_yaml_map_get(root, "base");
  FsYamlNode *list = fs_yaml_map_get(root, "list");
  ck_assert_ptr_eq(list->values[0], base);
  ck_assert_ptr_eq(list->values[1], base);
  ck_assert_ptr_eq(fs_yaml_map_get(root, "again"), fs_yaml_map_get(root, "name"));
  ck_assert_str_eq(fs_yaml_map_get(root, "again")->value, "hello");
  /* The alias resolves to the anchored node, with its position. */
  ck_assert_int_eq(fs_yaml_map_get(root, "again")->line, 4);
  /* An anchor may be redefined; an alias takes the latest definition. */
  g_autoptr(FsYamlDoc) doc2 = fs_test_yaml_ok("a: &x 1\nb: &x 2\nc: *x\n");
  ck_assert_str_eq(fs_yaml_map_get(fs_yaml_doc_root(doc2), "c")->value, "2");
  load_bad("a: *nope\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:1:4: undefined alias *nope");
  load_bad("a: &r [1, *r]\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:1:11: alias *r refers to the node that contains it");
}
END_TEST

START_TEST(test_yaml_merge_keys)
{
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok("defaults: &d {lanes: 16, rate: 32 GT/s}\n"
                                     "more: &m {rate: 64 GT/s, latency: 1 us}\n"
                                     "a:\n"
                                     "  lanes: 8\n"
                                     "  <<: *d\n"
                                     "b:\n"
                                     "  <<: [*m, *d]\n"
                                     "  name: b\n"
                                     "c: {\"<<\": literal}\n");
  FsYamlNode *root = fs_yaml_doc_root(doc);
  FsYamlNode *a = fs_yaml_map_get(root, "a");
  /* Explicit keys win, wherever they appear; merged entries follow them. */
  ck_assert_uint_eq(a->n, 2);
  ck_assert_str_eq(a->keys[0]->value, "lanes");
  ck_assert_str_eq(fs_yaml_map_get(a, "lanes")->value, "8");
  ck_assert_str_eq(fs_yaml_map_get(a, "rate")->value, "32 GT/s");
  ck_assert_ptr_null(fs_yaml_map_get(a, "<<"));
  /* Merged values keep the position where they were written. */
  assert_pos(fs_yaml_map_get(a, "rate"), 1, 32);
  /* In a list of sources the first wins. */
  FsYamlNode *b = fs_yaml_map_get(root, "b");
  ck_assert_uint_eq(b->n, 4);
  ck_assert_str_eq(b->keys[0]->value, "name");
  ck_assert_str_eq(fs_yaml_map_get(b, "rate")->value, "64 GT/s");
  ck_assert_str_eq(fs_yaml_map_get(b, "latency")->value, "1 us");
  ck_assert_str_eq(fs_yaml_map_get(b, "lanes")->value, "16");
  /* A quoted "<<" is an ordinary key. */
  ck_assert_str_eq(fs_yaml_map_get(fs_yaml_map_get(root, "c"), "<<")->value, "literal");
  /* check_keys sees merged keys. */
  GError *err = NULL;
  static const char *const allowed[] = {"lanes", NULL};
  ck_assert(!fs_yaml_check_keys(a, allowed, "link", &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:1:26: unknown key \"rate\" in link");
  load_bad("a: {x: 1}\nb:\n  <<: 5\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:3:7: a merge key (<<) takes a mapping");
  load_bad("b:\n  <<: {x: 1}\n  <<: {y: 1}\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:3:3: a second merge key");
  /* Many keys: the hash-indexed path finds duplicates and merges too. */
  GString *big = g_string_new("base: &b {k3: merged, extra: 1}\nm:\n  <<: *b\n");
  for (int i = 0; i < 40; i++)
    g_string_append_printf(big, "  k%d: %d\n", i, i);
  g_autoptr(FsYamlDoc) bd = fs_test_yaml_ok(big->str);
  FsYamlNode *m = fs_yaml_map_get(fs_yaml_doc_root(bd), "m");
  ck_assert_uint_eq(m->n, 41);
  ck_assert_str_eq(fs_yaml_map_get(m, "k3")->value, "3");
  ck_assert_str_eq(fs_yaml_map_get(m, "extra")->value, "1");
  g_string_append(big, "  k17: again\n");
  load_bad(big->str, -1, FS_YAML_ERROR_SYNTAX, "t.yaml:44:3: duplicate key \"k17\" (first defined at line 21, column 3)");
  g_string_free(big, TRUE);
}
END_TEST

START_TEST(test_yaml_duplicate_and_bad_keys)
{
  load_bad("a: 1\nb: 2\na: 3\n", -1, FS_YAML_ERROR_SYNTAX,
           "t.yaml:3:1: duplicate key \"a\" (first defined at line 1, column 1)");
  load_bad("x:\n  a: 1\n  'a': 2\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:3:3: duplicate key \"a\" (first defined at line 2");
  load_bad("{a: 1, a: 2}\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:1:8: duplicate key");
  load_bad("? [a]\n: 1\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:1:3: a mapping key must be a scalar, got a list");
  load_bad("? {a: 1}\n: 1\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:1:3: a mapping key must be a scalar, got a mapping");
  /* The same key in different mappings is fine. */
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok("a: {x: 1}\nb: {x: 2}\n");
  ck_assert_ptr_nonnull(doc);
}
END_TEST

START_TEST(test_yaml_documents)
{
  load_bad("a: 1\n---\nb: 2\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:2:1: a second YAML document starts here");
  load_bad("--- 1\n--- 2\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:2:1:");
  g_autoptr(FsYamlDoc) one = fs_test_yaml_ok("---\na: 1\n...\n");
  ck_assert_ptr_nonnull(fs_yaml_doc_root(one));
  /* Empty input: an empty document, no error. */
  const char *empties[] = {"", "\n\n", "# just a comment\n", "   "};
  for (guint i = 0; i < G_N_ELEMENTS(empties); i++) {
    g_autoptr(FsYamlDoc) e = fs_test_yaml_ok(empties[i]);
    ck_assert_ptr_null(fs_yaml_doc_root(e));
  }
  GError *err = NULL;
  g_autoptr(FsYamlDoc) zero = fs_yaml_load_string(NULL, 0, "z.yaml", &err);
  fs_assert_no_error(err);
  ck_assert_ptr_null(fs_yaml_doc_root(zero));
}
END_TEST

/* Limits ---------------------------------------------------------------- */

START_TEST(test_yaml_depth_limit)
{
  GString *ok = g_string_new(NULL);
  for (int i = 0; i < FS_YAML_MAX_DEPTH; i++)
    g_string_append_c(ok, '[');
  for (int i = 0; i < FS_YAML_MAX_DEPTH; i++)
    g_string_append_c(ok, ']');
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok(ok->str);
  g_string_free(ok, TRUE);
  ck_assert_ptr_nonnull(doc);
  /* A depth bomb: a million open brackets stop at level 65. */
  gsize n = 1000000;
  char *bomb = g_malloc(n + 1);
  memset(bomb, '[', n);
  bomb[n] = '\0';
  load_bad(bomb, -1, FS_YAML_ERROR_LIMIT, "t.yaml:1:65: the document nests deeper than 64 levels");
  memset(bomb, '{', n);
  load_bad(bomb, -1, FS_YAML_ERROR_LIMIT, "nests deeper than 64 levels");
  g_free(bomb);
  /* Block nesting. */
  GString *block = g_string_new(NULL);
  for (int i = 0; i <= FS_YAML_MAX_DEPTH; i++)
    g_string_append_printf(block, "%*sk:\n", 2 * i, "");
  load_bad(block->str, -1, FS_YAML_ERROR_LIMIT, "t.yaml:65:129: the document nests deeper");
  g_string_free(block, TRUE);
  /* Through an alias: 40 levels anchored, used 30 levels down. */
  GString *al = g_string_new("a: &d ");
  for (int i = 0; i < 40; i++)
    g_string_append_c(al, '[');
  for (int i = 0; i < 40; i++)
    g_string_append_c(al, ']');
  g_string_append(al, "\nb: ");
  for (int i = 0; i < 30; i++)
    g_string_append_c(al, '[');
  g_string_append(al, "*d");
  for (int i = 0; i < 30; i++)
    g_string_append_c(al, ']');
  load_bad(al->str, -1, FS_YAML_ERROR_LIMIT, "t.yaml:2:34: alias *d makes the document nest deeper");
  g_string_free(al, TRUE);
}
END_TEST

/* "Billion laughs": each level aliases the previous one nine times. */
static char *laughs(int levels)
{
  GString *s = g_string_new("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
  for (int i = 1; i < levels; i++) {
    g_string_append_printf(s, "l%d: &l%d [", i, i);
    for (int j = 0; j < 9; j++)
      g_string_append_printf(s, "%s*l%d", j ? ", " : "", i - 1);
    g_string_append(s, "]\n");
  }
  return g_string_free(s, FALSE);
}

START_TEST(test_yaml_billion_laughs)
{
  g_autofree char *big = laughs(9);
  load_bad(big, -1, FS_YAML_ERROR_LIMIT, "the document has more than 1000000 nodes");
  /* Five levels expand to under 70,000 nodes: accepted. */
  g_autofree char *small = laughs(5);
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok(small);
  FsYamlNode *l4 = fs_yaml_map_get(fs_yaml_doc_root(doc), "l4");
  ck_assert_uint_eq(l4->n, 9);
  ck_assert_ptr_eq(l4->values[0], fs_yaml_map_get(fs_yaml_doc_root(doc), "l3"));
}
END_TEST

START_TEST(test_yaml_node_limit_plain)
{
  /* More than FS_YAML_MAX_NODES real nodes, no aliases. */
  GString *s = g_string_new("[");
  for (int i = 0; i < FS_YAML_MAX_NODES; i++)
    g_string_append(s, "1,");
  g_string_append(s, "1]");
  load_bad(s->str, -1, FS_YAML_ERROR_LIMIT, "more than 1000000 nodes");
  g_string_free(s, TRUE);
}
END_TEST

/* Junk and I/O ------------------------------------------------------------ */

START_TEST(test_yaml_binary_junk)
{
  static const char nul[] = "a: 1\n\0b: 2\n";
  load_bad(nul, sizeof nul - 1, FS_YAML_ERROR_SYNTAX, "t.yaml:2:1: control characters are not allowed");
  load_bad("a: \xff\xfe\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:1:4: invalid leading UTF-8 octet (byte 0xFF)");
  load_bad("a: \xef\xbf\xbe\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:1:4: control characters are not allowed (character U+FFFE)");
  load_bad("a: caf\xc3", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:1:7: incomplete UTF-8 octet sequence");
  load_bad("a: \"x\\0y\"\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:1:4: a scalar contains a NUL character");
  load_bad("a:\n\tb: 1\n", -1, FS_YAML_ERROR_SYNTAX, "YAML does not allow tabs for indentation");
  /* Pseudo-random bytes, many seeds: an error or a tree, never a crash. */
  GRand *r = g_rand_new_with_seed(42);
  static const char alphabet[] = "[]{}:,-&*!|>'\"#?%@ \n\tab1~.\xc3\xa9\x01";
  for (int round = 0; round < 300; round++) {
    char buf[200];
    gsize len = (gsize)g_rand_int_range(r, 0, sizeof buf);
    for (gsize i = 0; i < len; i++)
      buf[i] = round % 2 ? (char)g_rand_int_range(r, 0, 256)
                         : alphabet[g_rand_int_range(r, 0, sizeof alphabet - 1)];
    GError *err = NULL;
    FsYamlDoc *doc = fs_yaml_load_string(buf, (gssize)len, "fuzz.yaml", &err);
    ck_assert((doc == NULL) == (err != NULL));
    if (err != NULL)
      ck_assert_msg(g_str_has_prefix(err->message, "fuzz.yaml:"), "%s", err->message);
    g_clear_error(&err);
    fs_yaml_doc_free(doc);
  }
  g_rand_free(r);
}
END_TEST

START_TEST(test_yaml_syntax_error_format)
{
  load_bad("a: [1, 2\nb: 3\n", -1, FS_YAML_ERROR_SYNTAX,
           "t.yaml:2:2: did not find expected ',' or ']' (while parsing a flow sequence at line 1, column 4)");
  load_bad("a:\n  b: 1\n c: 2\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:3:2: did not find expected key");
  load_bad("a: b: c\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:1:5: mapping values are not allowed in this context");
}
END_TEST

START_TEST(test_yaml_load_file_errors)
{
  GError *err = NULL;
  ck_assert_ptr_null(fs_yaml_load_file("/nonexistent/fs-test.yaml", &err));
  ck_assert(err != NULL && err->code == FS_YAML_ERROR_IO);
  fs_assert_error(err, FS_YAML_ERROR, "/nonexistent/fs-test.yaml: cannot open: No such file or directory");
  g_autofree char *dir = g_dir_make_tmp("fs-yaml-XXXXXX", NULL);
  ck_assert_ptr_null(fs_yaml_load_file(dir, &err));
  ck_assert(err != NULL && err->code == FS_YAML_ERROR_IO);
  fs_assert_error(err, FS_YAML_ERROR, "Is a directory");
  /* A huge file is refused before it is read (sparse, so this is cheap). */
  g_autofree char *huge = g_build_filename(dir, "huge.yaml", NULL);
  FILE *hf = fopen(huge, "w");
  ck_assert_ptr_nonnull(hf);
  ck_assert_int_eq(ftruncate(fileno(hf), (off_t)300 << 20), 0);
  fclose(hf);
  ck_assert_ptr_null(fs_yaml_load_file(huge, &err));
  ck_assert(err != NULL && err->code == FS_YAML_ERROR_LIMIT);
  fs_assert_error(err, FS_YAML_ERROR, "huge.yaml: the file is larger than 256 MiB");
  g_unlink(huge);
  /* A good file: the name in messages is the path as given. */
  g_autofree char *path = g_build_filename(dir, "ok.yaml", NULL);
  ck_assert(g_file_set_contents(path, "a: fast\n", -1, NULL));
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_file(path, &err);
  fs_assert_no_error(err);
  double bw;
  ck_assert(!fs_yaml_get_bandwidth(fs_yaml_map_get(fs_yaml_doc_root(doc), "a"), &bw, &err));
  g_autofree char *expect = g_strdup_printf("%s:1:4: expected a bandwidth like \"50 GB/s\", got \"fast\"", path);
  fs_assert_error(err, FS_YAML_ERROR, expect);
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

/* Access and typed getters ------------------------------------------------- */

static const char *getters_text =
  "name: nvlink4\n"          /* 1 */
  "lanes: 18\n"              /* 2 */
  "bw: 50 GB/s\n"            /* 3 */
  "slow: fast\n"             /* 4 */
  "lat: \"1.5 us\"\n"        /* 5 */
  "size: 16G\n"              /* 6 */
  "power: 700 W\n"           /* 7 */
  "flops: 989 TFLOP/s\n"     /* 8 */
  "rate: 32 GT/s\n"          /* 9 */
  "on: yes\n"                /* 10 */
  "off: Off\n"               /* 11 */
  "qbool: \"true\"\n"        /* 12 */
  "qint: \"12\"\n"           /* 13 */
  "eff: 0.95\n"              /* 14 */
  "big: 100\n"               /* 15 */
  "neg: -4\n"                /* 16 */
  "list: [1, 2]\n"           /* 17 */
  "empty:\n"                 /* 18 */
  "frac: 2.5\n"              /* 19 */
  "sub: {x: 1}\n";           /* 20 */

START_TEST(test_yaml_typed_getters)
{
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok(getters_text);
  FsYamlNode *m = fs_yaml_doc_root(doc);
  GError *err = NULL;
  const char *s = NULL;
  gboolean b = FALSE;
  int64_t i = 0;
  double d = 0;
  FsTime t = 0;
  uint64_t z = 0;
  ck_assert(fs_yaml_get_string(fs_yaml_map_get(m, "name"), &s, &err));
  ck_assert_str_eq(s, "nvlink4");
  ck_assert(fs_yaml_get_int(fs_yaml_map_get(m, "lanes"), 1, 64, &i, &err) && i == 18);
  ck_assert(fs_yaml_get_int(fs_yaml_map_get(m, "qint"), 0, 100, &i, &err) && i == 12);
  ck_assert(fs_yaml_get_int(fs_yaml_map_get(m, "neg"), -10, 10, &i, &err) && i == -4);
  ck_assert(fs_yaml_get_bandwidth(fs_yaml_map_get(m, "bw"), &d, &err) && d == 50e9);
  ck_assert(fs_yaml_get_time(fs_yaml_map_get(m, "lat"), &t, &err) && t == 1500000);
  ck_assert(fs_yaml_get_size(fs_yaml_map_get(m, "size"), &z, &err) && z == (16ULL << 30));
  ck_assert(fs_yaml_get_power(fs_yaml_map_get(m, "power"), &d, &err) && d == 700);
  ck_assert(fs_yaml_get_flops(fs_yaml_map_get(m, "flops"), &d, &err) && d == 989e12);
  ck_assert(fs_yaml_get_lane_rate(fs_yaml_map_get(m, "rate"), &d, &err) && d == 32e9);
  ck_assert(fs_yaml_get_bool(fs_yaml_map_get(m, "on"), &b, &err) && b == TRUE);
  ck_assert(fs_yaml_get_bool(fs_yaml_map_get(m, "off"), &b, &err) && b == FALSE);
  ck_assert(fs_yaml_get_double(fs_yaml_map_get(m, "eff"), 0, 1, &d, &err) && d == 0.95);
  ck_assert(fs_yaml_get_double(fs_yaml_map_get(m, "qint"), 0, 100, &d, &err) && d == 12);
  fs_assert_no_error(err);

  ck_assert(!fs_yaml_get_bandwidth(fs_yaml_map_get(m, "slow"), &d, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:4:7: expected a bandwidth like \"50 GB/s\", got \"fast\"");
  ck_assert(!fs_yaml_get_time(fs_yaml_map_get(m, "bw"), &t, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:3:5: expected a time like \"1.5 us\", got \"50 GB/s\": unknown unit");
  ck_assert(!fs_yaml_get_bool(fs_yaml_map_get(m, "qbool"), &b, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:12:8: expected true or false, got the quoted string \"true\"");
  ck_assert(!fs_yaml_get_bool(fs_yaml_map_get(m, "lanes"), &b, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:2:8: expected true or false, got \"18\"");
  ck_assert(!fs_yaml_get_int(fs_yaml_map_get(m, "big"), 1, 64, &i, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:15:6: expected an integer from 1 to 64, got 100");
  ck_assert(!fs_yaml_get_int(fs_yaml_map_get(m, "neg"), 0, INT64_MAX, &i, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:16:6: expected an integer of at least 0, got -4");
  ck_assert(!fs_yaml_get_int(fs_yaml_map_get(m, "frac"), 0, 10, &i, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:19:7: expected an integer like \"64\", got \"2.5\"");
  ck_assert(!fs_yaml_get_int(fs_yaml_map_get(m, "name"), 0, 10, &i, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:1:7: expected an integer like \"64\", got \"nvlink4\"");
  ck_assert(!fs_yaml_get_double(fs_yaml_map_get(m, "eff"), 0, 0.5, &d, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:14:6: expected a number from 0 to 0.5, got 0.95");
  ck_assert(!fs_yaml_get_string(fs_yaml_map_get(m, "list"), &s, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:17:7: expected a string, got a list");
  ck_assert(!fs_yaml_get_string(fs_yaml_map_get(m, "empty"), &s, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:18:7: expected a string, got an empty value");
  ck_assert(!fs_yaml_get_size(fs_yaml_map_get(m, "sub"), &z, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:20:6: expected a size like \"16 GiB\", got a mapping");
  ck_assert(!fs_yaml_get_power(fs_yaml_map_get(m, "lanes"), &d, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:2:8: expected a power like \"700 W\", got \"18\": the unit is missing");
  ck_assert(!fs_yaml_get_flops(fs_yaml_map_get(m, "power"), &d, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:7:8: expected a FLOP rate like \"989 TFLOP/s\"");
  ck_assert(!fs_yaml_get_lane_rate(fs_yaml_map_get(m, "bw"), &d, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:3:5: expected a lane rate like \"16 GT/s\"");
  /* Out-of-range quantities keep the units parser's reason. */
  g_autoptr(FsYamlDoc) doc2 = fs_test_yaml_ok("t: -5 ns\nb: 1e30 TB/s\n");
  ck_assert(!fs_yaml_get_time(fs_yaml_map_get(fs_yaml_doc_root(doc2), "t"), &t, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:1:4: expected a time like \"1.5 us\", got \"-5 ns\": a time cannot be negative");
  ck_assert(!fs_yaml_get_bandwidth(fs_yaml_map_get(fs_yaml_doc_root(doc2), "b"), &d, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:2:4: expected a bandwidth like \"50 GB/s\", got \"1e30 TB/s\": the value is out of range");
  /* A value with newlines is quoted on one line. */
  g_autoptr(FsYamlDoc) doc3 = fs_test_yaml_ok("bw: |\n  50\n  GB/s\n");
  ck_assert(!fs_yaml_get_bandwidth(fs_yaml_map_get(fs_yaml_doc_root(doc3), "bw"), &d, &err));
  ck_assert_msg(strchr(err->message, '\n') == NULL, "multi-line: %s", err->message);
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:1:5: expected a bandwidth like \"50 GB/s\", got \"50\\nGB/s\\n\"");
  load_bad("\"a\\nb\": 1\n\"a\\nb\": 2\n", -1, FS_YAML_ERROR_SYNTAX, "t.yaml:2:1: duplicate key \"a\\nb\"");
  /* Getter errors are schema errors. */
  ck_assert(!fs_yaml_get_bool(fs_yaml_map_get(m, "lanes"), &b, &err));
  ck_assert_int_eq(err->code, FS_YAML_ERROR_SCHEMA);
  g_clear_error(&err);
}
END_TEST

START_TEST(test_yaml_bool_spellings)
{
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok("[true, True, TRUE, yes, Yes, on, ON, false, False, no, NO, off, Off, y, 1]");
  FsYamlNode *l = fs_yaml_doc_root(doc);
  GError *err = NULL;
  for (guint i = 0; i < 13; i++) {
    gboolean b = 2;
    ck_assert_msg(fs_yaml_get_bool(l->values[i], &b, &err), "%s", l->values[i]->value);
    ck_assert_int_eq(b, i < 7);
  }
  gboolean b;
  ck_assert(!fs_yaml_get_bool(l->values[13], &b, &err));
  fs_assert_error(err, FS_YAML_ERROR, "expected true or false, got \"y\"");
  ck_assert(!fs_yaml_get_bool(l->values[14], &b, &err));
  fs_assert_error(err, FS_YAML_ERROR, "expected true or false, got \"1\"");
}
END_TEST

START_TEST(test_yaml_map_access_and_keys)
{
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok("link:\n  name: x\n  latncy: 1 us\nlist: [1]\nscalar: s\n");
  FsYamlNode *root = fs_yaml_doc_root(doc);
  FsYamlNode *link = fs_yaml_map_get(root, "link");
  GError *err = NULL;
  static const char *const allowed[] = {"name", "latency", "bandwidth", NULL};
  ck_assert(!fs_yaml_check_keys(link, allowed, "link", &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:3:3: unknown key \"latncy\" in link; did you mean \"latency\"?");
  static const char *const other[] = {"name", "rails", NULL};
  ck_assert(!fs_yaml_check_keys(link, other, "nic", &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:3:3: unknown key \"latncy\" in nic; known keys: name, rails");
  static const char *const all[] = {"name", "latncy", NULL};
  ck_assert(fs_yaml_check_keys(link, all, "link", &err));
  fs_assert_no_error(err);

  ck_assert_ptr_null(fs_yaml_map_get(root, "nope"));
  ck_assert_ptr_null(fs_yaml_map_get(NULL, "nope"));
  ck_assert_ptr_null(fs_yaml_require_key(link, "bandwidth", "link", &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:2:3: missing key \"bandwidth\" in link");
  ck_assert_ptr_eq(fs_yaml_require_key(root, "list", "topology", &err), fs_yaml_map_get(root, "list"));

  ck_assert(fs_yaml_require_map(link, &err));
  ck_assert(fs_yaml_require_seq(fs_yaml_map_get(root, "list"), &err));
  fs_assert_no_error(err);
  ck_assert(!fs_yaml_require_map(fs_yaml_map_get(root, "list"), &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:4:7: expected a mapping, got a list");
  ck_assert(!fs_yaml_require_seq(fs_yaml_map_get(root, "scalar"), &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:5:9: expected a list, got \"s\"");
  ck_assert(!fs_yaml_require_seq(link, &err));
  fs_assert_error(err, FS_YAML_ERROR, "expected a list, got a mapping");

  ck_assert_str_eq(fs_yaml_kind_name(link), "a mapping");
  ck_assert_str_eq(fs_yaml_kind_name(fs_yaml_map_get(root, "list")), "a list");
  ck_assert_str_eq(fs_yaml_kind_name(fs_yaml_map_get(root, "scalar")), "a string");

  fs_yaml_error(&err, link, "custom %d", 7);
  ck_assert_int_eq(err->code, FS_YAML_ERROR_SCHEMA);
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:2:3: custom 7");
  fs_yaml_error(NULL, link, "ignored"); /* NULL error is allowed */
}
END_TEST

START_TEST(test_yaml_optional_fields)
{
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok("a: 5\nb: x\nbw: 10 GB/s\nt: 2 ns\nz: 1K\nf: off\nd: 0.5\n");
  FsYamlNode *m = fs_yaml_doc_root(doc);
  GError *err = NULL;
  int64_t i = 99;
  const char *s = "keep";
  double d = 7;
  FsTime t = 3;
  uint64_t z = 4;
  gboolean b = TRUE;
  /* Absent: unchanged. */
  ck_assert(fs_yaml_opt_int(m, "missing", 0, 10, &i, &err) && i == 99);
  ck_assert(fs_yaml_opt_string(m, "missing", &s, &err) && strcmp(s, "keep") == 0);
  ck_assert(fs_yaml_opt_bandwidth(m, "missing", &d, &err) && d == 7);
  ck_assert(fs_yaml_opt_time(m, "missing", &t, &err) && t == 3);
  ck_assert(fs_yaml_opt_size(m, "missing", &z, &err) && z == 4);
  ck_assert(fs_yaml_opt_bool(m, "missing", &b, &err) && b == TRUE);
  ck_assert(fs_yaml_opt_double(m, "missing", 0, 1, &d, &err) && d == 7);
  ck_assert(fs_yaml_opt_int(NULL, "a", 0, 10, &i, &err) && i == 99);
  /* Present: parsed. */
  ck_assert(fs_yaml_opt_int(m, "a", 0, 10, &i, &err) && i == 5);
  ck_assert(fs_yaml_opt_string(m, "b", &s, &err) && strcmp(s, "x") == 0);
  ck_assert(fs_yaml_opt_bandwidth(m, "bw", &d, &err) && d == 10e9);
  ck_assert(fs_yaml_opt_time(m, "t", &t, &err) && t == 2000);
  ck_assert(fs_yaml_opt_size(m, "z", &z, &err) && z == 1024);
  ck_assert(fs_yaml_opt_bool(m, "f", &b, &err) && b == FALSE);
  ck_assert(fs_yaml_opt_double(m, "d", 0, 1, &d, &err) && d == 0.5);
  fs_assert_no_error(err);
  /* Present and wrong: an error, *out unchanged. */
  i = 99;
  ck_assert(!fs_yaml_opt_int(m, "a", 6, 10, &i, &err) && i == 99);
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:1:4: expected an integer from 6 to 10, got 5");
  ck_assert(!fs_yaml_opt_time(m, "b", &t, &err) && t == 2000);
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:2:4: expected a time like \"1.5 us\", got \"x\"");
}
END_TEST

/* Found by tests/fuzz/fuzz-yaml.c: a quoted scalar may hold a newline, and
 * messages that quote it must still be one line (control characters are
 * escaped by fs_set_error_at). */
START_TEST(test_yaml_messages_are_one_line)
{
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok("a: \"one\\ntwo\"\nb: \"tab\\there\\x01\"\n");
  FsYamlNode *m = fs_yaml_doc_root(doc);
  GError *err = NULL;
  gboolean b;
  FsTime t;
  ck_assert(!fs_yaml_get_bool(fs_yaml_map_get(m, "a"), &b, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:1:4: expected true or false, got the quoted string \"one\\ntwo\"");
  ck_assert(!fs_yaml_get_time(fs_yaml_map_get(m, "b"), &t, &err));
  fs_assert_error(err, FS_YAML_ERROR, "got \"tab\\there\\x01\"");
  load_bad("\"x\\ny\": 1\n\"x\\ny\": 2\n", -1, FS_YAML_ERROR_SYNTAX,
           "t.yaml:2:1: duplicate key \"x\\ny\" (first defined at line 1, column 1)");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("yaml");
  FS_ADD_TEST(s, test_yaml_corpus);
  FS_ADD_TEST(s, test_yaml_positions_nested);
  FS_ADD_TEST(s, test_yaml_positions_utf8_columns);
  FS_ADD_TEST(s, test_yaml_scalars_null_and_quoted);
  FS_ADD_TEST(s, test_yaml_anchor_and_alias);
  FS_ADD_TEST(s, test_yaml_merge_keys);
  FS_ADD_TEST(s, test_yaml_duplicate_and_bad_keys);
  FS_ADD_TEST(s, test_yaml_documents);
  FS_ADD_TEST(s, test_yaml_depth_limit);
  FS_ADD_TEST(s, test_yaml_billion_laughs);
  FS_ADD_TEST(s, test_yaml_node_limit_plain);
  FS_ADD_TEST(s, test_yaml_binary_junk);
  FS_ADD_TEST(s, test_yaml_syntax_error_format);
  FS_ADD_TEST(s, test_yaml_load_file_errors);
  FS_ADD_TEST(s, test_yaml_typed_getters);
  FS_ADD_TEST(s, test_yaml_bool_spellings);
  FS_ADD_TEST(s, test_yaml_map_access_and_keys);
  FS_ADD_TEST(s, test_yaml_optional_fields);
  FS_ADD_TEST(s, test_yaml_messages_are_one_line);
  return fs_test_run_suite(s);
}
