/* command-table.h — one line per subcommand: FS_CMD(name, "summary").
 * Included twice by commands.c (declarations, then the table); the order
 * here is the order of `fabricsim help`.  No include guard on purpose. */
FS_CMD(units, "convert and check quantities: bandwidths, times, sizes")
FS_CMD(models, "list the hardware catalog or show one model and its arithmetic")
FS_CMD(topo, "check, list, classify (nvidia-smi topo -m) or draw a topology")
FS_CMD(p2p, "GPU-to-GPU and host-device bandwidth and latency matrices, simulated")
FS_CMD(flows, "replay a list of transfers (CSV/JSON) on a topology: finish times, rates, bottlenecks")
FS_CMD(coll, "nccl-tests on the simulator: a collective on a topology, size by size")
FS_CMD(calibrate, "fit link latency and efficiency to nccl-tests logs; write a calibration file")
FS_CMD(validate, "compare predictions with published measurements (validation/reference)")
FS_CMD(train, "simulate one training step: step time, MFU, breakdown, busiest links, memory")
FS_CMD(replay, "run an explicit per-rank op graph (JSON trace) on a topology; reports deadlocks")
FS_CMD(sweep, "run a what-if sweep (grid or list of points) on all cores or MPI ranks; CSV/JSON")
FS_CMD(explain, "teaching views: pipeline schedules, a collective's arithmetic, GPU pair paths, overlap")
FS_CMD(plan, "capacity planning: fabrics, GPU counts and layouts that meet a target, with cost and energy")
