/* import-smi.c — `nvidia-smi topo -m` text to topology YAML.
 *
 * Reading.  The header is the first line whose first word is GPU0 and
 * whose second is not X: device columns (GPUn; NICn or a device name such
 * as mlx5_0 for NICs) followed by the affinity columns (CPU Affinity, NUMA
 * Affinity, GPU NUMA ID).  Rows follow, one per device, each with one cell
 * per device column and then the affinity values; a blank line, the
 * "Legend:" block or any line that does not start with a device name ends
 * the matrix.  The "NIC Legend:" block ("NIC0: mlx5_0") names the NICs.
 * ANSI colour codes, carriage returns, tabs and runs of spaces are all
 * accepted; positions in messages are those of the original text.
 *
 * The inference is in import-smi-build.c.  Cost: linear in the text plus
 * O(n^2) cells for n devices (n <= FS_IMPORT_MAX_DEVICES).
 */
#include <stdlib.h>
#include <string.h>

#include "topo/import-private.h"
#include "topo/import-smi-private.h"
#include "topo/import.h"
#include "topo/paths.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/limits.h"
#include "util/strutil.h"

const char *const fs_smi_level_names[] = {"NV", "PIX", "PXB", "PHB", "NODE", "SYS"};

static void smi_clear(Smi *s)
{
  if (s->devs != NULL) {
    for (guint i = 0; i < s->devs->len; i++) {
      Dev *d = g_ptr_array_index(s->devs, i);
      g_free(d->label), g_free(d->alias), g_free(d->cpu_aff), g_free(d->numa_aff);
      g_free(d);
    }
    g_ptr_array_free(s->devs, TRUE);
  }
  g_free(s->m);
  g_free(s->aff_ignored);
  g_free(s->glued_word);
  g_free(s->repairs);
}

/* ---- lines and tokens ------------------------------------------------------ */

/* One line with colour codes and carriage returns removed; cols[k] is the
 * 1-based column in the original line of clean[k]. */
typedef struct {
  GString *clean;
  GArray *cols;
} Line;

static void clean_line(const char *p, gsize len, Line *out)
{
  g_string_truncate(out->clean, 0);
  g_array_set_size(out->cols, 0);
  for (gsize i = 0; i < len; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c == 0x1b) {          /* ESC [ parameters final-byte */
      if (i + 1 < len && p[i + 1] == '[') {
        i += 2;
        while (i < len && !((unsigned char)p[i] >= 0x40 && (unsigned char)p[i] <= 0x7e))
          i++;
      }
      continue;
    }
    if (c == '\r')
      continue;
    int col = (int)i + 1;
    g_string_append_c(out->clean, c == '\t' || c == '\v' || c == '\f' ? ' ' : (char)c);
    g_array_append_val(out->cols, col);
  }
}

/* Splits a cleaned line into words; returns the count (at most max). */
static guint tokenize(const Line *l, Tok *toks, guint max)
{
  guint n = 0;
  const char *s = l->clean->str;
  gsize len = l->clean->len, i = 0;
  while (i < len && n < max) {
    while (i < len && (s[i] == ' ' || s[i] == '\0'))
      i++;
    if (i >= len)
      break;
    gsize j = i;
    while (j < len && s[j] != ' ' && s[j] != '\0')
      j++;
    toks[n].start = s + i;
    toks[n].len = (int)(j - i);
    toks[n].col = g_array_index(l->cols, int, i);
    n++;
    i = j;
  }
  return n;
}

static gboolean tok_is(const Tok *t, const char *word)
{
  return (gsize)t->len == strlen(word) && strncmp(t->start, word, (gsize)t->len) == 0;
}

static char *tok_dup(const Tok *t)
{
  return g_strndup(t->start, (gsize)t->len);
}

/* Quoted, control characters escaped, for messages. */
static char *tok_show(const Tok *t)
{
  g_autofree char *raw = tok_dup(t);
  return fs_escape_controls(raw);
}

static gboolean is_gpu_label(const char *s)
{
  if (strncmp(s, "GPU", 3) != 0 || s[3] == '\0')
    return FALSE;
  for (const char *p = s + 3; *p; p++)
    if (!g_ascii_isdigit(*p))
      return FALSE;
  return TRUE;
}

/* Parses a cell word into *c.  FALSE for an unknown code. */
static gboolean parse_code(const Tok *t, Cell *c)
{
  static const char *const codes[] = {"PIX", "PXB", "PHB", "NODE", "SYS"};
  if (tok_is(t, "X")) {
    c->code = C_X;
    return TRUE;
  }
  for (int k = 0; k < 5; k++)
    if (tok_is(t, codes[k])) {
      c->code = (gint8)(C_PIX + k);
      return TRUE;
    }
  if (t->len >= 3 && t->len <= 5 && strncmp(t->start, "NV", 2) == 0) {
    int v = 0;
    for (int k = 2; k < t->len; k++) {
      if (!g_ascii_isdigit(t->start[k]))
        return FALSE;
      v = v * 10 + (t->start[k] - '0');
    }
    if (v < 1 || v > 255)
      return FALSE;
    c->code = C_NV;
    c->nv = (guint8)v;
    return TRUE;
  }
  return FALSE;
}

/* ---- repairs of pasted matrices ------------------------------------------ */

/* Length of the connection code at the start of p (n bytes), 0 if none:
 * PIX, PXB, PHB, NODE, SYS, X or NV followed by digits. */
static int code_prefix(const char *p, int n)
{
  static const char *const codes[] = {"NODE", "PIX", "PXB", "PHB", "SYS"};
  for (gsize k = 0; k < G_N_ELEMENTS(codes); k++) {
    int l = (int)strlen(codes[k]);
    if (n >= l && strncmp(p, codes[k], (gsize)l) == 0)
      return l;
  }
  if (n >= 3 && p[0] == 'N' && p[1] == 'V' && g_ascii_isdigit(p[2])) {
    int l = 2;
    while (l < n && l < 5 && g_ascii_isdigit(p[l]))
      l++;
    return l;
  }
  return 0;
}

/* Length of a device label at the start of p: GPU<d>, NIC<d>, mlx<d>_<d>. */
static int label_prefix(const char *p, int n)
{
  int l = 0;
  if (n >= 4 && (strncmp(p, "GPU", 3) == 0 || strncmp(p, "NIC", 3) == 0))
    l = 3;
  else if (n >= 6 && strncmp(p, "mlx", 3) == 0 && g_ascii_isdigit(p[3]) && p[4] == '_')
    l = 5;
  if (l == 0 || !g_ascii_isdigit(p[l]))
    return 0;
  while (l < n && g_ascii_isdigit(p[l]))
    l++;
  return l;
}

/* Splits word t when it is two or more cells (or labels) run together
 * where a tab was lost ("SYSSYS", "NV18PIX", "NIC11NIC12"), or a cell run
 * into the affinity that follows ("SYS0-27"); with labels, device labels,
 * else connection codes.  Writes the pieces to out (at most max) and
 * returns their count; 0 when t is not such a word. */
static guint split_glued(const Tok *t, gboolean labels, Tok *out, guint max)
{
  guint n = 0;
  int off = 0;
  while (off < t->len && n < max) {
    int l = labels ? label_prefix(t->start + off, t->len - off)
                   : code_prefix(t->start + off, t->len - off);
    if (l == 0) {
      /* A code run into an affinity list: the rest starts with a digit. */
      if (!labels && n > 0 && g_ascii_isdigit(t->start[off]))
        l = t->len - off;
      else
        return 0;
    }
    out[n].start = t->start + off;
    out[n].len = l;
    out[n].col = t->col + off;
    n++;
    off += l;
  }
  return n >= 2 && off == t->len ? n : 0;
}

/* ---- parsing ------------------------------------------------------------- */

enum { AFF_CPU, AFF_NUMA, AFF_GPU_NUMA };
/* The device guard: FS_IMPORT_MAX_DEVICES columns, or $FABRICSIM_MAX_DEVICES (up to 2^20);
 * a line holds at most that many tokens and a few more. */
static guint max_devices(void)
{
  static gsize once;
  static guint limit;
  if (g_once_init_enter(&once)) {
    limit = (guint)fs_env_limit("FABRICSIM_MAX_DEVICES", FS_IMPORT_MAX_DEVICES, (guint64)1 << 20);
    g_once_init_leave(&once, 1);
  }
  return limit;
}
#define MAX_TOKS (max_devices() + 16)

static int find_label(const Smi *s, const Tok *t)
{
  for (guint i = 0; i < s->n; i++)
    if (tok_is(t, dev(s, i)->label))
      return (int)i;
  return -1;
}

/* Reads the header at line lno (tokens t[0..nt)); sets s->devs and the
 * affinity column kinds in aff (count *naff). */
static gboolean parse_header(Smi *s, int lno, const Tok *t, guint nt, int *aff, guint *naff,
                             GError **error)
{
  guint i = 0;
  *naff = 0;
  for (; i < nt; i++) {
    g_autofree char *w = tok_dup(&t[i]);
    if (strcmp(w, "CPU") == 0 || strcmp(w, "NUMA") == 0 || strcmp(w, "GPU") == 0)
      break;
    if (s->devs->len >= max_devices()) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_LIMIT, s->name, lno, t[i].col,
                      "more than %u device columns (FABRICSIM_MAX_DEVICES raises the limit)",
                      max_devices());
      return FALSE;
    }
    for (guint k = 0; k < s->devs->len; k++)
      if (strcmp(dev(s, k)->label, w) == 0) {
        g_autofree char *q = tok_show(&t[i]);
        fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_DUPLICATE, s->name, lno, t[i].col,
                        "column \"%s\" appears twice in the header", q);
        return FALSE;
      }
    Dev *d = g_new0(Dev, 1);
    d->gpu = is_gpu_label(w);
    d->label = g_steal_pointer(&w);
    d->line = lno, d->col = t[i].col;
    g_ptr_array_add(s->devs, d);
  }
  s->n = s->devs->len;
  while (i < nt) {
    if (i + 1 < nt && tok_is(&t[i], "CPU") && tok_is(&t[i + 1], "Affinity"))
      aff[(*naff)++] = AFF_CPU, i += 2;
    else if (i + 1 < nt && tok_is(&t[i], "NUMA") && tok_is(&t[i + 1], "Affinity"))
      aff[(*naff)++] = AFF_NUMA, i += 2, s->has_numa = TRUE;
    else if (i + 2 < nt && tok_is(&t[i], "GPU") && tok_is(&t[i + 1], "NUMA") &&
             tok_is(&t[i + 2], "ID"))
      aff[(*naff)++] = AFF_GPU_NUMA, i += 3;
    else {
      g_autofree char *q = tok_show(&t[i]);
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, lno, t[i].col,
                      "unknown header column starting with \"%s\"; after the device columns "
                      "expected CPU Affinity, NUMA Affinity or GPU NUMA ID", q);
      return FALSE;
    }
  }
  return TRUE;
}

/* Reads one row (t[0] is its device label, index r). */
static gboolean parse_row(Smi *s, int lno, guint r, const Tok *t, guint nt, const int *aff,
                          guint naff, int line_end_col, GError **error)
{
  Dev *d = dev(s, r);
  if (d->row_line != 0) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_DUPLICATE, s->name, lno, t[0].col,
                    "a second row for %s (the first is on line %d)", d->label, d->row_line);
    return FALSE;
  }
  d->row_line = lno;
  if (nt - 1 < s->n) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, lno, line_end_col,
                    "row %s has %u cells; the header has %u device columns", d->label, nt - 1,
                    s->n);
    return FALSE;
  }
  if (nt - 1 > s->n + naff) {
    const Tok *x = &t[1 + s->n + naff];
    g_autofree char *q = tok_show(x);
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, lno, x->col,
                    "unexpected \"%s\" at the end of row %s: the header has %u device "
                    "columns and %u affinity columns", q, d->label, s->n, naff);
    return FALSE;
  }
  for (guint j = 0; j < s->n; j++) {
    const Tok *x = &t[1 + j];
    Cell *c = &s->m[r * s->n + j];
    c->line = lno, c->col = x->col;
    if (!parse_code(x, c)) {
      g_autofree char *q = tok_show(x);
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, lno, x->col,
                      "unknown connection code \"%s\" in row %s, column %s; expected X, NV#, "
                      "PIX, PXB, PHB, NODE or SYS", q, d->label, dev(s, j)->label);
      return FALSE;
    }
    if ((c->code == C_X) != (j == r)) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, lno, x->col,
                      j == r ? "row %s, column %s: a device's own cell must be X"
                             : "row %s, column %s: X marks a device's own cell only",
                      d->label, dev(s, j)->label);
      return FALSE;
    }
    if (c->code == C_NV && !(d->gpu && dev(s, j)->gpu)) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, lno, x->col,
                      "row %s, column %s: NVLink (NV#) joins two GPUs only", d->label,
                      dev(s, j)->label);
      return FALSE;
    }
  }
  for (guint k = 0; k < naff && 1 + s->n + k < nt; k++) {
    char *v = tok_dup(&t[1 + s->n + k]);
    if (aff[k] == AFF_CPU && d->cpu_aff == NULL)
      d->cpu_aff = v;
    else if (aff[k] == AFF_NUMA && d->numa_aff == NULL)
      d->numa_aff = v;
    else
      g_free(v);
  }
  return TRUE;
}

/* "  NIC0: mlx5_0" lines of the NIC legend. */
static void parse_legend(Smi *s, const Tok *t, guint nt)
{
  if (nt != 2 || t[0].len < 2 || t[0].start[t[0].len - 1] != ':')
    return;
  for (guint i = 0; i < s->n; i++) {
    Dev *d = dev(s, i);
    if (!d->gpu && strlen(d->label) == (gsize)t[0].len - 1 &&
        strncmp(d->label, t[0].start, (gsize)t[0].len - 1) == 0 && d->alias == NULL)
      d->alias = tok_dup(&t[1]);
  }
}

/* Splits the words of a header (header: device labels) or row line that
 * are several run together; counts the repairs in s.  Returns the new
 * word count. */
static guint split_words(Smi *s, int lno, gboolean header, Tok *t, guint nt)
{
  if (header && !tok_is(&t[0], "GPU0") && split_glued(&t[0], TRUE, (Tok[2]){0}, 2) == 0)
    return nt;
  Tok piece[16];
  for (guint i = header ? 0 : 1; i < nt; i++) {
    Cell c;
    if (!header && parse_code(&t[i], &c))
      continue;
    if (header && (label_prefix(t[i].start, t[i].len) == t[i].len ||
                   (i > 0 && (tok_is(&t[i], "CPU") || tok_is(&t[i], "NUMA") ||
                              tok_is(&t[i], "GPU")))))
      continue;
    guint k = split_glued(&t[i], header, piece, G_N_ELEMENTS(piece));
    if (k == 0 || nt + k - 1 > MAX_TOKS)
      continue;
    if (s->glued++ == 0) {
      s->glued_line = lno, s->glued_col = t[i].col;
      s->glued_word = g_strndup(t[i].start, (gsize)t[i].len);
    }
    memmove(&t[i + k], &t[i + 1], (nt - i - 1) * sizeof(Tok));
    memcpy(&t[i], piece, k * sizeof(Tok));
    nt += k - 1;
    i += k - 1;
  }
  return nt;
}

/* Reads the matrix of `nvidia-smi topo -m` text into s: skips lines up to the header (GPU0 ...),
 * reads a row per device label, then the legend; markdown pipes count as column breaks.  Then
 * fills the cells of missing rows (NICs) from their columns and checks that the matrix is
 * symmetric.  Returns FALSE with FS_TOPO_ERROR_INVALID at the line and column for no header, a
 * row before it or without a column, a GPU without rows, or an asymmetric cell; what s holds
 * then is freed by smi_clear. */
static gboolean parse(Smi *s, const char *text, gsize len, GError **error)
{
  Line l = {g_string_new(NULL), g_array_new(FALSE, FALSE, sizeof(int))};
  Tok *t = g_new(Tok, MAX_TOKS);
  g_autofree int *aff = g_new(int, MAX_TOKS);
  guint naff = 0;
  enum { BEFORE, MATRIX, AFTER } state = BEFORE;
  gboolean ok = TRUE;
  int lno = 0, header_line = 0, header_col = 0;
  gsize pos = 0;
  while (ok && pos < len) {
    gsize end = pos;
    while (end < len && text[end] != '\n')
      end++;
    lno++;
    clean_line(text + pos, end - pos, &l);
    int end_col = (int)(end - pos) + 1;
    pos = end + 1;
    const char *first = l.clean->str;
    while (*first == ' ')
      first++;
    if (*first == '|') {
      /* A markdown table row: pipes are column breaks; |---| lines are skipped. */
      gboolean rule = TRUE;
      for (gsize k = 0; k < l.clean->len; k++) {
        char c = l.clean->str[k];
        if (c == '|')
          l.clean->str[k] = ' ';
        else if (c != '-' && c != ':' && c != ' ')
          rule = FALSE;
      }
      if (s->pipe_lines++ == 0)
        s->pipe_line = lno;
      if (rule && state != AFTER)
        continue;
    }
    guint nt = tokenize(&l, t, MAX_TOKS);
    if (state != AFTER && nt > 1)
      nt = split_words(s, lno, state == BEFORE, t, nt);
    if (state == BEFORE) {
      if (nt >= 1 && tok_is(&t[0], "GPU0") && !(nt >= 2 && tok_is(&t[1], "X"))) {
        header_line = lno, header_col = t[0].col;
        ok = parse_header(s, lno, t, nt, aff, &naff, error);
        if (ok)
          s->m = g_new0(Cell, (gsize)s->n * s->n);
        for (guint k = 0; ok && k < (gsize)s->n * s->n; k++)
          s->m[k].code = C_UNSET;
        state = MATRIX;
      } else if (nt >= 2 && tok_is(&t[0], "GPU0") && tok_is(&t[1], "X")) {
        fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, lno, t[0].col,
                        "a matrix row before the header line (GPU0 GPU1 ... CPU Affinity)");
        ok = FALSE;
      }
      continue;
    }
    if (state == MATRIX) {
      int r = nt > 0 ? find_label(s, &t[0]) : -1;
      if (r >= 0) {
        ok = parse_row(s, lno, (guint)r, t, nt, aff, naff, end_col, error);
        continue;
      }
      g_autofree char *first = nt > 0 ? tok_dup(&t[0]) : NULL;
      if (first != NULL && is_gpu_label(first)) {
        g_autofree char *q = tok_show(&t[0]);
        fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, lno, t[0].col,
                        "row %s has no column in the header", q);
        ok = FALSE;
        continue;
      }
      state = AFTER;
    }
    parse_legend(s, t, nt);
  }
  g_string_free(l.clean, TRUE);
  g_array_free(l.cols, TRUE);
  g_free(t);
  if (!ok)
    return FALSE;
  if (state == BEFORE) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, lno > 0 ? 1 : 0, 1,
                    "no `nvidia-smi topo -m` matrix: expected a header line starting with GPU0");
    return FALSE;
  }
  guint ngpu = 0, nrows = 0;
  for (guint i = 0; i < s->n; i++) {
    ngpu += dev(s, i)->gpu;
    nrows += dev(s, i)->gpu && dev(s, i)->row_line != 0;
  }
  if (ngpu == 0 || nrows == 0) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, header_line,
                    header_col, ngpu == 0 ? "the header names no GPU column"
                                          : "no GPU rows after the header line");
    return FALSE;
  }
  for (guint i = 0; i < s->n; i++)
    if (dev(s, i)->gpu && dev(s, i)->row_line == 0) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, dev(s, i)->line,
                      dev(s, i)->col, "%s has a column but no row", dev(s, i)->label);
      return FALSE;
    }
  /* Symmetry, and cells of rows that are missing (NIC rows) from columns. */
  for (guint i = 0; i < s->n; i++)
    for (guint j = i + 1; j < s->n; j++) {
      Cell *a = &s->m[i * s->n + j], *b = &s->m[j * s->n + i];
      if (a->code == C_UNSET)
        *a = *b;
      else if (b->code == C_UNSET)
        *b = *a;
      else if (a->code != b->code || a->nv != b->nv) {
        const Cell *later = a->line > b->line || (a->line == b->line && a->col > b->col) ? a : b;
        const Cell *first = later == a ? b : a;
        guint lr = later == a ? i : j, lc = later == a ? j : i;
        g_autofree char *x = smi_cell_label(later), *y = smi_cell_label(first);
        fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, s->name, later->line,
                        later->col, "the matrix is not symmetric: %s/%s is %s but %s/%s is %s "
                        "(line %d)", dev(s, lr)->label, dev(s, lc)->label, x,
                        dev(s, lc)->label, dev(s, lr)->label, y, first->line);
        return FALSE;
      }
    }
  return TRUE;
}

char *smi_cell_label(const Cell *c)
{
  if (c->code == C_X)
    return g_strdup("X");
  if (c->code == C_NV)
    return g_strdup_printf("NV%u", c->nv);
  return g_strdup(fs_smi_level_names[c->code]);
}

/* See import.h.  Also: text that is not UTF-8 fails with FS_TOPO_ERROR_INVALID at the first bad
 * byte (device names go into the YAML); repairs made while reading (words split where tabs were
 * lost, markdown pipes) are noted in the YAML and in opt->messages.  The rest is smi_build's. */
char *fs_import_smi(const char *text, gsize len, const char *name, const FsCatalog *cat,
                    const FsImportOptions *opt, GError **error)
{
  g_return_val_if_fail(text != NULL && name != NULL && cat != NULL, NULL);
  /* Device names are copied into the YAML: bytes that are not UTF-8 would
   * make output that does not load (found by tests/fuzz/fuzz-smi.c). */
  const char *bad;
  if (!g_utf8_validate_len(text, len, &bad)) {
    int line = 1;
    const char *ls = text;
    for (const char *q = text; q < bad; q++)
      if (*q == '\n') {
        line++;
        ls = q + 1;
      }
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, name, line,
                    (int)g_utf8_strlen(ls, bad - ls) + 1,
                    "byte 0x%02X is not UTF-8 text; expected the output of nvidia-smi topo -m",
                    (guchar)*bad);
    return NULL;
  }
  Smi s = {.name = name, .devs = g_ptr_array_new()};
  char *yaml = NULL;
  if (parse(&s, text, len, error)) {
    GString *r = g_string_new(NULL);
    if (s.glued > 0) {
      g_autofree char *q = fs_escape_controls(s.glued_word);
      g_string_append_printf(r, "split %u word%s of cells or labels run together where tabs "
                             "were lost (first at line %d, column %d: \"%s\")", s.glued,
                             s.glued == 1 ? "" : "s", s.glued_line, s.glued_col, q);
    }
    if (s.pipe_lines > 0)
      g_string_append_printf(r, "%sread %u markdown table line%s as matrix lines (pipes as "
                             "column breaks, |---| rules skipped; first at line %d)",
                             r->len ? "; " : "", s.pipe_lines, s.pipe_lines == 1 ? "" : "s",
                             s.pipe_line);
    if (r->len > 0) {
      s.repairs = g_strdup(r->str);
      if (opt != NULL && opt->messages != NULL)
        g_ptr_array_add(opt->messages, g_strdup_printf("%s: repaired: %s", name, r->str));
    }
    g_string_free(r, TRUE);
    yaml = smi_build(&s, cat, opt, error);
  }
  smi_clear(&s);
  return yaml;
}
