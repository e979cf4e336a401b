/* units.h — the output of `fabricsim units`: a quantity as every fabricsim
 * input reads it, in SI base units (B/s, bit/s per lane, ps, B, W, FLOP/s),
 * one tab-separated line.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Parses text as kind ("bandwidth", "lane-rate", "time", "size", "power",
 * "flops"), or, when kind is NULL, as the first kind that accepts it (a
 * bare number is a size), and appends its line.  FALSE with the parse
 * error (without kind: the most telling of the kinds' reasons). */
gboolean fs_report_quantity(GString *out, const char *kind, const char *text, GError **error);

G_END_DECLS
