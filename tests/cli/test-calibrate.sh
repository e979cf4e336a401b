#!/usr/bin/env bash
# test-calibrate.sh — `fabricsim calibrate nccl-tests` and `fabricsim models
# --calibration`: the fit table, the calibration file it writes (JSON,
# byte-stable, readable back), and usage/input errors.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

logs="$FS_TEST_DATA/nccl-tests"
topo="$FS_SOURCE_ROOT/topologies"
h100="$FS_SOURCE_ROOT/validation/results/h100-2026-11-23.json"

# models --calibration: before -> after for every overridden figure.
out=$("$FABRICSIM" models --calibration "$h100" h100-sxm) || fail "models --calibration exited $?"
contains "$out" "matched to h100-sxm" "models --calibration"
contains "$out" "h100-sxm.launch_latency" "models --calibration"
contains "$out" "3.000 us -> 4.156 us" "models --calibration"
contains "$out" "nccl.base_latency.all_reduce" "models --calibration"
contains "$out" "calibrated" "models --calibration"
out=$("$FABRICSIM" models --calibration "$h100" pcie-gen5-x16) || fail "pcie-gen5-x16 exited $?"
contains "$out" "0.8700 (54.8 GB/s) -> 0.8656 (54.5 GB/s)" "host link override"
contains "$out" "× 0.866 efficiency = 54.5 GB/s" "host link arithmetic"
"$FABRICSIM" models --calibration "$h100" h100-sxm --json > "$tmp/m.json"
python3 - "$tmp/m.json" <<'PY' || fail "models --calibration --json"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["launch_latency_ps"] == 4155870, m["launch_latency_ps"]
assert abs(m["memory_efficiency"] - 2990.99 / 3350) < 1e-9
assert "h100-2026-11-23.json" in m["calibration"]
PY

# A bad calibration file: exit 2, one line with file:line:col and the JSON path.
set +e
err=$("$FABRICSIM" models --calibration "$FS_TEST_DATA/calibration/n_peak_string.json" 2>&1 >/dev/null)
st=$?
set -e
[ "$st" -eq 2 ] || fail "bad calibration: exit $st, expected 2"
one_line "$err" "bad calibration"
contains "$err" "n_peak_string.json:15:43: \$.summary.d2h_pinned.peak_bandwidth_GBps" "bad calibration"

# calibrate nccl-tests: the table, the regimes, the link figures.
out=$("$FABRICSIM" calibrate nccl-tests --topo "$topo/dgx-h100.yaml" "$logs/y_dgxh100_g8_2.13.txt") \
  || fail "calibrate exited $?"
contains "$out" "all_reduce on 8 ranks, 1 host" "calibrate"
contains "$out" "nvlink via nvlink4, 18 links, 450.0 GB/s raw per GPU" "calibrate"
contains "$out" "8589934592" "calibrate rows"
contains "$out" "nvlink efficiency 1.0660 = peak busbw 479.72 / 450.00 GB/s raw" "calibrate"
# Every size gets an error; the large sizes fit within 5 %.
python3 - "$out" <<'PY' || fail "calibrate error column"
import sys
rows = [l.split() for l in sys.argv[1].splitlines() if l.strip()[:1].isdigit() and len(l.split()) == 4]
assert len(rows) == 31, len(rows)
big = [abs(float(r[3])) for r in rows if int(r[0]) >= 64 << 20]
assert big and max(big) < 5, big
PY

# The calibration file: JSON, byte-identical across runs, read back by --calibration.
"$FABRICSIM" calibrate nccl-tests --topo "$topo/dgx-a100.yaml" -o "$tmp/fit.json" \
  "$logs/y_two_runs_crlf.txt" > /dev/null 2>&1 || fail "calibrate -o exited $?"
"$FABRICSIM" calibrate nccl-tests --topo "$topo/dgx-a100.yaml" --json \
  "$logs/y_two_runs_crlf.txt" > "$tmp/fit2.json" || fail "calibrate --json exited $?"
cmp -s "$tmp/fit.json" "$tmp/fit2.json" || fail "calibration file differs between runs"
python3 - "$tmp/fit.json" <<'PY' || fail "calibration file content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 1
f = d["fitted"]
assert [t["collective"] for t in f["tests"]] == ["all_reduce", "reduce_scatter"]
assert f["links"]["nvlink"]["models"] == ["nvlink3"]
assert f["links"]["nvlink"]["tests"] == 2
for t in f["tests"]:
    assert len(t["rows"]) == 3 and t["ranks"] == 4
PY
out=$("$FABRICSIM" models --calibration "$tmp/fit.json" nvlink3) || fail "read back exited $?"
contains "$out" "nvlink3.efficiency" "read back"

# The base latency from a calibration file's one-rank floor.
out=$("$FABRICSIM" calibrate nccl-tests --topo "$topo/dgx-h100.yaml" --calibration "$h100" \
  "$logs/y_json_J_v2.json") || fail "calibrate --calibration exited $?"
contains "$out" "5.561 base) / 14 steps" "base latency"

# Input and usage errors.
check_err() { # expected-status fragment args...
  local want=$1 frag=$2; shift 2
  set +e
  local e
  e=$("$FABRICSIM" "$@" 2>&1 >/dev/null)
  local st=$?
  set -e
  [ "$st" -eq "$want" ] || fail "$*: exit $st, expected $want"
  one_line "$e" "$*"
  contains "$e" "$frag" "$*"
}
check_err 2 "n_bad_time.txt:4:57: column \"time\"" calibrate nccl-tests --topo "$topo/dgx-h100.yaml" "$logs/n_bad_time.txt"
check_err 2 "does not name its collective; give it with --op" calibrate nccl-tests --topo "$topo/dgx-h100.yaml" "$logs/y_dgx1v_old_2.0.txt"
check_err 2 "the log has 16 ranks but topology \"dgx-h100\" has 8 GPUs" calibrate nccl-tests --topo "$topo/dgx-h100.yaml" "$logs/y_mpi16_2nodes_nccl_info.txt"
check_err 2 "--topo TOPO is required" calibrate nccl-tests "$logs/y_json_J_v2.json"
check_err 2 "expected the kind of input first: nccl-tests" calibrate nccl "$logs/y_json_J_v2.json"
check_err 2 "unknown collective \"allreduce_x\"" calibrate nccl-tests --op allreduce_x --topo "$topo/dgx-h100.yaml" "$logs/y_json_J_v2.json"
"$FABRICSIM" calibrate nccl-tests --op all_reduce --topo "$topo/dgx-1-v100.yaml" "$logs/y_dgx1v_old_2.0.txt" > /dev/null \
  || fail "--op for an unnamed log"
"$FABRICSIM" calibrate --help | grep -q "Examples:" || fail "calibrate --help"

# Issue 21: logs of every era and mangled copies.  A first device line
# without its '#' is still a device line (16 ranks on 2 hosts, not 15).
out=$("$FABRICSIM" calibrate nccl-tests --topo "$topo/dgx-h100-ib-ndr.yaml" \
  "$logs/y_mpi16_device_line_lost_hash.txt") || fail "lost '#' log exited $?"
contains "$out" "all_reduce on 16 ranks, 2 hosts" "lost '#' log"
# --op is checked against the log's own name; --ranks against its device list.
check_err 2 "y_dgxh100_g8_2.13.txt:2:1: the log is all_reduce (named here), but --op says all_gather" \
  calibrate nccl-tests --op all_gather --topo "$topo/dgx-h100.yaml" "$logs/y_dgxh100_g8_2.13.txt"
check_err 2 "says 8 ranks, but --ranks says 4" \
  calibrate nccl-tests --ranks 4 --topo "$topo/dgx-h100.yaml" "$logs/y_dgxh100_g8_2.13.txt"
# An old log without a device list: a located error naming --ranks, then --ranks.
check_err 2 "y_old_1x_bytes_header_no_devices.txt:10:1: the log has no device list" \
  calibrate nccl-tests --topo "$topo/dgx-h100.yaml" "$logs/y_old_1x_bytes_header_no_devices.txt"
out=$("$FABRICSIM" calibrate nccl-tests --ranks 4 --nodes 1 --topo "$topo/v100-nvlink-4gpu.yaml" \
  "$logs/y_old_1x_bytes_header_no_devices.txt") || fail "--ranks for an old log"
contains "$out" "all_reduce on 4 ranks, 1 host" "--ranks for an old log"
check_err 2 "factor for 4 ranks of all_reduce, but --ranks/--nodes says 8" \
  calibrate nccl-tests --ranks 8 --topo "$topo/dgx-h100.yaml" "$logs/y_old_1x_bytes_header_no_devices.txt"
# The log says 2 hosts; a one-host topology of 16 GPUs would fit NVLink.
check_err 2 "the log ran on 2 hosts, but topology \"dgx-2\" puts its 16 ranks on 1" \
  calibrate nccl-tests --topo "$topo/dgx-2.yaml" "$logs/y_mpi16_device_line_lost_hash.txt"
# Every dropped row on stderr with file:line.
err=$("$FABRICSIM" calibrate nccl-tests --topo "$topo/dgx-h100.yaml" \
  "$logs/y_rows_time_zero_negative_size.txt" 2>&1 >/dev/null) || fail "dropped rows exited $?"
contains "$err" "y_rows_time_zero_negative_size.txt:21:1: row dropped: negative size" "negative size"
contains "$err" "y_rows_time_zero_negative_size.txt:23:1: row dropped: out-of-place time is 0" "time 0"
contains "$err" "y_rows_time_zero_negative_size.txt:25:1: row dropped: out-of-place time is 0" "time 0"

# Real logs (tests/data/real/nccl-tests/SOURCES.md) fitted on a topology of
# the same GPUs: the bus bandwidth at the largest size lies within what the
# catalog's link rates allow.  One host: peak busbw / the GPU's NVLink raw
# rate (the fitted efficiency) in (0, 2]: NVLink SHARP reduces in the
# switch, so its busbw exceeds the wire rate (the DGX H100 table: 1.07).
# Several hosts: all_reduce moves at most 2 S (N-1)/N per host over its ppn
# NICs (NCCL's hierarchical algorithms), so busbw <= ppn x NIC raw per GPU x
# N/(N-1) x (n-1)/n.
real="$FS_SOURCE_ROOT/tests/data/real/nccl-tests"
check_real() { # topology hints... log
  local topo_file=$1; shift
  "$FABRICSIM" calibrate nccl-tests --topo "$topo/$topo_file" --json "$@" > "$tmp/real.json" \
    || fail "calibrate $*: exit $?"
  python3 - "$tmp/real.json" "$*" <<'PY' || fail "calibrate $*: implausible fit"
import json, sys
d = json.load(open(sys.argv[1]))
for t in d["fitted"]["tests"]:
    n, hosts, raw, peak = t["ranks"], t["hosts"], t["raw_per_gpu_GBps"], t["peak_busbw_GBps"]
    assert peak > 0 and raw > 0, t
    if hosts == 1:
        assert 0 < t["efficiency"] <= 2, (sys.argv[2], t["efficiency"])
    else:
        ppn = n / hosts
        bound = ppn * raw * hosts / (hosts - 1) * (n - 1) / n
        assert peak <= bound, (sys.argv[2], peak, bound)
PY
}
check_real dgx-h100-ib-ndr.yaml "$real/gcp-a3mega-h100-2nodes-allreduce.txt"
check_real dgx-h100-ib-ndr.yaml "$real/oci-h200-2nodes-nccl-2.27.5.txt"
check_real dgx-h100-ib-ndr.yaml --op all_reduce --ranks 16 --nodes 2 "$real/aws-eks-p5-h100-2nodes-table-indented.txt"
check_real dgx-h100.yaml "$logs/y_dgxh100_g8_2.13.txt"
# Rows pasted without their column titles: read in nccl-tests 2.10+'s
# layout, said in one located note; the ranks from NCCL INFO's nranks.
check_real dgx-h100-ib-ndr.yaml --op all_reduce --nodes 2 "$real/nccl-tests-294-h100-rows-without-header.txt" \
  2>"$tmp/note"
grep -qx "$real/nccl-tests-294-h100-rows-without-header.txt:1:1: note: rows without column titles, read as nccl-tests 2.10+ prints them (size count type redop root time algbw busbw #wrong time algbw busbw #wrong)" \
  "$tmp/note" || fail "no note for rows without titles: $(cat "$tmp/note")"
check_err 2 "nccl-tests-294-h100-rows-without-header.txt:1:1: the log does not name its collective; give it with --op" \
  calibrate nccl-tests --topo "$topo/dgx-h100-ib-ndr.yaml" "$real/nccl-tests-294-h100-rows-without-header.txt"
check_err 2 "oci-a100-2nodes-10g.txt:1:1: 1 sizes; a fit needs at least 2" \
  calibrate nccl-tests --op all_reduce --topo "$topo/dgx-a100-ib-hdr.yaml" "$real/oci-a100-2nodes-10g.txt"
check_err 2 "aws-k8s-tester-503-p5-tagged-head.txt:4:1: the log has no device list" \
  calibrate nccl-tests --op all_reduce --topo "$topo/dgx-h100-ib-ndr.yaml" "$real/aws-k8s-tester-503-p5-tagged-head.txt"

# Through the simulator, when the build has the collective layer.
if "$FABRICSIM" calibrate --help | grep -q -- "--simulate"; then
  out=$("$FABRICSIM" calibrate nccl-tests --simulate --iterations 5 --topo "$topo/dgx-a100.yaml" \
    --json "$logs/y_two_runs_crlf.txt") || fail "calibrate --simulate exited $?"
  python3 - "$out" <<'PY' || fail "calibrate --simulate content"
import json, sys
d = json.loads(sys.argv[1])
for t in d["fitted"]["tests"]:
    s = t["simulated"]
    assert 0.05 <= s["efficiency"] <= 1 and 0.05 <= s["hw_latency_scale"] <= 20, s
    assert len(s["predicted_us"]) == len(t["rows"]) and s["rms_error_pct"] < 20, s
# The family's efficiency is the simulator-fitted one.
effs = sorted(t["simulated"]["efficiency"] for t in d["fitted"]["tests"])
assert abs(d["fitted"]["links"]["nvlink"]["efficiency"] - sum(effs) / 2) < 1e-9
PY
fi

# --calibration on a simulating command: the measured H100 host link (54.5 GB/s
# pinned H2D, the min of H2D and D2H) replaces the catalog's 0.87 of raw
# (54.8 GB/s, the mean of the same file's two directions) in p2p's host column.
cal="$FS_SOURCE_ROOT/validation/results/h100-2026-11-23.json"
h2d() { "$FABRICSIM" p2p "$topo/dgx-h100.yaml" --json "$@" |
  python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["host"][0]["h2d_gbps"])'; }
plain=$(h2d) || fail "p2p without calibration"
calibrated=$(h2d --calibration "$cal") || fail "p2p --calibration exited $?"
[ "$plain" = "54.82" ] || fail "p2p host link without calibration: $plain"
[ "$calibrated" = "54.54" ] || fail "p2p host link with calibration: $calibrated"
if "$FABRICSIM" p2p "$topo/dgx-h100.yaml" --calibration /nonexistent.json 2>/dev/null; then
  fail "p2p with a missing calibration file succeeded"
fi

echo "cli calibrate: ok"
