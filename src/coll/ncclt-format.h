/* ncclt-format.h — nccl-tests' text output, column for column, and
 * fabricsim's JSON per size.
 *
 * The text follows NVIDIA/nccl-tests 2.19.6 (src/util.cu:
 * writeDeviceReport, writeResultHeader, writeBenchmarkLinePreamble,
 * writeBenchmarkLineBody, writeResultFooter): the same header comments, the
 * same printf widths, the same number formatting (getFloatStr: 2 decimals,
 * then fewer, then exponent, to fit the column), "N/A" in #wrong (no data
 * is checked), and "# Avg bus bandwidth" averaging the out-of-place and
 * in-place busbw of every row.  After each row fabricsim appends a note
 * "  # algo/proto/channels" so a reader sees what ran; tools that read
 * nccl-tests logs stop at the 13 columns.
 *
 * All functions append to a GString (caller owns); output depends only on
 * the arguments (deterministic, locale-independent).
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdint.h>

#include "coll/coll.h"

G_BEGIN_DECLS

/* The run's parameters for the header lines. */
typedef struct {
  FsCollOp op;
  const char *version_tag;  /* printed where nccl-tests prints its version: "fabricsim-0.1.0" */
  guint nccl_version_code;  /* e.g. 23007 for NCCL 2.30.7 */
  guint nthreads, ngpus;
  uint64_t min_bytes, max_bytes;
  uint64_t step_factor;     /* > 1: -f; else step_bytes is -i */
  uint64_t step_bytes;
  guint warmup_iters, iters, agg_iters;
  guint validation, graph, unalign;
} FsNcclTestsHeader;

/* One "#  Rank …" device line. */
typedef struct {
  guint rank, group;
  guint pid;
  const char *hostname;
  guint device;
  guint pci_domain, pci_bus, pci_device;
  const char *name;         /* "NVIDIA H100 80GB HBM3" */
} FsNcclTestsDevice;

/* One table row: both columns of timings, and what ran. */
typedef struct {
  FsCollOp op;              /* the collective (fs_coll_bench sets it) */
  FsCollSizes sizes;
  const char *type_name;
  const char *redop_label;
  int root;                 /* -1 for non-rooted ops, as nccl-tests prints */
  double oop_time_us, oop_algbw, oop_busbw;
  double ip_time_us, ip_algbw, ip_busbw;
  const char *algo, *proto;
  guint channels;
} FsNcclTestsRow;

/* Formats value right-aligned in width columns the way nccl-tests does
 * (getFloatStr) into buf (at least width + 1 bytes). */
void fs_ncclt_float(double value, int width, char *buf);

/* The lines from "# nccl-tests version" to "# Using devices" and the
 * device lines. */
void fs_ncclt_header(GString *out, const FsNcclTestsHeader *h, const FsNcclTestsDevice *devs,
                     guint ndevs);
/* "#", the out-of-place/in-place banner and the two column-title lines. */
void fs_ncclt_table_header(GString *out);
/* One row plus the fabricsim note. */
void fs_ncclt_row(GString *out, const FsNcclTestsRow *row);
/* "# Out of bounds values", "# Avg bus bandwidth", "#", "# Collective test
 * concluded". avg_busbw is the mean over rows of both busbw columns. */
void fs_ncclt_footer(GString *out, FsCollOp op, double avg_busbw);

/* nccl-tests' own -J (--output_file) JSON: the writer of NVIDIA/nccl-tests
 * src/util.cu at commit a0b82b2260cf5152b9f8c061bbf7eaf0ba096432 (version
 * 2.19.6, JSON_FILE_VERSION 3: jsonOutputInit, writeDeviceReport,
 * writeResultHeader, writeBenchmarkLinePreamble/Body/Terminator,
 * writeResultFooter, jsonOutputFinalize), key for key and in its order, on
 * one line without a final newline, doubles as "%lf", booleans as the
 * strings "true"/"false", root as the "%6i" string, nwrong null (no data
 * is checked).  One deliberate difference: nccl-tests' single-process
 * build lists only the first device of its process; this lists every
 * rank (as its MPI build with one GPU per process does), so readers count
 * the ranks.  Times and the environment are the caller's (run). */
#define FS_NCCLT_JSON_VERSION 3

typedef struct {
  const char *const *args;  /* the command line, program name first; NULL-terminated */
  const char *const *env;   /* "NAME=value" entries; NULL-terminated, may be NULL */
  const char *start_time;   /* "%Y-%m-%d %H:%M:%S" */
  const char *end_time;
} FsNcclTestsJsonRun;

/* Appends the whole -J document for one collective's rows (all of one
 * program run: every dtype and redop of it).  avg_busbw as for
 * fs_ncclt_footer.  Deterministic: depends on the arguments only. */
void fs_ncclt_json(GString *out, const FsNcclTestsHeader *h, const FsNcclTestsJsonRun *run,
                   const FsNcclTestsDevice *devs, guint ndevs, const FsNcclTestsRow *rows,
                   guint nrows, double avg_busbw);

/* The JSON object of a row: op, size_bytes, count, type, redop, root,
 * time_us, algbw_GBps, busbw_GBps (out-of-place), algo, proto, channels.
 * New reference. */
json_t *fs_ncclt_row_json(const FsNcclTestsRow *row);

G_END_DECLS
