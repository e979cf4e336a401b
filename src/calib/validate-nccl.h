/* validate-nccl.h — the `nccl-tests` kind of `fabricsim validate`
 * (validate-nccl.c), present when the build has the collective layer and
 * routing (calib/calib-config.h: FS_HAVE_COLL_TOPO). */
#pragma once

#include "calib/validate.h"

extern const FsValKind fs_val_kind_nccl_tests;
