#!/usr/bin/env bash
# test-outputs.sh — the output formats of every simulating command (README
# "Output"): a human summary; --json parsing as one object with an integer
# schema_version; --csv as RFC 4180 rows of one width under a header;
# --trace FILE (train, replay, coll, flows) as trace-event JSON, written
# atomically (no temporary left behind, nothing written when the folder is
# missing: exit 1, one line on stderr); --json with --csv exits 2.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$FS_SOURCE_ROOT"
T=topologies/dgx-h100.yaml
W=workloads/llama2-7b.yaml
FL=tests/data/flows/y_dgx_h100_basic.csv
TR=workloads/traces/pipeline-2stage.json

# name: the arguments of one run of each command (small).
declare -A args=(
  [p2p]="p2p $T --gpus 4 --size 16M"
  [flows]="flows $T $FL"
  [coll]="coll $T -o all_reduce -b 1M -e 16M -f 4"
  [train]="train $T $W --tp=2 --pp=2 --num-layers=4 --global-batch-size=16"
  [replay]="replay $T $TR"
)
args[plan]="plan --workload $W --fabric $T --target-step-time 100 --tp 2 --pp 4 --micro-batch 1 --set training.global_batch=64 -q"
cat >"$tmp/sweep.yaml" <<YAML
name: tiny
kind: coll
set: {op: all_reduce}
grid:
  topology: [$FS_SOURCE_ROOT/$T]
  size: [1M, 4M]
YAML
args[sweep]="sweep $tmp/sweep.yaml"

check_json() { # file what
  python3 - "$1" "$2" <<'PY' || fail "$2: bad JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, dict), "not an object"
v = d.get("schema_version")
assert isinstance(v, int) and not isinstance(v, bool) and v >= 1, f"schema_version {v!r}"
PY
}
check_csv() { # file what
  python3 - "$1" "$2" <<'PY' || fail "$2: bad CSV"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) >= 2, "no data line"
w = len(rows[0])
assert w >= 2 and all(h for h in rows[0]), f"header {rows[0]}"
assert len(set(rows[0])) == w, "duplicate header names"
bad = [i for i, r in enumerate(rows) if len(r) != w]
assert not bad, f"lines {bad[:5]} are not {w} fields wide"
PY
}
check_trace() { # file what
  python3 - "$1" "$2" <<'PY' || fail "$2: bad trace"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
assert isinstance(ev, list) and ev, "no events"
assert all(isinstance(e, dict) and isinstance(e.get("ph"), str) for e in ev)
assert any(e["ph"] == "X" for e in ev), "no complete events"
assert any(e["ph"] == "C" for e in ev), "no link counters"
PY
}

for cmd in p2p flows coll train replay plan sweep; do
  read -r -a a <<<"${args[$cmd]}"
  "$FABRICSIM" "${a[@]}" >"$tmp/$cmd.txt" 2>"$tmp/err" || fail "$cmd: exit $? $(cat "$tmp/err")"
  [ -s "$tmp/$cmd.txt" ] || fail "$cmd: no summary"
  if [ "$cmd" = sweep ]; then
    "$FABRICSIM" "${a[@]}" -o "$tmp/sweep.json" 2>"$tmp/err" || fail "sweep json: $(cat "$tmp/err")"
    cp "$tmp/sweep.txt" "$tmp/sweep.csv"
  else
    "$FABRICSIM" "${a[@]}" --json >"$tmp/$cmd.json" 2>"$tmp/err" || fail "$cmd --json: $(cat "$tmp/err")"
    "$FABRICSIM" "${a[@]}" --csv >"$tmp/$cmd.csv" 2>"$tmp/err" || fail "$cmd --csv: $(cat "$tmp/err")"
    set +e
    "$FABRICSIM" "${a[@]}" --json --csv >/dev/null 2>"$tmp/err"; rc=$?
    set -e
    [ $rc -eq 2 ] || fail "$cmd --json --csv: exit $rc"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$cmd --json --csv: not one line: $(cat "$tmp/err")"
  fi
  check_json "$tmp/$cmd.json" "$cmd --json"
  check_csv "$tmp/$cmd.csv" "$cmd --csv"
done

for cmd in train replay coll flows; do
  read -r -a a <<<"${args[$cmd]}"
  mkdir "$tmp/tr-$cmd"
  "$FABRICSIM" "${a[@]}" --trace "$tmp/tr-$cmd/t.json" >/dev/null 2>"$tmp/err" ||
    fail "$cmd --trace: $(cat "$tmp/err")"
  check_trace "$tmp/tr-$cmd/t.json" "$cmd --trace"
  [ "$(ls -A "$tmp/tr-$cmd")" = "t.json" ] || fail "$cmd --trace left $(ls -A "$tmp/tr-$cmd")"
  # Rewriting replaces the file whole; a missing folder fails cleanly.
  "$FABRICSIM" "${a[@]}" --trace "$tmp/tr-$cmd/t.json" >/dev/null 2>&1 || fail "$cmd --trace again"
  check_trace "$tmp/tr-$cmd/t.json" "$cmd --trace again"
  set +e
  "$FABRICSIM" "${a[@]}" --trace "$tmp/none/t.json" >/dev/null 2>"$tmp/err"; rc=$?
  set -e
  [ $rc -eq 1 ] || fail "$cmd --trace into a missing folder: exit $rc"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$cmd --trace error not one line: $(cat "$tmp/err")"
  [ ! -e "$tmp/none" ] || fail "$cmd --trace created the folder"
done

# Sampling link utilisation for the trace changes no result.
"$FABRICSIM" ${args[train]} --json >"$tmp/a.json"
"$FABRICSIM" ${args[train]} --json --trace "$tmp/t.json" >"$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || fail "train --json differs with --trace"
# The same run twice writes the same trace, byte for byte.
"$FABRICSIM" ${args[coll]} --trace "$tmp/c1.json" >/dev/null
"$FABRICSIM" ${args[coll]} --trace "$tmp/c2.json" >/dev/null
cmp -s "$tmp/c1.json" "$tmp/c2.json" || fail "coll --trace is not deterministic"
echo "cli outputs: ok"
