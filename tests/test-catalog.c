/* test-catalog.c — the hardware catalog: the real models/ folder, derived
 * figures, references, duplicates, lookups, and the models corpus
 * (tests/data/models/{y,n}_*.yaml with n_*.err fragments). */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "catalog/catalog-json.h"
#include "catalog/catalog.h"
#include "testutil.h"
#include "util/yaml.h"

/* The real catalog, loaded once per test (each test runs in its own
 * process under CK_FORK). */
static FsCatalog *load_real(void)
{
  g_autofree char *dir = fs_test_source_path("models");
  GError *error = NULL;
  FsCatalog *cat = fs_catalog_load_dir(dir, &error);
  fs_assert_no_error(error);
  ck_assert_ptr_nonnull(cat);
  return cat;
}

static const FsModel *get(const FsCatalog *cat, const char *name, FsModelKind kind)
{
  GError *error = NULL;
  const FsModel *m = fs_catalog_require(cat, name, kind, &error);
  fs_assert_no_error(error);
  ck_assert_ptr_nonnull(m);
  return m;
}

#define ck_assert_gbs(bytes_per_s, gbs, tol)                                          \
  ck_assert_msg(fabs((bytes_per_s) / 1e9 - (gbs)) <= (tol), "%s = %.4f GB/s, expected %.4f", \
                #bytes_per_s, (bytes_per_s) / 1e9, (double)(gbs))

START_TEST(test_catalog_real_models_have_sources)
{
  g_autoptr(FsCatalog) cat = load_real();
  ck_assert_uint_gt(fs_catalog_size(cat), 90);
  for (guint i = 0; i < fs_catalog_size(cat); i++) {
    const FsModel *m = fs_catalog_nth(cat, i);
    ck_assert_msg(m->source != NULL && strlen(m->source) > 10, "%s has no real source", m->name);
    ck_assert_ptr_nonnull(m->file);
    ck_assert_int_gt(m->line, 0);
  }
}
END_TEST

START_TEST(test_catalog_real_coverage)
{
  g_autoptr(FsCatalog) cat = load_real();
  static const char *const required[] = {
    "nvlink1", "nvlink2", "nvlink3", "nvlink4", "nvlink5", "nvlink-c2c", "nvlink4-network",
    "intel-upi-skylake", "amd-xgmi2", "ibm-xbus-power9", "ib-sdr", "ib-ddr", "ib-qdr", "ib-fdr",
    "ib-edr", "ib-hdr", "ib-hdr100", "ib-ndr200", "ib-ndr", "ib-xdr", "ethernet-100g",
    "ethernet-200g", "ethernet-400g", "ethernet-800g", "nvswitch-gen1", "nvswitch-gen2",
    "nvswitch-gen3", "nvswitch-gen4", "pex8796", "pex88096", "pex89144", "quantum-hdr",
    "quantum-2-ndr", "quantum-x800", "p100-sxm2", "v100-sxm2-16gb", "v100-sxm2-32gb",
    "a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm", "h100-pcie", "h200-sxm", "gh200", "b200",
    "gb200", "rtx-4090", "xeon-e5-2698-v4", "xeon-platinum-8168", "xeon-platinum-8480c",
    "epyc-7742", "epyc-9654", "power8-plus", "power9", "grace", "connectx-5", "connectx-6",
    "connectx-7", "connectx-8", "bluefield-3", NULL};
  for (guint i = 0; required[i]; i++)
    ck_assert_msg(fs_catalog_get(cat, required[i]) != NULL, "missing %s", required[i]);
  /* Every PCIe generation at every width. */
  for (int gen = 1; gen <= 6; gen++)
    for (int w = 1; w <= 16; w *= 2) {
      g_autofree char *name = g_strdup_printf("pcie-gen%d-x%d", gen, w);
      const FsModel *m = get(cat, name, FS_MODEL_LINK);
      ck_assert_int_eq(m->u.link.family, FS_LINK_PCIE);
      ck_assert_uint_eq(m->u.link.lanes, (guint)w);
    }
}
END_TEST

START_TEST(test_catalog_pcie_raw_bandwidth)
{
  g_autoptr(FsCatalog) cat = load_real();
  ck_assert_gbs(get(cat, "pcie-gen3-x16", FS_MODEL_LINK)->u.link.raw_bandwidth, 15.75, 0.01);
  ck_assert_gbs(get(cat, "pcie-gen4-x16", FS_MODEL_LINK)->u.link.raw_bandwidth, 31.5, 0.01);
  ck_assert_gbs(get(cat, "pcie-gen5-x16", FS_MODEL_LINK)->u.link.raw_bandwidth, 63.0, 0.02);
  ck_assert_gbs(get(cat, "pcie-gen1-x1", FS_MODEL_LINK)->u.link.raw_bandwidth, 0.25, 1e-9);
  ck_assert_gbs(get(cat, "pcie-gen2-x8", FS_MODEL_LINK)->u.link.raw_bandwidth, 4.0, 1e-9);
  /* Gen6 x16: 64 GT/s × 16 × 242/256 ÷ 8 = 121 GB/s. */
  ck_assert_gbs(get(cat, "pcie-gen6-x16", FS_MODEL_LINK)->u.link.raw_bandwidth, 121.0, 1e-6);
  /* Gen4 x16 effective: 31.5 × 256/280 = 28.8 GB/s. */
  const FsLinkModel *l = &get(cat, "pcie-gen4-x16", FS_MODEL_LINK)->u.link;
  ck_assert_uint_eq(l->max_payload, 256);
  ck_assert_uint_eq(l->tlp_overhead, 24);
  ck_assert_double_eq_tol(l->efficiency, 256.0 / 280.0, 1e-12);
  ck_assert_gbs(l->bandwidth, 28.8, 0.01);
}
END_TEST

START_TEST(test_catalog_link_explain)
{
  g_autoptr(FsCatalog) cat = load_real();
  g_autofree char *s = fs_link_model_explain(get(cat, "pcie-gen4-x16", FS_MODEL_LINK));
  ck_assert_msg(strstr(s, "PCIe Gen4 x16: 16 GT/s × 16 lanes × 128/130 ÷ 8 = 31.5 GB/s raw per "
                          "direction; × 0.914 TLP efficiency at 256 B payload") != NULL, "%s", s);
  ck_assert_msg(g_str_has_suffix(s, "= 28.8 GB/s"), "%s", s);
  g_autofree char *c = fs_link_model_explain(get(cat, "nvlink-c2c", FS_MODEL_LINK));
  ck_assert_str_eq(c, "NVLink-C2C: 450 GB/s per direction");
  g_autofree char *ib = fs_link_model_explain(get(cat, "ib-ndr", FS_MODEL_LINK));
  ck_assert_msg(strstr(ib, "106.25 Gb/s × 4 lanes × 256/257 × 514/544 ÷ 8 = 50.0 GB/s") != NULL,
                "%s", ib);
}
END_TEST

START_TEST(test_catalog_gpu_nvlinks)
{
  g_autoptr(FsCatalog) cat = load_real();
  static const struct {
    const char *gpu, *generation;
    guint links;
    double per_link_gbs;
  } cases[] = {
    {"p100-sxm2", "NVLink1", 4, 20},  {"v100-sxm2-32gb", "NVLink2", 6, 25},
    {"a100-sxm4-80gb", "NVLink3", 12, 25}, {"h100-sxm", "NVLink4", 18, 25},
    {"h200-sxm", "NVLink4", 18, 25},  {"b200", "NVLink5", 18, 50},
    {"gb200", "NVLink5", 18, 50},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    const FsGpuModel *g = &get(cat, cases[i].gpu, FS_MODEL_GPU)->u.gpu;
    ck_assert_ptr_nonnull(g->nvlink);
    ck_assert_str_eq(g->nvlink->u.link.generation, cases[i].generation);
    ck_assert_uint_eq(g->nvlinks, cases[i].links);
    ck_assert_gbs(g->nvlink->u.link.raw_bandwidth, cases[i].per_link_gbs, 1e-9);
    ck_assert_ptr_nonnull(g->pcie);
  }
  /* H100 SXM: 18 × 25 GB/s = 450 GB/s per direction. */
  const FsGpuModel *h = &get(cat, "h100-sxm", FS_MODEL_GPU)->u.gpu;
  ck_assert_gbs(h->nvlinks * h->nvlink->u.link.raw_bandwidth, 450, 1e-9);
  ck_assert_int_eq(h->arch, FS_ARCH_HOPPER);
  ck_assert_double_eq_tol(h->flops[FS_DTYPE_BF16], 989.4e12, 1e9);
  ck_assert_double_eq(h->flops[FS_DTYPE_FP4], 0);
  g_autofree char *ex = fs_model_explain(get(cat, "h100-sxm", FS_MODEL_GPU));
  ck_assert_msg(strstr(ex, "18 × nvlink4 25.0 GB/s = 450 GB/s per direction") != NULL, "%s", ex);
  /* The consumer card has no NVLink; GH200 and GB200 have C2C. */
  const FsGpuModel *r = &get(cat, "rtx-4090", FS_MODEL_GPU)->u.gpu;
  ck_assert_ptr_null(r->nvlink);
  ck_assert_uint_eq(r->nvlinks, 0);
  ck_assert_ptr_nonnull(get(cat, "gh200", FS_MODEL_GPU)->u.gpu.c2c);
  ck_assert_ptr_nonnull(get(cat, "gb200", FS_MODEL_GPU)->u.gpu.c2c);
  ck_assert_gbs(get(cat, "nvlink-c2c", FS_MODEL_LINK)->u.link.bandwidth, 450, 1e-9);
}
END_TEST

START_TEST(test_catalog_switches)
{
  g_autoptr(FsCatalog) cat = load_real();
  const FsSwitchModel *s3 = &get(cat, "nvswitch-gen3", FS_MODEL_SWITCH)->u.sw;
  ck_assert_uint_eq(s3->ports, 64);
  ck_assert(s3->reduction);
  ck_assert_str_eq(s3->port_link->name, "nvlink4");
  const FsSwitchModel *s1 = &get(cat, "nvswitch-gen1", FS_MODEL_SWITCH)->u.sw;
  ck_assert_uint_eq(s1->ports, 18);
  ck_assert(!s1->reduction);
  ck_assert_uint_eq(get(cat, "nvswitch-gen2", FS_MODEL_SWITCH)->u.sw.ports, 36);
  ck_assert_uint_eq(get(cat, "nvswitch-gen4", FS_MODEL_SWITCH)->u.sw.ports, 72);
  const FsSwitchModel *p = &get(cat, "pex8796", FS_MODEL_SWITCH)->u.sw;
  ck_assert_int_eq(p->kind, FS_SWITCH_PCIE);
  ck_assert_uint_eq(p->lanes, 96);
  ck_assert_uint_eq(p->ports, 6);
  ck_assert_uint_eq(get(cat, "quantum-hdr", FS_MODEL_SWITCH)->u.sw.ports, 40);
  ck_assert_uint_eq(get(cat, "quantum-2-ndr", FS_MODEL_SWITCH)->u.sw.ports, 64);
}
END_TEST

START_TEST(test_catalog_natural_order)
{
  g_autoptr(FsCatalog) cat = load_real();
  int x2 = -1, x16 = -1;
  for (guint i = 0; i < fs_catalog_size(cat); i++) {
    const char *n = fs_catalog_nth(cat, i)->name;
    if (strcmp(n, "pcie-gen4-x2") == 0)
      x2 = (int)i;
    if (strcmp(n, "pcie-gen4-x16") == 0)
      x16 = (int)i;
  }
  ck_assert_int_ge(x2, 0);
  ck_assert_int_gt(x16, x2);
}
END_TEST

static const char two_links[] =
  "models:\n"
  "  - name: ln\n"
  "    kind: link\n"
  "    family: nvlink\n"
  "    bandwidth: 25 GB/s\n"
  "    latency: 1 ns\n"
  "    source: test\n";

START_TEST(test_catalog_duplicate_across_files)
{
  g_autoptr(FsCatalog) cat = fs_catalog_new();
  GError *error = NULL;
  ck_assert(fs_catalog_load_string(cat, two_links, -1, "a.yaml", &error));
  fs_assert_no_error(error);
  g_autofree char *second = g_strconcat("# another file\n", two_links, NULL);
  ck_assert(!fs_catalog_load_string(cat, second, -1, "b.yaml", &error));
  ck_assert(g_error_matches(error, FS_CATALOG_ERROR, FS_CATALOG_ERROR_DUPLICATE));
  fs_assert_error(error, FS_CATALOG_ERROR,
                  "b.yaml:3:5: duplicate model \"ln\"; first defined at a.yaml:2:5");
  /* A failed load adds nothing. */
  ck_assert_uint_eq(fs_catalog_size(cat), 1);
}
END_TEST

START_TEST(test_catalog_unknown_reference)
{
  g_autoptr(FsCatalog) cat = fs_catalog_new();
  GError *error = NULL;
  static const char nic[] = "models:\n"
                            "  - name: n\n"
                            "    kind: nic\n"
                            "    port_link: ln\n"
                            "    pcie: pcie-gen4-x61\n"
                            "    latency: 1 ns\n"
                            "    source: test\n";
  ck_assert(fs_catalog_load_string(cat, nic, -1, "nic.yaml", &error));
  /* Before "ln" exists: an unknown model, with its position. */
  ck_assert(!fs_catalog_resolve(cat, &error));
  ck_assert(g_error_matches(error, FS_CATALOG_ERROR, FS_CATALOG_ERROR_UNKNOWN));
  fs_assert_error(error, FS_CATALOG_ERROR, "nic.yaml:4:16: unknown link model \"ln\"");
  /* "ln" is an NVLink, which a NIC port cannot be. */
  ck_assert(fs_catalog_load_string(cat, two_links, -1, "links.yaml", &error));
  ck_assert(!fs_catalog_resolve(cat, &error));
  fs_assert_error(error, FS_CATALOG_ERROR, "nic.yaml:4:16: \"ln\" is a nvlink link; \"port_link\" "
                                           "expects a link of family infiniband or ethernet");

  /* Did-you-mean over the models of the expected kind. */
  g_autoptr(FsCatalog) cat2 = fs_catalog_new();
  static const char rest[] = "models:\n"
                             "  - name: ln\n"
                             "    kind: link\n"
                             "    family: infiniband\n"
                             "    bandwidth: 50 GB/s\n"
                             "    latency: 1 ns\n"
                             "    source: test\n"
                             "  - name: pcie-gen4\n"
                             "    kind: link\n"
                             "    family: pcie\n"
                             "    lane_rate: 16 GT/s\n"
                             "    widths: [16]\n"
                             "    latency: 1 ns\n"
                             "    source: test\n";
  ck_assert(fs_catalog_load_string(cat2, rest, -1, "rest.yaml", &error));
  ck_assert(fs_catalog_load_string(cat2, nic, -1, "nic.yaml", &error));
  ck_assert(!fs_catalog_resolve(cat2, &error));
  fs_assert_error(error, FS_CATALOG_ERROR, "nic.yaml:5:11: unknown link model \"pcie-gen4-x61\"; "
                                           "did you mean \"pcie-gen4-x16\"?");
}
END_TEST

START_TEST(test_catalog_lookups)
{
  g_autoptr(FsCatalog) cat = load_real();
  GError *error = NULL;
  ck_assert_ptr_null(fs_catalog_get(cat, "h100"));
  ck_assert_ptr_null(fs_catalog_find(cat, "h100-sxn", &error));
  fs_assert_error(error, FS_CATALOG_ERROR, "unknown model \"h100-sxn\"; did you mean \"h100-sxm\"?");
  ck_assert_ptr_null(fs_catalog_require(cat, "nvlink4", FS_MODEL_GPU, &error));
  fs_assert_error(error, FS_CATALOG_ERROR, "\"nvlink4\" is a link model, not a gpu model");
  ck_assert_ptr_null(fs_catalog_require(cat, "a100-sxm4-80g", FS_MODEL_GPU, &error));
  fs_assert_error(error, FS_CATALOG_ERROR, "did you mean \"a100-sxm4-80gb\"?");
}
END_TEST

/* Every table of the models schema is sound (bounds and defaults parse),
 * and the lane counts the schema reads are the README's. */
START_TEST(test_catalog_schemas_are_sound)
{
  guint n;
  const FsSchemaEntry *e = fs_catalog_schemas(&n);
  ck_assert_uint_ge(n, 7);
  for (guint i = 0; i < n; i++) {
    GError *err = NULL;
    ck_assert_msg(fs_schema_check(e[i].schema, &err), "%s: %s", e[i].id, err ? err->message : "");
  }
  ck_assert_str_eq(e[0].id, "catalog.file");
}
END_TEST

START_TEST(test_catalog_names_roundtrip)
{
  for (int i = 0; i < FS_MODEL_N_KINDS; i++) {
    FsModelKind k;
    ck_assert(fs_model_kind_from_name(fs_model_kind_name((FsModelKind)i), &k));
    ck_assert_int_eq(k, i);
  }
  for (int i = 0; i < FS_DTYPE_N; i++) {
    FsDtype d;
    ck_assert(fs_dtype_from_name(fs_dtype_name((FsDtype)i), &d));
    ck_assert_int_eq(d, i);
  }
  FsLinkFamily f;
  ck_assert(fs_link_family_from_name("nvlink-c2c", &f));
  ck_assert_int_eq(f, FS_LINK_C2C);
  ck_assert(!fs_link_family_from_name("pcie4", &f));
  FsGpuArch a;
  ck_assert(fs_gpu_arch_from_name("blackwell", &a));
  ck_assert_int_eq(a, FS_ARCH_BLACKWELL);
  FsCpuVendor v;
  ck_assert(fs_cpu_vendor_from_name("amd", &v));
  ck_assert_int_eq(v, FS_VENDOR_AMD);
  FsSwitchKind s;
  ck_assert(!fs_switch_kind_from_name("nvswitch3", &s));
}
END_TEST

/* Writes text to dir/name. */
static void write_file(const char *dir, const char *name, const char *text)
{
  g_autofree char *path = g_build_filename(dir, name, NULL);
  ck_assert(g_file_set_contents(path, text, -1, NULL));
}

START_TEST(test_catalog_load_dir_only_top_level_yaml)
{
  g_autofree char *dir = g_dir_make_tmp("fs-catalog-XXXXXX", NULL);
  ck_assert_ptr_nonnull(dir);
  write_file(dir, "links.yaml", two_links);
  write_file(dir, "notes.txt", "not yaml: [");
  g_autofree char *sub = g_build_filename(dir, "nccl", NULL);
  ck_assert_int_eq(g_mkdir(sub, 0700), 0);
  write_file(sub, "broken.yaml", "this: [is not a models file");
  GError *error = NULL;
  g_autoptr(FsCatalog) cat = fs_catalog_load_dir(dir, &error);
  fs_assert_no_error(error);
  ck_assert_uint_eq(fs_catalog_size(cat), 1);

  /* A folder without models files is an error, as is a missing folder. */
  g_autoptr(FsCatalog) none = fs_catalog_load_dir(sub, &error);
  ck_assert_ptr_null(none);
  g_clear_error(&error);
  g_autofree char *broken = g_build_filename(sub, "broken.yaml", NULL);
  g_autofree char *moved = g_build_filename(sub, "broken.txt", NULL);
  ck_assert_int_eq(g_rename(broken, moved), 0);
  g_autoptr(FsCatalog) empty = fs_catalog_load_dir(sub, &error);
  ck_assert_ptr_null(empty);
  fs_assert_error(error, FS_CATALOG_ERROR, "no *.yaml models files");
  g_autofree char *gone = g_build_filename(dir, "missing", NULL);
  g_autoptr(FsCatalog) missing = fs_catalog_load_dir(gone, &error);
  ck_assert_ptr_null(missing);
  fs_assert_error(error, FS_CATALOG_ERROR, "cannot open models folder");
  g_remove(moved);
  g_remove(sub);
  g_autofree char *a = g_build_filename(dir, "links.yaml", NULL);
  g_autofree char *b = g_build_filename(dir, "notes.txt", NULL);
  g_remove(a);
  g_remove(b);
  g_remove(dir);
}
END_TEST

START_TEST(test_catalog_default_dir_env)
{
  g_setenv("FABRICSIM_MODELS", "/some/where", TRUE);
  ck_assert_str_eq(fs_catalog_default_dir(), "/some/where");
  g_unsetenv("FABRICSIM_MODELS");
  /* Built in a source tree: its models/ folder. */
  ck_assert_str_eq(fs_catalog_default_dir(), FS_SOURCE_DATA_DIR "/models");
}
END_TEST

START_TEST(test_catalog_json)
{
  g_autoptr(FsCatalog) cat = load_real();
  json_t *j = fs_model_to_json(get(cat, "h100-sxm", FS_MODEL_GPU));
  ck_assert_str_eq(json_string_value(json_object_get(j, "name")), "h100-sxm");
  ck_assert_str_eq(json_string_value(json_object_get(j, "nvlink")), "nvlink4");
  ck_assert_int_eq(json_integer_value(json_object_get(j, "nvlinks")), 18);
  ck_assert_ptr_nonnull(json_object_get(json_object_get(j, "flops"), "bf16"));
  /* Stable key order: name first. */
  char *text = json_dumps(j, JSON_COMPACT);
  ck_assert(g_str_has_prefix(text, "{\"name\":\"h100-sxm\",\"kind\":\"gpu\""));
  free(text);
  json_decref(j);
  json_t *links = fs_catalog_to_json(cat, FS_MODEL_SWITCH);
  ck_assert_uint_gt(json_array_size(links), 5);
  json_decref(links);
}
END_TEST

/* A copy lists the same models with the same JSON, owns its strings and
 * references (each points at the copy's model of that name), and a
 * calibration of the copy leaves the original as it was. */
START_TEST(test_catalog_copy)
{
  g_autoptr(FsCatalog) cat = load_real();
  FsCatalog *copy = fs_catalog_copy(cat);
  ck_assert_uint_eq(fs_catalog_size(copy), fs_catalog_size(cat));
  for (guint i = 0; i < fs_catalog_size(cat); i++) {
    const FsModel *a = fs_catalog_nth(cat, i), *b = fs_catalog_nth(copy, i);
    ck_assert_ptr_ne(a, b);
    ck_assert_ptr_ne(a->name, b->name);
    ck_assert_ptr_eq(fs_catalog_get(copy, a->name), b);
    json_t *ja = fs_model_to_json(a), *jb = fs_model_to_json(b);
    ck_assert_msg(json_equal(ja, jb), "%s differs in the copy", a->name);
    json_decref(ja);
    json_decref(jb);
    const FsModel *refs[3] = {NULL, NULL, NULL};
    if (b->kind == FS_MODEL_GPU) {
      refs[0] = b->u.gpu.nvlink, refs[1] = b->u.gpu.pcie, refs[2] = b->u.gpu.c2c;
    } else if (b->kind == FS_MODEL_SWITCH) {
      refs[0] = b->u.sw.port_link;
    } else if (b->kind == FS_MODEL_CPU) {
      refs[0] = b->u.cpu.pcie, refs[1] = b->u.cpu.intersocket, refs[2] = b->u.cpu.nvlink;
    } else if (b->kind == FS_MODEL_NIC) {
      refs[0] = b->u.nic.port_link, refs[1] = b->u.nic.pcie;
    }
    for (guint k = 0; k < 3; k++)
      if (refs[k] != NULL)
        ck_assert_msg(fs_catalog_get(copy, refs[k]->name) == refs[k],
                      "%s refers outside its catalog", b->name);
  }
  GError *error = NULL;
  ck_assert(fs_catalog_set_link_efficiency(copy, "nvlink4", 0.5, "test", &error));
  fs_assert_no_error(error);
  const FsModel *h100 = get(copy, "h100-sxm", FS_MODEL_GPU);
  ck_assert_double_eq(h100->u.gpu.nvlink->u.link.efficiency, 0.5);
  ck_assert_double_ne(get(cat, "h100-sxm", FS_MODEL_GPU)->u.gpu.nvlink->u.link.efficiency, 0.5);
  fs_catalog_free(copy); /* the original still works after the copy is gone */
  ck_assert_str_eq(get(cat, "h100-sxm", FS_MODEL_GPU)->u.gpu.nvlink->name, "nvlink4");
}
END_TEST

/* Every corpus file: y_ must load and resolve; n_ must fail with an error
 * whose message starts with "path:line:col: " and contains its .err
 * fragment. */
START_TEST(test_catalog_corpus)
{
  g_autofree char *dir = fs_test_data_path("models");
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  g_autoptr(GRegex) pos = g_regex_new("^[^:]+:[0-9]+:[0-9]+: ", 0, 0, NULL);
  guint n_yes = 0, n_no = 0;
  for (const char *name; (name = g_dir_read_name(d)) != NULL;) {
    if (!g_str_has_suffix(name, ".yaml"))
      continue;
    gboolean yes = g_str_has_prefix(name, "y_");
    ck_assert_msg(yes || g_str_has_prefix(name, "n_"), "corpus file %s is neither y_ nor n_", name);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autoptr(FsCatalog) cat = fs_catalog_new();
    GError *error = NULL;
    gboolean ok = fs_catalog_load_file(cat, path, &error) && fs_catalog_resolve(cat, &error);
    if (yes) {
      ck_assert_msg(ok, "%s: %s", name, error ? error->message : "?");
      ck_assert_uint_gt(fs_catalog_size(cat) + (strcmp(name, "y_empty_list.yaml") == 0), 0);
      n_yes++;
      continue;
    }
    ck_assert_msg(!ok, "%s was accepted", name);
    ck_assert_ptr_nonnull(error);
    ck_assert_msg(error->domain == FS_CATALOG_ERROR || error->domain == FS_YAML_ERROR,
                  "%s: unexpected domain for %s", name, error->message);
    ck_assert_msg(g_regex_match(pos, error->message, 0, NULL) &&
                      g_str_has_prefix(error->message, path),
                  "%s: error lacks file:line:col: %s", name, error->message);
    g_autofree char *errpath = g_strndup(path, strlen(path) - strlen(".yaml"));
    g_autofree char *errfile = g_strconcat(errpath, ".err", NULL);
    g_autofree char *fragment = NULL;
    ck_assert_msg(g_file_get_contents(errfile, &fragment, NULL, NULL), "%s has no .err", name);
    g_strchomp(fragment);
    ck_assert_msg(strstr(error->message, fragment) != NULL, "%s: \"%s\" lacks \"%s\"", name,
                  error->message, fragment);
    g_clear_error(&error);
    n_no++;
  }
  ck_assert_uint_ge(n_yes, 5);
  ck_assert_uint_ge(n_no, 20);
}
END_TEST

START_TEST(test_catalog_identification)
{
  g_autoptr(FsCatalog) cat = load_real();
  /* Every GPU and NIC of the catalog can be identified by PCI id (a NIC
   * that stands for several devices, never: it has none), every GPU by
   * compute capability and package, every CPU by CPUID. */
  guint n_multi = 0;
  for (guint i = 0; i < fs_catalog_size(cat); i++) {
    const FsModel *m = fs_catalog_nth(cat, i);
    gboolean multi = m->kind == FS_MODEL_NIC && m->u.nic.devices > 1;
    n_multi += multi;
    if (multi)
      ck_assert_msg(*m->ids.pci_ids == '\0', "%s stands for devices but has pci_ids", m->name);
    else if (m->kind == FS_MODEL_GPU || m->kind == FS_MODEL_NIC)
      ck_assert_msg(*m->ids.pci_ids != '\0', "%s has no pci_ids", m->name);
    if (m->kind == FS_MODEL_GPU)
      ck_assert_msg(m->u.gpu.compute_capability >= 60 && *m->u.gpu.form_factor != '\0',
                    "%s lacks compute_capability or form_factor", m->name);
    if (m->kind == FS_MODEL_CPU)
      ck_assert_msg(*m->ids.cpuid != '\0', "%s has no cpuid", m->name);
  }
  ck_assert_uint_eq(n_multi, 1); /* efa-v2-p5 */
  ck_assert_uint_eq(get(cat, "efa-v2-p5", FS_MODEL_NIC)->u.nic.devices, 4);
  ck_assert_uint_eq(get(cat, "connectx-7", FS_MODEL_NIC)->u.nic.devices, 1);
  const FsModel *h = get(cat, "h100-sxm", FS_MODEL_GPU), *v = get(cat, "v100-sxm2-32gb", FS_MODEL_GPU);
  ck_assert(fs_model_has_pci_id(h, 0x10de, 0x2330));
  ck_assert(!fs_model_has_pci_id(h, 0x10de, 0x2331));
  ck_assert(fs_model_has_pci_id(v, 0x10de, 0x1db8));   /* SXM3, DGX-2 */
  ck_assert(fs_model_has_product_name(h, "NVIDIA H100 80GB HBM3"));
  ck_assert(fs_model_has_product_name(v, "v100 sxm3 32gb"));
  ck_assert(!fs_model_has_product_name(h, "NVIDIA H100 PCIe"));
  ck_assert(fs_model_has_cpuid(get(cat, "epyc-7742", FS_MODEL_CPU), "AuthenticAMD", 23, 49));
  ck_assert(!fs_model_has_cpuid(get(cat, "epyc-7742", FS_MODEL_CPU), "AuthenticAMD", 25, 1));
  ck_assert(fs_model_has_cpuid(get(cat, "power9", FS_MODEL_CPU), "ppc64le", -1, -1));
  g_autofree char *n = fs_model_name_normalize("  Tesla  V100-SXM2_16GB ");
  ck_assert_str_eq(n, "v100 sxm2 16gb");
  ck_assert_ptr_eq(h->u.gpu.reference_cpu, get(cat, "xeon-platinum-8480c", FS_MODEL_CPU));
  ck_assert_uint_eq(get(cat, "xeon-platinum-8480c", FS_MODEL_CPU)->u.cpu.cores, 56);
  /* A copy keeps the lists. */
  g_autoptr(FsCatalog) copy = fs_catalog_copy(cat);
  ck_assert(fs_model_has_pci_id(fs_catalog_get(copy, "h100-sxm"), 0x10de, 0x2330));
  ck_assert_str_eq(fs_catalog_get(copy, "a10")->u.gpu.form_factor, "pcie");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("catalog");
  FS_ADD_TEST(s, test_catalog_real_models_have_sources);
  FS_ADD_TEST(s, test_catalog_real_coverage);
  FS_ADD_TEST(s, test_catalog_pcie_raw_bandwidth);
  FS_ADD_TEST(s, test_catalog_link_explain);
  FS_ADD_TEST(s, test_catalog_gpu_nvlinks);
  FS_ADD_TEST(s, test_catalog_switches);
  FS_ADD_TEST(s, test_catalog_natural_order);
  FS_ADD_TEST(s, test_catalog_duplicate_across_files);
  FS_ADD_TEST(s, test_catalog_unknown_reference);
  FS_ADD_TEST(s, test_catalog_lookups);
  FS_ADD_TEST(s, test_catalog_names_roundtrip);
  FS_ADD_TEST(s, test_catalog_schemas_are_sound);
  FS_ADD_TEST(s, test_catalog_load_dir_only_top_level_yaml);
  FS_ADD_TEST(s, test_catalog_default_dir_env);
  FS_ADD_TEST(s, test_catalog_json);
  FS_ADD_TEST(s, test_catalog_copy);
  FS_ADD_TEST(s, test_catalog_corpus);
  FS_ADD_TEST(s, test_catalog_identification);
  return fs_test_run_suite(s);
}
