/* coll-test.c — see coll-test.h. */
#include "scenario/coll-test.h"

#include <string.h>

#include "collrun/coll-topo.h"
#include "util/error.h"
#include "util/limits.h"
#include "util/units.h"

static void bad_op(GError **error, const char *text)
{
  g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
              "unknown collective or reduction op \"%s\"; expected a collective (see --list), all, "
              "or sum, prod, max, min, avg", text);
}

/* See coll-test.h. Fills sel from the command's words: op is a collective, "all", or (without
 * redop) a reduction op that selects all-reduce with it; no op means all-reduce. dtype is one
 * datatype or "all", float when absent. Sets G_OPTION_ERROR_BAD_VALUE naming the unknown word.
 * sel keeps pointers to op and redop, which must outlive it. */
gboolean fs_coll_selection_parse(FsCollSelection *sel, const char *op, const char *redop,
                                 const char *dtype, GError **error)
{
  sel->n_ops = 0;
  sel->redop = redop;
  FsCollRedop r;
  if (op == NULL) {
    sel->ops[sel->n_ops++] = FS_COLL_ALL_REDUCE;
  } else if (strcmp(op, "all") == 0) {
    for (guint o = 0; o < FS_COLL_N_OPS; o++)
      sel->ops[sel->n_ops++] = (FsCollOp)o;
  } else if (fs_coll_op_from_name(op, &sel->ops[0])) {
    sel->n_ops = 1;
  } else if (redop != NULL) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "unknown collective \"%s\" (see --list)", op);
    return FALSE;
  } else if (fs_coll_redop_from_name(op, &r)) {
    sel->ops[sel->n_ops++] = FS_COLL_ALL_REDUCE;
    sel->redop = op;
  } else {
    bad_op(error, op);
    return FALSE;
  }
  if (sel->redop != NULL && strcmp(sel->redop, "all") != 0 && !fs_coll_redop_from_name(sel->redop, &r)) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "unknown reduction op \"%s\"; expected sum, prod, max, min, avg or all", sel->redop);
    return FALSE;
  }
  sel->n_dtypes = 0;
  if (dtype != NULL && strcmp(dtype, "all") == 0) {
    for (guint d = 0; d < FS_COLL_N_DTYPES; d++)
      sel->dtypes[sel->n_dtypes++] = (FsCollDtype)d;
  } else {
    sel->dtypes[sel->n_dtypes++] = FS_COLL_DT_FLOAT;
    if (dtype != NULL && !fs_coll_dtype_from_name(dtype, &sel->dtypes[0])) {
      g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "unknown datatype \"%s\"; expected int8, uint8, int32, uint32, int64, uint64, half, "
                  "float, double, bfloat16, f8e4m3, f8e5m2 or all", dtype);
      return FALSE;
    }
  }
  return TRUE;
}

/* The redops op runs with: all five for "all" when op reduces, else the
 * one named (sum by default). */
static guint op_redops(const FsCollSelection *sel, FsCollOp op, FsCollRedop *out)
{
  guint n = 0;
  if (sel->redop != NULL && strcmp(sel->redop, "all") == 0) {
    if (!fs_coll_op_reduces(op)) {
      out[0] = FS_COLL_REDOP_SUM;
      return 1;
    }
    for (guint r = 0; r < FS_COLL_N_REDOPS; r++)
      out[n++] = (FsCollRedop)r;
    return n;
  }
  out[0] = FS_COLL_REDOP_SUM;
  if (sel->redop != NULL)
    fs_coll_redop_from_name(sel->redop, &out[0]);
  return 1;
}

static gboolean parse_size(const char *text, uint64_t fallback, uint64_t *out, GError **error)
{
  if (text == NULL) {
    *out = fallback;
    return TRUE;
  }
  return fs_parse_size(text, out, error);
}

/* At most this many sizes in one sweep (-b to -e by -f or -i), unless
 * $FABRICSIM_MAX_SIZES (a positive integer) says otherwise: a typo such as
 * "-b 1 -e 16G -i 1" would otherwise run for days. */
#define MAX_SIZES 10000

/* Whether the sweep runs at most the allowed number of sizes, counted as
 * bench.c steps through them (a factor stops at 0 or before an overflow;
 * the count saturates at G_MAXUINT64).  Else a usage error.  Cost: O(log)
 * for a factor, O(1) for a step. */
static gboolean sizes_within_limit(const FsCollSweep *sw, GError **error)
{
  uint64_t n;
  if (sw->step_factor > 1) {
    n = 1;
    for (uint64_t size = sw->min_bytes; size != 0 && size <= G_MAXUINT64 / sw->step_factor &&
                                        size * sw->step_factor <= sw->max_bytes;
         size *= sw->step_factor)
      n++;
  } else {
    uint64_t q = (sw->max_bytes - sw->min_bytes) / sw->step_bytes;
    n = q == G_MAXUINT64 ? q : q + 1;
  }
  uint64_t limit = fs_env_limit("FABRICSIM_MAX_SIZES", MAX_SIZES, G_MAXUINT64);
  if (n <= limit)
    return TRUE;
  g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR,
              "-b %" G_GUINT64_FORMAT " -e %" G_GUINT64_FORMAT " %s %" G_GUINT64_FORMAT
              " is %" G_GUINT64_FORMAT " sizes; at most %" G_GUINT64_FORMAT " are "
              "allowed (use a larger -i or -f; FABRICSIM_MAX_SIZES raises the limit)",
              sw->min_bytes, sw->max_bytes, sw->step_factor > 1 ? "-f" : "-i",
              sw->step_factor > 1 ? sw->step_factor : sw->step_bytes, n, limit);
  return FALSE;
}

gboolean fs_coll_sizes_parse(FsCollSweep *sw, const char *min, const char *max, gint64 factor,
                             const char *step, GError **error)
{
  if (!parse_size(min, 32u << 20, &sw->min_bytes, error) ||
      !parse_size(max, 32u << 20, &sw->max_bytes, error) ||
      !parse_size(step, 1u << 20, &sw->step_bytes, error))
    return FALSE;
  if (min != NULL && max == NULL)
    sw->max_bytes = sw->min_bytes;
  if (sw->min_bytes > sw->max_bytes) {
    g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR,
                "minbytes (%" G_GUINT64_FORMAT ") is larger than maxbytes (%" G_GUINT64_FORMAT ")",
                sw->min_bytes, sw->max_bytes);
    return FALSE;
  }
  if (factor < 0 || (factor <= 1 && sw->step_bytes == 0)) {
    g_set_error_literal(error, G_OPTION_ERROR, FS_USAGE_ERROR,
                        "the step must grow the size: -f N with N >= 2, or -i SIZE with SIZE >= 1");
    return FALSE;
  }
  sw->step_factor = (uint64_t)factor;
  return sizes_within_limit(sw, error);
}

void fs_coll_test_free(FsCollTest *r)
{
  if (r == NULL)
    return;
  for (guint o = 0; o < FS_COLL_N_OPS; o++)
    g_free(r->skipped[o]);
  if (r->rows != NULL)
    g_array_unref(r->rows);
  fs_comm_free(r->comm);
  g_free(r->gpus);
  fs_scenario_world_free(r->world);
  g_free(r);
}

/* Runs collective o of the selection: every datatype, the first redop
 * simulated and the others repeated under their own label.  FALSE with
 * the error; an unsupported collective of several is skipped instead. */
static gboolean run_op(FsCollTest *r, const FsNcclParams *np, guint o, GError **error)
{
  const FsCollSelection *sel = &r->sel;
  FsCollSweep *sw = &r->sweep;
  guint op_first = r->rows->len;
  FsCollRedop redops[FS_COLL_N_REDOPS];
  guint n_redops = op_redops(sel, sel->ops[o], redops);
  sw->op = sel->ops[o];
  for (guint d = 0; d < sel->n_dtypes; d++) {
    guint first = r->rows->len;
    sw->dtype = sel->dtypes[d];
    sw->redop = redops[0];
    GError *err = NULL;
    if (!fs_coll_bench(np, &r->sys, r->comm, sw, r->world->net, fs_coll_topo_xfer, r->world->tnet,
                       r->rows, &err)) {
      /* -o all leaves out what cannot run on this communicator (a
       * hypercube on 3 ranks), saying why; unless nothing can. */
      if (sel->n_ops == 1 || !g_error_matches(err, FS_COLL_ERROR, FS_COLL_ERROR_UNSUPPORTED)) {
        g_propagate_error(error, err);
        return FALSE;
      }
      r->skipped[o] = g_strdup(err->message);
      g_error_free(err);
      g_array_set_size(r->rows, op_first);
      break;
    }
    /* The model's time does not depend on the reduction op (the same plan,
     * the same bytes): the other redops repeat the first one's rows under
     * their own label, as nccl-tests prints one sweep per redop. */
    guint len = r->rows->len;
    for (guint k = 1; k < n_redops; k++)
      for (guint i = first; i < len; i++) {
        FsNcclTestsRow row = g_array_index(r->rows, FsNcclTestsRow, i);
        row.redop_label = fs_coll_op_redop_label(sw->op, redops[k]);
        g_array_append_val(r->rows, row);
      }
  }
  r->ends[o] = r->rows->len;
  if (r->skipped[o] != NULL) {
    r->avgs[o] = 0;
    return TRUE;
  }
  g_autoptr(GArray) mine = g_array_new(FALSE, FALSE, sizeof(FsNcclTestsRow));
  g_array_append_vals(mine, &g_array_index(r->rows, FsNcclTestsRow, op_first), r->rows->len - op_first);
  r->avgs[o] = fs_coll_bench_avg_busbw(mine);
  return TRUE;
}

gboolean fs_coll_launch_from_flags(const char *ngpus, gint threads, gint graph, gint nprocs,
                                   gboolean have_list, FsCollLaunch *l, char **ranks,
                                   GError **error)
{
  fs_coll_launch_init(l);
  *ranks = NULL;
  guint64 g = 1;
  if (ngpus != NULL && !g_ascii_string_to_unsigned(ngpus, 10, 1, 1024, &g, NULL)) {
    g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR,
                "-g takes the GPUs per thread, a count from 1 to 1024, got \"%s\"", ngpus);
    return FALSE;
  }
  if (threads < 0 || threads > 1024 || graph < 0 || graph > 1024 || nprocs < 0 || nprocs > 65536) {
    g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR, "%s",
                threads < 0 || threads > 1024 ? "-t takes a thread count from 1 to 1024"
                : graph < 0 || graph > 1024   ? "-G takes an iteration count from 0 to 1024"
                                              : "--nprocs takes a process count from 1 to 65536");
    return FALSE;
  }
  if (have_list && nprocs > 0) {
    g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR,
                "--nprocs counts the GPUs as --gpus LIST does: give one of them");
    return FALSE;
  }
  l->gpus_per_thread = (guint)g;
  l->threads = threads > 0 ? (guint)threads : 1;
  l->graph_iters = (guint)graph;
  if (!have_list && (ngpus != NULL || threads > 0 || nprocs > 0))
    *ranks = g_strdup_printf("%" G_GUINT64_FORMAT,
                             (guint64)(nprocs > 0 ? nprocs : 1) * l->threads * l->gpus_per_thread);
  return TRUE;
}

/* Whether n GPUs split into processes of -t x -g GPUs each (coll/launch.h), each process's
 * GPUs on one host (nccl-tests drives a process's GPUs from that host).  A zero launch is the
 * default (-t 1 -g 1). */
static gboolean launch_fits(const FsTopo *topo, const FsCollLaunch *l, const guint *gpus, guint n,
                            GError **error)
{
  guint per = l->gpus_per_thread == 0 ? 1 : l->threads * l->gpus_per_thread;
  if (n % per != 0) {
    g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR,
                "-t %u x -g %u = %u GPUs per process does not divide the %u GPUs", l->threads,
                l->gpus_per_thread, per, n);
    return FALSE;
  }
  for (guint i = 0; i < n; i++) {
    int h0 = fs_topo_node(topo, gpus[i - i % per])->host, h = fs_topo_node(topo, gpus[i])->host;
    if (h != h0) {
      g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR,
                  "-t %u x -g %u = %u GPUs per process, but process %u's GPUs %u and %u are on "
                  "different hosts (one process drives the GPUs of its host: give -g and -t "
                  "whose product divides the GPUs per host, or --nprocs)", l->threads,
                  l->gpus_per_thread, per, i / per, gpus[i - i % per], gpus[i]);
      return FALSE;
    }
  }
  return TRUE;
}

/* See coll-test.h. Builds the world and communicator over the GPUs named by gpus, checks the
 * root of rooted collectives, then simulates every selected op over the sweep, collecting the
 * rows. Sets an error when the GPUs, communicator or root are bad, when a run fails, or with
 * FS_COLL_ERROR_UNSUPPORTED when every op was skipped. The caller owns the result. */
FsCollTest *fs_coll_test_new(const FsScenario *sc, const FsCollSelection *sel, const FsCollSweep *sw,
                           const char *gpus, GError **error)
{
  const FsTopo *topo = fs_scenario_topo(sc);
  const FsNcclParams *np = fs_scenario_nccl(sc);
  g_return_val_if_fail(topo != NULL && np != NULL, NULL);
  g_autoptr(FsCollTest) r = g_new0(FsCollTest, 1);
  r->sel = *sel;
  r->sweep = *sw;
  r->sweep.prefs = *fs_scenario_prefs(sc);
  if ((r->gpus = fs_coll_parse_gpus(topo, gpus, &r->n, error)) == NULL ||
      !launch_fits(topo, &r->sweep.launch, r->gpus, r->n, error))
    return NULL;
  r->world = fs_scenario_world_new(sc, NULL, FS_NET_MAXMIN, NULL);
  r->comm = fs_coll_comm_from_topo(r->world->router, r->gpus, r->n, np->max_channels, error);
  if (r->comm == NULL)
    return NULL;
  for (guint o = 0; o < sel->n_ops; o++)
    if (fs_coll_op_rooted(sel->ops[o]) && sw->root >= r->n) {
      g_set_error(error, G_OPTION_ERROR, FS_USAGE_ERROR, "root %d is not a rank of %u GPUs",
                  (int)sw->root, r->n);
      return NULL;
    }
  if (!fs_coll_sysinfo_from_topo(np, r->world->router, r->comm, &r->sys, error))
    return NULL;
  fs_coll_prefs_apply_sys(&r->sweep.prefs, &r->sys);
  r->rows = g_array_new(FALSE, FALSE, sizeof(FsNcclTestsRow));
  fs_coll_topo_alone_routes(&r->sweep.alone, r->world->tnet, TRUE);
  guint n_skipped = 0;
  for (guint o = 0; o < sel->n_ops; o++) {
    if (!run_op(r, np, o, error))
      return NULL;
    n_skipped += r->skipped[o] != NULL;
  }
  if (n_skipped == sel->n_ops) {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_UNSUPPORTED, "%s", r->skipped[0]);
    return NULL;
  }
  return g_steal_pointer(&r);
}
