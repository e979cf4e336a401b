/* timeline-svg.h — a Gantt-style timeline as a standalone SVG document:
 * one or more panels, each a titled set of rows (a pipeline stage, a GPU
 * stream) with coloured bars on a common time axis, and a legend.  Used by
 * `fabricsim explain schedule --svg`.
 *
 * All panels share one time scale (the largest end of any bar, or of a
 * panel's span), so that panels compare by length; a panel's span is
 * marked by a dashed line and its rows' idle time is light grey.  Labels
 * are drawn inside bars wide enough for them; every bar has a <title>
 * tooltip.  Text is XML-escaped.
 *
 * Output is deterministic.  Ownership: returns a newly allocated string
 * (caller frees); inputs are borrowed.  No errors.  Cost: O(bars).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  guint row;
  double start, end;      /* time units of the axis */
  const char *fill;       /* an SVG colour, e.g. "#4e79a7" */
  const char *label;      /* drawn inside when it fits; may be NULL */
  const char *tip;        /* tooltip; may be NULL */
} FsSvgBar;

typedef struct {
  const char *title;
  guint n_rows;
  const char *const *rows;  /* row names */
  const FsSvgBar *bars;
  guint n_bars;
  double span;              /* the panel's own end (drawn as a marker); 0: none */
} FsSvgPanel;

typedef struct {
  const char *fill;
  const char *label;
} FsSvgLegend;

char *fs_svg_timeline(const char *title, const FsSvgPanel *panels, guint n_panels,
                      const char *axis_label, const FsSvgLegend *legend, guint n_legend);

G_END_DECLS
