/* topo.h — the topology graph: GPUs, CPUs, switches and NICs joined by
 * links, as loaded from the files in topologies/ (format in topologies/README.md)
 * or built by hand and by the fabric generators (gen.h).
 *
 * Model.  A node has a hierarchical name ("node3/gpu5"), a kind taken
 * from its catalog model (GPU, CPU, SWITCH, NIC), the host (server) it
 * belongs to (-1 for the switches of a cluster fabric), and the file
 * position that declared it.  A link joins two nodes with a link model and
 * a count of bundled links (5 NVLinks to one NVSwitch are one link with
 * count 5); its per-direction bandwidth is the model's effective bandwidth
 * times count, its latency the model's per-hop latency.  Every link is two
 * directional channels: channel 2*link + dir, dir 0 = a→b, 1 = b→a.
 * A switch node adds its model's switching latency when a path crosses it
 * (fs_topo_node_latency).
 *
 * Life cycle.  fs_topo_new, then fs_topo_add_host / add_node / add_link
 * (the builder, used by the loader, the generators and the tests), then
 * fs_topo_finalize once, which builds the read-only indexes: CSR
 * adjacency, the GPU list in placement order and the per-host lists.
 * fs_topo_validate checks port budgets (GPU and CPU NVLinks, switch and NIC
 * ports) and reachability.  After finalize
 * the graph is immutable and every accessor is O(1) and allocation-free.
 *
 * Ownership.  FsTopo owns its nodes, links, names and indexes; pointers it
 * hands out live as long as it.  The catalog is borrowed and must outlive
 * the topology.  Memory is linear in nodes + links (about 100 bytes per
 * node and 80 per link, names in one string chunk).
 *
 * Errors are in FS_TOPO_ERROR (or FS_YAML_ERROR from the YAML layer) and
 * start with file:line:col where a position is known.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "util/schema.h"
#include "util/units.h"

G_BEGIN_DECLS

#define FS_TOPO_ERROR (fs_topo_error_quark())
GQuark fs_topo_error_quark(void);

typedef enum {
  FS_TOPO_ERROR_INVALID,     /* a value or structure is wrong (schema, pairing, generator sizes) */
  FS_TOPO_ERROR_MODEL,       /* unknown model, or a model of the wrong kind */
  FS_TOPO_ERROR_DANGLING,    /* a link names a node that does not exist */
  FS_TOPO_ERROR_DUPLICATE,   /* two nodes with one name */
  FS_TOPO_ERROR_PORTS,       /* a GPU, switch or NIC uses more ports than its model has */
  FS_TOPO_ERROR_UNREACHABLE, /* a GPU is connected to no other GPU */
  FS_TOPO_ERROR_INCLUDE,     /* include cycle or unreadable include */
  FS_TOPO_ERROR_LIMIT,       /* a range or expansion exceeds FS_TOPO_MAX_NAMES */
  FS_TOPO_ERROR_PARAM,       /* bad parameter, -D override or ${expression} */
} FsTopoError;

/* The most names one range or one expansion may produce, and the most
 * node-to-node pairs one link entry may make. */
#define FS_TOPO_MAX_NAMES 1048576
/* The most nodes and links one topology may hold (about 0.5 GiB and 1.3 GiB
 * of graph): a guard against a template instantiated a million times. */
#define FS_TOPO_MAX_NODES 8388608
#define FS_TOPO_MAX_LINKS 16777216

/* The limits in force, checked by the loader, the generators and the
 * builder (FS_TOPO_ERROR_LIMIT, with the position and the variable that
 * raises the limit).  They start at the FS_TOPO_MAX_* values above, unless
 * the environment sets FABRICSIM_MAX_NAMES, FABRICSIM_MAX_NODES or
 * FABRICSIM_MAX_LINKS to a positive integer (read at the first use; a
 * value that is not one is ignored with a warning on stderr), and
 * fs_topo_set_limits replaces them for the whole process (tests, fuzzers;
 * not thread-safe against a load in progress).  Each is at most 2^31. */
typedef struct {
  guint64 names; /* names one range or expansion may make; pairs one link entry may make */
  guint64 nodes; /* nodes in one topology */
  guint64 links; /* links in one topology */
} FsTopoLimits;

const FsTopoLimits *fs_topo_limits(void);
void fs_topo_set_limits(const FsTopoLimits *limits);

/* Node kinds, as printed in JSON and `topo show`.  A node's kind is its
 * model's kind (a GPU model makes a GPU node). */
#define FS_NODE_KINDS(X) \
  X(GPU, "gpu")          \
  X(CPU, "cpu")          \
  X(SWITCH, "switch")    \
  X(NIC, "nic")

typedef enum {
#define X(id, str) FS_NODE_##id,
  FS_NODE_KINDS(X)
#undef X
  FS_NODE_N_KINDS
} FsNodeKind;

const char *fs_node_kind_name(FsNodeKind k);

typedef struct {
  const char *name;      /* unique, e.g. "node3/gpu5" */
  FsNodeKind kind;
  const FsModel *model;  /* catalog model of the matching kind */
  int host;              /* host (server) index, or -1 for a cluster-fabric node */
  int local;             /* index among the nodes of this kind in this host (GPU 0..7) */
  int socket;            /* CPU nodes: socket (NUMA node) within the host; else -1 */
  int gpu_rank;          /* GPU nodes: position in fs_topo_gpus(); else -1 */
  gboolean reduction;    /* switches: reduces in the network (SHARP, NVLS): the model's
                          * reduction unless the topology turned it off; else FALSE */
  const char *file;      /* where it was declared (or the generator's entry) */
  int line, col;
} FsTopoNode;

typedef struct {
  guint a, b;            /* node indices; channel 2*i is a→b, 2*i+1 is b→a */
  const FsModel *model;  /* a link model */
  guint count;           /* bundled links, >= 1 */
  double bandwidth;      /* bytes/s per direction = model bandwidth × count */
  FsTime latency;        /* one way, per hop (the model's) */
  const char *file;
  int line, col;
} FsTopoLink;

/* One adjacency entry: the link and the node at its other end. */
typedef struct {
  guint link;
  guint peer;
} FsTopoAdj;

typedef struct FsTopo FsTopo;

/* ---- builder ---------------------------------------------------------- */

/* A new, empty topology over cat (borrowed).  name is used in summaries
 * (may be NULL). */
FsTopo *fs_topo_new(const FsCatalog *cat, const char *name);
void fs_topo_free(FsTopo *topo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsTopo, fs_topo_free)

/* Adds a host (a server) named name (e.g. "node3"); returns its index. */
int fs_topo_add_host(FsTopo *topo, const char *name);

/* Adds a node.  model must be a GPU, CPU, SWITCH or NIC model; host is a
 * host index or -1.  socket applies to CPUs (-1: the CPU's order within
 * its host).  file may be NULL.  Fails (FS_TOPO_ERROR_DUPLICATE, with both
 * positions) when the name exists.  On success *index (if non-NULL) is the
 * new node's index.  Cost: O(1) amortized. */
gboolean fs_topo_add_node(FsTopo *topo, const char *name, const FsModel *model, int host,
                          int socket, const char *file, int line, int col, guint *index,
                          GError **error);

/* Turns a switch's in-network reduction off (reduction FALSE) or back to its
 * model's (TRUE) before finalize: a fabric whose switches could reduce but do
 * not (SHARP not enabled).  Other kinds never reduce.  O(1). */
void fs_topo_set_reduction(FsTopo *topo, guint node, gboolean reduction);

/* Adds a link of count bundled links of model (a link model) between
 * nodes a and b (a != b).  Fails with the given position on a self-link or
 * a zero count.  O(1) amortized. */
gboolean fs_topo_add_link(FsTopo *topo, guint a, guint b, const FsModel *model, guint count,
                          const char *file, int line, int col, guint *index, GError **error);

/* Builds the indexes (adjacency, GPU order, host lists).  Call once after
 * the last add.  O(nodes + links). */
void fs_topo_finalize(FsTopo *topo);

/* Checks the finalized graph: every GPU's and CPU's NVLinks (sum of the
 * counts of its nvlink-family links) within its model's nvlinks, every switch's and
 * NIC's ports (sum of link counts) within its model's ports, and every GPU
 * connected to at least one other GPU (when there are two or more).  The
 * error names the node's position and the figures.  O(nodes + links). */
gboolean fs_topo_validate(const FsTopo *topo, GError **error);

/* ---- read access (after finalize) ------------------------------------- */

const char *fs_topo_name(const FsTopo *topo);
const FsCatalog *fs_topo_catalog(const FsTopo *topo);
guint fs_topo_n_nodes(const FsTopo *topo);
guint fs_topo_n_links(const FsTopo *topo);
static inline guint fs_topo_n_channels(const FsTopo *topo) { return 2 * fs_topo_n_links(topo); }
const FsTopoNode *fs_topo_node(const FsTopo *topo, guint i);
const FsTopoLink *fs_topo_link(const FsTopo *topo, guint i);

/* The links at node i, with their far ends, in link order.  *n gets the
 * length.  Borrowed; no allocation. */
const FsTopoAdj *fs_topo_adj(const FsTopo *topo, guint node, guint *n);

/* Channel arithmetic. */
static inline guint fs_topo_channel(guint link, guint dir) { return 2 * link + dir; }
static inline guint fs_topo_channel_link(guint ch) { return ch >> 1; }
/* Source and destination node of a channel. */
guint fs_topo_channel_src(const FsTopo *topo, guint ch);
guint fs_topo_channel_dst(const FsTopo *topo, guint ch);
/* The channel that leaves node from along link (link must touch from). */
guint fs_topo_channel_from(const FsTopo *topo, guint link, guint from);

/* Latency a path pays for crossing node: a switch's switching latency,
 * a NIC's processing latency, 0 for GPUs and CPUs. */
FsTime fs_topo_node_latency(const FsTopo *topo, guint node);

/* Index of the node called name, or -1.  O(1). */
int fs_topo_find(const FsTopo *topo, const char *name);
/* The GPU node that text names on a command line: the name of a GPU node,
 * or its index in placement order (digits only); -1 when it is neither. */
int fs_topo_find_gpu(const FsTopo *topo, const char *text);

/* GPU node indices in placement order: host-major, then local index
 * (fabric GPUs, if any, last).  Borrowed; *n gets the count. */
const guint *fs_topo_gpus(const FsTopo *topo, guint *n);

guint fs_topo_n_hosts(const FsTopo *topo);
const char *fs_topo_host_name(const FsTopo *topo, guint host);
/* Nodes of host h in insertion order; its GPUs in local order. Borrowed. */
const guint *fs_topo_host_nodes(const FsTopo *topo, guint host, guint *n);
const guint *fs_topo_host_gpus(const FsTopo *topo, guint host, guint *n);

/* Sum of the counts of node's links whose model is in family. */
guint fs_topo_node_links(const FsTopo *topo, guint node, FsLinkFamily family);
/* Sum of the counts of all of node's links (ports in use). */
guint fs_topo_node_ports(const FsTopo *topo, guint node);

/* ---- loading ---------------------------------------------------------- */

/* Loads a topology file (see topologies/README.md), resolving models in
 * cat (borrowed, must outlive the result).  defines is a NULL-terminated
 * list of "name=value" parameter overrides (may be NULL): an integer
 * expression or a word, as the parameter's declaration says; an override of
 * a parameter the files do not declare, or one its declaration does not
 * allow, is an error.  Includes are read
 * relative to the including file.  A path that does not exist is looked
 * up among the shipped topologies (fs_datadir_find: "dgx-h100" from any
 * folder).  Returns a finalized and validated topology, or NULL with
 * error. */
FsTopo *fs_topo_load_file(const char *path, const FsCatalog *cat, const char *const *defines,
                          GError **error);

/* The same from text; name is used in messages and as the base for
 * relative includes (its folder). */
FsTopo *fs_topo_load_string(const char *text, const char *name, const FsCatalog *cat,
                            const char *const *defines, GError **error);

/* The declared keys of a topology file (util/schema.h), each with the name
 * topologies/README.md's markers give it ("topo.node"); *n receives the
 * count.  Static, borrowed; the order is the README's.  Values may hold
 * ${} expressions, so the tables declare keys and kinds of values, and the
 * loader checks each value after substitution. */
const FsSchemaEntry *fs_topo_schemas(guint *n);

/* Parameter values after loading, in declaration order (for summaries):
 * returns the number of parameters and sets *names / *values (borrowed).
 * A string parameter's value is 0 here; fs_topo_param_string gives its text. */
guint fs_topo_params(const FsTopo *topo, const char *const **names, const int64_t **values);

/* The text of parameter i (declaration order) when it is a string, NULL when
 * it is an integer.  Borrowed; O(1). */
const char *fs_topo_param_string(const FsTopo *topo, guint i);

/* Records an integer or a string parameter (used by the loader). */
void fs_topo_set_param(FsTopo *topo, const char *name, int64_t value);
void fs_topo_set_param_string(FsTopo *topo, const char *name, const char *value);

/* How the fabric's switches route (the topology's `routing:` field, which a
 * file may take from a word parameter: cluster.yaml's -D routing=…; net/route.h says what each does): STATIC, the default, by
 * destination on InfiniBand (the subnet manager's forwarding tables) and by
 * flow hash on Ethernet; ADAPTIVE, every transfer spread evenly over all
 * equal-cost next hops (InfiniBand adaptive routing, packet spraying). */
#define FS_TOPO_ROUTINGS(X)   \
  X(STATIC, "static")         \
  X(ADAPTIVE, "adaptive")

typedef enum {
#define X(id, str) FS_TOPO_ROUTING_##id,
  FS_TOPO_ROUTINGS(X)
#undef X
  FS_TOPO_ROUTING_N
} FsTopoRouting;

const char *fs_topo_routing_name(FsTopoRouting r);
/* Parses "static" or "adaptive" (ASCII case-insensitive).  FALSE if unknown. */
gboolean fs_topo_routing_from_name(const char *s, FsTopoRouting *out);
FsTopoRouting fs_topo_routing(const FsTopo *topo);
/* Sets the fabric's routing (the loader; before fs_topo_finalize or after). */
void fs_topo_set_routing(FsTopo *topo, FsTopoRouting routing);

/* ---- analysis --------------------------------------------------------- */

/* Bisection bandwidth in bytes/s per direction: the maximum flow from the
 * first half of the GPU list (placement order) to the second half, links
 * carrying their per-direction bandwidth and nodes unlimited (equal, by
 * max-flow/min-cut, to the smallest cut separating the halves).  0 with
 * fewer than two GPUs.  Cost: Dinic's algorithm, O(nodes + links) memory;
 * well under a second for a 16,384-GPU fat-tree. */
double fs_topo_bisection(const FsTopo *topo);

/* ---- output ----------------------------------------------------------- */

/* Graphviz text of the topology (caller frees): one vertex per node,
 * clustered by host, one edge per link labelled "model ×count". */
char *fs_topo_to_dot(const FsTopo *topo);

G_END_DECLS
