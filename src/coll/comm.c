/* comm.c — communicators: ranks, hosts, GPU bindings, ring orders.  See
 * comm.h.  Derived host tables are rebuilt lazily after a host changes. */
#include "coll/comm.h"

#include <string.h>

#include "util/limits.h"

G_DEFINE_QUARK(fs-coll-error-quark, fs_coll_error)

struct FsComm {
  guint n;
  guint *host;       /* host id per rank (caller's numbering) */
  int *gpu;          /* topology node per rank, -1 unbound */
  GPtrArray *rings;  /* guint[n] per ring */
  guint *default_ring;
  /* Derived host tables (valid when !dirty). */
  gboolean dirty;
  guint n_hosts;
  guint *host_index;  /* per rank */
  guint *local_rank;  /* per rank */
  guint *host_start;  /* n_hosts + 1 offsets into host_members */
  guint *host_members;
  guint ppn;
  /* NVLS switches per host index, CollNet switch. */
  GPtrArray *nvls;    /* GArray of int per host index (NULL: none) */
  GArray *collnet;    /* int per shard (mod length) */
  /* Two-level CollNet tree (cn_groups > 1). */
  guint cn_groups, cn_shards;
  guint *cn_host_group;  /* per host index */
  guint cn_n_hosts;
  int *cn_leaves;        /* cn_groups × cn_shards */
  /* Ring graph found on the topology (0: none). */
  double ring_bw;
  guint host_rings;
  gboolean whole_hosts; /* every host's GPUs are all ranks (fs_comm_set_whole_hosts) */
};

guint fs_comm_max_ranks(void)
{
  static gsize once;
  static guint limit;
  if (g_once_init_enter(&once)) {
    limit = (guint)fs_env_limit("FABRICSIM_MAX_RANKS", FS_COMM_MAX_RANKS, (guint64)1 << 24);
    g_once_init_leave(&once, 1);
  }
  return limit;
}

FsComm *fs_comm_new(guint nranks)
{
  g_return_val_if_fail(nranks >= 1 && nranks <= fs_comm_max_ranks(), NULL);
  FsComm *c = g_new0(FsComm, 1);
  c->n = nranks;
  c->host = g_new0(guint, nranks);
  c->gpu = g_new(int, nranks);
  for (guint r = 0; r < nranks; r++)
    c->gpu[r] = -1;
  c->rings = g_ptr_array_new_with_free_func(g_free);
  c->default_ring = g_new(guint, nranks);
  c->host_index = g_new0(guint, nranks);
  c->local_rank = g_new0(guint, nranks);
  c->host_start = g_new0(guint, nranks + 1);
  c->host_members = g_new0(guint, nranks);
  c->nvls = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  c->collnet = g_array_new(FALSE, FALSE, sizeof(int));
  c->dirty = TRUE;
  return c;
}

FsComm *fs_comm_new_grid(guint hosts, guint ppn)
{
  g_return_val_if_fail(hosts >= 1 && ppn >= 1 && (guint64)hosts * ppn <= fs_comm_max_ranks(), NULL);
  FsComm *c = fs_comm_new(hosts * ppn);
  for (guint r = 0; r < hosts * ppn; r++)
    c->host[r] = r / ppn;
  return c;
}

void fs_comm_free(FsComm *c)
{
  if (c == NULL)
    return;
  g_free(c->host);
  g_free(c->gpu);
  g_ptr_array_unref(c->rings);
  g_free(c->default_ring);
  g_free(c->host_index);
  g_free(c->local_rank);
  g_free(c->host_start);
  g_free(c->host_members);
  g_ptr_array_unref(c->nvls);
  g_array_unref(c->collnet);
  g_free(c->cn_host_group);
  g_free(c->cn_leaves);
  g_free(c);
}

guint fs_comm_size(const FsComm *c)
{
  return c->n;
}

/* Rebuilds host index, members and the default ring.  O(n log n). */
static void refresh(FsComm *c)
{
  if (!c->dirty)
    return;
  /* Host indices by first appearance in rank order. */
  GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  guint nh = 0;
  for (guint r = 0; r < c->n; r++) {
    gpointer v;
    if (g_hash_table_lookup_extended(seen, GUINT_TO_POINTER(c->host[r] + 1), NULL, &v)) {
      c->host_index[r] = GPOINTER_TO_UINT(v);
    } else {
      c->host_index[r] = nh;
      g_hash_table_insert(seen, GUINT_TO_POINTER(c->host[r] + 1), GUINT_TO_POINTER(nh));
      nh++;
    }
  }
  g_hash_table_destroy(seen);
  c->n_hosts = nh;
  memset(c->host_start, 0, sizeof(guint) * (c->n + 1));
  for (guint r = 0; r < c->n; r++)
    c->host_start[c->host_index[r] + 1]++;
  for (guint h = 0; h < nh; h++)
    c->host_start[h + 1] += c->host_start[h];
  guint *fill = g_new0(guint, nh);
  c->ppn = 0;
  for (guint r = 0; r < c->n; r++) {
    guint h = c->host_index[r];
    c->local_rank[r] = fill[h];
    c->host_members[c->host_start[h] + fill[h]++] = r;
    c->ppn = MAX(c->ppn, fill[h]);
  }
  g_free(fill);
  /* Default ring: host by host, rank order within a host. */
  memcpy(c->default_ring, c->host_members, sizeof(guint) * c->n);
  c->dirty = FALSE;
}

void fs_comm_set_host(FsComm *c, guint rank, guint host)
{
  g_return_if_fail(rank < c->n);
  c->host[rank] = host;
  c->dirty = TRUE;
}

guint fs_comm_host(const FsComm *c, guint rank)
{
  g_return_val_if_fail(rank < c->n, 0);
  return c->host[rank];
}

guint fs_comm_n_hosts(const FsComm *c)
{
  refresh((FsComm *)c);
  return c->n_hosts;
}

guint fs_comm_host_index(const FsComm *c, guint rank)
{
  g_return_val_if_fail(rank < c->n, 0);
  refresh((FsComm *)c);
  return c->host_index[rank];
}

const guint *fs_comm_host_ranks(const FsComm *c, guint h, guint *n)
{
  refresh((FsComm *)c);
  g_return_val_if_fail(h < c->n_hosts, NULL);
  *n = c->host_start[h + 1] - c->host_start[h];
  return c->host_members + c->host_start[h];
}

gboolean fs_comm_hosts_uniform(const FsComm *c)
{
  refresh((FsComm *)c);
  for (guint h = 1; h < c->n_hosts; h++)
    if (c->host_start[h + 1] - c->host_start[h] != c->host_start[1] - c->host_start[0])
      return FALSE;
  return TRUE;
}

guint fs_comm_local_rank(const FsComm *c, guint rank)
{
  g_return_val_if_fail(rank < c->n, 0);
  refresh((FsComm *)c);
  return c->local_rank[rank];
}

guint fs_comm_ppn(const FsComm *c)
{
  refresh((FsComm *)c);
  return c->ppn;
}

void fs_comm_set_whole_hosts(FsComm *c, gboolean whole)
{
  c->whole_hosts = whole;
}

gboolean fs_comm_whole_hosts(const FsComm *c)
{
  return c->whole_hosts;
}

void fs_comm_set_gpu(FsComm *c, guint rank, int node)
{
  g_return_if_fail(rank < c->n);
  c->gpu[rank] = node;
}

int fs_comm_gpu(const FsComm *c, guint rank)
{
  g_return_val_if_fail(rank < c->n, -1);
  return c->gpu[rank];
}

void fs_comm_set_nvls_switch(FsComm *c, guint h, const int *nodes, guint n)
{
  g_return_if_fail(h < c->n && (n == 0 || nodes != NULL));
  while (c->nvls->len <= h)
    g_ptr_array_add(c->nvls, g_array_new(FALSE, FALSE, sizeof(int)));
  GArray *a = g_ptr_array_index(c->nvls, h);
  g_array_set_size(a, 0);
  g_array_append_vals(a, nodes, n);
}

int fs_comm_nvls_switch(const FsComm *c, guint h, guint channel)
{
  if (h >= c->nvls->len)
    return -1;
  GArray *a = g_ptr_array_index(c->nvls, h);
  if (a->len == 0)
    return -1;
  return g_array_index(a, int, channel % a->len);
}

gboolean fs_comm_has_nvls(const FsComm *c)
{
  guint nh = fs_comm_n_hosts(c);
  for (guint h = 0; h < nh; h++)
    if (fs_comm_nvls_switch(c, h, 0) < 0)
      return FALSE;
  return TRUE;
}

guint fs_comm_n_nvlink_domains(const FsComm *c)
{
  guint nh = fs_comm_n_hosts(c), n = 0;
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint h = 0; h < nh; h++) {
    int sw = fs_comm_nvls_switch(c, h, 0);
    if (sw < 0 || g_hash_table_add(seen, GINT_TO_POINTER(sw + 1)))
      n++;
  }
  return n;
}

gboolean fs_comm_nvls_available(const FsComm *c)
{
  if (!fs_comm_has_nvls(c))
    return FALSE;
  guint nh = fs_comm_n_hosts(c);
  for (guint h = 0; h < nh; h++) {
    int sw = fs_comm_nvls_switch(c, h, 0);
    guint clique = 0;
    for (guint k = 0; k < nh; k++)
      if (fs_comm_nvls_switch(c, k, 0) == sw) {
        guint L = 0;
        fs_comm_host_ranks(c, k, &L);
        clique += L;
      }
    /* NVIDIA/nccl src/transport/nvls.cc ncclNvlsInit (178b6b75): `if (... (!comm->MNNVL &&
     * gpuCount <= 2) || (comm->MNNVL && comm->clique.size <= 2)) return` (no NVLS). */
    if (clique <= 2)
      return FALSE;
  }
  return TRUE;
}

void fs_comm_set_collnet_switches(FsComm *c, const int *nodes, guint n)
{
  g_return_if_fail(n == 0 || nodes != NULL);
  g_array_set_size(c->collnet, 0);
  g_array_append_vals(c->collnet, nodes, n);
}

int fs_comm_collnet_switch(const FsComm *c, guint j)
{
  if (c->collnet->len == 0)
    return -1;
  if (j & FS_COMM_COLLNET_LEAF) {
    guint k = j & ~FS_COMM_COLLNET_LEAF;
    return c->cn_groups > 1 && k < c->cn_groups * c->cn_shards ? c->cn_leaves[k] : -1;
  }
  return g_array_index(c->collnet, int, j % c->collnet->len);
}

void fs_comm_set_collnet_groups(FsComm *c, guint ngroups, guint shards, const guint *host_group,
                                const int *leaves)
{
  g_clear_pointer(&c->cn_host_group, g_free);
  g_clear_pointer(&c->cn_leaves, g_free);
  c->cn_groups = 0;
  if (ngroups <= 1)
    return;
  g_return_if_fail(shards >= 1 && host_group != NULL && leaves != NULL);
  guint nh = fs_comm_n_hosts(c);
  for (guint h = 0; h < nh; h++)
    g_return_if_fail(host_group[h] < ngroups);
  c->cn_groups = ngroups;
  c->cn_shards = shards;
  c->cn_n_hosts = nh;
  c->cn_host_group = g_memdup2(host_group, sizeof(guint) * nh);
  c->cn_leaves = g_memdup2(leaves, sizeof(int) * ngroups * shards);
}

guint fs_comm_collnet_n_groups(const FsComm *c)
{
  return c->cn_groups > 1 ? c->cn_groups : 1;
}

guint fs_comm_collnet_group(const FsComm *c, guint h)
{
  return c->cn_groups > 1 && h < c->cn_n_hosts ? c->cn_host_group[h] : 0;
}

guint fs_comm_collnet_leaf(const FsComm *c, guint g, guint j)
{
  g_return_val_if_fail(c->cn_groups > 1 && g < c->cn_groups, 0);
  return FS_COMM_COLLNET_LEAF | (g * c->cn_shards + j % c->cn_shards);
}

gboolean fs_comm_set_ring(FsComm *c, guint ring, const guint *order, GError **error)
{
  g_return_val_if_fail(order != NULL, FALSE);
  if (ring > c->rings->len) {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID,
                "ring %u set before ring %u; rings are set in order", ring, c->rings->len);
    return FALSE;
  }
  g_autofree gboolean *seen = g_new0(gboolean, c->n);
  for (guint i = 0; i < c->n; i++) {
    if (order[i] >= c->n || seen[order[i]]) {
      g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID,
                  "ring %u is not a permutation of ranks 0..%u: rank %u at position %u is %s",
                  ring, c->n - 1, order[i], i, order[i] >= c->n ? "out of range" : "repeated");
      return FALSE;
    }
    seen[order[i]] = TRUE;
  }
  guint *copy = g_memdup2(order, sizeof(guint) * c->n);
  if (ring == c->rings->len)
    g_ptr_array_add(c->rings, copy);
  else {
    g_free(g_ptr_array_index(c->rings, ring));
    g_ptr_array_index(c->rings, ring) = copy;
  }
  return TRUE;
}

guint fs_comm_n_rings(const FsComm *c)
{
  return c->rings->len;
}

const guint *fs_comm_ring(const FsComm *c, guint channel)
{
  if (c->rings->len > 0)
    return g_ptr_array_index(c->rings, channel % c->rings->len);
  refresh((FsComm *)c);
  return c->default_ring;
}

guint fs_comm_rotate_rank(const FsComm *c, guint rank, guint s)
{
  guint h = fs_comm_host_index(c, rank), L;
  const guint *ranks = fs_comm_host_ranks(c, h, &L);
  return ranks[(fs_comm_local_rank(c, rank) + s) % L];
}

/* TRUE when ring b is ring a rotated by s (fs_comm_rotate_rank) position
 * for position. */
static gboolean ring_rotates(const FsComm *c, const guint *a, const guint *b, guint s)
{
  for (guint i = 0; i < c->n; i++)
    if (fs_comm_rotate_rank(c, a[i], s) != b[i])
      return FALSE;
  return TRUE;
}

guint fs_comm_ring_rotation(const FsComm *c, guint multiple, guint *order)
{
  *order = 0;
  guint nr = c->rings->len, L = fs_comm_uniform_ranks_per_host(c);
  if (nr < 2 || L < 2 || multiple == 0 || fs_comm_n_hosts(c) < 2)
    return 0;
  for (guint s = multiple; s < L; s += multiple) {
    gboolean ok = TRUE;
    for (guint i = 0; i < nr && ok; i++)
      ok = ring_rotates(c, g_ptr_array_index(c->rings, i), g_ptr_array_index(c->rings, (i + s) % nr),
                        s);
    if (ok) {
      guint a = s, b = L;
      while (b != 0) {
        guint t = a % b;
        a = b, b = t;
      }
      *order = L / a;
      return s;
    }
  }
  return 0;
}

void fs_comm_set_ring_graph(FsComm *c, double bw, guint host_rings)
{
  g_return_if_fail(bw >= 0);
  c->ring_bw = bw;
  c->host_rings = host_rings;
}

double fs_comm_ring_bw(const FsComm *c)
{
  return c->ring_bw;
}

guint fs_comm_host_rings(const FsComm *c)
{
  return c->host_rings;
}

guint fs_comm_uniform_ranks_per_host(const FsComm *comm)
{
  guint n = fs_comm_size(comm), h = fs_comm_n_hosts(comm);
  if (h < 2 || n % h != 0)
    return 1;
  g_autofree guint *per = g_new0(guint, h);
  for (guint r = 0; r < n; r++)
    per[fs_comm_host_index(comm, r)]++;
  for (guint i = 0; i < h; i++)
    if (per[i] != n / h)
      return 1;
  return n / h;
}
