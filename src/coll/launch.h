/* launch.h — how nccl-tests launches a collective from the host, and the
 * floor that sets on each iteration's time.
 *
 * nccl-tests runs `mpirun -np P`, each process `-t T` threads, each thread
 * `-g G` GPUs (ranks = P × T × G).  Every iteration, a thread issues its
 * G GPUs' operations one after another inside one NCCL group (one kernel
 * launch each); with `-G N` it captures N iterations in a CUDA graph per GPU
 * and launches the graph once per N iterations.  Threads and processes issue
 * in parallel, and the iterations are back to back (nccl-tests times the
 * whole loop), so an iteration takes at least its thread's host issue time:
 *
 *   host = G × launch_us            (no graph)
 *   host = G × launch_us / N        (-G N: one graph launch per GPU, costed
 *                                     as one launch, per N iterations)
 *
 * and the reported time is max(simulated GPU time, host).  launch_us is the
 * NCCL parameters file's `host_launch.launch_us` (models/nccl; 0 when the
 * table is absent: no floor).  `-g 1` (one process per GPU, nccl-tests'
 * default launch under MPI) gives a floor of one launch, below every
 * simulated op time on the GPUs in the catalog; `-g 8` from one thread
 * gives eight.
 *
 * Ownership: plain values.  Errors: FS_COLL_ERROR_PARSE from the parser.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  guint threads;          /* nccl-tests -t (>= 1) */
  guint gpus_per_thread;  /* nccl-tests -g (>= 1) */
  guint graph_iters;      /* nccl-tests -G (0: no CUDA graph) */
} FsCollLaunch;

/* One process per GPU, one thread, no graph: nccl-tests' defaults (-t 1
 * -g 1 -G 0), as it runs under mpirun with one rank per GPU. */
void fs_coll_launch_init(FsCollLaunch *l);

/* The host's issue time of one iteration per thread, in µs, for a
 * per-launch cost of launch_us (>= 0).  Cost O(1). */
double fs_coll_launch_host_us(const FsCollLaunch *l, double launch_us);

/* Parses nccl-tests' launch flags from text: words `-t N`, `-g N`, `-G N`
 * (also `--nthreads`, `--ngpus`, `--cudagraph`), in any order, each at most
 * once; parsing stops at the first word that is not one of them (the rest
 * is prose, e.g. "(one process per GPU)").  Flags not given keep their
 * defaults (fs_coll_launch_init).  FALSE with FS_COLL_ERROR_PARSE and a
 * sentence for a bad or repeated value (N from 1 to 1024; -G from 0). */
gboolean fs_coll_launch_parse(const char *text, FsCollLaunch *l, GError **error);

/* "-t T -g G -G N" (-G only when set); caller frees. */
char *fs_coll_launch_describe(const FsCollLaunch *l);

G_END_DECLS
