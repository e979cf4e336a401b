/* bisect.c — bisection bandwidth by max-flow/min-cut (Dinic's algorithm).
 *
 * Every link becomes one arc pair whose two arcs both start with the
 * link's per-direction bandwidth: each is the other's residual.  This
 * gives the same maximum flow as two independent directed channels,
 * because a maximum flow never needs to send both ways along one link.
 * A super source feeds the first half of the GPUs and the second half
 * drains into a super sink, both with unlimited capacity. */
#include "topo/topo.h"

#include <math.h>
#include <string.h>

typedef struct {
  guint to;
  double cap;   /* residual capacity */
} Arc;

typedef struct {
  guint n;          /* vertices: nodes + source + sink */
  guint *start;     /* CSR over arc ids, n + 1 */
  guint *arcs;      /* arc ids by tail vertex */
  Arc *arc;         /* arc id ^ 1 is its reverse */
  int *level;
  guint *cur;       /* current-arc pointer per vertex */
  guint *queue;
  double eps;
} Net;

static gboolean bfs(Net *g, guint s, guint t)
{
  for (guint v = 0; v < g->n; v++)
    g->level[v] = -1;
  guint head = 0, tail = 0;
  g->level[s] = 0;
  g->queue[tail++] = s;
  while (head < tail) {
    guint v = g->queue[head++];
    for (guint i = g->start[v]; i < g->start[v + 1]; i++) {
      const Arc *a = &g->arc[g->arcs[i]];
      if (a->cap > g->eps && g->level[a->to] < 0) {
        g->level[a->to] = g->level[v] + 1;
        g->queue[tail++] = a->to;
      }
    }
  }
  return g->level[t] >= 0;
}

/* Pushes up to f from v towards t along the level graph; returns what went. */
static double dfs(Net *g, guint v, guint t, double f)
{
  if (v == t)
    return f;
  for (; g->cur[v] < g->start[v + 1]; g->cur[v]++) {
    guint id = g->arcs[g->cur[v]];
    Arc *a = &g->arc[id];
    if (a->cap <= g->eps || g->level[a->to] != g->level[v] + 1)
      continue;
    double got = dfs(g, a->to, t, MIN(f, a->cap));
    if (got > 0) {
      a->cap -= got;
      g->arc[id ^ 1].cap += got;
      return got;
    }
  }
  return 0;
}

/* See topo.h. Builds a flow network of two arcs per link plus a source feeding the first half
 * of the GPUs and a sink draining the second, with "unlimited" set above what all links
 * together carry, and runs Dinic's blocking flows until the sink is unreachable. Frees all of
 * it before returning the flow. */
double fs_topo_bisection(const FsTopo *t)
{
  guint ng;
  const guint *gpus = fs_topo_gpus(t, &ng);
  if (ng < 2)
    return 0;
  guint nn = fs_topo_n_nodes(t), nl = fs_topo_n_links(t);
  Net g = {0};
  g.n = nn + 2;
  guint s = nn, sink = nn + 1;
  guint narcs = 2 * nl + 2 * ng;
  g.arc = g_new(Arc, narcs);
  guint *tail = g_new(guint, narcs);
  double maxcap = 0;
  guint k = 0;
  for (guint l = 0; l < nl; l++) {
    const FsTopoLink *lk = fs_topo_link(t, l);
    g.arc[k] = (Arc){lk->b, lk->bandwidth};
    tail[k++] = lk->a;
    g.arc[k] = (Arc){lk->a, lk->bandwidth};
    tail[k++] = lk->b;
    maxcap = MAX(maxcap, lk->bandwidth);
  }
  /* Unlimited: more than every link together can carry. */
  double inf = maxcap * (nl + 1) * 4 + 1;
  for (guint r = 0; r < ng; r++) {
    gboolean first = r < ng / 2;
    g.arc[k] = (Arc){first ? gpus[r] : sink, inf};
    tail[k++] = first ? s : gpus[r];
    g.arc[k] = (Arc){first ? s : gpus[r], 0};
    tail[k++] = first ? gpus[r] : sink;
  }
  g.start = g_new0(guint, g.n + 1);
  for (guint i = 0; i < narcs; i++)
    g.start[tail[i] + 1]++;
  for (guint v = 0; v < g.n; v++)
    g.start[v + 1] += g.start[v];
  g.arcs = g_new(guint, narcs);
  guint *fill = g_memdup2(g.start, sizeof(guint) * (g.n + 1));
  for (guint i = 0; i < narcs; i++)
    g.arcs[fill[tail[i]]++] = i;
  g_free(fill);
  g_free(tail);
  g.level = g_new(int, g.n);
  g.cur = g_new(guint, g.n);
  g.queue = g_new(guint, g.n);
  g.eps = maxcap * 1e-12;
  double flow = 0;
  while (bfs(&g, s, sink)) {
    memcpy(g.cur, g.start, sizeof(guint) * g.n);
    double f;
    while ((f = dfs(&g, s, sink, inf)) > 0)
      flow += f;
  }
  g_free(g.arc);
  g_free(g.start);
  g_free(g.arcs);
  g_free(g.level);
  g_free(g.cur);
  g_free(g.queue);
  return flow;
}
