/* test-sim.c — the simulation clock: ordering, horizons, stop, budget,
 * and the "event in the past" stop. */
#include <string.h>
#include <sys/wait.h>

#include "core/sim.h"
#include "testutil.h"
#include "util/error.h"

/* A small model: each event appends (now, arg) to a log. */
typedef struct {
  FsSim *sim;
  FsTime times[64];
  uint64_t args[64];
  int n;
  int stop_at; /* call fs_sim_stop when the log reaches this length */
} Log;

static void log_event(void *ctx, uint64_t arg)
{
  Log *log = ctx;
  ck_assert_int_lt(log->n, 64);
  log->times[log->n] = fs_sim_now(log->sim);
  log->args[log->n] = arg;
  log->n++;
  if (log->n == log->stop_at)
    fs_sim_stop(log->sim);
}

START_TEST(test_sim_clock_advances)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  Log log = {.sim = sim};
  ck_assert(fs_sim_now(sim) == 0);
  fs_sim_at(sim, 3 * FS_US, log_event, &log, 3);
  fs_sim_at(sim, 1 * FS_US, log_event, &log, 1);
  fs_sim_after(sim, 2 * FS_US, log_event, &log, 2);
  fs_sim_at(sim, 1 * FS_US, log_event, &log, 11);
  ck_assert_uint_eq(fs_sim_pending(sim), 4);
  g_autoptr(GError) error = NULL;
  ck_assert(fs_sim_run(sim, &error));
  fs_assert_no_error(error);
  ck_assert_int_eq(log.n, 4);
  FsTime want_t[] = {FS_US, FS_US, 2 * FS_US, 3 * FS_US};
  uint64_t want_a[] = {1, 11, 2, 3};
  for (int i = 0; i < 4; i++) {
    ck_assert(log.times[i] == want_t[i]);
    ck_assert_uint_eq(log.args[i], want_a[i]);
  }
  ck_assert(fs_sim_now(sim) == 3 * FS_US);
  ck_assert_uint_eq(fs_sim_events_run(sim), 4);
  ck_assert_uint_eq(fs_sim_pending(sim), 0);
}
END_TEST

/* An event that schedules a follow-up relative to now, n times. */
typedef struct {
  FsSim *sim;
  int remaining;
} Chain;

static void chain_event(void *ctx, uint64_t arg)
{
  Chain *c = ctx;
  if (--c->remaining > 0)
    fs_sim_after(c->sim, (FsTime)arg, chain_event, c, arg);
}

START_TEST(test_sim_after_is_relative_to_now)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  Chain c = {sim, 10};
  fs_sim_after(sim, 5 * FS_NS, chain_event, &c, 5 * FS_NS);
  g_autoptr(GError) error = NULL;
  ck_assert(fs_sim_run(sim, &error));
  ck_assert(fs_sim_now(sim) == 50 * FS_NS);
  ck_assert_uint_eq(fs_sim_events_run(sim), 10);
}
END_TEST

START_TEST(test_sim_run_until_leaves_later_events)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  Log log = {.sim = sim};
  fs_sim_at(sim, 10, log_event, &log, 1);
  fs_sim_at(sim, 20, log_event, &log, 2);
  fs_sim_at(sim, 30, log_event, &log, 3);
  g_autoptr(GError) error = NULL;
  /* Events exactly at the horizon run. */
  ck_assert(fs_sim_run_until(sim, 20, &error));
  ck_assert_int_eq(log.n, 2);
  ck_assert(fs_sim_now(sim) == 20);
  ck_assert_uint_eq(fs_sim_pending(sim), 1);
  /* A horizon with no event moves the clock there. */
  ck_assert(fs_sim_run_until(sim, 25, &error));
  ck_assert_int_eq(log.n, 2);
  ck_assert(fs_sim_now(sim) == 25);
  /* A horizon in the past changes nothing. */
  ck_assert(fs_sim_run_until(sim, 5, &error));
  ck_assert(fs_sim_now(sim) == 25);
  ck_assert(fs_sim_run_until(sim, 100, &error));
  ck_assert_int_eq(log.n, 3);
  ck_assert(fs_sim_now(sim) == 100);
  fs_assert_no_error(error);
}
END_TEST

static gboolean fewer_than(void *data)
{
  Log *log = data;
  return log->n < 2;
}

START_TEST(test_sim_run_while)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  Log log = {.sim = sim};
  for (uint64_t i = 0; i < 5; i++)
    fs_sim_at(sim, (FsTime)(10 * (i + 1)), log_event, &log, i);
  g_autoptr(GError) error = NULL;
  ck_assert(fs_sim_run_while(sim, fewer_than, &log, &error));
  ck_assert_int_eq(log.n, 2);
  ck_assert(fs_sim_now(sim) == 20);
  ck_assert_uint_eq(fs_sim_pending(sim), 3);
  ck_assert(fs_sim_run(sim, &error));
  ck_assert_int_eq(log.n, 5);
  fs_assert_no_error(error);
}
END_TEST

START_TEST(test_sim_stop)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  Log log = {.sim = sim, .stop_at = 2};
  for (uint64_t i = 0; i < 4; i++)
    fs_sim_at(sim, (FsTime)(10 * (i + 1)), log_event, &log, i);
  g_autoptr(GError) error = NULL;
  ck_assert(fs_sim_run(sim, &error));
  ck_assert_int_eq(log.n, 2);
  ck_assert(fs_sim_now(sim) == 20);
  /* A stopped run_until does not jump the clock to its horizon. */
  log.stop_at = 3;
  ck_assert(fs_sim_run_until(sim, 1000, &error));
  ck_assert_int_eq(log.n, 3);
  ck_assert(fs_sim_now(sim) == 30);
  /* The next run starts afresh and finishes. */
  ck_assert(fs_sim_run(sim, &error));
  ck_assert_int_eq(log.n, 4);
  ck_assert_uint_eq(fs_sim_pending(sim), 0);
  fs_assert_no_error(error);
}
END_TEST

START_TEST(test_sim_cancel_and_reschedule)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  Log log = {.sim = sim};
  FsEventId a = fs_sim_at(sim, 10, log_event, &log, 1);
  FsEventId b = fs_sim_at(sim, 20, log_event, &log, 2);
  fs_sim_at(sim, 30, log_event, &log, 3);
  ck_assert(fs_sim_cancel(sim, a));
  ck_assert(!fs_sim_cancel(sim, a));
  FsEventId b2 = fs_sim_reschedule(sim, b, 40);
  ck_assert(b2 != FS_EVENT_NONE);
  ck_assert(fs_eventq_time_of(fs_sim_get_queue(sim), b2) == 40);
  g_autoptr(GError) error = NULL;
  ck_assert(fs_sim_run(sim, &error));
  ck_assert_int_eq(log.n, 2);
  ck_assert_uint_eq(log.args[0], 3);
  ck_assert_uint_eq(log.args[1], 2);
  ck_assert(log.times[1] == 40);
}
END_TEST

static void forever(void *ctx, uint64_t arg)
{
  FsSim *sim = ctx;
  fs_sim_after(sim, FS_NS, forever, sim, arg);
}

START_TEST(test_sim_event_limit_error)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  fs_sim_set_event_limit(sim, 1000);
  fs_sim_at(sim, 0, forever, sim, 0);
  g_autoptr(GError) error = NULL;
  ck_assert(!fs_sim_run(sim, &error));
  ck_assert(error != NULL && error->code == FS_RUNTIME_ERROR_LIMIT);
  ck_assert_int_eq(fs_error_exit_status(error), 1);
  fs_assert_error(error, FS_RUNTIME_ERROR, "limit of 1000 events");
  ck_assert_uint_eq(fs_sim_events_run(sim), 1000);
  /* The next event is still pending, and a larger budget continues. */
  ck_assert_uint_eq(fs_sim_pending(sim), 1);
  fs_sim_set_event_limit(sim, 1500);
  ck_assert(!fs_sim_run_until(sim, FS_US * 10, &error));
  ck_assert_uint_eq(fs_sim_events_run(sim), 1500);
  g_clear_error(&error);
  /* Within the budget, no error. */
  fs_sim_set_event_limit(sim, 0);
  ck_assert(fs_sim_run_until(sim, 2000 * FS_NS, &error));
  fs_assert_no_error(error);
}
END_TEST

/* An event that asks for an interrupt after its 100th run, as the SIGINT
 * handler would in the middle of a run. */
static void interrupt_at_100(void *ctx, uint64_t arg)
{
  FsSim *sim = ctx;
  if (fs_sim_events_run(sim) == 100)
    fs_sim_request_interrupt();
  fs_sim_after(sim, FS_NS, interrupt_at_100, sim, arg);
}

START_TEST(test_sim_interrupt)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  ck_assert_uint_eq(fs_sim_default_event_limit(), FS_SIM_MAX_EVENTS);
  fs_sim_at(sim, 0, interrupt_at_100, sim, 0);
  g_autoptr(GError) error = NULL;
  ck_assert(!fs_sim_interrupt_requested());
  ck_assert(!fs_sim_run(sim, &error));
  ck_assert(fs_sim_interrupt_requested());
  ck_assert(error != NULL && error->code == FS_RUNTIME_ERROR_INTERRUPTED);
  ck_assert_int_eq(fs_error_exit_status(error), FS_EXIT_INTERRUPTED);
  fs_assert_error(error, FS_RUNTIME_ERROR, "interrupted at simulated time 99.000 ns after 100 "
                  "events; partial results not written");
  /* Stopped at an event boundary: the next event is pending, the clock at
   * the last event run; every run loop refuses until the request is
   * cleared. */
  ck_assert_uint_eq(fs_sim_pending(sim), 1);
  ck_assert_int_eq(fs_sim_now(sim), 99 * FS_NS);
  ck_assert(!fs_sim_run_until(sim, FS_US, &error));
  ck_assert_uint_eq(fs_sim_events_run(sim), 100);
  g_clear_error(&error);
  fs_sim_clear_interrupt();
  ck_assert(fs_sim_run_until(sim, 150 * FS_NS, &error));
  fs_assert_no_error(error);
  ck_assert_uint_eq(fs_sim_events_run(sim), 151);
}
END_TEST

static void noop(void *ctx, uint64_t arg)
{
  (void)ctx;
  (void)arg;
}

static void schedule_in_past(void *ctx, uint64_t arg)
{
  FsSim *sim = ctx;
  (void)arg;
  fs_sim_at(sim, fs_sim_now(sim) - 1, noop, NULL, 0);
}

/* Runs this executable again in child mode `mode` (see main), which must
 * die from g_error; returns its stderr (caller frees). */
static char *run_child_expecting_abort(const char *mode)
{
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  ck_assert(self != NULL);
  char *argv[] = {self, NULL};
  char **envp = g_environ_setenv(g_get_environ(), "FS_TEST_SIM_CHILD", mode, TRUE);
  char *out = NULL, *err = NULL;
  int status = 0;
  GError *error = NULL;
  gboolean spawned = g_spawn_sync(NULL, argv, envp, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error);
  g_strfreev(envp);
  fs_assert_no_error(error);
  ck_assert(spawned);
  g_free(out);
  ck_assert_msg(WIFSIGNALED(status), "child did not die from a signal (status %d); stderr: %s", status, err);
  return err;
}

START_TEST(test_sim_event_in_the_past_aborts)
{
  g_autofree char *err = run_child_expecting_abort("past");
  ck_assert_msg(strstr(err, "event in the past") != NULL, "stderr: %s", err);
  /* The caller's location (this file) and both times are named. */
  ck_assert_msg(strstr(err, "test-sim.c:") != NULL, "no file:line in: %s", err);
  ck_assert_msg(strstr(err, "t=99 ps") != NULL && strstr(err, "t=100 ps") != NULL, "times missing: %s", err);
}
END_TEST

START_TEST(test_sim_reschedule_in_the_past_aborts)
{
  g_autofree char *err = run_child_expecting_abort("reschedule-past");
  ck_assert_msg(strstr(err, "event in the past") != NULL, "stderr: %s", err);
  ck_assert_msg(strstr(err, "t=49 ps") != NULL && strstr(err, "t=50 ps") != NULL, "times missing: %s", err);
}
END_TEST

/* A time past the clock's range saturates at FS_TIME_MAX, and a run that
 * reaches an event there stops with the clock's range error, the event
 * left pending (issue 21: a wrapped time once aborted in the flow engine). */
START_TEST(test_sim_clock_range_error)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  fs_sim_at(sim, FS_TIME_MAX - 10, noop, NULL, 0);
  g_autoptr(GError) error = NULL;
  ck_assert(fs_sim_run(sim, &error));
  fs_assert_no_error(error);
  ck_assert(fs_sim_now(sim) == FS_TIME_MAX - 10);
  /* now + 20 passes the clock's end: it saturates there. */
  fs_sim_after(sim, 20, noop, NULL, 0);
  ck_assert(!fs_sim_run(sim, &error));
  ck_assert(g_error_matches(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_CLOCK));
  ck_assert_int_eq(fs_error_exit_status(error), 1);
  fs_assert_error(error, FS_RUNTIME_ERROR, "simulated time exceeds the clock's range (int64 "
                  "picoseconds: at most 9223372.036 s, about 106 days)");
  ck_assert_uint_eq(fs_sim_pending(sim), 1);
  ck_assert(fs_sim_now(sim) == FS_TIME_MAX - 10);
  ck_assert(fs_time_add_sat(FS_TIME_MAX - 10, 9) == FS_TIME_MAX - 1);
  ck_assert(fs_time_mul_sat(FS_SEC, 10000000) == FS_TIME_MAX);
  ck_assert(fs_time_mul_sat(FS_SEC, 9000000) == 9000000 * FS_SEC);
  ck_assert(fs_time_from_ps(1e19) == FS_TIME_MAX);
  ck_assert(fs_time_from_ps(2.5) == 3);
}
END_TEST

/* An event at the clock's end moved earlier before the loop reaches it is
 * no error; run_until short of the end leaves it pending quietly. */
START_TEST(test_sim_clock_end_moved_back)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  FsEventId id = fs_sim_at(sim, FS_TIME_MAX, noop, NULL, 0);
  g_autoptr(GError) error = NULL;
  ck_assert(fs_sim_run_until(sim, FS_SEC, &error));
  fs_assert_no_error(error);
  fs_sim_reschedule(sim, id, 2 * FS_SEC);
  ck_assert(fs_sim_run(sim, &error));
  fs_assert_no_error(error);
  ck_assert(fs_sim_now(sim) == 2 * FS_SEC);
  /* Rewinding: only when nothing is pending. */
  fs_sim_at(sim, 3 * FS_SEC, noop, NULL, 0);
  ck_assert(!fs_sim_rewind(sim));
  ck_assert(fs_sim_run(sim, &error));
  ck_assert(fs_sim_rewind(sim));
  ck_assert(fs_sim_now(sim) == 0);
}
END_TEST

/* Child modes: each must abort before returning. */
static int child_main(const char *mode)
{
  FsSim *sim = fs_sim_new();
  if (g_str_equal(mode, "past")) {
    fs_sim_at(sim, 100, schedule_in_past, sim, 0);
    fs_sim_run(sim, NULL);
  } else if (g_str_equal(mode, "reschedule-past")) {
    FsEventId id = fs_sim_at(sim, 100, noop, NULL, 0);
    fs_sim_run_until(sim, 50, NULL);
    fs_sim_reschedule(sim, id, 49);
  }
  fs_sim_free(sim);
  return 0;
}

int main(void)
{
  const char *mode = g_getenv("FS_TEST_SIM_CHILD");
  if (mode != NULL)
    return child_main(mode);
  Suite *s = suite_create("sim");
  FS_ADD_TEST(s, test_sim_clock_advances);
  FS_ADD_TEST(s, test_sim_after_is_relative_to_now);
  FS_ADD_TEST(s, test_sim_run_until_leaves_later_events);
  FS_ADD_TEST(s, test_sim_run_while);
  FS_ADD_TEST(s, test_sim_stop);
  FS_ADD_TEST(s, test_sim_cancel_and_reschedule);
  FS_ADD_TEST(s, test_sim_event_limit_error);
  FS_ADD_TEST(s, test_sim_interrupt);
  FS_ADD_TEST(s, test_sim_clock_range_error);
  FS_ADD_TEST(s, test_sim_clock_end_moved_back);
  FS_ADD_TEST(s, test_sim_event_in_the_past_aborts);
  FS_ADD_TEST(s, test_sim_reschedule_in_the_past_aborts);
  return fs_test_run_suite(s);
}
