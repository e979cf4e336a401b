/* chakra-read.c — Chakra trace files into nodes (chakra-private.h): the
 * binary form (length-delimited protobuf messages, decoded by protoc-c's
 * code for et_def.proto), the JSON form Chakra's jsonizer writes (the same
 * messages as JSON objects one after another), and the JSON workload graph
 * Chakra's feeder reads ({"workload_graph": [...]}); and the listing of a
 * trace folder. */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "util/datadir.h"
#include "util/limits.h"
#include "util/error.h"
#include "util/strutil.h"
#include "workload/chakra/chakra-private.h"
#include "workload/chakra/et_def.pb-c.h"
#include "workload/spec.h"

/* Biggest message accepted (a node of a real trace is a few hundred bytes):
 * MAX_MESSAGE, or $FABRICSIM_MAX_MESSAGE_BYTES. */
#define MAX_MESSAGE ((guint64)64 << 20)

static guint64 max_message(void)
{
  return fs_env_limit("FABRICSIM_MAX_MESSAGE_BYTES", MAX_MESSAGE, (guint64)1 << 40);
}

/* The message guard's error for a message of mlen bytes at byte at. */
static gboolean too_long(GError **error, const char *name, gsize at, uint64_t mlen)
{
  g_autofree char *lim = fs_limit_bytes_text(max_message());
  g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID,
              "%s: byte %zu: a message of %" G_GUINT64_FORMAT " bytes is larger than %s "
              "(FABRICSIM_MAX_MESSAGE_BYTES raises the limit)", name, at, mlen, lim);
  return FALSE;
}

static gboolean fail(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static gboolean fail(GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fs_set_error_va(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID, fmt, ap);
  va_end(ap);
  return FALSE;
}

void ck_node_clear(CkNode *n)
{
  g_free(n->name);
  if (n->deps)
    g_array_unref(n->deps);
  g_free(n->pg_name);
  g_free(n->inputs_values);
  g_free(n->where);
}

void ck_file_clear(CkFile *f)
{
  g_free(f->name);
  if (f->nodes)
    g_array_unref(f->nodes);
  f->name = NULL;
  f->nodes = NULL;
}

static CkNode *new_node(CkFile *f, char *where)
{
  CkNode n = { .deps = g_array_new(FALSE, FALSE, sizeof(uint64_t)), .where = where };
  g_array_append_val(f->nodes, n);
  return &g_array_index(f->nodes, CkNode, f->nodes->len - 1);
}

/* An attribute's value, whatever its protobuf type. */
typedef enum { V_INT, V_UINT, V_DOUBLE, V_BOOL, V_STRING, V_OTHER } VKind;
typedef struct {
  VKind kind;
  int64_t i;
  uint64_t u;
  double d;
  gboolean b;
  const char *s;
} AttrVal;

/* Sets the node field of the attribute `name` (others are ignored). */
static gboolean apply_attr(CkNode *n, guint index, const char *name, const AttrVal *v,
                           GError **error)
{
  int64_t *iv = NULL;
  gboolean *has = NULL;
  if (strcmp(name, "comm_type") == 0)
    iv = &n->comm_type, has = &n->has_comm_type;
  else if (strcmp(name, "comm_size") == 0)
    iv = &n->comm_size, has = &n->has_comm_size;
  else if (strcmp(name, "comm_src") == 0)
    iv = &n->comm_src, has = &n->has_src;
  else if (strcmp(name, "comm_dst") == 0)
    iv = &n->comm_dst, has = &n->has_dst;
  else if (strcmp(name, "comm_tag") == 0)
    iv = &n->comm_tag, has = &n->has_tag;
  else if (strcmp(name, "fabricsim_duration_ps") == 0)
    iv = &n->duration_ps, has = &n->has_duration_ps;
  else if (strcmp(name, "stream") == 0)
    iv = &n->stream, has = &n->has_stream;
  if (iv != NULL) {
    if (v->kind == V_INT && v->i >= 0)
      *iv = v->i;
    else if (v->kind == V_UINT && v->u <= (uint64_t)INT64_MAX)
      *iv = (int64_t)v->u;
    else
      return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): attribute \"%s\" must be a "
                  "non-negative integer", n->where, index, n->id, name);
    *has = TRUE;
    return TRUE;
  }
  if (strcmp(name, "num_ops") == 0 || strcmp(name, "tensor_size") == 0) {
    double d = v->kind == V_INT ? (double)v->i : v->kind == V_UINT ? (double)v->u
             : v->kind == V_DOUBLE ? v->d : -1;
    if (!(d >= 0 && d < 1e300))
      return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): attribute \"%s\" must be a "
                  "non-negative number", n->where, index, n->id, name);
    if (name[0] == 'n')
      n->num_ops = d, n->has_num_ops = TRUE;
    else
      n->tensor_size = d, n->has_tensor_size = TRUE;
    return TRUE;
  }
  if (strcmp(name, "pg_name") == 0) {
    if (v->kind != V_STRING)
      return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): attribute \"pg_name\" must be "
                  "a string", n->where, index, n->id);
    g_free(n->pg_name);
    n->pg_name = g_strdup(v->s);
    return TRUE;
  }
  if (strcmp(name, "is_cpu_op") == 0) {
    if (v->kind != V_BOOL && !(v->kind == V_INT && (v->i == 0 || v->i == 1)))
      return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): attribute \"is_cpu_op\" must "
                  "be a boolean", n->where, index, n->id);
    n->is_cpu_op = v->kind == V_BOOL ? v->b : v->i == 1;
  }
  return TRUE;
}

/* ---- The binary form ---------------------------------------------------- */

/* Reads a varint at *pos; FALSE when it is cut short or longer than 10 bytes. */
static gboolean read_varint(const guint8 *data, gsize len, gsize *pos, uint64_t *out)
{
  uint64_t v = 0;
  for (guint shift = 0; shift < 70; shift += 7) {
    if (*pos >= len)
      return FALSE;
    guint8 b = data[(*pos)++];
    if (shift == 63 && b > 1)
      return FALSE;
    v |= (uint64_t)(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return TRUE;
    }
  }
  return FALSE;
}

static gboolean pb_attr(CkNode *n, guint index, const ChakraProtoMsg__AttributeProto *a,
                        GError **error)
{
  AttrVal v = { .kind = V_OTHER };
  switch (a->value_case) {
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: v.kind = V_INT; v.i = a->int32_val; break;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: v.kind = V_INT; v.i = a->int64_val; break;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL: v.kind = V_INT; v.i = a->sint32_val; break;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL: v.kind = V_INT; v.i = a->sint64_val; break;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED32_VAL: v.kind = V_INT; v.i = a->sfixed32_val; break;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED64_VAL: v.kind = V_INT; v.i = a->sfixed64_val; break;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: v.kind = V_UINT; v.u = a->uint32_val; break;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL: v.kind = V_UINT; v.u = a->uint64_val; break;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED32_VAL: v.kind = V_UINT; v.u = a->fixed32_val; break;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED64_VAL: v.kind = V_UINT; v.u = a->fixed64_val; break;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL: v.kind = V_DOUBLE; v.d = a->double_val; break;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FLOAT_VAL: v.kind = V_DOUBLE; v.d = a->float_val; break;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL: v.kind = V_BOOL; v.b = a->bool_val; break;
  case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL: v.kind = V_STRING; v.s = a->string_val; break;
  default: break;
  }
  return apply_attr(n, index, a->name ? a->name : "", &v, error);
}

/* Parses Chakra's binary form (et_def.proto): a varint-length-prefixed GlobalMetadata message,
 * then length-prefixed Node messages to the end, each appended to f->nodes with its ids, deps
 * (ctrl first, then data), duration, inputs.values and attributes.  Returns FALSE with error set,
 * naming the byte offset and node, for an empty file, a bad length or a message the decoder
 * rejects, or with an attribute's error; the nodes read so far stay in f. */
static gboolean parse_binary(const char *name, const guint8 *data, gsize len, CkFile *f,
                             GError **error)
{
  gsize pos = 0;
  uint64_t mlen;
  if (len == 0)
    return fail(error, "%s: empty file: expected Chakra's GlobalMetadata message", name);
  if (!read_varint(data, len, &pos, &mlen) || mlen > len - pos)
    return fail(error, "%s: byte 0: expected the length of Chakra's GlobalMetadata message "
                "(a varint no larger than the rest of the file)", name);
  if (mlen > max_message())
    return too_long(error, name, 0, mlen);
  ChakraProtoMsg__GlobalMetadata *gm =
    chakra_proto_msg__global_metadata__unpack(NULL, (size_t)mlen, data + pos);
  if (gm == NULL)
    return fail(error, "%s: byte %zu: not a Chakra GlobalMetadata message (%" G_GUINT64_FORMAT
                " bytes that et_def.proto's decoder rejects)", name, pos, mlen);
  chakra_proto_msg__global_metadata__free_unpacked(gm, NULL);
  pos += (gsize)mlen;
  for (guint index = 0; pos < len; index++) {
    gsize at = pos;
    if (!read_varint(data, len, &pos, &mlen) || mlen > len - pos)
      return fail(error, "%s: byte %zu: node %u: expected a message length (a varint no larger "
                  "than the rest of the file)", name, at, index);
    if (mlen > max_message())
      return too_long(error, name, at, mlen);
    ChakraProtoMsg__Node *m = chakra_proto_msg__node__unpack(NULL, (size_t)mlen, data + pos);
    if (m == NULL)
      return fail(error, "%s: byte %zu: node %u: not a Chakra Node message (%" G_GUINT64_FORMAT
                  " bytes that et_def.proto's decoder rejects)", name, at, index, mlen);
    CkNode *n = new_node(f, g_strdup_printf("%s: byte %zu", name, at));
    n->id = m->id;
    n->name = g_strdup(m->name ? m->name : "");
    n->type = (int)m->type;
    g_array_append_vals(n->deps, m->ctrl_deps, (guint)m->n_ctrl_deps);
    n->n_ctrl = n->deps->len;
    g_array_append_vals(n->deps, m->data_deps, (guint)m->n_data_deps);
    n->duration_us = m->duration_micros;
    if (m->inputs != NULL && m->inputs->values != NULL && m->inputs->values[0] != '\0')
      n->inputs_values = g_strdup(m->inputs->values);
    gboolean ok = TRUE;
    for (size_t k = 0; ok && k < m->n_attr; k++)
      ok = pb_attr(n, index, m->attr[k], error);
    chakra_proto_msg__node__free_unpacked(m, NULL);
    if (!ok)
      return FALSE;
    pos += (gsize)mlen;
  }
  return TRUE;
}

/* ---- The JSON forms ----------------------------------------------------- */

/* An unsigned integer from a JSON integer or a decimal string (protobuf's
 * JSON writes 64-bit integers as strings). */
static gboolean json_u64(json_t *v, uint64_t *out)
{
  if (json_is_integer(v) && json_integer_value(v) >= 0) {
    *out = (uint64_t)json_integer_value(v);
    return TRUE;
  }
  if (json_is_string(v)) {
    const char *s = json_string_value(v);
    char *end;
    if (!g_ascii_isdigit(s[0]))
      return FALSE;
    errno = 0;
    guint64 x = g_ascii_strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
      return FALSE;
    *out = x;
    return TRUE;
  }
  return FALSE;
}

/* The field key in protobuf's JSON name (camel) or its proto name (snake). */
static json_t *field(json_t *o, const char *camel, const char *snake)
{
  json_t *v = json_object_get(o, camel);
  return v != NULL ? v : json_object_get(o, snake);
}

static const char *const node_types[] = {
  "INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE", "COMP_NODE",
  "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE",
};

static gboolean json_deps(CkNode *n, guint index, json_t *d, const char *what, GError **error)
{
  if (d == NULL)
    return TRUE;
  uint64_t x;
  if (json_u64(d, &x)) { /* the feeder's form allows a single id */
    g_array_append_val(n->deps, x);
    return TRUE;
  }
  if (!json_is_array(d))
    return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): \"%s\" must be a list of node "
                "ids", n->where, index, n->id, what);
  size_t k;
  json_t *e;
  json_array_foreach(d, k, e) {
    if (!json_u64(e, &x))
      return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): %s[%zu] is not a node id",
                  n->where, index, n->id, what, k);
    g_array_append_val(n->deps, x);
  }
  return TRUE;
}

/* Reads one attribute object a of node n (at index) in protobuf's JSON form: its "name" and the
 * value under a key ending in "Val" or "_val" (bool, string, double or float, else an integer
 * given as a number or a decimal string; bytes are ignored), then applies it with apply_attr.
 * Returns FALSE with error set, naming the node and attribute, when a is not an object with
 * "name" or the value has the wrong JSON type, or with apply_attr's error. */
static gboolean json_attr(CkNode *n, guint index, json_t *a, GError **error)
{
  const char *name = json_string_value(json_object_get(a, "name"));
  if (!json_is_object(a) || name == NULL)
    return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): an attribute must be an object "
                "with \"name\"", n->where, index, n->id);
  AttrVal v = { .kind = V_OTHER };
  const char *key;
  json_t *x;
  json_object_foreach(a, key, x) {
    gsize kl = strlen(key);
    gboolean camel = kl > 3 && strcmp(key + kl - 3, "Val") == 0;
    gboolean snake = kl > 4 && strcmp(key + kl - 4, "_val") == 0;
    if (!camel && !snake)
      continue;
    if (strncmp(key, "bool", 4) == 0) {
      if (!json_is_boolean(x))
        return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): attribute \"%s\": %s must "
                    "be true or false", n->where, index, n->id, name, key);
      v.kind = V_BOOL;
      v.b = json_is_true(x);
    } else if (strncmp(key, "string", 6) == 0) {
      if (!json_is_string(x))
        return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): attribute \"%s\": %s must "
                    "be a string", n->where, index, n->id, name, key);
      v.kind = V_STRING;
      v.s = json_string_value(x);
    } else if (strncmp(key, "double", 6) == 0 || strncmp(key, "float", 5) == 0) {
      if (!json_is_number(x))
        return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): attribute \"%s\": %s must "
                    "be a number", n->where, index, n->id, name, key);
      v.kind = V_DOUBLE;
      v.d = json_number_value(x);
    } else if (strncmp(key, "bytes", 5) != 0) {
      /* The integer types: a number, or a decimal string for 64 bits. */
      uint64_t u;
      if (json_is_integer(x)) {
        v.kind = V_INT;
        v.i = json_integer_value(x);
      } else if (json_u64(x, &u)) {
        v.kind = V_UINT;
        v.u = u;
      } else if (json_is_string(x) && json_string_value(x)[0] == '-') {
        v.kind = V_INT;
        v.i = -1; /* negative: every attribute read here refuses it */
      } else {
        return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): attribute \"%s\": %s must "
                    "be an integer", n->where, index, n->id, name, key);
      }
    }
  }
  return apply_attr(n, index, name, &v, error);
}

/* One node object of the jsonizer's form. */
static gboolean json_node(CkNode *n, guint index, json_t *o, GError **error)
{
  uint64_t u = 0;
  json_t *v = json_object_get(o, "id");
  if (v != NULL && !json_u64(v, &n->id))
    return fail(error, "%s: node %u: \"id\" must be a non-negative integer", n->where, index);
  v = json_object_get(o, "name");
  n->name = g_strdup(json_is_string(v) ? json_string_value(v) : "");
  v = json_object_get(o, "type");
  if (json_is_string(v)) {
    n->type = -1;
    for (guint k = 0; k < G_N_ELEMENTS(node_types); k++)
      if (strcmp(json_string_value(v), node_types[k]) == 0)
        n->type = (int)k;
    if (n->type < 0)
      return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): unknown node type \"%s\"",
                  n->where, index, n->id, json_string_value(v));
  } else if (v != NULL) {
    if (!json_u64(v, &u) || u > G_MAXINT)
      return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): \"type\" must be a node type",
                  n->where, index, n->id);
    n->type = (int)u;
  }
  if (!json_deps(n, index, field(o, "ctrlDeps", "ctrl_deps"), "ctrl_deps", error))
    return FALSE;
  n->n_ctrl = n->deps->len;
  if (!json_deps(n, index, field(o, "dataDeps", "data_deps"), "data_deps", error))
    return FALSE;
  v = field(o, "durationMicros", "duration_micros");
  if (v != NULL && !json_u64(v, &n->duration_us))
    return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): \"duration_micros\" must be a "
                "non-negative integer", n->where, index, n->id);
  json_t *in = json_object_get(o, "inputs");
  const char *vals = json_string_value(json_object_get(in, "values"));
  if (vals != NULL && vals[0] != '\0')
    n->inputs_values = g_strdup(vals);
  json_t *attrs = json_object_get(o, "attr");
  if (attrs != NULL && !json_is_array(attrs))
    return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): \"attr\" must be a list",
                n->where, index, n->id);
  size_t k;
  json_t *a;
  json_array_foreach(attrs, k, a)
    if (!json_attr(n, index, a, error))
      return FALSE;
  return TRUE;
}

/* One node of the feeder's {"workload_graph": [...]} form. */
static gboolean feeder_node(CkNode *n, guint index, json_t *o, GError **error)
{
  static const struct { const char *key, *attr; } ints[] = {
    { "comm_type", "comm_type" }, { "comm_size", "comm_size" }, { "comm_src", "comm_src" },
    { "comm_dst", "comm_dst" }, { "comm_tag", "comm_tag" }, { "tensor_size", "tensor_size" },
  };
  if (!json_is_object(o))
    return fail(error, "%s: node %u: expected an object", n->where, index);
  uint64_t u;
  json_t *v = json_object_get(o, "Id");
  if (!json_u64(v, &n->id))
    return fail(error, "%s: node %u: expected \"Id\", a non-negative integer", n->where, index);
  v = json_object_get(o, "Name");
  n->name = g_strdup(json_is_string(v) ? json_string_value(v) : "");
  if (!json_u64(json_object_get(o, "NodeType"), &u) || u > G_MAXINT)
    return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): expected \"NodeType\", a Chakra "
                "node type number", n->where, index, n->id);
  n->type = (int)u;
  if (!json_deps(n, index, json_object_get(o, "ctrlDeps"), "ctrlDeps", error))
    return FALSE;
  n->n_ctrl = n->deps->len;
  if (!json_deps(n, index, json_object_get(o, "data_deps"), "data_deps", error))
    return FALSE;
  v = json_object_get(o, "runtime");
  if (v != NULL && !json_u64(v, &n->duration_us))
    return fail(error, "%s: node %u (id %" G_GUINT64_FORMAT "): \"runtime\" must be a "
                "non-negative integer (microseconds)", n->where, index, n->id);
  v = json_object_get(o, "is_cpu_op");
  if (v != NULL) {
    AttrVal b = { .kind = json_is_boolean(v) ? V_BOOL : V_OTHER, .b = json_is_true(v) };
    if (!apply_attr(n, index, "is_cpu_op", &b, error))
      return FALSE;
  }
  for (guint k = 0; k < G_N_ELEMENTS(ints); k++) {
    v = json_object_get(o, ints[k].key);
    if (v == NULL)
      continue;
    AttrVal x = { .kind = json_is_integer(v) ? V_INT : V_OTHER, .i = json_integer_value(v) };
    if (!apply_attr(n, index, ints[k].attr, &x, error))
      return FALSE;
  }
  return TRUE;
}

/* 1-based line and column of byte pos (counting on from line, col at byte from). */
static void advance(const guint8 *data, gsize *from, gsize pos, int *line, int *col)
{
  for (; *from < pos; (*from)++) {
    if (data[*from] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

/* Parses Chakra's JSON forms, a stream of JSON objects: the first is the GlobalMetadata, and
 * either holds the feeder's "workload_graph" list of every node or is followed by one object
 * per Node; each node is appended to f->nodes with its file:line:col.  Returns FALSE with
 * FS_WORKLOAD_ERROR set for an empty file, invalid JSON (at its line and column), a value that
 * is not an object, or a node's own error. */
static gboolean parse_json(const char *name, const guint8 *data, gsize len, CkFile *f,
                           GError **error)
{
  gsize pos = 0, counted = 0;
  int line = 1, col = 1;
  for (guint obj = 0;; obj++) {
    while (pos < len && g_ascii_isspace(data[pos]))
      pos++;
    if (pos >= len) {
      if (obj == 0)
        return fail(error, "%s: empty file: expected Chakra's GlobalMetadata as a JSON object", name);
      return TRUE;
    }
    advance(data, &counted, pos, &line, &col);
    json_error_t je;
    json_t *o = json_loadb((const char *)data + pos, len - pos,
                           JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &je);
    if (o == NULL) {
      /* jansson counts from the object's start (no position: -1). */
      int el = je.line >= 1 ? je.line + line - 1 : line;
      int ec = je.line > 1 && je.column >= 1 ? je.column
             : je.line == 1 && je.column >= 1 ? je.column + col - 1 : col;
      fs_set_error_at(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID, name, el, ec, "%s",
                      je.text);
      return FALSE;
    }
    gsize used = je.position;
    g_autofree char *where = g_strdup_printf("%s:%d:%d", name, line, col);
    gboolean ok = TRUE;
    if (!json_is_object(o)) {
      ok = fail(error, "%s: expected a JSON object (Chakra's GlobalMetadata or a Node)", where);
    } else if (obj == 0 && json_object_get(o, "workload_graph") != NULL) {
      /* The feeder's form: every node in one list. */
      json_t *wg = json_object_get(o, "workload_graph");
      if (!json_is_array(wg))
        ok = fail(error, "%s: \"workload_graph\" must be a list of nodes", where);
      size_t k;
      json_t *e;
      if (ok)
        json_array_foreach(wg, k, e) {
          CkNode *n = new_node(f, g_strdup_printf("%s: workload_graph[%zu]", where, k));
          if (!(ok = feeder_node(n, (guint)k, e, error)))
            break;
        }
    } else if (obj > 0) {
      CkNode *n = new_node(f, g_steal_pointer(&where));
      ok = json_node(n, obj - 1, o, error);
    }
    json_decref(o);
    if (!ok)
      return FALSE;
    pos += used;
  }
}

gboolean ck_parse(const char *name, const guint8 *data, gsize len, CkFile *f, GError **error)
{
  f->nodes = g_array_new(FALSE, FALSE, sizeof(CkNode));
  g_array_set_clear_func(f->nodes, (GDestroyNotify)ck_node_clear);
  if (g_str_has_suffix(name, ".json"))
    return parse_json(name, data, len, f, error);
  return parse_binary(name, data, len, f, error);
}

/* ---- Files and folders -------------------------------------------------- */

/* The prefix and rank of "<prefix>.<rank>.<ext>" (base name), or FALSE. */
static gboolean split_name(const char *path, char **prefix, guint *rank)
{
  g_autofree char *base = g_path_get_basename(path);
  char *ext = strrchr(base, '.');
  if (ext == NULL || (strcmp(ext, ".et") != 0 && strcmp(ext, ".json") != 0))
    return FALSE;
  *ext = '\0';
  char *dot = strrchr(base, '.');
  if (dot == NULL || dot == base || dot[1] == '\0' || strlen(dot + 1) > 6)
    return FALSE;
  for (const char *p = dot + 1; *p; p++)
    if (!g_ascii_isdigit(*p))
      return FALSE;
  *rank = (guint)g_ascii_strtoull(dot + 1, NULL, 10);
  *dot = '\0';
  *prefix = g_strdup(base);
  return TRUE;
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* An ASTRA-sim text workload on every GPU of topo (ngpu ranks); the title
 * is the file's base name without ".txt". */
static FsReplay *load_text(const char *name, const guint8 *data, gsize len, guint ngpu,
                           const FsTopo *topo, const FsEfficiency *eff,
                           const FsChakraOptions *opt, FsChakraStats *stats, GError **error)
{
  CkFile *files = g_new0(CkFile, ngpu);
  for (guint k = 0; k < ngpu; k++) {
    files[k].name = g_strdup(name);
    files[k].rank = k;
  }
  FsReplay *r = NULL;
  if (ck_parse_text(name, data, len, ngpu, files, error)) {
    g_autofree char *base = g_path_get_basename(name);
    base[strlen(base) - 4] = '\0';
    r = ck_build(files, ngpu, base, topo, eff, opt, stats, error);
  }
  for (guint k = 0; k < ngpu; k++)
    ck_file_clear(&files[k]);
  g_free(files);
  return r;
}

/* See chakra.h.  Also: the title is the first name's prefix (else its base name).  Fails with
 * FS_WORKLOAD_ERROR for more files than the topology has GPUs or a rank out of range or given
 * twice, and with the parser's or ck_build's error; the caller owns the replay. */
FsReplay *fs_chakra_load_buffers(const char *const *names, const guint8 *const *data,
                                 const gsize *len, guint n, const FsTopo *topo,
                                 const FsEfficiency *eff, const FsChakraOptions *opt,
                                 FsChakraStats *stats, GError **error)
{
  g_return_val_if_fail(n > 0, NULL);
  guint ngpu;
  fs_topo_gpus(topo, &ngpu);
  if (n == 1 && g_str_has_suffix(names[0], ".txt"))
    return load_text(names[0], data[0], len[0], ngpu, topo, eff, opt, stats, error);
  if (n > ngpu) {
    fail(error, "%s: %u trace files but the topology %s has %u GPUs", names[0], n,
         fs_topo_name(topo), ngpu);
    return NULL;
  }
  /* Ranks from the names when every one has the form, else by position. */
  g_autofree guint *rank = g_new(guint, n);
  g_autofree int *file_of = g_new(int, n);
  g_autofree char *title = NULL;
  gboolean named = TRUE;
  for (guint i = 0; i < n && named; i++) {
    g_autofree char *p = NULL;
    named = split_name(names[i], &p, &rank[i]);
    if (named && title == NULL)
      title = g_steal_pointer(&p);
  }
  for (guint i = 0; i < n; i++)
    file_of[i] = -1;
  for (guint i = 0; i < n; i++) {
    if (!named)
      rank[i] = i;
    if (rank[i] >= n || file_of[rank[i]] >= 0) {
      fail(error, "%s: rank %u %s; the %u files must hold ranks 0 to %u once each", names[i],
           rank[i], rank[i] >= n ? "is out of range" : "comes twice", n, n - 1);
      return NULL;
    }
    file_of[rank[i]] = (int)i;
  }
  if (title == NULL) {
    g_autofree char *base = g_path_get_basename(names[0]);
    title = g_strdup(base);
  }
  CkFile *files = g_new0(CkFile, n);
  FsReplay *r = NULL;
  gboolean ok = TRUE;
  for (guint k = 0; k < n && ok; k++) {
    guint i = (guint)file_of[k];
    files[k].name = g_strdup(names[i]);
    files[k].rank = k;
    ok = ck_parse(names[i], data[i], len[i], &files[k], error);
  }
  if (ok)
    r = ck_build(files, n, title, topo, eff, opt, stats, error);
  for (guint k = 0; k < n; k++)
    ck_file_clear(&files[k]);
  g_free(files);
  return r;
}

/* See chakra.h.  Also: a folder's files that do not have the <prefix>.<rank>.<ext> form are
 * ignored, and the rest are taken in name order.  Errors: a GFileError when the folder or a
 * file cannot be read, FS_WORKLOAD_ERROR for a folder with no trace or two prefixes, and those of
 * fs_chakra_load_buffers.  Every file is read whole into memory first. */
FsReplay *fs_chakra_load(const char *const *paths, guint n_paths, const FsTopo *topo,
                         const FsEfficiency *eff, const FsChakraOptions *opt,
                         FsChakraStats *stats, GError **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *first = n_paths == 1 ? fs_datadir_resolve(paths[0]) : NULL;
  if (first != NULL && g_file_test(first, G_FILE_TEST_IS_DIR)) {
    GDir *dir = g_dir_open(first, 0, error);
    if (dir == NULL)
      return NULL;
    g_autofree char *prefix = NULL;
    const char *e;
    while ((e = g_dir_read_name(dir)) != NULL) {
      g_autofree char *p = NULL;
      guint rk;
      if (!split_name(e, &p, &rk))
        continue;
      g_ptr_array_add(names, g_build_filename(first, e, NULL));
      if (prefix == NULL) {
        prefix = g_steal_pointer(&p);
      } else if (strcmp(prefix, p) != 0) {
        g_dir_close(dir);
        /* Name the two in a fixed order. */
        const char *a = strcmp(prefix, p) < 0 ? prefix : p, *b = a == prefix ? p : prefix;
        fail(error, "%s: holds traces of two prefixes, \"%s\" and \"%s\"; expected one "
             "(<prefix>.<rank>.et)", first, a, b);
        return NULL;
      }
    }
    g_dir_close(dir);
    if (names->len == 0) {
      fail(error, "%s: no Chakra trace (<prefix>.<rank>.et or .json) in this folder", first);
      return NULL;
    }
    g_ptr_array_sort(names, cmp_str);
  } else {
    for (guint i = 0; i < n_paths; i++)
      g_ptr_array_add(names, fs_datadir_resolve(paths[i]));
  }
  guint n = names->len;
  GPtrArray *bufs = g_ptr_array_new_with_free_func(g_free);
  g_autofree gsize *lens = g_new0(gsize, n);
  for (guint i = 0; i < n; i++) {
    char *text = NULL;
    if (!g_file_get_contents(names->pdata[i], &text, &lens[i], error)) {
      g_ptr_array_unref(bufs);
      return NULL;
    }
    g_ptr_array_add(bufs, text);
  }
  FsReplay *r = fs_chakra_load_buffers((const char *const *)names->pdata,
                                       (const guint8 *const *)bufs->pdata, lens, n, topo, eff,
                                       opt, stats, error);
  g_ptr_array_unref(bufs);
  return r;
}
