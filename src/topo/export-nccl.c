/* export-nccl.c — one host of a topology as the XML NCCL reads from
 * NCCL_TOPO_FILE (and writes to NCCL_TOPO_DUMP_FILE): NVIDIA/nccl
 * src/graph/xml.cc and topo.cc (ncclTopoGetXmlFromFile, ncclTopoAddCpu,
 * ncclTopoAddPci, ncclTopoAddNvLinks, ncclTopoAddC2c).
 *
 * The host's PCIe tree is found breadth-first from its CPUs in node order
 * over PCIe and NVLink-C2C links, expanding only PCIe switches (GPUs and
 * NICs are leaves in NCCL's XML); each CPU node is a <cpu numaid=socket>,
 * each PCIe switch a bridge <pci class="0x060400">, each GPU a <pci
 * class="0x030200"><gpu dev sm rank gdr> with its <nvlink>s (to a GPU of
 * the host: tclass 0x030200; to an NVSwitch: 0x068000, one bus id per
 * plane of NVLink-joined switches; to the CPU: 0x068001) and its <c2c>,
 * each NIC a <pci
 * class="0x020700"> (InfiniBand) or "0x020000" (Ethernet) with a <nic> and
 * one <net> per port.  A node's link to its parent is written as
 * link_speed ("16.0 GT/s PCIe") and link_width.  Bus ids are made up in
 * document order ("0000:01:00.0" …), NVSwitch ids after them; PCI vendor
 * and device ids (the first of `pci_ids`), CPU family/model ids (the first
 * of `cpuid`, written as NCCL's familyid/modelid) and `sm`
 * (`compute_capability`) are the catalog's identification data, so that
 * fs_import_nccl (identify.h) reads the same models back.  Cost: linear in the
 * host's nodes and links. */
#include <stdio.h>
#include <string.h>

#include "topo/import-private.h"
#include "topo/import.h"
#include "util/error.h"

typedef struct {
  const FsTopo *t;
  int host;
  guint n;               /* nodes of the whole topology */
  int *parent;           /* node → parent node in the tree, -1 none */
  int *uplink;           /* node → link to its parent, -1 none */
  guint *bus;            /* node → bus number (0: none yet) */
  int *plane;            /* NVSwitch node → its plane's first switch, -1 not yet */
  guint next_bus;
  GArray *order;         /* tree nodes (not CPUs) in BFS order */
  GString *out;
} Exp;

static gboolean in_host(const Exp *x, guint node)
{
  return fs_topo_node(x->t, node)->host == x->host;
}

static gboolean is_pcie_switch(const FsTopoNode *n)
{
  return n->kind == FS_NODE_SWITCH && n->model->u.sw.kind == FS_SWITCH_PCIE;
}

static char *busid(Exp *x, guint node)
{
  if (x->bus[node] == 0)
    x->bus[node] = ++x->next_bus;
  return g_strdup_printf("%04x:%02x:00.0", x->bus[node] >> 8, x->bus[node] & 0xff);
}

/* NCCL sees every NVSwitch as one node: switches joined by NVLinks (DGX-2's
 * two baseboards) are one plane and share one target bus id, the plane's
 * lowest switch. */
static guint plane_of(Exp *x, guint sw)
{
  if (x->plane[sw] >= 0)
    return (guint)x->plane[sw];
  g_autoptr(GArray) q = g_array_new(FALSE, FALSE, sizeof(guint));
  g_array_append_val(q, sw);
  x->plane[sw] = (int)sw;
  guint low = sw;
  for (guint i = 0; i < q->len; i++) {
    guint a = g_array_index(q, guint, i), na;
    const FsTopoAdj *adj = fs_topo_adj(x->t, a, &na);
    for (guint e = 0; e < na; e++) {
      const FsTopoNode *p = fs_topo_node(x->t, adj[e].peer);
      if (x->plane[adj[e].peer] >= 0 || p->kind != FS_NODE_SWITCH ||
          p->model->u.sw.kind != FS_SWITCH_NVSWITCH)
        continue;
      x->plane[adj[e].peer] = (int)sw;
      low = MIN(low, adj[e].peer);
      g_array_append_val(q, adj[e].peer);
    }
  }
  for (guint i = 0; i < q->len; i++)
    x->plane[g_array_index(q, guint, i)] = (int)low;
  return low;
}

static void indent(GString *out, guint depth)
{
  for (guint i = 0; i < depth; i++)
    g_string_append(out, "  ");
}

/* The first PCI id of m's `pci_ids` ("10de:2330"); FALSE when none. */
static gboolean first_pci_id(const FsModel *m, guint *vendor, guint *device)
{
  const char *l = m->ids.pci_ids;
  char tail;
  return l != NULL && sscanf(l, "%4x:%4x%c", vendor, device, &tail) >= 2;
}

/* link_speed and link_width of a PCIe link model; "" and 0 otherwise (NCCL:
 * unknown). */
static void link_attrs(GString *out, const FsModel *l)
{
  if (l != NULL && l->u.link.family == FS_LINK_PCIE)
    g_string_append_printf(out, " link_speed=\"%.1f GT/s PCIe\" link_width=\"%u\"",
                           l->u.link.lane_rate / 1e9, l->u.link.lanes);
  else
    g_string_append(out, " link_speed=\"\" link_width=\"0\"");
}

typedef struct {
  char *target;
  const char *tclass;
  guint count;
} NvTarget;

/* Appends GPU node's <pci> element at depth: its bus id, class, PCI ids and uplink's speed and
 * width, with a <gpu> holding one <nvlink> per target (a GPU or CPU of this host, or an
 * NVSwitch plane; counts summed, in link order) and a <c2c> for links to a Grace CPU.  NVLinks to
 * another host's GPUs are left out.  Never fails. */
static void write_gpu(Exp *x, guint node, guint depth)
{
  const FsTopoNode *n = fs_topo_node(x->t, node);
  g_autofree char *id = busid(x, node);
  guint vendor = 0x10de, dev;
  gboolean has_dev = first_pci_id(n->model, &vendor, &dev);
  indent(x->out, depth);
  g_string_append_printf(x->out, "<pci busid=\"%s\" class=\"0x030200\" vendor=\"0x%04x\"", id,
                         vendor);
  if (has_dev)
    g_string_append_printf(x->out, " device=\"0x%04x\"", dev);
  const FsModel *up = x->uplink[node] >= 0 ? fs_topo_link(x->t, (guint)x->uplink[node])->model
                                           : NULL;
  link_attrs(x->out, up);
  g_string_append(x->out, ">\n");
  indent(x->out, depth + 1);
  g_string_append_printf(x->out, "<gpu dev=\"%d\" sm=\"%ld\" rank=\"%d\" gdr=\"1\">\n", n->local,
                         (long)n->model->u.gpu.compute_capability, n->local);
  /* NVLinks by target, in link order; C2C to the CPU. */
  g_autoptr(GArray) nv = g_array_new(FALSE, TRUE, sizeof(NvTarget));
  guint c2c = 0;
  double c2c_bw = 0;
  guint na;
  const FsTopoAdj *adj = fs_topo_adj(x->t, node, &na);
  for (guint e = 0; e < na; e++) {
    const FsTopoLink *l = fs_topo_link(x->t, adj[e].link);
    const FsTopoNode *p = fs_topo_node(x->t, adj[e].peer);
    if (l->model->u.link.family == FS_LINK_C2C && p->kind == FS_NODE_CPU) {
      c2c += l->count;
      c2c_bw = l->model->u.link.bandwidth;
      continue;
    }
    if (l->model->u.link.family != FS_LINK_NVLINK)
      continue;
    const char *tclass;
    if (p->kind == FS_NODE_GPU && in_host(x, adj[e].peer))
      tclass = "0x030200";
    else if (p->kind == FS_NODE_SWITCH && p->model->u.sw.kind == FS_SWITCH_NVSWITCH)
      tclass = "0x068000";
    else if (p->kind == FS_NODE_CPU && in_host(x, adj[e].peer))
      tclass = "0x068001";
    else
      continue;   /* an NVLink to another host's GPU: not one node's */
    g_autofree char *target = busid(x, p->kind == FS_NODE_SWITCH ? plane_of(x, adj[e].peer)
                                                                 : adj[e].peer);
    guint k = 0;
    while (k < nv->len && strcmp(g_array_index(nv, NvTarget, k).target, target) != 0)
      k++;
    if (k == nv->len) {
      NvTarget t = {g_strdup(target), tclass, 0};
      g_array_append_val(nv, t);
    }
    g_array_index(nv, NvTarget, k).count += l->count;
  }
  for (guint k = 0; k < nv->len; k++) {
    NvTarget *t = &g_array_index(nv, NvTarget, k);
    indent(x->out, depth + 2);
    g_string_append_printf(x->out, "<nvlink target=\"%s\" count=\"%u\" tclass=\"%s\"/>\n",
                           t->target, t->count, t->tclass);
    g_free(t->target);
  }
  if (c2c > 0) {
    indent(x->out, depth + 2);
    /* NCCL's bw is per link, in MB/s (ncclTopoAddC2c: bw * count / 1000 GB/s). */
    g_string_append_printf(x->out, "<c2c bw=\"%.0f\" count=\"%u\"/>\n", c2c_bw / 1e6, c2c);
  }
  indent(x->out, depth + 1);
  g_string_append(x->out, "</gpu>\n");
  indent(x->out, depth);
  g_string_append(x->out, "</pci>\n");
}

static void write_nic(Exp *x, guint node, guint depth, guint *net_dev)
{
  const FsTopoNode *n = fs_topo_node(x->t, node);
  const FsModel *port = n->model->u.nic.port_link;
  gboolean ib = port != NULL && port->u.link.family == FS_LINK_INFINIBAND;
  g_autofree char *id = busid(x, node);
  guint vendor, dev;
  indent(x->out, depth);
  g_string_append_printf(x->out, "<pci busid=\"%s\" class=\"%s\"", id, ib ? "0x020700" : "0x020000");
  if (first_pci_id(n->model, &vendor, &dev))
    g_string_append_printf(x->out, " vendor=\"0x%04x\" device=\"0x%04x\"", vendor, dev);
  const FsModel *up = x->uplink[node] >= 0 ? fs_topo_link(x->t, (guint)x->uplink[node])->model
                                           : NULL;
  link_attrs(x->out, up);
  g_string_append(x->out, ">\n");
  indent(x->out, depth + 1);
  g_string_append(x->out, "<nic>\n");
  /* The port's data rate in Mb/s, as NCCL's speed (the ibv port rate:
   * NDR 400000). */
  double mbps = port != NULL ? port->u.link.raw_bandwidth * 8 / 1e6 : 0;
  for (guint p = 0; p < MAX(n->model->u.nic.ports, 1u); p++) {
    indent(x->out, depth + 2);
    g_string_append_printf(x->out, "<net name=\"%s_%u\" dev=\"%u\" speed=\"%.0f\" port=\"%u\" "
                           "latency=\"0.000000\" guid=\"0x%x\" maxconn=\"131072\" gdr=\"%d\"/>\n",
                           ib ? "mlx5" : "eth", *net_dev, *net_dev, mbps, p + 1,
                           0x1000u + *net_dev, n->model->u.nic.gpudirect ? 1 : 0);
    (*net_dev)++;
  }
  indent(x->out, depth + 1);
  g_string_append(x->out, "</nic>\n");
  indent(x->out, depth);
  g_string_append(x->out, "</pci>\n");
}

static void write_children(Exp *x, guint node, guint depth, guint *net_dev)
{
  for (guint i = 0; i < x->order->len; i++) {
    guint c = g_array_index(x->order, guint, i);
    if (x->parent[c] != (int)node)
      continue;
    const FsTopoNode *n = fs_topo_node(x->t, c);
    if (n->kind == FS_NODE_GPU) {
      write_gpu(x, c, depth);
    } else if (n->kind == FS_NODE_NIC) {
      write_nic(x, c, depth, net_dev);
    } else {
      g_autofree char *id = busid(x, c);
      indent(x->out, depth);
      g_string_append_printf(x->out, "<pci busid=\"%s\" class=\"0x060400\"", id);
      link_attrs(x->out, fs_topo_link(x->t, (guint)x->uplink[c])->model);
      g_string_append(x->out, ">\n");
      write_children(x, c, depth + 1, net_dev);
      indent(x->out, depth);
      g_string_append(x->out, "</pci>\n");
    }
  }
}

static void cpu_attrs(GString *out, const FsModel *m)
{
  char vendor[32];
  long fam, mod;
  switch (m->u.cpu.vendor) {
  case FS_VENDOR_IBM:
    g_string_append(out, " arch=\"ppc64\" vendor=\"IBM\"");
    return;
  case FS_VENDOR_NVIDIA:
    g_string_append(out, " arch=\"arm64\" vendor=\"NVIDIA\"");
    return;
  default:
    break;
  }
  /* NCCL's familyid is family + extended family << 4 (AMD family 23:
   * 143); /proc/cpuinfo's family, which `cpuid` holds, is family +
   * extended family.  modelid is the full model either way. */
  if (m->ids.cpuid != NULL && sscanf(m->ids.cpuid, "%31s %ld %ld", vendor, &fam, &mod) == 3) {
    if (fam > 0xf)
      fam = 0xf + ((fam - 0xf) << 4);
    g_string_append_printf(out, " arch=\"x86_64\" vendor=\"%s\" familyid=\"%ld\" modelid=\"%ld\"",
                           vendor, fam, mod);
  } else {
    g_string_append_printf(out, " arch=\"x86_64\" vendor=\"%s\"",
                           m->u.cpu.vendor == FS_VENDOR_AMD ? "AuthenticAMD" : "GenuineIntel");
  }
}

/* See import.h.  Also: the PCIe tree is found breadth-first from the host's CPUs in node order,
 * and a GPU that only an NVLink joins to its CPU (POWER9) hangs from that CPU. */
char *fs_export_nccl(const FsTopo *t, guint host, GError **error)
{
  g_return_val_if_fail(t != NULL, NULL);
  if (host >= fs_topo_n_hosts(t)) {
    g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID,
                "--host %u: %s has %u host%s (0 to %u)", host, fs_topo_name(t),
                fs_topo_n_hosts(t), fs_topo_n_hosts(t) == 1 ? "" : "s",
                fs_topo_n_hosts(t) ? fs_topo_n_hosts(t) - 1 : 0);
    return NULL;
  }
  guint nn, ng;
  const guint *nodes = fs_topo_host_nodes(t, host, &nn);
  fs_topo_host_gpus(t, host, &ng);
  const char *hname = fs_topo_host_name(t, host);
  if (ng == 0) {
    g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, "host %s has no GPU to export",
                hname);
    return NULL;
  }
  Exp x = {.t = t, .host = (int)host, .n = fs_topo_n_nodes(t)};
  x.parent = g_new(int, x.n);
  x.uplink = g_new(int, x.n);
  x.bus = g_new0(guint, x.n);
  x.plane = g_new(int, x.n);
  x.order = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < x.n; i++)
    x.parent[i] = x.uplink[i] = x.plane[i] = -1;
  /* Breadth-first from the CPUs, in node order. */
  g_autoptr(GArray) queue = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autofree gboolean *seen = g_new0(gboolean, x.n);
  for (guint i = 0; i < nn; i++)
    if (fs_topo_node(t, nodes[i])->kind == FS_NODE_CPU) {
      g_array_append_val(queue, nodes[i]);
      seen[nodes[i]] = TRUE;
    }
  char *result = NULL;
  if (queue->len == 0) {
    g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID,
                "host %s has no CPU: NCCL's XML hangs every device from a <cpu>", hname);
    goto out;
  }
  for (guint qi = 0; qi < queue->len; qi++) {
    guint a = g_array_index(queue, guint, qi), na;
    const FsTopoNode *an = fs_topo_node(t, a);
    const FsTopoAdj *adj = fs_topo_adj(t, a, &na);
    for (guint e = 0; e < na; e++) {
      guint b = adj[e].peer;
      const FsTopoNode *bn = fs_topo_node(t, b);
      FsLinkFamily fam = fs_topo_link(t, adj[e].link)->model->u.link.family;
      if (seen[b] || !in_host(&x, b))
        continue;
      gboolean pcie = fam == FS_LINK_PCIE &&
                      (bn->kind == FS_NODE_GPU || bn->kind == FS_NODE_NIC || is_pcie_switch(bn));
      gboolean c2c = fam == FS_LINK_C2C && an->kind == FS_NODE_CPU && bn->kind == FS_NODE_GPU;
      if (!pcie && !c2c)
        continue;
      seen[b] = TRUE;
      x.parent[b] = (int)a;
      x.uplink[b] = (int)adj[e].link;
      g_array_append_val(x.order, b);
      if (is_pcie_switch(bn))
        g_array_append_val(queue, b);
    }
  }
  /* A GPU that only an NVLink joins to its CPU (POWER9) hangs from that
   * CPU without a PCIe link; any other GPU must have been reached. */
  for (guint i = 0; i < nn; i++) {
    guint a = nodes[i], na;
    const FsTopoNode *an = fs_topo_node(t, a);
    if (an->kind != FS_NODE_GPU || seen[a])
      continue;
    const FsTopoAdj *adj = fs_topo_adj(t, a, &na);
    for (guint e = 0; e < na && !seen[a]; e++)
      if (fs_topo_node(t, adj[e].peer)->kind == FS_NODE_CPU && in_host(&x, adj[e].peer)) {
        seen[a] = TRUE;
        x.parent[a] = (int)adj[e].peer;
        g_array_append_val(x.order, a);
      }
    if (!seen[a]) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, an->file, an->line, an->col,
                      "%s has no PCIe path to a CPU of its host: NCCL's XML cannot place it",
                      an->name);
      goto out;
    }
  }
  x.out = g_string_new("<system version=\"1\">\n");
  guint net_dev = 0;
  for (guint i = 0; i < nn; i++) {
    const FsTopoNode *c = fs_topo_node(t, nodes[i]);
    if (c->kind != FS_NODE_CPU)
      continue;
    g_string_append_printf(x.out, "  <cpu numaid=\"%d\"", MAX(c->socket, 0));
    cpu_attrs(x.out, c->model);
    g_string_append(x.out, ">\n");
    write_children(&x, nodes[i], 2, &net_dev);
    g_string_append(x.out, "  </cpu>\n");
  }
  g_string_append(x.out, "</system>\n");
  result = g_string_free(x.out, FALSE);
out:
  g_free(x.parent);
  g_free(x.uplink);
  g_free(x.bus);
  g_free(x.plane);
  g_array_free(x.order, TRUE);
  return result;
}
