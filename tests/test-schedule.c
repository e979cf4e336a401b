/* test-schedule.c — pipeline schedules run on the op graph: the bubble is
 * measured (idle compute time), and for equal stage times GPipe and 1F1B
 * give (p − 1)/(m + p − 1); interleaving makes it smaller. */
#include <check.h>
#include <string.h>

#include "testutil.h"
#include "workload/opgraph.h"
#include "workload/schedule.h"
#include "workload/spec.h"
#include <math.h>

/* Runs a toy pipeline of p stages, m micro-batches, v chunks per stage,
 * forward f and backward b per stage (split evenly over its chunks), with
 * zero-time activations between stages.  Returns the mean bubble fraction
 * over the stages and the step time. */
static double toy_bubble(FsPpSchedule id, guint p, guint m, guint v, FsTime f, FsTime b,
                         FsTime *step)
{
  const FsSchedule *sched = fs_schedule_get(id);
  ck_assert_ptr_nonnull(sched);
  g_autoptr(FsOpGraph) g = fs_opgraph_new();
  guint nv = p * v;
  guint32 *fo = g_new(guint32, nv * m), *bo = g_new(guint32, nv * m);
  guint *streams = g_new(guint, p);
  for (guint s = 0; s < p; s++) {
    streams[s] = fs_opgraph_add_stream(g, "compute", s, -1, TRUE);
    g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(FsSchedItem));
    sched->order(p, m, v, s, order);
    ck_assert_uint_eq(order->len, 2 * m * v);
    for (guint i = 0; i < order->len; i++) {
      const FsSchedItem *it = &g_array_index(order, FsSchedItem, i);
      guint vs = it->chunk * p + s;
      FsOp o = { .kind = FS_OP_COMPUTE, .cat = it->backward ? FS_CAT_BACKWARD : FS_CAT_FORWARD,
                 .name = it->backward ? "B" : "F", .dur = (it->backward ? b : f) / v,
                 .mb = (gint32)it->mb, .layer = -1 };
      guint32 id2 = fs_opgraph_add(g, streams[s], &o, NULL, 0);
      (it->backward ? bo : fo)[vs * m + it->mb] = id2;
    }
  }
  for (guint vs = 0; vs < nv; vs++)
    for (guint mb = 0; mb < m; mb++) {
      if (vs > 0)
        fs_opgraph_add_dep(g, fo[vs * m + mb], fo[(vs - 1) * m + mb]);
      if (vs + 1 < nv)
        fs_opgraph_add_dep(g, bo[vs * m + mb], bo[(vs + 1) * m + mb]);
      else
        fs_opgraph_add_dep(g, bo[vs * m + mb], fo[vs * m + mb]);
    }
  g_autoptr(FsSim) sim = fs_sim_new();
  FsOpEnv env = { .sim = sim };
  GError *err = NULL;
  ck_assert(fs_opgraph_run(g, &env, &err));
  fs_assert_no_error(err);
  *step = fs_opgraph_end(g);
  double sum = 0;
  for (guint s = 0; s < p; s++) {
    FsOpBreakdown bd;
    fs_opgraph_breakdown(g, streams[s], NULL, 0, 0, *step, &bd);
    ck_assert_int_eq(bd.busy[FS_CAT_FORWARD] + bd.busy[FS_CAT_BACKWARD] + bd.bubble, *step);
    sum += (double)bd.bubble / *step;
  }
  g_free(fo);
  g_free(bo);
  g_free(streams);
  return sum / p;
}

START_TEST(test_schedule_gpipe_bubble)
{
  FsTime step;
  double bub = toy_bubble(FS_PP_GPIPE, 4, 8, 1, 1000, 2000, &step);
  ck_assert_int_eq(step, (8 + 4 - 1) * 3000);
  ck_assert_double_eq_tol(bub, 3.0 / 11.0, 1e-12);
}
END_TEST

START_TEST(test_schedule_1f1b_bubble)
{
  for (guint p = 2; p <= 8; p *= 2)
    for (guint m = 1; m <= 16; m *= 2) {
      FsTime step;
      double bub = toy_bubble(FS_PP_1F1B, p, m, 1, 1000, 2000, &step);
      ck_assert_int_eq(step, (FsTime)(m + p - 1) * 3000);
      ck_assert_msg(fabs(bub - (double)(p - 1) / (m + p - 1)) < 1e-12, "p %u m %u: %g", p, m, bub);
    }
}
END_TEST

START_TEST(test_schedule_interleaved_smaller)
{
  FsTime s1, s2;
  double b1 = toy_bubble(FS_PP_1F1B, 4, 8, 1, 4000, 8000, &s1);
  double b2 = toy_bubble(FS_PP_INTERLEAVED, 4, 8, 2, 4000, 8000, &s2);
  ck_assert_double_lt(b2, b1);
  ck_assert_int_lt(s2, s1);
  /* Megatron's figure: the bubble shrinks by the number of chunks. */
  ck_assert_double_eq_tol(b2, (3.0 / 2) / (8 + 3.0 / 2), 1e-9);
}
END_TEST

START_TEST(test_schedule_1f1b_warmup)
{
  /* Stage 0 of 4 with 8 micro-batches: 3 warm-up forwards, then F3 B0. */
  g_autoptr(GArray) o = g_array_new(FALSE, FALSE, sizeof(FsSchedItem));
  fs_schedule_get(FS_PP_1F1B)->order(4, 8, 1, 0, o);
  const FsSchedItem *it = (const FsSchedItem *)o->data;
  for (guint i = 0; i < 4; i++)
    ck_assert(!it[i].backward && it[i].mb == i);
  ck_assert(it[4].backward && it[4].mb == 0);
  /* The last stage alternates from the start. */
  g_array_set_size(o, 0);
  fs_schedule_get(FS_PP_1F1B)->order(4, 8, 1, 3, o);
  it = (const FsSchedItem *)o->data;
  ck_assert(!it[0].backward && it[1].backward && !it[2].backward);
}
END_TEST

START_TEST(test_schedule_table)
{
  ck_assert_ptr_eq(fs_schedule_find("1F1B"), fs_schedule_get(FS_PP_1F1B));
  ck_assert_ptr_null(fs_schedule_find("zigzag"));
  GError *err = NULL;
  ck_assert(!fs_schedule_check(fs_schedule_get(FS_PP_INTERLEAVED), 4, 6, 2, &err));
  fs_assert_error(err, FS_WORKLOAD_ERROR, "multiple of pp");
  ck_assert(fs_schedule_check(fs_schedule_get(FS_PP_INTERLEAVED), 4, 8, 2, NULL));
  ck_assert(!fs_schedule_check(fs_schedule_get(FS_PP_1F1B), 4, 8, 2, NULL));
}
END_TEST

START_TEST(test_schedule_deterministic)
{
  FsTime a, b;
  double x = toy_bubble(FS_PP_INTERLEAVED, 4, 12, 3, 999, 2001, &a);
  double y = toy_bubble(FS_PP_INTERLEAVED, 4, 12, 3, 999, 2001, &b);
  ck_assert_int_eq(a, b);
  ck_assert(x == y);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("schedule");
  FS_ADD_TEST(s, test_schedule_gpipe_bubble);
  FS_ADD_TEST(s, test_schedule_1f1b_bubble);
  FS_ADD_TEST(s, test_schedule_interleaved_smaller);
  FS_ADD_TEST(s, test_schedule_1f1b_warmup);
  FS_ADD_TEST(s, test_schedule_table);
  FS_ADD_TEST(s, test_schedule_deterministic);
  return fs_test_run_suite(s);
}
