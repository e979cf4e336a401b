/* flowfile.c — read and replay flow lists.  Contract in flowfile.h. */
#include "net/flowfile.h"

#include <stddef.h>
#include <string.h>

#include "core/sim.h"
#include "util/datadir.h"
#include "util/error.h"
#include "util/json-pos.h"
#include "util/limits.h"
#include "util/names.h"
#include "util/strutil.h"
#include "util/schema.h"
#include "util/units.h"
#include "util/yaml.h"

static void record_free(gpointer p)
{
  FsFlowRecord *r = p;
  g_free(r->id);
  g_free(r->deps);
  g_free(r);
}

void fs_flow_list_free(FsFlowList *list)
{
  if (list == NULL)
    return;
  g_ptr_array_unref(list->records);
  g_free(list);
}

static FsFlowList *list_new(void)
{
  FsFlowList *l = g_new0(FsFlowList, 1);
  l->records = g_ptr_array_new_with_free_func(record_free);
  return l;
}

/* The position prefix of an error about record r (CSV: line and column). */
static void input_error(GError **error, const char *file, int line, int col, const char *fmt, ...)
  G_GNUC_PRINTF(5, 6);
static void input_error(GError **error, const char *file, int line, int col, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fs_set_error_at_va(error, FS_NET_ERROR, FS_NET_ERROR_INPUT, file, line, col, fmt, ap);
  va_end(ap);
}

/* Resolves an endpoint name: a GPU or a CPU (host memory). */
static gboolean endpoint(const FsTopo *t, const char *name, guint *out, const char *file, int line,
                         int col, const char *what, GError **error)
{
  int i = fs_topo_find(t, name);
  if (i < 0) {
    input_error(error, file, line, col, "unknown %s node \"%s\"; expected the name of a GPU or "
                "CPU of the topology", what, name);
    return FALSE;
  }
  FsNodeKind k = fs_topo_node(t, (guint)i)->kind;
  if (k != FS_NODE_GPU && k != FS_NODE_CPU) {
    input_error(error, file, line, col, "%s node \"%s\" is a %s; expected a GPU or a CPU (host "
                "memory)", what, name, fs_node_kind_name(k));
    return FALSE;
  }
  *out = (guint)i;
  return TRUE;
}

static gboolean parse_start(const char *text, FsTime *out, const char *file, int line, int col,
                            GError **error)
{
  GError *e = NULL;
  if (!fs_parse_time(text, out, &e)) {
    input_error(error, file, line, col, "start: %s", e->message);
    g_error_free(e);
    return FALSE;
  }
  return TRUE;
}

static gboolean parse_bytes(const char *text, uint64_t *out, const char *file, int line, int col,
                            GError **error)
{
  GError *e = NULL;
  if (!fs_parse_size(text, out, &e)) {
    input_error(error, file, line, col, "bytes: %s", e->message);
    g_error_free(e);
    return FALSE;
  }
  return TRUE;
}

/* Dependencies are kept as names until every id is known. */
typedef struct {
  GPtrArray *names; /* per record: GStrv of dependency ids */
  GArray *pos;      /* per record: line and column (two ints) of its deps */
} Pending;

/* Resolves the dependency names kept in p into record indices, once every id of l is known, and
 * rejects a duplicate id, an unknown or self dependency and a cycle (Kahn's algorithm; the
 * first flow left over is named). Errors are FS_NET_ERROR_INPUT at the record's or its deps'
 * position in file. Linear in flows plus dependencies. */
static gboolean link_deps(FsFlowList *l, Pending *p, const char *file, GError **error)
{
  g_autoptr(GHashTable) ids = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < l->records->len; i++) {
    FsFlowRecord *r = g_ptr_array_index(l->records, i);
    if (g_hash_table_contains(ids, r->id)) {
      FsFlowRecord *o = g_ptr_array_index(l->records,
                                          GPOINTER_TO_UINT(g_hash_table_lookup(ids, r->id)) - 1);
      input_error(error, file, r->line, r->col, "duplicate id \"%s\" (first at line %d)", r->id,
                  o->line);
      return FALSE;
    }
    g_hash_table_insert(ids, r->id, GUINT_TO_POINTER(i + 1));
  }
  for (guint i = 0; i < l->records->len; i++) {
    FsFlowRecord *r = g_ptr_array_index(l->records, i);
    char **names = g_ptr_array_index(p->names, i);
    r->n_deps = names ? g_strv_length(names) : 0;
    r->deps = g_new(guint, MAX(r->n_deps, 1));
    for (guint k = 0; k < r->n_deps; k++) {
      gpointer v = g_hash_table_lookup(ids, names[k]);
      if (v == NULL || GPOINTER_TO_UINT(v) - 1 == i) {
        const char *why = v == NULL ? "unknown" : "its own";
        const int *at = &g_array_index(p->pos, int, 2 * i);
        input_error(error, file, at[0], at[1],
                    "dependency \"%s\" is %s id; expected the id of another flow", names[k], why);
        return FALSE;
      }
      r->deps[k] = GPOINTER_TO_UINT(v) - 1;
    }
  }
  /* Cycles: Kahn's algorithm; what is left over lies on or behind a cycle. */
  guint n = l->records->len;
  g_autofree guint *indeg = g_new0(guint, MAX(n, 1));
  g_autofree guint *queue = g_new(guint, MAX(n, 1));
  g_autoptr(GPtrArray) users = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  for (guint i = 0; i < n; i++)
    g_ptr_array_add(users, g_array_new(FALSE, FALSE, sizeof(guint)));
  for (guint i = 0; i < n; i++) {
    FsFlowRecord *r = g_ptr_array_index(l->records, i);
    indeg[i] = r->n_deps;
    for (guint k = 0; k < r->n_deps; k++)
      g_array_append_val(g_ptr_array_index(users, r->deps[k]), i);
  }
  guint head = 0, tail = 0;
  for (guint i = 0; i < n; i++)
    if (indeg[i] == 0)
      queue[tail++] = i;
  while (head < tail) {
    GArray *u = g_ptr_array_index(users, queue[head++]);
    for (guint k = 0; k < u->len; k++)
      if (--indeg[g_array_index(u, guint, k)] == 0)
        queue[tail++] = g_array_index(u, guint, k);
  }
  if (tail < n) {
    for (guint i = 0; i < n; i++)
      if (indeg[i] > 0) {
        FsFlowRecord *r = g_ptr_array_index(l->records, i);
        input_error(error, file, r->line, r->col,
                    "flow \"%s\" depends on itself through a cycle of dependencies", r->id);
        return FALSE;
      }
  }
  return TRUE;
}

static void pending_clear(Pending *p)
{
  g_ptr_array_unref(p->names);
  g_array_unref(p->pos);
}

/* Reads a CSV flow list: '#' comments and blank lines skipped, a header naming the columns id,
 * start, src, dst, bytes and optionally deps (in any order), then one flow per line; deps are
 * ids separated by blanks or ';'. Returns a new list, or NULL with FS_NET_ERROR_INPUT at the
 * line and column of the first bad field (also past FABRICSIM_MAX_FLOWS flows). */
static FsFlowList *load_csv(const char *path, const char *text, const FsTopo *t, GError **error)
{
  g_autoptr(FsFlowList) l = list_new();
  Pending p = {g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev),
               g_array_new(FALSE, FALSE, sizeof(int))};
  g_auto(GStrv) lines = fs_split_lines(text);
  enum { ID, START, SRC, DST, BYTES, DEPS, NCOL };
  static const char *const colnames[NCOL] = {"id", "start", "src", "dst", "bytes", "deps"};
  int where[NCOL] = {-1, -1, -1, -1, -1, -1};
  gboolean header = FALSE, ok = TRUE;
  for (int ln = 0; lines[ln] != NULL && ok; ln++) {
    int lead = 0;
    while (g_ascii_isspace(lines[ln][lead]))
      lead++;
    char *line = g_strstrip(lines[ln]);
    int lineno = ln + 1;
    if (line[0] == '\0' || line[0] == '#')
      continue;
    g_auto(GStrv) f = g_strsplit(line, ",", -1);
    guint nf = g_strv_length(f);
    /* Column of each field (1-based, counting the blanks stripped). */
    int col[64];
    for (guint k = 0, c = (guint)lead + 1; k < nf && k < 64; k++) {
      col[k] = (int)c;
      c += (guint)strlen(f[k]) + 1;
      g_strstrip(f[k]);
    }
    if (!header) {
      for (guint k = 0; k < nf; k++) {
        guint c;
        int which = fs_names_index(colnames, NCOL, f[k], &c) ? (int)c : -1;
        if (which < 0 || where[which] >= 0) {
          input_error(error, path, lineno, k < 64 ? col[k] : 1,
                      "%s column \"%s\"; expected a header of id, start, src, dst, bytes and "
                      "optionally deps", which < 0 ? "unknown" : "duplicate", f[k]);
          ok = FALSE;
          break;
        }
        where[which] = (int)k;
      }
      for (int c = 0; ok && c < DEPS; c++)
        if (where[c] < 0) {
          input_error(error, path, lineno, 1, "the header has no \"%s\" column; expected id, "
                      "start, src, dst, bytes and optionally deps", colnames[c]);
          ok = FALSE;
        }
      header = TRUE;
      continue;
    }
    if (nf > 64 || (nf != 5 + (where[DEPS] >= 0) && !(where[DEPS] >= 0 && nf == 5))) {
      input_error(error, path, lineno, lead + 1, "%u fields; expected %d (id, start, src, dst, bytes%s)",
                  nf, 5 + (where[DEPS] >= 0), where[DEPS] >= 0 ? ", deps" : "");
      ok = FALSE;
      break;
    }
    if (l->records->len >= fs_flow_list_max_flows()) {
      input_error(error, path, lineno, 1, "more than %u flows; raise FABRICSIM_MAX_FLOWS to "
                  "read more", fs_flow_list_max_flows());
      ok = FALSE;
      break;
    }
    FsFlowRecord *r = g_new0(FsFlowRecord, 1);
    g_ptr_array_add(l->records, r);
    r->line = lineno;
    r->col = 1;
    r->id = g_strdup(f[where[ID]]);
    if (r->id[0] == '\0') {
      input_error(error, path, lineno, col[where[ID]], "empty id; expected a name");
      ok = FALSE;
      break;
    }
    ok = parse_start(f[where[START]], &r->start, path, lineno, col[where[START]], error) &&
         endpoint(t, f[where[SRC]], &r->src, path, lineno, col[where[SRC]], "src", error) &&
         endpoint(t, f[where[DST]], &r->dst, path, lineno, col[where[DST]], "dst", error) &&
         parse_bytes(f[where[BYTES]], &r->bytes, path, lineno, col[where[BYTES]], error);
    char **deps = NULL;
    int dcol = 1;
    if (where[DEPS] >= 0 && (guint)where[DEPS] < nf) {
      deps = g_strsplit_set(f[where[DEPS]], " ;", -1);
      /* Drop empty names (repeated separators). */
      guint w = 0;
      for (guint k = 0; deps[k] != NULL; k++) {
        if (deps[k][0] != '\0')
          deps[w++] = deps[k];
        else
          g_free(deps[k]);
      }
      deps[w] = NULL;
      dcol = col[where[DEPS]];
    }
    g_ptr_array_add(p.names, deps);
    int at[2] = {lineno, dcol};
    g_array_append_vals(p.pos, at, 2);
  }
  if (ok && !header) {
    input_error(error, path, 1, 1, "no header line; expected \"id,start,src,dst,bytes,deps\"");
    ok = FALSE;
  }
  ok = ok && link_deps(l, &p, path, error);
  pending_clear(&p);
  return ok ? g_steal_pointer(&l) : NULL;
}

/* ---- JSON, read against declared fields (util/schema.h) ---------------------- */

/* One flow object as the schema walk stores it. */
typedef struct {
  const char *id, *src, *dst, *bytes;
  FsTime start;
} JsonFlow;

static const FsSchemaField dep_item = {.key = "deps", .type = FS_SCHEMA_STRING};

static const FsSchemaField flow_fields[] = {
  {.key = "id", .type = FS_SCHEMA_STRING, .offset = offsetof(JsonFlow, id), .required = TRUE,
   .nonempty = TRUE, .doc = "the transfer's name, unique in the list"},
  {.key = "start", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_TIME,
   .offset = offsetof(JsonFlow, start), .def = "0 s",
   .doc = "when it may start; with `deps`, not before they have all finished"},
  {.key = "src", .type = FS_SCHEMA_STRING, .offset = offsetof(JsonFlow, src), .required = TRUE,
   .doc = "the node that sends: a GPU, or a CPU for host memory"},
  {.key = "dst", .type = FS_SCHEMA_STRING, .offset = offsetof(JsonFlow, dst), .required = TRUE,
   .doc = "the node that receives: a GPU, or a CPU for host memory"},
  {.key = "bytes", .type = FS_SCHEMA_SCALAR, .offset = offsetof(JsonFlow, bytes),
   .required = TRUE, .value_doc = "a non-negative integer, or a size string (`\"64M\"`)",
   .doc = "what it moves"},
  {.key = "deps", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE, .item = &dep_item,
   .value_doc = "list of ids", .doc = "the flows it waits for"},
};
static const FsSchema flow_schema = {"flow", NULL, flow_fields, G_N_ELEMENTS(flow_fields)};

static const FsSchemaField file_fields[] = {
  {.key = "flows", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .value_doc = "list of tables `flows.flow`", .doc = "the transfers, in any order"},
};
static const FsSchema file_schema = {"flow list", NULL, file_fields, G_N_ELEMENTS(file_fields)};

static const FsSchemaEntry schemas[] = {
  {"flows.file", &file_schema},
  {"flows.flow", &flow_schema},
};

const FsSchemaEntry *fs_flow_list_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
}

/* bytes of one flow (node): a JSON integer of zero or more, or a size string. */
static gboolean json_bytes(const FsYamlNode *node, uint64_t *out, GError **error)
{
  GError *e = NULL;
  if (!node->quoted) {
    if (!g_ascii_string_to_unsigned(node->value, 10, 0, G_MAXUINT64, out, NULL)) {
      fs_yaml_error(error, node, "expected a non-negative integer or a size string, got %s",
                    node->value);
      return FALSE;
    }
  } else if (!fs_parse_size(node->value, out, &e)) {
    fs_yaml_error(error, node, "bytes: %s", e->message);
    g_error_free(e);
    return FALSE;
  }
  return TRUE;
}

/* Reads the flows of a JSON list (its tree, util/yaml.h) into l: each object against
 * flow_schema, then its endpoints, bytes and dependency names (into p).  FALSE at the first
 * error, in FS_YAML_ERROR or FS_NET_ERROR (the caller makes them one domain). */
static gboolean json_flows(const char *name, const FsYamlNode *flows, const FsTopo *t,
                           FsFlowList *l, Pending *p, GError **error)
{
  for (guint i = 0; i < flows->n; i++) {
    const FsYamlNode *o = flows->values[i];
    JsonFlow f = {0};
    if (!fs_schema_read(&flow_schema, o, &f, NULL, error))
      return FALSE;
    FsFlowRecord *r = g_new0(FsFlowRecord, 1);
    g_ptr_array_add(l->records, r);
    r->id = g_strdup(f.id);
    r->start = f.start;
    r->line = o->line;
    r->col = o->col;
    const FsYamlNode *src = fs_yaml_map_get(o, "src"), *dst = fs_yaml_map_get(o, "dst");
    if (!endpoint(t, f.src, &r->src, name, src->line, src->col, "src", error) ||
        !endpoint(t, f.dst, &r->dst, name, dst->line, dst->col, "dst", error) ||
        !json_bytes(fs_yaml_map_get(o, "bytes"), &r->bytes, error))
      return FALSE;
    const FsYamlNode *deps = fs_yaml_map_get(o, "deps");
    char **names = NULL;
    int dpos[2] = {o->line, o->col};
    if (deps != NULL) {
      names = g_new0(char *, deps->n + 1);
      for (guint k = 0; k < deps->n; k++)
        names[k] = g_strdup(deps->values[k]->value);
      dpos[0] = deps->line;
      dpos[1] = deps->col;
    }
    g_ptr_array_add(p->names, names);
    g_array_append_vals(p->pos, dpos, 2);
  }
  return TRUE;
}

/* Reads a JSON flow list: an array of flow objects, or an object whose "flows" holds one, each
 * read against the declared fields (flows.flow: string "id", "src" and "dst", optional "start"
 * time string, default 0, "bytes" as an integer or a size string, optional "deps" array of ids;
 * any other key is refused). Returns a new list, or NULL with FS_NET_ERROR_INPUT at the
 * position of the offending value (its JSON path in the message). */
static FsFlowList *load_json(const char *name, const char *text, gsize len, const FsTopo *t,
                             GError **error)
{
  GError *e = NULL;
  g_autoptr(FsJsonDoc) doc = fs_json_doc_parse(text, len, name, &e);
  if (doc == NULL) {
    /* The same "file:line:col: " message, in this module's domain. */
    g_set_error_literal(error, FS_NET_ERROR, FS_NET_ERROR_INPUT, e->message);
    g_error_free(e);
    return NULL;
  }
  g_autoptr(FsYamlDoc) tree = fs_yaml_doc_from_json(doc);
  const FsYamlNode *root = fs_yaml_doc_root(tree), *flows = root;
  g_autoptr(FsFlowList) l = list_new();
  Pending p = {g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev),
               g_array_new(FALSE, FALSE, sizeof(int))};
  gboolean ok = TRUE;
  if (root->kind == FS_YAML_MAP) {
    ok = fs_schema_read(&file_schema, root, NULL, NULL, &e);
    flows = ok ? fs_yaml_map_get(root, "flows") : NULL;
  }
  if (ok && flows->kind != FS_YAML_SEQ) {
    fs_yaml_error(&e, flows, "expected an array of flows, or an object with \"flows\"");
    ok = FALSE;
  }
  if (ok && flows->n > fs_flow_list_max_flows()) {
    fs_yaml_error(&e, flows, "%u flows; at most %u are allowed (raise FABRICSIM_MAX_FLOWS to "
                  "read more)", flows->n, fs_flow_list_max_flows());
    ok = FALSE;
  }
  ok = ok && json_flows(name, flows, t, l, &p, &e) && link_deps(l, &p, name, &e);
  pending_clear(&p);
  if (!ok) {
    /* The schema walk's errors are this module's. */
    if (e->domain != FS_NET_ERROR) {
      e->domain = FS_NET_ERROR;
      e->code = FS_NET_ERROR_INPUT;
    }
    g_propagate_error(error, e);
    return NULL;
  }
  return g_steal_pointer(&l);
}

guint fs_flow_list_max_flows(void)
{
  return (guint)fs_env_limit("FABRICSIM_MAX_FLOWS", FS_FLOW_LIST_MAX_FLOWS, G_MAXUINT);
}

FsFlowList *fs_flow_list_load_string(const char *text, gsize len, const char *name,
                                     const FsTopo *topo, GError **error)
{
  g_return_val_if_fail(text != NULL && name != NULL && topo != NULL, NULL);
  const char *nul = memchr(text, '\0', len);
  if (nul != NULL) {
    int line = 1;
    const char *bol = text;
    for (const char *q = text; q < nul; q++)
      if (*q == '\n') {
        line++;
        bol = q + 1;
      }
    input_error(error, name, line, (int)(nul - bol) + 1,
                "NUL byte; expected CSV or JSON text");
    return NULL;
  }
  g_autofree char *copy = g_strndup(text, len);
  const char *p = copy;
  while (g_ascii_isspace(*p))
    p++;
  if (g_str_has_suffix(name, ".json") || *p == '{' || *p == '[')
    return load_json(name, copy, len, topo, error);
  return load_csv(name, copy, topo, error);
}

FsFlowList *fs_flow_list_load(const char *name, const FsTopo *topo, GError **error)
{
  g_autofree char *text = NULL;
  g_autofree char *path = fs_datadir_resolve(name);
  gsize len = 0;
  GError *e = NULL;
  if (!g_file_get_contents(path, &text, &len, &e)) {
    input_error(error, path, 0, 0, "%s", e->message);
    g_error_free(e);
    return NULL;
  }
  return fs_flow_list_load_string(text, len, path, topo, error);
}

/* ---- replay ---- */

typedef struct {
  FsFlowList *list;
  FsRouter *router;
  FsSim *sim;
  guint *waiting;          /* dependencies not yet finished */
  GPtrArray *users;        /* per record: GArray of dependents */
  GError *error;
} Replay;

static void start_record(Replay *rp, guint i);

static void record_done(void *ctx, const FsFlowInfo *info)
{
  Replay *rp = ctx;
  guint i = GPOINTER_TO_UINT(info->user) - 1;
  FsFlowRecord *r = g_ptr_array_index(rp->list->records, i);
  r->info = *info;
  r->info.user = NULL;
  r->done = TRUE;
  GArray *u = g_ptr_array_index(rp->users, i);
  for (guint k = 0; k < u->len; k++) {
    guint j = g_array_index(u, guint, k);
    if (--rp->waiting[j] == 0)
      start_record(rp, j);
  }
}

static void start_record(Replay *rp, guint i)
{
  if (rp->error != NULL)
    return;
  FsFlowRecord *r = g_ptr_array_index(rp->list->records, i);
  FsTime at = MAX(r->start, fs_sim_now(rp->sim));
  FsRoute route;
  fs_route_init(&route);
  if (fs_router_route(rp->router, r->src, r->dst, i, &route, &rp->error))
    r->kind = route.kind;
  fs_route_clear(&route);
  if (rp->error == NULL)
    fs_router_transfer(rp->router, r->src, r->dst, r->bytes, at, 0, i, record_done, rp,
                       GUINT_TO_POINTER(i + 1), &rp->error);
  if (rp->error != NULL)
    fs_sim_stop(rp->sim);
}

gboolean fs_flow_list_replay(FsFlowList *list, const FsTopo *topo, FsNetModel model,
                             const FsRouteOptions *opt, GError **error)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, model);
  g_autoptr(FsRouter) router = fs_router_new(topo, net, opt);
  return fs_flow_list_replay_on(list, router, error);
}

/* See flowfile.h. Replays the list on an existing router: each record starts once all its
 * dependencies have finished, and the simulation runs until every transfer is done. When the
 * clock would overflow, the error names the first transfer in file order that started and did
 * not finish. Returns FALSE with the first error set; resets every record's done flag first. */
gboolean fs_flow_list_replay_on(FsFlowList *list, FsRouter *router, GError **error)
{
  FsSim *sim = fs_flownet_sim(fs_router_net(router));
  guint n = list->records->len;
  Replay rp = {list, router, sim, g_new0(guint, MAX(n, 1)),
               g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref), NULL};
  for (guint i = 0; i < n; i++)
    g_ptr_array_add(rp.users, g_array_new(FALSE, FALSE, sizeof(guint)));
  for (guint i = 0; i < n; i++) {
    FsFlowRecord *r = g_ptr_array_index(list->records, i);
    r->done = FALSE;
    rp.waiting[i] = r->n_deps;
    for (guint k = 0; k < r->n_deps; k++)
      g_array_append_val(g_ptr_array_index(rp.users, r->deps[k]), i);
  }
  /* Start the flows without dependencies.  Not `waiting[i] == 0`: a flow
   * that ends at once (src = dst: no network) starts its dependents inside
   * start_record, and their counters reach 0 before this loop gets there. */
  for (guint i = 0; i < n && rp.error == NULL; i++)
    if (((FsFlowRecord *)g_ptr_array_index(list->records, i))->n_deps == 0)
      start_record(&rp, i);
  if (rp.error == NULL) {
    GError *e = NULL;
    if (!fs_sim_run(sim, &e) && rp.error == NULL)
      rp.error = e;
    else
      g_clear_error(&e);
  }
  /* Past the clock's end: name the first transfer (in file order) that
   * started and did not finish. */
  if (g_error_matches(rp.error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_CLOCK)) {
    for (guint i = 0; i < n; i++) {
      const FsFlowRecord *r = g_ptr_array_index(list->records, i);
      if (r->done || rp.waiting[i] > 0)
        continue;
      g_autofree char *size = fs_format_size(r->bytes);
      g_clear_error(&rp.error);
      fs_set_clock_range_error(&rp.error, "transfer \"%s\" (line %d) of %s would end past the "
                               "clock's end; use fewer bytes", r->id, r->line,
                               size);
      break;
    }
  }
  gboolean ok = rp.error == NULL;
  if (!ok)
    g_propagate_error(error, rp.error);
  g_free(rp.waiting);
  g_ptr_array_unref(rp.users);
  return ok;
}
