/* nccl-log.h — reading real nccl-tests output: the text that
 * all_reduce_perf & co. print on stdout (every version since 2.0), and the
 * JSON file that `-J FILE` writes (nccl-tests 2.17+).
 *
 * Text: the reader finds the result table by its column-title line
 * ("#  size  count  type  redop  root  time  algbw  busbw  #wrong  time …")
 * and maps columns by name, so it reads the old layouts (no `redop`/`root`,
 * `error` instead of `#wrong`), the current one, the per-iteration layout
 * (`i_min` …) and a trailing timestamp column alike.  The first `time` (or
 * `cputime`) group is out-of-place, the second in-place; a table with one
 * group has only out-of-place figures.  Device lines ("#  Rank  3 Group
 * 0 Pid 1234 on node1 device  3 [0000:1b:00] NVIDIA H100 80GB HBM3", with
 * or without Group and with old "[0x1b]" bus ids) give the ranks, hosts
 * and GPU names; without them ranks = nThread × nGpus of the parameter
 * line.  The collective comes from "# Collective test starting:
 * all_reduce_perf" (newer) or from the binary's name where a launcher
 * echoed the command line, or from the caller.  NCCL INFO/WARN lines, MPI
 * and launcher chatter, blank lines and rows that another process's output
 * cut in two (they contain "NCCL") are skipped and counted.  Several runs
 * in one file (concatenated outputs) become several tests.  After each row,
 * anything after " #" (fabricsim's own note) is ignored.
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
  int line;             /* in the file (0 for JSON) */
} FsNcclLogRow;

typedef struct {
  char *collective;     /* "all_reduce", or NULL when the log does not say */
  char *version;        /* nccl-tests version, NULL if not printed */
  guint nccl_version;   /* NCCL library version code (22703), 0 if not printed */
  guint nthreads, ngpus;
  guint nranks;         /* device lines, else nthreads × ngpus, else 0 */
  guint nhosts;         /* distinct host names of the device lines (0 without them) */
  GPtrArray *devices;   /* FsNcclLogDevice *, in rank order */
  GArray *rows;         /* FsNcclLogRow, in file order */
  gboolean has_avg_busbw;
  double avg_busbw;     /* "# Avg bus bandwidth" (GB/s) */
  int line;             /* where the test starts */
} FsNcclLogTest;

typedef struct {
  char *file;
  gboolean json;        /* read from -J output */
  GPtrArray *tests;     /* FsNcclLogTest *, at least one with at least one row */
  guint skipped_lines;  /* NCCL INFO/WARN, chatter, broken rows */
} FsNcclLog;

/* Reads a log (text or JSON, told apart by the first non-blank character).
 * The error is FS_NCCL_LOG_ERROR_EMPTY when no table with a row is found. */
FsNcclLog *fs_nccl_log_load(const char *path, GError **error);
/* The same from memory; name stands for the file in messages. */
FsNcclLog *fs_nccl_log_parse(const char *text, gsize len, const char *name, GError **error);
void fs_nccl_log_free(FsNcclLog *log);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsNcclLog, fs_nccl_log_free)

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
