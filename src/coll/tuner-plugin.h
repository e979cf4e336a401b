/* tuner-plugin.h — an NCCL tuner plugin as data: regions of (message
 * size, rank count) in which the plugin tells NCCL which algorithm and
 * protocol to run.
 *
 * NCCL loads a tuner plugin (NCCL_TUNER_PLUGIN, or the tuner symbols of the
 * network plugin's library, src/plugin/tuner.cc) and lets it rewrite its
 * cost table before it picks the cheapest entry.  aws-ofi-nccl's region
 * tuner (src/tuner/nccl_ofi_regions.cpp) sets the cost of one
 * (algorithm, protocol) to 0 when the point (nBytes, nRanks) lies in one of
 * its polygons, inside or on an edge, the first region in order that NCCL
 * offers winning; outside every region, and on communicators of at most
 * `min_nodes - 1` nodes, NCCL's own choice stands.  A plugin file
 * (models/nccl/tuners/<name>.yaml, format in models/nccl/README.md "Tuner
 * plugins") holds the regions, per collective and ranks per node, and the
 * NCCL_* variables the plugin sets for its platform (applied by
 * coll/nccl-params.h fs_nccl_params_apply_environ unless the environment
 * sets them).
 *
 * Ownership: FsTunerPlugin is opaque, _load/_free; regions and strings are
 * borrowed from it.  Errors: FS_COLL_ERROR_PARSE, "file:line:col: …".
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "coll/coll.h"
#include "util/schema.h"

G_BEGIN_DECLS

typedef struct FsTunerPlugin FsTunerPlugin;

/* One region: the algorithm and protocol it selects (fabricsim's names, as
 * `fabricsim coll --list` prints them), the collective and ranks per node
 * it applies to, and its polygon's vertices (x: NCCL's nBytes, y: ranks). */
typedef struct {
  FsCollOp op;
  guint ranks_per_node;
  const char *algo;
  FsCollProto proto;
  guint n_vertices;
  const double *x, *y;
} FsTunerRegion;

/* Loads a plugin file, its keys read against the declared schemas
 * (fs_tuner_plugin_schemas).  NULL with FS_COLL_ERROR_PARSE (file:line:col)
 * for a missing or unknown key, an unknown collective, algorithm or
 * protocol, a value out of range, an `env` key that is not NCCL_*, a region
 * of fewer than 2 vertices.  Cost: linear in the file. */
FsTunerPlugin *fs_tuner_plugin_load(const char *path, GError **error);

/* The declared keys of a plugin file (nccl.tuner), its `env` mapping and
 * each of its regions, for tools/gen-schema-docs (models/nccl/README.md). */
const FsSchemaEntry *fs_tuner_plugin_schemas(guint *n);
/* The path of a plugin named in NCCL_TUNER_PLUGIN: a path as given when it
 * names a file (contains '/' or ends in .yaml), else <models>/nccl/tuners/
 * <name>.yaml.  Caller frees. */
char *fs_tuner_plugin_path(const char *name);
void fs_tuner_plugin_free(FsTunerPlugin *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsTunerPlugin, fs_tuner_plugin_free)

/* The plugin's name (its file's `name:`) and the environment it sets
 * (NULL-terminated "NAME=VALUE" strings), borrowed. */
const char *fs_tuner_plugin_name(const FsTunerPlugin *t);
const char *const *fs_tuner_plugin_env(const FsTunerPlugin *t);

/* TRUE when the plugin tunes a communicator of `nodes` hosts (the region
 * tuner leaves communicators of at most two nodes to NCCL). */
gboolean fs_tuner_plugin_applies(const FsTunerPlugin *t, guint nodes);
/* The regions in the plugin's order (first match wins); *n their count. */
const FsTunerRegion *fs_tuner_plugin_regions(const FsTunerPlugin *t, guint *n);
/* TRUE when (x, y) lies inside r's polygon or on one of its edges (within
 * a relative 1e-12), as the region tuner's ray casting decides.  Cost:
 * O(vertices). */
gboolean fs_tuner_region_contains(const FsTunerRegion *r, double x, double y);

G_END_DECLS
