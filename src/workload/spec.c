/* spec.c — the workload YAML loader and validation (see spec.h and
 * workloads/README.md).  The field table and overrides are in
 * spec-fields.c; views for the compute module in spec-views.c. */
#include "workload/spec.h"

#include <string.h>

#include "util/datadir.h"
#include "util/error.h"
#include "util/limits.h"
#include "util/names.h"
#include "util/strutil.h"
#include "util/yaml.h"
#include "workload/spec-fields.h"

G_DEFINE_QUARK(fs-workload-error-quark, fs_workload_error)

#define MAX_PRESET_DEPTH 8
#define DEFAULT_ORDER "tp-cp-ep-dp-pp"

/* ---- construction -------------------------------------------------------- */

static FsWorkload *workload_new(const char *file)
{
  FsWorkload *w = g_new0(FsWorkload, 1);
  w->priv = g_new0(struct FsWorkloadPriv, 1);
  w->priv->files = g_string_chunk_new(256);
  w->file = g_strdup(file);
  fs_transformer_config_init(&w->model);
  w->form = FS_MODEL_FORM_TRANSFORMER;
  w->micro_batch = 1;
  w->dtype = FS_DTYPE_BF16;
  w->optimizer = FS_OPTIMIZER_ADAM;
  w->recompute = FS_RECOMPUTE_NONE;
  w->tp = w->pp = w->cp = w->ep = w->vp = 1;
  w->schedule = FS_PP_1F1B;
  w->overlap_dp_grads = TRUE;
  w->overlap_param_gather = TRUE;
  w->order = g_strdup(DEFAULT_ORDER);
  return w;
}

void fs_workload_free(FsWorkload *w)
{
  if (w == NULL)
    return;
  g_free(w->name);
  g_free(w->description);
  g_free(w->source);
  g_free(w->file);
  g_free(w->preset);
  g_free(w->model_name);
  for (guint i = 0; i < w->n_layers; i++) {
    g_free(w->layers[i].name);
    g_free(w->layers[i].bwd_names[0]);
    g_free(w->layers[i].bwd_names[1]);
  }
  g_free(w->layers);
  g_free(w->order);
  g_free(w->rank_map);
  g_free(w->stage_layers);
  g_free(w->vstage_first);
  for (guint i = 0; i < F_N; i++)
    g_free(w->priv->pos[i].override);
  g_string_chunk_free(w->priv->files);
  g_free(w->priv);
  g_free(w);
}

/* ---- positions and messages -------------------------------------------- */

static void mark_node(FsWorkload *w, FieldPos *p, const FsYamlNode *node)
{
  p->file = g_string_chunk_insert_const(w->priv->files, node->file);
  p->line = node->line;
  p->col = node->col;
  g_clear_pointer(&p->override, g_free);
  p->given = TRUE;
}

static void mark(FsWorkload *w, FieldId id, const FsYamlNode *node)
{
  mark_node(w, &w->priv->pos[id], node);
}

/* Fails with the position of field id: "file:line:col: " when it came from
 * a file, "override --tp=3: " when from an override, else the position of
 * its section (or the file). */
static gboolean fail_at(const FsWorkload *w, FieldId id, GError **error, const char *format, ...)
  G_GNUC_PRINTF(4, 5);
static gboolean fail_at(const FsWorkload *w, FieldId id, GError **error, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  const FieldPos *p = &w->priv->pos[id];
  if (p->override != NULL) {
    g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID, "override %s: %s", p->override, msg);
    return FALSE;
  }
  if (!p->given) {
    const char *path = fs_workload_field_path(id);
    p = g_str_has_prefix(path, "model.")      ? &w->priv->model_pos
        : g_str_has_prefix(path, "training.") ? &w->priv->training_pos
        : g_str_has_prefix(path, "parallel.") ? &w->priv->parallel_pos
                                              : &w->priv->top_pos;
    if (p->line == 0)
      p = &w->priv->top_pos;
  }
  fs_set_error_at(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID, p->file ? p->file : w->file,
                  p->line, p->col, "%s", msg);
  return FALSE;
}

/* ---- YAML fields ----------------------------------------------------------- */

/* FsSchemaRead.seen: remembers where each field of the table came from
 * (for later messages); fsdp, which no offset reaches, is stored here. */
static gboolean field_seen(const FsSchemaField *f, const FsYamlNode *node, gpointer data,
                           GError **error)
{
  FsWorkload *w = data;
  if (f->id == F_FSDP && !fs_yaml_get_bool(node, &w->priv->fsdp, error))
    return FALSE;
  if (f->id != F_NONE)
    mark(w, f->id, node);
  return TRUE;
}

/* Reads map against one of the workload's tables into w. */
static gboolean read_section(FsWorkload *w, const FsSchema *schema, const FsYamlNode *map,
                             GError **error)
{
  FsSchemaRead opts = {.seen = field_seen, .data = w};
  return fs_schema_read(schema, map, w, &opts, error);
}

static gboolean opt_dup_string(const FsYamlNode *map, const char *key, char **out, GError **error)
{
  const char *s = NULL;
  if (!fs_yaml_opt_string(map, key, &s, error))
    return FALSE;
  if (s != NULL) {
    g_free(*out);
    *out = g_strdup(s);
  }
  return TRUE;
}

/* ---- model: presets and layer lists ---------------------------------------- */

static gboolean parse_model(FsWorkload *w, const FsYamlNode *node, const char *dir, guint depth,
                            GError **error);

static int compare_strings(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Preset names (file base names) in dir, appended to names. */
static void list_presets(const char *dir, GPtrArray *names)
{
  g_autoptr(GDir) d = dir ? g_dir_open(dir, 0, NULL) : NULL;
  const char *n;
  while (d && (n = g_dir_read_name(d)) != NULL)
    if (g_str_has_suffix(n, ".yaml"))
      g_ptr_array_add(names, g_strndup(n, strlen(n) - 5));
}

/* Reads model preset `name` (a plain file name: letters, digits, '-', '_', '.') from dir, then
 * from the default workloads folder, and parses its "model" into w, so that the file's own keys
 * given after it override the preset's. Presets may name presets down to MAX_PRESET_DEPTH.
 * FS_WORKLOAD_ERROR_PRESET at `at` for an unknown preset (with the nearest name), one that is
 * not a mapping, or nesting too deep. */
static gboolean load_preset(FsWorkload *w, const char *name, const FsYamlNode *at, const char *dir,
                            guint depth, GError **error)
{
  /* The preset guard: MAX_PRESET_DEPTH, or $FABRICSIM_MAX_PRESET_DEPTH (at most 1000). */
  guint64 limit = fs_env_limit("FABRICSIM_MAX_PRESET_DEPTH", MAX_PRESET_DEPTH, 1000);
  if (depth > limit) {
    fs_set_error_at(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_PRESET, at->file, at->line, at->col,
                    "presets nest deeper than %" G_GUINT64_FORMAT " (does preset \"%s\" refer "
                    "to itself? FABRICSIM_MAX_PRESET_DEPTH raises the limit)", limit, name);
    return FALSE;
  }
  gboolean plain = name[0] != '\0' && name[0] != '.';
  for (const char *c = name; *c; c++)
    plain &= g_ascii_isalnum(*c) || *c == '-' || *c == '_' || *c == '.';
  g_autofree char *path = NULL;
  const char *dirs[] = {dir, fs_workload_default_dir()};
  for (guint i = 0; plain && path == NULL && i < G_N_ELEMENTS(dirs); i++) {
    if (dirs[i] == NULL)
      continue;
    g_autofree char *file = g_strconcat(name, ".yaml", NULL);
    g_autofree char *p = g_build_filename(dirs[i], file, NULL);
    if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
      path = g_steal_pointer(&p);
  }
  if (path == NULL) {
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    list_presets(dir, names);
    list_presets(fs_workload_default_dir(), names);
    g_ptr_array_sort(names, compare_strings);
    g_ptr_array_add(names, NULL);
    const char *near = fs_did_you_mean(name, (const char *const *)names->pdata, -1);
    if (near)
      fs_set_error_at(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_PRESET, at->file, at->line, at->col,
                      "unknown model preset \"%s\"; did you mean \"%s\"?", name, near);
    else
      fs_set_error_at(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_PRESET, at->file, at->line, at->col,
                      "unknown model preset \"%s\" (no %s.yaml beside the workload or in %s)", name,
                      name, fs_workload_default_dir());
    return FALSE;
  }
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_file(path, error);
  if (doc == NULL)
    return FALSE;
  FsYamlNode *root = fs_yaml_doc_root(doc);
  if (root == NULL || root->kind != FS_YAML_MAP) {
    fs_set_error_at(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_PRESET, path, 1, 1,
                    "preset \"%s\" is not a workload mapping", name);
    return FALSE;
  }
  FsYamlNode *model = fs_yaml_require_key(root, "model", "workload", error);
  if (model == NULL)
    return FALSE;
  g_autofree char *pdir = g_path_get_dirname(path);
  return parse_model(w, model, pdir, depth + 1, error);
}

/* FS_WORKLOAD_MAX_LAYERS, or $FABRICSIM_MAX_LAYERS when that is a positive
 * integer (read once). */
static guint64 max_layers(void)
{
  static gsize ready;
  static guint64 value;
  if (g_once_init_enter(&ready)) {
    value = fs_env_limit("FABRICSIM_MAX_LAYERS", FS_WORKLOAD_MAX_LAYERS, G_MAXUINT32);
    g_once_init_leave(&ready, 1);
  }
  return value;
}

/* Parses the "layers" list of a layer-list model, expanding "repeat" into numbered copies (up
 * to FABRICSIM_MAX_LAYERS in all), and replaces the layers w had (a preset's). The layers
 * parsed before an error are still stored, so w stays consistent for freeing; the error is at
 * the entry. */
static gboolean parse_layers(FsWorkload *w, const FsYamlNode *list, GError **error)
{
  if (!fs_yaml_require_seq(list, error))
    return FALSE;
  if (list->n == 0) {
    fs_yaml_error(error, list, "a layer-list model needs at least one layer");
    return FALSE;
  }
  GArray *out = g_array_new(FALSE, TRUE, sizeof(FsLayerSpec));
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < list->n; i++) {
    const FsYamlNode *n = list->values[i];
    LayerEntry e = {0};
    ok = fs_schema_read(&fs_workload_layer_schema, n, &e, NULL, error);
    if (!ok)
      break;
    const char *name = e.name;
    guint repeat = e.repeat;
    if ((guint64)out->len + (guint64)repeat > max_layers()) {
      fs_yaml_error(error, n, "the layer list expands to more than %" G_GUINT64_FORMAT
                    " layers (repeats and aliases included) at this entry; "
                    "FABRICSIM_MAX_LAYERS raises the limit", max_layers());
      ok = FALSE;
      break;
    }
    for (guint r = 0; r < repeat; r++) {
      FsLayerSpec L = {0};
      L.name = repeat > 1 ? g_strdup_printf("%s.%u", name ? name : "layer", r)
                          : g_strdup(name ? name : "layer");
      L.bwd_names[0] = g_strconcat(L.name, ".dgrad", NULL);
      L.bwd_names[1] = g_strconcat(L.name, ".wgrad", NULL);
      L.params = e.params;
      L.flops = e.flops;
      L.activations = (double)e.activations;
      L.cls = (FsKernelClass)e.kind;
      g_array_append_val(out, L);
    }
  }
  /* Replace (a preset may have given layers already). */
  for (guint i = 0; i < w->n_layers; i++) {
    g_free(w->layers[i].name);
    g_free(w->layers[i].bwd_names[0]);
    g_free(w->layers[i].bwd_names[1]);
  }
  g_free(w->layers);
  w->n_layers = out->len;
  w->layers = (FsLayerSpec *)g_array_free(out, FALSE);
  return ok;
}

/* Parses the "model" of a workload or preset: a bare preset name, or a mapping that may name a
 * preset first, set the kind (transformer or layers) and then give its own fields, which
 * override the preset's. depth counts preset nesting; only the top level records the preset's
 * name and the model's position. */
static gboolean parse_model(FsWorkload *w, const FsYamlNode *node, const char *dir, guint depth,
                            GError **error)
{
  if (depth == 0)
    mark_node(w, &w->priv->model_pos, node);
  if (node->kind == FS_YAML_SCALAR) {
    const char *name;
    if (!fs_yaml_get_string(node, &name, error) || !load_preset(w, name, node, dir, depth, error))
      return FALSE;
    if (depth == 0) {
      g_free(w->preset);
      w->preset = g_strdup(name);
    }
    return TRUE;
  }
  if (!fs_yaml_require_map(node, error))
    return FALSE;
  const FsYamlNode *pn = fs_yaml_map_get(node, "preset");
  if (pn != NULL) {
    const char *name;
    if (!fs_yaml_get_string(pn, &name, error) || !load_preset(w, name, pn, dir, depth, error))
      return FALSE;
    if (depth == 0) {
      g_free(w->preset);
      w->preset = g_strdup(name);
    }
  }
  const FsYamlNode *kn = fs_yaml_map_get(node, "kind");
  int kind;
  if (kn != NULL) {
    if (!fs_schema_read_value(fs_schema_field(&fs_workload_model_schema, "kind"), kn, &kind, error))
      return FALSE;
    w->form = kind == 1 ? FS_MODEL_FORM_LAYERS : FS_MODEL_FORM_TRANSFORMER;
  }
  if (!opt_dup_string(node, "name", &w->model_name, error) ||
      !opt_dup_string(node, "source", &w->source, error) ||
      !opt_dup_string(node, "description", &w->description, error))
    return FALSE;
  if (w->form == FS_MODEL_FORM_LAYERS) {
    if (!fs_schema_read(&fs_workload_layers_schema, node, NULL, NULL, error))
      return FALSE;
    const FsYamlNode *ln = fs_yaml_map_get(node, "layers");
    if (ln == NULL && w->n_layers == 0) {
      fs_yaml_error(error, node, "a layer-list model (kind: layers) needs \"layers\"");
      return FALSE;
    }
    return ln == NULL || parse_layers(w, ln, error);
  }
  return read_section(w, &fs_workload_model_schema, node, error);
}

/* ---- the document ------------------------------------------------------------ */

/* parallel.stage_layers: a list of layer counts, one per pipeline stage
 * (checked against pp and the layer count by resolve_stages). */
static gboolean parse_stage_layers(FsWorkload *w, const FsYamlNode *node, GError **error)
{
  if (!fs_yaml_require_seq(node, error))
    return FALSE;
  if (node->n == 0) {
    fs_yaml_error(error, node, "stage_layers is empty; expected one layer count per pipeline stage");
    return FALSE;
  }
  g_free(w->stage_layers);
  w->stage_layers = g_new0(guint, node->n);
  w->n_stage_layers = node->n;
  for (guint i = 0; i < node->n; i++) {
    int64_t v;
    if (!fs_yaml_get_int(node->values[i], 0, 100000, &v, error))
      return FALSE;
    w->stage_layers[i] = (guint)v;
  }
  mark(w, F_STAGE_LAYERS, node);
  return TRUE;
}
/* placement: the order's text and the explicit rank map (the table checked
 * the keys and kinds). */
static gboolean parse_placement(FsWorkload *w, const FsYamlNode *node, GError **error)
{
  if (!read_section(w, &fs_workload_placement_schema, node, error))
    return FALSE;
  const FsYamlNode *on = fs_yaml_map_get(node, "order");
  if (on != NULL) {
    const char *s;
    if (!fs_yaml_get_string(on, &s, error))
      return FALSE;
    g_free(w->order);
    w->order = g_strdup(s);
    mark(w, F_ORDER, on);
  }
  const FsYamlNode *rn = fs_yaml_map_get(node, "ranks");
  if (rn != NULL) {
    if (!fs_yaml_require_seq(rn, error))
      return FALSE;
    g_free(w->rank_map);
    w->rank_map = g_new0(guint, MAX(rn->n, 1));
    w->n_rank_map = rn->n;
    for (guint i = 0; i < rn->n; i++) {
      int64_t v;
      if (!fs_yaml_get_int(rn->values[i], 0, (1 << 24) - 1, &v, error))
        return FALSE;
      w->rank_map[i] = (guint)v;
    }
    mark(w, F_RANKS, rn);
  }
  return TRUE;
}

/* Builds a new workload from a parsed document: top-level keys, the model (with its presets,
 * found beside dir), then the training, parallel (with overlap), placement and offload
 * sections; the name defaults to the file's base name. Not yet resolved (overrides and
 * fs_workload_resolve come after). NULL with the first error at its position. */
static FsWorkload *load_doc(FsYamlDoc *doc, const char *file, const char *dir, GError **error)
{
  g_autoptr(FsWorkload) w = workload_new(file);
  const FsYamlNode *root = fs_yaml_doc_root(doc);
  if (root == NULL) {
    fs_set_error_at(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID, file, 1, 1,
                    "empty workload; expected a mapping with model, training and parallel");
    return NULL;
  }
  mark_node(w, &w->priv->top_pos, root);
  w->priv->top_pos.given = FALSE;
  if (!read_section(w, &fs_workload_top_schema, root, error) ||
      !opt_dup_string(root, "name", &w->name, error) ||
      !opt_dup_string(root, "description", &w->description, error))
    return NULL;
  if (!parse_model(w, fs_yaml_map_get(root, "model"), dir, 0, error))
    return NULL;
  /* The workload's own source wins over the model's. */
  if (!opt_dup_string(root, "source", &w->source, error))
    return NULL;
  const FsYamlNode *tn = fs_yaml_map_get(root, "training");
  if (tn != NULL) {
    mark_node(w, &w->priv->training_pos, tn);
    if (!read_section(w, &fs_workload_training_schema, tn, error))
      return NULL;
  }
  const FsYamlNode *pn = fs_yaml_map_get(root, "parallel");
  if (pn != NULL) {
    mark_node(w, &w->priv->parallel_pos, pn);
    if (!read_section(w, &fs_workload_parallel_schema, pn, error))
      return NULL;
    const FsYamlNode *sl = fs_yaml_map_get(pn, "stage_layers");
    if (sl != NULL && !parse_stage_layers(w, sl, error))
      return NULL;
  }
  const FsYamlNode *pl = fs_yaml_map_get(root, "placement");
  if (pl != NULL && !parse_placement(w, pl, error))
    return NULL;
  const FsYamlNode *of = fs_yaml_map_get(root, "offload");
  if (of != NULL && !read_section(w, &fs_workload_offload_schema, of, error))
    return NULL;
  const FsYamlNode *fw = fs_yaml_map_get(root, "framework");
  if (fw != NULL && !read_section(w, &fs_workload_framework_schema, fw, error))
    return NULL;
  if (w->name == NULL) {
    g_autofree char *base = g_path_get_basename(file);
    w->name = g_str_has_suffix(base, ".yaml") ? g_strndup(base, strlen(base) - 5) : g_strdup(base);
  }
  return g_steal_pointer(&w);
}

FsWorkload *fs_workload_load_string(const char *text, const char *name, const char *dir,
                                    const char *const *overrides, GError **error)
{
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_string(text, -1, name ? name : "<string>", error);
  if (doc == NULL)
    return NULL;
  g_autoptr(FsWorkload) w = load_doc(doc, name ? name : "<string>", dir, error);
  if (w == NULL || !fs_workload_apply_overrides(w, overrides, error) || !fs_workload_resolve(w, 0, error))
    return NULL;
  return g_steal_pointer(&w);
}

FsWorkload *fs_workload_load_file(const char *name, const char *const *overrides, GError **error)
{
  g_autofree char *path = fs_datadir_find(FS_DATA_WORKLOADS, name);
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_file(path, error);
  if (doc == NULL)
    return NULL;
  g_autofree char *dir = g_path_get_dirname(path);
  g_autoptr(FsWorkload) w = load_doc(doc, path, dir, error);
  if (w == NULL || !fs_workload_apply_overrides(w, overrides, error) || !fs_workload_resolve(w, 0, error))
    return NULL;
  return g_steal_pointer(&w);
}

const char *fs_workload_default_dir(void)
{
  return fs_datadir(FS_DATA_WORKLOADS);
}

/* ---- validation ---------------------------------------------------------------- */

static gboolean given(const FsWorkload *w, FieldId id)
{
  return w->priv->pos[id].given;
}

/* TRUE when the workload asks for uneven pipeline stages. */
static gboolean uneven(const FsWorkload *w)
{
  return w->stage_layers != NULL || w->first_stage_layers || w->last_stage_layers ||
         w->account_embedding || w->account_loss;
}

/* Checks the model against the parallel layout: a layer-list model takes no tp, cp or ep and
 * needs a layer per virtual stage; a transformer needs its sizes, consistent heads and experts,
 * and sizes that tp, cp (2·cp when causal), sequence parallelism, ep and pp × vp divide. Fails
 * with FS_WORKLOAD_ERROR_INVALID at the field to change. */
static gboolean resolve_model(FsWorkload *w, GError **error)
{
  FsTransformerConfig *m = &w->model;
  if (w->form == FS_MODEL_FORM_LAYERS) {
    if (w->tp > 1)
      return fail_at(w, F_TP, error, "a layer-list model runs without tensor parallelism (tp = 1), got tp = %u", w->tp);
    if (w->cp > 1)
      return fail_at(w, F_CP, error, "a layer-list model runs without context parallelism (cp = 1), got cp = %u", w->cp);
    if (w->ep > 1)
      return fail_at(w, F_EP, error, "a layer-list model has no experts (ep = 1), got ep = %u", w->ep);
    if (!uneven(w) && w->n_layers < w->pp * w->vp)
      return fail_at(w, F_PP, error, "%u layers cannot fill pp × virtual stages = %u × %u", w->n_layers,
                     w->pp, w->vp);
    return TRUE;
  }
  static const FieldId required[] = {F_LAYERS, F_HIDDEN, F_FFN, F_HEADS, F_VOCAB, F_SEQ};
  for (guint i = 0; i < G_N_ELEMENTS(required); i++)
    if (*(guint *)((char *)w + fs_workload_field(required[i])->offset) == 0)
      return fail_at(w, required[i], error, "the model needs \"%s\" (or a preset that gives it)",
                     fs_workload_field(required[i])->key);
  guint kv = m->kv_heads ? m->kv_heads : m->heads;
  if (kv > m->heads)
    return fail_at(w, F_KV_HEADS, error, "kv_heads (%u) exceeds heads (%u)", kv, m->heads);
  if (m->heads % kv)
    return fail_at(w, F_KV_HEADS, error, "heads (%u) is not divisible by kv_heads (%u)", m->heads, kv);
  if (m->head_dim == 0 && m->hidden % m->heads)
    return fail_at(w, F_HEADS, error, "hidden (%u) is not divisible by heads (%u); give head_dim",
                   m->hidden, m->heads);
  if (m->position == FS_POSITION_LEARNED && m->max_positions && m->max_positions < m->seq_len)
    return fail_at(w, F_SEQ, error, "seq_length (%u) exceeds max_positions (%u)", m->seq_len, m->max_positions);
  if (m->experts > 1) {
    if (m->top_k == 0)
      return fail_at(w, F_EXPERTS, error, "a mixture of experts needs top_k");
    if (m->top_k > m->experts)
      return fail_at(w, F_TOPK, error, "top_k (%u) exceeds experts (%u)", m->top_k, m->experts);
    if (m->moe_every > m->layers)
      return fail_at(w, F_MOE_EVERY, error, "moe_every (%u) exceeds layers (%u)", m->moe_every, m->layers);
  }
  /* Tensor parallelism splits heads, KV heads and FFN columns. */
  if (m->heads % w->tp)
    return fail_at(w, F_TP, error, "heads (%u) is not divisible by tp (%u)", m->heads, w->tp);
  if (kv % w->tp)
    return fail_at(w, F_TP, error, "kv_heads (%u) is not divisible by tp (%u)", kv, w->tp);
  if (m->ffn_hidden % w->tp)
    return fail_at(w, F_TP, error, "ffn_hidden (%u) is not divisible by tp (%u)", m->ffn_hidden, w->tp);
  if (m->experts > 1 && m->moe_ffn_hidden && m->moe_ffn_hidden % w->tp)
    return fail_at(w, F_TP, error, "moe_ffn_hidden (%u) is not divisible by tp (%u)", m->moe_ffn_hidden, w->tp);
  if (m->seq_len % w->cp)
    return fail_at(w, F_CP, error, "seq_length (%u) is not divisible by cp (%u)", m->seq_len, w->cp);
  if (w->cp > 1 && m->seq_len % (2 * w->cp) && m->causal)
    return fail_at(w, F_CP, error,
                   "seq_length (%u) is not divisible by 2 × cp (%u): causal context parallelism "
                   "splits each sequence into 2·cp chunks", m->seq_len, 2 * w->cp);
  if (w->sequence_parallel && w->tp > 1 && (m->seq_len / w->cp) % w->tp)
    return fail_at(w, F_SP, error, "sequence parallel needs seq_length / cp (%u) divisible by tp (%u)",
                   m->seq_len / w->cp, w->tp);
  if (w->ep > 1 && m->experts <= 1)
    return fail_at(w, F_EP, error, "ep (%u) needs a mixture-of-experts model (experts > 1)", w->ep);
  if (m->experts > 1 && m->experts % w->ep)
    return fail_at(w, F_EP, error, "experts (%u) is not divisible by ep (%u)", m->experts, w->ep);
  /* Megatron-LM's combined 1F1B asserts these (TransformerConfig.__post_init__,
   * megatron/core/transformer/transformer_config.py, for
   * overlap_moe_expert_parallel_comm: expert_model_parallel_size > 1, a
   * virtual pipeline when pipeline_model_parallel_size > 1, and
   * recompute_granularity != 'full'). */
  if (w->overlap_ep_comm && w->ep <= 1)
    return fail_at(w, F_OVERLAP_EP, error, "overlap.ep_comm needs expert parallelism (ep > 1), got ep = %u",
                   w->ep);
  if (w->overlap_ep_comm && w->pp > 1 && w->vp < 2)
    return fail_at(w, F_OVERLAP_EP, error, "overlap.ep_comm with pp = %u needs virtual stages (the "
                   "interleaved schedule), as Megatron-LM's combined 1F1B does", w->pp);
  if (w->overlap_ep_comm && w->recompute == FS_RECOMPUTE_FULL)
    return fail_at(w, F_OVERLAP_EP, error, "overlap.ep_comm runs without full recomputation, as "
                   "Megatron-LM's combined 1F1B does (recompute: selective or none)");
  if (!uneven(w) && m->layers % (w->pp * w->vp))
    return fail_at(w, w->vp > 1 ? F_VP : F_PP, error,
                   "layers (%u) is not divisible by pp × virtual stages (%u × %u); uneven stages: "
                   "parallel.stage_layers or --decoder-first/last-pipeline-num-layers", m->layers, w->pp, w->vp);
  return TRUE;
}

/* Fills vs (pp·vp entries) with the layers of each virtual stage when a
 * stage's n layers split evenly over its vp chunks: chunk c of stage s is
 * virtual stage c·pp + s.  FALSE when n is not divisible by vp. */
static gboolean split_stage(guint *vs, guint pp, guint vp, guint s, guint n)
{
  if (n % vp)
    return FALSE;
  for (guint c = 0; c < vp; c++)
    vs[c * pp + s] = n / vp;
  return TRUE;
}

/* Sets vstage_first from the uneven-stage options (at most one kind),
 * checked as Megatron-LM checks them (TransformerConfig.__post_init__):
 * stage_layers has pp entries summing to the layer count; first/last stage
 * layers leave a middle that the middle stages divide; with the embedding
 * and loss counted as layers the count divides pp; every stage's layers
 * divide over its virtual stages.  The default is the even split. */
static gboolean resolve_stages(FsWorkload *w, GError **error)
{
  guint L = w->form == FS_MODEL_FORM_LAYERS ? w->n_layers : w->model.layers;
  guint pp = w->pp, vp = w->vp, nv = pp * vp;
  guint kinds = (w->stage_layers != NULL) + (w->first_stage_layers || w->last_stage_layers) +
                (w->account_embedding || w->account_loss);
  FieldId at = w->stage_layers ? F_STAGE_LAYERS : (w->first_stage_layers ? F_FIRST_STAGE :
               w->last_stage_layers ? F_LAST_STAGE : w->account_embedding ? F_ACCOUNT_EMB : F_ACCOUNT_LOSS);
  if (kinds > 1)
    return fail_at(w, at, error, "give one of stage_layers, first/last_stage_layers (--decoder-first/"
                   "last-pipeline-num-layers) and account_for_embedding/loss, not several");
  if (kinds == 1 && pp < 2)
    return fail_at(w, at, error, "uneven pipeline stages need pp of 2 or more, got pp = %u", pp);
  g_autofree guint *vs = g_new0(guint, nv);
  if (w->stage_layers != NULL) {
    if (w->n_stage_layers != pp)
      return fail_at(w, F_STAGE_LAYERS, error, "stage_layers has %u entries, but pp is %u (one entry per "
                     "pipeline stage)", w->n_stage_layers, pp);
    guint64 sum = 0;
    for (guint s = 0; s < pp; s++) {
      sum += w->stage_layers[s];
      if (!split_stage(vs, pp, vp, s, w->stage_layers[s]))
        return fail_at(w, F_STAGE_LAYERS, error, "stage_layers entry %u (%u layers) is not divisible by "
                       "virtual_stages (%u)", s + 1, w->stage_layers[s], vp);
    }
    if (sum != L)
      return fail_at(w, F_STAGE_LAYERS, error, "stage_layers sums to %" G_GUINT64_FORMAT " layers, but the "
                     "model has %u", sum, L);
  } else if (w->first_stage_layers || w->last_stage_layers) {
    guint first = w->first_stage_layers, last = w->last_stage_layers;
    guint middle_stages = pp - (first ? 1 : 0) - (last ? 1 : 0);
    if ((guint64)first + last > L)
      return fail_at(w, at, error, "first and last stage layers (%u + %u) exceed the model's %u layers",
                     first, last, L);
    guint middle = L - first - last;
    if ((middle_stages == 0) != (middle == 0))
      return fail_at(w, at, error, "%u middle layers are left for %u middle pipeline stages", middle,
                     middle_stages);
    if (middle_stages && middle % middle_stages)
      return fail_at(w, at, error, "the %u middle layers are not divisible by the %u middle pipeline stages",
                     middle, middle_stages);
    for (guint s = 0; s < pp; s++) {
      guint n = s == 0 && first ? first : s == pp - 1 && last ? last : middle / middle_stages;
      if (!split_stage(vs, pp, vp, s, n))
        return fail_at(w, at, error, "pipeline stage %u (%u layers) is not divisible by virtual_stages (%u)",
                       s + 1, n, vp);
    }
  } else if (w->account_embedding || w->account_loss) {
    if (w->form != FS_MODEL_FORM_TRANSFORMER)
      return fail_at(w, at, error, "a layer-list model has no embedding or loss to count as layers");
    guint n = L + (w->account_embedding ? 1 : 0) + (w->account_loss ? 1 : 0);
    if (n % nv)
      return fail_at(w, at, error, "layers with the embedding and loss counted (%u) are not divisible by "
                     "pp × virtual stages (%u × %u)", n, pp, vp);
    for (guint v = 0; v < nv; v++)
      vs[v] = n / nv;
    if (w->account_embedding)
      vs[0]--;
    if (w->account_loss)
      vs[nv - 1]--;
  } else {
    /* Even: a layer list that does not divide gives the first chunks one
     * layer more. */
    for (guint v = 0; v < nv; v++)
      vs[v] = L / nv + (v < L % nv ? 1 : 0);
  }
  g_free(w->vstage_first);
  w->vstage_first = g_new0(guint, nv + 1);
  for (guint v = 0; v < nv; v++)
    w->vstage_first[v + 1] = w->vstage_first[v] + vs[v];
  return TRUE;
}

static gboolean resolve_schedule(FsWorkload *w, GError **error)
{
  if (w->vp > 1 && w->schedule != FS_PP_INTERLEAVED) {
    if (given(w, F_SCHEDULE))
      return fail_at(w, F_SCHEDULE, error, "virtual_stages (%u) needs schedule: interleaved, got %s",
                     w->vp, fs_pp_schedule_name(w->schedule));
    w->schedule = FS_PP_INTERLEAVED;
  }
  if (w->schedule == FS_PP_INTERLEAVED) {
    if (w->vp < 2)
      return fail_at(w, F_SCHEDULE, error, "the interleaved schedule needs virtual_stages of 2 or more");
    if (w->pp < 2)
      return fail_at(w, F_SCHEDULE, error, "the interleaved schedule needs pp of 2 or more, got pp = %u", w->pp);
  }
  if (w->priv->fsdp) {
    if (given(w, F_ZERO) && w->zero_stage != 3)
      return fail_at(w, F_FSDP, error, "fsdp shards everything (ZeRO stage 3), but zero_stage is %u",
                     w->zero_stage);
    w->zero_stage = 3;
  }
  return TRUE;
}

/* Settles the GPU count and dp: gpus (from the topology when non-zero, else the file's) must
 * equal tp × pp × dp × cp when dp is given and otherwise fixes dp; with no count at all dp
 * defaults to 1 (at most 2^24 GPUs). ep must divide dp × cp. Fails at the field the user should
 * change. */
static gboolean resolve_gpus(FsWorkload *w, guint gpus, GError **error)
{
  guint64 inner = (guint64)w->tp * w->pp * w->cp;
  gboolean from_topology = gpus > 0;
  if (gpus == 0)
    gpus = w->gpus;
  if (gpus > 0) {
    if (given(w, F_DP)) {
      guint64 total = inner * w->dp;
      if (total != gpus) {
        if (from_topology || !given(w, F_GPUS))
          return fail_at(w, F_DP, error,
                         "tp × pp × dp × cp = %u × %u × %u × %u = %" G_GUINT64_FORMAT
                         " does not equal the GPU count (%u)", w->tp, w->pp, w->dp, w->cp, total, gpus);
        return fail_at(w, F_GPUS, error,
                       "gpus (%u) does not equal tp × pp × dp × cp = %u × %u × %u × %u = %" G_GUINT64_FORMAT,
                       gpus, w->tp, w->pp, w->dp, w->cp, total);
      }
    } else {
      if (gpus % inner) {
        FieldId at = from_topology ? F_TP : F_GPUS;
        return fail_at(w, at, error,
                       "the GPU count (%u) is not divisible by tp × pp × cp = %u × %u × %u = %" G_GUINT64_FORMAT,
                       gpus, w->tp, w->pp, w->cp, inner);
      }
      w->dp = (guint)(gpus / inner);
    }
    w->gpus = gpus;
  } else {
    if (w->dp == 0)
      w->dp = 1;
    guint64 total = inner * w->dp;
    if (total > (1u << 24))
      return fail_at(w, F_DP, error, "tp × pp × dp × cp = %" G_GUINT64_FORMAT " GPUs is too many", total);
    w->gpus = (guint)total;
  }
  if (w->ep > 1 && ((guint64)w->dp * w->cp) % w->ep)
    return fail_at(w, F_EP, error, "ep (%u) must divide dp × cp (%u × %u): experts are spread over "
                   "the data-parallel ranks", w->ep, w->dp, w->cp);
  return TRUE;
}

static gboolean resolve_batch(FsWorkload *w, GError **error)
{
  guint64 per_step = (guint64)w->micro_batch * w->dp;
  if (!given(w, F_GLOBAL)) {
    if (given(w, F_GRAD_ACCUM)) {
      guint64 g = per_step * w->grad_accum;
      if (g > G_MAXUINT)
        return fail_at(w, F_GRAD_ACCUM, error, "the global batch would overflow");
      w->global_batch = (guint)g;
    } else if (w->global_batch == 0) {
      return fail_at(w, F_GLOBAL, error, "training needs global_batch (or gradient_accumulation)");
    }
  }
  if (w->global_batch % per_step)
    return fail_at(w, F_GLOBAL, error,
                   "global_batch (%u) is not divisible by micro_batch × dp (%u × %u = %" G_GUINT64_FORMAT ")",
                   w->global_batch, w->micro_batch, w->dp, per_step);
  guint ga = (guint)(w->global_batch / per_step);
  if (given(w, F_GRAD_ACCUM) && given(w, F_GLOBAL) && w->grad_accum != ga)
    return fail_at(w, F_GRAD_ACCUM, error,
                   "gradient_accumulation (%u) disagrees with global_batch / (micro_batch × dp) = %u",
                   w->grad_accum, ga);
  w->grad_accum = ga;
  if (w->schedule == FS_PP_INTERLEAVED && ga % w->pp)
    return fail_at(w, F_GLOBAL, error,
                   "the interleaved schedule needs the micro-batches per step (%u) to be a multiple of pp (%u)",
                   ga, w->pp);
  return TRUE;
}

static gboolean resolve_placement(FsWorkload *w, GError **error)
{
  static const char *const dims[] = {"tp", "cp", "ep", "dp", "pp"};
  g_auto(GStrv) parts = g_strsplit(w->order, "-", -1);
  guint seen = 0, n = g_strv_length(parts);
  for (guint i = 0; i < n; i++) {
    guint j;
    if (!fs_names_index(dims, G_N_ELEMENTS(dims), parts[i], &j))
      return fail_at(w, F_ORDER, error, "unknown parallel dimension \"%s\" in order \"%s\"; expected "
                     "tp, cp, ep, dp and pp joined by \"-\" (e.g. \"" DEFAULT_ORDER "\")", parts[i], w->order);
    if (seen & (1u << j))
      return fail_at(w, F_ORDER, error, "\"%s\" appears twice in order \"%s\"", parts[i], w->order);
    seen |= 1u << j;
  }
  if (seen != 0x1f)
    return fail_at(w, F_ORDER, error, "order \"%s\" must name each of tp, cp, ep, dp and pp once", w->order);
  if (w->rank_map != NULL) {
    if (w->n_rank_map != w->gpus)
      return fail_at(w, F_RANKS, error, "ranks lists %u GPUs, but the layout has %u (tp × pp × dp × cp)",
                     w->n_rank_map, w->gpus);
    g_autofree guint *at = g_new0(guint, w->gpus);
    for (guint i = 0; i < w->n_rank_map; i++) {
      guint g = w->rank_map[i];
      if (g >= w->gpus)
        return fail_at(w, F_RANKS, error, "ranks entry %u is GPU %u, outside 0..%u", i + 1, g, w->gpus - 1);
      if (at[g])
        return fail_at(w, F_RANKS, error, "GPU %u appears twice in ranks (entries %u and %u)", g, at[g], i + 1);
      at[g] = i + 1;
    }
  }
  return TRUE;
}

gboolean fs_workload_resolve(FsWorkload *w, guint gpus, GError **error)
{
  g_return_val_if_fail(w != NULL, FALSE);
  if (!resolve_schedule(w, error) || !resolve_model(w, error) || !resolve_stages(w, error) ||
      !resolve_gpus(w, gpus, error) ||
      !resolve_batch(w, error) || !resolve_placement(w, error))
    return FALSE;
  if (!given(w, F_BUCKET)) {
    /* Megatron-LM's default bucket: max(40M, 1M × dp) parameters of
     * gradients (DistributedDataParallelConfig.bucket_size). */
    double params = MAX(40e6, 1e6 * w->dp);
    w->bucket_size = (uint64_t)(params * (w->grad_fp32 || w->dtype == FS_DTYPE_FP32 ? 4 : 2));
  }
  return TRUE;
}
