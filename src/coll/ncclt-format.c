/* ncclt-format.c — nccl-tests' text layout and fabricsim's JSON rows.
 * See ncclt-format.h; widths and strings follow nccl-tests 2.19.6
 * src/util.cu exactly. */
#include "coll/ncclt-format.h"

#include <stdio.h>

void fs_ncclt_float(double value, int width, char *buf)
{
  /* nccl-tests' getFloatStr: the most decimals (2, 1, 0) that fit, then an
   * exponent.  snprintf with the C locale's '.': our process never calls
   * setlocale with LC_NUMERIC. */
  if (snprintf(buf, width + 1, "%*.2f", width, value) <= width)
    return;
  if (snprintf(buf, width + 1, "%*.1f", width, value) <= width)
    return;
  if (snprintf(buf, width + 1, "%*.0f", width, value) <= width)
    return;
  snprintf(buf, width + 1, width >= 7 ? "%*.1e" : "%*.0e", width, value);
}

void fs_ncclt_header(GString *out, const FsNcclTestsHeader *h, const FsNcclTestsDevice *devs,
                     guint ndevs)
{
  g_string_append_printf(out, "# nccl-tests version %s nccl-headers=%u nccl-library=%u\n",
                         h->version_tag, h->nccl_version_code, h->nccl_version_code);
  g_string_append_printf(out, "# Collective test starting: %s\n", fs_coll_op_binary(h->op));
  g_string_append_printf(out,
                         "# nThread %u nGpus %u minBytes %" G_GUINT64_FORMAT " maxBytes %" G_GUINT64_FORMAT
                         " step: %" G_GUINT64_FORMAT "(%s) warmup iters: %u iters: %u agg iters: %u"
                         " validation: %u graph: %u unalign: %u\n",
                         h->nthreads, h->ngpus, h->min_bytes, h->max_bytes,
                         h->step_factor > 1 ? h->step_factor : h->step_bytes,
                         h->step_factor > 1 ? "factor" : "bytes", h->warmup_iters, h->iters,
                         h->agg_iters, h->validation, h->graph, h->unalign);
  g_string_append(out, "#\n");
  g_string_append(out, "# Using devices\n");
  for (guint i = 0; i < ndevs; i++) {
    const FsNcclTestsDevice *d = &devs[i];
    g_string_append_printf(out, "#  Rank %2u Group %2u Pid %6u on %10s device %2u [%04x:%02x:%02x] %s\n",
                           d->rank, d->group, d->pid, d->hostname, d->device, d->pci_domain,
                           d->pci_bus, d->pci_device, d->name);
  }
}

void fs_ncclt_table_header(GString *out)
{
  g_string_append(out, "#\n");
  g_string_append_printf(out, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n",
                         "", "", "", "", "");
  g_string_append_printf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n",
                         "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                         "time", "algbw", "busbw", "#wrong", 0, "");
  g_string_append_printf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n",
                         "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
                         "(GB/s)", "(GB/s)", "", 0, "");
}

static void body(GString *out, double t, double alg, double bus)
{
  char ts[8], as[7], bs[7];
  fs_ncclt_float(t, 7, ts);
  fs_ncclt_float(alg, 6, as);
  fs_ncclt_float(bus, 6, bs);
  g_string_append_printf(out, "  %7s  %6s  %6s    N/A", ts, as, bs);
}

void fs_ncclt_row(GString *out, const FsNcclTestsRow *r)
{
  g_string_append_printf(out, "%12" G_GUINT64_FORMAT "  %12" G_GUINT64_FORMAT "  %8s  %6s  %6i",
                         r->sizes.size, r->sizes.count, r->type_name, r->redop_label, r->root);
  body(out, r->oop_time_us, r->oop_algbw, r->oop_busbw);
  body(out, r->ip_time_us, r->ip_algbw, r->ip_busbw);
  g_string_append_printf(out, "  # %s/%s/%u\n", r->algo, r->proto, r->channels);
}

void fs_ncclt_footer(GString *out, FsCollOp op, double avg_busbw)
{
  g_string_append_printf(out, "# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
  g_string_append_printf(out, "# %-20s : %g %s\n", "Avg bus bandwidth", avg_busbw, "");
  g_string_append(out, "#\n");
  g_string_append_printf(out, "# Collective test concluded: %s\n", fs_coll_op_binary(op));
}

json_t *fs_ncclt_row_json(const FsNcclTestsRow *r)
{
  json_t *o = json_object();
  json_object_set_new(o, "op", json_string(fs_coll_op_name(r->op)));
  json_object_set_new(o, "size_bytes", json_integer((json_int_t)r->sizes.size));
  json_object_set_new(o, "count", json_integer((json_int_t)r->sizes.count));
  json_object_set_new(o, "type", json_string(r->type_name));
  json_object_set_new(o, "redop", json_string(r->redop_label));
  json_object_set_new(o, "root", json_integer(r->root));
  json_object_set_new(o, "time_us", json_real(r->oop_time_us));
  json_object_set_new(o, "algbw_GBps", json_real(r->oop_algbw));
  json_object_set_new(o, "busbw_GBps", json_real(r->oop_busbw));
  json_object_set_new(o, "algo", json_string(r->algo));
  json_object_set_new(o, "proto", json_string(r->proto));
  json_object_set_new(o, "channels", json_integer(r->channels));
  return o;
}
