/* mpi.c — see mpi.h. */
#include "sweep/mpi.h"

#include <jansson.h>
#include <mpi.h>
#include <string.h>

#include "core/sim.h"
#include "util/error.h"

#define TAG_RESULT 17
#define TAG_DONE 18
#define TAG_STOP 19
#define TAG_END 20

/* How long a rank that waits for a message sleeps between looks.  Open
 * MPI's blocking calls spin on their core: on a machine whose cores the
 * ranks share, a rank waiting so takes them from the ranks still working
 * (2 ranks on 2 cores ran a 10,000-point sweep slower than 1). */
#define WAIT_POLL_US 200

/* Waits, asleep between looks, until a message from source with tag is
 * there (MPI_ANY_SOURCE, MPI_ANY_TAG allowed); *st: its envelope. */
static void wait_message(int source, int tag, MPI_Status *st)
{
  int flag = 0;
  for (;;) {
    MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, st);
    if (flag)
      return;
    g_usleep(WAIT_POLL_US);
  }
}

static char *result_to_text(const FsSweepResult *r)
{
  json_t *o = json_object();
  json_object_set_new(o, "i", json_integer(r->index));
  json_object_set_new(o, "ok", json_boolean(r->ok));
  json_object_set_new(o, "e", r->error ? json_string(r->error) : json_null());
  json_t *v = json_array();
  for (guint i = 0; r->values && r->values[i]; i++)
    json_array_append_new(v, json_string(r->values[i]));
  json_object_set_new(o, "v", v);
  char *s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return s;
}

static void text_to_result(const char *text, FsSweepResult *r)
{
  json_t *o = json_loads(text, 0, NULL);
  g_assert(o != NULL);
  r->index = (guint)json_integer_value(json_object_get(o, "i"));
  r->ok = json_is_true(json_object_get(o, "ok"));
  const char *e = json_string_value(json_object_get(o, "e"));
  r->error = e ? g_strdup(e) : NULL;
  json_t *v = json_object_get(o, "v");
  r->values = NULL;
  if (r->ok) {
    r->values = g_new0(char *, json_array_size(v) + 1);
    for (size_t i = 0; i < json_array_size(v); i++)
      r->values[i] = g_strdup(json_string_value(json_array_get(v, i)));
  }
  json_decref(o);
}

/* Rank 0: receives one message from another rank (blocking when wait): a
 * result, delivered, or a rank's TAG_DONE, counted. */
static gboolean receive(FsSweepMpi *m, gboolean wait)
{
  MPI_Status st;
  int flag = 1;
  if (!wait)
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
  else
    wait_message(MPI_ANY_SOURCE, MPI_ANY_TAG, &st);
  if (!flag)
    return FALSE;
  if (st.MPI_TAG == TAG_DONE) {
    int peer_status;
    MPI_Recv(&peer_status, 1, MPI_INT, st.MPI_SOURCE, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    m->ranks_done++;
    if (peer_status == FS_EXIT_INTERRUPTED)
      fs_sim_request_interrupt(); /* one rank stopped: the sweep stops */
    return TRUE;
  }
  int len;
  MPI_Get_count(&st, MPI_CHAR, &len);
  g_autofree char *buf = g_malloc(len + 1);
  MPI_Recv(buf, len, MPI_CHAR, st.MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  buf[len] = '\0';
  FsSweepResult r = {0};
  text_to_result(buf, &r);
  m->deliver(&r, m->ud);
  return TRUE;
}

void fs_sweep_mpi_poll_root(void *ud)
{
  FsSweepMpi *m = ud;
  while (receive(m, FALSE))
    ;
  if (fs_sim_interrupt_requested() && !m->stop_sent) {
    m->stop_sent = TRUE;
    for (int r = 1; r < m->size; r++) {
      int nothing = 0;
      MPI_Send(&nothing, 1, MPI_INT, r, TAG_STOP, MPI_COMM_WORLD);
    }
  }
}

void fs_sweep_mpi_poll_other(void *ud)
{
  (void)ud;
  int flag = 0;
  MPI_Status st;
  MPI_Iprobe(0, TAG_STOP, MPI_COMM_WORLD, &flag, &st);
  if (flag) {
    int nothing;
    MPI_Recv(&nothing, 1, MPI_INT, 0, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fs_sim_request_interrupt();
  }
}

void fs_sweep_mpi_send_result(FsSweepResult *r, void *ud)
{
  (void)ud;
  g_autofree char *t = result_to_text(r);
  MPI_Send(t, (int)strlen(t), MPI_CHAR, 0, TAG_RESULT, MPI_COMM_WORLD);
}

gboolean fs_sweep_mpi_launched(void)
{
  return g_getenv("OMPI_COMM_WORLD_SIZE") != NULL || g_getenv("PMI_SIZE") != NULL ||
         g_getenv("PMIX_RANK") != NULL;
}

void fs_sweep_mpi_init(FsSweepMpi *m, FsSweepResultFn deliver, void *ud)
{
  memset(m, 0, sizeof *m);
  int provided;
  MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &m->size);
  m->deliver = deliver;
  m->ud = ud;
}

void fs_sweep_mpi_agree(FsSweepMpi *m, int *status, guint *done)
{
  (void)m;
  int msg[2] = { *status, (int)*done };
  MPI_Bcast(msg, 2, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &msg[0], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  *status = msg[0];
  *done = (guint)msg[1];
}

void fs_sweep_mpi_finish(FsSweepMpi *m, gboolean *ran, GError **error)
{
  if (m->rank != 0) {
    int st = *ran ? 0
             : g_error_matches(*error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED) ? FS_EXIT_INTERRUPTED
                                                                                     : 1;
    MPI_Send(&st, 1, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD);
    return;
  }
  if (!*ran)
    fs_sweep_mpi_poll_root(m); /* tells the others to stop when interrupted */
  while (m->ranks_done < m->size - 1)
    receive(m, TRUE);
  if (*ran && fs_sim_interrupt_requested()) {
    /* Another rank was interrupted after this one had finished. */
    *ran = FALSE;
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED, "interrupted");
  }
}

void fs_sweep_mpi_end(FsSweepMpi *m, int *status)
{
  /* The others wait asleep until rank 0 (the last to finish: it writes
   * the file) is here, so that the reduction finds every rank at once. */
  int nothing = 0;
  if (m->rank == 0) {
    for (int r = 1; r < m->size; r++)
      MPI_Send(&nothing, 1, MPI_INT, r, TAG_END, MPI_COMM_WORLD);
  } else {
    MPI_Status st;
    wait_message(0, TAG_END, &st);
    MPI_Recv(&nothing, 1, MPI_INT, 0, TAG_END, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Allreduce(MPI_IN_PLACE, status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
}
