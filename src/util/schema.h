/* schema.h — declared inputs: a table of the keys a YAML mapping may hold,
 * and one walker that reads a mapping against it into a C record.
 *
 * A schema (FsSchema) is a static table of fields, one per key: its name,
 * type, unit (a quantity goes through the units parser of util/units.h),
 * range, default, whether it is required, and a doc string.  The same table
 * drives the loader and the format tables of the READMEs
 * (fs_schema_doc_markdown, printed by tools/gen-schema-docs), so the two
 * cannot drift apart.
 *
 * The walker (fs_schema_read) checks that the node is a mapping, refuses
 * the first key no field declares (with "did you mean"), a missing required
 * key, a value of the wrong type, a unit the parser refuses and a value out
 * of range, each as one line "file:line:col: sentence" in
 * FS_YAML_ERROR_SCHEMA.  Fields are read in table order (a schema's base
 * first), so the first error is the same whatever the order of the keys.
 * What one table cannot say — keys that exclude each other, references
 * between records, lists of records — stays in the loader, after the walk,
 * with the same kind of message.
 *
 * Shapes beyond one value per key:
 *  - a row: a scalar field with count > 0 is a list of exactly count
 *    values, each checked like the field, stored as an array at offset
 *    ("[LL, LL128, Simple]" as double[3]);
 *  - a nested record: a FS_SCHEMA_MAP with sub and an offset reads sub into
 *    record + offset (sub's offsets are relative to it), so one table serves
 *    every element of an array of records (the three protocols, the rows of
 *    a per-architecture table); with FS_SCHEMA_NOWHERE, into the record;
 *  - a set of names: FS_SCHEMA_SET, a list of names[] stored as bits;
 *  - open keys: a field with any_key stands for every key no other field
 *    declares (an architecture name, a setting); each such key's value is
 *    read as the field and handed, with its key, to FsSchemaRead.any_key.
 *
 * Ranges and defaults are written as text in the field's unit ("100 TB/s",
 * "1 s", "0.5"), so that messages and READMEs quote them as written, and
 * are parsed by the field's own parser (the units parser for quantities)
 * when a value is checked or a default stored; a table whose text does not
 * parse is a programmer error (a critical warning, and the walk fails).
 *
 * Ownership: schemas are static and never freed.  Strings stored in a
 * record are borrowed from the YAML document unless FsSchemaRead.strings is
 * set, in which case they are copied there.  Cost: linear in the fields
 * times the keys of the mapping (both small); parsed bounds are cached.
 */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "util/units.h"
#include "util/yaml.h"

G_BEGIN_DECLS

typedef enum {
  FS_SCHEMA_STRING,   /* const char *; a scalar (not an empty value) */
  FS_SCHEMA_BOOL,     /* gboolean; unquoted true/false, yes/no, on/off */
  FS_SCHEMA_UINT,     /* guint; an integer within [min, max] (default 0 to G_MAXUINT) */
  FS_SCHEMA_DOUBLE,   /* double; a plain number within the range */
  FS_SCHEMA_QUANTITY, /* a number with a unit (FsSchemaUnit): double, FsTime or uint64_t */
  FS_SCHEMA_ENUM,     /* int; one of names[] (stored as values[i], or i) */
  FS_SCHEMA_MAP,      /* a mapping: read with sub into the same record, or left to the loader */
  FS_SCHEMA_LIST,     /* a list: only its kind is checked; the loader reads its items */
  FS_SCHEMA_ANY,      /* any value: left to the loader */
  FS_SCHEMA_SET,      /* guint64; a list of names[], bit values[i] (or i) set for each */
  FS_SCHEMA_SCALAR,   /* const char *; any scalar (a number, a string, a boolean) as written */
} FsSchemaType;

/* The unit of a FS_SCHEMA_QUANTITY, and how its value is stored. */
typedef enum {
  FS_SCHEMA_BANDWIDTH, /* double, bytes/s ("25 GB/s") */
  FS_SCHEMA_LANE_RATE, /* double, bits/s per lane ("16 GT/s") */
  FS_SCHEMA_TIME,      /* FsTime, picoseconds ("100 ns") */
  FS_SCHEMA_SIZE,      /* uint64_t, bytes ("80 GiB") */
  FS_SCHEMA_POWER,     /* double, watts ("700 W") */
  FS_SCHEMA_FLOPS,     /* double, FLOP/s ("989 TFLOP/s") */
} FsSchemaUnit;

/* offset of a field that is checked but not stored (the loader reads it). */
#define FS_SCHEMA_NOWHERE ((size_t)-1)

typedef struct FsSchema FsSchema;

typedef struct FsSchemaField {
  const char *key;
  FsSchemaType type;
  FsSchemaUnit unit;          /* FS_SCHEMA_QUANTITY */
  size_t offset;              /* in the record, or FS_SCHEMA_NOWHERE */
  gboolean required;
  const char *min, *max;      /* range as text in the field's unit; NULL: the type's own */
  gboolean min_open;          /* min itself is out of range ("more than 0") */
  const char *def;            /* stored when the key is absent; NULL: the record is left as is */
  const char *const *names;   /* FS_SCHEMA_ENUM: NULL-terminated */
  const int *values;          /* FS_SCHEMA_ENUM: value of names[i]; NULL: i */
  const char *label;          /* FS_SCHEMA_ENUM: "link family" in "unknown link family ..."
                               * (NULL: the key) */
  const FsSchema *sub;        /* FS_SCHEMA_MAP: the nested mapping's table, or NULL */
  const char *doc;            /* one sentence for the README table */
  const char *value_doc;      /* the README's "value" column when the type says too little */
  const char *required_doc;   /* the README's "required" column when not plain yes/no */
  const char *number_unit;    /* FS_SCHEMA_QUANTITY or _DOUBLE: the value is a bare number in
                               * this unit ("GB/s", "us"), as JSON files write it, the key
                               * naming the unit; a quantity is converted to its storage unit
                               * (a time rounded to the ps), a double stored as written.  The
                               * range is then bare numbers in this unit. */
  const char *const *aliases; /* other names of the field outside the file (command-line
                               * options: "--tp"), NULL-terminated; listed in the README */
  int id;                     /* the loader's own number for the field (0: none), which
                               * FsSchemaRead.seen reports */
  guint count;                /* a STRING, BOOL, UINT, DOUBLE, QUANTITY or ENUM field: 0, one
                               * value; above 0, a list of exactly count values, each checked
                               * as the field, stored as an array of count at offset */
  gboolean nonempty;          /* FS_SCHEMA_STRING: the empty string "" is refused; FS_SCHEMA_LIST
                               * with item: the empty list is refused ("\"KEY\" is empty;
                               * expected a list like [FORM]") */
  gboolean (*valid)(const char *text); /* FS_SCHEMA_STRING: the form a value must have (NULL:
                               * any); a value it refuses: "\"VALUE\" in \"KEY\" is not of the
                               * form FORM" */
  const char *form;           /* with valid: the form in that message, an example
                               * ("\"10de:2330\" (vendor:device, lowercase hex)") */
  const struct FsSchemaField *item; /* FS_SCHEMA_LIST: each item is read as this field (its key
                               * names the list in messages); NULL: items unchecked.  The
                               * loader still reads (and stores) the items itself. */
  gboolean any_key;           /* the field of every key no other field of the schema (or its
                               * base) declares; key is only the README's name for them
                               * ("architecture").  Values are read as the field (offset:
                               * FS_SCHEMA_NOWHERE) and passed to FsSchemaRead.any_key, in the
                               * file's order; required: at least one such key.  Such a
                               * field belongs in a schema that is no other's base. */
} FsSchemaField;

struct FsSchema {
  const char *name;           /* the mapping in messages: "link model" */
  const FsSchema *base;       /* fields shared with other schemas, read first; or NULL */
  const FsSchemaField *fields;
  guint n_fields;
};

/* Options of a walk. */
typedef struct {
  GStringChunk *strings;      /* copy strings here; NULL: borrow them from the document */
  gboolean allow_unknown;     /* leave keys no field declares to the caller */
  gboolean skip_base;         /* read only the schema's own fields (the base was read) */
  GQuark domain;              /* errors in this domain and code (0: FS_YAML_ERROR_SCHEMA), */
  int code;                   /* for loaders whose callers match their module's errors */
  /* Called for every field present in the mapping (nested ones included),
   * after its value was read and stored: the loader's hook to remember
   * where a value came from, or to store one no offset can reach. */
  gboolean (*seen)(const FsSchemaField *field, const FsYamlNode *node, gpointer data,
                   GError **error);
  /* Called for each key of an any_key field, in the file's order, with the
   * value read as the field (value points to its storage type: a const
   * char *, a guint, a double, an int of an enum…; NULL for a map, list or
   * any value): the loader stores what no offset can (a name → row table).
   * Unset: the values are only checked. */
  gboolean (*any_key)(const FsSchemaField *field, const FsYamlNode *key, const FsYamlNode *node,
                      gconstpointer value, gpointer data, GError **error);
  gpointer data;
} FsSchemaRead;

/* JSON: the same walk reads a JSON object once it is a tree of FsYamlNode
 * (fs_yaml_doc_from_json in util/yaml.h): messages then carry the JSON path
 * after the position ("c.json:3:47: $.summary.launch.async_us: expected
 * ..."), kinds are named as JSON names them ("an object"), and a string
 * is refused where a number is expected and the reverse. */

/* Reads map against schema into record (a struct the offsets refer to;
 * NULL when every field is FS_SCHEMA_NOWHERE).
 * opts may be NULL (borrowed strings, unknown keys refused, base read).
 * Returns FALSE with the first error in FS_YAML_ERROR_SCHEMA (or
 * opts->domain, opts->code): map is not a
 * mapping, an unknown key (position of the key), a missing required key
 * (position of the mapping), a wrong type, unit or range (position of the
 * value).  Fields before the failing one are already stored. */
gboolean fs_schema_read(const FsSchema *schema, const FsYamlNode *map, gpointer record,
                        const FsSchemaRead *opts, GError **error);

/* Reads one value node against field into out (the field's storage type;
 * an array of field->count of them for a row), with the same checks and
 * messages as fs_schema_read; for loaders that read the items of a list,
 * or a FS_SCHEMA_NOWHERE field, themselves. */
gboolean fs_schema_read_value(const FsSchemaField *field, const FsYamlNode *node, gpointer out,
                              GError **error);

/* The field of schema (or its base) named key, or NULL. */
const FsSchemaField *fs_schema_field(const FsSchema *schema, const char *key);

/* Checks the table itself: every range bound and default parses as its
 * field's value (a bound may also be a bare number, "0"), every enum has
 * names; nested tables too.  FALSE with a message naming the schema and the
 * field (FS_YAML_ERROR_SCHEMA).  For tests and tools/gen-schema-docs; a
 * walk over a broken table fails at the field instead. */
gboolean fs_schema_check(const FsSchema *schema, GError **error);

/* Appends the Markdown table of schema's own fields (not the base's) to
 * out: key, value (type, unit and range), required, default, meaning; one
 * row per field in table order.  Deterministic. */
void fs_schema_doc_markdown(const FsSchema *schema, GString *out);

/* A schema with the name the READMEs' markers give it ("catalog.link"):
 * each module that declares inputs lists its schemas in a table of these,
 * which tools/gen-schema-docs prints. */
typedef struct {
  const char *id;             /* "catalog.link" */
  const FsSchema *schema;
} FsSchemaEntry;

G_END_DECLS
