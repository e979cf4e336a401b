/* nccl-params.c — the loader of the files in models/nccl/.  See nccl-params.h and
 * models/nccl/README.md.  Every table is a mapping with a `source:`; rows
 * are lists of numbers of a fixed length; a missing row, an extra key or a
 * negative number is an error naming file:line:col. */
#include "coll/nccl-params.h"

#include <stdio.h>
#include <string.h>

#include "coll/comm.h"
#include "util/datadir.h"
#include "util/error.h"
#include "util/names.h"
#include "util/schema.h"
#include "util/yaml.h"

static const char *const hw_names[FS_NCCL_HW_N + 1] = {
#define X(id, name) name,
  FS_NCCL_HWS(X)
#undef X
  NULL,
};

/* NULL-terminated: also the allowed keys of per-row tables. */
static const char *const row_names[FS_NCCL_ROW_N + 1] = {
#define X(id, name) name,
  FS_NCCL_ARCH_ROWS(X)
#undef X
  NULL,
};

FS_NAMES_DEFINE_NAME(FsNcclRow, fs_nccl_row, row_names, FS_NCCL_ROW_N)

gboolean fs_nccl_params_arch_row(const FsNcclParams *p, const char *arch, FsNcclRow *out)
{
  guint i;
  if (!fs_names_index_nocase((const char *const *)p->arch_names, p->n_archs, arch, &i))
    return FALSE;
  *out = p->arch_rows[i];
  return TRUE;
}

FS_NAMES_DEFINE_NAME(FsNcclHw, fs_nccl_hw, hw_names, FS_NCCL_HW_N)

/* Reads a list of exactly n non-negative numbers. */
static gboolean get_row(const FsYamlNode *node, guint n, double *out, GError **error)
{
  if (!fs_yaml_require_seq(node, error))
    return FALSE;
  if (node->n != n) {
    fs_yaml_error(error, node, "expected a list of %u numbers, got %u", n, node->n);
    return FALSE;
  }
  for (guint i = 0; i < n; i++)
    if (!fs_yaml_get_double(node->values[i], 0.0, 1e12, &out[i], error))
      return FALSE;
  return TRUE;
}

/* Table t (named key) has a non-empty `source:`. */
static gboolean check_source(const FsYamlNode *t, const char *key, GError **error)
{
  const char *src = NULL;
  const FsYamlNode *s = fs_yaml_require_key(t, "source", key, error);
  if (s == NULL || !fs_yaml_get_string(s, &src, error))
    return FALSE;
  if (src[0] == '\0') {
    fs_yaml_error(error, s, "expected a non-empty source for %s", key);
    return FALSE;
  }
  return TRUE;
}

/* Looks up a table (a mapping with `source:`) and checks its keys: the
 * names in rows (count n) and, when extra is non-NULL, those too. */
static const FsYamlNode *get_table(const FsYamlNode *root, const char *key,
                                   const char *const *rows, guint n, const char *const *extra,
                                   GError **error)
{
  const FsYamlNode *t = fs_yaml_require_key(root, key, "NCCL parameters", error);
  if (t == NULL || !fs_yaml_require_map(t, error))
    return NULL;
  g_autoptr(GPtrArray) allowed = g_ptr_array_new();
  g_ptr_array_add(allowed, (gpointer) "source");
  for (guint i = 0; i < n; i++)
    g_ptr_array_add(allowed, (gpointer)rows[i]);
  for (guint i = 0; extra && extra[i]; i++)
    g_ptr_array_add(allowed, (gpointer)extra[i]);
  g_ptr_array_add(allowed, NULL);
  if (rows != NULL && !fs_yaml_check_keys(t, (const char *const *)allowed->pdata, key, error))
    return NULL;
  return check_source(t, key, error) ? t : NULL;
}

static gboolean get_number(const FsYamlNode *map, const char *key, const char *what, double max,
                           double *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_require_key(map, key, what, error);
  return v != NULL && fs_yaml_get_double(v, 0.0, max, out, error);
}

static gboolean get_uint(const FsYamlNode *map, const char *key, const char *what, int64_t min,
                         int64_t max, uint64_t *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_require_key(map, key, what, error);
  int64_t x;
  if (v == NULL || !fs_yaml_get_int(v, min, max, &x, error))
    return FALSE;
  *out = (uint64_t)x;
  return TRUE;
}

static const char *const *algo_names(void)
{
  static const char *const names[FS_NCCL_ALGO_N + 1] = {
#define X(id, name) name,
    FS_NCCL_ALGOS(X)
#undef X
    NULL,
  };
  return names;
}

static const char *const *proto_names(void)
{
  static const char *const names[FS_PROTO_N + 1] = {
#define X(id, name) name,
    FS_COLL_PROTOS(X)
#undef X
    NULL,
  };
  return names;
}

/* table[algo] = [LL, LL128, Simple]. */
static gboolean load_algo_proto(const FsYamlNode *t, double out[FS_NCCL_ALGO_N][FS_PROTO_N],
                                const char *what, GError **error)
{
  for (guint a = 0; a < FS_NCCL_ALGO_N; a++) {
    const FsYamlNode *row = fs_yaml_require_key(t, algo_names()[a], what, error);
    if (row == NULL || !get_row(row, FS_PROTO_N, out[a], error))
      return FALSE;
  }
  return TRUE;
}

/* table[row] = [n numbers] for each architecture row. */
static gboolean load_arch_rows(const FsYamlNode *t, guint n, double *out, const char *what,
                               GError **error)
{
  if (!fs_yaml_require_map(t, error) || !fs_yaml_check_keys(t, row_names, what, error))
    return FALSE;
  for (guint r = 0; r < FS_NCCL_ROW_N; r++) {
    const FsYamlNode *row = fs_yaml_require_key(t, row_names[r], what, error);
    if (row == NULL)
      return FALSE;
    if (n == 1 ? !fs_yaml_get_double(row, 0.0, 1e12, &out[r], error)
               : !get_row(row, n, out + r * n, error))
      return FALSE;
  }
  return TRUE;
}

/* A [min, max] pair of part sizes in chunks: both above 0, min <= max. */
static gboolean get_part(const FsYamlNode *t, const char *key, double out[2], GError **error)
{
  const FsYamlNode *row = fs_yaml_require_key(t, key, "p2p_schedule", error);
  if (row == NULL || !get_row(row, 2, out, error))
    return FALSE;
  if (out[0] <= 0 || out[1] < out[0]) {
    fs_yaml_error(error, row, "expected [min, max] part sizes in chunks with 0 < min <= max");
    return FALSE;
  }
  return TRUE;
}

/* The optional p2p_schedule table (models/nccl/README.md): the walk of the
 * top level read its fixed keys; here the part sizes.  Sets p->p2p.on. */
static gboolean load_p2p_schedule(FsNcclParams *p, const FsYamlNode *t, GError **error)
{
  if (!check_source(t, "p2p_schedule", error) ||
      !get_part(t, "part_net", p->p2p.part_net, error) ||
      !get_part(t, "part_host", p->p2p.part_host, error))
    return FALSE;
  p->p2p.on = TRUE;
  return TRUE;
}

/* The tables with fixed keys, read by the walk of the top level into
 * FsNcclParams (util/schema.h); each names its `source`. */
#define POFF(m) offsetof(FsNcclParams, m)
#define SOURCE                                                                               \
  {.key = "source", .type = FS_SCHEMA_STRING, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,   \
   .doc = "where the numbers come from (not empty)"}
#define NUM(k, off, hi, d)                                                                   \
  {.key = k, .type = FS_SCHEMA_DOUBLE, .offset = off, .required = TRUE, .min = "0", .max = hi, \
   .doc = d}
#define OPT_NUM(k, off, hi, d)                                                               \
  {.key = k, .type = FS_SCHEMA_DOUBLE, .offset = off, .min = "0", .max = hi, .doc = d}
#define COUNT(k, off, lo, hi, d)                                                             \
  {.key = k, .type = FS_SCHEMA_UINT, .offset = off, .required = TRUE, .min = lo, .max = hi,    \
   .doc = d}
#define SCHEMA(var, name, fields) static const FsSchema var = {name, NULL, fields, G_N_ELEMENTS(fields)}

static const FsSchemaField steps_fields[] = {
  SOURCE, COUNT("value", POFF(steps), "1", "64", "NCCL_STEPS: buffer slots per connection"),
};
SCHEMA(steps_schema, "steps", steps_fields);

static const FsSchemaField overhead_fields[] = {
  SOURCE,
  NUM("intel", POFF(net_overhead_us[FS_NCCL_CPU_INTEL]), "1000000", "µs on Intel hosts"),
  NUM("amd", POFF(net_overhead_us[FS_NCCL_CPU_AMD]), "1000000", "µs on AMD hosts"),
  NUM("other", POFF(net_overhead_us[FS_NCCL_CPU_OTHER]), "1000000", "µs on other hosts"),
  NUM("simple_multiplier", POFF(net_overhead_simple_mult), "1000", "factor for Simple"),
};
SCHEMA(overhead_schema, "net_overhead_us", overhead_fields);

static const FsSchemaField factor_fields[] = {
  SOURCE,
  NUM("ring_ll", POFF(f_ring_ll), "1000", "Ring+LL"),
  NUM("ll128", POFF(f_ll128), "1000", "LL128"),
  NUM("ring_ll128", POFF(f_ring_ll128), "1000", "Ring+LL128"),
  NUM("tree_all_reduce", POFF(f_tree_ar), "1000", "Tree all_reduce"),
  NUM("tree_ll_divisor", POFF(f_tree_ll_div), "1000", "Tree+LL divisor (above 0)"),
  NUM("tree_ll128_one_host", POFF(f_tree_ll128_one_host), "1000", "Tree+LL128 on one host"),
  NUM("tree_pattern", POFF(f_tree_pattern), "1000", "Tree pattern"),
  NUM("pat", POFF(f_pat), "1000", "PAT"),
  NUM("collnet_sm90", POFF(f_collnet_sm90), "1000", "CollNet on sm90"),
  NUM("ring_plateau_pre_sm80", POFF(f_ring_plateau_old), "1000", "Ring plateau before sm80"),
  NUM("ring_plateau", POFF(f_ring_plateau), "1000", "Ring plateau"),
  NUM("collnet_arity_us", POFF(collnet_arity_us), "1000", "CollNet µs per arity"),
  NUM("pat_rank_us", POFF(pat_rank_us), "1000", "PAT µs per rank"),
  NUM("pat_inter_divisor", POFF(pat_inter_div), "1000", "PAT inter-node divisor (above 0)"),
  OPT_NUM("ring_ll128_one_rank_per_node", POFF(f_ring_ll128_one_ppn), "1000",
          "Ring+LL128 when ppn < 2 (default `ring_ll128`)"),
  OPT_NUM("ring_ll_one_host_other", POFF(f_ring_ll_one_host_other), "1000",
          "Ring+LL on one host, collectives other than all_reduce and reduce"),
  OPT_NUM("nvls_legacy_ratio", POFF(f_nvls_legacy_ratio), "1000", "NVLS before 2.28"),
};
SCHEMA(factor_schema, "bandwidth_factors", factor_fields);

static const FsSchemaField channels_fields[] = {
  SOURCE, COUNT("max", POFF(max_channels), "1", "64", "channels of the ring/tree graphs"),
  COUNT("nvls", POFF(nvls_channels), "0", "64", "NVLS channels"),
};
SCHEMA(channels_schema, "channels", channels_fields);

#define CHUNK(k, off, d)                                                                     \
  {.key = k, .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE, .offset = off,               \
   .required = TRUE, .doc = d}
static const FsSchemaField p2p_fields[] = {
  SOURCE, CHUNK("nvl_chunk", POFF(p2p_nvl_chunk), "p2p chunk over NVLink (at least 1 B)"),
  CHUNK("net_chunk", POFF(p2p_net_chunk), "p2p chunk over the network (at least 1 B)"),
  CHUNK("ll_threshold", POFF(p2p_ll_threshold), "bytes per peer up to which send/recv uses LL"),
};
SCHEMA(p2p_schema, "p2p", p2p_fields);

static const char *const p2p_rule_names[] = {
#define X(id, name) name,
  FS_NCCL_P2P_RULES(X)
#undef X
  NULL,
};
const char *fs_nccl_p2p_rule_name(FsNcclP2pRule r)
{
  return (guint)r < FS_NCCL_P2P_RULE_N ? p2p_rule_names[r] : "?";
}

#define SOFF(m) POFF(p2p.m)
static const FsSchemaField p2p_sched_fields[] = {
  SOURCE,
  {.key = "net_peer_rule", .type = FS_SCHEMA_ENUM, .offset = SOFF(net_rule), .required = TRUE,
   .names = p2p_rule_names, .doc = "NCCL's rule for a network peer's channels"},
  COUNT("net_peer_channels", SOFF(net_channels), "1", "64", "channels per network peer"),
  COUNT("net_peer_scale", SOFF(net_scale), "1", "64", "`scale`: the halving threshold"),
  {.key = "per_channel_net_bw_gbps", .type = FS_SCHEMA_DOUBLE, .offset = SOFF(channel_net_bw),
   .required = TRUE, .min = "0", .min_open = TRUE, .max = "100000",
   .doc = "the most one channel moves over the network, GB/s"},
  COUNT("work_per_batch", SOFF(work_per_batch), "1", "64", "`bandwidth`: peers per work batch"),
  COUNT("nvl_channels_per_link", SOFF(nvl_channels_per_link), "1", "64",
        "an NVLink peer: this × its NVLinks"),
  COUNT("pci_peer_channels", SOFF(pci_channels), "1", "64", "another peer on the host"),
  {.key = "halve_min_across_hosts", .type = FS_SCHEMA_BOOL, .offset = SOFF(halve_min_net),
   .required = TRUE, .doc = "nChannelsMin halved by the ranks across hosts (2.20+)"},
  {.key = "part_net", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .value_doc = "`[min, max]`", .doc = "part size of an op across hosts, in p2p chunks"},
  {.key = "part_host", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .value_doc = "`[min, max]`", .doc = "part size of an op on the host, in p2p chunks"},
};
#undef SOFF
SCHEMA(p2p_sched_schema, "p2p_schedule", p2p_sched_fields);

static const FsSchemaField ring_kernel_fields[] = {
  SOURCE, NUM("local_copy_sm_share", POFF(ring_copy_sm_share), "1000",
              "the ring kernel's local copy, as a fraction of one SM's memory bandwidth share"),
};
SCHEMA(ring_kernel_schema, "ring_kernel", ring_kernel_fields);

static const FsSchemaField host_launch_fields[] = {
  SOURCE, NUM("launch_us", POFF(host_launch_us), "1000000",
              "µs the host takes to issue one GPU's collective in an nccl-tests iteration"),
};
SCHEMA(host_launch_schema, "host_launch", host_launch_fields);

static const FsSchemaField collnet_agrs_fields[] = {
  SOURCE,
  NUM("one_rank_per_node", POFF(collnet_agrs_ppn1), "1000",
      "factor on the bus bandwidth at 1 rank per node"),
  NUM("eight_ranks_per_node", POFF(collnet_agrs_ppn8), "1000",
      "factor at 8 ranks per node (linear between the two in ranks per node)"),
  NUM("inter_factor", POFF(collnet_agrs_inter), "1000",
      "one GPU's NIC bandwidth × this is the per-rank rate (NCCL: min(bwIntra, bwInter × this)); 0: × 1"),
};
SCHEMA(collnet_agrs_schema, "collnet_allgather_reducescatter", collnet_agrs_fields);

/* Fills p from the root map of an NCCL parameter file: the NCCL version, step and protocol
 * settings, base and hardware latencies per algorithm and protocol, the architecture rows, the
 * bandwidth caps and correction tables, channel counts, p2p chunk sizes, and the optional
 * algorithms a release lacks and ring kernel copy cost. Unknown keys are refused. Sets a YAML
 * error at the offending node and returns FALSE on the first missing or out-of-range value. */
/* The declared keys of a parameters file (util/schema.h): its top level
 * and one protocol's table; models/nccl/README.md prints them
 * (tools/gen-schema-docs).  The other tables are keyed by algorithm, row
 * or protocol names and read below. */
#define TABLE(k, req, text)                                                                  \
  {.key = k, .type = FS_SCHEMA_MAP, .offset = FS_SCHEMA_NOWHERE, .required = req,          \
   .value_doc = "table with `source`", .doc = text}
/* A table with fixed keys, read by the same walk (its own schema below). */
#define FIXED(k, req, sch, text)                                                             \
  {.key = k, .type = FS_SCHEMA_MAP, .offset = FS_SCHEMA_NOWHERE, .required = req, .sub = &sch, \
   .value_doc = "table `nccl." k "`", .doc = text}
static const FsSchemaField top_fields[] = {
  {.key = "nccl_version", .type = FS_SCHEMA_STRING, .offset = FS_SCHEMA_NOWHERE,
   .required = TRUE, .doc = "the NCCL release the numbers are from; printed in headers and `explain`"},
  FIXED("steps", TRUE, steps_schema, "`value`: NCCL_STEPS, buffer slots per connection (1 to 64)"),
  TABLE("protocols", TRUE, "for `LL`, `LL128`, `Simple`: a protocol table (below)"),
  TABLE("base_latency_us", TRUE,
        "`baseLatencies`: per algorithm (`Tree`, `Ring`, `CollNetDirect`, `CollNetChain`, `NVLS`, "
        "`NVLSTree`, `PAT`) a list `[LL, LL128, Simple]` in µs"),
  TABLE("hw_latency_us", TRUE, "`hwLatencies`: for `NVLINK`, `PCI`, `NET`, the same per-algorithm lists"),
  TABLE("arch_rows", TRUE,
        "GPU architecture name (as in the catalog) → row of the per-arch tables (`volta`, "
        "`ampere`, `hopper`, `blackwell`)"),
  TABLE("ll_max_bw_gbps", TRUE,
        "`llMaxBws`: `single_host` per row; `intel` and `amd` as `[2 hosts, 4+ hosts]`"),
  TABLE("per_channel_max_bw_gbps", TRUE,
        "`ring_ll128`, `tree_ll128`, `tree`, `nvls_tree`: per row, `[1 host, 2 hosts, 4+ hosts]` "
        "GB/s per channel"),
  TABLE("nvls_efficiency", TRUE, "per row"),
  TABLE("tree_correction", TRUE,
        "per protocol, 24 factors for 64 B … 256 MB (`treeCorrectionFactor`)"),
  FIXED("net_overhead_us", TRUE, overhead_schema, "`intel`, `amd`, `other` µs; `simple_multiplier`"),
  FIXED("bandwidth_factors", TRUE, factor_schema,
        "the named refinements of `ncclTopoTuneModel` (see comments in the file); optional, for "
        "older releases: `ring_ll128_one_rank_per_node` (Ring+LL128 factor when ppn < 2; default "
        "`ring_ll128`), `ring_ll_one_host_other` (Ring+LL factor on one host for collectives "
        "other than all_reduce and reduce; absent: `ring_ll`), `nvls_legacy_ratio` (NVLS before "
        "2.28: algbw = nCh × min(bwIntra, bwInter; halved for NVLSTree beyond 2 nodes) × this "
        "ratio, instead of the `nvls_efficiency` model)"),
  FIXED("channels", TRUE, channels_schema,
        "`max`: channels of the ring/tree graphs; `nvls`: NVLS channels (fabricsim divides a "
        "GPU's bandwidth among them)"),
  FIXED("p2p", TRUE, p2p_schema,
        "point-to-point chunk sizes (`nvl_chunk`, `net_chunk`) and `ll_threshold` (bytes per "
        "peer up to which send/recv uses LL)"),
  FIXED("p2p_schedule", FALSE, p2p_sched_schema,
        "absent: point-to-point ops keep the collective channels, with no per-channel network "
        "cap. NCCL's scheduling of send/recv across hosts (`src/coll/p2p-sched.h`): "
        "`net_peer_rule` `fixed` (2.18–2.19: `net_peer_channels` per network peer), `scale` "
        "(2.20–2.28: `net_peer_channels` halved while channels × ranks > p2p channels × "
        "`net_peer_scale`, at least one per NIC), `bandwidth` (2.29+: the NIC bandwidth over "
        "`per_channel_net_bw_gbps`, at least one per NIC, halved while channels × ⌈ranks / "
        "`work_per_batch`⌉ > p2p channels); `nvl_channels_per_link` (an NVLink peer: this × its "
        "NVLinks), `pci_peer_channels` (another peer on the host); `halve_min_across_hosts` "
        "(nChannelsMin halved by the ranks across hosts, 2.20+); `part_net`, `part_host` ([min, "
        "max] part size of an op, in p2p chunks); `per_channel_net_bw_gbps` "
        "(NCCL_P2P_PER_CHANNEL_NET_BW, 2.29's 14 GB/s: the most one channel moves over the "
        "network, used as a cap in every release)"),
  FIXED("ring_kernel", FALSE, ring_kernel_schema,
        "absent = 0: `local_copy_sm_share`, the speed of the ring kernel's one local copy per "
        "loop, as a fraction of one SM's share of the GPU's memory bandwidth (catalog "
        "`memory_bandwidth` × calibrated memory efficiency / `sms`); 0 makes the copy free"),
  FIXED("host_launch", FALSE, host_launch_schema,
        "absent = 0 (no floor): `launch_us`, the host's cost of issuing one GPU's collective "
        "(one kernel launch inside an NCCL group) in an nccl-tests iteration; a thread driving "
        "`-g N` GPUs issues N of them per iteration, which floors the iteration's time "
        "(`src/coll/launch.h`)"),
  FIXED("collnet_allgather_reducescatter", FALSE, collnet_agrs_schema,
        "absent: the release runs CollNet (SHARP) for all_reduce only; present (2.20+): "
        "CollNetDirect also runs all_gather and reduce_scatter when every rank of a host has a "
        "NIC of its own, with bus bandwidth = ranks per node × min(bwIntra, bwInter × "
        "`inter_factor`) × the factor interpolated between `one_rank_per_node` and "
        "`eight_ranks_per_node`"),
  TABLE("algorithms", FALSE,
        "`absent`, a list of NCCL algorithms the release does not have (the tuner never costs "
        "them; `PAT` before 2.23)"),
};
#undef TABLE
static const FsSchema top_schema = {"NCCL parameters", NULL, top_fields, G_N_ELEMENTS(top_fields)};

#define OFF(member) offsetof(FsNcclProto, member)
static const FsSchemaField proto_fields[] = {
  {.key = "buffer", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE, .offset = OFF(buffer),
   .required = TRUE, .doc = "bytes per connection (at least `steps`)"},
  {.key = "chunk_steps", .type = FS_SCHEMA_UINT, .offset = OFF(chunk_steps), .required = TRUE,
   .value_doc = "integer from 1 to `steps`", .doc = "slots per pipelined chunk"},
  {.key = "slice_steps", .type = FS_SCHEMA_UINT, .offset = OFF(slice_steps), .required = TRUE,
   .value_doc = "integer from 1 to `steps`",
   .doc = "slots per slice, the unit that moves (at most `chunk_steps`)"},
  {.key = "payload", .type = FS_SCHEMA_DOUBLE, .offset = OFF(payload), .required = TRUE,
   .min = "0", .max = "1", .doc = "payload bytes per wire byte (above 0)"},
  {.key = "max_threads", .type = FS_SCHEMA_UINT, .offset = OFF(max_threads), .required = TRUE,
   .min = "1", .max = "65536", .doc = "threads per block"},
  {.key = "thread_threshold", .type = FS_SCHEMA_UINT, .offset = OFF(thread_threshold),
   .required = TRUE, .min = "0", .max = "1048576",
   .doc = "bytes per thread under which NCCL drops channels"},
};
#undef OFF
static const FsSchema proto_schema = {"protocol", NULL, proto_fields, G_N_ELEMENTS(proto_fields)};

static const FsSchemaEntry schemas[] = {
  {"nccl.file", &top_schema},
  {"nccl.protocol", &proto_schema},
  {"nccl.steps", &steps_schema},
  {"nccl.net_overhead_us", &overhead_schema},
  {"nccl.bandwidth_factors", &factor_schema},
  {"nccl.channels", &channels_schema},
  {"nccl.p2p", &p2p_schema},
  {"nccl.p2p_schedule", &p2p_sched_schema},
  {"nccl.ring_kernel", &ring_kernel_schema},
  {"nccl.host_launch", &host_launch_schema},
  {"nccl.collnet_allgather_reducescatter", &collnet_agrs_schema},
};

const FsSchemaEntry *fs_nccl_params_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
}

/* Reads the NCCL parameter tables of root into p: the fixed tables through
 * the schema walker (each with its source:), then the tables keyed by
 * protocol, algorithm, hardware and architecture row (latencies, LL and
 * per-channel bandwidth caps, NVLS efficiency, tree corrections), the
 * checks that span fields, the p2p schedule and the algorithms a release
 * lacks.  FALSE with the error at the offending node. */
static gboolean load(FsNcclParams *p, const FsYamlNode *root, GError **error)
{
  /* The walk reads the tables with fixed keys into p (fixed_tables). */
  if (!fs_schema_read(&top_schema, root, p, NULL, error))
    return FALSE;
  p->version = g_strdup(fs_yaml_map_get(root, "nccl_version")->value);
  static const char *const fixed_tables[] = {"steps", "net_overhead_us", "bandwidth_factors",
                                             "channels", "p2p", "ring_kernel", "host_launch",
                                             "collnet_allgather_reducescatter"};
  for (guint i = 0; i < G_N_ELEMENTS(fixed_tables); i++) {
    const FsYamlNode *ft = fs_yaml_map_get(root, fixed_tables[i]);
    if (ft != NULL && !check_source(ft, fixed_tables[i], error))
      return FALSE;
  }
  p->collnet_agrs = fs_yaml_map_get(root, "collnet_allgather_reducescatter") != NULL;

  const FsYamlNode *t = get_table(root, "protocols", proto_names(), FS_PROTO_N, NULL, error);
  if (t == NULL)
    return FALSE;
  for (guint i = 0; i < FS_PROTO_N; i++) {
    const char *name = proto_names()[i];
    const FsYamlNode *m = fs_yaml_require_key(t, name, "protocols", error);
    FsNcclProto *pr = &p->proto[i];
    uint64_t cs, ss;
    /* The file's own steps bound the protocol's (the table cannot say). */
    if (m == NULL || !fs_schema_read(&proto_schema, m, pr, NULL, error) ||
        !get_uint(m, "chunk_steps", name, 1, p->steps, &cs, error) ||
        !get_uint(m, "slice_steps", name, 1, p->steps, &ss, error))
      return FALSE;
    if (pr->payload <= 0 || pr->buffer < p->steps) {
      fs_yaml_error(error, m, "protocol %s needs a payload fraction above 0 and a buffer of at least %u bytes",
                    name, p->steps);
      return FALSE;
    }
    if (ss > cs) {
      fs_yaml_error(error, fs_yaml_map_get(m, "slice_steps"),
                    "protocol %s: slice_steps (%" G_GUINT64_FORMAT ") must not exceed chunk_steps (%" G_GUINT64_FORMAT ")",
                    name, ss, cs);
      return FALSE;
    }
  }

  t = get_table(root, "base_latency_us", algo_names(), FS_NCCL_ALGO_N, NULL, error);
  if (t == NULL || !load_algo_proto(t, p->base_lat, "base_latency_us", error))
    return FALSE;
  t = get_table(root, "hw_latency_us", hw_names, FS_NCCL_HW_N, NULL, error);
  if (t == NULL)
    return FALSE;
  for (guint h = 0; h < FS_NCCL_HW_N; h++) {
    const FsYamlNode *m = fs_yaml_require_key(t, hw_names[h], "hw_latency_us", error);
    if (m == NULL || !fs_yaml_require_map(m, error) ||
        !fs_yaml_check_keys(m, algo_names(), hw_names[h], error) ||
        !load_algo_proto(m, p->hw_lat[h], hw_names[h], error))
      return FALSE;
  }

  t = get_table(root, "arch_rows", NULL, 0, NULL, error);
  if (t == NULL)
    return FALSE;
  p->arch_names = g_new0(char *, t->n + 1);
  p->arch_rows = g_new0(FsNcclRow, t->n + 1);
  for (guint i = 0; i < t->n; i++) {
    const char *arch = t->keys[i]->value, *row;
    if (strcmp(arch, "source") == 0)
      continue;
    if (!fs_yaml_get_string(t->values[i], &row, error))
      return FALSE;
    guint r;
    if (!fs_names_index(row_names, FS_NCCL_ROW_N, row, &r)) {
      fs_yaml_error(error, t->values[i],
                    "expected an architecture row (volta, ampere, hopper, blackwell), got \"%s\"", row);
      return FALSE;
    }
    p->arch_names[p->n_archs] = g_strdup(arch);
    p->arch_rows[p->n_archs++] = (FsNcclRow)r;
  }

  static const char *const ll_keys[] = {"single_host", "intel", "amd", NULL};
  t = get_table(root, "ll_max_bw_gbps", ll_keys, 3, NULL, error);
  if (t == NULL)
    return FALSE;
  const FsYamlNode *m = fs_yaml_require_key(t, "single_host", "ll_max_bw_gbps", error);
  if (m == NULL || !load_arch_rows(m, 1, p->ll_max_bw_single, "single_host", error))
    return FALSE;
  for (guint i = 0; i < 2; i++) {
    m = fs_yaml_require_key(t, ll_keys[1 + i], "ll_max_bw_gbps", error);
    if (m == NULL || !get_row(m, 2, p->ll_max_bw_multi[i], error))
      return FALSE;
  }

  static const char *const ch_keys[] = {"ring_ll128", "tree_ll128", "tree", "nvls_tree", NULL};
  t = get_table(root, "per_channel_max_bw_gbps", ch_keys, 4, NULL, error);
  if (t == NULL)
    return FALSE;
  double *ch_out[4] = {&p->ring_ll128_bw[0][0], &p->tree_ll128_bw[0][0], &p->tree_bw[0][0],
                       &p->nvls_tree_bw[0][0]};
  for (guint i = 0; i < 4; i++) {
    m = fs_yaml_require_key(t, ch_keys[i], "per_channel_max_bw_gbps", error);
    if (m == NULL || !load_arch_rows(m, 3, ch_out[i], ch_keys[i], error))
      return FALSE;
  }

  t = get_table(root, "nvls_efficiency", row_names, FS_NCCL_ROW_N, NULL, error);
  if (t == NULL)
    return FALSE;
  for (guint r = 0; r < FS_NCCL_ROW_N; r++)
    if (!get_number(t, row_names[r], "nvls_efficiency", 1.0, &p->nvls_eff[r], error))
      return FALSE;

  t = get_table(root, "tree_correction", proto_names(), FS_PROTO_N, NULL, error);
  if (t == NULL)
    return FALSE;
  for (guint i = 0; i < FS_PROTO_N; i++) {
    m = fs_yaml_require_key(t, proto_names()[i], "tree_correction", error);
    if (m == NULL || !get_row(m, FS_NCCL_TREE_CORR_N, p->tree_corr[i], error))
      return FALSE;
  }

  t = fs_yaml_map_get(root, "bandwidth_factors");
  if (fs_yaml_map_get(t, "ring_ll128_one_rank_per_node") == NULL)
    p->f_ring_ll128_one_ppn = p->f_ring_ll128;
  if (p->f_tree_ll_div <= 0 || p->pat_inter_div <= 0) {
    fs_yaml_error(error, fs_yaml_map_get(t, "tree_ll_divisor"), "expected tree_ll_divisor and pat_inter_divisor above 0");
    return FALSE;
  }

  t = fs_yaml_map_get(root, "p2p");
  if (p->p2p_nvl_chunk == 0 || p->p2p_net_chunk == 0) {
    fs_yaml_error(error, t, "p2p chunk sizes must be at least 1 byte");
    return FALSE;
  }

  t = fs_yaml_map_get(root, "p2p_schedule");
  if (t != NULL && !load_p2p_schedule(p, t, error))
    return FALSE;

  /* Optional: the algorithms a release lacks (PAT before 2.23). */
  if (fs_yaml_map_get(root, "algorithms") != NULL) {
    static const char *const al_keys[] = {"absent", NULL};
    t = get_table(root, "algorithms", al_keys, 1, NULL, error);
    if (t == NULL)
      return FALSE;
    const FsYamlNode *abs = fs_yaml_require_key(t, "absent", "algorithms", error);
    if (abs == NULL || !fs_yaml_require_seq(abs, error))
      return FALSE;
    for (guint i = 0; i < abs->n; i++) {
      const char *name;
      guint a;
      if (!fs_yaml_get_string(abs->values[i], &name, error))
        return FALSE;
      if (!fs_names_index(algo_names(), FS_NCCL_ALGO_N, name, &a)) {
        fs_yaml_error(error, abs->values[i],
                      "expected an NCCL algorithm (Tree, Ring, CollNetDirect, CollNetChain, NVLS, "
                      "NVLSTree, PAT), got \"%s\"", name);
        return FALSE;
      }
      p->algo_absent |= (guint64)1 << a;
    }
  }

  return TRUE;
}

static FsNcclParams *from_doc(FsYamlDoc *doc, const char *path, GError **error)
{
  const FsYamlNode *root = fs_yaml_doc_root(doc);
  if (root == NULL) {
    fs_set_error_at(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE, path, 1, 1,
                    "empty file; expected the NCCL parameter tables");
    return NULL;
  }
  FsNcclParams *p = g_new0(FsNcclParams, 1);
  p->file = g_strdup(path);
  if (!load(p, root, error)) {
    fs_nccl_params_free(p);
    return NULL;
  }
  return p;
}

FsNcclParams *fs_nccl_params_load(const char *path, GError **error)
{
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_file(path, error);
  return doc != NULL ? from_doc(doc, path, error) : NULL;
}

FsNcclParams *fs_nccl_params_load_string(const char *text, gssize len, const char *name,
                                         GError **error)
{
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_string(text, len, name, error);
  return doc != NULL ? from_doc(doc, name, error) : NULL;
}

char *fs_nccl_params_default_path(void)
{
  return g_build_filename(fs_datadir(FS_DATA_MODELS), "nccl", "nccl.yaml", NULL);
}

FsNcclParams *fs_nccl_params_load_default(GError **error)
{
  g_autofree char *path = fs_nccl_params_default_path();
  return fs_nccl_params_load(path, error);
}

void fs_nccl_params_free(FsNcclParams *p)
{
  if (p == NULL)
    return;
  g_free(p->file);
  g_free(p->version);
  g_strfreev(p->arch_names);
  g_free(p->arch_rows);
  g_free(p);
}

uint64_t fs_nccl_params_chunk_bytes(const FsNcclParams *p, FsCollProto proto)
{
  const FsNcclProto *pr = &p->proto[proto];
  uint64_t c = (uint64_t)((double)(pr->buffer / p->steps * pr->chunk_steps) * pr->payload);
  return MAX(c, 1);
}

uint64_t fs_nccl_params_slice_bytes(const FsNcclParams *p, FsCollProto proto)
{
  const FsNcclProto *pr = &p->proto[proto];
  uint64_t c = (uint64_t)((double)(pr->buffer / p->steps * pr->slice_steps) * pr->payload);
  return MAX(c, 1);
}

/* ---- releases --------------------------------------------------------------- */

/* "X.Y" of "X.Y", "X.Y.Z", "X.Y.Z-1" or "vX.Y…"; NULL when not one. */
static char *release_of(const char *v)
{
  if (v[0] == 'v')
    v++;
  guint a, b;
  int used = 0;
  if (sscanf(v, "%u.%u%n", &a, &b, &used) != 2 || a > 99 || b > 99 ||
      (v[used] != '\0' && v[used] != '.' && v[used] != '-' && v[used] != '+'))
    return NULL;
  return g_strdup_printf("%u.%u", a, b);
}

char *fs_nccl_params_release_of_code(guint code)
{
  if (code == 0)
    return NULL;
  /* NCCL_VERSION_CODE: X*10000 + Y*100 + Z from 2.9, X*1000 + Y*100 + Z before. */
  if (code >= 20900)
    return g_strdup_printf("%u.%u", code / 10000, code / 100 % 100);
  return g_strdup_printf("%u.%u", code / 1000, code / 100 % 10);
}

static int release_cmp(const void *a, const void *b)
{
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  guint xa = 0, xb = 0, ya = 0, yb = 0;
  sscanf(x, "%u.%u", &xa, &xb);
  sscanf(y, "%u.%u", &ya, &yb);
  return xa != ya ? (xa < ya ? -1 : 1) : xb != yb ? (xb < yb ? -1 : 1) : 0;
}

/* The default file's release, read from its nccl_version (NULL on error). */
static char *default_release(const char *path)
{
  g_autoptr(GError) e = NULL;
  g_autoptr(FsNcclParams) p = fs_nccl_params_load(path, &e);
  return p != NULL ? release_of(p->version) : NULL;
}

char **fs_nccl_params_known_versions(void)
{
  g_autofree char *def = fs_nccl_params_default_path();
  g_autofree char *dir = g_path_get_dirname(def);
  GPtrArray *out = g_ptr_array_new();
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  for (const char *name; d != NULL && (name = g_dir_read_name(d)) != NULL;) {
    if (!g_str_has_prefix(name, "nccl-") || !g_str_has_suffix(name, ".yaml"))
      continue;
    g_autofree char *mid = g_strndup(name + 5, strlen(name) - 5 - 5);
    char *r = release_of(mid);
    if (r != NULL && strcmp(r, mid) == 0)
      g_ptr_array_add(out, r);
    else
      g_free(r);
  }
  char *dr = default_release(def);
  if (dr != NULL && !g_ptr_array_find_with_equal_func(out, dr, g_str_equal, NULL))
    g_ptr_array_add(out, dr);
  else
    g_free(dr);
  g_ptr_array_sort(out, release_cmp);
  g_ptr_array_add(out, NULL);
  return (char **)g_ptr_array_free(out, FALSE);
}

char *fs_nccl_params_version_path(const char *version, const char *what, GError **error)
{
  g_return_val_if_fail(version != NULL && what != NULL, NULL);
  g_autofree char *rel = NULL;
  if (version[0] != '\0' && version[strspn(version, "0123456789")] == '\0') {
    guint64 code = g_ascii_strtoull(version, NULL, 10);
    rel = code > 0 && code < 1000000 ? fs_nccl_params_release_of_code((guint)code) : NULL;
  } else {
    rel = release_of(version);
  }
  g_autofree char *def = fs_nccl_params_default_path();
  g_autofree char *dir = g_path_get_dirname(def);
  if (rel != NULL) {
    g_autofree char *name = g_strdup_printf("nccl-%s.yaml", rel);
    char *path = g_build_filename(dir, name, NULL);
    if (g_file_test(path, G_FILE_TEST_EXISTS))
      return path;
    g_free(path);
    g_autofree char *dr = default_release(def);
    if (dr != NULL && strcmp(dr, rel) == 0)
      return g_steal_pointer(&def);
  }
  g_auto(GStrv) known = fs_nccl_params_known_versions();
  g_autofree char *list = g_strjoinv(", ", known);
  g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE,
              "%s \"%s\": %s; known releases (%s): %s", what, version,
              rel == NULL ? "not an NCCL version (expected X.Y, X.Y.Z or a version code like 22105)"
                          : "no parameter file for this release",
              dir, known[0] != NULL ? list : "none");
  return NULL;
}

FsNcclParams *fs_nccl_params_load_version(const char *version, const char *what, GError **error)
{
  g_autofree char *path = fs_nccl_params_version_path(version, what, error);
  return path != NULL ? fs_nccl_params_load(path, error) : NULL;
}

/* The value of environment variable var as an integer from lo to hi in *out; TRUE when unset
 * or empty (out untouched), FALSE with an error naming var for anything else. */
static gboolean env_uint(const char *var, guint64 lo, guint64 hi, guint64 *out, gboolean *set,
                         GError **error)
{
  const char *s = g_getenv(var);
  *set = FALSE;
  if (s == NULL || *s == '\0')
    return TRUE;
  if (!g_ascii_string_to_unsigned(s, 10, lo, hi, out, NULL)) {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_PARSE,
                "%s=\"%s\": expected a whole number from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT,
                var, s, lo, hi);
    return FALSE;
  }
  *set = TRUE;
  return TRUE;
}

gboolean fs_nccl_params_apply_env(FsNcclParams *p, GError **error)
{
  guint64 v;
  gboolean set;
  if (!env_uint("NCCL_P2P_NET_CHUNKSIZE", 1, (guint64)1 << 30, &v, &set, error))
    return FALSE;
  if (set)
    p->p2p_net_chunk = v;
  if (!env_uint("NCCL_P2P_NVL_CHUNKSIZE", 1, (guint64)1 << 30, &v, &set, error))
    return FALSE;
  if (set)
    p->p2p_nvl_chunk = v;
  if (!env_uint("NCCL_P2P_LL_THRESHOLD", 0, (guint64)1 << 30, &v, &set, error))
    return FALSE;
  if (set)
    p->p2p_ll_threshold = v;
  if (!env_uint("NCCL_NCHANNELS_PER_NET_PEER", 1, 64, &v, &set, error))
    return FALSE;
  if (set && p->p2p.on)
    p->p2p.net_rule = FS_NCCL_P2P_FIXED, p->p2p.net_channels = (guint)v;
  if (!env_uint("NCCL_P2P_PER_CHANNEL_NET_BW", 1, 100000, &v, &set, error))
    return FALSE;
  if (set && p->p2p.on)
    p->p2p.channel_net_bw = (double)v;
  return TRUE;
}
