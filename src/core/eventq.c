/* eventq.c — the event queue: a 4-ary min-heap of same-time runs over an
 * event pool.  See eventq.h for the contract.
 *
 * Runs.  Simulations schedule many events at the same time (flows of equal
 * size drain together, their deliveries follow after the same latency): in
 * NCCL sweeps on 128 nodes about 60 events share each pending time.  The
 * heap therefore holds runs, not events: a run is a list of pending events
 * at one time in increasing sequence number, linked through the pool, and
 * the heap holds one key per run, its first event's.  Popping an event
 * whose run has a successor replaces the root key by the successor's
 * instead of sifting the last entry down the whole heap.  (The successor
 * is then still the smallest key: of two runs at one time, the newer is
 * begun only when the older can no longer be appended to, so all of the
 * older's events come first.  sift_down_near does not rely on it: it
 * compares one group of children and stops.)  A push appends to a run of
 * its time when one is at hand, in O(1): a new event has the largest
 * sequence number yet, so it may follow any pending event of its time.  The
 * runs are found through a small direct-mapped table from a time to the
 * last event of a run at that time (tails[]), checked by generation; a
 * push that misses it starts a new run, which is always correct (the heap
 * merges runs of the same time by their keys), only slower.  With all
 * times distinct every run has one event and the queue is the plain heap.
 *
 * Layout.  Each heap entry is one 16-byte key, compared as a single
 * unsigned 128-bit integer:
 *
 *     bits 127..64  time, with the sign bit flipped (so signed order becomes
 *                   unsigned order)
 *     bits  63..32  sequence number within the current epoch
 *     bits  31..0   pool slot of the event
 *
 * Comparing keys is therefore one 128-bit compare (cmp + sbb), and the key
 * order is (time, sequence): the slot bits never decide because no two
 * pending events share a sequence number.  The callback, context, argument
 * and the link to the next event of its run live in the pool slot (32
 * bytes, two per cache line); the time, sequence number and previous event
 * of each slot live in aux[] (read when an event becomes the head of its
 * run, or leaves the middle of one); the heap position of each run's head
 * lives in a separate array of 32-bit integers, pos[] (NOT_HEAD for the
 * other events), which every move in the heap updates and which cancel and
 * reschedule read to find an entry in O(1).  Keeping pos[] apart keeps
 * those frequent writes inside a small, cache-resident array.
 *
 * The heap starts at index ROOT = 3 of a 64-byte aligned array: the
 * children of position p are 4p-8 .. 4p-5, so each group of four siblings
 * fills exactly one cache line.  The entries after the last one, up to the
 * end of the array, hold SENTINEL (all ones, larger than any real key), so
 * sift-down always compares four children without a bounds check.
 *
 * Sift-down is bottom-up (the hole descends to a leaf along the smallest
 * children, then the displaced key rises): the descent chooses the
 * smallest child with conditional moves and no branch, and prefetches the
 * next level's lines one level ahead.  pop also prefetches the pool slots
 * of the new head and its children, the events most likely popped next.
 *
 * Sequence numbers are 32 bits wide per epoch.  When an epoch runs out
 * (after about 4 billion pushes), the pending events are relabelled 0..n-1
 * in key order and the runs rebuilt from that order (one run per time; the
 * heads, in order, are a valid heap), and a new epoch starts; FsEvent.seq
 * reports epoch << 32 | seq, which never repeats and keeps FIFO order
 * among events at the same time.
 */
#include "core/eventq.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

__extension__ typedef unsigned __int128 Key;

#define ROOT ((size_t)3)
#define SENTINEL (~(Key)0)
#define TIME_BIAS ((uint64_t)1 << 63)
#define NO_SLOT UINT32_MAX
#define NOT_HEAD UINT32_MAX   /* pos[] of an event that does not head its run */
/* The run-tail table: a power of two, small enough to stay in cache. */
#define TAIL_BITS 8
#define N_TAILS ((size_t)1 << TAIL_BITS)
/* Limits of the 32-bit slot and position fields; far beyond any memory we
 * could allocate for a pool, but checked rather than assumed. */
#define MAX_SLOTS ((uint32_t)UINT32_MAX - 1)
#define MAX_HEAP ((size_t)1 << 30)

typedef struct {
  FsEventFn fn;  /* NULL while the slot is free */
  void *ctx;
  uint64_t arg;  /* while free: index of the next free slot (or NO_SLOT) */
  uint32_t gen;  /* generation: the high half of this slot's FsEventId; never 0 */
  uint32_t next; /* the next event of its run, NO_SLOT for the last */
} Slot;

/* The key parts of a pending event that does not head its run, and its
 * predecessor in the run.  (A head's are in its heap key; its aux entry
 * is stale: a run of one event, the common case where times are distinct,
 * then costs no write here.) */
typedef struct {
  FsTime time;
  uint32_t seq;
  uint32_t prev;
} Aux;

/* An entry of the run-tail table: slot (with its generation) was the last
 * event of a run at time when it was recorded. */
typedef struct {
  FsTime time;
  uint32_t slot; /* NO_SLOT: empty */
  uint32_t gen;
} Tail;

struct FsEventQueue {
  Key *heap;         /* runs' keys at [ROOT, ROOT + n); SENTINEL after them */
  size_t n;          /* runs (heap entries) */
  size_t count;      /* pending events */
  size_t heap_cap;   /* entries allocated, a multiple of 4 */
  Slot *slots;
  Aux *aux;          /* aux[slot]: time, sequence and predecessor of a non-head */
  uint32_t *pos;     /* pos[slot]: heap position of a run head's entry, or NOT_HEAD */
  Tail tails[N_TAILS]; /* by hash of the time: a run to append to */
  uint32_t nslots;   /* slots ever used (the pool's high-water mark) */
  uint32_t slot_cap;
  uint32_t free_head;
  uint32_t seq;      /* next sequence number in this epoch */
  uint32_t seq_limit; /* renumber when seq reaches this */
  uint64_t epoch;
};

static inline Key make_key(FsTime t, uint32_t seq, uint32_t slot)
{
  return ((Key)((uint64_t)t ^ TIME_BIAS) << 64) | ((Key)seq << 32) | slot;
}

static inline FsTime key_time(Key k) { return (FsTime)((uint64_t)(k >> 64) ^ TIME_BIAS); }
static inline uint32_t key_seq(Key k) { return (uint32_t)(k >> 32); }
static inline uint32_t key_slot(Key k) { return (uint32_t)k; }

static inline Key with_seq(Key k, uint32_t seq)
{
  return (k & ~((Key)UINT32_MAX << 32)) | ((Key)seq << 32);
}

/* Allocates an array aligned to a cache line (64 bytes): sibling groups
 * of the heap and 32-byte pool slots then never straddle two lines.
 * Arrays of 2 MiB or more are aligned to 2 MiB and marked for transparent
 * huge pages: with a million events pending, heap and pool accesses are
 * random, and with 4 KiB pages most of them also miss the TLB (about 12%
 * more events per second at 1 M pending in tests/bench/bench-eventq).
 * Aborts when out of memory, like g_malloc. */
#define HUGE_PAGE ((size_t)2 << 20)
static void *array_alloc(size_t bytes)
{
  void *p = NULL;
  size_t align = bytes >= HUGE_PAGE ? HUGE_PAGE : 64;
  if (posix_memalign(&p, align, bytes) != 0)
    g_error("eventq: out of memory allocating %zu bytes", bytes);
#ifdef MADV_HUGEPAGE
  /* A hint: where huge pages are unavailable it fails, harmlessly. */
  if (align == HUGE_PAGE)
    (void)madvise(p, bytes & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
#endif
  return p;
}

/* Replaces an array of old_bytes by a larger one, keeping its contents. */
static void *array_grow(void *old, size_t old_bytes, size_t new_bytes)
{
  void *p = array_alloc(new_bytes);
  if (old_bytes > 0)
    memcpy(p, old, old_bytes);
  free(old);
  return p;
}

static void fill_sentinel(Key *h, size_t from, size_t to)
{
  for (size_t i = from; i < to; i++)
    h[i] = SENTINEL;
}

FsEventQueue *fs_eventq_new(void)
{
  FsEventQueue *q = g_new0(FsEventQueue, 1);
  q->heap_cap = 64;
  q->heap = array_alloc(q->heap_cap * sizeof(Key));
  fill_sentinel(q->heap, 0, q->heap_cap);
  for (size_t i = 0; i < N_TAILS; i++)
    q->tails[i].slot = NO_SLOT;
  q->free_head = NO_SLOT;
  q->seq_limit = UINT32_MAX;
  return q;
}

void fs_eventq_free(FsEventQueue *q)
{
  if (q == NULL)
    return;
  free(q->heap);
  free(q->slots);
  free(q->aux);
  free(q->pos);
  g_free(q);
}

void fs_eventq_set_seq_limit(FsEventQueue *q, uint32_t limit)
{
  g_return_if_fail(q != NULL);
  g_return_if_fail(limit >= 2);
  q->seq_limit = limit;
}

/* ---- pool ------------------------------------------------------------ */

/* Takes a free slot, growing the pool by doubling when none is left.
 * Amortised O(1); no allocation once the pool has reached its peak. */
static uint32_t slot_take(FsEventQueue *q)
{
  uint32_t s = q->free_head;
  if (G_LIKELY(s != NO_SLOT)) {
    q->free_head = (uint32_t)q->slots[s].arg;
    return s;
  }
  if (q->nslots == q->slot_cap) {
    if (q->slot_cap >= MAX_SLOTS)
      g_error("eventq: more than %u pending events", MAX_SLOTS);
    uint64_t cap = q->slot_cap ? (uint64_t)q->slot_cap * 2 : 64;
    if (cap > MAX_SLOTS)
      cap = MAX_SLOTS;
    q->slots = array_grow(q->slots, q->slot_cap * sizeof(Slot), cap * sizeof(Slot));
    q->aux = array_grow(q->aux, q->slot_cap * sizeof(Aux), cap * sizeof(Aux));
    q->pos = array_grow(q->pos, q->slot_cap * sizeof(uint32_t), cap * sizeof(uint32_t));
    q->slot_cap = (uint32_t)cap;
  }
  s = q->nslots++;
  q->slots[s].gen = 1;
  return s;
}

/* Returns a slot to the free list and bumps its generation, which makes
 * every id naming it stale. */
static inline void slot_release(FsEventQueue *q, uint32_t s)
{
  Slot *sl = &q->slots[s];
  sl->fn = NULL;
  sl->gen = sl->gen + 1 ? sl->gen + 1 : 1;
  sl->arg = q->free_head;
  q->free_head = s;
}

static inline FsEventId make_id(uint32_t slot, uint32_t gen)
{
  return (FsEventId)slot | ((FsEventId)gen << 32);
}

/* The slot named by id, or -1 when id is stale or was never issued. */
static inline int64_t id_slot(const FsEventQueue *q, FsEventId id)
{
  uint32_t s = (uint32_t)id;
  uint32_t gen = (uint32_t)(id >> 32);
  if (s >= q->nslots || q->slots[s].fn == NULL || q->slots[s].gen != gen)
    return -1;
  return s;
}

/* ---- heap ------------------------------------------------------------ */

/* Moves key k up from the hole at p until its parent is smaller, updating
 * the positions recorded in the pool.  O(log n). */
static inline void sift_up(FsEventQueue *q, size_t p, Key k)
{
  Key *h = q->heap;
  uint32_t *pos = q->pos;
  while (p > ROOT) {
    size_t parent = (p >> 2) + 2;
    Key pk = h[parent];
#ifndef NDEBUG
    /* (time, sequence) is a total order: two pending events never share
     * it.  A tie here would mean a reused sequence number. */
    g_assert((k >> 32) != (pk >> 32));
#endif
    if (!(k < pk))
      break;
    h[p] = pk;
    pos[key_slot(pk)] = (uint32_t)p;
    p = parent;
  }
  h[p] = k;
  pos[key_slot(k)] = (uint32_t)p;
}

/* Index (0..3) of the smallest of the four keys at g, and that key in *m,
 * without branches: comparisons of random keys are unpredictable, and a
 * mispredicted branch costs more than the whole selection.  On x86-64 this
 * is written in assembly (compare with cmp/sbb, select with cmov) because
 * compilers turn some of the selections back into branches.  (Define
 * FS_EVENTQ_NO_ASM to build the portable version, e.g. to test it.) */
static inline size_t min4(const Key *g, Key *m)
{
#if defined(__x86_64__) && !defined(FS_EVENTQ_NO_ASM)
  uint64_t alo, ahi, clo, chi, t, i0, i1;
  __asm__("xor %k[i0], %k[i0]\n\t"
          /* pair (0, 1): a = min, i0 = its index */
          "mov 0(%[g]), %[alo]\n\t"
          "mov 8(%[g]), %[ahi]\n\t"
          "mov 24(%[g]), %[t]\n\t"
          "cmp %[alo], 16(%[g])\n\t"
          "sbb %[ahi], %[t]\n\t"
          "cmovb 16(%[g]), %[alo]\n\t"
          "cmovb 24(%[g]), %[ahi]\n\t"
          "setb %b[i0]\n\t"
          /* pair (2, 3): c = min, i1 = its index */
          "mov 32(%[g]), %[clo]\n\t"
          "mov 40(%[g]), %[chi]\n\t"
          "mov 56(%[g]), %[t]\n\t"
          "cmp %[clo], 48(%[g])\n\t"
          "sbb %[chi], %[t]\n\t"
          "cmovb 48(%[g]), %[clo]\n\t"
          "cmovb 56(%[g]), %[chi]\n\t"
          "mov $2, %k[i1]\n\t"
          "adc $0, %k[i1]\n\t"
          /* the smaller of the two */
          "mov %[chi], %[t]\n\t"
          "cmp %[alo], %[clo]\n\t"
          "sbb %[ahi], %[t]\n\t"
          "cmovb %[clo], %[alo]\n\t"
          "cmovb %[chi], %[ahi]\n\t"
          "cmovb %[i1], %[i0]"
          : [alo] "=&r"(alo), [ahi] "=&r"(ahi), [clo] "=&r"(clo), [chi] "=&r"(chi), [t] "=&r"(t),
            [i0] "=&r"(i0), [i1] "=&r"(i1)
          : [g] "r"(g), "m"(*(const Key(*)[4])g)
          : "cc");
  *m = ((Key)ahi << 64) | alo;
  return i0;
#else
  size_t i0 = g[1] < g[0];
  size_t i1 = 2 + (size_t)(g[3] < g[2]);
  size_t i = g[i1] < g[i0] ? i1 : i0;
  *m = g[i];
  return i;
#endif
}

/* Moves key k down from the hole at p to its place.  Bottom-up: the hole
 * first descends to a leaf along the smallest children (three compares a
 * level, branch-free; the sentinel padding makes every group complete),
 * then k rises from there.  k is usually a late event that belongs near the
 * bottom, so the rise is short.  O(log n). */
static inline void sift_down(FsEventQueue *q, size_t p, Key k)
{
  Key *h = q->heap;
  uint32_t *pos = q->pos;
  size_t end = ROOT + q->n;
  for (;;) {
    size_t c = 4 * p - 8;
    if (c >= end)
      break;
    const Key *g = h + c;
    /* The children's children are the 16 entries from 4c - 8: four cache
     * lines, fetched now so that the next level does not wait for them.
     * (Computed as an integer: near the bottom it points past the array,
     * which a prefetch tolerates but pointer arithmetic does not.) */
    uintptr_t gg = (uintptr_t)h + (4 * c - 8) * sizeof(Key);
    __builtin_prefetch((const void *)gg);
    __builtin_prefetch((const void *)(gg + 64));
    __builtin_prefetch((const void *)(gg + 128));
    __builtin_prefetch((const void *)(gg + 192));
    Key m;
    size_t i = min4(g, &m);
    h[p] = m;
    pos[key_slot(m)] = (uint32_t)p;
    p = c + i;
  }
  sift_up(q, p, k);
}

/* Moves key k down from the hole at p, top-down, stopping as soon as it is
 * smaller than its children: for the successor of a popped event, which is
 * still the smallest key (see the top of the file), that is one group of
 * four compared.  O(log n). */
static inline void sift_down_near(FsEventQueue *q, size_t p, Key k)
{
  Key *h = q->heap;
  uint32_t *pos = q->pos;
  size_t end = ROOT + q->n;
  for (;;) {
    size_t c = 4 * p - 8;
    if (c >= end)
      break;
    Key m;
    size_t i = min4(h + c, &m);
    if (k < m)
      break;
    h[p] = m;
    pos[key_slot(m)] = (uint32_t)p;
    p = c + i;
  }
  h[p] = k;
  pos[key_slot(k)] = (uint32_t)p;
}

static void heap_grow(FsEventQueue *q)
{
  if (q->heap_cap >= MAX_HEAP)
    g_error("eventq: more than %zu pending events", MAX_HEAP - ROOT - 4);
  size_t cap = q->heap_cap * 2;
  q->heap = array_grow(q->heap, q->heap_cap * sizeof(Key), cap * sizeof(Key));
  fill_sentinel(q->heap, q->heap_cap, cap);
  q->heap_cap = cap;
}

/* Relabels the pending events 0..count-1 in key order, rebuilds the runs
 * (one per time, in that order: the heads then form a sorted array, which
 * is a valid heap) and starts a new epoch.  Runs once per seq_limit
 * pushes; O(n log n). */
static int key_cmp(const void *a, const void *b)
{
  Key x = *(const Key *)a, y = *(const Key *)b;
  return (x > y) - (x < y);
}

static void renumber(FsEventQueue *q)
{
  size_t n = q->count;
  Key *all = g_new(Key, MAX(n, 1));
  size_t k = 0;
  for (size_t p = ROOT; p < ROOT + q->n; p++) {
    all[k++] = q->heap[p];
    for (uint32_t x = q->slots[key_slot(q->heap[p])].next; x != NO_SLOT; x = q->slots[x].next)
      all[k++] = make_key(q->aux[x].time, q->aux[x].seq, x);
  }
  g_assert(k == n);
  qsort(all, n, sizeof(Key), key_cmp);
  while (ROOT + n + 1 > q->heap_cap)
    heap_grow(q);
  fill_sentinel(q->heap, ROOT, ROOT + q->n);
  q->n = 0;
  uint32_t last = NO_SLOT;
  for (size_t i = 0; i < n; i++) {
    uint32_t s = key_slot(all[i]);
    FsTime t = key_time(all[i]);
    q->slots[s].next = NO_SLOT;
    if (last != NO_SLOT && key_time(all[i - 1]) == t) {
      q->slots[last].next = s;
      q->aux[s] = (Aux){t, (uint32_t)i, last};
      q->pos[s] = NOT_HEAD;
    } else {
      q->heap[ROOT + q->n] = make_key(t, (uint32_t)i, s);
      q->pos[s] = (uint32_t)(ROOT + q->n);
      q->n++;
    }
    last = s;
  }
  g_free(all);
  for (size_t i = 0; i < N_TAILS; i++)
    q->tails[i].slot = NO_SLOT;
  q->epoch++;
  q->seq = (uint32_t)n;
}

/* A fresh sequence number, larger than every pending event's. */
static inline uint32_t next_seq(FsEventQueue *q)
{
  if (G_UNLIKELY(q->seq >= q->seq_limit)) {
    renumber(q);
    /* A pending count this large would need > 64 GiB of heap. */
    g_assert(q->seq < q->seq_limit);
  }
  return q->seq++;
}

/* Removes the entry at position p (ROOT <= p < ROOT + n), filling the hole
 * with the last entry.  Does not touch the removed entry's slot. */
static inline void remove_at(FsEventQueue *q, size_t p)
{
  size_t last_pos = ROOT + --q->n;
  Key last = q->heap[last_pos];
  q->heap[last_pos] = SENTINEL;
  if (p == last_pos)
    return;
  if (p > ROOT && last < q->heap[(p >> 2) + 2])
    sift_up(q, p, last);
  else
    sift_down(q, p, last);
}

/* The run-tail table's entry for time t (Fibonacci hashing). */
static inline Tail *tail_of(FsEventQueue *q, FsTime t)
{
  return &q->tails[((uint64_t)t * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - TAIL_BITS)];
}

/* Puts the taken slot s, whose fn and gen are set, into the queue at
 * (time, seq): after the last event of a run at that time if the tail table
 * names one still pending and still last, else as a new run. */
static inline void link_event(FsEventQueue *q, uint32_t s, FsTime time, uint32_t seq)
{
  Tail *t = tail_of(q, time);
  Slot *sl = &q->slots[s];
  sl->next = NO_SLOT;
  uint32_t ts = t->slot;
  if (ts != NO_SLOT && t->time == time && q->slots[ts].gen == t->gen &&
      q->slots[ts].fn != NULL && q->slots[ts].next == NO_SLOT) {
    /* Same generation: the same pending event, so still at that time. */
    q->slots[ts].next = s;
    q->aux[s] = (Aux){time, seq, ts};
    q->pos[s] = NOT_HEAD;
  } else {
    if (G_UNLIKELY(ROOT + q->n + 1 > q->heap_cap))
      heap_grow(q);
    size_t p = ROOT + q->n++;
    sift_up(q, p, make_key(time, seq, s));
    t->time = time;
  }
  t->slot = s;
  t->gen = sl->gen;
  q->count++;
}

/* Takes the pending slot s out of its run, and the run out of the heap when
 * s was its only event.  Leaves the slot itself alone. */
static inline void unlink_event(FsEventQueue *q, uint32_t s)
{
  uint32_t nx = q->slots[s].next;
  uint32_t p = q->pos[s];
  q->count--;
  if (p != NOT_HEAD) {
    if (nx == NO_SLOT) {
      remove_at(q, p);
      return;
    }
    /* Its successor heads the run now: a larger key in the same place. */
    const Aux *an = &q->aux[nx];
    sift_down_near(q, p, make_key(an->time, an->seq, nx));
    return;
  }
  uint32_t pv = q->aux[s].prev;
  q->slots[pv].next = nx;
  /* (A head's successor's prev is never read: its aux is stale.) */
  if (nx != NO_SLOT)
    q->aux[nx].prev = pv;
}

/* ---- public API --------------------------------------------------------- */

FsEventId fs_eventq_push(FsEventQueue *q, FsTime time, FsEventFn fn, void *ctx, uint64_t arg)
{
  g_return_val_if_fail(q != NULL && fn != NULL, FS_EVENT_NONE);
  uint32_t seq = next_seq(q);
  uint32_t s = slot_take(q);
  Slot *sl = &q->slots[s];
  sl->fn = fn;
  sl->ctx = ctx;
  sl->arg = arg;
  link_event(q, s, time, seq);
  return make_id(s, sl->gen);
}

gboolean fs_eventq_pop(FsEventQueue *q, FsEvent *out)
{
  return fs_eventq_pop_until(q, FS_TIME_MAX, out);
}

/* Pops the head of the root run: its successor, if any, takes the root's
 * place (sift_down_near); otherwise the run leaves the heap as an entry of
 * a plain heap does.  Prefetches the events likely popped next. */
gboolean fs_eventq_pop_until(FsEventQueue *q, FsTime until, FsEvent *out)
{
  g_return_val_if_fail(q != NULL && out != NULL, FALSE);
  if (q->n == 0 || key_time(q->heap[ROOT]) > until)
    return FALSE;
  Key top = q->heap[ROOT];
  uint32_t s = key_slot(top);
  Slot *sl = &q->slots[s];
  out->time = key_time(top);
  out->seq = (q->epoch << 32) | key_seq(top);
  out->fn = sl->fn;
  out->ctx = sl->ctx;
  out->arg = sl->arg;
  uint32_t nx = sl->next;
  slot_release(q, s);
  q->count--;
  if (nx != NO_SLOT) {
    const Aux *an = &q->aux[nx];
    sift_down_near(q, ROOT, make_key(an->time, an->seq, nx));
    const Key *h = q->heap;
    Slot *nsl = &q->slots[key_slot(h[ROOT])];
    __builtin_prefetch(nsl);
    if (nsl->next != NO_SLOT)
      __builtin_prefetch(&q->aux[nsl->next]);
    return TRUE;
  }
  size_t last_pos = ROOT + --q->n;
  Key last = q->heap[last_pos];
  q->heap[last_pos] = SENTINEL;
  if (q->n > 0) {
    sift_down(q, ROOT, last);
    /* The next pops read the payload of the new head and, most likely, of
     * one of its children; with many events pending those slots were
     * written long ago and are cold, so start fetching them now.  (Padding
     * entries past the end name no slot, hence the bound.) */
    const Key *h = q->heap;
    __builtin_prefetch(&q->slots[key_slot(h[ROOT])]);
    size_t end = ROOT + q->n < 8 ? ROOT + q->n : 8;
    for (size_t i = 4; i < end; i++)
      __builtin_prefetch(&q->slots[key_slot(h[i])]);
  }
  return TRUE;
}

FsTime fs_eventq_peek_time(const FsEventQueue *q)
{
  g_return_val_if_fail(q != NULL, FS_TIME_MAX);
  return q->n ? key_time(q->heap[ROOT]) : FS_TIME_MAX;
}

gboolean fs_eventq_cancel(FsEventQueue *q, FsEventId id)
{
  g_return_val_if_fail(q != NULL, FALSE);
  int64_t s = id_slot(q, id);
  if (s < 0)
    return FALSE;
  unlink_event(q, (uint32_t)s);
  slot_release(q, (uint32_t)s);
  return TRUE;
}

FsEventId fs_eventq_reschedule(FsEventQueue *q, FsEventId id, FsTime time)
{
  g_return_val_if_fail(q != NULL, FS_EVENT_NONE);
  int64_t s = id_slot(q, id);
  if (s < 0)
    return FS_EVENT_NONE;
  /* next_seq may renumber, which rebuilds the runs: unlink after it. */
  uint32_t seq = next_seq(q);
  unlink_event(q, (uint32_t)s);
  Slot *sl = &q->slots[s];
  sl->gen = sl->gen + 1 ? sl->gen + 1 : 1;
  link_event(q, (uint32_t)s, time, seq);
  return make_id((uint32_t)s, sl->gen);
}

gboolean fs_eventq_is_pending(const FsEventQueue *q, FsEventId id)
{
  g_return_val_if_fail(q != NULL, FALSE);
  return id_slot(q, id) >= 0;
}

FsTime fs_eventq_time_of(const FsEventQueue *q, FsEventId id)
{
  g_return_val_if_fail(q != NULL, FS_TIME_MAX);
  int64_t s = id_slot(q, id);
  if (s < 0)
    return FS_TIME_MAX;
  uint32_t p = q->pos[s];
  return p != NOT_HEAD ? key_time(q->heap[p]) : q->aux[s].time;
}

guint fs_eventq_size(const FsEventQueue *q)
{
  g_return_val_if_fail(q != NULL, 0);
  return (guint)q->count;
}

/* Checks the heap of run heads (order, positions, padding), then walks
 * each run: same time, increasing sequence numbers below the next one to
 * be issued, consistent links; and that the runs hold every pending slot
 * exactly once. */
gboolean fs_eventq_check(const FsEventQueue *q)
{
  g_return_val_if_fail(q != NULL, FALSE);
  const Key *h = q->heap;
  size_t seen = 0;
  for (size_t p = ROOT; p < ROOT + q->n; p++) {
    uint32_t s = key_slot(h[p]);
    if (s >= q->nslots || q->slots[s].fn == NULL || q->pos[s] != p)
      return FALSE;
    if (p > ROOT && !(h[(p >> 2) + 2] < h[p]))
      return FALSE;
    if (key_seq(h[p]) >= q->seq)
      return FALSE;
    seen++;
    uint32_t prev_seq = key_seq(h[p]);
    for (uint32_t prev = s, x = q->slots[s].next; x != NO_SLOT; prev = x, x = q->slots[x].next) {
      if (x >= q->nslots || q->slots[x].fn == NULL || q->pos[x] != NOT_HEAD ||
          q->aux[x].prev != prev || q->aux[x].time != key_time(h[p]) ||
          q->aux[x].seq <= prev_seq || q->aux[x].seq >= q->seq)
        return FALSE;
      prev_seq = q->aux[x].seq;
      if (++seen > q->count)
        return FALSE;
    }
  }
  if (seen != q->count)
    return FALSE;
  size_t pending = 0;
  for (uint32_t s = 0; s < q->nslots; s++)
    pending += q->slots[s].fn != NULL;
  if (pending != q->count)
    return FALSE;
  for (size_t p = ROOT + q->n; p < q->heap_cap; p++)
    if (h[p] != SENTINEL)
      return FALSE;
  return TRUE;
}
