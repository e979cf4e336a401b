#!/usr/bin/env bash
# test-replay.sh — `fabricsim replay`: the example trace runs; JSON output;
# the corpus in tests/data/replay (n_ files exit 2 with the .err fragment;
# d_ files deadlock: exit 1 naming ranks and ops); determinism; --trace.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T="$FS_SOURCE_ROOT/topologies/dgx-h100.yaml"
D="$FS_TEST_DATA/replay"

"$FABRICSIM" replay "$T" "$FS_SOURCE_ROOT/workloads/traces/pipeline-2stage.json" >"$tmp/out" \
  || fail "example trace failed"
grep -q "makespan" "$tmp/out" || fail "no makespan"

"$FABRICSIM" replay "$T" "$FS_SOURCE_ROOT/workloads/traces/pipeline-2stage.json" --json \
  --trace "$tmp/t.json" >"$tmp/a.json"
"$FABRICSIM" replay "$T" "$FS_SOURCE_ROOT/workloads/traces/pipeline-2stage.json" --json >"$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || fail "replay is not deterministic"
python3 - "$tmp/a.json" "$tmp/t.json" <<'PY' || fail "json checks"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 1
m = d["makespan_s"] * 1e3
# Rank 1 computes 2+4+2+4 = 12 ms; the makespan covers that plus transfers
# and the 256 MiB all-reduce.
assert m > 12.0
for r in d["ranks"]:
    assert abs(r["compute_ms"] + r["exposed_comm_ms"] + r["idle_ms"] - m) < 1e-6
assert abs(d["ranks"][1]["compute_ms"] - 12.0) < 1e-9
t = json.load(open(sys.argv[2]))
assert any(e["ph"] == "X" for e in t["traceEvents"])
PY

# A compute op of known duration alone: the makespan is exactly it.
cat >"$tmp/one.json" <<'J'
{"schema_version": 1, "nranks": 1, "ops": [{"id": "a", "rank": 0, "kind": "compute", "duration": "1.5 ms"}]}
J
"$FABRICSIM" replay "$T" "$tmp/one.json" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["makespan_ps"] == 1500000000, d' \
  || fail "single op makespan"

# Each op fits the clock but the chain does not: a one-line limit error
# (exit 1), not an overflowed clock.
cat >"$tmp/long.json" <<'J'
{"schema_version": 1, "nranks": 1, "ops": [
 {"id": "a", "rank": 0, "kind": "compute", "duration": "5000000 s"},
 {"id": "b", "rank": 0, "kind": "compute", "duration": "5000000 s"}]}
J
set +e
"$FABRICSIM" replay "$T" "$tmp/long.json" >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "a trace past the clock's range exited $rc, want 1: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "past the clock: not one line: $(cat "$tmp/err")"
grep -q "simulated time exceeds the clock's range (int64 picoseconds: at most 9223372.036 s, about 106 days): rank 0 op 1 would end past the clock's end" "$tmp/err" \
  || fail "past the clock: '$(cat "$tmp/err")'"

n=0
for f in "$D"/n_*.json; do
  want=$(cat "${f%.json}.err")
  set +e
  "$FABRICSIM" replay "$T" "$f" >/dev/null 2>"$tmp/err"; rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "$f exited $rc, want 2: $(cat "$tmp/err")"
  grep -qF -- "$want" "$tmp/err" || fail "$f: '$(cat "$tmp/err")' lacks '$want'"
  n=$((n + 1))
done
[ "$n" -ge 4 ] || fail "expected n_ files in $D"
n=0
for f in "$D"/d_*.json; do
  want=$(cat "${f%.json}.err")
  set +e
  "$FABRICSIM" replay "$T" "$f" >/dev/null 2>"$tmp/err"; rc=$?
  set -e
  [ "$rc" -eq 1 ] || fail "$f exited $rc, want 1 (deadlock): $(cat "$tmp/err")"
  grep -q "deadlock" "$tmp/err" || fail "$f: no deadlock in '$(cat "$tmp/err")'"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$f: the deadlock report is not one line: $(cat "$tmp/err")"
  grep -qF -- "$want" "$tmp/err" || fail "$f: '$(cat "$tmp/err")' lacks '$want'"
  n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "expected d_ files in $D"
echo "ok"
