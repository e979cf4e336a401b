/* test-corpus.c — the parser corpora that no command reads on its own, and
 * the position promise of every rejection.
 *
 * For each format below every file of tests/data/<format>/ goes through the
 * module's loader: y_ must load; n_ must fail with a one-line message that
 * starts with "PATH:LINE:COL: " and contains the fragment in its n_*.err
 * sidecar; i_ may do either.  Formats: efficiency curves (the files of
 * models/compute/), sweep specs, replay traces (whose d_ files load and
 * deadlock only when run) and flow lists.  Each YAML corpus holds at least
 * 20 n_ files.
 */
#include <check.h>
#include <string.h>

#include "catalog/catalog.h"
#include "compute/efficiency.h"
#include "core/sim.h"
#include "net/flow.h"
#include "net/route.h"
#include "net/flowfile.h"
#include "sweep/sweep.h"
#include "testutil.h"
#include "topo/topo.h"
#include "workload/replay.h"

typedef gboolean (*LoadFn)(const char *path, GError **error);

static FsTopo *dgx_h100(void)
{
  static FsTopo *topo;
  if (topo == NULL) {
    GError *error = NULL;
    FsCatalog *cat = fs_catalog_load_default(NULL, &error);
    fs_assert_no_error(error);
    g_autofree char *path = fs_test_source_path("topologies/dgx-h100.yaml");
    topo = fs_topo_load_file(path, cat, NULL, &error);
    fs_assert_no_error(error);
  }
  return topo;
}

static gboolean load_efficiency(const char *path, GError **error)
{
  g_autoptr(FsEfficiency) eff = fs_efficiency_new();
  return fs_efficiency_load_file(eff, path, FALSE, error);
}

static gboolean load_sweep(const char *path, GError **error)
{
  g_autoptr(FsSweepSpec) s = fs_sweep_spec_load_file(path, error);
  return s != NULL;
}

static gboolean load_trace(const char *path, GError **error)
{
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(NULL, error);
  if (eff == NULL)
    return FALSE;
  g_autoptr(FsReplay) r = fs_replay_load_file(path, dgx_h100(), eff, error);
  return r != NULL;
}

static gboolean load_flows(const char *path, GError **error)
{
  g_autoptr(FsFlowList) l = fs_flow_list_load(path, dgx_h100(), error);
  return l != NULL;
}

/* "PATH:LINE:COL: " with LINE and COL positive. */
static gboolean has_position(const char *message, const char *path)
{
  gsize n = strlen(path);
  if (strncmp(message, path, n) != 0 || message[n] != ':')
    return FALSE;
  char *end;
  const char *p = message + n + 1;
  long line = strtol(p, &end, 10);
  if (end == p || line < 1 || *end != ':')
    return FALSE;
  p = end + 1;
  long col = strtol(p, &end, 10);
  return end != p && col >= 1 && strncmp(end, ": ", 2) == 0;
}

static void check_corpus(const char *format, LoadFn load, guint min_y, guint min_n)
{
  g_autofree char *dir = fs_test_data_path(format);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_msg(d != NULL, "no folder %s", dir);
  guint ny = 0, nn = 0;
  for (const char *name; (name = g_dir_read_name(d)) != NULL;) {
    if (g_str_has_suffix(name, ".err") || g_str_has_suffix(name, ".md") || name[0] == 'd')
      continue;
    ck_assert_msg(name[0] == 'y' || name[0] == 'n' || name[0] == 'i',
                  "%s/%s: corpus files start with y_, n_ or i_", format, name);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    GError *error = NULL;
    gboolean ok = load(path, &error);
    if (name[0] == 'y') {
      ck_assert_msg(ok, "%s/%s: %s", format, name, error ? error->message : "");
      ny++;
    } else if (name[0] == 'n') {
      ck_assert_msg(!ok && error != NULL, "%s/%s was accepted", format, name);
      ck_assert_msg(strchr(error->message, '\n') == NULL, "%s/%s: several lines: %s", format,
                    name, error->message);
      ck_assert_msg(has_position(error->message, path), "%s/%s: no PATH:LINE:COL: in \"%s\"",
                    format, name, error->message);
      g_autofree char *stem = g_strndup(path, (gsize)(strrchr(path, '.') - path));
      g_autofree char *sidecar = g_strconcat(stem, ".err", NULL);
      g_autofree char *want = NULL;
      ck_assert_msg(g_file_get_contents(sidecar, &want, NULL, NULL), "%s/%s: no .err", format,
                    name);
      g_strchomp(want);
      ck_assert_msg(strstr(error->message, want) != NULL, "%s/%s: \"%s\" lacks \"%s\"", format,
                    name, error->message, want);
      nn++;
    }
    g_clear_error(&error);
  }
  ck_assert_uint_ge(ny, min_y);
  ck_assert_uint_ge(nn, min_n);
}

START_TEST(test_corpus_efficiency) { check_corpus("efficiency", load_efficiency, 4, 20); }
END_TEST

START_TEST(test_corpus_sweep) { check_corpus("sweep", load_sweep, 3, 20); }
END_TEST

START_TEST(test_corpus_replay) { check_corpus("replay", load_trace, 1, 7); }
END_TEST

START_TEST(test_corpus_flows) { check_corpus("flows", load_flows, 4, 12); }
END_TEST

/* The string loaders name their input as given and read JSON flows with
 * positions; FABRICSIM_MAX_FLOWS bounds a list. */
START_TEST(test_corpus_flows_string)
{
  const char *json = "{\"flows\": [\n  {\"id\": \"a\", \"src\": \"gpu0\", \"dst\": \"gpu1\", "
                     "\"bytes\": \"1M\"},\n  {\"id\": \"b\", \"src\": \"gpu0\", \"dst\": \"gpu9\", "
                     "\"bytes\": 1}\n]}";
  GError *error = NULL;
  FsFlowList *l = fs_flow_list_load_string(json, strlen(json), "mem.json", dgx_h100(), &error);
  ck_assert_ptr_null(l);
  fs_assert_error(error, FS_NET_ERROR, "mem.json:3:37: unknown dst node \"gpu9\"");
  const char *nul = "id,start,src,dst,bytes\nx\0y";
  l = fs_flow_list_load_string(nul, 26, "mem.csv", dgx_h100(), &error);
  ck_assert_ptr_null(l);
  fs_assert_error(error, FS_NET_ERROR, "mem.csv:2:2: NUL byte");
  g_setenv("FABRICSIM_MAX_FLOWS", "1", TRUE);
  l = fs_flow_list_load_string(json, strlen(json), "mem.json", dgx_h100(), &error);
  ck_assert_ptr_null(l);
  fs_assert_error(error, FS_NET_ERROR, "mem.json:1:11: $.flows: 2 flows; at most 1 are allowed");
  g_unsetenv("FABRICSIM_MAX_FLOWS");
}
END_TEST

/* Replays `csv` on a fresh DGX H100 and returns the flows the network ran. */
static guint64 replay_flow_count(const char *csv)
{
  GError *error = NULL;
  g_autoptr(FsFlowList) l = fs_flow_list_load_string(csv, strlen(csv), "mem.csv", dgx_h100(), &error);
  fs_assert_no_error(error);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) router = fs_router_new(dgx_h100(), net, NULL);
  ck_assert(fs_flow_list_replay_on(l, router, &error));
  fs_assert_no_error(error);
  for (guint i = 0; i < l->records->len; i++)
    ck_assert(((FsFlowRecord *)g_ptr_array_index(l->records, i))->done);
  FsFlowNetStats st;
  fs_flownet_stats(net, &st);
  ck_assert_uint_eq(st.flows_started, st.flows_finished);
  return st.flows_started;
}

/* A flow to the same GPU with no bytes ends inside its own start; the
 * flows waiting for it start then, and only then (fuzz-flows found them
 * started a second time by the replay's first pass). */
START_TEST(test_flows_replay_starts_each_flow_once)
{
  const char *alone = "id,start,src,dst,bytes\nnext,0 us,gpu0,gpu1,1M\n";
  const char *after = "id,start,src,dst,bytes,deps\nlocal,0 us,gpu0,gpu0,0,\n"
                      "next,0 us,gpu0,gpu1,1M,local\n";
  guint64 n = replay_flow_count(alone);
  ck_assert_uint_gt(n, 0);
  ck_assert_uint_eq(replay_flow_count(after), n + 1);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("corpus");
  FS_ADD_TEST(s, test_corpus_efficiency);
  FS_ADD_TEST(s, test_corpus_sweep);
  FS_ADD_TEST(s, test_corpus_replay);
  FS_ADD_TEST(s, test_corpus_flows);
  FS_ADD_TEST(s, test_corpus_flows_string);
  FS_ADD_TEST(s, test_flows_replay_starts_each_flow_once);
  return fs_test_run_suite(s);
}
