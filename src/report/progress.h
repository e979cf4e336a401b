/* progress.h — the one progress line of every simulating command.
 *
 * A line on stderr, redrawn in place ("\r"), shown only when stderr is a
 * terminal, the command was not given --quiet, and the run has lasted more
 * than a second (a short run prints nothing).  Two kinds of runs:
 *   - counted work (sweep points, planner designs): fs_progress_count
 *     draws "[#####.....] done/total UNIT  rate/s  ETA m:ss";
 *   - one simulation (coll, train, replay, flows, p2p, calibrate,
 *     validate, explain overlap): the simulator's tick (core/sim.h) draws
 *     "CMD: elapsed, N events, simulated T" while the FsProgress lives.
 * fs_progress_free ends the line (a newline) when one was drawn, so what
 * follows on stderr starts on a line of its own.  stdout is never touched.
 * Not thread-safe: create, update and free on the main thread (the tick is
 * the main thread's only).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct FsProgress FsProgress;

/* A progress line for command cmd (borrowed, e.g. "train"); quiet (the
 * command's --quiet) or a stderr that is not a terminal disable it.  While
 * it lives, the simulator's tick of this thread draws it.  Cost: O(1). */
FsProgress *fs_progress_new(const char *cmd, gboolean quiet);

/* Counted work: done of total units (a plural noun, borrowed: "points",
 * "designs") are finished.  Redrawn at most ten times a second, and once
 * more when done == total. */
void fs_progress_count(FsProgress *p, guint64 done, guint64 total, const char *unit);

/* Whether the line is drawn at all (a terminal, not --quiet). */
gboolean fs_progress_enabled(const FsProgress *p);

/* Ends the progress line now on the terminal, if any (a newline), so that
 * a message written to stderr next (an error, an interruption) starts on a
 * line of its own; the next update draws the line again.  No-op when no
 * line is drawn.  Called by the command's error printers (src/cli). */
void fs_progress_end_line(void);

/* Ends the line if one was drawn, removes the tick and frees p. */
void fs_progress_free(FsProgress *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsProgress, fs_progress_free)

G_END_DECLS
