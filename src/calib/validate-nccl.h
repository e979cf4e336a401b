/* validate-nccl.h — the `nccl-tests` kind of `fabricsim validate`
 * (validate-nccl.c): nccl-tests logs against the collective layer on a
 * topology (src/collrun/bench.h). */
#pragma once

#include "calib/validate.h"

extern const FsValKind fs_val_kind_nccl_tests;
