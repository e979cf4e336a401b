#!/usr/bin/env bash
# test-chakra.sh — `fabricsim replay --chakra` and `train --chakra-out`: every
# trace of tests/data/chakra (the examples and the public ASTRA-sim text
# workloads of text/) replays with the README's command; the
# report says how compute was timed; --json; bad files exit 2 with a located
# one-line error; the train → Chakra → replay round trip gives the same step
# time to the picosecond and the same bytes when written again.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T="$FS_SOURCE_ROOT/topologies/dgx-h100.yaml"
D="$FS_TEST_DATA/chakra"

for t in all_reduce_8r_1MiB all_gather_8r_1MiB reduce_scatter_8r_1MiB \
         all_to_all_8r_1MiB ring_allreduce_8r_1MiB; do
  "$FABRICSIM" replay "$T" --chakra "$D/$t" >"$tmp/out" || fail "$t did not replay"
  grep -q "makespan" "$tmp/out" || fail "$t: no makespan"
  grep -q "timed by the trace" "$tmp/out" || fail "$t: the report does not say how compute was timed"
done
# The public ASTRA-sim text workloads (tests/data/chakra/text), with the README's
# commands (default max-min flows), every GPU a rank.  Expected (README there):
# a microbenchmark takes what `fabricsim coll --exact` reports for its
# collective, to the picosecond (nccl-tests sizes: an all-gather's is 8
# blocks); ResNet-50 takes its kernels' chain plus conv1's all-reduce
# (37,632 bytes), also from `coll`; the MLPs end less than 1 ms after their
# kernels' sum (the exact figures, with analytic flows, are in tests/test-chakra.c).
coll_ps() {
  "$FABRICSIM" coll "$T" --exact -o "$1" -b "$2" -e "$2" --json |
    python3 -c 'import json, sys; print(round(json.load(sys.stdin)["results"][0]["time_us"] * 1e6))'
}
while read -r t colls compute_us op size; do
  "$FABRICSIM" replay "$T" --chakra "$D/text/$t.txt" --json >"$tmp/$t.json" \
    || fail "$t did not replay"
  want=0
  [ "$op" = - ] || want=$(( compute_us * 1000000 + $(coll_ps "$op" "$size") ))
  python3 - "$tmp/$t.json" "$colls" "$compute_us" "$want" <<'PY' || fail "$t: $(head -c 300 "$tmp/$t.json")"
import json, sys
d = json.load(open(sys.argv[1])); colls = int(sys.argv[2]); compute = int(sys.argv[3]) * 10**6
want = int(sys.argv[4])
assert len(d["ranks"]) == 8 and d["chakra"]["collectives"] == colls, d["chakra"]
assert d["chakra"]["compute_timed_by_model"] == 0
if want:
    assert d["makespan_ps"] == want, (d["makespan_ps"], want)
else:
    assert 0 < d["makespan_ps"] - compute < 10**9, (d["makespan_ps"], compute)
PY
done <<'LIST'
AllReduce_64KB 8 0 all_reduce 65536
AllGather_1MB 8 0 all_gather 8388608
ReduceScatter_1MB 8 0 reduce_scatter 1048576
AllToAll_512KB 8 0 alltoall 524288
MLP_ModelParallel 88 195206 - -
MLP_HybridParallel_Data_Model 136 236649 - -
Resnet50_DataParallel 432 1082450 all_reduce 37632
LIST
"$FABRICSIM" replay "$T" --chakra "$D/text/Resnet50_DataParallel.txt" --json >"$tmp/again.json"
cmp -s "$tmp/again.json" "$tmp/Resnet50_DataParallel.json" || fail "a text workload replays differently twice"

# The files given one by one, in any order: ranks come from the names.
"$FABRICSIM" replay "$T" --chakra "$D"/all_reduce_8r_1MiB/all_reduce.{7,6,5,4,3,2,1,0}.json --json \
  >"$tmp/a.json" || fail "files one by one"
"$FABRICSIM" replay "$T" --chakra "$D/all_reduce_8r_1MiB" --json >"$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || fail "a folder and its files differ"
python3 - "$tmp/a.json" <<'PY' || fail "json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["chakra"]["collectives"] == 8 and d["makespan_ps"] > 0
PY

# Bad inputs: exit 2, one line, naming the file.
for f in "$D"/n_*; do
  case "$f" in *.err) continue ;; esac
  set +e
  "$FABRICSIM" replay "$T" --chakra "$f" >/dev/null 2>"$tmp/err"
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "$f: exit $rc, expected 2"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$f: not one line"
  grep -qF "$(cat "$f.err")" "$tmp/err" || fail "$f: $(cat "$tmp/err")"
done
set +e
"$FABRICSIM" replay "$T" --chakra "$tmp/none" >/dev/null 2>&1; rc=$?
"$FABRICSIM" replay "$T" "$D/all_reduce_8r_1MiB" --skip-unknown >/dev/null 2>&1; rc2=$?
set -e
[ "$rc" -eq 2 ] && [ "$rc2" -eq 2 ] || fail "missing folder / --skip-unknown alone: $rc $rc2"

# Round trip and determinism.
W="$FS_SOURCE_ROOT/workloads/llama2-7b.yaml"
"$FABRICSIM" train "$T" "$W" --tp=1 --pp=8 --global-batch-size=16 --framework-launch=off --chakra-out "$tmp/s1" --json >"$tmp/t.json"
"$FABRICSIM" train "$T" "$W" --tp=1 --pp=8 --global-batch-size=16 --framework-launch=off --chakra-out "$tmp/s2" >/dev/null
for r in 0 1 2 3 4 5 6 7; do
  cmp -s "$tmp/s1/step.$r.et" "$tmp/s2/step.$r.et" || fail "step.$r.et differs between two runs"
done
"$FABRICSIM" replay "$T" --chakra "$tmp/s1" --json >"$tmp/r.json"
python3 - "$tmp/t.json" "$tmp/r.json" <<'PY' || fail "round trip"
import json, sys
t = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
assert t["step_time_ps"] == r["makespan_ps"], (t["step_time_ps"], r["makespan_ps"])
assert r["chakra"]["compute_timed_by_model"] == 0
PY
# Data parallelism: the mirrored replicas are written too.
"$FABRICSIM" train "$T" "$W" --tp=1 --pp=2 --global-batch-size=16 --framework-launch=off --chakra-out "$tmp/s4" --json >"$tmp/t4.json"
[ -f "$tmp/s4/step.7.et" ] || fail "dp 4: no file for rank 7"
"$FABRICSIM" replay "$T" --chakra "$tmp/s4" --json >"$tmp/r4.json"
python3 - "$tmp/t4.json" "$tmp/r4.json" <<'PY' || fail "round trip with dp 4"
import json, sys
t = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
assert t["step_time_ps"] == r["makespan_ps"], (t["step_time_ps"], r["makespan_ps"])
assert len(r["ranks"]) == 8
PY
set +e
"$FABRICSIM" train "$T" "$W" --tp=8 --global-batch-size=16 --chakra-out "$tmp/s3" >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "timed alone" "$tmp/err" || fail "tp=8 --chakra-out: exit $rc"
[ ! -e "$tmp/s3" ] || fail "a refused --chakra-out wrote files"
echo "ok"
