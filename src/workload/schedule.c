/* schedule.c — the pipeline schedule table (see schedule.h). */
#include "workload/schedule.h"

#include "workload/spec.h"

static void push(GArray *out, gboolean backward, guint mb, guint chunk)
{
  FsSchedItem it = { .backward = backward ? 1u : 0u, .mb = mb, .chunk = chunk };
  g_array_append_val(out, it);
}

/* GPipe: every forward, then every backward, the last micro-batch first
 * (its activations are the freshest). */
static void gpipe_order(guint p, guint m, guint v, guint stage, GArray *out)
{
  (void)p; (void)v; (void)stage;
  for (guint i = 0; i < m; i++)
    push(out, FALSE, i, 0);
  for (guint i = m; i-- > 0;)
    push(out, TRUE, i, 0);
}

/* 1F1B: warm-up forwards so that the last stage starts its first backward
 * as early as possible, then alternate, then drain the backwards. */
static void onef1b_order(guint p, guint m, guint v, guint stage, GArray *out)
{
  (void)v;
  guint warm = MIN(p - stage - 1, m);
  for (guint i = 0; i < warm; i++)
    push(out, FALSE, i, 0);
  for (guint i = 0; i < m - warm; i++) {
    push(out, FALSE, warm + i, 0);
    push(out, TRUE, i, 0);
  }
  for (guint i = m - warm; i < m; i++)
    push(out, TRUE, i, 0);
}

/* Megatron-LM's interleaved schedule (schedules.py,
 * forward_backward_pipelining_with_interleaving): the k-th forward and
 * the k-th backward of a stage map to (micro-batch, chunk) as below. */
static void interleaved_item(guint p, guint v, guint k, gboolean backward, guint *mb, guint *chunk)
{
  guint group = k / (p * v);
  guint in_group = k % (p * v);
  guint c = in_group / p;
  *chunk = backward ? v - 1 - c : c;
  *mb = group * p + in_group % p;
}

static void interleaved_order(guint p, guint m, guint v, guint stage, GArray *out)
{
  guint total = m * v;
  guint warm = MIN((p - stage - 1) * 2 + (v - 1) * p, total);
  guint mb, chunk;
  for (guint k = 0; k < warm; k++) {
    interleaved_item(p, v, k, FALSE, &mb, &chunk);
    push(out, FALSE, mb, chunk);
  }
  for (guint i = 0; i < total - warm; i++) {
    interleaved_item(p, v, warm + i, FALSE, &mb, &chunk);
    push(out, FALSE, mb, chunk);
    interleaved_item(p, v, i, TRUE, &mb, &chunk);
    push(out, TRUE, mb, chunk);
  }
  for (guint k = total - warm; k < total; k++) {
    interleaved_item(p, v, k, TRUE, &mb, &chunk);
    push(out, TRUE, mb, chunk);
  }
}

static const char *plain_unsupported(guint p, guint m, guint v)
{
  (void)p; (void)m;
  if (v > 1)
    return "this schedule runs one model chunk per stage (virtual_stages must be 1)";
  return NULL;
}

static const char *interleaved_unsupported(guint p, guint m, guint v)
{
  if (v < 2)
    return "the interleaved schedule needs virtual_stages >= 2";
  if (p < 2)
    return "the interleaved schedule needs pp >= 2";
  if (m % p != 0)
    return "the interleaved schedule needs the number of micro-batches to be a multiple of pp";
  return NULL;
}

static const FsSchedule gpipe = {
  FS_PP_GPIPE, "gpipe", "all forwards, then all backwards (Huang et al. 2019)",
  gpipe_order, plain_unsupported,
};
static const FsSchedule onef1b = {
  FS_PP_1F1B, "1f1b", "one forward, one backward after a warm-up (PipeDream-Flush, Megatron-LM)",
  onef1b_order, plain_unsupported,
};
static const FsSchedule interleaved = {
  FS_PP_INTERLEAVED, "interleaved", "1F1B over several model chunks per stage (Narayanan et al. 2021)",
  interleaved_order, interleaved_unsupported,
};

const FsSchedule *const fs_schedules[] = { &gpipe, &onef1b, &interleaved, NULL };

const FsSchedule *fs_schedule_get(FsPpSchedule id)
{
  for (guint i = 0; fs_schedules[i] != NULL; i++)
    if (fs_schedules[i]->id == id)
      return fs_schedules[i];
  return NULL;
}

const FsSchedule *fs_schedule_find(const char *name)
{
  for (guint i = 0; fs_schedules[i] != NULL; i++)
    if (g_ascii_strcasecmp(fs_schedules[i]->name, name) == 0)
      return fs_schedules[i];
  return NULL;
}

gboolean fs_schedule_check(const FsSchedule *sched, guint p, guint m, guint v, GError **error)
{
  const char *why = sched->unsupported(p, m, MAX(v, 1u));
  if (why != NULL) {
    g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID,
                "schedule %s with pp %u, %u micro-batches, %u virtual stages: %s", sched->name,
                p, m, MAX(v, 1u), why);
    return FALSE;
  }
  return TRUE;
}
