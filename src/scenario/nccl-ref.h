/* nccl-ref.h — the `nccl-tests` reference kind of `fabricsim validate`
 * (nccl-ref.c): nccl-tests logs against collectives simulated in a
 * scenario's world (src/collrun/bench.h), as `fabricsim coll` runs them.
 * Here, not in calib/, because its world is the scenario's: the table's
 * topology loaded through the scenario (its catalog, calibrated), NCCL's
 * constants of the table's release with the NCCL_* environment and the
 * calibration applied, and the tuner inputs of the environment
 * (NCCL_ALGO, NCCL_PROTO, NCCL_COLLNET_ENABLE) where the table does not pin
 * them: a table's `algorithm:` line other than `default` wins over
 * NCCL_ALGO.
 */
#pragma once

#include "calib/validate.h"
#include "scenario/scenario.h"

G_BEGIN_DECLS

/* The kind; its FsValInputs.world is the FsScenario (required). */
extern const FsValKind fs_val_kind_nccl_tests;

/* Every kind `fabricsim validate` runs: calib's (fs_val_kinds) and
 * nccl-tests, NULL-terminated, in listing order. */
extern const FsValKind *const fs_scenario_val_kinds[];

/* Runs reference table t (calib/validate.h) with fs_scenario_val_kinds in
 * sc's world: sc's catalog and calibration, and sc itself for nccl-tests.
 * sc needs FS_SCENARIO_NEED_NCCL.  Errors and result: as fs_val_run_kinds. */
FsValResult *fs_scenario_val_run(const FsScenario *sc, const FsValTable *t, GError **error);

G_END_DECLS
