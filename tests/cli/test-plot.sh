#!/usr/bin/env bash
# test-plot.sh — tools/plot: every chart kind (busbw, scaling, breakdown,
# linkheat, pipeline) drawn from real fabricsim outputs (small runs) as SVG
# and PNG; each SVG must parse as XML with an <svg> root, each PNG must
# start with the PNG signature.  Bad inputs exit 2.  Skipped (exit 77)
# when gnuplot or python3 is absent.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v gnuplot >/dev/null || { echo "cli plot: gnuplot not found, skipped"; exit 77; }
command -v python3 >/dev/null || { echo "cli plot: python3 not found, skipped"; exit 77; }
cd "$FS_SOURCE_ROOT"
plot=tools/plot
T=topologies/dgx-h100.yaml
W=workloads/llama2-7b.yaml

# Inputs from real runs, kept small.
small=(--tp=2 --pp=4 --num-layers=8 --global-batch-size=16)
for s in gpipe 1f1b; do
  "$FABRICSIM" train "$T" "$W" "${small[@]}" parallel.schedule=$s --json >"$tmp/$s.json" ||
    fail "train $s"
done
"$FABRICSIM" train "$T" "$W" "${small[@]}" parallel.schedule=interleaved --vp=2 --json \
  --trace "$tmp/trace.json" >"$tmp/interleaved.json" || fail "train interleaved"
"$FABRICSIM" explain schedule --pp 4 --microbatches 8 --csv >"$tmp/sched.csv" || fail "explain --csv"
# Sweep-shaped CSVs (the columns tools/plot reads, README "Output").
"$FABRICSIM" coll "$T" -o all_reduce -b 1M -e 64M -f 4 --csv >"$tmp/coll.csv" || fail "coll --csv"
{
  echo "point,topology,size,status,nranks,bytes,time_us,algbw_GBps,busbw_GBps,algo,proto,channels"
  awk -F, 'NR > 1 { printf "%d,dgx-h100.yaml,%s,ok,8,%s,%s,%s,%s,%s,%s,%s\n", NR - 2, $1, $1, $6, $7, $8, $9, $10, $11 }' \
    "$tmp/coll.csv"
} >"$tmp/busbw.csv"
{
  echo "point,nodes,status,gpus,tokens_per_s"
  echo "0,1,ok,8,1000"; echo "1,2,ok,16,1900"; echo "2,4,ok,32,3600"; echo "3,8,error,,"
} >"$tmp/scaling.csv"

check_svg() {
  python3 - "$1" <<'PY' || fail "$1 is not well-formed SVG"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag in ("svg", "{http://www.w3.org/2000/svg}svg"), root.tag
assert len(list(root.iter())) > 20, "almost empty"
PY
}
check_png() {
  [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$1 is not a PNG"
}

run() { # kind inputs… out
  "$plot" "$@" >"$tmp/out" 2>"$tmp/err" || fail "tools/plot $*: $(cat "$tmp/err")"
}
for ext in svg png; do
  run busbw "$tmp/busbw.csv" "$tmp/busbw.$ext"
  run scaling "$tmp/scaling.csv" "$tmp/scaling.$ext"
  run breakdown "$tmp/gpipe.json" "$tmp/1f1b.json" "$tmp/interleaved.json" "$tmp/breakdown.$ext"
  run linkheat "$tmp/trace.json" "$tmp/linkheat.$ext"
  run pipeline "$tmp/sched.csv" "$tmp/pipeline.$ext"
done
for k in busbw scaling breakdown linkheat pipeline; do
  check_svg "$tmp/$k.svg"
  check_png "$tmp/$k.png"
done
# The breakdown names its bars after the files; the heat map its links.
grep -q "interleaved" "$tmp/breakdown.svg" || fail "breakdown: no bar label"
grep -q "nvswitch" "$tmp/linkheat.svg" || fail "linkheat: no link label"
grep -q "1f1b" "$tmp/pipeline.svg" || fail "pipeline: no schedule label"

# explain schedule --svg (drawn by fabricsim itself) is well-formed too.
"$FABRICSIM" explain schedule --pp 4 --microbatches 8 --svg "$tmp/sched.svg" >/dev/null || fail "--svg"
check_svg "$tmp/sched.svg"
grep -q "bubble 15.8%" "$tmp/sched.svg" || fail "--svg: interleaved bubble"

# Bad inputs: exit 2, one line.
set +e
"$plot" breakdown "$tmp/sched.csv" "$tmp/x.svg" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "breakdown of a CSV: exit $rc"
"$plot" linkheat "$tmp/gpipe.json" "$tmp/x.svg" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "linkheat of a train JSON: exit $rc"
"$plot" pipeline "$tmp/sched.csv" "$tmp/x.pdf" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "pdf output: exit $rc"
"$plot" nothing a b 2>/dev/null; rc=$?
[ $rc -eq 2 ] || fail "unknown kind: exit $rc"
set -e
echo "cli plot: ok"
