/* testutil.h — helpers shared by the Check test executables. */
#pragma once

#include <check.h>
#include <glib.h>

/* Check's ck_assert_msg, on which every ck_assert_* macro is built, records
 * each assertion that holds (_mark_point: one write(2) to the runner per
 * assertion, so that a test killed by a signal names its last assertion).
 * The tests check plans step by step and connection by connection: those
 * writes were most of the unit tests' time (70 % of coll-fast's CPU).  This
 * ck_assert_msg fails exactly where Check's does, with the same message; a
 * test that crashes is reported at its last mark_point() (none by default:
 * the test's name), and the sanitizer build prints the crash's stack
 * (tests/README.md, "CI time"). */
#undef ck_assert_msg
#define ck_assert_msg(expr, ...)                                                       \
  ((expr) ? (void)0                                                                  \
          : _ck_assert_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed",  \
                              ##__VA_ARGS__))

#include "catalog/catalog.h"
#include "coll/comm.h"
#include "coll/nccl-params.h"
#include "coll/tuner.h"
#include "collrun/coll-topo.h"
#include "compute/efficiency.h"
#include "scenario/scenario.h"
#include "topo/topo.h"
#include "util/yaml.h"
#include "workload/executor.h"
#include "workload/spec.h"

/* Path of a file under tests/data (caller frees). */
char *fs_test_data_path(const char *relative);
/* Path of a file under the source root (caller frees). */
char *fs_test_source_path(const char *relative);

/* TRUE when $FS_TEST_REDUCED is set and not "0" (tools/test --sanitize sets
 * it): a test that repeats one check over many inputs (the accuracy tables)
 * then runs a reduced set that still takes every code path and can still
 * fail; the plain build runs it whole (tests/README.md, "CI time"). */
gboolean fs_test_reduced(void);

/* Runs a suite, writing TAP to stdout (one "ok N - ..." line per test;
 * $CK_TAP_LOG_FILE_NAME names another file); returns the process exit status. */
int fs_test_run_suite(Suite *s);

/* Adds a test case with one test function, named after the function. */
#define FS_ADD_TEST(suite, fn)                         \
  do {                                                 \
    TCase *tc_ = tcase_create(#fn);                    \
    tcase_add_test(tc_, fn);                           \
    tcase_set_timeout(tc_, 120);                       \
    suite_add_tcase((suite), tc_);                     \
  } while (0)

/* Asserts that a GError is set, in domain, and that its message contains
 * fragment.  Frees the error. */
#define fs_assert_error(err, domain_, fragment)                                      \
  do {                                                                              \
    ck_assert_msg((err) != NULL, "expected an error containing \"%s\"", (fragment)); \
    ck_assert_msg((err)->domain == (domain_), "wrong error domain for: %s", (err)->message); \
    ck_assert_msg(strstr((err)->message, (fragment)) != NULL,                        \
                  "error \"%s\" does not contain \"%s\"", (err)->message, (fragment)); \
    g_clear_error(&(err));                                                          \
  } while (0)

#define fs_assert_no_error(err)                                                     \
  ck_assert_msg((err) == NULL, "unexpected error: %s", (err) ? (err)->message : "")

/* ---- the topology fixture (test-topo.c, test-cluster.c, test-route.c,
 * test-rails.c) ---- */

/* The default catalog (models/ or $FABRICSIM_MODELS), loaded at the first
 * call and kept for the process (never freed: it stays reachable, so
 * LeakSanitizer does not count it); fails the test when it cannot load. */
FsCatalog *fs_test_catalog(void);
/* An unchecked fixture's setup (no teardown needed): loads fs_test_catalog()
 * in Check's parent process, so that forked tests inherit it instead of
 * each reading models/ again. */
void fs_test_catalog_setup(void);
/* topologies/NAME under the source root (".yaml" appended when NAME lacks
 * it) with -D defines (NULL-terminated, or NULL) over fs_test_catalog().
 * With error NULL it fails the test on an error; otherwise NULL with
 * *error set.  Caller frees. */
FsTopo *fs_test_topo(const char *name, const char *const *defines, GError **error);
/* A topology from text, NAME standing for its file (in messages, and the
 * folder includes are looked up in), over fs_test_catalog(); errors as
 * fs_test_topo.  Caller frees. */
FsTopo *fs_test_topo_text(const char *text, const char *name, const char *const *defines,
                          GError **error);

/* A YAML document from text (NUL-terminated) named "t.yaml"; fails the
 * test on an error.  Caller frees. */
FsYamlDoc *fs_test_yaml_ok(const char *text);

/* ---- efficiency curves from text (test-gemm-shape.c, test-attn-head.c) ---- */

/* Curves loaded from YAML text named "t.yaml"; fails the test on an error.
 * Caller frees. */
FsEfficiency *fs_test_eff_load_text(const char *text);

/* Case i of a table of refused curves: "curves:\n" CURVE "    source: s\n"
 * must be refused with a message that contains fragment, and load nothing. */
void fs_test_eff_refused(guint i, const char *curve, const char *fragment);

/* What a curve's extra rows (head_dims:, tiles:) must survive and what drops
 * them: fs_test_eff_load_another loads a second file (a memory curve) into
 * eff, which copies its curves through the staging set; then
 * fs_test_eff_replace_attention replaces Hopper's bf16 forward attention
 * curve by one probe point (fs_efficiency_set) and returns the new curve.
 * Both fail the test on an error. */
void fs_test_eff_load_another(FsEfficiency *eff);
const FsEffCurve *fs_test_eff_replace_attention(FsEfficiency *eff);

/* Kernel-time MAPE and bias (%) over the rows of the attention reference
 * table validation/reference/NAME.csv (its `gpu:`, dtype, pass, causal,
 * batch, heads, seq, head_dim and tflops columns) with the default curves;
 * bare: every head_dims: factor removed; !occupancy: no thread-block model
 * (the GPU's SM count taken as unknown).  *rows: the table's rows. */
void fs_test_attention_score(const char *name, gboolean bare, gboolean occupancy, double *mape,
                             double *bias, guint *rows);

/* ---- the training-step fixture (test-executor.c, test-collclass.c) ---- */

/* The default catalog, efficiency curves and NCCL parameters (models/ or
 * $FABRICSIM_MODELS): loaded by fs_test_models_setup, freed by
 * fs_test_models_teardown (a Check checked fixture's pair). */
extern FsCatalog *fs_test_cat;
extern FsEfficiency *fs_test_eff;
extern FsNcclParams *fs_test_nccl;
void fs_test_models_setup(void);
void fs_test_models_teardown(void);

/* topologies/NAME under the source root, with -D defines (NULL-terminated,
 * or NULL), over fs_test_cat (fs_test_topo's loader); fails the test on an
 * error.  Caller frees. */
FsTopo *fs_test_load_topo(const char *name, const char *const *defines);

/* A small GPT (8 layers, hidden 1024, 16 heads, sequences of 1024, 64 per
 * step in micro-batches of 2, bf16) whose `parallel:` section is the text
 * parallel (indented lines), with Megatron-style overrides (NULL-terminated,
 * or NULL).  Caller frees. */
FsWorkload *fs_test_small_gpt(const char *parallel, const char *const *overrides);

/* Resolves w for topo's GPU count, builds one step with options opt (NULL:
 * the defaults) and runs it; fails the test on an error.  Caller frees. */
FsTrain *fs_test_train(const FsTopo *topo, FsWorkload *w, const FsTrainOptions *opt);

/* Asserts two step results are the same to the picosecond: the step time
 * and every stage's time breakdown. */
void fs_test_assert_same_result(const FsTrain *a, const FsTrain *b);

/* ---- the collective fixture (test-coll-fast.c, test-coll-dedup.c) ---- */

/* A communicator on a topology with everything it needs to run collectives
 * alone: the default catalog and NCCL parameters, a simulator, a flow
 * network, a router and the collective layer's network view. */
typedef struct {
  FsCatalog *cat;
  FsTopo *topo;
  FsSim *sim;
  FsFlowNet *net;
  FsRouter *router;
  FsCollTopoNet *tnet;
  FsComm *comm;
  FsNcclParams *np;
  FsCollSysInfo sys;
} FsTestColl;

/* topologies/NAME with one -D define (NULL: none), a network of model and
 * a communicator over gpu_list (as `coll --gpus`; "all" for every GPU);
 * fails the test on an error.  fs_test_coll_close frees it all. */
void fs_test_coll_open(FsTestColl *s, const char *name, const char *define, const char *gpu_list,
                       FsNetModel model);
void fs_test_coll_close(FsTestColl *s);
/* Runs a flow alone on every channel of s's network (1000 bytes each, at
 * its channel's capacity) to its end: a run that fills every link, for a
 * test that its watches (rails, rotation) do not hold. */
void fs_test_coll_fill_every_channel(FsTestColl *s);

/* The tuner's choice on s for op at nccl-tests size `size` (float, sum) under prefs, the
 * request that runs it (fs_coll_choice_request) and NCCL's nBytes in *nbytes; FALSE, the
 * error dropped, where the tuner refuses (no allowed algorithm runs op here). */
gboolean fs_test_coll_choose(const FsTestColl *s, FsCollOp op, uint64_t size,
                             const FsCollPrefs *prefs, FsCollChoice *ch, FsCollRequest *req,
                             uint64_t *nbytes);

/* Asserts plan p's connection indices (FsCollStep.conn): transfers on one
 * connection share one, they are numbered 0, 1, … in the order of each
 * connection's first transfer, fs_coll_plan_n_conns counts them and a
 * reduction has none (FS_STEP_NONE); what names the plan in messages. */
void fs_test_check_plan_conns(const FsCollPlan *p, const char *what);
/* Asserts that plans a and b are the same step for step (kinds, endpoints,
 * bytes, channels, lanes, widths, connections, dependencies and credits)
 * with the same totals: folding while building against fs_coll_plan_fold
 * of the whole plan; what names them in messages. */
void fs_test_check_same_plan(const FsCollPlan *a, const FsCollPlan *b, const char *what);
