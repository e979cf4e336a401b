/* tuner-prefs.c — the tuner's inputs (tuner.h, FsCollPrefs): the default
 * candidate sets, what a forced algorithm keeps of the system, and NCCL_ALGO
 * / NCCL_PROTO as NCCL parses them (a list, "^" to exclude, and NCCL >=
 * 2.24's per-collective "allreduce:tree,ring" entries). */
#include <string.h>

#include "coll/tuner.h"

#define ALGO_NAMES "Ring, Tree, CollNetDirect, CollNetChain, CollNet, NVLS, NVLSTree, PAT, rhd, direct, hier"

void fs_coll_prefs_init(FsCollPrefs *prefs)
{
  memset(prefs, 0, sizeof *prefs);
  prefs->algo_mask = ~(guint64)0;
  prefs->proto_mask = (1u << FS_PROTO_N) - 1;
  for (guint op = 0; op < FS_COLL_N_OPS; op++) {
    prefs->op_algo_mask[op] = ~(guint64)0;
    prefs->op_proto_mask[op] = (1u << FS_PROTO_N) - 1;
  }
  prefs->proto = -1;
}

void fs_coll_prefs_apply_sys(const FsCollPrefs *prefs, FsCollSysInfo *sys)
{
  /* A forced CollNet algorithm, or NVLS (across hosts: NVLS+SHARP), keeps the network's switches. */
  gboolean forced = prefs->algo != NULL && (prefs->algo->nccl == FS_NCCL_ALGO_COLLNET_DIRECT ||
                                            prefs->algo->nccl == FS_NCCL_ALGO_COLLNET_CHAIN ||
                                            prefs->algo->nccl == FS_NCCL_ALGO_NVLS);
  if (prefs->collnet_off && !forced)
    sys->collnet = FALSE;
}

/* Splits an NCCL-style list: optional leading '^', names separated by
 * commas.  Calls match(name) → bits for each; unknown names fail. */
static gboolean parse_list_in(const char *text, const char *full, const char *what, guint64 all,
                              guint64 (*match)(const char *name), const char *known, guint64 *mask,
                              GError **error)
{
  gboolean exclude = FALSE;
  const char *s = text;
  while (*s == ' ')
    s++;
  if (*s == '^')
    exclude = TRUE, s++;
  while (*s == ' ')
    s++;
  if (*s == '\0') {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE, "%s \"%s\": an empty list; expected names like %s",
                what, full, known);
    return FALSE;
  }
  guint64 bits = 0;
  g_auto(GStrv) parts = g_strsplit(s, ",", -1);
  for (guint i = 0; parts[i]; i++) {
    char *name = g_strstrip(parts[i]);
    if (name[0] == '\0') {
      g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE,
                  "%s \"%s\": empty name in the list; expected names like %s", what, full, known);
      return FALSE;
    }
    guint64 b = match(name);
    if (b == 0) {
      g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE,
                  "%s \"%s\": unknown name \"%s\"; expected %s, optionally after ^ to exclude",
                  what, full, name, known);
      return FALSE;
    }
    bits |= b;
  }
  *mask = exclude ? (all & ~bits) : bits;
  return TRUE;
}

static gboolean parse_list(const char *text, const char *what, guint64 all,
                           guint64 (*match)(const char *name), const char *known, guint64 *mask,
                           GError **error)
{
  return parse_list_in(text, text, what, all, match, known, mask, error);
}

static guint64 match_algo(const char *name)
{
  guint64 bits = 0;
  gboolean collnet = g_ascii_strcasecmp(name, "CollNet") == 0;
  for (guint i = 0; fs_coll_algos[i]; i++) {
    const FsCollAlgo *a = fs_coll_algos[i];
    if (g_ascii_strcasecmp(name, a->name) == 0 ||
        (a->nccl != FS_NCCL_ALGO_NONE && g_ascii_strcasecmp(name, fs_nccl_algo_name(a->nccl)) == 0) ||
        (collnet && (a->nccl == FS_NCCL_ALGO_COLLNET_DIRECT || a->nccl == FS_NCCL_ALGO_COLLNET_CHAIN)))
      bits |= FS_COLL_ALGO_BIT(i);
  }
  return bits;
}

static guint n_algos(void)
{
  guint n = 0;
  while (fs_coll_algos[n])
    n++;
  return n;
}

static guint64 match_proto(const char *name)
{
  FsCollProto p;
  return fs_coll_proto_from_name(name, &p) ? (guint64)1 << p : 0;
}

gboolean fs_coll_parse_nccl_algo(const char *text, guint64 *mask, GError **error)
{
  return parse_list(text, "NCCL_ALGO", (((guint64)1) << n_algos()) - 1, match_algo, ALGO_NAMES, mask,
                    error);
}

gboolean fs_coll_parse_nccl_proto(const char *text, guint *mask, GError **error)
{
  guint64 m;
  if (!parse_list(text, "NCCL_PROTO", (1u << FS_PROTO_N) - 1, match_proto, "LL, LL128, Simple", &m, error))
    return FALSE;
  *mask = (guint)m;
  return TRUE;
}

/* NCCL's parseList: ';'-separated entries, the first optionally without
 * a collective prefix (then it applies to every collective), the others
 * "collective:list"; each replaces the sets of the collectives it names.
 * masks[op] gets the result (bits of `all`). */
static gboolean parse_map(const char *text, const char *what, guint64 all,
                          guint64 (*match)(const char *name), const char *known,
                          guint64 masks[FS_COLL_N_OPS], GError **error)
{
  g_auto(GStrv) entries = g_strsplit(text, ";", -1);
  for (guint e = 0; entries[e]; e++) {
    char *entry = g_strstrip(entries[e]);
    const char *colon = strchr(entry, ':');
    if (colon == NULL && e > 0) {
      g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE,
                  "%s \"%s\": entry \"%s\" has no collective; every entry after the first must "
                  "name one, as in \"allreduce:%s\"", what, text, entry, entry);
      return FALSE;
    }
    int only = -1;
    const char *list = entry;
    if (colon != NULL) {
      g_autofree char *name = g_strstrip(g_strndup(entry, (gsize)(colon - entry)));
      FsCollOp op;
      if (!fs_coll_op_from_name(name, &op)) {
        g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE,
                    "%s \"%s\": unknown collective \"%s\" before ':'; expected allreduce, allgather, "
                    "reducescatter, broadcast, reduce, …", what, text, name);
        return FALSE;
      }
      only = (int)op;
      list = colon + 1;
    }
    guint64 m;
    if (!parse_list_in(list, text, what, all, match, known, &m, error))
      return FALSE;
    for (guint op = 0; op < FS_COLL_N_OPS; op++)
      if (only < 0 || (guint)only == op)
        masks[op] = m;
  }
  return TRUE;
}

gboolean fs_coll_prefs_set_nccl_algo(FsCollPrefs *prefs, const char *text, GError **error)
{
  guint64 m[FS_COLL_N_OPS];
  memcpy(m, prefs->op_algo_mask, sizeof m);
  if (!parse_map(text, "NCCL_ALGO", (((guint64)1) << n_algos()) - 1, match_algo, ALGO_NAMES, m, error))
    return FALSE;
  memcpy(prefs->op_algo_mask, m, sizeof m);
  return TRUE;
}

gboolean fs_coll_prefs_set_nccl_proto(FsCollPrefs *prefs, const char *text, GError **error)
{
  guint64 m[FS_COLL_N_OPS];
  for (guint op = 0; op < FS_COLL_N_OPS; op++)
    m[op] = prefs->op_proto_mask[op];
  if (!parse_map(text, "NCCL_PROTO", (1u << FS_PROTO_N) - 1, match_proto, "LL, LL128, Simple", m, error))
    return FALSE;
  for (guint op = 0; op < FS_COLL_N_OPS; op++)
    prefs->op_proto_mask[op] = (guint)m[op];
  return TRUE;
}
