/* nccl-log-private.h — what the two readers of an nccl-tests log
 * (nccl-log-text.c, nccl-log-json.c) share with the records and checks of
 * nccl-log.c.  Not installed and not for other modules: they use
 * nccl-log.h. */
#ifndef FS_CALIB_NCCL_LOG_PRIVATE_H
#define FS_CALIB_NCCL_LOG_PRIVATE_H

#include "calib/nccl-log.h"

/* Frees the strings of a row (an FsNcclLogRow *), not the row: the clear
 * function of a test's rows array, and for a row a reader drops. */
void fs_nccl_log_row_clear(gpointer p);

/* The column titles of nccl-tests 2.10 and later, under which rows pasted
 * without them (a cut excerpt) are read; named in the note that says so. */
extern const char fs_nccl_log_headerless_titles[];

/* Records a result row that was not kept: file of the log, line, and the
 * static reason (not copied; it must outlive the log).  O(1). */
void fs_nccl_log_drop(FsNcclLog *log, int line, const char *reason);

/* Ranks and hosts of a complete test, from the best source it has (its
 * device list, NCCL INFO's counts, nThread x nGpus); the first
 * disagreement between sources is kept in t->problem (nccl-log.h).
 * info_ranks/info_nodes: NCCL INFO's counts (0: none) and their lines.
 * O(devices). */
void fs_nccl_log_test_finish(FsNcclLogTest *t, guint info_ranks, int info_ranks_line,
                             guint info_nodes, int info_nodes_line);

/* Parses nccl-tests text output into a new log: repairs lines that a
 * terminal or a pager mangled (counted in repaired_lines), reads comment
 * lines for the header, devices and columns, rows once the columns are
 * known, and counts the other lines as skipped.  Tests without rows are
 * dropped.  Returns NULL with error set at the offending line and column
 * for a NUL byte or a bad line, or FS_NCCL_LOG_ERROR_EMPTY when no result
 * table remains.  The caller owns the log.  Linear in len. */
FsNcclLog *fs_nccl_log_parse_text(const char *text, gsize len, const char *name, GError **error);

/* Parses nccl-tests -J output into a new log with one test: the NCCL
 * version, the collective from the program name in args[0], the thread,
 * GPU and device counts of "config", the rows of "results" and the
 * average bus bandwidth.  Returns NULL with error set for invalid JSON, a
 * field of the wrong type (at its JSON path), or FS_NCCL_LOG_ERROR_EMPTY
 * when there are no rows.  The caller owns the log.  Linear in len. */
FsNcclLog *fs_nccl_log_parse_json(const char *text, gsize len, const char *name, GError **error);

#endif
