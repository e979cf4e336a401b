#!/usr/bin/env bash
# test-limits.sh — the limits of the clock, the integers and the physics
# (issue 21, "wrong numbers without an error"; issue 19 item 4): a run past
# the simulated clock's range (int64 ps, about 106 days) stops with exit 1
# and one line naming the limit, in p2p, coll and flows; a transfer shorter
# than that but longer than the old 4,000,000 s cap finishes at its true
# time at no more than the link's rate; absurd calibration figures are
# refused where they stand (exit 2); `topo check` refuses GPUs that cannot
# reach each other unless --allow-disconnected; the plan-step guard says
# which guard it is and how to lift it (FABRICSIM_MAX_STEPS), the flow
# guard an alltoall's step run (FABRICSIM_MAX_FLOWS); plan's
# amounts (tokens, dollars, years) stop at 10^15.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T="$FS_SOURCE_ROOT/topologies/dgx-h100.yaml"
CLOCK="simulated time exceeds the clock's range (int64 picoseconds: at most 9223372.036 s, about 106 days)"

# expect RC FRAGMENT CMD...: runs CMD, checks its status, that stderr is
# one line and holds FRAGMENT, and that stdout printed no time.
expect() {
  local want="$1" frag="$2" rc=0
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" -eq "$want" ] || fail "$*: exit $rc, want $want: $(cat "$tmp/err")"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$*: stderr is not one line: $(cat "$tmp/err")"
  grep -qF -- "$frag" "$tmp/err" || fail "$*: '$(cat "$tmp/err")' lacks '$frag'"
}

# p2p: a 1 EiB host transfer once aborted (SIGTRAP) in src/net/flow.c.
expect 1 "$CLOCK: a transfer of 1 EiB from cpu0 to gpu0 would end past the clock's end" \
  "$FABRICSIM" p2p "$T" -s 1E
# coll: 8 EiB printed a negative time; 4 EiB too.
for b in 8E 4E; do
  expect 1 "$CLOCK: all_reduce of" "$FABRICSIM" coll "$T" -b "$b" -e "$b"
  grep -q -- '-9\.2e' "$tmp/out" && fail "coll -b $b printed a negative time"
done
expect 1 "$CLOCK: all_gather of 1 EiB on 8 ranks" "$FABRICSIM" coll "$T" -o all_gather -b 8E -e 8E
# 1 EiB still fits the clock: a positive time.  (An NVLS plan that size runs
# as streams, past the plan-step guard: 4.4e+12 from the first loops of its
# schedule, about 11 % slow, until its loop counts started where its
# connections' buffers have filled, 2026-11-28, branch gaps19:
# src/collrun/streams.h.)
"$FABRICSIM" coll "$T" -b 1E -e 1E >"$tmp/out" || fail "coll -b 1E failed"
grep -Eq '^1152921504606846976 +288230376151711744 +float +sum +-1 +3\.9e\+12 ' "$tmp/out" \
  || fail "coll -b 1E: $(grep -v '^#' "$tmp/out")"

# flows: 1.6 EiB over one NVLink takes 4.86 M s (once capped at 4 M s, a
# rate above the link's); 3 EiB passes the clock.
printf 'id,start,src,dst,bytes\nlong,0 us,gpu0,gpu1,1600P\n' >"$tmp/long.csv"
"$FABRICSIM" flows "$T" "$tmp/long.csv" --csv >"$tmp/out" || fail "flows 1.6 EiB failed"
python3 - "$tmp/out" <<'PY' || fail "flows 1.6 EiB: $(cat "$tmp/out")"
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
r = rows[0]
finish = int(r["finish_ps"]); rate = float(r["mean_rate_Bps"])
assert 4.8e18 < finish < 4.9e18, finish          # 4,858,252 s, not 4,000,000 s
assert rate <= 370.8e9 * (1 + 1e-9), rate        # never above the NVLink route's rate
PY
expect 1 "$CLOCK: transfer \"past\" (line 3) of 3 EiB would end past the clock's end" \
  "$FABRICSIM" flows "$T" "$FS_TEST_DATA/flows/i_past_clock.csv"

# Calibration bounds: located, exit 2, before anything runs.
C="$FS_TEST_DATA/calibration"
expect 2 'n_fitted_latency_scale.json:3:54: $.fitted.links.nvlink.hw_latency_scale: expected a number from 0.05 to 20.0, got 1e300' \
  "$FABRICSIM" coll "$T" -b 1M -e 1M --calibration "$C/n_fitted_latency_scale.json"
expect 2 '$.fitted.links.nvlink.efficiency: expected a number above 0 and at most 2, got 40' \
  "$FABRICSIM" models --calibration "$C/n_fitted_efficiency.json"

# topo check: two islands of GPUs.
I="$FS_TEST_DATA/topo/i_two_islands.yaml"
expect 2 'i_two_islands.yaml:5:11: GPU "gpu2" cannot reach GPU "gpu0": no chain of links joins them' \
  "$FABRICSIM" topo check "$I"
"$FABRICSIM" topo check --allow-disconnected "$I" >"$tmp/out" 2>"$tmp/err" \
  || fail "topo check --allow-disconnected: $(cat "$tmp/err")"
grep -q '^fabricsim topo: warning: .*GPU "gpu2" cannot reach GPU "gpu0"' "$tmp/err" \
  || fail "no warning: $(cat "$tmp/err")"
grep -q ": valid." "$tmp/out" || fail "topo check --allow-disconnected: $(cat "$tmp/out")"
expect 2 "--allow-disconnected applies to check only" "$FABRICSIM" topo paths --allow-disconnected "$I"

# The plan-step guard names itself and its override; the override lifts it.
expect 1 "the plan-step guard: the ring plan of all_reduce on 8 ranks" \
  env FABRICSIM_MAX_STEPS=100 "$FABRICSIM" coll "$T" -b 64M -e 64M --algo ring
grep -qF "raise the limit (FABRICSIM_MAX_STEPS=N)" "$tmp/err" || fail "no override named: $(cat "$tmp/err")"
FABRICSIM_MAX_STEPS=100000 "$FABRICSIM" coll "$T" -b 64M -e 64M --algo ring >/dev/null \
  || fail "FABRICSIM_MAX_STEPS=100000 did not lift the guard"
# The flow guard stops an alltoall whose step run would hold more transfers
# at once (4,096 GPUs ran out of memory under --exact); without --exact the
# load model times it instead.
N="$FS_SOURCE_ROOT/topologies/dgx-h100-ib-ndr.yaml"
expect 1 "the flow guard: the alltoall on 16 ranks × 2 channels runs as steps with 480 transfers at once, more than 100; drop --exact" \
  env FABRICSIM_MAX_FLOWS=100 "$FABRICSIM" coll "$N" -D nodes=2 -o alltoall -b 1M -e 1M --exact
grep -qF "raise the limit (FABRICSIM_MAX_FLOWS=N)" "$tmp/err" || fail "no override named: $(cat "$tmp/err")"
FABRICSIM_MAX_FLOWS=100 "$FABRICSIM" coll "$N" -D nodes=2 -o alltoall -b 1M -e 1M -q >"$tmp/out" \
  || fail "FABRICSIM_MAX_FLOWS=100 without --exact did not take the load model"
grep -q "direct/" "$tmp/out" || fail "no alltoall row: $(cat "$tmp/out")"
FABRICSIM_MAX_FLOWS=1000 "$FABRICSIM" coll "$N" -D nodes=2 -o alltoall -b 1M -e 1M --exact -q >/dev/null \
  || fail "FABRICSIM_MAX_FLOWS=1000 did not lift the flow guard"
# plan: an amount past 10^15 (--tokens 1e300 printed a 290-digit day count
# and dollar figure) is refused naming the limit; 10^15 itself is taken.
W="$FS_SOURCE_ROOT/workloads/llama2-7b.yaml"
expect 2 "--tokens is 1e300, above the limit of 1e15 (1000 T) for an amount" \
  "$FABRICSIM" plan -w "$W" -f "$T" --target-tokens-per-s 1000 --tokens 1e300
expect 2 "--budget is 2000T, above the limit of 1e15 (1000 T) for an amount" \
  "$FABRICSIM" plan -w "$W" -f "$T" --target-tokens-per-s 1000 --budget 2000T
# One layout (--tp 8 --pp 1 --micro-batch 1): the search's size is not what
# this checks, and its default 30-odd layouts cost 5 s of CPU (15 under ASan).
"$FABRICSIM" plan -w "$W" -f "$T" --target-tokens-per-s 1000 --tokens 1000T -k 1 \
  --tp 8 --pp 1 --micro-batch 1 >"$tmp/out" \
  || fail "plan --tokens 1000T failed"
grep -q "1000 T tokens:" "$tmp/out" || fail "plan --tokens 1000T: $(cat "$tmp/out")"
# A temporary file of the atomic writer left by a killed run (its process
# is gone) is removed by the next run that writes the same output; one of
# a live process, and other files, are kept.
dead=$(sh -c 'echo $$')
touch "$tmp/box.yaml.tmp-$dead-AbC123" "$tmp/box.yaml.tmp-$$-XyZ789" "$tmp/box.yaml.backup"
smi=$(ls "$FS_TEST_DATA"/smi/y_*.txt | head -n 1)
"$FABRICSIM" topo import-smi "$smi" -o "$tmp/box.yaml" 2>/dev/null || fail "import-smi -o failed"
[ -s "$tmp/box.yaml" ] || fail "import-smi wrote nothing"
[ ! -e "$tmp/box.yaml.tmp-$dead-AbC123" ] || fail "a killed run's temporary file was kept"
[ -e "$tmp/box.yaml.tmp-$$-XyZ789" ] || fail "a live process's temporary file was removed"
[ -e "$tmp/box.yaml.backup" ] || fail "an unrelated file was removed"
echo "cli limits: ok"
