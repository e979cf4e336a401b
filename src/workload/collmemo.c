/* collmemo.c — the memo of collective times measured alone (see
 * collmemo.h). */
#include "workload/collmemo.h"

#include <string.h>

typedef struct {
  const FsTopo *topo;
  const FsNcclParams *nccl;
  FsNetModel model;
  FsCollOp op;
  uint64_t unit;
  guint n;
  guint *nodes;              /* NULL for a class entry */
  guint8 digest[FS_COLL_CLASS_DIGEST];
  guint hash;
  FsTime time;
  gboolean pending;          /* claimed: a thread is measuring it */
} Entry;

struct FsCollMemo {
  GMutex lock;
  GCond done;         /* a pending entry was stored or released */
  GHashTable *table;  /* Entry* → Entry* (a set; lookups only) */
  GHashTable *groups; /* group Entry* (op, unit 0; mode in op) → FsCollMemoClass* */
  guint64 hits;
  guint64 class_hits;
  guint class_entries;
};

static guint key_hash(const FsCollMemoKey *k)
{
  guint h = g_direct_hash(k->topo) * 31u + g_direct_hash(k->nccl);
  h = h * 31u + (guint)k->model;
  h = h * 31u + (guint)k->op;
  h = h * 31u + (guint)(k->unit ^ (k->unit >> 32));
  h = h * 31u + k->n;
  if (k->class_digest != NULL) {
    for (guint i = 0; i < FS_COLL_CLASS_DIGEST; i++)
      h = h * 31u + k->class_digest[i];
    return h ^ 0x5bd1e995u;
  }
  for (guint i = 0; i < k->n; i++)
    h = h * 1000003u + k->nodes[i];
  return h;
}

static guint entry_hash(gconstpointer p)
{
  return ((const Entry *)p)->hash;
}

static gboolean entry_equal(gconstpointer pa, gconstpointer pb)
{
  const Entry *a = pa, *b = pb;
  return a->hash == b->hash && a->topo == b->topo && a->nccl == b->nccl && a->model == b->model &&
         a->op == b->op && a->unit == b->unit && a->n == b->n &&
         (a->nodes == NULL) == (b->nodes == NULL) &&
         (a->nodes == NULL ? memcmp(a->digest, b->digest, FS_COLL_CLASS_DIGEST) == 0
                           : memcmp(a->nodes, b->nodes, a->n * sizeof(guint)) == 0);
}

static void entry_free(gpointer p)
{
  Entry *e = p;
  g_free(e->nodes);
  g_free(e);
}

FsCollMemo *fs_coll_memo_new(void)
{
  FsCollMemo *m = g_new0(FsCollMemo, 1);
  g_mutex_init(&m->lock);
  g_cond_init(&m->done);
  m->table = g_hash_table_new_full(entry_hash, entry_equal, entry_free, NULL);
  m->groups = g_hash_table_new_full(entry_hash, entry_equal, entry_free, g_free);
  return m;
}

void fs_coll_memo_free(FsCollMemo *m)
{
  if (m == NULL)
    return;
  g_hash_table_unref(m->table);
  g_hash_table_unref(m->groups);
  g_cond_clear(&m->done);
  g_mutex_clear(&m->lock);
  g_free(m);
}

/* A probe entry that borrows the key's node list. */
static Entry probe(const FsCollMemoKey *k)
{
  Entry e = { k->topo, k->nccl, k->model, k->op, k->unit, k->n,
              k->class_digest != NULL ? NULL : (guint *)k->nodes, { 0 }, key_hash(k), 0, FALSE };
  if (k->class_digest != NULL)
    memcpy(e.digest, k->class_digest, FS_COLL_CLASS_DIGEST);
  return e;
}

/* A hit under the lock: counts it. */
static void count_hit(FsCollMemo *m, const FsCollMemoKey *key)
{
  m->hits++;
  if (key->class_digest != NULL)
    m->class_hits++;
}

gboolean fs_coll_memo_lookup(FsCollMemo *m, const FsCollMemoKey *key, FsTime *out)
{
  Entry p = probe(key);
  g_mutex_lock(&m->lock);
  const Entry *e = g_hash_table_lookup(m->table, &p);
  gboolean hit = e != NULL && !e->pending;
  if (hit) {
    *out = e->time;
    count_hit(m, key);
  }
  g_mutex_unlock(&m->lock);
  return hit;
}

/* A new entry for key (copies the node list). */
static Entry *entry_new(FsCollMemo *m, const FsCollMemoKey *key, const Entry *p)
{
  Entry *e = g_new(Entry, 1);
  *e = *p;
  if (key->class_digest == NULL)
    e->nodes = g_memdup2(key->nodes, key->n * sizeof(guint));
  else
    m->class_entries++;
  return e;
}

gboolean fs_coll_memo_claim(FsCollMemo *m, const FsCollMemoKey *key, FsTime *out)
{
  Entry p = probe(key);
  g_mutex_lock(&m->lock);
  for (;;) {
    const Entry *e = g_hash_table_lookup(m->table, &p);
    if (e == NULL) {
      Entry *n = entry_new(m, key, &p);
      n->pending = TRUE;
      g_hash_table_add(m->table, n);
      g_mutex_unlock(&m->lock);
      return FALSE;
    }
    if (!e->pending) {
      *out = e->time;
      count_hit(m, key);
      g_mutex_unlock(&m->lock);
      return TRUE;
    }
    g_cond_wait(&m->done, &m->lock);
  }
}

void fs_coll_memo_release(FsCollMemo *m, const FsCollMemoKey *key)
{
  Entry p = probe(key);
  g_mutex_lock(&m->lock);
  Entry *e = g_hash_table_lookup(m->table, &p);
  if (e != NULL && e->pending) {
    if (e->nodes == NULL)
      m->class_entries--;
    g_hash_table_remove(m->table, e);
    g_cond_broadcast(&m->done);
  }
  g_mutex_unlock(&m->lock);
}

void fs_coll_memo_store(FsCollMemo *m, const FsCollMemoKey *key, FsTime t)
{
  Entry p = probe(key);
  g_mutex_lock(&m->lock);
  Entry *e = g_hash_table_lookup(m->table, &p);
  if (e == NULL) {
    e = entry_new(m, key, &p);
    e->time = t;
    g_hash_table_add(m->table, e);
  } else if (e->pending) {
    e->time = t;
    e->pending = FALSE;
    g_cond_broadcast(&m->done);
  }
  g_mutex_unlock(&m->lock);
}

void fs_coll_memo_stats(FsCollMemo *m, guint64 *hits, guint *entries)
{
  g_mutex_lock(&m->lock);
  if (hits != NULL)
    *hits = m->hits;
  if (entries != NULL)
    *entries = g_hash_table_size(m->table);
  g_mutex_unlock(&m->lock);
}

void fs_coll_memo_class_stats(FsCollMemo *m, guint64 *hits, guint *entries)
{
  g_mutex_lock(&m->lock);
  if (hits != NULL)
    *hits = m->class_hits;
  if (entries != NULL)
    *entries = m->class_entries;
  g_mutex_unlock(&m->lock);
}

/* The probe of a group's class: its exact key with the mode for the
 * operation and no size. */
static Entry group_probe(const FsCollMemoKey *key, FsCollClassMode mode)
{
  FsCollMemoKey g = *key;
  g.op = (FsCollOp)mode;
  g.unit = 0;
  g.class_digest = NULL;
  return probe(&g);
}

gboolean fs_coll_memo_get_class(FsCollMemo *m, const FsCollMemoKey *key, FsCollClassMode mode,
                                FsCollMemoClass *out)
{
  Entry p = group_probe(key, mode);
  g_mutex_lock(&m->lock);
  gpointer k = NULL, v = NULL;
  gboolean hit = g_hash_table_lookup_extended(m->groups, &p, &k, &v) && !((Entry *)k)->pending;
  if (hit)
    *out = *(const FsCollMemoClass *)v;
  g_mutex_unlock(&m->lock);
  return hit;
}

/* A new group entry for key (copies the node list): pending (c NULL, a
 * zeroed value to fill in) or holding c. */
static void group_add(FsCollMemo *m, const FsCollMemoKey *key, const Entry *p,
                      const FsCollMemoClass *c)
{
  Entry *e = g_new(Entry, 1);
  *e = *p;
  e->nodes = g_memdup2(key->nodes, key->n * sizeof(guint));
  e->pending = c == NULL;
  FsCollMemoClass *v = g_new0(FsCollMemoClass, 1);
  if (c != NULL)
    *v = *c;
  g_hash_table_insert(m->groups, e, v);
}

gboolean fs_coll_memo_claim_class(FsCollMemo *m, const FsCollMemoKey *key, FsCollClassMode mode,
                                  FsCollMemoClass *out)
{
  Entry p = group_probe(key, mode);
  g_mutex_lock(&m->lock);
  for (;;) {
    gpointer k = NULL, v = NULL;
    if (!g_hash_table_lookup_extended(m->groups, &p, &k, &v)) {
      group_add(m, key, &p, NULL);
      g_mutex_unlock(&m->lock);
      return FALSE;
    }
    if (!((Entry *)k)->pending) {
      *out = *(const FsCollMemoClass *)v;
      g_mutex_unlock(&m->lock);
      return TRUE;
    }
    g_cond_wait(&m->done, &m->lock);
  }
}

void fs_coll_memo_release_class(FsCollMemo *m, const FsCollMemoKey *key, FsCollClassMode mode)
{
  Entry p = group_probe(key, mode);
  g_mutex_lock(&m->lock);
  gpointer k = NULL, v = NULL;
  if (g_hash_table_lookup_extended(m->groups, &p, &k, &v) && ((Entry *)k)->pending) {
    g_hash_table_remove(m->groups, k);
    g_cond_broadcast(&m->done);
  }
  g_mutex_unlock(&m->lock);
}

void fs_coll_memo_put_class(FsCollMemo *m, const FsCollMemoKey *key, FsCollClassMode mode,
                            const FsCollMemoClass *c)
{
  Entry p = group_probe(key, mode);
  g_mutex_lock(&m->lock);
  gpointer k = NULL, v = NULL;
  if (!g_hash_table_lookup_extended(m->groups, &p, &k, &v)) {
    group_add(m, key, &p, c);
  } else if (((Entry *)k)->pending) {
    /* The claim ends: the entry's value is filled in place. */
    ((Entry *)k)->pending = FALSE;
    *(FsCollMemoClass *)v = *c;
    g_cond_broadcast(&m->done);
  }
  g_mutex_unlock(&m->lock);
}
