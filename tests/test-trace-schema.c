/* test-trace-schema.c — the Chrome trace-event JSON that `train --trace`,
 * `replay --trace` and `flows --trace` write, loaded back with jansson and
 * checked event by event against the Trace Event Format (the fields each
 * phase requires and their types), plus fabricsim's own layout: a process
 * per host, a named track per GPU stream, collectives as matched async
 * spans, every flow arrow's start matched by its end, per-link counter
 * tracks whose samples integrate to the link's mean utilisation. */
#include <check.h>
#include <glib/gstdio.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "catalog/catalog.h"
#include "coll/nccl-params.h"
#include "compute/efficiency.h"
#include "core/sim.h"
#include "net/flow.h"
#include "report/link-sampler.h"
#include "report/trace-json.h"
#include "scenario/scenario.h"
#include "testutil.h"
#include "topo/topo.h"
#include "util/units.h"
#include "workload/executor.h"

/* What a valid trace contained. */
typedef struct {
  guint x, m, c, b, e, s, f;
  guint processes;       /* process_name events */
  guint threads;         /* thread_name events */
  guint counter_tracks;  /* distinct C names */
} Counts;

static gboolean is_num(json_t *v) { return json_is_integer(v) || json_is_real(v); }

/* Validates one trace document; on the first violation returns FALSE and
 * sets *why (caller frees). */
static gboolean validate(json_t *root, Counts *k, char **why)
{
  memset(k, 0, sizeof *k);
#define BAD(...) do { *why = g_strdup_printf(__VA_ARGS__); return FALSE; } while (0)
  if (!json_is_object(root))
    BAD("top level is not an object");
  json_t *unit = json_object_get(root, "displayTimeUnit");
  if (unit != NULL && (!json_is_string(unit) || (strcmp(json_string_value(unit), "ms") != 0 &&
                                                  strcmp(json_string_value(unit), "ns") != 0)))
    BAD("displayTimeUnit must be \"ms\" or \"ns\"");
  json_t *evs = json_object_get(root, "traceEvents");
  if (!json_is_array(evs))
    BAD("traceEvents is not an array");
  g_autoptr(GHashTable) threads = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) procs = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_autoptr(GHashTable) async = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) flows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) ctracks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) used = g_ptr_array_new_with_free_func(g_free);
  size_t i;
  json_t *e;
  json_array_foreach(evs, i, e) {
    if (!json_is_object(e))
      BAD("event %zu is not an object", i);
    const char *ph = json_string_value(json_object_get(e, "ph"));
    if (ph == NULL || strlen(ph) != 1)
      BAD("event %zu: ph must be a one-letter string", i);
    json_t *pid = json_object_get(e, "pid"), *tid = json_object_get(e, "tid");
    json_t *ts = json_object_get(e, "ts"), *name = json_object_get(e, "name");
    json_t *cat = json_object_get(e, "cat"), *args = json_object_get(e, "args");
    json_t *id = json_object_get(e, "id");
    if (!json_is_integer(pid) || json_integer_value(pid) < 0)
      BAD("event %zu (%s): pid must be a non-negative integer", i, ph);
    if (tid != NULL && !json_is_integer(tid))
      BAD("event %zu (%s): tid must be an integer", i, ph);
    if (!json_is_string(name))
      BAD("event %zu (%s): name must be a string", i, ph);
    if (args != NULL && !json_is_object(args))
      BAD("event %zu (%s): args must be an object", i, ph);
    if (ph[0] != 'M' && (!is_num(ts) || json_number_value(ts) < 0))
      BAD("event %zu (%s): ts must be a non-negative number", i, ph);
    json_int_t p = json_integer_value(pid);
    g_autofree char *track = g_strdup_printf("%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT, p,
                                             tid ? json_integer_value(tid) : -1);
    switch (ph[0]) {
    case 'M': {
      const char *n = json_string_value(name);
      if (args == NULL)
        BAD("event %zu: metadata without args", i);
      if (strcmp(n, "process_name") == 0 || strcmp(n, "thread_name") == 0) {
        if (!json_is_string(json_object_get(args, "name")))
          BAD("event %zu: %s needs args.name (a string)", i, n);
      } else if (strcmp(n, "process_sort_index") == 0 || strcmp(n, "thread_sort_index") == 0) {
        if (!json_is_integer(json_object_get(args, "sort_index")))
          BAD("event %zu: %s needs args.sort_index (an integer)", i, n);
      } else {
        BAD("event %zu: unknown metadata \"%s\"", i, n);
      }
      if (g_str_has_prefix(n, "thread") && tid == NULL)
        BAD("event %zu: %s without tid", i, n);
      if (strcmp(n, "thread_name") == 0) {
        g_hash_table_add(threads, g_strdup(track));
        k->threads++;
      }
      if (strcmp(n, "process_name") == 0) {
        g_hash_table_add(procs, GINT_TO_POINTER((int)p));
        k->processes++;
      }
      k->m++;
      break;
    }
    case 'X': {
      json_t *dur = json_object_get(e, "dur");
      if (!json_is_string(cat))
        BAD("event %zu (X): cat must be a string", i);
      if (tid == NULL)
        BAD("event %zu (X): no tid", i);
      if (!is_num(dur) || json_number_value(dur) < 0)
        BAD("event %zu (X): dur must be a non-negative number", i);
      g_ptr_array_add(used, g_strdup(track));
      k->x++;
      break;
    }
    case 'C': {
      const char *key;
      json_t *v;
      if (args == NULL || json_object_size(args) == 0)
        BAD("event %zu (C): a counter needs args with values", i);
      json_object_foreach(args, key, v) {
        if (!is_num(v))
          BAD("event %zu (C): args.%s is not a number", i, key);
        if (strcmp(key, "utilisation") == 0 && (json_number_value(v) < 0 || json_number_value(v) > 1))
          BAD("event %zu (C): utilisation %g outside [0, 1]", i, json_number_value(v));
      }
      g_hash_table_add(ctracks, g_strdup(json_string_value(name)));
      k->c++;
      break;
    }
    case 'b':
    case 'e':
    case 's':
    case 'f': {
      if (!json_is_string(cat))
        BAD("event %zu (%s): cat must be a string", i, ph);
      if (!json_is_integer(id) && !json_is_string(id))
        BAD("event %zu (%s): id must be an integer or a string", i, ph);
      gboolean flow = ph[0] == 's' || ph[0] == 'f';
      if (flow && tid == NULL)
        BAD("event %zu (%s): a flow event needs a tid", i, ph);
      if (ph[0] == 'f') {
        const char *bp = json_string_value(json_object_get(e, "bp"));
        if (bp != NULL && strcmp(bp, "e") != 0)
          BAD("event %zu (f): bp must be \"e\"", i);
      }
      g_autofree char *idtxt = json_is_integer(id)
        ? g_strdup_printf("%" JSON_INTEGER_FORMAT, json_integer_value(id)) : g_strdup(json_string_value(id));
      char *key = g_strdup_printf("%s/%s", json_string_value(cat), idtxt);
      GHashTable *open = flow ? flows : async;
      gboolean starts = ph[0] == 'b' || ph[0] == 's';
      double *t0 = g_hash_table_lookup(open, key);
      if (starts) {
        if (t0 != NULL) {
          g_free(key);
          BAD("event %zu (%s): id %s opened twice", i, ph, idtxt);
        }
        double *t = g_new(double, 1);
        *t = json_number_value(ts);
        g_hash_table_insert(open, key, t);
      } else {
        if (t0 == NULL) {
          g_free(key);
          BAD("event %zu (%s): id %s ends without a start", i, ph, idtxt);
        }
        if (json_number_value(ts) < *t0) {
          g_free(key);
          BAD("event %zu (%s): id %s ends before it starts", i, ph, idtxt);
        }
        g_hash_table_remove(open, key);
        g_free(key);
      }
      if (ph[0] == 'b') k->b++;
      if (ph[0] == 'e') k->e++;
      if (ph[0] == 's') k->s++;
      if (ph[0] == 'f') k->f++;
      if (flow)
        g_ptr_array_add(used, g_strdup(track));
      break;
    }
    default:
      BAD("event %zu: unexpected phase \"%s\"", i, ph);
    }
  }
  if (g_hash_table_size(async) > 0)
    BAD("%u async spans never end", g_hash_table_size(async));
  if (g_hash_table_size(flows) > 0)
    BAD("%u flow arrows never arrive", g_hash_table_size(flows));
  for (guint u = 0; u < used->len; u++) {
    const char *t = g_ptr_array_index(used, u);
    if (!g_hash_table_contains(threads, t))
      BAD("track %s has events but no thread_name", t);
    if (!g_hash_table_contains(procs, GINT_TO_POINTER(atoi(t))))
      BAD("process %d has events but no process_name", atoi(t));
  }
  k->counter_tracks = g_hash_table_size(ctracks);
  return TRUE;
#undef BAD
}

static void assert_valid(json_t *root, Counts *k)
{
  g_autofree char *why = NULL;
  ck_assert_msg(validate(root, k, &why), "invalid trace: %s", why);
}

static json_t *load(const char *path)
{
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  ck_assert_msg(root != NULL, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
  return root;
}

/* Runs the fabricsim binary ($FABRICSIM) with args; asserts exit 0. */
static void run_cli(const char *const *args)
{
  const char *exe = g_getenv("FABRICSIM");
  ck_assert_msg(exe != NULL, "FABRICSIM is not set");
  g_autoptr(GPtrArray) argv = g_ptr_array_new();
  g_ptr_array_add(argv, (char *)exe);
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add(argv, (char *)args[i]);
  g_ptr_array_add(argv, NULL);
  g_autofree char *err = NULL;
  gint status = 0;
  GError *error = NULL;
  ck_assert(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                         NULL, &err, &status, &error));
  ck_assert_msg(g_spawn_check_wait_status(status, NULL), "fabricsim failed: %s", err);
}

START_TEST(test_trace_train_cli)
{
  g_autofree char *dir = g_dir_make_tmp("fs-trace-XXXXXX", NULL);
  g_autofree char *out = g_build_filename(dir, "step.json", NULL);
  g_autofree char *topo = fs_test_source_path("topologies/dgx-h100-ib-ndr.yaml");
  g_autofree char *wl = fs_test_source_path("workloads/llama2-7b.yaml");
  /* 2 hosts, tp 2 × pp 2 × dp 4: pipeline sends, DP collectives across hosts. */
  const char *args[] = { "train", topo, wl, "-D", "nodes=2", "--tp=2", "--pp=2", "--num-layers=4",
                         "--global-batch-size=32", "--trace", out, NULL };
  run_cli(args);
  json_t *root = load(out);
  Counts k;
  assert_valid(root, &k);
  ck_assert_uint_ge(k.processes, 3);         /* two hosts and the links */
  ck_assert_uint_ge(k.threads, 8);           /* compute, pp, dp … per simulated rank */
  ck_assert_uint_gt(k.x, 0);
  ck_assert_uint_gt(k.b, 0);                 /* collectives */
  ck_assert_uint_eq(k.b, k.e);
  ck_assert_uint_gt(k.s, 0);                 /* pipeline sends */
  ck_assert_uint_eq(k.s, k.f);
  ck_assert_uint_ge(k.counter_tracks, 2);
  ck_assert_uint_gt(k.c, 2 * k.counter_tracks); /* sampled over time, not one mean level */
  json_decref(root);
  g_remove(out);
  g_rmdir(dir);
}
END_TEST

START_TEST(test_trace_replay_cli)
{
  g_autofree char *dir = g_dir_make_tmp("fs-trace-XXXXXX", NULL);
  g_autofree char *out = g_build_filename(dir, "replay.json", NULL);
  g_autofree char *topo = fs_test_source_path("topologies/dgx-h100.yaml");
  g_autofree char *tr = fs_test_source_path("workloads/traces/pipeline-2stage.json");
  const char *args[] = { "replay", topo, tr, "--trace", out, NULL };
  run_cli(args);
  json_t *root = load(out);
  Counts k;
  assert_valid(root, &k);
  ck_assert_uint_gt(k.x, 0);
  ck_assert_uint_gt(k.s, 0);                 /* send → recv partners */
  ck_assert_uint_eq(k.s, k.f);
  json_decref(root);
  g_remove(out);
  g_rmdir(dir);
}
END_TEST

/* The sampler's bins integrate to the channel's volume: mean of the
 * counter samples, weighted by bin width = mean utilisation. */
START_TEST(test_trace_sampler_integrates_to_mean)
{
  GError *err = NULL;
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(NULL, &err);
  fs_assert_no_error(err);
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(NULL, &err);
  fs_assert_no_error(err);
  g_autoptr(FsNcclParams) np = fs_nccl_params_load_default(&err);
  fs_assert_no_error(err);
  g_autofree char *tp = fs_test_source_path("topologies/dgx-h100.yaml");
  g_autoptr(FsTopo) topo = fs_topo_load_file(tp, cat, NULL, &err);
  fs_assert_no_error(err);
  const char *text =
    "name: toy\nmodel:\n  layers: 8\n  hidden: 1024\n  ffn_hidden: 4096\n  heads: 16\n"
    "  vocab: 32000\n  seq_length: 1024\ntraining:\n  global_batch: 64\n  micro_batch: 2\n"
    "  dtype: bf16\nparallel:\n  tp: 2\n  pp: 2\n  zero_stage: 1\n";
  g_autoptr(FsWorkload) w = fs_workload_load_string(text, "toy.yaml", NULL, NULL, &err);
  fs_assert_no_error(err);
  ck_assert(fs_workload_resolve(w, 8, &err));
  g_autoptr(FsTrain) t = fs_train_new(topo, w, eff, np, fs_scenario_engines(), NULL, &err);
  fs_assert_no_error(err);
  g_autoptr(FsLinkSampler) s = fs_link_sampler_new(fs_train_net(t), 50);
  ck_assert_ptr_nonnull(s);
  ck_assert(fs_train_run(t, &err));
  FsTime end = fs_train_result(t)->step_time;
  fs_link_sampler_finish(s, end);
  guint nb = fs_link_sampler_n_bins(s);
  ck_assert_uint_ge(nb, 50);
  ck_assert_uint_le(nb, 100);
  ck_assert_int_eq(fs_link_sampler_bin_start(s, nb), end);
  FsTraceLink links[4];
  guint nl = fs_trace_busiest_links(fs_train_net(t), end, links, 4);
  ck_assert_uint_gt(nl, 0);
  for (guint l = 0; l < nl; l++) {
    double acc = 0;
    for (guint b = 0; b < nb; b++)
      acc += fs_link_sampler_util(s, links[l].channel, b) *
             (double)(fs_link_sampler_bin_start(s, b + 1) - fs_link_sampler_bin_start(s, b));
    double mean = acc / (double)end;
    ck_assert_msg(fabs(mean - links[l].utilisation) < 1e-4 + 1e-4 * links[l].utilisation,
                  "link %u: bins give %g, stats %g", l, mean, links[l].utilisation);
  }
  /* The trace of this run is valid too, and deterministic. */
  const char *names[] = { "l0", "l1", "l2", "l3" };
  for (guint l = 0; l < nl; l++)
    links[l].name = names[l];
  FsTraceOptions to = { "toy", links, nl, s, end };
  g_autofree char *a = fs_trace_json(fs_train_graph(t), topo, &to);
  g_autofree char *b = fs_trace_json(fs_train_graph(t), topo, &to);
  ck_assert_str_eq(a, b);
  json_error_t jerr;
  json_t *root = json_loads(a, 0, &jerr);
  ck_assert_msg(root != NULL, "%d: %s", jerr.line, jerr.text);
  Counts k;
  assert_valid(root, &k);
  ck_assert_uint_eq(k.counter_tracks, nl);
  /* A track per stream, a span per collective that ran, an arrow per
   * pipeline send (pp 2: every send has a consumer on the other stage). */
  const FsOpGraph *g = fs_train_graph(t);
  ck_assert_uint_eq(k.threads, fs_opgraph_n_streams(g));
  g_autoptr(GHashTable) colls = g_hash_table_new(g_direct_hash, g_direct_equal);
  guint sends = 0;
  for (guint i = 0; i < fs_opgraph_n_ops(g); i++) {
    const FsOp *op = fs_opgraph_op(g, i);
    if (op->kind == FS_OP_COLL)
      g_hash_table_add(colls, GUINT_TO_POINTER(op->coll + 1));
    sends += op->kind == FS_OP_XFER;
  }
  ck_assert_uint_gt(sends, 0);
  ck_assert_uint_eq(k.b, g_hash_table_size(colls));
  ck_assert_uint_eq(k.s, sends);
  json_decref(root);
}
END_TEST

static void nothing(void *ctx, uint64_t arg)
{
  (void)ctx;
  (void)arg;
}

/* One channel of 1 GB/s busy for exactly 1 ms of a 2 ms run: bins before
 * 1 ms read 1, bins after read 0, widths double from 100 ns, the bins
 * integrate to 1 ms, and the bin count stays within [max, 2 max]. */
START_TEST(test_trace_sampler_bins)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  FsChannelId ch = fs_flownet_add_channel(net, 1e9, 0);
  fs_flownet_add_channel(net, 1e9, 0); /* never used */
  g_autoptr(FsLinkSampler) s = fs_link_sampler_new(net, 10);
  ck_assert_ptr_nonnull(s);
  FsFlowSpec spec = { .path = &ch, .path_len = 1, .bytes = 1000000 };
  fs_flownet_start(net, &spec);
  fs_sim_at(sim, 2000000000, nothing, NULL, 0);
  GError *err = NULL;
  ck_assert(fs_sim_run(sim, &err));
  fs_link_sampler_finish(s, 2000000000);
  guint nb = fs_link_sampler_n_bins(s);
  ck_assert_uint_ge(nb, 10);
  ck_assert_uint_le(nb, 20);
  FsTime w = fs_link_sampler_bin_width(s);
  ck_assert_int_eq(w % 100000, 0);
  ck_assert((w / 100000 & (w / 100000 - 1)) == 0); /* 100 ns × a power of two */
  ck_assert_int_eq(fs_link_sampler_bin_start(s, nb), 2000000000);
  double acc = 0;
  for (guint b = 0; b < nb; b++) {
    FsTime a = fs_link_sampler_bin_start(s, b), e = fs_link_sampler_bin_start(s, b + 1);
    double u = fs_link_sampler_util(s, ch, b);
    if (e <= 1000000000)
      ck_assert_msg(fabs(u - 1) < 1e-6, "bin %u [%ld, %ld) reads %g", b, (long)a, (long)e, u);
    if (a >= 1000000000)
      ck_assert_msg(u == 0, "bin %u reads %g after the flow", b, u);
    ck_assert(fs_link_sampler_util(s, ch + 1, b) == 0);
    acc += u * (double)(e - a);
  }
  ck_assert_msg(fabs(acc - 1e9) < 1e3, "integral %g ps", acc);
  /* Too many channels for the memory bound: no sampler. */
  ck_assert_ptr_null(fs_link_sampler_new(net, FS_LINK_SAMPLER_MAX_BYTES));
}
END_TEST

START_TEST(test_trace_transfers)
{
  GError *err = NULL;
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(NULL, &err);
  fs_assert_no_error(err);
  g_autofree char *tp = fs_test_source_path("topologies/dgx-h100.yaml");
  g_autoptr(FsTopo) topo = fs_topo_load_file(tp, cat, NULL, &err);
  fs_assert_no_error(err);
  guint ng;
  const guint *gpus = fs_topo_gpus(topo, &ng);
  FsTraceTransfer xs[] = {
    { "a", gpus[0], gpus[1], 1024, "nvlink", 0, 5000000 },
    { "b \"quoted\"", gpus[1], gpus[0], 2048, "nvlink", 1000000, 9000000 },
    { "c", gpus[2], gpus[3], 0, "nvlink", 2000000, 2000000 },
  };
  FsTraceOptions to = { NULL, NULL, 0, NULL, 9000000 };
  g_autofree char *txt = fs_trace_json_transfers(topo, xs, 3, &to);
  json_error_t jerr;
  json_t *root = json_loads(txt, 0, &jerr);
  ck_assert_msg(root != NULL, "%d: %s", jerr.line, jerr.text);
  Counts k;
  assert_valid(root, &k);
  ck_assert_uint_eq(k.x, 6);
  ck_assert_uint_eq(k.s, 3);
  ck_assert_uint_eq(k.f, 3);
  json_decref(root);
}
END_TEST

/* The checker itself rejects broken traces (so the tests above can fail). */
START_TEST(test_trace_checker_rejects)
{
  const char *bad[] = {
    "[]",
    "{\"traceEvents\":{}}",
    "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"cat\":\"c\",\"ts\":0}]}",
    "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"cat\":\"c\",\"ts\":0,\"dur\":1}]}",
    "{\"traceEvents\":[{\"ph\":\"s\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"cat\":\"c\",\"id\":1,\"ts\":0}]}",
    "{\"traceEvents\":[{\"ph\":\"b\",\"pid\":1,\"name\":\"a\",\"cat\":\"c\",\"id\":1,\"ts\":5},"
    "{\"ph\":\"e\",\"pid\":1,\"name\":\"a\",\"cat\":\"c\",\"id\":1,\"ts\":4}]}",
    "{\"traceEvents\":[{\"ph\":\"C\",\"pid\":1,\"name\":\"a\",\"ts\":0,\"args\":{\"utilisation\":1.5}}]}",
    "{\"traceEvents\":[{\"ph\":\"C\",\"pid\":1,\"name\":\"a\",\"ts\":0,\"args\":{\"v\":\"x\"}}]}",
    "{\"traceEvents\":[{\"ph\":\"M\",\"pid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"t\"}}]}",
    "{\"traceEvents\":[{\"ph\":\"Q\",\"pid\":1,\"name\":\"a\",\"ts\":0}]}",
    "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":-1,\"tid\":1,\"name\":\"a\",\"cat\":\"c\",\"ts\":0,\"dur\":1}]}",
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    json_t *root = json_loads(bad[i], 0, NULL);
    ck_assert_ptr_nonnull(root);
    Counts k;
    g_autofree char *why = NULL;
    ck_assert_msg(!validate(root, &k, &why), "accepted: %s", bad[i]);
    json_decref(root);
  }
  const char *good =
    "{\"traceEvents\":[{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"h\"}},"
    "{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"t\"}},"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"cat\":\"c\",\"ts\":0,\"dur\":1}]}";
  json_t *root = json_loads(good, 0, NULL);
  Counts k;
  assert_valid(root, &k);
  json_decref(root);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("trace-schema");
  FS_ADD_TEST(s, test_trace_checker_rejects);
  FS_ADD_TEST(s, test_trace_sampler_bins);
  FS_ADD_TEST(s, test_trace_transfers);
  FS_ADD_TEST(s, test_trace_sampler_integrates_to_mean);
  FS_ADD_TEST(s, test_trace_train_cli);
  FS_ADD_TEST(s, test_trace_replay_cli);
  return fs_test_run_suite(s);
}
