/* nccl-env.c — NCCL's environment variables laid over its constants
 * (nccl-params.h: fs_nccl_params_apply_env, fs_nccl_params_apply_environ,
 * fs_nccl_params_env_names): the tuner plugin, then the numeric variables
 * of one table, each with its range and what it sets. */
#include <string.h>

#include "coll/comm.h"
#include "coll/nccl-params.h"
#include "coll/tuner-plugin.h"

/* The value of variable var of envp as an integer from lo to hi in *out; TRUE when unset
 * or empty (out untouched), FALSE with an error naming var for anything else. */
static gboolean env_uint(const char *const *envp, const char *var, guint64 lo, guint64 hi,
                         guint64 *out, gboolean *set, GError **error)
{
  const char *s = envp != NULL ? g_environ_getenv((char **)envp, var) : NULL;
  *set = FALSE;
  if (s == NULL || *s == '\0')
    return TRUE;
  if (!g_ascii_string_to_unsigned(s, 10, lo, hi, out, NULL)) {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE,
                "%s=\"%s\": expected a whole number from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT,
                var, s, lo, hi);
    return FALSE;
  }
  *set = TRUE;
  return TRUE;
}

gboolean fs_nccl_params_apply_env(FsNcclParams *p, GError **error)
{
  g_auto(GStrv) envp = g_get_environ();
  return fs_nccl_params_apply_environ(p, (const char *const *)envp, error);
}

/* The variable that names a tuner plugin (read first: not a number). */
#define TUNER_PLUGIN_VAR "NCCL_TUNER_PLUGIN"

/* What a value of each numeric variable sets in the params. */
static void set_buffsize(FsNcclParams *p, guint64 v)
{
  p->proto[FS_PROTO_SIMPLE].buffer = MAX(v, (guint64)p->steps);
}
static void set_p2p_net_chunk(FsNcclParams *p, guint64 v) { p->p2p_net_chunk = v; }
static void set_p2p_nvl_chunk(FsNcclParams *p, guint64 v) { p->p2p_nvl_chunk = v; }
static void set_p2p_ll_threshold(FsNcclParams *p, guint64 v) { p->p2p_ll_threshold = v; }
static void set_net_peer_channels(FsNcclParams *p, guint64 v)
{
  if (p->p2p.on)
    p->p2p.net_rule = FS_NCCL_P2P_FIXED, p->p2p.net_channels = (guint)v;
}
static void set_channel_net_bw(FsNcclParams *p, guint64 v)
{
  if (p->p2p.on)
    p->p2p.channel_net_bw = (double)v;
}
static void set_min_ctas(FsNcclParams *p, guint64 v) { p->env_min_ctas = (guint)v; }
static void set_max_ctas(FsNcclParams *p, guint64 v) { p->env_max_ctas = (guint)v; }
static void set_min_nchannels(FsNcclParams *p, guint64 v) { p->env_min_nchannels = (guint)v; }
static void set_max_nchannels(FsNcclParams *p, guint64 v) { p->env_max_nchannels = (guint)v; }

/* Every variable fs_nccl_params_apply_environ reads, in its order, with its range and what it
 * sets: the one list of their names (fs_nccl_params_env_names reads it too).  The channel
 * limits are NCCL's src/init.cc NCCL_MIN_CTAS/NCCL_MAX_CTAS and src/graph/connect.cc
 * NCCL_MIN_NCHANNELS/NCCL_MAX_NCHANNELS; MAXCHANNELS caps them in fs_nccl_params_channels. */
static const struct {
  const char *name;
  guint64 lo, hi;
  void (*set)(FsNcclParams *p, guint64 v);  /* NULL: the tuner plugin, read by name */
} env_vars[] = {
  {TUNER_PLUGIN_VAR, 0, 0, NULL},
  {"NCCL_BUFFSIZE", 1, (guint64)1 << 34, set_buffsize},
  {"NCCL_P2P_NET_CHUNKSIZE", 1, (guint64)1 << 30, set_p2p_net_chunk},
  {"NCCL_P2P_NVL_CHUNKSIZE", 1, (guint64)1 << 30, set_p2p_nvl_chunk},
  {"NCCL_P2P_LL_THRESHOLD", 0, (guint64)1 << 30, set_p2p_ll_threshold},
  {"NCCL_NCHANNELS_PER_NET_PEER", 1, 64, set_net_peer_channels},
  {"NCCL_P2P_PER_CHANNEL_NET_BW", 1, 100000, set_channel_net_bw},
  {"NCCL_MIN_CTAS", 1, 64, set_min_ctas},
  {"NCCL_MAX_CTAS", 1, 64, set_max_ctas},
  {"NCCL_MIN_NCHANNELS", 1, 64, set_min_nchannels},
  {"NCCL_MAX_NCHANNELS", 1, 64, set_max_nchannels},
};

const char *const *fs_nccl_params_env_names(void)
{
  static const char *names[G_N_ELEMENTS(env_vars) + 1];
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    for (guint i = 0; i < G_N_ELEMENTS(env_vars); i++)
      names[i] = env_vars[i].name;
    g_once_init_leave(&done, 1);
  }
  return names;
}

/* See nccl-params.h: the tuner plugin first (its platform variables fill in what envp leaves
 * unset), then every variable of env_vars, in order. */
gboolean fs_nccl_params_apply_environ(FsNcclParams *p, const char *const *given, GError **error)
{
  g_auto(GStrv) envp = g_strdupv((char **)given);
  const char *tp = envp != NULL ? g_environ_getenv(envp, TUNER_PLUGIN_VAR) : NULL;
  if (tp != NULL && *tp != '\0') {
    g_autofree char *path = fs_tuner_plugin_path(tp);
    FsTunerPlugin *t = fs_tuner_plugin_load(path, error);
    if (t == NULL) {
      g_prefix_error(error, TUNER_PLUGIN_VAR "=\"%s\": ", tp);
      return FALSE;
    }
    fs_tuner_plugin_free(p->tuner_plugin);
    p->tuner_plugin = t;
    for (const char *const *e = fs_tuner_plugin_env(t); *e != NULL; e++) {
      g_auto(GStrv) kv = g_strsplit(*e, "=", 2);
      envp = g_environ_setenv(envp, kv[0], kv[1], FALSE);
    }
  }
  for (guint i = 0; i < G_N_ELEMENTS(env_vars); i++) {
    guint64 v;
    gboolean set;
    if (env_vars[i].set == NULL)
      continue;
    if (!env_uint((const char *const *)envp, env_vars[i].name, env_vars[i].lo, env_vars[i].hi, &v,
                  &set, error))
      return FALSE;
    if (set)
      env_vars[i].set(p, v);
  }
  return TRUE;
}
