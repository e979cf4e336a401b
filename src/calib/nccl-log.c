/* nccl-log.c — see nccl-log.h.  The text reader is a line loop with a
 * little state (the current test and its column map); the JSON reader
 * walks nccl-tests' -J document. */
#include "calib/nccl-log.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/nccl-params.h"
#include "util/limits.h"
#include "util/error.h"
#include "util/json-pos.h"

G_DEFINE_QUARK(fs-nccl-log-error-quark, fs_nccl_log_error)


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
  g_free(t->problem);
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
  g_array_free(log->dropped, TRUE);
  g_free(log);
}

FsNcclLog *fs_nccl_log_new(const char *name)
{
  FsNcclLog *log = g_new0(FsNcclLog, 1);
  log->file = g_strdup(name);
  log->tests = g_ptr_array_new_with_free_func(test_free);
  log->dropped = g_array_new(FALSE, FALSE, sizeof(FsNcclLogDrop));
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
  FsNcclLog *log = fs_nccl_log_new(name);
  log->json = json;
  return log;
}

static void drop_row(FsNcclLog *log, int line, const char *reason)
{
  FsNcclLogDrop d = {log->file, line, reason};
  g_array_append_val(log->dropped, d);
}

static void problem(FsNcclLogTest *t, int line, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void problem(FsNcclLogTest *t, int line, const char *fmt, ...)
{
  if (t->problem != NULL)
    return;
  va_list ap;
  va_start(ap, fmt);
  t->problem = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  t->problem_line = line;
}

/* Ranks and hosts once a test is complete, from the best source it has;
 * the first disagreement between sources is kept in t->problem
 * (nccl-log.h).  info_ranks/info_nodes: NCCL INFO's counts (0: none) and
 * their lines. */
static void test_finish_counts(FsNcclLogTest *t, guint info_ranks, int info_ranks_line,
                               guint info_nodes, int info_nodes_line)
{
  guint per_process = t->nthreads * t->ngpus;
  if (t->devices->len > 0) {
    guint n = t->devices->len;
    t->nranks = n;
    t->ranks_from = FS_NCCL_LOG_FROM_DEVICES;
    g_autoptr(GHashTable) hosts = g_hash_table_new(g_str_hash, g_str_equal);
    /* Line of each rank's device line, to name both lines of a duplicate. */
    g_autofree int *seen = g_new0(int, n);
    g_autofree gboolean *have = g_new0(gboolean, n);
    const FsNcclLogDevice *first = g_ptr_array_index(t->devices, 0);
    t->ranks_line = t->hosts_line = first->line;
    for (guint i = 0; i < n; i++) {
      const FsNcclLogDevice *d = g_ptr_array_index(t->devices, i);
      g_hash_table_add(hosts, d->host);
      if (d->rank >= n)
        continue; /* reported below as the missing rank */
      if (have[d->rank])
        problem(t, d->line, "rank %u is listed twice in the device list (also at line %d)",
                d->rank, seen[d->rank]);
      have[d->rank] = TRUE;
      seen[d->rank] = d->line;
    }
    for (guint r = 0; r < n; r++)
      if (!have[r]) {
        problem(t, first->line,
                "the device list has %u lines but no rank %u: a device line is missing or was "
                "cut by other output (ranks must run 0 to %u)", n, r, n - 1);
        break;
      }
    t->nhosts = g_hash_table_size(hosts);
    t->hosts_from = FS_NCCL_LOG_FROM_DEVICES;
    if (per_process > 0 && n % per_process != 0)
      problem(t, t->params_line,
              "nThread %u x nGpus %u = %u ranks per process, but the device list (from line %d) "
              "has %u lines, not a multiple of %u", t->nthreads, t->ngpus, per_process,
              first->line, n, per_process);
    if (info_ranks > 0 && info_ranks != n)
      problem(t, info_ranks_line, "NCCL says %u ranks here, but the device list (from line %d) has %u",
              info_ranks, first->line, n);
    if (info_nodes > 0 && info_nodes != t->nhosts)
      problem(t, info_nodes_line,
              "NCCL says %u nodes here, but the device list (from line %d) names %u host%s",
              info_nodes, first->line, t->nhosts, t->nhosts == 1 ? "" : "s");
    return;
  }
  if (info_ranks > 0) {
    t->nranks = info_ranks;
    t->ranks_from = FS_NCCL_LOG_FROM_INFO;
    t->ranks_line = info_ranks_line;
    if (per_process > 0 && info_ranks % per_process != 0)
      problem(t, t->params_line,
              "nThread %u x nGpus %u = %u ranks per process, but NCCL says %u ranks (line %d), "
              "not a multiple of %u", t->nthreads, t->ngpus, per_process, info_ranks,
              info_ranks_line, per_process);
  } else if (t->nranks == 0 && per_process > 0) {
    t->nranks = per_process;
    t->ranks_from = FS_NCCL_LOG_FROM_PARAMS;
    t->ranks_line = t->params_line;
  }
  if (info_nodes > 0 && t->nranks > 0 && info_nodes > t->nranks) {
    problem(t, info_nodes_line, "NCCL says %u nodes here, more than the %u ranks", info_nodes,
            t->nranks);
  } else if (info_nodes > 0 && t->nranks > 0) {
    t->nhosts = info_nodes;
    t->hosts_from = FS_NCCL_LOG_FROM_INFO;
    t->hosts_line = info_nodes_line;
  }
}

static void test_finish(FsNcclLogTest *t)
{
  test_finish_counts(t, 0, 0, 0, 0);
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
  if (strncmp(s, "size", 4) != 0 && strncmp(s, "bytes", 5) != 0)
    return FALSE;
  g_auto(GStrv) tok = split_blanks(rest);
  guint n = g_strv_length(tok);
  /* nccl-tests 1.x: "bytes N type op time algbw busbw res". */
  if (n < 4 || (strcmp(tok[0], "size") != 0 && strcmp(tok[0], "bytes") != 0) ||
      (strcmp(tok[1], "count") != 0 && strcmp(tok[1], "N") != 0))
    return FALSE;
  memset(cols, 0, sizeof *cols);
  int group = -1;
  for (guint i = 0; i < n && i < MAX_COLS; i++) {
    const char *t = tok[i];
    ColKind k = COL_SKIP;
    if (strcmp(t, "size") == 0 || (i == 0 && strcmp(t, "bytes") == 0))
      k = COL_SIZE;
    else if (strcmp(t, "count") == 0 || (i == 1 && strcmp(t, "N") == 0))
      k = COL_COUNT;
    else if (strcmp(t, "type") == 0)
      k = COL_TYPE;
    else if (strcmp(t, "redop") == 0 || strcmp(t, "op") == 0)
      k = COL_REDOP, cols->has_redop = TRUE;
    else if (strcmp(t, "root") == 0)
      k = COL_ROOT, cols->has_root = TRUE;
    else if (strcmp(t, "time") == 0 || strcmp(t, "cputime") == 0)
      k = COL_TIME, group++;
    else if (strcmp(t, "algbw") == 0)
      k = COL_ALGBW;
    else if (strcmp(t, "busbw") == 0)
      k = COL_BUSBW;
    else if (strcmp(t, "#wrong") == 0 || strcmp(t, "error") == 0 || strcmp(t, "res") == 0)
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
  gboolean cur_named;       /* a "Collective test starting" line named the current test */
  char *pending_collective; /* from a command line echoed before the test */
  int pending_collective_line;
  /* NCCL INFO counts of the current test (or, before it starts, of the
   * next one) and the library version seen before a test started. */
  guint info_ranks, info_nodes, pending_nccl;
  int info_ranks_line, info_nodes_line, pending_nccl_line;
  char **lines;         /* every line, normalised (for a wrapped row's second half) */
  guint nlines;
  GError **error;
} Text;

static FsNcclLogTest *current(Text *tx, int line)
{
  if (tx->cur == NULL) {
    tx->cur = test_new(line);
    if (tx->pending_collective != NULL) {
      tx->cur->collective = g_steal_pointer(&tx->pending_collective);
      tx->cur->collective_line = tx->pending_collective_line;
    }
    if (tx->pending_nccl != 0) {
      tx->cur->nccl_version = tx->pending_nccl;
      tx->cur->nccl_version_line = tx->pending_nccl_line;
      tx->pending_nccl = 0;
    }
    g_ptr_array_add(tx->log->tests, tx->cur);
  }
  return tx->cur;
}

/* Ends the current test (a new header starts another). */
static void close_test(Text *tx)
{
  if (tx->cur != NULL)
    test_finish_counts(tx->cur, tx->info_ranks, tx->info_ranks_line, tx->info_nodes,
                       tx->info_nodes_line);
  tx->cur = NULL;
  tx->cur_named = FALSE;
  tx->have_cols = FALSE;
  tx->info_ranks = tx->info_nodes = 0;
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

/* Half a unit of the last digit of a printed number ("422.25": 0.005). */
static double half_ulp(const char *s)
{
  const char *dot = strchr(s, '.');
  guint dec = 0;
  if (dot != NULL)
    while (g_ascii_isdigit(dot[1 + dec]))
      dec++;
  return 0.5 * pow(10, -(double)dec);
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

/* Splits text (up to a '#') into at most max tokens; tok/tcol get each
 * token and its 1-based column.  Modifies text. */
static guint tokenize(char *text, char **tok, int *tcol, guint max)
{
  char *hash = strchr(text, '#');
  if (hash != NULL)
    *hash = '\0';
  guint nt = 0;
  for (char *p = text; *p && nt < max;) {
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p == '\0')
      break;
    tok[nt] = p;
    tcol[nt] = (int)(p - text) + 1;
    nt++;
    while (*p && *p != ' ' && *p != '\t')
      p++;
    if (*p)
      *p++ = '\0';
  }
  return nt;
}

/* The number of blank-separated tokens before any '#' (at most max+1). */
static guint count_tokens(const char *text, guint max)
{
  g_autofree char *copy = g_strdup(text);
  char *tok[MAX_COLS + 4];
  int tcol[MAX_COLS + 4];
  return tokenize(copy, tok, tcol, MIN(max + 1, G_N_ELEMENTS(tok)));
}

/* A data row (line index li, 0-based): TRUE and stored, TRUE and dropped
 * (listed in log->dropped), or FALSE with an error.  *consumed is set when
 * the row was wrapped and the next line, its second half, was joined. */
static gboolean parse_row(Text *tx, guint li, gboolean *consumed)
{
  const char *text = tx->lines[li];
  int line = (int)li + 1;
  *consumed = FALSE;
  char *tok[MAX_COLS + 4];
  int tcol[MAX_COLS + 4];
  g_autofree char *copy = g_strdup(text);
  guint nt = tokenize(copy, tok, tcol, G_N_ELEMENTS(tok));
  gboolean interleaved = strstr(text, "NCCL") != NULL;
  if (nt < tx->cols.n && !interleaved && li + 1 < tx->nlines) {
    /* A row wrapped onto two lines (a pasted copy): the next line holds
     * exactly the missing columns and is neither a comment nor output. */
    const char *next = tx->lines[li + 1];
    const char *ns = next + strspn(next, " \t");
    guint nn = count_tokens(next, tx->cols.n);
    if (*ns != '#' && *ns != '\0' && strstr(next, "NCCL") == NULL && nt + nn == tx->cols.n) {
      g_free(copy);
      copy = g_strconcat(text, " ", next, NULL);
      nt = tokenize(copy, tok, tcol, G_N_ELEMENTS(tok));
      *consumed = TRUE;
      tx->log->repaired_lines++;
    }
  }
  if (nt < tx->cols.n) {
    if (interleaved) {
      drop_row(tx->log, line, "cut by other output (an NCCL line) before its last column");
      return TRUE;
    }
    return fail_at(tx, line, (int)strlen(text) + 1,
                   "row has %u columns; the table's header names %u (size, count, type, …)", nt,
                   tx->cols.n);
  }
  if (tok[0][0] == '-' && tx->cols.kind[0] == COL_SIZE) {
    drop_row(tx->log, line, "negative size");
    return TRUE;
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
        if (k != COL_TIME)
          r.bw_ulp = MAX(r.bw_ulp, half_ulp(t));
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
        drop_row(tx->log, line, "cut by other output (an NCCL line)");
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
  FsNcclLogDevice d = {.group = -1, .line = line};
  uint64_t v;
  if (n < 8 || strcmp(tok[i++], "Rank") != 0 || !parse_u64(tok[i++], &v) || v >= (1u << 24))
    return FALSE;
  d.rank = (guint)v;
  if (strcmp(tok[i], "Group") == 0) {
    if (!parse_u64(tok[i + 1], &v))
      return FALSE;
    d.group = (int)MIN(v, G_MAXINT);
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
  t->params_line = line;
  for (guint i = 0; tok[i] && tok[i + 1]; i++) {
    uint64_t v;
    if (strcmp(tok[i], "nThread") == 0 && parse_u64(tok[i + 1], &v))
      t->nthreads = (guint)MIN(v, 1u << 16);
    if (strcmp(tok[i], "nGpus") == 0 && parse_u64(tok[i + 1], &v))
      t->ngpus = (guint)MIN(v, 1u << 16);
  }
}

/* NCCL's version code of "2.26.3" (22603; 2.8.4 and older: 2804). */
static guint nccl_code(guint major, guint minor, guint patch)
{
  return major <= 2 && minor < 9 ? major * 1000 + minor * 100 + patch
                                 : major * 10000 + minor * 100 + patch;
}

/* NCCL's own lines: "NCCL version 2.26.3+cuda12.4" (bare or after "NCCL
 * INFO") and the communicator's counts ("comm 0x… rank 8 nRanks 16 nNodes
 * 2 …", older "… nranks 16 cudaDev …"). */
static void nccl_line(Text *tx, const char *text, int line)
{
  const char *v = strstr(text, "NCCL version ");
  if (v != NULL) {
    guint a, b, c;
    if (sscanf(v + strlen("NCCL version "), "%u.%u.%u", &a, &b, &c) == 3 && a < 100 && b < 100 &&
        c < 100) {
      guint code = nccl_code(a, b, c);
      FsNcclLogTest *t = tx->cur;
      if (t != NULL && t->rows->len == 0) {
        if (t->nccl_version == 0) {
          t->nccl_version = code;
          t->nccl_version_line = line;
        }
      } else if (tx->pending_nccl == 0) {
        tx->pending_nccl = code;
        tx->pending_nccl_line = line;
      }
    }
  }
  if (strstr(text, "NCCL INFO") == NULL)
    return;
  if (strstr(text, "nRanks") == NULL && strstr(text, "nranks") == NULL)
    return;
  g_auto(GStrv) tok = split_blanks(text);
  for (guint i = 0; tok[i] && tok[i + 1]; i++) {
    uint64_t n;
    if (!parse_u64(tok[i + 1], &n) || n == 0 || n >= (1u << 24))
      continue;
    if ((strcmp(tok[i], "nRanks") == 0 || strcmp(tok[i], "nranks") == 0) && tx->info_ranks == 0) {
      tx->info_ranks = (guint)n;
      tx->info_ranks_line = line;
    } else if (strcmp(tok[i], "nNodes") == 0 && tx->info_nodes == 0) {
      tx->info_nodes = (guint)n;
      tx->info_nodes_line = line;
    }
  }
}

/* A line starting with '#' (rest: after the '#' and blanks), or one that
 * lost its '#' but starts with a keyword of nccl-tests' comment lines. */
static gboolean comment_line(Text *tx, const char *line_text, const char *rest, int line)
{
  if (g_str_has_prefix(rest, "nccl-tests version")) {
    close_test(tx);
    FsNcclLogTest *t = current(tx, line);
    g_auto(GStrv) tok = split_blanks(rest);
    if (tok[0] && tok[1] && tok[2])
      t->version = g_strdup(tok[2]);
    for (guint i = 0; tok[i]; i++)
      if (g_str_has_prefix(tok[i], "nccl-library=")) {
        t->nccl_version = (guint)MIN(g_ascii_strtoull(tok[i] + 13, NULL, 10), G_MAXUINT);
        t->nccl_version_line = line;
      }
    return TRUE;
  }
  if (g_str_has_prefix(rest, "Collective test starting:")) {
    /* A test named by an echoed command line only is not a new one. */
    FsNcclLogTest *t = tx->cur;
    if (t == NULL || t->rows->len > 0 || tx->cur_named) {
      close_test(tx);
      t = current(tx, line);
    }
    tx->cur_named = TRUE;
    g_autofree char *bin = g_strstrip(g_strdup(rest + strlen("Collective test starting:")));
    /* current() may have given it an echoed command line's collective: this
     * line is more precise. */
    g_free(t->collective);
    t->collective = fs_nccl_log_collective_from_binary(bin);
    t->collective_line = t->collective != NULL ? line : 0;
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
      int coll_line = tx->cur->collective_line;
      close_test(tx);
      FsNcclLogTest *t = current(tx, line);
      g_free(t->collective); /* an echoed command line's, replaced as before */
      t->collective = coll;
      t->collective_line = coll_line;
    }
    tx->cols = cols;
    tx->have_cols = TRUE;
    return TRUE;
  }
  return TRUE; /* other comments: units line, banner, footers */
}

/* The keywords of comment lines that may have lost their '#' (pasted as
 * Markdown, where a leading '#' makes a heading). */
static gboolean lost_hash(const char *s)
{
  static const char *const keys[] = {"nccl-tests version", "Collective test", "nThread ",
                                     "Avg bus bandwidth", "size ", "size\t", NULL};
  for (guint i = 0; keys[i]; i++)
    if (g_str_has_prefix(s, keys[i]))
      return TRUE;
  /* "Rank  3 Group …" / "Rank 3 Pid …": a device line. */
  if (g_str_has_prefix(s, "Rank")) {
    const char *p = s + 4;
    while (*p == ' ' || *p == '\t')
      p++;
    return p > s + 4 && g_ascii_isdigit(*p);
  }
  return FALSE;
}

/* An echoed command line ("$ mpirun … ./all_reduce_perf -b 8"): remember
 * the collective for the next test. */
static void command_line(Text *tx, const char *line_text, int line)
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
      tx->pending_collective_line = line;
      return;
    }
  }
}

/* Undoes what launchers and Markdown do to a line, in place and keeping
 * every column where it was (removed characters become blanks): Open
 * MPI's "[1,0]<stdout>:", MPICH's "[0]" (wherever it recurs in the line)
 * and srun -l's "12: " prefixes, "> " quotes and
 * '|' table separators.  A code fence or a table rule ("|---|---|")
 * becomes empty.  TRUE when the line changed. */
static gboolean normalise(char *p)
{
  gboolean changed = FALSE;
  char *s = p;
  while (*s == ' ' || *s == '\t')
    s++;
  /* [1,0]<stdout>: */
  if (*s == '[') {
    char *q = s + 1;
    while (g_ascii_isdigit(*q) || *q == ',')
      q++;
    if (q > s + 1 && *q == ']' && (g_str_has_prefix(q + 1, "<stdout>:") ||
                                   g_str_has_prefix(q + 1, "<stderr>:"))) {
      q += 1 + strlen("<stdout>:");
      memset(s, ' ', (size_t)(q - s));
      s = q;
      changed = TRUE;
    }
  }
  /* [0] (MPICH -prepend-rank, Intel MPI): the tag also appears wherever
   * the rank's output resumed within the line. */
  if (*s == '[' && g_ascii_isdigit(s[1])) {
    char *q = s + 1;
    while (g_ascii_isdigit(*q))
      q++;
    if (*q == ']') {
      for (char *t = s; (t = strchr(t, '[')) != NULL;) {
        char *e = t + 1;
        while (g_ascii_isdigit(*e))
          e++;
        if (e > t + 1 && *e == ']') {
          memset(t, ' ', (size_t)(e + 1 - t));
          t = e + 1;
        } else {
          t++;
        }
      }
      changed = TRUE;
    }
  }
  /* 12: (srun -l) */
  if (g_ascii_isdigit(*s)) {
    char *q = s;
    while (g_ascii_isdigit(*q))
      q++;
    if (*q == ':' && (q[1] == ' ' || q[1] == '\t' || q[1] == '#')) {
      memset(s, ' ', (size_t)(q + 1 - s));
      s = q + 1;
      changed = TRUE;
    }
  }
  while (*s == ' ' || *s == '\t')
    s++;
  /* > quotes */
  while (*s == '>' && (s[1] == ' ' || s[1] == '\0' || s[1] == '>' || s[1] == '#')) {
    *s++ = ' ';
    changed = TRUE;
    while (*s == ' ')
      s++;
  }
  if (g_str_has_prefix(s, "```") || g_str_has_prefix(s, "~~~")) {
    *p = '\0';
    return TRUE;
  }
  if (strchr(s, '|') != NULL) {
    if (s[strspn(s, "|-: \t")] == '\0') {
      *p = '\0';
      return TRUE;
    }
    for (char *q = s; *q; q++)
      if (*q == '|')
        *q = ' ';
    changed = TRUE;
  }
  return changed;
}

/* The column titles of nccl-tests 2.10 and later, for rows pasted without
 * them (a cut excerpt). */
static const char headerless_titles[] =
  "size count type redop root time algbw busbw #wrong time algbw busbw #wrong";

/* Whether s (a row, launcher prefixes undone) has the shape of an nccl-tests
 * 2.10+ result row without titles above it: 13 fields, the size and count
 * integers, a data type and a reduction named as nccl-tests prints them, the
 * root an integer, then time, algbw, busbw and #wrong twice.  Only that
 * shape is read without titles: older layouts differ by a column that a
 * number alone cannot place. */
static gboolean headerless_row(const char *s)
{
  static const char *const types[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64",
                                      "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2",
                                      NULL};
  static const char *const redops[] = {"sum", "prod", "max", "min", "avg", "none", NULL};
  if (!g_ascii_isdigit(*s))
    return FALSE;
  g_auto(GStrv) tok = split_blanks(s);
  uint64_t u;
  double d;
  if (g_strv_length(tok) != 13 || !parse_u64(tok[0], &u) || !parse_u64(tok[1], &u) ||
      !g_strv_contains(types, tok[2]) || !g_strv_contains(redops, tok[3]))
    return FALSE;
  const char *root = tok[4][0] == '-' ? tok[4] + 1 : tok[4];
  if (!parse_u64(root, &u))
    return FALSE;
  for (guint i = 5; i < 13; i++)
    if (!parse_double(tok[i], &d) && strcmp(tok[i], "N/A") != 0)
      return FALSE;
  return TRUE;
}

/* Parses nccl-tests text output into a new log: repairs lines that a terminal or a pager mangled
 * (counted in repaired_lines), reads comment lines for the header, devices and columns, rows
 * once the columns are known, and counts the other lines as skipped.  Tests without rows are
 * dropped.  Returns NULL with error set at the offending line and column for a NUL byte or a bad
 * line, or FS_NCCL_LOG_ERROR_EMPTY when no result table remains.  The caller owns the log. */
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
  if (len > 0 && copy[len - 1] == '\n')
    copy[len - 1] = '\0'; /* no empty last line */
  g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
  tx.lines = lines;
  tx.nlines = g_strv_length(lines);
  for (guint i = 0; i < tx.nlines; i++) {
    char *p = lines[i];
    gsize l = strlen(p);
    if (l > 0 && p[l - 1] == '\r')
      p[l - 1] = '\0';
    if (normalise(p))
      log->repaired_lines++;
  }
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < tx.nlines; i++) {
    const char *p = lines[i];
    int line = (int)i + 1;
    const char *s = p;
    while (*s == ' ' || *s == '\t')
      s++;
    if (!tx.have_cols && headerless_row(s)) {
      /* Rows without titles: read in the only layout their shape fits,
       * said in a note (fs_nccl_log_notes_text). */
      parse_columns(headerless_titles, &tx.cols);
      tx.have_cols = TRUE;
      FsNcclLogTest *t = current(&tx, line);
      if (t->headerless_line == 0)
        t->headerless_line = line;
    }
    if (*s == '#') {
      const char *rest = s + 1;
      while (*rest == ' ' || *rest == '\t')
        rest++;
      ok = comment_line(&tx, p, rest, line);
    } else if (lost_hash(s)) {
      log->repaired_lines++;
      ok = comment_line(&tx, p, s, line);
    } else if (tx.have_cols && (g_ascii_isdigit(*s) || (*s == '-' && g_ascii_isdigit(s[1])))) {
      gboolean consumed = FALSE;
      ok = parse_row(&tx, i, &consumed);
      if (consumed)
        i++;
    } else if (*s != '\0') {
      command_line(&tx, s, line);
      nccl_line(&tx, s, line);
      log->skipped_lines++;
    }
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
    fs_set_error_at(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_EMPTY, name,
                    tx.nlines > 0 ? (int)tx.nlines : 1, 1,
                    "no nccl-tests result table found (expected a \"#  size  count  type …\" "
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

/* Parses nccl-tests -J output into a new log with one test: the NCCL version, the collective
 * from the program name in args[0], the thread, GPU and device counts of "config", the rows of
 * "results" and the average bus bandwidth.  Returns NULL with error set for invalid JSON, a
 * field of the wrong type (at its JSON path), or FS_NCCL_LOG_ERROR_EMPTY when there are no
 * rows.  The caller owns the log. */
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
  /* JSON starts with '{' (or '[', an array, refused by the JSON reader);
   * "[1,0]<stdout>:" (Open MPI) and "[0] " (MPICH, Intel MPI) rank tags
   * start text. */
  gboolean tagged = i + 1 < len && text[i] == '[' && g_ascii_isdigit(text[i + 1]);
  if (i < len && (text[i] == '{' || text[i] == '[') && !tagged)
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
  /* The input-file guard, as for YAML and JSON (util/limits.h). */
  if (len > fs_limit_file_bytes()) {
    g_autofree char *lim = fs_limit_bytes_text(fs_limit_file_bytes());
    fs_set_error_at(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_IO, path, 0, 0,
                    "file is larger than %s; refusing to read it (FABRICSIM_MAX_FILE_BYTES raises "
                    "the limit)", lim);
    return NULL;
  }
  return fs_nccl_log_parse(text, len, path, error);
}

/* ---- checks against the caller's hints ------------------------------------------ */

double fs_nccl_log_busbw_factor(const char *collective, guint n)
{
  g_return_val_if_fail(collective != NULL, 0);
  double nn = n;
  if (n == 0)
    return 0;
  if (strcmp(collective, "all_reduce") == 0)
    return 2 * (nn - 1) / nn;
  if (strcmp(collective, "all_gather") == 0 || strcmp(collective, "reduce_scatter") == 0 ||
      strcmp(collective, "alltoall") == 0 || strcmp(collective, "gather") == 0 ||
      strcmp(collective, "scatter") == 0)
    return (nn - 1) / nn;
  for (guint i = 0; collectives[i]; i++)
    if (strcmp(collective, collectives[i]) == 0)
      return 1;
  return 0;
}

static gboolean resolve_fail(const FsNcclLog *log, int line, GError **error, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static gboolean resolve_fail(const FsNcclLog *log, int line, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fs_set_error_at(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_PARSE, log->file, MAX(line, 1), 1,
                  "%s", msg);
  return FALSE;
}

/* Where a count came from, for messages ("the device list (from line 7)"). */
static char *count_source(FsNcclLogFrom from, int line)
{
  switch (from) {
  case FS_NCCL_LOG_FROM_DEVICES:
    return line > 0 ? g_strdup_printf("the device list (from line %d)", line)
                    : g_strdup("the device list");
  case FS_NCCL_LOG_FROM_INFO: return g_strdup_printf("NCCL's INFO line %d", line);
  case FS_NCCL_LOG_FROM_PARAMS:
    return g_strdup_printf("nThread x nGpus (line %d; one process assumed)", line);
  case FS_NCCL_LOG_FROM_TABLE: return g_strdup_printf("the table (line %d)", line);
  case FS_NCCL_LOG_FROM_OPTION: return g_strdup("--ranks/--nodes");
  case FS_NCCL_LOG_FROM_NONE: break;
  }
  return g_strdup("nothing");
}

/* The rows' busbw/algbw against nccl-tests' factor on t->nranks ranks: the
 * row with the largest algbw decides (its printed digits bound the ratio). */
static gboolean check_ratio(const FsNcclLog *log, const FsNcclLogTest *t, GError **error)
{
  double f = fs_nccl_log_busbw_factor(t->collective, t->nranks);
  if (f <= 0 || fs_nccl_log_busbw_factor(t->collective, 3) == fs_nccl_log_busbw_factor(t->collective, 4))
    return TRUE; /* no factor of the rank count: nothing to check */
  const FsNcclLogRow *best = NULL;
  double alg = 0, bus = 0;
  for (guint i = 0; i < t->rows->len; i++) {
    const FsNcclLogRow *r = &g_array_index(t->rows, FsNcclLogRow, i);
    double a = r->has_oop ? r->oop_algbw : r->ip_algbw, b = r->has_oop ? r->oop_busbw : r->ip_busbw;
    if (a > alg && b > 0) {
      best = r, alg = a, bus = b;
    }
  }
  /* Below 1 GB/s two printed decimals say little about the ratio. */
  if (best == NULL || alg < 1)
    return TRUE;
  /* JSON (-J) keeps no printed digits: as two decimals. */
  double ulp = best->bw_ulp > 0 ? best->bw_ulp : 0.005;
  double tol = 1.2 * ulp * (1 + f);
  if (fabs(bus - alg * f) <= tol)
    return TRUE;
  /* The rank count the ratio implies: f = 2(n-1)/n or (n-1)/n. */
  double ratio = bus / alg;
  gboolean ar = strcmp(t->collective, "all_reduce") == 0;
  double limit = ar ? 2 : 1;
  g_autofree char *src = count_source(t->ranks_from, t->ranks_line);
  if (ratio >= limit || ratio <= 0)
    return resolve_fail(log, best->line, error,
                        "busbw/algbw = %.4f here is no rank count's factor for %s (nccl-tests: "
                        "%s); %s says %u ranks", ratio, t->collective,
                        ar ? "2(n-1)/n" : "(n-1)/n", src, t->nranks);
  double implied = limit / (limit - ratio);
  if (round(implied) == t->nranks)
    return TRUE; /* off by more than the digits, but no other count is nearer */
  return resolve_fail(log, best->line, error,
                      "busbw/algbw = %.4f here is nccl-tests' factor for %.0f ranks of %s, but %s "
                      "says %u%s", ratio, round(implied), t->collective, src, t->nranks,
                      t->ranks_from == FS_NCCL_LOG_FROM_PARAMS
                          ? " (an MPI-launched log without its device list? give --ranks)"
                          : " (a device line missing or cut?)");
}

/* Reconciles one test of log with the user's hints: takes the collective, rank count and host
 * count from --op, --ranks and --nodes where the log is silent, and fails where a hint
 * contradicts what the log states (or --ranks is not a multiple of one process's ranks), where
 * the collective or rank count stays unknown, or where check_ratio finds busbw/algbw at odds
 * with the rank count.  Each failure sets error through resolve_fail, at the line concerned. */
static gboolean resolve_test(const FsNcclLog *log, FsNcclLogTest *t, const FsNcclLogHints *h,
                             GError **error)
{
  if (t->problem != NULL)
    return resolve_fail(log, t->problem_line, error, "%s", t->problem);
  if (h->op != NULL) {
    if (t->collective != NULL && strcmp(t->collective, h->op) != 0)
      return resolve_fail(log, t->collective_line > 0 ? t->collective_line : t->line, error,
                          "the log is %s (named here), but --op says %s", t->collective, h->op);
    if (t->collective == NULL)
      t->collective = g_strdup(h->op);
  }
  if (t->collective == NULL)
    return resolve_fail(log, t->line, error,
                        "the log does not name its collective; give it with --op");
  if (h->ranks > 0) {
    switch (t->ranks_from) {
    case FS_NCCL_LOG_FROM_DEVICES:
    case FS_NCCL_LOG_FROM_INFO:
    case FS_NCCL_LOG_FROM_TABLE:
      if (t->nranks != h->ranks) {
        g_autofree char *src = count_source(t->ranks_from, t->ranks_line);
        return resolve_fail(log, t->ranks_line, error, "%s says %u ranks, but --ranks says %u",
                            src, t->nranks, h->ranks);
      }
      break;
    case FS_NCCL_LOG_FROM_PARAMS:
      if (h->ranks % t->nranks != 0)
        return resolve_fail(log, t->ranks_line, error,
                            "--ranks %u is not a multiple of nThread %u x nGpus %u, the ranks of "
                            "one process here", h->ranks, t->nthreads, t->ngpus);
      /* fall through */
    case FS_NCCL_LOG_FROM_NONE:
    case FS_NCCL_LOG_FROM_OPTION:
      t->nranks = h->ranks;
      t->ranks_from = FS_NCCL_LOG_FROM_OPTION;
      break;
    }
  }
  if (t->nranks == 0)
    return resolve_fail(log, t->line, error,
                        "the log has no device list, no nThread/nGpus line and no NCCL nRanks: "
                        "give the rank count with --ranks N");
  if (h->nodes > 0) {
    if ((t->hosts_from == FS_NCCL_LOG_FROM_DEVICES || t->hosts_from == FS_NCCL_LOG_FROM_INFO) &&
        t->nhosts != h->nodes) {
      g_autofree char *src = count_source(t->hosts_from, t->hosts_line);
      return resolve_fail(log, t->hosts_line, error, "%s says %u host%s, but --nodes says %u", src,
                          t->nhosts, t->nhosts == 1 ? "" : "s", h->nodes);
    }
    if (h->nodes > t->nranks)
      return resolve_fail(log, t->line, error, "--nodes %u is more than the log's %u ranks",
                          h->nodes, t->nranks);
    t->nhosts = h->nodes;
    if (t->hosts_from == FS_NCCL_LOG_FROM_NONE)
      t->hosts_from = FS_NCCL_LOG_FROM_OPTION;
  }
  return check_ratio(log, t, error);
}

gboolean fs_nccl_log_resolve(FsNcclLog *log, const FsNcclLogHints *hints, GError **error)
{
  g_return_val_if_fail(log != NULL && hints != NULL, FALSE);
  for (guint i = 0; i < log->tests->len; i++)
    if (!resolve_test(log, g_ptr_array_index(log->tests, i), hints, error))
      return FALSE;
  return TRUE;
}

char *fs_nccl_log_notes_text(const FsNcclLog *log)
{
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < log->tests->len; i++) {
    const FsNcclLogTest *t = g_ptr_array_index(log->tests, i);
    if (t->headerless_line > 0)
      g_string_append_printf(out, "%s:%d:1: note: rows without column titles, read as nccl-tests "
                             "2.10+ prints them (%s)\n", log->file, t->headerless_line,
                             headerless_titles);
  }
  g_autofree char *drops = fs_nccl_log_drops_text((const FsNcclLogDrop *)log->dropped->data,
                                                  log->dropped->len);
  if (drops != NULL)
    g_string_append(out, drops);
  return g_string_free(out, out->len == 0);
}

char *fs_nccl_log_drops_text(const FsNcclLogDrop *drops, guint n)
{
  if (n == 0)
    return NULL;
  GString *out = g_string_new(NULL);
  g_autofree gboolean *done = g_new0(gboolean, n);
  for (guint i = 0; i < n; i++) {
    if (done[i])
      continue;
    /* The rows of the same file and reason. */
    g_autoptr(GArray) same = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint j = i; j < n; j++)
      if (!done[j] && g_strcmp0(drops[j].file, drops[i].file) == 0 &&
          strcmp(drops[j].reason, drops[i].reason) == 0) {
        g_array_append_val(same, j);
        done[j] = TRUE;
      }
    if (same->len <= 3) {
      for (guint k = 0; k < same->len; k++) {
        const FsNcclLogDrop *d = &drops[g_array_index(same, guint, k)];
        g_string_append_printf(out, "%s:%d:1: row dropped: %s\n", d->file, MAX(d->line, 1),
                               d->reason);
      }
      continue;
    }
    g_string_append_printf(out, "%s:%d:1: %u rows dropped: %s (lines", drops[i].file,
                           MAX(drops[i].line, 1), same->len, drops[i].reason);
    for (guint k = 0; k < same->len && k < 8; k++)
      g_string_append_printf(out, "%s %d", k ? "," : "", drops[g_array_index(same, guint, k)].line);
    g_string_append(out, same->len > 8 ? ", …)\n" : ")\n");
  }
  return g_string_free(out, FALSE);
}

char *fs_nccl_logs_release(GPtrArray *logs, GString *warnings)
{
  for (guint i = 0; i < logs->len; i++) {
    const FsNcclLog *log = g_ptr_array_index(logs, i);
    for (guint t = 0; t < log->tests->len; t++) {
      const FsNcclLogTest *test = g_ptr_array_index(log->tests, t);
      if (test->nccl_version == 0)
        continue;
      char *code = g_strdup_printf("%u", test->nccl_version);
      GError *error = NULL;
      g_autofree char *path = fs_nccl_params_version_path(code, "the log's NCCL version", &error);
      if (path != NULL)
        return code;
      g_string_append_printf(warnings, "%s:%d:1: %s; using models/nccl/nccl.yaml\n", log->file,
                             MAX(test->nccl_version_line, 1), error->message);
      g_error_free(error);
      g_free(code);
      return NULL;
    }
  }
  return NULL;
}
