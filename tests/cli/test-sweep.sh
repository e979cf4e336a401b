#!/usr/bin/env bash
# test-sweep.sh — `fabricsim sweep`: CSV on stdout and to a file, JSON with
# schema_version, the same bytes with 1 and 2 threads, --resume after an
# interrupted run, failed points as rows, bad specs exiting 2, and MPI
# (2 ranks) giving the same file as a plain run when mpirun is present.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T="$FS_SOURCE_ROOT/topologies"

cat > "$tmp/spec.yaml" <<YAML
name: t
kind: coll
set: {op: all_reduce, model: analytic}
grid:
  topology: [$T/dgx-h100.yaml, $T/pcie-gen4-8gpu.yaml]
  gpus: [2, 8, 16]
  size: [1M, 64M]
YAML

out=$("$FABRICSIM" sweep "$tmp/spec.yaml")
head=$(printf '%s\n' "$out" | head -1)
[ "$head" = "point,topology,gpus,size,status,nranks,bytes,time_us,algbw_GBps,busbw_GBps,algo,proto,channels,error" ] \
  || fail "CSV header: $head"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 13 ] || fail "expected 12 rows"
# Point order: the last grid key varies fastest.
printf '%s\n' "$out" | sed -n 2,3p | cut -d, -f1,3,4 | tr '\n' ' ' | grep -q "^0,2,1M 1,2,64M $" || fail "order"
# gpus 16 on an 8-GPU box is an error row, not a failed sweep.
row=$(printf '%s\n' "$out" | grep '^4,')
contains "$row" ",error," "error row"

# Threads do not change the bytes; the file is written whole at the end.
"$FABRICSIM" sweep "$tmp/spec.yaml" -o "$tmp/a.csv" -j 1 -q
"$FABRICSIM" sweep "$tmp/spec.yaml" -o "$tmp/b.csv" -j 2 -q
cmp "$tmp/a.csv" "$tmp/b.csv" || fail "-j 1 and -j 2 differ"
[ ! -e "$tmp/a.csv.partial" ] || fail "partial file left behind"
[ "$(cat "$tmp/a.csv")" = "$out" ] || fail "file differs from stdout"

# Resume: an interrupted run left 5 rows and half a line.
head -6 "$tmp/a.csv" > "$tmp/c.csv.partial"
printf '5,x' >> "$tmp/c.csv.partial"
"$FABRICSIM" sweep "$tmp/spec.yaml" -o "$tmp/c.csv" --resume -q
cmp "$tmp/a.csv" "$tmp/c.csv" || fail "resumed file differs"
# Resuming a finished file runs nothing and keeps it.
"$FABRICSIM" sweep "$tmp/spec.yaml" -o "$tmp/c.csv" --resume -q
cmp "$tmp/a.csv" "$tmp/c.csv" || fail "resumed finished file differs"

# JSON: schema_version, one object per point, parses.
"$FABRICSIM" sweep "$tmp/spec.yaml" -o "$tmp/a.json" -q
python3 - "$tmp/a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 1 and d["kind"] == "coll", d
assert [p["point"] for p in d["points"]] == list(range(12))
assert d["points"][0]["params"]["gpus"] == 2 and d["points"][0]["status"] == "ok"
assert d["points"][4]["status"] == "error" and d["points"][4]["results"] is None
assert d["points"][1]["results"]["busbw_GBps"] > 0
PY

# Bad input: exit 2 with file:line:col.
printf 'kind: coll\ngrid:\n  colour: [red]\n' > "$tmp/bad.yaml"
set +e
err=$("$FABRICSIM" sweep "$tmp/bad.yaml" 2>&1 >/dev/null); rc=$?
set -e
[ $rc -eq 2 ] || fail "bad spec exit $rc"
contains "$err" "bad.yaml:3:3:" "bad spec message"
set +e
"$FABRICSIM" sweep "$tmp/spec.yaml" --resume >/dev/null 2>&1; rc=$?
set -e
[ $rc -eq 2 ] || fail "--resume without -o exit $rc"

# MPI: 2 ranks write the same file.  Open MPI's own allocations are never
# freed at exit, so LeakSanitizer is off for this run only (the runs above
# check fabricsim's memory under the sanitizer build).
if [ "${FS_HAVE_MPI:-0}" = 1 ] && command -v mpirun >/dev/null 2>&1; then
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" mpirun -x ASAN_OPTIONS --oversubscribe --allow-run-as-root -n 2 "$FABRICSIM" sweep "$tmp/spec.yaml" -o "$tmp/m.csv" -q -j 1 \
    >/dev/null 2>"$tmp/mpi.err" || { cat "$tmp/mpi.err"; fail "mpirun"; }
  cmp "$tmp/a.csv" "$tmp/m.csv" || fail "MPI output differs"
else
  echo "no MPI build or no mpirun: MPI part skipped"
fi
echo "sweep: ok"
