#!/usr/bin/env bash
# test-models.sh — `fabricsim models`: list, show one, --kind, --json, bad names.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The list: one line per model, sorted (digit runs by value), every kind present.
list=$("$FABRICSIM" models) || fail "models exited $?"
n=$(printf '%s\n' "$list" | wc -l)
[ "$n" -gt 90 ] || fail "only $n models listed"
for k in link switch gpu cpu nic; do
  printf '%s\n' "$list" | awk '{print $2}' | grep -qx "$k" || fail "no $k in the list"
done
contains "$list" "pcie-gen4-x16" "list"
contains "$list" "PCIe Gen4 x16, 31.5 GB/s raw, 28.8 GB/s effective" "list"
x2=$(printf '%s\n' "$list" | grep -n '^pcie-gen4-x2 ' | cut -d: -f1)
x16=$(printf '%s\n' "$list" | grep -n '^pcie-gen4-x16 ' | cut -d: -f1)
[ "$x2" -lt "$x16" ] || fail "pcie-gen4-x2 (line $x2) should come before -x16 (line $x16)"

# --kind filters.
gpus=$("$FABRICSIM" models --kind gpu) || fail "--kind gpu exited $?"
printf '%s\n' "$gpus" | awk '{print $2}' | grep -vqx gpu && fail "--kind gpu listed another kind"
contains "$gpus" "h100-sxm" "--kind gpu"

# One model: every field, its source, the arithmetic.
show=$("$FABRICSIM" models pcie-gen4-x16) || fail "models pcie-gen4-x16 exited $?"
contains "$show" "source" "show link"
contains "$show" "PCI-SIG" "show link"
contains "$show" "16 GT/s × 16 lanes × 128/130 ÷ 8 = 31.5 GB/s raw per direction" "show link"
contains "$show" "TLP efficiency at 256 B payload" "show link"
h100=$("$FABRICSIM" models h100-sxm) || fail "models h100-sxm exited $?"
contains "$h100" "18 × nvlink4 25.0 GB/s = 450 GB/s per direction" "show gpu"
contains "$h100" "flops.bf16" "show gpu"
sw=$("$FABRICSIM" models nvswitch-gen3) || fail "models nvswitch-gen3 exited $?"
contains "$sw" "64 × nvlink4 25.0 GB/s = 1600 GB/s per direction" "show switch"

# JSON: the list and one model parse, and the output is byte-stable.
"$FABRICSIM" models --json > "$tmp/all.json" || fail "--json exited $?"
python3 -m json.tool "$tmp/all.json" > /dev/null || fail "models --json is not JSON"
"$FABRICSIM" models --json > "$tmp/again.json"
cmp -s "$tmp/all.json" "$tmp/again.json" || fail "models --json differs between runs"
"$FABRICSIM" models h100-sxm --json > "$tmp/h100.json" || fail "h100-sxm --json exited $?"
python3 -m json.tool "$tmp/h100.json" > /dev/null || fail "h100-sxm --json is not JSON"
python3 - "$tmp/h100.json" "$tmp/all.json" <<'PY' || fail "JSON content"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["name"] == "h100-sxm" and h["kind"] == "gpu", h
assert h["nvlink"] == "nvlink4" and h["nvlinks"] == 18, h
assert list(h)[:4] == ["name", "kind", "description", "source"], list(h)
models = json.load(open(sys.argv[2]))
assert all(m["source"] for m in models)
assert any(m["name"] == "pcie-gen5-x16" and abs(m["raw_bandwidth"] - 63.015e9) < 1e7 for m in models)
PY

# Errors: unknown names and kinds exit 2 with one line and a suggestion.
expect_bad() {
  local status=0 err
  err=$("$FABRICSIM" models "${@:2}" 2>&1 >/dev/null) || status=$?
  [ "$status" -eq 2 ] || fail "models ${*:2}: exit status $status, expected 2"
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "models ${*:2}: stderr is not one line: $err"
  contains "$err" "$1" "models ${*:2}"
}
expect_bad 'unknown model "h100-sxn"; did you mean "h100-sxm"?' h100-sxn
expect_bad 'did you mean "gpu"?' --kind gpus
expect_bad '"nvlink4" is a link model, not a gpu model' nvlink4 --kind gpu
expect_bad 'expected at most one NAME' a b

# --models: another folder, and its errors name file:line:col.
mkdir "$tmp/m"
cat > "$tmp/m/x.yaml" <<'YAML'
models:
  - name: l
    kind: link
    family: nvlink
    bandwidth: 25 GB/s
    latncy: 1 ns
    source: test
YAML
expect_bad 'x.yaml:6:5: unknown key "latncy" in link model; did you mean "latency"?' --models "$tmp/m"
sed -i 's/latncy/latency/' "$tmp/m/x.yaml"
one=$("$FABRICSIM" models --models "$tmp/m") || fail "--models exited $?"
[ "$(printf '%s\n' "$one" | wc -l)" -eq 1 ] || fail "--models listed: $one"
# $FABRICSIM_MODELS is honoured too.
one=$(FABRICSIM_MODELS="$tmp/m" "$FABRICSIM" models) || fail "FABRICSIM_MODELS exited $?"
contains "$one" "NVLink" "FABRICSIM_MODELS"

# --help has an example.
help=$("$FABRICSIM" models --help) || fail "--help exited $?"
contains "$help" "fabricsim models pcie-gen4-x16" "--help"
echo "models: ok"
