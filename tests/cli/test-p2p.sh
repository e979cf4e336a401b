#!/usr/bin/env bash
# test-p2p.sh — `fabricsim p2p`: the matrices on DGX H100 (NVLink over all
# four NVSwitch planes), the PCIe Gen4 server (root uplinks, P2P disabled),
# JSON shape, knobs and usage errors.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T="$FS_SOURCE_ROOT/topologies"

out=$("$FABRICSIM" p2p "$T/dgx-h100.yaml")
contains "$out" "Unidirectional P2P bandwidth (GB/s)" "p2p dgx-h100"
contains "$out" "Bidirectional P2P bandwidth" "p2p dgx-h100"
contains "$out" "P2P latency (us" "p2p dgx-h100"
contains "$out" "nvlink" "p2p dgx-h100"
contains "$out" "H2D, all 8 GPUs at once" "p2p dgx-h100"

"$FABRICSIM" p2p --json "$T/dgx-h100.yaml" | python3 -c '
import json, sys
d = json.load(sys.stdin)
n = len(d["gpus"]); assert n == 8
u = d["unidirectional_gbps"]; b = d["bidirectional_gbps"]
for i in range(n):
    assert u[i][i] is None and d["transport"][i][i] == "local"
    for j in range(n):
        if i != j:
            assert 370 < u[i][j] < 377, u[i][j]
            assert abs(b[i][j] - 2 * u[i][j]) < 1e-6 * b[i][j]
            assert d["transport"][i][j] == "nvlink"
assert all(h["h2d_gbps"] > 50 for h in d["host"])
' || fail "p2p --json dgx-h100"

# PCIe Gen4: P2P disabled goes through host memory; 8 GPUs to host share
# two root uplinks, so the total is twice one GPU alone.
"$FABRICSIM" p2p --json --p2p-disable "$T/pcie-gen4-8gpu.yaml" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert all(d["transport"][i][j] == "host-staged" for i in range(8) for j in range(8) if i != j)
one = d["host"][0]["h2d_gbps"]
assert abs(d["h2d_all_gpus_gbps"] - 2 * one) < 0.01 * one, (d["h2d_all_gpus_gbps"], one)
' || fail "p2p --p2p-disable pcie-gen4"
out=$("$FABRICSIM" p2p --p2p-level PIX --gpus 3 "$T/pcie-gen4-8gpu.yaml")
contains "$out" "pcie-p2p" "p2p-level PIX"
contains "$out" "host-staged" "p2p-level PIX"

# Deterministic.
a=$("$FABRICSIM" p2p --json "$T/h100-fullmesh-nvlink.yaml")
b=$("$FABRICSIM" p2p --json "$T/h100-fullmesh-nvlink.yaml")
[ "$a" = "$b" ] || fail "p2p output not deterministic"

# Errors: exit 2, one line.
set +e
err=$("$FABRICSIM" p2p --p2p-level FAST "$T/dgx-h100.yaml" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "bad --p2p-level exit $rc"
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "bad --p2p-level: not one line: $err"
"$FABRICSIM" p2p --size 0 "$T/dgx-h100.yaml" >/dev/null 2>&1; [ $? -eq 2 ] || fail "--size 0"
"$FABRICSIM" p2p >/dev/null 2>&1; [ $? -eq 2 ] || fail "no topology"
"$FABRICSIM" p2p "$T/no-such.yaml" >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing topology"
set -e
"$FABRICSIM" p2p --help | grep -q "Example" || fail "--help has no example"
echo "cli p2p: ok"
