/* test-workload.c — the workload job spec (src/workload/spec.c): every
 * preset loads, overrides, validation messages, and the corpus
 * tests/data/workload/{y,n}_*.yaml (n_ files with an n_*.err fragment). */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "catalog/catalog.h"
#include "testutil.h"
#include "workload/placement.h"
#include "workload/spec.h"

static FsWorkload *load_preset(const char *name, const char *const *overrides, GError **err)
{
  g_autofree char *file = g_strconcat("workloads/", name, ".yaml", NULL);
  g_autofree char *path = fs_test_source_path(file);
  return fs_workload_load_file(path, overrides, err);
}

static GPtrArray *yaml_files(const char *dir, const char *prefix)
{
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  const char *n;
  while ((n = g_dir_read_name(d)) != NULL)
    if (g_str_has_suffix(n, ".yaml") && g_str_has_prefix(n, prefix))
      g_ptr_array_add(out, g_build_filename(dir, n, NULL));
  g_ptr_array_sort(out, (GCompareFunc)g_strcmp0);
  return out;
}

START_TEST(test_workload_every_preset_loads)
{
  g_autofree char *dir = fs_test_source_path("workloads");
  g_autoptr(GPtrArray) files = yaml_files(dir, "");
  static const char *const expected[] = {"gpt3-13b", "gpt3-175b", "llama2-7b", "llama2-13b", "llama2-70b",
                                         "llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "mixtral-8x7b",
                                         "nemotron4-15b", "nemotron4-340b", "resnet50-dp"};
  for (guint i = 0; i < G_N_ELEMENTS(expected); i++) {
    g_autofree char *f = g_strconcat(expected[i], ".yaml", NULL);
    gboolean found = FALSE;
    for (guint j = 0; j < files->len; j++)
      found |= g_str_has_suffix(g_ptr_array_index(files, j), f);
    ck_assert_msg(found, "preset %s missing", expected[i]);
  }
  for (guint i = 0; i < files->len; i++) {
    GError *err = NULL;
    const char *path = g_ptr_array_index(files, i);
    g_autoptr(FsWorkload) w = fs_workload_load_file(path, NULL, &err);
    ck_assert_msg(w != NULL, "%s: %s", path, err ? err->message : "");
    ck_assert_msg(w->source != NULL && strlen(w->source) > 20, "%s has no source", path);
    ck_assert(w->grad_accum >= 1 && w->gpus == w->tp * w->pp * w->dp * w->cp);
    ck_assert(fs_workload_params(w) > 1e6);
    ck_assert(fs_workload_step_model_flops(w, FALSE) >= fs_workload_step_model_flops(w, TRUE) && fs_workload_step_model_flops(w, TRUE) > 0);
  }
}
END_TEST

START_TEST(test_workload_preset_values)
{
  GError *err = NULL;
  g_autoptr(FsWorkload) w = load_preset("llama2-7b", NULL, &err);
  fs_assert_no_error(err);
  ck_assert_double_eq(fs_workload_params(w), 6738415616.0);
  ck_assert_uint_eq(w->model.mlp, FS_MLP_SWIGLU);
  ck_assert_uint_eq(w->dp, 1);
  ck_assert_uint_eq(w->grad_accum, 1024);
  /* Megatron's default gradient bucket: 40M parameters of bf16. */
  ck_assert_uint_eq(w->bucket_size, 80000000);
  /* Resolving against a topology of 64 GPUs derives dp and the accumulation. */
  ck_assert(fs_workload_resolve(w, 64, &err));
  ck_assert_uint_eq(w->dp, 64);
  ck_assert_uint_eq(w->grad_accum, 16);
  g_autoptr(FsWorkload) g = load_preset("gpt3-175b", NULL, &err);
  fs_assert_no_error(err);
  ck_assert_double_eq(fs_workload_params(g), 174604259328.0);
  FsTransformerRun run;
  fs_workload_transformer_run(g, &run);
  ck_assert(run.tp == 8 && run.sequence_parallel && run.recompute == FS_RECOMPUTE_SELECTIVE);
  FsMemoryLayout l;
  fs_workload_memory_layout(g, &l);
  ck_assert(l.pp == 8 && l.zero_stage == 1 && l.num_micro_batches == 1536);
  /* The layer-list model: ResNet-50's 25.6M parameters and 8.18 GFLOP. */
  g_autoptr(FsWorkload) r = load_preset("resnet50-dp", NULL, &err);
  fs_assert_no_error(err);
  ck_assert_uint_eq(r->form, FS_MODEL_FORM_LAYERS);
  ck_assert_uint_eq(r->n_layers, 18);
  ck_assert_double_eq(fs_workload_params(r), 25557032.0);
  ck_assert_double_eq(fs_workload_step_model_flops(r, FALSE), 3.0 * 8178368512.0 * 256);
  ck_assert_str_eq(r->layers[1].name, "layer1.down");
  ck_assert_str_eq(r->layers[2].name, "layer1.0");
  ck_assert_str_eq(r->layers[3].name, "layer1.1");
  g_autoptr(GArray) kb = fs_workload_layer_kernels(r, 0, FS_PASS_BACKWARD);
  ck_assert_uint_eq(kb->len, 2);
  ck_assert_str_eq(g_array_index(kb, FsKernel, 1).name, "conv1.wgrad");
  ck_assert_double_eq(g_array_index(kb, FsKernel, 0).flops, 236027904.0 * 32);
  FsMemoryBreakdown m;
  ck_assert(fs_workload_memory_estimate(r, NULL, &m, &err));
  ck_assert(m.total > 25557032ull * 16 / 8 && m.fits);
}
END_TEST

START_TEST(test_workload_chunk_kernels)
{
  GError *err = NULL;
  g_autoptr(FsWorkload) g = load_preset("gpt3-175b", NULL, &err);
  fs_assert_no_error(err);
  ck_assert_uint_eq(fs_workload_chunks(g), 8);
  /* Model FLOPs of every chunk, forward and backward, on all tp·cp ranks
   * and all micro-batches of all DP ranks: the step's model FLOPs. */
  double sum = 0;
  for (guint c = 0; c < fs_workload_chunks(g); c++)
    for (int p = 0; p < 3; p++) {
      FsKernelPass pass = p == 0 ? FS_PASS_FORWARD : p == 1 ? FS_PASS_BACKWARD : FS_PASS_RECOMPUTE;
      g_autoptr(GArray) k = fs_workload_chunk_kernels(g, c, pass);
      sum += fs_kernels_model_flops(k);
      if (c == 0 && pass == FS_PASS_FORWARD)
        ck_assert_str_eq(g_array_index(k, FsKernel, 0).name, "embedding");
      if (c == 7 && pass == FS_PASS_FORWARD)
        ck_assert_str_eq(g_array_index(k, FsKernel, k->len - 1).name, "loss");
      if (c == 7 && pass == FS_PASS_BACKWARD)
        ck_assert_str_eq(g_array_index(k, FsKernel, 0).name, "loss.bwd");
      if (c == 3 && pass == FS_PASS_RECOMPUTE)
        ck_assert_uint_eq(k->len, 0); /* selective with flash attention */
    }
  double step = fs_workload_step_model_flops(g, TRUE);
  ck_assert_msg(fabs(sum * g->tp * g->cp * g->grad_accum * g->dp - step) <= 1e-9 * step, "%g vs %g",
                sum * g->tp * g->cp * g->grad_accum * g->dp, step);
  /* The optimizer updates 1/dp of a stage's parameters with ZeRO-1. */
  ck_assert(fs_workload_resolve(g, 512, &err));
  g_autoptr(GArray) o = fs_workload_optimizer_kernels(g, 1, &err);
  fs_assert_no_error(err);
  FsMemoryLayout l;
  fs_workload_memory_layout(g, &l);
  FsMemoryBreakdown m;
  ck_assert(fs_memory_estimate(&g->model, &l, 1, NULL, &m, &err));
  ck_assert_double_eq_tol(g_array_index(o, FsKernel, 0).bytes, m.params / 8 * 28, 1);
  ck_assert_ptr_null(fs_workload_optimizer_kernels(g, 8, &err));
  fs_assert_error(err, FS_TRANSFORMER_ERROR, "stage 8 does not exist");
  /* A layer list over 2 stages: 18 layers as 9 + 9, all FLOPs accounted. */
  const char *ov[] = {"--pp=2", NULL};
  g_autoptr(FsWorkload) r = load_preset("resnet50-dp", ov, &err);
  fs_assert_no_error(err);
  double rs = 0;
  for (guint c = 0; c < 2; c++)
    for (int p = 0; p < 2; p++) {
      g_autoptr(GArray) k = fs_workload_chunk_kernels(r, c, p ? FS_PASS_BACKWARD : FS_PASS_FORWARD);
      ck_assert_uint_eq(k->len, p ? 18 : 9);
      rs += fs_kernels_model_flops(k);
    }
  ck_assert_double_eq_tol(rs * r->grad_accum * r->dp, fs_workload_step_model_flops(r, TRUE), 1e-3);
}
END_TEST

START_TEST(test_workload_overrides)
{
  GError *err = NULL;
  const char *const ov[] = {"--tensor-model-parallel-size=2", "--pp", "4", "--micro-batch-size=2",
                            "--global-batch-size=512", "--num-layers=48", "--hidden-size=5120",
                            "--seq-length=8192", "--context-parallel-size=2", "--sequence-parallel",
                            "--recompute-granularity=full", "--bf16", "--use-distributed-optimizer",
                            "parallel.dp=4", NULL};
  g_autoptr(FsWorkload) w = load_preset("llama2-13b", ov, &err);
  fs_assert_no_error(err);
  ck_assert(w->tp == 2 && w->pp == 4 && w->micro_batch == 2 && w->global_batch == 512);
  ck_assert(w->model.layers == 48 && w->model.hidden == 5120 && w->model.seq_len == 8192);
  ck_assert(w->cp == 2 && w->sequence_parallel && w->recompute == FS_RECOMPUTE_FULL);
  ck_assert(w->zero_stage == 1 && w->dp == 4 && w->gpus == 64 && w->grad_accum == 64);
  /* Short forms and (name, value) pairs. */
  ck_assert(fs_workload_apply_override(w, "--tp", "4", &err));
  ck_assert(fs_workload_apply_override(w, "--dp", "2", &err));
  ck_assert(fs_workload_apply_override(w, "tp", "4", &err));
  ck_assert(fs_workload_resolve(w, 0, &err));
  fs_assert_no_error(err);
  ck_assert(w->tp == 4 && w->dp == 2 && w->gpus == 64);
  /* Errors: unknown name with a suggestion, a bad value, a missing value. */
  ck_assert(!fs_workload_apply_override(w, "--tensor-model-paralel-size", "2", &err));
  fs_assert_error(err, FS_WORKLOAD_ERROR,
                  "override --tensor-model-paralel-size=2: unknown option \"--tensor-model-paralel-size\"; "
                  "did you mean \"--tensor-model-parallel-size\"?");
  ck_assert(!fs_workload_apply_override(w, "--tp", "two", &err));
  fs_assert_error(err, FS_WORKLOAD_ERROR, "override --tp=two: expected an integer from 1 to 65536 for parallel.tp");
  ck_assert(!fs_workload_apply_override(w, "--recompute-granularity", "some", &err));
  fs_assert_error(err, FS_WORKLOAD_ERROR, "expected one of none, selective, full");
  ck_assert(!fs_workload_apply_override(w, "--micro-batch-size", NULL, &err));
  fs_assert_error(err, FS_WORKLOAD_ERROR, "needs a value");
  /* A validation failure caused by an override names the override. */
  const char *const bad[] = {"--tp=3", NULL};
  g_autoptr(FsWorkload) b = load_preset("llama2-7b", bad, &err);
  ck_assert_ptr_null(b);
  fs_assert_error(err, FS_WORKLOAD_ERROR, "override --tp=3: heads (32) is not divisible by tp (3)");
  /* Megatron's flag that unties GPT's output layer from the embedding. */
  const char *const untie[] = {"--untie-embeddings-and-output-weights", NULL};
  g_autoptr(FsWorkload) u = load_preset("gpt3-13b", untie, &err);
  fs_assert_no_error(err);
  ck_assert(!u->model.tied_embeddings);
  g_autoptr(FsWorkload) tied = load_preset("gpt3-13b", NULL, &err);
  fs_assert_no_error(err);
  ck_assert(tied->model.tied_embeddings);
  const char *const ep[] = {"--expert-model-parallel-size=3", NULL};
  g_autoptr(FsWorkload) e = load_preset("mixtral-8x7b", ep, &err);
  ck_assert_ptr_null(e);
  fs_assert_error(err, FS_WORKLOAD_ERROR, "override --expert-model-parallel-size=3: experts (8) is not divisible by ep (3)");
  /* Every advertised name is accepted by the lookup. */
  const char *const *names = fs_workload_override_names();
  guint n = 0;
  for (; names[n]; n++)
    ;
  ck_assert_uint_gt(n, 40);
}
END_TEST

START_TEST(test_workload_topology_gpu_count)
{
  GError *err = NULL;
  g_autoptr(FsWorkload) w = load_preset("llama2-70b", NULL, &err);
  fs_assert_no_error(err);
  ck_assert(!fs_workload_resolve(w, 100, &err));
  fs_assert_error(err, FS_WORKLOAD_ERROR, "the GPU count (100) is not divisible by tp × pp × cp = 8 × 4 × 1 = 32");
  ck_assert(fs_workload_resolve(w, 256, &err));
  ck_assert_uint_eq(w->dp, 8);
  const char *const ov[] = {"--dp=2", NULL};
  g_autoptr(FsWorkload) d = load_preset("llama2-70b", ov, &err);
  fs_assert_no_error(err);
  ck_assert(!fs_workload_resolve(d, 256, &err));
  fs_assert_error(err, FS_WORKLOAD_ERROR, "override --dp=2: tp × pp × dp × cp = 8 × 4 × 2 × 1 = 64 does not equal the GPU count (256)");
}
END_TEST

START_TEST(test_workload_presets_compose)
{
  /* A workload that takes a preset's model and changes one field. */
  GError *err = NULL;
  const char *text = "model:\n  preset: llama3.1-8b\n  seq_length: 16384\n"
                     "training: {global_batch: 64}\nparallel: {cp: 2}\n";
  g_autofree char *dir = fs_test_source_path("workloads");
  g_autoptr(FsWorkload) w = fs_workload_load_string(text, "long.yaml", dir, NULL, &err);
  fs_assert_no_error(err);
  ck_assert_str_eq(w->preset, "llama3.1-8b");
  ck_assert(w->model.seq_len == 16384 && w->model.hidden == 4096 && w->model.kv_heads == 8);
  ck_assert(w->cp == 2 && w->gpus == 2);
  /* A scalar model is a preset name; a typo gets a suggestion. */
  g_autoptr(FsWorkload) s = fs_workload_load_string("model: gpt3-13b\ntraining: {global_batch: 8}\n",
                                                     "s.yaml", dir, NULL, &err);
  fs_assert_no_error(err);
  ck_assert_uint_eq(s->model.layers, 40);
  g_autoptr(FsWorkload) t = fs_workload_load_string("model: lama2-7b\n", "t.yaml", dir, NULL, &err);
  ck_assert_ptr_null(t);
  fs_assert_error(err, FS_WORKLOAD_ERROR, "t.yaml:1:8: unknown model preset \"lama2-7b\"; did you mean \"llama2-7b\"?");
}
END_TEST

START_TEST(test_workload_memory_fits_catalog_gpu)
{
  GError *err = NULL;
  g_autofree char *models = fs_test_source_path("models");
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(models, &err);
  fs_assert_no_error(err);
  const FsModel *h100 = fs_catalog_require(cat, "h100-sxm", FS_MODEL_GPU, &err);
  fs_assert_no_error(err);
  /* Llama 2 7B on one GPU: 16 B/param alone is 108 GB. */
  g_autoptr(FsWorkload) small = load_preset("llama2-7b", NULL, &err);
  FsMemoryBreakdown m;
  ck_assert(fs_workload_memory_estimate(small, &h100->u.gpu, &m, &err));
  ck_assert(!m.fits && m.capacity == h100->u.gpu.memory);
  /* Over 64 GPUs the distributed optimizer shards master and Adam states. */
  ck_assert(fs_workload_resolve(small, 64, &err));
  ck_assert(fs_workload_memory_estimate(small, &h100->u.gpu, &m, &err));
  ck_assert_msg(m.fits, "%" G_GUINT64_FORMAT " bytes", m.total);
  ck_assert_uint_eq(m.master + m.optimizer, (uint64_t)llround(6738415616.0 * 12 / 64));
  /* Llama 2 70B with its preset layout (tp 8, pp 4) on 256 GPUs fits. */
  g_autoptr(FsWorkload) big = load_preset("llama2-70b", NULL, &err);
  ck_assert(fs_workload_resolve(big, 256, &err));
  ck_assert(fs_workload_memory_estimate(big, &h100->u.gpu, &m, &err));
  ck_assert(m.fits && m.stage == 0 && m.in_flight == 4);
}
END_TEST

START_TEST(test_workload_placement_groups)
{
  GError *err = NULL;
  const char *text = "model: {layers: 4, hidden: 256, ffn_hidden: 1024, heads: 8, vocab: 1000,\n"
                     "        seq_length: 512, experts: 4, top_k: 2}\n"
                     "training: {global_batch: 16}\n"
                     "parallel: {tp: 2, cp: 2, dp: 2, pp: 2, ep: 2}\n";
  g_autoptr(FsWorkload) w = fs_workload_load_string(text, "p.yaml", NULL, NULL, &err);
  fs_assert_no_error(err);
  ck_assert_uint_eq(w->gpus, 16);
  /* Default order tp-cp-ep-dp-pp: rank = tp + 2·cp + 4·dp + 8·pp. */
  FsRankCoords c;
  fs_workload_rank_coords(w, 13, &c);
  ck_assert(c.tp == 1 && c.cp == 0 && c.dp == 1 && c.pp == 1);
  ck_assert(c.ep == 0 && c.edp == 1); /* f = cp + 2·dp = 2 */
  ck_assert_uint_eq(fs_workload_rank_at(w, &c), 13);
  guint g[8];
  static const struct { FsParallelDim dim; guint n; guint ranks[4]; } cases[] = {
    {FS_DIM_TP, 2, {12, 13}},        {FS_DIM_CP, 2, {13, 15}},  {FS_DIM_DP, 2, {9, 13}},
    {FS_DIM_PP, 2, {5, 13}},         {FS_DIM_EP, 2, {13, 15}},  {FS_DIM_DP_CP, 4, {9, 11, 13, 15}},
    /* Expert data parallel: the same expert index (ep 0), every edp index;
     * together with the EP group it tiles the dp × cp group. */
    {FS_DIM_EDP, 2, {9, 13}},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    ck_assert_uint_eq(fs_workload_group(w, cases[i].dim, 13, g), cases[i].n);
    for (guint j = 0; j < cases[i].n; j++)
      ck_assert_msg(g[j] == cases[i].ranks[j], "%s group: entry %u is %u", fs_parallel_dim_name(cases[i].dim),
                    j, g[j]);
  }
  /* Every rank has distinct coordinates (the layout is a bijection). */
  for (guint r = 0; r < 16; r++) {
    fs_workload_rank_coords(w, r, &c);
    ck_assert_uint_eq(fs_workload_rank_at(w, &c), r);
    ck_assert_uint_eq(fs_workload_gpu_of_rank(w, r), r);
  }
  /* TP outermost and an explicit rank map. */
  const char *text2 = "gpus: 4\nmodel: {layers: 4, hidden: 256, ffn_hidden: 1024, heads: 8, vocab: 1000, seq_length: 512}\n"
                      "training: {global_batch: 16}\nparallel: {tp: 2}\n"
                      "placement: {order: ep-pp-dp-cp-tp, ranks: [3, 2, 1, 0]}\n";
  g_autoptr(FsWorkload) v = fs_workload_load_string(text2, "q.yaml", NULL, NULL, &err);
  fs_assert_no_error(err);
  ck_assert_uint_eq(fs_workload_group(v, FS_DIM_TP, 0, g), 2);
  ck_assert(g[0] == 0 && g[1] == 2);
  ck_assert_uint_eq(fs_workload_group(v, FS_DIM_DP, 0, g), 2);
  ck_assert(g[0] == 0 && g[1] == 1);
  ck_assert_uint_eq(fs_workload_gpu_of_rank(v, 1), 2);
}
END_TEST

/* The corpus: y_ files load, n_ files fail with their .err fragment. */
START_TEST(test_workload_corpus)
{
  g_autofree char *dir = fs_test_data_path("workload");
  g_autoptr(GPtrArray) yes = yaml_files(dir, "y_");
  g_autoptr(GPtrArray) no = yaml_files(dir, "n_");
  ck_assert_uint_ge(yes->len, 3);
  ck_assert_uint_ge(no->len, 20);
  for (guint i = 0; i < yes->len; i++) {
    GError *err = NULL;
    g_autoptr(FsWorkload) w = fs_workload_load_file(g_ptr_array_index(yes, i), NULL, &err);
    ck_assert_msg(w != NULL, "%s: %s", (char *)g_ptr_array_index(yes, i), err ? err->message : "");
  }
  /* Every mismatch is listed before the test fails. */
  g_autoptr(GString) bad = g_string_new(NULL);
  for (guint i = 0; i < no->len; i++) {
    const char *path = g_ptr_array_index(no, i);
    g_autofree char *stem = g_strndup(path, strlen(path) - 5);
    g_autofree char *errfile = g_strconcat(stem, ".err", NULL);
    g_autofree char *expect = NULL;
    ck_assert_msg(g_file_get_contents(errfile, &expect, NULL, NULL), "%s has no .err", path);
    g_strchomp(expect);
    GError *err = NULL;
    g_autoptr(FsWorkload) w = fs_workload_load_file(path, NULL, &err);
    if (w != NULL)
      g_string_append_printf(bad, "%s was accepted\n", path);
    else if (strstr(err->message, expect) == NULL)
      g_string_append_printf(bad, "%s: \"%s\" lacks \"%s\"\n", path, err->message, expect);
    /* Every message names a file position. */
    else if (strstr(err->message, ".yaml:") == NULL)
      g_string_append_printf(bad, "%s: no position in \"%s\"\n", path, err->message);
    g_clear_error(&err);
  }
  /* i_ files: either outcome, never a crash; a rejection names the file. */
  g_autoptr(GPtrArray) either = yaml_files(dir, "i_");
  ck_assert_uint_ge(either->len, 3);
  for (guint i = 0; i < either->len; i++) {
    const char *path = g_ptr_array_index(either, i);
    GError *err = NULL;
    g_autoptr(FsWorkload) w = fs_workload_load_file(path, NULL, &err);
    if (w == NULL && strstr(err->message, path) == NULL)
      g_string_append_printf(bad, "%s: rejection does not name the file: \"%s\"\n", path, err->message);
    g_clear_error(&err);
  }
  /* Every file has a known prefix; every .err has its n_ file. */
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  const char *n;
  while ((n = g_dir_read_name(d)) != NULL) {
    if (strcmp(n, "README.md") == 0 || g_str_has_prefix(n, "y_") || g_str_has_prefix(n, "i_"))
      continue;
    if (!g_str_has_prefix(n, "n_")) {
      g_string_append_printf(bad, "%s: unknown prefix\n", n);
    } else if (g_str_has_suffix(n, ".err")) {
      g_autofree char *stem = g_strndup(n, strlen(n) - 4);
      g_autofree char *yaml = g_strconcat(dir, "/", stem, ".yaml", NULL);
      if (!g_file_test(yaml, G_FILE_TEST_EXISTS))
        g_string_append_printf(bad, "%s has no .yaml\n", n);
    }
  }
  ck_assert_msg(bad->len == 0, "%s", bad->str);
}
END_TEST

/* Uneven pipeline stages: Meta's Llama 3.1 405B layout (embedding and loss
 * counted as layers over 16 × 8 chunks), the same stages as stage_layers,
 * Megatron's first/last stage layers, and what each changes downstream
 * (chunk layers, stage memory, optimizer). */
START_TEST(test_workload_uneven_stages)
{
  GError *err = NULL;
  g_autoptr(FsWorkload) m = load_preset("llama3.1-405b-meta", NULL, &err);
  fs_assert_no_error(err);
  ck_assert_uint_eq(m->gpus, 16384);
  ck_assert_uint_eq(fs_workload_chunks(m), 128);
  guint first, count;
  fs_workload_chunk_layers(m, 0, &first, &count);
  ck_assert_uint_eq(first, 0);
  ck_assert_uint_eq(count, 0); /* the embedding alone */
  fs_workload_chunk_layers(m, 127, &first, &count);
  ck_assert_uint_eq(first, 126);
  ck_assert_uint_eq(count, 0); /* the output layer and loss alone */
  fs_workload_chunk_layers(m, 1, &first, &count);
  ck_assert_uint_eq(first, 0);
  ck_assert_uint_eq(count, 1);
  ck_assert_uint_eq(fs_workload_stage_layers(m, 0), 7);
  ck_assert_uint_eq(fs_workload_stage_layers(m, 1), 8);
  ck_assert_uint_eq(fs_workload_stage_layers(m, 15), 7);
  ck_assert_uint_eq(fs_workload_stage_layers(m, 16), 0);
  /* The embedding chunk holds no transformer layer but the word embedding. */
  g_autoptr(GArray) k0 = fs_workload_chunk_kernels(m, 0, FS_PASS_FORWARD);
  ck_assert_uint_gt(k0->len, 0);
  /* The same stages without interleaving: stage_layers [7, 8 × 14, 7]. */
  const char *text =
    "model: llama3.1-405b\ntraining: {global_batch: 2048, micro_batch: 1}\n"
    "parallel: {tp: 8, pp: 16, dp: 128, stage_layers: [7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7]}\n";
  g_autofree char *wdir = fs_test_source_path("workloads");
  g_autoptr(FsWorkload) s = fs_workload_load_string(text, "meta.yaml", wdir, NULL, &err);
  fs_assert_no_error(err);
  for (guint st = 0; st < 16; st++)
    ck_assert_uint_eq(fs_workload_stage_layers(s, st), fs_workload_stage_layers(m, st));
  FsMemoryLayout l;
  fs_workload_memory_layout(s, &l);
  FsMemoryBreakdown b0, b1;
  ck_assert(fs_memory_estimate(&s->model, &l, 0, NULL, &b0, &err));
  ck_assert(fs_memory_estimate(&s->model, &l, 1, NULL, &b1, &err));
  fs_assert_no_error(err);
  ck_assert_uint_eq(b0.layers, 7);
  ck_assert_uint_eq(b1.layers, 8);
  /* Stage 0: 7 layers and the embedding; stage 1: 8 layers. */
  FsTransformerParams tp;
  fs_transformer_params(&s->model, &tp);
  double per_layer = b1.params / 8;
  ck_assert_double_eq_tol(b0.params, 7 * per_layer + tp.embedding / 8, 1e-6 * b0.params);
  g_autoptr(GArray) o0 = fs_workload_optimizer_kernels(s, 0, &err);
  g_autoptr(GArray) o1 = fs_workload_optimizer_kernels(s, 1, &err);
  fs_assert_no_error(err);
  ck_assert(g_array_index(o0, FsKernel, 0).bytes != g_array_index(o1, FsKernel, 0).bytes);
  /* Megatron's --decoder-first/last-pipeline-num-layers: 126 = 7 + 14 × 8 + 7. */
  const char *ov[] = {"--pp=16", "--decoder-first-pipeline-num-layers", "7",
                      "--decoder-last-pipeline-num-layers=7", NULL};
  g_autoptr(FsWorkload) d = load_preset("llama3.1-405b", ov, &err);
  fs_assert_no_error(err);
  for (guint st = 0; st < 16; st++)
    ck_assert_uint_eq(fs_workload_stage_layers(d, st), fs_workload_stage_layers(m, st));
  /* parallel.stage_layers as an override, bracketed or not, with or without spaces. */
  const char *sl1[] = {"--pp=16", "parallel.stage_layers=[7,8,8,8,8,8,8,8,8,8,8,8,8,8,8,7]", NULL};
  const char *sl2[] = {"--pp=16", "stage_layers", "7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7", NULL};
  const char *const *sls[] = {sl1, sl2};
  for (guint i = 0; i < G_N_ELEMENTS(sls); i++) {
    g_autoptr(FsWorkload) o = load_preset("llama3.1-405b", sls[i], &err);
    fs_assert_no_error(err);
    for (guint st = 0; st < 16; st++)
      ck_assert_uint_eq(fs_workload_stage_layers(o, st), fs_workload_stage_layers(m, st));
  }
  const char *sl3[] = {"--pp=16", "parallel.stage_layers=[7,8,x]", NULL};
  g_autoptr(FsWorkload) o3 = load_preset("llama3.1-405b", sl3, &err);
  ck_assert_ptr_null(o3);
  fs_assert_error(err, FS_WORKLOAD_ERROR, "override parallel.stage_layers=[7,8,x]: expected a list of "
                  "layer counts like [7,8,8,7] for parallel.stage_layers, got \"[7,8,x]\"");
  const char *sl4[] = {"--pp=16", "parallel.stage_layers=[63,63]", NULL};
  g_autoptr(FsWorkload) o4 = load_preset("llama3.1-405b", sl4, &err);
  ck_assert_ptr_null(o4);
  fs_assert_error(err, FS_WORKLOAD_ERROR, "override parallel.stage_layers=[63,63]: stage_layers has 2 "
                  "entries, but pp is 16");
  const char *bad[] = {"--pp=16", "--decoder-first-pipeline-num-layers=8", NULL};
  g_autoptr(FsWorkload) e = load_preset("llama3.1-405b", bad, &err);
  ck_assert_ptr_null(e);
  fs_assert_error(err, FS_WORKLOAD_ERROR, "override --decoder-first-pipeline-num-layers=8: the 118 middle "
                  "layers are not divisible by the 15 middle pipeline stages");
  /* FP8 in Megatron's spelling: "--fp8-format hybrid" and "=hybrid"; other words refused. */
  const char *f1[] = {"--fp8-format", "hybrid", "--tp=8", NULL};
  g_autoptr(FsWorkload) h1 = load_preset("llama3.1-405b", f1, &err);
  fs_assert_no_error(err);
  ck_assert_int_eq(h1->dtype, FS_DTYPE_FP8);
  ck_assert_uint_eq(h1->tp, 8);
  const char *f2[] = {"--fp8-format=e4m3", NULL};
  g_autoptr(FsWorkload) h2 = load_preset("llama3.1-405b", f2, &err);
  fs_assert_no_error(err);
  ck_assert_int_eq(h2->dtype, FS_DTYPE_FP8);
  const char *f3[] = {"--fp8-format=e5m2", NULL};
  g_autoptr(FsWorkload) h3 = load_preset("llama3.1-405b", f3, &err);
  ck_assert_ptr_null(h3);
  fs_assert_error(err, FS_WORKLOAD_ERROR, "override --fp8-format=e5m2: --fp8-format takes one of hybrid, e4m3");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("workload");
  FS_ADD_TEST(s, test_workload_every_preset_loads);
  FS_ADD_TEST(s, test_workload_preset_values);
  FS_ADD_TEST(s, test_workload_chunk_kernels);
  FS_ADD_TEST(s, test_workload_overrides);
  FS_ADD_TEST(s, test_workload_topology_gpu_count);
  FS_ADD_TEST(s, test_workload_presets_compose);
  FS_ADD_TEST(s, test_workload_memory_fits_catalog_gpu);
  FS_ADD_TEST(s, test_workload_placement_groups);
  FS_ADD_TEST(s, test_workload_corpus);
  FS_ADD_TEST(s, test_workload_uneven_stages);
  return fs_test_run_suite(s);
}
