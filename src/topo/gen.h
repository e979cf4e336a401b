/* gen.h — generators of cluster fabrics and racks, used by the
 * `generators:` section of the topology YAML and usable from C.
 *
 * Each generator adds nodes and links to a topology under construction
 * (before fs_topo_finalize); generated switches belong to no host (-1) and
 * are named "<prefix>/<role><index>".  Endpoints are existing node indices
 * (NICs, or GPUs for a fabric without NICs), in the order given.  The
 * structures (counts follow from the switch model's port count k):
 *
 *   fat-tree        Leaves with d = round-down(k·o/(1+o)) down ports and
 *                   u = k − d up ports for oversubscription o:1 (o = 1 is
 *                   non-blocking); endpoint e on leaf e / d.  Level 2: S
 *                   spines, S the smallest divisor of u such that every
 *                   spine's ports hold its links (each leaf gets u/S links
 *                   to each spine).  Level 3: pods of k/2 leaves, each pod
 *                   with u aggregation switches (one link from every leaf),
 *                   aggregation j of every pod joined to core plane j, a
 *                   plane sized as the spines above.  levels 0 picks the
 *                   fewest levels that fit (1 = one switch).
 *   rail-optimized  Endpoints are host-major with `rails` per host (NIC r
 *                   of every host is rail r).  Hosts are grouped into
 *                   scalable units of hosts_per_leaf; each unit has one leaf
 *                   per rail; the leaves are then joined by the same spine
 *                   (or pod + core) levels as a fat-tree.
 *   dragonfly       groups × routers; routers of a group all-to-all; each
 *                   router has global_per_router global links, spread so
 *                   every pair of groups gets ⌊routers·global/(groups−1)⌋;
 *                   endpoints_per_router endpoints per router in order.
 *   nvlink-rack     An NVL72-style rack: trays of GPUs (and Grace CPUs on
 *                   NVLink-C2C), each tray a host, and NVSwitch trays; every
 *                   GPU gets links_per_switch NVLinks to every NVSwitch chip.
 *                   Or racks over trays that already exist (hosts of a
 *                   template): fs_topo_gen_nvlink_racks.
 *
 * Errors (FS_TOPO_ERROR_INVALID, at the spec's position) say which size
 * does not fit and what would.  Cost: linear in the nodes and links made.
 */
#pragma once

#include "topo/topo.h"

G_BEGIN_DECLS

/* Where generated nodes say they came from. */
typedef struct {
  const char *file;
  int line, col;
} FsGenPos;

typedef struct {
  const FsModel *sw;        /* switch model: its ports are the radix k */
  const FsModel *link;      /* link model of every fabric link */
  double oversubscription;  /* leaf down:up ratio o (>= 1) */
  guint levels;             /* 1, 2 or 3; 0 = fewest that fit */
  const char *prefix;       /* switch-name prefix, e.g. "ib" */
  FsGenPos pos;
} FsFabricSpec;

/* Counts of what a generator made (any pointer argument may be NULL). */
typedef struct {
  guint levels;
  guint leaves, spines, aggs, cores;
  guint links;
} FsFabricInfo;

gboolean fs_topo_gen_fat_tree(FsTopo *topo, const guint *endpoints, guint n,
                              const FsFabricSpec *spec, FsFabricInfo *info, GError **error);

/* rails 0: the number of endpoints on the first endpoint's host.
 * hosts_per_leaf 0: as many as a leaf's down ports hold. */
gboolean fs_topo_gen_rail_optimized(FsTopo *topo, const guint *endpoints, guint n, guint rails,
                                    guint hosts_per_leaf, const FsFabricSpec *spec,
                                    FsFabricInfo *info, GError **error);

typedef struct {
  const FsModel *sw;
  const FsModel *link;         /* router-router inside a group, and endpoint links */
  const FsModel *global_link;  /* between groups (NULL: link) */
  guint groups, routers, global_per_router;
  guint endpoints_per_router;  /* 0: ceil(n / (groups × routers)) */
  const char *prefix;
  FsGenPos pos;
} FsDragonflySpec;

gboolean fs_topo_gen_dragonfly(FsTopo *topo, const guint *endpoints, guint n,
                               const FsDragonflySpec *spec, FsFabricInfo *info, GError **error);

typedef struct {
  const char *prefix;          /* "rack": hosts rack/tray0 …, GPUs rack/tray0/gpu0 … */
  guint trays, gpus_per_tray, cpus_per_tray;
  guint switch_trays, switches_per_tray;
  const FsModel *gpu, *cpu, *sw, *nvlink, *c2c;  /* cpu and c2c NULL when cpus_per_tray = 0 */
  guint links_per_switch;      /* 0: the GPU's nvlinks / number of switch chips */
  FsGenPos pos;
} FsNvlRackSpec;

gboolean fs_topo_gen_nvlink_rack(FsTopo *topo, const FsNvlRackSpec *spec, GError **error);

/* NVLink racks over existing hosts (trays made from a template): hosts[0..n)
 * are grouped by spec->trays into racks (the last may be partial); each rack
 * gets switch_trays × switches_per_tray chips named
 * "<prefix>/rack<r>/swtray<t>/nvswitch<c>", and every GPU of its hosts
 * links_per_switch NVLinks (0: the GPU's nvlinks / chips) to each.  The
 * spec's gpu, cpu, c2c and per-tray counts are not used.  O(nodes + links). */
gboolean fs_topo_gen_nvlink_racks(FsTopo *topo, const guint *hosts, guint n,
                                  const FsNvlRackSpec *spec, GError **error);

G_END_DECLS
