/* run.c — running a sweep's points (or any list of independent tasks) on
 * a GThreadPool.  Each worker runs whole tasks (for a sweep point,
 * fs_sweep_point_run: its own simulator, network, router and workload; the
 * environment is shared read-only) and hands the result to the calling
 * thread through a GAsyncQueue; the calling thread delivers results
 * (completion order) and polls for results from elsewhere.
 *
 * After an interrupt (fs_sim_request_interrupt) no new task starts, and a
 * task whose run returned NULL (a sweep point that failed while the request
 * stood: its simulation was cut short) is dropped rather than delivered;
 * tasks that finished are delivered.  When any task was dropped the run
 * fails with FS_RUNTIME_ERROR_INTERRUPTED. */
#include "sweep/sweep.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "core/sim.h"
#include "util/error.h"

typedef struct {
  FsSweepTaskFn run;
  void *ud;
  GAsyncQueue *done;
} Job;

typedef struct {
  guint task;
  void *result; /* NULL: dropped by an interrupt */
} Done;

static void worker(gpointer data, gpointer user)
{
  Job *job = user;
  Done *d = g_new(Done, 1);
  d->task = GPOINTER_TO_UINT(data) - 1;
  d->result = fs_sim_interrupt_requested() ? NULL : job->run(d->task, job->ud);
  g_async_queue_push(job->done, d);
}

/* Every task builds and frees its own simulator, flow network, router and
 * op graph: a few MiB, in blocks of up to a few MiB.  With glibc's defaults
 * the freed memory goes back to the kernel (blocks above the mmap threshold
 * are unmapped, the heap's top is trimmed) and the next task faults it in
 * again, zero-filled page by page: 1,000 equal GPT-3 points spent about
 * 40 % of their CPU in the kernel.  Keeping freed memory for the next task
 * (blocks below 32 MiB from the heap, trimming only above 256 MiB free)
 * removes that; the peak resident size is that of the largest task, as
 * before.  Process-wide, set once. */
static gpointer keep_freed_memory(gpointer data)
{
  (void)data;
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
  return NULL;
}

/* See sweep.h. Starts a GLib thread pool of at most one thread per task, pushes the tasks in
 * order and delivers their results from the calling thread as they complete, calling poll every
 * 20 ms or so while it waits; the first call also keeps glibc from returning freed memory
 * between tasks (keep_freed_memory). */
gboolean fs_sweep_run_tasks(guint first, guint stride, guint n, guint threads, FsSweepTaskFn run,
                            FsSweepTaskDoneFn done, FsSweepPollFn poll, void *ud, GError **error)
{
  static GOnce once = G_ONCE_INIT;
  g_once(&once, keep_freed_memory, NULL);
  stride = MAX(stride, 1u);
  guint todo = first < n ? (n - first + stride - 1) / stride : 0;
  if (threads == 0)
    threads = MAX(g_get_num_processors(), 1u);
  threads = MIN(threads, MAX(todo, 1u));
  Job job = { run, ud, g_async_queue_new() };
  /* Not exclusive: GLib keeps the threads of a freed pool for the next
   * one (g_thread_pool_set_max_unused_threads), so a process that runs
   * many commands (a library user, tests/fuzz/fuzz-cli.c) does not start
   * and stop threads for each. */
  GThreadPool *pool = g_thread_pool_new(worker, &job, (gint)threads, FALSE, error);
  if (pool == NULL) {
    g_async_queue_unref(job.done);
    return FALSE;
  }
  /* Pushed in task order: the pool starts them in that order, which keeps
   * a writer's buffer of out-of-order results small. */
  for (guint p = first; p < n; p += stride)
    g_thread_pool_push(pool, GUINT_TO_POINTER(p + 1), NULL);
  guint n_dropped = 0;
  for (guint got = 0; got < todo;) {
    Done *d = g_async_queue_timeout_pop(job.done, 20000);
    if (poll != NULL)
      poll(ud);
    if (d == NULL)
      continue;
    got++;
    if (d->result == NULL)
      n_dropped++;
    else
      done(d->task, d->result, ud);
    g_free(d);
  }
  g_thread_pool_free(pool, FALSE, TRUE);
  g_async_queue_unref(job.done);
  if (n_dropped > 0) {
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED,
                "interrupted; the tasks that finished are kept");
    return FALSE;
  }
  return TRUE;
}

/* ---- sweep points as tasks ---- */

typedef struct {
  const FsSweepEnv *env;
  const FsSweepSpec *spec;
  FsSweepResultFn on_result;
  FsSweepPollFn poll;
  void *ud;
} PointJob;

static void *point_task(guint point, void *user)
{
  PointJob *job = user;
  FsSweepResult *r = g_new0(FsSweepResult, 1);
  fs_sweep_point_run(job->env, job->spec, point, r);
  if (!r->ok && fs_sim_interrupt_requested()) {
    fs_sweep_result_clear(r);
    g_free(r);
    return NULL;
  }
  return r;
}

static void point_done(guint point, void *result, void *user)
{
  (void)point;
  PointJob *job = user;
  FsSweepResult *r = result;
  job->on_result(r, job->ud);
  fs_sweep_result_clear(r);
  g_free(r);
}

static void point_poll(void *user)
{
  PointJob *job = user;
  if (job->poll != NULL)
    job->poll(job->ud);
}

gboolean fs_sweep_run(const FsSweepEnv *env, const FsSweepSpec *s, guint first, guint stride,
                      guint threads, FsSweepResultFn on_result, FsSweepPollFn poll, void *ud,
                      GError **error)
{
  PointJob job = { env, s, on_result, poll, ud };
  return fs_sweep_run_tasks(first, stride, fs_sweep_spec_n_points(s), threads, point_task,
                            point_done, point_poll, &job, error);
}
