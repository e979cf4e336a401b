/* nccl-log.h — reading real nccl-tests output: the text that
 * all_reduce_perf & co. print on stdout (every version since 2.0), and the
 * JSON file that `-J FILE` writes (nccl-tests 2.17+).
 *
 * Text: the reader finds the result table by its column-title line
 * ("#  size  count  type  redop  root  time  algbw  busbw  #wrong  time …",
 * nccl-tests 1.x "#  bytes  N  type  op  time  algbw  busbw  res …")
 * and maps columns by name, so it reads the old layouts (no `redop`/`root`,
 * `error` instead of `#wrong`), the current one, the per-iteration layout
 * (`i_min` …) and a trailing timestamp column alike.  The first `time` (or
 * `cputime`) group is out-of-place, the second in-place; a table with one
 * group has only out-of-place figures.  Device lines ("#  Rank  3 Group
 * 0 Pid 1234 on node1 device  3 [0000:1b:00] NVIDIA H100 80GB HBM3", with
 * or without Group and with old "[0x1b]" bus ids) give the ranks, hosts
 * and GPU names; without them ranks = nThread × nGpus of the parameter
 * line (or the --ranks the caller gives, fs_nccl_log_resolve).  The
 * collective comes from "# Collective test starting: all_reduce_perf"
 * (newer) or from the binary's name where a launcher echoed the command
 * line, or from the caller.  NCCL INFO/WARN lines, MPI and launcher
 * chatter and blank lines are skipped and counted; rows that another
 * process's output cut in two (they contain "NCCL") and rows with a
 * negative size are dropped and listed (FsNcclLog.dropped).  Several runs
 * in one file (concatenated outputs) become several tests.  After each row,
 * anything after " #" (fabricsim's own note) is ignored.
 *
 * Mangled copies are read too: device lines and the column-title line
 * that lost their '#'; launcher prefixes ("[1,0]<stdout>:" of Open MPI's
 * --tag-output, "[0]" of MPICH -prepend-rank, "3: " of srun -l); Markdown
 * pastes (code fences, "> " quotes, tables with '|' separators and "|---|"
 * rules); rows wrapped onto two lines (joined when the two together have
 * the header's column count); nccl-tests 1.x's titles (bytes, N, op, res).
 *
 * Rank and host counts come from every source the log has and are checked
 * against each other, each disagreement a located error: the device lines
 * (ranks 0 … n-1 each once; their count a multiple of nThread × nGpus of
 * the parameter line; distinct host names), NCCL INFO "nRanks N nNodes M"
 * (or older "nranks N") lines, and, in fs_nccl_log_resolve, the
 * busbw/algbw ratio of the rows (nccl-tests' factor of the rank count).
 * The NCCL library version comes from "nccl-library=" of the version line
 * or from NCCL's own "NCCL version 2.x.y" line.
 *
 * Ownership: FsNcclLog owns everything in it.  Errors: FS_NCCL_LOG_ERROR
 * (FS_JSON_ERROR for malformed JSON), "file:line:col: sentence".
 * Cost: linear in the file.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define FS_NCCL_LOG_ERROR (fs_nccl_log_error_quark())
GQuark fs_nccl_log_error_quark(void);

typedef enum {
  FS_NCCL_LOG_ERROR_PARSE, /* a malformed table, row or JSON member */
  FS_NCCL_LOG_ERROR_EMPTY, /* no result table at all */
  FS_NCCL_LOG_ERROR_IO,
} FsNcclLogError;

typedef struct {
  guint rank;
  int group;            /* -1 when the line has no Group */
  guint pid;
  char *host;
  guint device;
  char *bus_id;         /* as printed, without brackets */
  char *name;           /* "NVIDIA H100 80GB HBM3" */
  int line;             /* in the file (0 for JSON) */
} FsNcclLogDevice;

typedef struct {
  uint64_t size;        /* bytes ("size" column) */
  uint64_t count;       /* elements */
  char *type;           /* "float" */
  char *redop;          /* "sum", "none"; NULL when the table has no redop column */
  int root;             /* -1 when none */
  gboolean has_oop, has_ip;
  double oop_time_us, oop_algbw, oop_busbw;  /* GB/s */
  double ip_time_us, ip_algbw, ip_busbw;
  double oop_wrong, ip_wrong;                /* NAN when "N/A" or absent */
  double bw_ulp;        /* half a unit of the last digit printed in algbw/busbw (0: exact) */
  int line;             /* in the file (0 for JSON) */
} FsNcclLogRow;

/* Where a test's rank or host count came from, least to most precise. */
typedef enum {
  FS_NCCL_LOG_FROM_NONE,     /* unknown: 0 */
  FS_NCCL_LOG_FROM_PARAMS,   /* nThread × nGpus (one process assumed) */
  FS_NCCL_LOG_FROM_TABLE,    /* a reference table's `# ranks:` or gpus column */
  FS_NCCL_LOG_FROM_OPTION,   /* --ranks / --nodes (fs_nccl_log_resolve) */
  FS_NCCL_LOG_FROM_INFO,     /* NCCL INFO "nRanks N nNodes M" */
  FS_NCCL_LOG_FROM_DEVICES,  /* the device lines */
} FsNcclLogFrom;

/* A row the reader or the fitter left out; reason is a static string, file
 * is borrowed from the log (FsNcclLog.file). */
typedef struct {
  const char *file;
  int line;
  const char *reason;
} FsNcclLogDrop;

typedef struct {
  char *collective;     /* "all_reduce", or NULL when the log does not say */
  int collective_line;  /* where the log names it (0: nowhere) */
  char *version;        /* nccl-tests version, NULL if not printed */
  guint nccl_version;   /* NCCL library version code (22703), 0 if not printed */
  guint nthreads, ngpus;
  int params_line;      /* the nThread/nGpus line (0: none) */
  guint nranks;         /* device lines, else NCCL INFO nRanks, else nthreads × ngpus, else 0 */
  guint nhosts;         /* distinct host names of the device lines, else NCCL INFO nNodes, else 0 */
  FsNcclLogFrom ranks_from, hosts_from;
  int ranks_line;       /* the line the count came from (first device line, INFO line) */
  int hosts_line;
  int nccl_version_line;
  /* The first disagreement among the log's own counts (device list, the
   * parameter line, NCCL INFO), reported by fs_nccl_log_resolve; NULL
   * when they agree. */
  char *problem;
  int problem_line;
  GPtrArray *devices;   /* FsNcclLogDevice *, in rank order */
  GArray *rows;         /* FsNcclLogRow, in file order */
  gboolean has_avg_busbw;
  double avg_busbw;     /* "# Avg bus bandwidth" (GB/s) */
  int line;             /* where the test starts */
  int headerless_line;  /* the first row, when the rows had no column titles and were read
                         * in nccl-tests 2.10+'s 13-column layout; 0 otherwise */
} FsNcclLogTest;

typedef struct {
  char *file;
  gboolean json;        /* read from -J output */
  GPtrArray *tests;     /* FsNcclLogTest *, at least one with at least one row */
  guint skipped_lines;  /* NCCL INFO/WARN, chatter, broken rows */
  GArray *dropped;      /* FsNcclLogDrop: rows read but left out, in file order */
  guint repaired_lines; /* lines read after undoing a launcher prefix, Markdown or wrapping */
} FsNcclLog;

/* Reads a log (text or JSON, told apart by the first non-blank character).
 * The error is FS_NCCL_LOG_ERROR_EMPTY when no table with a row is found. */
FsNcclLog *fs_nccl_log_load(const char *path, GError **error);
/* The same from memory; name stands for the file in messages. */
FsNcclLog *fs_nccl_log_parse(const char *text, gsize len, const char *name, GError **error);
void fs_nccl_log_free(FsNcclLog *log);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsNcclLog, fs_nccl_log_free)

/* What the caller knows beyond the log (command-line options). */
typedef struct {
  const char *op;       /* collective name ("all_reduce"), NULL: none given */
  guint ranks;          /* 0: none given */
  guint nodes;          /* 0: none given */
} FsNcclLogHints;

/* Completes and checks every test of log against hints: a collective the
 * log does not name is taken from hints->op, one it names must equal it;
 * a rank or host count the log lacks (or has only from nThread × nGpus)
 * is taken from hints, one it has must equal it (and --ranks must be a
 * multiple of nThread × nGpus); then the rows' busbw/algbw ratio must
 * match nccl-tests' factor for the collective on that many ranks.  Errors
 * (FS_NCCL_LOG_ERROR_PARSE, "file:line:col: sentence" at the line that
 * disagrees): a mismatch, a test whose collective or rank count is still
 * unknown.  Cost: linear in the rows. */
gboolean fs_nccl_log_resolve(FsNcclLog *log, const FsNcclLogHints *hints, GError **error);

/* nccl-tests' busbw/algbw factor for collective on n ranks (1 for the
 * ones without a factor, sendrecv, broadcast, reduce); 0 for an unknown
 * collective. */
double fs_nccl_log_busbw_factor(const char *collective, guint n);

/* The dropped rows as text for stderr: one line per row
 * ("file:line:1: row dropped: reason"), or, for more than 3 rows of one
 * file and reason, one line with the count, the first location and the
 * first lines.  NULL when n is 0.  Caller frees. */
char *fs_nccl_log_drops_text(const FsNcclLogDrop *drops, guint n);

/* What reading log assumed or left out, as text for stderr: for a test
 * whose rows had no column titles, one line "file:line:1: note: rows
 * without column titles, read as nccl-tests 2.10+ prints them (…)", then
 * fs_nccl_log_drops_text of its dropped rows.  NULL when there is
 * nothing to say.  Caller frees. */
char *fs_nccl_log_notes_text(const FsNcclLog *log);

/* The NCCL release the logs (FsNcclLog *) name first, as a version code
 * ("22703") that has a parameter file in models/nccl/ (nccl-params.h), or
 * NULL when no log names one.  A release without a file is not returned: a
 * warning line "FILE:LINE:1: …" is appended to warnings instead.  Caller
 * frees. */
char *fs_nccl_logs_release(GPtrArray *logs, GString *warnings);

/* Building a log from another source (fs_nccl_log_load_table): an empty
 * log named name, and a new empty test appended to it (owned by the log;
 * rows' type and redop strings are freed with it). */
FsNcclLog *fs_nccl_log_new(const char *name);
FsNcclLogTest *fs_nccl_log_add_test(FsNcclLog *log, int line);

/* Reads a reference table of kind nccl-tests (validation/reference/
 * README.md: `# collective:`, `# ranks:` or a `gpus` column, columns
 * size_bytes, oop_time_us, oop_busbw_GBps and optionally ip_time_us,
 * ip_busbw_GBps) as a log: one test per rank count, in the table's order,
 * float rows (count = size / 4).  Errors: FS_VAL_ERROR from the table
 * reader, FS_NCCL_LOG_ERROR_PARSE for another kind or a bad cell
 * (file:line:col).  Implemented in nccl-table.c. */
FsNcclLog *fs_nccl_log_load_table(const char *path, GError **error);

/* "all_reduce" from "all_reduce_perf", "./build/all_reduce_perf_mpi",
 * "all_reduce"; NULL when the name is not an nccl-tests binary.  Caller
 * frees. */
char *fs_nccl_log_collective_from_binary(const char *name);

G_END_DECLS
