/* test-eventq.c — the event queue: order, ties, cancel, reschedule, pool. */
#include <string.h>

#include "core/eventq.h"
#include "core/rng.h"
#include "testutil.h"

/* Check's ck_assert reports its position to the parent process on every
 * call; in loops of millions of iterations that dominates the run time, so
 * loops use this plain check, which costs nothing until it fails. */
#define loop_assert(cond)                                    \
  do {                                                       \
    if (G_UNLIKELY(!(cond)))                                 \
      ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #cond);  \
  } while (0)

static void record(void *ctx, uint64_t arg)
{
  (void)ctx;
  (void)arg;
}

static void other(void *ctx, uint64_t arg)
{
  (void)ctx;
  (void)arg;
}

/* Pops every event, checking that (time, seq) strictly increases; returns
 * the number popped. */
static guint drain_in_order(FsEventQueue *q, uint64_t *args, guint max)
{
  FsEvent ev;
  guint n = 0;
  FsTime last_t = INT64_MIN;
  uint64_t last_seq = 0;
  while (fs_eventq_pop(q, &ev)) {
    if (n > 0 && !(ev.time > last_t || (ev.time == last_t && ev.seq > last_seq)))
      ck_abort_msg("event %u out of order: (%" G_GINT64_FORMAT ", %" G_GUINT64_FORMAT ") after (%" G_GINT64_FORMAT
                  ", %" G_GUINT64_FORMAT ")",
                   n, ev.time, ev.seq, last_t, last_seq);
    last_t = ev.time;
    last_seq = ev.seq;
    if (args != NULL && n < max)
      args[n] = ev.arg;
    n++;
  }
  return n;
}

START_TEST(test_eventq_empty)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  FsEvent ev;
  ck_assert_uint_eq(fs_eventq_size(q), 0);
  ck_assert(fs_eventq_peek_time(q) == FS_TIME_MAX);
  ck_assert(!fs_eventq_pop(q, &ev));
  ck_assert(!fs_eventq_cancel(q, FS_EVENT_NONE));
  ck_assert(!fs_eventq_is_pending(q, FS_EVENT_NONE));
  ck_assert(fs_eventq_reschedule(q, FS_EVENT_NONE, 5) == FS_EVENT_NONE);
  ck_assert(fs_eventq_check(q));
}
END_TEST

START_TEST(test_eventq_pop_returns_payload)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  int ctx = 0;
  fs_eventq_push(q, 30, record, &ctx, 3);
  fs_eventq_push(q, -10, other, NULL, 1);
  fs_eventq_push(q, 20, record, &ctx, 2);
  FsEvent ev;
  ck_assert(fs_eventq_pop(q, &ev));
  ck_assert(ev.time == -10 && ev.fn == other && ev.ctx == NULL && ev.arg == 1);
  ck_assert(fs_eventq_pop(q, &ev));
  ck_assert(ev.time == 20 && ev.fn == record && ev.ctx == &ctx && ev.arg == 2);
  ck_assert(fs_eventq_pop(q, &ev));
  ck_assert(ev.time == 30 && ev.arg == 3);
  ck_assert(!fs_eventq_pop(q, &ev));
}
END_TEST

START_TEST(test_eventq_pop_until)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  FsEvent ev;
  ck_assert(!fs_eventq_pop_until(q, FS_TIME_MAX, &ev));
  fs_eventq_push(q, 10, record, NULL, 1);
  fs_eventq_push(q, 20, record, NULL, 2);
  ck_assert(!fs_eventq_pop_until(q, 9, &ev));
  ck_assert_uint_eq(fs_eventq_size(q), 2);
  ck_assert(fs_eventq_pop_until(q, 10, &ev));
  ck_assert(ev.time == 10 && ev.arg == 1);
  ck_assert(!fs_eventq_pop_until(q, 19, &ev));
  ck_assert(fs_eventq_pop_until(q, 25, &ev));
  ck_assert(ev.arg == 2);
  ck_assert_uint_eq(fs_eventq_size(q), 0);
}
END_TEST

START_TEST(test_eventq_extreme_times)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  fs_eventq_push(q, FS_TIME_MAX, record, NULL, 3);
  fs_eventq_push(q, INT64_MIN, record, NULL, 1);
  fs_eventq_push(q, 0, record, NULL, 2);
  fs_eventq_push(q, FS_TIME_MAX, record, NULL, 4);
  uint64_t args[4];
  ck_assert_uint_eq(drain_in_order(q, args, 4), 4);
  for (int i = 0; i < 4; i++)
    ck_assert_uint_eq(args[i], (uint64_t)i + 1);
}
END_TEST

START_TEST(test_eventq_ties_are_fifo)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  /* Interleave two times so that the heap reorders entries internally. */
  for (uint64_t i = 0; i < 1000; i++)
    fs_eventq_push(q, (i % 2) ? 5 * FS_NS : 7 * FS_NS, record, NULL, i);
  uint64_t args[1000];
  ck_assert_uint_eq(drain_in_order(q, args, 1000), 1000);
  for (int i = 0; i < 500; i++) {
    ck_assert_uint_eq(args[i], 2 * (uint64_t)i + 1);
    ck_assert_uint_eq(args[500 + i], 2 * (uint64_t)i);
  }
}
END_TEST

START_TEST(test_eventq_size_and_peek)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  fs_eventq_push(q, 50, record, NULL, 0);
  ck_assert(fs_eventq_peek_time(q) == 50);
  FsEventId id = fs_eventq_push(q, 40, record, NULL, 0);
  ck_assert(fs_eventq_peek_time(q) == 40);
  fs_eventq_push(q, 60, record, NULL, 0);
  ck_assert_uint_eq(fs_eventq_size(q), 3);
  ck_assert(fs_eventq_time_of(q, id) == 40);
  fs_eventq_cancel(q, id);
  ck_assert_uint_eq(fs_eventq_size(q), 2);
  ck_assert(fs_eventq_peek_time(q) == 50);
  ck_assert(fs_eventq_time_of(q, id) == FS_TIME_MAX);
  FsEvent ev;
  fs_eventq_pop(q, &ev);
  ck_assert_uint_eq(fs_eventq_size(q), 1);
  ck_assert(fs_eventq_peek_time(q) == 60);
}
END_TEST

START_TEST(test_eventq_cancel_head)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  FsEventId ids[100];
  for (int i = 0; i < 100; i++)
    ids[i] = fs_eventq_push(q, (FsTime)(100 - i), record, NULL, (uint64_t)i);
  /* The head is the last pushed (time 1); cancel it, then the new head. */
  ck_assert(fs_eventq_cancel(q, ids[99]));
  ck_assert(fs_eventq_peek_time(q) == 2);
  ck_assert(fs_eventq_cancel(q, ids[98]));
  ck_assert(fs_eventq_peek_time(q) == 3);
  ck_assert(fs_eventq_check(q));
  ck_assert_uint_eq(fs_eventq_size(q), 98);
  uint64_t args[98];
  ck_assert_uint_eq(drain_in_order(q, args, 98), 98);
  ck_assert_uint_eq(args[0], 97);
  ck_assert_uint_eq(args[97], 0);
}
END_TEST

START_TEST(test_eventq_cancel_stale_id_is_noop)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  FsEventId a = fs_eventq_push(q, 10, record, NULL, 1);
  ck_assert(fs_eventq_is_pending(q, a));
  ck_assert(fs_eventq_cancel(q, a));
  ck_assert(!fs_eventq_is_pending(q, a));
  /* Cancelled twice: nothing happens. */
  ck_assert(!fs_eventq_cancel(q, a));
  /* The slot is reused by the next push; the old id must not reach it. */
  FsEventId b = fs_eventq_push(q, 20, record, NULL, 2);
  ck_assert((uint32_t)a == (uint32_t)b);
  ck_assert(a != b);
  ck_assert(!fs_eventq_cancel(q, a));
  ck_assert(fs_eventq_reschedule(q, a, 5) == FS_EVENT_NONE);
  ck_assert(fs_eventq_is_pending(q, b));
  ck_assert_uint_eq(fs_eventq_size(q), 1);
  /* An id popped is stale too. */
  FsEvent ev;
  ck_assert(fs_eventq_pop(q, &ev));
  ck_assert(ev.arg == 2);
  ck_assert(!fs_eventq_cancel(q, b));
  /* Ids never issued. */
  ck_assert(!fs_eventq_cancel(q, (FsEventId)12345 | ((FsEventId)1 << 32)));
  ck_assert(!fs_eventq_is_pending(q, ~(FsEventId)0));
}
END_TEST

START_TEST(test_eventq_random_million_in_order)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  FsRng rng;
  fs_rng_init(&rng, 7, 1);
  const guint n = 1000000;
  for (guint i = 0; i < n; i++) {
    /* A narrow range makes many ties, so the sequence order is exercised. */
    fs_eventq_push(q, (FsTime)fs_rng_below(&rng, 100000), record, NULL, i);
  }
  ck_assert_uint_eq(fs_eventq_size(q), n);
  ck_assert(fs_eventq_check(q));
  ck_assert_uint_eq(drain_in_order(q, NULL, 0), n);
  ck_assert_uint_eq(fs_eventq_size(q), 0);
}
END_TEST

START_TEST(test_eventq_reschedule_same_time_goes_after_ties)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  FsEventId first = fs_eventq_push(q, 100, record, NULL, 0);
  fs_eventq_push(q, 100, record, NULL, 1);
  fs_eventq_push(q, 100, record, NULL, 2);
  FsEventId moved = fs_eventq_reschedule(q, first, 100);
  ck_assert(moved != FS_EVENT_NONE && moved != first);
  ck_assert(!fs_eventq_is_pending(q, first));
  ck_assert(fs_eventq_is_pending(q, moved));
  fs_eventq_push(q, 100, record, NULL, 3);
  uint64_t args[4];
  ck_assert_uint_eq(drain_in_order(q, args, 4), 4);
  ck_assert_uint_eq(args[0], 1);
  ck_assert_uint_eq(args[1], 2);
  ck_assert_uint_eq(args[2], 0);
  ck_assert_uint_eq(args[3], 3);
}
END_TEST

START_TEST(test_eventq_reschedule_earlier_and_later)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  FsEventId ids[64];
  for (int i = 0; i < 64; i++)
    ids[i] = fs_eventq_push(q, (FsTime)(10 * (i + 1)), record, NULL, (uint64_t)i);
  /* The last becomes the first, the first becomes the last, one in the
   * middle moves a little. */
  FsEventId e = fs_eventq_reschedule(q, ids[63], 1);
  FsEventId l = fs_eventq_reschedule(q, ids[0], 10000);
  FsEventId m = fs_eventq_reschedule(q, ids[30], 205);
  ck_assert(e != FS_EVENT_NONE && l != FS_EVENT_NONE && m != FS_EVENT_NONE);
  ck_assert(fs_eventq_check(q));
  ck_assert(fs_eventq_time_of(q, e) == 1);
  ck_assert(fs_eventq_time_of(q, l) == 10000);
  ck_assert(fs_eventq_peek_time(q) == 1);
  uint64_t args[64];
  ck_assert_uint_eq(drain_in_order(q, args, 64), 64);
  ck_assert_uint_eq(args[0], 63);
  ck_assert_uint_eq(args[63], 0);
  /* Args 1..19 (times 20..200) follow the head, then 205, then 210. */
  ck_assert_uint_eq(args[1], 1);
  ck_assert_uint_eq(args[19], 19);
  ck_assert_uint_eq(args[20], 30);
  ck_assert_uint_eq(args[21], 20);
}
END_TEST

/* Random pushes, pops, cancels and reschedules against a simple model. */
START_TEST(test_eventq_random_operations_match_model)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  FsRng rng;
  fs_rng_init(&rng, 11, 2);
  enum { MAXN = 4096 };
  FsEventId ids[MAXN];
  FsTime times[MAXN];
  guint live = 0;
  uint64_t live_mask[MAXN];
  memset(live_mask, 0, sizeof live_mask);
  for (int step = 0; step < 200000; step++) {
    uint64_t op = fs_rng_below(&rng, 10);
    uint64_t k = fs_rng_below(&rng, MAXN);
    if (op < 4 && !live_mask[k]) {
      times[k] = (FsTime)fs_rng_below(&rng, 1000);
      ids[k] = fs_eventq_push(q, times[k], record, NULL, k);
      live_mask[k] = 1;
      live++;
    } else if (op < 6 && live_mask[k]) {
      loop_assert(fs_eventq_cancel(q, ids[k]));
      live_mask[k] = 0;
      live--;
    } else if (op < 8 && live_mask[k]) {
      times[k] = (FsTime)fs_rng_below(&rng, 1000);
      ids[k] = fs_eventq_reschedule(q, ids[k], times[k]);
      loop_assert(ids[k] != FS_EVENT_NONE);
    } else if (op < 10 && live > 0) {
      FsEvent ev;
      loop_assert(fs_eventq_pop(q, &ev));
      loop_assert(live_mask[ev.arg]);
      loop_assert(ev.time == times[ev.arg]);
      /* Nothing pending is earlier than what was popped. */
      for (guint j = 0; j < MAXN && step % 64 == 0; j++)
        loop_assert(!live_mask[j] || times[j] >= ev.time);
      live_mask[ev.arg] = 0;
      live--;
    }
    loop_assert(fs_eventq_size(q) == live);
  }
  ck_assert(fs_eventq_check(q));
}
END_TEST

/* Many events per time (the queue keeps them as runs): random pushes,
 * pops, cancels and reschedules, in the middle of runs too, against a model
 * that knows the exact order: (time, order of push or reschedule).  Run
 * with and without a small epoch, so that renumbering rebuilds the runs. */
static void check_ties_against_model(uint32_t seq_limit)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  if (seq_limit != 0)
    fs_eventq_set_seq_limit(q, seq_limit);
  FsRng rng;
  fs_rng_init(&rng, 17, seq_limit);
  enum { MAXN = 512 };
  FsEventId ids[MAXN];
  FsTime times[MAXN];
  uint64_t order[MAXN];
  gboolean live[MAXN] = {0};
  uint64_t counter = 0;
  guint n_live = 0;
  for (int step = 0; step < 100000; step++) {
    uint64_t op = fs_rng_below(&rng, 10);
    uint64_t k = fs_rng_below(&rng, MAXN);
    if (op < 4 && !live[k]) {
      times[k] = (FsTime)fs_rng_below(&rng, 6);
      ids[k] = fs_eventq_push(q, times[k], record, NULL, k);
      order[k] = counter++;
      live[k] = TRUE;
      n_live++;
    } else if (op < 5 && live[k]) {
      loop_assert(fs_eventq_cancel(q, ids[k]));
      live[k] = FALSE;
      n_live--;
    } else if (op < 6 && live[k]) {
      times[k] += (FsTime)fs_rng_below(&rng, 3);
      ids[k] = fs_eventq_reschedule(q, ids[k], times[k]);
      order[k] = counter++;
    } else if (op < 10 && n_live > 0) {
      int64_t want = -1;
      for (guint j = 0; j < MAXN; j++)
        if (live[j] && (want < 0 || times[j] < times[want] ||
                        (times[j] == times[want] && order[j] < order[want])))
          want = j;
      loop_assert(fs_eventq_peek_time(q) == times[want]);
      FsEvent ev;
      loop_assert(fs_eventq_pop(q, &ev));
      loop_assert(ev.arg == (uint64_t)want);
      live[want] = FALSE;
      n_live--;
    }
    loop_assert(fs_eventq_size(q) == n_live);
    if (live[k])
      loop_assert(fs_eventq_time_of(q, ids[k]) == times[k]);
    if (step % 97 == 0)
      loop_assert(fs_eventq_check(q));
  }
  ck_assert(fs_eventq_check(q));
}

START_TEST(test_eventq_ties_match_model)
{
  check_ties_against_model(0);
  check_ties_against_model(700);
}
END_TEST

START_TEST(test_eventq_pool_reuse)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  /* Many push/pop cycles at a constant size must keep reusing the same
   * slots: every id's slot stays below the peak number pending. */
  const uint32_t pending = 100;
  for (uint32_t i = 0; i < pending; i++)
    fs_eventq_push(q, i, record, NULL, i);
  FsEvent ev;
  for (int i = 0; i < 100000; i++) {
    loop_assert(fs_eventq_pop(q, &ev));
    FsEventId id = fs_eventq_push(q, ev.time + 100, record, NULL, ev.arg);
    loop_assert((uint32_t)id < pending);
    loop_assert(id >> 32 != 0);
  }
  ck_assert_uint_eq(fs_eventq_size(q), pending);
  ck_assert(fs_eventq_check(q));
  /* Draining and refilling also reuses slots. */
  while (fs_eventq_pop(q, &ev))
    ;
  for (uint32_t i = 0; i < pending; i++)
    loop_assert((uint32_t)fs_eventq_push(q, 5, record, NULL, i) < pending);
}
END_TEST

START_TEST(test_eventq_renumbering_keeps_order)
{
  g_autoptr(FsEventQueue) q = fs_eventq_new();
  /* A tiny epoch forces many renumberings while events are pending (the
   * limit must exceed the 102 events pending at most). */
  fs_eventq_set_seq_limit(q, 150);
  FsRng rng;
  fs_rng_init(&rng, 3, 3);
  FsEventId ids[40];
  for (uint64_t i = 0; i < 40; i++)
    ids[i] = fs_eventq_push(q, (FsTime)fs_rng_below(&rng, 8), record, NULL, i);
  for (int round = 0; round < 200; round++) {
    uint64_t k = fs_rng_below(&rng, 40);
    if (fs_eventq_is_pending(q, ids[k]))
      ids[k] = fs_eventq_reschedule(q, ids[k], (FsTime)fs_rng_below(&rng, 8));
    loop_assert(fs_eventq_check(q));
  }
  /* Renumbering did happen: the epoch shows in the popped sequence. */
  fs_eventq_push(q, -1, record, NULL, 999);
  FsEvent ev;
  ck_assert(fs_eventq_pop(q, &ev));
  ck_assert(ev.arg == 999);
  ck_assert_uint_ge(ev.seq >> 32, 1);
  /* Ties at the same time still pop in push (or reschedule) order. */
  FsEventId a = fs_eventq_push(q, 4, record, NULL, 1000);
  for (int i = 0; i < 60; i++)
    fs_eventq_push(q, 100, record, NULL, 2000 + (uint64_t)i);
  FsEventId b = fs_eventq_push(q, 4, record, NULL, 1001);
  ck_assert(fs_eventq_is_pending(q, a) && fs_eventq_is_pending(q, b));
  uint64_t args[102];
  ck_assert_uint_eq(drain_in_order(q, args, 102), 102);
  int ia = -1, ib = -1;
  for (int i = 0; i < 102; i++) {
    if (args[i] == 1000)
      ia = i;
    if (args[i] == 1001)
      ib = i;
    if (i >= 42)
      ck_assert_uint_eq(args[i], 2000 + (uint64_t)(i - 42));
  }
  ck_assert(ia >= 0 && ib > ia);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("eventq");
  FS_ADD_TEST(s, test_eventq_empty);
  FS_ADD_TEST(s, test_eventq_pop_returns_payload);
  FS_ADD_TEST(s, test_eventq_pop_until);
  FS_ADD_TEST(s, test_eventq_extreme_times);
  FS_ADD_TEST(s, test_eventq_ties_are_fifo);
  FS_ADD_TEST(s, test_eventq_size_and_peek);
  FS_ADD_TEST(s, test_eventq_cancel_head);
  FS_ADD_TEST(s, test_eventq_cancel_stale_id_is_noop);
  FS_ADD_TEST(s, test_eventq_random_million_in_order);
  FS_ADD_TEST(s, test_eventq_reschedule_same_time_goes_after_ties);
  FS_ADD_TEST(s, test_eventq_reschedule_earlier_and_later);
  FS_ADD_TEST(s, test_eventq_random_operations_match_model);
  FS_ADD_TEST(s, test_eventq_ties_match_model);
  FS_ADD_TEST(s, test_eventq_pool_reuse);
  FS_ADD_TEST(s, test_eventq_renumbering_keeps_order);
  return fs_test_run_suite(s);
}
