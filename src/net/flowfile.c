/* flowfile.c — read and replay flow lists.  Contract in flowfile.h. */
#include "net/flowfile.h"

#include <jansson.h>
#include <string.h>

#include "core/sim.h"
#include "util/error.h"
#include "util/json-pos.h"
#include "util/limits.h"
#include "util/names.h"
#include "util/strutil.h"
#include "util/units.h"

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

/* A semantic error in a JSON flow list: "file:line:col: $.path: message",
 * in this module's domain, at the value's position. */
static void json_error(const FsJsonDoc *doc, GError **error, const char *path, const char *fmt, ...)
  G_GNUC_PRINTF(4, 5);
static void json_error(const FsJsonDoc *doc, GError **error, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fs_json_doc_error(doc, error, FS_NET_ERROR, FS_NET_ERROR_INPUT, path, "%s", msg);
}

/* Wraps a units error about the value at path. */
static gboolean json_units(const FsJsonDoc *doc, const char *path, const char *what, GError *e,
                           GError **error)
{
  json_error(doc, error, path, "%s: %s", what, e->message);
  g_error_free(e);
  return FALSE;
}

/* Reads a JSON flow list: an array of flow objects, or an object whose "flows" holds one, with
 * string "id", "src" and "dst", an optional "start" time string (default 0), "bytes" as an
 * integer or a size string, and an optional "deps" array of ids. Returns a new list, or NULL
 * with FS_NET_ERROR_INPUT at the position of the offending value (its JSON path in the
 * message). */
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
  json_t *root = fs_json_doc_root(doc);
  const char *base = json_is_object(root) ? "$.flows" : "$";
  json_t *flows = json_is_object(root) ? json_object_get(root, "flows") : root;
  if (!json_is_array(flows)) {
    json_error(doc, error, base, "expected an array of flows, or an object with \"flows\"");
    return NULL;
  }
  if (json_array_size(flows) > fs_flow_list_max_flows()) {
    json_error(doc, error, base, "%zu flows; at most %u are allowed (raise FABRICSIM_MAX_FLOWS to read more)",
               json_array_size(flows), fs_flow_list_max_flows());
    return NULL;
  }
  g_autoptr(FsFlowList) l = list_new();
  Pending p = {g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev),
               g_array_new(FALSE, FALSE, sizeof(int))};
  gboolean ok = TRUE;
  for (size_t i = 0; i < json_array_size(flows) && ok; i++) {
    json_t *o = json_array_get(flows, i);
    g_autofree char *at = fs_json_path_index(base, i);
    const char *id = json_string_value(json_object_get(o, "id"));
    const char *start = json_string_value(json_object_get(o, "start"));
    const char *src = json_string_value(json_object_get(o, "src"));
    const char *dst = json_string_value(json_object_get(o, "dst"));
    json_t *bytes = json_object_get(o, "bytes");
    json_t *deps = json_object_get(o, "deps");
    if (!json_is_object(o) || id == NULL || src == NULL || dst == NULL || bytes == NULL ||
        (json_object_get(o, "start") != NULL && start == NULL) ||
        (deps != NULL && !json_is_array(deps))) {
      json_error(doc, error, at, "flow %zu: expected an object with string \"id\", \"src\", "
                 "\"dst\", \"start\" (a time such as \"1.5 us\"; default 0), \"bytes\" (an "
                 "integer or a size such as \"64M\") and optional \"deps\" (an array of ids)",
                 i + 1);
      ok = FALSE;
      break;
    }
    FsFlowRecord *r = g_new0(FsFlowRecord, 1);
    g_ptr_array_add(l->records, r);
    r->id = g_strdup(id);
    if (r->id[0] == '\0') {
      g_autofree char *ap = fs_json_path_member(at, "id");
      json_error(doc, error, ap, "empty id; expected a name");
      ok = FALSE;
      break;
    }
    g_autofree char *sp = fs_json_path_member(at, "start");
    g_autofree char *srcp = fs_json_path_member(at, "src");
    g_autofree char *dstp = fs_json_path_member(at, "dst");
    g_autofree char *bp = fs_json_path_member(at, "bytes");
    int line, col;
    if (start != NULL && !fs_parse_time(start, &r->start, &e))
      ok = json_units(doc, sp, "start", e, error);
    if (ok) {
      fs_json_doc_position(doc, srcp, &line, &col);
      ok = endpoint(t, src, &r->src, name, line, col, "src", error);
    }
    if (ok) {
      fs_json_doc_position(doc, dstp, &line, &col);
      ok = endpoint(t, dst, &r->dst, name, line, col, "dst", error);
    }
    if (ok && json_is_integer(bytes) && json_integer_value(bytes) >= 0)
      r->bytes = (uint64_t)json_integer_value(bytes);
    else if (ok && json_is_string(bytes)) {
      if (!fs_parse_size(json_string_value(bytes), &r->bytes, &e))
        ok = json_units(doc, bp, "bytes", e, error);
    } else if (ok) {
      json_error(doc, error, bp, "expected a non-negative integer or a size string");
      ok = FALSE;
    }
    char **names = NULL;
    if (ok && deps != NULL) {
      names = g_new0(char *, json_array_size(deps) + 1);
      for (size_t k = 0; k < json_array_size(deps); k++) {
        const char *d = json_string_value(json_array_get(deps, k));
        if (d == NULL) {
          g_autofree char *dp = fs_json_path_member(at, "deps");
          g_autofree char *dk = fs_json_path_index(dp, k);
          json_error(doc, error, dk, "expected an id string");
          ok = FALSE;
          break;
        }
        names[k] = g_strdup(d);
      }
    }
    /* Positions for link_deps: the line and column of the flow object. */
    fs_json_doc_position(doc, at, &line, &col);
    r->line = line;
    r->col = col;
    g_ptr_array_add(p.names, names);
    int dpos[2] = {line, col};
    if (deps != NULL) {
      g_autofree char *dp = fs_json_path_member(at, "deps");
      fs_json_doc_position(doc, dp, &dpos[0], &dpos[1]);
    }
    g_array_append_vals(p.pos, dpos, 2);
  }
  ok = ok && link_deps(l, &p, name, error);
  pending_clear(&p);
  return ok ? g_steal_pointer(&l) : NULL;
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

FsFlowList *fs_flow_list_load(const char *path, const FsTopo *topo, GError **error)
{
  g_autofree char *text = NULL;
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
