/* nccl-log-json.c — the JSON layout of an nccl-tests log (the document
 * nccl-tests writes with -J): one test, its devices under "config", its
 * rows under "results", each field checked for its type and range at its
 * JSON path.  The records and the checks that follow a read are in
 * nccl-log.c; the text layout is nccl-log-text.c. */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "calib/nccl-log.h"
#include "calib/nccl-log-private.h"
#include "util/error.h"
#include "util/json-pos.h"

typedef struct {
  const FsJsonDoc *doc;
  GError **error;
} Js;

static gboolean js_fail(Js *js, const char *path, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static gboolean js_fail(Js *js, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fs_json_doc_error(js->doc, js->error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_PARSE, path, "%s",
                    msg);
  return FALSE;
}

/* The member key of o, checked: a non-negative integer (integer) or number
 * (nccl-tests writes "nan" as a string for NaN, accepted as a number).
 * NULL after failing at path.key when it is missing or of another type. */
static json_t *js_get(Js *js, const json_t *o, const char *path, const char *key,
                      gboolean integer)
{
  g_autofree char *mp = fs_json_path_member(path, key);
  json_t *v = json_object_get(o, key);
  const char *what = integer ? "integer" : "number";
  if (v == NULL) {
    js_fail(js, mp, "missing; expected %s %s", integer ? "an" : "a", what);
    return NULL;
  }
  if (!integer && json_is_string(v) && strcmp(json_string_value(v), "nan") == 0)
    return v;
  if (integer ? !json_is_integer(v) || json_integer_value(v) < 0
              : !json_is_number(v) || json_number_value(v) < 0) {
    js_fail(js, mp, "expected a non-negative %s", what);
    return NULL;
  }
  return v;
}

/* A number member (NaN for "nan"). */
static gboolean js_number(Js *js, const json_t *o, const char *path, const char *key,
                          double *out)
{
  json_t *v = js_get(js, o, path, key, FALSE);
  if (v != NULL)
    *out = json_is_string(v) ? NAN : json_number_value(v);
  return v != NULL;
}

/* A non-negative integer member. */
static gboolean js_uint(Js *js, const json_t *o, const char *path, const char *key,
                        uint64_t *out)
{
  json_t *v = js_get(js, o, path, key, TRUE);
  if (v != NULL)
    *out = (uint64_t)json_integer_value(v);
  return v != NULL;
}

/* One "out_of_place" / "in_place" object; absent or null: not measured. */
static gboolean js_timing(Js *js, const json_t *r, const char *path, const char *key,
                          gboolean *has, double *t, double *alg, double *bus, double *wrong)
{
  json_t *o = json_object_get(r, key);
  *wrong = NAN;
  if (o == NULL || json_is_null(o))
    return TRUE;
  g_autofree char *p = fs_json_path_member(path, key);
  if (!json_is_object(o))
    return js_fail(js, p, "expected an object or null");
  const char *tkey = json_object_get(o, "time") != NULL ? "time" : "cpu_time";
  if (!js_number(js, o, p, tkey, t) || !js_number(js, o, p, "alg_bw", alg) ||
      !js_number(js, o, p, "bus_bw", bus))
    return FALSE;
  json_t *w = json_object_get(o, "nwrong");
  if (w != NULL && json_is_number(w))
    *wrong = json_number_value(w);
  *has = TRUE;
  return TRUE;
}

static gboolean js_devices(Js *js, const json_t *config, FsNcclLogTest *t)
{
  json_t *devs = json_object_get(config, "devices");
  if (devs == NULL)
    return TRUE;
  if (!json_is_array(devs))
    return js_fail(js, "$.config.devices", "expected an array");
  for (size_t i = 0; i < json_array_size(devs); i++) {
    json_t *d = json_array_get(devs, i);
    g_autofree char *p = fs_json_path_index("$.config.devices", i);
    uint64_t rank = 0, pid = 0, dev = 0;
    if (!json_is_object(d))
      return js_fail(js, p, "expected an object");
    if (!js_uint(js, d, p, "rank", &rank))
      return FALSE;
    json_t *v;
    if ((v = json_object_get(d, "pid")) != NULL && json_is_integer(v))
      pid = (uint64_t)json_integer_value(v);
    if ((v = json_object_get(d, "device")) != NULL && json_is_integer(v))
      dev = (uint64_t)json_integer_value(v);
    FsNcclLogDevice *nd = g_new0(FsNcclLogDevice, 1);
    nd->rank = (guint)rank;
    nd->group = (v = json_object_get(d, "group")) != NULL && json_is_integer(v)
                    ? (int)json_integer_value(v)
                    : -1;
    nd->pid = (guint)pid;
    nd->device = (guint)dev;
    v = json_object_get(d, "hostname");
    nd->host = g_strdup(v != NULL && json_is_string(v) ? json_string_value(v) : "");
    v = json_object_get(d, "device_hex");
    nd->bus_id = g_strdup(v != NULL && json_is_string(v) ? json_string_value(v) : "");
    v = json_object_get(d, "device_info");
    nd->name = g_strdup(v != NULL && json_is_string(v) ? json_string_value(v) : "");
    g_ptr_array_add(t->devices, nd);
  }
  return TRUE;
}

static gboolean js_results(Js *js, const json_t *root, FsNcclLogTest *t)
{
  json_t *res = json_object_get(root, "results");
  if (res == NULL)
    return js_fail(js, "$.results", "missing; expected the array of result rows");
  if (!json_is_array(res))
    return js_fail(js, "$.results", "expected an array");
  for (size_t i = 0; i < json_array_size(res); i++) {
    json_t *r = json_array_get(res, i);
    g_autofree char *p = fs_json_path_index("$.results", i);
    if (!json_is_object(r))
      return js_fail(js, p, "expected an object");
    FsNcclLogRow row = {.root = -1};
    if (!js_uint(js, r, p, "size", &row.size) || !js_uint(js, r, p, "count", &row.count))
      return FALSE;
    json_t *v = json_object_get(r, "type");
    row.type = g_strdup(v != NULL && json_is_string(v) ? json_string_value(v) : "");
    v = json_object_get(r, "redop");
    row.redop = v != NULL && json_is_string(v) ? g_strstrip(g_strdup(json_string_value(v))) : NULL;
    v = json_object_get(r, "root");
    if (v != NULL && json_is_string(v))
      row.root = (int)strtol(json_string_value(v), NULL, 10);
    else if (v != NULL && json_is_integer(v))
      row.root = (int)json_integer_value(v);
    if (!js_timing(js, r, p, "out_of_place", &row.has_oop, &row.oop_time_us, &row.oop_algbw,
                   &row.oop_busbw, &row.oop_wrong) ||
        !js_timing(js, r, p, "in_place", &row.has_ip, &row.ip_time_us, &row.ip_algbw,
                   &row.ip_busbw, &row.ip_wrong)) {
      fs_nccl_log_row_clear(&row);
      return FALSE;
    }
    if (!row.has_oop && !row.has_ip) {
      fs_nccl_log_row_clear(&row);
      return js_fail(js, p, "neither \"out_of_place\" nor \"in_place\" has a time");
    }
    g_array_append_val(t->rows, row);
  }
  return TRUE;
}

/* See nccl-log-private.h. */
FsNcclLog *fs_nccl_log_parse_json(const char *text, gsize len, const char *name, GError **error)
{
  g_autoptr(FsJsonDoc) doc = fs_json_doc_parse(text, len, name, error);
  if (doc == NULL)
    return NULL;
  Js js = {doc, error};
  const json_t *root = fs_json_doc_root(doc);
  if (!json_is_object(root)) {
    js_fail(&js, "$", "expected an object (nccl-tests -J output)");
    return NULL;
  }
  g_autoptr(FsNcclLog) log = fs_nccl_log_new(name);
  log->json = TRUE;
  FsNcclLogTest *t = fs_nccl_log_add_test(log, 0);
  json_t *v = json_object_get(root, "nccl_version");
  if (v != NULL && json_is_integer(v))
    t->nccl_version = (guint)json_integer_value(v);
  /* The collective from the program name in args[0]. */
  json_t *args = json_object_get(root, "args");
  if (args != NULL && json_is_array(args) && json_array_size(args) > 0 &&
      json_is_string(json_array_get(args, 0)))
    t->collective = fs_nccl_log_collective_from_binary(json_string_value(json_array_get(args, 0)));
  json_t *config = json_object_get(root, "config");
  if (config != NULL) {
    if (!json_is_object(config)) {
      js_fail(&js, "$.config", "expected an object");
      return NULL;
    }
    uint64_t nt = 0, ng = 0;
    if ((v = json_object_get(config, "nthreads")) != NULL && json_is_integer(v))
      nt = (uint64_t)json_integer_value(v);
    if ((v = json_object_get(config, "ngpus")) != NULL && json_is_integer(v))
      ng = (uint64_t)json_integer_value(v);
    t->nthreads = (guint)nt;
    t->ngpus = (guint)ng;
    if (!js_devices(&js, config, t))
      return NULL;
  }
  if (!js_results(&js, root, t))
    return NULL;
  json_t *avg = json_object_get(root, "average_bus_bandwidth");
  if (avg != NULL && json_is_object(avg) && (v = json_object_get(avg, "bandwidth")) != NULL &&
      json_is_number(v)) {
    if (json_number_value(v) < 0) {
      js_fail(&js, "$.average_bus_bandwidth.bandwidth", "expected a non-negative number");
      return NULL;
    }
    t->has_avg_busbw = TRUE;
    t->avg_busbw = json_number_value(v);
  }
  fs_nccl_log_test_finish(t, 0, 0, 0, 0);
  if (t->rows->len == 0) {
    fs_json_doc_error(doc, error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_EMPTY, "$.results",
                      "no result rows");
    return NULL;
  }
  return g_steal_pointer(&log);
}
