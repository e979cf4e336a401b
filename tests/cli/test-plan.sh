#!/usr/bin/env bash
# test-plan.sh — `fabricsim plan`: Llama 2 7B on 8–16 H100 (two DGX H100
# fabrics) with a step-time target: the ranked text with its reasons, the
# JSON schema and its arithmetic ($ per step from $/GPU-hour, the search
# counts adding up), CSV, the same bytes on 1 and 2 threads, exit 1 with
# the closest designs or the peak-FLOP/s bound when nothing meets the
# target, the search-size limits, Ctrl-C, and bad inputs exiting 2.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T="$FS_SOURCE_ROOT/topologies"
W="$FS_SOURCE_ROOT/workloads/llama2-7b.yaml"

# A small search: 256 sequences per step, tp 1 or 8, pp 1 or 2, micro-batch 2.
plan() {
  "$FABRICSIM" plan --workload "$W" --fabric "$T/dgx-h100-ib-ndr.yaml" --fabric "$T/dgx-h100-roce.yaml" \
    --gpus 8-16 --tp 1,8 --pp 1,2 --micro-batch 2 --set training.global_batch=256 \
    --gpu-hour-price 2.5 --pue 1.2 --tokens 100G -q "$@"
}

# Two threads here, one below: the text must not depend on them.
plan --target-step-time 5s -j 2 >"$tmp/out" 2>"$tmp/err" || fail "plan exited $?: $(cat "$tmp/err")"
out=$(cat "$tmp/out")
contains "$out" "#1  dgx-h100-ib-ndr, 16 × h100-sxm (2 nodes): tp 1, pp 1, dp 16" "winner"
contains "$out" "why: TP1" "reason"
contains "$out" "no list price in the catalog for nvswitch-gen3 ×8" "unpriced parts"
# Every part with what it costs and draws: NICs priced and powered, the
# InfiniBand switches powered only, NVSwitch chips neither.
contains "$out" "parts: connectx-7 ×16 \$35008, 0.398 kW; h100-sxm ×16 \$480000, 11.2 kW;" "parts line"
contains "$out" "quantum-2-ndr ×12 no price, 8.96 kW" "switch power"
contains "$out" "nvswitch-gen3 ×8 no price, no power" "unknown parts"
contains "$out" "fabric switches whole" "switch share in the cost basis"
contains "$out" "100 G tokens:" "time to train"
[ "$(grep -c '^#[0-9]' "$tmp/out")" -eq 5 ] || fail "expected the top 5 designs"
# TP8 designs say where their traffic goes.
grep -q "TP8 keeps TP traffic inside a node on NVSwitch (NV18)" "$tmp/out" || fail "TP8 reason"

plan --target-step-time 5s --json -k 0 -j 2 >"$tmp/a.json" || fail "json run"
python3 - "$tmp/a.json" <<'PY' || fail "json checks"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 1
assert d["target"]["step_time_s"] == 5 and d["target"]["tokens_per_s"] is None
assert d["rank_by"] == "cost" and d["cost_inputs"]["pue"] == 1.2
s = d["search"]
assert s["systems"] == 4, s                      # two fabrics × {8, 16} GPUs
assert s["layouts"] == s["pruned_structure"] + s["pruned_memory"] + s["pruned_bound"] + s["simulated"], s
assert s["simulated"] == len(d["designs"]) and s["meets"] > 0
prev = 0
for i, x in enumerate(d["designs"]):
    assert x["rank"] == i + 1
    c = x["cost"]
    sysinfo = d["systems"][x["system"]]
    assert sysinfo["gpus"] == x["gpus"]
    if x["meets_target"]:
        assert x["step_time_s"] <= 5
        assert c["usd_per_mtok"] >= prev; prev = c["usd_per_mtok"]
    assert abs(c["usd_per_step"] - x["gpus"] * 2.5 * x["step_time_s"] / 3600) < 1e-9
    tok = 256 * 4096
    assert abs(c["train_s"] - 100e9 / tok * x["step_time_s"]) < 1e-6 * c["train_s"]
    e = sysinfo["it_power_w"] * 1.2 * x["step_time_s"]
    assert abs(c["energy_j_per_step"] - e) < 1e-6 * e
    assert x["memory_bytes"] <= x["memory_capacity_bytes"]
    assert x["step_time_s"] >= x["peak_bound_step_time_s"]
    assert x["layout"]["tp"] * x["layout"]["pp"] * x["layout"]["dp"] == x["gpus"]
assert d["designs"][0]["meets_target"] and d["designs"][0]["fabric"] == "dgx-h100-ib-ndr"
# Meeting designs come before those that miss.
m = [x["meets_target"] for x in d["designs"]]
assert m == sorted(m, reverse=True), m
# The parts add up to the system's power and capex.
assert d["cost_inputs"]["switch_share"] == "whole"
for sy in d["systems"]:
    ps = sy["parts"]
    assert [p["model"] for p in ps] == sorted(p["model"] for p in ps)
    assert abs(sum(p["power_w"] or 0 for p in ps) - sy["it_power_w"]) < 1e-6 * sy["it_power_w"]
    assert abs(sum(p["price_usd"] or 0 for p in ps) - sy["capex_usd"]) < 1e-6 * sy["capex_usd"]
    nic = [p for p in ps if p["model"] == "connectx-7"][0]
    assert nic["count"] == sy["gpus"] and nic["unit_power_w"] == 24.9 and nic["unit_price_usd"] == 2188
    sw = [p for p in ps if p["fabric_switch"]]
    assert sw and all(p["units"] == p["count"] for p in sw)
PY

# --switch-share ports: fabric switches count the share of their port
# bandwidth in use, so a small system draws less; hosts are unchanged.
plan --target-step-time 5s --json -k 0 --switch-share ports >"$tmp/p.json" || fail "ports run"
python3 - "$tmp/a.json" "$tmp/p.json" <<'PY' || fail "switch share checks"
import json, sys
a, p = (json.load(open(f)) for f in sys.argv[1:])
assert p["cost_inputs"]["switch_share"] == "ports"
for sa, sp in zip(a["systems"], p["systems"]):
    assert sa["fabric"] == sp["fabric"] and sa["gpus"] == sp["gpus"]
    assert sp["it_power_w"] < sa["it_power_w"], (sa, sp)
    for qa, qp in zip(sa["parts"], sp["parts"]):
        if qa["fabric_switch"]:
            assert 0 < qp["units"] < qa["units"], (qa, qp)
            assert abs(qp["power_w"] - qp["units"] * qp["unit_power_w"]) < 1e-9 * qp["power_w"]
        else:
            assert qp == qa
PY
grep -q "fabric switches by the share of their ports in use" <(plan --target-step-time 5s --switch-share ports) \
  || fail "ports cost basis line"

# Threads never change the output: the -j 2 runs above against -j 1 (two
# runs each, so also the same bytes run after run; each plan run simulates
# the whole search: no run twice with the same threads).
plan --target-step-time 5s --json -k 0 -j 1 >"$tmp/b.json"
cmp "$tmp/a.json" "$tmp/b.json" || fail "JSON output differs between -j 2 and -j 1"
plan --target-step-time 5s -j 1 >"$tmp/t1"
cmp "$tmp/out" "$tmp/t1" || fail "text output differs between -j 2 and -j 1"

plan --target-tokens-per-s 200K --csv -k 3 >"$tmp/d.csv" || fail "csv run"
head -1 "$tmp/d.csv" | grep -q "^rank,fabric,gpus,gpu,nodes,tp,pp,dp" || fail "csv header"
[ "$(wc -l <"$tmp/d.csv")" -eq 4 ] || fail "csv rows"
sed -n 2p "$tmp/d.csv" | grep -q "^1,dgx-h100-ib-ndr,16,h100-sxm,2,1,1,16," || fail "csv first row: $(sed -n 2p "$tmp/d.csv")"

# Pipeline schedules are searched when asked: GPipe needs full recompute
# to fit here and loses; interleaving shrinks the bubble.
"$FABRICSIM" plan --workload "$W" --fabric "$T/dgx-h100.yaml" --target-step-time 100 --tp 2 --pp 4 \
  --micro-batch 1 --schedule 1f1b,interleaved,gpipe --set training.global_batch=64 --rank-by time -q \
  >"$tmp/out" || fail "schedules run"
grep -q "^#1 .*pp 4 (interleaved ×2)" "$tmp/out" || fail "interleaved wins: $(grep '^#' "$tmp/out")"
grep -q "^#3 .*pp 4 (gpipe).*recompute full" "$tmp/out" || fail "gpipe last: $(grep '^#' "$tmp/out")"
grep -q "PP4 interleaved ×2 bubble" "$tmp/out" || fail "interleaved reason"

# Other rankings: kWh per million tokens, then fewest GPUs, never decrease.
plan --target-step-time 5s --json -k 0 --rank-by energy >"$tmp/e.json"
plan --target-step-time 5s --json -k 0 --rank-by gpus >"$tmp/g.json"
python3 - "$tmp/e.json" "$tmp/g.json" <<'PY' || fail "rank-by checks"
import json, sys
e = [x for x in json.load(open(sys.argv[1]))["designs"] if x["meets_target"]]
k = [x["cost"]["kwh_per_mtok"] for x in e]
assert k == sorted(k), k
g = [x for x in json.load(open(sys.argv[2]))["designs"] if x["meets_target"]]
assert [x["gpus"] for x in g] == sorted(x["gpus"] for x in g)
PY

# A budget nobody meets: the cost of training 100 G tokens is far above $1.
set +e
plan --target-step-time 5s --budget 1 >"$tmp/out" 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "budget exited $rc"
grep -q "No design meets the target within budget" "$tmp/out" || fail "budget header"
grep -q "no design meets the target within the budget" "$tmp/err" || fail "budget message: $(cat "$tmp/err")"
grep -q "over budget" "$tmp/out" || fail "budget reason"

# Nothing meets 3 s: exit 1, the closest designs on stdout, the reason on stderr.
set +e
plan --target-step-time 3s >"$tmp/out" 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "unreachable target exited $rc"
grep -q "No design meets the target; the closest:" "$tmp/out" || fail "closest header"
grep -q "the closest, #1 above, takes 4" "$tmp/err" || fail "closest message: $(cat "$tmp/err")"
# 0.5 s is out of reach even at peak FLOP/s.
set +e
plan --target-step-time 500ms >"$tmp/out" 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "bound exited $rc"
grep -q "even at peak FLOP/s the best layout that fits needs" "$tmp/err" || fail "bound message: $(cat "$tmp/err")"

# The search-size limit is a runtime error naming the override.
set +e
plan --target-step-time 5s --max-candidates 2 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "limit exited $rc"
grep -q "above the limit of 2.*--max-candidates" "$tmp/err" || fail "limit message: $(cat "$tmp/err")"
# The default bound comes from FABRICSIM_MAX_CANDIDATES when set; a value
# that is not a positive number is ignored with a warning.
set +e
FABRICSIM_MAX_CANDIDATES=3 plan --target-step-time 5s 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "FABRICSIM_MAX_CANDIDATES=3 exited $rc"
grep -q "above the limit of 3.*FABRICSIM_MAX_CANDIDATES" "$tmp/err" || fail "env limit: $(cat "$tmp/err")"
set +e
FABRICSIM_MAX_CANDIDATES=0x10 plan --target-step-time 500ms >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "bad FABRICSIM_MAX_CANDIDATES exited $rc"
grep -q 'ignoring FABRICSIM_MAX_CANDIDATES="0x10"' "$tmp/err" || fail "bad env value: $(cat "$tmp/err")"
grep -q "even at peak FLOP/s" "$tmp/err" || fail "bad env value, bound: $(cat "$tmp/err")"

set +e
"$FABRICSIM" plan --workload "$W" --fabric "$T/dgx-h100-ib-ndr.yaml" --target-step-time 5s \
  --gpus 8-100000 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "systems limit exited $rc"
grep -q "spans 12500 fabric × GPU-count systems, above the limit of 64.*--max-systems" "$tmp/err" \
  || fail "systems limit message: $(cat "$tmp/err")"

# Ctrl-C: exit 130, nothing on stdout, one line saying how far it got.
# (One signal to the process: `timeout` also signals its process group, and
# a second SIGINT after the first was handled kills at once, by design.)
rc=0
"$FABRICSIM" plan --workload "$W" --fabric "$T/dgx-h100-ib-ndr.yaml" \
  --gpus 8-32 --target-step-time 20s -q >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 2
kill -INT $pid
wait $pid || rc=$?
[ $rc -eq 130 ] || fail "SIGINT exited $rc: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "an interrupted plan printed a ranking"
grep -Eq "^fabricsim plan: interrupted after [0-9]+ of [0-9]+ designs; nothing written$" "$tmp/err" \
  || fail "SIGINT message: $(cat "$tmp/err")"

# Bad inputs: exit 2 and one line on stderr.
bad() {
  local want=$1; shift
  set +e
  "$FABRICSIM" plan "$@" >/dev/null 2>"$tmp/err"; local rc=$?
  set -e
  [ $rc -eq 2 ] || fail "plan $* exited $rc, expected 2"
  grep -q -- "$want" "$tmp/err" || fail "plan $*: stderr lacks '$want': $(cat "$tmp/err")"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "plan $*: more than one line on stderr"
}
F="$T/dgx-h100-ib-ndr.yaml"
bad "--workload FILE is required" --fabric "$F" --target-step-time 5s
bad "at least one --fabric" --workload "$W" --target-step-time 5s
bad "exactly one of" --workload "$W" --fabric "$F"
bad "exactly one of" --workload "$W" --fabric "$F" --target-step-time 5s --target-tokens-per-s 1M
bad "--target-step-time expects a time" --workload "$W" --fabric "$F" --target-step-time fast
bad "--gpus expects a list" --workload "$W" --fabric "$F" --target-step-time 5s --gpus 16-8
bad "--rank-by expects" --workload "$W" --fabric "$F" --target-step-time 5s --rank-by speed
bad "--switch-share expects whole or ports" --workload "$W" --fabric "$F" --target-step-time 5s --switch-share half
bad "--recompute expects" --workload "$W" --fabric "$F" --target-step-time 5s --recompute some
bad "--pue" --workload "$W" --fabric "$F" --target-step-time 5s --pue x
bad "PUE 1 to 10" --workload "$W" --fabric "$F" --target-step-time 5s --pue 0.5
bad "plan sets \`nodes\` itself" --workload "$W" --fabric "$F" --target-step-time 5s -D nodes=2
bad "multiples of 8 GPUs" --workload "$W" --fabric "$F" --target-step-time 5s --gpus 12
bad "8 GPUs only" --workload "$W" --fabric "$T/dgx-h100.yaml" --target-step-time 5s --gpus 16
bad "--schedule expects" --workload "$W" --fabric "$F" --target-step-time 5s --schedule zigzag
bad "--vp must be" --workload "$W" --fabric "$F" --target-step-time 5s --vp 1
bad "unexpected argument" --workload "$W" --fabric "$F" --target-step-time 5s --tp=2 extra
# No price for a V100: ranking by cost needs --gpu-hour-price.
bad "give --gpu-hour-price" --workload "$W" --fabric "$T/dgx-1-v100.yaml" --target-step-time 5s
# File errors carry file:line:col.
printf 'name: x\nmodel: llama2-7b\ntraining:\n  global_batch: many\n' >"$tmp/w.yaml"
bad "w.yaml:4:17:" --workload "$tmp/w.yaml" --fabric "$F" --target-step-time 5s
printf 'name: t\nhosts:\n  - template: nope\n' >"$tmp/t.yaml"
bad "t.yaml:3:" --workload "$W" --fabric "$tmp/t.yaml" --target-step-time 5s
bad "override" --workload "$W" --fabric "$F" --target-step-time 5s --set parallel.tp=x
echo "plan: ok"
