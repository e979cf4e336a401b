/* launch.c — nccl-tests' host launch and its floor.  See launch.h. */
#include <string.h>

#include "coll/comm.h"
#include "coll/launch.h"

void fs_coll_launch_init(FsCollLaunch *l)
{
  l->threads = 1;
  l->gpus_per_thread = 1;
  l->graph_iters = 0;
}

double fs_coll_launch_host_us(const FsCollLaunch *l, double launch_us)
{
  double per_iter = (double)l->gpus_per_thread * launch_us;
  return l->graph_iters > 0 ? per_iter / (double)l->graph_iters : per_iter;
}

/* See launch.h. Walks the words of text: each -t/-g/-G (or its long name)
 * takes the next non-empty word as its count, checked for range and
 * repetition; the first other word ends the flags. */
gboolean fs_coll_launch_parse(const char *text, FsCollLaunch *l, GError **error)
{
  fs_coll_launch_init(l);
  g_auto(GStrv) w = g_strsplit_set(text != NULL ? text : "", " \t", -1);
  gboolean seen[3] = {FALSE, FALSE, FALSE};
  static const char *const shortf[3] = {"-t", "-g", "-G"};
  static const char *const longf[3] = {"--nthreads", "--ngpus", "--cudagraph"};
  for (guint i = 0; w[i] != NULL; i++) {
    if (w[i][0] == '\0')
      continue;
    int f = -1;
    for (int k = 0; k < 3; k++)
      if (strcmp(w[i], shortf[k]) == 0 || strcmp(w[i], longf[k]) == 0)
        f = k;
    if (f < 0)
      break;  /* the rest is prose */
    const char *v = w[i + 1];
    while (v != NULL && v[0] == '\0')
      v = w[++i + 1];
    guint64 n = 0;
    if (v == NULL || !g_ascii_string_to_unsigned(v, 10, f == 2 ? 0 : 1, 1024, &n, NULL)) {
      g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE,
                  "%s takes a count from %d to 1024, got \"%s\"", shortf[f], f == 2 ? 0 : 1,
                  v != NULL ? v : "");
      return FALSE;
    }
    if (seen[f]) {
      g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE, "%s is given twice", shortf[f]);
      return FALSE;
    }
    seen[f] = TRUE;
    if (f == 0)
      l->threads = (guint)n;
    else if (f == 1)
      l->gpus_per_thread = (guint)n;
    else
      l->graph_iters = (guint)n;
    i++;
  }
  return TRUE;
}

char *fs_coll_launch_describe(const FsCollLaunch *l)
{
  if (l->graph_iters > 0)
    return g_strdup_printf("-t %u -g %u -G %u", l->threads, l->gpus_per_thread, l->graph_iters);
  return g_strdup_printf("-t %u -g %u", l->threads, l->gpus_per_thread);
}
