/* timeline-svg.c — a Gantt-style timeline as SVG (see timeline-svg.h). */
#include "report/timeline-svg.h"

#include <math.h>

#define WIDTH 960.0
#define LEFT 90.0      /* row labels */
#define RIGHT 20.0
#define ROW_H 20.0
#define TITLE_H 26.0   /* a panel's title line */
#define GAP 14.0       /* between panels */
#define AXIS_H 40.0
#define LEGEND_H 26.0

static void text(GString *out, double x, double y, const char *anchor, const char *extra, const char *s)
{
  g_autofree char *esc = g_markup_escape_text(s ? s : "", -1);
  g_string_append_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>%s</text>\n", x, y,
                         anchor, extra ? extra : "", esc);
}

/* A round step for about eight ticks over [0, max]. */
static double tick_step(double max)
{
  if (max <= 0)
    return 1;
  double raw = max / 8, p = pow(10, floor(log10(raw))), m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* See timeline-svg.h. Draws the panels one under another, each a set of named rows with
 * coloured bars, on one time scale that fits the longest panel, then a time axis with round
 * ticks and the legend. Bars on a missing row or ending before they start are skipped; a bar's
 * label is drawn only when it fits. Returns a complete SVG document that the caller frees. */
char *fs_svg_timeline(const char *title, const FsSvgPanel *panels, guint n_panels,
                      const char *axis_label, const FsSvgLegend *legend, guint n_legend)
{
  double tmax = 0;
  double height = 34;
  for (guint p = 0; p < n_panels; p++) {
    tmax = MAX(tmax, panels[p].span);
    for (guint i = 0; i < panels[p].n_bars; i++)
      tmax = MAX(tmax, panels[p].bars[i].end);
    height += TITLE_H + ROW_H * panels[p].n_rows + GAP;
  }
  height += AXIS_H + (n_legend > 0 ? LEGEND_H : 0);
  if (tmax <= 0)
    tmax = 1;
  double plot_w = WIDTH - LEFT - RIGHT, scale = plot_w / tmax;
  GString *out = g_string_new("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  g_string_append_printf(out,
    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
    "font-family=\"sans-serif\" font-size=\"12\">\n", WIDTH, height, WIDTH, height);
  g_string_append_printf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n",
                         WIDTH, height);
  text(out, WIDTH / 2, 22, "middle", " font-size=\"15\" font-weight=\"bold\"", title);
  double y = 34;
  for (guint p = 0; p < n_panels; p++) {
    const FsSvgPanel *pn = &panels[p];
    text(out, LEFT, y + 18, "start", " font-weight=\"bold\"", pn->title);
    y += TITLE_H;
    double top = y;
    for (guint r = 0; r < pn->n_rows; r++) {
      /* The row's idle background, then its name. */
      g_string_append_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                             "fill=\"#eeeeee\"/>\n", LEFT, y + r * ROW_H + 1,
                             (pn->span > 0 ? pn->span : tmax) * scale, ROW_H - 2);
      text(out, LEFT - 8, y + r * ROW_H + ROW_H / 2 + 4, "end", NULL, pn->rows[r]);
    }
    for (guint i = 0; i < pn->n_bars; i++) {
      const FsSvgBar *b = &pn->bars[i];
      if (b->row >= pn->n_rows || b->end < b->start)
        continue;
      double x = LEFT + b->start * scale, w = (b->end - b->start) * scale;
      double by = y + b->row * ROW_H + 1;
      g_string_append_printf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" "
                             "stroke=\"white\" stroke-width=\"0.5\">", x, by, w, ROW_H - 2,
                             b->fill ? b->fill : "#888888");
      if (b->tip) {
        g_autofree char *esc = g_markup_escape_text(b->tip, -1);
        g_string_append_printf(out, "<title>%s</title>", esc);
      }
      g_string_append(out, "</rect>\n");
      if (b->label && w >= 7.0 * (double)g_utf8_strlen(b->label, -1) + 2)
        text(out, x + w / 2, by + ROW_H / 2 + 3, "middle", " font-size=\"10\" fill=\"white\"", b->label);
    }
    y += ROW_H * pn->n_rows;
    if (pn->span > 0)
      g_string_append_printf(out, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"black\" "
                             "stroke-dasharray=\"3,2\"/>\n", LEFT + pn->span * scale, top - 4,
                             LEFT + pn->span * scale, y + 2);
    y += GAP;
  }
  /* The time axis, ticks at round steps. */
  g_string_append_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                         LEFT, y, LEFT + plot_w, y);
  double step = tick_step(tmax);
  for (guint k = 0; (double)k * step <= tmax * (1 + 1e-9); k++) {
    double t = (double)k * step, x = LEFT + t * scale;
    g_string_append_printf(out, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                           x, y, x, y + 4);
    g_autofree char *lab = g_strdup_printf("%g", t);
    text(out, x, y + 16, "middle", NULL, lab);
  }
  text(out, LEFT + plot_w / 2, y + 32, "middle", NULL, axis_label);
  y += AXIS_H;
  double x = LEFT;
  for (guint i = 0; i < n_legend; i++) {
    g_string_append_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\"/>\n",
                           x, y + 4, legend[i].fill);
    text(out, x + 20, y + 15, "start", NULL, legend[i].label);
    x += 30 + 7.0 * (double)g_utf8_strlen(legend[i].label ? legend[i].label : "", -1);
  }
  g_string_append(out, "</svg>\n");
  return g_string_free(out, FALSE);
}
