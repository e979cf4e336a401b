#!/usr/bin/env bash
# test-calib-validate.sh — the calibration loop end to end: `fabricsim
# calibrate nccl-tests --simulate` fits the single-node H100 reference table
# with times (issue 290's node, split fit), and `fabricsim validate
# --calibration FIT` must then show a lower error on that table than the
# catalog alone (the numbers are read from validate --json, not assumed).  Also: the NCCL latency hook
# (src/calib/nccl-apply.h) changes `fabricsim coll` times, and a reference
# table is accepted as calibrate's input.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

topo="$FS_SOURCE_ROOT/topologies"
ref="$FS_SOURCE_ROOT/validation/reference"
h100_table="$ref/h100_hgx_allreduce_8gpu_g8_nccltests290.csv"
probe="$FS_SOURCE_ROOT/validation/results/h100-2026-11-23.json"

# validate --json for one table, with an optional calibration; prints the
# table's MAPE.  Exit 1 (a missed bar) is a result here, not an error.
mape() {
  local table=$1; shift
  set +e
  "$FABRICSIM" validate --json "$@" "$table" > "$tmp/v.json"
  local st=$?
  set -e
  [ "$st" -le 1 ] || fail "validate $* $table exited $st"
  python3 - "$tmp/v.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
(t,) = d["tables"]
assert t["ran"], t
print("%.6f" % t["mape_pct"])
PY
}

# fit (calibrate --simulate, few iterations: the test needs a better fit, not
# the best one), then the table's MAPE without and with the fitted file.
check() {
  local name=$1 topo_file=$2 input=$3 table=$4
  "$FABRICSIM" calibrate nccl-tests --simulate --iterations 3 --topo "$topo_file" \
    -o "$tmp/$name.json" "$input" > "$tmp/$name.out" 2> "$tmp/$name.err" \
    || fail "$name: calibrate exited $?: $(cat "$tmp/$name.err")"
  contains "$(cat "$tmp/$name.out")" "through the simulator" "$name fit"
  python3 - "$tmp/$name.json" <<'PY' || fail "$name: fitted file"
import json, sys
d = json.load(open(sys.argv[1]))
links = d["fitted"]["links"]["nvlink"]
assert 0 < links["efficiency"] <= 1, links
assert links["hw_latency_scale"] > 0, links
assert all("simulated" in t for t in d["fitted"]["tests"])
PY
  local before after
  before=$(mape "$table")
  after=$(mape "$table" --calibration "$tmp/$name.json")
  echo "$name: $table MAPE $before % (catalog) -> $after % (fitted)"
  python3 -c "import sys; b, a = map(float, sys.argv[1:]); sys.exit(0 if a < b else 1)" \
    "$before" "$after" || fail "$name: the fitted file does not lower the MAPE ($before -> $after)"
  # What the file changes, as models --calibration lists it.
  out=$("$FABRICSIM" models --calibration "$tmp/$name.json") || fail "$name: models exited $?"
  contains "$out" "nccl.hw_latency_scale.nvlink" "$name: models --calibration"
}

check h100 "$topo/dgx-h100.yaml" "$h100_table" h100_hgx_allreduce_8gpu_g8_nccltests290

# A reference table as calibrate's input (a table with times: the Azure ones
# give bandwidths only): one test of the table's 8 ranks.
out=$("$FABRICSIM" calibrate nccl-tests --topo "$topo/dgx-h100.yaml" "$h100_table") \
  || fail "calibrate on a table exited $?"
contains "$out" "all_reduce on 8 ranks, 1 host" "table input"
contains "$out" "4294967296" "table input"
set +e
err=$("$FABRICSIM" calibrate nccl-tests --topo "$topo/dgx-h100.yaml" \
  "$ref/h100_pcie_gen5_host_copies_fabricsim_probe.csv" 2>&1 >/dev/null)
st=$?
set -e
[ "$st" -eq 2 ] || fail "host-copy table: exit $st, expected 2"
contains "$err" "h100_pcie_gen5_host_copies_fabricsim_probe.csv:1:1: a reference table of kind nccl-tests was expected" "host-copy table"

# The probe file's one-rank NCCL floor moves the base latency: an 8-byte
# all_reduce (latency only) gets faster by NCCL's Ring/LL base minus the floor.
t0=$("$FABRICSIM" coll "$topo/dgx-h100.yaml" -o all_reduce -b 8 -e 8 --json)
t1=$("$FABRICSIM" coll "$topo/dgx-h100.yaml" -o all_reduce -b 8 -e 8 --json --calibration "$probe")
python3 - "$t0" "$t1" "$probe" <<'PY' || fail "base latency from the one-rank floor"
import json, sys
def t(doc):
    return json.loads(doc)["results"][0]["time_us"]
floor = json.load(open(sys.argv[3]))["summary"]["nccl_all_reduce"]["latency_floor_us"]
d = t(sys.argv[1]) - t(sys.argv[2])
# NCCL's baseLatencies[Ring][LL] is 6.6 us (models/nccl/nccl.yaml).
assert abs(d - (6.6 - floor)) < 0.02, (d, 6.6 - floor)
PY

echo "cli calib-validate: ok"
