/* explain.c — the arithmetic behind a model's derived figures, as text a
 * student can check by hand:
 *
 *   PCIe Gen4 x16: 16 GT/s × 16 lanes × 128/130 ÷ 8 = 31.5 GB/s raw per
 *   direction; × 0.914 TLP efficiency at 256 B payload (24 B per TLP) =
 *   28.8 GB/s
 *
 * Bandwidths print in GB/s (10^9 bytes/s) with a precision that depends on
 * the magnitude, so that the documented figures (15.75, 31.5, 63.0 GB/s)
 * read as people quote them.  Output is locale-independent.
 */
#include <string.h>

#include "catalog/catalog-private.h"
#include "catalog/names.h"

/* A figure in GB/s: 3 significant digits below 1, 2 decimals below 20,
 * 1 decimal below 100, none above. */
static void append_gbs(GString *s, double bytes_per_s)
{
  double v = bytes_per_s / 1e9;
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  const char *fmt = v >= 100 ? "%.0f" : v >= 20 ? "%.1f" : v >= 1 ? "%.2f" : "%.3g";
  g_string_append(s, g_ascii_formatd(buf, sizeof buf, fmt, v));
  g_string_append(s, " GB/s");
}

/* A plain number with up to 6 significant digits ("16", "25.7812"). */
static void append_num(GString *s, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%.6g", v));
}

static const char *family_label(FsLinkFamily f)
{
  switch (f) {
  case FS_LINK_PCIE: return "PCIe";
  case FS_LINK_NVLINK: return "NVLink";
  case FS_LINK_C2C: return "NVLink-C2C";
  case FS_LINK_INTERSOCKET: return "Inter-socket";
  case FS_LINK_INFINIBAND: return "InfiniBand";
  case FS_LINK_ETHERNET: return "Ethernet";
  default: return "?";
  }
}

char *fs_link_model_label(const FsModel *m)
{
  g_return_val_if_fail(m != NULL && m->kind == FS_MODEL_LINK, NULL);
  const FsLinkModel *l = &m->u.link;
  const char *fam = family_label(l->family);
  const char *gen = l->generation ? l->generation : "";
  if (l->family == FS_LINK_PCIE)
    return g_strdup_printf("%s %s x%u", fam, gen, l->lanes);
  if (gen[0] == '\0')
    return g_strdup(fam);
  /* "NVLink4" and "NVLink-C2C" already say their family. */
  if (g_str_has_prefix(gen, fam) || g_str_has_prefix(gen, "NVLink"))
    return g_strdup(gen);
  return g_strdup_printf("%s %s", fam, gen);
}

/* Lane rates are transfers for PCIe and the CPU links, bits elsewhere. */
static const char *lane_unit(FsLinkFamily f)
{
  return f == FS_LINK_PCIE || f == FS_LINK_INTERSOCKET ? "GT/s" : "Gb/s";
}

/* TRUE when the encoding's name is just its ratio ("128b/130b" for
 * "128/130"), which the arithmetic already shows. */
static gboolean same_ratio(const FsLinkModel *l)
{
  if (l->encoding_ratio == NULL)
    return FALSE;
  GString *bare = g_string_new(NULL);
  for (const char *p = l->encoding_name; *p; p++)
    if (*p != 'b')
      g_string_append_c(bare, *p);
  gboolean same = strcmp(bare->str, l->encoding_ratio) == 0;
  g_string_free(bare, TRUE);
  return same;
}

static void append_link_explain(GString *s, const FsModel *m)
{
  const FsLinkModel *l = &m->u.link;
  g_autofree char *label = fs_link_model_label(m);
  g_string_append_printf(s, "%s: ", label);
  if (l->bandwidth_given) {
    append_gbs(s, l->raw_bandwidth);
    g_string_append(s, " per direction");
  } else {
    append_num(s, l->lane_rate / 1e9);
    g_string_append_printf(s, " %s × %u lane%s", lane_unit(l->family), l->lanes,
                           l->lanes == 1 ? "" : "s");
    if (l->encoding != 1)
      g_string_append_printf(s, " × %s", l->encoding_ratio ? l->encoding_ratio : "?");
    g_string_append(s, " ÷ 8 = ");
    append_gbs(s, l->raw_bandwidth);
    g_string_append(s, " raw per direction");
    if (l->encoding != 1 && l->encoding_name != NULL && !same_ratio(l))
      g_string_append_printf(s, " (encoding %s)", l->encoding_name);
  }
  if (l->max_payload > 0) {
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    const char *unit = l->family == FS_LINK_PCIE ? "TLP" : "packet";
    g_string_append_printf(s, "; × %s %s efficiency at %u B payload (%u B per %s) = ",
                           g_ascii_formatd(buf, sizeof buf, "%.3f", l->efficiency), unit,
                           l->max_payload, l->tlp_overhead, unit);
    append_gbs(s, l->bandwidth);
  } else if (l->efficiency != 1) {
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf(s, "; × %s efficiency = ",
                           g_ascii_formatd(buf, sizeof buf, "%.3f", l->efficiency));
    append_gbs(s, l->bandwidth);
  }
}

char *fs_link_model_explain(const FsModel *link)
{
  g_return_val_if_fail(link != NULL && link->kind == FS_MODEL_LINK, NULL);
  GString *s = g_string_new(NULL);
  append_link_explain(s, link);
  return g_string_free(s, FALSE);
}

/* "<count> × <link bw> = <total> per direction (<2×total> both ways)",
 * raw, then effective when it differs. */
static void append_aggregate(GString *s, const char *what, guint count, const FsModel *link)
{
  const FsLinkModel *l = &link->u.link;
  g_string_append_printf(s, "%s: %u × %s ", what, count, link->name);
  append_gbs(s, l->raw_bandwidth);
  g_string_append(s, " = ");
  append_gbs(s, count * l->raw_bandwidth);
  g_string_append(s, " per direction (");
  append_gbs(s, 2 * count * l->raw_bandwidth);
  g_string_append(s, " both directions)");
  if (l->bandwidth != l->raw_bandwidth) {
    g_string_append_printf(s, "; effective %u × ", count);
    append_gbs(s, l->bandwidth);
    g_string_append(s, " = ");
    append_gbs(s, count * l->bandwidth);
  }
  g_string_append_c(s, '\n');
}

static void append_link_line(GString *s, const char *what, const FsModel *link)
{
  if (link == NULL)
    return;
  g_string_append_printf(s, "%s (%s): ", what, link->name);
  append_link_explain(s, link);
  g_string_append_c(s, '\n');
}

/* See explain.h. Explains how the model's links make up its bandwidth: the link itself, a
 * switch's or NIC's ports, a GPU's NVLinks, host link and C2C, a CPU's NVLink, inter-socket
 * links and root port. Lines for links the model lacks are left out. The caller frees the
 * string. */
char *fs_model_explain(const FsModel *m)
{
  g_return_val_if_fail(m != NULL, NULL);
  GString *s = g_string_new(NULL);
  switch (m->kind) {
  case FS_MODEL_LINK:
    append_link_explain(s, m);
    g_string_append_c(s, '\n');
    break;
  case FS_MODEL_SWITCH:
    if (m->u.sw.port_link != NULL) {
      append_aggregate(s, "ports", m->u.sw.ports, m->u.sw.port_link);
      append_link_line(s, "port", m->u.sw.port_link);
    }
    break;
  case FS_MODEL_GPU:
    if (m->u.gpu.nvlink != NULL && m->u.gpu.nvlinks > 0) {
      append_aggregate(s, "NVLink", m->u.gpu.nvlinks, m->u.gpu.nvlink);
      append_link_line(s, "one NVLink", m->u.gpu.nvlink);
    }
    append_link_line(s, "host link", m->u.gpu.pcie);
    append_link_line(s, "C2C", m->u.gpu.c2c);
    break;
  case FS_MODEL_CPU:
    if (m->u.cpu.nvlink != NULL && m->u.cpu.nvlinks > 0)
      append_aggregate(s, "NVLink", m->u.cpu.nvlinks, m->u.cpu.nvlink);
    if (m->u.cpu.intersocket != NULL && m->u.cpu.intersocket_links > 0)
      append_aggregate(s, "inter-socket", m->u.cpu.intersocket_links, m->u.cpu.intersocket);
    append_link_line(s, "root port", m->u.cpu.pcie);
    break;
  case FS_MODEL_NIC:
    if (m->u.nic.port_link != NULL) {
      append_aggregate(s, "ports", m->u.nic.ports, m->u.nic.port_link);
      append_link_line(s, "port", m->u.nic.port_link);
    }
    append_link_line(s, "host link", m->u.nic.pcie);
    break;
  default:
    g_assert_not_reached();
  }
  return g_string_free(s, FALSE);
}
