/* chakra-text.c — ASTRA-sim's text workloads (the "Text" input of
 * Chakra's converter) as Chakra nodes, one file per rank.
 *
 * The format: a first line naming the parallelism (MICRO, DATA, MODEL,
 * HYBRID_DATA_MODEL, HYBRID_MODEL_DATA), a second line with the number of
 * layers, then one line per layer of twelve columns separated by blanks:
 *   name  reserved  fwd_time fwd_comm fwd_size  ig_time ig_comm ig_size
 *   wg_time wg_comm wg_size  update_time
 * (times as integers, comm ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL or
 * NONE, sizes in bytes).  The nodes and their dependencies are those
 * Chakra's converter writes for one pass (mlcommons/chakra,
 * src/converter/text_converter.py, class TextConverter, commit
 * 8547a198e1bc17c5bfa55c85e63e92376bb81969):
 *   - a compute phase is a COMP_NODE "COMP_NODE_<layer>_<FWD|BWD_IG|BWD_WG>"
 *     whose duration_micros is the column's time;
 *   - a communication is a COMM_COLL_NODE "COMM_COLL_NODE_<layer>_<comm>"
 *     with comm_type from the word (ALLREDUCE 0, ALLGATHER 2, ALLTOALL 6,
 *     REDUCESCATTER 7; NONE gives 0 as the converter does) and comm_size
 *     the column's bytes, over every rank;
 *   - dependencies are data_deps; node ids count on across the ranks, as
 *     the converter numbers them.
 * MICRO: one node per layer, its weight-gradient collective, no
 * dependencies.  DATA: the forward chain, then per layer from the last
 * the weight-gradient compute, its collective (after it) and the
 * input-gradient compute (after the weight gradient, not for the first
 * layer).  MODEL: forward compute then its collective per layer, each
 * compute after the previous collective; backward per layer from the last
 * the input-gradient compute (after the previous layer's weight-gradient
 * compute and input-gradient collective), its collective (not for the
 * first layer) and the weight-gradient compute.  HYBRID_*: as MODEL with
 * the weight-gradient collective after the weight-gradient compute too.
 * Unlike the converter, a file whose layer count is not its number of
 * layer lines, a time or size that is not a non-negative integer, or a
 * communication word not in the list is refused (the converter would
 * write a trace that is not what the file says); HYBRID_DLRM is not read. */
#include <errno.h>
#include <string.h>

#include "util/error.h"
#include "workload/chakra/chakra-private.h"
#include "workload/spec.h"

/* Most layers a text workload may have (ASTRA-sim's largest examples have
 * a few hundred). */
#define MAX_LAYERS 100000u

typedef enum { P_MICRO, P_DATA, P_MODEL, P_HYBRID_DATA_MODEL, P_HYBRID_MODEL_DATA } Parallel;

static const char *const parallel_names[] = {
  "MICRO", "DATA", "MODEL", "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA",
};

/* One communication column: its word and bytes. */
typedef struct {
  char *word;
  int64_t type, size;
} TComm;

typedef struct {
  char *name;
  int line;
  uint64_t fwd_t, ig_t, wg_t;
  TComm fwd, ig, wg;
} TLayer;

static void layer_clear(TLayer *l)
{
  g_free(l->name);
  g_free(l->fwd.word);
  g_free(l->ig.word);
  g_free(l->wg.word);
}

/* A one-line error at name:line:col. */
static gboolean fail_at(GError **error, const char *name, int line, int col, const char *fmt,
                        ...) G_GNUC_PRINTF(5, 6);

static gboolean fail_at(GError **error, const char *name, int line, int col, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fs_set_error_at_va(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID, name, line, col, fmt,
                     ap);
  va_end(ap);
  return FALSE;
}

/* The blank-separated words of one line, each with its 1-based column. */
typedef struct {
  GPtrArray *words;   /* char * */
  GArray *cols;       /* int */
} Words;

static void split_words(const char *s, gsize len, Words *w)
{
  w->words = g_ptr_array_new_with_free_func(g_free);
  w->cols = g_array_new(FALSE, FALSE, sizeof(int));
  gsize i = 0;
  while (i < len) {
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\v' ||
                       s[i] == '\f'))
      i++;
    if (i >= len)
      break;
    gsize start = i;
    while (i < len && !(s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\v' ||
                        s[i] == '\f'))
      i++;
    g_ptr_array_add(w->words, g_strndup(s + start, i - start));
    int col = (int)start + 1;
    g_array_append_val(w->cols, col);
  }
}

static void words_clear(Words *w)
{
  g_ptr_array_unref(w->words);
  g_array_unref(w->cols);
}

/* A non-negative decimal integer (an optional '+', as Python's int()). */
static gboolean parse_count(const char *s, uint64_t *out)
{
  if (*s == '+')
    s++;
  if (!g_ascii_isdigit(*s))
    return FALSE;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isdigit(*p))
      return FALSE;
  errno = 0;
  guint64 v = g_ascii_strtoull(s, NULL, 10);
  if (errno != 0 || v > (guint64)INT64_MAX)
    return FALSE;
  *out = v;
  return TRUE;
}

static gboolean comm_word(const char *w, int64_t *type)
{
  static const struct { const char *word; int64_t type; } words[] = {
    { "ALLREDUCE", 0 }, { "ALLGATHER", 2 }, { "ALLTOALL", 6 }, { "REDUCESCATTER", 7 },
    { "NONE", 0 },
  };
  for (guint k = 0; k < G_N_ELEMENTS(words); k++)
    if (strcmp(w, words[k].word) == 0) {
      *type = words[k].type;
      return TRUE;
    }
  return FALSE;
}

/* Reads one layer line (its words w, at line) into l. */
static gboolean parse_layer(const char *name, int line, Words *w, TLayer *l, GError **error)
{
  if (w->words->len < 12)
    return fail_at(error, name, line, 1, "a layer line has 12 columns (name, reserved, then "
                   "time, communication and bytes for forward, input gradient and weight "
                   "gradient, then the update time); this one has %u", w->words->len);
  l->name = g_strdup(w->words->pdata[0]);
  l->line = line;
  static const guint time_col[] = { 2, 5, 8 };
  uint64_t *times[] = { &l->fwd_t, &l->ig_t, &l->wg_t };
  TComm *comms[] = { &l->fwd, &l->ig, &l->wg };
  static const char *const phase[] = { "forward", "input-gradient", "weight-gradient" };
  for (guint k = 0; k < 3; k++) {
    guint c = time_col[k];
    uint64_t size;
    if (!parse_count(w->words->pdata[c], times[k]))
      return fail_at(error, name, line, g_array_index(w->cols, int, c), "layer \"%s\": the %s "
                     "time \"%s\" is not a non-negative integer (microseconds, as Chakra's "
                     "converter reads it)", l->name, phase[k], (char *)w->words->pdata[c]);
    comms[k]->word = g_strdup(w->words->pdata[c + 1]);
    if (!comm_word(comms[k]->word, &comms[k]->type))
      return fail_at(error, name, line, g_array_index(w->cols, int, c + 1), "layer \"%s\": "
                     "unknown %s communication \"%s\" (ALLREDUCE, ALLGATHER, REDUCESCATTER, "
                     "ALLTOALL or NONE)", l->name, phase[k], comms[k]->word);
    if (!parse_count(w->words->pdata[c + 2], &size))
      return fail_at(error, name, line, g_array_index(w->cols, int, c + 2), "layer \"%s\": the "
                     "%s communication size \"%s\" is not a non-negative integer (bytes)",
                     l->name, phase[k], (char *)w->words->pdata[c + 2]);
    comms[k]->size = (int64_t)size;
  }
  return TRUE;
}

/* Builds the nodes of one rank as the converter does; *next_id counts on. */
typedef struct {
  CkFile *f;
  const char *name;
  uint64_t *next_id;
} Emit;

static CkNode *emit(Emit *e, const TLayer *l, char *node_name, int type)
{
  CkNode n = { .deps = g_array_new(FALSE, FALSE, sizeof(uint64_t)), .name = node_name,
               .type = type, .id = (*e->next_id)++,
               .where = g_strdup_printf("%s:%d:1", e->name, l->line) };
  g_array_append_val(e->f->nodes, n);
  return &g_array_index(e->f->nodes, CkNode, e->f->nodes->len - 1);
}

static uint64_t comp(Emit *e, const TLayer *l, const char *phase, uint64_t t, const uint64_t *dep,
                     guint n_dep)
{
  CkNode *n = emit(e, l, g_strdup_printf("COMP_NODE_%s_%s", l->name, phase), CK_COMP_NODE);
  n->duration_us = t;
  g_array_append_vals(n->deps, dep, n_dep);
  return n->id;
}

static uint64_t comm(Emit *e, const TLayer *l, const char *label, const TComm *c,
                     const uint64_t *dep, guint n_dep)
{
  CkNode *n = emit(e, l, g_strdup_printf("COMM_COLL_NODE_%s_%s", label, c->word),
                   CK_COMM_COLL_NODE);
  n->has_comm_type = n->has_comm_size = TRUE;
  n->comm_type = c->type;
  n->comm_size = c->size;
  g_array_append_vals(n->deps, dep, n_dep);
  return n->id;
}

/* The nodes of one pass on one rank (see the header comment). */
static void build_rank(Emit *e, Parallel par, const TLayer *ls, guint nl)
{
  g_autofree uint64_t *fwd_comp = g_new0(uint64_t, nl);
  g_autofree uint64_t *fwd_comm = g_new0(uint64_t, nl);
  g_autofree uint64_t *ig_comp = g_new0(uint64_t, nl);
  g_autofree uint64_t *ig_comm = g_new0(uint64_t, nl);
  g_autofree uint64_t *wg_comp = g_new0(uint64_t, nl);
  if (par == P_MICRO) {
    for (guint i = 0; i < nl; i++)
      comm(e, &ls[i], ls[i].name, &ls[i].wg, NULL, 0);
    return;
  }
  if (par == P_DATA) {
    for (guint i = 0; i < nl; i++)
      fwd_comp[i] = comp(e, &ls[i], "FWD", ls[i].fwd_t, i > 0 ? &fwd_comp[i - 1] : NULL,
                         i > 0 ? 1 : 0);
    for (guint k = 0; k < nl; k++) {
      guint i = nl - 1 - k;
      uint64_t dep = k == 0 ? fwd_comp[nl - 1] : ig_comp[i + 1];
      wg_comp[i] = comp(e, &ls[i], "BWD_WG", ls[i].wg_t, &dep, 1);
      comm(e, &ls[i], ls[i].name, &ls[i].wg, &wg_comp[i], 1);
      if (k != nl - 1)
        ig_comp[i] = comp(e, &ls[i], "BWD_IG", ls[i].ig_t, &wg_comp[i], 1);
    }
    return;
  }
  /* MODEL and the hybrids. */
  for (guint i = 0; i < nl; i++) {
    fwd_comp[i] = comp(e, &ls[i], "FWD", ls[i].fwd_t, i > 0 ? &fwd_comm[i - 1] : NULL,
                       i > 0 ? 1 : 0);
    fwd_comm[i] = comm(e, &ls[i], ls[i].name, &ls[i].fwd, &fwd_comp[i], 1);
  }
  for (guint k = 0; k < nl; k++) {
    guint i = nl - 1 - k;
    uint64_t deps[2];
    guint nd = 0;
    if (k == 0) {
      deps[nd++] = fwd_comm[nl - 1];
    } else {
      deps[nd++] = wg_comp[i + 1];
      deps[nd++] = ig_comm[i + 1];
    }
    ig_comp[i] = comp(e, &ls[i], "BWD_IG", ls[i].ig_t, deps, nd);
    if (k != nl - 1) {
      g_autofree char *label = par == P_HYBRID_DATA_MODEL
        ? g_strconcat(ls[i].name, "_IG_COMM_", NULL) : g_strdup(ls[i].name);
      ig_comm[i] = comm(e, &ls[i], label, &ls[i].ig, &ig_comp[i], 1);
    }
    wg_comp[i] = comp(e, &ls[i], "BWD_WG", ls[i].wg_t, &ig_comp[i], 1);
    if (par != P_MODEL)
      comm(e, &ls[i], ls[i].name, &ls[i].wg, &wg_comp[i], 1);
  }
}

/* See chakra-private.h. */
gboolean ck_parse_text(const char *name, const guint8 *data, gsize len, guint n, CkFile *files,
                       GError **error)
{
  for (guint r = 0; r < n; r++) {
    files[r].nodes = g_array_new(FALSE, FALSE, sizeof(CkNode));
    g_array_set_clear_func(files[r].nodes, (GDestroyNotify)ck_node_clear);
  }
  const char *s = (const char *)data;
  if (memchr(s, '\0', len) != NULL)
    return fail_at(error, name, 1, 1, "a text workload has no NUL bytes");
  GArray *layers = g_array_new(FALSE, TRUE, sizeof(TLayer));
  g_array_set_clear_func(layers, (GDestroyNotify)layer_clear);
  Parallel par = P_MICRO;
  uint64_t declared = 0;
  int header = 0; /* header lines read */
  gboolean ok = TRUE;
  gsize pos = 0;
  for (int line = 1; ok && pos < len; line++) {
    const char *nl = memchr(s + pos, '\n', len - pos);
    gsize end = nl ? (gsize)(nl - s) : len;
    Words w;
    split_words(s + pos, end - pos, &w);
    if (w.words->len == 0) {
      /* blank lines are skipped */
    } else if (header == 0) {
      const char *p = w.words->pdata[0];
      guint k;
      for (k = 0; k < G_N_ELEMENTS(parallel_names); k++)
        if (strcmp(p, parallel_names[k]) == 0)
          break;
      if (k == G_N_ELEMENTS(parallel_names))
        ok = fail_at(error, name, line, g_array_index(w.cols, int, 0), "unknown parallelism "
                     "\"%s\" (MICRO, DATA, MODEL, HYBRID_DATA_MODEL or HYBRID_MODEL_DATA; "
                     "fabricsim does not read HYBRID_DLRM)", p);
      par = (Parallel)k;
      header++;
    } else if (header == 1) {
      if (!parse_count(w.words->pdata[0], &declared) || declared == 0 || declared > MAX_LAYERS)
        ok = fail_at(error, name, line, g_array_index(w.cols, int, 0), "expected the number of "
                     "layers (1 to %u), not \"%s\"", MAX_LAYERS, (char *)w.words->pdata[0]);
      header++;
    } else {
      if (layers->len >= declared) {
        ok = fail_at(error, name, line, 1, "more layer lines than the %" G_GUINT64_FORMAT
                     " the second line declares", declared);
      } else {
        TLayer l = { 0 };
        g_array_append_val(layers, l);
        ok = parse_layer(name, line, &w, &g_array_index(layers, TLayer, layers->len - 1), error);
      }
    }
    words_clear(&w);
    pos = end + 1;
  }
  if (ok && header < 2)
    ok = fail_at(error, name, 1, 1, "%s", header == 0
                 ? "empty file: expected an ASTRA-sim text workload (a parallelism, a layer "
                   "count, then one line per layer)"
                 : "expected the number of layers on the line after the parallelism");
  if (ok && layers->len != declared)
    ok = fail_at(error, name, 2, 1, "declares %" G_GUINT64_FORMAT " layers but the file has %u "
                 "layer lines", declared, layers->len);
  if (ok) {
    uint64_t next_id = 0;
    for (guint r = 0; r < n; r++) {
      Emit e = { &files[r], name, &next_id };
      build_rank(&e, par, (const TLayer *)layers->data, layers->len);
    }
  }
  g_array_unref(layers);
  return ok;
}
