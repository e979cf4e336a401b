#!/usr/bin/env bash
# test-topo.sh — `fabricsim topo`: every ready topology passes `topo check`;
# paths, show, dot and --json work; -D overrides; bad files exit 2 with
# file:line:col on one stderr line; output is deterministic.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T="$FS_SOURCE_ROOT/topologies"

# Every ready file, text and JSON (the JSON checked in one Python run).
n=0
for f in "$T"/*.yaml; do
  out=$("$FABRICSIM" topo check "$f" 2>&1) || fail "topo check $f exited $?: $out"
  contains "$out" ": valid." "check $f"
  "$FABRICSIM" topo check --json "$f" > "$tmp/$(basename "$f").json" || fail "topo check --json $f"
  n=$((n + 1))
done
[ "$n" -ge 20 ] || fail "expected at least 20 ready topologies, found $n"
python3 - "$tmp"/*.json <<'PY' || fail "topo check --json output"
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    assert d["valid"] is True and d["gpus"] >= 1, path
PY

# Summaries.
out=$("$FABRICSIM" topo check "$T/dgx-h100.yaml")
contains "$out" "8 GPUs (h100-sxm) in 1 host" "check dgx-h100"
contains "$out" "Each GPU has 18 NVLinks" "check dgx-h100"
contains "$out" "Bisection bandwidth" "check dgx-h100"

# The path matrix.
out=$("$FABRICSIM" topo paths "$T/dgx-1-v100.yaml")
contains "$out" "GPU0  X     NV1   NV1   NV2   NV2   SYS   SYS   SYS   gpu0" "paths dgx-1-v100"
contains "$out" "Legend:" "paths dgx-1-v100"
out=$("$FABRICSIM" topo paths "$T/pcie-gen4-8gpu.yaml")
contains "$out" "GPU0  X     PIX   PXB   PXB   SYS" "paths pcie-gen4"
# The 4-GPU pair of the ResNet-50 seed: the same chassis, PCIe switch or NVLink.
out=$("$FABRICSIM" topo paths "$T/pcie-gen3-4gpu.yaml")
contains "$out" "GPU3  PIX   PIX   PIX   X     gpu3" "paths pcie-gen3-4gpu"
out=$("$FABRICSIM" topo paths "$T/v100-nvlink-4gpu.yaml")
contains "$out" "GPU3  NV2   NV2   NV2   X     gpu3" "paths v100-nvlink-4gpu"
"$FABRICSIM" topo paths --json "$T/dgx-h100.yaml" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert len(d["gpus"]) == 8 and d["gpus"][0] == "gpu0"
assert all(d["matrix"][i][j] == ("X" if i == j else "NV18") for i in range(8) for j in range(8))
' || fail "paths --json dgx-h100"

# -D overrides a parameter.
out=$("$FABRICSIM" topo check "$T/dgx-h100-ib-ndr.yaml" -D nodes=16)
contains "$out" "128 GPUs (h100-sxm) in 16 hosts" "check -D nodes=16"
"$FABRICSIM" topo check --json -D nodes=2 "$T/dgx-a100-ib-hdr.yaml" | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["parameters"]
assert d["gpus"] == 16 and p["nodes"] == 2 and p["node"] == "dgx-a100" and p["nics"] == 8, d
' || fail "check --json -D nodes=2"

# show and dot.
out=$("$FABRICSIM" topo show "$T/gh200.yaml")
contains "$out" "gpu0	gpu	gh200	host0" "show gh200"
"$FABRICSIM" topo show --json "$T/dgx-h100.yaml" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert len([n for n in d["nodes"] if n["kind"] == "gpu"]) == 8
assert any(l["count"] == 5 and l["family"] == "nvlink" for l in d["links"])
' || fail "show --json dgx-h100"
out=$("$FABRICSIM" topo dot "$T/dgx-a100.yaml")
contains "$out" 'graph "dgx-a100" {' "dot dgx-a100"
contains "$out" '"gpu0" -- "nvswitch0" [label="nvlink3 x2"];' "dot dgx-a100"
"$FABRICSIM" topo dot --json "$T/dgx-a100.yaml" | python3 -c 'import json,sys; assert json.load(sys.stdin)["dot"].startswith("graph")' \
  || fail "dot --json"

# Determinism: the same input gives the same bytes.
a=$("$FABRICSIM" topo show --json "$T/dgx-h100-ib-ndr.yaml" | md5sum)
b=$("$FABRICSIM" topo show --json "$T/dgx-h100-ib-ndr.yaml" | md5sum)
[ "$a" = "$b" ] || fail "topo show --json is not deterministic"

# Bad input: exit 2, one line on stderr with file:line:col, nothing on stdout.
expect_bad() {
  local frag="$1"; shift
  local status=0 err out
  err=$("$FABRICSIM" topo "$@" 2>&1 >/dev/null) || status=$?
  [ "$status" -eq 2 ] || fail "topo $*: exit status $status, expected 2"
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "topo $*: stderr is not one line: $err"
  contains "$err" "$frag" "topo $*"
  out=$("$FABRICSIM" topo "$@" 2>/dev/null) || true
  [ -z "$out" ] || fail "topo $*: printed to stdout on error"
}
D="$FS_TEST_DATA/topo"
expect_bad "n_too_many_nvlinks.yaml:2:11: GPU \"gpu0\" uses 20 NVLinks" check "$D/n_too_many_nvlinks.yaml"
expect_bad "n_unknown_model.yaml:3:12: unknown device model" paths "$D/n_unknown_model.yaml"
expect_bad "n_include_cycle.yaml -> cycle-a.yaml" dot "$D/n_include_cycle.yaml"
expect_bad "-D nodez=3: the topology has no parameter" check "$T/dgx-h100-ib-ndr.yaml" -D nodez=3
expect_bad "unknown action \"chek\"" chek "$T/dgx-h100.yaml"
expect_bad "expected an action" check
expect_bad "no-such-file.yaml" check "$D/no-such-file.yaml"

# A matrix too large to print is a resource limit: exit 1.
status=0
err=$("$FABRICSIM" topo paths "$T/dgx-h100-ib-ndr.yaml" -D nodes=520 2>&1 >/dev/null) || status=$?
[ "$status" -eq 1 ] || fail "paths on 4160 GPUs: exit status $status, expected 1"
contains "$err" "the path matrix is printed for at most 4096" "paths on 4160 GPUs"

# --help has an example.
"$FABRICSIM" topo --help | grep -q "fabricsim topo check topologies/dgx-h100.yaml" || fail "topo --help example"
echo "ok"
