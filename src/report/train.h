/* train.h — the outputs of `fabricsim train`: the text report (step time,
 * throughput, MFU, time per rank class, busiest links, memory), JSON
 * (schema: workloads/README.md, "train --json"), CSV (one line per rank
 * class) and the Chrome trace of the step.  Writers append to a GString;
 * deterministic.  All arguments are borrowed; t must have run.
 * sf is the validated step-time factor (scenario/step-factor.h) or NULL:
 * with it, every output adds the calibrated step, tokens/s and MFU (raw ×
 * factor) beside the raw model's figures, which stay as they are.
 */
#pragma once

#include <glib.h>

#include "compute/memory.h"
#include "report/links.h"
#include "scenario/step-factor.h"
#include "workload/executor.h"

G_BEGIN_DECLS

/* The busiest links a report lists. */
#define FS_REPORT_TRAIN_LINKS 8

void fs_report_train_text(GString *out, FsTrain *t, const FsWorkload *w, const FsTopo *topo,
                          const FsMemoryBreakdown *mem, const FsLinkUse *links, guint nl,
                          const FsStepFactor *sf);
void fs_report_train_json(GString *out, FsTrain *t, const FsWorkload *w, const FsTopo *topo,
                          const FsMemoryBreakdown *mem, const FsLinkUse *links, guint nl,
                          const FsStepFactor *sf);
void fs_report_train_csv(GString *out, FsTrain *t, const FsStepFactor *sf);

/* Writes the step's Chrome trace (the 16 busiest links as counters,
 * sampled by sampler, NULL: mean levels) to path.  FALSE with the write
 * error. */
gboolean fs_report_train_trace(const char *path, FsTrain *t, const FsWorkload *w, const FsTopo *topo,
                               const FsLinkSampler *sampler, GError **error);

G_END_DECLS
