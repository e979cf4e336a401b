/* nccl-log.c — see nccl-log.h.  The text reader is a line loop with a
 * little state (the current test and its column map); the JSON reader
 * walks nccl-tests' -J document. */
#include "calib/nccl-log.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/json-pos.h"

G_DEFINE_QUARK(fs-nccl-log-error-quark, fs_nccl_log_error)

/* The largest log read (256 MiB, as for JSON). */
#define MAX_LOG_BYTES ((gsize)256 << 20)

static const char *const collectives[] = {
  "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall",
  "sendrecv", "gather", "scatter", "hypercube", NULL,
};

char *fs_nccl_log_collective_from_binary(const char *name)
{
  g_return_val_if_fail(name != NULL, NULL);
  g_autofree char *base = g_path_get_basename(name);
  char *p = strstr(base, "_perf");
  if (p != NULL)
    *p = '\0';
  for (guint i = 0; collectives[i]; i++)
    if (strcmp(base, collectives[i]) == 0)
      return g_strdup(base);
  return NULL;
}

/* ---- records ---------------------------------------------------------------- */

static void device_free(gpointer p)
{
  FsNcclLogDevice *d = p;
  g_free(d->host);
  g_free(d->bus_id);
  g_free(d->name);
  g_free(d);
}

static void row_clear(gpointer p)
{
  FsNcclLogRow *r = p;
  g_free(r->type);
  g_free(r->redop);
}

static FsNcclLogTest *test_new(int line)
{
  FsNcclLogTest *t = g_new0(FsNcclLogTest, 1);
  t->devices = g_ptr_array_new_with_free_func(device_free);
  t->rows = g_array_new(FALSE, TRUE, sizeof(FsNcclLogRow));
  g_array_set_clear_func(t->rows, row_clear);
  t->line = line;
  return t;
}

static void test_free(gpointer p)
{
  FsNcclLogTest *t = p;
  g_free(t->collective);
  g_free(t->version);
  g_ptr_array_free(t->devices, TRUE);
  g_array_free(t->rows, TRUE);
  g_free(t);
}

void fs_nccl_log_free(FsNcclLog *log)
{
  if (log == NULL)
    return;
  g_free(log->file);
  g_ptr_array_free(log->tests, TRUE);
  g_free(log);
}

FsNcclLog *fs_nccl_log_new(const char *name)
{
  FsNcclLog *log = g_new0(FsNcclLog, 1);
  log->file = g_strdup(name);
  log->tests = g_ptr_array_new_with_free_func(test_free);
  return log;
}

FsNcclLogTest *fs_nccl_log_add_test(FsNcclLog *log, int line)
{
  FsNcclLogTest *t = test_new(line);
  g_ptr_array_add(log->tests, t);
  return t;
}

static FsNcclLog *log_new(const char *name, gboolean json)
{
  FsNcclLog *log = g_new0(FsNcclLog, 1);
  log->file = g_strdup(name);
  log->json = json;
  log->tests = g_ptr_array_new_with_free_func(test_free);
  return log;
}

/* Ranks and hosts once a test is complete. */
static void test_finish(FsNcclLogTest *t)
{
  if (t->devices->len > 0) {
    t->nranks = t->devices->len;
    g_autoptr(GHashTable) hosts = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < t->devices->len; i++) {
      const FsNcclLogDevice *d = g_ptr_array_index(t->devices, i);
      g_hash_table_add(hosts, d->host);
    }
    t->nhosts = g_hash_table_size(hosts);
  } else if (t->nranks == 0) {
    t->nranks = t->nthreads * t->ngpus;
  }
}

/* ---- text: columns ------------------------------------------------------------ */

typedef enum {
  COL_SKIP, COL_SIZE, COL_COUNT, COL_TYPE, COL_REDOP, COL_ROOT,
  COL_TIME, COL_ALGBW, COL_BUSBW, COL_WRONG,
} ColKind;

#define MAX_COLS 48

typedef struct {
  guint n;
  ColKind kind[MAX_COLS];
  guint group[MAX_COLS];  /* 0 out-of-place, 1 in-place */
  guint ngroups;
  gboolean has_redop, has_root;
} Columns;

/* Tokens of a line split on blanks (caller frees). */
static char **split_blanks(const char *s)
{
  char **parts = g_strsplit_set(s, " \t", -1);
  guint j = 0;
  for (guint i = 0; parts[i]; i++) {
    if (parts[i][0] != '\0')
      parts[j++] = parts[i];
    else
      g_free(parts[i]);
  }
  parts[j] = NULL;
  return parts;
}

/* Recognises a column-title line ("# size count type …", the '#' already
 * stripped) and fills cols; FALSE when the line is not one. */
static gboolean parse_columns(const char *rest, Columns *cols)
{
  /* Most comment lines are not titles: skip them before splitting. */
  const char *s = rest + strspn(rest, " \t");
  if (strncmp(s, "size", 4) != 0)
    return FALSE;
  g_auto(GStrv) tok = split_blanks(rest);
  guint n = g_strv_length(tok);
  if (n < 4 || strcmp(tok[0], "size") != 0 || strcmp(tok[1], "count") != 0)
    return FALSE;
  memset(cols, 0, sizeof *cols);
  int group = -1;
  for (guint i = 0; i < n && i < MAX_COLS; i++) {
    const char *t = tok[i];
    ColKind k = COL_SKIP;
    if (strcmp(t, "size") == 0)
      k = COL_SIZE;
    else if (strcmp(t, "count") == 0)
      k = COL_COUNT;
    else if (strcmp(t, "type") == 0)
      k = COL_TYPE;
    else if (strcmp(t, "redop") == 0)
      k = COL_REDOP, cols->has_redop = TRUE;
    else if (strcmp(t, "root") == 0)
      k = COL_ROOT, cols->has_root = TRUE;
    else if (strcmp(t, "time") == 0 || strcmp(t, "cputime") == 0)
      k = COL_TIME, group++;
    else if (strcmp(t, "algbw") == 0)
      k = COL_ALGBW;
    else if (strcmp(t, "busbw") == 0)
      k = COL_BUSBW;
    else if (strcmp(t, "#wrong") == 0 || strcmp(t, "error") == 0)
      k = COL_WRONG;
    cols->kind[i] = k;
    cols->group[i] = group < 0 ? 0 : (guint)group;
    cols->n = i + 1;
  }
  cols->ngroups = (guint)(group + 1);
  /* A table needs a size, a type and at least one timed group with time
   * and busbw; the per-iteration columns (i_min …) and a timestamp are
   * COL_SKIP.  The last data column must be mandatory in every row: drop
   * trailing skips (a timestamp may be absent or two tokens). */
  while (cols->n > 0 && cols->kind[cols->n - 1] == COL_SKIP)
    cols->n--;
  return cols->ngroups >= 1 && cols->ngroups <= 2;
}

/* ---- text: lines ------------------------------------------------------------------ */

typedef struct {
  const char *file;
  FsNcclLog *log;
  FsNcclLogTest *cur;   /* test being filled, owned by log->tests */
  Columns cols;
  gboolean have_cols;
  char *pending_collective; /* from a command line echoed before the test */
  GError **error;
} Text;

static FsNcclLogTest *current(Text *tx, int line)
{
  if (tx->cur == NULL) {
    tx->cur = test_new(line);
    if (tx->pending_collective != NULL)
      tx->cur->collective = g_steal_pointer(&tx->pending_collective);
    g_ptr_array_add(tx->log->tests, tx->cur);
  }
  return tx->cur;
}

/* Ends the current test (a new header starts another). */
static void close_test(Text *tx)
{
  if (tx->cur != NULL)
    test_finish(tx->cur);
  tx->cur = NULL;
  tx->have_cols = FALSE;
}

static gboolean parse_u64(const char *s, uint64_t *out)
{
  if (!g_ascii_isdigit(s[0]))
    return FALSE;
  char *end;
  errno = 0;
  guint64 v = g_ascii_strtoull(s, &end, 10);
  if (*end != '\0' || errno == ERANGE)
    return FALSE;
  *out = v;
  return TRUE;
}

static gboolean parse_double(const char *s, double *out)
{
  char *end;
  double v = g_ascii_strtod(s, &end);
  if (end == s || *end != '\0' || !isfinite(v))
    return FALSE;
  *out = v;
  return TRUE;
}

static gboolean fail_at(Text *tx, int line, int col, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static gboolean fail_at(Text *tx, int line, int col, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fs_set_error_at(tx->error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_PARSE, tx->file, line, col, "%s",
                  msg);
  return FALSE;
}

static const char *col_name(ColKind k)
{
  static const char *const names[] = {"?", "size", "count", "type", "redop", "root",
                                      "time", "algbw", "busbw", "#wrong"};
  return names[k];
}

/* A data row: TRUE and stored, TRUE and skipped (interleaved output), or
 * FALSE with an error. */
static gboolean parse_row(Text *tx, const char *text, int line)
{
  g_autofree char *copy = g_strdup(text);
  char *hash = strchr(copy, '#');
  if (hash != NULL)
    *hash = '\0';
  /* Column (1-based) of each token, for messages. */
  char *tok[MAX_COLS + 4];
  int tcol[MAX_COLS + 4];
  guint nt = 0;
  for (char *p = copy; *p && nt < G_N_ELEMENTS(tok);) {
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p == '\0')
      break;
    tok[nt] = p;
    tcol[nt] = (int)(p - copy) + 1;
    nt++;
    while (*p && *p != ' ' && *p != '\t')
      p++;
    if (*p)
      *p++ = '\0';
  }
  gboolean interleaved = strstr(text, "NCCL") != NULL;
  if (nt < tx->cols.n) {
    if (interleaved) {
      tx->log->skipped_lines++;
      return TRUE;
    }
    return fail_at(tx, line, (int)strlen(text) + 1,
                   "row has %u columns; the table's header names %u (size, count, type, …)", nt,
                   tx->cols.n);
  }
  FsNcclLogRow r = {.root = -1, .oop_wrong = NAN, .ip_wrong = NAN, .line = line};
  for (guint i = 0; i < tx->cols.n; i++) {
    ColKind k = tx->cols.kind[i];
    guint g = tx->cols.group[i];
    const char *t = tok[i];
    gboolean ok = TRUE;
    double v = 0;
    switch (k) {
    case COL_SKIP: break;
    case COL_SIZE: ok = parse_u64(t, &r.size); break;
    case COL_COUNT: ok = parse_u64(t, &r.count); break;
    /* A header may repeat these titles (a garbled or concatenated line): the
     * last column wins. */
    case COL_TYPE: g_free(r.type); r.type = g_strdup(t); break;
    case COL_REDOP: g_free(r.redop); r.redop = g_strdup(t); break;
    case COL_ROOT: {
      char *end;
      long root = strtol(t, &end, 10);
      ok = *end == '\0' && end != t && root >= -1 && root < (1 << 24);
      r.root = (int)root;
      break;
    }
    case COL_TIME:
    case COL_ALGBW:
    case COL_BUSBW:
      ok = parse_double(t, &v) && v >= 0;
      if (ok) {
        double *dst[2][3] = {{&r.oop_time_us, &r.oop_algbw, &r.oop_busbw},
                             {&r.ip_time_us, &r.ip_algbw, &r.ip_busbw}};
        *dst[g][k - COL_TIME] = v;
        if (g == 0)
          r.has_oop = TRUE;
        else
          r.has_ip = TRUE;
      }
      break;
    case COL_WRONG:
      if (strcmp(t, "N/A") != 0) {
        ok = parse_double(t, &v);
        if (ok)
          *(g == 0 ? &r.oop_wrong : &r.ip_wrong) = v;
      }
      break;
    }
    if (!ok) {
      row_clear(&r);
      if (interleaved) {
        tx->log->skipped_lines++;
        return TRUE;
      }
      const char *want = k == COL_ROOT ? "a rank or -1"
                         : k == COL_SIZE || k == COL_COUNT ? "a non-negative integer"
                                                           : "a non-negative number";
      return fail_at(tx, line, tcol[i], "column \"%s\": expected %s, got \"%s\"", col_name(k),
                     want, t);
    }
  }
  g_array_append_val(current(tx, line)->rows, r);
  return TRUE;
}

/* "#  Rank  0 Group  0 Pid  1234 on host device  0 [0000:1b:00] NAME" (Group
 * optional).  FALSE when the line is not a well-formed device line. */
static gboolean parse_device(Text *tx, const char *rest, int line)
{
  g_auto(GStrv) tok = split_blanks(rest);
  guint n = g_strv_length(tok), i = 0;
  FsNcclLogDevice d = {.group = -1};
  uint64_t v;
  if (n < 8 || strcmp(tok[i++], "Rank") != 0 || !parse_u64(tok[i++], &v))
    return FALSE;
  d.rank = (guint)v;
  if (strcmp(tok[i], "Group") == 0) {
    if (!parse_u64(tok[i + 1], &v))
      return FALSE;
    d.group = (int)v;
    i += 2;
  }
  if (i + 6 > n || strcmp(tok[i], "Pid") != 0 || !parse_u64(tok[i + 1], &v))
    return FALSE;
  d.pid = (guint)v;
  i += 2;
  if (strcmp(tok[i], "on") != 0)
    return FALSE;
  const char *host = tok[i + 1];
  i += 2;
  if (strcmp(tok[i], "device") != 0 || !parse_u64(tok[i + 1], &v))
    return FALSE;
  d.device = (guint)v;
  i += 2;
  if (i >= n || tok[i][0] != '[')
    return FALSE;
  g_autofree char *bus = g_strdup(tok[i] + 1);
  char *close = strchr(bus, ']');
  if (close != NULL)
    *close = '\0';
  i++;
  FsNcclLogDevice *dev = g_new0(FsNcclLogDevice, 1);
  *dev = d;
  dev->host = g_strdup(host);
  dev->bus_id = g_steal_pointer(&bus);
  dev->name = i < n ? g_strjoinv(" ", tok + i) : g_strdup("");
  g_ptr_array_add(current(tx, line)->devices, dev);
  return TRUE;
}

static void parse_params(Text *tx, const char *rest, int line)
{
  g_auto(GStrv) tok = split_blanks(rest);
  FsNcclLogTest *t = current(tx, line);
  for (guint i = 0; tok[i] && tok[i + 1]; i++) {
    uint64_t v;
    if (strcmp(tok[i], "nThread") == 0 && parse_u64(tok[i + 1], &v))
      t->nthreads = (guint)v;
    if (strcmp(tok[i], "nGpus") == 0 && parse_u64(tok[i + 1], &v))
      t->ngpus = (guint)v;
  }
}

/* A line starting with '#'. */
static gboolean comment_line(Text *tx, const char *line_text, int line)
{
  const char *rest = line_text + 1;
  while (*rest == ' ' || *rest == '\t')
    rest++;
  if (g_str_has_prefix(rest, "nccl-tests version")) {
    close_test(tx);
    FsNcclLogTest *t = current(tx, line);
    g_auto(GStrv) tok = split_blanks(rest);
    if (tok[0] && tok[1] && tok[2])
      t->version = g_strdup(tok[2]);
    for (guint i = 0; tok[i]; i++)
      if (g_str_has_prefix(tok[i], "nccl-library="))
        t->nccl_version = (guint)g_ascii_strtoull(tok[i] + 13, NULL, 10);
    return TRUE;
  }
  if (g_str_has_prefix(rest, "Collective test starting:")) {
    FsNcclLogTest *t = tx->cur;
    if (t == NULL || t->rows->len > 0 || t->collective != NULL) {
      close_test(tx);
      t = current(tx, line);
    }
    g_autofree char *bin = g_strstrip(g_strdup(rest + strlen("Collective test starting:")));
    /* current() may have given it an echoed command line's collective: this
     * line is more precise. */
    g_free(t->collective);
    t->collective = fs_nccl_log_collective_from_binary(bin);
    return TRUE;
  }
  if (g_str_has_prefix(rest, "Collective test concluded")) {
    close_test(tx);
    return TRUE;
  }
  if (g_str_has_prefix(rest, "nThread")) {
    /* Older versions start a test with this line. */
    if (tx->cur != NULL && tx->cur->rows->len > 0)
      close_test(tx);
    parse_params(tx, rest, line);
    return TRUE;
  }
  if (g_str_has_prefix(rest, "Rank")) {
    if (tx->cur != NULL && tx->cur->rows->len > 0)
      close_test(tx);
    if (!parse_device(tx, rest, line))
      tx->log->skipped_lines++;
    return TRUE;
  }
  if (g_str_has_prefix(rest, "Avg bus bandwidth")) {
    const char *colon = strchr(rest, ':');
    double v;
    g_autofree char *num = colon ? g_strstrip(g_strdup(colon + 1)) : NULL;
    if (num != NULL) {
      char *sp = strpbrk(num, " \t");
      if (sp != NULL)
        *sp = '\0';
    }
    if (num == NULL || !parse_double(num, &v) || v < 0)
      return fail_at(tx, line, (int)(rest - line_text) + 1,
                     "\"Avg bus bandwidth\": expected \": <GB/s>\" (a number >= 0)");
    if (tx->cur != NULL) {
      tx->cur->has_avg_busbw = TRUE;
      tx->cur->avg_busbw = v;
    }
    return TRUE;
  }
  Columns cols;
  if (parse_columns(rest, &cols)) {
    /* A second table after rows: a new test (outputs pasted together). */
    if (tx->cur != NULL && tx->cur->rows->len > 0) {
      char *coll = g_strdup(tx->cur->collective);
      close_test(tx);
      FsNcclLogTest *t = current(tx, line);
      g_free(t->collective); /* an echoed command line's, replaced as before */
      t->collective = coll;
    }
    tx->cols = cols;
    tx->have_cols = TRUE;
    return TRUE;
  }
  return TRUE; /* other comments: units line, banner, footers */
}

/* An echoed command line ("$ mpirun … ./all_reduce_perf -b 8"): remember
 * the collective for the next test. */
static void command_line(Text *tx, const char *line_text)
{
  /* Any line may land here: split only the ones that can name a binary. */
  if (strstr(line_text, "_perf") == NULL)
    return;
  g_auto(GStrv) tok = split_blanks(line_text);
  for (guint i = 0; tok[i]; i++) {
    if (strstr(tok[i], "_perf") == NULL)
      continue;
    char *c = fs_nccl_log_collective_from_binary(tok[i]);
    if (c != NULL) {
      g_free(tx->pending_collective);
      tx->pending_collective = c;
      return;
    }
  }
}

static FsNcclLog *parse_text(const char *text, gsize len, const char *name, GError **error)
{
  g_autoptr(FsNcclLog) log = log_new(name, FALSE);
  Text tx = {.file = name, .log = log, .error = error};
  g_autofree char *copy = g_strndup(text, len);
  if (strlen(copy) != len) {
    /* The position of the first NUL byte. */
    int nline = 1;
    const char *bol = copy, *nul = copy + strlen(copy);
    for (const char *q = copy; q < nul; q++)
      if (*q == '\n') {
        nline++;
        bol = q + 1;
      }
    fs_set_error_at(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_PARSE, name, nline,
                    (int)(nul - bol) + 1, "NUL byte; expected nccl-tests text output");
    return NULL;
  }
  gboolean ok = TRUE;
  int line = 0;
  for (char *p = copy; ok && p != NULL && *p;) {
    char *nl = strchr(p, '\n');
    if (nl != NULL)
      *nl = '\0';
    line++;
    gsize l = strlen(p);
    if (l > 0 && p[l - 1] == '\r')
      p[l - 1] = '\0';
    const char *s = p;
    while (*s == ' ' || *s == '\t')
      s++;
    if (*s == '#')
      ok = comment_line(&tx, p, line);
    else if (tx.have_cols && g_ascii_isdigit(*s))
      ok = parse_row(&tx, p, line);
    else if (*s != '\0') {
      command_line(&tx, s);
      log->skipped_lines++;
    }
    p = nl != NULL ? nl + 1 : NULL;
  }
  g_free(tx.pending_collective);
  if (!ok)
    return NULL;
  close_test(&tx);
  /* Tests without rows (a header of a run that failed) are dropped. */
  for (guint i = log->tests->len; i-- > 0;) {
    const FsNcclLogTest *t = g_ptr_array_index(log->tests, i);
    if (t->rows->len == 0)
      g_ptr_array_remove_index(log->tests, i);
  }
  if (log->tests->len == 0) {
    fs_set_error_at(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_EMPTY, name, line > 0 ? line : 1,
                    1, "no nccl-tests result table found (expected a \"#  size  count  type …\" "
                    "header followed by rows)");
    return NULL;
  }
  return g_steal_pointer(&log);
}

/* ---- JSON (-J) ----------------------------------------------------------------- */

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

/* A number member (nccl-tests writes "nan" as a string for NaN). */
static gboolean js_number(Js *js, const json_t *o, const char *path, const char *key,
                          double *out)
{
  g_autofree char *mp = fs_json_path_member(path, key);
  json_t *v = json_object_get(o, key);
  if (v == NULL)
    return js_fail(js, mp, "missing; expected a number");
  if (json_is_string(v) && strcmp(json_string_value(v), "nan") == 0) {
    *out = NAN;
    return TRUE;
  }
  if (!json_is_number(v) || json_number_value(v) < 0)
    return js_fail(js, mp, "expected a non-negative number");
  *out = json_number_value(v);
  return TRUE;
}

static gboolean js_uint(Js *js, const json_t *o, const char *path, const char *key,
                        uint64_t *out)
{
  g_autofree char *mp = fs_json_path_member(path, key);
  json_t *v = json_object_get(o, key);
  if (v == NULL)
    return js_fail(js, mp, "missing; expected an integer");
  if (!json_is_integer(v) || json_integer_value(v) < 0)
    return js_fail(js, mp, "expected a non-negative integer");
  *out = (uint64_t)json_integer_value(v);
  return TRUE;
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
      row_clear(&row);
      return FALSE;
    }
    if (!row.has_oop && !row.has_ip) {
      row_clear(&row);
      return js_fail(js, p, "neither \"out_of_place\" nor \"in_place\" has a time");
    }
    g_array_append_val(t->rows, row);
  }
  return TRUE;
}

static FsNcclLog *parse_json(const char *text, gsize len, const char *name, GError **error)
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
  g_autoptr(FsNcclLog) log = log_new(name, TRUE);
  FsNcclLogTest *t = test_new(0);
  g_ptr_array_add(log->tests, t);
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
  test_finish(t);
  if (t->rows->len == 0) {
    fs_json_doc_error(doc, error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_EMPTY, "$.results",
                      "no result rows");
    return NULL;
  }
  return g_steal_pointer(&log);
}

/* ---- entry points ---------------------------------------------------------------- */

FsNcclLog *fs_nccl_log_parse(const char *text, gsize len, const char *name, GError **error)
{
  g_return_val_if_fail(text != NULL && name != NULL, NULL);
  gsize i = 0;
  while (i < len && g_ascii_isspace(text[i]))
    i++;
  if (i < len && (text[i] == '{' || text[i] == '['))
    return parse_json(text, len, name, error);
  return parse_text(text, len, name, error);
}

FsNcclLog *fs_nccl_log_load(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  g_autofree char *text = NULL;
  gsize len = 0;
  GError *e = NULL;
  if (!g_file_get_contents(path, &text, &len, &e)) {
    fs_set_error_at(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_IO, path, 0, 0, "cannot read: %s",
                    e->message);
    g_error_free(e);
    return NULL;
  }
  if (len > MAX_LOG_BYTES) {
    fs_set_error_at(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_IO, path, 0, 0,
                    "file is larger than 256 MiB; refusing to read it");
    return NULL;
  }
  return fs_nccl_log_parse(text, len, path, error);
}
