/* nccl-log.c — see nccl-log.h.  The records of a log (tests, devices,
 * rows, dropped rows), the entry points that pick the reader by the
 * first character, and the checks once a log is read: ranks and hosts
 * from the best source a test has, then against the caller's hints.
 * The two layouts nccl-tests writes are read elsewhere: its text output
 * in nccl-log-text.c, its -J JSON in nccl-log-json.c. */
#include "calib/nccl-log.h"
#include "calib/nccl-log-private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coll/nccl-params.h"
#include "util/datadir.h"
#include "util/limits.h"
#include "util/error.h"

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

void fs_nccl_log_row_clear(gpointer p)
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
  g_array_set_clear_func(t->rows, fs_nccl_log_row_clear);
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

void fs_nccl_log_drop(FsNcclLog *log, int line, const char *reason)
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

/* See nccl-log-private.h. */
void fs_nccl_log_test_finish(FsNcclLogTest *t, guint info_ranks, int info_ranks_line,
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
    return fs_nccl_log_parse_json(text, len, name, error);
  return fs_nccl_log_parse_text(text, len, name, error);
}

FsNcclLog *fs_nccl_log_load(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  g_autofree char *text = NULL;
  gsize len = 0;
  GError *e = NULL;
  g_autofree char *found = fs_datadir_resolve(path);
  path = found;
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
  fs_set_error_at_va(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_PARSE, log->file,
                     MAX(line, 1), 1, fmt, ap);
  va_end(ap);
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
                             fs_nccl_log_headerless_titles);
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
