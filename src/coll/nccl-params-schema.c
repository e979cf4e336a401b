/* nccl-params-schema.c — the tables of a file in models/nccl/ as
 * schemas (util/schema.h), and the names they key by (algorithms, hardware
 * classes, architecture rows, point-to-point rules).  The loader that
 * walks them is nccl-params.c; nccl-params-private.h joins the two. */
#include "coll/nccl-params-private.h"

#include "coll/comm.h"
#include "util/names.h"

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


FS_NAMES_DEFINE_NAME(FsNcclHw, fs_nccl_hw, hw_names, FS_NCCL_HW_N)

static const char *const algo_names[FS_NCCL_ALGO_N + 1] = {
#define X(id, name) name,
  FS_NCCL_ALGOS(X)
#undef X
  NULL,
};

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

/* ---- the schema ------------------------------------------------------------- */

/* Every table of a parameters file is declared here (util/schema.h) and
 * read by one walk into FsNcclParams; models/nccl/README.md prints these
 * tables (tools/gen-schema-docs).  The tables keyed by NCCL's algorithms,
 * protocols, hardware classes and architecture rows are expansions of the
 * X-macro name lists, one field per name at its array index; a table
 * nested in another (a hardware class's algorithms, a protocol) is read
 * into the record at its field's offset, so one table serves every
 * element.  What a table cannot say is checked after the walk (load): a
 * protocol's steps bounded by the file's `steps`, part sizes in order. */
#define POFF(m) offsetof(FsNcclParams, m)
/* The largest number a row of the tables holds. */
#define BIG "1e12"
#define SOURCE                                                                               \
  {.key = "source", .type = FS_SCHEMA_STRING, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,   \
   .nonempty = TRUE, .doc = "where the numbers come from (not empty)"}
#define NUM(k, off, hi, d)                                                                   \
  {.key = k, .type = FS_SCHEMA_DOUBLE, .offset = off, .required = TRUE, .min = "0", .max = hi, \
   .doc = d}
#define OPT_NUM(k, off, hi, d)                                                               \
  {.key = k, .type = FS_SCHEMA_DOUBLE, .offset = off, .min = "0", .max = hi, .doc = d}
/* Above 0: a divisor. */
#define POS_NUM(k, off, hi, d)                                                               \
  {.key = k, .type = FS_SCHEMA_DOUBLE, .offset = off, .required = TRUE, .min = "0",            \
   .min_open = TRUE, .max = hi, .doc = d}
/* A row of n numbers from 0 to BIG. */
#define ROW(k, off, n, d)                                                                    \
  {.key = k, .type = FS_SCHEMA_DOUBLE, .offset = off, .required = TRUE, .min = "0",            \
   .max = BIG, .count = n, .doc = d}
#define COUNT(k, off, lo, hi, d)                                                             \
  {.key = k, .type = FS_SCHEMA_UINT, .offset = off, .required = TRUE, .min = lo, .max = hi,    \
   .doc = d}
/* A nested table read into the record at off (FS_SCHEMA_NOWHERE: the same record). */
#define NESTED(k, off, sch, req, vdoc, d)                                                    \
  {.key = k, .type = FS_SCHEMA_MAP, .offset = off, .required = req, .sub = &sch,               \
   .value_doc = vdoc, .doc = d}
#define SCHEMA(var, name, fields) static const FsSchema var = {name, NULL, fields, G_N_ELEMENTS(fields)}

/* steps, net_overhead_us, bandwidth_factors, channels, p2p, p2p_schedule,
 * ring_kernel, host_launch: fixed keys. */
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
  POS_NUM("tree_ll_divisor", POFF(f_tree_ll_div), "1000", "Tree+LL divisor"),
  NUM("tree_ll128_one_host", POFF(f_tree_ll128_one_host), "1000", "Tree+LL128 on one host"),
  NUM("tree_pattern", POFF(f_tree_pattern), "1000", "Tree pattern"),
  NUM("pat", POFF(f_pat), "1000", "PAT"),
  NUM("collnet_sm90", POFF(f_collnet_sm90), "1000", "CollNet on sm90"),
  NUM("ring_plateau_pre_sm80", POFF(f_ring_plateau_old), "1000", "Ring plateau before sm80"),
  NUM("ring_plateau", POFF(f_ring_plateau), "1000", "Ring plateau"),
  NUM("collnet_arity_us", POFF(collnet_arity_us), "1000", "CollNet µs per arity"),
  NUM("pat_rank_us", POFF(pat_rank_us), "1000", "PAT µs per rank"),
  POS_NUM("pat_inter_divisor", POFF(pat_inter_div), "1000", "PAT inter-node divisor"),
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
  {.key = "nvls_blackwell_one_node", .type = FS_SCHEMA_UINT, .offset = POFF(nvls_channels_sm100[0]),
   .min = "0", .max = "64",
   .doc = "NVLS channels on Blackwell within one NVLink domain (NVLS_NCHANNELS_SM100_NVL; absent or 0: `nvls`)"},
  {.key = "nvls_blackwell_multi_node", .type = FS_SCHEMA_UINT, .offset = POFF(nvls_channels_sm100[1]),
   .min = "0", .max = "64",
   .doc = "NVLS channels on Blackwell across NVLink domains (NVLS_NCHANNELS_SM100; absent or 0: `nvls`)"},
  COUNT("nvls_arity", POFF(nvls_arity), "1", "64", "NCCL_MAX_NVLS_ARITY: the most NVLS heads"),
  COUNT("direct_heads", POFF(direct_heads), "0", "64",
        "NCCL_MAX_DIRECT_ARITY + 1: the most CollNetDirect heads (0: before 2.22, the ring graph's channels)"),
};
SCHEMA(channels_schema, "channels", channels_fields);

#define CHUNK(k, off, lo, d)                                                                 \
  {.key = k, .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE, .offset = off,               \
   .required = TRUE, .min = lo, .doc = d}
static const FsSchemaField p2p_fields[] = {
  SOURCE, CHUNK("nvl_chunk", POFF(p2p_nvl_chunk), "1 B", "p2p chunk over NVLink"),
  CHUNK("net_chunk", POFF(p2p_net_chunk), "1 B", "p2p chunk over the network"),
  CHUNK("ll_threshold", POFF(p2p_ll_threshold), NULL,
        "bytes per peer up to which send/recv uses LL"),
};
SCHEMA(p2p_schema, "p2p", p2p_fields);

#define SOFF(m) POFF(p2p.m)
/* A [min, max] part size: both above 0 (min <= max: checked by load). */
#define PART(k, off, d)                                                                      \
  {.key = k, .type = FS_SCHEMA_DOUBLE, .offset = off, .required = TRUE, .min = "0",            \
   .min_open = TRUE, .max = BIG, .count = 2, .doc = d}
static const FsSchemaField p2p_sched_fields[] = {
  SOURCE,
  {.key = "net_peer_rule", .type = FS_SCHEMA_ENUM, .offset = SOFF(net_rule), .required = TRUE,
   .names = p2p_rule_names, .doc = "NCCL's rule for a network peer's channels"},
  COUNT("net_peer_channels", SOFF(net_channels), "1", "64", "channels per network peer"),
  COUNT("net_peer_scale", SOFF(net_scale), "1", "64", "`scale`: the halving threshold"),
  {.key = "per_channel_net_bw_gbps", .type = FS_SCHEMA_DOUBLE, .offset = SOFF(channel_net_bw),
   .required = TRUE, .min = "0", .min_open = TRUE, .max = "100000",
   .doc = "what NCCL takes one channel to move over the network (NCCL_P2P_PER_CHANNEL_NET_BW), GB/s"},
  COUNT("work_per_batch", SOFF(work_per_batch), "1", "64",
        "peers per work batch: the `bandwidth` rule's divisor and the size of a group of "
        "`shared_net_channels`"),
  COUNT("nvl_channels_per_link", SOFF(nvl_channels_per_link), "1", "64",
        "an NVLink peer: this × its NVLinks"),
  COUNT("pci_peer_channels", SOFF(pci_channels), "1", "64", "another peer on the host"),
  {.key = "halve_min_across_hosts", .type = FS_SCHEMA_BOOL, .offset = SOFF(halve_min_net),
   .required = TRUE, .doc = "nChannelsMin halved by the ranks across hosts (2.20+)"},
  {.key = "shared_net_channels", .type = FS_SCHEMA_BOOL, .offset = SOFF(shared_net),
   .doc = "a rank's operations to the ranks of one remote group of `work_per_batch` local "
          "ranks share that group's channels, each channel moving at most the per-channel "
          "network rate in each direction (alltoall, gather, scatter across hosts); absent: "
          "false, every operation on channels of its own"},
  {.key = "serial_net_posts", .type = FS_SCHEMA_BOOL, .offset = SOFF(serial_posts),
   .doc = "a proxy posts its network operations one after the other, each at "
          "`net_overhead_us` (alltoall, sendrecv across hosts); absent: false"},
  PART("part_net", SOFF(part_net), "`[min, max]` part size of an op across hosts, in p2p chunks "
                                   "(min ≤ max)"),
  PART("part_host", SOFF(part_host), "`[min, max]` part size of an op on the host, in p2p "
                                     "chunks (min ≤ max)"),
  {.key = "net_chunk_below", .type = FS_SCHEMA_DOUBLE, .offset = SOFF(chunk_below), .min = "0",
   .max = BIG, .count = 2,
   .doc = "`[a, b]`: a Simple op across hosts of fewer bytes than a p2p chunks moves chunks "
          "of `net_chunk` / the first `net_chunk_divide`, below b of `net_chunk` / the second "
          "(NCCL's \"Tune chunk size for the network\"); absent: the p2p chunk"},
  {.key = "net_chunk_divide", .type = FS_SCHEMA_DOUBLE, .offset = SOFF(chunk_div), .min = "0",
   .max = BIG, .count = 2, .doc = "`[x, y]`: the divisors of `net_chunk_below`"},
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

static const FsSchemaField coll_net_channel_fields[] = {
  SOURCE, NUM("bw_gbps", POFF(coll_channel_net_bw), "100000",
              "the most one channel of a collective moves through one network connection, GB/s"),
  OPT_NUM("ring_step_latencies", POFF(coll_ring_step_lats), "100",
          "NCCL network step latencies (Ring/Simple) a ring's connection across hosts idles "
          "between consecutive steps; absent = 0"),
  OPT_NUM("ring_step_host_excess", POFF(coll_ring_step_host_excess), "100",
          "times NCCL's host excess of a ring step across hosts (its per-step latency, "
          "max(NVLink hw latency, net_overhead_us x simple_multiplier), less the NVLink hw "
          "latency) that connection also idles between consecutive steps; absent = 0"),
  OPT_NUM("ring_serial_sends", POFF(coll_ring_serial_sends), "100",
          "times NCCL's network post overhead (net_overhead_us) a Ring/LL or Ring/LL128 step "
          "across hosts costs per send beyond the first that one proxy posts for it (its "
          "channels over the host's NICs); absent = 0"),
  OPT_NUM("tree_step_posts", POFF(coll_tree_step_posts), "100",
          "network posts per chunk and channel that the proxy of a tree's GPU facing the "
          "network makes, one after the other for the channels it serves, each "
          "net_overhead_us: a tree's connection across hosts idles that long between its "
          "chunks; absent = 0"),
};
SCHEMA(coll_net_channel_schema, "coll_net_channel", coll_net_channel_fields);

static const FsSchemaField p2p_net_channel_fields[] = {
  SOURCE, NUM("bw_gbps", POFF(p2p_channel_net_rate), "100000",
              "the most one channel of a point-to-point plan moves across hosts, GB/s"),
};
SCHEMA(p2p_net_channel_schema, "p2p_net_channel", p2p_net_channel_fields);

static const FsSchemaField tree_ll128_chunk_fields[] = {
  SOURCE,
  NUM("ppn_steps", POFF(tree_ll128_ppn_steps), "100",
      "steps per rank of a node in NCCL's nstepsLL128 = 1 + log2(nodes) + this × ranks per node"),
  ROW("chunks", POFF(tree_ll128_chunks), 2,
      "`[first, second]`: chunks per channel, × nstepsLL128 / ranks per node, below which each "
      "round halves the chunk"),
  ROW("floor", POFF(tree_ll128_floor), 2,
      "`[first, second]` bytes: a round halves the chunk only while it is above this"),
  POS_NUM("grain", POFF(tree_ll128_grain), "1048576",
          "bytes: the chunk is rounded down to a multiple of it (ncclProtoGrainSize of LL128)"),
};
SCHEMA(tree_ll128_chunk_schema, "tree_ll128_chunk", tree_ll128_chunk_fields);

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

/* protocols: one FsNcclProto per protocol name. */
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
   .min = "0", .min_open = TRUE, .max = "1", .doc = "payload bytes per wire byte"},
  {.key = "max_threads", .type = FS_SCHEMA_UINT, .offset = OFF(max_threads), .required = TRUE,
   .min = "1", .max = "65536", .doc = "threads per block"},
  {.key = "thread_threshold", .type = FS_SCHEMA_UINT, .offset = OFF(thread_threshold),
   .required = TRUE, .min = "0", .max = "1048576",
   .doc = "bytes per thread under which NCCL drops channels"},
};
#undef OFF
SCHEMA(proto_schema, "protocol", proto_fields);

static const FsSchemaField protocols_fields[] = {
  SOURCE,
#define X(id, name)                                                                          \
  NESTED(name, FS_PROTO_##id * sizeof(FsNcclProto), proto_schema, TRUE, "table `nccl.protocol`", \
         "the " name " protocol"),
  FS_COLL_PROTOS(X)
#undef X
};
SCHEMA(protocols_schema, "protocols", protocols_fields);

/* base_latency_us and each hardware class of hw_latency_us: per algorithm,
 * [LL, LL128, Simple] µs (a double[FS_NCCL_ALGO_N][FS_PROTO_N]). */
#define ALGO_ROW(id, name)                                                                   \
  ROW(name, FS_NCCL_ALGO_##id * sizeof(double[FS_PROTO_N]), FS_PROTO_N,                      \
      "`[LL, LL128, Simple]` µs for " name),
static const FsSchemaField base_lat_fields[] = {SOURCE, FS_NCCL_ALGOS(ALGO_ROW)};
SCHEMA(base_lat_schema, "base_latency_us", base_lat_fields);
static const FsSchemaField algo_lat_fields[] = {FS_NCCL_ALGOS(ALGO_ROW)};
#undef ALGO_ROW
/* One table per class, for its name in messages ("missing key "PAT" in NVLINK"). */
static const FsSchema hw_class_schemas[FS_NCCL_HW_N] = {
#define X(id, name) [FS_NCCL_HW_##id] = {name, NULL, algo_lat_fields, G_N_ELEMENTS(algo_lat_fields)},
  FS_NCCL_HWS(X)
#undef X
};
static const FsSchemaField hw_lat_fields[] = {
  SOURCE,
#define X(id, name)                                                                          \
  NESTED(name, FS_NCCL_HW_##id * sizeof(double[FS_NCCL_ALGO_N][FS_PROTO_N]),                  \
         hw_class_schemas[FS_NCCL_HW_##id], TRUE, "table `nccl.hw_class`",                    \
         "the " name " latencies per algorithm"),
  FS_NCCL_HWS(X)
#undef X
};
SCHEMA(hw_lat_schema, "hw_latency_us", hw_lat_fields);

/* arch_rows: open keys, the GPU architectures, each naming its row. */
static const FsSchemaField arch_rows_fields[] = {
  SOURCE,
  {.key = "architecture", .any_key = TRUE, .type = FS_SCHEMA_ENUM,
   .offset = FS_SCHEMA_NOWHERE, .names = row_names, .label = "architecture row",
   .doc = "a GPU architecture as the catalog names it (`hopper`, `ada`, …): the row of the "
          "per-architecture tables it uses"},
};
SCHEMA(arch_rows_schema, "arch_rows", arch_rows_fields);

/* Tables keyed by architecture row: one number (GB/s, or a ratio up to
 * hi), or a row of n numbers. */
#define ARCH_NUM(id, name)                                                                   \
  NUM(name, FS_NCCL_ROW_##id * sizeof(double), BIG, "GB/s on one host, " name " row"),
static const FsSchemaField ll_single_fields[] = {FS_NCCL_ARCH_ROWS(ARCH_NUM)};
#undef ARCH_NUM
SCHEMA(ll_single_schema, "single_host", ll_single_fields);

static const FsSchemaField ll_max_fields[] = {
  SOURCE,
  NESTED("single_host", POFF(ll_max_bw_single), ll_single_schema, TRUE,
         "table `nccl.ll_single_host`", "one host: GB/s by architecture row"),
  ROW("intel", POFF(ll_max_bw_multi[0]), 2, "Intel hosts: `[2 hosts, 4+ hosts]` GB/s"),
  ROW("amd", POFF(ll_max_bw_multi[1]), 2, "AMD hosts: `[2 hosts, 4+ hosts]` GB/s"),
};
SCHEMA(ll_max_schema, "ll_max_bw_gbps", ll_max_fields);

#define ARCH_ROW3(id, name)                                                                  \
  ROW(name, FS_NCCL_ROW_##id * sizeof(double[3]), 3,                                         \
      "`[1 host, 2 hosts, 4+ hosts]` GB/s per channel, " name " row"),
static const FsSchemaField per_ch_row_fields[] = {FS_NCCL_ARCH_ROWS(ARCH_ROW3)};
#undef ARCH_ROW3
/* The four caps, each a table of rows; named for messages. */
#define PER_CH_CAPS(X)                                                                       \
  X(0, "ring_ll128", ring_ll128_bw, "Ring with LL128 (`perChMaxRingLL128Bws`)")              \
  X(1, "tree_ll128", tree_ll128_bw, "Tree with LL128 (`perChMaxTreeLL128Bws`)")              \
  X(2, "tree", tree_bw, "Tree (`perChMaxTreeBws`)")                                           \
  X(3, "nvls_tree", nvls_tree_bw, "NVLSTree (`perChMaxNVLSTreeBws`)")
static const FsSchema per_ch_schemas[] = {
#define X(i, name, member, d) [i] = {name, NULL, per_ch_row_fields, G_N_ELEMENTS(per_ch_row_fields)},
  PER_CH_CAPS(X)
#undef X
};
static const FsSchemaField per_ch_fields[] = {
  SOURCE,
#define X(i, name, member, d)                                                                \
  NESTED(name, POFF(member), per_ch_schemas[i], TRUE, "table `nccl.per_channel_rows`", d),
  PER_CH_CAPS(X)
#undef X
};
SCHEMA(per_ch_schema, "per_channel_max_bw_gbps", per_ch_fields);

#define ARCH_EFF(id, name) NUM(name, FS_NCCL_ROW_##id * sizeof(double), "1", name " row"),
static const FsSchemaField nvls_eff_fields[] = {SOURCE, FS_NCCL_ARCH_ROWS(ARCH_EFF)};
#undef ARCH_EFF
SCHEMA(nvls_eff_schema, "nvls_efficiency", nvls_eff_fields);
#define ARCH_NVT(id, name) NUM(name, FS_NCCL_ROW_##id * sizeof(double), "100000", name " row, GB/s per head"),
static const FsSchemaField nvls_tree_kernel_fields[] = {SOURCE, FS_NCCL_ARCH_ROWS(ARCH_NVT)};
#undef ARCH_NVT
SCHEMA(nvls_tree_kernel_schema, "nvls_tree_kernel", nvls_tree_kernel_fields);

static const FsSchemaField collnet_chain_fields[] = {
  SOURCE,
  {.key = "chunk_max", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE,
   .offset = POFF(collnet_chain_chunk_max), .required = TRUE, .min = "1 B",
   .doc = "the largest chunk (NCCL: min(this, a Simple buffer step))"},
  ROW("chunk_loops", POFF(collnet_chain_chunk_loops), 3,
      "`[a, b, c]`: the chunk halves while a channel holds fewer than ranks per node × this many "
      "chunks, in three passes"),
  ROW("chunk_floor", POFF(collnet_chain_chunk_floor), 3,
      "`[a, b, c]` bytes: each pass halves only a chunk above this"),
  NUM("kernel_ratio", POFF(collnet_chain_ratio), "1000",
      "a channel moves at most bwIntra × this of algorithm bandwidth (0: no cap)"),
};
SCHEMA(collnet_chain_schema, "collnet_chain", collnet_chain_fields);

#define PROTO_CORR(id, name)                                                                 \
  ROW(name, FS_PROTO_##id * sizeof(double[FS_NCCL_TREE_CORR_N]), FS_NCCL_TREE_CORR_N,       \
      name ": factors for 64 B, 128 B, … 256 MB"),
static const FsSchemaField tree_corr_fields[] = {SOURCE, FS_COLL_PROTOS(PROTO_CORR)};
#undef PROTO_CORR
SCHEMA(tree_corr_schema, "tree_correction", tree_corr_fields);

static const FsSchemaField algorithms_fields[] = {
  SOURCE,
  {.key = "absent", .type = FS_SCHEMA_SET, .offset = POFF(algo_absent), .required = TRUE,
   .names = algo_names, .label = "NCCL algorithm",
   .doc = "the NCCL algorithms the release does not have"},
};
SCHEMA(algorithms_schema, "algorithms", algorithms_fields);

#define TABLE(k, req, sch, off, text) NESTED(k, off, sch, req, "table `nccl." k "`", text)
static const FsSchemaField top_fields[] = {
  {.key = "nccl_version", .type = FS_SCHEMA_STRING, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .doc = "the NCCL release the numbers are from; printed in headers and `explain`"},
  TABLE("steps", TRUE, steps_schema, FS_SCHEMA_NOWHERE,
        "`value`: NCCL_STEPS, buffer slots per connection (1 to 64)"),
  TABLE("protocols", TRUE, protocols_schema, POFF(proto),
        "for `LL`, `LL128`, `Simple`: a protocol table (`nccl.protocol`)"),
  TABLE("base_latency_us", TRUE, base_lat_schema, POFF(base_lat),
        "`baseLatencies`: per algorithm a list `[LL, LL128, Simple]` in µs"),
  TABLE("hw_latency_us", TRUE, hw_lat_schema, POFF(hw_lat),
        "`hwLatencies`: for `NVLINK`, `PCI`, `NET`, the same per-algorithm lists"),
  TABLE("arch_rows", TRUE, arch_rows_schema, FS_SCHEMA_NOWHERE,
        "GPU architecture name (as in the catalog) → row of the per-arch tables (`volta`, "
        "`ampere`, `hopper`, `blackwell`)"),
  TABLE("ll_max_bw_gbps", TRUE, ll_max_schema, FS_SCHEMA_NOWHERE,
        "`llMaxBws`: `single_host` per row; `intel` and `amd` as `[2 hosts, 4+ hosts]`"),
  TABLE("per_channel_max_bw_gbps", TRUE, per_ch_schema, FS_SCHEMA_NOWHERE,
        "`ring_ll128`, `tree_ll128`, `tree`, `nvls_tree`: per row, `[1 host, 2 hosts, 4+ hosts]` "
        "GB/s per channel"),
  TABLE("nvls_efficiency", TRUE, nvls_eff_schema, POFF(nvls_eff), "per row"),
  TABLE("tree_correction", TRUE, tree_corr_schema, POFF(tree_corr),
        "per protocol, 24 factors for 64 B … 256 MB (`treeCorrectionFactor`)"),
  TABLE("net_overhead_us", TRUE, overhead_schema, FS_SCHEMA_NOWHERE,
        "`intel`, `amd`, `other` µs; `simple_multiplier`"),
  TABLE("bandwidth_factors", TRUE, factor_schema, FS_SCHEMA_NOWHERE,
        "the named refinements of `ncclTopoTuneModel` (see comments in the file); optional, for "
        "older releases: `ring_ll128_one_rank_per_node` (Ring+LL128 factor when ppn < 2; default "
        "`ring_ll128`), `ring_ll_one_host_other` (Ring+LL factor on one host for collectives "
        "other than all_reduce and reduce; absent: `ring_ll`), `nvls_legacy_ratio` (NVLS before "
        "2.28: algbw = nCh × min(bwIntra, bwInter; halved for NVLSTree beyond 2 nodes) × this "
        "ratio, instead of the `nvls_efficiency` model)"),
  TABLE("channels", TRUE, channels_schema, FS_SCHEMA_NOWHERE,
        "`max`: channels of the ring/tree graphs; `nvls`: NVLS channels (fabricsim divides a "
        "GPU's bandwidth among them); `nvls_arity` (NCCL_MAX_NVLS_ARITY) and `direct_heads` "
        "(NCCL_MAX_DIRECT_ARITY + 1): the most heads, one channel each, of the NVLS and "
        "CollNetDirect graphs the tuner prices; optional `nvls_blackwell_one_node` and "
        "`nvls_blackwell_multi_node`: NVLS channels on Blackwell (compute capability 10.0+) "
        "within one NVLink domain and across domains (NCCL 2.25+; absent: `nvls`)"),
  TABLE("p2p", TRUE, p2p_schema, FS_SCHEMA_NOWHERE,
        "point-to-point chunk sizes (`nvl_chunk`, `net_chunk`) and `ll_threshold` (bytes per "
        "peer up to which send/recv uses LL)"),
  TABLE("p2p_schedule", FALSE, p2p_sched_schema, FS_SCHEMA_NOWHERE,
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
        "(NCCL_P2P_PER_CHANNEL_NET_BW, 2.29's 14 GB/s: what NCCL takes one channel to move over "
        "the network, for the `bandwidth` rule; also the per-channel cap when the file has no "
        "`p2p_net_channel` table); `shared_net_channels` (a rank's operations to one remote "
        "group of `work_per_batch` local ranks share that group's channels: alltoall, gather "
        "and scatter across hosts)"),
  TABLE("ring_kernel", FALSE, ring_kernel_schema, FS_SCHEMA_NOWHERE,
        "absent = 0: `local_copy_sm_share`, the speed of the ring kernel's one local copy per "
        "loop, as a fraction of one SM's share of the GPU's memory bandwidth (catalog "
        "`memory_bandwidth` × calibrated memory efficiency / `sms`); 0 makes the copy free"),
  TABLE("host_launch", FALSE, host_launch_schema, FS_SCHEMA_NOWHERE,
        "absent = 0 (no floor): `launch_us`, the host's cost of issuing one GPU's collective "
        "(one kernel launch inside an NCCL group) in an nccl-tests iteration; a thread driving "
        "`-g N` GPUs issues N of them per iteration, which floors the iteration's time "
        "(`src/coll/launch.h`)"),
  TABLE("coll_net_channel", FALSE, coll_net_channel_schema, FS_SCHEMA_NOWHERE,
        "absent = 0 (no cap): `bw_gbps`, the most one channel of a collective (one thread block "
        "and its network connection) moves across hosts: every connection of a collective's plan "
        "that crosses hosts runs at most at it when the plan spans several NVLink domains "
        "(`src/collrun/exec-params.c`); `ring_step_latencies` (absent = 0): a Ring/Simple "
        "plan's connection across hosts idles that many of NCCL's network step latencies "
        "(Ring/Simple `interLat`) between two consecutive ring steps; `ring_step_host_excess` "
        "(absent = 0): and that many of what the host's network post overhead adds to NCCL's "
        "per-step ring latency (`net_overhead_us` of the CPU vendor × `simple_multiplier` "
        "beyond the NVLink hw latency); `ring_serial_sends` (absent = 0): a Ring/LL or "
        "Ring/LL128 step across hosts costs that many of the network post overhead per send "
        "beyond the first that one proxy posts for it (`fs_coll_ring_proxy_sends_us`); "
        "`tree_step_posts` (absent = 0): a tree plan's connection across hosts idles that many "
        "posts × the channels of a proxy × the network post overhead between two consecutive "
        "chunks (`fs_coll_tree_proxy_posts_us`)"),
  TABLE("p2p_net_channel", FALSE, p2p_net_channel_schema, FS_SCHEMA_NOWHERE,
        "absent: `p2p_schedule`'s `per_channel_net_bw_gbps`: `bw_gbps`, the most one channel of a "
        "point-to-point plan (sendrecv, alltoall, gather, scatter, `train` sends) moves across "
        "hosts: every network transfer of such a plan runs at most at it, and a network peer at "
        "most at its channels × it (`src/coll/p2p-sched.h`)"),
  TABLE("nvls_tree_kernel", FALSE, nvls_tree_kernel_schema, POFF(nvls_tree_exec_bw),
        "absent = 0 (no cap), per architecture row (0: none): the most busbw NCCL's NVLSTree "
        "kernel moves per NVLS head, GB/s; the executed nvls_tree plan's flows are capped so "
        "that its busbw stays under heads × this (`src/collrun/exec-params.c`)"),
  TABLE("tree_ll128_chunk", FALSE, tree_ll128_chunk_schema, FS_SCHEMA_NOWHERE,
        "absent: Tree/LL128 runs the protocol's chunk at every size. NCCL's Tree/LL128 chunk "
        "for small sizes (`src/enqueue.cc` `nstepsLL128`; `src/coll/tuner.h` "
        "`fs_coll_tree_ll128_chunk`): `ppn_steps`, `chunks`, `floor`, `grain`"),
  TABLE("collnet_chain", FALSE, collnet_chain_schema, FS_SCHEMA_NOWHERE,
        "absent: collnet_chain runs in Simple's slices with no per-channel cap. NCCL's "
        "CollNetChain as it runs (`src/enqueue.cc`, `src/graph/tuning.cc`): the chunk is "
        "min(`chunk_max`, a Simple buffer step), halved while bytes / (channels × chunk) < ranks "
        "per node × `chunk_loops[i]` and chunk > `chunk_floor[i]` for each i in turn, one chunk "
        "per buffer step; every flow of the executed plan moves at most bwIntra × "
        "`kernel_ratio`, the per-channel algorithm bandwidth NCCL prices "
        "(`src/collrun/exec-params.c`)"),
  TABLE("collnet_allgather_reducescatter", FALSE, collnet_agrs_schema, FS_SCHEMA_NOWHERE,
        "absent: the release runs CollNet (SHARP) for all_reduce only; present (2.20+): "
        "CollNetDirect also runs all_gather and reduce_scatter when every rank of a host has a "
        "NIC of its own, with bus bandwidth = ranks per node × min(bwIntra, bwInter × "
        "`inter_factor`) × the factor interpolated between `one_rank_per_node` and "
        "`eight_ranks_per_node`"),
  TABLE("algorithms", FALSE, algorithms_schema, FS_SCHEMA_NOWHERE,
        "`absent`, a list of NCCL algorithms the release does not have (the tuner never costs "
        "them; `PAT` before 2.23)"),
};
#undef TABLE
const FsSchema fs_nccl_params_file_schema = {"NCCL parameters", NULL, top_fields,
                                              G_N_ELEMENTS(top_fields)};

static const FsSchemaEntry schemas[] = {
  {"nccl.file", &fs_nccl_params_file_schema},
  {"nccl.steps", &steps_schema},
  {"nccl.protocols", &protocols_schema},
  {"nccl.protocol", &proto_schema},
  {"nccl.base_latency_us", &base_lat_schema},
  {"nccl.hw_latency_us", &hw_lat_schema},
  {"nccl.hw_class", &hw_class_schemas[0]},
  {"nccl.arch_rows", &arch_rows_schema},
  {"nccl.ll_max_bw_gbps", &ll_max_schema},
  {"nccl.ll_single_host", &ll_single_schema},
  {"nccl.per_channel_max_bw_gbps", &per_ch_schema},
  {"nccl.per_channel_rows", &per_ch_schemas[0]},
  {"nccl.nvls_efficiency", &nvls_eff_schema},
  {"nccl.tree_correction", &tree_corr_schema},
  {"nccl.net_overhead_us", &overhead_schema},
  {"nccl.bandwidth_factors", &factor_schema},
  {"nccl.channels", &channels_schema},
  {"nccl.p2p", &p2p_schema},
  {"nccl.p2p_schedule", &p2p_sched_schema},
  {"nccl.ring_kernel", &ring_kernel_schema},
  {"nccl.host_launch", &host_launch_schema},
  {"nccl.coll_net_channel", &coll_net_channel_schema},
  {"nccl.p2p_net_channel", &p2p_net_channel_schema},
  {"nccl.nvls_tree_kernel", &nvls_tree_kernel_schema},
  {"nccl.tree_ll128_chunk", &tree_ll128_chunk_schema},
  {"nccl.collnet_chain", &collnet_chain_schema},
  {"nccl.collnet_allgather_reducescatter", &collnet_agrs_schema},
  {"nccl.algorithms", &algorithms_schema},
};

const FsSchemaEntry *fs_nccl_params_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
}
