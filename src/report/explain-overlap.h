/* explain-overlap.h — `fabricsim explain overlap`: the step of w run twice
 * on the scenario (every overlap switch off, then on: dp_grads, tp_comm,
 * param_gather, and ep_comm where Megatron's rules allow it) and, per kind of
 * communication, the time in flight, hidden behind compute and exposed;
 * then the executor's own breakdown.  The method is in explain-overlap.c.
 */
#pragma once

#include <glib.h>

#include "scenario/scenario.h"

G_BEGIN_DECLS

/* w must be resolved for the scenario's topology; its overlap switches
 * are left on.  topt: as train's (dp_isolated).  FALSE with a run error.
 * Cost: two training-step simulations. */
gboolean fs_report_overlap(GString *out, const FsScenario *sc, FsWorkload *w,
                           const FsTrainOptions *topt, GError **error);

G_END_DECLS
