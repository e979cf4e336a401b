/* comm.h — a communicator: n ranks, the host (server) each rank lives on,
 * the GPU node each rank maps to in the topology, and per-channel ring
 * orders.
 *
 * A communicator is built before any topology exists (plans only need
 * ranks and hosts) and bound to topology nodes later: fs_comm_set_gpu for
 * each rank, fs_comm_set_nvls_switch for the NVSwitch(es) of a host that
 * reduce in the switch (NVLS), fs_comm_set_collnet_switch for the network
 * switch that reduces (SHARP/CollNet).  Ranks are 0..n-1.  Hosts are small
 * integers chosen by the caller; ranks on one host should be given in
 * consecutive rank order for the default ring order to be NCCL-like
 * (host by host).
 *
 * Ring orders: channel c uses ring c mod (number of rings set); with none
 * set, every channel uses the default order (ranks sorted by host, then
 * rank).  A ring order is a permutation of the ranks.  On a topology,
 * fs_coll_comm_from_topo sets them from an NCCL-like search of each
 * host's links (ring-search.h: Hamiltonian cycles over the host's GPUs,
 * the fastest path type first, as many rings as the links hold, so that
 * the channels together use every NVLink), and gives the channel count a
 * multiple of the number of rings so that every ring carries as many
 * channels (NCCL's nChannels, duplicated up to MAXCHANNELS).
 *
 * Ownership: FsComm owns its arrays; pointers it returns are borrowed and
 * valid until the next setter call or fs_comm_free.  Errors (a ring that
 * is not a permutation) are in FS_COLL_ERROR.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define FS_COLL_ERROR (fs_coll_error_quark())
GQuark fs_coll_error_quark(void);

typedef enum {
  FS_COLL_ERROR_INVALID,     /* a bad argument: ring order, rank, size */
  FS_COLL_ERROR_UNSUPPORTED, /* this algorithm cannot run this op on this communicator */
  FS_COLL_ERROR_PARSE,       /* NCCL_ALGO / NCCL_PROTO text or a params file */
} FsCollError;

/* The most ranks a communicator may have (a resource guard, not a limit of
 * the model). */
#define FS_COMM_MAX_RANKS 65536
/* The communicator guard in force: $FABRICSIM_MAX_RANKS (1 to 2^24) or
 * FS_COMM_MAX_RANKS; fs_comm_new and fs_comm_new_grid take at most this
 * many ranks.  Read once. */
guint fs_comm_max_ranks(void);

typedef struct FsComm FsComm;

/* A communicator of nranks (1..FS_COMM_MAX_RANKS) ranks, all on host 0,
 * GPUs unbound (-1). */
FsComm *fs_comm_new(guint nranks);
void fs_comm_free(FsComm *comm);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsComm, fs_comm_free)

/* A communicator of hosts × ppn ranks, rank = host*ppn + local. */
FsComm *fs_comm_new_grid(guint hosts, guint ppn);

guint fs_comm_size(const FsComm *comm);

void fs_comm_set_host(FsComm *comm, guint rank, guint host);
guint fs_comm_host(const FsComm *comm, guint rank);
/* Number of distinct hosts, and hosts in order of their smallest rank. */
guint fs_comm_n_hosts(const FsComm *comm);
/* Dense host index 0..n_hosts-1 of rank (hosts numbered by first rank). */
guint fs_comm_host_index(const FsComm *comm, guint rank);
/* Ranks per host when there are several hosts and every one holds as many
 * ranks (a ring then repeats its pattern every that many steps), else 1.
 * Cost: O(ranks). */
guint fs_comm_uniform_ranks_per_host(const FsComm *comm);
/* Ranks on host index h, in rank order (borrowed), count in *n. */
const guint *fs_comm_host_ranks(const FsComm *comm, guint h, guint *n);
/* TRUE when every host holds the same number of ranks (the two-level
 * algorithms need it).  O(hosts). */
gboolean fs_comm_hosts_uniform(const FsComm *comm);
/* Position of rank among its host's ranks. */
guint fs_comm_local_rank(const FsComm *comm, guint rank);
/* The largest number of ranks on one host (NCCL's ppn). */
guint fs_comm_ppn(const FsComm *comm);
/* Whether every host of the communicator has all its GPUs among the ranks
 * (set by whoever knows the topology, fs_coll_comm_from_topo; default
 * FALSE: not known).  A ring over part of each host's GPUs may leave a host
 * through another GPU's NIC (PXN), which the stream model's --exec auto
 * rule tells apart (collrun/streams.h). */
void fs_comm_set_whole_hosts(FsComm *comm, gboolean whole);
gboolean fs_comm_whole_hosts(const FsComm *comm);

void fs_comm_set_gpu(FsComm *comm, guint rank, int node);
int fs_comm_gpu(const FsComm *comm, guint rank);

/* NVLS: the switch nodes that reduce for host index h (a host may have
 * several NVSwitch chips; channel c uses switch c mod n).  Setting at
 * least one makes NVLS algorithms available on that host. */
void fs_comm_set_nvls_switch(FsComm *comm, guint host_index, const int *nodes, guint n);
/* The NVLS switch node for host index h and channel c, or -1 when none. */
int fs_comm_nvls_switch(const FsComm *comm, guint host_index, guint channel);
/* TRUE when every host has an NVLS switch. */
gboolean fs_comm_has_nvls(const FsComm *comm);
/* The NVLink domains the communicator spans: hosts that share an NVLS
 * switch (the trays of one GB200 NVL72 rack) count once, every other host
 * once.  NCCL treats such a domain (MNNVL) as one node: only between
 * domains does a collective go through the network.  Cost O(hosts). */
guint fs_comm_n_nvlink_domains(const FsComm *comm);
/* TRUE when NCCL would offer NVLS on the communicator: every host has an
 * NVLS switch and every NVLink domain (the ranks whose hosts share that
 * switch: one host, or several in a multi-node NVLink domain) holds more
 * than two of its ranks.  NCCL's rule (NVIDIA/nccl src/transport/nvls.cc
 * ncclNvlsInit: no NVLS when `gpuCount <= 2`, or `clique.size <= 2` with
 * MNNVL).  Cost O(hosts^2). */
gboolean fs_comm_nvls_available(const FsComm *comm);

/* CollNet/SHARP: the network switches that reduce; shard j (a host's
 * local rank j's share) goes to switch j mod n, so each rail can reduce
 * in its own switch.  n == 0 removes CollNet. */
void fs_comm_set_collnet_switches(FsComm *comm, const int *nodes, guint n);
/* The switch for shard j, or -1 when none.  j may also be a leaf index
 * from fs_comm_collnet_leaf. */
int fs_comm_collnet_switch(const FsComm *comm, guint j);

/* A two-level SHARP aggregation tree, as on a fat-tree of several leaf
 * groups (scalable units): host index h belongs to group host_group[h]
 * (0..ngroups-1); shard j of a host is reduced first in its group's
 * switch leaves[g * shards + j] (the rail's leaf), and the groups' partial
 * results of shard j in shard j's switch set by
 * fs_comm_set_collnet_switches (the root, one level up), which sends the
 * total back down the same way.  So each leaf-to-root link carries one
 * stream per shard, not one per host.  ngroups <= 1 removes the tree
 * (every host reduces in the root directly). */
void fs_comm_set_collnet_groups(FsComm *comm, guint ngroups, guint shards, const guint *host_group,
                                const int *leaves);
/* Number of groups (1 without a tree). */
guint fs_comm_collnet_n_groups(const FsComm *comm);
/* Group of host index h (0 without a tree). */
guint fs_comm_collnet_group(const FsComm *comm, guint h);
/* The index that names group g's leaf for shard j, for FS_EP_COLLNET and
 * fs_comm_collnet_switch (a flag bit above any shard number). */
#define FS_COMM_COLLNET_LEAF 0x20000000u
guint fs_comm_collnet_leaf(const FsComm *comm, guint g, guint j);

/* Sets the ring order of ring index `ring` (0-based; rings are appended
 * in order, so ring may be at most the current count).  order has
 * fs_comm_size entries and must be a permutation of the ranks. */
gboolean fs_comm_set_ring(FsComm *comm, guint ring, const guint *order, GError **error);
guint fs_comm_n_rings(const FsComm *comm);
/* Ring order used by channel (borrowed, fs_comm_size entries). */
const guint *fs_comm_ring(const FsComm *comm, guint channel);

/* Rotation of the local ranks: pi_s maps rank r, local rank j of host h,
 * to local rank (j + s) mod L of the same host (L ranks on every host).
 * Returns the smallest shift s, a multiple of `multiple` (>= 1) below L,
 * under which every ring i's order rotates into ring (i + s) mod
 * n_rings's, position for position (ring i + s = pi_s(ring i)), and its
 * order in *order (the rotations until pi_s^order is the identity: L /
 * gcd(s, L)); 0 (and *order 0) when none does, when there is one ring or
 * none, or one host, or hosts of unequal ranks.  Channel c + k·s then
 * runs the rotation by k·s of channel c's ring (fs_comm_ring takes the
 * channel modulo the rings).  For a collective timed alone whose channels
 * mirror each other so (collrun/rotation.h).  Cost O(rings × ranks × L). */
guint fs_comm_ring_rotation(const FsComm *comm, guint multiple, guint *order);
/* pi_s of rank (above): local rank (j + s) mod L of its host. */
guint fs_comm_rotate_rank(const FsComm *comm, guint rank, guint s);

/* The ring graph's bandwidth inside a host: bytes/s that the rings of one
 * host carry together out of each GPU (the ring search's rings × per-ring
 * speed; src/coll/ring-search.h), and how many distinct rings a host has.
 * 0 when no search ran: the NCCL view then falls back to the route between
 * two ring neighbours (collrun/coll-topo.h). */
void fs_comm_set_ring_graph(FsComm *comm, double bw, guint host_rings);
double fs_comm_ring_bw(const FsComm *comm);
guint fs_comm_host_rings(const FsComm *comm);

G_END_DECLS
