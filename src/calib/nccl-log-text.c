/* nccl-log-text.c — the text layout of an nccl-tests log: a line loop
 * with a little state (the current test and its column map).  Each line
 * is first undone of what launchers and Markdown did to it (MPI rank
 * prefixes, quotes, table separators: normalise); comment lines give the
 * header, the device list, NCCL's INFO counts and the column titles
 * (parse_columns); the other lines are result rows read under the
 * current titles (parse_row), or, without titles, rows of the 2.10+
 * shape only (headerless_row).  The records and the checks that follow
 * a read are in nccl-log.c; the -J layout is nccl-log-json.c. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/nccl-log.h"
#include "calib/nccl-log-private.h"
#include "util/error.h"
#include "util/strutil.h"

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
  return fs_split_words(s, " \t");
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
    tx->cur = fs_nccl_log_add_test(tx->log, line);
    if (tx->pending_collective != NULL) {
      tx->cur->collective = g_steal_pointer(&tx->pending_collective);
      tx->cur->collective_line = tx->pending_collective_line;
    }
    if (tx->pending_nccl != 0) {
      tx->cur->nccl_version = tx->pending_nccl;
      tx->cur->nccl_version_line = tx->pending_nccl_line;
      tx->pending_nccl = 0;
    }
  }
  return tx->cur;
}

/* Ends the current test (a new header starts another). */
static void close_test(Text *tx)
{
  if (tx->cur != NULL)
    fs_nccl_log_test_finish(tx->cur, tx->info_ranks, tx->info_ranks_line, tx->info_nodes,
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
  fs_set_error_at_va(tx->error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_PARSE, tx->file, line, col,
                     fmt, ap);
  va_end(ap);
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
      fs_nccl_log_drop(tx->log, line, "cut by other output (an NCCL line) before its last column");
      return TRUE;
    }
    return fail_at(tx, line, (int)strlen(text) + 1,
                   "row has %u columns; the table's header names %u (size, count, type, …)", nt,
                   tx->cols.n);
  }
  if (tok[0][0] == '-' && tx->cols.kind[0] == COL_SIZE) {
    fs_nccl_log_drop(tx->log, line, "negative size");
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
      fs_nccl_log_row_clear(&r);
      if (interleaved) {
        fs_nccl_log_drop(tx->log, line, "cut by other output (an NCCL line)");
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
const char fs_nccl_log_headerless_titles[] =
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

/* See nccl-log-private.h. */
FsNcclLog *fs_nccl_log_parse_text(const char *text, gsize len, const char *name, GError **error)
{
  g_autoptr(FsNcclLog) log = fs_nccl_log_new(name);
  log->json = FALSE;
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
  g_auto(GStrv) lines = fs_split_lines(copy);
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
      parse_columns(fs_nccl_log_headerless_titles, &tx.cols);
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
