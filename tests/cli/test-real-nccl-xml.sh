#!/usr/bin/env bash
# test-real-nccl-xml.sh — the real NCCL topology XMLs of
# tests/data/real/nccl-xml/ (published by Azure, AWS, IBM Cloud, ROCm; see
# SOURCES.md), each as published:
#   - imports with the GPU, CPU and NIC models the file identifies (a dash
#     where the file does not identify one), or is refused with file:line:col
#     and the reason where it cannot be read (no class, AMD GPUs);
#   - round-trips: export-nccl of the import, imported again, prints the same
#     `topo paths` matrix;
#   - simulates: a 1 GiB ring all_reduce over its GPUs gives a bus bandwidth
#     within bounds derived from the catalog's rates for the imported GPU
#     model (`fabricsim models GPU --json`): at most the GPU's NVLinks plus its
#     PCIe link, at least its PCIe link shared by every GPU (1/N), and, where
#     every GPU pair is NVLink, at least half the GPU's NVLink rate.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

R="$FS_TEST_DATA/real/nccl-xml"

matrix() {
  "$FABRICSIM" topo paths "$1" |
    awk '/^GPU[0-9]+ / && $2 != "=" { line = ""; for (i = 2; i < NF; i++) line = line (i > 2 ? " " : "") $i; print line }'
}

# file | GPU model | CPU model | NIC model   ("-": the file does not identify it)
# file | !line:col | reason                  (refused)
expect='
azure-ndv2-topo.xml|-|xeon-platinum-8168|-
azure-ndv4-topo.xml|-|epyc-7742|-
azure-ndv4-topo-2021.xml|-|epyc-7742|-
azure-ndv5-topo.xml|-|xeon-platinum-8480c|-
azure-ncv4-topo.xml|a100-pcie-80gb|epyc-7763|-
aws-p4d-24xl-topo.xml|a100-sxm4-40gb|xeon-platinum-8168|-
aws-p4de-24xl-topo.xml|a100-sxm4-80gb|xeon-platinum-8168|-
ibm-cloud-h100-topo.xml|h100-sxm|xeon-platinum-8480c|connectx-6
aws-p5.48xl-topo.xml|!18:7|has no class and no child
aws-g5.48xl-topo.xml|!14:5|has no class and no child
rccl-topo_8p_rome.xml|!9:9|an AMD GPU
'
n=0
for f in "$R"/*.xml; do
  b=$(basename "$f")
  grep -q "^$b " "$R/SOURCES.md" || grep -q "| \`$b\` |" "$R/SOURCES.md" || fail "$b has no line in SOURCES.md"
  row=$(printf '%s\n' "$expect" | grep "^$b|") || fail "$b: no expectation in this test"
  IFS='|' read -r _ gpu cpu nic <<< "$row"
  n=$((n + 1))
  if [ "${gpu#!}" != "$gpu" ]; then
    set +e
    err=$("$FABRICSIM" topo import-nccl "$f" -o "$tmp/$b.yaml" 2>&1); st=$?
    set -e
    [ "$st" = 2 ] || fail "$b: expected a refusal (exit 2), got $st"
    [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "$b: refusal on several lines: $err"
    case "$err" in *"$b:${gpu#!}: "*"$cpu"*) ;; *) fail "$b: refusal without '${gpu#!}' and '$cpu': $err" ;; esac
    [ ! -e "$tmp/$b.yaml" ] || fail "$b: a refused import wrote a file"
    continue
  fi
  "$FABRICSIM" topo import-nccl "$f" -o "$tmp/$b.yaml" || fail "$b: import-nccl exited $?"
  y="$tmp/$b.yaml"
  for pair in "gpu0:$gpu" "cpu0:$cpu" "nic0:$nic"; do
    node=${pair%%:*} want=${pair#*:}
    [ "$want" = - ] && continue
    grep -q "^  - {name: $node, model: $want[,}]" "$y" || fail "$b: $node is not $want: $(grep "name: $node," "$y")"
  done
  # One host, one GPU model.
  [ "$(grep -o '{name: gpu[0-9]*, model: [a-z0-9-]*' "$y" | awk '{print $4}' | sort -u | wc -l)" = 1 ] \
    || fail "$b: GPUs of several models"
  # Round trip through export-nccl.
  matrix "$y" > "$tmp/$b.want"
  "$FABRICSIM" topo export-nccl "$y" -o "$tmp/$b.re.xml" || fail "$b: export-nccl exited $?"
  "$FABRICSIM" topo import-nccl "$tmp/$b.re.xml" -o "$tmp/$b.re.yaml" || fail "$b: re-import exited $?"
  matrix "$tmp/$b.re.yaml" > "$tmp/$b.got"
  diff "$tmp/$b.want" "$tmp/$b.got" > /dev/null || fail "$b: topo paths changed in the round trip"
  # Simulation with bounds from the catalog.
  g=$(grep -o '{name: gpu0, model: [a-z0-9-]*' "$y" | awk '{print $4}')
  ngpu=$(grep -c '^  - {name: gpu[0-9]*,' "$y")
  allnv=$(if grep -qE ' (PIX|PXB|PHB|NODE|SYS) ' <(sed 's/^/ /;s/$/ /' "$tmp/$b.want"); then echo 0; else echo 1; fi)
  "$FABRICSIM" models "$g" --json > "$tmp/gpu.json"
  read -r pcie nvl < <(python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); print(d["pcie"], d.get("nvlink") or "")' "$tmp/gpu.json")
  "$FABRICSIM" models "$pcie" --json > "$tmp/pcie.json"
  if [ -n "$nvl" ]; then "$FABRICSIM" models "$nvl" --json > "$tmp/nvl.json"; else echo '{"bandwidth": 0}' > "$tmp/nvl.json"; fi
  NCCL_ALGO=Ring "$FABRICSIM" coll "$y" -o all_reduce -b 1G -e 1G --json > "$tmp/$b.coll.json"
  python3 - "$tmp/gpu.json" "$tmp/pcie.json" "$tmp/nvl.json" "$tmp/$b.coll.json" "$ngpu" "$allnv" "$b" <<'PY' \
    || fail "$b: all_reduce bus bandwidth out of the catalog's bounds"
import json, sys
gpu, pcie, nvl, coll = (json.load(open(p)) for p in sys.argv[1:5])
n, allnv, name = int(sys.argv[5]), sys.argv[6] == "1", sys.argv[7]
pcie_bw = pcie["bandwidth"] / 1e9
nvl_bw = nvl["bandwidth"] / 1e9 * (gpu.get("nvlinks") or 0)
busbw = coll["results"][0]["busbw_GBps"]
hi = nvl_bw + pcie_bw
lo = max(pcie_bw / n, 0.5 * nvl_bw if allnv else 0)
print(f"{name}: {n} x {gpu['name']}, ring all_reduce 1 GiB busbw {busbw:.2f} GB/s, bounds [{lo:.2f}, {hi:.2f}]")
assert lo <= busbw <= hi, (busbw, lo, hi)
PY
done
[ "$n" -ge 10 ] || fail "expected at least 10 real NCCL XML files, found $n"
echo "cli real-nccl-xml: ok ($n files)"
