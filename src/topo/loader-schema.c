/* loader-schema.c — the declared inputs of the topology YAML (util/schema.h):
 * one table per mapping the loader reads (the file, a template, a hosts
 * entry, a node, a link, a parameter declaration, each generator type).
 *
 * A topology value may hold ${} expressions, which only the loader can
 * evaluate (with the parameters in force at that point of the reading), so
 * these tables declare the keys, which are required, the kind of each value
 * (a scalar, a list, a mapping) and its documentation; the loader reads
 * each value after substitution and checks its range there (loader*.c), with
 * the same kind of message.  The README's format tables
 * (topologies/README.md) are printed from these tables. */
#include "topo/loader-private.h"

/* A value that may hold ${} expressions: any scalar, read by the loader. */
#define SCALAR(k, vdoc) .key = k, .type = FS_SCHEMA_SCALAR, .offset = FS_SCHEMA_NOWHERE, \
                        .value_doc = vdoc
#define SUBST " (`${}` allowed)"

static const FsSchemaField top_fields[] = {
  {.key = "name", .type = FS_SCHEMA_STRING, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "text", .def = "the file name without .yaml",
   .doc = "the topology's name in outputs (the top file's)"},
  {.key = "description", .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "text", .doc = "one line for people; not used"},
  {.key = "source", .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "text", .doc = "where the structure comes from; not used"},
  {.key = "parameters", .type = FS_SCHEMA_MAP, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "mapping of names to an integer, a word or a table `topo.parameter`",
   .doc = "parameters, overridable with `-D name=value` (see \"Parameters and expressions\")"},
  {.key = "include", .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "a file name or a list of them" SUBST,
   .doc = "other topology files, relative to this one, read here"},
  {.key = "templates", .type = FS_SCHEMA_MAP, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "mapping of names to tables `topo.template`",
   .doc = "servers to instantiate under `hosts:`"},
  {.key = "hosts", .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "list of tables `topo.host`", .doc = "template instances, one host each"},
  {.key = "nodes", .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "list of tables `topo.node`", .doc = "nodes with full names"},
  {.key = "links", .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "list of tables `topo.link`", .doc = "links between full names"},
  {.key = "generators", .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "list of tables `topo.generator`", .doc = "cluster fabrics and racks"},
  {SCALAR("routing", "`static` or `adaptive`" SUBST), .def = "static",
   .doc = "how fabric switches pick among equal-cost uplinks; the outermost file's wins"},
};
const FsSchema fs_topo_file_schema = {"topology", NULL, top_fields, G_N_ELEMENTS(top_fields)};

static const FsSchemaField template_fields[] = {
  {.key = "description", .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "text", .doc = "one line for people; not used"},
  {.key = "source", .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "text", .doc = "where the structure comes from; not used"},
  {.key = "nodes", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "list of tables `topo.node`", .doc = "the server's nodes, with local names"},
  {.key = "links", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "list of tables `topo.link`", .doc = "the server's links, with local names"},
  {SCALAR("like", "a template's name" SUBST),
   .doc = "take the nodes and links of that template (then no `nodes:` or `links:`)"},
};
const FsSchema fs_topo_template_schema = {"template", NULL, template_fields,
                                          G_N_ELEMENTS(template_fields)};

static const FsSchemaField host_fields[] = {
  {SCALAR("template", "a template's name" SUBST), .required = TRUE,
   .doc = "the server to instantiate"},
  {SCALAR("name", "a name or name range" SUBST),
   .doc = "one host per name, its nodes named `name/local`; absent: one host, no prefix"},
};
const FsSchema fs_topo_host_schema = {"hosts entry", NULL, host_fields,
                                      G_N_ELEMENTS(host_fields)};

static const FsSchemaField node_fields[] = {
  {SCALAR("name", "a name or name range" SUBST), .required = TRUE,
   .doc = "one node per name; names are unique"},
  {SCALAR("model", "a model name" SUBST), .required = TRUE,
   .doc = "a gpu, cpu, switch or nic model of the catalog"},
  {SCALAR("socket", "integer from 0 to 1024" SUBST),
   .doc = "CPUs: NUMA node / socket (default: order in the host)"},
  {.key = "fabric", .type = FS_SCHEMA_BOOL, .offset = FS_SCHEMA_NOWHERE, .def = "false",
   .doc = "top level only: the node belongs to no host"},
  {SCALAR("reduction", "`true` or `false` (or 1 or 0)" SUBST), .def = "true",
   .doc = "switches: `false` turns the model's in-network reduction (SHARP, NVLS) off"},
};
const FsSchema fs_topo_node_schema = {"node", NULL, node_fields, G_N_ELEMENTS(node_fields)};

static const FsSchemaField link_fields[] = {
  {SCALAR("a", "a name or name range" SUBST), .required = TRUE,
   .doc = "one end (names of nodes)"},
  {SCALAR("b", "a name or name range" SUBST), .required = TRUE, .doc = "the other end"},
  {SCALAR("model", "a link model's name" SUBST), .required = TRUE, .doc = "the link model"},
  {SCALAR("count", "integer from 1 to 1000000" SUBST), .def = "1",
   .doc = "identical links bundled into one (bandwidth × count)"},
  {SCALAR("pairing", "`zip` or `all`" SUBST),
   .doc = "`zip`: element-wise (equal sizes); `all`: every pair (default: zip for equal "
          "sizes, else all)"},
};
const FsSchema fs_topo_link_schema = {"link", NULL, link_fields, G_N_ELEMENTS(link_fields)};

static const FsSchemaField param_fields[] = {
  {.key = "default", .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .value_doc = "an integer expression or a word (quoted: a word)",
   .doc = "the value unless an outer file or `-D` sets one"},
  {.key = "values", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "list of values", .doc = "the only values allowed"},
  {SCALAR("min", "an integer expression"), .doc = "integers: the smallest value allowed"},
  {SCALAR("max", "an integer expression"), .doc = "integers: the largest value allowed"},
  {.key = "description", .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "text", .doc = "one line for people (`topo show` lists it)"},
};
const FsSchema fs_topo_param_schema = {"parameter", NULL, param_fields,
                                       G_N_ELEMENTS(param_fields)};

/* Generators: the keys of every type, then the fabrics' (endpoints and
 * models), the trees' (fat-tree and rail-optimized), and each type's own. */
static const FsSchemaField gen_fields[] = {
  {SCALAR("type", "`fat-tree`, `rail-optimized`, `dragonfly` or `nvlink-rack`" SUBST),
   .required = TRUE, .doc = "the generator"},
  {SCALAR("name", "text" SUBST), .def = "the type",
   .doc = "the prefix of the names of the nodes it makes"},
  {SCALAR("reduction", "`true` or `false` (or 1 or 0)" SUBST), .def = "true",
   .doc = "`false` turns in-network reduction off on every switch it makes"},
};
const FsSchema fs_topo_gen_schema = {"generator", NULL, gen_fields, G_N_ELEMENTS(gen_fields)};

static const FsSchemaField fabric_fields[] = {
  {.key = "endpoints", .type = FS_SCHEMA_ANY, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .value_doc = "a name range or a list of them" SUBST,
   .doc = "the NICs (or other nodes) the fabric joins, host-major"},
  {SCALAR("switch", "a switch model's name or `auto`" SUBST), .required = TRUE,
   .doc = "its ports are the radix; `auto`: the catalog's first switch with ports of the link"},
  {SCALAR("link", "a link model's name or `auto`" SUBST), .required = TRUE,
   .doc = "`auto`: the network link of the endpoints' NIC model"},
};
static const FsSchema fabric_schema = {"generator", &fs_topo_gen_schema, fabric_fields,
                                       G_N_ELEMENTS(fabric_fields)};

static const FsSchemaField tree_fields[] = {
  {SCALAR("oversubscription", "a ratio of at least 1 (`\"2:1\"` or 2)" SUBST), .def = "1:1",
   .doc = "leaf ports down : up"},
  {SCALAR("levels", "integer from 0 to 3" SUBST),
   .doc = "switch levels (1, 2 or 3); 0 or absent: the fewest that fit"},
};
const FsSchema fs_topo_fat_tree_schema = {"fat-tree generator", &fabric_schema, tree_fields,
                                          G_N_ELEMENTS(tree_fields)};

static const FsSchemaField rail_fields[] = {
  {SCALAR("rails", "integer from 0 to 4096" SUBST),
   .doc = "leaves per scalable unit; 0 or absent: the NICs on the first endpoint's host"},
  {SCALAR("hosts_per_leaf", "integer from 0 to 1048576" SUBST),
   .doc = "hosts per scalable unit; 0 or absent: as many as a leaf's down ports hold"},
};
const FsSchema fs_topo_rail_schema = {"rail-optimized generator", &fs_topo_fat_tree_schema,
                                      rail_fields, G_N_ELEMENTS(rail_fields)};

static const FsSchemaField dragonfly_fields[] = {
  {SCALAR("global_link", "a link model's name" SUBST), .def = "link", .doc = "between groups"},
  {SCALAR("groups", "integer from 0 to 1048576" SUBST), .required = TRUE,
   .doc = "groups of routers"},
  {SCALAR("routers", "integer from 0 to 1048576" SUBST), .required = TRUE,
   .doc = "routers per group, joined all-to-all"},
  {SCALAR("global_per_router", "integer from 0 to 1048576" SUBST), .required = TRUE,
   .doc = "global ports per router"},
  {SCALAR("endpoints_per_router", "integer from 0 to 1048576" SUBST),
   .doc = "0 or absent: the endpoints spread evenly"},
};
const FsSchema fs_topo_dragonfly_schema = {"dragonfly generator", &fabric_schema,
                                      dragonfly_fields, G_N_ELEMENTS(dragonfly_fields)};

static const FsSchemaField rack_fields[] = {
  {SCALAR("trays", "integer from 0 to 4096" SUBST), .def = "18",
   .doc = "compute trays, one host each (with `template:`: hosts per rack)"},
  {SCALAR("gpus_per_tray", "integer from 0 to 64" SUBST), .def = "4",
   .doc = "GPUs per compute tray; not with `template:`"},
  {SCALAR("cpus_per_tray", "integer from 0 to 64" SUBST), .def = "2",
   .doc = "Grace CPUs, each on C2C to an equal share of the GPUs; not with `template:`"},
  {SCALAR("switch_trays", "integer from 0 to 4096" SUBST), .def = "9",
   .doc = "NVSwitch trays per rack"},
  {SCALAR("switches_per_tray", "integer from 0 to 64" SUBST), .def = "2",
   .doc = "NVSwitch chips per switch tray"},
  {SCALAR("gpu", "a gpu model's name" SUBST), .required_doc = "without `template:`",
   .doc = "the GPU model"},
  {SCALAR("cpu", "a cpu model's name" SUBST), .required_doc = "with CPUs, no `template:`",
   .doc = "the Grace CPU model"},
  {SCALAR("switch", "a switch model's name" SUBST), .required = TRUE,
   .doc = "the NVSwitch chip"},
  {SCALAR("nvlink", "a link model's name" SUBST), .required = TRUE,
   .doc = "GPU to switch chip"},
  {SCALAR("c2c", "a link model's name" SUBST), .required_doc = "with CPUs, no `template:`",
   .doc = "GPU to CPU"},
  {SCALAR("links_per_switch", "integer from 0 to 1024" SUBST),
   .doc = "NVLinks per GPU per switch chip; 0 or absent: the GPU's NVLinks / chips"},
  {SCALAR("template", "a template's name" SUBST),
   .doc = "the trays are that template's hosts, in order; only the switch trays are made"},
};
const FsSchema fs_topo_rack_schema = {"nvlink-rack generator", &fs_topo_gen_schema, rack_fields,
                                      G_N_ELEMENTS(rack_fields)};

static const FsSchemaEntry schemas[] = {
  {"topo.file", &fs_topo_file_schema},
  {"topo.parameter", &fs_topo_param_schema},
  {"topo.template", &fs_topo_template_schema},
  {"topo.host", &fs_topo_host_schema},
  {"topo.node", &fs_topo_node_schema},
  {"topo.link", &fs_topo_link_schema},
  {"topo.generator", &fs_topo_gen_schema},
  {"topo.fabric", &fabric_schema},
  {"topo.fat-tree", &fs_topo_fat_tree_schema},
  {"topo.rail-optimized", &fs_topo_rail_schema},
  {"topo.dragonfly", &fs_topo_dragonfly_schema},
  {"topo.nvlink-rack", &fs_topo_rack_schema},
};

const FsSchemaEntry *fs_topo_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
}

gboolean fs_topo_loader_check(const FsSchema *schema, const FsYamlNode *map,
                              gboolean allow_unknown, GError **error)
{
  FsSchemaRead opts = {.allow_unknown = allow_unknown};
  return fs_schema_read(schema, map, NULL, &opts, error);
}
