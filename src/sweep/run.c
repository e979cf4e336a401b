/* run.c — running a sweep's points on a GThreadPool.  Each worker runs
 * whole points (fs_sweep_point_run: its own simulator, network, router and
 * workload; the environment is shared read-only) and hands the result to
 * the calling thread through a GAsyncQueue; the calling thread delivers
 * results (completion order) and polls for results from elsewhere.
 *
 * After an interrupt (fs_sim_request_interrupt) no new point starts, and a
 * point that failed while the request stood (its simulation was cut short)
 * is dropped rather than delivered as an error row; points that finished
 * are delivered.  When any point was dropped the run fails with FS_RUNTIME_ERROR_INTERRUPTED. */
#include "sweep/sweep.h"

#include "core/sim.h"
#include "util/error.h"

typedef struct {
  const FsSweepEnv *env;
  const FsSweepSpec *spec;
  GAsyncQueue *done;
} Job;

/* A point cut short or never started by an interrupt: counted, not
 * delivered. */
static FsSweepResult dropped;

static void worker(gpointer data, gpointer user)
{
  Job *job = user;
  if (fs_sim_interrupt_requested()) {
    g_async_queue_push(job->done, &dropped);
    return;
  }
  FsSweepResult *r = g_new0(FsSweepResult, 1);
  fs_sweep_point_run(job->env, job->spec, GPOINTER_TO_UINT(data) - 1, r);
  if (!r->ok && fs_sim_interrupt_requested()) {
    fs_sweep_result_clear(r);
    g_free(r);
    r = &dropped;
  }
  g_async_queue_push(job->done, r);
}

gboolean fs_sweep_run(const FsSweepEnv *env, const FsSweepSpec *s, guint first, guint stride,
                      guint threads, FsSweepResultFn on_result, FsSweepPollFn poll, void *ud,
                      GError **error)
{
  stride = MAX(stride, 1u);
  guint n = fs_sweep_spec_n_points(s);
  guint todo = first < n ? (n - first + stride - 1) / stride : 0;
  if (threads == 0)
    threads = MAX(g_get_num_processors(), 1u);
  threads = MIN(threads, MAX(todo, 1u));
  Job job = { env, s, g_async_queue_new() };
  GThreadPool *pool = g_thread_pool_new(worker, &job, (gint)threads, TRUE, error);
  if (pool == NULL) {
    g_async_queue_unref(job.done);
    return FALSE;
  }
  /* Pushed in point order: the pool starts them in that order, which keeps
   * the writer's buffer of out-of-order results small. */
  for (guint p = first; p < n; p += stride)
    g_thread_pool_push(pool, GUINT_TO_POINTER(p + 1), NULL);
  guint n_dropped = 0;
  for (guint got = 0; got < todo;) {
    FsSweepResult *r = g_async_queue_timeout_pop(job.done, 20000);
    if (poll != NULL)
      poll(ud);
    if (r == NULL)
      continue;
    got++;
    if (r == &dropped) {
      n_dropped++;
      continue;
    }
    on_result(r, ud);
    fs_sweep_result_clear(r);
    g_free(r);
  }
  g_thread_pool_free(pool, FALSE, TRUE);
  g_async_queue_unref(job.done);
  if (n_dropped > 0) {
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED,
                "interrupted; the points that finished are kept");
    return FALSE;
  }
  return TRUE;
}
