/* algos.h — internal: the algorithm entries (one file each, algo-*.c)
 * and the building blocks they share (algo-common.c). */
#pragma once

#include "coll/plan.h"

G_BEGIN_DECLS

extern const FsCollAlgo fs_coll_algo_ring;
extern const FsCollAlgo fs_coll_algo_tree;
extern const FsCollAlgo fs_coll_algo_collnet_direct;
extern const FsCollAlgo fs_coll_algo_collnet_chain;
extern const FsCollAlgo fs_coll_algo_nvls;
extern const FsCollAlgo fs_coll_algo_nvls_tree;
extern const FsCollAlgo fs_coll_algo_pat;
extern const FsCollAlgo fs_coll_algo_rhd;
extern const FsCollAlgo fs_coll_algo_direct;
extern const FsCollAlgo fs_coll_algo_hier;

/* Loop bytes (FsCollAlgo.loop_bytes) as an algorithm computed them: v,
 * or 0 when v is 0 or the request's chunk or slice is not a whole number
 * of elements (then removing loops would not leave the rest unchanged). */
uint64_t fs_algo_loop_bytes(const FsCollRequest *req, uint64_t v);
/* The loop_bytes of an algorithm whose loop is one slice (trees, NVLS). */
uint64_t fs_algo_slice_loop_bytes(const FsComm *comm, const FsCollRequest *req);

/* Ring phases over a subset of ranks. */
typedef enum {
  FS_RING_ALL_REDUCE,     /* 2(m-1) steps: reduce-scatter then all-gather */
  FS_RING_REDUCE_SCATTER, /* m-1 steps; block p ends reduced at position p */
  FS_RING_ALL_GATHER,     /* m-1 steps; block p starts at position p */
} FsRingKind;

/* Runs one loop of a ring phase on channel over m ranks (ring order in
 * ranks[]), where block p has blocks[p] bytes.  ready[p] (or NULL) is a
 * step every send of position p waits for (FS_STEP_NONE for none).  On
 * return, done[p] (if non-NULL) is the last transfer into position p
 * (FS_STEP_NONE when m == 1).  Adds m × steps transfers. */
void fs_algo_ring_loop(FsPlanBuilder *b, guint channel, FsRingKind kind, const guint *ranks,
                       guint m, const uint64_t *blocks, const uint32_t *ready, uint32_t *done);

/* Runs a whole ring phase for `total` bytes of a channel: per-rank blocks of
 * total/m, in loops of m chunks (each block at most the request's chunk
 * size), one fs_algo_ring_loop per loop, each followed by every rank's
 * local copy of its block (a reduction step after the loop's last arrival
 * into the rank; NCCL's ring kernel runs one primitive per loop that moves
 * data only inside the GPU, and the next loop's sends wait for it).
 * ready as above, for the first loop; done[p] (if non-NULL) is position
 * p's last local copy (ready[p] when m == 1). */
void fs_algo_ring_phase(FsPlanBuilder *b, guint channel, FsRingKind kind, const guint *ranks,
                        guint m, uint64_t total, const uint32_t *ready, uint32_t *done);

/* Pipelined units for bytes: the request's slice size (chains, trees,
 * switch algorithms and direct sends move slice by slice).  Number of
 * units (at least 1) and the size of unit i. */
guint64 fs_algo_n_chunks(const FsPlanBuilder *b, uint64_t bytes);
uint64_t fs_algo_chunk(const FsPlanBuilder *b, uint64_t bytes, guint64 i);
/* The same for units of `unit` bytes (> 0): their number (at least 1, at
 * most one past the request's step limit) and the size of unit i (the last
 * may be short, 0 past the end). */
guint64 fs_algo_n_units(const FsPlanBuilder *b, uint64_t bytes, uint64_t unit);
uint64_t fs_algo_unit(uint64_t bytes, uint64_t unit, guint64 i);

/* A shard's trip through the network's aggregation tree (SHARP; algo-sharp.c).
 * What crosses the tree's inner links (leaf → root, root → leaf) when each
 * host sends `bytes` up: the reduction of all_reduce keeps `bytes` on every
 * link; all_gather carries its group's hosts' slices up and every host's
 * down; reduce_scatter (each host sending nh slices of `bytes`) carries the
 * group's reduced nh slices up and its hosts' own slices down. */
typedef enum { FS_SHARP_REDUCE, FS_SHARP_GATHER, FS_SHARP_SCATTER } FsSharpKind;

/* A builder's state for the trips, made once per plan
 * (fs_sharp_trip_init, freed by fs_sharp_trip_clear): the leaf groups'
 * host counts and the scratch of fs_sharp_trip_run, whose results
 * (back_dep, from) fs_sharp_trip_back reads. */
typedef struct {
  guint nh, G;
  gboolean tree;      /* several groups: leaves under a root */
  guint *hosts;       /* G: hosts per group */
  uint32_t *grp_up;   /* G: each leaf's send to the root */
  uint64_t *down;     /* G: what the root returns to each leaf */
  uint32_t *deps;     /* nh */
  uint32_t *back_dep; /* nh: the step host h's return waits for (tree) */
  FsCollEp *from;     /* nh: the switch that returns to host h */
} FsSharpTrip;

void fs_sharp_trip_init(FsSharpTrip *t, const FsComm *comm);
void fs_sharp_trip_clear(FsSharpTrip *t);
/* The start of a builder through the aggregation tree: t's trip state for the plan's
 * communicator (fs_sharp_trip_init; the builder frees it with fs_sharp_trip_clear); returns
 * the number of hosts and sets *L to the ranks on each (the tree's algorithms run on
 * communicators with the same number on every host). */
guint fs_sharp_build_start(const FsPlanBuilder *b, FsSharpTrip *t, guint *L);
/* One shard's trip on channel ch: up[h] is host h's send of the shard to
 * its switch (already added, to fs_sharp_up_switch(comm, h, shard)); adds
 * the tree's inner transfers (none with one group) and leaves in t the
 * step after which host h's switch may send the result back, and that
 * switch.  bytes is what each host sends up (reduce_scatter: nh slices). */
void fs_sharp_trip_run(FsPlanBuilder *b, FsSharpTrip *t, guint ch, guint shard, FsSharpKind kind,
                       uint64_t bytes, const uint32_t *up);
/* After fs_sharp_trip_run: host h's switch returns bytes to rank, once the
 * tree's return reached it (several groups) or once every host's up[]
 * arrived (one switch).  Returns the transfer. */
uint32_t fs_sharp_trip_back(FsPlanBuilder *b, const FsSharpTrip *t, guint ch, guint h, guint rank,
                            uint64_t bytes, const uint32_t *up);
/* The switch endpoint host h sends shard j to (its group's leaf, or shard
 * j's switch with one group). */
FsCollEp fs_sharp_up_switch(const FsComm *comm, guint h, guint j);

/* The fewest units the network algorithms split a channel's share into,
 * when slices allow (pipeline depth, not a hardware figure). */
#define FS_SHARP_MIN_CHUNKS 4
/* all_gather and reduce_scatter through the network halve their unit below
 * a slice, down to this fraction of it, to keep FS_SHARP_MIN_CHUNKS in
 * flight (NCCL's enqueue.cc halves CollNetDirect chunks down to 128, 64
 * and 32 KiB, and NVLS's to 64, 32 and 16 KiB, for depth; a Simple slice
 * is 1 MiB: pipeline policy, not a hardware figure). */
#define FS_SHARP_MIN_UNIT_DIV 8

/* all_gather and reduce_scatter's unit through the network for a channel
 * share of `share` bytes: the slice, halved down to slice /
 * FS_SHARP_MIN_UNIT_DIV while the share would hold fewer than
 * FS_SHARP_MIN_CHUNKS units. */
uint64_t fs_sharp_rail_unit(const FsCollRequest *req, uint64_t share);
/* A network algorithm's loop of `unit` bytes per channel, when the smallest
 * channel share holds at least FS_SHARP_MIN_CHUNKS of them (else the
 * builders shrink the unit with the bytes, and a truncated plan would not
 * be the same plan cut short: 0, no loops). */
uint64_t fs_sharp_loop_bytes(const FsCollRequest *req, uint64_t unit);

/* TRUE when n is a power of two. */
static inline gboolean fs_algo_pow2(guint n)
{
  return n > 0 && (n & (n - 1)) == 0;
}

G_END_DECLS
