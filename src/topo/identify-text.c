/* identify-text.c — clues from the text given beside an `nvidia-smi topo
 * -m` matrix (`topo import-smi --smi-q FILE`): nvidia-smi -L and -q,
 * ibstat, ibv_devinfo.  See fs_hw_text_parse in identify.h. */
#include <stdlib.h>
#include <string.h>

#include "topo/identify.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/strutil.h"

void fs_hw_text_clear(FsHwText *t)
{
  if (t->gpu_names != NULL)
    g_ptr_array_free(t->gpu_names, TRUE);
  t->gpu_names = NULL;
}

/* The value after "key :" on a line whose first words are key (spaces
 * around the colon optional), stripped; NULL when the line is not one. */
static const char *value_of(const char *line, const char *key)
{
  while (*line == ' ' || *line == '\t')
    line++;
  gsize k = strlen(key);
  if (g_ascii_strncasecmp(line, key, k) != 0)
    return NULL;
  const char *p = line + k;
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p != ':')
    return NULL;
  p++;
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

/* "GPU 0: NAME (UUID: …)" or "GPU 0,1,2: NAME": the name (caller frees),
 * or NULL. */
static char *gpu_list_name(const char *line)
{
  while (*line == ' ' || *line == '\t')
    line++;
  if (strncmp(line, "GPU ", 4) != 0)
    return NULL;
  const char *p = line + 4;
  if (!g_ascii_isdigit(*p))
    return NULL;
  while (g_ascii_isdigit(*p) || *p == ',' || *p == ' ')
    p++;
  /* "GPU 00000000:18:00.0" (a bus id in nvidia-smi -q) has no space
   * after its colon. */
  if (*p != ':' || (p[1] != ' ' && p[1] != '\t'))
    return NULL;
  p++;
  while (*p == ' ' || *p == '\t')
    p++;
  const char *end = strstr(p, " (UUID");
  if (end == NULL)
    end = p + strlen(p);
  while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
    end--;
  if (end == p || g_str_has_prefix(p, "Compute Capability"))
    return NULL;
  return g_strndup(p, (gsize)(end - p));
}

/* See identify.h.  Also: out is reset first and, on success, owns its strings (free them with
 * fs_hw_text_clear); on failure it is cleared.  Input that is not UTF-8 fails too.  The first
 * Device Id, CA type or vendor_part_id line wins; the fastest Rate is kept.  Errors are
 * FS_TOPO_ERROR_INVALID. */
gboolean fs_hw_text_parse(const char *text, gsize len, const char *name, FsHwText *out,
                          GError **error)
{
  memset(out, 0, sizeof *out);
  out->gpu_names = g_ptr_array_new_with_free_func(g_free);
  out->nic_family = -1;
  if (!g_utf8_validate_len(text, len, NULL)) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, name, 1, 1,
                    "not UTF-8 text; expected nvidia-smi -L or -q, ibstat or ibv_devinfo "
                    "output");
    return FALSE;
  }
  g_autofree char *copy = g_strndup(text, len);
  g_auto(GStrv) lines = fs_split_lines(copy);
  int first_line = 0;
  for (guint i = 0; lines[i] != NULL; i++) {
    char *l = lines[i];
    gsize ll = strlen(l);
    if (ll > 0 && l[ll - 1] == '\r')
      l[ll - 1] = '\0';
    const char *v;
    char *gname = gpu_list_name(l);
    if (gname == NULL && (v = value_of(l, "Product Name")) != NULL && *v != '\0')
      gname = g_strdup(v);
    if (gname != NULL) {
      g_autofree char *norm = fs_model_name_normalize(gname);
      if (out->gpu_names->len > 0) {
        g_autofree char *n0 = fs_model_name_normalize(g_ptr_array_index(out->gpu_names, 0));
        if (strcmp(n0, norm) != 0) {
          g_autofree char *a = fs_escape_controls(g_ptr_array_index(out->gpu_names, 0));
          g_autofree char *b = fs_escape_controls(gname);
          g_free(gname);
          fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, name, (int)i + 1, 1,
                          "this GPU is a \"%s\" but line %d names a \"%s\"; an import has one "
                          "GPU model (name it with --gpu)", b, first_line, a);
          fs_hw_text_clear(out);
          return FALSE;
        }
      } else {
        first_line = (int)i + 1;
      }
      g_ptr_array_add(out->gpu_names, gname);
      out->lines_used++;
      continue;
    }
    guint64 x;
    char *end;
    if ((v = value_of(l, "Device Id")) != NULL && out->gpu_device == 0) {
      x = g_ascii_strtoull(v, &end, 16);
      if (end != v && x > 0xffff && x <= 0xffffffffu) {
        out->gpu_device = (guint)(x >> 16);
        out->gpu_vendor = (guint)(x & 0xffff);
        out->lines_used++;
      }
    } else if ((v = value_of(l, "CA type")) != NULL && out->nic_device == 0 &&
               (v[0] == 'M' && v[1] == 'T') && g_ascii_isdigit(v[2])) {
      /* Mellanox/NVIDIA "MT4123": the PCI device id in decimal. */
      x = g_ascii_strtoull(v + 2, &end, 10);
      if (x > 0 && x <= 0xffff) {
        out->nic_vendor = 0x15b3, out->nic_device = (guint)x;
        out->lines_used++;
      }
    } else if ((v = value_of(l, "vendor_part_id")) != NULL && out->nic_device == 0) {
      x = g_ascii_strtoull(v, &end, 10);
      if (end != v && x > 0 && x <= 0xffff) {
        out->nic_vendor = 0x15b3, out->nic_device = (guint)x;
        out->lines_used++;
      }
    } else if ((v = value_of(l, "Rate")) != NULL) {
      double r = g_ascii_strtod(v, &end);
      if (end != v && r > 0 && r < 1e5) {
        out->nic_rate_gbps = MAX(out->nic_rate_gbps, r);
        out->lines_used++;
      }
    } else if ((v = value_of(l, "Link layer")) != NULL) {
      if (g_ascii_strncasecmp(v, "InfiniBand", 10) == 0)
        out->nic_family = FS_LINK_INFINIBAND, out->lines_used++;
      else if (g_ascii_strncasecmp(v, "Ethernet", 8) == 0)
        out->nic_family = FS_LINK_ETHERNET, out->lines_used++;
    }
  }
  if (out->lines_used == 0) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, name, 1, 1,
                    "no clue found: expected nvidia-smi -L lines (GPU 0: NAME), nvidia-smi -q "
                    "(Product Name, Device Id), ibstat (CA type, Rate) or ibv_devinfo "
                    "(vendor_part_id)");
    fs_hw_text_clear(out);
    return FALSE;
  }
  return TRUE;
}
