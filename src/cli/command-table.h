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
