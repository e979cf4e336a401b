#!/usr/bin/env bash
# test-scenario.sh — every simulating command builds its world through one
# scenario (src/scenario/scenario.h), so an option or an NCCL_* variable
# means the same in each:
#   - NCCL_ALGO changes coll, train, replay, sweep and plan (train and the
#     others ignored it before the scenario), and a bad NCCL_ALGO is the same
#     one-line error, exit 2, in every command that tunes collectives;
#   - --calibration is taken by every simulating command (sweep had none),
#     and a bad file is the same error everywhere; in sweep it changes a
#     train point as it changes `fabricsim train`;
#   - one collective gets the same answer in every command: an all-reduce
#     takes the same time in coll and replay under --calibration, NCCL_ALGO
#     and NCCL_PROTO; an NCCL_ALGO that leaves all_gather no algorithm is
#     the same error in coll, train, replay, plan and sweep;
#   - validate's nccl-tests tables run in the scenario's world: a table with
#     `algorithm: default` follows NCCL_ALGO, NCCL_PROTO and --calibration
#     as coll does (the same time), with a note; a pinned algorithm wins;
#   - coll --trace runs with the tuner inputs of the table it traces
#     (--algo, NCCL_ALGO), where it used to ignore them;
#   - --quiet is accepted by every simulating command, and with stderr not
#     a terminal no progress line is written.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T="$FS_SOURCE_ROOT/topologies"
W="$FS_SOURCE_ROOT/workloads"
CAL="$FS_SOURCE_ROOT/validation/results/h100-2026-11-23-repeat.json"
BADCAL="$FS_TEST_DATA/calibration/n_peak_string.json"
cd "$tmp"

# A small training job: llama2-7b on two DGX H100 (IB), tp 4, pp 2, dp 4.
TR=(train "$T/dgx-h100-ib-ndr.yaml" "$W/llama2-7b.yaml" --tp=4 --pp=2 --num-layers=8
    --global-batch-size=64)
ALGO="ring;allreduce:tree"

# ---- NCCL_ALGO ------------------------------------------------------------

"$FABRICSIM" "${TR[@]}" --json >a.json || fail "train exited $?"
NCCL_ALGO="$ALGO" "$FABRICSIM" "${TR[@]}" --json >b.json || fail "NCCL_ALGO train exited $?"
python3 - a.json b.json <<'PY' || fail "NCCL_ALGO=ring;allreduce:tree left train's step time unchanged"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["step_time_ps"] != b["step_time_ps"], (a["step_time_ps"], b["step_time_ps"])
PY
# Same variable, same effect in coll: the all-reduce runs as a tree.
out=$(NCCL_ALGO="$ALGO" "$FABRICSIM" coll "$T/dgx-h100-ib-ndr.yaml" -b 64M -e 64M)
contains "$out" "# tree/" "NCCL_ALGO in coll"
# replay: the trace's all-reduces follow NCCL_ALGO too.
RTOPO="$T/dgx-h100.yaml"
NCCL_ALGO="Ring" "$FABRICSIM" replay "$RTOPO" "$W/traces/allreduce-7b-fp32.json" --json >rb.json
NCCL_ALGO="Tree" "$FABRICSIM" replay "$RTOPO" "$W/traces/allreduce-7b-fp32.json" --json >rc.json
python3 - rb.json rc.json <<'PY' || fail "NCCL_ALGO changed nothing in replay"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["makespan_ps"] != b["makespan_ps"], a["makespan_ps"]
PY
# sweep: a coll point's tuner starts from NCCL_ALGO (the point's algo: wins).
cat >coll.yaml <<EOF
name: scenario-coll
kind: coll
set: {topology: $T/dgx-h100-ib-ndr.yaml, op: all_reduce, size: 64M}
list:
  - {dtype: float}
EOF
"$FABRICSIM" sweep coll.yaml -q -j 1 >s1.csv || fail "sweep exited $?"
NCCL_ALGO="$ALGO" "$FABRICSIM" sweep coll.yaml -q -j 1 >s2.csv || fail "NCCL_ALGO sweep exited $?"
contains "$(cat s2.csv)" ",tree," "NCCL_ALGO in sweep"
cmp -s s1.csv s2.csv && fail "NCCL_ALGO changed nothing in sweep"
# A bad NCCL_ALGO: one line, exit 2, the same message in every command that tunes.
for cmd in "coll $T/dgx-h100.yaml -b 1M -e 1M" "${TR[*]}" \
           "replay $RTOPO $W/traces/allreduce-7b-fp32.json" "sweep coll.yaml -q -j 1" \
           "explain coll $T/dgx-h100.yaml" \
           "plan --workload $W/llama2-7b.yaml --fabric $T/dgx-h100.yaml --target-step-time 100 -q" \
           "calibrate nccl-tests --simulate --topo $T/dgx-h100.yaml $FS_TEST_DATA/nccl-tests/y_dgxh100_g8_2.13.txt"; do
  set +e
  # shellcheck disable=SC2086
  err=$(NCCL_ALGO="Ring,Bogus" "$FABRICSIM" $cmd 2>&1 >/dev/null)
  st=$?
  set -e
  [ "$st" -eq 2 ] || fail "NCCL_ALGO=Ring,Bogus: '$cmd' exited $st, expected 2"
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "'$cmd': not one line: $err"
  contains "$err" 'NCCL_ALGO "Ring,Bogus": unknown name "Bogus"' "'${cmd%% *}'"
done

# An NCCL_ALGO that leaves all_gather no algorithm (Tree runs all-reduce
# only) is the same error wherever an all_gather runs: coll, train (sequence
# parallelism gathers), replay, plan (the design fails) and sweep (the point's
# row).
AG="no allowed algorithm and protocol can run all_gather on 8 ranks"
python3 - "$tmp/ag.json" <<'PY'
import json, sys
ops = [{"id": f"g{r}", "rank": r, "kind": "all_gather", "comm": "w", "bytes": "64K"} for r in range(8)]
json.dump({"schema_version": 1, "nranks": 8, "communicators": [{"name": "w", "ranks": list(range(8))}],
           "ops": ops}, open(sys.argv[1], "w"))
PY
for cmd in "coll $T/dgx-h100.yaml -o all_gather -b 1M -e 1M" \
           "train $T/dgx-h100.yaml $W/llama2-7b.yaml --tp=8 --sequence-parallel --num-layers=2 --global-batch-size=8" \
           "replay $T/dgx-h100.yaml $tmp/ag.json"; do
  set +e
  # shellcheck disable=SC2086
  err=$(NCCL_ALGO=Tree "$FABRICSIM" $cmd 2>&1 >/dev/null)
  st=$?
  set -e
  [ "$st" -eq 2 ] || fail "NCCL_ALGO=Tree: '${cmd%% *}' all_gather exited $st, expected 2"
  contains "$err" "$AG" "NCCL_ALGO=Tree in '${cmd%% *}'"
done
PL=(plan --workload "$W/llama2-7b.yaml" --fabric "$T/dgx-h100.yaml" --target-step-time 100 --tp 8
    --pp 1 --micro-batch 1 --set training.global_batch=64 -q --json)
"$FABRICSIM" "${PL[@]}" >plan-free.json || fail "plan exited $?"
contains "$(cat plan-free.json)" '"meets": 1' "the plan without NCCL_ALGO"
set +e
NCCL_ALGO=Tree "$FABRICSIM" "${PL[@]}" >plan-tree.json 2>/dev/null
set -e
contains "$(cat plan-tree.json)" "simulation failed: $AG" "NCCL_ALGO=Tree in plan"
cat >ag.yaml <<EOF
name: scenario-all-gather
kind: coll
set: {topology: $T/dgx-h100.yaml, op: all_gather, size: 1M}
list:
  - {dtype: float}
EOF
NCCL_ALGO=Tree "$FABRICSIM" sweep ag.yaml -q -j 1 >ag.csv || fail "NCCL_ALGO=Tree sweep exited $?"
contains "$(cat ag.csv)" ",error,,,,,,,,,$AG" "NCCL_ALGO=Tree in sweep"

# ---- --calibration ---------------------------------------------------------

# Every simulating command takes it; a bad file is the same error in each.
for cmd in "coll $T/dgx-h100.yaml -b 1M -e 1M" "${TR[*]}" "p2p $T/dgx-h100.yaml" \
           "flows $T/dgx-h100.yaml $FS_TEST_DATA/flows/y_dgx_h100_basic.csv" \
           "replay $RTOPO $W/traces/allreduce-7b-fp32.json" "sweep coll.yaml -q -j 1" \
           "plan --workload $W/llama2-7b.yaml --fabric $T/dgx-h100.yaml --target-step-time 100 -q" \
           "validate" "calibrate nccl-tests --topo $T/dgx-h100.yaml $FS_TEST_DATA/nccl-tests/y_dgxh100_g8_2.13.txt"; do
  set +e
  # shellcheck disable=SC2086
  err=$("$FABRICSIM" $cmd --calibration "$BADCAL" 2>&1 >/dev/null)
  st=$?
  set -e
  [ "$st" -eq 2 ] || fail "bad --calibration: '${cmd%% *}' exited $st, expected 2"
  contains "$err" "n_peak_string.json:15:43:" "bad --calibration in '${cmd%% *}'"
done
# sweep --calibration changes a train point as --calibration changes train.
cat >train.yaml <<EOF
name: scenario-train
kind: train
set: {topology: $T/dgx-h100.yaml, workload: $W/llama2-7b.yaml, tp: 2, pp: 2, num_layers: 8}
list:
  - {global_batch_size: 32}
EOF
"$FABRICSIM" sweep train.yaml -q -j 1 --format json >t1.json || fail "train sweep exited $?"
"$FABRICSIM" sweep train.yaml -q -j 1 --format json --calibration "$CAL" >t2.json ||
  fail "sweep --calibration exited $?"
"$FABRICSIM" train "$T/dgx-h100.yaml" "$W/llama2-7b.yaml" --tp=2 --pp=2 --num-layers=8 \
  --global-batch-size=32 --json --calibration "$CAL" >t3.json || fail "train --calibration exited $?"
python3 - t1.json t2.json t3.json <<'PY' || fail "sweep --calibration: not train --calibration's step"
import json, sys
def step(doc):
    return float(doc["points"][0]["results"]["step_time_s"])
t1, t2 = (step(json.load(open(f))) for f in sys.argv[1:3])
t3 = json.load(open(sys.argv[3]))["step_time_s"]
assert t1 != t2, "calibration changed nothing"
assert abs(t2 - t3) <= 1e-6 * t3, (t2, t3)
PY

# One all-reduce takes the same time in coll and in replay (within 0.1 %)
# under each setting — none, --calibration, NCCL_ALGO=Tree, NCCL_PROTO=Simple —
# and each setting changes it.
python3 - "$tmp/ar.json" <<'PY'
import json, sys
ops = [{"id": f"a{r}", "rank": r, "kind": "all_reduce", "comm": "w", "bytes": "64K"} for r in range(8)]
json.dump({"schema_version": 1, "nranks": 8, "communicators": [{"name": "w", "ranks": list(range(8))}],
           "ops": ops}, open(sys.argv[1], "w"))
PY
# coll_and WHAT OUT [VAR=VALUE...] -- [OPTION...]: the all-reduce's time in coll and in WHAT
# (replay: of $tmp/ar.json; validate: of the table vt.csv, written below) into OUT
# ("coll_us other_us"); the two agree within 0.1 %.
coll_and() {
  local what=$1 out=$2 envs=()
  shift 2
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$FABRICSIM" coll "$T/dgx-h100.yaml" -b 64K -e 64K --json "$@" >c.json
  case $what in
    replay) env "${envs[@]}" "$FABRICSIM" replay "$T/dgx-h100.yaml" "$tmp/ar.json" --json "$@" >o.json ;;
    validate) env "${envs[@]}" "$FABRICSIM" validate -q --json vt.csv "$@" >o.json ;;
  esac
  python3 - "$what" c.json o.json "$out" <<'PY' || fail "coll and $what disagree on one all-reduce (${envs[*]} $*)"
import json, sys
c = json.load(open(sys.argv[2]))["results"][0]["time_us"]
o = json.load(open(sys.argv[3]))
o = o["makespan_ps"] / 1e6 if sys.argv[1] == "replay" else o["tables"][0]["rows"][0]["predicted"]
assert abs(c - o) <= 1e-3 * c, (c, o)
open(sys.argv[4], "w").write(f"{c} {o}\n")
PY
}
coll_and replay t0 --
coll_and replay t1 -- --calibration "$CAL"
coll_and replay t2 NCCL_ALGO=Tree --
coll_and replay t3 NCCL_PROTO=Simple --
for t in t1 t2 t3; do cmp -s t0 "$t" && fail "setting $t changed nothing in coll and replay"; done

# validate's nccl-tests kind runs in the scenario's world: an `algorithm:
# default` table follows NCCL_ALGO, NCCL_PROTO and --calibration as coll does
# (the same all-reduce, the same time within 0.1 %; each setting changes
# it), with a note naming the variables; a table that pins its algorithm
# keeps it under NCCL_ALGO; a bad NCCL_ALGO is refused.
# vtable FILE ALGORITHM: a one-row table of that all-reduce.
vtable() {
  cat >"$1" <<EOF
# source: tests/cli/test-scenario.sh
# kind: nccl-tests
# topology: $T/dgx-h100.yaml
# collective: all_reduce
# ranks: 8
# algorithm: $2
# bar: time within 1000%
size_bytes,oop_time_us,oop_busbw_GBps
65536,10,1
EOF
}
vtable vt.csv default
vtable vring.csv ring
coll_and validate v0 --
coll_and validate v1 -- --calibration "$CAL"
coll_and validate v2 NCCL_ALGO=Tree --
coll_and validate v3 NCCL_PROTO=Simple --
for t in v1 v2 v3; do cmp -s v0 "$t" && fail "setting $t changed nothing in coll and validate"; done
# The note: the tables were measured without the variables.
out=$(NCCL_ALGO=Tree NCCL_PROTO=Simple "$FABRICSIM" validate -q vt.csv)
contains "$out" "note: the NCCL_* variables set here (NCCL_ALGO=Tree NCCL_PROTO=Simple) apply" \
  "validate's note"
case "$("$FABRICSIM" validate -q vt.csv)" in *"note: the NCCL_"*) fail "a note without NCCL_*";; esac
# NCCL_BUFFSIZE changes the NCCL constants (fs_nccl_params_apply_environ), so the note names it.
out=$(NCCL_BUFFSIZE=8388608 "$FABRICSIM" validate -q vt.csv)
contains "$out" "note: the NCCL_* variables set here (NCCL_BUFFSIZE=8388608) apply" "validate's note, NCCL_BUFFSIZE"
# A pinned algorithm wins over NCCL_ALGO: ring under NCCL_ALGO=Tree is ring.
"$FABRICSIM" validate -q --json vring.csv >r0.json
NCCL_ALGO=Tree "$FABRICSIM" validate -q --json vring.csv >r1.json
python3 - r0.json r1.json <<'PY' || fail "NCCL_ALGO=Tree changed a table that pins ring"
import json, sys
a, b = (json.load(open(f))["tables"][0]["rows"][0]["predicted"] for f in sys.argv[1:3])
assert a == b, (a, b)
PY
set +e
err=$(NCCL_ALGO=Bogus "$FABRICSIM" validate -q vt.csv 2>&1 >/dev/null)
st=$?
set -e
[ "$st" -eq 2 ] || fail "NCCL_ALGO=Bogus validate exited $st, expected 2"
contains "$err" 'NCCL_ALGO "Bogus"' "NCCL_ALGO=Bogus in validate"

# ---- coll --trace: the table's tuner inputs ----------------------------------

"$FABRICSIM" coll "$T/dgx-h100.yaml" -b 1G -e 1G --trace tr0.json >c0.txt
"$FABRICSIM" coll "$T/dgx-h100.yaml" -b 1G -e 1G --algo ring --trace tr1.json >c1.txt
NCCL_ALGO=Ring "$FABRICSIM" coll "$T/dgx-h100.yaml" -b 1G -e 1G --trace tr2.json >c2.txt
contains "$(cat c0.txt)" "# nvls/" "the tuner's own pick at 1G"
contains "$(cat c1.txt)" "# ring/" "--algo ring"
cmp -s tr0.json tr1.json && fail "coll --trace ignored --algo ring"
cmp -s tr0.json tr2.json && fail "coll --trace ignored NCCL_ALGO=Ring"

# ---- --quiet, progress ------------------------------------------------------

# stderr is not a terminal here: no progress line (nothing on stderr at all).
"$FABRICSIM" "${TR[@]}" --quiet >/dev/null 2>err1 || fail "train --quiet exited $?"
"$FABRICSIM" "${TR[@]}" >/dev/null 2>err2 || fail "train exited $?"
[ ! -s err1 ] && [ ! -s err2 ] || fail "progress or noise on a non-terminal stderr: $(cat err1 err2)"
# validate: one simulated table (the whole set takes a minute: it is
# test-validate.sh's and test-train-accuracy.c's).
for cmd in "coll $T/dgx-h100.yaml -b 1M -e 1M" "p2p $T/dgx-h100.yaml -g 2" \
           "flows $T/dgx-h100.yaml $FS_TEST_DATA/flows/y_dgx_h100_basic.csv" \
           "replay $RTOPO $W/traces/allreduce-7b-fp32.json" \
           "validate h100_hgx_allreduce_8gpu_g8_nvls_azure" \
           "calibrate nccl-tests --topo $T/dgx-h100.yaml $FS_TEST_DATA/nccl-tests/y_dgxh100_g8_2.13.txt"; do
  # shellcheck disable=SC2086
  "$FABRICSIM" $cmd -q >/dev/null 2>err || fail "'$cmd -q' exited $?: $(cat err)"
done
echo "cli scenario: ok"
