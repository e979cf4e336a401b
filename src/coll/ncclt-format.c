/* ncclt-format.c — nccl-tests' text layout, its -J JSON file, and
 * fabricsim's JSON rows.  See ncclt-format.h; widths and strings follow
 * nccl-tests 2.19.6 src/util.cu exactly (the JSON writer as of commit
 * a0b82b2260cf5152b9f8c061bbf7eaf0ba096432). */
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

/* ---- nccl-tests' -J file ------------------------------------------------- */

/* nccl-tests' sanitizeJson: '"', '\\', '/', tab and newline escaped; the
 * copy stops at the first other control or non-ASCII byte. */
static void js_str(GString *out, const char *s)
{
  if (s == NULL) {
    g_string_append(out, "null");
    return;
  }
  g_string_append_c(out, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\' || *p == '/')
      g_string_append_c(out, '\\'), g_string_append_c(out, (char)*p);
    else if (*p == '\t')
      g_string_append(out, "\\t");
    else if (*p == '\n')
      g_string_append(out, "\\n");
    else if (*p >= 0x7f || *p <= 0x1f)
      break;
    else
      g_string_append_c(out, (char)*p);
  }
  g_string_append_c(out, '"');
}

/* jsonDouble: "%lf", or the string "nan". */
static void js_double(GString *out, double v)
{
  if (v != v)
    g_string_append(out, "\"nan\"");
  else
    g_string_append_printf(out, "%f", v);
}

static void js_key(GString *out, gboolean *first, const char *key)
{
  if (!*first)
    g_string_append_c(out, ',');
  *first = FALSE;
  js_str(out, key);
  g_string_append_c(out, ':');
}

static void js_timing(GString *out, const char *key, double t, double alg, double bus)
{
  gboolean f = FALSE;
  js_key(out, &f, key);
  g_string_append(out, "{\"time\":");
  js_double(out, t);
  g_string_append(out, ",\"alg_bw\":");
  js_double(out, alg);
  g_string_append(out, ",\"bus_bw\":");
  js_double(out, bus);
  g_string_append(out, ",\"nwrong\":null}");
}

/* See ncclt-format.h. Appends to out one JSON document in the layout of nccl-tests' JSON
 * output: run arguments and environment, NCCL version, the test configuration with its
 * devices, one result per row with out-of-place and in-place timings, and the average bus
 * bandwidth. Fields nccl-tests fills from a real run that we cannot know are given fixed
 * values (no wrong results, no out-of-bounds count). */
void fs_ncclt_json(GString *out, const FsNcclTestsHeader *h, const FsNcclTestsJsonRun *run,
                   const FsNcclTestsDevice *devs, guint ndevs, const FsNcclTestsRow *rows,
                   guint nrows, double avg_busbw)
{
  gboolean first = TRUE;
  g_string_append_c(out, '{');
  js_key(out, &first, "version");
  g_string_append_printf(out, "%d", FS_NCCLT_JSON_VERSION);
  js_key(out, &first, "start_time");
  js_str(out, run->start_time);
  js_key(out, &first, "args");
  g_string_append_c(out, '[');
  for (guint i = 0; run->args != NULL && run->args[i] != NULL; i++) {
    if (i > 0)
      g_string_append_c(out, ',');
    js_str(out, run->args[i]);
  }
  g_string_append(out, "]");
  js_key(out, &first, "env");
  g_string_append_c(out, '[');
  for (guint i = 0; run->env != NULL && run->env[i] != NULL; i++) {
    if (i > 0)
      g_string_append_c(out, ',');
    js_str(out, run->env[i]);
  }
  g_string_append(out, "]");
  js_key(out, &first, "nccl_version");
  g_string_append_printf(out, "%u", h->nccl_version_code);

  js_key(out, &first, "config");
  g_string_append_printf(out,
                         "{\"nthreads\":%u,\"ngpus\":%u,\"minimum_bytes\":%" G_GUINT64_FORMAT
                         ",\"maximum_bytes\":%" G_GUINT64_FORMAT ",",
                         h->nthreads, h->ngpus, h->min_bytes, h->max_bytes);
  if (h->step_factor > 1)
    g_string_append_printf(out, "\"step_factor\":%" G_GUINT64_FORMAT, h->step_factor);
  else
    g_string_append_printf(out, "\"step_bytes\":%" G_GUINT64_FORMAT, h->step_bytes);
  g_string_append_printf(out,
                         ",\"warmup_iters\":%u,\"iterations\":%u,\"aggregated_iterations\":%u,"
                         "\"validation\":%u,\"graph\":%u,\"blocking_collectives\":\"false\","
                         "\"per_iter_timing\":\"false\",\"per_iter_skip\":0,"
                         "\"parallel_init\":\"false\",\"devices\":[",
                         h->warmup_iters, h->iters, h->agg_iters, h->validation, h->graph);
  for (guint i = 0; i < ndevs; i++) {
    const FsNcclTestsDevice *d = &devs[i];
    char hex[64];
    g_snprintf(hex, sizeof hex, "%04x:%02x:%02x", d->pci_domain, d->pci_bus, d->pci_device);
    g_string_append_printf(out, "%s{\"rank\":%u,\"group\":%u,\"pid\":%u,\"hostname\":", i ? "," : "",
                           d->rank, d->group, d->pid);
    js_str(out, d->hostname);
    g_string_append_printf(out, ",\"device\":%u,\"device_hex\":", d->device);
    js_str(out, hex);
    g_string_append(out, ",\"device_info\":");
    js_str(out, d->name);
    g_string_append_c(out, '}');
  }
  g_string_append(out, "]}");

  js_key(out, &first, "results");
  g_string_append_c(out, '[');
  for (guint i = 0; i < nrows; i++) {
    const FsNcclTestsRow *r = &rows[i];
    char root[16];
    g_snprintf(root, sizeof root, "%6i", r->root);
    g_string_append_printf(out, "%s{\"size\":%" G_GUINT64_FORMAT ",\"count\":%" G_GUINT64_FORMAT
                           ",\"type\":", i ? "," : "", r->sizes.size, r->sizes.count);
    js_str(out, r->type_name);
    g_string_append(out, ",\"redop\":");
    js_str(out, r->redop_label);
    g_string_append(out, ",\"root\":");
    js_str(out, root);
    js_timing(out, "out_of_place", r->oop_time_us, r->oop_algbw, r->oop_busbw);
    js_timing(out, "in_place", r->ip_time_us, r->ip_algbw, r->ip_busbw);
    g_string_append_printf(out, ",\"actual_iterations\":%u,\"experiment_name\":\"\"}", h->iters);
  }
  g_string_append(out, "]");
  js_key(out, &first, "out_of_bounds");
  g_string_append(out, "{\"count\":0,\"okay\":\"true\"}");
  js_key(out, &first, "average_bus_bandwidth");
  g_string_append(out, "{\"bandwidth\":");
  js_double(out, avg_busbw);
  g_string_append(out, ",\"okay\":\"unchecked\"}");
  js_key(out, &first, "end_time");
  js_str(out, run->end_time);
  g_string_append_c(out, '}');
}
