/* test-schema.c — declared inputs (src/util/schema.c): a field table read
 * from YAML and from JSON (values, defaults, rows, nested records, sets and
 * open keys), the located messages of every refusal, and the README tables
 * the same tables print. */
#include <string.h>

#include "testutil.h"
#include "util/json-pos.h"
#include "util/schema.h"
#include "util/yaml.h"

typedef struct {
  const char *name;
  guint count;
  double bw;
  FsTime lat;
  int color;
  gboolean on;
  uint64_t size;
} Rec;

static const char *const colors[] = {"red", "green", NULL};
static const FsSchemaField rec_fields[] = {
  {.key = "name", .type = FS_SCHEMA_STRING, .offset = offsetof(Rec, name), .required = TRUE,
   .doc = "what it is called"},
  {.key = "count", .type = FS_SCHEMA_UINT, .offset = offsetof(Rec, count), .min = "1",
   .max = "8", .def = "2", .doc = "how many"},
  {.key = "bw", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_BANDWIDTH,
   .offset = offsetof(Rec, bw), .min = "0", .min_open = TRUE, .max = "1 TB/s"},
  {.key = "lat", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_TIME,
   .offset = offsetof(Rec, lat), .def = "1 us"},
  {.key = "color", .type = FS_SCHEMA_ENUM, .offset = offsetof(Rec, color), .names = colors,
   .label = "color"},
  {.key = "on", .type = FS_SCHEMA_BOOL, .offset = offsetof(Rec, on), .def = "true"},
  {.key = "size", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE, .offset = FS_SCHEMA_NOWHERE,
   .max = "1 KiB"},
};
static const FsSchema rec_schema = {"record", NULL, rec_fields, G_N_ELEMENTS(rec_fields)};

/* Reads text against rec_schema into *r (strings copied to a chunk that
 * outlives the document); the error (or NULL) is returned. */
static GError *read_rec(const char *text, Rec *r)
{
  static GStringChunk *strings;
  if (strings == NULL)
    strings = g_string_chunk_new(64);
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok(text);
  GError *err = NULL;
  memset(r, 0, sizeof *r);
  FsSchemaRead opts = {.strings = strings};
  gboolean ok = fs_schema_read(&rec_schema, fs_yaml_doc_root(doc), r, &opts, &err);
  ck_assert(ok == (err == NULL));
  return err;
}

START_TEST(test_schema_reads_values_and_defaults)
{
  Rec r;
  GError *err = read_rec("name: a\nbw: 25 GB/s\ncolor: green\nsize: 1 KiB\n", &r);
  fs_assert_no_error(err);
  ck_assert_str_eq(r.name, "a");
  ck_assert_uint_eq(r.count, 2);      /* default */
  ck_assert(r.bw == 25e9);
  ck_assert_int_eq(r.lat, FS_US);     /* default, through the units parser */
  ck_assert_int_eq(r.color, 1);
  ck_assert(r.on);
  ck_assert_uint_eq(r.size, 0);       /* FS_SCHEMA_NOWHERE: checked, not stored */
  ck_assert(fs_schema_check(&rec_schema, &err));
  ck_assert_ptr_eq(fs_schema_field(&rec_schema, "bw"), &rec_fields[2]);
  ck_assert_ptr_null(fs_schema_field(&rec_schema, "nope"));
}
END_TEST

START_TEST(test_schema_errors_are_located)
{
  Rec r;
  GError *err = read_rec("name: a\ncout: 3\n", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:2:1: unknown key \"cout\" in record; did you mean \"count\"?");
  err = read_rec("count: 3\n", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:1:1: missing key \"name\" in record");
  err = read_rec("name: a\ncount: 9\n", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:2:8: expected an integer from 1 to 8, got 9");
  err = read_rec("name: a\nbw: 2 TB/s\n", &r);
  fs_assert_error(err, FS_YAML_ERROR,
                  "t.yaml:2:5: expected a bandwidth above 0 and at most 1 TB/s, got \"2 TB/s\"");
  err = read_rec("name: a\nbw: 25\n", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:2:5: expected a bandwidth like \"50 GB/s\", got \"25\"");
  err = read_rec("name: a\ncolor: gren\n", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:2:8: unknown color \"gren\"; did you mean \"green\"?");
  err = read_rec("name: [a]\n", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:1:7: expected a string, got a list");
  err = read_rec("name: a\nsize: 2 KiB\n", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:2:7: expected a size of at most 1 KiB, got \"2 KiB\"");
  err = read_rec("- a\n", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:1:1: expected a mapping, got a list");
}
END_TEST

START_TEST(test_schema_markdown_and_check)
{
  g_autoptr(GString) md = g_string_new(NULL);
  fs_schema_doc_markdown(&rec_schema, md);
  ck_assert(g_str_has_prefix(md->str, "| key | value | required | default | meaning |\n"));
  ck_assert_ptr_nonnull(strstr(md->str, "| `name` | text | yes |  | what it is called |\n"));
  ck_assert_ptr_nonnull(strstr(md->str, "| `count` | integer from 1 to 8 | no | `2` | how many |\n"));
  ck_assert_ptr_nonnull(strstr(md->str, "| `bw` | bandwidth above 0 and at most 1 TB/s | no |"));
  ck_assert_ptr_nonnull(strstr(md->str, "| `color` | one of `red`, `green` | no |"));
  /* A table whose bound does not parse is refused by the check. */
  static const FsSchemaField bad_fields[] = {
    {.key = "t", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_TIME, .offset = 0, .max = "1 GB"},
  };
  static const FsSchema bad = {"bad", NULL, bad_fields, 1};
  GError *err = NULL;
  ck_assert(!fs_schema_check(&bad, &err));
  fs_assert_error(err, FS_YAML_ERROR, "schema bad, field \"t\": \"1 GB\" does not parse as a time");
}
END_TEST

/* The shapes beyond one value per key: a row of numbers, records nested at
 * an offset (one table for every element of an array), a set of names,
 * open keys handed to the loader, a string that may not be empty. */
typedef struct {
  double lat[2][3];
  guint64 absent;
  const char *src;
} Shapes;

static const char *const shape_names[] = {"Tree", "Ring", "PAT", NULL};
static const FsSchemaField row_fields[] = {
  {.key = "Tree", .type = FS_SCHEMA_DOUBLE, .offset = 0, .required = TRUE, .min = "0",
   .max = "100", .count = 3},
};
static const FsSchema row_schema = {"NVLINK", NULL, row_fields, G_N_ELEMENTS(row_fields)};
static const FsSchemaField open_fields[] = {
  {.key = "architecture", .any_key = TRUE, .type = FS_SCHEMA_ENUM,
   .offset = FS_SCHEMA_NOWHERE, .names = shape_names, .label = "algorithm", .required = TRUE,
   .doc = "any name"},
};
static const FsSchema open_schema = {"arch_rows", NULL, open_fields, G_N_ELEMENTS(open_fields)};
static const FsSchemaField shape_fields[] = {
  {.key = "source", .type = FS_SCHEMA_STRING, .offset = offsetof(Shapes, src), .required = TRUE,
   .nonempty = TRUE},
  {.key = "a", .type = FS_SCHEMA_MAP, .offset = offsetof(Shapes, lat[0]), .sub = &row_schema,
   .required = TRUE},
  {.key = "b", .type = FS_SCHEMA_MAP, .offset = offsetof(Shapes, lat[1]), .sub = &row_schema,
   .required = TRUE},
  {.key = "absent", .type = FS_SCHEMA_SET, .offset = offsetof(Shapes, absent),
   .names = shape_names, .label = "algorithm"},
  {.key = "rows", .type = FS_SCHEMA_MAP, .offset = FS_SCHEMA_NOWHERE, .sub = &open_schema},
};
static const FsSchema shape_schema = {"shapes", NULL, shape_fields, G_N_ELEMENTS(shape_fields)};

/* FsSchemaRead.any_key: appends "key=index;" to data (a GString). */
static gboolean open_key(const FsSchemaField *f, const FsYamlNode *key, const FsYamlNode *node,
                         gconstpointer value, gpointer data, GError **error)
{
  (void)f, (void)node, (void)error;
  g_string_append_printf(data, "%s=%d;", key->value, *(const int *)value);
  return TRUE;
}

static GError *read_shapes(const char *text, Shapes *r, GString *keys)
{
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok(text);
  GError *err = NULL;
  memset(r, 0, sizeof *r);
  FsSchemaRead opts = {.any_key = open_key, .data = keys};
  gboolean ok = fs_schema_read(&shape_schema, fs_yaml_doc_root(doc), r, &opts, &err);
  ck_assert(ok == (err == NULL));
  return err;
}

START_TEST(test_schema_rows_nested_sets_open_keys)
{
  Shapes r;
  g_autoptr(GString) keys = g_string_new(NULL);
  GError *err = read_shapes("source: s\na: {Tree: [1, 2, 3]}\nb: {Tree: [4, 5, 6.5]}\n"
                            "absent: [PAT, Tree]\nrows: {x: Ring, y: PAT}\n", &r, keys);
  fs_assert_no_error(err);
  ck_assert(r.lat[0][0] == 1 && r.lat[0][2] == 3 && r.lat[1][0] == 4 && r.lat[1][2] == 6.5);
  ck_assert_uint_eq(r.absent, (1u << 2) | 1u);
  ck_assert_str_eq(keys->str, "x=1;y=2;");
  ck_assert(fs_schema_check(&shape_schema, &err));

  static const struct {
    const char *text, *message;
  } bad[] = {
    {"source: s\na: {Tree: [1, 2]}\nb: {Tree: [4, 5, 6]}\n",
     "t.yaml:2:11: expected a list of 3 numbers, got 2"},
    {"source: s\na: {Tree: [1, 2, 300]}\nb: {Tree: [4, 5, 6]}\n",
     "t.yaml:2:18: expected a number from 0 to 100, got 300"},
    {"source: s\na: {Tree: 1}\nb: {Tree: [4, 5, 6]}\n", "t.yaml:2:11: expected a list, got \"1\""},
    {"source: s\na: {Tree: [1, 2, 3]}\nb: {Tre: [4, 5, 6]}\n",
     "t.yaml:3:5: unknown key \"Tre\" in NVLINK; did you mean \"Tree\"?"},
    {"source: s\na: {Tree: [1, 2, 3]}\nb: {Tree: [4, 5, 6]}\nabsent: [Rin]\n",
     "t.yaml:4:10: unknown algorithm \"Rin\"; did you mean \"Ring\"?"},
    {"source: s\na: {Tree: [1, 2, 3]}\nb: {Tree: [4, 5, 6]}\nabsent: Ring\n",
     "t.yaml:4:9: expected a list, got \"Ring\""},
    {"source: s\na: {Tree: [1, 2, 3]}\nb: {Tree: [4, 5, 6]}\nrows: {x: Rng}\n",
     "t.yaml:4:11: unknown algorithm \"Rng\"; did you mean \"Ring\"?"},
    {"source: s\na: {Tree: [1, 2, 3]}\nb: {Tree: [4, 5, 6]}\nrows: {}\n",
     "t.yaml:4:7: expected at least one algorithm in arch_rows"},
    {"source: \"\"\na: {Tree: [1, 2, 3]}\nb: {Tree: [4, 5, 6]}\n",
     "t.yaml:1:9: expected a non-empty source"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_string_truncate(keys, 0);
    err = read_shapes(bad[i].text, &r, keys);
    fs_assert_error(err, FS_YAML_ERROR, bad[i].message);
  }

  g_autoptr(GString) md = g_string_new(NULL);
  fs_schema_doc_markdown(&row_schema, md);
  ck_assert_ptr_nonnull(strstr(md->str, "| `Tree` | list of 3 numbers from 0 to 100 | yes |"));
  g_string_truncate(md, 0);
  fs_schema_doc_markdown(&open_schema, md);
  ck_assert_ptr_nonnull(
    strstr(md->str, "| *architecture* | one of `Tree`, `Ring`, `PAT` | at least one |  | any name |"));
  g_string_truncate(md, 0);
  fs_schema_doc_markdown(&shape_schema, md);
  ck_assert_ptr_nonnull(strstr(md->str, "| `absent` | list of names from `Tree`, `Ring`, `PAT` |"));
}
END_TEST

/* The JSON front end: the same table read from JSON, every refusal at the
 * value's (or the key's) line:col with its JSON path, JSON's own types. */
static const FsSchemaField json_fields[] = {
  {.key = "name", .type = FS_SCHEMA_STRING, .offset = offsetof(Rec, name), .required = TRUE},
  {.key = "count", .type = FS_SCHEMA_UINT, .offset = offsetof(Rec, count), .min = "1",
   .max = "8"},
  {.key = "bw_GBps", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_BANDWIDTH,
   .number_unit = "GB/s", .offset = offsetof(Rec, bw), .min = "0", .min_open = TRUE,
   .max = "1000"},
  {.key = "lat_us", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_TIME, .number_unit = "us",
   .offset = offsetof(Rec, lat)},
  {.key = "on", .type = FS_SCHEMA_BOOL, .offset = offsetof(Rec, on)},
  {.key = "color", .type = FS_SCHEMA_ENUM, .offset = offsetof(Rec, color), .names = colors},
};
static const FsSchema json_schema = {"record", NULL, json_fields, G_N_ELEMENTS(json_fields)};

static GError *read_json_rec(const char *text, Rec *r)
{
  GError *err = NULL;
  g_autoptr(FsJsonDoc) json = fs_json_doc_parse(text, strlen(text), "t.json", &err);
  fs_assert_no_error(err);
  g_autoptr(FsYamlDoc) doc = fs_yaml_doc_from_json(json);
  memset(r, 0, sizeof *r);
  static GStringChunk *strings;
  if (strings == NULL)
    strings = g_string_chunk_new(64);
  FsSchemaRead opts = {.strings = strings};
  gboolean ok = fs_schema_read(&json_schema, fs_yaml_doc_root(doc), r, &opts, &err);
  ck_assert(ok == (err == NULL));
  return err;
}

START_TEST(test_schema_json_front_end)
{
  Rec r;
  GError *err = read_json_rec("{\"name\": \"a\", \"count\": 3, \"bw_GBps\": 12.5,\n"
                              " \"lat_us\": 1.5, \"on\": true, \"color\": \"green\"}",
                              &r);
  fs_assert_no_error(err);
  ck_assert_str_eq(r.name, "a");
  ck_assert_uint_eq(r.count, 3);
  ck_assert(r.bw == 12.5 * 1e9);       /* a bare number in the key's unit */
  ck_assert_int_eq(r.lat, 1500000);    /* 1.5 us in ps */
  ck_assert(r.on);
  ck_assert_int_eq(r.color, 1);
  /* Unknown key, at the key, with the suggestion. */
  err = read_json_rec("{\"name\": \"a\",\n \"cuont\": 3}", &r);
  fs_assert_error(err, FS_YAML_ERROR,
                  "t.json:2:2: $.cuont: unknown key \"cuont\" in record; did you mean \"count\"?");
  /* Missing required key, at the object. */
  err = read_json_rec("{\"count\": 3}", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.json:1:1: $: missing key \"name\" in record");
  /* Wrong JSON type, both ways, and an object where a scalar goes. */
  err = read_json_rec("{\"name\": \"a\", \"count\": \"3\"}", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.json:1:24: $.count: expected an integer, got a string");
  err = read_json_rec("{\"name\": 7}", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.json:1:10: $.name: expected a string, got a number");
  err = read_json_rec("{\"name\": \"a\", \"on\": \"true\"}", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.json:1:21: $.on: expected true or false, got a string");
  err = read_json_rec("{\"name\": {\"x\": 1}}", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.json:1:10: $.name: expected a string, got an object");
  err = read_json_rec("[1]", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.json:1:1: $: expected an object, got an array");
  /* Out of range: the literal as written, the range in the key's unit. */
  err = read_json_rec("{\"name\": \"a\",\n  \"bw_GBps\": 2e3}", &r);
  fs_assert_error(err, FS_YAML_ERROR,
                  "t.json:2:14: $.bw_GBps: expected a bandwidth in GB/s above 0 and at most 1000, "
                  "got 2e3");
  err = read_json_rec("{\"name\": \"a\", \"count\": 0}", &r);
  fs_assert_error(err, FS_YAML_ERROR, "t.json:1:24: $.count: expected an integer from 1 to 8, got 0");
  err = read_json_rec("{\"name\": \"a\", \"color\": \"gren\"}", &r);
  fs_assert_error(err, FS_YAML_ERROR,
                  "t.json:1:24: $.color: unknown color \"gren\"; did you mean \"green\"?");
}
END_TEST

/* A list whose items have a declared form (valid + form), not empty. */
static gboolean valid_hex4(const char *s)
{
  if (strlen(s) != 4)
    return FALSE;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isxdigit(*p))
      return FALSE;
  return TRUE;
}
static const FsSchemaField id_item = {.key = "ids", .type = FS_SCHEMA_STRING,
                                      .offset = FS_SCHEMA_NOWHERE, .valid = valid_hex4,
                                      .form = "\"10de\" (four hex digits)"};
static const FsSchemaField ids_fields[] = {
  {.key = "ids", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE, .item = &id_item,
   .nonempty = TRUE, .doc = "ids"},
};
static const FsSchema ids_schema = {"part", NULL, ids_fields, G_N_ELEMENTS(ids_fields)};

static GError *read_ids(const char *text)
{
  g_autoptr(FsYamlDoc) doc = fs_test_yaml_ok(text);
  GError *err = NULL;
  gboolean ok = fs_schema_read(&ids_schema, fs_yaml_doc_root(doc), NULL, NULL, &err);
  ck_assert(ok == (err == NULL));
  return err;
}

START_TEST(test_schema_list_items_have_a_form)
{
  GError *err = read_ids("ids: [10de, 15b3]\n");
  fs_assert_no_error(err);
  err = read_ids("ids: [10de, 15bx]\n");
  fs_assert_error(err, FS_YAML_ERROR,
                  "t.yaml:1:13: \"15bx\" in \"ids\" is not of the form \"10de\" (four hex digits)");
  err = read_ids("ids: []\n");
  fs_assert_error(err, FS_YAML_ERROR,
                  "t.yaml:1:6: \"ids\" is empty; expected a list like [\"10de\" (four hex digits)]");
  err = read_ids("ids: [[10de]]\n");
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:1:7: expected a string, got a list");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("schema");
  FS_ADD_TEST(s, test_schema_reads_values_and_defaults);
  FS_ADD_TEST(s, test_schema_errors_are_located);
  FS_ADD_TEST(s, test_schema_markdown_and_check);
  FS_ADD_TEST(s, test_schema_rows_nested_sets_open_keys);
  FS_ADD_TEST(s, test_schema_json_front_end);
  FS_ADD_TEST(s, test_schema_list_items_have_a_form);
  return fs_test_run_suite(s);
}
