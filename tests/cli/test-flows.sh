#!/usr/bin/env bash
# test-flows.sh — `fabricsim flows`: the corpus in tests/data/flows (y_ files
# replay, n_ files exit 2 with their .err fragment on one stderr line), the
# dependency and sharing semantics through --json, the analytic model, CSV
# output and determinism.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T="$FS_SOURCE_ROOT/topologies/dgx-h100.yaml"
D="$FS_TEST_DATA/flows"

n=0
for f in "$D"/y_*; do
  "$FABRICSIM" flows "$T" "$f" >"$tmp/out" 2>"$tmp/err" || fail "y file $f exited $?: $(cat "$tmp/err")"
  grep -q "^# makespan" "$tmp/out" || fail "y file $f: no makespan line"
  n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "expected y_ files in $D"

n=0
for f in "$D"/n_*.csv "$D"/n_*.json; do
  want=$(cat "${f%.*}.err")
  set +e
  "$FABRICSIM" flows "$T" "$f" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "n file $f exited $rc, want 2"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "n file $f: stderr is not one line: $(cat "$tmp/err")"
  grep -qF -- "$want" "$tmp/err" || fail "n file $f: stderr '$(cat "$tmp/err")' lacks '$want'"
  n=$((n + 1))
done
[ "$n" -ge 8 ] || fail "expected n_ files in $D"

# Semantics: a and b share gpu0's NVLinks (half each, same finish); c waits
# for a; CSV and JSON inputs give the same answer; analytic ignores sharing.
"$FABRICSIM" flows --json "$T" "$D/y_dgx_h100_basic.csv" >"$tmp/csv.json"
"$FABRICSIM" flows --json "$T" "$D/y_dgx_h100_basic.json" >"$tmp/json.json"
cmp -s "$tmp/csv.json" "$tmp/json.json" || fail "CSV and JSON inputs differ"
"$FABRICSIM" flows --json --model analytic "$T" "$D/y_dgx_h100_basic.csv" >"$tmp/an.json"
python3 - "$tmp/csv.json" "$tmp/an.json" <<'PY' || fail "flow semantics"
import json, sys
m = {f["id"]: f for f in json.load(open(sys.argv[1]))["flows"]}
a = {f["id"]: f for f in json.load(open(sys.argv[2]))["flows"]}
assert m["a"]["transport"] == "nvlink" and m["a"]["paths"] == 4, m["a"]
assert m["a"]["finish_ps"] == m["b"]["finish_ps"]
assert m["c"]["start_ps"] == m["a"]["finish_ps"], (m["c"], m["a"])
assert m["c"]["transport"] == "pcie"
assert 370 < 2 * m["a"]["mean_rate_gbps"] < 377, m["a"]
assert abs(a["a"]["mean_rate_gbps"] / m["a"]["mean_rate_gbps"] - 2) < 1e-6
assert a["c"]["start_ps"] == a["a"]["finish_ps"] < m["a"]["finish_ps"]
PY

# CSV output, determinism.
"$FABRICSIM" flows --csv "$T" "$D/y_empty_deps_and_chain.csv" >"$tmp/a.csv"
"$FABRICSIM" flows --csv "$T" "$D/y_empty_deps_and_chain.csv" >"$tmp/b.csv"
cmp -s "$tmp/a.csv" "$tmp/b.csv" || fail "output not deterministic"
head -1 "$tmp/a.csv" | grep -q "^id,src,dst,bytes,transport,start_ps,finish_ps" || fail "CSV header"
[ "$(wc -l <"$tmp/a.csv")" -eq 5 ] || fail "CSV rows"

# Usage errors.
set +e
"$FABRICSIM" flows "$T" >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing FLOWS should exit 2"
"$FABRICSIM" flows --model fluid "$T" "$D/y_dgx_h100_basic.csv" >/dev/null 2>&1
[ $? -eq 2 ] || fail "bad --model should exit 2"
"$FABRICSIM" flows "$T" "$tmp/does-not-exist.csv" >/dev/null 2>&1
[ $? -eq 2 ] || fail "missing file should exit 2"
set -e
"$FABRICSIM" flows --help | grep -q "Example" || fail "--help has no example"
echo "cli flows: ok"
