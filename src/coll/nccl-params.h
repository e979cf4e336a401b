/* nccl-params.h — NCCL's tuning constants and protocol mechanics, loaded
 * from the YAML files in models/nccl/ (format in models/nccl/README.md).
 *
 * The tuner (cost model) and the executor (per-step latency, chunk sizes,
 * protocol payload efficiency) read everything NCCL-specific from here;
 * C code holds none of these numbers.  Every table in the file carries a
 * `source:`.
 *
 * Ownership: FsNcclParams is a plain record owned by the caller
 * (fs_nccl_params_free).  Errors: FS_YAML_ERROR from the YAML layer or
 * FS_COLL_ERROR_PARSE, each message starting with file:line:col.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "coll/coll.h"
#include "coll/plan.h"
#include "coll/tuner-plugin.h"
#include "util/schema.h"

G_BEGIN_DECLS

/* Hardware latency classes (NCCL's NVLINK, PCI, NET). */
#define FS_NCCL_HWS(X) \
  X(NVLINK, "NVLINK")  \
  X(PCI, "PCI")        \
  X(NET, "NET")

typedef enum {
#define X(id, name) FS_NCCL_HW_##id,
  FS_NCCL_HWS(X)
#undef X
  FS_NCCL_HW_N
} FsNcclHw;

/* Rows of the per-architecture tables. */
#define FS_NCCL_ARCH_ROWS(X) \
  X(VOLTA, "volta")          \
  X(AMPERE, "ampere")        \
  X(HOPPER, "hopper")        \
  X(BLACKWELL, "blackwell")

typedef enum {
#define X(id, name) FS_NCCL_ROW_##id,
  FS_NCCL_ARCH_ROWS(X)
#undef X
  FS_NCCL_ROW_N
} FsNcclRow;

/* How a release sets the channels of a network peer when
 * NCCL_NCHANNELS_PER_NET_PEER is not set (src/graph/paths.cc
 * ncclTopoGetNchannels): a fixed count (2.18, 2.19); a start count halved
 * while channels × ranks exceed the p2p channels × a scale, at least one per
 * NIC (2.20 – 2.28); the NICs' bandwidth over the per-channel network
 * bandwidth, at least one per NIC, then halved while the peers of one
 * work batch round would not fit the p2p channels (2.29 and later). */
#define FS_NCCL_P2P_RULES(X) \
  X(FIXED, "fixed")          \
  X(SCALE, "scale")          \
  X(BANDWIDTH, "bandwidth")

typedef enum {
#define X(id, name) FS_NCCL_P2P_##id,
  FS_NCCL_P2P_RULES(X)
#undef X
  FS_NCCL_P2P_RULE_N
} FsNcclP2pRule;

/* NCCL's scheduling of point-to-point operations (the optional
 * `p2p_schedule` table; models/nccl/README.md). */
typedef struct {
  gboolean on;              /* FALSE when the file has no such table: p2p ops keep the
                               collective channels, with no per-channel network cap */
  FsNcclP2pRule net_rule;
  guint net_channels;       /* NCCL_NCHANNELS_PER_NET_PEER's default (fixed) or start (scale) */
  guint net_scale;          /* scale rule: halve while channels × ranks > p2p channels × this */
  double channel_net_bw;    /* GB/s one channel moves over the network
                               (NCCL_P2P_PER_CHANNEL_NET_BW) */
  guint work_per_batch;     /* peers per work batch (NCCL_MAX_DEV_WORK_P2P_PER_BATCH): the
                               bandwidth rule's divisor and the schedule's group size */
  guint nvl_channels_per_link; /* an NVLink peer: this × its NVLinks */
  guint pci_channels;       /* any other peer on the host */
  gboolean shared_net;      /* shared_net_channels: a rank's operations to one remote group of
                               work_per_batch local ranks share that group's channels
                               (p2p-sched.h fs_p2p_net_flows_per_channel) */
  gboolean serial_posts;    /* serial_net_posts: each network operation a proxy posts beyond
                               one send and one receive adds net_overhead_us (tuner.c) */
  gboolean halve_min_net;   /* nChannelsMin halved by the ranks across hosts too (2.20+; before,
                               on one host only) */
  double part_net[2];       /* an op's part size, min and max, in p2p chunks, across hosts */
  double part_host[2];      /* the same on one host */
  /* NCCL's chunk of a Simple send across hosts (net_chunk_tune: src/enqueue.cc addP2pToPlan
   * "Tune chunk size for the network"): an op of fewer bytes than chunk_below[0] p2p chunks
   * moves chunks of net_chunk / chunk_div[0], else below chunk_below[1] of net_chunk /
   * chunk_div[1]; all 0 (absent): the p2p chunk. */
  double chunk_below[2];
  double chunk_div[2];
} FsNcclP2pSched;

/* CPU vendors of llMaxBws / net overhead. */
typedef enum { FS_NCCL_CPU_INTEL, FS_NCCL_CPU_AMD, FS_NCCL_CPU_OTHER, FS_NCCL_CPU_N } FsNcclCpu;

#define FS_NCCL_TREE_CORR_N 24

typedef struct {
  uint64_t buffer;         /* bytes of the per-connection buffer (all steps) */
  guint chunk_steps;       /* buffer steps per pipelined chunk */
  guint slice_steps;       /* buffer steps per slice (the unit that moves) */
  double payload;          /* payload bytes per wire byte */
  guint max_threads;
  guint thread_threshold;  /* bytes per thread below which NCCL drops channels */
} FsNcclProto;

typedef struct {
  char *file;              /* where it was loaded from */
  char *version;
  guint steps;             /* NCCL_STEPS */
  FsNcclProto proto[FS_PROTO_N];
  double base_lat[FS_NCCL_ALGO_N][FS_PROTO_N];             /* µs */
  double hw_lat[FS_NCCL_HW_N][FS_NCCL_ALGO_N][FS_PROTO_N]; /* µs */
  guint n_archs;            /* arch_rows: GPU architecture names and their rows */
  char **arch_names;
  FsNcclRow *arch_rows;
  double ll_max_bw_single[FS_NCCL_ROW_N];  /* GB/s */
  double ll_max_bw_multi[2][2];            /* [intel, amd][2 hosts, 4+] GB/s */
  double ring_ll128_bw[FS_NCCL_ROW_N][3];  /* per channel, GB/s, [1, 2, 4+ hosts] */
  double tree_ll128_bw[FS_NCCL_ROW_N][3];
  double tree_bw[FS_NCCL_ROW_N][3];
  double nvls_tree_bw[FS_NCCL_ROW_N][3];
  double nvls_eff[FS_NCCL_ROW_N];
  double tree_corr[FS_PROTO_N][FS_NCCL_TREE_CORR_N];
  double net_overhead_us[FS_NCCL_CPU_N];
  double net_overhead_simple_mult;
  /* Bandwidth refinements (see the file). */
  double f_ring_ll, f_ll128, f_ring_ll128, f_tree_ar, f_tree_ll_div, f_tree_ll128_one_host;
  double f_tree_pattern, f_pat, f_collnet_sm90, f_ring_plateau_old, f_ring_plateau;
  double collnet_arity_us, pat_rank_us, pat_inter_div;
  /* Refinements of older releases (optional keys; see models/nccl/README.md):
   * Ring+LL128 with one rank per node (≤ 2.22: 0.7; default ring_ll128),
   * Ring+LL on one host for collectives other than all_reduce and reduce
   * (≤ 2.20: 1/3; 0 = ring_ll), and the NVLS model before 2.28 (algbw =
   * nCh × min(bwIntra, bwInter) × this ratio, 5/6; 0 = the 2.28+ model). */
  double f_ring_ll128_one_ppn, f_ring_ll_one_host_other, f_nvls_legacy_ratio;
  /* Algorithms the release does not have (bit FsNcclAlgo), from the
   * optional `algorithms: {absent: [...]}` table; the tuner never picks them. */
  guint64 algo_absent;
  /* Channel counts for communicators built from a topology. */
  guint max_channels, nvls_channels;
  /* NVLS channels on the Blackwell row (compute capability 10.0+, src/transport/nvls.cc
   * NVLS_NCHANNELS_SM100 / _SM100_NVL): [one NVLink domain, several]; 0 (absent) =
   * nvls_channels.  Applied by fs_nccl_params_nvls_channels. */
  guint nvls_channels_sm100[2];
  /* The most heads NCCL's NVLS graph and CollNetDirect graph have
   * (NCCL_MAX_NVLS_ARITY; NCCL_MAX_DIRECT_ARITY + 1, src/graph/search.cc
   * "NVLS and COLLNET_DIRECT search must have ngpus heads at most"). */
  guint nvls_arity, direct_heads;
  /* Point to point. */
  uint64_t p2p_nvl_chunk, p2p_net_chunk, p2p_ll_threshold;
  FsNcclP2pSched p2p;
  /* ring_kernel (optional table; 0 when absent): the per-loop local copy
   * of NCCL's ring kernel runs at this fraction of one SM's share of the
   * GPU's memory bandwidth (memory_bandwidth × efficiency / SMs). */
  double ring_copy_sm_share;
  /* host_launch (optional table; 0 when absent): the host's cost of
   * issuing one GPU's collective in an nccl-tests iteration, µs
   * (coll/launch.h: the floor of -g N launches from one thread). */
  double host_launch_us;
  /* coll_net_channel (optional table; 0 when absent = no cap): the most one
   * channel of a collective moves through one network connection, GB/s
   * (FsCollExecParams.rate_cap_inter for collectives). */
  double coll_channel_net_bw;
  /* coll_net_channel ring_step_latencies (optional; 0 when absent = none): how many of NCCL's
   * network step latencies (FsCollCost.inter_lat_us of Ring/Simple) a ring's connection across
   * hosts idles between consecutive steps (FsCollExecParams.ring_step_latency_inter). */
  double coll_ring_step_lats;
  /* coll_net_channel ring_step_host_excess (optional; 0 when absent): how many times that
   * connection also idles NCCL's host excess of a ring step across hosts: its per-step latency
   * max(NVLink hw latency, net_overhead_us × net_overhead_simple_mult) (tuning.cc "Inter-node
   * rings still have to launch nsteps * net overhead") less the NVLink hw latency. */
  double coll_ring_step_host_excess;
  /* coll_net_channel ring_serial_sends (optional; 0 when absent): a Ring/LL or Ring/LL128
   * plan across hosts whose channels share a proxy (more channels than the host's NICs) pays,
   * on each ring step, this many × net_overhead_us per send beyond the first that the proxy
   * posts for that step (fs_coll_ring_proxy_sends_us). */
  double coll_ring_serial_sends;
  /* coll_net_channel tree_step_posts (optional; 0 when absent): a tree plan across hosts pays,
   * between consecutive chunks on each connection across hosts, this many posts per channel
   * × the channels its proxy serves (channels over the host's NICs) × net_overhead_us
   * (fs_coll_tree_proxy_posts_us). */
  double coll_tree_step_posts;
  /* p2p_net_channel (optional table; 0 when absent): the most one channel of a
   * point-to-point plan moves across hosts, GB/s (fs_p2p_channel_rate_gbps;
   * absent: p2p.channel_net_bw, NCCL's own per-channel estimate). */
  double p2p_channel_net_rate;
  /* nvls_tree_kernel (optional table; 0 when absent or for a row = no cap): the most busbw
   * NCCL's NVLSTree kernel moves per NVLS head (GB/s), per architecture row; the executed
   * nvls_tree plan's flows are capped to it (collrun/exec-params.c). */
  double nvls_tree_exec_bw[FS_NCCL_ROW_N];
  /* tree_ll128_chunk (optional table; grain 0 when absent = the protocol's chunk): NCCL's
   * Tree/LL128 chunk for small sizes (src/enqueue.cc "nstepsLL128"): with nsteps = 1 +
   * log2(nodes) + ppn_steps × ranks per node, the chunk is halved while bytes / (channels ×
   * chunk) < nsteps × chunks[i] / ranks per node and chunk > floor[i], for i = 0 then 1, and
   * rounded down to a multiple of grain (fs_coll_tree_ll128_chunk). */
  double tree_ll128_ppn_steps, tree_ll128_chunks[2], tree_ll128_floor[2], tree_ll128_grain;
  /* collnet_chain (optional table; all 0 when absent: Simple's slices, no cap): NCCL's
   * CollNetChain as its enqueue and kernel run it.  The chunk (fs_nccl_params_collnet_chain_chunk):
   * min(chunk_max, a Simple step), halved while bytes / (channels × chunk) < ranks per node ×
   * chunk_loops[i] and chunk > chunk_floor[i], for i = 0, 1, 2 in turn; one chunk per buffer
   * step.  kernel_ratio: a channel (one thread block) moves at most bwIntra × this of algbw,
   * NCCL's own per-channel price (collrun/exec-params.c). */
  uint64_t collnet_chain_chunk_max;
  double collnet_chain_chunk_loops[3], collnet_chain_chunk_floor[3];
  double collnet_chain_ratio;
  /* NCCL_MIN_CTAS, NCCL_MAX_CTAS, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS
   * from the environment (fs_nccl_params_apply_env); 0 = unset.  Applied to
   * a communicator's channel counts by fs_nccl_params_channels. */
  guint env_min_ctas, env_max_ctas, env_min_nchannels, env_max_nchannels;
  /* collnet_allgather_reducescatter (optional table, 2.20+): CollNetDirect
   * runs all_gather and reduce_scatter (collnet_agrs TRUE); bus bandwidth
   * = ppn × min(bwIntra, bwInter × inter (when > 0)) × the factor
   * interpolated linearly in ppn between ppn1 (1 rank per node) and ppn8. */
  gboolean collnet_agrs;
  double collnet_agrs_ppn1, collnet_agrs_ppn8, collnet_agrs_inter;
  /* The tuner plugin NCCL_TUNER_PLUGIN names (coll/tuner-plugin.h; owned;
   * NULL: NCCL's own tuner), set by fs_nccl_params_apply_environ. */
  FsTunerPlugin *tuner_plugin;
} FsNcclParams;

/* Loads a params file.  NULL with error (file:line:col) on any problem:
 * a missing table or row, a row of the wrong length, a negative number,
 * an unknown key, a table without `source:`. */
FsNcclParams *fs_nccl_params_load(const char *path, GError **error);
/* The declared keys of a parameters file and of one protocol's table
 * (util/schema.h), named as models/nccl/README.md's markers name them
 * ("nccl.file"); *n receives the count.  Static, borrowed. */
const FsSchemaEntry *fs_nccl_params_schemas(guint *n);

/* The same from len bytes of text (-1: NUL-terminated); name stands for
 * the file in messages. */
FsNcclParams *fs_nccl_params_load_string(const char *text, gssize len, const char *name,
                                         GError **error);
/* Loads <models dir>/nccl/nccl.yaml, models dir as the catalog finds it
 * (fs_datadir(FS_DATA_MODELS), util/datadir.h). */
FsNcclParams *fs_nccl_params_load_default(GError **error);
void fs_nccl_params_free(FsNcclParams *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsNcclParams, fs_nccl_params_free)

/* Lays NCCL's point-to-point environment variables over p, as NCCL reads
 * them: NCCL_P2P_NET_CHUNKSIZE and NCCL_P2P_NVL_CHUNKSIZE (bytes),
 * NCCL_P2P_LL_THRESHOLD (bytes), and, where p has a p2p_schedule table,
 * NCCL_NCHANNELS_PER_NET_PEER (a fixed count per network peer: NCCL then
 * skips its scaling rules) and NCCL_P2P_PER_CHANNEL_NET_BW (GB/s); and the
 * channel limits NCCL_MIN_CTAS, NCCL_MAX_CTAS, NCCL_MIN_NCHANNELS,
 * NCCL_MAX_NCHANNELS (1 to 64 each; fs_nccl_params_channels).  Unset
 * or empty variables leave p alone.  FALSE with FS_COLL_ERROR_PARSE naming
 * the variable for a value that is not a whole number in range.  Cost: a
 * few getenv. */
gboolean fs_nccl_params_apply_env(FsNcclParams *p, GError **error);

/* fs_nccl_params_apply_env with the variables of envp (a g_get_environ()
 * style NULL-terminated "NAME=VALUE" list, e.g. a validation table's `env`
 * line) instead of the process environment; NULL: none.  Besides the
 * variables above: NCCL_BUFFSIZE (bytes, the Simple protocol's buffer per
 * connection, src/init.cc computeBuffSizes) and NCCL_TUNER_PLUGIN (a tuner
 * plugin file's name or path, fs_tuner_plugin_path: loaded into
 * p->tuner_plugin, and the NCCL_* variables the plugin sets for its
 * platform applied where envp does not set them, as aws-ofi-nccl does).
 * FALSE with FS_COLL_ERROR_PARSE naming the variable, or the plugin file's
 * error.  Cost: a few lookups, and the plugin file's load. */
gboolean fs_nccl_params_apply_environ(FsNcclParams *p, const char *const *envp, GError **error);

/* The names of the variables fs_nccl_params_apply_environ reads, NULL-terminated (static;
 * what `fabricsim validate`'s note lists beside the tuner's and the router's). */
const char *const *fs_nccl_params_env_names(void);

/* The channel counts NCCL gives a communicator (src/graph/connect.cc and
 * src/transport/nvls.cc), from the ring channels before the limits
 * (*ring: the graph's channels, doubled by NCCL's ring connection) and the
 * NVLS channels (*nvls: p->nvls_channels, 0 without NVLS), in place: the
 * ring count is cut to NCCL_MAX_NCHANNELS and NCCL_MAX_CTAS, then raised
 * (channels copied) to NCCL_MIN_NCHANNELS and NCCL_MIN_CTAS; the NVLS count
 * becomes max(NCCL_MIN_CTAS, min(NCCL_MAX_CTAS, *nvls)).  Every limit is
 * capped at p->max_channels (NCCL's MAXCHANNELS), a minimum above the
 * maximum is lowered to it (NCCL's own rule for the CTAs); unset limits
 * (0) do nothing.  Cost: O(1). */
void fs_nccl_params_channels(const FsNcclParams *p, guint *ring, guint *nvls);

/* The NVLS channels NCCL gives a GPU of tuning row `row` before the limits
 * (src/transport/nvls.cc ncclNvlsInit): on the Blackwell row the release's
 * nvls_channels_sm100 entry for one NVLink domain or several (`multi_node`:
 * the communicator spans hosts that do not share one NVLink domain), where
 * the file gives it; otherwise p->nvls_channels.  Cost: O(1). */
guint fs_nccl_params_nvls_channels(const FsNcclParams *p, FsNcclRow row, gboolean multi_node);

/* Path of the default file (caller frees). */
char *fs_nccl_params_default_path(void);

/* The releases with a file in the models folder (the default file's
 * folder): "2.18", "2.19", …, sorted by release; the default file's own
 * release among them.  Files are named nccl-X.Y.yaml; nccl.yaml is the
 * default.  Caller frees (g_strfreev).  Cost: reads the folder and the
 * default file's nccl_version line. */
char **fs_nccl_params_known_versions(void);

/* Loads the file of NCCL release version: "2.21", "2.21.5" (patch
 * ignored) or a version code as NCCL prints it (22105, or 2804 for
 * 2.8.4).  Error FS_COLL_ERROR_PARSE naming the known releases when there
 * is none for it (the message starts with what, e.g. "--nccl-version");
 * otherwise as fs_nccl_params_load. */
FsNcclParams *fs_nccl_params_load_version(const char *version, const char *what, GError **error);

/* The path of release version's file, as fs_nccl_params_load_version
 * would load it (caller frees), or NULL with the same error. */
char *fs_nccl_params_version_path(const char *version, const char *what, GError **error);

/* "2.21" of a version code (22105 → "2.21", 2804 → "2.8"); NULL for 0.
 * Caller frees. */
char *fs_nccl_params_release_of_code(guint code);

/* Payload bytes per pipelined chunk and per slice for protocol p:
 * buffer/steps × chunk_steps (slice_steps) × payload. */
uint64_t fs_nccl_params_chunk_bytes(const FsNcclParams *p, FsCollProto proto);
uint64_t fs_nccl_params_slice_bytes(const FsNcclParams *p, FsCollProto proto);
/* NCCL's small-size chunk rule (src/enqueue.cc, CollNetChain and Tree/LL128 alike): halves
 * chunk while a channel of per_channel bytes holds fewer than min_chunks of it (NCCL's integer
 * division per_channel / chunk) and chunk is above floor, never below 1 B.  Pure. */
uint64_t fs_nccl_chunk_halve(uint64_t chunk, uint64_t per_channel, double min_chunks, double floor);

/* NCCL's CollNetChain chunk for an all_reduce of nbytes on nchannels channels with depth ranks
 * per node (src/enqueue.cc, the collnet_chain table); 0 when p has no collnet_chain table. */
uint64_t fs_nccl_params_collnet_chain_chunk(const FsNcclParams *p, uint64_t nbytes, guint nchannels,
                                            guint depth);

const char *fs_nccl_hw_name(FsNcclHw hw);
const char *fs_nccl_p2p_rule_name(FsNcclP2pRule r);
const char *fs_nccl_row_name(FsNcclRow r);

/* The table row of a GPU architecture named as in the catalog ("hopper",
 * "ada"): FALSE when the file does not list it. */
gboolean fs_nccl_params_arch_row(const FsNcclParams *p, const char *arch, FsNcclRow *out);

G_END_DECLS
