#!/usr/bin/env bash
# test-train.sh — `fabricsim train`: the end-to-end summary, --json schema
# fields and arithmetic (tokens/s, MFU, energy), overrides with Megatron
# names, --trace writes a loadable Chrome trace, --strict memory errors,
# usage errors, and determinism.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T="$FS_SOURCE_ROOT/topologies/dgx-h100.yaml"
W="$FS_SOURCE_ROOT/workloads"

"$FABRICSIM" train "$T" "$W/llama2-7b.yaml" >"$tmp/out" 2>"$tmp/err" || fail "llama2-7b exited $?: $(cat "$tmp/err")"
for k in "step time" "tokens/s" "MFU" "energy/step" "Busiest links" "Memory per GPU" "bubble"; do
  grep -q "$k" "$tmp/out" || fail "summary lacks '$k'"
done

# JSON: schema fields and the arithmetic between them.
"$FABRICSIM" train "$T" "$W/llama2-7b.yaml" --tp=2 --pp=2 --sequence-parallel --json \
  --trace "$tmp/trace.json" >"$tmp/a.json" || fail "json run failed"
python3 - "$tmp/a.json" "$tmp/trace.json" <<'PY' || fail "json checks"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 1
assert d["layout"]["tp"] == 2 and d["layout"]["pp"] == 2 and d["layout"]["dp"] == 2, d["layout"]
assert d["layout"]["sequence_parallel"] is True
t = d["step_time_s"]
assert t > 0
assert abs(d["tokens_per_s"] - d["tokens_per_step"] / t) < 1e-6 * d["tokens_per_s"]
mfu = d["model_flops_per_step"] / (d["peak_tflops_per_gpu"] * 1e12 * d["gpus"] * t)
assert abs(mfu - d["mfu"]) < 1e-9, (mfu, d["mfu"])
# The convention counts causal attention in full (NeMo, Megatron-LM 2024); mfu_causal halves it.
mfc = d["model_flops_per_step_causal"] / (d["peak_tflops_per_gpu"] * 1e12 * d["gpus"] * t)
assert abs(mfc - d["mfu_causal"]) < 1e-9 and d["mfu_causal"] < d["mfu"], (mfc, d["mfu"])
assert abs(d["energy_j"] - 700 * 8 * t) < 1e-6 * d["energy_j"]
assert len(d["rank_classes"]) == 2
for c in d["rank_classes"]:
    total = sum(c["compute_ms"].values()) + sum(c["exposed_comm_ms"].values()) + c["bubble_ms"] + c["host_ms"]
    assert abs(total - t * 1e3) < 1e-6 * t * 1e3 + 1e-6, (total, t)
    assert c["exposed_comm_ms"]["tp"] > 0
assert d["memory"]["fits"] is True
tr = json.load(open(sys.argv[2]))
ev = tr["traceEvents"]
xs = [e for e in ev if e["ph"] == "X"]
assert xs and all(e["dur"] > 0 for e in xs)
assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in ev)
assert max(e["ts"] + e["dur"] for e in xs) <= t * 1e6 * (1 + 1e-9) + 1e-3  # step_time_s has 10 significant digits
PY

# Determinism: the same run twice gives the same bytes.
"$FABRICSIM" train "$T" "$W/llama2-7b.yaml" --tp=2 --pp=2 --sequence-parallel --json >"$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || fail "two identical runs differ"

# Overrides with Megatron's long names agree with the short ones.
"$FABRICSIM" train "$T" "$W/llama2-7b.yaml" --tensor-model-parallel-size=2 \
  --pipeline-model-parallel-size=2 --sequence-parallel --json >"$tmp/c.json"
cmp -s "$tmp/a.json" "$tmp/c.json" || fail "long and short override names differ"

# Memory: 70B on one DGX with tp 1 does not fit: a warning, or exit 2 with --strict.
"$FABRICSIM" train "$T" "$W/llama2-7b.yaml" --num-layers=160 --hidden-size=8192 --num-attention-heads=64 \
  --global-batch-size=16 >"$tmp/out" 2>"$tmp/err" || fail "non-strict run should succeed"
grep -q "warning: .* needs .* per GPU" "$tmp/err" || fail "no memory warning: $(cat "$tmp/err")"
set +e
"$FABRICSIM" train "$T" "$W/llama2-7b.yaml" --num-layers=160 --hidden-size=8192 --num-attention-heads=64 \
  --global-batch-size=16 --strict >"$tmp/out" 2>"$tmp/err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "--strict exited $rc, want 2"
grep -q "strict" "$tmp/err" || fail "--strict message: $(cat "$tmp/err")"

# Usage and input errors.
set +e
"$FABRICSIM" train "$T" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] || fail "missing workload exited $rc"
"$FABRICSIM" train "$T" "$W/llama2-7b.yaml" --tp=3 >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] || fail "--tp=3 exited $rc"
grep -q "tp" "$tmp/err" || fail "--tp=3 message: $(cat "$tmp/err")"
"$FABRICSIM" train "$T" "$W/llama2-7b.yaml" --pp=2 parallel.schedule=interleaved \
  parallel.virtual_stages=2 --global-batch-size=6 --dp=4 >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] || fail "interleaved with 3 micro-batches exited $rc: $(cat "$tmp/err")"
set -e

# --calibration applies measured GEMM curves: a different (here slower) step.
cal="$FS_SOURCE_ROOT/validation/results/h100-2026-11-23.json"
if [ -f "$cal" ]; then
  "$FABRICSIM" train "$T" "$W/llama2-7b.yaml" --tp=2 --pp=2 --sequence-parallel --json \
    --calibration "$cal" >"$tmp/cal.json" || fail "--calibration run failed"
  python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); assert a["step_time_s"] != b["step_time_s"]' \
    "$tmp/a.json" "$tmp/cal.json" || fail "--calibration changed nothing"
fi

# Seed: ResNet-50 on 4 GPUs, PCIe switch vs NVLink mesh (same chassis):
# NVLink exposes less gradient reduction and gives a shorter step.
TP="$FS_SOURCE_ROOT/topologies"
for box in pcie-gen3-4gpu v100-nvlink-4gpu; do
  "$FABRICSIM" train "$TP/$box.yaml" "$W/resnet50-dp.yaml" --global-batch-size=128 --json \
    >"$tmp/$box.json" || fail "resnet50 on $box"
done
python3 - "$tmp/pcie-gen3-4gpu.json" "$tmp/v100-nvlink-4gpu.json" <<'PY' || fail "resnet50 4-GPU seed"
import json, sys
p, n = (json.load(open(f)) for f in sys.argv[1:3])
assert p["gpus"] == n["gpus"] == 4 and p["layout"]["microbatches"] == 1
dp = lambda d: d["rank_classes"][0]["exposed_comm_ms"]["dp"]
assert 0 < dp(n) < dp(p), (dp(n), dp(p))
assert n["step_time_s"] < p["step_time_s"]
PY

# Tied embeddings across stages: the emb column and JSON key; Megatron's
# --untie-embeddings-and-output-weights removes the all-reduce.
"$FABRICSIM" train "$T" "$W/gpt3-13b.yaml" --pp=2 --global-batch-size=16 >"$tmp/out" 2>/dev/null \
  || fail "gpt3-13b pp 2"
grep -q " emb " "$tmp/out" || fail "no emb column: $(cat "$tmp/out")"
for flag in "" --untie-embeddings-and-output-weights; do
  "$FABRICSIM" train "$T" "$W/gpt3-13b.yaml" --pp=2 --global-batch-size=16 $flag --json \
    >"$tmp/tie$flag.json" 2>/dev/null || fail "gpt3-13b pp 2 $flag"
done
python3 - "$tmp/tie.json" "$tmp/tie--untie-embeddings-and-output-weights.json" <<'PY' || fail "tied embeddings"
import json, sys
t, u = (json.load(open(f)) for f in sys.argv[1:3])
emb = lambda d: [c["exposed_comm_ms"]["emb"] for c in d["rank_classes"]]
assert all(e > 0 for e in emb(t)), emb(t)
assert all(e == 0 for e in emb(u)), emb(u)
PY

# The schedule table is listed.
"$FABRICSIM" train --list-schedules | grep -q "interleaved" || fail "--list-schedules"
echo "ok"
