/* gen.c — fabric and rack generators (see gen.h). */
#include "topo/gen.h"

#include <math.h>

#include "topo/topo-private.h"
#include "util/error.h"

/* Fails at the entry's position pos (an FsGenPos *) with FS_TOPO_ERROR_INVALID and a
 * printf-like message; evaluates to FALSE, for "return gen_fail(...)". */
#define gen_fail(error, pos, ...)                                                             \
  (fs_set_error_at((error), FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, (pos)->file, (pos)->line,    \
                   (pos)->col, __VA_ARGS__),                                                  \
   FALSE)

/* Adds a fabric switch "<prefix>/<role><i>"; returns its index. */
static gboolean add_switch(FsTopo *t, const FsFabricSpec *s, const char *role, guint i,
                           guint *out, GError **error)
{
  char name[256];
  g_snprintf(name, sizeof name, "%s/%s%u", s->prefix, role, i);
  return fs_topo_add_node(t, name, s->sw, -1, -1, s->pos.file, s->pos.line, s->pos.col, out,
                          error);
}

static gboolean add_link(FsTopo *t, guint a, guint b, const FsModel *m, guint count,
                         const FsGenPos *pos, FsFabricInfo *info, GError **error)
{
  if (!fs_topo_add_link(t, a, b, m, count, pos->file, pos->line, pos->col, NULL, error))
    return FALSE;
  info->links++;
  return TRUE;
}

/* The number of upper switches over nl lower switches with `up` up ports
 * each: the smallest divisor S of up with nl × (up / S) <= k.  0 if none. */
static guint upper_count(guint nl, guint up, guint k)
{
  for (guint s = 1; s <= up; s++)
    if (up % s == 0 && (guint64)nl * (up / s) <= k)
      return s;
  return 0;
}

/* Joins lower[0..nl) (each with `up` up ports) to a new layer of upper
 * switches named role<first…>; appends them to upper. */
static gboolean connect_up(FsTopo *t, const FsFabricSpec *s, const guint *lower, guint nl,
                           guint up, const char *role, guint *next_id, GArray *upper,
                           FsFabricInfo *info, GError **error)
{
  guint k = s->sw->u.sw.ports;
  guint ns = upper_count(nl, up, k);
  g_assert(ns > 0);
  guint per = up / ns;
  for (guint j = 0; j < ns; j++) {
    guint sw;
    if (!add_switch(t, s, role, (*next_id)++, &sw, error))
      return FALSE;
    g_array_append_val(upper, sw);
    for (guint i = 0; i < nl; i++)
      if (!add_link(t, lower[i], sw, s->link, per, &s->pos, info, error))
        return FALSE;
  }
  return TRUE;
}

/* Builds the levels above leaves[0..nl), each leaf having `up` up ports:
 * spines (2 levels in all) or pods and cores (3 levels). */
static gboolean build_upper(FsTopo *t, const FsFabricSpec *s, const guint *leaves, guint nl,
                            guint up, FsFabricInfo *info, GError **error)
{
  guint k = s->sw->u.sw.ports;
  guint levels = s->levels;
  gboolean fits2 = upper_count(nl, up, k) > 0;
  guint pod = k / 2;
  guint pods = (nl + pod - 1) / MAX(pod, 1);
  gboolean fits3 = pod >= 1 && k - pod >= 1 && upper_count(pods, k - pod, k) > 0;
  if (levels == 0)
    levels = fits2 ? 2 : 3;
  if (levels == 2 && !fits2)
    return gen_fail(error, &s->pos,
                    "%u leaves do not fit under one spine level of %u-port switches (at most "
                    "%u); use levels: 3 or fewer endpoints", nl, k, k);
  if (levels == 3 && !fits3)
    return gen_fail(error, &s->pos,
                    "%u leaves need %u pods, more than a %u-port core switch can join; use "
                    "fewer endpoints or a larger switch", nl, pods, k);
  info->levels = levels;
  g_autoptr(GArray) upper = g_array_new(FALSE, FALSE, sizeof(guint));
  guint next = 0;
  if (levels == 2) {
    if (!connect_up(t, s, leaves, nl, up, "spine", &next, upper, info, error))
      return FALSE;
    info->spines = upper->len;
    return TRUE;
  }
  /* Three levels: pod p holds leaves [p*pod, (p+1)*pod) and `up`
   * aggregation switches, agg j of pod p being aggs[p*up + j]. */
  g_autofree guint *aggs = g_new(guint, (gsize)pods * up);
  guint agg_id = 0;
  for (guint p = 0; p < pods; p++) {
    guint first = p * pod, last = MIN(nl, first + pod);
    for (guint j = 0; j < up; j++) {
      guint a;
      if (!add_switch(t, s, "agg", agg_id++, &a, error))
        return FALSE;
      aggs[p * up + j] = a;
      for (guint l = first; l < last; l++)
        if (!add_link(t, leaves[l], a, s->link, 1, &s->pos, info, error))
          return FALSE;
    }
  }
  info->aggs = agg_id;
  /* Core plane j joins aggregation switch j of every pod. */
  g_autofree guint *plane = g_new(guint, pods);
  for (guint j = 0; j < up; j++) {
    for (guint p = 0; p < pods; p++)
      plane[p] = aggs[p * up + j];
    if (!connect_up(t, s, plane, pods, k - pod, "core", &next, upper, info, error))
      return FALSE;
  }
  info->cores = upper->len;
  return TRUE;
}

/* Leaf down/up ports for the spec's oversubscription. */
static gboolean leaf_ports(const FsFabricSpec *s, guint *down, guint *up, GError **error)
{
  if (s->sw->kind != FS_MODEL_SWITCH)
    return gen_fail(error, &s->pos, "model \"%s\" is not a switch model", s->sw->name);
  guint k = s->sw->u.sw.ports;
  double o = s->oversubscription;
  if (!(o >= 1.0) || !isfinite(o))
    return gen_fail(error, &s->pos, "oversubscription must be at least 1 (1:1 is non-blocking)");
  if (k < 2)
    return gen_fail(error, &s->pos, "switch \"%s\" has %u ports; a fat-tree needs at least 2",
                    s->sw->name, k);
  guint d = (guint)floor(k * o / (1.0 + o) + 1e-9);
  d = CLAMP(d, 1, k - 1);
  *down = d;
  *up = k - d;
  return TRUE;
}

/* Generates the fat-tree of gen.h over the endpoints ep[0..n-1]: one switch when levels is 1
 * (or 0 and n fits on k ports), else leaves of d down ports and the spine or pod-and-core
 * levels above (build_upper). Fills info_out when non-NULL; FS_TOPO_ERROR_INVALID when the
 * sizes do not fit. */
gboolean fs_topo_gen_fat_tree(FsTopo *t, const guint *ep, guint n, const FsFabricSpec *s,
                              FsFabricInfo *info_out, GError **error)
{
  FsFabricInfo info = {0};
  if (n == 0)
    return gen_fail(error, &s->pos, "a fat-tree needs at least one endpoint");
  guint d, u;
  if (!leaf_ports(s, &d, &u, error))
    return FALSE;
  guint k = s->sw->u.sw.ports;
  if (s->levels > 3)
    return gen_fail(error, &s->pos, "levels must be 1, 2 or 3");
  if (s->levels == 1 || (s->levels == 0 && n <= k)) {
    if (n > k)
      return gen_fail(error, &s->pos, "%u endpoints do not fit on one %u-port switch", n, k);
    guint sw;
    if (!add_switch(t, s, "leaf", 0, &sw, error))
      return FALSE;
    for (guint e = 0; e < n; e++)
      if (!add_link(t, ep[e], sw, s->link, 1, &s->pos, &info, error))
        return FALSE;
    info.levels = 1;
    info.leaves = 1;
  } else {
    guint nl = (n + d - 1) / d;
    g_autofree guint *leaves = g_new(guint, nl);
    for (guint l = 0; l < nl; l++)
      if (!add_switch(t, s, "leaf", l, &leaves[l], error))
        return FALSE;
    for (guint e = 0; e < n; e++)
      if (!add_link(t, ep[e], leaves[e / d], s->link, 1, &s->pos, &info, error))
        return FALSE;
    info.leaves = nl;
    if (!build_upper(t, s, leaves, nl, u, &info, error))
      return FALSE;
  }
  if (info_out)
    *info_out = info;
  return TRUE;
}

/* Generates the rail-optimized fabric of gen.h: rails defaults to the endpoints of the first
 * host, one leaf per rail per scalable unit of hosts_per_leaf hosts (at most a leaf's down
 * ports), and the fat-tree levels above when there is more than one leaf. FS_TOPO_ERROR_INVALID
 * when the endpoints are not whole hosts or a unit does not fit a leaf. */
gboolean fs_topo_gen_rail_optimized(FsTopo *t, const guint *ep, guint n, guint rails,
                                    guint hosts_per_leaf, const FsFabricSpec *s,
                                    FsFabricInfo *info_out, GError **error)
{
  FsFabricInfo info = {0};
  if (n == 0)
    return gen_fail(error, &s->pos, "a rail-optimized fabric needs at least one endpoint");
  guint d, u;
  if (!leaf_ports(s, &d, &u, error))
    return FALSE;
  if (rails == 0) {
    int h0 = t->nodes->len ? g_array_index(t->nodes, FsTopoNode, ep[0]).host : -1;
    for (guint e = 0; e < n && g_array_index(t->nodes, FsTopoNode, ep[e]).host == h0; e++)
      rails++;
  }
  if (n % rails != 0)
    return gen_fail(error, &s->pos, "%u endpoints are not a whole number of hosts with %u rails",
                    n, rails);
  guint hosts = n / rails;
  if (hosts_per_leaf == 0)
    hosts_per_leaf = MIN(hosts, d);
  if (hosts_per_leaf > d)
    return gen_fail(error, &s->pos,
                    "hosts_per_leaf %u exceeds a leaf's %u down ports at oversubscription %g:1",
                    hosts_per_leaf, d, s->oversubscription);
  guint units = (hosts + hosts_per_leaf - 1) / hosts_per_leaf;
  guint nl = units * rails;
  g_autofree guint *leaves = g_new(guint, nl);
  /* Leaf su*rails + r serves rail r of the hosts of scalable unit su. */
  for (guint l = 0; l < nl; l++)
    if (!add_switch(t, s, "leaf", l, &leaves[l], error))
      return FALSE;
  for (guint e = 0; e < n; e++) {
    guint host = e / rails, r = e % rails;
    if (!add_link(t, ep[e], leaves[(host / hosts_per_leaf) * rails + r], s->link, 1, &s->pos,
                  &info, error))
      return FALSE;
  }
  info.leaves = nl;
  info.levels = 1;
  if (nl > 1 && !build_upper(t, s, leaves, nl, u, &info, error))
    return FALSE;
  if (info_out)
    *info_out = info;
  return TRUE;
}

/* Generates the dragonfly of gen.h: groups of routers joined all to all, global ports spread
 * round-robin over the other groups (port k·(g-1)+x of group i meets the matching port of the
 * x-th other group), and endpoints_per_router endpoints per router in order.
 * FS_TOPO_ERROR_INVALID when the global links cannot reach every group, the routers pass
 * FABRICSIM_MAX_NAMES or the endpoints do not fit. */
gboolean fs_topo_gen_dragonfly(FsTopo *t, const guint *ep, guint n, const FsDragonflySpec *s,
                               FsFabricInfo *info_out, GError **error)
{
  FsFabricInfo info = {0};
  guint g = s->groups, a = s->routers, h = s->global_per_router;
  if (g < 2 || a < 1)
    return gen_fail(error, &s->pos, "a dragonfly needs at least 2 groups of 1 router");
  if ((guint64)a * h < g - 1)
    return gen_fail(error, &s->pos,
                    "%u routers × %u global links per group cannot reach the other %u groups; "
                    "raise global_per_router to at least %u", a, h, g - 1,
                    (g - 1 + a - 1) / a);
  if ((guint64)g * a > fs_topo_limits()->names)
    return gen_fail(error, &s->pos, "%u × %u routers is too many (the limit is %" G_GUINT64_FORMAT
                    "; FABRICSIM_MAX_NAMES raises it)", g, a, fs_topo_limits()->names);
  guint p = s->endpoints_per_router ? s->endpoints_per_router : (n + g * a - 1) / (g * a);
  if ((guint64)p * g * a < n)
    return gen_fail(error, &s->pos, "%u endpoints do not fit on %u routers × %u endpoints",
                    n, g * a, p);
  const FsModel *gl = s->global_link ? s->global_link : s->link;
  FsFabricSpec fs = {s->sw, s->link, 1, 0, s->prefix, s->pos};
  g_autofree guint *r = g_new(guint, (gsize)g * a);
  for (guint i = 0; i < g * a; i++)
    if (!add_switch(t, &fs, "router", i, &r[i], error))
      return FALSE;
  /* Routers of a group, all to all. */
  for (guint gi = 0; gi < g; gi++)
    for (guint x = 0; x < a; x++)
      for (guint y = x + 1; y < a; y++)
        if (!add_link(t, r[gi * a + x], r[gi * a + y], s->link, 1, &s->pos, &info, error))
          return FALSE;
  /* Global links: port q of group i (q < a*h, on router q / h) leads to
   * the (q mod (g-1))-th other group; the k-th such port to group j pairs
   * with the k-th port of j that leads back to i. */
  guint ports = a * h;
  for (guint i = 0; i < g; i++)
    for (guint j = i + 1; j < g; j++) {
      guint xi = j - 1; /* j's position among i's other groups (j > i) */
      guint xj = i;     /* i's position among j's other groups (i < j) */
      for (guint k = 0;; k++) {
        guint qi = k * (g - 1) + xi, qj = k * (g - 1) + xj;
        if (qi >= ports || qj >= ports)
          break;
        if (!add_link(t, r[i * a + qi / h], r[j * a + qj / h], gl, 1, &s->pos, &info, error))
          return FALSE;
      }
    }
  for (guint e = 0; e < n; e++)
    if (!add_link(t, ep[e], r[e / p], s->link, 1, &s->pos, &info, error))
      return FALSE;
  info.levels = 2;
  info.leaves = g * a;
  if (info_out)
    *info_out = info;
  return TRUE;
}

/* Generates the NVLink rack of gen.h: the NVSwitch chips first (no host), then per tray a host
 * with its CPUs (joined by their inter-socket link, each on NVLink-C2C to an equal share of the
 * GPUs) and its GPUs, each with links_per_switch NVLinks to every chip. FS_TOPO_ERROR_INVALID
 * when a model is missing or of the wrong kind or the counts do not divide. */
gboolean fs_topo_gen_nvlink_rack(FsTopo *t, const FsNvlRackSpec *s, GError **error)
{
  FsFabricInfo info = {0};
  const FsGenPos *pos = &s->pos;
  guint chips = s->switch_trays * s->switches_per_tray;
  if (s->trays == 0 || s->gpus_per_tray == 0 || chips == 0)
    return gen_fail(error, pos, "an NVLink rack needs trays, GPUs and NVSwitch chips");
  if (s->gpu->kind != FS_MODEL_GPU)
    return gen_fail(error, pos, "model \"%s\" is not a GPU model", s->gpu->name);
  guint per = s->links_per_switch;
  if (per == 0)
    per = s->gpu->u.gpu.nvlinks / chips;
  if (per == 0)
    return gen_fail(error, pos, "GPU \"%s\" has %u NVLinks, fewer than the %u NVSwitch chips",
                    s->gpu->name, s->gpu->u.gpu.nvlinks, chips);
  if (s->cpus_per_tray > 0 && (s->gpus_per_tray % s->cpus_per_tray != 0 || s->cpu == NULL ||
                               s->c2c == NULL))
    return gen_fail(error, pos, "each CPU needs a cpu and c2c model and an equal share of the "
                    "tray's GPUs (%u GPUs, %u CPUs)", s->gpus_per_tray, s->cpus_per_tray);
  if (s->cpus_per_tray > 64)
    return gen_fail(error, pos, "%u CPUs per tray; at most 64", s->cpus_per_tray);
  char name[256];
  g_autofree guint *sw = g_new(guint, chips);
  for (guint c = 0; c < chips; c++) {
    g_snprintf(name, sizeof name, "%s/swtray%u/nvswitch%u", s->prefix, c / s->switches_per_tray,
               c % s->switches_per_tray);
    if (!fs_topo_add_node(t, name, s->sw, -1, -1, pos->file, pos->line, pos->col, &sw[c], error))
      return FALSE;
  }
  for (guint tr = 0; tr < s->trays; tr++) {
    g_snprintf(name, sizeof name, "%s/tray%u", s->prefix, tr);
    int host = fs_topo_add_host(t, name);
    guint cpus[64];
    guint nc = s->cpus_per_tray;
    for (guint c = 0; c < nc; c++) {
      g_snprintf(name, sizeof name, "%s/tray%u/cpu%u", s->prefix, tr, c);
      if (!fs_topo_add_node(t, name, s->cpu, host, (int)c, pos->file, pos->line, pos->col,
                            &cpus[c], error))
        return FALSE;
    }
    /* Grace CPUs of a tray are joined to each other (a 2-socket board). */
    for (guint c = 1; c < nc && s->cpu->u.cpu.intersocket; c++)
      if (!add_link(t, cpus[c - 1], cpus[c], s->cpu->u.cpu.intersocket, 1, pos, &info, error))
        return FALSE;
    for (guint gi = 0; gi < s->gpus_per_tray; gi++) {
      guint gpu;
      g_snprintf(name, sizeof name, "%s/tray%u/gpu%u", s->prefix, tr, gi);
      if (!fs_topo_add_node(t, name, s->gpu, host, -1, pos->file, pos->line, pos->col, &gpu,
                            error))
        return FALSE;
      if (nc > 0 && !add_link(t, gpu, cpus[gi / (s->gpus_per_tray / nc)], s->c2c, 1, pos, &info,
                              error))
        return FALSE;
      for (guint c = 0; c < chips; c++)
        if (!add_link(t, gpu, sw[c], s->nvlink, per, pos, &info, error))
          return FALSE;
    }
  }
  return TRUE;
}

/* Generates the racks of gen.h over existing hosts: every s->trays hosts (in the order given)
 * form a rack with its own NVSwitch chips ("<prefix>/rack<r>/swtray<t>/nvswitch<c>"), and every
 * GPU of those hosts, in node order, gets links_per_switch NVLinks to every chip of its rack.
 * The last rack may hold fewer trays.  FS_TOPO_ERROR_INVALID when there are no hosts, no chips,
 * a host without GPUs, or too few NVLinks for the chips. */
gboolean fs_topo_gen_nvlink_racks(FsTopo *t, const guint *hosts, guint n,
                                  const FsNvlRackSpec *s, GError **error)
{
  FsFabricInfo info = {0};
  const FsGenPos *pos = &s->pos;
  guint chips = s->switch_trays * s->switches_per_tray;
  if (n == 0)
    return gen_fail(error, pos, "no host was made from the rack's template (instantiate it under "
                    "hosts: first)");
  if (s->trays == 0 || chips == 0)
    return gen_fail(error, pos, "an NVLink rack needs trays and NVSwitch chips");
  /* GPUs of every host, in node order (one pass over the nodes). */
  guint nh = t->host_names->len;
  g_autofree int *rack_of = g_new(int, nh);
  for (guint h = 0; h < nh; h++)
    rack_of[h] = -1;
  for (guint i = 0; i < n; i++)
    rack_of[hosts[i]] = (int)(i / s->trays);
  g_autofree guint *gpus_in = g_new0(guint, nh);
  const FsModel *gpu = NULL;
  for (guint v = 0; v < t->nodes->len; v++) {
    const FsTopoNode *node = &g_array_index(t->nodes, FsTopoNode, v);
    if (node->kind == FS_NODE_GPU && node->host >= 0 && rack_of[node->host] >= 0) {
      gpus_in[node->host]++;
      gpu = gpu ? gpu : node->model;
    }
  }
  for (guint i = 0; i < n; i++)
    if (gpus_in[hosts[i]] == 0)
      return gen_fail(error, pos, "host %s of the rack has no GPU",
                      (const char *)t->host_names->pdata[hosts[i]]);
  guint per = s->links_per_switch ? s->links_per_switch : gpu->u.gpu.nvlinks / chips;
  if (per == 0)
    return gen_fail(error, pos, "GPU \"%s\" has %u NVLinks, fewer than the %u NVSwitch chips",
                    gpu->name, gpu->u.gpu.nvlinks, chips);
  guint racks = (n + s->trays - 1) / s->trays;
  g_autofree guint *sw = g_new(guint, (gsize)racks * chips);
  char name[256];
  for (guint r = 0; r < racks; r++)
    for (guint c = 0; c < chips; c++) {
      g_snprintf(name, sizeof name, "%s/rack%u/swtray%u/nvswitch%u", s->prefix, r,
                 c / s->switches_per_tray, c % s->switches_per_tray);
      if (!fs_topo_add_node(t, name, s->sw, -1, -1, pos->file, pos->line, pos->col,
                            &sw[r * chips + c], error))
        return FALSE;
    }
  guint nn = t->nodes->len;
  for (guint v = 0; v < nn; v++) {
    const FsTopoNode *node = &g_array_index(t->nodes, FsTopoNode, v);
    if (node->kind != FS_NODE_GPU || node->host < 0 || rack_of[node->host] < 0)
      continue;
    const guint *rack_sw = sw + (gsize)rack_of[node->host] * chips;
    for (guint c = 0; c < chips; c++)
      if (!add_link(t, v, rack_sw[c], s->nvlink, per, pos, &info, error))
        return FALSE;
  }
  return TRUE;
}
